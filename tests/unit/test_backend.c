/* The backend's pure helpers: sandbox paths, UTF-8 cuts and checks, options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend_int.h"
#include "util/utf8.h"
#include "ocisbx/backend.h"

static void rel_ok(const char *in, const char *want)
{
    char *rel = NULL;
    assert_int_equal(ocisbx_backend_rel_path(in, &rel), 0);
    assert_string_equal(rel, want);
    free(rel);
}

static void rel_bad(const char *in, int code)
{
    char *rel = NULL;
    assert_int_equal(ocisbx_backend_rel_path(in, &rel), code);
    assert_null(rel);
}

static void test_rel_path(void **state)
{
    (void)state;
    rel_ok("/workspace", "");
    rel_ok("/workspace/", "");
    rel_ok("/workspace/a/b", "a/b");
    rel_ok("a//b/./c/", "a/b/c");
    rel_ok("/workspace/a/../b", "b");
    rel_ok("a/b/../../c", "c");
    rel_ok("-n", "-n");
    rel_ok("/workspace/x y\n\xff", "x y\n\xff");
    rel_bad("/etc/passwd", OCISBX_EFORBIDDEN);
    rel_bad("/workspacex", OCISBX_EFORBIDDEN);
    rel_bad("/", OCISBX_EFORBIDDEN);
    rel_bad("..", OCISBX_EFORBIDDEN);
    rel_bad("/workspace/a/../..", OCISBX_EFORBIDDEN);
    rel_bad("/workspace/../workspace/a", OCISBX_EFORBIDDEN);
    rel_bad("", OCISBX_EINVAL);
}

static void test_utf8(void **state)
{
    (void)state;
    const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"; /* a é € 😀 : 1+2+3+4 */
    assert_int_equal(ocisbx_utf8_cut_back(s, 0), 0);
    assert_int_equal(ocisbx_utf8_cut_back(s, 1), 1);
    assert_int_equal(ocisbx_utf8_cut_back(s, 2), 1);
    assert_int_equal(ocisbx_utf8_cut_back(s, 3), 3);
    assert_int_equal(ocisbx_utf8_cut_back(s, 4), 3);
    assert_int_equal(ocisbx_utf8_cut_back(s, 5), 3);
    assert_int_equal(ocisbx_utf8_cut_back(s, 6), 6);
    assert_int_equal(ocisbx_utf8_cut_back(s, 9), 6);
    assert_int_equal(ocisbx_utf8_cut_back(s, 10), 10);
    assert_int_equal(ocisbx_utf8_cut_forward(s, 10, 2), 3);
    assert_int_equal(ocisbx_utf8_cut_forward(s, 10, 4), 6);
    assert_int_equal(ocisbx_utf8_cut_forward(s, 10, 7), 10);
    assert_int_equal(ocisbx_utf8_cut_forward(s, 10, 1), 1);
    assert_true(ocisbx_utf8_valid(s, 10));
    assert_false(ocisbx_utf8_valid(s, 9));
    assert_true(ocisbx_utf8_valid_sample(s, 9));
    assert_false(ocisbx_utf8_valid_sample("\xff", 1));
    assert_false(ocisbx_utf8_valid("\xc0\x80", 2));     /* overlong */
    assert_false(ocisbx_utf8_valid("\xed\xa0\x80", 3)); /* surrogate */
    assert_false(ocisbx_utf8_valid_sample("\xc3(", 2));
}

static void test_options(void **state)
{
    (void)state;
    ocisbx_backend_options *o = NULL;
    assert_int_equal(ocisbx_backend_options_new(&o), 0);
    assert_int_equal(ocisbx_backend_options_add_env(o, "GOOD_1", "v", 1), 0);
    assert_int_equal(ocisbx_backend_options_add_env(o, "1BAD", "v", 0), OCISBX_EINVAL);
    assert_int_equal(ocisbx_backend_options_add_env(o, "A=B", "v", 0), OCISBX_EINVAL);
    assert_int_equal(ocisbx_backend_options_set_max_output_bytes(o, 100), OCISBX_EINVAL);
    assert_int_equal(ocisbx_backend_options_set_ready_timeout_ms(o, 0), OCISBX_EINVAL);
    ocisbx_backend_options_free(o);
    /* the explicit option, the environment, the default (the settings table's) */
    setenv("OCI_SANDBOX_SHAPE", "MEDIUM", 1);
    assert_string_equal(ocisbx_backend_setting("LARGE", "shape"), "LARGE");
    assert_string_equal(ocisbx_backend_setting(NULL, "shape"), "MEDIUM");
    unsetenv("OCI_SANDBOX_SHAPE");
    assert_string_equal(ocisbx_backend_setting(NULL, "shape"), OCISBX_BACKEND_DEFAULT_SHAPE);
    ocisbx_exec_options *e = NULL;
    assert_int_equal(ocisbx_exec_options_new(&e), 0);
    assert_int_equal(ocisbx_exec_options_set_timeout_ms(e, 0), OCISBX_EINVAL);
    assert_int_equal(ocisbx_exec_options_set_max_output_bytes(e, 10), OCISBX_EINVAL);
    assert_int_equal(ocisbx_exec_options_set_max_output_bytes(e, 0), 0);
    ocisbx_exec_options_free(e);
    /* refused before any request: no project */
    unsetenv("OCI_SANDBOX_PROJECT_ID");
    ocisbx_backend *b = NULL;
    assert_int_equal(ocisbx_backend_create(NULL, NULL, &b), OCISBX_ECONFIG);
    assert_int_equal(ocisbx_backend_local("/nonexistent/dir", NULL, &b), OCISBX_ENOTFOUND);
    assert_null(b);
}

/* OCI_SANDBOX_READY_TIMEOUT (the settings table's) is checked before any
 * request: a bad one fails create naming the variable. */
static void test_ready_timeout_env(void **state)
{
    (void)state;
    ocisbx_http_options *h = NULL;
    ocisbx_client_options *co = NULL;
    ocisbx_client *c = NULL;
    assert_int_equal(ocisbx_http_options_new(&h), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(h, 1), 0);
    assert_int_equal(ocisbx_http_options_set_retries(h, 0), 0);
    assert_int_equal(ocisbx_client_options_new(&co), 0);
    assert_int_equal(ocisbx_client_options_set_endpoint(co, "http://127.0.0.1:1"), 0);
    assert_int_equal(ocisbx_client_options_set_http_options(co, h), 0);
    assert_int_equal(ocisbx_client_new(co, &c), 0);
    ocisbx_backend_options *o = NULL;
    assert_int_equal(ocisbx_backend_options_new(&o), 0);
    assert_int_equal(ocisbx_backend_options_set_client(o, c), 0);
    setenv("OCI_SANDBOX_READY_TIMEOUT", "soon", 1);
    ocisbx_backend *b = NULL;
    assert_int_equal(ocisbx_backend_create("ocid1.generativeaiproject.oc1..p", o, &b), OCISBX_ECONFIG);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "OCI_SANDBOX_READY_TIMEOUT soon"));
    assert_null(b);
    unsetenv("OCI_SANDBOX_READY_TIMEOUT");
    ocisbx_backend_options_free(o);
    ocisbx_client_free(c);
    ocisbx_client_options_free(co);
    ocisbx_http_options_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rel_path),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_ready_timeout_env),
    };
    return cmocka_run_group_tests_name("backend helpers", tests, NULL, NULL);
}
