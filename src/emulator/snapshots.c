/* Snapshots: a copy of a sandbox's workspace under <state-dir>/snapshots/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/emu.h"
#include "ocisbx/util.h"

/* SandboxSnapshot; the summary (lists) carries the same fields [decided]. */
static cJSON *snap_json(const emu_snapshot *n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", n->id);
    cJSON_AddStringToObject(o, "sandboxId", n->sandbox_id);
    if (n->project_id)
        cJSON_AddStringToObject(o, "projectId", n->project_id);
    cJSON_AddStringToObject(o, "displayName", n->display_name);
    cJSON_AddNumberToObject(o, "sizeBytes", (double)n->size_bytes);
    cJSON_AddStringToObject(o, "runtime", n->runtime);
    cJSON_AddStringToObject(o, "lifecycleState", n->state);
    if (n->expiration)
        cJSON_AddStringToObject(o, "expirationDuration", n->expiration);
    emu_json_add_time(o, "timeExpires", n->t_expires);
    emu_json_add_time(o, "timeCreated", n->t_created);
    emu_json_add_time(o, "timeUpdated", n->t_updated > 0 ? n->t_updated : n->t_created);
    return o;
}

static void snap_etag(const emu_snapshot *n, char out[64])
{
    snprintf(out, 64, "\"%s-%lld\"", n->id, (long long)n->version);
}

static void snap_answer(emu_response *resp, const emu_snapshot *n)
{
    char e[64];
    snap_etag(n, e);
    emu_response_header(resp, "etag", e);
    emu_json(resp, 200, snap_json(n));
}

static void snap_delete(emu_server *s, emu_snapshot *n)
{
    char *dir = ocisbx_asprintf("%s/snapshots/%s", s->state_dir, n->id);
    if (dir)
        emu_rmtree(dir);
    free(dir);
    snprintf(n->state, sizeof n->state, "DELETED");
    n->t_updated = emu_now_ms();
    n->version++;
    emu_server_touch(s);
}

static void do_create(emu_server *s, const emu_request *req, emu_response *resp)
{
    cJSON *body = NULL;
    const char *sid = NULL, *dur = NULL;
    /* CreateSandboxSnapshotDetails is {sandboxId, expirationDuration} and nothing else [public] */
    if (emu_body_json(req, resp, &body) ||
        emu_json_only(body, "CreateSandboxSnapshotDetails", "sandboxId expirationDuration", resp) ||
        emu_json_str(body, "sandboxId", &sid, resp) || emu_json_str(body, "expirationDuration", &dur, resp))
        goto out;
    if (!sid) {
        emu_error(resp, 400, "InvalidParameter", "sandboxId is required");
        goto out;
    }
    int64_t ms = 0;
    if (dur && (ocisbx_duration_parse(dur, &ms) != 0 || ms <= 0)) {
        emu_error(resp, 400, "InvalidParameter", "expirationDuration must be a positive ISO 8601 duration");
        goto out;
    }
    emu_sandbox *b = emu_sandbox_find(s, sid);
    if (!b) {
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "sandbox %s not found or not authorized", sid);
        goto out;
    }
    if (strcmp(b->state, "RUNNING") && strcmp(b->state, "STOPPED")) {
        emu_error(resp, 409, "IncorrectState", "cannot snapshot sandbox %s in state %s", b->id, b->state);
        goto out;
    }
    emu_snapshot *n = calloc(1, sizeof *n);
    if (!n) {
        emu_error(resp, 500, "InternalServerError", "out of memory");
        goto out;
    }
    emu_new_id("snap-", n->id, sizeof n->id);
    snprintf(n->sandbox_id, sizeof n->sandbox_id, "%s", b->id);
    n->project_id = ocisbx_strdup(b->project_id);
    n->display_name = ocisbx_strdup(n->id);
    n->runtime = ocisbx_strdup(b->runtime);
    n->expiration = dur ? ocisbx_strdup(dur) : NULL;
    n->t_created = n->t_updated = emu_now_ms();
    n->t_expires = ms > 0 ? n->t_created + ms : 0;
    n->version = 1;
    char *src = emu_workspace_dir(s, b->id);
    char *root = ocisbx_asprintf("%s/snapshots", s->state_dir);
    char *dst = ocisbx_asprintf("%s/snapshots/%s", s->state_dir, n->id);
    int rc = (src && root && dst && emu_mkdirs(root) == 0) ? emu_copytree(src, dst, &n->size_bytes) : -1;
    free(src);
    free(root);
    snprintf(n->state, sizeof n->state, rc == 0 ? "ACTIVE" : "FAILED");
    if (rc != 0 && dst)
        emu_rmtree(dst);
    free(dst);
    if (EMU_GROW(s->snaps, s->n_snaps, s->cap_snaps, 8) != 0) {
        emu_snapshot_free(n);
        emu_error(resp, 500, "InternalServerError", "out of memory");
        goto out;
    }
    s->snaps[s->n_snaps++] = n;
    emu_server_touch(s);
    snap_answer(resp, n);
out:
    cJSON_Delete(body);
}

static bool g_by_name; /* sort key of the list being answered; set under s->mu */

static int cmp_snaps(const void *a, const void *b)
{
    const emu_snapshot *x = *(emu_snapshot *const *)a, *y = *(emu_snapshot *const *)b;
    if (g_by_name) {
        int c = strcmp(x->display_name, y->display_name);
        if (c)
            return c;
    }
    if (x->t_created != y->t_created)
        return x->t_created < y->t_created ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* ListSandboxSnapshots: projectId, displayName, sandboxId, snapshotId,
 * lifecycleState (DELETED ones only when asked for), sortBy (timeCreated,
 * displayName), sortOrder (ASC, DESC; default: newest first, names A-Z). */
static void do_list(emu_server *s, const emu_request *req, emu_response *resp)
{
    bool bad = false;
    char *f_project = emu_query_get(req->query, "projectId", &bad);
    char *f_name = emu_query_get(req->query, "displayName", &bad);
    char *f_sbx = emu_query_get(req->query, "sandboxId", &bad);
    char *f_id = emu_query_get(req->query, "snapshotId", &bad);
    char *f_state = emu_query_get(req->query, "lifecycleState", &bad);
    char *sort_by = emu_query_get(req->query, "sortBy", &bad);
    char *sort_order = emu_query_get(req->query, "sortOrder", &bad);
    emu_snapshot **sel = NULL;
    size_t offset, limit;
    if (bad) {
        emu_error(resp, 400, "InvalidParameter", "malformed percent-encoding in the query");
        goto out;
    }
    if (f_state && strcmp(f_state, "CREATING") && strcmp(f_state, "ACTIVE") && strcmp(f_state, "DELETING") &&
        strcmp(f_state, "DELETED") && strcmp(f_state, "FAILED")) {
        emu_error(resp, 400, "InvalidParameter",
                  "lifecycleState must be one of CREATING, ACTIVE, DELETING, DELETED, "
                  "FAILED");
        goto out;
    }
    if (sort_by && strcmp(sort_by, "timeCreated") && strcmp(sort_by, "displayName")) {
        emu_error(resp, 400, "InvalidParameter", "sortBy must be timeCreated or displayName");
        goto out;
    }
    if (sort_order && strcmp(sort_order, "ASC") && strcmp(sort_order, "DESC")) {
        emu_error(resp, 400, "InvalidParameter", "sortOrder must be ASC or DESC");
        goto out;
    }
    if (emu_page_params(req, resp, &offset, &limit))
        goto out;
    sel = calloc(s->n_snaps + 1, sizeof *sel);
    if (!sel) {
        emu_error(resp, 500, "InternalServerError", "out of memory");
        goto out;
    }
    size_t n = 0;
    for (size_t i = 0; i < s->n_snaps; i++) {
        emu_snapshot *x = s->snaps[i];
        if (f_state ? strcmp(x->state, f_state) != 0 : !strcmp(x->state, "DELETED"))
            continue;
        if ((f_sbx && strcmp(x->sandbox_id, f_sbx)) || (f_id && strcmp(x->id, f_id)) ||
            (f_name && strcmp(x->display_name, f_name)) ||
            (f_project && (!x->project_id || strcmp(x->project_id, f_project))))
            continue;
        sel[n++] = x;
    }
    g_by_name = sort_by && !strcmp(sort_by, "displayName");
    bool desc = sort_order ? !strcmp(sort_order, "DESC") : !g_by_name;
    qsort(sel, n, sizeof *sel, cmp_snaps);
    if (desc)
        for (size_t i = 0; i < n / 2; i++) {
            emu_snapshot *t = sel[i];
            sel[i] = sel[n - 1 - i];
            sel[n - 1 - i] = t;
        }
    cJSON *o = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(o, "items");
    for (size_t i = offset; i < n && i < offset + limit; i++)
        cJSON_AddItemToArray(items, snap_json(sel[i]));
    emu_page_next(resp, offset, limit, n);
    emu_json(resp, 200, o);
out:
    free(sel);
    free(f_project);
    free(f_name);
    free(f_sbx);
    free(f_id);
    free(f_state);
    free(sort_by);
    free(sort_order);
}

void emu_h_snapshot(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    if (rt->id == EMU_R_SNAPSHOT_CREATE) {
        do_create(s, req, resp);
        return;
    }
    if (rt->id == EMU_R_SNAPSHOT_LIST) {
        do_list(s, req, resp);
        return;
    }
    emu_snapshot *n = NULL;
    for (size_t i = 0; i < s->n_snaps; i++)
        if (!strcmp(s->snaps[i]->id, rt->snapshot_id) && strcmp(s->snaps[i]->state, "DELETED"))
            n = s->snaps[i];
    if (!n) {
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "snapshot %s not found or not authorized", rt->snapshot_id);
        return;
    }
    if (rt->id == EMU_R_SNAPSHOT_GET) {
        snap_answer(resp, n);
        return;
    }
    /* delete: an optional if-match must name the current etag [public] */
    const char *im = emu_request_header(req, "if-match");
    char e[64];
    snap_etag(n, e);
    if (im && strcmp(im, "*") && strcmp(im, e)) {
        emu_error(resp, 412, "PreconditionFailed", "if-match %s does not match the current etag %s", im, e);
        return;
    }
    snap_delete(s, n);
    resp->status = 204;
}

void emu_snapshot_tick(emu_server *s, int64_t now)
{
    for (size_t i = 0; i < s->n_snaps; i++)
        if (s->snaps[i]->t_expires > 0 && now >= s->snaps[i]->t_expires && strcmp(s->snaps[i]->state, "DELETED"))
            snap_delete(s, s->snaps[i]);
}

void emu_snapshot_free(emu_snapshot *n)
{
    if (!n)
        return;
    free(n->project_id);
    free(n->display_name);
    free(n->runtime);
    free(n->expiration);
    free(n);
}
