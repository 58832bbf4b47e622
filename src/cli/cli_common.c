/* Helpers shared by the CLI's commands. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "util/utf8.h"
#include "util/internal.h"

int cli_error(int exit_code, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One line, and nothing a terminal would act on: newlines become spaces,
     * other control bytes (ESC...) and bytes that are not UTF-8 become \xNN
     * (argv and file contents end up in messages). */
    char shown[sizeof line * 4];
    size_t o = 0;
    const unsigned char *p = (const unsigned char *)line;
    for (size_t i = 0; p[i] && o + 5 < sizeof shown;) {
        size_t n = p[i] < 0x80 ? 1 : ocisbx_utf8_seq_len(p + i, strlen(line + i));
        if (p[i] == '\n' || p[i] == '\r') {
            shown[o++] = ' ';
            i++;
        } else if (n == 0 || p[i] < 0x20 || p[i] == 0x7f || (n == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0)) {
            o += (size_t)snprintf(shown + o, sizeof shown - o, "\\x%02x", p[i]);
            i++;
        } else {
            memcpy(shown + o, p + i, n);
            o += n;
            i += n;
        }
    }
    shown[o] = 0;
    fprintf(stderr, "ocisbx: %s\n", shown);
    return exit_code;
}

/* Set once the stdout failure has been reported: one line, whoever notices. */
static bool stdout_reported;

int cli_stdout_failed(void)
{
    if (!stdout_reported) {
        stdout_reported = true;
        int e = errno;
        cli_error(CLI_EXIT_FAIL, "writing to standard output failed%s%s", e ? ": " : "", e ? strerror(e) : "");
    }
    return CLI_EXIT_FAIL;
}

static volatile sig_atomic_t got_signal;

int cli_finish_stdout(int status)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        /* a write cut by the interrupt: the "interrupted" line says it all */
        if (got_signal)
            return status;
        cli_stdout_failed();
        return status == CLI_EXIT_OK ? CLI_EXIT_FAIL : status;
    }
    return status;
}

/* Retries are on for this run (no --no-retry): a final error after several
 * attempts points at the option. */
static bool retries_on;
/* A terminal on stderr: each retry wait gets a progress line. */
static bool show_progress;

/* ---- interruption: SIGINT/SIGTERM/SIGHUP set a flag (got_signal, above) the
 * library's cancel callback reads; the command unwinds, then main exits
 * 128 + signal ---- */
static bool interrupt_reported;

static void on_signal(int sig)
{
    if (got_signal)
        _exit(128 + sig); /* a second one: the user means it */
    got_signal = sig;
}

void cli_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a blocking wait wakes up at once */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a hang-up (the terminal closed) cancels too, unless it is ignored
     * (nohup) */
    struct sigaction hup;
    if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
        sigaction(SIGHUP, &sa, NULL);
}

int cli_cancel_requested(void *user_data)
{
    (void)user_data;
    return got_signal != 0;
}

int cli_interrupt_status(void)
{
    if (!got_signal)
        return 0;
    if (!interrupt_reported) {
        interrupt_reported = true;
        cli_error(0, "interrupted (%s)",
                  got_signal == SIGINT ? "SIGINT" : got_signal == SIGHUP ? "SIGHUP" : "SIGTERM");
    }
    return 128 + got_signal;
}

int cli_fail_last(void)
{
    /* Interrupted: the call's own ECANCELED message would only repeat it. */
    if (got_signal)
        return cli_interrupt_status();
    /* A callback that stopped because stdout broke: say that, not "canceled". */
    if (ferror(stdout))
        return cli_stdout_failed();
    const ocisbx_error *e = ocisbx_error_last();
    const char *m = ocisbx_error_message(e);
    if (retries_on && ocisbx_error_attempts(e) > 1)
        return cli_error(CLI_EXIT_FAIL, "%s; --no-retry makes one attempt only", m);
    return cli_error(CLI_EXIT_FAIL, "%s", m);
}

/* The transport's retry callback: one short progress line per wait. */
static void on_retry(int attempt, int max_attempts, int64_t delay_ms, int http_status, const char *cause,
                     const char *request_id, void *ud)
{
    (void)http_status, (void)request_id, (void)ud;
    cli_transfer_retrying(); /* the attempt's bytes come again: not counted twice */
    if (!show_progress)
        return;
    fprintf(stderr, "ocisbx: %s; retrying in %.1f s (attempt %d of %d; --no-retry to stop)\n", cause,
            (double)delay_ms / 1000.0, attempt, max_attempts);
    fflush(stderr);
}

/* --debug: the library's debug log, already redacted by the library. */
static void debug_log(int level, const char *line, void *ud)
{
    (void)ud;
    static const char *const names[] = {"error", "warn", "info", "debug"};
    fprintf(stderr, "ocisbx: [%s] %s\n", level >= 0 && level <= 3 ? names[level] : "log", line);
    fflush(stderr);
}

void cli_progress_setup(const cli_ctx *ctx)
{
    retries_on = !ctx->g.no_retry;
    /* a terminal only: scripts and tests expect the one error line */
    show_progress = retries_on && isatty(STDERR_FILENO);
    if (ctx->g.debug)
        ocisbx_set_log(debug_log, OCISBX_LOG_DEBUG, NULL);
}

void cli_log_warnings(const cli_ctx *ctx)
{
    if (!ctx->g.debug)
        ocisbx_set_log(debug_log, OCISBX_LOG_WARN, NULL);
}

void (*cli_opt_probe)(const char *name, bool value);

int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    if (cli_opt_probe)
        cli_opt_probe(name, true);
    const char *arg = argv[*i];
    if (strncmp(arg, "--", 2) != 0)
        return 0;
    size_t n = strlen(name);
    if (strncmp(arg + 2, name, n) != 0)
        return 0;
    if (arg[2 + n] == '=') {
        *value = arg + 3 + n;
        return 1;
    }
    if (arg[2 + n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        cli_error(CLI_EXIT_USAGE, "option --%s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

bool cli_opt_flag(const char *arg, const char *name)
{
    if (cli_opt_probe)
        cli_opt_probe(name, false);
    return strncmp(arg, "--", 2) == 0 && strcmp(arg + 2, name) == 0;
}

int cli_unknown_option(const char *cmd, const char *arg)
{
    return cli_error(CLI_EXIT_USAGE, "%s: unknown option %s (see --help)", cmd, arg);
}

int cli_http_apply_globals(const cli_ctx *ctx, ocisbx_http_options *o)
{
    const cli_globals *g = &ctx->g;
    int rc = 0;
    const char *ca = ocisbx_settings_get(ctx->settings, "ca_bundle");
    if (ca)
        rc = ocisbx_http_options_set_ca_bundle(o, ca);
    if (rc == 0 && g->no_retry)
        rc = ocisbx_http_options_set_retries(o, 0);
    if (rc == 0 && g->max_retries_n >= 0)
        rc = ocisbx_http_options_set_max_attempts(o, g->max_retries_n + 1);
    if (rc == 0 && g->connection_timeout_s > 0)
        rc = ocisbx_http_options_set_connect_timeout_ms(o, (int64_t)g->connection_timeout_s * 1000);
    if (rc == 0 && g->deadline_s > 0)
        rc = ocisbx_http_options_set_deadline_ms(o, (int64_t)g->deadline_s * 1000);
    /* a stream's limit is the gap between bytes: the read timeout too */
    if (rc == 0 && g->read_timeout_s > 0)
        rc = ocisbx_http_options_set_read_timeout_ms(o, (int64_t)g->read_timeout_s * 1000);
    if (rc == 0 && g->read_timeout_s > 0)
        rc = ocisbx_http_options_set_stream_idle_timeout_ms(o, (int64_t)g->read_timeout_s * 1000);
    if (rc == 0)
        rc = ocisbx_http_options_set_cancel(o, cli_cancel_requested, NULL);
    if (rc == 0)
        rc = ocisbx_http_options_set_retry_callback(o, on_retry, NULL);
    /* a terminal only: nothing at all when stderr is piped */
    if (rc == 0 && ctx->transfer_progress && isatty(STDERR_FILENO))
        rc = ocisbx_http_options_set_progress_callback(o, cli_transfer_progress, NULL);
    return rc;
}

/* JSON as the OCI CLI prints it (Python's json.dumps with indent=2):
 * 2-space indentation, "key": value, empty containers as {} and []. The
 * scalars (strings with their escapes, numbers) are cJSON's own output. */
typedef struct jbuf {
    char *data;
    size_t len, cap;
} jbuf;

static int jb_add(jbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return OCISBX_ENOMEM;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

static int json_scalar(jbuf *b, const cJSON *item)
{
    char *t = cJSON_PrintUnformatted(item);
    if (!t)
        return OCISBX_ENOMEM;
    int rc = jb_add(b, t, strlen(t));
    cJSON_free(t);
    return rc;
}

static int json_indent(jbuf *b, int depth)
{
    for (int i = 0; i < depth; i++)
        if (jb_add(b, "  ", 2) != 0)
            return OCISBX_ENOMEM;
    return 0;
}

static int json_pretty(jbuf *b, const cJSON *item, int depth)
{
    bool obj = cJSON_IsObject(item);
    if (!obj && !cJSON_IsArray(item))
        return json_scalar(b, item);
    if (!item->child)
        return jb_add(b, obj ? "{}" : "[]", 2);
    int rc = jb_add(b, obj ? "{\n" : "[\n", 2);
    for (const cJSON *c = item->child; c && rc == 0; c = c->next) {
        rc = json_indent(b, depth + 1);
        if (rc == 0 && obj) {
            /* the key, escaped as a string value is */
            cJSON *key = cJSON_CreateString(c->string ? c->string : "");
            rc = key ? json_scalar(b, key) : OCISBX_ENOMEM;
            cJSON_Delete(key);
            if (rc == 0)
                rc = jb_add(b, ": ", 2);
        }
        if (rc == 0)
            rc = json_pretty(b, c, depth + 1);
        if (rc == 0)
            rc = c->next ? jb_add(b, ",\n", 2) : jb_add(b, "\n", 1);
    }
    if (rc == 0)
        rc = json_indent(b, depth);
    if (rc == 0)
        rc = jb_add(b, obj ? "}" : "]", 1);
    return rc;
}

int cli_print_json(const cJSON *json)
{
    jbuf b = {NULL, 0, 0};
    if (json_pretty(&b, json, 0) != 0 || jb_add(&b, "\n", 1) != 0) {
        free(b.data);
        return cli_error(CLI_EXIT_FAIL, "out of memory printing JSON");
    }
    bool ok = fwrite(b.data, 1, b.len, stdout) == b.len;
    free(b.data);
    return ok ? 0 : cli_error(CLI_EXIT_FAIL, "writing to stdout failed");
}

int cli_print_json_text(const char *text, size_t len)
{
    cJSON *j = len ? cJSON_ParseWithLength(text, len) : NULL;
    if (!j) {
        if (len && fwrite(text, 1, len, stdout) != len)
            return cli_error(CLI_EXIT_FAIL, "writing to stdout failed");
        return 0;
    }
    int rc = cli_print_json(j);
    cJSON_Delete(j);
    return rc;
}

int cli_read_file(const char *path, char **data, size_t *len)
{
    /* one request body: at most what the service takes in one */
    ocisbx_file f;
    if (ocisbx_file_read(path, "body", OCISBX_FILE_PART_MAX, OCISBX_READ_STDIN, &f) != 0)
        return cli_fail_last();
    *data = ocisbx_file_detach(&f, len);
    return 0;
}

int cli_secret_env(const char *cmd, const char *arg, char *buf, size_t cap, const char **value)
{
    if (strchr(arg, '='))
        return cli_split_env(cmd, "--secret-env", arg, buf, cap, value);
    /* NAME alone: the value comes from this process's environment, so it is
     * not on the command line (ps, /proc/PID/cmdline). The name is never
     * shown either: it may be a value typed in its place. */
    if (!arg[0])
        return cli_error(CLI_EXIT_USAGE, "%s: --secret-env wants NAME or NAME=VALUE (the name is empty)", cmd);
    size_t n = strlen(arg);
    if (n >= cap)
        return cli_error(CLI_EXIT_USAGE, "%s: --secret-env NAME: the name is longer than %zu bytes", cmd, cap - 1);
    const char *v = getenv(arg);
    if (!v)
        return cli_error(CLI_EXIT_USAGE,
                         "%s: --secret-env NAME takes the value of the variable NAME from this environment, and no "
                         "such variable is set (export it first, or give NAME=VALUE; the name is not shown, in "
                         "case it is a value)",
                         cmd);
    memcpy(buf, arg, n + 1);
    *value = v;
    return 0;
}
