/* The engine's operations as state machines whose steps are requests:
 * create (POST, polls until RUNNING, DELETE after any failure), close
 * (state, stop, polls until STOPPED, DELETE; a 404 on the way ends the
 * wait, only the delete's 404 means gone),
 * and cancel. The exec: exec.c; write and read: files.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "ocisbx/util.h"

#define FIRST_POLL_MS 100 /* polls start at this and double up to the poll interval */
#define CANCEL_ANSWER_MS 15000 /* a canceled create waits this long at most for its POST's answer */

enum { C_POST, C_POLL, C_DELETE, K_WAIT, K_STATE, K_STOP, K_POLL, K_DELETE, SOON = ENG_STEP_SOON };

/* ---- the operations' list and their end ---- */
eng_op *eng_op_new(ocisbx_engine *e, eng_kind kind, void *ud)
{
    eng_op *op = calloc(1, sizeof *op);
    if (!op)
        return NULL;
    op->e = e;
    op->kind = kind;
    op->ud = ud;
    op->id = e->next_id++;
    op->next = e->ops;
    if (e->ops)
        e->ops->prev = op;
    e->ops = op;
    e->n_ops++;
    return op;
}

static void op_unlink_free(eng_op *op)
{
    ocisbx_engine *e = op->e;
    if (op->prev)
        op->prev->next = op->next;
    else
        e->ops = op->next;
    if (op->next)
        op->next->prev = op->prev;
    e->n_ops--;
    eng_req_drop(op->req);
    ocisbx_exec_wire_free(op->wire);
    ocisbx_exec_options_free(op->xo);
    eng_file_free(op->file);
    eng_stream_free(op->stream);
    if (op->err)
        ocisbx_error_restore(op->err); /* frees it */
    free(op);
}

void eng_op_abandon(eng_op *op)
{
    ocisbx_error_saved *sv = ocisbx_error_save();
    op_unlink_free(op);
    ocisbx_error_restore(sv);
}

/* Keeps a failure (the thread's error) for the operation's end. */
void eng_op_keep(eng_op *op, int rc)
{
    if (op->rc)
        return;
    op->rc = rc;
    op->err = ocisbx_error_save();
}

static void close_begin(eng_op *op);

/* Whether an operation of the sandbox other than its close is still to end. */
static bool sandbox_busy(const ocisbx_engine_sandbox *sb)
{
    for (const eng_op *o = sb->e->ops; o; o = o->next)
        if (o->sb == sb && o->kind != ENG_CLOSE && o->step != SOON)
            return true;
    return false;
}

/* A close that waits for the sandbox's other operations starts once the
 * last of them has ended. */
static void close_when_idle(ocisbx_engine_sandbox *sb)
{
    if (!sb || !sb->closing || sandbox_busy(sb))
        return;
    for (eng_op *o = sb->e->ops; o; o = o->next)
        if (o->sb == sb && o->kind == ENG_CLOSE && o->step == K_WAIT) {
            close_begin(o);
            return;
        }
}

/* The end: the callback with the thread's error set to the operation's. */
void eng_op_end(eng_op *op, int rc, ocisbx_exec_result *res)
{
    ocisbx_engine_sandbox *sb = op->sb;
    if (op->err) {
        ocisbx_error_restore(op->err);
        op->err = NULL;
    } else if (rc == 0) {
        ocisbx_error_clear();
    }
    eng_kind kind = op->kind;
    ocisbx_engine_create_fn cf = op->create_fn;
    ocisbx_engine_exec_fn xf = op->exec_fn;
    ocisbx_engine_close_fn kf = op->close_fn;
    void *ud = op->ud;
    bool quiet = op->e->freeing; /* ocisbx_engine_free's run: no callbacks */
    eng_file *f = op->file;
    op->file = NULL;
    ocisbx_error_saved *sv = ocisbx_error_save();
    op_unlink_free(op);
    ocisbx_error_restore(sv);
    if (kind != ENG_CLOSE && kind != ENG_CREATE)
        close_when_idle(sb);
    if (kind == ENG_WRITE || kind == ENG_READ || kind == ENG_TEXT) {
        if (quiet)
            eng_file_free(f);
        else
            eng_file_end(f, kind, rc, ud);
    } else if (kind == ENG_CREATE) {
        if (!quiet)
            cf(rc, rc ? NULL : sb, ud);
        if (rc)
            eng_sandbox_free(sb);
    } else if (kind == ENG_EXEC) {
        if (quiet)
            ocisbx_exec_result_free(res);
        else
            xf(rc, res, ud);
    } else {
        if (!quiet)
            kf(rc, ud);
        eng_sandbox_free(sb);
    }
}

/* An end that is due now but must come from the loop (a start or a
 * cancel outside it): run by eng_ops_due. */
void eng_op_soon(eng_op *op)
{
    eng_req_drop(op->req);
    op->step = SOON;
    op->until = 0;
}

void eng_ops_due(ocisbx_engine *e)
{
    for (;;) {
        eng_op *op = e->ops;
        while (op && op->step != SOON)
            op = op->next;
        if (!op)
            return;
        eng_op_end(op, op->rc, NULL);
    }
}

int eng_ops_soon(const ocisbx_engine *e)
{
    for (const eng_op *op = e->ops; op; op = op->next)
        if (op->step == SOON)
            return 1;
    return 0;
}

/* ---- requests ---- */
static int64_t poll_delay(eng_op *op)
{
    int64_t top = ocisbx_backend_wait_poll_ms(op->e->bo->poll_interval_ms,
                                              op->kind == ENG_CLOSE ? OCISBX_WAIT_STOPPED : OCISBX_WAIT_RUNNING);
    int64_t d = FIRST_POLL_MS;
    for (int i = 0; i < op->polls && d < top; i++)
        d *= 2;
    op->polls++;
    return d < top ? d : top;
}

int eng_queue_route(eng_op *op, ocisbx_op route, const ocisbx_model *body, int64_t delay,
                    void (*done)(eng_req *q, int rc, ocisbx_http_response *resp), eng_req **out)
{
    ocisbx_engine *e = op->e;
    ocisbx_param p[] = {{route == OCISBX_OP_CREATE_SANDBOX ? "projectId" : "sandboxId",
                         route == OCISBX_OP_CREATE_SANDBOX ? e->project_id : op->sb->id}};
    ocisbx_http_request *r = NULL;
    int rc = ocisbx_client_request(e->client, route, p, 1, body, &r);
    if (!rc)
        rc = eng_req_queue(e, op, r, ocisbx_time_monotonic_ms() + delay, done, out);
    return rc;
}

/* The sandbox of an answer; its state in *state (malloc'd, may be NULL). */
static int answer_sandbox(const ocisbx_http_response *resp, ocisbx_sandbox **out)
{
    size_t len = 0;
    const char *b = ocisbx_http_response_body(resp, &len);
    int rc = ocisbx_sandbox_from_json(b, len, out);
    if (rc)
        ocisbx_error_wrap("(opc-request-id: %s) ", ocisbx_http_response_request_id(resp));
    return rc;
}

/* ---- create ---- */
static void create_delete_done(eng_req *q, int rc, ocisbx_http_response *resp);
static void create_polled(eng_req *q, int rc, ocisbx_http_response *resp);

/* A failure after the create was answered: the sandbox is deleted first. */
static void create_fail(eng_op *op, int rc)
{
    eng_op_keep(op, rc);
    eng_req_drop(op->req);
    op->step = C_DELETE;
    int qrc = eng_queue_route(op, OCISBX_OP_DELETE_SANDBOX, NULL, 0, create_delete_done, NULL);
    if (qrc) {
        ocisbx_error_restore(op->err);
        op->err = NULL;
        ocisbx_error_wrap("(and deleting sandbox %s failed too) ", op->sb->id);
        op->err = ocisbx_error_save();
        eng_op_end(op, op->rc, NULL);
    }
}

static void create_delete_done(eng_req *q, int rc, ocisbx_http_response *resp)
{
    eng_op *op = q->op;
    ocisbx_http_response_free(resp);
    op->sb->owned = false;
    if (rc && rc != OCISBX_ENOTFOUND) {
        ocisbx_error_restore(op->err);
        op->err = NULL;
        ocisbx_error_wrap("(and deleting sandbox %s failed too) ", op->sb->id);
        op->err = ocisbx_error_save();
    }
    eng_op_end(op, op->rc, NULL);
}

static void create_answered(eng_req *q, int rc, ocisbx_http_response *resp)
{
    eng_op *op = q->op;
    ocisbx_sandbox *s = NULL;
    if (!rc)
        rc = answer_sandbox(resp, &s);
    const char *id = s ? ocisbx_sandbox_id(s) : NULL;
    if (!rc && !id)
        rc = ocisbx_fail(OCISBX_EPARSE, "create: the answer has no sandbox id");
    if (!rc && !(op->sb->id = ocisbx_strdup(id)))
        rc = ocisbx_fail_nomem();
    ocisbx_sandbox_free(s);
    ocisbx_http_response_free(resp);
    if (rc) {
        eng_op_keep(op, rc);
        eng_op_end(op, rc, NULL);
        return;
    }
    op->sb->owned = true;
    if (op->canceled) {
        create_fail(op, ocisbx_fail(OCISBX_ECANCELED, "create: canceled"));
        return;
    }
    op->step = C_POLL;
    op->until = ocisbx_time_monotonic_ms() + op->e->ready_ms;
    rc = eng_queue_route(op, OCISBX_OP_GET_SANDBOX, NULL, poll_delay(op), create_polled, NULL);
    if (rc)
        create_fail(op, rc);
}

static void create_polled(eng_req *q, int rc, ocisbx_http_response *resp)
{
    eng_op *op = q->op;
    ocisbx_sandbox *s = NULL;
    if (!rc)
        rc = answer_sandbox(resp, &s);
    ocisbx_http_response_free(resp);
    if (rc) {
        create_fail(op, ocisbx_error_wrap("create: waiting for RUNNING: "));
        return;
    }
    const char *st = ocisbx_sandbox_lifecycle_state(s);
    const char *det = ocisbx_sandbox_lifecycle_details(s);
    if (st && strcmp(st, "RUNNING") == 0) {
        ocisbx_sandbox_free(s);
        rc = eng_sandbox_backend(op->sb);
        if (rc)
            create_fail(op, rc);
        else
            eng_op_end(op, 0, NULL);
        return;
    }
    if (st && (strcmp(st, "FAILED") == 0 || strcmp(st, "DELETED") == 0))
        rc = ocisbx_fail(OCISBX_ECONFLICT, "create: the sandbox became %s while waiting for RUNNING%s%.300s", st,
                         det ? ": " : "", det ? det : "");
    else if (ocisbx_time_monotonic_ms() >= op->until)
        rc = ocisbx_fail(OCISBX_ETIMEOUT, "create: the sandbox was not RUNNING within %lld ms",
                         (long long)op->e->ready_ms);
    ocisbx_sandbox_free(s);
    if (!rc)
        rc = eng_queue_route(op, OCISBX_OP_GET_SANDBOX, NULL, poll_delay(op), create_polled, NULL);
    if (rc)
        create_fail(op, rc);
}

int ocisbx_engine_create_sandbox(ocisbx_engine *e, ocisbx_engine_create_fn fn, void *user_data,
                                 ocisbx_engine_op *id)
{
    if (id)
        *id = 0;
    if (!e || !fn)
        return ocisbx_fail(OCISBX_EINVAL, "engine create: engine and callback are required");
    char vars[160];
    if (!e->project_id)
        return ocisbx_fail(OCISBX_ECONFIG, "engine create: no project id (give one or set %s)",
                           ocisbx_setting_variables("project_id", vars, sizeof vars));
    ocisbx_create_sandbox_details *d = NULL;
    int64_t ready = 0;
    int rc = ocisbx_oci_create_details(e->bo, &d, &ready);
    if (!rc)
        rc = ocisbx_create_details_normalize((ocisbx_model *)(void *)d);
    if (rc) {
        ocisbx_create_sandbox_details_free(d);
        return rc;
    }
    eng_op *op = eng_op_new(e, ENG_CREATE, user_data);
    ocisbx_engine_sandbox *sb = op ? eng_sandbox_new(e) : NULL;
    eng_req *q = NULL;
    if (!op || !sb) {
        rc = ocisbx_fail_nomem();
    } else {
        op->sb = sb;
        op->create_fn = fn;
        op->step = C_POST;
        rc = eng_queue_route(op, OCISBX_OP_CREATE_SANDBOX, (const ocisbx_model *)(const void *)d, 0, create_answered, &q);
    }
    ocisbx_create_sandbox_details_free(d);
    if (rc || !q) {
        eng_sandbox_free(sb);
        if (op)
            eng_op_abandon(op);
        return rc;
    }
    q->is_create = true;
    if (id)
        *id = op->id;
    eng_kick(e);
    return 0;
}

/* ---- close ---- */
static void close_answered(eng_req *q, int rc, ocisbx_http_response *resp);

/* The sandbox as the close sees it: 1 gone, 2 stopped (or FAILED), 3
 * stopping, 0 running (or anything else), negative: the failure. */
static int close_state(int rc, ocisbx_http_response *resp)
{
    if (rc == OCISBX_ENOTFOUND)
        return 1;
    if (rc)
        return rc;
    ocisbx_sandbox *s = NULL;
    rc = answer_sandbox(resp, &s);
    if (rc)
        return rc;
    const char *st = ocisbx_sandbox_lifecycle_state(s);
    int k = !st ? 0 : !strcmp(st, "DELETED") ? 1 : (!strcmp(st, "STOPPED") || !strcmp(st, "FAILED")) ? 2
            : !strcmp(st, "STOPPING") ? 3 : 0;
    ocisbx_sandbox_free(s);
    return k;
}

static void close_next(eng_op *op, int step, int64_t delay)
{
    op->step = step;
    ocisbx_model *body = NULL;
    ocisbx_op route = step == K_DELETE ? OCISBX_OP_DELETE_SANDBOX
                      : step == K_STOP ? OCISBX_OP_STOP_SANDBOX
                                       : OCISBX_OP_GET_SANDBOX;
    int rc = 0;
    if (step == K_STOP) {
        rc = ocisbx_model_new_empty(&ocisbx_md_stop_details, &body);
        if (!rc)
            rc = ocisbx_model_put_bool(body, "isForce", false);
    }
    if (!rc)
        rc = eng_queue_route(op, route, body, delay, close_answered, NULL);
    ocisbx_model_free(body);
    if (rc) {
        eng_op_keep(op, rc);
        eng_op_end(op, rc, NULL);
    }
}

/* The delete's answer: the close's result. */
static void close_deleted(eng_op *op, int rc)
{
    const char *id = op->sb->id;
    if (rc == OCISBX_ENOTFOUND)
        rc = 0;
    if (rc == 0)
        op->sb->owned = false;
    if (op->err) {
        ocisbx_error_restore(op->err);
        op->err = NULL;
        rc = rc ? ocisbx_error_append(" (and deleting sandbox %s failed too)", id)
                : ocisbx_error_append(" (sandbox %s deleted anyway)", id);
    } else if (rc) {
        rc = ocisbx_error_wrap("close: deleting sandbox %s: ", id);
    }
    if (rc)
        op->err = ocisbx_error_save();
    eng_op_end(op, rc, NULL);
}

static void close_answered(eng_req *q, int rc, ocisbx_http_response *resp)
{
    eng_op *op = q->op;
    const char *id = op->sb->id;
    int step = op->step;
    if (step == K_DELETE) {
        ocisbx_http_response_free(resp);
        close_deleted(op, rc);
        return;
    }
    int k = step == K_STOP ? (rc == OCISBX_ENOTFOUND ? 1 : rc == OCISBX_ECONFLICT ? 3 : rc ? rc : 3)
                           : close_state(rc, resp);
    ocisbx_http_response_free(resp);
    if (k == 1) { /* gone, says the state or the stop: not trusted, the delete goes anyway */
        close_next(op, K_DELETE, 0);
        return;
    }
    if (k < 0) { /* the delete comes without a stop, the failure kept */
        eng_op_keep(op, step == K_STOP ? ocisbx_error_wrap("close: stopping sandbox %s: ", id)
                                : ocisbx_error_wrap("close: waiting for sandbox %s to stop: ", id));
        close_next(op, K_DELETE, 0);
    } else if (k == 2) {
        close_next(op, K_DELETE, 0);
    } else if (k == 0 && step == K_STATE) {
        close_next(op, K_STOP, 0);
    } else {
        if (step != K_POLL)
            op->until = ocisbx_time_monotonic_ms() + op->sb->b->stop_timeout_ms;
        if (step == K_POLL && ocisbx_time_monotonic_ms() >= op->until) {
            eng_op_keep(op, ocisbx_fail(OCISBX_ETIMEOUT, "close: sandbox %s was not STOPPED within %lld ms", id,
                                 (long long)op->sb->b->stop_timeout_ms));
            close_next(op, K_DELETE, 0);
        } else {
            close_next(op, K_POLL, poll_delay(op));
        }
    }
}

static void close_begin(eng_op *op)
{
    if (op->sb->owned)
        close_next(op, K_STATE, 0);
    else
        eng_op_soon(op); /* attached: forgotten, no request */
}

static void cancel_op(eng_op *op);

int ocisbx_engine_close_sandbox(ocisbx_engine *e, ocisbx_engine_sandbox *sb, ocisbx_engine_close_fn fn,
                                void *user_data, ocisbx_engine_op *id)
{
    if (id)
        *id = 0;
    if (!e || !sb || !fn)
        return ocisbx_fail(OCISBX_EINVAL, "engine close: engine, sandbox and callback are required");
    if (sb->closing)
        return ocisbx_fail(OCISBX_ECONFLICT, "engine close: sandbox %s is closing already", sb->id ? sb->id : "");
    if (!sb->b)
        return ocisbx_fail(OCISBX_ECONFLICT, "engine close: the sandbox's create has not finished");
    for (eng_op *o = e->ops; o; o = o->next)
        if (o->sb == sb && o->kind != ENG_CLOSE)
            cancel_op(o);
    eng_op *op = eng_op_new(e, ENG_CLOSE, user_data);
    if (!op)
        return ocisbx_fail_nomem();
    op->sb = sb;
    op->close_fn = fn;
    sb->closing = true;
    if (sandbox_busy(sb))
        op->step = K_WAIT; /* a canceled write removes its parts first */
    else
        close_begin(op);
    if (id)
        *id = op->id;
    eng_kick(e);
    return 0;
}

/* ---- cancel ---- */
static void cancel_op(eng_op *op)
{
    if (op->canceled || op->step == SOON || op->kind == ENG_CLOSE)
        return;
    op->canceled = true;
    if (op->kind == ENG_CREATE && op->step == C_POST) {
        if (op->req && op->req->in_flight) {
            /* its answer may be a sandbox: it is deleted then; a server
             * that never answers does not hold the cancel for ever */
            eng_req_deadline(op->req, ocisbx_time_monotonic_ms() + CANCEL_ANSWER_MS);
            return;
        }
        eng_op_keep(op, ocisbx_fail(OCISBX_ECANCELED, "create: canceled before the request"));
        eng_op_soon(op);
    } else if (op->kind == ENG_CREATE && op->step == C_POLL) {
        create_fail(op, ocisbx_fail(OCISBX_ECANCELED, "create: canceled while waiting for RUNNING"));
    } else if (op->kind == ENG_EXEC) {
        eng_exec_cancel(op);
    } else {
        eng_file_cancel(op);
    }
}

int ocisbx_engine_cancel(ocisbx_engine *e, ocisbx_engine_op id)
{
    if (!e)
        return ocisbx_fail(OCISBX_EINVAL, "engine cancel: NULL engine");
    eng_op *op = e->ops;
    while (op && op->id != id)
        op = op->next;
    if (!op)
        return ocisbx_fail(OCISBX_ENOTFOUND, "engine cancel: no pending operation %llu", (unsigned long long)id);
    if (op->kind == ENG_CLOSE)
        return ocisbx_fail(OCISBX_EINVAL, "engine cancel: a close cannot be canceled");
    cancel_op(op);
    eng_kick(e);
    return 0;
}

void ocisbx_engine_cancel_all(ocisbx_engine *e)
{
    if (!e)
        return;
    for (eng_op *op = e->ops; op; op = op->next)
        cancel_op(op);
    eng_kick(e);
}
