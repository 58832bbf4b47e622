/* Background jobs: a spawned run whose state lives in
 * /workspace/.ocisbx/jobs/<id>/ (docs/backend.md, "Background jobs"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "backend/scripts.h"
#include "ocisbx/util.h"
#include "util/internal.h"

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

static int check_job_id(const char *id)
{
    if (!id || strncmp(id, "job-", 4) != 0 || strlen(id) != 20)
        return ocisbx_fail(OCISBX_EINVAL, "not a job id");
    for (const char *p = id + 4; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return ocisbx_fail(OCISBX_EINVAL, "not a job id");
    return 0;
}

/* "W=<root>\nJ=\"$W/.ocisbx/jobs/<id>\"\n" */
static int job_vars(ocisbx_backend *b, const char *id, ocisbx_buf *s)
{
    int rc = ocisbx_buf_appends(s, "W=");
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(s, b->root);
    if (!rc)
        rc = ocisbx_buf_appendf(s, "\nJ=\"$W/.ocisbx/jobs/%s\"\n", id);
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
    ocisbx_random_id(id + 4, 16);
    int64_t secs = (ocisbx_exec_options_timeout_(o) + 999) / 1000;
    ocisbx_buf pre = OCISBX_BUF_INIT, s = OCISBX_BUF_INIT, inner = OCISBX_BUF_INIT;
    char *handle = NULL;
    int ex = 0;
    /* 1: the state directory, so that status works as soon as start returns */
    rc = job_vars(b, id, &pre);
    if (!rc)
        rc = ocisbx_buf_appends(&pre, "[ -d \"$W\"/");
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(&pre, *cwd ? cwd : ".");
    if (!rc)
        rc = ocisbx_buf_appends(&pre, " ] || exit 3\n"
                                      "mkdir -p \"$J\" || exit 125\n"
                                      "date +%s%3N > \"$J/start\" || exit 125\n"
                                      ": > \"$J/out\" || exit 125\n");
    if (!rc)
        rc = ocisbx_backend_run_script(b, pre.data, 0, NULL, NULL, &ex);
    if (!rc && ex == 3)
        rc = ocisbx_fail(OCISBX_ENOTFOUND, "job start: the working directory does not exist");
    else if (!rc && ex != 0)
        rc = ocisbx_fail(OCISBX_EIO, "job start: cannot make the job's state directory (exit status %d)", ex);
    /* 2: the job itself */
    if (!rc)
        rc = ocisbx_buf_appendf(&inner, "exec 2>&1\n%s", command);
    if (!rc)
        rc = job_vars(b, id, &s);
    if (!rc)
        rc = ocisbx_buf_appends(&s, "cd \"$W\"/");
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(&s, *cwd ? cwd : ".");
    if (!rc)
        rc = ocisbx_buf_appendf(&s, " || exit 3\ntimeout -v -s TERM -k %d %" PRId64 " sh -c ",
                                OCISBX_BACKEND_KILL_GRACE_S, secs);
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(&s, inner.data);
    if (!rc)
        rc = ocisbx_buf_appends(&s, " > \"$J/out\" 2> \"$J/tv\" < /dev/null\n"
                                    "S=$?\n"
                                    "TO=0\n"
                                    "[ -s \"$J/tv\" ] && TO=1\n"
                                    "date +%s%3N > \"$J/end\"\n"
                                    "printf '%s %s\\n' \"$S\" \"$TO\" > \"$J/status.t\"\n"
                                    "mv -f \"$J/status.t\" \"$J/status\"\n");
    if (!rc) {
        ocisbx_run_req req = {0};
        req.script = s.data;
        req.env[0] = &b->env;
        req.env[1] = ocisbx_exec_options_env_(o);
        req.backstop_s = secs + OCISBX_BACKEND_KILL_GRACE_S + 2;
        rc = b->vt->spawn(b, &req, id, &handle);
    }
    if (!rc) {
        /* the handle beside the state: another process can kill the job */
        char rel[64];
        snprintf(rel, sizeof rel, ".ocisbx/jobs/%s/handle", id);
        char b64[OCISBX_SHA256_B64_LEN + 1];
        ocisbx_sha256_base64(handle, strlen(handle), b64);
        rc = b->vt->put_file(b, rel, handle, strlen(handle), b64);
        if (rc) {
            ocisbx_error_saved *sv = ocisbx_error_save();
            (void)b->vt->kill_spawned(b, handle);
            ocisbx_error_restore(sv);
        }
    }
    if (!rc) {
        struct own_job *j = realloc(b->jobs, (b->n_jobs + 1) * sizeof *j);
        if (!j) {
            rc = ocisbx_fail_nomem();
        } else {
            b->jobs = j;
            j[b->n_jobs].job_id = ocisbx_strdup(id);
            j[b->n_jobs].handle = handle;
            handle = NULL;
            b->n_jobs++;
            *job_id = ocisbx_strdup(id);
            if (!*job_id)
                rc = ocisbx_fail_nomem();
        }
    }
    free(handle);
    free(cwd);
    ocisbx_buf_free(&pre);
    ocisbx_buf_free(&s);
    ocisbx_buf_free(&inner);
    return rc;
}

int ocisbx_backend_job_status(ocisbx_backend *b, const char *job_id, ocisbx_job_status **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "job status: NULL out");
    *out = NULL;
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "job status: NULL backend");
    int rc = check_job_id(job_id);
    if (rc)
        return rc;
    ocisbx_buf s = OCISBX_BUF_INIT;
    char *o = NULL;
    int ex = 0;
    rc = job_vars(b, job_id, &s);
    if (!rc)
        rc = ocisbx_buf_appends(
            &s, "[ -f \"$J/start\" ] || exit 3\n"
                "NOW=$(date +%s%3N)\n"
                "ST=$(cat \"$J/start\")\n"
                "if [ -f \"$J/status\" ]; then\n"
                "  read S TO < \"$J/status\"\n"
                "  E=$(cat \"$J/end\")\n"
                "  R=0; K=0\n"
                "elif [ -f \"$J/killed\" ]; then\n"
                "  S=-; TO=0; R=0; K=1\n"
                "  E=$(cat \"$J/end\" 2>/dev/null || echo \"$NOW\")\n"
                "else\n"
                "  S=-; TO=0; R=1; K=0; E=$NOW\n"
                "fi\n"
                "B=$(wc -c < \"$J/out\")\n"
                "printf 'JOB %s %s %s %s %s %s\\n' \"$R\" \"$S\" \"$TO\" \"$K\" $((E - ST)) $((B + 0))\n");
    if (!rc)
        rc = ocisbx_backend_run_script(b, s.data, 512, &o, NULL, &ex);
    ocisbx_buf_free(&s);
    if (rc)
        return rc;
    if (ex == 3) {
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
    if (max == 0)
        max = b->max_output;
    ocisbx_buf s = OCISBX_BUF_INIT;
    char *o = NULL;
    size_t ol = 0;
    int ex = 0;
    rc = job_vars(b, job_id, &s);
    if (!rc)
        rc = ocisbx_buf_appends(&s, "[ -f \"$J/out\" ] || exit 3\nB=$(wc -c < \"$J/out\")\nB=$((B + 0))\n");
    if (!rc && offset < 0)
        rc = ocisbx_buf_appendf(&s, "O=0\n[ \"$B\" -gt %zu ] && O=$((B - %zu))\n", max, max);
    else if (!rc)
        rc = ocisbx_buf_appendf(&s, "O=%" PRId64 "\n", offset);
    if (!rc)
        rc = ocisbx_buf_appendf(&s, "printf '%%s\\n' \"$B\"\ntail -c +$((O + 1)) \"$J/out\" | head -c %zu\n", max);
    if (!rc)
        rc = ocisbx_backend_run_capture(b, s.data, &o, &ol, &ex);
    ocisbx_buf_free(&s);
    if (rc)
        return rc;
    if (ex == 3) {
        free(o);
        return ocisbx_fail(OCISBX_ENOTFOUND, "job %s does not exist", job_id);
    }
    char *nl = memchr(o, '\n', ol);
    if (ex != 0 || !nl) {
        free(o);
        return ocisbx_fail(OCISBX_EIO, "job output: the workspace script failed (exit status %d)", ex);
    }
    if (total)
        *total = strtoull(o, NULL, 10);
    size_t n = ol - (size_t)(nl + 1 - o);
    memmove(o, nl + 1, n);
    o[n] = '\0';
    *data = o;
    *len = n;
    return 0;
}

int ocisbx_backend_job_kill(ocisbx_backend *b, const char *job_id)
{
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "job kill: NULL backend");
    int rc = check_job_id(job_id);
    if (rc)
        return rc;
    const char *handle = NULL;
    for (size_t i = 0; i < b->n_jobs; i++)
        if (strcmp(b->jobs[i].job_id, job_id) == 0)
            handle = b->jobs[i].handle;
    unsigned char *h = NULL;
    size_t hl = 0;
    if (!handle) {
        /* another process's job: its handle from the state directory */
        char path[80];
        snprintf(path, sizeof path, "/workspace/.ocisbx/jobs/%s/handle", job_id);
        rc = ocisbx_backend_read_bytes(b, path, &h, &hl);
        if (rc)
            return rc == OCISBX_ENOTFOUND ? ocisbx_fail(OCISBX_ENOTFOUND, "job %s does not exist", job_id) : rc;
        handle = (const char *)h;
    }
    rc = b->vt->kill_spawned(b, handle);
    ocisbx_free(h);
    if (rc)
        return rc;
    int ex = 0;
    const char *args[] = {b->root, job_id};
    rc = ocisbx_backend_run_sh(b, ocisbx_script_job_kill, args, 2, 0, NULL, NULL, &ex);
    if (!rc && ex != 0)
        rc = ocisbx_fail(OCISBX_EIO, "job kill: cannot mark job %s killed (exit status %d)", job_id, ex);
    return rc;
}

int ocisbx_backend_end_own_jobs(ocisbx_backend *b)
{
    int first = 0;
    for (size_t i = 0; i < b->n_jobs; i++) {
        ocisbx_job_status *st = NULL;
        int rc = ocisbx_backend_job_status(b, b->jobs[i].job_id, &st);
        bool running = rc == 0 && ocisbx_job_status_running(st);
        ocisbx_job_status_free(st);
        if (rc == 0 && !running)
            continue;
        rc = ocisbx_backend_job_kill(b, b->jobs[i].job_id);
        if (rc && !first)
            first = rc;
    }
    return first;
}
