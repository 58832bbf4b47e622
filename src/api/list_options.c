/* Query parameters of the list operations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/client_internal.h"

#define LIST_NAMES_MAX 12

struct ocisbx_list_options {
    char *names[LIST_NAMES_MAX];
    char *values[LIST_NAMES_MAX];
    size_t n;
    char limit[24];
};

int ocisbx_list_options_new(ocisbx_list_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "list options: out is NULL");
    *out = calloc(1, sizeof **out);
    return *out ? 0 : ocisbx_fail_nomem();
}

void ocisbx_list_options_free(ocisbx_list_options *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++) {
        free(o->names[i]);
        free(o->values[i]);
    }
    free(o);
}

int ocisbx_list_options_set(ocisbx_list_options *o, const char *name, const char *value)
{
    if (!o || !name || !name[0])
        return ocisbx_fail(OCISBX_EINVAL, "list options: a parameter needs a name");
    if (strcmp(name, "limit") == 0)
        return ocisbx_fail(OCISBX_EINVAL, "list options: use ocisbx_list_options_set_limit for limit");
    for (size_t i = 0; i < o->n; i++) {
        if (strcmp(o->names[i], name) != 0)
            continue;
        if (!value) {
            free(o->names[i]);
            free(o->values[i]);
            o->n--;
            o->names[i] = o->names[o->n];
            o->values[i] = o->values[o->n];
            return 0;
        }
        char *v = ocisbx_strdup(value);
        if (!v)
            return ocisbx_fail_nomem();
        free(o->values[i]);
        o->values[i] = v;
        return 0;
    }
    if (!value)
        return 0;
    if (o->n == LIST_NAMES_MAX)
        return ocisbx_fail(OCISBX_EINVAL, "list options: too many parameters");
    char *n = ocisbx_strdup(name), *v = ocisbx_strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return ocisbx_fail_nomem();
    }
    o->names[o->n] = n;
    o->values[o->n] = v;
    o->n++;
    return 0;
}

int ocisbx_list_options_set_limit(ocisbx_list_options *o, int limit)
{
    if (!o || limit < 0)
        return ocisbx_fail(OCISBX_EINVAL, "list options: limit %d is negative", limit);
    if (limit == 0)
        o->limit[0] = '\0';
    else
        snprintf(o->limit, sizeof o->limit, "%d", limit);
    return 0;
}

size_t ocisbx_list_options_params(const ocisbx_list_options *o, const char *page, ocisbx_param *params, size_t cap)
{
    size_t n = 0;
    if (o) {
        for (size_t i = 0; i < o->n && n < cap; i++) {
            if (page && strcmp(o->names[i], "page") == 0)
                continue;
            params[n++] = (ocisbx_param){o->names[i], o->values[i]};
        }
        if (o->limit[0] && n < cap)
            params[n++] = (ocisbx_param){"limit", o->limit};
    }
    if (page && n < cap)
        params[n++] = (ocisbx_param){"page", page};
    return n;
}

/* A copy for iterators, which outlive the caller's options. */

int ocisbx_list_options_copy(const ocisbx_list_options *o, ocisbx_list_options **out)
{
    int rc = ocisbx_list_options_new(out);
    if (rc || !o)
        return rc;
    for (size_t i = 0; i < o->n && !rc; i++)
        rc = ocisbx_list_options_set(*out, o->names[i], o->values[i]);
    memcpy((*out)->limit, o->limit, sizeof o->limit);
    if (rc) {
        ocisbx_list_options_free(*out);
        *out = NULL;
    }
    return rc;
}
