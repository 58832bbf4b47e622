/* Placeholders until the API commands land (cmd_sandbox.c, cmd_command.c,
 * cmd_file.c, cmd_snapshot.c replace this file). */
#include "cli.h"

static int not_yet(const char *name)
{
    return cli_error(CLI_EXIT_FAIL, "%s: not implemented yet", name);
}

int cmd_sandbox(cli_ctx *ctx, int argc, char **argv)
{
    (void)ctx, (void)argc, (void)argv;
    return not_yet("sandbox");
}

int cmd_command(cli_ctx *ctx, int argc, char **argv)
{
    (void)ctx, (void)argc, (void)argv;
    return not_yet("command");
}

int cmd_file(cli_ctx *ctx, int argc, char **argv)
{
    (void)ctx, (void)argc, (void)argv;
    return not_yet("file");
}

int cmd_snapshot(cli_ctx *ctx, int argc, char **argv)
{
    (void)ctx, (void)argc, (void)argv;
    return not_yet("snapshot");
}
