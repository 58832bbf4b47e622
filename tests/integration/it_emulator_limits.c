/* ocisbx-emulator per-shape limits (limits.shapes in the tenancy file):
 * an allocation past memory_mib fails inside the sandbox, a fork loop stops
 * at processes, a disk fill stops at workspace_mib (a file write past it is
 * refused), each sandbox runs as its own uid when the emulator is root, and
 * the emulator and another sandbox stay responsive. */
#include <setjmp.h>
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

static int exit_code(const cJSON *j)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "exitCode");
    return cJSON_IsNumber(v) ? (int)v->valuedouble : -1;
}

static cJSON *run_wait(emu_fixture *f, const char *id, const char *body)
{
    char p[256];
    cJSON *j = NULL;
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    assert_int_equal(emu_fixture_json(f, "POST", p, body, 200, &j), 0);
    return j;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *out_field(const cJSON *j, const char *k)
{
    return jstr(cJSON_GetObjectItem(j, "output"), k);
}

static bool has_exit_code(const cJSON *j)
{
    return cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "exitCode"));
}

static long put_bytes(emu_fixture *f, const char *sid, const char *path, size_t len, char **body)
{
    char p[512], sha[64], hdr[128];
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=%s", sid, path);
    char *data = calloc(1, len ? len : 1);
    assert_non_null(data);
    ocisbx_sha256_base64(data, len, sha);
    snprintf(hdr, sizeof hdr, "opc-content-sha256: %s", sha);
    const char *extra[] = {hdr, NULL};
    emu_fixture_req req = {0};
    req.method = "PUT";
    req.path = p;
    req.body = data;
    req.body_len = len;
    req.content_type = "application/octet-stream";
    req.extra_headers = extra;
    emu_fixture_result r;
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    free(data);
    long st = r.status;
    if (body)
        *body = r.body ? strdup(r.body) : NULL;
    emu_fixture_result_free(&r);
    return st;
}

static long get_status(emu_fixture *f, const char *path)
{
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "GET", path, NULL, &r), 0);
    long st = r.status;
    emu_fixture_result_free(&r);
    return st;
}

#define WS_STOPPED "ocisbx-emulator: the workspace reached its 5 MiB limit (shape SMALL): command stopped\n"

/* workspace_mib: a fill is stopped (one big file by RLIMIT_FSIZE, many small
 * ones by the watcher), a write past the limit is refused before anything
 * is written, and another sandbox answers at once. */
static void test_workspace_limit(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n  shapes:\n    SMALL: {workspace_mib: 5}\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    if (!emu_fixture_isolated(f)) {
        emu_fixture_stop(f);
        emu_fixture_free(f);
        skip();
    }
    char a[64], b[64], c[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"shape\":\"SMALL\"", a, sizeof a), 0);
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"shape\":\"SMALL\"", b, sizeof b), 0);
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"shape\":\"SMALL\"", c, sizeof c), 0);

    /* one 50 MiB file: stopped at the limit, no exit code, the message */
    cJSON *j = run_wait(f, a, "{\"command\":\"dd if=/dev/zero of=/workspace/f bs=1M count=50\"}");
    const char *err = out_field(j, "stderr");
    fprintf(stderr, "dd: exit %d, stderr \"%s\"\n", exit_code(j), err ? err : "");
    assert_false(has_exit_code(j));
    assert_non_null(err);
    assert_non_null(strstr(err, WS_STOPPED));
    cJSON_Delete(j);
    int64_t t0 = now_ms();
    j = run_wait(f, b, "{\"command\":\"echo ok\"}");
    assert_string_equal(out_field(j, "stdout"), "ok\n");
    cJSON_Delete(j);
    assert_true(now_ms() - t0 < 2000);
    j = run_wait(f, a, "{\"command\":\"stat -c %s /workspace/f\"}");
    fprintf(stderr, "the file dd left: %s", out_field(j, "stdout"));
    assert_true(atoll(out_field(j, "stdout")) <= 5 * 1048576);
    cJSON_Delete(j);

    /* many 1 MiB files, slowly: the watcher stops the command */
    t0 = now_ms();
    j = run_wait(f, c,
                 "{\"command\":\"i=0; while [ $i -lt 60 ]; do head -c 1048576 /dev/zero > /workspace/g$i; "
                 "i=$((i+1)); sleep 0.1; done; echo all\",\"timeout\":\"PT60S\"}");
    int64_t took = now_ms() - t0;
    err = out_field(j, "stderr");
    fprintf(stderr, "slow fill: stopped after %lld ms, stderr \"%s\"\n", (long long)took, err ? err : "");
    assert_false(has_exit_code(j));
    assert_non_null(err);
    assert_non_null(strstr(err, WS_STOPPED));
    assert_null(strstr(out_field(j, "stdout") ? out_field(j, "stdout") : "", "all"));
    assert_true(took < 5000); /* 60 files take more than 6 s */
    cJSON_Delete(j);
    /* a command that cleans up is not stopped (the workspace shrinks) */
    j = run_wait(f, c, "{\"command\":\"rm -f /workspace/g*; ls /workspace | wc -l\"}");
    assert_int_equal(exit_code(j), 0);
    assert_string_equal(out_field(j, "stdout"), "0\n");
    cJSON_Delete(j);

    /* a PUT past the limit: 413 LimitExceeded naming limit, shape and use; nothing written */
    char *body = NULL;
    assert_int_equal(put_bytes(f, b, "/workspace/d/big.bin", 6 * 1048576, &body), 413);
    fprintf(stderr, "PUT of 6 MiB: %s\n", body ? body : "");
    assert_non_null(body);
    assert_non_null(strstr(body, "\"LimitExceeded\""));
    assert_non_null(strstr(body, "5 MiB limit (shape SMALL)"));
    assert_non_null(strstr(body, "MiB in use"));
    free(body);
    char p[256];
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/d/big.bin", b);
    assert_int_equal(get_status(f, p), 404);
    j = run_wait(f, b, "{\"command\":\"ls -A /workspace\"}");
    assert_string_equal(out_field(j, "stdout"), ""); /* not even its directory */
    cJSON_Delete(j);
    /* within the limit it is written; replacing it with as much again fits too */
    assert_int_equal(put_bytes(f, b, "/workspace/d/ok.bin", 3 * 1048576, NULL), 200);
    assert_int_equal(put_bytes(f, b, "/workspace/d/ok.bin", 3 * 1048576, NULL), 200);
    assert_int_equal(put_bytes(f, b, "/workspace/d/more.bin", 3 * 1048576, NULL), 413);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

static unsigned ws_owner(emu_fixture *f, const char *id)
{
    char path[512];
    struct stat sb;
    snprintf(path, sizeof path, "%s/workspaces/%s", emu_fixture_state_dir(f), id);
    assert_int_equal(lstat(path, &sb), 0);
    assert_int_equal(sb.st_uid, sb.st_gid);
    return (unsigned)sb.st_uid;
}

/* As root each sandbox has a uid of its own (so RLIMIT_NPROC counts one
 * sandbox): a fork bomb at its process limit leaves another sandbox and the
 * emulator answering; the uids survive a restart. */
static void test_sandbox_uids(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n  shapes:\n    SMALL: {processes: 64}\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    if (!emu_fixture_isolated(f)) {
        emu_fixture_stop(f);
        emu_fixture_free(f);
        skip();
    }
    char a[64], b[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"shape\":\"SMALL\"", a, sizeof a), 0);
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"shape\":\"SMALL\"", b, sizeof b), 0);
    unsigned ua = ws_owner(f, a), ub = ws_owner(f, b);
    fprintf(stderr, "workspace owners: %u, %u\n", ua, ub);
    assert_int_not_equal(ua, ub);
    assert_true(ua >= 200000 && ua < 200000 + 65536);
    assert_true(ub >= 200000 && ub < 200000 + 65536);
    /* a file written through the API belongs to the sandbox's uid */
    assert_int_equal(put_bytes(f, b, "/workspace/sub/x", 10, NULL), 200);
    char path[512];
    struct stat sb;
    snprintf(path, sizeof path, "%s/workspaces/%s/sub/x", emu_fixture_state_dir(f), b);
    assert_int_equal(lstat(path, &sb), 0);
    assert_int_equal(sb.st_uid, ub);

    char p[256];
    snprintf(p, sizeof p, "/sandboxes/%s/commands", a);
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "POST", p,
                                      "{\"command\":\"timeout 5 sh -c 'f(){ f|f& }; f; sleep 10'\","
                                      "\"timeout\":\"PT20S\"}",
                                      200, &j),
                     0);
    char bomb[64];
    snprintf(bomb, sizeof bomb, "%s", jstr(j, "id"));
    cJSON_Delete(j);
    usleep(1500 * 1000); /* the bomb is at its limit by now */
    int64_t t0 = now_ms();
    j = run_wait(f, b, "{\"command\":\"echo ok\"}");
    int64_t took = now_ms() - t0;
    fprintf(stderr, "echo ok beside a fork bomb: %lld ms\n", (long long)took);
    assert_string_equal(out_field(j, "stdout"), "ok\n");
    cJSON_Delete(j);
    assert_true(took < 2000);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/%s", a, bomb);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_null(jstr(j, "timeFinished")); /* the bomb was still going */
    cJSON_Delete(j);
    snprintf(p, sizeof p, "/sandboxes/%s", a);
    t0 = now_ms();
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, NULL), 0);
    assert_true(now_ms() - t0 < 2000);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/%s/actions/cancel", a, bomb);
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "POST", p, "{}", &r), 0);
    assert_true(r.status == 202 || r.status == 409); /* 409: timeout 5 ended it just now */
    emu_fixture_result_free(&r);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/%s", a, bomb);
    bool done = false;
    for (int i = 0; i < 200 && !done; i++) {
        assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
        done = jstr(j, "timeFinished") != NULL;
        cJSON_Delete(j);
        if (!done)
            usleep(50 * 1000);
    }
    assert_true(done);

    /* a restart keeps each uid; a new sandbox gets another one */
    assert_int_equal(emu_fixture_restart(f), 0);
    assert_int_equal(ws_owner(f, a), ua);
    assert_int_equal(ws_owner(f, b), ub);
    j = run_wait(f, a, "{\"command\":\"touch /workspace/t\"}");
    assert_int_equal(exit_code(j), 0);
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/workspaces/%s/t", emu_fixture_state_dir(f), a);
    assert_int_equal(lstat(path, &sb), 0);
    assert_int_equal(sb.st_uid, ua);
    char c[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, c, sizeof c), 0);
    unsigned uc = ws_owner(f, c);
    assert_true(uc != ua && uc != ub);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

static void test_shape_limits(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n  shapes:\n    SMALL: {memory_mib: 64, processes: 300}\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    if (!emu_fixture_isolated(f)) {
        emu_fixture_stop(f);
        emu_fixture_free(f);
        skip();
    }
    char small[64], large[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"shape\":\"SMALL\"", small, sizeof small), 0);
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"shape\":\"LARGE\"", large, sizeof large), 0);
    const char *alloc = "{\"command\":\"dd if=/dev/zero of=/dev/null bs=256M count=1\"}";
    /* 256 MiB in one allocation: past SMALL's 64 MiB, within LARGE's 16 GiB */
    cJSON *j = run_wait(f, small, alloc);
    assert_int_not_equal(exit_code(j), 0);
    cJSON_Delete(j);
    j = run_wait(f, large, alloc);
    assert_int_equal(exit_code(j), 0);
    cJSON_Delete(j);
    /* a fork loop in SMALL: forks fail past the limit; the emulator and
     * the other sandbox go on */
    j = run_wait(f, small,
                 "{\"command\":\"i=0; while [ $i -lt 2000 ]; do (sleep 20 &); i=$((i+1)); done; echo all\","
                 "\"timeout\":\"PT60S\"}");
    const char *out = jstr(cJSON_GetObjectItem(j, "output"), "stdout");
    const char *err = jstr(cJSON_GetObjectItem(j, "output"), "stderr");
    fprintf(stderr, "fork loop: exit %d, stdout \"%s\", stderr \"%s\"\n", exit_code(j), out ? out : "",
            err ? err : "");
    /* forks failed past the limit ("Cannot fork", from the loop's shell or
     * from a subshell, whichever forked when the limit was reached) */
    assert_non_null(err);
    assert_non_null(strstr(err, "Cannot fork"));
    cJSON_Delete(j);
    j = run_wait(f, large, "{\"command\":\"echo alive\"}");
    assert_string_equal(jstr(cJSON_GetObjectItem(j, "output"), "stdout"), "alive\n");
    cJSON_Delete(j);
    char p[256];
    snprintf(p, sizeof p, "/sandboxes/%s", small);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, NULL), 0);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

/* The command cannot ptrace the sandbox's pid 1 (bwrap's init) and stall it */
static void test_no_ptrace_of_init(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    if (!emu_fixture_isolated(f)) {
        emu_fixture_stop(f);
        emu_fixture_free(f);
        skip();
    }
    char id[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    cJSON *j = run_wait(f, id,
                        "{\"command\":\"python3 -c 'import ctypes,os; l=ctypes.CDLL(None,use_errno=True); "
                        "r=l.ptrace(16,1,0,0); print(r, ctypes.get_errno())'\"}");
    const char *out = jstr(cJSON_GetObjectItem(j, "output"), "stdout");
    fprintf(stderr, "PTRACE_ATTACH of pid 1 inside: %s", out ? out : "(none)\n");
    assert_non_null(out);
    assert_string_equal(out, "-1 1\n"); /* EPERM */
    cJSON_Delete(j);
    j = run_wait(f, id, "{\"command\":\"echo still fine\"}");
    assert_string_equal(jstr(cJSON_GetObjectItem(j, "output"), "stdout"), "still fine\n");
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

static void test_shape_limits_config_checked(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  shapes:\n    HUGE: {memory_mib: 64}\n";
    emu_fixture *f = NULL;
    assert_int_not_equal(emu_fixture_start(&o, &f), 0); /* an unknown shape is refused */
    emu_fixture_free(f);
    f = NULL;
    o.extra_yaml = "limits:\n  shapes:\n    SMALL: {workspace_mib: -1}\n";
    assert_int_not_equal(emu_fixture_start(&o, &f), 0); /* a negative size too */
    emu_fixture_free(f);
    f = NULL;
    o.extra_yaml = "limits:\n  shapes:\n    SMALL: {workspace_mib: 0}\n"; /* 0: none */
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

int main(void)
{
    /* test_shape_limits and test_sandbox_uids are a CTest entry of their
     * own, one after the other, RUN_SERIAL (a fork loop, a fork bomb); the
     * others run side by side: it_emulator_limits.cmake */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_limits),      cmocka_unit_test(test_workspace_limit),
        cmocka_unit_test(test_no_ptrace_of_init), cmocka_unit_test(test_shape_limits_config_checked),
        cmocka_unit_test(test_sandbox_uids),
    };
    return par_run_group_tests_name("emulator limits", tests, NULL, NULL) ? 1 : 0;
}
