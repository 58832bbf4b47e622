/* What the backend gives the layers above it (src/backend/access.c,
 * include/ocisbx/backend.h): the workspace path rule, the output cap and
 * redaction with the backend's secrets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ocisbx/backend.h"

static void path_ok(const char *in, const char *want)
{
    char *out = NULL;
    if (ocisbx_backend_workspace_path(in, &out) != 0)
        fail_msg("%s: refused", in);
    assert_string_equal(out, want);
    ocisbx_free(out);
}

static void path_bad(const char *in, int code)
{
    char *out = (char *)1;
    assert_int_equal(ocisbx_backend_workspace_path(in, &out), code);
    assert_null(out);
}

static void workspace_path(void **state)
{
    (void)state;
    path_ok("/workspace", "/workspace");
    path_ok("/workspace/", "/workspace");
    path_ok(".", "/workspace");
    path_ok("a//b/./c/", "/workspace/a/b/c");
    path_ok("/workspace/a/../b", "/workspace/b");
    path_ok("-n", "/workspace/-n");
    path_ok("workspace/x", "/workspace/workspace/x");
    path_ok("/workspace/x y\n\xff", "/workspace/x y\n\xff");
    path_bad("/etc/passwd", OCISBX_EFORBIDDEN);
    path_bad("/workspacefoo", OCISBX_EFORBIDDEN);
    path_bad("..", OCISBX_EFORBIDDEN);
    path_bad("a/../../b", OCISBX_EFORBIDDEN);
    path_bad("/workspace/..", OCISBX_EFORBIDDEN);
    path_bad("", OCISBX_EINVAL);
    assert_int_equal(ocisbx_backend_workspace_path("a", NULL), OCISBX_EINVAL);
}

static int with_backend(void **state, size_t max_output)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/test_backend_access_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    ocisbx_backend_options *o = NULL;
    ocisbx_backend *b = NULL;
    int rc = ocisbx_backend_options_new(&o);
    if (!rc)
        rc = ocisbx_backend_options_set_isolation(o, 0); /* nothing runs here */
    if (!rc)
        rc = ocisbx_backend_options_add_env(o, "TOKEN", "s3cr3t", 1);
    if (!rc)
        rc = ocisbx_backend_options_add_env(o, "PLAIN", "visible", 0);
    if (!rc && max_output)
        rc = ocisbx_backend_options_set_max_output_bytes(o, max_output);
    if (!rc)
        rc = ocisbx_backend_local(dir, o, &b);
    ocisbx_backend_options_free(o);
    rmdir(dir);
    *state = b;
    return rc ? -1 : 0;
}

static void max_output_and_redact(void **state)
{
    (void)state;
    ocisbx_backend *b = NULL;
    assert_int_equal(with_backend((void **)&b, 0), 0);
    assert_int_equal(ocisbx_backend_max_output_bytes(b), OCISBX_BACKEND_DEFAULT_MAX_OUTPUT);
    char *out = NULL;
    size_t len = 0;
    static const char text[] = "a s3cr3t b\0s3cr3ts3cr3t visible";
    assert_int_equal(ocisbx_backend_redact(b, text, sizeof text - 1, &out, &len), 0);
    static const char want[] = "a [REDACTED] b\0[REDACTED][REDACTED] visible";
    assert_int_equal(len, sizeof want - 1);
    assert_memory_equal(out, want, len);
    assert_int_equal(out[len], 0);
    ocisbx_free(out);
    assert_int_equal(ocisbx_backend_redact(b, NULL, 0, &out, &len), 0);
    assert_string_equal(out, "");
    assert_int_equal(len, 0);
    ocisbx_free(out);
    assert_int_equal(ocisbx_backend_redact(b, NULL, 3, &out, &len), OCISBX_EINVAL);
    ocisbx_backend_free(b);

    assert_int_equal(with_backend((void **)&b, 4096), 0);
    assert_int_equal(ocisbx_backend_max_output_bytes(b), 4096);
    ocisbx_backend_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workspace_path),
        cmocka_unit_test(max_output_and_redact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
