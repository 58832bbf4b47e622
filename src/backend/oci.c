/* The OCI sandbox backend, over the public ocisbx_client_* functions only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend_int.h"
#include "sys/sleep.h"
#include "ocisbx/auth.h"
#include "ocisbx/http.h"
#include "ocisbx/util.h"
#include "util/internal.h"

#define OCI_CANCEL_WAIT_MS 2000  /* for the cancel of a run that failed */
#define OCI_DELETE_WAIT_MS 60000 /* for the delete of a sandbox we own */
#define OCI_KILL_WAIT_S 5        /* a job's kill waits grace + this for the end */

typedef struct oci_impl {
    ocisbx_client *client;
    bool own_client;
    bool owned;     /* created (or adopted): close stops and deletes */
    bool no_stream; /* the service has no runAndStream: run + events */
    char *sandbox_json; /* created: the RUNNING sandbox */
} oci_impl;

/* Sleeps up to ms in short slices; ECANCELED when the callback says so. */
static int nap(ocisbx_backend *b, int64_t ms)
{
    if (ocisbx_sys_sleep_ms(ms, b->cancel, b->cancel_ud) != 0)
        return ocisbx_fail(OCISBX_ECANCELED, "canceled by the caller");
    return 0;
}

/* The request for one run: its text (positional parameters first), env,
 * the service's backstop. */
int ocisbx_oci_run_details(const ocisbx_run_req *req, ocisbx_run_command_details **out)
{
    ocisbx_run_command_details *d = NULL;
    ocisbx_buf text = OCISBX_BUF_INIT;
    int rc = ocisbx_run_req_text(req, &text);
    if (!rc)
        rc = ocisbx_run_command_details_new(text.data, &d);
    ocisbx_buf_free(&text);
    if (!rc)
        rc = ocisbx_run_command_details_set_cwd(d, "/workspace");
    for (int k = 0; k < 2 && !rc; k++)
        for (size_t i = 0; req->env[k] && i < req->env[k]->n && !rc; i++)
            rc = ocisbx_run_command_details_add_env(d, req->env[k]->v[i].name, req->env[k]->v[i].value);
    if (!rc && req->backstop_s > 0) {
        char t[40];
        snprintf(t, sizeof t, "PT%lldS", (long long)req->backstop_s);
        rc = ocisbx_run_command_details_set_timeout(d, t);
    }
    if (rc)
        ocisbx_run_command_details_free(d);
    else
        *out = d;
    return rc;
}

static int start_command(ocisbx_backend *b, const ocisbx_run_command_details *d, char **id)
{
    oci_impl *oi = b->impl;
    ocisbx_command *cmd = NULL;
    int rc = ocisbx_client_run_command(oi->client, b->sandbox_id, d, &cmd);
    if (rc)
        return ocisbx_error_wrap("running a command in %s: ", b->sandbox_id);
    *id = ocisbx_command_id(cmd) ? ocisbx_strdup(ocisbx_command_id(cmd)) : NULL;
    ocisbx_command_free(cmd);
    if (!*id)
        return ocisbx_fail(OCISBX_EPARSE, "run command: the answer has no id");
    return 0;
}

static int oci_spawn(ocisbx_backend *b, const ocisbx_run_req *req, const char *job_id, char **handle)
{
    (void)job_id;
    ocisbx_run_command_details *d = NULL;
    int rc = ocisbx_oci_run_details(req, &d);
    if (!rc)
        rc = start_command(b, d, handle);
    ocisbx_run_command_details_free(d);
    return rc;
}

/* Cancels the command and waits until it has finished (the service's TERM,
 * then KILL after its grace). */
static int oci_kill_spawned(ocisbx_backend *b, const char *handle)
{
    oci_impl *oi = b->impl;
    int rc = ocisbx_client_cancel_command(oi->client, b->sandbox_id, handle);
    if (rc == OCISBX_ECONFLICT) /* already finished */
        return 0;
    if (rc)
        return rc;
    rc = ocisbx_client_wait_command(oi->client, b->sandbox_id, handle, OCISBX_COMMAND_FINISHED_NO_EXIT_CODE,
                                    (int64_t)(b->kill_grace_s + OCI_KILL_WAIT_S) * 1000,
                                    ocisbx_backend_wait_poll_ms(b->poll_ms, OCISBX_WAIT_KILLED), NULL);
    return rc == OCISBX_ECONFLICT ? 0 : rc; /* finished with an exit code after all */
}

/* A handle read from the workspace names a command of this sandbox: used
 * only when the service's own text of that command is this job's
 * job-run.sh (the job id its third argument). */
static int oci_open_handle(ocisbx_backend *b, const char *job_id, const char *text, char **handle)
{
    oci_impl *oi = b->impl;
    size_t n = strlen(text);
    if (!n || n > 255 || strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-") != n)
        return ocisbx_fail(OCISBX_EINTEGRITY,
                           "job %s: its handle in the workspace is not a command id: it was changed inside the "
                           "workspace: refused, nothing stopped",
                           job_id);
    ocisbx_command *cmd = NULL;
    int rc = ocisbx_client_get_command(oi->client, b->sandbox_id, text, &cmd);
    if (rc == OCISBX_ENOTFOUND)
        return ocisbx_fail(OCISBX_EINTEGRITY,
                           "job %s: its handle in the workspace names no command of this sandbox: it was changed "
                           "inside the workspace: refused, nothing stopped",
                           job_id);
    if (rc)
        return ocisbx_error_wrap("job %s: reading the command its handle names: ", job_id);
    const char *t = ocisbx_command_command(cmd);
    bool ok = t && ocisbx_job_command_is(t, b->root, job_id);
    ocisbx_command_free(cmd);
    if (!ok)
        return ocisbx_fail(OCISBX_EINTEGRITY,
                           "job %s: its handle in the workspace names command %s, which is not this job's: it was "
                           "changed inside the workspace: refused, nothing stopped",
                           job_id, text);
    *handle = ocisbx_strdup(text);
    return *handle ? 0 : ocisbx_fail_nomem();
}

/* One run's stream: output to the caller's callbacks, the first KiB of
 * stderr kept for messages, the exit status from FINISHED, the command id
 * from the first event. */
typedef struct run_stream {
    ocisbx_backend *b;
    const ocisbx_run_req *req;
    ocisbx_run_res *res;
    ocisbx_buf err;
    bool stopped; /* an output callback asked to stop */
    bool events;  /* at least one event came */
} run_stream;

static int on_event(const ocisbx_command_event *ev, void *ud)
{
    run_stream *rs = ud;
    size_t n = 0;
    const char *d = ocisbx_command_event_data(ev, &n);
    const char *cid = ocisbx_command_event_command_id(ev);
    int x = 0;
    rs->events = true;
    if (cid && !rs->res->command_id && !(rs->res->command_id = ocisbx_strdup(cid)))
        return 1;
    switch (ocisbx_command_event_kind(ev)) {
    case OCISBX_EVENT_STDOUT:
        if (n && rs->req->on_stdout && rs->req->on_stdout(d, n, rs->req->user_data)) {
            rs->stopped = true;
            return 1;
        }
        break;
    case OCISBX_EVENT_STDERR:
        if (n && rs->err.len < 1024)
            (void)ocisbx_buf_append(&rs->err, d, n < 1024 - rs->err.len ? n : 1024 - rs->err.len);
        if (n && rs->req->on_stderr && rs->req->on_stderr(d, n, rs->req->user_data)) {
            rs->stopped = true;
            return 1;
        }
        break;
    case OCISBX_EVENT_FINISHED:
        if (ocisbx_command_event_has_exit_code(ev, &x) == 1) {
            rs->res->has_exit = true;
            rs->res->exit_code = x;
        }
        break;
    default: break;
    }
    return 0;
}

/* Cleanup that an interrupted or failed operation still owes (cancel the
 * remote command, delete an owned sandbox): the cancel callbacks held, the
 * client's calls bounded by ms instead. */
static void cleanup_begin(oci_impl *oi, int64_t ms)
{
    (void)ocisbx_client_hold_cancel(oi->client, 1);
    (void)ocisbx_client_set_deadline(oi->client, ocisbx_time_monotonic_ms() + ms);
}

static void cleanup_end(oci_impl *oi)
{
    (void)ocisbx_client_set_deadline(oi->client, 0);
    (void)ocisbx_client_hold_cancel(oi->client, 0);
}

/* A service without runAndStream answers 404, 405 or 501 before any event. */
static bool no_such_operation(const run_stream *rs)
{
    int st = ocisbx_error_http_status(ocisbx_error_last());
    return !rs->events && !rs->res->command_id && (st == 404 || st == 405 || st == 501);
}

/* RunSandboxCommandAndStream: one request whose answer is the event stream
 * (a cut stream resumes with the events operation from the last seq).
 * Without it: run, then one event stream. */
static int stream_run(ocisbx_backend *b, const ocisbx_run_req *req, run_stream *rs)
{
    oci_impl *oi = b->impl;
    ocisbx_run_command_details *d = NULL;
    int rc = ocisbx_oci_run_details(req, &d);
    if (rc)
        return rc;
    if (!oi->no_stream) {
        char *cid = NULL;
        rc = ocisbx_client_run_command_and_stream(oi->client, b->sandbox_id, d, on_event, rs, &cid);
        if (cid && !rs->res->command_id)
            rs->res->command_id = cid;
        else
            ocisbx_free(cid);
        if (rc && !rs->stopped && no_such_operation(rs)) {
            ocisbx_log(OCISBX_LOG_INFO, "oci backend: no RunSandboxCommandAndStream here (HTTP %d): run + events",
                       ocisbx_error_http_status(ocisbx_error_last()));
            oi->no_stream = true;
        } else {
            ocisbx_run_command_details_free(d);
            return rc;
        }
    }
    rc = start_command(b, d, &rs->res->command_id);
    ocisbx_run_command_details_free(d);
    if (!rc)
        rc = ocisbx_client_stream_command_events(oi->client, b->sandbox_id, rs->res->command_id, OCISBX_SEQ_START,
                                                 0, on_event, rs);
    return rc;
}

/* The run's deadline is set on the client (ocisbx_client_set_deadline), so
 * a request that hangs (the service stops answering) ends there too. A run
 * that fails after its command started is canceled (bounded by 2 s). */
static int oci_run(ocisbx_backend *b, const ocisbx_run_req *req, ocisbx_run_res *res)
{
    oci_impl *oi = b->impl;
    int rc = 0;
    if (req->uncancelable)
        cleanup_begin(oi, req->deadline_ms - ocisbx_time_monotonic_ms());
    else
        rc = ocisbx_client_set_deadline(oi->client, req->deadline_ms);
    if (!rc && b->cancel && !req->uncancelable)
        rc = ocisbx_client_set_operation_cancel(oi->client, b->cancel, b->cancel_ud);
    run_stream rs = {b, req, res, OCISBX_BUF_INIT, false, false};
    if (!rc)
        rc = stream_run(b, req, &rs);
    bool late = ocisbx_client_deadline_passed(oi->client);
    if (rc && !rs.stopped) {
        if (!req->uncancelable && ocisbx_backend_canceled(b))
            rc = ocisbx_fail(OCISBX_ECANCELED, "command canceled");
        else if (late)
            rc = ocisbx_fail(OCISBX_ETIMEOUT, "command still running at the client's deadline: canceled");
    }
    if (rs.err.len)
        res->stderr_text = ocisbx_strndup(rs.err.data, rs.err.len);
    ocisbx_buf_free(&rs.err);
    if (rc && res->command_id) {
        /* best effort, and bounded: a service that hangs gets 2 s more */
        ocisbx_error_saved *sv = ocisbx_error_save();
        cleanup_begin(oi, OCI_CANCEL_WAIT_MS); /* a Ctrl-C must not cancel the cancel */
        (void)ocisbx_client_cancel_command(oi->client, b->sandbox_id, res->command_id);
        cleanup_end(oi);
        ocisbx_error_restore(sv);
    }
    if (req->uncancelable)
        cleanup_end(oi);
    (void)ocisbx_client_set_deadline(oi->client, 0);
    (void)ocisbx_client_set_operation_cancel(oi->client, NULL, NULL);
    return rc;
}

static char *sandbox_path(const char *rel)
{
    return *rel ? ocisbx_asprintf("/workspace/%s", rel) : ocisbx_strdup("/workspace");
}

/* A part sent from where it is (no copy) with the SHA-256 the caller
 * computed as it read it (the service checks it; no second pass here). */
static int oci_put(ocisbx_backend *b, const char *rel, const void *data, size_t len, const char *sha256_b64)
{
    oci_impl *oi = b->impl;
    char *p = sandbox_path(rel);
    if (!p)
        return ocisbx_fail_nomem();
    ocisbx_mem_reader m = {data, len, 0};
    int rc = sha256_b64 ? ocisbx_client_write_file_from_callback(oi->client, b->sandbox_id, p, (int64_t)len,
                                                                 ocisbx_mem_reader_read, ocisbx_mem_reader_rewind, &m, sha256_b64, NULL)
                        : ocisbx_client_write_file(oi->client, b->sandbox_id, p, data, len, NULL);
    free(p);
    return rc;
}

/* The parts of one write, several at once; a cancel of the backend stops
 * the ones in flight (between parts when they go one by one). */
static int oci_put_parts(ocisbx_backend *b, int in_flight, const ocisbx_file_part_feed *feed)
{
    oci_impl *oi = b->impl;
    int rc = b->cancel ? ocisbx_client_set_operation_cancel(oi->client, b->cancel, b->cancel_ud) : 0;
    if (!rc)
        rc = ocisbx_client_write_parts(oi->client, b->sandbox_id, in_flight, feed);
    (void)ocisbx_client_set_operation_cancel(oi->client, NULL, NULL);
    return rc;
}

static int oci_get(ocisbx_backend *b, const char *rel, ocisbx_write_fn write_fn, void *ud)
{
    oci_impl *oi = b->impl;
    char *p = sandbox_path(rel);
    if (!p)
        return ocisbx_fail_nomem();
    int rc = ocisbx_client_read_file_to_callback(oi->client, b->sandbox_id, p, write_fn, ud);
    free(p);
    return rc;
}

static int oci_extend(ocisbx_backend *b, const char *duration, char **time_expires)
{
    oci_impl *oi = b->impl;
    ocisbx_sandbox *s = NULL;
    int rc = ocisbx_client_extend_sandbox(oi->client, b->sandbox_id, duration, &s);
    if (rc)
        return rc;
    if (!s || !ocisbx_sandbox_time_expires(s))
        rc = ocisbx_client_get_sandbox(oi->client, b->sandbox_id, &s);
    if (!rc && time_expires) {
        const char *t = ocisbx_sandbox_time_expires(s);
        *time_expires = t ? ocisbx_strdup(t) : NULL;
    }
    ocisbx_sandbox_free(s);
    return rc;
}

/* The sandbox we own goes also after an interrupt: the cancel callbacks
 * are held (a second Ctrl-C in the CLI still exits at once), bounded by
 * OCI_DELETE_WAIT_MS. */
static int delete_sandbox(oci_impl *oi, const char *id)
{
    cleanup_begin(oi, OCI_DELETE_WAIT_MS);
    int rc = ocisbx_client_delete_sandbox(oi->client, id);
    cleanup_end(oi);
    return rc; /* OCISBX_ENOTFOUND: gone (only the delete's 404 says so) */
}

/* The state now: 1 when the sandbox is gone (not found or DELETED), 0 with
 * *stopped (STOPPED, or FAILED: no stop will come) and *stopping set, or a
 * negative code. */
static int sandbox_state(ocisbx_backend *b, oci_impl *oi, bool *stopped, bool *stopping)
{
    ocisbx_sandbox *s = NULL;
    int rc = ocisbx_client_get_sandbox(oi->client, b->sandbox_id, &s);
    if (rc == OCISBX_ENOTFOUND)
        return 1;
    if (rc)
        return rc;
    const char *st = ocisbx_sandbox_lifecycle_state(s);
    int gone = st && !strcmp(st, "DELETED");
    *stopped = st && (!strcmp(st, "STOPPED") || !strcmp(st, "FAILED"));
    *stopping = st && !strcmp(st, "STOPPING");
    ocisbx_sandbox_free(s);
    return gone;
}

/* StopSandbox (isForce false) unless the sandbox is stopped or stopping
 * already (a stop then would only be refused), then the state every second
 * until STOPPED, at most the stop timeout. 1: gone already; 0: stopped;
 * else the reason the delete comes without a stop (the flags say which). */
static int stop_and_wait(ocisbx_backend *b, oci_impl *oi)
{
    bool stopped = false, stopping = false;
    int rc = sandbox_state(b, oi, &stopped, &stopping);
    if (rc == 1 || (rc == 0 && stopped))
        return rc;
    if (rc == 0 && !stopping)
        rc = ocisbx_client_stop_sandbox(oi->client, b->sandbox_id, 0);
    if (rc == OCISBX_ENOTFOUND)
        return 1;
    if (rc && rc != OCISBX_ECONFLICT) { /* 409: it changed meanwhile; the state says */
        b->close_flags |= OCISBX_CLOSE_STOP_FAILED;
        return ocisbx_error_wrap("close: stopping sandbox %s: ", b->sandbox_id);
    }
    int64_t poll = ocisbx_backend_wait_poll_ms(b->poll_ms, OCISBX_WAIT_STOPPED);
    int64_t end = ocisbx_time_monotonic_ms() + b->stop_timeout_ms;
    for (;;) {
        int64_t left = end - ocisbx_time_monotonic_ms();
        if (left <= 0) {
            b->close_flags |= OCISBX_CLOSE_STOP_TIMED_OUT;
            return ocisbx_fail(OCISBX_ETIMEOUT, "close: sandbox %s was not STOPPED within %lld ms", b->sandbox_id,
                               (long long)b->stop_timeout_ms);
        }
        if (nap(b, poll < left ? poll : left)) {
            b->close_flags |= OCISBX_CLOSE_STOP_TIMED_OUT;
            return ocisbx_fail(OCISBX_ECANCELED, "close: interrupted while sandbox %s was stopping",
                               b->sandbox_id);
        }
        int g = sandbox_state(b, oi, &stopped, &stopping);
        if (g < 0)
            b->close_flags |= OCISBX_CLOSE_STOP_TIMED_OUT;
        if (g < 0)
            return ocisbx_error_wrap("close: waiting for sandbox %s to stop: ", b->sandbox_id);
        if (g == 1 || stopped)
            return g;
    }
}

/* Stop, wait, delete: the delete is sent whatever the stop did. */
static int end_sandbox(ocisbx_backend *b, oci_impl *oi)
{
    b->close_flags = 0;
    /* a 404 (or DELETED) from GetSandbox or the stop is not trusted (a
     * proxy's, a replica's lag): the delete goes anyway, and only its own
     * 404 means gone */
    int src = stop_and_wait(b, oi);
    ocisbx_error_saved *sv = src < 0 ? ocisbx_error_save() : NULL;
    int drc = delete_sandbox(oi, b->sandbox_id);
    if (drc == OCISBX_ENOTFOUND) {
        b->close_flags |= OCISBX_CLOSE_ALREADY_GONE;
        drc = 0;
    } else if (drc == 0) {
        b->close_flags |= OCISBX_CLOSE_DELETED;
    }
    if (sv) {
        ocisbx_error_restore(sv);
        return drc ? ocisbx_error_append(" (and deleting sandbox %s failed too)", b->sandbox_id)
                   : ocisbx_error_append(" (sandbox %s deleted anyway)", b->sandbox_id);
    }
    return drc ? ocisbx_error_wrap("close: deleting sandbox %s: ", b->sandbox_id) : 0;
}

static int oci_close(ocisbx_backend *b)
{
    oci_impl *oi = b->impl;
    if (!oi->owned)
        return ocisbx_backend_close_common(b);
    return end_sandbox(b, oi);
}

static void oci_free(ocisbx_backend *b)
{
    oci_impl *oi = b->impl;
    if (!oi)
        return;
    if (oi->own_client)
        ocisbx_client_free(oi->client);
    free(oi->sandbox_json);
    free(oi);
    b->impl = NULL;
}

static const ocisbx_backend_vt oci_vt = {
    "oci-sandbox", oci_run, oci_put, oci_get, oci_spawn, oci_kill_spawned, oci_extend, oci_close, oci_free,
    oci_put_parts, NULL, oci_open_handle,
};

int ocisbx_backend_disown(ocisbx_backend *b)
{
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "disown: NULL backend");
    if (b->vt != &oci_vt)
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "a %s backend owns no sandbox", b->vt->kind);
    ((oci_impl *)b->impl)->owned = false;
    return 0;
}

int ocisbx_backend_adopt(ocisbx_backend *b)
{
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "adopt: NULL backend");
    if (b->vt != &oci_vt)
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "a %s backend owns no sandbox", b->vt->kind);
    ((oci_impl *)b->impl)->owned = true;
    return 0;
}

int ocisbx_backend_sandbox_json(const ocisbx_backend *b, char **out)
{
    if (!b || !out)
        return ocisbx_fail(OCISBX_EINVAL, "sandbox json: NULL argument");
    *out = NULL;
    if (b->vt != &oci_vt)
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "a %s backend has no sandbox", b->vt->kind);
    const oci_impl *oi = b->impl;
    if (oi->sandbox_json) {
        *out = ocisbx_strdup(oi->sandbox_json);
        return *out ? 0 : ocisbx_fail_nomem();
    }
    /* connected: the sandbox as it is now (connect asks nothing) */
    ocisbx_sandbox *s = NULL;
    int rc = ocisbx_client_get_sandbox(oi->client, b->sandbox_id, &s);
    if (!rc)
        rc = ocisbx_sandbox_to_json(s, out);
    ocisbx_sandbox_free(s);
    return rc;
}

/* The client from the one resolver (explicit options > environment >
 * config file > defaults); *cfg_region: the profile's region when that is
 * where the region came from. */
int ocisbx_oci_build_client(const ocisbx_backend_options *o, ocisbx_client **out, char **cfg_region)
{
    ocisbx_settings *s = NULL;
    ocisbx_client_options *co = NULL;
    int rc = ocisbx_settings_new(&s);
    if (!rc && o) {
        const struct {
            const char *name, *value;
        } given[] = {{"config_file", o->config_file},
                     {"profile", o->profile},
                     {"region", o->region},
                     {"endpoint", o->endpoint},
                     {"ca_bundle", o->ca_bundle}};
        for (size_t i = 0; !rc && i < sizeof given / sizeof given[0]; i++)
            rc = ocisbx_settings_set(s, given[i].name, given[i].value);
    }
    if (!rc)
        rc = ocisbx_settings_resolve(s);
    if (!rc && ocisbx_settings_source(s, "region") == OCISBX_SETTING_FILE &&
        !(*cfg_region = ocisbx_strdup(ocisbx_settings_get(s, "region"))))
        rc = ocisbx_fail_nomem();
    if (!rc && o && o->cancel) {
        rc = ocisbx_client_options_new(&co);
        if (!rc)
            rc = ocisbx_client_options_set_cancel(co, o->cancel, o->cancel_ud);
    }
    if (!rc)
        rc = ocisbx_settings_client_new(s, co, out);
    ocisbx_client_options_free(co);
    ocisbx_settings_free(s);
    return rc;
}

/* The region of the label: option, environment, endpoint host, config. */
static char *label_region(const ocisbx_backend_options *o, ocisbx_client *c, const char *cfg_region)
{
    const char *r = ocisbx_backend_setting(o ? o->region : NULL, "region");
    if (r)
        return ocisbx_strdup(r);
    const char *ep = ocisbx_client_endpoint(c);
    const char *h = ep ? strstr(ep, "generativeai.") : NULL;
    if (h) {
        h += strlen("generativeai.");
        const char *e = strstr(h, ".oci.");
        if (e && e > h)
            return ocisbx_strndup(h, (size_t)(e - h));
    }
    return ocisbx_strdup(cfg_region ? cfg_region : "unknown");
}

static int wait_running(ocisbx_backend *b, oci_impl *oi, int64_t timeout_ms, int64_t poll_ms, ocisbx_sandbox **out)
{
    int64_t end = ocisbx_time_monotonic_ms() + timeout_ms;
    for (;;) {
        if (ocisbx_backend_canceled(b))
            return ocisbx_fail(OCISBX_ECANCELED, "create: canceled while waiting for RUNNING");
        ocisbx_sandbox *s = NULL;
        int rc = ocisbx_client_get_sandbox(oi->client, b->sandbox_id, &s);
        if (rc)
            return ocisbx_error_wrap("create: waiting for RUNNING: ");
        const char *st = ocisbx_sandbox_lifecycle_state(s);
        if (st && strcmp(st, "RUNNING") == 0) {
            *out = s;
            return 0;
        }
        if (st && (strcmp(st, "FAILED") == 0 || strcmp(st, "DELETED") == 0)) {
            rc = ocisbx_fail(OCISBX_ECONFLICT, "create: the sandbox became %s while waiting for RUNNING%s%s", st,
                             ocisbx_sandbox_lifecycle_details(s) ? ": " : "",
                             ocisbx_sandbox_lifecycle_details(s) ? ocisbx_sandbox_lifecycle_details(s) : "");
            ocisbx_sandbox_free(s);
            return rc;
        }
        ocisbx_sandbox_free(s);
        int64_t left = end - ocisbx_time_monotonic_ms();
        if (left <= 0)
            return ocisbx_fail(OCISBX_ETIMEOUT, "create: the sandbox was not RUNNING within %lld ms",
                               (long long)timeout_ms);
        rc = nap(b, poll_ms < left ? poll_ms : left);
        if (rc)
            return ocisbx_error_wrap("create: ");
    }
}

/* The option (ms, 0: unset), else the setting's variable (whole seconds),
 * else its default: ready_timeout, stop_timeout. */
static int timeout_setting_ms(const char *what, const char *name, int64_t opt_ms, int64_t *ms)
{
    if (opt_ms) {
        *ms = opt_ms;
        return 0;
    }
    const char *which = NULL;
    const char *v = ocisbx_setting_lookup(name, NULL, NULL, &which);
    char *end = NULL;
    long long s = v ? strtoll(v, &end, 10) : 0;
    if (!v || !end || *end || s <= 0 || s > 7 * 86400)
        return ocisbx_fail(OCISBX_ECONFIG, "%s: %s %s: not a whole number of seconds from 1 to 604800", what,
                           which ? which : name, v ? OCISBX_SHOWN(v) : "(none)");
    *ms = (int64_t)s * 1000;
    return 0;
}

static int ready_timeout_ms(const ocisbx_backend_options *o, int64_t *ms)
{
    return timeout_setting_ms("create", "ready_timeout", o ? o->ready_timeout_ms : 0, ms);
}

int ocisbx_oci_create_details(const ocisbx_backend_options *o, ocisbx_create_sandbox_details **out,
                              int64_t *ready_ms)
{
    *out = NULL;
    const char *exp = ocisbx_backend_setting(o ? o->expiration : NULL, "expiration");
    int64_t ms = 0;
    int rc = ready_timeout_ms(o, ready_ms); /* checked before anything is created */
    if (rc)
        return rc;
    rc = ocisbx_duration_parse(exp, &ms);
    if (rc)
        return ocisbx_error_wrap("create: expiration: ");
    int64_t minutes = (ms + 59999) / 60000;
    if (minutes < 1 || minutes > OCISBX_EXPIRES_IN_MINUTES_MAX)
        return ocisbx_fail(OCISBX_EINVAL, "create: expiration %s is not between 1 minute and 48 hours", exp);
    char dn[32];
    const char *name = o && o->display_name ? o->display_name : NULL;
    if (!name) {
        char r[9];
        rc = ocisbx_random_id(r, 8);
        if (rc)
            return rc;
        for (char *p = r; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        snprintf(dn, sizeof dn, "ocisbx-%s", r);
        name = dn;
    }
    ocisbx_create_sandbox_details *d = NULL;
    rc = ocisbx_create_sandbox_details_new(&d);
    if (!rc)
        rc = ocisbx_create_sandbox_details_set_display_name(d, name);
    if (!rc)
        rc = ocisbx_create_sandbox_details_set_runtime(
            d, ocisbx_backend_setting(o ? o->runtime : NULL, "runtime"));
    if (!rc)
        rc = ocisbx_create_sandbox_details_set_shape(
            d, ocisbx_backend_setting(o ? o->shape : NULL, "shape"));
    if (!rc)
        rc = ocisbx_create_sandbox_details_set_expires_in_minutes(d, minutes);
    if (!rc && o && o->warmpool)
        rc = ocisbx_create_sandbox_details_set_warmpool_name(d, o->warmpool);
    for (size_t i = 0; !rc && o && i < o->env.n; i++)
        rc = ocisbx_create_sandbox_details_add_env(d, o->env.v[i].name, o->env.v[i].value);
    if (rc)
        ocisbx_create_sandbox_details_free(d);
    else
        *out = d;
    return rc;
}

static int create_sandbox(ocisbx_backend *b, oci_impl *oi, const char *project_id, const ocisbx_backend_options *o)
{
    ocisbx_create_sandbox_details *d = NULL;
    int64_t rt = 0;
    int rc = ocisbx_oci_create_details(o, &d, &rt);
    if (rc)
        return rc;
    if (ocisbx_backend_canceled(b)) {
        ocisbx_create_sandbox_details_free(d);
        return ocisbx_fail(OCISBX_ECANCELED, "create: canceled before the request");
    }
    ocisbx_sandbox *s = NULL;
    rc = ocisbx_client_create_sandbox(oi->client, project_id, d, &s);
    ocisbx_create_sandbox_details_free(d);
    if (rc)
        return rc;
    b->sandbox_id = ocisbx_strdup(ocisbx_sandbox_id(s));
    ocisbx_sandbox_free(s);
    s = NULL;
    if (!b->sandbox_id)
        return ocisbx_fail(OCISBX_EPARSE, "create: the answer has no sandbox id");
    oi->owned = true;
    rc = wait_running(b, oi, rt, ocisbx_backend_wait_poll_ms(b->poll_ms, OCISBX_WAIT_RUNNING), &s);
    if (!rc) {
        rc = ocisbx_sandbox_to_json(s, &oi->sandbox_json);
        ocisbx_sandbox_free(s);
    }
    if (rc) {
        /* Any failure after creation: the sandbox is deleted first. */
        ocisbx_error_saved *sv = ocisbx_error_save();
        int drc = delete_sandbox(oi, b->sandbox_id);
        ocisbx_error_restore(sv);
        if (drc)
            ocisbx_error_append(" (and deleting sandbox %s failed too)", b->sandbox_id);
        oi->owned = false;
    }
    return rc;
}

int ocisbx_backend_oci_open(const char *project_id, const char *sandbox_id, const ocisbx_backend_options *o,
                            ocisbx_backend **out)
{
    ocisbx_backend *b = calloc(1, sizeof *b);
    oci_impl *oi = calloc(1, sizeof *oi);
    char *cfg_region = NULL, *region = NULL;
    if (!b || !oi) {
        free(b);
        free(oi);
        return ocisbx_fail_nomem();
    }
    b->impl = oi;
    int rc = ocisbx_backend_init_common(b, &oci_vt, o);
    if (!rc) {
        if (o && o->client) {
            oi->client = o->client;
        } else {
            rc = ocisbx_oci_build_client(o, &oi->client, &cfg_region);
            oi->own_client = rc == 0;
        }
        b->client = oi->client;
    }
    if (!rc) /* checked at open: a close must not find it wrong */
        rc = timeout_setting_ms("backend", "stop_timeout", o ? o->stop_timeout_ms : 0, &b->stop_timeout_ms);
    if (!rc && ocisbx_backend_poll_interval_ms(o, &b->poll_ms))
        rc = ocisbx_error_wrap("backend: ");
    if (!rc) {
        b->root = ocisbx_strdup("/workspace");
        if (!b->root)
            rc = ocisbx_fail_nomem();
    }
    if (!rc) {
        if (project_id) {
            rc = create_sandbox(b, oi, project_id, o);
        } else if (!(b->sandbox_id = ocisbx_strdup(sandbox_id))) {
            rc = ocisbx_fail_nomem(); /* no request: the first operation shows a missing sandbox */
        }
    }
    if (!rc) {
        region = label_region(o, oi->client, cfg_region);
        b->label = region ? ocisbx_asprintf("oci-sandbox:%s/%s", region, b->sandbox_id) : NULL;
        if (!b->label)
            rc = ocisbx_fail_nomem();
    }
    free(region);
    free(cfg_region);
    if (rc) {
        b->closed = true;
        ocisbx_backend_free(b);
        return rc;
    }
    *out = b;
    return 0;
}
