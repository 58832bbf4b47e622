/* ocisbx-emulator state survives kill -9: what was answered is never lost,
 * a retry token is recorded before its action starts (no second run after a
 * restart), events are stored before they are sent and sequence numbers are
 * never reused. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "emu_fixture.h"
#include "ocisbx/util.h"
#include "par_run.h"

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* kill -9 of the emulator, then a start on the same state directory */
static void crash_and_restart(emu_fixture *f)
{
    assert_true(emu_fixture_pid(f) > 0);
    assert_int_equal(kill(emu_fixture_pid(f), SIGKILL), 0);
    (void)emu_fixture_stop(f); /* reaps it: "died of a signal" */
    assert_int_equal(emu_fixture_restart(f), 0);
}

static emu_fixture *start(void)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    return f;
}

static void test_answered_creates_survive_kill9(void **state)
{
    (void)state;
    emu_fixture *f = start();
    char ids[6][64], p[512];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 6; i++) {
            cJSON *j = NULL;
            snprintf(p, sizeof p, "/sandboxes?projectId=%s", EMU_FIXTURE_PROJECT);
            assert_int_equal(emu_fixture_json(f, "POST", p, "{\"displayName\":\"durable\"}", 200, &j), 0);
            snprintf(ids[i], sizeof ids[i], "%s", jstr(j, "id"));
            cJSON_Delete(j);
        }
        crash_and_restart(f); /* at once: no periodic save in between */
        for (int i = 0; i < 6; i++) {
            cJSON *j = NULL;
            snprintf(p, sizeof p, "/sandboxes/%s", ids[i]);
            assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
            assert_string_equal(jstr(j, "displayName"), "durable");
            cJSON_Delete(j);
        }
    }
    /* an update answered 200 is there too */
    snprintf(p, sizeof p, "/sandboxes/%s", ids[0]);
    assert_int_equal(emu_fixture_json(f, "PUT", p, "{\"displayName\":\"renamed\"}", 200, NULL), 0);
    crash_and_restart(f);
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_string_equal(jstr(j, "displayName"), "renamed");
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

typedef struct wait_call {
    emu_fixture *f;
    char path[512];
    emu_fixture_result r;
    int rc;
} wait_call;

static const char *const retry_hdr[] = {"opc-retry-token: durable-token-1", NULL};

static int run_and_wait(emu_fixture *f, const char *path, emu_fixture_result *r)
{
    const char *body = "{\"command\":\"echo run >> /workspace/runs; sleep 30\"}";
    emu_fixture_req req = {0};
    req.method = "POST";
    req.path = path;
    req.body = body;
    req.body_len = strlen(body);
    req.extra_headers = retry_hdr;
    return emu_fixture_do(f, &req, r);
}

static void *wait_thread(void *arg)
{
    wait_call *w = arg;
    w->rc = run_and_wait(w->f, w->path, &w->r);
    return NULL;
}

static int count_lines(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    int n = 0, ch;
    while ((ch = fgetc(fp)) != EOF)
        n += ch == '\n';
    fclose(fp);
    return n;
}

static void test_retry_token_after_kill9_runs_once(void **state)
{
    (void)state;
    emu_fixture *f = start();
    char id[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    char runs[1024];
    snprintf(runs, sizeof runs, "%s/workspaces/%s/runs", emu_fixture_state_dir(f), id);
    wait_call w;
    memset(&w, 0, sizeof w);
    w.f = f;
    snprintf(w.path, sizeof w.path, "/sandboxes/%s/commands/actions/runAndWait", id);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wait_thread, &w), 0);
    for (int i = 0; i < 1200 && count_lines(runs) == 0; i++)
        sleep_ms(25);
    assert_int_equal(count_lines(runs), 1); /* the command runs */
    crash_and_restart(f);                   /* cuts it and its runAndWait */
    pthread_join(t, NULL);
    assert_int_equal(w.rc, 0);
    assert_int_not_equal(w.r.status, 200);
    emu_fixture_result_free(&w.r);

    emu_fixture_result r;
    assert_int_equal(run_and_wait(f, w.path, &r), 0);
    assert_int_equal(r.status, 200);
    cJSON *j = cJSON_Parse(r.body);
    assert_non_null(j);
    /* the recorded outcome: the command cut (finished, no exit code) */
    assert_non_null(jstr(j, "timeFinished"));
    assert_null(cJSON_GetObjectItem(j, "exitCode"));
    char cmd_id[64];
    snprintf(cmd_id, sizeof cmd_id, "%s", jstr(j, "id") ? jstr(j, "id") : "");
    assert_true(cmd_id[0] != 0);
    cJSON_Delete(j);
    emu_fixture_result_free(&r);
    assert_int_equal(count_lines(runs), 1); /* no second run */
    /* the same outcome again, and the command is listed once */
    assert_int_equal(run_and_wait(f, w.path, &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, cmd_id));
    emu_fixture_result_free(&r);
    char p[512];
    snprintf(p, sizeof p, "/sandboxes/%s/commands", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
    assert_int_equal(count_lines(runs), 1);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

/* NDJSON events of a stream body, as parsed objects in an array */
static cJSON *parse_ndjson(const char *body)
{
    cJSON *a = cJSON_CreateArray();
    const char *p = body;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n > 0) {
            char *line = strndup(p, n);
            cJSON *o = cJSON_Parse(line);
            free(line);
            assert_non_null(o);
            cJSON_AddItemToArray(a, o);
        }
        p = nl ? nl + 1 : NULL;
    }
    return a;
}

static cJSON *get_events(emu_fixture *f, const char *path)
{
    static const char *const nd[] = {"accept: application/x-ndjson", NULL};
    emu_fixture_req req = {0};
    req.method = "GET";
    req.path = path;
    req.extra_headers = nd;
    emu_fixture_result r;
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    assert_int_equal(r.status, 200);
    cJSON *a = parse_ndjson(r.body);
    emu_fixture_result_free(&r);
    return a;
}

static void test_events_sent_are_stored_seq_not_reused(void **state)
{
    (void)state;
    emu_fixture *f = start();
    char id[64], p[512];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    for (int round = 0; round < 3; round++) {
        cJSON *j = NULL;
        snprintf(p, sizeof p, "/sandboxes/%s/commands", id);
        assert_int_equal(emu_fixture_json(f, "POST", p,
                                          "{\"command\":\"for i in 1 2 3 4 5; do echo line$i; sleep 0.05; done; "
                                          "sleep 30\"}",
                                          200, &j),
                         0);
        char cmd[64];
        snprintf(cmd, sizeof cmd, "%s", jstr(j, "id"));
        cJSON_Delete(j);
        /* STARTED and the five lines, live */
        snprintf(p, sizeof p, "/sandboxes/%s/commands/%s/events?untilSeq=6", id, cmd);
        cJSON *seen = get_events(f, p);
        assert_int_equal(cJSON_GetArraySize(seen), 6);
        crash_and_restart(f);
        snprintf(p, sizeof p, "/sandboxes/%s/commands/%s/events", id, cmd);
        cJSON *all = get_events(f, p);
        int n = cJSON_GetArraySize(all);
        assert_true(n >= 7);
        /* every event sent before the crash is in the record, unchanged */
        for (int i = 0; i < 6; i++) {
            const cJSON *a = cJSON_GetArrayItem(seen, i), *b = cJSON_GetArrayItem(all, i);
            assert_int_equal((int)cJSON_GetObjectItem(a, "seq")->valuedouble,
                             (int)cJSON_GetObjectItem(b, "seq")->valuedouble);
            assert_string_equal(jstr(a, "event"), jstr(b, "event"));
            if (jstr(a, "data"))
                assert_string_equal(jstr(a, "data"), jstr(b, "data"));
        }
        /* seq 1..n, each once, FINISHED last and after every event seen */
        for (int i = 0; i < n; i++)
            assert_int_equal((int)cJSON_GetObjectItem(cJSON_GetArrayItem(all, i), "seq")->valuedouble, i + 1);
        assert_string_equal(jstr(cJSON_GetArrayItem(all, n - 1), "event"), "FINISHED");
        assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(all, n - 1), "exitCode"));
        cJSON_Delete(seen);
        cJSON_Delete(all);
        /* after another restart (a clean one) the same record */
        assert_int_equal(emu_fixture_restart(f), 0);
        all = get_events(f, p);
        assert_int_equal(cJSON_GetArraySize(all), n);
        cJSON_Delete(all);
    }
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

static char *read_state_file(emu_fixture *f)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/state.json", emu_fixture_state_dir(f));
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        size_t n = fread(buf + len, 1, 4096, fp);
        len += n;
        if (n == 0)
            break;
    }
    fclose(fp);
    buf[len] = 0;
    return buf;
}

/* Secret values are kept in the state file for restarts only: once a
 * sandbox is deleted, its values and its commands' are gone from the file
 * (the names stay); a sandbox that still lives keeps its own. */
static void test_deleted_sandbox_forgets_secret_values(void **state)
{
    (void)state;
    emu_fixture *f = start();
    char gone[64], kept[64], p[256];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL,
                                             "\"environmentVariables\":[{\"name\":\"SBX_SECRET\",\"value\":"
                                             "\"sandbox-secret-4711\"}]",
                                             gone, sizeof gone),
                     0);
    assert_int_equal(emu_fixture_new_sandbox(f, NULL,
                                             "\"environmentVariables\":[{\"name\":\"KEPT_SECRET\",\"value\":"
                                             "\"kept-secret-0815\"}]",
                                             kept, sizeof kept),
                     0);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", gone);
    assert_int_equal(emu_fixture_json(f, "POST", p,
                                      "{\"command\":\"true\",\"environmentVariables\":[{\"name\":\"CMD_SECRET\","
                                      "\"value\":\"command-secret-1234\"}]}",
                                      200, NULL),
                     0);
    char *text = read_state_file(f); /* answered: the state file is written */
    assert_non_null(strstr(text, "sandbox-secret-4711"));
    assert_non_null(strstr(text, "command-secret-1234"));
    assert_non_null(strstr(text, "kept-secret-0815"));
    free(text);

    snprintf(p, sizeof p, "/sandboxes/%s", gone);
    assert_int_equal(emu_fixture_json(f, "DELETE", p, NULL, 204, NULL), 0);
    for (int round = 0; round < 2; round++) { /* as answered, and after a restart */
        text = read_state_file(f);
        assert_null(strstr(text, "sandbox-secret-4711"));
        assert_null(strstr(text, "command-secret-1234"));
        assert_non_null(strstr(text, "SBX_SECRET")); /* the names stay */
        assert_non_null(strstr(text, "CMD_SECRET"));
        assert_non_null(strstr(text, "kept-secret-0815"));
        free(text);
        if (round == 0)
            assert_int_equal(emu_fixture_restart(f), 0);
    }
    /* the living sandbox still gives its commands the value */
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", kept);
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"command\":\"printf %s \\\"$KEPT_SECRET\\\"\"}", 200, &j), 0);
    assert_string_equal(jstr(cJSON_GetObjectItem(j, "output"), "stdout"), "kept-secret-0815");
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answered_creates_survive_kill9),
        cmocka_unit_test(test_retry_token_after_kill9_runs_once),
        cmocka_unit_test(test_events_sent_are_stored_seq_not_reused),
        cmocka_unit_test(test_deleted_sandbox_forgets_secret_values),
    };
    return par_run_group_tests_name("it_emulator_durable", tests, NULL, NULL);
}
