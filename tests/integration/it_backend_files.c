/* The backend's files and search on both implementations (a local
 * directory under bubblewrap, a sandbox of the test tenancy): several edits
 * at once (atomic, dry run, diff), the CRLF rule, the edit size limit,
 * search output modes, context and paging, ls paging. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu_client.h"
#include "emu_fixture.h"
#include "ocisbx/api.h"
#include "ocisbx/backend.h"
#include "ocisbx/util.h"
#include "par_run.h"

typedef struct world {
    emu_fixture *emu;
    ocisbx_client *c;
    char dir[256];
    ocisbx_backend *b;
} world;

static void check(int rc, const char *what)
{
    if (rc)
        fail_msg("%s: %s (%d)", what, ocisbx_error_message(ocisbx_error_last()), rc);
}

static int setup_local(void **state)
{
    world *w = calloc(1, sizeof *w);
    snprintf(w->dir, sizeof w->dir, "/tmp/it_backend_files_XXXXXX");
    if (!mkdtemp(w->dir))
        return -1;
    if (geteuid() == 0 && chown(w->dir, 65534, 65534) != 0)
        return -1;
    if (ocisbx_backend_local(w->dir, NULL, &w->b) != 0) {
        fprintf(stderr, "local backend: %s\n", ocisbx_error_message(ocisbx_error_last()));
        return -1;
    }
    *state = w;
    return 0;
}

static int setup_oci(void **state)
{
    world *w = calloc(1, sizeof *w);
    emu_fixture_options eo = {0};
    eo.extra_yaml =
        "limits:\n  create_delay_ms: 20\n  stop_delay_ms: 20\n  shapes:\n    MEDIUM: {workspace_mib: 20}\n";
    if (emu_fixture_start(&eo, &w->emu) != 0 || emu_client_new(w->emu, 0, &w->c) != 0)
        return -1;
    ocisbx_backend_options *o = NULL;
    ocisbx_backend_options_new(&o);
    ocisbx_backend_options_set_client(o, w->c);
    ocisbx_backend_options_set_region(o, EMU_FIXTURE_REGION);
    ocisbx_backend_options_set_poll_interval_ms(o, 20);
    int rc = ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &w->b);
    ocisbx_backend_options_free(o);
    if (rc) {
        fprintf(stderr, "oci backend: %s\n", ocisbx_error_message(ocisbx_error_last()));
        return -1;
    }
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    int rc = ocisbx_backend_close(w->b) == 0 ? 0 : -1;
    ocisbx_backend_free(w->b);
    ocisbx_client_free(w->c);
    if (w->emu) {
        if (emu_fixture_stop(w->emu) != 0)
            rc = -1;
        emu_fixture_free(w->emu);
    }
    if (w->dir[0]) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", w->dir, w->dir);
        if (system(cmd) != 0)
            rc = -1;
    }
    free(w);
    return rc;
}

/* ---- helpers ---- */
static void sh(world *w, const char *cmd)
{
    ocisbx_exec_options *o = NULL;
    ocisbx_exec_result *r = NULL;
    check(ocisbx_exec_options_new(&o), "exec options");
    check(ocisbx_exec_options_set_timeout_ms(o, 300000), "timeout");
    check(ocisbx_backend_exec(w->b, cmd, o, &r), cmd);
    int x = -1;
    if (ocisbx_exec_result_has_exit_code(r, &x) != 1 || x != 0)
        fail_msg("%s: exit %d: %s", cmd, x, ocisbx_exec_result_output(r, NULL));
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
}

static void put(world *w, const char *path, const char *text)
{
    check(ocisbx_backend_write(w->b, path, text, strlen(text)), path);
}

static void expect_content(world *w, const char *path, const char *want)
{
    unsigned char *d = NULL;
    size_t n = 0;
    check(ocisbx_backend_read_bytes(w->b, path, &d, &n), path);
    if (n != strlen(want) || memcmp(d, want, n) != 0)
        fail_msg("%s: '%.*s', expected '%s'", path, (int)n, (char *)d, want);
    ocisbx_free(d);
}

static void sha_hex(const char *t, char out[65])
{
    unsigned char h[32];
    ocisbx_sha256(t, strlen(t), h);
    ocisbx_hex(h, 32, out);
}

static const char *last_message(void)
{
    return ocisbx_error_message(ocisbx_error_last());
}

static char *sh_out(world *w, const char *cmd)
{
    ocisbx_exec_result *r = NULL;
    check(ocisbx_backend_exec(w->b, cmd, NULL, &r), cmd);
    int x = -1;
    if (ocisbx_exec_result_has_exit_code(r, &x) != 1 || x != 0)
        fail_msg("%s: exit %d: %s", cmd, x, ocisbx_exec_result_output(r, NULL));
    char *s = strdup(ocisbx_exec_result_output(r, NULL));
    ocisbx_exec_result_free(r);
    return s;
}

static void expect_sh(world *w, const char *cmd, const char *want)
{
    char *got = sh_out(w, cmd);
    if (strcmp(got, want) != 0)
        fail_msg("%s: '%s', expected '%s'", cmd, got, want);
    free(got);
}

/* ---- edits ---- */
static void test_edits_in_order(void **state)
{
    world *w = *state;
    const char *t = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";
    put(w, "ed/a.txt", t);
    ocisbx_edit_options *o = NULL;
    check(ocisbx_edit_options_new(&o), "options");
    check(ocisbx_edit_options_add(o, "two", "TWO", 0), "add");
    check(ocisbx_edit_options_add(o, "TWO\nthree", "2\n3", 0), "add (on the result of the first)");
    check(ocisbx_edit_options_add(o, "e", "E", 1), "add all");
    ocisbx_edit_result *r = NULL;
    check(ocisbx_backend_apply_edits(w->b, "/workspace/ed/a.txt", o, &r), "apply");
    assert_int_equal(ocisbx_edit_result_edit_count(r), 3);
    assert_int_equal(ocisbx_edit_result_replacements(r, 0), 1);
    assert_int_equal(ocisbx_edit_result_replacements(r, 1), 1);
    assert_int_equal(ocisbx_edit_result_replacements(r, 2), 7);
    assert_int_equal(ocisbx_edit_result_total_replacements(r), 9);
    assert_int_equal(ocisbx_edit_result_failed_edit(r), -1);
    assert_false(ocisbx_edit_result_dry_run(r));
    const char *want = "onE\n2\n3\nfour\nfivE\nsix\nsEvEn\nEight\nninE\ntEn\n";
    expect_content(w, "ed/a.txt", want);
    char h[65];
    sha_hex(t, h);
    assert_string_equal(ocisbx_edit_result_sha256_before(r), h);
    sha_hex(want, h);
    assert_string_equal(ocisbx_edit_result_sha256_after(r), h);
    assert_int_equal(ocisbx_edit_result_size(r), strlen(want));
    size_t dl = 0;
    const char *d = ocisbx_edit_result_diff(r, &dl);
    assert_string_equal(d, "--- a/ed/a.txt\n+++ b/ed/a.txt\n@@ -1,10 +1,10 @@\n-one\n-two\n-three\n+onE\n+2\n+3\n"
                           " four\n-five\n+fivE\n six\n-seven\n-eight\n-nine\n-ten\n+sEvEn\n+Eight\n+ninE\n+tEn\n");
    assert_int_equal(dl, strlen(d));
    assert_int_equal(ocisbx_edit_result_diff_dropped(r), 0);
    ocisbx_edit_result_free(r);
    ocisbx_edit_options_free(o);
}

static void test_edits_atomic(void **state)
{
    world *w = *state;
    const char *t = "alpha\nbeta\ngamma\nbeta\n";
    put(w, "ed/b.txt", t);
    ocisbx_edit_options *o = NULL;
    ocisbx_edit_result *r = NULL;
    check(ocisbx_edit_options_new(&o), "options");
    check(ocisbx_edit_options_add(o, "alpha", "A", 0), "add");
    check(ocisbx_edit_options_add(o, "gamma", "G", 0), "add");
    check(ocisbx_edit_options_add(o, "alpha", "again", 0), "add (gone after edit 0)");
    assert_int_equal(ocisbx_backend_apply_edits(w->b, "ed/b.txt", o, &r), OCISBX_ENOMATCH);
    assert_non_null(strstr(last_message(), "edits[2]"));
    assert_non_null(r);
    assert_int_equal(ocisbx_edit_result_failed_edit(r), 2);
    ocisbx_edit_result_free(r);
    expect_content(w, "ed/b.txt", t);
    ocisbx_edit_options_free(o);
    /* not unique */
    check(ocisbx_edit_options_new(&o), "options");
    check(ocisbx_edit_options_add(o, "alpha", "A", 0), "add");
    check(ocisbx_edit_options_add(o, "beta", "B", 0), "add");
    assert_int_equal(ocisbx_backend_apply_edits(w->b, "ed/b.txt", o, &r), OCISBX_ENOTUNIQUE);
    assert_non_null(strstr(last_message(), "edits[1]"));
    assert_non_null(strstr(last_message(), "2 times"));
    assert_int_equal(ocisbx_edit_result_failed_edit(r), 1);
    ocisbx_edit_result_free(r);
    expect_content(w, "ed/b.txt", t);
    /* the expected SHA-256 */
    char h[65];
    sha_hex("other", h);
    check(ocisbx_edit_options_set_expected_sha256(o, h), "expected");
    assert_int_equal(ocisbx_backend_apply_edits(w->b, "ed/b.txt", o, &r), OCISBX_ECONFLICT);
    assert_null(r);
    ocisbx_edit_options_free(o);
    /* missing, a directory, no edits, an empty old text */
    check(ocisbx_edit_options_new(&o), "options");
    assert_int_equal(ocisbx_backend_apply_edits(w->b, "ed/b.txt", o, &r), OCISBX_EINVAL);
    assert_int_equal(ocisbx_edit_options_add(o, "", "x", 0), OCISBX_EINVAL);
    check(ocisbx_edit_options_add(o, "a", "b", 0), "add");
    assert_int_equal(ocisbx_backend_apply_edits(w->b, "ed/none.txt", o, &r), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_backend_apply_edits(w->b, "ed", o, &r), OCISBX_EISDIR);
    assert_int_equal(ocisbx_backend_apply_edits(w->b, "/etc/passwd", o, &r), OCISBX_EFORBIDDEN);
    ocisbx_edit_options_free(o);
}

static void test_edits_dry_run(void **state)
{
    world *w = *state;
    const char *t = "keep\nchange me\nkeep";
    put(w, "ed/c.txt", t);
    ocisbx_edit_options *o = NULL;
    ocisbx_edit_result *r = NULL;
    check(ocisbx_edit_options_new(&o), "options");
    check(ocisbx_edit_options_add(o, "change me", "changed", 0), "add");
    check(ocisbx_edit_options_set_dry_run(o, 1), "dry run");
    check(ocisbx_backend_apply_edits(w->b, "ed/c.txt", o, &r), "dry run");
    assert_true(ocisbx_edit_result_dry_run(r));
    assert_string_equal(ocisbx_edit_result_diff(r, NULL),
                        "--- a/ed/c.txt\n+++ b/ed/c.txt\n@@ -1,3 +1,3 @@\n keep\n-change me\n+changed\n keep\n"
                        "\\ No newline at end of file\n");
    ocisbx_edit_result_free(r);
    expect_content(w, "ed/c.txt", t);
    /* a diff bounded with the note */
    check(ocisbx_edit_options_set_max_diff_bytes(o, 128), "max diff");
    check(ocisbx_edit_options_add(o, "keep", "a much longer replacement line, repeated to pass the bound", 1), "add");
    check(ocisbx_backend_apply_edits(w->b, "ed/c.txt", o, &r), "dry run, cut");
    size_t dl = 0;
    const char *d = ocisbx_edit_result_diff(r, &dl);
    assert_true(dl <= 128);
    assert_true(ocisbx_edit_result_diff_dropped(r) > 0);
    char note[80];
    snprintf(note, sizeof note, "[... %llu bytes of diff dropped ...]\n",
             (unsigned long long)ocisbx_edit_result_diff_dropped(r));
    assert_non_null(strstr(d, note));
    ocisbx_edit_result_free(r);
    expect_content(w, "ed/c.txt", t);
    assert_int_equal(ocisbx_edit_options_set_max_diff_bytes(o, 10), OCISBX_EINVAL);
    ocisbx_edit_options_free(o);
}

/* Issue 20 item 3: the exact text wins over a CRLF look-alike. */
static void test_edit_crlf_exact_first(void **state)
{
    world *w = *state;
    const char *t = "first\r\nkeep: x\r\ny\r\nlf part:\nx\ny\n";
    put(w, "ed/mixed.txt", t);
    size_t c = 0;
    check(ocisbx_backend_edit(w->b, "ed/mixed.txt", "x\ny", "X\nY", 0, NULL, &c), "exact");
    assert_int_equal(c, 1);
    expect_content(w, "ed/mixed.txt", "first\r\nkeep: x\r\ny\r\nlf part:\nX\nY\n");
    /* no exact match: the tolerant one, new lines written as CRLF */
    ocisbx_edit_options *o = NULL;
    ocisbx_edit_result *r = NULL;
    check(ocisbx_edit_options_new(&o), "options");
    check(ocisbx_edit_options_add(o, "keep: x\ny", "kept: 1\n2", 0), "add");
    check(ocisbx_edit_options_add(o, "part:\nX", "part:\nZ", 0), "add exact");
    check(ocisbx_backend_apply_edits(w->b, "ed/mixed.txt", o, &r), "tolerant");
    assert_true(ocisbx_edit_result_crlf_matched(r, 0));
    assert_false(ocisbx_edit_result_crlf_matched(r, 1));
    ocisbx_edit_result_free(r);
    ocisbx_edit_options_free(o);
    expect_content(w, "ed/mixed.txt", "first\r\nkept: 1\r\n2\r\nlf part:\nZ\nY\n");
    /* an LF-only file: LF stays LF */
    put(w, "ed/lf.txt", "a\nb\n");
    check(ocisbx_backend_edit(w->b, "ed/lf.txt", "a\nb", "c\nd", 0, NULL, &c), "lf");
    expect_content(w, "ed/lf.txt", "c\nd\n");
}

static long long vm_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            v = atoll(line + 6);
    if (f)
        fclose(f);
    return v;
}

/* Issue 20 item 14: a file over the limit is refused before it is read: the
 * peak memory (VmHWM, reset first where Linux allows) grows by less than it. */
static void test_edit_too_large(void **state)
{
    world *w = *state;
    sh(w, "truncate -s 1500M ed-big.bin && printf needle >> ed-big.bin");
    FILE *cr = fopen("/proc/self/clear_refs", "w");
    bool reset = cr && fputs("5", cr) >= 0;
    reset = cr && fclose(cr) == 0 && reset;
    long long base = reset ? vm_hwm_kb() : 0;
    size_t c = 0;
    assert_int_equal(ocisbx_backend_edit(w->b, "ed-big.bin", "needle", "x", 0, NULL, &c), OCISBX_ETOOLARGE);
    const char *m = last_message();
    assert_non_null(strstr(m, "1572864006 bytes"));
    assert_non_null(strstr(m, "67108864"));
    assert_true(vm_hwm_kb() - base < (reset ? 64 : 256) * 1024);
    /* the limit is an option */
    put(w, "ed/small.txt", "0123456789");
    ocisbx_edit_options *o = NULL;
    ocisbx_edit_result *r = NULL;
    check(ocisbx_edit_options_new(&o), "options");
    check(ocisbx_edit_options_add(o, "0", "zero", 0), "add");
    check(ocisbx_edit_options_set_max_file_bytes(o, 9), "max file");
    assert_int_equal(ocisbx_backend_apply_edits(w->b, "ed/small.txt", o, &r), OCISBX_ETOOLARGE);
    assert_non_null(strstr(last_message(), "10 bytes, more than the limit of 9"));
    /* a result above the limit */
    check(ocisbx_edit_options_set_max_file_bytes(o, 12), "max file");
    assert_int_equal(ocisbx_backend_apply_edits(w->b, "ed/small.txt", o, &r), OCISBX_ETOOLARGE);
    assert_non_null(strstr(last_message(), "13 bytes"));
    ocisbx_edit_options_free(o);
    expect_content(w, "ed/small.txt", "0123456789");
    sh(w, "rm ed-big.bin");
}

/* ---- search ---- */
static ocisbx_search_options *search_opts(const char *path)
{
    ocisbx_search_options *o = NULL;
    check(ocisbx_search_options_new(&o), "search options");
    check(ocisbx_search_options_set_path(o, path), "path");
    return o;
}

static void make_tree(world *w)
{
    put(w, "sr/a.txt", "l1\nneedle one\nl3\nl4\nl5\nl6\nneedle two\nl8\n");
    put(w, "sr/b.txt", "needle\n");
    put(w, "sr/c.txt", "nothing here\n");
    put(w, "sr/d.txt", "x\nneedle at end");
    put(w, "sr/sub dir/-e.txt", "1\n2\nneedle\n");
}

static void test_search_modes(void **state)
{
    world *w = *state;
    make_tree(w);
    ocisbx_search_options *o = search_opts("/workspace/sr");
    ocisbx_search_result *r = NULL;
    check(ocisbx_search_options_set_output_mode(o, OCISBX_SEARCH_FILES_WITH_MATCHES), "mode");
    check(ocisbx_backend_search(w->b, "needle", o, &r), "files");
    assert_int_equal(ocisbx_search_result_mode(r), OCISBX_SEARCH_FILES_WITH_MATCHES);
    assert_int_equal(ocisbx_search_result_count(r), 4);
    assert_string_equal(ocisbx_search_result_path(r, 0), "/workspace/sr/a.txt");
    assert_string_equal(ocisbx_search_result_path(r, 1), "/workspace/sr/b.txt");
    assert_string_equal(ocisbx_search_result_path(r, 2), "/workspace/sr/d.txt");
    assert_string_equal(ocisbx_search_result_path(r, 3), "/workspace/sr/sub dir/-e.txt");
    assert_null(ocisbx_search_result_text(r, 0));
    assert_false(ocisbx_search_result_truncated(r));
    ocisbx_search_result_free(r);
    check(ocisbx_search_options_set_output_mode(o, OCISBX_SEARCH_COUNT), "mode");
    check(ocisbx_backend_search(w->b, "needle", o, &r), "count");
    assert_int_equal(ocisbx_search_result_count(r), 4);
    assert_int_equal(ocisbx_search_result_matches(r, 0), 2);
    assert_int_equal(ocisbx_search_result_matches(r, 1), 1);
    assert_string_equal(ocisbx_search_result_path(r, 3), "/workspace/sr/sub dir/-e.txt");
    ocisbx_search_result_free(r);
    /* paging in count mode: entries are files */
    check(ocisbx_search_options_set_head_limit(o, 2), "limit");
    check(ocisbx_search_options_set_offset(o, 1), "offset");
    check(ocisbx_backend_search(w->b, "needle", o, &r), "count paged");
    assert_int_equal(ocisbx_search_result_count(r), 2);
    assert_string_equal(ocisbx_search_result_path(r, 0), "/workspace/sr/b.txt");
    assert_string_equal(ocisbx_search_result_path(r, 1), "/workspace/sr/d.txt");
    assert_true(ocisbx_search_result_truncated(r));
    ocisbx_search_result_free(r);
    check(ocisbx_search_options_set_offset(o, 2), "offset");
    check(ocisbx_backend_search(w->b, "needle", o, &r), "count last page");
    assert_int_equal(ocisbx_search_result_count(r), 2);
    assert_false(ocisbx_search_result_truncated(r));
    ocisbx_search_result_free(r);
    assert_int_equal(ocisbx_search_options_set_output_mode(o, (ocisbx_search_mode)7), OCISBX_EINVAL);
    ocisbx_search_options_free(o);
}

static void test_search_paging(void **state)
{
    world *w = *state;
    make_tree(w);
    ocisbx_search_options *o = search_opts("/workspace/sr");
    ocisbx_search_result *r = NULL;
    /* 5 matching lines: pages of 2 */
    const char *want[][2] = {{"a.txt", "needle one"},
                             {"a.txt", "needle two"},
                             {"b.txt", "needle"},
                             {"d.txt", "needle at end"},
                             {"sub dir/-e.txt", "needle"}};
    check(ocisbx_search_options_set_head_limit(o, 2), "limit");
    for (uint64_t off = 0; off < 6; off += 2) {
        check(ocisbx_search_options_set_offset(o, off), "offset");
        check(ocisbx_backend_search(w->b, "needle", o, &r), "page");
        size_t n = ocisbx_search_result_count(r);
        assert_int_equal(n, off < 4 ? 2 : 1);
        for (size_t i = 0; i < n; i++) {
            char p[64];
            snprintf(p, sizeof p, "/workspace/sr/%s", want[off + i][0]);
            assert_string_equal(ocisbx_search_result_path(r, i), p);
            assert_string_equal(ocisbx_search_result_text(r, i), want[off + i][1]);
        }
        assert_int_equal(ocisbx_search_result_truncated(r), off + 2 < 5);
        ocisbx_search_result_free(r);
    }
    /* past the end: empty, not truncated */
    check(ocisbx_search_options_set_offset(o, 50), "offset");
    check(ocisbx_backend_search(w->b, "needle", o, &r), "past the end");
    assert_int_equal(ocisbx_search_result_count(r), 0);
    assert_false(ocisbx_search_result_truncated(r));
    ocisbx_search_result_free(r);
    /* the older name of head_limit */
    check(ocisbx_search_options_set_offset(o, 0), "offset");
    check(ocisbx_search_options_set_max_results(o, 4), "max_results");
    check(ocisbx_backend_search(w->b, "needle", o, &r), "max_results");
    assert_int_equal(ocisbx_search_result_count(r), 4);
    assert_true(ocisbx_search_result_truncated(r));
    ocisbx_search_result_free(r);
    assert_int_equal(ocisbx_search_options_set_head_limit(o, 0), OCISBX_EINVAL);
    /* a pattern grep refuses */
    assert_int_equal(ocisbx_backend_search(w->b, "a[", o, &r), OCISBX_EINVAL);
    assert_non_null(strstr(last_message(), "pattern"));
    ocisbx_search_options_free(o);
}

static void expect_lines(const ocisbx_search_result *r, size_t i, bool before, const char *joined)
{
    char got[512] = "";
    size_t n = before ? ocisbx_search_result_before_count(r, i) : ocisbx_search_result_after_count(r, i);
    for (size_t j = 0; j < n; j++) {
        strcat(got, before ? ocisbx_search_result_before(r, i, j) : ocisbx_search_result_after(r, i, j));
        strcat(got, "|");
    }
    assert_string_equal(got, joined);
}

static void test_search_context(void **state)
{
    world *w = *state;
    make_tree(w);
    ocisbx_search_options *o = search_opts("/workspace/sr");
    ocisbx_search_result *r = NULL;
    check(ocisbx_search_options_set_context(o, 2, 2), "context");
    check(ocisbx_backend_search(w->b, "needle", o, &r), "context");
    assert_int_equal(ocisbx_search_result_count(r), 5);
    expect_lines(r, 0, true, "l1|");
    expect_lines(r, 0, false, "l3|l4|");
    assert_int_equal(ocisbx_search_result_line(r, 1), 7);
    expect_lines(r, 1, true, "l5|l6|");
    expect_lines(r, 1, false, "l8|");
    expect_lines(r, 2, true, "");
    expect_lines(r, 2, false, "");
    expect_lines(r, 3, true, "x|");
    expect_lines(r, 3, false, "");
    expect_lines(r, 4, true, "1|2|");
    ocisbx_search_result_free(r);
    /* overlapping context: matches next to each other */
    put(w, "sr2/n.txt", "a\nneedle 1\nneedle 2\nb\nc\n");
    ocisbx_search_options_free(o);
    o = search_opts("/workspace/sr2");
    check(ocisbx_search_options_set_context(o, 1, 3), "context");
    check(ocisbx_backend_search(w->b, "needle", o, &r), "overlapping");
    assert_int_equal(ocisbx_search_result_count(r), 2);
    expect_lines(r, 0, true, "a|");
    expect_lines(r, 0, false, "needle 2|b|c|");
    expect_lines(r, 1, true, "needle 1|");
    expect_lines(r, 1, false, "b|c|");
    ocisbx_search_result_free(r);
    assert_int_equal(ocisbx_search_options_set_context(o, 101, 0), OCISBX_EINVAL);
    ocisbx_search_options_free(o);
}

/* ---- ls ---- */
static void test_ls_paging(void **state)
{
    world *w = *state;
    sh(w, "mkdir -p lsd && cd lsd && for i in 0 1 2 3 4 5 6; do echo $i > f$i; done && mkdir sub");
    ocisbx_entry_list *l = NULL;
    check(ocisbx_backend_ls_page(w->b, "lsd", 0, 3, &l), "page 1");
    assert_int_equal(ocisbx_entry_list_count(l), 3);
    assert_string_equal(ocisbx_entry_list_name(l, 0), "f0");
    assert_true(ocisbx_entry_list_truncated(l));
    ocisbx_entry_list_free(l);
    check(ocisbx_backend_ls_page(w->b, "lsd", 6, 3, &l), "page 3");
    assert_int_equal(ocisbx_entry_list_count(l), 2);
    assert_string_equal(ocisbx_entry_list_name(l, 0), "f6");
    assert_string_equal(ocisbx_entry_list_name(l, 1), "sub");
    assert_int_equal(ocisbx_entry_list_type(l, 1), 'd');
    assert_false(ocisbx_entry_list_truncated(l));
    ocisbx_entry_list_free(l);
    check(ocisbx_backend_ls_page(w->b, "lsd", 8, 3, &l), "past the end");
    assert_int_equal(ocisbx_entry_list_count(l), 0);
    ocisbx_entry_list_free(l);
    assert_int_equal(ocisbx_backend_ls_page(w->b, "lsd", 0, 100001, &l), OCISBX_EINVAL);
}

/* ---- chunked writes and their failures ----
 * Each case runs for every write mode: the parts one after the other, or
 * several in flight at once (a sandbox's backend; a local one writes them
 * in order whatever it is told). parts: ocisbx_backend_options_set_parallel_parts
 * (0: the default, the world's own backend). */
typedef struct write_mode {
    const char *name;
    int parts;
} write_mode;

static const write_mode write_modes[] = {{"sequential", 1}, {"parallel, 2 at once", 2}, {"parallel, default", 0}};
#define N_WRITE_MODES (sizeof write_modes / sizeof write_modes[0])
#define mode_parts(m) ((m)->parts ? (m)->parts : OCISBX_BACKEND_DEFAULT_PARALLEL_PARTS)
#define mode_options(m, o) ((m)->parts ? ocisbx_backend_options_set_parallel_parts((o), (m)->parts) : 0)

/* A backend on w's workspace in mode m (the world's own for the default). */
static ocisbx_backend *mode_backend(world *w, const write_mode *m)
{
    if (!m->parts)
        return w->b;
    ocisbx_backend_options *o = NULL;
    ocisbx_backend *b = NULL;
    check(ocisbx_backend_options_new(&o), "options");
    check(mode_options(m, o), m->name);
    if (w->emu) {
        check(ocisbx_backend_options_set_client(o, w->c), "client");
        check(ocisbx_backend_connect(ocisbx_backend_sandbox_id(w->b), o, &b), "connect");
    } else {
        check(ocisbx_backend_local(w->dir, o, &b), "local");
    }
    ocisbx_backend_options_free(o);
    return b;
}

static void mode_backend_free(world *w, ocisbx_backend *b)
{
    if (b != w->b)
        ocisbx_backend_free(b);
}

typedef struct pattern_src {
    size_t size, at;
    int signal_fd; /* >= 0: write a byte there, then wait to be killed, past pause_at */
    size_t pause_at;
} pattern_src;

static int64_t pattern_read(void *buf, size_t cap, void *ud)
{
    pattern_src *p = ud;
    if (p->signal_fd >= 0 && p->at >= p->pause_at) {
        if (write(p->signal_fd, "x", 1) != 1)
            _exit(3);
        for (;;)
            pause();
    }
    size_t n = p->size - p->at < cap ? p->size - p->at : cap;
    if (p->signal_fd >= 0 && n > p->pause_at - p->at)
        n = p->pause_at - p->at;
    unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)((p->at + i) * 2654435761u >> 11);
    p->at += n;
    return (int64_t)n;
}

#define BIG_WRITE (2 * (size_t)OCISBX_BACKEND_PART_SIZE + 12345)

static void expect_no_parts(world *w, const char *what)
{
    char *out = sh_out(w, "ls -A .ocisbx 2>/dev/null | grep '^write-' || true");
    if (*out)
        fail_msg("%s: parts left: %s", what, out);
    free(out);
}

static void test_write_chunked(void **state)
{
    world *w = *state;
    for (size_t i = 0; i < N_WRITE_MODES; i++) {
        ocisbx_backend *b = mode_backend(w, &write_modes[i]);
        pattern_src p = {BIG_WRITE, 0, -1, 0};
        check(ocisbx_backend_write_from_callback(b, "wr/big.bin", pattern_read, &p), write_modes[i].name);
        unsigned char *d = NULL;
        size_t n = 0;
        check(ocisbx_backend_read_bytes(b, "wr/big.bin", &d, &n), "read back");
        assert_int_equal(n, BIG_WRITE);
        for (size_t k = 0; k < n; k += 4099)
            assert_int_equal(d[k], (unsigned char)(k * 2654435761u >> 11));
        ocisbx_free(d);
        /* from memory: the parts are sent from the caller's buffer */
        unsigned char *m = malloc(BIG_WRITE);
        p.at = 0;
        assert_int_equal(pattern_read(m, BIG_WRITE, &p), (int64_t)BIG_WRITE);
        check(ocisbx_backend_write(b, "wr/mem.bin", m, BIG_WRITE), "from memory");
        expect_sh(w, "cmp wr/big.bin wr/mem.bin && echo same", "same\n");
        free(m);
        expect_no_parts(w, write_modes[i].name);
        mode_backend_free(w, b);
    }
}

/* The join fails (the target's directory cannot be made): the error names
 * the step, nothing is written, no part is left. */
static void test_write_join_fails(void **state)
{
    world *w = *state;
    put(w, "jf/file", "a file, not a directory");
    for (size_t i = 0; i < N_WRITE_MODES; i++) {
        ocisbx_backend *b = mode_backend(w, &write_modes[i]);
        pattern_src p = {BIG_WRITE, 0, -1, 0};
        assert_int_equal(ocisbx_backend_write_from_callback(b, "jf/file/sub/x.bin", pattern_read, &p), OCISBX_EIO);
        assert_non_null(strstr(last_message(), "making the target's directory failed"));
        expect_content(w, "jf/file", "a file, not a directory");
        expect_no_parts(w, write_modes[i].name);
        mode_backend_free(w, b);
    }
}

/* The client killed in the middle of a write: the old file stays; its
 * parts stay until the next chunked write finds them untouched for a
 * minute. */
static void test_write_client_killed(void **state)
{
    world *w = *state;
    put(w, "kill/target.bin", "old");
    for (size_t i = 0; i < N_WRITE_MODES; i++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            ocisbx_backend *b = NULL;
            ocisbx_client *c = NULL;
            ocisbx_backend_options *o = NULL;
            if (ocisbx_backend_options_new(&o) || mode_options(&write_modes[i], o))
                _exit(2);
            if (w->emu ? emu_client_new(w->emu, 0, &c) || ocisbx_backend_options_set_client(o, c) ||
                             ocisbx_backend_connect(ocisbx_backend_sandbox_id(w->b), o, &b)
                       : ocisbx_backend_local(w->dir, o, &b))
                _exit(2);
            /* paused at the start of part K: K read, one of them in at least */
            size_t k = (size_t)mode_parts(&write_modes[i]);
            pattern_src p = {(k + 1) * OCISBX_BACKEND_PART_SIZE + 12345, 0, fds[1],
                             (size_t)OCISBX_BACKEND_PART_SIZE * (k > 2 ? k : 2) + 1};
            ocisbx_backend_write_from_callback(b, "kill/target.bin", pattern_read, &p);
            _exit(4);
        }
        close(fds[1]);
        char c = 0;
        assert_int_equal(read(fds[0], &c, 1), 1); /* a part is in, the next one being read */
        kill(pid, SIGKILL);
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFSIGNALED(st));
        close(fds[0]);
        expect_content(w, "kill/target.bin", "old");
        /* what the killed writer left: one write's parts, one of them whole at least */
        expect_sh(w, "ls -d .ocisbx/write-* | wc -l", "1\n");
        char *parts = sh_out(w, "ls .ocisbx/write-*/ | grep -c '^p0'");
        assert_true(atoi(parts) >= 1);
        free(parts);
        /* a fresh write keeps another live writer's parts... */
        pattern_src p = {BIG_WRITE, 0, -1, 0};
        check(ocisbx_backend_write_from_callback(w->b, "kill/other.bin", pattern_read, &p), "write beside");
        expect_sh(w, "ls -d .ocisbx/write-* | wc -l", "1\n");
        /* ...and removes them once untouched for a minute */
        sh(w, "touch -d '2 minutes ago' .ocisbx/write-*");
        p.at = 0;
        check(ocisbx_backend_write_from_callback(w->b, "kill/other.bin", pattern_read, &p), "write after");
        expect_no_parts(w, "stale parts");
        expect_content(w, "kill/target.bin", "old");
    }
}

/* The caller's cancel callback says stop once a part is in (the reader is
 * past part K + 1, as in test_write_client_killed): the write returns
 * OCISBX_ECANCELED and the parts already stored are gone with it (their
 * removal is not canceled by the same callback); the target never appears. */
typedef struct cancel_src {
    pattern_src p;
    size_t cancel_at;
    volatile int canceled;
} cancel_src;

static int64_t cancel_read(void *buf, size_t cap, void *ud)
{
    cancel_src *c = ud;
    int64_t n = pattern_read(buf, cap, &c->p);
    if (c->p.at >= c->cancel_at)
        c->canceled = 1;
    return n;
}

static int cancel_asked(void *ud)
{
    return ((cancel_src *)ud)->canceled;
}

static void test_write_canceled(void **state)
{
    world *w = *state;
    for (size_t i = 0; i < N_WRITE_MODES; i++) {
        size_t k = (size_t)mode_parts(&write_modes[i]);
        cancel_src cs = {{(k + 3) * OCISBX_BACKEND_PART_SIZE + 12345, 0, -1, 0},
                         (size_t)OCISBX_BACKEND_PART_SIZE * (k > 2 ? k : 2) + 1,
                         0};
        ocisbx_backend_options *o = NULL;
        ocisbx_backend *b = NULL;
        check(ocisbx_backend_options_new(&o), "options");
        check(ocisbx_backend_options_set_parallel_parts(o, (int)k), write_modes[i].name);
        check(ocisbx_backend_options_set_cancel(o, cancel_asked, &cs), "cancel");
        if (w->emu) {
            check(ocisbx_backend_options_set_client(o, w->c), "client");
            check(ocisbx_backend_connect(ocisbx_backend_sandbox_id(w->b), o, &b), "connect");
        } else {
            check(ocisbx_backend_local(w->dir, o, &b), "local");
        }
        ocisbx_backend_options_free(o);
        assert_int_equal(ocisbx_backend_write_from_callback(b, "cancel/target.bin", cancel_read, &cs),
                         OCISBX_ECANCELED);
        assert_true(cs.canceled);
        ocisbx_backend_free(b);
        expect_no_parts(w, write_modes[i].name);
        expect_sh(w, "test -e cancel/target.bin && echo there || echo none", "none\n");
    }
}

/* A part refused by the service (the workspace of a MEDIUM sandbox is
 * 20 MiB in this tenancy): the write fails, nothing is left. */
static void test_write_part_refused(void **state)
{
    world *w = *state;
    ocisbx_backend_options *o = NULL;
    ocisbx_backend *small = NULL;
    check(ocisbx_backend_options_new(&o), "options");
    check(ocisbx_backend_options_set_client(o, w->c), "client");
    check(ocisbx_backend_options_set_shape(o, "MEDIUM"), "shape");
    check(ocisbx_backend_options_set_poll_interval_ms(o, 20), "poll");
    for (size_t i = 0; i < N_WRITE_MODES; i++) {
        check(ocisbx_backend_options_set_parallel_parts(o, mode_parts(&write_modes[i])), write_modes[i].name);
        check(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &small), "create a MEDIUM sandbox");
        /* K in flight: when part j starts, j - (K - 1) at least are in (the
         * tenancy measures while others arrive): part K + 1 is refused */
        size_t k = (size_t)mode_parts(&write_modes[i]);
        pattern_src p = {(size_t)OCISBX_BACKEND_PART_SIZE * (k + 2) + 5, 0, -1, 0};
        int rc = ocisbx_backend_write_from_callback(small, "refused.bin", pattern_read, &p);
        assert_int_equal(rc, OCISBX_ETOOLARGE);
        ocisbx_exec_result *r = NULL;
        check(ocisbx_backend_exec(small, "ls -A; ls -A .ocisbx | grep write-; true", NULL, &r), "ls");
        const char *left = ocisbx_exec_result_output(r, NULL);
        if (strstr(left, "refused.bin") || strstr(left, "write-"))
            fail_msg("left behind: %s", left);
        ocisbx_exec_result_free(r);
        ocisbx_backend_free(small);
        small = NULL;
    }
    ocisbx_backend_options_free(o);
}

/* ---- big trees (issue 20 item 1): never an empty answer ---- */
static void test_big_trees(void **state)
{
    world *w = *state;
    /* 60,000 empty files; 150,000 entries: hard links to those and 90,000
     * symlinks. An inode per entry costs most of the time (creating and
     * removing them): with perl, the files are hard links to 3 empty files
     * and the symlinks hard links to 3 symlinks (Linux's link() does not
     * follow one; 40,000 links an inode at most, below ext4's 65,000), the
     * names and types the same; without it, an inode each. One shell
     * command. */
    sh(w, "mkdir -p big/d60000 big/d150000 && if command -v perl >/dev/null 2>&1; then perl -e '"
          "for my $i (1 .. 60000) { my $f = \"big/d60000/f$i\"; if ($i % 20000 == 1) { open(my $h, \">\", $f) "
          "or die \"$f: $!\"; close($h); $b = $f } else { link($b, $f) or die \"$f: $!\" } "
          "link($f, \"big/d150000/f$i\") or die \"$f: $!\" } "
          "for my $i (1 .. 90000) { my $e = \"big/d150000/e$i\"; if ($i % 30000 == 1) { symlink(\"e$i\", $e) "
          "or die \"$e: $!\"; $b = $e } else { link($b, $e) or die \"$e: $!\" } }'; else "
          "cd big/d60000 && seq -f f%.0f 60000 | xargs touch && "
          "cd ../d150000 && find ../d60000 -type f -print0 | xargs -0 ln -t . && "
          "seq -f e%.0f 90000 | xargs ln -s -t . && cd ../..; fi && echo needle > big/zzz.txt");
    ocisbx_search_options *o = search_opts("/workspace/big");
    ocisbx_search_result *r = NULL;
    check(ocisbx_backend_search(w->b, "needle", o, &r), "search 120,001 files");
    assert_int_equal(ocisbx_search_result_count(r), 1);
    assert_string_equal(ocisbx_search_result_path(r, 0), "/workspace/big/zzz.txt");
    ocisbx_search_result_free(r);
    ocisbx_search_options_free(o);
    ocisbx_entry_list *l = NULL;
    check(ocisbx_backend_glob(w->b, "*", "/workspace/big/d60000", 0, &l), "glob 60,000");
    assert_int_equal(ocisbx_entry_list_count(l), 1000);
    assert_string_equal(ocisbx_entry_list_name(l, 0), "/workspace/big/d60000/f1");
    assert_true(ocisbx_entry_list_truncated(l));
    ocisbx_entry_list_free(l);
    check(ocisbx_backend_ls(w->b, "big/d150000", &l), "ls 150,000");
    assert_int_equal(ocisbx_entry_list_count(l), OCISBX_BACKEND_LS_DEFAULT_LIMIT);
    assert_string_equal(ocisbx_entry_list_name(l, 0), "e1");
    assert_int_equal(ocisbx_entry_list_type(l, 0), 'l');
    assert_true(ocisbx_entry_list_truncated(l));
    ocisbx_entry_list_free(l);
    check(ocisbx_backend_ls_page(w->b, "big/d150000", 149999, 10, &l), "ls, the last page");
    assert_int_equal(ocisbx_entry_list_count(l), 1);
    assert_string_equal(ocisbx_entry_list_name(l, 0), "f9999");
    assert_int_equal(ocisbx_entry_list_type(l, 0), 'f');
    assert_false(ocisbx_entry_list_truncated(l));
    ocisbx_entry_list_free(l);
    sh(w, "rm -rf big");
    expect_sh(w, "ls -A .ocisbx/tmp 2>/dev/null | wc -l", "0\n");
}

/* the longest first (the cases run side by side, par_run.h) */
#define SUITE                                                                                    \
    cmocka_unit_test(test_write_client_killed), cmocka_unit_test(test_write_join_fails),         \
        cmocka_unit_test(test_write_canceled), cmocka_unit_test(test_write_chunked),             \
        cmocka_unit_test(test_search_paging), cmocka_unit_test(test_search_modes),               \
        cmocka_unit_test(test_search_context), cmocka_unit_test(test_ls_paging),                 \
        cmocka_unit_test(test_edit_too_large), cmocka_unit_test(test_edit_crlf_exact_first),     \
        cmocka_unit_test(test_edits_atomic), cmocka_unit_test(test_edits_in_order),              \
        cmocka_unit_test(test_edits_dry_run)

/* "big-trees": only the big trees (their own CTest entry, it_backend_big_trees:
 * 210,000 entries made twice take most of its time). */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "big-trees") == 0) {
        const struct CMUnitTest big[] = {cmocka_unit_test(test_big_trees)};
        const par_group trees[] = {PAR_GROUP("backend big trees: local directory", big, setup_local, teardown),
                                   PAR_GROUP("backend big trees: oci sandbox (emulator)", big, setup_oci, teardown)};
        return par_run_groups(trees, sizeof trees / sizeof trees[0]) ? 1 : 0;
    }
    const struct CMUnitTest local_tests[] = {SUITE};
    const struct CMUnitTest oci_tests[] = {cmocka_unit_test(test_write_part_refused), SUITE};
    /* every case in a world of its own (par_run.h) */
    const par_group groups[] = {PAR_GROUP("backend files: local directory", local_tests, setup_local, teardown),
                                PAR_GROUP("backend files: oci sandbox (emulator)", oci_tests, setup_oci, teardown)};
    return par_run_groups(groups, sizeof groups / sizeof groups[0]) ? 1 : 0;
}
