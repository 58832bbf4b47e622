/* ocisbx create | exec | cp | close against the emulator (and exec on a
 * local directory): names, flags and exit statuses. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "cli_run.h"
#include "emu_fixture.h"
#include "ocisbx/api.h"
#include "par_run.h"

static char tmpdir[] = "/tmp/ocisbx-it-cli-backend-XXXXXX";
static emu_fixture *emu;      /* fast creation */
static emu_fixture *slow_emu; /* a sandbox never gets RUNNING */

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

/* ocisbx with the global options for e first, then args, started (the
 * shared runner, tests/support/cli_run.h): stdout and stderr collected, the
 * tenancy's variables of the caller's environment unset. */
static void start(emu_fixture *e, const char *const *args, cli_proc *p)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = "--config-file";
    argv[n++] = emu_fixture_config_path(e);
    argv[n++] = "--endpoint";
    argv[n++] = emu_fixture_url(e);
    argv[n++] = "--ca-bundle";
    argv[n++] = emu_fixture_ca_path(e);
    for (const char *const *a = args; *a && n < 63; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    static const char *const env[] = {"OCI_SANDBOX_ENDPOINT", "OCI_SANDBOX_REGION", "OCI_SANDBOX_PROJECT_ID", NULL};
    cli_run_options o = {0};
    o.env = env;
    assert_int_equal(cli_run_start(argv, &o, p), 0);
}

static void finish(cli_proc *p, run_result *r)
{
    assert_int_equal(cli_run_finish(p, r), 0);
}

#define RUN(r, e, ...)                                   \
    do {                                                 \
        const char *const args_[] = {__VA_ARGS__, NULL}; \
        cli_proc p_;                                     \
        start(e, args_, &p_);                            \
        finish(&p_, r);                                  \
    } while (0)

static void result_free(run_result *r)
{
    cli_result_free(r);
}

static void expect_status(const run_result *r, int want, const char *what)
{
    if (r->status != want)
        fail_msg("%s: exit %d (wanted %d), stderr: %s", what, r->status, want, r->err);
}

/* Sandboxes of the project that are not DELETED, through the API. */
static int live(emu_fixture *e)
{
    cJSON *j = NULL;
    char path[256];
    snprintf(path, sizeof path, "/sandboxes?projectId=%s", EMU_FIXTURE_PROJECT);
    if (emu_fixture_json(e, "GET", path, NULL, 200, &j) != 0)
        return -1;
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(j, "items");
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(it, "lifecycleState");
        if (!cJSON_IsString(st) || strcmp(st->valuestring, "DELETED") != 0)
            n++;
    }
    cJSON_Delete(j);
    return n;
}

/* Each case starts the one tenancy it uses (its group's setup, in the
 * case's own process): emu, or slow_emu for the create failures. */
static int setup_dir(void)
{
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int setup(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.https = true;
    o.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n";
    return setup_dir() == 0 && emu_fixture_start(&o, &emu) == 0 ? 0 : -1;
}

static int setup_slow(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.https = true;
    o.extra_yaml = "limits:\n  create_delay_ms: 600000\n";
    return setup_dir() == 0 && emu_fixture_start(&o, &slow_emu) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    int a = emu ? emu_fixture_stop(emu) : 0, b = slow_emu ? emu_fixture_stop(slow_emu) : 0;
    emu_fixture_free(emu);
    emu_fixture_free(slow_emu);
    emu = slow_emu = NULL;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    int rm = system(cmd);
    memcpy(tmpdir + strlen(tmpdir) - 6, "XXXXXX", 6); /* OCISBX_TEST_JOBS=1: the next group's mkdtemp */
    return (a == 0 && b == 0 && rm == 0) ? 0 : -1;
}

/* create (its fields, its --env in an exec), close twice */
static void test_create_exec_close(void **state)
{
    (void)state;
    run_result r;
    RUN(&r, emu, "create", "--project-id", EMU_FIXTURE_PROJECT, "--display-name", "cli-backend", "--env",
        "FROM_CREATE=yes", "--expiration", "PT90M", "--ready-timeout", "60", "--poll-interval", "1");
    expect_status(&r, 0, "create");
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    char id[256], want[400];
    snprintf(id, sizeof id, "%s", cJSON_GetObjectItemCaseSensitive(j, "id")->valuestring);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "lifecycleState")->valuestring, "RUNNING");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "expiresInMinutes")->valueint, 90);
    snprintf(want, sizeof want, "oci-sandbox:%s/%s", EMU_FIXTURE_REGION, id);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "label")->valuestring, want);
    cJSON_Delete(j);
    result_free(&r);
    assert_int_equal(live(emu), 1);

    RUN(&r, emu, "exec", "--sandbox-id", id, "--env", "X=1", "--secret-env", "S=two words", "--",
        "echo \"hi $X $S $FROM_CREATE\"; echo err >&2; exit 3");
    expect_status(&r, 3, "exec shell line");
    assert_string_equal(r.out, "hi 1 [REDACTED] yes\nerr\n"); /* a secret is never printed */
    result_free(&r);
    RUN(&r, emu, "close", "--sandbox-id", id);
    expect_status(&r, 0, "close");
    result_free(&r);
    assert_int_equal(live(emu), 0);
    RUN(&r, emu, "close", "--sandbox-id", id);
    expect_status(&r, 0, "close again");
    result_free(&r);
}

/* A sandbox of the tenancy's own (RUNNING): its id in id. */
static void new_sandbox(char *id, size_t cap)
{
    assert_int_equal(emu_fixture_new_sandbox(emu, NULL, NULL, id, cap), 0);
    assert_int_equal(emu_fixture_wait_state(emu, id, "RUNNING"), 0);
}

static void test_exec_flags(void **state)
{
    (void)state;
    char id[128];
    new_sandbox(id, sizeof id);
    run_result r;
    RUN(&r, emu, "exec", "--sandbox-id", id, "--", "printf", "%s|", "a b", "$HOME", "it's");
    expect_status(&r, 0, "exec argv");
    assert_string_equal(r.out, "a b|$HOME|it's|");
    result_free(&r);
    RUN(&r, emu, "exec", "--sandbox-id", id, "--timeout", "1", "--", "echo before; sleep 30");
    expect_status(&r, 124, "exec timeout");
    assert_string_equal(r.out, "before\n");
    result_free(&r);
    RUN(&r, emu, "exec", "--sandbox-id", id, "--max-output-bytes", "2000", "--", "seq 1 10000");
    expect_status(&r, 0, "exec capped");
    assert_true(r.out_len <= 2000);
    assert_non_null(strstr(r.out, "bytes of output dropped"));
    result_free(&r);
    RUN(&r, emu, "exec", "--sandbox-id", id, "--cwd", "/nowhere", "--", "pwd");
    expect_status(&r, 1, "exec outside cwd");
    result_free(&r);
    RUN(&r, emu, "exec", "--sandbox-id", id);
    expect_status(&r, 2, "exec without command");
    result_free(&r);
}

/* cp both ways, above the part size */
static void test_cp_both_ways(void **state)
{
    (void)state;
    char id[128];
    new_sandbox(id, sizeof id);
    run_result r;
    char src[512], back[512], dst[600];
    snprintf(src, sizeof src, "%s/src.bin", tmpdir);
    snprintf(back, sizeof back, "%s/back.bin", tmpdir);
    FILE *f = fopen(src, "wb");
    for (int i = 0; i < 9 * 1024 * 1024 + 77; i++)
        fputc((i * 7 + i / 4096) & 0xff, f);
    fclose(f);
    snprintf(dst, sizeof dst, "sbx:%s:/workspace/up/src.bin", id);
    RUN(&r, emu, "cp", src, dst);
    expect_status(&r, 0, "cp up");
    result_free(&r);
    RUN(&r, emu, "cp", dst, back);
    expect_status(&r, 0, "cp down");
    result_free(&r);
    size_t a = 0, b = 0;
    char *da = slurp(src, &a), *db = slurp(back, &b);
    assert_int_equal(a, b);
    assert_memory_equal(da, db, a);
    free(da);
    free(db);
    RUN(&r, emu, "cp", src, back);
    expect_status(&r, 2, "cp without a sandbox side");
    result_free(&r);
}

static void test_exec_local(void **state)
{
    (void)state;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/ws", tmpdir);
    assert_int_equal(mkdir(dir, 0755), 0);
    if (geteuid() == 0)
        assert_int_equal(chown(dir, 65534, 65534), 0);
    run_result r;
    RUN(&r, emu, "exec", "--local-dir", dir, "--", "pwd; touch made");
    expect_status(&r, 0, "exec local");
    assert_string_equal(r.out, "/workspace\n");
    result_free(&r);
    RUN(&r, emu, "exec", "--local-dir", dir, "--no-isolation", "--", "pwd");
    expect_status(&r, 0, "exec local host");
    char *abs = realpath(dir, NULL), want[700];
    snprintf(want, sizeof want, "%s\n", abs);
    free(abs);
    assert_string_equal(r.out, want);
    result_free(&r);
    RUN(&r, emu, "exec", "--local-dir", dir, "--network", "maybe", "--", "true");
    expect_status(&r, 2, "bad network");
    result_free(&r);
    RUN(&r, emu, "exec", "--local-dir", dir, "--sandbox-id", "x", "--", "true");
    expect_status(&r, 2, "both");
    result_free(&r);
    /* a --secret-env value reaches the command but is never printed */
    RUN(&r, emu, "exec", "--local-dir", dir, "--secret-env", "TOK=s3cr3t-Zq81", "--",
        "echo \"tok=$TOK\"; printenv TOK > /workspace/tok.txt");
    expect_status(&r, 0, "exec with a secret");
    assert_string_equal(r.out, "tok=[REDACTED]\n");
    assert_null(strstr(r.err, "s3cr3t-Zq81"));
    result_free(&r);
    char path[700];
    snprintf(path, sizeof path, "%s/tok.txt", dir);
    size_t n = 0;
    char *t = slurp(path, &n);
    assert_non_null(t);
    assert_string_equal(t, "s3cr3t-Zq81\n");
    free(t);
    /* a value the library refuses is a usage error naming the option */
    RUN(&r, emu, "exec", "--local-dir", dir, "--max-output-bytes", "100", "--", "true");
    expect_status(&r, 2, "max-output-bytes too small");
    assert_non_null(strstr(r.err, "--max-output-bytes: "));
    result_free(&r);
    /* --secret-env without "=" names a variable of the environment; none
     * set: the right option named, the argument (maybe a value) never shown */
    RUN(&r, emu, "exec", "--local-dir", dir, "--secret-env", "TOKSECRETVALUE", "--", "true");
    expect_status(&r, 2, "secret-env without =");
    assert_non_null(strstr(r.err, "--secret-env NAME takes the value of the variable NAME"));
    assert_null(strstr(r.err, "--env wants"));
    assert_null(strstr(r.err, "TOKSECRETVALUE"));
    result_free(&r);
    RUN(&r, emu, "exec", "--local-dir", dir, "--secret-env", "=hunter2", "--", "true");
    expect_status(&r, 2, "secret-env without a name");
    assert_null(strstr(r.err, "hunter2"));
    result_free(&r);
}

static void test_create_failures(void **state)
{
    (void)state;
    run_result r;
    RUN(&r, slow_emu, "create", "--project-id", EMU_FIXTURE_PROJECT, "--ready-timeout", "1", "--poll-interval", "1");
    expect_status(&r, 1, "create timing out");
    result_free(&r);
    assert_int_equal(live(slow_emu), 0);
    /* bad option values are usage errors (exit 2) naming the option, and nothing is created */
    static const char *const bad[][2] = {
        {"--expiration", "P3D"}, {"--expiration", "PT49H"}, {"--expiration", "bogus"}, {"--shape", "HUGE"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        RUN(&r, slow_emu, "create", "--project-id", EMU_FIXTURE_PROJECT, bad[k][0], bad[k][1]);
        expect_status(&r, 2, bad[k][1]);
        char want[64];
        snprintf(want, sizeof want, "create: %s: ", bad[k][0]);
        if (!strstr(r.err, want))
            fail_msg("%s %s: stderr %s lacks %s", bad[k][0], bad[k][1], r.err, want);
        result_free(&r);
        assert_int_equal(live(slow_emu), 0);
    }
    /* SIGINT while waiting */
    const char *const args[] = {"create", "--project-id", EMU_FIXTURE_PROJECT, "--poll-interval", "1", NULL};
    cli_proc proc;
    start(slow_emu, args, &proc);
    int seen = 0;
    for (int i = 0; i < 600 && !seen; i++) {
        seen = live(slow_emu) == 1;
        if (!seen)
            usleep(50000);
    }
    assert_true(seen);
    kill(proc.pid, SIGINT);
    finish(&proc, &r);
    expect_status(&r, 1, "create interrupted");
    result_free(&r);
    assert_int_equal(live(slow_emu), 0);
}

/* The sandbox's one command: 1 when it has started (want "timeStarted")
 * or finished ("timeFinished"), 0 while not, waiting up to 20 s. */
static int command_reached(const char *id, const char *want)
{
    char p[512];
    snprintf(p, sizeof p, "/sandboxes/%s/commands", id);
    for (int i = 0; i < 400; i++) {
        cJSON *j = NULL;
        if (emu_fixture_json(emu, "GET", p, NULL, 200, &j) != 0)
            return 0;
        const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "items"), 0);
        bool yes = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(c, want));
        cJSON_Delete(j);
        if (yes)
            return 1;
        usleep(50 * 1000);
    }
    return 0;
}

/* Ctrl-C during exec: exit 130, and the command in the sandbox is
 * canceled: it ends without its later side effect (it is not waited out). */
static void test_exec_interrupted(void **state)
{
    (void)state;
    char id[128];
    assert_int_equal(emu_fixture_new_sandbox(emu, NULL, NULL, id, sizeof id), 0);
    assert_int_equal(emu_fixture_wait_state(emu, id, "RUNNING"), 0);
    const char *const args[] = {"exec", "--sandbox-id", id, "--", "sleep 4; touch /workspace/after", NULL};
    cli_proc proc;
    start(emu, args, &proc);
    assert_true(command_reached(id, "timeStarted"));
    usleep(500 * 1000); /* the CLI has had its answer's head: it streams */
    kill(proc.pid, SIGINT);
    run_result r;
    finish(&proc, &r);
    expect_status(&r, 130, "exec interrupted");
    result_free(&r);
    /* ended: canceled (a command that went on would end after its 4 s,
     * having touched the file) */
    assert_true(command_reached(id, "timeFinished"));
    char p[512];
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(emu, "POST", p,
                                      "{\"command\":\"test -e /workspace/after && echo LEFT || echo GONE\"}", 200,
                                      &j),
                     0);
    char *txt = cJSON_PrintUnformatted(j);
    if (!strstr(txt, "GONE"))
        fail_msg("the interrupted command went on running: %s", txt);
    free(txt);
    cJSON_Delete(j);
    snprintf(p, sizeof p, "/sandboxes/%s", id);
    emu_fixture_json(emu, "DELETE", p, NULL, 204, NULL);
}

int main(void)
{
    /* create+close first: with OCISBX_TEST_JOBS=1 the cases share one
     * tenancy, and it counts the sandboxes (the others leave theirs) */
    const struct CMUnitTest on_emu[] = {
        cmocka_unit_test(test_create_exec_close),
        cmocka_unit_test(test_cp_both_ways),
        cmocka_unit_test(test_exec_flags),
        cmocka_unit_test(test_exec_local),
        cmocka_unit_test(test_exec_interrupted),
    };
    const struct CMUnitTest on_slow[] = {
        cmocka_unit_test(test_create_failures),
    };
    const par_group groups[] = {
        PAR_GROUP("ocisbx create/exec/cp/close", on_emu, setup, teardown),
        PAR_GROUP("ocisbx create/exec/cp/close", on_slow, setup_slow, teardown),
    };
    return par_run_groups(groups, sizeof groups / sizeof groups[0]);
}
