/* The workspace from the shell, each step its own ocisbx process: a
 * background job started by `harness call exec` outlives that process and a
 * later one reads and kills it (both backends); `ocisbx exec` prints a line
 * as it is written; `ocisbx close` stops, waits and deletes, and says when a
 * sandbox was already gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "cli_run.h"
#include "emu_fixture.h"
#include "par_run.h"
#include "test_keys.h"

typedef struct world {
    emu_fixture *emu;  /* NULL: the local directory */
    char sandbox[128]; /* the emulator's sandbox */
    char dir[64];      /* the local workspace */
} world;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* argv of ocisbx [the tenancy's globals] CMD... with the backend's option
 * spliced in where "@" stands. */
static int build_argv(const world *w, const char *const *args, const char **argv, int cap)
{
    int n = 0;
    if (w->emu) {
        argv[n++] = "--config-file";
        argv[n++] = emu_fixture_config_path(w->emu);
        argv[n++] = "--endpoint";
        argv[n++] = emu_fixture_url(w->emu);
    }
    for (const char *const *a = args; *a && n < cap - 3; a++) {
        if (strcmp(*a, "@") == 0) {
            argv[n++] = w->emu ? "--sandbox-id" : "--local-dir";
            argv[n++] = w->emu ? w->sandbox : w->dir;
        } else {
            argv[n++] = *a;
        }
    }
    argv[n] = NULL;
    return n;
}

static void run_cli(const world *w, const char *const *args, cli_result *r)
{
    const char *argv[64];
    build_argv(w, args, argv, 64);
    if (cli_run(argv, NULL, NULL, r) != 0)
        fail_msg("could not run the CLI");
}

#define RUN(w, r, ...)                                       \
    do {                                                     \
        const char *const run_args_[] = {__VA_ARGS__, NULL}; \
        run_cli((w), run_args_, (r));                        \
    } while (0)

static cJSON *result_json(const cli_result *r, int want)
{
    if (r->status != want)
        fail_msg("exit %d (wanted %d)\nstdout: %s\nstderr: %s", r->status, want, r->out, r->err);
    cJSON *j = cJSON_Parse(r->out);
    if (!cJSON_IsObject(j))
        fail_msg("not a JSON object: %s", r->out);
    return j;
}

static int setup_local(void **state)
{
    world *w = calloc(1, sizeof *w);
    snprintf(w->dir, sizeof w->dir, "/tmp/it_cli_workspace_XXXXXX");
    if (!mkdtemp(w->dir))
        return -1;
    if (geteuid() == 0 && chown(w->dir, 65534, 65534) != 0)
        return -1;
    *state = w;
    return 0;
}

static int setup_oci_stop(void **state, const char *yaml)
{
    world *w = calloc(1, sizeof *w);
    emu_fixture_options eo = {0};
    eo.extra_yaml = yaml;
    if (emu_fixture_start(&eo, &w->emu) ||
        emu_fixture_new_sandbox(w->emu, NULL, NULL, w->sandbox, sizeof w->sandbox) != 0)
        return -1;
    *state = w;
    return 0;
}

/* A stop takes 1.5 s: close's wait for STOPPED is seen (and interrupted) */
static int setup_oci(void **state)
{
    return setup_oci_stop(state, "limits:\n  create_delay_ms: 20\n  stop_delay_ms: 1500\n");
}

/* A quick stop, for a case that only needs the sandbox closed */
static int setup_oci_quick_stop(void **state)
{
    return setup_oci_stop(state, "limits:\n  create_delay_ms: 20\n  stop_delay_ms: 20\n");
}

static int teardown(void **state)
{
    world *w = *state;
    int rc = 0;
    if (w->emu) {
        if (emu_fixture_stop(w->emu))
            rc = -1;
        emu_fixture_free(w->emu);
    }
    if (w->dir[0])
        test_rm_rf(w->dir);
    free(w);
    return rc;
}

/* A job of one process, read and killed by others. */
static void job_outlives_the_cli(void **state)
{
    world *w = *state;
    cli_result r;
    RUN(w, &r, "harness", "call", "@", "exec", "{\"command\":\"echo started; sleep 120\",\"background\":true}");
    cJSON *j = result_json(&r, 0);
    char id[64];
    snprintf(id, sizeof id, "%s", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "job_id")));
    cJSON_Delete(j);
    cli_result_free(&r);
    char args[160];
    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"status\"}", id);
    RUN(w, &r, "harness", "call", "@", "job", args);
    j = result_json(&r, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "running")));
    cJSON_Delete(j);
    cli_result_free(&r);

    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"kill\"}", id);
    int64_t t0 = now_ms();
    RUN(w, &r, "harness", "call", "@", "job", args);
    int64_t took = now_ms() - t0;
    j = result_json(&r, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "killed")));
    if (took > 15000) /* 5 s is the promise; a loaded machine gets more */
        fail_msg("job kill took %lld ms", (long long)took);
    cJSON_Delete(j);
    cli_result_free(&r);

    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"status\"}", id);
    RUN(w, &r, "harness", "call", "@", "job", args);
    j = result_json(&r, 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "running")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "exit_code")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "killed")));
    cJSON_Delete(j);
    cli_result_free(&r);

    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"kill\"}", id);
    t0 = now_ms();
    RUN(w, &r, "harness", "call", "@", "job", args);
    j = result_json(&r, 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "killed")));
    assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "reason")));
    assert_true(now_ms() - t0 < 15000);
    cJSON_Delete(j);
    cli_result_free(&r);
}

/* ocisbx exec's stdout gets a line as it is written: read through a pipe,
 * the first line comes 1 s before the command's end (it sleeps 1.5 s). */
static void exec_prints_as_written(void **state)
{
    world *w = *state;
    const char *const args[] = {"exec", "@", "--", "echo first; sleep 1.5; echo second", NULL};
    const char *argv[64];
    build_argv(w, args, argv, 64);
    cli_proc p;
    assert_int_equal(cli_run_start(argv, NULL, &p), 0); /* stdout: a file read as it grows */
    int64_t first_at = 0;
    for (int i = 0; !first_at && i < 1500; i++) { /* at most 30 s */
        char *now = cli_proc_stdout(&p);
        if (now && strstr(now, "first\n"))
            first_at = now_ms();
        free(now);
        if (!first_at)
            usleep(20000);
    }
    cli_result r;
    assert_int_equal(cli_run_finish(&p, &r), 0);
    int64_t end = now_ms();
    assert_int_equal(r.status, 0);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", r.out);
    cli_result_free(&r);
    assert_string_equal(buf, "first\nsecond\n");
    assert_true(first_at > 0);
    if (end - first_at < 1000)
        fail_msg("the first line came only %lld ms before the end", (long long)(end - first_at));
}

static int sandbox_status(world *w, const char *id)
{
    char path[256];
    snprintf(path, sizeof path, "/sandboxes/%s", id);
    emu_fixture_result res;
    assert_int_equal(emu_fixture_request(w->emu, "GET", path, NULL, &res), 0);
    int st = (int)res.status;
    emu_fixture_result_free(&res);
    return st;
}

/* close: stop, wait for STOPPED, delete; gone already is exit 0 with a line
 * naming the id. */
static void close_stops_then_deletes(void **state)
{
    world *w = *state;
    char id[128];
    cli_result r;
    assert_int_equal(emu_fixture_new_sandbox(w->emu, NULL, NULL, id, sizeof id), 0);
    int64_t t0 = now_ms();
    RUN(w, &r, "close", "--sandbox-id", id);
    int64_t took = now_ms() - t0;
    if (r.status != 0)
        fail_msg("close: exit %d: %s", r.status, r.err);
    assert_true(took >= 1000); /* it waited for STOPPED (the tenancy takes 1.5 s) */
    assert_int_equal(sandbox_status(w, id), 404);
    cli_result_free(&r);

    RUN(w, &r, "close", "--sandbox-id", id);
    assert_int_equal(r.status, 0);
    char want[256];
    snprintf(want, sizeof want, "ocisbx close: sandbox %s was already gone (deleted or not found)\n", id);
    assert_string_equal(r.err, want);
    cli_result_free(&r);
}

/* close: a stop that does not finish in time (--stop-timeout): deleted, exit 1. */
static void close_stop_timeout_deletes_anyway(void **state)
{
    world *w = *state;
    char id[128];
    cli_result r;
    assert_int_equal(emu_fixture_new_sandbox(w->emu, NULL, NULL, id, sizeof id), 0);
    RUN(w, &r, "close", "--sandbox-id", id, "--stop-timeout", "1");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "not STOPPED within 1000 ms"));
    assert_non_null(strstr(r.err, "deleted anyway"));
    /* what happened first, then what was done about it */
    assert_true(strstr(r.err, "not STOPPED within 1000 ms") < strstr(r.err, "deleted anyway)"));
    assert_int_equal(sandbox_status(w, id), 404);
    cli_result_free(&r);
}

/* The same with the stop timeout from the setting's variable. */
static void close_stop_timeout_from_the_variable(void **state)
{
    world *w = *state;
    char id[128];
    cli_result r;
    assert_int_equal(emu_fixture_new_sandbox(w->emu, NULL, NULL, id, sizeof id), 0);
    const char *const args[] = {"close", "--sandbox-id", id, NULL};
    const char *argv[64];
    build_argv(w, args, argv, 64);
    const char *const env[] = {"OCI_SANDBOX_STOP_TIMEOUT=1", NULL};
    assert_int_equal(cli_run(argv, NULL, env, &r), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "not STOPPED within 1000 ms"));
    assert_int_equal(sandbox_status(w, id), 404);
    cli_result_free(&r);
}

/* Two Ctrl-C while close waits for STOPPED: the wait ends, the delete is
 * still sent (exit 1, the interruption said). */
static void close_interrupted_still_deletes(void **state)
{
    world *w = *state;
    char id[128];
    assert_int_equal(emu_fixture_new_sandbox(w->emu, NULL, NULL, id, sizeof id), 0);
    const char *const args[] = {"close", "--sandbox-id", id, NULL};
    const char *argv[64];
    build_argv(w, args, argv, 64);
    cli_proc p;
    assert_int_equal(cli_run_start(argv, NULL, &p), 0);
    usleep(500000); /* the stop is sent, the wait (1.5 s) under way */
    kill(p.pid, SIGINT);
    usleep(100000);
    kill(p.pid, SIGINT);
    cli_result r;
    assert_int_equal(cli_run_finish(&p, &r), 0);
    assert_int_equal(r.signal, 0);
    assert_int_equal(r.status, 1);
    char err[4096];
    snprintf(err, sizeof err, "%s", r.err);
    cli_result_free(&r);
    if (!strstr(err, "interrupted") || !strstr(err, "deleted anyway"))
        fail_msg("stderr: %s", err);
    assert_int_equal(sandbox_status(w, id), 404);
}

/* The commands table shows what the user ran, not the exec wrapper, and
 * the backend's own steps by name (a job's status here: the case runs in a
 * sandbox of its own, so it makes that step itself rather than count on
 * job_outlives_the_cli's, as it did when the cases shared one sandbox). */
static void commands_table_shows_user_command(void **state)
{
    world *w = *state;
    cli_result r;
    RUN(w, &r, "exec", "@", "--", "echo table-check | cat");
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
    RUN(w, &r, "harness", "call", "@", "exec", "{\"command\":\"echo table-job\",\"background\":true}");
    cJSON *j = result_json(&r, 0);
    char args[160];
    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"status\"}",
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "job_id")));
    cJSON_Delete(j);
    cli_result_free(&r);
    RUN(w, &r, "harness", "call", "@", "job", args);
    cJSON_Delete(result_json(&r, 0));
    cli_result_free(&r);
    RUN(w, &r, "sandbox-command-collection", "list", "--sandbox-id", w->sandbox, "--output", "table");
    if (r.status != 0)
        fail_msg("list: exit %d: %s", r.status, r.err);
    assert_non_null(strstr(r.out, "  echo table-check | cat\n"));
    if (strstr(r.out, "#!/bin/sh"))
        fail_msg("the wrapper is shown:\n%s", r.out);
    assert_null(strstr(r.out, "set --"));
    assert_non_null(strstr(r.out, "  ocisbx job-status\n")); /* the backend's own steps, by name */
    cli_result_free(&r);
}

/* The commands of the sandbox in state RUNNING whose text has marker. */
static int running_with(world *w, const char *marker)
{
    cli_result r;
    RUN(w, &r, "sandbox-command-collection", "list", "--sandbox-id", w->sandbox, "--output", "table");
    if (r.status != 0)
        fail_msg("list: exit %d: %s", r.status, r.err);
    int n = 0;
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n"))
        n += strstr(line, marker) && strstr(line, "RUNNING");
    cli_result_free(&r);
    return n;
}

/* Waits (at most 30 s) until no command with marker runs; false if one
 * still does. */
static bool none_running(world *w, const char *marker)
{
    for (int i = 0; i < 60; i++) {
        if (!running_with(w, marker))
            return true;
        usleep(500000);
    }
    return false;
}

/* Waits (at most 30 s) until a command with marker runs. */
static void wait_running(world *w, const char *marker)
{
    for (int i = 0; i < 150 && !running_with(w, marker); i++)
        usleep(200000);
}

/* SIGHUP during exec cancels as SIGINT does: the remote command ends
 * before the CLI exits 129 (before: it kept RUNNING, the CLI died). */
static void exec_hangup_ends_the_command(void **state)
{
    world *w = *state;
    const char *const args[] = {"exec", "@", "--", "sleep 45; echo hup-marker", NULL};
    const char *argv[64];
    build_argv(w, args, argv, 64);
    cli_proc p;
    assert_int_equal(cli_run_start(argv, NULL, &p), 0);
    wait_running(w, "hup-marker");
    kill(p.pid, SIGHUP);
    cli_result r;
    assert_int_equal(cli_run_finish(&p, &r), 0);
    int st = r.status, sig = r.signal;
    char err[1024];
    snprintf(err, sizeof err, "%s", r.err);
    cli_result_free(&r);
    if (sig || st != 129)
        fail_msg("exit %d, signal %d: %s", st, sig, err);
    assert_non_null(strstr(err, "interrupted (SIGHUP)"));
    assert_true(none_running(w, "hup-marker"));
}

/* A reader of stdout that goes (| head -2): the CLI exits 141 and the
 * remote command ends (before: SIGPIPE killed the CLI, the command kept
 * RUNNING). */
static void exec_broken_pipe_ends_the_command(void **state)
{
    world *w = *state;
    char fifo[160];
    snprintf(fifo, sizeof fifo, "/tmp/it_cli_ws_pipe_%d", (int)getpid());
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *const args[] = {"exec", "@", "--", "while true; do echo pipe-marker; sleep 0.1; done", NULL};
    const char *argv[64];
    build_argv(w, args, argv, 64);
    cli_run_options o = {0};
    o.stdout_to = fifo;
    o.timeout_s = 120;
    cli_proc p;
    assert_int_equal(cli_run_start(argv, &o, &p), 0);
    FILE *rd = fopen(fifo, "r");
    assert_non_null(rd);
    char line[64];
    for (int i = 0; i < 2; i++)
        assert_non_null(fgets(line, sizeof line, rd));
    assert_string_equal(line, "pipe-marker\n");
    fclose(rd); /* head -2 exits */
    cli_result r;
    assert_int_equal(cli_run_finish(&p, &r), 0);
    int st = r.status, sig = r.signal;
    cli_result_free(&r);
    unlink(fifo);
    if (sig || st != 141)
        fail_msg("exit %d, signal %d (wanted exit 141)", st, sig);
    assert_true(none_running(w, "pipe-marker"));
}

/* The sandbox closed by another process while exec runs: the error says
 * the command was ended and the sandbox is gone (before: "the wrapper gave
 * no trailer (exit status -1)"). Last: the sandbox is gone after it. */
static void exec_sandbox_closed_meanwhile(void **state)
{
    world *w = *state;
    const char *const args[] = {"exec", "@", "--", "sleep 40; echo gone-marker", NULL};
    const char *argv[64];
    build_argv(w, args, argv, 64);
    cli_proc p;
    assert_int_equal(cli_run_start(argv, NULL, &p), 0);
    wait_running(w, "gone-marker");
    cli_result c;
    RUN(w, &c, "close", "--sandbox-id", w->sandbox);
    assert_int_equal(c.status, 0);
    cli_result_free(&c);
    cli_result r;
    assert_int_equal(cli_run_finish(&p, &r), 0);
    char err[2048];
    snprintf(err, sizeof err, "%s", r.err);
    int st = r.status;
    cli_result_free(&r);
    if (st == 0 || strstr(err, "no trailer") || !strstr(err, "the command was ended") ||
        !(strstr(err, "is gone (HTTP 404") || strstr(err, " is DELET") || strstr(err, " is STOP")))
        fail_msg("exit %d: %s", st, err);
}

int main(void)
{
    const struct CMUnitTest both[] = {
        cmocka_unit_test(exec_prints_as_written),
        cmocka_unit_test(job_outlives_the_cli),
    };
    /* the longest first (a close waits for the tenancy's 1.5 s stop) */
    const struct CMUnitTest oci_quick_stop[] = {
        cmocka_unit_test(exec_sandbox_closed_meanwhile),
    };
    const struct CMUnitTest oci_long[] = {
        cmocka_unit_test(close_stops_then_deletes),
        cmocka_unit_test(exec_prints_as_written),
        cmocka_unit_test(close_stop_timeout_deletes_anyway),
        cmocka_unit_test(close_stop_timeout_from_the_variable),
    };
    const struct CMUnitTest oci[] = {
        cmocka_unit_test(close_interrupted_still_deletes),   cmocka_unit_test(job_outlives_the_cli),
        cmocka_unit_test(exec_broken_pipe_ends_the_command), cmocka_unit_test(exec_hangup_ends_the_command),
        cmocka_unit_test(commands_table_shows_user_command),
    };
    /* side by side, each case in a world of its own (a sandbox or a
     * directory): no case counts on what another left */
    const par_group groups[] = {
        PAR_GROUP("workspace CLI, emulator sandbox", oci_quick_stop, setup_oci_quick_stop, teardown),
        PAR_GROUP("workspace CLI, emulator sandbox", oci_long, setup_oci, teardown),
        PAR_GROUP("workspace CLI, local directory", both, setup_local, teardown),
        PAR_GROUP("workspace CLI, emulator sandbox", oci, setup_oci, teardown),
    };
    return par_run_groups(groups, sizeof groups / sizeof groups[0]) ? 1 : 0;
}
