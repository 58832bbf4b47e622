/* ocisbx-emulator internals: the tenancy configuration, the request and
 * response objects the HTTP layer hands to the handlers (so every handler can
 * be driven without a socket, as the fuzz target does), and the state. */
#ifndef OCISBX_EMU_H
#define OCISBX_EMU_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util/internal.h"

struct ocisbx_pubkey;
struct ocisbx_proc;

/* ---- the tenancy file (config.c) ------------------------------------------- */
typedef struct emu_user {
    char *id;
    char *fingerprint;
    struct ocisbx_pubkey *key;
} emu_user;

typedef struct emu_token {
    char *token;
    struct ocisbx_pubkey *key;
    int64_t expires_ms;
} emu_token;

typedef struct emu_project {
    char *id;
    bool allow_network;
    char **warmpools;
    size_t n_warmpools;
} emu_project;

typedef struct emu_fault {
    char *method;         /* NULL: any */
    char *path;           /* glob relative to /<apiVersion>; NULL: any */
    int status;           /* respond: HTTP status, 0 when none */
    bool reset;           /* respond: reset */
    int retry_after_s;    /* -1: no retry-after header */
    int delay_ms;         /* 0: none */
    int cut_after_events; /* 0: none */
    int times;            /* -1: unlimited */
    double probability;   /* 1.0 by default; drawn from the seeded generator */
    int fired;
} emu_fault;

typedef struct emu_limits {
    int64_t max_body_bytes;
    int64_t output_loss_bytes;
    int64_t max_lifetime_minutes;
    int64_t create_delay_ms;
    int64_t stop_delay_ms;
    int64_t minute_ms; /* length of a lifetime "minute" (tests of expiry shorten it) */
    /* throttling like the service's (0: none): per user (API key or
     * session token), per second, and sandboxes per project; past them 429
     * TooManyRequests with retry-after (throttle.c) */
    double creates_per_second;
    double requests_per_second;
    int64_t max_sandboxes;
    /* limits.shapes.<SHAPE>: per-process address space and processes of
     * a sandbox's commands, and the size of its workspace (0: none);
     * [0] SMALL, [1] MEDIUM, [2] LARGE */
    struct emu_shape_limits {
        int64_t memory_mib;
        int64_t processes;
        int64_t workspace_mib;
    } shapes[3];
} emu_limits;

#define EMU_RATE_MAX 1000000.0

typedef struct emu_config {
    char *path;
    char *region;
    char *tenancy;
    emu_user *users;
    size_t n_users;
    emu_token *tokens;
    size_t n_tokens;
    emu_project *projects;
    size_t n_projects;
    emu_limits limits;
    emu_fault *faults;
    size_t n_faults;
    uint64_t seed;
} emu_config;

/* Loads and checks the tenancy file; keys are loaded once here. Errors name
 * the file, the line and the key (OCISBX_ECONFIG). */
int emu_config_load(const char *path, emu_config **out);
/* Same from memory; `path` names it in messages and anchors relative key
 * paths. load_keys false skips reading public key files (fuzzing). */
int emu_config_parse(const char *text, size_t len, const char *path, bool load_keys, emu_config **out);
void emu_config_free(emu_config *c);
const emu_project *emu_config_project(const emu_config *c, const char *id);
/* The limits of a shape name (NULL: unknown shape). */
const struct emu_shape_limits *emu_shape_limits(const emu_config *c, const char *shape);

/* ---- requests and responses (http.c builds them, dispatch.c consumes) ---- */
typedef struct emu_header {
    char *name; /* lowercase */
    char *value;
} emu_header;

typedef struct emu_request {
    char method[16];
    char *target; /* raw path?query exactly as received */
    char *path;   /* raw path part of target */
    char *query;  /* raw query (after '?'), NULL when none */
    emu_header *headers;
    size_t n_headers;
    char *body;
    size_t body_len;
    bool body_too_large;
} emu_request;

int emu_request_set_target(emu_request *r, const char *method, const char *target);
int emu_request_add_header(emu_request *r, const char *name, const char *value);
/* First value for a lowercase name, or NULL. */
const char *emu_request_header(const emu_request *r, const char *lowercase_name);
void emu_request_clear(emu_request *r);

typedef struct emu_stream {
    struct emu_command *cmd; /* referenced */
    int64_t next_seq;
    int64_t until_seq; /* 0: to the end */
    bool ndjson;
    int cut_after; /* 0: never */
    int sent;
} emu_stream;

/* A file answered by streaming (files.c): the HTTP layer hashes it in a
 * first pass, then sends it; the file must not change in between. */
typedef struct emu_file_body {
    int fd;
    int64_t size;
    uint64_t dev, ino;
    int64_t mtime_ns;
    char sha[45]; /* base64 SHA-256, set by emu_file_hash */
} emu_file_body;

#define EMU_MAX_RESP_HEADERS 12
typedef struct emu_response {
    int status;
    char content_type[64];
    ocisbx_buf body;
    emu_header headers[EMU_MAX_RESP_HEADERS];
    size_t n_headers;
    bool reset;          /* drop the connection without an answer */
    emu_stream *stream;  /* non-NULL: an event stream follows */
    emu_file_body *file; /* non-NULL: the body is this file (status 200, body empty) */
} emu_response;

void emu_response_init(emu_response *r);
int emu_response_header(emu_response *r, const char *name, const char *value);
const char *emu_response_get_header(const emu_response *r, const char *name);
void emu_response_clear(emu_response *r);
/* {code, message} with the status. Always returns 0 (the answer is made). */
int emu_error(emu_response *r, int status, const char *code, const char *fmt, ...) OCISBX_PRINTF(4, 5);
/* Sets a JSON body (the cJSON is consumed). */
int emu_json(emu_response *r, int status, cJSON *json);

/* JSON request bodies; each returns -1 with a 400 in resp on a wrong type. */
struct emu_env;
int emu_body_json(const emu_request *req, emu_response *resp, cJSON **out);
/* A member of obj not named in fields (space-separated): 400 naming it and
 * the model. The service refuses fields its public model does not have. */
int emu_json_only(const cJSON *obj, const char *model, const char *fields, emu_response *resp);
int emu_json_str(const cJSON *obj, const char *name, const char **out, emu_response *resp);
int emu_json_int(const cJSON *obj, const char *name, int64_t *out, bool *present, emu_response *resp);
int emu_json_bool(const cJSON *obj, const char *name, bool *out, emu_response *resp);
int emu_json_env(const cJSON *obj, const char *name, struct emu_env **out, size_t *n, emu_response *resp);
void emu_env_free(struct emu_env *env, size_t n);
cJSON *emu_env_names_json(const struct emu_env *env, size_t n);
/* limit (1..1000, default 100) and page ("pg-<offset>") */
int emu_page_params(const emu_request *req, emu_response *resp, size_t *offset, size_t *limit);
void emu_page_next(emu_response *resp, size_t offset, size_t limit, size_t total);

/* ---- routes (routes.c) --------------------------------------------------- */
typedef enum emu_route_id {
    EMU_R_NONE = 0,
    EMU_R_SANDBOX_CREATE,
    EMU_R_SANDBOX_LIST,
    EMU_R_SANDBOX_GET,
    EMU_R_SANDBOX_UPDATE,
    EMU_R_SANDBOX_DELETE,
    EMU_R_SANDBOX_STOP,
    EMU_R_SANDBOX_EXTEND,
    EMU_R_SANDBOX_SUSPEND,
    EMU_R_SANDBOX_RESUME,
    EMU_R_COMMAND_RUN,
    EMU_R_COMMAND_RUN_WAIT,
    EMU_R_COMMAND_RUN_STREAM,
    EMU_R_COMMAND_LIST,
    EMU_R_COMMAND_GET,
    EMU_R_COMMAND_OUTPUT,
    EMU_R_COMMAND_EVENTS,
    EMU_R_COMMAND_CANCEL,
    EMU_R_FILE_WRITE,
    EMU_R_FILE_READ,
    EMU_R_SNAPSHOT_CREATE,
    EMU_R_SNAPSHOT_LIST,
    EMU_R_SNAPSHOT_GET,
    EMU_R_SNAPSHOT_DELETE
} emu_route_id;

typedef struct emu_route {
    emu_route_id id;
    char sandbox_id[96];
    char command_id[96];
    char snapshot_id[96];
} emu_route;

/* Matches a path relative to the API version prefix ("/sandboxes/x").
 * Returns 0 and fills out, 404 for an unknown path, 405 for a known path with
 * another method. */
int emu_route_match(const char *method, const char *rel_path, emu_route *out);
/* Percent-decodes the value of a query parameter (first occurrence) into a
 * new string; NULL when absent. *bad set on malformed encoding. */
char *emu_query_get(const char *query, const char *name, bool *bad);
/* Percent-decodes src (len bytes); '+' stays '+'. NULL on bad encoding or a
 * decoded NUL. */
char *emu_percent_decode(const char *src, size_t len);

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
    struct emu_throttle *throttle; /* per-user token buckets (throttle.h) */
} emu_server;

/* server.c: create (loads state from state_dir), start the ticker, stop. */
int emu_server_new(emu_config *cfg, const char *state_dir, const char *api_version, bool isolate, emu_server **out);
int emu_server_start_ticker(emu_server *s);
/* Kills every sandbox process, waits for them, writes the state. */
void emu_server_shutdown(emu_server *s);
void emu_server_free(emu_server *s);
void emu_server_touch(emu_server *s); /* state changed: wake waiters, persist later */

/* dispatch.c: the whole answer to one request, socket-free.
 * delay_ms gets a fault delay the caller should sleep before answering
 * (already slept when sleep is true). */
void emu_handle(emu_server *s, const emu_request *req, emu_response *resp);

void emu_retry_tick(emu_server *s, int64_t now);
void emu_retry_free(emu_retry *r);

/* auth.c: 0 when authentic, *who set to the principal (users[i]: i; the
 * session token tokens[j]: n_users + j); else fills resp with 401 and
 * returns -1. */
int emu_authenticate(emu_server *s, const emu_request *req, emu_response *resp, size_t *who);

/* Handlers, called with s->mu held; they may wait on s->cv. */
void emu_h_sandbox(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_command(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_file(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_snapshot(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);

/* sandboxes.c */
emu_sandbox *emu_sandbox_find(emu_server *s, const char *id); /* not DELETED */
void emu_sandbox_tick(emu_server *s, int64_t now);
void emu_sandbox_free(emu_sandbox *b);
cJSON *emu_sandbox_json(const emu_sandbox *b, bool summary);
/* Removes the workspace and marks DELETED (processes already killed). */
void emu_sandbox_mark_deleted(emu_server *s, emu_sandbox *b);
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

/* commands.c */
emu_command *emu_command_find(emu_sandbox *b, const char *id);
void emu_command_unref(emu_command *c); /* with s->mu held */
/* Appends an event of kind (stamped now, exit code -1); NULL when out of memory. */
emu_event *emu_command_add_event(emu_command *c, int kind);
/* Starts a command of b from a RunSandboxCommandDetails body. */
int emu_command_start(emu_server *s, emu_sandbox *b, const cJSON *details, emu_command **out, emu_response *resp);
/* Kills every running command of b (grace_ms 0: KILL). */
void emu_commands_terminate(emu_server *s, emu_sandbox *b, int grace_ms, bool stop);
void emu_commands_signal(emu_sandbox *b, int sig);
bool emu_commands_active(const emu_sandbox *b);
cJSON *emu_command_json(const emu_server *s, const emu_command *c, bool summary);
cJSON *emu_event_json(const emu_server *s, const emu_command *c, const emu_event *e);
cJSON *emu_command_output_json(const emu_server *s, const emu_command *c, int64_t from_seq);
/* Formats the next available events of a stream into out; returns 1 when the
 * stream has ended, 0 otherwise (out may be empty: wait and retry), -1 when
 * the fault rule cuts it. */
int emu_stream_next(emu_server *s, emu_stream *st, ocisbx_buf *out);
void emu_stream_free(emu_stream *st); /* with s->mu held */
int emu_command_replay_stream(emu_server *s, const emu_request *req, const char *command_id, emu_response *resp);
void emu_command_free(emu_command *c);

/* files.c, the streamed read, called without s->mu: the first pass hashes
 * the file (gone(ud) is asked every few MiB: true stops it); -1 when the
 * client went, the file changed since it was opened, or a read failed. */
int emu_file_hash(emu_file_body *fb, bool (*gone)(void *ud), void *ud);
/* The second pass: up to max bytes at pos; 0 at the end, -1 when the file
 * changed (checked before the last bytes go out) or a read failed. */
long emu_file_read_at(emu_file_body *fb, uint64_t pos, char *buf, size_t max);
void emu_file_body_free(emu_file_body *fb);

/* snapshots.c */
void emu_snapshot_tick(emu_server *s, int64_t now);
void emu_snapshot_free(emu_snapshot *n);

/* store.c (all with s->mu held but load) */
int emu_store_load(emu_server *s);
int emu_store_save(emu_server *s); /* the state file, written and fsync'd */
/* Durable point: the new events of every command appended to their journals
 * (fsync'd), then the state file when something changed. Called before an
 * answer is sent. */
int emu_store_sync(emu_server *s);
/* The new events of one command appended to its journal (fsync'd): called
 * before a stream sends them. */
int emu_store_sync_command(emu_server *s, emu_command *c);
/* The retry record of the request this thread is handling (NULL: none). */
void emu_store_set_retry(emu_retry *r);
/* Called by emu_command_start before the process starts: the command (and
 * the retry token that started it) are made durable first. */
void emu_store_command_begin(emu_server *s, emu_sandbox *b, emu_command *c);

/* events.c: an output event of kind (EMU_EV_STDOUT/STDERR); past the output
 * loss, chunks are coalesced (at most one event per stream per
 * EMU_COALESCE_MS): NULL then, and when out of memory. */
#define EMU_COALESCE_MS 1000
emu_event *emu_command_add_output_event(emu_command *c, int kind);

/* lock.c: creates the state directory (0700) and takes an exclusive lock
 * on <state>/lock for the life of the process; OCISBX_ECONFIG when another
 * emulator holds it. */
int emu_state_lock(const char *state_dir);
/* tlscheck.c: the certificate and key load and match (errors name the file). */
int emu_tls_check(const char *cert_file, const char *key_file);

/* util.c */
/* RFC 3339 UTC with milliseconds (ocisbx_time_format_rfc3339; the parsers
 * are the library's too: ocisbx_time_parse_rfc3339/rfc1123). */
void emu_time_rfc3339(int64_t ms, char out[32]);
/* Adds name: the RFC 3339 time of ms to o, nothing when ms <= 0 (not set). */
void emu_json_add_time(cJSON *o, const char *name, int64_t ms);
/* Adds a string member of len bytes that may hold NUL (command output):
 * cJSON strings end at NUL, so the member is written as a raw JSON literal
 * with NUL as \u0000. data must be valid UTF-8 (ocisbx_utf8_sanitize). */
void emu_json_add_bytes(cJSON *o, const char *name, const char *data, size_t len);
int64_t emu_now_ms(void);
void emu_sha256_b64(const void *data, size_t len, char out[45]);
void emu_new_id(const char *prefix, char *out, size_t cap); /* prefix + 16 base32 */
uint64_t emu_rand(emu_server *s);
int emu_mkdirs(const char *path);
int emu_rmtree(const char *path);
/* Room for one more element in the growable array *items (n used, *cap
 * allocated): doubles the capacity (first when empty) when full. -1 when out
 * of memory, the array unchanged. Use through EMU_GROW. */
int emu_grow(void *items, size_t n, size_t *cap, size_t first, size_t size);
#define EMU_GROW(arr, n, cap, first) emu_grow((void *)&(arr), (n), &(cap), (first), sizeof *(arr))
/* Copies a directory tree (symlinks as symlinks); *bytes gets the file bytes. */
int emu_copytree(const char *src, const char *dst, int64_t *bytes);
/* Run as root, the emulator gives a workspace it created (and everything in
 * it) to the sandbox's own unprivileged uid (uid = gid, emu_sandbox_uid),
 * whom the runner then runs its commands as; a no-op when it already belongs
 * to it, and when the emulator is not root. 0 or -1. */
int emu_workspace_own(const char *dir, unsigned uid);
/* The disk use of a directory tree in bytes (st_blocks * 512 of every entry,
 * the directory's own included), without following symlinks; at most
 * max_entries entries are counted (*capped set when more were left out:
 * the result is then a lower bound). -1 when dir cannot be opened. */
int64_t emu_tree_use(const char *dir, long max_entries, bool *capped);
bool emu_valid_request_id(const char *id);
/* Reads a whole file; NULL on error (errno set). */
/* The largest file the emulator reads whole (state, journal, config, TLS files). */
#define EMU_FILE_MAX ((size_t)256 << 20)
char *emu_read_file(const char *path, size_t *len);
/* Writes atomically through a temporary name in the same directory. */
int emu_write_file_atomic(const char *path, const void *data, size_t len);

#endif
