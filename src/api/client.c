/* Client options, the client, and the call path of the JSON operations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/client_internal.h"
#include "api/settings_internal.h"

#define DEFAULT_RESUME_LIMIT 8

int ocisbx_client_options_new(ocisbx_client_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "client options: out is NULL");
    *out = NULL;
    ocisbx_client_options *o = calloc(1, sizeof *o);
    if (!o)
        return ocisbx_fail_nomem();
    ocisbx_http_options_defaults(&o->http);
    o->resume_limit = DEFAULT_RESUME_LIMIT;
    *out = o;
    return 0;
}

void ocisbx_client_options_free(ocisbx_client_options *o)
{
    if (!o)
        return;
    free(o->endpoint);
    free(o->region);
    free(o->api_version);
    ocisbx_credentials_free(o->creds);
    ocisbx_http_options_release(&o->http);
    free(o);
}

static int set_str(char **dst, const char *v)
{
    char *n = NULL;
    if (v && !(n = ocisbx_strdup(v)))
        return ocisbx_fail_nomem();
    free(*dst);
    *dst = n;
    return 0;
}

int ocisbx_client_options_set_endpoint(ocisbx_client_options *o, const char *url)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "client options: NULL");
    return set_str(&o->endpoint, url && url[0] ? url : NULL);
}

int ocisbx_client_options_set_region(ocisbx_client_options *o, const char *region)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "client options: NULL");
    return set_str(&o->region, region && region[0] ? region : NULL);
}

static int check_version(const char *v)
{
    for (const char *p = v; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '-' ||
              *p == '_' || *p == '.'))
            return ocisbx_fail(OCISBX_ECONFIG, "api version '%s': only letters, digits, '-', '_' and '.' allowed", v);
    return 0;
}

int ocisbx_client_options_set_api_version(ocisbx_client_options *o, const char *version)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "client options: NULL");
    if (version && version[0]) {
        int rc = check_version(version);
        if (rc)
            return rc;
    }
    return set_str(&o->api_version, version && version[0] ? version : NULL);
}

int ocisbx_client_options_set_credentials(ocisbx_client_options *o, ocisbx_credentials *creds)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "client options: NULL");
    ocisbx_credentials *n = creds ? ocisbx_credentials_ref(creds) : NULL;
    ocisbx_credentials_free(o->creds);
    o->creds = n;
    return 0;
}

int ocisbx_client_options_set_http_options(ocisbx_client_options *o, const ocisbx_http_options *h)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "client options: NULL");
    struct ocisbx_http_options copy;
    if (h) {
        int rc = ocisbx_http_options_copy(&copy, h);
        if (rc)
            return rc;
    } else {
        ocisbx_http_options_defaults(&copy);
    }
    ocisbx_http_options_release(&o->http);
    o->http = copy;
    return 0;
}

int ocisbx_client_options_set_prefer_ndjson(ocisbx_client_options *o, int prefer)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "client options: NULL");
    o->prefer_ndjson = prefer != 0;
    return 0;
}

int ocisbx_client_options_set_stream_resume_limit(ocisbx_client_options *o, int limit)
{
    if (!o || limit < 0 || limit > 1000)
        return ocisbx_fail(OCISBX_EINVAL, "stream resume limit %d: must be 0..1000", limit);
    o->resume_limit = limit;
    return 0;
}

int ocisbx_client_options_set_max_download_bytes(ocisbx_client_options *o, int64_t max)
{
    if (!o || max < 0)
        return ocisbx_fail(OCISBX_EINVAL, "max download bytes %lld: must be >= 0", (long long)max);
    o->max_download = (uint64_t)max;
    return 0;
}

int ocisbx_client_options_set_cancel(ocisbx_client_options *o, ocisbx_cancel_fn fn, void *user_data)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "client options: NULL");
    o->cancel = fn;
    o->cancel_ud = fn ? user_data : NULL;
    return 0;
}

int ocisbx_client_options_clone(const ocisbx_client_options *src, ocisbx_client_options **out)
{
    int rc = ocisbx_client_options_new(out);
    if (rc || !src)
        return rc;
    ocisbx_client_options *o = *out;
    o->prefer_ndjson = src->prefer_ndjson;
    o->resume_limit = src->resume_limit;
    o->max_download = src->max_download;
    o->cancel = src->cancel;
    o->cancel_ud = src->cancel_ud;
    rc = ocisbx_client_options_set_http_options(o, &src->http);
    if (!rc)
        rc = ocisbx_client_options_set_credentials(o, src->creds);
    if (!rc)
        rc = set_str(&o->endpoint, src->endpoint);
    if (!rc)
        rc = set_str(&o->region, src->region);
    if (!rc)
        rc = set_str(&o->api_version, src->api_version);
    if (rc) {
        ocisbx_client_options_free(o);
        *out = NULL;
    }
    return rc;
}

/* A setting's variable (the table's names: ours, then the OCI CLI's). */
static const char *env_setting(const char *name)
{
    const ocisbx_setting *row = ocisbx_setting_by_name(name);
    return row ? ocisbx_setting_env(row, NULL) : NULL;
}

int ocisbx_endpoint_for_region(const char *region, char **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "endpoint for region: out is NULL");
    *out = NULL;
    if (!region || !region[0])
        return ocisbx_fail(OCISBX_EINVAL, "endpoint for region: no region");
    char *full = NULL;
    int rc = ocisbx_region_resolve(region, &full);
    if (rc)
        return rc;
    *out = ocisbx_asprintf("https://inference.generativeai.%s.oci.%s", full, ocisbx_region_domain(full));
    ocisbx_free(full);
    return *out ? 0 : ocisbx_fail_nomem();
}

static int resolve_endpoint(const ocisbx_client_options *o, ocisbx_credentials *creds, char **out)
{
    const char *ep = o && o->endpoint ? o->endpoint : env_setting("endpoint");
    if (ep) {
        size_t n = strlen(ep);
        while (n > 0 && ep[n - 1] == '/')
            n--;
        *out = ocisbx_strndup(ep, n);
        return *out ? 0 : ocisbx_fail_nomem();
    }
    const char *region = o && o->region ? o->region : env_setting("region");
    if (!region && creds)
        region = ocisbx_credentials_region(creds);
    char ev[160], rv[160];
    if (!region)
        return ocisbx_fail(OCISBX_ECONFIG,
                           "no sandbox endpoint: set an endpoint or a region (client options, %s, %s, or the "
                           "profile's region)",
                           ocisbx_setting_variables("endpoint", ev, sizeof ev), ocisbx_setting_variables("region", rv, sizeof rv));
    return ocisbx_endpoint_for_region(region, out);
}

static int client_canceled(void *ud)
{
    const ocisbx_client *c = ud;
    if (c->deadline_ms && ocisbx_time_monotonic_ms() >= c->deadline_ms)
        return 1;
    if (c->cancel_held)
        return 0;
    if (c->op_cancel && c->op_cancel(c->op_cancel_ud))
        return 1;
    return c->cancel ? c->cancel(c->cancel_ud) : 0;
}

int ocisbx_client_hold_cancel(ocisbx_client *c, int hold)
{
    if (!c)
        return ocisbx_fail(OCISBX_EINVAL, "client hold cancel: NULL client");
    c->cancel_held = hold != 0;
    return 0;
}

int ocisbx_client_set_operation_cancel(ocisbx_client *c, ocisbx_cancel_fn fn, void *user_data)
{
    if (!c)
        return ocisbx_fail(OCISBX_EINVAL, "client operation cancel: NULL client");
    c->op_cancel = fn;
    c->op_cancel_ud = fn ? user_data : NULL;
    return 0;
}

int ocisbx_client_set_deadline(ocisbx_client *c, int64_t monotonic_ms)
{
    if (!c)
        return ocisbx_fail(OCISBX_EINVAL, "client deadline: NULL client");
    if (monotonic_ms < 0)
        return ocisbx_fail(OCISBX_EINVAL, "client deadline: negative time");
    c->deadline_ms = monotonic_ms;
    return 0;
}

int ocisbx_client_deadline_passed(const ocisbx_client *c)
{
    return c && c->deadline_ms && ocisbx_time_monotonic_ms() >= c->deadline_ms;
}

int ocisbx_client_new(const ocisbx_client_options *opts, ocisbx_client **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "client: out is NULL");
    *out = NULL;
    int rc = ocisbx_global_ensure();
    if (rc)
        return rc;
    ocisbx_client *c = calloc(1, sizeof *c);
    if (!c)
        return ocisbx_fail_nomem();
    struct ocisbx_http_options http;
    if (opts)
        rc = ocisbx_http_options_copy(&http, &opts->http);
    else
        ocisbx_http_options_defaults(&http);
    if (rc) {
        free(c);
        return rc;
    }
    if (!rc && !http.ca_bundle && env_setting("ca_bundle") && !(http.ca_bundle = ocisbx_strdup(env_setting("ca_bundle"))))
        rc = ocisbx_fail_nomem();
    if (rc) {
        ocisbx_http_options_release(&http);
        free(c);
        return rc;
    }
    if (opts && opts->creds) {
        ocisbx_credentials_free(http.creds);
        http.creds = ocisbx_credentials_ref(opts->creds);
    }
    if (opts && opts->cancel) {
        http.cancel = opts->cancel;
        http.cancel_ud = opts->cancel_ud;
    }
    /* the transport asks the client, which asks the caller's callback and
     * its deadline */
    c->cancel = http.cancel;
    c->cancel_ud = http.cancel_ud;
    http.cancel = client_canceled;
    http.cancel_ud = c;
    c->prefer_ndjson = opts ? opts->prefer_ndjson : false;
    c->resume_limit = opts ? opts->resume_limit : DEFAULT_RESUME_LIMIT;
    c->max_download = opts ? opts->max_download : 0;
    rc = resolve_endpoint(opts, http.creds, &c->endpoint);
    const char *ver = ocisbx_setting_lookup("api_version", opts ? opts->api_version : NULL, NULL, NULL);
    if (!rc)
        rc = check_version(ver);
    if (!rc && !(c->api_version = ocisbx_strdup(ver)))
        rc = ocisbx_fail_nomem();
    if (!rc) {
        /* refuse a bad endpoint now rather than at the first call */
        ocisbx_url u;
        rc = ocisbx_url_parse(c->endpoint, &u);
        if (!rc) {
            rc = ocisbx_url_check_scheme(&u, c->endpoint, http.allow_plain_http);
            ocisbx_url_clear(&u);
        }
        if (rc)
            ocisbx_error_wrap("sandbox endpoint: ");
    }
    if (!rc)
        rc = ocisbx_http_new(&http, &c->http);
    ocisbx_http_options_release(&http);
    if (rc) {
        ocisbx_client_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void ocisbx_client_free(ocisbx_client *c)
{
    if (!c)
        return;
    ocisbx_http_free(c->http);
    free(c->endpoint);
    free(c->api_version);
    free(c->last_request_id);
    free(c->next_request_id);
    free(c);
}

const char *ocisbx_client_endpoint(const ocisbx_client *c)
{
    return c ? c->endpoint : NULL;
}
const char *ocisbx_client_api_version(const ocisbx_client *c)
{
    return c ? c->api_version : NULL;
}
const char *ocisbx_client_last_request_id(const ocisbx_client *c)
{
    return c ? c->last_request_id : NULL;
}

int ocisbx_client_set_next_request_id(ocisbx_client *c, const char *id)
{
    if (!c)
        return ocisbx_fail(OCISBX_EINVAL, "client is NULL");
    if (id) {
        size_t n = strlen(id);
        if (n == 0 || n > 98 || strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != n)
            return ocisbx_fail(OCISBX_EINVAL, "request id '%.100s': 1-98 letters, digits, '_' or '-'", id);
    }
    return set_str(&c->next_request_id, id);
}

void ocisbx_client_note_request_id(ocisbx_client *c, const char *id)
{
    if (!id)
        return;
    char *n = ocisbx_strdup(id);
    if (!n)
        return;
    free(c->last_request_id);
    c->last_request_id = n;
}

int ocisbx_client_request(ocisbx_client *c, ocisbx_op op, const ocisbx_param *params, size_t nparams,
                          const ocisbx_model *body, ocisbx_http_request **out)
{
    *out = NULL;
    if (!c)
        return ocisbx_fail(OCISBX_EINVAL, "client is NULL");
    const ocisbx_route *r = ocisbx_route_get(op);
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "operation %d has no route", (int)op);
    /* "ifMatch" is a header, not a query parameter, and only some take it */
    const char *if_match = NULL;
    for (size_t i = 0; i < nparams; i++)
        if (params[i].name && strcmp(params[i].name, "ifMatch") == 0 && params[i].value) {
            if (!r->if_match)
                return ocisbx_fail(OCISBX_EINVAL, "%s takes no if-match", r->name);
            if (!params[i].value[0] || strpbrk(params[i].value, "\r\n"))
                return ocisbx_fail(OCISBX_EINVAL, "%s: ifMatch must be a non-empty etag on one line", r->name);
            if_match = params[i].value;
        }
    char *url = NULL;
    int rc = ocisbx_route_url(r, c->endpoint, c->api_version, params, nparams, &url);
    if (rc)
        return rc;
    ocisbx_http_request *req = NULL;
    rc = ocisbx_http_request_new(r->method, url, &req);
    free(url);
    if (!rc)
        rc = ocisbx_http_request_set_retry_class(req, r->retry);
    if (!rc && if_match)
        rc = ocisbx_http_request_add_header(req, "if-match", if_match);
    if (!rc && c->next_request_id) {
        rc = ocisbx_http_request_set_request_id(req, c->next_request_id);
        free(c->next_request_id);
        c->next_request_id = NULL;
    }
    if (!rc && r->request) {
        char *text = NULL;
        if (body) {
            rc = ocisbx_model_to_json(body, &text);
        } else if (!(text = ocisbx_strdup("{}"))) {
            rc = ocisbx_fail_nomem();
        }
        if (!rc)
            rc = ocisbx_http_request_set_body(req, text, strlen(text));
        if (!rc)
            rc = ocisbx_http_request_set_content_type(req, "application/json");
        /* the body may hold environment values: secrets */
        if (text)
            ocisbx_free_secret(text);
    }
    if (rc) {
        ocisbx_http_request_free(req);
        return rc;
    }
    *out = req;
    return 0;
}

int ocisbx_client_send(ocisbx_client *c, const ocisbx_route *route, ocisbx_http_request *req, ocisbx_model **out)
{
    if (out)
        *out = NULL;
    ocisbx_http_response *resp = NULL;
    int rc = ocisbx_http_send(c->http, req, &resp);
    const char *rid = resp ? ocisbx_http_response_request_id(resp) : ocisbx_http_request_request_id(req);
    ocisbx_client_note_request_id(c, rid);
    if (rc) {
        ocisbx_http_response_free(resp);
        return rc;
    }
    if (out && route->response) {
        size_t len = 0;
        const char *body = ocisbx_http_response_body(resp, &len);
        ocisbx_model *m = NULL;
        if (len == 0) {
            rc = ocisbx_fail(OCISBX_EPARSE, "%s: the answer (HTTP %d) has no %s body (opc-request-id: %s)",
                             route->name, ocisbx_http_response_status(resp), route->response->name,
                             rid ? rid : "none");
        } else {
            rc = ocisbx_model_parse(route->response, body, len, &m);
            if (rc)
                ocisbx_error_wrap("%s (opc-request-id: %s): ", route->name, rid ? rid : "none");
        }
        if (rc)
            ocisbx_error_annotate(ocisbx_http_response_status(resp), rid);
        if (!rc)
            rc = ocisbx_model_set_meta(m, ocisbx_http_response_header(resp, "etag"), rid,
                                       ocisbx_http_response_header(resp, "opc-next-page"));
        if (rc)
            ocisbx_model_free(m);
        else
            *out = m;
    }
    ocisbx_http_response_free(resp);
    return rc;
}

int ocisbx_client_exec(ocisbx_client *c, ocisbx_op op, const ocisbx_param *params, size_t nparams,
                       const ocisbx_model *body, ocisbx_model **out)
{
    if (out)
        *out = NULL;
    ocisbx_http_request *req = NULL;
    int rc = ocisbx_client_request(c, op, params, nparams, body, &req);
    if (rc)
        return rc;
    rc = ocisbx_client_send(c, ocisbx_route_get(op), req, out);
    ocisbx_http_request_free(req);
    return rc;
}
