/* The OCI CLI's habits, against the emulator: the full path `ocisbx
 * generative-ai-sandbox GROUP VERB`, --wait-for-state given several times
 * (the first reached ends the wait), --output table for get. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "cli_run.h"
#include "emu_fixture.h"
#include "par_run.h"

static emu_fixture *emu;
static const char *cfg, *url;

/* The CLI with the emulator's config and endpoint in front of args. */
#define RUN(r, ...)                                                                            \
    do {                                                                                       \
        const char *const a_[] = {"--config-file", cfg, "--endpoint", url, __VA_ARGS__, NULL}; \
        assert_int_equal(cli_run(a_, NULL, NULL, (r)), 0);                                     \
    } while (0)

static void expect(const cli_result *r, int status, const char *what)
{
    if (r->status != status) {
        fprintf(stderr, "%s: exit %d, want %d\nstdout: %s\nstderr: %s\n", what, r->status, status, r->out, r->err);
        fail();
    }
}

static cJSON *json_of(const cli_result *r)
{
    cJSON *j = cJSON_Parse(r->out);
    if (!j)
        fprintf(stderr, "not JSON: %s\n", r->out);
    assert_non_null(j);
    return j;
}

static const char *str(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static int setup(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 300\n";
    if (emu_fixture_start(&o, &emu) != 0)
        return -1;
    cfg = emu_fixture_config_path(emu);
    url = emu_fixture_url(emu);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    int st = emu_fixture_stop(emu);
    emu_fixture_free(emu);
    return st;
}

/* A new RUNNING sandbox's id (copied into id). */
static void new_sandbox(char *id, size_t cap)
{
    cli_result r;
    RUN(&r, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--wait-for-state", "RUNNING",
        "--wait-interval-seconds", "0");
    expect(&r, 0, "sandbox create");
    cJSON *j = json_of(&r);
    snprintf(id, cap, "%s", str(j, "id"));
    cJSON_Delete(j);
    cli_result_free(&r);
}

static void test_full_oci_path(void **state)
{
    (void)state;
    char sbx[128];
    cli_result r, s;
    /* create, get and run under the OCI CLI's full path */
    RUN(&r, "generative-ai-sandbox", "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--display-name",
        "full path", "--wait-for-state", "RUNNING", "--wait-interval-seconds", "0");
    expect(&r, 0, "generative-ai-sandbox sandbox create");
    cJSON *j = json_of(&r);
    snprintf(sbx, sizeof sbx, "%s", str(j, "id"));
    assert_string_equal(str(j, "displayName"), "full path");
    assert_string_equal(str(j, "lifecycleState"), "RUNNING");
    cJSON_Delete(j);
    cli_result_free(&r);
    RUN(&r, "generative-ai-sandbox", "sandbox", "get", "--sandbox-id", sbx);
    RUN(&s, "sandbox", "get", "--sandbox-id", sbx);
    expect(&r, 0, "generative-ai-sandbox sandbox get");
    assert_string_equal(r.out, s.out);
    cli_result_free(&r);
    cli_result_free(&s);
    RUN(&r, "generative-ai-sandbox", "sandbox-command", "run-and-wait", "--sandbox-id", sbx, "--command",
        "echo via-oci-path");
    expect(&r, 0, "generative-ai-sandbox sandbox-command run-and-wait");
    assert_non_null(strstr(r.out, "via-oci-path"));
    cli_result_free(&r);
    /* the global options may come first, as the OCI CLI allows */
    const char *const g[] = {"--endpoint",         url,    "generative-ai-sandbox", "--config-file",     cfg,
                             "sandbox-collection", "list", "--project-id",          EMU_FIXTURE_PROJECT, NULL};
    assert_int_equal(cli_run(g, NULL, NULL, &r), 0);
    expect(&r, 0, "globals around generative-ai-sandbox");
    assert_non_null(strstr(r.out, sbx));
    cli_result_free(&r);

    /* help under the full path is the group's */
    CLI_RUN(&r, "generative-ai-sandbox", "sandbox", "create", "--help");
    CLI_RUN(&s, "sandbox", "create", "--help");
    expect(&r, 0, "generative-ai-sandbox sandbox create --help");
    assert_string_equal(r.out, s.out);
    cli_result_free(&r);
    cli_result_free(&s);
    CLI_RUN(&r, "generative-ai-sandbox", "--help");
    expect(&r, 0, "generative-ai-sandbox --help");
    assert_non_null(strstr(r.out, "  sandbox-command-event "));
    assert_null(strstr(r.out, "  exec ")); /* only the OCI CLI's groups */
    cli_result_free(&r);
    /* what is not an OCI group there is a usage error, nothing sent */
    CLI_RUN(&r, "generative-ai-sandbox", "exec", "--local-dir", "/tmp", "--", "true");
    expect(&r, 2, "generative-ai-sandbox exec");
    assert_non_null(strstr(r.err, "generative-ai-sandbox exec: not a group"));
    cli_result_free(&r);
    CLI_RUN(&r, "generative-ai-sandbox");
    expect(&r, 2, "generative-ai-sandbox alone");
    assert_non_null(strstr(r.err, "sandbox-snapshot-collection"));
    cli_result_free(&r);
    RUN(&r, "sandbox", "delete", "--sandbox-id", sbx);
    expect(&r, 0, "sandbox delete");
    cli_result_free(&r);
}

static void test_wait_for_any_state(void **state)
{
    (void)state;
    cli_result r;
    /* RUNNING or FAILED: a create ends on RUNNING (before: only the last one counted, and the create
     * waited for FAILED until --max-wait-seconds) */
    RUN(&r, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--wait-for-state", "RUNNING",
        "--wait-for-state", "FAILED", "--max-wait-seconds", "60", "--wait-interval-seconds", "0");
    expect(&r, 0, "create waiting for RUNNING or FAILED");
    cJSON *j = json_of(&r);
    char sbx[128];
    snprintf(sbx, sizeof sbx, "%s", str(j, "id"));
    assert_string_equal(str(j, "lifecycleState"), "RUNNING");
    cJSON_Delete(j);
    cli_result_free(&r);

    /* commands: FINISHED or FINISHED_NO_EXIT_CODE ends on either */
    RUN(&r, "sandbox-command", "run", "--sandbox-id", sbx, "--command", "exit 3");
    expect(&r, 0, "sandbox-command run");
    j = json_of(&r);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "%s", str(j, "id"));
    cJSON_Delete(j);
    cli_result_free(&r);
    RUN(&r, "sandbox-command", "get", "--sandbox-id", sbx, "--command-id", cmd, "--wait-for-state", "FINISHED",
        "--wait-for-state", "FINISHED_NO_EXIT_CODE", "--wait-interval-seconds", "0");
    expect(&r, 0, "command get waiting for either finished state");
    j = json_of(&r);
    assert_int_equal(cJSON_GetObjectItem(j, "exitCode")->valueint, 3);
    cJSON_Delete(j);
    cli_result_free(&r);
    /* a state no command can reach any more fails at once */
    RUN(&r, "sandbox-command", "get", "--sandbox-id", sbx, "--command-id", cmd, "--wait-for-state", "NOT_STARTED",
        "--wait-for-state", "FINISHED_NO_EXIT_CODE", "--wait-interval-seconds", "0");
    expect(&r, 1, "command get waiting for states it cannot reach");
    assert_non_null(strstr(r.err, "waiting for NOT_STARTED or FINISHED_NO_EXIT_CODE"));
    cli_result_free(&r);

    /* snapshots */
    RUN(&r, "sandbox-snapshot", "create", "--sandbox-id", sbx, "--wait-for-state", "ACTIVE", "--wait-for-state",
        "FAILED", "--wait-interval-seconds", "0");
    expect(&r, 0, "snapshot create waiting for ACTIVE or FAILED");
    j = json_of(&r);
    assert_string_equal(str(j, "lifecycleState"), "ACTIVE");
    cJSON_Delete(j);
    cli_result_free(&r);

    /* each given state is checked before anything is sent */
    RUN(&r, "sandbox", "stop", "--sandbox-id", sbx, "--wait-for-state", "STOPPED", "--wait-for-state", "ACTIVE");
    expect(&r, 2, "a state of another resource among several");
    assert_non_null(strstr(r.err, "--wait-for-state ACTIVE is not a state of this resource"));
    cli_result_free(&r);
    RUN(&r, "sandbox", "get", "--sandbox-id", sbx);
    j = json_of(&r);
    assert_string_equal(str(j, "lifecycleState"), "RUNNING"); /* not stopped */
    cJSON_Delete(j);
    cli_result_free(&r);
    RUN(&r, "sandbox", "delete", "--sandbox-id", sbx, "--wait-for-state", "FAILED", "--wait-for-state", "DELETED",
        "--wait-interval-seconds", "0");
    expect(&r, 0, "delete waiting for FAILED or DELETED");
    assert_string_equal(r.out, "");
    cli_result_free(&r);
}

/* The header line and the one row of a get --output table. */
static void expect_one_row(const cli_result *r, const char *header_start, const char *id, const char *what)
{
    expect(r, 0, what);
    if (strncmp(r->out, header_start, strlen(header_start)) != 0)
        fprintf(stderr, "%s:\n%s", what, r->out);
    assert_int_equal(strncmp(r->out, header_start, strlen(header_start)), 0);
    const char *row = strchr(r->out, '\n');
    assert_non_null(row);
    row++;
    assert_int_equal(strncmp(row, id, strlen(id)), 0);
    assert_non_null(strchr(row, '\n'));
    assert_string_equal(strchr(row, '\n'), "\n"); /* one row */
}

static void test_get_output_table(void **state)
{
    (void)state;
    char sbx[128], cmd[128], snap[128];
    new_sandbox(sbx, sizeof sbx);
    cli_result r, d;
    RUN(&r, "sandbox", "get", "--sandbox-id", sbx, "--output", "table");
    expect_one_row(&r, "ID ", sbx, "sandbox get --output table");
    assert_non_null(strstr(r.out, "DISPLAY NAME"));
    assert_non_null(strstr(r.out, "RUNNING"));
    cli_result_free(&r);
    /* json is the default */
    RUN(&r, "sandbox", "get", "--sandbox-id", sbx, "--output", "json");
    RUN(&d, "sandbox", "get", "--sandbox-id", sbx);
    expect(&r, 0, "sandbox get --output json");
    assert_string_equal(r.out, d.out);
    cli_result_free(&r);
    cli_result_free(&d);

    RUN(&r, "sandbox-command", "run-and-wait", "--sandbox-id", sbx, "--command", "exit 4");
    cJSON *j = json_of(&r);
    snprintf(cmd, sizeof cmd, "%s", str(j, "id"));
    cJSON_Delete(j);
    cli_result_free(&r);
    RUN(&r, "sandbox-command", "get", "--sandbox-id", sbx, "--command-id", cmd, "--output", "table");
    expect_one_row(&r, "ID ", cmd, "sandbox-command get --output table");
    assert_non_null(strstr(r.out, "EXIT"));
    assert_non_null(strstr(r.out, "FINISHED"));
    cli_result_free(&r);
    RUN(&r, "command", "get", "--sandbox-id", sbx, "--command-id", cmd, "--output", "table");
    expect_one_row(&r, "ID ", cmd, "command get --output table (the alias)");
    cli_result_free(&r);

    RUN(&r, "sandbox-snapshot", "create", "--sandbox-id", sbx, "--wait-for-state", "ACTIVE",
        "--wait-interval-seconds", "0");
    j = json_of(&r);
    snprintf(snap, sizeof snap, "%s", str(j, "id"));
    cJSON_Delete(j);
    cli_result_free(&r);
    RUN(&r, "sandbox-snapshot", "get", "--snapshot-id", snap, "--output", "table");
    expect_one_row(&r, "ID ", snap, "sandbox-snapshot get --output table");
    assert_non_null(strstr(r.out, sbx)); /* the SANDBOX column */
    cli_result_free(&r);
    RUN(&r, "sandbox", "get", "--sandbox-id", sbx, "--output", "yaml");
    expect(&r, 2, "sandbox get --output yaml");
    assert_non_null(strstr(r.err, "--output is json or table, not 'yaml'"));
    cli_result_free(&r);
    RUN(&r, "sandbox", "delete", "--sandbox-id", sbx);
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_oci_path),
        cmocka_unit_test(test_wait_for_any_state),
        cmocka_unit_test(test_get_output_table),
    };
    return par_run_group_tests_name("it_cli_oci_habits", tests, setup, teardown);
}
