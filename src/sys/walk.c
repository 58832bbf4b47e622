/* The confined path walk (see walk.h). */
#include "sys/walk.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/internal.h"

static _Thread_local ocisbx_walk_reason t_reason;

ocisbx_walk_reason ocisbx_walk_last_reason(void)
{
    return t_reason;
}

static int ok(void)
{
    t_reason = OCISBX_WALK_OK;
    return 0;
}

/* Sets the reason, the error object and returns the code. e: the errno of
 * an OCISBX_WALK_IO failure. The path is shown escaped (one line). */
static int fail(ocisbx_walk_reason r, const char *path, int e)
{
    char shown[512];
    ocisbx_escape_shown(path ? path : "", shown, sizeof shown);
    t_reason = r;
    switch (r) {
    case OCISBX_WALK_OUTSIDE: return ocisbx_fail(OCISBX_EFORBIDDEN, "%s leads outside the workspace", shown);
    case OCISBX_WALK_MISSING: return ocisbx_fail(OCISBX_ENOTFOUND, "%s: no such file or directory", shown);
    case OCISBX_WALK_NOTDIR:
        return ocisbx_fail(OCISBX_EINVAL, "%s: a component of the path is not a directory", shown);
    case OCISBX_WALK_ISDIR: return ocisbx_fail(OCISBX_EINVAL, "%s is a directory", shown);
    case OCISBX_WALK_LOOP:
        return ocisbx_fail(OCISBX_EINVAL, "%s: too many levels of symbolic links or directories", shown);
    case OCISBX_WALK_RACE: return ocisbx_fail(OCISBX_ECONFLICT, "%s changed while it was resolved; retry", shown);
    case OCISBX_WALK_EXISTS: return ocisbx_fail(OCISBX_ECONFLICT, "%s already exists", shown);
    case OCISBX_WALK_NOTEMPTY: return ocisbx_fail(OCISBX_ECONFLICT, "%s: directory not empty", shown);
    case OCISBX_WALK_BADARG: return ocisbx_fail(OCISBX_EINVAL, "%s: not a regular file, or a bad argument", shown);
    case OCISBX_WALK_OK:
    case OCISBX_WALK_IO: break;
    }
    t_reason = OCISBX_WALK_IO;
    if (e == ENOMEM)
        return ocisbx_fail_nomem();
    return ocisbx_fail(OCISBX_EIO, "%s: %s", shown, strerror(e));
}

/* ---- ownership ----------------------------------------------------------------- */

int ocisbx_walk_adopt(const ocisbx_walk_root *root, int dir_fd, const char *name)
{
    if (!root || root->dir_fd < 0 || dir_fd < 0)
        return fail(OCISBX_WALK_BADARG, name, 0);
    if (geteuid() != 0)
        return ok();
    struct stat want, have;
    if (fstat(root->dir_fd, &want) != 0)
        return fail(OCISBX_WALK_IO, name, errno);
    int r = name ? fstatat(dir_fd, name, &have, AT_SYMLINK_NOFOLLOW) : fstat(dir_fd, &have);
    if (r != 0)
        return fail(errno == ENOENT ? OCISBX_WALK_MISSING : OCISBX_WALK_IO, name, errno);
    if (have.st_uid == want.st_uid && have.st_gid == want.st_gid)
        return ok();
    r = name ? fchownat(dir_fd, name, want.st_uid, want.st_gid, AT_SYMLINK_NOFOLLOW)
             : fchown(dir_fd, want.st_uid, want.st_gid);
    if (r != 0)
        return fail(OCISBX_WALK_IO, name, errno);
    return ok();
}

/* ---- the walk ------------------------------------------------------------------- */

typedef struct walk {
    int fds[OCISBX_WALK_MAX_DEPTH]; /* fds[0]: the root's fd (not ours); depth -1: the model root */
    int depth;
} walk;

static void pop_to(walk *w, int depth)
{
    while (w->depth > depth) {
        if (w->depth > 0)
            close(w->fds[w->depth]);
        w->depth--;
    }
}

typedef struct pending {
    char **v; /* a stack: the next component is on top (the end) */
    size_t n, cap;
} pending;

static void pending_free(pending *s)
{
    while (s->n > 0)
        free(s->v[--s->n]);
    free(s->v);
}

/* Puts the components of text on top of the stack, the first one topmost. */
static int push_components(pending *s, const char *text)
{
    const char *end = text + strlen(text);
    while (end > text) {
        const char *b = end;
        while (b > text && b[-1] != '/')
            b--;
        if (end > b) {
            if (s->n == s->cap) {
                size_t nc = s->cap ? s->cap * 2 : 16;
                char **nv = realloc(s->v, nc * sizeof *nv);
                if (!nv)
                    return -1;
                s->v = nv;
                s->cap = nc;
            }
            char *c = ocisbx_strndup(b, (size_t)(end - b));
            if (!c)
                return -1;
            s->v[s->n++] = c;
        }
        end = b > text ? b - 1 : b;
    }
    return 0;
}

/* The mount point's name ("workspace"), or NULL when root->mount is not one
 * absolute component. */
static const char *mount_name(const ocisbx_walk_root *root)
{
    const char *m = root->mount ? root->mount : "/workspace";
    if (m[0] != '/' || !m[1] || strchr(m + 1, '/') || !strcmp(m + 1, ".") || !strcmp(m + 1, ".."))
        return NULL;
    return m + 1;
}

/* A symlink met on the way (name in dfd): its target's components go on
 * the pending stack (an absolute one restarts at the model root). */
static ocisbx_walk_reason follow_link(walk *w, pending *s, int dfd, const char *name, int *links, int *err)
{
    char target[PATH_MAX];
    ssize_t tl = readlinkat(dfd, name, target, sizeof target - 1);
    if (tl <= 0) {
        *err = tl < 0 ? errno : EINVAL;
        return tl < 0 && errno == EINVAL ? OCISBX_WALK_RACE : OCISBX_WALK_IO;
    }
    if (++*links > OCISBX_WALK_MAX_LINKS)
        return OCISBX_WALK_LOOP;
    target[tl] = '\0';
    if (target[0] == '/')
        pop_to(w, -1);
    if (push_components(s, target) != 0) {
        *err = ENOMEM;
        return OCISBX_WALK_IO;
    }
    return OCISBX_WALK_OK;
}

/* Enters the directory name of dfd (st: what fstatat found, NULL when it
 * does not exist: then made with OCISBX_WALK_MKDIRS, else missing). */
static ocisbx_walk_reason enter_dir(const ocisbx_walk_root *root, walk *w, int dfd, const char *name,
                                    const struct stat *st, int flags, int *err)
{
    if (!st) {
        if (!(flags & OCISBX_WALK_MKDIRS))
            return OCISBX_WALK_MISSING;
        if ((mkdirat(dfd, name, 0755) != 0 && errno != EEXIST) || ocisbx_walk_adopt(root, dfd, name) != 0) {
            *err = errno;
            return OCISBX_WALK_IO;
        }
    } else if (!S_ISDIR(st->st_mode)) {
        return OCISBX_WALK_NOTDIR;
    }
    if (w->depth + 1 >= OCISBX_WALK_MAX_DEPTH)
        return OCISBX_WALK_LOOP;
    /* O_NOFOLLOW: a symlink swapped in since fstatat fails here (ELOOP) */
    int nfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (nfd < 0) {
        int e = errno;
        *err = e;
        return e == ENOENT    ? OCISBX_WALK_MISSING
               : e == ENOTDIR ? OCISBX_WALK_NOTDIR
               : e == ELOOP   ? OCISBX_WALK_RACE
                              : OCISBX_WALK_IO;
    }
    w->fds[++w->depth] = nfd;
    return OCISBX_WALK_OK;
}

/* Walks path. want_parent: the last component is not entered but returned in
 * *last (a symlink there is followed only with OCISBX_WALK_FOLLOW_LAST);
 * when the path ends on a directory ("/workspace", "a/.", "a/.."), *last
 * stays NULL. Otherwise every component is entered. On success w's top is
 * the directory reached. Returns a reason; *err the errno of an IO one. */
static ocisbx_walk_reason walk_path(const ocisbx_walk_root *root, const char *path, bool want_parent, int flags,
                                    walk *w, char **last, int *err)
{
    pending s = {0};
    int links = 0;
    ocisbx_walk_reason rc = OCISBX_WALK_OK;
    const char *mname = mount_name(root);
    *err = 0;
    *last = NULL;
    w->fds[0] = root->dir_fd;
    w->depth = path[0] == '/' ? -1 : 0;
    if (!mname) {
        *err = EINVAL;
        return OCISBX_WALK_BADARG;
    }
    if (push_components(&s, path) != 0) {
        *err = ENOMEM;
        rc = OCISBX_WALK_IO;
        goto out;
    }
    while (s.n > 0) {
        char *name = s.v[--s.n];
        bool is_last = s.n == 0;
        if (!strcmp(name, ".")) {
            free(name);
            continue;
        }
        if (!strcmp(name, "..")) {
            free(name);
            pop_to(w, w->depth > -1 ? w->depth - 1 : -1);
            continue;
        }
        if (w->depth < 0) {
            bool is_mount = !strcmp(name, mname);
            free(name);
            if (!is_mount) {
                rc = OCISBX_WALK_OUTSIDE;
                goto out;
            }
            w->depth = 0;
            continue;
        }
        int dfd = w->fds[w->depth];
        struct stat st;
        bool exists = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (!exists && errno != ENOENT) {
            *err = errno;
            free(name);
            rc = errno == ENOTDIR ? OCISBX_WALK_RACE : OCISBX_WALK_IO;
            goto out;
        }
        if (exists && S_ISLNK(st.st_mode) && (!is_last || !want_parent || (flags & OCISBX_WALK_FOLLOW_LAST))) {
            rc = follow_link(w, &s, dfd, name, &links, err);
            free(name);
            if (rc != OCISBX_WALK_OK)
                goto out;
            continue;
        }
        if (is_last && want_parent) {
            *last = name;
            goto out;
        }
        rc = enter_dir(root, w, dfd, name, exists ? &st : NULL, flags, err);
        free(name);
        if (rc != OCISBX_WALK_OK)
            goto out;
    }
out:
    pending_free(&s);
    if (rc == OCISBX_WALK_OK && w->depth < 0) /* ended at the model root (a link to "/") */
        rc = OCISBX_WALK_OUTSIDE;
    if (rc != OCISBX_WALK_OK) {
        free(*last);
        *last = NULL;
        pop_to(w, 0);
    }
    return rc;
}

/* The walk's top directory as an fd of the caller's; the rest closed. */
static int take_top(walk *w, int *fd, const char *path)
{
    if (w->depth == 0) {
        *fd = fcntl(w->fds[0], F_DUPFD_CLOEXEC, 0);
        if (*fd < 0)
            return fail(OCISBX_WALK_IO, path, errno);
        return 0;
    }
    *fd = w->fds[w->depth];
    w->depth--;
    pop_to(w, 0);
    return 0;
}

static bool root_ok(const ocisbx_walk_root *root, const char *path)
{
    return root && root->dir_fd >= 0 && path;
}

/* The directory holding the last component (name may be NULL when the path
 * ends on a directory, which *dfd then is). */
static int resolve(const ocisbx_walk_root *root, const char *path, int flags, int *dfd, char **name)
{
    walk w;
    int e = 0;
    ocisbx_walk_reason r = walk_path(root, path, true, flags, &w, name, &e);
    if (r != OCISBX_WALK_OK)
        return fail(r, path, e);
    int rc = take_top(&w, dfd, path);
    if (rc) {
        free(*name);
        *name = NULL;
        pop_to(&w, 0);
    }
    return rc;
}

int ocisbx_walk_parent(const ocisbx_walk_root *root, const char *path, int flags, int *dir_fd, char **name)
{
    if (dir_fd)
        *dir_fd = -1;
    if (name)
        *name = NULL;
    if (!root_ok(root, path) || !dir_fd || !name)
        return fail(OCISBX_WALK_BADARG, path, 0);
    int rc = resolve(root, path, flags, dir_fd, name);
    if (rc)
        return rc;
    if (!*name) {
        close(*dir_fd);
        *dir_fd = -1;
        return fail(OCISBX_WALK_ISDIR, path, 0);
    }
    return ok();
}

int ocisbx_walk_open_dir(const ocisbx_walk_root *root, const char *path, int flags, int *fd)
{
    if (fd)
        *fd = -1;
    if (!root_ok(root, path) || !fd)
        return fail(OCISBX_WALK_BADARG, path, 0);
    walk w;
    char *last = NULL;
    int e = 0;
    ocisbx_walk_reason r = walk_path(root, path, false, flags & OCISBX_WALK_MKDIRS, &w, &last, &e);
    if (r != OCISBX_WALK_OK)
        return fail(r, path, e);
    int rc = take_top(&w, fd, path);
    return rc ? rc : ok();
}

int ocisbx_walk_open_read(const ocisbx_walk_root *root, const char *path, int *fd)
{
    if (fd)
        *fd = -1;
    if (!root_ok(root, path) || !fd)
        return fail(OCISBX_WALK_BADARG, path, 0);
    int dfd = -1;
    char *name = NULL;
    int rc = resolve(root, path, OCISBX_WALK_FOLLOW_LAST, &dfd, &name);
    if (rc)
        return rc;
    if (!name) {
        close(dfd);
        return fail(OCISBX_WALK_ISDIR, path, 0);
    }
    /* O_NONBLOCK: a FIFO does not block the open; cleared below */
    int f = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    int e = errno;
    free(name);
    close(dfd);
    if (f < 0)
        return fail(e == ENOENT ? OCISBX_WALK_MISSING : e == ELOOP ? OCISBX_WALK_RACE : OCISBX_WALK_IO, path, e);
    struct stat st;
    memset(&st, 0, sizeof st);
    if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode)) {
        e = errno;
        bool dir = S_ISDIR(st.st_mode);
        close(f);
        return fail(dir ? OCISBX_WALK_ISDIR : OCISBX_WALK_BADARG, path, e);
    }
    int fl = fcntl(f, F_GETFL);
    if (fl < 0 || fcntl(f, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        e = errno;
        close(f);
        return fail(OCISBX_WALK_IO, path, e);
    }
    *fd = f;
    return ok();
}

int ocisbx_walk_open_write(const ocisbx_walk_root *root, const char *path, int flags, mode_t mode, int *fd)
{
    if (fd)
        *fd = -1;
    if (!root_ok(root, path) || !fd)
        return fail(OCISBX_WALK_BADARG, path, 0);
    int dfd = -1;
    char *name = NULL;
    int rc = resolve(root, path, OCISBX_WALK_FOLLOW_LAST | (flags & OCISBX_WALK_MKDIRS), &dfd, &name);
    if (rc)
        return rc;
    if (!name) {
        close(dfd);
        return fail(OCISBX_WALK_ISDIR, path, 0);
    }
    int f = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
    int e = errno;
    if (f >= 0) {
        rc = ocisbx_walk_adopt(root, dfd, name);
        if (rc) {
            close(f);
            f = -1;
        }
        goto done;
    }
    if (e != EEXIST) {
        rc = fail(e == ENOENT ? OCISBX_WALK_MISSING : OCISBX_WALK_IO, path, e);
        goto done;
    }
    if (flags & OCISBX_WALK_EXCL) {
        rc = fail(OCISBX_WALK_EXISTS, path, 0);
        goto done;
    }
    f = openat(dfd, name,
               O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
                   ((flags & OCISBX_WALK_APPEND) ? O_APPEND : 0));
    e = errno;
    if (f < 0) {
        rc = fail(e == ENOENT   ? OCISBX_WALK_RACE /* removed since */
                  : e == ELOOP  ? OCISBX_WALK_RACE
                  : e == EISDIR ? OCISBX_WALK_ISDIR
                  : e == ENXIO  ? OCISBX_WALK_BADARG /* a FIFO without a reader */
                                : OCISBX_WALK_IO,
                  path, e);
        goto done;
    }
    struct stat st;
    if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode)) {
        e = errno;
        close(f);
        f = -1;
        rc = fail(OCISBX_WALK_BADARG, path, e);
        goto done;
    }
    int fl = fcntl(f, F_GETFL);
    if (fl < 0 || fcntl(f, F_SETFL, fl & ~O_NONBLOCK) != 0 ||
        (!(flags & OCISBX_WALK_APPEND) && ftruncate(f, 0) != 0)) {
        e = errno;
        close(f);
        f = -1;
        rc = fail(OCISBX_WALK_IO, path, e);
    }
done:
    free(name);
    close(dfd);
    if (f < 0)
        return rc;
    *fd = f;
    return ok();
}

int ocisbx_walk_stat(const ocisbx_walk_root *root, const char *path, int flags, struct stat *st)
{
    if (!root_ok(root, path) || !st)
        return fail(OCISBX_WALK_BADARG, path, 0);
    int dfd = -1;
    char *name = NULL;
    int rc = resolve(root, path, flags & OCISBX_WALK_FOLLOW_LAST, &dfd, &name);
    if (rc)
        return rc;
    int r = name ? fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) : fstat(dfd, st);
    int e = errno;
    free(name);
    close(dfd);
    if (r != 0)
        return fail(e == ENOENT ? OCISBX_WALK_MISSING : OCISBX_WALK_IO, path, e);
    return ok();
}

static ocisbx_walk_reason reason_of(int e)
{
    switch (e) {
    case ENOENT: return OCISBX_WALK_MISSING;
    case ENOTDIR: return OCISBX_WALK_NOTDIR;
    case EISDIR: return OCISBX_WALK_ISDIR;
    case ENOTEMPTY:
    case EEXIST: return OCISBX_WALK_NOTEMPTY;
    case EINVAL: return OCISBX_WALK_BADARG;
    case ELOOP: return OCISBX_WALK_LOOP;
    default: return OCISBX_WALK_IO;
    }
}

int ocisbx_walk_unlink(const ocisbx_walk_root *root, const char *path, int flags)
{
    if (!root_ok(root, path))
        return fail(OCISBX_WALK_BADARG, path, 0);
    int dfd = -1;
    char *name = NULL;
    int rc = resolve(root, path, 0, &dfd, &name);
    if (rc)
        return rc;
    if (!name) {
        close(dfd);
        return fail(OCISBX_WALK_ISDIR, path, 0); /* the mount point, "." or ".." */
    }
    int r = unlinkat(dfd, name, (flags & OCISBX_WALK_RMDIR) ? AT_REMOVEDIR : 0);
    int e = errno;
    free(name);
    close(dfd);
    if (r != 0)
        return fail(reason_of(e), path, e);
    return ok();
}

int ocisbx_walk_rename(const ocisbx_walk_root *root, const char *from, const char *to, int flags)
{
    if (!root_ok(root, from) || !to)
        return fail(OCISBX_WALK_BADARG, from, 0);
    int fdfd = -1, tdfd = -1;
    char *fname = NULL, *tname = NULL;
    int rc = ocisbx_walk_parent(root, from, 0, &fdfd, &fname);
    if (!rc)
        rc = ocisbx_walk_parent(root, to, flags & OCISBX_WALK_MKDIRS, &tdfd, &tname);
    if (!rc && renameat(fdfd, fname, tdfd, tname) != 0) {
        int e = errno;
        rc = fail(reason_of(e), e == ENOENT ? from : to, e);
    }
    if (fdfd >= 0)
        close(fdfd);
    if (tdfd >= 0)
        close(tdfd);
    free(fname);
    free(tname);
    return rc ? rc : ok();
}
