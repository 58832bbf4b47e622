/* Cancellation: the transport asks its cancel callback before each attempt,
 * during retry waits and during a transfer; the client passes its own to the
 * transport and the waiters ask it between polls. Every cancel ends the call
 * with OCISBX_ECANCELED (never ETRANSPORT) and no response. The retry
 * callback reports each wait with structured fields. Event-driven: the
 * callbacks decide to cancel from what happened, not from the clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ocisbx/ocisbx.h"
#include "test_http_server.h"
#include "par_run.h"

static ths *srv;

static int setup(void **state)
{
    (void)state;
    return ths_start(&srv);
}

static int teardown(void **state)
{
    (void)state;
    ths_stop(srv);
    return 0;
}

typedef struct probe {
    int cancel_calls;
    int cancel_after_requests; /* cancel once the server has seen this many (0: never by count) */
    int cancel_now;            /* set by the retry callback */
    int retries;
    int attempt, max_attempts, http_status;
    int64_t delay_ms;
    char cause[256];
    char request_id[128];
    const ocisbx_client *client; /* cancel once its first call has ended */
} probe;

static int on_cancel(void *ud)
{
    probe *p = ud;
    p->cancel_calls++;
    if (p->cancel_now)
        return 1;
    if (p->client)
        return ocisbx_client_last_request_id(p->client) != NULL;
    return p->cancel_after_requests > 0 && (int)ths_count(srv) >= p->cancel_after_requests;
}

static void on_retry(int attempt, int max_attempts, int64_t delay_ms, int http_status, const char *cause,
                     const char *request_id, void *ud)
{
    probe *p = ud;
    p->retries++;
    p->attempt = attempt;
    p->max_attempts = max_attempts;
    p->delay_ms = delay_ms;
    p->http_status = http_status;
    snprintf(p->cause, sizeof p->cause, "%s", cause ? cause : "");
    snprintf(p->request_id, sizeof p->request_id, "%s", request_id ? request_id : "");
    p->cancel_now = 1; /* the wait that follows is to be interrupted */
}

static ocisbx_http_options *options(probe *p, int with_retry_cb)
{
    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_ignore_proxy_env(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_max_attempts(o, 5), 0);
    assert_int_equal(ocisbx_http_options_set_cancel(o, on_cancel, p), 0);
    if (with_retry_cb)
        assert_int_equal(ocisbx_http_options_set_retry_callback(o, on_retry, p), 0);
    return o;
}

static ocisbx_http *transport(probe *p, int with_retry_cb)
{
    ocisbx_http_options *o = options(p, with_retry_cb);
    ocisbx_http *h = NULL;
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    ocisbx_http_options_free(o);
    return h;
}

static int send_get(ocisbx_http *h, const char *path, ocisbx_http_response **resp, char *rid, size_t cap)
{
    char *url = ths_url(srv, path);
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_request_new("GET", url, &r), 0);
    free(url);
    int rc = ocisbx_http_send(h, r, resp);
    snprintf(rid, cap, "%s", ocisbx_http_request_request_id(r));
    ocisbx_http_request_free(r);
    return rc;
}

/* A 503 asking for a 60 s wait: the retry callback reports it, then the
 * cancel during the wait ends the call at once. */
static void test_cancel_during_backoff(void **state)
{
    (void)state;
    ths_clear(srv);
    ths_set_default(srv, 503, "retry-after: 60", "{\"code\":\"Busy\",\"message\":\"later\"}");
    probe p = {0};
    ocisbx_http *h = transport(&p, 1);
    ocisbx_http_response *resp = NULL;
    char rid[128];
    int64_t t0 = ocisbx_time_monotonic_ms();
    int rc = send_get(h, "/x", &resp, rid, sizeof rid);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    const ocisbx_error *e = ocisbx_error_last();
    assert_int_equal(rc, OCISBX_ECANCELED);
    assert_int_equal(ocisbx_error_code(e), OCISBX_ECANCELED);
    assert_null(resp);
    assert_int_equal(ths_count(srv), 1);
    assert_int_equal(ocisbx_error_attempts(e), 1);
    assert_string_equal(ocisbx_error_request_id(e), rid);
    assert_true(took < 30000); /* the 60 s wait was not served */
    /* the retry callback's fields */
    assert_int_equal(p.retries, 1);
    assert_int_equal(p.attempt, 2);
    assert_int_equal(p.max_attempts, 5);
    assert_int_equal(p.delay_ms, 60000);
    assert_int_equal(p.http_status, 503);
    assert_non_null(strstr(p.cause, "503"));
    assert_string_equal(p.request_id, rid);
    ocisbx_http_free(h);
}

/* The answer is held back 5 s; the cancel says yes once the server has the
 * request: the transfer in flight is aborted, ECANCELED, not ETRANSPORT. */
static void test_cancel_in_flight(void **state)
{
    (void)state;
    ths_clear(srv);
    ths_step slow = {200, NULL, "{}", THS_RESPOND, 5000};
    ths_push_step(srv, &slow);
    probe p = {0};
    p.cancel_after_requests = 1;
    ocisbx_http *h = transport(&p, 0);
    ocisbx_http_response *resp = NULL;
    char rid[128];
    int rc = send_get(h, "/slow", &resp, rid, sizeof rid);
    assert_int_equal(rc, OCISBX_ECANCELED);
    assert_null(resp);
    assert_int_equal(ths_count(srv), 1); /* not retried */
    assert_int_equal(ocisbx_error_attempts(ocisbx_error_last()), 1);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "canceled"));
    ocisbx_http_free(h);
}

/* Canceled before anything: no request is sent. */
static void test_cancel_before_first_attempt(void **state)
{
    (void)state;
    ths_clear(srv);
    probe p = {0};
    p.cancel_now = 1;
    ocisbx_http *h = transport(&p, 0);
    ocisbx_http_response *resp = NULL;
    char rid[128];
    assert_int_equal(send_get(h, "/x", &resp, rid, sizeof rid), OCISBX_ECANCELED);
    assert_null(resp);
    assert_int_equal(ths_count(srv), 0);
    assert_int_equal(p.cancel_calls, 1);
    ocisbx_http_free(h);
}

/* Without a cancel, the retry callback sees every wait, and the final
 * error carries the attempt count. */
static void test_retry_callback_and_attempts(void **state)
{
    (void)state;
    ths_clear(srv);
    ths_set_default(srv, 500, "retry-after: 0", "{\"code\":\"Oops\",\"message\":\"x\"}");
    probe p = {0};
    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_ignore_proxy_env(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_max_attempts(o, 3), 0);
    assert_int_equal(ocisbx_http_options_set_retry_callback(o, on_retry, &p), 0);
    ocisbx_http *h = NULL;
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    ocisbx_http_options_free(o);
    ocisbx_http_response *resp = NULL;
    char rid[128];
    assert_int_equal(send_get(h, "/x", &resp, rid, sizeof rid), OCISBX_ESERVICE);
    assert_int_equal(ocisbx_error_attempts(ocisbx_error_last()), 3);
    assert_int_equal(ocisbx_error_http_status(ocisbx_error_last()), 500);
    assert_int_equal(p.retries, 2);
    assert_int_equal(p.attempt, 3); /* the last wait was before attempt 3 */
    assert_int_equal(p.http_status, 500);
    assert_int_equal(p.delay_ms, 0);
    assert_int_equal(ocisbx_http_response_attempts(resp), 3);
    ocisbx_http_response_free(resp);
    ocisbx_http_free(h);
    /* one attempt: 1; a failure that is no call's: 0 */
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_request_new("GET", "not a url", &r), OCISBX_EINVAL);
    assert_int_equal(ocisbx_error_attempts(ocisbx_error_last()), 0);
}

/* The client's cancel (set before the http options, which must not drop
 * it) ends a wait between polls: the sandbox stays CREATING, the poll
 * interval is 60 s, and the cancel says yes once the first GET has ended
 * (the client noted its request id), so it is the wait that is canceled. */
static void test_client_wait_canceled(void **state)
{
    (void)state;
    ths_clear(srv);
    ths_set_default(srv, 200, "content-type: application/json", "{\"id\":\"sb1\",\"lifecycleState\":\"CREATING\"}");
    probe p = {0};
    ocisbx_client_options *co = NULL;
    ocisbx_http_options *ho = NULL;
    assert_int_equal(ocisbx_http_options_new(&ho), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(ho, 1), 0);
    assert_int_equal(ocisbx_http_options_set_ignore_proxy_env(ho, 1), 0);
    assert_int_equal(ocisbx_client_options_new(&co), 0);
    assert_int_equal(ocisbx_client_options_set_cancel(co, on_cancel, &p), 0);
    assert_int_equal(ocisbx_client_options_set_http_options(co, ho), 0);
    char *url = ths_url(srv, "");
    assert_int_equal(ocisbx_client_options_set_endpoint(co, url), 0);
    free(url);
    ocisbx_client *c = NULL;
    assert_int_equal(ocisbx_client_new(co, &c), 0);
    ocisbx_client_options_free(co);
    ocisbx_http_options_free(ho);
    p.client = c;
    ocisbx_sandbox *sb = NULL;
    int64_t t0 = ocisbx_time_monotonic_ms();
    int rc = ocisbx_client_wait_sandbox(c, "sb1", "ACTIVE", 600000, 60000, &sb);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    if (rc != OCISBX_ECANCELED)
        fail_msg("rc %d: %s", rc, ocisbx_error_message(ocisbx_error_last()));
    assert_null(sb);
    assert_int_equal(ths_count(srv), 1);
    assert_true(took < 30000);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "CREATING"));
    ocisbx_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_during_backoff),       cmocka_unit_test(test_cancel_in_flight),
        cmocka_unit_test(test_cancel_before_first_attempt), cmocka_unit_test(test_retry_callback_and_attempts),
        cmocka_unit_test(test_client_wait_canceled),
    };
    return par_run_group_tests_name("it_http_cancel", tests, setup, teardown);
}
