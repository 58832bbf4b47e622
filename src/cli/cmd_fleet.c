/* ocisbx fleet exec: N sandboxes from one thread through the engine
 * (<ocisbx/engine.h>): each created, the command run once with
 * OCISBX_FLEET_INDEX set, each closed; or existing sandboxes
 * (--sandbox-ids FILE), closed by none. JSON or table output; a progress
 * line on a terminal; SIGINT / SIGTERM stop the starting, cancel what
 * runs and close every sandbox the fleet created. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ocisbx/engine.h"
#include "ocisbx/util.h"
#include "util/internal.h"
#include "util/utf8.h"

#define FLEET_MAX 100000
#define FLEET_DEFAULT_CONCURRENCY 32
#define FLEET_STOP_TIMEOUT_MS 20000 /* an interrupted fleet ends within 30 s */
#define FLEET_INTERRUPT_MS 20000    /* after SIGINT every request ends by then, whatever the server does */
#define FLEET_INTERRUPT_MAX_S 20    /* --interrupt-grace: 0..this */
#define TABLE_OUTPUT_SHOWN 40

typedef struct frow {
    struct fleet *f;
    int index;
    char *sandbox_id;
    ocisbx_engine_sandbox *sb;
    bool has_exit, timed_out, truncated, execed, done, closed;
    int exit_code;
    char *output;
    size_t output_len;
    int64_t t0, create_ms, exec_ms, duration_ms;
    int err_rc, err_status;
    char *err_code, *err_msg, *err_rid;
} frow;

typedef struct fleet {
    cli_ctx *ctx;
    ocisbx_engine *e;
    frow *rows;
    int n, next, active, concurrency;
    int finished, failed;
    bool attached, stopping, progress, table;
    char *command;
    int64_t timeout_ms, grace_ms; /* grace_ms: after SIGINT, every request ends by then */
    size_t max_output;
    const char *env[CLI_API_MAX_REPEAT];
    int n_env;
} fleet;

/* ---- a row's end ---- */
static void row_error(frow *r, int rc)
{
    if (r->err_rc)
        return;
    const ocisbx_error *e = ocisbx_error_last();
    const char *code = ocisbx_error_service_code(e), *rid = ocisbx_error_request_id(e);
    r->err_rc = rc;
    r->err_status = ocisbx_error_http_status(e);
    r->err_code = ocisbx_strdup(code ? code : ocisbx_status_name(rc));
    r->err_msg = ocisbx_strdup(ocisbx_error_message(e));
    r->err_rid = rid ? ocisbx_strdup(rid) : NULL;
}

static void start_more(fleet *f);
static void left_by_create(frow *r);

static void row_done(frow *r)
{
    fleet *f = r->f;
    r->done = true;
    r->sb = NULL;
    f->active--;
    f->finished++;
    if (r->err_rc || !r->has_exit || r->exit_code != 0)
        f->failed++;
    start_more(f);
}

static void on_close(int rc, void *ud)
{
    frow *r = ud;
    if (rc)
        row_error(r, rc);
    else
        r->closed = true;
    row_done(r);
}

static void close_row(frow *r)
{
    int rc = ocisbx_engine_close_sandbox(r->f->e, r->sb, on_close, r, NULL);
    if (rc) {
        row_error(r, rc);
        row_done(r);
    }
}

/* The output as a JSON string carries it, as the harness's results do: a
 * NUL byte and each byte that does not start valid UTF-8 become U+FFFD, so
 * nothing after a NUL is lost. */
static void clean_output(frow *r, const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    ocisbx_buf b = OCISBX_BUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < len && !rc;) {
        size_t n = p[i] ? ocisbx_utf8_seq_len(p + i, len - i) : 0;
        rc = n ? ocisbx_buf_append(&b, data + i, n) : ocisbx_buf_appends(&b, "\xef\xbf\xbd");
        i += n ? n : 1;
    }
    r->output_len = rc ? 0 : b.len;
    r->output = rc ? NULL : ocisbx_buf_detach(&b);
    if (rc)
        ocisbx_buf_free(&b);
    if (!r->output)
        r->output = ocisbx_strdup("");
}

static void on_exec(int rc, ocisbx_exec_result *res, void *ud)
{
    frow *r = ud;
    r->execed = true;
    r->exec_ms = ocisbx_time_monotonic_ms() - r->t0 - r->create_ms;
    if (rc) {
        row_error(r, rc);
    } else {
        r->has_exit = ocisbx_exec_result_has_exit_code(res, &r->exit_code) == 1;
        r->timed_out = ocisbx_exec_result_timed_out(res) != 0;
        r->truncated = ocisbx_exec_result_truncated(res) != 0;
        r->duration_ms = ocisbx_exec_result_duration_ms(res);
        size_t n = 0;
        const char *o = ocisbx_exec_result_output(res, &n);
        clean_output(r, o ? o : "", n);
    }
    ocisbx_exec_result_free(res);
    close_row(r);
}

static void exec_row(frow *r)
{
    fleet *f = r->f;
    ocisbx_exec_options *o = NULL;
    char idx[24], name[256];
    snprintf(idx, sizeof idx, "%d", r->index);
    int rc = ocisbx_exec_options_new(&o);
    if (!rc && f->timeout_ms)
        rc = ocisbx_exec_options_set_timeout_ms(o, f->timeout_ms);
    if (!rc && f->max_output)
        rc = ocisbx_exec_options_set_max_output_bytes(o, f->max_output);
    for (int i = 0; !rc && i < f->n_env; i++) {
        const char *value = NULL;
        if (cli_split_env("fleet exec", "--env", f->env[i], name, sizeof name, &value) == 0)
            rc = ocisbx_exec_options_add_env(o, name, value, 0);
    }
    if (!rc)
        rc = ocisbx_exec_options_add_env(o, "OCISBX_FLEET_INDEX", idx, 0);
    if (!rc)
        rc = ocisbx_engine_exec(f->e, r->sb, f->command, o, on_exec, r, NULL);
    ocisbx_exec_options_free(o);
    if (rc) {
        row_error(r, rc);
        close_row(r);
    }
}

static void on_create(int rc, ocisbx_engine_sandbox *sb, void *ud)
{
    frow *r = ud;
    r->create_ms = ocisbx_time_monotonic_ms() - r->t0;
    if (rc) {
        left_by_create(r);
        row_error(r, rc);
        row_done(r);
        return;
    }
    r->sb = sb;
    r->sandbox_id = ocisbx_strdup(ocisbx_engine_sandbox_id(sb));
    if (r->f->stopping)
        close_row(r);
    else
        exec_row(r);
}

/* A create that failed after its answer and whose delete failed too names
 * its sandbox in the error ("deleting sandbox ID failed"): the row keeps
 * the id, not closed. */
static void left_by_create(frow *r)
{
    const char *m = ocisbx_error_message(ocisbx_error_last());
    const char *p = m ? strstr(m, "deleting sandbox ") : NULL;
    if (!p)
        return;
    p += strlen("deleting sandbox ");
    size_t n = strcspn(p, " )");
    if (n > 0 && n < 256 && !strncmp(p + n, " failed", 7))
        r->sandbox_id = ocisbx_strndup(p, n);
}

static void start_more(fleet *f)
{
    while (!f->stopping && f->active < f->concurrency && f->next < f->n) {
        frow *r = &f->rows[f->next++];
        f->active++;
        r->t0 = ocisbx_time_monotonic_ms();
        if (f->attached) {
            exec_row(r);
            continue;
        }
        int rc = ocisbx_engine_create_sandbox(f->e, on_create, r, NULL);
        if (rc) {
            row_error(r, rc);
            row_done(r);
        }
    }
}

/* ---- output ---- */
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The p-th percentile (nearest rank) of n values, sorted in place; 0 for none. */
static int64_t percentile(int64_t *v, int n, int p)
{
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    int k = (p * n + 99) / 100;
    return v[k > 0 ? k - 1 : 0];
}

static cJSON *row_json(const frow *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", r->index);
    r->sandbox_id ? cJSON_AddStringToObject(o, "sandbox_id", r->sandbox_id) : cJSON_AddNullToObject(o, "sandbox_id");
    r->has_exit ? cJSON_AddNumberToObject(o, "exit_code", r->exit_code) : cJSON_AddNullToObject(o, "exit_code");
    cJSON_AddBoolToObject(o, "timed_out", r->timed_out);
    cJSON_AddBoolToObject(o, "truncated", r->truncated);
    r->output ? cJSON_AddStringToObject(o, "output", r->output) : cJSON_AddNullToObject(o, "output");
    cJSON_AddNumberToObject(o, "duration_ms", (double)r->duration_ms);
    if (!r->err_rc) {
        cJSON_AddNullToObject(o, "error");
        return o;
    }
    cJSON *e = cJSON_AddObjectToObject(o, "error");
    cJSON_AddStringToObject(e, "code", r->err_code ? r->err_code : "");
    cJSON_AddStringToObject(e, "message", r->err_msg ? r->err_msg : "");
    r->err_status ? cJSON_AddNumberToObject(e, "status", r->err_status) : cJSON_AddNullToObject(e, "status");
    r->err_rid ? cJSON_AddStringToObject(e, "request_id", r->err_rid) : cJSON_AddNullToObject(e, "request_id");
    return o;
}

/* A sandbox the fleet created and did not close (its id known). */
static bool row_left(const frow *r)
{
    return !r->f->attached && r->sandbox_id && !r->closed;
}

/* stderr: the sandboxes left behind by id, and the creates never answered. */
static void report_left(fleet *f)
{
    int n = 0, unknown = 0;
    for (int i = 0; i < f->n; i++) {
        const frow *r = &f->rows[i];
        n += row_left(r);
        unknown += !f->attached && !r->sandbox_id && r->err_rc == OCISBX_ETIMEOUT && r->create_ms > 0;
    }
    if (n > 0) {
        fprintf(stderr, "ocisbx: fleet exec: %d sandbox%s not closed (delete with ocisbx close --sandbox-id ID):", n,
                n == 1 ? "" : "es");
        for (int i = 0; i < f->n; i++)
            if (row_left(&f->rows[i]))
                fprintf(stderr, " %s", f->rows[i].sandbox_id);
        fputc('\n', stderr);
    }
    if (unknown > 0)
        fprintf(stderr, "ocisbx: fleet exec: %d create%s not answered in time: a sandbox may exist (list the "
                "project's sandboxes)\n", unknown, unknown == 1 ? "" : "s");
}

typedef struct summary {
    int ok, failed;
    int64_t wall_ms, c50, c99, x50, x99;
    uint64_t throttled;
} summary;

static void summarize(fleet *f, int64_t wall_ms, summary *s)
{
    int64_t *c = calloc((size_t)f->n + 1, sizeof *c), *x = calloc((size_t)f->n + 1, sizeof *x);
    int nc = 0, nx = 0;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < f->n; i++) {
        const frow *r = &f->rows[i];
        bool ok = !r->err_rc && r->has_exit && r->exit_code == 0 && r->done;
        s->ok += ok;
        s->failed += !ok;
        if (c && !f->attached && r->sandbox_id)
            c[nc++] = r->create_ms;
        if (x && r->execed && !r->err_rc)
            x[nx++] = r->exec_ms;
    }
    s->wall_ms = wall_ms;
    s->c50 = c ? percentile(c, nc, 50) : 0;
    s->c99 = c ? percentile(c, nc, 99) : 0;
    s->x50 = x ? percentile(x, nx, 50) : 0;
    s->x99 = x ? percentile(x, nx, 99) : 0;
    s->throttled = ocisbx_engine_throttled(f->e);
    free(c);
    free(x);
}

static int print_json(fleet *f, const summary *s)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *rows = cJSON_AddArrayToObject(root, "sandboxes");
    for (int i = 0; i < f->n; i++)
        cJSON_AddItemToArray(rows, row_json(&f->rows[i]));
    cJSON *sm = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sm, "ok", s->ok);
    cJSON_AddNumberToObject(sm, "failed", s->failed);
    cJSON_AddNumberToObject(sm, "wall_ms", (double)s->wall_ms);
    cJSON_AddNumberToObject(sm, "create_p50_ms", (double)s->c50);
    cJSON_AddNumberToObject(sm, "create_p99_ms", (double)s->c99);
    cJSON_AddNumberToObject(sm, "exec_p50_ms", (double)s->x50);
    cJSON_AddNumberToObject(sm, "exec_p99_ms", (double)s->x99);
    cJSON_AddNumberToObject(sm, "throttled", (double)s->throttled);
    int left = 0;
    for (int i = 0; i < f->n; i++)
        left += row_left(&f->rows[i]);
    if (left > 0) { /* only then: the sandboxes the fleet created and could not close */
        cJSON *nc = cJSON_AddArrayToObject(sm, "not_closed");
        for (int i = 0; i < f->n; i++)
            if (row_left(&f->rows[i]))
                cJSON_AddItemToArray(nc, cJSON_CreateString(f->rows[i].sandbox_id));
    }
    int rc = cli_print_json(root);
    cJSON_Delete(root);
    return rc;
}

static void print_table(fleet *f, const summary *s)
{
    printf("%-6s %-28s %-5s %-9s %-9s %-8s %s\n", "INDEX", "SANDBOX", "EXIT", "TIMED_OUT", "TRUNCATED",
           "MS", "OUTPUT / ERROR");
    for (int i = 0; i < f->n; i++) {
        const frow *r = &f->rows[i];
        char ex[16];
        snprintf(ex, sizeof ex, r->has_exit ? "%d" : "-", r->exit_code);
        const char *what = r->err_rc ? r->err_msg : r->output ? r->output : "";
        size_t len = strcspn(what ? what : "", "\n");
        /* an error row: its code and HTTP status first, then the message's start */
        char head[160] = "";
        if (r->err_rc && r->err_status)
            snprintf(head, sizeof head, "error: %s (%d%s%s): ", r->err_code ? r->err_code : "-", r->err_status,
                     r->err_rid ? ", request " : "", r->err_rid ? r->err_rid : "");
        else if (r->err_rc)
            snprintf(head, sizeof head, "error: %s: ", r->err_code ? r->err_code : "-");
        printf("%-6d %-28s %-5s %-9s %-9s %-8lld %s%.*s\n", r->index, r->sandbox_id ? r->sandbox_id : "-", ex,
               r->timed_out ? "yes" : "no", r->truncated ? "yes" : "no", (long long)r->duration_ms, head,
               (int)(len < TABLE_OUTPUT_SHOWN ? len : TABLE_OUTPUT_SHOWN), what ? what : "");
    }
    printf("ok %d, failed %d, wall %lld ms, create p50 %lld ms p99 %lld ms, exec p50 %lld ms p99 %lld ms, "
           "throttled %llu\n",
           s->ok, s->failed, (long long)s->wall_ms, (long long)s->c50, (long long)s->c99, (long long)s->x50,
           (long long)s->x99, (unsigned long long)s->throttled);
}

/* ---- the run ---- */
static void show_progress(fleet *f, bool last)
{
    if (!f->progress)
        return;
    if (last) {
        fprintf(stderr, "\r\033[K");
        return;
    }
    fprintf(stderr, "\rfleet: %d/%d finished, %d failed, %d running%s\033[K", f->finished, f->n, f->failed,
            f->active, f->stopping ? " (interrupted: closing)" : "");
}

static void interrupt(fleet *f)
{
    f->stopping = true;
    (void)ocisbx_engine_set_deadline(f->e, f->grace_ms);
    ocisbx_engine_cancel_all(f->e); /* canceled execs close their sandbox; creates delete theirs */
}

static int run_fleet(fleet *f)
{
    int64_t t0 = ocisbx_time_monotonic_ms(), shown = 0, stop_at = 0;
    start_more(f);
    while (ocisbx_engine_pending(f->e) > 0) {
        int left = ocisbx_engine_run(f->e, 250);
        if (left < 0)
            return cli_fail_last();
        int64_t now = ocisbx_time_monotonic_ms();
        if (!f->stopping && cli_cancel_requested(NULL)) {
            interrupt(f);
            stop_at = now;
        }
        if (stop_at && now - stop_at > f->grace_ms + 5000)
            break; /* every request has ended by now; a bug's symptom otherwise: end anyway */
        if (now - shown >= 250) {
            show_progress(f, false);
            shown = now;
        }
    }
    show_progress(f, true);
    report_left(f);
    for (int i = f->next; i < f->n; i++) { /* never started: interrupted */
        ocisbx_fail(OCISBX_ECANCELED, "fleet: not started (interrupted)");
        row_error(&f->rows[i], OCISBX_ECANCELED);
    }
    summary s;
    summarize(f, ocisbx_time_monotonic_ms() - t0, &s);
    int st = cli_interrupt_status();
    if (f->table)
        print_table(f, &s);
    else if (print_json(f, &s) != 0)
        return CLI_EXIT_FAIL;
    if (st)
        return st;
    return s.failed == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* ---- the command line ---- */
typedef struct fleet_args {
    const char *project, *count, *concurrency, *shape, *timeout, *max_output, *output, *ids_file, *grace;
    int argc0; /* the command's first word (after --), 0: none */
} fleet_args;

static int parse_args(fleet *f, int argc, char **argv, fleet_args *a)
{
    const char *cmd = "fleet exec";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            a->argc0 = i + 1 < argc ? i + 1 : 0;
            break;
        }
        const char *v = NULL;
        const char **slot = NULL;
        int r = 0;
        static const char *const names[] = {"project-id",       "count",  "concurrency", "shape",
                                            "timeout",          "max-output-bytes", "output", "sandbox-ids",
                                            "interrupt-grace",  NULL};
        const char **fields[] = {&a->project,    &a->count,  &a->concurrency, &a->shape, &a->timeout,
                                 &a->max_output, &a->output, &a->ids_file,    &a->grace};
        for (int k = 0; names[k] && !r; k++)
            if ((r = cli_opt_value(argc, argv, &i, names[k], &v)) != 0)
                slot = fields[k];
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r > 0) {
            *slot = v;
            continue;
        }
        if ((r = cli_opt_value(argc, argv, &i, "env", &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            char name[256];
            const char *value = NULL;
            if (f->n_env == CLI_API_MAX_REPEAT)
                return cli_error(CLI_EXIT_USAGE, "%s: at most %d --env", cmd, CLI_API_MAX_REPEAT);
            if (cli_split_env(cmd, "--env", v, name, sizeof name, &value))
                return CLI_EXIT_USAGE;
            /* refused before any create: a shell name, and not the fleet's own */
            if (!name[0] || (name[0] >= '0' && name[0] <= '9') ||
                strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name))
                return cli_error(CLI_EXIT_USAGE, "%s: --env %.100s: not a valid variable name", cmd, name);
            if (!strcmp(name, "OCISBX_FLEET_INDEX"))
                return cli_error(CLI_EXIT_USAGE, "%s: --env OCISBX_FLEET_INDEX: the fleet sets it", cmd);
            f->env[f->n_env++] = v;
            continue;
        }
        return cli_unknown_option(cmd, argv[i]);
    }
    if (!a->argc0)
        return cli_error(CLI_EXIT_USAGE, "%s: the command is missing (-- COMMAND [ARG...])", cmd);
    return 0;
}

/* One word: a shell command line; several: an argv, each word quoted. */
static int command_text(int argc, char **argv, int first, char **out)
{
    if (argc - first == 1)
        return (*out = ocisbx_strdup(argv[first])) ? 0 : cli_error(CLI_EXIT_FAIL, "out of memory");
    ocisbx_buf b = OCISBX_BUF_INIT;
    int rc = 0;
    for (int i = first; i < argc && !rc; i++) {
        if (i > first)
            rc = ocisbx_buf_appends(&b, " ");
        if (!rc)
            rc = ocisbx_buf_append_shell_quoted(&b, argv[i]);
    }
    if (rc) {
        ocisbx_buf_free(&b);
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    }
    *out = ocisbx_buf_detach(&b);
    return 0;
}

/* --sandbox-ids FILE: one id a line (blank lines and surrounding spaces ignored). */
static int read_ids(fleet *f, const char *path)
{
    char *data = NULL;
    size_t len = 0;
    if (access(path, F_OK) != 0)
        return cli_error(CLI_EXIT_USAGE, "fleet exec: --sandbox-ids %s: not found", path);
    if (cli_read_file(path, &data, &len) != 0)
        return CLI_EXIT_FAIL;
    int n = 0, line = 0;
    for (size_t i = 0; i <= len; i++)
        n += i == len || data[i] == '\n';
    f->rows = calloc((size_t)n + 1, sizeof *f->rows);
    int st = f->rows ? 0 : cli_error(CLI_EXIT_FAIL, "out of memory");
    for (char *p = data, *nl; !st && p && p < data + len; p = nl ? nl + 1 : NULL) {
        nl = memchr(p, '\n', (size_t)(data + len - p));
        char *end = nl ? nl : data + len;
        line++;
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
            end--;
        if (end == p)
            continue;
        if (memchr(p, '\0', (size_t)(end - p)) || f->n >= FLEET_MAX)
            st = cli_error(CLI_EXIT_USAGE, "fleet exec: %s line %d: not a sandbox id", path, line);
        else if (!(f->rows[f->n++].sandbox_id = ocisbx_strndup(p, (size_t)(end - p))))
            st = cli_error(CLI_EXIT_FAIL, "out of memory");
    }
    free(data);
    if (!st && f->n == 0)
        st = cli_error(CLI_EXIT_USAGE, "fleet exec: %s holds no sandbox id", path);
    return st;
}

static int check_args(fleet *f, const fleet_args *a)
{
    const char *cmd = "fleet exec";
    long long v = 0;
    if (a->output && strcmp(a->output, "json") && strcmp(a->output, "table"))
        return cli_error(CLI_EXIT_USAGE, "%s: --output is json or table, not %s", cmd, a->output);
    f->table = a->output && !strcmp(a->output, "table");
    if (!a->ids_file && !a->count)
        return cli_error(CLI_EXIT_USAGE, "%s: give --count N (or --sandbox-ids FILE)", cmd);
    if (a->count && cli_api_int(cmd, "count", a->count, 1, FLEET_MAX, &v))
        return CLI_EXIT_USAGE;
    if (a->ids_file && a->count && v != f->n)
        return cli_error(CLI_EXIT_USAGE, "%s: --count %lld, but %s holds %d ids", cmd, v, a->ids_file, f->n);
    if (!a->ids_file)
        f->n = (int)v;
    f->concurrency = FLEET_DEFAULT_CONCURRENCY;
    if (a->concurrency && cli_api_int(cmd, "concurrency", a->concurrency, 1, 4096, &v))
        return CLI_EXIT_USAGE;
    if (a->concurrency)
        f->concurrency = (int)v;
    if (a->timeout && cli_api_int(cmd, "timeout", a->timeout, 1, 7 * 86400, &v))
        return CLI_EXIT_USAGE;
    f->timeout_ms = a->timeout ? v * 1000 : 0;
    if (a->max_output && cli_api_int(cmd, "max-output-bytes", a->max_output, OCISBX_BACKEND_MIN_MAX_OUTPUT,
                                     1 << 30, &v))
        return CLI_EXIT_USAGE;
    f->max_output = a->max_output ? (size_t)v : 0;
    if (a->grace && cli_api_int(cmd, "interrupt-grace", a->grace, 0, FLEET_INTERRUPT_MAX_S, &v))
        return CLI_EXIT_USAGE;
    f->grace_ms = a->grace ? v * 1000 : FLEET_INTERRUPT_MS;
    return 0;
}

static int make_engine(fleet *f, const fleet_args *a, ocisbx_client **client)
{
    int st = cli_api_client(f->ctx, client);
    if (st)
        return st;
    ocisbx_backend_options *bo = NULL;
    ocisbx_engine_options *eo = NULL;
    const char *project = a->project ? a->project : cli_setting(f->ctx, "project_id");
    int rc = ocisbx_backend_options_new(&bo);
    if (!rc)
        rc = ocisbx_backend_options_set_client(bo, *client);
    if (!rc && a->shape)
        rc = ocisbx_backend_options_set_shape(bo, a->shape);
    if (!rc)
        rc = ocisbx_backend_options_set_stop_timeout_ms(bo, FLEET_STOP_TIMEOUT_MS);
    if (!rc)
        rc = ocisbx_engine_options_new(&eo);
    if (!rc)
        rc = ocisbx_engine_options_set_backend_options(eo, bo);
    if (!rc && project)
        rc = ocisbx_engine_options_set_project_id(eo, project);
    if (!rc)
        rc = ocisbx_engine_new(eo, &f->e);
    ocisbx_engine_options_free(eo);
    ocisbx_backend_options_free(bo);
    char vars[160];
    if (!rc && !f->attached && !project)
        return cli_error(CLI_EXIT_USAGE, "fleet exec: no project id (give --project-id or set %s)",
                         ocisbx_setting_variables("project_id", vars, sizeof vars));
    return rc ? cli_fail_last() : 0;
}

static int attach_all(fleet *f)
{
    for (int i = 0; i < f->n; i++)
        if (ocisbx_engine_attach_sandbox(f->e, f->rows[i].sandbox_id, &f->rows[i].sb) != 0)
            return cli_fail_last();
    return 0;
}

static void fleet_free(fleet *f)
{
    for (int i = 0; f->rows && i < f->n; i++) {
        frow *r = &f->rows[i];
        free(r->sandbox_id);
        free(r->output);
        free(r->err_code);
        free(r->err_msg);
        free(r->err_rid);
    }
    free(f->rows);
    free(f->command);
}

int cmd_fleet(cli_ctx *ctx, int argc, char **argv)
{
    if (argc < 2)
        return cli_error(CLI_EXIT_USAGE, "fleet: missing subcommand (exec)");
    if (strcmp(argv[1], "exec") != 0)
        return cli_error(CLI_EXIT_USAGE, "fleet: unknown subcommand %s (exec)", argv[1]);
    fleet f;
    memset(&f, 0, sizeof f);
    f.ctx = ctx;
    fleet_args a;
    memset(&a, 0, sizeof a);
    ocisbx_client *client = NULL;
    int st = parse_args(&f, argc, argv, &a);
    if (!st && a.ids_file) {
        f.attached = true;
        st = read_ids(&f, a.ids_file);
    }
    if (!st)
        st = check_args(&f, &a);
    if (!st && !f.rows && !(f.rows = calloc((size_t)f.n, sizeof *f.rows)))
        st = cli_error(CLI_EXIT_FAIL, "out of memory");
    if (!st)
        st = command_text(argc, argv, a.argc0, &f.command);
    for (int i = 0; !st && i < f.n; i++) {
        f.rows[i].f = &f;
        f.rows[i].index = i;
    }
    if (!st)
        st = make_engine(&f, &a, &client);
    if (!st && f.attached)
        st = attach_all(&f);
    f.progress = isatty(STDERR_FILENO) != 0;
    if (!st)
        st = run_fleet(&f);
    ocisbx_engine_free(f.e);
    ocisbx_client_free(client);
    fleet_free(&f);
    return st;
}
