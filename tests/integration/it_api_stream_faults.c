/* Event streams against a scripted server: a service that is gone fails at
 * once with the transport's cause (no resumption on top of its retries), the
 * client's deadline bounds the whole stream, an answer that is no event
 * stream names its content-type, and NUL bytes in chunks survive. */
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

typedef struct seen {
    int n;
    char data[64];
    size_t len;
} seen;

static int collect(const ocisbx_command_event *ev, void *ud)
{
    seen *s = ud;
    s->n++;
    size_t n = 0;
    const char *d = ocisbx_command_event_data(ev, &n);
    if (s->len + n <= sizeof s->data) {
        memcpy(s->data + s->len, d, n);
        s->len += n;
    }
    return 0;
}

static int connects;
/* each attempt of an events request that got no answer */
static void count_attempts(const char *method, const char *url, int attempt, int http_status, const char *request_id,
                           void *ud)
{
    (void)method, (void)attempt, (void)request_id, (void)ud;
    if (strstr(url, "/events?fromSeq=") && http_status == 0)
        connects++;
}

/* resume_limit < 0: the client's default */
static ocisbx_client *make_client_opts(const char *url, int attempts, int64_t deadline_ms, int resume_limit)
{
    ocisbx_http_options *ho = NULL;
    assert_int_equal(ocisbx_http_options_new(&ho), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(ho, 1), 0);
    assert_int_equal(ocisbx_http_options_set_ignore_proxy_env(ho, 1), 0);
    assert_int_equal(ocisbx_http_options_set_max_attempts(ho, attempts), 0);
    assert_int_equal(ocisbx_http_options_set_backoff_ms(ho, 5, 10), 0);
    assert_int_equal(ocisbx_http_options_set_max_jitter_ms(ho, 1), 0);
    if (deadline_ms)
        assert_int_equal(ocisbx_http_options_set_deadline_ms(ho, deadline_ms), 0);
    assert_int_equal(ocisbx_http_options_set_attempt_callback(ho, count_attempts, NULL), 0);
    ocisbx_client_options *o = NULL;
    assert_int_equal(ocisbx_client_options_new(&o), 0);
    assert_int_equal(ocisbx_client_options_set_endpoint(o, url), 0);
    assert_int_equal(ocisbx_client_options_set_http_options(o, ho), 0);
    if (resume_limit >= 0)
        assert_int_equal(ocisbx_client_options_set_stream_resume_limit(o, resume_limit), 0);
    ocisbx_client *c = NULL;
    assert_int_equal(ocisbx_client_new(o, &c), 0);
    ocisbx_client_options_free(o);
    ocisbx_http_options_free(ho);
    return c;
}

static ocisbx_client *make_client(const char *url, int attempts, int64_t deadline_ms)
{
    return make_client_opts(url, attempts, deadline_ms, -1);
}

static ocisbx_client *make_client_limited(const char *url, int attempts, int resume_limit)
{
    return make_client_opts(url, attempts, 0, resume_limit);
}

/* Nothing listens: 3 attempts of the transport, no resumption on top, and
 * the message says which stream and why. */
static void test_service_gone_fails_at_once(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    char *url = ths_url(srv, "");
    ths_stop(srv); /* the port now refuses connections */
    ocisbx_client *c = make_client(url, 3, 0);
    connects = 0;
    seen s = {0};
    int rc = ocisbx_client_stream_command_events(c, "sb1", "cmd-1", 5, 0, collect, &s);
    const char *m = ocisbx_error_message(ocisbx_error_last());
    fprintf(stderr, "error: %s\n", m);
    assert_int_equal(rc, OCISBX_ETRANSPORT);
    assert_int_equal(connects, 3);
    assert_int_equal(ocisbx_error_attempts(ocisbx_error_last()), 3);
    assert_non_null(strstr(m, "streaming events of cmd-1 from seq 5: "));
    assert_non_null(strstr(m, "after 3 attempts"));
    assert_null(strstr(m, "FINISHED"));
    ocisbx_client_free(c);
    free(url);
}

/* Each connection ends with nothing new: with a deadline set, the whole
 * stream gives up with a timeout instead of resuming up to its limit. */
static void test_deadline_bounds_resumption(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    ths_set_default(srv, 200, "content-type: text/event-stream", ": keep-alive\n\n");
    char *url = ths_url(srv, "");
    ocisbx_client *c = make_client(url, 1, 400);
    seen s = {0};
    int rc = ocisbx_client_stream_command_events(c, "sb1", "cmd-2", OCISBX_SEQ_START, 0, collect, &s);
    const char *m = ocisbx_error_message(ocisbx_error_last());
    fprintf(stderr, "error: %s\n", m);
    assert_int_equal(rc, OCISBX_ETIMEOUT);
    assert_non_null(strstr(m, "streaming events of cmd-2"));
    assert_non_null(strstr(m, "deadline"));
    ocisbx_client_free(c);
    free(url);
    ths_stop(srv);
}

static void test_html_answer_names_content_type(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    ths_push(srv, 200, "content-type: text/html; charset=utf-8", "<html><body>login</body></html>\n");
    char *url = ths_url(srv, "");
    ocisbx_client *c = make_client(url, 1, 0);
    seen s = {0};
    int rc = ocisbx_client_stream_command_events(c, "sb1", "cmd-3", OCISBX_SEQ_START, 0, collect, &s);
    const char *m = ocisbx_error_message(ocisbx_error_last());
    fprintf(stderr, "error: %s\n", m);
    assert_int_equal(rc, OCISBX_EPARSE);
    assert_non_null(strstr(m, "text/html"));
    assert_int_equal(ocisbx_error_http_status(ocisbx_error_last()), 200);
    assert_non_null(ocisbx_error_request_id(ocisbx_error_last()));
    assert_int_equal(ths_count(srv), 1);
    ocisbx_client_free(c);
    free(url);
    ths_stop(srv);
}

static void test_nul_bytes_in_chunks(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    ths_push(srv, 200, "content-type: application/x-ndjson",
             "{\"seq\":1,\"event\":\"STDOUT\",\"data\":\"a\\u0000b\\n\"}\n"
             "{\"seq\":2,\"event\":\"FINISHED\",\"exitCode\":0}\n");
    char *url = ths_url(srv, "");
    ocisbx_client *c = make_client(url, 1, 0);
    seen s = {0};
    assert_int_equal(ocisbx_client_stream_command_events(c, "sb1", "cmd-4", OCISBX_SEQ_START, 0, collect, &s), 0);
    assert_int_equal(s.len, 4);
    assert_memory_equal(s.data, "a\0b\n", 4);
    ocisbx_client_free(c);
    free(url);
    ths_stop(srv);
}

/* A gap (2 then 5) is not accepted: the stream is resumed from seq 3, and
 * the events come in order without a hole. */
static void test_gap_is_resumed(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    ths_push(srv, 200, "content-type: application/x-ndjson",
             "{\"seq\":1,\"event\":\"STDOUT\",\"data\":\"a\"}\n"
             "{\"seq\":2,\"event\":\"STDOUT\",\"data\":\"b\"}\n"
             "{\"seq\":5,\"event\":\"STDOUT\",\"data\":\"e\"}\n"
             "{\"seq\":6,\"event\":\"FINISHED\",\"exitCode\":0}\n");
    ths_push(srv, 200, "content-type: application/x-ndjson",
             "{\"seq\":3,\"event\":\"STDOUT\",\"data\":\"c\"}\n"
             "{\"seq\":4,\"event\":\"STDOUT\",\"data\":\"d\"}\n"
             "{\"seq\":5,\"event\":\"STDOUT\",\"data\":\"e\"}\n"
             "{\"seq\":6,\"event\":\"FINISHED\",\"exitCode\":0}\n");
    char *url = ths_url(srv, "");
    ocisbx_client *c = make_client(url, 1, 0);
    seen s = {0};
    assert_int_equal(ocisbx_client_stream_command_events(c, "sb1", "cmd-5", OCISBX_SEQ_START, 0, collect, &s), 0);
    assert_int_equal(s.len, 5);
    assert_memory_equal(s.data, "abcde", 5);
    assert_int_equal(ths_count(srv), 2);
    assert_non_null(strstr(ths_get(srv, 1)->target, "fromSeq=3"));
    ocisbx_client_free(c);
    free(url);
    ths_stop(srv);
}

/* A gap that never fills fails, naming the missing events. */
static void test_gap_that_never_fills_fails(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    ths_set_default(srv, 200, "content-type: application/x-ndjson",
                    "{\"seq\":5,\"event\":\"STDOUT\",\"data\":\"e\"}\n"
                    "{\"seq\":6,\"event\":\"FINISHED\",\"exitCode\":0}\n");
    ths_push(srv, 200, "content-type: application/x-ndjson",
             "{\"seq\":1,\"event\":\"STDOUT\",\"data\":\"a\"}\n"
             "{\"seq\":5,\"event\":\"STDOUT\",\"data\":\"e\"}\n");
    char *url = ths_url(srv, "");
    /* a resume limit of 2 (the default 8 waits its backoff up to 16 s):
     * three connections without progress, then the error */
    ocisbx_client *c = make_client_limited(url, 1, 2);
    seen s = {0};
    assert_int_equal(ocisbx_client_stream_command_events(c, "sb1", "cmd-6", OCISBX_SEQ_START, 0, collect, &s),
                     OCISBX_EINTEGRITY);
    const char *m = ocisbx_error_message(ocisbx_error_last());
    if (!strstr(m, "events 2 to 4 never came") || !strstr(m, "3 times in a row"))
        fail_msg("%s", m);
    assert_int_equal(s.len, 1); /* only what came in order */
    ocisbx_client_free(c);
    free(url);
    ths_stop(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_service_gone_fails_at_once),
        cmocka_unit_test(test_deadline_bounds_resumption),
        cmocka_unit_test(test_html_answer_names_content_type),
        cmocka_unit_test(test_nul_bytes_in_chunks),
        cmocka_unit_test(test_gap_is_resumed),
        cmocka_unit_test(test_gap_that_never_fills_fails),
    };
    return par_run_group_tests_name("it_api_stream_faults", tests, NULL, NULL);
}
