/* The confined path walk (library-internal, not installed): resolves a path
 * inside a host directory the way a sandbox that sees that directory at its
 * mount point (/workspace) resolves it, and never reaches outside it.
 *
 * The sandbox's file system is modelled as a root whose only child is the
 * mount point (one component, "workspace"), which is the host directory
 * root->dir_fd. The walk goes component by component with
 * openat(O_NOFOLLOW | O_DIRECTORY) on each directory it enters, so the kernel
 * never follows a symlink, even one swapped in during the call: every symlink
 * is read with readlinkat and its target walked here, a relative one from the
 * directory holding it, an absolute one from the model root. ".." at the
 * mount point goes to the model root, ".." at the model root stays there. Any
 * name at the model root other than the mount point is outside: refused
 * without touching the host, so nothing outside can be probed.
 *
 * Paths: absolute ones are sandbox paths ("/workspace/a/b"); relative ones
 * ("a/b") are relative to the mount point. Empty and "." components are
 * skipped.
 *
 * Errors (return value, the thread's error object set, and the finer reason
 * in ocisbx_walk_last_reason()):
 *   OCISBX_EFORBIDDEN  OCISBX_WALK_OUTSIDE  the path, or a symlink on it,
 *                      leads outside the mount point (a dangling absolute
 *                      link to elsewhere included)
 *   OCISBX_ENOTFOUND   OCISBX_WALK_MISSING  a component does not exist
 *   OCISBX_EINVAL      OCISBX_WALK_NOTDIR   a component that must be a
 *                      directory is not one
 *   OCISBX_EINVAL      OCISBX_WALK_ISDIR    the path names a directory where
 *                      a file is wanted (or the mount point itself)
 *   OCISBX_EINVAL      OCISBX_WALK_LOOP     more than OCISBX_WALK_MAX_LINKS
 *                      symlinks, or deeper than OCISBX_WALK_MAX_DEPTH
 *   OCISBX_ECONFLICT   OCISBX_WALK_RACE     an entry changed while it was
 *                      resolved (became a symlink): retry
 *   OCISBX_ECONFLICT   OCISBX_WALK_EXISTS   open_write with OCISBX_WALK_EXCL:
 *                      the file exists
 *   OCISBX_ECONFLICT   OCISBX_WALK_NOTEMPTY unlink (RMDIR) or rename onto a
 *                      directory that is not empty
 *   OCISBX_EINVAL      OCISBX_WALK_BADARG   bad arguments, or not a regular
 *                      file (a FIFO, device, socket) where one is wanted
 *   OCISBX_EIO         OCISBX_WALK_IO       any other system error
 *   OCISBX_ENOMEM      OCISBX_WALK_IO       out of memory
 *
 * Ownership: when the caller runs as root (euid 0) and the host directory
 * belongs to someone else (the sandbox uid, or the user whose directory it
 * is), every file and directory the walk creates is given the host
 * directory's owner and group, so that the sandbox user can use it; callers
 * that create entries themselves (a temporary renamed into place) call
 * ocisbx_walk_adopt. Otherwise nothing is chowned.
 *
 * Every returned fd has O_CLOEXEC; the caller closes it. Thread-safe (no
 * shared state; the reason is per thread). */
#ifndef OCISBX_SYS_WALK_H
#define OCISBX_SYS_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ocisbx/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OCISBX_WALK_MAX_DEPTH 256
#define OCISBX_WALK_MAX_LINKS 40

typedef struct ocisbx_walk_root {
    /* The host directory (open with O_RDONLY | O_DIRECTORY); not closed. */
    int dir_fd;
    /* Where the sandbox sees it: one absolute component; NULL = "/workspace". */
    const char *mount;
} ocisbx_walk_root;

/* flags */
enum {
    OCISBX_WALK_FOLLOW_LAST = 1 << 0, /* a symlink as the last component is followed */
    OCISBX_WALK_MKDIRS = 1 << 1,      /* missing directories on the way are created (0755) */
    OCISBX_WALK_EXCL = 1 << 2,        /* open_write: fail (ECONFLICT) when the file exists */
    OCISBX_WALK_APPEND = 1 << 3,      /* open_write: O_APPEND, no truncation */
    OCISBX_WALK_RMDIR = 1 << 4        /* unlink: remove an (empty) directory */
};

typedef enum ocisbx_walk_reason {
    OCISBX_WALK_OK = 0,
    OCISBX_WALK_OUTSIDE,
    OCISBX_WALK_MISSING,
    OCISBX_WALK_NOTDIR,
    OCISBX_WALK_ISDIR,
    OCISBX_WALK_LOOP,
    OCISBX_WALK_RACE,
    OCISBX_WALK_EXISTS,
    OCISBX_WALK_NOTEMPTY,
    OCISBX_WALK_BADARG,
    OCISBX_WALK_IO
} ocisbx_walk_reason;

/* The reason of this thread's last failed walk call (OK after a success). */
ocisbx_walk_reason ocisbx_walk_last_reason(void);

/* Resolves every component but the last (following symlinks on the way) and
 * returns the directory that holds the last one (*dir_fd) and its name
 * (*name, malloc'd; it need not exist). With OCISBX_WALK_FOLLOW_LAST a
 * symlink in the last place is followed (confined) and the place of its
 * target returned. A path that names a directory itself ("/workspace", "a/.",
 * "a/..") fails with OCISBX_WALK_ISDIR. The building block of stat, unlink,
 * rename and the callers' own operations (mkdirat, a temporary renamed
 * into place). */
int ocisbx_walk_parent(const ocisbx_walk_root *root, const char *path, int flags, int *dir_fd, char **name);

/* Opens the directory path names (the mount point itself included), following
 * symlinks; for listing (fdopendir) and as a base for *at calls. With
 * OCISBX_WALK_MKDIRS it is created, with its parents, when missing. */
int ocisbx_walk_open_dir(const ocisbx_walk_root *root, const char *path, int flags, int *fd);

/* Opens a regular file for reading, following symlinks (confined). Not a
 * regular file (a directory: OCISBX_WALK_ISDIR; a FIFO, device or socket:
 * OCISBX_WALK_BADARG) is refused without blocking. */
int ocisbx_walk_open_read(const ocisbx_walk_root *root, const char *path, int *fd);

/* Opens a file for writing, created with mode (before the umask) when
 * missing, else truncated (OCISBX_WALK_APPEND: appended to; OCISBX_WALK_EXCL:
 * refused). A symlink in the last place is followed, confined, as a shell in
 * the sandbox would (`echo > link`). OCISBX_WALK_MKDIRS creates missing
 * parents. Only regular files are opened. */
int ocisbx_walk_open_write(const ocisbx_walk_root *root, const char *path, int flags, mode_t mode, int *fd);

/* lstat (or stat with OCISBX_WALK_FOLLOW_LAST) of a confined path; the mount
 * point itself is allowed. */
int ocisbx_walk_stat(const ocisbx_walk_root *root, const char *path, int flags, struct stat *st);

/* Removes a file or symlink (never what it points to); OCISBX_WALK_RMDIR
 * removes an empty directory instead. */
int ocisbx_walk_unlink(const ocisbx_walk_root *root, const char *path, int flags);

/* Renames from to to, both confined; symlinks in either last place are
 * renamed, not followed. OCISBX_WALK_MKDIRS creates to's missing parents. */
int ocisbx_walk_rename(const ocisbx_walk_root *root, const char *from, const char *to, int flags);

/* Gives name in dir_fd (name NULL: dir_fd itself) the host directory's owner
 * and group when the caller is root and they differ (see Ownership above);
 * 0 and nothing done otherwise. Never follows a symlink. */
int ocisbx_walk_adopt(const ocisbx_walk_root *root, int dir_fd, const char *name);

#ifdef __cplusplus
}
#endif
#endif
