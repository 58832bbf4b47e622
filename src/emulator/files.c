/* Files: PUT/GET /sandboxes/{id}/files?filePath=/workspace/...
 * The path is checked component by component so that neither ".." nor a
 * symlink (made by a command) can reach outside the workspace. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator/emu.h"

/* Splits /workspace/a/b into the relative "a/b"; NULL (with a 400) when the
 * path is not absolute under /workspace or has a ".." component. */
static char *relative_path(const char *fp, emu_response *resp)
{
    if (strncmp(fp, "/workspace", 10) != 0 || (fp[10] != '/' && fp[10] != 0)) {
        emu_error(resp, 400, "InvalidParameter", "filePath must be an absolute path under /workspace, not %s", fp);
        return NULL;
    }
    ocisbx_buf rel = OCISBX_BUF_INIT;
    const char *p = fp + 10;
    while (*p) {
        while (*p == '/')
            p++;
        const char *e = strchr(p, '/');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == 0)
            break;
        if (l == 2 && !memcmp(p, "..", 2)) {
            ocisbx_buf_free(&rel);
            emu_error(resp, 400, "InvalidParameter", "filePath must not contain '..': %s", fp);
            return NULL;
        }
        if (!(l == 1 && p[0] == '.')) {
            if (rel.len)
                ocisbx_buf_appends(&rel, "/");
            ocisbx_buf_append(&rel, p, l);
        }
        p += l;
    }
    if (!rel.len) {
        ocisbx_buf_free(&rel);
        emu_error(resp, 400, "InvalidParameter", "filePath names /workspace itself, not a file");
        return NULL;
    }
    return ocisbx_buf_detach(&rel);
}

/* true when path resolves inside root (both real paths). */
static bool inside(const char *root_real, const char *path)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return false;
    size_t n = strlen(root_real);
    return !strncmp(real, root_real, n) && (real[n] == 0 || real[n] == '/');
}

/* Every existing leading component of ws/rel must resolve inside the
 * workspace, whatever follows it: otherwise a 404 for a missing file behind
 * an escaping symlink next to a 400 for an existing one would let a client
 * probe the host. Returns false on an escape; *missing is set when some
 * component does not exist. */
static bool components_inside(const char *root_real, const char *ws, const char *rel, bool *missing)
{
    *missing = false;
    char *path = ocisbx_asprintf("%s/%s", ws, rel);
    if (!path)
        return false;
    size_t base = strlen(ws) + 1;
    bool ok = true;
    for (char *q = path + base;; q++) {
        if (*q != '/' && *q != 0)
            continue;
        char saved = *q;
        *q = 0;
        struct stat st;
        if (lstat(path, &st) != 0) {
            *missing = true;
            *q = saved;
            break;
        }
        if (!inside(root_real, path)) {
            ok = false;
            *q = saved;
            break;
        }
        *q = saved;
        if (!saved)
            break;
    }
    free(path);
    return ok;
}

static int escape_error(emu_response *resp, const char *fp)
{
    return emu_error(resp, 400, "InvalidParameter",
                     "filePath %s leads outside /workspace (through a symlink, or a dangling one)", fp);
}

static void do_write(emu_server *s, const emu_request *req, const char *ws, const char *root_real, const char *rel,
                     const char *fp, emu_sandbox *b, emu_response *resp)
{
    const char *claimed = emu_request_header(req, "opc-content-sha256");
    char sha[45];
    emu_sha256_b64(req->body ? req->body : "", req->body_len, sha);
    if (!claimed) {
        emu_error(resp, 400, "InvalidParameter", "the opc-content-sha256 header is required on a file write");
        return;
    }
    if (strcmp(claimed, sha) != 0) {
        emu_error(resp, 400, "InvalidParameter",
                  "opc-content-sha256 %s does not match the SHA-256 of the body (%s); nothing written", claimed, sha);
        return;
    }
    /* Create the parents one by one, checking each before going into it. */
    char *path = ocisbx_asprintf("%s/%s", ws, rel);
    if (!path) {
        emu_error(resp, 500, "InternalServerError", "out of memory");
        return;
    }
    size_t base = strlen(ws) + 1;
    for (char *q = path + base; *q; q++) {
        if (*q != '/')
            continue;
        *q = 0;
        struct stat st;
        if (lstat(path, &st) != 0) {
            if (mkdir(path, 0755) != 0) {
                emu_error(resp, 400, "InvalidParameter", "cannot create directory %s: %s", fp, strerror(errno));
                free(path);
                return;
            }
        } else if (!inside(root_real, path)) {
            *q = '/';
            escape_error(resp, fp);
            free(path);
            return;
        } else if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
            *q = '/';
            emu_error(resp, 400, "InvalidParameter", "a parent of %s is not a directory", fp);
            free(path);
            return;
        }
        *q = '/';
    }
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        emu_error(resp, 400, "InvalidParameter", "%s is a directory", fp);
        free(path);
        return;
    }
    /* A symlink in the final place is replaced by the rename, never followed. */
    if (emu_write_file_atomic(path, req->body ? req->body : "", req->body_len) != 0) {
        emu_error(resp, 500, "InternalServerError", "cannot write %s: %s", fp, strerror(errno));
        free(path);
        return;
    }
    free(path);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "sandboxId", b->id);
    cJSON_AddStringToObject(o, "filePath", fp);
    cJSON_AddStringToObject(o, "contentSha256", sha);
    emu_response_header(resp, "opc-content-sha256", sha);
    emu_json(resp, 200, o);
    (void)s;
}

static void do_read(const char *ws, const char *root_real, const char *rel, const char *fp, emu_response *resp)
{
    char *path = ocisbx_asprintf("%s/%s", ws, rel);
    struct stat st;
    if (!path) {
        emu_error(resp, 500, "InternalServerError", "out of memory");
        return;
    }
    bool missing = false;
    if (!components_inside(root_real, ws, rel, &missing)) {
        escape_error(resp, fp);
    } else if (missing || lstat(path, &st) != 0) {
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "file %s not found", fp);
    } else if (stat(path, &st) != 0) {
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "file %s not found", fp);
    } else if (!S_ISREG(st.st_mode)) {
        emu_error(resp, 400, "InvalidParameter", "%s is not a regular file", fp);
    } else {
        size_t len = 0;
        char *data = emu_read_file(path, &len);
        if (!data) {
            emu_error(resp, 500, "InternalServerError", "cannot read %s: %s", fp, strerror(errno));
        } else {
            char sha[45];
            emu_sha256_b64(data, len, sha);
            resp->status = 200;
            snprintf(resp->content_type, sizeof resp->content_type, "application/octet-stream");
            ocisbx_buf_clear(&resp->body);
            ocisbx_buf_append(&resp->body, data, len);
            emu_response_header(resp, "opc-content-sha256", sha);
            free(data);
        }
    }
    free(path);
}

void emu_h_file(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_sandbox *b = emu_sandbox_find(s, rt->sandbox_id);
    if (!b) {
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "sandbox %s not found or not authorized", rt->sandbox_id);
        return;
    }
    bool bad = false;
    char *fp = emu_query_get(req->query, "filePath", &bad);
    char *rel = NULL, *ws = NULL;
    char root_real[PATH_MAX];
    if (!fp) {
        emu_error(resp, 400, "InvalidParameter", "the filePath query parameter is required%s",
                  bad ? " (and must be percent-encoded correctly)" : "");
        goto out;
    }
    if (strcmp(b->state, "RUNNING")) {
        emu_error(resp, 409, "IncorrectState", "cannot access files of sandbox %s in state %s", b->id, b->state);
        goto out;
    }
    rel = relative_path(fp, resp);
    if (!rel)
        goto out;
    ws = emu_workspace_dir(s, b->id);
    if (!ws || !realpath(ws, root_real)) {
        emu_error(resp, 500, "InternalServerError", "the workspace of %s is missing", b->id);
        goto out;
    }
    if (rt->id == EMU_R_FILE_WRITE)
        do_write(s, req, ws, root_real, rel, fp, b, resp);
    else
        do_read(ws, root_real, rel, fp, resp);
out:
    free(fp);
    free(rel);
    free(ws);
}
