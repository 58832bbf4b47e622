/* Loading the state directory (see store.c for its layout): the state
 * file, each command's journal up to its last whole line, the retry
 * records; the workspaces never recorded are removed. Commands that were
 * running when the emulator went away come back FAILED, cut (a FINISHED
 * event after the last journaled one, no exit code). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/model.h"
#include "ocisbx/util.h"

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

static void load_event(emu_command *c, const cJSON *it)
{
    emu_event *e = emu_command_add_event(c, (int)get_n(it, "kind"));
    if (!e)
        return;
    e->ts_ms = get_n(it, "ts");
    char *b64 = get_s(it, "dataB64");
    unsigned char *raw = NULL;
    size_t raw_len = 0;
    if (b64 && !c->output_lost && ocisbx_base64_decode(b64, strlen(b64), &raw, &raw_len) == 0) {
        e->data = (char *)raw;
        e->len = raw_len;
    }
    free(b64);
    e->exit_code = (int)get_n(it, "exitCode");
}

/* The journal up to its last whole line (a line torn by a crash was never
 * sent: it is cut off so appends go on cleanly). A FINISHED line settles the
 * command whatever the older state file said. */
static void load_journal(const emu_server *s, emu_command *c)
{
    char *path = ocisbx_asprintf("%s/commands/%s.events", s->state_dir, c->id);
    size_t len = 0;
    char *text = path ? emu_read_file(path, &len) : NULL;
    size_t good = 0;
    while (text && good < len) {
        char *nl = memchr(text + good, '\n', len - good);
        if (!nl)
            break;
        cJSON *it = cJSON_ParseWithLength(text + good, (size_t)(nl - text - (ptrdiff_t)good));
        if (!cJSON_IsObject(it)) {
            cJSON_Delete(it);
            break;
        }
        good = (size_t)(nl - text) + 1;
        if (get_b(it, "lost")) {
            c->output_lost = true;
            for (size_t i = 0; i < c->n_events; i++) {
                free(c->events[i].data);
                c->events[i].data = NULL;
                c->events[i].len = 0;
            }
        } else {
            load_event(c, it);
            if (get_n(it, "kind") == EMU_EV_FINISHED && !c->finished) {
                c->finished = true;
                get_fixed(it, "state", c->state, sizeof c->state);
                c->exit_code = (int)get_n(it, "exitCode");
                c->t_finished = c->t_updated = get_n(it, "tFinished");
            }
        }
        cJSON_Delete(it);
    }
    if (text && good < len && truncate(path, (off_t)good) != 0)
        ocisbx_log(OCISBX_LOG_WARN, "cannot cut the torn end of the journal of %s", c->id);
    c->journal_exists = text != NULL;
    c->n_journaled = c->n_events;
    c->lost_journaled = c->output_lost;
    free(text);
    free(path);
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
    if (get_b(o, "journal")) {
        load_journal(s, c);
    } else {
        /* older state directories: events inline or in commands/<id>.json */
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
        const cJSON *it;
        cJSON_ArrayForEach(it, ev)
        {
            load_event(c, it);
        }
        cJSON_Delete(file_ev);
    }
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

/* Workspaces of sandboxes never recorded (a create cut before its answer)
 * are removed: the record and its directory come and go together. */
static void remove_orphans(emu_server *s)
{
    char *dir = ocisbx_asprintf("%s/workspaces", s->state_dir);
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "sbx-", 4) != 0)
            continue;
        bool known = false;
        for (size_t i = 0; i < s->n_sbx && !known; i++)
            known = !strcmp(s->sbx[i]->id, de->d_name);
        if (!known) {
            char *ws = ocisbx_asprintf("%s/%s", dir, de->d_name);
            if (ws && emu_rmtree(ws) != 0)
                ocisbx_log(OCISBX_LOG_WARN, "cannot remove the unrecorded workspace %s", de->d_name);
            free(ws);
        }
    }
    if (d)
        closedir(d);
    free(dir);
}

static emu_sandbox *load_sandbox(const emu_server *s, const cJSON *it)
{
    emu_sandbox *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    get_fixed(it, "id", b->id, sizeof b->id);
    b->project_id = get_s(it, "projectId");
    b->display_name = get_s(it, "displayName");
    b->runtime = get_s(it, "runtime");
    b->shape = get_s(it, "shape");
    if (!b->project_id || !b->display_name || !b->runtime || !b->shape) {
        emu_sandbox_free(b);
        return NULL;
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
    return b;
}

static emu_snapshot *load_snapshot(const cJSON *it)
{
    emu_snapshot *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
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
    return n;
}

static emu_retry *load_retry(const cJSON *it)
{
    emu_retry *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->key = get_s(it, "key");
    r->t_ms = get_n(it, "t");
    r->status = (int)get_n(it, "status");
    r->content_type = get_s(it, "contentType");
    r->body = get_s(it, "body");
    r->body_len = r->body ? strlen(r->body) : 0;
    get_fixed(it, "commandId", r->command_id, sizeof r->command_id);
    get_fixed(it, "startedCommand", r->started_cmd, sizeof r->started_cmd);
    r->done = !get_b(it, "pending");
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
    if (!r->key) {
        emu_retry_free(r);
        return NULL;
    }
    return r;
}

/* A retry token whose action was cut by the crash after it started a
 * command stays, as cut: a repeat is answered from that command as it is
 * now (FAILED, cut), so it never runs again; without its command it goes. */
static void settle_retries(emu_server *s)
{
    for (size_t i = 0; i < s->n_retries;) {
        emu_retry *r = s->retries[i];
        if (!r->done && r->started_cmd[0] && emu_command_find_any(s, r->started_cmd)) {
            r->done = r->cut = true;
        } else if (!r->done) {
            emu_retry_free(r);
            s->retries[i] = s->retries[--s->n_retries];
            continue;
        }
        i++;
    }
}

/* The parsed state file into s. */
static void load_root(emu_server *s, const cJSON *root)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "sandboxes"))
    {
        emu_sandbox *b = load_sandbox(s, it);
        if (b && EMU_GROW(s->sbx, s->n_sbx, s->cap_sbx, 16) != 0) {
            emu_sandbox_free(b);
            break;
        }
        if (b)
            s->sbx[s->n_sbx++] = b;
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "snapshots"))
    {
        emu_snapshot *n = load_snapshot(it);
        if (n && EMU_GROW(s->snaps, s->n_snaps, s->cap_snaps, 8) != 0) {
            emu_snapshot_free(n);
            break;
        }
        if (n)
            s->snaps[s->n_snaps++] = n;
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "retryTokens"))
    {
        emu_retry *r = load_retry(it);
        if (r && EMU_GROW(s->retries, s->n_retries, s->cap_retries, 16) != 0) {
            emu_retry_free(r);
            continue;
        }
        if (r)
            s->retries[s->n_retries++] = r;
    }
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
    load_root(s, root);
    cJSON_Delete(root);
    settle_retries(s);
    remove_orphans(s);
    s->dirty = true;
    return 0;
}
