/* Requests and ocisbx_http_prepare (no network): the exact header list, in
 * send order, for the published vectors; setters refusing bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ocisbx/http.h"
#include "ocisbx/ocisbx.h"

#define TENANCY "ocid1.tenancy.oc1..aaaaaaaaba3pv6wkcr4jqae5f15p2b2m2yt2j6rx32uzr4h25vqstifsfdsq"
#define USER "ocid1.user.oc1..aaaaaaaat5nvwcna5j6aqzjcaty5eqbb6qt2jvpkanghtgdaqedqw3rynjq"
#define FP "73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7"
#define DATE "Thu, 05 Jan 2014 21:31:40 GMT"
#define GET_URL                                                                                                      \
    "https://iaas.us-phoenix-1.oraclecloud.com/20160918/"                                                            \
    "instances?availabilityDomain=Pjwf%3A%20PHX-AD-1&compartmentId=ocid1.compartment.oc1.."                          \
    "aaaaaaaam3we6vgnherjq5q2idnccdflvjsnog7mlr6rtdb25gilchfeyjxa&displayName=TeamXInstances&volumeId=ocid1.volume." \
    "oc1.phx.abyhqljrgvttnlx73nmrwfaux7kcvzfs3s66izvxf2h4lgvyndsdsnoiwr5q"
#define GET_SIG                                                                                                 \
    "GBas7grhyrhSKHP6AVIj/h5/Vp8bd/peM79H9Wv8kjoaCivujVXlpbKLjMPeDUhxkFIWtTtLBj3sUzaFj34XE6YZAHc9r2DmE4pMwOAy/" \
    "kiITcZxa1oHPOeRheC0jP2dqbTll8fmTZVwKZOKHYPtrLJIJQHJjNvxFWeHQjMaR7M="
#define POST_SIG                                                                        \
    "Mje8vIDPlwIHmD/cTDwRxE7HaAvBg16JnVcsuqaNRim23fFPgQfLoOOxae6WqKb1uPjYEl0qIdazWaBy/" \
    "Ml8DRhqlocMwoSXv0fbukP8J5N80LCmzT/FFBvIvTB91XuXI3hYfP9Zt1l7S6ieVadHUfqBedWH0itrtPJBgKmrWso="

typedef struct fx {
    ocisbx_key *key;
    ocisbx_credentials *creds;
    ocisbx_http *http;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    assert_int_equal(ocisbx_key_load_file(OCISBX_SOURCE_DIR "/tests/data/cavage-test-key.pem", NULL, &f->key), 0);
    assert_int_equal(ocisbx_credentials_api_key(TENANCY, USER, FP, f->key, &f->creds), 0);
    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_credentials(o, f->creds), 0);
    assert_int_equal(ocisbx_http_new(o, &f->http), 0);
    ocisbx_http_options_free(o); /* the handle keeps its own reference */
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    ocisbx_http_free(f->http);
    ocisbx_credentials_free(f->creds);
    ocisbx_key_free(f->key);
    free(f);
    return 0;
}

static void expect(const ocisbx_headers *h, size_t i, const char *name, const char *value)
{
    assert_true(i < ocisbx_headers_count(h));
    assert_string_equal(ocisbx_headers_name(h, i), name);
    if (value)
        assert_string_equal(ocisbx_headers_value(h, i), value);
}

static void test_get_vector(void **state)
{
    fx *f = *state;
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_request_new("get", GET_URL, &r), 0);
    assert_string_equal(ocisbx_http_request_method(r), "GET");
    assert_int_equal(ocisbx_http_request_set_date(r, DATE), 0);
    assert_int_equal(ocisbx_http_request_set_request_id(r, "req-1"), 0);
    ocisbx_headers *h = NULL;
    assert_int_equal(ocisbx_http_prepare(f->http, r, &h), 0);
    assert_int_equal(ocisbx_headers_count(h), 5);
    /* wire order: host first (libcurl writes it right after the request line) */
    expect(h, 0, "host", "iaas.us-phoenix-1.oraclecloud.com");
    expect(h, 1, "date", DATE);
    expect(h, 2, "authorization",
           "Signature version=\"1\",keyId=\"" TENANCY "/" USER "/" FP
           "\",algorithm=\"rsa-sha256\",headers=\"date (request-target) host\",signature=\"" GET_SIG "\"");
    expect(h, 3, "opc-request-id", "req-1");
    expect(h, 4, "user-agent", NULL);
    assert_true(strncmp(ocisbx_headers_value(h, 4), "libocisbx/0.1.0 (", 17) == 0);
    assert_non_null(strstr(ocisbx_headers_value(h, 4), "; libcurl/"));
    assert_null(ocisbx_headers_get(h, "content-length")); /* no body headers on GET */
    ocisbx_headers_free(h);
    ocisbx_http_request_free(r);
}

static void test_post_vector(void **state)
{
    fx *f = *state;
    ocisbx_http_request *r = NULL;
    assert_int_equal(
        ocisbx_http_request_new("POST", "https://iaas.us-phoenix-1.oraclecloud.com/20160918/volumeAttachments", &r),
        0);
    assert_int_equal(ocisbx_http_request_set_date(r, DATE), 0);
    assert_int_equal(ocisbx_http_request_set_body_file(r, OCISBX_SOURCE_DIR "/tests/data/post-body.json"), 0);
    assert_int_equal(ocisbx_http_request_set_retry_class(r, OCISBX_HTTP_RETRY_TOKEN), 0);
    assert_int_equal(ocisbx_http_request_add_header(r, "X-Custom", "v"), 0);
    ocisbx_headers *h = NULL;
    assert_int_equal(ocisbx_http_prepare(f->http, r, &h), 0);
    expect(h, 0, "host", "iaas.us-phoenix-1.oraclecloud.com");
    expect(h, 1, "date", DATE);
    expect(h, 2, "content-length", "316");
    expect(h, 3, "content-type", "application/json");
    expect(h, 4, "x-content-sha256", "V9Z20UJTvkvpJ50flBzKE32+6m2zJjweHpDMX/U4Uy0=");
    expect(h, 5, "authorization", NULL);
    assert_non_null(strstr(ocisbx_headers_value(h, 5), "signature=\"" POST_SIG "\""));
    expect(h, 6, "opc-request-id", NULL);
    expect(h, 7, "opc-retry-token", ocisbx_http_request_retry_token(r));
    expect(h, 8, "user-agent", NULL);
    expect(h, 9, "x-custom", "v");
    assert_int_equal(ocisbx_headers_count(h), 10);
    /* Prepared again: the same ids (one call). */
    char *tok = strdup(ocisbx_headers_value(h, 7));
    char *rid = strdup(ocisbx_headers_value(h, 6));
    ocisbx_headers_free(h);
    assert_int_equal(ocisbx_http_prepare(f->http, r, &h), 0);
    assert_string_equal(ocisbx_headers_get(h, "opc-retry-token"), tok);
    assert_string_equal(ocisbx_headers_get(h, "opc-request-id"), rid);
    free(tok);
    free(rid);
    ocisbx_headers_free(h);
    ocisbx_http_request_free(r);
}

static int64_t never_read(void *buf, size_t cap, void *ud)
{
    (void)buf;
    (void)cap;
    (void)ud;
    return 0;
}

static void test_exclude_body_and_callbacks(void **state)
{
    fx *f = *state;
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_request_new("PUT", "https://os.example.com:8443/n/b/o/obj", &r), 0);
    assert_int_equal(ocisbx_http_request_set_body_callback(r, -1, never_read, NULL, NULL), 0);
    ocisbx_headers *h = NULL;
    /* Signing the body needs a pass over it: refused without rewind or hash. */
    assert_int_equal(ocisbx_http_prepare(f->http, r, &h), OCISBX_EINVAL);
    assert_null(h);
    assert_int_equal(ocisbx_http_request_set_exclude_body_signing(r, 1), 0);
    assert_int_equal(ocisbx_http_request_set_content_type(r, "application/octet-stream"), 0);
    assert_int_equal(ocisbx_http_prepare(f->http, r, &h), 0);
    expect(h, 0, "host", "os.example.com:8443");
    expect(h, 1, "date", NULL);
    expect(h, 2, "authorization", NULL);
    assert_non_null(strstr(ocisbx_headers_value(h, 2), "headers=\"date (request-target) host\""));
    expect(h, 3, "transfer-encoding", "chunked"); /* length unknown */
    expect(h, 4, "content-type", "application/octet-stream");
    ocisbx_headers_free(h);
    assert_int_equal(ocisbx_http_request_set_body_callback(r, 1234, never_read, NULL, NULL), 0);
    assert_int_equal(ocisbx_http_prepare(f->http, r, &h), 0);
    expect(h, 3, "content-length", "1234");
    ocisbx_headers_free(h);
    ocisbx_http_request_free(r);
}

static void test_unsigned_and_empty_post(void **state)
{
    (void)state;
    ocisbx_http *plain = NULL;
    assert_int_equal(ocisbx_http_new(NULL, &plain), 0);
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_request_new("POST", "https://h.example.com/x", &r), 0);
    ocisbx_headers *h = NULL;
    assert_int_equal(ocisbx_http_prepare(plain, r, &h), 0);
    expect(h, 0, "host", "h.example.com");
    expect(h, 1, "date", NULL);
    expect(h, 2, "content-length", "0");
    expect(h, 3, "content-type", "application/json");
    expect(h, 4, "opc-request-id", NULL);
    assert_null(ocisbx_headers_get(h, "authorization"));
    assert_null(ocisbx_headers_get(h, "opc-retry-token")); /* POST defaults to class NEVER */
    ocisbx_headers_free(h);
    ocisbx_http_request_free(r);
    ocisbx_http_free(plain);
}

static void test_bad_input(void **state)
{
    (void)state;
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_request_new("TRACE", "https://h/", &r), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_new("GETTINGLONG", "https://h/", &r), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_new("GET", "h/x", &r), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_new("GET", NULL, &r), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_new("GET", "https://u:secret@h/", &r), OCISBX_EINVAL);
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), "secret"));
    assert_int_equal(ocisbx_http_request_new("GET", "https://h/a#b", &r), OCISBX_EINVAL);
    assert_null(r);
    assert_int_equal(ocisbx_http_request_new("GET", "https://h/", &r), 0);
    assert_int_equal(ocisbx_http_request_add_header(r, "Authorization", "x"), OCISBX_EINVAL);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "authorization"));
    assert_int_equal(ocisbx_http_request_add_header(r, "host", "x"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_add_header(r, "x-a", "v\r\nInjected: 1"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_add_header(r, "bad name", "v"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_add_header(r, "", "v"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_set_request_id(r, "has space"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_set_retry_token(r, "a\nb"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_set_date(r, "yesterday"), OCISBX_EPARSE);
    assert_int_equal(ocisbx_http_request_set_retry_class(r, 7), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_set_content_type(r, ""), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_set_body_sha256(r, "short", 1), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_set_body_callback(r, -2, never_read, NULL, NULL), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_set_body(r, NULL, 3), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_set_sink_file(r, ""), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_request_set_sink_callback(r, NULL, NULL), OCISBX_EINVAL);
    ocisbx_http_request_free(r);

    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_connect_timeout_ms(o, 0), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_options_set_read_timeout_ms(o, -5), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_options_set_max_attempts(o, 101), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_options_set_backoff_ms(o, 10, 5), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_options_set_max_jitter_ms(o, -1), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_options_set_user_agent_suffix(o, "a\nb"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_http_options_set_deadline_ms(o, 0), 0);
    ocisbx_http_options_free(o);

    /* NULL frees are no-ops. */
    ocisbx_http_options_free(NULL);
    ocisbx_http_request_free(NULL);
    ocisbx_http_response_free(NULL);
    ocisbx_http_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_get_vector, setup, teardown),
        cmocka_unit_test_setup_teardown(test_post_vector, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exclude_body_and_callbacks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsigned_and_empty_post, setup, teardown),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
