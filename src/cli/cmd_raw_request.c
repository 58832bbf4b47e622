/* ocisbx raw-request: signs and sends any request, or prints it with
 * --dry-run (request line, then every header in send order). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: ocisbx raw-request --url URL [--method METHOD] [--body-file FILE|-]\n"
                 "                          [--content-type TYPE] [--date 'Thu, 05 Jan 2014 21:31:40 GMT']\n"
                 "                          [--dry-run] [-i] [global options] [--]\n");
}

static int to_stdout(const void *data, size_t len, void *user_data)
{
    (void)user_data;
    return fwrite(data, 1, len, stdout) == len ? 0 : 1;
}

static void print_headers(const ocisbx_headers *h)
{
    for (size_t i = 0; i < ocisbx_headers_count(h); i++)
        printf("%s: %s\n", ocisbx_headers_name(h, i), ocisbx_headers_value(h, i));
}

int cmd_raw_request(cli_ctx *ctx, int argc, char **argv)
{
    const char *method = "GET", *url = NULL, *body_file = NULL, *content_type = NULL, *date = NULL;
    bool dry_run = false, include = false, options_end = false;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (options_end) {
            /* raw-request takes no arguments besides its options */
            return cli_error(CLI_EXIT_USAGE, "raw-request: unexpected argument %s", argv[i]);
        } else if (strcmp(argv[i], "--") == 0) {
            options_end = true; /* the end of the options */
        } else if ((m = cli_opt_value(argc, argv, &i, "method", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            method = v;
        } else if ((m = cli_opt_value(argc, argv, &i, "url", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            url = v;
        } else if ((m = cli_opt_value(argc, argv, &i, "body-file", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            body_file = v;
        } else if ((m = cli_opt_value(argc, argv, &i, "content-type", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            content_type = v;
        } else if ((m = cli_opt_value(argc, argv, &i, "date", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            date = v;
        } else if (cli_opt_flag(argv[i], "dry-run")) {
            dry_run = true;
        } else if (strcmp(argv[i], "-i") == 0 || cli_opt_flag(argv[i], "include")) {
            include = true;
        } else if (cli_opt_flag(argv[i], "help") || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (argv[i][0] == '-') {
            return cli_unknown_option("raw-request", argv[i]);
        } else {
            return cli_error(CLI_EXIT_USAGE, "raw-request: unexpected argument %s", argv[i]);
        }
    }
    if (!url)
        return cli_error(CLI_EXIT_USAGE, "raw-request: --url is required");

    ocisbx_http_request *req = NULL;
    if (ocisbx_http_request_new(method, url, &req) != 0)
        return cli_error(CLI_EXIT_USAGE, "raw-request: %s", ocisbx_error_message(ocisbx_error_last()));
    int status = CLI_EXIT_OK;
    char *stdin_body = NULL;
    if ((content_type && ocisbx_http_request_set_content_type(req, content_type) != 0) ||
        (date && ocisbx_http_request_set_date(req, date) != 0)) {
        status = cli_error(CLI_EXIT_USAGE, "raw-request: %s", ocisbx_error_message(ocisbx_error_last()));
        goto out;
    }
    if (body_file && strcmp(body_file, "-") == 0) {
        size_t len = 0;
        if (cli_read_file("-", &stdin_body, &len) != 0) {
            status = CLI_EXIT_FAIL;
            goto out;
        }
        if (ocisbx_http_request_set_body(req, stdin_body, len) != 0) {
            status = cli_fail_last();
            goto out;
        }
    } else if (body_file && ocisbx_http_request_set_body_file(req, body_file) != 0) {
        status = cli_fail_last();
        goto out;
    }

    ocisbx_http *http = NULL;
    if (cli_http(ctx, url, &http) != 0) {
        status = CLI_EXIT_FAIL;
        goto out;
    }
    if (dry_run) {
        ocisbx_headers *hl = NULL;
        if (ocisbx_http_prepare(http, req, &hl) != 0) {
            status = cli_fail_last();
        } else {
            /* the URL as signed and sent (normalised) */
            printf("%s %s\n", ocisbx_http_request_method(req), ocisbx_http_request_url(req));
            print_headers(hl);
        }
        ocisbx_headers_free(hl);
        ocisbx_http_free(http);
        goto out;
    }
    if (!include)
        ocisbx_http_request_set_sink_callback(req, to_stdout, NULL);
    ocisbx_http_response *resp = NULL;
    int rc = ocisbx_http_send(http, req, &resp);
    if (resp) {
        size_t blen = 0;
        const char *body = ocisbx_http_response_body(resp, &blen);
        const char *reason = ocisbx_http_response_reason(resp);
        if (include) {
            printf("HTTP %d%s%s\n", ocisbx_http_response_status(resp), *reason ? " " : "", reason);
            print_headers(ocisbx_http_response_headers(resp));
            printf("\n");
        } else if (rc == 0 && ocisbx_http_response_status(resp) / 100 == 2) {
            /* the status is always shown (other answers: in the error line);
             * stdout stays the exact body */
            fprintf(stderr, "HTTP %d%s%s\n", ocisbx_http_response_status(resp), *reason ? " " : "", reason);
        }
        if (blen)
            fwrite(body, 1, blen, stdout); /* a failure is reported by cli_finish_stdout */
    }
    if (rc != 0)
        status = cli_fail_last();
    else if (fflush(stdout) != 0 || ferror(stdout))
        status = cli_stdout_failed();
    else if (ocisbx_http_response_status(resp) < 200 || ocisbx_http_response_status(resp) > 299)
        status = cli_error(CLI_EXIT_FAIL, "%s %s: HTTP %d%s%s", ocisbx_http_request_method(req),
                           ocisbx_http_request_url(req), ocisbx_http_response_status(resp),
                           *ocisbx_http_response_reason(resp) ? " " : "", ocisbx_http_response_reason(resp));
    ocisbx_http_response_free(resp);
    ocisbx_http_free(http);
out:
    free(stdin_body);
    ocisbx_http_request_free(req);
    return status;
}
