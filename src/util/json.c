/* The library's one JSON codec, on cJSON (see util/json.h): parsing that
 * keeps \u0000 escapes and may insist on one whole value, the integer test,
 * type names for messages, printing to a library string. The API's models
 * (ocisbx_client_call_json included) and the harness's tool arguments and
 * results all go through it. */
#include "util/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/internal.h"

/* cJSON's parse of len bytes; whole: nothing but white space may follow the
 * value. *error_at (may be NULL) gets where it failed. */
static cJSON *parse_at(const char *t, size_t len, bool whole, const char **error_at)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(t, len, &end, false);
    if (!j) {
        if (error_at)
            *error_at = cJSON_GetErrorPtr();
        return NULL;
    }
    if (whole && end) {
        const char *stop = t + len, *p = end;
        while (p < stop && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
            p++;
        if (p != stop) {
            cJSON_Delete(j);
            if (error_at)
                *error_at = p;
            return NULL;
        }
    }
    return j;
}

/* Noncharacters (never interchanged as text), tried in order. */
static const unsigned sentinels[] = {0xFDD0, 0xFDD1, 0xFDD2, 0xFDD3, 0xFDD4, 0xFDD5, 0xFDD6, 0xFDD7,
                                     0xFDD8, 0xFDD9, 0xFDDA, 0xFDDB, 0xFDDC, 0xFDDD, 0xFDDE, 0xFDDF,
                                     0xFDE0, 0xFDE1, 0xFDE2, 0xFDE3, 0xFDE4, 0xFDE5, 0xFDE6, 0xFDE7,
                                     0xFDE8, 0xFDE9, 0xFDEA, 0xFDEB, 0xFDEC, 0xFDED, 0xFDEE, 0xFDEF};

static bool has_bytes(const char *t, size_t n, const char *pat, size_t m)
{
    for (size_t i = 0; i + m <= n; i++)
        if (t[i] == pat[0] && memcmp(t + i, pat, m) == 0)
            return true;
    return false;
}

static bool has_escape(const char *t, size_t n, unsigned cp)
{
    static const char hex[] = "0123456789abcdef";
    char want[4] = {hex[(cp >> 12) & 15], hex[(cp >> 8) & 15], hex[(cp >> 4) & 15], hex[cp & 15]};
    for (size_t i = 0; i + 6 <= n; i++) {
        if (t[i] != '\\' || t[i + 1] != 'u')
            continue;
        size_t k = 0;
        while (k < 4 && (t[i + 2 + k] | 0x20) == want[k])
            k++;
        if (k == 4)
            return true; /* may be a false hit after "\\\\": only costs a candidate */
    }
    return false;
}

static void utf8_3(unsigned cp, char out[4])
{
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    out[3] = '\0';
}

/* Offsets of the \u0000 escapes that are inside strings; returns their count. */
static size_t find_nul_escapes(const char *t, size_t n, size_t **at)
{
    size_t count = 0, cap = 0;
    *at = NULL;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char ch = t[i];
        if (!in_str) {
            if (ch == '"')
                in_str = true;
            continue;
        }
        if (ch == '"') {
            in_str = false;
        } else if (ch == '\\' && i + 1 < n) {
            if (t[i + 1] == 'u' && i + 6 <= n && memcmp(t + i + 2, "0000", 4) == 0) {
                if (count == cap) {
                    size_t nc = cap ? cap * 2 : 8;
                    size_t *p = realloc(*at, nc * sizeof *p);
                    if (!p) {
                        free(*at);
                        *at = NULL;
                        return (size_t)-1;
                    }
                    *at = p;
                    cap = nc;
                }
                (*at)[count++] = i;
                i += 5;
            } else {
                i++; /* the escaped character (a quote or backslash among them) */
            }
        }
    }
    return count;
}

cJSON *ocisbx_json_parse_nul(const char *text, size_t len, bool whole, char sentinel[4], const char **error_at)
{
    sentinel[0] = '\0';
    if (error_at)
        *error_at = NULL;
    size_t *at = NULL;
    size_t count = find_nul_escapes(text, len, &at);
    if (count == (size_t)-1)
        return NULL;
    if (count == 0) {
        return parse_at(text, len, whole, error_at);
    }
    unsigned cp = 0;
    for (size_t k = 0; k < sizeof sentinels / sizeof sentinels[0] && !cp; k++) {
        char u[4];
        utf8_3(sentinels[k], u);
        if (!has_bytes(text, len, u, 3) && !has_escape(text, len, sentinels[k]))
            cp = sentinels[k];
    }
    if (!cp) { /* every candidate in use: hostile text; parse it as cJSON does */
        free(at);
        return parse_at(text, len, whole, error_at);
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        free(at);
        return NULL;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    static const char hex[] = "0123456789abcdef";
    for (size_t k = 0; k < count; k++) {
        char *e = copy + at[k] + 2;
        e[0] = hex[(cp >> 12) & 15];
        e[1] = hex[(cp >> 8) & 15];
        e[2] = hex[(cp >> 4) & 15];
        e[3] = hex[cp & 15];
    }
    free(at);
    const char *p = NULL;
    cJSON *j = parse_at(copy, len, whole, &p);
    if (!j && error_at)
        *error_at = p && p >= copy && p <= copy + len ? text + (p - copy) : NULL;
    free(copy);
    if (j)
        utf8_3(cp, sentinel);
    return j;
}

int ocisbx_json_unescape_sentinel(char **s, const char sentinel[4])
{
    if (!sentinel[0] || !*s || !strstr(*s, sentinel))
        return 0;
    size_t n = strlen(*s), count = 0;
    for (const char *p = *s; (p = strstr(p, sentinel)) != NULL; p += 3)
        count++;
    char *out = malloc(n + count * 3 + 1); /* 3 bytes become the 6 of \u0000 */
    if (!out)
        return ocisbx_fail_nomem();
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (i + 3 <= n && memcmp(*s + i, sentinel, 3) == 0) {
            memcpy(out + o, "\\u0000", 6);
            o += 6;
            i += 3;
        } else {
            out[o++] = (*s)[i++];
        }
    }
    out[o] = '\0';
    free(*s);
    *s = out;
    return 0;
}

bool ocisbx_json_int64(const cJSON *j, int64_t *out)
{
    if (!cJSON_IsNumber(j))
        return false;
    double d = j->valuedouble;
    /* 2^63 as a double: anything at or above does not fit */
    if (!isfinite(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
        return false;
    if ((double)(int64_t)d != d)
        return false; /* a fraction (no libm needed) */
    if (out)
        *out = (int64_t)d;
    return true;
}

const char *ocisbx_json_type_name(const cJSON *j)
{
    if (cJSON_IsString(j))
        return "a string";
    if (cJSON_IsNumber(j))
        return "a number";
    if (cJSON_IsBool(j))
        return "a boolean";
    if (cJSON_IsArray(j))
        return "an array";
    if (cJSON_IsObject(j))
        return "an object";
    if (cJSON_IsNull(j))
        return "null";
    return "nothing valid";
}

int ocisbx_json_print(const cJSON *j, char **out)
{
    *out = NULL;
    char *s = j ? cJSON_PrintUnformatted(j) : NULL;
    if (!s)
        return ocisbx_fail_nomem();
    *out = s; /* cJSON allocates with malloc (default hooks): ocisbx_free matches */
    return 0;
}
