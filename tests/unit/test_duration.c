/* ISO 8601 durations: accepted forms, every refusal with its message, the
 * canonical format, and parse(format(x)) == x. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ocisbx/util.h"

#define S 1000LL
#define MIN (60 * S)
#define H (60 * MIN)
#define D (24 * H)

static void test_parse_good(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t ms;
    } good[] = {
        {"PT1H30M", H + 30 * MIN},
        {"P2D", 2 * D},
        {"PT90S", 90 * S},
        {"PT0S", 0},
        {"P0D", 0},
        {"PT2M", 2 * MIN},
        {"PT30M", 30 * MIN},
        {"P1W", 7 * D},
        {"P3W", 21 * D},
        {"P1DT2H3M4S", D + 2 * H + 3 * MIN + 4 * S},
        {"P1DT4S", D + 4 * S},
        {"P1DT1M", D + MIN},
        {"PT1H1S", H + S},
        {"PT1.5S", 1500},
        {"PT1,5S", 1500},
        {"PT0.001S", 1},
        {"PT0.0019S", 1}, /* below a millisecond: truncated */
        {"PT0.123456789123S", 123},
        {"PT1.5H", H + 30 * MIN},
        {"PT1.25M", 75 * S},
        {"P1.5D", D + 12 * H},
        {"P0.5W", 3 * D + 12 * H},
        {"PT1H0.5M", H + 30 * S},
        {"P1DT0.5S", D + 500},
        {"PT36H", 36 * H},
        {"PT100000M", 100000 * MIN},
        {"PT0009S", 9 * S}, /* leading zeros are still digits */
        {"PT9223372036854775.807S", INT64_MAX},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t ms = -1;
        int rc = ocisbx_duration_parse(good[i].text, &ms);
        if (rc != 0)
            fail_msg("\"%s\" refused: %s", good[i].text, ocisbx_error_message(ocisbx_error_last()));
        if (ms != good[i].ms)
            fail_msg("\"%s\" gave %lld ms, want %lld", good[i].text, (long long)ms, (long long)good[i].ms);
    }
    int64_t ms;
    assert_int_equal(ocisbx_duration_parse("P106751991167DT7H12M55.807S", &ms), 0);
    assert_true(ms == INT64_MAX);
}

static void test_parse_bad(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *why;
    } bad[] = {
        {"", "must start with 'P'"},
        {"1H", "must start with 'P'"},
        {"pt1h", "must start with 'P'"},
        {"PT1h", "unknown unit 'h'"},
        {" PT1H", "must start with 'P'"},
        {"PT1H ", "0x20"},
        {"P", "empty"},
        {"PT", "empty"},
        {"P1DT", "empty"},
        {"P1Y", "years"},
        {"P1M", "months"},
        {"P1Y2M3D", "years"},
        {"-PT1S", "negative"},
        {"P-1D", "negative"},
        {"PT-5S", "negative"},
        {"PT+5S", "signs"},
        {"PT1H2H", "repeated"},
        {"P1D2D", "repeated"},
        {"PT1S2M", "out of order"},
        {"PT1M1H", "out of order"},
        {"P2D1W", "out of order"},
        {"P1W2D", "weeks cannot be combined"},
        {"P1WT1H", "weeks cannot be combined"},
        {"PT1X", "unknown unit 'X'"},
        {"PT1", "no unit"},
        {"P1", "no unit"},
        {"PTH", "without a number"},
        {"PT1.S", "no digits after the decimal mark"},
        {"PT.5S", "unexpected character"},
        {"PT1.5M30S", "fraction"},
        {"P1.5DT1H", "fraction"},
        {"PT1H", "ok"}, /* sentinel, skipped */
        {"PT1D", "unit 'D' after 'T'"},
        {"PT1W", "unit 'W' after 'T'"},
        {"P1H", "needs 'T'"},
        {"P1S", "needs 'T'"},
        {"PTT1H", "'T' appears twice"},
        {"P1DTT1H", "'T' appears twice"},
        {"PT1HT1M", "'T' appears twice"},
        {"PT99999999999999999999S", "too large"},
        {"PT9223372036854775808S", "too large"},
        {"PT9223372036854776S", "too large"},
        {"P106751991168D", "too large"},
        {"P106751991167DT7H12M55.808S", "too large"},
        {"P15250284452472W", "too large"},
        {"PT1H\xff", "0xff"},
        {"PT1\xffS", "0xff"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (strcmp(bad[i].why, "ok") == 0)
            continue;
        int64_t ms = 12345;
        int rc = ocisbx_duration_parse(bad[i].text, &ms);
        if (rc != OCISBX_EPARSE)
            fail_msg("\"%s\" gave %d (%lld ms), want OCISBX_EPARSE", bad[i].text, rc, (long long)ms);
        assert_int_equal(ms, 12345); /* untouched on failure */
        const char *msg = ocisbx_error_message(ocisbx_error_last());
        if (!strstr(msg, bad[i].why))
            fail_msg("\"%s\": message \"%s\" does not say \"%s\"", bad[i].text, msg, bad[i].why);
        char quoted[128];
        snprintf(quoted, sizeof quoted, "duration \"%s\"", bad[i].text);
        if (!strstr(msg, quoted))
            fail_msg("\"%s\": message \"%s\" does not name the input", bad[i].text, msg);
        assert_int_equal(ocisbx_error_code(ocisbx_error_last()), OCISBX_EPARSE);
    }
    /* A long input is named, cut short, in the message. */
    char longer[400];
    memset(longer, '1', sizeof longer);
    memcpy(longer, "PT", 2);
    longer[sizeof longer - 2] = 'X';
    longer[sizeof longer - 1] = '\0';
    int64_t ms;
    assert_int_equal(ocisbx_duration_parse(longer, &ms), OCISBX_EPARSE);
    assert_true(strlen(ocisbx_error_message(ocisbx_error_last())) < 300);

    assert_int_equal(ocisbx_duration_parse(NULL, &ms), OCISBX_EINVAL);
    assert_int_equal(ocisbx_duration_parse("PT1S", NULL), OCISBX_EINVAL);
}

/* Control bytes of the input are escaped in the message: one line. */
static void test_message_escapes_control_bytes(void **state)
{
    (void)state;
    static const char *const inputs[] = {"PT1H\n", "P\r1D", "PT1H\x1b[2J", "\nPT1H", "PT\x7f"};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        int64_t ms = 0;
        assert_int_equal(ocisbx_duration_parse(inputs[i], &ms), OCISBX_EPARSE);
        const char *msg = ocisbx_error_message(ocisbx_error_last());
        for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
            if (*p < 0x20 || *p == 0x7f)
                fail_msg("input %zu: raw control byte 0x%02x in message: %s", i, *p, msg);
    }
    int64_t ms = 0;
    assert_int_equal(ocisbx_duration_parse("PT1H\n", &ms), OCISBX_EPARSE);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "\"PT1H\\x0a\""));
}

static void test_format_canonical(void **state)
{
    (void)state;
    static const struct {
        int64_t ms;
        const char *text;
    } cases[] = {
        {0, "PT0S"},
        {1, "PT0.001S"},
        {10, "PT0.01S"},
        {100, "PT0.1S"},
        {1500, "PT1.5S"},
        {1234, "PT1.234S"},
        {90 * S, "PT1M30S"},
        {H + 30 * MIN, "PT1H30M"},
        {2 * D, "P2D"},
        {2 * D + 3 * H, "P2DT3H"},
        {7 * D, "P7D"},
        {D + 1, "P1DT0.001S"},
        {D + 2 * H + 3 * MIN + 4 * S, "P1DT2H3M4S"},
        {H + S, "PT1H1S"},
        {36 * H, "P1DT12H"},
        {INT64_MAX, "P106751991167DT7H12M55.807S"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = NULL;
        assert_int_equal(ocisbx_duration_format(cases[i].ms, &s), 0);
        assert_string_equal(s, cases[i].text);
        int64_t back = -1;
        assert_int_equal(ocisbx_duration_parse(s, &back), 0);
        assert_true(back == cases[i].ms);
        ocisbx_free(s);
    }
    char *s = NULL;
    assert_int_equal(ocisbx_duration_format(-1, &s), OCISBX_EINVAL);
    assert_null(s);
    assert_int_equal(ocisbx_duration_format(1, NULL), OCISBX_EINVAL);
}

static void test_round_trip_many(void **state)
{
    (void)state;
    /* A spread of values, dense near the unit boundaries. */
    int64_t v = 0;
    for (int i = 0; i < 20000; i++) {
        char *s = NULL;
        assert_int_equal(ocisbx_duration_format(v, &s), 0);
        int64_t back = -1;
        if (ocisbx_duration_parse(s, &back) != 0 || back != v)
            fail_msg("%lld -> \"%s\" -> %lld", (long long)v, s, (long long)back);
        ocisbx_free(s);
        if (v > INT64_MAX - v / 97 - 7)
            break;
        v = v < 100000 ? v + 7 : v + v / 97 + 1;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_message_escapes_control_bytes),
        cmocka_unit_test(test_format_canonical),
        cmocka_unit_test(test_round_trip_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
