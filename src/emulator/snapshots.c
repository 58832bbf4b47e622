/* Snapshots: a copy of a sandbox's workspace under <state-dir>/snapshots/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/emu.h"
#include "ocisbx/util.h"

static cJSON *snap_json(const emu_snapshot *n)
{
    cJSON *o = cJSON_CreateObject();
    char t[32];
    cJSON_AddStringToObject(o, "id", n->id);
    cJSON_AddStringToObject(o, "sandboxId", n->sandbox_id);
    cJSON_AddStringToObject(o, "displayName", n->display_name);
    cJSON_AddNumberToObject(o, "sizeBytes", (double)n->size_bytes);
    cJSON_AddStringToObject(o, "runtime", n->runtime);
    cJSON_AddStringToObject(o, "lifecycleState", n->state);
    emu_json_add_time(o, "timeExpires", n->t_expires);
    emu_time_rfc3339(n->t_created, t);
    cJSON_AddStringToObject(o, "timeCreated", t);
    return o;
}

static void snap_delete(emu_server *s, emu_snapshot *n)
{
    char *dir = ocisbx_asprintf("%s/snapshots/%s", s->state_dir, n->id);
    if (dir)
        emu_rmtree(dir);
    free(dir);
    snprintf(n->state, sizeof n->state, "DELETED");
    emu_server_touch(s);
}

static void do_create(emu_server *s, const emu_request *req, emu_response *resp)
{
    cJSON *body = NULL;
    const char *sid = NULL, *name = NULL, *dur = NULL;
    if (emu_body_json(req, resp, &body) || emu_json_str(body, "sandboxId", &sid, resp) ||
        emu_json_str(body, "displayName", &name, resp) || emu_json_str(body, "expirationDuration", &dur, resp))
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
    n->display_name = ocisbx_strdup(name ? name : n->id);
    n->runtime = ocisbx_strdup(b->runtime);
    n->t_created = emu_now_ms();
    n->t_expires = ms > 0 ? n->t_created + ms : 0;
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
        free(n->display_name);
        free(n->runtime);
        free(n);
        emu_error(resp, 500, "InternalServerError", "out of memory");
        goto out;
    }
    s->snaps[s->n_snaps++] = n;
    emu_server_touch(s);
    emu_json(resp, 200, snap_json(n));
out:
    cJSON_Delete(body);
}

void emu_h_snapshot(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    if (rt->id == EMU_R_SNAPSHOT_CREATE) {
        do_create(s, req, resp);
        return;
    }
    if (rt->id == EMU_R_SNAPSHOT_LIST) {
        bool bad = false;
        char *sid = emu_query_get(req->query, "sandboxId", &bad);
        size_t offset, limit;
        if (emu_page_params(req, resp, &offset, &limit) == 0) {
            cJSON *o = cJSON_CreateObject();
            cJSON *items = cJSON_AddArrayToObject(o, "items");
            size_t n = 0;
            for (size_t i = 0; i < s->n_snaps; i++) {
                emu_snapshot *x = s->snaps[i];
                if (!strcmp(x->state, "DELETED") || (sid && strcmp(x->sandbox_id, sid)))
                    continue;
                if (n >= offset && n < offset + limit)
                    cJSON_AddItemToArray(items, snap_json(x));
                n++;
            }
            emu_page_next(resp, offset, limit, n);
            emu_json(resp, 200, o);
        }
        free(sid);
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
        emu_json(resp, 200, snap_json(n));
    } else {
        snap_delete(s, n);
        resp->status = 204;
    }
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
    free(n->display_name);
    free(n->runtime);
    free(n);
}
