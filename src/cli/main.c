/* ocisbx [global options] <command> [<subcommand>] [options]
 * Global options may come before or after the command; they are taken out
 * of argv before the command sees it. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

/* argv[*i] as a global option (a client setting, or one of the CLI's own
 * table): 1 taken (help and version noted), 0 not one, -1 after a usage
 * error. --help is the command's once the command name has come
 * (after_command). */
static int take_global(cli_ctx *ctx, int argc, char **argv, int *i, bool after_command, bool *help,
                       bool *version)
{
    const char *arg = argv[*i];
    int st = cli_setting_option(ctx, argc, argv, i); /* the client settings: the library's table */
    if (st != 0)
        return st;
    cli_globals *g = &ctx->g;
    if (strcmp(arg, "-h") == 0 && !after_command) {
        *help = true;
        return 1;
    }
    for (const cli_global_option *go = cli_global_options; go->opt.name; go++) {
        if (!go->opt.arg) {
            if (!cli_opt_flag(arg, go->opt.name))
                continue;
            if (strcmp(go->opt.name, "help") == 0) {
                if (after_command)
                    return 0; /* the command's */
                *help = true;
            } else if (strcmp(go->opt.name, "version") == 0) {
                *version = true;
            } else {
                *(bool *)(void *)((char *)g + go->offset) = true;
            }
            return 1;
        }
        const char *value = NULL;
        int m = cli_opt_value(argc, argv, i, go->opt.name, &value);
        if (m < 0)
            return -1;
        if (m == 0)
            continue;
        if (!*value) {
            cli_error(CLI_EXIT_USAGE, "option --%s: empty value", go->opt.name);
            return -1;
        }
        *(const char **)(void *)((char *)g + go->offset) = value;
        return 1;
    }
    return 0;
}

/* `ocisbx generative-ai-sandbox GROUP VERB ...` (the OCI CLI's full path)
 * is `ocisbx GROUP VERB ...`: 0 with *skip 1 (or 0 for another command),
 * else the exit status (after listing the OCI CLI's groups). */
static int oci_path(int nrest, char **rest, int *skip)
{
    *skip = 0;
    if (strcmp(rest[0], "generative-ai-sandbox") != 0)
        return 0;
    if (nrest < 2 || strcmp(rest[1], "--help") == 0 || strcmp(rest[1], "-h") == 0) {
        bool help = nrest >= 2;
        cli_help_top(help ? stdout : stderr, true);
        return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    const cli_command *c = cli_find_command(rest[1]);
    if (!c || !(c->flags & CLI_CMD_OCI))
        return cli_error(CLI_EXIT_USAGE,
                         "generative-ai-sandbox %s: not a group of oci generative-ai-sandbox (see ocisbx "
                         "generative-ai-sandbox --help)",
                         rest[1]);
    *skip = 1;
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
        int m = take_global(ctx, argc, argv, &i, nrest > 0, &help, &version);
        if (m < 0)
            return CLI_EXIT_USAGE;
        if (m == 0)
            rest[nrest++] = argv[i];
    }
    if (version) {
        printf("ocisbx %s\n", ocisbx_version());
        return CLI_EXIT_OK;
    }
    if (help || nrest == 0) {
        cli_help_top(help ? stdout : stderr, false);
        return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    if (check_limits(&ctx->g) != 0)
        return CLI_EXIT_USAGE;

    int skip = 0, status = oci_path(nrest, rest, &skip);
    if (status != 0 || (skip == 0 && strcmp(rest[0], "generative-ai-sandbox") == 0))
        return status;
    char **cargv = rest + skip;
    int cargc = nrest - skip;
    const cli_command *cmd = cli_find_command(cargv[0]);
    if (!cmd) {
        status = cli_error(CLI_EXIT_USAGE, "unknown command %s (see ocisbx --help)", cargv[0]);
    } else if (cli_api_wants_help(cargc, cargv)) {
        /* every command's help comes from the table; nothing is sent */
        cli_help(cmd, cmd->verbs && cargc > 1 ? cli_find_verb(cmd, cargv[1]) : NULL);
        status = CLI_EXIT_OK;
    } else if (ocisbx_global_init() != 0) {
        status = cli_fail_last();
    } else {
        cli_progress_setup(ctx);
        cli_signals_install();
        status = cmd->fn(ctx, cargc, cargv);
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
