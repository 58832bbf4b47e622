/* Lists of environment variables (see env.h). */
#include "util/env.h"

#include <stdlib.h>

#include "util/internal.h"

bool ocisbx_env_name_ok(const char *name)
{
    if (!name || !*name)
        return false;
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || (p != name && c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

int ocisbx_env_list_add(ocisbx_env_list *l, const char *name, const char *value, bool secret)
{
    if (!name || !*name || !value)
        return ocisbx_fail(OCISBX_EINVAL, "environment variable: name and value needed");
    if (!ocisbx_env_name_ok(name))
        return ocisbx_fail(OCISBX_EINVAL, "environment variable name is not a shell name");
    ocisbx_backend_env *v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v)
        return ocisbx_fail_nomem();
    l->v = v;
    v[l->n].name = ocisbx_strdup(name);
    v[l->n].value = ocisbx_strdup(value);
    v[l->n].secret = secret;
    if (!v[l->n].name || !v[l->n].value) {
        free(v[l->n].name);
        ocisbx_free_secret(v[l->n].value);
        return ocisbx_fail_nomem();
    }
    l->n++;
    return 0;
}

void ocisbx_env_list_free(ocisbx_env_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        ocisbx_free_secret(l->v[i].value);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}
