/* Command output is bytes: a NUL byte (valid UTF-8) comes back in events,
 * output and runAndWait as \u0000, never cutting the chunk, and survives a
 * restart of the emulator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "emu_fixture.h"
#include "par_run.h"

static const char *const cmd_body = "{\"command\": \"printf 'a\\\\000b\\\\n'; printf 'q\\\\000r' >&2\"}";

static void expect_nul_in(const emu_fixture_result *r)
{
    /* The wire JSON carries the NUL escaped, with what follows it. */
    if (!r->body || !strstr(r->body, "a\\u0000b\\n") || !strstr(r->body, "q\\u0000r"))
        fail_msg("NUL byte lost on the wire: %s", r->body ? r->body : "(no body)");
}

static void t_nul_bytes(void **state)
{
    emu_fixture *f = *state;
    char id[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    assert_int_equal(emu_fixture_wait_state(f, id, "RUNNING"), 0);

    char path[256];
    snprintf(path, sizeof path, "/sandboxes/%s/commands/actions/runAndWait", id);
    emu_fixture_result r = {0};
    assert_int_equal(emu_fixture_request(f, "POST", path, cmd_body, &r), 0);
    assert_int_equal(r.status, 200);
    expect_nul_in(&r);
    char cmd_id[64] = {0};
    const char *p = strstr(r.body, "\"id\"");
    assert_non_null(p);
    assert_int_equal(
        sscanf(p, "\"id\":%*[ ]\"%63[^\"]\"", cmd_id) == 1 || sscanf(p, "\"id\":\"%63[^\"]\"", cmd_id) == 1, 1);
    emu_fixture_result_free(&r);

    for (int round = 0; round < 2; round++) {
        snprintf(path, sizeof path, "/sandboxes/%s/commands/%s/events?fromSeq=1", id, cmd_id);
        memset(&r, 0, sizeof r);
        assert_int_equal(emu_fixture_request(f, "GET", path, NULL, &r), 0);
        assert_int_equal(r.status, 200);
        expect_nul_in(&r);
        emu_fixture_result_free(&r);

        snprintf(path, sizeof path, "/sandboxes/%s/commands/%s/output?fromSeq=1", id, cmd_id);
        memset(&r, 0, sizeof r);
        assert_int_equal(emu_fixture_request(f, "GET", path, NULL, &r), 0);
        assert_int_equal(r.status, 200);
        expect_nul_in(&r);
        emu_fixture_result_free(&r);

        if (round == 0) /* the same after a restart (persisted events) */
            assert_int_equal(emu_fixture_restart(f), 0);
    }
}

static int setup(void **state)
{
    return emu_fixture_setup_state(NULL, state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_nul_bytes, setup, emu_fixture_teardown_state),
    };
    return par_run_group_tests_name("it_emulator_bytes", tests, NULL, NULL);
}
