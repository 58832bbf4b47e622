/* exec: the wrapper (scripts/exec.sh, docs/backend.md "The exec wrapper")
 * run by the implementation's run primitive, and the client's half: the
 * trailer (the last line of stderr) parsed, head and tail taken by the
 * lengths it gives, cut on UTF-8 and nearby line boundaries, the note
 * inserted, secrets cut at the edges redacted. Options and results are in
 * exec_result.c, the yield (an exec as a job) in exec_yield.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "backend/exec_int.h"
#include "backend/scripts.h"
#include "util/utf8.h"
#include "ocisbx/api.h"
#include "ocisbx/util.h"
#include "util/internal.h"

#define TRAILER_MAX 256 /* the longest trailer line kept from stderr */
#define NOTE_RESERVE 96 /* room kept for the note in max_output */
#define LINE_NEAR 256   /* a cut moves to a line end at most this far */
#define CLEANUP_MS 5000 /* the run that removes a canceled run's files */

/* What one run of the wrapper sends back. */
typedef struct live {
    ocisbx_buf got;   /* stdout: the head */
    ocisbx_buf err;   /* stderr: the tail and the trailer (the last bytes kept) */
    size_t got_cap;   /* bytes of stdout kept */
    size_t err_cap;   /* bytes of stderr kept (the last ones) */
    size_t live_max;  /* the most bytes handed to the callback while it runs */
    size_t delivered; /* to the live callback */
    ocisbx_write_fn fn;
    void *ud;
    bool canceled;
} live;

static int live_out(const char *data, size_t len, void *ud)
{
    live *l = ud;
    size_t room = l->got.len < l->got_cap ? l->got_cap - l->got.len : 0;
    if (ocisbx_buf_append(&l->got, data, len < room ? len : room))
        return 1;
    size_t upto = l->got.len < l->live_max ? l->got.len : l->live_max;
    if (l->fn && upto > l->delivered) {
        if (l->fn(l->got.data + l->delivered, upto - l->delivered, l->ud)) {
            l->canceled = true;
            return 1;
        }
        l->delivered = upto;
    }
    return 0;
}

/* stderr: its last err_cap bytes (the trailer is the last line). */
static int live_err(const char *data, size_t len, void *ud)
{
    live *l = ud;
    if (len >= l->err_cap) {
        ocisbx_buf_clear(&l->err);
        return ocisbx_buf_append(&l->err, data + len - l->err_cap, l->err_cap) != 0;
    }
    if (l->err.len + len > l->err_cap) {
        size_t drop = l->err.len + len - l->err_cap;
        memmove(l->err.data, l->err.data + drop, l->err.len - drop);
        l->err.len -= drop;
    }
    return ocisbx_buf_append(&l->err, data, len) != 0;
}

/* ---- the trailer ---- */
typedef struct trailer {
    bool has_exit, timed_out;
    int exit_code;
    bool measured; /* HL, TL, total and sum given (the output went past the live head) */
    uint64_t hl, tl, total;
    char sum[65];
    size_t tail_end; /* stderr bytes before the trailer's line: the tail */
} trailer;

static bool parse_u64(const char **p, uint64_t *v)
{
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return false;
    uint64_t x = 0;
    while (*s >= '0' && *s <= '9') {
        if (x > (UINT64_MAX - 9) / 10)
            return false;
        x = x * 10 + (uint64_t)(*s - '0');
        s++;
    }
    *v = x;
    if (*s == ' ')
        s++;
    *p = s;
    return true;
}

/* "-" or a number; *given says which. */
static bool parse_field(const char **p, uint64_t *v, bool *given)
{
    if (**p == '-' && ((*p)[1] == ' ' || (*p)[1] == '\n')) {
        *given = false;
        *p += (*p)[1] == ' ' ? 2 : 1;
        return true;
    }
    *given = true;
    return parse_u64(p, v);
}

static bool parse_sum(const char **p, char out[65])
{
    const char *s = *p;
    size_t k = 0;
    while (k < 64 && ((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'f')))
        k++;
    if (k != 64 || s[64] != '\n')
        return false;
    memcpy(out, s, 64);
    out[64] = '\0';
    *p = s + 64;
    return true;
}

/* The last line of stderr: "OCISBX-END <id> <status|-> <to> <HL> <TL> <T> <sum>"
 * (the last four "-" together), or "OCISBX-NOCWD <id>". Only that line is
 * read: whatever a command prints, it cannot come after it. */
static int parse_trailer(const live *l, const char *id, const ocisbx_run_res *res, trailer *t)
{
    const char *e = l->err.data ? l->err.data : "";
    size_t n = l->err.len, start = 0;
    if (n >= 2 && e[n - 1] == '\n') {
        start = n - 1;
        while (start > 0 && e[start - 1] != '\n' && n - start < TRAILER_MAX)
            start--;
    }
    char line[TRAILER_MAX + 1];
    size_t ll = n - start;
    if (start == 0 || e[start - 1] != '\n' || ll > TRAILER_MAX) {
        return ocisbx_fail(res->has_exit && res->exit_code == 125 ? OCISBX_EIO : OCISBX_EPARSE,
                           "exec: the wrapper gave no trailer (exit status %d%s%.200s)",
                           res->has_exit ? res->exit_code : -1, res->stderr_text ? ": " : "",
                           res->stderr_text ? res->stderr_text : "");
    }
    memcpy(line, e + start, ll);
    line[ll] = '\0';
    t->tail_end = start - 1;
    char want[64];
    snprintf(want, sizeof want, "OCISBX-NOCWD %s\n", id);
    if (!strcmp(line, want))
        return ocisbx_fail(OCISBX_ENOTFOUND, "exec: the working directory does not exist or is not a directory");
    snprintf(want, sizeof want, "OCISBX-END %s ", id);
    const char *p = line + strlen(want);
    uint64_t st = 0, to = 0;
    bool has_st = false, g1 = false, g2 = false, g3 = false;
    bool ok = !strncmp(line, want, strlen(want)) && parse_field(&p, &st, &has_st) && parse_u64(&p, &to) && to <= 1 &&
              parse_field(&p, &t->hl, &g1) && parse_field(&p, &t->tl, &g2) && parse_field(&p, &t->total, &g3);
    t->measured = ok && g1 && g2 && g3;
    if (ok && t->measured)
        ok = parse_sum(&p, t->sum);
    else if (ok)
        ok = !g1 && !g2 && !g3 && !strcmp(p, "-\n");
    if (!ok || st > 255)
        return ocisbx_fail(OCISBX_EPARSE, "exec: malformed wrapper trailer");
    t->timed_out = to != 0;
    t->has_exit = has_st && !t->timed_out;
    t->exit_code = (int)st;
    return 0;
}

/* ---- the run ---- */
/* The exec wrapper's arguments (scripts/exec.sh). */
typedef struct wrapper_args {
    char secs[24], grace[16], head[24], tail[24], now[24];
    const char *argv[10];
} wrapper_args;

static void wrapper_argv(ocisbx_backend *b, const exec_plan *pl, const char *command, wrapper_args *a)
{
    snprintf(a->secs, sizeof a->secs, "%" PRId64, pl->secs);
    snprintf(a->grace, sizeof a->grace, "%d", b->kill_grace_s);
    snprintf(a->head, sizeof a->head, "%zu", pl->head);
    snprintf(a->tail, sizeof a->tail, "%zu", pl->tail);
    snprintf(a->now, sizeof a->now, "%" PRId64, ocisbx_time_now_ms() / 1000);
    const char *v[10] = {command, b->root, *pl->cwd_rel ? pl->cwd_rel : ".", a->secs, a->grace, a->head, a->tail,
                         pl->id,  b->run_slot, a->now};
    memcpy(a->argv, v, sizeof v);
}

int ocisbx_exec_remove_run_files(ocisbx_backend *b)
{
    if (!b->run_slot_used)
        return 0;
    ocisbx_run_req req = {0};
    ocisbx_run_res res = {0};
    const char *args[] = {b->root, b->run_slot};
    req.script = ocisbx_script_exec_clean;
    req.args = args;
    req.n_args = 2;
    req.deadline_ms = ocisbx_time_monotonic_ms() + CLEANUP_MS;
    req.backstop_s = CLEANUP_MS / 1000;
    req.uncancelable = true;
    int rc = b->vt->run(b, &req, &res);
    free(res.command_id);
    free(res.stderr_text);
    if (rc == 0)
        b->run_slot_used = false;
    return rc;
}

/* The longest secret value of the backend's and the call's env. */
static size_t longest_secret(const ocisbx_backend *b, const ocisbx_env_list *call)
{
    size_t m = 0;
    const ocisbx_env_list *ls[2] = {&b->env, call};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; ls[k] && i < ls[k]->n; i++)
            if (ls[k]->v[i].secret && strlen(ls[k]->v[i].value) > m)
                m = strlen(ls[k]->v[i].value);
    return m;
}

/* ---- one exec's client half (exec_int.h): the plan, the wrapper's run
 * request, the bytes that came back, the result ---- */
struct ocisbx_exec_wire {
    ocisbx_backend *b;
    exec_plan pl;
    ocisbx_exec_result *r;
    live l;
    wrapper_args a;
    ocisbx_run_req req;
    int64_t t0;
};

int ocisbx_exec_wire_begin(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o,
                           ocisbx_exec_wire **wp, ocisbx_exec_result **out)
{
    *wp = NULL;
    ocisbx_exec_wire *w = calloc(1, sizeof *w);
    if (!w)
        return ocisbx_fail_nomem();
    int rc = ocisbx_exec_plan(b, command, o, NOTE_RESERVE, &w->pl, &w->r, out);
    if (rc) {
        free(w);
        return rc;
    }
    w->b = b;
    if (w->pl.yield_ms > 0) { /* a job: exec_yield runs it, not the wrapper */
        *wp = w;
        return 0;
    }
    if (!b->run_slot[0] && (rc = ocisbx_random_id(b->run_slot, 16)) != 0) {
        ocisbx_exec_wire_free(w);
        return rc;
    }
    exec_plan *pl = &w->pl;
    size_t hold = LINE_NEAR + 8 + longest_secret(b, pl->env);
    size_t h4 = pl->head - 4;
    live l = {OCISBX_BUF_INIT, OCISBX_BUF_INIT, 3 * pl->head + 16, pl->tail * 3 + 4 * TRAILER_MAX,
              h4 > hold ? h4 - hold : 0, 0, pl->on_output, pl->on_output_ud, false};
    w->l = l;
    wrapper_argv(b, pl, command, &w->a);
    ocisbx_run_req *req = &w->req;
    req->script = ocisbx_script_exec;
    req->args = w->a.argv;
    req->n_args = 10;
    req->env[0] = &b->env;
    req->env[1] = pl->env;
    req->backstop_s = pl->secs + b->kill_grace_s + 2;
    w->t0 = ocisbx_time_monotonic_ms();
    w->r->start_ms = ocisbx_time_now_ms();
    req->deadline_ms = w->t0 + pl->secs * 1000 + b->kill_grace_s * 1000 + b->client_margin_ms;
    req->on_stdout = live_out;
    req->on_stderr = live_err;
    req->user_data = &w->l;
    b->run_slot_used = true;
    *wp = w;
    return 0;
}

const ocisbx_run_req *ocisbx_exec_wire_req(const ocisbx_exec_wire *w)
{
    return &w->req;
}

int64_t ocisbx_exec_wire_yield_ms(const ocisbx_exec_wire *w)
{
    return w->pl.yield_ms;
}

int ocisbx_exec_wire_stdout(ocisbx_exec_wire *w, const char *data, size_t len)
{
    return live_out(data, len, &w->l) ? ocisbx_fail_nomem() : 0;
}

int ocisbx_exec_wire_stderr(ocisbx_exec_wire *w, const char *data, size_t len)
{
    return live_err(data, len, &w->l) ? ocisbx_fail_nomem() : 0;
}

void ocisbx_exec_wire_free(ocisbx_exec_wire *w)
{
    if (!w)
        return;
    ocisbx_buf_free(&w->l.got);
    ocisbx_buf_free(&w->l.err);
    ocisbx_exec_plan_free(&w->pl);
    ocisbx_exec_result_free(w->r);
    free(w);
}

/* ---- the result ---- */
/* Head [0, hl) and tail [ts, tl) kept; secrets cut at the two edges
 * redacted; the note between them. */
static int join_output(ocisbx_exec_result *r, const exec_plan *pl, const char *head, size_t hk, const char *tail,
                       size_t ts, size_t tl)
{
    const ocisbx_env_list *ls[2] = {pl->backend_env, pl->env};
    size_t hcut = 0, tcut = 0;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; ls[k] && i < ls[k]->n; i++) {
            if (!ls[k]->v[i].secret)
                continue;
            size_t p = ocisbx_redact_edge_prefix(head, hk, ls[k]->v[i].value, OCISBX_REDACT_EDGE_MIN);
            size_t q = ocisbx_redact_edge_suffix(tail + ts, tl - ts, ls[k]->v[i].value, OCISBX_REDACT_EDGE_MIN);
            hcut = p > hcut ? p : hcut;
            tcut = q > tcut ? q : tcut;
        }
    ocisbx_buf o = OCISBX_BUF_INIT;
    int rc = ocisbx_buf_append(&o, head, hk - hcut);
    if (!rc && hcut)
        rc = ocisbx_buf_appends(&o, OCISBX_REDACTED);
    if (!rc && o.len && o.data[o.len - 1] != '\n')
        rc = ocisbx_buf_appends(&o, "\n");
    if (!rc)
        rc = ocisbx_buf_appendf(&o, "[... %" PRIu64 " bytes of output dropped ...]\n", r->dropped);
    if (!rc && tcut)
        rc = ocisbx_buf_appends(&o, OCISBX_REDACTED);
    if (!rc)
        rc = ocisbx_buf_append(&o, tail + ts + tcut, tl - ts - tcut);
    if (rc) {
        ocisbx_buf_free(&o);
        return rc;
    }
    r->head_kept = hk - hcut;
    r->output_len = o.len;
    r->output = ocisbx_buf_detach(&o);
    return 0;
}

/* A cut output: exact (the lengths the trailer gives are what came) moves
 * the cuts to UTF-8 and nearby line boundaries; else (the service rewrote
 * bytes that are not UTF-8) head and tail are kept as they came. The
 * dropped count is exact either way. */
static int cut_output(ocisbx_exec_result *r, const exec_plan *pl, const char *head, size_t hl, const char *tail,
                      size_t tl, bool exact)
{
    size_t hk = hl, ts = 0;
    if (exact) {
        hk = ocisbx_utf8_cut_back(head, hl);
        for (size_t i = hk; i > 0 && hk - i < LINE_NEAR; i--)
            if (head[i - 1] == '\n') {
                hk = i;
                break;
            }
        ts = ocisbx_utf8_cut_forward(tail, tl, 0);
        for (size_t i = ts; i < tl && i - ts < LINE_NEAR; i++)
            if (tail[i] == '\n') {
                ts = i + 1;
                break;
            }
        r->dropped = r->total_bytes - hk - (tl - ts);
    } else {
        r->dropped = r->total_bytes - pl->trailer_hl - pl->trailer_tl;
    }
    r->truncated = true;
    return join_output(r, pl, head, hk, tail, ts, tl);
}

/* Output that was not cut: head and tail as they came, one after the other. */
static int whole_output(ocisbx_exec_result *r, const char *d, size_t n, const char *d2, size_t n2)
{
    r->output = malloc(n + n2 + 1);
    if (!r->output)
        return ocisbx_fail_nomem();
    if (n)
        memcpy(r->output, d, n);
    if (n2)
        memcpy(r->output + n, d2, n2);
    r->output[n + n2] = '\0';
    r->output_len = r->head_kept = n + n2;
    return 0;
}

/* The result from what came back and the trailer. */
static int assemble(ocisbx_exec_result *r, exec_plan *pl, const live *l, const trailer *t)
{
    const char *g = l->got.data ? l->got.data : "";
    const char *e = l->err.data ? l->err.data : "";
    r->timed_out = t->timed_out;
    r->has_exit = t->has_exit;
    r->exit_code = t->exit_code;
    int rc;
    if (!t->measured) {
        /* all of it came in the live head: measured here */
        rc = whole_output(r, g, l->got.len, "", 0);
        r->total_bytes = l->got.len;
        ocisbx_exec_hex_sha(g, l->got.len, r->total_sha);
    } else {
        if (t->hl > pl->head || t->tl > pl->tail || t->hl + t->tl > t->total)
            return ocisbx_fail(OCISBX_EPARSE, "exec: malformed wrapper trailer (lengths)");
        r->total_bytes = t->total;
        memcpy(r->total_sha, t->sum, sizeof r->total_sha);
        pl->trailer_hl = t->hl;
        pl->trailer_tl = t->tl;
        bool exact = l->got.len == t->hl && t->tail_end == t->tl;
        if (t->total <= t->hl + t->tl)
            rc = whole_output(r, g, l->got.len, e, t->tail_end);
        else
            rc = cut_output(r, pl, g, l->got.len, e, t->tail_end, exact);
    }
    if (!rc)
        ocisbx_exec_hex_sha(r->output, r->output_len, r->returned_sha);
    return rc;
}

/* The client's deadline passed (a service that ignores the timeout): what
 * arrived of the head is returned, timed_out. */
static int timed_out_at_client(ocisbx_exec_result *r, const exec_plan *pl, const live *l)
{
    size_t hl = l->got.len < pl->head ? l->got.len : pl->head;
    r->timed_out = true;
    r->total_bytes = hl;
    int rc = whole_output(r, l->got.data ? l->got.data : "", hl, "", 0);
    if (!rc) {
        ocisbx_exec_hex_sha(r->output, r->output_len, r->returned_sha);
        memcpy(r->total_sha, r->returned_sha, sizeof r->total_sha);
    }
    return rc;
}

/* The run ended without an exit status and without the trailer: on the
 * OCI backend, the sandbox and the command say why (the sandbox gone or
 * stopping, the command canceled by another process), with the HTTP status
 * and request id of the answer that says it. Else the error as it is. */
static int explain_no_trailer(ocisbx_backend *b, const ocisbx_run_res *res, int rc)
{
    ocisbx_client *c = ocisbx_backend_client(b);
    const char *sid = ocisbx_backend_sandbox_id(b);
    if (res->has_exit || !c || !sid)
        return rc;
    ocisbx_sandbox *s = NULL;
    if (ocisbx_client_get_sandbox(c, sid, &s) != 0) {
        const ocisbx_error *e = ocisbx_error_last();
        int http = ocisbx_error_http_status(e);
        const char *rid = ocisbx_error_request_id(e);
        if (http == 404)
            return ocisbx_fail(OCISBX_ENOTFOUND,
                               "exec: the command was ended: sandbox %s is gone (HTTP 404%s%s) before the wrapper's "
                               "trailer came",
                               sid, rid ? ", request id " : "", rid ? rid : "");
        return ocisbx_fail(OCISBX_ESERVICE,
                           "exec: the command ended without the wrapper's trailer; asking for sandbox %s failed: %s",
                           sid, ocisbx_error_message(e));
    }
    const char *st = ocisbx_sandbox_lifecycle_state(s);
    if (st && strcmp(st, "ACTIVE") && strcmp(st, "RUNNING") && strcmp(st, "UPDATING")) {
        rc = ocisbx_fail(OCISBX_ENOTFOUND,
                         "exec: the command was ended: sandbox %s is %s (another process stopped or deleted it)", sid,
                         st);
        ocisbx_sandbox_free(s);
        return rc;
    }
    ocisbx_sandbox_free(s);
    ocisbx_command *cm = NULL;
    if (res->command_id && ocisbx_client_get_command(c, sid, res->command_id, &cm) == 0) {
        const char *cs = ocisbx_command_lifecycle_state(cm);
        rc = ocisbx_fail(OCISBX_ESERVICE, "exec: the command %s was ended (state %s) before the wrapper's trailer came",
                         res->command_id, cs ? cs : "unknown");
        ocisbx_command_free(cm);
    }
    return rc;
}

int ocisbx_exec_wire_end(ocisbx_exec_wire *w, int rc, ocisbx_run_res *res, ocisbx_exec_result **out)
{
    ocisbx_backend *b = w->b;
    ocisbx_exec_result *r = w->r;
    live *l = &w->l;
    r->duration_ms = ocisbx_time_monotonic_ms() - w->t0;
    r->command_id = res->command_id;
    res->command_id = NULL;
    if (rc == OCISBX_ECANCELED && l->canceled)
        rc = ocisbx_fail(OCISBX_ECANCELED, "exec: canceled by the output callback");
    if (rc == OCISBX_ECANCELED) {
        /* the run's files may hold its raw output: they go now (after a
         * service that did not answer in time, the next exec's sweep
         * removes them) */
        ocisbx_error_saved *sv = ocisbx_error_save();
        (void)ocisbx_exec_remove_run_files(b);
        ocisbx_error_restore(sv);
    }
    if (rc == OCISBX_ETIMEOUT) {
        rc = timed_out_at_client(r, &w->pl, l);
    } else if (rc == 0) {
        trailer t;
        memset(&t, 0, sizeof t);
        rc = parse_trailer(l, w->pl.id, res, &t);
        if (rc == OCISBX_EPARSE)
            rc = explain_no_trailer(b, res, rc);
        if (!rc)
            rc = assemble(r, &w->pl, l, &t);
        size_t from = l->delivered <= r->head_kept ? l->delivered : r->head_kept;
        if (!rc && l->fn && r->output_len > from && l->fn(r->output + from, r->output_len - from, l->ud))
            rc = ocisbx_fail(OCISBX_ECANCELED, "exec: canceled by the output callback");
    }
    if (!rc) {
        *out = r;
        w->r = NULL;
    }
    ocisbx_exec_wire_free(w);
    return rc;
}

static int do_exec(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o, ocisbx_exec_result **out)
{
    ocisbx_exec_wire *w = NULL;
    int rc = ocisbx_exec_wire_begin(b, command, o, &w, out);
    if (rc)
        return rc;
    ocisbx_run_res res = {0};
    if (w->pl.yield_ms > 0) {
        rc = ocisbx_exec_yield(b, command, o, &w->pl, w->r);
        if (!rc) {
            *out = w->r;
            w->r = NULL;
        }
        ocisbx_exec_wire_free(w);
        return rc;
    }
    rc = b->vt->run(b, &w->req, &res);
    rc = ocisbx_exec_wire_end(w, rc, &res, out);
    free(res.command_id);
    free(res.stderr_text);
    return rc;
}

int ocisbx_exec_parse_(const char *out, size_t out_len, const char *err, size_t err_len, const char *id,
                       size_t max_output, ocisbx_exec_result **res)
{
    *res = NULL;
    exec_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.head = (max_output - NOTE_RESERVE) / 2;
    pl.tail = max_output - NOTE_RESERVE - pl.head;
    ocisbx_env_list none = {NULL, 0};
    pl.backend_env = &none;
    ocisbx_exec_result *r = calloc(1, sizeof *r);
    live l = {OCISBX_BUF_INIT, OCISBX_BUF_INIT, 3 * pl.head + 16, pl.tail * 3 + 4 * TRAILER_MAX, 0, 0, NULL, NULL,
              false};
    ocisbx_run_res rr = {true, 0, NULL, NULL};
    trailer t;
    memset(&t, 0, sizeof t);
    int rc = r ? 0 : ocisbx_fail_nomem();
    if (!rc && (live_out(out, out_len, &l) || live_err(err, err_len, &l)))
        rc = ocisbx_fail_nomem();
    if (!rc)
        rc = parse_trailer(&l, id, &rr, &t);
    if (!rc)
        rc = assemble(r, &pl, &l, &t);
    ocisbx_buf_free(&l.got);
    ocisbx_buf_free(&l.err);
    if (rc)
        ocisbx_exec_result_free(r);
    else
        *res = r;
    return rc;
}

int ocisbx_backend_exec(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o,
                        ocisbx_exec_result **out)
{
    return do_exec(b, command, o, out);
}

int ocisbx_backend_exec_argv(ocisbx_backend *b, const char *const *argv, size_t argc, const ocisbx_exec_options *o,
                             ocisbx_exec_result **out)
{
    if (out)
        *out = NULL;
    if (!argv || argc == 0)
        return ocisbx_fail(OCISBX_EINVAL, "exec: an empty argv");
    ocisbx_buf cmd = OCISBX_BUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < argc && !rc; i++) {
        if (!argv[i]) {
            rc = ocisbx_fail(OCISBX_EINVAL, "exec: argv[%zu] is NULL", i);
            break;
        }
        if (i)
            rc = ocisbx_buf_appends(&cmd, " ");
        if (!rc)
            rc = ocisbx_buf_append_shell_quoted(&cmd, argv[i]);
    }
    if (!rc)
        rc = do_exec(b, cmd.data, o, out);
    ocisbx_buf_free(&cmd);
    return rc;
}

int ocisbx_exec_result_from_parts(ocisbx_exec_result *r, exec_plan *pl, const char *head, size_t hl,
                                  const char *tail, size_t tl)
{
    int rc;
    if (r->total_bytes <= hl + tl) {
        size_t rest = r->total_bytes > hl ? (size_t)(r->total_bytes - hl) : 0; /* the tail's last bytes */
        rc = whole_output(r, head, hl, tail + tl - (rest < tl ? rest : tl), rest < tl ? rest : tl);
    } else {
        rc = cut_output(r, pl, head, hl, tail, tl, true);
    }
    if (!rc)
        ocisbx_exec_hex_sha(r->output, r->output_len, r->returned_sha);
    return rc;
}
