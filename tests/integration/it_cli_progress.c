/* The CLI against a scripted server: retry progress lines on a terminal
 * only (a pty here), the final error after retries naming the attempts and
 * --no-retry, and --from-seq sent as given (0 included). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"
#include "test_http_server.h"
#include "test_keys.h"
#include "par_run.h"

static char dir[] = "/tmp/ocisbx-it-cli-progress-XXXXXX";
static char config[128];
static ths *srv;
static char *endpoint;

typedef struct result {
    int status;
    char out[8192]; /* stdout (with stderr too on a pty) */
    char err[8192];
} result;

/* The child's environment: none of the caller's tenancy or proxy
 * variables, HOME the test's directory. */
static const char *const *child_env(void)
{
    static char home[160];
    static const char *env[] = {"OCI_SANDBOX_PROFILE",
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
    snprintf(home, sizeof home, "HOME=%s", dir);
    return env;
}

/* The shared runner (tests/support/cli_run.h) with the global options for
 * the scripted server first; tty: its terminal. */
static void run_cli(result *r, const char *const *args, cli_tty tty)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = "--config-file";
    argv[n++] = config;
    argv[n++] = "--profile";
    argv[n++] = "VECTOR";
    argv[n++] = "--endpoint";
    argv[n++] = endpoint;
    for (const char *const *p = args; *p && n < 63; p++)
        argv[n++] = *p;
    argv[n] = NULL;
    cli_run_options o = {0};
    o.env = child_env();
    o.tty = tty;
    cli_result c;
    assert_int_equal(cli_run_ex(argv, &o, &c), 0);
    free(o.tty_out);
    r->status = c.status;
    size_t len = c.out_len < sizeof r->out - 1 ? c.out_len : sizeof r->out - 1; /* NUL bytes kept */
    memcpy(r->out, c.out, len);
    r->out[len] = 0;
    snprintf(r->err, sizeof r->err, "%s", c.err);
    cli_result_free(&c);
}

/* stdout and stderr to files (no terminal). */
static void run_pipes(result *r, const char *const *args)
{
    run_cli(r, args, CLI_TTY_NONE);
}

/* stdout and stderr on a pseudo-terminal (r->out: all it showed). */
static void run_pty(result *r, const char *const *args)
{
    run_cli(r, args, CLI_TTY_PTY_STDIO);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(config, sizeof config, "%s/config", dir);
    if (test_write_vector_config(config) != 0)
        return -1;
    if (ths_start(&srv) != 0)
        return -1;
    endpoint = ths_url(srv, "");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ths_stop(srv);
    free(endpoint);
    char p[160];
    snprintf(p, sizeof p, "%s/out", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/err", dir);
    unlink(p);
    unlink(config);
    rmdir(dir);
    return 0;
}

static const char *const GET3[] = {"--max-retries", "2", "sandbox", "get", "--sandbox-id", "sb1", NULL};

static void test_no_terminal_one_line(void **state)
{
    (void)state;
    ths_clear(srv);
    ths_set_default(srv, 503, "retry-after: 0\nopc-request-id: r1", "{\"code\":\"Busy\",\"message\":\"try later\"}");
    result r;
    run_pipes(&r, GET3);
    fprintf(stderr, "stderr: %s", r.err);
    assert_int_equal(r.status, 1);
    assert_int_equal(ths_count(srv), 3);
    assert_int_equal(count(r.err, "\n"), 1); /* one error line, no progress */
    assert_non_null(strstr(r.err, "after 3 attempts"));
    assert_non_null(strstr(r.err, "--no-retry"));

    /* --no-retry: one attempt, nothing about retries */
    ths_clear(srv);
    const char *const once[] = {"--no-retry", "sandbox", "get", "--sandbox-id", "sb1", NULL};
    run_pipes(&r, once);
    assert_int_equal(r.status, 1);
    assert_int_equal(ths_count(srv), 1);
    assert_null(strstr(r.err, "attempts"));
    assert_null(strstr(r.err, "--no-retry"));
}

static void test_terminal_shows_progress(void **state)
{
    (void)state;
    ths_clear(srv);
    ths_set_default(srv, 503, "retry-after: 0", "{\"code\":\"Busy\",\"message\":\"try later\"}");
    result r;
    run_pty(&r, GET3);
    fprintf(stderr, "pty: %s", r.out);
    assert_int_equal(r.status, 1);
    assert_int_equal(count(r.out, "; retrying in "), 2);
    assert_non_null(strstr(r.out, "ocisbx: HTTP 503"));
    assert_non_null(strstr(r.out, "(attempt 2 of 3; --no-retry to stop)"));
    assert_non_null(strstr(r.out, "(attempt 3 of 3; --no-retry to stop)"));
    assert_non_null(strstr(r.out, "after 3 attempts"));

    /* a refused connection says so */
    char *gone = NULL;
    {
        ths *tmp = NULL;
        assert_int_equal(ths_start(&tmp), 0);
        gone = ths_url(tmp, "");
        ths_stop(tmp);
    }
    char *saved = endpoint;
    endpoint = gone;
    const char *const fast[] = {"--max-retries", "1", "sandbox", "get", "--sandbox-id", "sb1", NULL};
    run_pty(&r, fast);
    endpoint = saved;
    free(gone);
    fprintf(stderr, "pty: %s", r.out);
    assert_int_equal(r.status, 1);
    assert_int_equal(count(r.out, "; retrying in "), 1);
    assert_non_null(strstr(r.out, "connect"));
    assert_non_null(strstr(r.out, "after 2 attempts"));
}

static void test_from_seq_as_given(void **state)
{
    (void)state;
    const char *fin = "{\"seq\":1,\"event\":\"FINISHED\",\"exitCode\":0}\n";
    ths_clear(srv);
    ths_set_default(srv, 200, "content-type: application/x-ndjson", fin);
    result r;
    const char *const zero[] = {"command", "events", "--sandbox-id", "sb1", "--command-id", "c1", "--from-seq",
                                "0",       NULL};
    run_pipes(&r, zero);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(ths_get(srv, 0)->target, "fromSeq=0"));
    ths_clear(srv);
    const char *const none[] = {"command", "events", "--sandbox-id", "sb1", "--command-id", "c1", NULL};
    run_pipes(&r, none);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(ths_get(srv, 0)->target, "fromSeq=1"));
    ths_clear(srv);
    /* the stream from 7 ends there (a FINISHED at seq 1 would be resumed, with backoff, until the resume limit) */
    ths_set_default(srv, 200, "content-type: application/x-ndjson",
                    "{\"seq\":7,\"event\":\"FINISHED\",\"exitCode\":0}\n");
    const char *const seven[] = {"command", "events", "--sandbox-id", "sb1", "--command-id", "c1", "--from-seq",
                                 "7",       NULL};
    run_pipes(&r, seven);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(ths_get(srv, 0)->target, "fromSeq=7"));
    ths_clear(srv);
    const char *const out0[] = {"command", "output", "--sandbox-id", "sb1", "--command-id", "c1", "--from-seq",
                                "0",       NULL};
    ths_set_default(srv, 200, "content-type: application/json", "{\"stdout\":\"\"}");
    run_pipes(&r, out0);
    assert_non_null(strstr(ths_get(srv, 0)->target, "fromSeq=0"));
    ths_clear(srv);
    const char *const outn[] = {"command", "output", "--sandbox-id", "sb1", "--command-id", "c1", NULL};
    run_pipes(&r, outn);
    assert_null(strstr(ths_get(srv, 0)->target, "fromSeq"));
}

/* NUL bytes of a chunk reach stdout, every byte. */
static void test_nul_bytes_written(void **state)
{
    (void)state;
    ths_clear(srv);
    ths_set_default(srv, 200, "content-type: application/x-ndjson",
                    "{\"seq\":1,\"event\":\"STDOUT\",\"data\":\"a\\u0000b\\n\"}\n"
                    "{\"seq\":2,\"event\":\"FINISHED\",\"exitCode\":0}\n");
    result r;
    const char *const ev[] = {"command", "events", "--sandbox-id", "sb1", "--command-id", "c1", NULL};
    run_pipes(&r, ev);
    assert_int_equal(r.status, 0);
    assert_memory_equal(r.out, "a\0b\n", 4);
}

/* file read to stdout: nothing is written unless the content checks out. */
static void test_file_read_stdout_after_check(void **state)
{
    (void)state;
    ths_clear(srv);
    ths_push(srv, 200, "opc-content-sha256: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "hello");
    result r;
    const char *const rd[] = {"file", "read", "--sandbox-id", "sb1", "--file-path", "/workspace/a", "--to-file",
                              "-",    NULL};
    run_pipes(&r, rd);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "does not match"));
    ths_push(srv, 200, "opc-content-sha256: LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=", "hello");
    run_pipes(&r, rd);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "hello");
}

/* A bad value is a usage error (2) whichever option it is in, before any request. */
static void test_bad_values_exit_2(void **state)
{
    (void)state;
    ths_clear(srv);
    result r;
    const char *const ext[] = {"sandbox", "extend", "--sandbox-id", "sb1", "--additional-duration", "30", NULL};
    run_pipes(&r, ext);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--additional-duration"));
    const char *const to[] = {"command", "run", "--sandbox-id", "sb1", "--command", "true", "--timeout", "5m", NULL};
    run_pipes(&r, to);
    assert_int_equal(r.status, 2);
    const char *const snap[] = {"snapshot", "create", "--sandbox-id", "sb1", "--expiration-duration", "7d", NULL};
    run_pipes(&r, snap);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--expiration-duration"));
    /* the lifetime: -1 or 1..2880, named with its range */
    const char *const life[] = {"sandbox", "create", "--project-id", "p1", "--expires-in-minutes", "2881", NULL};
    run_pipes(&r, life);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "-1 (no automatic expiry) or from 1 to 2880, not '2881'"));
    const char *const dur[] = {"sandbox", "create", "--project-id", "p1", "--expiration-duration", "P3D", NULL};
    run_pipes(&r, dur);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--expiration-duration P3D: more than 48 hours"));
    assert_int_equal(ths_count(srv), 0);
}

static void test_subcommand_help(void **state)
{
    (void)state;
    result r;
    const char *const h[] = {"command", "run-and-stream", "--help", NULL};
    run_pipes(&r, h);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "* --sandbox-id ID"));
    assert_non_null(strstr(r.out, "* --command TEXT"));
    assert_non_null(strstr(r.out, "    --timeout DURATION"));
    assert_non_null(strstr(r.out, "ISO 8601"));
    const char *const f[] = {"file", "write", "--help", NULL};
    run_pipes(&r, f);
    /* the OCI CLI's option name, the old one given as its alias */
    assert_non_null(strstr(r.out, "* --file PATH"));
    assert_non_null(strstr(r.out, "alias --from-file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_terminal_one_line),
        cmocka_unit_test(test_terminal_shows_progress),
        cmocka_unit_test(test_from_seq_as_given),
        cmocka_unit_test(test_nul_bytes_written),
        cmocka_unit_test(test_file_read_stdout_after_check),
        cmocka_unit_test(test_bad_values_exit_2),
        cmocka_unit_test(test_subcommand_help),
    };
    return par_run_group_tests_name("it_cli_progress", tests, setup, teardown);
}
