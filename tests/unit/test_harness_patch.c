/* The apply_patch engine (src/harness/patch*.c): the parser (every marker,
 * the tolerated white space, each error with its line), the matcher (the
 * three passes, contexts, End of File, line ends, the final newline), and
 * prepare/commit over an in-memory workspace whose writes and removals can
 * be made to fail (a patch applies whole or not at all). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness/patch.h"
#include "ocisbx/common.h"
#include "ocisbx/util.h"
#include "patch_memfs.h"

/* ---- helpers --------------------------------------------------------------------- */
static patch *parse_ok(const char *text)
{
    patch *p = NULL;
    patch_error e;
    int rc = patch_parse(text, strlen(text), &p, &e);
    if (rc)
        fail_msg("parse failed: %s", e.msg);
    return p;
}

/* Parses text that must be refused: the line and a piece of the message. */
static void parse_bad(const char *text, size_t line, const char *piece)
{
    patch *p = NULL;
    patch_error e;
    assert_int_equal(patch_parse(text, strlen(text), &p, &e), OCISBX_EINVAL);
    assert_null(p);
    assert_string_equal(e.code, "invalid_patch");
    if (e.line != line || !strstr(e.msg, piece))
        fail_msg("want line %zu and '%s', got line %zu: %s", line, piece, e.line, e.msg);
    char want[32];
    snprintf(want, sizeof want, "line %zu: ", line);
    assert_non_null(strstr(e.msg, want));
}

static bool line_is(const patch_line *l, char kind, const char *text)
{
    return l->kind == kind && l->len == strlen(text) && !memcmp(l->text, text, l->len);
}

/* Applies the only Update of a patch to content: the new content (free()),
 * or NULL with *err set. */
static char *apply(const char *patch_text, const char *content, patch_error *err)
{
    patch *p = parse_ok(patch_text);
    assert_int_equal(p->n_ops, 1);
    char *out = NULL;
    size_t len = 0;
    int rc = patch_apply_hunks(&p->ops[0], "/workspace/f.txt", content, strlen(content), &out, &len, err);
    patch_free(p);
    if (rc) {
        assert_null(out);
        return NULL;
    }
    assert_int_equal(strlen(out), len);
    return out;
}

static void apply_is(const char *patch_text, const char *content, const char *want)
{
    patch_error e;
    char *out = apply(patch_text, content, &e);
    if (!out)
        fail_msg("apply failed: %s", e.msg);
    if (strcmp(out, want))
        fail_msg("got:\n%s\nwant:\n%s", out, want);
    free(out);
}

/* ---- the parser ------------------------------------------------------------------- */
static void parse_documented_example(void **state)
{
    (void)state;
    patch *p = parse_ok("*** Begin Patch\n"
                        "*** Add File: hello.txt\n"
                        "+Hello world\n"
                        "*** Update File: src/app.py\n"
                        "*** Move to: src/main.py\n"
                        "@@ def greet():\n"
                        "-print(\"Hi\")\n"
                        "+print(\"Hello, world!\")\n"
                        "*** Delete File: obsolete.txt\n"
                        "*** End Patch\n");
    assert_int_equal(p->n_ops, 3);
    assert_int_equal(p->ops[0].action, PATCH_ADD);
    assert_string_equal(p->ops[0].path, "hello.txt");
    assert_int_equal(p->ops[0].no, 2);
    assert_int_equal(p->ops[0].n_lines, 1);
    assert_true(line_is(&p->ops[0].lines[0], '+', "Hello world"));
    assert_int_equal(p->ops[1].action, PATCH_MOVE);
    assert_string_equal(p->ops[1].path, "src/app.py");
    assert_string_equal(p->ops[1].move_to, "src/main.py");
    assert_int_equal(p->ops[1].move_no, 5);
    assert_int_equal(p->ops[1].n_hunks, 1);
    const patch_hunk *h = &p->ops[1].hunks[0];
    assert_int_equal(h->no, 6);
    assert_int_equal(h->n_ctx, 1);
    assert_true(line_is(&h->ctx[0], '@', "def greet():"));
    assert_int_equal(h->n, 2);
    assert_true(line_is(&h->lines[0], '-', "print(\"Hi\")"));
    assert_true(line_is(&h->lines[1], '+', "print(\"Hello, world!\")"));
    assert_false(h->eof);
    assert_int_equal(p->ops[2].action, PATCH_DELETE);
    assert_string_equal(p->ops[2].path, "obsolete.txt");
    assert_string_equal(patch_action_name(p->ops[1].action), "move");
    patch_free(p);
}

static void parse_tolerates_white_space(void **state)
{
    (void)state;
    /* padded markers, CRLF line ends, blank lines around and between */
    patch *p = parse_ok("\n  \n *** Begin Patch \r\n"
                        "  *** Update File:   foo.txt  \r\n"
                        "@@\r\n"
                        "-old\r\n"
                        "+new\r\n"
                        "\n"
                        "\t*** Delete File: gone.txt\n"
                        "\n"
                        " *** End Patch \n\n");
    assert_int_equal(p->n_ops, 2);
    assert_string_equal(p->ops[0].path, "foo.txt");
    const patch_hunk *h = &p->ops[0].hunks[0];
    assert_int_equal(h->n, 3); /* the blank line is an (empty) context line */
    assert_true(line_is(&h->lines[0], '-', "old"));
    assert_true(line_is(&h->lines[1], '+', "new"));
    assert_true(line_is(&h->lines[2], ' ', ""));
    assert_string_equal(p->ops[1].path, "gone.txt");
    patch_free(p);
    /* a shell heredoc around the patch is taken off */
    p = parse_ok("<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n");
    assert_int_equal(p->n_ops, 1);
    patch_free(p);
}

static void parse_hunk_forms(void **state)
{
    (void)state;
    patch *p = parse_ok("*** Begin Patch\n"
                        "*** Update File: f\n"
                        " first context\n" /* the first hunk may go without @@ */
                        "-x\n"
                        "@@ class A\n"
                        "@@   def m(self):\n" /* several @@ lines narrow the place */
                        "-a\n"
                        "+b\n"
                        "@@ -10,3 +10,4 @@ def g():\n" /* a unified diff's ranges are dropped */
                        " y\n"
                        "@@ -1 +1 @@\n"
                        "+z\n"
                        " @@ not a header\n"
                        "*** End of File\n"
                        "*** End Patch");
    const patch_op *op = &p->ops[0];
    assert_int_equal(op->n_hunks, 4);
    assert_int_equal(op->hunks[0].n_ctx, 0);
    assert_int_equal(op->hunks[0].no, 3);
    assert_true(line_is(&op->hunks[0].lines[0], ' ', "first context"));
    assert_int_equal(op->hunks[1].n_ctx, 2);
    assert_true(line_is(&op->hunks[1].ctx[0], '@', "class A"));
    assert_true(line_is(&op->hunks[1].ctx[1], '@', "def m(self):"));
    assert_int_equal(op->hunks[2].n_ctx, 1);
    assert_true(line_is(&op->hunks[2].ctx[0], '@', "def g():"));
    assert_int_equal(op->hunks[3].n_ctx, 0);
    assert_int_equal(op->hunks[3].n, 2);
    assert_true(line_is(&op->hunks[3].lines[1], ' ', "@@ not a header"));
    assert_true(op->hunks[3].eof);
    assert_false(op->hunks[2].eof);
    patch_free(p);
    /* an Add with no lines is an empty file; an Update with only a Move is a rename */
    p = parse_ok("*** Begin Patch\n*** Add File: empty\n*** Update File: a\n*** Move to: b\n*** End Patch\n");
    assert_int_equal(p->ops[0].n_lines, 0);
    assert_int_equal(p->ops[1].action, PATCH_MOVE);
    assert_int_equal(p->ops[1].n_hunks, 0);
    patch_free(p);
}

static void parse_errors_name_the_line(void **state)
{
    (void)state;
    parse_bad("", 1, "the patch is empty");
    parse_bad("*** Update File: a\n@@\n-x\n*** End Patch\n", 1, "expected '*** Begin Patch' as the first line");
    parse_bad("*** Begin Patch\n*** Delete File: a\n", 2, "expected '*** End Patch' as the last line");
    parse_bad("*** Begin Patch\n", 2, "expected '*** End Patch'");
    parse_bad("*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Delete File: b\n", 4, "nothing may follow");
    parse_bad("*** Begin Patch\n*** End Patch\n", 2, "no file operations");
    parse_bad("*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch\n", 2, "expected '*** Add File: PATH'");
    parse_bad("*** Begin Patch\n*** Add File: a\n+one\ntwo\n*** End Patch\n", 4, "expected a line starting with '+'");
    parse_bad("*** Begin Patch\n*** Add File: a\n+one\n\n+three\n*** End Patch\n", 4, "starting with '+'");
    parse_bad("*** Begin Patch\n*** Add File:\n+x\n*** End Patch\n", 2, "expected a path after '*** Add File:'");
    parse_bad("*** Begin Patch\n*** Update File: a\n*** End Patch\n", 2, "has no hunks");
    parse_bad("*** Begin Patch\n*** Update File: a\n@@ ctx\n*** End Patch\n", 3, "the hunk has no lines");
    parse_bad("*** Begin Patch\n*** Update File: a\n@@\n-x\n*** Move to: b\n*** End Patch\n", 5,
              "must come right after");
    parse_bad("*** Begin Patch\n*** Update File: a\n@@\n-x\nbad line\n*** End Patch\n", 5,
              "expected a hunk line starting with ' '");
    parse_bad("*** Begin Patch\n*** Update File: a\n@@\n-x\n*** End of File\n+y\n*** End Patch\n", 6,
              "after '*** End of File'");
    parse_bad("*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch\n", 3, "must follow the lines");
    parse_bad("*** Begin Patch\n*** Update File: a\n@@\n-x\n-y\n+z\n x\n+q\nq\n*** End Patch\n", 9, "got 'q'");
    parse_bad("*** Begin Patch\n*** Delete File: a\n+x\n*** End Patch\n", 3, "nothing follows");
    parse_bad("*** Begin Patch\n*** Update File: a\n@@\n-x\n@@\n*** End Patch\n", 5, "the hunk has no lines");
    parse_bad("*** Begin Patch\n*** Update File: a\n@@\n-x\n*** Begin Patch\n*** End Patch\n", 5,
              "got '*** Begin Patch'");
}

/* ---- the matcher ----------------------------------------------------------------- */
static void match_exact_then_tolerant(void **state)
{
    (void)state;
    const char *p = "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n c\n*** End Patch\n";
    apply_is(p, "a\nb\nc\nd\n", "a\nB\nc\nd\n");
    /* trailing white space ignored; the context keeps the file's bytes */
    apply_is(p, "a  \nb\t\nc \n", "a  \nB\nc \n");
    /* white space around ignored */
    apply_is(p, "  a\n  b\n  c\n", "  a\nB\n  c\n");
    /* an exact match wins over an earlier tolerant one */
    apply_is("*** Begin Patch\n*** Update File: f\n@@\n-foo\n+bar\n*** End Patch\n", "foo \nx\nfoo\n",
             "foo \nx\nbar\n");
    /* and a tolerant match over none */
    apply_is("*** Begin Patch\n*** Update File: f\n@@\n-foo\n+bar\n*** End Patch\n", "x\n   foo   \n", "x\nbar\n");
}

static void match_contexts_and_order(void **state)
{
    (void)state;
    const char *file = "def a():\n    pass\n\ndef b():\n    pass\n\ndef c():\n    pass\n";
    apply_is("*** Begin Patch\n*** Update File: f\n@@ def b():\n-    pass\n+    return 2\n*** End Patch\n", file,
             "def a():\n    pass\n\ndef b():\n    return 2\n\ndef c():\n    pass\n");
    /* several hunks, each after the previous one */
    apply_is("*** Begin Patch\n*** Update File: f\n@@\n-    pass\n+    return 1\n@@\n-    pass\n+    return 2\n"
             "*** End Patch\n",
             file, "def a():\n    return 1\n\ndef b():\n    return 2\n\ndef c():\n    pass\n");
    /* several @@ lines: class, then method */
    apply_is("*** Begin Patch\n*** Update File: f\n@@ class B\n@@ def m\n-x\n+y\n*** End Patch\n",
             "class A\ndef m\nx\nclass B\ndef m\nx\n", "class A\ndef m\nx\nclass B\ndef m\ny\n");
    /* only added lines: after the context line, or at the end without one */
    apply_is("*** Begin Patch\n*** Update File: f\n@@ def b():\n+    \"\"\"doc\"\"\"\n*** End Patch\n", file,
             "def a():\n    pass\n\ndef b():\n    \"\"\"doc\"\"\"\n    pass\n\ndef c():\n    pass\n");
    apply_is("*** Begin Patch\n*** Update File: f\n@@\n+added 1\n+added 2\n*** End Patch\n", "line1\nline2\n",
             "line1\nline2\nadded 1\nadded 2\n");
    /* an addition at the end before a later hunk: both apply, in file order */
    apply_is("*** Begin Patch\n*** Update File: f\n@@\n+end\n@@\n-line1\n+first\n*** End Patch\n", "line1\nline2\n",
             "first\nline2\nend\n");
    /* the first hunk without @@, a unified diff header */
    apply_is("*** Begin Patch\n*** Update File: f\n import foo\n+bar\n*** End Patch\n", "import foo\nx\n",
             "import foo\nbar\nx\n");
    apply_is("*** Begin Patch\n*** Update File: f\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n*** End Patch\n", "x\ny\n", "x\nz\n");
}

static void match_end_of_file_and_newlines(void **state)
{
    (void)state;
    const char *p = "*** Begin Patch\n*** Update File: f\n@@\n first\n-second\n+second updated\n*** End of File\n"
                    "*** End Patch\n";
    apply_is(p, "first\nsecond\nfirst\nsecond\n", "first\nsecond\nfirst\nsecond updated\n");
    patch_error e;
    assert_null(apply(p, "first\nsecond\nthird\n", &e));
    assert_string_equal(e.code, "no_match");
    assert_non_null(strstr(e.msg, "End of File"));
    /* a file without a final newline ends with one */
    apply_is("*** Begin Patch\n*** Update File: f\n@@\n-b\n+c\n*** End Patch\n", "a\nb", "a\nc\n");
    apply_is("*** Begin Patch\n*** Update File: f\n@@\n-b\n+c\n*** End Patch\n", "b\na", "c\na\n");
    /* everything removed: empty */
    apply_is("*** Begin Patch\n*** Update File: f\n@@\n-a\n-b\n*** End Patch\n", "a\nb\n", "");
    /* a blank line closing a hunk that the file does not have */
    apply_is("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n\n*** End Patch\n", "x\na", "x\nb\n");
    /* CRLF: LF in the patch matches; added lines get CRLF, kept lines keep theirs */
    apply_is("*** Begin Patch\n*** Update File: f\n@@\n one\n-two\n+TWO\n+2\n three\n*** End Patch\n",
             "one\r\ntwo\r\nthree\r\nfour", "one\r\nTWO\r\n2\r\nthree\r\nfour\r\n");
}

static void match_failures(void **state)
{
    (void)state;
    patch_error e;
    assert_null(apply("*** Begin Patch\n*** Update File: f\n@@\n keep\n-gone\n+new\n*** End Patch\n", "keep\nother\n",
                      &e));
    assert_string_equal(e.code, "no_match");
    assert_int_equal(e.rc, OCISBX_ENOMATCH);
    assert_int_equal(e.line, 3);
    assert_non_null(strstr(e.msg, "/workspace/f.txt"));
    assert_non_null(strstr(e.msg, "line 3"));
    assert_non_null(strstr(e.msg, "\n   keep\n  -gone\n  +new"));
    assert_null(apply("*** Begin Patch\n*** Update File: f\n@@ def nowhere():\n-x\n*** End Patch\n", "x\n", &e));
    assert_string_equal(e.code, "no_match");
    assert_non_null(strstr(e.msg, "'@@ def nowhere():'"));
    /* a hunk is only sought after the previous one */
    assert_null(apply("*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n@@\n-a\n+A\n*** End Patch\n", "a\nb\n", &e));
    assert_string_equal(e.code, "no_match");
    assert_int_equal(e.line, 6);
    /* binary content is refused, not mangled */
    patch *p = parse_ok("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End Patch\n");
    char *out = NULL;
    size_t len;
    assert_int_equal(patch_apply_hunks(&p->ops[0], "f", "a\n\0b\n", 5, &out, &len, &e), OCISBX_EBINARY);
    assert_string_equal(e.code, "binary_file");
    assert_int_equal(patch_apply_hunks(&p->ops[0], "f", "a\n\xff\n", 4, &out, &len, &e), OCISBX_EBINARY);
    assert_null(out);
    patch_free(p);
}

/* ---- prepare and commit over an in-memory workspace ------------------------------- */
/* Runs a patch over fs; 0, or the error's rc with *err set. */
static int run(memfs *fs, const char *text, patch_plan *plan_out, patch_error *err)
{
    patch_io io = memfs_io(fs);
    patch *p = NULL;
    int rc = patch_parse(text, strlen(text), &p, err);
    patch_plan plan = {0};
    if (!rc)
        rc = patch_prepare(p, &io, &plan, err);
    if (!rc)
        rc = patch_commit(&plan, &io, err);
    if (plan_out && !rc)
        *plan_out = plan;
    else
        patch_plan_free(&plan);
    patch_free(p);
    return rc;
}

static void three_files(memfs *fs)
{
    memset(fs, 0, sizeof *fs);
    memfs_put(fs, "/workspace/a.txt", "a1\na2\n", strlen("a1\na2\n"), false);
    memfs_put(fs, "/workspace/b.txt", "b1\nb2\n", strlen("b1\nb2\n"), false);
    memfs_put(fs, "/workspace/c.txt", "c1\nc2\n", strlen("c1\nc2\n"), false);
    memfs_put(fs, "/workspace/dir", NULL, 0, true);
}

static const char *const THREE_UPDATES = "*** Begin Patch\n"
                                         "*** Update File: a.txt\n@@\n-a1\n+A1\n"
                                         "*** Update File: /workspace/b.txt\n@@\n-b1\n+B1\n"
                                         "*** Update File: c.txt\n@@\n-c1\n+C1\n"
                                         "*** End Patch\n";

static void plan_every_action(void **state)
{
    (void)state;
    memfs fs;
    three_files(&fs);
    memfs_put(&fs, "/workspace/dest.txt", "old dest\n", strlen("old dest\n"), false);
    patch_plan plan = {0};
    patch_error e;
    int rc = run(&fs,
                 "*** Begin Patch\n"
                 "*** Add File: new/n.txt\n+hello\n+\n"
                 "*** Add File: c.txt\n+replaced\n"
                 "*** Update File: a.txt\n*** Move to: dest.txt\n@@\n a1\n-a2\n+moved\n"
                 "*** Delete File: b.txt\n"
                 "*** End Patch\n",
                 &plan, &e);
    if (rc)
        fail_msg("%s", e.msg);
    char *dump = memfs_dump(&fs);
    assert_string_equal(dump, "/workspace/c.txt=replaced\n|\n/workspace/dest.txt=a1\nmoved\n|\n/workspace/dir/\n"
                              "/workspace/new/n.txt=hello\n\n|\n");
    free(dump);
    assert_int_equal(plan.n, 4);
    assert_int_equal(plan.v[0].action, PATCH_ADD);
    assert_false(plan.v[0].existed);
    assert_string_equal(plan.v[0].path, "/workspace/new/n.txt");
    assert_int_equal(plan.v[1].action, PATCH_ADD);
    assert_true(plan.v[1].existed); /* an Add of an existing file replaces it */
    assert_string_equal(plan.v[1].old_data, "c1\nc2\n");
    assert_int_equal(plan.v[2].action, PATCH_MOVE);
    assert_string_equal(plan.v[2].moved_to, "/workspace/dest.txt");
    assert_true(plan.v[2].target_existed);
    assert_string_equal(plan.v[2].target_old, "old dest\n");
    assert_int_equal(plan.v[3].action, PATCH_DELETE);
    assert_null(plan.v[3].new_data);
    assert_string_equal(plan.v[3].old_data, "b1\nb2\n");
    patch_plan_free(&plan);
    memfs_free(&fs);
}

static void third_of_three_fails_in_prepare(void **state)
{
    (void)state;
    memfs fs;
    three_files(&fs);
    char *before = memfs_dump(&fs);
    patch_error e;
    char *bad = strdup(THREE_UPDATES);
    strstr(bad, "-c1")[2] = '9'; /* the third file's hunk does not match */
    assert_int_equal(run(&fs, bad, NULL, &e), OCISBX_ENOMATCH);
    assert_string_equal(e.code, "no_match");
    assert_non_null(strstr(e.msg, "/workspace/c.txt"));
    assert_int_equal(fs.writes, 0);
    assert_int_equal(fs.removes, 0);
    char *after = memfs_dump(&fs);
    assert_string_equal(before, after);
    free(after);
    /* a third file that does not exist, or is a directory */
    char *missing = strdup(THREE_UPDATES);
    memcpy(strstr(missing, "c.txt"), "x.txt", 5);
    assert_int_equal(run(&fs, missing, NULL, &e), OCISBX_ENOTFOUND);
    assert_string_equal(e.code, "not_found");
    assert_non_null(strstr(e.msg, "/workspace/x.txt"));
    char *dir = strdup("*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+A1\n*** Delete File: dir\n*** End Patch\n");
    assert_int_equal(run(&fs, dir, NULL, &e), OCISBX_EISDIR);
    assert_string_equal(e.code, "is_directory");
    assert_int_equal(run(&fs, "*** Begin Patch\n*** Delete File: nope\n*** End Patch\n", NULL, &e), OCISBX_ENOTFOUND);
    assert_int_equal(fs.writes, 0);
    after = memfs_dump(&fs);
    assert_string_equal(before, after);
    free(after);
    free(before);
    free(bad);
    free(missing);
    free(dir);
    memfs_free(&fs);
}

static void third_of_three_fails_in_commit(void **state)
{
    (void)state;
    memfs fs;
    three_files(&fs);
    char *before = memfs_dump(&fs);
    fs.fail_write_at = 3;
    patch_error e;
    assert_int_equal(run(&fs, THREE_UPDATES, NULL, &e), OCISBX_ESERVICE);
    assert_string_equal(e.code, "backend_error");
    assert_non_null(strstr(e.msg, "writing /workspace/c.txt: the service said no"));
    assert_non_null(strstr(e.msg, "the files already changed were restored"));
    assert_false(e.undo_failed);
    char *after = memfs_dump(&fs);
    assert_string_equal(before, after);
    free(after);
    assert_int_equal(fs.writes, 3 + 2); /* two restored */
    /* the removal of a deleted file fails: the writes are undone, the added file removed */
    memfs_free(&fs);
    three_files(&fs);
    fs.fail_remove_at = 1;
    assert_int_equal(run(&fs,
                         "*** Begin Patch\n*** Add File: n.txt\n+n\n*** Update File: a.txt\n@@\n-a1\n+A1\n"
                         "*** Delete File: b.txt\n*** End Patch\n",
                         NULL, &e),
                     OCISBX_ESERVICE);
    assert_non_null(strstr(e.msg, "removing /workspace/b.txt"));
    after = memfs_dump(&fs);
    assert_string_equal(before, after);
    free(after);
    /* an undo that fails too is named */
    memfs_free(&fs);
    three_files(&fs);
    fs.fail_write_at = 2;
    fs.fail_undo = true;
    assert_int_equal(run(&fs, THREE_UPDATES, NULL, &e), OCISBX_ESERVICE);
    assert_non_null(strstr(e.msg, "restoring failed for /workspace/a.txt"));
    assert_true(e.undo_failed);
    free(before);
    memfs_free(&fs);
}

static void outside_and_conflicts_refused(void **state)
{
    (void)state;
    memfs fs;
    three_files(&fs);
    char *before = memfs_dump(&fs);
    patch_error e;
    static const char *const outside[] = {
        "*** Begin Patch\n*** Add File: ../evil\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+A\n*** Delete File: /etc/passwd\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: /tmp/a.txt\n@@\n-a1\n+A\n*** End Patch\n",
    };
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        assert_int_equal(run(&fs, outside[i], NULL, &e), OCISBX_EFORBIDDEN);
        assert_string_equal(e.code, "outside_workspace");
        assert_non_null(strstr(e.msg, "outside the workspace"));
    }
    assert_int_equal(fs.reads, 0); /* refused before anything is read */
    assert_int_equal(run(&fs,
                         "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+A\n*** Delete File: /workspace/a.txt\n"
                         "*** End Patch\n",
                         NULL, &e),
                     OCISBX_ECONFLICT);
    assert_string_equal(e.code, "conflict");
    assert_non_null(strstr(e.msg, "lines 2 and 6"));
    assert_int_equal(run(&fs,
                         "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a1\n+A\n"
                         "*** Update File: b.txt\n@@\n-b1\n+B\n*** End Patch\n",
                         NULL, &e),
                     OCISBX_ECONFLICT);
    assert_int_equal(fs.writes + fs.removes, 0);
    char *after = memfs_dump(&fs);
    assert_string_equal(before, after);
    free(after);
    /* a Move onto itself is an update (and an unchanged file is not written) */
    patch_plan plan = {0};
    assert_int_equal(
        run(&fs, "*** Begin Patch\n*** Update File: a.txt\n*** Move to: /workspace/a.txt\n*** End Patch\n", &plan, &e),
        0);
    assert_int_equal(plan.v[0].action, PATCH_UPDATE);
    assert_null(plan.v[0].moved_to);
    assert_int_equal(fs.writes + fs.removes, 0);
    patch_plan_free(&plan);
    free(before);
    memfs_free(&fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_documented_example),
        cmocka_unit_test(parse_tolerates_white_space),
        cmocka_unit_test(parse_hunk_forms),
        cmocka_unit_test(parse_errors_name_the_line),
        cmocka_unit_test(match_exact_then_tolerant),
        cmocka_unit_test(match_contexts_and_order),
        cmocka_unit_test(match_end_of_file_and_newlines),
        cmocka_unit_test(match_failures),
        cmocka_unit_test(plan_every_action),
        cmocka_unit_test(third_of_three_fails_in_prepare),
        cmocka_unit_test(third_of_three_fails_in_commit),
        cmocka_unit_test(outside_and_conflicts_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
