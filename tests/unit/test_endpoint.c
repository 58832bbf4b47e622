/* One source for each fact: the endpoint of a region (built by the library
 * only, used by the client and the CLI), the one loopback rule (the
 * transport, the CLI, the instance principal, the emulator's --listen) and
 * the one expiry maximum. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ocisbx/ocisbx.h"
#include "util/internal.h"

static void test_endpoint_for_region(void **state)
{
    (void)state;
    char *ep = NULL;
    assert_int_equal(ocisbx_endpoint_for_region("us-chicago-1", &ep), 0);
    assert_string_equal(ep, "https://inference.generativeai.us-chicago-1.oci.oraclecloud.com");
    ocisbx_free(ep);
    /* a short code is resolved first */
    assert_int_equal(ocisbx_endpoint_for_region("PHX", &ep), 0);
    assert_string_equal(ep, "https://inference.generativeai.us-phoenix-1.oci.oraclecloud.com");
    ocisbx_free(ep);
    assert_int_equal(ocisbx_endpoint_for_region(NULL, &ep), OCISBX_EINVAL);
    assert_null(ep);
    assert_int_equal(ocisbx_endpoint_for_region("", &ep), OCISBX_EINVAL);
    assert_int_equal(ocisbx_endpoint_for_region("us-chicago-1", NULL), OCISBX_EINVAL);
    /* the client without an endpoint builds the same */
    ocisbx_client_options *o = NULL;
    ocisbx_client *c = NULL;
    assert_int_equal(ocisbx_client_options_new(&o), 0);
    assert_int_equal(ocisbx_client_options_set_region(o, "phx"), 0);
    assert_int_equal(ocisbx_client_new(o, &c), 0);
    assert_string_equal(ocisbx_client_endpoint(c), "https://inference.generativeai.us-phoenix-1.oci.oraclecloud.com");
    ocisbx_client_free(c);
    ocisbx_client_options_free(o);
}

static void test_host_is_loopback(void **state)
{
    (void)state;
    const char *yes[] = {"127.0.0.1", "127.255.0.9", "::1",         "0:0:0:0:0:0:0:1",
                         "localhost", "LOCALHOST",   "a.localhost", "x.y.LocalHost"};
    const char *no[] = {"128.0.0.1",         "126.0.0.1",         "::2",        "example.com", "",
                        "localhost.example", "127.0.0.1.example", "xlocalhost", "0.0.0.0"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (!ocisbx_host_is_loopback(yes[i]))
            fail_msg("%s should be loopback", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (ocisbx_host_is_loopback(no[i]))
            fail_msg("%s should not be loopback", no[i]);
    assert_false(ocisbx_host_is_loopback(NULL));
}

static void test_url_host_is_loopback(void **state)
{
    (void)state;
    const char *yes[] = {"http://127.0.0.1:8080/x",   "http://127.0.0.1",
                         "http://[::1]:1/",           "http://[::1]",
                         "http://user:pw@localhost/", "https://foo.localhost?x=1",
                         "http://localhost#f"};
    const char *no[] = {"http://127.0.0.1.example.com/",
                        "http://example.com/127.0.0.1",
                        "http://[::1",
                        "http://[::1]x/",
                        "nope",
                        "http://",
                        "http://example.com?h=localhost",
                        "http://localhost@example.com/"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (!ocisbx_url_host_is_loopback(yes[i]))
            fail_msg("%s should be loopback", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (ocisbx_url_host_is_loopback(no[i]))
            fail_msg("%s should not be loopback", no[i]);
    assert_false(ocisbx_url_host_is_loopback(NULL));
}

/* the expiry maximum: one constant, and the api layer enforces exactly it */
static void test_expiry_maximum(void **state)
{
    (void)state;
    assert_int_equal(OCISBX_EXPIRES_IN_MINUTES_MAX, 48 * 60);
    ocisbx_create_sandbox_details *d = NULL;
    assert_int_equal(ocisbx_create_sandbox_details_new(&d), 0);
    assert_int_equal(ocisbx_create_sandbox_details_set_expires_in_minutes(d, OCISBX_EXPIRES_IN_MINUTES_MAX), 0);
    assert_int_equal(ocisbx_create_sandbox_details_set_expires_in_minutes(d, OCISBX_EXPIRES_IN_MINUTES_MAX + 1),
                     OCISBX_EINVAL);
    ocisbx_create_sandbox_details_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoint_for_region),
        cmocka_unit_test(test_host_is_loopback),
        cmocka_unit_test(test_url_host_is_loopback),
        cmocka_unit_test(test_expiry_maximum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
