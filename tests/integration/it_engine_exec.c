/* The engine's exec against the test tenancy: the live output callback
 * gets the output as the command writes it (one RunSandboxCommandAndStream,
 * not the answer of a runAndWait), in two sandboxes at once from one
 * thread; a canceled command is ended in the sandbox before the cancel's
 * callback (it never does what it would have done later), at once and
 * after it started; an output callback that asks to stop ends it too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu_fixture.h"
#include "engine_world.h"
#include "par_run.h"

typedef struct run {
    bool done;
    int rc;
    char error[512];
    char output[256];
    int64_t started, finished;
    int chunks;
    int64_t at[16];    /* when each chunk came (ms after the start) */
    char text[16][16]; /* what it held */
    bool stop;         /* the output callback asks to stop */
} run;

static int on_output(const void *d, size_t n, void *ud)
{
    run *r = ud;
    if (r->chunks < 16) {
        r->at[r->chunks] = ocisbx_time_monotonic_ms() - r->started;
        snprintf(r->text[r->chunks], sizeof r->text[0], "%.*s", (int)n, (const char *)d);
    }
    r->chunks++;
    return r->stop;
}

static void on_exec(int rc, ocisbx_exec_result *res, void *ud)
{
    run *r = ud;
    r->rc = rc;
    r->finished = ocisbx_time_monotonic_ms() - r->started;
    if (rc) {
        snprintf(r->error, sizeof r->error, "%s", ocisbx_error_message(ocisbx_error_last()));
    } else {
        size_t len = 0;
        const char *o = ocisbx_exec_result_output(res, &len);
        snprintf(r->output, sizeof r->output, "%.*s", (int)len, o);
    }
    ocisbx_exec_result_free(res);
    r->done = true;
}

static ocisbx_engine_op start(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *cmd, run *r)
{
    ocisbx_exec_options *o = NULL;
    engine_check(ocisbx_exec_options_new(&o), "exec options");
    engine_check(ocisbx_exec_options_set_on_output(o, on_output, r), "on output");
    ocisbx_engine_op op = 0;
    r->started = ocisbx_time_monotonic_ms();
    engine_check(ocisbx_engine_exec(e, sb, cmd, o, on_exec, r, &op), "exec");
    ocisbx_exec_options_free(o);
    return op;
}

static void expect_sh(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *cmd, const char *want)
{
    char *out = engine_world_sh(e, sb, cmd, NULL);
    assert_string_equal(out, want);
    free(out);
}

/* Runs the engine for ms, whatever finishes meanwhile. An idle engine's
 * run returns at once: then it sleeps a little (it spun, 2 s of CPU for
 * cancel_ends_the_command's 3.5 s wait). */
static void run_for(ocisbx_engine *e, int64_t ms)
{
    int64_t end = ocisbx_time_monotonic_ms() + ms;
    for (int64_t now; (now = ocisbx_time_monotonic_ms()) < end;) {
        int pending = ocisbx_engine_run(e, end - now);
        assert_true(pending >= 0);
        if (pending == 0 && end - ocisbx_time_monotonic_ms() > 0)
            usleep(20000);
    }
}

/* "for i in 1 2 3; do echo $i; sleep 0.5; done" in two sandboxes at once:
 * each line reaches the callback about half a second after the one
 * before, the first two well before the command's end. */
static void live_output_as_written(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    ocisbx_engine *e = engine_world_new(f, &c, 0, 0);
    ocisbx_engine_sandbox *sb[2] = {engine_world_create(e), engine_world_create(e)};
    run r[2];
    memset(r, 0, sizeof r);
    for (int k = 0; k < 2; k++)
        start(e, sb[k], "for i in 1 2 3; do echo $i; sleep 0.5; done", &r[k]);
    engine_world_until(e, &r[0].done);
    engine_world_until(e, &r[1].done);
    for (int k = 0; k < 2; k++) {
        engine_check(r[k].rc, "exec");
        assert_string_equal(r[k].output, "1\n2\n3\n");
        fprintf(stderr, "sandbox %d: %d chunks at", k, r[k].chunks);
        for (int i = 0; i < r[k].chunks && i < 16; i++)
            fprintf(stderr, " %lld ms", (long long)r[k].at[i]);
        fprintf(stderr, "; done at %lld ms\n", (long long)r[k].finished);
        assert_int_equal(r[k].chunks, 3);
        assert_string_equal(r[k].text[0], "1\n");
        assert_string_equal(r[k].text[1], "2\n");
        assert_string_equal(r[k].text[2], "3\n");
        /* half a second apart, as written (not all at once with the answer) */
        assert_true(r[k].at[1] - r[k].at[0] >= 300);
        assert_true(r[k].at[2] - r[k].at[1] >= 300);
        assert_true(r[k].finished - r[k].at[0] >= 750);
    }
    engine_world_close(e, sb[0]);
    engine_world_close(e, sb[1]);
    ocisbx_engine_free(e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
}

/* A command that would write a file after 3 s (past the 2 s grace between
 * a cancel's TERM and KILL), canceled at once (before its first event) and
 * once its first line came: ECANCELED, the cancel's callback after the
 * command has ended, and the file never comes (looked for half a second
 * after the later one would have written it). */
static void cancel_ends_the_command(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    ocisbx_engine *e = engine_world_new(f, &c, 0, 0);
    ocisbx_engine_sandbox *sb = engine_world_create(e);
    int64_t last_start = 0;
    for (int k = 0; k < 2; k++) {
        run r;
        memset(&r, 0, sizeof r);
        char cmd[96];
        snprintf(cmd, sizeof cmd, "echo started; sleep 3; echo late > late-%d.txt", k);
        ocisbx_engine_op op = start(e, sb, cmd, &r);
        last_start = r.started;
        if (k == 1) { /* once it runs: its first line came */
            for (int64_t end = ocisbx_time_monotonic_ms() + 60000; r.chunks < 1 && !r.done;) {
                assert_true(ocisbx_time_monotonic_ms() < end);
                assert_true(ocisbx_engine_run(e, 50) >= 0);
            }
            assert_int_equal(r.chunks, 1);
        }
        assert_false(r.done);
        engine_check(ocisbx_engine_cancel(e, op), "cancel");
        engine_world_until(e, &r.done);
        assert_int_equal(r.rc, OCISBX_ECANCELED);
        assert_true(r.finished < 3000);
        assert_int_equal(ocisbx_engine_cancel(e, op), OCISBX_ENOTFOUND);
    }
    run_for(e, last_start + 3500 - ocisbx_time_monotonic_ms());
    expect_sh(e, sb, "ls late-*.txt 2>/dev/null | wc -l", "0\n");
    engine_world_close(e, sb);
    ocisbx_engine_free(e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
}

/* An output callback that says stop: ECANCELED "canceled by the output
 * callback", and the command is ended in the sandbox too. A close started
 * while a command runs: the command is canceled and ended first. */
static void output_stop_and_close_end_the_command(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    ocisbx_engine *e = engine_world_new(f, &c, 0, 0);
    ocisbx_engine_sandbox *sb = engine_world_create(e);
    run r;
    memset(&r, 0, sizeof r);
    r.stop = true;
    start(e, sb, "echo one; sleep 3; echo late > late.txt", &r);
    engine_world_until(e, &r.done);
    assert_int_equal(r.rc, OCISBX_ECANCELED);
    assert_non_null(strstr(r.error, "output callback"));
    assert_int_equal(r.chunks, 1);
    run_for(e, r.started + 3500 - ocisbx_time_monotonic_ms()); /* past when it would have written */
    expect_sh(e, sb, "test -e late.txt && echo there || echo none", "none\n");

    memset(&r, 0, sizeof r);
    start(e, sb, "echo started; sleep 30", &r);
    for (int64_t end = ocisbx_time_monotonic_ms() + 60000; r.chunks < 1 && !r.done;) { /* it runs */
        assert_true(ocisbx_time_monotonic_ms() < end);
        assert_true(ocisbx_engine_run(e, 50) >= 0);
    }
    assert_false(r.done);
    engine_world_close(e, sb);
    assert_true(r.done);
    assert_int_equal(r.rc, OCISBX_ECANCELED);
    assert_true(r.finished < 20000);
    ocisbx_engine_free(e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
}

/* A service without runAndStream (a fault rule answers it 404): the exec
 * runs and waits instead, the same result, its output with the answer;
 * the sandbox's later execs go there at once. */
static void without_run_and_stream(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    ocisbx_engine *e = engine_world_new(f, &c, 0, 0);
    ocisbx_engine_sandbox *sb = engine_world_create(e);
    for (int k = 0; k < 2; k++) {
        run r;
        memset(&r, 0, sizeof r);
        start(e, sb, "echo a; sleep 0.5; echo b >&2; exit 3", &r);
        engine_world_until(e, &r.done);
        engine_check(r.rc, "exec");
        assert_string_equal(r.output, "a\nb\n");
        assert_true(r.chunks >= 1);
        assert_true(r.at[0] >= 450); /* with the answer, not as written */
    }
    engine_world_close(e, sb);
    ocisbx_engine_free(e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
}

static int setup_no_stream(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n"
                   "faults:\n  rules:\n"
                   "    - match: {method: POST, path: \"/sandboxes/*/commands/actions/runAndStream\"}\n"
                   "      respond: 404\n";
    return emu_fixture_setup_state(&o, state);
}

static int setup(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n";
    return emu_fixture_setup_state(&o, state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(live_output_as_written),
        cmocka_unit_test(cancel_ends_the_command),
        cmocka_unit_test(output_stop_and_close_end_the_command),
    };
    const struct CMUnitTest no_stream[] = {
        cmocka_unit_test(without_run_and_stream),
    };
    /* side by side: each case makes its own engine and sandboxes */
    const par_group groups[] = {
        PAR_GROUP("engine_exec", tests, setup, emu_fixture_teardown_state),
        PAR_GROUP("engine_exec_no_stream", no_stream, setup_no_stream, emu_fixture_teardown_state),
    };
    return par_run_groups(groups, sizeof groups / sizeof groups[0]) ? 1 : 0;
}
