/* The emulator's state holder: creation (loading the state directory), the
 * ticker thread that drives timed transitions and frees finished processes,
 * and the orderly shutdown. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emulator/model.h"
#include "emulator/throttle.h"
#include "sys/proc.h"
#include "sys/sleep.h"

#define TICK_MS 50
#define SAVE_EVERY_MS 250

int emu_server_new(emu_config *cfg, const char *state_dir, const char *api_version, bool isolate, emu_server **out)
{
    *out = NULL;
    emu_server *s = calloc(1, sizeof *s);
    if (!s)
        return ocisbx_fail_nomem();
    s->cfg = cfg;
    s->state_dir = ocisbx_strdup(state_dir);
    snprintf(s->api_version, sizeof s->api_version, "%s", api_version ? api_version : "20231130");
    s->isolate = isolate;
    s->rng = cfg->seed;
    s->throttle = emu_throttle_new(cfg->n_users + cfg->n_tokens);
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->store_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    char *ws = ocisbx_asprintf("%s/workspaces", state_dir);
    char *sn = ocisbx_asprintf("%s/snapshots", state_dir);
    int rc = (!s->state_dir || !ws || !sn || !s->throttle) ? ocisbx_fail_nomem() : 0;
    if (!rc && (emu_mkdirs(ws) != 0 || emu_mkdirs(sn) != 0))
        rc = ocisbx_fail(OCISBX_EIO, "state directory %s: cannot create workspaces/ and snapshots/: %s", state_dir,
                         strerror(errno));
    free(ws);
    free(sn);
    const char *nf = getenv("OCISBX_EMULATOR_NO_FSYNC");
    s->no_fsync = nf && !strcmp(nf, "1");
    if (!rc)
        rc = emu_store_load(s);
    for (size_t i = 0; !rc && i < s->n_sbx; i++) /* each keeps the uid that owns its workspace */
        if (strcmp(s->sbx[i]->state, "DELETED"))
            emu_sandbox_uid(s, s->sbx[i], false);
    if (!rc)
        rc = emu_store_sync(s); /* the commands cut by a crash, settled durably */
    if (rc) {
        s->cfg = NULL;
        emu_server_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

typedef struct dead {
    struct ocisbx_proc *proc;
    emu_command *cmd;
} dead;

/* Takes the processes that have finished (or all of them) out of their
 * commands; the caller frees them without the lock. */
static size_t collect_procs(emu_server *s, dead **out, bool all)
{
    size_t n = 0, cap = 0;
    dead *d = NULL;
    for (size_t i = 0; i < s->n_sbx; i++) {
        emu_sandbox *b = s->sbx[i];
        for (size_t j = 0; j < b->n_cmds; j++) {
            emu_command *c = b->cmds[j];
            if (!c->proc || (!all && !c->finished))
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                dead *nd = realloc(d, cap * sizeof *nd);
                if (!nd)
                    break;
                d = nd;
            }
            d[n].proc = c->proc;
            d[n].cmd = c;
            n++;
            c->proc = NULL;
        }
    }
    *out = d;
    return n;
}

static void free_procs(emu_server *s, dead *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ocisbx_proc_free(d[i].proc);
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < n; i++)
        emu_command_unref(d[i].cmd);
    pthread_mutex_unlock(&s->mu);
    free(d);
}

static void *ticker(void *arg)
{
    emu_server *s = arg;
    int64_t last_save = 0, last_watch = 0;
    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        int64_t now = emu_now_ms();
        emu_sandbox_tick(s, now);
        emu_snapshot_tick(s, now);
        emu_retry_tick(s, now);
        if (now - last_watch >= EMU_WS_WATCH_MS) { /* releases the lock while it measures */
            emu_workspace_watch(s);
            last_watch = now;
        }
        if (now - last_save >= SAVE_EVERY_MS) {
            if (emu_store_sync(s) != 0)
                ocisbx_log(OCISBX_LOG_ERROR, "%s", ocisbx_error_message(ocisbx_error_last()));
            last_save = now;
        }
        dead *d = NULL;
        size_t n = collect_procs(s, &d, false);
        pthread_mutex_unlock(&s->mu);
        if (n)
            free_procs(s, d, n);
        else
            free(d);
        ocisbx_sys_sleep_ms(TICK_MS, NULL, NULL); /* the one sleep (src/sys) */
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int emu_server_start_ticker(emu_server *s)
{
    if (pthread_create(&s->ticker, NULL, ticker, s) != 0)
        return ocisbx_fail(OCISBX_EIO, "cannot start the ticker thread");
    s->ticker_started = true;
    return 0;
}

void emu_server_shutdown(emu_server *s)
{
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (s->ticker_started) {
        pthread_join(s->ticker, NULL);
        s->ticker_started = false;
    }
    ocisbx_proc_kill_all();
    pthread_mutex_lock(&s->mu);
    dead *d = NULL;
    size_t n = collect_procs(s, &d, true);
    pthread_mutex_unlock(&s->mu);
    free_procs(s, d, n); /* waits for every process tree to be gone */
    pthread_mutex_lock(&s->mu);
    /* sandboxes in passing states settle where a restart finds them */
    for (size_t i = 0; i < s->n_sbx; i++) {
        emu_sandbox *b = s->sbx[i];
        if (!strcmp(b->state, "STOPPING")) {
            snprintf(b->state, sizeof b->state, "STOPPED");
            b->t_stopped = emu_now_ms();
        }
    }
    s->dirty = true;
    if (emu_store_sync(s) != 0)
        ocisbx_log(OCISBX_LOG_ERROR, "%s", ocisbx_error_message(ocisbx_error_last()));
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void emu_server_free(emu_server *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_sbx; i++)
        emu_sandbox_free(s->sbx[i]);
    for (size_t i = 0; i < s->n_snaps; i++)
        emu_snapshot_free(s->snaps[i]);
    for (size_t i = 0; i < s->n_retries; i++)
        emu_retry_free(s->retries[i]);
    free(s->sbx);
    free(s->snaps);
    free(s->retries);
    free(s->dead_procs);
    free(s->state_dir);
    emu_throttle_free(s->throttle);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->store_mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
