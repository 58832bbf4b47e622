/* The local backend's background jobs (local.c; docs/backend.md,
 * "Background jobs"): the handle a job is known by, the checks before any
 * signal (local_job.c), and the seal on the copy of the handle written in the
 * workspace (job_seal.c).
 *
 * A handle names the job's processes and the process that stands for them:
 *   ns:<dev>:<ino>:<start>:<boot>   isolated: the job's PID namespace
 *   pg:<sid>:<start>:<boot>          without isolation: the job's session
 * <start> is the start time (clock ticks after boot, /proc/<pid>/stat field
 * 22) of the namespace's init or of the session's leader, <boot> the kernel's
 * boot id: a handle of a job that has ended never reaches a process that
 * reused its numbers. */
#ifndef OCISBX_BACKEND_LOCAL_JOB_H
#define OCISBX_BACKEND_LOCAL_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "sys/proc.h"

typedef struct ocisbx_local_job {
    bool ns; /* a PID namespace (else a session) */
    uint64_t ns_dev, ns_ino;
    long sid;
    unsigned long long start; /* 0: the process had ended before it was seen */
    char boot[40];            /* "-": unknown */
} ocisbx_local_job;

/* The handle of a detached job that has just started (its start time read
 * now). malloc'd. */
int ocisbx_local_job_handle(const ocisbx_proc_job *j, char **handle);

/* Parses a handle; EINVAL for anything else, EFORBIDDEN for one naming
 * process 1, this process's own session or group, or its own PID
 * namespace. */
int ocisbx_local_job_parse(const char *handle, ocisbx_local_job *out);

/* Sends sig (0: none) to every live process of the job, after checking in
 * the same scan that the namespace's init or the session's leader is the one
 * the handle names; returns how many (0: the job has ended, or what the
 * numbers name now is not the job). */
int ocisbx_local_job_signal(const ocisbx_local_job *j, int sig);

/* The text written beside the job's state: the handle with an HMAC-SHA256
 * over (workspace real path, job id, handle), keyed by this user's job key
 * (job_seal.c: $XDG_RUNTIME_DIR/ocisbx/job.key, else
 * /tmp/ocisbx-<uid>/job.key, else /dev/shm/ocisbx-<uid>/job.key: a directory
 * 0700 of the user's, never one inside the workspace; the key made on first
 * use). malloc'd. */
int ocisbx_job_seal(const char *workspace, const char *job_id, const char *handle, char **text);

/* The handle in a text read from the workspace, after checking its seal:
 * EINTEGRITY when it does not verify with this user's key (changed inside
 * the workspace, or another workspace's, another job's, another user's). */
int ocisbx_job_unseal(const char *workspace, const char *job_id, const char *text, char **handle);

#endif
