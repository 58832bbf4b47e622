/* What runs in the runner's child, between fork and exec (see proc_int.h):
 * async-signal-safe calls only, as the caller may have other threads. */
/* dup3, unshare, CLONE_NEWNS */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/proc_int.h"

static void report(int exec_w, int step, int err)
{
    int e[2] = {step, err};
    ssize_t r = write(exec_w, e, sizeof e);
    (void)r;
}

/* Default dispositions, no blocked signal, the death signal, a new session. */
static bool child_reset(pid_t parent)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            sigaction(s, &dfl, NULL); /* ignored signals (SIGPIPE) survive exec otherwise */
    /* Dies with the thread that forked it, which lives until it is reaped. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        return false;
    setsid();
    return true;
}

/* 0-2 from devnull and the pipes, 3 the info fd (isolated), then the
 * exec-error fd (close-on-exec); nothing else stays open. Returns the
 * exec-error fd, or -1. */
static int child_fds(int devnull, int out_w, int err_w, int info_w, int exec_w)
{
    int fds[5] = {devnull, out_w, err_w, info_w, exec_w};
    for (int i = 0; i < 5; i++)
        if (fds[i] >= 0 && (fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10)) < 0)
            return -1;
    if (dup2(fds[0], 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[2], 2) < 0)
        return -1;
    int next = 3;
    if (fds[3] >= 0 && dup2(fds[3], next++) < 0)
        return -1;
    if (dup3(fds[4], next, O_CLOEXEC) < 0)
        return -1;
    int ew = next++;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)next, ~0U, 0) != 0)
#endif
    {
        struct rlimit rl;
        long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 65536;
        if (max > 1 << 20)
            max = 1 << 20;
        for (long fd = next; fd < max; fd++)
            close((int)fd);
    }
    return ew;
}

/* Makes the directories leading to path (under the stage's tmpfs). */
static bool make_parents(const char *path)
{
    char buf[4096];
    size_t len = strlen(path);
    if (len >= sizeof buf)
        return false;
    memcpy(buf, path, len + 1);
    for (size_t i = strlen(OCISBX_PROC_STAGE_WO) + 1; i < len; i++) {
        if (buf[i] != '/')
            continue;
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return false;
        buf[i] = '/';
    }
    return true;
}

/* As host root: a tmpfs on the stage with the whiteout layer (a 0/0
 * character device for each path the view leaves out) and the read-only
 * overlay of it over the host's /etc, the host's mounts under /etc bound
 * again on top (an overlay shows the file system below them). */
static bool stage_etc(const ocisbx_proc *p)
{
    if (mount("ocisbx-stage", OCISBX_PROC_STAGE_DIR, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
        return false;
    const char *dirs[] = {OCISBX_PROC_STAGE_WS, OCISBX_PROC_STAGE_WO, OCISBX_PROC_STAGE_ETC};
    for (size_t i = 0; i < 3; i++)
        if (mkdir(dirs[i], 0755) != 0)
            return false;
    for (size_t i = 0; p->wo_paths && p->wo_paths[i]; i++)
        if (!make_parents(p->wo_paths[i]) || mknod(p->wo_paths[i], S_IFCHR, 0) != 0)
            return false;
    if (mount("ocisbx-etc", OCISBX_PROC_STAGE_ETC, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV,
              OCISBX_PROC_OVERLAY_OPTS) != 0)
        return false;
    for (size_t i = 0; p->etc_binds && p->etc_binds[i] && p->etc_binds[i + 1]; i += 2)
        if (mount(p->etc_binds[i], p->etc_binds[i + 1], NULL, MS_BIND | MS_REC, NULL) != 0)
            return false;
    return true;
}

/* The workspace staged in a private mount namespace (no propagation back to
 * the host), nosuid and nodev: the very directory start() examined (same
 * device and inode), opened here so that a path swapped meanwhile (a
 * symlink put in its place) is not what gets mounted; mounted through its
 * fd, which belongs to this namespace. */
static bool child_stage(const ocisbx_proc *p)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return false;
    int ws = open(p->host_ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat wst;
    if (ws < 0 || fstat(ws, &wst) != 0)
        return false;
    if (wst.st_dev != p->ws_dev || wst.st_ino != p->ws_ino) {
        errno = ESTALE;
        return false;
    }
    char src[32] = "/proc/self/fd/";
    size_t len = strlen(src);
    char digits[12];
    int nd = 0;
    for (unsigned v = (unsigned)ws; nd == 0 || v > 0; v /= 10)
        digits[nd++] = (char)('0' + v % 10);
    while (nd > 0)
        src[len++] = digits[--nd];
    src[len] = '\0';
    /* the workspace is open already: a stage over its path hides nothing */
    if (p->etc_overlay && !stage_etc(p))
        return false;
    const char *at = p->etc_overlay ? OCISBX_PROC_STAGE_WS : OCISBX_PROC_STAGE_DIR;
    if (mount(src, at, NULL, MS_BIND | MS_REC, NULL) != 0 ||
        mount(NULL, at, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | p->ws_mount_flags, NULL) != 0)
        return false;
    close(ws);
    return true;
}

/* Becomes the workspace's owner, with no supplementary groups, so that
 * bubblewrap runs unprivileged and its user namespace maps only that uid. */
static bool child_drop(const ocisbx_proc *p, pid_t parent)
{
    if (setgroups(0, NULL) != 0 || setgid(p->run_gid) != 0 || setuid(p->run_uid) != 0 || setuid(0) == 0 ||
        getuid() != p->run_uid || geteuid() != p->run_uid)
        return false;
    /* a change of credentials clears the death signal: set it again */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        return false;
    if (getppid() != parent)
        _exit(127);
    return true;
}

static bool child_limits(const ocisbx_proc *p)
{
    const struct {
        int res;
        uint64_t v;
    } lim[] = {{RLIMIT_AS, p->mem_limit}, {RLIMIT_NPROC, (uint64_t)p->max_procs}, {RLIMIT_FSIZE, p->max_file}};
    for (size_t i = 0; i < sizeof lim / sizeof *lim; i++) {
        struct rlimit rl = {(rlim_t)lim[i].v, (rlim_t)lim[i].v};
        if (lim[i].v && setrlimit(lim[i].res, &rl) != 0)
            return false;
    }
    return true;
}

/* The filter, read by bwrap from OCISBX_PROC_SECCOMP_FD (fits a pipe's buffer). */
static bool child_filter(const ocisbx_proc *p)
{
    int sp[2];
    size_t bytes = p->filter_len * sizeof p->filter[0];
    if (pipe(sp) != 0 || write(sp[1], p->filter, bytes) != (ssize_t)bytes)
        return false;
    close(sp[1]);
    if (sp[0] != OCISBX_PROC_SECCOMP_FD) {
        if (dup2(sp[0], OCISBX_PROC_SECCOMP_FD) < 0)
            return false;
        close(sp[0]);
    }
    return true;
}

/* A detached job: the child forks the process that runs it (no death
 * signal, its own session, output to /dev/null), reports its pid and exits,
 * so that nothing of the caller ends it. */
static void exec_detached(const ocisbx_proc *p, int exec_w)
{
    pid_t b = fork();
    if (b == 0) {
        setsid();
        int nul = open("/dev/null", O_WRONLY);
        if (nul < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0)
            _exit(127);
        if (nul > 2)
            close(nul);
        execve(p->exe, p->argv, p->envp);
        report(exec_w, OCISBX_CHILD_EXEC, errno);
        _exit(127);
    }
    int e[2] = {OCISBX_CHILD_DETACHED, (int)b};
    ssize_t r = b > 0 ? write(exec_w, e, sizeof e) : -1;
    _exit(r == (ssize_t)sizeof e ? 0 : 127);
}

/* ---- the keeper (unisolated) ---------------------------------------------------- */

/* The pid's parent from /proc/<pid>/stat, by hand (no stdio here); -1. */
static long stat_ppid(const char *pid)
{
    char path[64] = "/proc/", buf[512];
    size_t n = strlen(path), pl = strlen(pid);
    if (pl > 20)
        return -1;
    memcpy(path + n, pid, pl);
    memcpy(path + n + pl, "/stat", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0)
        return -1;
    buf[r] = '\0';
    char *e = strrchr(buf, ')');
    if (!e || e[1] != ' ' || !e[2] || e[3] != ' ')
        return -1;
    long v = 0;
    for (e += 4; *e >= '0' && *e <= '9'; e++)
        v = v * 10 + (*e - '0');
    return v;
}

/* KILLs every child of the keeper: a child's own children become the
 * keeper's (it is their subreaper) as soon as it dies, and the next round
 * finds them. */
static void kill_children(void)
{
    long self = (long)getpid();
    int d = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0)
        return;
    union {
        char c[4096];
        unsigned long long align;
    } u;
    char *buf = u.c;
    for (;;) {
        long n = syscall(SYS_getdents64, d, buf, sizeof u.c);
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            struct {
                unsigned long long ino;
                long long off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *de = (void *)(buf + off);
            off += de->reclen;
            if (de->name[0] >= '1' && de->name[0] <= '9' && stat_ppid(de->name) == self) {
                long pid = 0;
                for (const char *c = de->name; *c >= '0' && *c <= '9'; c++)
                    pid = pid * 10 + (*c - '0');
                kill((pid_t)pid, SIGKILL);
            }
        }
    }
    close(d);
}

/* Ends every descendant and reaps them all. */
static void keeper_clear(void)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    struct timespec tick = {0, 100 * 1000 * 1000};
    for (;;) {
        kill_children();
        pid_t w;
        while ((w = waitpid(-1, NULL, WNOHANG)) > 0) {
        }
        if (w < 0 && errno == ECHILD)
            return;
        (void)sigtimedwait(&chld, NULL, &tick);
    }
}

/* With the status of the shell: its exit code, or the same signal. */
static void keeper_exit(int status)
{
    if (!WIFSIGNALED(status))
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
    int sig = WTERMSIG(status);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    kill(getpid(), sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    _exit(128 + sig);
}

/* Unisolated, the child stays as the keeper: a child subreaper that forks
 * the shell, so that whatever the command starts (setsid() daemons, double
 * forks, children ignoring TERM) stays its descendant, where the runner's
 * signals reach it; when the shell ends, or the runner dies, the keeper
 * KILLs all that is left, reaps it, and exits with the shell's status. It
 * blocks every signal: only KILL (and STOP) reach it. */
static void keeper(const ocisbx_proc *p, pid_t parent, int exec_w)
{
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &all, NULL);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || prctl(PR_SET_PDEATHSIG, OCISBX_PROC_KEEPER_DEATH_SIG) != 0) {
        report(exec_w, OCISBX_CHILD_EXEC, errno);
        _exit(127);
    }
    if (getppid() != parent)
        _exit(127);
    pid_t sh = fork();
    if (sh == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* the keeper killed: at least the shell ends */
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(p->exe, p->argv, p->envp);
        report(exec_w, OCISBX_CHILD_EXEC, errno);
        _exit(127);
    }
    if (sh < 0) {
        report(exec_w, OCISBX_CHILD_EXEC, errno);
        _exit(127);
    }
    close(exec_w);
    dup2(0, 1); /* the pipes end with the command's tree, not with the keeper */
    dup2(0, 2);
    sigset_t wake;
    sigemptyset(&wake);
    sigaddset(&wake, SIGCHLD);
    sigaddset(&wake, OCISBX_PROC_KEEPER_DEATH_SIG);
    int status = 0;
    for (bool done = false; !done;) {
        siginfo_t si;
        int sig = sigwaitinfo(&wake, &si);
        if (sig == OCISBX_PROC_KEEPER_DEATH_SIG && getppid() != parent) {
            status = SIGKILL; /* the runner is gone: so is the command */
            done = true;
        }
        pid_t w;
        int st;
        while (!done && (w = waitpid(-1, &st, WNOHANG)) > 0)
            if (w == sh) {
                status = st;
                done = true;
            }
    }
    keeper_clear();
    keeper_exit(status);
}

/* ---- the child ----------------------------------------------------------------------- */

void ocisbx_proc_child(ocisbx_proc *p, pid_t parent, int devnull, int out_w, int err_w, int info_w, int exec_w)
{
    int step = OCISBX_CHILD_EXEC;
    if (!child_reset(parent))
        _exit(127);
    int ew = child_fds(devnull, out_w, err_w, info_w, exec_w);
    if (ew < 0) {
        report(exec_w, step, errno);
        _exit(127);
    }
    exec_w = ew;
    if (chdir(p->isolate ? "/" : p->host_cwd) != 0)
        goto fail;
    step = OCISBX_CHILD_STAGE;
    if (p->stage && !child_stage(p))
        goto fail;
    step = OCISBX_CHILD_DROP;
    if (p->drop && !child_drop(p, parent))
        goto fail;
    /* bubblewrap sets it too; before it, nothing it executes gains a
     * privilege (unless bubblewrap itself is setuid: it would break it) */
    if (p->stage && !p->bwrap_setuid && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        goto fail;
    /* after the drop: RLIMIT_NPROC counts the processes of the real uid */
    step = OCISBX_CHILD_LIMITS;
    if (!child_limits(p) || (p->isolate && !child_filter(p)))
        goto fail;
    step = OCISBX_CHILD_EXEC;
    if (p->detach)
        exec_detached(p, exec_w);
    if (!p->isolate)
        keeper(p, parent, exec_w);
    execve(p->exe, p->argv, p->envp);
fail:
    report(exec_w, step, errno);
    _exit(127);
}
