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
    int signal; /* the signal that killed it, 0 when it exited */
    long peak_rss_kb; /* the child's peak resident memory (not with a pseudo-terminal) */
} cli_result;

/* args: NULL-terminated, without the program name. stdin_data may be NULL
 * (empty input). env: NULL-terminated entries for the child's environment
 * (or NULL): "NAME=VALUE" sets NAME, "NAME" alone unsets it. The child has
 * OCI_SANDBOX_POLL_INTERVAL=0.1 unless the test's environment or env sets it
 * (the emulator needs no 2 s between polls). Returns 0, or
 * -1 when the child could not be run (a line on stderr says why). */
int cli_run(const char *const *args, const char *stdin_data, const char *const *env, cli_result *out);
void cli_result_free(cli_result *r);

/* The child's controlling terminal. */
typedef enum cli_tty {
    CLI_TTY_INHERIT = 0,  /* the test's own, if it has one (cli_run) */
    CLI_TTY_NONE = 1,     /* a new session without one: opening /dev/tty fails */
    CLI_TTY_PTY = 2,      /* a new pseudo-terminal (stdin, stdout, stderr stay files) */
    CLI_TTY_PTY_STDIO = 3 /* a new pseudo-terminal that is also stdin, stdout and stderr: the
                           * result's out is all the terminal showed (both streams), err "" */
} cli_tty;

typedef struct cli_run_options {
    const char *stdin_data; /* may be NULL */
    const char *const *env; /* may be NULL */
    cli_tty tty;
    const char *tty_prompt; /* CLI_TTY_PTY: when this text has come on the terminal... */
    const char *tty_answer; /* ...this is typed (e.g. "y\n"); NULL: nothing is */
    char *tty_out;          /* CLI_TTY_PTY: all the terminal showed (free()) */
    int timeout_s;          /* the child is killed after this (0: 120) */
    const char *program;    /* another program to run (NULL: the ocisbx program) */
    const char *stdout_to;  /* stdout opened there (e.g. /dev/full) instead of collected; NULL */
} cli_run_options;

/* cli_run with a terminal of choice. o may be NULL (as cli_run). */
int cli_run_ex(const char *const *args, cli_run_options *o, cli_result *out);

/* A child started without waiting for it (to signal it while it runs):
 * cli_run_start, then cli_run_finish. Not with a pseudo-terminal. */
typedef struct cli_proc {
    int pid;
    int in_fd, out_fd, err_fd; /* the child's stdin, stdout, stderr (temporary files) */
} cli_proc;
int cli_run_start(const char *const *args, const cli_run_options *o, cli_proc *p);
/* What the child wrote on stderr / stdout so far (malloc'd; NUL-ended). */
char *cli_proc_stderr(const cli_proc *p);
char *cli_proc_stdout(const cli_proc *p);
/* Waits for the child and collects its result; the files are closed. */
int cli_run_finish(cli_proc *p, cli_result *out);

#define CLI_RUN(r, ...)                                      \
    do {                                                     \
        const char *const cli_args_[] = {__VA_ARGS__, NULL}; \
        if (cli_run(cli_args_, NULL, NULL, (r)) != 0)        \
            abort();                                         \
    } while (0)

#endif
