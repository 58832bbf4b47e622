/* The transport against a scripted server on loopback: signing of every
 * attempt, Host, retries, retry token, resets, bodies and sinks, 401
 * refresh, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth/credentials_internal.h"
#include "auth/verify.h"
#include "ocisbx/http.h"
#include "ocisbx/ocisbx.h"
#include "test_http_server.h"
#include "par_run.h"

#define TENANCY "ocid1.tenancy.oc1..aaaaaaaaba3pv6wkcr4jqae5f15p2b2m2yt2j6rx32uzr4h25vqstifsfdsq"
#define USER "ocid1.user.oc1..aaaaaaaat5nvwcna5j6aqzjcaty5eqbb6qt2jvpkanghtgdaqedqw3rynjq"
#define FP "73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7"

typedef struct fixture {
    ths *srv;
    ocisbx_key *key;
    char *pub_pem;
    ocisbx_credentials *creds;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(ths_start(&f->srv), 0);
    assert_int_equal(ocisbx_key_load_file(OCISBX_SOURCE_DIR "/tests/data/cavage-test-key.pem", NULL, &f->key), 0);
    assert_int_equal(ocisbx_key_public_pem(f->key, &f->pub_pem), 0);
    assert_int_equal(ocisbx_credentials_api_key(TENANCY, USER, FP, f->key, &f->creds), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ths_stop(f->srv);
    ocisbx_credentials_free(f->creds);
    ocisbx_key_free(f->key);
    ocisbx_free(f->pub_pem);
    free(f);
    return 0;
}

/* A transport with quick retries (1 ms base, no jitter). */
static ocisbx_http *make_http(ocisbx_credentials *creds)
{
    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_credentials(o, creds), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_backoff_ms(o, 1, 4), 0);
    assert_int_equal(ocisbx_http_options_set_max_jitter_ms(o, 0), 0);
    assert_int_equal(ocisbx_http_options_set_ignore_proxy_env(o, 1), 0);
    ocisbx_http *h = NULL;
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    ocisbx_http_options_free(o);
    return h;
}

static ocisbx_http_request *make_req(fixture *f, const char *method, const char *path)
{
    char *url = ths_url(f->srv, path);
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_request_new(method, url, &r), 0);
    free(url);
    return r;
}

static const char *lookup(const char *name, void *ud)
{
    return ths_header(ud, name);
}

/* The recorded request carries a valid signature over what was received. */
static void assert_signed(fixture *f, const ths_request *r, const char *expect_headers)
{
    const char *authz = ths_header(r, "authorization");
    assert_non_null(authz);
    ocisbx_authz a;
    assert_int_equal(ocisbx_authz_parse(authz, &a), 0);
    assert_string_equal(a.key_id, TENANCY "/" USER "/" FP);
    if (expect_headers)
        assert_string_equal(a.headers, expect_headers);
    char *ss = NULL;
    assert_int_equal(ocisbx_verify_signing_string(a.headers, r->method, r->target, lookup, (void *)(uintptr_t)r, &ss),
                     0);
    assert_int_equal(ocisbx_verify_signature_pem(f->pub_pem, strlen(f->pub_pem), ss, strlen(ss), a.signature), 0);
    ocisbx_free(ss);
    ocisbx_authz_clear(&a);
}

static void test_signed_get_host_with_port(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ths_push(f->srv, 200, "content-type: application/json", "{\"ok\":true}");
    ocisbx_http_request *r = make_req(f, "GET", "/20231130/sandboxes?limit=5&name=a%20b");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    assert_int_equal(ocisbx_http_response_status(resp), 200);
    size_t len = 0;
    assert_string_equal(ocisbx_http_response_body(resp, &len), "{\"ok\":true}");
    assert_int_equal(len, 11);
    assert_string_equal(ocisbx_http_response_header(resp, "Content-Type"), "application/json");
    assert_int_equal(ocisbx_http_response_attempts(resp), 1);
    assert_int_equal(ths_count(f->srv), 1);
    const ths_request *rec = ths_get(f->srv, 0);
    assert_string_equal(rec->target, "/20231130/sandboxes?limit=5&name=a%20b");
    char host[64];
    snprintf(host, sizeof host, "127.0.0.1:%d", ths_port(f->srv));
    assert_string_equal(ths_header(rec, "host"), host);
    assert_signed(f, rec, "date (request-target) host");
    const char *rid = ths_header(rec, "opc-request-id");
    assert_non_null(rid);
    assert_true(strlen(rid) >= 16);
    assert_string_equal(rid, ocisbx_http_response_request_id(resp));
    assert_null(ths_header(rec, "opc-retry-token"));
    assert_null(ths_header(rec, "expect"));
    assert_non_null(strstr(ths_header(rec, "user-agent"), "libocisbx/"));
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

/* The headers prepare() lists are exactly what the server receives. */
static void test_prepare_matches_sent(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ocisbx_http_request *r = make_req(f, "POST", "/x");
    assert_int_equal(ocisbx_http_request_set_body(r, "{\"a\":1}", 7), 0);
    assert_int_equal(ocisbx_http_request_set_date(r, "Thu, 05 Jan 2014 21:31:40 GMT"), 0);
    assert_int_equal(ocisbx_http_request_add_header(r, "x-extra", "1"), 0);
    ocisbx_headers *hl = NULL;
    assert_int_equal(ocisbx_http_prepare(h, r, &hl), 0);
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    const ths_request *rec = ths_get(f->srv, 0);
    for (size_t i = 0; i < ocisbx_headers_count(hl); i++) {
        const char *got = ths_header(rec, ocisbx_headers_name(hl, i));
        assert_non_null(got);
        assert_string_equal(got, ocisbx_headers_value(hl, i));
    }
    /* Nothing beyond the list is sent (MHD does not record hop headers we do not send). */
    assert_int_equal(rec->nheaders, ocisbx_headers_count(hl));
    assert_string_equal(rec->body, "{\"a\":1}");
    assert_signed(f, rec, "date (request-target) host content-length content-type x-content-sha256");
    ocisbx_headers_free(hl);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

static void test_retry_503_twice_then_200(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ths_push(f->srv, 503, NULL, "{\"code\":\"ServiceUnavailable\",\"message\":\"busy\"}");
    ths_push(f->srv, 503, NULL, "{\"code\":\"ServiceUnavailable\",\"message\":\"busy\"}");
    ths_push(f->srv, 200, NULL, "done");
    ocisbx_http_request *r = make_req(f, "GET", "/s/1");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    assert_int_equal(ocisbx_http_response_status(resp), 200);
    assert_int_equal(ocisbx_http_response_attempts(resp), 3);
    assert_string_equal(ocisbx_http_response_body(resp, NULL), "done");
    assert_int_equal(ths_count(f->srv), 3);
    for (size_t i = 0; i < 3; i++) {
        assert_signed(f, ths_get(f->srv, i), NULL); /* each attempt signed (with its own date) */
        assert_string_equal(ths_header(ths_get(f->srv, i), "opc-request-id"),
                            ths_header(ths_get(f->srv, 0), "opc-request-id"));
    }
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

static char log_text[8192];
static void capture_log(int level, const char *line, void *ud)
{
    (void)level;
    (void)ud;
    size_t n = strlen(log_text);
    snprintf(log_text + n, sizeof log_text - n, "%s\n", line);
}

static void test_429_retry_after(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ths_push(f->srv, 429, "retry-after: 1", "{\"code\":\"TooManyRequests\",\"message\":\"slow down\"}");
    ths_push(f->srv, 200, NULL, "ok");
    log_text[0] = '\0';
    ocisbx_set_log(capture_log, OCISBX_LOG_DEBUG, NULL);
    ocisbx_http_request *r = make_req(f, "GET", "/r");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    ocisbx_set_log(NULL, 0, NULL);
    assert_int_equal(ocisbx_http_response_attempts(resp), 2);
    /* The wait came from retry-after (1000 ms), not the 1 ms backoff. */
    assert_non_null(strstr(log_text, "retrying in 1000 ms"));
    assert_null(strstr(log_text, "Signature"));
    assert_non_null(strstr(log_text, "-> 429"));
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

/* retry-after beyond 60 s is cut to 60 s; a deadline shorter than that
 * ends the call at once instead of waiting past it. */
static void test_retry_after_capped(void **state)
{
    fixture *f = *state;
    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_ignore_proxy_env(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_deadline_ms(o, 2000), 0);
    ocisbx_http *h = NULL;
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    ocisbx_http_options_free(o);
    ths_push(f->srv, 503, "retry-after: 86399", "{\"code\":\"ServiceUnavailable\",\"message\":\"later\"}");
    ths_push(f->srv, 200, NULL, "never");
    log_text[0] = '\0';
    ocisbx_set_log(capture_log, OCISBX_LOG_DEBUG, NULL);
    ocisbx_http_request *r = make_req(f, "GET", "/busy");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ESERVICE);
    ocisbx_set_log(NULL, 0, NULL);
    assert_non_null(strstr(log_text, "retry-after 86399 capped at 60000 ms"));
    assert_null(strstr(log_text, "retrying in")); /* 60 s is past the 2 s deadline: no wait */
    assert_int_equal(ocisbx_http_response_attempts(resp), 1);
    assert_int_equal(ths_count(f->srv), 1);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "503 ServiceUnavailable: later"));
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

static void test_no_retry_on_400(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ths_push(f->srv, 400, "opc-request-id: srv-req-400",
             "{\"code\":\"InvalidParameter\",\"message\":\"displayName is too long\"}");
    ocisbx_http_request *r = make_req(f, "GET", "/bad");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_EINVAL);
    assert_non_null(resp);
    assert_int_equal(ocisbx_http_response_status(resp), 400);
    assert_int_equal(ths_count(f->srv), 1);
    const ocisbx_error *e = ocisbx_error_last();
    assert_int_equal(ocisbx_error_http_status(e), 400);
    assert_string_equal(ocisbx_error_service_code(e), "InvalidParameter");
    assert_string_equal(ocisbx_error_request_id(e), "srv-req-400");
    char *url = ths_url(f->srv, "/bad");
    char expect[512];
    snprintf(expect, sizeof expect,
             "GET %s: 400 InvalidParameter: displayName is too long (opc-request-id: srv-req-400)", url);
    assert_string_equal(ocisbx_error_message(e), expect);
    free(url);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

static void test_error_404_message_and_garbage(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ths_push(f->srv, 404, NULL, "{\"code\":\"NotAuthorizedOrNotFound\",\"message\":\"no such sandbox\"}");
    ocisbx_http_request *r = make_req(f, "GET", "/sandboxes/x");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ENOTFOUND);
    const char *msg = ocisbx_error_message(ocisbx_error_last());
    assert_non_null(strstr(msg, ": 404 NotAuthorizedOrNotFound: no such sandbox (opc-request-id: "));
    assert_non_null(strstr(msg, ocisbx_http_request_request_id(r))); /* the one sent: no id in the answer */
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);

    /* Garbage (HTML from a proxy): the status line, and 502 is retried. */
    ths_set_default(f->srv, 502, NULL, "<html>bad gateway</html>");
    r = make_req(f, "GET", "/sandboxes/y");
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ESERVICE);
    msg = ocisbx_error_message(ocisbx_error_last());
    assert_non_null(strstr(msg, ": 502 Bad Gateway (after 8 attempts, opc-request-id: "));
    assert_null(ocisbx_error_service_code(ocisbx_error_last()));
    assert_int_equal(ocisbx_http_response_attempts(resp), 8);
    assert_int_equal(ths_count(f->srv), 9);
    ths_set_default(f->srv, 200, NULL, NULL);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

static void test_409_codes(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ths_push(f->srv, 409, NULL, "{\"code\":\"IncorrectState\",\"message\":\"starting\"}");
    ths_push(f->srv, 409, NULL, "{\"code\":\"LockConflict\",\"message\":\"locked\"}");
    ths_push(f->srv, 204, NULL, NULL);
    ocisbx_http_request *r = make_req(f, "DELETE", "/s/1");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    assert_int_equal(ocisbx_http_response_status(resp), 204);
    assert_int_equal(ocisbx_http_response_attempts(resp), 3);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ths_push(f->srv, 409, NULL, "{\"code\":\"Conflict\",\"message\":\"name taken\"}");
    r = make_req(f, "DELETE", "/s/2");
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ECONFLICT);
    assert_int_equal(ocisbx_http_response_attempts(resp), 1);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

static void test_retry_token_kept(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ths_push(f->srv, 503, NULL, NULL);
    ths_push(f->srv, 500, NULL, NULL);
    ths_push(f->srv, 200, NULL, "{\"id\":\"c1\"}");
    ocisbx_http_request *r = make_req(f, "POST", "/sandboxes/s1/commands");
    assert_int_equal(ocisbx_http_request_set_retry_class(r, OCISBX_HTTP_RETRY_TOKEN), 0);
    assert_int_equal(ocisbx_http_request_set_body(r, "{\"command\":\"ls\"}", 16), 0);
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    assert_int_equal(ths_count(f->srv), 3);
    const char *tok = ths_header(ths_get(f->srv, 0), "opc-retry-token");
    assert_non_null(tok);
    assert_string_equal(tok, ocisbx_http_request_retry_token(r));
    for (size_t i = 0; i < 3; i++) {
        const ths_request *rec = ths_get(f->srv, i);
        assert_string_equal(ths_header(rec, "opc-retry-token"), tok);
        assert_non_null(ths_header(rec, "opc-request-id"));
        assert_string_equal(rec->body, "{\"command\":\"ls\"}");
        assert_signed(f, rec, "date (request-target) host content-length content-type x-content-sha256");
    }
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    /* A POST of class NEVER is not retried. */
    ths_push(f->srv, 503, NULL, NULL);
    r = make_req(f, "POST", "/x");
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ESERVICE);
    assert_int_equal(ocisbx_http_response_attempts(resp), 1);
    assert_null(ths_header(ths_get(f->srv, 3), "opc-retry-token"));
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

static void test_connection_reset_retried(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ths_step reset = {0, NULL, NULL, THS_RESET, 0};
    ths_push_step(f->srv, &reset);
    ths_push(f->srv, 200, NULL, "after reset");
    ocisbx_http_request *r = make_req(f, "GET", "/reset");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    assert_string_equal(ocisbx_http_response_body(resp, NULL), "after reset");
    assert_int_equal(ocisbx_http_response_attempts(resp), 2);
    assert_int_equal(ths_count(f->srv), 2);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);

    /* Resets on every attempt: a transport error naming the attempts. */
    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_backoff_ms(o, 1, 2), 0);
    assert_int_equal(ocisbx_http_options_set_max_jitter_ms(o, 0), 0);
    assert_int_equal(ocisbx_http_options_set_max_attempts(o, 3), 0);
    ocisbx_http *h3 = NULL;
    assert_int_equal(ocisbx_http_new(o, &h3), 0);
    ocisbx_http_options_free(o);
    for (int i = 0; i < 3; i++)
        ths_push_step(f->srv, &reset);
    r = make_req(f, "GET", "/reset");
    assert_int_equal(ocisbx_http_send(h3, r, &resp), OCISBX_ETRANSPORT);
    assert_null(resp);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "after 3 attempts"));
    ocisbx_http_request_free(r);
    ocisbx_http_free(h3);
    ocisbx_http_free(h);
}

typedef struct mem_src {
    const char *data;
    size_t len, pos;
    int rewinds;
} mem_src;

static int64_t mem_read(void *buf, size_t cap, void *ud)
{
    mem_src *m = ud;
    size_t n = m->len - m->pos;
    if (n > cap)
        n = cap;
    if (n > 7)
        n = 7; /* small pieces: the stream is really streamed */
    memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return (int64_t)n;
}

static int mem_rewind(void *ud)
{
    mem_src *m = ud;
    m->pos = 0;
    m->rewinds++;
    return 0;
}

static void test_callback_body(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    const char *text = "line one\nline two\nline three\n";
    /* Rewindable: hashed in one pass, rewound, sent, and retried. */
    mem_src m = {text, strlen(text), 0, 0};
    ths_push(f->srv, 503, NULL, NULL);
    ths_push(f->srv, 200, NULL, "stored");
    ocisbx_http_request *r = make_req(f, "PUT", "/files/a.txt");
    assert_int_equal(ocisbx_http_request_set_content_type(r, "application/octet-stream"), 0);
    assert_int_equal(ocisbx_http_request_set_body_callback(r, -1, mem_read, mem_rewind, &m), 0);
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    assert_int_equal(ths_count(f->srv), 2);
    for (size_t i = 0; i < 2; i++) {
        const ths_request *rec = ths_get(f->srv, i);
        assert_string_equal(rec->body, text);
        assert_string_equal(ths_header(rec, "content-type"), "application/octet-stream");
        assert_signed(f, rec, "date (request-target) host content-length content-type x-content-sha256");
    }
    assert_true(m.rewinds >= 2);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ths_clear(f->srv);

    /* Without rewind and without a known hash: refused before sending. */
    mem_src m2 = {text, strlen(text), 0, 0};
    r = make_req(f, "PUT", "/files/b.txt");
    assert_int_equal(ocisbx_http_request_set_body_callback(r, -1, mem_read, NULL, &m2), 0);
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_EINVAL);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "rewind"));
    assert_int_equal(ths_count(f->srv), 0);

    /* Without rewind but with its hash: sent once, never retried. */
    char sha[OCISBX_SHA256_B64_LEN + 1];
    assert_int_equal(ocisbx_sha256_base64(text, strlen(text), sha), 0);
    assert_int_equal(ocisbx_http_request_set_body_callback(r, (int64_t)strlen(text), mem_read, NULL, &m2), 0);
    assert_int_equal(ocisbx_http_request_set_body_sha256(r, sha, strlen(text)), 0);
    ths_push(f->srv, 503, NULL, NULL);
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ESERVICE);
    assert_int_equal(ocisbx_http_response_attempts(resp), 1);
    assert_int_equal(ths_count(f->srv), 1);
    assert_string_equal(ths_get(f->srv, 0)->body, text);
    assert_signed(f, ths_get(f->srv, 0), NULL);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

static char *temp_path(const char *name)
{
    char *p = malloc(512);
    snprintf(p, 512, "%s/it_http_%d_%s", OCISBX_BINARY_DIR, (int)getpid(), name);
    return p;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *d = malloc((size_t)n + 1);
    assert_int_equal(fread(d, 1, (size_t)n, fp), (size_t)n);
    d[n] = '\0';
    fclose(fp);
    *len = (size_t)n;
    return d;
}

static void test_file_body_and_sink(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    /* 300 KiB, bigger than one chunk. */
    size_t n = 300 * 1024;
    char *big = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + (i * 7 + i / 1000) % 26);
    big[n] = '\0';
    char *in = temp_path("in.bin");
    FILE *fp = fopen(in, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(big, 1, n, fp), n);
    fclose(fp);
    ths_push(f->srv, 502, NULL, NULL);
    ths_push(f->srv, 200, NULL, big); /* echo it back */
    ocisbx_http_request *r = make_req(f, "PUT", "/files/big");
    assert_int_equal(ocisbx_http_request_set_body_file(r, in), 0);
    char *out = temp_path("out.bin");
    assert_int_equal(ocisbx_http_request_set_sink_file(r, out), 0);
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    assert_int_equal(ths_count(f->srv), 2);
    for (size_t i = 0; i < 2; i++) {
        const ths_request *rec = ths_get(f->srv, i);
        assert_int_equal(rec->body_len, n);
        assert_memory_equal(rec->body, big, n);
        char sha[OCISBX_SHA256_B64_LEN + 1];
        ocisbx_sha256_base64(big, n, sha);
        assert_string_equal(ths_header(rec, "x-content-sha256"), sha);
        assert_signed(f, rec, NULL);
    }
    size_t got_len = 0;
    assert_string_equal(ocisbx_http_response_body(resp, &got_len), ""); /* went to the file */
    char *got = read_all(out, &got_len);
    assert_int_equal(got_len, n);
    assert_memory_equal(got, big, n);
    free(got);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);

    /* A missing body file is named. */
    r = make_req(f, "PUT", "/files/none");
    assert_int_equal(ocisbx_http_request_set_body_file(r, "/nonexistent/body.bin"), 0);
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_EIO);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "/nonexistent/body.bin"));
    ocisbx_http_request_free(r);
    unlink(in);
    unlink(out);
    free(in);
    free(out);
    free(big);
    ocisbx_http_free(h);
}

typedef struct sink_acc {
    char buf[4096];
    size_t len;
    int calls;
    int cancel_after;
} sink_acc;

static int acc_write(const void *data, size_t len, void *ud)
{
    sink_acc *a = ud;
    a->calls++;
    if (a->len + len < sizeof a->buf) {
        memcpy(a->buf + a->len, data, len);
        a->len += len;
    }
    return a->cancel_after && a->calls >= a->cancel_after;
}

static void test_callback_sink(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ths_push(f->srv, 200, NULL, "streamed body");
    sink_acc acc;
    memset(&acc, 0, sizeof acc);
    ocisbx_http_request *r = make_req(f, "GET", "/out");
    assert_int_equal(ocisbx_http_request_set_sink_callback(r, acc_write, &acc), 0);
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    assert_int_equal(acc.len, 13);
    assert_memory_equal(acc.buf, "streamed body", 13);
    ocisbx_http_response_free(resp);

    /* An error body still lands in the response, not the sink. */
    memset(&acc, 0, sizeof acc);
    ths_push(f->srv, 404, NULL, "{\"code\":\"NotAuthorizedOrNotFound\",\"message\":\"gone\"}");
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ENOTFOUND);
    assert_int_equal(acc.len, 0);
    assert_non_null(strstr(ocisbx_http_response_body(resp, NULL), "gone"));
    ocisbx_http_response_free(resp);

    /* A non-zero return cancels. */
    memset(&acc, 0, sizeof acc);
    acc.cancel_after = 1;
    ths_push(f->srv, 200, NULL, "x");
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ECANCELED);
    assert_null(resp);
    ocisbx_http_request_free(r);

    /* A body cut short after the callback got bytes: not retried. */
    memset(&acc, 0, sizeof acc);
    ths_step partial = {200, NULL, "0123456789abcdefghij", THS_PARTIAL, 0};
    ths_push_step(f->srv, &partial);
    ths_push(f->srv, 200, NULL, "second");
    size_t before = ths_count(f->srv);
    r = make_req(f, "GET", "/cut");
    assert_int_equal(ocisbx_http_request_set_sink_callback(r, acc_write, &acc), 0);
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ETRANSPORT);
    assert_int_equal(ths_count(f->srv) - before, 1);
    assert_int_equal(acc.len, 10);
    ocisbx_http_request_free(r);
    ths_clear(f->srv);

    /* The same cut with a buffered body is retried. */
    ths_push_step(f->srv, &partial);
    ths_push(f->srv, 200, NULL, "second");
    r = make_req(f, "GET", "/cut");
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    assert_string_equal(ocisbx_http_response_body(resp, NULL), "second");
    assert_int_equal(ocisbx_http_response_attempts(resp), 2);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

/* ---- a provider that counts refreshes ---- */
typedef struct counting_creds {
    struct ocisbx_credentials base;
    ocisbx_key *key;
    int refreshes;
} counting_creds;

static int cc_get(struct ocisbx_credentials *c, char **key_id, ocisbx_key **key)
{
    counting_creds *cc = (counting_creds *)c;
    char id[64];
    snprintf(id, sizeof id, "ST$token-%d", cc->refreshes);
    *key_id = strdup(id);
    *key = ocisbx_key_ref(cc->key);
    return 0;
}

static int cc_refresh(struct ocisbx_credentials *c)
{
    ((counting_creds *)c)->refreshes++;
    return 0;
}

static void cc_destroy(struct ocisbx_credentials *c)
{
    ocisbx_key_free(((counting_creds *)c)->key);
}

static const struct ocisbx_credentials_vt cc_vt = {"security_token", cc_get, cc_refresh, cc_destroy};

static void test_401_refresh_once(void **state)
{
    fixture *f = *state;
    counting_creds *cc = calloc(1, sizeof *cc);
    assert_int_equal(ocisbx_credentials_init(&cc->base, &cc_vt), 0);
    cc->key = ocisbx_key_ref(f->key);
    ocisbx_http *h = make_http(&cc->base);
    ths_push(f->srv, 401, NULL, "{\"code\":\"NotAuthenticated\",\"message\":\"expired\"}");
    ths_push(f->srv, 200, NULL, "ok");
    ocisbx_http_request *r = make_req(f, "POST", "/act"); /* class NEVER: the refresh retry still happens */
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    assert_int_equal(cc->refreshes, 1);
    assert_int_equal(ths_count(f->srv), 2);
    ocisbx_authz a;
    assert_int_equal(ocisbx_authz_parse(ths_header(ths_get(f->srv, 1), "authorization"), &a), 0);
    assert_string_equal(a.key_id, "ST$token-1"); /* re-signed with the refreshed token */
    ocisbx_authz_clear(&a);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);

    /* 401 again after the refresh: returned, no second refresh. */
    ths_push(f->srv, 401, NULL, "{\"code\":\"NotAuthenticated\",\"message\":\"expired\"}");
    ths_push(f->srv, 401, NULL, "{\"code\":\"NotAuthenticated\",\"message\":\"still\"}");
    ths_push(f->srv, 200, NULL, "never");
    r = make_req(f, "GET", "/again");
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_EAUTH);
    assert_int_equal(cc->refreshes, 2);
    assert_int_equal(ocisbx_http_response_attempts(resp), 2);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "401 NotAuthenticated: still"));
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), "token-"));
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
    ocisbx_credentials_free(&cc->base);
}

/* An API key has nothing to refresh: a 401 is returned after one request. */
static void test_401_api_key_not_resent(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ths_push(f->srv, 401, NULL, "{\"code\":\"NotAuthenticated\",\"message\":\"bad key\"}");
    ths_push(f->srv, 200, NULL, "never");
    ocisbx_http_request *r = make_req(f, "GET", "/who");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_EAUTH);
    assert_int_equal(ths_count(f->srv), 1);
    assert_int_equal(ocisbx_http_response_attempts(resp), 1);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "401 NotAuthenticated: bad key"));
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
    ths_clear(f->srv);
}

static void test_plain_http_rules(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds); /* plain http allowed */
    ocisbx_http_request *r = NULL;
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_request_new("GET", "http://example.com/x", &r), 0);
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_EINVAL);
    assert_null(resp);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "plain http is refused"));
    ocisbx_headers *hl = NULL;
    assert_int_equal(ocisbx_http_prepare(h, r, &hl), OCISBX_EINVAL);
    ocisbx_http_request_free(r);
    assert_int_equal(ocisbx_http_request_new("GET", "http://10.0.0.1:8080/x", &r), 0);
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_EINVAL);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);

    /* Not allowed: even loopback is refused. */
    ocisbx_http *strict = NULL;
    assert_int_equal(ocisbx_http_new(NULL, &strict), 0);
    r = make_req(f, "GET", "/x");
    assert_int_equal(ocisbx_http_send(strict, r, &resp), OCISBX_EINVAL);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "not allowed"));
    assert_int_equal(ths_count(f->srv), 0);
    ocisbx_http_request_free(r);
    ocisbx_http_free(strict);
}

static void test_retries_off_and_max_attempts(void **state)
{
    fixture *f = *state;
    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_retries(o, 0), 0);
    ocisbx_http *off = NULL;
    assert_int_equal(ocisbx_http_new(o, &off), 0);
    assert_int_equal(ocisbx_http_options_set_retries(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_max_attempts(o, 3), 0);
    assert_int_equal(ocisbx_http_options_set_backoff_ms(o, 1, 1), 0);
    assert_int_equal(ocisbx_http_options_set_max_jitter_ms(o, 0), 0);
    assert_int_equal(ocisbx_http_options_set_max_attempts(o, 0), OCISBX_EINVAL);
    ocisbx_http *three = NULL;
    assert_int_equal(ocisbx_http_new(o, &three), 0);
    ocisbx_http_options_free(o);
    ths_set_default(f->srv, 503, NULL, NULL);
    ocisbx_http_request *r = make_req(f, "GET", "/busy");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(off, r, &resp), OCISBX_ESERVICE);
    assert_int_equal(ocisbx_http_response_attempts(resp), 1);
    ocisbx_http_response_free(resp);
    assert_int_equal(ocisbx_http_send(three, r, &resp), OCISBX_ESERVICE);
    assert_int_equal(ocisbx_http_response_attempts(resp), 3);
    assert_int_equal(ths_count(f->srv), 4);
    assert_null(ths_header(ths_get(f->srv, 0), "authorization")); /* no credentials: unsigned */
    ocisbx_http_response_free(resp);
    ths_set_default(f->srv, 200, NULL, NULL);
    ocisbx_http_request_free(r);
    ocisbx_http_free(off);
    ocisbx_http_free(three);
}

static void test_stream_idle_timeout(void **state)
{
    fixture *f = *state;
    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_retries(o, 0), 0);
    assert_int_equal(ocisbx_http_options_set_stream_idle_timeout_ms(o, 100), 0);
    ocisbx_http *h = NULL;
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    ocisbx_http_options_free(o);
    ths_step slow = {200, NULL, "late", THS_RESPOND, 1500};
    ths_push_step(f->srv, &slow);
    ocisbx_http_request *r = make_req(f, "GET", "/events");
    assert_int_equal(ocisbx_http_request_set_streaming(r, 1), 0);
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ETIMEOUT);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "idle"));
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

static void test_connection_reuse_and_proxy(void **state)
{
    fixture *f = *state;
    /* A proxy in the environment is never used for loopback. */
    setenv("http_proxy", "http://127.0.0.1:9", 1);
    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    ocisbx_http *h = NULL;
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    ocisbx_http_options_free(o);
    log_text[0] = '\0';
    ocisbx_set_log(capture_log, OCISBX_LOG_DEBUG, NULL);
    for (int i = 0; i < 3; i++) {
        ocisbx_http_request *r = make_req(f, "GET", "/again");
        ocisbx_http_response *resp = NULL;
        assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
        ocisbx_http_response_free(resp);
        ocisbx_http_request_free(r);
    }
    ocisbx_set_log(NULL, 0, NULL);
    unsetenv("http_proxy");
    assert_int_equal(ths_count(f->srv), 3);
    /* One connection for the three calls of one handle. */
    const char *first = strstr(log_text, "new connection");
    assert_non_null(first);
    assert_null(strstr(first + 1, "new connection"));
    assert_non_null(strstr(log_text, "reused connection"));
    ocisbx_http_free(h);
}

/* A header's value in raw request bytes (first match), malloc'd. */
static char *raw_header(const char *raw, const char *name)
{
    size_t nl = strlen(name);
    const char *end = strstr(raw, "\r\n\r\n");
    for (const char *p = strstr(raw, "\r\n"); p && p < end; p = strstr(p, "\r\n")) {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            return strndup(v, strcspn(v, "\r"));
        }
    }
    return NULL;
}

/* Values handed to the verifier stay valid until raw_lookup_free(). */
static char *raw_values[16];
static size_t raw_nvalues;

static const char *raw_lookup(const char *name, void *ud)
{
    char *v = raw_header(ud, name);
    if (v && raw_nvalues < 16)
        raw_values[raw_nvalues++] = v;
    return v;
}

static void raw_lookup_free(void)
{
    while (raw_nvalues)
        free(raw_values[--raw_nvalues]);
}

static int ths_port_of_url(const char *url)
{
    return atoi(url + strlen("http://127.0.0.1:"));
}

/* Sends url on a raw socket; returns the bytes received (caller frees). */
static char *send_raw(fixture *f, const char *method, const char *path, int expect_rc, ocisbx_headers **prepared,
                      char **signed_url)
{
    ths_raw *raw = NULL;
    assert_int_equal(ths_raw_start(NULL, &raw), 0);
    char url[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", ths_raw_port(raw), path);
    ocisbx_http *h = make_http(f->creds);
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_request_new(method, url, &r), expect_rc);
    if (expect_rc) {
        ths_raw_stop(raw);
        ocisbx_http_free(h);
        return NULL;
    }
    if (strcmp(method, "POST") == 0)
        assert_int_equal(ocisbx_http_request_set_body(r, "{}", 2), 0);
    assert_int_equal(ocisbx_http_request_add_header(r, "x-extra", "1"), 0);
    if (prepared)
        assert_int_equal(ocisbx_http_prepare(h, r, prepared), 0);
    if (signed_url)
        *signed_url = strdup(ocisbx_http_request_url(r));
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    char *got = strdup(ths_raw_wait(raw));
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
    ths_raw_stop(raw);
    return got;
}

/* docs/auth.md, the signing string: the (request-target) is the path and query exactly as sent.
 * What arrives on the socket must be what was signed, for URLs curl would
 * otherwise rewrite (non-ASCII, spaces, dot segments, a bare '?'). */
static void test_wire_target_is_signed_target(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *given, *wire;
    } cases[] = {
        {"/\xc3\xa9/a b?q=\xc3\xa9 x&r=%41%2f", "/%C3%A9/a%20b?q=%C3%A9%20x&r=%41%2f"},
        {"/a/../b/./c", "/a/../b/./c"},
        {"/x?", "/x"},
        {"/x?a=?", "/x?a=?"},
        {"/ctl\x01\x7f?\x1f", "/ctl%01%7F?%1F"},
        {"?q=1", "/?q=1"},
        {"/p\"<>{}|\\^`[]'!*;:@,$?q=\"<>{}|^`[]/?:@!$'()*,;", "/p\"<>{}|\\^`[]'!*;:@,$?q=\"<>{}|^`[]/?:@!$'()*,;"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *signed_url = NULL;
        char *raw = send_raw(f, "GET", cases[i].given, 0, NULL, &signed_url);
        assert_non_null(raw);
        char *target = ths_raw_target(raw);
        assert_non_null(target);
        assert_string_equal(target, cases[i].wire);
        /* The request's URL (what the signer got) ends in the wire target... */
        char prefix[64];
        int plen = snprintf(prefix, sizeof prefix, "http://127.0.0.1:%d", ths_port_of_url(signed_url));
        assert_memory_equal(signed_url, prefix, (size_t)plen);
        const char *tail = signed_url + plen;
        char shown[256];
        snprintf(shown, sizeof shown, "%s%s", tail[0] == '?' ? "/" : "", tail);
        assert_string_equal(shown, target);
        /* ...and the signature verifies over the target as received. */
        char *authz = raw_header(raw, "authorization");
        ocisbx_authz a;
        assert_int_equal(ocisbx_authz_parse(authz, &a), 0);
        char *ss = NULL;
        assert_int_equal(ocisbx_verify_signing_string(a.headers, "GET", target, raw_lookup, raw, &ss), 0);
        assert_int_equal(ocisbx_verify_signature_pem(f->pub_pem, strlen(f->pub_pem), ss, strlen(ss), a.signature), 0);
        ocisbx_free(ss);
        ocisbx_authz_clear(&a);
        raw_lookup_free();
        free(authz);
        free(target);
        free(signed_url);
        free(raw);
    }
    /* Malformed escapes are refused before anything is signed. */
    assert_null(send_raw(f, "GET", "/a%zz", OCISBX_EINVAL, NULL, NULL));
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "malformed percent escape"));
    assert_null(send_raw(f, "GET", "/a?b=%4", OCISBX_EINVAL, NULL, NULL));
    assert_null(send_raw(f, "GET", "/a%", OCISBX_EINVAL, NULL, NULL));
}

/* prepare() lists the headers in the order they go on the wire. */
static void test_prepare_order_is_wire_order(void **state)
{
    fixture *f = *state;
    const char *methods[] = {"GET", "POST"};
    for (size_t m = 0; m < 2; m++) {
        ocisbx_headers *hl = NULL;
        char *raw = send_raw(f, methods[m], "/order", 0, &hl, NULL);
        char **names = NULL;
        size_t n = ths_raw_header_names(raw, &names);
        assert_int_equal(n, ocisbx_headers_count(hl));
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(names[i], ocisbx_headers_name(hl, i));
            free(names[i]);
        }
        assert_string_equal(ocisbx_headers_name(hl, 0), "host");
        free(names);
        ocisbx_headers_free(hl);
        free(raw);
    }
}

typedef struct hdr_seen {
    int calls;
    int status;
    char ctype[64];
    size_t body_at_call; /* sink bytes when the callback ran */
    size_t body_bytes;
    int cancel;
} hdr_seen;

static int on_hdrs(int status, const ocisbx_headers *h, void *ud)
{
    hdr_seen *s = ud;
    s->calls++;
    s->status = status;
    const char *ct = ocisbx_headers_get(h, "content-type");
    snprintf(s->ctype, sizeof s->ctype, "%s", ct ? ct : "");
    s->body_at_call = s->body_bytes;
    return s->cancel;
}

static int count_sink(const void *data, size_t len, void *ud)
{
    (void)data;
    ((hdr_seen *)ud)->body_bytes += len;
    return 0;
}

/* The headers callback: once per attempt, before the body, cancels. */
static void test_headers_callback(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    ths_push(f->srv, 503, "content-type: application/json", "{\"code\":\"x\"}");
    ths_push(f->srv, 200, "content-type: text/event-stream", "data: 1\n\n");
    hdr_seen seen = {0};
    ocisbx_http_request *r = make_req(f, "GET", "/events");
    assert_int_equal(ocisbx_http_request_set_headers_callback(r, on_hdrs, &seen), 0);
    assert_int_equal(ocisbx_http_request_set_sink_callback(r, count_sink, &seen), 0);
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    assert_int_equal(seen.calls, 2); /* the 503 attempt and the 200 one */
    assert_int_equal(seen.status, 200);
    assert_string_equal(seen.ctype, "text/event-stream");
    assert_int_equal(seen.body_at_call, 0);
    assert_int_equal(seen.body_bytes, 9);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);

    /* Non-zero cancels: no body reaches the sink, no retry. */
    ths_clear(f->srv);
    ths_push(f->srv, 200, "content-type: text/plain", "hello");
    hdr_seen stop = {.cancel = 1};
    r = make_req(f, "GET", "/events");
    assert_int_equal(ocisbx_http_request_set_headers_callback(r, on_hdrs, &stop), 0);
    assert_int_equal(ocisbx_http_request_set_sink_callback(r, count_sink, &stop), 0);
    resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ECANCELED);
    assert_null(resp);
    assert_int_equal(stop.calls, 1);
    assert_int_equal(stop.body_bytes, 0);
    assert_int_equal(ths_count(f->srv), 1);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "headers callback"));
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

/* A failed connect after a kept-alive call reused nothing: the debug log
 * must not say so. */
static void test_log_failed_connect_not_reused(void **state)
{
    fixture *f = *state;
    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_retries(o, 0), 0);
    assert_int_equal(ocisbx_http_options_set_ignore_proxy_env(o, 1), 0);
    ocisbx_http *h = NULL;
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    ocisbx_http_options_free(o);
    ocisbx_http_request *r = make_req(f, "GET", "/first");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), 0);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    /* A port nothing listens on: bound, then closed. */
    ths_raw *closed = NULL;
    assert_int_equal(ths_raw_start(NULL, &closed), 0);
    int port = ths_raw_port(closed);
    ths_raw_stop(closed);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/second", port);
    log_text[0] = '\0';
    ocisbx_set_log(capture_log, OCISBX_LOG_DEBUG, NULL);
    assert_int_equal(ocisbx_http_request_new("GET", url, &r), 0);
    resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ETRANSPORT);
    ocisbx_set_log(NULL, 0, NULL);
    assert_non_null(strstr(log_text, "/second"));
    assert_null(strstr(log_text, "reused connection"));
    assert_non_null(strstr(log_text, "no connection"));
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

static void test_deadline_stops_retries(void **state)
{
    fixture *f = *state;
    ocisbx_http_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_deadline_ms(o, 300), 0); /* the first backoff (1 s+) exceeds it */
    ocisbx_http *h = NULL;
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    ocisbx_http_options_free(o);
    ths_set_default(f->srv, 503, NULL, "{\"code\":\"ServiceUnavailable\",\"message\":\"later\"}");
    ocisbx_http_request *r = make_req(f, "GET", "/slow");
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ESERVICE);
    assert_int_equal(ocisbx_http_response_attempts(resp), 1);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "503 ServiceUnavailable: later"));
    ths_set_default(f->srv, 200, NULL, NULL);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

static void test_tls_failure_not_retried(void **state)
{
    fixture *f = *state;
    ocisbx_http *h = make_http(f->creds);
    /* https to a plain-http server: the handshake fails; not a transient error. */
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/x", ths_port(f->srv));
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_request_new("GET", url, &r), 0);
    ocisbx_http_response *resp = NULL;
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ETRANSPORT);
    assert_null(resp);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "after 1 attempt "));
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
}

typedef struct thread_arg {
    fixture *f;
    int ok;
} thread_arg;

static void *thread_main(void *p)
{
    thread_arg *t = p;
    ocisbx_http_options *o = NULL;
    ocisbx_http *h = NULL;
    if (ocisbx_http_options_new(&o) || ocisbx_http_options_set_credentials(o, t->f->creds) ||
        ocisbx_http_options_set_allow_plain_http(o, 1) || ocisbx_http_new(o, &h))
        return NULL;
    ocisbx_http_options_free(o);
    char *url = ths_url(t->f->srv, "/threads");
    for (int i = 0; i < 10; i++) {
        ocisbx_http_request *r = NULL;
        ocisbx_http_response *resp = NULL;
        if (ocisbx_http_request_new("GET", url, &r) == 0 && ocisbx_http_send(h, r, &resp) == 0 &&
            ocisbx_http_response_status(resp) == 200)
            t->ok++;
        ocisbx_http_response_free(resp);
        ocisbx_http_request_free(r);
    }
    free(url);
    ocisbx_http_free(h);
    return NULL;
}

/* One handle per thread, one credentials object shared: no caller locks. */
static void test_handles_on_threads(void **state)
{
    fixture *f = *state;
    ocisbx_global_init();
    pthread_t th[4];
    thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i].f = f;
        args[i].ok = 0;
        assert_int_equal(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].ok, 10);
    }
    assert_int_equal(ths_count(f->srv), 40);
    for (size_t i = 0; i < 40; i++)
        assert_signed(f, ths_get(f->srv, i), "date (request-target) host");
    ocisbx_global_cleanup();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_signed_get_host_with_port, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prepare_matches_sent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_503_twice_then_200, setup, teardown),
        cmocka_unit_test_setup_teardown(test_429_retry_after, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_retry_on_400, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_404_message_and_garbage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_409_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_token_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connection_reset_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callback_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_body_and_sink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callback_sink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_401_refresh_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_401_api_key_not_resent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_after_capped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plain_http_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retries_off_and_max_attempts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_idle_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connection_reuse_and_proxy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline_stops_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tls_failure_not_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handles_on_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wire_target_is_signed_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prepare_order_is_wire_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_headers_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_failed_connect_not_reused, setup, teardown),
    };
    return par_run_group_tests_name("it_http_transport", tests, NULL, NULL);
}
