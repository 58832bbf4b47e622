/* What the layers above the backend (the harness) may know of it: its
 * output cap, redaction with its secrets, the workspace path rule. They
 * use these instead of the backend's internals (backend_int.h). */
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "backend/scripts.h"
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

/* "/workspace" and rel ("" for the root) as one absolute path. */
static char *absolute(const char *rel, size_t n)
{
    char *abs = malloc(sizeof "/workspace/" + n);
    if (!abs)
        return NULL;
    memcpy(abs, "/workspace", 10);
    abs[10] = 0;
    if (n) {
        abs[10] = '/';
        memcpy(abs + 11, rel, n);
        abs[11 + n] = 0;
    }
    return abs;
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
    char *abs = absolute(rel, strlen(rel));
    if (!abs) {
        free(rel);
        return ocisbx_fail_nomem();
    }
    free(rel);
    *out = abs;
    return 0;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* resolve.sh's hex back to bytes, in place; -1 for anything else (or a NUL). */
static int unhex(char *s, size_t len, size_t *out_len)
{
    if (len % 2)
        return -1;
    for (size_t i = 0; i < len; i += 2) {
        int hi = hex_digit(s[i]), lo = hex_digit(s[i + 1]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
            return -1;
        s[i / 2] = (char)(hi * 16 + lo);
    }
    *out_len = len / 2;
    s[*out_len] = 0;
    return 0;
}

/* The longest resolved path read back (hex: two bytes per byte). */
#define RESOLVED_MAX (2 * 65536)

int ocisbx_backend_resolve_path(ocisbx_backend *b, const char *path, char **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "resolve path: NULL out");
    *out = NULL;
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "resolve path: NULL backend");
    char *rel = NULL;
    int rc = ocisbx_backend_rel_path(path, &rel);
    if (rc)
        return rc;
    const char *args[] = {b->root, rel};
    char *hex = NULL;
    size_t len = 0, n = 0;
    int ex = 0;
    rc = ocisbx_backend_run_sh(b, ocisbx_script_resolve, args, 2, RESOLVED_MAX + 1, &hex, &len, &ex);
    free(rel);
    if (!rc && ex != 0)
        rc = ocisbx_fail(OCISBX_ESERVICE, "resolving %s in the workspace: the script exited %d", OCISBX_SHOWN(path),
                         ex);
    if (!rc && (len > RESOLVED_MAX || (len && (!hex || unhex(hex, len, &n) != 0))))
        rc = ocisbx_fail(OCISBX_ESERVICE, "resolving %s in the workspace: an answer that is not a path",
                         OCISBX_SHOWN(path));
    if (!rc && !(*out = absolute(hex ? hex : "", n)))
        rc = ocisbx_fail_nomem();
    free(hex);
    return rc;
}
