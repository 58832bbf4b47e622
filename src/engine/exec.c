/* The engine's exec: the backend's exec wrapper run as the blocking exec
 * runs it, over one RunSandboxCommandAndStream whose events go to the
 * backend's own client half as they arrive (ocisbx_exec_wire_*: the live
 * output callback, the head and tail, the trailer); a stream cut before
 * FINISHED resumes with StreamSandboxCommandEvents from the last seq. A
 * service without runAndStream (404, 405 or 501 before any event): one
 * runAndWait, the output with the answer.
 *
 * A cancel (or the client's deadline, or a stop asked by the output
 * callback) ends the command in the sandbox as the blocking exec does:
 * CancelSandboxCommand; a cancel then polls GetSandboxCommand until the
 * command has finished (at most the kill grace and 5 s) before its
 * callback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/events.h"
#include "engine/engine_int.h"
#include "ocisbx/util.h"

#define STDERR_TEXT_MAX 1024
#define RESUME_LIMIT 5      /* connections in a row without a new event */
#define KILL_WAIT_S 5       /* after the kill grace, for the command's end */

enum { X_RUN = 20, X_WAIT, X_KILL, X_GONE };

struct eng_stream {
    ocisbx_event_parser parser;
    ocisbx_event_tracker tracker;
    char *cmd_id;
    bool has_exit;
    int exit_code;
    ocisbx_buf err; /* the first KiB of stderr, for messages */
    bool events;    /* an event came (on any connection) */
    bool progress;  /* a new event came on this connection */
    bool stopped;   /* the output callback asked to stop */
    bool cancel_wanted; /* a cancel came before the command's id */
    bool wait_gone; /* the kill is a cancel's: wait for the command's end */
    int no_progress;
    int perr;                  /* a parse failure in the sink */
    ocisbx_error_saved *saved; /* its message */
};

void eng_stream_free(eng_stream *st)
{
    if (!st)
        return;
    ocisbx_event_parser_release(&st->parser);
    ocisbx_buf_free(&st->err);
    if (st->saved)
        ocisbx_error_restore(st->saved); /* frees it (the callers keep the thread's error) */
    free(st->cmd_id);
    free(st);
}

static int copy_exec_options(const ocisbx_exec_options *s, ocisbx_exec_options **out)
{
    int rc = ocisbx_exec_options_new(out);
    if (rc || !s)
        return rc;
    ocisbx_exec_options *d = *out;
    d->timeout_ms = s->timeout_ms;
    d->max_output = s->max_output;
    d->on_output = s->on_output;
    d->on_output_ud = s->on_output_ud;
    d->yield_ms = s->yield_ms;
    if (s->cwd && !(d->cwd = ocisbx_strdup(s->cwd)))
        rc = ocisbx_fail_nomem();
    for (size_t i = 0; !rc && i < s->env.n; i++)
        rc = ocisbx_env_list_add(&d->env, s->env.v[i].name, s->env.v[i].value, s->env.v[i].secret);
    return rc;
}

/* The result through the wire: rc 0 (the trailer parsed) or ETIMEOUT (the
 * client's deadline: what came of the head, timed out). */
static void exec_finish(eng_op *op, int rc, ocisbx_run_res *res)
{
    ocisbx_exec_result *out = NULL;
    rc = ocisbx_exec_wire_end(op->wire, rc, res, &out);
    op->wire = NULL;
    if (rc)
        eng_op_keep(op, rc);
    eng_op_end(op, rc, out);
}

/* ---- the command ended in the sandbox: cancel, then (a cancel's) its end ---- */
static void kill_answered(eng_req *q, int rc, ocisbx_http_response *resp);

static int command_request(eng_op *op, ocisbx_op route, int64_t delay)
{
    ocisbx_param p[] = {{"sandboxId", op->sb->id}, {"commandId", op->stream->cmd_id}};
    ocisbx_http_request *r = NULL;
    int rc = ocisbx_client_request(op->e->client, route, p, 2, NULL, &r);
    if (!rc)
        rc = eng_req_queue(op->e, op, r, ocisbx_time_monotonic_ms() + delay, kill_answered, NULL);
    return rc;
}

/* The end after the kill: a timeout's result, else the failure kept. */
static void kill_end(eng_op *op)
{
    if (op->rc == OCISBX_ETIMEOUT && op->wire) {
        ocisbx_error_restore(op->err);
        op->err = NULL;
        op->rc = 0;
        ocisbx_run_res res = {0};
        exec_finish(op, OCISBX_ETIMEOUT, &res);
        free(res.command_id);
        return;
    }
    eng_op_end(op, op->rc, NULL);
}

/* rc kept (the thread's error): the command canceled in the sandbox, then
 * the end. */
static void kill_begin(eng_op *op, int rc)
{
    eng_op_keep(op, rc);
    eng_req_drop(op->req);
    op->step = X_KILL;
    op->until = ocisbx_time_monotonic_ms() + (int64_t)(op->sb->b->kill_grace_s + KILL_WAIT_S) * 1000;
    if (command_request(op, OCISBX_OP_CANCEL_COMMAND, 0) != 0)
        eng_op_soon(op); /* the failure kept is the answer; the end from the loop */
}

static void kill_answered(eng_req *q, int rc, ocisbx_http_response *resp)
{
    eng_op *op = q->op;
    ocisbx_command *cm = NULL;
    bool ended = rc == OCISBX_ECONFLICT || rc == OCISBX_ENOTFOUND; /* finished already, or gone */
    if (op->step == X_GONE && !rc) {
        size_t len = 0;
        const char *b = ocisbx_http_response_body(resp, &len);
        if (ocisbx_command_from_json(b, len, &cm) == 0) {
            int st = ocisbx_command_state(cm);
            ended = st == OCISBX_COMMAND_FINISHED || st == OCISBX_COMMAND_FINISHED_NO_EXIT_CODE;
        }
        ocisbx_command_free(cm);
    }
    ocisbx_http_response_free(resp);
    if (rc && !ended)
        ocisbx_log(OCISBX_LOG_WARN, "engine exec: %s of command %s: %s",
                   op->step == X_KILL ? "the cancel" : "waiting for the end", op->stream->cmd_id,
                   ocisbx_error_message(ocisbx_error_last()));
    if (ended || !op->stream->wait_gone || (rc && op->step == X_KILL) ||
        ocisbx_time_monotonic_ms() >= op->until) {
        kill_end(op);
        return;
    }
    op->step = X_GONE;
    if (command_request(op, OCISBX_OP_GET_COMMAND,
                        ocisbx_backend_wait_poll_ms(op->e->bo->poll_interval_ms, OCISBX_WAIT_KILLED)) != 0)
        kill_end(op);
}

/* ---- the stream ---- */
static int on_event_text(const char *json, size_t len, void *ud)
{
    eng_op *op = ud;
    eng_stream *st = op->stream;
    ocisbx_model *m = NULL;
    if (ocisbx_model_parse(&ocisbx_md_command_event, json, len, &m) != 0) {
        st->perr = ocisbx_error_wrap("event stream: ");
        st->saved = st->saved ? st->saved : ocisbx_error_save();
        return 1;
    }
    const ocisbx_command_event *ev = (const ocisbx_command_event *)(const void *)m;
    const char *cid = ocisbx_command_event_command_id(ev);
    int64_t seq = 0;
    ocisbx_model_int(m, "seq", &seq);
    int kind = ocisbx_command_event_kind(ev), stop = 0, x = 0;
    if (cid && !st->cmd_id && !(st->cmd_id = ocisbx_strdup(cid)))
        stop = 1;
    if (!stop && ocisbx_event_tracker_is_gap(&st->tracker, seq)) {
        stop = 1; /* resumed from the last contiguous seq */
    } else if (!stop && ocisbx_event_tracker_accept(&st->tracker, seq, kind == OCISBX_EVENT_FINISHED)) {
        const ocisbx_run_req *req = ocisbx_exec_wire_req(op->wire);
        size_t n = 0;
        const char *d = ocisbx_command_event_data(ev, &n);
        st->events = st->progress = true;
        if (kind == OCISBX_EVENT_STDOUT && n && req->on_stdout(d, n, req->user_data))
            st->stopped = true;
        if (kind == OCISBX_EVENT_STDERR && n) {
            size_t room = STDERR_TEXT_MAX > st->err.len ? STDERR_TEXT_MAX - st->err.len : 0;
            if (room)
                (void)ocisbx_buf_append(&st->err, d, n < room ? n : room);
            if (req->on_stderr(d, n, req->user_data))
                st->stopped = true;
        }
        if (kind == OCISBX_EVENT_FINISHED && ocisbx_command_event_has_exit_code(ev, &x) == 1) {
            st->has_exit = true;
            st->exit_code = x;
        }
        stop = st->stopped || ocisbx_event_tracker_done(&st->tracker);
    }
    ocisbx_model_free(m);
    return stop || (st->cancel_wanted && st->cmd_id);
}

static int stream_bytes(const void *data, size_t len, void *ud)
{
    eng_op *op = ud;
    eng_stream *st = op->stream;
    int rc = ocisbx_event_parser_feed(&st->parser, data, len);
    if (rc < 0 && !st->perr) {
        st->perr = rc;
        st->saved = st->saved ? st->saved : ocisbx_error_save();
    }
    return rc != 0;
}

static int stream_headers(int status, const ocisbx_headers *headers, void *ud)
{
    eng_op *op = ud;
    eng_stream *st = op->stream;
    if (status < 200 || status >= 300)
        return 0;
    int format = ocisbx_stream_answer_format(ocisbx_headers_get(headers, "content-type"));
    if (format < 0) {
        st->perr = format;
        st->saved = st->saved ? st->saved : ocisbx_error_save();
        return 1;
    }
    ocisbx_event_parser_set_format(&st->parser, format);
    return 0;
}

static void stream_done(eng_req *q, int rc, ocisbx_http_response *resp);

/* The first connection (runAndStream), or a resumption (the events from
 * the last seq delivered on). */
static int stream_request(eng_op *op)
{
    eng_stream *st = op->stream;
    const ocisbx_run_req *req = ocisbx_exec_wire_req(op->wire);
    ocisbx_http_request *r = NULL;
    int rc = 0;
    if (!st->cmd_id) {
        ocisbx_run_command_details *d = NULL;
        rc = ocisbx_oci_run_details(req, &d);
        ocisbx_param p[] = {{"sandboxId", op->sb->id}};
        if (!rc)
            rc = ocisbx_client_request(op->e->client, OCISBX_OP_RUN_COMMAND_AND_STREAM, p, 1,
                                       (const ocisbx_model *)(const void *)d, &r);
        ocisbx_run_command_details_free(d);
    } else {
        char from[24];
        snprintf(from, sizeof from, "%lld", (long long)ocisbx_event_tracker_resume_from(&st->tracker));
        ocisbx_param p[] = {{"sandboxId", op->sb->id}, {"commandId", st->cmd_id}, {"fromSeq", from}};
        rc = ocisbx_client_request(op->e->client, OCISBX_OP_STREAM_COMMAND_EVENTS, p, 3, NULL, &r);
    }
    if (!rc)
        rc = ocisbx_http_request_set_streaming(r, 1);
    if (!rc)
        rc = ocisbx_http_request_add_header(r, "accept", op->e->client->prefer_ndjson ? "application/x-ndjson"
                                                                                       : "text/event-stream");
    if (!rc)
        rc = ocisbx_http_request_set_sink_callback(r, stream_bytes, op);
    if (!rc)
        rc = ocisbx_http_request_set_headers_callback(r, stream_headers, op);
    eng_req *q = NULL;
    if (!rc) {
        int64_t delay = st->no_progress > 0 ? 100 << (st->no_progress < 5 ? st->no_progress : 5) : 0;
        rc = eng_req_queue(op->e, op, r, ocisbx_time_monotonic_ms() + delay, stream_done, &q);
        r = NULL;
    }
    ocisbx_http_request_free(r);
    if (rc)
        return rc;
    st->progress = false;
    /* the stream ends with the command: the deadline bounds it */
    q->deadline_at = req->deadline_ms;
    q->idle_ms = req->deadline_ms - ocisbx_time_monotonic_ms() + 1000;
    op->step = X_RUN;
    return 0;
}

static int exec_wait_request(eng_op *op);

/* The stream's end: the result, a resumption, the fallback, or a kill. */
static void stream_done(eng_req *q, int rc, ocisbx_http_response *resp)
{
    eng_op *op = q->op;
    eng_stream *st = op->stream;
    int status = resp ? ocisbx_http_response_status(resp) : 0;
    ocisbx_http_response_free(resp);
    bool late = rc == OCISBX_ETIMEOUT && ocisbx_time_monotonic_ms() >= q->deadline_at - 20;
    if (!st->perr && !st->stopped && rc != OCISBX_ECANCELED && !ocisbx_event_tracker_done(&st->tracker))
        (void)ocisbx_event_parser_finish(&st->parser); /* a last NDJSON line without its newline */
    else
        (void)ocisbx_event_parser_finish(&st->parser);
    if (ocisbx_event_tracker_done(&st->tracker) && !st->stopped) {
        ocisbx_run_res res = {0};
        res.has_exit = st->has_exit;
        res.exit_code = st->exit_code;
        res.command_id = st->cmd_id;
        st->cmd_id = NULL;
        if (st->err.len)
            res.stderr_text = ocisbx_strndup(st->err.data, st->err.len);
        exec_finish(op, 0, &res);
        free(res.command_id);
        free(res.stderr_text);
        return;
    }
    if (st->perr) {
        ocisbx_error_restore(st->saved);
        st->saved = NULL;
        rc = st->perr;
    } else if (st->stopped) {
        rc = ocisbx_fail(OCISBX_ECANCELED, "exec: canceled by the output callback");
    } else if (st->cancel_wanted || op->canceled) {
        rc = ocisbx_fail(OCISBX_ECANCELED, "exec: canceled");
        st->wait_gone = true;
    } else if (late) {
        rc = ocisbx_fail(OCISBX_ETIMEOUT, "command still running at the client's deadline: canceled");
    } else if (rc && !st->events && !st->cmd_id && (status == 404 || status == 405 || status == 501)) {
        ocisbx_log(OCISBX_LOG_INFO, "engine: no RunSandboxCommandAndStream here (HTTP %d): run and wait", status);
        op->sb->no_stream = true;
        eng_stream_free(op->stream);
        op->stream = NULL;
        if ((rc = exec_wait_request(op)) != 0) {
            eng_op_keep(op, rc);
            eng_op_end(op, rc, NULL);
        }
        return;
    } else if ((rc == 0 || rc == OCISBX_ETRANSPORT || rc == OCISBX_ETIMEOUT) && st->cmd_id && status < 300) {
        st->no_progress = st->progress ? 0 : st->no_progress + 1;
        if (st->no_progress <= RESUME_LIMIT && (rc = stream_request(op)) == 0)
            return; /* resumed */
        if (!rc)
            rc = ocisbx_fail(OCISBX_ETRANSPORT,
                             "exec: the event stream of command %s ended before FINISHED %d times in a row",
                             st->cmd_id, st->no_progress);
    } else if (!rc) {
        rc = ocisbx_fail(OCISBX_ETRANSPORT, "exec: the event stream ended before the command's id");
    }
    if (st->cmd_id) {
        kill_begin(op, rc);
        return;
    }
    eng_op_keep(op, rc);
    eng_op_end(op, rc, NULL);
}

/* ---- without runAndStream: run and wait ---- */
/* The answer of runAndWait: the wrapper's stdout, stderr and status. */
static int exec_answer(eng_op *op, ocisbx_http_response *resp, ocisbx_run_res *res)
{
    size_t len = 0;
    const char *b = ocisbx_http_response_body(resp, &len);
    ocisbx_command *cm = NULL;
    int rc = ocisbx_command_from_json(b, len, &cm);
    if (rc) {
        ocisbx_error_wrap("RunSandboxCommandAndWait (opc-request-id: %s): ", ocisbx_http_response_request_id(resp));
        return rc;
    }
    const char *so = ocisbx_command_stdout(cm), *se = ocisbx_command_stderr(cm);
    size_t sl = ocisbx_command_stdout_len(cm), el = ocisbx_command_stderr_len(cm);
    int x = 0;
    res->has_exit = ocisbx_command_has_exit_code(cm, &x) == 1;
    res->exit_code = x;
    if (ocisbx_command_id(cm) && !(res->command_id = ocisbx_strdup(ocisbx_command_id(cm))))
        rc = ocisbx_fail_nomem();
    if (!rc && se && el && !(res->stderr_text = ocisbx_strndup(se, el < STDERR_TEXT_MAX ? el : STDERR_TEXT_MAX)))
        rc = ocisbx_fail_nomem();
    if (!rc && so)
        rc = ocisbx_exec_wire_stdout(op->wire, so, sl);
    if (!rc && se)
        rc = ocisbx_exec_wire_stderr(op->wire, se, el);
    ocisbx_command_free(cm);
    return rc;
}

static void wait_answered(eng_req *q, int rc, ocisbx_http_response *resp)
{
    eng_op *op = q->op;
    ocisbx_run_res res = {0};
    if (rc == OCISBX_ETIMEOUT && ocisbx_time_monotonic_ms() >= q->deadline_at - 20) {
        exec_finish(op, rc, &res); /* the client's deadline */
    } else if (!rc && (rc = exec_answer(op, resp, &res)) == 0) {
        exec_finish(op, 0, &res);
    } else {
        eng_op_keep(op, rc);
        eng_op_end(op, rc, NULL);
    }
    ocisbx_http_response_free(resp);
    free(res.command_id);
    free(res.stderr_text);
}

static int exec_wait_request(eng_op *op)
{
    int rc = eng_queue_run_wait(op, ocisbx_exec_wire_req(op->wire), wait_answered);
    if (!rc)
        op->step = X_WAIT;
    return rc;
}

int eng_queue_run_wait(eng_op *op, const ocisbx_run_req *req,
                       void (*done)(eng_req *q, int rc, ocisbx_http_response *resp))
{
    ocisbx_run_command_details *d = NULL;
    int rc = ocisbx_oci_run_details(req, &d);
    eng_req *q = NULL;
    if (!rc)
        rc = eng_queue_route(op, OCISBX_OP_RUN_COMMAND_AND_WAIT, (const ocisbx_model *)(const void *)d, 0, done,
                             &q);
    ocisbx_run_command_details_free(d);
    if (rc)
        return rc;
    q->deadline_at = req->deadline_ms;
    q->idle_ms = req->deadline_ms - ocisbx_time_monotonic_ms() + 1000;
    return 0;
}

int ocisbx_engine_exec(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *command,
                       const ocisbx_exec_options *o, ocisbx_engine_exec_fn fn, void *user_data, ocisbx_engine_op *id)
{
    if (id)
        *id = 0;
    if (!e || !sb || !command || !fn)
        return ocisbx_fail(OCISBX_EINVAL, "engine exec: engine, sandbox, command and callback are required");
    if (sb->closing || !sb->b)
        return ocisbx_fail(OCISBX_ECONFLICT, "engine exec: sandbox %s is %s", sb->id ? sb->id : "(none)",
                           sb->closing ? "closing" : "not ready");
    if (o && o->yield_ms > 0)
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "engine exec: a yield is not supported (run it as a job)");
    eng_op *op = eng_op_new(e, ENG_EXEC, user_data);
    if (!op)
        return ocisbx_fail_nomem();
    op->sb = sb;
    op->exec_fn = fn;
    ocisbx_exec_result *none = NULL;
    int rc = copy_exec_options(o, &op->xo);
    if (!rc)
        rc = ocisbx_exec_wire_begin(sb->b, command, op->xo, &op->wire, &none);
    if (!rc && !sb->no_stream) {
        op->stream = calloc(1, sizeof *op->stream);
        if (!op->stream) {
            rc = ocisbx_fail_nomem();
        } else {
            ocisbx_event_parser_init(&op->stream->parser, OCISBX_STREAM_AUTO, on_event_text, op);
            ocisbx_event_tracker_init(&op->stream->tracker, -1, 0);
            rc = stream_request(op);
        }
    } else if (!rc) {
        rc = exec_wait_request(op);
    }
    if (rc) {
        eng_op_abandon(op);
        return rc;
    }
    if (id)
        *id = op->id;
    eng_kick(e);
    return 0;
}

/* ---- cancel ---- */
void eng_exec_cancel(eng_op *op)
{
    eng_stream *st = op->stream;
    if (op->step == X_KILL || op->step == X_GONE)
        return;
    bool in_flight = op->req && op->req->in_flight;
    if (st && st->cmd_id) { /* it runs: ended in the sandbox first */
        st->wait_gone = true;
        kill_begin(op, ocisbx_fail(OCISBX_ECANCELED, "exec: canceled"));
    } else if (st && in_flight) {
        st->cancel_wanted = true; /* the first event names the command: it is ended then */
    } else {
        eng_op_keep(op, ocisbx_fail(OCISBX_ECANCELED, "exec: canceled"));
        eng_op_soon(op);
    }
}
