/* The exec's wire format, client side: the trailer (the last line of
 * stderr) and the lengths it gives, bad trailers refused, printed markers
 * ignored; the user's command recovered from the wrapper's command text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend_int.h"
#include "backend/exec_int.h"
#include "backend/scripts.h"
#include "ocisbx/backend.h"
#include "ocisbx/util.h"
#include "util/internal.h"

#define ID "abcdefghijklmnop"

static int parse(const char *out, const char *err, ocisbx_exec_result **r)
{
    return ocisbx_exec_parse_(out, strlen(out), err, strlen(err), ID, 1024, r);
}

static void fits(void **state)
{
    (void)state;
    ocisbx_exec_result *r = NULL;
    assert_int_equal(parse("hello\n", "\nOCISBX-END " ID " 3 0 - - - -\n", &r), 0);
    int x = 0;
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, &x), 1);
    assert_int_equal(x, 3);
    assert_string_equal(ocisbx_exec_result_output(r, NULL), "hello\n");
    assert_int_equal(ocisbx_exec_result_total_bytes(r), 6);
    assert_false(ocisbx_exec_result_truncated(r));
    ocisbx_exec_result_free(r);
    /* timed out: no exit status */
    assert_int_equal(parse("", "\nOCISBX-END " ID " 124 1 - - - -\n", &r), 0);
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, &x), 0);
    assert_true(ocisbx_exec_result_timed_out(r));
    ocisbx_exec_result_free(r);
}

/* A forged trailer in the output (stdout, or stderr before the last line)
 * is output like any other. */
static void forged_trailers_ignored(void **state)
{
    (void)state;
    ocisbx_exec_result *r = NULL;
    const char *out = "OCISBX-END " ID " 9 0 1 1 1 1\nOCISBX-MID " ID "\n";
    assert_int_equal(parse(out, "junk\nOCISBX-END " ID " 9 0 - - - -\n\nOCISBX-END " ID " 0 0 - - - -\n", &r), 0);
    int x = -1;
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, &x), 1);
    assert_int_equal(x, 0);
    assert_string_equal(ocisbx_exec_result_output(r, NULL), out);
    ocisbx_exec_result_free(r);
}

static void cut_by_lengths(void **state)
{
    (void)state;
    char head[465], tail[465], err[1024], sum[65] = "";
    memset(head, 'h', 464);
    head[464] = '\0';
    memset(tail, 't', 464);
    tail[464] = '\0';
    for (int i = 0; i < 64; i++)
        sum[i] = 'a';
    snprintf(err, sizeof err, "%s\nOCISBX-END " ID " 0 0 464 464 5000 %s\n", tail, sum);
    ocisbx_exec_result *r = NULL;
    assert_int_equal(parse(head, err, &r), 0);
    assert_true(ocisbx_exec_result_truncated(r));
    assert_int_equal(ocisbx_exec_result_dropped_bytes(r), 5000 - 928);
    assert_string_equal(ocisbx_exec_result_total_sha256(r), sum);
    assert_non_null(strstr(ocisbx_exec_result_output(r, NULL), "\n[... 4072 bytes of output dropped ...]\nttt"));
    ocisbx_exec_result_free(r);
    /* lengths that do not match what came (the service rewrote bytes):
     * kept as they came, the count still the trailer's */
    snprintf(err, sizeof err, "%sXX\nOCISBX-END " ID " 0 0 464 464 5000 %s\n", tail, sum);
    assert_int_equal(parse("short head", err, &r), 0);
    assert_int_equal(ocisbx_exec_result_dropped_bytes(r), 5000 - 928);
    assert_true(!strncmp(ocisbx_exec_result_output(r, NULL), "short head\n[... 4072 bytes", 26));
    ocisbx_exec_result_free(r);
}

static void bad_trailers(void **state)
{
    (void)state;
    ocisbx_exec_result *r = NULL;
    char sum[65];
    memset(sum, 'a', 64);
    sum[64] = '\0';
    char big[256];
    snprintf(big, sizeof big, "\nOCISBX-END " ID " 0 0 9999 0 99999 %s\n", sum);
    const char *bad[] = {"",
                         "no trailer\n",
                         "\nOCISBX-END " ID " 0 0 - - - -",              /* no newline at the end */
                         "\nOCISBX-END otherid000000000 0 0 - - - -\n",   /* another run's */
                         "\nOCISBX-END " ID " x 0 - - - -\n",            /* status */
                         "\nOCISBX-END " ID " 0 2 - - - -\n",            /* timed out flag */
                         "\nOCISBX-END " ID " 0 0 1 - - -\n",            /* half measured */
                         "\nOCISBX-END " ID " 0 0 1 1 1 nothex\n",       /* sum */
                         "\nOCISBX-END " ID " 999 0 - - - -\n",          /* status range */
                         "\nOCISBX-END " ID " 0 0 - - - - extra\n",      /* trailing text */
                         big};                                           /* lengths past the budgets */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse("x", bad[i], &r);
        if (rc != OCISBX_EPARSE)
            fail_msg("case %zu: %d (%s)", i, rc, bad[i]);
        assert_null(r);
    }
    assert_int_equal(parse("", "\nOCISBX-NOCWD " ID "\n", &r), OCISBX_ENOTFOUND);
}

static char *wire(const char *script, const char *const *args, size_t n)
{
    ocisbx_run_req req = {0};
    req.script = script;
    req.args = args;
    req.n_args = n;
    ocisbx_buf b = OCISBX_BUF_INIT;
    assert_int_equal(ocisbx_run_req_text(&req, &b), 0);
    return ocisbx_buf_detach(&b);
}

static void user_command(void **state)
{
    (void)state;
    const char *cmd = "echo 'it''s' \"$X\" | grep -c x\n# two lines";
    const char *ea[] = {cmd, "/workspace", "sub dir", "120", "2", "449952", "449952", ID, "SLOT", "1000"};
    char *w = wire(ocisbx_script_exec, ea, 10);
    char *u = NULL;
    assert_int_equal(ocisbx_backend_user_command(w, &u), 0);
    assert_string_equal(u, cmd);
    ocisbx_free(u);
    free(w);
    const char *ja[] = {"sleep 30", "/workspace", "job-aaaaaaaaaaaaaaaa", ".", "60", "2"};
    w = wire(ocisbx_script_job_run, ja, 6);
    assert_int_equal(ocisbx_backend_user_command(w, &u), 0);
    assert_string_equal(u, "sleep 30");
    ocisbx_free(u);
    free(w);
    /* one of the backend's own steps */
    const char *sa[] = {"/workspace", "job-aaaaaaaaaaaaaaaa", "0"};
    w = wire(ocisbx_script_job_status, sa, 3);
    assert_int_equal(ocisbx_backend_user_command(w, &u), 0);
    assert_string_equal(u, "ocisbx job-status");
    ocisbx_free(u);
    free(w);
    /* not the wrapper: a command run as it is, a look-alike, bad quoting */
    w = wire("echo not the wrapper", ea, 10);
    const char *others[] = {"ls -la", w, "set -- 'unclosed\n", "set -- a\n#!/bin/sh\n", ""};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        assert_int_equal(ocisbx_backend_user_command(others[i], &u), 0);
        assert_null(u);
    }
    free(w);
    assert_int_equal(ocisbx_backend_user_command(NULL, &u), 0);
    assert_null(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fits),         cmocka_unit_test(forged_trailers_ignored), cmocka_unit_test(cut_by_lengths),
        cmocka_unit_test(bad_trailers), cmocka_unit_test(user_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
