/* The state file <state-dir>/state.json: every sandbox, command (with its
 * events), snapshot and retry token, written atomically. Workspaces live
 * beside it, so a restart loses nothing; commands that were running when the
 * emulator went away come back FAILED. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/emu.h"
#include "ocisbx/util.h"

static void put_str(cJSON *o, const char *k, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, k, v);
}

static void put_num(cJSON *o, const char *k, int64_t v)
{
    cJSON_AddNumberToObject(o, k, (double)v);
}

static cJSON *env_json(const emu_env *env, size_t n)
{
    /* The state directory is the emulator's own: values are kept so a
     * restarted sandbox still gives its commands their environment. */
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        put_str(o, "name", env[i].name);
        put_str(o, "value", env[i].value);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *events_json(const emu_command *c)
{
    cJSON *ev = cJSON_CreateArray();
    for (size_t i = 0; i < c->n_events; i++) {
        const emu_event *e = &c->events[i];
        cJSON *x = cJSON_CreateObject();
        put_num(x, "ts", e->ts_ms);
        put_num(x, "kind", e->kind);
        if (e->data) { /* base64: output may hold NUL, which a JSON string from cJSON cannot */
            char *b64 = NULL;
            if (ocisbx_base64_encode(e->data, e->len, &b64) == 0)
                put_str(x, "dataB64", b64);
            ocisbx_free(b64);
        }
        put_num(x, "exitCode", e->exit_code);
        cJSON_AddItemToArray(ev, x);
    }
    return ev;
}

/* A finished command's events never change: written once to their own file,
 * so the periodic state file stays small whatever the outputs were. */
static void persist_events(const emu_server *s, emu_command *c)
{
    if (!c->finished || c->persisted)
        return;
    char *dir = ocisbx_asprintf("%s/commands", s->state_dir);
    char *path = ocisbx_asprintf("%s/commands/%s.json", s->state_dir, c->id);
    cJSON *ev = events_json(c);
    char *text = cJSON_PrintUnformatted(ev);
    cJSON_Delete(ev);
    if (dir && path && text && emu_mkdirs(dir) == 0 && emu_write_file_atomic(path, text, strlen(text)) == 0)
        c->persisted = true;
    cJSON_free(text);
    free(dir);
    free(path);
}

static cJSON *cmd_json(const emu_command *c)
{
    cJSON *o = cJSON_CreateObject();
    put_str(o, "id", c->id);
    put_str(o, "command", c->command);
    cJSON *a = cJSON_AddArrayToObject(o, "args");
    for (size_t i = 0; i < c->n_args; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(c->args[i]));
    put_str(o, "cwd", c->cwd);
    cJSON_AddItemToObject(o, "env", env_json(c->env, c->n_env));
    put_str(o, "timeout", c->timeout);
    put_num(o, "timeoutMs", c->timeout_ms);
    put_str(o, "state", c->state);
    put_num(o, "exitCode", c->exit_code);
    put_num(o, "tCreated", c->t_created);
    put_num(o, "tStarted", c->t_started);
    put_num(o, "tFinished", c->t_finished);
    put_num(o, "tUpdated", c->t_updated);
    put_num(o, "outputBytes", c->output_bytes);
    cJSON_AddBoolToObject(o, "outputLost", c->output_lost);
    cJSON_AddBoolToObject(o, "finished", c->finished);
    if (c->persisted)
        cJSON_AddBoolToObject(o, "eventsFile", true);
    else
        cJSON_AddItemToObject(o, "events", events_json(c));
    return o;
}

static cJSON *sbx_json(const emu_sandbox *b)
{
    cJSON *o = cJSON_CreateObject();
    put_str(o, "id", b->id);
    put_str(o, "projectId", b->project_id);
    put_str(o, "displayName", b->display_name);
    put_str(o, "runtime", b->runtime);
    put_str(o, "shape", b->shape);
    put_str(o, "state", b->state);
    put_str(o, "details", b->details);
    put_str(o, "warmpool", b->warmpool);
    cJSON *p = cJSON_AddArrayToObject(o, "ports");
    for (size_t i = 0; i < b->n_ports; i++)
        cJSON_AddItemToArray(p, cJSON_CreateString(b->ports[i]));
    put_str(o, "portAuthMode", b->port_auth_mode);
    put_str(o, "credentialLabel", b->credential_label);
    cJSON_AddItemToObject(o, "env", env_json(b->env, b->n_env));
    put_num(o, "expiresInMinutes", b->expires_in_minutes);
    put_num(o, "tCreated", b->t_created);
    put_num(o, "tUpdated", b->t_updated);
    put_num(o, "tExpires", b->t_expires);
    put_num(o, "tStopped", b->t_stopped);
    put_num(o, "readyAt", b->ready_at_ms);
    put_num(o, "stoppedAt", b->stopped_at_ms);
    cJSON_AddBoolToObject(o, "deleteAfterStop", b->delete_after_stop);
    put_num(o, "version", b->version);
    cJSON *cmds = cJSON_AddArrayToObject(o, "commands");
    for (size_t i = 0; i < b->n_cmds; i++)
        cJSON_AddItemToArray(cmds, cmd_json(b->cmds[i]));
    return o;
}

int emu_store_save(emu_server *s)
{
    for (size_t i = 0; i < s->n_sbx; i++)
        for (size_t j = 0; j < s->sbx[i]->n_cmds; j++)
            persist_events(s, s->sbx[i]->cmds[j]);
    cJSON *root = cJSON_CreateObject();
    put_num(root, "version", 1);
    cJSON *a = cJSON_AddArrayToObject(root, "sandboxes");
    for (size_t i = 0; i < s->n_sbx; i++)
        cJSON_AddItemToArray(a, sbx_json(s->sbx[i]));
    a = cJSON_AddArrayToObject(root, "snapshots");
    for (size_t i = 0; i < s->n_snaps; i++) {
        const emu_snapshot *n = s->snaps[i];
        cJSON *o = cJSON_CreateObject();
        put_str(o, "id", n->id);
        put_str(o, "sandboxId", n->sandbox_id);
        put_str(o, "displayName", n->display_name);
        put_str(o, "runtime", n->runtime);
        if (n->project_id)
            put_str(o, "projectId", n->project_id);
        if (n->expiration)
            put_str(o, "expirationDuration", n->expiration);
        put_num(o, "tUpdated", n->t_updated);
        put_num(o, "version", n->version);
        put_str(o, "state", n->state);
        put_num(o, "sizeBytes", n->size_bytes);
        put_num(o, "tCreated", n->t_created);
        put_num(o, "tExpires", n->t_expires);
        cJSON_AddItemToArray(a, o);
    }
    a = cJSON_AddArrayToObject(root, "retryTokens");
    for (size_t i = 0; i < s->n_retries; i++) {
        const emu_retry *r = s->retries[i];
        if (!r->done)
            continue;
        cJSON *o = cJSON_CreateObject();
        put_str(o, "key", r->key);
        put_num(o, "t", r->t_ms);
        put_num(o, "status", r->status);
        put_str(o, "contentType", r->content_type);
        put_str(o, "body", r->body);
        put_str(o, "commandId", r->command_id);
        cJSON *h = cJSON_AddObjectToObject(o, "headers");
        for (int k = 0; k < 4 && r->hdr_names[k]; k++)
            put_str(h, r->hdr_names[k], r->hdr_values[k]);
        cJSON_AddItemToArray(a, o);
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text)
        return ocisbx_fail_nomem();
    char *path = ocisbx_asprintf("%s/state.json", s->state_dir);
    int rc = path && emu_write_file_atomic(path, text, strlen(text)) == 0
                 ? 0
                 : ocisbx_fail(OCISBX_EIO, "cannot write %s: %s", path ? path : "state.json", strerror(errno));
    free(path);
    cJSON_free(text);
    return rc;
}

/* ---- loading ---- */
static char *get_s(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? ocisbx_strdup(v->valuestring) : NULL;
}

static void get_fixed(const cJSON *o, const char *k, char *out, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    snprintf(out, cap, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static int64_t get_n(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

static bool get_b(const cJSON *o, const char *k)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static emu_env *get_env(const cJSON *o, const char *k, size_t *n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, k);
    *n = 0;
    int count = cJSON_GetArraySize(a);
    emu_env *env = calloc((size_t)count + 1, sizeof *env);
    const cJSON *it;
    cJSON_ArrayForEach(it, a)
    {
        if (!env)
            break;
        env[*n].name = get_s(it, "name");
        env[*n].value = get_s(it, "value");
        if (!env[*n].name)
            env[*n].name = ocisbx_strdup("_");
        if (!env[*n].value)
            env[*n].value = ocisbx_strdup("");
        (*n)++;
    }
    return env;
}

static char **get_strs(const cJSON *o, const char *k, size_t *n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, k);
    *n = 0;
    char **out = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof(char *));
    const cJSON *it;
    cJSON_ArrayForEach(it, a)
    {
        if (out && cJSON_IsString(it))
            out[(*n)++] = ocisbx_strdup(it->valuestring);
    }
    return out;
}

static emu_command *load_cmd(const emu_server *s, const cJSON *o, const char *sandbox_id)
{
    emu_command *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->refs = 1;
    get_fixed(o, "id", c->id, sizeof c->id);
    snprintf(c->sandbox_id, sizeof c->sandbox_id, "%s", sandbox_id);
    c->command = get_s(o, "command");
    if (!c->command)
        c->command = ocisbx_strdup("");
    c->args = get_strs(o, "args", &c->n_args);
    c->cwd = get_s(o, "cwd");
    if (!c->cwd)
        c->cwd = ocisbx_strdup("/workspace");
    c->env = get_env(o, "env", &c->n_env);
    c->timeout = get_s(o, "timeout");
    c->timeout_ms = get_n(o, "timeoutMs");
    get_fixed(o, "state", c->state, sizeof c->state);
    c->exit_code = (int)get_n(o, "exitCode");
    c->t_created = get_n(o, "tCreated");
    c->t_started = get_n(o, "tStarted");
    c->t_finished = get_n(o, "tFinished");
    c->t_updated = get_n(o, "tUpdated");
    c->output_bytes = get_n(o, "outputBytes");
    c->output_lost = get_b(o, "outputLost");
    c->finished = get_b(o, "finished");
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "events");
    cJSON *file_ev = NULL;
    if (get_b(o, "eventsFile")) {
        char *path = ocisbx_asprintf("%s/commands/%s.json", s->state_dir, c->id);
        size_t len = 0;
        char *text = path ? emu_read_file(path, &len) : NULL;
        file_ev = text ? cJSON_ParseWithLength(text, len) : NULL;
        free(text);
        free(path);
        ev = file_ev;
        c->persisted = file_ev != NULL;
    }
    size_t n = (size_t)cJSON_GetArraySize(ev);
    c->events = calloc(n + 1, sizeof *c->events);
    c->cap_events = c->events ? n + 1 : 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, ev)
    {
        if (!c->events)
            break;
        emu_event *e = &c->events[c->n_events++];
        e->seq = (int64_t)c->n_events;
        e->ts_ms = get_n(it, "ts");
        e->kind = (int)get_n(it, "kind");
        char *b64 = get_s(it, "dataB64");
        unsigned char *raw = NULL;
        size_t raw_len = 0;
        if (b64 && ocisbx_base64_decode(b64, strlen(b64), &raw, &raw_len) == 0) {
            e->data = (char *)raw;
            e->len = raw_len;
        }
        free(b64);
        e->exit_code = (int)get_n(it, "exitCode");
    }
    cJSON_Delete(file_ev);
    if (!c->finished) {
        /* it was running when the emulator stopped: its processes are gone */
        snprintf(c->state, sizeof c->state, "FAILED");
        c->exit_code = -1;
        c->t_finished = c->t_updated = emu_now_ms();
        emu_event *e = emu_command_add_event(c, EMU_EV_FINISHED);
        if (e)
            e->ts_ms = c->t_finished;
        c->finished = true;
    }
    return c;
}

int emu_store_load(emu_server *s)
{
    char *path = ocisbx_asprintf("%s/state.json", s->state_dir);
    if (!path)
        return ocisbx_fail_nomem();
    size_t len = 0;
    char *text = emu_read_file(path, &len);
    if (!text) {
        int rc = errno == ENOENT ? 0 : ocisbx_fail(OCISBX_EIO, "cannot read %s: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        int rc = ocisbx_fail(OCISBX_EPARSE, "%s is not a state file of this emulator", path);
        free(path);
        return rc;
    }
    free(path);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "sandboxes"))
    {
        emu_sandbox *b = calloc(1, sizeof *b);
        if (!b)
            break;
        get_fixed(it, "id", b->id, sizeof b->id);
        b->project_id = get_s(it, "projectId");
        b->display_name = get_s(it, "displayName");
        b->runtime = get_s(it, "runtime");
        b->shape = get_s(it, "shape");
        if (!b->project_id || !b->display_name || !b->runtime || !b->shape) {
            emu_sandbox_free(b);
            continue;
        }
        get_fixed(it, "state", b->state, sizeof b->state);
        b->details = get_s(it, "details");
        b->warmpool = get_s(it, "warmpool");
        b->ports = get_strs(it, "ports", &b->n_ports);
        b->port_auth_mode = get_s(it, "portAuthMode");
        b->credential_label = get_s(it, "credentialLabel");
        b->env = get_env(it, "env", &b->n_env);
        b->expires_in_minutes = get_n(it, "expiresInMinutes");
        b->t_created = get_n(it, "tCreated");
        b->t_updated = get_n(it, "tUpdated");
        b->t_expires = get_n(it, "tExpires");
        b->t_stopped = get_n(it, "tStopped");
        b->ready_at_ms = get_n(it, "readyAt");
        b->stopped_at_ms = get_n(it, "stoppedAt");
        b->delete_after_stop = get_b(it, "deleteAfterStop");
        b->version = get_n(it, "version") + 1;
        const cJSON *ci;
        cJSON_ArrayForEach(ci, cJSON_GetObjectItemCaseSensitive(it, "commands"))
        {
            emu_command *c = load_cmd(s, ci, b->id);
            if (!c)
                continue;
            if (EMU_GROW(b->cmds, b->n_cmds, b->cap_cmds, 8) != 0) {
                emu_command_free(c);
                continue;
            }
            b->cmds[b->n_cmds++] = c;
        }
        if (EMU_GROW(s->sbx, s->n_sbx, s->cap_sbx, 16) != 0) {
            emu_sandbox_free(b);
            break;
        }
        s->sbx[s->n_sbx++] = b;
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "snapshots"))
    {
        emu_snapshot *n = calloc(1, sizeof *n);
        if (!n)
            break;
        get_fixed(it, "id", n->id, sizeof n->id);
        get_fixed(it, "sandboxId", n->sandbox_id, sizeof n->sandbox_id);
        n->display_name = get_s(it, "displayName");
        n->runtime = get_s(it, "runtime");
        n->project_id = get_s(it, "projectId");
        n->expiration = get_s(it, "expirationDuration");
        if (!n->display_name)
            n->display_name = ocisbx_strdup(n->id);
        if (!n->runtime)
            n->runtime = ocisbx_strdup("python-3.11");
        get_fixed(it, "state", n->state, sizeof n->state);
        n->size_bytes = get_n(it, "sizeBytes");
        n->t_created = get_n(it, "tCreated");
        n->t_expires = get_n(it, "tExpires");
        n->t_updated = get_n(it, "tUpdated");
        if (n->t_updated <= 0)
            n->t_updated = n->t_created;
        n->version = get_n(it, "version");
        if (EMU_GROW(s->snaps, s->n_snaps, s->cap_snaps, 8) != 0) {
            emu_snapshot_free(n);
            break;
        }
        s->snaps[s->n_snaps++] = n;
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "retryTokens"))
    {
        emu_retry *r = calloc(1, sizeof *r);
        if (!r)
            break;
        r->key = get_s(it, "key");
        r->t_ms = get_n(it, "t");
        r->status = (int)get_n(it, "status");
        r->content_type = get_s(it, "contentType");
        r->body = get_s(it, "body");
        r->body_len = r->body ? strlen(r->body) : 0;
        get_fixed(it, "commandId", r->command_id, sizeof r->command_id);
        r->done = true;
        int k = 0;
        const cJSON *h;
        cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(it, "headers"))
        {
            if (k < 4 && cJSON_IsString(h) && h->string) {
                r->hdr_names[k] = ocisbx_strdup(h->string);
                r->hdr_values[k] = ocisbx_strdup(h->valuestring);
                k++;
            }
        }
        if (!r->key || EMU_GROW(s->retries, s->n_retries, s->cap_retries, 16) != 0) {
            emu_retry_free(r);
            continue;
        }
        s->retries[s->n_retries++] = r;
    }
    cJSON_Delete(root);
    s->dirty = true;
    return 0;
}
