/* The process runner (see proc.h): the public calls. The spec is checked
 * and copied here; proc_thread.c runs it, proc_child.c is its child,
 * proc_tree.c signals its tree, bwrap_args.c builds bubblewrap's command
 * line and seccomp.c its filter. */
/* CLONE_NEWUSER */
#define _GNU_SOURCE
#include "sys/proc.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/bwrap_args.h"
#include "sys/proc_int.h"

#define DEFAULT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static pthread_mutex_t g_live_mu = PTHREAD_MUTEX_INITIALIZER;
static ocisbx_proc *g_live;

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

/* ---- the spec: environment and cwd -------------------------------------------- */

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
    size_t n = 0;
    while (spec->envp && spec->envp[n])
        n++;
    char **e = calloc(n + 3, sizeof *e);
    if (!e)
        return ocisbx_fail_nomem();
    p->envp = e;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(spec->envp[i], '=');
        if (!eq || eq == spec->envp[i])
            return ocisbx_fail(OCISBX_EINVAL, "environment entry %zu is not NAME=VALUE", i);
        if (!(e[k++] = ocisbx_strdup(spec->envp[i])))
            return ocisbx_fail_nomem();
    }
    if (!env_has(spec->envp, "PATH") && !(e[k++] = ocisbx_strdup(DEFAULT_PATH)))
        return ocisbx_fail_nomem();
    if (!env_has(spec->envp, "HOME")) {
        e[k] = spec->isolate ? ocisbx_strdup("HOME=" OCISBX_PROC_SANDBOX_WS)
                             : ocisbx_asprintf("HOME=%s", spec->workspace_dir);
        if (!e[k])
            return ocisbx_fail_nomem();
    }
    return 0;
}

/* cwd must be /workspace or below it, without "..": it names a place in
 * the sandbox, and unisolated it is mapped into the workspace directory. */
static int check_cwd(const ocisbx_proc_spec *spec, const char **cwd_out, char **host_out)
{
    const char *cwd = spec->cwd && *spec->cwd ? spec->cwd : OCISBX_PROC_SANDBOX_WS;
    size_t wl = strlen(OCISBX_PROC_SANDBOX_WS);
    if (strncmp(cwd, OCISBX_PROC_SANDBOX_WS, wl) != 0 || (cwd[wl] != '\0' && cwd[wl] != '/'))
        return ocisbx_fail(OCISBX_EINVAL, "cwd %s is not under " OCISBX_PROC_SANDBOX_WS, cwd);
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

/* ---- as root: the user namespace check ------------------------------------------ */

static pthread_mutex_t g_userns_mu = PTHREAD_MUTEX_INITIALIZER;
static bool g_userns_checked;
static int g_userns_errno;

/* Whether this process can create a user namespace (what bubblewrap does
 * for a root-owned workspace), tried once in a child; 0 or the errno. */
static int userns_errno(void)
{
    pthread_mutex_lock(&g_userns_mu);
    if (!g_userns_checked) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : (errno > 0 && errno < 255 ? errno : 255));
        int status = 0;
        if (pid < 0)
            g_userns_errno = errno;
        else {
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            g_userns_errno = WIFEXITED(status) ? WEXITSTATUS(status) : EPERM;
        }
        g_userns_checked = true;
    }
    int e = g_userns_errno;
    pthread_mutex_unlock(&g_userns_mu);
    return e;
}

int ocisbx_proc_root_workspace_check(char *why, size_t why_len)
{
    int e = geteuid() == 0 ? userns_errno() : 0;
    if (!e) {
        if (why && why_len)
            why[0] = '\0';
        return 0;
    }
    char msg[640];
    snprintf(msg, sizeof msg,
             "as root, a workspace that belongs to root runs its commands as root inside a user namespace, "
             "and this system cannot create one (%s). Enable user namespaces (sysctl user.max_user_namespaces "
             "above 0; in a container, a seccomp profile that allows them), or give the directory to an "
             "unprivileged user (chown; its commands then run as that user), or run without isolation",
             strerror(e));
    if (why && why_len)
        snprintf(why, why_len, "%s", msg);
    return ocisbx_fail(OCISBX_EUNSUPPORTED, "runner: %s", msg);
}

/* ---- as root: the /etc overlay ---------------------------------------------------------- */

static pthread_mutex_t g_ovl_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_ovl_state; /* 0 unknown, 1 usable, -1 not */

/* The child's test: the stage's tmpfs, a whiteout, the overlay over /etc. */
static void overlay_probe_child(void)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("ocisbx-probe", OCISBX_PROC_STAGE_DIR, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0 ||
        mkdir(OCISBX_PROC_STAGE_WO, 0755) != 0 || mkdir(OCISBX_PROC_STAGE_ETC, 0755) != 0 ||
        mknod(OCISBX_PROC_STAGE_WO "/ocisbx-probe", S_IFCHR, 0) != 0 ||
        mount("ocisbx-etc", OCISBX_PROC_STAGE_ETC, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV,
              OCISBX_PROC_OVERLAY_OPTS) != 0)
        _exit(1);
    _exit(0);
}

/* Whether this system mounts the /etc view as an overlay (tried once, in a
 * child); else bubblewrap binds it entry by entry (slower to start). */
static bool overlay_usable(void)
{
    pthread_mutex_lock(&g_ovl_mu);
    if (!g_ovl_state) {
        pid_t pid = fork();
        if (pid == 0)
            overlay_probe_child();
        int status = 1 << 8;
        while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        g_ovl_state = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 1 : -1;
        if (g_ovl_state < 0)
            ocisbx_log(OCISBX_LOG_DEBUG, "runner: no overlay for the /etc view here: bubblewrap binds it");
    }
    bool ok = g_ovl_state > 0;
    pthread_mutex_unlock(&g_ovl_mu);
    return ok;
}

/* Whether a is b or inside it (paths relative to /etc). */
static bool within(const char *a, const char *b)
{
    size_t n = strlen(b);
    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

/* The overlay's whiteouts and the binds on top of it, for the child. */
static int prepare_etc_overlay(ocisbx_proc *p)
{
    char **hidden = NULL, **mounts = NULL;
    int rc = ocisbx_bwrap_scan_etc_hidden("/etc", &hidden);
    if (!rc)
        rc = ocisbx_bwrap_etc_submounts("/proc/self/mountinfo", &mounts);
    size_t nh = 0, nm = 0;
    while (hidden && hidden[nh])
        nh++;
    while (mounts && mounts[nm])
        nm++;
    if (!rc && (!(p->wo_paths = calloc(nh + 1, sizeof *p->wo_paths)) ||
                !(p->etc_binds = calloc(2 * nm + 1, sizeof *p->etc_binds))))
        rc = ocisbx_fail_nomem();
    for (size_t i = 0; !rc && i < nh; i++)
        if (!(p->wo_paths[i] = ocisbx_asprintf("%s/%s", OCISBX_PROC_STAGE_WO, hidden[i])))
            rc = ocisbx_fail_nomem();
    size_t k = 0;
    for (size_t i = 0; !rc && i < nm; i++) {
        bool touches = false; /* a mount on or above a hidden path would show it again */
        for (size_t h = 0; h < nh && !touches; h++)
            touches = within(mounts[i], hidden[h]) || within(hidden[h], mounts[i]);
        if (touches)
            continue;
        p->etc_binds[k] = ocisbx_asprintf("/etc/%s", mounts[i]);
        p->etc_binds[k + 1] = ocisbx_asprintf("%s/%s", OCISBX_PROC_STAGE_ETC, mounts[i]);
        if (!p->etc_binds[k] || !p->etc_binds[k + 1])
            rc = ocisbx_fail_nomem();
        k += 2;
    }
    ocisbx_strv_free(hidden, false);
    ocisbx_strv_free(mounts, false);
    if (!rc)
        p->etc_overlay = true;
    return rc;
}

/* ---- start ------------------------------------------------------------------------- */

static void proc_release(ocisbx_proc *p)
{
    free(p->host_cwd);
    ocisbx_strv_free(p->argv, false);
    ocisbx_strv_free(p->envp, true);
    free(p->exe);
    free(p->host_ws);
    ocisbx_strv_free(p->wo_paths, false);
    ocisbx_strv_free(p->etc_binds, false);
    free(p->start_err);
    if (p->ns_fd >= 0)
        close(p->ns_fd);
    if (p->wake_w >= 0)
        close(p->wake_w);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

static ocisbx_proc *proc_new(const ocisbx_proc_spec *spec, ocisbx_proc_output_fn on_output,
                             ocisbx_proc_exit_fn on_exit, void *user_data)
{
    ocisbx_proc *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
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
    p->mem_limit = spec->memory_limit_bytes;
    p->max_procs = spec->max_processes;
    p->max_file = spec->max_file_bytes;
    p->on_output = on_output;
    p->on_exit = on_exit;
    p->user_data = user_data;
    return p;
}

/* As root, isolated: the workspace is staged; its owner runs the command
 * (drop), or, when that is root, uid 0 of a user namespace mapped to root
 * with the host-root rules (see proc.h). */
static int prepare_root(ocisbx_proc *p, const ocisbx_proc_spec *spec, const struct stat *st, const char *bwrap)
{
    if (st->st_uid == 0) {
        int rc = ocisbx_proc_root_workspace_check(NULL, 0);
        if (rc)
            return rc;
        p->host_root = true;
    } else {
        p->drop = true;
    }
    p->stage = true;
    p->run_uid = st->st_uid;
    p->run_gid = st->st_gid;
    p->ws_dev = st->st_dev;
    p->ws_ino = st->st_ino;
    struct statvfs vfs;
    if (statvfs(spec->workspace_dir, &vfs) == 0)
        p->ws_mount_flags = ((vfs.f_flag & ST_RDONLY) ? MS_RDONLY : 0) | ((vfs.f_flag & ST_NOEXEC) ? MS_NOEXEC : 0);
    struct stat bst;
    p->bwrap_setuid = stat(bwrap, &bst) == 0 && (bst.st_mode & S_ISUID);
    /* the child opens it without following a symlink: the real path */
    char real[PATH_MAX];
    if (!realpath(spec->workspace_dir, real))
        return ocisbx_fail(OCISBX_EINVAL, "runner: workspace directory %s: %s", spec->workspace_dir, strerror(errno));
    return (p->host_ws = ocisbx_strdup(real)) ? 0 : ocisbx_fail_nomem();
}

/* bubblewrap's command line and the filter. */
static int prepare_bwrap(ocisbx_proc *p, const ocisbx_proc_spec *spec, const char *bwrap, const char *cwd)
{
    ocisbx_bw_list dirs = {0}, etc = {0};
    int rc = ocisbx_bwrap_scan_host_dirs("", &dirs);
    if (!rc && p->host_root)
        rc = overlay_usable() ? prepare_etc_overlay(p) : ocisbx_bwrap_scan_etc("/etc", &etc);
    const char *ws = !p->stage ? spec->workspace_dir : p->etc_overlay ? OCISBX_PROC_STAGE_WS : OCISBX_PROC_STAGE_DIR;
    ocisbx_bwrap_opts o = {.bwrap = bwrap,
                           .workspace_src = ws,
                           .cwd = cwd,
                           .shell_command = spec->shell_command,
                           .allow_network = spec->allow_network,
                           .detach = spec->detach,
                           .host_root = p->host_root,
                           .host_dirs = &dirs,
                           .etc_view = p->host_root && !p->etc_overlay ? &etc : NULL,
                           .etc_src = p->etc_overlay ? OCISBX_PROC_STAGE_ETC : NULL,
                           .info_fd = "3",
                           .seccomp_fd = OCISBX_PROC_SECCOMP_FD_STR};
    if (!rc)
        rc = ocisbx_bwrap_argv(&o, &p->argv);
    ocisbx_bw_list_free(&dirs);
    ocisbx_bw_list_free(&etc);
    if (!rc && !(p->exe = ocisbx_strdup(bwrap)))
        rc = ocisbx_fail_nomem();
    p->filter_len = ocisbx_seccomp_build(p->host_root, p->filter, OCISBX_SECCOMP_MAX_INSNS);
    if (!rc && p->filter_len == 0)
        rc = ocisbx_fail(OCISBX_EIO, "runner: the seccomp filter does not fit");
    return rc;
}

static int prepare_sh(ocisbx_proc *p, const ocisbx_proc_spec *spec)
{
    p->argv = calloc(4, sizeof *p->argv);
    if (p->argv) {
        p->argv[0] = ocisbx_strdup("sh");
        p->argv[1] = ocisbx_strdup("-c");
        p->argv[2] = ocisbx_strdup(spec->shell_command);
    }
    p->exe = ocisbx_strdup("/bin/sh");
    if (!p->argv || !p->argv[0] || !p->argv[1] || !p->argv[2] || !p->exe)
        return ocisbx_fail_nomem();
    return 0;
}

static int prepare(ocisbx_proc *p, const ocisbx_proc_spec *spec, const struct stat *st, const char *bwrap)
{
    int rc = 0;
    if (spec->isolate && geteuid() == 0)
        rc = prepare_root(p, spec, st, bwrap);
    if (!rc && (spec->memory_limit_bytes || spec->max_processes || spec->max_file_bytes) && !spec->isolate)
        rc = ocisbx_fail(OCISBX_EUNSUPPORTED, "runner: resource limits need isolation");
    if (!rc && spec->max_processes < 0)
        rc = ocisbx_fail(OCISBX_EINVAL, "runner: max_processes must not be negative");
    const char *cwd = NULL;
    if (!rc)
        rc = check_cwd(spec, &cwd, &p->host_cwd);
    if (!rc)
        rc = build_envp(p, spec);
    if (!rc)
        rc = spec->isolate ? prepare_bwrap(p, spec, bwrap, cwd) : prepare_sh(p, spec);
    return rc;
}

static void live_remove(ocisbx_proc *p)
{
    pthread_mutex_lock(&g_live_mu);
    if (p->prev)
        p->prev->next = p->next;
    else if (g_live == p)
        g_live = p->next;
    if (p->next)
        p->next->prev = p->prev;
    p->next = p->prev = NULL;
    pthread_mutex_unlock(&g_live_mu);
}

/* Registers p (before the fork, so ocisbx_proc_kill_all never misses it),
 * starts its thread and waits for the spawn's outcome. */
static int launch(ocisbx_proc *p)
{
    pthread_mutex_lock(&g_live_mu);
    p->next = g_live;
    if (g_live)
        g_live->prev = p;
    g_live = p;
    pthread_mutex_unlock(&g_live_mu);
    int err = pthread_create(&p->thread, NULL, ocisbx_proc_thread, p);
    int rc = 0;
    if (err) {
        rc = ocisbx_fail(OCISBX_EIO, "runner: cannot create a thread: %s", strerror(err));
    } else {
        p->thread_started = true;
        pthread_mutex_lock(&p->mu);
        while (!p->started)
            pthread_cond_wait(&p->cv, &p->mu);
        rc = p->start_rc;
        pthread_mutex_unlock(&p->mu);
        if (rc) {
            pthread_join(p->thread, NULL);
            p->thread_started = false;
            ocisbx_error_restore(p->start_err);
            p->start_err = NULL;
        }
    }
    if (rc)
        live_remove(p);
    return rc;
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
    char bwrap[PATH_MAX] = "";
    if (spec->isolate && find_on_path("bwrap", bwrap, sizeof bwrap) != 0)
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "runner: bubblewrap (bwrap) not found on PATH");
    ocisbx_proc *p = proc_new(spec, on_output, on_exit, user_data);
    if (!p)
        return ocisbx_fail_nomem();
    int rc = prepare(p, spec, &st, bwrap);
    if (!rc)
        rc = launch(p);
    if (rc) {
        proc_release(p);
        return rc;
    }
    ocisbx_log(OCISBX_LOG_DEBUG, "runner: started pid %d (%s)", ocisbx_proc_pid(p),
               !p->isolate    ? "unisolated"
               : p->host_root ? "bubblewrap, host root"
                              : "bubblewrap");
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
    ocisbx_proc_signal_tree_locked(p, sig);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

int ocisbx_proc_terminate(ocisbx_proc *p, int grace_ms)
{
    if (!p)
        return ocisbx_fail(OCISBX_EINVAL, "runner: NULL process");
    pthread_mutex_lock(&p->mu);
    ocisbx_proc_terminate_locked(p, grace_ms);
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
        ocisbx_proc_terminate_locked(p, 0);
    pthread_mutex_unlock(&p->mu);
    if (p->thread_started)
        pthread_join(p->thread, NULL);
    live_remove(p);
    proc_release(p);
}

void ocisbx_proc_kill_all(void)
{
    pthread_mutex_lock(&g_live_mu);
    for (ocisbx_proc *p = g_live; p; p = p->next) {
        pthread_mutex_lock(&p->mu);
        if (!p->finished)
            ocisbx_proc_terminate_locked(p, 0);
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
