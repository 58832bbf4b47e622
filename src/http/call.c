/* One call stepped attempt by attempt (http_internal.h): the state kept
 * across attempts, the outcome of each, the decision through the pure
 * ocisbx_http_decide, and the call's result and error message. */
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "auth/credentials_internal.h"
#include "http/http_internal.h"
#include "ocisbx/util.h"
#include "sys/sleep.h"

static int check_url(ocisbx_http *h, ocisbx_http_request *r, ocisbx_url *u)
{
    int rc = ocisbx_url_parse(r->url, u);
    if (rc == 0 && (rc = ocisbx_url_check_scheme(u, r->url, h->opt.allow_plain_http)) != 0)
        ocisbx_url_clear(u);
    return rc;
}

int ocisbx_http_call_new(ocisbx_http *h, ocisbx_http_request *r, ocisbx_http_call **out)
{
    *out = NULL;
    ocisbx_http_call *c = calloc(1, sizeof *c);
    if (!c)
        return ocisbx_fail_nomem();
    int rc = check_url(h, r, &c->u);
    if (rc) {
        free(c);
        return rc;
    }
    if (!(c->resp = ocisbx_http_response_alloc())) {
        ocisbx_url_clear(&c->u);
        free(c);
        return ocisbx_fail_nomem();
    }
    c->h = h;
    c->r = r;
    c->start_ms = ocisbx_time_monotonic_ms();
    c->deadline_at = h->opt.deadline_ms > 0 ? c->start_ms + h->opt.deadline_ms : 0;
    c->max_attempts = h->opt.retries && r->retry_class != OCISBX_HTTP_RETRY_NEVER ? h->opt.max_attempts : 1;
    c->cancel = h->opt.cancel;
    c->cancel_ud = h->opt.cancel_ud;
    *out = c;
    return 0;
}

void ocisbx_http_call_set_deadline(ocisbx_http_call *c, int64_t deadline_at)
{
    if (deadline_at > 0 && (!c->deadline_at || deadline_at < c->deadline_at))
        c->deadline_at = deadline_at;
}

void ocisbx_http_call_set_cancel(ocisbx_http_call *c, ocisbx_cancel_fn fn, void *user_data)
{
    if (fn) {
        c->cancel = fn;
        c->cancel_ud = user_data;
    }
}

int ocisbx_http_call_canceled(ocisbx_http_call *c)
{
    ocisbx_http_request *r = c->r;
    ocisbx_fail(OCISBX_ECANCELED, "%s %.300s: canceled after %d attempt%s (opc-request-id: %s)", r->method, r->url,
                c->n, c->n == 1 ? "" : "s", r->request_id);
    ocisbx_error_set_attempts(c->n);
    c->answered = false;
    return OCISBX_ECANCELED;
}

int ocisbx_http_call_start(ocisbx_http_call *c, CURL *easy)
{
    ocisbx_http *h = c->h;
    ocisbx_http_request *r = c->r;
    if (ocisbx_sys_canceled(c->cancel, c->cancel_ud))
        return ocisbx_http_call_canceled(c);
    c->n++;
    c->answered = false;
    ocisbx_http_attempt *a = &c->a;
    memset(a, 0, sizeof *a);
    a->r = r;
    a->resp = c->resp;
    a->cancel = c->cancel;
    a->cancel_ud = c->cancel_ud;
    a->progress_fn = h->opt.progress_fn;
    a->progress_ud = h->opt.progress_ud;
    a->dest = &c->dest;
    a->loopback = ocisbx_host_is_loopback(c->u.host);
    a->idle_ms = r->streaming ? h->opt.stream_idle_timeout_ms : h->opt.read_timeout_ms;
    a->deadline_at = c->deadline_at;
    ocisbx_http_response *resp = c->resp;
    ocisbx_buf_clear(&resp->body);
    resp->status = 0;
    resp->reason[0] = '\0';
    ocisbx_headers *fresh = NULL;
    int rc = ocisbx_headers_new(&fresh);
    if (rc)
        return rc;
    ocisbx_headers_free(resp->headers); /* nothing of an earlier attempt's answer stays */
    resp->headers = fresh;
    ocisbx_headers *hl = NULL;
    c->errbuf[0] = '\0';
    rc = ocisbx_http_build_headers(h, r, &c->u, &hl);
    if (rc == 0)
        ocisbx_http_debug_request(r, hl, c->n, c->max_attempts);
    if (rc == 0)
        rc = ocisbx_http_body_begin(r);
    if (rc == 0)
        rc = ocisbx_http_attempt_setup(h, a, easy, hl, &c->slist, c->errbuf);
    ocisbx_headers_free(hl);
    if (rc) {
        ocisbx_http_slist_free(c->slist);
        c->slist = NULL;
        return rc;
    }
    c->easy = easy;
    return 0;
}

static int stop_of(const ocisbx_http_attempt *a)
{
    if (a->canceled)
        return OCISBX_HTTP_STOP_CANCELED;
    if (a->deadline_expired)
        return OCISBX_HTTP_STOP_DEADLINE;
    if (a->body_rc)
        return OCISBX_HTTP_STOP_BODY_SOURCE;
    if (a->sink_rc)
        return OCISBX_HTTP_STOP_SINK_ERROR;
    if (a->sink_canceled)
        return OCISBX_HTTP_STOP_SINK_CANCELED;
    if (a->headers_canceled)
        return OCISBX_HTTP_STOP_HEADERS_CANCEL;
    if (a->headers_too_large)
        return OCISBX_HTTP_STOP_HEADERS_LARGE;
    if (a->idle_expired)
        return OCISBX_HTTP_STOP_IDLE;
    return OCISBX_HTTP_STOP_NONE;
}

static bool state_code(const ocisbx_http_response *resp)
{
    char *code = NULL, *msg = NULL;
    ocisbx_http_parse_error_body(resp->body.data, resp->body.len, &code, &msg);
    bool yes = code && (strcmp(code, "IncorrectState") == 0 || strcmp(code, "LockConflict") == 0);
    free(code);
    free(msg);
    return yes;
}

static int64_t info_us(CURL *e, CURLINFO what)
{
    curl_off_t t = 0;
    return curl_easy_getinfo(e, what, &t) == CURLE_OK ? (int64_t)t : 0;
}

/* The outcome of the attempt that just ended (c->last). */
static void fill_outcome(ocisbx_http_call *c, CURLcode cc, long status)
{
    ocisbx_http_attempt *a = &c->a;
    ocisbx_http_outcome *o = &c->last;
    memset(o, 0, sizeof *o);
    o->curl_code = (int)cc;
    o->stop = stop_of(a);
    o->error_body_cut = a->error_body_cut;
    bool answered = (cc == CURLE_OK || (a->error_body_cut && a->status >= 300)) && !a->sink_rc;
    o->status = answered ? (int)status : 0;
    o->retry_after_ms = -1;
    if (o->status >= 400) {
        const char *rav = ocisbx_headers_get(c->resp->headers, "retry-after");
        o->retry_after_ms = ocisbx_http_retry_after_ms(rav, ocisbx_time_now_ms());
        o->retry_after_capped = o->retry_after_ms == OCISBX_HTTP_RETRY_AFTER_CAP_MS;
        o->retry_state_code = o->status == 409 && state_code(c->resp);
    }
    o->body_sent = a->body_sent;
    o->sink_bytes = c->r->sink == SINK_CALLBACK ? a->sink_bytes : 0;
    o->elapsed_ms = ocisbx_time_monotonic_ms() - a->started_at;
    o->t_dns_us = info_us(c->easy, CURLINFO_NAMELOOKUP_TIME_T);
    o->t_connect_us = info_us(c->easy, CURLINFO_CONNECT_TIME_T);
    o->t_tls_us = info_us(c->easy, CURLINFO_APPCONNECT_TIME_T);
    o->t_first_byte_us = info_us(c->easy, CURLINFO_STARTTRANSFER_TIME_T);
    o->t_total_us = info_us(c->easy, CURLINFO_TOTAL_TIME_T);
    c->answered = answered;
}

void ocisbx_http_call_end(ocisbx_http_call *c, CURLcode cc)
{
    ocisbx_http *h = c->h;
    ocisbx_http_request *r = c->r;
    ocisbx_http_response *resp = c->resp;
    CURL *e = c->easy;
    ocisbx_http_slist_free(c->slist);
    c->slist = NULL;
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, NULL);
    long status = 0, new_conns = 0, request_bytes = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(e, CURLINFO_NUM_CONNECTS, &new_conns);
    curl_easy_getinfo(e, CURLINFO_REQUEST_SIZE, &request_bytes);
    /* libcurl's own timeout is set to the deadline: when it fires there,
     * the deadline passed (the progress callback may not have seen it) */
    if (cc == CURLE_OPERATION_TIMEDOUT && c->a.deadline_at && ocisbx_time_monotonic_ms() + 20 >= c->a.deadline_at)
        c->a.deadline_expired = true;
    fill_outcome(c, cc, status);
    ocisbx_http_debug_times(r, &c->last);
    /* NUM_CONNECTS counts connections made; a request that went out
     * without one went on a kept-alive connection; neither: a failed
     * connect (or resolve), which reused nothing. */
    const char *conn = new_conns > 0 ? "new connection" : request_bytes > 0 ? "reused connection" : "no connection";
    resp->status = c->last.status;
    memcpy(resp->reason, c->a.reason, sizeof resp->reason);
    resp->attempts = c->n;
    if (c->last.stop == OCISBX_HTTP_STOP_SINK_ERROR && cc == CURLE_OK)
        return; /* the answer came but could not be kept: the call fails with that */
    free(resp->request_id);
    const char *rid = ocisbx_headers_get(resp->headers, "opc-request-id");
    resp->request_id = ocisbx_strdup(rid ? rid : r->request_id);
    bool failed = cc != CURLE_OK && !c->answered;
    ocisbx_log(OCISBX_LOG_DEBUG, "http: %s %.300s -> %d%s%s (opc-request-id: %s, attempt %d/%d, %s)", r->method,
               r->url, resp->status, failed ? " " : "", failed ? curl_easy_strerror(cc) : "",
               resp->request_id ? resp->request_id : "-", c->n, c->max_attempts, conn);
    if (h->opt.attempt_fn)
        h->opt.attempt_fn(r->method, r->url, c->n, resp->status, resp->request_id ? resp->request_id : r->request_id,
                          h->opt.attempt_ud);
}

ocisbx_http_decision ocisbx_http_call_decide(ocisbx_http_call *c, const ocisbx_http_retry_budget *budget)
{
    ocisbx_http *h = c->h;
    ocisbx_http_request *r = c->r;
    ocisbx_http_retry_policy p = {h->opt.retries, h->opt.max_attempts, h->opt.backoff_base_ms, h->opt.backoff_cap_ms,
                                  h->opt.max_jitter_ms};
    uint32_t rnd = 0;
    if (RAND_bytes((unsigned char *)&rnd, sizeof rnd) != 1)
        rnd = 0;
    ocisbx_http_decide_in in = {0};
    in.retry_class = r->retry_class;
    in.method = r->method;
    in.body_rewindable = ocisbx_http_body_replayable(r);
    in.attempt = c->n;
    in.max_attempts = c->max_attempts;
    in.can_refresh = !c->refreshed && h->opt.creds && ocisbx_credentials_can_refresh(h->opt.creds);
    in.deadline_left_ms = c->deadline_at ? c->deadline_at - ocisbx_time_monotonic_ms() : -1;
    if (in.deadline_left_ms < -1)
        in.deadline_left_ms = 0;
    in.random = rnd;
    in.policy = &p;
    in.budget = budget;
    ocisbx_http_decision d = ocisbx_http_decide(&c->last, &in);
    bool used_ra = (d.action == OCISBX_HTTP_RETRY && d.from_retry_after) ||
                   (d.why == OCISBX_HTTP_WHY_PAST_DEADLINE && c->last.retry_after_ms >= 0);
    if (used_ra && c->last.retry_after_capped)
        ocisbx_log(OCISBX_LOG_DEBUG, "http: %s %.300s: retry-after %.40s capped at %d ms (opc-request-id: %s)",
                   r->method, r->url, ocisbx_headers_get(c->resp->headers, "retry-after"),
                   OCISBX_HTTP_RETRY_AFTER_CAP_MS, r->request_id);
    return d;
}

int ocisbx_http_call_before_retry(ocisbx_http_call *c, const ocisbx_http_decision *d)
{
    ocisbx_http *h = c->h;
    ocisbx_http_request *r = c->r;
    if (d->action == OCISBX_HTTP_REFRESH) {
        /* An expired token: refresh once and re-sign (not a retry of the
         * policy). A provider without a refresh (API key) never gets here. */
        c->refreshed = true;
        if (ocisbx_credentials_refresh(h->opt.creds) != 0)
            return 1;
        if (c->n >= c->max_attempts)
            c->max_attempts = c->n + 1;
    }
    /* INFO: a program may show it (the CLI does on a terminal) so a long
     * series of retries is not silent */
    char cause[CURL_ERROR_SIZE + 160];
    if (!c->answered)
        snprintf(cause, sizeof cause, "%s",
                 c->errbuf[0] ? c->errbuf : curl_easy_strerror((CURLcode)c->last.curl_code));
    else
        snprintf(cause, sizeof cause, "HTTP %d%s%s", c->resp->status, c->a.reason[0] ? " " : "", c->a.reason);
    ocisbx_log(OCISBX_LOG_INFO, "http: %s %.300s: %s; retrying in %lld ms (attempt %d of %d, opc-request-id: %s)",
               r->method, r->url, cause, (long long)d->wait_ms, c->n + 1, c->max_attempts, r->request_id);
    if (h->opt.retry_fn)
        h->opt.retry_fn(c->n + 1, c->max_attempts, d->wait_ms, c->answered ? c->resp->status : 0, cause,
                        r->request_id, h->opt.retry_ud);
    ocisbx_dest_abort(&c->dest); /* the next attempt starts the file again */
    return 0;
}

/* ---- the result ---- */
static int fail_answer(ocisbx_http_request *r, ocisbx_http_response *resp, const char *reason)
{
    char *code = NULL, *msg = NULL;
    ocisbx_http_parse_error_body(resp->body.data, resp->body.len, &code, &msg);
    int rc = ocisbx_status_from_http(resp->status);
    ocisbx_buf m = OCISBX_BUF_INIT;
    ocisbx_buf_appendf(&m, "%s %.300s: %d", r->method, r->url, resp->status);
    if (code)
        ocisbx_buf_appendf(&m, " %s", code);
    if (msg && *msg)
        ocisbx_buf_appendf(&m, "%s %s", code ? ":" : "", msg);
    if (!code && !(msg && *msg) && reason && *reason)
        ocisbx_buf_appendf(&m, " %s", reason);
    if (resp->attempts > 1)
        ocisbx_buf_appendf(&m, " (after %d attempts, opc-request-id: %s)", resp->attempts,
                           resp->request_id ? resp->request_id : "none");
    else
        ocisbx_buf_appendf(&m, " (opc-request-id: %s)", resp->request_id ? resp->request_id : "none");
    ocisbx_fail_http(rc, resp->status, code, resp->request_id, "%s", m.data ? m.data : "HTTP error");
    ocisbx_error_set_attempts(resp->attempts);
    ocisbx_buf_free(&m);
    free(code);
    free(msg);
    return rc;
}

static int fail_local(ocisbx_http_call *c, CURLcode cc)
{
    ocisbx_http_request *r = c->r;
    ocisbx_http_attempt *a = &c->a;
    if (a->body_rc)
        return ocisbx_error_wrap("%s %.300s: request body: ", r->method, r->url);
    if (a->sink_rc)
        return ocisbx_error_wrap("%s %.300s: ", r->method, r->url);
    if (a->canceled)
        return ocisbx_http_call_canceled(c);
    if (a->sink_canceled || a->headers_canceled)
        return ocisbx_fail(OCISBX_ECANCELED, "%s %.300s: canceled by the %s callback (opc-request-id: %s)", r->method,
                           r->url, a->headers_canceled ? "headers" : "response", r->request_id);
    if (a->headers_too_large || (cc == CURLE_OUT_OF_MEMORY && !a->headers_done)) {
        /* libcurl refuses one header line above its own limit (100 KiB) with
         * "out of memory"; more than ours in all is refused by on_header */
        ocisbx_fail(OCISBX_ETOOLARGE,
                    "%s %.300s: the answer's headers are too large (more than %d bytes in all, or a line above "
                    "libcurl's 100 KiB limit) (opc-request-id: %s)",
                    r->method, r->url, OCISBX_HTTP_HEADERS_MAX, r->request_id);
        ocisbx_error_set_attempts(c->n);
        return OCISBX_ETOOLARGE;
    }
    return 0;
}

static int fail_transport(ocisbx_http_call *c, CURLcode cc)
{
    ocisbx_http_request *r = c->r;
    ocisbx_http_attempt *a = &c->a;
    int rc = fail_local(c, cc);
    if (rc)
        return rc;
    int code = OCISBX_ETRANSPORT;
    char idle_msg[96];
    const char *what = c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc);
    if (a->idle_expired) {
        code = OCISBX_ETIMEOUT;
        snprintf(idle_msg, sizeof idle_msg, "idle timeout: no data for %lld ms", (long long)a->idle_ms);
        what = idle_msg;
    } else if (a->deadline_expired) {
        code = OCISBX_ETIMEOUT;
        what = "deadline passed";
    } else if (cc == CURLE_OPERATION_TIMEDOUT) {
        code = OCISBX_ETIMEOUT;
    }
    ocisbx_fail(code, "%s %.300s: %s after %d attempt%s (opc-request-id: %s)", r->method, r->url, what, c->n,
                c->n == 1 ? "" : "s", r->request_id);
    ocisbx_error_set_attempts(c->n);
    return code;
}

/* The result of the last attempt. */
static int last_result(ocisbx_http_call *c)
{
    ocisbx_http_request *r = c->r;
    if (c->last.stop == OCISBX_HTTP_STOP_SINK_ERROR && c->last.curl_code == CURLE_OK)
        return c->a.sink_rc;
    if (!c->answered)
        return fail_transport(c, (CURLcode)c->last.curl_code);
    if (c->resp->status >= 400)
        return fail_answer(r, c->resp, c->a.reason);
    int rc = 0;
    if (r->sink == SINK_FILE && !c->dest.fp) /* an empty answer still makes the file */
        rc = ocisbx_dest_open(&c->dest, r->sink_path, "response file");
    if (rc == 0 && r->sink == SINK_FILE)
        rc = ocisbx_dest_commit(&c->dest, "response file");
    return rc;
}

int ocisbx_http_call_finish(ocisbx_http_call *c, int rc, ocisbx_http_response **out)
{
    *out = NULL;
    ocisbx_http_request *r = c->r;
    ocisbx_http_response *resp = c->resp;
    if (rc == 0)
        rc = last_result(c);
    if (!c->answered)
        resp->status = 0;
    ocisbx_dest_abort(&c->dest); /* nothing partial stays (a no-op after a commit) */
    ocisbx_http_body_end(r);
    /* a failure that is no error answer still names the call: its request id,
     * and the status when an answer came (a broken or refused body) */
    if (rc != 0 && resp->status < 400)
        ocisbx_error_annotate(resp->status >= 200 ? resp->status : 0,
                              resp->request_id ? resp->request_id : r->request_id);
    c->resp = NULL;
    ocisbx_http_call_abandon(c);
    if (rc != 0 && resp->status < 400) {
        ocisbx_http_response_free(resp);
        return rc;
    }
    *out = resp;
    return rc;
}

void ocisbx_http_call_abandon(ocisbx_http_call *c)
{
    if (!c)
        return;
    ocisbx_http_slist_free(c->slist);
    ocisbx_dest_abort(&c->dest);
    if (c->resp)
        ocisbx_http_body_end(c->r);
    ocisbx_http_response_free(c->resp);
    ocisbx_url_clear(&c->u);
    free(c);
}
