/* ocisbx-emulator per-shape limits (limits.shapes in the tenancy file):
 * an allocation past memory_mib fails inside the sandbox, a fork loop stops
 * at processes, and the emulator and another sandbox stay responsive. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "emu_fixture.h"

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int exit_code(const cJSON *j)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "exitCode");
    return cJSON_IsNumber(v) ? (int)v->valuedouble : -1;
}

static cJSON *run_wait(emu_fixture *f, const char *id, const char *body)
{
    char p[256];
    cJSON *j = NULL;
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    assert_int_equal(emu_fixture_json(f, "POST", p, body, 200, &j), 0);
    return j;
}

static void test_shape_limits(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n  shapes:\n    SMALL: {memory_mib: 64, processes: 300}\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    if (!emu_fixture_isolated(f)) {
        emu_fixture_stop(f);
        emu_fixture_free(f);
        skip();
    }
    char small[64], large[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"shape\":\"SMALL\"", small, sizeof small), 0);
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"shape\":\"LARGE\"", large, sizeof large), 0);
    const char *alloc = "{\"command\":\"dd if=/dev/zero of=/dev/null bs=256M count=1\"}";
    /* 256 MiB in one allocation: past SMALL's 64 MiB, within LARGE's 16 GiB */
    cJSON *j = run_wait(f, small, alloc);
    assert_int_not_equal(exit_code(j), 0);
    cJSON_Delete(j);
    j = run_wait(f, large, alloc);
    assert_int_equal(exit_code(j), 0);
    cJSON_Delete(j);
    /* a fork loop in SMALL: forks fail past the limit; the emulator and
     * the other sandbox go on */
    j = run_wait(f, small,
                 "{\"command\":\"i=0; while [ $i -lt 2000 ]; do (sleep 20 &); i=$((i+1)); done; echo all\","
                 "\"timeout\":\"PT60S\"}");
    const char *out = jstr(cJSON_GetObjectItem(j, "output"), "stdout");
    const char *err = jstr(cJSON_GetObjectItem(j, "output"), "stderr");
    fprintf(stderr, "fork loop: exit %d, stdout \"%s\", stderr \"%s\"\n", exit_code(j), out ? out : "",
            err ? err : "");
    /* forks failed past the limit ("Cannot fork", from the loop's shell or
     * from a subshell, whichever forked when the limit was reached) */
    assert_non_null(err);
    assert_non_null(strstr(err, "Cannot fork"));
    cJSON_Delete(j);
    j = run_wait(f, large, "{\"command\":\"echo alive\"}");
    assert_string_equal(jstr(cJSON_GetObjectItem(j, "output"), "stdout"), "alive\n");
    cJSON_Delete(j);
    char p[256];
    snprintf(p, sizeof p, "/sandboxes/%s", small);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, NULL), 0);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

/* The command cannot ptrace the sandbox's pid 1 (bwrap's init) and stall it */
static void test_no_ptrace_of_init(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    if (!emu_fixture_isolated(f)) {
        emu_fixture_stop(f);
        emu_fixture_free(f);
        skip();
    }
    char id[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    cJSON *j = run_wait(f, id,
                        "{\"command\":\"python3 -c 'import ctypes,os; l=ctypes.CDLL(None,use_errno=True); "
                        "r=l.ptrace(16,1,0,0); print(r, ctypes.get_errno())'\"}");
    const char *out = jstr(cJSON_GetObjectItem(j, "output"), "stdout");
    fprintf(stderr, "PTRACE_ATTACH of pid 1 inside: %s", out ? out : "(none)\n");
    assert_non_null(out);
    assert_string_equal(out, "-1 1\n"); /* EPERM */
    cJSON_Delete(j);
    j = run_wait(f, id, "{\"command\":\"echo still fine\"}");
    assert_string_equal(jstr(cJSON_GetObjectItem(j, "output"), "stdout"), "still fine\n");
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

static void test_shape_limits_config_checked(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  shapes:\n    HUGE: {memory_mib: 64}\n";
    emu_fixture *f = NULL;
    assert_int_not_equal(emu_fixture_start(&o, &f), 0); /* an unknown shape is refused */
    emu_fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_limits),
        cmocka_unit_test(test_shape_limits_config_checked),
        cmocka_unit_test(test_no_ptrace_of_init),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
