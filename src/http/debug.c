/* The debug log of each request (the CLI's --debug): the request line and
 * headers, the answer's status and headers, libcurl's phase times. Values
 * of credential headers are never formatted: they are written as
 * <redacted> here, and the log's own redaction (util/log.c) runs on every
 * line after that. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http/http_internal.h"
#include "ocisbx/util.h"

static const char *const secret_headers[] = {
    "authorization", "proxy-authorization", "x-app-token", "cookie", "set-cookie", "opc-obo-token", "x-auth-token",
    "security-token", NULL,
};

static bool secret_header(const char *name)
{
    for (const char *const *p = secret_headers; *p; p++)
        if (strcasecmp(*p, name) == 0)
            return true;
    return false;
}

/* The attribute's value in a Signature header (keyId, headers), or "". */
static void sig_attr(const char *v, const char *attr, char *out, size_t cap)
{
    out[0] = '\0';
    char key[32];
    snprintf(key, sizeof key, "%s=\"", attr);
    const char *p = strstr(v, key);
    if (!p)
        return;
    p += strlen(key);
    const char *e = strchr(p, '"');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

/* What was signed, without the signature: the key's id (a session token's
 * "ST$<token>" hidden) and the list of signed headers. */
static void debug_authorization(const char *dir, const char *value)
{
    char key_id[512], hdrs[512];
    sig_attr(value, "keyId", key_id, sizeof key_id);
    sig_attr(value, "headers", hdrs, sizeof hdrs);
    if (strncmp(key_id, "ST$", 3) == 0)
        snprintf(key_id, sizeof key_id, "ST$<redacted>");
    if (key_id[0] || hdrs[0])
        ocisbx_log(OCISBX_LOG_DEBUG, "http: %s   (signed with key %s; headers \"%s\")", dir, key_id, hdrs);
}

static void debug_headers(const char *dir, const ocisbx_headers *h)
{
    for (size_t i = 0; i < ocisbx_headers_count(h); i++) {
        const char *name = ocisbx_headers_name(h, i);
        const char *value = ocisbx_headers_value(h, i);
        if (!secret_header(name)) {
            ocisbx_log(OCISBX_LOG_DEBUG, "http: %s %s: %.1500s", dir, name, value);
            continue;
        }
        ocisbx_log(OCISBX_LOG_DEBUG, "http: %s %s: <redacted>", dir, name);
        if (strcasecmp(name, "authorization") == 0)
            debug_authorization(dir, value);
    }
}

void ocisbx_http_debug_request(const ocisbx_http_request *r, const ocisbx_headers *hl, int attempt, int max_attempts)
{
    if (!ocisbx_log_enabled(OCISBX_LOG_DEBUG))
        return;
    ocisbx_log(OCISBX_LOG_DEBUG, "http: > %s %.1500s (attempt %d/%d)", r->method, r->url, attempt, max_attempts);
    debug_headers(">", hl);
}

void ocisbx_http_debug_response(int status, const char *reason, const ocisbx_headers *h)
{
    if (!ocisbx_log_enabled(OCISBX_LOG_DEBUG))
        return;
    ocisbx_log(OCISBX_LOG_DEBUG, "http: < %d%s%s", status, reason && *reason ? " " : "", reason ? reason : "");
    debug_headers("<", h);
}

void ocisbx_http_debug_times(const ocisbx_http_request *r, const ocisbx_http_outcome *o)
{
    if (!ocisbx_log_enabled(OCISBX_LOG_DEBUG))
        return;
    /* libcurl's times are from the attempt's start; 0 for a phase that did
     * not happen (a reused connection has no DNS, connect or TLS) */
    ocisbx_log(OCISBX_LOG_DEBUG,
               "http: %s %.300s: times: dns %.1f ms, connect %.1f ms, tls %.1f ms, first byte %.1f ms, total %.1f ms",
               r->method, r->url, (double)o->t_dns_us / 1000.0, (double)o->t_connect_us / 1000.0,
               (double)o->t_tls_us / 1000.0, (double)o->t_first_byte_us / 1000.0, (double)o->t_total_us / 1000.0);
}
