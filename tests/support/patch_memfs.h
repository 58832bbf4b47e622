/* An in-memory workspace behind a patch_io (src/harness/patch.h), for the
 * apply_patch engine's unit test and fuzz target: files and directories by
 * absolute path, counts of the calls, and writes or removals that fail on
 * request (to show that a patch applies whole or not at all). */
#ifndef OCISBX_TEST_PATCH_MEMFS_H
#define OCISBX_TEST_PATCH_MEMFS_H

#include <stdbool.h>
#include <stddef.h>

#include "harness/patch.h"

#define MEMFS_MAX 32

typedef struct memfs_file {
    char *path, *data;
    size_t len;
    bool dir;
} memfs_file;

typedef struct memfs {
    memfs_file f[MEMFS_MAX];
    size_t n;
    int reads, writes, removes;
    int fail_write_at, fail_remove_at; /* the 1-based call that fails (0: none) */
    bool fail_undo;                    /* every write and removal after a failure fails too */
    bool failed;
} memfs;

/* Adds or replaces a file (data NULL with dir: a directory); 0, or -1 when full. */
int memfs_put(memfs *fs, const char *path, const char *data, size_t len, bool dir);
void memfs_free(memfs *fs);
/* The whole state as text in path order ("path=content|\n", "path/\n"; a
 * NUL byte as "\0"); free(). */
char *memfs_dump(const memfs *fs);
/* resolve: "/workspace/..." as it is, a relative path under /workspace;
 * another absolute path or any ".." is OCISBX_EFORBIDDEN. */
patch_io memfs_io(memfs *fs);

#endif
