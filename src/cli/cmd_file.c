/* ocisbx sandbox-file read|write (the OCI CLI's names: --sandbox-file-path,
 * --file, --local-file); the legacy "file" group and option names stay. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ocisbx/api.h"

static int to_spool(const void *data, size_t len, void *ud)
{
    return fwrite(data, 1, len, (FILE *)ud) != len;
}

/* To stdout, but only content that passed the SHA-256 check: the bytes go
 * to an unnamed temporary file first (bounded memory), then get copied. */
static int read_to_stdout(ocisbx_client *c, const cli_api_opts *o)
{
    FILE *spool = tmpfile();
    if (!spool)
        return cli_error(CLI_EXIT_FAIL, "file read: cannot create a temporary file: %s", strerror(errno));
    int rc = ocisbx_client_read_file_to_callback(c, o->sandbox_id, o->file_path, to_spool, spool);
    cli_transfer_done(); /* the line ends before the content comes */
    if (rc == OCISBX_ECANCELED && ferror(spool)) {
        fclose(spool);
        return cli_error(CLI_EXIT_FAIL, "file read %s: writing the temporary file failed", o->file_path);
    }
    if (rc) {
        fclose(spool);
        return cli_fail_last();
    }
    if (fflush(spool) != 0 || fseek(spool, 0, SEEK_SET) != 0) {
        fclose(spool);
        return cli_error(CLI_EXIT_FAIL, "file read %s: the temporary file: %s", o->file_path, strerror(errno));
    }
    char buf[65536];
    size_t n;
    int st = CLI_EXIT_OK;
    while ((n = fread(buf, 1, sizeof buf, spool)) > 0)
        if (fwrite(buf, 1, n, stdout) != n) {
            st = cli_stdout_failed();
            break;
        }
    if (st == CLI_EXIT_OK && ferror(spool))
        st = cli_error(CLI_EXIT_FAIL, "file read %s: reading the temporary file failed", o->file_path);
    fclose(spool);
    if (st == CLI_EXIT_OK && fflush(stdout) != 0)
        st = cli_stdout_failed();
    return st;
}

int cmd_file(cli_ctx *ctx, int argc, char **argv)
{
    char cmd[64];
    cli_api_opts o;
    int exit_code;
    const cli_verb *v = cli_api_select(argc, argv, &o, cmd, sizeof cmd, &exit_code);
    if (!v)
        return exit_code;
    bool write = strcmp(cli_verb_id(v), "write") == 0; /* the required options: by the table */
    ocisbx_client *c = NULL;
    ctx->transfer_progress = true;
    if (cli_api_client(ctx, &c))
        return CLI_EXIT_FAIL;
    int st, rc;
    if (write) {
        ocisbx_sandbox_file *f = NULL;
        if (strcmp(o.from_file, "-") == 0) {
            char *data = NULL;
            size_t len = 0;
            if (cli_read_file("-", &data, &len) != 0) {
                ocisbx_client_free(c);
                return CLI_EXIT_FAIL;
            }
            rc = ocisbx_client_write_file(c, o.sandbox_id, o.file_path, data, len, &f);
            free(data);
        } else {
            rc = ocisbx_client_write_file_from_path(c, o.sandbox_id, o.file_path, o.from_file, &f);
        }
        cli_transfer_done();
        char *json = NULL;
        if (!rc && f)
            rc = ocisbx_sandbox_file_to_json(f, &json);
        ocisbx_sandbox_file_free(f);
        st = rc ? cli_api_print(rc, json) : (json ? cli_api_print(0, json) : CLI_EXIT_OK);
    } else {
        if (!o.to_file || strcmp(o.to_file, "-") == 0) {
            st = read_to_stdout(c, &o);
        } else {
            rc = ocisbx_client_read_file_to_path(c, o.sandbox_id, o.file_path, o.to_file);
            cli_transfer_done();
            st = rc ? cli_fail_last() : CLI_EXIT_OK;
        }
    }
    ocisbx_client_free(c);
    return st;
}
