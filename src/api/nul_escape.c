/* NUL bytes in a model's strings: the parse (util/json.c) stood each
 * \u0000 escape in for a noncharacter; here the model maps that code point
 * back to NUL with explicit lengths, in the fields that are byte data. */
#include <stdlib.h>
#include <string.h>

#include "api/model_internal.h"

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
