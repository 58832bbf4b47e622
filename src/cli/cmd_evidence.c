/* ocisbx evidence verify FILE: checks an evidence file's hash chain. */
#include <stdbool.h>
#include <stdio.h>
#include <strings.h>
#include <string.h>

#include "cli.h"
#include "ocisbx/harness.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: ocisbx evidence verify [--head SHA256] FILE\n\n"
                 "Checks the hash chain of a harness evidence file (JSON Lines): each record's prev_sha256\n"
                 "must be the SHA-256 of the line before it (64 zeros for the first).\n"
                 "Exit 0 with the record count and the chain's head (the SHA-256 of the last line) when\n"
                 "the chain is whole; 1 naming the first line that breaks it (or why the file cannot be\n"
                 "read); 2 for a bad command line.\n"
                 "The chain cannot show a change to the last record or lines removed from the end: keep\n"
                 "the head elsewhere and give it as --head, which exits 1 unless the last line hashes to it.\n");
}

int cmd_evidence(cli_ctx *ctx, int argc, char **argv)
{
    (void)ctx;
    if (argc < 2) {
        usage(stderr);
        return cli_error(CLI_EXIT_USAGE, "evidence: missing subcommand (verify)");
    }
    if (strcmp(argv[1], "verify") != 0)
        return cli_error(CLI_EXIT_USAGE, "evidence: unknown subcommand %s", argv[1]);
    const char *file = NULL, *want = NULL, *v = NULL;
    for (int i = 2; i < argc; i++) {
        int r;
        if (!strcmp(argv[i], "--") && i + 1 < argc && !file) {
            file = argv[++i];
            continue;
        }
        if ((r = cli_opt_value(argc, argv, &i, "head", &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            bool hex = strlen(v) == 64;
            for (const char *p = v; hex && *p; p++)
                hex = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F');
            if (!hex)
                return cli_error(CLI_EXIT_USAGE, "evidence verify: --head wants a SHA-256 (64 hex digits)");
            want = v;
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
    char head[OCISBX_EVIDENCE_HEAD_SIZE];
    if (ocisbx_evidence_verify_file_head(file, &records, &bad, head) != 0)
        return cli_fail_last();
    if (want && strcasecmp(want, head) != 0) {
        if (records == 0)
            return cli_error(CLI_EXIT_FAIL, "evidence verify: %s has no records, but --head is %s", file, want);
        return cli_error(CLI_EXIT_FAIL,
                         "evidence verify: %s: line %lld (the last) hashes to %s, not the --head %s: the last "
                         "record was changed, or records were removed from or added at the end",
                         file, (long long)records, head, want);
    }
    printf("%s: %lld record%s, chain intact, head %s\n", file, (long long)records, records == 1 ? "" : "s", head);
    return CLI_EXIT_OK;
}
