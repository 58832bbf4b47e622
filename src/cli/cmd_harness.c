/* ocisbx harness tools | prompt | call: the harness (include/ocisbx/harness.h)
 * from the shell. A held call asks a person on the controlling terminal
 * (/dev/tty, never stdin); without one it is refused. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "ocisbx/backend.h"
#include "ocisbx/harness.h"
#include "util/internal.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: ocisbx harness <subcommand> [options]\n\n"
                 "The harness's tools for a model, gated, over a sandbox or a local directory.\n\n"
                 "subcommands:\n"
                 "  tools [--format ours|openai|anthropic]   the tool list as JSON (no backend needed)\n"
                 "  prompt (--sandbox-id ID | --local-dir DIR [--no-isolation])\n"
                 "                                           the system prompt fragment for the workspace\n"
                 "  call (--sandbox-id ID | --local-dir DIR [--no-isolation]) [gate and env options] TOOL "
                 "'ARGS_JSON'\n"
                 "                                           one tool call through the gate; prints its result\n\n"
                 "See ocisbx harness <subcommand> --help.\n");
}

static int sub_tools(int argc, char **argv)
{
    const char *format = NULL, *v = NULL;
    for (int i = 2; i < argc; i++) {
        int r;
        if ((r = cli_opt_value(argc, argv, &i, "format", &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            format = v;
        } else if (argv[i][0] != '-') {
            return cli_error(CLI_EXIT_USAGE, "harness tools: unexpected argument %s", argv[i]);
        } else {
            return cli_unknown_option("harness tools", argv[i]);
        }
    }
    if (format && strcmp(format, "ours") && strcmp(format, "openai") && strcmp(format, "anthropic"))
        return cli_error(CLI_EXIT_USAGE, "harness tools: --format is ours, openai or anthropic, not %s", format);
    char *json = NULL;
    if (ocisbx_harness_tools_json(NULL, format, &json))
        return cli_fail_last();
    int st = cli_print_json_text(json, strlen(json));
    ocisbx_free(json);
    return st;
}

/* What prompt and call share: the backend and the harness's options. */
typedef struct call_opts {
    const char *sandbox_id, *local_dir;
    int isolate;
    const char *tool, *args;
    ocisbx_harness_options *ho;
} call_opts;

/* Parses argv[2..); calls true for `call` (gate options and TOOL ARGS_JSON). */
static int parse(const char *cmd, int argc, char **argv, bool calls, call_opts *o)
{
    const char *v = NULL;
    const char *pos[2] = {NULL, NULL};
    int npos = 0, st = 0;
    bool no_more = false;
    for (int i = 2; i < argc && !st; i++) {
        int r;
        char name[256];
        const char *val = NULL;
        const char *arg0 = argv[i];
        if (!no_more && !strcmp(arg0, "--")) {
            no_more = true;
        } else if (no_more || arg0[0] != '-' || !arg0[1]) {
            if (!calls || npos == 2)
                st = cli_error(CLI_EXIT_USAGE, "%s: unexpected argument %s", cmd, arg0);
            else
                pos[npos++] = arg0;
        } else if ((r = cli_opt_value(argc, argv, &i, "sandbox-id", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE : 0;
            o->sandbox_id = v;
        } else if ((r = cli_opt_value(argc, argv, &i, "local-dir", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE : 0;
            o->local_dir = v;
        } else if (cli_opt_flag(arg0, "no-isolation")) {
            o->isolate = 0;
        } else if (calls && (r = cli_opt_value(argc, argv, &i, "require-person", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE
                       : (ocisbx_harness_options_require_person(o->ho, v)
                              ? cli_error(CLI_EXIT_USAGE, "%s: %s", cmd, ocisbx_error_message(ocisbx_error_last()))
                              : 0);
        } else if (calls && (r = cli_opt_value(argc, argv, &i, "deny", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE
                       : (ocisbx_harness_options_deny_label(o->ho, v, NULL)
                              ? cli_error(CLI_EXIT_USAGE, "%s: %s", cmd, ocisbx_error_message(ocisbx_error_last()))
                              : 0);
        } else if (calls && (r = cli_opt_value(argc, argv, &i, "policy", &v)) != 0) {
            /* a bad policy file is a bad command line: exit 2, file, line and key named */
            st = r < 0 ? CLI_EXIT_USAGE
                       : (ocisbx_harness_options_set_policy_file(o->ho, v)
                              ? cli_error(CLI_EXIT_USAGE, "%s", ocisbx_error_message(ocisbx_error_last()))
                              : 0);
        } else if (calls && (r = cli_opt_value(argc, argv, &i, "evidence", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE : (ocisbx_harness_options_set_evidence_file(o->ho, v) ? cli_fail_last() : 0);
        } else if (calls && ((r = cli_opt_value(argc, argv, &i, "env", &v)) != 0 ||
                             (r = cli_opt_value(argc, argv, &i, "secret-env", &v)) != 0)) {
            int secret = strncmp(arg0, "--secret-env", 12) == 0;
            st = r < 0    ? CLI_EXIT_USAGE
                 : secret ? cli_secret_env(cmd, v, name, sizeof name, &val)
                          : cli_split_env(cmd, "--env", v, name, sizeof name, &val);
            if (!st && ocisbx_harness_options_add_env(o->ho, name, val, secret))
                st = cli_error(CLI_EXIT_USAGE, "%s: %s", cmd, ocisbx_error_message(ocisbx_error_last()));
        } else {
            st = cli_unknown_option(cmd, arg0);
        }
    }
    if (!st && !o->sandbox_id == !o->local_dir)
        st = cli_error(CLI_EXIT_USAGE, "%s: give exactly one of --sandbox-id and --local-dir", cmd);
    if (!st && o->sandbox_id && !o->isolate)
        st = cli_error(CLI_EXIT_USAGE, "%s: --no-isolation goes with --local-dir", cmd);
    if (!st && calls && npos < 2)
        st = cli_error(CLI_EXIT_USAGE, "%s: %s", cmd,
                       npos ? "missing ARGS_JSON after the tool (e.g. '{\"path\": \"/workspace\"}')"
                            : "missing TOOL and ARGS_JSON (e.g. ls '{\"path\": \"/workspace\"}')");
    o->tool = pos[0];
    o->args = pos[1];
    return st;
}

/* The person's answer on the terminal. */
static int ask_person(const char *tool, const char *label, const char *arguments_json, const char *reason,
                      void *user_data)
{
    (void)user_data;
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return ocisbx_fail(OCISBX_EDENIED, "no terminal was available to ask a person (/dev/tty: %s)", strerror(e));
    }
    FILE *tty = fdopen(fd, "r+");
    if (!tty) {
        close(fd);
        return ocisbx_fail(OCISBX_EDENIED, "no terminal was available to ask a person (/dev/tty: %s)",
                           strerror(errno));
    }
    fprintf(tty, "ocisbx harness: the call of %s (%s) needs your approval.\n  arguments: %s\n", tool, label,
            arguments_json);
    if (reason)
        fprintf(tty, "  reason: %s\n", reason);
    fprintf(tty, "Run it? [y/N] ");
    fflush(tty);
    char line[64] = "";
    int ok = 0;
    if (fgets(line, sizeof line, tty)) {
        line[strcspn(line, "\r\n")] = '\0';
        ok = !strcmp(line, "y") || !strcmp(line, "Y") || !strcmp(line, "yes") || !strcmp(line, "YES") ||
             !strcmp(line, "Yes");
    }
    fprintf(tty, ok ? "approved\n" : "refused\n");
    fclose(tty);
    return ok;
}

/* A result whose evidence could not be written: its message on stderr too
 * (the operator must see it, not only the model). */
static void report_evidence_error(const char *result_json)
{
    cJSON *j = cJSON_Parse(result_json);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "code"));
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message"));
    if (code && !strcmp(code, "evidence_error"))
        cli_error(CLI_EXIT_FAIL, "harness call: evidence_error: %s", msg ? msg : "");
    cJSON_Delete(j);
}

static int sub_backend(cli_ctx *ctx, int argc, char **argv, bool calls)
{
    const char *cmd = calls ? "harness call" : "harness prompt";
    call_opts o;
    memset(&o, 0, sizeof o);
    o.isolate = 1;
    if (ocisbx_harness_options_new(&o.ho))
        return cli_fail_last();
    int st = parse(cmd, argc, argv, calls, &o);
    if (st) {
        ocisbx_harness_options_free(o.ho);
        return st < 0 ? CLI_EXIT_OK : st;
    }
    ocisbx_client *client = NULL;
    ocisbx_backend *b = NULL;
    ocisbx_harness *h = NULL;
    cli_log_warnings(ctx);
    st = cli_open_backend(ctx, o.sandbox_id, o.local_dir, o.isolate, 0, &client, &b);
    if (!st && ocisbx_harness_new(b, o.ho, &h))
        st = cli_fail_last();
    if (!st && calls)
        ocisbx_harness_set_approval(h, ask_person, NULL);
    char *text = NULL;
    if (!st && !calls) {
        if (ocisbx_harness_prompt(h, &text))
            st = cli_fail_last();
        else if (fputs(text, stdout) == EOF)
            st = cli_stdout_failed();
    } else if (!st) {
        int rc = ocisbx_harness_call_json(h, o.tool, o.args, &text);
        if (!text)
            st = cli_fail_last();
        else if (printf("%s\n", text) < 0)
            st = cli_stdout_failed();
        else
            st = rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
        if (text && rc)
            report_evidence_error(text);
    }
    ocisbx_free(text);
    ocisbx_harness_free(h);
    ocisbx_backend_free(b); /* connected: never deletes the sandbox */
    ocisbx_client_free(client);
    ocisbx_harness_options_free(o.ho);
    return st;
}

int cmd_harness(cli_ctx *ctx, int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return cli_error(CLI_EXIT_USAGE, "harness: missing subcommand (tools, prompt or call)");
    }
    if (!strcmp(argv[1], "tools"))
        return sub_tools(argc, argv);
    if (!strcmp(argv[1], "prompt"))
        return sub_backend(ctx, argc, argv, false);
    if (!strcmp(argv[1], "call"))
        return sub_backend(ctx, argc, argv, true);
    return cli_error(CLI_EXIT_USAGE, "harness: unknown subcommand %s (tools, prompt or call)", argv[1]);
}
