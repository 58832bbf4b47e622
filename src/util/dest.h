/* A local destination the library writes (a file read out of a sandbox, a
 * response body saved to a path). One rule for every such place:
 *
 * - The path does not exist, or names a regular file (a symlink is followed
 *   to its final target, which is what gets replaced; the link stays): the
 *   bytes go to a temporary file in the target's directory, and only a
 *   commit renames it over the target. A failure (or an abort) never
 *   replaces a good file and never leaves a partial one. The new file keeps
 *   the mode of the file it replaces (0666 less the umask for a new one).
 * - The path exists and is not a regular file (a character device such as
 *   /dev/null, a FIFO, a socket): it is opened and written through, as
 *   `curl -o` does, and never renamed over, truncated or unlinked.
 * - A directory is refused (OCISBX_EINVAL).
 *
 * Not thread-safe per object; separate objects need no locking. */
#ifndef OCISBX_UTIL_DEST_H
#define OCISBX_UTIL_DEST_H

#include <stdbool.h>
#include <stdio.h>

typedef struct ocisbx_dest {
    FILE *fp;     /* where to write */
    char *target; /* the final path (symlinks followed) */
    char *tmp;    /* the temporary file, NULL when written through */
} ocisbx_dest;

/* Opens path for writing as above; `what` names the operation in errors
 * ("read /workspace/a"). Errors: OCISBX_EINVAL (a directory, empty path,
 * a symlink loop), OCISBX_EIO (cannot create or open). */
int ocisbx_dest_open(ocisbx_dest *d, const char *path, const char *what);
/* true when the bytes go straight to a device or FIFO (nothing to rename). */
bool ocisbx_dest_is_through(const ocisbx_dest *d);
/* Flushes, closes and renames the temporary file over the target. On
 * failure the temporary file is removed and the target is untouched.
 * The object is finished either way. */
int ocisbx_dest_commit(ocisbx_dest *d, const char *what);
/* Closes and removes the temporary file; the target is untouched. Safe on
 * a finished or zeroed object. */
void ocisbx_dest_abort(ocisbx_dest *d);

#endif
