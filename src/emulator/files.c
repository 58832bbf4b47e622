/* Files: PUT/GET /sandboxes/{id}/files?filePath=/workspace/...
 * The path is checked component by component (src/sys/walk.h) so that
 * neither ".." nor a symlink (made by a command) can reach outside the
 * workspace. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator/emu.h"
#include "ocisbx/util.h"
#include "sys/walk.h"

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

/* The path is resolved as the sandbox sees it by the library's confined
 * walk (src/sys/walk.h): a symlink made by a command is followed only as far
 * as it stays inside /workspace. Answers a failed walk call. */
static void walk_error(int rc, const char *fp, emu_response *resp)
{
    switch (rc) {
    case OCISBX_EFORBIDDEN:
        emu_error(resp, 400, "InvalidParameter",
                  "filePath %s leads outside /workspace (through a symlink, or a dangling one)", fp);
        break;
    case OCISBX_ENOTFOUND: emu_error(resp, 404, "NotAuthorizedOrNotFound", "file %s not found", fp); break;
    case OCISBX_ECONFLICT:
        emu_error(resp, 409, "Conflict", "file %s changed while it was accessed; retry", fp);
        break;
    case OCISBX_EINVAL:
        switch (ocisbx_walk_last_reason()) {
        case OCISBX_WALK_LOOP:
            emu_error(resp, 400, "InvalidParameter", "filePath %s has too many levels of symbolic links", fp);
            break;
        case OCISBX_WALK_ISDIR: emu_error(resp, 400, "InvalidParameter", "%s is a directory", fp); break;
        case OCISBX_WALK_NOTDIR:
            emu_error(resp, 400, "InvalidParameter", "%s: one of its parents is not a directory", fp);
            break;
        default: emu_error(resp, 400, "InvalidParameter", "%s is not a regular file", fp); break;
        }
        break;
    default:
        emu_error(resp, 500, "InternalServerError", "cannot access %s: %s", fp,
                  ocisbx_error_message(ocisbx_error_last()));
        break;
    }
}

static int write_all(int fd, const char *p, size_t left)
{
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    return 0;
}

/* The workspace limit of b's shape: false (with a 413 answered) when
 * writing len bytes to rel would take the workspace over it. Nothing is
 * created: the file it would replace is found without making parents. */
static bool within_limit(emu_server *s, const char *ws, int ws_fd, const char *rel, emu_sandbox *b, size_t len,
                         emu_response *resp)
{
    const struct emu_shape_limits *sl = emu_shape_limits(s->cfg, b->shape);
    if (!sl || sl->workspace_mib <= 0)
        return true;
    int64_t limit = sl->workspace_mib << 20;
    /* measured without the lock (a big workspace takes a while); b stays
     * (records are never freed while the emulator runs), its state may not */
    pthread_mutex_unlock(&s->mu);
    int64_t use = emu_tree_use(ws, EMU_WS_MAX_ENTRIES, NULL);
    pthread_mutex_lock(&s->mu);
    if (strcmp(b->state, "RUNNING")) {
        emu_error(resp, 409, "IncorrectState", "cannot access files of sandbox %s in state %s", b->id, b->state);
        return false;
    }
    if (use < 0)
        use = 0;
    int64_t need = ((int64_t)len + 4095) / 4096 * 4096; /* the blocks it takes */
    int64_t after = use + need;
    if (after > limit) { /* a file it replaces gives its blocks back */
        ocisbx_walk_root root = {ws_fd, "/workspace"};
        int dfd = -1;
        char *name = NULL;
        struct stat st;
        if (ocisbx_walk_parent(&root, rel, 0, &dfd, &name) == 0 &&
            fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            after -= (int64_t)st.st_blocks * 512;
        free(name);
        if (dfd >= 0)
            close(dfd);
    }
    if (after <= limit)
        return true;
    emu_error(resp, 413, "LimitExceeded",
              "writing %zu bytes would take the workspace over its %lld MiB limit (shape %s): "
              "%.1f MiB in use; nothing written",
              len, (long long)sl->workspace_mib, b->shape, (double)use / 1048576.0);
    return false;
}

static void do_write(emu_server *s, const emu_request *req, const char *ws, int ws_fd, const char *rel,
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
    if (!within_limit(s, ws, ws_fd, rel, b, req->body_len, resp))
        return;
    ocisbx_walk_root root = {ws_fd, "/workspace"};
    int dfd = -1;
    char *name = NULL;
    int rc = ocisbx_walk_parent(&root, rel, OCISBX_WALK_MKDIRS, &dfd, &name);
    if (rc) {
        walk_error(rc, fp, resp);
        return;
    }
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
        emu_error(resp, 400, "InvalidParameter", "%s is a directory", fp);
        goto out;
    }
    /* A temporary in the same directory, renamed over the name: a symlink in
     * the final place is replaced, never followed. */
    char tmp[64];
    emu_new_id(".tmp-", tmp, sizeof tmp);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    /* the sandbox user owns what the emulator writes into its workspace */
    int adopt = fd >= 0 ? ocisbx_walk_adopt(&root, dfd, tmp) : 0;
    if (fd < 0 || adopt != 0 || write_all(fd, req->body ? req->body : "", req->body_len) != 0 || close(fd) != 0 ||
        renameat(dfd, tmp, dfd, name) != 0) {
        const char *why = adopt ? ocisbx_error_message(ocisbx_error_last()) : strerror(errno);
        if (fd >= 0)
            unlinkat(dfd, tmp, 0);
        emu_error(resp, 500, "InternalServerError", "cannot write %s: %s", fp, why);
        goto out;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "sandboxId", b->id);
    cJSON_AddStringToObject(o, "filePath", fp);
    cJSON_AddStringToObject(o, "contentSha256", sha);
    emu_response_header(resp, "opc-content-sha256", sha);
    emu_json(resp, 200, o);
out:
    free(name);
    close(dfd);
}

/* Reads stream from the file (memory independent of its size):
 * opc-content-sha256 is a header, so the HTTP layer makes a first pass that
 * hashes the file, then sends it with a callback response; size, mtime and
 * inode taken at open must still hold after the hash and before the last
 * bytes are sent, else the connection is cut (the client sees a short
 * body, never a complete one that does not match the header). */
static bool same_file(const emu_file_body *fb)
{
    struct stat st;
    return fstat(fb->fd, &st) == 0 && (uint64_t)st.st_dev == fb->dev && (uint64_t)st.st_ino == fb->ino &&
           (int64_t)st.st_size == fb->size &&
           (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec == fb->mtime_ns;
}

int emu_file_hash(emu_file_body *fb, bool (*gone)(void *ud), void *ud)
{
    ocisbx_sha256_ctx *h = NULL;
    enum { CHUNK = 1 << 16 };
    char *chunk = malloc(CHUNK);
    int64_t done = 0;
    int rc = chunk && ocisbx_sha256_new(&h) == 0 ? 0 : -1;
    for (unsigned n = 0; !rc && done < fb->size; n++) {
        if (gone && n % 64 == 0 && gone(ud)) { /* every 4 MiB */
            rc = -1;
            break;
        }
        size_t want = fb->size - done < CHUNK ? (size_t)(fb->size - done) : CHUNK;
        ssize_t r = pread(fb->fd, chunk, want, (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = -1;
            break;
        }
        ocisbx_sha256_update(h, chunk, (size_t)r);
        done += r;
    }
    free(chunk);
    unsigned char digest[32];
    if (!rc && ocisbx_sha256_final(h, digest) != 0)
        rc = -1;
    ocisbx_sha256_free(h);
    if (!rc && !same_file(fb))
        rc = -1;
    char *b64 = NULL;
    if (!rc && ocisbx_base64_encode(digest, sizeof digest, &b64) == 0)
        snprintf(fb->sha, sizeof fb->sha, "%s", b64);
    else
        rc = -1;
    ocisbx_free(b64);
    return rc;
}

long emu_file_read_at(emu_file_body *fb, uint64_t pos, char *buf, size_t max)
{
    if ((int64_t)pos >= fb->size)
        return 0;
    size_t want = (uint64_t)fb->size - pos < max ? (size_t)((uint64_t)fb->size - pos) : max;
    ssize_t r;
    do
        r = pread(fb->fd, buf, want, (off_t)pos);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return -1; /* a read error, or the file got shorter */
    if ((int64_t)pos + r >= fb->size && !same_file(fb))
        return -1;
    return (long)r;
}

static void do_read(int ws_fd, const char *rel, const char *fp, emu_response *resp)
{
    ocisbx_walk_root root = {ws_fd, "/workspace"};
    int fd = -1;
    int rc = ocisbx_walk_open_read(&root, rel, &fd);
    if (rc) {
        walk_error(rc, fp, resp);
        return;
    }
    struct stat st;
    emu_file_body *fb = calloc(1, sizeof *fb);
    if (!fb || fstat(fd, &st) != 0) {
        emu_error(resp, 500, "InternalServerError", "cannot read %s: %s", fp, fb ? strerror(errno) : "out of memory");
        free(fb);
        close(fd);
        return;
    }
    fb->fd = fd;
    fb->size = (int64_t)st.st_size;
    fb->dev = (uint64_t)st.st_dev;
    fb->ino = (uint64_t)st.st_ino;
    fb->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    resp->status = 200;
    snprintf(resp->content_type, sizeof resp->content_type, "application/octet-stream");
    ocisbx_buf_clear(&resp->body);
    emu_file_body_free(resp->file);
    resp->file = fb;
}

static void file_op(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_sandbox *b = emu_h_sandbox_of(s, rt, resp);
    if (!b)
        return;
    bool bad = false;
    char *fp = emu_query_get(req->query, "filePath", &bad);
    char *rel = NULL, *ws = NULL, *norm = NULL;
    int ws_fd = -1;
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
    /* answers (and messages) name the normalised path */
    norm = ocisbx_asprintf("/workspace/%s", rel);
    ws = emu_workspace_dir(s, b->id);
    if (ws)
        ws_fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!norm || ws_fd < 0) {
        emu_error(resp, 500, "InternalServerError", "the workspace of %s is missing", b->id);
        goto out;
    }
    if (rt->id == EMU_R_FILE_WRITE)
        do_write(s, req, ws, ws_fd, rel, norm, b, resp);
    else
        do_read(ws_fd, rel, norm, resp);
out:
    if (ws_fd >= 0)
        close(ws_fd);
    free(fp);
    free(rel);
    free(ws);
    free(norm);
}

void emu_h_file_write(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    file_op(s, req, rt, resp);
}

void emu_h_file_read(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    file_op(s, req, rt, resp);
}
