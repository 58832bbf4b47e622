/* ocisbx_features(): each bit says what the library really does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "ocisbx/ocisbx.h"

static void test_yaml_bit_is_what_policy_files_do(void **state)
{
    (void)state;
    char path[] = "/tmp/ocisbx-features-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char yaml[] = "rules:\n  - label: workspace.exec\n    decision: deny\n";
    assert_int_equal(write(fd, yaml, sizeof yaml - 1), (ssize_t)(sizeof yaml - 1));
    close(fd);
    ocisbx_harness_options *o = NULL;
    assert_int_equal(ocisbx_harness_options_new(&o), 0);
    int rc = ocisbx_harness_options_set_policy_file(o, path);
    unlink(path);
    ocisbx_harness_options_free(o);
    if (ocisbx_features() & OCISBX_FEATURE_YAML_POLICY)
        assert_int_equal(rc, 0);
    else
        assert_int_equal(rc, OCISBX_EUNSUPPORTED);
}

static void test_other_bits(void **state)
{
    (void)state;
    unsigned f = ocisbx_features();
    assert_true(f & OCISBX_FEATURE_LOCAL_BACKEND);
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    assert_int_equal(!!(f & OCISBX_FEATURE_HTTP2), !!(v->features & CURL_VERSION_HTTP2));
    /* no bit beyond the ones defined */
    assert_int_equal(f & ~(OCISBX_FEATURE_YAML_POLICY | OCISBX_FEATURE_LOCAL_BACKEND | OCISBX_FEATURE_HTTP2), 0);
    /* the tests are built only with a library that reads YAML (cmake/OcisbxDeps.cmake) */
    assert_true(f & OCISBX_FEATURE_YAML_POLICY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_bit_is_what_policy_files_do),
        cmocka_unit_test(test_other_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
