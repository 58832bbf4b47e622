/* ocisbx-emulator, the state model: sandboxes, their commands and events,
 * snapshots, retry records and the store (state file and journals). No
 * HTTP: nothing here sees a request or makes an answer; a refusal is a
 * negative OCISBX_E* code with the thread's error message, which the
 * handlers (emu.h) turn into an answer. Called with s->mu held unless said
 * otherwise. */
#ifndef OCISBX_EMU_MODEL_H
#define OCISBX_EMU_MODEL_H

#include <pthread.h>

#include "emulator/base.h"

struct ocisbx_proc;

/* ---- state ----------------------------------------------------------------- */
typedef struct emu_env {
    char *name;
    char *value; /* a secret: never echoed */
} emu_env;

typedef struct emu_event {
    int64_t seq;
    int64_t ts_ms;
    int kind;   /* EMU_EV_* */
    char *data; /* STDOUT/STDERR: valid UTF-8; NULL when dropped */
    size_t len;
    int exit_code; /* FINISHED: -1 when none */
} emu_event;

enum { EMU_EV_STARTED = 1, EMU_EV_STDOUT, EMU_EV_STDERR, EMU_EV_FINISHED };

typedef struct emu_command {
    int refs;
    char id[32];
    char sandbox_id[32];
    char *command;
    char **args;
    size_t n_args;
    char *cwd;
    emu_env *env;
    size_t n_env;
    char *timeout; /* as given, NULL when none */
    int64_t timeout_ms;
    char state[16];
    int exit_code; /* -1: none */
    int64_t t_created, t_started, t_finished, t_updated;
    emu_event *events;
    size_t n_events, cap_events;
    int64_t output_bytes;
    bool output_lost;
    char utf8_tail[2][4]; /* incomplete UTF-8 sequence carried to the next chunk */
    size_t utf8_tail_len[2];
    struct ocisbx_proc *proc;
    int64_t ws_limit_mib; /* the workspace limit of its sandbox's shape when it started (0: none) */
    char shape[16];       /* its sandbox's shape (for the limit's message) */
    bool ws_over;         /* stopped by the workspace watcher */
    bool cancel_requested;
    bool stop_requested;
    bool finished;       /* FINISHED event written */
    bool persisted;      /* its (final) events are in <state>/commands/<id>.json (older state directories) */
    size_t n_journaled;  /* events[0..n_journaled) are in <state>/commands/<id>.events, fsync'd */
    bool lost_journaled; /* the journal records the output loss */
    bool journal_exists; /* the journal file and its directory entry are durable */
} emu_command;

typedef struct emu_sandbox {
    char id[32];
    char *project_id;
    char *display_name;
    char *runtime;
    char *shape;
    char state[16];
    char *details;
    char *warmpool;
    char **ports;
    size_t n_ports;
    char *port_auth_mode;
    char *credential_label;
    emu_env *env;
    size_t n_env;
    int64_t expires_in_minutes;
    int64_t t_created, t_updated, t_expires, t_stopped;
    int64_t ready_at_ms;    /* CREATING -> RUNNING (monotonic-free: wall ms) */
    int64_t stopped_at_ms;  /* STOPPING -> STOPPED */
    bool delete_after_stop; /* expiry */
    int64_t version;        /* etag */
    emu_command **cmds;
    size_t n_cmds, cap_cmds;
    unsigned uid;        /* as root: the owner of its workspace (EMU_SANDBOX_UID_BASE + n); 0: not chosen yet */
    int64_t ws_last_use; /* the watcher's last measure of the workspace in bytes (0: none yet) */
} emu_sandbox;

/* Run as root, each sandbox's workspace belongs to a uid of its own, the
 * command's uid: EMU_SANDBOX_UID_BASE + n, n < EMU_SANDBOX_UID_COUNT, unique
 * among the emulator's sandboxes; kept as the workspace directory's owner. */
#define EMU_SANDBOX_UID_BASE 200000u
#define EMU_SANDBOX_UID_COUNT 65536u

/* The watcher's period and the entry cap of one measure of a workspace. */
#define EMU_WS_WATCH_MS 500
#define EMU_WS_MAX_ENTRIES 100000
/* The stderr line of a command the workspace limit stopped (MiB, shape). */
#define EMU_WS_STOPPED_FMT "ocisbx-emulator: the workspace reached its %lld MiB limit (shape %s): command stopped\n"

typedef struct emu_snapshot {
    char id[32];
    char sandbox_id[32];
    char *project_id; /* the sandbox's; may be NULL in an old state file */
    char *display_name;
    char *runtime;
    char *expiration; /* expirationDuration as given, NULL when none */
    char state[16];
    int64_t size_bytes;
    int64_t t_created, t_updated, t_expires; /* t_expires 0: never */
    int64_t version;                         /* etag */
} emu_snapshot;

typedef struct emu_retry {
    char *key; /* token + " " + method + " " + path */
    int64_t t_ms;
    bool done;
    int status;
    char *content_type;
    char *body;
    size_t body_len;
    char *hdr_names[4];
    char *hdr_values[4];
    char command_id[32];  /* runAndStream: replays the stream */
    char started_cmd[32]; /* the command its action started (recorded before the process starts) */
    bool cut;             /* loaded pending: its action was cut by a crash after it started started_cmd;
                           * a repeat is answered from that command as it is now (dispatch.c) */
} emu_retry;

typedef struct emu_server {
    emu_config *cfg;
    char *state_dir;
    char api_version[32];
    bool isolate;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    emu_sandbox **sbx;
    size_t n_sbx, cap_sbx;
    emu_snapshot **snaps;
    size_t n_snaps, cap_snaps;
    emu_retry **retries;
    size_t n_retries, cap_retries;
    struct ocisbx_proc **dead_procs; /* finished processes to free outside the lock */
    size_t n_dead, cap_dead;
    uint64_t rng;
    bool dirty;
    bool stopping;
    pthread_t ticker;
    bool ticker_started;
    emu_sandbox *starting_sbx; /* a command being started, saved before its process starts */
    emu_command *starting_cmd;
    bool no_fsync; /* OCISBX_EMULATOR_NO_FSYNC=1 (benchmark reference only): not durable */
    /* the group commit (store.c): the writers of the files take store_mu
     * (after mu when both); batches taken and written, one writer at once */
    pthread_mutex_t store_mu;
    uint64_t taken_seq, durable_seq;
    bool committing;
    struct emu_throttle *throttle; /* per-user token buckets (throttle.h) */
} emu_server;

/* ---- server.c: create (loads state from state_dir), ticker, stop -------- */
int emu_server_new(emu_config *cfg, const char *state_dir, const char *api_version, bool isolate, emu_server **out);
int emu_server_start_ticker(emu_server *s);
/* Kills every sandbox process, waits for them, writes the state. */
void emu_server_shutdown(emu_server *s);
void emu_server_free(emu_server *s);
/* State changed: wake the waiters, persist later. */
static inline void emu_server_touch(emu_server *s)
{
    s->dirty = true;
    pthread_cond_broadcast(&s->cv);
}

/* ---- m_sandbox.c ---------------------------------------------------------- */
emu_sandbox *emu_sandbox_find(emu_server *s, const char *id); /* not DELETED */
void emu_sandbox_tick(emu_server *s, int64_t now);
void emu_sandbox_free(emu_sandbox *b);
void emu_env_free(emu_env *env, size_t n);
/* Removes the workspace and marks DELETED (processes already killed); the
 * secret values of its environment and its commands' are forgotten. */
void emu_sandbox_mark_deleted(emu_server *s, emu_sandbox *b);
/* A new sandbox of project_id may be made: OCISBX_ERATELIMIT when the
 * project holds limits.max_sandboxes (every one not DELETED counts). */
int emu_sandbox_admit(emu_server *s, const char *project_id);
/* retry-after of a create refused by limits.max_sandboxes [decided] */
#define EMU_FULL_RETRY_AFTER_S "1"
/* Adds b (its fields from the request set: project, names, env, ports,
 * expires_in_minutes): id, times, state, and its workspace (a copy of snap's
 * when given), owned by its own uid as root. 0, or OCISBX_EIO / ENOMEM with
 * b still the caller's. */
int emu_sandbox_add(emu_server *s, emu_sandbox *b, const emu_snapshot *snap);
/* Lifecycle actions; OCISBX_ECONFLICT when b's state does not allow it. */
int emu_sandbox_stop(emu_server *s, emu_sandbox *b, bool force);
int emu_sandbox_suspend(emu_server *s, emu_sandbox *b);
int emu_sandbox_resume(emu_server *s, emu_sandbox *b);
/* Extends the expiry by ms (wall milliseconds; dur names it in messages):
 * ECONFLICT unless RUNNING and expiring, EINVAL past the maximum lifetime. */
int emu_sandbox_extend(emu_server *s, emu_sandbox *b, int64_t ms, const char *dur);
void emu_sandbox_rename(emu_server *s, emu_sandbox *b, const char *name);
/* As root: b's uid (chosen when not yet: its workspace's owner when that is
 * in the range and no other sandbox's, else, when choose, the lowest free
 * one); 0 when not root or none was found. The load calls it without choose
 * for every sandbox first, so a restart keeps every uid. */
unsigned emu_sandbox_uid(emu_server *s, emu_sandbox *b, bool choose);
/* The workspace watcher (called by the ticker every EMU_WS_WATCH_MS, with
 * s->mu held; it releases it while it measures). */
void emu_workspace_watch(emu_server *s);
/* Host directory of a sandbox's workspace (malloc'd). */
char *emu_workspace_dir(const emu_server *s, const char *sandbox_id);

/* ---- m_command.c ---------------------------------------------------------- */
emu_command *emu_command_find(emu_sandbox *b, const char *id);
/* The command of that id in any sandbox (NULL: none). */
emu_command *emu_command_find_any(emu_server *s, const char *id);
/* A new command record (refs 1, exit code -1); NULL when out of memory. */
emu_command *emu_command_new(void);
void emu_command_unref(emu_command *c); /* with s->mu held */
void emu_command_free(emu_command *c);
/* Appends an event of kind (stamped now, exit code -1); NULL when out of memory. */
emu_event *emu_command_add_event(emu_command *c, int kind);
/* Starts c (command, args, cwd, env, timeout set from the request) in b,
 * which must be RUNNING: recorded durably first, then its process runs; a
 * process that cannot start makes it FAILED (still 0). c is owned by b from
 * then on, also on failure (the caller never frees it after the call):
 * OCISBX_EINVAL (an argument or the spec refused), ENOMEM. */
int emu_command_launch(emu_server *s, emu_sandbox *b, emu_command *c);
/* Asks a running command to stop (TERM, then KILL after the grace):
 * ECONFLICT when it has finished. */
int emu_command_cancel(emu_server *s, emu_command *c);
/* Kills every running command of b (grace_ms 0: KILL). */
void emu_commands_terminate(emu_server *s, emu_sandbox *b, int grace_ms, bool stop);
void emu_commands_signal(emu_sandbox *b, int sig);
bool emu_commands_active(const emu_sandbox *b);

/* ---- events.c: an output event of kind (EMU_EV_STDOUT/STDERR); past the
 * output loss, chunks are coalesced (at most one event per stream per
 * EMU_COALESCE_MS): NULL then, and when out of memory. */
#define EMU_COALESCE_MS 1000
emu_event *emu_command_add_output_event(emu_command *c, int kind);

/* ---- m_snapshot.c --------------------------------------------------------- */
emu_snapshot *emu_snapshot_find(emu_server *s, const char *id); /* not DELETED */
/* A snapshot of b's workspace (RUNNING or STOPPED, else ECONFLICT); ms > 0:
 * it expires after ms (dur as given). FAILED when the copy failed. */
int emu_snapshot_create(emu_server *s, emu_sandbox *b, const char *dur, int64_t ms, emu_snapshot **out);
void emu_snapshot_delete(emu_server *s, emu_snapshot *n);
void emu_snapshot_tick(emu_server *s, int64_t now);
void emu_snapshot_free(emu_snapshot *n);

/* ---- m_retry.c: retry-token records ---------------------------------------- */
emu_retry *emu_retry_find(emu_server *s, const char *key);
/* A new pending record of key (taken over); NULL when out of memory. */
emu_retry *emu_retry_add(emu_server *s, char *key);
void emu_retry_remove(emu_server *s, emu_retry *r);
void emu_retry_tick(emu_server *s, int64_t now);
void emu_retry_free(emu_retry *r);
/* The retry record of the request this thread is handling (NULL: none). */
void emu_retry_set_current(emu_retry *r);
emu_retry *emu_retry_current(void);

/* ---- store.c, store_load.c (all with s->mu held but load) ---------------- */
int emu_store_load(emu_server *s);
int emu_store_save(emu_server *s); /* the state file, written and fsync'd */
/* Durable point: the new events of every command appended to their journals
 * (fsync'd), then the state file when something changed. Called before an
 * answer is sent. */
int emu_store_sync(emu_server *s);
/* The dispatcher's durable point, before an answer is sent: everything the
 * request may have seen (its own change and every earlier one) is written,
 * as emu_store_sync writes it, but by a group commit: serialized under
 * s->mu, written with s->mu released, one write for every request answered
 * meanwhile. Returns with s->mu held (released and taken again while it
 * waits or writes). */
void emu_store_commit(emu_server *s);
/* The new events of one command appended to its journal (fsync'd): called
 * before a stream sends them. */
int emu_store_sync_command(emu_server *s, emu_command *c);
/* Called by emu_command_launch before the process starts: the command (and
 * the retry token that started it) are made durable first. */
void emu_store_command_begin(emu_server *s, emu_sandbox *b, emu_command *c);

#endif
