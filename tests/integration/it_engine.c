/* The event-driven engine (include/ocisbx/engine.h) against the test
 * tenancy: many sandboxes from one thread, throttled creates, an outside
 * poll() loop over the fd and timer callbacks, a failing create among
 * others, cancel. Every test ends with no sandbox of the project left. */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "emu_client.h"
#include "emu_fixture.h"
#include "engine_world.h"
#include "par_run.h"
#include "ocisbx/ocisbx.h"

#define MAXN 64

typedef struct fleet fleet;

typedef struct slot {
    fleet *fl;
    int index;
    int create_rc, exec_rc, close_rc;
    int exit_code;
    char output[128];
    char error[512];
    int error_status;
    bool created, execed, closed;
    ocisbx_engine_sandbox *sb;
    ocisbx_engine_op create_op;
} slot;

struct fleet {
    ocisbx_engine *e;
    slot s[MAXN];
    int n;
    bool exec_and_close; /* go on from each create at once (else: after all creates) */
};

static void on_close(int rc, void *ud)
{
    slot *s = ud;
    s->close_rc = rc;
    s->closed = true;
    s->sb = NULL;
}

static void start_close(fleet *fl, slot *s)
{
    engine_check(ocisbx_engine_close_sandbox(fl->e, s->sb, on_close, s, NULL), "close");
}

static void on_exec(int rc, ocisbx_exec_result *r, void *ud)
{
    slot *s = ud;
    fleet *fl = s->fl;
    s->exec_rc = rc;
    s->execed = true;
    if (rc == 0) {
        size_t len = 0;
        const char *o = ocisbx_exec_result_output(r, &len);
        snprintf(s->output, sizeof s->output, "%.*s", (int)len, o);
        assert_int_equal(ocisbx_exec_result_has_exit_code(r, &s->exit_code), 1);
    }
    ocisbx_exec_result_free(r);
    start_close(fl, s);
}

static void start_exec(fleet *fl, slot *s)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "echo sandbox-%d; exit %d", s->index, s->index % 3 == 0 ? 0 : 1);
    engine_check(ocisbx_engine_exec(fl->e, s->sb, cmd, NULL, on_exec, s, NULL), "exec");
}

static void on_create(int rc, ocisbx_engine_sandbox *sb, void *ud)
{
    slot *s = ud;
    fleet *fl = s->fl;
    s->create_rc = rc;
    s->created = true;
    s->sb = sb;
    if (rc) {
        const ocisbx_error *e = ocisbx_error_last();
        snprintf(s->error, sizeof s->error, "%s", ocisbx_error_message(e));
        s->error_status = ocisbx_error_http_status(e);
        return;
    }
    assert_non_null(ocisbx_engine_sandbox_id(sb));
    assert_int_equal(ocisbx_engine_sandbox_is_owned(sb), 1);
    if (fl->exec_and_close)
        start_exec(fl, s);
}

static void start_creates(fleet *fl, int n)
{
    fl->n = n;
    for (int i = 0; i < n; i++) {
        fl->s[i].index = i;
        fl->s[i].fl = fl;
        engine_check(ocisbx_engine_create_sandbox(fl->e, on_create, &fl->s[i], &fl->s[i].create_op), "create");
        assert_true(fl->s[i].create_op != 0);
    }
}

static void run_idle(ocisbx_engine *e)
{
    int left = ocisbx_engine_run(e, 240000);
    assert_int_equal(left, 0);
    assert_int_equal(ocisbx_engine_pending(e), 0);
}

static void check_all_ok(fleet *fl)
{
    for (int i = 0; i < fl->n; i++) {
        slot *s = &fl->s[i];
        if (s->create_rc)
            fail_msg("sandbox %d: create: %s", i, s->error);
        assert_true(s->created && s->execed && s->closed);
        assert_int_equal(s->exec_rc, 0);
        assert_int_equal(s->close_rc, 0);
        assert_int_equal(s->exit_code, i % 3 == 0 ? 0 : 1);
        char want[64];
        snprintf(want, sizeof want, "sandbox-%d\n", i);
        assert_string_equal(s->output, want);
    }
}

/* 50 sandboxes created, each runs a command, each closed: one thread. */
static void fifty_from_one_thread(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    fleet *fl = calloc(1, sizeof *fl);
    fl->e = engine_world_new(f, &c, 0, 0);
    fl->exec_and_close = true;
    start_creates(fl, 50);
    run_idle(fl->e);
    check_all_ok(fl);
    assert_int_equal(ocisbx_engine_throttled(fl->e), 0);
    ocisbx_engine_free(fl->e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
    free(fl);
}

/* limits.creates_per_second: 2 (the second fixture): every create gets
 * through, with fewer 429 answers than sandboxes. */
static void throttled_creates_adapt(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    fleet *fl = calloc(1, sizeof *fl);
    fl->e = engine_world_new(f, &c, 0, 0);
    fl->exec_and_close = true;
    start_creates(fl, 16);
    run_idle(fl->e);
    check_all_ok(fl);
    uint64_t throttled = ocisbx_engine_throttled(fl->e);
    fprintf(stderr, "throttled creates: %llu answers 429 for %d sandboxes\n", (unsigned long long)throttled, fl->n);
    assert_true(throttled > 0); /* the limit was reached: the adaptation was needed */
    /* below the number of sandboxes, with room: without the slow start and
     * the learned pace (16 creates sent at once), 14 of the 16 got a 429 */
    assert_true(throttled <= (uint64_t)fl->n / 2);
    ocisbx_engine_free(fl->e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
    free(fl);
}

/* ---- an outside loop: poll() over what the callbacks say ---- */
typedef struct outside {
    struct pollfd fds[256];
    int n;
    int64_t timeout; /* -1: none */
    int64_t set_at;
} outside;

static void on_sock(int fd, int what, void *ud)
{
    outside *o = ud;
    int i = 0;
    while (i < o->n && o->fds[i].fd != fd)
        i++;
    if (what == OCISBX_ENGINE_POLL_REMOVE) {
        if (i < o->n)
            o->fds[i] = o->fds[--o->n];
        return;
    }
    assert_true(i < 256);
    if (i == o->n)
        o->n++;
    o->fds[i].fd = fd;
    o->fds[i].events =
        (short)(((what & OCISBX_ENGINE_POLL_IN) ? POLLIN : 0) | ((what & OCISBX_ENGINE_POLL_OUT) ? POLLOUT : 0));
}

static void on_timer(int64_t ms, void *ud)
{
    outside *o = ud;
    o->timeout = ms;
    o->set_at = ocisbx_time_monotonic_ms();
}

static void drive_outside(ocisbx_engine *e, outside *o)
{
    int64_t end = ocisbx_time_monotonic_ms() + 240000;
    while (ocisbx_engine_pending(e) > 0) {
        assert_true(ocisbx_time_monotonic_ms() < end);
        int64_t wait = -1;
        if (o->timeout >= 0) {
            int64_t passed = ocisbx_time_monotonic_ms() - o->set_at;
            wait = o->timeout > passed ? o->timeout - passed : 0;
        }
        struct pollfd p[256];
        int n = o->n;
        memcpy(p, o->fds, (size_t)n * sizeof p[0]);
        int r = poll(p, (nfds_t)n, wait < 0 ? 1000 : (int)wait);
        assert_true(r >= 0);
        if (r == 0 && wait >= 0) {
            o->timeout = -1;
            engine_check(ocisbx_engine_timeout(e), "timeout");
            continue;
        }
        for (int i = 0; i < n; i++)
            if (p[i].revents)
                engine_check(ocisbx_engine_socket_action(
                                 e, p[i].fd,
                                 ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) ? OCISBX_ENGINE_POLL_IN : 0) |
                                     ((p[i].revents & POLLOUT) ? OCISBX_ENGINE_POLL_OUT : 0)),
                             "socket action");
    }
}

/* The same work driven by an outside poll() loop and by ocisbx_engine_run
 * gives the same results. */
static void outside_loop_same_results(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    fleet *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    outside *o = calloc(1, sizeof *o);
    o->timeout = -1;
    a->e = engine_world_new(f, &c, 0, 0);
    a->exec_and_close = true;
    engine_check(ocisbx_engine_set_socket_callback(a->e, on_sock, o), "socket callback");
    engine_check(ocisbx_engine_set_timer_callback(a->e, on_timer, o), "timer callback");
    start_creates(a, 12);
    drive_outside(a->e, o);
    check_all_ok(a);
    ocisbx_engine_free(a->e);
    ocisbx_client_free(c);

    b->e = engine_world_new(f, &c, 0, 0);
    b->exec_and_close = true;
    start_creates(b, 12);
    run_idle(b->e);
    check_all_ok(b);
    for (int i = 0; i < 12; i++) {
        assert_string_equal(a->s[i].output, b->s[i].output);
        assert_int_equal(a->s[i].exit_code, b->s[i].exit_code);
    }
    ocisbx_engine_free(b->e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
    free(a);
    free(b);
    free(o);
}

/* The third fixture: limits.max_sandboxes 5. Eight creates at once: three
 * fail on their own operation (429 TooManyRequests after the retry: 2
 * attempts, the client's option; each 429 says retry after 1 s and the
 * engine paces the throttled creates, one a second), the five others run
 * their command and close. */
static void failing_creates_reported_others_go_on(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    fleet *fl = calloc(1, sizeof *fl);
    engine_check(emu_client_new_attempts(f, 2, &c), "client");
    engine_world_opts wo = ENGINE_WORLD_OPTS_DEFAULT;
    fl->e = engine_world_new_on(c, &wo);
    fl->exec_and_close = false;
    start_creates(fl, 8);
    run_idle(fl->e); /* every create has finished, none closed yet */
    int failed = 0;
    for (int i = 0; i < 8; i++) {
        slot *s = &fl->s[i];
        assert_true(s->created);
        if (s->create_rc) {
            failed++;
            assert_int_equal(s->sb, NULL);
            assert_int_equal(s->error_status, 429);
            assert_non_null(strstr(s->error, "TooManyRequests"));
        } else {
            start_exec(fl, s);
        }
    }
    assert_int_equal(failed, 3);
    run_idle(fl->e);
    for (int i = 0; i < 8; i++) {
        slot *s = &fl->s[i];
        if (s->create_rc)
            continue;
        assert_true(s->execed && s->closed);
        assert_int_equal(s->exec_rc, 0);
        assert_int_equal(s->close_rc, 0);
    }
    ocisbx_engine_free(fl->e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
    free(fl);
}

/* Creates canceled at once, and half way (after some were answered):
 * each finishes with ECANCELED or a sandbox, and none is left. */
static void cancel_leaves_nothing(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    fleet *fl = calloc(1, sizeof *fl);
    fl->e = engine_world_new(f, &c, 0, 4);
    fl->exec_and_close = false;
    start_creates(fl, 10);
    engine_check(ocisbx_engine_cancel(fl->e, fl->s[9].create_op), "cancel at once");
    /* run until a few creates have finished, then cancel the rest */
    int64_t end = ocisbx_time_monotonic_ms() + 120000;
    for (;;) {
        int done = 0;
        for (int i = 0; i < 10; i++)
            done += fl->s[i].created;
        if (done >= 3)
            break;
        assert_true(ocisbx_time_monotonic_ms() < end);
        ocisbx_engine_run(fl->e, 20);
    }
    ocisbx_engine_cancel_all(fl->e);
    run_idle(fl->e);
    int canceled = 0, made = 0;
    for (int i = 0; i < 10; i++) {
        slot *s = &fl->s[i];
        assert_true(s->created);
        if (s->create_rc) {
            assert_int_equal(s->create_rc, OCISBX_ECANCELED);
            canceled++;
        } else {
            made++;
            start_close(fl, s);
        }
    }
    assert_true(fl->s[9].create_rc == OCISBX_ECANCELED);
    assert_true(canceled >= 1);
    fprintf(stderr, "cancel: %d canceled, %d created before the cancel\n", canceled, made);
    assert_int_equal(ocisbx_engine_cancel(fl->e, fl->s[9].create_op), OCISBX_ENOTFOUND);
    run_idle(fl->e);
    ocisbx_engine_free(fl->e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
    free(fl);
}

/* Freed with creates in flight (their POSTs answered 1.5 s later), a
 * sandbox created and not closed, a command running in it and another's
 * create polling for RUNNING: no callback runs from the free, and no
 * sandbox is left, also once every delayed answer has come. */
static void free_while_creating_leaves_nothing(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    fleet *fl = calloc(1, sizeof *fl);
    fl->e = engine_world_new(f, &c, 0, 0);
    fl->exec_and_close = false;
    start_creates(fl, 1);
    engine_world_until(fl->e, &fl->s[0].created);
    engine_check(fl->s[0].create_rc, "first create");
    engine_check(ocisbx_engine_exec(fl->e, fl->s[0].sb, "sleep 20", NULL, on_exec, &fl->s[0], NULL), "exec");
    for (int i = 1; i < 6; i++) {
        fl->s[i].index = i;
        fl->s[i].fl = fl;
        engine_check(ocisbx_engine_create_sandbox(fl->e, on_create, &fl->s[i], NULL), "create");
    }
    fl->n = 6;
    assert_true(ocisbx_engine_run(fl->e, 300) > 0); /* the POSTs sent, none answered yet */
    for (int i = 1; i < 6; i++)
        assert_false(fl->s[i].created);
    int64_t t0 = ocisbx_time_monotonic_ms();
    ocisbx_engine_free(fl->e);
    fprintf(stderr, "free with creates in flight: %lld ms\n", (long long)(ocisbx_time_monotonic_ms() - t0));
    for (int i = 1; i < 6; i++)
        assert_false(fl->s[i].created);
    assert_false(fl->s[0].execed);
    assert_int_equal(engine_world_live(c), 0);
    struct timespec ts = {2, 0}; /* every delayed answer has come: still none */
    nanosleep(&ts, NULL);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
    free(fl);
}

/* Execs queued behind others (one sandbox: one request at a time) keep
 * their whole client-side deadline (the command's timeout + the kill grace
 * + the client margin): the wait in the engine's queue is not the
 * command's. Eight `sleep 0.5` with a 1 s timeout, a kill grace of 1 s and
 * a margin of 1 s: the eighth is sent at least 3.5 s after it was queued,
 * past a deadline counted from the queueing (1 + 1 + 1 s). */
typedef struct queued_exec {
    int rc, exit_code, timed_out, done;
} queued_exec;

static void on_queued_exec(int rc, ocisbx_exec_result *r, void *ud)
{
    queued_exec *q = ud;
    q->rc = rc;
    q->done = 1;
    q->exit_code = -1;
    if (rc == 0) {
        q->timed_out = ocisbx_exec_result_timed_out(r);
        (void)ocisbx_exec_result_has_exit_code(r, &q->exit_code);
    }
    ocisbx_exec_result_free(r);
}

static void queued_execs_keep_their_deadline(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    fleet *fl = calloc(1, sizeof *fl);
    engine_check(emu_client_new(f, 0, &c), "client");
    engine_world_opts wo = ENGINE_WORLD_OPTS_DEFAULT;
    wo.kill_grace_s = 1;
    wo.client_margin_ms = 1000;
    fl->e = engine_world_new_on(c, &wo);
    fl->exec_and_close = false;
    start_creates(fl, 1);
    run_idle(fl->e);
    assert_int_equal(fl->s[0].create_rc, 0);
    ocisbx_exec_options *o = NULL;
    engine_check(ocisbx_exec_options_new(&o), "exec options");
    engine_check(ocisbx_exec_options_set_timeout_ms(o, 1000), "timeout");
    queued_exec q[8];
    memset(q, 0, sizeof q);
    int64_t t0 = ocisbx_time_monotonic_ms();
    for (int i = 0; i < 8; i++)
        engine_check(ocisbx_engine_exec(fl->e, fl->s[0].sb, "sleep 0.5", o, on_queued_exec, &q[i], NULL), "exec");
    ocisbx_exec_options_free(o);
    run_idle(fl->e);
    for (int i = 0; i < 8; i++) {
        assert_true(q[i].done);
        if (q[i].rc)
            fail_msg("exec %d: %d %s", i, q[i].rc, ocisbx_strerror(q[i].rc));
        assert_false(q[i].timed_out);
        assert_int_equal(q[i].exit_code, 0);
    }
    assert_true(ocisbx_time_monotonic_ms() - t0 >= 4000); /* one after the other: the last waited 3.5 s */
    start_close(fl, &fl->s[0]);
    run_idle(fl->e);
    ocisbx_engine_free(fl->e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
    free(fl);
}

/* Deletes the tenancy answers 503 twenty times (the fourth fixture): eight
 * sandboxes closed at once all end deleted. The closes retry on their own
 * attempts and deadline: the shared retry budget (10 tokens) does not
 * starve them. */
static void failing_deletes_still_delete(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    fleet *fl = calloc(1, sizeof *fl);
    fl->e = engine_world_new(f, &c, 0, 0);
    fl->exec_and_close = false;
    start_creates(fl, 8);
    run_idle(fl->e);
    for (int i = 0; i < 8; i++) {
        engine_check(fl->s[i].create_rc, "create");
        start_close(fl, &fl->s[i]);
    }
    run_idle(fl->e);
    for (int i = 0; i < 8; i++) {
        if (fl->s[i].close_rc)
            fail_msg("sandbox %d: close: %d", i, fl->s[i].close_rc);
        assert_true(fl->s[i].closed);
    }
    ocisbx_engine_free(fl->e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
    free(fl);
}

static int setup_slow_create(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n"
                   "faults:\n  rules:\n    - match: {method: POST, path: \"/sandboxes\"}\n      delay_ms: 1500\n";
    return emu_fixture_setup_state(&o, state);
}

static int setup_failing_deletes(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n"
                   "faults:\n  rules:\n    - match: {method: DELETE, path: \"/sandboxes/*\"}\n      respond: 503\n"
                   "      times: 20\n";
    return emu_fixture_setup_state(&o, state);
}

static int setup_plain(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n";
    return emu_fixture_setup_state(&o, state);
}

static int setup_throttled(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n  creates_per_second: 2\n";
    return emu_fixture_setup_state(&o, state);
}

static int setup_max(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n  max_sandboxes: 5\n";
    return emu_fixture_setup_state(&o, state);
}

int main(void)
{
    const struct CMUnitTest plain[] = {
        cmocka_unit_test(queued_execs_keep_their_deadline),
        cmocka_unit_test(fifty_from_one_thread),
        cmocka_unit_test(outside_loop_same_results),
        cmocka_unit_test(cancel_leaves_nothing),
    };
    const struct CMUnitTest throttled[] = {
        cmocka_unit_test(throttled_creates_adapt),
    };
    const struct CMUnitTest max[] = {
        cmocka_unit_test(failing_creates_reported_others_go_on),
    };
    const struct CMUnitTest failing_deletes[] = {
        cmocka_unit_test(failing_deletes_still_delete),
    };
    const struct CMUnitTest slow[] = {
        cmocka_unit_test(free_while_creating_leaves_nothing),
    };
    /* the longest groups first: their cases start first */
    const par_group groups[] = {
        PAR_GROUP("engine_max_sandboxes", max, setup_max, emu_fixture_teardown_state),
        PAR_GROUP("engine", plain, setup_plain, emu_fixture_teardown_state),
        PAR_GROUP("engine_throttled", throttled, setup_throttled, emu_fixture_teardown_state),
        PAR_GROUP("engine_slow_create", slow, setup_slow_create, emu_fixture_teardown_state),
        PAR_GROUP("engine_failing_deletes", failing_deletes, setup_failing_deletes, emu_fixture_teardown_state),
    };
    return par_run_groups(groups, sizeof groups / sizeof groups[0]) ? 1 : 0;
}
