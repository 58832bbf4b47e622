/* The engine's tests' world: see engine_world.h. */
#include "engine_world.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu_client.h"

void engine_check(int rc, const char *what)
{
    if (rc)
        fail_msg("%s: %d %s", what, rc, ocisbx_error_message(ocisbx_error_last()));
}

ocisbx_engine *engine_world_new(emu_fixture *f, ocisbx_client **c, double rate, int max_creates)
{
    engine_check(emu_client_new(f, 0, c), "client");
    engine_world_opts o = ENGINE_WORLD_OPTS_DEFAULT;
    o.rate = rate;
    o.max_creates = max_creates;
    return engine_world_new_on(*c, &o);
}

ocisbx_engine *engine_world_new_on(ocisbx_client *c, const engine_world_opts *o)
{
    ocisbx_backend_options *bo = NULL;
    ocisbx_engine_options *eo = NULL;
    ocisbx_engine *e = NULL;
    engine_check(ocisbx_backend_options_new(&bo), "backend options");
    engine_check(ocisbx_backend_options_set_client(bo, c), "client");
    engine_check(ocisbx_backend_options_set_poll_interval_ms(bo, 200), "poll");
    engine_check(ocisbx_backend_options_set_stop_timeout_ms(bo, 30000), "stop timeout");
    if (o->kill_grace_s > 0)
        engine_check(ocisbx_backend_options_set_kill_grace_s(bo, o->kill_grace_s), "kill grace");
    if (o->client_margin_ms >= 0)
        engine_check(ocisbx_backend_options_set_client_margin_ms(bo, o->client_margin_ms), "client margin");
    engine_check(ocisbx_engine_options_new(&eo), "engine options");
    engine_check(ocisbx_engine_options_set_backend_options(eo, bo), "set backend options");
    engine_check(ocisbx_engine_options_set_project_id(eo, EMU_FIXTURE_PROJECT), "project");
    engine_check(ocisbx_engine_options_set_max_in_flight(eo, 32), "in flight");
    if (o->max_creates)
        engine_check(ocisbx_engine_options_set_max_creates(eo, o->max_creates), "creates");
    if (o->rate > 0)
        engine_check(ocisbx_engine_options_set_creates_per_second(eo, o->rate), "rate");
    engine_check(ocisbx_engine_new(eo, &e), "engine");
    ocisbx_engine_options_free(eo);
    ocisbx_backend_options_free(bo);
    return e;
}

size_t engine_world_live(ocisbx_client *c)
{
    ocisbx_list_options *lo = NULL;
    ocisbx_sandbox_collection *l = NULL;
    engine_check(ocisbx_list_options_new(&lo), "list options");
    engine_check(ocisbx_list_options_set(lo, "projectId", EMU_FIXTURE_PROJECT), "project");
    engine_check(ocisbx_list_options_set_limit(lo, 1000), "limit");
    engine_check(ocisbx_client_list_sandboxes(c, lo, &l), "list");
    size_t n = 0;
    for (size_t i = 0; i < ocisbx_sandbox_collection_count(l); i++) {
        const char *st = ocisbx_sandbox_lifecycle_state(ocisbx_sandbox_collection_item(l, i));
        if (strcmp(st, "DELETED") != 0)
            n++;
    }
    ocisbx_sandbox_collection_free(l);
    ocisbx_list_options_free(lo);
    return n;
}

void engine_world_until(ocisbx_engine *e, const bool *flag)
{
    int64_t end = ocisbx_time_monotonic_ms() + 240000;
    while (!*flag) {
        assert_true(ocisbx_time_monotonic_ms() < end);
        assert_true(ocisbx_engine_run(e, 50) >= 0);
    }
}

typedef struct step {
    bool done;
    int rc;
    ocisbx_engine_sandbox *sb;
    ocisbx_exec_result *res;
} step;

static void on_create(int rc, ocisbx_engine_sandbox *sb, void *ud)
{
    step *s = ud;
    s->rc = rc;
    s->sb = sb;
    s->done = true;
}

ocisbx_engine_sandbox *engine_world_create(ocisbx_engine *e)
{
    step s = {0};
    engine_check(ocisbx_engine_create_sandbox(e, on_create, &s, NULL), "create");
    engine_world_until(e, &s.done);
    engine_check(s.rc, "created");
    return s.sb;
}

static void on_exec(int rc, ocisbx_exec_result *r, void *ud)
{
    step *s = ud;
    s->rc = rc;
    s->res = r;
    s->done = true;
}

char *engine_world_sh(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *command, int *exit_code)
{
    step s = {0};
    engine_check(ocisbx_engine_exec(e, sb, command, NULL, on_exec, &s, NULL), "exec");
    engine_world_until(e, &s.done);
    engine_check(s.rc, command);
    size_t len = 0;
    const char *o = ocisbx_exec_result_output(s.res, &len);
    char *out = malloc(len + 1);
    assert_non_null(out);
    memcpy(out, o, len);
    out[len] = 0;
    int x = -1;
    assert_int_equal(ocisbx_exec_result_has_exit_code(s.res, &x), 1);
    if (exit_code)
        *exit_code = x;
    ocisbx_exec_result_free(s.res);
    return out;
}

static void on_close(int rc, void *ud)
{
    step *s = ud;
    s->rc = rc;
    s->done = true;
}

void engine_world_close(ocisbx_engine *e, ocisbx_engine_sandbox *sb)
{
    step s = {0};
    engine_check(ocisbx_engine_close_sandbox(e, sb, on_close, &s, NULL), "close");
    engine_world_until(e, &s.done);
    engine_check(s.rc, "closed");
}
