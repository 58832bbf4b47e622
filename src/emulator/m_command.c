/* The commands of the model: start through the runner (src/sys/proc.h),
 * record every event with its seq, finish, cancel and terminate. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/model.h"
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

emu_command *emu_command_find_any(emu_server *s, const char *id)
{
    for (size_t i = 0; i < s->n_sbx; i++) {
        emu_command *c = emu_command_find(s->sbx[i], id);
        if (c)
            return c;
    }
    return NULL;
}

emu_command *emu_command_new(void)
{
    emu_command *c = calloc(1, sizeof *c);
    if (c) {
        c->refs = 1;
        c->exit_code = -1;
    }
    return c;
}

/* "command 'arg' 'arg'...": what the runner's shell runs. */
static int shell_line(const emu_command *c, ocisbx_buf *sh)
{
    ocisbx_buf_appends(sh, c->command);
    for (size_t i = 0; i < c->n_args; i++) {
        char *q = NULL;
        if (ocisbx_shell_quote(c->args[i], strlen(c->args[i]), &q) != 0)
            return ocisbx_fail(OCISBX_EINVAL, "args[%zu] cannot be passed to a shell", i);
        ocisbx_buf_appends(sh, " ");
        ocisbx_buf_appends(sh, q);
        ocisbx_free(q);
    }
    return 0;
}

/* The runner's spec of c in b (its workspace, network, shape limits). */
static void fill_spec(emu_server *s, emu_sandbox *b, emu_command *c, ocisbx_proc_spec *spec)
{
    const emu_project *proj = emu_config_project(s->cfg, b->project_id);
    memset(spec, 0, sizeof *spec);
    spec->cwd = c->cwd;
    spec->allow_network = proj ? proj->allow_network : false;
    spec->isolate = s->isolate;
    spec->timeout_ms = c->timeout_ms;
    const struct emu_shape_limits *sl = emu_shape_limits(s->cfg, b->shape);
    if (sl && s->isolate) { /* limits of the shape, per process (src/sys/proc.h) */
        spec->memory_limit_bytes = (uint64_t)sl->memory_mib << 20;
        spec->max_processes = (int)sl->processes;
        /* no single file past the workspace's limit (SIGXFSZ, reported as the
         * limit in on_exit_cb); the watcher measures the whole tree */
        spec->max_file_bytes = (uint64_t)sl->workspace_mib << 20;
    }
    if (sl) {
        c->ws_limit_mib = sl->workspace_mib;
        snprintf(c->shape, sizeof c->shape, "%s", b->shape);
    }
}

int emu_command_launch(emu_server *s, emu_sandbox *b, emu_command *c)
{
    g_srv = s;
    ocisbx_buf sh = OCISBX_BUF_INIT;
    if (shell_line(c, &sh) != 0) {
        ocisbx_buf_free(&sh);
        emu_command_free(c);
        return OCISBX_EINVAL;
    }
    emu_new_id("cmd-", c->id, sizeof c->id);
    snprintf(c->sandbox_id, sizeof c->sandbox_id, "%s", b->id);
    snprintf(c->state, sizeof c->state, "ACCEPTED");
    c->t_created = c->t_updated = emu_now_ms();

    char *ws = emu_workspace_dir(s, b->id);
    unsigned uid = s->isolate ? emu_sandbox_uid(s, b, true) : 0;
    if (ws && uid && emu_workspace_own(ws, uid) != 0) /* a state directory of an older version */
        ocisbx_log(OCISBX_LOG_WARN, "cannot give the workspace of %s to uid %u: %s", b->id, uid, strerror(errno));
    char **envp = merge_env(b, c);
    ocisbx_proc_spec spec;
    fill_spec(s, b, c, &spec);
    spec.workspace_dir = ws;
    spec.shell_command = sh.data;
    spec.envp = (const char *const *)envp;
    emu_store_command_begin(s, b, c); /* recorded (with its retry token) before it runs */
    c->refs++;                        /* the process's reference, dropped when the ticker frees it */
    int rc = ocisbx_proc_start(&spec, on_output, on_exit_cb, c, &c->proc);
    free_envp(envp);
    free(ws);
    ocisbx_buf_free(&sh);
    if (rc == OCISBX_EINVAL) {
        emu_command_free(c); /* its message stays the thread's error */
        return OCISBX_EINVAL;
    }
    if (add_command(b, c) != 0) {
        if (c->proc)
            ocisbx_proc_terminate(c->proc, 0);
        else
            emu_command_free(c);
        return ocisbx_fail_nomem(); /* the process reference keeps c until it is reaped */
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
    return 0;
}

int emu_command_cancel(emu_server *s, emu_command *c)
{
    if (c->finished)
        return ocisbx_fail(OCISBX_ECONFLICT, "command %s has already finished (%s)", c->id, c->state);
    c->cancel_requested = true;
    if (c->proc)
        ocisbx_proc_terminate(c->proc, OCISBX_PROC_TIMEOUT_GRACE_MS);
    emu_server_touch(s);
    return 0;
}
