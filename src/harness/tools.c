/* The tool rows' lookups, and the JSON Schemas and tool list formats
 * generated from them (see tools.h). The schemas are JSON Schema draft
 * 2020-12, a subset: type object with properties, required,
 * additionalProperties false; per property type, enum, minLength/maxLength,
 * minimum/maximum, minItems/maxItems, default, items, description. */
#include "harness/tools.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/glob.h"
#include "util/internal.h"

const harness_tool *harness_tool_find(const char *name)
{
    size_t n;
    const harness_tool *t = harness_tools(&n);
    for (size_t i = 0; name && i < n; i++)
        if (!strcmp(t[i].name, name))
            return &t[i];
    return NULL;
}

const harness_param *harness_param_find(const harness_param *params, const char *name)
{
    for (const harness_param *p = params; p && p->name; p++)
        if (name && !strcmp(p->name, name))
            return p;
    return NULL;
}

/* The label (field 0) or the name (field 1) of tool i. */
static const char *field_of(const harness_tool *t, int field)
{
    return field ? t->name : t->label;
}

/* Whether pattern (a glob) matches the label or the name of at least one tool. */
static int tools_glob_hits(const char *pattern, int field)
{
    size_t n;
    const harness_tool *t = harness_tools(&n);
    for (size_t i = 0; i < n; i++) {
        int hit = ocisbx_glob_match(pattern, field_of(&t[i], field));
        if (hit)
            return hit;
    }
    return 0;
}

/* The distinct labels or names of the tools, ", "-separated. */
static void tools_list_text(int field, char *out, size_t cap)
{
    size_t n;
    const harness_tool *t = harness_tools(&n);
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const char *v = field_of(&t[i], field);
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(v, field_of(&t[j], field));
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

/* ---- schemas ---------------------------------------------------------------------- */
static cJSON *object_schema(const harness_param *params);

static const char *type_name(harness_type t)
{
    switch (t) {
    case HARNESS_INTEGER: return "integer";
    case HARNESS_BOOLEAN: return "boolean";
    case HARNESS_ENV: return "object";
    case HARNESS_LIST: return "array";
    default: return "string";
    }
}

/* The names of the bounds of a type. */
static void bound_names(harness_type t, const char **min, const char **max)
{
    bool str = t == HARNESS_STRING || t == HARNESS_PATH || t == HARNESS_COMMAND || t == HARNESS_PATCH;
    *min = str ? "minLength" : t == HARNESS_LIST ? "minItems" : "minimum";
    *max = str ? "maxLength" : t == HARNESS_LIST ? "maxItems" : "maximum";
}

static bool add_default(cJSON *s, const harness_param *p)
{
    if (!p->has_default)
        return true;
    if (p->type == HARNESS_BOOLEAN)
        return cJSON_AddBoolToObject(s, "default", p->def_num != 0) != NULL;
    if (p->type == HARNESS_INTEGER)
        return cJSON_AddNumberToObject(s, "default", (double)p->def_num) != NULL;
    return cJSON_AddStringToObject(s, "default", p->def_str ? p->def_str : "") != NULL;
}

/* One property: type, enum, bounds, default, its values or items, description. */
static cJSON *param_schema(const harness_param *p)
{
    cJSON *s = cJSON_CreateObject();
    const char *min, *max;
    bound_names(p->type, &min, &max);
    bool ok = s && cJSON_AddStringToObject(s, "type", type_name(p->type));
    if (ok && p->choices) {
        cJSON *e = cJSON_AddArrayToObject(s, "enum");
        ok = e != NULL;
        for (const char *const *c = p->choices; ok && *c; c++)
            ok = cJSON_AddItemToArray(e, cJSON_CreateString(*c));
    }
    if (ok && p->has_min)
        ok = cJSON_AddNumberToObject(s, min, (double)p->min) != NULL;
    if (ok && p->has_max)
        ok = cJSON_AddNumberToObject(s, max, (double)p->max) != NULL;
    ok = ok && add_default(s, p);
    if (ok && p->type == HARNESS_ENV) {
        cJSON *v = cJSON_AddObjectToObject(s, "additionalProperties");
        ok = v && cJSON_AddStringToObject(v, "type", "string");
    }
    if (ok && p->type == HARNESS_LIST) {
        cJSON *items = object_schema(p->items);
        ok = items && cJSON_AddItemToObject(s, "items", items);
        if (!ok)
            cJSON_Delete(items);
    }
    if (ok && p->help)
        ok = cJSON_AddStringToObject(s, "description", p->help) != NULL;
    if (!ok) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

/* {type: object, properties, required, additionalProperties: false}. */
static cJSON *object_schema(const harness_param *params)
{
    cJSON *s = cJSON_CreateObject();
    bool ok = s && cJSON_AddStringToObject(s, "type", "object");
    cJSON *props = ok ? cJSON_AddObjectToObject(s, "properties") : NULL;
    ok = props != NULL;
    for (const harness_param *p = params; ok && p->name; p++) {
        cJSON *ps = param_schema(p);
        ok = ps && cJSON_AddItemToObject(props, p->name, ps);
        if (!ok)
            cJSON_Delete(ps);
    }
    cJSON *req = ok ? cJSON_AddArrayToObject(s, "required") : NULL;
    ok = req != NULL;
    for (const harness_param *p = params; ok && p->name; p++)
        if (p->required)
            ok = cJSON_AddItemToArray(req, cJSON_CreateString(p->name));
    if (ok)
        ok = cJSON_AddFalseToObject(s, "additionalProperties") != NULL;
    if (!ok) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

cJSON *harness_tool_schema(const harness_tool *t)
{
    return object_schema(t->params);
}

/* ---- tool lists --------------------------------------------------------------------- */
/* One tool in a format: ours {name, description, label, parameters},
 * openai {type, function: {name, description, parameters}}, anthropic
 * {name, description, input_schema}. */
static cJSON *tool_item(const harness_tool *t, int format)
{
    cJSON *item = cJSON_CreateObject(), *fn = item;
    bool ok = item != NULL;
    if (ok && format == HARNESS_FORMAT_OPENAI)
        ok = cJSON_AddStringToObject(item, "type", "function") && (fn = cJSON_AddObjectToObject(item, "function"));
    ok = ok && cJSON_AddStringToObject(fn, "name", t->name) &&
         cJSON_AddStringToObject(fn, "description", t->description);
    if (ok && format == HARNESS_FORMAT_OURS)
        ok = cJSON_AddStringToObject(fn, "label", t->label) != NULL;
    cJSON *schema = ok ? harness_tool_schema(t) : NULL;
    ok = schema &&
         cJSON_AddItemToObject(fn, format == HARNESS_FORMAT_ANTHROPIC ? "input_schema" : "parameters", schema);
    if (!ok) {
        cJSON_Delete(schema);
        cJSON_Delete(item);
        return NULL;
    }
    return item;
}

int harness_tools_json(int format, char **out)
{
    *out = NULL;
    if (format < HARNESS_FORMAT_OURS || format > HARNESS_FORMAT_ANTHROPIC)
        return ocisbx_fail(OCISBX_EINVAL, "tools: unknown format %d (ours, openai or anthropic)", format);
    size_t n;
    const harness_tool *t = harness_tools(&n);
    cJSON *list = cJSON_CreateArray();
    bool ok = list != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        cJSON *item = tool_item(&t[i], format);
        ok = item && cJSON_AddItemToArray(list, item);
        if (!ok)
            cJSON_Delete(item);
    }
    char *text = ok ? cJSON_Print(list) : NULL;
    cJSON_Delete(list);
    if (!text)
        return ocisbx_fail_nomem();
    *out = text;
    return 0;
}
