/* The tool table (src/harness/tools.c): every schema is valid JSON Schema of
 * the subset, the formats, and argument validation with messages for a
 * model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "harness/tools.h"
#include "ocisbx/harness.h"

static void table_is_complete(void **state)
{
    (void)state;
    static const char *const want[][2] = {{"read", OCISBX_LABEL_READ},  {"write", OCISBX_LABEL_WRITE},
                                          {"edit", OCISBX_LABEL_WRITE}, {"search", OCISBX_LABEL_READ},
                                          {"glob", OCISBX_LABEL_READ},  {"ls", OCISBX_LABEL_READ},
                                          {"exec", OCISBX_LABEL_EXEC},  {"job", OCISBX_LABEL_EXEC}};
    size_t n;
    const harness_tool *t = harness_tools(&n);
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(t[i].name, want[i][0]);
        assert_string_equal(t[i].label, want[i][1]);
        assert_true(strlen(t[i].description) > 80);
        cJSON *s = cJSON_Parse(t[i].schema);
        if (!s)
            fail_msg("%s: schema is not JSON", t[i].name);
        assert_string_equal(cJSON_GetObjectItem(s, "type")->valuestring, "object");
        assert_true(cJSON_IsFalse(cJSON_GetObjectItem(s, "additionalProperties")));
        const cJSON *props = cJSON_GetObjectItem(s, "properties"), *p, *r;
        cJSON_ArrayForEach(p, props)
        {
            const char *ty = cJSON_GetStringValue(cJSON_GetObjectItem(p, "type"));
            assert_non_null(ty);
            assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItem(p, "description")));
        }
        cJSON_ArrayForEach(r, cJSON_GetObjectItem(s, "required"))
            assert_non_null(cJSON_GetObjectItem(props, r->valuestring));
        cJSON_Delete(s);
        assert_ptr_equal(harness_tool_find(t[i].name), &t[i]);
    }
    assert_null(harness_tool_find("rm"));
}

static void formats(void **state)
{
    (void)state;
    char *text = NULL;
    assert_int_equal(harness_tools_json(harness_format_from_name("ours"), &text), 0);
    cJSON *l = cJSON_Parse(text);
    cJSON *first = cJSON_GetArrayItem(l, 0);
    assert_string_equal(cJSON_GetObjectItem(first, "name")->valuestring, "read");
    assert_string_equal(cJSON_GetObjectItem(first, "label")->valuestring, "workspace.read");
    assert_non_null(cJSON_GetObjectItem(first, "description"));
    assert_non_null(cJSON_GetObjectItem(first, "parameters"));
    assert_int_equal(cJSON_GetArraySize(first), 4);
    cJSON_Delete(l);
    free(text);

    assert_int_equal(harness_tools_json(harness_format_from_name("openai"), &text), 0);
    l = cJSON_Parse(text);
    first = cJSON_GetArrayItem(l, 0);
    assert_string_equal(cJSON_GetObjectItem(first, "type")->valuestring, "function");
    const cJSON *fn = cJSON_GetObjectItem(first, "function");
    assert_string_equal(cJSON_GetObjectItem(fn, "name")->valuestring, "read");
    assert_non_null(cJSON_GetObjectItem(fn, "parameters"));
    assert_null(cJSON_GetObjectItem(fn, "label"));
    cJSON_Delete(l);
    free(text);

    assert_int_equal(harness_tools_json(harness_format_from_name("anthropic"), &text), 0);
    l = cJSON_Parse(text);
    first = cJSON_GetArrayItem(l, 7);
    assert_string_equal(cJSON_GetObjectItem(first, "name")->valuestring, "job");
    assert_non_null(cJSON_GetObjectItem(first, "input_schema"));
    assert_null(cJSON_GetObjectItem(first, "parameters"));
    cJSON_Delete(l);
    free(text);
    assert_int_equal(harness_format_from_name("gemini"), -1);
}

static void check_bad(const char *tool, const char *args, const char *want)
{
    cJSON *a = (cJSON *)1;
    char msg[512];
    int rc = harness_args_check(harness_tool_find(tool), args, strlen(args), &a, msg, sizeof msg);
    if (rc != OCISBX_EINVAL || !strstr(msg, want))
        fail_msg("%s %s: rc %d, \"%s\", want \"%s\"", tool, args, rc, msg, want);
    assert_null(a);
}

static void bad_arguments(void **state)
{
    (void)state;
    check_bad("read", "", "not valid JSON");
    check_bad("read", "{\"path\":", "not valid JSON");
    check_bad("read", "{\"path\":\"/workspace/a\"} trailing", "not valid JSON");
    check_bad("read", "[1]", "must be a JSON object, not an array");
    check_bad("read", "{}", "missing required argument \"path\"");
    check_bad("read", "{\"path\":\"a\",\"pth\":1}",
              "unknown argument \"pth\" (the arguments are path, offset, limit)");
    check_bad("read", "{\"path\":7}", "argument \"path\" must be a string, not a number");
    check_bad("read", "{\"path\":\"\"}", "argument \"path\" must not be empty");
    check_bad("read", "{\"path\":\"a\",\"offset\":0}", "argument \"offset\" must be at least 1, not 0");
    check_bad("read", "{\"path\":\"a\",\"offset\":1.5}", "must be an integer, not a fraction");
    check_bad("read", "{\"path\":\"a\",\"limit\":\"10\"}", "must be an integer, not a string");
    check_bad("read", "{\"path\":\"a\",\"path\":\"b\"}", "given twice");
    check_bad("edit", "{\"path\":\"a\",\"old_string\":\"x\",\"new_string\":\"y\",\"replace_all\":1}",
              "must be true or false");
    check_bad("job", "{\"job_id\":\"j\",\"action\":\"stop\"}", "must be one of status, output, kill, not \"stop\"");
    check_bad("exec", "{\"command\":\"ls\",\"env\":{\"A\":1}}", "the value of \"A\" must be a string");
    check_bad("exec", "{\"command\":\"ls\",\"env\":{\"A B\":\"1\"}}", "not a valid variable name");
    check_bad("exec", "{\"command\":\"ls\",\"env\":[]}", "must be an object");
    check_bad("exec", "{\"command\":\"ls\",\"timeout\":100000}", "must be from 1 to 86400");
    check_bad("search", "{\"pattern\":null}", "must be a string, not null");
}

static void defaults_are_filled(void **state)
{
    (void)state;
    cJSON *a = NULL;
    char msg[256];
    const char *args = " {\"path\": \"/workspace/a\"}\n";
    assert_int_equal(harness_args_check(harness_tool_find("read"), args, strlen(args), &a, msg, sizeof msg), 0);
    assert_int_equal(cJSON_GetObjectItem(a, "offset")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(a, "limit")->valueint, 2000);
    cJSON_Delete(a);
    args = "{\"command\":\"true\",\"env\":{\"A_1\":\"x\"}}";
    assert_int_equal(harness_args_check(harness_tool_find("exec"), args, strlen(args), &a, msg, sizeof msg), 0);
    assert_int_equal(cJSON_GetObjectItem(a, "timeout")->valueint, 120);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(a, "background")));
    assert_null(cJSON_GetObjectItem(a, "cwd"));
    cJSON_Delete(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_is_complete),
        cmocka_unit_test(formats),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(defaults_are_filled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
