/* tests/support/par_run.c's choice of cases: $OCISBX_TEST_CASE and
 * $OCISBX_TEST_SKIP, each globs separated by ':'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "par_run.h"

static void test_no_lists_select_all(void **state)
{
    (void)state;
    assert_true(par_run_selected("test_a", NULL, NULL));
    assert_true(par_run_selected("test_a", "", ""));
}

static void test_only(void **state)
{
    (void)state;
    assert_true(par_run_selected("test_exec_x", "test_exec_*", NULL));
    assert_false(par_run_selected("test_cp", "test_exec_*", NULL));
    /* several globs: any one */
    assert_true(par_run_selected("test_cp", "test_exec_*:test_cp", NULL));
    assert_true(par_run_selected("test_exec_x", "test_exec_*:test_cp", NULL));
    assert_false(par_run_selected("test_cpx", "test_exec_*:test_cp", NULL));
    /* whole names, not prefixes; empty globs match nothing */
    assert_false(par_run_selected("test_cp", "test_c", NULL));
    assert_false(par_run_selected("test_cp", ":", NULL));
    assert_true(par_run_selected("test_cp", "::test_cp:", NULL));
}

static void test_skip(void **state)
{
    (void)state;
    assert_false(par_run_selected("test_uids", NULL, "test_uids"));
    assert_true(par_run_selected("test_other", NULL, "test_uids"));
    assert_false(par_run_selected("test_shape_x", NULL, "test_uids:test_shape_*"));
    assert_true(par_run_selected("test_shape", NULL, "test_uids:test_shape_*"));
    /* skip wins over only */
    assert_false(par_run_selected("test_a1", "test_a*", "test_a1"));
    assert_true(par_run_selected("test_a2", "test_a*", "test_a1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_lists_select_all),
        cmocka_unit_test(test_only),
        cmocka_unit_test(test_skip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
