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
