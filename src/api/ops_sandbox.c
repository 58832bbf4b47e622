/* Sandbox operations. */
#include <string.h>

#include "api/client_internal.h"

#define MM(x) ((ocisbx_model *)(void *)(x))
#define CM(x) ((const ocisbx_model *)(const void *)(x))
#define OUT(type, out) ((ocisbx_model **)(void *)(out))

static int need(const char *what, const char *v)
{
    if (!v || !v[0])
        return ocisbx_fail(OCISBX_EINVAL, "%s is required", what);
    return 0;
}

int ocisbx_client_create_sandbox(ocisbx_client *c, const char *project_id, const ocisbx_create_sandbox_details *d,
                                 ocisbx_sandbox **out)
{
    int rc = need("project id", project_id);
    if (rc)
        return rc;
    /* check and normalise a copy: the caller's details stay as given */
    ocisbx_model *body = NULL;
    if (d) {
        cJSON *dup = cJSON_Duplicate(CM(d)->json, 1);
        if (!dup)
            return ocisbx_fail_nomem();
        rc = ocisbx_model_wrap(&ocisbx_md_create_sandbox_details, dup, &body);
    } else {
        rc = ocisbx_model_new_empty(&ocisbx_md_create_sandbox_details, &body);
    }
    if (!rc)
        rc = ocisbx_create_details_normalize(body);
    ocisbx_param p[] = {{"projectId", project_id}};
    if (!rc)
        rc = ocisbx_client_exec(c, OCISBX_OP_CREATE_SANDBOX, p, 1, body, OUT(ocisbx_sandbox, out));
    ocisbx_model_free(body);
    return rc;
}

int ocisbx_client_get_sandbox(ocisbx_client *c, const char *sandbox_id, ocisbx_sandbox **out)
{
    ocisbx_param p[] = {{"sandboxId", sandbox_id}};
    return ocisbx_client_exec(c, OCISBX_OP_GET_SANDBOX, p, 1, NULL, OUT(ocisbx_sandbox, out));
}

int ocisbx_client_list_sandboxes(ocisbx_client *c, const ocisbx_list_options *o, ocisbx_sandbox_collection **out)
{
    ocisbx_param p[OCISBX_MAX_PARAMS];
    size_t n = ocisbx_list_options_params(o, NULL, p, OCISBX_MAX_PARAMS);
    return ocisbx_client_exec(c, OCISBX_OP_LIST_SANDBOXES, p, n, NULL, OUT(ocisbx_sandbox_collection, out));
}

int ocisbx_client_update_sandbox(ocisbx_client *c, const char *sandbox_id, const char *display_name,
                                 ocisbx_sandbox **out)
{
    return ocisbx_client_update_sandbox_if_match(c, sandbox_id, display_name, NULL, out);
}

int ocisbx_client_update_sandbox_if_match(ocisbx_client *c, const char *sandbox_id, const char *display_name,
                                          const char *if_match, ocisbx_sandbox **out)
{
    ocisbx_model *body = NULL;
    int rc = ocisbx_model_new_empty(&ocisbx_md_update_sandbox_details, &body);
    if (!rc && display_name)
        rc = ocisbx_model_put_str(body, "displayName", display_name);
    ocisbx_param p[] = {{"sandboxId", sandbox_id}, {"ifMatch", if_match}};
    if (!rc)
        rc = ocisbx_client_exec(c, OCISBX_OP_UPDATE_SANDBOX, p, 2, body, OUT(ocisbx_sandbox, out));
    ocisbx_model_free(body);
    return rc;
}

int ocisbx_client_delete_sandbox(ocisbx_client *c, const char *sandbox_id)
{
    ocisbx_param p[] = {{"sandboxId", sandbox_id}};
    return ocisbx_client_exec(c, OCISBX_OP_DELETE_SANDBOX, p, 1, NULL, NULL);
}

int ocisbx_client_stop_sandbox(ocisbx_client *c, const char *sandbox_id, int is_force)
{
    return ocisbx_client_stop_sandbox_if_match(c, sandbox_id, is_force, NULL);
}

int ocisbx_client_stop_sandbox_if_match(ocisbx_client *c, const char *sandbox_id, int is_force, const char *if_match)
{
    ocisbx_model *body = NULL;
    int rc = ocisbx_model_new_empty(&ocisbx_md_stop_details, &body);
    if (!rc)
        rc = ocisbx_model_put_bool(body, "isForce", is_force != 0);
    ocisbx_param p[] = {{"sandboxId", sandbox_id}, {"ifMatch", if_match}};
    if (!rc)
        rc = ocisbx_client_exec(c, OCISBX_OP_STOP_SANDBOX, p, 2, body, NULL);
    ocisbx_model_free(body);
    return rc;
}

int ocisbx_client_extend_sandbox(ocisbx_client *c, const char *sandbox_id, const char *additional_duration,
                                 ocisbx_sandbox **out)
{
    return ocisbx_client_extend_sandbox_if_match(c, sandbox_id, additional_duration, NULL, out);
}

int ocisbx_client_extend_sandbox_if_match(ocisbx_client *c, const char *sandbox_id, const char *additional_duration,
                                          const char *if_match, ocisbx_sandbox **out)
{
    int64_t ms;
    int rc = need("additional duration", additional_duration);
    if (!rc && ocisbx_duration_parse(additional_duration, &ms))
        rc = ocisbx_error_wrap("ExtendSandboxDetails.additionalDuration: ");
    if (rc)
        return rc;
    ocisbx_model *body = NULL;
    rc = ocisbx_model_new_empty(&ocisbx_md_extend_details, &body);
    if (!rc)
        rc = ocisbx_model_put_str(body, "additionalDuration", additional_duration);
    ocisbx_param p[] = {{"sandboxId", sandbox_id}, {"ifMatch", if_match}};
    if (!rc)
        rc = ocisbx_client_exec(c, OCISBX_OP_EXTEND_SANDBOX, p, 2, body, OUT(ocisbx_sandbox, out));
    ocisbx_model_free(body);
    return rc;
}

int ocisbx_client_suspend_sandbox(ocisbx_client *c, const char *sandbox_id)
{
    ocisbx_param p[] = {{"sandboxId", sandbox_id}};
    return ocisbx_client_exec(c, OCISBX_OP_SUSPEND_SANDBOX, p, 1, NULL, NULL);
}

int ocisbx_client_resume_sandbox(ocisbx_client *c, const char *sandbox_id)
{
    ocisbx_param p[] = {{"sandboxId", sandbox_id}};
    return ocisbx_client_exec(c, OCISBX_OP_RESUME_SANDBOX, p, 1, NULL, NULL);
}

/* ---- snapshots ---- */
int ocisbx_client_create_snapshot(ocisbx_client *c, const char *sandbox_id, const char *expiration_duration,
                                  ocisbx_snapshot **out)
{
    int rc = need("sandbox id", sandbox_id);
    int64_t ms;
    if (!rc && expiration_duration && ocisbx_duration_parse(expiration_duration, &ms))
        rc = ocisbx_error_wrap("CreateSandboxSnapshotDetails.expirationDuration: ");
    if (rc)
        return rc;
    ocisbx_model *body = NULL;
    rc = ocisbx_model_new_empty(&ocisbx_md_create_snapshot_details, &body);
    if (!rc)
        rc = ocisbx_model_put_str(body, "sandboxId", sandbox_id);
    if (!rc && expiration_duration)
        rc = ocisbx_model_put_str(body, "expirationDuration", expiration_duration);
    if (!rc)
        rc = ocisbx_client_exec(c, OCISBX_OP_CREATE_SNAPSHOT, NULL, 0, body, OUT(ocisbx_snapshot, out));
    ocisbx_model_free(body);
    return rc;
}

int ocisbx_client_get_snapshot(ocisbx_client *c, const char *snapshot_id, ocisbx_snapshot **out)
{
    ocisbx_param p[] = {{"snapshotId", snapshot_id}};
    return ocisbx_client_exec(c, OCISBX_OP_GET_SNAPSHOT, p, 1, NULL, OUT(ocisbx_snapshot, out));
}

int ocisbx_client_delete_snapshot(ocisbx_client *c, const char *snapshot_id)
{
    return ocisbx_client_delete_snapshot_if_match(c, snapshot_id, NULL);
}

int ocisbx_client_delete_snapshot_if_match(ocisbx_client *c, const char *snapshot_id, const char *if_match)
{
    ocisbx_param p[] = {{"snapshotId", snapshot_id}, {"ifMatch", if_match}};
    return ocisbx_client_exec(c, OCISBX_OP_DELETE_SNAPSHOT, p, 2, NULL, NULL);
}

int ocisbx_client_list_snapshots(ocisbx_client *c, const ocisbx_list_options *o, ocisbx_snapshot_collection **out)
{
    ocisbx_param p[OCISBX_MAX_PARAMS];
    size_t n = ocisbx_list_options_params(o, NULL, p, OCISBX_MAX_PARAMS);
    return ocisbx_client_exec(c, OCISBX_OP_LIST_SNAPSHOTS, p, n, NULL, OUT(ocisbx_snapshot_collection, out));
}
