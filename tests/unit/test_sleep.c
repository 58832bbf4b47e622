/* The one cancellable sleep (src/sys/sleep.c): cancel asked before the first
 * slice and after each, ECANCELED as soon as it says so, 0 otherwise. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "ocisbx/util.h"
#include "sys/sleep.h"

typedef struct counter {
    int calls;
    int cancel_at; /* the call that cancels (1-based); 0: never */
} counter;

static int count_cancel(void *ud)
{
    counter *c = ud;
    c->calls++;
    return c->cancel_at && c->calls >= c->cancel_at;
}

static void test_zero_and_negative(void **state)
{
    (void)state;
    assert_int_equal(ocisbx_sys_sleep_ms(0, NULL, NULL), 0);
    assert_int_equal(ocisbx_sys_sleep_ms(-5, NULL, NULL), 0);
    counter c = {0, 0};
    assert_int_equal(ocisbx_sys_sleep_ms(0, count_cancel, &c), 0);
    assert_int_equal(c.calls, 1); /* asked even when there is nothing to wait */
}

static void test_canceled_before(void **state)
{
    (void)state;
    counter c = {0, 1};
    assert_int_equal(ocisbx_sys_sleep_ms(60000, count_cancel, &c), OCISBX_ECANCELED);
    assert_int_equal(c.calls, 1);
    assert_int_equal(ocisbx_sys_sleep_ms(0, count_cancel, &c), OCISBX_ECANCELED);
}

/* A 60 s sleep whose cancel answers yes on its third question: three
 * questions (two slices), and it returns long before the 60 s. */
static void test_canceled_during(void **state)
{
    (void)state;
    counter c = {0, 3};
    int64_t t0 = ocisbx_time_monotonic_ms();
    assert_int_equal(ocisbx_sys_sleep_ms(60000, count_cancel, &c), OCISBX_ECANCELED);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    assert_int_equal(c.calls, 3);
    assert_true(took < 30000);
}

/* Not canceled: the whole time passes, in slices (cancel asked more than
 * once), and it returns 0. */
static void test_full_sleep(void **state)
{
    (void)state;
    counter c = {0, 0};
    int64_t t0 = ocisbx_time_monotonic_ms();
    assert_int_equal(ocisbx_sys_sleep_ms(3 * OCISBX_SYS_SLEEP_SLICE_MS, count_cancel, &c), 0);
    assert_true(ocisbx_time_monotonic_ms() - t0 >= 3 * OCISBX_SYS_SLEEP_SLICE_MS);
    assert_true(c.calls >= 3);
    t0 = ocisbx_time_monotonic_ms();
    assert_int_equal(ocisbx_sys_sleep_ms(20, NULL, NULL), 0);
    assert_true(ocisbx_time_monotonic_ms() - t0 >= 20);
}

static void test_canceled_helper(void **state)
{
    (void)state;
    counter c = {0, 2};
    assert_int_equal(ocisbx_sys_canceled(NULL, NULL), 0);
    assert_int_equal(ocisbx_sys_canceled(count_cancel, &c), 0);
    assert_int_equal(ocisbx_sys_canceled(count_cancel, &c), 1);
}

/* The one sleep: no other source file under src/ sleeps by itself. */
static int scan(const char *dir, char *bad, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("cannot open %s", dir);
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            found += scan(path, bad, cap);
            continue;
        }
        size_t n = strlen(path);
        if (n < 2 || (strcmp(path + n - 2, ".c") != 0 && strcmp(path + n - 2, ".h") != 0))
            continue;
        if (strstr(path, "/src/sys/sleep."))
            continue;
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        char line[4096];
        int lineno = 0;
        while (fgets(line, sizeof line, f)) {
            lineno++;
            if (strstr(line, "nanosleep(") || strstr(line, "usleep(") ||
                (strstr(line, "sleep(") && !strstr(line, "_sleep"))) {
                size_t used = strlen(bad);
                snprintf(bad + used, cap - used, "%s:%d ", path, lineno);
                found++;
            }
        }
        fclose(f);
    }
    closedir(d);
    return found;
}

static void test_no_other_sleep(void **state)
{
    (void)state;
    char bad[4096] = "";
    if (scan(OCISBX_SOURCE_DIR "/src", bad, sizeof bad) != 0)
        fail_msg("sleeps outside src/sys/sleep.c (use ocisbx_sys_sleep_ms): %s", bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_and_negative), cmocka_unit_test(test_canceled_before),
        cmocka_unit_test(test_canceled_during),   cmocka_unit_test(test_full_sleep),
        cmocka_unit_test(test_canceled_helper),   cmocka_unit_test(test_no_other_sleep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
