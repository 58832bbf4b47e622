/* The header list of one attempt, in wire order: host (libcurl always
 * writes Host right after the request line), then the rest of what the
 * signer produced (date, body headers, authorization), opc-request-id,
 * opc-retry-token, user-agent and the caller's extra headers. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "http/http_internal.h"
#include "ocisbx/util.h"

char *ocisbx_http_user_agent(const char *suffix)
{
    struct utsname un;
    char os[sizeof(((struct utsname *)0)->sysname)] = "unknown";
    char arch[sizeof(((struct utsname *)0)->machine)] = "unknown";
    if (uname(&un) == 0) {
        snprintf(os, sizeof os, "%s", un.sysname);
        snprintf(arch, sizeof arch, "%s", un.machine);
        for (char *p = os; *p; p++)
            *p = (char)tolower((unsigned char)*p);
    }
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    return ocisbx_asprintf("libocisbx/%s (%s/%s; libcurl/%s)%s%s", ocisbx_version(), os, arch,
                           v && v->version ? v->version : "?", suffix ? " " : "", suffix ? suffix : "");
}

/* Headers of an unsigned request (no credentials): the same shape. */
static int unsigned_headers(ocisbx_http_request *r, const ocisbx_url *u, ocisbx_headers *out)
{
    char date[OCISBX_RFC1123_LEN + 1];
    int rc;
    if (r->date)
        snprintf(date, sizeof date, "%s", r->date);
    else if ((rc = ocisbx_time_format_rfc1123(time(NULL), date)) != 0)
        return rc;
    if ((rc = ocisbx_headers_add(out, "date", date)) != 0)
        return rc;
    return ocisbx_headers_add(out, "host", u->authority);
}

static int signed_headers(ocisbx_http *h, ocisbx_http_request *r, bool sign_body, ocisbx_headers **out)
{
    ocisbx_sign_request *sr = NULL;
    int rc = ocisbx_sign_request_new(r->method, r->url, &sr);
    if (rc == 0 && r->date)
        rc = ocisbx_sign_request_set_date(sr, r->date);
    if (rc == 0)
        rc = ocisbx_sign_request_set_content_type(sr, r->content_type);
    if (rc == 0 && sign_body)
        rc = ocisbx_sign_request_set_body_sha256(sr, r->body_sha, r->body_total);
    if (rc == 0 && !sign_body)
        rc = ocisbx_sign_request_set_exclude_body(sr, 1);
    if (rc == 0)
        rc = ocisbx_sign(h->opt.creds, sr, out);
    ocisbx_sign_request_free(sr);
    return rc;
}

/* A copy of hl with host moved to the front, the rest kept in order. */
static int host_first(const ocisbx_headers *hl, ocisbx_headers **out)
{
    ocisbx_headers *o = NULL;
    int rc = ocisbx_headers_new(&o);
    const char *host = ocisbx_headers_get(hl, "host");
    if (rc == 0 && host)
        rc = ocisbx_headers_add(o, "host", host);
    for (size_t i = 0; rc == 0 && i < ocisbx_headers_count(hl); i++)
        if (strcmp(ocisbx_headers_name(hl, i), "host") != 0)
            rc = ocisbx_headers_add(o, ocisbx_headers_name(hl, i), ocisbx_headers_value(hl, i));
    if (rc) {
        ocisbx_headers_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

int ocisbx_http_build_headers(ocisbx_http *h, ocisbx_http_request *r, const ocisbx_url *u, ocisbx_headers **out)
{
    *out = NULL;
    bool method_body = ocisbx_http_method_has_body(r->method);
    bool sign_body = method_body && !r->exclude_body;
    int rc = ocisbx_http_body_prepare(r, sign_body && h->opt.creds != NULL);
    if (rc)
        return rc;
    ocisbx_headers *hl = NULL;
    if (h->opt.creds) {
        rc = signed_headers(h, r, sign_body, &hl);
    } else if ((rc = ocisbx_headers_new(&hl)) == 0) {
        rc = unsigned_headers(r, u, hl);
    }
    /* Body headers the signer did not produce (exclude-body, unsigned). */
    if (rc == 0 && (method_body || r->body != BODY_NONE) && !ocisbx_headers_get(hl, "content-length")) {
        int64_t len = ocisbx_http_body_length(r);
        char num[32];
        snprintf(num, sizeof num, "%lld", (long long)len);
        rc = len >= 0 ? ocisbx_headers_add(hl, "content-length", num)
                      : ocisbx_headers_add(hl, "transfer-encoding", "chunked");
        if (rc == 0)
            rc = ocisbx_headers_add(hl, "content-type", r->content_type);
    }
    if (rc == 0)
        rc = ocisbx_http_request_fill_ids(r);
    if (rc == 0)
        rc = ocisbx_headers_add(hl, "opc-request-id", r->request_id);
    if (rc == 0 && r->retry_class == OCISBX_HTTP_RETRY_TOKEN)
        rc = ocisbx_headers_add(hl, "opc-retry-token", r->retry_token);
    if (rc == 0)
        rc = ocisbx_headers_add(hl, "user-agent", h->user_agent);
    for (size_t i = 0; rc == 0 && i < ocisbx_headers_count(r->extra); i++)
        rc = ocisbx_headers_add(hl, ocisbx_headers_name(r->extra, i), ocisbx_headers_value(r->extra, i));
    ocisbx_headers *ordered = NULL;
    if (rc == 0)
        rc = host_first(hl, &ordered);
    ocisbx_headers_free(hl);
    if (rc)
        return rc;
    *out = ordered;
    return 0;
}
