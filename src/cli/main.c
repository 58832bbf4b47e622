/* ocisbx [global options] <command> [<subcommand>] [options]
 * Global options may come before or after the command; they are taken out
 * of argv before the command sees it. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const cli_command cli_commands[] = {
    {"raw-request", "sign and send any request (or print it with --dry-run)", cmd_raw_request},
    {"doctor", "check the config, key, fingerprint, clock, network and a signed request", cmd_doctor},
    /* the OCI CLI's groups (oci generative-ai-sandbox ...) */
    {"sandbox", "create|create-from-snapshot|get|update|stop|delete|extend|suspend|resume", cmd_sandbox},
    {"sandbox-collection", "list", cmd_sandbox},
    {"sandbox-command", "run|run-and-wait|get|cancel", cmd_command},
    {"sandbox-command-collection", "list", cmd_command},
    {"sandbox-command-event", "run-and-stream|stream", cmd_command},
    {"sandbox-command-output", "get-output", cmd_command},
    {"sandbox-file", "read|write", cmd_file},
    {"sandbox-snapshot", "create|get|delete", cmd_snapshot},
    {"sandbox-snapshot-collection", "list", cmd_snapshot},
    /* the workspace backend */
    {"create", "create a sandbox and wait until it is RUNNING (deleted again on any failure)", cmd_create},
    {"close", "stop and delete a sandbox (also fine when it is already gone)", cmd_close},
    {"exec", "run a command in a sandbox or a local directory (timeout, capped output)", cmd_exec},
    {"cp", "copy a file to or from a sandbox (sbx:<sandbox id>:<path>), checked", cmd_cp},
    {"evidence", "verify: check the hash chain of a harness evidence file", cmd_evidence},
    {"harness", "tools|prompt|call: a model's gated tools over a sandbox or a local directory", cmd_harness},
    /* this CLI's first names, kept as aliases */
    {"command", "alias: run|run-and-wait|run-and-stream|get|list|output|events|cancel", cmd_command},
    {"file", "alias of sandbox-file: read|write", cmd_file},
    {"snapshot", "alias: create|get|list|delete", cmd_snapshot},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: ocisbx [global options] <command> [<subcommand>] [options]\n\ncommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(out, "  %-28s %s\n", c->name, c->summary);
    fprintf(out, "\nglobal options (before or after the command):\n");
    /* the client settings: the library's settings table (ours, then the OCI CLI's variables) */
    cli_settings_help(out);
    fprintf(out, "  --no-retry           send each request once (no retries)\n"
                 "  --debug              the library's debug log on stderr (secrets redacted)\n"
                 "  --max-retries N      retry a failed request at most N times (0-99; default 7)\n"
                 "  --connection-timeout SECONDS\n"
                 "                       time to connect (default 10)\n"
                 "  --read-timeout SECONDS\n"
                 "                       time to wait for the answer, or between bytes of a stream\n"
                 "                       (default 60)\n"
                 "  --deadline SECONDS   the most one request may take, its retries and waits\n"
                 "                       included, also while bytes still arrive (default none)\n"
                 "  --version, --help\n"
                 "  --                   ends the options: what follows is not read as one\n"
                 "A flag wins over its variable, a variable over the config file, the file over the default;\n"
                 "the OCI_SANDBOX_ variable wins over the OCI CLI's (OCI_CLI_) when both are set.\n");
}

typedef struct global_opt {
    const char *name;
    size_t offset;
} global_opt;

#define G(field) offsetof(cli_globals, field)
static const global_opt global_opts[] = {
    {"max-retries", G(max_retries)},
    {"connection-timeout", G(connection_timeout)},
    {"read-timeout", G(read_timeout)},
    {"deadline", G(deadline)},
    {NULL, 0},
};

/* An integer option value in [min, max]; usage error naming the option. */
static int global_int(const char *name, const char *value, long long min, long long max, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (end == value || *end || errno || v < min || v > max)
        return cli_error(CLI_EXIT_USAGE, "option --%s: must be an integer from %lld to %lld, not '%s'", name, min,
                         max, value);
    *out = v;
    return 0;
}

/* The transport limits, checked before any command runs. */
static int check_limits(cli_globals *g)
{
    long long v = -1;
    g->max_retries_n = -1;
    if (g->max_retries && g->no_retry)
        return cli_error(CLI_EXIT_USAGE, "option --max-retries cannot be used with --no-retry");
    if (g->max_retries) {
        if (global_int("max-retries", g->max_retries, 0, 99, &v))
            return CLI_EXIT_USAGE;
        g->max_retries_n = (int)v;
    }
    if (g->connection_timeout &&
        global_int("connection-timeout", g->connection_timeout, 1, 86400, &g->connection_timeout_s))
        return CLI_EXIT_USAGE;
    if (g->read_timeout && global_int("read-timeout", g->read_timeout, 1, 86400, &g->read_timeout_s))
        return CLI_EXIT_USAGE;
    if (g->deadline && global_int("deadline", g->deadline, 1, 86400, &g->deadline_s))
        return CLI_EXIT_USAGE;
    return 0;
}

/* Parses the global options into ctx (the rest into rest) and runs the command. */
static int run_with(cli_ctx *ctx, int argc, char **argv, char **rest)
{
    int nrest = 0;
    bool help = false, version = false, no_more = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (no_more) {
            rest[nrest++] = argv[i];
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            /* The end of the options: the global ones stop here, and the
             * command gets it too (its own options stop there). Before the
             * command name it only ends the global options. */
            no_more = true;
            if (nrest > 0)
                rest[nrest++] = argv[i];
            continue;
        }
        if (cli_opt_flag(arg, "no-retry")) {
            ctx->g.no_retry = true;
            continue;
        }
        if (cli_opt_flag(arg, "debug")) {
            ctx->g.debug = true;
            continue;
        }
        int st = cli_setting_option(ctx, argc, argv, &i);
        if (st < 0) {
            return CLI_EXIT_USAGE;
        }
        bool taken = st > 0;
        for (const global_opt *g = global_opts; g->name && !taken; g++) {
            const char *value = NULL;
            int m = cli_opt_value(argc, argv, &i, g->name, &value);
            if (m < 0) {
                return CLI_EXIT_USAGE;
            }
            if (m > 0) {
                if (!*value) {
                    return cli_error(CLI_EXIT_USAGE, "option --%s: empty value", g->name);
                }
                *(const char **)((char *)&ctx->g + g->offset) = value;
                taken = true;
            }
        }
        if (taken)
            continue;
        if (strcmp(arg, "--version") == 0) {
            version = true;
        } else if ((strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) && nrest == 0) {
            help = true; /* after the command, --help is the command's */
        } else {
            rest[nrest++] = argv[i];
        }
    }
    if (version) {
        printf("ocisbx %s\n", ocisbx_version());
        return CLI_EXIT_OK;
    }
    if (help || nrest == 0) {
        usage(help ? stdout : stderr);
        return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    if (check_limits(&ctx->g) != 0)
        return CLI_EXIT_USAGE;

    const cli_command *cmd = cli_commands;
    while (cmd->name && strcmp(cmd->name, rest[0]) != 0)
        cmd++;
    int status;
    if (!cmd->name) {
        status = cli_error(CLI_EXIT_USAGE, "unknown command %s (see ocisbx --help)", rest[0]);
    } else if (ocisbx_global_init() != 0) {
        status = cli_fail_last();
    } else {
        cli_progress_setup(ctx);
        cli_signals_install();
        status = cmd->fn(ctx, nrest, rest);
        ocisbx_set_log(NULL, 0, NULL);
        ocisbx_credentials_free(ctx->creds);
        free(ctx->endpoint);
        ocisbx_settings_free(ctx->settings); /* its credentials before the library's cleanup */
        ctx->settings = NULL;
        ocisbx_global_cleanup();
        /* interrupted: cleaned up above; one line, exit 130 / 143 */
        if (cli_interrupt_status())
            status = cli_interrupt_status();
    }
    return status;
}

static int run(int argc, char **argv)
{
    cli_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int status = rest && ocisbx_settings_new(&ctx.settings) == 0 ? run_with(&ctx, argc, argv, rest)
                                                                 : cli_error(CLI_EXIT_FAIL, "out of memory");
    ocisbx_settings_free(ctx.settings);
    free(rest);
    return status;
}

int main(int argc, char **argv)
{
    return cli_finish_stdout(run(argc, argv));
}
