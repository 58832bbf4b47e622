/* ocisbx-emulator, its lowest layer: the tenancy file (config.c), the route
 * table (routes.c), the state lock, the TLS check and the helpers (util.c).
 * Nothing here knows the state or HTTP. Layers of src/emulator, each calling
 * only the ones below it:
 *   main.c, http.c (libmicrohttpd)                  the program and its listener
 *   dispatch.c, auth.c, h_*.c, files.c, list.c,     the HTTP handlers (emu.h):
 *     views.c, reqresp.c                            requests in, answers out
 *   server.c, m_*.c, events.c, store*.c             the state model (model.h):
 *                                                   no HTTP, no request, no answer
 *   config.c, routes.c, throttle.c, util.c,         this header
 *     lock.c, tlscheck.c
 */
#ifndef OCISBX_EMU_BASE_H
#define OCISBX_EMU_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util/internal.h"

struct ocisbx_pubkey;

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
/* The service's operation name of a route ("CreateSandbox"), as the
 * client's route table (src/api/routes.c) names it; NULL for EMU_R_NONE. */
const char *emu_route_operation(emu_route_id id);
/* The route table, row by row (tests walk it): 0 and the row's method,
 * pattern ("/sandboxes/{sandboxId}") and id, or -1 past the end. */
int emu_route_at(size_t i, const char **method, const char **pattern, emu_route_id *id);

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
/* splitmix64 over *state: deterministic for a seed and a call order. */
uint64_t emu_rand(uint64_t *state);
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
