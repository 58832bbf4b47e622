/* The process table reader (sys/procfs.h) and the descendant search built on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/proc_int.h"
#include "sys/procfs.h"

static void test_parse_hostile_name(void **state)
{
    (void)state;
    ocisbx_procfs_stat st;
    /* a name with spaces and a ") 9 9 9" of its own: only the last ')' ends it */
    const char *line = "4242 (a b) Z 9 9 9) S 17 4242 4240 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2\n";
    assert_true(ocisbx_procfs_stat_parse(line, &st));
    assert_int_equal(st.state, 'S');
    assert_int_equal(st.ppid, 17);
    assert_int_equal(st.pgrp, 4242);
    assert_int_equal(st.sid, 4240);
    assert_int_equal(st.start, 987654ULL);
    assert_false(ocisbx_procfs_ended(&st));
    st.state = 'Z';
    assert_true(ocisbx_procfs_ended(&st));
}

static void test_parse_short(void **state)
{
    (void)state;
    ocisbx_procfs_stat st;
    assert_false(ocisbx_procfs_stat_parse("", &st));
    assert_false(ocisbx_procfs_stat_parse("12 no parenthesis S 1 2 3", &st));
    assert_false(ocisbx_procfs_stat_parse("12 (x) S 1 2 3 0 -1\n", &st)); /* no start time */
    assert_false(ocisbx_procfs_stat_parse("12 (x) S x y z 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 5", &st));
}

static void test_read_self(void **state)
{
    (void)state;
    ocisbx_procfs_stat st;
    assert_true(ocisbx_procfs_stat_read((long)getpid(), &st));
    assert_int_equal(st.ppid, (long)getppid());
    assert_int_equal(st.pgrp, (long)getpgrp());
    assert_int_equal(st.sid, (long)getsid(0));
    assert_true(st.start > 0);
    assert_false(ocisbx_procfs_stat_read(-5, &st));
    uint64_t d0 = 0, i0 = 0, d1 = 0, i1 = 0;
    assert_true(ocisbx_procfs_pid_ns(0, &d0, &i0));
    assert_true(ocisbx_procfs_pid_ns((long)getpid(), &d1, &i1));
    assert_true(i0 != 0 && i0 == i1 && d0 == d1);
}

static bool count_self(long pid, const ocisbx_procfs_stat *st, void *ud)
{
    (void)st;
    if (pid == (long)getpid())
        ++*(int *)ud;
    return true;
}

static void test_each_finds_self(void **state)
{
    (void)state;
    int seen = 0;
    assert_int_equal(ocisbx_procfs_each(count_self, &seen), 0);
    assert_int_equal(seen, 1);
}

/* A tree root -> child -> grandchild (a new session, as a daemon): signalling
 * the root's descendants kills both below it, and never the root. */
static void test_descendants(void **state)
{
    (void)state;
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t root = fork();
    assert_true(root >= 0);
    if (root == 0) {
        close(ready[0]);
        pid_t child = fork();
        if (child == 0) {
            if (fork() == 0) {
                setsid();
                (void)!write(ready[1], "g", 1);
                pause();
                _exit(0);
            }
            pause();
            _exit(0);
        }
        int st = 0;
        waitpid(child, &st, 0);
        _exit(WIFSIGNALED(st) ? WTERMSIG(st) : 100); /* the child's end: the root lives to tell */
    }
    close(ready[1]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1); /* the grandchild exists */
    close(ready[0]);
    int hits = ocisbx_proc_signal_descendants(root, SIGKILL);
    assert_true(hits >= 2);
    int st = 0;
    assert_int_equal(waitpid(root, &st, 0), root);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), SIGKILL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_hostile_name), cmocka_unit_test(test_parse_short),
        cmocka_unit_test(test_read_self),          cmocka_unit_test(test_each_finds_self),
        cmocka_unit_test(test_descendants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
