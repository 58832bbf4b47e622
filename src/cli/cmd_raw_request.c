/* ocisbx raw-request: signs and sends any request, or prints it with
 * --dry-run (request line, then every header in send order). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

typedef struct {
    const char *method, *url, *body_file, *content_type, *date;
    bool dry_run, include;
} raw_args;

/* CLI_EXIT_OK with *a filled, or the exit status of a usage error (--help
 * never comes here: main answers it from the command table). */
static int parse_args(int argc, char **argv, raw_args *a)
{
    static const char *const names[] = {"method", "url", "body-file", "content-type", "date"};
    const char **slots[] = {&a->method, &a->url, &a->body_file, &a->content_type, &a->date};
    memset(a, 0, sizeof *a);
    a->method = "GET";
    bool options_end = false;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m = 0;
        size_t k = 0;
        if (options_end) /* raw-request takes no arguments besides its options */
            return cli_error(CLI_EXIT_USAGE, "raw-request: unexpected argument %s", argv[i]);
        if (strcmp(argv[i], "--") == 0) {
            options_end = true; /* the end of the options */
            continue;
        }
        for (k = 0; k < sizeof names / sizeof *names; k++)
            if ((m = cli_opt_value(argc, argv, &i, names[k], &v)) != 0)
                break;
        if (m < 0)
            return CLI_EXIT_USAGE;
        if (m > 0)
            *slots[k] = v;
        else if (cli_opt_flag(argv[i], "dry-run"))
            a->dry_run = true;
        else if (strcmp(argv[i], "-i") == 0 || cli_opt_flag(argv[i], "include"))
            a->include = true;
        else if (argv[i][0] == '-')
            return cli_unknown_option("raw-request", argv[i]);
        else
            return cli_error(CLI_EXIT_USAGE, "raw-request: unexpected argument %s", argv[i]);
    }
    if (!a->url)
        return cli_error(CLI_EXIT_USAGE, "raw-request: --url is required");
    return CLI_EXIT_OK;
}

/* The request's content type, date and body (a file, or stdin for "-",
 * kept in *stdin_body); CLI_EXIT_OK or the exit status. */
static int set_request(const raw_args *a, ocisbx_http_request *req, char **stdin_body)
{
    if ((a->content_type && ocisbx_http_request_set_content_type(req, a->content_type) != 0) ||
        (a->date && ocisbx_http_request_set_date(req, a->date) != 0))
        return cli_error(CLI_EXIT_USAGE, "raw-request: %s", ocisbx_error_message(ocisbx_error_last()));
    if (a->body_file && strcmp(a->body_file, "-") == 0) {
        size_t len = 0;
        if (cli_read_file("-", stdin_body, &len) != 0)
            return CLI_EXIT_FAIL;
        if (ocisbx_http_request_set_body(req, *stdin_body, len) != 0)
            return cli_fail_last();
    } else if (a->body_file && ocisbx_http_request_set_body_file(req, a->body_file) != 0) {
        return cli_fail_last();
    }
    return CLI_EXIT_OK;
}

/* --dry-run: the request line and every header, as signed and sent. */
static int print_prepared(ocisbx_http *http, ocisbx_http_request *req)
{
    ocisbx_headers *hl = NULL;
    int status = CLI_EXIT_OK;
    if (ocisbx_http_prepare(http, req, &hl) != 0) {
        status = cli_fail_last();
    } else {
        /* the URL as signed and sent (normalised) */
        printf("%s %s\n", ocisbx_http_request_method(req), ocisbx_http_request_url(req));
        print_headers(hl);
    }
    ocisbx_headers_free(hl);
    return status;
}

/* Sends the request and prints the answer: the body on stdout (with -i the
 * status line and headers before it), the status of a 2xx on stderr. */
static int send_and_print(ocisbx_http *http, ocisbx_http_request *req, bool include)
{
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
    int status = CLI_EXIT_OK;
    if (rc != 0)
        status = cli_fail_last();
    else if (fflush(stdout) != 0 || ferror(stdout))
        status = cli_stdout_failed();
    else if (ocisbx_http_response_status(resp) < 200 || ocisbx_http_response_status(resp) > 299)
        status = cli_error(CLI_EXIT_FAIL, "%s %s: HTTP %d%s%s", ocisbx_http_request_method(req),
                           ocisbx_http_request_url(req), ocisbx_http_response_status(resp),
                           *ocisbx_http_response_reason(resp) ? " " : "", ocisbx_http_response_reason(resp));
    ocisbx_http_response_free(resp);
    return status;
}

int cmd_raw_request(cli_ctx *ctx, int argc, char **argv)
{
    raw_args a;
    int status = parse_args(argc, argv, &a);
    if (status)
        return status;
    ocisbx_http_request *req = NULL;
    if (ocisbx_http_request_new(a.method, a.url, &req) != 0)
        return cli_error(CLI_EXIT_USAGE, "raw-request: %s", ocisbx_error_message(ocisbx_error_last()));
    char *stdin_body = NULL;
    ocisbx_http *http = NULL;
    status = set_request(&a, req, &stdin_body);
    if (status == CLI_EXIT_OK && cli_http(ctx, a.url, &http) != 0)
        status = CLI_EXIT_FAIL;
    if (status == CLI_EXIT_OK)
        status = a.dry_run ? print_prepared(http, req) : send_and_print(http, req, a.include);
    ocisbx_http_free(http);
    free(stdin_body);
    ocisbx_http_request_free(req);
    return status;
}
