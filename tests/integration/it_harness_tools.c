/* The harness tools of issue 18, on the local backend and on the emulator:
 * apply_patch (applied whole, atomic when the third of three files fails,
 * paths out of the workspace and denied paths refused with nothing
 * written, its errors, the evidence's paths), edit with several edits, a
 * dry run and a diff, write's diff, search's output modes, context and
 * paging, ls paging, exec that yields and job wait. */
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
#include "ocisbx/backend.h"
#include "ocisbx/harness.h"
#include "test_keys.h"
#include "par_run.h"

typedef harness_world world;
#define ANY_ERROR 1 /* want_rc: any failure */

/* harness_world_call, with ANY_ERROR for any failure. */
static cJSON *call(ocisbx_harness *h, const char *tool, const char *args, int want_rc)
{
    if (want_rc != ANY_ERROR)
        return harness_world_call(h, tool, args, want_rc);
    char *out = NULL;
    int rc = ocisbx_harness_call_json(h, tool, args, &out);
    assert_non_null(out);
    if (rc >= 0)
        fail_msg("%s %s: rc %d, want a failure: %s", tool, args, rc, out);
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    ocisbx_free(out);
    return j;
}
#define expect_error harness_world_expect_error

/* The file's whole content, or NULL when it does not exist (free()). */
static char *content_of(world *w, const char *path)
{
    unsigned char *d = NULL;
    size_t len = 0;
    int rc = ocisbx_backend_read_bytes(w->b, path, &d, &len);
    if (rc == OCISBX_ENOTFOUND)
        return NULL;
    if (rc)
        fail_msg("read %s: %s", path, ocisbx_error_message(ocisbx_error_last()));
    char *s = malloc(len + 1);
    memcpy(s, d, len);
    s[len] = 0;
    ocisbx_free(d);
    return s;
}

static void assert_content(world *w, const char *path, const char *want)
{
    char *got = content_of(w, path);
    if (!want && got)
        fail_msg("%s exists: \"%s\"", path, got);
    if (want && (!got || strcmp(got, want)))
        fail_msg("%s: \"%s\", want \"%s\"", path, got ? got : "(missing)", want);
    free(got);
}

static void put(world *w, const char *path, const char *text)
{
    if (ocisbx_backend_write(w->b, path, text, strlen(text)))
        fail_msg("write %s: %s", path, ocisbx_error_message(ocisbx_error_last()));
}

/* {"patch": text} */
static char *patch_args(const char *text)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "patch", text);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static cJSON *apply(ocisbx_harness *h, const char *text, int want_rc)
{
    char *a = patch_args(text);
    cJSON *j = call(h, "apply_patch", a, want_rc);
    free(a);
    return j;
}

static void expect_patch_error(ocisbx_harness *h, const char *text, const char *code, const char *msg_has)
{
    cJSON *j = apply(h, text, ANY_ERROR);
    const char *got = harness_world_err_code(j);
    if (!got || strcmp(got, code))
        fail_msg("patch error %s, want %s", got ? got : "(none)", code);
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "message"));
    if (msg_has && (!m || !strstr(m, msg_has)))
        fail_msg("message \"%s\" lacks \"%s\"", m ? m : "", msg_has);
    cJSON_Delete(j);
}

static bool has_text(const cJSON *j, const char *text)
{
    char *s = cJSON_PrintUnformatted(j);
    bool hit = s && strstr(s, text) != NULL;
    free(s);
    return hit;
}

static void apply_patch_every_action(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    put(w, "/workspace/p/a.py", "def greet():\n    print(\"Hi\")\n    return 1\n");
    put(w, "/workspace/p/old.txt", "gone\n");
    put(w, "/workspace/p/from.txt", "one\ntwo\n");
    cJSON *j = apply(h,
                     "*** Begin Patch\n"
                     "*** Add File: p/new.txt\n+hello\n+world\n"
                     "*** Update File: p/a.py\n@@ def greet():\n-    print(\"Hi\")\n+    print(\"Hello\")\n"
                     "*** Delete File: /workspace/p/old.txt\n"
                     "*** Update File: p/from.txt\n*** Move to: p/to.txt\n@@\n one\n-two\n+2\n"
                     "*** End Patch\n",
                     0);
    assert_content(w, "/workspace/p/new.txt", "hello\nworld\n");
    assert_content(w, "/workspace/p/a.py", "def greet():\n    print(\"Hello\")\n    return 1\n");
    assert_content(w, "/workspace/p/old.txt", NULL);
    assert_content(w, "/workspace/p/from.txt", NULL);
    assert_content(w, "/workspace/p/to.txt", "one\n2\n");
    const cJSON *files = cJSON_GetObjectItem(j, "files");
    assert_int_equal(cJSON_GetArraySize(files), 4);
    static const char *const want[][3] = {{"/workspace/p/new.txt", "add", NULL},
                                          {"/workspace/p/a.py", "update", NULL},
                                          {"/workspace/p/old.txt", "delete", NULL},
                                          {"/workspace/p/from.txt", "move", "/workspace/p/to.txt"}};
    for (int i = 0; i < 4; i++) {
        const cJSON *f = cJSON_GetArrayItem(files, i);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(f, "path")), want[i][0]);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(f, "action")), want[i][1]);
        if (want[i][2])
            assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(f, "moved_to")), want[i][2]);
        else
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(f, "moved_to")));
    }
    const char *diff = cJSON_GetStringValue(cJSON_GetObjectItem(j, "diff"));
    assert_non_null(diff);
    assert_non_null(strstr(diff, "--- /dev/null\n+++ b/p/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"));
    assert_non_null(strstr(diff, "--- a/p/a.py\n+++ b/p/a.py\n"));
    assert_non_null(strstr(diff, "-    print(\"Hi\")\n+    print(\"Hello\")\n"));
    assert_non_null(strstr(diff, "--- a/p/old.txt\n+++ /dev/null\n"));
    assert_non_null(strstr(diff, "--- a/p/from.txt\n+++ b/p/to.txt\n"));
    cJSON_Delete(j);
    /* the record names the label and every path */
    cJSON *rec = cJSON_Parse(w->last_record);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "tool")), "apply_patch");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "label")), OCISBX_LABEL_WRITE);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "path")), "/workspace/p/new.txt");
    const cJSON *paths = cJSON_GetObjectItem(rec, "paths");
    assert_int_equal(cJSON_GetArraySize(paths), 5);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(paths, 4)), "/workspace/p/to.txt");
    cJSON_Delete(rec);
    ocisbx_harness_free(h);
}

/* Item: the third of three files fails, so nothing is written: once when
 * its hunk does not match (prepare), once when its write fails (commit:
 * the first two are restored). */
static void apply_patch_is_atomic(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    put(w, "/workspace/at/one.txt", "1\n");
    put(w, "/workspace/at/two.txt", "2\n");
    put(w, "/workspace/at/three.txt", "3\n");
    put(w, "/workspace/at/plain", "a file, not a directory\n");
    expect_patch_error(h,
                       "*** Begin Patch\n"
                       "*** Update File: at/one.txt\n@@\n-1\n+one\n"
                       "*** Update File: at/two.txt\n@@\n-2\n+two\n"
                       "*** Update File: at/three.txt\n@@\n-not there\n+three\n"
                       "*** End Patch\n",
                       "no_match", "three.txt");
    assert_content(w, "/workspace/at/one.txt", "1\n");
    assert_content(w, "/workspace/at/two.txt", "2\n");
    assert_content(w, "/workspace/at/three.txt", "3\n");
    cJSON *j = apply(h,
                     "*** Begin Patch\n"
                     "*** Update File: at/one.txt\n@@\n-1\n+one\n"
                     "*** Add File: at/brand-new.txt\n+new\n"
                     "*** Add File: at/plain/inner.txt\n+cannot be written: its parent is a file\n"
                     "*** End Patch\n",
                     ANY_ERROR);
    assert_non_null(harness_world_err_code(j));
    assert_true(has_text(j, "the patch was not applied: the files already changed were restored"));
    cJSON_Delete(j);
    assert_content(w, "/workspace/at/one.txt", "1\n");
    assert_content(w, "/workspace/at/brand-new.txt", NULL);
    assert_content(w, "/workspace/at/plain", "a file, not a directory\n");
    ocisbx_harness_free(h);
}

static ocisbx_harness *with_policy(world *w, const char *yaml)
{
    char pol[160];
    snprintf(pol, sizeof pol, "%s.policy.yaml", w->evidence);
    FILE *f = fopen(pol, "w");
    assert_non_null(f);
    fputs(yaml, f);
    fclose(f);
    ocisbx_harness_options *o = NULL;
    assert_int_equal(ocisbx_harness_options_new(&o), 0);
    if (ocisbx_harness_options_set_policy_file(o, pol))
        fail_msg("policy: %s", ocisbx_error_message(ocisbx_error_last()));
    ocisbx_harness *h = harness_world_harness(w, o);
    ocisbx_harness_options_free(o);
    unlink(pol);
    return h;
}

/* Item: a path (or Move target) out of /workspace, and a path the policy
 * denies (directly or through a symlink), refuse the whole patch. */
static void apply_patch_paths_refused(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    put(w, "/workspace/out/keep.txt", "keep\n");
    static const char *const outside[] = {
        "*** Begin Patch\n*** Update File: out/keep.txt\n@@\n-keep\n+changed\n"
        "*** Add File: ../escaped.txt\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Add File: out/fine.txt\n+x\n*** Add File: /etc/ocisbx-escaped\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: out/keep.txt\n*** Move to: ../../moved.txt\n@@\n-keep\n+moved\n"
        "*** End Patch\n",
    };
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++)
        expect_patch_error(h, outside[i], "outside_workspace", "outside the workspace");
    assert_content(w, "/workspace/out/keep.txt", "keep\n");
    assert_content(w, "/workspace/out/fine.txt", NULL);
    ocisbx_harness_free(h);

    h = with_policy(w, "rules:\n  - label: workspace.write\n    path: \"/workspace/.git/**\"\n    decision: deny\n"
                       "    reason: read-only\ndefault: allow\n");
    put(w, "/workspace/.git/config", "[core]\n");
    cJSON *j = apply(h,
                     "*** Begin Patch\n*** Update File: out/keep.txt\n@@\n-keep\n+changed\n"
                     "*** Add File: .git/config\n+[evil]\n*** End Patch\n",
                     ANY_ERROR);
    assert_string_equal(harness_world_err_code(j), "denied");
    assert_true(has_text(j, "read-only"));
    cJSON_Delete(j);
    j = apply(h,
              "*** Begin Patch\n*** Update File: out/keep.txt\n*** Move to: .git/hooks/pre-commit\n@@\n-keep\n+x\n"
              "*** End Patch\n",
              ANY_ERROR);
    assert_string_equal(harness_world_err_code(j), "denied");
    cJSON_Delete(j);
    /* through a symlink: the resolved path is what the rules see */
    j = call(h, "exec", "{\"command\":\"ln -s .git gitlink\"}", 0);
    cJSON_Delete(j);
    j = apply(h, "*** Begin Patch\n*** Add File: gitlink/config\n+[evil]\n*** End Patch\n", ANY_ERROR);
    assert_string_equal(harness_world_err_code(j), "denied");
    cJSON_Delete(j);
    cJSON *rec = cJSON_Parse(w->last_record);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "decision")), "deny");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "resolved_path")), "/workspace/.git/config");
    cJSON_Delete(rec);
    assert_content(w, "/workspace/out/keep.txt", "keep\n");
    assert_content(w, "/workspace/.git/config", "[core]\n");
    assert_content(w, "/workspace/.git/hooks/pre-commit", NULL);
    ocisbx_harness_free(h);
}

static void apply_patch_errors(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    put(w, "/workspace/er/f.txt", "alpha\nbeta\n");
    expect_patch_error(h, "*** Begin Patch\n*** Add File: er/x.txt\n+x\n", "invalid_patch", "line");
    expect_patch_error(h, "*** Begin Patch\n*** Frobnicate File: er/x\n*** End Patch\n", "invalid_patch", "line 2");
    expect_patch_error(h, "*** Begin Patch\n*** Update File: er/none.txt\n@@\n-a\n+b\n*** End Patch\n", "not_found",
                       "none.txt");
    expect_patch_error(h, "*** Begin Patch\n*** Delete File: er/none.txt\n*** End Patch\n", "not_found", NULL);
    expect_patch_error(h, "*** Begin Patch\n*** Update File: er\n@@\n-a\n+b\n*** End Patch\n", "is_directory", NULL);
    expect_patch_error(h, "*** Begin Patch\n*** Update File: er/f.txt\n@@\n-gamma\n+delta\n*** End Patch\n",
                       "no_match", "gamma");
    expect_patch_error(h,
                       "*** Begin Patch\n*** Update File: er/f.txt\n@@\n-alpha\n+a\n"
                       "*** Delete File: er/f.txt\n*** End Patch\n",
                       "conflict", NULL);
    assert_content(w, "/workspace/er/f.txt", "alpha\nbeta\n");
    /* tolerant matching and the final newline, through the backend */
    put(w, "/workspace/er/g.txt", "x = 1   \ny = 2");
    cJSON_Delete(
        apply(h, "*** Begin Patch\n*** Update File: er/g.txt\n@@\n x = 1\n-y = 2\n+y = 3\n*** End Patch\n", 0));
    assert_content(w, "/workspace/er/g.txt", "x = 1   \ny = 3\n");
    ocisbx_harness_free(h);
}

static void edit_several_dry_run_diff(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    put(w, "/workspace/ed/m.c", "int a = 1;\nint b = 2;\nint c = 3;\n");
    const char *two = "{\"path\":\"ed/m.c\",\"edits\":[{\"old_string\":\"a = 1\",\"new_string\":\"a = 10\"},"
                      "{\"old_string\":\"a = 10;\\nint b\",\"new_string\":\"a = 10;\\nlong b\"}]";
    char args[512];
    snprintf(args, sizeof args, "%s,\"dry_run\":true}", two);
    cJSON *j = call(h, "edit", args, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "dry_run")));
    assert_int_equal(cJSON_GetObjectItem(j, "replacements")->valueint, 2);
    const char *diff = cJSON_GetStringValue(cJSON_GetObjectItem(j, "diff"));
    assert_non_null(strstr(diff, "--- a/ed/m.c\n+++ b/ed/m.c\n"));
    assert_non_null(strstr(diff, "-int a = 1;\n-int b = 2;\n+int a = 10;\n+long b = 2;\n"));
    char would[65];
    snprintf(would, sizeof would, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(j, "sha256")));
    cJSON_Delete(j);
    assert_content(w, "/workspace/ed/m.c", "int a = 1;\nint b = 2;\nint c = 3;\n");
    snprintf(args, sizeof args, "%s}", two);
    j = call(h, "edit", args, 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "dry_run")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "edits")), 2);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "sha256")), would);
    cJSON_Delete(j);
    assert_content(w, "/workspace/ed/m.c", "int a = 10;\nlong b = 2;\nint c = 3;\n");
    /* the second of three edits fails: nothing changes, its index named */
    j = call(h, "edit",
             "{\"path\":\"ed/m.c\",\"edits\":[{\"old_string\":\"int c\",\"new_string\":\"short c\"},"
             "{\"old_string\":\"nowhere\",\"new_string\":\"x\"},{\"old_string\":\"long\",\"new_string\":\"int\"}]}",
             ANY_ERROR);
    assert_string_equal(harness_world_err_code(j), "no_match");
    assert_true(has_text(j, "edits[1]"));
    cJSON_Delete(j);
    j = call(h, "edit", "{\"path\":\"ed/m.c\",\"edits\":[{\"old_string\":\"int\",\"new_string\":\"x\"}]}", ANY_ERROR);
    assert_string_equal(harness_world_err_code(j), "not_unique");
    assert_true(has_text(j, "edits[0]"));
    cJSON_Delete(j);
    assert_content(w, "/workspace/ed/m.c", "int a = 10;\nlong b = 2;\nint c = 3;\n");
    /* the single form as before, with its diff; its messages say "edit" */
    j = call(h, "edit", "{\"path\":\"ed/m.c\",\"old_string\":\"long\",\"new_string\":\"int\"}", 0);
    assert_int_equal(cJSON_GetObjectItem(j, "replacements")->valueint, 1);
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(j, "diff")), "-long b = 2;\n+int b = 2;\n"));
    cJSON_Delete(j);
    j = call(h, "edit", "{\"path\":\"ed/m.c\",\"old_string\":\"nowhere\",\"new_string\":\"x\"}", ANY_ERROR);
    assert_true(has_text(j, "\"edit: the old text does not occur"));
    cJSON_Delete(j);
    expect_error(h, "edit", "{\"path\":\"ed/m.c\",\"old_string\":\"a\"}", "invalid_arguments");
    expect_error(h, "edit",
                 "{\"path\":\"ed/m.c\",\"old_string\":\"a\",\"new_string\":\"b\",\"edits\":[{\"old_string\":\"a\","
                 "\"new_string\":\"b\"}]}",
                 "invalid_arguments");
    expect_error(h, "edit",
                 "{\"path\":\"ed/m.c\",\"replace_all\":true,\"edits\":[{\"old_string\":\"a\",\"new_string\":\"b\"}]}",
                 "invalid_arguments");
    ocisbx_harness_free(h);
}

static void write_has_a_diff(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    cJSON *j = call(h, "write", "{\"path\":\"wd/n.txt\",\"content\":\"first\\n\"}", 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "diff")),
                        "--- /dev/null\n+++ b/wd/n.txt\n@@ -0,0 +1 @@\n+first\n");
    cJSON_Delete(j);
    j = call(h, "write", "{\"path\":\"wd/n.txt\",\"content\":\"second\\n\"}", 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "diff")),
                        "--- a/wd/n.txt\n+++ b/wd/n.txt\n@@ -1 +1 @@\n-first\n+second\n");
    cJSON_Delete(j);
    /* a long diff is cut with the note of the bytes dropped */
    size_t n = 20000;
    char *text = malloc(n * 10 + 1);
    for (size_t i = 0; i < n; i++)
        snprintf(text + i * 10, 11, "line%05zu\n", i);
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "path", "wd/big.txt");
    cJSON_AddStringToObject(a, "content", text);
    char *big = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    free(text);
    j = call(h, "write", big, 0);
    free(big);
    const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(j, "diff"));
    assert_true(strlen(d) <= OCISBX_BACKEND_DEFAULT_MAX_DIFF_BYTES);
    assert_non_null(strstr(d, "bytes of diff dropped ...]"));
    cJSON_Delete(j);
    ocisbx_harness_free(h);
}

static const cJSON *item(const cJSON *j, const char *list, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(j, list), i);
}

static const char *str_of(const cJSON *o, const char *name)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(o, name));
}

/* The last record is of this tool and allowed. */
static void rec_has_tool(world *w, const char *tool)
{
    cJSON *rec = cJSON_Parse(w->last_record);
    assert_string_equal(str_of(rec, "tool"), tool);
    assert_string_equal(str_of(rec, "decision"), "allow");
    cJSON_Delete(rec);
}

static void search_modes_context_paging(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    put(w, "/workspace/s/a.txt", "x1\nfoo one\nx3\nfoo two\n");
    put(w, "/workspace/s/b.txt", "foo three\n");
    put(w, "/workspace/s/c.txt", "nothing\n");
    cJSON *j = call(h, "search", "{\"pattern\":\"foo\",\"path\":\"s\",\"context\":1}", 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "matches")), 3);
    const cJSON *m = item(j, "matches", 0);
    assert_string_equal(str_of(m, "path"), "/workspace/s/a.txt");
    assert_int_equal(cJSON_GetObjectItem(m, "line")->valueint, 2);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "before"), 0)), "x1");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "after"), 0)), "x3");
    m = item(j, "matches", 2); /* b.txt has one line: no context around it */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(m, "before")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(m, "after")), 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "truncated")));
    cJSON_Delete(j);
    j = call(h, "search", "{\"pattern\":\"foo\",\"path\":\"s\"}", 0);
    assert_null(cJSON_GetObjectItem(item(j, "matches", 0), "before")); /* no context asked: as before */
    cJSON_Delete(j);
    j = call(h, "search", "{\"pattern\":\"foo\",\"path\":\"s\",\"output_mode\":\"files_with_matches\"}", 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "files")), 2);
    assert_string_equal(cJSON_GetStringValue(item(j, "files", 1)), "/workspace/s/b.txt");
    assert_null(cJSON_GetObjectItem(j, "matches"));
    cJSON_Delete(j);
    j = call(h, "search", "{\"pattern\":\"foo\",\"path\":\"s\",\"output_mode\":\"count\"}", 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "counts")), 2);
    assert_string_equal(str_of(item(j, "counts", 0), "path"), "/workspace/s/a.txt");
    assert_int_equal(cJSON_GetObjectItem(item(j, "counts", 0), "count")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(item(j, "counts", 1), "count")->valueint, 1);
    cJSON_Delete(j);
    /* paging: head_limit and offset; max_results is head_limit's synonym */
    j = call(h, "search", "{\"pattern\":\"foo\",\"path\":\"s\",\"head_limit\":2}", 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "matches")), 2);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "truncated")));
    assert_int_equal(cJSON_GetObjectItem(j, "next_offset")->valueint, 2);
    cJSON_Delete(j);
    j = call(h, "search", "{\"pattern\":\"foo\",\"path\":\"s\",\"head_limit\":2,\"offset\":2}", 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "matches")), 1);
    assert_string_equal(str_of(item(j, "matches", 0), "text"), "foo three");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "truncated")));
    cJSON_Delete(j);
    j = call(h, "search", "{\"pattern\":\"foo\",\"path\":\"s\",\"max_results\":1}", 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "matches")), 1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "truncated")));
    cJSON_Delete(j);
    j = call(h, "search",
             "{\"pattern\":\"foo\",\"path\":\"s\",\"output_mode\":\"files_with_matches\",\"head_limit\":1}", 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "files")), 1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "truncated")));
    cJSON_Delete(j);
    j = call(h, "search", "{\"pattern\":\"foo\",\"path\":\"s\",\"offset\":10}", 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "matches")), 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "truncated")));
    cJSON_Delete(j);
    expect_error(h, "search", "{\"pattern\":\"foo\",\"output_mode\":\"lines\"}", "invalid_arguments");
    ocisbx_harness_free(h);
}

static void ls_paging(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    for (int i = 0; i < 5; i++) {
        char p[64];
        snprintf(p, sizeof p, "/workspace/l/f%d", i);
        put(w, p, "x");
    }
    cJSON *j = call(h, "ls", "{\"path\":\"l\",\"limit\":2}", 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "entries")), 2);
    assert_string_equal(str_of(item(j, "entries", 1), "name"), "f1");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "truncated")));
    assert_int_equal(cJSON_GetObjectItem(j, "next_offset")->valueint, 2);
    cJSON_Delete(j);
    j = call(h, "ls", "{\"path\":\"l\",\"limit\":2,\"offset\":4}", 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "entries")), 1);
    assert_string_equal(str_of(item(j, "entries", 0), "name"), "f4");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "truncated")));
    cJSON_Delete(j);
    j = call(h, "ls", "{\"path\":\"l\"}", 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "entries")), 5);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "truncated")));
    cJSON_Delete(j);
    ocisbx_harness_free(h);
}

/* exec with yield_ms: a quick command as before; a long one comes back as
 * a job whose output job wait continues from where the yield left off. */
static void exec_yields_job_waits(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    cJSON *j = call(h, "exec", "{\"command\":\"echo quick\",\"yield_ms\":60000}", 0);
    assert_int_equal(cJSON_GetObjectItem(j, "exit_code")->valueint, 0);
    assert_string_equal(str_of(j, "output"), "quick\n");
    assert_null(cJSON_GetObjectItem(j, "job_id"));
    cJSON_Delete(j);
    j = call(h, "exec",
             "{\"command\":\"echo early; while [ ! -e yw/go ]; do sleep 0.1; done; echo late\",\"yield_ms\":300}",
             0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "running")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "truncated")));
    assert_null(cJSON_GetObjectItem(j, "exit_code"));
    char job[64], seen[256];
    snprintf(job, sizeof job, "%s", str_of(j, "job_id"));
    snprintf(seen, sizeof seen, "%s", str_of(j, "output"));
    assert_int_equal(strncmp(seen, "early\n", strlen(seen)), 0); /* what it wrote so far */
    cJSON_Delete(j);
    rec_has_tool(w, "exec");
    char args[256];
    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"wait\",\"wait_ms\":100}", job);
    j = call(h, "job", args, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "running")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "exit_code")));
    strncat(seen, str_of(j, "output"), sizeof seen - strlen(seen) - 1);
    cJSON_Delete(j);
    put(w, "/workspace/yw/go", "");
    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"wait\",\"wait_ms\":120000}", job);
    j = call(h, "job", args, 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "running")));
    assert_int_equal(cJSON_GetObjectItem(j, "exit_code")->valueint, 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "timed_out")));
    strncat(seen, str_of(j, "output"), sizeof seen - strlen(seen) - 1);
    assert_string_equal(seen, "early\nlate\n"); /* each byte once, in order */
    assert_int_equal(cJSON_GetObjectItem(j, "next_offset")->valueint, 11);
    cJSON_Delete(j);
    /* output with an offset as before */
    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"output\",\"offset\":6}", job);
    j = call(h, "job", args, 0);
    assert_string_equal(str_of(j, "output"), "late\n");
    cJSON_Delete(j);
    ocisbx_harness_free(h);
}

/* The prompt fragment names the new tool and parameters (from the rows). */
static void prompt_names_them(void **state)
{
    world *w = *state;
    ocisbx_harness *h = harness_world_harness(w, NULL);
    char *p = NULL;
    assert_int_equal(ocisbx_harness_prompt(h, &p), 0);
    static const char *const want[] = {"- apply_patch (workspace.write): ",
                                       "*** Begin Patch",
                                       "yield_ms",
                                       "output_mode",
                                       "head_limit",
                                       "dry_run",
                                       "action wait"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(p, want[i]))
            fail_msg("the prompt lacks \"%s\"", want[i]);
    ocisbx_free(p);
    ocisbx_harness_free(h);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(exec_yields_job_waits),       cmocka_unit_test(search_modes_context_paging),
        cmocka_unit_test(apply_patch_every_action),    cmocka_unit_test(apply_patch_is_atomic),
        cmocka_unit_test(apply_patch_paths_refused),   cmocka_unit_test(apply_patch_errors),
        cmocka_unit_test(edit_several_dry_run_diff),   cmocka_unit_test(write_has_a_diff),
        cmocka_unit_test(ls_paging),                   cmocka_unit_test(prompt_names_them),
    };
    /* both worlds' cases in one pool */
    const par_group groups[] = {
        PAR_GROUP("local", t, harness_world_setup_local, harness_world_teardown),
        PAR_GROUP("oci", t, harness_world_setup_oci, harness_world_teardown),
    };
    return par_run_groups(groups, sizeof groups / sizeof groups[0]) ? 1 : 0;
}
