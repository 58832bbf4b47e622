/* One tool call on its way through the harness (library-internal): the
 * pipeline (call.c) fills it, the gate (gate.c) decides on it, a tool
 * implementation (tool_*.c) runs it; call_result.c has the helpers they
 * share: arguments, errors for the model, redaction, evidence fields. */
#ifndef OCISBX_HARNESS_CALL_H
#define OCISBX_HARNESS_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "harness/evidence.h"
#include "harness/harness_int.h"
#include "harness/patch.h"
#include "harness/tools.h"
#include "ocisbx/backend.h"
#include "util/internal.h"

/* A file path a call names inside an argument (apply_patch's patch): as
 * written, normalised, resolved (when the policy has path rules). */
typedef struct call_path {
    const char *given; /* points into the parsed patch */
    char *path;
    char *resolved;
} call_path;

typedef struct harness_call {
    ocisbx_harness *h;
    const harness_tool *tool;
    cJSON *args;              /* checked, defaults filled in */
    char *path;               /* the normalised "path" argument (its implied value when absent), or NULL */
    char *resolved;           /* path, its symlinks resolved (the policy decides on paths), or NULL */
    char *cwd;                /* the normalised "cwd" argument, or NULL */
    int path_rank;            /* the policy's decision on path: 0 allow, 1 hold, 2 deny */
    size_t denied_paths;      /* listed paths left out by the path rules */
    const char *command;      /* the command argument (in args), or NULL */
    ocisbx_env_list call_env; /* the env argument (not secret) */
    patch *patch;             /* apply_patch: the parsed patch argument */
    call_path *paths;         /* apply_patch: every path and Move target, in order (each once) */
    size_t n_paths;
    char **ev_paths; /* their normalised forms, redacted, for the record */
    cJSON *result;
    const char *err_code;
    char err_msg[1024];
    int rc;
    evidence_fields ev;
    char started[OCISBX_RFC3339_LEN + 1];
    char *ev_command, *ev_reason, *ev_path, *ev_resolved, *ev_out_sha, *ev_before, *ev_after, *ev_cmd_id;
    char ret_sha[OCISBX_SHA256_LEN * 2 + 1];
} harness_call;

/* ---- arguments (checked: present unless optional without a default) ---- */
const char *call_str(const harness_call *c, const char *name);
int64_t call_int(const harness_call *c, const char *name);
bool call_bool(const harness_call *c, const char *name);

/* The path the tool works on: the resolved one when there is one. */
const char *call_target(const harness_call *c);

/* ---- errors for the model ---- */
/* Sets the call's error (code for the model, message, rc); returns rc. */
int call_error(harness_call *c, const char *code, int rc, const char *fmt, ...) OCISBX_PRINTF(4, 5);
/* The library's failure rc (the thread's error) as the model's error. */
int call_backend_failure(harness_call *c, int rc);
/* The model's error code for a library code ("backend_error" for the rest). */
const char *call_error_code(int rc);

/* ---- secrets, and text a JSON string can carry ---- */
/* A copy of data (len bytes, any) as valid UTF-8 without NUL: NUL bytes
 * and bytes that are not UTF-8 become U+FFFD; *out_len (may be NULL) its
 * length. free() it. NULL: no memory. */
char *call_text_clean(const char *data, size_t len, size_t *out_len);
/* A copy of text (len bytes, any) with every secret value (the harness's, the
 * backend's) replaced by [REDACTED], then cleaned as call_text_clean does
 * (every byte reaches a JSON string; a NUL would cut it); *out_len (may be
 * NULL) its length. free() it. NULL: no memory. */
char *call_redact(const ocisbx_harness *h, const char *text, size_t len, size_t *out_len);
/* A cJSON string of text, redacted and cleaned; NULL: no memory. */
cJSON *call_redacted_string(const ocisbx_harness *h, const char *text);
/* The same of len bytes. */
cJSON *call_redacted_string_len(const ocisbx_harness *h, const char *text, size_t len);
/* Adds name: text (redacted, cleaned) to obj; false: no memory. */
bool call_add_redacted(const ocisbx_harness *h, cJSON *obj, const char *name, const char *text);
/* The same of len bytes (content that may hold any byte: diffs). */
bool call_add_redacted_len(const ocisbx_harness *h, cJSON *obj, const char *name, const char *text, size_t len);

/* ---- what a terminal shows (free() them; NULL: no memory) ---- */
/* JSON text with C1 controls, DEL and the bidi controls (U+061C, U+200E,
 * U+200F, U+202A..U+202E, U+2066..U+2069) escaped (\u009b, \u202e) as C0
 * ones are. */
char *call_json_controls_escaped(const char *json);
/* Text with control bytes (C0, DEL, C1), bytes that are not UTF-8 and the
 * bidi controls' bytes as \xNN, other printable UTF-8 kept. */
char *call_text_controls_escaped(const char *text);

/* ---- evidence fields ---- */
void call_set_hex(char **dst, const char *hex);
/* What the model got (len bytes): returned_bytes and returned_sha256. */
void call_returned(harness_call *c, const char *data, size_t len);

/* ---- apply_patch's paths (tool_patch.c) ---- */
/* Parses the patch argument (invalid_patch with its line) and takes its
 * paths before the gate: each normalised (outside_workspace) and, when the
 * policy has path rules, resolved; c->path and c->resolved become the
 * first one's, c->paths all of them. */
int call_patch_paths(harness_call *c, const char *text);
void call_paths_free(harness_call *c);

/* ---- reading and diffs (tool_patch.c) ---- */
/* A whole file into *data (malloc'd, NUL-terminated, *len bytes): at most
 * max bytes (more: OCISBX_ETOOLARGE), else the backend's codes. */
int call_read_file(harness_call *c, const char *path, size_t max, char **data, size_t *len);
/* The diff's header name of a /workspace path: prefix + the path below
 * /workspace (free()). */
char *call_diff_label(const char *prefix, const char *path);
/* The most bytes of a result's diff (its note included). */
#define CALL_DIFF_MAX OCISBX_BACKEND_DEFAULT_MAX_DIFF_BYTES

/* ---- the gate (gate.c) ---- */
/* The decision of the ready policies, the policy file and the gate
 * callback (the strictest wins); *reason (free()) the deciding one's. */
int gate_decide(harness_call *c, int *decision, char **reason);
/* The verdict for the evidence: "allow", "deny", or for a held call the
 * person's: "approved" or "refused" (*asked: someone answered; *reason
 * replaced when no one could be asked). */
const char *gate_verdict(harness_call *c, int decision, char **reason, bool *asked);

/* Whether a path a call lists (absolute under /workspace) may be shown:
 * its path rules decide no stricter than on the call's own path. A path
 * left out is counted in c->denied_paths. */
bool gate_path_visible(harness_call *c, const char *path);
/* Adds denied_paths to the result when paths were left out; false: no memory. */
bool gate_add_denied_paths(harness_call *c);

/* ---- the tools (their rows are in tool_table.c) ---- */
int harness_tool_read(harness_call *c);
int harness_tool_write(harness_call *c);
int harness_tool_edit(harness_call *c);
int harness_tool_search(harness_call *c);
int harness_tool_glob(harness_call *c);
int harness_tool_ls(harness_call *c);
int harness_tool_exec(harness_call *c);
int harness_tool_job(harness_call *c);
int harness_tool_apply_patch(harness_call *c);

#endif
