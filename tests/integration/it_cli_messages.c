/* The CLI's one-line errors quote what the user gave (argv, file names)
 * without passing a terminal's control sequences through: ESC and bytes
 * that are not UTF-8 were printed raw (terminal injection). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli_run.h"
#include "par_run.h"

/* No control byte but the final newline; bytes >= 0x80 are checked by
 * utf8_is_kept's counterpart: here the input had only ASCII and 0xff. */
static void assert_clean(const char *err)
{
    size_t n = strlen(err);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)err[i];
        if ((c < 0x20 && c != '\n') || c == 0x7f || c >= 0x80)
            fail_msg("raw byte 0x%02x in: %s", c, err);
    }
    assert_ptr_equal(strchr(err, '\n'), err + n - 1); /* one line */
}

static void control_bytes_are_escaped(void **state)
{
    (void)state;
    cli_result r;
    CLI_RUN(&r, "evidence", "verify", "/nonexistent/\x1b[31mred\xff\n.jsonl");
    assert_int_equal(r.status, 1);
    assert_clean(r.err);
    assert_non_null(strstr(r.err, "\\x1b[31mred"));
    cli_result_free(&r);
    CLI_RUN(&r, "sandbox", "get", "--bogus\x1b]0;title\x07");
    assert_int_equal(r.status, 2);
    assert_clean(r.err);
    cli_result_free(&r);
}

static void utf8_is_kept(void **state)
{
    (void)state;
    cli_result r;
    CLI_RUN(&r, "evidence", "verify", "/nonexistent/d\xc3\xa9j\xc3\xa0.jsonl");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "d\xc3\xa9j\xc3\xa0"));
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(control_bytes_are_escaped),
        cmocka_unit_test(utf8_is_kept),
    };
    return par_run_group_tests_name("it_cli_messages", tests, NULL, NULL);
}
