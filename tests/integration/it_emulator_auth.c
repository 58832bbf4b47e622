/* ocisbx-emulator authentication: every check of the signing protocol (docs/auth.md) fails on its own
 * with a 401 NotAuthenticated naming it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "emu_fixture.h"
#include "ocisbx/util.h"
#include "par_run.h"

static int setup(void **state)
{
    return emu_fixture_setup_state(NULL, state);
}

static int teardown(void **state)
{
    return emu_fixture_teardown_state(state);
}

/* Expects a 401 NotAuthenticated whose message contains `why`. */
static void expect_401(emu_fixture_result *r, const char *why)
{
    if (r->status != 401 || !strstr(r->body, why))
        fprintf(stderr, "got %ld: %s (wanted 401 with \"%s\")\n", r->status, r->body, why);
    assert_int_equal(r->status, 401);
    cJSON *j = cJSON_Parse(r->body);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "code")->valuestring, "NotAuthenticated");
    assert_non_null(strstr(cJSON_GetObjectItem(j, "message")->valuestring, why));
    cJSON_Delete(j);
    emu_fixture_result_free(r);
}

/* Header lines from signed headers, with one header's value replaced (or
 * dropped when value is NULL and replace is set). */
static char **lines_from(const ocisbx_headers *h, const char *replace, const char *value)
{
    size_t n = ocisbx_headers_count(h);
    char **lines = calloc(n + 1, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = ocisbx_headers_name(h, i);
        const char *v = ocisbx_headers_value(h, i);
        if (replace && !strcmp(name, replace)) {
            if (!value)
                continue;
            v = value;
        }
        size_t l = strlen(name) + strlen(v) + 3;
        lines[k] = malloc(l);
        snprintf(lines[k], l, "%s: %s", name, v);
        k++;
    }
    return lines;
}

static void free_lines(char **lines)
{
    for (size_t i = 0; lines[i]; i++)
        free(lines[i]);
    free(lines);
}

/* Sends the signed headers h, one of them altered as lines_from does. */
static void send_altered(emu_fixture *f, const ocisbx_headers *h, const char *replace, const char *value,
                         const char *method, const char *path, const void *body, size_t len, emu_fixture_result *r)
{
    char **lines = lines_from(h, replace, value);
    assert_int_equal(emu_fixture_send(f, method, path, body, len, (const char *const *)lines, r), 0);
    free_lines(lines);
}

static void test_valid_and_any_order(void **state)
{
    emu_fixture *f = *state;
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "GET", "/sandboxes", NULL, &r), 0);
    assert_int_equal(r.status, 200);
    emu_fixture_result_free(&r);
    /* the same signature with the Authorization parameters reordered */
    emu_fixture_req req = {0};
    req.method = "GET";
    req.path = "/sandboxes?limit=5";
    ocisbx_headers *h = NULL;
    assert_int_equal(emu_fixture_sign(f, &req, &h), 0);
    const char *authz = ocisbx_headers_get(h, "authorization");
    const char *sig = strstr(authz, "signature=\"");
    const char *kid = strstr(authz, "keyId=\"");
    assert_non_null(sig);
    assert_non_null(kid);
    char reordered[4096];
    int siglen = (int)(strchr(sig + 11, '"') - sig + 1);
    int kidlen = (int)(strchr(kid + 7, '"') - kid + 1);
    snprintf(reordered, sizeof reordered,
             "Signature %.*s,headers=\"date (request-target) host\", algorithm=\"rsa-sha256\",%.*s,version=\"1\"",
             siglen, sig, kidlen, kid);
    send_altered(f, h, "authorization", reordered, "GET", req.path, NULL, 0, &r);
    assert_int_equal(r.status, 200);
    emu_fixture_result_free(&r);
    ocisbx_headers_free(h);
}

static void test_no_and_malformed_authorization(void **state)
{
    emu_fixture *f = *state;
    emu_fixture_result r;
    const char *none[] = {"date: Thu, 05 Jan 2014 21:31:40 GMT", NULL};
    assert_int_equal(emu_fixture_send(f, "GET", "/sandboxes", NULL, 0, none, &r), 0);
    expect_401(&r, "no Authorization header");
    const char *bad[] = {"authorization: Signature keyId=\"x\",algorithm=\"rsa-sha256\"", NULL};
    assert_int_equal(emu_fixture_send(f, "GET", "/sandboxes", NULL, 0, bad, &r), 0);
    expect_401(&r, "malformed Authorization header");
}

static void test_bad_signature(void **state)
{
    emu_fixture *f = *state;
    emu_fixture_result r;
    emu_fixture_req req = {0};
    req.method = "GET";
    req.path = "/sandboxes";
    req.key = emu_fixture_session_key(f); /* the user's keyId, another key */
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    expect_401(&r, "signature does not verify");
    /* a signed header altered after signing (the path) */
    ocisbx_headers *h = NULL;
    req.key = NULL;
    assert_int_equal(emu_fixture_sign(f, &req, &h), 0);
    send_altered(f, h, NULL, NULL, "GET", "/sandboxes?limit=1", NULL, 0, &r);
    expect_401(&r, "signature does not verify");
    /* the host header altered */
    send_altered(f, h, "host", "localhost:1", "GET", "/sandboxes", NULL, 0, &r);
    expect_401(&r, "signature does not verify");
    ocisbx_headers_free(h);
}

static void test_unknown_key_id(void **state)
{
    emu_fixture *f = *state;
    emu_fixture_result r;
    emu_fixture_req req = {0};
    req.method = "GET";
    req.path = "/sandboxes";
    char kid[512];
    snprintf(kid, sizeof kid, "%s/ocid1.user.oc1..someoneelse/%s", EMU_FIXTURE_TENANCY, emu_fixture_fingerprint(f));
    req.key_id = kid;
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    expect_401(&r, "unknown keyId");
    snprintf(kid, sizeof kid, "ocid1.tenancy.oc1..other/%s/%s", EMU_FIXTURE_USER, emu_fixture_fingerprint(f));
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    expect_401(&r, "unknown keyId");
    req.key_id = "ST$no-such-token";
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    expect_401(&r, "unknown keyId");
}

static void test_session_tokens(void **state)
{
    emu_fixture *f = *state;
    emu_fixture_result r;
    emu_fixture_req req = {0};
    req.method = "GET";
    req.path = "/sandboxes";
    req.key = emu_fixture_session_key(f);
    req.key_id = "ST$" EMU_FIXTURE_SESSION_TOKEN;
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    assert_int_equal(r.status, 200);
    emu_fixture_result_free(&r);
    req.key_id = "ST$" EMU_FIXTURE_EXPIRED_TOKEN;
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    expect_401(&r, "expired");
}

static void test_missing_signed_header(void **state)
{
    emu_fixture *f = *state;
    emu_fixture_result r;
    const char *cases[][2] = {
        {"date (request-target)", "required header host is not signed"},
        {"(request-target) host", "required header date is not signed"},
        {"date host", "required header (request-target) is not signed"},
    };
    for (size_t i = 0; i < 3; i++) {
        emu_fixture_req req = {0};
        req.method = "GET";
        req.path = "/sandboxes";
        ocisbx_headers *h = NULL;
        assert_int_equal(emu_fixture_sign(f, &req, &h), 0);
        char authz[4096];
        snprintf(authz, sizeof authz,
                 "Signature version=\"1\",keyId=\"%s\",algorithm=\"rsa-sha256\",headers=\"%s\",signature=\"AAAA\"",
                 emu_fixture_key_id(f), cases[i][0]);
        send_altered(f, h, "authorization", authz, "GET", "/sandboxes", NULL, 0, &r);
        expect_401(&r, cases[i][1]);
        ocisbx_headers_free(h);
    }
    /* a POST signed without its body headers (the exclude-body variant) */
    emu_fixture_req req = {0};
    req.method = "POST";
    req.path = "/sandboxes?projectId=" EMU_FIXTURE_PROJECT;
    req.body = "{}";
    req.body_len = 2;
    ocisbx_headers *h = NULL;
    assert_int_equal(emu_fixture_sign(f, &req, &h), 0);
    char authz[4096];
    snprintf(authz, sizeof authz,
             "Signature version=\"1\",keyId=\"%s\",algorithm=\"rsa-sha256\",headers=\"date (request-target) "
             "host\",signature=\"AAAA\"",
             emu_fixture_key_id(f));
    send_altered(f, h, "authorization", authz, "POST", req.path, "{}", 2, &r);
    expect_401(&r, "required header content-length is not signed for POST");
    ocisbx_headers_free(h);
}

static void test_stale_date(void **state)
{
    emu_fixture *f = *state;
    emu_fixture_result r;
    char date[40];
    ocisbx_time_format_rfc1123(time(NULL) - 6 * 60, date);
    emu_fixture_req req = {0};
    req.method = "GET";
    req.path = "/sandboxes";
    req.date = date;
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    expect_401(&r, "more than 5 minutes");
    ocisbx_time_format_rfc1123(time(NULL) + 6 * 60, date);
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    expect_401(&r, "more than 5 minutes");
    /* within the skew is fine */
    ocisbx_time_format_rfc1123(time(NULL) - 4 * 60, date);
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    assert_int_equal(r.status, 200);
    emu_fixture_result_free(&r);
}

static void test_wrong_body_hash(void **state)
{
    emu_fixture *f = *state;
    emu_fixture_result r;
    emu_fixture_req req = {0};
    req.method = "POST";
    req.path = "/sandboxes?projectId=" EMU_FIXTURE_PROJECT;
    req.body = "{\"displayName\":\"aaa\"}";
    req.body_len = strlen(req.body);
    ocisbx_headers *h = NULL;
    assert_int_equal(emu_fixture_sign(f, &req, &h), 0);
    char **lines = lines_from(h, NULL, NULL);
    /* same length, other bytes: the signature holds, the hash does not */
    const char *other = "{\"displayName\":\"bbb\"}";
    assert_int_equal(emu_fixture_send(f, "POST", req.path, other, strlen(other), (const char *const *)lines, &r), 0);
    expect_401(&r, "x-content-sha256 does not match");
    free_lines(lines);
    ocisbx_headers_free(h);
}

static void test_wrong_content_length(void **state)
{
    emu_fixture *f = *state;
    emu_fixture_result r;
    /* Signed for a 2-byte body, sent chunked with 4 bytes and the signed
     * content-length header: the body received is not what was signed. */
    emu_fixture_req req = {0};
    req.method = "POST";
    req.path = "/sandboxes?projectId=" EMU_FIXTURE_PROJECT;
    req.body = "{}";
    req.body_len = 2;
    ocisbx_headers *h = NULL;
    assert_int_equal(emu_fixture_sign(f, &req, &h), 0);
    char sha[64], hdr[128];
    ocisbx_sha256_base64("{}  ", 4, sha);
    snprintf(hdr, sizeof hdr, "%s", sha);
    /* keep the hash right for the 4 bytes so only the length is wrong: re-sign
     * with the 4-byte hash but the 2-byte length */
    ocisbx_headers_free(h);
    char url[1024];
    snprintf(url, sizeof url, "%s/%s%s", emu_fixture_url(f), EMU_FIXTURE_API_VERSION, req.path);
    ocisbx_sign_request *sr = NULL;
    assert_int_equal(ocisbx_sign_request_new("POST", url, &sr), 0);
    assert_int_equal(ocisbx_sign_request_set_body_sha256(sr, sha, 2), 0);
    assert_int_equal(ocisbx_sign_with_key(emu_fixture_key_id(f), emu_fixture_key(f), sr, &h), 0);
    ocisbx_sign_request_free(sr);
    char **lines = lines_from(h, NULL, NULL);
    size_t n = 0;
    while (lines[n])
        n++;
    lines = realloc(lines, (n + 2) * sizeof(char *));
    lines[n] = strdup("transfer-encoding: chunked");
    lines[n + 1] = NULL;
    assert_int_equal(emu_fixture_send(f, "POST", req.path, "{}  ", 4, (const char *const *)lines, &r), 0);
    if (r.status == 401) {
        expect_401(&r, "content-length does not match");
    } else {
        /* an HTTP stack that refuses Content-Length with chunked is as good */
        fprintf(stderr, "note: chunked + content-length refused by the HTTP layer: %ld\n", r.status);
        assert_int_equal(r.status, 400);
        emu_fixture_result_free(&r);
    }
    free_lines(lines);
    ocisbx_headers_free(h);
}

int main(void)
{
    ocisbx_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_and_any_order),  cmocka_unit_test(test_no_and_malformed_authorization),
        cmocka_unit_test(test_bad_signature),        cmocka_unit_test(test_unknown_key_id),
        cmocka_unit_test(test_session_tokens),       cmocka_unit_test(test_missing_signed_header),
        cmocka_unit_test(test_stale_date),           cmocka_unit_test(test_wrong_body_hash),
        cmocka_unit_test(test_wrong_content_length),
    };
    int fails = par_run_group_tests_name("emulator authentication", tests, setup, teardown);
    ocisbx_global_cleanup();
    return fails ? 1 : 0;
}
