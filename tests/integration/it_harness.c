/* The harness (include/ocisbx/harness.h): the same suite against the local
 * backend and against the emulator: every tool through the JSON entry
 * point, schema errors, the gate (a denied call never reaches the
 * workspace), the policy file, approval, evidence (every field, the chain,
 * a tampered line found), and a planted secret that never comes back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "harness_world.h"
#include "ocisbx/backend.h"
#include "ocisbx/harness.h"
#include "test_keys.h"
#include "par_run.h"

#define SECRET HARNESS_WORLD_SECRET
typedef harness_world world;
#define setup_local harness_world_setup_local
#define setup_oci harness_world_setup_oci
#define teardown harness_world_teardown
#define harness harness_world_harness
#define call harness_world_call
#define err_code harness_world_err_code
#define expect_error harness_world_expect_error

static void test_every_tool(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness(w, NULL);
    cJSON *j = call(h, "write", "{\"path\":\"pkg/hello.py\",\"content\":\"print('hi')\\nx = 1\\n\"}", 0);
    assert_string_equal(cJSON_GetObjectItem(j, "path")->valuestring, "/workspace/pkg/hello.py");
    assert_int_equal(cJSON_GetObjectItem(j, "bytes")->valueint, 18);
    assert_int_equal(strlen(cJSON_GetObjectItem(j, "sha256")->valuestring), 64);
    cJSON_Delete(j);
    j = call(h, "read", "{\"path\":\"/workspace/pkg/hello.py\"}", 0);
    assert_string_equal(cJSON_GetObjectItem(j, "content")->valuestring, "     1\tprint('hi')\n     2\tx = 1\n");
    assert_int_equal(cJSON_GetObjectItem(j, "total_lines")->valueint, 2);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "truncated")));
    cJSON_Delete(j);
    j = call(h, "read", "{\"path\":\"/workspace/pkg/hello.py\",\"limit\":1}", 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "truncated")));
    cJSON_Delete(j);
    j = call(h, "edit", "{\"path\":\"pkg/hello.py\",\"old_string\":\"x = 1\",\"new_string\":\"x = 2\"}", 0);
    assert_int_equal(cJSON_GetObjectItem(j, "replacements")->valueint, 1);
    cJSON_Delete(j);
    j = call(h, "search", "{\"pattern\":\"x = [0-9]\"}", 0);
    cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "matches"), 0);
    assert_string_equal(cJSON_GetObjectItem(m, "path")->valuestring, "/workspace/pkg/hello.py");
    assert_int_equal(cJSON_GetObjectItem(m, "line")->valueint, 2);
    assert_string_equal(cJSON_GetObjectItem(m, "text")->valuestring, "x = 2");
    cJSON_Delete(j);
    j = call(h, "glob", "{\"pattern\":\"**/*.py\"}", 0);
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "paths"), 0)->valuestring,
                        "/workspace/pkg/hello.py");
    cJSON_Delete(j);
    j = call(h, "ls", "{\"path\":\"/workspace/pkg\"}", 0);
    m = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "entries"), 0);
    assert_string_equal(cJSON_GetObjectItem(m, "name")->valuestring, "hello.py");
    assert_string_equal(cJSON_GetObjectItem(m, "type")->valuestring, "file");
    cJSON_Delete(j);
    j = call(h, "exec", "{\"command\":\"cat pkg/hello.py; echo err >&2; exit 3\"}", 0);
    assert_int_equal(cJSON_GetObjectItem(j, "exit_code")->valueint, 3);
    assert_string_equal(cJSON_GetObjectItem(j, "output")->valuestring, "print('hi')\nx = 2\nerr\n");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "timed_out")));
    cJSON_Delete(j);
    j = call(h, "exec", "{\"command\":\"sleep 30\",\"timeout\":1}", 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "exit_code")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "timed_out")));
    cJSON_Delete(j);
    j = call(h, "exec", "{\"command\":\"echo started; sleep 30\",\"background\":true}", 0);
    char job[64];
    snprintf(job, sizeof job, "%s", cJSON_GetObjectItem(j, "job_id")->valuestring);
    cJSON_Delete(j);
    char args[256];
    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"status\"}", job);
    j = call(h, "job", args, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "running")));
    cJSON_Delete(j);
    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"kill\"}", job);
    j = call(h, "job", args, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "killed")));
    cJSON_Delete(j);
    ocisbx_harness_free(h);
}

static void test_errors(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness(w, NULL);
    expect_error(h, "read", "{\"path\":\"/etc/passwd\"}", "outside_workspace");
    expect_error(h, "read", "{\"path\":\"a/../../etc\"}", "outside_workspace");
    expect_error(h, "read", "{\"path\":\"/workspace/missing\"}", "not_found");
    expect_error(h, "read", "{\"path\":\"/workspace\"}", "is_directory");
    expect_error(h, "read", "{\"pth\":\"x\"}", "invalid_arguments");
    expect_error(h, "read", "not json", "invalid_arguments");
    expect_error(h, "rm", "{}", "invalid_arguments");
    cJSON_Delete(call(h, "write", "{\"path\":\"e.txt\",\"content\":\"a a\\n\"}", 0));
    expect_error(h, "edit", "{\"path\":\"e.txt\",\"old_string\":\"b\",\"new_string\":\"c\"}", "no_match");
    expect_error(h, "edit", "{\"path\":\"e.txt\",\"old_string\":\"a\",\"new_string\":\"c\"}", "not_unique");
    expect_error(h, "edit",
                 "{\"path\":\"e.txt\",\"old_string\":\"a a\",\"new_string\":\"c\",\"expected_sha256\":"
                 "\"0000000000000000000000000000000000000000000000000000000000000000\"}",
                 "conflict");
    ocisbx_harness_free(h);
}

static int deny_writes(const char *tool, const char *label, const char *args, ocisbx_gate_reply *r, void *ud)
{
    (void)tool, (void)args, (void)ud;
    if (!strcmp(label, OCISBX_LABEL_WRITE)) {
        ocisbx_gate_reply_set_reason(r, "writes are not allowed in this test");
        return OCISBX_GATE_DENY;
    }
    return OCISBX_GATE_ALLOW;
}

static int approve_only_echo(const char *tool, const char *label, const char *args, const char *reason, void *ud)
{
    (void)tool, (void)label, (void)reason;
    (*(int *)ud)++;
    return strstr(args, "echo") != NULL;
}

static void test_gate_policy_approval_evidence(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness(w, NULL);
    ocisbx_harness_set_gate(h, deny_writes, NULL);
    cJSON *j = call(h, "write", "{\"path\":\"denied.txt\",\"content\":\"x\"}", OCISBX_EDENIED);
    assert_string_equal(err_code(j), "denied");
    assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "message")->valuestring,
                           "writes are not allowed"));
    cJSON_Delete(j);
    /* the denied write never reached the workspace */
    ocisbx_harness_set_gate(h, NULL, NULL);
    j = call(h, "ls", "{\"path\":\"/workspace\"}", 0);
    char *listing = cJSON_PrintUnformatted(j);
    assert_null(strstr(listing, "denied.txt"));
    free(listing);
    cJSON_Delete(j);
    expect_error(h, "read", "{\"path\":\"denied.txt\"}", "not_found");
    assert_non_null(strstr(w->last_record, "\"decision\":\"allow\""));
    ocisbx_harness_free(h);

    /* policy file + require a person, approval callback */
    char pol[160];
    snprintf(pol, sizeof pol, "%s.policy.yaml", w->evidence);
    test_write_text(pol, "rules:\n  - label: workspace.exec\n    command: \"^echo( |$)\"\n    decision: hold\n"
                         "  - label: workspace.write\n    path: \"/workspace/.git/**\"\n    decision: deny\n"
                         "    reason: repository metadata is read-only\ndefault: allow\n");
    ocisbx_harness_options *o = NULL;
    assert_int_equal(ocisbx_harness_options_new(&o), 0);
    assert_int_equal(ocisbx_harness_options_set_policy_file(o, pol), 0);
    h = harness(w, o);
    ocisbx_harness_options_free(o);
    expect_error(h, "write", "{\"path\":\".git/config\",\"content\":\"x\"}", "denied");
    assert_non_null(strstr(w->last_record, "repository metadata is read-only"));
    /* held without an approver: refused */
    expect_error(h, "exec", "{\"command\":\"echo hi\"}", "denied");
    assert_non_null(strstr(w->last_record, "\"decision\":\"refused\""));
    int asked = 0;
    ocisbx_harness_set_approval(h, approve_only_echo, &asked);
    j = call(h, "exec", "{\"command\":\"echo approved\"}", 0);
    assert_string_equal(cJSON_GetObjectItem(j, "output")->valuestring, "approved\n");
    cJSON_Delete(j);
    assert_int_equal(asked, 1);
    assert_non_null(strstr(w->last_record, "\"decision\":\"approved\""));
    /* every field of the exec record */
    cJSON *rec = cJSON_Parse(w->last_record);
    static const char *const fields[] = {
        "tool",           "label",           "decision",      "reason",       "command",      "path",
        "exit_code",      "timed_out",       "truncated",     "duration_ms",  "output_bytes", "output_sha256",
        "returned_bytes", "returned_sha256", "sha256_before", "sha256_after", "backend",      "sandbox_id",
        "command_id",     "started_at",      "prev_sha256"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!cJSON_GetObjectItem(rec, fields[i]))
            fail_msg("no %s in %s", fields[i], w->last_record);
    assert_int_equal(cJSON_GetObjectItem(rec, "exit_code")->valueint, 0);
    assert_int_equal(cJSON_GetObjectItem(rec, "output_bytes")->valueint, 9);
    assert_string_equal(cJSON_GetObjectItem(rec, "backend")->valuestring, ocisbx_backend_label(w->b));
    assert_string_equal(cJSON_GetObjectItem(rec, "command")->valuestring, "echo approved");
    cJSON_Delete(rec);
    ocisbx_harness_free(h);
    unlink(pol);
    /* the file's chain is whole, and a changed line is found */
    int64_t n = 0;
    assert_int_equal(ocisbx_evidence_verify_file(w->evidence, &n, NULL), 0);
    assert_true(n >= 5);
    FILE *f = fopen(w->evidence, "r+b");
    char buf[65536];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    buf[len] = 0;
    char *p = strstr(buf, "\"decision\":\"deny\"");
    assert_non_null(p);
    memcpy(p + 12, "allo", 4); /* "deny" -> "allo": same length */
    fseek(f, 0, SEEK_SET);
    fwrite(buf, 1, len, f);
    fclose(f);
    int64_t bad = 0;
    assert_int_equal(ocisbx_evidence_verify_file(w->evidence, &n, &bad), OCISBX_EINTEGRITY);
    assert_true(bad >= 2);
}

/* A secret value (the backend's, the harness's, marked secret) reaches the
 * command but never a result, a record, an error or a log line. */
static void test_planted_secret(void **state)
{
    world *w = *state;
    w->log_lines = w->secret_logged = 0;
    ocisbx_harness_options *o = NULL;
    assert_int_equal(ocisbx_harness_options_new(&o), 0);
    assert_int_equal(ocisbx_harness_options_add_env(o, "HARNESS_SECRET", SECRET "-2", 1), 0);
    ocisbx_harness *h = harness(w, o);
    ocisbx_harness_options_free(o);
    char *out = NULL;
    ocisbx_harness_call_json(h, "exec",
                             "{\"command\":\"echo $BACKEND_SECRET $HARNESS_SECRET; test \\\"$BACKEND_SECRET\\\" = "
                             "" SECRET " && echo reached; echo " SECRET " > s.txt; exit 9\"}",
                             &out);
    assert_non_null(strstr(out, "reached"));
    assert_non_null(strstr(out, "[REDACTED]"));
    assert_null(strstr(out, SECRET));
    ocisbx_free(out);
    ocisbx_harness_call_json(h, "read", "{\"path\":\"s.txt\"}", &out);
    assert_null(strstr(out, SECRET));
    ocisbx_free(out);
    ocisbx_harness_call_json(h, "search", "{\"pattern\":\"planted\"}", &out);
    assert_null(strstr(out, SECRET));
    ocisbx_free(out);
    ocisbx_harness_call_json(h, "exec", "{\"command\":\"cat /workspace/nope-" SECRET "\"}", &out);
    assert_null(strstr(out, SECRET));
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), SECRET));
    ocisbx_free(out);
    ocisbx_harness_free(h);
    FILE *f = fopen(w->evidence, "rb");
    char buf[65536];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    assert_null(strstr(buf, SECRET));
    assert_non_null(strstr(buf, "[REDACTED]"));
    assert_true(w->log_lines > 0); /* the debug log ran */
    if (w->secret_logged)
        fail_msg("the secret is in %d log lines", w->secret_logged);
}

int main(void)
{
    const struct CMUnitTest local[] = {
        cmocka_unit_test(test_every_tool),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_gate_policy_approval_evidence),
        cmocka_unit_test(test_planted_secret),
    };
    /* both worlds' cases in one pool, the emulator's (the longer) first */
    const par_group groups[] = {
        PAR_GROUP("oci", local, setup_oci, teardown),
        PAR_GROUP("local", local, setup_local, teardown),
    };
    return par_run_groups(groups, sizeof groups / sizeof groups[0]) ? 1 : 0;
}
