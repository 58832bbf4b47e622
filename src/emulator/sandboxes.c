/* Sandboxes: create/get/list/update/delete, the lifecycle actions and the
 * timed transitions (CREATING -> RUNNING, STOPPING -> STOPPED, expiry). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator/emu.h"
#include "sys/proc.h"
#include "ocisbx/util.h"

#define DEFAULT_EXPIRES_MIN 60
/* retry-after of a create refused by limits.max_sandboxes [decided] */
#define EMU_FULL_RETRY_AFTER_S "1"

static bool uid_taken(const emu_server *s, const emu_sandbox *self, unsigned uid)
{
    for (size_t i = 0; i < s->n_sbx; i++)
        if (s->sbx[i] != self && s->sbx[i]->uid == uid && strcmp(s->sbx[i]->state, "DELETED"))
            return true;
    return false;
}

unsigned emu_sandbox_uid(emu_server *s, emu_sandbox *b, bool choose)
{
    if (geteuid() != 0)
        return 0;
    if (b->uid && !uid_taken(s, b, b->uid))
        return b->uid;
    b->uid = 0;
    /* a restart: the owner of its workspace, when it is one of ours */
    char *ws = emu_workspace_dir(s, b->id);
    struct stat st;
    if (ws && lstat(ws, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid >= EMU_SANDBOX_UID_BASE &&
        st.st_uid < EMU_SANDBOX_UID_BASE + EMU_SANDBOX_UID_COUNT && !uid_taken(s, b, (unsigned)st.st_uid))
        b->uid = (unsigned)st.st_uid;
    free(ws);
    for (unsigned n = 0; choose && !b->uid && n < EMU_SANDBOX_UID_COUNT; n++)
        if (!uid_taken(s, b, EMU_SANDBOX_UID_BASE + n))
            b->uid = EMU_SANDBOX_UID_BASE + n;
    return b->uid;
}

char *emu_workspace_dir(const emu_server *s, const char *sandbox_id)
{
    return ocisbx_asprintf("%s/workspaces/%s", s->state_dir, sandbox_id);
}

emu_sandbox *emu_sandbox_find(emu_server *s, const char *id)
{
    for (size_t i = 0; i < s->n_sbx; i++)
        if (!strcmp(s->sbx[i]->id, id) && strcmp(s->sbx[i]->state, "DELETED") != 0)
            return s->sbx[i];
    return NULL;
}

void emu_sandbox_free(emu_sandbox *b)
{
    if (!b)
        return;
    free(b->project_id);
    free(b->display_name);
    free(b->runtime);
    free(b->shape);
    free(b->details);
    free(b->warmpool);
    for (size_t i = 0; i < b->n_ports; i++)
        free(b->ports[i]);
    free(b->ports);
    free(b->port_auth_mode);
    free(b->credential_label);
    emu_env_free(b->env, b->n_env);
    for (size_t i = 0; i < b->n_cmds; i++)
        emu_command_unref(b->cmds[i]);
    free(b->cmds);
    free(b);
}

static void set_state(emu_sandbox *b, const char *state, const char *details)
{
    snprintf(b->state, sizeof b->state, "%s", state);
    char *d = details ? ocisbx_strdup(details) : NULL;
    free(b->details);
    b->details = d;
    b->t_updated = emu_now_ms();
    b->version++;
}

cJSON *emu_sandbox_json(const emu_sandbox *b, bool summary)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", b->id);
    cJSON_AddStringToObject(o, "projectId", b->project_id);
    cJSON_AddStringToObject(o, "displayName", b->display_name);
    cJSON_AddStringToObject(o, "runtime", b->runtime);
    cJSON_AddStringToObject(o, "shape", b->shape);
    cJSON_AddStringToObject(o, "lifecycleState", b->state);
    if (b->details)
        cJSON_AddStringToObject(o, "lifecycleDetails", b->details);
    if (!summary) {
        cJSON *ports = cJSON_AddArrayToObject(o, "publishedPorts");
        for (size_t i = 0; i < b->n_ports; i++) {
            cJSON *p = cJSON_CreateObject();
            cJSON_AddNumberToObject(p, "port", atoi(b->ports[i]));
            /* published ports are not modelled: the URL is a placeholder */
            char url[160];
            snprintf(url, sizeof url, "https://%s-%s.sandbox.invalid/", b->id, b->ports[i]);
            cJSON_AddStringToObject(p, "url", url);
            cJSON_AddItemToArray(ports, p);
        }
        if (b->port_auth_mode)
            cJSON_AddStringToObject(o, "publishedPortAuthMode", b->port_auth_mode);
        if (b->credential_label)
            cJSON_AddStringToObject(o, "credentialProfileLabel", b->credential_label);
    }
    if (b->warmpool)
        cJSON_AddStringToObject(o, "warmpoolName", b->warmpool);
    cJSON_AddNumberToObject(o, "expiresInMinutes", (double)b->expires_in_minutes);
    emu_json_add_time(o, "timeCreated", b->t_created);
    emu_json_add_time(o, "timeUpdated", b->t_updated);
    emu_json_add_time(o, "timeExpires", b->t_expires);
    emu_json_add_time(o, "timeStopped", b->t_stopped);
    return o;
}

static void etag(const emu_sandbox *b, char out[64])
{
    snprintf(out, 64, "\"%s-%lld\"", b->id, (long long)b->version);
}

static int sandbox_answer(emu_response *resp, int status, const emu_sandbox *b)
{
    char e[64];
    etag(b, e);
    emu_response_header(resp, "etag", e);
    return emu_json(resp, status, emu_sandbox_json(b, false));
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

/* The values of environment variables are secrets kept only so that a
 * restarted sandbox still gives its commands their environment: a deleted
 * sandbox runs nothing again, so its values (and its commands') go, from
 * memory and, with the next save, from the state file. The names stay. */
static void forget_env_values(emu_env *env, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ocisbx_free_secret(env[i].value);
        env[i].value = NULL;
    }
}

void emu_sandbox_mark_deleted(emu_server *s, emu_sandbox *b)
{
    forget_env_values(b->env, b->n_env);
    for (size_t i = 0; i < b->n_cmds; i++)
        forget_env_values(b->cmds[i]->env, b->cmds[i]->n_env);
    char *dir = emu_workspace_dir(s, b->id);
    if (dir)
        emu_rmtree(dir);
    free(dir);
    set_state(b, "DELETED", NULL);
    emu_server_touch(s);
}

static int add_sandbox(emu_server *s, emu_sandbox *b)
{
    if (EMU_GROW(s->sbx, s->n_sbx, s->cap_sbx, 16) != 0)
        return -1;
    s->sbx[s->n_sbx++] = b;
    return 0;
}

static emu_snapshot *snapshot_find(emu_server *s, const char *id)
{
    for (size_t i = 0; i < s->n_snaps; i++)
        if (!strcmp(s->snaps[i]->id, id) && strcmp(s->snaps[i]->state, "DELETED") != 0)
            return s->snaps[i];
    return NULL;
}

/* limits.max_sandboxes: every sandbox of the project that is not DELETED
 * counts (a STOPPED one too, until it is deleted). true when full, with a
 * 429 TooManyRequests answered. */
static bool project_full(emu_server *s, const char *project_id, emu_response *resp)
{
    int64_t max = s->cfg->limits.max_sandboxes, n = 0;
    if (max <= 0)
        return false;
    for (size_t i = 0; i < s->n_sbx; i++)
        n += !strcmp(s->sbx[i]->project_id, project_id) && strcmp(s->sbx[i]->state, "DELETED");
    if (n < max)
        return false;
    emu_response_header(resp, "retry-after", EMU_FULL_RETRY_AFTER_S);
    emu_error(resp, 429, "TooManyRequests",
              "project %s has %lld sandboxes, its limit (limits.max_sandboxes); delete one and retry", project_id,
              (long long)n);
    return true;
}

static void do_create(emu_server *s, const emu_request *req, emu_response *resp)
{
    bool badq = false;
    char *project_id = emu_query_get(req->query, "projectId", &badq);
    cJSON *body = NULL;
    emu_sandbox *b = NULL;
    char *ws = NULL;
    if (!project_id) {
        emu_error(resp, 400, "InvalidParameter", "the projectId query parameter is required");
        goto out;
    }
    const emu_project *proj = emu_config_project(s->cfg, project_id);
    if (!proj) {
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "project %s not found or not authorized", project_id);
        goto out;
    }
    if (project_full(s, project_id, resp))
        goto out;
    if (emu_body_json(req, resp, &body) ||
        emu_json_only(body, "CreateSandboxDetails",
                      "displayName runtime shape expiresInMinutes expirationDuration environmentVariables "
                      "warmpoolName publishPorts publishedPortAuthMode credentialProfileLabel source",
                      resp))
        goto out;
    const char *display = NULL, *runtime = NULL, *shape = NULL, *duration = NULL, *warmpool = NULL, *mode = NULL,
               *label = NULL;
    int64_t minutes = 0;
    bool has_minutes = false;
    b = calloc(1, sizeof *b);
    if (!b || emu_json_str(body, "displayName", &display, resp) || emu_json_str(body, "runtime", &runtime, resp) ||
        emu_json_str(body, "shape", &shape, resp) || emu_json_str(body, "expirationDuration", &duration, resp) ||
        emu_json_str(body, "warmpoolName", &warmpool, resp) ||
        emu_json_str(body, "publishedPortAuthMode", &mode, resp) ||
        emu_json_str(body, "credentialProfileLabel", &label, resp) ||
        emu_json_int(body, "expiresInMinutes", &minutes, &has_minutes, resp) ||
        emu_json_env(body, "environmentVariables", &b->env, &b->n_env, resp))
        goto out;
    if (shape && strcmp(shape, "SMALL") && strcmp(shape, "MEDIUM") && strcmp(shape, "LARGE")) {
        emu_error(resp, 400, "InvalidParameter", "shape must be SMALL, MEDIUM or LARGE, not %s", shape);
        goto out;
    }
    if (mode && strcmp(mode, "OCI_IAM")) {
        emu_error(resp, 400, "InvalidParameter", "publishedPortAuthMode must be OCI_IAM");
        goto out;
    }
    int64_t maxmin = s->cfg->limits.max_lifetime_minutes;
    if (has_minutes && duration) {
        emu_error(resp, 400, "InvalidParameter", "give expiresInMinutes or expirationDuration, not both");
        goto out;
    }
    if (duration) {
        int64_t ms;
        if (ocisbx_duration_parse(duration, &ms) != 0 || ms <= 0) {
            emu_error(resp, 400, "InvalidParameter", "expirationDuration is not an ISO 8601 duration: %s", duration);
            goto out;
        }
        minutes = (ms + 59999) / 60000;
        has_minutes = true;
    }
    if (!has_minutes)
        minutes = DEFAULT_EXPIRES_MIN < maxmin ? DEFAULT_EXPIRES_MIN : maxmin;
    /* -1 disables automatic expiration [public] */
    if (minutes != -1 && (minutes < 1 || minutes > maxmin)) {
        emu_error(resp, 400, "InvalidParameter",
                  "expiresInMinutes must be -1 (no expiry) or from 1 to %lld, not %lld", (long long)maxmin,
                  (long long)minutes);
        goto out;
    }
    if (warmpool) {
        bool ok = false;
        for (size_t i = 0; i < proj->n_warmpools; i++)
            ok = ok || !strcmp(proj->warmpools[i], warmpool);
        if (!ok) {
            emu_error(resp, 400, "InvalidParameter", "warmpoolName %s is not a warm pool of project %s", warmpool,
                      project_id);
            goto out;
        }
    }
    const cJSON *ports = cJSON_GetObjectItemCaseSensitive(body, "publishPorts");
    if (ports && !cJSON_IsNull(ports)) {
        const cJSON *it;
        if (!cJSON_IsArray(ports)) {
            emu_error(resp, 400, "InvalidParameter", "publishPorts must be a list of strings");
            goto out;
        }
        b->ports = calloc((size_t)cJSON_GetArraySize(ports) + 1, sizeof(char *));
        cJSON_ArrayForEach(it, ports)
        {
            long v = cJSON_IsString(it) ? strtol(it->valuestring, NULL, 10) : 0;
            if (!cJSON_IsString(it) || v < 1 || v > 65535) {
                emu_error(resp, 400, "InvalidParameter", "publishPorts must be port numbers (strings) 1-65535");
                goto out;
            }
            b->ports[b->n_ports++] = ocisbx_strdup(it->valuestring);
        }
    }
    const emu_snapshot *snap = NULL;
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(body, "source");
    if (src && !cJSON_IsNull(src)) {
        const char *type = NULL, *snap_id = NULL;
        if (!cJSON_IsObject(src)) {
            emu_error(resp, 400, "InvalidParameter", "source must be {sourceType, snapshotId}");
            goto out;
        }
        if (emu_json_only(src, "SandboxSource", "sourceType snapshotId", resp) ||
            emu_json_str(src, "sourceType", &type, resp) || emu_json_str(src, "snapshotId", &snap_id, resp))
            goto out;
        if (!type || strcmp(type, "SNAPSHOT") || !snap_id) {
            emu_error(resp, 400, "InvalidParameter", "source.sourceType must be SNAPSHOT with a snapshotId");
            goto out;
        }
        snap = snapshot_find(s, snap_id);
        if (!snap) {
            emu_error(resp, 404, "NotAuthorizedOrNotFound", "snapshot %s not found", snap_id);
            goto out;
        }
        if (strcmp(snap->state, "ACTIVE")) {
            emu_error(resp, 409, "IncorrectState", "snapshot %s is %s, not ACTIVE", snap_id, snap->state);
            goto out;
        }
    }

    emu_new_id("sbx-", b->id, sizeof b->id);
    int64_t now = emu_now_ms();
    b->project_id = project_id;
    project_id = NULL;
    if (display) {
        b->display_name = ocisbx_strdup(display);
    } else {
        char t[32];
        emu_time_rfc3339(now, t);
        b->display_name = ocisbx_asprintf("sandbox-%s", t);
    }
    b->runtime = ocisbx_strdup(runtime ? runtime : "python-3.11");
    b->shape = ocisbx_strdup(shape ? shape : "SMALL");
    b->warmpool = warmpool ? ocisbx_strdup(warmpool) : NULL;
    b->port_auth_mode = mode ? ocisbx_strdup(mode) : (b->n_ports ? ocisbx_strdup("OCI_IAM") : NULL);
    b->credential_label = label ? ocisbx_strdup(label) : NULL;
    b->expires_in_minutes = minutes;
    b->t_created = b->t_updated = now;
    b->t_expires = minutes == -1 ? 0 : now + minutes * s->cfg->limits.minute_ms; /* 0: never */
    b->ready_at_ms = now + s->cfg->limits.create_delay_ms;
    b->version = 1;
    snprintf(b->state, sizeof b->state, "%s", s->cfg->limits.create_delay_ms > 0 ? "CREATING" : "RUNNING");

    ws = emu_workspace_dir(s, b->id);
    int64_t bytes = 0;
    char *snapdir = snap ? ocisbx_asprintf("%s/snapshots/%s", s->state_dir, snap->id) : NULL;
    int frc = snap ? emu_copytree(snapdir, ws, &bytes) : emu_mkdirs(ws);
    if (frc == 0 && ws && geteuid() == 0) {
        /* its own uid (b is not in s->sbx yet: the others' are taken) */
        unsigned uid = emu_sandbox_uid(s, b, true);
        frc = uid ? emu_workspace_own(ws, uid) : -1;
    }
    free(snapdir);
    if (!ws || frc != 0) {
        if (ws)
            emu_rmtree(ws);
        emu_error(resp, 500, "InternalServerError", "cannot create the sandbox's workspace");
        goto out;
    }
    if (add_sandbox(s, b) != 0) {
        emu_error(resp, 500, "InternalServerError", "out of memory");
        goto out;
    }
    emu_server_touch(s);
    sandbox_answer(resp, 200, b);
    b = NULL;
out:
    free(ws);
    emu_sandbox_free(b);
    cJSON_Delete(body);
    free(project_id);
}

static int cmp_created_asc(const void *a, const void *b)
{
    const emu_sandbox *x = *(emu_sandbox *const *)a, *y = *(emu_sandbox *const *)b;
    if (x->t_created != y->t_created)
        return x->t_created < y->t_created ? -1 : 1;
    return strcmp(x->id, y->id);
}

static int cmp_name_asc(const void *a, const void *b)
{
    const emu_sandbox *x = *(emu_sandbox *const *)a, *y = *(emu_sandbox *const *)b;
    int c = strcmp(x->display_name, y->display_name);
    return c ? c : cmp_created_asc(a, b);
}

static void do_list(emu_server *s, const emu_request *req, emu_response *resp)
{
    bool bad = false;
    char *f_project = emu_query_get(req->query, "projectId", &bad);
    char *f_compartment = emu_query_get(req->query, "compartmentId", &bad);
    char *f_id = emu_query_get(req->query, "sandboxId", &bad);
    char *f_name = emu_query_get(req->query, "displayName", &bad);
    char *f_state = emu_query_get(req->query, "lifecycleState", &bad);
    char *sort_by = emu_query_get(req->query, "sortBy", &bad);
    char *sort_order = emu_query_get(req->query, "sortOrder", &bad);
    emu_sandbox **sel = NULL;
    size_t offset, limit;
    if (bad) {
        emu_error(resp, 400, "InvalidParameter", "malformed percent-encoding in the query");
        goto out;
    }
    if (sort_by && strcmp(sort_by, "timeCreated") && strcmp(sort_by, "displayName")) {
        emu_error(resp, 400, "InvalidParameter", "sortBy must be timeCreated or displayName");
        goto out;
    }
    if (f_state) {
        static const char *const states[] = {"CREATING",  "RUNNING",  "UPDATING", "STOPPING", "STOPPED", "SUSPENDING",
                                             "SUSPENDED", "RESUMING", "FAILED",   "DELETED",  NULL};
        bool known = false;
        for (size_t i = 0; states[i] && !known; i++)
            known = !strcmp(f_state, states[i]);
        if (!known) {
            emu_error(resp, 400, "InvalidParameter",
                      "lifecycleState must be one of CREATING, RUNNING, UPDATING, STOPPING, STOPPED, SUSPENDING, "
                      "SUSPENDED, RESUMING, FAILED, DELETED");
            goto out;
        }
    }
    if (sort_order && strcmp(sort_order, "ASC") && strcmp(sort_order, "DESC")) {
        emu_error(resp, 400, "InvalidParameter", "sortOrder must be ASC or DESC");
        goto out;
    }
    if (emu_page_params(req, resp, &offset, &limit))
        goto out;
    sel = calloc(s->n_sbx + 1, sizeof *sel);
    size_t n = 0;
    for (size_t i = 0; sel && i < s->n_sbx; i++) {
        emu_sandbox *b = s->sbx[i];
        if (f_state ? strcmp(b->state, f_state) != 0 : !strcmp(b->state, "DELETED"))
            continue;
        if ((f_project && strcmp(b->project_id, f_project)) || (f_id && strcmp(b->id, f_id)) ||
            (f_name && strcmp(b->display_name, f_name)))
            continue;
        sel[n++] = b;
    }
    bool by_name = sort_by && !strcmp(sort_by, "displayName");
    /* OCI lists default to newest first for time and A-Z for names */
    bool desc = sort_order ? !strcmp(sort_order, "DESC") : !by_name;
    qsort(sel, n, sizeof *sel, by_name ? cmp_name_asc : cmp_created_asc);
    if (desc)
        for (size_t i = 0; i < n / 2; i++) {
            emu_sandbox *t = sel[i];
            sel[i] = sel[n - 1 - i];
            sel[n - 1 - i] = t;
        }
    cJSON *o = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(o, "items");
    for (size_t i = offset; i < n && i < offset + limit; i++)
        cJSON_AddItemToArray(items, emu_sandbox_json(sel[i], true));
    emu_page_next(resp, offset, limit, n);
    emu_json(resp, 200, o);
out:
    free(sel);
    free(f_project);
    free(f_compartment);
    free(f_id);
    free(f_name);
    free(f_state);
    free(sort_by);
    free(sort_order);
}

static int incorrect(emu_response *resp, const emu_sandbox *b, const char *action)
{
    return emu_error(resp, 409, "IncorrectState", "cannot %s sandbox %s in state %s", action, b->id, b->state);
}

static void begin_stop(emu_server *s, emu_sandbox *b, bool force, const char *details)
{
    set_state(b, "STOPPING", details);
    b->stopped_at_ms = emu_now_ms() + s->cfg->limits.stop_delay_ms;
    emu_commands_terminate(s, b, force ? 0 : OCISBX_PROC_TIMEOUT_GRACE_MS, true);
    emu_server_touch(s);
}

void emu_h_sandbox(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    if (rt->id == EMU_R_SANDBOX_CREATE) {
        do_create(s, req, resp);
        return;
    }
    if (rt->id == EMU_R_SANDBOX_LIST) {
        do_list(s, req, resp);
        return;
    }
    emu_sandbox *b = emu_sandbox_find(s, rt->sandbox_id);
    if (!b) {
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "sandbox %s not found or not authorized", rt->sandbox_id);
        return;
    }
    cJSON *body = NULL;
    switch (rt->id) {
    case EMU_R_SANDBOX_GET: sandbox_answer(resp, 200, b); break;
    case EMU_R_SANDBOX_UPDATE: {
        const char *name = NULL;
        if (if_match(req, b, resp) || emu_body_json(req, resp, &body) ||
            emu_json_only(body, "UpdateSandboxDetails", "displayName", resp) ||
            emu_json_str(body, "displayName", &name, resp))
            break;
        if (name) {
            free(b->display_name);
            b->display_name = ocisbx_strdup(name);
        }
        b->t_updated = emu_now_ms();
        b->version++;
        emu_server_touch(s);
        sandbox_answer(resp, 200, b);
        break;
    }
    case EMU_R_SANDBOX_DELETE:
        if (if_match(req, b, resp))
            break;
        emu_commands_terminate(s, b, 0, true);
        emu_sandbox_mark_deleted(s, b);
        resp->status = 204;
        break;
    case EMU_R_SANDBOX_STOP: {
        bool force = false;
        if (if_match(req, b, resp) || emu_body_json(req, resp, &body) ||
            emu_json_only(body, "StopSandboxDetails", "isForce", resp) ||
            emu_json_bool(body, "isForce", &force, resp))
            break;
        if (strcmp(b->state, "RUNNING") && strcmp(b->state, "SUSPENDED")) {
            incorrect(resp, b, "stop");
            break;
        }
        begin_stop(s, b, force, force ? "stopped (forced)" : "stopped");
        resp->status = 202;
        break;
    }
    case EMU_R_SANDBOX_EXTEND: {
        const char *dur = NULL;
        int64_t ms = 0;
        if (if_match(req, b, resp) || emu_body_json(req, resp, &body) ||
            emu_json_only(body, "ExtendSandboxDetails", "additionalDuration", resp) ||
            emu_json_str(body, "additionalDuration", &dur, resp))
            break;
        if (!dur || ocisbx_duration_parse(dur, &ms) != 0 || ms <= 0) {
            emu_error(resp, 400, "InvalidParameter",
                      "additionalDuration must be a positive ISO 8601 duration like PT30M");
            break;
        }
        if (strcmp(b->state, "RUNNING")) {
            incorrect(resp, b, "extend");
            break;
        }
        if (b->t_expires == 0) {
            emu_error(resp, 409, "IncorrectState",
                      "sandbox %s does not expire (expiresInMinutes -1): nothing to extend", b->id);
            break;
        }
        int64_t minute = s->cfg->limits.minute_ms;
        int64_t limit = b->t_created + s->cfg->limits.max_lifetime_minutes * minute;
        ms = ms / 60000 * minute + (ms % 60000) * minute / 60000;
        if (b->t_expires + ms > limit) {
            char t[32];
            emu_time_rfc3339(limit, t);
            emu_error(resp, 400, "InvalidParameter",
                      "extending by %s would pass the maximum lifetime of %lld minutes from creation (%s)", dur,
                      (long long)s->cfg->limits.max_lifetime_minutes, t);
            break;
        }
        b->t_expires += ms;
        b->expires_in_minutes = (b->t_expires - b->t_created + minute - 1) / minute;
        b->t_updated = emu_now_ms();
        b->version++;
        emu_server_touch(s);
        sandbox_answer(resp, 200, b);
        break;
    }
    case EMU_R_SANDBOX_SUSPEND:
        if (emu_body_json(req, resp, &body) || emu_json_only(body, "SuspendSandboxDetails", "", resp))
            break;
        if (strcmp(b->state, "RUNNING")) {
            incorrect(resp, b, "suspend");
            break;
        }
        emu_commands_signal(b, SIGSTOP);
        set_state(b, "SUSPENDED", NULL);
        emu_server_touch(s);
        resp->status = 202;
        break;
    case EMU_R_SANDBOX_RESUME:
        if (emu_body_json(req, resp, &body) || emu_json_only(body, "ResumeSandboxDetails", "", resp))
            break;
        if (strcmp(b->state, "SUSPENDED")) {
            incorrect(resp, b, "resume");
            break;
        }
        emu_commands_signal(b, SIGCONT);
        set_state(b, "RUNNING", NULL);
        emu_server_touch(s);
        resp->status = 202;
        break;
    default: emu_error(resp, 500, "InternalServerError", "unrouted request");
    }
    cJSON_Delete(body);
}

void emu_sandbox_tick(emu_server *s, int64_t now)
{
    for (size_t i = 0; i < s->n_sbx; i++) {
        emu_sandbox *b = s->sbx[i];
        if (!strcmp(b->state, "DELETED"))
            continue;
        if (!strcmp(b->state, "CREATING") && now >= b->ready_at_ms) {
            set_state(b, "RUNNING", NULL);
            emu_server_touch(s);
        }
        if (!strcmp(b->state, "STOPPING") && now >= b->stopped_at_ms && !emu_commands_active(b)) {
            set_state(b, "STOPPED", b->details);
            b->t_stopped = now;
            emu_server_touch(s);
            if (b->delete_after_stop) {
                emu_sandbox_mark_deleted(s, b);
                continue;
            }
        }
        if (b->t_expires > 0 && now >= b->t_expires && !b->delete_after_stop) {
            b->delete_after_stop = true;
            if (!strcmp(b->state, "STOPPED") || !strcmp(b->state, "FAILED")) {
                emu_sandbox_mark_deleted(s, b);
            } else if (strcmp(b->state, "STOPPING")) {
                begin_stop(s, b, true, "expired");
            }
        }
    }
}
