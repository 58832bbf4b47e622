/* The command-line reader of the policy's command rules
 * (src/harness/shell.c): the simple commands of a line, and what makes a
 * line opaque to an allow rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness/shell.h"

/* The line's simple commands, "|"-joined, into out. */
static const char *parse(const char *line, bool *opaque, char *out, size_t cap)
{
    shell_line l;
    assert_int_equal(harness_shell_parse(line, strlen(line), &l), 0);
    out[0] = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (i)
            strncat(out, "|", cap - strlen(out) - 1);
        strncat(out, l.cmds[i], cap - strlen(out) - 1);
    }
    *opaque = l.opaque != NULL;
    harness_shell_line_free(&l);
    return out;
}

static void expect(const char *line, const char *cmds, bool want_opaque)
{
    char got[1024];
    bool opaque = false;
    parse(line, &opaque, got, sizeof got);
    if (strcmp(got, cmds) || opaque != want_opaque)
        fail_msg("%s: got [%s]%s, want [%s]%s", line, got, opaque ? " opaque" : "", cmds,
                 want_opaque ? " opaque" : "");
}

static void lists_and_pipelines(void **state)
{
    (void)state;
    expect("pytest -q", "pytest -q", false);
    expect("  pytest   -q  ", "pytest -q", false);
    expect("pytest ; echo pwned > /workspace/.git/pwned; cat secrets/key", "pytest|echo pwned|cat secrets/key",
           false);
    expect("a && b || c | d & e\nf", "a|b|c|d|e|f", false);
    expect("a |& b", "a|b", false);
    expect("a;", "a", false);
    expect(";;", "", true); /* a case terminator */
    expect("", "", false);
    expect("# only a comment", "", false);
    expect("make # build it; rm -rf /", "make", false);
    expect("a\\\nb", "ab", false); /* a line continuation */
    expect("FOO=1 BAR=\"x y\" pytest", "FOO=1 BAR=x y pytest", false);
}

static void quotes(void **state)
{
    (void)state;
    expect("echo 'a;b' \"c|d\" e\\;f", "echo a;b c|d e;f", false);
    expect("'py'\"test\" -q", "pytest -q", false);
    expect("\\rm -rf x", "rm -rf x", false);
    expect("echo \"a\\\"b\\$c\\\\d\\x\"", "echo a\"b$c\\d\\x", false);
    expect("echo ''", "echo ", false);
    expect("echo 'open", "echo open", true);
    expect("echo \"open", "echo open", true);
    expect("echo $HOME ${USER} $1 $@", "echo $HOME ${USER} $1 $@", false);
    expect("echo $'\\x72m'", "echo \\x72m", true);
}

static void opaque_constructs(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "pytest $(touch pwned2) -q",
        "pytest `touch pwned2` -q",
        "echo \"$(id)\"",
        "echo \"`id`\"",
        "echo $((1+2))",
        "echo ${X:-$(id)}",
        "diff <(ls a) <(ls b)",
        "tee >(cat)",
        "eval ls",
        "\"eval\" ls",
        "X=1 eval ls",
        "(cd /; rm -rf x)",
        "f() { rm -rf x; }; f",
        "{ ls; }",
        "if true; then ls; fi",
        "for i in 1; do ls; done",
        "while false; do :; done",
        "! ls",
        "cat <<EOF\nls\nEOF",
        "echo x > /etc/passwd",
        "echo x >> ../outside",
        "echo x > a/../../b",
        "echo x > $HOME/f",
        "echo x > ~/f",
        "echo x > *.log",
        "echo x >",
        "cd /tmp; echo x > f",
        "echo x >& /etc/f",
        "ls &> /etc/f",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        char got[1024];
        bool opaque = false;
        parse(lines[i], &opaque, got, sizeof got);
        if (!opaque)
            fail_msg("%s: not opaque (commands [%s])", lines[i], got);
    }
}

static void redirections_inside_are_fine(void **state)
{
    (void)state;
    expect("pytest > out.txt 2>&1", "pytest", false);
    expect("pytest >/workspace/log 2>/dev/null </dev/null", "pytest", false);
    expect("pytest >> logs/a.txt 2>>logs/b.txt", "pytest", false);
    expect("pytest 1>&2 3<&- <in.txt", "pytest", false);
    expect("> empty.txt", "", false);
    expect("pytest > '/workspace/a b'", "pytest", false);
    expect("cat a>b", "cat a", false);
    expect("echo 2>x", "echo", false);
    expect("echo a2>x", "echo a2", false); /* not a descriptor: a word before > */
}

static void many_commands(void **state)
{
    (void)state;
    size_t n = HARNESS_SHELL_CMDS_MAX + 10;
    char *line = malloc(n * 2 + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(line + 2 * i, "a;", 2);
    line[2 * n] = 0;
    shell_line l;
    assert_int_equal(harness_shell_parse(line, strlen(line), &l), 0);
    assert_int_equal(l.n, HARNESS_SHELL_CMDS_MAX);
    assert_non_null(l.opaque);
    harness_shell_line_free(&l);
    /* a NUL byte inside */
    assert_int_equal(harness_shell_parse("ls\0rm", 5, &l), 0);
    assert_non_null(l.opaque);
    harness_shell_line_free(&l);
    free(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lists_and_pipelines), cmocka_unit_test(quotes),
        cmocka_unit_test(opaque_constructs),   cmocka_unit_test(redirections_inside_are_fine),
        cmocka_unit_test(many_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
