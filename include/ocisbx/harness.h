/** @file
 * libocisbx harness layer: what a model's tool calls pass through.
 *
 * This part: the gate's decisions, the policy file, and tamper-evident
 * evidence files (JSON Lines, each record chained to the previous one by
 * its SHA-256). The tools themselves sit on the workspace backend.
 *
 * Every call returns 0 or a negative OCISBX_E* code with the thread's error
 * set (ocisbx_error_last()); strings returned through char ** are freed with
 * ocisbx_free(). */
#ifndef OCISBX_HARNESS_H
#define OCISBX_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Action labels of the tools. */
#define OCISBX_LABEL_READ "workspace.read"   /**< read, search, glob, ls */
#define OCISBX_LABEL_WRITE "workspace.write" /**< write, edit */
#define OCISBX_LABEL_EXEC "workspace.exec"   /**< exec, job */

/** What the gate decides for a call. */
typedef enum ocisbx_gate_decision {
    OCISBX_GATE_ALLOW = 0, /**< run it */
    OCISBX_GATE_DENY = 1,  /**< refuse it; the model sees the reason */
    OCISBX_GATE_HOLD = 2   /**< ask a person (the approval callback) */
} ocisbx_gate_decision;

/** "allow", "deny", "hold"; NULL for a value that is none of them. */
OCISBX_API const char *ocisbx_gate_decision_name(int decision);

/** ---- the policy file ----------------------------------------------------------
 * YAML:
 *   rules:                          # the first rule that matches decides
 *     - label: workspace.exec       # a glob on the action label (required)
 *       tool: exec                  # a glob on the tool's name (optional)
 *       command: "^pytest( |$)"     # POSIX ERE on each simple command of exec's line (optional)
 *       path: "<glob>"              # a path glob on the path argument (optional)
 *       decision: allow             # allow | deny | hold (required)
 *       reason: shown to the model  # optional
 *   default: allow                  # allow | deny | hold (optional; allow)
 * A command rule is tried on each simple command of the line (the line
 * read as a shell command list), the strictest decision winning: an allow
 * holds only when every simple command has one, and never for a line with
 * a command or process substitution, eval, a subshell or compound command,
 * or a redirection out of /workspace (see docs/harness.md).
 * A rule with `command` only matches calls that have a command, one with
 * `path` only calls that have a path. `label` and `tool` must match at
 * least one tool's action label or name (a typo would leave the rule dead).
 * Path globs: see docs/harness.md
 * (`*` stays inside a component, `**` crosses them). A bad file is refused
 * at load (OCISBX_ECONFIG) with the file, line and key named. */
typedef struct ocisbx_policy ocisbx_policy;
/** The file must be a regular file of at most 1 MiB. */
OCISBX_API int ocisbx_policy_load_file(const char *path, ocisbx_policy **out);
/** From text; name is used in errors in place of a file name. */
OCISBX_API int ocisbx_policy_load_yaml(const char *yaml, size_t len, const char *name, ocisbx_policy **out);
/** Frees a policy. */
OCISBX_API void ocisbx_policy_free(ocisbx_policy *p);
/** The decision for one call. command and path may be NULL (the call has
 * none). *reason (may be NULL) gets the deciding rule's reason, or NULL;
 * it is owned by the policy. Returns an ocisbx_gate_decision, or a negative
 * code (bad arguments, a path too long to match). */
OCISBX_API int ocisbx_policy_decide(const ocisbx_policy *p, const char *tool, const char *label, const char *command,
                                    const char *path, const char **reason);
/** The number of rules (for tools that show a policy). */
OCISBX_API size_t ocisbx_policy_rule_count(const ocisbx_policy *p);

/* ---- evidence ----------------------------------------------------------------
 * One record per tool call the gate decided, as one line of JSON (JSON
 * Lines). Every record has every field (null when it does not apply); see
 * docs/harness.md for the list. Records are chained: prev_sha256 is the
 * lowercase hex SHA-256 of the previous line's bytes (without its newline),
 * 64 zeros for the first record; a file appended to later continues its
 * chain. Changing, removing or inserting a line breaks the chain at the
 * next line. */

/** The hex SHA-256 that starts a chain. */
#define OCISBX_EVIDENCE_CHAIN_START "0000000000000000000000000000000000000000000000000000000000000000"
/** The longest line the verifier reads (OCISBX_ETOOLARGE above). */
#define OCISBX_EVIDENCE_LINE_MAX (16 * 1024 * 1024)

/** Checks an evidence file's chain. 0 when every line is one JSON object
 * (nothing after it, no NUL byte) whose prev_sha256 matches the line before it (*records: the count; an empty
 * file has 0). OCISBX_EINTEGRITY when the chain is broken: *bad_line (may
 * be NULL) gets the 1-based number of the first line that breaks it, and
 * the message says what is wrong. Other codes: the file cannot be read
 * (OCISBX_ENOTFOUND, OCISBX_EINVAL for a non-regular file, OCISBX_EIO). */
OCISBX_API int ocisbx_evidence_verify_file(const char *path, int64_t *records, int64_t *bad_line);

/** The chain cannot show a change to the last record or lines removed from
 * the end: the chain's head (the SHA-256 of the last line) must be kept
 * elsewhere and compared. ocisbx_evidence_verify_file, and on success head
 * (may be NULL; at least OCISBX_EVIDENCE_HEAD_SIZE bytes) gets the lowercase
 * hex SHA-256 of the last line's bytes (without its newline), or
 * OCISBX_EVIDENCE_CHAIN_START for an empty file; "" on failure. */
OCISBX_API int ocisbx_evidence_verify_file_head(const char *path, int64_t *records, int64_t *bad_line, char *head);
/** The size of the head's buffer: 64 hex digits and a NUL. */
#define OCISBX_EVIDENCE_HEAD_SIZE 65

/** ---- the harness --------------------------------------------------------------
 * Tools for a model over one backend: read, write, edit, search, glob, ls,
 * exec, job, each with a JSON Schema and an action label. Every call goes
 * through the gate before it reaches the workspace; every call the gate
 * decided leaves one evidence record. */
typedef struct ocisbx_harness ocisbx_harness;

/** Options of a harness (ocisbx_harness_new). */
typedef struct ocisbx_harness_options ocisbx_harness_options;
/** Makes empty harness options. */
OCISBX_API int ocisbx_harness_options_new(ocisbx_harness_options **out);
/** Frees harness options. */
OCISBX_API void ocisbx_harness_options_free(ocisbx_harness_options *o);
/** Added to every exec's environment (secret: the value reaches the command
 * but never a record, a log line, an error or what the model sees). */
OCISBX_API int ocisbx_harness_options_add_env(ocisbx_harness_options *o, const char *name, const char *value,
                                              int secret);
/** Ready policies: calls with this action label are held for a person, or
 * denied (reason: what the model sees; NULL for a standard one). The label
 * (a glob) must match at least one tool's action label: one that matches
 * none (a typo) is OCISBX_EINVAL, the message naming it and the labels. */
OCISBX_API int ocisbx_harness_options_require_person(ocisbx_harness_options *o, const char *label);
/** Calls with this action label are denied (reason: what the model sees; NULL for a standard one). */
OCISBX_API int ocisbx_harness_options_deny_label(ocisbx_harness_options *o, const char *label, const char *reason);
/** A policy file (loaded now; its errors are OCISBX_ECONFIG with file, line, key). */
OCISBX_API int ocisbx_harness_options_set_policy_file(ocisbx_harness_options *o, const char *path);
/** Evidence appended to this JSON Lines file (its chain continued). Before
 * a call reaches the workspace the file is checked; a call whose record
 * cannot be written does not run (the error "evidence_error"). */
OCISBX_API int ocisbx_harness_options_set_evidence_file(ocisbx_harness_options *o, const char *path);

/** The backend is borrowed: it must outlive the harness. o may be NULL. A
 * harness over a host shell (a local backend without isolation) with no
 * gate of any kind logs a warning. */
OCISBX_API int ocisbx_harness_new(ocisbx_backend *b, const ocisbx_harness_options *o, ocisbx_harness **out);
/** Frees a harness (not its backend). */
OCISBX_API void ocisbx_harness_free(ocisbx_harness *h);

/** The gate: sees every call (tool, action label, its arguments as JSON)
 * before it runs, and returns an ocisbx_gate_decision. A reason for the
 * model (deny) or the person (hold) may be given with
 * ocisbx_gate_reply_set_reason. The strictest of the gate's decision and the
 * ready policies' wins (deny over hold over allow). */
typedef struct ocisbx_gate_reply ocisbx_gate_reply;
/** Gives the reason of the gate's decision: shown to the model (deny) or the person (hold). */
OCISBX_API int ocisbx_gate_reply_set_reason(ocisbx_gate_reply *r, const char *reason);
/** The gate callback: returns an ocisbx_gate_decision (see above). */
typedef int (*ocisbx_gate_fn)(const char *tool, const char *label, const char *arguments_json,
                              ocisbx_gate_reply *reply, void *user_data);
/** Sets the gate callback (fn NULL: none). */
OCISBX_API int ocisbx_harness_set_gate(ocisbx_harness *h, ocisbx_gate_fn fn, void *user_data);
/** Asked for a held call: 1 approves, 0 refuses. arguments_json and reason
 * have secret values redacted. A negative return means no one could be
 * asked (the CLI: no terminal): the call is refused with the reason "held
 * for a person's approval, but no one could be asked: <the message of
 * ocisbx_error_last()>". Without a callback, a held call is refused ("no
 * one could be asked"). */
typedef int (*ocisbx_approval_fn)(const char *tool, const char *label, const char *arguments_json, const char *reason,
                                  void *user_data);
/** Sets the approval callback asked for held calls. */
OCISBX_API int ocisbx_harness_set_approval(ocisbx_harness *h, ocisbx_approval_fn fn, void *user_data);
/** Each evidence record as its JSON line (no newline), after the file sink. */
typedef void (*ocisbx_evidence_fn)(const char *record_json, size_t len, void *user_data);
/** Sets a callback that receives each evidence record. */
OCISBX_API int ocisbx_harness_set_evidence_callback(ocisbx_harness *h, ocisbx_evidence_fn fn, void *user_data);

/** The tool list: format "ours" (or NULL): [{name, description, label,
 * parameters}], "openai": function tools, "anthropic": tools with
 * input_schema. h may be NULL (the tools do not depend on the backend). */
OCISBX_API int ocisbx_harness_tools_json(const ocisbx_harness *h, const char *format, char **out);
/** Text for a system prompt: the workspace, each tool, the output cap, the
 * timeout rules. */
OCISBX_API int ocisbx_harness_prompt(const ocisbx_harness *h, char **out);
/** Calls a tool: always gives *result_json (an object: the tool's result, or
 * {"error": {"code", "message"}}), also when the call fails. Secret values
 * are redacted from the result, the record, the thread's error and every
 * line logged on this thread during the call; a call that succeeds leaves
 * the thread's error as it was. Returns 0 when
 * the tool succeeded, else a negative code matching the error (a denied call:
 * OCISBX_EDENIED). */
OCISBX_API int ocisbx_harness_call_json(ocisbx_harness *h, const char *tool, const char *arguments_json,
                                        char **result_json);

#ifdef __cplusplus
}
#endif
#endif
