/* The confined path walk (src/sys/walk.h): "..", absolute and relative
 * symlinks inside, symlinks leading outside refused (relative, absolute, to
 * "/", dangling), loops, a missing component, a non-directory component, and
 * the file operations built on it (read, write with parents, stat, list,
 * rename, unlink), none of which touches anything outside the root. As root,
 * what the walk creates belongs to the root directory's owner. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/walk.h"
#include "test_assert.h"

typedef struct fx {
    char base[64]; /* base/ws is the root, base/outside is not */
    char ws[96];
    char outside[96];
    int ws_fd;
    ocisbx_walk_root root;
} fx;

static void put(const char *dir, const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void link_in(const char *dir, const char *target, const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    assert_int_equal(symlink(target, p), 0);
}

static bool host_exists(const char *dir, const char *name)
{
    char p[256];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return lstat(p, &st) == 0;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->base, sizeof f->base, "/tmp/test_sys_walk_XXXXXX");
    assert_non_null(mkdtemp(f->base));
    snprintf(f->ws, sizeof f->ws, "%s/ws", f->base);
    snprintf(f->outside, sizeof f->outside, "%s/outside", f->base);
    assert_int_equal(mkdir(f->ws, 0755), 0);
    assert_int_equal(mkdir(f->outside, 0755), 0);
    put(f->outside, "secret", "SECRET");
    char a[128];
    snprintf(a, sizeof a, "%s/a", f->ws);
    assert_int_equal(mkdir(a, 0755), 0);
    put(a, "f", "hello");
    link_in(a, "f", "rel");                    /* relative, inside */
    link_in(f->ws, "/workspace/a/f", "abs");   /* absolute, inside */
    link_in(f->ws, "a", "dirlink");            /* to a directory */
    link_in(f->ws, "../outside/secret", "up"); /* relative, outside */
    link_in(f->ws, "../outside", "updir");     /* a directory outside */
    link_in(f->ws, f->outside, "hostabs");     /* absolute host path: outside as the sandbox sees it */
    link_in(f->ws, "/", "slash");              /* the model root */
    link_in(f->ws, "/workspace/../workspace/a", "absdots");
    link_in(f->ws, "l2", "l1"); /* a loop */
    link_in(f->ws, "l1", "l2");
    link_in(f->ws, "self", "self");
    link_in(f->ws, "nothere", "dangling");         /* dangling, inside */
    link_in(f->ws, "/elsewhere/x", "danglingout"); /* dangling, outside */
    link_in(f->ws, "a/new", "wlink");              /* for writes through a link */
    f->ws_fd = open(f->ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(f->ws_fd >= 0);
    f->root.dir_fd = f->ws_fd;
    f->root.mount = "/workspace";
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    close(f->ws_fd);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->base);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* Reads path through the walk; returns the code, the content in out. */
static int rd(fx *f, const char *path, char *out, size_t cap)
{
    int fd = -1;
    out[0] = '\0';
    int rc = ocisbx_walk_open_read(&f->root, path, &fd);
    if (rc) {
        assert_int_equal(fd, -1);
        return rc;
    }
    ssize_t n = read(fd, out, cap - 1);
    assert_true(n >= 0);
    out[n] = '\0';
    close(fd);
    return 0;
}

static void t_inside(void **state)
{
    fx *f = *state;
    char b[64];
    const char *ok[] = {"a/f",
                        "/workspace/a/f",
                        "a/rel",
                        "abs",
                        "dirlink/f",
                        "dirlink/rel",
                        "a/../a/f",
                        "/workspace/../workspace/a/f",
                        "/workspace/a/./f",
                        "absdots/f",
                        "a//f",
                        "../workspace/a/f",
                        "/../../workspace/a/f"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        int rc = rd(f, ok[i], b, sizeof b);
        if (rc)
            fprintf(stderr, "%s: %s\n", ok[i], test_last_msg());
        assert_int_equal(rc, 0);
        assert_string_equal(b, "hello");
        assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_OK);
    }
}

static void t_outside(void **state)
{
    fx *f = *state;
    char b[64];
    const char *bad[] = {"up",
                         "updir/secret",
                         "hostabs/secret",
                         "slash/etc/passwd",
                         "../outside/secret",
                         "/etc/passwd",
                         "/workspace/../outside/secret",
                         "a/../../outside/secret",
                         "danglingout",
                         "/",
                         "slash"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = rd(f, bad[i], b, sizeof b);
        if (rc != OCISBX_EFORBIDDEN)
            fprintf(stderr, "%s: %d %s\n", bad[i], rc, test_last_msg());
        assert_int_equal(rc, OCISBX_EFORBIDDEN);
        assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_OUTSIDE);
        assert_null(strstr(b, "SECRET"));
        test_assert_msg_has("outside");
    }
    /* nothing is created outside by a write, with or without parents */
    int fd = -1;
    assert_int_equal(ocisbx_walk_open_write(&f->root, "updir/made", OCISBX_WALK_MKDIRS, 0644, &fd),
                     OCISBX_EFORBIDDEN);
    assert_int_equal(ocisbx_walk_open_write(&f->root, "danglingout", OCISBX_WALK_MKDIRS, 0644, &fd),
                     OCISBX_EFORBIDDEN);
    assert_int_equal(fd, -1);
    assert_false(host_exists(f->outside, "made"));
    assert_false(host_exists(f->base, "elsewhere"));
    assert_int_equal(ocisbx_walk_open_dir(&f->root, "updir", 0, &fd), OCISBX_EFORBIDDEN);
    assert_int_equal(ocisbx_walk_rename(&f->root, "a/f", "updir/stolen", 0), OCISBX_EFORBIDDEN);
    assert_false(host_exists(f->outside, "stolen"));
    assert_true(host_exists(f->ws, "a/f"));
    /* another mount point name: "/workspace" is then outside */
    ocisbx_walk_root other = {f->ws_fd, "/data"};
    assert_int_equal(ocisbx_walk_open_read(&other, "/data/a/f", &fd), 0);
    close(fd);
    fd = -1;
    assert_int_equal(ocisbx_walk_open_read(&other, "/workspace/a/f", &fd), OCISBX_EFORBIDDEN);
    ocisbx_walk_root bad_mount = {f->ws_fd, "/a/b"};
    assert_int_equal(ocisbx_walk_open_read(&bad_mount, "a/f", &fd), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_BADARG);
}

static void t_loops_missing_notdir(void **state)
{
    fx *f = *state;
    char b[64];
    assert_int_equal(rd(f, "l1", b, sizeof b), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_LOOP);
    assert_int_equal(rd(f, "self/x", b, sizeof b), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_LOOP);

    assert_int_equal(rd(f, "a/nope/f", b, sizeof b), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_MISSING);
    assert_int_equal(rd(f, "a/nope", b, sizeof b), OCISBX_ENOTFOUND);
    assert_int_equal(rd(f, "dangling", b, sizeof b), OCISBX_ENOTFOUND);

    assert_int_equal(rd(f, "a/f/x", b, sizeof b), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_NOTDIR);
    assert_int_equal(rd(f, "a/rel/x", b, sizeof b), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_NOTDIR);

    /* a directory where a file is wanted */
    assert_int_equal(rd(f, "a", b, sizeof b), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_ISDIR);
    assert_int_equal(rd(f, "/workspace", b, sizeof b), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_ISDIR);
    assert_int_equal(rd(f, "dirlink", b, sizeof b), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_ISDIR);

    /* a FIFO is refused without blocking */
    char fifo[160];
    snprintf(fifo, sizeof fifo, "%s/fifo", f->ws);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    assert_int_equal(rd(f, "fifo", b, sizeof b), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_BADARG);
    int fd = -1;
    assert_int_equal(ocisbx_walk_open_write(&f->root, "fifo", 0, 0644, &fd), OCISBX_EINVAL);
    unlink(fifo);

    /* bad arguments */
    assert_int_equal(ocisbx_walk_open_read(NULL, "a/f", &fd), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_open_read(&f->root, NULL, &fd), OCISBX_EINVAL);
}

static void t_write(void **state)
{
    fx *f = *state;
    int fd = -1;
    char b[64];
    /* parents are created only when asked */
    assert_int_equal(ocisbx_walk_open_write(&f->root, "x/y/z.txt", 0, 0644, &fd), OCISBX_ENOTFOUND);
    assert_false(host_exists(f->ws, "x"));
    assert_int_equal(ocisbx_walk_open_write(&f->root, "/workspace/x/y/z.txt", OCISBX_WALK_MKDIRS, 0644, &fd), 0);
    assert_int_equal(write(fd, "zz", 2), 2);
    close(fd);
    assert_int_equal(rd(f, "x/y/z.txt", b, sizeof b), 0);
    assert_string_equal(b, "zz");
    /* truncates, or appends */
    assert_int_equal(ocisbx_walk_open_write(&f->root, "x/y/z.txt", 0, 0644, &fd), 0);
    assert_int_equal(write(fd, "1", 1), 1);
    close(fd);
    assert_int_equal(ocisbx_walk_open_write(&f->root, "x/y/z.txt", OCISBX_WALK_APPEND, 0644, &fd), 0);
    assert_int_equal(write(fd, "2", 1), 1);
    close(fd);
    assert_int_equal(rd(f, "x/y/z.txt", b, sizeof b), 0);
    assert_string_equal(b, "12");
    assert_int_equal(ocisbx_walk_open_write(&f->root, "x/y/z.txt", OCISBX_WALK_EXCL, 0644, &fd), OCISBX_ECONFLICT);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_EXISTS);
    /* through a link inside: the target is written, the link stays */
    assert_int_equal(ocisbx_walk_open_write(&f->root, "wlink", 0, 0644, &fd), 0);
    assert_int_equal(write(fd, "via", 3), 3);
    close(fd);
    assert_int_equal(rd(f, "a/new", b, sizeof b), 0);
    assert_string_equal(b, "via");
    struct stat st;
    assert_int_equal(ocisbx_walk_stat(&f->root, "wlink", 0, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(ocisbx_walk_stat(&f->root, "wlink", OCISBX_WALK_FOLLOW_LAST, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_size, 3);
    /* a directory is not a file */
    assert_int_equal(ocisbx_walk_open_write(&f->root, "a", 0, 0644, &fd), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_ISDIR);
    assert_int_equal(ocisbx_walk_open_write(&f->root, "a/f/sub", OCISBX_WALK_MKDIRS, 0644, &fd), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_NOTDIR);
}

static void t_dir_stat_list(void **state)
{
    fx *f = *state;
    struct stat st;
    assert_int_equal(ocisbx_walk_stat(&f->root, "/workspace", 0, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(ocisbx_walk_stat(&f->root, "a/..", 0, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(ocisbx_walk_stat(&f->root, "a/nope", 0, &st), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_walk_stat(&f->root, "up", 0, &st), 0); /* the link itself */
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(ocisbx_walk_stat(&f->root, "up", OCISBX_WALK_FOLLOW_LAST, &st), OCISBX_EFORBIDDEN);

    int fd = -1;
    assert_int_equal(ocisbx_walk_open_dir(&f->root, "dirlink", 0, &fd), 0);
    DIR *d = fdopendir(fd);
    assert_non_null(d);
    int seen = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (!strcmp(de->d_name, "f") || !strcmp(de->d_name, "rel"))
            seen++;
    closedir(d);
    assert_int_equal(seen, 2);
    assert_int_equal(ocisbx_walk_open_dir(&f->root, "/workspace", 0, &fd), 0);
    assert_true(fd != f->ws_fd);
    close(fd);
    assert_int_equal(ocisbx_walk_open_dir(&f->root, "a/f", 0, &fd), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_NOTDIR);
    assert_int_equal(ocisbx_walk_open_dir(&f->root, "m/n", 0, &fd), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_walk_open_dir(&f->root, "m/n", OCISBX_WALK_MKDIRS, &fd), 0);
    close(fd);
    assert_true(host_exists(f->ws, "m/n"));

    /* the parent of a path, and the name in it */
    char *name = NULL;
    assert_int_equal(ocisbx_walk_parent(&f->root, "dirlink/f", 0, &fd, &name), 0);
    assert_string_equal(name, "f");
    assert_int_equal(fstatat(fd, name, &st, 0), 0);
    free(name);
    close(fd);
    assert_int_equal(ocisbx_walk_parent(&f->root, "a/rel", OCISBX_WALK_FOLLOW_LAST, &fd, &name), 0);
    assert_string_equal(name, "f");
    free(name);
    close(fd);
    assert_int_equal(ocisbx_walk_parent(&f->root, "/workspace", 0, &fd, &name), OCISBX_EINVAL);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_ISDIR);
    assert_null(name);
    assert_int_equal(fd, -1);
}

static void t_rename_unlink(void **state)
{
    fx *f = *state;
    char b[64];
    put(f->ws, "r1", "one");
    assert_int_equal(ocisbx_walk_rename(&f->root, "r1", "q/r/r2", 0), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_walk_rename(&f->root, "r1", "q/r/r2", OCISBX_WALK_MKDIRS), 0);
    assert_false(host_exists(f->ws, "r1"));
    assert_int_equal(rd(f, "q/r/r2", b, sizeof b), 0);
    assert_string_equal(b, "one");
    assert_int_equal(ocisbx_walk_rename(&f->root, "nope", "q/x", 0), OCISBX_ENOTFOUND);
    /* a link is renamed, not what it points to */
    assert_int_equal(ocisbx_walk_rename(&f->root, "up", "up2", 0), 0);
    assert_true(host_exists(f->outside, "secret"));
    assert_int_equal(ocisbx_walk_rename(&f->root, "up2", "up", 0), 0);
    /* unlink removes the link, never the target outside */
    assert_int_equal(ocisbx_walk_unlink(&f->root, "up", 0), 0);
    assert_false(host_exists(f->ws, "up"));
    assert_true(host_exists(f->outside, "secret"));
    assert_int_equal(ocisbx_walk_unlink(&f->root, "updir/secret", 0), OCISBX_EFORBIDDEN);
    assert_true(host_exists(f->outside, "secret"));
    assert_int_equal(ocisbx_walk_unlink(&f->root, "q/r/r2", 0), 0);
    assert_int_equal(ocisbx_walk_unlink(&f->root, "q/r/r2", 0), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_walk_unlink(&f->root, "q", OCISBX_WALK_RMDIR), OCISBX_ECONFLICT);
    assert_int_equal(ocisbx_walk_last_reason(), OCISBX_WALK_NOTEMPTY);
    assert_int_equal(ocisbx_walk_unlink(&f->root, "q/r", OCISBX_WALK_RMDIR), 0);
    assert_int_equal(ocisbx_walk_unlink(&f->root, "q", OCISBX_WALK_RMDIR), 0);
    assert_false(host_exists(f->ws, "q"));
    assert_int_equal(ocisbx_walk_unlink(&f->root, "/workspace", OCISBX_WALK_RMDIR), OCISBX_EINVAL);
    assert_true(host_exists(f->base, "ws"));
}

/* As root, what the walk creates belongs to the root directory's owner. */
static void t_ownership(void **state)
{
    fx *f = *state;
    if (geteuid() != 0) {
        skip();
        return;
    }
    assert_int_equal(chown(f->ws, 65534, 65534), 0);
    int fd = -1;
    assert_int_equal(ocisbx_walk_open_write(&f->root, "own/sub/file", OCISBX_WALK_MKDIRS, 0644, &fd), 0);
    close(fd);
    struct stat st;
    const char *made[] = {"own", "own/sub", "own/sub/file"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(ocisbx_walk_stat(&f->root, made[i], 0, &st), 0);
        assert_int_equal(st.st_uid, 65534);
        assert_int_equal(st.st_gid, 65534);
    }
    /* an entry the caller made itself, adopted */
    put(f->ws, "mine", "x");
    assert_int_equal(ocisbx_walk_adopt(&f->root, f->ws_fd, "mine"), 0);
    assert_int_equal(ocisbx_walk_stat(&f->root, "mine", 0, &st), 0);
    assert_int_equal(st.st_uid, 65534);
    /* a file that exists keeps its owner */
    put(f->ws, "rootfile", "x");
    assert_int_equal(ocisbx_walk_open_write(&f->root, "rootfile", 0, 0644, &fd), 0);
    close(fd);
    assert_int_equal(ocisbx_walk_stat(&f->root, "rootfile", 0, &st), 0);
    assert_int_equal(st.st_uid, 0);
    assert_int_equal(chown(f->ws, 0, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_inside, setup, teardown),
        cmocka_unit_test_setup_teardown(t_outside, setup, teardown),
        cmocka_unit_test_setup_teardown(t_loops_missing_notdir, setup, teardown),
        cmocka_unit_test_setup_teardown(t_write, setup, teardown),
        cmocka_unit_test_setup_teardown(t_dir_stat_list, setup, teardown),
        cmocka_unit_test_setup_teardown(t_rename_unlink, setup, teardown),
        cmocka_unit_test_setup_teardown(t_ownership, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
