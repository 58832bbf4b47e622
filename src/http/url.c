/* URL pieces the transport needs: scheme, the authority (signed as the Host
 * value exactly as written), the host for the loopback rule. */
#include <stdlib.h>
#include <string.h>

#include "http/http_internal.h"

void ocisbx_url_clear(ocisbx_url *u)
{
    free(u->authority);
    free(u->host);
    memset(u, 0, sizeof *u);
}

/* The URL as messages show it: user:password@ replaced by ***@, bytes
 * outside printable ASCII as \xNN so that a message stays one line. */
static void shown_url(const char *url, char *out, size_t cap)
{
    char raw[256];
    const char *start = strstr(url, "://");
    start = start ? start + 3 : url;
    size_t alen = strcspn(start, "/?#");
    const char *at = memchr(start, '@', alen);
    if (at)
        snprintf(raw, sizeof raw, "%.*s***%.200s", (int)(start - url), url, at);
    else
        snprintf(raw, sizeof raw, "%.200s", url);
    ocisbx_escape_shown(raw, out, cap);
}

/* Bytes curl would change on the way out: it percent-encodes spaces and
 * non-ASCII (lowercase hex) and refuses control bytes. Encoding them here,
 * before signing, makes the signed target the one on the wire. */
static bool needs_encoding(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f;
}

int ocisbx_url_normalize(const char *url, char **out)
{
    *out = NULL;
    if (!url || !*url)
        return ocisbx_fail(OCISBX_EINVAL, "URL is empty");
    char shown[256];
    shown_url(url, shown, sizeof shown);
    const char *sep = strstr(url, "://");
    const char *rest = sep ? sep + 3 + strcspn(sep + 3, "/?#") : url + strlen(url);
    for (const unsigned char *p = (const unsigned char *)url; p < (const unsigned char *)rest; p++)
        if (needs_encoding(*p))
            return ocisbx_fail(OCISBX_EINVAL,
                               "URL %s: the scheme or host contains a space, control or non-ASCII byte", shown);
    ocisbx_buf b = OCISBX_BUF_INIT;
    int rc = ocisbx_buf_append(&b, url, (size_t)(rest - url));
    const char *qmark = strchr(rest, '?');
    for (const unsigned char *p = (const unsigned char *)rest; rc == 0 && *p; p++) {
        if (*p == '%') {
            if (ocisbx_hex_digit((char)p[1]) < 0 || ocisbx_hex_digit((char)p[2]) < 0) {
                ocisbx_buf_free(&b);
                return ocisbx_fail(OCISBX_EINVAL,
                                   "URL %s: malformed percent escape at byte %zu (write %% itself as %%25)", shown,
                                   (size_t)((const char *)p - url));
            }
            rc = ocisbx_buf_append(&b, p, 3);
            p += 2;
        } else if (*p == '?' && (const char *)p == qmark && p[1] == '\0') {
            /* an empty query: the spec signs no '?', so none is sent */
        } else if (needs_encoding(*p)) {
            char esc[4] = {'%', "0123456789ABCDEF"[*p >> 4], "0123456789ABCDEF"[*p & 15], '\0'};
            rc = ocisbx_buf_append(&b, esc, 3);
        } else {
            rc = ocisbx_buf_append(&b, p, 1);
        }
    }
    if (rc) {
        ocisbx_buf_free(&b);
        return rc;
    }
    *out = ocisbx_buf_detach(&b);
    return *out ? 0 : ocisbx_fail_nomem();
}

static int parse(const char *url, const char *shown, ocisbx_url *out);

int ocisbx_url_parse(const char *url, ocisbx_url *out)
{
    memset(out, 0, sizeof *out);
    if (!url || !*url)
        return ocisbx_fail(OCISBX_EINVAL, "URL is empty");
    char shown[256];
    shown_url(url, shown, sizeof shown);
    return parse(url, shown, out);
}

/* Errors name the shown form (without a password). */
static int parse(const char *url, const char *shown, ocisbx_url *out)
{
    memset(out, 0, sizeof *out);
    if (strpbrk(url, " \t\r\n"))
        return ocisbx_fail(OCISBX_EINVAL, "URL %.200s: contains whitespace (percent-encode it)", shown);
    const char *p;
    if (ocisbx_strncasecmp(url, "https://", 8) == 0) {
        out->https = true;
        p = url + 8;
    } else if (ocisbx_strncasecmp(url, "http://", 7) == 0) {
        p = url + 7;
    } else {
        return ocisbx_fail(OCISBX_EINVAL, "URL %.200s: not an absolute http(s) URL", shown);
    }
    size_t alen = strcspn(p, "/?#");
    const char *at = memchr(p, '@', alen);
    out->has_fragment = strchr(p, '#') != NULL;
    out->has_userinfo = at != NULL;
    if (at) { /* userinfo is never sent in Host */
        alen -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    if (alen == 0)
        return ocisbx_fail(OCISBX_EINVAL, "URL %.200s: no host", shown);
    const char *hend;
    const char *hstart = p;
    if (*p == '[') {
        const char *rb = memchr(p, ']', alen);
        if (!rb)
            return ocisbx_fail(OCISBX_EINVAL, "URL %.200s: unterminated [IPv6] host", shown);
        hstart = p + 1;
        hend = rb;
        p = rb + 1;
    } else {
        const char *colon = memchr(p, ':', alen);
        hend = colon ? colon : p + alen;
        p = hend;
    }
    const char *auth_start = at ? at + 1 : (out->https ? url + 8 : url + 7);
    const char *auth_end = auth_start + alen;
    out->port = out->https ? 443 : 80;
    if (p < auth_end) {
        if (*p != ':' || p + 1 == auth_end)
            return ocisbx_fail(OCISBX_EINVAL, "URL %.200s: malformed host or port", shown);
        long port = 0;
        for (const char *q = p + 1; q < auth_end; q++) {
            if (*q < '0' || *q > '9')
                return ocisbx_fail(OCISBX_EINVAL, "URL %.200s: port is not a number", shown);
            port = port * 10 + (*q - '0');
            if (port > 65535)
                return ocisbx_fail(OCISBX_EINVAL, "URL %.200s: port out of range", shown);
        }
        if (port == 0)
            return ocisbx_fail(OCISBX_EINVAL, "URL %.200s: port out of range", shown);
        out->port = (int)port;
    }
    if (hend == hstart)
        return ocisbx_fail(OCISBX_EINVAL, "URL %.200s: no host", shown);
    out->authority = ocisbx_strndup(auth_start, alen);
    out->host = ocisbx_strndup(hstart, (size_t)(hend - hstart));
    if (!out->authority || !out->host) {
        ocisbx_url_clear(out);
        return ocisbx_fail_nomem();
    }
    return 0;
}

int ocisbx_url_check_scheme(const ocisbx_url *u, const char *url, bool allow_plain_http)
{
    if (u->https)
        return 0;
    if (!ocisbx_host_is_loopback(u->host))
        return ocisbx_fail(OCISBX_EINVAL, "URL %.200s: plain http is refused for non-loopback host %s (use https)",
                           url, u->host);
    if (!allow_plain_http)
        return ocisbx_fail(OCISBX_EINVAL,
                           "URL %.200s: plain http is not allowed (allow it for loopback test servers)", url);
    return 0;
}
