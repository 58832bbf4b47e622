/* The core written first: buffers, string helpers, the error object, status
 * names, logging with redaction, version and global init. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ocisbx/common.h"
#include "util/internal.h"

/* ---- buffers and strings ---- */

static void test_buf(void **state)
{
    (void)state;
    ocisbx_buf b = OCISBX_BUF_INIT;
    assert_int_equal(ocisbx_buf_append(&b, "", 0), 0);
    assert_non_null(b.data);
    assert_string_equal(b.data, "");
    assert_int_equal(ocisbx_buf_appends(&b, "hello"), 0);
    assert_int_equal(ocisbx_buf_append(&b, ", wor", 5), 0);
    assert_int_equal(ocisbx_buf_appendf(&b, "ld %d%s", 42, "!"), 0);
    assert_int_equal(b.len, strlen("hello, world 42!"));
    assert_string_equal(b.data, "hello, world 42!");
    assert_true(b.cap > b.len);

    /* Binary data with NULs keeps its length, and stays NUL-terminated. */
    ocisbx_buf_clear(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.data, "");
    assert_int_equal(ocisbx_buf_append(&b, "a\0b", 3), 0);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "a\0b", 4);

    /* Growth over many appends keeps every byte. */
    ocisbx_buf_clear(&b);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(ocisbx_buf_appendf(&b, "%04d", i % 10000), 0);
    assert_int_equal(b.len, 40000);
    assert_memory_equal(b.data + 4 * 1234, "1234", 4);
    assert_int_equal(b.data[b.len], '\0');

    assert_int_equal(ocisbx_buf_reserve(&b, 100000), 0);
    assert_true(b.cap >= b.len + 100001);
    assert_int_equal(ocisbx_buf_reserve(&b, SIZE_MAX), OCISBX_ENOMEM);
    assert_int_equal(ocisbx_error_code(ocisbx_error_last()), OCISBX_ENOMEM);

    char *s = ocisbx_buf_detach(&b);
    assert_non_null(s);
    assert_int_equal(strlen(s), 40000);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    ocisbx_free(s);

    /* Detaching an empty buffer gives "" (never NULL). */
    s = ocisbx_buf_detach(&b);
    assert_non_null(s);
    assert_string_equal(s, "");
    ocisbx_free(s);

    ocisbx_buf_init(&b);
    assert_int_equal(ocisbx_buf_appends(&b, "secret"), 0);
    ocisbx_buf_wipe_free(&b);
    assert_null(b.data);
    ocisbx_buf_wipe_free(&b); /* empty: no-op */
    ocisbx_buf_free(&b);
}

static void test_strings(void **state)
{
    (void)state;
    assert_null(ocisbx_strdup(NULL));
    assert_null(ocisbx_strndup(NULL, 3));
    char *s = ocisbx_strdup("abc");
    assert_string_equal(s, "abc");
    ocisbx_free(s);
    s = ocisbx_strndup("abcdef", 3);
    assert_string_equal(s, "abc");
    ocisbx_free(s);
    s = ocisbx_strndup("ab", 10);
    assert_string_equal(s, "ab");
    ocisbx_free(s);
    s = ocisbx_asprintf("%s-%d", "x", 7);
    assert_string_equal(s, "x-7");
    ocisbx_free(s);

    assert_int_equal(ocisbx_strcasecmp("Content-Type", "content-type"), 0);
    assert_true(ocisbx_strcasecmp("a", "b") < 0);
    assert_true(ocisbx_strcasecmp("b", "A") > 0);
    assert_true(ocisbx_strcasecmp("abc", "ab") > 0);
    assert_true(ocisbx_strcasecmp("", "a") < 0);
    assert_int_equal(ocisbx_strncasecmp("HOSTx", "hosty", 4), 0);
    assert_true(ocisbx_strncasecmp("HOSTx", "hosty", 5) != 0);
    /* Locale-free: only ASCII letters fold. */
    assert_true(ocisbx_strcasecmp("\xc3\x89", "\xc3\xa9") != 0);

    ocisbx_free_secret(NULL);
    ocisbx_free_secret(ocisbx_strdup("hunter2"));
    char w[8] = "abcdefg";
    ocisbx_wipe(w, 3);
    assert_memory_equal(w, "\0\0\0defg", 8);
    ocisbx_wipe(NULL, 5);
    ocisbx_free(NULL);
}

/* ---- errors ---- */

static void test_error_fail_and_accessors(void **state)
{
    (void)state;
    ocisbx_error_clear();
    const ocisbx_error *e = ocisbx_error_last();
    assert_non_null(e);
    assert_int_equal(ocisbx_error_code(e), OCISBX_OK);
    assert_string_equal(ocisbx_error_message(e), "no error");
    assert_int_equal(ocisbx_error_http_status(e), 0);
    assert_null(ocisbx_error_service_code(e));
    assert_null(ocisbx_error_request_id(e));

    assert_int_equal(ocisbx_fail(OCISBX_ECONFIG, "config file %s: profile [%s]: missing key %s", "/x/config",
                                 "DEFAULT", "tenancy"),
                     OCISBX_ECONFIG);
    e = ocisbx_error_last();
    assert_int_equal(ocisbx_error_code(e), OCISBX_ECONFIG);
    assert_string_equal(ocisbx_error_message(e), "config file /x/config: profile [DEFAULT]: missing key tenancy");
    assert_int_equal(ocisbx_error_http_status(e), 0);
    assert_null(ocisbx_error_service_code(e));
    assert_null(ocisbx_error_request_id(e));

    assert_int_equal(ocisbx_fail_http(OCISBX_ENOTFOUND, 404, "NotAuthorizedOrNotFound", "REQ123",
                                      "GET /sandboxes/%s: HTTP %d", "ocid1.x", 404),
                     OCISBX_ENOTFOUND);
    e = ocisbx_error_last();
    assert_int_equal(ocisbx_error_code(e), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_error_http_status(e), 404);
    assert_string_equal(ocisbx_error_service_code(e), "NotAuthorizedOrNotFound");
    assert_string_equal(ocisbx_error_request_id(e), "REQ123");
    assert_string_equal(ocisbx_error_message(e), "GET /sandboxes/ocid1.x: HTTP 404");

    /* A later plain failure forgets the HTTP details. */
    ocisbx_fail_http(OCISBX_ESERVICE, 500, NULL, NULL, "boom");
    assert_null(ocisbx_error_service_code(ocisbx_error_last()));
    assert_null(ocisbx_error_request_id(ocisbx_error_last()));
    ocisbx_fail(OCISBX_EIO, "disk");
    assert_int_equal(ocisbx_error_http_status(ocisbx_error_last()), 0);

    assert_int_equal(ocisbx_fail_nomem(), OCISBX_ENOMEM);
    assert_string_equal(ocisbx_error_message(ocisbx_error_last()), "out of memory");

    ocisbx_error_clear();
    assert_int_equal(ocisbx_error_code(ocisbx_error_last()), OCISBX_OK);

    /* NULL error objects are tolerated. */
    assert_int_equal(ocisbx_error_code(NULL), OCISBX_EINVAL);
    assert_non_null(ocisbx_error_message(NULL));
    assert_int_equal(ocisbx_error_http_status(NULL), 0);
    assert_null(ocisbx_error_service_code(NULL));
    assert_null(ocisbx_error_request_id(NULL));
}

static void test_error_wrap(void **state)
{
    (void)state;
    ocisbx_fail_http(OCISBX_ECONFLICT, 409, "IncorrectState", "R1", "sandbox is STOPPED");
    assert_int_equal(ocisbx_error_wrap("writing %s: ", "/workspace/a"), OCISBX_ECONFLICT);
    const ocisbx_error *e = ocisbx_error_last();
    assert_string_equal(ocisbx_error_message(e), "writing /workspace/a: sandbox is STOPPED");
    assert_int_equal(ocisbx_error_http_status(e), 409);
    assert_string_equal(ocisbx_error_service_code(e), "IncorrectState");
    assert_string_equal(ocisbx_error_request_id(e), "R1");
    ocisbx_error_wrap("outer: ");
    assert_string_equal(ocisbx_error_message(e), "outer: writing /workspace/a: sandbox is STOPPED");
    assert_int_equal(ocisbx_error_append(" (%s)", "deleted anyway"), OCISBX_ECONFLICT);
    assert_string_equal(ocisbx_error_message(e), "outer: writing /workspace/a: sandbox is STOPPED (deleted anyway)");
    assert_string_equal(ocisbx_error_request_id(e), "R1");

    /* Long messages are cut, never overflowed, and stay terminated. */
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ocisbx_fail(OCISBX_EIO, "%s", big);
    size_t n = strlen(ocisbx_error_message(ocisbx_error_last()));
    assert_true(n > 500 && n < sizeof big);
    ocisbx_error_wrap("%s", big);
    assert_true(strlen(ocisbx_error_message(ocisbx_error_last())) <= n);
    ocisbx_error_append("%s", big); /* appended past the cap: cut, terminated */
    assert_true(strlen(ocisbx_error_message(ocisbx_error_last())) <= n);
    ocisbx_fail(OCISBX_EIO, "tail");
    ocisbx_error_wrap("%s: ", big);
    assert_int_equal(ocisbx_error_code(ocisbx_error_last()), OCISBX_EIO);
    assert_true(strlen(ocisbx_error_message(ocisbx_error_last())) <= n);
}

static void test_error_save_restore(void **state)
{
    (void)state;
    ocisbx_fail_http(OCISBX_EAUTH, 401, "NotAuthenticated", "RID", "signature refused");
    ocisbx_error_saved *s = ocisbx_error_save();
    assert_non_null(s);
    ocisbx_fail(OCISBX_EIO, "cleanup failed too");
    ocisbx_error_restore(s);
    const ocisbx_error *e = ocisbx_error_last();
    assert_int_equal(ocisbx_error_code(e), OCISBX_EAUTH);
    assert_string_equal(ocisbx_error_message(e), "signature refused");
    assert_int_equal(ocisbx_error_http_status(e), 401);
    assert_string_equal(ocisbx_error_service_code(e), "NotAuthenticated");
    assert_string_equal(ocisbx_error_request_id(e), "RID");
    ocisbx_error_restore(NULL); /* no-op */
    assert_int_equal(ocisbx_error_code(ocisbx_error_last()), OCISBX_EAUTH);
}

static void *other_thread(void *arg)
{
    int *seen = arg;
    seen[0] = ocisbx_error_code(ocisbx_error_last());
    ocisbx_fail(OCISBX_ETIMEOUT, "thread's own");
    seen[1] = ocisbx_error_code(ocisbx_error_last());
    return NULL;
}

static void test_error_is_per_thread(void **state)
{
    (void)state;
    ocisbx_fail(OCISBX_EPARSE, "main thread");
    int seen[2] = {99, 99};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread, seen), 0);
    pthread_join(t, NULL);
    assert_int_equal(seen[0], OCISBX_OK);
    assert_int_equal(seen[1], OCISBX_ETIMEOUT);
    assert_int_equal(ocisbx_error_code(ocisbx_error_last()), OCISBX_EPARSE);
    assert_string_equal(ocisbx_error_message(ocisbx_error_last()), "main thread");
}

static void test_error_messages_are_redacted(void **state)
{
    (void)state;
    ocisbx_fail(OCISBX_EAUTH,
                "request had authorization: Signature version=\"1\",keyId=\"k\",signature=\"SECRETSIG\"");
    const char *m = ocisbx_error_message(ocisbx_error_last());
    assert_null(strstr(m, "SECRETSIG"));
    assert_non_null(strstr(m, "request had"));
    ocisbx_fail(OCISBX_EAUTH, "keyId ST$SECRETTOKEN123 refused");
    m = ocisbx_error_message(ocisbx_error_last());
    assert_null(strstr(m, "SECRETTOKEN123"));
    assert_non_null(strstr(m, "refused"));
    ocisbx_fail(OCISBX_EAUTH, "x");
    ocisbx_error_wrap("header signature=\"WRAPSECRET\": ");
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), "WRAPSECRET"));
}

static void test_status_from_http(void **state)
{
    (void)state;
    assert_int_equal(ocisbx_status_from_http(200), OCISBX_OK);
    assert_int_equal(ocisbx_status_from_http(400), OCISBX_EINVAL);
    assert_int_equal(ocisbx_status_from_http(401), OCISBX_EAUTH);
    assert_int_equal(ocisbx_status_from_http(403), OCISBX_EFORBIDDEN);
    assert_int_equal(ocisbx_status_from_http(404), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_status_from_http(409), OCISBX_ECONFLICT);
    assert_int_equal(ocisbx_status_from_http(412), OCISBX_ECONFLICT);
    assert_int_equal(ocisbx_status_from_http(413), OCISBX_ETOOLARGE);
    assert_int_equal(ocisbx_status_from_http(429), OCISBX_ERATELIMIT);
    assert_int_equal(ocisbx_status_from_http(408), OCISBX_ETIMEOUT);
    assert_int_equal(ocisbx_status_from_http(504), OCISBX_ETIMEOUT);
    assert_int_equal(ocisbx_status_from_http(500), OCISBX_ESERVICE);
    assert_int_equal(ocisbx_status_from_http(503), OCISBX_ESERVICE);
    assert_int_equal(ocisbx_status_from_http(418), OCISBX_ESERVICE);
}

static void test_strerror_every_code(void **state)
{
    (void)state;
    const char *names[-OCISBX_EBINARY + 1];
    for (int code = 0; code >= OCISBX_EBINARY; code--) {
        const char *s = ocisbx_strerror(code);
        assert_non_null(s);
        assert_true(strlen(s) > 0);
        if (strcmp(s, "unknown error") == 0)
            fail_msg("code %d has no name", code);
        names[-code] = s;
        for (int k = 0; k < -code; k++)
            if (strcmp(names[k], s) == 0)
                fail_msg("codes %d and %d share the name \"%s\"", -k, code, s);
    }
    assert_string_equal(ocisbx_strerror(OCISBX_OK), "success");
    assert_string_equal(ocisbx_strerror(OCISBX_ENOTFOUND), "not found");
    assert_string_equal(ocisbx_strerror(OCISBX_EBINARY - 1), "unknown error");
    assert_string_equal(ocisbx_strerror(1), "unknown error");
    assert_string_equal(ocisbx_strerror(INT_MIN), "unknown error");
}

/* ---- logging ---- */

struct log_capture {
    int count;
    int levels[32];
    char lines[32][2100];
};

static void capture(int level, const char *line, void *user_data)
{
    struct log_capture *c = user_data;
    if (c->count < 32) {
        c->levels[c->count] = level;
        snprintf(c->lines[c->count], sizeof c->lines[0], "%s", line);
    }
    c->count++;
}

static void test_log_levels(void **state)
{
    (void)state;
    static struct log_capture c;
    memset(&c, 0, sizeof c);
    ocisbx_set_log(capture, OCISBX_LOG_INFO, &c);
    assert_true(ocisbx_log_enabled(OCISBX_LOG_ERROR));
    assert_true(ocisbx_log_enabled(OCISBX_LOG_INFO));
    assert_false(ocisbx_log_enabled(OCISBX_LOG_DEBUG));
    ocisbx_log(OCISBX_LOG_ERROR, "e %d", 1);
    ocisbx_log(OCISBX_LOG_WARN, "w %s", "2");
    ocisbx_log(OCISBX_LOG_INFO, "i");
    ocisbx_log(OCISBX_LOG_DEBUG, "d (dropped)");
    assert_int_equal(c.count, 3);
    assert_int_equal(c.levels[0], OCISBX_LOG_ERROR);
    assert_string_equal(c.lines[0], "e 1");
    assert_int_equal(c.levels[1], OCISBX_LOG_WARN);
    assert_string_equal(c.lines[1], "w 2");
    assert_int_equal(c.levels[2], OCISBX_LOG_INFO);
    assert_string_equal(c.lines[2], "i");

    /* Failures are logged at debug level, with their code's name. */
    ocisbx_set_log(capture, OCISBX_LOG_DEBUG, &c);
    c.count = 0;
    ocisbx_fail(OCISBX_ENOTFOUND, "no such sandbox");
    assert_int_equal(c.count, 1);
    assert_int_equal(c.levels[0], OCISBX_LOG_DEBUG);
    assert_non_null(strstr(c.lines[0], "not found"));
    assert_non_null(strstr(c.lines[0], "no such sandbox"));

    /* A very long line is cut, not overflowed. */
    c.count = 0;
    char big[5000];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ocisbx_log(OCISBX_LOG_ERROR, "%s", big);
    assert_int_equal(c.count, 1);
    assert_true(strlen(c.lines[0]) > 1000);

    ocisbx_set_log(capture, OCISBX_LOG_ERROR, &c);
    c.count = 0;
    ocisbx_log(OCISBX_LOG_WARN, "dropped");
    assert_int_equal(c.count, 0);

    ocisbx_set_log(NULL, OCISBX_LOG_DEBUG, &c);
    assert_false(ocisbx_log_enabled(OCISBX_LOG_ERROR));
    ocisbx_log(OCISBX_LOG_ERROR, "nobody listens");
    ocisbx_fail(OCISBX_EIO, "nobody listens");
    assert_int_equal(c.count, 0);
}

static void test_log_redaction(void **state)
{
    (void)state;
    static struct log_capture c;
    memset(&c, 0, sizeof c);
    ocisbx_set_log(capture, OCISBX_LOG_DEBUG, &c);
    static const struct {
        const char *line;
        const char *secret;
        const char *kept;
    } cases[] = {
        {"GET /x authorization: Signature "
         "version=\"1\",keyId=\"ocid1.tenancy/ocid1.user/aa:bb\",algorithm=\"rsa-sha256\","
         "headers=\"date (request-target) host\",signature=\"c2VjcmV0c2lnbmF0dXJl\"",
         "c2VjcmV0c2lnbmF0dXJl", "GET /x"},
        {"Authorization: Signature keyId=\"k\",signature=\"TOPSECRET1\"", "TOPSECRET1", "Authorization"},
        {"AUTHORIZATION:Bearer BEARERSECRET", "BEARERSECRET", "AUTHORIZATION"},
        {"x-app-token: APPTOKENSECRET", "APPTOKENSECRET", "x-app-token"},
        {"X-App-Token: short", "short", "X-App-Token"},
        {"keyId=\"ST$eyJhbGciOiJSUzI1NiJ9.payload.sig\" used", "eyJhbGciOiJSUzI1NiJ9", " used"},
        {"token ST$abc, next", "abc", ", next"},
        {"parsed signature=\"SIGVALUE123456\" ok", "SIGVALUE123456", "\" ok"},
        {"two ST$FIRSTTOKEN and ST$SECONDTOKEN", "SECONDTOKEN", "two"},
        {"two ST$FIRSTTOKEN and ST$SECONDTOKEN", "FIRSTTOKEN", " and "},
        {"h1: a\nauthorization: Signature signature=\"MULTILINE\"\nh3: c", "MULTILINE", "h3: c"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        c.count = 0;
        ocisbx_log(OCISBX_LOG_INFO, "%s", cases[i].line);
        assert_int_equal(c.count, 1);
        if (strstr(c.lines[0], cases[i].secret))
            fail_msg("secret \"%s\" reached the callback: \"%s\"", cases[i].secret, c.lines[0]);
        if (!strstr(c.lines[0], cases[i].kept))
            fail_msg("redaction of \"%s\" lost \"%s\": \"%s\"", cases[i].line, cases[i].kept, c.lines[0]);
    }
    /* Secrets in failure messages do not reach the log either. */
    c.count = 0;
    ocisbx_fail(OCISBX_EAUTH, "refused ST$FAILTOKEN999 with signature=\"FAILSIG\"");
    assert_int_equal(c.count, 1);
    assert_null(strstr(c.lines[0], "FAILTOKEN999"));
    assert_null(strstr(c.lines[0], "FAILSIG"));
    /* ocisbx_log_redact on its own, in place. */
    char line[] = "authorization: Signature abc";
    ocisbx_log_redact(line);
    assert_null(strstr(line, "Signature abc"));
    ocisbx_set_log(NULL, 0, NULL);
}

/* ---- version and global init ---- */

static void test_version(void **state)
{
    (void)state;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", OCISBX_VERSION_MAJOR, OCISBX_VERSION_MINOR, OCISBX_VERSION_PATCH);
    assert_string_equal(ocisbx_version(), want);
}

static void *init_loop(void *arg)
{
    int *failures = arg;
    for (int i = 0; i < 200; i++) {
        if (ocisbx_global_init() != 0)
            __atomic_add_fetch(failures, 1, __ATOMIC_RELAXED);
        if (ocisbx_global_init() != 0)
            __atomic_add_fetch(failures, 1, __ATOMIC_RELAXED);
        ocisbx_global_cleanup();
        ocisbx_global_cleanup();
    }
    return NULL;
}

static void test_global_init_refcount(void **state)
{
    (void)state;
    /* Nested init/cleanup pairs; extra cleanups are harmless. */
    assert_int_equal(ocisbx_global_init(), 0);
    assert_int_equal(ocisbx_global_init(), 0);
    ocisbx_global_cleanup();
    assert_int_equal(ocisbx_global_ensure(), 0);
    ocisbx_global_cleanup();
    ocisbx_global_cleanup();
    ocisbx_global_cleanup();
    assert_int_equal(ocisbx_global_init(), 0);

    /* Many threads at once, while this thread holds one reference. */
    int failures = 0;
    pthread_t t[6];
    for (int i = 0; i < 6; i++)
        assert_int_equal(pthread_create(&t[i], NULL, init_loop, &failures), 0);
    for (int i = 0; i < 6; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(failures, 0);
    ocisbx_global_cleanup();
    assert_int_equal(ocisbx_global_ensure(), 0);
    assert_int_equal(ocisbx_global_ensure(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_error_fail_and_accessors),
        cmocka_unit_test(test_error_wrap),
        cmocka_unit_test(test_error_save_restore),
        cmocka_unit_test(test_error_is_per_thread),
        cmocka_unit_test(test_error_messages_are_redacted),
        cmocka_unit_test(test_status_from_http),
        cmocka_unit_test(test_strerror_every_code),
        cmocka_unit_test(test_log_levels),
        cmocka_unit_test(test_log_redaction),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_global_init_refcount),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
