/* Evidence records and their sinks (library-internal; the harness builds
 * records, this file chains and writes them). */
#ifndef OCISBX_HARNESS_EVIDENCE_H
#define OCISBX_HARNESS_EVIDENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "ocisbx/util.h"

/* The fields of one record. NULL strings and negative numbers (or the
 * *_set flags false) are written as null. */
typedef struct evidence_fields {
    const char *tool, *label, *decision, *reason;
    const char *command;       /* exec; secret values already redacted */
    const char *path;          /* file tools: the path as given (normalised) */
    const char *resolved_path; /* its symlinks resolved, when the gate decided on it */
    const char *const *paths;  /* apply_patch: every file it names (normalised); n_paths 0: null */
    size_t n_paths;
    bool has_exit_code;
    int exit_code;
    int timed_out, truncated;             /* 0/1, or -1: null */
    int64_t duration_ms;                  /* -1: null */
    int64_t output_bytes, returned_bytes; /* -1: null */
    const char *output_sha256, *returned_sha256;
    const char *sha256_before, *sha256_after; /* write/edit */
    const char *backend, *sandbox_id, *command_id;
    const char *started_at; /* RFC 3339 */
} evidence_fields;

/* Fills f with "not applicable" everywhere. */
void evidence_fields_init(evidence_fields *f);

/* The record as one line (no newline), chained to prev_hex (64 hex
 * characters). *line is freed with free(). */
int evidence_line(const evidence_fields *f, const char *prev_hex, char **line);

/* The hex SHA-256 of a line's bytes: what the next record's prev_sha256 is. */
void evidence_line_hash(const char *line, size_t len, char out[OCISBX_SHA256_LEN * 2 + 1]);

/* A JSON Lines file opened for appending (created 0600 when missing).
 * Appends lock the file (flock), read the hash of its current last line,
 * and write the new line with one write(2), so several processes can append
 * to one file and the chain stays whole. */
typedef struct evidence_file evidence_file;
int evidence_file_open(const char *path, evidence_file **out);
/* Checks, before a call reaches the workspace, that its record can be
 * appended: the file is still the one at its path, its last line is whole
 * (a torn line: OCISBX_EINTEGRITY) and reserve bytes of room are set aside
 * after its end (where the file system can reserve). */
int evidence_file_check(evidence_file *ef, size_t reserve);
/* Appends the record chained to the file's last line; *line_out (may be
 * NULL) gets the line written (free()). */
int evidence_file_append(evidence_file *ef, const evidence_fields *f, char **line_out);
void evidence_file_close(evidence_file *ef);

#endif
