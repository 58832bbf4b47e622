/* ocisbx harness tools | prompt | call, checked from outside: the tool list
 * in three formats, the prompt, and calls against a sandbox of the emulator
 * (--sandbox-id) and a local directory (--local-dir): exit statuses 0/1/2,
 * the gate (--deny, a policy file, --require-person without a terminal and
 * on a pseudo-terminal, approved and refused), evidence that verifies, and a
 * planted secret that reaches the command but no byte of what is printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "cli_run.h"
#include "cli_world.h"
#include "emu_fixture.h"
#include "test_keys.h"
#include "par_run.h"

typedef cli_world world;

/* Runs ocisbx [globals] harness call <backend> <args...> with o's terminal. */
static void harness_run(const world *w, bool call, const char *const *args, cli_run_options *o, cli_result *r)
{
    const char *argv[64];
    int n = 0;
    if (w->emu) {
        argv[n++] = "--config-file";
        argv[n++] = emu_fixture_config_path(w->emu);
        argv[n++] = "--endpoint";
        argv[n++] = emu_fixture_url(w->emu);
    }
    argv[n++] = "harness";
    argv[n++] = call ? "call" : "prompt";
    argv[n++] = w->emu ? "--sandbox-id" : "--local-dir";
    argv[n++] = w->emu ? w->sandbox : w->dir;
    for (const char *const *a = args; *a && n < 63; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    if (cli_run_ex(argv, o, r) != 0)
        fail_msg("could not run the CLI");
}

#define CALL(w, r, ...)                                       \
    do {                                                      \
        const char *const call_args_[] = {__VA_ARGS__, NULL}; \
        harness_run((w), true, call_args_, NULL, (r));        \
    } while (0)

static void expect_status(const cli_result *r, int want, const char *what)
{
    if (r->status != want)
        fail_msg("%s: exit %d (wanted %d)\nstdout: %s\nstderr: %s", what, r->status, want, r->out, r->err);
}

/* The result line: one JSON object and a newline. */
static cJSON *result(const cli_result *r)
{
    assert_true(r->out_len > 0);
    assert_int_equal(r->out[r->out_len - 1], '\n');
    assert_null(memchr(r->out, '\n', r->out_len - 1));
    cJSON *j = cJSON_Parse(r->out);
    if (!cJSON_IsObject(j))
        fail_msg("not a JSON object: %s", r->out);
    return j;
}

static const char *error_code(const cJSON *j)
{
    return cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "error"), "code"));
}

static const char *error_message(const cJSON *j)
{
    return cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "error"), "message"));
}

static int setup_local(void **state)
{
    return cli_world_local("it_cli_harness", (cli_world **)state);
}

static int setup_oci(void **state)
{
    return cli_world_oci("it_cli_harness", (cli_world **)state);
}

static int teardown(void **state)
{
    world *w = *state;
    int rc = 0;
    if (w->emu) {
        /* the CLI connected only: the sandbox is still there */
        cJSON *j = NULL;
        char path[256];
        snprintf(path, sizeof path, "/sandboxes/%s", w->sandbox);
        if (emu_fixture_json(w->emu, "GET", path, NULL, 200, &j) != 0 ||
            strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "lifecycleState")), "RUNNING") != 0)
            rc = -1;
        cJSON_Delete(j);
    }
    return cli_world_free(w) ? -1 : rc;
}

/* ---- without a backend ---------------------------------------------------------- */
static void tools_formats(void **state)
{
    (void)state;
    static const char *const names[] = {"read", "write", "edit", "search",     "glob",
                                        "ls",   "exec",  "job",  "apply_patch"};
    static const char *const formats[] = {NULL, "openai", "anthropic"};
    for (size_t f = 0; f < 3; f++) {
        cli_result r;
        if (formats[f])
            CLI_RUN(&r, "harness", "tools", "--format", formats[f]);
        else
            CLI_RUN(&r, "harness", "tools");
        expect_status(&r, 0, formats[f] ? formats[f] : "ours");
        cJSON *j = cJSON_Parse(r.out);
        assert_true(cJSON_IsArray(j));
        assert_int_equal(cJSON_GetArraySize(j), 9);
        for (int i = 0; i < 9; i++) {
            const cJSON *t = cJSON_GetArrayItem(j, i), *fn = t;
            if (f == 1) {
                assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "type")), "function");
                fn = cJSON_GetObjectItemCaseSensitive(t, "function");
            }
            assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fn, "name")), names[i]);
            assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fn, "description")));
            const cJSON *schema = cJSON_GetObjectItemCaseSensitive(fn, f == 2 ? "input_schema" : "parameters");
            assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(schema, "type")), "object");
            const cJSON *label = cJSON_GetObjectItemCaseSensitive(fn, "label");
            if (f == 0)
                assert_non_null(strstr(cJSON_GetStringValue(label), "workspace."));
            else
                assert_null(label);
        }
        cJSON_Delete(j);
        cli_result_free(&r);
    }
    cli_result r;
    CLI_RUN(&r, "harness", "tools", "--format", "gemini");
    expect_status(&r, 2, "unknown format");
    assert_non_null(strstr(r.err, "gemini"));
    cli_result_free(&r);
}

static void help_texts(void **state)
{
    (void)state;
    cli_result r;
    CLI_RUN(&r, "--help");
    expect_status(&r, 0, "ocisbx --help");
    assert_non_null(strstr(r.out, "harness "));
    cli_result_free(&r);
    static const char *const subs[] = {"tools", "prompt", "call"};
    for (int i = 0; i < 3; i++) {
        CLI_RUN(&r, "harness", subs[i], "--help");
        expect_status(&r, 0, subs[i]);
        char want[64];
        snprintf(want, sizeof want, "usage: ocisbx harness %s", subs[i]);
        assert_non_null(strstr(r.out, want));
        cli_result_free(&r);
    }
    CLI_RUN(&r, "harness", "--help");
    expect_status(&r, 0, "harness --help");
    assert_non_null(strstr(r.out, "tools"));
    assert_non_null(strstr(r.out, "prompt"));
    assert_non_null(strstr(r.out, "call"));
    cli_result_free(&r);
    CLI_RUN(&r, "harness");
    expect_status(&r, 2, "harness alone");
    cli_result_free(&r);
    CLI_RUN(&r, "harness", "run");
    expect_status(&r, 2, "harness run");
    cli_result_free(&r);
}

/* ---- against a backend (both) -------------------------------------------------------- */
static void prompt_names_workspace(void **state)
{
    world *w = *state;
    cli_result r;
    const char *const none[] = {NULL};
    harness_run(w, false, none, NULL, &r);
    expect_status(&r, 0, "prompt");
    assert_non_null(strstr(r.out, "/workspace"));
    assert_non_null(strstr(r.out, w->emu ? "oci-sandbox:" : "local:"));
    cli_result_free(&r);
}

static void write_read_and_statuses(void **state)
{
    world *w = *state;
    cli_result r;
    if (!w->emu) {
        /* a host shell with nothing to decide the calls: the library's warning
         * shows. Its own directory: as root, a host shell's .ocisbx/ would be
         * root's, and the isolated runs (nobody) could not use it. */
        CLI_RUN(&r, "harness", "call", "--local-dir", w->scratch, "--no-isolation", "ls",
                "{\"path\": \"/workspace\"}");
        expect_status(&r, 0, "host shell");
        assert_non_null(strstr(r.err, "no isolation"));
        cli_result_free(&r);
        CLI_RUN(&r, "harness", "call", "--local-dir", w->scratch, "--no-isolation", "--deny", "workspace.exec", "ls",
                "{\"path\": \"/workspace\"}");
        expect_status(&r, 0, "host shell, gated");
        assert_null(strstr(r.err, "no isolation"));
        cli_result_free(&r);
    } else {
        CALL(w, &r, "--no-isolation", "ls", "{\"path\": \"/workspace\"}");
        expect_status(&r, 2, "--no-isolation with a sandbox");
        cli_result_free(&r);
    }
    CALL(w, &r, "write", "{\"path\": \"notes/a.txt\", \"content\": \"one\\ntwo\\n\"}");
    expect_status(&r, 0, "write");
    cJSON *j = result(&r);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "path")), "/workspace/notes/a.txt");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "bytes")->valueint, 8);
    cJSON_Delete(j);
    cli_result_free(&r);
    CALL(w, &r, "read", "{\"path\": \"/workspace/notes/a.txt\"}");
    expect_status(&r, 0, "read");
    j = result(&r);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "content")),
                        "     1\tone\n     2\ttwo\n");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "total_lines")->valueint, 2);
    cJSON_Delete(j);
    cli_result_free(&r);
    char *bytes = cli_world_file(w, "notes/a.txt");
    assert_non_null(bytes);
    assert_string_equal(bytes, "one\ntwo\n");
    free(bytes);

    /* a tool error: 1, the result says why */
    CALL(w, &r, "read", "{\"path\": \"/workspace/notes/missing.txt\"}");
    expect_status(&r, 1, "read missing");
    j = result(&r);
    assert_string_equal(error_code(j), "not_found");
    cJSON_Delete(j);
    cli_result_free(&r);
    CALL(w, &r, "read", "{\"path\": 7}");
    expect_status(&r, 1, "schema");
    j = result(&r);
    assert_string_equal(error_code(j), "invalid_arguments");
    assert_non_null(strstr(error_message(j), "\"path\""));
    cJSON_Delete(j);
    cli_result_free(&r);
    CALL(w, &r, "read", "{not json");
    expect_status(&r, 1, "not JSON");
    j = result(&r);
    assert_string_equal(error_code(j), "invalid_arguments");
    cJSON_Delete(j);
    cli_result_free(&r);
    /* a \u0000 would cut the content short: refused, nothing written */
    CALL(w, &r, "write", "{\"path\": \"nul.txt\", \"content\": \"a\\u0000b\"}");
    expect_status(&r, 1, "NUL in the arguments");
    j = result(&r);
    assert_string_equal(error_code(j), "invalid_arguments");
    assert_non_null(strstr(error_message(j), "NUL"));
    cJSON_Delete(j);
    cli_result_free(&r);
    assert_null(cli_world_file(w, "nul.txt"));
    CALL(w, &r, "fetch", "{}");
    expect_status(&r, 1, "unknown tool");
    j = result(&r);
    assert_string_equal(error_code(j), "invalid_arguments");
    cJSON_Delete(j);
    cli_result_free(&r);
    CALL(w, &r, "read", "{\"path\": \"../../outside.txt\"}");
    expect_status(&r, 1, "outside");
    j = result(&r);
    assert_string_equal(error_code(j), "outside_workspace");
    cJSON_Delete(j);
    cli_result_free(&r);

    /* the command line: 2, nothing on stdout */
    CALL(w, &r, "read");
    expect_status(&r, 2, "no ARGS_JSON");
    assert_int_equal(r.out_len, 0);
    assert_non_null(strstr(r.err, "ARGS_JSON"));
    cli_result_free(&r);
    const char *const bare[] = {NULL};
    harness_run(w, true, bare, NULL, &r);
    expect_status(&r, 2, "no TOOL");
    assert_non_null(strstr(r.err, "TOOL"));
    cli_result_free(&r);
    CALL(w, &r, "--frobnicate", "read", "{\"path\": \"a\"}");
    expect_status(&r, 2, "unknown option");
    assert_non_null(strstr(r.err, "--frobnicate"));
    assert_int_equal(r.out_len, 0);
    cli_result_free(&r);
    CALL(w, &r, "--env", "NOEQUALS", "ls", "{\"path\": \"/workspace\"}");
    expect_status(&r, 2, "bad --env");
    cli_result_free(&r);
    CLI_RUN(&r, "harness", "call", "--local-dir", "/tmp", "--sandbox-id", "x", "ls", "{}");
    expect_status(&r, 2, "both backends");
    cli_result_free(&r);

    /* a bad policy file: 2, naming file, line and key */
    char policy[128];
    snprintf(policy, sizeof policy, "%s/bad.yaml", w->scratch);
    FILE *f = fopen(policy, "w");
    fputs("rules:\n  - label: workspace.exec\n    comand: ls\n    decision: deny\n", f);
    fclose(f);
    CALL(w, &r, "--policy", policy, "ls", "{\"path\": \"/workspace\"}");
    expect_status(&r, 2, "bad policy");
    assert_non_null(strstr(r.err, policy));
    assert_non_null(strstr(r.err, ":3"));
    assert_non_null(strstr(r.err, "comand"));
    assert_int_equal(r.out_len, 0);
    cli_result_free(&r);

    /* a mistyped label must not turn the gate off: refused (2), nothing run */
    CALL(w, &r, "--require-person", "workspace.exce", "exec", "{\"command\": \"touch typo-marker\"}");
    expect_status(&r, 2, "mistyped --require-person");
    assert_non_null(strstr(r.err, "\"workspace.exce\""));
    assert_non_null(strstr(r.err, "workspace.read, workspace.write, workspace.exec"));
    assert_int_equal(r.out_len, 0);
    cli_result_free(&r);
    CALL(w, &r, "--deny", "workspace.exce", "exec", "{\"command\": \"touch typo-marker\"}");
    expect_status(&r, 2, "mistyped --deny");
    assert_non_null(strstr(r.err, "\"workspace.exce\""));
    cli_result_free(&r);
    char *tm = cli_world_file(w, "typo-marker");
    assert_null(tm);
    f = fopen(policy, "w");
    fputs("rules:\n  - label: workspace.exce\n    decision: hold\n", f);
    fclose(f);
    CALL(w, &r, "--policy", policy, "exec", "{\"command\": \"touch typo-marker\"}");
    expect_status(&r, 2, "policy with a mistyped label");
    assert_non_null(strstr(r.err, policy));
    assert_non_null(strstr(r.err, ":2: rules[0].label: \"workspace.exce\" matches no action label"));
    cli_result_free(&r);
    f = fopen(policy, "w");
    fputs("rules:\n  - label: \"*\"\n    tool: exce\n    decision: deny\n", f);
    fclose(f);
    CALL(w, &r, "--policy", policy, "exec", "{\"command\": \"touch typo-marker\"}");
    expect_status(&r, 2, "policy with a mistyped tool");
    assert_non_null(strstr(r.err, ":3: rules[0].tool: \"exce\" matches no tool name"));
    cli_result_free(&r);
    tm = cli_world_file(w, "typo-marker");
    assert_null(tm);

    /* --secret-env without "=" and no such variable: names --secret-env,
     * never shows the argument (it may be a value) */
    CALL(w, &r, "--secret-env", "TOKVALUE42", "ls", "{\"path\": \"/workspace\"}");
    expect_status(&r, 2, "bad --secret-env");
    assert_non_null(strstr(r.err, "--secret-env NAME takes the value of the variable NAME"));
    assert_null(strstr(r.err, "TOKVALUE42"));
    cli_result_free(&r);
}

/* exec touching a marker, gated: denied, and the marker never made. */
static void deny_and_policy(void **state)
{
    world *w = *state;
    cli_result r;
    CALL(w, &r, "--deny", "workspace.exec", "exec", "{\"command\": \"touch denied-marker\"}");
    expect_status(&r, 1, "--deny exec");
    cJSON *j = result(&r);
    assert_string_equal(error_code(j), "denied");
    cJSON_Delete(j);
    cli_result_free(&r);
    char *m = cli_world_file(w, "denied-marker");
    assert_null(m);
    /* reads are still allowed */
    CALL(w, &r, "--deny", "workspace.exec", "ls", "{\"path\": \"/workspace\"}");
    expect_status(&r, 0, "--deny exec, ls");
    cli_result_free(&r);

    char policy[128];
    snprintf(policy, sizeof policy, "%s/policy.yaml", w->scratch);
    FILE *f = fopen(policy, "w");
    fputs("rules:\n"
          "  - label: workspace.exec\n"
          "    command: \"^echo( |$)\"\n"
          "    decision: allow\n"
          "  - label: workspace.exec\n"
          "    decision: deny\n"
          "    reason: only echo runs here, ask for more\n"
          "default: allow\n",
          f);
    fclose(f);
    CALL(w, &r, "--policy", policy, "exec", "{\"command\": \"touch policy-marker\"}");
    expect_status(&r, 1, "policy deny");
    j = result(&r);
    assert_string_equal(error_code(j), "denied");
    assert_non_null(strstr(error_message(j), "only echo runs here, ask for more"));
    cJSON_Delete(j);
    cli_result_free(&r);
    m = cli_world_file(w, "policy-marker");
    assert_null(m);
    CALL(w, &r, "--policy", policy, "exec", "{\"command\": \"echo allowed\"}");
    expect_status(&r, 0, "policy allow");
    j = result(&r);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "output")), "allowed\n");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "exit_code")->valueint, 0);
    cJSON_Delete(j);
    cli_result_free(&r);
}

static void require_person_without_terminal(void **state)
{
    world *w = *state;
    cli_result r;
    cli_run_options o = {0};
    o.tty = CLI_TTY_NONE;
    o.stdin_data = "y\n"; /* stdin is data, never the person's answer */
    const char *const args[] = {"--require-person", "workspace.exec", "exec", "{\"command\": \"touch tty-marker\"}",
                                NULL};
    harness_run(w, true, args, &o, &r);
    expect_status(&r, 1, "no terminal");
    cJSON *j = result(&r);
    assert_string_equal(error_code(j), "denied");
    assert_non_null(strstr(error_message(j), "no terminal was available to ask a person"));
    cJSON_Delete(j);
    cli_result_free(&r);
    char *m = cli_world_file(w, "tty-marker");
    assert_null(m);
}

static void require_person_on_a_terminal(void **state)
{
    world *w = *state;
    static const struct {
        const char *answer, *marker;
        int status;
    } cases[] = {{"y\n", "yes-marker", 0}, {"n\n", "no-marker", 1}, {"\n", "empty-marker", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* the model typed a secret's value: the person is not shown it either */
        char args_json[200];
        snprintf(args_json, sizeof args_json, "{\"command\": \"echo ran; touch %s # pty-secret-31337\"}",
                 cases[i].marker);
        const char *const args[] = {
            "--require-person", "workspace.exec", "--secret-env", "S=pty-secret-31337", "exec", args_json, NULL};
        cli_run_options o = {0};
        o.tty = CLI_TTY_PTY;
        o.tty_prompt = "[y/N]";
        o.tty_answer = cases[i].answer;
        o.timeout_s = 60;
        cli_result r;
        harness_run(w, true, args, &o, &r);
        expect_status(&r, cases[i].status, cases[i].answer);
        /* the question showed the tool, the label and the arguments */
        assert_non_null(strstr(o.tty_out, "exec"));
        assert_non_null(strstr(o.tty_out, "workspace.exec"));
        assert_non_null(strstr(o.tty_out, cases[i].marker));
        assert_non_null(strstr(o.tty_out, "[y/N]"));
        assert_null(strstr(o.tty_out, "pty-secret-31337"));
        assert_non_null(strstr(o.tty_out, "[REDACTED]"));
        cJSON *j = result(&r);
        char *m = cli_world_file(w, cases[i].marker);
        if (cases[i].status == 0) {
            assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "output")), "ran\n");
            assert_non_null(m);
        } else {
            assert_string_equal(error_code(j), "denied");
            assert_non_null(strstr(error_message(j), "refused by a person"));
            assert_null(m);
        }
        free(m);
        cJSON_Delete(j);
        free(o.tty_out);
        cli_result_free(&r);
    }
}

/* The question on the terminal has no raw control character: C1 (CSI)
 * escaped in the arguments as C0 (ESC) is (issue 20, item 10). */
static void question_escapes_controls(void **state)
{
    world *w = *state;
    const char *const args[] = {"--require-person", "workspace.exec", "exec",
                                "{\"command\": \"echo \\u009b2J \\u001b[2J\"}", NULL};
    cli_run_options o = {0};
    o.tty = CLI_TTY_PTY;
    o.tty_prompt = "[y/N]";
    o.tty_answer = "n\n";
    o.timeout_s = 60;
    cli_result r;
    harness_run(w, true, args, &o, &r);
    expect_status(&r, 1, "refused");
    assert_non_null(strstr(o.tty_out, "\\u009b2J"));
    assert_non_null(strstr(o.tty_out, "\\u001b[2J"));
    assert_null(strstr(o.tty_out, "\xc2\x9b"));
    assert_null(strchr(o.tty_out, 0x1b));
    free(o.tty_out);
    cli_result_free(&r);
}

static bool has_bytes(const char *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(hay + i, needle, k))
            return true;
    return false;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *b = calloc(1, 1 << 20);
    *len = fread(b, 1, (1 << 20) - 1, f);
    fclose(f);
    return b;
}

static void secret_and_evidence(void **state)
{
    world *w = *state;
    char secret[64], env[96], evidence[128];
    FILE *rnd = fopen("/dev/urandom", "rb");
    unsigned char raw[12];
    assert_int_equal(fread(raw, 1, sizeof raw, rnd), sizeof raw);
    fclose(rnd);
    int n = snprintf(secret, sizeof secret, "tok");
    for (size_t i = 0; i < sizeof raw; i++)
        n += snprintf(secret + n, sizeof secret - (size_t)n, "%02x", raw[i]);
    snprintf(env, sizeof env, "TOKEN=%s", secret);
    snprintf(evidence, sizeof evidence, "%s/evidence.jsonl", w->scratch);
    unlink(evidence);
    cli_result r;
    /* --debug is global: before harness, or here after it */
    CALL(w, &r, "--debug", "--secret-env", env, "--env", "PLAIN=visible", "--evidence", evidence, "exec",
         "{\"command\": \"echo $TOKEN $PLAIN; printenv TOKEN > /workspace/t\"}");
    expect_status(&r, 0, "exec with a secret");
    assert_false(has_bytes(r.out, r.out_len, secret));
    assert_false(has_bytes(r.err, strlen(r.err), secret));
    assert_non_null(strstr(r.err, "[debug]")); /* the debug log was on */
    cJSON *j = result(&r);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "output")), "[REDACTED] visible\n");
    cJSON_Delete(j);
    cli_result_free(&r);
    /* it did reach the command */
    char *t = cli_world_file(w, "t");
    assert_non_null(t);
    char want[80];
    snprintf(want, sizeof want, "%s\n", secret);
    assert_string_equal(t, want);
    free(t);
    /* a denied call: a second record, the chain continued */
    CALL(w, &r, "--debug", "--secret-env", env, "--deny", "workspace.*", "--evidence", evidence, "read",
         "{\"path\": \"t\"}");
    expect_status(&r, 1, "denied read");
    assert_false(has_bytes(r.out, r.out_len, secret));
    assert_false(has_bytes(r.err, strlen(r.err), secret));
    cli_result_free(&r);
    size_t len = 0;
    char *ev = slurp(evidence, &len);
    assert_false(has_bytes(ev, len, secret));
    assert_non_null(strstr(ev, "\"decision\":\"allow\""));
    assert_non_null(strstr(ev, "\"decision\":\"deny\""));
    assert_non_null(strstr(ev, "echo $TOKEN $PLAIN"));
    free(ev);
    CLI_RUN(&r, "evidence", "verify", evidence);
    expect_status(&r, 0, "evidence verify");
    assert_non_null(strstr(r.out, "2 records"));
    cli_result_free(&r);
}

/* A secret inside a path: not in the result, the evidence or the --debug
 * log (issue 20, item 12). */
static void secret_in_a_path(void **state)
{
    world *w = *state;
    char evidence[128];
    snprintf(evidence, sizeof evidence, "%s/path-secret.jsonl", w->scratch);
    unlink(evidence);
    cli_result r;
    CALL(w, &r, "--debug", "--secret-env", "TOKEN=path-secret-4242", "--evidence", evidence, "write",
         "{\"path\": \"d-path-secret-4242/f.txt\", \"content\": \"x\"}");
    expect_status(&r, 0, "write");
    assert_false(has_bytes(r.out, r.out_len, "path-secret-4242"));
    assert_false(has_bytes(r.err, strlen(r.err), "path-secret-4242"));
    assert_non_null(strstr(r.out, "d-[REDACTED]/f.txt"));
    assert_non_null(strstr(r.err, "[debug]"));
    cli_result_free(&r);
    CALL(w, &r, "--debug", "--secret-env", "TOKEN=path-secret-4242", "--evidence", evidence, "read",
         "{\"path\": \"missing-path-secret-4242\"}");
    expect_status(&r, 1, "read of a missing file");
    assert_false(has_bytes(r.out, r.out_len, "path-secret-4242"));
    assert_false(has_bytes(r.err, strlen(r.err), "path-secret-4242"));
    cli_result_free(&r);
    size_t len = 0;
    char *ev = slurp(evidence, &len);
    assert_false(has_bytes(ev, len, "path-secret-4242"));
    assert_non_null(strstr(ev, "d-[REDACTED]/f.txt"));
    free(ev);
}

/* An evidence file whose last line is torn: the call is refused before it
 * runs, evidence_error on stderr, exit 1 (issue 20, item 6). */
static void torn_evidence_refuses(void **state)
{
    world *w = *state;
    char evidence[128];
    snprintf(evidence, sizeof evidence, "%s/torn.jsonl", w->scratch);
    assert_int_equal(test_write_text(evidence, "{\"partial"), 0);
    cli_result r;
    CALL(w, &r, "--evidence", evidence, "exec", "{\"command\": \"touch /workspace/ran-torn\"}");
    expect_status(&r, 1, "exec with a torn evidence file");
    assert_non_null(strstr(r.err, "evidence_error"));
    assert_non_null(strstr(r.err, "incomplete"));
    cJSON *j = result(&r);
    assert_string_equal(error_code(j), "evidence_error");
    cJSON_Delete(j);
    cli_result_free(&r);
    char *ran = cli_world_file(w, "ran-torn");
    if (ran)
        fail_msg("the command ran although its record could not be written");
    unlink(evidence);
}
/* Issue 18 through the CLI: apply_patch (atomic), edit with several edits,
 * search output modes, and an exec that yields to a job that a later
 * process waits for (the CLI detaches its jobs). */
static void patch_edits_yield(void **state)
{
    world *w = *state;
    cli_result r;
    CALL(w, &r, "apply_patch",
         "{\"patch\": \"*** Begin Patch\\n*** Add File: cp/a.txt\\n+alpha\\n*** Add File: cp/b.txt\\n+beta\\n"
         "*** End Patch\\n\"}");
    expect_status(&r, 0, "apply_patch");
    cJSON *j = result(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "files")), 2);
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "diff")), "+++ b/cp/b.txt"));
    cJSON_Delete(j);
    cli_result_free(&r);
    CALL(w, &r, "apply_patch",
         "{\"patch\": \"*** Begin Patch\\n*** Update File: cp/a.txt\\n@@\\n-alpha\\n+ALPHA\\n"
         "*** Update File: cp/b.txt\\n@@\\n-gamma\\n+x\\n*** End Patch\\n\"}");
    expect_status(&r, 1, "apply_patch that does not match");
    j = result(&r);
    assert_string_equal(error_code(j), "no_match");
    cJSON_Delete(j);
    cli_result_free(&r);
    char *bytes = cli_world_file(w, "cp/a.txt");
    assert_string_equal(bytes, "alpha\n");
    free(bytes);
    CALL(w, &r, "edit",
         "{\"path\": \"cp/a.txt\", \"edits\": [{\"old_string\": \"alpha\", \"new_string\": \"al\"}, "
         "{\"old_string\": \"al\\n\", \"new_string\": \"al!\\n\"}]}");
    expect_status(&r, 0, "edit with edits");
    cli_result_free(&r);
    bytes = cli_world_file(w, "cp/a.txt");
    assert_string_equal(bytes, "al!\n");
    free(bytes);
    CALL(w, &r, "search", "{\"pattern\": \"a\", \"path\": \"cp\", \"output_mode\": \"files_with_matches\"}");
    expect_status(&r, 0, "search files_with_matches");
    j = result(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "files")), 2);
    cJSON_Delete(j);
    cli_result_free(&r);
    CALL(w, &r, "exec", "{\"command\": \"while [ ! -e cp/go ]; do sleep 0.1; done; echo late\", \"yield_ms\": 500}");
    expect_status(&r, 0, "exec that yields");
    j = result(&r);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "running")));
    char args[256];
    snprintf(args, sizeof args, "{\"job_id\": \"%s\", \"action\": \"wait\", \"wait_ms\": 120000}",
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "job_id")));
    cJSON_Delete(j);
    cli_result_free(&r);
    CALL(w, &r, "write", "{\"path\": \"cp/go\", \"content\": \"\"}");
    expect_status(&r, 0, "write go");
    cli_result_free(&r);
    CALL(w, &r, "job", args);
    expect_status(&r, 0, "job wait");
    j = result(&r);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "running")));
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "exit_code")->valueint, 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "output")), "late\n");
    cJSON_Delete(j);
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest plain[] = {
        cmocka_unit_test(tools_formats),
        cmocka_unit_test(help_texts),
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(patch_edits_yield),
        cmocka_unit_test(prompt_names_workspace),
        cmocka_unit_test(write_read_and_statuses),
        cmocka_unit_test(deny_and_policy),
        cmocka_unit_test(require_person_without_terminal),
        cmocka_unit_test(require_person_on_a_terminal),
        cmocka_unit_test(question_escapes_controls),
        cmocka_unit_test(secret_and_evidence),
        cmocka_unit_test(torn_evidence_refuses),
        cmocka_unit_test(secret_in_a_path),
    };
    /* the three groups' cases in one pool, the emulator's (the longer) first */
    const par_group groups[] = {
        PAR_GROUP("harness CLI, emulator sandbox", tests, setup_oci, teardown),
        PAR_GROUP("harness CLI, local directory", tests, setup_local, teardown),
        PAR_GROUP("harness CLI", plain, NULL, NULL),
    };
    return par_run_groups(groups, sizeof groups / sizeof groups[0]) ? 1 : 0;
}
