/* ocisbx sandbox create|get|list|update|stop|delete|extend|suspend|resume
 * (the helpers the api commands share are in cli_api.c). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ocisbx/api.h"

static const cli_column sandbox_cols[] = {
    {"ID", "id"},       {"DISPLAY NAME", "displayName"}, {"STATE", "lifecycleState"},
    {"SHAPE", "shape"}, {"CREATED", "timeCreated"},      {NULL, NULL}};

/* The sandbox as JSON, or with --output table (get) as one row. */
static int print_sandbox(const cli_api_opts *o, ocisbx_sandbox *s)
{
    char *json = NULL;
    int rc = ocisbx_sandbox_to_json(s, &json);
    ocisbx_sandbox_free(s);
    return cli_api_print_one(o, rc, json, sandbox_cols);
}

/* --wait-for-state (each given one; the first reached ends the wait). */
static int wait_sandbox(ocisbx_client *c, const cli_api_opts *o, const char *id, int64_t t, int64_t p,
                        ocisbx_sandbox **s)
{
    return ocisbx_client_wait_sandbox_any(c, id, o->wait_for_state.v, (size_t)o->wait_for_state.n, t, p, s);
}

/* After an action: wait for --wait-for-state and print the sandbox, or
 * print nothing (the service answers 202 without a body). */
static int finish_action(ocisbx_client *c, const char *cmd, const cli_api_opts *o, int rc)
{
    if (rc)
        return cli_fail_last();
    if (!o->wait_for_state.n)
        return CLI_EXIT_OK;
    int64_t t, p;
    if (cli_api_wait_ms(cmd, o, &t, &p))
        return CLI_EXIT_USAGE;
    ocisbx_sandbox *s = NULL;
    rc = wait_sandbox(c, o, o->sandbox_id, t, p, &s);
    if (rc)
        return cli_fail_last();
    if (!s)
        return CLI_EXIT_OK; /* DELETED: gone */
    return print_sandbox(o, s);
}

/* A setting's value when a variable set it (the settings table's; not its
 * default: the service's own defaults apply to this raw create). */
static const char *env_value(const char *name)
{
    ocisbx_setting_source src;
    const char *v = ocisbx_setting_lookup(name, NULL, &src, NULL);
    return src == OCISBX_SETTING_ENV ? v : NULL;
}

/* OCI_SANDBOX_EXPIRATION: an ISO 8601 duration, sent as whole minutes
 * (rounded up); at most 48 h, and a lifetime that never ends (or none at
 * all) is refused. */
static int expiration_from_env(const char *cmd, const char *text, long long *minutes)
{
    int64_t ms = 0;
    if (ocisbx_duration_parse(text, &ms) != 0)
        return cli_error(CLI_EXIT_USAGE, "%s: OCI_SANDBOX_EXPIRATION: %s", cmd,
                         ocisbx_error_message(ocisbx_error_last()));
    if (ms <= 0)
        return cli_error(CLI_EXIT_USAGE,
                         "%s: OCI_SANDBOX_EXPIRATION %s: the lifetime must be more than 0 (one that "
                         "never ends is refused)",
                         cmd, text);
    if (ms > (int64_t)OCISBX_EXPIRES_IN_MINUTES_MAX * 60000)
        return cli_error(CLI_EXIT_USAGE, "%s: OCI_SANDBOX_EXPIRATION %s: more than 48 hours (PT48H)", cmd, text);
    *minutes = (ms + 59999) / 60000;
    return 0;
}

/* --expiration-duration (the OCI CLI's option): an ISO 8601 duration, sent
 * as expiresInMinutes (whole minutes, rounded up; the deprecated
 * expirationDuration field is never sent); more than 0 and at most 48 h
 * (no expiry at all is --expires-in-minutes -1). */
static int expiration_option_minutes(const char *cmd, const char *text, long long *minutes)
{
    int64_t ms = 0;
    if (ocisbx_duration_parse(text, &ms) != 0)
        return cli_error(CLI_EXIT_USAGE, "%s: --expiration-duration: %s", cmd,
                         ocisbx_error_message(ocisbx_error_last()));
    if (ms <= 0)
        return cli_error(CLI_EXIT_USAGE, "%s: --expiration-duration %s: the lifetime must be more than 0", cmd, text);
    if (ms > (int64_t)OCISBX_EXPIRES_IN_MINUTES_MAX * 60000)
        return cli_error(CLI_EXIT_USAGE, "%s: --expiration-duration %s: more than 48 hours (PT48H)", cmd, text);
    *minutes = (ms + 59999) / 60000;
    return 0;
}

/* The lifetime of create: --expires-in-minutes, else --expiration-duration,
 * else OCI_SANDBOX_EXPIRATION; *given false when none. Checked before
 * anything else is done (a usage error exits 2). */
static int create_lifetime(const char *cmd, const cli_api_opts *o, long long *minutes_out, bool *given)
{
    if (o->expires_in_minutes && o->expiration_duration)
        return cli_error(CLI_EXIT_USAGE, "%s: give --expires-in-minutes or --expiration-duration, not both", cmd);
    const char *expiration = o->expires_in_minutes || o->expiration_duration ? NULL
                                                                             : env_value("expiration");
    long long minutes = 0;
    if (o->expires_in_minutes) {
        /* -1 disables automatic expiry [public]: passed through */
        char *end = NULL;
        const char *v = o->expires_in_minutes;
        long long m = strtoll(v, &end, 10);
        if (!*v || *end || (m != OCISBX_EXPIRES_NEVER && (m < 1 || m > OCISBX_EXPIRES_IN_MINUTES_MAX)))
            return cli_error(CLI_EXIT_USAGE,
                             "%s: --expires-in-minutes must be -1 (no automatic expiry) or from 1 to %d, not '%s'",
                             cmd, OCISBX_EXPIRES_IN_MINUTES_MAX, v);
        minutes = m;
    }
    /* the OCI CLI's --expiration-duration: the deprecated field is never
     * sent; the ISO 8601 duration goes as whole minutes, rounded up */
    if (o->expiration_duration && expiration_option_minutes(cmd, o->expiration_duration, &minutes))
        return CLI_EXIT_USAGE;
    if (expiration && expiration_from_env(cmd, expiration, &minutes))
        return CLI_EXIT_USAGE;
    *minutes_out = minutes;
    *given = o->expires_in_minutes || o->expiration_duration || expiration;
    return 0;
}

static int sandbox_create(ocisbx_client *c, cli_ctx *ctx, const cli_api_opts *o)
{
    const char *cmd = "sandbox create";
    const char *project = o->project_id ? o->project_id : cli_setting(ctx, "project_id");
    if (cli_api_require(cmd, "project-id", project))
        return CLI_EXIT_USAGE;
    /* explicit options win over the environment, which wins over the service's defaults */
    const char *runtime = o->runtime ? o->runtime : env_value("runtime");
    const char *shape = o->shape ? o->shape : env_value("shape");
    long long minutes = 0;
    bool given = false;
    if (create_lifetime(cmd, o, &minutes, &given))
        return CLI_EXIT_USAGE;
    ocisbx_create_sandbox_details *d = NULL;
    int rc = ocisbx_create_sandbox_details_new(&d);
    if (!rc && given)
        rc = ocisbx_create_sandbox_details_set_expires_in_minutes(d, minutes);
    if (!rc && o->display_name)
        rc = ocisbx_create_sandbox_details_set_display_name(d, o->display_name);
    if (!rc && runtime)
        rc = ocisbx_create_sandbox_details_set_runtime(d, runtime);
    if (!rc && shape)
        rc = ocisbx_create_sandbox_details_set_shape(d, shape);
    if (!rc && o->warmpool_name)
        rc = ocisbx_create_sandbox_details_set_warmpool_name(d, o->warmpool_name);
    if (!rc && o->snapshot_id)
        rc = ocisbx_create_sandbox_details_set_source_snapshot(d, o->snapshot_id);
    for (int i = 0; !rc && i < o->env.n; i++) {
        const char *eq = strchr(o->env.v[i], '=');
        char *name = strndup(o->env.v[i], (size_t)(eq - o->env.v[i]));
        rc = name ? ocisbx_create_sandbox_details_add_env(d, name, eq + 1) : OCISBX_ENOMEM;
        free(name);
    }
    ocisbx_sandbox *s = NULL;
    if (!rc)
        rc = ocisbx_client_create_sandbox(c, project, d, &s);
    ocisbx_create_sandbox_details_free(d);
    if (rc)
        return cli_fail_last();
    if (o->wait_for_state.n) {
        int64_t t, p;
        if (cli_api_wait_ms(cmd, o, &t, &p)) {
            ocisbx_sandbox_free(s);
            return CLI_EXIT_USAGE;
        }
        char *id = strdup(ocisbx_sandbox_id(s));
        ocisbx_sandbox_free(s);
        s = NULL;
        rc = id ? wait_sandbox(c, o, id, t, p, &s) : OCISBX_ENOMEM;
        free(id);
        if (rc)
            return cli_fail_last();
    }
    return print_sandbox(o, s);
}

static int sandbox_list(ocisbx_client *c, cli_ctx *ctx, const cli_api_opts *o)
{
    const char *cmd = "sandbox list";
    const char *project = o->project_id ? o->project_id : cli_setting(ctx, "project_id");
    long long limit = 0;
    if (o->limit && cli_api_int(cmd, "limit", o->limit, 1, 1000, &limit))
        return CLI_EXIT_USAGE;
    ocisbx_list_options *lo = NULL;
    int rc = cli_api_list_options(o, limit, &lo);
    if (!rc && project)
        rc = ocisbx_list_options_set(lo, "projectId", project);
    if (!rc && o->display_name)
        rc = ocisbx_list_options_set(lo, "displayName", o->display_name);
    if (!rc && o->lifecycle_state)
        rc = ocisbx_list_options_set(lo, "lifecycleState", o->lifecycle_state);
    if (rc) {
        ocisbx_list_options_free(lo);
        return cli_fail_last();
    }
    if (!o->all) {
        ocisbx_sandbox_collection *l = NULL;
        rc = ocisbx_client_list_sandboxes(c, lo, &l);
        ocisbx_list_options_free(lo);
        if (rc)
            return cli_fail_last();
        char *json = NULL;
        rc = ocisbx_sandbox_collection_to_json(l, &json);
        cJSON *j = rc ? NULL : cJSON_Parse(json);
        ocisbx_free(json);
        if (j && ocisbx_sandbox_collection_next_page(l))
            cJSON_AddStringToObject(j, "opcNextPage", ocisbx_sandbox_collection_next_page(l));
        ocisbx_sandbox_collection_free(l);
        if (!j)
            return cli_error(CLI_EXIT_FAIL, "sandbox list: out of memory");
        int st = cli_api_print_list(o, j, sandbox_cols);
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
        rc = ocisbx_sandbox_to_json(s, &json);
        rc = cli_api_list_add(items, rc, json);
    }
    ocisbx_sandbox_iter_free(it);
    int st = rc ? cli_fail_last() : cli_api_print_list(o, out, sandbox_cols);
    cJSON_Delete(out);
    return st;
}

int cmd_sandbox(cli_ctx *ctx, int argc, char **argv)
{
    char cmd[64];
    cli_api_opts o;
    int exit_code;
    const cli_verb *v = cli_api_select(argc, argv, &o, cmd, sizeof cmd, &exit_code);
    if (!v)
        return exit_code;
    const char *sub = cli_verb_id(v);
    if (strcmp(sub, "create-from-snapshot") == 0) /* --source-snapshot-id required there (the table) */
        sub = "create";
    if (o.wait_for_state.n) { /* checked before any request is sent (the states by the table) */
        int64_t t, p;
        if (cli_api_wait_ms(cmd, &o, &t, &p))
            return CLI_EXIT_USAGE;
    }
    if (strcmp(sub, "extend") == 0 && cli_api_duration(cmd, "additional-duration", o.additional_duration))
        return CLI_EXIT_USAGE;
    if (strcmp(sub, "create") == 0) { /* the lifetime's usage errors come before credentials and requests */
        long long minutes;
        bool given;
        if (create_lifetime(cmd, &o, &minutes, &given))
            return CLI_EXIT_USAGE;
    }
    ocisbx_client *c = NULL;
    if (cli_api_client(ctx, &c))
        return CLI_EXIT_FAIL;
    int st;
    ocisbx_sandbox *s = NULL;
    if (strcmp(sub, "create") == 0) {
        st = sandbox_create(c, ctx, &o);
    } else if (strcmp(sub, "get") == 0) {
        st = ocisbx_client_get_sandbox(c, o.sandbox_id, &s) ? cli_fail_last() : print_sandbox(&o, s);
    } else if (strcmp(sub, "list") == 0) {
        st = sandbox_list(c, ctx, &o);
    } else if (strcmp(sub, "update") == 0) {
        int rc = ocisbx_client_update_sandbox_if_match(c, o.sandbox_id, o.display_name, o.if_match, &s);
        st =
            rc ? cli_fail_last()
               : (o.wait_for_state.n ? (ocisbx_sandbox_free(s), finish_action(c, cmd, &o, 0)) : print_sandbox(&o, s));
    } else if (strcmp(sub, "stop") == 0) {
        st = finish_action(c, cmd, &o,
                           ocisbx_client_stop_sandbox_if_match(c, o.sandbox_id, o.is_force == 1, o.if_match));
    } else if (strcmp(sub, "delete") == 0) {
        st = finish_action(c, cmd, &o, ocisbx_client_delete_sandbox(c, o.sandbox_id));
    } else if (strcmp(sub, "extend") == 0) {
        st = ocisbx_client_extend_sandbox_if_match(c, o.sandbox_id, o.additional_duration, o.if_match, &s)
                 ? cli_fail_last()
                 : print_sandbox(&o, s);
    } else if (strcmp(sub, "suspend") == 0) {
        st = finish_action(c, cmd, &o, ocisbx_client_suspend_sandbox(c, o.sandbox_id));
    } else {
        st = finish_action(c, cmd, &o, ocisbx_client_resume_sandbox(c, o.sandbox_id));
    }
    ocisbx_client_free(c);
    return st;
}
