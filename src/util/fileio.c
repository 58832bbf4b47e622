/* Opening the files a user names (config, key, token files) without hanging
 * on a FIFO or a device: open(2) of a FIFO for reading blocks until a writer
 * comes, so the file is opened non-blocking, checked, then made blocking. */
#include <errno.h>
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
