/* The local backend as root on a directory that belongs to root (a checkout
 * in a container): through the library and through `ocisbx exec
 * --local-dir`, the command runs as root in a user namespace, what it
 * makes belongs to root, and it cannot set a setuid bit, read /etc/shadow,
 * /root or the user's ~/.oci, write outside /workspace or write the host's
 * /proc/sys. Without isolation, `ocisbx exec --no-isolation` leaves nothing
 * running after its timeout, its exit or its being killed (a setsid()
 * child, a child that ignores TERM). Tests that need root skip with a line saying so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_run.h"
#include "ocisbx/backend.h"
#include "sys/proc.h"
#include "par_run.h"

/* What the command prints inside, and what it must print. */
static const char k_probe[] =
    "id -u; touch made\n"
    "if chmod 4755 made 2>/dev/null; then echo suid-set; else echo suid-refused; fi\n"
    "for f in /etc/shadow /root \"$HOST_HOME/.oci\"; do\n"
    "  if cat \"$f\" >/dev/null 2>&1 || ls \"$f\" >/dev/null 2>&1; then echo \"$f READABLE\"; "
    "else echo \"$f unreadable\"; fi; done\n"
    "for d in /etc /usr /tmp /proc/sys/kernel; do\n"
    "  if (echo x > \"$d/it-local-root\") 2>/dev/null; then echo \"$d WRITABLE\"; else echo \"$d refused\"; fi; "
    "done\n"
    "v=$(cat /proc/sys/kernel/printk_ratelimit)\n"
    "if (printf '%s\\n' \"$v\" > /proc/sys/kernel/printk_ratelimit) 2>/dev/null; then echo sysctl WRITABLE; "
    "else echo sysctl refused; fi\n";

static void want_probe(const char *out, const char *home)
{
    char want[1024];
    snprintf(want, sizeof want,
             "0\nsuid-refused\n/etc/shadow unreadable\n/root unreadable\n%s/.oci unreadable\n"
             "/etc refused\n/usr refused\n/tmp refused\n/proc/sys/kernel refused\nsysctl refused\n",
             home);
    assert_string_equal(out, want);
}

static const char *host_home(void)
{
    const char *h = getenv("HOME");
    return h && *h && strcmp(h, "/") != 0 ? h : "/root";
}

/* A fresh directory that belongs to root; NULL (and a line) when the test
 * cannot run here. */
static char *root_dir(const char *test)
{
    if (geteuid() != 0) {
        fprintf(stderr, "it_local_root: %s SKIPPED: needs root (a directory of root's, as root)\n", test);
        return NULL;
    }
    char why[700];
    if (ocisbx_proc_root_workspace_check(why, sizeof why) != 0) {
        fprintf(stderr, "it_local_root: %s SKIPPED: %s\n", test, why);
        return NULL;
    }
    char *dir = strdup("/tmp/it_local_root_XXXXXX");
    assert_non_null(dir);
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chown(dir, 0, 0), 0);
    return dir;
}

static void rm_rf(const char *path)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    assert_int_equal(system(cmd), 0);
}

static void check_made(const char *dir)
{
    char path[600];
    struct stat st;
    snprintf(path, sizeof path, "%s/made", dir);
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_uid, 0); /* root's, as the directory is */
    assert_int_equal(st.st_mode & (S_ISUID | S_ISGID), 0);
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_uid, 0);
}

static void t_backend_root_dir(void **state)
{
    (void)state;
    char *dir = root_dir("t_backend_root_dir");
    if (!dir) {
        skip();
        return;
    }
    ocisbx_backend *b = NULL;
    int rc = ocisbx_backend_local(dir, NULL, &b);
    if (rc)
        fail_msg("ocisbx_backend_local: %s", ocisbx_error_message(ocisbx_error_last()));
    ocisbx_exec_options *o = NULL;
    assert_int_equal(ocisbx_exec_options_new(&o), 0);
    char env[600];
    snprintf(env, sizeof env, "HOST_HOME=%s; ", host_home());
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "export %s%s", env, k_probe);
    ocisbx_exec_result *r = NULL;
    assert_int_equal(ocisbx_backend_exec(b, cmd, o, &r), 0);
    int code = -1;
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, &code), 1);
    size_t len = 0;
    const char *out = ocisbx_exec_result_output(r, &len);
    if (code != 0)
        fprintf(stderr, "output: %s\n", out);
    assert_int_equal(code, 0);
    want_probe(out, host_home());
    ocisbx_exec_result_free(r);
    /* the files API writes there too, as root */
    assert_int_equal(ocisbx_backend_write(b, "sub/written.txt", "hi\n", 3), 0);
    assert_int_equal(ocisbx_backend_exec(b, "cat sub/written.txt", o, &r), 0);
    assert_string_equal(ocisbx_exec_result_output(r, &len), "hi\n");
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
    ocisbx_backend_free(b);
    check_made(dir);
    rm_rf(dir);
    free(dir);
}

static void t_cli_root_dir(void **state)
{
    (void)state;
    char *dir = root_dir("t_cli_root_dir");
    if (!dir) {
        skip();
        return;
    }
    char env[600];
    snprintf(env, sizeof env, "HOST_HOME=%s", host_home());
    const char *args[] = {"exec", "--local-dir", dir, "--env", env, "--", k_probe, NULL};
    cli_result r;
    assert_int_equal(cli_run(args, NULL, NULL, &r), 0);
    if (r.status != 0)
        fprintf(stderr, "stdout: %s\nstderr: %s\n", r.out, r.err);
    assert_int_equal(r.status, 0);
    want_probe(r.out, host_home());
    cli_result_free(&r);
    check_made(dir);
    rm_rf(dir);
    free(dir);
}

/* ---- without isolation: nothing outlives the timeout or the CLI -------------------- */

/* How many processes have arg as one of their argv words. */
static int count_marked(const char *arg)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char path[300], buf[4096];
        snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
            if (strcmp(buf + i, arg) == 0) {
                n++;
                break;
            }
    }
    closedir(d);
    return n;
}

/* Zombies waiting for init are gone too: allow a few seconds. */
static bool none_within(const char *mark, int ms)
{
    for (int i = 0; i < ms / 50; i++) {
        if (count_marked(mark) == 0)
            return true;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return count_marked(mark) == 0;
}

static void t_cli_unisolated_leaves_nothing(void **state)
{
    (void)state;
    char dir[] = "/tmp/it_local_unisolated_XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (int round = 0; round < 2; round++) {
        char mark[64], cmd[512];
        snprintf(mark, sizeof mark, "1000.%d%d", (int)getpid(), round);
        /* round 0: the timeout ends it; 1: the shell exits, children left
         * (not holding its output, which would keep the command running) */
        snprintf(cmd, sizeof cmd,
                 "M=%s; setsid sleep $M >/dev/null 2>&1 & (trap '' TERM; exec sleep $M) >/dev/null 2>&1 & "
                 "sh -c 'setsid sleep '$M' &' >/dev/null 2>&1; %s",
                 mark, round == 0 ? "sleep 1000" : "echo done");
        const char *args[] = {"exec", "--local-dir", dir, "--no-isolation", "--timeout", "2", "--", cmd, NULL};
        cli_result r;
        assert_int_equal(cli_run(args, NULL, NULL, &r), 0);
        if (round == 0) {
            assert_int_equal(r.status, 124);
        } else {
            assert_int_equal(r.status, 0);
            assert_string_equal(r.out, "done\n");
        }
        cli_result_free(&r);
        assert_true(none_within(mark, 10000));
    }
    /* the CLI killed (SIGKILL, no cleanup of its own): the keeper ends the tree */
    char mark[64], cmd[512];
    snprintf(mark, sizeof mark, "1000.%d9", (int)getpid());
    snprintf(cmd, sizeof cmd,
             "M=%s; setsid sleep $M >/dev/null 2>&1 & (trap '' TERM; exec sleep $M) >/dev/null 2>&1 & "
             "sleep $M",
             mark);
    const char *args[] = {"exec", "--local-dir", dir, "--no-isolation", "--", cmd, NULL};
    cli_proc cp;
    assert_int_equal(cli_run_start(args, NULL, &cp), 0);
    for (int i = 0; i < 1200 && count_marked(mark) < 3; i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(count_marked(mark), 3);
    assert_int_equal(kill(cp.pid, SIGKILL), 0);
    cli_result r;
    assert_int_equal(cli_run_finish(&cp, &r), 0);
    assert_int_equal(r.signal, SIGKILL);
    cli_result_free(&r);
    assert_true(none_within(mark, 10000));
    rm_rf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_backend_root_dir),
        cmocka_unit_test(t_cli_root_dir),
        cmocka_unit_test(t_cli_unisolated_leaves_nothing),
    };
    return par_run_group_tests_name("it_local_root", tests, NULL, NULL);
}
