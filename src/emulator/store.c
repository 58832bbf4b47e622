/* The state: <state-dir>/state.json (every sandbox, command, snapshot and
 * retry token, without events) and one append-only event journal per
 * command, <state-dir>/commands/<id>.events (one JSON line per event).
 * Durability: the new events are appended to the journals and the state
 * file is rewritten when something changed, each fsync'd (the file, then
 * the directory after a rename or a new journal), before every answer is
 * sent (the dispatcher's emu_store_commit) and before a stream sends events
 * (emu_store_sync_command), so nothing answered or sent is lost by kill -9.
 * emu_store_commit is a group commit: the state is serialized under the
 * state lock, but written and fsync'd with it released, and one write
 * serves every request that was answered meanwhile (each waits until a
 * write that began after its change has ended). Writers of the files take
 * s->store_mu (after s->mu when both), so they follow each other in the
 * order their contents were taken.
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

#include "emulator/model.h"
#include "ocisbx/util.h"

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

/* The journal lines c has not written yet (into text); false when none. */
static bool journal_pending(const emu_command *c, ocisbx_buf *text)
{
    bool lost = c->output_lost && !c->lost_journaled;
    if (c->n_journaled >= c->n_events && !lost)
        return false;
    if (lost)
        ocisbx_buf_appends(text, "{\"lost\":true}\n");
    for (size_t i = c->n_journaled; i < c->n_events; i++)
        journal_line(c, &c->events[i], text);
    return true;
}

/* Appends text to the journal of the command id (fsync'd; the directory
 * too when the journal is new); with s->store_mu held, s->mu or not. */
static int journal_append(const emu_server *s, const char *id, bool exists, const ocisbx_buf *text)
{
    char *dir = ocisbx_asprintf("%s/commands", s->state_dir);
    char *path = ocisbx_asprintf("%s/commands/%s.events", s->state_dir, id);
    int rc = -1, fd = -1;
    if (dir && path && text->data && emu_mkdirs(dir) == 0)
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        if (write_all(fd, text->data, text->len) == 0 && sync_fd(s, fd) == 0 && (exists || sync_dir(s, dir) == 0))
            rc = 0;
        else if (ftruncate(fd, st.st_size) != 0) /* no torn line before the next append */
            ocisbx_log(OCISBX_LOG_WARN, "cannot cut the journal of %s back", id);
    }
    int e = errno;
    if (fd >= 0)
        close(fd);
    free(dir);
    free(path);
    errno = e;
    return rc == 0 ? 0 : ocisbx_fail(OCISBX_EIO, "cannot write the events of %s: %s", id, strerror(e));
}

/* emu_store_sync_command with s->store_mu held. */
static int sync_command_held(emu_server *s, emu_command *c)
{
    ocisbx_buf text = OCISBX_BUF_INIT;
    int rc = 0;
    if (journal_pending(c, &text)) {
        rc = journal_append(s, c->id, c->journal_exists, &text);
        if (rc == 0) {
            c->n_journaled = c->n_events;
            c->lost_journaled = c->output_lost;
            c->journal_exists = true;
        }
    }
    ocisbx_buf_free(&text);
    return rc;
}

int emu_store_sync_command(emu_server *s, emu_command *c)
{
    pthread_mutex_lock(&s->store_mu);
    int rc = sync_command_held(s, c);
    pthread_mutex_unlock(&s->store_mu);
    return rc;
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

static cJSON *snap_json(const emu_snapshot *n)
{
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
    return o;
}

static cJSON *retry_json(const emu_retry *r)
{
    cJSON *o = cJSON_CreateObject();
    put_str(o, "key", r->key);
    if (!r->done || r->cut) /* a cut one stays pending: each load settles it again */
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
    return o;
}

/* The state file's text (cJSON_free it), or NULL without memory. */
static char *state_text(emu_server *s)
{
    cJSON *root = cJSON_CreateObject();
    put_num(root, "version", 1);
    cJSON *a = cJSON_AddArrayToObject(root, "sandboxes");
    for (size_t i = 0; i < s->n_sbx; i++)
        cJSON_AddItemToArray(a, sbx_json(s, s->sbx[i]));
    a = cJSON_AddArrayToObject(root, "snapshots");
    for (size_t i = 0; i < s->n_snaps; i++)
        cJSON_AddItemToArray(a, snap_json(s->snaps[i]));
    a = cJSON_AddArrayToObject(root, "retryTokens");
    for (size_t i = 0; i < s->n_retries; i++) {
        /* An action in progress is kept only once it started a command:
         * every other action and its answer reach the file together, in one
         * write, so a token without an answer never acted durably. */
        if (s->retries[i]->done || s->retries[i]->started_cmd[0])
            cJSON_AddItemToArray(a, retry_json(s->retries[i]));
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

/* Writes the state file's text (with s->store_mu held, s->mu or not). */
static int write_state(const emu_server *s, const char *text)
{
    char *path = ocisbx_asprintf("%s/state.json", s->state_dir);
    int rc = path && write_durable(s, s->state_dir, path, text, strlen(text)) == 0
                 ? 0
                 : ocisbx_fail(OCISBX_EIO, "cannot write %s: %s", path ? path : "state.json", strerror(errno));
    free(path);
    return rc;
}

int emu_store_save(emu_server *s)
{
    char *text = state_text(s);
    if (!text)
        return ocisbx_fail_nomem();
    pthread_mutex_lock(&s->store_mu);
    int rc = write_state(s, text);
    pthread_mutex_unlock(&s->store_mu);
    cJSON_free(text);
    return rc;
}

int emu_store_sync(emu_server *s)
{
    int rc = 0;
    pthread_mutex_lock(&s->store_mu);
    for (size_t i = 0; i < s->n_sbx; i++)
        for (size_t j = 0; j < s->sbx[i]->n_cmds; j++)
            if (sync_command_held(s, s->sbx[i]->cmds[j]) != 0)
                rc = OCISBX_EIO;
    if (s->dirty) {
        s->dirty = false;
        char *text = state_text(s);
        if (!text || write_state(s, text) != 0) {
            s->dirty = true;
            rc = text ? OCISBX_EIO : ocisbx_fail_nomem();
        }
        cJSON_free(text);
    }
    pthread_mutex_unlock(&s->store_mu);
    return rc;
}

/* ---- the group commit ---- */
typedef struct batch_journal {
    emu_command *c; /* referenced until the write has ended */
    ocisbx_buf text;
    size_t from, upto; /* the events written: [from, upto) */
    bool lost_before, exists;
} batch_journal;

typedef struct batch {
    batch_journal *j;
    size_t n;
    char *state; /* NULL: unchanged */
} batch;

/* With s->mu held: what is not durable yet, taken as a batch. The journals
 * count as written from now on (a stream's own sync after this appends only
 * what follows, and waits on s->store_mu for this batch to be written). */
static int batch_take(emu_server *s, batch *b)
{
    memset(b, 0, sizeof *b);
    size_t cap = 0;
    for (size_t i = 0; i < s->n_sbx; i++)
        for (size_t k = 0; k < s->sbx[i]->n_cmds; k++) {
            emu_command *c = s->sbx[i]->cmds[k];
            ocisbx_buf text = OCISBX_BUF_INIT;
            if (!journal_pending(c, &text))
                continue;
            if (b->n == cap && EMU_GROW(b->j, b->n, cap, 16) != 0) {
                ocisbx_buf_free(&text);
                return ocisbx_fail_nomem();
            }
            batch_journal *bj = &b->j[b->n++];
            *bj = (batch_journal){c, text, c->n_journaled, c->n_events, c->lost_journaled, c->journal_exists};
            c->refs++;
            c->n_journaled = c->n_events;
            c->lost_journaled = c->output_lost;
            c->journal_exists = true;
        }
    if (s->dirty) {
        s->dirty = false;
        if (!(b->state = state_text(s))) {
            s->dirty = true;
            return ocisbx_fail_nomem();
        }
    }
    return 0;
}

/* With s->store_mu held and s->mu released: the batch written. */
static int batch_write(emu_server *s, batch *b)
{
    int rc = 0;
    for (size_t i = 0; i < b->n; i++)
        if (journal_append(s, b->j[i].c->id, b->j[i].exists, &b->j[i].text) != 0) {
            ocisbx_log(OCISBX_LOG_ERROR, "%s", ocisbx_error_message(ocisbx_error_last()));
            b->j[i].text.len = 0; /* marks the failure */
            rc = OCISBX_EIO;
        }
    if (b->state && write_state(s, b->state) != 0) {
        ocisbx_log(OCISBX_LOG_ERROR, "%s", ocisbx_error_message(ocisbx_error_last()));
        rc = OCISBX_EIO;
    }
    return rc;
}

/* With s->mu held again: a failed part is marked to be written again. */
static void batch_end(emu_server *s, batch *b, int rc)
{
    for (size_t i = 0; i < b->n; i++) {
        batch_journal *bj = &b->j[i];
        if (bj->text.len == 0 && bj->c->n_journaled == bj->upto) { /* nothing appended after it: again */
            bj->c->n_journaled = bj->from;
            bj->c->lost_journaled = bj->lost_before;
            bj->c->journal_exists = bj->exists;
        } else if (bj->text.len == 0) {
            ocisbx_log(OCISBX_LOG_ERROR, "the journal of %s misses events %zu to %zu", bj->c->id, bj->from + 1,
                       bj->upto);
        }
        ocisbx_buf_free(&bj->text);
        emu_command_unref(bj->c);
    }
    if (rc && b->state)
        s->dirty = true;
    free(b->j);
    cJSON_free(b->state);
}

void emu_store_commit(emu_server *s)
{
    /* what this request saw is in the batch taken last, or, when something
     * changed since, in the next one */
    uint64_t mine = s->taken_seq + (s->dirty ? 1 : 0);
    while (s->durable_seq < mine) {
        if (s->committing) {
            pthread_cond_wait(&s->cv, &s->mu);
            continue;
        }
        s->committing = true;
        uint64_t target = ++s->taken_seq;
        batch b;
        int rc = batch_take(s, &b);
        pthread_mutex_lock(&s->store_mu); /* before s->mu is released: the batches in order */
        pthread_mutex_unlock(&s->mu);
        if (rc == 0)
            rc = batch_write(s, &b);
        else
            ocisbx_log(OCISBX_LOG_ERROR, "%s", ocisbx_error_message(ocisbx_error_last()));
        pthread_mutex_unlock(&s->store_mu);
        pthread_mutex_lock(&s->mu);
        batch_end(s, &b, rc);
        s->durable_seq = target; /* written, or its failure logged (as a sync's) */
        s->committing = false;
        pthread_cond_broadcast(&s->cv);
    }
}

void emu_store_command_begin(emu_server *s, emu_sandbox *b, emu_command *c)
{
    emu_retry *r = emu_retry_current();
    if (r && !r->done)
        snprintf(r->started_cmd, sizeof r->started_cmd, "%s", c->id);
    s->starting_sbx = b;
    s->starting_cmd = c;
    s->dirty = true;
    if (emu_store_sync(s) != 0)
        ocisbx_log(OCISBX_LOG_ERROR, "%s", ocisbx_error_message(ocisbx_error_last()));
    s->starting_sbx = NULL;
    s->starting_cmd = NULL;
}

