/* ocisbx fleet exec against the test tenancy: the JSON's shape and field
 * names, OCISBX_FLEET_INDEX, table output, a failing create on its own row
 * while the others go on, --sandbox-ids closes nothing, and SIGINT half way
 * leaves no sandbox (the tenancy's list after). */
#include <stdbool.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "bad_server.h"
#include "cli_run.h"
#include "emu_fixture.h"
#include "ocisbx/util.h"
#include "par_run.h"

static emu_fixture *plain, *faulty, *lying; /* lying: GetSandbox answers 404 (seeded draws) */

static void start_url(emu_fixture *e, const char *url, const char *const *args, cli_proc *p);

static void start(emu_fixture *e, const char *const *args, cli_proc *p)
{
    start_url(e, emu_fixture_url(e), args, p);
}

static void start_url(emu_fixture *e, const char *url, const char *const *args, cli_proc *p)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = "--config-file";
    argv[n++] = emu_fixture_config_path(e);
    argv[n++] = "--endpoint";
    argv[n++] = url;
    for (const char *const *a = args; *a && n < 63; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    static const char *const env[] = {"OCI_SANDBOX_ENDPOINT", "OCI_SANDBOX_REGION", "OCI_SANDBOX_PROJECT_ID", NULL};
    cli_run_options o = {0};
    o.env = env;
    o.timeout_s = 300;
    assert_int_equal(cli_run_start(argv, &o, p), 0);
}

#define RUN(r, e, ...)                                   \
    do {                                                 \
        const char *const args_[] = {__VA_ARGS__, NULL}; \
        cli_proc p_;                                     \
        start(e, args_, &p_);                            \
        assert_int_equal(cli_run_finish(&p_, r), 0);     \
    } while (0)

/* How many of e's sandboxes are not DELETED; with_command: how many of
 * those have a command (the fleet's execs run). */
static int count_sandboxes(emu_fixture *e, bool with_command)
{
    cJSON *j = NULL;
    char path[256];
    snprintf(path, sizeof path, "/sandboxes?projectId=%s&limit=1000", EMU_FIXTURE_PROJECT);
    if (emu_fixture_json(e, "GET", path, NULL, 200, &j) != 0)
        return -1;
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "items"))
    {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(it, "lifecycleState");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
        if (cJSON_IsString(st) && strcmp(st->valuestring, "DELETED") == 0)
            continue;
        if (!with_command) {
            n++;
            continue;
        }
        cJSON *c = NULL;
        if (!cJSON_IsString(id))
            continue;
        snprintf(path, sizeof path, "/sandboxes/%s/commands", id->valuestring);
        if (emu_fixture_json(e, "GET", path, NULL, 200, &c) == 0)
            n += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c, "items")) > 0;
        cJSON_Delete(c);
    }
    cJSON_Delete(j);
    return n;
}

static int live(emu_fixture *e)
{
    return count_sandboxes(e, false);
}

static int with_a_command(emu_fixture *e)
{
    return count_sandboxes(e, true);
}

static const cJSON *field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!v)
        fail_msg("no field %s", name);
    return v;
}

/* Exactly these keys, in this order. */
static void keys_are(const cJSON *o, const char *const *names)
{
    const cJSON *c = o->child;
    for (const char *const *n = names; *n; n++, c = c->next) {
        assert_non_null(c);
        assert_string_equal(c->string, *n);
    }
    assert_null(c);
}

static const char *const row_keys[] = {"index",  "sandbox_id", "exit_code", "timed_out", "truncated",
                                       "output", "duration_ms", "error",    NULL};
static const char *const summary_keys[] = {"ok",          "failed",      "wall_ms",    "create_p50_ms",
                                           "create_p99_ms", "exec_p50_ms", "exec_p99_ms", "throttled", NULL};

static void json_shape_and_index(void **state)
{
    (void)state;
    cli_result r;
    RUN(&r, plain, "fleet", "exec", "--project-id", EMU_FIXTURE_PROJECT, "--count", "6", "--concurrency", "3",
        "--env", "GREETING=hi", "--", "echo $GREETING-$OCISBX_FLEET_INDEX");
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    keys_are(j, (const char *const[]){"sandboxes", "summary", NULL});
    const cJSON *rows = field(j, "sandboxes");
    assert_int_equal(cJSON_GetArraySize(rows), 6);
    int i = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        keys_are(row, row_keys);
        assert_int_equal(field(row, "index")->valueint, i);
        assert_true(cJSON_IsString(field(row, "sandbox_id")));
        assert_int_equal(field(row, "exit_code")->valueint, 0);
        assert_true(cJSON_IsFalse(field(row, "timed_out")));
        assert_true(cJSON_IsFalse(field(row, "truncated")));
        char want[32];
        snprintf(want, sizeof want, "hi-%d\n", i);
        assert_string_equal(field(row, "output")->valuestring, want);
        assert_true(cJSON_IsNumber(field(row, "duration_ms")));
        assert_true(cJSON_IsNull(field(row, "error")));
        i++;
    }
    const cJSON *s = field(j, "summary");
    keys_are(s, summary_keys);
    assert_int_equal(field(s, "ok")->valueint, 6);
    assert_int_equal(field(s, "failed")->valueint, 0);
    assert_true(field(s, "create_p99_ms")->valuedouble >= field(s, "create_p50_ms")->valuedouble);
    assert_true(field(s, "exec_p99_ms")->valuedouble >= field(s, "exec_p50_ms")->valuedouble);
    assert_true(field(s, "wall_ms")->valuedouble > 0);
    assert_int_equal(field(s, "throttled")->valueint, 0);
    assert_true(strstr(r.err, "fleet:") == NULL); /* no progress line off a terminal */
    cJSON_Delete(j);
    cli_result_free(&r);
    assert_int_equal(live(plain), 0);
}

/* An argv command; one of them exits 3: exit 1, its row says 3; table output. */
static void table_and_a_failing_command(void **state)
{
    (void)state;
    cli_result r;
    RUN(&r, plain, "fleet", "exec", "--project-id", EMU_FIXTURE_PROJECT, "--count", "4", "--output", "table", "--",
        "sh", "-c", "echo row-$OCISBX_FLEET_INDEX; [ $OCISBX_FLEET_INDEX != 2 ] || exit 3");
    assert_int_equal(r.status, 1);
    int lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 1 + 4 + 1); /* the header, a line a sandbox, the summary */
    assert_non_null(strstr(r.out, "INDEX"));
    assert_non_null(strstr(r.out, "row-0"));
    assert_non_null(strstr(r.out, "row-3"));
    const char *two = strstr(r.out, "\n2 ");
    assert_non_null(two);
    assert_non_null(strstr(two, " 3 "));
    assert_non_null(strstr(r.out, "ok 3, failed 1"));
    cli_result_free(&r);
    assert_int_equal(live(plain), 0);
}

/* The tenancy refuses one create (a fault, 400): that row has the error,
 * the others run and close. */
static void failing_create_on_its_row(void **state)
{
    (void)state;
    cli_result r;
    RUN(&r, faulty, "fleet", "exec", "--project-id", EMU_FIXTURE_PROJECT, "--count", "5", "--concurrency", "1", "--",
        "echo ok");
    assert_int_equal(r.status, 1);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    int failed = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, field(j, "sandboxes"))
    {
        const cJSON *e = field(row, "error");
        if (cJSON_IsNull(e)) {
            assert_string_equal(field(row, "output")->valuestring, "ok\n");
            continue;
        }
        failed++;
        keys_are(e, (const char *const[]){"code", "message", "status", "request_id", NULL});
        assert_int_equal(field(e, "status")->valueint, 400);
        assert_true(cJSON_IsString(field(e, "code")) && field(e, "code")->valuestring[0]);
        assert_true(cJSON_IsString(field(e, "request_id")));
        assert_true(cJSON_IsNull(field(row, "sandbox_id")));
        assert_true(cJSON_IsNull(field(row, "exit_code")));
    }
    assert_int_equal(failed, 1);
    assert_int_equal(field(field(j, "summary"), "ok")->valueint, 4);
    cJSON_Delete(j);
    cli_result_free(&r);
    assert_int_equal(live(faulty), 0);
}

/* --output table: an error row shows the service's code and HTTP status
 * (and the request id) before the message, which is cut. */
static void table_error_row_names_code_and_status(void **state)
{
    (void)state;
    char path[] = "/tmp/ocisbx-it-fleet-ids-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    fprintf(fp, "ocid1.sandbox.oc1..nosuchsandbox\n");
    fclose(fp);
    cli_result r;
    RUN(&r, plain, "fleet", "exec", "--sandbox-ids", path, "--output", "table", "--", "true");
    unlink(path);
    assert_int_equal(r.status, 1);
    const char *row = strstr(r.out, "\n0 ");
    assert_non_null(row);
    const char *err = strstr(row, "error: ");
    assert_non_null(err);
    static const char want[] = "error: NotAuthorizedOrNotFound (404, request ";
    if (strncmp(err, want, sizeof want - 1) != 0)
        fail_msg("error column: %.*s", (int)strcspn(err, "\n"), err);
    cli_result_free(&r);
}

/* --sandbox-ids: the command runs in those, and none is closed. */
static void sandbox_ids_closes_none(void **state)
{
    (void)state;
    char a[128], b[128], path[] = "/tmp/ocisbx-it-fleet-ids-XXXXXX";
    assert_int_equal(emu_fixture_new_sandbox(plain, NULL, NULL, a, sizeof a), 0);
    assert_int_equal(emu_fixture_new_sandbox(plain, NULL, NULL, b, sizeof b), 0);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    fprintf(fp, "%s\n\n  %s  \n", a, b);
    fclose(fp);
    cli_result r;
    RUN(&r, plain, "fleet", "exec", "--sandbox-ids", path, "--", "echo in-$OCISBX_FLEET_INDEX");
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    cJSON *j = cJSON_Parse(r.out);
    const cJSON *rows = field(j, "sandboxes");
    assert_int_equal(cJSON_GetArraySize(rows), 2);
    assert_string_equal(field(cJSON_GetArrayItem(rows, 0), "sandbox_id")->valuestring, a);
    assert_string_equal(field(cJSON_GetArrayItem(rows, 1), "sandbox_id")->valuestring, b);
    assert_string_equal(field(cJSON_GetArrayItem(rows, 1), "output")->valuestring, "in-1\n");
    cJSON_Delete(j);
    cli_result_free(&r);
    unlink(path);
    assert_int_equal(live(plain), 2);
    char del[200];
    snprintf(del, sizeof del, "/sandboxes/%s", a);
    assert_int_equal(emu_fixture_json(plain, "DELETE", del, NULL, 204, NULL), 0);
    snprintf(del, sizeof del, "/sandboxes/%s", b);
    assert_int_equal(emu_fixture_json(plain, "DELETE", del, NULL, 204, NULL), 0);
    assert_int_equal(live(plain), 0);
}

/* On a terminal: the progress line (stderr), cleared before the output. */
static void progress_on_a_terminal(void **state)
{
    (void)state;
    const char *argv[] = {"--config-file", emu_fixture_config_path(plain), "--endpoint", emu_fixture_url(plain),
                          "fleet", "exec", "--project-id", EMU_FIXTURE_PROJECT, "--count", "3", "--output", "table",
                          "--", "sleep 1; echo done", NULL};
    static const char *const env[] = {"OCI_SANDBOX_ENDPOINT", "OCI_SANDBOX_REGION", "OCI_SANDBOX_PROJECT_ID", NULL};
    cli_run_options o = {0};
    o.env = env;
    o.tty = CLI_TTY_PTY_STDIO;
    o.timeout_s = 300;
    cli_result r;
    assert_int_equal(cli_run_ex(argv, &o, &r), 0);
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.out);
    assert_non_null(strstr(r.out, "\rfleet: "));
    assert_non_null(strstr(r.out, "finished"));
    assert_non_null(strstr(r.out, "\r\033[K"));
    assert_non_null(strstr(r.out, "ok 3, failed 0"));
    free(o.tty_out);
    cli_result_free(&r);
    assert_int_equal(live(plain), 0);
}

/* SIGINT while sandboxes run: exit 130 within 30 s, none left. */
static void sigint_half_way_leaves_nothing(void **state)
{
    (void)state;
    const char *const args[] = {"fleet", "exec", "--project-id", EMU_FIXTURE_PROJECT, "--count", "30",
                                "--concurrency", "4", "--", "sleep 30", NULL};
    cli_proc p;
    start(plain, args, &p);
    int64_t end = ocisbx_time_monotonic_ms() + 120000;
    while (live(plain) < 3) {
        assert_true(ocisbx_time_monotonic_ms() < end);
        usleep(50 * 1000);
    }
    int64_t t0 = ocisbx_time_monotonic_ms();
    assert_int_equal(kill(p.pid, SIGINT), 0);
    cli_result r;
    assert_int_equal(cli_run_finish(&p, &r), 0);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    fprintf(stderr, "interrupted fleet: exit %d after %lld ms\n", r.status, (long long)took);
    assert_int_equal(r.status, 130);
    assert_true(took < 30000);
    assert_non_null(strstr(r.err, "interrupted"));
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    assert_true(field(field(j, "summary"), "failed")->valueint > 0);
    cJSON_Delete(j);
    cli_result_free(&r);
    assert_int_equal(live(plain), 0);
}

/* SIGINT, then the exit (130) after the --interrupt-grace of 1 s and
 * well before 30 s, whatever the server does: the grace bounds every
 * request (the default's 20 s is the same bound, only longer). */
static void interrupt_within_grace(cli_proc *p, cli_result *r)
{
    int64_t t0 = ocisbx_time_monotonic_ms();
    assert_int_equal(kill(p->pid, SIGINT), 0);
    assert_int_equal(cli_run_finish(p, r), 0);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    fprintf(stderr, "interrupted fleet: exit %d after %lld ms\n", r->status, (long long)took);
    assert_int_equal(r->status, 130);
    assert_true(took >= 900);
    assert_true(took < 15000);
}

/* A server that never answers: the creates' POSTs wait, SIGINT still ends
 * the fleet within its grace and says the creates were not answered. */
static void sigint_with_a_silent_server(void **state)
{
    (void)state;
    bad_server *bs = bad_server_start(BAD_SILENT);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", bad_server_port(bs));
    const char *const args[] = {"fleet", "exec", "--project-id", EMU_FIXTURE_PROJECT, "--count", "3",
                                "--interrupt-grace", "1", "--", "echo hi", NULL};
    cli_proc p;
    start_url(plain, url, args, &p);
    int64_t end = ocisbx_time_monotonic_ms() + 60000;
    while (bad_server_connections(bs) < 1 && ocisbx_time_monotonic_ms() < end)
        usleep(50 * 1000);
    usleep(500 * 1000);
    cli_result r;
    interrupt_within_grace(&p, &r);
    assert_non_null(strstr(r.err, "not answered in time"));
    cli_result_free(&r);
    bad_server_stop(bs);
}

/* The tenancy frozen (SIGSTOP) while sandboxes run: SIGINT ends the fleet
 * within its grace, and the sandboxes it could not close are named by id
 * (stderr and summary.not_closed); resumed, they are deleted by id. */
static void sigint_with_a_frozen_tenancy(void **state)
{
    (void)state;
    const char *const args[] = {"fleet",         "exec", "--project-id",      EMU_FIXTURE_PROJECT,
                                "--count",       "3",    "--concurrency",     "3",
                                "--interrupt-grace", "1", "--",              "sleep 30", NULL};
    cli_proc p;
    start(plain, args, &p);
    int64_t end = ocisbx_time_monotonic_ms() + 120000;
    while (live(plain) < 3) {
        assert_true(ocisbx_time_monotonic_ms() < end);
        usleep(50 * 1000);
    }
    while (with_a_command(plain) < 3) { /* the execs run */
        assert_true(ocisbx_time_monotonic_ms() < end);
        usleep(50 * 1000);
    }
    assert_int_equal(kill(emu_fixture_pid(plain), SIGSTOP), 0);
    cli_result r;
    interrupt_within_grace(&p, &r);
    assert_int_equal(kill(emu_fixture_pid(plain), SIGCONT), 0);
    assert_non_null(strstr(r.err, "not closed"));
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    const cJSON *nc = field(field(j, "summary"), "not_closed");
    assert_int_equal(cJSON_GetArraySize(nc), 3);
    const cJSON *id;
    cJSON_ArrayForEach(id, nc)
    {
        assert_non_null(strstr(r.err, id->valuestring));
        char del[200];
        snprintf(del, sizeof del, "/sandboxes/%s", id->valuestring);
        assert_int_equal(emu_fixture_json(plain, "DELETE", del, NULL, 204, NULL), 0);
    }
    cJSON_Delete(j);
    cli_result_free(&r);
    assert_int_equal(live(plain), 0);
}

/* GetSandbox's 404 is not trusted: the fleet's closes (and the creates'
 * cleanup) delete anyway, nothing is left. */
static void lying_404_fleet_leaves_nothing(void **state)
{
    (void)state;
    cli_result r;
    RUN(&r, lying, "fleet", "exec", "--project-id", EMU_FIXTURE_PROJECT, "--count", "12", "--concurrency", "4", "--",
        "echo ok");
    assert_true(r.status == 0 || r.status == 1);
    cli_result_free(&r);
    assert_int_equal(live(lying), 0);
}

/* ocisbx close: a 404 from GetSandbox still sends the delete; "already
 * gone" only when the delete answers 404. */
static void lying_404_close_deletes(void **state)
{
    (void)state;
    char ids[6][128];
    for (int i = 0; i < 6; i++)
        assert_int_equal(emu_fixture_new_sandbox(lying, NULL, NULL, ids[i], sizeof ids[i]), 0);
    cli_proc p[6]; /* the six closes at once */
    for (int i = 0; i < 6; i++) {
        const char *const args[] = {"close", "--sandbox-id", ids[i], NULL};
        start(lying, args, &p[i]);
    }
    for (int i = 0; i < 6; i++) {
        cli_result r;
        assert_int_equal(cli_run_finish(&p[i], &r), 0);
        if (r.status != 0)
            fail_msg("close %s: exit %d: %s", ids[i], r.status, r.err);
        assert_null(strstr(r.err, "already gone"));
        cli_result_free(&r);
    }
    assert_int_equal(live(lying), 0);
    cli_result r;
    RUN(&r, lying, "close", "--sandbox-id", ids[0]);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "already gone"));
    cli_result_free(&r);
}

/* A bad --env name, an --interrupt-grace out of range or a missing
 * --sandbox-ids file: exit 2 before any create. */
static void bad_command_lines_refused_first(void **state)
{
    (void)state;
    static const char *const envs[] = {"OCISBX_FLEET_INDEX=9", "A B=1", "1X=1", NULL};
    for (const char *const *ev = envs; *ev; ev++) {
        cli_result r;
        RUN(&r, plain, "fleet", "exec", "--project-id", EMU_FIXTURE_PROJECT, "--count", "2", "--env", *ev, "--",
            "echo x");
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, "--env"));
        cli_result_free(&r);
        assert_int_equal(live(plain), 0);
    }
    cli_result r;
    RUN(&r, plain, "fleet", "exec", "--project-id", EMU_FIXTURE_PROJECT, "--count", "2", "--interrupt-grace", "21",
        "--", "echo x");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--interrupt-grace"));
    cli_result_free(&r);
    assert_int_equal(live(plain), 0);
    RUN(&r, plain, "fleet", "exec", "--sandbox-ids", "no-such-ocisbx-ids.txt", "--", "echo x");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--sandbox-ids no-such-ocisbx-ids.txt: not found"));
    cli_result_free(&r);
}

/* Output with a NUL byte: nothing after it is lost (U+FFFD in its place,
 * the harness's rule for JSON text). */
static void nul_in_output_kept(void **state)
{
    (void)state;
    cli_result r;
    RUN(&r, plain, "fleet", "exec", "--project-id", EMU_FIXTURE_PROJECT, "--count", "1", "--", "printf 'x\\000y'");
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    assert_string_equal(field(cJSON_GetArrayItem(field(j, "sandboxes"), 0), "output")->valuestring, "x\xef\xbf\xbdy");
    cJSON_Delete(j);
    cli_result_free(&r);
    assert_int_equal(live(plain), 0);
}

/* Each case gets the one tenancy it uses (a case runs in a process of its
 * own, with its group's setup): plain, faulty (the first create refused)
 * or lying (GetSandbox answers 404, seeded draws). */
#define LIMITS "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n"

static int start_one(const char *yaml, emu_fixture **e)
{
    emu_fixture_options o = {0};
    o.extra_yaml = yaml;
    return emu_fixture_start(&o, e);
}

static int setup_plain(void **state)
{
    (void)state;
    return start_one(LIMITS, &plain);
}

static int setup_faulty(void **state)
{
    (void)state;
    return start_one(LIMITS "faults:\n  rules:\n    - match: {method: POST, path: \"/sandboxes\"}\n      respond: 400\n"
                            "      times: 1\n",
                     &faulty);
}

static int setup_lying(void **state)
{
    (void)state;
    return start_one(LIMITS "faults:\n  seed: 7\n  rules:\n    - match: {method: GET, path: \"/sandboxes/*\"}\n"
                            "      respond: 404\n      probability: 0.4\n",
                     &lying);
}

static int teardown(void **state)
{
    (void)state;
    emu_fixture **all[] = {&plain, &faulty, &lying};
    int rc = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (*all[i])
            rc |= emu_fixture_stop(*all[i]);
        emu_fixture_free(*all[i]);
        *all[i] = NULL;
    }
    return rc == 0 ? 0 : -1;
}

int main(void)
{
    /* the long ones first */
    const struct CMUnitTest on_plain[] = {
        cmocka_unit_test(sigint_with_a_frozen_tenancy),
        cmocka_unit_test(json_shape_and_index),
        cmocka_unit_test(sigint_with_a_silent_server),
        cmocka_unit_test(progress_on_a_terminal),
        cmocka_unit_test(table_and_a_failing_command),
        cmocka_unit_test(table_error_row_names_code_and_status),
        cmocka_unit_test(sandbox_ids_closes_none),
        cmocka_unit_test(sigint_half_way_leaves_nothing),
        cmocka_unit_test(bad_command_lines_refused_first),
        cmocka_unit_test(nul_in_output_kept),
    };
    const struct CMUnitTest on_faulty[] = {
        cmocka_unit_test(failing_create_on_its_row),
    };
    const struct CMUnitTest on_lying[] = {
        cmocka_unit_test(lying_404_close_deletes),
        cmocka_unit_test(lying_404_fleet_leaves_nothing),
    };
    const par_group groups[] = {
        PAR_GROUP("cli_fleet", on_lying, setup_lying, teardown),
        PAR_GROUP("cli_fleet", on_plain, setup_plain, teardown),
        PAR_GROUP("cli_fleet", on_faulty, setup_faulty, teardown),
    };
    return par_run_groups(groups, sizeof groups / sizeof groups[0]);
}
