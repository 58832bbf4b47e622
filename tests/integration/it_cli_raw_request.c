/* ocisbx raw-request: the --dry-run output for the published vectors, the
 * one-line errors, global options and environment, and real sends to a
 * scripted server on loopback. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"
#include "test_http_server.h"
#include "par_run.h"

#define TENANCY "ocid1.tenancy.oc1..aaaaaaaaba3pv6wkcr4jqae5f15p2b2m2yt2j6rx32uzr4h25vqstifsfdsq"
#define USER "ocid1.user.oc1..aaaaaaaat5nvwcna5j6aqzjcaty5eqbb6qt2jvpkanghtgdaqedqw3rynjq"
#define FP "73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7"
#define KEY OCISBX_SOURCE_DIR "/tests/data/cavage-test-key.pem"
#define DATE "Thu, 05 Jan 2014 21:31:40 GMT"
#define GET_URL                                                                                                      \
    "https://iaas.us-phoenix-1.oraclecloud.com/20160918/"                                                            \
    "instances?availabilityDomain=Pjwf%3A%20PHX-AD-1&compartmentId=ocid1.compartment.oc1.."                          \
    "aaaaaaaam3we6vgnherjq5q2idnccdflvjsnog7mlr6rtdb25gilchfeyjxa&displayName=TeamXInstances&volumeId=ocid1.volume." \
    "oc1.phx.abyhqljrgvttnlx73nmrwfaux7kcvzfs3s66izvxf2h4lgvyndsdsnoiwr5q"
#define POST_URL "https://iaas.us-phoenix-1.oraclecloud.com/20160918/volumeAttachments"
#define AUTHZ_PREFIX \
    "authorization: Signature version=\"1\",keyId=\"" TENANCY "/" USER "/" FP "\",algorithm=\"rsa-sha256\","
#define GET_AUTHZ                                                                                    \
    AUTHZ_PREFIX "headers=\"date (request-target) host\",signature=\"GBas7grhyrhSKHP6AVIj/h5/Vp8bd/" \
                 "peM79H9Wv8kjoaCivujVXlpbKLjMPeDUhxkFIWtTtLBj3sUzaFj34XE6YZAHc9r2DmE4pMwOAy/"       \
                 "kiITcZxa1oHPOeRheC0jP2dqbTll8fmTZVwKZOKHYPtrLJIJQHJjNvxFWeHQjMaR7M=\""
#define POST_AUTHZ                                                                                               \
    AUTHZ_PREFIX "headers=\"date (request-target) host content-length content-type x-content-sha256\","          \
                 "signature=\"Mje8vIDPlwIHmD/cTDwRxE7HaAvBg16JnVcsuqaNRim23fFPgQfLoOOxae6WqKb1uPjYEl0qIdazWaBy/" \
                 "Ml8DRhqlocMwoSXv0fbukP8J5N80LCmzT/FFBvIvTB91XuXI3hYfP9Zt1l7S6ieVadHUfqBedWH0itrtPJBgKmrWso=\""

static char dir[512];
static char config[600];

typedef struct result {
    int status;
    char *out;
    char *err;
} result;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = 4096, n = 0;
    char *d = malloc(cap);
    size_t got;
    while ((got = fread(d + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap)
            d = realloc(d, cap *= 2);
    }
    d[n] = '\0';
    fclose(f);
    return d;
}

/* When set, the CLI's stdout goes there (/dev/full) instead of a file. */
static const char *stdout_to;

/* Runs the CLI (the shared runner, tests/support/cli_run.h) with argv
 * (NULL-terminated), stdin from `input` (may be NULL) and extra environment
 * "NAME=VALUE" entries (NULL-terminated); none of the caller's tenancy or
 * proxy variables, HOME the test's directory (never the user's
 * ~/.oci/config). */
static result run(const char *const *args, const char *input, const char *const *extra)
{
    char home[600];
    snprintf(home, sizeof home, "HOME=%s", dir);
    const char *env[64] = {"OCI_SANDBOX_PROFILE",
                           "OCI_SANDBOX_REGION",
                           "OCI_SANDBOX_ENDPOINT",
                           "OCI_CONFIG_FILE",
                           "http_proxy",
                           "https_proxy",
                           "HTTP_PROXY",
                           "HTTPS_PROXY",
                           "ALL_PROXY",
                           "all_proxy",
                           home};
    int k = 11;
    for (const char *const *p = extra; p && *p && k < 63; p++)
        env[k++] = *p;
    env[k] = NULL;
    cli_run_options o = {0};
    o.stdin_data = input;
    o.env = env;
    o.stdout_to = stdout_to;
    cli_result c;
    assert_int_equal(cli_run_ex(args, &o, &c), 0);
    result r = {c.status, c.out, c.err};
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

/* Exactly one line "ocisbx: ..." on stderr. */
static void assert_one_line_error(const result *r)
{
    assert_true(strncmp(r->err, "ocisbx: ", 8) == 0);
    size_t n = strlen(r->err);
    assert_true(n > 9 && r->err[n - 1] == '\n');
    assert_null(memchr(r->err, '\n', n - 1));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/it_cli_raw_request.%d", OCISBX_BINARY_DIR, (int)getpid());
    mkdir(dir, 0700);
    snprintf(config, sizeof config, "%s/config", dir);
    write_file(config, "[DEFAULT]\nregion=us-phoenix-1\n\n[VECTOR]\nuser=" USER "\nfingerprint=" FP "\nkey_file=" KEY
                       "\ntenancy=" TENANCY "\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Lines of out, checking the fixed ones and the form of the others. */
static void check_dry_run(const char *out, const char *const *expect_lines)
{
    char *copy = strdup(out), *save = NULL;
    size_t i = 0;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
        assert_non_null(expect_lines[i]);
        size_t n = strlen(expect_lines[i]);
        if (expect_lines[i][n - 1] == '*') /* a prefix: the value varies */
            assert_true(strncmp(line, expect_lines[i], n - 1) == 0);
        else
            assert_string_equal(line, expect_lines[i]);
    }
    assert_null(expect_lines[i]);
    free(copy);
}

static void test_dry_run_get_vector(void **state)
{
    (void)state;
    const char *args[] = {"--config-file", config,   "--profile", "VECTOR",    "raw-request", "--url",
                          GET_URL,         "--date", DATE,        "--dry-run", NULL};
    result r = run(args, NULL, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    /* send order: libcurl writes Host right after the request line */
    const char *lines[] = {"GET " GET_URL,
                           "host: iaas.us-phoenix-1.oraclecloud.com",
                           "date: " DATE,
                           GET_AUTHZ,
                           "opc-request-id: *",
                           "user-agent: libocisbx/*",
                           NULL};
    check_dry_run(r.out, lines);
    result_free(&r);
}

static void test_dry_run_post_vector(void **state)
{
    (void)state;
    const char *lines[] = {"POST " POST_URL,
                           "host: iaas.us-phoenix-1.oraclecloud.com",
                           "date: " DATE,
                           "content-length: 316",
                           "content-type: application/json",
                           "x-content-sha256: V9Z20UJTvkvpJ50flBzKE32+6m2zJjweHpDMX/U4Uy0=",
                           POST_AUTHZ,
                           "opc-request-id: *",
                           "user-agent: libocisbx/*",
                           NULL};
    /* Global options after the command, body from a file. */
    const char *args[] = {"raw-request",
                          "--method",
                          "POST",
                          "--url",
                          POST_URL,
                          "--body-file",
                          OCISBX_SOURCE_DIR "/tests/data/post-body.json",
                          "--date",
                          DATE,
                          "--dry-run",
                          "--config-file",
                          config,
                          "--profile=VECTOR",
                          NULL};
    result r = run(args, NULL, NULL);
    assert_int_equal(r.status, 0);
    check_dry_run(r.out, lines);
    result_free(&r);
    /* The same body from stdin, the profile from the environment. */
    char *body = slurp(OCISBX_SOURCE_DIR "/tests/data/post-body.json");
    const char *args2[] = {"--config-file", config, "raw-request", "--method", "post",      "--url", POST_URL,
                           "--body-file",   "-",    "--date",      DATE,       "--dry-run", NULL};
    const char *env[] = {"OCI_SANDBOX_PROFILE=VECTOR", NULL};
    r = run(args2, body, env);
    assert_int_equal(r.status, 0);
    check_dry_run(r.out, lines);
    result_free(&r);
    free(body);
}

static void test_option_beats_environment(void **state)
{
    (void)state;
    const char *env[] = {"OCI_SANDBOX_PROFILE=NOSUCH", NULL};
    const char *args[] = {"--config-file", config, "raw-request", "--url", GET_URL, "--dry-run", NULL};
    result r = run(args, NULL, env);
    assert_int_equal(r.status, 1);
    assert_one_line_error(&r);
    assert_non_null(strstr(r.err, "NOSUCH"));
    result_free(&r);
    const char *args2[] = {"--config-file", config,      "raw-request", "--url", GET_URL,
                           "--dry-run",     "--profile", "VECTOR",      NULL};
    r = run(args2, NULL, env);
    assert_int_equal(r.status, 0);
    result_free(&r);
}

static void test_errors(void **state)
{
    (void)state;
    char bad[700];
    snprintf(bad, sizeof bad, "%s/bad_config", dir);
    write_file(bad, "[VECTOR]\nuser=" USER "\nthis line is not a key value pair\n");
    char missing[700];
    snprintf(missing, sizeof missing, "%s/no_such_config", dir);
    char bad_fp[700];
    snprintf(bad_fp, sizeof bad_fp, "%s/bad_fp_config", dir);
    write_file(bad_fp, "[DEFAULT]\nuser=" USER "\nfingerprint=zz\nkey_file=" KEY "\ntenancy=" TENANCY "\n");
    struct {
        const char *args[16];
        int status;
        const char *needle;
    } cases[] = {
        {{"--config-file", missing, "raw-request", "--url", GET_URL, "--dry-run", NULL}, 1, "no_such_config"},
        {{"--config-file", bad, "--profile", "VECTOR", "raw-request", "--url", GET_URL, "--dry-run", NULL},
         1,
         "bad_config"},
        {{"--config-file", bad_fp, "raw-request", "--url", GET_URL, "--dry-run", NULL}, 1, "fingerprint"},
        {{"--config-file", config, "--profile", "VECTOR", "raw-request", "--dry-run", NULL}, 2, "--url"},
        {{"--config-file", config, "raw-request", "--url", GET_URL, "--frobnicate", NULL}, 2, "--frobnicate"},
        {{"--config-file", config, "raw-request", "--url", GET_URL, "--method", NULL}, 2, "--method"},
        {{"--config-file", config, "raw-request", "--url", GET_URL, "--method", "TRACE", NULL}, 2, "TRACE"},
        {{"--config-file", config, "raw-request", "--url", "not-a-url", NULL}, 2, "not-a-url"},
        {{"--config-file", config, "raw-request", "--url", GET_URL, "--date", "yesterday", NULL}, 2, "yesterday"},
        {{"--config-file", config, "--auth", "password", "raw-request", "--url", GET_URL, NULL}, 2, "password"},
        {{"frobnicate", NULL}, 2, "frobnicate"},
        {{"--config-file", config, "--profile", "VECTOR", "raw-request", "--url", "http://example.com/x", "--dry-run",
          NULL},
         1,
         "plain http"},
        {{"--config-file", config, "--profile", "VECTOR", "raw-request", "--url", GET_URL, "--body-file",
          "/nonexistent/body", "--dry-run", NULL},
         1,
         "/nonexistent/body"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r = run(cases[i].args, NULL, NULL);
        if (r.status != cases[i].status || !strstr(r.err, cases[i].needle))
            fail_msg("case %zu: status %d, stderr %s", i, r.status, r.err);
        assert_one_line_error(&r);
        assert_null(strstr(r.err, "signature=")); /* no secret material in errors */
        result_free(&r);
    }
    const char *noargs[] = {NULL};
    result r = run(noargs, NULL, NULL);
    assert_int_equal(r.status, 2);
    result_free(&r);
    const char *version[] = {"--version", NULL};
    r = run(version, NULL, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "ocisbx 0.1.0\n");
    result_free(&r);
}

static void test_dry_run_stdout_full_and_normalised_url(void **state)
{
    (void)state;
    const char *args[] = {"--config-file", config,   "--profile", "VECTOR",    "raw-request", "--url",
                          GET_URL,         "--date", DATE,        "--dry-run", NULL};
    stdout_to = "/dev/full";
    result r = run(args, NULL, NULL);
    stdout_to = NULL;
    assert_int_equal(r.status, 1);
    assert_one_line_error(&r);
    assert_non_null(strstr(r.err, "writing to standard output failed"));
    result_free(&r);
    /* --version too: every command's output goes through the same check */
    const char *ver[] = {"--version", NULL};
    stdout_to = "/dev/full";
    r = run(ver, NULL, NULL);
    stdout_to = NULL;
    assert_int_equal(r.status, 1);
    assert_one_line_error(&r);
    result_free(&r);
    /* The request line shows the URL as signed and sent. */
    const char *args2[] = {
        "--config-file", config, "--profile", "VECTOR", "raw-request", "--url", "https://h.example.com/a b/\xc3\xa9?",
        "--dry-run",     NULL};
    r = run(args2, NULL, NULL);
    assert_int_equal(r.status, 0);
    assert_true(strncmp(r.out, "GET https://h.example.com/a%20b/%C3%A9\nhost: h.example.com\n", 58) == 0);
    result_free(&r);
    const char *bad[] = {
        "--config-file", config, "--profile", "VECTOR", "raw-request", "--url", "https://h.example.com/%zz",
        "--dry-run",     NULL};
    r = run(bad, NULL, NULL);
    assert_int_equal(r.status, 2);
    assert_one_line_error(&r);
    assert_non_null(strstr(r.err, "malformed percent escape"));
    result_free(&r);
}

static void test_send_to_loopback(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    char *url = ths_url(srv, "/20231130/sandboxes/sb1?x=1");
    ths_push(srv, 200, "opc-request-id: srv-1", "{\"id\":\"sb1\"}");
    const char *args[] = {"--config-file", config, "--profile", "VECTOR", "raw-request", "--url", url, NULL};
    result r = run(args, NULL, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "{\"id\":\"sb1\"}");
    assert_string_equal(r.err, "HTTP 200 OK\n"); /* the status, always; stdout is the exact body */
    result_free(&r);
    const ths_request *rec = ths_get(srv, 0);
    assert_string_equal(rec->target, "/20231130/sandboxes/sb1?x=1");
    assert_non_null(strstr(ths_header(rec, "authorization"), "keyId=\"" TENANCY));
    { /* docs/auth.md: exactly libocisbx/<version> (<os>/<arch>; <libcurl version>), no suffix */
        const char *ua = ths_header(rec, "user-agent");
        assert_non_null(ua);
        assert_int_equal(strncmp(ua, "libocisbx/", 10), 0);
        assert_null(strstr(ua, "ocisbx-cli"));
        assert_int_equal(ua[strlen(ua) - 1], ')');
    }

    /* -i: status line and headers first. */
    ths_push(srv, 201, "opc-request-id: srv-2", "made");
    const char *args_i[] = {"--config-file", config, "--profile", "VECTOR", "raw-request", "--url", url, "-i", NULL};
    r = run(args_i, NULL, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_true(strncmp(r.out, "HTTP 201 Created\n", 17) == 0);
    assert_non_null(strstr(r.out, "\nopc-request-id: srv-2\n"));
    assert_non_null(strstr(r.out, "\n\nmade"));
    result_free(&r);

    /* A POST body from stdin arrives as sent. */
    ths_push(srv, 200, NULL, "ok");
    const char *args_post[] = {"--config-file", config,        "--profile", "VECTOR",
                               "raw-request",   "--url",       url,         "--method",
                               "POST",          "--body-file", "-",         "--content-type",
                               "text/plain",    NULL};
    r = run(args_post, "hello body", NULL);
    assert_int_equal(r.status, 0);
    rec = ths_get(srv, 2);
    assert_string_equal(rec->method, "POST");
    assert_string_equal(rec->body, "hello body");
    assert_string_equal(ths_header(rec, "content-type"), "text/plain");
    result_free(&r);

    /* An error answer: exit 1, one line with status, code and request id. */
    ths_push(srv, 404, "opc-request-id: srv-404", "{\"code\":\"NotAuthorizedOrNotFound\",\"message\":\"no sb\"}");
    r = run(args, NULL, NULL);
    assert_int_equal(r.status, 1);
    assert_one_line_error(&r); /* the status is in it */
    assert_non_null(strstr(r.err, "404 NotAuthorizedOrNotFound: no sb (opc-request-id: srv-404)"));
    result_free(&r);

    /* stdout that cannot be written: one line, exit 1 (sent and dry-run). */
    ths_push(srv, 200, NULL, "a body");
    stdout_to = "/dev/full";
    r = run(args, NULL, NULL);
    stdout_to = NULL;
    assert_int_equal(r.status, 1);
    assert_true(strncmp(r.err, "HTTP 200 OK\n", 12) == 0);
    result full = {r.status, r.out, r.err + 12};
    assert_one_line_error(&full);
    assert_non_null(strstr(r.err, "writing to standard output failed"));
    result_free(&r);
    free(url);
    ths_stop(srv);
}

/* `--` ends the options (a trailing one is accepted, what follows it is
 * an argument, never an option, global or not). */
static void test_double_dash(void **state)
{
    (void)state;
    const char *args[] = {"--config-file", config,   "--profile", "VECTOR",    "raw-request", "--url",
                          GET_URL,         "--date", DATE,        "--dry-run", "--",          NULL};
    result r = run(args, NULL, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_true(strncmp(r.out, "GET " GET_URL "\n", strlen("GET " GET_URL "\n")) == 0);
    result_free(&r);
    const char *args2[] = {"--config-file", config,  "--profile", "VECTOR",    "raw-request",
                           "--url",         GET_URL, "--",        "--dry-run", NULL};
    r = run(args2, NULL, NULL);
    assert_int_equal(r.status, 2);
    assert_one_line_error(&r);
    assert_non_null(strstr(r.err, "unexpected argument --dry-run"));
    result_free(&r);
    /* a global option after -- is not one */
    const char *args3[] = {"--config-file", config, "raw-request", "--url",  GET_URL,
                           "--dry-run",     "--",   "--profile",   "VECTOR", NULL};
    r = run(args3, NULL, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "unexpected argument --profile"));
    result_free(&r);
    /* before the command it ends the global options only */
    const char *args4[] = {"--config-file", config,  "--profile", "VECTOR",    "--",
                           "raw-request",   "--url", GET_URL,     "--dry-run", NULL};
    r = run(args4, NULL, NULL);
    assert_int_equal(r.status, 0);
    result_free(&r);
}

/* --no-retry, --max-retries, --connection-timeout, --read-timeout. */
static void test_retry_options(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    char *url = ths_url(srv, "/20231130/sandboxes");
    ths_set_default(srv, 503, NULL, "{\"code\":\"ServiceUnavailable\",\"message\":\"busy\"}");
    const char *no_retry[] = {"--config-file", config,  "--profile", "VECTOR", "--no-retry",
                              "raw-request",   "--url", url,         NULL};
    result r = run(no_retry, NULL, NULL);
    assert_int_equal(r.status, 1);
    assert_one_line_error(&r);
    assert_non_null(strstr(r.err, "503 ServiceUnavailable: busy"));
    assert_int_equal(ths_count(srv), 1);
    result_free(&r);
    ths_clear(srv);
    const char *zero[] = {"--config-file", config, "--profile",       "VECTOR", "raw-request",
                          "--url",         url,    "--max-retries=0", NULL};
    r = run(zero, NULL, NULL);
    assert_int_equal(r.status, 1);
    assert_int_equal(ths_count(srv), 1);
    result_free(&r);
    ths_clear(srv);
    const char *one[] = {"--config-file", config,  "--profile", "VECTOR", "--max-retries", "1",
                         "raw-request",   "--url", url,         NULL};
    r = run(one, NULL, NULL);
    assert_int_equal(r.status, 1);
    assert_int_equal(ths_count(srv), 2); /* one retry */
    result_free(&r);
    free(url);
    ths_stop(srv);
}

/* An answer slower than --read-timeout fails (once: --no-retry); a quick one is taken. */
static void test_timeout_options(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    char *url = ths_url(srv, "/20231130/sandboxes");
    ths_set_default(srv, 200, NULL, NULL);
    result r;
    ths_step slow = {200, NULL, "late", THS_RESPOND, 3000};
    ths_push_step(srv, &slow);
    const char *rt[] = {"--config-file",
                        config,
                        "--profile",
                        "VECTOR",
                        "--read-timeout",
                        "1",
                        "--no-retry",
                        "--connection-timeout",
                        "5",
                        "raw-request",
                        "--url",
                        url,
                        NULL};
    r = run(rt, NULL, NULL);
    assert_int_equal(r.status, 1);
    assert_one_line_error(&r);
    assert_true(strstr(r.err, "1000 ms") || strstr(r.err, "timed out") || strstr(r.err, "Timeout"));
    assert_int_equal(ths_count(srv), 1);
    result_free(&r);
    /* accepted with a quick answer */
    ths_push(srv, 200, NULL, "fine");
    r = run(rt, NULL, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "fine");
    result_free(&r);
    free(url);
    ths_stop(srv);
}

/* Bad values of the retry and timeout options: usage errors; they are in --help. */
static void test_retry_and_timeout_option_errors(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    char *url = ths_url(srv, "/20231130/sandboxes");
    result r;

    /* usage errors: exit 2, one line naming the option */
    const char *const bad[][3] = {{"--max-retries", "-1", "max-retries"},
                                  {"--max-retries", "100", "max-retries"},
                                  {"--connection-timeout", "0", "connection-timeout"},
                                  {"--connection-timeout", "ten", "connection-timeout"},
                                  {"--read-timeout", "1.5", "read-timeout"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *args[] = {"--config-file", config, bad[i][0], bad[i][1], "raw-request", "--url", url, NULL};
        r = run(args, NULL, NULL);
        assert_int_equal(r.status, 2);
        assert_one_line_error(&r);
        assert_non_null(strstr(r.err, bad[i][2]));
        result_free(&r);
    }
    const char *both[] = {"--config-file", config, "--no-retry", "raw-request", "--url", url,
                          "--max-retries", "2",    NULL};
    r = run(both, NULL, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--no-retry"));
    result_free(&r);
    /* the options are in --help */
    const char *help[] = {"--help", NULL};
    r = run(help, NULL, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "--no-retry"));
    assert_non_null(strstr(r.out, "--max-retries N"));
    assert_non_null(strstr(r.out, "--connection-timeout SECONDS"));
    assert_non_null(strstr(r.out, "--read-timeout SECONDS"));
    result_free(&r);
    free(url);
    ths_stop(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retry_options),
        cmocka_unit_test(test_timeout_options),
        cmocka_unit_test(test_retry_and_timeout_option_errors),
        cmocka_unit_test(test_dry_run_get_vector),
        cmocka_unit_test(test_dry_run_post_vector),
        cmocka_unit_test(test_option_beats_environment),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_send_to_loopback),
        cmocka_unit_test(test_dry_run_stdout_full_and_normalised_url),
        cmocka_unit_test(test_double_dash),
    };
    return par_run_group_tests_name("it_cli_raw_request", tests, setup, teardown);
}
