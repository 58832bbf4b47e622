/* The exec and job contract over both backends (the world of
 * backend_world.h): live output, the trailer and its lengths (forged
 * markers, binary output, secrets cut at the edges), run files after a
 * cancel and stale ones, the processes the wrapper starts, job wait / stop,
 * exec with a yield; on the OCI backend the requests an exec costs, the
 * service without runAndStream, and close (stop, wait for STOPPED, delete).
 * Groups: local, oci, close, nostream (it_backend.cmake). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend_world.h"
#include "emu_client.h"
#include "emu_fixture.h"
#include "ocisbx/api.h"
#include "ocisbx/backend.h"
#include "ocisbx/util.h"
#include "util/internal.h"
#include "par_run.h"

static ocisbx_exec_options *opts(size_t max)
{
    ocisbx_exec_options *o = NULL;
    check(ocisbx_exec_options_new(&o), "exec options");
    if (max)
        check(ocisbx_exec_options_set_max_output_bytes(o, max), "max output");
    return o;
}

/* ---- live output ---- */
typedef struct watch {
    ocisbx_buf got;
    int64_t first_at; /* when "first\n" had arrived */
} watch;

static int watch_cb(const void *d, size_t n, void *ud)
{
    watch *wa = ud;
    ocisbx_buf_append(&wa->got, d, n);
    if (!wa->first_at && wa->got.len >= 6 && !memcmp(wa->got.data, "first\n", 6))
        wa->first_at = ocisbx_time_monotonic_ms();
    return 0;
}

/* A line reaches the callback as it is written, not when the command ends
 * (today's 4 KiB blocks held it until the end): the command sleeps 2 s
 * between its two lines, the first must be there 1 s before the end. */
static void test_exec_streams_live(void **state)
{
    world *w = *state;
    watch wa = {OCISBX_BUF_INIT, 0};
    ocisbx_exec_options *o = opts(0);
    check(ocisbx_exec_options_set_on_output(o, watch_cb, &wa), "on output");
    int64_t t0 = ocisbx_time_monotonic_ms();
    ocisbx_exec_result *r = run(w->b, "echo first; sleep 2; echo second", o);
    int64_t end = ocisbx_time_monotonic_ms();
    assert_true(wa.first_at > 0);
    if (end - wa.first_at < 1000)
        fail_msg("the first line came %lld ms after the start, %lld ms before the end", (long long)(wa.first_at - t0),
                 (long long)(end - wa.first_at));
    assert_int_equal(wa.got.len, 13);
    assert_memory_equal(wa.got.data, "first\nsecond\n", 13);
    assert_string_equal(ocisbx_exec_result_output(r, NULL), "first\nsecond\n");
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
    ocisbx_buf_free(&wa.got);
}

/* The wrapper's own variables never change the command's environment. */
static void test_exec_env_names_kept(void **state)
{
    world *w = *state;
    static const char *const names[] = {"W", "N", "F", "S", "K", "H", "P", "Q", "T", "ST", "TO", "D", "CMD", "NOW"};
    ocisbx_exec_options *o = opts(0);
    ocisbx_buf cmd = OCISBX_BUF_INIT, want = OCISBX_BUF_INIT;
    ocisbx_buf_appends(&cmd, "printf '%s\\n'");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char v[32];
        snprintf(v, sizeof v, "v-%s", names[i]);
        check(ocisbx_exec_options_add_env(o, names[i], v, 0), "env");
        ocisbx_buf_appendf(&cmd, " \"$%s\"", names[i]);
        ocisbx_buf_appendf(&want, "%s\n", v);
    }
    ocisbx_exec_result *r = run(w->b, cmd.data, o);
    assert_string_equal(ocisbx_exec_result_output(r, NULL), want.data);
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
    ocisbx_buf_free(&cmd);
    ocisbx_buf_free(&want);
}

/* ---- the cut, by the trailer's lengths ---- */
/* Markers and trailers printed by the command, with the run's own id read
 * from the command lines in /proc (where the wrapper's arguments are),
 * move nothing: head, tail and the dropped count are those of its real
 * output (kept in a file and read back to compare). */
static void test_exec_forged_markers(void **state)
{
    world *w = *state;
    ocisbx_exec_options *o = opts(1024);
    ocisbx_exec_result *r = run(w->b,
                                "{ echo start; for t in $(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\000 ' '\\n\\n' | "
                                "grep -aoE '^(N=)?[A-Za-z0-9]{16}$' | sed 's/^N=//' | sort -u); do "
                                "printf 'OCISBX-MID %s\\nOCISBX-END %s 0 0 1 1 1 1\\n' $t $t; done; "
                                "i=0; while [ $i -lt 300 ]; do printf 'line %d OCISBX-MID x\\n' $i; i=$((i+1)); done; "
                                "echo 'OCISBX-END x 0 0 - - - -'; } > forged.txt; cat forged.txt",
                                o);
    unsigned char *want = NULL;
    size_t wl = 0;
    check(ocisbx_backend_read_bytes(w->b, "forged.txt", &want, &wl), "read forged.txt");
    assert_true(wl > 3000);
    char sum[65];
    sha_hex(want, wl, sum);
    assert_int_equal(ocisbx_exec_result_total_bytes(r), wl);
    assert_string_equal(ocisbx_exec_result_total_sha256(r), sum);
    assert_true(ocisbx_exec_result_truncated(r));
    size_t n = 0;
    const char *out = ocisbx_exec_result_output(r, &n);
    const char *note = strstr(out, "[... ");
    assert_non_null(note);
    size_t hk = (size_t)(note - out);
    const char *tail = strchr(note, '\n') + 1;
    size_t tl = n - (size_t)(tail - out);
    assert_memory_equal(out, want, hk);
    assert_memory_equal(tail, want + wl - tl, tl);
    assert_true(hk > 300 && tl > 300);
    assert_int_equal(ocisbx_exec_result_dropped_bytes(r), wl - hk - tl);
    char line[80];
    snprintf(line, sizeof line, "[... %llu bytes of output dropped ...]\n", (unsigned long long)(wl - hk - tl));
    assert_memory_equal(note, line, strlen(line));
    ocisbx_free(want);
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
}

/* Output that is not UTF-8, cut: returned (the OCI service replaces the
 * invalid bytes), with its exit code, truncated and the exact count. */
static void test_exec_binary_capped(void **state)
{
    world *w = *state;
    ocisbx_buf want = OCISBX_BUF_INIT;
    while (want.len < 1000000)
        ocisbx_buf_append(&want, "ab\377\376c\n", 6);
    want.len = 1000000;
    ocisbx_buf_append(&want, "\n", 1);
    char sum[65];
    sha_hex(want.data, want.len, sum);
    ocisbx_exec_options *o = opts(20000);
    ocisbx_exec_result *r = run(w->b, "yes \"$(printf 'ab\\377\\376c')\" | head -c 1000000; echo; exit 3", o);
    int x = -1;
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, &x), 1);
    assert_int_equal(x, 3);
    assert_true(ocisbx_exec_result_truncated(r));
    assert_int_equal(ocisbx_exec_result_total_bytes(r), 1000001);
    assert_string_equal(ocisbx_exec_result_total_sha256(r), sum);
    uint64_t dropped = ocisbx_exec_result_dropped_bytes(r);
    assert_true(dropped >= 1000001 - 20000 + 96 && dropped < 1000001);
    size_t n = 0;
    const char *out = ocisbx_exec_result_output(r, &n);
    assert_true(n > 1000 && !memcmp(out, "ab", 2));
    char line[80];
    snprintf(line, sizeof line, "[... %llu bytes of output dropped ...]\n", (unsigned long long)dropped);
    assert_non_null(strstr(out, line));
    if (!strcmp(w->kind, "local")) /* byte exact locally: the head is the output's first bytes */
        assert_memory_equal(out, want.data, (size_t)(strstr(out, "[... ") - out) - 1);
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
    ocisbx_buf_free(&want);
}

/* A secret straddling the head's end and the tail's start: no 8-character
 * piece of it is returned (39 of its 40 characters sit on each side). */
static void test_exec_secret_cut_redacted(void **state)
{
    world *w = *state;
    const char *secret = "Zq7vR2mK9xT4bN8pL1cW6yH3jF5dG0sA-secret!";
    assert_int_equal(strlen(secret), 40);
    ocisbx_exec_options *o = opts(1024); /* head 464 bytes, tail 464 */
    check(ocisbx_exec_options_add_env(o, "TOKEN", secret, 1), "secret env");
    ocisbx_exec_result *r = run(w->b,
                                "printf '%0425d' 0; printf %s \"$TOKEN\"; head -c 5000 /dev/zero | tr '\\0' B; "
                                "printf %s \"$TOKEN\"; printf '%0425d' 0",
                                o);
    assert_true(ocisbx_exec_result_truncated(r));
    const char *out = ocisbx_exec_result_output(r, NULL);
    for (size_t i = 0; i + 8 <= strlen(secret); i++) {
        char piece[9];
        memcpy(piece, secret + i, 8);
        piece[8] = '\0';
        if (strstr(out, piece))
            fail_msg("a piece of the secret (%s) is in the output:\n%s", piece, out);
    }
    const char *a = strstr(out, "[REDACTED]");
    assert_non_null(a);
    assert_non_null(strstr(a + 1, "[REDACTED]"));
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
}

/* ---- run files ---- */
typedef struct canceler {
    ocisbx_buf got;
} canceler;

static int cancel_on_mark(const void *d, size_t n, void *ud)
{
    canceler *c = ud;
    ocisbx_buf_append(&c->got, d, n);
    for (size_t i = 0; i + 8 <= c->got.len; i++)
        if (!memcmp(c->got.data + i, "MARK-OUT", 8))
            return 1;
    return 0;
}

/* A canceled exec leaves none of its output in .ocisbx; stale run files of
 * a backend that is gone go at the next exec, a live one's stay. */
static void test_exec_run_files_cleaned(void **state)
{
    world *w = *state;
    canceler c = {OCISBX_BUF_INIT};
    ocisbx_exec_options *o = opts(0);
    check(ocisbx_exec_options_set_on_output(o, cancel_on_mark, &c), "on output");
    check(ocisbx_exec_options_add_env(o, "M", "MARK-", 0), "env");
    ocisbx_exec_result *r = NULL;
    /* the live head holds bytes back: enough output for the mark to pass */
    assert_int_equal(ocisbx_backend_exec(w->b, "echo \"${M}OUT\"; head -c 2000 /dev/zero | tr '\\0' x; sleep 60", o,
                                         &r),
                     OCISBX_ECANCELED);
    ocisbx_exec_options_free(o);
    ocisbx_buf_free(&c.got);
    char *s = run_out(w->b, "cat .ocisbx/run-* 2>/dev/null | grep -c MARK-OUT; true");
    assert_string_equal(s, "0\n");
    free(s);
    s = run_out(w->b, "printf 'R 1\\n' > .ocisbx/run-DEADSLOT.busy; echo raw > .ocisbx/run-DEADSLOT.o.aa; "
                      "printf 'R 99999999999\\n' > .ocisbx/run-LIVESLOT.busy; echo on > .ocisbx/run-LIVESLOT.o.aa");
    free(s);
    s = run_out(w->b, "true");
    free(s);
    s = run_out(w->b, "ls .ocisbx | grep -c DEADSLOT; ls .ocisbx | grep -c LIVESLOT; rm .ocisbx/run-LIVESLOT.*");
    assert_string_equal(s, "0\n2\n");
    free(s);
}

/* ---- processes (local) ---- */
/* The wrapper starts at most 4 programs for an output that fits the head:
 * each tool it may call is a shim on the wrapper's own PATH
 * (OCISBX_TOOLS_PATH; the command's PATH never reaches the wrapper's tools)
 * that counts its starts. */
static void test_exec_process_count(void **state)
{
    world *w = *state;
    static const char *const tools[] = {"timeout", "sh",   "split", "tail", "head",      "mkdir", "rm",   "od",
                                        "wc",      "cat",  "xargs", "find", "sha256sum", "sleep", "date", "mv"};
    char path[512];
    snprintf(path, sizeof path, "%s/shims", w->dir);
    assert_int_equal(mkdir(path, 0755), 0);
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        snprintf(path, sizeof path, "%s/shims/%s", w->dir, tools[i]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        const char *real = access("/usr/bin/sh", X_OK) == 0 || strcmp(tools[i], "sh") ? "/usr/bin" : "/bin";
        fprintf(f, "#!/bin/sh\necho %s >> /workspace/procs.log\nexec %s/%s \"$@\"\n", tools[i], real, tools[i]);
        fclose(f);
        chmod(path, 0755);
    }
    ocisbx_exec_options *o = opts(0);
    check(ocisbx_exec_options_add_env(o, "OCISBX_TOOLS_PATH", "/workspace/shims:/usr/bin:/bin", 0), "tools PATH");
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/procs.log", w->dir);
        unlink(path);
        ocisbx_exec_result *r = run(w->b, "echo fits", o);
        assert_string_equal(ocisbx_exec_result_output(r, NULL), "fits\n");
        ocisbx_exec_result_free(r);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        char log[1024] = "";
        size_t n = fread(log, 1, sizeof log - 1, f);
        fclose(f);
        log[n] = '\0';
        int lines = 0;
        for (char *p = log; *p; p++)
            lines += *p == '\n';
        if (lines > 4)
            fail_msg("the wrapper started %d programs:\n%s", lines, log);
        /* timeout, the command's sh, split and tail, in whatever order */
        assert_int_equal(lines, 4);
        assert_non_null(strstr(log, "timeout\n"));
        assert_non_null(strstr(log, "split\n"));
        assert_non_null(strstr(log, "tail\n"));
        assert_true(!strncmp(log, "sh\n", 3) || strstr(log, "\nsh\n"));
    }
    ocisbx_exec_options_free(o);
}

/* ---- jobs ---- */
static void test_job_wait(void **state)
{
    world *w = *state;
    char *id = NULL;
    check(ocisbx_backend_job_start(w->b, "sleep 1; echo done", NULL, &id), "start");
    int64_t t0 = ocisbx_time_monotonic_ms();
    ocisbx_job_status *st = NULL;
    check(ocisbx_backend_job_wait(w->b, id, 60000, &st), "wait for the end");
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    assert_false(ocisbx_job_status_running(st));
    int x = -1;
    assert_int_equal(ocisbx_job_status_has_exit_code(st, &x), 1);
    assert_int_equal(x, 0);
    assert_true(took < 30000); /* it came back at the end, not after the wait */
    ocisbx_job_status_free(st);
    ocisbx_free(id);
    check(ocisbx_backend_job_start(w->b, "sleep 30", NULL, &id), "start long");
    t0 = ocisbx_time_monotonic_ms();
    check(ocisbx_backend_job_wait(w->b, id, 300, &st), "wait 300 ms");
    assert_true(ocisbx_time_monotonic_ms() - t0 >= 300);
    assert_true(ocisbx_job_status_running(st));
    ocisbx_job_status_free(st);
    int killed = -1;
    check(ocisbx_backend_job_stop(w->b, id, &killed), "stop");
    assert_int_equal(killed, 1);
    check(ocisbx_backend_job_status(w->b, id, &st), "status after the stop");
    assert_false(ocisbx_job_status_running(st));
    assert_true(ocisbx_job_status_killed(st));
    assert_int_equal(ocisbx_job_status_has_exit_code(st, &x), 0);
    ocisbx_job_status_free(st);
    check(ocisbx_backend_job_stop(w->b, id, &killed), "stop again");
    assert_int_equal(killed, 0);
    ocisbx_job_status *bad = NULL;
    assert_int_equal(ocisbx_backend_job_wait(w->b, id, -1, &bad), OCISBX_EINVAL);
    ocisbx_free(id);
}

static void test_exec_yield(void **state)
{
    world *w = *state;
    ocisbx_exec_options *o = opts(0);
    check(ocisbx_exec_options_set_yield_ms(o, 60000), "yield");
    ocisbx_exec_result *r = run(w->b, "echo quick; exit 5", o);
    assert_null(ocisbx_exec_result_job_id(r));
    int x = -1;
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, &x), 1);
    assert_int_equal(x, 5);
    assert_string_equal(ocisbx_exec_result_output(r, NULL), "quick\n");
    assert_int_equal(ocisbx_exec_result_total_bytes(r), 6);
    ocisbx_exec_result_free(r);
    check(ocisbx_exec_options_set_yield_ms(o, 1500), "yield");
    r = run(w->b, "echo early; sleep 60", o);
    const char *job = ocisbx_exec_result_job_id(r);
    assert_non_null(job);
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, &x), 0);
    assert_false(ocisbx_exec_result_truncated(r));
    assert_string_equal(ocisbx_exec_result_output(r, NULL), "early\n");
    int killed = -1;
    check(ocisbx_backend_job_stop(w->b, job, &killed), "stop the yielded job");
    assert_int_equal(killed, 1);
    ocisbx_exec_result_free(r);
    /* a cut output through the job's files */
    check(ocisbx_exec_options_set_yield_ms(o, 60000), "yield");
    check(ocisbx_exec_options_set_max_output_bytes(o, 1024), "max");
    r = run(w->b, "seq 1 2000", o);
    assert_true(ocisbx_exec_result_truncated(r));
    assert_int_equal(ocisbx_exec_result_total_bytes(r), 8893);
    assert_true(!strncmp(ocisbx_exec_result_output(r, NULL), "1\n2\n", 4));
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
}

/* ---- the user's env, the wrapper's status ---- */
/* r: the exit code (-1 without one), timed_out, the output. */
static void expect_exit(ocisbx_exec_result *r, int code, const char *out, const char *what)
{
    int x = -1;
    if (ocisbx_exec_result_has_exit_code(r, &x) != 1 || x != code || ocisbx_exec_result_timed_out(r))
        fail_msg("%s: exit %d (has %d), timed out %d; expected exit %d", what, x,
                 ocisbx_exec_result_has_exit_code(r, NULL), ocisbx_exec_result_timed_out(r), code);
    if (out)
        assert_string_equal(ocisbx_exec_result_output(r, NULL), out);
}

/* The call's env is the command's only: a PATH without coreutils or a
 * preload that does not exist changes nothing for the wrapper (before: no
 * exit code, timed_out guessed, on both backends). */
static void test_exec_env_is_the_commands(void **state)
{
    world *w = *state;
    static const char *const env[][2] = {
        {"PATH", "/workspace/venv/bin:/usr/local/bin"}, {"PATH", "/nonexist"}, {"LD_PRELOAD", "/nonexist.so"},
        {"LC_ALL", "xx_XX.UTF-8"}, {"POSIXLY_CORRECT", "1"}};
    for (size_t i = 0; i < sizeof env / sizeof env[0]; i++) {
        ocisbx_exec_options *o = opts(0);
        check(ocisbx_exec_options_add_env(o, env[i][0], env[i][1], 0), "env");
        ocisbx_exec_result *r = run(w->b, "echo hi; exit 3", o);
        expect_exit(r, 3, NULL, env[i][0]);
        /* the command sees its value (the loader's warning may come first) */
        ocisbx_exec_result_free(r);
        char cmd[96];
        snprintf(cmd, sizeof cmd, "printf '%%s\\n' \"$%s\"", env[i][0]);
        r = run(w->b, cmd, o);
        const char *got = ocisbx_exec_result_output(r, NULL);
        char want[128];
        snprintf(want, sizeof want, "%s\n", env[i][1]);
        if (strlen(got) < strlen(want) || strcmp(got + strlen(got) - strlen(want), want))
            fail_msg("%s: the command saw '%s'", env[i][0], got);
        ocisbx_exec_result_free(r);
        ocisbx_exec_options_free(o);
    }
    ocisbx_exec_options *o = opts(0);
    check(ocisbx_exec_options_add_env(o, "PATH", "/opt/x", 0), "env");
    check(ocisbx_exec_options_set_timeout_ms(o, 1000), "timeout");
    ocisbx_exec_result *r = run(w->b, "while :; do :; done", o);
    assert_true(ocisbx_exec_result_timed_out(r));
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, NULL), 0);
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
}

/* The service's record of the wrapper's run has the command's status:
 * exit 3, 137 for kill -9, 124 for the timeout (before: 0 for all). */
static void test_exec_wrapper_status(void **state)
{
    world *w = *state;
    if (!strcmp(w->kind, "local"))
        skip();
    static const struct {
        const char *cmd;
        int code;
    } cases[] = {{"exit 3", 3}, {"kill -9 $$", 137}, {"sleep 10", 124}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ocisbx_exec_options *o = opts(0);
        check(ocisbx_exec_options_set_timeout_ms(o, 1000), "timeout");
        ocisbx_exec_result *r = run(w->b, cases[i].cmd, o);
        assert_int_equal(ocisbx_exec_result_timed_out(r), cases[i].code == 124);
        ocisbx_command *c = NULL;
        check(ocisbx_client_get_command(w->c, ocisbx_backend_sandbox_id(w->b), ocisbx_exec_result_command_id(r), &c),
              "get command");
        int x = -1;
        assert_int_equal(ocisbx_command_has_exit_code(c, &x), 1);
        if (x != cases[i].code)
            fail_msg("%s: the service recorded exit %d, expected %d", cases[i].cmd, x, cases[i].code);
        ocisbx_command_free(c);
        ocisbx_exec_result_free(r);
        ocisbx_exec_options_free(o);
    }
}

/* Endless output ends with the timeout and the trailer: timed out, cut,
 * the exact total past the cap, and the run files hold none of it after
 * (before: the whole output on disk while it ran). Local only: on the test
 * tenancy the wrapper's trailer of this run does not reach the client yet
 * (the wrapper writes it: run as a script inside the sandbox, it is there). */
static void test_exec_endless_output(void **state)
{
    world *w = *state;
    if (strcmp(w->kind, "local"))
        skip();
    ocisbx_exec_options *o = opts(100000);
    check(ocisbx_exec_options_set_timeout_ms(o, 1000), "timeout");
    ocisbx_exec_result *r = run(w->b, "yes", o);
    assert_true(ocisbx_exec_result_timed_out(r));
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, NULL), 0);
    assert_true(ocisbx_exec_result_truncated(r));
    uint64_t total = ocisbx_exec_result_total_bytes(r);
    assert_true(total > 100000);
    assert_true(total % 2 == 0 || total > ocisbx_exec_result_dropped_bytes(r));
    size_t len = 0;
    const char *out = ocisbx_exec_result_output(r, &len);
    assert_true(len <= 100000);
    assert_true(!strncmp(out, "y\ny\n", 4));
    assert_non_null(strstr(out, " bytes of output dropped ...]\n"));
    assert_int_equal(ocisbx_exec_result_dropped_bytes(r) + ocisbx_exec_result_returned_bytes(r) -
                         (uint64_t)(strstr(out, "[...") ? strchr(strstr(out, "[..."), '\n') + 1 - strstr(out, "[...") : 0),
                     total);
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
}

/* While 60 MB go by, the run files hold a bounded part of them (before:
 * all of them). Local only, as test_exec_endless_output. du's complaints
 * about chunks the reaper deletes under it are not the output (they went
 * into it, and into the total, before). */
static void test_exec_run_files_bounded(void **state)
{
    world *w = *state;
    if (strcmp(w->kind, "local"))
        skip();
    ocisbx_exec_options *o2 = opts(100000);
    check(ocisbx_exec_options_set_timeout_ms(o2, 300000), "timeout");
    ocisbx_exec_result *r = run(w->b, "head -c 60000000 /dev/zero; du -sk /workspace/.ocisbx 2>/dev/null | cut -f1", o2);
    size_t len = 0;
    const char *out = ocisbx_exec_result_output(r, &len);
    assert_true(len > 2 && out[len - 1] == '\n');
    const char *last = out + len - 2;
    while (last > out && last[-1] >= '0' && last[-1] <= '9') /* the du line, after the zeros */
        last--;
    long kib = atol(last);
    if (kib <= 0 || kib > 30000)
        fail_msg("the run files held %ld KiB while 60 MB went by (%.80s)", kib, last);
    assert_int_equal(ocisbx_exec_result_total_bytes(r), 60000000 + (uint64_t)(out + len - last));
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o2);
}

static void test_backend_client(void **state)
{
    world *w = *state;
    if (!strcmp(w->kind, "local"))
        assert_null(ocisbx_backend_client(w->b));
    else
        assert_ptr_equal(ocisbx_backend_client(w->b), w->c);
}

/* ---- requests (OCI) ---- */
static void count_attempt(const char *method, const char *url, int attempt, int status, const char *rid, void *ud)
{
    (void)attempt;
    (void)status;
    (void)rid;
    ocisbx_buf_appendf(ud, "%s %s\n", method, strstr(url, "/sandboxes") ? strstr(url, "/sandboxes") : url);
}

static int lines(const ocisbx_buf *b)
{
    int n = 0;
    for (size_t i = 0; i < b->len; i++)
        n += b->data[i] == '\n';
    return n;
}

/* exec costs one request on a connected backend (RunSandboxCommandAndStream)
 * and connect none; a fresh backend's close adds the removal of its run
 * files: two in all. */
static void test_exec_one_request(void **state)
{
    world *w = *state;
    ocisbx_buf log = OCISBX_BUF_INIT;
    ocisbx_client *c = NULL;
    check(emu_client_new_observed(w->emu, count_attempt, &log, &c), "observed client");
    ocisbx_backend_options *o = NULL;
    check(ocisbx_backend_options_new(&o), "options");
    check(ocisbx_backend_options_set_client(o, c), "client");
    ocisbx_backend *b = NULL;
    check(ocisbx_backend_connect(ocisbx_backend_sandbox_id(w->b), o, &b), "connect");
    assert_int_equal(lines(&log), 0);
    for (int k = 0; k < 2; k++) {
        ocisbx_buf_clear(&log);
        ocisbx_exec_result *r = run(b, "true", NULL);
        ocisbx_exec_result_free(r);
        if (lines(&log) != 1 || !strstr(log.data, "POST /sandboxes/") || !strstr(log.data, "/runAndStream"))
            fail_msg("exec made these requests:\n%s", log.data ? log.data : "");
    }
    ocisbx_buf_clear(&log);
    check(ocisbx_backend_close(b), "close");
    assert_int_equal(lines(&log), 1);
    ocisbx_backend_free(b);
    ocisbx_backend_options_free(o);
    ocisbx_client_free(c);
    ocisbx_buf_free(&log);
}

/* A service without RunSandboxCommandAndStream (404): run + events, from
 * then on without asking again. */
static void test_exec_without_stream_operation(void **state)
{
    (void)state;
    emu_fixture_options eo = {0};
    eo.extra_yaml = "limits:\n  create_delay_ms: 20\n"
                    "faults:\n  rules:\n"
                    "    - match: {method: POST, path: \"/sandboxes/*/commands/actions/runAndStream\"}\n"
                    "      respond: 404\n";
    emu_fixture *emu = NULL;
    assert_int_equal(emu_fixture_start(&eo, &emu), 0);
    char sid[128];
    assert_int_equal(emu_fixture_new_sandbox(emu, NULL, NULL, sid, sizeof sid), 0);
    ocisbx_buf log = OCISBX_BUF_INIT;
    ocisbx_client *c = NULL;
    check(emu_client_new_observed(emu, count_attempt, &log, &c), "observed client");
    ocisbx_backend_options *o = NULL;
    check(ocisbx_backend_options_new(&o), "options");
    check(ocisbx_backend_options_set_client(o, c), "client");
    ocisbx_backend *b = NULL;
    check(ocisbx_backend_connect(sid, o, &b), "connect");
    char *out = run_out(b, "echo via run and events");
    assert_string_equal(out, "via run and events\n");
    free(out);
    assert_int_equal(lines(&log), 3); /* the refused one, run, events */
    ocisbx_buf_clear(&log);
    out = run_out(b, "echo again");
    assert_string_equal(out, "again\n");
    free(out);
    assert_int_equal(lines(&log), 2);
    assert_null(strstr(log.data, "runAndStream"));
    ocisbx_backend_free(b);
    ocisbx_backend_options_free(o);
    ocisbx_client_free(c);
    ocisbx_buf_free(&log);
    assert_int_equal(emu_fixture_stop(emu), 0);
    emu_fixture_free(emu);
}

/* the longest first (the cases run side by side, par_run.h) */
#define SUITE                                                                                                  \
    cmocka_unit_test(test_exec_run_files_bounded), cmocka_unit_test(test_exec_streams_live),                   \
        cmocka_unit_test(test_exec_yield), cmocka_unit_test(test_job_wait),                                    \
        cmocka_unit_test(test_exec_env_is_the_commands), cmocka_unit_test(test_exec_wrapper_status),           \
        cmocka_unit_test(test_exec_endless_output), cmocka_unit_test(test_exec_run_files_cleaned),             \
        cmocka_unit_test(test_exec_binary_capped), cmocka_unit_test(test_exec_secret_cut_redacted),            \
        cmocka_unit_test(test_exec_forged_markers), cmocka_unit_test(test_exec_env_names_kept),                \
        cmocka_unit_test(test_backend_client)

int main(int argc, char **argv)
{
    const struct CMUnitTest local_tests[] = {SUITE, cmocka_unit_test(test_exec_process_count)};
    const struct CMUnitTest oci_tests[] = {SUITE, cmocka_unit_test(test_exec_one_request),
                                           cmocka_unit_test(test_exec_without_stream_operation)};
    const char *g = backend_world_group(argc, argv);
    par_group groups[2]; /* every case in a world of its own (par_run.h) */
    size_t n = 0;
    if (backend_world_wants(g, "local"))
        groups[n++] = (par_group)PAR_GROUP("backend exec: local directory", local_tests, setup_local, teardown);
    if (backend_world_wants(g, "oci"))
        groups[n++] = (par_group)PAR_GROUP("backend exec: oci sandbox (emulator)", oci_tests, setup_oci, teardown);
    return par_run_groups(groups, n) ? 1 : 0;
}
