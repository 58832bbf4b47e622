/* POSIX shell quoting: single quotes keep every byte literal except the
 * single quote itself, which is written as '\''. */
#include <stdlib.h>
#include <string.h>

#include "ocisbx/util.h"
#include "util/internal.h"

/* Bytes that never mean anything to a POSIX shell inside a word. '=' is left
 * out (an assignment in command position), '~' (tilde expansion) too. */
static bool is_plain(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.' || c == '/' || c == ',' || c == ':' || c == '@' || c == '%' || c == '+';
}

int ocisbx_shell_quote(const char *data, size_t len, char **out)
{
    if (!out || (!data && len))
        return ocisbx_fail(OCISBX_EINVAL, "shell quote: NULL argument");
    *out = NULL;
    bool plain = len > 0;
    size_t quotes = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c == '\0')
            return ocisbx_fail(OCISBX_EINVAL, "shell quote: NUL byte at offset %zu cannot pass through a shell", i);
        if (!is_plain(c))
            plain = false;
        if (c == '\'')
            quotes++;
    }
    if (plain) {
        *out = ocisbx_strndup(data, len);
        return *out ? 0 : ocisbx_fail_nomem();
    }
    if (quotes > (SIZE_MAX - len - 3) / 3)
        return ocisbx_fail(OCISBX_ETOOLARGE, "shell quote: input too large");
    size_t n = len + 3 * quotes + 2;
    char *s = malloc(n + 1);
    if (!s)
        return ocisbx_fail_nomem();
    size_t o = 0;
    s[o++] = '\'';
    for (size_t i = 0; i < len; i++) {
        if (data[i] == '\'') {
            memcpy(s + o, "'\\''", 4);
            o += 4;
        } else {
            s[o++] = data[i];
        }
    }
    s[o++] = '\'';
    s[o] = '\0';
    *out = s;
    return 0;
}

int ocisbx_buf_append_shell_quoted(ocisbx_buf *b, const char *s)
{
    if (!b || !s)
        return ocisbx_fail(OCISBX_EINVAL, "shell quote: NULL argument");
    char *t = NULL;
    int rc = ocisbx_shell_quote(s, strlen(s), &t);
    if (rc)
        return rc;
    rc = ocisbx_buf_appends(b, t);
    free(t);
    return rc;
}
