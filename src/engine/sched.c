/* The engine's requests: each sandbox's queue, served round robin within
 * the adaptive bounds, and one call's attempts on curl multi through the
 * http layer's stepping (ocisbx_http_call_*: the same signing, outcome and
 * pure retry decision as the blocking transport, with the engine's one
 * retry budget). */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "ocisbx/util.h"

#define RATE_STEP 0.1 /* creates/s added to a learned pace per created sandbox */
#define RATE_MIN 0.1  /* the slowest learned pace */

int eng_req_queue(ocisbx_engine *e, eng_op *op, ocisbx_http_request *r, int64_t not_before,
                  void (*done)(eng_req *q, int rc, ocisbx_http_response *resp), eng_req **out)
{
    eng_req *q = calloc(1, sizeof *q);
    if (!q) {
        ocisbx_http_request_free(r);
        return ocisbx_fail_nomem();
    }
    q->e = e;
    q->op = op;
    q->sb = op->sb;
    q->r = r;
    q->not_before = not_before;
    q->queued_at = ocisbx_time_monotonic_ms();
    q->done = done;
    ocisbx_engine_sandbox *sb = q->sb;
    if (sb->qtail)
        sb->qtail->next = q;
    else
        sb->qhead = q;
    sb->qtail = q;
    op->req = q;
    if (out)
        *out = q;
    return 0;
}

static void unlink_req(eng_req *q)
{
    ocisbx_engine_sandbox *sb = q->sb;
    eng_req **pp = &sb->qhead, *prev = NULL;
    while (*pp && *pp != q) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp)
        *pp = q->next;
    if (sb->qtail == q)
        sb->qtail = prev;
    q->next = NULL;
    if (q->op && q->op->req == q)
        q->op->req = NULL;
}

static void pool_put(ocisbx_engine *e, CURL *easy)
{
    if (e->n_pool == e->cap_pool) {
        size_t cap = e->cap_pool ? e->cap_pool * 2 : 16;
        CURL **p = realloc(e->pool, cap * sizeof *p);
        if (!p) {
            curl_easy_cleanup(easy);
            return;
        }
        e->pool = p;
        e->cap_pool = cap;
    }
    e->pool[e->n_pool++] = easy;
}

/* Out of flight: the counters, the handle back to the pool. */
static void unflight(eng_req *q)
{
    ocisbx_engine *e = q->e;
    curl_multi_remove_handle(e->multi, q->easy);
    pool_put(e, q->easy);
    q->easy = NULL;
    q->in_flight = false;
    q->sb->in_flight--;
    e->in_flight--;
    if (q->is_create)
        e->creates_in_flight--;
}

static void req_free(eng_req *q)
{
    ocisbx_http_call_abandon(q->call);
    ocisbx_http_request_free(q->r);
    free(q);
}

void eng_req_deadline(eng_req *q, int64_t at)
{
    if (!q || at <= 0)
        return;
    if (!q->deadline_at || at < q->deadline_at)
        q->deadline_at = at;
    if (q->call) {
        ocisbx_http_call_set_deadline(q->call, q->deadline_at);
        /* the attempt in flight: its progress callback (at least once a
         * second) ends it at the deadline */
        if (!q->call->a.deadline_at || q->deadline_at < q->call->a.deadline_at)
            q->call->a.deadline_at = q->deadline_at;
    }
}

void eng_req_drop(eng_req *q)
{
    if (!q)
        return;
    if (q->in_flight)
        unflight(q);
    unlink_req(q);
    req_free(q);
}

/* The result to its operation; the request is freed after. */
static void finish(eng_req *q, int rc, ocisbx_http_response *resp)
{
    unlink_req(q);
    q->done(q, rc, resp);
    req_free(q);
}

/* A start that failed: its result after the pump's round. */
static void start_failed(eng_req *q, int rc)
{
    ocisbx_engine *e = q->e;
    ocisbx_http_response *resp = NULL;
    if (q->call) {
        rc = ocisbx_http_call_finish(q->call, rc, &resp);
        q->call = NULL;
    }
    q->frc = rc;
    q->fresp = resp;
    q->ferr = ocisbx_error_save();
    unlink_req(q);
    q->fnext = e->failed;
    e->failed = q;
}

/* The engine cancels its requests itself (ocisbx_engine_cancel): a
 * client's cancel callback (a CLI's SIGINT flag) must not end the closes
 * and deletes that leave nothing behind. */
static int never_canceled(void *ud)
{
    (void)ud;
    return 0;
}

/* A whole-attempt limit on a request that is not a stream (a stream has its
 * idle limit and its caller's deadline): the transport's connect and read
 * timeouts together, so an answer that dribbles or never comes ends. */
static void attempt_limit(ocisbx_engine *e, eng_req *q, CURL *easy, int64_t now)
{
    const struct ocisbx_http_options *o = &e->client->http->opt;
    if (q->r->streaming)
        return;
    int64_t lim = o->connect_timeout_ms + (q->idle_ms > 0 ? q->idle_ms : o->read_timeout_ms);
    int64_t dl = q->call->a.deadline_at;
    if (!dl || dl - now > lim)
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)lim);
}

static void start(eng_req *q, int64_t now)
{
    ocisbx_engine *e = q->e;
    int rc = 0;
    if (e->deadline_at && (!q->deadline_at || e->deadline_at < q->deadline_at))
        q->deadline_at = e->deadline_at;
    if (!q->call) {
        rc = ocisbx_http_call_new(e->client->http, q->r, &q->call);
        if (rc) {
            start_failed(q, rc);
            return;
        }
        if (q->deadline_at) { /* the time it waited behind the bounds is not the command's */
            q->deadline_at += now - q->queued_at;
            ocisbx_http_call_set_deadline(q->call, q->deadline_at);
        }
        ocisbx_http_call_set_cancel(q->call, never_canceled, NULL);
    }
    CURL *easy = e->n_pool ? e->pool[--e->n_pool] : curl_easy_init();
    if (!easy) {
        start_failed(q, ocisbx_fail(OCISBX_ENOMEM, "engine: cannot make a libcurl handle"));
        return;
    }
    rc = ocisbx_http_call_start(q->call, easy);
    if (rc) {
        pool_put(e, easy);
        start_failed(q, rc);
        return;
    }
    if (q->idle_ms > 0)
        q->call->a.idle_ms = q->idle_ms;
    attempt_limit(e, q, easy, now);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, (void *)q);
    if (curl_multi_add_handle(e->multi, easy) != CURLM_OK) {
        curl_easy_reset(easy);
        pool_put(e, easy);
        start_failed(q, ocisbx_fail(OCISBX_ENOMEM, "engine: libcurl refused a transfer"));
        return;
    }
    q->easy = easy;
    q->in_flight = true;
    q->sent_at = now;
    q->sb->in_flight++;
    e->in_flight++;
    e->attempts++;
    if (q->is_create) {
        e->creates_in_flight++;
        double rate = e->rate;
        if (rate > 0) {
            int64_t step = (int64_t)(1000.0 / rate);
            e->next_create_at = (e->next_create_at > now ? e->next_create_at : now) + (step > 0 ? step : 1);
        }
    }
}

/* When q may start, by its own wait, the holds and the pace. */
static int64_t start_at(const ocisbx_engine *e, const eng_req *q)
{
    int64_t at = q->not_before;
    if (at < e->hold_until)
        at = e->hold_until;
    if (q->is_create) {
        if (at < e->create_hold_until)
            at = e->create_hold_until;
        if (e->rate > 0 && at < e->next_create_at)
            at = e->next_create_at;
    }
    return at;
}

static void finish_failed(ocisbx_engine *e)
{
    while (e->failed) {
        eng_req *q = e->failed;
        e->failed = q->fnext;
        ocisbx_error_restore(q->ferr);
        q->ferr = NULL;
        q->done(q, q->frc, q->fresp);
        req_free(q);
    }
}

int64_t eng_pump(ocisbx_engine *e)
{
    int64_t now = ocisbx_time_monotonic_ms(), earliest = 0;
    ocisbx_engine_sandbox *first = e->rr ? e->rr : e->sbx, *sb = first;
    while (sb) {
        ocisbx_engine_sandbox *next = sb->next ? sb->next : e->sbx;
        eng_req *q = sb->qhead;
        if (q && !q->in_flight && sb->in_flight == 0) {
            int64_t at = start_at(e, q);
            if (at > now) {
                earliest = earliest == 0 || at < earliest ? at : earliest;
            } else if (e->in_flight >= (int)e->cwnd) {
                e->rr = sb; /* the bound is reached: this one goes first next time */
                break;
            } else if (!q->is_create || e->creates_in_flight < (int)e->ccwnd) {
                start(q, now);
                e->rr = next;
            }
        }
        sb = next;
        if (sb == first)
            break;
    }
    finish_failed(e);
    return earliest;
}

/* A throttling answer: the bound halves (once per round of requests: only
 * for a request sent after the last decrease) and its kind waits for the
 * retry-after; a create's pace is learned from what got through. */
static void throttled(ocisbx_engine *e, eng_req *q, int64_t wait_ms, int64_t now)
{
    if (q->is_create) {
        if (q->sent_at >= e->last_create_decrease) {
            e->ccwnd = e->ccwnd / 2 < 1 ? 1 : e->ccwnd / 2;
            e->last_create_decrease = now;
        }
        if (e->create_hold_until < now + wait_ms)
            e->create_hold_until = now + wait_ms;
        int64_t span = now + wait_ms - e->window_start;
        double seen = span > 0 ? e->created_in_window * 1000.0 / (double)span : 0;
        if (e->created_in_window > 0 || e->rate == 0) {
            double r = seen > 0 ? seen : 1000.0 / (double)(wait_ms > 0 ? wait_ms : 1000);
            r = r < RATE_MIN ? RATE_MIN : r;
            e->rate = e->fixed_rate > 0 && r > e->fixed_rate ? e->fixed_rate : r;
            e->window_start = now + wait_ms;
            e->created_in_window = 0;
        }
        return;
    }
    if (q->sent_at >= e->last_decrease) {
        e->cwnd = e->cwnd / 2 < 1 ? 1 : e->cwnd / 2;
        e->last_decrease = now;
    }
    if (e->hold_until < now + wait_ms)
        e->hold_until = now + wait_ms;
}

static void succeeded(ocisbx_engine *e, eng_req *q)
{
    ocisbx_http_budget_success(&e->budget);
    e->cwnd = e->cwnd + 1 > e->max_in_flight ? e->max_in_flight : e->cwnd + 1;
    if (!q->is_create)
        return;
    e->ccwnd = e->ccwnd + 1 > e->max_creates ? e->max_creates : e->ccwnd + 1;
    e->created_in_window++;
    if (e->rate > 0 && (e->fixed_rate == 0 || e->rate < e->fixed_rate)) {
        e->rate += RATE_STEP;
        if (e->fixed_rate > 0 && e->rate > e->fixed_rate)
            e->rate = e->fixed_rate;
    }
}

/* One transfer ended: the outcome, the decision, the next attempt or the
 * result. */
static void attempt_done(ocisbx_engine *e, eng_req *q, CURLcode cc)
{
    unflight(q);
    ocisbx_http_call_end(q->call, cc);
    /* Leaving nothing behind is not starved by the shared budget: a close's
     * steps and every delete (a create's clean-up too) retry on their own
     * attempts and deadline. */
    bool cleanup = (q->op && q->op->kind == ENG_CLOSE) || strcmp(q->call->r->method, "DELETE") == 0;
    ocisbx_http_decision d = ocisbx_http_call_decide(q->call, cleanup ? NULL : &e->budget);
    int status = q->call->last.status;
    int64_t now = ocisbx_time_monotonic_ms();
    if (status == 429)
        e->throttled++;
    if (status >= 200 && status < 400)
        succeeded(e, q);
    else if (status == 429 || status == 503)
        throttled(e, q, d.action == OCISBX_HTTP_RETRY ? d.wait_ms : 1000, now);
    if (d.action != OCISBX_HTTP_FINISH && ocisbx_http_call_before_retry(q->call, &d) == 0) {
        if (d.spends_budget && !cleanup)
            ocisbx_http_budget_spend(&e->budget);
        q->not_before = now + d.wait_ms;
        return; /* stays at the head of its sandbox's queue */
    }
    ocisbx_http_response *resp = NULL;
    int rc = ocisbx_http_call_finish(q->call, 0, &resp);
    q->call = NULL;
    finish(q, rc, resp);
}

/* The first request in flight past its deadline (NULL: none); *next the
 * earliest deadline of the others (0: none). */
static eng_req *first_expired(ocisbx_engine *e, int64_t now, int64_t *next)
{
    *next = 0;
    for (ocisbx_engine_sandbox *sb = e->sbx; sb; sb = sb->next)
        for (eng_req *q = sb->qhead; q; q = q->next) {
            if (!q->in_flight || !q->call || !q->call->a.deadline_at)
                continue;
            int64_t at = q->call->a.deadline_at;
            if (at <= now)
                return q;
            if (!*next || at < *next)
                *next = at;
        }
    return NULL;
}

int64_t eng_expire(ocisbx_engine *e)
{
    /* libcurl runs an idle transfer's progress callback only when its own
     * timer or socket says so: a deadline set after the start (a cancel's,
     * ocisbx_engine_set_deadline) is the engine's to enforce */
    int64_t next = 0;
    eng_req *q;
    while ((q = first_expired(e, ocisbx_time_monotonic_ms(), &next)) != NULL) {
        q->call->a.deadline_expired = true;
        attempt_done(e, q, CURLE_OPERATION_TIMEDOUT);
    }
    return next;
}

void eng_reap(ocisbx_engine *e)
{
    CURLMsg *m;
    int left = 0;
    while ((m = curl_multi_info_read(e->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        char *priv = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
        eng_req *q = (eng_req *)(void *)priv;
        CURLcode cc = m->data.result;
        if (q && q->easy == m->easy_handle)
            attempt_done(e, q, cc);
    }
}
