/* ocisbx evidence verify FILE: checks an evidence file's hash chain. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ocisbx/harness.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: ocisbx evidence verify FILE\n\n"
                 "Checks the hash chain of a harness evidence file (JSON Lines): each record's prev_sha256\n"
                 "must be the SHA-256 of the line before it (64 zeros for the first).\n"
                 "Exit 0 with the record count when the chain is whole; 1 naming the first line that\n"
                 "breaks it (or why the file cannot be read); 2 for a bad command line.\n");
}

int cmd_evidence(cli_ctx *ctx, int argc, char **argv)
{
    (void)ctx;
    if (argc >= 2 && (cli_opt_flag(argv[1], "help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (argc < 2) {
        usage(stderr);
        return cli_error(CLI_EXIT_USAGE, "evidence: missing subcommand (verify)");
    }
    if (strcmp(argv[1], "verify") != 0)
        return cli_error(CLI_EXIT_USAGE, "evidence: unknown subcommand %s", argv[1]);
    const char *file = NULL;
    for (int i = 2; i < argc; i++) {
        if (cli_opt_flag(argv[i], "help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (!strcmp(argv[i], "--") && i + 1 < argc && !file) {
            file = argv[++i];
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return cli_unknown_option("evidence verify", argv[i]);
        if (file)
            return cli_error(CLI_EXIT_USAGE, "evidence verify: one FILE only");
        file = argv[i];
    }
    if (!file)
        return cli_error(CLI_EXIT_USAGE, "evidence verify: missing FILE");
    int64_t records = 0, bad = 0;
    if (ocisbx_evidence_verify_file(file, &records, &bad) != 0)
        return cli_fail_last();
    printf("%s: %lld record%s, chain intact\n", file, (long long)records, records == 1 ? "" : "s");
    return CLI_EXIT_OK;
}
