/* ocisbx-emulator's own command line: --version, --help describing every
 * option on a line of its own, bad options refused with status 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "ocisbx/common.h"
#include "par_run.h"

/* Runs the emulator with args (a shell-safe string), stdout and stderr
 * together into out; the exit status. */
static int run(const char *args, char *out, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", OCISBX_EMULATOR_PATH, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void test_version(void **state)
{
    (void)state;
    char out[256], want[128];
    assert_int_equal(run("--version", out, sizeof out), 0);
    snprintf(want, sizeof want, "ocisbx-emulator %s\n", ocisbx_version());
    assert_string_equal(out, want);
}

/* The option's own line in --help: indented, "-h, " allowed in front, the
 * name followed by a space (its argument or the description). */
static const char *option_line(const char *help, const char *name)
{
    size_t n = strlen(name);
    for (const char *l = help; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        if (strncmp(l, "  ", 2) != 0)
            continue;
        const char *p = l + strspn(l, " ");
        if (!strncmp(p, "-h, ", 4))
            p += 4;
        if (!strncmp(p, name, n) && p[n] == ' ')
            return p;
    }
    return NULL;
}

static void test_help_describes_every_option(void **state)
{
    (void)state;
    static char out[8192];
    assert_int_equal(run("--help", out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: ocisbx-emulator"));
    static const char *const opts[] = {"--config",       "--state-dir",    "--listen",    "--tls-cert", "--tls-key",
                                       "--api-version", "--no-isolation", "--version", "--help"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        const char *l = option_line(out, opts[i]);
        if (!l)
            fprintf(stderr, "--help has no line for %s:\n%s", opts[i], out);
        assert_non_null(l);
        /* a description follows on the same line */
        const char *eol = strchr(l, '\n');
        assert_non_null(eol);
        assert_true(eol - l > (ptrdiff_t)strlen(opts[i]) + 8);
    }
    char again[8192];
    assert_int_equal(run("-h", again, sizeof again), 0);
    assert_string_equal(again, out);
}

static void test_bad_options(void **state)
{
    (void)state;
    char out[1024];
    assert_int_equal(run("--bogus", out, sizeof out), 2);
    assert_non_null(strstr(out, "unknown option --bogus"));
    assert_int_equal(run("--config", out, sizeof out), 2);
    assert_non_null(strstr(out, "--config needs a value"));
    assert_int_equal(run("--config x.yaml", out, sizeof out), 2);
    assert_non_null(strstr(out, "--state-dir is required"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_help_describes_every_option),
        cmocka_unit_test(test_bad_options),
    };
    return par_run_group_tests_name("it_emulator_cli", tests, NULL, NULL);
}
