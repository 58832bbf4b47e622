/* The request and response objects the HTTP layer and the handlers share. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/emu.h"

int emu_request_set_target(emu_request *r, const char *method, const char *target)
{
    snprintf(r->method, sizeof r->method, "%s", method);
    free(r->target);
    free(r->path);
    free(r->query);
    r->target = ocisbx_strdup(target);
    const char *q = strchr(target, '?');
    r->path = q ? ocisbx_strndup(target, (size_t)(q - target)) : ocisbx_strdup(target);
    r->query = q ? ocisbx_strdup(q + 1) : NULL;
    return (r->target && r->path && (!q || r->query)) ? 0 : ocisbx_fail_nomem();
}

int emu_request_add_header(emu_request *r, const char *name, const char *value)
{
    emu_header *h = realloc(r->headers, (r->n_headers + 1) * sizeof *h);
    if (!h)
        return ocisbx_fail_nomem();
    r->headers = h;
    char *n = ocisbx_strdup(name);
    char *v = ocisbx_strdup(value ? value : "");
    if (!n || !v) {
        free(n);
        free(v);
        return ocisbx_fail_nomem();
    }
    for (char *p = n; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p + 32);
    h[r->n_headers].name = n;
    h[r->n_headers].value = v;
    r->n_headers++;
    return 0;
}

const char *emu_request_header(const emu_request *r, const char *name)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (!strcmp(r->headers[i].name, name))
            return r->headers[i].value;
    return NULL;
}

void emu_request_clear(emu_request *r)
{
    for (size_t i = 0; i < r->n_headers; i++) {
        free(r->headers[i].name);
        /* Authorization carries a token for session keys */
        ocisbx_free_secret(r->headers[i].value);
    }
    free(r->headers);
    free(r->target);
    free(r->path);
    free(r->query);
    free(r->body);
    memset(r, 0, sizeof *r);
}

void emu_response_init(emu_response *r)
{
    memset(r, 0, sizeof *r);
    r->status = 500;
}

int emu_response_header(emu_response *r, const char *name, const char *value)
{
    for (size_t i = 0; i < r->n_headers; i++) {
        if (!ocisbx_strcasecmp(r->headers[i].name, name)) {
            char *v = ocisbx_strdup(value);
            if (!v)
                return ocisbx_fail_nomem();
            free(r->headers[i].value);
            r->headers[i].value = v;
            return 0;
        }
    }
    if (r->n_headers >= EMU_MAX_RESP_HEADERS)
        return ocisbx_fail(OCISBX_EINVAL, "too many response headers");
    r->headers[r->n_headers].name = ocisbx_strdup(name);
    r->headers[r->n_headers].value = ocisbx_strdup(value);
    r->n_headers++;
    return 0;
}

const char *emu_response_get_header(const emu_response *r, const char *name)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (!ocisbx_strcasecmp(r->headers[i].name, name))
            return r->headers[i].value;
    return NULL;
}

void emu_response_clear(emu_response *r)
{
    for (size_t i = 0; i < r->n_headers; i++) {
        free(r->headers[i].name);
        free(r->headers[i].value);
    }
    ocisbx_buf_free(&r->body);
    emu_file_body_free(r->file);
    memset(r, 0, sizeof *r);
}

int emu_error(emu_response *r, int status, const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "code", code);
    cJSON_AddStringToObject(j, "message", msg);
    emu_json(r, status, j);
    return 0;
}

int emu_fail_answer(emu_response *r, int rc)
{
    const char *msg = ocisbx_error_message(ocisbx_error_last());
    switch (rc) {
    case OCISBX_EINVAL: return emu_error(r, 400, "InvalidParameter", "%s", msg);
    case OCISBX_ENOTFOUND: return emu_error(r, 404, "NotAuthorizedOrNotFound", "%s", msg);
    case OCISBX_ECONFLICT: return emu_error(r, 409, "IncorrectState", "%s", msg);
    case OCISBX_ERATELIMIT: return emu_error(r, 429, "TooManyRequests", "%s", msg);
    case OCISBX_ENOMEM: return emu_error(r, 500, "InternalServerError", "out of memory");
    default: return emu_error(r, 500, "InternalServerError", "%s", msg);
    }
}

int emu_json(emu_response *r, int status, cJSON *json)
{
    r->status = status;
    ocisbx_buf_clear(&r->body);
    snprintf(r->content_type, sizeof r->content_type, "application/json");
    char *text = json ? cJSON_PrintUnformatted(json) : NULL;
    cJSON_Delete(json);
    if (text) {
        ocisbx_buf_appends(&r->body, text);
        cJSON_free(text);
    }
    return 0;
}

/* ---- JSON request bodies: wrong types are 400 naming the field ---- */
int emu_body_json(const emu_request *req, emu_response *resp, cJSON **out)
{
    *out = NULL;
    if (req->body_len == 0) {
        *out = cJSON_CreateObject();
        return 0;
    }
    cJSON *j = cJSON_ParseWithLength(req->body, req->body_len);
    if (!j || !cJSON_IsObject(j)) {
        cJSON_Delete(j);
        emu_error(resp, 400, "InvalidParameter", "the request body is not a JSON object");
        return -1;
    }
    *out = j;
    return 0;
}

int emu_json_only(const cJSON *obj, const char *model, const char *fields, emu_response *resp)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        const char *n = it->string ? it->string : "";
        size_t len = strlen(n);
        bool known = false;
        for (const char *p = fields; *p && !known;) {
            size_t k = strcspn(p, " ");
            known = len > 0 && k == len && !strncmp(p, n, len);
            p += k;
            while (*p == ' ')
                p++;
        }
        if (!known) {
            /* like the service: a field the public model does not have is refused */
            emu_error(resp, 400, "InvalidParameter", "%s has no field '%.100s' (its fields: %s)", model, n,
                      fields[0] ? fields : "none");
            return -1;
        }
    }
    return 0;
}

int emu_json_str(const cJSON *obj, const char *name, const char **out, emu_response *resp)
{
    *out = NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v)) {
        emu_error(resp, 400, "InvalidParameter", "%s must be a string", name);
        return -1;
    }
    *out = v->valuestring;
    return 0;
}

int emu_json_int(const cJSON *obj, const char *name, int64_t *out, bool *present, emu_response *resp)
{
    *present = false;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble || v->valuedouble > 9e15 ||
        v->valuedouble < -9e15) {
        emu_error(resp, 400, "InvalidParameter", "%s must be an integer", name);
        return -1;
    }
    *out = (int64_t)v->valuedouble;
    *present = true;
    return 0;
}

int emu_json_bool(const cJSON *obj, const char *name, bool *out, emu_response *resp)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsBool(v)) {
        emu_error(resp, 400, "InvalidParameter", "%s must be true or false", name);
        return -1;
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

static bool env_name_ok(const char *n)
{
    if (!n[0] || (n[0] >= '0' && n[0] <= '9'))
        return false;
    for (const char *p = n; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return false;
    return strlen(n) <= 256;
}

int emu_json_env(const cJSON *obj, const char *name, emu_env **out, size_t *n, emu_response *resp)
{
    *out = NULL;
    *n = 0;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsArray(v)) {
        emu_error(resp, 400, "InvalidParameter", "%s must be a list of {name, value}", name);
        return -1;
    }
    int count = cJSON_GetArraySize(v);
    emu_env *env = calloc((size_t)count + 1, sizeof *env);
    if (!env)
        return emu_error(resp, 500, "InternalServerError", "out of memory"), -1;
    size_t k = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        if (cJSON_IsObject(it) && emu_json_only(it, "EnvironmentVariable", "name value", resp)) {
            emu_env_free(env, k);
            return -1;
        }
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
        const cJSON *val = cJSON_GetObjectItemCaseSensitive(it, "value");
        if (cJSON_IsObject(it) && cJSON_IsString(nm) && env_name_ok(nm->valuestring) && !cJSON_IsString(val)) {
            emu_env_free(env, k);
            emu_error(resp, 400, "InvalidParameter", "%s[%zu].value is required and must be a string (for %s)", name,
                      k, nm->valuestring);
            return -1;
        }
        if (!cJSON_IsObject(it) || !cJSON_IsString(nm) || !env_name_ok(nm->valuestring)) {
            emu_env_free(env, k);
            emu_error(resp, 400, "InvalidParameter",
                      "%s[%zu] must be {name, value} with a name of letters, digits and '_' and a string value", name,
                      k);
            return -1;
        }
        for (size_t j = 0; j < k; j++) {
            if (!strcmp(env[j].name, nm->valuestring)) {
                emu_error(resp, 400, "InvalidParameter", "%s: %s is given twice", name, nm->valuestring);
                emu_env_free(env, k);
                return -1;
            }
        }
        env[k].name = ocisbx_strdup(nm->valuestring);
        env[k].value = ocisbx_strdup(val->valuestring);
        k++;
    }
    *out = env;
    *n = k;
    return 0;
}

cJSON *emu_env_names_json(const emu_env *env, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", env[i].name);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* ---- pagination: page tokens are opaque offsets ---- */
int emu_page_params(const emu_request *req, emu_response *resp, size_t *offset, size_t *limit)
{
    bool bad = false;
    char *l = emu_query_get(req->query, "limit", &bad);
    char *p = emu_query_get(req->query, "page", &bad);
    *offset = 0;
    *limit = 100;
    int rc = 0;
    if (bad) {
        rc = -1;
        emu_error(resp, 400, "InvalidParameter", "malformed percent-encoding in the query");
    }
    if (!rc && l) {
        char *end = NULL;
        long v = strtol(l, &end, 10);
        if (!*l || *end || v < 1 || v > 1000) {
            rc = -1;
            emu_error(resp, 400, "InvalidParameter", "limit must be an integer from 1 to 1000");
        } else {
            *limit = (size_t)v;
        }
    }
    if (!rc && p) {
        char *end = NULL;
        long v = strncmp(p, "pg-", 3) == 0 ? strtol(p + 3, &end, 10) : -1;
        if (v < 0 || !end || *end || end == p + 3) {
            rc = -1;
            emu_error(resp, 400, "InvalidParameter", "page is not a page token this service returned");
        } else {
            *offset = (size_t)v;
        }
    }
    free(l);
    free(p);
    return rc;
}

void emu_page_next(emu_response *resp, size_t offset, size_t limit, size_t total)
{
    if (offset + limit < total) {
        char tok[32];
        snprintf(tok, sizeof tok, "pg-%zu", offset + limit);
        emu_response_header(resp, "opc-next-page", tok);
    }
}

void emu_file_body_free(emu_file_body *fb)
{
    if (!fb)
        return;
    if (fb->fd >= 0)
        close(fb->fd);
    free(fb);
}
