/* ocisbx create | close | exec | cp: the workspace backend from the shell. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "ocisbx/backend.h"
#include "ocisbx/util.h"
#include "util/internal.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static int cancel_on_sigint(void *ud)
{
    (void)ud;
    return interrupted != 0;
}

int cli_split_env(const char *cmd, const char *opt, const char *arg, char *buf, size_t cap, const char **value)
{
    /* never shown whole: the part after "=" may be a secret */
    const char *eq = strchr(arg, '=');
    if (!eq)
        return cli_error(CLI_EXIT_USAGE, "%s: %s wants NAME=VALUE (no \"=\" given)", cmd, opt);
    if (eq == arg)
        return cli_error(CLI_EXIT_USAGE, "%s: %s wants NAME=VALUE (the name is empty)", cmd, opt);
    if ((size_t)(eq - arg) >= cap)
        return cli_error(CLI_EXIT_USAGE, "%s: %s wants NAME=VALUE (the name is longer than %zu bytes)", cmd, opt,
                         cap - 1);
    memcpy(buf, arg, (size_t)(eq - arg));
    buf[eq - arg] = '\0';
    *value = eq + 1;
    return 0;
}

/* An option's value the library refused (OCISBX_EINVAL) is a usage error
 * naming the option; anything else (out of memory) a failure. */
static int option_refused(const char *cmd, const char *opt)
{
    const ocisbx_error *e = ocisbx_error_last();
    if (ocisbx_error_code(e) != OCISBX_EINVAL)
        return cli_fail_last();
    return cli_error(CLI_EXIT_USAGE, "%s: --%s: %s", cmd, opt, ocisbx_error_message(e));
}

/* create's --shape and --expiration, checked as the request will check them,
 * before anything is sent (the backend checks them only at create). */
static int check_create_value(const char *cmd, const char *opt, const char *v)
{
    ocisbx_create_sandbox_details *d = NULL;
    if (ocisbx_create_sandbox_details_new(&d))
        return cli_fail_last();
    int rc;
    if (strcmp(opt, "shape") == 0) {
        rc = ocisbx_create_sandbox_details_set_shape(d, v);
    } else {
        int64_t ms = 0;
        rc = ocisbx_duration_parse(v, &ms);
        if (!rc)
            rc = ocisbx_create_sandbox_details_set_expires_in_minutes(d, (ms + 59999) / 60000);
    }
    ocisbx_create_sandbox_details_free(d);
    if (rc && rc != OCISBX_ENOMEM) /* the duration parser's codes are not all EINVAL: all mean a bad value */
        return cli_error(CLI_EXIT_USAGE, "%s: --%s: %s", cmd, opt, ocisbx_error_message(ocisbx_error_last()));
    return rc ? cli_fail_last() : 0;
}

static int seconds(const char *cmd, const char *name, const char *v, long long max, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || !end || *end || x <= 0 || x > max)
        return cli_error(CLI_EXIT_USAGE, "%s: --%s wants a whole number 1..%lld, not %s", cmd, name, max, v);
    *out = x;
    return 0;
}

/* --poll-interval SECONDS: decimal seconds, the poll_interval setting's rule. */
static int poll_option(const char *cmd, const char *v, ocisbx_backend_options *o)
{
    int64_t ms = 0;
    if (!*v)
        return cli_error(CLI_EXIT_USAGE, "%s: --poll-interval: empty value", cmd);
    if (ocisbx_setting_poll_interval_ms(v, &ms, NULL) != 0)
        return cli_error(CLI_EXIT_USAGE, "%s: %s", cmd, ocisbx_error_message(ocisbx_error_last()));
    return ocisbx_backend_options_set_poll_interval_ms(o, ms) ? cli_fail_last() : 0;
}

static int oci_options(cli_ctx *ctx, ocisbx_client **client, ocisbx_backend_options *o)
{
    int st = cli_api_client(ctx, client);
    if (st)
        return st;
    ocisbx_backend_options_set_client(o, *client);
    const char *region = cli_setting(ctx, "region"); /* the label's */
    if (region)
        ocisbx_backend_options_set_region(o, region);
    return 0;
}

int cmd_create(cli_ctx *ctx, int argc, char **argv)
{
    const char *cmd = "create";
    ocisbx_backend_options *o = NULL;
    if (ocisbx_backend_options_new(&o))
        return cli_fail_last();
    const char *project = cli_setting(ctx, "project_id"), *v = NULL;
    int st = 0;
    for (int i = 1; i < argc && !st; i++) {
        int r;
        char name[256];
        const char *val = NULL;
        long long n = 0;
        if ((r = cli_opt_value(argc, argv, &i, "project-id", &v)) != 0) {
            if (r < 0)
                st = CLI_EXIT_USAGE;
            else
                project = v;
        } else if ((r = cli_opt_value(argc, argv, &i, "runtime", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE
                       : (ocisbx_backend_options_set_runtime(o, v) ? option_refused(cmd, "runtime") : 0);
        } else if ((r = cli_opt_value(argc, argv, &i, "shape", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE : check_create_value(cmd, "shape", v);
            if (!st && ocisbx_backend_options_set_shape(o, v))
                st = option_refused(cmd, "shape");
        } else if ((r = cli_opt_value(argc, argv, &i, "expiration", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE : check_create_value(cmd, "expiration", v);
            if (!st && ocisbx_backend_options_set_expiration(o, v))
                st = option_refused(cmd, "expiration");
        } else if ((r = cli_opt_value(argc, argv, &i, "display-name", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE
                       : (ocisbx_backend_options_set_display_name(o, v) ? option_refused(cmd, "display-name") : 0);
        } else if ((r = cli_opt_value(argc, argv, &i, "warmpool-name", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE
                       : (ocisbx_backend_options_set_warmpool_name(o, v) ? option_refused(cmd, "warmpool-name") : 0);
        } else if ((r = cli_opt_value(argc, argv, &i, "env", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE : cli_split_env(cmd, "--env", v, name, sizeof name, &val);
            if (!st && ocisbx_backend_options_add_env(o, name, val, 0))
                st = option_refused(cmd, "env");
        } else if ((r = cli_opt_value(argc, argv, &i, "ready-timeout", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE : seconds(cmd, "ready-timeout", v, 86400, &n);
            if (!st)
                ocisbx_backend_options_set_ready_timeout_ms(o, n * 1000);
        } else if ((r = cli_opt_value(argc, argv, &i, "poll-interval", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE : poll_option(cmd, v, o);
        } else {
            st = cli_unknown_option(cmd, argv[i]);
        }
    }
    char vars[160];
    if (!st && !project)
        st = cli_error(CLI_EXIT_USAGE, "create: --project-id (or %s) is required",
                       ocisbx_setting_variables("project_id", vars, sizeof vars));
    ocisbx_client *client = NULL;
    if (!st)
        st = oci_options(ctx, &client, o);
    if (st) {
        ocisbx_backend_options_free(o);
        ocisbx_client_free(client);
        return st;
    }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    sigaction(SIGTERM, &sa, NULL);
    ocisbx_backend_options_set_cancel(o, cancel_on_sigint, NULL);
    ocisbx_backend *b = NULL;
    int rc = ocisbx_backend_create(project, o, &b);
    ocisbx_backend_options_free(o);
    if (rc) {
        st = cli_fail_last();
        ocisbx_client_free(client);
        return st;
    }
    char *json = NULL;
    rc = ocisbx_backend_sandbox_json(b, &json);
    cJSON *j = rc ? NULL : cJSON_Parse(json);
    if (j && cJSON_IsObject(j) && !interrupted) {
        cJSON_AddStringToObject(j, "label", ocisbx_backend_label(b));
        st = cli_print_json(j);
        if (st == 0 && fflush(stdout) == 0)
            ocisbx_backend_disown(b); /* printed: the sandbox is the caller's now */
        else
            st = st ? st : cli_stdout_failed();
    } else {
        st = interrupted ? cli_error(CLI_EXIT_FAIL, "create: interrupted; the sandbox was deleted")
                         : cli_error(CLI_EXIT_FAIL, "create: the sandbox's JSON is malformed");
    }
    cJSON_Delete(j);
    ocisbx_free(json);
    ocisbx_backend_free(b); /* deletes it unless disowned */
    ocisbx_client_free(client);
    return st;
}

/* close: StopSandbox, wait for STOPPED (--stop-timeout), DeleteSandbox
 * (the backend's close of an adopted sandbox). Ctrl-C ends the wait, never
 * the delete: the handler only sets a flag, a second one too. */
int cmd_close(cli_ctx *ctx, int argc, char **argv)
{
    const char *id = NULL, *v = NULL, *poll = NULL;
    long long stop_s = 0;
    for (int i = 1; i < argc; i++) {
        int r = cli_opt_value(argc, argv, &i, "sandbox-id", &v);
        if (r > 0) {
            id = v;
            continue;
        }
        if (r == 0 && (r = cli_opt_value(argc, argv, &i, "stop-timeout", &v)) > 0) {
            if (seconds("close", "stop-timeout", v, 86400, &stop_s))
                return CLI_EXIT_USAGE;
            continue;
        }
        if (r == 0 && (r = cli_opt_value(argc, argv, &i, "poll-interval", &v)) > 0) {
            poll = v;
            continue;
        }
        return r < 0 ? CLI_EXIT_USAGE : cli_unknown_option("close", argv[i]);
    }
    if (!id)
        return cli_error(CLI_EXIT_USAGE, "close: --sandbox-id is required");
    ocisbx_backend_options *o = NULL;
    if (ocisbx_backend_options_new(&o))
        return cli_fail_last();
    ocisbx_client *c = NULL;
    int st = poll ? poll_option("close", poll, o) : 0;
    if (!st)
        st = oci_options(ctx, &c, o);
    if (!st && stop_s)
        ocisbx_backend_options_set_stop_timeout_ms(o, stop_s * 1000);
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    ocisbx_backend_options_set_cancel(o, cancel_on_sigint, NULL);
    ocisbx_backend *b = NULL;
    if (!st && (ocisbx_backend_connect(id, o, &b) || ocisbx_backend_adopt(b)))
        st = cli_fail_last();
    if (!st && ocisbx_backend_close(b))
        st = cli_fail_last();
    else if (!st && (ocisbx_backend_close_flags(b) & OCISBX_CLOSE_ALREADY_GONE))
        fprintf(stderr, "ocisbx close: sandbox %s was already gone (deleted or not found)\n", id);
    ocisbx_backend_disown(b); /* closed or failed: free never tries again */
    ocisbx_backend_free(b);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    ocisbx_backend_options_free(o);
    ocisbx_client_free(c);
    return st;
}

int cli_open_backend(cli_ctx *ctx, const char *sandbox_id, const char *local_dir, int isolate, int network,
                     ocisbx_client **client, ocisbx_backend **b)
{
    ocisbx_backend_options *o = NULL;
    if (ocisbx_backend_options_new(&o))
        return cli_fail_last();
    int st = 0, rc = 0;
    if (local_dir) {
        ocisbx_backend_options_set_isolation(o, isolate);
        ocisbx_backend_options_set_network(o, network);
        ocisbx_backend_options_set_cancel(o, cli_cancel_requested, NULL); /* Ctrl-C stops its commands */
        rc = ocisbx_backend_local(local_dir, o, b);
    } else {
        st = oci_options(ctx, client, o);
        if (!st && ctx->parallel_parts)
            rc = ocisbx_backend_options_set_parallel_parts(o, ctx->parallel_parts);
        if (!st && !rc)
            rc = ocisbx_backend_connect(sandbox_id, o, b);
    }
    ocisbx_backend_options_free(o);
    if (!st && rc)
        st = cli_fail_last();
    /* a job started by one ocisbx process outlives it: any later one reads and kills it */
    if (!st)
        ocisbx_backend_detach_jobs(*b);
    return st;
}

static int to_stdout(const void *d, size_t n, void *ud)
{
    (void)ud;
    return fwrite(d, 1, n, stdout) != n;
}

/* exec's output on stdout as it comes, --secret-env values [REDACTED]: what
 * may be the start of a secret waits for the next bytes. */
typedef struct live_print {
    ocisbx_buf pend;
    const char *const *secrets;
    size_t n;
    bool failed;
    int err; /* errno of the failed write (EPIPE: the reader went) */
} live_print;

static void live_emit(live_print *lp, bool all)
{
    size_t hold = 0;
    for (size_t k = 0; k < lp->n; k++) {
        ocisbx_buf_redact(&lp->pend, lp->secrets[k]);
        size_t h = all ? 0 : ocisbx_redact_edge_prefix(lp->pend.data, lp->pend.len, lp->secrets[k], 1);
        hold = h > hold ? h : hold;
    }
    size_t out = lp->pend.len - hold;
    errno = 0;
    if (!lp->failed && out && lp->pend.data && (to_stdout(lp->pend.data, out, NULL) || fflush(stdout))) {
        lp->failed = true;
        lp->err = errno;
    }
    if (hold)
        memmove(lp->pend.data, lp->pend.data + out, hold);
    lp->pend.len = hold;
}

static int live_print_cb(const void *d, size_t n, void *ud)
{
    live_print *lp = ud;
    if (ocisbx_buf_append(&lp->pend, d, n))
        return 1;
    live_emit(lp, false);
    return lp->failed;
}

/* exec's run: the output printed as it comes; the exit status is the
 * command's (124 for the timeout), 141 when the reader of stdout went. */
static int exec_run(ocisbx_backend *b, int n, const char *const *words, ocisbx_exec_options *eo,
                    const char *const *secrets, size_t nsecrets)
{
    ocisbx_exec_result *r = NULL;
    live_print lp = {OCISBX_BUF_INIT, secrets, nsecrets, false, 0};
    /* a reader that goes (| head) is a write that fails with EPIPE: the
     * output callback cancels, and the command ends before the exit */
    struct sigaction ign, old_pipe;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old_pipe);
    ocisbx_exec_options_set_on_output(eo, live_print_cb, &lp);
    int rc = n == 1 ? ocisbx_backend_exec(b, words[0], eo, &r) : ocisbx_backend_exec_argv(b, words, (size_t)n, eo, &r);
    live_emit(&lp, true);
    int x = 0, st;
    if (lp.failed && lp.err == EPIPE)
        st = 128 + SIGPIPE; /* as a shell shows a writer whose pipe ended */
    else if (lp.failed)
        st = cli_stdout_failed();
    else if (rc)
        st = cli_fail_last();
    else
        st = ocisbx_exec_result_timed_out(r) ? 124 : ocisbx_exec_result_has_exit_code(r, &x) ? x : CLI_EXIT_FAIL;
    sigaction(SIGPIPE, &old_pipe, NULL);
    ocisbx_buf_free(&lp.pend);
    ocisbx_exec_result_free(r);
    return st;
}

int cmd_exec(cli_ctx *ctx, int argc, char **argv)
{
    const char *cmd = "exec";
    const char *sandbox_id = NULL, *local_dir = NULL, *v = NULL;
    int isolate = 1, network = 0, st = 0, i = 1;
    const char *secrets[64]; /* --secret-env values: [REDACTED] in what is printed */
    size_t nsecrets = 0;
    ocisbx_exec_options *eo = NULL;
    if (ocisbx_exec_options_new(&eo))
        return cli_fail_last();
    for (; i < argc && !st; i++) {
        int r;
        char name[256];
        const char *val = NULL;
        long long n = 0;
        const char *arg0 = argv[i];
        if (strcmp(arg0, "--") == 0)
            break;
        if ((r = cli_opt_value(argc, argv, &i, "sandbox-id", &v)) != 0) {
            if (r < 0)
                st = CLI_EXIT_USAGE;
            else
                sandbox_id = v;
        } else if ((r = cli_opt_value(argc, argv, &i, "local-dir", &v)) != 0) {
            if (r < 0)
                st = CLI_EXIT_USAGE;
            else
                local_dir = v;
        } else if (cli_opt_flag(argv[i], "no-isolation")) {
            isolate = 0;
        } else if ((r = cli_opt_value(argc, argv, &i, "network", &v)) != 0) {
            if (r < 0)
                st = CLI_EXIT_USAGE;
            else if (strcmp(v, "allow") == 0 || strcmp(v, "deny") == 0)
                network = strcmp(v, "allow") == 0;
            else
                st = cli_error(CLI_EXIT_USAGE, "exec: --network is allow or deny, not %s", v);
        } else if ((r = cli_opt_value(argc, argv, &i, "timeout", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE : seconds(cmd, "timeout", v, 7 * 86400, &n);
            if (!st)
                ocisbx_exec_options_set_timeout_ms(eo, n * 1000);
        } else if ((r = cli_opt_value(argc, argv, &i, "max-output-bytes", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE : seconds(cmd, "max-output-bytes", v, 1LL << 40, &n);
            if (!st && ocisbx_exec_options_set_max_output_bytes(eo, (size_t)n))
                st = option_refused(cmd, "max-output-bytes");
        } else if ((r = cli_opt_value(argc, argv, &i, "env", &v)) != 0 ||
                   (r = cli_opt_value(argc, argv, &i, "secret-env", &v)) != 0) {
            int secret = strncmp(arg0, "--secret-env", 12) == 0;
            st = r < 0    ? CLI_EXIT_USAGE
                 : secret ? cli_secret_env(cmd, v, name, sizeof name, &val)
                          : cli_split_env(cmd, "--env", v, name, sizeof name, &val);
            if (!st && ocisbx_exec_options_add_env(eo, name, val, secret))
                st = option_refused(cmd, secret ? "secret-env" : "env");
            if (!st && secret && nsecrets < sizeof secrets / sizeof secrets[0])
                secrets[nsecrets++] = val; /* points into argv or the environment */
            else if (!st && secret)
                st = cli_error(CLI_EXIT_USAGE, "exec: more than 64 --secret-env");
        } else if ((r = cli_opt_value(argc, argv, &i, "cwd", &v)) != 0) {
            st = r < 0 ? CLI_EXIT_USAGE : (ocisbx_exec_options_set_cwd(eo, v) ? option_refused(cmd, "cwd") : 0);
        } else {
            st = cli_unknown_option(cmd, argv[i]);
        }
    }
    if (!st && (!sandbox_id == !local_dir))
        st = cli_error(CLI_EXIT_USAGE, "exec: give exactly one of --sandbox-id and --local-dir");
    if (!st && sandbox_id && (!isolate || network))
        st = cli_error(CLI_EXIT_USAGE, "exec: --no-isolation and --network go with --local-dir");
    if (!st && (i >= argc || i + 1 >= argc))
        st = cli_error(CLI_EXIT_USAGE, "exec: the command comes after --");
    ocisbx_client *client = NULL;
    ocisbx_backend *b = NULL;
    if (!st)
        st = cli_open_backend(ctx, sandbox_id, local_dir, isolate, network, &client, &b);
    if (!st)
        st = exec_run(b, argc - i - 1, (const char *const *)argv + i + 1, eo, secrets, nsecrets);
    ocisbx_backend_free(b);
    ocisbx_client_free(client);
    ocisbx_exec_options_free(eo);
    return st;
}

/* "sbx:<id>:<path>": the id and the path (id copied into buf). */
static bool parse_sbx(const char *arg, char *buf, size_t cap, const char **path)
{
    if (strncmp(arg, "sbx:", 4) != 0)
        return false;
    const char *c = strchr(arg + 4, ':');
    if (!c || c == arg + 4 || (size_t)(c - arg - 4) >= cap)
        return false;
    memcpy(buf, arg + 4, (size_t)(c - arg - 4));
    buf[c - arg - 4] = '\0';
    *path = c + 1;
    return true;
}

/* cp's command line: [--parallel N] SRC DST ("--" ends the options). */
static int cp_args(int argc, char **argv, const char *pos[2], long long *parallel)
{
    int n = 0;
    bool opts = true;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int r = 0;
        if (opts && strcmp(argv[i], "--") == 0) {
            opts = false;
        } else if (opts && (r = cli_opt_value(argc, argv, &i, "parallel", &v)) != 0) {
            int st = r < 0 ? CLI_EXIT_USAGE
                           : seconds("cp", "parallel", v, OCISBX_BACKEND_MAX_PARALLEL_PARTS, parallel);
            if (st)
                return st;
        } else if (opts && strncmp(argv[i], "--", 2) == 0) {
            return cli_unknown_option("cp", argv[i]);
        } else if (n < 2) {
            pos[n++] = argv[i];
        } else {
            n = 3;
        }
    }
    if (n != 2)
        return cli_error(CLI_EXIT_USAGE,
                         "cp: usage: ocisbx cp [--parallel N] SRC DST (one of them sbx:<sandbox id>:<path>)");
    return 0;
}

int cmd_cp(cli_ctx *ctx, int argc, char **argv)
{
    const char *pos[2] = {NULL, NULL};
    long long parallel = 0;
    int ust = cp_args(argc, argv, pos, &parallel);
    if (ust)
        return ust;
    char id[512];
    const char *spath = NULL;
    bool up = parse_sbx(pos[1], id, sizeof id, &spath);
    bool down = !up && parse_sbx(pos[0], id, sizeof id, &spath);
    if (up == down || (up && parse_sbx(pos[0], id, sizeof id, &spath)))
        return cli_error(CLI_EXIT_USAGE, "cp: exactly one side is sbx:<sandbox id>:<absolute path>");
    if (up)
        parse_sbx(pos[1], id, sizeof id, &spath);
    const char *lpath = up ? pos[0] : pos[1];
    ctx->parallel_parts = (int)parallel;
    ocisbx_client *client = NULL;
    ocisbx_backend *b = NULL;
    ctx->transfer_progress = true; /* a line on a terminal, nothing when piped */
    int st = cli_open_backend(ctx, id, NULL, 1, 0, &client, &b);
    int rc = 0;
    struct stat lst;
    /* one progress line for the whole file, also when it goes in parts */
    if (!st)
        cli_transfer_begin(up && stat(lpath, &lst) == 0 ? (int64_t)lst.st_size : 0, up);
    /* the first SIGINT/SIGTERM only sets the flag the transport's cancel
     * callback reads (cli_signals_install): a canceled upload in parts
     * removes them (bounded, not canceled) before it returns here; a
     * second signal exits at once */
    if (!st)
        rc = up ? ocisbx_backend_write_from_path(b, spath, lpath) : ocisbx_backend_read_to_path(b, spath, lpath);
    cli_transfer_done();
    if (!st && rc)
        st = cli_fail_last();
    /* no second pass: the backend's write and read are checked (each part's
     * SHA-256 by the service, the whole file's in the workspace before the
     * rename; a download against the service's SHA-256 as it is written) */
    ocisbx_backend_free(b);
    ocisbx_client_free(client);
    return st;
}
