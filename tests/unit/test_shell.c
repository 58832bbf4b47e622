/* Shell quoting: every quoted word goes through a real POSIX shell
 * (`/bin/sh -c "printf '%s' <quoted>"`, and bash when present) and must come
 * back byte for byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "ocisbx/util.h"

/* Runs `shell -c script` and returns its stdout (malloc'd, *len bytes). */
static char *run_shell(const char *shell, const char *script, size_t *len)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl(shell, shell, "-c", script, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t cap = 256, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        ssize_t r = read(fds[0], out + n, cap - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("%s -c '%s' failed with status %d", shell, script, status);
    *len = n;
    return out;
}

static void round_trip_with(const char *shell, const char *data, size_t len)
{
    char *q = NULL;
    assert_int_equal(ocisbx_shell_quote(data, len, &q), 0);
    size_t qlen = strlen(q);
    char *script = malloc(qlen + 32);
    assert_non_null(script);
    snprintf(script, qlen + 32, "printf '%%s' %s", q);
    size_t n = 0;
    char *out = run_shell(shell, script, &n);
    if (n != len || (len && memcmp(out, data, len) != 0))
        fail_msg("%s: quoted as [%s], came back as %zu bytes [%.*s], want %zu bytes", shell, q, n, (int)n, out, len);
    /* Exactly one word: "$#" counts the words the quoted text makes. */
    snprintf(script, qlen + 32, "set -- %s; printf %%s $#", q);
    char *count = run_shell(shell, script, &n);
    if (n != 1 || count[0] != '1')
        fail_msg("%s: [%s] is not one word (%.*s)", shell, q, (int)n, count);
    free(count);
    free(out);
    free(script);
    ocisbx_free(q);
}

static void round_trip(const char *data, size_t len)
{
    round_trip_with("/bin/sh", data, len);
    if (access("/bin/bash", X_OK) == 0)
        round_trip_with("/bin/bash", data, len);
}

static void test_nasty_strings_round_trip(void **state)
{
    (void)state;
    static const char *const nasty[] = {
        "",
        "plain",
        "with space",
        "  leading and trailing  ",
        "tab\there",
        "new\nline",
        "\n",
        "single'quote",
        "'",
        "''",
        "'\\''",
        "double\"quote",
        "back\\slash\\",
        "$HOME",
        "${PATH}",
        "$(echo pwned)",
        "`echo pwned`",
        "-n",
        "-e",
        "--help",
        "-",
        "~",
        "~root",
        "a=b",
        "*",
        "?",
        "[a-z]",
        "!",
        "#comment",
        "a;b",
        "a|b",
        "a&b",
        "a>b",
        "<",
        "(x)",
        "{a,b}",
        "%s%d%n",
        "\\n\\t",
        "caf\xc3\xa9 \xe2\x82\xac",
        "\xff\xfe invalid utf-8 \x80",
    };
    for (size_t i = 0; i < sizeof nasty / sizeof nasty[0]; i++)
        round_trip(nasty[i], strlen(nasty[i]));
}

static void test_every_byte_value(void **state)
{
    (void)state;
    char all[255];
    for (int i = 0; i < 255; i++)
        all[i] = (char)(i + 1);
    round_trip(all, sizeof all);
    /* And each byte on its own, where a lone special character bites. */
    for (int i = 1; i < 256; i++) {
        char one = (char)i;
        round_trip(&one, 1);
    }
}

static void test_expected_forms(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"", "''"},     {"abc", "abc"},   {"/usr/bin/python3", "/usr/bin/python3"},
        {"-la", "-la"}, {"a b", "'a b'"}, {"it's", "'it'\\''s'"},
        {"$x", "'$x'"}, {"a=b", "'a=b'"}, {"~", "'~'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *q = NULL;
        assert_int_equal(ocisbx_shell_quote(cases[i].in, strlen(cases[i].in), &q), 0);
        assert_string_equal(q, cases[i].out);
        ocisbx_free(q);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    static char untouched[] = "untouched";
    char *q = untouched;
    assert_int_equal(ocisbx_shell_quote("a\0b", 3, &q), OCISBX_EINVAL);
    assert_null(q);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "NUL"));
    assert_int_equal(ocisbx_shell_quote(NULL, 1, &q), OCISBX_EINVAL);
    assert_int_equal(ocisbx_shell_quote("a", 1, NULL), OCISBX_EINVAL);
    assert_int_equal(ocisbx_shell_quote(NULL, 0, &q), 0);
    assert_string_equal(q, "''");
    ocisbx_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expected_forms),
        cmocka_unit_test(test_nasty_strings_round_trip),
        cmocka_unit_test(test_every_byte_value),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
