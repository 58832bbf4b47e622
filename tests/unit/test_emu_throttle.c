/* The emulator's token buckets (src/emulator/throttle.h): a burst of
 * max(1, rate), refill at rate per second, retry-after rounded up to whole
 * seconds, per user, creates on top of requests, nothing taken when refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "emulator/throttle.h"

static void test_bucket_burst_and_refill(void **state)
{
    (void)state;
    emu_bucket b;
    memset(&b, 0, sizeof b);
    /* 4 per second: a burst of 4, then one every 250 ms */
    for (int i = 0; i < 4; i++)
        assert_int_equal(emu_bucket_take(&b, 4.0, 1000), 0);
    int64_t w = emu_bucket_take(&b, 4.0, 1000);
    assert_true(w >= 250 && w <= 251);
    assert_true(emu_bucket_take(&b, 4.0, 1100) > 0); /* 0.4 token */
    assert_int_equal(emu_bucket_take(&b, 4.0, 1251), 0);
    /* a long pause refills only up to the burst */
    for (int i = 0; i < 4; i++)
        assert_int_equal(emu_bucket_take(&b, 4.0, 100000), 0);
    assert_true(emu_bucket_take(&b, 4.0, 100000) > 0);
}

static void test_bucket_slow_rate_and_none(void **state)
{
    (void)state;
    emu_bucket b;
    memset(&b, 0, sizeof b);
    /* 0.2 per second: one now, the next 5 s later */
    assert_int_equal(emu_bucket_take(&b, 0.2, 50), 0);
    int64_t w = emu_bucket_take(&b, 0.2, 50);
    assert_true(w >= 5000 && w <= 5001);
    assert_true(emu_bucket_take(&b, 0.2, 4000) > 0);
    assert_int_equal(emu_bucket_take(&b, 0.2, 5051), 0);
    /* rate 0: no limit */
    memset(&b, 0, sizeof b);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(emu_bucket_take(&b, 0, 1), 0);
}

static void test_throttle_per_user_and_kind(void **state)
{
    (void)state;
    emu_throttle *t = emu_throttle_new(2);
    assert_non_null(t);
    const char *what = NULL;
    /* requests 10/s, creates 0.5/s */
    assert_int_equal(emu_throttle_check(t, 10, 0.5, 0, true, 1000, &what), 0);
    int ra = emu_throttle_check(t, 10, 0.5, 0, true, 1000, &what);
    assert_int_equal(ra, 2); /* 2000 ms, in whole seconds */
    assert_string_equal(what, "limits.creates_per_second");
    /* the refused create took no request token: 9 more requests pass, the 10th of the second is refused */
    for (int i = 0; i < 9; i++)
        assert_int_equal(emu_throttle_check(t, 10, 0.5, 0, false, 1000, &what), 0);
    what = NULL;
    ra = emu_throttle_check(t, 10, 0.5, 0, false, 1000, &what);
    assert_int_equal(ra, 1); /* 100 ms rounds up to 1 s */
    assert_string_equal(what, "limits.requests_per_second");
    /* the other user has buckets of its own */
    assert_int_equal(emu_throttle_check(t, 10, 0.5, 1, true, 1000, &what), 0);
    /* an unknown principal is not throttled */
    assert_int_equal(emu_throttle_check(t, 10, 0.5, 7, true, 1000, &what), 0);
    assert_int_equal(emu_throttle_check(t, 10, 0.5, SIZE_MAX, true, 1000, &what), 0);
    /* later: allowed again */
    assert_int_equal(emu_throttle_check(t, 10, 0.5, 0, true, 3001, &what), 0);
    emu_throttle_free(t);
    emu_throttle_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_burst_and_refill),
        cmocka_unit_test(test_bucket_slow_rate_and_none),
        cmocka_unit_test(test_throttle_per_user_and_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
