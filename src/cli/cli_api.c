/* Helpers shared by the api commands (sandbox, command, file, snapshot):
 * the option table, the client, JSON output, usage lines. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
    {"if-match", F(if_match)},
    {"sort-by", F(sort_by)},
    {"sort-order", F(sort_order)},
    {"output", F(output)},
    /* the OCI CLI's names */
    {"sandbox-file-path", F(file_path)},
    {"file", F(from_file)},
    {"local-file", F(to_file)},
    {"source-snapshot-id", F(snapshot_id)},
    {"env", SIZE_MAX},
    {"arg", SIZE_MAX},
};

/* This CLI's first option names, still accepted where the OCI CLI's name
 * (the one --help shows) is allowed and the old name itself is not. */
static const struct {
    const char *old_name, *oci_name;
} opt_aliases[] = {
    {"file-path", "sandbox-file-path"},
    {"from-file", "file"},
    {"to-file", "local-file"},
    {"snapshot-id", "source-snapshot-id"},
};

static bool allowed_has(const char *allowed, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = allowed; (p = strstr(p, name)) != NULL; p += n)
        if ((p == allowed || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
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
                if (o->nargs == CLI_API_MAX_REPEAT)
                    return cli_error(CLI_EXIT_USAGE, "%s: too many arguments", cmd);
                o->args[o->nargs++] = argv[i];
            }
            if (i < argc)
                return cli_error(CLI_EXIT_USAGE, "%s: unexpected argument %s after --", cmd, argv[i]);
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
            if (!allowed_has(allowed, opt_defs[d].name))
                continue;
            const char *value = NULL;
            int m = cli_opt_value(argc, argv, &i, opt_defs[d].name, &value);
            for (size_t a = 0; m == 0 && a < sizeof opt_aliases / sizeof opt_aliases[0]; a++)
                if (strcmp(opt_aliases[a].oci_name, opt_defs[d].name) == 0 &&
                    !allowed_has(allowed, opt_aliases[a].old_name))
                    m = cli_opt_value(argc, argv, &i, opt_aliases[a].old_name, &value);
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (m == 0)
                continue;
            taken = true;
            if (opt_defs[d].offset != SIZE_MAX) {
                *(const char **)(void *)((char *)o + opt_defs[d].offset) = value;
            } else if (strcmp(opt_defs[d].name, "env") == 0) {
                if (!strchr(value, '=') || value[0] == '=')
                    return cli_error(CLI_EXIT_USAGE, "%s: --env takes NAME=VALUE, not '%s'", cmd, value);
                if (o->nenv == CLI_API_MAX_REPEAT)
                    return cli_error(CLI_EXIT_USAGE, "%s: too many --env", cmd);
                o->env[o->nenv++] = value;
            } else {
                if (o->nargs == CLI_API_MAX_REPEAT)
                    return cli_error(CLI_EXIT_USAGE, "%s: too many --arg", cmd);
                o->args[o->nargs++] = value;
            }
        }
        if (!taken)
            return cli_unknown_option(cmd, arg);
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
    long long t = 1200, p = 2;
    if (o->max_wait_seconds && cli_api_int(cmd, "max-wait-seconds", o->max_wait_seconds, 0, 172800, &t))
        return CLI_EXIT_USAGE;
    if (o->wait_interval_seconds && cli_api_int(cmd, "wait-interval-seconds", o->wait_interval_seconds, 0, 3600, &p))
        return CLI_EXIT_USAGE;
    *timeout_ms = t * 1000;
    *poll_ms = p ? p * 1000 : 200;
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

/* Whether subs[i] belongs to the group as typed: an OCI group holds its
 * own subcommands, the legacy group (not also an OCI group) all of them. */
static bool in_group(const char *group, bool legacy_only, const cli_api_sub *s)
{
    return legacy_only || strcmp(s->group, group) == 0;
}

int cli_api_select(const char *legacy, const cli_api_sub *subs, size_t n, int argc, char **argv, cli_api_opts *o,
                   char *cmd, size_t cmd_cap, int *exit_code)
{
    const char *group = argv[0];
    const char *sub = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
    bool is_legacy = strcmp(group, legacy) == 0;
    bool legacy_only = true;
    for (size_t i = 0; i < n; i++)
        legacy_only = legacy_only && strcmp(subs[i].group, group) != 0;
    size_t k = n;
    /* the OCI CLI's name first, then the short one under the legacy group */
    for (size_t i = 0; sub && k == n && i < n; i++)
        if (in_group(group, legacy_only, &subs[i]) && strcmp(subs[i].oci, sub) == 0)
            k = i;
    for (size_t i = 0; sub && k == n && is_legacy && i < n; i++)
        if (strcmp(subs[i].name, sub) == 0)
            k = i;
    if (cli_api_wants_help(argc, argv)) {
        printf("usage:\n");
        for (size_t i = 0; i < n; i++)
            if ((k == n && in_group(group, legacy_only, &subs[i])) || i == k)
                cli_api_usage_line(legacy, &subs[i]);
        if (k < n)
            cli_api_usage_detail(legacy, &subs[k]);
        *exit_code = CLI_EXIT_OK;
        return -1;
    }
    if (!sub || k == n) {
        char names[320]; /* "create, get, ..." from the table */
        size_t len = 0;
        names[0] = '\0';
        for (size_t i = 0; i < n && len < sizeof names; i++)
            if (in_group(group, legacy_only, &subs[i]))
                len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                                        legacy_only ? subs[i].name : subs[i].oci);
        *exit_code = cli_api_unknown_sub(group, sub, names);
        return -1;
    }
    snprintf(cmd, cmd_cap, "%s %s", group, sub);
    if (cli_api_parse(cmd, argc - 2, argv + 2, subs[k].allowed, o)) {
        *exit_code = CLI_EXIT_USAGE;
        return -1;
    }
    if (o->output && strcmp(o->output, "json") != 0 && strcmp(o->output, "table") != 0) {
        *exit_code = cli_error(CLI_EXIT_USAGE, "%s: --output is json or table, not '%s'", cmd, o->output);
        return -1;
    }
    return (int)k;
}

int cli_api_check_state(const char *cmd, const char *state, const char *states)
{
    if (state && *state && !strchr(state, ' ') && allowed_has(states, state))
        return 0;
    char list[256];
    size_t o = 0;
    for (const char *p = states; *p && o + 3 < sizeof list; p++) { /* "A B C" -> "A, B, C" */
        if (*p == ' ')
            list[o++] = ',';
        list[o++] = *p;
    }
    list[o] = '\0';
    return cli_error(CLI_EXIT_USAGE, "%s: --wait-for-state %s is not a state of this resource (one of: %s)", cmd,
                     state ? state : "", list);
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

/* "  ocisbx sandbox stop --sandbox-id V [--is-force] ..." on stdout. */
/* One line per option for `<command> <subcommand> --help`. */
static const struct {
    const char *name, *value, *text;
} opt_help[] = {
    {"sandbox-id", "ID", "the sandbox's id"},
    {"project-id", "OCID", "the project (else OCI_SANDBOX_PROJECT_ID)"},
    {"command-id", "ID", "the command's id"},
    {"snapshot-id", "ID", "the snapshot's id (create: start from this snapshot)"},
    {"display-name", "NAME", "a display name"},
    {"runtime", "NAME", "the runtime image, e.g. python-3.11"},
    {"shape", "NAME", "the shape, e.g. SMALL"},
    {"expires-in-minutes", "N", "lifetime in minutes, 1-2880 (48 h), or -1: no automatic expiry"},
    {"additional-duration", "DURATION", "ISO 8601 time to add, e.g. PT30M"},
    {"command", "TEXT", "the shell command to run"},
    {"timeout", "DURATION", "ISO 8601 limit of the command, e.g. PT5M"},
    {"cwd", "PATH", "working directory (absolute, under /workspace)"},
    {"sandbox-file-path", "PATH", "the file in the sandbox (absolute; alias --file-path)"},
    {"file", "PATH", "local file to send ('-': standard input; alias --from-file)"},
    {"local-file", "PATH",
     "local file to write ('-' or absent: standard output, after the hash check; alias --to-file)"},
    {"source-snapshot-id", "ID", "the snapshot the new sandbox starts from (alias --snapshot-id)"},
    {"if-match", "ETAG", "act only if the resource's etag is still ETAG (else 412)"},
    {"sort-by", "FIELD", "sort the list by FIELD"},
    {"sort-order", "ORDER", "ASC or DESC"},
    {"from-seq", "N", "first event sequence number (absent: from the start)"},
    {"wait-for-state", "STATE", "wait until the resource reaches STATE (commands: the derived state)"},
    {"limit", "N", "at most N items per page (1-1000)"},
    {"page", "TOKEN", "the page token of a previous answer"},
    {"lifecycle-state", "STATE", "only items in this state"},
    {"max-wait-seconds", "N", "give up waiting after N seconds"},
    {"wait-interval-seconds", "N", "seconds between checks while waiting"},
    {"expiration-duration", "DURATION", "ISO 8601 lifetime, e.g. P7D (sandbox create: sent as whole minutes)"},
    {"warmpool-name", "NAME", "take the sandbox from this warm pool"},
    {"env", "NAME=VALUE", "an environment variable (repeatable)"},
    {"arg", "V", "an argument of the command (repeatable; or after --)"},
    {"is-force", NULL, "stop at once (no graceful shutdown)"},
    {"all", NULL, "follow every page"},
    {"output", "FORMAT", "json (the default) or table: aligned columns with a header"},
};

/* The options a subcommand refuses to run without (the same checks as the
 * commands make). */
static bool opt_required(const char *cmd, const char *sub, const char *name)
{
    bool run = strncmp(sub, "run", 3) == 0;
    if (strcmp(cmd, "sandbox") == 0) {
        if (strcmp(name, "sandbox-id") == 0)
            return strcmp(sub, "create") != 0 && strcmp(sub, "create-from-snapshot") != 0 && strcmp(sub, "list") != 0;
        if (strcmp(name, "source-snapshot-id") == 0)
            return strcmp(sub, "create-from-snapshot") == 0;
        if (strcmp(name, "project-id") == 0)
            return strncmp(sub, "create", 6) == 0;
        if (strcmp(name, "additional-duration") == 0)
            return strcmp(sub, "extend") == 0;
        if (strcmp(name, "display-name") == 0)
            return strcmp(sub, "update") == 0;
    } else if (strcmp(cmd, "command") == 0) {
        if (strcmp(name, "sandbox-id") == 0)
            return true;
        if (strcmp(name, "command") == 0)
            return run;
        if (strcmp(name, "command-id") == 0)
            return !run && strcmp(sub, "list") != 0;
    } else if (strcmp(cmd, "file") == 0) {
        if (strcmp(name, "sandbox-id") == 0 || strcmp(name, "sandbox-file-path") == 0)
            return true;
        if (strcmp(name, "file") == 0)
            return strcmp(sub, "write") == 0;
    } else if (strcmp(cmd, "snapshot") == 0) {
        if (strcmp(name, "sandbox-id") == 0)
            return strcmp(sub, "create") == 0;
        if (strcmp(name, "snapshot-id") == 0)
            return strcmp(sub, "get") == 0 || strcmp(sub, "delete") == 0;
    }
    return false;
}

void cli_api_usage_detail(const char *cmd, const cli_api_sub *s)
{
    const char *sub = s->name;
    printf("\noptions of %s %s (* required):\n", s->group, s->oci);
    const char *p = s->allowed;
    while (*p) {
        size_t n = strcspn(p, " ");
        char name[40];
        snprintf(name, sizeof name, "%.*s", (int)(n < 39 ? n : 39), p);
        for (size_t i = 0; i < sizeof opt_help / sizeof opt_help[0]; i++) {
            if (strcmp(opt_help[i].name, name) != 0)
                continue;
            char left[64];
            snprintf(left, sizeof left, "--%s%s%s", name, opt_help[i].value ? " " : "",
                     opt_help[i].value ? opt_help[i].value : "");
            printf("  %c %-32s %s\n", opt_required(cmd, sub, name) ? '*' : ' ', left, opt_help[i].text);
        }
        p += n;
        while (*p == ' ')
            p++;
    }
}

void cli_api_usage_line(const char *cmd, const cli_api_sub *s)
{
    const char *sub = s->name;
    printf("  ocisbx %s %s", s->group, s->oci);
    const char *p = s->allowed;
    while (*p) {
        size_t n = strcspn(p, " ");
        if (n == 3 && strncmp(p, "arg", 3) == 0)
            printf(" [--arg V]... [-- ARG...]");
        else if ((n == 8 && strncmp(p, "is-force", 8) == 0) || (n == 3 && strncmp(p, "all", 3) == 0))
            printf(" [--%.*s]", (int)n, p);
        else if (n == 3 && strncmp(p, "env", 3) == 0)
            printf(" [--env NAME=VALUE]...");
        else {
            char name[40];
            snprintf(name, sizeof name, "%.*s", (int)(n < 39 ? n : 39), p);
            printf(opt_required(cmd, sub, name) ? " --%s V" : " [--%s V]", name);
        }
        p += n;
        while (*p == ' ')
            p++;
    }
    printf("\n");
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
