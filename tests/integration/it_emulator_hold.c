/* The tenancy holds many sandboxes, each running a command, with many
 * connections open at once: 200 sandboxes, 128 event streams held open,
 * other requests answered meanwhile. The emulator is started with a low
 * soft limit of open files (256, as a fresh machine's 1024 would be for a
 * thousand sandboxes): it raises its own to the hard limit, or the commands
 * could not start. Generous timeouts; no timing is asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "emu_fixture.h"
#include "emu_load.h"
#include "ocisbx/util.h"

#define SANDBOXES 200
#define CONNECTIONS 128
#define CONCURRENCY 32

static emu_fixture *start_low_fd_limit(void)
{
    struct rlimit saved, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
    if (saved.rlim_max < 4096)
        skip(); /* the emulator could not raise its limit enough here */
    low = saved;
    low.rlim_cur = 256;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    emu_fixture *f = NULL;
    int rc = emu_fixture_start(&o, &f); /* inherits the low soft limit */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
    assert_int_equal(rc, 0);
    return f;
}

static const char *jstr(const char *text, const char *name, char *out, size_t cap)
{
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
    snprintf(out, cap, "%s", cJSON_IsString(v) ? v->valuestring : "");
    cJSON_Delete(j);
    return out;
}

typedef struct hold_ud {
    emu_fixture *f;
    long status;
    long fds, threads;
} hold_ud;

/* With the streams open: another request is answered. */
static void while_open(void *arg, size_t open)
{
    hold_ud *u = arg;
    (void)open;
    emu_fixture_result r;
    if (emu_fixture_request(u->f, "GET", "/sandboxes?limit=1", NULL, &r) == 0)
        u->status = r.status;
    emu_fixture_result_free(&r);
    u->fds = emu_load_fds(emu_fixture_pid(u->f));
    u->threads = emu_load_threads(emu_fixture_pid(u->f));
}

static void test_sandboxes_commands_and_connections_held(void **state)
{
    (void)state;
    emu_fixture *f = start_low_fd_limit();
    static emu_load_req r[SANDBOXES];
    static char ids[SANDBOXES][64], cmds[SANDBOXES][64];
    static const char *const create_body = "{}", *const run_body = "{\"command\":\"sleep 600\"}";
    memset(r, 0, sizeof r);
    for (int i = 0; i < SANDBOXES; i++) {
        r[i].method = "POST";
        snprintf(r[i].path, sizeof r[i].path, "/sandboxes?projectId=%s", EMU_FIXTURE_PROJECT);
        r[i].body = create_body;
    }
    assert_int_equal(emu_load_run(f, r, SANDBOXES, CONCURRENCY), SANDBOXES);
    for (int i = 0; i < SANDBOXES; i++) {
        if (r[i].status != 200)
            fail_msg("create %d: %ld %.200s", i, r[i].status, r[i].resp ? r[i].resp : "");
        assert_true(jstr(r[i].resp, "id", ids[i], sizeof ids[i])[0] != 0);
    }
    emu_load_free(r, SANDBOXES);

    memset(r, 0, sizeof r);
    for (int i = 0; i < SANDBOXES; i++) {
        r[i].method = "POST";
        snprintf(r[i].path, sizeof r[i].path, "/sandboxes/%.63s/commands", ids[i]);
        r[i].body = run_body;
    }
    assert_int_equal(emu_load_run(f, r, SANDBOXES, CONCURRENCY), SANDBOXES);
    for (int i = 0; i < SANDBOXES; i++) {
        if (r[i].status != 200)
            fail_msg("run %d: %ld %.200s", i, r[i].status, r[i].resp ? r[i].resp : "");
        assert_true(jstr(r[i].resp, "id", cmds[i], sizeof cmds[i])[0] != 0);
    }
    emu_load_free(r, SANDBOXES);

    /* every command started and runs: its first event is STARTED */
    memset(r, 0, sizeof r);
    for (int i = 0; i < SANDBOXES; i++) {
        r[i].method = "GET";
        snprintf(r[i].path, sizeof r[i].path, "/sandboxes/%.63s/commands/%.63s/events?untilSeq=1", ids[i], cmds[i]);
    }
    assert_int_equal(emu_load_run(f, r, SANDBOXES, CONCURRENCY), SANDBOXES);
    for (int i = 0; i < SANDBOXES; i++)
        if (r[i].status != 200 || !r[i].resp || !strstr(r[i].resp, "\"STARTED\""))
            fail_msg("command %d did not start: %ld %.300s", i, r[i].status, r[i].resp ? r[i].resp : "");
    emu_load_free(r, SANDBOXES);

    /* CONNECTIONS streams held open at once, another request answered meanwhile */
    memset(r, 0, sizeof r);
    for (int i = 0; i < CONNECTIONS; i++) {
        r[i].method = "GET";
        snprintf(r[i].path, sizeof r[i].path, "/sandboxes/%.63s/commands/%.63s/events", ids[i], cmds[i]);
    }
    hold_ud u = {f, 0, 0, 0};
    int open = emu_load_hold(f, r, CONNECTIONS, 120.0, while_open, &u);
    fprintf(stderr, "%d sandboxes running commands, %d streams open: the emulator holds %ld fds, %ld threads\n",
            SANDBOXES, open, u.fds, u.threads);
    for (int i = 0; i < CONNECTIONS; i++)
        if (!r[i].resp || !strstr(r[i].resp, "\"STARTED\"") || strstr(r[i].resp, "\"FINISHED\""))
            fail_msg("stream %d: %ld %.300s", i, r[i].status, r[i].resp ? r[i].resp : "");
    emu_load_free(r, CONNECTIONS);
    assert_int_equal(open, CONNECTIONS);
    assert_int_equal(u.status, 200);
    assert_true(u.fds > 256); /* past the soft limit it was started with */

    memset(r, 0, sizeof r);
    for (int i = 0; i < SANDBOXES; i++) {
        r[i].method = "DELETE";
        snprintf(r[i].path, sizeof r[i].path, "/sandboxes/%.63s", ids[i]);
    }
    assert_int_equal(emu_load_run(f, r, SANDBOXES, CONCURRENCY), SANDBOXES);
    for (int i = 0; i < SANDBOXES; i++)
        assert_int_equal(r[i].status, 204);
    emu_load_free(r, SANDBOXES);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ocisbx_global_init();
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_sandboxes_commands_and_connections_held)};
    int fails = cmocka_run_group_tests_name("emulator holds sandboxes and connections", tests, NULL, NULL);
    ocisbx_global_cleanup();
    curl_global_cleanup();
    return fails ? 1 : 0;
}
