/* Every command answers --help: the test reads the command table from
 * `ocisbx --help` (so a new command cannot miss it), runs `ocisbx X --help`
 * for each, then `ocisbx X Y --help` for every subcommand X's help lists;
 * each prints its usage on stdout, nothing on stderr, and exits 0. Also
 * --version, and --output table|json of a list against the emulator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli_run.h"
#include "emu_fixture.h"
#include "par_run.h"

static void expect_help(const char *const *args, const char *what)
{
    cli_result r;
    assert_int_equal(cli_run(args, NULL, NULL, &r), 0);
    if (r.status != 0 || !strstr(r.out, "usage") || r.err[0]) {
        fprintf(stderr, "%s --help: exit %d\nstdout: %s\nstderr: %s\n", what, r.status, r.out, r.err);
        fail();
    }
    cli_result_free(&r);
}

static void test_every_command_help(void **state)
{
    (void)state;
    cli_result top;
    CLI_RUN(&top, "--help");
    assert_int_equal(top.status, 0);
    const char *p = strstr(top.out, "commands:\n");
    assert_non_null(p);
    p += strlen("commands:\n");
    int ncmd = 0, nsub = 0;
    bool doctor = false;
    while (strncmp(p, "  ", 2) == 0) {
        char name[64];
        assert_int_equal(sscanf(p, " %63s", name), 1);
        doctor = doctor || strcmp(name, "doctor") == 0;
        const char *const a[] = {name, "--help", NULL};
        expect_help(a, name);
        ncmd++;
        /* the subcommands the command's help lists as "  ocisbx GROUP SUB ..." */
        cli_result r;
        assert_int_equal(cli_run(a, NULL, NULL, &r), 0);
        for (const char *l = r.out; (l = strstr(l, "\n  ocisbx ")) != NULL; l++) {
            char group[64], sub[64];
            if (sscanf(l, " ocisbx %63s %63s", group, sub) != 2 || sub[0] == '-' || sub[0] == '[' ||
                strcmp(sub, "SRC") == 0)
                continue;
            const char *const b[] = {group, sub, "--help", NULL};
            char what[140];
            snprintf(what, sizeof what, "%s %s", group, sub);
            expect_help(b, what);
            nsub++;
        }
        cli_result_free(&r);
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    fprintf(stderr, "%d commands, %d subcommands answered --help\n", ncmd, nsub);
    assert_true(ncmd >= 15);
    assert_true(nsub >= 20);
    assert_true(doctor);
    cli_result_free(&top);

    /* a subcommand's help of the legacy group too */
    const char *const legacy[] = {"snapshot", "list", "--help", NULL};
    expect_help(legacy, "snapshot list");
    const char *const ev[] = {"evidence", "verify", "--help", NULL};
    expect_help(ev, "evidence verify");
}

static void test_version(void **state)
{
    (void)state;
    cli_result r;
    CLI_RUN(&r, "--version");
    assert_int_equal(r.status, 0);
    char want[64];
    snprintf(want, sizeof want, "ocisbx %s\n", ocisbx_version());
    assert_string_equal(r.out, want);
    assert_string_equal(r.err, "");
    cli_result_free(&r);
}

/* The column of header word `h` in the first line of out. */
static long column_of(const char *out, const char *h)
{
    const char *at = strstr(out, h);
    const char *nl = strchr(out, '\n');
    return at && nl && at < nl ? at - out : -1;
}

static void test_output_table(void **state)
{
    (void)state;
    emu_fixture *emu = NULL;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    assert_int_equal(emu_fixture_start(&o, &emu), 0);
    char a[256], b[256];
    assert_int_equal(emu_fixture_new_sandbox(emu, NULL, "\"displayName\":\"first box\"", a, sizeof a), 0);
    assert_int_equal(emu_fixture_new_sandbox(emu, NULL, "\"displayName\":\"second\"", b, sizeof b), 0);
    const char *cfg = emu_fixture_config_path(emu), *url = emu_fixture_url(emu);

    cli_result r;
    CLI_RUN(&r, "--config-file", cfg, "--endpoint", url, "sandbox-collection", "list", "--project-id",
            EMU_FIXTURE_PROJECT, "--output", "table");
    fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.status, 0);
    assert_int_equal(strncmp(r.out, "ID ", 3), 0);
    long name_col = column_of(r.out, "DISPLAY NAME"), state_col = column_of(r.out, "STATE"),
         created_col = column_of(r.out, "CREATED");
    assert_true(name_col > 0 && state_col > name_col && created_col > state_col);
    int rows = 0;
    for (const char *l = strchr(r.out, '\n') + 1; *l; l = strchr(l, '\n') + 1) {
        size_t len = strcspn(l, "\n");
        assert_true(len > (size_t)created_col);
        assert_true(strncmp(l, a, strlen(a)) == 0 || strncmp(l, b, strlen(b)) == 0);
        assert_int_equal(strncmp(l + state_col, "RUNNING", 7), 0); /* aligned under STATE */
        assert_true(strncmp(l + name_col, "first box", 9) == 0 || strncmp(l + name_col, "second", 6) == 0);
        assert_true(l[created_col] >= '0' && l[created_col] <= '9'); /* a timestamp */
        rows++;
    }
    assert_int_equal(rows, 2);
    cli_result_free(&r);

    /* json: the default, the same as without --output */
    cli_result j, d;
    CLI_RUN(&j, "--config-file", cfg, "--endpoint", url, "sandbox-collection", "list", "--project-id",
            EMU_FIXTURE_PROJECT, "--output", "json");
    CLI_RUN(&d, "--config-file", cfg, "--endpoint", url, "sandbox-collection", "list", "--project-id",
            EMU_FIXTURE_PROJECT);
    assert_int_equal(j.status, 0);
    assert_non_null(strstr(j.out, "\"items\": ["));
    assert_string_equal(j.out, d.out);
    cli_result_free(&j);
    cli_result_free(&d);

    /* the other lists take it too; a bad value is a usage error */
    CLI_RUN(&r, "--config-file", cfg, "--endpoint", url, "sandbox-snapshot-collection", "list", "--project-id",
            EMU_FIXTURE_PROJECT, "--output", "table");
    assert_int_equal(r.status, 0);
    assert_int_equal(strncmp(r.out, "ID ", 3), 0);
    assert_non_null(strstr(r.out, "STATE"));
    cli_result_free(&r);
    CLI_RUN(&r, "--config-file", cfg, "--endpoint", url, "command", "list", "--sandbox-id", a, "--output", "table");
    assert_int_equal(r.status, 0);
    assert_int_equal(strncmp(r.out, "ID ", 3), 0);
    cli_result_free(&r);
    CLI_RUN(&r, "--config-file", cfg, "--endpoint", url, "sandbox-collection", "list", "--output", "yaml");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--output"));
    cli_result_free(&r);

    assert_int_equal(emu_fixture_stop(emu), 0);
    emu_fixture_free(emu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_command_help),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_output_table),
    };
    return par_run_group_tests_name("it_cli_help", tests, NULL, NULL);
}
