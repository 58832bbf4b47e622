/* The emulator's group commit (src/emulator/store.c, emu_store_commit):
 * requests answered at the same time share one write of the state file,
 * written with the state lock released, and every answered one is still
 * durable (kill -9 right after the answers, then a restart). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "emu_fixture.h"
#include "emu_load.h"

#define N 64

/* The writes of the state file seen on the inotify descriptor: each is a
 * new temporary file (state.json.tmp-<random>) renamed into place; the
 * creates are counted (their names differ, so inotify never merges them,
 * as it merges identical renames in a row). */
static int state_writes(int ifd)
{
    char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
    int n = 0;
    for (;;) {
        ssize_t got = read(ifd, buf, sizeof buf);
        if (got <= 0)
            return n;
        for (char *p = buf; p < buf + got;) {
            const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
            if ((ev->mask & IN_CREATE) && ev->len && !strncmp(ev->name, "state.json.tmp-", 15))
                n++;
            p += sizeof *ev + ev->len;
        }
    }
}

static void test_concurrent_creates_share_writes_and_survive_kill9(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    o.no_isolation = true; /* no command runs */
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    assert_true(ifd >= 0);
    assert_true(inotify_add_watch(ifd, emu_fixture_state_dir(f), IN_CREATE) >= 0);
    (void)state_writes(ifd); /* none counted before the load */

    emu_load_req *r = calloc(N, sizeof *r);
    assert_non_null(r);
    for (int i = 0; i < N; i++) {
        r[i].method = "POST";
        snprintf(r[i].path, sizeof r[i].path, "/sandboxes?projectId=%s", EMU_FIXTURE_PROJECT);
        r[i].body = "{\"displayName\":\"grouped\"}";
    }
    assert_int_equal(emu_load_run(f, r, N, N), N); /* all at once */
    int writes = state_writes(ifd);
    close(ifd);
    fprintf(stderr, "%d creates answered at once: %d writes of the state file\n", N, writes);
    /* one write per answer (or more) without the group commit */
    assert_true(writes >= 1);
    assert_true(writes < N);

    char (*ids)[64] = calloc(N, sizeof *ids);
    assert_non_null(ids);
    for (int i = 0; i < N; i++) {
        assert_int_equal(r[i].status, 200);
        cJSON *j = cJSON_Parse(r[i].resp);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
        assert_true(cJSON_IsString(id));
        snprintf(ids[i], sizeof ids[i], "%s", id->valuestring);
        cJSON_Delete(j);
    }
    emu_load_free(r, N);
    free(r);

    /* kill -9 at once (no periodic save in between): every answer stays */
    assert_int_equal(kill(emu_fixture_pid(f), SIGKILL), 0);
    (void)emu_fixture_stop(f);
    assert_int_equal(emu_fixture_restart(f), 0);
    for (int i = 0; i < N; i++) {
        char p[512];
        cJSON *j = NULL;
        snprintf(p, sizeof p, "/sandboxes/%s", ids[i]);
        assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "displayName");
        assert_true(cJSON_IsString(name));
        assert_string_equal(name->valuestring, "grouped");
        cJSON_Delete(j);
    }
    free(ids);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_creates_share_writes_and_survive_kill9),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
