/* The state: <state-dir>/state.json (every sandbox, command, snapshot and
 * retry token, without events) and one append-only event journal per
 * command, <state-dir>/commands/<id>.events (one JSON line per event).
 * Durability: emu_store_sync() appends the new events to the journals and
 * rewrites the state file when something changed, each fsync'd (the file,
 * then the directory after a rename or a new journal); the dispatcher calls
 * it before every answer is sent and a stream calls emu_store_sync_command()
 * before it sends events, so nothing answered or sent is lost by kill -9.
 * Workspaces live beside it; commands that were running when the emulator
 * went away come back FAILED, cut (a FINISHED event after the last journaled
 * one, no exit code). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "emulator/emu.h"
#include "ocisbx/util.h"

static _Thread_local emu_retry *tl_retry;

void emu_store_set_retry(emu_retry *r)
{
    tl_retry = r;
}

static int sync_fd(const emu_server *s, int fd)
{
    return s->no_fsync ? 0 : fsync(fd);
}

static int sync_dir(const emu_server *s, const char *dir)
{
    if (s->no_fsync)
        return 0;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static int write_all(int fd, const char *p, size_t left)
{
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        left -= (size_t)w;
    }
    return 0;
}

/* Written to a temporary name, fsync'd, renamed into place, the directory
 * fsync'd: after a crash either the old or the new file is there, whole. */
static int write_durable(const emu_server *s, const char *dir, const char *path, const char *data, size_t len)
{
    char suffix[20];
    emu_new_id(".tmp-", suffix, sizeof suffix);
    char *tmp = ocisbx_asprintf("%s%s", path, suffix);
    if (!tmp)
        return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -1 : 0;
    if (!rc && (write_all(fd, data, len) != 0 || sync_fd(s, fd) != 0))
        rc = -1;
    if (fd >= 0 && close(fd) != 0)
        rc = -1;
    if (!rc && rename(tmp, path) != 0)
        rc = -1;
    if (rc) {
        int e = errno;
        unlink(tmp);
        errno = e;
    } else if (sync_dir(s, dir) != 0) {
        rc = -1;
    }
    free(tmp);
    return rc;
}

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

/* One journal line per event: {"ts","kind","dataB64","exitCode"} and, for
 * FINISHED, the command's final state and time (so a FINISHED event that
 * was sent is never contradicted by an older state file). The output loss is
 * a line {"lost":true}: the data of every event is void from then on. */
static void journal_line(const emu_command *c, const emu_event *e, ocisbx_buf *out)
{
    cJSON *x = cJSON_CreateObject();
    put_num(x, "ts", e->ts_ms);
    put_num(x, "kind", e->kind);
    if (e->data && !c->output_lost) {
        char *b64 = NULL;
        if (ocisbx_base64_encode(e->data, e->len, &b64) == 0)
            put_str(x, "dataB64", b64);
        ocisbx_free(b64);
    }
    put_num(x, "exitCode", e->exit_code);
    if (e->kind == EMU_EV_FINISHED) {
        put_str(x, "state", c->state);
        put_num(x, "tFinished", c->t_finished);
    }
    char *text = cJSON_PrintUnformatted(x);
    cJSON_Delete(x);
    if (text) {
        ocisbx_buf_appends(out, text);
        ocisbx_buf_appends(out, "\n");
    }
    cJSON_free(text);
}

int emu_store_sync_command(emu_server *s, emu_command *c)
{
    bool lost = c->output_lost && !c->lost_journaled;
    if (c->n_journaled >= c->n_events && !lost)
        return 0;
    ocisbx_buf text = OCISBX_BUF_INIT;
    if (lost)
        ocisbx_buf_appends(&text, "{\"lost\":true}\n");
    for (size_t i = c->n_journaled; i < c->n_events; i++)
        journal_line(c, &c->events[i], &text);
    char *dir = ocisbx_asprintf("%s/commands", s->state_dir);
    char *path = ocisbx_asprintf("%s/commands/%s.events", s->state_dir, c->id);
    int rc = -1, fd = -1;
    if (dir && path && text.data && emu_mkdirs(dir) == 0)
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        if (write_all(fd, text.data, text.len) == 0 && sync_fd(s, fd) == 0 &&
            (c->journal_exists || sync_dir(s, dir) == 0))
            rc = 0;
        else if (ftruncate(fd, st.st_size) != 0) /* no torn line before the next append */
            ocisbx_log(OCISBX_LOG_WARN, "cannot cut the journal of %s back", c->id);
    }
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (rc == 0) {
        c->n_journaled = c->n_events;
        c->lost_journaled = c->output_lost;
        c->journal_exists = true;
    }
    ocisbx_buf_free(&text);
    free(dir);
    free(path);
    errno = e;
    return rc == 0 ? 0 : ocisbx_fail(OCISBX_EIO, "cannot write the events of %s: %s", c->id, strerror(e));
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
    cJSON_AddBoolToObject(o, "journal", true);
    return o;
}

static cJSON *sbx_json(const emu_server *s, const emu_sandbox *b)
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
    bool starting_listed = false;
    for (size_t i = 0; i < b->n_cmds; i++) {
        cJSON_AddItemToArray(cmds, cmd_json(b->cmds[i]));
        starting_listed = starting_listed || b->cmds[i] == s->starting_cmd;
    }
    if (s->starting_cmd && s->starting_sbx == b && !starting_listed)
        cJSON_AddItemToArray(cmds, cmd_json(s->starting_cmd));
    return o;
}

int emu_store_save(emu_server *s)
{
    cJSON *root = cJSON_CreateObject();
    put_num(root, "version", 1);
    cJSON *a = cJSON_AddArrayToObject(root, "sandboxes");
    for (size_t i = 0; i < s->n_sbx; i++)
        cJSON_AddItemToArray(a, sbx_json(s, s->sbx[i]));
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
        /* An action in progress is kept only once it started a command:
         * every other action and its answer reach the file together, in one
         * write, so a token without an answer never acted durably. */
        if (!r->done && !r->started_cmd[0])
            continue;
        cJSON *o = cJSON_CreateObject();
        put_str(o, "key", r->key);
        if (!r->done)
            cJSON_AddBoolToObject(o, "pending", true);
        put_str(o, "startedCommand", r->started_cmd);
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
    int rc = path && write_durable(s, s->state_dir, path, text, strlen(text)) == 0
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

/* A retry token whose action was cut by the crash after it started a
 * command: its recorded outcome is that command as it is now (FAILED, cut:
 * finished without an exit code), answered like the route would have, so a
 * repeat never runs it again. -1: nothing to answer (the record is dropped). */
static int settle_retry(emu_server *s, emu_retry *r)
{
    emu_command *c = NULL;
    for (size_t i = 0; i < s->n_sbx && !c && r->started_cmd[0]; i++)
        c = emu_command_find(s->sbx[i], r->started_cmd);
    /* the key: "<token> POST <path>?<query>" */
    const char *p = r->key ? strchr(r->key, ' ') : NULL;
    p = p ? strchr(p + 1, ' ') : NULL;
    if (!c || !p)
        return -1;
    char *path = ocisbx_strndup(p + 1, strcspn(p + 1, "?"));
    emu_route rt;
    int mrc = path ? emu_route_match("POST", path, &rt) : -1;
    free(path);
    if (mrc != 0)
        return -1;
    cJSON *o = NULL;
    if (rt.id == EMU_R_COMMAND_RUN) {
        o = cJSON_CreateObject(); /* SandboxCommandIdentifier [public] */
        if (o)
            cJSON_AddStringToObject(o, "id", c->id);
    } else if (rt.id == EMU_R_COMMAND_RUN_WAIT) {
        o = emu_command_json(s, c, false);
        cJSON_AddItemToObject(o, "output", emu_command_output_json(s, c, 1));
    } else if (rt.id == EMU_R_COMMAND_RUN_STREAM) {
        snprintf(r->command_id, sizeof r->command_id, "%s", c->id); /* replays its stream */
        o = emu_command_json(s, c, false);
    } else {
        return -1;
    }
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text)
        return -1;
    free(r->body);
    free(r->content_type);
    r->body = ocisbx_strdup(text);
    r->body_len = r->body ? strlen(r->body) : 0;
    cJSON_free(text);
    r->content_type = ocisbx_strdup("application/json");
    r->status = 200;
    r->done = true;
    return 0;
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

int emu_store_sync(emu_server *s)
{
    int rc = 0;
    for (size_t i = 0; i < s->n_sbx; i++)
        for (size_t j = 0; j < s->sbx[i]->n_cmds; j++)
            if (emu_store_sync_command(s, s->sbx[i]->cmds[j]) != 0)
                rc = OCISBX_EIO;
    if (s->dirty) {
        s->dirty = false;
        if (emu_store_save(s) != 0) {
            s->dirty = true;
            rc = OCISBX_EIO;
        }
    }
    return rc;
}

void emu_store_command_begin(emu_server *s, emu_sandbox *b, emu_command *c)
{
    if (tl_retry && !tl_retry->done)
        snprintf(tl_retry->started_cmd, sizeof tl_retry->started_cmd, "%s", c->id);
    s->starting_sbx = b;
    s->starting_cmd = c;
    s->dirty = true;
    if (emu_store_sync(s) != 0)
        ocisbx_log(OCISBX_LOG_ERROR, "%s", ocisbx_error_message(ocisbx_error_last()));
    s->starting_sbx = NULL;
    s->starting_cmd = NULL;
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
        if (!r->key || EMU_GROW(s->retries, s->n_retries, s->cap_retries, 16) != 0) {
            emu_retry_free(r);
            continue;
        }
        s->retries[s->n_retries++] = r;
    }
    cJSON_Delete(root);
    for (size_t i = 0; i < s->n_retries;) {
        if (s->retries[i]->done || settle_retry(s, s->retries[i]) == 0) {
            i++;
        } else {
            emu_retry_free(s->retries[i]);
            s->retries[i] = s->retries[--s->n_retries];
        }
    }
    remove_orphans(s);
    s->dirty = true;
    return 0;
}
