/* Event streams pick their parser from the answer's Content-Type (the http
 * layer's headers callback), and sniff the first line only without one. */
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
    char types[256];
} seen;

static int collect(const ocisbx_command_event *ev, void *ud)
{
    seen *s = ud;
    s->n++;
    size_t l = strlen(s->types);
    snprintf(s->types + l, sizeof s->types - l, "%s%s:%lld", l ? "," : "", ocisbx_command_event_type(ev),
             (long long)ocisbx_command_event_seq(ev));
    return 0;
}

static ocisbx_client *make_client(ths *srv)
{
    ocisbx_http_options *ho = NULL;
    assert_int_equal(ocisbx_http_options_new(&ho), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(ho, 1), 0);
    assert_int_equal(ocisbx_http_options_set_ignore_proxy_env(ho, 1), 0);
    assert_int_equal(ocisbx_http_options_set_retries(ho, 0), 0);
    ocisbx_client_options *o = NULL;
    assert_int_equal(ocisbx_client_options_new(&o), 0);
    char *url = ths_url(srv, "");
    assert_int_equal(ocisbx_client_options_set_endpoint(o, url), 0);
    free(url);
    assert_int_equal(ocisbx_client_options_set_http_options(o, ho), 0);
    assert_int_equal(ocisbx_client_options_set_stream_resume_limit(o, 0), 0);
    ocisbx_client *c = NULL;
    assert_int_equal(ocisbx_client_new(o, &c), 0);
    ocisbx_client_options_free(o);
    ocisbx_http_options_free(ho);
    return c;
}

/* An SSE stream whose first line starts with '{' (a field line that SSE
 * ignores): sniffing would take it for NDJSON and deliver it, then fail on
 * the "data:" line. The Content-Type says SSE, so only FINISHED comes. */
static void test_content_type_sse_wins_over_first_line(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    ths_push(srv, 200, "content-type: text/event-stream",
             "{\"seq\":1,\"event\":\"STDOUT\",\"data\":\"x\"}\n"
             "data: {\"seq\":2,\"event\":\"FINISHED\",\"exitCode\":0}\n\n");
    ocisbx_client *c = make_client(srv);
    seen s = {0};
    int rc = ocisbx_client_stream_command_events(c, "sb1", "cmd1", OCISBX_SEQ_START, 0, collect, &s);
    if (rc)
        fprintf(stderr, "%s\n", ocisbx_error_message(ocisbx_error_last()));
    assert_int_equal(rc, 0);
    assert_string_equal(s.types, "FINISHED:2");
    ocisbx_client_free(c);
    ths_stop(srv);
}

/* NDJSON by Content-Type even when the first line does not start with '{'
 * (leading whitespace is legal JSON); and with no Content-Type the first
 * line still decides. */
static void test_content_type_ndjson_and_absent(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    ths_push(
        srv, 200, "content-type: application/x-ndjson; charset=utf-8",
        "\n{\"seq\":1,\"event\":\"STDOUT\",\"data\":\"x\"}\n{\"seq\":2,\"event\":\"FINISHED\",\"exitCode\":0}\n");
    ocisbx_client *c = make_client(srv);
    seen s = {0};
    assert_int_equal(ocisbx_client_stream_command_events(c, "sb1", "cmd1", OCISBX_SEQ_START, 0, collect, &s), 0);
    assert_string_equal(s.types, "STDOUT:1,FINISHED:2");

    ths_push(srv, 200, NULL, "data: {\"seq\":1,\"event\":\"FINISHED\",\"exitCode\":0}\n\n");
    seen s2 = {0};
    assert_int_equal(ocisbx_client_stream_command_events(c, "sb1", "cmd2", OCISBX_SEQ_START, 0, collect, &s2), 0);
    assert_string_equal(s2.types, "FINISHED:1");
    ocisbx_client_free(c);
    ths_stop(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_content_type_sse_wins_over_first_line),
        cmocka_unit_test(test_content_type_ndjson_and_absent),
    };
    return par_run_group_tests_name("it_http_stream_format", tests, NULL, NULL);
}
