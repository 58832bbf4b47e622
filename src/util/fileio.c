/* Reading the files a user names (config, key, token, policy files, the
 * emulator's own): ONE bounded reader with one error style. open(2) of a
 * FIFO for reading blocks until a writer comes, so a file that must be
 * regular is opened non-blocking, checked, then made blocking. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/internal.h"

int ocisbx_open_regular(const char *path, struct stat *st_out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return OCISBX_OPEN_NOT_REGULAR;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (st_out)
        *st_out = st;
    return fd;
}

/* The code of a failure: the caller's one code (OCISBX_READ_CONFIG,
 * OCISBX_READ_IO), else the failure's own. */
static int read_code(unsigned flags, int own)
{
    return (flags & OCISBX_READ_CONFIG) ? OCISBX_ECONFIG : (flags & OCISBX_READ_IO) ? OCISBX_EIO : own;
}

static int open_for_read(const char *path, const char *what, unsigned flags, struct stat *st)
{
    const char *shown = OCISBX_SHOWN(path);
    if ((flags & OCISBX_READ_STDIN) && strcmp(path, "-") == 0) {
        int fd = dup(STDIN_FILENO);
        if (fd < 0 || fstat(fd, st) != 0) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            return ocisbx_fail(read_code(flags, OCISBX_EIO), "%s %s: cannot open: %s", what, "(standard input)", strerror(e));
        }
        return fd;
    }
    int fd;
    if (flags & OCISBX_READ_REGULAR) {
        fd = ocisbx_open_regular(path, st);
        if (fd == OCISBX_OPEN_NOT_REGULAR)
            return ocisbx_fail(read_code(flags, OCISBX_EINVAL), "%s %s: not a regular file", what, shown);
    } else {
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0 && fstat(fd, st) != 0) {
            int e = errno;
            close(fd);
            errno = e;
            fd = -1;
        }
        if (fd >= 0 && S_ISDIR(st->st_mode)) {
            close(fd);
            return ocisbx_fail(read_code(flags, OCISBX_EINVAL), "%s %s: not a regular file", what, shown);
        }
    }
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            return ocisbx_fail(read_code(flags, OCISBX_ENOTFOUND), "%s %s: not found", what, shown);
        return ocisbx_fail(read_code(flags, OCISBX_EIO), "%s %s: cannot open: %s", what, shown, strerror(e));
    }
    return fd;
}

/* Grows b by at least one byte of room; a secret's old buffer is wiped
 * (realloc would leave a copy behind). */
static int grow(ocisbx_buf *b, size_t max, bool secret)
{
    size_t want = b->cap ? b->cap * 2 : 4096;
    if (max < SIZE_MAX - 2 && want > max + 2)
        want = max + 2; /* room for one byte past the limit, and the NUL */
    if (want <= b->len + 1)
        want = b->len + 2;
    if (!secret) {
        char *d = realloc(b->data, want);
        if (!d)
            return ocisbx_fail_nomem();
        b->data = d;
        b->cap = want;
        return 0;
    }
    char *d = malloc(want);
    if (!d)
        return ocisbx_fail_nomem();
    size_t len = b->len;
    if (len)
        memcpy(d, b->data, len);
    ocisbx_buf_wipe_free(b);
    b->data = d;
    b->len = len;
    b->cap = want;
    return 0;
}

int ocisbx_file_read(const char *path, const char *what, size_t max, unsigned flags, ocisbx_file *out)
{
    memset(out, 0, sizeof *out);
    out->flags = flags;
    if (!what)
        what = "file";
    if (!path || !path[0])
        return ocisbx_fail(read_code(flags, OCISBX_EINVAL), "%s: no file name", what);
    int fd = open_for_read(path, what, flags, &out->st);
    if (fd < 0)
        return fd;
    const char *shown = strcmp(path, "-") == 0 && (flags & OCISBX_READ_STDIN) ? "(standard input)" : OCISBX_SHOWN(path);
    bool secret = (flags & OCISBX_READ_SECRET) != 0;
    ocisbx_buf b = OCISBX_BUF_INIT;
    int rc = 0;
    /* a regular file is sized from fstat, so a secret is read without a
     * copy; a pipe grows; either way no more than max + 1 bytes are taken */
    if (S_ISREG(out->st.st_mode) && (uint64_t)out->st.st_size > max) {
        close(fd);
        return ocisbx_fail(read_code(flags, OCISBX_ETOOLARGE), "%s %s: larger than %zu bytes", what, shown, max);
    }
    if (S_ISREG(out->st.st_mode)) {
        b.data = malloc((size_t)out->st.st_size + 2);
        b.cap = b.data ? (size_t)out->st.st_size + 2 : 0;
        if (!b.data)
            rc = ocisbx_fail_nomem();
    }
    while (rc == 0) {
        if (b.len > max) {
            rc = ocisbx_fail(read_code(flags, OCISBX_ETOOLARGE), "%s %s: larger than %zu bytes", what, shown, max);
            break;
        }
        if (b.cap - b.len < 2 && (rc = grow(&b, max, secret)) != 0)
            break;
        ssize_t r = read(fd, b.data + b.len, b.cap - b.len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = ocisbx_fail(read_code(flags, OCISBX_EIO), "%s %s: cannot read: %s", what, shown, strerror(errno));
            break;
        }
        if (r == 0)
            break;
        b.len += (size_t)r;
    }
    close(fd);
    if (rc) {
        if (secret)
            ocisbx_buf_wipe_free(&b);
        else
            ocisbx_buf_free(&b);
        return rc;
    }
    if (!b.data && (rc = grow(&b, max, secret)) != 0)
        return rc;
    b.data[b.len] = '\0';
    out->data = b.data;
    out->len = b.len;
    out->cap = b.cap;
    return 0;
}

void ocisbx_file_wipe(ocisbx_file *f)
{
    if (f && f->data)
        ocisbx_wipe(f->data, f->cap);
}

void ocisbx_file_release(ocisbx_file *f)
{
    if (!f)
        return;
    if (f->flags & OCISBX_READ_SECRET)
        ocisbx_file_wipe(f);
    free(f->data);
    f->data = NULL;
    f->len = f->cap = 0;
}

char *ocisbx_file_detach(ocisbx_file *f, size_t *len)
{
    char *d = f->data;
    if (len)
        *len = f->len;
    f->data = NULL;
    f->len = f->cap = 0;
    return d;
}
