/* URL pieces and the plain-http rule of the transport. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/http_internal.h"

static void test_parse_good(void **state)
{
    (void)state;
    ocisbx_url u;
    assert_int_equal(ocisbx_url_parse("https://Host.Example.com/a?b=c", &u), 0);
    assert_true(u.https);
    assert_string_equal(u.authority, "Host.Example.com");
    assert_string_equal(u.host, "Host.Example.com");
    assert_int_equal(u.port, 443);
    ocisbx_url_clear(&u);
    assert_int_equal(ocisbx_url_parse("http://127.0.0.1:8443", &u), 0);
    assert_false(u.https);
    assert_string_equal(u.authority, "127.0.0.1:8443");
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 8443);
    ocisbx_url_clear(&u);
    assert_int_equal(ocisbx_url_parse("HTTPS://user:pw@[::1]:9000/x#frag", &u), 0);
    assert_string_equal(u.authority, "[::1]:9000"); /* userinfo never goes into Host */
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 9000);
    assert_true(u.has_userinfo);
    assert_true(u.has_fragment);
    ocisbx_url_clear(&u);
    assert_int_equal(ocisbx_url_parse("https://h:443/", &u), 0);
    assert_string_equal(u.authority, "h:443"); /* as written: signed and sent so */
    ocisbx_url_clear(&u);
}

static void test_parse_bad(void **state)
{
    (void)state;
    static const char *const bad[] = {"",
                                      "ftp://x/",
                                      "/relative/path",
                                      "https://",
                                      "https:///path",
                                      "https://h:/x",
                                      "https://h:abc/",
                                      "https://h:70000/",
                                      "https://h:0/",
                                      "https://[::1/x",
                                      "https://h/a b",
                                      "https://h/\r\nx: y",
                                      "https://@/x",
                                      NULL};
    for (const char *const *p = bad; *p; p++) {
        ocisbx_url u;
        int rc = ocisbx_url_parse(*p, &u);
        if (rc != OCISBX_EINVAL)
            fail_msg("accepted %s", *p);
        assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "URL"));
    }
    ocisbx_url u;
    assert_int_equal(ocisbx_url_parse(NULL, &u), OCISBX_EINVAL);
    /* A password never reaches the message. */
    assert_int_equal(ocisbx_url_parse("https://user:hunter2@h:abc/x", &u), OCISBX_EINVAL);
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), "hunter2"));
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "https://***@h:abc/x"));
}

static void test_normalize(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } good[] = {
        {"https://h/\xc3\xa9?x=\xc3\xa9", "https://h/%C3%A9?x=%C3%A9"},
        {"https://h/a b?c d", "https://h/a%20b?c%20d"},
        {"https://h/a/../b/./c", "https://h/a/../b/./c"},
        {"https://h/x?", "https://h/x"},
        {"https://h?", "https://h"},
        {"https://h/x??", "https://h/x??"},
        {"https://h/%41%2f?%7E", "https://h/%41%2f?%7E"},
        {"https://h/\t\x7f", "https://h/%09%7F"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char *out = NULL;
        assert_int_equal(ocisbx_url_normalize(good[i].in, &out), 0);
        assert_string_equal(out, good[i].out);
        free(out);
    }
    static const char *const bad[] = {"https://h/%zz",
                                      "https://h/%4",
                                      "https://h/a%",
                                      "https://h/?a=%g0",
                                      "https://h\xc3\xa9/",
                                      "https://h o/",
                                      ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out = NULL;
        assert_int_equal(ocisbx_url_normalize(bad[i], &out), OCISBX_EINVAL);
        assert_null(out);
        /* one line, whatever the input held */
        const char *msg = ocisbx_error_message(ocisbx_error_last());
        for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
            assert_true(*p >= 0x20 && *p < 0x7f);
    }
    char *out = NULL;
    assert_int_equal(ocisbx_url_normalize("https://h/%zz", &out), OCISBX_EINVAL);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "malformed percent escape"));
    /* other request inputs quoted in messages: one line too */
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_request_new("G\nT", "https://h/", &r), OCISBX_EINVAL);
    assert_null(strchr(ocisbx_error_message(ocisbx_error_last()), '\n'));
    assert_int_equal(ocisbx_http_request_new("GET", "https://h/\n", &r), 0);
    assert_string_equal(ocisbx_http_request_url(r), "https://h/%0A");
    assert_int_equal(ocisbx_http_request_add_header(r, "x\ny", "1"), OCISBX_EINVAL);
    assert_null(strchr(ocisbx_error_message(ocisbx_error_last()), '\n'));
    assert_int_equal(ocisbx_http_request_set_request_id(r, "a\rb"), OCISBX_EINVAL);
    assert_null(strchr(ocisbx_error_message(ocisbx_error_last()), '\r'));
    ocisbx_http_request_free(r);
}

static void test_loopback(void **state)
{
    (void)state;
    assert_true(ocisbx_host_is_loopback("127.0.0.1"));
    assert_true(ocisbx_host_is_loopback("127.255.3.4"));
    assert_true(ocisbx_host_is_loopback("::1"));
    assert_true(ocisbx_host_is_loopback("localhost"));
    assert_true(ocisbx_host_is_loopback("LocalHost"));
    assert_true(ocisbx_host_is_loopback("emu.localhost"));
    assert_false(ocisbx_host_is_loopback("128.0.0.1"));
    assert_false(ocisbx_host_is_loopback("127.0.0.1.example.com"));
    assert_false(ocisbx_host_is_loopback("localhost.example.com"));
    assert_false(ocisbx_host_is_loopback("10.0.0.1"));
    assert_false(ocisbx_host_is_loopback("::2"));
    assert_false(ocisbx_host_is_loopback("0.0.0.0"));
    assert_false(ocisbx_host_is_loopback(""));
    assert_false(ocisbx_host_is_loopback(NULL));
}

static void test_scheme_rule(void **state)
{
    (void)state;
    ocisbx_url u;
    assert_int_equal(ocisbx_url_parse("https://example.com/", &u), 0);
    assert_int_equal(ocisbx_url_check_scheme(&u, "https://example.com/", false), 0);
    ocisbx_url_clear(&u);
    assert_int_equal(ocisbx_url_parse("http://example.com/", &u), 0);
    assert_int_equal(ocisbx_url_check_scheme(&u, "http://example.com/", true), OCISBX_EINVAL);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "example.com"));
    ocisbx_url_clear(&u);
    assert_int_equal(ocisbx_url_parse("http://localhost:8080/", &u), 0);
    assert_int_equal(ocisbx_url_check_scheme(&u, "http://localhost:8080/", false), OCISBX_EINVAL);
    assert_int_equal(ocisbx_url_check_scheme(&u, "http://localhost:8080/", true), 0);
    ocisbx_url_clear(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good), cmocka_unit_test(test_parse_bad),   cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_loopback),   cmocka_unit_test(test_scheme_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
