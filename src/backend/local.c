/* The local directory backend: run through the process runner (src/sys/proc.h),
 * files through the confined walk (src/sys/walk.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/backend_int.h"
#include "backend/local_job.h"
#include "ocisbx/util.h"
#include "sys/proc.h"
#include "sys/sleep.h"
#include "sys/walk.h"
#include "util/internal.h"

typedef struct local_impl {
    char *dir; /* absolute host path */
    int dir_fd;
    bool isolate, network;
} local_impl;

/* ---- run ---- */
typedef struct run_state {
    pthread_mutex_t mu;
    ocisbx_buf pending;     /* stdout not yet handed to the caller */
    ocisbx_buf pending_err; /* stderr not yet handed to the caller (with on_stderr) */
    ocisbx_buf err;         /* the first KiB of stderr */
    bool want_err;
    int exit_code;
    bool exited;
} run_state;

static void on_output(int stream, const char *data, size_t len, void *ud)
{
    run_state *s = ud;
    pthread_mutex_lock(&s->mu);
    if (stream == 1)
        (void)ocisbx_buf_append(&s->pending, data, len);
    else {
        if (s->want_err)
            (void)ocisbx_buf_append(&s->pending_err, data, len);
        if (s->err.len < 1024)
            (void)ocisbx_buf_append(&s->err, data, len < 1024 - s->err.len ? len : 1024 - s->err.len);
    }
    pthread_mutex_unlock(&s->mu);
}

static void on_exit_cb(int exit_code, int term_signal, bool timed_out, void *ud)
{
    (void)term_signal;
    (void)timed_out;
    run_state *s = ud;
    pthread_mutex_lock(&s->mu);
    s->exit_code = exit_code;
    s->exited = true;
    pthread_mutex_unlock(&s->mu);
}

/* Hands pending stdout (and stderr) to the caller on the caller's thread. */
static int drain(run_state *s, const ocisbx_run_req *req)
{
    pthread_mutex_lock(&s->mu);
    ocisbx_buf chunk = s->pending, echunk = s->pending_err;
    ocisbx_buf_init(&s->pending);
    ocisbx_buf_init(&s->pending_err);
    pthread_mutex_unlock(&s->mu);
    int stop = 0;
    if (chunk.len && req->on_stdout)
        stop = req->on_stdout(chunk.data, chunk.len, req->user_data);
    if (!stop && echunk.len && req->on_stderr)
        stop = req->on_stderr(echunk.data, echunk.len, req->user_data);
    ocisbx_buf_free(&chunk);
    ocisbx_buf_free(&echunk);
    return stop;
}

static void free_envp(char **envp)
{
    for (size_t j = 0; envp && envp[j]; j++)
        ocisbx_free_secret(envp[j]);
    free(envp);
}

/* The environment: later names win. NULL-terminated. */
static int build_envp(const ocisbx_run_req *req, char ***out)
{
    size_t n = 0;
    for (int k = 0; k < 2; k++)
        n += req->env[k] ? req->env[k]->n : 0;
    char **envp = calloc(n + 1, sizeof *envp);
    if (!envp)
        return ocisbx_fail_nomem();
    size_t m = 0;
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++) {
        for (size_t i = 0; req->env[k] && i < req->env[k]->n; i++) {
            const ocisbx_backend_env *e = &req->env[k]->v[i];
            size_t nl = strlen(e->name);
            for (size_t j = 0; j < m; j++)
                if (strncmp(envp[j], e->name, nl) == 0 && envp[j][nl] == '=') {
                    ocisbx_free_secret(envp[j]);
                    envp[j] = envp[--m];
                    break;
                }
            envp[m] = ocisbx_asprintf("%s=%s", e->name, e->value);
            if (!envp[m]) {
                rc = ocisbx_fail_nomem();
                break;
            }
            m++;
        }
    }
    if (rc) {
        free_envp(envp);
        return rc;
    }
    *out = envp;
    return 0;
}

static int start_proc(local_impl *li, const ocisbx_run_req *req, bool detach, ocisbx_proc_output_fn of,
                      ocisbx_proc_exit_fn ef, void *ud, ocisbx_proc **p)
{
    char **envp = NULL;
    int rc = build_envp(req, &envp);
    if (rc)
        return rc;
    ocisbx_buf text = OCISBX_BUF_INIT;
    rc = ocisbx_run_req_text(req, &text);
    if (!rc) {
        ocisbx_proc_spec spec = {0};
        spec.workspace_dir = li->dir;
        spec.shell_command = text.data;
        spec.envp = (const char *const *)envp;
        spec.isolate = li->isolate;
        spec.allow_network = li->network;
        spec.detach = detach;
        rc = ocisbx_proc_start(&spec, of, ef, ud, p);
    }
    ocisbx_buf_free(&text);
    free_envp(envp);
    return rc;
}

static int local_run(ocisbx_backend *b, const ocisbx_run_req *req, ocisbx_run_res *res)
{
    local_impl *li = b->impl;
    int rc = 0;
    run_state s;
    memset(&s, 0, sizeof s);
    s.want_err = req->on_stderr != NULL;
    pthread_mutex_init(&s.mu, NULL);
    ocisbx_proc *p = NULL;
    rc = start_proc(li, req, false, on_output, on_exit_cb, &s, &p);
    if (!rc) {
        for (;;) {
            int w = ocisbx_proc_wait(p, 50);
            if (drain(&s, req)) {
                rc = OCISBX_ECANCELED;
                break;
            }
            if (w == 0)
                break;
            if (!req->uncancelable && ocisbx_backend_canceled(b)) {
                rc = ocisbx_fail(OCISBX_ECANCELED, "command canceled");
                break;
            }
            if (ocisbx_time_monotonic_ms() >= req->deadline_ms) {
                rc = ocisbx_fail(OCISBX_ETIMEOUT, "command still running at the client's deadline: killed");
                break;
            }
        }
        if (rc) {
            ocisbx_error_saved *sv = ocisbx_error_save();
            ocisbx_proc_terminate(p, 0);
            ocisbx_proc_wait(p, -1);
            ocisbx_error_restore(sv);
        } else {
            (void)drain(&s, req);
            res->has_exit = s.exit_code >= 0;
            res->exit_code = s.exit_code;
            if (s.err.len)
                res->stderr_text = ocisbx_strndup(s.err.data, s.err.len);
        }
        ocisbx_proc_free(p);
    }
    ocisbx_buf_free(&s.pending);
    ocisbx_buf_free(&s.pending_err);
    ocisbx_buf_free(&s.err);
    pthread_mutex_destroy(&s.mu);
    return rc;
}

/* ---- files ---- */
static int walk_code(int rc)
{
    ocisbx_walk_reason why = ocisbx_walk_last_reason();
    if (why == OCISBX_WALK_ISDIR)
        return ocisbx_fail(OCISBX_EISDIR, "%s", ocisbx_error_message(ocisbx_error_last()));
    return rc;
}

static int local_put(ocisbx_backend *b, const char *rel, const void *data, size_t len, const char *sha256_b64)
{
    local_impl *li = b->impl;
    char b64[OCISBX_SHA256_B64_LEN + 1];
    int rc = ocisbx_sha256_base64(data, len, b64);
    if (rc)
        return rc;
    if (sha256_b64 && strcmp(b64, sha256_b64) != 0)
        return ocisbx_fail(OCISBX_EINTEGRITY, "write: the part's SHA-256 is not the one given");
    if (!*rel)
        return ocisbx_fail(OCISBX_EISDIR, "write: /workspace is a directory");
    ocisbx_walk_root root = {li->dir_fd, NULL};
    const char *slash = strrchr(rel, '/');
    char *parent = slash ? ocisbx_strndup(rel, (size_t)(slash - rel)) : ocisbx_strdup("");
    const char *name = slash ? slash + 1 : rel;
    if (!parent)
        return ocisbx_fail_nomem();
    int dfd = -1;
    rc = ocisbx_walk_open_dir(&root, *parent ? parent : "/workspace", OCISBX_WALK_MKDIRS, &dfd);
    free(parent);
    if (rc)
        return walk_code(rc);
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
        close(dfd);
        return ocisbx_fail(OCISBX_EISDIR, "write: the target is a directory");
    }
    char rnd[13];
    ocisbx_random_id(rnd, 12);
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".ocisbx-tmp-%s", rnd);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = ocisbx_fail(OCISBX_EIO, "write: cannot create a temporary file: %s", strerror(errno));
        close(dfd);
        return rc;
    }
    (void)ocisbx_walk_adopt(&root, dfd, tmp);
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = ocisbx_fail(OCISBX_EIO, "write: %s", strerror(errno));
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (close(fd) != 0 && !rc)
        rc = ocisbx_fail(OCISBX_EIO, "write: close: %s", strerror(errno));
    if (!rc && renameat(dfd, tmp, dfd, name) != 0)
        rc = ocisbx_fail(errno == EISDIR ? OCISBX_EISDIR : OCISBX_EIO, "write: rename: %s", strerror(errno));
    if (rc)
        unlinkat(dfd, tmp, 0);
    close(dfd);
    return rc;
}

static int local_get(ocisbx_backend *b, const char *rel, ocisbx_write_fn write_fn, void *ud)
{
    local_impl *li = b->impl;
    ocisbx_walk_root root = {li->dir_fd, NULL};
    int fd = -1;
    int rc = ocisbx_walk_open_read(&root, *rel ? rel : "/workspace", &fd);
    if (rc)
        return walk_code(rc);
    char buf[65536];
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = ocisbx_fail(OCISBX_EIO, "read: %s", strerror(errno));
            break;
        }
        if (r == 0)
            break;
        if (write_fn(buf, (size_t)r, ud)) {
            rc = ocisbx_fail(OCISBX_ECANCELED, "read: canceled by the sink");
            break;
        }
    }
    close(fd);
    return rc;
}

/* A job runs detached (src/sys/proc.h): it outlives this process, and its
 * handle (local_job.h: its PID namespace, or its session without
 * isolation, with the start time of the process standing for it) lets any
 * process end it. */
static int local_spawn(ocisbx_backend *b, const ocisbx_run_req *req, const char *job_id, char **handle)
{
    (void)job_id;
    local_impl *li = b->impl;
    ocisbx_proc *p = NULL;
    int rc = start_proc(li, req, true, NULL, NULL, NULL, &p);
    if (rc)
        return rc;
    ocisbx_proc_wait(p, -1); /* the launcher exits as soon as the job runs */
    ocisbx_proc_job j;
    rc = ocisbx_proc_job_of(p, &j);
    ocisbx_proc_free(p);
    return rc ? rc : ocisbx_local_job_handle(&j, handle);
}

/* The handle beside the state carries a seal that only this user's key
 * makes (local_job.h), over this workspace's real path and the job id. */
static int local_seal_handle(ocisbx_backend *b, const char *job_id, const char *handle, char **text)
{
    local_impl *li = b->impl;
    return ocisbx_job_seal(li->dir, job_id, handle, text);
}

static int local_open_handle(ocisbx_backend *b, const char *job_id, const char *text, char **handle)
{
    local_impl *li = b->impl;
    return ocisbx_job_unseal(li->dir, job_id, text, handle);
}

/* Waits up to ms for the job to have no process left; true when it has none. */
static bool job_gone_within(const ocisbx_local_job *j, int64_t ms)
{
    int64_t end = ocisbx_time_monotonic_ms() + ms;
    while (ocisbx_local_job_signal(j, 0) > 0) {
        if (ocisbx_time_monotonic_ms() >= end)
            return false;
        (void)ocisbx_sys_sleep_ms(50, NULL, NULL);
    }
    return true;
}

/* TERM to every process of the job, KILL after the grace; each signal only
 * after the job's identity is checked again (local_job.c). */
static int local_kill_spawned(ocisbx_backend *b, const char *handle)
{
    ocisbx_local_job j;
    int rc = ocisbx_local_job_parse(handle, &j);
    if (rc)
        return rc;
    if (ocisbx_local_job_signal(&j, SIGTERM) == 0)
        return 0; /* already ended */
    (void)ocisbx_local_job_signal(&j, SIGCONT);
    if (job_gone_within(&j, (int64_t)b->kill_grace_s * 1000))
        return 0;
    (void)ocisbx_local_job_signal(&j, SIGKILL);
    if (!job_gone_within(&j, 5000))
        return ocisbx_fail(OCISBX_EIO, "local job: its processes did not end after KILL");
    return 0;
}

static void local_free(ocisbx_backend *b)
{
    local_impl *li = b->impl;
    if (!li)
        return;
    if (li->dir_fd >= 0)
        close(li->dir_fd);
    free(li->dir);
    free(li);
    b->impl = NULL;
}

static const ocisbx_backend_vt local_vt = {
    "local", local_run, local_put, local_get, local_spawn, local_kill_spawned, NULL, NULL, local_free,
    NULL, /* parts one by one: no network to overlap */
    local_seal_handle, local_open_handle,
};

int ocisbx_backend_local_open(const char *dir, const ocisbx_backend_options *o, ocisbx_backend **out)
{
    char *abs = realpath(dir, NULL);
    if (!abs)
        return ocisbx_fail(errno == ENOENT ? OCISBX_ENOTFOUND : OCISBX_EIO, "local backend: %s", strerror(errno));
    struct stat st;
    if (stat(abs, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(abs);
        return ocisbx_fail(OCISBX_EINVAL, "local backend: not a directory");
    }
    bool isolate = !o || o->isolate != 0;
    /* As root, a directory of root's runs as root in a user namespace with
     * the runner's host-root rules (src/sys/proc.h); refused only where
     * user namespaces are unavailable, saying what to do. */
    char why[700];
    if (isolate && geteuid() == 0 && st.st_uid == 0 && ocisbx_proc_root_workspace_check(why, sizeof why) != 0) {
        free(abs);
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "local backend: %s", why);
    }
    ocisbx_backend *b = calloc(1, sizeof *b);
    local_impl *li = calloc(1, sizeof *li);
    if (!b || !li) {
        free(b);
        free(li);
        free(abs);
        return ocisbx_fail_nomem();
    }
    li->dir = abs;
    li->isolate = isolate;
    li->network = o && o->network == 1;
    li->dir_fd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    b->impl = li;
    int rc = ocisbx_backend_init_common(b, &local_vt, o);
    if (!rc && li->dir_fd < 0)
        rc = ocisbx_fail(OCISBX_EIO, "local backend: open: %s", strerror(errno));
    if (!rc) {
        /* The state directory belongs to the workspace's owner, whoever
         * runs first: a host-shell run as root must not leave a root-owned
         * one that isolated runs (as the owner) cannot write. */
        ocisbx_walk_root root = {li->dir_fd, NULL};
        if (mkdirat(li->dir_fd, ".ocisbx", 0755) == 0 || errno == EEXIST)
            (void)ocisbx_walk_adopt(&root, li->dir_fd, ".ocisbx");
    }
    if (!rc) {
        b->label = ocisbx_asprintf("local:%s", abs);
        b->root = ocisbx_strdup(isolate ? "/workspace" : abs);
        b->host_shell = !isolate;
        if (!b->label || !b->root)
            rc = ocisbx_fail_nomem();
    }
    if (rc) {
        b->closed = true;
        ocisbx_backend_free(b);
        return rc;
    }
    *out = b;
    return 0;
}
