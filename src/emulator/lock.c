/* One emulator per state directory: an exclusive flock on <state>/lock, held
 * (the descriptor stays open) until the process exits. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator/base.h"

static bool dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return false;
    bool empty = true;
    struct dirent *e;
    while (empty && (e = readdir(d)) != NULL)
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

int emu_state_lock(const char *state_dir)
{
    if (emu_mkdirs(state_dir) != 0)
        return ocisbx_fail(OCISBX_EIO, "state directory %s: cannot create it: %s", state_dir, strerror(errno));
    /* It holds environment values (secrets): the owner only. A new (empty)
     * directory is made private; an existing one that others can read is
     * left as it is (it may be shared, like /tmp) with a warning. */
    struct stat st;
    if (stat(state_dir, &st) == 0 && (st.st_mode & 077)) {
        if (dir_is_empty(state_dir)) {
            if (chmod(state_dir, 0700) != 0)
                return ocisbx_fail(OCISBX_EIO, "state directory %s: cannot make it private: %s", state_dir,
                                   strerror(errno));
        } else {
            ocisbx_log(OCISBX_LOG_WARN,
                       "state directory %s is readable by others (mode %03o) and holds environment values; "
                       "chmod 700 it",
                       state_dir, (unsigned)(st.st_mode & 0777));
        }
    }
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
                     ? ocisbx_fail(OCISBX_ECONFIG,
                                   "state directory %s is in use by another ocisbx-emulator (%s is locked)",
                                   state_dir, path)
                     : ocisbx_fail(OCISBX_EIO, "cannot lock %s: %s", path, strerror(e));
        free(path);
        return rc;
    }
    free(path);
    return 0; /* fd deliberately kept open: the lock lives as long as the process */
}
