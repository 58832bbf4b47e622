/* The snapshot operations: create, list, get, delete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/emu.h"
#include "ocisbx/util.h"

static void snap_etag(const emu_snapshot *n, char out[64])
{
    snprintf(out, 64, "\"%s-%lld\"", n->id, (long long)n->version);
}

static void snap_answer(emu_response *resp, const emu_snapshot *n)
{
    char e[64];
    snap_etag(n, e);
    emu_response_header(resp, "etag", e);
    emu_json(resp, 200, emu_snapshot_json(n));
}

void emu_h_snapshot_create(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    (void)rt;
    cJSON *body = NULL;
    const char *sid = NULL, *dur = NULL;
    int64_t ms = 0;
    /* CreateSandboxSnapshotDetails is {sandboxId, expirationDuration} and nothing else [public] */
    if (emu_body_json(req, resp, &body) ||
        emu_json_only(body, "CreateSandboxSnapshotDetails", "sandboxId expirationDuration", resp) ||
        emu_json_str(body, "sandboxId", &sid, resp) || emu_json_str(body, "expirationDuration", &dur, resp)) {
        cJSON_Delete(body);
        return;
    }
    emu_sandbox *b = sid ? emu_sandbox_find(s, sid) : NULL;
    emu_snapshot *n = NULL;
    int rc;
    if (!sid)
        emu_error(resp, 400, "InvalidParameter", "sandboxId is required");
    else if (dur && (ocisbx_duration_parse(dur, &ms) != 0 || ms <= 0))
        emu_error(resp, 400, "InvalidParameter", "expirationDuration must be a positive ISO 8601 duration");
    else if (!b)
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "sandbox %s not found or not authorized", sid);
    else if ((rc = emu_snapshot_create(s, b, dur, ms, &n)) != 0)
        emu_fail_answer(resp, rc);
    else
        snap_answer(resp, n);
    cJSON_Delete(body);
}

typedef enum { SN_PROJECT, SN_NAME, SN_SANDBOX, SN_ID } snapshot_filter;

static bool snapshot_keep(const void *item, const emu_list_query *q)
{
    const emu_snapshot *x = item;
    if (q->state ? strcmp(x->state, q->state) != 0 : !strcmp(x->state, "DELETED"))
        return false;
    return !(q->filter[SN_SANDBOX] && strcmp(x->sandbox_id, q->filter[SN_SANDBOX])) &&
           !(q->filter[SN_ID] && strcmp(x->id, q->filter[SN_ID])) &&
           !(q->filter[SN_NAME] && strcmp(x->display_name, q->filter[SN_NAME])) &&
           !(q->filter[SN_PROJECT] && (!x->project_id || strcmp(x->project_id, q->filter[SN_PROJECT])));
}

static int snapshot_cmp(const void *a, const void *b, const emu_list_query *q)
{
    const emu_snapshot *x = a, *y = b;
    if (q->sort_by && !strcmp(q->sort_by, "displayName")) {
        int c = strcmp(x->display_name, y->display_name);
        if (c)
            return c;
    }
    if (x->t_created != y->t_created)
        return x->t_created < y->t_created ? -1 : 1;
    return strcmp(x->id, y->id);
}

static cJSON *snapshot_item(const void *item)
{
    return emu_snapshot_json(item); /* the summary carries the same fields [decided] */
}

/* ListSandboxSnapshots: projectId, displayName, sandboxId, snapshotId,
 * lifecycleState (DELETED ones only when asked for), sortBy (timeCreated,
 * displayName), sortOrder (ASC, DESC; default: newest first, names A-Z). */
void emu_h_snapshot_list(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    (void)rt;
    static const emu_list_ops ops = {snapshot_keep, snapshot_cmp, snapshot_item};
    emu_list_query q;
    if (emu_list_query_parse(req, "projectId displayName sandboxId snapshotId",
                             "CREATING ACTIVE DELETING DELETED FAILED", "timeCreated displayName", &q, resp))
        return;
    bool by_name = q.sort_by && !strcmp(q.sort_by, "displayName");
    emu_list_answer((void *const *)s->snaps, s->n_snaps, &ops, &q, q.sort_given ? q.desc : !by_name, resp);
    emu_list_query_clear(&q);
}

/* The snapshot of rt, or NULL with a 404 answered. */
static emu_snapshot *snapshot_of(emu_server *s, const emu_route *rt, emu_response *resp)
{
    emu_snapshot *n = emu_snapshot_find(s, rt->snapshot_id);
    if (!n)
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "snapshot %s not found or not authorized", rt->snapshot_id);
    return n;
}

void emu_h_snapshot_get(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    (void)req;
    emu_snapshot *n = snapshot_of(s, rt, resp);
    if (n)
        snap_answer(resp, n);
}

void emu_h_snapshot_delete(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_snapshot *n = snapshot_of(s, rt, resp);
    if (!n)
        return;
    /* an optional if-match must name the current etag [public] */
    const char *im = emu_request_header(req, "if-match");
    char e[64];
    snap_etag(n, e);
    if (im && strcmp(im, "*") && strcmp(im, e)) {
        emu_error(resp, 412, "PreconditionFailed", "if-match %s does not match the current etag %s", im, e);
        return;
    }
    emu_snapshot_delete(s, n);
    resp->status = 204;
}
