/* The process runner's internals (see proc.h), shared by its files:
 *   proc.c        the public calls: start (the spec checked and copied),
 *                 wait, free, the isolation checks
 *   proc_thread.c the thread of one process: spawn, read the pipes, enforce
 *                 the timeout and the grace, reap, report
 *   proc_child.c  what runs between fork and exec (staging, the uid drop,
 *                 the limits, the filter) and the unisolated keeper
 *   proc_tree.c   signalling a whole tree: a PID namespace, or every
 *                 descendant of the keeper
 *   bwrap_args.c  the bubblewrap command line (pure), seccomp.c the filter */
#ifndef OCISBX_SYS_PROC_INT_H
#define OCISBX_SYS_PROC_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <linux/filter.h>

#include "sys/proc.h"
#include "sys/seccomp.h"
#include "util/internal.h"

#define OCISBX_PROC_SANDBOX_WS "/workspace"
/* As root, the workspace is bind-mounted here in the child's private mount
 * namespace before bubblewrap runs, so that bubblewrap reaches the very
 * directory start() examined whatever the modes of its parents; bubblewrap's
 * own root is a fresh tmpfs, so nothing of the host's /tmp is lost, and the
 * sandbox's command line shows this name, not the host path. */
#define OCISBX_PROC_STAGE_DIR "/tmp"
/* As host root with the /etc overlay, the stage is a tmpfs holding the
 * workspace, the whiteout layer and the overlay (see proc_child.c). */
#define OCISBX_PROC_STAGE_WS OCISBX_PROC_STAGE_DIR "/ws"
#define OCISBX_PROC_STAGE_WO OCISBX_PROC_STAGE_DIR "/wo"
#define OCISBX_PROC_STAGE_ETC OCISBX_PROC_STAGE_DIR "/etc"
#define OCISBX_PROC_OVERLAY_OPTS "lowerdir=" OCISBX_PROC_STAGE_WO ":/etc"
/* bwrap reads the filter from this fd: after 0-2, the info fd 3 and the
 * exec-error fd 4. */
#define OCISBX_PROC_SECCOMP_FD 5
#define OCISBX_PROC_SECCOMP_FD_STR "5"
/* The keeper (unisolated) learns of its parent's death by this signal. */
#define OCISBX_PROC_KEEPER_DEATH_SIG SIGTERM

/* What the child reports on the exec-error pipe: {step, errno}, or
 * {CHILD_DETACHED, pid} for a detached job's process. */
enum { OCISBX_CHILD_EXEC = 0, OCISBX_CHILD_STAGE, OCISBX_CHILD_DROP, OCISBX_CHILD_LIMITS, OCISBX_CHILD_DETACHED };

struct ocisbx_proc {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool thread_started;

    /* spec, copied */
    bool isolate;
    bool allow_network;
    int64_t timeout_ms;
    char *host_cwd; /* unisolated: the cwd mapped into the workspace */
    char **argv;    /* what is executed */
    char **envp;    /* secrets: wiped when freed */
    char *exe;
    /* as root: the child stages host_ws; with drop, it then becomes
     * run_uid/run_gid; without (host_root), it stays uid 0 */
    bool stage;
    bool drop;
    bool host_root;
    uid_t run_uid;
    gid_t run_gid;
    char *host_ws;
    unsigned long ws_mount_flags; /* MS_RDONLY / MS_NOEXEC kept from the host mount */
    dev_t ws_dev;                 /* the workspace start() examined */
    ino_t ws_ino;
    /* host_root: the /etc view, an overlay the child stages (etc_overlay)
     * or, where overlays cannot be mounted, bubblewrap's binds */
    bool etc_overlay;
    char **wo_paths;    /* the whiteouts to make, full paths under the stage */
    char **etc_binds;   /* flat pairs: a host mount under /etc, its place on the overlay */
    bool bwrap_setuid;  /* then no PR_SET_NO_NEW_PRIVS, it would break it */
    uint64_t mem_limit; /* RLIMIT_AS, 0: none */
    int max_procs;      /* RLIMIT_NPROC, 0: none */
    uint64_t max_file;  /* RLIMIT_FSIZE, 0: none */
    bool detach;        /* a background job: see ocisbx_proc_spec.detach */
    pid_t detached_pid; /* its process (the grandchild), once started */
    struct sock_filter filter[OCISBX_SECCOMP_MAX_INSNS];
    size_t filter_len;

    ocisbx_proc_output_fn on_output;
    ocisbx_proc_exit_fn on_exit;
    void *user_data;

    /* under mu */
    pid_t pid; /* our child (bwrap, or the keeper); 0 once reaped */
    int ns_fd; /* pins the sandbox's PID namespace; -1 when none */
    dev_t ns_dev;
    ino_t ns_ino;
    int wake_w;      /* write end of the thread's wake pipe */
    int64_t kill_at; /* monotonic ms at which the tree gets KILL; 0: none */
    int sent_signal; /* last TERM/KILL we sent, to tell a kill from an exit code */
    bool timed_out;
    bool started;
    int start_rc;
    ocisbx_error_saved *start_err; /* the spawning thread's error, for start() */
    bool finished;

    ocisbx_proc *next, *prev; /* the live list, for ocisbx_proc_kill_all */
};

static inline int64_t ocisbx_proc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* proc_child.c: the child (never returns); the unisolated keeper. */
void ocisbx_proc_child(ocisbx_proc *p, pid_t parent, int devnull, int out_w, int err_w, int info_w, int exec_w);

/* proc_tree.c, called with mu held */
void ocisbx_proc_signal_tree_locked(ocisbx_proc *p, int sig);
void ocisbx_proc_terminate_locked(ocisbx_proc *p, int grace_ms);
void ocisbx_proc_wake(ocisbx_proc *p);
/* Every descendant of pid (not pid itself) gets sig, a few passes so that
 * children forked meanwhile are caught too; returns how many were signalled
 * in the first pass. */
int ocisbx_proc_signal_descendants(pid_t pid, int sig);

/* proc_thread.c */
void *ocisbx_proc_thread(void *arg);

#endif
