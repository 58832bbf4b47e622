/* See patch_memfs.h. */
#include "patch_memfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocisbx/common.h"

static memfs_file *find(memfs *fs, const char *path)
{
    for (size_t i = 0; i < fs->n; i++)
        if (!strcmp(fs->f[i].path, path))
            return &fs->f[i];
    return NULL;
}

int memfs_put(memfs *fs, const char *path, const char *data, size_t len, bool dir)
{
    memfs_file *f = find(fs, path);
    if (!f) {
        if (fs->n == MEMFS_MAX)
            return -1;
        f = &fs->f[fs->n++];
        f->path = strdup(path);
    } else {
        free(f->data);
    }
    f->dir = dir;
    f->len = data ? len : 0;
    f->data = malloc(f->len + 1);
    if (data && len)
        memcpy(f->data, data, len);
    f->data[f->len] = 0;
    return 0;
}

void memfs_free(memfs *fs)
{
    for (size_t i = 0; i < fs->n; i++) {
        free(fs->f[i].path);
        free(fs->f[i].data);
    }
    fs->n = 0;
}

static int cmp_file(const void *a, const void *b)
{
    return strcmp(((const memfs_file *)a)->path, ((const memfs_file *)b)->path);
}

char *memfs_dump(const memfs *fs)
{
    size_t cap = 64;
    for (size_t i = 0; i < fs->n; i++)
        cap += strlen(fs->f[i].path) + 2 * fs->f[i].len + 8;
    memfs_file sorted[MEMFS_MAX];
    memcpy(sorted, fs->f, fs->n * sizeof *sorted);
    qsort(sorted, fs->n, sizeof *sorted, cmp_file);
    char *s = calloc(1, cap);
    size_t at = 0;
    for (size_t i = 0; i < fs->n; i++) {
        size_t pl = strlen(sorted[i].path);
        memcpy(s + at, sorted[i].path, pl);
        at += pl;
        if (sorted[i].dir) {
            memcpy(s + at, "/\n", 2);
            at += 2;
            continue;
        }
        s[at++] = '=';
        for (size_t k = 0; k < sorted[i].len; k++) { /* a NUL byte as \0, so that strcmp sees it all */
            if (!sorted[i].data[k]) {
                s[at++] = '\\';
                s[at++] = '0';
            } else {
                s[at++] = sorted[i].data[k];
            }
        }
        memcpy(s + at, "|\n", 2);
        at += 2;
    }
    s[at] = 0;
    return s;
}

static int m_resolve(void *ud, const char *path, char **abs)
{
    (void)ud;
    if (strstr(path, ".."))
        return ocisbx_error_set(OCISBX_EFORBIDDEN, "outside");
    if (!strncmp(path, "/workspace/", 11)) {
        *abs = strdup(path);
        return *abs ? 0 : OCISBX_ENOMEM;
    }
    if (path[0] == '/')
        return ocisbx_error_set(OCISBX_EFORBIDDEN, "outside");
    size_t n = strlen(path) + 12;
    *abs = malloc(n);
    if (!*abs)
        return OCISBX_ENOMEM;
    snprintf(*abs, n, "/workspace/%s", path);
    return 0;
}

static int m_read(void *ud, const char *path, size_t max, char **data, size_t *len)
{
    memfs *fs = ud;
    fs->reads++;
    memfs_file *f = find(fs, path);
    if (!f)
        return ocisbx_error_set(OCISBX_ENOTFOUND, "no such file");
    if (f->dir)
        return ocisbx_error_set(OCISBX_EISDIR, "a directory");
    if (f->len > max)
        return ocisbx_error_set(OCISBX_ETOOLARGE, "too large");
    *data = malloc(f->len + 1);
    memcpy(*data, f->data, f->len + 1);
    *len = f->len;
    return 0;
}

static int m_write(void *ud, const char *path, const char *data, size_t len)
{
    memfs *fs = ud;
    fs->writes++;
    if (fs->writes == fs->fail_write_at || (fs->failed && fs->fail_undo)) {
        fs->failed = true;
        return ocisbx_error_set(OCISBX_ESERVICE, "the service said no");
    }
    memfs_file *f = find(fs, path);
    if (f && f->dir)
        return ocisbx_error_set(OCISBX_EISDIR, "a directory");
    if (memfs_put(fs, path, data, len, false))
        return ocisbx_error_set(OCISBX_EIO, "the workspace is full");
    return 0;
}

static int m_remove(void *ud, const char *path)
{
    memfs *fs = ud;
    fs->removes++;
    if (fs->removes == fs->fail_remove_at || (fs->failed && fs->fail_undo)) {
        fs->failed = true;
        return ocisbx_error_set(OCISBX_ESERVICE, "cannot remove");
    }
    memfs_file *f = find(fs, path);
    if (!f)
        return ocisbx_error_set(OCISBX_ENOTFOUND, "no such file");
    free(f->path);
    free(f->data);
    *f = fs->f[--fs->n];
    return 0;
}

patch_io memfs_io(memfs *fs)
{
    patch_io io = {m_resolve, m_read, m_write, m_remove, fs};
    return io;
}
