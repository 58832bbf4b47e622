/* The poll_interval setting in the backend's and the API's waits, against
 * the emulator (a create takes 1 s to be RUNNING, a stop 0.5 s to be
 * STOPPED): the GetSandbox requests a create and a close make at the
 * default 2 s (one before RUNNING, one after; the close's poll derived
 * from it: 1 s) and with OCI_SANDBOX_POLL_INTERVAL=0.1 (one every 100 ms);
 * the backend option over the variable; a bad variable fails before any
 * request, naming itself; ocisbx_client_wait_sandbox with a poll of 0
 * polls at the setting's interval (a stop: 0.5 s). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu_client.h"
#include "emu_fixture.h"
#include "ocisbx/backend.h"
#include "ocisbx/util.h"
#include "par_run.h"
#include "test_assert.h"

typedef struct world {
    emu_fixture *emu;
    ocisbx_client *c;
    int gets, others; /* GETs of one sandbox; every other request */
} world;

static void on_attempt(const char *method, const char *url, int attempt, int status, const char *request_id, void *ud)
{
    (void)attempt, (void)status, (void)request_id;
    world *w = ud;
    if (strcmp(method, "GET") == 0 && strstr(url, "/sandboxes/"))
        w->gets++;
    else
        w->others++;
}

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    emu_fixture_options eo = {0};
    eo.extra_yaml = "limits:\n  create_delay_ms: 1000\n  stop_delay_ms: 500\n";
    if (!w || emu_fixture_start(&eo, &w->emu) != 0 || emu_client_new_observed(w->emu, on_attempt, w, &w->c) != 0)
        return -1;
    unsetenv("OCI_SANDBOX_POLL_INTERVAL");
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    ocisbx_client_free(w->c);
    emu_fixture_free(w->emu);
    free(w);
    unsetenv("OCI_SANDBOX_POLL_INTERVAL");
    return 0;
}

static void ok(int rc, const char *what)
{
    if (rc)
        fail_msg("%s: %s", what, test_last_msg());
}

typedef struct counts {
    int create_gets, close_gets;
    int64_t create_ms, close_ms;
} counts;

/* A create and a close through the backend (option_ms: its poll option, 0 none). */
static counts create_close(world *w, int64_t option_ms)
{
    counts n = {0};
    ocisbx_backend_options *o = NULL;
    assert_int_equal(ocisbx_backend_options_new(&o), 0);
    assert_int_equal(ocisbx_backend_options_set_client(o, w->c), 0);
    if (option_ms)
        assert_int_equal(ocisbx_backend_options_set_poll_interval_ms(o, option_ms), 0);
    ocisbx_backend *b = NULL;
    w->gets = 0;
    int64_t t0 = ocisbx_time_monotonic_ms();
    ok(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), "create");
    n.create_ms = ocisbx_time_monotonic_ms() - t0;
    n.create_gets = w->gets;
    ocisbx_backend_options_free(o);
    w->gets = 0;
    t0 = ocisbx_time_monotonic_ms();
    ok(ocisbx_backend_close(b), "close");
    n.close_ms = ocisbx_time_monotonic_ms() - t0;
    n.close_gets = w->gets;
    ocisbx_backend_free(b);
    fprintf(stderr, "create: %d GETs in %lld ms; close: %d GETs in %lld ms\n", n.create_gets, (long long)n.create_ms,
            n.close_gets, (long long)n.close_ms);
    return n;
}

/* The default 2 s: GET (CREATING), 2 s, GET (RUNNING); close: GET
 * (RUNNING), stop, 1 s, GET (STOPPED). */
static void test_default(void **state)
{
    counts n = create_close(*state, 0);
    assert_int_equal(n.create_gets, 2);
    assert_true(n.create_ms >= 2000);
    assert_int_equal(n.close_gets, 2);
    assert_true(n.close_ms >= 1000);
}

/* 0.1 s: about one GET per 100 ms until RUNNING (1 s) and STOPPED (0.5 s). */
static void test_variable(void **state)
{
    setenv("OCI_SANDBOX_POLL_INTERVAL", "0.1", 1);
    counts n = create_close(*state, 0);
    if (n.create_gets < 5 || n.create_gets > 12 || n.create_ms >= 2000)
        fail_msg("create at 0.1 s: %d GETs in %lld ms", n.create_gets, (long long)n.create_ms);
    if (n.close_gets < 3 || n.close_gets > 7 || n.close_ms >= 1000)
        fail_msg("close at 0.1 s: %d GETs in %lld ms", n.close_gets, (long long)n.close_ms);
}

/* The backend's option wins over the variable (1.5 s: as the default). */
static void test_option_over_variable(void **state)
{
    setenv("OCI_SANDBOX_POLL_INTERVAL", "0.1", 1);
    counts n = create_close(*state, 1500);
    assert_int_equal(n.create_gets, 2);
    assert_int_equal(n.close_gets, 2);
}

/* A bad variable: the create fails before any request, naming it. */
static void test_bad_variable(void **state)
{
    world *w = *state;
    setenv("OCI_SANDBOX_POLL_INTERVAL", "0.001", 1);
    ocisbx_backend_options *o = NULL;
    assert_int_equal(ocisbx_backend_options_new(&o), 0);
    assert_int_equal(ocisbx_backend_options_set_client(o, w->c), 0);
    ocisbx_backend *b = NULL;
    w->gets = w->others = 0;
    assert_int_equal(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), OCISBX_ECONFIG);
    assert_non_null(strstr(test_last_msg(), "OCI_SANDBOX_POLL_INTERVAL 0.001: not a number of seconds from 0.01"));
    assert_int_equal(w->gets + w->others, 0);
    char id[256];
    assert_int_equal(emu_fixture_new_sandbox(w->emu, NULL, NULL, id, sizeof id), 0);
    assert_int_equal(ocisbx_client_wait_sandbox(w->c, id, "RUNNING", 10000, 0, NULL), OCISBX_ECONFIG);
    assert_int_equal(w->gets, 0);
    ocisbx_backend_options_free(o);
}

/* The API's wait with a poll of 0: the setting's interval. */
static void test_api_wait(void **state)
{
    world *w = *state;
    setenv("OCI_SANDBOX_POLL_INTERVAL", "0.1", 1);
    char id[256];
    assert_int_equal(emu_fixture_new_sandbox(w->emu, NULL, NULL, id, sizeof id), 0);
    ok(ocisbx_client_wait_sandbox(w->c, id, "RUNNING", 10000, 0, NULL), "wait for RUNNING");
    ok(ocisbx_client_stop_sandbox(w->c, id, 0), "stop");
    w->gets = 0;
    int64_t t0 = ocisbx_time_monotonic_ms();
    ok(ocisbx_client_wait_sandbox(w->c, id, "STOPPED", 10000, 0, NULL), "wait for STOPPED");
    int64_t ms = ocisbx_time_monotonic_ms() - t0;
    fprintf(stderr, "wait for STOPPED: %d GETs in %lld ms\n", w->gets, (long long)ms);
    if (w->gets < 4 || ms >= 1000)
        fail_msg("wait at 0.1 s: %d GETs in %lld ms", w->gets, (long long)ms);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default),  cmocka_unit_test(test_option_over_variable),
        cmocka_unit_test(test_variable), cmocka_unit_test(test_bad_variable),
        cmocka_unit_test(test_api_wait),
    };
    return par_run_group_tests_name("it_poll_interval", tests, setup, teardown);
}
