/* The model core: schema checks, parsing, JSON text, typed field access. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/model_internal.h"
#include "ocisbx/util.h"

/* Nesting is shallow in every model; a cap keeps hostile input from
 * recursing deep (cJSON itself limits nesting to 1000). */
#define MAX_MODEL_DEPTH 8

static int bad_type(const char *model, const char *path, const char *want, const cJSON *got)
{
    return ocisbx_fail(OCISBX_EPARSE, "%s.%s: expected %s, got %s", model, path, want, ocisbx_json_type_name(got));
}

static int validate_at(const ocisbx_model_def *def, const cJSON *j, const char *prefix, int depth);

static int validate_env(const char *model, const char *path, const cJSON *v)
{
    if (cJSON_IsObject(v)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, v) if (!cJSON_IsString(e) && !cJSON_IsNull(e)) return ocisbx_fail(
            OCISBX_EPARSE, "%s.%s.%s: expected string, got %s", model, path, e->string ? e->string : "?",
            ocisbx_json_type_name(e));
        return 0;
    }
    if (!cJSON_IsArray(v))
        return bad_type(model, path, "array of {name, value}", v);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        if (!cJSON_IsObject(e))
            return ocisbx_fail(OCISBX_EPARSE, "%s.%s[%d]: expected object, got %s", model, path, i,
                               ocisbx_json_type_name(e));
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *val = cJSON_GetObjectItemCaseSensitive(e, "value");
        if (!cJSON_IsString(n))
            return ocisbx_fail(OCISBX_EPARSE, "%s.%s[%d].name: expected string, got %s", model, path, i,
                               n ? ocisbx_json_type_name(n) : "nothing");
        if (val && !cJSON_IsString(val) && !cJSON_IsNull(val))
            return ocisbx_fail(OCISBX_EPARSE, "%s.%s[%d].value: expected string, got %s", model, path, i,
                               ocisbx_json_type_name(val));
        i++;
    }
    return 0;
}

static int validate_field(const char *model, const ocisbx_field_def *f, const cJSON *v, const char *path, int depth)
{
    switch (f->type) {
    case OCISBX_F_STRING: return cJSON_IsString(v) ? 0 : bad_type(model, path, "string", v);
    case OCISBX_F_TIME: {
        if (!cJSON_IsString(v))
            return bad_type(model, path, "an RFC 3339 time string", v);
        int64_t ms;
        if (ocisbx_time_parse_rfc3339(v->valuestring, &ms) != 0)
            return ocisbx_fail(OCISBX_EPARSE, "%s.%s: '%.64s' is not an RFC 3339 time", model, path, v->valuestring);
        return 0;
    }
    case OCISBX_F_INT:
        if (!cJSON_IsNumber(v))
            return bad_type(model, path, "integer", v);
        if (!ocisbx_json_int64(v, NULL))
            return ocisbx_fail(OCISBX_EPARSE, "%s.%s: expected an integer, got %g", model, path, v->valuedouble);
        return 0;
    case OCISBX_F_BOOL: return cJSON_IsBool(v) ? 0 : bad_type(model, path, "boolean", v);
    case OCISBX_F_STRING_ARRAY: {
        if (!cJSON_IsArray(v))
            return bad_type(model, path, "array of strings", v);
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, v)
        {
            if (!cJSON_IsString(e))
                return ocisbx_fail(OCISBX_EPARSE, "%s.%s[%d]: expected string, got %s", model, path, i,
                                   ocisbx_json_type_name(e));
            i++;
        }
        return 0;
    }
    case OCISBX_F_OBJECT:
        if (!cJSON_IsObject(v))
            return bad_type(model, path, "object", v);
        return validate_at(f->sub, v, path, depth + 1);
    case OCISBX_F_OBJECT_ARRAY: {
        if (!cJSON_IsArray(v))
            return bad_type(model, path, "array of objects", v);
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, v)
        {
            char sub[352]; /* a path (< 320) plus "[index]" */
            snprintf(sub, sizeof sub, "%s[%d]", path, i);
            if (!cJSON_IsObject(e))
                return bad_type(model, sub, "object", e);
            int rc = validate_at(f->sub, e, sub, depth + 1);
            if (rc)
                return rc;
            i++;
        }
        return 0;
    }
    case OCISBX_F_ENV: return validate_env(model, path, v);
    case OCISBX_F_OUTPUT:
        if (cJSON_IsString(v))
            return 0;
        if (!cJSON_IsObject(v))
            return bad_type(model, path, "string or object", v);
        return validate_at(f->sub, v, path, depth + 1);
    }
    return 0;
}

/* prefix: the path of j inside the top model ("" at the top). Messages name
 * the top model and the full path, e.g. "Sandbox.publishedPorts[0].port". */
static _Thread_local const char *top_model;

static int validate_at(const ocisbx_model_def *def, const cJSON *j, const char *prefix, int depth)
{
    if (depth > MAX_MODEL_DEPTH)
        return ocisbx_fail(OCISBX_EPARSE, "%s: nested too deep", top_model);
    if (!cJSON_IsObject(j)) {
        if (prefix[0])
            return bad_type(top_model, prefix, "object", j);
        return ocisbx_fail(OCISBX_EPARSE, "%s: expected a JSON object, got %s", top_model, ocisbx_json_type_name(j));
    }
    for (size_t i = 0; i < def->nfields; i++) {
        const ocisbx_field_def *f = &def->fields[i];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, f->name);
        char path[320];
        snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", f->name);
        if (!v || cJSON_IsNull(v)) {
            if (f->required)
                return ocisbx_fail(OCISBX_EPARSE, "%s.%s: required field missing", top_model, path);
            continue;
        }
        int rc = validate_field(top_model, f, v, path, depth);
        if (rc)
            return rc;
    }
    return 0;
}

int ocisbx_model_validate(const ocisbx_model_def *def, const cJSON *j)
{
    top_model = def->name;
    return validate_at(def, j, "", 0);
}

static int make_items(ocisbx_model *m)
{
    if (!m->def->items)
        return 0;
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(m->json, "items");
    size_t n = (size_t)(cJSON_IsArray(items) ? cJSON_GetArraySize(items) : 0);
    if (n == 0)
        return 0;
    m->items = calloc(n, sizeof *m->items);
    if (!m->items)
        return ocisbx_fail_nomem();
    size_t i = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, items)
    {
        m->items[i].def = m->def->items;
        m->items[i].root = m;
        m->items[i].json = e;
        m->items[i].owned = false;
        i++;
    }
    m->nitems = n;
    return 0;
}

int ocisbx_model_wrap(const ocisbx_model_def *def, cJSON *json, ocisbx_model **out)
{
    *out = NULL;
    ocisbx_model *m = calloc(1, sizeof *m);
    if (!m) {
        cJSON_Delete(json);
        return ocisbx_fail_nomem();
    }
    m->def = def;
    m->json = json;
    m->owned = true;
    int rc = make_items(m);
    if (rc) {
        ocisbx_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int ocisbx_model_parse(const ocisbx_model_def *def, const char *text, size_t len, ocisbx_model **out)
{
    *out = NULL;
    if (!text)
        return ocisbx_fail(OCISBX_EINVAL, "%s: no JSON text", def->name);
    char sentinel[4];
    const char *at = NULL;
    cJSON *j = ocisbx_json_parse_nul(text, len, false, sentinel, &at);
    if (!j) {
        size_t off = (at && at >= text && at <= text + len) ? (size_t)(at - text) : 0;
        return ocisbx_fail(OCISBX_EPARSE, "%s: malformed JSON near byte %zu", def->name, off);
    }
    int rc = ocisbx_model_validate(def, j);
    if (rc) {
        cJSON_Delete(j);
        return rc;
    }
    rc = ocisbx_model_wrap(def, j, out);
    if (rc)
        return rc;
    memcpy((*out)->sentinel, sentinel, sizeof sentinel);
    rc = ocisbx_model_collect_nuls(*out);
    if (rc) {
        ocisbx_model_free(*out);
        *out = NULL;
    }
    return rc;
}

int ocisbx_model_new_empty(const ocisbx_model_def *def, ocisbx_model **out)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return ocisbx_fail_nomem();
    return ocisbx_model_wrap(def, j, out);
}

void ocisbx_model_free(ocisbx_model *m)
{
    if (!m)
        return;
    if (m->owned)
        cJSON_Delete(m->json);
    free(m->items);
    for (size_t i = 0; i < m->nnuls; i++)
        free(m->nuls[i].data);
    free(m->nuls);
    free(m->next_page);
    free(m->etag);
    free(m->request_id);
    free(m);
}

int ocisbx_model_to_json(const ocisbx_model *m, char **out)
{
    if (!m || !out)
        return ocisbx_fail(OCISBX_EINVAL, "to_json: NULL argument");
    *out = NULL;
    char *s = cJSON_PrintUnformatted(m->json);
    if (!s)
        return ocisbx_fail_nomem();
    /* cJSON allocates with malloc (default hooks), so ocisbx_free (free) matches. */
    const ocisbx_model *root = m->root ? m->root : m;
    int rc = ocisbx_json_unescape_sentinel(&s, root->sentinel);
    if (rc) {
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

static int set_dup(char **dst, const char *v)
{
    free(*dst);
    *dst = NULL;
    if (!v)
        return 0;
    *dst = ocisbx_strdup(v);
    return *dst ? 0 : ocisbx_fail_nomem();
}

int ocisbx_model_set_meta(ocisbx_model *m, const char *etag, const char *request_id, const char *next_page)
{
    int rc = set_dup(&m->etag, etag);
    if (!rc)
        rc = set_dup(&m->request_id, request_id);
    if (!rc)
        rc = set_dup(&m->next_page, next_page);
    return rc;
}

const cJSON *ocisbx_model_get(const ocisbx_model *m, const char *field)
{
    if (!m || !m->json)
        return NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->json, field);
    return cJSON_IsNull(v) ? NULL : v;
}

const char *ocisbx_model_bytes(const ocisbx_model *m, const cJSON *v, size_t *len)
{
    if (!cJSON_IsString(v) || !v->valuestring) {
        if (len)
            *len = 0;
        return NULL;
    }
    const ocisbx_model *root = m && m->root ? m->root : m;
    for (size_t i = 0; root && i < root->nnuls; i++)
        if (root->nuls[i].node == v) {
            if (len)
                *len = root->nuls[i].len;
            return root->nuls[i].data;
        }
    if (len)
        *len = strlen(v->valuestring);
    return v->valuestring;
}

const char *ocisbx_model_str(const ocisbx_model *m, const char *field)
{
    return ocisbx_model_bytes(m, ocisbx_model_get(m, field), NULL);
}

bool ocisbx_model_int(const ocisbx_model *m, const char *field, int64_t *out)
{
    return ocisbx_json_int64(ocisbx_model_get(m, field), out);
}

bool ocisbx_model_bool(const ocisbx_model *m, const char *field, bool *out)
{
    const cJSON *v = ocisbx_model_get(m, field);
    if (!cJSON_IsBool(v))
        return false;
    if (out)
        *out = cJSON_IsTrue(v);
    return true;
}

static int put(ocisbx_model *m, const char *field, cJSON *v)
{
    if (!v)
        return ocisbx_fail_nomem();
    cJSON_DeleteItemFromObjectCaseSensitive(m->json, field);
    if (!cJSON_AddItemToObject(m->json, field, v)) {
        cJSON_Delete(v);
        return ocisbx_fail_nomem();
    }
    return 0;
}

int ocisbx_model_put_str(ocisbx_model *m, const char *field, const char *value)
{
    if (!value) {
        cJSON_DeleteItemFromObjectCaseSensitive(m->json, field);
        return 0;
    }
    return put(m, field, cJSON_CreateString(value));
}

int ocisbx_model_put_int(ocisbx_model *m, const char *field, int64_t value)
{
    return put(m, field, cJSON_CreateNumber((double)value));
}

int ocisbx_model_put_bool(ocisbx_model *m, const char *field, bool value)
{
    return put(m, field, cJSON_CreateBool(value));
}

static cJSON *array_field(ocisbx_model *m, const char *field)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(m->json, field);
    if (cJSON_IsArray(a))
        return a;
    cJSON_DeleteItemFromObjectCaseSensitive(m->json, field);
    a = cJSON_AddArrayToObject(m->json, field);
    return a;
}

int ocisbx_model_append_str(ocisbx_model *m, const char *field, const char *value)
{
    if (!value)
        return ocisbx_fail(OCISBX_EINVAL, "%s.%s: NULL value", m->def->name, field);
    cJSON *a = array_field(m, field);
    cJSON *s = a ? cJSON_CreateString(value) : NULL;
    if (!s || !cJSON_AddItemToArray(a, s)) {
        cJSON_Delete(s);
        return ocisbx_fail_nomem();
    }
    return 0;
}

int ocisbx_model_append_env(ocisbx_model *m, const char *field, const char *name, const char *value)
{
    if (!name || !name[0] || !value)
        return ocisbx_fail(OCISBX_EINVAL, "%s.%s: a variable needs a name and a value", m->def->name, field);
    if (strchr(name, '='))
        return ocisbx_fail(OCISBX_EINVAL, "%s.%s: variable name '%s' contains '='", m->def->name, field, name);
    cJSON *a = cJSON_GetObjectItemCaseSensitive(m->json, field);
    if (cJSON_IsObject(a)) { /* came from JSON in the map form: keep that form */
        cJSON_DeleteItemFromObjectCaseSensitive(a, name);
        return cJSON_AddStringToObject(a, name, value) ? 0 : ocisbx_fail_nomem();
    }
    a = array_field(m, field);
    cJSON *e = a ? cJSON_CreateObject() : NULL;
    if (!e || !cJSON_AddStringToObject(e, "name", name) || !cJSON_AddStringToObject(e, "value", value) ||
        !cJSON_AddItemToArray(a, e)) {
        cJSON_Delete(e);
        return ocisbx_fail_nomem();
    }
    return 0;
}
