/* Every byte of a command's output or a file's content reaches the tool
 * result, on the local backend and on the emulator: a NUL byte or bytes
 * that are not UTF-8 become U+FFFD (never the end of the string), in exec
 * and job output (binary output capped with its dropped-bytes note), read
 * (a NUL past the binary check's first 8 KiB), search lines and context,
 * and diffs; the result, returned_bytes and returned_sha256 agree. A
 * canceled call is "canceled", not a backend failure to retry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "emu_fixture.h"
#include "harness_world.h"
#include "ocisbx/backend.h"
#include "ocisbx/harness.h"
#include "ocisbx/util.h"
#include "par_run.h"

typedef harness_world world;
#define FFFD "\xef\xbf\xbd"

/* true when all of s (n bytes) is valid UTF-8 without NUL */
static bool clean_utf8(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = p[i] == 0 ? 0 : p[i] < 0x80 ? 1 : (p[i] & 0xe0) == 0xc0 ? 2 : (p[i] & 0xf0) == 0xe0 ? 3 : 4;
        if (!k || (p[i] >= 0x80 && p[i] < 0xc2) || p[i] > 0xf4 || i + k > n)
            return false;
        for (size_t j = 1; j < k; j++)
            if ((p[i + j] & 0xc0) != 0x80)
                return false;
        i += k;
    }
    return true;
}

/* The call's result; its raw JSON text must be valid UTF-8. */
static cJSON *call(ocisbx_harness *h, const char *tool, const char *args, int want_rc)
{
    char *out = NULL;
    int rc = ocisbx_harness_call_json(h, tool, args, &out);
    assert_non_null(out);
    if (rc != want_rc)
        fail_msg("%s %s: rc %d, want %d: %s", tool, args, rc, want_rc, out);
    if (!clean_utf8(out, strlen(out)))
        fail_msg("%s: the result is not valid UTF-8", tool);
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    ocisbx_free(out);
    return j;
}

static const char *str_of(const cJSON *j, const char *name)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(j, name));
    if (!s)
        fail_msg("no string %s", name);
    return s;
}

static void put(world *w, const char *path, const char *data, size_t len)
{
    if (ocisbx_backend_write(w->b, path, data, len))
        fail_msg("write %s: %s", path, ocisbx_error_message(ocisbx_error_last()));
}

/* The last evidence record's returned_bytes and returned_sha256 are those
 * of text, the string the model got. */
static void record_matches(const world *w, const char *text)
{
    cJSON *rec = cJSON_Parse(w->last_record);
    assert_non_null(rec);
    unsigned char md[OCISBX_SHA256_LEN];
    char hex[OCISBX_SHA256_LEN * 2 + 1];
    ocisbx_sha256(text, strlen(text), md);
    for (size_t i = 0; i < sizeof md; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    assert_int_equal((long long)cJSON_GetObjectItem(rec, "returned_bytes")->valuedouble, (long long)strlen(text));
    assert_string_equal(str_of(rec, "returned_sha256"), hex);
    cJSON_Delete(rec);
}

/* exec: the NUL is U+FFFD, what follows it is there, the counts agree. */
static void exec_output_past_a_nul(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    cJSON *j = call(h, "exec", "{\"command\":\"printf 'before\\\\0after\\\\n'; echo more; exit 2\"}", 0);
    assert_int_equal(cJSON_GetObjectItem(j, "exit_code")->valueint, 2);
    assert_string_equal(str_of(j, "output"), "before" FFFD "after\nmore\n");
    record_matches(w, str_of(j, "output"));
    cJSON *rec = cJSON_Parse(w->last_record);
    assert_int_equal(cJSON_GetObjectItem(rec, "output_bytes")->valueint, 18); /* the command's own bytes */
    cJSON_Delete(rec);
    cJSON_Delete(j);
    ocisbx_harness_free(h);
}

/* 1 MB of random bytes: head, the dropped-bytes note, tail, exit code. */
static void exec_binary_output_capped(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    cJSON *j = call(h, "exec", "{\"command\":\"head -c 1000000 /dev/urandom; echo; echo end-marker; exit 3\"}", 0);
    assert_int_equal(cJSON_GetObjectItem(j, "exit_code")->valueint, 3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "truncated")));
    const char *out = str_of(j, "output");
    if (strlen(out) < 100000)
        fail_msg("only %zu bytes of output came back", strlen(out));
    assert_non_null(strstr(out, " bytes of output dropped ...]"));
    size_t n = strlen(out);
    assert_true(n > 11 && !strcmp(out + n - 11, "end-marker\n")); /* the tail is there */
    record_matches(w, out);
    cJSON_Delete(j);
    ocisbx_harness_free(h);
}

/* job output and wait: the same, next_offset counting the job's bytes. */
static void job_output_past_a_nul(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    cJSON *j = call(h, "exec", "{\"command\":\"printf 'j1\\\\0j2\\\\377\\\\n'\",\"background\":true}", 0);
    char job[64], args[160];
    snprintf(job, sizeof job, "%s", str_of(j, "job_id"));
    cJSON_Delete(j);
    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"wait\",\"wait_ms\":120000}", job);
    j = call(h, "job", args, 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "running")));
    assert_string_equal(str_of(j, "output"), "j1" FFFD "j2" FFFD "\n");
    assert_int_equal(cJSON_GetObjectItem(j, "next_offset")->valueint, 7);
    cJSON_Delete(j);
    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"output\"}", job);
    j = call(h, "job", args, 0);
    assert_string_equal(str_of(j, "output"), "j1" FFFD "j2" FFFD "\n");
    record_matches(w, str_of(j, "output"));
    cJSON_Delete(j);
    ocisbx_harness_free(h);
}

/* read: a NUL past the first 8 KiB (the file is text by the check) and
 * invalid bytes: every line is there, each byte as U+FFFD. */
static void read_past_a_late_nul(void **state)
{
    world *w = *state;
    size_t pre = 5000 * 2;
    static const char tail[] = "x\0y\nbad \xff\xfe end\nlast\n";
    char *data = malloc(pre + sizeof tail);
    for (size_t i = 0; i < pre; i += 2)
        memcpy(data + i, "a\n", 2);
    memcpy(data + pre, tail, sizeof tail - 1);
    put(w, "/workspace/bytes/late.txt", data, pre + sizeof tail - 1);
    free(data);
    ocisbx_harness *h = harness_world_harness(w, NULL);
    cJSON *j = call(h, "read", "{\"path\":\"bytes/late.txt\",\"offset\":5000}", 0);
    assert_string_equal(str_of(j, "content"),
                        "  5000\ta\n  5001\tx" FFFD "y\n  5002\tbad " FFFD FFFD " end\n  5003\tlast\n");
    assert_int_equal(cJSON_GetObjectItem(j, "total_lines")->valueint, 5003);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "truncated")));
    record_matches(w, str_of(j, "content"));
    cJSON_Delete(j);
    ocisbx_harness_free(h);
}

/* search: a matching line and its context lines that are not UTF-8. */
static void search_lines_not_utf8(void **state)
{
    world *w = *state;
    static const char text[] = "ctx \xc3\x28 before\nfind-me \xff here\nctx \xe9 after\n";
    put(w, "/workspace/bytes/s.txt", text, sizeof text - 1);
    ocisbx_harness *h = harness_world_harness(w, NULL);
    cJSON *j = call(h, "search", "{\"pattern\":\"find-me\",\"path\":\"bytes\",\"context\":1,\"literal\":true}", 0);
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "matches"), 0);
    assert_non_null(m);
    assert_string_equal(str_of(m, "text"), "find-me " FFFD " here");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "before"), 0)),
                        "ctx " FFFD "( before");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "after"), 0)),
                        "ctx " FFFD " after");
    cJSON_Delete(j);
    ocisbx_harness_free(h);
}

/* The diff of an edit in a file with a byte that is not UTF-8. */
static void diff_not_utf8(void **state)
{
    world *w = *state;
    static const char text[] = "caf\xe9 one\nkeep\n";
    put(w, "/workspace/bytes/d.txt", text, sizeof text - 1);
    ocisbx_harness *h = harness_world_harness(w, NULL);
    cJSON *j = call(h, "edit", "{\"path\":\"bytes/d.txt\",\"old_string\":\"one\",\"new_string\":\"two\"}", 0);
    const char *d = str_of(j, "diff");
    assert_non_null(strstr(d, "-caf" FFFD " one\n+caf" FFFD " two\n keep\n"));
    cJSON_Delete(j);
    ocisbx_harness_free(h);
}

/* ---- a canceled call ---- */
static volatile int cancel_now;

static int cancel_cb(void *ud)
{
    (void)ud;
    return cancel_now;
}

/* A second backend on the world's workspace, with the cancel callback. */
static ocisbx_backend *cancelable(world *w)
{
    ocisbx_backend_options *o = NULL;
    ocisbx_backend *b = NULL;
    assert_int_equal(ocisbx_backend_options_new(&o), 0);
    ocisbx_backend_options_set_cancel(o, cancel_cb, NULL);
    int rc;
    if (w->emu) {
        ocisbx_backend_options_set_client(o, w->c);
        ocisbx_backend_options_set_region(o, EMU_FIXTURE_REGION);
        ocisbx_backend_options_set_poll_interval_ms(o, 50);
        rc = ocisbx_backend_connect(ocisbx_backend_sandbox_id(w->b), o, &b);
    } else {
        rc = ocisbx_backend_local(w->dir, o, &b);
    }
    ocisbx_backend_options_free(o);
    if (rc)
        fail_msg("backend: %s", ocisbx_error_message(ocisbx_error_last()));
    return b;
}

static void canceled_is_its_own_error(void **state)
{
    world *w = *state;
    ocisbx_backend *b = cancelable(w);
    ocisbx_harness *h = NULL;
    assert_int_equal(ocisbx_harness_new(b, NULL, &h), 0);
    cancel_now = 1;
    char *out = NULL;
    int rc = ocisbx_harness_call_json(h, "exec", "{\"command\":\"echo a; sleep 30\"}", &out);
    cancel_now = 0;
    assert_int_equal(rc, OCISBX_ECANCELED);
    cJSON *j = cJSON_Parse(out);
    const cJSON *e = cJSON_GetObjectItem(j, "error");
    assert_string_equal(str_of(e, "code"), "canceled");
    const char *m = str_of(e, "message");
    if (!strstr(m, "the user interrupted it") || strstr(m, "retry") || strstr(m, "unavailable"))
        fail_msg("message: %s", m);
    cJSON_Delete(j);
    ocisbx_free(out);
    ocisbx_harness_free(h);
    ocisbx_backend_disown(b); /* the world's workspace: never closed from here */
    ocisbx_backend_free(b);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(exec_output_past_a_nul), cmocka_unit_test(exec_binary_output_capped),
        cmocka_unit_test(job_output_past_a_nul),  cmocka_unit_test(read_past_a_late_nul),
        cmocka_unit_test(search_lines_not_utf8),  cmocka_unit_test(diff_not_utf8),
        cmocka_unit_test(canceled_is_its_own_error),
    };
    int rc = par_run_group_tests_name("local", t, harness_world_setup_local, harness_world_teardown);
    rc |= par_run_group_tests_name("oci", t, harness_world_setup_oci, harness_world_teardown);
    return rc;
}
