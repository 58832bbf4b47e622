/* ocisbx harness call (and exec) from outside, on a local directory and a
 * sandbox of the emulator:
 * - exec output past a NUL byte reaches stdout (U+FFFD), the evidence
 *   record counting what was printed;
 * - a real SIGINT during exec: the result is "canceled" (not a backend
 *   failure to retry), exit 130;
 * - the approval question escapes bidi controls (U+202E...) in the
 *   arguments and in the policy's reason;
 * - --secret-env NAME takes the value from the CLI's own environment (never
 *   on the command line), for harness call and exec; an unset NAME is a
 *   usage error showing neither name nor value. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "cli_run.h"
#include "cli_world.h"
#include "emu_fixture.h"
#include "test_keys.h"
#include "par_run.h"

typedef cli_world world;

/* argv of ocisbx [globals] <verb...> <backend> args (static storage). */
static const char *const *command_line(const world *w, const char *const *verb, const char *const *args)
{
    static const char *argv[64];
    int n = 0;
    if (w->emu) {
        argv[n++] = "--config-file";
        argv[n++] = emu_fixture_config_path(w->emu);
        argv[n++] = "--endpoint";
        argv[n++] = emu_fixture_url(w->emu);
    }
    for (const char *const *v = verb; *v; v++)
        argv[n++] = *v;
    argv[n++] = w->emu ? "--sandbox-id" : "--local-dir";
    argv[n++] = w->emu ? w->sandbox : w->dir;
    for (const char *const *a = args; *a && n < 63; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    return argv;
}

static const char *const harness_call[] = {"harness", "call", NULL};

static void run(const world *w, const char *const *verb, const char *const *args, cli_run_options *o, cli_result *r)
{
    if (cli_run_ex(command_line(w, verb, args), o, r) != 0)
        fail_msg("could not run the CLI");
}

static void expect_status(const cli_result *r, int want, const char *what)
{
    if (r->status != want)
        fail_msg("%s: exit %d (wanted %d)\nstdout: %s\nstderr: %s", what, r->status, want, r->out, r->err);
}

static cJSON *result(const cli_result *r)
{
    cJSON *j = cJSON_Parse(r->out);
    if (!cJSON_IsObject(j))
        fail_msg("not a JSON object: %s", r->out);
    return j;
}

static const char *str_at(const cJSON *j, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, a);
    return cJSON_GetStringValue(b ? cJSON_GetObjectItemCaseSensitive(x, b) : x);
}

static int setup_local(void **state)
{
    return cli_world_local("it_cli_hbytes", (cli_world **)state);
}

static int setup_oci(void **state)
{
    return cli_world_oci("it_cli_hbytes", (cli_world **)state);
}

static int teardown(void **state)
{
    return cli_world_free(*state);
}

/* exec: what follows the NUL is printed; the record counts the printed string. */
static void exec_past_a_nul(void **state)
{
    world *w = *state;
    char evidence[128];
    snprintf(evidence, sizeof evidence, "%s/nul.jsonl", w->scratch);
    unlink(evidence);
    const char *const args[] = {
        "--evidence", evidence, "exec", "{\"command\":\"printf 'before\\\\0after\\\\n'; echo more; exit 2\"}", NULL};
    cli_result r;
    run(w, harness_call, args, NULL, &r);
    expect_status(&r, 0, "exec past a NUL");
    cJSON *j = result(&r);
    assert_string_equal(str_at(j, "output", NULL), "before\xef\xbf\xbd"
                                                   "after\nmore\n");
    cJSON_Delete(j);
    cli_result_free(&r);
    FILE *f = fopen(evidence, "r");
    assert_non_null(f);
    char line[8192] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_non_null(strstr(line, "\"output_bytes\":18,"));
    assert_non_null(strstr(line, "\"returned_bytes\":20,"));
}

/* Waits (polling, generous deadline) until the workspace has the file. */
static void wait_for_file(const world *w, const char *name)
{
    for (int i = 0; i < 1200; i++) {
        char *b = cli_world_file(w, name);
        free(b);
        if (b)
            return;
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    fail_msg("the command never made %s", name);
}

/* A real SIGINT while exec runs: canceled, with no invitation to retry. */
static void ctrl_c_is_canceled(void **state)
{
    world *w = *state;
    const char *const args[] = {"exec", "{\"command\":\"echo a; touch cc-started; sleep 30; touch cc-finished\"}", NULL};
    cli_proc p;
    assert_int_equal(cli_run_start(command_line(w, harness_call, args), NULL, &p), 0);
    wait_for_file(w, "cc-started");
    assert_int_equal(kill(p.pid, SIGINT), 0);
    cli_result r;
    assert_int_equal(cli_run_finish(&p, &r), 0);
    expect_status(&r, 130, "interrupted exec");
    cJSON *j = result(&r);
    const char *code = str_at(j, "error", "code"), *m = str_at(j, "error", "message");
    if (!code || strcmp(code, "canceled") || !m)
        fail_msg("not the error canceled: %s", r.out);
    if (!strstr(m, "the user interrupted it") || strstr(m, "retry") || strstr(m, "unavailable"))
        fail_msg("message: %s", m);
    cJSON_Delete(j);
    assert_non_null(strstr(r.err, "interrupted (SIGINT)"));
    cli_result_free(&r);
}

/* The question escapes bidi controls in the arguments and in the reason. */
static void question_escapes_bidi(void **state)
{
    world *w = *state;
    char policy[128];
    snprintf(policy, sizeof policy, "%s/bidi.yaml", w->scratch);
    FILE *f = fopen(policy, "w");
    assert_non_null(f);
    fputs("rules:\n  - label: workspace.exec\n    decision: hold\n    reason: \"ok \xe2\x80\xae"
          "dlrow\xe2\x81\xa6 x\"\n",
          f);
    fclose(f);
    const char *const args[] = {
        "--policy", policy, "exec", "{\"command\": \"echo \\u202egnp.exe \\u2067x\\u200f \\u061c\"}", NULL};
    cli_run_options o = {0};
    o.tty = CLI_TTY_PTY;
    o.tty_prompt = "[y/N]";
    o.tty_answer = "n\n";
    o.timeout_s = 60;
    cli_result r;
    run(w, harness_call, args, &o, &r);
    expect_status(&r, 1, "refused");
    assert_non_null(strstr(o.tty_out, "\\u202egnp.exe \\u2067x\\u200f \\u061c"));
    assert_non_null(strstr(o.tty_out, "ok \\xe2\\x80\\xaedlrow\\xe2\\x81\\xa6 x"));
    static const char *const raw[] = {"\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x80\x8f", "\xd8\x9c"};
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++)
        if (strstr(o.tty_out, raw[i]))
            fail_msg("the terminal got bidi control %zu raw", i);
    free(o.tty_out);
    cli_result_free(&r);
}

/* --secret-env NAME: the value from the environment, redacted, on no
 * command line; exec too. Unset: exit 2, neither name nor value shown. */
static void secret_env_by_name(void **state)
{
    world *w = *state;
    static const char value[] = "env-only-secret-8c41d2";
    const char *const env[] = {"HFIX_TOKEN=env-only-secret-8c41d2", "HFIX_UNSET_NAME", NULL};
    cli_run_options o = {0};
    o.env = env;
    const char *const args[] = {
        "--secret-env", "HFIX_TOKEN", "exec", "{\"command\":\"echo $HFIX_TOKEN; printenv HFIX_TOKEN > se-t\"}", NULL};
    cli_result r;
    run(w, harness_call, args, &o, &r);
    expect_status(&r, 0, "harness call --secret-env NAME");
    cJSON *j = result(&r);
    assert_string_equal(str_at(j, "output", NULL), "[REDACTED]\n");
    cJSON_Delete(j);
    assert_null(strstr(r.err, value));
    cli_result_free(&r);
    char *t = cli_world_file(w, "se-t");
    assert_non_null(t);
    assert_string_equal(t, "env-only-secret-8c41d2\n");
    free(t);
    /* ocisbx exec: the same */
    static const char *const exec_verb[] = {"exec", NULL};
    const char *const eargs[] = {"--secret-env", "HFIX_TOKEN", "--", "echo \"<$HFIX_TOKEN>\"", NULL};
    run(w, exec_verb, eargs, &o, &r);
    expect_status(&r, 0, "exec --secret-env NAME");
    assert_string_equal(r.out, "<[REDACTED]>\n");
    cli_result_free(&r);
    /* unset */
    const char *const uargs[] = {"--secret-env", "HFIX_UNSET_NAME", "exec", "{\"command\":\"true\"}", NULL};
    run(w, harness_call, uargs, &o, &r);
    expect_status(&r, 2, "harness call --secret-env UNSET");
    assert_non_null(strstr(r.err, "--secret-env NAME takes the value of the variable NAME"));
    assert_non_null(strstr(r.err, "no such variable is set"));
    assert_null(strstr(r.err, "HFIX_UNSET_NAME"));
    assert_int_equal(r.out_len, 0);
    cli_result_free(&r);
    const char *const ueargs[] = {"--secret-env", "HFIX_UNSET_NAME", "--", "true", NULL};
    run(w, exec_verb, ueargs, &o, &r);
    expect_status(&r, 2, "exec --secret-env UNSET");
    assert_non_null(strstr(r.err, "no such variable is set"));
    assert_null(strstr(r.err, "HFIX_UNSET_NAME"));
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exec_past_a_nul),
        cmocka_unit_test(ctrl_c_is_canceled),
        cmocka_unit_test(question_escapes_bidi),
        cmocka_unit_test(secret_env_by_name),
    };
    int rc = par_run_group_tests_name("harness CLI bytes, local directory", tests, setup_local, teardown);
    rc |= par_run_group_tests_name("harness CLI bytes, emulator sandbox", tests, setup_oci, teardown);
    return rc;
}
