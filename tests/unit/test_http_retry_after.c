/* retry-after as a wait: seconds or an HTTP date, capped at 60 s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/http_internal.h"

static void test_seconds(void **state)
{
    (void)state;
    assert_int_equal(ocisbx_http_retry_after_ms("0", 0), 0);
    assert_int_equal(ocisbx_http_retry_after_ms("1", 0), 1000);
    assert_int_equal(ocisbx_http_retry_after_ms("1.5", 0), 1500);
    assert_int_equal(ocisbx_http_retry_after_ms("59", 0), 59000);
    assert_int_equal(ocisbx_http_retry_after_ms("60", 0), 60000);
}

static void test_capped(void **state)
{
    (void)state;
    assert_int_equal(OCISBX_HTTP_RETRY_AFTER_CAP_MS, 60000);
    assert_int_equal(ocisbx_http_retry_after_ms("61", 0), 60000);
    assert_int_equal(ocisbx_http_retry_after_ms("86399", 0), 60000);
    assert_int_equal(ocisbx_http_retry_after_ms("86400", 0), 60000);
    assert_int_equal(ocisbx_http_retry_after_ms("1e300", 0), 60000); /* no overflow */
}

static void test_dates(void **state)
{
    (void)state;
    /* Thu, 05 Jan 2014 21:31:40 GMT = 1388957500 */
    const int64_t at = 1388957500LL * 1000;
    assert_int_equal(ocisbx_http_retry_after_ms("Thu, 05 Jan 2014 21:31:40 GMT", at - 5000), 5000);
    assert_int_equal(ocisbx_http_retry_after_ms("Thu, 05 Jan 2014 21:31:40 GMT", at + 5000), 0); /* past */
    assert_int_equal(ocisbx_http_retry_after_ms("Thu, 05 Jan 2014 21:31:40 GMT", at - 7200000), 60000);
}

static void test_malformed(void **state)
{
    (void)state;
    assert_int_equal(ocisbx_http_retry_after_ms(NULL, 0), -1);
    assert_int_equal(ocisbx_http_retry_after_ms("", 0), -1);
    assert_int_equal(ocisbx_http_retry_after_ms("soon", 0), -1);
    assert_int_equal(ocisbx_http_retry_after_ms("-1", 0), -1);
    assert_int_equal(ocisbx_http_retry_after_ms("5s", 0), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seconds),
        cmocka_unit_test(test_capped),
        cmocka_unit_test(test_dates),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
