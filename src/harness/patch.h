/* The apply_patch engine (library-internal): the patch format OpenAI
 * documents for Codex's apply_patch tool, parsed, matched against the
 * files and applied atomically.
 *
 *   *** Begin Patch
 *   *** Add File: PATH          then lines "+text" (the new file)
 *   *** Delete File: PATH
 *   *** Update File: PATH       then optionally "*** Move to: PATH", then
 *   @@ [CONTEXT]                hunks: lines " text" (context), "-text"
 *    context                    (removed), "+text" (added); an empty line is
 *   -old                        an empty context line; "*** End of File"
 *   +new                        after a hunk pins it to the end of the file
 *   *** End Patch
 *
 * Three steps, each testable alone:
 * - patch_parse: text to operations; no file is looked at.
 * - patch_prepare: every path resolved, every file read, every hunk of every
 *   operation matched and the new contents computed, through a patch_io; a
 *   failure anywhere is the error and nothing was written.
 * - patch_commit: the prepared contents written, then the deleted (and
 *   moved-away) files removed; a failing step restores what was already
 *   changed, so a patch applies whole or not at all.
 * See docs/harness.md ("apply_patch") for the rules and where they differ
 * from Codex's. */
#ifndef OCISBX_HARNESS_PATCH_H
#define OCISBX_HARNESS_PATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "util/internal.h"

/* The largest file an operation reads or writes, and the most file
 * content one patch holds in memory (old and new, all files). */
#define PATCH_FILE_MAX (64u * 1024 * 1024)
#define PATCH_TOTAL_MAX (192u * 1024 * 1024)

typedef enum patch_action {
    PATCH_ADD = 0,
    PATCH_UPDATE = 1,
    PATCH_DELETE = 2,
    PATCH_MOVE = 3 /* an Update with "*** Move to" */
} patch_action;

/* "add", "update", "delete", "move". */
const char *patch_action_name(patch_action a);

/* One line of the patch: its text (without the newline, a trailing CR, or
 * the leading ' ', '-', '+' of a hunk line), its 1-based number. */
typedef struct patch_line {
    char kind; /* ' ', '-', '+' in hunks and adds; '@' for a context header */
    const char *text;
    size_t len;
    size_t no;
} patch_line;

typedef struct patch_hunk {
    size_t no;           /* the line that starts it */
    patch_line *ctx;     /* its "@@ CONTEXT" lines, in order (may be none) */
    size_t n_ctx;
    patch_line *lines;   /* ' ', '-', '+' */
    size_t n;
    bool eof;            /* "*** End of File": the old lines end the file */
} patch_hunk;

typedef struct patch_op {
    patch_action action; /* PATCH_MOVE when move_to is set */
    size_t no;           /* the line of its "*** ... File:" marker */
    char *path;          /* as written in the patch */
    char *move_to;       /* as written; NULL without "*** Move to" */
    size_t move_no;
    patch_line *lines;   /* an Add's content lines */
    size_t n_lines;
    patch_hunk *hunks;   /* an Update's hunks */
    size_t n_hunks;
} patch_op;

typedef struct patch {
    char *text; /* a copy of the patch; every line points into it */
    patch_op *ops;
    size_t n_ops;
} patch;

/* What went wrong, for the model: code is the tool error code
 * ("invalid_patch", "no_match", "not_found", "is_directory",
 * "outside_workspace", "conflict", "binary_file", "too_large",
 * "backend_error"), rc the library status, line the patch line it is about
 * (0: none), msg the whole message. */
typedef struct patch_error {
    const char *code;
    int rc;
    size_t line;
    bool undo_failed; /* patch_commit: some changed files could not be restored */
    char msg[1536];
} patch_error;

/* Fills e (code, rc, line, the formatted message) and returns rc. */
int patch_error_set(patch_error *e, const char *code, int rc, size_t line, const char *fmt, ...) OCISBX_PRINTF(5, 6);
/* e says "out of memory" (backend_error); returns OCISBX_ENOMEM, set as the thread's error. */
int patch_error_nomem(patch_error *e);

/* Parses a patch (len bytes, need not be NUL-terminated). 0 with *out set,
 * or OCISBX_EINVAL with err (code "invalid_patch", the line and what was
 * expected there) or OCISBX_ENOMEM. */
int patch_parse(const char *text, size_t len, patch **out, patch_error *err);
void patch_free(patch *p);

/* Applies an Update's hunks to a file's content (old, old_len bytes):
 * *out (malloc'd, *out_len bytes) gets the new content. shown is the path
 * named in errors. Each hunk is sought after the previous one: its
 * "@@ CONTEXT" lines first, one after the other, then its old lines
 * (context and removed), matched exactly, else ignoring trailing white
 * space, else ignoring white space around each line. Lines kept as context
 * keep the file's bytes; added lines get the file's line ends (CRLF when
 * most of its lines end so); the result ends with a line end unless it is
 * empty. Errors: "no_match" (ENOMATCH), "binary_file" (EBINARY: a NUL
 * byte or invalid UTF-8). */
int patch_apply_hunks(const patch_op *op, const char *shown, const char *old, size_t old_len, char **out,
                      size_t *out_len, patch_error *err);

/* How the engine reaches the files. Each returns 0 or a negative OCISBX_E*
 * code with the thread's error set (ocisbx_error_last: its message is
 * shown). Paths given are the ones resolve returned. */
typedef struct patch_io {
    /* A path of the patch to the absolute one under /workspace;
     * OCISBX_EFORBIDDEN when it leaves the workspace. *abs: malloc'd. */
    int (*resolve)(void *ud, const char *path, char **abs);
    /* The whole file into *data (malloc'd); OCISBX_ENOTFOUND,
     * OCISBX_EISDIR, OCISBX_ETOOLARGE above max bytes. */
    int (*read)(void *ud, const char *path, size_t max, char **data, size_t *len);
    /* Replaces (or creates, with its parents) the whole file, atomically. */
    int (*write)(void *ud, const char *path, const char *data, size_t len);
    /* Removes a file. */
    int (*remove)(void *ud, const char *path);
    void *ud;
} patch_io;

/* One file the patch changes, as prepared. */
typedef struct patch_change {
    patch_action action;
    size_t no;            /* its operation's line */
    char *path;           /* resolved */
    char *moved_to;       /* resolved; PATCH_MOVE only */
    bool existed;         /* path existed before (false: an Add of a new file) */
    char *old_data;       /* path's content before (NULL when it did not exist) */
    size_t old_len;
    char *new_data;       /* what is written to moved_to, else path; NULL: delete */
    size_t new_len;
    bool target_existed;  /* PATCH_MOVE: moved_to existed (and is replaced) */
    char *target_old;     /* its content before */
    size_t target_old_len;
} patch_change;

typedef struct patch_plan {
    patch_change *v;
    size_t n;
} patch_plan;

/* Resolves, reads and matches everything; writes nothing. A path that two
 * operations touch (as path or Move target) is "conflict". On error the
 * plan is emptied. */
int patch_prepare(const patch *p, const patch_io *io, patch_plan *plan, patch_error *err);
/* Writes the plan: contents first (adds, updates, move targets), then
 * removals (deletes, move sources). When a step fails, every step done is
 * undone (files restored to their old contents, new files removed) and the
 * error says so, or names what could not be restored. */
int patch_commit(const patch_plan *plan, const patch_io *io, patch_error *err);
void patch_plan_free(patch_plan *plan);

#endif
