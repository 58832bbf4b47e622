/* 50 sandboxes at once, each running commands (plain, waited and streamed)
 * and moving files, while other requests keep being answered. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "emu_fixture.h"
#include "ocisbx/util.h"
#include "par_run.h"

#define N 50

typedef struct worker {
    emu_fixture *f;
    int index;
    int ok;
    char why[256];
} worker;

static void *run_worker(void *arg)
{
    worker *w = arg;
    emu_fixture *f = w->f;
    char id[64], p[256], body[512];
    cJSON *j = NULL;
    snprintf(body, sizeof body,
             "\"displayName\":\"w%d\",\"environmentVariables\":[{\"name\":\"IDX\",\"value\":\"%d\"}]", w->index,
             w->index);
    if (emu_fixture_new_sandbox(f, NULL, body, id, sizeof id) != 0) {
        snprintf(w->why, sizeof w->why, "create failed");
        return NULL;
    }
    /* a long-running command streams while the others go on */
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndStream", id);
    emu_fixture_result r;
    if (emu_fixture_request(f, "POST", p, "{\"command\":\"for i in 1 2 3; do echo tick$i; sleep 0.2; done\"}", &r) !=
            0 ||
        r.status != 200 || !strstr(r.body, "tick3") || !strstr(r.body, "FINISHED")) {
        snprintf(w->why, sizeof w->why, "stream: %ld %.100s", r.status, r.body ? r.body : "");
        emu_fixture_result_free(&r);
        return NULL;
    }
    emu_fixture_result_free(&r);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    if (emu_fixture_json(f, "POST", p, "{\"command\":\"echo $IDX > /workspace/idx; cat /workspace/idx\"}", 200, &j) !=
        0) {
        snprintf(w->why, sizeof w->why, "runAndWait failed");
        return NULL;
    }
    char want[32];
    snprintf(want, sizeof want, "%d\n", w->index);
    const cJSON *out = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "output"), "stdout");
    bool ok = cJSON_IsString(out) && !strcmp(out->valuestring, want);
    cJSON_Delete(j);
    if (!ok) {
        snprintf(w->why, sizeof w->why, "wrong output");
        return NULL;
    }
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/idx", id);
    if (emu_fixture_request(f, "GET", p, NULL, &r) != 0 || r.status != 200 || strcmp(r.body, want) != 0) {
        snprintf(w->why, sizeof w->why, "file read: %ld", r.status);
        emu_fixture_result_free(&r);
        return NULL;
    }
    emu_fixture_result_free(&r);
    snprintf(p, sizeof p, "/sandboxes/%s", id);
    if (emu_fixture_json(f, "DELETE", p, NULL, 204, NULL) != 0) {
        snprintf(w->why, sizeof w->why, "delete failed");
        return NULL;
    }
    w->ok = 1;
    return NULL;
}

static void test_fifty_sandboxes(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 100\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    worker w[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].f = f;
        w[i].index = i;
        assert_int_equal(pthread_create(&t[i], NULL, run_worker, &w[i]), 0);
    }
    int ok = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        if (!w[i].ok)
            fprintf(stderr, "worker %d: %s\n", i, w[i].why);
        ok += w[i].ok;
    }
    assert_int_equal(ok, N);
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxes?lifecycleState=DELETED&limit=1000", NULL, 200, &j), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), N);
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

int main(void)
{
    ocisbx_global_init();
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fifty_sandboxes)};
    int fails = par_run_group_tests_name("emulator at scale", tests, NULL, NULL);
    ocisbx_global_cleanup();
    return fails ? 1 : 0;
}
