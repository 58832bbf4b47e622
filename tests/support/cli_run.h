/* Runs the ocisbx program (OCISBX_CLI_PATH) as a child process for CLI
 * tests: argv, optional standard input, extra environment; collects the
 * exit status, stdout and stderr. */
#ifndef OCISBX_TEST_CLI_RUN_H
#define OCISBX_TEST_CLI_RUN_H

#include <stddef.h>

typedef struct cli_result {
    int status; /* exit status, or 128 + signal */
    char *out;  /* NUL-ended; out_len bytes */
    size_t out_len;
    char *err;
} cli_result;

/* args: NULL-terminated, without the program name. stdin_data may be NULL
 * (empty input). env: NULL-terminated "NAME=VALUE" entries added to the
 * child's environment (or NULL). Returns 0, or -1 when the child could not
 * be run (a line on stderr says why). */
int cli_run(const char *const *args, const char *stdin_data, const char *const *env, cli_result *out);
void cli_result_free(cli_result *r);

#define CLI_RUN(r, ...)                                      \
    do {                                                     \
        const char *const cli_args_[] = {__VA_ARGS__, NULL}; \
        if (cli_run(cli_args_, NULL, NULL, (r)) != 0)        \
            abort();                                         \
    } while (0)

#endif
