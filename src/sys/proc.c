/* The process runner (see proc.h): bubblewrap isolation, one
 * thread per command that forks it, reads its pipes, enforces the timeout and
 * the TERM-then-KILL grace, reaps it and reports the exit. */
/* pipe2, dup3, waitid flags */
#define _GNU_SOURCE
#include "sys/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "util/internal.h"

#define DEFAULT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define SANDBOX_WS "/workspace"
/* As root, the workspace is bind-mounted here in the child's private mount
 * namespace before the uid drop, so that the unprivileged bubblewrap reaches
 * it whatever the modes of its parent directories; bubblewrap's own root is
 * a fresh tmpfs, so nothing of the host's /tmp is lost, and the sandbox's
 * command line shows this name, not the host path. */
#define STAGE_DIR "/tmp"
/* How long the pipes may stay open after an unisolated command exited (a
 * daemon that left its process group still holds them): then we stop reading. */
#define DRAIN_AFTER_EXIT_MS 1000

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
    /* as root: the child drops to run_uid/run_gid after staging host_ws */
    bool drop;
    uid_t run_uid;
    gid_t run_gid;
    char *host_ws;
    unsigned long ws_mount_flags; /* MS_RDONLY / MS_NOEXEC kept from the host mount */
    dev_t ws_dev;                 /* the workspace start() examined */
    ino_t ws_ino;
    bool bwrap_setuid;  /* then no PR_SET_NO_NEW_PRIVS, it would break it */
    uint64_t mem_limit; /* RLIMIT_AS, 0: none */
    int max_procs;      /* RLIMIT_NPROC, 0: none */
    uint64_t max_file;  /* RLIMIT_FSIZE, 0: none */
    bool detach;        /* a background job: see ocisbx_proc_spec.detach */
    pid_t detached_pid; /* its process (the grandchild), once started */

    ocisbx_proc_output_fn on_output;
    ocisbx_proc_exit_fn on_exit;
    void *user_data;

    /* under mu */
    pid_t pid; /* our child (bwrap, or sh); 0 once reaped */
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

static pthread_mutex_t g_live_mu = PTHREAD_MUTEX_INITIALIZER;
static ocisbx_proc *g_live;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void free_strv(char **v, bool secret)
{
    if (!v)
        return;
    for (size_t i = 0; v[i]; i++) {
        if (secret)
            ocisbx_free_secret(v[i]);
        else
            free(v[i]);
    }
    free(v);
}

/* ---- finding bwrap ---------------------------------------------------------- */

static int find_on_path(const char *name, char *out, size_t out_len)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    const char *p = path;
    while (*p) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        if (n > 0 && n + strlen(name) + 2 <= out_len) {
            memcpy(out, p, n);
            out[n] = '/';
            strcpy(out + n + 1, name);
            struct stat st;
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
                return 0;
        }
        if (!colon)
            break;
        p = colon + 1;
    }
    return -1;
}

/* ---- building argv / envp ---------------------------------------------------- */

typedef struct strv {
    char **v;
    size_t n, cap;
    bool failed;
} strv;

static void strv_push_owned(strv *s, char *str)
{
    if (s->failed || !str) {
        s->failed = true;
        free(str);
        return;
    }
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        char **nv = realloc(s->v, cap * sizeof *nv);
        if (!nv) {
            s->failed = true;
            free(str);
            return;
        }
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = str;
    s->v[s->n] = NULL;
}

static void strv_push(strv *s, const char *str)
{
    strv_push_owned(s, ocisbx_strdup(str));
}

/* /bin, /lib... are symlinks into /usr on merged-/usr systems and real
 * directories elsewhere: mirror whichever the host has. */
static void push_host_dir(strv *a, const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) != 0)
        return;
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(dir, target, sizeof target - 1);
        if (n <= 0)
            return;
        target[n] = '\0';
        strv_push(a, "--symlink");
        strv_push(a, target);
        strv_push(a, dir);
    } else if (S_ISDIR(st.st_mode)) {
        strv_push(a, "--ro-bind");
        strv_push(a, dir);
        strv_push(a, dir);
    }
}

/* No ptrace in the sandbox: bwrap loads this filter (cBPF, from the fd
 * given with --seccomp) just before it executes the command, so every
 * process of the command's tree gets EPERM from ptrace() while bwrap's init
 * (its pid 1, outside the filter) cannot be attached and stalled. Any
 * other architecture than the native one (i386 or x32 entry points) is
 * refused as a whole, so the filter cannot be bypassed through them. */
#define SECCOMP_FD 5 /* after 0-2, the info fd 3 and the exec-error fd 4 */
#define SECCOMP_FD_STR "5"
#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "the seccomp filter knows x86_64 and aarch64 only"
#endif
static const struct sock_filter no_ptrace_filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1), /* x32 */
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
#endif
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static int build_bwrap_argv(ocisbx_proc *p, const char *bwrap, const ocisbx_proc_spec *spec, const char *cwd)
{
    strv a = {0};
    strv_push(&a, bwrap);
    /* A user namespace on top of the dropped capabilities: the read-only
     * mounts become locked, so not even a capability regained inside could
     * remount them writable; --disable-userns stops nesting another one. */
    static const char *const fixed[] = {"--unshare-user",
                                        "--uid",
                                        "0",
                                        "--gid",
                                        "0",
                                        "--disable-userns",
                                        "--unshare-pid",
                                        "--unshare-ipc",
                                        "--unshare-uts",
                                        "--hostname",
                                        "sandbox",
                                        "--die-with-parent",
                                        "--new-session",
                                        "--cap-drop",
                                        "ALL",
                                        "--ro-bind",
                                        "/usr",
                                        "/usr",
                                        NULL};
    for (size_t i = 0; fixed[i]; i++)
        if (!spec->detach || strcmp(fixed[i], "--die-with-parent") != 0)
            strv_push(&a, fixed[i]);
    if (!spec->allow_network)
        strv_push(&a, "--unshare-net");
    static const char *const host_dirs[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", NULL};
    for (size_t i = 0; host_dirs[i]; i++)
        push_host_dir(&a, host_dirs[i]);
    static const char *const rest[] = {
        "--ro-bind", "/etc", "/etc",         "--proc", "/proc",     "--dev", "/dev",      "--remount-ro", "/dev",
        "--tmpfs",   "/tmp", "--remount-ro", "/tmp",   "--info-fd", "3",     "--seccomp", SECCOMP_FD_STR, NULL};
    for (size_t i = 0; rest[i]; i++)
        strv_push(&a, rest[i]);
    strv_push(&a, "--bind");
    strv_push(&a, p->drop ? STAGE_DIR : spec->workspace_dir);
    strv_push(&a, SANDBOX_WS);
    /* bwrap's root is a writable tmpfs: /workspace must be the only
     * writable place, so it goes read-only once everything is mounted */
    strv_push(&a, "--remount-ro");
    strv_push(&a, "/");
    strv_push(&a, "--chdir");
    strv_push(&a, cwd);
    strv_push(&a, "/bin/sh");
    strv_push(&a, "-c");
    strv_push(&a, spec->shell_command);
    if (a.failed) {
        free_strv(a.v, false);
        return ocisbx_fail_nomem();
    }
    p->argv = a.v;
    return 0;
}

static bool env_has(const char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return true;
    return false;
}

/* The environment goes to execve() itself rather than bwrap's --setenv, so
 * secret values never appear in a command line (/proc/PID/cmdline). */
static int build_envp(ocisbx_proc *p, const ocisbx_proc_spec *spec)
{
    strv e = {0};
    for (size_t i = 0; spec->envp && spec->envp[i]; i++) {
        const char *eq = strchr(spec->envp[i], '=');
        if (!eq || eq == spec->envp[i]) {
            free_strv(e.v, true);
            return ocisbx_fail(OCISBX_EINVAL, "environment entry %zu is not NAME=VALUE", i);
        }
        strv_push(&e, spec->envp[i]);
    }
    if (!env_has(spec->envp, "PATH"))
        strv_push(&e, DEFAULT_PATH);
    if (!env_has(spec->envp, "HOME")) {
        if (spec->isolate)
            strv_push(&e, "HOME=" SANDBOX_WS);
        else
            strv_push_owned(&e, ocisbx_asprintf("HOME=%s", spec->workspace_dir));
    }
    if (e.failed || !e.v) {
        free_strv(e.v, true);
        return ocisbx_fail_nomem();
    }
    p->envp = e.v;
    return 0;
}

/* cwd must be /workspace or below it, without "..": it names a place in
 * the sandbox, and unisolated it is mapped into the workspace directory. */
static int check_cwd(const ocisbx_proc_spec *spec, const char **cwd_out, char **host_out)
{
    const char *cwd = spec->cwd && *spec->cwd ? spec->cwd : SANDBOX_WS;
    size_t wl = strlen(SANDBOX_WS);
    if (strncmp(cwd, SANDBOX_WS, wl) != 0 || (cwd[wl] != '\0' && cwd[wl] != '/'))
        return ocisbx_fail(OCISBX_EINVAL, "cwd %s is not under " SANDBOX_WS, cwd);
    for (const char *s = cwd; (s = strstr(s, "..")) != NULL; s += 2)
        if (s[-1] == '/' && (s[2] == '/' || s[2] == '\0'))
            return ocisbx_fail(OCISBX_EINVAL, "cwd %s contains '..'", cwd);
    char *host = ocisbx_asprintf("%s%s", spec->workspace_dir, cwd + wl);
    if (!host)
        return ocisbx_fail_nomem();
    struct stat st;
    if (stat(host, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(host);
        return ocisbx_fail(OCISBX_EINVAL, "cwd %s: no such directory in the workspace", cwd);
    }
    if (!spec->isolate) {
        /* unisolated, a symlink would take the shell out of the workspace */
        char real_ws[PATH_MAX], real_cwd[PATH_MAX];
        size_t n = realpath(spec->workspace_dir, real_ws) ? strlen(real_ws) : 0;
        if (!n || !realpath(host, real_cwd) || strncmp(real_cwd, real_ws, n) != 0 ||
            (real_cwd[n] != '\0' && real_cwd[n] != '/' && strcmp(real_ws, "/") != 0)) {
            free(host);
            return ocisbx_fail(OCISBX_EINVAL, "cwd %s leads outside the workspace", cwd);
        }
    }
    *cwd_out = cwd;
    *host_out = host;
    return 0;
}

/* ---- signalling the tree ----------------------------------------------------- */

/* Every process of the sandbox's PID namespace, found by its namespace inode
 * (orphans and setsid() daemons included), gets sig. Repeated a few times
 * so children forked during the scan are caught too. Called with mu held. */
static void signal_namespace(ocisbx_proc *p, int sig)
{
    ocisbx_proc_job j = {(uint64_t)p->ns_dev, (uint64_t)p->ns_ino, 0};
    for (int pass = 0; pass < 3; pass++)
        if (ocisbx_proc_job_signal(&j, sig) == 0)
            break;
}

/* State (field 3) and process group (field 5) of /proc/<pid>/stat. */
static bool proc_stat(long pid, char *state, long *pgrp)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *e = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    int ppid = 0;
    return e && sscanf(e + 1, " %c %d %ld", state, &ppid, pgrp) == 3;
}

int ocisbx_proc_job_signal(const ocisbx_proc_job *j, int sig)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int hits = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        char state = 0;
        long pgrp = 0;
        if (*end || pid <= 0 || !proc_stat(pid, &state, &pgrp) || state == 'Z')
            continue;
        if (j->ns_ino) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%ld/ns/pid", pid);
            struct stat st;
            if (stat(path, &st) != 0 || (uint64_t)st.st_ino != j->ns_ino || (uint64_t)st.st_dev != j->ns_dev)
                continue;
        } else if (j->pgid <= 0 || pgrp != j->pgid) {
            continue;
        }
        if (kill((pid_t)pid, sig) == 0)
            hits++;
    }
    closedir(d);
    return hits;
}

int ocisbx_proc_job_of(ocisbx_proc *p, ocisbx_proc_job *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->mu);
    bool ok = p->detach && p->detached_pid > 0;
    if (ok && p->isolate) {
        ok = p->ns_ino != 0;
        out->ns_dev = (uint64_t)p->ns_dev;
        out->ns_ino = (uint64_t)p->ns_ino;
    } else if (ok) {
        out->pgid = (int)p->detached_pid; /* it called setsid() */
    }
    pthread_mutex_unlock(&p->mu);
    return ok ? 0 : ocisbx_fail(OCISBX_EIO, "runner: the detached job's identity is not known");
}

static void signal_tree_locked(ocisbx_proc *p, int sig)
{
    if (p->pid <= 0)
        return;
    if (!p->isolate) {
        kill(-p->pid, sig);
        return;
    }
    if (p->ns_fd >= 0)
        signal_namespace(p, sig);
    /* bwrap outside the namespace: only KILL, so it never stops or exits
     * before its child (it reports the command's own status). */
    if (sig == SIGKILL || p->ns_fd < 0)
        kill(p->pid, sig);
}

static void wake(ocisbx_proc *p)
{
    if (p->wake_w >= 0) {
        char c = 1;
        ssize_t r = write(p->wake_w, &c, 1);
        (void)r; /* a full pipe is already a pending wake-up */
    }
}

static void terminate_locked(ocisbx_proc *p, int grace_ms)
{
    if (p->pid <= 0)
        return;
    if (grace_ms <= 0) {
        p->sent_signal = SIGKILL;
        signal_tree_locked(p, SIGKILL);
        p->kill_at = 0;
        return;
    }
    if (p->sent_signal != SIGKILL)
        p->sent_signal = SIGTERM;
    signal_tree_locked(p, SIGTERM);
    signal_tree_locked(p, SIGCONT); /* a suspended tree must see its TERM */
    int64_t at = now_ms() + grace_ms;
    if (p->kill_at == 0 || at < p->kill_at)
        p->kill_at = at;
    wake(p);
}

/* ---- the child ----------------------------------------------------------------- */

enum { CHILD_EXEC = 0, CHILD_STAGE, CHILD_DROP, CHILD_LIMITS, CHILD_DETACHED };

/* A detached job: the child forks the process that runs it (no death
 * signal, its own session, output to /dev/null), reports its pid and exits,
 * so that nothing of the caller ends it. */
static void exec_detached(ocisbx_proc *p, int exec_w)
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
        int e[2] = {CHILD_EXEC, errno};
        ssize_t r = write(exec_w, e, sizeof e);
        (void)r;
        _exit(127);
    }
    int e[2] = {CHILD_DETACHED, (int)b};
    ssize_t r = b > 0 ? write(exec_w, e, sizeof e) : -1;
    _exit(r == (ssize_t)sizeof e ? 0 : 127);
}

/* Runs between fork and exec: async-signal-safe calls only. */
static void child_exec(ocisbx_proc *p, pid_t parent, int devnull, int out_w, int err_w, int info_w, int exec_w)
{
    int step = CHILD_EXEC;
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
        _exit(127);
    setsid();

    int fds[5] = {devnull, out_w, err_w, info_w, exec_w};
    for (int i = 0; i < 5; i++)
        if (fds[i] >= 0 && (fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10)) < 0)
            goto fail;
    if (dup2(fds[0], 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[2], 2) < 0)
        goto fail;
    int next = 3;
    if (fds[3] >= 0 && dup2(fds[3], next++) < 0)
        goto fail;
    if (dup3(fds[4], next, O_CLOEXEC) < 0)
        goto fail;
    exec_w = next++;
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
    if (chdir(p->isolate ? "/" : p->host_cwd) != 0)
        goto fail;
    if (p->drop) {
        /* Root never runs the sandbox: the workspace is staged in a private
         * mount namespace (no propagation back to the host), then the child
         * becomes the workspace's owner, with no supplementary groups and no
         * capability, and bubblewrap runs unprivileged: its user namespace
         * maps only that uid. */
        step = CHILD_STAGE;
        if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
            goto fail;
        /* The very directory whose owner start() chose (same device and
         * inode), opened here so that a path swapped meanwhile (a symlink
         * put in its place) is not what gets mounted; mounted through its
         * fd, which belongs to this namespace. */
        int ws = open(p->host_ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat wst;
        if (ws < 0 || fstat(ws, &wst) != 0)
            goto fail;
        if (wst.st_dev != p->ws_dev || wst.st_ino != p->ws_ino) {
            errno = ESTALE;
            goto fail;
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
        if (mount(src, STAGE_DIR, NULL, MS_BIND | MS_REC, NULL) != 0 ||
            mount(NULL, STAGE_DIR, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | p->ws_mount_flags, NULL) != 0)
            goto fail;
        close(ws);
        step = CHILD_DROP;
        if (setgroups(0, NULL) != 0 || setgid(p->run_gid) != 0 || setuid(p->run_uid) != 0 || setuid(0) == 0 ||
            getuid() != p->run_uid || geteuid() != p->run_uid)
            goto fail;
        if (!p->bwrap_setuid && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
            goto fail;
        /* a change of credentials clears the death signal: set it again */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
            goto fail;
        if (getppid() != parent)
            _exit(127);
        step = CHILD_EXEC;
    }
    /* after the drop: RLIMIT_NPROC counts the processes of the real uid */
    step = CHILD_LIMITS;
    if (p->mem_limit) {
        struct rlimit rl = {(rlim_t)p->mem_limit, (rlim_t)p->mem_limit};
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            goto fail;
    }
    if (p->max_procs > 0) {
        struct rlimit rl = {(rlim_t)p->max_procs, (rlim_t)p->max_procs};
        if (setrlimit(RLIMIT_NPROC, &rl) != 0)
            goto fail;
    }
    if (p->max_file) {
        struct rlimit rl = {(rlim_t)p->max_file, (rlim_t)p->max_file};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            goto fail;
    }
    if (p->isolate) { /* the filter, read by bwrap from SECCOMP_FD (fits a pipe's buffer) */
        int sp[2];
        if (pipe(sp) != 0 ||
            write(sp[1], no_ptrace_filter, sizeof no_ptrace_filter) != (ssize_t)sizeof no_ptrace_filter)
            goto fail;
        close(sp[1]);
        if (sp[0] != SECCOMP_FD) {
            if (dup2(sp[0], SECCOMP_FD) < 0)
                goto fail;
            close(sp[0]);
        }
    }
    step = CHILD_EXEC;
    if (p->detach)
        exec_detached(p, exec_w);
    execve(p->exe, p->argv, p->envp);
fail:;
    int e[2] = {step, errno};
    ssize_t r = write(exec_w, e, sizeof e);
    (void)r;
    _exit(127);
}

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
    if (!k)
        return;
    k = strchr(k, ':');
    if (!k)
        return;
    long child = strtol(k + 1, NULL, 10);
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

typedef struct io {
    int out_r, err_r, wake_r, pidfd;
} io;

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
        child_exec(p, parent, devnull, outp[1], errp[1], infop[1], execp[1]);

    close(outp[1]);
    close(errp[1]);
    close(execp[1]);
    outp[1] = errp[1] = execp[1] = -1;
    if (infop[1] >= 0) {
        close(infop[1]);
        infop[1] = -1;
    }
    int child_err[2] = {0, 0}; /* step, errno */
    ssize_t n;
    do
        n = read(execp[0], child_err, sizeof child_err);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof child_err && child_err[0] == CHILD_DETACHED) {
        p->detached_pid = (pid_t)child_err[1];
        do /* then the grandchild's own exec (EOF: it ran) */
            n = read(execp[0], child_err, sizeof child_err);
        while (n < 0 && errno == EINTR);
    }
    if (n == (ssize_t)sizeof child_err) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        if (child_err[0] == CHILD_STAGE)
            rc = ocisbx_fail(OCISBX_EIO, "runner: cannot stage the workspace in a private mount namespace: %s",
                             strerror(child_err[1]));
        else if (child_err[0] == CHILD_LIMITS)
            rc = ocisbx_fail(OCISBX_EIO, "runner: cannot set the resource limits: %s", strerror(child_err[1]));
        else if (child_err[0] == CHILD_DROP)
            rc = ocisbx_fail(OCISBX_EIO, "runner: cannot drop to uid %u gid %u: %s", (unsigned)p->run_uid,
                             (unsigned)p->run_gid, strerror(child_err[1]));
        else
            rc = ocisbx_fail(OCISBX_EIO, "runner: cannot execute %s: %s", p->exe, strerror(child_err[1]));
        goto out;
    }
    pthread_mutex_lock(&p->mu);
    p->pid = pid;
    p->wake_w = wakep[1];
    pthread_mutex_unlock(&p->mu);
    wakep[1] = -1;
    if (infop[0] >= 0)
        read_info(p, infop[0]);
    io_out->out_r = outp[0];
    io_out->err_r = errp[0];
    io_out->wake_r = wakep[0];
    outp[0] = errp[0] = wakep[0] = -1;
    io_out->pidfd = -1;
#ifdef SYS_pidfd_open
    io_out->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
out:
    for (int i = 0; i < 2; i++) {
        if (outp[i] >= 0)
            close(outp[i]);
        if (errp[i] >= 0)
            close(errp[i]);
        if (infop[i] >= 0)
            close(infop[i]);
        if (execp[i] >= 0)
            close(execp[i]);
        if (wakep[i] >= 0)
            close(wakep[i]);
    }
    if (devnull >= 0)
        close(devnull);
    return rc;
}

/* ---- the process thread ------------------------------------------------------ */

static bool read_pipe(ocisbx_proc *p, int *fd, int stream, char *buf, size_t cap)
{
    ssize_t n = read(*fd, buf, cap);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (n <= 0) {
        close(*fd);
        *fd = -1;
        return false;
    }
    if (p->on_output)
        p->on_output(stream, buf, (size_t)n, p->user_data);
    return true;
}

/* Length of the first line of d (through its newline), or n. */
static size_t line_len(const char *d, size_t n)
{
    const char *nl = memchr(d, '\n', n);
    return nl ? (size_t)(nl - d) + 1 : n;
}

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

static void *proc_thread(void *arg)
{
    ocisbx_proc *p = arg;
    io fds = {-1, -1, -1, -1};
    int rc = spawn(p, &fds);
    pthread_mutex_lock(&p->mu);
    p->started = true;
    p->start_rc = rc;
    if (rc) /* errors are per thread: start() restores it on the caller's */
        p->start_err = ocisbx_error_save();
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (rc)
        return NULL;

    enum { BUF = 131072 }; /* two halves when both pipes are read in one round */
    char *buf = malloc(BUF);
    int64_t deadline = p->timeout_ms > 0 ? now_ms() + p->timeout_ms : 0;
    int64_t exited_at = 0;
    bool exited = false;
    int status = 0;
    int last_stream = 0; /* the stream of the last chunk delivered */

    while (buf && (!exited || fds.out_r >= 0 || fds.err_r >= 0)) {
        struct pollfd pf[4];
        int npf = 0, i_out = -1, i_err = -1, i_pid = -1, i_wake;
        if (fds.out_r >= 0) {
            i_out = npf;
            pf[npf++] = (struct pollfd){fds.out_r, POLLIN, 0};
        }
        if (fds.err_r >= 0) {
            i_err = npf;
            pf[npf++] = (struct pollfd){fds.err_r, POLLIN, 0};
        }
        i_wake = npf;
        pf[npf++] = (struct pollfd){fds.wake_r, POLLIN, 0};
        if (!exited && fds.pidfd >= 0) {
            i_pid = npf;
            pf[npf++] = (struct pollfd){fds.pidfd, POLLIN, 0};
        }
        int64_t now = now_ms();
        int64_t wait = -1;
        pthread_mutex_lock(&p->mu);
        int64_t kill_at = p->kill_at;
        bool timed_out = p->timed_out;
        pthread_mutex_unlock(&p->mu);
        if (!exited) {
            if (deadline && !timed_out)
                wait = deadline - now;
            if (kill_at && (wait < 0 || kill_at - now < wait))
                wait = kill_at - now;
            if (fds.pidfd < 0 && (wait < 0 || wait > 20))
                wait = 20; /* no pidfd: look for the exit now and then */
        } else {
            wait = exited_at + DRAIN_AFTER_EXIT_MS - now;
        }
        if (wait < 0 && wait != -1)
            wait = 0;
        if (wait > INT_MAX)
            wait = INT_MAX;
        int pr = poll(pf, (nfds_t)npf, (int)wait);
        if (pr < 0 && errno != EINTR)
            break;
        now = now_ms();
        if (pr > 0 && (pf[i_wake].revents & POLLIN)) {
            char drain[64];
            while (read(fds.wake_r, drain, sizeof drain) > 0) {
            }
        }
        if (!exited) {
            pthread_mutex_lock(&p->mu);
            if (deadline && !p->timed_out && now >= deadline) {
                p->timed_out = true;
                terminate_locked(p, OCISBX_PROC_TIMEOUT_GRACE_MS);
            }
            if (p->kill_at && now >= p->kill_at) {
                p->kill_at = 0;
                p->sent_signal = SIGKILL;
                signal_tree_locked(p, SIGKILL);
            }
            pthread_mutex_unlock(&p->mu);
        }
        bool out_ready = i_out >= 0 && (pf[i_out].revents & (POLLIN | POLLHUP | POLLERR));
        bool err_ready = i_err >= 0 && (pf[i_err].revents & (POLLIN | POLLHUP | POLLERR));
        if (out_ready && err_ready) {
            read_both(p, &fds.out_r, &fds.err_r, buf, BUF, &last_stream);
        } else if (out_ready) {
            if (read_pipe(p, &fds.out_r, 1, buf, BUF / 2))
                last_stream = 1;
        } else if (err_ready) {
            if (read_pipe(p, &fds.err_r, 2, buf, BUF / 2))
                last_stream = 2;
        }
        if (!exited && (fds.pidfd < 0 || (i_pid >= 0 && (pf[i_pid].revents & POLLIN)))) {
            pthread_mutex_lock(&p->mu);
            siginfo_t si;
            memset(&si, 0, sizeof si);
            /* peek first: while the child is a zombie its pid (and process
             * group) cannot be reused, so the group kill below is safe */
            int wr = waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT);
            if (wr == 0 && si.si_pid == p->pid) {
                if (!p->isolate)
                    kill(-p->pid, SIGKILL); /* background children of the group */
                while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR) {
                }
                p->pid = 0;
                exited = true;
                exited_at = now;
            } else if (wr < 0 && errno == ECHILD) {
                /* SIGCHLD ignored by the host program: reaped by the kernel,
                 * status lost */
                status = 0xff00; /* reported as exit code 255 */
                p->pid = 0;
                exited = true;
                exited_at = now;
            }
            pthread_mutex_unlock(&p->mu);
        }
        if (exited && now >= exited_at + DRAIN_AFTER_EXIT_MS)
            break; /* a process outside our reach holds the pipes */
    }
    if (!exited) { /* out of memory or poll failure: do not leave it behind */
        pthread_mutex_lock(&p->mu);
        p->sent_signal = SIGKILL;
        signal_tree_locked(p, SIGKILL);
        while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR) {
        }
        p->pid = 0;
        pthread_mutex_unlock(&p->mu);
    }
    free(buf);
    if (fds.out_r >= 0)
        close(fds.out_r);
    if (fds.err_r >= 0)
        close(fds.err_r);
    if (fds.pidfd >= 0)
        close(fds.pidfd);

    pthread_mutex_lock(&p->mu);
    int sent = p->sent_signal;
    bool timed_out = p->timed_out;
    if (p->wake_w >= 0)
        close(p->wake_w);
    p->wake_w = -1;
    pthread_mutex_unlock(&p->mu);
    close(fds.wake_r);

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

    pthread_mutex_lock(&p->mu);
    p->finished = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* ---- public ------------------------------------------------------------------- */

static void proc_release(ocisbx_proc *p)
{
    free(p->host_cwd);
    free_strv(p->argv, false);
    free_strv(p->envp, true);
    free(p->exe);
    free(p->host_ws);
    free(p->start_err);
    if (p->ns_fd >= 0)
        close(p->ns_fd);
    if (p->wake_w >= 0)
        close(p->wake_w);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

int ocisbx_proc_start(const ocisbx_proc_spec *spec, ocisbx_proc_output_fn on_output, ocisbx_proc_exit_fn on_exit,
                      void *user_data, ocisbx_proc **out)
{
    if (out)
        *out = NULL;
    if (!spec || !out || !spec->shell_command || !spec->workspace_dir || spec->workspace_dir[0] != '/')
        return ocisbx_fail(OCISBX_EINVAL, "runner: spec needs an absolute workspace_dir and a shell_command");
    struct stat st;
    if (stat(spec->workspace_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return ocisbx_fail(OCISBX_EINVAL, "runner: workspace directory %s does not exist", spec->workspace_dir);
    char bwrap[PATH_MAX];
    if (spec->isolate && find_on_path("bwrap", bwrap, sizeof bwrap) != 0)
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "runner: bubblewrap (bwrap) not found on PATH");

    ocisbx_proc *p = calloc(1, sizeof *p);
    if (!p)
        return ocisbx_fail_nomem();
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    p->ns_fd = -1;
    p->wake_w = -1;
    p->isolate = spec->isolate;
    p->allow_network = spec->allow_network;
    p->detach = spec->detach;
    p->timeout_ms = spec->timeout_ms > 0 ? spec->timeout_ms : 0;
    p->on_output = on_output;
    p->on_exit = on_exit;
    p->user_data = user_data;

    const char *cwd = NULL;
    int rc = 0;
    if (spec->isolate && geteuid() == 0) {
        /* As root the command runs as the workspace's owner (see proc.h). */
        if (st.st_uid == 0) {
            rc = ocisbx_fail(OCISBX_EUNSUPPORTED,
                             "runner: running as root, the workspace %s must belong to an unprivileged user "
                             "(the command runs as its owner), not to root",
                             spec->workspace_dir);
        } else {
            p->drop = true;
            p->run_uid = st.st_uid;
            p->run_gid = st.st_gid;
            p->ws_dev = st.st_dev;
            p->ws_ino = st.st_ino;
            struct statvfs vfs;
            if (statvfs(spec->workspace_dir, &vfs) == 0)
                p->ws_mount_flags = ((vfs.f_flag & ST_RDONLY) ? MS_RDONLY : 0) |
                                    ((vfs.f_flag & ST_NOEXEC) ? MS_NOEXEC : 0);
            struct stat bst;
            p->bwrap_setuid = stat(bwrap, &bst) == 0 && (bst.st_mode & S_ISUID);
            /* the child opens it without following a symlink: the real path */
            char real[PATH_MAX];
            if (!realpath(spec->workspace_dir, real))
                rc = ocisbx_fail(OCISBX_EINVAL, "runner: workspace directory %s: %s", spec->workspace_dir,
                                 strerror(errno));
            else if (!(p->host_ws = ocisbx_strdup(real)))
                rc = ocisbx_fail_nomem();
        }
    }
    if (!rc && (spec->memory_limit_bytes || spec->max_processes || spec->max_file_bytes) && !spec->isolate)
        rc = ocisbx_fail(OCISBX_EUNSUPPORTED, "runner: resource limits need isolation");
    if (!rc && spec->max_processes < 0)
        rc = ocisbx_fail(OCISBX_EINVAL, "runner: max_processes must not be negative");
    p->mem_limit = spec->memory_limit_bytes;
    p->max_procs = spec->max_processes;
    p->max_file = spec->max_file_bytes;
    if (!rc)
        rc = check_cwd(spec, &cwd, &p->host_cwd);
    if (!rc)
        rc = build_envp(p, spec);
    if (!rc && spec->isolate) {
        rc = build_bwrap_argv(p, bwrap, spec, cwd);
        if (!rc && !(p->exe = ocisbx_strdup(bwrap)))
            rc = ocisbx_fail_nomem();
    } else if (!rc) {
        p->argv = calloc(4, sizeof *p->argv);
        if (p->argv) {
            p->argv[0] = ocisbx_strdup("sh");
            p->argv[1] = ocisbx_strdup("-c");
            p->argv[2] = ocisbx_strdup(spec->shell_command);
        }
        p->exe = ocisbx_strdup("/bin/sh");
        if (!p->argv || !p->argv[0] || !p->argv[1] || !p->argv[2] || !p->exe)
            rc = ocisbx_fail_nomem();
    }
    if (rc) {
        proc_release(p);
        return rc;
    }

    /* Registered before the fork so ocisbx_proc_kill_all never misses it. */
    pthread_mutex_lock(&g_live_mu);
    p->next = g_live;
    if (g_live)
        g_live->prev = p;
    g_live = p;
    pthread_mutex_unlock(&g_live_mu);

    pid_t pid = 0;
    int err = pthread_create(&p->thread, NULL, proc_thread, p);
    if (err) {
        rc = ocisbx_fail(OCISBX_EIO, "runner: cannot create a thread: %s", strerror(err));
    } else {
        p->thread_started = true;
        pthread_mutex_lock(&p->mu);
        while (!p->started)
            pthread_cond_wait(&p->cv, &p->mu);
        rc = p->start_rc;
        pid = p->pid;
        pthread_mutex_unlock(&p->mu);
        if (rc) {
            pthread_join(p->thread, NULL);
            p->thread_started = false;
            ocisbx_error_restore(p->start_err);
            p->start_err = NULL;
        }
    }
    if (rc) {
        pthread_mutex_lock(&g_live_mu);
        if (p->prev)
            p->prev->next = p->next;
        else
            g_live = p->next;
        if (p->next)
            p->next->prev = p->prev;
        pthread_mutex_unlock(&g_live_mu);
        proc_release(p);
        return rc;
    }
    ocisbx_log(OCISBX_LOG_DEBUG, "runner: started pid %d (%s)", (int)pid, p->isolate ? "bubblewrap" : "unisolated");
    *out = p;
    return 0;
}

int ocisbx_proc_signal(ocisbx_proc *p, int sig)
{
    if (!p || sig < 0 || sig >= NSIG)
        return ocisbx_fail(OCISBX_EINVAL, "runner: bad process or signal %d", sig);
    pthread_mutex_lock(&p->mu);
    if (p->pid > 0 && sig != 0 && sig != SIGSTOP && sig != SIGCONT && sig != SIGTSTP && sig != SIGCHLD &&
        p->sent_signal != SIGKILL)
        p->sent_signal = sig; /* so a 128+N exit reads as this kill */
    signal_tree_locked(p, sig);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

int ocisbx_proc_terminate(ocisbx_proc *p, int grace_ms)
{
    if (!p)
        return ocisbx_fail(OCISBX_EINVAL, "runner: NULL process");
    pthread_mutex_lock(&p->mu);
    terminate_locked(p, grace_ms);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

int ocisbx_proc_wait(ocisbx_proc *p, int64_t timeout_ms)
{
    if (!p)
        return ocisbx_fail(OCISBX_EINVAL, "runner: NULL process");
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (timeout_ms > 0) {
        until.tv_sec += (time_t)(timeout_ms / 1000);
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&p->mu);
    while (!p->finished && timeout_ms != 0) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&p->cv, &p->mu);
        } else if (pthread_cond_timedwait(&p->cv, &p->mu, &until) == ETIMEDOUT) {
            break;
        }
    }
    bool done = p->finished;
    pthread_mutex_unlock(&p->mu);
    if (!done)
        return ocisbx_fail(OCISBX_ETIMEOUT, "runner: command still running after %lld ms", (long long)timeout_ms);
    return 0;
}

bool ocisbx_proc_finished(ocisbx_proc *p)
{
    if (!p)
        return true;
    pthread_mutex_lock(&p->mu);
    bool f = p->finished;
    pthread_mutex_unlock(&p->mu);
    return f;
}

int ocisbx_proc_pid(const ocisbx_proc *p)
{
    if (!p)
        return 0;
    ocisbx_proc *mp = (ocisbx_proc *)(uintptr_t)p; /* locking does not change what it reads */
    pthread_mutex_lock(&mp->mu);
    int pid = (int)mp->pid;
    pthread_mutex_unlock(&mp->mu);
    return pid;
}

void ocisbx_proc_free(ocisbx_proc *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    if (!p->finished)
        terminate_locked(p, 0);
    pthread_mutex_unlock(&p->mu);
    if (p->thread_started)
        pthread_join(p->thread, NULL);
    pthread_mutex_lock(&g_live_mu);
    if (p->prev)
        p->prev->next = p->next;
    else
        g_live = p->next;
    if (p->next)
        p->next->prev = p->prev;
    pthread_mutex_unlock(&g_live_mu);
    proc_release(p);
}

void ocisbx_proc_kill_all(void)
{
    pthread_mutex_lock(&g_live_mu);
    for (ocisbx_proc *p = g_live; p; p = p->next) {
        pthread_mutex_lock(&p->mu);
        if (!p->finished)
            terminate_locked(p, 0);
        pthread_mutex_unlock(&p->mu);
    }
    pthread_mutex_unlock(&g_live_mu);
}

/* ---- the isolation check ------------------------------------------------------- */

typedef struct probe {
    char err[256];
    size_t len;
    int code;
} probe;

static void probe_output(int stream, const char *data, size_t len, void *ud)
{
    probe *pr = ud;
    if (stream != 2)
        return;
    size_t room = sizeof pr->err - 1 - pr->len;
    if (len > room)
        len = room;
    memcpy(pr->err + pr->len, data, len);
    pr->len += len;
    pr->err[pr->len] = '\0';
}

static void probe_exit(int code, int sig, bool timed_out, void *ud)
{
    (void)sig;
    (void)timed_out;
    ((probe *)ud)->code = code;
}

static pthread_mutex_t g_check_mu = PTHREAD_MUTEX_INITIALIZER;
static bool g_checked;
static int g_check_rc;
static char g_check_why[512];

static int run_check(void)
{
    char dir[] = "/tmp/ocisbx-bwrap-check-XXXXXX";
    if (!mkdtemp(dir)) {
        snprintf(g_check_why, sizeof g_check_why, "cannot create a directory under /tmp: %s", strerror(errno));
        return OCISBX_EIO;
    }
    if (geteuid() == 0 && chown(dir, OCISBX_PROC_NOBODY_UID, OCISBX_PROC_NOBODY_GID) != 0) {
        snprintf(g_check_why, sizeof g_check_why, "cannot give %s to uid %d: %s", dir, OCISBX_PROC_NOBODY_UID,
                 strerror(errno));
        rmdir(dir);
        return OCISBX_EIO;
    }
    probe pr = {{0}, 0, -2};
    ocisbx_proc_spec spec = {.workspace_dir = dir,
                             .shell_command = "exit 0",
                             .isolate = true,
                             .allow_network = false,
                             .timeout_ms = 30000};
    ocisbx_proc *p = NULL;
    int rc = ocisbx_proc_start(&spec, probe_output, probe_exit, &pr, &p);
    if (rc) {
        snprintf(g_check_why, sizeof g_check_why, "%s", ocisbx_error_message(ocisbx_error_last()));
    } else {
        ocisbx_proc_wait(p, -1);
        ocisbx_proc_free(p);
        if (pr.code != 0) {
            while (pr.len && (pr.err[pr.len - 1] == '\n' || pr.err[pr.len - 1] == '\r'))
                pr.err[--pr.len] = '\0';
            snprintf(g_check_why, sizeof g_check_why, "bubblewrap cannot create the sandbox (exit %d): %s", pr.code,
                     pr.len ? pr.err : "no message");
            rc = OCISBX_EUNSUPPORTED;
        }
    }
    rmdir(dir);
    return rc;
}

int ocisbx_proc_isolation_check(char *why, size_t why_len)
{
    pthread_mutex_lock(&g_check_mu);
    if (!g_checked) {
        g_check_rc = run_check();
        g_checked = true;
    }
    int rc = g_check_rc;
    if (why && why_len)
        snprintf(why, why_len, "%s", rc ? g_check_why : "");
    pthread_mutex_unlock(&g_check_mu);
    if (rc)
        return ocisbx_fail(rc, "isolation unavailable: %s", g_check_why);
    return 0;
}
