/* The ocisbx program's sandbox, command, file and snapshot commands against
 * the emulator over HTTPS: JSON out, chunks streamed to stdout/stderr, the
 * command's exit code, one-line errors and non-zero exits. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "cli_run.h"
#include "emu_fixture.h"
#include "par_run.h"

static emu_fixture *emu;
static char tmpdir[] = "/tmp/ocisbx-it-cli-api-XXXXXX";

typedef cli_result run_result;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    if (len)
        *len = got;
    return b;
}

/* Extra "NAME=VALUE" environment entries for the next runs (NULL-terminated), or NULL. */
static const char *const *run_env;

/* Runs ocisbx (the shared runner, tests/support/cli_run.h) with args (NULL
 * terminated), then the global options for the emulator; stdin_data (may
 * be NULL) is its standard input. */
static void run(run_result *r, const char *stdin_data, const char *const *args)
{
    const char *argv[64];
    int n = 0;
    for (const char *const *a = args; *a && n < 56; a++)
        argv[n++] = *a;
    /* global options after the subcommand: accepted there too */
    argv[n++] = "--config-file";
    argv[n++] = emu_fixture_config_path(emu);
    argv[n++] = "--endpoint";
    argv[n++] = emu_fixture_url(emu);
    argv[n++] = "--ca-bundle";
    argv[n++] = emu_fixture_ca_path(emu);
    argv[n] = NULL;
    const char *env[40] = {"OCI_SANDBOX_ENDPOINT", "OCI_SANDBOX_RUNTIME", "OCI_SANDBOX_SHAPE",
                           "OCI_SANDBOX_EXPIRATION"}; /* unset, then run_env */
    int k = 4;
    for (const char *const *e = run_env; e && *e && k < 39; e++)
        env[k++] = *e;
    env[k] = NULL;
    assert_int_equal(cli_run(argv, stdin_data, env, r), 0);
}

static void result_free(run_result *r)
{
    cli_result_free(r);
}

#define RUN(r, stdin_data, ...)                          \
    do {                                                 \
        const char *const args_[] = {__VA_ARGS__, NULL}; \
        run(r, stdin_data, args_);                       \
    } while (0)

static void expect_ok(const run_result *r, const char *what)
{
    if (r->status != 0)
        fail_msg("%s: exit %d, stderr: %s", what, r->status, r->err);
}

/* The JSON on stdout; fails the test when it is not JSON. */
static cJSON *json_of(const run_result *r)
{
    cJSON *j = cJSON_Parse(r->out);
    if (!j)
        fail_msg("stdout is not JSON: %s", r->out);
    return j;
}

static const char *str(const cJSON *j, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, field);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int one_line(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && s[n - 1] == '\n' && memchr(s, '\n', n - 1) == NULL;
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    emu_fixture_options o = {0};
    o.https = true;
    o.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n";
    return emu_fixture_start(&o, &emu);
}

static int teardown(void **state)
{
    (void)state;
    int st = emu_fixture_stop(emu);
    emu_fixture_free(emu);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        return -1;
    return st == 0 ? 0 : -1;
}

static void test_everything(void **state)
{
    (void)state;
    run_result r;
    /* create and wait */
    RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--display-name", "from cli", "--shape",
        "SMALL", "--runtime", "python-3.11", "--expires-in-minutes", "60", "--env", "GREETING=hi there",
        "--wait-for-state", "RUNNING", "--wait-interval-seconds", "0");
    expect_ok(&r, "sandbox create");
    cJSON *j = json_of(&r);
    char sbx[128];
    snprintf(sbx, sizeof sbx, "%s", str(j, "id"));
    assert_string_equal(str(j, "lifecycleState"), "RUNNING");
    assert_string_equal(str(j, "displayName"), "from cli");
    cJSON_Delete(j);
    result_free(&r);

    RUN(&r, NULL, "sandbox", "get", "--sandbox-id", sbx);
    expect_ok(&r, "sandbox get");
    j = json_of(&r);
    assert_string_equal(str(j, "id"), sbx);
    assert_string_equal(str(j, "projectId"), EMU_FIXTURE_PROJECT);
    cJSON_Delete(j);
    result_free(&r);

    RUN(&r, NULL, "sandbox", "list", "--project-id", EMU_FIXTURE_PROJECT, "--limit", "1", "--all");
    expect_ok(&r, "sandbox list --all");
    j = json_of(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox", "list", "--display-name", "from cli");
    expect_ok(&r, "sandbox list");
    assert_non_null(strstr(r.out, sbx));
    result_free(&r);

    RUN(&r, NULL, "sandbox", "update", "--sandbox-id", sbx, "--display-name", "renamed");
    expect_ok(&r, "sandbox update");
    j = json_of(&r);
    assert_string_equal(str(j, "displayName"), "renamed");
    cJSON_Delete(j);
    result_free(&r);

    RUN(&r, NULL, "sandbox", "extend", "--sandbox-id", sbx, "--additional-duration", "PT30M");
    expect_ok(&r, "sandbox extend");
    j = json_of(&r);
    assert_true(strlen(str(j, "timeExpires")) > 0);
    cJSON_Delete(j);
    result_free(&r);

    RUN(&r, NULL, "sandbox", "suspend", "--sandbox-id", sbx, "--wait-for-state", "SUSPENDED",
        "--wait-interval-seconds", "0");
    expect_ok(&r, "sandbox suspend");
    assert_non_null(strstr(r.out, "SUSPENDED"));
    result_free(&r);
    RUN(&r, NULL, "sandbox", "resume", "--sandbox-id", sbx, "--wait-for-state", "RUNNING", "--wait-interval-seconds",
        "0");
    expect_ok(&r, "sandbox resume");
    result_free(&r);

    /* commands */
    RUN(&r, NULL, "command", "run", "--sandbox-id", sbx, "--command", "echo \"$GREETING $X\"", "--env", "X=and you",
        "--cwd", "/workspace", "--timeout", "PT1M");
    expect_ok(&r, "command run");
    j = json_of(&r);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "%s", str(j, "id"));
    assert_true(strlen(cmd) > 0);
    cJSON_Delete(j);
    result_free(&r);

    /* events: the chunks, and the command's exit code */
    RUN(&r, NULL, "command", "events", "--sandbox-id", sbx, "--command-id", cmd);
    expect_ok(&r, "command events");
    assert_string_equal(r.out, "hi there and you\n");
    result_free(&r);
    RUN(&r, NULL, "command", "events", "--sandbox-id", sbx, "--command-id", cmd, "--from-seq", "99");
    expect_ok(&r, "command events past the end");
    result_free(&r);

    RUN(&r, NULL, "command", "get", "--sandbox-id", sbx, "--command-id", cmd);
    expect_ok(&r, "command get");
    j = json_of(&r);
    assert_null(cJSON_GetObjectItem(j, "lifecycleState")); /* a SandboxCommand has none [public] */
    assert_non_null(str(j, "timeFinished"));
    cJSON_Delete(j);
    result_free(&r);

    RUN(&r, NULL, "command", "output", "--sandbox-id", sbx, "--command-id", cmd, "--from-seq", "1");
    expect_ok(&r, "command output");
    j = json_of(&r);
    assert_string_equal(str(j, "stdout"), "hi there and you\n");
    cJSON_Delete(j);
    result_free(&r);

    RUN(&r, NULL, "command", "run-and-wait", "--sandbox-id", sbx, "--command", "echo waited; exit 4");
    expect_ok(&r, "command run-and-wait");
    j = json_of(&r);
    assert_int_equal(cJSON_GetObjectItem(j, "exitCode")->valueint, 4);
    cJSON_Delete(j);
    result_free(&r);

    RUN(&r, NULL, "command", "run-and-stream", "--sandbox-id", sbx, "--command",
        "echo out1; echo err1 >&2; sh -c 'printf \"%s|\" \"$@\"; exit 7' sh", "--arg", "a b", "--arg", "c");
    assert_int_equal(r.status, 7);
    assert_string_equal(r.out, "out1\na b|c|"); /* args follow the command, each quoted */
    assert_string_equal(r.err, "err1\n");
    result_free(&r);

    RUN(&r, NULL, "command", "list", "--sandbox-id", sbx, "--limit", "1", "--all");
    expect_ok(&r, "command list");
    j = json_of(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 3);
    cJSON_Delete(j);
    result_free(&r);

    RUN(&r, NULL, "command", "run", "--sandbox-id", sbx, "--command", "sleep 30");
    expect_ok(&r, "command run sleep");
    j = json_of(&r);
    snprintf(cmd, sizeof cmd, "%s", str(j, "id"));
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "command", "cancel", "--sandbox-id", sbx, "--command-id", cmd);
    expect_ok(&r, "command cancel");
    result_free(&r);
    /* a canceled command reports no exit status: events exit 125 with a line,
     * also when asked from past its last event (it exited 0 there) */
    RUN(&r, NULL, "command", "events", "--sandbox-id", sbx, "--command-id", cmd);
    assert_int_equal(r.status, 125);
    assert_true(one_line(r.err));
    assert_non_null(strstr(r.err, "without an exit status"));
    result_free(&r);
    RUN(&r, NULL, "command", "events", "--sandbox-id", sbx, "--command-id", cmd, "--from-seq", "99");
    assert_int_equal(r.status, 125);
    assert_true(one_line(r.err));
    result_free(&r);
    RUN(&r, NULL, "command", "run", "--sandbox-id", sbx, "--command", "exit 3");
    expect_ok(&r, "command run exit 3");
    j = json_of(&r);
    snprintf(cmd, sizeof cmd, "%s", str(j, "id"));
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "command", "get", "--sandbox-id", sbx, "--command-id", cmd, "--wait-for-state", "FINISHED",
        "--wait-interval-seconds", "0");
    expect_ok(&r, "wait exit 3");
    result_free(&r);
    RUN(&r, NULL, "command", "events", "--sandbox-id", sbx, "--command-id", cmd, "--from-seq", "99");
    assert_int_equal(r.status, 3); /* past the end: the exit status all the same */
    result_free(&r);

    /* files: from a local file and from stdin, read to stdout and to a file */
    char local[600], back[600];
    snprintf(local, sizeof local, "%s/local file.txt", tmpdir);
    snprintf(back, sizeof back, "%s/back.txt", tmpdir);
    FILE *f = fopen(local, "wb");
    fputs("line one\nline two\n", f);
    fclose(f);
    RUN(&r, NULL, "file", "write", "--sandbox-id", sbx, "--file-path", "/workspace/dir/a b+c%d#e?.txt", "--from-file",
        local);
    expect_ok(&r, "file write");
    result_free(&r);
    RUN(&r, NULL, "file", "read", "--sandbox-id", sbx, "--file-path", "/workspace/dir/a b+c%d#e?.txt", "--to-file",
        "-");
    expect_ok(&r, "file read");
    assert_string_equal(r.out, "line one\nline two\n");
    result_free(&r);
    RUN(&r, "from stdin\n", "file", "write", "--sandbox-id", sbx, "--file-path", "/workspace/stdin.txt",
        "--from-file", "-");
    expect_ok(&r, "file write from stdin");
    result_free(&r);
    RUN(&r, NULL, "file", "read", "--sandbox-id", sbx, "--file-path", "/workspace/stdin.txt", "--to-file", back);
    expect_ok(&r, "file read to a file");
    char *got = slurp(back, NULL);
    assert_string_equal(got, "from stdin\n");
    free(got);
    result_free(&r);
    RUN(&r, NULL, "file", "read", "--sandbox-id", sbx, "--file-path", "/workspace/missing");
    assert_int_equal(r.status, 1);
    assert_true(one_line(r.err));
    assert_non_null(strstr(r.err, "404"));
    result_free(&r);

    /* snapshots */
    RUN(&r, NULL, "snapshot", "create", "--sandbox-id", sbx, "--display-name", "snap");
    assert_int_equal(r.status, 2); /* CreateSandboxSnapshotDetails has no displayName [public] */
    assert_non_null(strstr(r.err, "--display-name"));
    result_free(&r);
    RUN(&r, NULL, "snapshot", "create", "--sandbox-id", sbx, "--wait-for-state", "ACTIVE", "--wait-interval-seconds",
        "0");
    expect_ok(&r, "snapshot create");
    j = json_of(&r);
    char snap[128];
    snprintf(snap, sizeof snap, "%s", str(j, "id"));
    assert_string_equal(str(j, "lifecycleState"), "ACTIVE");
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "snapshot", "get", "--snapshot-id", snap);
    expect_ok(&r, "snapshot get");
    assert_non_null(strstr(r.out, snap));
    result_free(&r);
    RUN(&r, NULL, "snapshot", "list", "--sandbox-id", sbx);
    expect_ok(&r, "snapshot list");
    j = json_of(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "snapshot", "delete", "--snapshot-id", snap, "--wait-for-state", "DELETED",
        "--wait-interval-seconds", "0");
    expect_ok(&r, "snapshot delete");
    result_free(&r);

    /* stop and delete */
    RUN(&r, NULL, "sandbox", "stop", "--sandbox-id", sbx, "--is-force", "--wait-for-state", "STOPPED",
        "--wait-interval-seconds", "0");
    expect_ok(&r, "sandbox stop");
    assert_non_null(strstr(r.out, "STOPPED"));
    result_free(&r);
    RUN(&r, NULL, "sandbox", "delete", "--sandbox-id", sbx, "--wait-for-state", "DELETED", "--wait-interval-seconds",
        "0");
    expect_ok(&r, "sandbox delete");
    assert_string_equal(r.out, "");
    result_free(&r);
    RUN(&r, NULL, "sandbox", "get", "--sandbox-id", sbx);
    assert_int_equal(r.status, 1);
    assert_true(one_line(r.err));
    assert_non_null(strstr(r.err, "NotAuthorizedOrNotFound"));
    assert_non_null(strstr(r.err, "opc-request-id"));
    result_free(&r);
}

/* The OCI CLI's names (oci generative-ai-sandbox), name by name, and the
 * short names they replace: both answer --help with the same text (the OCI
 * names), so both reach the same subcommand. */
static void test_oci_names(void **state)
{
    (void)state;
    static const char *const names[][4] = {
        /* OCI group, OCI sub, legacy group, legacy sub */
        {"sandbox", "create", "sandbox", "create"},
        {"sandbox", "create-from-snapshot", NULL, NULL},
        {"sandbox", "get", "sandbox", "get"},
        {"sandbox", "update", "sandbox", "update"},
        {"sandbox", "delete", "sandbox", "delete"},
        {"sandbox", "stop", "sandbox", "stop"},
        {"sandbox", "extend", "sandbox", "extend"},
        {"sandbox", "suspend", "sandbox", "suspend"},
        {"sandbox", "resume", "sandbox", "resume"},
        {"sandbox-collection", "list", "sandbox", "list"},
        {"sandbox-command", "run", "command", "run"},
        {"sandbox-command", "run-and-wait", "command", "run-and-wait"},
        {"sandbox-command", "get", "command", "get"},
        {"sandbox-command", "cancel", "command", "cancel"},
        {"sandbox-command-collection", "list", "command", "list"},
        {"sandbox-command-event", "run-and-stream", "command", "run-and-stream"},
        {"sandbox-command-event", "stream", "command", "events"},
        {"sandbox-command-output", "get-output", "command", "output"},
        {"sandbox-file", "write", "file", "write"},
        {"sandbox-file", "read", "file", "read"},
        {"sandbox-snapshot", "create", "snapshot", "create"},
        {"sandbox-snapshot", "get", "snapshot", "get"},
        {"sandbox-snapshot", "delete", "snapshot", "delete"},
        {"sandbox-snapshot-collection", "list", "snapshot", "list"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        run_result a, b;
        RUN(&a, NULL, names[i][0], names[i][1], "--help");
        expect_ok(&a, names[i][1]);
        char line[200];
        snprintf(line, sizeof line, "usage: ocisbx %s %s", names[i][0], names[i][1]);
        if (!strstr(a.out, line))
            fprintf(stderr, "%s %s --help:\n%s", names[i][0], names[i][1], a.out);
        assert_non_null(strstr(a.out, line));
        snprintf(line, sizeof line, "options of %s %s", names[i][0], names[i][1]);
        assert_non_null(strstr(a.out, line));
        if (names[i][2]) {
            RUN(&b, NULL, names[i][2], names[i][3], "--help");
            expect_ok(&b, names[i][3]);
            if (strcmp(a.out, b.out))
                fprintf(stderr, "%s %s differs from %s %s\n", names[i][0], names[i][1], names[i][2], names[i][3]);
            assert_string_equal(a.out, b.out);
            result_free(&b);
        }
        result_free(&a);
    }
    /* the OCI option names are the ones help shows; the old ones stay accepted */
    run_result r;
    RUN(&r, NULL, "sandbox-file", "read", "--help");
    assert_non_null(strstr(r.out, "--sandbox-file-path PATH"));
    assert_non_null(strstr(r.out, "--local-file PATH"));
    assert_null(strstr(r.out, "--to-file PATH"));
    result_free(&r);
    RUN(&r, NULL, "--help");
    expect_ok(&r, "--help");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char line[64];
        snprintf(line, sizeof line, "  %s ", names[i][0]);
        assert_non_null(strstr(r.out, line));
    }
    assert_null(strstr(r.out, "the service's default"));
    result_free(&r);
    RUN(&r, NULL, "sandbox", "create", "--help");
    assert_non_null(strstr(r.out, "--expiration-duration DURATION"));
    assert_non_null(strstr(r.out, "-1: no automatic expiry"));
    assert_null(strstr(r.out, "the service's default"));
    result_free(&r);
    /* unknown under an OCI group: the group's OCI names are listed */
    RUN(&r, NULL, "sandbox-command-event", "events");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "run-and-stream, stream"));
    result_free(&r);
}

/* The OCI CLI's names at work against the emulator: create with
 * --expiration-duration, files with --sandbox-file-path/--file/--local-file,
 * commands under sandbox-command*, --wait-for-state on the derived state,
 * --if-match, snapshots and create-from-snapshot. */
static void test_oci_names_at_work(void **state)
{
    (void)state;
    run_result r;
    RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--expiration-duration", "PT90M30S",
        "--wait-for-state", "RUNNING", "--wait-interval-seconds", "0");
    expect_ok(&r, "sandbox create --expiration-duration");
    cJSON *j = json_of(&r);
    char sbx[128];
    snprintf(sbx, sizeof sbx, "%s", str(j, "id"));
    assert_int_equal(cJSON_GetObjectItem(j, "expiresInMinutes")->valueint, 91); /* rounded up */
    cJSON_Delete(j);
    result_free(&r);
    /* -1: no expiry, passed through */
    RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--expires-in-minutes", "-1");
    expect_ok(&r, "sandbox create -1");
    j = json_of(&r);
    assert_int_equal(cJSON_GetObjectItem(j, "expiresInMinutes")->valueint, -1);
    assert_null(cJSON_GetObjectItem(j, "timeExpires"));
    char forever[128];
    snprintf(forever, sizeof forever, "%s", str(j, "id"));
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox", "delete", "--sandbox-id", forever);
    expect_ok(&r, "delete the one without expiry");
    result_free(&r);

    char local[600], back[600];
    snprintf(local, sizeof local, "%s/oci-names.txt", tmpdir);
    snprintf(back, sizeof back, "%s/oci-names-back.txt", tmpdir);
    FILE *f = fopen(local, "wb");
    fputs("oci names\n", f);
    fclose(f);
    RUN(&r, NULL, "sandbox-file", "write", "--sandbox-id", sbx, "--sandbox-file-path", "/workspace/o.txt", "--file",
        local);
    expect_ok(&r, "sandbox-file write");
    result_free(&r);
    RUN(&r, NULL, "sandbox-file", "read", "--sandbox-id", sbx, "--sandbox-file-path", "/workspace/o.txt",
        "--local-file", back);
    expect_ok(&r, "sandbox-file read");
    char *got = slurp(back, NULL);
    assert_string_equal(got, "oci names\n");
    free(got);
    result_free(&r);
    /* the old option names under the new group */
    RUN(&r, NULL, "sandbox-file", "read", "--sandbox-id", sbx, "--file-path", "/workspace/o.txt", "--to-file", "-");
    expect_ok(&r, "sandbox-file read, old option names");
    assert_string_equal(r.out, "oci names\n");
    result_free(&r);

    /* run answers {id}; --wait-for-state waits on the derived state */
    RUN(&r, NULL, "sandbox-command", "run", "--sandbox-id", sbx, "--command", "echo hi; exit 4");
    expect_ok(&r, "sandbox-command run");
    j = json_of(&r);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "%s", str(j, "id"));
    assert_int_equal(cJSON_GetArraySize(j), 1);
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox-command", "get", "--sandbox-id", sbx, "--command-id", cmd, "--wait-for-state", "FINISHED",
        "--wait-interval-seconds", "0");
    expect_ok(&r, "sandbox-command get --wait-for-state FINISHED");
    j = json_of(&r);
    assert_int_equal(cJSON_GetObjectItem(j, "exitCode")->valueint, 4);
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox-command-output", "get-output", "--sandbox-id", sbx, "--command-id", cmd);
    expect_ok(&r, "get-output");
    j = json_of(&r);
    assert_string_equal(str(j, "stdout"), "hi\n");
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox-command-event", "stream", "--sandbox-id", sbx, "--command-id", cmd);
    assert_int_equal(r.status, 4);
    assert_string_equal(r.out, "hi\n");
    result_free(&r);
    RUN(&r, NULL, "sandbox-command-event", "run-and-stream", "--sandbox-id", sbx, "--command", "echo streamed");
    expect_ok(&r, "run-and-stream");
    assert_string_equal(r.out, "streamed\n");
    result_free(&r);
    /* a canceled command never gets an exit code: waiting for FINISHED fails at once */
    RUN(&r, NULL, "sandbox-command", "run", "--sandbox-id", sbx, "--command", "sleep 30");
    j = json_of(&r);
    snprintf(cmd, sizeof cmd, "%s", str(j, "id"));
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox-command", "cancel", "--sandbox-id", sbx, "--command-id", cmd);
    expect_ok(&r, "cancel");
    result_free(&r);
    RUN(&r, NULL, "sandbox-command", "get", "--sandbox-id", sbx, "--command-id", cmd, "--wait-for-state",
        "FINISHED_NO_EXIT_CODE", "--wait-interval-seconds", "0");
    expect_ok(&r, "wait FINISHED_NO_EXIT_CODE");
    result_free(&r);
    RUN(&r, NULL, "sandbox-command", "get", "--sandbox-id", sbx, "--command-id", cmd, "--wait-for-state", "FINISHED",
        "--wait-interval-seconds", "0");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "FINISHED_NO_EXIT_CODE"));
    result_free(&r);
    RUN(&r, NULL, "sandbox-command-collection", "list", "--sandbox-id", sbx, "--sort-by", "timeCreated",
        "--sort-order", "DESC", "--limit", "1");
    expect_ok(&r, "sandbox-command-collection list");
    j = json_of(&r);
    assert_string_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"), 0), "id"), cmd);
    cJSON_Delete(j);
    result_free(&r);

    /* --if-match: a stale etag is refused (412), the current one taken */
    RUN(&r, NULL, "sandbox", "update", "--sandbox-id", sbx, "--display-name", "n", "--if-match", "\"stale\"");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "412"));
    result_free(&r);
    RUN(&r, NULL, "sandbox", "extend", "--sandbox-id", sbx, "--additional-duration", "PT1M", "--if-match",
        "\"stale\"");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "412"));
    result_free(&r);

    /* snapshots under the OCI names; a sandbox from one */
    RUN(&r, NULL, "sandbox-snapshot", "create", "--sandbox-id", sbx, "--expiration-duration", "P1D");
    expect_ok(&r, "sandbox-snapshot create");
    j = json_of(&r);
    char snap[128];
    snprintf(snap, sizeof snap, "%s", str(j, "id"));
    assert_string_equal(str(j, "expirationDuration"), "P1D");
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox-snapshot-collection", "list", "--snapshot-id", snap, "--lifecycle-state", "ACTIVE");
    expect_ok(&r, "sandbox-snapshot-collection list");
    j = json_of(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox", "create-from-snapshot", "--project-id", EMU_FIXTURE_PROJECT, "--source-snapshot-id",
        snap, "--wait-for-state", "RUNNING", "--wait-interval-seconds", "0");
    expect_ok(&r, "create-from-snapshot");
    j = json_of(&r);
    char sbx2[128];
    snprintf(sbx2, sizeof sbx2, "%s", str(j, "id"));
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox-file", "read", "--sandbox-id", sbx2, "--sandbox-file-path", "/workspace/o.txt");
    expect_ok(&r, "read from the restored sandbox");
    assert_string_equal(r.out, "oci names\n");
    result_free(&r);
    /* the old form: sandbox create --snapshot-id (an alias of --source-snapshot-id) */
    RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--snapshot-id", snap, "--wait-for-state",
        "RUNNING", "--wait-interval-seconds", "0");
    expect_ok(&r, "create --snapshot-id");
    j = json_of(&r);
    char sbx3[128];
    snprintf(sbx3, sizeof sbx3, "%s", str(j, "id"));
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "file", "read", "--sandbox-id", sbx3, "--file-path", "/workspace/o.txt");
    expect_ok(&r, "read from the third");
    assert_string_equal(r.out, "oci names\n");
    result_free(&r);
    RUN(&r, NULL, "sandbox", "delete", "--sandbox-id", sbx3);
    expect_ok(&r, "delete the third");
    result_free(&r);
    RUN(&r, NULL, "sandbox-snapshot", "delete", "--snapshot-id", snap, "--if-match", "\"stale\"");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "412"));
    result_free(&r);
    RUN(&r, NULL, "sandbox-snapshot", "delete", "--snapshot-id", snap);
    expect_ok(&r, "sandbox-snapshot delete");
    result_free(&r);
    RUN(&r, NULL, "sandbox", "delete", "--sandbox-id", sbx2);
    expect_ok(&r, "delete");
    result_free(&r);
    RUN(&r, NULL, "sandbox", "stop", "--sandbox-id", sbx, "--is-force");
    expect_ok(&r, "stop");
    result_free(&r);
}

static void test_bad_input(void **state)
{
    (void)state;
    run_result r;
    RUN(&r, NULL, "sandbox", "get");
    assert_int_equal(r.status, 2);
    assert_true(one_line(r.err));
    assert_non_null(strstr(r.err, "--sandbox-id"));
    result_free(&r);
    RUN(&r, NULL, "sandbox", "get", "--sandbox-id", "x", "--bogus");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--bogus"));
    result_free(&r);
    RUN(&r, NULL, "sandbox", "explode");
    assert_int_equal(r.status, 2);
    assert_true(one_line(r.err));
    result_free(&r);
    /* --expires-in-minutes: -1 (no expiry) or 1..2880; anything else is a usage error (2) naming both */
    const char *bad_minutes[] = {"0", "-2", "2881", "ten", ""};
    for (size_t i = 0; i < sizeof bad_minutes / sizeof bad_minutes[0]; i++) {
        RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--expires-in-minutes",
            bad_minutes[i]);
        assert_int_equal(r.status, 2);
        assert_true(one_line(r.err));
        assert_non_null(strstr(r.err, "--expires-in-minutes must be -1 (no automatic expiry) or from 1 to 2880"));
        result_free(&r);
    }
    RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--expires-in-minutes", "5",
        "--expiration-duration", "PT5M");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "not both"));
    result_free(&r);
    RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--expiration-duration", "P3D");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "48 hours"));
    result_free(&r);
    RUN(&r, NULL, "sandbox", "create-from-snapshot", "--project-id", EMU_FIXTURE_PROJECT);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--source-snapshot-id is required"));
    result_free(&r);
    RUN(&r, NULL, "sandbox-command", "get", "--sandbox-id", "s", "--command-id", "c", "--wait-for-state",
        "SUCCEEDED");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "NOT_STARTED, RUNNING, FINISHED, FINISHED_NO_EXIT_CODE"));
    result_free(&r);
    RUN(&r, NULL, "command", "run", "--sandbox-id", "s", "--command", "x", "--timeout", "2 minutes");
    assert_int_equal(r.status, 2);
    result_free(&r);
    RUN(&r, NULL, "command", "run", "--sandbox-id", "s", "--command", "x", "--env", "NOEQUALS");
    assert_int_equal(r.status, 2);
    result_free(&r);
    RUN(&r, NULL, "file", "write", "--sandbox-id", "s", "--file-path", "/workspace/x", "--from-file",
        "/nonexistent/f");
    assert_int_equal(r.status, 1);
    assert_true(one_line(r.err));
    result_free(&r);
    RUN(&r, NULL, "snapshot", "get");
    assert_int_equal(r.status, 2);
    result_free(&r);
    RUN(&r, NULL, "command", "get", "--sandbox-id", "sbx-none", "--command-id", "c");
    assert_int_equal(r.status, 1);
    assert_true(one_line(r.err));
    result_free(&r);
}

/* Output as the OCI CLI prints it: 2-space indentation, "key": value. */
static void test_json_format(void **state)
{
    (void)state;
    run_result r;
    RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--display-name", "fmt\tx");
    expect_ok(&r, "sandbox create");
    if (strncmp(r.out, "{\n  \"id\": \"", 10) != 0)
        fail_msg("sandbox create output: %s", r.out);
    assert_null(strchr(r.out, '\t')); /* the tab in the name is escaped */
    assert_non_null(strstr(r.out, "\n  \"displayName\": \"fmt\\tx\",\n"));
    assert_true(r.out_len >= 3 && strcmp(r.out + r.out_len - 3, "\n}\n") == 0);
    cJSON *j = json_of(&r);
    char sbx[128];
    snprintf(sbx, sizeof sbx, "%s", str(j, "id"));
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "snapshot", "list", "--sandbox-id", sbx);
    expect_ok(&r, "snapshot list");
    assert_string_equal(r.out, "{\n  \"items\": []\n}\n");
    result_free(&r);
    RUN(&r, NULL, "sandbox", "list", "--display-name", "fmt\tx");
    expect_ok(&r, "sandbox list");
    const char *head = "{\n  \"items\": [\n    {\n      \"";
    if (strncmp(r.out, head, strlen(head)) != 0)
        fail_msg("sandbox list output: %s", r.out);
    result_free(&r);
    RUN(&r, NULL, "sandbox", "delete", "--sandbox-id", sbx);
    result_free(&r);
}

/* --wait-for-state is checked against the resource's lifecycle states
 * before anything is sent. */
static void test_wait_for_state_checked(void **state)
{
    (void)state;
    run_result r;
    RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--display-name", "never made",
        "--wait-for-state", "ACTIVE", "--max-wait-seconds", "5");
    assert_int_equal(r.status, 2);
    assert_true(one_line(r.err));
    assert_non_null(strstr(r.err, "--wait-for-state ACTIVE"));
    assert_non_null(strstr(r.err, "CREATING, RUNNING, UPDATING, STOPPING, STOPPED, SUSPENDING, SUSPENDED, RESUMING, "
                                  "FAILED, DELETED"));
    assert_string_equal(r.out, "");
    result_free(&r);
    RUN(&r, NULL, "sandbox", "list", "--display-name", "never made");
    expect_ok(&r, "sandbox list");
    cJSON *j = json_of(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 0); /* nothing was created */
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox", "stop", "--sandbox-id", "sbx-x", "--wait-for-state", "running");
    assert_int_equal(r.status, 2);
    result_free(&r);
    RUN(&r, NULL, "snapshot", "create", "--sandbox-id", "sbx-x", "--wait-for-state", "RUNNING");
    assert_int_equal(r.status, 2);
    assert_true(one_line(r.err));
    assert_non_null(strstr(r.err, "CREATING, ACTIVE, DELETING, DELETED, FAILED"));
    result_free(&r);
}

/* OCI_SANDBOX_RUNTIME, _SHAPE, _EXPIRATION are the defaults of --runtime,
 * --shape, --expires-in-minutes. */
static void test_create_environment(void **state)
{
    (void)state;
    run_result r;
    const char *const env[] = {"OCI_SANDBOX_RUNTIME=python-3.12", "OCI_SANDBOX_SHAPE=MEDIUM",
                               "OCI_SANDBOX_EXPIRATION=PT90M30S", NULL};
    run_env = env;
    RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--display-name", "from env");
    expect_ok(&r, "sandbox create from env");
    cJSON *j = json_of(&r);
    assert_string_equal(str(j, "runtime"), "python-3.12");
    assert_string_equal(str(j, "shape"), "MEDIUM");
    assert_int_equal(cJSON_GetObjectItem(j, "expiresInMinutes")->valueint, 91); /* rounded up */
    char sbx[128];
    snprintf(sbx, sizeof sbx, "%s", str(j, "id"));
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox", "delete", "--sandbox-id", sbx);
    result_free(&r);
    /* options win */
    RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--shape", "LARGE", "--runtime",
        "python-3.11", "--expires-in-minutes", "30");
    expect_ok(&r, "sandbox create with options");
    j = json_of(&r);
    assert_string_equal(str(j, "runtime"), "python-3.11");
    assert_string_equal(str(j, "shape"), "LARGE");
    assert_int_equal(cJSON_GetObjectItem(j, "expiresInMinutes")->valueint, 30);
    snprintf(sbx, sizeof sbx, "%s", str(j, "id"));
    cJSON_Delete(j);
    result_free(&r);
    RUN(&r, NULL, "sandbox", "delete", "--sandbox-id", sbx);
    result_free(&r);
    /* refused before anything is sent: more than 48 h, no lifetime, not a duration */
    const char *const bad[] = {"OCI_SANDBOX_EXPIRATION=PT48H1M", "OCI_SANDBOX_EXPIRATION=PT0S",
                               "OCI_SANDBOX_EXPIRATION=forever"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *const env_bad[] = {bad[i], NULL};
        run_env = env_bad;
        RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--display-name", "bad env");
        assert_int_equal(r.status, 2);
        assert_true(one_line(r.err));
        assert_non_null(strstr(r.err, "OCI_SANDBOX_EXPIRATION"));
        result_free(&r);
    }
    const char *const env_48[] = {"OCI_SANDBOX_EXPIRATION=P2D", NULL};
    run_env = env_48;
    RUN(&r, NULL, "sandbox", "create", "--project-id", EMU_FIXTURE_PROJECT, "--display-name", "two days");
    expect_ok(&r, "sandbox create P2D");
    j = json_of(&r);
    assert_int_equal(cJSON_GetObjectItem(j, "expiresInMinutes")->valueint, 2880);
    snprintf(sbx, sizeof sbx, "%s", str(j, "id"));
    cJSON_Delete(j);
    result_free(&r);
    run_env = NULL;
    RUN(&r, NULL, "sandbox", "delete", "--sandbox-id", sbx);
    result_free(&r);
    RUN(&r, NULL, "sandbox", "list", "--display-name", "bad env");
    expect_ok(&r, "sandbox list");
    j = json_of(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 0);
    cJSON_Delete(j);
    result_free(&r);
}

/* Arguments after -- are taken as arguments, never as options. */
static void test_double_dash_api(void **state)
{
    (void)state;
    run_result r;
    RUN(&r, NULL, "sandbox", "get", "--", "--sandbox-id", "x");
    assert_int_equal(r.status, 2);
    assert_true(one_line(r.err));
    assert_non_null(strstr(r.err, "unexpected argument --sandbox-id"));
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_everything),         cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_json_format),        cmocka_unit_test(test_wait_for_state_checked),
        cmocka_unit_test(test_create_environment), cmocka_unit_test(test_double_dash_api),
        cmocka_unit_test(test_oci_names),          cmocka_unit_test(test_oci_names_at_work)};
    return par_run_group_tests_name("it_cli_api", tests, setup, teardown);
}
