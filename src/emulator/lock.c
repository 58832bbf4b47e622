/* One emulator per state directory: an exclusive flock on <state>/lock, held
 * (the descriptor stays open) until the process exits. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator/emu.h"

int emu_state_lock(const char *state_dir)
{
    if (emu_mkdirs(state_dir) != 0)
        return ocisbx_fail(OCISBX_EIO, "state directory %s: cannot create it: %s", state_dir, strerror(errno));
    /* it holds environment values (secrets): the owner only */
    if (chmod(state_dir, 0700) != 0)
        return ocisbx_fail(OCISBX_EIO, "state directory %s: cannot make it private: %s", state_dir,
                           strerror(errno));
    char *path = ocisbx_asprintf("%s/lock", state_dir);
    if (!path)
        return ocisbx_fail_nomem();
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        int rc = ocisbx_fail(OCISBX_EIO, "cannot open the lock file %s: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        int rc = e == EWOULDBLOCK
                     ? ocisbx_fail(OCISBX_ECONFIG, "state directory %s is in use by another ocisbx-emulator (%s is locked)",
                                   state_dir, path)
                     : ocisbx_fail(OCISBX_EIO, "cannot lock %s: %s", path, strerror(e));
        free(path);
        return rc;
    }
    free(path);
    return 0; /* fd deliberately kept open: the lock lives as long as the process */
}
