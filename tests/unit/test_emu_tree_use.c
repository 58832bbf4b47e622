/* emu_tree_use, the workspace watcher's measure: st_blocks of every entry,
 * symlinks not followed, sparse files by what they hold, at most
 * max_entries entries (capped then). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "emulator/emu.h"

static void write_file(const char *path, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    for (size_t done = 0; done < len; done += sizeof buf)
        assert_int_equal(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
    assert_int_equal(fsync(fd), 0);
    close(fd);
}

static void test_tree_use(void **state)
{
    (void)state;
    char dir[] = "/tmp/ocisbx-tree-use-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p[256];
    int64_t empty = emu_tree_use(dir, 1000, NULL);
    assert_true(empty >= 0);
    snprintf(p, sizeof p, "%s/sub", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/sub/dense", dir);
    write_file(p, 1 << 20);
    /* a 1 GiB sparse file holds (almost) nothing */
    snprintf(p, sizeof p, "%s/sparse", dir);
    int fd = open(p, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)1 << 30), 0);
    close(fd);
    /* a symlink to a big tree is not followed */
    snprintf(p, sizeof p, "%s/usr", dir);
    assert_int_equal(symlink("/usr", p), 0);
    bool capped = true;
    int64_t use = emu_tree_use(dir, 1000, &capped);
    fprintf(stderr, "empty %lld, with 1 MiB dense + 1 GiB sparse + a link: %lld bytes\n", (long long)empty,
            (long long)use);
    assert_false(capped);
    assert_true(use >= empty + (1 << 20));
    assert_true(use < empty + (2 << 20));
    /* the cap: 4 entries (sub, sub/dense, sparse, usr); 2 counted at most */
    int64_t part = emu_tree_use(dir, 2, &capped);
    assert_true(capped);
    assert_true(part <= use);
    assert_int_equal(emu_tree_use(dir, 4, &capped), use);
    assert_false(capped);
    /* a missing directory */
    snprintf(p, sizeof p, "%s/none", dir);
    assert_int_equal(emu_tree_use(p, 10, NULL), -1);
    assert_int_equal(emu_rmtree(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_use),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
