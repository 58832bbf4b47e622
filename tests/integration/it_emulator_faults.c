/* ocisbx-emulator fault rules from the tenancy file: 503 n times, 429 with
 * retry-after, reset, delay, a stream cut after N events. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "emu_fixture.h"
#include "ocisbx/util.h"
#include "par_run.h"

static const char *FAULTS = "limits:\n"
                            "  create_delay_ms: 0\n"
                            "faults:\n"
                            "  seed: 42\n"
                            "  rules:\n"
                            "    - match: {method: GET, path: \"/sandboxSnapshots\"}\n"
                            "      respond: 503\n"
                            "      times: 2\n"
                            "    - match: {method: GET, path: \"/sandboxSnapshots/*\"}\n"
                            "      respond: 429\n"
                            "      retry_after_s: 3\n"
                            "      times: 1\n"
                            "    - match: {method: DELETE, path: \"/sandboxSnapshots/**\"}\n"
                            "      respond: reset\n"
                            "      times: 1\n"
                            "    - match: {method: \"*\", path: \"/sandboxes/*/commands\"}\n"
                            "      delay_ms: 300\n"
                            "      times: 1\n"
                            "    - match: {method: GET, path: \"/sandboxes/*/commands/*/events\"}\n"
                            "      cut_stream_after_events: 2\n"
                            "      times: 1\n";

static int setup(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = FAULTS;
    return emu_fixture_setup_state(&o, state);
}

static int teardown(void **state)
{
    return emu_fixture_teardown_state(state);
}

static void test_503_twice_then_success(void **state)
{
    emu_fixture *f = *state;
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxSnapshots", NULL, 503, &j), 0);
    assert_string_equal(cJSON_GetObjectItem(j, "code")->valuestring, "ServiceUnavailable");
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxSnapshots", NULL, 503, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxSnapshots", NULL, 200, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxSnapshots", NULL, 200, NULL), 0);
}

static void test_429_retry_after(void **state)
{
    emu_fixture *f = *state;
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "GET", "/sandboxSnapshots/snap-x", NULL, &r), 0);
    assert_int_equal(r.status, 429);
    char *ra = emu_fixture_result_header(&r, "retry-after");
    assert_string_equal(ra, "3");
    free(ra);
    assert_non_null(strstr(r.body, "TooManyRequests"));
    emu_fixture_result_free(&r);
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxSnapshots/snap-x", NULL, 404, NULL), 0);
}

static void test_reset(void **state)
{
    emu_fixture *f = *state;
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "DELETE", "/sandboxSnapshots/snap-x", NULL, &r), 0);
    assert_int_equal(r.status, 0);
    assert_int_not_equal(r.curl_code, 0); /* no answer at all */
    emu_fixture_result_free(&r);
    assert_int_equal(emu_fixture_json(f, "DELETE", "/sandboxSnapshots/snap-x", NULL, 404, NULL), 0);
}

static void test_delay_and_cut_stream(void **state)
{
    emu_fixture *f = *state;
    char id[64], p[256];
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/commands", id);
    int64_t t0 = ocisbx_time_monotonic_ms();
    assert_int_equal(
        emu_fixture_json(f, "POST", p, "{\"command\":\"echo a; echo b >&2; echo c; echo d >&2\"}", 200, &j), 0);
    /* the delayed answer cannot come sooner than the delay (a lower bound only) */
    assert_true(ocisbx_time_monotonic_ms() - t0 >= 300);
    char cid[64];
    snprintf(cid, sizeof cid, "%s", cJSON_GetObjectItem(j, "id")->valuestring);
    cJSON_Delete(j);
    char cp[256];
    snprintf(cp, sizeof cp, "/sandboxes/%s/commands/%s", id, cid);
    for (int i = 0; i < 400; i++) {
        assert_int_equal(emu_fixture_json(f, "GET", cp, NULL, 200, &j), 0);
        bool done = cJSON_IsString(cJSON_GetObjectItem(j, "timeFinished")); /* no lifecycleState [public] */
        cJSON_Delete(j);
        if (done)
            break;
        struct timespec ts = {0, 50000000L};
        nanosleep(&ts, NULL);
    }
    /* first read: cut after 2 events, no clean end */
    char ep[300];
    snprintf(ep, sizeof ep, "%s/events", cp);
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "GET", ep, NULL, &r), 0);
    assert_int_not_equal(r.curl_code, 0);
    int events = 0;
    for (char *q = r.body; (q = strstr(q, "data: ")); q += 6)
        events++;
    assert_int_equal(events, 2);
    assert_null(strstr(r.body, "FINISHED"));
    char *first = strdup(r.body);
    emu_fixture_result_free(&r);
    /* resumed from seq 3: the rest; cut + resumed = the whole stream */
    char ep2[400];
    snprintf(ep2, sizeof ep2, "%s?fromSeq=3", ep);
    assert_int_equal(emu_fixture_request(f, "GET", ep2, NULL, &r), 0);
    assert_int_equal(r.curl_code, 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "FINISHED"));
    char *joined = malloc(strlen(first) + r.body_len + 1);
    strcpy(joined, first);
    strcat(joined, r.body);
    emu_fixture_result_free(&r);
    assert_int_equal(emu_fixture_request(f, "GET", ep, NULL, &r), 0);
    assert_int_equal(r.curl_code, 0);
    assert_string_equal(joined, r.body);
    emu_fixture_result_free(&r);
    free(joined);
    free(first);
}

static int thread_count(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *fp = fopen(path, "r");
    int n = -1;
    while (fp && fgets(line, sizeof line, fp))
        if (!strncmp(line, "Threads:", 8))
            n = atoi(line + 8);
    if (fp)
        fclose(fp);
    return n;
}

typedef struct slow_req {
    emu_fixture *f;
    emu_fixture_result r;
} slow_req;

static void *send_slow(void *arg)
{
    slow_req *q = arg;
    (void)emu_fixture_request(q->f, "GET", "/sandboxes", NULL, &q->r);
    return NULL;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A request held by a 60 s fault delay does not hold the server's stop:
 * the delay ends when the server stops (the answer is a 503 or none). */
static void test_delay_cut_by_stop(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "faults:\n"
                   "  rules:\n"
                   "    - match: {method: GET, path: \"/sandboxes\"}\n"
                   "      delay_ms: 60000\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    int before = thread_count(emu_fixture_pid(f));
    assert_true(before > 0);
    slow_req q;
    memset(&q, 0, sizeof q);
    q.f = f;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, send_slow, &q), 0);
    /* the connection's thread exists: the request is in (or about to enter) the delay */
    for (int64_t t0 = now_ms(); thread_count(emu_fixture_pid(f)) <= before && now_ms() - t0 < 20000;) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    int64_t t0 = now_ms();
    assert_int_equal(emu_fixture_stop(f), 0);
    int64_t took = now_ms() - t0;
    pthread_join(t, NULL);
    fprintf(stderr, "stop with a request in a 60 s delay took %lld ms (answer %ld)\n", (long long)took, q.r.status);
    assert_true(took < 15000);
    assert_true(q.r.status != 200);
    emu_fixture_result_free(&q.r);
    emu_fixture_free(f);
}

int main(void)
{
    ocisbx_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_503_twice_then_success),
        cmocka_unit_test(test_429_retry_after),
        cmocka_unit_test(test_reset),
        cmocka_unit_test(test_delay_and_cut_stream),
    };
    int fails = par_run_group_tests_name("emulator faults", tests, setup, teardown);
    const struct CMUnitTest alone[] = {cmocka_unit_test(test_delay_cut_by_stop)};
    fails += par_run_group_tests_name("emulator fault delay and stop", alone, NULL, NULL);
    ocisbx_global_cleanup();
    return fails ? 1 : 0;
}
