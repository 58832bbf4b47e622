/* Failures that are no HTTP error still carry the call's opc-request-id
 * (and the status of the answer that came): a 200 that fails its checks or
 * does not parse, and a transport failure of a call with a caller-set id. */
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

static ocisbx_client *make_client(const char *url)
{
    ocisbx_http_options *ho = NULL;
    assert_int_equal(ocisbx_http_options_new(&ho), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(ho, 1), 0);
    assert_int_equal(ocisbx_http_options_set_ignore_proxy_env(ho, 1), 0);
    assert_int_equal(ocisbx_http_options_set_retries(ho, 0), 0);
    ocisbx_client_options *o = NULL;
    assert_int_equal(ocisbx_client_options_new(&o), 0);
    assert_int_equal(ocisbx_client_options_set_endpoint(o, url), 0);
    assert_int_equal(ocisbx_client_options_set_http_options(o, ho), 0);
    ocisbx_client *c = NULL;
    assert_int_equal(ocisbx_client_new(o, &c), 0);
    ocisbx_client_options_free(o);
    ocisbx_http_options_free(ho);
    return c;
}

static void expect(int rc, int code, int status, const char *rid, const char *needle)
{
    const ocisbx_error *e = ocisbx_error_last();
    fprintf(stderr, "error: %s\n", ocisbx_error_message(e));
    assert_int_equal(rc, code);
    assert_int_equal(ocisbx_error_http_status(e), status);
    assert_non_null(ocisbx_error_request_id(e));
    assert_string_equal(ocisbx_error_request_id(e), rid);
    if (needle && !strstr(ocisbx_error_message(e), needle))
        fail_msg("'%s' does not say '%s'", ocisbx_error_message(e), needle);
}

static void test_answers_that_fail_checks(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    char *url = ths_url(srv, "");
    ocisbx_client *c = make_client(url);

    /* a file whose content does not match its SHA-256 header */
    ths_push(srv, 200,
             "opc-request-id: rid-file\nopc-content-sha256: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "hello");
    unsigned char *data = NULL;
    size_t len = 0;
    int rc = ocisbx_client_read_file(c, "sb1", "/workspace/a.txt", &data, &len);
    expect(rc, OCISBX_EINTEGRITY, 200, "rid-file", "does not match");

    /* valid JSON that is no object */
    ths_push(srv, 200, "opc-request-id: rid-str\ncontent-type: application/json", "\"x\"");
    ocisbx_sandbox *sb = NULL;
    rc = ocisbx_client_get_sandbox(c, "sb1", &sb);
    expect(rc, OCISBX_EPARSE, 200, "rid-str", "expected a JSON object");

    /* a field of the wrong type */
    ths_push(srv, 200, "opc-request-id: rid-type\ncontent-type: application/json", "{\"id\":5}");
    rc = ocisbx_client_get_sandbox(c, "sb1", &sb);
    expect(rc, OCISBX_EPARSE, 200, "rid-type", "Sandbox.id");

    /* a time field that is no RFC 3339 time */
    ths_push(srv, 200, "opc-request-id: rid-time\ncontent-type: application/json",
             "{\"id\":\"sb1\",\"timeCreated\":\"yesterday\"}");
    rc = ocisbx_client_get_sandbox(c, "sb1", &sb);
    expect(rc, OCISBX_EPARSE, 200, "rid-time", "Sandbox.timeCreated");

    ths_push(srv, 200, "opc-request-id: rid-ok\ncontent-type: application/json",
             "{\"id\":\"sb1\",\"timeCreated\":\"2026-01-02T03:04:05.123Z\"}");
    assert_int_equal(ocisbx_client_get_sandbox(c, "sb1", &sb), 0);
    ocisbx_sandbox_free(sb);

    ocisbx_client_free(c);
    free(url);
    ths_stop(srv);
}

static void test_transport_failure_keeps_caller_id(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    char *url = ths_url(srv, "");
    ths_stop(srv);
    ocisbx_client *c = make_client(url);
    assert_int_equal(ocisbx_client_set_next_request_id(c, "my-call-1"), 0);
    ocisbx_sandbox *sb = NULL;
    int rc = ocisbx_client_get_sandbox(c, "sb1", &sb);
    expect(rc, OCISBX_ETRANSPORT, 0, "my-call-1", "my-call-1");
    ocisbx_client_free(c);
    free(url);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answers_that_fail_checks),
        cmocka_unit_test(test_transport_failure_keeps_caller_id),
    };
    return par_run_group_tests_name("it_api_error_context", tests, NULL, NULL);
}
