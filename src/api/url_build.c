/* URLs from the route table: percent-encoded path parameters and query. */
#include <string.h>

#include "api/routes.h"

static bool unreserved(unsigned char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
           ch == '.' || ch == '_' || ch == '~';
}

int ocisbx_pct_encode(ocisbx_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = ocisbx_buf_reserve(b, len * 3);
    if (rc)
        return rc;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (unreserved(ch)) {
            b->data[b->len++] = (char)ch;
        } else {
            b->data[b->len++] = '%';
            b->data[b->len++] = hex[ch >> 4];
            b->data[b->len++] = hex[ch & 15];
        }
    }
    b->data[b->len] = '\0';
    return 0;
}

static const char *param_get(const ocisbx_param *p, size_t n, const char *name, size_t name_len)
{
    for (size_t i = 0; i < n; i++)
        if (p[i].name && strlen(p[i].name) == name_len && memcmp(p[i].name, name, name_len) == 0)
            return p[i].value;
    return NULL;
}

static bool in_list(const char *list, const char *name, size_t name_len)
{
    for (const char *s = list; s && *s;) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == name_len && memcmp(s, name, n) == 0)
            return true;
        s = e ? e + 1 : NULL;
    }
    return false;
}

int ocisbx_route_url(const ocisbx_route *r, const char *base, const char *version, const ocisbx_param *params,
                     size_t nparams, char **out)
{
    *out = NULL;
    ocisbx_buf b = OCISBX_BUF_INIT;
    size_t blen = strlen(base);
    while (blen > 0 && base[blen - 1] == '/')
        blen--;
    int rc = ocisbx_buf_append(&b, base, blen);
    if (!rc && version && version[0]) {
        rc = ocisbx_buf_appends(&b, "/");
        if (!rc)
            rc = ocisbx_pct_encode(&b, version, strlen(version));
    }
    for (const char *p = r->path; !rc && *p;) {
        if (*p != '{') {
            const char *n = strchr(p, '{');
            size_t len = n ? (size_t)(n - p) : strlen(p);
            rc = ocisbx_buf_append(&b, p, len);
            p += len;
            continue;
        }
        const char *close = strchr(p, '}');
        if (!close) {
            rc = ocisbx_fail(OCISBX_EINVAL, "route %s: bad path template", r->name);
            break;
        }
        const char *v = param_get(params, nparams, p + 1, (size_t)(close - p - 1));
        if (!v || !v[0]) {
            rc = ocisbx_fail(OCISBX_EINVAL, "%s: path parameter %.*s is missing", r->name, (int)(close - p - 1),
                             p + 1);
            break;
        }
        rc = ocisbx_pct_encode(&b, v, strlen(v));
        p = close + 1;
    }
    /* query parameters in the route's order; a required one must be there */
    char sep = '?';
    for (const char *s = r->query; !rc && s && *s;) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        const char *v = param_get(params, nparams, s, n);
        if (v) {
            rc = ocisbx_buf_append(&b, &sep, 1);
            if (!rc)
                rc = ocisbx_buf_append(&b, s, n);
            if (!rc)
                rc = ocisbx_buf_append(&b, "=", 1);
            if (!rc)
                rc = ocisbx_pct_encode(&b, v, strlen(v));
            sep = '&';
        } else if (in_list(r->required_query, s, n)) {
            rc = ocisbx_fail(OCISBX_EINVAL, "%s: query parameter %.*s is missing", r->name, (int)n, s);
        }
        s = e ? e + 1 : NULL;
    }
    if (rc) {
        ocisbx_buf_free(&b);
        return rc;
    }
    *out = ocisbx_buf_detach(&b);
    return *out ? 0 : ocisbx_fail_nomem();
}
