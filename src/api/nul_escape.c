/* NUL bytes in JSON strings. cJSON keeps strings NUL-terminated, so a
 * "\u0000" escape would cut the string short. Before parsing, each \u0000
 * escape inside a string becomes the escape of a noncharacter that appears
 * nowhere in the text (same length, so error offsets stay right); the model
 * maps that code point back to NUL with explicit lengths. */
#include <stdlib.h>
#include <string.h>

#include "api/model_internal.h"

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

cJSON *ocisbx_json_parse_nul(const char *text, size_t len, char sentinel[4], const char **error_at)
{
    sentinel[0] = '\0';
    if (error_at)
        *error_at = NULL;
    size_t *at = NULL;
    size_t count = find_nul_escapes(text, len, &at);
    if (count == (size_t)-1)
        return NULL;
    if (count == 0) {
        cJSON *j = cJSON_ParseWithLength(text, len);
        if (!j && error_at)
            *error_at = cJSON_GetErrorPtr();
        return j;
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
        cJSON *j = cJSON_ParseWithLength(text, len);
        if (!j && error_at)
            *error_at = cJSON_GetErrorPtr();
        return j;
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
    cJSON *j = cJSON_ParseWithLength(copy, len);
    if (!j && error_at) {
        const char *p = cJSON_GetErrorPtr();
        *error_at = p && p >= copy && p <= copy + len ? text + (p - copy) : NULL;
    }
    free(copy);
    if (j)
        utf8_3(cp, sentinel);
    return j;
}

/* The fields that are byte data (command output); a NUL anywhere else (an
 * id, a path, a name: "sbx-\u0000evil") would be cut short by every C
 * caller, so it is refused instead of silently read as "sbx-". */
static bool bytes_field(const char *name)
{
    static const char *const names[] = {"stdout", "stderr", "data", "output", NULL};
    for (size_t i = 0; name && names[i]; i++)
        if (!strcmp(name, names[i]))
            return true;
    return false;
}

static int add_nul(ocisbx_model *m, const cJSON *node, size_t *cap)
{
    const char *s = node->valuestring;
    const char *sen = m->sentinel;
    if (!strstr(s, sen))
        return 0;
    if (!bytes_field(node->string)) {
        char shown[64];
        ocisbx_escape_shown(node->string ? node->string : "(an array item)", shown, sizeof shown);
        return ocisbx_fail(OCISBX_EPARSE, "%s: field \"%s\" holds a NUL byte (\\u0000); only command output may",
                           m->def ? m->def->name : "answer", shown);
    }
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (!d)
        return ocisbx_fail_nomem();
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (i + 3 <= n && memcmp(s + i, sen, 3) == 0) {
            d[o++] = '\0';
            i += 3;
        } else {
            d[o++] = s[i++];
        }
    }
    d[o] = '\0';
    if (m->nnuls == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        ocisbx_nul_str *p = realloc(m->nuls, nc * sizeof *p);
        if (!p) {
            free(d);
            return ocisbx_fail_nomem();
        }
        m->nuls = p;
        *cap = nc;
    }
    m->nuls[m->nnuls].node = node;
    m->nuls[m->nnuls].data = d;
    m->nuls[m->nnuls].len = o;
    m->nnuls++;
    return 0;
}

static int walk(ocisbx_model *m, const cJSON *j, size_t *cap, int depth)
{
    if (depth > 64)
        return 0;
    for (const cJSON *e = j; e; e = e->next) {
        if (cJSON_IsString(e) && e->valuestring) {
            int rc = add_nul(m, e, cap);
            if (rc)
                return rc;
        } else if (cJSON_IsArray(e) || cJSON_IsObject(e)) {
            int rc = walk(m, e->child, cap, depth + 1);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int ocisbx_model_collect_nuls(ocisbx_model *m)
{
    if (!m->sentinel[0] || !m->json)
        return 0;
    size_t cap = 0;
    return walk(m, m->json, &cap, 0);
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
