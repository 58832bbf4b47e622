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

#include "harness/call.h"
#include "harness/tools.h"
#include "ocisbx/backend.h"
#include "ocisbx/harness.h"

static void table_is_complete(void **state)
{
    (void)state;
    static const char *const want[][2] = {{"read", OCISBX_LABEL_READ},        {"write", OCISBX_LABEL_WRITE},
                                          {"edit", OCISBX_LABEL_WRITE},       {"search", OCISBX_LABEL_READ},
                                          {"glob", OCISBX_LABEL_READ},        {"ls", OCISBX_LABEL_READ},
                                          {"exec", OCISBX_LABEL_EXEC},        {"job", OCISBX_LABEL_EXEC},
                                          {"apply_patch", OCISBX_LABEL_WRITE}};
    size_t n;
    const harness_tool *t = harness_tools(&n);
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(t[i].name, want[i][0]);
        assert_string_equal(t[i].label, want[i][1]);
        assert_true(strlen(t[i].description) > 80);
        cJSON *s = harness_tool_schema(&t[i]);
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
    check_bad("job", "{\"job_id\":\"j\",\"action\":\"stop\"}",
              "must be one of status, output, wait, kill, not \"stop\"");
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

/* The defaults the backend has come from its macros, through the rows. */
static void defaults_come_from_the_backend(void **state)
{
    (void)state;
    static const struct {
        const char *tool, *param;
        long long want;
    } cases[] = {
        {"exec", "timeout", OCISBX_BACKEND_DEFAULT_EXEC_TIMEOUT_MS / 1000},
        {"read", "limit", OCISBX_BACKEND_READ_LIMIT},
        {"search", "head_limit", OCISBX_BACKEND_DEFAULT_SEARCH_RESULTS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const harness_tool *t = harness_tool_find(cases[i].tool);
        cJSON *s = harness_tool_schema(t);
        const cJSON *p = cJSON_GetObjectItem(cJSON_GetObjectItem(s, "properties"), cases[i].param);
        const cJSON *d = cJSON_GetObjectItem(p, "default");
        if (!cJSON_IsNumber(d) || (long long)d->valuedouble != cases[i].want)
            fail_msg("%s.%s: default is not %lld", cases[i].tool, cases[i].param, cases[i].want);
        cJSON_Delete(s);
        /* and the same default reaches the tool */
        cJSON *a = NULL;
        char msg[256];
        const char *args = !strcmp(cases[i].tool, "exec")   ? "{\"command\":\"true\"}"
                           : !strcmp(cases[i].tool, "read") ? "{\"path\":\"a\"}"
                                                            : "{\"pattern\":\"x\"}";
        assert_int_equal(harness_args_check(t, args, strlen(args), &a, msg, sizeof msg), 0);
        assert_int_equal((long long)cJSON_GetObjectItem(a, cases[i].param)->valuedouble, cases[i].want);
        cJSON_Delete(a);
    }
}

/* A row with a list of objects (as edit's edits): its schema and its checks. */
static const harness_tool LIST_TOOL = {
    "multi",
    "workspace.write",
    "A test row.",
    (const harness_param[]){
        {"path", HARNESS_PATH, .required = true, .has_min = true, .min = 1, .help = "The file"},
        {"edits", HARNESS_LIST, .required = true, .has_min = true, .min = 1, .has_max = true, .max = 3,
         .help = "The edits",
         .items = (const harness_param[]){{"old_string", HARNESS_STRING, .required = true, .has_min = true, .min = 1,
                                           .help = "Old"},
                                          {"replace_all", HARNESS_BOOLEAN, .has_default = true, .help = "All"},
                                          {0}}},
        {"mode", HARNESS_STRING, .has_default = true, .def_str = "apply", .help = "How"},
        {0}},
    NULL,
    0};

static void list_parameters(void **state)
{
    (void)state;
    cJSON *s = harness_tool_schema(&LIST_TOOL);
    char *text = cJSON_PrintUnformatted(s);
    assert_string_equal(
        text, "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"minLength\":1,\"description\":"
              "\"The file\"},\"edits\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":3,\"items\":{\"type\":"
              "\"object\",\"properties\":{\"old_string\":{\"type\":\"string\",\"minLength\":1,\"description\":"
              "\"Old\"},\"replace_all\":{\"type\":\"boolean\",\"default\":false,\"description\":\"All\"}},"
              "\"required\":[\"old_string\"],\"additionalProperties\":false},\"description\":\"The edits\"},"
              "\"mode\":{\"type\":\"string\",\"default\":\"apply\",\"description\":\"How\"}},\"required\":[\"path\","
              "\"edits\"],\"additionalProperties\":false}");
    free(text);
    cJSON_Delete(s);
    static const char *const bad[][2] = {
        {"{\"path\":\"a\",\"edits\":{}}", "argument \"edits\" must be an array, not an object"},
        {"{\"path\":\"a\",\"edits\":[]}", "argument \"edits\" must have at least 1 item"},
        {"{\"path\":\"a\",\"edits\":[{},{},{},{}]}", "argument \"edits\" must have at most 3 items"},
        {"{\"path\":\"a\",\"edits\":[7]}", "argument \"edits[0]\" must be an object, not a number"},
        {"{\"path\":\"a\",\"edits\":[{\"old_string\":\"x\"},{}]}",
         "missing required argument \"edits[1].old_string\""},
        {"{\"path\":\"a\",\"edits\":[{\"old_string\":\"x\",\"new\":1}]}",
         "unknown argument \"edits[0].new\" (the arguments are old_string, replace_all)"},
        {"{\"path\":\"a\",\"edits\":[{\"old_string\":\"\"}]}", "argument \"edits[0].old_string\" must not be empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *a = (cJSON *)1;
        char msg[512];
        int rc = harness_args_check(&LIST_TOOL, bad[i][0], strlen(bad[i][0]), &a, msg, sizeof msg);
        if (rc != OCISBX_EINVAL || !strstr(msg, bad[i][1]))
            fail_msg("%s: rc %d, \"%s\", want \"%s\"", bad[i][0], rc, msg, bad[i][1]);
        assert_null(a);
    }
    cJSON *a = NULL;
    char msg[256];
    const char *ok = "{\"path\":\"a\",\"edits\":[{\"old_string\":\"x\"}]}";
    assert_int_equal(harness_args_check(&LIST_TOOL, ok, strlen(ok), &a, msg, sizeof msg), 0);
    assert_string_equal(cJSON_GetObjectItem(a, "mode")->valuestring, "apply");
    cJSON_Delete(a);
}

/* The property of a tool's schema in the given format's list. */
static cJSON *schema_in(cJSON *list, int format, const char *tool)
{
    cJSON *t;
    cJSON_ArrayForEach(t, list)
    {
        cJSON *fn = format == HARNESS_FORMAT_OPENAI ? cJSON_GetObjectItem(t, "function") : t;
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(fn, "name")), tool))
            return cJSON_GetObjectItem(fn, format == HARNESS_FORMAT_ANTHROPIC ? "input_schema" : "parameters");
    }
    fail_msg("%s is not in format %d", tool, format);
    return NULL;
}

/* Issue 18's tools and parameters are in every format, generated from the
 * rows: apply_patch {patch}, edit's edits (items), dry_run. */
static void issue18_rows_in_every_format(void **state)
{
    (void)state;
    for (int f = 0; f < 3; f++) {
        char *text = NULL;
        assert_int_equal(harness_tools_json(f, &text), 0);
        cJSON *l = cJSON_Parse(text);
        free(text);
        cJSON *s = schema_in(l, f, "apply_patch");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(s, "required"), 0)), "patch");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
                                cJSON_GetObjectItem(cJSON_GetObjectItem(s, "properties"), "patch"), "type")),
                            "string");
        s = schema_in(l, f, "edit");
        const cJSON *props = cJSON_GetObjectItem(s, "properties");
        const cJSON *items = cJSON_GetObjectItem(cJSON_GetObjectItem(props, "edits"), "items");
        assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(items, "properties"), "old_string"));
        assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(items, "properties"), "replace_all"));
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(items, "required")), 2);
        assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(props, "dry_run"), "default")));
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(s, "required")), 1); /* path only */
        props = cJSON_GetObjectItem(schema_in(l, f, "search"), "properties");
        const cJSON *mode = cJSON_GetObjectItem(props, "output_mode");
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(mode, "enum")), 3);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(mode, "default")), "content");
        assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(props, "context"), "maximum")->valueint,
                         OCISBX_SEARCH_MAX_CONTEXT);
        assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(props, "head_limit"), "maximum")->valueint,
                         OCISBX_SEARCH_MAX_LIMIT);
        assert_non_null(cJSON_GetObjectItem(props, "offset"));
        assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(props, "max_results"), "default"));
        props = cJSON_GetObjectItem(schema_in(l, f, "ls"), "properties");
        assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(props, "limit"), "default")->valueint,
                         OCISBX_BACKEND_LS_DEFAULT_LIMIT);
        assert_non_null(cJSON_GetObjectItem(props, "offset"));
        props = cJSON_GetObjectItem(schema_in(l, f, "exec"), "properties");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(props, "yield_ms"), "type")),
                            "integer");
        props = cJSON_GetObjectItem(schema_in(l, f, "job"), "properties");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(
                                cJSON_GetObjectItem(cJSON_GetObjectItem(props, "action"), "enum"), 2)),
                            "wait");
        assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(props, "wait_ms"), "default"));
        cJSON_Delete(l);
    }
    cJSON *a = NULL;
    char msg[256];
    const char *ok = "{\"path\":\"a\",\"edits\":[{\"old_string\":\"x\",\"new_string\":\"y\"}]}";
    assert_int_equal(harness_args_check(harness_tool_find("edit"), ok, strlen(ok), &a, msg, sizeof msg), 0);
    cJSON_Delete(a);
    check_bad("apply_patch", "{}", "missing required argument \"patch\"");
    check_bad("search", "{\"pattern\":\"x\",\"output_mode\":\"lines\"}",
              "must be one of content, files_with_matches, count");
    check_bad("search", "{\"pattern\":\"x\",\"context\":101}", "argument \"context\"");
    check_bad("search", "{\"pattern\":\"x\",\"offset\":-1}", "argument \"offset\" must be at least 0");
    check_bad("ls", "{\"path\":\"a\",\"limit\":0}", "argument \"limit\" must be from 1 to 100000, not 0");
    check_bad("exec", "{\"command\":\"ls\",\"yield_ms\":0}", "argument \"yield_ms\" must be from 1 to 600000, not 0");
    check_bad("job", "{\"job_id\":\"j\",\"action\":\"wait\",\"wait_ms\":600001}", "argument \"wait_ms\"");
    check_bad("edit", "{\"path\":\"a\",\"edits\":[{\"old_string\":\"x\"}]}",
              "missing required argument \"edits[0].new_string\"");
}

/* Numbers past the exact integers are "too large" (or small) with the
 * limit, not "not an integer" (issue 20, item 18). */
static void huge_integers(void **state)
{
    (void)state;
    check_bad("exec", "{\"command\":\"ls\",\"timeout\":1e400}",
              "argument \"timeout\" is too large: it must be from 1 to 86400");
    check_bad("exec", "{\"command\":\"ls\",\"timeout\":99999999999999999999}",
              "argument \"timeout\" is too large: it must be from 1 to 86400");
    check_bad("exec", "{\"command\":\"ls\",\"timeout\":-1e400}",
              "argument \"timeout\" is too small: it must be from 1 to 86400");
    check_bad("job", "{\"job_id\":\"j\",\"action\":\"output\",\"offset\":99999999999999999999}",
              "argument \"offset\" is too large (at most 9007199254740992)");
    check_bad("job", "{\"job_id\":\"j\",\"action\":\"output\",\"offset\":-1e400}",
              "argument \"offset\" is too small (at least 0)");
    check_bad("job", "{\"job_id\":\"j\",\"action\":\"output\",\"offset\":-3}",
              "argument \"offset\" must be at least 0, not -3");
    check_bad("exec", "{\"command\":\"ls\",\"timeout\":2.5}", "must be an integer, not a fraction");
}

/* A row's arguments as docs/harness.md's table writes them:
 * {required, choice: a\|b, optional?, with_default?=value}. */
static void signature(const harness_tool *t, char *out, size_t cap)
{
    size_t o = (size_t)snprintf(out, cap, "{");
    for (const harness_param *p = t->params; p->name && o < cap; p++) {
        o += (size_t)snprintf(out + o, cap - o, "%s%s", p == t->params ? "" : ", ", p->name);
        if (p->choices) {
            o += (size_t)snprintf(out + o, cap - o, ":");
            for (const char *const *c = p->choices; *c; c++)
                o += (size_t)snprintf(out + o, cap - o, "%s%s", c == p->choices ? " " : "\\|", *c);
        }
        if (!p->required)
            o += (size_t)snprintf(out + o, cap - o, "?");
        if (p->implied)
            o += (size_t)snprintf(out + o, cap - o, "=\"%s\"", p->implied);
        else if (p->has_default && p->type == HARNESS_BOOLEAN)
            o += (size_t)snprintf(out + o, cap - o, "=%s", p->def_num ? "true" : "false");
        else if (p->has_default && p->type == HARNESS_INTEGER)
            o += (size_t)snprintf(out + o, cap - o, "=%lld", (long long)p->def_num);
        else if (p->has_default)
            o += (size_t)snprintf(out + o, cap - o, "=\"%s\"", p->def_str ? p->def_str : "");
    }
    if (o < cap)
        snprintf(out + o, cap - o, "}");
}

/* docs/harness.md's tool table is checked against the rows: each tool's
 * row there names its label and exactly the arguments the rows have. */
static void docs_table_matches_rows(void **state)
{
    (void)state;
    FILE *f = fopen(OCISBX_SOURCE_DIR "/docs/harness.md", "r");
    assert_non_null(f);
    static char doc[256 * 1024];
    size_t len = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[len] = 0;
    size_t n;
    const harness_tool *t = harness_tools(&n);
    for (size_t i = 0; i < n; i++) {
        char want[1024], sig[900];
        signature(&t[i], sig, sizeof sig);
        snprintf(want, sizeof want, "| `%s` | `%s` | `%s` |", t[i].name, t[i].label, sig);
        if (!strstr(doc, want))
            fail_msg("docs/harness.md has no tool table row starting \"%s\"", want);
    }
}

/* The library's codes as the model's error codes (call_error_code). */
static void error_codes_for_the_model(void **state)
{
    (void)state;
    static const struct {
        int rc;
        const char *code;
    } map[] = {
        {OCISBX_ENOTFOUND, "not_found"},
        {OCISBX_EISDIR, "is_directory"},
        {OCISBX_EFORBIDDEN, "outside_workspace"},
        {OCISBX_ENOMATCH, "no_match"},
        {OCISBX_ENOTUNIQUE, "not_unique"},
        {OCISBX_ECONFLICT, "conflict"},
        {OCISBX_EBINARY, "binary_file"},
        {OCISBX_ETIMEOUT, "timeout"},
        {OCISBX_EINVAL, "invalid_arguments"},
        {OCISBX_ETOOLARGE, "too_large"}, /* issue 20, item 14: edit of a file over the limit */
        {OCISBX_ECANCELED, "canceled"},  /* interrupted (Ctrl-C): not the workspace's failure */
        {OCISBX_ESERVICE, "backend_error"},
        {OCISBX_EIO, "backend_error"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        assert_string_equal(call_error_code(map[i].rc), map[i].code);
}


/* What a terminal is shown of a held call: the bidi controls (U+061C,
 * U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) escaped as C0 and C1
 * controls are, in the arguments (JSON: \uXXXX) and the reason (\xNN);
 * other UTF-8 (U+2069's neighbours, U+202F) kept. */
static void prompt_escapes_bidi(void **state)
{
    (void)state;
    static const struct {
        const char *utf8, *json, *text;
    } bidi[] = {
        {"\xd8\x9c", "\\u061c", "\\xd8\\x9c"},         {"\xe2\x80\x8e", "\\u200e", "\\xe2\\x80\\x8e"},
        {"\xe2\x80\x8f", "\\u200f", "\\xe2\\x80\\x8f"}, {"\xe2\x80\xaa", "\\u202a", "\\xe2\\x80\\xaa"},
        {"\xe2\x80\xab", "\\u202b", "\\xe2\\x80\\xab"}, {"\xe2\x80\xac", "\\u202c", "\\xe2\\x80\\xac"},
        {"\xe2\x80\xad", "\\u202d", "\\xe2\\x80\\xad"}, {"\xe2\x80\xae", "\\u202e", "\\xe2\\x80\\xae"},
        {"\xe2\x81\xa6", "\\u2066", "\\xe2\\x81\\xa6"}, {"\xe2\x81\xa7", "\\u2067", "\\xe2\\x81\\xa7"},
        {"\xe2\x81\xa8", "\\u2068", "\\xe2\\x81\\xa8"}, {"\xe2\x81\xa9", "\\u2069", "\\xe2\\x81\\xa9"},
    };
    for (size_t i = 0; i < sizeof bidi / sizeof bidi[0]; i++) {
        char in[64], want[64];
        snprintf(in, sizeof in, "{\"command\":\"rm %sfdp.exe\"}", bidi[i].utf8);
        snprintf(want, sizeof want, "{\"command\":\"rm %sfdp.exe\"}", bidi[i].json);
        char *j = call_json_controls_escaped(in);
        assert_non_null(j);
        assert_string_equal(j, want);
        cJSON *parsed = cJSON_Parse(j); /* still JSON, the same string */
        snprintf(want, sizeof want, "rm %sfdp.exe", bidi[i].utf8);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(parsed, "command")), want);
        cJSON_Delete(parsed);
        free(j);
        snprintf(in, sizeof in, "reason %s!", bidi[i].utf8);
        snprintf(want, sizeof want, "reason %s!", bidi[i].text);
        char *t = call_text_controls_escaped(in);
        assert_non_null(t);
        assert_string_equal(t, want);
        free(t);
    }
    /* not bidi controls: kept; C1 as before */
    char *j = call_json_controls_escaped("\"\xe2\x80\xaf\xe2\x81\xaa\xd8\x9d\xc2\x9b\"");
    assert_string_equal(j, "\"\xe2\x80\xaf\xe2\x81\xaa\xd8\x9d\\u009b\"");
    free(j);
    char *t = call_text_controls_escaped("\xe2\x80\xaf\xe2\x80\xa9x\xe2\x80");
    assert_string_equal(t, "\xe2\x80\xaf\xe2\x80\xa9x\\xe2\\x80");
    free(t);
}

/* Content for a JSON string: NUL and bytes that are not UTF-8 become
 * U+FFFD, nothing is dropped, valid UTF-8 is kept as it is. */
static void text_clean_keeps_every_byte(void **state)
{
    (void)state;
    static const char in[] = "before\0after\n\xff\xfe|\xc3\xa9|\xe2\x82|\xf0\x9f\x98\x80\0";
    size_t n = 0;
    char *c = call_text_clean(in, sizeof in - 1, &n);
    static const char want[] = "before\xef\xbf\xbd"
                               "after\n\xef\xbf\xbd\xef\xbf\xbd|\xc3\xa9|\xef\xbf\xbd\xef\xbf\xbd|\xf0\x9f\x98\x80"
                               "\xef\xbf\xbd";
    assert_int_equal(n, sizeof want - 1);
    assert_memory_equal(c, want, n);
    assert_int_equal(c[n], '\0');
    assert_int_equal(strlen(c), n);
    free(c);
    c = call_text_clean("", 0, &n);
    assert_string_equal(c, "");
    assert_int_equal(n, 0);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_is_complete),
        cmocka_unit_test(formats),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(defaults_are_filled),
        cmocka_unit_test(defaults_come_from_the_backend),
        cmocka_unit_test(list_parameters),
        cmocka_unit_test(issue18_rows_in_every_format),
        cmocka_unit_test(huge_integers),
        cmocka_unit_test(docs_table_matches_rows),
        cmocka_unit_test(error_codes_for_the_model),
        cmocka_unit_test(prompt_escapes_bidi),
        cmocka_unit_test(text_clean_keeps_every_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
