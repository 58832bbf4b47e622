/* cmocka assertions on the thread's last error message (see test_assert.h). */
#include "test_assert.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ocisbx/common.h"

const char *test_last_msg(void)
{
    return ocisbx_error_message(ocisbx_error_last());
}

void test_assert_msg_has(const char *needle)
{
    const char *msg = test_last_msg();
    if (!strstr(msg, needle))
        fail_msg("error message \"%s\" lacks \"%s\"", msg, needle);
}

void test_assert_msg_lacks(const char *needle)
{
    const char *msg = test_last_msg();
    if (strstr(msg, needle))
        fail_msg("error message \"%s\" contains \"%s\"", msg, needle);
}

/* The length of the valid UTF-8 sequence at p, 0 when it is not one. */
static size_t utf8_len(const unsigned char *p)
{
    size_t n = p[0] < 0x80             ? 1
               : (p[0] & 0xe0) == 0xc0 ? 2
               : (p[0] & 0xf0) == 0xe0 ? 3
               : (p[0] & 0xf8) == 0xf0 ? 4
                                       : 0;
    if (n == 0)
        return 0;
    unsigned long cp = n == 1 ? p[0] : (unsigned long)(p[0] & (0x7f >> n));
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    static const unsigned long min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return n;
}

void test_assert_clean_text(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = utf8_len(p);
        if (n == 0)
            fail_msg("\"%s\": invalid UTF-8 at byte %zu", s, (size_t)(p - (const unsigned char *)s));
        if (*p < 0x20 || *p == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0))
            fail_msg("\"%s\": control character at byte %zu", s, (size_t)(p - (const unsigned char *)s));
        p += n;
    }
}

void test_assert_msg_clean(void)
{
    test_assert_clean_text(test_last_msg());
}
