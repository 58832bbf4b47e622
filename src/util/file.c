/* Small local files read whole (see file.h). */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/internal.h"

int ocisbx_file_read_all(const char *path, size_t max, const char *what, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    char shown[300];
    ocisbx_escape_shown(path ? path : "(null)", shown, sizeof shown);
    if (!path || !path[0]) return ocisbx_fail(OCISBX_EINVAL, "%s: no file name", what);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
     * below anyway, and cleared for the regular file's reads. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int code = errno == ENOENT || errno == ENOTDIR ? OCISBX_ENOTFOUND : OCISBX_EIO;
        return ocisbx_fail(code, "%s %s: %s", what, shown, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int rc = ocisbx_fail(OCISBX_EIO, "%s %s: %s", what, shown, strerror(errno));
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return ocisbx_fail(OCISBX_EINVAL, "%s %s: not a regular file (%s)", what, shown,
                           S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket");
    }
    if ((uint64_t)st.st_size > max) {
        close(fd);
        return ocisbx_fail(OCISBX_ETOOLARGE, "%s %s: %lld bytes, more than the %zu allowed", what, shown,
                           (long long)st.st_size, max);
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    size_t cap = (size_t)st.st_size, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return ocisbx_fail_nomem();
    }
    /* the file may grow while read: never past what was sized */
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int rc = ocisbx_fail(OCISBX_EIO, "%s %s: %s", what, shown, strerror(errno));
            ocisbx_wipe(buf, cap);
            free(buf);
            close(fd);
            return rc;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}
