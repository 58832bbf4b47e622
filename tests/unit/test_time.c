/* RFC 1123 (English whatever the locale and TZ) and RFC 3339 times, and the
 * clocks. gmtime_r is the oracle for the calendar (it ignores the locale). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "ocisbx/util.h"

static void assert_parse_error(int rc, const char *text, const char *why)
{
    if (rc != OCISBX_EPARSE)
        fail_msg("\"%s\" gave %d, want OCISBX_EPARSE", text, rc);
    const char *msg = ocisbx_error_message(ocisbx_error_last());
    if (!strstr(msg, why))
        fail_msg("\"%s\": message \"%s\" does not say \"%s\"", text, msg, why);
    char head[128];
    snprintf(head, sizeof head, "\"%.40s", text);
    if (!strstr(msg, head))
        fail_msg("\"%s\": message \"%s\" does not name the input", text, msg);
}

/* ---- RFC 1123 ---- */

static void test_rfc1123_known(void **state)
{
    (void)state;
    char out[OCISBX_RFC1123_LEN + 1];
    static const struct {
        time_t t;
        const char *text;
    } known[] = {
        {1388957500, "Sun, 05 Jan 2014 21:31:40 GMT"},   {0, "Thu, 01 Jan 1970 00:00:00 GMT"},
        {-1, "Wed, 31 Dec 1969 23:59:59 GMT"},           {1709208000, "Thu, 29 Feb 2024 12:00:00 GMT"},
        {951782400, "Tue, 29 Feb 2000 00:00:00 GMT"},    {253402300799, "Fri, 31 Dec 9999 23:59:59 GMT"},
        {-62135596800, "Mon, 01 Jan 0001 00:00:00 GMT"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        assert_int_equal(ocisbx_time_format_rfc1123(known[i].t, out), 0);
        assert_string_equal(out, known[i].text);
        assert_int_equal(strlen(out), OCISBX_RFC1123_LEN);
        time_t back = 42;
        assert_int_equal(ocisbx_time_parse_rfc1123(known[i].text, &back), 0);
        assert_true(back == known[i].t);
    }
    assert_int_equal(ocisbx_time_format_rfc1123((time_t)253402300800, out), OCISBX_EINVAL);
    assert_int_equal(ocisbx_time_format_rfc1123((time_t)-62167219201, out), OCISBX_EINVAL);
    assert_int_equal(ocisbx_time_format_rfc1123((time_t)INT64_MAX, out), OCISBX_EINVAL);
    assert_int_equal(ocisbx_time_format_rfc1123((time_t)INT64_MIN, out), OCISBX_EINVAL);
    assert_int_equal(ocisbx_time_format_rfc1123(0, NULL), OCISBX_EINVAL);
}

static const char *const en_days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const en_months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* Compares with gmtime_r over a wide spread of times (1901..2106). */
static void check_against_gmtime(void)
{
    char out[OCISBX_RFC1123_LEN + 1], want[64];
    for (int64_t t = -2147483648LL; t < 4294967296LL; t += 7777777) {
        struct tm tm;
        time_t tt = (time_t)t;
        assert_non_null(gmtime_r(&tt, &tm));
        snprintf(want, sizeof want, "%s, %02d %s %04d %02d:%02d:%02d GMT", en_days[tm.tm_wday], tm.tm_mday,
                 en_months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
        assert_int_equal(ocisbx_time_format_rfc1123(tt, out), 0);
        assert_string_equal(out, want);
        time_t back;
        assert_int_equal(ocisbx_time_parse_rfc1123(out, &back), 0);
        assert_true(back == tt);
    }
}

static void test_rfc1123_matches_gmtime(void **state)
{
    (void)state;
    check_against_gmtime();
}

static void test_rfc1123_english_in_any_locale(void **state)
{
    (void)state;
    /* Locales may be absent on this machine: use the first one that exists. */
    static const char *const candidates[] = {"de_DE.UTF-8", "fr_FR.UTF-8", "ja_JP.UTF-8", "ru_RU.UTF-8",
                                             "es_ES.UTF-8", "C.UTF-8",     "C.utf8"};
    const char *used = NULL;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !used; i++)
        if (setlocale(LC_ALL, candidates[i]))
            used = candidates[i];
    print_message("locale used: %s\n", used ? used : "(none; default C)");
    /* Another time zone must not move a GMT date either. */
    const char *old_tz = getenv("TZ");
    char *saved_tz = old_tz ? strdup(old_tz) : NULL;
    setenv("TZ", "America/St_Johns", 1); /* a half-hour offset */
    tzset();

    char out[OCISBX_RFC1123_LEN + 1];
    assert_int_equal(ocisbx_time_format_rfc1123(1388957500, out), 0);
    assert_string_equal(out, "Sun, 05 Jan 2014 21:31:40 GMT");
    time_t back;
    assert_int_equal(ocisbx_time_parse_rfc1123("Thu, 05 Jan 2014 21:31:40 GMT", &back), 0);
    assert_true(back == 1388957500);
    /* Every month and day name. */
    for (int m = 0; m < 12; m++) {
        time_t t = 1388957500 + (time_t)m * 31 * 86400 + (time_t)m * 86400 / 3;
        assert_int_equal(ocisbx_time_format_rfc1123(t, out), 0);
        struct tm tm;
        assert_non_null(gmtime_r(&t, &tm));
        assert_memory_equal(out, en_days[tm.tm_wday], 3);
        assert_memory_equal(out + 8, en_months[tm.tm_mon], 3);
    }
    check_against_gmtime();

    if (saved_tz)
        setenv("TZ", saved_tz, 1);
    else
        unsetenv("TZ");
    free(saved_tz);
    tzset();
    setlocale(LC_ALL, "C");
}

/* The signing spec's date names the wrong day (5 Jan 2014 was a Sunday); it
 * must still parse, so the day name is not checked against the date. */
static void test_rfc1123_spec_date_with_wrong_day_name(void **state)
{
    (void)state;
    time_t t = 0;
    assert_int_equal(ocisbx_time_parse_rfc1123("Thu, 05 Jan 2014 21:31:40 GMT", &t), 0);
    assert_true(t == 1388957500);
    assert_int_equal(ocisbx_time_parse_rfc1123("Mon, 05 Jan 2014 21:31:40 GMT", &t), 0);
    assert_true(t == 1388957500);
}

static void test_rfc1123_bad(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *why;
    } bad[] = {
        {"", "day name"},
        {"Thr, 05 Jan 2014 21:31:40 GMT", "day name"},
        {"thu, 05 Jan 2014 21:31:40 GMT", "day name"},
        {"Do, 05 Jan 2014 21:31:40 GMT", "day name"},
        {"Thursday, 05 Jan 2014 21:31:40 GMT", "\", \""},
        {"Thu 05 Jan 2014 21:31:40 GMT", "\", \""},
        {"Thu, 5 Jan 2014 21:31:40 GMT", "two-digit day"},
        {"Thu, 05 jan 2014 21:31:40 GMT", "month"},
        {"Thu, 05 Jän 2014 21:31:40 GMT", "month"},
        {"Thu, 05 January 2014 21:31:40 GMT", "four-digit year"},
        {"Thu, 05 Jan 14 21:31:40 GMT", "four-digit year"},
        {"Thu, 05 Jan 2014 21:31 GMT", "HH:MM:SS"},
        {"Thu, 05 Jan 2014 21-31-40 GMT", "HH:MM:SS"},
        {"Thu, 05 Jan 2014 21:31:40 UTC", "GMT"},
        {"Thu, 05 Jan 2014 21:31:40 +0000", "GMT"},
        {"Thu, 05 Jan 2014 21:31:40", "GMT"},
        {"Thu, 05 Jan 2014 21:31:40 GMT ", "GMT"},
        {"Thu, 05 Jan 2014 21:31:40 GMTX", "GMT"},
        {"Thu, 32 Jan 2014 21:31:40 GMT", "does not exist"},
        {"Thu, 00 Jan 2014 21:31:40 GMT", "does not exist"},
        {"Sat, 29 Feb 2014 21:31:40 GMT", "does not exist"},
        {"Thu, 05 Jan 2014 24:00:00 GMT", "out of range"},
        {"Thu, 05 Jan 2014 21:60:00 GMT", "out of range"},
        {"Thu, 05 Jan 2014 21:31:61 GMT", "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        time_t t = 7;
        assert_parse_error(ocisbx_time_parse_rfc1123(bad[i].text, &t), bad[i].text, bad[i].why);
        assert_true(t == 7);
    }
    time_t t;
    assert_int_equal(ocisbx_time_parse_rfc1123(NULL, &t), OCISBX_EINVAL);
    assert_int_equal(ocisbx_time_parse_rfc1123("Thu, 05 Jan 2014 21:31:40 GMT", NULL), OCISBX_EINVAL);
}

/* ---- RFC 3339 ---- */

static void test_rfc3339_format(void **state)
{
    (void)state;
    char out[OCISBX_RFC3339_LEN + 1];
    static const struct {
        int64_t ms;
        const char *text;
    } known[] = {
        {0, "1970-01-01T00:00:00.000Z"},
        {-1, "1969-12-31T23:59:59.999Z"},
        {1796011341123LL, "2026-11-30T04:02:21.123Z"},
        {1388957500000LL, "2014-01-05T21:31:40.000Z"},
        {1709208000007LL, "2024-02-29T12:00:00.007Z"},
        {253402300799999LL, "9999-12-31T23:59:59.999Z"},
        {-62167219200000LL, "0000-01-01T00:00:00.000Z"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        assert_int_equal(ocisbx_time_format_rfc3339(known[i].ms, out), 0);
        assert_string_equal(out, known[i].text);
        assert_int_equal(strlen(out), OCISBX_RFC3339_LEN);
        int64_t back = 42;
        assert_int_equal(ocisbx_time_parse_rfc3339(out, &back), 0);
        assert_true(back == known[i].ms);
    }
    assert_int_equal(ocisbx_time_format_rfc3339(253402300800000LL, out), OCISBX_EINVAL);
    assert_int_equal(ocisbx_time_format_rfc3339(-62167219200001LL, out), OCISBX_EINVAL);
    assert_int_equal(ocisbx_time_format_rfc3339(INT64_MAX, out), OCISBX_EINVAL);
    assert_int_equal(ocisbx_time_format_rfc3339(INT64_MIN, out), OCISBX_EINVAL);
    assert_int_equal(ocisbx_time_format_rfc3339(0, NULL), OCISBX_EINVAL);
    /* Round trip over a spread, against gmtime_r. */
    for (int64_t ms = -2208988800000LL; ms < 4102444800000LL; ms += 98765432109LL / 100) {
        assert_int_equal(ocisbx_time_format_rfc3339(ms, out), 0);
        int64_t back;
        assert_int_equal(ocisbx_time_parse_rfc3339(out, &back), 0);
        assert_true(back == ms);
        time_t secs = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
        struct tm tm;
        assert_non_null(gmtime_r(&secs, &tm));
        char want[64];
        snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                 tm.tm_hour, tm.tm_min, tm.tm_sec);
        assert_memory_equal(out, want, 19);
    }
}

static void test_rfc3339_parse_good(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t ms;
    } good[] = {
        {"2026-11-30T04:02:21.123Z", 1796011341123LL},
        {"2026-11-30T04:02:21Z", 1796011341000LL},
        {"2026-11-30t04:02:21z", 1796011341000LL},
        {"2026-11-30T04:02:21.1Z", 1796011341100LL},
        {"2026-11-30T04:02:21.12Z", 1796011341120LL},
        {"2026-11-30T04:02:21.123456789Z", 1796011341123LL},
        {"2026-11-30T04:02:21.000000Z", 1796011341000LL},
        {"2026-11-30T09:32:21.123+05:30", 1796011341123LL},
        {"2026-11-29T20:02:21.123-08:00", 1796011341123LL},
        {"2026-11-30T04:02:21+00:00", 1796011341000LL},
        {"2026-11-30T04:02:21-00:00", 1796011341000LL},
        {"2026-11-30T23:59:00+23:59", 1795996800000LL},
        {"2024-02-29T00:00:00Z", 1709164800000LL},
        {"2016-12-31T23:59:60Z", 1483228800000LL}, /* leap second: counted as the next second */
        {"1970-01-01T00:00:00Z", 0},
        {"1969-12-31T23:59:59.999Z", -1},
        {"2030-01-01T00:00:00Z", 1893456000000LL},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t ms = -42;
        int rc = ocisbx_time_parse_rfc3339(good[i].text, &ms);
        if (rc != 0)
            fail_msg("\"%s\" refused: %s", good[i].text, ocisbx_error_message(ocisbx_error_last()));
        if (ms != good[i].ms)
            fail_msg("\"%s\" gave %lld, want %lld", good[i].text, (long long)ms, (long long)good[i].ms);
    }
}

static void test_rfc3339_parse_bad(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *why;
    } bad[] = {
        {"", "YYYY-MM-DD"},
        {"26-11-30T04:02:21Z", "YYYY-MM-DD"},
        {"2026/11/30T04:02:21Z", "YYYY-MM-DD"},
        {"2026-11-30", "'T'"},
        {"2026-11-30 04:02:21Z", "'T'"},
        {"2026-11-30T04:02Z", "HH:MM:SS"},
        {"2026-11-30T4:02:21Z", "HH:MM:SS"},
        {"2026-11-30T04:02:21", "'Z' or an offset"},
        {"2026-11-30T04:02:21 Z", "'Z' or an offset"},
        {"2026-11-30T04:02:21.Z", "no digits after the decimal point"},
        {"2026-11-30T04:02:21+0530", "+hh:mm"},
        {"2026-11-30T04:02:21+05", "+hh:mm"},
        {"2026-11-30T04:02:21+24:00", "offset out of range"},
        {"2026-11-30T04:02:21+05:60", "offset out of range"},
        {"2026-11-30T04:02:21ZZ", "after the time"},
        {"2026-11-30T04:02:21Z ", "after the time"},
        {"2026-13-01T00:00:00Z", "month 13"},
        {"2026-00-01T00:00:00Z", "month 0"},
        {"2026-02-29T00:00:00Z", "does not exist"},
        {"2026-04-31T00:00:00Z", "does not exist"},
        {"2026-01-00T00:00:00Z", "does not exist"},
        {"2026-11-30T24:00:00Z", "out of range"},
        {"2026-11-30T23:60:00Z", "out of range"},
        {"2026-11-30T23:59:61Z", "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ms = 7;
        assert_parse_error(ocisbx_time_parse_rfc3339(bad[i].text, &ms), bad[i].text, bad[i].why);
        assert_true(ms == 7);
    }
    int64_t ms;
    assert_int_equal(ocisbx_time_parse_rfc3339(NULL, &ms), OCISBX_EINVAL);
    assert_int_equal(ocisbx_time_parse_rfc3339("2026-11-30T04:02:21Z", NULL), OCISBX_EINVAL);
}

static void test_clocks(void **state)
{
    (void)state;
    int64_t now = ocisbx_time_now_ms();
    assert_true(now > 1700000000000LL); /* after Nov 2023 */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t sys = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    assert_true(sys >= now);
    int64_t a = ocisbx_time_monotonic_ms();
    int64_t b = ocisbx_time_monotonic_ms();
    assert_true(a >= 0);
    assert_true(b >= a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc1123_known),
        cmocka_unit_test(test_rfc1123_matches_gmtime),
        cmocka_unit_test(test_rfc1123_english_in_any_locale),
        cmocka_unit_test(test_rfc1123_spec_date_with_wrong_day_name),
        cmocka_unit_test(test_rfc1123_bad),
        cmocka_unit_test(test_rfc3339_format),
        cmocka_unit_test(test_rfc3339_parse_good),
        cmocka_unit_test(test_rfc3339_parse_bad),
        cmocka_unit_test(test_clocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
