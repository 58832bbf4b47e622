/* Local destinations: temporary file + rename for regular files, written
 * through for devices and FIFOs (see dest.h). */
#include "util/dest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/internal.h"

#define DEST_MAX_LINKS 40

/* The process's umask without changing it (umask(2) would race with other
 * threads creating files): Linux shows it in /proc/self/status. */
static mode_t current_umask(void)
{
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return mask;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        unsigned int m;
        if (sscanf(line, "Umask: %o", &m) == 1) {
            mask = (mode_t)(m & 0777);
            break;
        }
    }
    fclose(f);
    return mask;
}

/* path with its symlinks followed (each link's target taken relative to the
 * link's directory) to the name that is a file, something else, or missing. */
static int resolve(const char *path, const char *what, char **out, struct stat *st, bool *exists)
{
    char *cur = ocisbx_strdup(path);
    if (!cur)
        return ocisbx_fail_nomem();
    for (int links = 0;; links++) {
        if (lstat(cur, st) != 0) {
            if (errno != ENOENT) {
                int rc = ocisbx_fail(OCISBX_EIO, "%s: cannot use %s: %s", what, cur, strerror(errno));
                free(cur);
                return rc;
            }
            *exists = false;
            *out = cur;
            return 0;
        }
        if (!S_ISLNK(st->st_mode)) {
            *exists = true;
            *out = cur;
            return 0;
        }
        if (links == DEST_MAX_LINKS) {
            int rc = ocisbx_fail(OCISBX_EINVAL, "%s: %s: too many levels of symbolic links", what, path);
            free(cur);
            return rc;
        }
        char link[4096];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0) {
            int rc = ocisbx_fail(OCISBX_EIO, "%s: cannot read the link %s: %s", what, cur, strerror(errno));
            free(cur);
            return rc;
        }
        link[n] = 0;
        char *next;
        const char *slash = strrchr(cur, '/');
        if (link[0] == '/' || !slash)
            next = ocisbx_strdup(link);
        else
            next = ocisbx_asprintf("%.*s/%s", (int)(slash - cur), cur, link);
        free(cur);
        if (!next)
            return ocisbx_fail_nomem();
        cur = next;
    }
}

int ocisbx_dest_open(ocisbx_dest *d, const char *path, const char *what)
{
    memset(d, 0, sizeof *d);
    if (!path || !path[0])
        return ocisbx_fail(OCISBX_EINVAL, "%s: no local path", what);
    struct stat st;
    bool exists;
    int rc = resolve(path, what, &d->target, &st, &exists);
    if (rc)
        return rc;
    if (exists && S_ISDIR(st.st_mode)) {
        rc = ocisbx_fail(OCISBX_EINVAL, "%s: %s is a directory", what, d->target);
        ocisbx_dest_abort(d);
        return rc;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        /* A device, FIFO or socket: write through, never replace it. */
        int fd = open(d->target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || !(d->fp = fdopen(fd, "wb"))) {
            rc = ocisbx_fail(OCISBX_EIO, "%s: cannot open %s: %s", what, d->target, strerror(errno));
            if (fd >= 0)
                close(fd);
            ocisbx_dest_abort(d);
            return rc;
        }
        return 0;
    }
    const char *slash = strrchr(d->target, '/');
    if (slash)
        d->tmp = ocisbx_asprintf("%.*s/.%s.ocisbx-XXXXXX", (int)(slash - d->target), d->target, slash + 1);
    else
        d->tmp = ocisbx_asprintf(".%s.ocisbx-XXXXXX", d->target);
    if (!d->tmp) {
        ocisbx_dest_abort(d);
        return ocisbx_fail_nomem();
    }
    int fd = mkstemp(d->tmp);
    if (fd >= 0)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (fd < 0) {
        rc = ocisbx_fail(OCISBX_EIO, "%s: cannot create a file beside %s: %s", what, d->target, strerror(errno));
        free(d->tmp);
        d->tmp = NULL;
        ocisbx_dest_abort(d);
        return rc;
    }
    mode_t mode = exists ? (st.st_mode & 0777) : (0666 & ~current_umask());
    if (fchmod(fd, mode) != 0 || !(d->fp = fdopen(fd, "wb"))) {
        rc = ocisbx_fail(OCISBX_EIO, "%s: cannot prepare %s: %s", what, d->tmp, strerror(errno));
        close(fd);
        ocisbx_dest_abort(d);
        return rc;
    }
    return 0;
}

bool ocisbx_dest_is_through(const ocisbx_dest *d)
{
    return d->fp && !d->tmp;
}

int ocisbx_dest_commit(ocisbx_dest *d, const char *what)
{
    int rc = 0;
    if (d->fp) {
        bool bad = fflush(d->fp) != 0;
        /* durable before it replaces anything */
        if (!bad && d->tmp && fsync(fileno(d->fp)) != 0)
            bad = true;
        int err = errno;
        if (fclose(d->fp) != 0 && !bad) {
            bad = true;
            err = errno;
        }
        d->fp = NULL;
        if (bad)
            rc = ocisbx_fail(OCISBX_EIO, "%s: writing %s: %s", what, d->target, strerror(err));
    }
    if (!rc && d->tmp && rename(d->tmp, d->target) != 0)
        rc = ocisbx_fail(OCISBX_EIO, "%s: cannot rename to %s: %s", what, d->target, strerror(errno));
    if (!rc) {
        free(d->tmp);
        d->tmp = NULL;
    }
    ocisbx_dest_abort(d);
    return rc;
}

void ocisbx_dest_abort(ocisbx_dest *d)
{
    if (d->fp)
        fclose(d->fp);
    d->fp = NULL;
    if (d->tmp)
        unlink(d->tmp);
    free(d->tmp);
    d->tmp = NULL;
    free(d->target);
    d->target = NULL;
}
