/* Helpers shared by the api commands (sandbox, command, file, snapshot):
 * parsing by the command table, the client, JSON and table output. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/internal.h"

/* Where each option of the API groups is kept in cli_api_opts (the table
 * says which subcommand takes which; this says where the value goes). */
typedef enum opt_kind { OPT_TEXT, OPT_LIST, OPT_FLAG, OPT_BOOL } opt_kind;
typedef struct opt_def {
    const char *name;
    opt_kind kind;
    size_t offset;
} opt_def;

#define F(field) offsetof(cli_api_opts, field)
static const opt_def opt_defs[] = {
    {"sandbox-id", OPT_TEXT, F(sandbox_id)},
    {"project-id", OPT_TEXT, F(project_id)},
    {"command-id", OPT_TEXT, F(command_id)},
    {"snapshot-id", OPT_TEXT, F(snapshot_id)},
    {"source-snapshot-id", OPT_TEXT, F(snapshot_id)},
    {"display-name", OPT_TEXT, F(display_name)},
    {"runtime", OPT_TEXT, F(runtime)},
    {"shape", OPT_TEXT, F(shape)},
    {"expires-in-minutes", OPT_TEXT, F(expires_in_minutes)},
    {"additional-duration", OPT_TEXT, F(additional_duration)},
    {"command", OPT_TEXT, F(command)},
    {"timeout", OPT_TEXT, F(timeout)},
    {"cwd", OPT_TEXT, F(cwd)},
    {"sandbox-file-path", OPT_TEXT, F(file_path)},
    {"file", OPT_TEXT, F(from_file)},
    {"local-file", OPT_TEXT, F(to_file)},
    {"from-seq", OPT_TEXT, F(from_seq)},
    {"limit", OPT_TEXT, F(limit)},
    {"page", OPT_TEXT, F(page)},
    {"lifecycle-state", OPT_TEXT, F(lifecycle_state)},
    {"max-wait-seconds", OPT_TEXT, F(max_wait_seconds)},
    {"wait-interval-seconds", OPT_TEXT, F(wait_interval_seconds)},
    {"expiration-duration", OPT_TEXT, F(expiration_duration)},
    {"warmpool-name", OPT_TEXT, F(warmpool_name)},
    {"if-match", OPT_TEXT, F(if_match)},
    {"sort-by", OPT_TEXT, F(sort_by)},
    {"sort-order", OPT_TEXT, F(sort_order)},
    {"output", OPT_TEXT, F(output)},
    {"wait-for-state", OPT_LIST, F(wait_for_state)},
    {"env", OPT_LIST, F(env)},
    {"arg", OPT_LIST, F(args)},
    {"all", OPT_FLAG, F(all)},
    {"is-force", OPT_BOOL, F(is_force)},
};

static const opt_def *opt_def_of(const char *name)
{
    for (size_t d = 0; d < sizeof opt_defs / sizeof opt_defs[0]; d++)
        if (strcmp(opt_defs[d].name, name) == 0)
            return &opt_defs[d];
    return NULL;
}

/* "A B C" as "A, B or C" (last " or "), or "A, B, C" (last ", "). */
static void values_text(const char *values, const char *last_sep, char *out, size_t cap)
{
    size_t n = 0, words = 0, k = 0;
    for (const char *p = values; *p; p++)
        words += *p != ' ' && (p == values || p[-1] == ' ');
    out[0] = '\0';
    for (const char *p = values; *p && n + 8 < cap; k++) {
        size_t len = strcspn(p, " ");
        if (len > cap - n - 8)
            len = cap - n - 8;
        n += (size_t)snprintf(out + n, cap - n, "%s%.*s",
                              k == 0           ? ""
                              : k + 1 == words ? last_sep
                                               : ", ",
                              (int)len, p);
        p += len;
        while (*p == ' ')
            p++;
    }
}

/* A value of an option with fixed values: one of them, else a usage error
 * (--wait-for-state: in the words the docs give). */
static int check_value(const char *cmd, const cli_option *opt, const char *value)
{
    if (!opt->values || cli_word_in(opt->values, value))
        return 0;
    char list[400];
    bool state = strcmp(opt->name, "wait-for-state") == 0;
    values_text(opt->values, state ? ", " : " or ", list, sizeof list);
    if (state) {
        return cli_error(CLI_EXIT_USAGE, "%s: --wait-for-state %s is not a state of this resource (one of: %s)", cmd,
                         value, list);
    }
    return cli_error(CLI_EXIT_USAGE, "%s: --%s is %s, not '%s'", cmd, opt->name, list, value);
}

static int store(const char *cmd, const cli_option *opt, const opt_def *d, const char *value, cli_api_opts *o)
{
    if (check_value(cmd, opt, value))
        return CLI_EXIT_USAGE;
    void *field = (char *)o + d->offset;
    if (d->kind == OPT_TEXT) {
        *(const char **)field = value;
        return 0;
    }
    cli_api_list *l = field;
    if (strcmp(opt->name, "env") == 0 && (!strchr(value, '=') || value[0] == '='))
        return cli_error(CLI_EXIT_USAGE, "%s: --env takes NAME=VALUE, not '%s'", cmd, value);
    if (l->n == CLI_API_MAX_REPEAT)
        return cli_error(CLI_EXIT_USAGE, "%s: too many --%s", cmd, opt->name);
    l->v[l->n++] = value;
    return 0;
}

/* One option of argv[*i]: 1 taken, 0 not this one, -1 a usage error (printed). */
static int parse_one(const char *cmd, int argc, char **argv, int *i, const cli_option *opt, cli_api_opts *o)
{
    const opt_def *d = opt_def_of(opt->name);
    if (!d) {
        cli_error(CLI_EXIT_USAGE, "%s: --%s has no place to go (the command table is wrong)", cmd, opt->name);
        return -1;
    }
    const char *arg = argv[*i];
    if (d->kind == OPT_FLAG || d->kind == OPT_BOOL) {
        size_t n = strlen(opt->name);
        bool flag = cli_opt_flag(arg, opt->name);
        if (!flag && !(d->kind == OPT_BOOL && strncmp(arg, "--", 2) == 0 && strncmp(arg + 2, opt->name, n) == 0 &&
                       arg[2 + n] == '='))
            return 0;
        const char *v = flag ? "true" : arg + 3 + n;
        if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0) {
            cli_error(CLI_EXIT_USAGE, "%s: --%s takes true or false, not '%s'", cmd, opt->name, v);
            return -1;
        }
        if (d->kind == OPT_FLAG)
            *(bool *)(void *)((char *)o + d->offset) = true;
        else
            *(int *)(void *)((char *)o + d->offset) = strcmp(v, "true") == 0;
        return 1;
    }
    const char *value = NULL;
    int m = cli_opt_value(argc, argv, i, opt->name, &value);
    if (m == 0 && opt->alias)
        m = cli_opt_value(argc, argv, i, opt->alias, &value);
    if (m <= 0)
        return m;
    return store(cmd, opt, d, value, o) ? -1 : 1;
}

int cli_api_parse(const char *cmd, int argc, char **argv, const cli_option *opts, cli_api_opts *o)
{
    memset(o, 0, sizeof *o);
    o->is_force = -1;
    bool takes_args = cli_find_option(opts, "arg") != NULL;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) { /* the rest are command arguments */
            for (i++; i < argc && takes_args; i++) {
                if (o->args.n == CLI_API_MAX_REPEAT)
                    return cli_error(CLI_EXIT_USAGE, "%s: too many arguments", cmd);
                o->args.v[o->args.n++] = argv[i];
            }
            if (i < argc)
                return cli_error(CLI_EXIT_USAGE, "%s: unexpected argument %s after --", cmd, argv[i]);
            break;
        }
        int taken = 0;
        for (const cli_option *opt = opts; opt->name && !taken; opt++)
            taken = parse_one(cmd, argc, argv, &i, opt, o);
        if (taken < 0)
            return CLI_EXIT_USAGE; /* printed */
        if (!taken)
            return cli_unknown_option(cmd, arg);
    }
    for (const cli_option *opt = opts; opt->name; opt++) {
        const opt_def *d = opt_def_of(opt->name);
        if ((opt->flags & CLI_OPT_REQUIRED) && d && d->kind == OPT_TEXT &&
            cli_api_require(cmd, opt->name, *(const char **)(void *)((char *)o + d->offset)))
            return CLI_EXIT_USAGE;
    }
    return 0;
}

int cli_api_require(const char *cmd, const char *name, const char *value)
{
    if (value && value[0])
        return 0;
    return cli_error(CLI_EXIT_USAGE, "%s: --%s is required", cmd, name);
}

int cli_api_duration(const char *cmd, const char *name, const char *value)
{
    int64_t ms;
    if (ocisbx_duration_parse(value, &ms) != 0)
        return cli_error(CLI_EXIT_USAGE, "%s: --%s: %s", cmd, name, ocisbx_error_message(ocisbx_error_last()));
    return 0;
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
    long long t = 1200, p = 0;
    if (o->max_wait_seconds && cli_api_int(cmd, "max-wait-seconds", o->max_wait_seconds, 0, 172800, &t))
        return CLI_EXIT_USAGE;
    if (o->wait_interval_seconds && cli_api_int(cmd, "wait-interval-seconds", o->wait_interval_seconds, 0, 3600, &p))
        return CLI_EXIT_USAGE;
    *timeout_ms = t * 1000;
    *poll_ms = p ? p * 1000 : 200;
    /* not given: the poll_interval setting (OCI_SANDBOX_POLL_INTERVAL, else 2 s) */
    if (!o->wait_interval_seconds && ocisbx_setting_poll_interval_ms(NULL, poll_ms, NULL) != 0)
        return cli_error(CLI_EXIT_USAGE, "%s: %s", cmd, ocisbx_error_message(ocisbx_error_last()));
    return 0;
}

int cli_api_client(cli_ctx *ctx, ocisbx_client **out)
{
    *out = NULL;
    const char *endpoint = NULL;
    if (cli_endpoint(ctx, &endpoint) != 0)
        return CLI_EXIT_FAIL;
    ocisbx_http_options *h = NULL;
    ocisbx_client_options *o = NULL;
    int rc = ocisbx_http_options_new(&h);
    if (!rc)
        rc = cli_http_apply_globals(ctx, h);
    if (!rc)
        rc = ocisbx_client_options_new(&o);
    if (!rc)
        rc = ocisbx_client_options_set_http_options(o, h);
    /* the endpoint as cli_endpoint found it (a principal's region too); the
     * rest (credentials, API version, CA bundle, loopback http) the resolver's */
    if (!rc)
        rc = ocisbx_client_options_set_endpoint(o, endpoint);
    if (!rc)
        rc = ocisbx_settings_client_new(ctx->settings, o, out);
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
    if (!sub)
        return cli_error(CLI_EXIT_USAGE, "%s: give a subcommand: %s", cmd, subs);
    return cli_error(CLI_EXIT_USAGE, "%s: unknown subcommand %s (one of: %s)", cmd, sub, subs);
}

const cli_verb *cli_api_select(int argc, char **argv, cli_api_opts *o, char *cmd, size_t cmd_cap, int *exit_code)
{
    const cli_command *c = cli_find_command(argv[0]);
    const char *sub = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
    const cli_verb *v = c ? cli_find_verb(c, sub) : NULL;
    if (!v) {
        char names[320]; /* "create, get, ..." from the table */
        size_t len = 0;
        names[0] = '\0';
        for (const cli_verb *w = c ? c->verbs : NULL; w && w->name && len < sizeof names; w++)
            if (!(w->flags & CLI_VERB_HIDDEN))
                len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", w->name);
        *exit_code = cli_api_unknown_sub(argv[0], sub, names);
        return NULL;
    }
    snprintf(cmd, cmd_cap, "%s %s", argv[0], sub);
    if (cli_api_parse(cmd, argc - 2, argv + 2, v->options, o)) {
        *exit_code = CLI_EXIT_USAGE;
        return NULL;
    }
    return v;
}

bool cli_api_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    }
    return false;
}

/* One cell: the field as text (strings as they are, numbers and booleans
 * printed, "-" when absent), control bytes shown as '?'; malloc'd. */
static char *cell_text(const cJSON *item, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, key);
    char *t = NULL;
    if (cJSON_IsString(v) && v->valuestring)
        t = strdup(v->valuestring);
    else if (v && !cJSON_IsNull(v))
        t = cJSON_PrintUnformatted(v);
    else
        t = strdup("-");
    for (char *p = t; p && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return t;
}

int cli_api_list_options(const cli_api_opts *o, long long limit, ocisbx_list_options **out)
{
    ocisbx_list_options *lo = NULL;
    int rc = ocisbx_list_options_new(&lo);
    if (!rc)
        rc = ocisbx_list_options_set_limit(lo, (int)limit);
    if (!rc && o->page)
        rc = ocisbx_list_options_set(lo, "page", o->page);
    if (!rc && o->sort_by)
        rc = ocisbx_list_options_set(lo, "sortBy", o->sort_by);
    if (!rc && o->sort_order)
        rc = ocisbx_list_options_set(lo, "sortOrder", o->sort_order);
    if (rc) {
        ocisbx_list_options_free(lo);
        lo = NULL;
    }
    *out = lo;
    return rc;
}

int cli_api_list_add(cJSON *items, int rc, char *json)
{
    cJSON *item = rc ? NULL : cJSON_Parse(json);
    ocisbx_free(json);
    if (rc)
        return rc;
    if (!item || !cJSON_AddItemToArray(items, item)) {
        cJSON_Delete(item);
        return ocisbx_fail(OCISBX_ENOMEM, "out of memory");
    }
    return 0;
}

int cli_api_print_list(const cli_api_opts *o, const cJSON *list, const cli_column *cols)
{
    if (!o->output || strcmp(o->output, "json") == 0)
        return cli_print_json(list);
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    size_t ncols = 0, nrows = (size_t)cJSON_GetArraySize(items);
    while (cols[ncols].header)
        ncols++;
    size_t width[16] = {0};
    if (ncols > 16)
        ncols = 16;
    char **cells = calloc((nrows + 1) * ncols + 1, sizeof *cells);
    if (!cells)
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    for (size_t c = 0; c < ncols; c++)
        width[c] = strlen(cols[c].header);
    size_t r = 0;
    for (const cJSON *it = items ? items->child : NULL; it; it = it->next, r++)
        for (size_t c = 0; c < ncols; c++) {
            char *t = cell_text(it, cols[c].key);
            cells[r * ncols + c] = t;
            if (t && strlen(t) > width[c])
                width[c] = strlen(t);
        }
    for (size_t i = 0; i <= r; i++)
        for (size_t c = 0; c < ncols; c++) {
            const char *t = i == 0 ? cols[c].header : cells[(i - 1) * ncols + c] ? cells[(i - 1) * ncols + c] : "-";
            if (c + 1 < ncols)
                printf("%-*s  ", (int)width[c], t);
            else
                printf("%s\n", t);
        }
    for (size_t i = 0; i < r * ncols; i++)
        free(cells[i]);
    free(cells);
    const cJSON *next = cJSON_GetObjectItemCaseSensitive(list, "opcNextPage");
    if (cJSON_IsString(next) && next->valuestring)
        fprintf(stderr, "ocisbx: more items: --page %s\n", next->valuestring);
    return ferror(stdout) ? cli_stdout_failed() : 0;
}

int cli_api_print_one(const cli_api_opts *o, int rc, char *json, const cli_column *cols)
{
    if (rc || !o->output || strcmp(o->output, "json") == 0)
        return cli_api_print(rc, json);
    cJSON *item = cJSON_Parse(json);
    ocisbx_free(json);
    cJSON *list = cJSON_CreateObject();
    cJSON *items = list ? cJSON_AddArrayToObject(list, "items") : NULL;
    if (!item || !items) {
        cJSON_Delete(item);
        cJSON_Delete(list);
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    }
    cJSON_AddItemToArray(items, item);
    int st = cli_api_print_list(o, list, cols);
    cJSON_Delete(list);
    return st;
}
