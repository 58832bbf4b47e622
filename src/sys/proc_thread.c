/* The thread of one process (see proc_int.h): forks it, reads its pipes,
 * enforces the timeout and the TERM-then-KILL grace, reaps it, reports. */
/* pipe2, waitid flags */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/proc_int.h"

/* How long the pipes may stay open after an unisolated command exited (a
 * process outside the tree's reach holds them): then we stop reading. */
#define DRAIN_AFTER_EXIT_MS 1000

typedef struct io {
    int out_r, err_r, wake_r, pidfd;
} io;

/* Reads bwrap's {"child-pid": N} and pins that process's PID namespace. */
static void read_info(ocisbx_proc *p, int info_r)
{
    char buf[512];
    size_t len = 0;
    while (len < sizeof buf - 1) {
        ssize_t n = read(info_r, buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        if (strchr(buf, '}'))
            break;
    }
    buf[len] = '\0';
    const char *k = strstr(buf, "\"child-pid\"");
    k = k ? strchr(k, ':') : NULL;
    long child = k ? strtol(k + 1, NULL, 10) : 0;
    if (child <= 0)
        return;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/ns/pid", child);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st, self;
    if (fstat(fd, &st) != 0 ||
        (stat("/proc/self/ns/pid", &self) == 0 && self.st_ino == st.st_ino && self.st_dev == st.st_dev)) {
        close(fd); /* already gone and its pid reused: not ours */
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->ns_fd = fd;
    p->ns_ino = st.st_ino;
    p->ns_dev = st.st_dev;
    pthread_mutex_unlock(&p->mu);
}

/* The child's report of a failure before its exec, as this thread's error. */
static int child_failed(const ocisbx_proc *p, const int child_err[2])
{
    const char *e = strerror(child_err[1]);
    switch (child_err[0]) {
    case OCISBX_CHILD_STAGE:
        return ocisbx_fail(OCISBX_EIO, "runner: cannot stage the workspace in a private mount namespace: %s", e);
    case OCISBX_CHILD_LIMITS: return ocisbx_fail(OCISBX_EIO, "runner: cannot set the resource limits: %s", e);
    case OCISBX_CHILD_DROP:
        return ocisbx_fail(OCISBX_EIO, "runner: cannot drop to uid %u gid %u: %s", (unsigned)p->run_uid,
                           (unsigned)p->run_gid, e);
    default: return ocisbx_fail(OCISBX_EIO, "runner: cannot execute %s: %s", p->exe, e);
    }
}

/* Waits for the child's exec (EOF on the exec-error pipe) or its report. */
static int await_exec(ocisbx_proc *p, pid_t pid, int exec_r)
{
    int child_err[2] = {0, 0}; /* step, errno */
    ssize_t n;
    do
        n = read(exec_r, child_err, sizeof child_err);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof child_err && child_err[0] == OCISBX_CHILD_DETACHED) {
        p->detached_pid = (pid_t)child_err[1];
        do /* then the grandchild's own exec (EOF: it ran) */
            n = read(exec_r, child_err, sizeof child_err);
        while (n < 0 && errno == EINTR);
    }
    if (n != (ssize_t)sizeof child_err)
        return 0;
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    return child_failed(p, child_err);
}

static void close_pair(int fd[2])
{
    for (int i = 0; i < 2; i++)
        if (fd[i] >= 0) {
            close(fd[i]);
            fd[i] = -1;
        }
}

static int spawn(ocisbx_proc *p, io *io_out)
{
    int outp[2] = {-1, -1}, errp[2] = {-1, -1}, infop[2] = {-1, -1}, execp[2] = {-1, -1};
    int wakep[2] = {-1, -1};
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int rc = 0;
    if (devnull < 0 || pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC) || pipe2(execp, O_CLOEXEC) ||
        pipe2(wakep, O_CLOEXEC | O_NONBLOCK) || (p->isolate && pipe2(infop, O_CLOEXEC))) {
        rc = ocisbx_fail(OCISBX_EIO, "runner: cannot create pipes: %s", strerror(errno));
        goto out;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        rc = ocisbx_fail(OCISBX_EIO, "runner: fork failed: %s", strerror(errno));
        goto out;
    }
    if (pid == 0)
        ocisbx_proc_child(p, parent, devnull, outp[1], errp[1], infop[1], execp[1]);
    close(outp[1]);
    close(errp[1]);
    close(execp[1]);
    outp[1] = errp[1] = execp[1] = -1;
    if (infop[1] >= 0) {
        close(infop[1]);
        infop[1] = -1;
    }
    rc = await_exec(p, pid, execp[0]);
    if (rc)
        goto out;
    pthread_mutex_lock(&p->mu);
    p->pid = pid;
    p->wake_w = wakep[1];
    pthread_mutex_unlock(&p->mu);
    wakep[1] = -1;
    if (infop[0] >= 0)
        read_info(p, infop[0]);
    *io_out = (io){outp[0], errp[0], wakep[0], -1};
    outp[0] = errp[0] = wakep[0] = -1;
#ifdef SYS_pidfd_open
    io_out->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
out:
    close_pair(outp);
    close_pair(errp);
    close_pair(infop);
    close_pair(execp);
    close_pair(wakep);
    if (devnull >= 0)
        close(devnull);
    return rc;
}

/* ---- the output -------------------------------------------------------------------- */

/* Reads once from fd into buf; the byte count, 0 when nothing was read (the
 * fd is closed and set to -1 at its end or on an error). */
static size_t read_some(int *fd, char *buf, size_t cap)
{
    ssize_t n = read(*fd, buf, cap);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0) {
        close(*fd);
        *fd = -1;
        return 0;
    }
    return (size_t)n;
}

static bool read_pipe(ocisbx_proc *p, int *fd, int stream, char *buf, size_t cap)
{
    size_t n = read_some(fd, buf, cap);
    if (n && p->on_output)
        p->on_output(stream, buf, n, p->user_data);
    return n > 0;
}

/* Length of the first line of d (through its newline), or n. */
static size_t line_len(const char *d, size_t n)
{
    const char *nl = memchr(d, '\n', n);
    return nl ? (size_t)(nl - d) + 1 : n;
}

/* Both pipes were ready in the same poll round: Linux keeps no order between
 * two pipes (nor AF_UNIX stream sockets, which carry no receive timestamp),
 * so the order of what both hold is unknown. It is interleaved line by line,
 * beginning with the stream that was not read last (stdout at the start):
 * exact for the common case of a program alternating whole lines between
 * the two. Only when both hold little (INTERLEAVE_BYTES each at most) and
 * for MAX_INTERLEAVE lines each, then the rest in one chunk each, so that
 * bulk output does not become many tiny events. */
enum { MAX_INTERLEAVE = 64, INTERLEAVE_BYTES = 4096 };

static void read_both(ocisbx_proc *p, int *out_fd, int *err_fd, char *buf, size_t cap, int *last)
{
    char *b[2] = {buf, buf + cap / 2};
    size_t n[2];
    n[0] = read_some(out_fd, b[0], cap / 2);
    n[1] = read_some(err_fd, b[1], cap / 2);
    int first = *last == 1 ? 1 : 0; /* index: 0 stdout, 1 stderr */
    int lines = n[0] <= INTERLEAVE_BYTES && n[1] <= INTERLEAVE_BYTES ? MAX_INTERLEAVE : 1;
    for (int i = 0; (n[0] || n[1]) && p->on_output; i++) {
        for (int k = 0; k < 2; k++) {
            int s = (first + k) % 2;
            size_t l = i + 1 < lines ? line_len(b[s], n[s]) : n[s];
            if (!l)
                continue;
            p->on_output(s + 1, b[s], l, p->user_data);
            *last = s + 1;
            b[s] += l;
            n[s] -= l;
        }
    }
}

/* ---- the loop -------------------------------------------------------------------------- */

enum { BUF = 131072 }; /* two halves when both pipes are read in one round */

typedef struct run {
    io fds;
    char *buf;
    int64_t deadline, exited_at;
    bool exited;
    int status;
    int last_stream; /* the stream of the last chunk delivered */
} run;

/* How long the next poll may wait (-1: for ever). */
static int poll_wait(ocisbx_proc *p, const run *r, int64_t now)
{
    int64_t wait = -1;
    pthread_mutex_lock(&p->mu);
    int64_t kill_at = p->kill_at;
    bool timed_out = p->timed_out;
    pthread_mutex_unlock(&p->mu);
    if (!r->exited) {
        if (r->deadline && !timed_out)
            wait = r->deadline - now;
        if (kill_at && (wait < 0 || kill_at - now < wait))
            wait = kill_at - now;
        if (r->fds.pidfd < 0 && (wait < 0 || wait > 20))
            wait = 20; /* no pidfd: look for the exit now and then */
    } else {
        wait = r->exited_at + DRAIN_AFTER_EXIT_MS - now;
    }
    if (wait < 0 && wait != -1)
        wait = 0;
    return wait > INT_MAX ? INT_MAX : (int)wait;
}

/* The timeout's TERM and the grace's KILL, when due. */
static void timers(ocisbx_proc *p, const run *r, int64_t now)
{
    pthread_mutex_lock(&p->mu);
    if (r->deadline && !p->timed_out && now >= r->deadline) {
        p->timed_out = true;
        ocisbx_proc_terminate_locked(p, OCISBX_PROC_TIMEOUT_GRACE_MS);
    }
    if (p->kill_at && now >= p->kill_at) {
        p->kill_at = 0;
        p->sent_signal = SIGKILL;
        ocisbx_proc_signal_tree_locked(p, SIGKILL);
    }
    pthread_mutex_unlock(&p->mu);
}

/* Reaps the child when it has exited. */
static void reap(ocisbx_proc *p, run *r, int64_t now)
{
    pthread_mutex_lock(&p->mu);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    /* peek first: while the child is a zombie its pid (and process group)
     * cannot be reused, so the group kill below is safe */
    int wr = waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT);
    if (wr == 0 && si.si_pid == p->pid) {
        if (!p->isolate)
            kill(-p->pid, SIGKILL); /* what the keeper left in its group */
        while (waitpid(p->pid, &r->status, 0) < 0 && errno == EINTR) {
        }
        p->pid = 0;
        r->exited = true;
        r->exited_at = now;
    } else if (wr < 0 && errno == ECHILD) {
        /* SIGCHLD ignored by the host program: reaped by the kernel, status lost */
        r->status = 0xff00; /* reported as exit code 255 */
        p->pid = 0;
        r->exited = true;
        r->exited_at = now;
    }
    pthread_mutex_unlock(&p->mu);
}

/* One round: poll, timers, output, exit. false: stop the loop. */
static bool round_once(ocisbx_proc *p, run *r)
{
    struct pollfd pf[4];
    int npf = 0, i_out = -1, i_err = -1, i_pid = -1;
    if (r->fds.out_r >= 0) {
        i_out = npf;
        pf[npf++] = (struct pollfd){r->fds.out_r, POLLIN, 0};
    }
    if (r->fds.err_r >= 0) {
        i_err = npf;
        pf[npf++] = (struct pollfd){r->fds.err_r, POLLIN, 0};
    }
    int i_wake = npf;
    pf[npf++] = (struct pollfd){r->fds.wake_r, POLLIN, 0};
    if (!r->exited && r->fds.pidfd >= 0) {
        i_pid = npf;
        pf[npf++] = (struct pollfd){r->fds.pidfd, POLLIN, 0};
    }
    int pr = poll(pf, (nfds_t)npf, poll_wait(p, r, ocisbx_proc_now_ms()));
    if (pr < 0 && errno != EINTR)
        return false;
    int64_t now = ocisbx_proc_now_ms();
    if (pr > 0 && (pf[i_wake].revents & POLLIN)) {
        char drain[64];
        while (read(r->fds.wake_r, drain, sizeof drain) > 0) {
        }
    }
    if (!r->exited)
        timers(p, r, now);
    bool out_ready = i_out >= 0 && (pf[i_out].revents & (POLLIN | POLLHUP | POLLERR));
    bool err_ready = i_err >= 0 && (pf[i_err].revents & (POLLIN | POLLHUP | POLLERR));
    if (out_ready && err_ready)
        read_both(p, &r->fds.out_r, &r->fds.err_r, r->buf, BUF, &r->last_stream);
    else if (out_ready && read_pipe(p, &r->fds.out_r, 1, r->buf, BUF / 2))
        r->last_stream = 1;
    else if (err_ready && read_pipe(p, &r->fds.err_r, 2, r->buf, BUF / 2))
        r->last_stream = 2;
    if (!r->exited && (r->fds.pidfd < 0 || (i_pid >= 0 && (pf[i_pid].revents & POLLIN))))
        reap(p, r, now);
    /* after the exit a process outside our reach may hold the pipes */
    return !(r->exited && now >= r->exited_at + DRAIN_AFTER_EXIT_MS);
}

/* The exit as on_exit reports it. */
static void report_exit(ocisbx_proc *p, int status)
{
    pthread_mutex_lock(&p->mu);
    int sent = p->sent_signal;
    bool timed_out = p->timed_out;
    if (p->wake_w >= 0)
        close(p->wake_w);
    p->wake_w = -1;
    pthread_mutex_unlock(&p->mu);
    int exit_code, term_signal = 0;
    if (WIFSIGNALED(status)) {
        exit_code = -1;
        term_signal = WTERMSIG(status);
    } else {
        exit_code = WEXITSTATUS(status);
        /* bwrap (and sh for its children) report a signal death as 128+N:
         * it is a kill when we sent one */
        if (sent && exit_code > 128 && exit_code < 128 + NSIG) {
            term_signal = exit_code - 128;
            exit_code = -1;
        }
    }
    if (p->on_exit)
        p->on_exit(exit_code, term_signal, timed_out, p->user_data);
}

void *ocisbx_proc_thread(void *arg)
{
    ocisbx_proc *p = arg;
    run r = {{-1, -1, -1, -1}, NULL, 0, 0, false, 0, 0};
    int rc = spawn(p, &r.fds);
    pthread_mutex_lock(&p->mu);
    p->started = true;
    p->start_rc = rc;
    if (rc) /* errors are per thread: start() restores it on the caller's */
        p->start_err = ocisbx_error_save();
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (rc)
        return NULL;
    r.buf = malloc(BUF);
    r.deadline = p->timeout_ms > 0 ? ocisbx_proc_now_ms() + p->timeout_ms : 0;
    while (r.buf && (!r.exited || r.fds.out_r >= 0 || r.fds.err_r >= 0))
        if (!round_once(p, &r))
            break;
    if (!r.exited) { /* out of memory or poll failure: do not leave it behind */
        pthread_mutex_lock(&p->mu);
        p->sent_signal = SIGKILL;
        ocisbx_proc_signal_tree_locked(p, SIGKILL);
        if (!p->isolate)
            kill(p->pid, SIGKILL);
        while (waitpid(p->pid, &r.status, 0) < 0 && errno == EINTR) {
        }
        p->pid = 0;
        pthread_mutex_unlock(&p->mu);
    }
    free(r.buf);
    int fds[3] = {r.fds.out_r, r.fds.err_r, r.fds.pidfd};
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    report_exit(p, r.status);
    close(r.fds.wake_r);
    pthread_mutex_lock(&p->mu);
    p->finished = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}
