/* The retry decision without a server: every row of docs/http.md's table
 * "The retry decision" is a case here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "http/http_internal.h"

enum { R = OCISBX_HTTP_RETRY, F = OCISBX_HTTP_FINISH, X = OCISBX_HTTP_REFRESH };

/* What differs from a plain first attempt of a SAFE GET with retries on. */
typedef struct row {
    const char *name;
    int status, curl_code, stop;
    int64_t retry_after_ms;
    bool state_code, body_cut;
    uint64_t sink_bytes;
    const char *method;
    int klass;             /* -1: SAFE */
    bool not_rewindable;   /* a callback body without a rewind function */
    bool retries_off;
    int attempt;           /* 0: 1 */
    bool can_refresh;
    int64_t deadline_left; /* 0: none */
    double budget;         /* < 0: no budget; else its tokens */
    /* expected */
    int action, why;
    int64_t wait; /* -1: the backoff of the attempt (random 0) */
} row;

static const ocisbx_http_retry_policy policy = {true, 8, 1000, 30000, 1000};

static const row rows[] = {
    /* answers that end the call */
    {"200", 200, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_SUCCESS, 0},
    {"204", 204, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_SUCCESS, 0},
    {"302 not followed", 302, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_SUCCESS, 0},
    {"400", 400, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_NOT_RETRYABLE, 0},
    {"404", 404, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_NOT_RETRYABLE, 0},
    {"409 other code", 409, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_NOT_RETRYABLE, 0},
    {"412", 412, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_NOT_RETRYABLE, 0},
    {"413", 413, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_NOT_RETRYABLE, 0},
    {"501", 501, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_NOT_RETRYABLE, 0},
    /* answers that are retried */
    {"429 backoff", 429, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_THROTTLED, -1},
    {"429 retry-after", 429, 0, 0, 1500, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_THROTTLED, 1500},
    {"500", 500, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_SERVER_ERROR, -1},
    {"502", 502, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_SERVER_ERROR, -1},
    {"503", 503, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_SERVER_ERROR, -1},
    {"503 retry-after", 503, 0, 0, 7000, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_SERVER_ERROR, 7000},
    {"504", 504, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_SERVER_ERROR, -1},
    {"409 IncorrectState", 409, 0, 0, -1, 1, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_STATE_CONFLICT, -1},
    {"500 cut at 64 KiB", 500, CURLE_WRITE_ERROR, 0, -1, 0, 1, 0, 0, -1, 0, 0, 0, 0, 0, -1, R,
     OCISBX_HTTP_WHY_SERVER_ERROR, -1},
    {"404 cut at 64 KiB", 404, CURLE_WRITE_ERROR, 0, -1, 0, 1, 0, 0, -1, 0, 0, 0, 0, 0, -1, F,
     OCISBX_HTTP_WHY_NOT_RETRYABLE, 0},
    /* transfers without an answer */
    {"timeout", 0, CURLE_OPERATION_TIMEDOUT, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_TIMEOUT, -1},
    {"idle timeout", 0, CURLE_ABORTED_BY_CALLBACK, OCISBX_HTTP_STOP_IDLE, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R,
     OCISBX_HTTP_WHY_TIMEOUT, -1},
    {"could not connect", 0, CURLE_COULDNT_CONNECT, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R,
     OCISBX_HTTP_WHY_CONNECTION, -1},
    {"send error", 0, CURLE_SEND_ERROR, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_CONNECTION, -1},
    {"receive error", 0, CURLE_RECV_ERROR, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_CONNECTION,
     -1},
    {"empty reply", 0, CURLE_GOT_NOTHING, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_CONNECTION, -1},
    {"body cut short", 0, CURLE_PARTIAL_FILE, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_CONNECTION,
     -1},
    {"http2 stream", 0, CURLE_HTTP2_STREAM, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, R, OCISBX_HTTP_WHY_CONNECTION,
     -1},
    {"dns", 0, CURLE_COULDNT_RESOLVE_HOST, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_NOT_RETRYABLE,
     0},
    {"tls certificate", 0, CURLE_PEER_FAILED_VERIFICATION, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F,
     OCISBX_HTTP_WHY_NOT_RETRYABLE, 0},
    {"tls handshake", 0, CURLE_SSL_CONNECT_ERROR, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F,
     OCISBX_HTTP_WHY_NOT_RETRYABLE, 0},
    /* stopped by the client */
    {"canceled", 0, CURLE_ABORTED_BY_CALLBACK, OCISBX_HTTP_STOP_CANCELED, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F,
     OCISBX_HTTP_WHY_LOCAL_STOP, 0},
    {"deadline passed", 0, CURLE_OPERATION_TIMEDOUT, OCISBX_HTTP_STOP_DEADLINE, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1,
     F, OCISBX_HTTP_WHY_LOCAL_STOP, 0},
    {"body source failed", 0, CURLE_ABORTED_BY_CALLBACK, OCISBX_HTTP_STOP_BODY_SOURCE, -1, 0, 0, 0, "PUT", -1, 0, 0,
     0, 0, 0, -1, F, OCISBX_HTTP_WHY_LOCAL_STOP, 0},
    {"sink failed", 0, CURLE_WRITE_ERROR, OCISBX_HTTP_STOP_SINK_ERROR, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F,
     OCISBX_HTTP_WHY_LOCAL_STOP, 0},
    {"sink canceled", 0, CURLE_WRITE_ERROR, OCISBX_HTTP_STOP_SINK_CANCELED, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F,
     OCISBX_HTTP_WHY_LOCAL_STOP, 0},
    {"headers callback canceled", 0, CURLE_WRITE_ERROR, OCISBX_HTTP_STOP_HEADERS_CANCEL, -1, 0, 0, 0, 0, -1, 0, 0, 0,
     0, 0, -1, F, OCISBX_HTTP_WHY_LOCAL_STOP, 0},
    {"headers too large", 0, CURLE_WRITE_ERROR, OCISBX_HTTP_STOP_HEADERS_LARGE, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1,
     F, OCISBX_HTTP_WHY_LOCAL_STOP, 0},
    /* the gates before a retry */
    {"retries off", 503, 0, 0, -1, 0, 0, 0, 0, -1, 0, 1, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_RETRIES_OFF, 0},
    {"class NEVER", 503, 0, 0, -1, 0, 0, 0, "POST", OCISBX_HTTP_RETRY_NEVER, 0, 0, 0, 0, 0, -1, F,
     OCISBX_HTTP_WHY_RETRIES_OFF, 0},
    {"class TOKEN", 503, 0, 0, -1, 0, 0, 0, "POST", OCISBX_HTTP_RETRY_TOKEN, 0, 0, 0, 0, 0, -1, R,
     OCISBX_HTTP_WHY_SERVER_ERROR, -1},
    {"attempts used", 503, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 8, 0, 0, -1, F, OCISBX_HTTP_WHY_ATTEMPTS_USED, 0},
    {"last but one attempt", 503, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 7, 0, 0, -1, R, OCISBX_HTTP_WHY_SERVER_ERROR, -1},
    {"callback body without rewind", 503, 0, 0, -1, 0, 0, 0, "PUT", -1, 1, 0, 0, 0, 0, -1, F,
     OCISBX_HTTP_WHY_NOT_REPLAYABLE, 0},
    {"GET has no body to replay", 503, 0, 0, -1, 0, 0, 0, "GET", -1, 1, 0, 0, 0, 0, -1, R,
     OCISBX_HTTP_WHY_SERVER_ERROR, -1},
    {"sink has bytes", 0, CURLE_RECV_ERROR, 0, -1, 0, 0, 10, 0, -1, 0, 0, 0, 0, 0, -1, F,
     OCISBX_HTTP_WHY_SINK_STARTED, 0},
    {"wait past the deadline", 503, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 500, -1, F, OCISBX_HTTP_WHY_PAST_DEADLINE, 0},
    {"retry-after past the deadline", 429, 0, 0, 60000, 0, 0, 0, 0, -1, 0, 0, 0, 0, 2000, -1, F,
     OCISBX_HTTP_WHY_PAST_DEADLINE, 0},
    {"wait within the deadline", 503, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 5000, -1, R, OCISBX_HTTP_WHY_SERVER_ERROR,
     -1},
    {"budget empty", 503, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0.5, F, OCISBX_HTTP_WHY_BUDGET_EMPTY, 0},
    {"budget has a token", 503, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 1.0, R, OCISBX_HTTP_WHY_SERVER_ERROR, -1},
    {"throttling takes no budget", 429, 0, 0, 1000, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0.0, R, OCISBX_HTTP_WHY_THROTTLED,
     1000},
    /* 401 */
    {"401 refresh", 401, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 1, 0, -1, X, OCISBX_HTTP_WHY_REFRESH, 0},
    {"401 refresh, retries off", 401, 0, 0, -1, 0, 0, 0, 0, -1, 0, 1, 0, 1, 0, -1, X, OCISBX_HTTP_WHY_REFRESH, 0},
    {"401 refresh, class NEVER", 401, 0, 0, -1, 0, 0, 0, "POST", OCISBX_HTTP_RETRY_NEVER, 0, 0, 0, 1, 0, -1, X,
     OCISBX_HTTP_WHY_REFRESH, 0},
    {"401 refresh, attempts used", 401, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 8, 1, 0, -1, X, OCISBX_HTTP_WHY_REFRESH, 0},
    {"401 nothing to refresh", 401, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, F, OCISBX_HTTP_WHY_NOT_RETRYABLE, 0},
    {"401 body not replayable", 401, 0, 0, -1, 0, 0, 0, "PUT", -1, 1, 0, 0, 1, 0, -1, F,
     OCISBX_HTTP_WHY_NOT_RETRYABLE, 0},
};

static ocisbx_http_decision run_row(const row *w)
{
    ocisbx_http_outcome o;
    memset(&o, 0, sizeof o);
    o.status = w->status;
    o.curl_code = w->curl_code;
    o.stop = w->stop;
    o.retry_after_ms = w->retry_after_ms;
    o.retry_state_code = w->state_code;
    o.error_body_cut = w->body_cut;
    o.sink_bytes = w->sink_bytes;
    ocisbx_http_retry_policy p = policy;
    p.enabled = !w->retries_off;
    ocisbx_http_retry_budget b = {w->budget, 10, 0.1};
    ocisbx_http_decide_in in;
    memset(&in, 0, sizeof in);
    in.retry_class = w->klass < 0 ? OCISBX_HTTP_RETRY_SAFE : w->klass;
    in.method = w->method ? w->method : "GET";
    in.body_rewindable = !w->not_rewindable;
    in.attempt = w->attempt ? w->attempt : 1;
    in.max_attempts = p.max_attempts;
    in.can_refresh = w->can_refresh;
    in.deadline_left_ms = w->deadline_left ? w->deadline_left : -1;
    in.random = 0;
    in.policy = &p;
    in.budget = w->budget < 0 ? NULL : &b;
    return ocisbx_http_decide(&o, &in);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *w = &rows[i];
        ocisbx_http_decision d = run_row(w);
        if (d.action != w->action || d.why != w->why)
            fail_msg("row \"%s\": action %d why %s, expected action %d why %s", w->name, d.action,
                     ocisbx_http_why_name(d.why), w->action, ocisbx_http_why_name(w->why));
        int64_t want = w->action != R ? 0 : w->wait >= 0 ? w->wait : ocisbx_http_backoff_ms(&policy, 1, 0);
        if (w->action == R && w->wait < 0 && w->attempt)
            want = ocisbx_http_backoff_ms(&policy, w->attempt, 0);
        if (d.wait_ms != want)
            fail_msg("row \"%s\": wait %lld, expected %lld", w->name, (long long)d.wait_ms, (long long)want);
        assert_int_equal(d.from_retry_after, w->action == R && w->wait >= 0);
    }
}

/* The same inputs give the same decision (the function is pure). */
static void test_pure(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ocisbx_http_decision a = run_row(&rows[i]), b = run_row(&rows[i]);
        assert_int_equal(a.action, b.action);
        assert_int_equal(a.why, b.why);
        assert_int_equal(a.wait_ms, b.wait_ms);
        assert_int_equal(a.from_retry_after, b.from_retry_after);
        assert_int_equal(a.spends_budget, b.spends_budget);
    }
}

/* With the defaults the waits are 1, 2, 4, 8, 16, 30, 30 s, each plus up
 * to 1 s of jitter: random % (jitter + 1). */
static void test_backoff(void **state)
{
    (void)state;
    const int64_t want[] = {1000, 2000, 4000, 8000, 16000, 30000, 30000};
    for (int n = 1; n <= 7; n++) {
        assert_int_equal(ocisbx_http_backoff_ms(&policy, n, 0), want[n - 1]);
        assert_int_equal(ocisbx_http_backoff_ms(&policy, n, 1000), want[n - 1] + 1000);
        assert_int_equal(ocisbx_http_backoff_ms(&policy, n, 1001), want[n - 1]); /* 1001 % 1001 */
    }
    ocisbx_http_retry_policy none = {true, 8, 1, 10, 0};
    assert_int_equal(ocisbx_http_backoff_ms(&none, 1, 12345), 1);
    assert_int_equal(ocisbx_http_backoff_ms(&none, 30, 12345), 10); /* no overflow */
}

/* Only retries of failures take a token; throttling and refreshes do not. */
static void test_budget_accounting(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *w = &rows[i];
        if (w->budget < 0)
            continue;
        ocisbx_http_decision d = run_row(w);
        assert_int_equal(d.spends_budget, d.action == R && d.why != OCISBX_HTTP_WHY_THROTTLED);
    }
    ocisbx_http_retry_budget b;
    ocisbx_http_budget_init(&b, 2, 0.5);
    ocisbx_http_budget_spend(&b);
    ocisbx_http_budget_spend(&b);
    assert_true(b.tokens < 1.0);
    ocisbx_http_budget_spend(&b); /* never below 0 */
    assert_true(b.tokens >= 0.0);
    ocisbx_http_budget_success(&b);
    ocisbx_http_budget_success(&b);
    assert_true(b.tokens >= 1.0);
    for (int i = 0; i < 10; i++)
        ocisbx_http_budget_success(&b);
    assert_true(b.tokens <= 2.0);
}

/* Every why has a name. */
static void test_names(void **state)
{
    (void)state;
    for (int w = OCISBX_HTTP_WHY_SUCCESS; w <= OCISBX_HTTP_WHY_CONNECTION; w++)
        assert_string_not_equal(ocisbx_http_why_name(w), "?");
    assert_string_equal(ocisbx_http_why_name(99), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),           cmocka_unit_test(test_pure),  cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_budget_accounting), cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
