/* The CLI's interruption and --debug:
 * - a real SIGINT / SIGTERM to the ocisbx process during a retry wait (a
 *   503 asking for 60 s) or a --wait-for-state poll (60 s interval) ends it
 *   cleanly: exit 130 / 143, one "interrupted" line, no further request;
 * - --debug against the emulator prints the library's request lines on
 *   stderr, and never the session token, a signature value or an --env
 *   value. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"
#include "emu_fixture.h"
#include "ocisbx/util.h"
#include "test_http_server.h"
#include "test_keys.h"
#include "par_run.h"

#define SECRET_ENV_VALUE "sekrit-env-value-7f3a9c"

static char dir[] = "/tmp/ocisbx-it-cli-signals-XXXXXX";
static char config[128];
static ths *srv;

typedef cli_proc proc;

/* Starts ocisbx with args (NULL-terminated) through the shared runner
 * (tests/support/cli_run.h): stdout and stderr collected, none of the
 * caller's tenancy or proxy variables, HOME the test's directory. */
static void spawn(proc *p, const char *const *args)
{
    static char home[200];
    snprintf(home, sizeof home, "HOME=%s", dir);
    static const char *const env[] = {"OCI_SANDBOX_PROFILE",
                                      "OCI_SANDBOX_REGION",
                                      "OCI_SANDBOX_ENDPOINT",
                                      "OCI_CONFIG_FILE",
                                      "http_proxy",
                                      "https_proxy",
                                      "HTTP_PROXY",
                                      "HTTPS_PROXY",
                                      "ALL_PROXY",
                                      "all_proxy",
                                      home,
                                      NULL};
    cli_run_options o = {0};
    o.env = env;
    assert_int_equal(cli_run_start(args, &o, p), 0);
}

/* stderr of the last reaped (or still running) child. */
static char err_text[256 * 1024];

/* The exit status (killed by a signal: never a clean 130/143); its stderr
 * kept for slurp_err. */
static int reap(proc *p)
{
    cli_result r;
    assert_int_equal(cli_run_finish(p, &r), 0);
    snprintf(err_text, sizeof err_text, "%s", r.err);
    int st = r.signal ? 128 + r.signal + 1000 : r.status;
    cli_result_free(&r);
    return st;
}

/* What the child wrote on stderr: so far, or (reaped) all of it. */
static char *slurp_err(const proc *p, bool reaped)
{
    if (!reaped) {
        char *now = cli_proc_stderr(p);
        snprintf(err_text, sizeof err_text, "%s", now ? now : "");
        free(now);
    }
    return err_text;
}

/* Waits (event: the server saw n requests) at most 60 s; on failure the
 * child is killed and its stderr shown. */
static void wait_requests(proc *p, size_t n)
{
    for (int i = 0; i < 6000 && ths_count(srv) < n; i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (ths_count(srv) < n) {
        kill(p->pid, SIGKILL);
        reap(p);
        fail_msg("the server saw %zu requests, not %zu; stderr: %s", ths_count(srv), n, slurp_err(p, true));
    }
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(config, sizeof config, "%s/config", dir);
    if (test_write_vector_config(config) != 0)
        return -1;
    return ths_start(&srv);
}

static int teardown(void **state)
{
    (void)state;
    ths_stop(srv);
    char p[200];
    snprintf(p, sizeof p, "%s/err", dir);
    unlink(p);
    unlink(config);
    rmdir(dir);
    return 0;
}

/* Runs ocisbx cmd against the scripted server, sends sig once the server has
 * seen after_requests requests, and checks the clean exit: want_status, the
 * one line want_line on stderr, no request after the signal, and long
 * before the 60 s waits the server asked for. */
static void run_interrupted(const char *const *cmd, size_t after_requests, int sig, int want_status,
                            const char *want_line)
{
    char *endpoint = ths_url(srv, "");
    const char *args[32];
    int n = 0;
    const char *globals[] = {"--config-file", config, "--profile", "VECTOR", "--endpoint", endpoint, NULL};
    for (const char *const *g = globals; *g; g++)
        args[n++] = *g;
    for (const char *const *c = cmd; *c; c++)
        args[n++] = *c;
    args[n] = NULL;
    proc p;
    int64_t t0 = ocisbx_time_monotonic_ms();
    spawn(&p, args);
    wait_requests(&p, after_requests);
    assert_int_equal(kill(p.pid, sig), 0);
    int status = reap(&p);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    free(endpoint);
    const char *err = slurp_err(&p, true);
    fprintf(stderr, "stderr: %s", err);
    assert_int_equal(status, want_status);
    assert_string_equal(err, want_line);              /* exactly the one line */
    assert_int_equal(ths_count(srv), after_requests); /* nothing sent after the signal */
    assert_true(took < 30000);                        /* neither the 60 s retry wait nor the 60 s poll was served */
}

static void test_sigint_during_retry_wait(void **state)
{
    (void)state;
    ths_clear(srv);
    ths_set_default(srv, 503, "retry-after: 60", "{\"code\":\"Busy\",\"message\":\"later\"}");
    const char *const cmd[] = {"sandbox", "get", "--sandbox-id", "sb1", NULL};
    run_interrupted(cmd, 1, SIGINT, 130, "ocisbx: interrupted (SIGINT)\n");
}

/* resume answers (request 1), then the wait polls (request 2, then every
 * 60 s): the signal comes once the first poll was seen */
static void test_sigterm_during_wait_for_state(void **state)
{
    (void)state;
    ths_clear(srv);
    ths_set_default(srv, 200, "content-type: application/json", "{\"id\":\"sb1\",\"lifecycleState\":\"CREATING\"}");
    const char *const cmd[] = {
        "sandbox", "resume", "--sandbox-id", "sb1", "--wait-for-state", "RUNNING", "--wait-interval-seconds",
        "60",      NULL};
    run_interrupted(cmd, 2, SIGTERM, 143, "ocisbx: interrupted (SIGTERM)\n");
}

/* --debug against the emulator (security token auth: a secret in every
 * keyId) */
static void test_debug_redacted(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    emu_fixture *emu = NULL;
    assert_int_equal(emu_fixture_start(&o, &emu), 0);
    const char *const args[] = {
        "--debug",           "--config-file", emu_fixture_config_path(emu),  "--profile", "SESSION", "--auth",
        "security_token",    "--endpoint",    emu_fixture_url(emu),          "sandbox",   "create",  "--project-id",
        EMU_FIXTURE_PROJECT, "--env",         "API_TOKEN=" SECRET_ENV_VALUE, NULL};
    proc p;
    spawn(&p, args);
    int status = reap(&p);
    char *err = strdup(slurp_err(&p, true));
    fprintf(stderr, "--debug stderr:\n%s", err);
    assert_int_equal(status, 0);
    assert_non_null(strstr(err, "ocisbx: [debug] http: POST "));
    assert_non_null(strstr(err, "/sandboxes?projectId=" EMU_FIXTURE_PROJECT " -> 200 (opc-request-id: "));
    assert_null(strstr(err, EMU_FIXTURE_SESSION_TOKEN));
    assert_null(strstr(err, SECRET_ENV_VALUE));
    for (const char *s = err; (s = strstr(s, "signature=\"")) != NULL; s++)
        assert_int_equal(strncmp(s, "signature=\"<redacted>", 21), 0);
    /* without --debug: nothing on stderr */
    const char *const quiet[] = {"--config-file",
                                 emu_fixture_config_path(emu),
                                 "--profile",
                                 "SESSION",
                                 "--auth",
                                 "security_token",
                                 "--endpoint",
                                 emu_fixture_url(emu),
                                 "sandbox",
                                 "list",
                                 "--project-id",
                                 EMU_FIXTURE_PROJECT,
                                 NULL};
    spawn(&p, quiet);
    assert_int_equal(reap(&p), 0);
    assert_string_equal(slurp_err(&p, true), "");
    free(err);
    assert_int_equal(emu_fixture_stop(emu), 0);
    emu_fixture_free(emu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigint_during_retry_wait),
        cmocka_unit_test(test_sigterm_during_wait_for_state),
        cmocka_unit_test(test_debug_redacted),
    };
    return par_run_group_tests_name("it_cli_signals", tests, setup, teardown);
}
