/* The engine's write and read (ocisbx_engine_write_file / _read_file)
 * against the test tenancy: checked and chunked as the blocking backend's
 * (one put up to a part; parts, a join, a rename above), the same errors,
 * a failed or canceled write leaves neither a file at the path nor parts,
 * and several sandboxes' files at once from one thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu_fixture.h"
#include "engine_world.h"
#include "par_run.h"

typedef struct io {
    bool done;
    int rc;
    unsigned char *data;
    size_t len;
    char error[512];
    uint64_t sunk; /* bytes a sink got */
} io;

static void on_write(int rc, void *ud)
{
    io *w = ud;
    w->rc = rc;
    if (rc)
        snprintf(w->error, sizeof w->error, "%s", ocisbx_error_message(ocisbx_error_last()));
    w->done = true;
}

static void on_read(int rc, unsigned char *data, size_t len, void *ud)
{
    io *r = ud;
    r->rc = rc;
    r->data = data;
    r->len = len;
    if (rc)
        snprintf(r->error, sizeof r->error, "%s", ocisbx_error_message(ocisbx_error_last()));
    r->done = true;
}

static int count_sink(const void *d, size_t n, void *ud)
{
    (void)d;
    ((io *)ud)->sunk += n;
    return 0;
}

static unsigned char *pattern(size_t n, unsigned seed)
{
    unsigned char *p = malloc(n ? n : 1);
    assert_non_null(p);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 16);
    }
    return p;
}

static int write_now(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *path, const void *d, size_t n, io *w)
{
    memset(w, 0, sizeof *w);
    engine_check(ocisbx_engine_write_file(e, sb, path, d, n, on_write, w, NULL), "write");
    engine_world_until(e, &w->done);
    return w->rc;
}

static int read_now(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *path, io *r)
{
    memset(r, 0, sizeof *r);
    engine_check(ocisbx_engine_read_file(e, sb, path, NULL, NULL, on_read, r, NULL), "read");
    engine_world_until(e, &r->done);
    return r->rc;
}

static void expect_sh(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *cmd, const char *want)
{
    char *out = engine_world_sh(e, sb, cmd, NULL);
    assert_string_equal(out, want);
    free(out);
}

/* Small and empty files: one checked put each; read back into memory and
 * through a sink; a missing file, a directory, a path out of /workspace. */
static void small_write_read(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    ocisbx_engine *e = engine_world_new(f, &c, 0, 0);
    ocisbx_engine_sandbox *sb = engine_world_create(e);
    io w, r;
    const char text[] = "hello from the engine\n";
    engine_check(write_now(e, sb, "dir/sub/hello.txt", text, strlen(text), &w), "write hello");
    engine_check(read_now(e, sb, "/workspace/dir/sub/hello.txt", &r), "read hello");
    assert_int_equal(r.len, strlen(text));
    assert_memory_equal(r.data, text, r.len);
    ocisbx_free(r.data);
    expect_sh(e, sb, "cat dir/sub/hello.txt", text);

    engine_check(write_now(e, sb, "empty", "", 0, &w), "write empty");
    engine_check(read_now(e, sb, "empty", &r), "read empty");
    assert_int_equal(r.len, 0);
    assert_non_null(r.data);
    ocisbx_free(r.data);

    memset(&r, 0, sizeof r);
    engine_check(ocisbx_engine_read_file(e, sb, "dir/sub/hello.txt", count_sink, &r, on_read, &r, NULL), "sink");
    engine_world_until(e, &r.done);
    engine_check(r.rc, "read to a sink");
    assert_null(r.data);
    assert_int_equal(r.len, strlen(text));
    assert_int_equal(r.sunk, strlen(text));

    assert_int_equal(read_now(e, sb, "no/such/file", &r), OCISBX_ENOTFOUND);
    assert_int_equal(read_now(e, sb, "dir/sub", &r), OCISBX_EISDIR);
    assert_non_null(strstr(r.error, "directory"));
    assert_int_equal(write_now(e, sb, "dir", "x", 1, &w), OCISBX_EISDIR);
    assert_int_equal(ocisbx_engine_write_file(e, sb, "../etc/passwd", "x", 1, on_write, &w, NULL),
                     OCISBX_EFORBIDDEN);
    expect_sh(e, sb, "ln -s /etc out && echo ok", "ok\n");
    assert_int_equal(read_now(e, sb, "out/hostname", &r), OCISBX_EFORBIDDEN);
    engine_world_close(e, sb);
    ocisbx_engine_free(e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
}

/* Above a part: 2.5 parts, joined, checked, renamed; read back byte for
 * byte; no parts left under .ocisbx. Over a directory: EISDIR, the parts
 * gone, the directory as it was. */
static void chunked_write(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    ocisbx_engine *e = engine_world_new(f, &c, 0, 0);
    ocisbx_engine_sandbox *sb = engine_world_create(e);
    size_t n = 2 * OCISBX_BACKEND_PART_SIZE + OCISBX_BACKEND_PART_SIZE / 2 + 7;
    unsigned char *big = pattern(n, 1);
    io w, r;
    engine_check(write_now(e, sb, "big/file.bin", big, n, &w), "write big");
    engine_check(read_now(e, sb, "big/file.bin", &r), "read big");
    assert_int_equal(r.len, n);
    assert_memory_equal(r.data, big, n);
    ocisbx_free(r.data);
    char want[96];
    snprintf(want, sizeof want, "%zu\n", n);
    expect_sh(e, sb, "wc -c < big/file.bin", want);
    expect_sh(e, sb, "ls -A .ocisbx 2>/dev/null | grep -c '^write-'; true", "0\n");

    expect_sh(e, sb, "mkdir -p adir && touch adir/keep && echo ok", "ok\n");
    assert_int_equal(write_now(e, sb, "adir", big, n, &w), OCISBX_EISDIR);
    assert_non_null(strstr(w.error, "adir"));
    expect_sh(e, sb, "ls -A adir; ls -A .ocisbx 2>/dev/null | grep -c '^write-'; true", "keep\n0\n");
    free(big);
    engine_world_close(e, sb);
    ocisbx_engine_free(e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
}

/* A chunked write canceled at once (its first part in flight: its answer
 * is awaited, then the parts go), and one canceled after a round of the
 * loop: ECANCELED, no file at the path, no parts behind when the callback
 * comes; an earlier file at the path stays as it was. */
static void canceled_write_leaves_nothing(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    ocisbx_engine *e = engine_world_new(f, &c, 0, 0);
    ocisbx_engine_sandbox *sb = engine_world_create(e);
    size_t n = 3 * OCISBX_BACKEND_PART_SIZE;
    unsigned char *big = pattern(n, 2);
    io w;
    engine_check(write_now(e, sb, "kept.txt", "before\n", 7, &w), "write kept");
    for (int k = 0; k < 2; k++) {
        memset(&w, 0, sizeof w);
        ocisbx_engine_op op = 0;
        const char *path = k == 0 ? "cancel/target.bin" : "kept.txt";
        engine_check(ocisbx_engine_write_file(e, sb, path, big, n, on_write, &w, &op), "write");
        if (k == 1) /* what is ready now: the first part on its way */
            assert_true(ocisbx_engine_run(e, 0) >= 0);
        assert_false(w.done);
        engine_check(ocisbx_engine_cancel(e, op), "cancel");
        engine_world_until(e, &w.done);
        assert_int_equal(w.rc, OCISBX_ECANCELED);
    }
    expect_sh(e, sb, "test -e cancel/target.bin && echo there || echo none", "none\n");
    expect_sh(e, sb, "cat kept.txt", "before\n");
    expect_sh(e, sb, "ls -A .ocisbx 2>/dev/null | grep -c '^write-'; true", "0\n");
    free(big);
    engine_world_close(e, sb);
    ocisbx_engine_free(e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
}

/* Four sandboxes, each writing its own file (one of them chunked) and
 * reading it back, all at once from one thread. A close started while a
 * chunked write runs cancels it: the close comes after the parts went. */
static void many_sandboxes_at_once(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    ocisbx_engine *e = engine_world_new(f, &c, 0, 0);
    enum { N = 4 };
    ocisbx_engine_sandbox *sb[N];
    unsigned char *d[N];
    size_t len[N];
    io w[N], r[N];
    for (int i = 0; i < N; i++) {
        sb[i] = engine_world_create(e);
        len[i] = i == 0 ? OCISBX_BACKEND_PART_SIZE + 99 : (size_t)(1000 * (i + 1));
        d[i] = pattern(len[i], (unsigned)(10 + i));
        memset(&w[i], 0, sizeof w[i]);
        engine_check(ocisbx_engine_write_file(e, sb[i], "mine.bin", d[i], len[i], on_write, &w[i], NULL), "write");
    }
    for (int i = 0; i < N; i++) {
        engine_world_until(e, &w[i].done);
        engine_check(w[i].rc, "written");
        memset(&r[i], 0, sizeof r[i]);
        engine_check(ocisbx_engine_read_file(e, sb[i], "mine.bin", NULL, NULL, on_read, &r[i], NULL), "read");
    }
    for (int i = 0; i < N; i++) {
        engine_world_until(e, &r[i].done);
        engine_check(r[i].rc, "read");
        assert_int_equal(r[i].len, len[i]);
        assert_memory_equal(r[i].data, d[i], len[i]);
        ocisbx_free(r[i].data);
    }
    /* a close while a chunked write runs: the write ends first (canceled) */
    memset(&w[0], 0, sizeof w[0]);
    engine_check(ocisbx_engine_write_file(e, sb[0], "late.bin", d[0], len[0], on_write, &w[0], NULL), "late");
    for (int i = 0; i < N; i++) {
        engine_world_close(e, sb[i]);
        free(d[i]);
    }
    assert_true(w[0].done);
    assert_int_equal(w[0].rc, OCISBX_ECANCELED);
    assert_int_equal(ocisbx_engine_pending(e), 0);
    ocisbx_engine_free(e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
}

typedef struct text_io {
    bool done;
    int rc;
    ocisbx_text_result *r;
} text_io;

static void on_text(int rc, ocisbx_text_result *r, void *ud)
{
    text_io *t = ud;
    t->rc = rc;
    t->r = r;
    t->done = true;
}

static int text_now(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *path, int64_t off, int64_t lim,
                    text_io *t)
{
    memset(t, 0, sizeof *t);
    engine_check(ocisbx_engine_read_text(e, sb, path, off, lim, on_text, t, NULL), "read_text");
    engine_world_until(e, &t->done);
    return t->rc;
}

/* The numbered window, as ocisbx_backend_read_text gives it: lines 2..3
 * of 4, the size and SHA-256; a binary file (EBINARY with its size); a
 * missing file, a directory; no capture file left under .ocisbx. */
static void read_text_window(void **state)
{
    emu_fixture *f = *state;
    ocisbx_client *c = NULL;
    ocisbx_engine *e = engine_world_new(f, &c, 0, 0);
    ocisbx_engine_sandbox *sb = engine_world_create(e);
    io w;
    text_io t;
    engine_check(write_now(e, sb, "notes.txt", "one\ntwo\nthree\nfour\n", 19, &w), "write");
    engine_check(text_now(e, sb, "notes.txt", 2, 2, &t), "window");
    assert_string_equal(ocisbx_text_result_text(t.r), "     2\ttwo\n     3\tthree\n");
    assert_int_equal(ocisbx_text_result_total_lines(t.r), 4);
    assert_int_equal(ocisbx_text_result_first_line(t.r), 2);
    assert_int_equal(ocisbx_text_result_line_count(t.r), 2);
    assert_int_equal(ocisbx_text_result_size(t.r), 19);
    assert_int_equal(strlen(ocisbx_text_result_sha256(t.r)), 64);
    ocisbx_text_result_free(t.r);
    engine_check(write_now(e, sb, "bin.dat", "\x00\x01\x02\xff", 4, &w), "write binary");
    assert_int_equal(text_now(e, sb, "bin.dat", 0, 0, &t), OCISBX_EBINARY);
    assert_non_null(t.r);
    assert_true(ocisbx_text_result_is_binary(t.r));
    assert_int_equal(ocisbx_text_result_size(t.r), 4);
    ocisbx_text_result_free(t.r);
    assert_int_equal(text_now(e, sb, "missing.txt", 0, 0, &t), OCISBX_ENOTFOUND);
    assert_null(t.r);
    expect_sh(e, sb, "mkdir -p d && echo ok", "ok\n");
    assert_int_equal(text_now(e, sb, "d", 0, 0, &t), OCISBX_EISDIR);
    assert_int_equal(ocisbx_engine_read_text(e, sb, "notes.txt", -1, 0, on_text, &t, NULL), OCISBX_EINVAL);
    expect_sh(e, sb, "ls -A .ocisbx 2>/dev/null | grep -c '^q-'; true", "0\n");
    engine_world_close(e, sb);
    ocisbx_engine_free(e);
    assert_int_equal(engine_world_live(c), 0);
    ocisbx_client_free(c);
}

static int setup(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n";
    return emu_fixture_setup_state(&o, state);
}

int main(void)
{
    /* side by side, the longest first: each case makes its own engine and
     * sandboxes, in a tenancy of its own (its process's setup) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_sandboxes_at_once),
        cmocka_unit_test(chunked_write),
        cmocka_unit_test(canceled_write_leaves_nothing),
        cmocka_unit_test(small_write_read),
        cmocka_unit_test(read_text_window),
    };
    return par_run_group_tests_name("engine_files", tests, setup, emu_fixture_teardown_state) ? 1 : 0;
}
