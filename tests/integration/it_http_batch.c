/* The bounded parallel runner (src/http/batch.h) against the scripted test
 * server: requests really overlap (K at a time, never more), one 503 is
 * retried through the retry decision with the same opc-request-id, a
 * refused request stops the batch (nothing new starts, a retry wait is
 * dropped), a failing feed stops it too, and the progress callback sees
 * one transfer. The script's steps go to requests in the order they
 * arrive, so every case is written to hold whatever that order is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/batch.h"
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

static int reset(void **state)
{
    (void)state;
    ths_clear(srv);
    ths_set_default(srv, 200, NULL, "ok");
    return 0;
}

#define MAX_REQS 16

typedef struct run {
    int n;       /* requests the feed has */
    int given;   /* next() calls that gave one */
    int fail_at; /* next() fails when asked for this one (0: never) */
    ocisbx_http_request *reqs[MAX_REQS];
    int done_rc[MAX_REQS];
    bool done_aborted[MAX_REQS];
    int dones;
    int in_flight, max_in_flight;
    size_t seen_at_first_done; /* requests the server had when the first ended */
    int retries;
    int64_t up_max, up_last;
    bool up_went_back; /* the progress sum went down without a retry */
    char body[MAX_REQS][32];
} run;

static int feed_next(void *ud, ocisbx_http_request **r, void **tag)
{
    run *u = ud;
    if (u->fail_at && u->given + 1 == u->fail_at)
        return OCISBX_EIO;
    if (u->given == u->n) {
        *r = NULL;
        return 0;
    }
    int i = u->given++;
    char path[32];
    snprintf(path, sizeof path, "/part/%d", i);
    char *url = ths_url(srv, path);
    assert_int_equal(ocisbx_http_request_new("PUT", url, &u->reqs[i]), 0);
    free(url);
    snprintf(u->body[i], sizeof u->body[i], "body of part %d", i);
    assert_int_equal(ocisbx_http_request_set_body(u->reqs[i], u->body[i], strlen(u->body[i])), 0);
    *r = u->reqs[i];
    *tag = (void *)(intptr_t)i;
    if (++u->in_flight > u->max_in_flight)
        u->max_in_flight = u->in_flight;
    return 0;
}

static int feed_done(void *ud, void *tag, int rc, ocisbx_http_response *resp, bool aborted)
{
    run *u = ud;
    int i = (int)(intptr_t)tag;
    if (u->dones++ == 0)
        u->seen_at_first_done = ths_count(srv);
    u->in_flight--;
    u->done_rc[i] = rc;
    u->done_aborted[i] = aborted;
    ocisbx_http_response_free(resp);
    return aborted ? 0 : rc;
}

static void on_retry(int attempt, int max_attempts, int64_t delay_ms, int http_status, const char *cause,
                     const char *request_id, void *ud)
{
    (void)attempt;
    (void)max_attempts;
    (void)delay_ms;
    (void)http_status;
    (void)cause;
    (void)request_id;
    ((run *)ud)->retries++;
}

static void on_progress(int64_t down_now, int64_t down_total, int64_t up_now, int64_t up_total, void *ud)
{
    (void)down_now;
    (void)down_total;
    (void)up_total;
    run *u = ud;
    if (up_now < u->up_last && !u->retries)
        u->up_went_back = true;
    u->up_last = up_now;
    if (up_now > u->up_max)
        u->up_max = up_now;
}

static ocisbx_http *transport(run *u)
{
    ocisbx_http_options *o = NULL;
    ocisbx_http *h = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_ignore_proxy_env(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_max_attempts(o, 3), 0);
    assert_int_equal(ocisbx_http_options_set_backoff_ms(o, 1, 1), 0);
    assert_int_equal(ocisbx_http_options_set_max_jitter_ms(o, 0), 0);
    assert_int_equal(ocisbx_http_options_set_retry_callback(o, on_retry, u), 0);
    assert_int_equal(ocisbx_http_options_set_progress_callback(o, on_progress, u), 0);
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    ocisbx_http_options_free(o);
    return h;
}

static int batch(run *u, int k)
{
    ocisbx_http *h = transport(u);
    ocisbx_http_batch_feed f = {feed_next, feed_done, u};
    int rc = ocisbx_http_batch_run(h, k, &f);
    ocisbx_http_free(h);
    return rc;
}

static void free_reqs(run *u)
{
    for (int i = 0; i < u->given; i++)
        ocisbx_http_request_free(u->reqs[i]);
}

/* The first request to arrive is held 4 s: the second (K = 2) arrives and
 * ends before it, so the first request to end finds both at the server.
 * One at a time, it would find one. */
static void test_overlap(void **state)
{
    (void)state;
    /* 1.5 s: the other request is seen and answered meanwhile (4 s before;
     * both go out at once, milliseconds apart) */
    ths_step slow = {200, NULL, "slow", THS_RESPOND, 1500};
    ths_push_step(srv, &slow);
    run u = {.n = 2};
    assert_int_equal(batch(&u, 2), 0);
    assert_int_equal(u.dones, 2);
    assert_int_equal(u.seen_at_first_done, 2);
    assert_int_equal(u.done_rc[0], 0);
    assert_int_equal(u.done_rc[1], 0);
    free_reqs(&u);
}

/* Never more than K at once; one 503 (whichever request it hits) is
 * retried, the same opc-request-id on both attempts; every body arrives
 * whole; the progress sum only grows (but for the retry). */
static void test_retry_one(void **state)
{
    (void)state;
    ths_push(srv, 503, NULL, "{\"code\":\"ServiceUnavailable\",\"message\":\"busy\"}");
    run u = {.n = 7};
    assert_int_equal(batch(&u, 3), 0);
    assert_int_equal(u.dones, 7);
    assert_true(u.max_in_flight <= 3);
    assert_int_equal(u.retries, 1);
    assert_int_equal(ths_count(srv), 8);
    int twice = 0;
    for (size_t i = 0; i < ths_count(srv); i++) {
        const ths_request *a = ths_get(srv, i);
        int k = -1;
        assert_int_equal(sscanf(a->target, "/part/%d", &k), 1);
        assert_string_equal(a->body, u.body[k]);
        for (size_t j = i + 1; j < ths_count(srv); j++) {
            const ths_request *b = ths_get(srv, j);
            if (strcmp(a->target, b->target) == 0) {
                twice++;
                assert_string_equal(ths_header(a, "opc-request-id"), ths_header(b, "opc-request-id"));
            }
        }
    }
    assert_int_equal(twice, 1);
    for (int i = 0; i < 7; i++)
        assert_int_equal(u.done_rc[i], 0);
    size_t all = 0;
    for (int i = 0; i < 7; i++)
        all += strlen(u.body[i]);
    assert_int_equal(u.up_max, (int64_t)all); /* the batch as one upload */
    assert_false(u.up_went_back);
    free_reqs(&u);
}

/* Of two requests, one is refused (400) and one asked to come back in 30 s
 * (503, retry-after): the refusal stops the batch, the wait is dropped
 * (no third request, the waiting one ends as aborted), no request beyond
 * the first two starts, and the batch's error is the refusal's. */
static void test_refused_stops(void **state)
{
    (void)state;
    ths_push(srv, 503, "retry-after: 30\n", "{\"code\":\"ServiceUnavailable\",\"message\":\"later\"}");
    ths_push(srv, 400, NULL, "{\"code\":\"InvalidParameter\",\"message\":\"refused part\"}");
    run u = {.n = 6};
    assert_int_equal(batch(&u, 2), OCISBX_EINVAL);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "refused part"));
    assert_int_equal(u.given, 2);
    assert_int_equal(u.dones, 2);
    assert_int_equal(ths_count(srv), 2);
    assert_int_equal(u.retries, 1);
    int aborted = 0, refused = 0;
    for (int i = 0; i < 2; i++) {
        aborted += u.done_aborted[i] && u.done_rc[i] == OCISBX_ECANCELED;
        refused += !u.done_aborted[i] && u.done_rc[i] == OCISBX_EINVAL;
    }
    assert_int_equal(aborted, 1);
    assert_int_equal(refused, 1);
    free_reqs(&u);
}

/* The feed fails on its third request: the batch returns that failure
 * (not what ending the others set), the two started end, nothing more is
 * asked for. */
static void test_feed_fails(void **state)
{
    (void)state;
    run u = {.n = 6, .fail_at = 3};
    assert_int_equal(batch(&u, 2), OCISBX_EIO);
    assert_int_equal(u.given, 2);
    assert_int_equal(u.dones, 2);
    free_reqs(&u);
}

/* Bad arguments name the problem. */
static void test_bad_arguments(void **state)
{
    (void)state;
    run u = {.n = 1};
    ocisbx_http *h = transport(&u);
    ocisbx_http_batch_feed f = {feed_next, feed_done, &u};
    assert_int_equal(ocisbx_http_batch_run(h, 0, &f), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_batch_run(h, OCISBX_HTTP_BATCH_MAX + 1, &f), OCISBX_EINVAL);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "in flight"));
    assert_int_equal(ocisbx_http_batch_run(h, 1, NULL), OCISBX_EINVAL);
    assert_int_equal(u.given, 0);
    ocisbx_http_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_overlap, reset),
        cmocka_unit_test_setup(test_retry_one, reset),
        cmocka_unit_test_setup(test_refused_stops, reset),
        cmocka_unit_test_setup(test_feed_fails, reset),
        cmocka_unit_test_setup(test_bad_arguments, reset),
    };
    return par_run_group_tests_name("http batch", tests, setup, teardown);
}
