/* The signer: signing strings per method, request targets and hosts, bodies
 * (buffer, stream, precomputed, empty), exclude-body, the header list, and
 * round trips through the independent verifier. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include <cmocka.h>

#include "auth/verify.h"
#include "ocisbx/auth.h"
#include "ocisbx/util.h"
#include "test_assert.h"

#define VECTOR_KEY OCISBX_SOURCE_DIR "/tests/data/cavage-test-key.pem"
#define DATE "Thu, 05 Jan 2014 21:31:40 GMT"
#define EMPTY_SHA "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
#define TENANCY "ocid1.tenancy.oc1..aaaaaaaaba3pv6wkcr4jqae5f15p2b2m2yt2j6rx32uzr4h25vqstifsfdsq"
#define USER "ocid1.user.oc1..aaaaaaaat5nvwcna5j6aqzjcaty5eqbb6qt2jvpkanghtgdaqedqw3rynjq"
#define FP "73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7"

static ocisbx_key *vkey;

static int setup(void **state)
{
    (void)state;
    return ocisbx_key_load_file(VECTOR_KEY, NULL, &vkey);
}

static int teardown(void **state)
{
    (void)state;
    ocisbx_key_free(vkey);
    return 0;
}

static char *signing_string(const char *method, const char *url, const void *body, size_t len)
{
    ocisbx_sign_request *r = NULL;
    if (ocisbx_sign_request_new(method, url, &r))
        fail_msg("%s", ocisbx_error_message(ocisbx_error_last()));
    assert_int_equal(ocisbx_sign_request_set_date(r, DATE), 0);
    if (body)
        assert_int_equal(ocisbx_sign_request_set_body(r, body, len), 0);
    char *s = NULL;
    assert_int_equal(ocisbx_sign_request_signing_string(r, &s), 0);
    ocisbx_sign_request_free(r);
    return s;
}

static void assert_ss(const char *method, const char *url, const char *want)
{
    char *s = signing_string(method, url, NULL, 0);
    assert_string_equal(s, want);
    ocisbx_free(s);
}

static void test_methods_without_body(void **state)
{
    (void)state;
    const char *methods[] = {"GET", "HEAD", "DELETE", "OPTIONS", "get", "Delete"};
    const char *lower[] = {"get", "head", "delete", "options", "get", "delete"};
    for (size_t i = 0; i < 6; i++) {
        char want[256];
        snprintf(want, sizeof want, "date: " DATE "\n(request-target): %s /a/b?c=d\nhost: h.example.com", lower[i]);
        assert_ss(methods[i], "https://h.example.com/a/b?c=d", want);
    }
}

static void test_methods_with_body(void **state)
{
    (void)state;
    const char *methods[] = {"POST", "PUT", "PATCH", "post"};
    const char *lower[] = {"post", "put", "patch", "post"};
    for (size_t i = 0; i < 4; i++) {
        char want[512];
        /* No body: the empty body's hash and length 0. */
        snprintf(want, sizeof want,
                 "date: " DATE "\n(request-target): %s /x\nhost: h\ncontent-length: 0\n"
                 "content-type: application/json\nx-content-sha256: " EMPTY_SHA,
                 lower[i]);
        assert_ss(methods[i], "http://h/x", want);
    }
    /* An empty body given explicitly is the same. */
    char *s = signing_string("POST", "http://h/x", "", 0);
    assert_non_null(strstr(s, "content-length: 0\n"));
    assert_non_null(strstr(s, "x-content-sha256: " EMPTY_SHA));
    ocisbx_free(s);
    /* A body: its length and base64 SHA-256 ("abc"). */
    s = signing_string("PUT", "http://h/x", "abc", 3);
    assert_non_null(strstr(s, "\ncontent-length: 3\n"));
    assert_non_null(strstr(s, "\nx-content-sha256: ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="));
    ocisbx_free(s);
    /* GET ignores a body it was given: only the three headers. */
    s = signing_string("GET", "http://h/x", "abc", 3);
    assert_null(strstr(s, "content-length"));
    ocisbx_free(s);
}

static void test_targets_and_hosts(void **state)
{
    (void)state;
    static const struct {
        const char *url, *target, *host;
    } cases[] = {
        {"https://h.example.com", "/", "h.example.com"},
        {"https://h.example.com?x=1", "/?x=1", "h.example.com"},
        {"https://h.example.com/p?", "/p", "h.example.com"},
        {"https://h.example.com/p#frag", "/p", "h.example.com"},
        {"https://h.example.com/p?q=1#frag", "/p?q=1", "h.example.com"},
        {"https://h.example.com:8443/p", "/p", "h.example.com:8443"},
        {"https://h.example.com:443/p", "/p", "h.example.com:443"}, /* explicit port kept */
        {"http://127.0.0.1:8080/a%20b/c?d=%2F&e=%C3%A9", "/a%20b/c?d=%2F&e=%C3%A9", "127.0.0.1:8080"},
        {"http://user:pw@h:81/x", "/x", "h:81"},
        {"http://[::1]:9000/v1", "/v1", "[::1]:9000"},
        {"HTTPS://Host.Example.COM/Path", "/Path", "Host.Example.COM"},
        {"https://h/a//b/../c?z=1&a=2", "/a//b/../c?z=1&a=2", "h"}, /* no normalisation, no sorting */
        {"https://h/p?q=\xc3\xa9", "/p?q=\xc3\xa9", "h"},           /* raw UTF-8: signed as sent */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char want[512];
        snprintf(want, sizeof want, "date: " DATE "\n(request-target): get %s\nhost: %s", cases[i].target,
                 cases[i].host);
        assert_ss("GET", cases[i].url, want);
    }
}

static void test_bad_input(void **state)
{
    (void)state;
    const char *bad_urls[] = {
        "ftp://h/x",     "h.example.com/x", "/x", "https://",  "https:///x", "https://user@/x", "https://:443/x",
        "https://h/a b", "https://h/\r\nx", "",   "mailto:x@y"};
    for (size_t i = 0; i < sizeof bad_urls / sizeof bad_urls[0]; i++) {
        ocisbx_sign_request *r = (ocisbx_sign_request *)1;
        assert_int_equal(ocisbx_sign_request_new("GET", bad_urls[i], &r), OCISBX_EINVAL);
        assert_null(r);
        const char *msg = ocisbx_error_message(ocisbx_error_last());
        if (bad_urls[i][0] && !strchr(bad_urls[i], '\r') && !strchr(bad_urls[i], '@') && !strstr(msg, bad_urls[i]))
            fail_msg("message \"%s\" does not name the URL %s", msg, bad_urls[i]);
    }
    /* user:password@ is masked as the transport does; control bytes are shown escaped */
    const struct {
        const char *url, *shown;
    } masked[] = {
        {"https://user:secret@/x", "\"https://***@/x\""},
        {"ftp://user:secret@h/x", "\"ftp://***@h/x\""},
        {"https://user:secret@h/a b", "\"https://***@h/a b\""},
        {"https://user:secret@h/\r\nx", "\"https://***@h/\\x0d\\x0ax\""},
        {"mailto:user:secret@y", "\"mailto:user:secret@y\""}, /* no authority: nothing to mask */
    };
    for (size_t i = 0; i < sizeof masked / sizeof masked[0]; i++) {
        ocisbx_sign_request *r = NULL;
        assert_int_equal(ocisbx_sign_request_new("GET", masked[i].url, &r), OCISBX_EINVAL);
        const char *msg = ocisbx_error_message(ocisbx_error_last());
        if (!strstr(msg, masked[i].shown))
            fail_msg("message \"%s\" does not show %s", msg, masked[i].shown);
        if (strstr(masked[i].url, "://") && strstr(msg, "secret"))
            fail_msg("message \"%s\" shows the password", msg);
        if (strchr(msg, '\r') || strchr(msg, '\n'))
            fail_msg("message \"%s\" is not one line", msg);
    }
    ocisbx_sign_request *r = NULL;
    assert_int_equal(ocisbx_sign_request_new("GE T", "https://h/", &r), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sign_request_new("", "https://h/", &r), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sign_request_new(NULL, "https://h/", &r), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sign_request_new("GET", NULL, &r), OCISBX_EINVAL);

    assert_int_equal(ocisbx_sign_request_new("POST", "https://h/", &r), 0);
    assert_int_equal(ocisbx_sign_request_set_date(r, "Thu, 05 Jan 2014\r\nX: y"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sign_request_set_date(r, ""), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sign_request_set_content_type(r, "text/plain\n"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sign_request_set_host(r, ""), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sign_request_set_host(r, "a b"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sign_request_set_body_sha256(r, "short", 1), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sign_request_set_body_sha256(r, "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU!", 1),
                     OCISBX_EINVAL);
    assert_int_equal(ocisbx_sign_request_set_body(r, NULL, 5), OCISBX_EINVAL);
    ocisbx_headers *h = NULL;
    assert_int_equal(ocisbx_sign_with_key("bad\"keyid", vkey, r, &h), OCISBX_EINVAL);
    assert_null(h);
    /* The keyId (possibly a token) is not echoed in the message. */
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), "bad\"keyid"));
    assert_int_equal(ocisbx_sign_with_key("", vkey, r, &h), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sign_with_key("k", NULL, r, &h), OCISBX_EINVAL);
    ocisbx_sign_request_free(r);
    ocisbx_sign_request_free(NULL);
}

struct chunks {
    const char *data;
    size_t len, pos, step;
    int fail_at; /* fail on this call (1-based), 0: never */
    int calls;
};

static int64_t read_chunks(void *buf, size_t cap, void *ud)
{
    struct chunks *c = ud;
    if (++c->calls == c->fail_at)
        return OCISBX_EIO;
    size_t n = c->len - c->pos;
    if (n > c->step)
        n = c->step;
    if (n > cap)
        n = cap;
    memcpy(buf, c->data + c->pos, n);
    c->pos += n;
    return (int64_t)n;
}

static void test_bodies(void **state)
{
    (void)state;
    size_t len = 200000;
    char *data = malloc(len);
    for (size_t i = 0; i < len; i++)
        data[i] = (char)(i * 7 + 3);
    char want_sha[45];
    assert_int_equal(ocisbx_sha256_base64(data, len, want_sha), 0);

    /* buffer */
    ocisbx_sign_request *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(ocisbx_sign_request_new("PUT", "https://h/o", &a), 0);
    assert_int_equal(ocisbx_sign_request_set_date(a, DATE), 0);
    assert_int_equal(ocisbx_sign_request_set_body(a, data, len), 0);
    /* stream, in odd-sized pieces */
    assert_int_equal(ocisbx_sign_request_new("PUT", "https://h/o", &b), 0);
    assert_int_equal(ocisbx_sign_request_set_date(b, DATE), 0);
    struct chunks ch = {data, len, 0, 777, 0, 0};
    assert_int_equal(ocisbx_sign_request_set_body_stream(b, read_chunks, &ch), 0);
    /* precomputed */
    assert_int_equal(ocisbx_sign_request_new("PUT", "https://h/o", &c), 0);
    assert_int_equal(ocisbx_sign_request_set_date(c, DATE), 0);
    assert_int_equal(ocisbx_sign_request_set_body_sha256(c, want_sha, len), 0);

    char *sa = NULL, *sb = NULL, *sc = NULL;
    assert_int_equal(ocisbx_sign_request_signing_string(a, &sa), 0);
    assert_int_equal(ocisbx_sign_request_signing_string(b, &sb), 0);
    assert_int_equal(ocisbx_sign_request_signing_string(c, &sc), 0);
    assert_string_equal(sa, sb);
    assert_string_equal(sa, sc);
    assert_non_null(strstr(sa, "content-length: 200000\n"));
    char line[80];
    snprintf(line, sizeof line, "x-content-sha256: %s", want_sha);
    assert_non_null(strstr(sa, line));

    /* a failing stream: its code comes back, with context */
    struct chunks bad = {data, len, 0, 1000, 3, 0};
    assert_int_equal(ocisbx_sign_request_set_body_stream(b, read_chunks, &bad), OCISBX_EIO);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "request body"));
    /* an empty stream is the empty body */
    struct chunks empty = {"", 0, 0, 10, 0, 0};
    assert_int_equal(ocisbx_sign_request_set_body_stream(b, read_chunks, &empty), 0);
    ocisbx_free(sb);
    assert_int_equal(ocisbx_sign_request_signing_string(b, &sb), 0);
    assert_non_null(strstr(sb, "content-length: 0\n"));
    assert_non_null(strstr(sb, EMPTY_SHA));

    ocisbx_free(sa);
    ocisbx_free(sb);
    ocisbx_free(sc);
    ocisbx_sign_request_free(a);
    ocisbx_sign_request_free(b);
    ocisbx_sign_request_free(c);
    free(data);
}

static void test_exclude_body_and_options(void **state)
{
    (void)state;
    ocisbx_sign_request *r = NULL;
    assert_int_equal(ocisbx_sign_request_new("PUT", "https://objectstorage.example.com/n/ns/b/b/o/x", &r), 0);
    assert_int_equal(ocisbx_sign_request_set_date(r, DATE), 0);
    assert_int_equal(ocisbx_sign_request_set_body(r, "abc", 3), 0);
    assert_int_equal(ocisbx_sign_request_set_exclude_body(r, 1), 0);
    char *s = NULL;
    assert_int_equal(ocisbx_sign_request_signing_string(r, &s), 0);
    assert_string_equal(s, "date: " DATE "\n(request-target): put /n/ns/b/b/o/x\nhost: objectstorage.example.com");
    ocisbx_free(s);
    ocisbx_headers *h = NULL;
    assert_int_equal(ocisbx_sign_with_key("k", vkey, r, &h), 0);
    assert_int_equal(ocisbx_headers_count(h), 3);
    assert_null(ocisbx_headers_get(h, "x-content-sha256"));
    assert_null(ocisbx_headers_get(h, "content-length"));
    assert_non_null(strstr(ocisbx_headers_get(h, "authorization"), "headers=\"date (request-target) host\""));
    ocisbx_headers_free(h);

    /* content type and host overrides */
    assert_int_equal(ocisbx_sign_request_set_exclude_body(r, 0), 0);
    assert_int_equal(ocisbx_sign_request_set_content_type(r, "application/octet-stream"), 0);
    assert_int_equal(ocisbx_sign_request_set_host(r, "proxy.internal:8080"), 0);
    assert_int_equal(ocisbx_sign_request_signing_string(r, &s), 0);
    assert_string_equal(s, "date: " DATE "\n(request-target): put /n/ns/b/b/o/x\nhost: proxy.internal:8080\n"
                           "content-length: 3\ncontent-type: application/octet-stream\n"
                           "x-content-sha256: ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
    ocisbx_free(s);
    ocisbx_sign_request_free(r);
}

static void test_date_defaults_to_now(void **state)
{
    (void)state;
    ocisbx_sign_request *r = NULL;
    assert_int_equal(ocisbx_sign_request_new("GET", "https://h/", &r), 0);
    /* A fixed date, then NULL: back to now. */
    assert_int_equal(ocisbx_sign_request_set_date(r, DATE), 0);
    assert_int_equal(ocisbx_sign_request_set_date(r, NULL), 0);
    ocisbx_headers *h = NULL;
    assert_int_equal(ocisbx_sign_with_key("k", vkey, r, &h), 0);
    const char *date = ocisbx_headers_get(h, "date");
    assert_int_equal(strlen(date), 29);
    assert_string_equal(date + 25, " GMT");
    time_t t = 0;
    assert_int_equal(ocisbx_time_parse_rfc1123(date, &t), 0);
    time_t now = time(NULL);
    /* Correctness of the clock source, not speed: a day of slack. */
    assert_true(t > now - 86400 && t < now + 86400);
    ocisbx_headers_free(h);
    ocisbx_sign_request_free(r);
}

static void test_headers_list(void **state)
{
    (void)state;
    ocisbx_headers *h = NULL;
    assert_int_equal(ocisbx_headers_new(&h), 0);
    assert_int_equal(ocisbx_headers_count(h), 0);
    char name[16], value[16];
    for (int i = 0; i < 20; i++) { /* past the initial capacity */
        snprintf(name, sizeof name, "X-Hdr-%d", i);
        snprintf(value, sizeof value, "v%d", i);
        assert_int_equal(ocisbx_headers_add(h, name, value), 0);
    }
    assert_int_equal(ocisbx_headers_count(h), 20);
    assert_string_equal(ocisbx_headers_name(h, 3), "x-hdr-3");
    assert_string_equal(ocisbx_headers_value(h, 3), "v3");
    assert_string_equal(ocisbx_headers_get(h, "X-HDR-19"), "v19");
    assert_null(ocisbx_headers_get(h, "x-hdr-20"));
    assert_null(ocisbx_headers_name(h, 20));
    assert_null(ocisbx_headers_value(h, 20));
    assert_int_equal(ocisbx_headers_add(h, "dup", "first"), 0);
    assert_int_equal(ocisbx_headers_add(h, "Dup", "second"), 0);
    assert_string_equal(ocisbx_headers_get(h, "dup"), "first");
    assert_int_equal(ocisbx_headers_add(h, "x", "a\r\nInjected: 1"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_headers_add(h, "bad name", "v"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_headers_add(h, "bad:name", "v"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_headers_add(h, "", "v"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_headers_add(h, "x", NULL), OCISBX_EINVAL);
    assert_int_equal(ocisbx_headers_count(h), 22);
    assert_int_equal(ocisbx_headers_count(NULL), 0);
    ocisbx_headers_free(h);
    ocisbx_headers_free(NULL);
}

static const char *lookup(const char *name, void *ud)
{
    return ocisbx_headers_get(ud, name);
}

/* Signs, then verifies with the separate verifier from the sent headers. */
static void test_round_trip_and_order(void **state)
{
    (void)state;
    ocisbx_key *k = NULL;
    assert_int_equal(ocisbx_key_generate(2048, &k), 0);
    char *pem = NULL;
    assert_int_equal(ocisbx_key_public_pem(k, &pem), 0);
    ocisbx_pubkey *pk = NULL;
    assert_int_equal(ocisbx_pubkey_load_pem(pem, strlen(pem), &pk), 0);

    const char *methods[] = {"GET", "HEAD", "DELETE", "POST", "PUT", "PATCH"};
    for (size_t i = 0; i < 6; i++) {
        ocisbx_sign_request *r = NULL;
        assert_int_equal(ocisbx_sign_request_new(methods[i], "https://h.example.com:8443/a%20b?c=%C3%A9", &r), 0);
        assert_int_equal(ocisbx_sign_request_set_body(r, "{\"a\":1}", 7), 0);
        ocisbx_headers *h = NULL;
        assert_int_equal(ocisbx_sign_with_key("ST$token.value", k, r, &h), 0);
        int body = i >= 3;
        assert_int_equal(ocisbx_headers_count(h), body ? 6 : 3);
        const char *order_body[] = {"date",         "host", "content-length", "content-type", "x-content-sha256",
                                    "authorization"};
        const char *order_plain[] = {"date", "host", "authorization"};
        for (size_t j = 0; j < ocisbx_headers_count(h); j++)
            assert_string_equal(ocisbx_headers_name(h, j), body ? order_body[j] : order_plain[j]);

        ocisbx_authz a;
        assert_int_equal(ocisbx_authz_parse(ocisbx_headers_get(h, "authorization"), &a), 0);
        assert_string_equal(a.version, "1");
        assert_string_equal(a.key_id, "ST$token.value");
        assert_int_equal(ocisbx_authz_require_headers(a.headers, methods[i], 0), 0);
        char *ss = NULL;
        assert_int_equal(ocisbx_verify_signing_string(a.headers, methods[i], "/a%20b?c=%C3%A9", lookup, h, &ss), 0);
        char *ours = NULL;
        assert_int_equal(ocisbx_sign_request_signing_string(r, &ours), 0);
        /* set_date was not called: same second or the next; compare only when equal */
        if (strncmp(ours, ss, 35) == 0)
            assert_string_equal(ours, ss);
        assert_int_equal(ocisbx_pubkey_verify(pk, ss, strlen(ss), a.signature), 0);
        /* a request whose target was changed in transit fails */
        ocisbx_free(ss);
        assert_int_equal(ocisbx_verify_signing_string(a.headers, methods[i], "/a%20b?c=%C3%A8", lookup, h, &ss), 0);
        assert_int_equal(ocisbx_pubkey_verify(pk, ss, strlen(ss), a.signature), OCISBX_EINTEGRITY);
        ocisbx_free(ss);
        ocisbx_free(ours);
        ocisbx_authz_clear(&a);
        ocisbx_headers_free(h);
        ocisbx_sign_request_free(r);
    }
    ocisbx_pubkey_free(pk);
    ocisbx_free(pem);
    ocisbx_key_free(k);
}

/* ocisbx_sign takes keyId and key from a credential provider. */
static void test_sign_with_credentials(void **state)
{
    (void)state;
    ocisbx_credentials *c = NULL;
    if (ocisbx_credentials_api_key(TENANCY, USER, FP, vkey, &c))
        fail_msg("%s", ocisbx_error_message(ocisbx_error_last()));
    ocisbx_sign_request *r = NULL;
    assert_int_equal(ocisbx_sign_request_new("GET", "https://h.example.com/x", &r), 0);
    assert_int_equal(ocisbx_sign_request_set_date(r, DATE), 0);
    ocisbx_headers *h1 = NULL, *h2 = NULL;
    assert_int_equal(ocisbx_sign(c, r, &h1), 0);
    assert_int_equal(ocisbx_sign_with_key(TENANCY "/" USER "/" FP, vkey, r, &h2), 0);
    assert_string_equal(ocisbx_headers_get(h1, "authorization"), ocisbx_headers_get(h2, "authorization"));
    ocisbx_headers_free(h1);
    assert_int_equal(ocisbx_sign(NULL, r, &h1), OCISBX_EINVAL);
    assert_null(h1);
    ocisbx_headers_free(h2);
    ocisbx_sign_request_free(r);
    ocisbx_credentials_free(c);
}

/* One key shared by threads (as a credential provider shares it): every
 * signature equals the single-threaded one. */
struct thread_arg {
    const char *want;
    int bad;
};

static void *sign_many(void *p)
{
    struct thread_arg *a = p;
    for (int i = 0; i < 25; i++) {
        ocisbx_sign_request *r = NULL;
        ocisbx_headers *h = NULL;
        if (ocisbx_sign_request_new("POST", "https://h.example.com/x", &r) || ocisbx_sign_request_set_date(r, DATE) ||
            ocisbx_sign_request_set_body(r, "{}", 2) || ocisbx_sign_with_key("k", vkey, r, &h) ||
            strcmp(ocisbx_headers_get(h, "authorization"), a->want) != 0)
            a->bad++;
        ocisbx_headers_free(h);
        ocisbx_sign_request_free(r);
    }
    return NULL;
}

static void test_shared_key_threads(void **state)
{
    (void)state;
    ocisbx_sign_request *r = NULL;
    ocisbx_headers *h = NULL;
    assert_int_equal(ocisbx_sign_request_new("POST", "https://h.example.com/x", &r), 0);
    assert_int_equal(ocisbx_sign_request_set_date(r, DATE), 0);
    assert_int_equal(ocisbx_sign_request_set_body(r, "{}", 2), 0);
    assert_int_equal(ocisbx_sign_with_key("k", vkey, r, &h), 0);
    pthread_t t[4];
    struct thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i].want = ocisbx_headers_get(h, "authorization");
        args[i].bad = 0;
        assert_int_equal(pthread_create(&t[i], NULL, sign_many, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(args[i].bad, 0);
    }
    ocisbx_headers_free(h);
    ocisbx_sign_request_free(r);
}

/* Input quoted in a message never brings a control byte or invalid UTF-8. */
static void test_messages_escaped(void **state)
{
    (void)state;
    ocisbx_sign_request *r = NULL;
    assert_int_equal(ocisbx_sign_request_new("G\x1b[2J\xff", "https://h/", &r), OCISBX_EINVAL);
    test_assert_msg_has("\"G\\x1b[2J\\xff\" is not an HTTP method");
    test_assert_msg_clean();
    assert_int_equal(ocisbx_sign_request_new("POST", "https://h/", &r), 0);
    assert_int_equal(ocisbx_sign_request_set_host(r, "a \x1b]0;x\x07\xfe"), OCISBX_EINVAL);
    test_assert_msg_has("host \"a \\x1b]0;x\\x07\\xfe\"");
    test_assert_msg_clean();
    assert_int_equal(ocisbx_sign_request_set_body_sha256(r, "\x1b[2J\xff", 1), OCISBX_EINVAL);
    test_assert_msg_has("\"\\x1b[2J\\xff\" is not a base64 SHA-256");
    test_assert_msg_clean();
    ocisbx_sign_request_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_methods_without_body),
        cmocka_unit_test(test_methods_with_body),
        cmocka_unit_test(test_targets_and_hosts),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_bodies),
        cmocka_unit_test(test_exclude_body_and_options),
        cmocka_unit_test(test_date_defaults_to_now),
        cmocka_unit_test(test_headers_list),
        cmocka_unit_test(test_round_trip_and_order),
        cmocka_unit_test(test_sign_with_credentials),
        cmocka_unit_test(test_shared_key_threads),
        cmocka_unit_test(test_messages_escaped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
