/* The sandbox operations: create (the CreateSandboxDetails body checked
 * field by field), list, get, update, delete and the lifecycle actions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/emu.h"
#include "ocisbx/util.h"

#define DEFAULT_EXPIRES_MIN 60

emu_sandbox *emu_h_sandbox_of(emu_server *s, const emu_route *rt, emu_response *resp)
{
    emu_sandbox *b = emu_sandbox_find(s, rt->sandbox_id);
    if (!b)
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "sandbox %s not found or not authorized", rt->sandbox_id);
    return b;
}

static void etag(const emu_sandbox *b, char out[64])
{
    snprintf(out, 64, "\"%s-%lld\"", b->id, (long long)b->version);
}

static void sandbox_answer(emu_response *resp, int status, const emu_sandbox *b)
{
    char e[64];
    etag(b, e);
    emu_response_header(resp, "etag", e);
    emu_json(resp, status, emu_sandbox_json(b, false));
}

/* If-Match (optional) must name the current etag: 412 otherwise. */
static int if_match(const emu_request *req, const emu_sandbox *b, emu_response *resp)
{
    const char *im = emu_request_header(req, "if-match");
    if (!im || !strcmp(im, "*"))
        return 0;
    char e[64];
    etag(b, e);
    if (!strcmp(im, e))
        return 0;
    emu_error(resp, 412, "PreconditionFailed", "if-match %s does not match the current etag %s", im, e);
    return -1;
}

/* expiresInMinutes or expirationDuration (or the default) into b. */
static int parse_expiry(emu_server *s, const cJSON *body, emu_sandbox *b, emu_response *resp)
{
    const char *duration = NULL;
    int64_t minutes = 0;
    bool has_minutes = false;
    if (emu_json_str(body, "expirationDuration", &duration, resp) ||
        emu_json_int(body, "expiresInMinutes", &minutes, &has_minutes, resp))
        return -1;
    int64_t maxmin = s->cfg->limits.max_lifetime_minutes;
    if (has_minutes && duration)
        return emu_error(resp, 400, "InvalidParameter", "give expiresInMinutes or expirationDuration, not both"), -1;
    if (duration) {
        int64_t ms;
        if (ocisbx_duration_parse(duration, &ms) != 0 || ms <= 0)
            return emu_error(resp, 400, "InvalidParameter", "expirationDuration is not an ISO 8601 duration: %s",
                             duration),
                   -1;
        minutes = (ms + 59999) / 60000;
        has_minutes = true;
    }
    if (!has_minutes)
        minutes = DEFAULT_EXPIRES_MIN < maxmin ? DEFAULT_EXPIRES_MIN : maxmin;
    /* -1 disables automatic expiration [public] */
    if (minutes != -1 && (minutes < 1 || minutes > maxmin))
        return emu_error(resp, 400, "InvalidParameter",
                         "expiresInMinutes must be -1 (no expiry) or from 1 to %lld, not %lld", (long long)maxmin,
                         (long long)minutes),
               -1;
    b->expires_in_minutes = minutes;
    return 0;
}

static int parse_ports(const cJSON *body, emu_sandbox *b, emu_response *resp)
{
    const cJSON *ports = cJSON_GetObjectItemCaseSensitive(body, "publishPorts");
    if (!ports || cJSON_IsNull(ports))
        return 0;
    if (!cJSON_IsArray(ports))
        return emu_error(resp, 400, "InvalidParameter", "publishPorts must be a list of strings"), -1;
    b->ports = calloc((size_t)cJSON_GetArraySize(ports) + 1, sizeof(char *));
    if (!b->ports)
        return emu_error(resp, 500, "InternalServerError", "out of memory"), -1;
    const cJSON *it;
    cJSON_ArrayForEach(it, ports)
    {
        long v = cJSON_IsString(it) ? strtol(it->valuestring, NULL, 10) : 0;
        if (!cJSON_IsString(it) || v < 1 || v > 65535)
            return emu_error(resp, 400, "InvalidParameter", "publishPorts must be port numbers (strings) 1-65535"),
                   -1;
        b->ports[b->n_ports++] = ocisbx_strdup(it->valuestring);
    }
    return 0;
}

/* source: {sourceType: SNAPSHOT, snapshotId}: *snap an ACTIVE snapshot. */
static int parse_source(emu_server *s, const cJSON *body, const emu_snapshot **snap, emu_response *resp)
{
    *snap = NULL;
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(body, "source");
    if (!src || cJSON_IsNull(src))
        return 0;
    const char *type = NULL, *snap_id = NULL;
    if (!cJSON_IsObject(src))
        return emu_error(resp, 400, "InvalidParameter", "source must be {sourceType, snapshotId}"), -1;
    if (emu_json_only(src, "SandboxSource", "sourceType snapshotId", resp) ||
        emu_json_str(src, "sourceType", &type, resp) || emu_json_str(src, "snapshotId", &snap_id, resp))
        return -1;
    if (!type || strcmp(type, "SNAPSHOT") || !snap_id)
        return emu_error(resp, 400, "InvalidParameter", "source.sourceType must be SNAPSHOT with a snapshotId"), -1;
    const emu_snapshot *n = emu_snapshot_find(s, snap_id);
    if (!n)
        return emu_error(resp, 404, "NotAuthorizedOrNotFound", "snapshot %s not found", snap_id), -1;
    if (strcmp(n->state, "ACTIVE"))
        return emu_error(resp, 409, "IncorrectState", "snapshot %s is %s, not ACTIVE", snap_id, n->state), -1;
    *snap = n;
    return 0;
}

/* The string fields of CreateSandboxDetails into b. */
static int parse_names(const cJSON *body, const emu_project *proj, emu_sandbox *b, emu_response *resp)
{
    const char *display = NULL, *runtime = NULL, *shape = NULL, *warmpool = NULL, *mode = NULL, *label = NULL;
    if (emu_json_str(body, "displayName", &display, resp) || emu_json_str(body, "runtime", &runtime, resp) ||
        emu_json_str(body, "shape", &shape, resp) || emu_json_str(body, "warmpoolName", &warmpool, resp) ||
        emu_json_str(body, "publishedPortAuthMode", &mode, resp) ||
        emu_json_str(body, "credentialProfileLabel", &label, resp) ||
        emu_json_env(body, "environmentVariables", &b->env, &b->n_env, resp))
        return -1;
    if (shape && strcmp(shape, "SMALL") && strcmp(shape, "MEDIUM") && strcmp(shape, "LARGE"))
        return emu_error(resp, 400, "InvalidParameter", "shape must be SMALL, MEDIUM or LARGE, not %s", shape), -1;
    if (mode && strcmp(mode, "OCI_IAM"))
        return emu_error(resp, 400, "InvalidParameter", "publishedPortAuthMode must be OCI_IAM"), -1;
    bool pool_ok = !warmpool;
    for (size_t i = 0; warmpool && i < proj->n_warmpools; i++)
        pool_ok = pool_ok || !strcmp(proj->warmpools[i], warmpool);
    if (!pool_ok)
        return emu_error(resp, 400, "InvalidParameter", "warmpoolName %s is not a warm pool of project %s",
                         warmpool, proj->id),
               -1;
    b->display_name = display ? ocisbx_strdup(display) : NULL;
    b->runtime = ocisbx_strdup(runtime ? runtime : "python-3.11");
    b->shape = ocisbx_strdup(shape ? shape : "SMALL");
    b->warmpool = warmpool ? ocisbx_strdup(warmpool) : NULL;
    b->port_auth_mode = mode ? ocisbx_strdup(mode) : NULL;
    b->credential_label = label ? ocisbx_strdup(label) : NULL;
    return 0;
}

void emu_h_sandbox_create(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    (void)rt;
    bool badq = false;
    char *project_id = emu_query_get(req->query, "projectId", &badq);
    cJSON *body = NULL;
    emu_sandbox *b = NULL;
    const emu_project *proj = project_id ? emu_config_project(s->cfg, project_id) : NULL;
    const emu_snapshot *snap = NULL;
    int rc;
    if (!project_id) {
        emu_error(resp, 400, "InvalidParameter", "the projectId query parameter is required");
    } else if (!proj) {
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "project %s not found or not authorized", project_id);
    } else if ((rc = emu_sandbox_admit(s, project_id)) != 0) {
        emu_response_header(resp, "retry-after", EMU_FULL_RETRY_AFTER_S);
        emu_fail_answer(resp, rc);
    } else if (!emu_body_json(req, resp, &body) &&
               !emu_json_only(body, "CreateSandboxDetails",
                              "displayName runtime shape expiresInMinutes expirationDuration environmentVariables "
                              "warmpoolName publishPorts publishedPortAuthMode credentialProfileLabel source",
                              resp) &&
               (b = calloc(1, sizeof *b)) != NULL && !parse_names(body, proj, b, resp) &&
               !parse_expiry(s, body, b, resp) && !parse_ports(body, b, resp) && !parse_source(s, body, &snap, resp)) {
        if (!b->port_auth_mode && b->n_ports)
            b->port_auth_mode = ocisbx_strdup("OCI_IAM");
        b->project_id = project_id;
        project_id = NULL;
        if ((rc = emu_sandbox_add(s, b, snap)) != 0) {
            emu_fail_answer(resp, rc);
        } else {
            sandbox_answer(resp, 200, b);
            b = NULL;
        }
    }
    if (!b && !resp->body.len && resp->status == 500)
        emu_error(resp, 500, "InternalServerError", "out of memory");
    emu_sandbox_free(b);
    cJSON_Delete(body);
    free(project_id);
}

typedef enum { SB_PROJECT, SB_COMPARTMENT, SB_ID, SB_NAME } sandbox_filter;

static bool sandbox_keep(const void *item, const emu_list_query *q)
{
    const emu_sandbox *b = item;
    if (q->state ? strcmp(b->state, q->state) != 0 : !strcmp(b->state, "DELETED"))
        return false;
    return !(q->filter[SB_PROJECT] && strcmp(b->project_id, q->filter[SB_PROJECT])) &&
           !(q->filter[SB_ID] && strcmp(b->id, q->filter[SB_ID])) &&
           !(q->filter[SB_NAME] && strcmp(b->display_name, q->filter[SB_NAME]));
}

static int sandbox_cmp(const void *a, const void *b, const emu_list_query *q)
{
    const emu_sandbox *x = a, *y = b;
    if (q->sort_by && !strcmp(q->sort_by, "displayName")) {
        int c = strcmp(x->display_name, y->display_name);
        if (c)
            return c;
    }
    if (x->t_created != y->t_created)
        return x->t_created < y->t_created ? -1 : 1;
    return strcmp(x->id, y->id);
}

static cJSON *sandbox_summary(const void *item)
{
    return emu_sandbox_json(item, true);
}

void emu_h_sandbox_list(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    (void)rt;
    static const emu_list_ops ops = {sandbox_keep, sandbox_cmp, sandbox_summary};
    emu_list_query q;
    if (emu_list_query_parse(req, "projectId compartmentId sandboxId displayName",
                             "CREATING RUNNING UPDATING STOPPING STOPPED SUSPENDING SUSPENDED RESUMING FAILED DELETED",
                             "timeCreated displayName", &q, resp))
        return;
    bool by_name = q.sort_by && !strcmp(q.sort_by, "displayName");
    /* OCI lists default to newest first for time and A-Z for names */
    emu_list_answer((void *const *)s->sbx, s->n_sbx, &ops, &q, q.sort_given ? q.desc : !by_name, resp);
    emu_list_query_clear(&q);
}

void emu_h_sandbox_get(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    (void)req;
    emu_sandbox *b = emu_h_sandbox_of(s, rt, resp);
    if (b)
        sandbox_answer(resp, 200, b);
}

void emu_h_sandbox_update(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_sandbox *b = emu_h_sandbox_of(s, rt, resp);
    cJSON *body = NULL;
    const char *name = NULL;
    if (b && !if_match(req, b, resp) && !emu_body_json(req, resp, &body) &&
        !emu_json_only(body, "UpdateSandboxDetails", "displayName", resp) &&
        !emu_json_str(body, "displayName", &name, resp)) {
        emu_sandbox_rename(s, b, name);
        sandbox_answer(resp, 200, b);
    }
    cJSON_Delete(body);
}

void emu_h_sandbox_delete(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_sandbox *b = emu_h_sandbox_of(s, rt, resp);
    if (!b || if_match(req, b, resp))
        return;
    emu_commands_terminate(s, b, 0, true);
    emu_sandbox_mark_deleted(s, b);
    resp->status = 204;
}

void emu_h_sandbox_stop(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_sandbox *b = emu_h_sandbox_of(s, rt, resp);
    cJSON *body = NULL;
    bool force = false;
    int rc;
    if (b && !if_match(req, b, resp) && !emu_body_json(req, resp, &body) &&
        !emu_json_only(body, "StopSandboxDetails", "isForce", resp) && !emu_json_bool(body, "isForce", &force, resp)) {
        if ((rc = emu_sandbox_stop(s, b, force)) != 0)
            emu_fail_answer(resp, rc);
        else
            resp->status = 202;
    }
    cJSON_Delete(body);
}

void emu_h_sandbox_extend(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_sandbox *b = emu_h_sandbox_of(s, rt, resp);
    cJSON *body = NULL;
    const char *dur = NULL;
    int64_t ms = 0;
    int rc;
    if (b && !if_match(req, b, resp) && !emu_body_json(req, resp, &body) &&
        !emu_json_only(body, "ExtendSandboxDetails", "additionalDuration", resp) &&
        !emu_json_str(body, "additionalDuration", &dur, resp)) {
        if (!dur || ocisbx_duration_parse(dur, &ms) != 0 || ms <= 0)
            emu_error(resp, 400, "InvalidParameter", "additionalDuration must be a positive ISO 8601 duration like PT30M");
        else if ((rc = emu_sandbox_extend(s, b, ms, dur)) != 0)
            emu_fail_answer(resp, rc);
        else
            sandbox_answer(resp, 200, b);
    }
    cJSON_Delete(body);
}

/* suspend (true) or resume: an empty details body */
static void suspend_resume(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp,
                           bool suspend)
{
    emu_sandbox *b = emu_h_sandbox_of(s, rt, resp);
    cJSON *body = NULL;
    int rc;
    if (b && !emu_body_json(req, resp, &body) &&
        !emu_json_only(body, suspend ? "SuspendSandboxDetails" : "ResumeSandboxDetails", "", resp)) {
        if ((rc = suspend ? emu_sandbox_suspend(s, b) : emu_sandbox_resume(s, b)) != 0)
            emu_fail_answer(resp, rc);
        else
            resp->status = 202;
    }
    cJSON_Delete(body);
}

void emu_h_sandbox_suspend(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    suspend_resume(s, req, rt, resp, true);
}

void emu_h_sandbox_resume(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    suspend_resume(s, req, rt, resp, false);
}
