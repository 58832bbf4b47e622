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
