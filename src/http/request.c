/* Request and response objects. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_internal.h"
#include "ocisbx/util.h"

#define ID_LEN 32

static const char *const reserved_headers[] = {"host",
                                               "date",
                                               "authorization",
                                               "content-length",
                                               "content-type",
                                               "x-content-sha256",
                                               "opc-request-id",
                                               "opc-retry-token",
                                               "user-agent",
                                               "transfer-encoding",
                                               NULL};

bool ocisbx_http_method_has_body(const char *method)
{
    return strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0;
}

int ocisbx_http_request_new(const char *method, const char *url, ocisbx_http_request **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "http request: out is NULL");
    *out = NULL;
    if (!method || !url)
        return ocisbx_fail(OCISBX_EINVAL, "http request: method and URL are required");
    static const char *const methods[] = {"GET", "HEAD", "DELETE", "POST", "PUT", "PATCH", NULL};
    char m[8] = {0};
    size_t n = strlen(method);
    char shown[96];
    ocisbx_escape_shown(method, shown, 40);
    if (n >= sizeof m)
        return ocisbx_fail(OCISBX_EINVAL, "http request: unsupported method %s", shown);
    for (size_t i = 0; i < n; i++)
        m[i] = (char)toupper((unsigned char)method[i]);
    const char *const *k = methods;
    while (*k && strcmp(*k, m) != 0)
        k++;
    if (!*k)
        return ocisbx_fail(OCISBX_EINVAL, "http request: unsupported method %s", shown);
    char *norm = NULL;
    int rc = ocisbx_url_normalize(url, &norm);
    if (rc)
        return rc;
    ocisbx_url u;
    if ((rc = ocisbx_url_parse(norm, &u)) != 0) {
        free(norm);
        return rc;
    }
    bool userinfo = u.has_userinfo, fragment = u.has_fragment;
    ocisbx_url_clear(&u);
    /* libcurl would turn user:password@ into an Authorization header, and it
     * never sends a #fragment that the signer would have signed. */
    if (userinfo || fragment) {
        rc = userinfo ? ocisbx_fail(OCISBX_EINVAL, "URL: user information (user:password@host) is not allowed")
                      : ocisbx_fail(OCISBX_EINVAL,
                                    "URL %.200s: a #fragment is not allowed (percent-encode '#' as %%23)", norm);
        free(norm);
        return rc;
    }
    ocisbx_http_request *r = calloc(1, sizeof *r);
    if (!r) {
        free(norm);
        return ocisbx_fail_nomem();
    }
    r->method = ocisbx_strdup(m);
    r->url = norm;
    r->content_type = ocisbx_strdup("application/json");
    r->body_declared_len = -1;
    r->retry_class = (strcmp(m, "POST") == 0 || strcmp(m, "PATCH") == 0) ? OCISBX_HTTP_RETRY_NEVER
                                                                         : OCISBX_HTTP_RETRY_SAFE;
    if (!r->method || !r->url || !r->content_type || ocisbx_headers_new(&r->extra) != 0) {
        ocisbx_http_request_free(r);
        return ocisbx_fail_nomem();
    }
    *out = r;
    return 0;
}

static void body_reset(ocisbx_http_request *r)
{
    if (r->body_data) {
        ocisbx_wipe(r->body_data, r->body_len);
        free(r->body_data);
    }
    if (r->body_fp)
        fclose(r->body_fp);
    free(r->body_path);
    r->body_data = r->body_path = NULL;
    r->body_fp = NULL;
    r->body_len = 0;
    r->body_read = NULL;
    r->body_rewind = NULL;
    r->body_ud = NULL;
    r->body_declared_len = -1;
    r->have_sha = false;
    r->body_consumed = false;
    r->body = BODY_NONE;
}

void ocisbx_http_request_free(ocisbx_http_request *r)
{
    if (!r)
        return;
    body_reset(r);
    free(r->method);
    free(r->url);
    ocisbx_headers_free(r->extra);
    free(r->content_type);
    free(r->request_id);
    free(r->retry_token);
    free(r->date);
    free(r->sink_path);
    free(r);
}

static bool header_value_ok(const char *v)
{
    return v && !strpbrk(v, "\r\n");
}

static bool token_ok(const char *v)
{
    if (!v || !*v || strlen(v) > 128)
        return false;
    for (const char *p = v; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.' && *p != ':')
            return false;
    return true;
}

int ocisbx_http_request_add_header(ocisbx_http_request *r, const char *name, const char *value)
{
    char shown[256];
    ocisbx_escape_shown(name ? name : "(null)", shown, 100);
    if (!r || !name || !*name || !header_value_ok(value))
        return ocisbx_fail(OCISBX_EINVAL, "http request: header %s: missing name or bad value", shown);
    for (const char *p = name; *p; p++)
        if (!isgraph((unsigned char)*p) || *p == ':')
            return ocisbx_fail(OCISBX_EINVAL, "http request: header name %s is not a token", shown);
    for (const char *const *k = reserved_headers; *k; k++)
        if (ocisbx_strcasecmp(*k, name) == 0)
            return ocisbx_fail(OCISBX_EINVAL, "http request: header %s is set by the transport (use its setter)", *k);
    return ocisbx_headers_add(r->extra, name, value);
}

static int replace_str(char **field, const char *value)
{
    char *copy = NULL;
    if (value && !(copy = ocisbx_strdup(value)))
        return ocisbx_fail_nomem();
    free(*field);
    *field = copy;
    return 0;
}

int ocisbx_http_request_set_content_type(ocisbx_http_request *r, const char *content_type)
{
    if (!r || !content_type || !*content_type || !header_value_ok(content_type))
        return ocisbx_fail(OCISBX_EINVAL, "http request: bad content type");
    return replace_str(&r->content_type, content_type);
}

int ocisbx_http_request_set_request_id(ocisbx_http_request *r, const char *id)
{
    char shown[256];
    ocisbx_escape_shown(id ? id : "", shown, 100);
    if (!r || (id && !token_ok(id)))
        return ocisbx_fail(OCISBX_EINVAL, "http request: opc-request-id %s: use letters, digits, '-', '_'", shown);
    return replace_str(&r->request_id, id);
}

int ocisbx_http_request_set_retry_class(ocisbx_http_request *r, int retry_class)
{
    if (!r || retry_class < OCISBX_HTTP_RETRY_NEVER || retry_class > OCISBX_HTTP_RETRY_TOKEN)
        return ocisbx_fail(OCISBX_EINVAL, "http request: unknown retry class %d", retry_class);
    r->retry_class = retry_class;
    return 0;
}

int ocisbx_http_request_set_retry_token(ocisbx_http_request *r, const char *token)
{
    if (!r || (token && !token_ok(token)))
        return ocisbx_fail(OCISBX_EINVAL, "http request: opc-retry-token: use letters, digits, '-', '_'");
    return replace_str(&r->retry_token, token);
}

int ocisbx_http_request_set_date(ocisbx_http_request *r, const char *date)
{
    time_t t;
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "http request: NULL");
    if (date && ocisbx_time_parse_rfc1123(date, &t) != 0) {
        char shown[256];
        ocisbx_escape_shown(date, shown, 100);
        return ocisbx_error_wrap("date %s: ", shown);
    }
    return replace_str(&r->date, date);
}

int ocisbx_http_request_set_body(ocisbx_http_request *r, const void *data, size_t len)
{
    if (!r || (!data && len))
        return ocisbx_fail(OCISBX_EINVAL, "http request: body is NULL");
    body_reset(r);
    r->body_data = malloc(len + 1);
    if (!r->body_data)
        return ocisbx_fail_nomem();
    if (len)
        memcpy(r->body_data, data, len);
    r->body_data[len] = '\0';
    r->body_len = len;
    r->body = BODY_BUFFER;
    return 0;
}

int ocisbx_http_request_set_body_file(ocisbx_http_request *r, const char *path)
{
    if (!r || !path || !*path)
        return ocisbx_fail(OCISBX_EINVAL, "http request: body file path is empty");
    body_reset(r);
    if (!(r->body_path = ocisbx_strdup(path)))
        return ocisbx_fail_nomem();
    r->body = BODY_FILE;
    return 0;
}

int ocisbx_http_request_set_body_callback(ocisbx_http_request *r, int64_t len, ocisbx_read_fn read,
                                          ocisbx_rewind_fn rewind, void *user_data)
{
    if (!r || !read || len < -1)
        return ocisbx_fail(OCISBX_EINVAL, "http request: body callback is NULL or length invalid");
    body_reset(r);
    r->body = BODY_CALLBACK;
    r->body_read = read;
    r->body_rewind = rewind;
    r->body_ud = user_data;
    r->body_declared_len = len;
    return 0;
}

int ocisbx_http_request_set_body_sha256(ocisbx_http_request *r, const char *sha256_b64, uint64_t len)
{
    if (!r || !sha256_b64 || strlen(sha256_b64) != OCISBX_SHA256_B64_LEN)
        return ocisbx_fail(OCISBX_EINVAL, "http request: body SHA-256 must be 44 base64 characters");
    memcpy(r->body_sha, sha256_b64, OCISBX_SHA256_B64_LEN + 1);
    r->body_total = len;
    r->have_sha = true;
    return 0;
}

int ocisbx_http_request_set_exclude_body_signing(ocisbx_http_request *r, int exclude)
{
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "http request: NULL");
    r->exclude_body = exclude != 0;
    return 0;
}

int ocisbx_http_request_set_sink_file(ocisbx_http_request *r, const char *path)
{
    if (!r || !path || !*path)
        return ocisbx_fail(OCISBX_EINVAL, "http request: sink file path is empty");
    int rc = replace_str(&r->sink_path, path);
    if (rc == 0)
        r->sink = SINK_FILE;
    return rc;
}

int ocisbx_http_request_set_sink_callback(ocisbx_http_request *r, ocisbx_write_fn write, void *user_data)
{
    if (!r || !write)
        return ocisbx_fail(OCISBX_EINVAL, "http request: sink callback is NULL");
    r->sink = SINK_CALLBACK;
    r->sink_write = write;
    r->sink_ud = user_data;
    return 0;
}

int ocisbx_http_request_set_headers_callback(ocisbx_http_request *r, ocisbx_http_headers_fn fn, void *user_data)
{
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "http request: NULL");
    r->headers_fn = fn;
    r->headers_ud = user_data;
    return 0;
}

int ocisbx_http_request_set_streaming(ocisbx_http_request *r, int streaming)
{
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "http request: NULL");
    r->streaming = streaming != 0;
    return 0;
}

const char *ocisbx_http_request_method(const ocisbx_http_request *r)
{
    return r ? r->method : NULL;
}

const char *ocisbx_http_request_url(const ocisbx_http_request *r)
{
    return r ? r->url : NULL;
}

const char *ocisbx_http_request_request_id(const ocisbx_http_request *r)
{
    return r ? r->request_id : NULL;
}

const char *ocisbx_http_request_retry_token(const ocisbx_http_request *r)
{
    return r ? r->retry_token : NULL;
}

int ocisbx_http_request_fill_ids(ocisbx_http_request *r)
{
    char id[ID_LEN + 1];
    int rc;
    if (!r->request_id) {
        if ((rc = ocisbx_random_id(id, ID_LEN)) != 0)
            return rc;
        if (!(r->request_id = ocisbx_strdup(id)))
            return ocisbx_fail_nomem();
    }
    if (r->retry_class == OCISBX_HTTP_RETRY_TOKEN && !r->retry_token) {
        if ((rc = ocisbx_random_id(id, ID_LEN)) != 0)
            return rc;
        if (!(r->retry_token = ocisbx_strdup(id)))
            return ocisbx_fail_nomem();
    }
    return 0;
}

/* ---- responses ---- */
ocisbx_http_response *ocisbx_http_response_alloc(void)
{
    ocisbx_http_response *resp = calloc(1, sizeof *resp);
    if (!resp)
        return NULL;
    ocisbx_buf_init(&resp->body);
    if (ocisbx_headers_new(&resp->headers) != 0) {
        free(resp);
        return NULL;
    }
    return resp;
}

int ocisbx_http_response_status(const ocisbx_http_response *resp)
{
    return resp ? resp->status : 0;
}

const char *ocisbx_http_response_reason(const ocisbx_http_response *resp)
{
    return resp ? resp->reason : "";
}

const ocisbx_headers *ocisbx_http_response_headers(const ocisbx_http_response *resp)
{
    return resp ? resp->headers : NULL;
}

const char *ocisbx_http_response_header(const ocisbx_http_response *resp, const char *name)
{
    return resp && name ? ocisbx_headers_get(resp->headers, name) : NULL;
}

const char *ocisbx_http_response_body(const ocisbx_http_response *resp, size_t *len)
{
    if (len)
        *len = resp ? resp->body.len : 0;
    return resp && resp->body.data ? resp->body.data : "";
}

const char *ocisbx_http_response_request_id(const ocisbx_http_response *resp)
{
    return resp ? resp->request_id : NULL;
}

int ocisbx_http_response_attempts(const ocisbx_http_response *resp)
{
    return resp ? resp->attempts : 0;
}

void ocisbx_http_response_free(ocisbx_http_response *resp)
{
    if (!resp)
        return;
    ocisbx_headers_free(resp->headers);
    ocisbx_buf_free(&resp->body);
    free(resp->request_id);
    free(resp);
}
