/* ocisbx-emulator throttles like the service: limits.creates_per_second and
 * limits.requests_per_second per user, limits.max_sandboxes per project;
 * past them 429 TooManyRequests with a retry-after header. Slow rates
 * (0.2 per second: one request per 5 s) keep the checks independent of the
 * machine's speed. */
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
#include "par_run.h"

/* A 429 TooManyRequests whose message names `limit` and whose retry-after
 * is a whole number of seconds from lo to hi. */
static void expect_429(emu_fixture_result *r, const char *limit, int lo, int hi)
{
    if (r->status != 429)
        fprintf(stderr, "answer %ld: %s\n", r->status, r->body ? r->body : "");
    assert_int_equal(r->status, 429);
    cJSON *j = cJSON_Parse(r->body);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "code")->valuestring, "TooManyRequests");
    assert_non_null(strstr(cJSON_GetObjectItem(j, "message")->valuestring, limit));
    cJSON_Delete(j);
    char *ra = emu_fixture_result_header(r, "retry-after");
    assert_non_null(ra);
    char *end = NULL;
    long v = strtol(ra, &end, 10);
    assert_true(*ra && !*end);
    assert_true(v >= lo && v <= hi);
    free(ra);
    emu_fixture_result_free(r);
}

static void create_as(emu_fixture *f, bool session, const char *project, emu_fixture_result *r)
{
    char path[256];
    snprintf(path, sizeof path, "/sandboxes?projectId=%s", project ? project : EMU_FIXTURE_PROJECT);
    emu_fixture_req req = {0};
    req.method = "POST";
    req.path = path;
    req.body = "{}";
    req.body_len = 2;
    if (session) {
        req.key = emu_fixture_session_key(f);
        req.key_id = "ST$" EMU_FIXTURE_SESSION_TOKEN;
    }
    assert_int_equal(emu_fixture_do(f, &req, r), 0);
}

static void get_as(emu_fixture *f, bool session, const char *path, emu_fixture_result *r)
{
    emu_fixture_req req = {0};
    req.method = "GET";
    req.path = path;
    if (session) {
        req.key = emu_fixture_session_key(f);
        req.key_id = "ST$" EMU_FIXTURE_SESSION_TOKEN;
    }
    assert_int_equal(emu_fixture_do(f, &req, r), 0);
}

static char *created_id(emu_fixture_result *r)
{
    if (r->status != 200)
        fprintf(stderr, "create answered %ld: %s\n", r->status, r->body ? r->body : "");
    assert_int_equal(r->status, 200);
    cJSON *j = cJSON_Parse(r->body);
    char *id = strdup(cJSON_GetObjectItem(j, "id")->valuestring);
    cJSON_Delete(j);
    emu_fixture_result_free(r);
    return id;
}

static void test_creates_per_second(void **state)
{
    emu_fixture *f = NULL;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n  creates_per_second: 0.2\n";
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    (void)state;
    emu_fixture_result r;
    create_as(f, false, NULL, &r);
    free(created_id(&r));
    create_as(f, false, NULL, &r);
    expect_429(&r, "limits.creates_per_second", 1, 5);
    /* other requests of the same user are not creates */
    get_as(f, false, "/sandboxes", &r);
    assert_int_equal(r.status, 200);
    emu_fixture_result_free(&r);
    /* per user: the session token's user has a bucket of its own */
    create_as(f, true, NULL, &r);
    free(created_id(&r));
    create_as(f, true, NULL, &r);
    expect_429(&r, "limits.creates_per_second", 1, 5);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

static void test_requests_per_second(void **state)
{
    (void)state;
    emu_fixture *f = NULL;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  requests_per_second: 0.2\n";
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    emu_fixture_result r;
    get_as(f, false, "/sandboxes", &r);
    assert_int_equal(r.status, 200);
    emu_fixture_result_free(&r);
    get_as(f, false, "/sandboxSnapshots", &r);
    expect_429(&r, "limits.requests_per_second", 1, 5);
    get_as(f, true, "/sandboxes", &r);
    assert_int_equal(r.status, 200);
    emu_fixture_result_free(&r);
    get_as(f, true, "/sandboxes", &r);
    expect_429(&r, "limits.requests_per_second", 1, 5);
    /* an unauthenticated request is refused as such, not throttled */
    emu_fixture_req req = {0};
    req.method = "GET";
    req.path = "/sandboxes";
    req.key_id = "ST$no-such-token";
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    assert_int_equal(r.status, 401);
    emu_fixture_result_free(&r);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

static void test_max_sandboxes(void **state)
{
    (void)state;
    emu_fixture *f = NULL;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n  stop_delay_ms: 0\n  max_sandboxes: 2\n";
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    emu_fixture_result r;
    create_as(f, false, NULL, &r);
    char *a = created_id(&r);
    create_as(f, true, NULL, &r);
    char *b = created_id(&r);
    create_as(f, false, NULL, &r);
    expect_429(&r, "limits.max_sandboxes", 1, 1);
    /* per project */
    create_as(f, false, EMU_FIXTURE_PROJECT_NET, &r);
    free(created_id(&r));
    /* a STOPPED sandbox still counts; a deleted one does not */
    char path[256];
    snprintf(path, sizeof path, "/sandboxes/%s/actions/stop", a);
    assert_int_equal(emu_fixture_json(f, "POST", path, "{}", 202, NULL), 0);
    assert_int_equal(emu_fixture_wait_state(f, a, "STOPPED"), 0);
    create_as(f, true, NULL, &r);
    expect_429(&r, "limits.max_sandboxes", 1, 1);
    snprintf(path, sizeof path, "/sandboxes/%s", a);
    assert_int_equal(emu_fixture_json(f, "DELETE", path, NULL, 204, NULL), 0);
    create_as(f, false, NULL, &r);
    free(created_id(&r));
    free(a);
    free(b);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

static void test_bad_limits_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "limits:\n  creates_per_second: -1\n",
        "limits:\n  requests_per_second: fast\n",
        "limits:\n  max_sandboxes: 1.5\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        emu_fixture *f = NULL;
        emu_fixture_options o = {0};
        o.extra_yaml = bad[i];
        assert_int_not_equal(emu_fixture_start(&o, &f), 0);
        emu_fixture_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_creates_per_second),
        cmocka_unit_test(test_requests_per_second),
        cmocka_unit_test(test_max_sandboxes),
        cmocka_unit_test(test_bad_limits_refused),
    };
    return par_run_group_tests_name("it_emulator_throttle", tests, NULL, NULL);
}
