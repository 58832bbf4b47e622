/* The one bounded file reader (util/fileio.c): a regular file read whole, a
 * FIFO, a device and a directory refused at once, the size limit from a
 * file and from a pipe, the one error style and its codes, a secret wiped. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_assert.h"
#include "test_keys.h"
#include "util/internal.h"

static char dir[256];

static const char *in_dir(const char *name)
{
    static char buf[4][512];
    static int slot;
    slot = (slot + 1) % 4;
    snprintf(buf[slot], sizeof buf[slot], "%s/%s", dir, name);
    return buf[slot];
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_fileio.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    test_rm_rf(dir);
    return 0;
}

static void test_regular_file(void **state)
{
    (void)state;
    const char *p = in_dir("a.txt");
    assert_int_equal(test_write_text(p, "hello\n"), 0);
    ocisbx_file f;
    assert_int_equal(ocisbx_file_read(p, "test file", 100, OCISBX_READ_REGULAR, &f), 0);
    assert_int_equal(f.len, 6);
    assert_string_equal(f.data, "hello\n");
    assert_int_equal(f.st.st_size, 6);
    assert_true(S_ISREG(f.st.st_mode));
    ocisbx_file_release(&f);
    assert_null(f.data);
    ocisbx_file_release(&f); /* twice is fine */

    /* empty: "" rather than NULL */
    p = in_dir("empty");
    assert_int_equal(test_write_text(p, ""), 0);
    assert_int_equal(ocisbx_file_read(p, "test file", 100, 0, &f), 0);
    assert_non_null(f.data);
    assert_int_equal(f.len, 0);
    size_t n = 99;
    char *d = ocisbx_file_detach(&f, &n);
    assert_string_equal(d, "");
    assert_int_equal(n, 0);
    assert_null(f.data);
    free(d);
}

static void test_limit(void **state)
{
    (void)state;
    const char *p = in_dir("big");
    char text[1001];
    memset(text, 'x', 1000);
    text[1000] = 0;
    assert_int_equal(test_write_text(p, text), 0);
    ocisbx_file f;
    assert_int_equal(ocisbx_file_read(p, "test file", 1000, OCISBX_READ_REGULAR, &f), 0); /* exactly the limit */
    assert_int_equal(f.len, 1000);
    ocisbx_file_release(&f);
    assert_int_equal(ocisbx_file_read(p, "test file", 999, OCISBX_READ_REGULAR, &f), OCISBX_ETOOLARGE);
    assert_null(f.data);
    test_assert_msg_has("test file ");
    test_assert_msg_has(p);
    test_assert_msg_has(": larger than 999 bytes");
    /* one code for every failure on request */
    assert_int_equal(ocisbx_file_read(p, "test file", 999, OCISBX_READ_CONFIG, &f), OCISBX_ECONFIG);
    assert_int_equal(ocisbx_file_read(p, "test file", 999, OCISBX_READ_IO, &f), OCISBX_EIO);
}

/* The limit from a pipe (no size known beforehand): the reader stops one
 * byte past it. */
static void test_limit_from_pipe(void **state)
{
    (void)state;
    char data[6000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)('a' + i % 26);
    for (int round = 0; round < 2; round++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        assert_int_equal(write(fds[1], data, sizeof data), (ssize_t)sizeof data); /* fits the pipe's buffer */
        close(fds[1]);
        int saved = dup(STDIN_FILENO);
        assert_int_equal(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
        close(fds[0]);
        ocisbx_file f;
        int rc = ocisbx_file_read("-", "body", round == 0 ? 5999 : 6000, OCISBX_READ_STDIN | OCISBX_READ_SECRET, &f);
        assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
        close(saved);
        if (round == 0) {
            assert_int_equal(rc, OCISBX_ETOOLARGE);
            test_assert_msg_has("body (standard input): larger than 5999 bytes");
        } else {
            if (rc)
                fail_msg("%s", test_last_msg());
            assert_int_equal(f.len, sizeof data);
            assert_memory_equal(f.data, data, sizeof data);
            ocisbx_file_release(&f);
        }
    }
}

static void test_not_regular(void **state)
{
    (void)state;
    const char *fifo = in_dir("fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    ocisbx_file f;
    alarm(10); /* a blocking open would hang: the alarm ends the test instead */
    assert_int_equal(ocisbx_file_read(fifo, "key file", 100, OCISBX_READ_REGULAR, &f), OCISBX_EINVAL);
    test_assert_msg_has("key file ");
    test_assert_msg_has(": not a regular file");
    assert_int_equal(ocisbx_file_read(fifo, "key file", 100, OCISBX_READ_REGULAR | OCISBX_READ_CONFIG, &f),
                     OCISBX_ECONFIG);
    assert_int_equal(ocisbx_file_read("/dev/null", "key file", 100, OCISBX_READ_REGULAR, &f), OCISBX_EINVAL);
    test_assert_msg_has("/dev/null: not a regular file");
    alarm(0);
    /* a directory is never read, flag or not */
    assert_int_equal(ocisbx_file_read(dir, "config file", 100, 0, &f), OCISBX_EINVAL);
    test_assert_msg_has(": not a regular file");
}

static void test_missing(void **state)
{
    (void)state;
    ocisbx_file f;
    const char *p = in_dir("no\x1b[2Jsuch");
    assert_int_equal(ocisbx_file_read(p, "token file", 100, OCISBX_READ_REGULAR, &f), OCISBX_ENOTFOUND);
    test_assert_msg_has("token file ");
    test_assert_msg_has("no\\x1b[2Jsuch: not found"); /* the name escaped */
    assert_int_equal(ocisbx_file_read(NULL, "token file", 100, 0, &f), OCISBX_EINVAL);
    assert_int_equal(ocisbx_file_read("", "token file", 100, OCISBX_READ_CONFIG, &f), OCISBX_ECONFIG);
    test_assert_msg_has("token file: no file name");
    if (getuid() != 0) { /* root reads anything */
        p = in_dir("unreadable");
        assert_int_equal(test_write_text(p, "x"), 0);
        assert_int_equal(chmod(p, 0), 0);
        assert_int_equal(ocisbx_file_read(p, "token file", 100, 0, &f), OCISBX_EIO);
        test_assert_msg_has(": cannot open: ");
    }
}

static void test_wipe(void **state)
{
    (void)state;
    const char *p = in_dir("secret");
    assert_int_equal(test_write_text(p, "hunter2-passphrase"), 0);
    ocisbx_file f;
    assert_int_equal(ocisbx_file_read(p, "secret", 100, OCISBX_READ_SECRET | OCISBX_READ_REGULAR, &f), 0);
    assert_int_equal(f.flags & OCISBX_READ_SECRET, OCISBX_READ_SECRET);
    assert_string_equal(f.data, "hunter2-passphrase");
    ocisbx_file_wipe(&f);
    for (size_t i = 0; i < f.cap; i++)
        assert_int_equal(f.data[i], 0);
    ocisbx_file_release(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regular_file), cmocka_unit_test(test_limit),   cmocka_unit_test(test_limit_from_pipe),
        cmocka_unit_test(test_not_regular),  cmocka_unit_test(test_missing), cmocka_unit_test(test_wipe),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
