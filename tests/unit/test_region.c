/* Regions: short codes, case, the region form, realm domains. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ocisbx/auth.h"

static void expect_region(const char *in, const char *want)
{
    char *full = NULL;
    int rc = ocisbx_region_resolve(in, &full);
    if (rc != 0)
        fail_msg("%s: %s", in, ocisbx_error_message(ocisbx_error_last()));
    assert_non_null(full);
    assert_string_equal(full, want);
    ocisbx_free(full);
}

static void expect_bad_region(const char *in)
{
    static char sentinel[] = "sentinel";
    char *full = sentinel;
    assert_int_equal(ocisbx_region_resolve(in, &full), OCISBX_ECONFIG);
    assert_null(full);
    const char *msg = ocisbx_error_message(ocisbx_error_last());
    if (in && *in && strlen(in) <= 64)
        assert_non_null(strstr(msg, in));
}

static void test_short_codes(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"phx", "us-phoenix-1"},     {"iad", "us-ashburn-1"},      {"fra", "eu-frankfurt-1"},
        {"lhr", "uk-london-1"},      {"ord", "us-chicago-1"},      {"yyz", "ca-toronto-1"},
        {"nrt", "ap-tokyo-1"},       {"icn", "ap-seoul-1"},        {"bom", "ap-mumbai-1"},
        {"syd", "ap-sydney-1"},      {"gru", "sa-saopaulo-1"},     {"ams", "eu-amsterdam-1"},
        {"jed", "me-jeddah-1"},      {"zrh", "eu-zurich-1"},       {"sjc", "us-sanjose-1"},
        {"mel", "ap-melbourne-1"},   {"kix", "ap-osaka-1"},        {"yny", "ap-chuncheon-1"},
        {"hyd", "ap-hyderabad-1"},   {"cwl", "uk-cardiff-1"},      {"mtz", "il-jerusalem-1"},
        {"lin", "eu-milan-1"},       {"dxb", "me-dubai-1"},        {"auh", "me-abudhabi-1"},
        {"scl", "sa-santiago-1"},    {"mrs", "eu-marseille-1"},    {"vcp", "sa-vinhedo-1"},
        {"sin", "ap-singapore-1"},   {"jnb", "af-johannesburg-1"}, {"qro", "mx-queretaro-1"},
        {"mty", "mx-monterrey-1"},   {"arn", "eu-stockholm-1"},    {"cdg", "eu-paris-1"},
        {"bog", "sa-bogota-1"},      {"mad", "eu-madrid-1"},       {"xsp", "ap-singapore-2"},
        {"vap", "sa-valparaiso-1"},  {"yul", "ca-montreal-1"},     {"ruh", "me-riyadh-1"},
        {"ric", "us-gov-ashburn-1"}, {"ltn", "uk-gov-london-1"},   {"nja", "ap-chiyoda-1"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        expect_region(pairs[i][0], pairs[i][1]);
}

static void test_case_is_folded(void **state)
{
    (void)state;
    expect_region("PHX", "us-phoenix-1");
    expect_region("Iad", "us-ashburn-1");
    expect_region("US-PHOENIX-1", "us-phoenix-1");
    expect_region("Eu-Frankfurt-1", "eu-frankfurt-1");
}

static void test_full_names_pass_through(void **state)
{
    (void)state;
    expect_region("us-phoenix-1", "us-phoenix-1");
    expect_region("us-gov-ashburn-1", "us-gov-ashburn-1");
    /* not in the table, but in the region form: accepted as it is */
    expect_region("xx-newcity-1", "xx-newcity-1");
    expect_region("eu-dcc-somewhere-12", "eu-dcc-somewhere-12");
    expect_region("QQ-Future-3", "qq-future-3");
}

static void test_bad_regions(void **state)
{
    (void)state;
    expect_bad_region("");
    expect_bad_region("xyz");        /* unknown short code */
    expect_bad_region("phoenix");    /* no form */
    expect_bad_region("us-phoenix"); /* no number */
    expect_bad_region("us--phoenix-1");
    expect_bad_region("us-phoenix-1a");
    expect_bad_region("u-phoenix-1");
    expect_bad_region("us-phoenix-1 ");
    expect_bad_region("us_phoenix_1");
    expect_bad_region("us-phoenix-1.example.com");
    expect_bad_region("us-phö-1");
    expect_bad_region("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-1");
    char *full = NULL;
    assert_int_equal(ocisbx_region_resolve(NULL, &full), OCISBX_ECONFIG);
    assert_int_equal(ocisbx_region_resolve("phx", NULL), OCISBX_EINVAL);
}

static void test_domains(void **state)
{
    (void)state;
    assert_string_equal(ocisbx_region_domain("us-phoenix-1"), "oraclecloud.com");
    assert_string_equal(ocisbx_region_domain("eu-frankfurt-1"), "oraclecloud.com");
    assert_string_equal(ocisbx_region_domain("us-langley-1"), "oraclegovcloud.com");
    assert_string_equal(ocisbx_region_domain("us-gov-ashburn-1"), "oraclegovcloud.com");
    assert_string_equal(ocisbx_region_domain("uk-gov-london-1"), "oraclegovcloud.uk");
    assert_string_equal(ocisbx_region_domain("ap-chiyoda-1"), "oraclecloud8.com");
    assert_string_equal(ocisbx_region_domain("ap-ibaraki-1"), "oraclecloud8.com");
    /* unknown regions get the oc1 domain */
    assert_string_equal(ocisbx_region_domain("xx-newcity-1"), "oraclecloud.com");
    assert_string_equal(ocisbx_region_domain(NULL), "oraclecloud.com");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_codes),
        cmocka_unit_test(test_case_is_folded),
        cmocka_unit_test(test_full_names_pass_through),
        cmocka_unit_test(test_bad_regions),
        cmocka_unit_test(test_domains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
