/* UTF-8 helpers (src/util/utf8.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "util/utf8.h"

static void validation(void **state)
{
    (void)state;
    assert_true(ocisbx_utf8_valid("plain", 5));
    assert_true(ocisbx_utf8_valid("a\0b", 3));
    assert_true(ocisbx_utf8_valid("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9));
    assert_false(ocisbx_utf8_valid("\xff", 1));
    assert_false(ocisbx_utf8_valid("\xc0\xaf", 2));         /* overlong '/' */
    assert_false(ocisbx_utf8_valid("\xed\xa0\x80", 3));     /* a surrogate */
    assert_false(ocisbx_utf8_valid("\xf4\x90\x80\x80", 4)); /* above U+10FFFF */
    assert_false(ocisbx_utf8_valid("\xe2\x82", 2));         /* cut short */
    assert_int_equal(ocisbx_utf8_seq_len((const unsigned char *)"\xe2\x82\xac", 3), 3);
    assert_int_equal(ocisbx_utf8_seq_len((const unsigned char *)"\x80", 1), 0);
}

static void sanitising(void **state)
{
    (void)state;
    ocisbx_buf b = OCISBX_BUF_INIT;
    assert_int_equal(ocisbx_utf8_sanitize("a\xff"
                                          "b\xc3\xa9\xe2\x82",
                                          7, &b),
                     0);
    assert_int_equal(b.len, strlen("a\xef\xbf\xbd"
                                   "b\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd"));
    assert_memory_equal(b.data,
                        "a\xef\xbf\xbd"
                        "b\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd",
                        b.len);
    ocisbx_buf_free(&b);
}

static void cutting(void **state)
{
    (void)state;
    const char *s = "ab\xc3\xa9"
                    "c\xf0\x9f\x98\x80";
    size_t len = strlen(s); /* 9 */
    assert_int_equal(ocisbx_utf8_cut_back(s, 2), 2);
    assert_int_equal(ocisbx_utf8_cut_back(s, 3), 2); /* inside é */
    assert_int_equal(ocisbx_utf8_cut_back(s, 4), 4);
    assert_int_equal(ocisbx_utf8_cut_back(s, 6), 5); /* inside the emoji */
    assert_int_equal(ocisbx_utf8_cut_back(s, 8), 5);
    assert_int_equal(ocisbx_utf8_cut_back(s, len), len);
    assert_int_equal(ocisbx_utf8_cut_forward(s, len, 3), 4); /* past é's continuation byte */
    assert_int_equal(ocisbx_utf8_cut_forward(s, len, 6), 9);
    assert_int_equal(ocisbx_utf8_cut_forward(s, len, 5), 5);
    assert_int_equal(ocisbx_utf8_cut_back("\x80\x80", 2), 2); /* no lead byte: cut where asked */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(validation),
        cmocka_unit_test(sanitising),
        cmocka_unit_test(cutting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
