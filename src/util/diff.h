/* Unified diffs, bounded (internal; the backend's edit results and the
 * harness's write and apply_patch results use them).
 *
 * The format is GNU diff -u's: "--- OLD\n+++ NEW\n", hunks
 * "@@ -l,s +l,s @@" (",1" left out) with OCISBX_DIFF_CONTEXT lines of
 * context, lines prefixed ' ', '-' or '+', and "\ No newline at end of file"
 * after a last line without one. Content with a NUL byte on either side is
 * "Binary files OLD and NEW differ\n".
 *
 * The diff is minimal (Myers) when the changed region is at most
 * OCISBX_DIFF_MAX_LINES lines a side and the edit distance at most
 * OCISBX_DIFF_MAX_D; beyond, that region is shown as removed, then added
 * (still a correct diff, never more memory than those bounds allow).
 *
 * Output is bounded: what is kept is a prefix of whole diff lines of at most
 * max bytes in all; when something is cut, the last line is the note
 * "[... N bytes of diff dropped ...]" with N the exact count left out.
 * Several files go into one bounded diff (apply_patch): init, one
 * ocisbx_diff_file per file, finish. */
#ifndef OCISBX_UTIL_DIFF_H
#define OCISBX_UTIL_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/internal.h"

#define OCISBX_DIFF_CONTEXT 3
#define OCISBX_DIFF_MAX_LINES 1000000
#define OCISBX_DIFF_MAX_D 2000
/* The smallest bound ocisbx_diff_init takes: room for the note. */
#define OCISBX_DIFF_MIN_MAX 128

typedef struct ocisbx_diff {
    ocisbx_buf out;  /* the kept lines */
    size_t max;      /* the most bytes of the finished diff, note included */
    size_t safe_len; /* out.len at the last line end that leaves room for the note */
    uint64_t total;  /* the bytes of the whole diff */
} ocisbx_diff;

/* max: at least OCISBX_DIFF_MIN_MAX (smaller values are raised to it). */
void ocisbx_diff_init(ocisbx_diff *d, size_t max);
/* Adds the diff of one file (nothing when a and b are equal); labels are the
 * header's names as given ("a/src/x.c", "/dev/null"). */
int ocisbx_diff_file(ocisbx_diff *d, const char *old_label, const char *new_label, const char *a, size_t alen,
                     const char *b, size_t blen);
/* The bytes left out so far (0 when all fits). */
uint64_t ocisbx_diff_dropped(const ocisbx_diff *d);
/* Hands the diff over (NUL-terminated, "" when nothing differs; free()),
 * with the note when cut; *dropped (may be NULL) gets the bytes left out.
 * d is empty afterwards (free it or init it again). */
int ocisbx_diff_finish(ocisbx_diff *d, char **out, size_t *len, uint64_t *dropped);
void ocisbx_diff_free(ocisbx_diff *d);

/* One file's diff in one call: init, file, finish. */
int ocisbx_diff_unified(const char *old_label, const char *new_label, const char *a, size_t alen, const char *b,
                        size_t blen, size_t max, char **out, size_t *len, uint64_t *dropped);

/* A header name: prefix + path ("a/" + "src/x.c"), or, when the path holds
 * a control character, '"' or '\\', the whole C-quoted as git does
 * ("\"a/odd\\nname\""). NULL when out of memory. free() it. */
char *ocisbx_diff_label(const char *prefix, const char *path);

#endif
