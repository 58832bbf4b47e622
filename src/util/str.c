#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "util/internal.h"

char *ocisbx_strdup(const char *s)
{
    return s ? ocisbx_strndup(s, strlen(s)) : NULL;
}

char *ocisbx_strndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    size_t len = strnlen(s, n);
    char *p = malloc(len + 1);
    if (!p)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *ocisbx_asprintf(const char *fmt, ...)
{
    ocisbx_buf b = OCISBX_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    int rc = ocisbx_buf_vappendf(&b, fmt, ap);
    va_end(ap);
    if (rc) {
        ocisbx_buf_free(&b);
        return NULL;
    }
    return ocisbx_buf_detach(&b);
}

static int lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

int ocisbx_strncasecmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int ca = lower((unsigned char)a[i]), cb = lower((unsigned char)b[i]);
        if (ca != cb || ca == 0)
            return ca - cb;
    }
    return 0;
}

int ocisbx_strcasecmp(const char *a, const char *b)
{
    return ocisbx_strncasecmp(a, b, SIZE_MAX);
}

void ocisbx_wipe(void *p, size_t n)
{
    if (p && n)
        OPENSSL_cleanse(p, n);
}

void ocisbx_free_secret(char *s)
{
    if (!s)
        return;
    OPENSSL_cleanse(s, strlen(s));
    free(s);
}

/* Everything the library hands out is freed here, secrets included (a
 * session-token keyId, a file's content), so it is always wiped first. */
void ocisbx_free(void *p)
{
    if (!p)
        return;
    OPENSSL_cleanse(p, malloc_usable_size(p));
    free(p);
}

void ocisbx_escape_shown(const char *in, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 5 < cap; p++) {
        if (*p < 0x20 || *p >= 0x7f || *p == '\\') {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        } else {
            out[o++] = (char)*p;
        }
    }
    if (cap)
        out[o < cap ? o : cap - 1] = '\0';
}

/* The length of the valid UTF-8 sequence at p (2..4), or 0: overlong forms,
 * surrogates, code points above U+10FFFF and the C1 controls (U+0080..U+009F,
 * which terminals obey too) do not count. */
static size_t utf8_printable_len(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0)
        return 0;
    unsigned cp = c & (0xff >> (n + 1));
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        cp = (cp << 6) | (p[i] & 0x3fu);
    }
    static const unsigned min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || cp <= 0x9f)
        return 0;
    return n;
}

const char *ocisbx_shown(const char *in, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    if (!in)
        in = "(null)";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 5 < cap;) {
        size_t n = *p >= 0x80 ? utf8_printable_len(p) : 0;
        if (n) {
            if (o + n + 1 > cap)
                break;
            memcpy(out + o, p, n);
            o += n;
            p += n;
        } else if (*p < 0x20 || *p >= 0x7f || *p == '\\') {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
            p++;
        } else {
            out[o++] = (char)*p++;
        }
    }
    if (cap)
        out[o < cap ? o : cap - 1] = '\0';
    return out;
}

void ocisbx_hex_colon(const unsigned char *in, size_t n, bool upper, char *out)
{
    const char *hex = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    if (n == 0)
        out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        out[i * 3] = hex[in[i] >> 4];
        out[i * 3 + 1] = hex[in[i] & 15];
        out[i * 3 + 2] = i + 1 < n ? ':' : '\0';
    }
}

int ocisbx_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
