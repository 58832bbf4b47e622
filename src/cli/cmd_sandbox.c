/* ocisbx sandbox create|get|list|update|stop|delete|extend|suspend|resume,
 * and the helpers the api commands share (option table, client, output). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ocisbx/api.h"

/* ---- shared by cmd_sandbox.c, cmd_command.c, cmd_file.c, cmd_snapshot.c ---- */
#define CLI_API_MAX_REPEAT 64
typedef struct cli_api_opts {
    const char *sandbox_id, *project_id, *command_id, *snapshot_id, *display_name, *runtime, *shape;
    const char *expires_in_minutes, *additional_duration, *command, *timeout, *cwd, *file_path;
    const char *from_file, *to_file, *from_seq, *wait_for_state, *limit, *page, *lifecycle_state;
    const char *max_wait_seconds, *wait_interval_seconds, *expiration_duration, *warmpool_name;
    int is_force; /* -1 not given */
    bool all;
    const char *env[CLI_API_MAX_REPEAT];
    int nenv;
    const char *args[CLI_API_MAX_REPEAT];
    int nargs;
} cli_api_opts;
int cli_api_parse(const char *cmd, int argc, char **argv, const char *allowed, cli_api_opts *o);
int cli_api_require(const char *cmd, const char *name, const char *value);
int cli_api_client(cli_ctx *ctx, ocisbx_client **out);
int cli_api_print(int rc, char *json);
int cli_api_int(const char *cmd, const char *name, const char *value, long long min, long long max, long long *out);
int cli_api_wait_ms(const char *cmd, const cli_api_opts *o, int64_t *timeout_ms, int64_t *poll_ms);
int cli_api_unknown_sub(const char *cmd, const char *sub, const char *subs);
bool cli_api_wants_help(int argc, char **argv);
void cli_api_usage_line(const char *cmd, const char *sub, const char *allowed);

typedef struct opt_def {
    const char *name;
    size_t offset; /* of a const char * field; SIZE_MAX for the special ones */
} opt_def;

#define F(field) offsetof(cli_api_opts, field)
static const opt_def opt_defs[] = {
    {"sandbox-id", F(sandbox_id)},
    {"project-id", F(project_id)},
    {"command-id", F(command_id)},
    {"snapshot-id", F(snapshot_id)},
    {"display-name", F(display_name)},
    {"runtime", F(runtime)},
    {"shape", F(shape)},
    {"expires-in-minutes", F(expires_in_minutes)},
    {"additional-duration", F(additional_duration)},
    {"command", F(command)},
    {"timeout", F(timeout)},
    {"cwd", F(cwd)},
    {"file-path", F(file_path)},
    {"from-file", F(from_file)},
    {"to-file", F(to_file)},
    {"from-seq", F(from_seq)},
    {"wait-for-state", F(wait_for_state)},
    {"limit", F(limit)},
    {"page", F(page)},
    {"lifecycle-state", F(lifecycle_state)},
    {"max-wait-seconds", F(max_wait_seconds)},
    {"wait-interval-seconds", F(wait_interval_seconds)},
    {"expiration-duration", F(expiration_duration)},
    {"warmpool-name", F(warmpool_name)},
    {"env", SIZE_MAX},
    {"arg", SIZE_MAX},
};

static bool allowed_has(const char *allowed, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = allowed; (p = strstr(p, name)) != NULL; p += n)
        if ((p == allowed || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
    return false;
}

int cli_api_parse(const char *cmd, int argc, char **argv, const char *allowed, cli_api_opts *o)
{
    memset(o, 0, sizeof *o);
    o->is_force = -1;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) { /* the rest are command arguments */
            for (i++; i < argc && allowed_has(allowed, "arg"); i++) {
                if (o->nargs == CLI_API_MAX_REPEAT) return cli_error(CLI_EXIT_USAGE, "%s: too many arguments", cmd);
                o->args[o->nargs++] = argv[i];
            }
            if (i < argc) return cli_unknown_option(cmd, argv[i]);
            break;
        }
        if (allowed_has(allowed, "is-force") && strncmp(arg, "--is-force", 10) == 0 &&
            (arg[10] == '\0' || arg[10] == '=')) {
            const char *v = arg[10] == '=' ? arg + 11 : "true";
            if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
                return cli_error(CLI_EXIT_USAGE, "%s: --is-force takes true or false, not '%s'", cmd, v);
            o->is_force = strcmp(v, "true") == 0;
            continue;
        }
        if (allowed_has(allowed, "all") && cli_opt_flag(arg, "all")) {
            o->all = true;
            continue;
        }
        bool taken = false;
        for (size_t d = 0; d < sizeof opt_defs / sizeof opt_defs[0] && !taken; d++) {
            if (!allowed_has(allowed, opt_defs[d].name)) continue;
            const char *value = NULL;
            int m = cli_opt_value(argc, argv, &i, opt_defs[d].name, &value);
            if (m < 0) return CLI_EXIT_USAGE;
            if (m == 0) continue;
            taken = true;
            if (opt_defs[d].offset != SIZE_MAX) {
                *(const char **)(void *)((char *)o + opt_defs[d].offset) = value;
            } else if (strcmp(opt_defs[d].name, "env") == 0) {
                if (!strchr(value, '=') || value[0] == '=')
                    return cli_error(CLI_EXIT_USAGE, "%s: --env takes NAME=VALUE, not '%s'", cmd, value);
                if (o->nenv == CLI_API_MAX_REPEAT) return cli_error(CLI_EXIT_USAGE, "%s: too many --env", cmd);
                o->env[o->nenv++] = value;
            } else {
                if (o->nargs == CLI_API_MAX_REPEAT) return cli_error(CLI_EXIT_USAGE, "%s: too many --arg", cmd);
                o->args[o->nargs++] = value;
            }
        }
        if (!taken) return cli_unknown_option(cmd, arg);
    }
    return 0;
}

int cli_api_require(const char *cmd, const char *name, const char *value)
{
    if (value && value[0]) return 0;
    return cli_error(CLI_EXIT_USAGE, "%s: --%s is required", cmd, name);
}

int cli_api_int(const char *cmd, const char *name, const char *value, long long min, long long max, long long *out)
{
    char *end = NULL;
    long long v = value ? strtoll(value, &end, 10) : 0;
    if (!value || !*value || *end || v < min || v > max)
        return cli_error(CLI_EXIT_USAGE, "%s: --%s must be an integer from %lld to %lld, not '%s'", cmd, name, min,
                         max, value ? value : "");
    *out = v;
    return 0;
}

int cli_api_wait_ms(const char *cmd, const cli_api_opts *o, int64_t *timeout_ms, int64_t *poll_ms)
{
    long long t = 1200, p = 2;
    if (o->max_wait_seconds && cli_api_int(cmd, "max-wait-seconds", o->max_wait_seconds, 0, 172800, &t))
        return CLI_EXIT_USAGE;
    if (o->wait_interval_seconds &&
        cli_api_int(cmd, "wait-interval-seconds", o->wait_interval_seconds, 0, 3600, &p))
        return CLI_EXIT_USAGE;
    *timeout_ms = t * 1000;
    *poll_ms = p ? p * 1000 : 200;
    return 0;
}

int cli_api_client(cli_ctx *ctx, ocisbx_client **out)
{
    *out = NULL;
    const char *endpoint = NULL;
    ocisbx_credentials *creds = NULL;
    if (cli_endpoint(ctx, &endpoint) != 0) return CLI_EXIT_FAIL;
    if (cli_credentials(ctx, &creds) != 0) return CLI_EXIT_FAIL;
    ocisbx_http_options *h = NULL;
    ocisbx_client_options *o = NULL;
    int rc = ocisbx_http_options_new(&h);
    if (!rc && ctx->g.ca_bundle) rc = ocisbx_http_options_set_ca_bundle(h, ctx->g.ca_bundle);
    /* http:// is only ever allowed to a loopback host: the transport checks */
    if (!rc && strncmp(endpoint, "http://", 7) == 0) rc = ocisbx_http_options_set_allow_plain_http(h, 1);
    if (!rc) rc = ocisbx_http_options_set_user_agent_suffix(h, "ocisbx-cli");
    if (!rc) rc = ocisbx_client_options_new(&o);
    if (!rc) rc = ocisbx_client_options_set_http_options(o, h);
    if (!rc) rc = ocisbx_client_options_set_credentials(o, creds);
    if (!rc) rc = ocisbx_client_options_set_endpoint(o, endpoint);
    if (!rc) rc = ocisbx_client_options_set_api_version(o, ctx->g.api_version);
    if (!rc) rc = ocisbx_client_new(o, out);
    ocisbx_client_options_free(o);
    ocisbx_http_options_free(h);
    return rc ? cli_fail_last() : 0;
}

int cli_api_print(int rc, char *json)
{
    if (rc) {
        ocisbx_free(json);
        return cli_fail_last();
    }
    int st = cli_print_json_text(json, strlen(json));
    ocisbx_free(json);
    return st;
}

int cli_api_unknown_sub(const char *cmd, const char *sub, const char *subs)
{
    if (!sub) return cli_error(CLI_EXIT_USAGE, "%s: give a subcommand: %s", cmd, subs);
    return cli_error(CLI_EXIT_USAGE, "%s: unknown subcommand %s (one of: %s)", cmd, sub, subs);
}

bool cli_api_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return true;
    }
    return false;
}

/* "  ocisbx sandbox stop --sandbox-id V [--is-force] ..." on stdout. */
void cli_api_usage_line(const char *cmd, const char *sub, const char *allowed)
{
    printf("  ocisbx %s %s", cmd, sub);
    const char *p = allowed;
    while (*p) {
        size_t n = strcspn(p, " ");
        if (n == 3 && strncmp(p, "arg", 3) == 0)
            printf(" [--arg V]... [-- ARG...]");
        else if ((n == 8 && strncmp(p, "is-force", 8) == 0) || (n == 3 && strncmp(p, "all", 3) == 0))
            printf(" [--%.*s]", (int)n, p);
        else if (n == 3 && strncmp(p, "env", 3) == 0)
            printf(" [--env NAME=VALUE]...");
        else
            printf(" [--%.*s V]", (int)n, p);
        p += n;
        while (*p == ' ') p++;
    }
    printf("\n");
}

/* ---- sandbox ---- */
static int print_sandbox(ocisbx_sandbox *s)
{
    char *json = NULL;
    int rc = ocisbx_sandbox_to_json(s, &json);
    ocisbx_sandbox_free(s);
    return cli_api_print(rc, json);
}

/* After an action: wait for --wait-for-state and print the sandbox, or
 * print nothing (the service answers 202 without a body). */
static int finish_action(ocisbx_client *c, const char *cmd, const cli_api_opts *o, int rc)
{
    if (rc) return cli_fail_last();
    if (!o->wait_for_state) return CLI_EXIT_OK;
    int64_t t, p;
    if (cli_api_wait_ms(cmd, o, &t, &p)) return CLI_EXIT_USAGE;
    ocisbx_sandbox *s = NULL;
    rc = ocisbx_client_wait_sandbox(c, o->sandbox_id, o->wait_for_state, t, p, &s);
    if (rc) return cli_fail_last();
    if (!s) return CLI_EXIT_OK; /* DELETED: gone */
    return print_sandbox(s);
}

static int sandbox_create(ocisbx_client *c, cli_ctx *ctx, const cli_api_opts *o)
{
    const char *cmd = "sandbox create";
    const char *project = o->project_id ? o->project_id : ctx->g.project_id;
    if (cli_api_require(cmd, "project-id", project)) return CLI_EXIT_USAGE;
    ocisbx_create_sandbox_details *d = NULL;
    int rc = ocisbx_create_sandbox_details_new(&d);
    long long minutes;
    if (!rc && o->expires_in_minutes) {
        if (cli_api_int(cmd, "expires-in-minutes", o->expires_in_minutes, -1, 1000000, &minutes)) {
            ocisbx_create_sandbox_details_free(d);
            return CLI_EXIT_USAGE;
        }
        rc = ocisbx_create_sandbox_details_set_expires_in_minutes(d, minutes);
    }
    if (!rc && o->display_name) rc = ocisbx_create_sandbox_details_set_display_name(d, o->display_name);
    if (!rc && o->runtime) rc = ocisbx_create_sandbox_details_set_runtime(d, o->runtime);
    if (!rc && o->shape) rc = ocisbx_create_sandbox_details_set_shape(d, o->shape);
    if (!rc && o->warmpool_name) rc = ocisbx_create_sandbox_details_set_warmpool_name(d, o->warmpool_name);
    if (!rc && o->snapshot_id) rc = ocisbx_create_sandbox_details_set_source_snapshot(d, o->snapshot_id);
    for (int i = 0; !rc && i < o->nenv; i++) {
        const char *eq = strchr(o->env[i], '=');
        char *name = strndup(o->env[i], (size_t)(eq - o->env[i]));
        rc = name ? ocisbx_create_sandbox_details_add_env(d, name, eq + 1) : OCISBX_ENOMEM;
        free(name);
    }
    ocisbx_sandbox *s = NULL;
    if (!rc) rc = ocisbx_client_create_sandbox(c, project, d, &s);
    ocisbx_create_sandbox_details_free(d);
    if (rc) return cli_fail_last();
    if (o->wait_for_state) {
        int64_t t, p;
        if (cli_api_wait_ms(cmd, o, &t, &p)) {
            ocisbx_sandbox_free(s);
            return CLI_EXIT_USAGE;
        }
        char *id = strdup(ocisbx_sandbox_id(s));
        ocisbx_sandbox_free(s);
        s = NULL;
        rc = id ? ocisbx_client_wait_sandbox(c, id, o->wait_for_state, t, p, &s) : OCISBX_ENOMEM;
        free(id);
        if (rc) return cli_fail_last();
    }
    return print_sandbox(s);
}

static int sandbox_list(ocisbx_client *c, cli_ctx *ctx, const cli_api_opts *o)
{
    const char *cmd = "sandbox list";
    ocisbx_list_options *lo = NULL;
    int rc = ocisbx_list_options_new(&lo);
    const char *project = o->project_id ? o->project_id : ctx->g.project_id;
    long long limit = 0;
    if (o->limit && cli_api_int(cmd, "limit", o->limit, 1, 1000, &limit)) {
        ocisbx_list_options_free(lo);
        return CLI_EXIT_USAGE;
    }
    if (!rc && project) rc = ocisbx_list_options_set(lo, "projectId", project);
    if (!rc && o->display_name) rc = ocisbx_list_options_set(lo, "displayName", o->display_name);
    if (!rc && o->lifecycle_state) rc = ocisbx_list_options_set(lo, "lifecycleState", o->lifecycle_state);
    if (!rc && o->page) rc = ocisbx_list_options_set(lo, "page", o->page);
    if (!rc) rc = ocisbx_list_options_set_limit(lo, (int)limit);
    if (rc) {
        ocisbx_list_options_free(lo);
        return cli_fail_last();
    }
    if (!o->all) {
        ocisbx_sandbox_collection *l = NULL;
        rc = ocisbx_client_list_sandboxes(c, lo, &l);
        ocisbx_list_options_free(lo);
        if (rc) return cli_fail_last();
        char *json = NULL;
        rc = ocisbx_sandbox_collection_to_json(l, &json);
        cJSON *j = rc ? NULL : cJSON_Parse(json);
        ocisbx_free(json);
        if (j && ocisbx_sandbox_collection_next_page(l))
            cJSON_AddStringToObject(j, "opcNextPage", ocisbx_sandbox_collection_next_page(l));
        ocisbx_sandbox_collection_free(l);
        if (!j) return cli_error(CLI_EXIT_FAIL, "sandbox list: out of memory");
        int st = cli_print_json(j);
        cJSON_Delete(j);
        return st;
    }
    ocisbx_sandbox_iter *it = NULL;
    rc = ocisbx_client_iter_sandboxes(c, lo, &it);
    ocisbx_list_options_free(lo);
    cJSON *out = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(out, "items");
    const ocisbx_sandbox *s = NULL;
    while (!rc && (rc = ocisbx_sandbox_iter_next(it, &s)) == 0 && s) {
        char *json = NULL;
        if ((rc = ocisbx_sandbox_to_json(s, &json)) == 0) cJSON_AddItemToArray(items, cJSON_Parse(json));
        ocisbx_free(json);
    }
    ocisbx_sandbox_iter_free(it);
    int st = rc ? cli_fail_last() : cli_print_json(out);
    cJSON_Delete(out);
    return st;
}

#define SANDBOX_SUBS "create, get, list, update, stop, delete, extend, suspend, resume"
#define WAIT_OPTS " wait-for-state max-wait-seconds wait-interval-seconds"

int cmd_sandbox(cli_ctx *ctx, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : NULL;
    static const struct {
        const char *name, *allowed;
    } subs[] = {
        {"create", "project-id display-name runtime shape expires-in-minutes env warmpool-name snapshot-id" WAIT_OPTS},
        {"get", "sandbox-id"},
        {"list", "project-id display-name lifecycle-state limit page all"},
        {"update", "sandbox-id display-name" WAIT_OPTS},
        {"stop", "sandbox-id is-force" WAIT_OPTS},
        {"delete", "sandbox-id" WAIT_OPTS},
        {"extend", "sandbox-id additional-duration"},
        {"suspend", "sandbox-id" WAIT_OPTS},
        {"resume", "sandbox-id" WAIT_OPTS},
    };
    size_t k = 0;
    while (sub && k < sizeof subs / sizeof subs[0] && strcmp(subs[k].name, sub) != 0) k++;
    if (cli_api_wants_help(argc, argv)) {
        printf("usage:\n");
        for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
            if (k == sizeof subs / sizeof subs[0] || i == k) cli_api_usage_line("sandbox", subs[i].name, subs[i].allowed);
        return CLI_EXIT_OK;
    }
    if (!sub || k == sizeof subs / sizeof subs[0]) return cli_api_unknown_sub("sandbox", sub, SANDBOX_SUBS);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "sandbox %s", sub);
    cli_api_opts o;
    if (cli_api_parse(cmd, argc - 2, argv + 2, subs[k].allowed, &o)) return CLI_EXIT_USAGE;
    if (strcmp(sub, "create") != 0 && strcmp(sub, "list") != 0 && cli_api_require(cmd, "sandbox-id", o.sandbox_id))
        return CLI_EXIT_USAGE;
    if (strcmp(sub, "extend") == 0 && cli_api_require(cmd, "additional-duration", o.additional_duration))
        return CLI_EXIT_USAGE;
    if (strcmp(sub, "update") == 0 && cli_api_require(cmd, "display-name", o.display_name)) return CLI_EXIT_USAGE;
    ocisbx_client *c = NULL;
    if (cli_api_client(ctx, &c)) return CLI_EXIT_FAIL;
    int st;
    ocisbx_sandbox *s = NULL;
    if (strcmp(sub, "create") == 0) {
        st = sandbox_create(c, ctx, &o);
    } else if (strcmp(sub, "get") == 0) {
        st = ocisbx_client_get_sandbox(c, o.sandbox_id, &s) ? cli_fail_last() : print_sandbox(s);
    } else if (strcmp(sub, "list") == 0) {
        st = sandbox_list(c, ctx, &o);
    } else if (strcmp(sub, "update") == 0) {
        int rc = ocisbx_client_update_sandbox(c, o.sandbox_id, o.display_name, &s);
        st = rc ? cli_fail_last() : (o.wait_for_state ? (ocisbx_sandbox_free(s), finish_action(c, cmd, &o, 0))
                                                      : print_sandbox(s));
    } else if (strcmp(sub, "stop") == 0) {
        st = finish_action(c, cmd, &o, ocisbx_client_stop_sandbox(c, o.sandbox_id, o.is_force == 1));
    } else if (strcmp(sub, "delete") == 0) {
        st = finish_action(c, cmd, &o, ocisbx_client_delete_sandbox(c, o.sandbox_id));
    } else if (strcmp(sub, "extend") == 0) {
        st = ocisbx_client_extend_sandbox(c, o.sandbox_id, o.additional_duration, &s) ? cli_fail_last()
                                                                                      : print_sandbox(s);
    } else if (strcmp(sub, "suspend") == 0) {
        st = finish_action(c, cmd, &o, ocisbx_client_suspend_sandbox(c, o.sandbox_id));
    } else {
        st = finish_action(c, cmd, &o, ocisbx_client_resume_sandbox(c, o.sandbox_id));
    }
    ocisbx_client_free(c);
    return st;
}
