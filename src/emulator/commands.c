/* Commands: start through the runner, record every event with its seq,
 * answer run/runAndWait/runAndStream/get/list/output/events/cancel. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/emu.h"
#include "util/utf8.h"
#include "sys/proc.h"
#include "ocisbx/util.h"

/* The server the runner callbacks report to: one per process. */
static emu_server *g_srv;

emu_command *emu_command_find(emu_sandbox *b, const char *id)
{
    for (size_t i = 0; i < b->n_cmds; i++)
        if (!strcmp(b->cmds[i]->id, id))
            return b->cmds[i];
    return NULL;
}

void emu_command_free(emu_command *c)
{
    if (!c)
        return;
    free(c->command);
    for (size_t i = 0; i < c->n_args; i++)
        free(c->args[i]);
    free(c->args);
    free(c->cwd);
    emu_env_free(c->env, c->n_env);
    free(c->timeout);
    for (size_t i = 0; i < c->n_events; i++)
        free(c->events[i].data);
    free(c->events);
    free(c);
}

void emu_command_unref(emu_command *c)
{
    if (c && --c->refs <= 0)
        emu_command_free(c);
}

emu_event *emu_command_add_event(emu_command *c, int kind)
{
    if (EMU_GROW(c->events, c->n_events, c->cap_events, 16) != 0)
        return NULL;
    emu_event *e = &c->events[c->n_events++];
    memset(e, 0, sizeof *e);
    e->seq = (int64_t)c->n_events;
    e->ts_ms = emu_now_ms();
    e->kind = kind;
    e->exit_code = -1;
    return e;
}

/* Length of an incomplete UTF-8 sequence at the end of data (0..3). */
static size_t incomplete_tail(const unsigned char *d, size_t len)
{
    for (size_t k = 1; k <= 3 && k <= len; k++) {
        unsigned char c = d[len - k];
        if ((c & 0xC0) == 0x80)
            continue;
        size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
        return need > k ? k : 0;
    }
    return 0;
}

static void record_chunk(emu_server *s, emu_command *c, int stream, const char *data, size_t len, bool flush)
{
    int si = stream == 2 ? 1 : 0;
    ocisbx_buf raw = OCISBX_BUF_INIT;
    ocisbx_buf_append(&raw, c->utf8_tail[si], c->utf8_tail_len[si]);
    ocisbx_buf_append(&raw, data, len);
    size_t keep = flush ? 0 : incomplete_tail((const unsigned char *)raw.data, raw.len);
    memcpy(c->utf8_tail[si], raw.data + raw.len - keep, keep);
    c->utf8_tail_len[si] = keep;
    size_t use = raw.len - keep;
    if (use == 0) {
        ocisbx_buf_free(&raw);
        return;
    }
    emu_event *e = emu_command_add_output_event(c, stream == 2 ? EMU_EV_STDERR : EMU_EV_STDOUT);
    if (e && !c->output_lost) {
        ocisbx_buf clean = OCISBX_BUF_INIT;
        ocisbx_utf8_sanitize(raw.data, use, &clean); /* invalid bytes become U+FFFD */
        e->len = clean.len;
        e->data = ocisbx_buf_detach(&clean);
    }
    ocisbx_buf_free(&raw);
    (void)s;
}

static void on_output(int stream, const char *data, size_t len, void *ud)
{
    emu_command *c = ud;
    emu_server *s = g_srv;
    pthread_mutex_lock(&s->mu);
    c->output_bytes += (int64_t)len;
    if (!c->output_lost && c->output_bytes > s->cfg->limits.output_loss_bytes) {
        /* Like the service: past the limit, the whole output is gone. */
        c->output_lost = true;
        for (size_t i = 0; i < c->n_events; i++) {
            free(c->events[i].data);
            c->events[i].data = NULL;
            c->events[i].len = 0;
        }
    }
    record_chunk(s, c, stream, data, len, false);
    c->t_updated = emu_now_ms();
    pthread_cond_broadcast(&s->cv);
    s->dirty = true;
    pthread_mutex_unlock(&s->mu);
}

static void finish(emu_server *s, emu_command *c, const char *state, int exit_code)
{
    for (int st = 1; st <= 2; st++)
        if (c->utf8_tail_len[st - 1])
            record_chunk(s, c, st, "", 0, true);
    snprintf(c->state, sizeof c->state, "%s", state);
    c->exit_code = exit_code;
    c->t_finished = c->t_updated = emu_now_ms();
    emu_event *e = emu_command_add_event(c, EMU_EV_FINISHED);
    if (e)
        e->exit_code = exit_code;
    c->finished = true;
    emu_server_touch(s);
}

static void on_exit_cb(int exit_code, int term_signal, bool timed_out, void *ud)
{
    emu_command *c = ud;
    emu_server *s = g_srv;
    pthread_mutex_lock(&s->mu);
    bool fsize = c->ws_limit_mib > 0 && (term_signal == SIGXFSZ || exit_code == 128 + SIGXFSZ);
    if ((c->ws_over || fsize) && !timed_out && !c->cancel_requested && !c->stop_requested && !s->stopping) {
        /* the workspace watcher stopped it, or a file reached the limit */
        char *msg = ocisbx_asprintf(EMU_WS_STOPPED_FMT, (long long)c->ws_limit_mib, c->shape);
        if (msg)
            record_chunk(s, c, 2, msg, strlen(msg), true);
        free(msg);
        finish(s, c, "FAILED", -1);
    } else if (timed_out)
        finish(s, c, "TIMED_OUT", -1);
    else if (c->cancel_requested || c->stop_requested)
        finish(s, c, "CANCELED", -1);
    else if (s->stopping)
        finish(s, c, "FAILED", -1);
    else if (exit_code >= 0)
        finish(s, c, exit_code == 0 ? "SUCCEEDED" : "FAILED", exit_code);
    else if (term_signal > 0) /* not the emulator's kill: the shell convention, as bwrap's init reports it */
        finish(s, c, "FAILED", 128 + term_signal);
    else
        finish(s, c, "FAILED", -1);
    pthread_mutex_unlock(&s->mu);
}

bool emu_commands_active(const emu_sandbox *b)
{
    for (size_t i = 0; i < b->n_cmds; i++)
        if (!b->cmds[i]->finished)
            return true;
    return false;
}

void emu_commands_terminate(emu_server *s, emu_sandbox *b, int grace_ms, bool stop)
{
    (void)s;
    for (size_t i = 0; i < b->n_cmds; i++) {
        emu_command *c = b->cmds[i];
        if (c->finished || !c->proc)
            continue;
        if (stop)
            c->stop_requested = true;
        ocisbx_proc_terminate(c->proc, grace_ms);
    }
}

void emu_commands_signal(emu_sandbox *b, int sig)
{
    for (size_t i = 0; i < b->n_cmds; i++)
        if (!b->cmds[i]->finished && b->cmds[i]->proc)
            ocisbx_proc_signal(b->cmds[i]->proc, sig);
}

/* SandboxCommand, or SandboxCommandSummary (summary: no
 * environmentVariables, no output). The public attribute list has no
 * lifecycle state and no timeout: neither is sent (c->state is the
 * emulator's own bookkeeping). */
cJSON *emu_command_json(const emu_server *s, const emu_command *c, bool summary)
{
    (void)s;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", c->id);
    cJSON_AddStringToObject(o, "sandboxId", c->sandbox_id);
    cJSON_AddStringToObject(o, "command", c->command);
    cJSON *args = cJSON_AddArrayToObject(o, "args");
    for (size_t i = 0; i < c->n_args; i++)
        cJSON_AddItemToArray(args, cJSON_CreateString(c->args[i]));
    cJSON_AddStringToObject(o, "cwd", c->cwd);
    /* names only: values are secrets and never echoed */
    if (!summary)
        cJSON_AddItemToObject(o, "environmentVariables", emu_env_names_json(c->env, c->n_env));
    if (c->finished && c->exit_code >= 0)
        cJSON_AddNumberToObject(o, "exitCode", c->exit_code);
    emu_json_add_time(o, "timeCreated", c->t_created);
    emu_json_add_time(o, "timeStarted", c->t_started);
    emu_json_add_time(o, "timeFinished", c->t_finished);
    emu_json_add_time(o, "timeUpdated", c->t_updated);
    return o;
}

static const char *kind_name(int k)
{
    return k == EMU_EV_STARTED  ? "STARTED"
           : k == EMU_EV_STDOUT ? "STDOUT"
           : k == EMU_EV_STDERR ? "STDERR"
                                : "FINISHED";
}

cJSON *emu_event_json(const emu_server *s, const emu_command *c, const emu_event *e)
{
    (void)s;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "commandId", c->id);
    cJSON_AddNumberToObject(o, "seq", (double)e->seq);
    char t[32];
    emu_time_rfc3339(e->ts_ms, t);
    cJSON_AddStringToObject(o, "timestamp", t);
    cJSON_AddStringToObject(o, "event", kind_name(e->kind));
    if (e->kind == EMU_EV_STDOUT || e->kind == EMU_EV_STDERR)
        emu_json_add_bytes(o, "data", (e->data && !c->output_lost) ? e->data : "",
                           (e->data && !c->output_lost) ? e->len : 0);
    if (e->kind == EMU_EV_FINISHED && e->exit_code >= 0)
        cJSON_AddNumberToObject(o, "exitCode", e->exit_code);
    return o;
}

cJSON *emu_command_output_json(const emu_server *s, const emu_command *c, int64_t from_seq)
{
    (void)s;
    ocisbx_buf out = OCISBX_BUF_INIT, err = OCISBX_BUF_INIT;
    int64_t last = from_seq - 1;
    for (size_t i = 0; i < c->n_events; i++) {
        const emu_event *e = &c->events[i];
        if (e->seq < from_seq)
            continue;
        last = e->seq;
        if (c->output_lost || !e->data)
            continue;
        if (e->kind == EMU_EV_STDOUT)
            ocisbx_buf_append(&out, e->data, e->len);
        else if (e->kind == EMU_EV_STDERR)
            ocisbx_buf_append(&err, e->data, e->len);
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "commandId", c->id);
    if (c->finished && c->exit_code >= 0)
        cJSON_AddNumberToObject(o, "exitCode", c->exit_code);
    emu_json_add_bytes(o, "stdout", out.data ? out.data : "", out.len);
    emu_json_add_bytes(o, "stderr", err.data ? err.data : "", err.len);
    cJSON_AddNumberToObject(o, "lastSeq", (double)(last < 0 ? 0 : last));
    ocisbx_buf_free(&out);
    ocisbx_buf_free(&err);
    return o;
}

static char **merge_env(const emu_sandbox *b, const emu_command *c)
{
    size_t n = b->n_env + c->n_env;
    char **envp = calloc(n + 1, sizeof(char *));
    if (!envp)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < b->n_env; i++) {
        bool overridden = false;
        for (size_t j = 0; j < c->n_env; j++)
            overridden = overridden || !strcmp(c->env[j].name, b->env[i].name);
        if (!overridden)
            envp[k++] = ocisbx_asprintf("%s=%s", b->env[i].name, b->env[i].value);
    }
    for (size_t j = 0; j < c->n_env; j++)
        envp[k++] = ocisbx_asprintf("%s=%s", c->env[j].name, c->env[j].value);
    return envp;
}

static void free_envp(char **envp)
{
    for (size_t i = 0; envp && envp[i]; i++)
        ocisbx_free_secret(envp[i]);
    free(envp);
}

static int add_command(emu_sandbox *b, emu_command *c)
{
    if (EMU_GROW(b->cmds, b->n_cmds, b->cap_cmds, 8) != 0)
        return -1;
    b->cmds[b->n_cmds++] = c;
    return 0;
}

int emu_command_start(emu_server *s, emu_sandbox *b, const cJSON *details, emu_command **out, emu_response *resp)
{
    *out = NULL;
    g_srv = s;
    const char *command = NULL, *cwd = NULL, *timeout = NULL;
    emu_command *c = calloc(1, sizeof *c);
    if (!c)
        return emu_error(resp, 500, "InternalServerError", "out of memory"), -1;
    c->refs = 1;
    c->exit_code = -1;
    if (emu_json_only(details, "RunSandboxCommandDetails", "command args cwd environmentVariables timeout", resp) ||
        emu_json_str(details, "command", &command, resp) || emu_json_str(details, "cwd", &cwd, resp) ||
        emu_json_str(details, "timeout", &timeout, resp) ||
        emu_json_env(details, "environmentVariables", &c->env, &c->n_env, resp))
        goto fail;
    if (!command || !*command) {
        emu_error(resp, 400, "InvalidParameter", "command is required");
        goto fail;
    }
    if (cwd && cwd[0] != '/') {
        emu_error(resp, 400, "InvalidParameter", "cwd must be an absolute path, not %s", cwd);
        goto fail;
    }
    if (timeout && (ocisbx_duration_parse(timeout, &c->timeout_ms) != 0 || c->timeout_ms <= 0)) {
        emu_error(resp, 400, "InvalidParameter", "timeout must be a positive ISO 8601 duration like PT2M, not %s",
                  timeout);
        goto fail;
    }
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(details, "args");
    if (args && !cJSON_IsNull(args)) {
        if (!cJSON_IsArray(args)) {
            emu_error(resp, 400, "InvalidParameter", "args must be a list of strings");
            goto fail;
        }
        c->args = calloc((size_t)cJSON_GetArraySize(args) + 1, sizeof(char *));
        const cJSON *it;
        cJSON_ArrayForEach(it, args)
        {
            if (!cJSON_IsString(it)) {
                emu_error(resp, 400, "InvalidParameter", "args[%zu] must be a string", c->n_args);
                goto fail;
            }
            c->args[c->n_args++] = ocisbx_strdup(it->valuestring);
        }
    }
    ocisbx_buf sh = OCISBX_BUF_INIT;
    ocisbx_buf_appends(&sh, command);
    for (size_t i = 0; i < c->n_args; i++) {
        char *q = NULL;
        if (ocisbx_shell_quote(c->args[i], strlen(c->args[i]), &q) != 0) {
            ocisbx_buf_free(&sh);
            emu_error(resp, 400, "InvalidParameter", "args[%zu] cannot be passed to a shell", i);
            goto fail;
        }
        ocisbx_buf_appends(&sh, " ");
        ocisbx_buf_appends(&sh, q);
        ocisbx_free(q);
    }
    emu_new_id("cmd-", c->id, sizeof c->id);
    snprintf(c->sandbox_id, sizeof c->sandbox_id, "%s", b->id);
    c->command = ocisbx_strdup(command);
    c->cwd = ocisbx_strdup(cwd ? cwd : "/workspace");
    c->timeout = timeout ? ocisbx_strdup(timeout) : NULL;
    snprintf(c->state, sizeof c->state, "ACCEPTED");
    c->t_created = c->t_updated = emu_now_ms();

    const emu_project *proj = emu_config_project(s->cfg, b->project_id);
    char *ws = emu_workspace_dir(s, b->id);
    unsigned uid = s->isolate ? emu_sandbox_uid(s, b, true) : 0;
    if (ws && uid && emu_workspace_own(ws, uid) != 0) /* a state directory of an older version */
        ocisbx_log(OCISBX_LOG_WARN, "cannot give the workspace of %s to uid %u: %s", b->id, uid, strerror(errno));
    char **envp = merge_env(b, c);
    ocisbx_proc_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.workspace_dir = ws;
    spec.cwd = c->cwd;
    spec.shell_command = sh.data;
    spec.envp = (const char *const *)envp;
    spec.allow_network = proj ? proj->allow_network : false;
    spec.isolate = s->isolate;
    spec.timeout_ms = c->timeout_ms;
    const struct emu_shape_limits *sl = emu_shape_limits(s->cfg, b->shape);
    if (sl && s->isolate) { /* limits of the shape, per process (src/sys/proc.h) */
        spec.memory_limit_bytes = (uint64_t)sl->memory_mib << 20;
        spec.max_processes = (int)sl->processes;
        /* no single file past the workspace's limit (SIGXFSZ, reported as the
         * limit in on_exit_cb); the watcher measures the whole tree */
        spec.max_file_bytes = (uint64_t)sl->workspace_mib << 20;
    }
    if (sl) {
        c->ws_limit_mib = sl->workspace_mib;
        snprintf(c->shape, sizeof c->shape, "%s", b->shape);
    }
    emu_store_command_begin(s, b, c); /* recorded (with its retry token) before it runs */
    c->refs++;                        /* the process's reference, dropped when the ticker frees it */
    int rc = ocisbx_proc_start(&spec, on_output, on_exit_cb, c, &c->proc);
    free_envp(envp);
    free(ws);
    ocisbx_buf_free(&sh);
    if (rc == OCISBX_EINVAL) {
        c->refs--;
        emu_error(resp, 400, "InvalidParameter", "%s", ocisbx_error_message(ocisbx_error_last()));
        goto fail;
    }
    if (add_command(b, c) != 0) {
        if (c->proc)
            ocisbx_proc_terminate(c->proc, 0);
        emu_error(resp, 500, "InternalServerError", "out of memory");
        return -1; /* the process reference keeps c until it is reaped */
    }
    if (rc != 0) {
        c->refs--;
        c->proc = NULL;
        ocisbx_log(OCISBX_LOG_WARN, "command %s failed to start: %s", c->id,
                   ocisbx_error_message(ocisbx_error_last()));
        finish(s, c, "FAILED", -1);
    } else {
        snprintf(c->state, sizeof c->state, "RUNNING");
        c->t_started = emu_now_ms();
        /* on_output waits for s->mu, so STARTED is always seq 1 */
        emu_command_add_event(c, EMU_EV_STARTED);
        if (!strcmp(b->state, "SUSPENDED"))
            ocisbx_proc_signal(c->proc, SIGSTOP);
    }
    emu_server_touch(s);
    *out = c;
    return 0;
fail:
    emu_command_free(c);
    return -1;
}

static emu_stream *new_stream(const emu_request *req, emu_command *c, int64_t from, int64_t until)
{
    emu_stream *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->cmd = c;
    c->refs++;
    st->next_seq = from;
    st->until_seq = until;
    const char *accept = emu_request_header(req, "accept");
    st->ndjson = accept && strstr(accept, "application/x-ndjson") != NULL;
    return st;
}

void emu_stream_free(emu_stream *st)
{
    if (!st)
        return;
    emu_command_unref(st->cmd);
    free(st);
}

int emu_stream_next(emu_server *s, emu_stream *st, ocisbx_buf *out)
{
    emu_command *c = st->cmd;
    while ((size_t)st->next_seq <= c->n_events && out->len < 65536) {
        if (st->until_seq > 0 && st->next_seq > st->until_seq)
            return 1;
        cJSON *j = emu_event_json(s, c, &c->events[st->next_seq - 1]);
        char *text = cJSON_PrintUnformatted(j);
        cJSON_Delete(j);
        if (st->ndjson)
            ocisbx_buf_appendf(out, "%s\n", text ? text : "{}");
        else
            ocisbx_buf_appendf(out, "data: %s\n\n", text ? text : "{}");
        cJSON_free(text);
        st->next_seq++;
        st->sent++;
        if (st->cut_after > 0 && st->sent >= st->cut_after)
            return -1;
    }
    if (st->until_seq > 0 && st->next_seq > st->until_seq)
        return 1;
    if (c->finished && (size_t)st->next_seq > c->n_events)
        return 1;
    if (s->stopping)
        return 1;
    return 0;
}

static int parse_seq(const emu_request *req, emu_response *resp, const char *name, int64_t dflt, int64_t *out)
{
    bool bad = false;
    char *v = emu_query_get(req->query, name, &bad);
    *out = dflt;
    if (!v && !bad)
        return 0;
    char *end = NULL;
    long long x = v ? strtoll(v, &end, 10) : -1;
    int rc = 0;
    /* Sequence numbers start at 1; 0 simply means "from the start". */
    if (bad || !v || !*v || *end || x < 0) {
        emu_error(resp, 400, "InvalidParameter", "%s must be a non-negative integer", name);
        rc = -1;
    } else {
        *out = x;
    }
    free(v);
    return rc;
}

static void start_stream(emu_response *resp, const emu_request *req, emu_command *c, int64_t from, int64_t until)
{
    resp->stream = new_stream(req, c, from, until);
    resp->status = 200;
    ocisbx_buf_clear(&resp->body);
    snprintf(resp->content_type, sizeof resp->content_type, "%s",
             resp->stream && resp->stream->ndjson ? "application/x-ndjson" : "text/event-stream");
    emu_response_header(resp, "cache-control", "no-cache");
}

/* The sort key of a command: a time (0 when not yet set sorts first). */
static int g_sort_key; /* 0 timeCreated, 1 timeStarted, 2 timeFinished; set under s->mu */

static int64_t sort_time(const emu_command *c)
{
    return g_sort_key == 1 ? c->t_started : g_sort_key == 2 ? c->t_finished : c->t_created;
}

static int cmp_commands(const void *a, const void *b)
{
    const emu_command *x = *(emu_command *const *)a, *y = *(emu_command *const *)b;
    int64_t tx = sort_time(x), ty = sort_time(y);
    if (tx != ty)
        return tx < ty ? -1 : 1;
    if (x->t_created != y->t_created)
        return x->t_created < y->t_created ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* ListSandboxCommands: commandId, sortBy (timeCreated, timeStarted,
 * timeFinished), sortOrder (ASC, DESC; default ASC [decided]), limit, page.
 * Items are SandboxCommandSummary. */
static void list_commands(emu_server *s, const emu_request *req, emu_sandbox *b, emu_response *resp)
{
    bool bad = false;
    char *f_id = emu_query_get(req->query, "commandId", &bad);
    char *sort_by = emu_query_get(req->query, "sortBy", &bad);
    char *sort_order = emu_query_get(req->query, "sortOrder", &bad);
    emu_command **sel = NULL;
    size_t offset, limit;
    if (bad) {
        emu_error(resp, 400, "InvalidParameter", "malformed percent-encoding in the query");
        goto out;
    }
    if (sort_by && strcmp(sort_by, "timeCreated") && strcmp(sort_by, "timeStarted") &&
        strcmp(sort_by, "timeFinished")) {
        emu_error(resp, 400, "InvalidParameter", "sortBy must be timeCreated, timeStarted or timeFinished");
        goto out;
    }
    if (sort_order && strcmp(sort_order, "ASC") && strcmp(sort_order, "DESC")) {
        emu_error(resp, 400, "InvalidParameter", "sortOrder must be ASC or DESC");
        goto out;
    }
    if (emu_page_params(req, resp, &offset, &limit))
        goto out;
    sel = calloc(b->n_cmds + 1, sizeof *sel);
    if (!sel) {
        emu_error(resp, 500, "InternalServerError", "out of memory");
        goto out;
    }
    size_t n = 0;
    for (size_t i = 0; i < b->n_cmds; i++)
        if (!f_id || !strcmp(b->cmds[i]->id, f_id))
            sel[n++] = b->cmds[i];
    g_sort_key = !sort_by ? 0 : !strcmp(sort_by, "timeStarted") ? 1 : !strcmp(sort_by, "timeFinished") ? 2 : 0;
    qsort(sel, n, sizeof *sel, cmp_commands);
    if (sort_order && !strcmp(sort_order, "DESC"))
        for (size_t i = 0; i < n / 2; i++) {
            emu_command *t = sel[i];
            sel[i] = sel[n - 1 - i];
            sel[n - 1 - i] = t;
        }
    cJSON *o = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(o, "items");
    for (size_t i = offset; i < n && i < offset + limit; i++)
        cJSON_AddItemToArray(items, emu_command_json(s, sel[i], true));
    emu_page_next(resp, offset, limit, n);
    emu_json(resp, 200, o);
out:
    free(sel);
    free(f_id);
    free(sort_by);
    free(sort_order);
}

void emu_h_command(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_sandbox *b = emu_sandbox_find(s, rt->sandbox_id);
    if (!b) {
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "sandbox %s not found or not authorized", rt->sandbox_id);
        return;
    }
    cJSON *body = NULL;
    emu_command *c = NULL;
    switch (rt->id) {
    case EMU_R_COMMAND_RUN:
    case EMU_R_COMMAND_RUN_WAIT:
    case EMU_R_COMMAND_RUN_STREAM:
        if (emu_body_json(req, resp, &body))
            break;
        if (strcmp(b->state, "RUNNING")) {
            emu_error(resp, 409, "IncorrectState", "cannot run a command in sandbox %s in state %s", b->id, b->state);
            break;
        }
        if (emu_command_start(s, b, body, &c, resp))
            break;
        if (rt->id == EMU_R_COMMAND_RUN) {
            /* SandboxCommandIdentifier [public]: the id only */
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "id", c->id);
            emu_json(resp, 200, o);
        } else if (rt->id == EMU_R_COMMAND_RUN_WAIT) {
            while (!c->finished && !s->stopping)
                pthread_cond_wait(&s->cv, &s->mu);
            cJSON *o = emu_command_json(s, c, false);
            cJSON_AddItemToObject(o, "output", emu_command_output_json(s, c, 1));
            emu_json(resp, 200, o);
        } else {
            start_stream(resp, req, c, 1, 0);
        }
        break;
    case EMU_R_COMMAND_LIST: list_commands(s, req, b, resp); break;
    default: {
        c = emu_command_find(b, rt->command_id);
        if (!c) {
            emu_error(resp, 404, "NotAuthorizedOrNotFound", "command %s not found in sandbox %s", rt->command_id,
                      b->id);
            break;
        }
        int64_t from = 1, until = 0;
        if (rt->id == EMU_R_COMMAND_GET) {
            emu_json(resp, 200, emu_command_json(s, c, false));
        } else if (rt->id == EMU_R_COMMAND_OUTPUT) {
            if (parse_seq(req, resp, "fromSeq", 1, &from) == 0)
                emu_json(resp, 200, emu_command_output_json(s, c, from));
        } else if (rt->id == EMU_R_COMMAND_EVENTS) {
            if (parse_seq(req, resp, "fromSeq", 1, &from) == 0 && parse_seq(req, resp, "untilSeq", 0, &until) == 0) {
                if (until > 0 && until < from)
                    emu_error(resp, 400, "InvalidParameter", "untilSeq %lld is below fromSeq %lld", (long long)until,
                              (long long)from);
                else
                    start_stream(resp, req, c, from, until);
            }
        } else if (rt->id == EMU_R_COMMAND_CANCEL) {
            if (emu_body_json(req, resp, &body) || emu_json_only(body, "CancelSandboxCommandDetails", "", resp))
                break;
            if (c->finished) {
                emu_error(resp, 409, "IncorrectState", "command %s has already finished (%s)", c->id, c->state);
                break;
            }
            c->cancel_requested = true;
            if (c->proc)
                ocisbx_proc_terminate(c->proc, OCISBX_PROC_TIMEOUT_GRACE_MS);
            emu_server_touch(s);
            resp->status = 202;
        }
        break;
    }
    }
    cJSON_Delete(body);
}

/* A stream replayed for a retried runAndStream (same opc-retry-token). */
int emu_command_replay_stream(emu_server *s, const emu_request *req, const char *command_id, emu_response *resp)
{
    for (size_t i = 0; i < s->n_sbx; i++) {
        emu_command *c = emu_command_find(s->sbx[i], command_id);
        if (c) {
            start_stream(resp, req, c, 1, 0);
            return 0;
        }
    }
    return -1;
}
