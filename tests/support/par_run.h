/* Runs the cases of a cmocka group side by side, each in its own process.
 *
 * The integration suites mostly wait (a tenancy's create delay, a command's
 * timeout, a retry's backoff), not work. par_run_group_tests_name() takes
 * the same arguments as cmocka_run_group_tests_name() and runs every case
 * in a forked child of its own, up to $OCISBX_TEST_JOBS (default
 * PAR_RUN_DEFAULT_JOBS) children at once, in the order of the array (so
 * put the long cases first). A child runs the group's setup, the one case
 * and the group's teardown: a case whose group setup builds a world gets a
 * world of its own. Cases must not share anything but read-only files:
 * the fixtures take port 0 and mkdtemp directories.
 *
 * Each child's stdout and stderr go to a temporary file, printed whole
 * when the child ends with the case's time, so that the lines of cases
 * running together never interleave. A child that dies of a signal or
 * exits with a status that is not cmocka's (a sanitizer's report, an exit
 * from the code under test) is a failed case. Returns the number of failed
 * cases, like cmocka.
 *
 * OCISBX_TEST_JOBS=1 runs the group the plain way (cmocka, in this
 * process, one group setup for all cases): for a debugger, or to compare.
 * The cases of several groups share one pool with par_run_groups().
 * $OCISBX_TEST_CASE (globs separated by ':', e.g. "test_exec_*:test_cp")
 * runs only the cases whose names match one of them; $OCISBX_TEST_SKIP
 * (the same form) leaves out the cases that match one of its globs. Both
 * hold with OCISBX_TEST_JOBS=1 too: one program can so be several CTest
 * entries (a case that must run alone its own, RUN_SERIAL). */
#ifndef OCISBX_TEST_PAR_RUN_H
#define OCISBX_TEST_PAR_RUN_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define PAR_RUN_DEFAULT_JOBS 4
#define PAR_RUN_MAX_JOBS 32

/* The number of cases run at once: $OCISBX_TEST_JOBS when it is 1..PAR_RUN_MAX_JOBS, else the default. */
int par_run_jobs(void);
/* Whether the case name is run: it matches one of the ':'-separated globs
 * of only (NULL or empty: every case) and none of skip's (NULL or empty:
 * none). $OCISBX_TEST_CASE and $OCISBX_TEST_SKIP are these. */
bool par_run_selected(const char *name, const char *only, const char *skip);
/* One group of par_run_groups. */
typedef struct par_group {
    const char *name;
    const struct CMUnitTest *tests;
    size_t n;
    CMFixtureFunction setup, teardown; /* the group's, run in each case's process; may be NULL */
} par_group;
#define PAR_GROUP(name, tests, setup, teardown)                                  \
    {                                                                            \
        (name), (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown) \
    }

/* The cases of several groups in one pool (a group's cases in order, the
 * groups one after the other): the number of failed cases. With
 * OCISBX_TEST_JOBS=1, each group the plain cmocka way. */
int par_run_groups(const par_group *groups, size_t ngroups);
int par_run_group_tests(const char *group, const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
                        CMFixtureFunction teardown);

#define par_run_group_tests_name(name, tests, setup, teardown) \
    par_run_group_tests((name), (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown))

#endif
