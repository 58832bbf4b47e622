/* The client's route table (src/api/routes.c) and the emulator's routes
 * agree: every operation of the client, its path filled in, is routed by
 * the emulator to the route of the same operation with the path's ids, and
 * that route's handler in the dispatch table is the handler of that
 * operation; and the emulator has no route the client does not know. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/routes.h"
#include "emulator/emu.h"

/* The handler each operation must reach (the expectation, by name). */
static const struct {
    const char *operation;
    emu_handler_fn fn;
} EXPECTED[] = {
    {"CreateSandbox", emu_h_sandbox_create},
    {"ListSandboxes", emu_h_sandbox_list},
    {"GetSandbox", emu_h_sandbox_get},
    {"UpdateSandbox", emu_h_sandbox_update},
    {"DeleteSandbox", emu_h_sandbox_delete},
    {"StopSandbox", emu_h_sandbox_stop},
    {"ExtendSandbox", emu_h_sandbox_extend},
    {"SuspendSandbox", emu_h_sandbox_suspend},
    {"ResumeSandbox", emu_h_sandbox_resume},
    {"RunSandboxCommand", emu_h_command_run},
    {"RunSandboxCommandAndWait", emu_h_command_run_wait},
    {"RunSandboxCommandAndStream", emu_h_command_run_stream},
    {"ListSandboxCommands", emu_h_command_list},
    {"GetSandboxCommand", emu_h_command_get},
    {"GetSandboxCommandOutput", emu_h_command_output},
    {"StreamSandboxCommandEvents", emu_h_command_events},
    {"CancelSandboxCommand", emu_h_command_cancel},
    {"WriteSandboxFile", emu_h_file_write},
    {"ReadSandboxFile", emu_h_file_read},
    {"CreateSandboxSnapshot", emu_h_snapshot_create},
    {"ListSandboxSnapshots", emu_h_snapshot_list},
    {"GetSandboxSnapshot", emu_h_snapshot_get},
    {"DeleteSandboxSnapshot", emu_h_snapshot_delete},
};
#define N_EXPECTED (sizeof EXPECTED / sizeof EXPECTED[0])

static emu_handler_fn expected_handler(const char *operation)
{
    for (size_t i = 0; i < N_EXPECTED; i++)
        if (!strcmp(EXPECTED[i].operation, operation))
            return EXPECTED[i].fn;
    return NULL;
}

/* The template with its parameters filled in ({sandboxId} -> sbx-walk...). */
static void fill(const char *tmpl, char *out, size_t cap)
{
    static const char *const names[][2] = {
        {"{sandboxId}", "sbx-walk1"}, {"{commandId}", "cmd-walk2"}, {"{snapshotId}", "snap-walk3"}};
    size_t o = 0;
    for (const char *p = tmpl; *p && o + 1 < cap;) {
        bool done = false;
        for (size_t k = 0; k < 3 && !done; k++) {
            size_t n = strlen(names[k][0]);
            if (!strncmp(p, names[k][0], n)) {
                o += (size_t)snprintf(out + o, cap - o, "%s", names[k][1]);
                p += n;
                done = true;
            }
        }
        if (!done)
            out[o++] = *p++;
    }
    out[o < cap ? o : cap - 1] = 0;
}

static void test_every_client_route_reaches_its_handler(void **state)
{
    (void)state;
    size_t n = ocisbx_route_count();
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        const ocisbx_route *r = ocisbx_route_at(i);
        char path[256];
        fill(r->path, path, sizeof path);
        emu_route rt;
        int rc = emu_route_match(r->method, path, &rt);
        if (rc != 0)
            fail_msg("%s %s (%s): the emulator answers %d", r->method, path, r->name, rc);
        const char *op = emu_route_operation(rt.id);
        if (!op || strcmp(op, r->name))
            fail_msg("%s %s: the client calls it %s, the emulator routes it to %s", r->method, path, r->name,
                     op ? op : "(none)");
        emu_handler_fn want = expected_handler(r->name);
        if (!want)
            fail_msg("%s: an operation this test does not know (add its handler to EXPECTED)", r->name);
        if (emu_route_handler(rt.id) != want)
            fail_msg("%s: the dispatch table gives another handler", r->name);
        assert_string_equal(rt.sandbox_id, strstr(r->path, "{sandboxId}") ? "sbx-walk1" : "");
        assert_string_equal(rt.command_id, strstr(r->path, "{commandId}") ? "cmd-walk2" : "");
        assert_string_equal(rt.snapshot_id, strstr(r->path, "{snapshotId}") ? "snap-walk3" : "");
    }
}

static void test_every_emulator_route_is_a_client_route(void **state)
{
    (void)state;
    const char *method, *pattern;
    emu_route_id id;
    size_t i = 0;
    for (; emu_route_at(i, &method, &pattern, &id) == 0; i++) {
        const char *op = emu_route_operation(id);
        assert_non_null(op);
        const ocisbx_route *r = ocisbx_route_find(op);
        if (!r)
            fail_msg("the emulator's %s %s (%s) is no operation of the client", method, pattern, op);
        assert_string_equal(r->method, method);
        assert_string_equal(r->path, pattern);
        assert_non_null(emu_route_handler(id));
    }
    assert_int_equal(i, ocisbx_route_count());
    assert_int_equal(i, N_EXPECTED);
    assert_null(emu_route_handler(EMU_R_NONE));
}

/* The same path with another method is 405, an unknown one 404. */
static void test_wrong_method_and_unknown_path(void **state)
{
    (void)state;
    emu_route rt;
    assert_int_equal(emu_route_match("PATCH", "/sandboxes/sbx-1", &rt), 405);
    assert_int_equal(emu_route_match("GET", "/sandboxes/sbx-1/nothing", &rt), 404);
    assert_int_equal(emu_route_match("GET", "/sandboxes/%2F", &rt), 404);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_client_route_reaches_its_handler),
        cmocka_unit_test(test_every_emulator_route_is_a_client_route),
        cmocka_unit_test(test_wrong_method_and_unknown_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
