/* What the layers above the backend (the harness) may know of it: its
 * output cap, redaction with its secrets, the workspace path rule. They
 * use these instead of the backend's internals (backend_int.h). */
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "util/internal.h"

size_t ocisbx_backend_max_output_bytes(const ocisbx_backend *b)
{
    return b ? b->max_output : OCISBX_BACKEND_DEFAULT_MAX_OUTPUT;
}

int ocisbx_backend_redact(const ocisbx_backend *b, const char *text, size_t len, char **out, size_t *out_len)
{
    if (out_len)
        *out_len = 0;
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "backend redact: NULL out");
    *out = NULL;
    if (!text && len)
        return ocisbx_fail(OCISBX_EINVAL, "backend redact: NULL text");
    ocisbx_buf r = OCISBX_BUF_INIT;
    if (ocisbx_buf_reserve(&r, len + 1) || ocisbx_buf_append(&r, text ? text : "", len)) {
        ocisbx_buf_wipe_free(&r);
        return ocisbx_fail_nomem();
    }
    for (size_t i = 0; b && i < b->env.n; i++)
        if (b->env.v[i].secret)
            ocisbx_buf_redact(&r, b->env.v[i].value);
    if (!r.data) { /* a failed redaction drops the buffer rather than keep the secret */
        ocisbx_buf_wipe_free(&r);
        return ocisbx_fail_nomem();
    }
    if (out_len)
        *out_len = r.len;
    *out = ocisbx_buf_detach(&r);
    return 0;
}

int ocisbx_backend_workspace_path(const char *path, char **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "workspace path: NULL out");
    *out = NULL;
    char *rel = NULL;
    int rc = ocisbx_backend_rel_path(path, &rel);
    if (rc)
        return rc;
    size_t n = strlen(rel);
    char *abs = malloc(sizeof "/workspace/" + n);
    if (!abs) {
        free(rel);
        return ocisbx_fail_nomem();
    }
    memcpy(abs, "/workspace", 10);
    if (n) {
        abs[10] = '/';
        memcpy(abs + 11, rel, n + 1);
    } else {
        abs[10] = 0;
    }
    free(rel);
    *out = abs;
    return 0;
}
