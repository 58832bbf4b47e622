/* libocisbx harness layer: what a model's tool calls pass through.
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

#ifdef __cplusplus
extern "C" {
#endif

/* Action labels of the tools. */
#define OCISBX_LABEL_READ "workspace.read"
#define OCISBX_LABEL_WRITE "workspace.write"
#define OCISBX_LABEL_EXEC "workspace.exec"

/* What the gate decides for a call. */
typedef enum ocisbx_gate_decision {
    OCISBX_GATE_ALLOW = 0, /* run it */
    OCISBX_GATE_DENY = 1,  /* refuse it; the model sees the reason */
    OCISBX_GATE_HOLD = 2   /* ask a person (the approval callback) */
} ocisbx_gate_decision;

/* "allow", "deny", "hold"; NULL for a value that is none of them. */
OCISBX_API const char *ocisbx_gate_decision_name(int decision);

/* ---- the policy file ----------------------------------------------------------
 * YAML:
 *   rules:                          # the first rule that matches decides
 *     - label: workspace.exec       # a glob on the action label (required)
 *       tool: exec                  # a glob on the tool's name (optional)
 *       command: "^pytest( |$)"     # POSIX ERE on exec's command (optional)
 *       path: "<glob>"              # a path glob on the path argument (optional)
 *       decision: allow             # allow | deny | hold (required)
 *       reason: shown to the model  # optional
 *   default: allow                  # allow | deny | hold (optional; allow)
 * A rule with `command` only matches calls that have a command, one with
 * `path` only calls that have a path. Path globs: see docs/harness.md
 * (`*` stays inside a component, `**` crosses them). A bad file is refused
 * at load (OCISBX_ECONFIG) with the file, line and key named. */
typedef struct ocisbx_policy ocisbx_policy;
/* The file must be a regular file of at most 1 MiB. */
OCISBX_API int ocisbx_policy_load_file(const char *path, ocisbx_policy **out);
/* From text; name is used in errors in place of a file name. */
OCISBX_API int ocisbx_policy_load_yaml(const char *yaml, size_t len, const char *name, ocisbx_policy **out);
OCISBX_API void ocisbx_policy_free(ocisbx_policy *p);
/* The decision for one call. command and path may be NULL (the call has
 * none). *reason (may be NULL) gets the deciding rule's reason, or NULL;
 * it is owned by the policy. Returns an ocisbx_gate_decision, or a negative
 * code (bad arguments, a path too long to match). */
OCISBX_API int ocisbx_policy_decide(const ocisbx_policy *p, const char *tool, const char *label, const char *command,
                                    const char *path, const char **reason);
/* The number of rules (for tools that show a policy). */
OCISBX_API size_t ocisbx_policy_rule_count(const ocisbx_policy *p);

/* ---- evidence ----------------------------------------------------------------
 * One record per tool call the gate decided, as one line of JSON (JSON
 * Lines). Every record has every field (null when it does not apply); see
 * docs/harness.md for the list. Records are chained: prev_sha256 is the
 * lowercase hex SHA-256 of the previous line's bytes (without its newline),
 * 64 zeros for the first record; a file appended to later continues its
 * chain. Changing, removing or inserting a line breaks the chain at the
 * next line. */

/* The hex SHA-256 that starts a chain. */
#define OCISBX_EVIDENCE_CHAIN_START "0000000000000000000000000000000000000000000000000000000000000000"
/* The longest line the verifier reads (OCISBX_ETOOLARGE above). */
#define OCISBX_EVIDENCE_LINE_MAX (16 * 1024 * 1024)

/* Checks an evidence file's chain. 0 when every line is a JSON object whose
 * prev_sha256 matches the line before it (*records: the count; an empty
 * file has 0). OCISBX_EINTEGRITY when the chain is broken: *bad_line (may
 * be NULL) gets the 1-based number of the first line that breaks it, and
 * the message says what is wrong. Other codes: the file cannot be read
 * (OCISBX_ENOTFOUND, OCISBX_EINVAL for a non-regular file, OCISBX_EIO). */
OCISBX_API int ocisbx_evidence_verify_file(const char *path, int64_t *records, int64_t *bad_line);

#ifdef __cplusplus
}
#endif
#endif
