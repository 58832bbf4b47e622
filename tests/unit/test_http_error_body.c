/* The error-body parser: {"code","message"}, tolerant of anything else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/http_internal.h"

static void parse(const char *body, char **code, char **msg)
{
    assert_int_equal(ocisbx_http_parse_error_body(body, body ? strlen(body) : 0, code, msg), 0);
}

static void test_good(void **state)
{
    (void)state;
    char *code, *msg;
    parse("{\"code\":\"NotAuthorizedOrNotFound\",\"message\":\"not found\",\"extra\":1}", &code, &msg);
    assert_string_equal(code, "NotAuthorizedOrNotFound");
    assert_string_equal(msg, "not found");
    free(code);
    free(msg);
    parse("  {\"message\":\"only a message\"}\n", &code, &msg);
    assert_null(code);
    assert_string_equal(msg, "only a message");
    free(msg);
}

static void test_garbage(void **state)
{
    (void)state;
    static const char *const bad[] = {"",
                                      "<html>502</html>",
                                      "[\"code\"]",
                                      "\"code\"",
                                      "{\"code\":",
                                      "{\"code\":5,\"message\":{}}",
                                      "{\"code\":\"\"}",
                                      "null",
                                      NULL};
    for (const char *const *p = bad; *p; p++) {
        char *code = (char *)1, *msg = (char *)1;
        parse(*p, &code, &msg);
        assert_null(code);
        assert_null(msg);
    }
    char *code, *msg;
    assert_int_equal(ocisbx_http_parse_error_body(NULL, 0, &code, &msg), 0);
    assert_null(code);
    /* Not NUL-terminated: the length is honoured. */
    const char buf[] = "{\"code\":\"A\"}GARBAGE";
    assert_int_equal(ocisbx_http_parse_error_body(buf, 12, &code, &msg), 0);
    assert_string_equal(code, "A");
    free(code);
}

static void test_one_line_and_bounded(void **state)
{
    (void)state;
    char *code, *msg;
    parse("{\"code\":\"Bad\\nCode\",\"message\":\"a\\r\\nb\\tc\"}", &code, &msg);
    assert_string_equal(code, "Bad Code");
    assert_string_equal(msg, "a  b c");
    free(code);
    free(msg);
    char big[3000];
    strcpy(big, "{\"message\":\"");
    size_t n = strlen(big);
    memset(big + n, 'm', 2000);
    strcpy(big + n + 2000, "\"}");
    parse(big, &code, &msg);
    assert_int_equal(strlen(msg), 512);
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_one_line_and_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
