/* The gate and the evidence against an outside probe (issue 20), on the
 * local backend and on the emulator: a call whose evidence cannot be
 * written never runs; path rules cover what search, glob and ls list and
 * see through symlinks; a command rule's allow covers every simple command
 * of the line or none; approval prompts get no raw control characters; a
 * secret inside a path is redacted everywhere. */
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

#include "harness_world.h"
#include "test_keys.h"
#include "par_run.h"

/* A call whatever its return code: the parsed result. */
static cJSON *call_any(ocisbx_harness *h, const char *tool, const char *args, int *rc)
{
    char *out = NULL;
    int r = ocisbx_harness_call_json(h, tool, args, &out);
    if (rc)
        *rc = r;
    assert_non_null(out);
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    ocisbx_free(out);
    return j;
}

static const char *err_message(const cJSON *j)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "message"));
}

/* A harness without evidence file or gate: to set things up and look. */
static ocisbx_harness *plain(harness_world *w)
{
    ocisbx_harness *h = NULL;
    assert_int_equal(ocisbx_harness_new(w->b, NULL, &h), 0);
    return h;
}

/* Whether a workspace file exists (read through a plain harness). */
static int ws_exists(harness_world *w, const char *path)
{
    ocisbx_harness *h = plain(w);
    char args[256];
    snprintf(args, sizeof args, "{\"path\":\"%s\"}", path);
    cJSON *j = call_any(h, "read", args, NULL);
    const char *code = harness_world_err_code(j);
    int exists = !code || strcmp(code, "not_found") != 0;
    cJSON_Delete(j);
    ocisbx_harness_free(h);
    return exists;
}

/* Item 6: an evidence file whose last line is torn: the call is refused
 * with evidence_error before it reaches the workspace; nothing runs. */
static void torn_evidence_refuses_the_call(void **state)
{
    harness_world *w = *state;
    assert_int_equal(test_write_text(w->evidence, "{\"partial"), 0);
    ocisbx_harness *h = harness_world_harness(w, NULL);
    int rc = 0;
    cJSON *j = call_any(h, "exec", "{\"command\":\"touch ran.txt\"}", &rc);
    assert_int_not_equal(rc, 0);
    assert_string_equal(harness_world_err_code(j), "evidence_error");
    assert_non_null(strstr(err_message(j), "not run"));
    cJSON_Delete(j);
    assert_false(ws_exists(w, "ran.txt"));
    j = call_any(h, "write", "{\"path\":\"written.txt\",\"content\":\"x\"}", &rc);
    assert_string_equal(harness_world_err_code(j), "evidence_error");
    cJSON_Delete(j);
    assert_false(ws_exists(w, "written.txt"));
    ocisbx_harness_free(h);
    /* a denied call cannot leave its record either: evidence_error too */
    ocisbx_harness_options *o = NULL;
    assert_int_equal(ocisbx_harness_options_new(&o), 0);
    assert_int_equal(ocisbx_harness_options_deny_label(o, "workspace.exec", NULL), 0);
    h = harness_world_harness(w, o);
    ocisbx_harness_options_free(o);
    j = call_any(h, "exec", "{\"command\":\"touch ran.txt\"}", &rc);
    assert_string_equal(harness_world_err_code(j), "evidence_error");
    cJSON_Delete(j);
    ocisbx_harness_free(h);
    assert_false(ws_exists(w, "ran.txt"));
    /* a whole file again: calls run and are recorded */
    unlink(w->evidence);
    h = harness_world_harness(w, NULL);
    cJSON_Delete(harness_world_call(h, "exec", "{\"command\":\"touch ran.txt\"}", 0));
    ocisbx_harness_free(h);
    assert_true(ws_exists(w, "ran.txt"));
    int64_t n = 0;
    assert_int_equal(ocisbx_evidence_verify_file(w->evidence, &n, NULL), 0);
    assert_int_equal(n, 1);
    unlink(w->evidence);
}

/* A harness with this policy text, evidence to the world's file. */
static ocisbx_harness *with_policy(harness_world *w, const char *yaml)
{
    char pol[160];
    snprintf(pol, sizeof pol, "%s.policy.yaml", w->evidence);
    assert_int_equal(test_write_text(pol, yaml), 0);
    ocisbx_harness_options *o = NULL;
    assert_int_equal(ocisbx_harness_options_new(&o), 0);
    if (ocisbx_harness_options_set_policy_file(o, pol))
        fail_msg("policy: %s", ocisbx_error_message(ocisbx_error_last()));
    ocisbx_harness *h = harness_world_harness(w, o);
    ocisbx_harness_options_free(o);
    unlink(pol);
    return h;
}

static bool has_text(const cJSON *j, const char *text)
{
    char *s = cJSON_PrintUnformatted(j);
    bool hit = strstr(s, text) != NULL;
    free(s);
    return hit;
}

static void set_up_secrets(harness_world *w)
{
    ocisbx_harness *h = plain(w);
    cJSON_Delete(harness_world_call(h, "write", "{\"path\":\"secrets/key\",\"content\":\"TOPSECRET key\\n\"}", 0));
    cJSON_Delete(harness_world_call(h, "write", "{\"path\":\"notes.txt\",\"content\":\"TOPSECRET note\\n\"}", 0));
    cJSON_Delete(harness_world_call(h, "write", "{\"path\":\".git/config\",\"content\":\"[core]\\n\"}", 0));
    cJSON_Delete(harness_world_call(
        h, "exec", "{\"command\":\"ln -sfn .git gitlink && ln -sfn secrets seclink && ln -sfn / rootlink\"}", 0));
    ocisbx_harness_free(h);
}

#define SECRETS_POLICY                                                                                          \
    "rules:\n  - label: workspace.read\n    path: \"/workspace/secrets/**\"\n    decision: deny\n"              \
    "    reason: secrets are not for the model\n"                                                               \
    "  - label: workspace.write\n    path: \"/workspace/.git/**\"\n    decision: deny\n    reason: read-only\n" \
    "default: allow\n"

/* Item 7: search, glob and ls leave out what a read of it would be denied,
 * and say how many; a call whose root is denied is denied. */
static void path_rules_cover_search_glob_ls(void **state)
{
    harness_world *w = *state;
    set_up_secrets(w);
    ocisbx_harness *h = with_policy(w, SECRETS_POLICY);
    cJSON *j = harness_world_call(h, "search", "{\"pattern\":\"TOPSECRET\"}", 0);
    assert_false(has_text(j, "secrets/key"));
    assert_true(has_text(j, "/workspace/notes.txt"));
    assert_int_equal(cJSON_GetObjectItem(j, "denied_paths")->valueint, 1);
    cJSON_Delete(j);
    j = harness_world_call(h, "glob", "{\"pattern\":\"**\"}", 0);
    assert_false(has_text(j, "secrets/key"));
    assert_true(has_text(j, "/workspace/notes.txt"));
    assert_true(cJSON_GetObjectItem(j, "denied_paths")->valueint >= 1);
    cJSON_Delete(j);
    j = harness_world_call(h, "ls", "{\"path\":\"/workspace\"}", 0);
    assert_false(has_text(j, "\"name\":\"secrets\""));
    assert_true(has_text(j, "\"name\":\"notes.txt\""));
    assert_int_equal(cJSON_GetObjectItem(j, "denied_paths")->valueint, 1);
    cJSON_Delete(j);
    /* nothing left out: no denied_paths */
    j = harness_world_call(h, "search", "{\"pattern\":\"note\"}", 0);
    assert_null(cJSON_GetObjectItem(j, "denied_paths"));
    cJSON_Delete(j);
    /* the root denied: the call is */
    harness_world_expect_error(h, "search", "{\"pattern\":\"TOPSECRET\",\"path\":\"secrets\"}", "denied");
    harness_world_expect_error(h, "glob", "{\"pattern\":\"*\",\"path\":\"/workspace/secrets\"}", "denied");
    harness_world_expect_error(h, "ls", "{\"path\":\"secrets\"}", "denied");
    harness_world_expect_error(h, "read", "{\"path\":\"secrets/key\"}", "denied");
    ocisbx_harness_free(h);
}

/* Item 8: the gate decides on the resolved path: a symlink does not walk
 * around a path rule; the record has both paths. */
static void symlinks_do_not_walk_around_rules(void **state)
{
    harness_world *w = *state;
    set_up_secrets(w);
    char *resolved = NULL;
    assert_int_equal(ocisbx_backend_resolve_path(w->b, "gitlink/config", &resolved), 0);
    assert_string_equal(resolved, "/workspace/.git/config");
    ocisbx_free(resolved);
    assert_int_equal(ocisbx_backend_resolve_path(w->b, "rootlink/etc", &resolved), OCISBX_EFORBIDDEN);
    ocisbx_harness *h = with_policy(w, SECRETS_POLICY);
    harness_world_expect_error(h, "write", "{\"path\":\"gitlink/config\",\"content\":\"pwned\\n\"}", "denied");
    cJSON *rec = cJSON_Parse(w->last_record);
    assert_string_equal(cJSON_GetObjectItem(rec, "path")->valuestring, "/workspace/gitlink/config");
    assert_string_equal(cJSON_GetObjectItem(rec, "resolved_path")->valuestring, "/workspace/.git/config");
    assert_string_equal(cJSON_GetObjectItem(rec, "decision")->valuestring, "deny");
    cJSON_Delete(rec);
    harness_world_expect_error(
        h, "edit", "{\"path\":\"gitlink/config\",\"old_string\":\"core\",\"new_string\":\"x\"}", "denied");
    harness_world_expect_error(h, "read", "{\"path\":\"seclink/key\"}", "denied");
    harness_world_expect_error(h, "search", "{\"pattern\":\"TOPSECRET\",\"path\":\"seclink\"}", "denied");
    harness_world_expect_error(h, "read", "{\"path\":\"rootlink/etc/passwd\"}", "outside_workspace");
    /* allowed through a link: the record says where it went */
    cJSON_Delete(harness_world_call(h, "write", "{\"path\":\"notes-link.txt\",\"content\":\"x\"}", 0));
    cJSON *j = harness_world_call(h, "read", "{\"path\":\"notes.txt\"}", 0);
    cJSON_Delete(j);
    rec = cJSON_Parse(w->last_record);
    assert_string_equal(cJSON_GetObjectItem(rec, "resolved_path")->valuestring, "/workspace/notes.txt");
    cJSON_Delete(rec);
    ocisbx_harness_free(h);
    /* .git/config is what it was */
    h = plain(w);
    j = harness_world_call(h, "read", "{\"path\":\".git/config\"}", 0);
    assert_string_equal(cJSON_GetObjectItem(j, "content")->valuestring, "     1\t[core]\n");
    cJSON_Delete(j);
    ocisbx_harness_free(h);
}

/* Item 9: the documented example (an allow for pytest, a deny for the
 * rest) no longer lets a whole line run behind pytest. */
static void allow_rule_covers_each_simple_command(void **state)
{
    harness_world *w = *state;
    ocisbx_harness *h = with_policy(w,
                                    "rules:\n"
                                    "  - label: workspace.exec\n    command: \"^pytest( |$)\"\n    decision: allow\n"
                                    "  - label: workspace.exec\n    decision: deny\n    reason: only pytest\n"
                                    "default: allow\n");
    harness_world_expect_error(h, "exec", "{\"command\":\"pytest ; echo pwned > /workspace/pwned; cat secrets/key\"}",
                               "denied");
    harness_world_expect_error(h, "exec", "{\"command\":\"pytest $(touch pwned2) -q\"}", "denied");
    harness_world_expect_error(h, "exec", "{\"command\":\"pytest `touch pwned3` -q\"}", "denied");
    ocisbx_harness_free(h);
    assert_false(ws_exists(w, "pwned"));
    assert_false(ws_exists(w, "pwned2"));
    assert_false(ws_exists(w, "pwned3"));
    /* every simple command allowed: the line runs */
    h = with_policy(w, "rules:\n"
                       "  - label: workspace.exec\n    command: \"^(echo|touch) \"\n    decision: allow\n"
                       "  - label: workspace.exec\n    decision: deny\n"
                       "default: allow\n");
    cJSON_Delete(harness_world_call(h, "exec", "{\"command\":\"echo a > ok1.txt && touch ok2.txt\"}", 0));
    harness_world_expect_error(h, "exec", "{\"command\":\"echo a | tee nok.txt\"}", "denied");
    ocisbx_harness_free(h);
    assert_true(ws_exists(w, "ok1.txt"));
    assert_true(ws_exists(w, "ok2.txt"));
    assert_false(ws_exists(w, "nok.txt"));
}

typedef struct asked {
    char args[1024], reason[512];
} asked;

static int ask(const char *tool, const char *label, const char *args, const char *reason, void *ud)
{
    (void)tool, (void)label;
    asked *a = ud;
    snprintf(a->args, sizeof a->args, "%s", args);
    snprintf(a->reason, sizeof a->reason, "%s", reason ? reason : "");
    return 0;
}

/* No C0, DEL or C1 control byte (ESC, CSI) in what a terminal would show. */
static bool has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return true;
    return false;
}

/* Item 10: the approval callback gets C1 controls escaped as C0 ones are
 * (\u009b in the arguments' JSON; the reason's escaped as \x..). */
static void approval_sees_no_control_characters(void **state)
{
    harness_world *w = *state;
    ocisbx_harness *h = with_policy(w, "rules:\n  - label: workspace.exec\n    decision: hold\n"
                                       "    reason: \"check \\x9b31m and \\e[31m \\u00e9\"\n");
    asked a = {{0}, {0}};
    ocisbx_harness_set_approval(h, ask, &a);
    harness_world_expect_error(h, "exec", "{\"command\":\"echo \\u009b31m \\u001b[31m \\u007f \\u00e9\"}", "denied");
    ocisbx_harness_free(h);
    if (has_control(a.args))
        fail_msg("a control byte in the arguments: %s", a.args);
    assert_non_null(strstr(a.args, "\\u009b31m"));
    assert_non_null(strstr(a.args, "\\u001b[31m"));
    assert_non_null(strstr(a.args, "\xc3\xa9")); /* printable UTF-8 stays */
    cJSON *j = cJSON_Parse(a.args);              /* still JSON, with the same text */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "command")), "echo \xc2\x9b"
                                                                                 "31m \x1b[31m \x7f \xc3\xa9");
    cJSON_Delete(j);
    if (has_control(a.reason))
        fail_msg("a control byte in the reason: %s", a.reason);
    assert_non_null(strstr(a.reason, "\xc3\xa9"));
}

static bool file_has(const char *path, const char *text)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, text) != NULL;
}

/* Item 12: a secret inside a path is redacted in results, records, errors
 * and log lines. */
static void secret_in_a_path_is_redacted(void **state)
{
    harness_world *w = *state;
    w->log_lines = w->secret_logged = 0;
    unlink(w->evidence);
    ocisbx_harness *h = with_policy(w, "rules:\n  - label: workspace.read\n    path: \"/workspace/nothing/**\"\n"
                                       "    decision: deny\n");
    static const char *const calls[][2] = {
        {"write", "{\"path\":\"dir-" HARNESS_WORLD_SECRET "/f.txt\",\"content\":\"x\\n\"}"},
        {"read", "{\"path\":\"dir-" HARNESS_WORLD_SECRET "/f.txt\"}"},
        {"edit", "{\"path\":\"dir-" HARNESS_WORLD_SECRET "/f.txt\",\"old_string\":\"x\",\"new_string\":\"y\"}"},
        {"glob", "{\"pattern\":\"**/f.txt\"}"},
        {"search", "{\"pattern\":\"y\",\"path\":\"dir-" HARNESS_WORLD_SECRET "\"}"},
        {"ls", "{\"path\":\"/workspace\"}"},
        {"read", "{\"path\":\"missing-" HARNESS_WORLD_SECRET "\"}"},
        {"read", "{\"path\":\"/etc/" HARNESS_WORLD_SECRET "\"}"},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        cJSON *j = call_any(h, calls[i][0], calls[i][1], NULL);
        if (has_text(j, HARNESS_WORLD_SECRET))
            fail_msg("%s %s: the secret is in the result", calls[i][0], calls[i][1]);
        bool shows_path = i == 0 || i == 3 || i == 4 || i == 5; /* write, glob, search, ls */
        if (shows_path && !has_text(j, "[REDACTED]"))
            fail_msg("%s %s: no [REDACTED] in the result", calls[i][0], calls[i][1]);
        cJSON_Delete(j);
        if (strstr(ocisbx_error_message(ocisbx_error_last()), HARNESS_WORLD_SECRET))
            fail_msg("%s %s: the secret is in the thread's error", calls[i][0], calls[i][1]);
    }
    ocisbx_harness_free(h);
    assert_false(file_has(w->evidence, HARNESS_WORLD_SECRET));
    assert_true(file_has(w->evidence, "\"path\":\"/workspace/dir-[REDACTED]/f.txt\""));
    assert_true(file_has(w->evidence, "\"resolved_path\":\"/workspace/dir-[REDACTED]/f.txt\""));
    assert_true(w->log_lines > 0);
    if (w->secret_logged)
        fail_msg("the secret is in %d log lines", w->secret_logged);

    /* a harness secret that a URL percent-encodes */
    ocisbx_harness_options *o = NULL;
    assert_int_equal(ocisbx_harness_options_new(&o), 0);
    assert_int_equal(ocisbx_harness_options_add_env(o, "TOKEN", "sp ace+plus", 1), 0);
    h = harness_world_harness(w, o);
    ocisbx_harness_options_free(o);
    w->watch[0] = "sp ace+plus";
    w->watch[1] = "sp%20ace%2Bplus"; /* as a URL's query has it */
    w->watch_logged = 0;
    cJSON *j = harness_world_call(h, "write", "{\"path\":\"e-sp ace+plus.txt\",\"content\":\"x\"}", 0);
    assert_false(has_text(j, "sp ace+plus"));
    cJSON_Delete(j);
    harness_world_expect_error(h, "read", "{\"path\":\"nope-sp ace+plus\"}", "not_found");
    ocisbx_harness_free(h);
    w->watch[0] = w->watch[1] = NULL;
    assert_int_equal(w->watch_logged, 0);
    assert_false(file_has(w->evidence, "sp ace+plus"));
    assert_false(file_has(w->evidence, "sp%20ace%2Bplus"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(torn_evidence_refuses_the_call),
        cmocka_unit_test(path_rules_cover_search_glob_ls),
        cmocka_unit_test(symlinks_do_not_walk_around_rules),
        cmocka_unit_test(allow_rule_covers_each_simple_command),
        cmocka_unit_test(approval_sees_no_control_characters),
        cmocka_unit_test(secret_in_a_path_is_redacted),
    };
    int rc = par_run_group_tests_name("local", tests, harness_world_setup_local, harness_world_teardown);
    rc |= par_run_group_tests_name("oci", tests, harness_world_setup_oci, harness_world_teardown);
    return rc;
}
