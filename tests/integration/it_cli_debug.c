/* The CLI's --debug (each request's method, URL, headers, status, phase
 * times and retry waits; the signature, tokens and secrets never shown) and
 * --deadline (a body that dribbles ends), and an error answer whose body
 * never ends (--read-timeout 5 --max-retries 1 ends promptly). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bad_server.h"
#include "cli_run.h"
#include "emu_fixture.h"
#include "ocisbx/util.h"
#include "par_run.h"

static emu_fixture *emu;

static int setup(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.https = true;
    o.extra_yaml = "faults:\n"
                   "  rules:\n"
                   "    - match: {method: GET, path: \"/sandboxSnapshots\"}\n"
                   "      respond: 503\n"
                   "      times: 1\n";
    return emu_fixture_start(&o, &emu) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    int rc = emu_fixture_stop(emu);
    emu_fixture_free(emu);
    return rc == 0 ? 0 : -1;
}

static void run_emu(cli_result *r, const char *profile, const char *path)
{
    char url[512];
    snprintf(url, sizeof url, "%s/" EMU_FIXTURE_API_VERSION "%s", emu_fixture_url(emu), path);
    const char *const args[] = {"--debug",   "--config-file", emu_fixture_config_path(emu),
                                "--profile", profile,         "--auth",
                                strcmp(profile, "SESSION") == 0 ? "security_token" : "api_key",
                                "--ca-bundle", emu_fixture_ca_path(emu), "raw-request", "--method", "GET",
                                "--url", url, NULL};
    assert_int_equal(cli_run(args, NULL, NULL, r), 0);
}

static void assert_has(const char *text, const char *what)
{
    if (!strstr(text, what))
        fail_msg("missing \"%s\" in:\n%s", what, text);
}

static void assert_lacks(const char *text, const char *what)
{
    if (strstr(text, what))
        fail_msg("\"%s\" must not appear in:\n%s", what, text);
}

/* Request and answer headers, the phases, the signature never. */
static void debug_shows_a_request(void **state)
{
    (void)state;
    cli_result r;
    run_emu(&r, "DEFAULT", "/sandboxes?projectId=" EMU_FIXTURE_PROJECT);
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    assert_has(r.err, "http: > GET https://");
    assert_has(r.err, "/sandboxes?projectId=");
    assert_has(r.err, "http: > date: ");
    assert_has(r.err, "http: > opc-request-id: ");
    assert_has(r.err, "http: > user-agent: libocisbx/");
    assert_has(r.err, "http: > authorization: <redacted>");
    assert_has(r.err, "headers \"date (request-target) host\"");
    assert_has(r.err, "http: < 200");
    assert_has(r.err, "http: < opc-request-id: ");
    assert_has(r.err, "http: < content-type: application/json");
    assert_has(r.err, "times: dns ");
    assert_has(r.err, " ms, connect ");
    assert_has(r.err, " ms, tls ");
    assert_has(r.err, " ms, first byte ");
    assert_has(r.err, " ms, total ");
    assert_lacks(r.err, "signature=");
    assert_lacks(r.err, "Signature version");
    cli_result_free(&r);
}

/* A session token (the keyId "ST$<token>") never appears, nor its key. */
static void debug_hides_a_session_token(void **state)
{
    (void)state;
    cli_result r;
    run_emu(&r, "SESSION", "/sandboxes?projectId=" EMU_FIXTURE_PROJECT);
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    assert_has(r.err, "http: > authorization: <redacted>");
    assert_has(r.err, "signed with key ST$<redacted>");
    assert_lacks(r.err, EMU_FIXTURE_SESSION_TOKEN);
    assert_lacks(r.err, "signature=");
    cli_result_free(&r);
}

/* A retry's wait is shown between the two attempts. */
static void debug_shows_retry_waits(void **state)
{
    (void)state;
    cli_result r;
    run_emu(&r, "DEFAULT", "/sandboxSnapshots?projectId=" EMU_FIXTURE_PROJECT);
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    assert_has(r.err, "http: < 503");
    assert_has(r.err, "retrying in ");
    assert_has(r.err, "(attempt 2/8)");
    assert_has(r.err, "http: < 200");
    cli_result_free(&r);
}

static void run_bad(cli_result *r, bad_server *s, const char *const *globals)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", bad_server_port(s));
    const char *args[24];
    int n = 0;
    for (const char *const *g = globals; *g; g++)
        args[n++] = *g;
    args[n++] = "--config-file";
    args[n++] = emu_fixture_config_path(emu);
    args[n++] = "raw-request";
    args[n++] = "--method";
    args[n++] = "GET";
    args[n++] = "--url";
    args[n++] = url;
    args[n] = NULL;
    assert_int_equal(cli_run(args, NULL, NULL, r), 0);
}

/* issue 20 item 15: a 500 with an endless chunked body ends promptly. */
static void endless_error_body_ends(void **state)
{
    (void)state;
    bad_server *s = bad_server_start(BAD_ENDLESS_500);
    const char *const g[] = {"--read-timeout", "5", "--max-retries", "1", NULL};
    cli_result r;
    int64_t t0 = ocisbx_time_monotonic_ms();
    run_bad(&r, s, g);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    assert_int_equal(r.status, 1);
    assert_has(r.err, "500");
    assert_int_equal(bad_server_connections(s), 2);
    if (took > 60000)
        fail_msg("took %lld ms", (long long)took);
    cli_result_free(&r);
    bad_server_stop(s);
}

/* --deadline ends a body that dribbles a byte a second (the read timeout
 * never fires while bytes move). */
static void deadline_ends_a_dribble(void **state)
{
    (void)state;
    bad_server *s = bad_server_start(BAD_DRIBBLE);
    const char *const g[] = {"--read-timeout", "5", "--deadline", "2", NULL};
    cli_result r;
    int64_t t0 = ocisbx_time_monotonic_ms();
    run_bad(&r, s, g);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    assert_int_equal(r.status, 1);
    assert_has(r.err, "deadline passed");
    if (took > 30000)
        fail_msg("a 2 s deadline took %lld ms", (long long)took);
    cli_result_free(&r);
    bad_server_stop(s);
    const char *const bad[] = {"--deadline", "0", "raw-request", NULL};
    assert_int_equal(cli_run(bad, NULL, NULL, &r), 0);
    assert_int_equal(r.status, 2);
    assert_has(r.err, "option --deadline: must be an integer from 1 to 86400, not '0'");
    cli_result_free(&r);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(debug_shows_a_request),  cmocka_unit_test(debug_hides_a_session_token),
        cmocka_unit_test(debug_shows_retry_waits), cmocka_unit_test(endless_error_body_ends),
        cmocka_unit_test(deadline_ends_a_dribble),
    };
    return par_run_group_tests_name("it_cli_debug", tests, setup, teardown);
}
