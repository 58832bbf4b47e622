/* base64 (RFC 4648, strict), SHA-256 through OpenSSL EVP, lowercase hex. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ocisbx/util.h"
#include "util/internal.h"

static const char b64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int ocisbx_base64_encode(const void *data, size_t len, char **out)
{
    if (!out || (!data && len))
        return ocisbx_fail(OCISBX_EINVAL, "base64 encode: NULL argument");
    *out = NULL;
    if (len > (SIZE_MAX - 1) / 4 * 3)
        return ocisbx_fail(OCISBX_ETOOLARGE, "base64 encode: input of %zu bytes is too large", len);
    size_t n = (len + 2) / 3 * 4;
    char *s = malloc(n + 1);
    if (!s)
        return ocisbx_fail_nomem();
    const unsigned char *p = data;
    size_t o = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        s[o++] = b64_alphabet[v >> 18];
        s[o++] = b64_alphabet[(v >> 12) & 63];
        s[o++] = b64_alphabet[(v >> 6) & 63];
        s[o++] = b64_alphabet[v & 63];
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        s[o++] = b64_alphabet[v >> 18];
        s[o++] = b64_alphabet[(v >> 12) & 63];
        s[o++] = '=';
        s[o++] = '=';
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        s[o++] = b64_alphabet[v >> 18];
        s[o++] = b64_alphabet[(v >> 12) & 63];
        s[o++] = b64_alphabet[(v >> 6) & 63];
        s[o++] = '=';
    }
    s[o] = '\0';
    *out = s;
    return 0;
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int ocisbx_base64_decode(const char *text, size_t text_len, unsigned char **out, size_t *out_len)
{
    if (!out || !out_len || (!text && text_len))
        return ocisbx_fail(OCISBX_EINVAL, "base64 decode: NULL argument");
    *out = NULL;
    *out_len = 0;
    if (text_len % 4 != 0)
        return ocisbx_fail(OCISBX_EPARSE, "base64: length %zu is not a multiple of 4 (missing padding or truncated)",
                           text_len);
    size_t pad = 0;
    if (text_len >= 1 && text[text_len - 1] == '=')
        pad++;
    if (text_len >= 2 && text[text_len - 2] == '=')
        pad++;
    size_t n = text_len / 4 * 3 - pad;
    unsigned char *d = malloc(n + 1);
    if (!d)
        return ocisbx_fail_nomem();
    size_t o = 0;
    for (size_t i = 0; i < text_len; i += 4) {
        bool last = i + 4 == text_len;
        int v[4];
        for (size_t k = 0; k < 4; k++) {
            unsigned char c = (unsigned char)text[i + k];
            if (c == '=' && last && k >= 4 - pad) {
                v[k] = 0;
                continue;
            }
            v[k] = b64_value(c);
            if (v[k] < 0) {
                free(d);
                if (c == '=')
                    return ocisbx_fail(OCISBX_EPARSE, "base64: padding '=' at offset %zu before the end", i + k);
                if (c < 0x21 || c > 0x7e)
                    return ocisbx_fail(OCISBX_EPARSE, "base64: byte 0x%02x at offset %zu is not in the alphabet", c,
                                       i + k);
                return ocisbx_fail(OCISBX_EPARSE, "base64: character '%c' at offset %zu is not in the alphabet", c,
                                   i + k);
            }
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        size_t take = last ? 3 - pad : 3;
        /* Non-zero bits under the padding mean a non-canonical encoding. */
        if (last && ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))) {
            free(d);
            return ocisbx_fail(OCISBX_EPARSE, "base64: non-zero bits before the padding at offset %zu", i);
        }
        d[o++] = (unsigned char)(w >> 16);
        if (take > 1)
            d[o++] = (unsigned char)(w >> 8);
        if (take > 2)
            d[o++] = (unsigned char)w;
    }
    d[o] = '\0';
    *out = d;
    *out_len = o;
    return 0;
}

/* ---- SHA-256 ---- */

struct ocisbx_sha256_ctx {
    EVP_MD_CTX *md;
};

int ocisbx_sha256(const void *data, size_t len, unsigned char out[OCISBX_SHA256_LEN])
{
    if (!out || (!data && len))
        return ocisbx_fail(OCISBX_EINVAL, "sha256: NULL argument");
    unsigned int n = 0;
    if (EVP_Digest(len ? data : "", len, out, &n, EVP_sha256(), NULL) != 1 || n != OCISBX_SHA256_LEN)
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "sha256: OpenSSL EVP_Digest failed");
    return 0;
}

static void b64_digest(const unsigned char md[OCISBX_SHA256_LEN], char out[OCISBX_SHA256_B64_LEN + 1])
{
    /* EVP_EncodeBlock writes exactly 44 characters and a NUL for 32 bytes. */
    EVP_EncodeBlock((unsigned char *)out, md, OCISBX_SHA256_LEN);
}

int ocisbx_sha256_base64(const void *data, size_t len, char out[OCISBX_SHA256_B64_LEN + 1])
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "sha256: NULL output");
    unsigned char md[OCISBX_SHA256_LEN];
    int rc = ocisbx_sha256(data, len, md);
    if (rc)
        return rc;
    b64_digest(md, out);
    return 0;
}

int ocisbx_sha256_new(ocisbx_sha256_ctx **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "sha256: NULL output");
    *out = NULL;
    ocisbx_sha256_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return ocisbx_fail_nomem();
    c->md = EVP_MD_CTX_new();
    if (!c->md) {
        free(c);
        return ocisbx_fail_nomem();
    }
    if (EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
        ocisbx_sha256_free(c);
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "sha256: OpenSSL EVP_DigestInit_ex failed");
    }
    *out = c;
    return 0;
}

int ocisbx_sha256_update(ocisbx_sha256_ctx *c, const void *data, size_t len)
{
    if (!c || (!data && len))
        return ocisbx_fail(OCISBX_EINVAL, "sha256 update: NULL argument");
    if (len && EVP_DigestUpdate(c->md, data, len) != 1)
        return ocisbx_fail(OCISBX_EINVAL, "sha256 update: OpenSSL EVP_DigestUpdate failed (finished context?)");
    return 0;
}

int ocisbx_sha256_final(ocisbx_sha256_ctx *c, unsigned char out[OCISBX_SHA256_LEN])
{
    if (!c || !out)
        return ocisbx_fail(OCISBX_EINVAL, "sha256 final: NULL argument");
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(c->md, out, &n) != 1 || n != OCISBX_SHA256_LEN)
        return ocisbx_fail(OCISBX_EINVAL, "sha256 final: OpenSSL EVP_DigestFinal_ex failed (finished context?)");
    return 0;
}

int ocisbx_sha256_reset(ocisbx_sha256_ctx *c)
{
    if (!c)
        return ocisbx_fail(OCISBX_EINVAL, "sha256 reset: NULL context");
    if (EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1)
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "sha256 reset: OpenSSL EVP_DigestInit_ex failed");
    return 0;
}

void ocisbx_sha256_free(ocisbx_sha256_ctx *c)
{
    if (!c)
        return;
    EVP_MD_CTX_free(c->md);
    free(c);
}

int ocisbx_sha256_stream(ocisbx_read_fn src, void *user_data, char out_b64[OCISBX_SHA256_B64_LEN + 1],
                         uint64_t *total)
{
    if (!src || !out_b64)
        return ocisbx_fail(OCISBX_EINVAL, "sha256 stream: NULL argument");
    if (total)
        *total = 0;
    ocisbx_sha256_ctx *c;
    int rc = ocisbx_sha256_new(&c);
    if (rc)
        return rc;
    enum { CHUNK = 64 * 1024 };
    unsigned char *buf = malloc(CHUNK);
    if (!buf) {
        ocisbx_sha256_free(c);
        return ocisbx_fail_nomem();
    }
    uint64_t count = 0;
    ocisbx_error_clear(); /* so that a stale error is not taken for the source's */
    for (;;) {
        int64_t r = src(buf, CHUNK, user_data);
        if (r == 0)
            break;
        if (r < 0) {
            /* Keep the source's own message when it set one. */
            int code = r < INT32_MIN ? OCISBX_EIO : (int)r;
            if (ocisbx_error_code(ocisbx_error_last()) == code)
                rc = ocisbx_error_wrap("hashing a stream after %llu bytes: ", (unsigned long long)count);
            else
                rc = ocisbx_fail(code, "hashing a stream after %llu bytes: the source failed (%s)",
                                 (unsigned long long)count, ocisbx_strerror(code));
            goto done;
        }
        if ((uint64_t)r > CHUNK) {
            rc = ocisbx_fail(OCISBX_EINVAL, "hashing a stream: the source returned %lld bytes for a %d-byte buffer",
                             (long long)r, (int)CHUNK);
            goto done;
        }
        rc = ocisbx_sha256_update(c, buf, (size_t)r);
        if (rc)
            goto done;
        count += (uint64_t)r;
    }
    unsigned char md[OCISBX_SHA256_LEN];
    rc = ocisbx_sha256_final(c, md);
    if (rc == 0) {
        b64_digest(md, out_b64);
        if (total)
            *total = count;
    }
done:
    free(buf);
    ocisbx_sha256_free(c);
    return rc;
}

void ocisbx_hex(const unsigned char *data, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    if (!out)
        return;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[data[i] >> 4];
        out[2 * i + 1] = digits[data[i] & 15];
    }
    out[2 * len] = '\0';
}
