/* The process runner (library-internal, not installed; callers: the
 * emulator, the local directory backend): starts one sandbox command,
 * isolated with bubblewrap, streams its output, and kills its whole process
 * tree.
 *
 * Isolation (spec.isolate = true): the host system (/usr, /bin, /lib*, /etc,
 * /sbin, /opt where present) read-only, the workspace directory read-write at
 * /workspace (the only writable place), an empty read-only /tmp, a fresh
 * /proc and minimal /dev, its own user (uid 0 mapped to an unprivileged
 * namespace: no capabilities on anything of the host), PID, IPC and UTS
 * namespaces, and its own empty network namespace when the network is denied.
 * What a caller must run as root is described below.
 * stdin is /dev/null; no other file descriptor of the caller is inherited.
 * Every mount of the sandbox is nosuid (bubblewrap's binds; /workspace also
 * nodev): a setuid file made in the workspace works neither inside nor, as
 * it belongs to the command's uid, as host root on the host.
 *
 * As root (euid 0), isolated, the command never gets host root's powers: the
 * child stages the workspace in a private mount namespace (nosuid, nodev)
 * and then, for a workspace of another user, drops to the directory's
 * owner (setgroups(0), setgid, setuid to its uid and gid;
 * PR_SET_NO_NEW_PRIVS) before it executes bubblewrap, which so runs
 * unprivileged and maps only that uid (shown as 0 inside): the command has
 * no capability, what it creates belongs to that uid on the host. A caller
 * that owns its workspaces gives them to an unprivileged uid (the
 * emulator: one per sandbox, so that RLIMIT_NPROC counts one sandbox; the
 * runner's own check: OCISBX_PROC_NOBODY_UID); a caller running a user's
 * own directory (the local backend) leaves its ownership unchanged.
 * A workspace that belongs to root (a checkout in a container) runs as
 * uid 0 of a user namespace mapped to host root, so that what it creates
 * belongs to root as the directory does, and with the host-root rules,
 * since that uid owns the host's root files: no capability (bounding set
 * empty), PR_SET_NO_NEW_PRIVS, the seccomp rules of src/sys/seccomp.h
 * (no setuid/setgid bit, no device node, no io_uring, no keyring), the
 * workspace nosuid and nodev, /proc/sys and the other kernel tables of
 * /proc read-only, and an /etc view without the shadow files, SSH host
 * keys, TLS private keys and whatever other users cannot read
 * (src/sys/bwrap_args.h); /root and every home are absent, as everywhere
 * in the sandbox. It needs user namespaces: without them it is refused
 * (OCISBX_EUNSUPPORTED, ocisbx_proc_root_workspace_check says what to do).
 * Unisolated (--no-isolation) none of this applies: the command runs as
 * the caller, root included.
 * The tree dies when the runner terminates it, on timeout, and when the
 * calling process dies (PR_SET_PDEATHSIG + bwrap --die-with-parent; the
 * PID-namespace init dying takes every process of the namespace with it).
 *
 * Without isolation (--no-isolation): the child becomes a keeper, a child
 * subreaper (PR_SET_CHILD_SUBREAPER) in a new session that forks /bin/sh
 * -c, cwd mapped into the workspace directory; whatever the command starts
 * stays the keeper's descendant (setsid() and double forks included), the
 * runner's signals (timeout, terminate, free) go to every descendant, and
 * when the shell exits or the caller dies the keeper KILLs what is left.
 *
 * Functions return 0 or a negative OCISBX_E* code with the thread's error set
 * (ocisbx_error_last()). Thread safety: ocisbx_proc_signal/terminate/wait may be
 * called from any thread, concurrently; ocisbx_proc_free exactly once, from a
 * thread that is not the process's own callback thread. */
#ifndef OCISBX_SYS_PROC_H
#define OCISBX_SYS_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ocisbx/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ocisbx_proc_spec {
    /* Host directory shown as /workspace, the only writable place. Must exist. */
    const char *workspace_dir;
    /* Absolute path inside the sandbox (/workspace/...); NULL means /workspace.
     * Without isolation a cwd under /workspace is mapped into workspace_dir;
     * any other cwd is refused with OCISBX_EINVAL. */
    const char *cwd;
    /* Run by /bin/sh -c. */
    const char *shell_command;
    /* The complete environment, NAME=VALUE, NULL-terminated; NULL or empty
     * means none given. PATH (/usr/local/sbin:/usr/local/bin:/usr/sbin:
     * /usr/bin:/sbin:/bin) and HOME=/workspace are added when the caller
     * gives none; nothing of the emulator's own environment leaks in.
     * Values may be secrets: they are never logged nor put in errors. */
    const char *const *envp;
    /* false: no network at all (own empty network namespace, loopback down). */
    bool allow_network;
    /* false only with --no-isolation. */
    bool isolate;
    /* Backstop; 0 = none. On expiry: TERM to the whole tree, KILL after
     * OCISBX_PROC_TIMEOUT_GRACE_MS; on_exit then reports timed_out = true. */
    int64_t timeout_ms;
    /* Resource limits (0 = none), set in the child before it executes
     * bubblewrap and so inherited by every process of the command:
     * memory_limit_bytes is RLIMIT_AS (the address space of each process:
     * an allocation past it fails), max_processes is RLIMIT_NPROC (counted
     * per real uid, so it bounds every process of the run uid, the
     * sandbox's tree included: a fork loop fails with EAGAIN). Isolated
     * runs only; without isolation they are refused (OCISBX_EUNSUPPORTED). */
    uint64_t memory_limit_bytes;
    int max_processes;
    /* RLIMIT_FSIZE (0 = none): no file of the command grows past it (the
     * writer gets SIGXFSZ); isolated runs only, like the two above. */
    uint64_t max_file_bytes;
    /* A background job that outlives the caller (the local backend's jobs):
     * the runner's child forks the process that runs it (bwrap without
     * --die-with-parent, or sh; no death signal, its own session, stdin,
     * stdout and stderr /dev/null) and exits, so the ocisbx_proc finishes at
     * once (exit code 0) and nothing of the caller ends the job. Any process
     * signals it through its identity (ocisbx_proc_job_of). */
    bool detach;
} ocisbx_proc_spec;

/* An unprivileged uid/gid a caller that owns its workspaces can give them
 * to when it runs as root (nobody/nogroup on Debian; the runner's check uses
 * it, the emulator gives each sandbox its own, see docs/emulator.md). */
#define OCISBX_PROC_NOBODY_UID 65534
#define OCISBX_PROC_NOBODY_GID 65534

/* Grace between TERM and KILL when the timeout expires. */
#define OCISBX_PROC_TIMEOUT_GRACE_MS 2000

typedef struct ocisbx_proc ocisbx_proc;

/* A chunk of output, stream 1 = stdout, 2 = stderr, delivered in the order
 * the runner read them (one thread per process, so never concurrently for
 * one process). data is not NUL-terminated and only valid during the call. */
typedef void (*ocisbx_proc_output_fn)(int stream, const char *data, size_t len, void *user_data);
/* Called exactly once, after both pipes have ended and the process has been
 * reaped. exit_code is the command's exit status (0..255), or -1 when it was
 * killed by a signal (term_signal names it; 0 otherwise). Isolated, bwrap
 * reports a signal death as exit status 128+N: it reads as a kill only when a
 * terminating signal was sent through this API (terminate, timeout,
 * ocisbx_proc_signal, kill_all); a command that kills itself reports 128+N.
 * timed_out is true when the timeout backstop fired. When the command's shell
 * exits, whatever it left running in the background is killed (the PID
 * namespace ends with it; unisolated, the keeper KILLs every descendant). */
typedef void (*ocisbx_proc_exit_fn)(int exit_code, int term_signal, bool timed_out, void *user_data);

/* Spawns and returns at once (*out set). The spec and its strings are copied.
 * on_output and on_exit run on the process's own thread; they may call
 * ocisbx_proc_signal/terminate but must not call ocisbx_proc_wait/free on the same
 * process. Either callback may be NULL.
 * Errors: OCISBX_EINVAL (bad spec, missing workspace), OCISBX_EUNSUPPORTED
 * (bwrap not found with isolate = true; as root, a workspace that belongs to
 * root where user namespaces are unavailable; a resource limit given
 * without isolation), OCISBX_EIO (fork/pipe failure, the staging
 * or the uid drop failed). */
int ocisbx_proc_start(const ocisbx_proc_spec *spec, ocisbx_proc_output_fn on_output, ocisbx_proc_exit_fn on_exit,
                      void *user_data, ocisbx_proc **out);

/* Sends sig to every process of the command (SIGSTOP/SIGCONT for suspend and
 * resume). 0 also when the command has already finished (nothing to do). */
int ocisbx_proc_signal(ocisbx_proc *p, int sig);

/* TERM to the whole tree, then KILL after grace_ms (0: KILL at once).
 * Returns at once; on_exit still comes (exit_code -1, term_signal set, unless
 * the command exited on its own first). Stopped processes are continued so
 * they can see the TERM. */
int ocisbx_proc_terminate(ocisbx_proc *p, int grace_ms);

/* Waits until on_exit has returned. timeout_ms < 0 waits for ever; 0 polls.
 * OCISBX_ETIMEOUT when it has not finished in time. */
int ocisbx_proc_wait(ocisbx_proc *p, int64_t timeout_ms);

/* true once on_exit has returned. */
bool ocisbx_proc_finished(ocisbx_proc *p);

/* The host pid of the child the runner forked (bwrap itself when isolated,
 * the keeper otherwise); 0 after it has been reaped. For logs and tests. */
int ocisbx_proc_pid(const ocisbx_proc *p);

/* KILLs the tree if it is still running, waits for on_exit, frees. NULL: no-op. */
void ocisbx_proc_free(ocisbx_proc *p);

/* 0 when bubblewrap is usable here (found on PATH and able to create the
 * namespaces the runner needs, checked by running `true` once, as root
 * through the uid drop, in a directory given to OCISBX_PROC_NOBODY_UID); else a
 * negative code with the reason written to why (NUL-terminated). The result
 * is computed once and cached. why may be NULL. */
int ocisbx_proc_isolation_check(char *why, size_t why_len);

/* 0 when a workspace that belongs to root can be run here (not root, or
 * user namespaces available; checked once); else OCISBX_EUNSUPPORTED with
 * what to do written to why (NUL-terminated; may be NULL). */
int ocisbx_proc_root_workspace_check(char *why, size_t why_len);

/* A detached job's identity: its PID namespace (isolated) or its process
 * group (unisolated). Plain numbers, so another process can use them. */
typedef struct ocisbx_proc_job {
    uint64_t ns_dev, ns_ino; /* 0: not isolated */
    int pgid;
} ocisbx_proc_job;

/* After a detached start has finished: the job's identity. */
int ocisbx_proc_job_of(ocisbx_proc *p, ocisbx_proc_job *out);

/* Sends sig (0: none, only counts) to every process of the job that is not
 * a zombie; returns how many there were (0: it has ended). */
int ocisbx_proc_job_signal(const ocisbx_proc_job *j, int sig);

/* Kills every command still running (KILL to each tree) without freeing:
 * for the emulator's SIGTERM/SIGINT path before it writes its state. Each
 * process still delivers on_exit. Async-signal-unsafe: call from a thread. */
void ocisbx_proc_kill_all(void);

#ifdef __cplusplus
}
#endif
#endif
