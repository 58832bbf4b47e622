/* The close sequence of the service's own application-managed example, as
 * the backend's close does it: StopSandbox {isForce:false} -> STOPPING ->
 * STOPPED (a command that ignores TERM is killed after the grace), then
 * DeleteSandbox of the STOPPED sandbox (204), after which it is gone (404
 * for GET, DELETE and stop) and listed only as DELETED. Also a forced stop,
 * and a delete while STOPPING. */
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
#include "par_run.h"

/* stop_delay_ms 1500: STOPPING lasts at least 1.5 s, so the one GET right
 * after a forced stop sees it however loaded the machine; a graceful stop
 * of a command that ignores TERM lasts its grace too (2 s), over which the
 * GET and the two refused requests after it are made */
static const char *EXTRA = "limits:\n  create_delay_ms: 0\n  stop_delay_ms: 1500\n";

static int setup(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = EXTRA;
    return emu_fixture_setup_state(&o, state);
}

static int teardown(void **state)
{
    return emu_fixture_teardown_state(state);
}

static const char *state_of(emu_fixture *f, const char *id, char *buf, size_t cap)
{
    char path[256];
    snprintf(path, sizeof path, "/sandboxes/%s", id);
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "GET", path, NULL, 200, &j), 0);
    snprintf(buf, cap, "%s", cJSON_GetObjectItem(j, "lifecycleState")->valuestring);
    cJSON_Delete(j);
    return buf;
}

static void test_graceful_stop_then_delete(void **state)
{
    emu_fixture *f = *state;
    char id[64], path[256], cp[320], st[32];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    snprintf(path, sizeof path, "/sandboxes/%s/commands", id);
    cJSON *j = NULL;
    /* ignores TERM: the stop's grace ends with KILL; the sandbox's id in
     * it tells it from another run's (the process check is machine-wide) */
    char cmd[160], body[200];
    snprintf(cmd, sizeof cmd, "trap '' TERM; sleep 60; : %s", id);
    snprintf(body, sizeof body, "{\"command\":\"%s\"}", cmd);
    assert_int_equal(emu_fixture_json(f, "POST", path, body, 200, &j), 0);
    snprintf(cp, sizeof cp, "%s/%s", path, cJSON_GetObjectItem(j, "id")->valuestring);
    cJSON_Delete(j);

    snprintf(path, sizeof path, "/sandboxes/%s/actions/stop", id);
    assert_int_equal(emu_fixture_json(f, "POST", path, "{\"isForce\":false}", 202, NULL), 0);
    assert_string_equal(state_of(f, id, st, sizeof st), "STOPPING");
    /* stopping: no second stop, no commands, no files */
    assert_int_equal(emu_fixture_json(f, "POST", path, "{\"isForce\":false}", 409, NULL), 0);
    snprintf(path, sizeof path, "/sandboxes/%s/commands", id);
    assert_int_equal(emu_fixture_json(f, "POST", path, "{\"command\":\"true\"}", 409, NULL), 0);

    assert_int_equal(emu_fixture_wait_state(f, id, "STOPPED"), 0);
    snprintf(path, sizeof path, "/sandboxes/%s", id);
    assert_int_equal(emu_fixture_json(f, "GET", path, NULL, 200, &j), 0);
    assert_non_null(cJSON_GetObjectItem(j, "timeStopped"));
    assert_string_equal(cJSON_GetObjectItem(j, "lifecycleDetails")->valuestring, "stopped");
    cJSON_Delete(j);
    /* the command ended without an exit code */
    assert_int_equal(emu_fixture_json(f, "GET", cp, NULL, 200, &j), 0);
    assert_non_null(cJSON_GetObjectItem(j, "timeFinished"));
    assert_null(cJSON_GetObjectItem(j, "exitCode"));
    cJSON_Delete(j);
    assert_false(emu_fixture_process_exists(cmd));

    /* a STOPPED sandbox is deleted at once, and is then gone */
    assert_int_equal(emu_fixture_json(f, "DELETE", path, NULL, 204, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "GET", path, NULL, 404, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "DELETE", path, NULL, 404, NULL), 0);
    snprintf(path, sizeof path, "/sandboxes/%s/actions/stop", id);
    assert_int_equal(emu_fixture_json(f, "POST", path, "{\"isForce\":false}", 404, NULL), 0);
    snprintf(path, sizeof path, "/sandboxes?sandboxId=%s", id);
    assert_int_equal(emu_fixture_json(f, "GET", path, NULL, 200, &j), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 0);
    cJSON_Delete(j);
    snprintf(path, sizeof path, "/sandboxes?sandboxId=%s&lifecycleState=DELETED", id);
    assert_int_equal(emu_fixture_json(f, "GET", path, NULL, 200, &j), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
}

static void test_forced_stop_and_delete_while_stopping(void **state)
{
    emu_fixture *f = *state;
    char id[64], path[256], st[32];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    snprintf(path, sizeof path, "/sandboxes/%s/commands", id);
    assert_int_equal(emu_fixture_json(f, "POST", path, "{\"command\":\"sleep 61\"}", 200, NULL), 0);
    snprintf(path, sizeof path, "/sandboxes/%s/actions/stop", id);
    assert_int_equal(emu_fixture_json(f, "POST", path, "{\"isForce\":true}", 202, NULL), 0);
    assert_string_equal(state_of(f, id, st, sizeof st), "STOPPING");
    assert_int_equal(emu_fixture_wait_state(f, id, "STOPPED"), 0);
    snprintf(path, sizeof path, "/sandboxes/%s", id);
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "GET", path, NULL, 200, &j), 0);
    assert_string_equal(cJSON_GetObjectItem(j, "lifecycleDetails")->valuestring, "stopped (forced)");
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "DELETE", path, NULL, 204, NULL), 0);

    /* a delete does not wait for a stop that is under way */
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    snprintf(path, sizeof path, "/sandboxes/%s/commands", id);
    assert_int_equal(emu_fixture_json(f, "POST", path, "{\"command\":\"trap '' TERM; sleep 62\"}", 200, NULL), 0);
    snprintf(path, sizeof path, "/sandboxes/%s/actions/stop", id);
    assert_int_equal(emu_fixture_json(f, "POST", path, "{}", 202, NULL), 0);
    snprintf(path, sizeof path, "/sandboxes/%s", id);
    assert_int_equal(emu_fixture_json(f, "DELETE", path, NULL, 204, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "GET", path, NULL, 404, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graceful_stop_then_delete),
        cmocka_unit_test(test_forced_stop_and_delete_while_stopping),
    };
    return par_run_group_tests_name("it_emulator_stop", tests, setup, teardown);
}
