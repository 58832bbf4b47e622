/* A call's arguments checked against its tool's rows (see tools.h): the
 * same rows the schema the model is shown comes from, so what is shown is
 * what is checked. Messages are written for the model: they name the
 * argument and what is wrong. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/tools.h"
#include "util/env.h"
#include "util/internal.h"
#include "util/json.h"

/* What one check needs: the tool (for messages) and where msg goes. */
typedef struct checker {
    const char *tool;
    char *msg;
    size_t cap;
} checker;

static bool fail(const checker *k, const char *fmt, ...) OCISBX_PRINTF(2, 3);
static bool fail(const checker *k, const char *fmt, ...)
{
    int n = snprintf(k->msg, k->cap, "%s: ", k->tool);
    if (n < 0 || (size_t)n >= k->cap)
        return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->msg + n, k->cap - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

static bool is_string_type(harness_type t)
{
    return t == HARNESS_STRING || t == HARNESS_PATH || t == HARNESS_COMMAND || t == HARNESS_PATCH;
}

static bool check_params(const checker *k, const harness_param *params, const cJSON *a, const char *prefix);

static bool check_string(const checker *k, const char *name, const cJSON *v, const harness_param *p)
{
    if (!cJSON_IsString(v))
        return fail(k, "argument \"%s\" must be a string, not %s", name, ocisbx_json_type_name(v));
    size_t len = strlen(v->valuestring);
    if (p->has_min && len < (size_t)p->min)
        return fail(k, "argument \"%s\" must not be empty%s", name,
                    p->min > 1 ? " or shorter than the schema allows" : "");
    if (p->has_max && len > (size_t)p->max)
        return fail(k, "argument \"%s\" is longer than %lld bytes", name, (long long)p->max);
    if (!p->choices)
        return true;
    for (const char *const *c = p->choices; *c; c++)
        if (!strcmp(*c, v->valuestring))
            return true;
    char shown[64], list[200] = "";
    ocisbx_escape_shown(v->valuestring, shown, sizeof shown);
    for (const char *const *c = p->choices; *c; c++) {
        if (list[0])
            strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, *c, sizeof list - strlen(list) - 1);
    }
    return fail(k, "argument \"%s\" must be one of %s, not \"%s\"", name, list, shown);
}

/* An integer in range; a number beyond the exact integers (1e400,
 * 99999999999999999999) is too large or too small, not "not an integer". */
static bool check_integer(const checker *k, const char *name, const cJSON *v, const harness_param *p)
{
    if (!cJSON_IsNumber(v))
        return fail(k, "argument \"%s\" must be an integer, not %s", name, ocisbx_json_type_name(v));
    double d = v->valuedouble;
    long long hi = p->has_max ? (long long)p->max : HARNESS_INT_MAX;
    long long lo = p->has_min ? (long long)p->min : -HARNESS_INT_MAX;
    /* without libm; an infinity (1e400) is past either bound too */
    bool huge = d > (double)HARNESS_INT_MAX || d < -(double)HARNESS_INT_MAX;
    if (!huge && d != (double)(long long)d)
        return fail(k, "argument \"%s\" must be an integer, not a fraction", name);
    if (d > (double)hi || (huge && d > 0)) {
        if (p->has_max && p->has_min)
            return huge ? fail(k, "argument \"%s\" is too large: it must be from %lld to %lld", name, lo, hi)
                        : fail(k, "argument \"%s\" must be from %lld to %lld, not %.0f", name, lo, hi, d);
        return fail(k, "argument \"%s\" is too large (at most %lld)", name, hi);
    }
    if (d < (double)lo || (huge && d < 0)) {
        if (p->has_max && p->has_min)
            return huge ? fail(k, "argument \"%s\" is too small: it must be from %lld to %lld", name, lo, hi)
                        : fail(k, "argument \"%s\" must be from %lld to %lld, not %.0f", name, lo, hi, d);
        if (p->has_min)
            return huge ? fail(k, "argument \"%s\" is too small (at least %lld)", name, lo)
                        : fail(k, "argument \"%s\" must be at least %lld, not %.0f", name, lo, d);
        return fail(k, "argument \"%s\" is too small (at least %lld)", name, lo);
    }
    return true;
}

/* An object of shell variable names to string values (exec's env). */
static bool check_env(const checker *k, const char *name, const cJSON *v)
{
    if (!cJSON_IsObject(v))
        return fail(k, "argument \"%s\" must be an object of names to string values, not %s", name,
                    ocisbx_json_type_name(v));
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        char shown[64];
        ocisbx_escape_shown(e->string, shown, sizeof shown);
        if (!cJSON_IsString(e))
            return fail(k, "argument \"%s\": the value of \"%s\" must be a string, not %s", name, shown,
                        ocisbx_json_type_name(e));
        if (!ocisbx_env_name_ok(e->string))
            return fail(k, "argument \"%s\": \"%s\" is not a valid variable name (letters, digits, _)", name, shown);
    }
    return true;
}

/* An array of objects, each checked against the items' rows. */
static bool check_list(const checker *k, const char *name, const cJSON *v, const harness_param *p)
{
    if (!cJSON_IsArray(v))
        return fail(k, "argument \"%s\" must be an array, not %s", name, ocisbx_json_type_name(v));
    long long n = cJSON_GetArraySize(v);
    if (p->has_min && n < p->min)
        return fail(k, "argument \"%s\" must have at least %lld item%s", name, (long long)p->min,
                    p->min == 1 ? "" : "s");
    if (p->has_max && n > p->max)
        return fail(k, "argument \"%s\" must have at most %lld items", name, (long long)p->max);
    long long i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        char at[300];
        snprintf(at, sizeof at, "%s[%lld]", name, i++);
        if (!cJSON_IsObject(e))
            return fail(k, "argument \"%s\" must be an object, not %s", at, ocisbx_json_type_name(e));
        if (!check_params(k, p->items, e, at))
            return false;
    }
    return true;
}

/* One value against its row; false with the message set. */
static bool check_value(const checker *k, const char *name, const cJSON *v, const harness_param *p)
{
    if (is_string_type(p->type))
        return check_string(k, name, v, p);
    if (p->type == HARNESS_BOOLEAN) {
        if (cJSON_IsBool(v))
            return true;
        return fail(k, "argument \"%s\" must be true or false, not %s", name, ocisbx_json_type_name(v));
    }
    if (p->type == HARNESS_INTEGER)
        return check_integer(k, name, v, p);
    if (p->type == HARNESS_ENV)
        return check_env(k, name, v);
    return check_list(k, name, v, p);
}

/* The full name of an argument: "path", or "edits[0].old_string" inside a list. */
static void full_name(char *out, size_t cap, const char *prefix, const char *name)
{
    char shown[64];
    ocisbx_escape_shown(name, shown, sizeof shown);
    snprintf(out, cap, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", shown);
}

/* Unknown and duplicate names first (a misspelt name says so, not
 * "missing"), then each value, then the required ones. */
static bool check_params(const checker *k, const harness_param *params, const cJSON *a, const char *prefix)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, a)
    {
        char name[240];
        full_name(name, sizeof name, prefix, v->string);
        const harness_param *p = harness_param_find(params, v->string);
        if (!p) {
            char names[300] = "";
            for (const harness_param *q = params; q->name; q++) {
                if (names[0])
                    strncat(names, ", ", sizeof names - strlen(names) - 1);
                strncat(names, q->name, sizeof names - strlen(names) - 1);
            }
            return fail(k, "unknown argument \"%s\" (the arguments are %s)", name, names);
        }
        for (const cJSON *w = a->child; w != v; w = w->next)
            if (!strcmp(w->string, v->string))
                return fail(k, "argument \"%s\" is given twice", name);
        if (!check_value(k, name, v, p))
            return false;
    }
    for (const harness_param *p = params; p->name; p++)
        if (p->required && !cJSON_GetObjectItemCaseSensitive(a, p->name)) {
            char name[240];
            full_name(name, sizeof name, prefix, p->name);
            return fail(k, "missing required argument \"%s\"", name);
        }
    return true;
}

/* Defaults, so the tool reads one complete object. */
static int fill_defaults(const harness_param *params, cJSON *a)
{
    for (const harness_param *p = params; p->name; p++) {
        if (!p->has_default || cJSON_GetObjectItemCaseSensitive(a, p->name))
            continue;
        cJSON *d = p->type == HARNESS_BOOLEAN   ? cJSON_CreateBool(p->def_num != 0)
                   : p->type == HARNESS_INTEGER ? cJSON_CreateNumber((double)p->def_num)
                                                : cJSON_CreateString(p->def_str ? p->def_str : "");
        if (!d || !cJSON_AddItemToObject(a, p->name, d)) {
            cJSON_Delete(d);
            return ocisbx_fail_nomem();
        }
    }
    return 0;
}

/* Parses the text as one JSON object: NULL with the message set when it is not. */
static cJSON *parse_object(const harness_tool *t, const char *args_json, size_t len, const checker *k)
{
    if (len > HARNESS_ARGS_MAX) {
        fail(k, "the arguments are larger than %d bytes", HARNESS_ARGS_MAX);
        return NULL;
    }
    /* the library's codec: one whole value, nothing but white space after it */
    char sentinel[4];
    cJSON *a = ocisbx_json_parse_nul(args_json ? args_json : "", args_json ? len : 0, true, sentinel, NULL);
    if (a && sentinel[0]) {
        /* a \u0000 would silently cut the string short (a write losing its tail) */
        fail(k, "the arguments hold a NUL character (\\u0000), which no tool takes: write text");
        cJSON_Delete(a);
        return NULL;
    }
    if (!a) {
        const harness_param *first = t->params;
        bool command = first->name && first->type == HARNESS_COMMAND;
        fail(k, "the arguments are not valid JSON (expected an object such as %s)",
             command ? "{\"command\": \"ls\"}" : "{\"path\": \"/workspace/file\"}");
        return NULL;
    }
    if (!cJSON_IsObject(a)) {
        fail(k, "the arguments must be a JSON object, not %s", ocisbx_json_type_name(a));
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

int harness_args_check(const harness_tool *t, const char *args_json, size_t len, cJSON **args, char *msg, size_t cap)
{
    *args = NULL;
    msg[0] = 0;
    checker k = {t->name, msg, cap};
    cJSON *a = parse_object(t, args_json, len, &k);
    if (!a)
        return OCISBX_EINVAL;
    int rc = check_params(&k, t->params, a, NULL) ? 0 : OCISBX_EINVAL;
    if (!rc)
        rc = fill_defaults(t->params, a);
    if (rc) {
        cJSON_Delete(a);
        return rc;
    }
    *args = a;
    return 0;
}
