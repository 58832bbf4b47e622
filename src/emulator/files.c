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

/* ---- resolving a path as the sandbox sees it --------------------------------
 * The sandbox's file system is modelled as a root whose only child is
 * "workspace" (the host directory ws). The walk goes component by component
 * with openat(O_NOFOLLOW) on each directory it enters, so a symlink swapped in
 * during the request is never followed by the kernel: every symlink is read
 * with readlinkat and its target walked here, an absolute target from the
 * model root. Any name at the model root other than "workspace" is outside:
 * 400, decided without touching the host, so nothing outside can be probed. */
#define WALK_MAX_DEPTH 256
#define WALK_MAX_LINKS 40

typedef struct walk {
    int fds[WALK_MAX_DEPTH]; /* fds[0]: the workspace; depth -1: the model root */
    int depth;
} walk;

enum { WALK_OK = 0, WALK_OUTSIDE, WALK_MISSING, WALK_NOTDIR, WALK_LOOP, WALK_ERROR };

static void walk_pop_to(walk *w, int depth)
{
    while (w->depth > depth) {
        if (w->depth > 0)
            close(w->fds[w->depth]);
        w->depth--;
    }
}

/* Prepends the components of text to the pending list (a stack of strings,
 * consumed from the end). */
static int push_components(char ***stack, size_t *n, size_t *cap, const char *text)
{
    size_t len = strlen(text);
    /* components in reverse order so that the first is on top */
    const char *end = text + len;
    while (end > text) {
        const char *b = end;
        while (b > text && b[-1] != '/')
            b--;
        if (end > b) {
            if (*n == *cap) {
                size_t nc = *cap ? *cap * 2 : 16;
                char **ns = realloc(*stack, nc * sizeof *ns);
                if (!ns)
                    return -1;
                *stack = ns;
                *cap = nc;
            }
            char *c = strndup(b, (size_t)(end - b));
            if (!c)
                return -1;
            (*stack)[(*n)++] = c;
        }
        end = b > text ? b - 1 : b;
    }
    return 0;
}

/* Walks rel (relative to /workspace) and leaves w at the directory holding the
 * last component, whose name goes to *last (malloc'd). Symlinks in directory
 * places are followed as the sandbox would; a symlink as the last component is
 * followed when follow_last (reads), else left to the caller (a write replaces
 * it). create: missing directories are made (mkdirat, then opened O_NOFOLLOW). */
static int walk_path(int ws_fd, const char *rel, bool follow_last, bool create, walk *w, char **last)
{
    char **stack = NULL;
    size_t n = 0, cap = 0;
    int links = 0, rc = WALK_OK;
    w->fds[0] = ws_fd;
    w->depth = 0;
    *last = NULL;
    if (push_components(&stack, &n, &cap, rel) != 0) {
        rc = WALK_ERROR;
        goto out;
    }
    while (n > 0) {
        char *name = stack[--n];
        bool is_last = n == 0;
        if (!strcmp(name, ".")) {
            free(name);
            if (is_last) {
                rc = WALK_NOTDIR; /* names a directory, not a file */
                goto out;
            }
            continue;
        }
        if (!strcmp(name, "..")) {
            free(name);
            walk_pop_to(w, w->depth - 1 < -1 ? -1 : w->depth - 1);
            if (is_last) {
                rc = WALK_NOTDIR;
                goto out;
            }
            continue;
        }
        if (w->depth < 0) {
            bool ws = !strcmp(name, "workspace");
            free(name);
            if (!ws) {
                rc = WALK_OUTSIDE;
                goto out;
            }
            if (is_last) {
                rc = WALK_NOTDIR;
                goto out;
            }
            w->depth = 0;
            continue;
        }
        int dfd = w->fds[w->depth];
        struct stat st;
        bool exists = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (exists && S_ISLNK(st.st_mode) && (!is_last || follow_last)) {
            char target[PATH_MAX];
            ssize_t tl = readlinkat(dfd, name, target, sizeof target - 1);
            free(name);
            if (tl <= 0 || ++links > WALK_MAX_LINKS) {
                rc = tl <= 0 ? WALK_ERROR : WALK_LOOP;
                goto out;
            }
            target[tl] = 0;
            if (target[0] == '/')
                walk_pop_to(w, -1);
            if (push_components(&stack, &n, &cap, target) != 0) {
                rc = WALK_ERROR;
                goto out;
            }
            if (n == 0) { /* a link to "/" */
                rc = WALK_OUTSIDE;
                goto out;
            }
            continue;
        }
        if (is_last) {
            *last = name;
            goto out;
        }
        if (!exists && create && mkdirat(dfd, name, 0755) != 0 && errno != EEXIST) {
            free(name);
            rc = WALK_ERROR;
            goto out;
        }
        if (!exists && !create) {
            free(name);
            rc = WALK_MISSING;
            goto out;
        }
        if (w->depth + 1 >= WALK_MAX_DEPTH) {
            free(name);
            rc = WALK_LOOP;
            goto out;
        }
        /* O_NOFOLLOW: a symlink swapped in since fstatat fails here (ELOOP). */
        int nfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        free(name);
        if (nfd < 0) {
            rc = errno == ENOENT ? WALK_MISSING : errno == ENOTDIR ? WALK_NOTDIR : WALK_ERROR;
            goto out;
        }
        w->fds[++w->depth] = nfd;
    }
    rc = WALK_NOTDIR; /* ended on a directory (e.g. a link to one) */
out:
    while (n > 0)
        free(stack[--n]);
    free(stack);
    if (rc == WALK_OK && w->depth < 0)
        rc = WALK_OUTSIDE;
    return rc;
}

/* Answers a failed walk; true when it did. */
static bool walk_error(int rc, const char *fp, emu_response *resp)
{
    switch (rc) {
    case WALK_OK:
        return false;
    case WALK_OUTSIDE:
        emu_error(resp, 400, "InvalidParameter",
                  "filePath %s leads outside /workspace (through a symlink, or a dangling one)", fp);
        break;
    case WALK_MISSING:
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "file %s not found", fp);
        break;
    case WALK_NOTDIR:
        emu_error(resp, 400, "InvalidParameter", "%s or one of its parents is not what it should be "
                                                 "(a directory where a file is wanted, or the reverse)", fp);
        break;
    case WALK_LOOP:
        emu_error(resp, 400, "InvalidParameter", "filePath %s has too many levels of symbolic links", fp);
        break;
    default:
        emu_error(resp, 500, "InternalServerError", "cannot resolve %s: %s", fp, strerror(errno));
        break;
    }
    return true;
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

static void do_write(const emu_request *req, int ws_fd, const char *rel, const char *fp, emu_sandbox *b,
                     emu_response *resp)
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
    walk w;
    char *name = NULL;
    int rc = walk_path(ws_fd, rel, false, true, &w, &name);
    if (walk_error(rc, fp, resp)) {
        walk_pop_to(&w, 0);
        return;
    }
    int dfd = w.fds[w.depth];
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
    if (fd < 0 || write_all(fd, req->body ? req->body : "", req->body_len) != 0 || close(fd) != 0 ||
        renameat(dfd, tmp, dfd, name) != 0) {
        int e = errno;
        if (fd >= 0)
            unlinkat(dfd, tmp, 0);
        emu_error(resp, 500, "InternalServerError", "cannot write %s: %s", fp, strerror(e));
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
    walk_pop_to(&w, 0);
}

static void do_read(int ws_fd, const char *rel, const char *fp, emu_response *resp)
{
    walk w;
    char *name = NULL;
    int rc = walk_path(ws_fd, rel, true, false, &w, &name);
    if (walk_error(rc, fp, resp)) {
        walk_pop_to(&w, 0);
        return;
    }
    int fd = openat(w.fds[w.depth], name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    ocisbx_buf data = OCISBX_BUF_INIT;
    if (fd < 0) {
        if (errno == ENOENT)
            emu_error(resp, 404, "NotAuthorizedOrNotFound", "file %s not found", fp);
        else if (errno == ELOOP) /* became a symlink since the walk */
            emu_error(resp, 409, "Conflict", "file %s changed while it was read; retry", fp);
        else
            emu_error(resp, 400, "InvalidParameter", "cannot open %s: %s", fp, strerror(errno));
        goto out;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        emu_error(resp, 400, "InvalidParameter", "%s is not a regular file", fp);
        goto out;
    }
    char chunk[65536];
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            emu_error(resp, 500, "InternalServerError", "cannot read %s: %s", fp, strerror(errno));
            goto out;
        }
        if (r == 0)
            break;
        ocisbx_buf_append(&data, chunk, (size_t)r);
    }
    char sha[45];
    emu_sha256_b64(data.data ? data.data : "", data.len, sha);
    resp->status = 200;
    snprintf(resp->content_type, sizeof resp->content_type, "application/octet-stream");
    ocisbx_buf_clear(&resp->body);
    ocisbx_buf_append(&resp->body, data.data ? data.data : "", data.len);
    emu_response_header(resp, "opc-content-sha256", sha);
out:
    if (fd >= 0)
        close(fd);
    ocisbx_buf_free(&data);
    free(name);
    walk_pop_to(&w, 0);
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
        do_write(req, ws_fd, rel, norm, b, resp);
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
