/* ocisbx sandbox-snapshot create|get|delete, sandbox-snapshot-collection list
 * (the OCI CLI's names); the legacy "snapshot" group stays. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ocisbx/api.h"

static const cli_column snapshot_cols[] = {{"ID", "id"},
                                           {"DISPLAY NAME", "displayName"},
                                           {"STATE", "lifecycleState"},
                                           {"SANDBOX", "sandboxId"},
                                           {"CREATED", "timeCreated"},
                                           {NULL, NULL}};

static int print_snapshot(const cli_api_opts *o, int rc, ocisbx_snapshot *s)
{
    char *json = NULL;
    if (!rc)
        rc = ocisbx_snapshot_to_json(s, &json);
    ocisbx_snapshot_free(s);
    return cli_api_print_one(o, rc, json, snapshot_cols);
}

/* --wait-for-state (each given one; the first reached ends the wait). */
static int wait_snapshot(ocisbx_client *c, const cli_api_opts *o, const char *id, int64_t t, int64_t p,
                         ocisbx_snapshot **s)
{
    return ocisbx_client_wait_snapshot_any(c, id, o->wait_for_state.v, (size_t)o->wait_for_state.n, t, p, s);
}

int cmd_snapshot(cli_ctx *ctx, int argc, char **argv)
{
    char cmd[64];
    cli_api_opts o;
    int exit_code;
    const cli_verb *v = cli_api_select(argc, argv, &o, cmd, sizeof cmd, &exit_code);
    if (!v)
        return exit_code;
    const char *sub = cli_verb_id(v); /* the required options: by the table */
    long long limit = 0;
    if (o.limit && cli_api_int(cmd, "limit", o.limit, 1, 1000, &limit))
        return CLI_EXIT_USAGE;
    if (o.expiration_duration && cli_api_duration(cmd, "expiration-duration", o.expiration_duration))
        return CLI_EXIT_USAGE;
    int64_t wait_t = 0, wait_p = 0;
    if (o.wait_for_state.n && cli_api_wait_ms(cmd, &o, &wait_t, &wait_p))
        return CLI_EXIT_USAGE;
    ocisbx_client *c = NULL;
    if (cli_api_client(ctx, &c))
        return CLI_EXIT_FAIL;
    int st, rc;
    ocisbx_snapshot *s = NULL;
    if (strcmp(sub, "create") == 0) {
        rc = ocisbx_client_create_snapshot(c, o.sandbox_id, o.expiration_duration, &s);
        if (!rc && o.wait_for_state.n) {
            char *id = strdup(ocisbx_snapshot_id(s));
            ocisbx_snapshot_free(s);
            s = NULL;
            rc = id ? wait_snapshot(c, &o, id, wait_t, wait_p, &s) : OCISBX_ENOMEM;
            free(id);
        }
        st = print_snapshot(&o, rc, s);
    } else if (strcmp(sub, "get") == 0) {
        rc = ocisbx_client_get_snapshot(c, o.snapshot_id, &s);
        st = print_snapshot(&o, rc, s);
    } else if (strcmp(sub, "delete") == 0) {
        rc = ocisbx_client_delete_snapshot_if_match(c, o.snapshot_id, o.if_match);
        if (!rc && o.wait_for_state.n)
            rc = wait_snapshot(c, &o, o.snapshot_id, wait_t, wait_p, &s);
        st = rc ? cli_fail_last() : (s ? print_snapshot(&o, 0, s) : CLI_EXIT_OK);
    } else {
        ocisbx_list_options *lo = NULL;
        rc = cli_api_list_options(&o, limit, &lo);
        if (!rc && o.sandbox_id)
            rc = ocisbx_list_options_set(lo, "sandboxId", o.sandbox_id);
        const char *project = o.project_id ? o.project_id : cli_setting(ctx, "project_id");
        if (!rc && project)
            rc = ocisbx_list_options_set(lo, "projectId", project);
        if (!rc && o.display_name)
            rc = ocisbx_list_options_set(lo, "displayName", o.display_name);
        if (!rc && o.snapshot_id)
            rc = ocisbx_list_options_set(lo, "snapshotId", o.snapshot_id);
        if (!rc && o.lifecycle_state)
            rc = ocisbx_list_options_set(lo, "lifecycleState", o.lifecycle_state);
        cJSON *outj = cJSON_CreateObject();
        cJSON *items = cJSON_AddArrayToObject(outj, "items");
        if (!rc && o.all) {
            ocisbx_snapshot_iter *it = NULL;
            const ocisbx_snapshot *item = NULL;
            rc = ocisbx_client_iter_snapshots(c, lo, &it);
            while (!rc && (rc = ocisbx_snapshot_iter_next(it, &item)) == 0 && item) {
                char *json = NULL;
                rc = ocisbx_snapshot_to_json(item, &json);
                rc = cli_api_list_add(items, rc, json);
            }
            ocisbx_snapshot_iter_free(it);
        } else if (!rc) {
            ocisbx_snapshot_collection *l = NULL;
            rc = ocisbx_client_list_snapshots(c, lo, &l);
            for (size_t i = 0; !rc && i < ocisbx_snapshot_collection_count(l); i++) {
                char *json = NULL;
                rc = ocisbx_snapshot_to_json(ocisbx_snapshot_collection_item(l, i), &json);
                rc = cli_api_list_add(items, rc, json);
            }
            if (!rc && ocisbx_snapshot_collection_next_page(l))
                cJSON_AddStringToObject(outj, "opcNextPage", ocisbx_snapshot_collection_next_page(l));
            ocisbx_snapshot_collection_free(l);
        }
        ocisbx_list_options_free(lo);
        st = rc ? cli_fail_last() : cli_api_print_list(&o, outj, snapshot_cols);
        cJSON_Delete(outj);
    }
    ocisbx_client_free(c);
    return st;
}
