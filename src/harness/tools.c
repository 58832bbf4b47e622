/* The tool table, the tool list formats, and argument validation (see
 * tools.h). The schemas are JSON Schema draft 2020-12, a subset: type
 * object with properties (type string, integer, boolean, or object with
 * string values), required, additionalProperties false, and per property
 * description, default, minimum, maximum, minLength, enum. */
#include "harness/tools.h"

#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/glob.h"
#include "util/internal.h"
#include "util/json.h"

#define OBJ(props, req) \
    "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" req "],\"additionalProperties\":false}"
#define PATH_PROP(what) "\"path\":{\"type\":\"string\",\"minLength\":1,\"description\":\"" what "\"}"

static const harness_tool TOOLS[] = {
    {"read", "workspace.read",
     "Read a text file of the workspace. The content comes back as numbered lines (the line number right-aligned "
     "in 6 columns, a tab, then the line), at most `limit` lines from line `offset` (1-based); `total_lines` is the "
     "file's line count and `truncated` is true when lines remain after the window: read on with a larger offset. "
     "Lines longer than 2000 characters are cut with a note. A binary file is not shown: you get its size and "
     "SHA-256 instead. Paths are absolute under /workspace (or relative to it).",
     OBJ(PATH_PROP("The file, e.g. /workspace/src/main.py") ",\"offset\":{\"type\":\"integer\",\"minimum\":1,"
                                                            "\"default\":1,\"description\":\"First line to return "
                                                            "(1-based)\"},\"limit\":{\"type\":\"integer\","
                                                            "\"minimum\":1,\"maximum\":100000,\"default\":2000,"
                                                            "\"description\":\"How many lines at most\"}",
         "\"path\"")},
    {"write", "workspace.write",
     "Create or replace a file of the workspace with `content` (text). Missing parent directories are created. "
     "The write is checked: it either replaces the whole file or leaves the old one untouched. Returns the path, "
     "the size in bytes and the SHA-256 (hex) of what was written. To change part of a file, prefer `edit`.",
     OBJ(PATH_PROP(
             "The file to write, e.g. /workspace/README.md") ",\"content\":{\"type\":\"string\","
                                                             "\"description\":\"The whole new content of the file\"}",
         "\"path\",\"content\"")},
    {"edit", "workspace.write",
     "Replace text in a file: `old_string` must occur exactly once (error not_unique when it occurs several times: "
     "add surrounding lines to make it unique, or set replace_all), or the error no_match when it does not occur "
     "(read the file again and copy the text exactly, including indentation). Line endings: a file with CRLF "
     "endings matches an LF old_string and keeps its CRLF. With `expected_sha256` (from an earlier write or edit) "
     "the edit is refused with the error conflict when the file changed since. Nothing changes on any error. "
     "Returns the number of replacements and the new SHA-256.",
     OBJ(PATH_PROP(
             "The file to edit") ",\"old_string\":{\"type\":\"string\",\"minLength\":1,\"description\":"
                                 "\"The exact text to "
                                 "replace\"},\"new_string\":{\"type\":\"string\",\"description\":\"The text to put "
                                 "instead\"},\"replace_all\":{\"type\":\"boolean\",\"default\":false,\"description\":"
                                 "\"Replace every "
                                 "occurrence instead of exactly "
                                 "one\"},\"expected_sha256\":{\"type\":\"string\",\"minLength\":64,"
                                 "\"description\":\"Refuse the edit unless the file's SHA-256 (hex) is this\"}",
         "\"path\",\"old_string\",\"new_string\"")},
    {"search", "workspace.read",
     "Search file contents under `path` for a POSIX extended regular expression (as grep -E), or for a literal "
     "string with literal=true. `glob` limits the files searched by name (e.g. *.py, matched at any depth; "
     "src/**/*.c with a slash). Returns up to max_results matches as {path, line, text} with absolute paths; "
     "`truncated` is true when there were more: narrow the pattern or the path. /workspace/.ocisbx is skipped.",
     OBJ("\"pattern\":{\"type\":\"string\",\"minLength\":1,\"description\":\"Regular expression (or literal "
         "text)\"}," PATH_PROP(
             "Directory or file to search (default /workspace)") ",\"glob\":{\"type\":\"string\","
                                                                 "\"minLength\":1,\"description\":\"Only files whose "
                                                                 "name matches this glob\"},\"literal\":{\"type\":"
                                                                 "\"boolean\",\"default\":false,\"description\":"
                                                                 "\"Treat pattern as plain text\"},\"ignore_case\":{"
                                                                 "\"type\":\"boolean\",\"default\":false,"
                                                                 "\"description\":\"Match "
                                                                 "case-insensitively\"},\"max_results\":{"
                                                                 "\"type\":\"integer\",\"minimum\":1,\"maximum\":"
                                                                 "10000,\"default\":100,\"description\":\"Most "
                                                                 "matches "
                                                                 "returned\"}",
         "\"pattern\"")},
    {"glob", "workspace.read",
     "Find files by name pattern under `path`: * and ? stay within one directory level, ** crosses any number of "
     "them (e.g. **/*.py, src/**/test_*.c). Returns absolute paths; `truncated` is true when there were too many "
     "to list. /workspace/.ocisbx is skipped.",
     OBJ("\"pattern\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The glob, relative to "
         "path\"}," PATH_PROP("Directory to search from (default /workspace)"),
         "\"pattern\"")},
    {"ls", "workspace.read",
     "List a directory of the workspace: each entry's name, type (file, dir, link or other) and size in bytes.",
     OBJ(PATH_PROP("The directory, e.g. /workspace"), "\"path\"")},
    {"exec", "workspace.exec",
     "Run a shell command (sh -c) in the workspace, cwd /workspace unless `cwd` says otherwise. The command is "
     "stopped at `timeout` seconds (TERM, then KILL): it then has no exit_code and timed_out is true; split long "
     "work or run it in the background. stdout and stderr come back merged, in the order written, as `output`; "
     "long output is cut to its head and tail with a note giving the number of bytes left out (truncated is "
     "true): redirect to a file and read or search it instead. With background=true the command keeps running "
     "and you get a job_id for the job tool. The network may be unavailable.",
     OBJ("\"command\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The shell command line\"},"
         "\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":86400,\"default\":120,\"description\":"
         "\"Seconds before the command is stopped\"},\"cwd\":{\"type\":\"string\",\"minLength\":1,\"description\":"
         "\"Working directory under /workspace\"},\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
         "\"string\"},\"description\":\"Extra environment variables, name to value\"},\"background\":{\"type\":"
         "\"boolean\",\"default\":false,\"description\":\"Start it and return a job_id at once\"}",
         "\"command\"")},
    {"job", "workspace.exec",
     "Manage a background command started by exec with background=true. action status: whether it still runs, "
     "its exit_code and timed_out, its duration; output: its output from byte `offset` (use next_offset for the "
     "next call; truncated is true when more is there); kill: stop it and everything it started.",
     OBJ("\"job_id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The job_id exec returned\"},"
         "\"action\":{\"type\":\"string\",\"enum\":[\"status\",\"output\",\"kill\"],\"description\":\"What to "
         "do\"},\"offset\":{\"type\":\"integer\",\"minimum\":0,\"default\":0,\"description\":\"For output: the "
         "byte offset to read from\"}",
         "\"job_id\",\"action\"")},
};

const harness_tool *harness_tools(size_t *n)
{
    *n = sizeof TOOLS / sizeof TOOLS[0];
    return TOOLS;
}

const harness_tool *harness_tool_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof TOOLS / sizeof TOOLS[0]; i++)
        if (!strcmp(TOOLS[i].name, name))
            return &TOOLS[i];
    return NULL;
}

/* Whether pattern (a glob) matches the label (field 0) or the name (field 1)
 * of at least one tool. */
static int tools_glob_hits(const char *pattern, int field)
{
    for (size_t i = 0; i < sizeof TOOLS / sizeof TOOLS[0]; i++) {
        int hit = ocisbx_glob_match(pattern, field ? TOOLS[i].name : TOOLS[i].label);
        if (hit)
            return hit;
    }
    return 0;
}

/* The distinct labels (field 0) or names (field 1) of the tools, ", "-separated. */
static void tools_list_text(int field, char *out, size_t cap)
{
    size_t n = sizeof TOOLS / sizeof TOOLS[0];
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const char *v = field ? TOOLS[i].name : TOOLS[i].label;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(v, field ? TOOLS[j].name : TOOLS[j].label);
        if (seen)
            continue;
        if (out[0])
            strncat(out, ", ", cap - strlen(out) - 1);
        strncat(out, v, cap - strlen(out) - 1);
    }
}

int harness_label_glob_known(const char *pattern)
{
    return tools_glob_hits(pattern, 0);
}

int harness_tool_glob_known(const char *pattern)
{
    return tools_glob_hits(pattern, 1);
}

void harness_labels_text(char *out, size_t cap)
{
    tools_list_text(0, out, cap);
}

void harness_tool_names_text(char *out, size_t cap)
{
    tools_list_text(1, out, cap);
}

int harness_format_from_name(const char *name)
{
    if (!name || !name[0] || !strcmp(name, "ours"))
        return HARNESS_FORMAT_OURS;
    if (!strcmp(name, "openai"))
        return HARNESS_FORMAT_OPENAI;
    if (!strcmp(name, "anthropic"))
        return HARNESS_FORMAT_ANTHROPIC;
    return -1;
}

int harness_tools_json(int format, char **out)
{
    *out = NULL;
    if (format < HARNESS_FORMAT_OURS || format > HARNESS_FORMAT_ANTHROPIC)
        return ocisbx_fail(OCISBX_EINVAL, "tools: unknown format %d (ours, openai or anthropic)", format);
    cJSON *list = cJSON_CreateArray();
    bool ok = list != NULL;
    for (size_t i = 0; ok && i < sizeof TOOLS / sizeof TOOLS[0]; i++) {
        const harness_tool *t = &TOOLS[i];
        cJSON *schema = cJSON_Parse(t->schema);
        cJSON *item = cJSON_CreateObject(), *fn = item;
        ok = schema && item;
        if (ok && !cJSON_AddItemToArray(list, item))
            ok = false;
        if (!ok) {
            cJSON_Delete(schema);
            cJSON_Delete(item);
            break;
        }
        if (format == HARNESS_FORMAT_OPENAI) {
            ok = cJSON_AddStringToObject(item, "type", "function") &&
                 (fn = cJSON_AddObjectToObject(item, "function"));
            if (!ok) {
                cJSON_Delete(schema);
                break;
            }
        }
        ok = cJSON_AddStringToObject(fn, "name", t->name) &&
             cJSON_AddStringToObject(fn, "description", t->description);
        if (ok && format == HARNESS_FORMAT_OURS)
            ok = cJSON_AddStringToObject(fn, "label", t->label) != NULL;
        const char *key = format == HARNESS_FORMAT_ANTHROPIC ? "input_schema" : "parameters";
        if (ok)
            ok = cJSON_AddItemToObject(fn, key, schema);
        if (!ok)
            cJSON_Delete(schema);
    }
    char *text = ok ? cJSON_Print(list) : NULL;
    cJSON_Delete(list);
    if (!text)
        return ocisbx_fail_nomem();
    *out = text;
    return 0;
}

/* ---- validation --------------------------------------------------------------- */
static bool is_integer(const cJSON *v)
{
    /* in range for the tools (the schemas' maximum is far lower anyway) */
    int64_t i;
    return ocisbx_json_int64(v, &i) && i >= -9007199254740992LL && i <= 9007199254740992LL;
}

/* Checks one property value against its schema; false with msg set. */
static bool check_value(const char *tool, const char *name, const cJSON *v, const cJSON *ps, char *msg, size_t cap)
{
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ps, "type"));
    const cJSON *min = cJSON_GetObjectItemCaseSensitive(ps, "minimum");
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(ps, "maximum");
    if (!strcmp(type, "string")) {
        if (!cJSON_IsString(v)) {
            snprintf(msg, cap, "%s: argument \"%s\" must be a string, not %s", tool, name, ocisbx_json_type_name(v));
            return false;
        }
        const cJSON *minlen = cJSON_GetObjectItemCaseSensitive(ps, "minLength");
        if (minlen && strlen(v->valuestring) < (size_t)minlen->valuedouble) {
            snprintf(msg, cap, "%s: argument \"%s\" must not be empty%s", tool, name,
                     minlen->valuedouble > 1 ? " or shorter than the schema allows" : "");
            return false;
        }
        const cJSON *en = cJSON_GetObjectItemCaseSensitive(ps, "enum");
        if (en) {
            bool found = false;
            const cJSON *e;
            cJSON_ArrayForEach(e, en) found = found || !strcmp(e->valuestring, v->valuestring);
            if (!found) {
                char shown[64], list[200] = "";
                ocisbx_escape_shown(v->valuestring, shown, sizeof shown);
                cJSON_ArrayForEach(e, en)
                {
                    if (list[0])
                        strncat(list, ", ", sizeof list - strlen(list) - 1);
                    strncat(list, e->valuestring, sizeof list - strlen(list) - 1);
                }
                snprintf(msg, cap, "%s: argument \"%s\" must be one of %s, not \"%s\"", tool, name, list, shown);
                return false;
            }
        }
        return true;
    }
    if (!strcmp(type, "boolean")) {
        if (cJSON_IsBool(v))
            return true;
        snprintf(msg, cap, "%s: argument \"%s\" must be true or false, not %s", tool, name, ocisbx_json_type_name(v));
        return false;
    }
    if (!strcmp(type, "integer")) {
        if (!is_integer(v)) {
            snprintf(msg, cap, "%s: argument \"%s\" must be an integer, not %s", tool, name,
                     cJSON_IsNumber(v) ? "a fraction" : ocisbx_json_type_name(v));
            return false;
        }
        if ((min && v->valuedouble < min->valuedouble) || (max && v->valuedouble > max->valuedouble)) {
            if (max)
                snprintf(msg, cap, "%s: argument \"%s\" must be from %.0f to %.0f, not %.0f", tool, name,
                         min ? min->valuedouble : 0.0, max->valuedouble, v->valuedouble);
            else
                snprintf(msg, cap, "%s: argument \"%s\" must be at least %.0f, not %.0f", tool, name,
                         min->valuedouble, v->valuedouble);
            return false;
        }
        return true;
    }
    /* object with string values (exec's env) */
    if (!cJSON_IsObject(v)) {
        snprintf(msg, cap, "%s: argument \"%s\" must be an object of names to string values, not %s", tool, name,
                 ocisbx_json_type_name(v));
        return false;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        char shown[64];
        ocisbx_escape_shown(e->string, shown, sizeof shown);
        if (!cJSON_IsString(e)) {
            snprintf(msg, cap, "%s: argument \"%s\": the value of \"%s\" must be a string, not %s", tool, name, shown,
                     ocisbx_json_type_name(e));
            return false;
        }
        /* a name the shell can export: letters, digits, _; not starting with a digit */
        bool ok = e->string[0] && !(e->string[0] >= '0' && e->string[0] <= '9');
        for (const char *c = e->string; ok && *c; c++)
            ok = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_';
        if (!ok) {
            snprintf(msg, cap, "%s: argument \"%s\": \"%s\" is not a valid variable name (letters, digits, _)", tool,
                     name, shown);
            return false;
        }
    }
    return true;
}

int harness_args_check(const harness_tool *t, const char *args_json, size_t len, cJSON **args, char *msg, size_t cap)
{
    *args = NULL;
    msg[0] = 0;
    if (len > HARNESS_ARGS_MAX) {
        snprintf(msg, cap, "%s: the arguments are larger than %d bytes", t->name, HARNESS_ARGS_MAX);
        return OCISBX_EINVAL;
    }
    /* the library's codec: one whole value, nothing but white space after it */
    char sentinel[4];
    cJSON *a = ocisbx_json_parse_nul(args_json ? args_json : "", args_json ? len : 0, true, sentinel, NULL);
    if (a && sentinel[0]) {
        /* a \u0000 would silently cut the string short (a write losing its tail) */
        snprintf(msg, cap, "%s: the arguments hold a NUL character (\\u0000), which no tool takes: write text",
                 t->name);
        cJSON_Delete(a);
        return OCISBX_EINVAL;
    }
    if (!a) {
        snprintf(msg, cap, "%s: the arguments are not valid JSON (expected an object such as %s)", t->name,
                 !strcmp(t->name, "exec") ? "{\"command\": \"ls\"}" : "{\"path\": \"/workspace/file\"}");
        return OCISBX_EINVAL;
    }
    if (!cJSON_IsObject(a)) {
        snprintf(msg, cap, "%s: the arguments must be a JSON object, not %s", t->name, ocisbx_json_type_name(a));
        cJSON_Delete(a);
        return OCISBX_EINVAL;
    }
    cJSON *schema = cJSON_Parse(t->schema);
    if (!schema) {
        cJSON_Delete(a);
        return ocisbx_fail_nomem();
    }
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
    int rc = 0;
    const cJSON *v;
    /* unknown and duplicate names first: a misspelt name says so, not "missing" */
    cJSON_ArrayForEach(v, a)
    {
        char shown[64];
        ocisbx_escape_shown(v->string, shown, sizeof shown);
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, v->string);
        if (!ps) {
            char names[300] = "";
            const cJSON *p;
            cJSON_ArrayForEach(p, props)
            {
                if (names[0])
                    strncat(names, ", ", sizeof names - strlen(names) - 1);
                strncat(names, p->string, sizeof names - strlen(names) - 1);
            }
            snprintf(msg, cap, "%s: unknown argument \"%s\" (the arguments are %s)", t->name, shown, names);
            rc = OCISBX_EINVAL;
            break;
        }
        for (const cJSON *w = a->child; w != v; w = w->next)
            if (!strcmp(w->string, v->string)) {
                snprintf(msg, cap, "%s: argument \"%s\" is given twice", t->name, shown);
                rc = OCISBX_EINVAL;
            }
        if (rc || !check_value(t->name, shown, v, ps, msg, cap)) {
            rc = OCISBX_EINVAL;
            break;
        }
    }
    const cJSON *req;
    cJSON_ArrayForEach(req, cJSON_GetObjectItemCaseSensitive(schema, "required"))
    {
        if (rc)
            break;
        if (!cJSON_GetObjectItemCaseSensitive(a, req->valuestring)) {
            snprintf(msg, cap, "%s: missing required argument \"%s\"", t->name, req->valuestring);
            rc = OCISBX_EINVAL;
        }
    }
    /* defaults, so the tool reads one complete object */
    const cJSON *p;
    cJSON_ArrayForEach(p, props)
    {
        if (rc)
            break;
        const cJSON *def = cJSON_GetObjectItemCaseSensitive(p, "default");
        if (def && !cJSON_GetObjectItemCaseSensitive(a, p->string)) {
            cJSON *copy = cJSON_Duplicate(def, true);
            if (!copy || !cJSON_AddItemToObject(a, p->string, copy)) {
                cJSON_Delete(copy);
                rc = ocisbx_fail_nomem();
            }
        }
    }
    cJSON_Delete(schema);
    if (rc) {
        cJSON_Delete(a);
        return rc;
    }
    *args = a;
    return 0;
}
