/* The sandboxes of the model: records, uids and workspaces, the lifecycle
 * actions and the timed transitions (CREATING -> RUNNING, STOPPING ->
 * STOPPED, expiry), and the workspace watcher. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator/model.h"
#include "sys/proc.h"

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

int emu_sandbox_admit(emu_server *s, const char *project_id)
{
    int64_t max = s->cfg->limits.max_sandboxes, n = 0;
    if (max <= 0)
        return 0;
    for (size_t i = 0; i < s->n_sbx; i++)
        n += !strcmp(s->sbx[i]->project_id, project_id) && strcmp(s->sbx[i]->state, "DELETED");
    if (n < max)
        return 0;
    return ocisbx_fail(OCISBX_ERATELIMIT,
                       "project %s has %lld sandboxes, its limit (limits.max_sandboxes); delete one and retry",
                       project_id, (long long)n);
}

int emu_sandbox_add(emu_server *s, emu_sandbox *b, const emu_snapshot *snap)
{
    emu_new_id("sbx-", b->id, sizeof b->id);
    int64_t now = emu_now_ms();
    if (!b->display_name) {
        char t[32];
        emu_time_rfc3339(now, t);
        b->display_name = ocisbx_asprintf("sandbox-%s", t);
    }
    b->t_created = b->t_updated = now;
    b->t_expires = b->expires_in_minutes == -1 ? 0 : now + b->expires_in_minutes * s->cfg->limits.minute_ms;
    b->ready_at_ms = now + s->cfg->limits.create_delay_ms;
    b->version = 1;
    snprintf(b->state, sizeof b->state, "%s", s->cfg->limits.create_delay_ms > 0 ? "CREATING" : "RUNNING");

    char *ws = emu_workspace_dir(s, b->id);
    int64_t bytes = 0;
    char *snapdir = snap ? ocisbx_asprintf("%s/snapshots/%s", s->state_dir, snap->id) : NULL;
    int frc = !ws || (snap && !snapdir) ? -1 : snap ? emu_copytree(snapdir, ws, &bytes) : emu_mkdirs(ws);
    if (frc == 0 && geteuid() == 0) {
        /* its own uid (b is not in s->sbx yet: the others' are taken) */
        unsigned uid = emu_sandbox_uid(s, b, true);
        frc = uid ? emu_workspace_own(ws, uid) : -1;
    }
    free(snapdir);
    int rc = 0;
    if (frc != 0) {
        if (ws)
            emu_rmtree(ws);
        rc = ocisbx_fail(OCISBX_EIO, "cannot create the sandbox's workspace");
    } else if (add_sandbox(s, b) != 0) {
        emu_rmtree(ws);
        rc = ocisbx_fail_nomem();
    } else {
        emu_server_touch(s);
    }
    free(ws);
    return rc;
}

static int incorrect(const emu_sandbox *b, const char *action)
{
    return ocisbx_fail(OCISBX_ECONFLICT, "cannot %s sandbox %s in state %s", action, b->id, b->state);
}

static void begin_stop(emu_server *s, emu_sandbox *b, bool force, const char *details)
{
    set_state(b, "STOPPING", details);
    b->stopped_at_ms = emu_now_ms() + s->cfg->limits.stop_delay_ms;
    emu_commands_terminate(s, b, force ? 0 : OCISBX_PROC_TIMEOUT_GRACE_MS, true);
    emu_server_touch(s);
}

int emu_sandbox_stop(emu_server *s, emu_sandbox *b, bool force)
{
    if (strcmp(b->state, "RUNNING") && strcmp(b->state, "SUSPENDED"))
        return incorrect(b, "stop");
    begin_stop(s, b, force, force ? "stopped (forced)" : "stopped");
    return 0;
}

int emu_sandbox_suspend(emu_server *s, emu_sandbox *b)
{
    if (strcmp(b->state, "RUNNING"))
        return incorrect(b, "suspend");
    emu_commands_signal(b, SIGSTOP);
    set_state(b, "SUSPENDED", NULL);
    emu_server_touch(s);
    return 0;
}

int emu_sandbox_resume(emu_server *s, emu_sandbox *b)
{
    if (strcmp(b->state, "SUSPENDED"))
        return incorrect(b, "resume");
    emu_commands_signal(b, SIGCONT);
    set_state(b, "RUNNING", NULL);
    emu_server_touch(s);
    return 0;
}

int emu_sandbox_extend(emu_server *s, emu_sandbox *b, int64_t ms, const char *dur)
{
    if (strcmp(b->state, "RUNNING"))
        return incorrect(b, "extend");
    if (b->t_expires == 0)
        return ocisbx_fail(OCISBX_ECONFLICT, "sandbox %s does not expire (expiresInMinutes -1): nothing to extend",
                           b->id);
    int64_t minute = s->cfg->limits.minute_ms;
    int64_t limit = b->t_created + s->cfg->limits.max_lifetime_minutes * minute;
    ms = ms / 60000 * minute + (ms % 60000) * minute / 60000;
    if (b->t_expires + ms > limit) {
        char t[32];
        emu_time_rfc3339(limit, t);
        return ocisbx_fail(OCISBX_EINVAL,
                           "extending by %s would pass the maximum lifetime of %lld minutes from creation (%s)", dur,
                           (long long)s->cfg->limits.max_lifetime_minutes, t);
    }
    b->t_expires += ms;
    b->expires_in_minutes = (b->t_expires - b->t_created + minute - 1) / minute;
    b->t_updated = emu_now_ms();
    b->version++;
    emu_server_touch(s);
    return 0;
}

void emu_sandbox_rename(emu_server *s, emu_sandbox *b, const char *name)
{
    if (name) {
        char *n = ocisbx_strdup(name);
        if (n) {
            free(b->display_name);
            b->display_name = n;
        }
    }
    b->t_updated = emu_now_ms();
    b->version++;
    emu_server_touch(s);
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

/* The workspace watcher: the workspaces of the sandboxes that run commands
 * are measured without the lock (each walk bounded by EMU_WS_MAX_ENTRIES);
 * a workspace over its shape's limit that grew since the last measure has
 * its running commands stopped (KILL to each tree), each reported FAILED
 * without an exit code and with EMU_WS_STOPPED_FMT on its stderr. A
 * workspace that shrinks (a command removing files) is left alone. */
void emu_workspace_watch(emu_server *s)
{
    typedef struct {
        char id[32];
        char *ws;
        int64_t limit;
        int64_t use;
    } item;
    item *it = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < s->n_sbx; i++) {
        emu_sandbox *b = s->sbx[i];
        const struct emu_shape_limits *sl = emu_shape_limits(s->cfg, b->shape);
        if (!sl || sl->workspace_mib <= 0 || strcmp(b->state, "RUNNING") || !emu_commands_active(b))
            continue;
        if (EMU_GROW(it, n, cap, 8) != 0)
            break;
        snprintf(it[n].id, sizeof it[n].id, "%s", b->id);
        it[n].ws = emu_workspace_dir(s, b->id);
        it[n].limit = sl->workspace_mib << 20;
        it[n].use = -1;
        n++;
    }
    if (!n) {
        free(it);
        return;
    }
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < n; i++)
        if (it[i].ws)
            it[i].use = emu_tree_use(it[i].ws, EMU_WS_MAX_ENTRIES, NULL);
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < n; i++) {
        emu_sandbox *b = emu_sandbox_find(s, it[i].id);
        free(it[i].ws);
        if (!b || it[i].use < 0)
            continue;
        int64_t prev = b->ws_last_use;
        b->ws_last_use = it[i].use;
        if (it[i].use <= it[i].limit || it[i].use <= prev)
            continue;
        ocisbx_log(OCISBX_LOG_INFO,
                   "sandbox %s: the workspace holds %lld bytes, over its limit of %lld: "
                   "stopping its commands",
                   b->id, (long long)it[i].use, (long long)it[i].limit);
        for (size_t j = 0; j < b->n_cmds; j++) {
            emu_command *c = b->cmds[j];
            if (c->finished || !c->proc)
                continue;
            c->ws_over = true;
            if (c->ws_limit_mib <= 0) { /* started before the limit was known (older state) */
                c->ws_limit_mib = it[i].limit >> 20;
                snprintf(c->shape, sizeof c->shape, "%s", b->shape);
            }
            ocisbx_proc_terminate(c->proc, 0);
        }
    }
    free(it);
}
