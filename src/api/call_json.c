/* Any JSON operation by name, JSON in and JSON out (for FFI users). */
#include <stdio.h>
#include <string.h>

#include "api/client_internal.h"

/* {"error":{"code","status","message","requestId"}} from the thread's
 * error object, for an FFI caller that reads JSON only. */
static char *error_json(int rc)
{
    const ocisbx_error *e = ocisbx_error_last();
    cJSON *root = cJSON_CreateObject();
    cJSON *err = cJSON_AddObjectToObject(root, "error");
    const char *code = ocisbx_error_service_code(e);
    const char *rid = ocisbx_error_request_id(e);
    char *text = NULL;
    if (err && cJSON_AddStringToObject(err, "code", code ? code : ocisbx_strerror(rc)) &&
        cJSON_AddNumberToObject(err, "status", ocisbx_error_http_status(e)) &&
        cJSON_AddStringToObject(err, "message", ocisbx_error_message(e)) &&
        (rid ? cJSON_AddStringToObject(err, "requestId", rid) != NULL
             : cJSON_AddNullToObject(err, "requestId") != NULL))
        ocisbx_json_print(root, &text);
    cJSON_Delete(root);
    return text;
}

static int call(ocisbx_client *c, const char *operation, const char *params_json, const char *body_json,
                char **response_json);

int ocisbx_client_call_json(ocisbx_client *c, const char *operation, const char *params_json, const char *body_json,
                            char **response_json)
{
    if (!response_json)
        return ocisbx_fail(OCISBX_EINVAL, "call_json: response_json is NULL");
    *response_json = NULL;
    int rc = call(c, operation, params_json, body_json, response_json);
    if (rc) {
        ocisbx_free(*response_json);
        *response_json = error_json(rc); /* the error object stays as it was */
    }
    return rc;
}

static int call(ocisbx_client *c, const char *operation, const char *params_json, const char *body_json,
                char **response_json)
{
    if (!c)
        return ocisbx_fail(OCISBX_EINVAL, "call_json: client is NULL");
    const ocisbx_route *r = ocisbx_route_find(operation);
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "call_json: unknown operation '%s'", operation ? operation : "");
    if (r->kind != OCISBX_ROUTE_JSON)
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "call_json: %s moves raw bytes or a stream; use its typed function",
                           r->name);

    cJSON *pj = NULL;
    if (params_json && params_json[0]) {
        /* the codec the models and the harness use: one whole object */
        char sentinel[4];
        pj = ocisbx_json_parse_nul(params_json, strlen(params_json), true, sentinel, NULL);
        if (!cJSON_IsObject(pj)) {
            cJSON_Delete(pj);
            return ocisbx_fail(OCISBX_EPARSE, "call_json %s: params are not a JSON object", r->name);
        }
        if (sentinel[0]) { /* a parameter would be cut at the NUL */
            cJSON_Delete(pj);
            return ocisbx_fail(OCISBX_EPARSE, "call_json %s: a parameter holds a NUL byte (\\u0000)", r->name);
        }
    }
    ocisbx_param params[OCISBX_MAX_PARAMS];
    char numbers[OCISBX_MAX_PARAMS][32];
    size_t n = 0;
    int rc = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, pj)
    {
        if (n == OCISBX_MAX_PARAMS) {
            rc = ocisbx_fail(OCISBX_EINVAL, "call_json %s: too many parameters", r->name);
            break;
        }
        const char *v = NULL;
        int64_t iv;
        if (cJSON_IsString(e)) {
            v = e->valuestring;
        } else if (ocisbx_json_int64(e, &iv)) {
            snprintf(numbers[n], sizeof numbers[n], "%lld", (long long)iv);
            v = numbers[n];
        } else if (cJSON_IsBool(e)) {
            v = cJSON_IsTrue(e) ? "true" : "false";
        } else if (cJSON_IsNull(e)) {
            continue;
        } else {
            rc = ocisbx_fail(OCISBX_EPARSE, "call_json %s: parameter %s must be a string, integer or boolean",
                             r->name, e->string ? e->string : "?");
            break;
        }
        params[n++] = (ocisbx_param){e->string, v};
    }

    ocisbx_model *body = NULL;
    if (!rc && body_json && body_json[0]) {
        if (!r->request)
            rc = ocisbx_fail(OCISBX_EINVAL, "call_json %s: this operation takes no body", r->name);
        else
            rc = ocisbx_model_parse(r->request, body_json, strlen(body_json), &body);
        if (!rc && r->request == &ocisbx_md_create_sandbox_details)
            rc = ocisbx_create_details_normalize(body);
    }
    ocisbx_model *m = NULL;
    if (!rc)
        rc = ocisbx_client_exec(c, r->op, params, n, body, &m);
    ocisbx_model_free(body);
    cJSON_Delete(pj);
    if (rc)
        return rc;
    if (!m) {
        *response_json = ocisbx_strdup("{}");
        return *response_json ? 0 : ocisbx_fail_nomem();
    }
    if (m->next_page && m->next_page[0]) {
        cJSON_DeleteItemFromObjectCaseSensitive(m->json, "opcNextPage");
        if (!cJSON_AddStringToObject(m->json, "opcNextPage", m->next_page))
            rc = ocisbx_fail_nomem();
    }
    if (!rc)
        rc = ocisbx_model_to_json(m, response_json);
    ocisbx_model_free(m);
    return rc;
}
