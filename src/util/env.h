/* Lists of environment variables (name, value, secret), shared by the
 * backend's options and the harness's (library-internal). */
#ifndef OCISBX_UTIL_ENV_H
#define OCISBX_UTIL_ENV_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ocisbx_backend_env {
    char *name;
    char *value;
    bool secret;
} ocisbx_backend_env;

typedef struct ocisbx_env_list {
    ocisbx_backend_env *v;
    size_t n;
} ocisbx_env_list;

/* 1 for a shell name: letters, digits, _, not starting with a digit. */
bool ocisbx_env_name_ok(const char *name);
/* Appends a copy; the name must be a shell name (letters, digits, _; not
 * starting with a digit): OCISBX_EINVAL otherwise. */
int ocisbx_env_list_add(ocisbx_env_list *l, const char *name, const char *value, bool secret);
/* Frees the entries (values wiped) and empties the list. */
void ocisbx_env_list_free(ocisbx_env_list *l);

#endif
