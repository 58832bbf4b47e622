/* Random ids: length, alphabet, uniqueness, and no modulo bias (a chi-square
 * test whose threshold a biased generator exceeds by far). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ocisbx/util.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

static void test_length_and_alphabet(void **state)
{
    (void)state;
    size_t lens[] = {0, 1, 32, 63, 64, 65, 200};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        char buf[256];
        memset(buf, '#', sizeof buf);
        assert_int_equal(ocisbx_random_id(buf, lens[i]), 0);
        assert_int_equal(strlen(buf), lens[i]);
        assert_int_equal(buf[lens[i] + 1], '#'); /* nothing written past the NUL */
        for (size_t k = 0; k < lens[i]; k++)
            assert_non_null(memchr(alphabet, buf[k], 62));
    }
    assert_int_equal(ocisbx_random_id(NULL, 5), OCISBX_EINVAL);
}

static int cmp_id(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void test_ids_differ(void **state)
{
    (void)state;
    enum { N = 1000 };
    char(*ids)[33] = calloc(N, sizeof *ids);
    assert_non_null(ids);
    for (int i = 0; i < N; i++)
        assert_int_equal(ocisbx_random_id(ids[i], 32), 0);
    qsort(ids, N, sizeof *ids, cmp_id);
    for (int i = 1; i < N; i++)
        assert_string_not_equal(ids[i - 1], ids[i]);
    free(ids);
}

static void test_uniform_no_modulo_bias(void **state)
{
    (void)state;
    /* 62 * 4000 characters. With byte % 62 and no rejection, the first 8
     * characters would come 25 % more often: chi-square about 1400. Unbiased,
     * chi-square has 61 degrees of freedom (mean 61, sd 11); 200 is never
     * reached in practice (p < 1e-15). */
    enum { PER = 4000, TOTAL = 62 * PER, CHUNK = 1000 };
    long counts[256] = {0};
    char buf[CHUNK + 1];
    for (int done = 0; done < TOTAL; done += CHUNK) {
        assert_int_equal(ocisbx_random_id(buf, CHUNK), 0);
        for (int i = 0; i < CHUNK; i++)
            counts[(unsigned char)buf[i]]++;
    }
    double chi2 = 0;
    for (int i = 0; i < 62; i++) {
        long c = counts[(unsigned char)alphabet[i]];
        assert_true(c > 0);
        double d = (double)c - PER;
        chi2 += d * d / PER;
    }
    print_message("chi-square over 62 symbols: %.1f (61 degrees of freedom)\n", chi2);
    assert_true(chi2 < 200.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_length_and_alphabet),
        cmocka_unit_test(test_ids_differ),
        cmocka_unit_test(test_uniform_no_modulo_bias),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
