/* An ordered list of request headers, as the signer produces them. Each
 * entry is one allocation (name and value side by side) so signing stays
 * cheap. */
#include <stdlib.h>
#include <string.h>

#include "ocisbx/auth.h"
#include "util/internal.h"

struct hdr {
    char *name; /* name\0value\0 in one block */
    char *value;
    size_t size; /* of the block, for wiping */
};

struct ocisbx_headers {
    struct hdr *v;
    size_t n, cap;
};

int ocisbx_headers_new(ocisbx_headers **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_headers_new: out is NULL");
    ocisbx_headers *h = calloc(1, sizeof *h);
    if (!h)
        return ocisbx_fail_nomem();
    h->cap = 8; /* what a signed request needs, so no regrowth */
    h->v = malloc(h->cap * sizeof *h->v);
    if (!h->v) {
        free(h);
        return ocisbx_fail_nomem();
    }
    *out = h;
    return 0;
}

static int bad_chars(const char *s, int is_name)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\r' || *p == '\n' || *p == '\0')
            return 1;
        if (is_name && (*p <= ' ' || *p == ':' || *p >= 0x7f))
            return 1;
    }
    return 0;
}

int ocisbx_headers_add(ocisbx_headers *h, const char *name, const char *value)
{
    if (!h || !name || !value)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_headers_add: NULL argument");
    if (!*name || bad_chars(name, 1))
        return ocisbx_fail(OCISBX_EINVAL, "header name \"%s\" is not a valid token", name);
    /* A CR or LF would let a value inject headers. */
    if (bad_chars(value, 0))
        return ocisbx_fail(OCISBX_EINVAL, "header %s: value contains CR or LF", name);
    if (h->n == h->cap) {
        size_t cap = h->cap * 2;
        struct hdr *v = realloc(h->v, cap * sizeof *v);
        if (!v)
            return ocisbx_fail_nomem();
        h->v = v;
        h->cap = cap;
    }
    size_t nl = strlen(name), vl = strlen(value);
    char *blk = malloc(nl + vl + 2);
    if (!blk)
        return ocisbx_fail_nomem();
    for (size_t i = 0; i < nl; i++) {
        char c = name[i];
        blk[i] = (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : c;
    }
    blk[nl] = '\0';
    memcpy(blk + nl + 1, value, vl + 1);
    h->v[h->n].name = blk;
    h->v[h->n].value = blk + nl + 1;
    h->v[h->n].size = nl + vl + 2;
    h->n++;
    return 0;
}

size_t ocisbx_headers_count(const ocisbx_headers *h)
{
    return h ? h->n : 0;
}

const char *ocisbx_headers_name(const ocisbx_headers *h, size_t i)
{
    return h && i < h->n ? h->v[i].name : NULL;
}

const char *ocisbx_headers_value(const ocisbx_headers *h, size_t i)
{
    return h && i < h->n ? h->v[i].value : NULL;
}

const char *ocisbx_headers_get(const ocisbx_headers *h, const char *name)
{
    if (!h || !name)
        return NULL;
    for (size_t i = 0; i < h->n; i++) {
        if (ocisbx_strcasecmp(h->v[i].name, name) == 0)
            return h->v[i].value;
    }
    return NULL;
}

void ocisbx_headers_free(ocisbx_headers *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n; i++) {
        ocisbx_wipe(h->v[i].name, h->v[i].size);
        free(h->v[i].name);
    }
    free(h->v);
    free(h);
}
