/* Transfer progress: an upload and a download (sandbox-file write/read and
 * cp, both ways) of a 3 MiB file against the emulator show a progress line
 * when stderr is a terminal (a pty here), and nothing at all on stderr when
 * it is a pipe; the bytes arrive intact either way. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pty.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"
#include "emu_fixture.h"
#include "test_keys.h"
#include "par_run.h"

#define SIZE (3 * 1024 * 1024 + 123)

static emu_fixture *emu;
static char dir[160]; /* a fresh directory under the system's temporary directory */
static char sandbox[256];
static char big[256];

/* Runs ocisbx (the shared runner, tests/support/cli_run.h) with stdout and
 * stderr on a pty; returns the exit status and what the terminal showed. */
static int run_pty(const char *const *args, char *out, size_t cap)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = "--config-file";
    argv[n++] = emu_fixture_config_path(emu);
    argv[n++] = "--endpoint";
    argv[n++] = emu_fixture_url(emu);
    for (const char *const *a = args; *a && n < 31; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    static const char *const env[] = {"OCI_CONFIG_FILE", "OCI_SANDBOX_ENDPOINT", NULL};
    cli_run_options o = {0};
    o.env = env;
    o.tty = CLI_TTY_PTY_STDIO;
    cli_result r;
    assert_int_equal(cli_run_ex(argv, &o, &r), 0);
    snprintf(out, cap, "%s", r.out);
    free(o.tty_out);
    int st = r.status;
    cli_result_free(&r);
    return st;
}

/* The same with pipes (cli_run): stderr must stay empty. */
static void run_piped(const char *const *args)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = "--config-file";
    argv[n++] = emu_fixture_config_path(emu);
    argv[n++] = "--endpoint";
    argv[n++] = emu_fixture_url(emu);
    for (const char *const *a = args; *a && n < 31; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    cli_result r;
    assert_int_equal(cli_run(argv, NULL, NULL, &r), 0);
    if (r.status != 0 || r.err[0]) {
        fprintf(stderr, "piped %s %s: exit %d, stderr: %s\n", args[0], args[1], r.status, r.err);
        fail();
    }
    cli_result_free(&r);
}

static void assert_same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    assert_non_null(fa);
    assert_non_null(fb);
    int ca, cb;
    size_t n = 0;
    do {
        ca = fgetc(fa);
        cb = fgetc(fb);
        assert_int_equal(ca, cb);
        n++;
    } while (ca != EOF);
    fclose(fa);
    fclose(fb);
    assert_int_equal(n, (size_t)SIZE + 1);
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/ocisbx-it-cli-transfer-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
    if (!mkdtemp(dir))
        return -1;
    snprintf(big, sizeof big, "%s/big.bin", dir);
    FILE *f = fopen(big, "wb");
    if (!f)
        return -1;
    for (int i = 0; i < SIZE; i++)
        fputc((i * 31 + i / 1000) & 0xff, f);
    fclose(f);
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    if (emu_fixture_start(&o, &emu) != 0)
        return -1;
    return emu_fixture_new_sandbox(emu, NULL, NULL, sandbox, sizeof sandbox);
}

static int teardown(void **state)
{
    (void)state;
    int rc = emu_fixture_stop(emu);
    emu_fixture_free(emu);
    test_rm_rf(dir);
    return rc == 0 ? 0 : -1;
}

static char screen[1 << 16];

static void test_file_write_read(void **state)
{
    (void)state;
    const char *const up[] = {"sandbox-file",
                              "write",
                              "--sandbox-id",
                              sandbox,
                              "--sandbox-file-path",
                              "/workspace/big.bin",
                              "--file",
                              big,
                              NULL};
    assert_int_equal(run_pty(up, screen, sizeof screen), 0);
    fprintf(stderr, "terminal (write): %s\n", screen);
    assert_non_null(strstr(screen, "ocisbx: uploading"));
    assert_non_null(strstr(screen, "ocisbx: uploaded 3.0 MiB of 3.0 MiB (100%)"));
    run_piped(up);

    char back[300];
    snprintf(back, sizeof back, "%s/back.bin", dir);
    const char *const down[] = {"sandbox-file",       "read",         "--sandbox-id", sandbox, "--sandbox-file-path",
                                "/workspace/big.bin", "--local-file", back,           NULL};
    assert_int_equal(run_pty(down, screen, sizeof screen), 0);
    fprintf(stderr, "terminal (read): %s\n", screen);
    assert_non_null(strstr(screen, "ocisbx: downloading"));
    assert_non_null(strstr(screen, "ocisbx: downloaded 3.0 MiB"));
    assert_same_file(big, back);
    unlink(back);
    run_piped(down);
    assert_same_file(big, back);

    /* a small request shows nothing even on a terminal */
    const char *const get[] = {"sandbox", "get", "--sandbox-id", sandbox, NULL};
    assert_int_equal(run_pty(get, screen, sizeof screen), 0);
    assert_null(strstr(screen, "ocisbx: "));
}

static void test_cp_both_ways(void **state)
{
    (void)state;
    char remote[400], back[300];
    snprintf(remote, sizeof remote, "sbx:%s:/workspace/cp.bin", sandbox);
    snprintf(back, sizeof back, "%s/cp-back.bin", dir);
    const char *const up[] = {"cp", big, remote, NULL};
    int st = run_pty(up, screen, sizeof screen);
    fprintf(stderr, "terminal (cp up): %s\n", screen);
    assert_int_equal(st, 0);
    assert_non_null(strstr(screen, "ocisbx: uploaded"));
    run_piped(up);
    const char *const down[] = {"cp", remote, back, NULL};
    st = run_pty(down, screen, sizeof screen);
    fprintf(stderr, "terminal (cp down): %s\n", screen);
    assert_int_equal(st, 0);
    assert_non_null(strstr(screen, "ocisbx: downloaded"));
    assert_same_file(big, back);
    run_piped(down);
    assert_same_file(big, back);
}

/* A file above 8 MiB goes up in parts: still one progress line for the
 * whole file (bytes of the total, percent, rate, time left), its percent
 * never going back, one final "uploaded" line; nothing when piped. Parts
 * in parallel (the default) or one after the other (--parallel 1). */
static void cp_parts_one_line(const char *parallel)
{
    char path[300], remote[400];
    snprintf(path, sizeof path, "%s/parts.bin", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    static char block[65536];
    for (size_t i = 0; i < sizeof block; i++)
        block[i] = (char)(i * 7);
    for (int i = 0; i < 9 * 16 + 1; i++) /* 9 MiB + 64 KiB: two parts */
        assert_int_equal(fwrite(block, 1, sizeof block, f), sizeof block);
    fclose(f);
    snprintf(remote, sizeof remote, "sbx:%s:/workspace/parts.bin", sandbox);
    const char *const up_default[] = {"cp", path, remote, NULL};
    const char *const up_flag[] = {"cp", "--parallel", parallel, path, remote, NULL};
    const char *const *up = parallel ? up_flag : up_default;
    int st = run_pty(up, screen, sizeof screen);
    fprintf(stderr, "terminal (cp parts, --parallel %s): %s\n", parallel ? parallel : "default", screen);
    assert_int_equal(st, 0);
    int finals = 0, mids = 0, last_pct = -1;
    for (char *seg = strtok(screen, "\r\n"); seg; seg = strtok(NULL, "\r\n")) {
        if (!strstr(seg, "ocisbx: upload"))
            continue;
        assert_non_null(strstr(seg, " of 9.1 MiB (")); /* the whole file's total, every time */
        int pct = atoi(strchr(seg, '(') + 1);
        assert_true(pct >= last_pct);
        last_pct = pct;
        if (strstr(seg, "ocisbx: uploaded")) {
            finals++;
            assert_non_null(strstr(seg, "uploaded 9.1 MiB of 9.1 MiB (100%), "));
            assert_non_null(strstr(seg, "/s"));
        } else if (pct > 0 && pct < 100) { /* at the end of the first part at least */
            mids++;
            assert_non_null(strstr(seg, "/s, "));
            assert_non_null(strstr(seg, " left"));
        }
    }
    assert_int_equal(finals, 1);
    /* one after the other, the end of the first part is drawn at once;
     * in parallel the parts move together (a line every 200 ms) */
    if (parallel && strcmp(parallel, "1") == 0)
        assert_true(mids >= 1);
    run_piped(up);
    unlink(path);
}

static void test_cp_parts_one_line(void **state)
{
    (void)state;
    cp_parts_one_line(NULL);
    cp_parts_one_line("1");
    cp_parts_one_line("2");
}

/* How many paths match pattern (0: none). */
static size_t glob_count(const char *pattern)
{
    glob_t g;
    size_t n = glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
    globfree(&g);
    return n;
}

/* Ctrl-C (SIGINT) or SIGTERM during a cp in parts, once the first part is
 * in the workspace (watched there, on the tenancy's disk): cp removes the
 * parts before it exits 128 + signal; the target never appears. */
static void cp_interrupted(const char *parallel, int sig)
{
    char path[300], remote[400], ws[600], parts[700], target[700];
    snprintf(path, sizeof path, "%s/int.bin", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    static char block[1 << 20];
    for (size_t i = 0; i < sizeof block; i++)
        block[i] = (char)(i * 13 + 5);
    for (int i = 0; i < 10 * 8 + 1; i++) /* 81 MiB: eleven parts */
        assert_int_equal(fwrite(block, 1, sizeof block, f), sizeof block);
    fclose(f);
    snprintf(remote, sizeof remote, "sbx:%s:/workspace/int/target.bin", sandbox);
    snprintf(ws, sizeof ws, "%s/workspaces/%s", emu_fixture_state_dir(emu), sandbox);
    snprintf(parts, sizeof parts, "%s/.ocisbx/write-*/p000000", ws);
    snprintf(target, sizeof target, "%s/int/target.bin", ws);
    const char *const argv[] = {"--config-file",
                                emu_fixture_config_path(emu),
                                "--endpoint",
                                emu_fixture_url(emu),
                                "cp",
                                "--parallel",
                                parallel,
                                path,
                                remote,
                                NULL};
    static const char *const env[] = {"OCI_CONFIG_FILE", "OCI_SANDBOX_ENDPOINT", NULL};
    cli_run_options o = {0};
    o.env = env;
    cli_proc p;
    assert_int_equal(cli_run_start(argv, &o, &p), 0);
    /* the first part stored (the tenancy renames it into place whole) */
    bool seen = false;
    for (int i = 0; i < 120000 && !seen; i++) {
        seen = glob_count(parts) > 0;
        if (!seen && waitpid(p.pid, NULL, WNOHANG) == p.pid)
            break; /* ended (cli_run_finish can no longer say how): a failure */
        if (!seen)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    if (!seen)
        fail_msg("cp --parallel %s ended or never stored a part", parallel);
    assert_int_equal(kill(p.pid, sig), 0);
    cli_result r;
    assert_int_equal(cli_run_finish(&p, &r), 0);
    fprintf(stderr, "cp --parallel %s, signal %d: exit %d, stderr: %s\n", parallel, sig, r.status, r.err);
    assert_int_equal(r.status, 128 + sig);
    cli_result_free(&r);
    char wparts[700];
    snprintf(wparts, sizeof wparts, "%s/.ocisbx/write-*", ws);
    if (glob_count(wparts) != 0) {
        char cmd[800];
        snprintf(cmd, sizeof cmd, "ls -la --full-time %s/.ocisbx/write-*", ws);
        (void)system(cmd);
        fail_msg("cp --parallel %s, signal %d: parts left", parallel, sig);
    }
    struct stat st;
    assert_int_not_equal(stat(target, &st), 0);
    unlink(path);
}

static void test_cp_interrupted_leaves_nothing(void **state)
{
    (void)state;
    cp_interrupted("1", SIGINT);
    cp_interrupted("4", SIGINT);
    cp_interrupted("2", SIGTERM);
}

/* --parallel outside 1..16 is a bad command line naming the option. */
static void test_cp_parallel_bad(void **state)
{
    (void)state;
    char remote[400];
    snprintf(remote, sizeof remote, "sbx:%s:/workspace/never.bin", sandbox);
    const char *const zero[] = {"cp", "--parallel", "0", big, remote, NULL};
    assert_int_equal(run_pty(zero, screen, sizeof screen), 2);
    assert_non_null(strstr(screen, "--parallel wants a whole number 1..16, not 0"));
    const char *const many[] = {"cp", "--parallel=17", big, remote, NULL};
    assert_int_equal(run_pty(many, screen, sizeof screen), 2);
    assert_non_null(strstr(screen, "not 17"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_write_read),
        cmocka_unit_test(test_cp_both_ways),
        cmocka_unit_test(test_cp_parts_one_line),
        cmocka_unit_test(test_cp_parallel_bad),
        cmocka_unit_test(test_cp_interrupted_leaves_nothing),
    };
    return par_run_group_tests_name("it_cli_transfer", tests, setup, teardown);
}
