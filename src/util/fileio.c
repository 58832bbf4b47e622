/* Opening the files a user names (config, key, token files) without hanging
 * on a FIFO or a device: open(2) of a FIFO for reading blocks until a writer
 * comes, so the file is opened non-blocking, checked, then made blocking. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
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

int ocisbx_file_read_all(const char *path, size_t max, const char *what, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (!path || !path[0])
        return ocisbx_fail(OCISBX_EINVAL, "%s: no file name", what);
    const char *shown = OCISBX_SHOWN(path);
    struct stat st;
    int fd = ocisbx_open_regular(path, &st);
    if (fd == OCISBX_OPEN_NOT_REGULAR)
        return ocisbx_fail(OCISBX_EINVAL, "%s %s: not a regular file", what, shown);
    if (fd < 0) {
        int code = errno == ENOENT || errno == ENOTDIR ? OCISBX_ENOTFOUND : OCISBX_EIO;
        return ocisbx_fail(code, "%s %s: %s", what, shown, strerror(errno));
    }
    if ((uint64_t)st.st_size > max) {
        close(fd);
        return ocisbx_fail(OCISBX_ETOOLARGE, "%s %s: %lld bytes, more than the %zu allowed", what, shown,
                           (long long)st.st_size, max);
    }
    size_t cap = (size_t)st.st_size, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return ocisbx_fail_nomem();
    }
    /* the file may grow while read: never past what was sized */
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int rc = ocisbx_fail(OCISBX_EIO, "%s %s: %s", what, shown, strerror(errno));
            ocisbx_wipe(buf, cap);
            free(buf);
            close(fd);
            return rc;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}
