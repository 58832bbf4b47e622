/* The CLI's settings through the library's one resolver, against the
 * emulator: a session-token profile (what `oci session authenticate`
 * writes) works without --auth; the OCI CLI's variables (OCI_CLI_PROFILE,
 * OCI_CLI_CONFIG_FILE, OCI_CLI_REGION, OCI_CLI_AUTH) are honoured, flag >
 * variable > config file, and ours (OCI_SANDBOX_*) win over them; a wrong
 * profile from a variable fails naming the variable and the profile;
 * doctor says where each value came from; HOME unset gives the passwd
 * entry's ~/.oci/config; --help lists every setting of the table. */
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"
#include "emu_fixture.h"
#include "ocisbx/settings.h"
#include "par_run.h"

static emu_fixture *emu;

/* Every variable of the settings table cleared, then extra ones. */
static const char *const *env_with(const char *a, const char *b, const char *c)
{
    static char names[64][64];
    static const char *env[80];
    size_t n = 0;
    for (const ocisbx_setting *r = ocisbx_setting_next(NULL); r; r = ocisbx_setting_next(r))
        for (const char *const *e = r->env; *e && n < 60; e++) {
            snprintf(names[n], sizeof names[n], "%s=", *e);
            env[n] = names[n];
            n++;
        }
    const char *extra[] = {a, b, c};
    for (size_t i = 0; i < 3; i++)
        if (extra[i])
            env[n++] = extra[i];
    env[n] = NULL;
    return env;
}

static void run(cli_result *r, const char *const *args, const char *const *env)
{
    assert_int_equal(cli_run(args, NULL, env, r), 0);
    fprintf(stderr, "--- exit %d\n%s%s", r->status, r->out, r->err);
}

/* The line "setting NAME ..." of doctor's output, or NULL. */
static const char *setting_line(const char *out, const char *name, char *buf, size_t cap)
{
    char want[64];
    snprintf(want, sizeof want, "setting %s ", name);
    const char *at = strstr(out, want);
    if (!at)
        return NULL;
    const char *e = strchr(at, '\n');
    snprintf(buf, cap, "%.*s", (int)(e ? e - at : (long)strlen(at)), at);
    return buf;
}

static void assert_setting(const char *out, const char *name, const char *needle)
{
    char buf[1024];
    const char *l = setting_line(out, name, buf, sizeof buf);
    if (!l || !strstr(l, needle))
        fail_msg("setting %s: want '%s' in '%s'", name, needle, l ? l : "(no line)");
}

static int setup(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    return emu_fixture_start(&o, &emu);
}

static int teardown(void **state)
{
    (void)state;
    int rc = emu_fixture_stop(emu);
    emu_fixture_free(emu);
    return rc == 0 ? 0 : -1;
}

/* oci session authenticate's profile: security_token_file, no user. */
static void test_session_token_profile(void **state)
{
    (void)state;
    cli_result r;
    const char *const args[] = {"--config-file",       emu_fixture_config_path(emu),
                                "--profile",           "SESSION",
                                "--endpoint",          emu_fixture_url(emu),
                                "sandbox-collection",  "list",
                                "--project-id",        EMU_FIXTURE_PROJECT,
                                NULL};
    run(&r, args, env_with(NULL, NULL, NULL));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"items\""));
    cli_result_free(&r);
    /* --auth api_key says otherwise: the profile has no user for that */
    const char *const args2[] = {"--config-file", emu_fixture_config_path(emu), "--profile", "SESSION", "--auth",
                                 "api_key", "--endpoint", emu_fixture_url(emu), "sandbox-collection", "list",
                                 "--project-id", EMU_FIXTURE_PROJECT, NULL};
    run(&r, args2, env_with(NULL, NULL, NULL));
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "profile [SESSION]")); /* signed as api_key: refused */
    cli_result_free(&r);
    /* the same profile chosen by OCI_CLI_PROFILE, the file by OCI_CLI_CONFIG_FILE */
    char cfg_env[600];
    snprintf(cfg_env, sizeof cfg_env, "OCI_CLI_CONFIG_FILE=%s", emu_fixture_config_path(emu));
    const char *const args3[] = {"--endpoint", emu_fixture_url(emu), "sandbox-collection", "list", "--project-id",
                                 EMU_FIXTURE_PROJECT, NULL};
    run(&r, args3, env_with(cfg_env, "OCI_CLI_PROFILE=SESSION", NULL));
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
}

/* A wrong profile from a variable names the variable and the profile; ours
 * wins over the OCI CLI's; the flag over both. */
static void test_profile_variables(void **state)
{
    (void)state;
    cli_result r;
    const char *const args[] = {"--config-file", emu_fixture_config_path(emu), "--endpoint", emu_fixture_url(emu),
                                "sandbox-collection", "list", "--project-id", EMU_FIXTURE_PROJECT, NULL};
    run(&r, args, env_with("OCI_CLI_PROFILE=Nope", NULL, NULL));
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "OCI_CLI_PROFILE=Nope"));
    assert_non_null(strstr(r.err, "profile [Nope] not found"));
    assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1); /* one line */
    cli_result_free(&r);
    run(&r, args, env_with("OCI_SANDBOX_PROFILE=Wrong", NULL, NULL));
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "OCI_SANDBOX_PROFILE=Wrong"));
    cli_result_free(&r);
    /* ours (DEFAULT, right) wins over the OCI CLI's (wrong) */
    run(&r, args, env_with("OCI_CLI_PROFILE=Nope", "OCI_SANDBOX_PROFILE=DEFAULT", NULL));
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
    /* the flag wins over both */
    const char *const args2[] = {"--config-file", emu_fixture_config_path(emu), "--profile", "DEFAULT",
                                 "--endpoint",    emu_fixture_url(emu),         "sandbox-collection",
                                 "list",          "--project-id",               EMU_FIXTURE_PROJECT,
                                 NULL};
    run(&r, args2, env_with("OCI_CLI_PROFILE=Nope", "OCI_SANDBOX_PROFILE=Wrong", NULL));
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
    /* a wrong profile from the flag is the flag's fault, not that of the
     * variable that named the file */
    char cfg_var[600];
    snprintf(cfg_var, sizeof cfg_var, "OCI_CONFIG_FILE=%s", emu_fixture_config_path(emu));
    const char *const args3[] = {"--profile", "Nope", "--endpoint", emu_fixture_url(emu), "sandbox-collection",
                                 "list", "--project-id", EMU_FIXTURE_PROJECT, NULL};
    run(&r, args3, env_with(cfg_var, NULL, NULL));
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "profile=Nope"));
    assert_non_null(strstr(r.err, "profile [Nope] not found"));
    assert_null(strstr(r.err, "OCI_CONFIG_FILE"));
    cli_result_free(&r);
}

/* doctor: where each value came from (flag, variable, file, default). */
static void test_doctor_provenance(void **state)
{
    (void)state;
    cli_result r;
    const char *const args[] = {"--config-file", emu_fixture_config_path(emu), "--endpoint", emu_fixture_url(emu),
                                "doctor", NULL};
    run(&r, args, env_with("OCI_CLI_PROFILE=SESSION", "OCI_CLI_REGION=us-ashburn-1", NULL));
    assert_int_equal(r.status, 0);
    char want[700];
    snprintf(want, sizeof want, "setting config_file = %s (flag --config-file)", emu_fixture_config_path(emu));
    assert_setting(r.out, "config_file", want);
    assert_setting(r.out, "profile", "= SESSION (variable OCI_CLI_PROFILE)");
    snprintf(want, sizeof want, "= security_token (file %s [SESSION]: security_token_file)",
             emu_fixture_config_path(emu));
    assert_setting(r.out, "auth", want);
    assert_setting(r.out, "region", "= us-ashburn-1 (variable OCI_CLI_REGION)");
    assert_setting(r.out, "api_version", "= 20231130 (default)");
    assert_setting(r.out, "ca_bundle", "not set");
    assert_non_null(strstr(r.out, "ok   request:"));
    cli_result_free(&r);

    /* ours over the OCI CLI's region; the file's when neither; the endpoint
     * made from the region says so */
    const char *const args2[] = {"--config-file", emu_fixture_config_path(emu), "doctor", "--help", NULL};
    run(&r, args2, env_with(NULL, NULL, NULL));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "setting NAME = VALUE"));
    cli_result_free(&r);
    const char *const args3[] = {"--config-file", emu_fixture_config_path(emu), "--auth", "instance_principal",
                                 "--endpoint", emu_fixture_url(emu), "doctor", NULL};
    run(&r, args3, env_with("OCI_SANDBOX_REGION=eu-frankfurt-1", "OCI_CLI_REGION=us-ashburn-1", NULL));
    assert_setting(r.out, "region", "= eu-frankfurt-1 (variable OCI_SANDBOX_REGION)");
    assert_setting(r.out, "auth", "= instance_principal (flag --auth)");
    assert_non_null(strstr(r.out, "skip config: not used with --auth instance_principal"));
    cli_result_free(&r);
}

/* OCI_CLI_AUTH: a principal reads no config file; ours wins; a bad value
 * names the variable. */
static void test_auth_variables(void **state)
{
    (void)state;
    cli_result r;
    const char *const args[] = {"--config-file", emu_fixture_config_path(emu), "--endpoint", emu_fixture_url(emu),
                                "doctor", NULL};
    run(&r, args, env_with("OCI_CLI_AUTH=resource_principal", NULL, NULL));
    assert_setting(r.out, "auth", "= resource_principal (variable OCI_CLI_AUTH)");
    assert_non_null(strstr(r.out, "skip config: not used with --auth resource_principal"));
    cli_result_free(&r);
    run(&r, args, env_with("OCI_CLI_AUTH=resource_principal", "OCI_SANDBOX_AUTH=api_key", NULL));
    assert_int_equal(r.status, 0);
    assert_setting(r.out, "auth", "= api_key (variable OCI_SANDBOX_AUTH)");
    cli_result_free(&r);
    const char *const list[] = {"--config-file", emu_fixture_config_path(emu), "--endpoint", emu_fixture_url(emu),
                                "sandbox-collection", "list", "--project-id", EMU_FIXTURE_PROJECT, NULL};
    run(&r, list, env_with("OCI_CLI_AUTH=api-key", NULL, NULL));
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "OCI_CLI_AUTH=api-key: not one of api_key"));
    cli_result_free(&r);
    /* the flag over the variable */
    const char *const list2[] = {"--auth", "api_key", "--config-file", emu_fixture_config_path(emu), "--endpoint",
                                 emu_fixture_url(emu), "sandbox-collection", "list", "--project-id",
                                 EMU_FIXTURE_PROJECT, NULL};
    run(&r, list2, env_with("OCI_CLI_AUTH=instance_principal", NULL, NULL));
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
}

/* OCI_CLI_REGION reaches what the region is used for: the label of a
 * created sandbox (ours would win). */
static void test_region_variable(void **state)
{
    (void)state;
    cli_result r;
    const char *const args[] = {"--config-file", emu_fixture_config_path(emu), "--endpoint", emu_fixture_url(emu),
                                "create", "--project-id", EMU_FIXTURE_PROJECT, NULL};
    run(&r, args, env_with("OCI_CLI_REGION=us-ashburn-1", NULL, NULL));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"label\": \"oci-sandbox:us-ashburn-1/"));
    const char *id = strstr(r.out, "\"id\": \"");
    assert_non_null(id);
    char sid[128];
    snprintf(sid, sizeof sid, "%.*s", (int)strcspn(id + 7, "\""), id + 7);
    cli_result_free(&r);
    const char *const close[] = {"--config-file", emu_fixture_config_path(emu), "--endpoint", emu_fixture_url(emu),
                                 "close", "--sandbox-id", sid, NULL};
    run(&r, close, env_with(NULL, NULL, NULL));
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
}

/* The GetSandbox requests in a --debug run's stderr. */
static int count_gets(const char *err)
{
    int n = 0;
    for (const char *p = err; (p = strstr(p, "http: > GET ")) != NULL; p++) {
        const char *eol = strchr(p, '\n');
        const char *s = strstr(p, "/sandboxes/");
        n += s && (!eol || s < eol);
    }
    return n;
}

/* create and close against f (a create takes 0.6 s, a stop 0.3 s) with the
 * extra arguments and environment: the GETs of each. */
static void create_close(emu_fixture *f, const char *flag, const char *value, const char *const *env, int *gets)
{
    cli_result r;
    const char *const create[] = {
        "--debug", "--config-file", emu_fixture_config_path(f), "--endpoint", emu_fixture_url(f),
        "create",  "--project-id",  EMU_FIXTURE_PROJECT,        flag,         value,
        NULL};
    assert_int_equal(cli_run(create, NULL, env, &r), 0);
    if (r.status != 0)
        fail_msg("create: exit %d: %s", r.status, r.err);
    gets[0] = count_gets(r.err);
    const char *id = strstr(r.out, "\"id\": \"");
    assert_non_null(id);
    char sid[128];
    snprintf(sid, sizeof sid, "%.*s", (int)strcspn(id + 7, "\""), id + 7);
    cli_result_free(&r);
    const char *const close[] = {"--debug",
                                 "--config-file",
                                 emu_fixture_config_path(f),
                                 "--endpoint",
                                 emu_fixture_url(f),
                                 "close",
                                 "--sandbox-id",
                                 sid,
                                 flag,
                                 value,
                                 NULL};
    assert_int_equal(cli_run(close, NULL, env, &r), 0);
    if (r.status != 0)
        fail_msg("close: exit %d: %s", r.status, r.err);
    gets[1] = count_gets(r.err);
    cli_result_free(&r);
    fprintf(stderr, "create: %d GETs, close: %d GETs\n", gets[0], gets[1]);
}

static emu_fixture *slow_emulator(void)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 600\n  stop_delay_ms: 300\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    return f;
}

/* --poll-interval of create and close (decimal seconds: at 0.1 a create
 * of 0.6 s polls about six times, where the default 2 s polls twice); a bad
 * value is a usage error naming the option; doctor shows the default. */
static void test_poll_interval_option(void **state)
{
    (void)state;
    emu_fixture *f = slow_emulator();
    int gets[2];
    create_close(f, "--poll-interval", "0.1", env_with(NULL, NULL, NULL), gets);
    if (gets[0] < 4 || gets[1] < 3)
        fail_msg("--poll-interval 0.1: create %d GETs, close %d", gets[0], gets[1]);
    static const char *const bad[] = {"0", "abc", "3601", "0.001"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cli_result r;
        const char *const create[] = {"--config-file",
                                      emu_fixture_config_path(f),
                                      "--endpoint",
                                      emu_fixture_url(f),
                                      "create",
                                      "--project-id",
                                      EMU_FIXTURE_PROJECT,
                                      "--poll-interval",
                                      bad[i],
                                      NULL};
        const char *const close[] = {"--config-file", emu_fixture_config_path(f),
                                     "--endpoint",    emu_fixture_url(f),
                                     "close",         "--sandbox-id",
                                     "sbx-none",      "--poll-interval",
                                     bad[i],          NULL};
        char want[128];
        snprintf(want, sizeof want, "--poll-interval %s: not a number of seconds from 0.01 to 3600", bad[i]);
        run(&r, create, env_with(NULL, NULL, NULL));
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, want));
        cli_result_free(&r);
        run(&r, close, env_with(NULL, NULL, NULL));
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, want));
        cli_result_free(&r);
    }
    cli_result r;
    const char *const doctor[] = {
        "--config-file", emu_fixture_config_path(f), "--endpoint", emu_fixture_url(f), "doctor", NULL};
    run(&r, doctor, env_with(NULL, NULL, NULL));
    assert_setting(r.out, "poll_interval", "= 2 (default)");
    cli_result_free(&r);
    emu_fixture_free(f);
}

/* OCI_SANDBOX_POLL_INTERVAL: create, close and the API's waits use it,
 * doctor names it, the flag wins over it, a bad value names it. */
static void test_poll_interval_variable(void **state)
{
    (void)state;
    emu_fixture *f = slow_emulator();
    int gets[2];
    create_close(f, NULL, NULL, env_with("OCI_SANDBOX_POLL_INTERVAL=0.1", NULL, NULL), gets);
    if (gets[0] < 4 || gets[1] < 3)
        fail_msg("OCI_SANDBOX_POLL_INTERVAL=0.1: create %d GETs, close %d", gets[0], gets[1]);
    create_close(f, "--poll-interval", "0.1", env_with("OCI_SANDBOX_POLL_INTERVAL=soon", NULL, NULL), gets);
    cli_result r;
    const char *const doctor[] = {
        "--config-file", emu_fixture_config_path(f), "--endpoint", emu_fixture_url(f), "doctor", NULL};
    run(&r, doctor, env_with("OCI_SANDBOX_POLL_INTERVAL=0.1", NULL, NULL));
    assert_setting(r.out, "poll_interval", "= 0.1 (variable OCI_SANDBOX_POLL_INTERVAL)");
    assert_null(strstr(r.out, "FAIL poll_interval"));
    cli_result_free(&r);
    const char *want = "OCI_SANDBOX_POLL_INTERVAL soon: not a number of seconds from 0.01 to 3600";
    /* doctor fails on a bad value, naming the variable and the value */
    run(&r, doctor, env_with("OCI_SANDBOX_POLL_INTERVAL=soon", NULL, NULL));
    assert_int_equal(r.status, 1);
    char line[160];
    snprintf(line, sizeof line, "FAIL poll_interval: %s", want);
    if (!strstr(r.out, line))
        fail_msg("doctor with OCI_SANDBOX_POLL_INTERVAL=soon: no \"%s\" in:\n%s", line, r.out);
    cli_result_free(&r);
    const char *const create[] = {
        "--config-file", emu_fixture_config_path(f), "--endpoint", emu_fixture_url(f), "create",
        "--project-id",  EMU_FIXTURE_PROJECT,        NULL};
    run(&r, create, env_with("OCI_SANDBOX_POLL_INTERVAL=soon", NULL, NULL));
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, want));
    cli_result_free(&r);
    const char *const get[] = {"--config-file",
                               emu_fixture_config_path(f),
                               "--endpoint",
                               emu_fixture_url(f),
                               "sandbox",
                               "stop",
                               "--sandbox-id",
                               "sbx-none",
                               "--wait-for-state",
                               "STOPPED",
                               NULL};
    run(&r, get, env_with("OCI_SANDBOX_POLL_INTERVAL=soon", NULL, NULL));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, want));
    cli_result_free(&r);
    emu_fixture_free(f);
}

/* HOME unset or empty: one rule, the passwd entry's home. */
static void test_home_unset(void **state)
{
    (void)state;
    struct passwd *pw = getpwuid(getuid());
    assert_non_null(pw);
    char want[600];
    snprintf(want, sizeof want, "setting config_file = %s/.oci/config (default)", pw->pw_dir);
    cli_result r;
    const char *const args[] = {"--endpoint", emu_fixture_url(emu), "--connection-timeout", "2", "doctor", NULL};
    run(&r, args, env_with("HOME=", NULL, NULL));
    assert_setting(r.out, "config_file", want);
    cli_result_free(&r);
}

/* --help: every client setting of the table with each of its variables. */
static void test_help_from_table(void **state)
{
    (void)state;
    cli_result r;
    const char *const args[] = {"--help", NULL};
    run(&r, args, NULL);
    assert_int_equal(r.status, 0);
    for (const ocisbx_setting *s = ocisbx_setting_next(NULL); s; s = ocisbx_setting_next(s)) {
        if (!(s->flags & OCISBX_SETTING_CLIENT))
            continue;
        char opt[96];
        snprintf(opt, sizeof opt, "%s %s", s->option, s->value_name);
        if (!strstr(r.out, opt) || !strstr(r.out, s->help))
            fail_msg("--help lacks %s or its help", opt);
        for (const char *const *e = s->env; *e; e++) {
            char var[96];
            snprintf(var, sizeof var, "$%s", *e);
            if (!strstr(r.out, var))
                fail_msg("--help lacks %s", var);
        }
    }
    assert_non_null(strstr(r.out, "OCI_SANDBOX_ variable wins over the OCI CLI's"));
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_token_profile),  cmocka_unit_test(test_profile_variables),
        cmocka_unit_test(test_doctor_provenance),      cmocka_unit_test(test_auth_variables),
        cmocka_unit_test(test_region_variable),        cmocka_unit_test(test_home_unset),
        cmocka_unit_test(test_help_from_table),        cmocka_unit_test(test_poll_interval_option),
        cmocka_unit_test(test_poll_interval_variable),
    };
    return par_run_group_tests_name("it_cli_settings", tests, setup, teardown);
}
