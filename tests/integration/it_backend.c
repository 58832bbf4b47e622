/* The workspace backend: ONE suite run against every implementation (a
 * table of factories: a local directory under bubblewrap, and an OCI
 * sandbox in the emulator), plus the OCI lifecycle rules (create deletes on
 * any failure, connect + close deletes nothing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <cjson/cJSON.h>

#include "util/utf8.h"
#include "backend/backend_int.h"
#include "backend_world.h"
#include "emu_client.h"
#include "emu_fixture.h"
#include "ocisbx/api.h"
#include "ocisbx/backend.h"
#include "ocisbx/util.h"
#include "util/internal.h"
#include "par_run.h"

/* ---- the suite ---- */
static void test_label(void **state)
{
    world *w = *state;
    const char *l = ocisbx_backend_label(w->b);
    if (strcmp(w->kind, "local") == 0) {
        char *abs = realpath(w->dir, NULL);
        char want[400];
        snprintf(want, sizeof want, "local:%s", abs);
        free(abs);
        assert_string_equal(l, want);
        assert_string_equal(ocisbx_backend_kind(w->b), "local");
        assert_int_equal(ocisbx_backend_is_host_shell(w->b), 0);
    } else {
        char want[300];
        snprintf(want, sizeof want, "oci-sandbox:%s/%s", EMU_FIXTURE_REGION, ocisbx_backend_sandbox_id(w->b));
        assert_string_equal(l, want);
        assert_int_equal(ocisbx_backend_is_host_shell(w->b), 0);
    }
}

static void test_exec_basic(void **state)
{
    world *w = *state;
    ocisbx_exec_options *o = NULL;
    check(ocisbx_exec_options_new(&o), "options");
    check(ocisbx_exec_options_add_env(o, "SECRET_X", "s3cr3t value", 1), "env");
    ocisbx_exec_result *r = run(w->b,
                                "echo hello; echo err >&2; printf '%s|%s\\n' \"$FROM_BACKEND\" \"$SECRET_X\"; "
                                "pwd; exit 3",
                                o);
    int x = -1;
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, &x), 1);
    assert_int_equal(x, 3);
    assert_false(ocisbx_exec_result_timed_out(r));
    assert_false(ocisbx_exec_result_truncated(r));
    size_t n = 0;
    const char *out = ocisbx_exec_result_output(r, &n);
    assert_string_equal(out, "hello\nerr\nopt-value|s3cr3t value\n/workspace\n");
    assert_int_equal(ocisbx_exec_result_total_bytes(r), n);
    char h[65];
    sha_hex(out, n, h);
    assert_string_equal(ocisbx_exec_result_total_sha256(r), h);
    assert_string_equal(ocisbx_exec_result_returned_sha256(r), h);
    assert_int_equal(ocisbx_exec_result_returned_bytes(r), n);
    if (strcmp(w->kind, "oci") == 0)
        assert_non_null(ocisbx_exec_result_command_id(r));
    else
        assert_null(ocisbx_exec_result_command_id(r));
    assert_true(ocisbx_exec_result_start_time_ms(r) > INT64_C(1700000000000));
    assert_true(ocisbx_exec_result_duration_ms(r) >= 0);
    ocisbx_exec_result_free(r);

    /* cwd */
    char *s = run_out(w->b, "mkdir -p sub/d2");
    free(s);
    check(ocisbx_exec_options_set_cwd(o, "/workspace/sub/d2"), "cwd");
    r = run(w->b, "pwd", o);
    assert_string_equal(ocisbx_exec_result_output(r, NULL), "/workspace/sub/d2\n");
    ocisbx_exec_result_free(r);
    check(ocisbx_exec_options_set_cwd(o, "/workspace/nope"), "cwd");
    assert_int_equal(ocisbx_backend_exec(w->b, "pwd", o, &r), OCISBX_ENOTFOUND);
    check(ocisbx_exec_options_set_cwd(o, "/etc"), "cwd");
    assert_int_equal(ocisbx_backend_exec(w->b, "pwd", o, &r), OCISBX_EFORBIDDEN);
    ocisbx_exec_options_free(o);
}

static void test_exec_argv(void **state)
{
    world *w = *state;
    const char *argv[] = {"printf", "%s|", "a b", "it's", "$HOME", "-n", "new\nline", "", "*"};
    ocisbx_exec_result *r = NULL;
    check(ocisbx_backend_exec_argv(w->b, argv, sizeof argv / sizeof *argv, NULL, &r), "argv");
    assert_string_equal(ocisbx_exec_result_output(r, NULL), "a b|it's|$HOME|-n|new\nline||*|");
    ocisbx_exec_result_free(r);
}

static void test_exec_timeout_kills_tree(void **state)
{
    world *w = *state;
    ocisbx_exec_options *o = NULL;
    check(ocisbx_exec_options_new(&o), "options");
    check(ocisbx_exec_options_set_timeout_ms(o, 1000), "timeout");
    /* a child in the background, and a foreground one that ignores TERM */
    ocisbx_exec_result *r = run(w->b, "echo start; sleep 1000.25 & trap '' TERM; sleep 1000.5; echo never", o);
    int x = -1;
    assert_true(ocisbx_exec_result_timed_out(r));
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, &x), 0);
    assert_string_equal(ocisbx_exec_result_output(r, NULL), "start\n");
    ocisbx_exec_result_free(r);
    assert_true(gone("1000.25"));
    assert_true(gone("1000.5"));
    ocisbx_exec_options_free(o);
}

static int cancel_at(void *ud)
{
    return ocisbx_time_monotonic_ms() >= *(const int64_t *)ud;
}

/* The backend's cancel callback stops a command that runs silently (no
 * output, no event to wake the client): exec returns ECANCELED soon. */
static void test_exec_canceled(void **state)
{
    world *w = *state;
    int64_t at = ocisbx_time_monotonic_ms() + 1000;
    ocisbx_backend_options *o = base_options();
    ocisbx_backend_options_set_cancel(o, cancel_at, &at);
    ocisbx_backend *b = NULL;
    if (w->emu) {
        ocisbx_backend_options_set_client(o, w->c);
        check(ocisbx_backend_connect(ocisbx_backend_sandbox_id(w->b), o, &b), "connect with a cancel");
    } else {
        check(ocisbx_backend_local(w->dir, o, &b), "local with a cancel");
    }
    ocisbx_exec_result *r = NULL;
    int64_t t0 = ocisbx_time_monotonic_ms();
    int rc = ocisbx_backend_exec(b, "sleep 30", NULL, &r);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    assert_int_equal(rc, OCISBX_ECANCELED);
    assert_null(r);
    if (took > 6000)
        fail_msg("exec took %lld ms to see the cancel", (long long)took);
    ocisbx_backend_free(b);
    ocisbx_backend_options_free(o);
}

static void test_exec_big_output(void **state)
{
    world *w = *state;
    ocisbx_exec_options *o = NULL;
    check(ocisbx_exec_options_new(&o), "options");
    check(ocisbx_exec_options_set_max_output_bytes(o, 20000), "max");
    ocisbx_exec_result *r = run(w->b, "seq 1 200000", o);
    /* what seq prints */
    ocisbx_buf want = OCISBX_BUF_INIT;
    for (int i = 1; i <= 200000; i++)
        ocisbx_buf_appendf(&want, "%d\n", i);
    char h[65];
    sha_hex(want.data, want.len, h);
    assert_int_equal(ocisbx_exec_result_total_bytes(r), want.len);
    assert_string_equal(ocisbx_exec_result_total_sha256(r), h);
    assert_true(ocisbx_exec_result_truncated(r));
    size_t n = 0;
    const char *out = ocisbx_exec_result_output(r, &n);
    assert_true(n <= 20000);
    assert_true(n > 15000);
    assert_memory_equal(out, "1\n2\n3\n", 6);
    assert_memory_equal(out + n - 7, "200000\n", 7);
    const char *note = strstr(out, "[... ");
    assert_non_null(note);
    unsigned long long dropped = strtoull(note + 5, NULL, 10);
    assert_int_equal(dropped, ocisbx_exec_result_dropped_bytes(r));
    const char *after = strchr(note, '\n') + 1;
    size_t note_len = (size_t)(after - note);
    assert_int_equal(dropped + n - note_len, want.len);
    assert_true(note[-1] == '\n'); /* head cut at a line end */
    assert_true(after[-1] == '\n');
    /* head and tail are the output's own first and last bytes */
    assert_memory_equal(out, want.data, (size_t)(note - out));
    assert_memory_equal(after, want.data + want.len - (n - (size_t)(after - out)), n - (size_t)(after - out));
    ocisbx_buf_free(&want);
    ocisbx_exec_result_free(r);

    /* a multi-byte character at every cut: never split */
    r = run(w->b, "i=0; while [ $i -lt 6000 ]; do printf '\\303\\251\\342\\202\\254'; i=$((i+1)); done", o);
    out = ocisbx_exec_result_output(r, &n);
    assert_true(ocisbx_exec_result_truncated(r));
    note = strstr(out, "\n[... ");
    assert_non_null(note);
    assert_true(ocisbx_utf8_valid(out, n));
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
}

static long long status_kb(const char *field)
{
    char line[256];
    long long v = -1;
    size_t n = strlen(field);
    FILE *fp = fopen("/proc/self/status", "r");
    while (fp && fgets(line, sizeof line, fp))
        if (!strncmp(line, field, n) && line[n] == ':')
            v = strtoll(line + n + 1, NULL, 10);
    if (fp)
        fclose(fp);
    return v;
}

/* 64 MB of output (four times the bound below): head + tail + the exact
 * note within the cap, the whole output's size and SHA-256 computed where
 * it was written, and the client's peak memory (VmHWM, reset first) under
 * 16 MiB above its RSS (a client that kept the output would need 61 MiB). */
#define BIG_OUT_BYTES 64000000
#define BIG_OUT_PEAK_KB (16 * 1024)
static void test_exec_64mb_output(void **state)
{
    world *w = *state;
    ocisbx_exec_options *o = NULL;
    check(ocisbx_exec_options_new(&o), "options");
    check(ocisbx_exec_options_set_max_output_bytes(o, 20000), "max");
    FILE *fp = fopen("/proc/self/clear_refs", "w");
    assert_non_null(fp);
    fputs("5", fp); /* VmHWM := VmRSS */
    fclose(fp);
    long long before = status_kb("VmRSS");
    char cmd[96];
    snprintf(cmd, sizeof cmd, "yes 0123456789abcdef | head -c %d; printf END", BIG_OUT_BYTES);
    ocisbx_exec_result *r = run(w->b, cmd, o);
    long long peak = status_kb("VmHWM");
    if (peak - before > BIG_OUT_PEAK_KB)
        fail_msg("client peak memory grew by %lld kB (limit %d kB)", peak - before, BIG_OUT_PEAK_KB);
    assert_int_equal(ocisbx_exec_result_total_bytes(r), BIG_OUT_BYTES + 3);
    /* sha256 of the same bytes, made here in blocks of whole lines (64 KiB) */
    static const char line[] = "0123456789abcdef\n";
    enum { LINE = 17, BLOCK = 65536 / LINE * LINE };
    char *block = malloc(BLOCK);
    assert_non_null(block);
    for (size_t i = 0; i < BLOCK; i += LINE)
        memcpy(block + i, line, LINE);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    size_t left = BIG_OUT_BYTES;
    for (; left >= BLOCK; left -= BLOCK)
        EVP_DigestUpdate(md, block, BLOCK);
    EVP_DigestUpdate(md, block, left);
    EVP_DigestUpdate(md, "END", 3);
    free(block);
    unsigned char d[32];
    unsigned int dl = 0;
    EVP_DigestFinal_ex(md, d, &dl);
    EVP_MD_CTX_free(md);
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    assert_string_equal(ocisbx_exec_result_total_sha256(r), hex);
    assert_true(ocisbx_exec_result_truncated(r));
    size_t n = 0;
    const char *out = ocisbx_exec_result_output(r, &n);
    assert_true(n <= 20000 && n > 15000);
    assert_memory_equal(out, "0123456789abcdef\n0123456789abcdef\n", 34);
    assert_memory_equal(out + n - 3, "END", 3);
    const char *note = strstr(out, "[... ");
    assert_non_null(note);
    unsigned long long dropped = strtoull(note + 5, NULL, 10);
    assert_int_equal(dropped, ocisbx_exec_result_dropped_bytes(r));
    size_t note_len = (size_t)(strchr(note, '\n') + 1 - note);
    assert_int_equal(dropped + n - note_len, BIG_OUT_BYTES + 3);
    assert_int_equal(ocisbx_exec_result_returned_bytes(r), n);
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
}

static void test_exec_order(void **state)
{
    world *w = *state;
    ocisbx_exec_result *r = run(w->b, "for i in $(seq 1 300); do echo o$i; echo e$i >&2; done", NULL);
    ocisbx_buf want = OCISBX_BUF_INIT;
    for (int i = 1; i <= 300; i++)
        ocisbx_buf_appendf(&want, "o%d\ne%d\n", i, i);
    assert_string_equal(ocisbx_exec_result_output(r, NULL), want.data);
    ocisbx_buf_free(&want);
    ocisbx_exec_result_free(r);
}

static int live_sink(const void *d, size_t n, void *ud)
{
    return ocisbx_buf_append(ud, d, n);
}

static void test_exec_live(void **state)
{
    world *w = *state;
    ocisbx_buf got = OCISBX_BUF_INIT;
    ocisbx_exec_options *o = NULL;
    check(ocisbx_exec_options_new(&o), "options");
    check(ocisbx_exec_options_set_on_output(o, live_sink, &got), "live");
    ocisbx_exec_result *r = run(w->b, "seq 1 3000; echo done >&2", o);
    size_t n = 0;
    const char *out = ocisbx_exec_result_output(r, &n);
    assert_int_equal(got.len, n);
    assert_memory_equal(got.data, out, n);
    ocisbx_exec_result_free(r);
    ocisbx_buf_free(&got);
    ocisbx_exec_options_free(o);
}

static unsigned char *pattern(size_t n, unsigned seed)
{
    unsigned char *p = malloc(n);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (unsigned char)x;
    }
    return p;
}

static void test_write_big_checked(void **state)
{
    world *w = *state;
    size_t n = (size_t)OCISBX_BACKEND_PART_SIZE + 1234567;
    unsigned char *p = pattern(n, 7);
    check(ocisbx_backend_write(w->b, "/workspace/data/big.bin", p, n), "write big");
    char h[65], cmd[128];
    sha_hex(p, n, h);
    char *out = run_out(
        w->b, "sha256sum data/big.bin | cut -c1-64; wc -c < data/big.bin; ls -A .ocisbx | grep -v '^run-'; true");
    snprintf(cmd, sizeof cmd, "%s\n%zu\n", h, n);
    assert_string_equal(out, cmd);
    free(out);
    unsigned char *back = NULL;
    size_t bl = 0;
    check(ocisbx_backend_read_bytes(w->b, "data/big.bin", &back, &bl), "read back");
    assert_int_equal(bl, n);
    assert_memory_equal(back, p, n);
    ocisbx_free(back);
    free(p);
}

typedef struct failing_src {
    size_t given, fail_after;
} failing_src;

static int64_t failing_read(void *buf, size_t cap, void *ud)
{
    failing_src *f = ud;
    if (f->given >= f->fail_after)
        return OCISBX_EIO;
    size_t n = cap < 65536 ? cap : 65536;
    if (n > f->fail_after - f->given)
        n = f->fail_after - f->given;
    memset(buf, 'z', n);
    f->given += n;
    return (int64_t)n;
}

/* a directory "sub" in the workspace (each case runs in a world of its own) */
static void make_sub(world *w)
{
    free(run_out(w->b, "mkdir -p sub"));
}

static void test_write_failure_keeps_old(void **state)
{
    world *w = *state;
    make_sub(w);
    check(ocisbx_backend_write(w->b, "keep.txt", "old content\n", 12), "write old");
    failing_src f = {0, (size_t)OCISBX_BACKEND_PART_SIZE + 100000};
    assert_int_not_equal(ocisbx_backend_write_from_callback(w->b, "keep.txt", failing_read, &f), 0);
    unsigned char *d = NULL;
    size_t n = 0;
    check(ocisbx_backend_read_bytes(w->b, "keep.txt", &d, &n), "read old");
    assert_int_equal(n, 12);
    assert_memory_equal(d, "old content\n", 12);
    ocisbx_free(d);
    char *out = run_out(w->b, "ls -A .ocisbx 2>/dev/null | grep -v '^run-'; ls -A | grep ocisbx-tmp; true");
    assert_string_equal(out, "");
    free(out);
    /* a directory as the target */
    assert_int_equal(ocisbx_backend_write(w->b, "sub", "x", 1), OCISBX_EISDIR);
}

static void test_edit(void **state)
{
    world *w = *state;
    const char *t = "alpha beta alpha\nend\n";
    check(ocisbx_backend_write(w->b, "e.txt", t, strlen(t)), "write");
    size_t c = 99;
    assert_int_equal(ocisbx_backend_edit(w->b, "e.txt", "gamma", "x", 0, NULL, &c), OCISBX_ENOMATCH);
    assert_int_equal(ocisbx_backend_edit(w->b, "e.txt", "alpha", "x", 0, NULL, &c), OCISBX_ENOTUNIQUE);
    char h[65];
    sha_hex("nope", 4, h);
    assert_int_equal(ocisbx_backend_edit(w->b, "e.txt", "beta", "x", 0, h, &c), OCISBX_ECONFLICT);
    unsigned char *d = NULL;
    size_t n = 0;
    check(ocisbx_backend_read_bytes(w->b, "e.txt", &d, &n), "read");
    assert_int_equal(n, strlen(t));
    assert_memory_equal(d, t, n);
    ocisbx_free(d);
    sha_hex(t, strlen(t), h);
    check(ocisbx_backend_edit(w->b, "e.txt", "beta", "BETA", 0, h, &c), "edit unique");
    assert_int_equal(c, 1);
    check(ocisbx_backend_edit(w->b, "e.txt", "alpha", "A", 1, NULL, &c), "replace all");
    assert_int_equal(c, 2);
    check(ocisbx_backend_read_bytes(w->b, "e.txt", &d, &n), "read");
    assert_string_equal((char *)d, "A BETA A\nend\n");
    ocisbx_free(d);
    /* CRLF */
    const char *crlf = "line1\r\nline2\r\nline3\r\n";
    check(ocisbx_backend_write(w->b, "crlf.txt", crlf, strlen(crlf)), "write crlf");
    check(ocisbx_backend_edit(w->b, "crlf.txt", "line1\nline2", "one\ntwo", 0, NULL, &c), "edit crlf");
    assert_int_equal(c, 1);
    check(ocisbx_backend_read_bytes(w->b, "crlf.txt", &d, &n), "read");
    assert_string_equal((char *)d, "one\r\ntwo\r\nline3\r\n");
    ocisbx_free(d);
    assert_int_equal(ocisbx_backend_edit(w->b, "missing.txt", "a", "b", 0, NULL, &c), OCISBX_ENOTFOUND);
}

static void test_adversarial_names(void **state)
{
    world *w = *state;
    const char *name = "odd dir/we'ird \"q\" $x `id`\n-n\\\t\xff.txt";
    char path[256];
    snprintf(path, sizeof path, "/workspace/%s", name);
    check(ocisbx_backend_write(w->b, path, "payload\n", 8), "write odd");
    unsigned char *d = NULL;
    size_t n = 0;
    check(ocisbx_backend_read_bytes(w->b, path, &d, &n), "read odd");
    assert_int_equal(n, 8);
    ocisbx_free(d);
    const char *argv[] = {"cat", "--", path};
    ocisbx_exec_result *r = NULL;
    check(ocisbx_backend_exec_argv(w->b, argv, 3, NULL, &r), "cat odd");
    assert_string_equal(ocisbx_exec_result_output(r, NULL), "payload\n");
    ocisbx_exec_result_free(r);
    ocisbx_text_result *t = NULL;
    check(ocisbx_backend_read_text(w->b, path, 0, 0, &t), "read text odd");
    assert_string_equal(ocisbx_text_result_text(t), "     1\tpayload\n");
    ocisbx_text_result_free(t);
    check(ocisbx_backend_edit(w->b, path, "payload", "changed", 0, NULL, NULL), "edit odd");
}

static void test_read_text(void **state)
{
    world *w = *state;
    make_sub(w);
    const char *t = "l1\nl2\nl3\nl4\nl5";
    check(ocisbx_backend_write(w->b, "t.txt", t, strlen(t)), "write");
    ocisbx_text_result *r = NULL;
    check(ocisbx_backend_read_text(w->b, "t.txt", 2, 2, &r), "window");
    assert_string_equal(ocisbx_text_result_text(r), "     2\tl2\n     3\tl3\n");
    assert_int_equal(ocisbx_text_result_total_lines(r), 5);
    assert_int_equal(ocisbx_text_result_line_count(r), 2);
    assert_int_equal(ocisbx_text_result_size(r), strlen(t));
    ocisbx_text_result_free(r);
    check(ocisbx_backend_read_text(w->b, "t.txt", 4, 0, &r), "to the end");
    assert_string_equal(ocisbx_text_result_text(r), "     4\tl4\n     5\tl5\n");
    ocisbx_text_result_free(r);
    /* a long line */
    char *longl = malloc(3001);
    memset(longl, 'x', 3000);
    longl[3000] = '\0';
    check(ocisbx_backend_write(w->b, "long.txt", longl, 3000), "write long");
    check(ocisbx_backend_read_text(w->b, "long.txt", 0, 0, &r), "long");
    const char *txt = ocisbx_text_result_text(r);
    assert_true(strlen(txt) < 2100);
    assert_non_null(strstr(txt, "line cut at 2000 characters"));
    assert_memory_equal(txt + 7, longl, 2000);
    ocisbx_text_result_free(r);
    free(longl);
    /* binary */
    const char bin[] = {'a', 'b', 0, 'c', (char)0xff, 'd'};
    check(ocisbx_backend_write(w->b, "b.bin", bin, sizeof bin), "write bin");
    assert_int_equal(ocisbx_backend_read_text(w->b, "b.bin", 0, 0, &r), OCISBX_EBINARY);
    assert_non_null(r);
    assert_true(ocisbx_text_result_is_binary(r));
    assert_int_equal(ocisbx_text_result_size(r), sizeof bin);
    char h[65];
    sha_hex(bin, sizeof bin, h);
    assert_string_equal(ocisbx_text_result_sha256(r), h);
    ocisbx_text_result_free(r);
    r = NULL;
    const char bad[] = {'o', 'k', '\n', (char)0xc3, '(', '\n'};
    check(ocisbx_backend_write(w->b, "bad.txt", bad, sizeof bad), "write bad utf8");
    assert_int_equal(ocisbx_backend_read_text(w->b, "bad.txt", 0, 0, &r), OCISBX_EBINARY);
    ocisbx_text_result_free(r);
    r = NULL;
    assert_int_equal(ocisbx_backend_read_text(w->b, "nope.txt", 0, 0, &r), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_backend_read_text(w->b, "sub", 0, 0, &r), OCISBX_EISDIR);
    assert_null(r);
}

static void test_paths_refused(void **state)
{
    world *w = *state;
    make_sub(w);
    unsigned char *d = NULL;
    size_t n = 0;
    assert_int_equal(ocisbx_backend_read_bytes(w->b, "/etc/passwd", &d, &n), OCISBX_EFORBIDDEN);
    assert_int_equal(ocisbx_backend_read_bytes(w->b, "../etc/passwd", &d, &n), OCISBX_EFORBIDDEN);
    assert_int_equal(ocisbx_backend_read_bytes(w->b, "/workspacex/a", &d, &n), OCISBX_EFORBIDDEN);
    assert_int_equal(ocisbx_backend_write(w->b, "/workspace/a/../../etc/x", "x", 1), OCISBX_EFORBIDDEN);
    assert_int_equal(ocisbx_backend_read_bytes(w->b, "/workspace/missing", &d, &n), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_backend_read_bytes(w->b, "/workspace/sub", &d, &n), OCISBX_EISDIR);
    /* a symlink out of the workspace is not followed by file reads */
    char *s = run_out(w->b, "ln -sf /etc/passwd out-link");
    free(s);
    assert_int_equal(ocisbx_backend_read_bytes(w->b, "out-link", &d, &n), OCISBX_EFORBIDDEN);
    /* nor by the operations that run in the workspace: text reads, edit,
     * search, glob, ls (a link to a file, and one to a directory) */
    s = run_out(w->b, "ln -sf /etc/hostname hn-link && ln -sfn /etc etc-link && mkdir -p in && echo inside > "
                      "in/t.txt && ln -sf in/t.txt in-link");
    free(s);
    ocisbx_text_result *t = NULL;
    assert_int_equal(ocisbx_backend_read_text(w->b, "hn-link", 0, 0, &t), OCISBX_EFORBIDDEN);
    assert_int_equal(ocisbx_backend_read_text(w->b, "etc-link/hostname", 0, 0, &t), OCISBX_EFORBIDDEN);
    assert_int_equal(ocisbx_backend_edit(w->b, "hn-link", "a", "b", 0, NULL, NULL), OCISBX_EFORBIDDEN);
    ocisbx_search_options *so = NULL;
    check(ocisbx_search_options_new(&so), "search options");
    check(ocisbx_search_options_set_path(so, "/workspace/etc-link"), "path");
    ocisbx_search_result *sr = NULL;
    assert_int_equal(ocisbx_backend_search(w->b, "root", so, &sr), OCISBX_EFORBIDDEN);
    ocisbx_search_options_free(so);
    ocisbx_entry_list *l = NULL;
    assert_int_equal(ocisbx_backend_ls(w->b, "etc-link", &l), OCISBX_EFORBIDDEN);
    assert_int_equal(ocisbx_backend_glob(w->b, "*", "etc-link", 0, &l), OCISBX_EFORBIDDEN);
    /* a link that stays inside still works */
    check(ocisbx_backend_read_text(w->b, "in-link", 0, 0, &t), "read through a link inside");
    assert_non_null(strstr(ocisbx_text_result_text(t), "inside"));
    ocisbx_text_result_free(t);
}

static void test_jobs(void **state)
{
    world *w = *state;
    char *id = NULL;
    check(ocisbx_backend_job_start(w->b, "echo x; echo y >&2; exit 4", NULL, &id), "start");
    assert_int_equal(strlen(id), 20);
    ocisbx_job_status *st = job_wait_done(w->b, id);
    int x = -1;
    assert_int_equal(ocisbx_job_status_has_exit_code(st, &x), 1);
    assert_int_equal(x, 4);
    assert_false(ocisbx_job_status_killed(st));
    assert_int_equal(ocisbx_job_status_output_bytes(st), 4);
    ocisbx_job_status_free(st);
    char *d = NULL;
    size_t n = 0;
    uint64_t total = 0;
    check(ocisbx_backend_job_output(w->b, id, 2, 0, &d, &n, &total), "output from 2");
    assert_int_equal(total, 4);
    assert_string_equal(d, "y\n");
    ocisbx_free(d);
    check(ocisbx_backend_job_output(w->b, id, -1, 2, &d, &n, &total), "last 2");
    assert_string_equal(d, "y\n");
    ocisbx_free(d);
    ocisbx_free(id);

    /* a running job, killed with its children */
    check(ocisbx_backend_job_start(w->b, "echo started; sleep 1000.75 & sleep 1000.875", NULL, &id), "start long");
    job_wait_output(w->b, id, "started\n");
    check(ocisbx_backend_job_status(w->b, id, &st), "status");
    assert_true(ocisbx_job_status_running(st));
    assert_int_equal(ocisbx_job_status_has_exit_code(st, &x), 0);
    ocisbx_job_status_free(st);
    check(ocisbx_backend_job_kill(w->b, id), "kill");
    check(ocisbx_backend_job_status(w->b, id, &st), "status");
    assert_false(ocisbx_job_status_running(st));
    assert_true(ocisbx_job_status_killed(st));
    assert_int_equal(ocisbx_job_status_has_exit_code(st, &x), 0);
    ocisbx_job_status_free(st);
    assert_true(gone("1000.75"));
    assert_true(gone("1000.875"));
    check(ocisbx_backend_job_kill(w->b, id), "kill again");
    ocisbx_free(id);

    /* a job that overruns its timeout */
    ocisbx_exec_options *o = NULL;
    check(ocisbx_exec_options_new(&o), "options");
    check(ocisbx_exec_options_set_timeout_ms(o, 1000), "timeout");
    check(ocisbx_backend_job_start(w->b, "sleep 1000.625", o, &id), "start overrun");
    st = job_wait_done(w->b, id);
    assert_true(ocisbx_job_status_timed_out(st));
    assert_int_equal(ocisbx_job_status_has_exit_code(st, &x), 0);
    ocisbx_job_status_free(st);
    ocisbx_free(id);
    ocisbx_exec_options_free(o);
    /* output comes back byte exact, not UTF-8 and NUL included */
    check(ocisbx_backend_job_start(w->b, "printf '\\377\\000x'", NULL, &id), "start binary");
    st = job_wait_done(w->b, id);
    ocisbx_job_status_free(st);
    check(ocisbx_backend_job_output(w->b, id, 0, 0, &d, &n, &total), "binary output");
    assert_int_equal(n, 3);
    assert_memory_equal(d, "\377\000x", 3);
    ocisbx_free(d);
    ocisbx_free(id);
    ocisbx_job_status *none = NULL;
    assert_int_equal(ocisbx_backend_job_status(w->b, "job-AAAAAAAAAAAAAAAA", &none), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_backend_job_status(w->b, "../../x", &none), OCISBX_EINVAL);
}

static void test_search_glob_ls(void **state)
{
    world *w = *state;
    make_sub(w); /* the root holds more than s/: sub/, r1.txt, r2.txt */
    check(ocisbx_backend_write(w->b, "r1.txt", "r\n", 2), "r1.txt");
    check(ocisbx_backend_write(w->b, "r2.txt", "r\n", 2), "r2.txt");
    check(ocisbx_backend_write(w->b, "s/a.c", "int main\nfoo bar\nFOO\n", 21), "a.c");
    check(ocisbx_backend_write(w->b, "s/deep/b.c", "foo\n", 4), "b.c");
    check(ocisbx_backend_write(w->b, "s/x.txt", "foo\n", 4), "x.txt");
    check(ocisbx_backend_write(w->b, "s/odd\nn\xff.c", "foo here\n", 9), "odd");
    check(ocisbx_backend_write(w->b, "/workspace/.ocisbx/zz.c", "foo\n", 4), "hidden");
    ocisbx_search_options *o = NULL;
    ocisbx_search_result *r = NULL;
    check(ocisbx_search_options_new(&o), "options");
    check(ocisbx_backend_search(w->b, "fo+", o, &r), "search all");
    /* sub/... files of other tests have no foo; .ocisbx is skipped */
    assert_int_equal(ocisbx_search_result_count(r), 4);
    assert_false(ocisbx_search_result_truncated(r));
    assert_string_equal(ocisbx_search_result_path(r, 0), "/workspace/s/a.c");
    assert_int_equal(ocisbx_search_result_line(r, 0), 2);
    assert_string_equal(ocisbx_search_result_text(r, 0), "foo bar");
    assert_string_equal(ocisbx_search_result_path(r, 1), "/workspace/s/deep/b.c");
    assert_string_equal(ocisbx_search_result_path(r, 2), "/workspace/s/odd\nn\xff.c");
    assert_string_equal(ocisbx_search_result_text(r, 2), "foo here");
    assert_string_equal(ocisbx_search_result_path(r, 3), "/workspace/s/x.txt");
    ocisbx_search_result_free(r);
    check(ocisbx_search_options_set_ignore_case(o, 1), "icase");
    check(ocisbx_search_options_set_glob(o, "*.c"), "glob");
    check(ocisbx_search_options_set_path(o, "/workspace/s"), "path");
    check(ocisbx_backend_search(w->b, "foo", o, &r), "search icase");
    assert_int_equal(ocisbx_search_result_count(r), 4);
    assert_int_equal(ocisbx_search_result_line(r, 1), 3);
    assert_string_equal(ocisbx_search_result_text(r, 1), "FOO");
    ocisbx_search_result_free(r);
    check(ocisbx_search_options_set_max_results(o, 2), "max");
    check(ocisbx_backend_search(w->b, "foo", o, &r), "search capped");
    assert_int_equal(ocisbx_search_result_count(r), 2);
    assert_true(ocisbx_search_result_truncated(r));
    ocisbx_search_result_free(r);
    check(ocisbx_search_options_set_literal(o, 1), "literal");
    check(ocisbx_backend_search(w->b, "fo+", o, &r), "literal");
    assert_int_equal(ocisbx_search_result_count(r), 0);
    ocisbx_search_result_free(r);
    check(ocisbx_search_options_set_path(o, "/etc"), "path");
    assert_int_equal(ocisbx_backend_search(w->b, "x", o, &r), OCISBX_EFORBIDDEN);
    check(ocisbx_search_options_set_path(o, "/workspace/none"), "path");
    assert_int_equal(ocisbx_backend_search(w->b, "x", o, &r), OCISBX_ENOTFOUND);
    ocisbx_search_options_free(o);

    ocisbx_entry_list *l = NULL;
    check(ocisbx_backend_glob(w->b, "*.c", "/workspace/s", 0, &l), "glob");
    assert_int_equal(ocisbx_entry_list_count(l), 3);
    assert_string_equal(ocisbx_entry_list_name(l, 0), "/workspace/s/a.c");
    assert_string_equal(ocisbx_entry_list_name(l, 1), "/workspace/s/deep/b.c");
    assert_string_equal(ocisbx_entry_list_name(l, 2), "/workspace/s/odd\nn\xff.c");
    ocisbx_entry_list_free(l);
    check(ocisbx_backend_glob(w->b, "s/**/*.c", NULL, 0, &l), "glob **");
    assert_int_equal(ocisbx_entry_list_count(l), 3);
    ocisbx_entry_list_free(l);
    check(ocisbx_backend_glob(w->b, "s/deep/*.c", NULL, 0, &l), "glob dir");
    assert_int_equal(ocisbx_entry_list_count(l), 1);
    ocisbx_entry_list_free(l);
    check(ocisbx_backend_glob(w->b, "*.c", NULL, 2, &l), "glob capped");
    assert_int_equal(ocisbx_entry_list_count(l), 2);
    assert_true(ocisbx_entry_list_truncated(l));
    ocisbx_entry_list_free(l);
    check(ocisbx_backend_ls(w->b, "/workspace/s", &l), "ls");
    assert_int_equal(ocisbx_entry_list_count(l), 4);
    assert_string_equal(ocisbx_entry_list_name(l, 0), "a.c");
    assert_int_equal(ocisbx_entry_list_type(l, 0), 'f');
    assert_int_equal(ocisbx_entry_list_size(l, 0), 21);
    assert_string_equal(ocisbx_entry_list_name(l, 1), "deep");
    assert_int_equal(ocisbx_entry_list_type(l, 1), 'd');
    assert_string_equal(ocisbx_entry_list_name(l, 2), "odd\nn\xff.c");
    assert_string_equal(ocisbx_entry_list_name(l, 3), "x.txt");
    ocisbx_entry_list_free(l);
    check(ocisbx_backend_ls(w->b, NULL, &l), "ls root");
    for (size_t i = 0; i < ocisbx_entry_list_count(l); i++)
        assert_string_not_equal(ocisbx_entry_list_name(l, i), ".ocisbx");
    assert_true(ocisbx_entry_list_count(l) > 3);
    ocisbx_entry_list_free(l);
    assert_int_equal(ocisbx_backend_ls(w->b, "s/a.c", &l), OCISBX_EINVAL);
    assert_int_equal(ocisbx_backend_ls(w->b, "nothing", &l), OCISBX_ENOTFOUND);
}

/* ---- local only ---- */
static void test_local_host_shell(void **state)
{
    world *w = *state;
    ocisbx_backend_options *o = NULL;
    check(ocisbx_backend_options_new(&o), "options");
    check(ocisbx_backend_options_set_isolation(o, 0), "isolation off");
    ocisbx_backend *h = NULL;
    check(ocisbx_backend_local(w->dir, o, &h), "host backend");
    assert_int_equal(ocisbx_backend_is_host_shell(h), 1);
    char *abs = realpath(w->dir, NULL), want[600];
    snprintf(want, sizeof want, "%s\n", abs);
    char *out = run_out(h, "pwd");
    assert_string_equal(out, want);
    free(out);
    /* the same files, the same generic operations */
    check(ocisbx_backend_write(h, "host.txt", "a\r\nb\r\n", 6), "write");
    check(ocisbx_backend_edit(h, "/workspace/host.txt", "a\nb", "c\nd", 0, NULL, NULL), "edit");
    unsigned char *d = NULL;
    size_t n = 0;
    check(ocisbx_backend_read_bytes(w->b, "host.txt", &d, &n), "read through the isolated one");
    assert_string_equal((char *)d, "c\r\nd\r\n");
    ocisbx_free(d);
    ocisbx_entry_list *l = NULL;
    check(ocisbx_backend_glob(h, "host.txt", NULL, 0, &l), "glob");
    assert_int_equal(ocisbx_entry_list_count(l), 1);
    assert_string_equal(ocisbx_entry_list_name(l, 0), "/workspace/host.txt");
    ocisbx_entry_list_free(l);
    ocisbx_search_result *r = NULL;
    ocisbx_search_options *so = NULL;
    check(ocisbx_search_options_new(&so), "search options");
    check(ocisbx_search_options_set_glob(so, "host.*"), "glob");
    check(ocisbx_backend_search(h, "^c", so, &r), "search");
    ocisbx_search_options_free(so);
    assert_int_equal(ocisbx_search_result_count(r), 1);
    assert_string_equal(ocisbx_search_result_path(r, 0), "/workspace/host.txt");
    ocisbx_search_result_free(r);
    ocisbx_backend_free(h);
    /* isolated: the network is denied unless allowed */
    out = run_out(w->b, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' '");
    assert_string_equal(out, "lo ");
    free(out);
    free(abs);
    ocisbx_backend_options_free(o);
}

/* A host-shell run first (as root: the wrapper runs as root), then an
 * isolated one (as the directory's owner) on the same fresh directory. */
static void test_local_host_then_isolated(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/it_backend_mix_XXXXXX");
    assert_non_null(mkdtemp(dir));
    if (geteuid() == 0)
        assert_int_equal(chown(dir, 65534, 65534), 0);
    ocisbx_backend_options *o = NULL;
    check(ocisbx_backend_options_new(&o), "options");
    check(ocisbx_backend_options_set_isolation(o, 0), "isolation off");
    ocisbx_backend *h = NULL, *i = NULL;
    check(ocisbx_backend_local(dir, o, &h), "host backend");
    char *out = run_out(h, "echo host");
    assert_string_equal(out, "host\n");
    free(out);
    ocisbx_backend_free(h);
    check(ocisbx_backend_local(dir, NULL, &i), "isolated backend");
    out = run_out(i, "echo isolated");
    assert_string_equal(out, "isolated\n");
    free(out);
    ocisbx_backend_free(i);
    ocisbx_backend_options_free(o);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- OCI only ---- */
static void test_connect_close_deletes_nothing(void **state)
{
    world *w = *state;
    ocisbx_backend_options *o = base_options();
    ocisbx_backend_options_set_client(o, w->c);
    ocisbx_backend *b2 = NULL;
    check(ocisbx_backend_connect(ocisbx_backend_sandbox_id(w->b), o, &b2), "connect");
    char *s = run_out(b2, "echo via-connect");
    assert_string_equal(s, "via-connect\n");
    free(s);
    check(ocisbx_backend_close(b2), "close");
    check(ocisbx_backend_close(b2), "close again");
    ocisbx_backend_free(b2);
    ocisbx_sandbox *sb = NULL;
    check(ocisbx_client_get_sandbox(w->c, ocisbx_backend_sandbox_id(w->b), &sb), "still there");
    assert_string_equal(ocisbx_sandbox_lifecycle_state(sb), "RUNNING");
    ocisbx_sandbox_free(sb);
    /* connect asks nothing: a sandbox that does not exist shows at the first operation */
    check(ocisbx_backend_connect("ocid1.generativeaisandbox.oc1..nothere", o, &b2), "connect to nothing");
    ocisbx_exec_result *nr = NULL;
    assert_int_equal(ocisbx_backend_exec(b2, "true", NULL, &nr), OCISBX_ENOTFOUND);
    ocisbx_backend_free(b2);
    /* jobs: another backend reads and kills this one's; its close ends only its own */
    char *mine = NULL, *theirs = NULL;
    check(ocisbx_backend_job_start(w->b, "echo mine; sleep 1000.3125", NULL, &mine), "start mine");
    check(ocisbx_backend_connect(ocisbx_backend_sandbox_id(w->b), o, &b2), "connect 2");
    job_wait_output(b2, mine, "mine\n");
    check(ocisbx_backend_job_start(b2, "sleep 1000.4375", NULL, &theirs), "start theirs");
    check(ocisbx_backend_close(b2), "close 2");
    ocisbx_job_status *st = NULL;
    check(ocisbx_backend_job_status(w->b, theirs, &st), "status theirs");
    assert_false(ocisbx_job_status_running(st));
    ocisbx_job_status_free(st);
    assert_true(gone("1000.4375"));
    check(ocisbx_backend_job_status(w->b, mine, &st), "status mine");
    assert_true(ocisbx_job_status_running(st));
    ocisbx_job_status_free(st);
    ocisbx_backend_free(b2);
    check(ocisbx_backend_connect(ocisbx_backend_sandbox_id(w->b), o, &b2), "connect 3");
    check(ocisbx_backend_job_kill(b2, mine), "kill another's job");
    ocisbx_backend_free(b2);
    check(ocisbx_backend_job_status(w->b, mine, &st), "status mine");
    assert_true(ocisbx_job_status_killed(st));
    ocisbx_job_status_free(st);
    assert_true(gone("1000.3125"));
    ocisbx_free(mine);
    ocisbx_free(theirs);
    ocisbx_backend_options_free(o);
    char *exp = NULL;
    check(ocisbx_backend_extend(w->b, "PT30M", &exp), "extend");
    assert_non_null(exp);
    ocisbx_free(exp);
}

static void test_env_settings(void **state)
{
    world *w = *state;
    setenv("OCI_SANDBOX_SHAPE", "MEDIUM", 1);
    setenv("OCI_SANDBOX_EXPIRATION", "PT119M30S", 1);
    ocisbx_backend_options *o = base_options();
    ocisbx_backend_options_set_client(o, w->c);
    ocisbx_backend_options_set_poll_interval_ms(o, 50);
    ocisbx_backend *b = NULL;
    check(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), "create from env");
    char *j = NULL;
    check(ocisbx_backend_sandbox_json(b, &j), "json");
    ocisbx_sandbox *s = NULL;
    check(ocisbx_sandbox_from_json(j, strlen(j), &s), "parse");
    assert_string_equal(ocisbx_sandbox_shape(s), "MEDIUM");
    int64_t m = 0;
    assert_int_equal(ocisbx_sandbox_has_expires_in_minutes(s, &m), 1);
    assert_int_equal(m, 120); /* rounded up */
    assert_string_equal(ocisbx_sandbox_runtime(s), "python-3.11");
    assert_int_equal(strncmp(ocisbx_sandbox_display_name(s), "ocisbx-", 7), 0);
    ocisbx_sandbox_free(s);
    ocisbx_free(j);
    char id[256];
    snprintf(id, sizeof id, "%s", ocisbx_backend_sandbox_id(b));
    ocisbx_backend_free(b); /* free closes: a created sandbox is deleted */
    assert_int_equal(ocisbx_client_get_sandbox(w->c, id, &s), OCISBX_ENOTFOUND);
    /* the explicit option wins */
    ocisbx_backend_options_set_shape(o, "LARGE");
    check(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), "create explicit");
    check(ocisbx_backend_sandbox_json(b, &j), "json");
    assert_non_null(strstr(j, "\"LARGE\""));
    ocisbx_free(j);
    check(ocisbx_backend_close(b), "close");
    check(ocisbx_backend_close(b), "close twice");
    ocisbx_backend_free(b);
    unsetenv("OCI_SANDBOX_SHAPE");
    unsetenv("OCI_SANDBOX_EXPIRATION");
    ocisbx_backend_options_free(o);
}

/* The lifecycle group: sandboxes that take long to come up. */
static int setup_slow(void **state)
{
    world *w = calloc(1, sizeof *w);
    w->kind = "oci-slow";
    emu_fixture_options eo = {0};
    eo.https = true;
    eo.extra_yaml = "limits:\n  create_delay_ms: 600000\n"
                    "faults:\n  rules:\n"
                    "    - match: {method: GET, path: \"/sandboxes/*\"}\n"
                    "      respond: 400\n"
                    "      times: 1\n";
    if (emu_fixture_start(&eo, &w->emu) != 0)
        return -1;
    w->c = client_for(w->emu);
    *state = w;
    return w->c ? 0 : -1;
}

static int teardown_slow(void **state)
{
    world *w = *state;
    ocisbx_client_free(w->c);
    int rc = emu_fixture_stop(w->emu);
    emu_fixture_free(w->emu);
    free(w);
    return rc == 0 ? 0 : -1;
}

/* The number of sandboxes of the project not DELETED. */
static size_t live_sandboxes(ocisbx_client *c)
{
    ocisbx_list_options *lo = NULL;
    ocisbx_sandbox_collection *l = NULL;
    check(ocisbx_list_options_new(&lo), "list options");
    check(ocisbx_list_options_set(lo, "projectId", EMU_FIXTURE_PROJECT), "project");
    check(ocisbx_client_list_sandboxes(c, lo, &l), "list");
    size_t n = 0;
    for (size_t i = 0; i < ocisbx_sandbox_collection_count(l); i++) {
        const char *st = ocisbx_sandbox_lifecycle_state(ocisbx_sandbox_collection_item(l, i));
        if (strcmp(st, "DELETED") != 0)
            n++;
    }
    ocisbx_sandbox_collection_free(l);
    ocisbx_list_options_free(lo);
    return n;
}

static int cancel_after(void *ud)
{
    int *n = ud;
    return ++*n > 5;
}

/* A cancel callback that, on its third call, deletes every sandbox of the
 * project behind the backend's back (and never cancels). */
typedef struct deleter {
    emu_fixture *emu;
    int calls;
} deleter;

static int delete_behind(void *ud)
{
    deleter *d = ud;
    if (++d->calls != 3)
        return 0;
    cJSON *j = NULL;
    char path[300];
    snprintf(path, sizeof path, "/sandboxes?projectId=%s", EMU_FIXTURE_PROJECT);
    if (emu_fixture_json(d->emu, "GET", path, NULL, 200, &j) != 0)
        return 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "items"))
    {
        snprintf(path, sizeof path, "/sandboxes/%s", cJSON_GetObjectItemCaseSensitive(it, "id")->valuestring);
        emu_fixture_json(d->emu, "DELETE", path, NULL, 204, NULL);
    }
    cJSON_Delete(j);
    return 0;
}

static void test_create_failures_delete(void **state)
{
    world *w = *state;
    ocisbx_backend_options *o = NULL;
    ocisbx_backend *b = NULL;
    check(ocisbx_backend_options_new(&o), "options");
    ocisbx_backend_options_set_client(o, w->c);
    ocisbx_backend_options_set_poll_interval_ms(o, 20);
    /* a failed request while waiting (the fault: the first GET is a 400) */
    assert_int_not_equal(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), 0);
    assert_null(b);
    assert_int_equal(live_sandboxes(w->c), 0);
    /* the ready timeout */
    ocisbx_backend_options_set_ready_timeout_ms(o, 300);
    assert_int_equal(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), OCISBX_ETIMEOUT);
    assert_int_equal(live_sandboxes(w->c), 0);
    /* the cancel callback */
    int calls = 0;
    ocisbx_backend_options_set_ready_timeout_ms(o, 600000);
    ocisbx_backend_options_set_cancel(o, cancel_after, &calls);
    assert_int_equal(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), OCISBX_ECANCELED);
    assert_int_equal(live_sandboxes(w->c), 0);
    /* the sandbox deleted while waiting: an error at once, nothing left */
    deleter dl = {w->emu, 0};
    ocisbx_backend_options_set_cancel(o, delete_behind, &dl);
    assert_int_not_equal(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), 0);
    assert_true(dl.calls >= 3);
    assert_int_equal(live_sandboxes(w->c), 0);
    ocisbx_backend_options_set_cancel(o, NULL, NULL);
    /* refused before any request */
    ocisbx_backend_options_set_expiration(o, "P3D");
    assert_int_equal(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), OCISBX_EINVAL);
    ocisbx_backend_options_set_expiration(o, "forever");
    assert_int_not_equal(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), 0);
    assert_int_equal(live_sandboxes(w->c), 0);
    ocisbx_backend_options_free(o);
}

/* A service that stops answering: the stream hangs (delayed 15 s, far past
 * the bound; the emulator's stop waits for a delayed answer).
 * The run's deadline ends the request that is open (the caller's client
 * included): exec returns timed out soon after its own timeout, not when
 * the service answers. */
static int setup_hung(void **state)
{
    world *w = calloc(1, sizeof *w);
    w->kind = "oci-hung";
    emu_fixture_options eo = {0};
    eo.https = true;
    eo.extra_yaml = "limits:\n  create_delay_ms: 20\n"
                    "faults:\n  rules:\n"
                    "    - match: {method: GET, path: \"/sandboxes/*/commands/*/events\"}\n"
                    "      delay_ms: 15000\n"
                    "    - match: {method: POST, path: \"/sandboxes/*/commands/actions/runAndStream\"}\n"
                    "      delay_ms: 15000\n";
    if (emu_fixture_start(&eo, &w->emu) != 0) {
        fprintf(stderr, "hung: emulator: %s\n", ocisbx_error_message(ocisbx_error_last()));
        return -1;
    }
    w->c = client_for(w->emu);
    *state = w;
    if (!w->c)
        fprintf(stderr, "hung: client: %s\n", ocisbx_error_message(ocisbx_error_last()));
    return w->c ? 0 : -1;
}

static void hung_case(world *w, bool own_client)
{
    ocisbx_backend_options *o = NULL;
    check(ocisbx_backend_options_new(&o), "options");
    if (own_client) { /* built from the config file, trusting the tenancy's CA */
        check(ocisbx_backend_options_set_config_file(o, emu_fixture_config_path(w->emu)), "config");
        check(ocisbx_backend_options_set_endpoint(o, emu_fixture_url(w->emu)), "endpoint");
        check(ocisbx_backend_options_set_ca_bundle(o, emu_fixture_ca_path(w->emu)), "ca bundle");
    } else {
        check(ocisbx_backend_options_set_client(o, w->c), "client");
    }
    check(ocisbx_backend_options_set_poll_interval_ms(o, 20), "poll");
    /* short ones: the test waits for them */
    assert_int_equal(ocisbx_backend_options_set_kill_grace_s(o, 0), OCISBX_EINVAL);
    assert_int_equal(ocisbx_backend_options_set_client_margin_ms(o, -1), OCISBX_EINVAL);
    check(ocisbx_backend_options_set_kill_grace_s(o, 1), "kill grace");
    check(ocisbx_backend_options_set_client_margin_ms(o, 500), "client margin");
    ocisbx_backend *b = NULL;
    check(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), "create");
    ocisbx_exec_options *xo = NULL;
    check(ocisbx_exec_options_new(&xo), "exec options");
    check(ocisbx_exec_options_set_timeout_ms(xo, 1000), "timeout");
    ocisbx_exec_result *r = NULL;
    int64_t t0 = ocisbx_time_monotonic_ms();
    int rc = ocisbx_backend_exec(b, "echo hi", xo, &r);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    /* 1 s + the kill grace (1 s) + the client's margin (0.5 s) + 2 s for the
     * cancel, and well before the 15 s of the hang */
    int64_t bound = 1000 + 1000 + 500 + 2000 + 1500;
    if (took > bound)
        fail_msg("exec took %lld ms with the service hung (bound %lld ms)", (long long)took, (long long)bound);
    assert_int_equal(rc, 0);
    assert_true(ocisbx_exec_result_timed_out(r));
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(xo);
    char id[256];
    snprintf(id, sizeof id, "%s", ocisbx_backend_sandbox_id(b));
    check(ocisbx_backend_close(b), "close");
    ocisbx_backend_free(b);
    ocisbx_sandbox *s = NULL;
    assert_int_equal(ocisbx_client_get_sandbox(w->c, id, &s), OCISBX_ENOTFOUND);
    ocisbx_backend_options_free(o);
}

/* the caller's client and the backend's own, each a case of its own (side by side) */
static void test_hung_request_bounded_by_deadline(void **state)
{
    hung_case(*state, false);
}

static void test_hung_request_bounded_own_client(void **state)
{
    hung_case(*state, true);
}

/* A backend that builds its own client reaches a test tenancy on
 * http://127.0.0.1 (plain http to loopback only, as the CLI). */
static void test_own_client_plain_http_loopback(void **state)
{
    world *w = *state;
    ocisbx_backend_options *o = NULL;
    check(ocisbx_backend_options_new(&o), "options");
    check(ocisbx_backend_options_set_config_file(o, emu_fixture_config_path(w->emu)), "config");
    check(ocisbx_backend_options_set_endpoint(o, emu_fixture_url(w->emu)), "endpoint");
    check(ocisbx_backend_options_set_poll_interval_ms(o, 20), "poll");
    ocisbx_backend *b = NULL;
    check(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), "create over http to loopback");
    ocisbx_exec_result *r = NULL;
    check(ocisbx_backend_exec(b, "echo over-http", NULL, &r), "exec");
    size_t n = 0;
    assert_non_null(strstr(ocisbx_exec_result_output(r, &n), "over-http"));
    ocisbx_exec_result_free(r);
    check(ocisbx_backend_close(b), "close");
    ocisbx_backend_free(b);
    /* http to a host that is not loopback stays refused */
    check(ocisbx_backend_options_set_endpoint(o, "http://192.0.2.1:9"), "endpoint");
    assert_int_not_equal(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b), 0);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "plain http"));
    ocisbx_backend_options_free(o);
}

static int setup_plain(void **state)
{
    world *w = calloc(1, sizeof *w);
    w->kind = "oci-plain";
    emu_fixture_options eo = {0};
    eo.extra_yaml = "limits:\n  create_delay_ms: 20\n";
    if (emu_fixture_start(&eo, &w->emu) != 0)
        return -1;
    *state = w;
    return 0;
}

/* the longest first (as measured on both backends): the cases run side by
 * side (par_run.h); an implementation's own cases go between SUITE_HEAD and
 * SUITE_TAIL, by their length. With OCISBX_TEST_JOBS=1 they share one
 * workspace, in this order: the write cases, which find .ocisbx empty but
 * for run files, come before the jobs and the searches that leave files there. */
#define SUITE_HEAD                                                                                                  \
    cmocka_unit_test(test_exec_64mb_output), cmocka_unit_test(test_exec_timeout_kills_tree),                        \
        cmocka_unit_test(test_write_failure_keeps_old), cmocka_unit_test(test_write_big_checked),                   \
        cmocka_unit_test(test_jobs), cmocka_unit_test(test_search_glob_ls), cmocka_unit_test(test_exec_canceled),   \
        cmocka_unit_test(test_read_text), cmocka_unit_test(test_paths_refused)
#define SUITE_TAIL                                                                                                  \
    cmocka_unit_test(test_exec_big_output), cmocka_unit_test(test_adversarial_names),                               \
        cmocka_unit_test(test_exec_basic), cmocka_unit_test(test_edit), cmocka_unit_test(test_exec_argv),           \
        cmocka_unit_test(test_exec_live), cmocka_unit_test(test_label), cmocka_unit_test(test_exec_order)

/* One CTest entry per group (tests/integration/it_backend.cmake): the group
 * is argv[1] or $IT_BACKEND_GROUP (local, oci, lifecycle); none: all. */
int main(int argc, char **argv)
{
    const struct CMUnitTest local_tests[] = {SUITE_HEAD, SUITE_TAIL, cmocka_unit_test(test_local_host_shell),
                                             cmocka_unit_test(test_local_host_then_isolated)};
    const struct CMUnitTest oci_tests[] = {SUITE_HEAD, cmocka_unit_test(test_connect_close_deletes_nothing),
                                           cmocka_unit_test(test_env_settings), SUITE_TAIL};
    const struct CMUnitTest slow_tests[] = {cmocka_unit_test(test_create_failures_delete)};
    const struct CMUnitTest hung_tests[] = {cmocka_unit_test(test_hung_request_bounded_by_deadline),
                                            cmocka_unit_test(test_hung_request_bounded_own_client)};
    const struct CMUnitTest plain_tests[] = {cmocka_unit_test(test_own_client_plain_http_loopback)};
    const char *g = backend_world_group(argc, argv);
    /* every case in a world of its own (par_run.h), the groups in one pool */
    par_group groups[5];
    size_t n = 0;
    if (backend_world_wants(g, "lifecycle")) {
        groups[n++] = (par_group)PAR_GROUP("backend: oci service hung", hung_tests, setup_hung, teardown_slow);
        groups[n++] = (par_group)PAR_GROUP("backend: oci create failures", slow_tests, setup_slow, teardown_slow);
        groups[n++] =
            (par_group)PAR_GROUP("backend: oci own client, plain http", plain_tests, setup_plain, teardown_slow);
    }
    if (backend_world_wants(g, "local"))
        groups[n++] = (par_group)PAR_GROUP("backend: local directory", local_tests, setup_local, teardown);
    if (backend_world_wants(g, "oci"))
        groups[n++] = (par_group)PAR_GROUP("backend: oci sandbox (emulator)", oci_tests, setup_oci, teardown);
    return par_run_groups(groups, n) ? 1 : 0;
}
