#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "util/internal.h"

void ocisbx_buf_init(ocisbx_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

int ocisbx_buf_reserve(ocisbx_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len - 1)
        return ocisbx_fail_nomem();
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return ocisbx_fail_nomem();
    b->data = p;
    b->cap = cap;
    return 0;
}

int ocisbx_buf_append(ocisbx_buf *b, const void *data, size_t len)
{
    int rc = ocisbx_buf_reserve(b, len);
    if (rc)
        return rc;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int ocisbx_buf_appends(ocisbx_buf *b, const char *s)
{
    return ocisbx_buf_append(b, s, strlen(s));
}

int ocisbx_buf_vappendf(ocisbx_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return ocisbx_fail(OCISBX_EINVAL, "bad format string");
    int rc = ocisbx_buf_reserve(b, (size_t)n);
    if (rc)
        return rc;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int ocisbx_buf_appendf(ocisbx_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = ocisbx_buf_vappendf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void ocisbx_buf_clear(ocisbx_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

char *ocisbx_buf_detach(ocisbx_buf *b)
{
    char *p = b->data;
    if (!p)
        p = calloc(1, 1);
    ocisbx_buf_init(b);
    return p;
}

void ocisbx_buf_free(ocisbx_buf *b)
{
    free(b->data);
    ocisbx_buf_init(b);
}

void ocisbx_buf_wipe_free(ocisbx_buf *b)
{
    if (b->data)
        OPENSSL_cleanse(b->data, b->cap);
    ocisbx_buf_free(b);
}

void ocisbx_buf_redact(ocisbx_buf *b, const char *value)
{
    size_t vl = value ? strlen(value) : 0;
    if (!vl || !b->data)
        return;
    ocisbx_buf r = OCISBX_BUF_INIT;
    const char *p = b->data, *end = b->data + b->len;
    int rc = 0;
    bool hit_any = false;
    for (;;) {
        const char *hit = NULL;
        for (const char *q = p; q + vl <= end; q++)
            if (*q == value[0] && !memcmp(q, value, vl)) {
                hit = q;
                break;
            }
        if (!hit) {
            rc |= ocisbx_buf_append(&r, p, (size_t)(end - p));
            break;
        }
        hit_any = true;
        rc |= ocisbx_buf_append(&r, p, (size_t)(hit - p));
        rc |= ocisbx_buf_appends(&r, OCISBX_REDACTED);
        p = hit + vl;
    }
    if (!hit_any) {
        ocisbx_buf_free(&r);
        return;
    }
    ocisbx_wipe(b->data, b->len);
    ocisbx_buf_free(b);
    if (rc) {
        ocisbx_buf_free(&r);
        (void)ocisbx_buf_append(b, "", 0);
        return;
    }
    *b = r;
}

size_t ocisbx_redact_edge_prefix(const char *data, size_t len, const char *value, size_t min)
{
    size_t vl = value ? strlen(value) : 0;
    for (size_t k = vl ? vl - 1 : 0; k >= min && k > 0; k--)
        if (k <= len && !memcmp(data + len - k, value, k))
            return k;
    return 0;
}

size_t ocisbx_redact_edge_suffix(const char *data, size_t len, const char *value, size_t min)
{
    size_t vl = value ? strlen(value) : 0;
    for (size_t k = vl ? vl - 1 : 0; k >= min && k > 0; k--)
        if (k <= len && !memcmp(data, value + vl - k, k))
            return k;
    return 0;
}

int64_t ocisbx_mem_reader_read(void *buf, size_t cap, void *user_data)
{
    ocisbx_mem_reader *m = user_data;
    size_t k = m->len - m->at < cap ? m->len - m->at : cap;
    if (k)
        memcpy(buf, m->p + m->at, k);
    m->at += k;
    return (int64_t)k;
}

int ocisbx_mem_reader_rewind(void *user_data)
{
    ((ocisbx_mem_reader *)user_data)->at = 0;
    return 0;
}
