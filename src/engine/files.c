/* The engine's file operations, as state machines whose steps are
 * requests, on the backend's own pieces (backend/backend_int.h: the
 * chunked write's parts, join and abort, the path-stat refinement) and the
 * api's (api/parts.h: a part's checked WriteSandboxFile, the checked
 * GetSandboxFile):
 *
 *   write: one checked put (up to a part), else the parts one after the
 *          other, then write-join.sh (join, check, rename); after a
 *          failure or a cancel, write-abort.sh removes the parts before
 *          the callback; a failed single put asks path-stat.sh why.
 *   read:  one checked GetSandboxFile to memory or to the caller's sink;
 *          a failure asks path-stat.sh why (a directory, nothing there).
 *
 * Workspace scripts run as one runAndWait each (eng_run_script). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "ocisbx/util.h"

#define STDERR_TEXT_MAX 1024
#define REL_MAX 240 /* "/workspace/" and this fit a part's path (api/parts.h) */

enum { F_PUT = ENG_STEP_FILE, F_JOIN, F_ABORT, F_STAT, F_GET, T_RUN, T_GET, T_RM };

struct eng_file {
    char *rel;       /* the target, workspace-relative */
    char path[256];  /* the target, absolute in the sandbox */
    ocisbx_engine_write_fn write_fn;
    ocisbx_engine_read_fn read_fn;
    /* write */
    ocisbx_chunked_write *w;
    bool chunked;         /* parts, then the join */
    bool more;            /* a part follows the one in flight */
    ocisbx_file_part part; /* the part (or the whole small file) being sent */
    ocisbx_mem_reader body;
    /* read */
    ocisbx_checked_read rd;
    ocisbx_write_fn sink;
    void *sink_ud;
    ocisbx_buf buf; /* no sink: the content; read_text: the window's output */
    /* read_text */
    ocisbx_engine_text_fn text_fn;
    ocisbx_window win;
    ocisbx_capture cap;
    int win_ex;
};

void eng_file_free(eng_file *f)
{
    if (!f)
        return;
    ocisbx_chunked_free(f->w);
    ocisbx_checked_read_release(&f->rd);
    ocisbx_buf_free(&f->buf);
    ocisbx_capture_release(&f->cap);
    free(f->rel);
    free(f);
}

void eng_file_end(eng_file *f, eng_kind kind, int rc, void *ud)
{
    if (kind == ENG_WRITE) {
        f->write_fn(rc, ud);
    } else if (kind == ENG_TEXT) {
        ocisbx_text_result *r = NULL;
        rc = ocisbx_read_window_result(&f->win, f->rel, rc, f->win_ex, f->buf.data, f->buf.len, &r);
        f->text_fn(rc, r, ud);
    } else if (rc) {
        f->read_fn(rc, NULL, 0, ud);
    } else if (f->sink) {
        f->read_fn(0, NULL, (size_t)f->rd.total, ud);
    } else {
        size_t len = f->buf.len;
        unsigned char *data = (unsigned char *)ocisbx_buf_detach(&f->buf);
        if (!data && (data = malloc(1)) != NULL)
            data[0] = 0;
        if (data)
            f->read_fn(0, data, len, ud);
        else
            f->read_fn(ocisbx_fail_nomem(), NULL, 0, ud);
    }
    eng_file_free(f);
}

/* ---- a workspace script: one runAndWait ---- */
static void script_answered(eng_req *q, int rc, ocisbx_http_response *resp)
{
    eng_op *op = q->op;
    ocisbx_run_res res = {0};
    ocisbx_command *cm = NULL;
    if (!rc) {
        size_t len = 0;
        const char *b = ocisbx_http_response_body(resp, &len);
        rc = ocisbx_command_from_json(b, len, &cm);
        if (rc)
            ocisbx_error_wrap("RunSandboxCommandAndWait (opc-request-id: %s): ",
                              ocisbx_http_response_request_id(resp));
    }
    if (!rc) {
        int x = 0;
        res.has_exit = ocisbx_command_has_exit_code(cm, &x) == 1;
        res.exit_code = x;
        const char *se = ocisbx_command_stderr(cm);
        size_t el = ocisbx_command_stderr_len(cm);
        if (se && el && !(res.stderr_text = ocisbx_strndup(se, el < STDERR_TEXT_MAX ? el : STDERR_TEXT_MAX)))
            rc = ocisbx_fail_nomem();
    }
    ocisbx_command_free(cm);
    ocisbx_http_response_free(resp);
    op->script_done(op, rc, &res);
    free(res.command_id);
    free(res.stderr_text);
}

int eng_run_script(eng_op *op, const ocisbx_run_req *req, void (*done)(eng_op *op, int rc, ocisbx_run_res *res))
{
    int rc = eng_queue_run_wait(op, req, script_answered);
    if (!rc)
        op->script_done = done;
    return rc;
}

/* ---- why a put or a get failed: path-stat.sh ---- */
static void stat_done(eng_op *op, int rc, ocisbx_run_res *res)
{
    int ex = -1;
    int src = ocisbx_backend_script_result(rc, res, &ex);
    /* the operation's own failure, kept, unless the script tells better */
    ocisbx_error_restore(op->err);
    op->err = NULL;
    int orc = op->rc;
    op->rc = 0;
    rc = ocisbx_backend_refine_map(op->file->rel, orc, src, ex, op->kind == ENG_READ);
    eng_op_keep(op, rc);
    eng_op_end(op, rc, NULL);
}

/* The operation's failure rc (the thread's error): refined, then the end. */
static void fail_refined(eng_op *op, int rc)
{
    eng_op_keep(op, rc);
    if (!ocisbx_backend_refine_wanted(rc) || op->canceled) {
        eng_op_end(op, op->rc, NULL);
        return;
    }
    const char *args[2];
    ocisbx_run_req req;
    ocisbx_backend_path_stat_req(op->sb->b, op->file->rel, args, &req);
    op->step = F_STAT;
    if (eng_run_script(op, &req, stat_done) != 0)
        eng_op_end(op, op->rc, NULL); /* the failure kept is the answer */
}

/* ---- write ---- */
static void abort_done(eng_op *op, int rc, ocisbx_run_res *res)
{
    ocisbx_error_saved *sv = ocisbx_error_save();
    ocisbx_chunked_abort_result(op->file->w, rc, res);
    ocisbx_error_restore(sv);
    eng_op_end(op, op->rc, NULL);
}

/* A chunked write failed (rc kept): its parts removed, then the end. */
static void write_abort(eng_op *op, int rc)
{
    eng_op_keep(op, rc);
    eng_req_drop(op->req);
    ocisbx_run_req req;
    op->step = F_ABORT;
    if (!ocisbx_chunked_abort_req(op->file->w, &req) || eng_run_script(op, &req, abort_done) != 0)
        eng_op_soon(op); /* the end from the loop: this may be a cancel's call */
}

static void join_done(eng_op *op, int rc, ocisbx_run_res *res)
{
    int ex = 0;
    rc = ocisbx_backend_script_result(rc, res, &ex);
    rc = ocisbx_chunked_join_result(op->file->w, rc, ex);
    if (rc) {
        write_abort(op, rc); /* nothing to remove when the script ran */
        return;
    }
    eng_op_end(op, 0, NULL);
}

static int put_next(eng_op *op);

static void put_answered(eng_req *q, int rc, ocisbx_http_response *resp)
{
    eng_op *op = q->op;
    eng_file *f = op->file;
    if (!rc)
        rc = ocisbx_write_answer_check(resp, f->part.path, f->part.sha256_b64, NULL);
    ocisbx_http_response_free(resp);
    if (!f->chunked) {
        if (rc)
            fail_refined(op, rc);
        else
            eng_op_end(op, 0, NULL);
        return;
    }
    if (!rc && op->canceled)
        rc = ocisbx_fail(OCISBX_ECANCELED, "write /workspace/%s: canceled", f->rel);
    if (!rc && f->more) {
        ocisbx_part p;
        rc = ocisbx_chunked_next(f->w, NULL, &p, &f->more);
        if (!rc) {
            char rel[64];
            ocisbx_chunked_part_rel(f->w, p.index, rel, sizeof rel);
            snprintf(f->part.path, sizeof f->part.path, "/workspace/%s", rel);
            f->part.data = p.data;
            f->part.len = p.len;
            memcpy(f->part.sha256_b64, p.sha256_b64, sizeof f->part.sha256_b64);
            rc = put_next(op);
        }
    } else if (!rc) {
        ocisbx_run_req req;
        op->step = F_JOIN;
        rc = ocisbx_chunked_join_req(f->w, &req);
        if (!rc)
            rc = eng_run_script(op, &req, join_done);
    }
    if (rc)
        write_abort(op, rc);
}

/* The put of f->part. */
static int put_next(eng_op *op)
{
    eng_file *f = op->file;
    ocisbx_http_request *r = NULL;
    op->step = F_PUT;
    int rc = ocisbx_part_request(op->e->client, op->sb->id, &f->part, &f->body, &r);
    if (!rc)
        rc = eng_req_queue(op->e, op, r, 0, put_answered, NULL);
    if (!rc && f->chunked)
        ocisbx_chunked_part_sent(f->w);
    return rc;
}

/* The first part: the whole file when it is one part, else part 0. */
static int write_begin(eng_op *op, const void *data, size_t len)
{
    eng_file *f = op->file;
    ocisbx_part p;
    int rc = ocisbx_chunked_begin(op->sb->b, f->rel, data, len, NULL, NULL, &f->w);
    if (!rc)
        rc = ocisbx_chunked_next(f->w, NULL, &p, &f->more);
    if (rc)
        return rc;
    f->chunked = f->more;
    if (f->chunked) {
        char rel[64];
        ocisbx_chunked_part_rel(f->w, p.index, rel, sizeof rel);
        snprintf(f->part.path, sizeof f->part.path, "/workspace/%s", rel);
    } else {
        snprintf(f->part.path, sizeof f->part.path, "%s", f->path);
    }
    f->part.data = p.data ? p.data : (const unsigned char *)"";
    f->part.len = p.len;
    memcpy(f->part.sha256_b64, p.sha256_b64, sizeof f->part.sha256_b64);
    return put_next(op);
}

/* The checks common to a write and a read, the operation made. */
static int file_op(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *path, eng_kind kind, void *ud,
                   const char *what, eng_op **out)
{
    *out = NULL;
    if (!e || !sb || !path)
        return ocisbx_fail(OCISBX_EINVAL, "engine %s: engine, sandbox, path and callback are required", what);
    if (sb->closing || !sb->b)
        return ocisbx_fail(OCISBX_ECONFLICT, "engine %s: sandbox %s is %s", what, sb->id ? sb->id : "(none)",
                           sb->closing ? "closing" : "not ready");
    char *rel = NULL;
    int rc = ocisbx_backend_rel_path(path, &rel);
    if (rc)
        return rc;
    if (!*rel) {
        free(rel);
        return ocisbx_fail(OCISBX_EISDIR, "%s: /workspace is a directory", what);
    }
    if (strlen(rel) > REL_MAX) {
        free(rel);
        return ocisbx_fail(OCISBX_EINVAL, "engine %s: the path is longer than %d bytes under /workspace", what,
                           REL_MAX);
    }
    eng_file *f = calloc(1, sizeof *f);
    eng_op *op = f ? eng_op_new(e, kind, ud) : NULL;
    if (!op) {
        free(f);
        free(rel);
        return ocisbx_fail_nomem();
    }
    f->rel = rel;
    snprintf(f->path, sizeof f->path, "/workspace/%s", rel);
    op->file = f;
    op->sb = sb;
    *out = op;
    return 0;
}

int ocisbx_engine_write_file(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *path, const void *data,
                             size_t len, ocisbx_engine_write_fn fn, void *user_data, ocisbx_engine_op *id)
{
    if (id)
        *id = 0;
    if (!fn)
        return ocisbx_fail(OCISBX_EINVAL, "engine write: a callback is required");
    if (!data && len)
        return ocisbx_fail(OCISBX_EINVAL, "write: NULL data");
    eng_op *op = NULL;
    int rc = file_op(e, sb, path, ENG_WRITE, user_data, "write", &op);
    if (rc)
        return rc;
    op->file->write_fn = fn;
    rc = write_begin(op, data ? data : "", len);
    if (rc) {
        eng_op_abandon(op);
        return rc;
    }
    if (id)
        *id = op->id;
    eng_kick(e);
    return 0;
}

/* ---- read ---- */
static int to_buf(const void *d, size_t n, void *ud)
{
    return ocisbx_buf_append(ud, d, n) != 0;
}

static void get_answered(eng_req *q, int rc, ocisbx_http_response *resp)
{
    eng_op *op = q->op;
    eng_file *f = op->file;
    rc = ocisbx_checked_read_end(&f->rd, f->path, rc, resp);
    ocisbx_http_response_free(resp);
    if (rc) {
        ocisbx_buf_free(&f->buf);
        fail_refined(op, rc);
        return;
    }
    eng_op_end(op, 0, NULL);
}

int ocisbx_engine_read_file(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *path, ocisbx_write_fn sink,
                            void *sink_user_data, ocisbx_engine_read_fn fn, void *user_data, ocisbx_engine_op *id)
{
    if (id)
        *id = 0;
    if (!fn)
        return ocisbx_fail(OCISBX_EINVAL, "engine read: a callback is required");
    eng_op *op = NULL;
    int rc = file_op(e, sb, path, ENG_READ, user_data, "read", &op);
    if (rc)
        return rc;
    eng_file *f = op->file;
    f->read_fn = fn;
    f->sink = sink;
    f->sink_ud = sink_user_data;
    op->step = F_GET;
    ocisbx_http_request *r = NULL;
    rc = ocisbx_checked_read_request(e->client, sb->id, f->path, ocisbx_checked_read_max(e->client, sink == NULL),
                                     sink ? sink : to_buf, sink ? sink_user_data : (void *)&f->buf, &f->rd, &r);
    if (!rc)
        rc = eng_req_queue(e, op, r, 0, get_answered, NULL);
    if (rc) {
        eng_op_abandon(op);
        return rc;
    }
    if (id)
        *id = op->id;
    eng_kick(e);
    return 0;
}

/* ---- read_text: read-window.sh, its output read back, then removed ---- */
static void text_removed(eng_op *op, int rc, ocisbx_run_res *res)
{
    (void)rc;
    (void)res;
    eng_op_end(op, op->rc, NULL); /* eng_file_end makes the result */
}

/* The capture file goes, whatever happened before (the failure kept). */
static void text_rm(eng_op *op)
{
    ocisbx_run_req req;
    ocisbx_capture_rm_req(op->sb->b, &op->file->cap, &req);
    op->step = T_RM;
    if (eng_run_script(op, &req, text_removed) != 0)
        eng_op_end(op, op->rc, NULL); /* the failure kept, else this one */
}

static void text_got(eng_req *q, int rc, ocisbx_http_response *resp)
{
    eng_op *op = q->op;
    eng_file *f = op->file;
    rc = ocisbx_checked_read_end(&f->rd, f->path, rc, resp);
    ocisbx_http_response_free(resp);
    if (rc == OCISBX_ENOTFOUND) { /* the script ended before it captured anything */
        ocisbx_buf_clear(&f->buf);
        rc = 0;
    }
    if (rc)
        eng_op_keep(op, rc);
    text_rm(op);
}

static void text_ran(eng_op *op, int rc, ocisbx_run_res *res)
{
    eng_file *f = op->file;
    rc = ocisbx_backend_script_result(rc, res, &f->win_ex);
    if (rc) {
        eng_op_keep(op, rc);
        text_rm(op);
        return;
    }
    ocisbx_http_request *r = NULL;
    char cap_path[64];
    snprintf(cap_path, sizeof cap_path, "/workspace/%s", f->cap.rel);
    op->step = T_GET;
    rc = ocisbx_checked_read_request(op->e->client, op->sb->id, cap_path, 0, to_buf, &f->buf, &f->rd, &r);
    if (!rc)
        rc = eng_req_queue(op->e, op, r, 0, text_got, NULL);
    if (rc) {
        eng_op_keep(op, rc);
        text_rm(op);
    }
}

int ocisbx_engine_read_text(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *path, int64_t offset,
                            int64_t limit, ocisbx_engine_text_fn fn, void *user_data, ocisbx_engine_op *id)
{
    if (id)
        *id = 0;
    if (!fn)
        return ocisbx_fail(OCISBX_EINVAL, "engine read_text: a callback is required");
    if (offset < 0 || limit < 0)
        return ocisbx_fail(OCISBX_EINVAL, "read_text: negative offset or limit");
    eng_op *op = NULL;
    int rc = file_op(e, sb, path, ENG_TEXT, user_data, "read_text", &op);
    if (rc)
        return rc;
    eng_file *f = op->file;
    f->text_fn = fn;
    ocisbx_run_req req;
    rc = ocisbx_capture_init(&f->cap);
    if (!rc)
        rc = ocisbx_read_window_req(sb->b, f->rel, offset, limit, &f->win, &req);
    if (!rc) {
        req.env[1] = &f->cap.env;
        op->step = T_RUN;
        rc = eng_run_script(op, &req, text_ran);
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
void eng_file_cancel(eng_op *op)
{
    eng_file *f = op->file;
    bool in_flight = op->req && op->req->in_flight;
    if (op->kind == ENG_WRITE && f->chunked && op->step == F_PUT) {
        if (in_flight)
            return; /* its answer comes first (a part sent whole may still land): then the parts go */
        write_abort(op, ocisbx_fail(OCISBX_ECANCELED, "write /workspace/%s: canceled", f->rel));
        return;
    }
    if (op->step == F_JOIN || op->step == F_ABORT || op->step == T_RM)
        return; /* the join's result stands; a removal goes on */
    eng_op_keep(op, ocisbx_fail(OCISBX_ECANCELED, "%s /workspace/%s: canceled",
                                op->kind == ENG_WRITE ? "write" : "read", f->rel));
    eng_op_soon(op);
}
