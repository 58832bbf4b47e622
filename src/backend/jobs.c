/* Background jobs: a spawned run whose state lives in
 * /workspace/.ocisbx/jobs/<id>/ (docs/backend.md, "Background jobs"); the
 * scripts are scripts/job-*.sh. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "backend/scripts.h"
#include "ocisbx/util.h"
#include "util/internal.h"

#define JOB_EXIT_NONE 3     /* the scripts' "no such job" (or no such cwd) */
#define JOB_HANDLE_MAX 1024 /* bytes of the handle file read back (a sealed handle is far shorter) */

struct ocisbx_job_status {
    bool running, has_exit, timed_out, killed;
    int exit_code;
    int64_t duration_ms;
    uint64_t output_bytes;
};

void ocisbx_job_status_free(ocisbx_job_status *s)
{
    free(s);
}
int ocisbx_job_status_running(const ocisbx_job_status *s)
{
    return s && s->running;
}
int ocisbx_job_status_has_exit_code(const ocisbx_job_status *s, int *out)
{
    if (!s || !s->has_exit)
        return 0;
    if (out)
        *out = s->exit_code;
    return 1;
}
int ocisbx_job_status_timed_out(const ocisbx_job_status *s)
{
    return s && s->timed_out;
}
int ocisbx_job_status_killed(const ocisbx_job_status *s)
{
    return s && s->killed;
}
int64_t ocisbx_job_status_duration_ms(const ocisbx_job_status *s)
{
    return s ? s->duration_ms : 0;
}
uint64_t ocisbx_job_status_output_bytes(const ocisbx_job_status *s)
{
    return s ? s->output_bytes : 0;
}

static int collect(const char *data, size_t len, void *ud)
{
    return ocisbx_buf_append(ud, data, len) != 0;
}

static int collect_all(const void *data, size_t len, void *ud)
{
    return ocisbx_buf_append(ud, data, len) != 0;
}

/* The handle file, at most JOB_HANDLE_MAX bytes (more: ECANCELED). */
static int collect_handle(const void *data, size_t len, void *ud)
{
    ocisbx_buf *h = ud;
    return len > JOB_HANDLE_MAX - h->len || ocisbx_buf_append(h, data, len) != 0;
}

static int check_job_id(const char *id)
{
    if (!id || strncmp(id, "job-", 4) != 0 || strlen(id) != 20)
        return ocisbx_fail(OCISBX_EINVAL, "not a job id");
    for (const char *p = id + 4; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return ocisbx_fail(OCISBX_EINVAL, "not a job id");
    return 0;
}

static int remember_job(ocisbx_backend *b, const char *id, char **handle)
{
    struct own_job *j = realloc(b->jobs, (b->n_jobs + 1) * sizeof *j);
    if (!j)
        return ocisbx_fail_nomem();
    b->jobs = j;
    j[b->n_jobs].job_id = ocisbx_strdup(id);
    if (!j[b->n_jobs].job_id)
        return ocisbx_fail_nomem();
    j[b->n_jobs].handle = *handle;
    *handle = NULL;
    b->n_jobs++;
    return 0;
}

/* The job script spawned, its handle written beside the state (so another
 * process can kill it). */
static int spawn_job(ocisbx_backend *b, const char *command, const char *id, const char *cwd,
                     const ocisbx_exec_options *o, char **handle)
{
    char secs[24], grace[16];
    int64_t s = (ocisbx_exec_options_timeout_(o) + 999) / 1000;
    snprintf(secs, sizeof secs, "%" PRId64, s);
    snprintf(grace, sizeof grace, "%d", b->kill_grace_s);
    const char *args[] = {command, b->root, id, *cwd ? cwd : ".", secs, grace};
    ocisbx_run_req req = {0};
    req.script = ocisbx_script_job_run;
    req.args = args;
    req.n_args = 6;
    req.env[0] = &b->env;
    req.env[1] = ocisbx_exec_options_env_(o);
    req.backstop_s = s + b->kill_grace_s + 2;
    int rc = b->vt->spawn(b, &req, id, handle);
    if (rc)
        return rc;
    char rel[64];
    snprintf(rel, sizeof rel, ".ocisbx/jobs/%s/handle", id);
    char *text = NULL;
    if (b->vt->seal_handle)
        rc = b->vt->seal_handle(b, id, *handle, &text);
    const char *t = text ? text : *handle;
    char b64[OCISBX_SHA256_B64_LEN + 1];
    if (!rc)
        rc = ocisbx_sha256_base64(t, strlen(t), b64);
    if (!rc)
        rc = b->vt->put_file(b, rel, t, strlen(t), b64);
    free(text);
    if (rc) {
        ocisbx_error_saved *sv = ocisbx_error_save();
        (void)b->vt->kill_spawned(b, *handle);
        ocisbx_error_restore(sv);
    }
    return rc;
}

int ocisbx_backend_job_start(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o, char **job_id)
{
    if (!job_id)
        return ocisbx_fail(OCISBX_EINVAL, "job start: NULL out");
    *job_id = NULL;
    if (!b || !command)
        return ocisbx_fail(OCISBX_EINVAL, "job start: NULL argument");
    if (b->closed)
        return ocisbx_fail(OCISBX_ECONFLICT, "job start: the backend is closed");
    char *cwd = NULL;
    int rc = ocisbx_backend_rel_path(ocisbx_exec_options_cwd_(o), &cwd);
    if (rc)
        return rc;
    char id[21] = "job-";
    rc = ocisbx_random_id(id + 4, 16);
    char *handle = NULL;
    int ex = 0;
    const char *args[] = {b->root, id, *cwd ? cwd : "."};
    if (!rc)
        rc = ocisbx_backend_run_sh(b, ocisbx_script_job_start, args, 3, 0, NULL, NULL, &ex);
    if (!rc && ex == JOB_EXIT_NONE)
        rc = ocisbx_fail(OCISBX_ENOTFOUND, "job start: the working directory does not exist");
    else if (!rc && ex != 0)
        rc = ocisbx_fail(OCISBX_EIO, "job start: cannot make the job's state directory (exit status %d)", ex);
    if (!rc)
        rc = spawn_job(b, command, id, cwd, o, &handle);
    if (!rc)
        rc = remember_job(b, id, &handle);
    if (!rc && !(*job_id = ocisbx_strdup(id)))
        rc = ocisbx_fail_nomem();
    free(handle);
    free(cwd);
    return rc;
}

/* job-status.sh with a wait: its own run, bounded by the wait. */
static int status_run(ocisbx_backend *b, const char *job_id, int64_t wait_ms, char **out, int *ex)
{
    char w[24];
    snprintf(w, sizeof w, "%" PRId64, wait_ms);
    const char *args[] = {b->root, job_id, w};
    ocisbx_run_req req = {0};
    ocisbx_run_res res = {0};
    ocisbx_buf o = OCISBX_BUF_INIT;
    req.script = ocisbx_script_job_status;
    req.args = args;
    req.n_args = 3;
    req.env[0] = &b->env;
    req.deadline_ms = ocisbx_time_monotonic_ms() + wait_ms + 120000;
    req.backstop_s = wait_ms / 1000 + 120;
    req.on_stdout = collect;
    req.user_data = &o;
    int rc = b->vt->run(b, &req, &res);
    if (rc == 0 && !res.has_exit)
        rc = ocisbx_fail(OCISBX_ESERVICE, "job status: the workspace script ended without an exit status");
    if (rc == 0) {
        *ex = res.exit_code;
        *out = o.data ? ocisbx_buf_detach(&o) : ocisbx_strdup("");
        if (!*out)
            rc = ocisbx_fail_nomem();
    }
    ocisbx_buf_free(&o);
    free(res.command_id);
    free(res.stderr_text);
    return rc;
}

static int read_status(ocisbx_backend *b, const char *job_id, int64_t wait_ms, ocisbx_job_status **out)
{
    char *o = NULL;
    int ex = 0;
    int rc = status_run(b, job_id, wait_ms, &o, &ex);
    if (rc)
        return rc;
    if (ex == JOB_EXIT_NONE) {
        free(o);
        return ocisbx_fail(OCISBX_ENOTFOUND, "job %s does not exist", job_id);
    }
    ocisbx_job_status *st = calloc(1, sizeof *st);
    int r = 0, to = 0, k = 0;
    char sx[16] = {0};
    long long dur = 0;
    unsigned long long bytes = 0;
    if (!st || ex != 0 || sscanf(o, "JOB %d %15s %d %d %lld %llu", &r, sx, &to, &k, &dur, &bytes) != 6) {
        free(o);
        free(st);
        return st ? ocisbx_fail(OCISBX_EIO, "job status: the workspace script failed (exit status %d)", ex)
                  : ocisbx_fail_nomem();
    }
    free(o);
    st->running = r != 0;
    st->timed_out = to != 0;
    st->killed = k != 0;
    st->has_exit = !st->running && !st->timed_out && !st->killed && strcmp(sx, "-") != 0;
    st->exit_code = st->has_exit ? atoi(sx) : 0;
    st->duration_ms = dur;
    st->output_bytes = bytes;
    *out = st;
    return 0;
}

int ocisbx_backend_job_status(ocisbx_backend *b, const char *job_id, ocisbx_job_status **out)
{
    return ocisbx_backend_job_wait(b, job_id, 0, out);
}

int ocisbx_backend_job_wait(ocisbx_backend *b, const char *job_id, int64_t wait_ms, ocisbx_job_status **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "job status: NULL out");
    *out = NULL;
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "job status: NULL backend");
    if (wait_ms < 0 || wait_ms > INT64_C(86400000))
        return ocisbx_fail(OCISBX_EINVAL, "job wait: wait_ms must be 0..86400000");
    int rc = check_job_id(job_id);
    return rc ? rc : read_status(b, job_id, wait_ms, out);
}

int ocisbx_backend_job_read_(ocisbx_backend *b, const char *job_id, int64_t offset, size_t max, bool want_sum,
                             ocisbx_buf *data, uint64_t *total, char sum[65])
{
    char win[20] = "w-", off[24], mx[24];
    int rc = ocisbx_random_id(win + 2, 16);
    snprintf(off, sizeof off, "%" PRId64, offset < 0 ? -1 : offset);
    snprintf(mx, sizeof mx, "%zu", max);
    const char *args[] = {b->root, job_id, off, mx, win, want_sum ? "1" : "0"};
    char *o = NULL;
    int ex = 0;
    if (!rc)
        rc = ocisbx_backend_run_sh(b, ocisbx_script_job_output, args, 6, 256, &o, NULL, &ex);
    if (rc)
        return rc;
    unsigned long long t = 0;
    char s[65] = {0};
    int n = ex == 0 && o ? sscanf(o, "%llu %64s", &t, s) : 0;
    free(o);
    if (ex == JOB_EXIT_NONE)
        return ocisbx_fail(OCISBX_ENOTFOUND, "job %s does not exist", job_id);
    if (n < (want_sum ? 2 : 1) || (want_sum && strlen(s) != 64))
        return ocisbx_fail(OCISBX_EIO, "job output: the workspace script failed (exit status %d)", ex);
    *total = t;
    if (want_sum)
        memcpy(sum, s, 65);
    char rel[64];
    snprintf(rel, sizeof rel, ".ocisbx/jobs/%s/%s", job_id, win);
    return b->vt->get_file(b, rel, collect_all, data);
}

int ocisbx_backend_job_output(ocisbx_backend *b, const char *job_id, int64_t offset, size_t max, char **data,
                              size_t *len, uint64_t *total)
{
    if (!data || !len)
        return ocisbx_fail(OCISBX_EINVAL, "job output: NULL out");
    *data = NULL;
    *len = 0;
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "job output: NULL backend");
    int rc = check_job_id(job_id);
    if (rc)
        return rc;
    ocisbx_buf d = OCISBX_BUF_INIT;
    uint64_t t = 0;
    rc = ocisbx_backend_job_read_(b, job_id, offset, max ? max : b->max_output, false, &d, &t, NULL);
    if (!rc && ocisbx_buf_append(&d, "", 0))
        rc = ocisbx_fail_nomem();
    if (rc) {
        ocisbx_buf_free(&d);
        return rc;
    }
    if (total)
        *total = t;
    *len = d.len;
    *data = d.data ? ocisbx_buf_detach(&d) : ocisbx_strdup("");
    return *data ? 0 : ocisbx_fail_nomem();
}

/* The spawn handle: this backend's own, else the one beside the state,
 * which the workspace's commands can rewrite: used only once the backend
 * has checked that it names this job (open_handle). */
static int job_handle(ocisbx_backend *b, const char *job_id, char **handle)
{
    for (size_t i = 0; i < b->n_jobs; i++)
        if (strcmp(b->jobs[i].job_id, job_id) == 0) {
            *handle = ocisbx_strdup(b->jobs[i].handle);
            return *handle ? 0 : ocisbx_fail_nomem();
        }
    ocisbx_buf h = OCISBX_BUF_INIT;
    char path[80];
    snprintf(path, sizeof path, "/workspace/.ocisbx/jobs/%s/handle", job_id);
    int rc = ocisbx_backend_read_to_callback(b, path, collect_handle, &h);
    bool odd = rc == OCISBX_ECANCELED || (!rc && memchr(h.data ? h.data : "", '\0', h.len) != NULL);
    char *text = rc || odd ? NULL : ocisbx_strndup(h.data ? h.data : "", h.len);
    ocisbx_buf_free(&h);
    if (rc && !odd)
        return rc == OCISBX_ENOTFOUND ? ocisbx_fail(OCISBX_ENOTFOUND, "job %s does not exist", job_id) : rc;
    if (odd)
        return ocisbx_fail(OCISBX_EINTEGRITY,
                           "job %s: its handle in the workspace is not one this library wrote: it was changed "
                           "inside the workspace: refused, nothing killed",
                           job_id);
    if (!text)
        return ocisbx_fail_nomem();
    rc = b->vt->open_handle(b, job_id, text, handle);
    free(text);
    return rc;
}

int ocisbx_backend_job_stop(ocisbx_backend *b, const char *job_id, int *killed)
{
    if (killed)
        *killed = 0;
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "job kill: NULL backend");
    int rc = check_job_id(job_id);
    ocisbx_job_status *st = NULL;
    if (!rc)
        rc = read_status(b, job_id, 0, &st);
    bool running = !rc && st->running;
    ocisbx_job_status_free(st);
    if (rc || !running)
        return rc;
    char *handle = NULL;
    rc = job_handle(b, job_id, &handle);
    if (!rc)
        rc = b->vt->kill_spawned(b, handle);
    free(handle);
    int ex = 0;
    const char *args[] = {b->root, job_id};
    if (!rc)
        rc = ocisbx_backend_run_sh(b, ocisbx_script_job_kill, args, 2, 0, NULL, NULL, &ex);
    if (!rc && ex != 0)
        rc = ocisbx_fail(OCISBX_EIO, "job kill: cannot mark job %s killed (exit status %d)", job_id, ex);
    if (!rc && killed)
        *killed = 1;
    return rc;
}

int ocisbx_backend_job_kill(ocisbx_backend *b, const char *job_id)
{
    return ocisbx_backend_job_stop(b, job_id, NULL);
}

int ocisbx_backend_end_own_jobs(ocisbx_backend *b)
{
    if (b->jobs_detached)
        return 0;
    int first = 0;
    for (size_t i = 0; i < b->n_jobs; i++) {
        int rc = ocisbx_backend_job_stop(b, b->jobs[i].job_id, NULL);
        if (rc && !first)
            first = rc;
    }
    return first;
}

int ocisbx_backend_close_common(ocisbx_backend *b)
{
    int rc = ocisbx_backend_end_own_jobs(b);
    ocisbx_error_saved *sv = rc ? ocisbx_error_save() : NULL;
    int r2 = ocisbx_exec_remove_run_files(b);
    if (sv)
        ocisbx_error_restore(sv);
    return rc ? rc : r2;
}

/* One shell word as ocisbx_shell_quote writes it (plain bytes, '...' and
 * \'), up to a space or a newline outside quotes: malloc'd, *p moved past
 * it; NULL when it is not one. */
static char *shell_word(const char **p)
{
    const char *s = *p;
    char *w = malloc(strlen(s) + 1);
    size_t n = 0;
    while (w && *s && *s != ' ' && *s != '\n') {
        if (*s == '\'') {
            const char *e = strchr(s + 1, '\'');
            if (!e) {
                free(w);
                return NULL;
            }
            memcpy(w + n, s + 1, (size_t)(e - s - 1));
            n += (size_t)(e - s - 1);
            s = e + 1;
        } else if (*s == '\\' && s[1]) {
            w[n++] = s[1];
            s += 2;
        } else {
            w[n++] = *s++;
        }
    }
    if (w && s == *p) { /* an empty word is written '' */
        free(w);
        return NULL;
    }
    if (w)
        w[n] = '\0';
    *p = s;
    return w;
}

bool ocisbx_job_command_is(const char *text, const char *root, const char *job_id)
{
    if (strncmp(text, "set -- ", 7) != 0)
        return false;
    const char *p = text + 7;
    char *words[6] = {0};
    bool ok = true;
    for (int i = 0; i < 6 && ok; i++) {
        words[i] = shell_word(&p);
        ok = words[i] && *p == (i < 5 ? ' ' : '\n');
        p += ok ? 1 : 0;
    }
    ok = ok && strcmp(words[1], root) == 0 && strcmp(words[2], job_id) == 0 && strcmp(p, ocisbx_script_job_run) == 0;
    for (int i = 0; i < 6; i++)
        free(words[i]);
    return ok;
}
