/* An interrupted download leaves nothing behind: `sandbox-file read
 * --local-file` cut by SIGINT or SIGTERM (an outside probe found 1 GB and
 * 4.7 GB temporary files left) removes its temporary file and leaves the
 * old file as it was. The server trickles a 1 GiB answer. */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bad_server.h"
#include "cli_run.h"
#include "test_keys.h"
#include "par_run.h"

static char dir[] = "/tmp/ocisbx-it-cli-download-XXXXXX";

/* Number of entries of d other than . and .., and whether one is a
 * temporary file of ours. */
static int entries(const char *d, int *temps)
{
    DIR *h = opendir(d);
    int n = 0;
    *temps = 0;
    struct dirent *e;
    while ((e = readdir(h))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        if (strstr(e->d_name, ".ocisbx-"))
            (*temps)++;
    }
    closedir(h);
    return n;
}

static void interrupted(int sig, int want_status)
{
    char out_dir[128], config[160], local[200], endpoint[64];
    snprintf(out_dir, sizeof out_dir, "%s/%d", dir, sig);
    assert_int_equal(mkdir(out_dir, 0700), 0);
    snprintf(config, sizeof config, "%s/config", dir);
    snprintf(local, sizeof local, "%s/kept.bin", out_dir);
    assert_int_equal(test_write_text(local, "the old content"), 0);
    bad_server *s = bad_server_start(BAD_TRICKLE);
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", bad_server_port(s));
    const char *const args[] = {"--config-file",
                                config,
                                "--profile",
                                "VECTOR",
                                "--endpoint",
                                endpoint,
                                "sandbox-file",
                                "read",
                                "--sandbox-id",
                                "sbx-aaaaaaaaaaaaaaaa",
                                "--sandbox-file-path",
                                "/workspace/big.bin",
                                "--local-file",
                                local,
                                NULL};
    cli_proc p;
    assert_int_equal(cli_run_start(args, NULL, &p), 0);
    /* wait until the temporary file is there and growing, then interrupt */
    int temps = 0;
    for (int i = 0; i < 3000 && !temps; i++) {
        entries(out_dir, &temps);
        if (!temps)
            usleep(10000);
    }
    assert_int_equal(temps, 1);
    usleep(200000);
    kill(p.pid, sig);
    cli_result r;
    assert_int_equal(cli_run_finish(&p, &r), 0);
    if (r.signal || r.status != want_status)
        fprintf(stderr, "exit %d (signal %d), stderr: %s\n", r.status, r.signal, r.err);
    assert_int_equal(r.signal, 0); /* a clean exit, not killed by the signal */
    assert_int_equal(r.status, want_status);
    cli_result_free(&r);
    bad_server_stop(s);
    assert_int_equal(entries(out_dir, &temps), 1);
    assert_int_equal(temps, 0);
    FILE *f = fopen(local, "rb");
    char buf[64] = "";
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "the old content");
}

static void sigint_leaves_nothing(void **state)
{
    (void)state;
    interrupted(SIGINT, 130);
}

static void sigterm_leaves_nothing(void **state)
{
    (void)state;
    interrupted(SIGTERM, 143);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (!mkdtemp(dir))
        return 1;
    char config[160];
    snprintf(config, sizeof config, "%s/config", dir);
    if (test_write_vector_config(config) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sigint_leaves_nothing),
        cmocka_unit_test(sigterm_leaves_nothing),
    };
    int rc = par_run_group_tests_name("it_cli_download", tests, NULL, NULL);
    test_rm_rf(dir);
    return rc;
}
