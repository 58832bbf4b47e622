/* Path globs (src/util/glob.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/glob.h"
#include "ocisbx/common.h"

#define YES(p, t) assert_int_equal(ocisbx_glob_match(p, t), 1)
#define NO(p, t) assert_int_equal(ocisbx_glob_match(p, t), 0)

static void literals_and_single_stars(void **state)
{
    (void)state;
    YES("/workspace/a.py", "/workspace/a.py");
    NO("/workspace/a.py", "/workspace/a.pyc");
    YES("*.py", "a.py");
    YES("*.py", ".py");
    NO("*.py", "dir/a.py"); /* '*' never crosses '/' */
    YES("/workspace/*/x", "/workspace/dir/x");
    NO("/workspace/*/x", "/workspace/a/b/x");
    YES("a*b*c", "aXXbYYc");
    NO("a*b*c", "aXXbYY");
    YES("", "");
    NO("", "a");
    YES("*", "");
}

static void question_marks_and_classes(void **state)
{
    (void)state;
    YES("?.c", "a.c");
    NO("?.c", "/.c");
    NO("?.c", "ab.c");
    YES("[abc].txt", "b.txt");
    NO("[abc].txt", "d.txt");
    YES("[a-z]1", "q1");
    NO("[a-z]1", "Q1");
    YES("[!a-z]1", "Q1");
    YES("[^a-z]1", "Q1");
    NO("[!a-z]1", "q1");
    YES("[]]", "]");    /* ']' first is a member */
    YES("[", "[");      /* unclosed: a literal */
    NO("a[/]b", "a/b"); /* a class never matches '/' */
    YES("\\*", "*");
    NO("\\*", "x");
    YES("a\\?", "a?");
}

static void globstars(void **state)
{
    (void)state;
    YES("**", "a/b/c");
    YES("**", "");
    YES("**/*.py", "a.py");
    YES("**/*.py", "x/y/a.py");
    NO("**/*.py", "x/y/a.pyc");
    YES("/workspace/.git/**", "/workspace/.git/config");
    YES("/workspace/.git/**", "/workspace/.git/refs/heads/main");
    YES("/workspace/.git/**", "/workspace/.git"); /* the directory itself too */
    NO("/workspace/.git/**", "/workspace/.gitignore");
    NO("/workspace/.git/**", "/workspace/src/.git");
    YES("a/**/b", "a/b");
    YES("a/**/b", "a/x/y/b");
    NO("a/**/b", "a/x/y/c");
    YES("src/**/test_*.c", "src/unit/deep/test_x.c");
    YES("a**b", "aXb"); /* not a whole component: a single star */
    NO("a**b", "a/b");
}

static void any_bytes_work(void **state)
{
    (void)state;
    YES("/workspace/*", "/workspace/name with spaces");
    YES("/workspace/*", "/workspace/-leading");
    YES("/workspace/*", "/workspace/new\nline");
    YES("/workspace/\xc3\xa9*", "/workspace/\xc3\xa9t\xc3\xa9");
    YES("/workspace/$*", "/workspace/$HOME");
}

/* Many stars against a long text that does not match: the memo keeps it
 * bounded (this would take ages with plain backtracking). */
static void pathological_patterns_stay_bounded(void **state)
{
    (void)state;
    char pat[400] = "", text[2001];
    for (int i = 0; i < 60; i++)
        strcat(pat, "**/a*");
    strcat(pat, "b");
    memset(text, 'a', 2000);
    for (int i = 1; i < 2000; i += 2)
        text[i] = '/';
    text[2000] = 0;
    NO(pat, text);
}

static void limits_and_arguments(void **state)
{
    (void)state;
    char *big = malloc(OCISBX_GLOB_MAX + 2);
    memset(big, 'a', OCISBX_GLOB_MAX + 1);
    big[OCISBX_GLOB_MAX + 1] = 0;
    assert_int_equal(ocisbx_glob_match("*", big), OCISBX_ETOOLARGE);
    assert_int_equal(ocisbx_glob_match(big, "a"), OCISBX_ETOOLARGE);
    free(big);
    assert_int_equal(ocisbx_glob_match(NULL, "a"), OCISBX_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(literals_and_single_stars),
        cmocka_unit_test(question_marks_and_classes),
        cmocka_unit_test(globstars),
        cmocka_unit_test(any_bytes_work),
        cmocka_unit_test(pathological_patterns_stay_bounded),
        cmocka_unit_test(limits_and_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
