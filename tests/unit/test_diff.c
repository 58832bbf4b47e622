/* Unified diffs (src/util/diff.c): the exact format, bounds and the note,
 * and, on random inputs, that the diff applies and is minimal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/diff.h"

static char *diff(const char *a, const char *b, size_t max, uint64_t *dropped)
{
    char *out = NULL;
    size_t len = 0;
    assert_int_equal(ocisbx_diff_unified("a/f", "b/f", a, strlen(a), b, strlen(b), max, &out, &len, dropped), 0);
    assert_int_equal(strlen(out), len);
    return out;
}

static void expect(const char *a, const char *b, const char *want)
{
    uint64_t dropped = 99;
    char *got = diff(a, b, 1 << 20, &dropped);
    assert_string_equal(got, want);
    assert_int_equal(dropped, 0);
    free(got);
}

static void format(void **state)
{
    (void)state;
    expect("same\n", "same\n", "");
    expect("", "", "");
    expect("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n",
           "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n");
    /* a new file, a file emptied */
    expect("", "x\ny\n", "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n");
    expect("x\ny\n", "", "--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-x\n-y\n");
    /* one line: ",1" left out */
    expect("x\n", "y\n", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n");
    /* an insertion with no line before it in the hunk */
    expect("b\n", "a\nb\n", "--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n+a\n b\n");
    expect("a\nb\nc\nd\ne\n", "a\nb\nc\nd\nX\ne\n", "--- a/f\n+++ b/f\n@@ -2,4 +2,5 @@\n b\n c\n d\n+X\n e\n");
    /* no newline at the end, on either side */
    expect("a\nb", "a\nb\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
    expect("a\nb\n", "a\nc", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n");
    expect("x\nend", "y\nend",
           "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-x\n+y\n end\n\\ No newline at end of file\n");
    /* removals before additions in one block */
    expect("a\nb\nc\n", "x\ny\nz\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n-b\n-c\n+x\n+y\n+z\n");
    /* binary */
    char *got = NULL;
    size_t n = 0;
    assert_int_equal(ocisbx_diff_unified("a/f", "b/f", "a\0b", 3, "a\0c", 3, 4096, &got, &n, NULL), 0);
    assert_string_equal(got, "Binary files a/f and b/f differ\n");
    free(got);
}

static void hunks_split_and_merged(void **state)
{
    (void)state;
    char a[4096] = "", b[4096] = "";
    for (int i = 1; i <= 30; i++) {
        char l[16];
        snprintf(l, sizeof l, "%d\n", i);
        strcat(a, l);
        strcat(b, i == 3 || i == 25 ? "X\n" : i == 10 ? "Y\n" : l);
    }
    /* 3 and 10 are 6 lines apart (one hunk); 25 is far (its own) */
    expect(a, b,
           "--- a/f\n+++ b/f\n@@ -1,13 +1,13 @@\n 1\n 2\n-3\n+X\n 4\n 5\n 6\n 7\n 8\n 9\n-10\n+Y\n 11\n 12\n 13\n"
           "@@ -22,7 +22,7 @@\n 22\n 23\n 24\n-25\n+X\n 26\n 27\n 28\n");
}

static void several_files_bounded(void **state)
{
    (void)state;
    ocisbx_diff d;
    ocisbx_diff_init(&d, 1 << 16);
    assert_int_equal(ocisbx_diff_file(&d, "a/x", "b/x", "1\n", 2, "2\n", 2), 0);
    assert_int_equal(ocisbx_diff_file(&d, "/dev/null", "b/y", NULL, 0, "new\n", 4), 0);
    char *out = NULL;
    size_t len = 0;
    uint64_t dropped = 1;
    assert_int_equal(ocisbx_diff_finish(&d, &out, &len, &dropped), 0);
    assert_string_equal(out, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-1\n+2\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+new\n");
    assert_int_equal(dropped, 0);
    free(out);
    ocisbx_diff_free(&d);
}

/* Cut: a prefix of whole lines of the full diff, the note with the exact
 * count, never more than max in all. */
static void cut_with_note(void **state)
{
    (void)state;
    size_t n = 5000;
    char *a = malloc(n * 8 + 1), *b = malloc(n * 8 + 1);
    a[0] = b[0] = '\0';
    size_t al = 0, bl = 0;
    for (size_t i = 0; i < n; i++) {
        al += (size_t)sprintf(a + al, "a%05zu\n", i);
        bl += (size_t)sprintf(b + bl, "b%05zu\n", i);
    }
    uint64_t dropped = 0;
    char *full = diff(a, b, SIZE_MAX, &dropped);
    assert_int_equal(dropped, 0);
    size_t fl = strlen(full);
    for (size_t max = OCISBX_DIFF_MIN_MAX; max < 20000; max = max * 3 + 7) {
        char *cut = diff(a, b, max, &dropped);
        size_t cl = strlen(cut);
        assert_true(cl <= max);
        const char *note = strstr(cut, "[... ");
        assert_non_null(note);
        size_t kept = (size_t)(note - cut);
        assert_true(kept == 0 || cut[kept - 1] == '\n');
        assert_memory_equal(cut, full, kept);
        assert_int_equal(dropped, fl - kept);
        char want[96];
        snprintf(want, sizeof want, "[... %zu bytes of diff dropped ...]\n", fl - kept);
        assert_string_equal(note, want);
        free(cut);
    }
    /* a bound below the minimum is raised to it */
    char *tiny = diff(a, b, 1, &dropped);
    assert_true(strlen(tiny) <= OCISBX_DIFF_MIN_MAX);
    assert_non_null(strstr(tiny, "bytes of diff dropped"));
    free(tiny);
    free(full);
    free(a);
    free(b);
}

/* ---- random inputs: apply the diff, compare with the LCS ---- */
typedef struct text {
    char *s;
    size_t len;
} text;

/* Copies a's lines up to (not including) line `until` (1-based). */
static void copy_to(const char *a, size_t alen, size_t *apos, size_t *aline, size_t until, text *o)
{
    while (*aline < until) {
        const char *nl = memchr(a + *apos, '\n', alen - *apos);
        assert_non_null(nl);
        size_t e = (size_t)(nl - a) + 1;
        memcpy(o->s + o->len, a + *apos, e - *apos);
        o->len += e - *apos;
        *apos = e;
        (*aline)++;
    }
}

/* Applies a unified diff of one file to a; fails the test on a mismatch. */
static text apply(const char *a, size_t alen, const char *d)
{
    text o = {malloc(alen + strlen(d) + 1), 0};
    size_t apos = 0, aline = 1;
    const char *p = strstr(d, "@@ ");
    while (p && *p) {
        unsigned long start = 0, count = 1;
        int used = 0;
        assert_int_equal(sscanf(p, "@@ -%lu%n", &start, &used), 1);
        if (p[used] == ',')
            assert_int_equal(sscanf(p + used, ",%lu", &count), 1);
        copy_to(a, alen, &apos, &aline, count == 0 ? start + 1 : start, &o);
        p = strchr(p, '\n') + 1;
        char prev = 0;
        while (*p && strncmp(p, "@@ ", 3) != 0) {
            const char *nl = strchr(p, '\n');
            size_t cl = (size_t)(nl - p) - 1; /* the content, without prefix and newline */
            if (*p == '\\') {
                if (prev == '+')
                    o.len--; /* the added last line has no newline */
            } else if (*p == ' ' || *p == '-') {
                assert_true(apos + cl <= alen);
                assert_memory_equal(a + apos, p + 1, cl);
                size_t adv = cl + (apos + cl < alen ? 1 : 0);
                if (apos + cl < alen)
                    assert_int_equal(a[apos + cl], '\n');
                if (*p == ' ') {
                    memcpy(o.s + o.len, a + apos, adv);
                    o.len += adv;
                }
                apos += adv;
                aline++;
            } else {
                assert_int_equal(*p, '+');
                memcpy(o.s + o.len, p + 1, cl);
                o.len += cl;
                o.s[o.len++] = '\n';
            }
            prev = *p;
            p = nl + 1;
        }
    }
    memcpy(o.s + o.len, a + apos, alen - apos);
    o.len += alen - apos;
    return o;
}

static size_t lcs(const char *const *x, size_t n, const char *const *y, size_t m)
{
    size_t *t = calloc((n + 1) * (m + 1), sizeof *t);
    for (size_t i = n; i-- > 0;)
        for (size_t j = m; j-- > 0;)
            t[i * (m + 1) + j] = strcmp(x[i], y[j]) == 0 ? t[(i + 1) * (m + 1) + j + 1] + 1
                                 : t[(i + 1) * (m + 1) + j] > t[i * (m + 1) + j + 1]
                                     ? t[(i + 1) * (m + 1) + j]
                                     : t[i * (m + 1) + j + 1];
    size_t r = t[0];
    free(t);
    return r;
}

static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void random_inputs(void **state)
{
    (void)state;
    static const char *words[] = {"a\n", "b\n", "c\n", "{\n", "}\n", "\n", "x y\n"};
    uint32_t seed = 12345;
    for (int round = 0; round < 400; round++) {
        const char *x[40], *y[40];
        size_t n = rnd(&seed) % 30, m = 0;
        char a[400] = "", b[400] = "";
        for (size_t i = 0; i < n; i++) {
            x[i] = words[rnd(&seed) % 7];
            strcat(a, x[i]);
        }
        for (size_t i = 0; i < n && m < 38; i++) { /* b: a mutated */
            uint32_t r = rnd(&seed) % 6;
            if (r == 0)
                continue;
            if (r == 1)
                y[m++] = words[rnd(&seed) % 7];
            y[m++] = r == 2 ? words[rnd(&seed) % 7] : x[i];
        }
        for (size_t i = 0; i < m; i++)
            strcat(b, y[i]);
        size_t al = strlen(a), bl = strlen(b);
        if (round % 3 == 0 && al) /* some without a final newline */
            a[--al] = '\0';
        if (round % 5 == 0 && bl)
            b[--bl] = '\0';
        char *d = diff(a, b, SIZE_MAX, NULL);
        text t = apply(a, al, d);
        if (t.len != bl || memcmp(t.s, b, bl) != 0)
            fail_msg("round %d: the diff does not give b\n--a\n%s\n--b\n%s\n--diff\n%s", round, a, b, d);
        if (round % 3 != 0 && round % 5 != 0) { /* minimal: changed lines = n + m - 2 LCS */
            size_t changed = 0;
            for (const char *p = d; (p = strchr(p, '\n')) != NULL;) {
                p++;
                if ((*p == '-' && strncmp(p, "--- ", 4) != 0) || (*p == '+' && strncmp(p, "+++ ", 4) != 0))
                    changed++;
            }
            assert_int_equal(changed, n + m - 2 * lcs(x, n, y, m));
        }
        free(t.s);
        free(d);
    }
}

/* Too different for the bounded comparison: still a correct diff. */
static void beyond_the_bounds(void **state)
{
    (void)state;
    size_t n = OCISBX_DIFF_MAX_D * 2;
    char *a = malloc(n * 8 + 1), *b = malloc(n * 8 + 1);
    size_t al = 0, bl = 0;
    for (size_t i = 0; i < n; i++) {
        al += (size_t)sprintf(a + al, "%06zu\n", i);
        bl += (size_t)sprintf(b + bl, "%06zu\n", i % 2 ? i : i + 1000000);
    }
    char *d = diff(a, b, SIZE_MAX, NULL);
    text t = apply(a, al, d);
    assert_int_equal(t.len, bl);
    assert_memory_equal(t.s, b, bl);
    free(t.s);
    free(d);
    free(a);
    free(b);
}

static void labels(void **state)
{
    (void)state;
    char *l = ocisbx_diff_label("a/", "src/x.c");
    assert_string_equal(l, "a/src/x.c");
    free(l);
    l = ocisbx_diff_label("b/", "odd\nna\"me\\\x01");
    assert_string_equal(l, "\"b/odd\\nna\\\"me\\\\\\001\"");
    free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(format),         cmocka_unit_test(hunks_split_and_merged),
        cmocka_unit_test(several_files_bounded), cmocka_unit_test(cut_with_note),
        cmocka_unit_test(random_inputs),  cmocka_unit_test(beyond_the_bounds),
        cmocka_unit_test(labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
