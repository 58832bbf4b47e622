/* Fuzz target for the apply_patch engine: the parser, the matcher and the
 * commit with its undo, over an in-memory workspace. The first byte picks
 * which write (or removal) fails, the rest is the patch (at most 64 KiB).
 * No crash, no leak; a refused patch has a code and a message (an
 * invalid_patch its line); and whenever the patch fails, the workspace is
 * exactly as it was, unless the undo itself met a failure and the message
 * names the files it could not restore. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness/patch.h"
#include "ocisbx/common.h"
#include "patch_memfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT (64 * 1024)

static void seed(memfs *fs)
{
    static const char *const files[][2] = {
        {"/workspace/a.txt", "alpha\nbeta\ngamma\n"},
        {"/workspace/b.py", "def f():\n    pass\n\ndef g():\n    pass\n"},
        {"/workspace/crlf.txt", "one\r\ntwo\r\nthree\r\n"},
        {"/workspace/no-newline.txt", "last line"},
        {"/workspace/empty.txt", ""},
        {"/workspace/src/main.c", "int main(void)\n{\n    return 0;\n}\n"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        memfs_put(fs, files[i][0], files[i][1], strlen(files[i][1]), false);
    memfs_put(fs, "/workspace/bin.dat", "a\0b\n", 4, false);
    memfs_put(fs, "/workspace/dir", NULL, 0, true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size || size > MAX_INPUT)
        return 0;
    memfs fs;
    memset(&fs, 0, sizeof fs);
    seed(&fs);
    fs.fail_write_at = data[0] & 7;
    fs.fail_remove_at = (data[0] >> 3) & 3;
    char *before = memfs_dump(&fs);
    patch_io io = memfs_io(&fs);
    patch *p = NULL;
    patch_error e;
    int rc = patch_parse((const char *)data + 1, size - 1, &p, &e);
    if (rc && (!e.code || !e.msg[0] || (rc == OCISBX_EINVAL && (strcmp(e.code, "invalid_patch") || !e.line))))
        abort();
    patch_plan plan = {0};
    if (!rc) {
        if (!p->n_ops)
            abort();
        rc = patch_prepare(p, &io, &plan, &e);
        if (rc && (fs.writes || fs.removes || plan.n || !e.code || !e.msg[0]))
            abort(); /* prepare writes nothing */
    }
    if (!rc) {
        rc = patch_commit(&plan, &io, &e);
        if (rc && (!e.code || !e.msg[0]))
            abort();
    }
    char *after = memfs_dump(&fs);
    bool restored = !rc || !e.undo_failed;
    if (rc && restored != !strcmp(before, after))
        abort(); /* a failed patch leaves the workspace as it was, or says what it could not restore */
    free(before);
    free(after);
    patch_plan_free(&plan);
    patch_free(p);
    memfs_free(&fs);
    return 0;
}
