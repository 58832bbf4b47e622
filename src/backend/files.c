/* Files, written once on the primitives: exact reads and numbered text
 * reads (the window cut in the workspace by read-window.sh). Writes:
 * write.c; edits: edit.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend_int.h"
#include "backend/scripts.h"
#include "util/utf8.h"
#include "ocisbx/util.h"
#include "util/internal.h"

static int check_open(ocisbx_backend *b)
{
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "backend: NULL");
    if (b->closed)
        return ocisbx_fail(OCISBX_ECONFLICT, "backend: closed");
    return 0;
}

bool ocisbx_backend_refine_wanted(int rc)
{
    return !(rc == OCISBX_EISDIR || rc == OCISBX_ENOTFOUND || rc == OCISBX_ECANCELED || rc == OCISBX_EFORBIDDEN);
}

void ocisbx_backend_path_stat_req(ocisbx_backend *b, const char *rel, const char *args[2], ocisbx_run_req *req)
{
    args[0] = b->root;
    args[1] = *rel ? rel : ".";
    ocisbx_backend_script_req(b, ocisbx_script_path_stat, args, 2, NULL, req);
}

int ocisbx_backend_refine_map(const char *rel, int rc, int stat_rc, int ex, bool missing_too)
{
    if (stat_rc == OCISBX_EFORBIDDEN)
        return ocisbx_fail(OCISBX_EFORBIDDEN, "/workspace/%s leads outside /workspace (through a symlink)", rel);
    if (!stat_rc && ex == 21)
        return ocisbx_fail(OCISBX_EISDIR, "read: /workspace/%s is a directory", rel);
    if (!stat_rc && ex == 3 && missing_too)
        return ocisbx_fail(OCISBX_ENOTFOUND, "read: /workspace/%s does not exist", rel);
    return rc;
}

/* After a failed get: a directory is EISDIR on both backends. */
int ocisbx_backend_refine_error(ocisbx_backend *b, const char *rel, int rc, bool missing_too)
{
    if (!ocisbx_backend_refine_wanted(rc))
        return rc;
    ocisbx_error_saved *sv = ocisbx_error_save();
    const char *args[2];
    ocisbx_run_req req;
    ocisbx_run_res res = {0};
    ocisbx_backend_path_stat_req(b, rel, args, &req);
    int ex = -1;
    int r2 = ocisbx_backend_script_result(b->vt->run(b, &req, &res), &res, &ex);
    free(res.command_id);
    free(res.stderr_text);
    ocisbx_error_restore(sv);
    return ocisbx_backend_refine_map(rel, rc, r2, ex, missing_too);
}

int ocisbx_backend_read_to_callback(ocisbx_backend *b, const char *path, ocisbx_write_fn write_fn, void *ud)
{
    int rc = check_open(b);
    if (rc)
        return rc;
    if (!write_fn)
        return ocisbx_fail(OCISBX_EINVAL, "read: NULL sink");
    char *rel = NULL;
    rc = ocisbx_backend_rel_path(path, &rel);
    if (rc)
        return rc;
    if (!*rel)
        rc = ocisbx_fail(OCISBX_EISDIR, "read: /workspace is a directory");
    else
        rc = b->vt->get_file(b, rel, write_fn, ud);
    if (rc)
        rc = ocisbx_backend_refine_error(b, rel, rc, true);
    free(rel);
    return rc;
}

static int buf_sink(const void *d, size_t n, void *ud)
{
    return ocisbx_buf_append(ud, d, n) != 0;
}

int ocisbx_backend_read_bytes(ocisbx_backend *b, const char *path, unsigned char **data, size_t *len)
{
    if (!data || !len)
        return ocisbx_fail(OCISBX_EINVAL, "read: NULL out");
    *data = NULL;
    *len = 0;
    ocisbx_buf buf = OCISBX_BUF_INIT;
    int rc = ocisbx_backend_read_to_callback(b, path, buf_sink, &buf);
    if (rc) {
        ocisbx_buf_free(&buf);
        return rc;
    }
    *len = buf.len;
    *data = (unsigned char *)ocisbx_buf_detach(&buf);
    return *data ? 0 : ocisbx_fail_nomem();
}

static int fd_sink(const void *d, size_t n, void *ud)
{
    int fd = *(int *)ud;
    const char *p = d;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int ocisbx_backend_read_to_path(ocisbx_backend *b, const char *path, const char *local_path)
{
    if (!local_path)
        return ocisbx_fail(OCISBX_EINVAL, "read: NULL local path");
    char *tmp = ocisbx_asprintf("%s.ocisbx-tmp-%d", local_path, (int)getpid());
    if (!tmp)
        return ocisbx_fail_nomem();
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int rc = ocisbx_fail(OCISBX_EIO, "read: cannot create %s: %s", tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    int rc = ocisbx_backend_read_to_callback(b, path, fd_sink, &fd);
    if (close(fd) != 0 && !rc)
        rc = ocisbx_fail(OCISBX_EIO, "read: close: %s", strerror(errno));
    if (!rc && rename(tmp, local_path) != 0)
        rc = ocisbx_fail(OCISBX_EIO, "read: rename to %s: %s", local_path, strerror(errno));
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* ---- text ---- */
struct ocisbx_text_result {
    char *text;
    int64_t total_lines, first, count;
    uint64_t size;
    char sha[65];
    bool binary;
};

void ocisbx_text_result_free(ocisbx_text_result *r)
{
    if (!r)
        return;
    free(r->text);
    free(r);
}
const char *ocisbx_text_result_text(const ocisbx_text_result *r)
{
    return r ? r->text : NULL;
}
int64_t ocisbx_text_result_total_lines(const ocisbx_text_result *r)
{
    return r ? r->total_lines : 0;
}
int64_t ocisbx_text_result_first_line(const ocisbx_text_result *r)
{
    return r ? r->first : 0;
}
int64_t ocisbx_text_result_line_count(const ocisbx_text_result *r)
{
    return r ? r->count : 0;
}
uint64_t ocisbx_text_result_size(const ocisbx_text_result *r)
{
    return r ? r->size : 0;
}
const char *ocisbx_text_result_sha256(const ocisbx_text_result *r)
{
    return r ? r->sha : NULL;
}
int ocisbx_text_result_is_binary(const ocisbx_text_result *r)
{
    return r && r->binary;
}

static size_t utf8_chars_prefix(const char *s, size_t len, size_t chars)
{
    /* byte length of the first `chars` characters (continuation bytes do not count) */
    size_t i = 0, c = 0;
    while (i < len) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (c == chars)
                return i;
            c++;
        }
        i++;
    }
    return len;
}

/* Appends n bytes of a line; a NUL byte (one past the binary check's
 * sample) becomes U+FFFD, since the text is a C string a NUL would cut. */
static int append_line(ocisbx_buf *o, const char *s, size_t n)
{
    const char *z;
    int rc = 0;
    while (!rc && n && (z = memchr(s, '\0', n)) != NULL) {
        size_t k = (size_t)(z - s);
        rc = ocisbx_buf_append(o, s, k);
        if (!rc)
            rc = ocisbx_buf_appends(o, "\xef\xbf\xbd");
        s += k + 1;
        n -= k + 1;
    }
    return rc ? rc : ocisbx_buf_append(o, s, n);
}

static int format_lines(const char *w, size_t wl, int64_t first, ocisbx_text_result *r)
{
    ocisbx_buf o = OCISBX_BUF_INIT;
    int64_t n = first;
    size_t i = 0;
    int rc = 0;
    while (i < wl && !rc) {
        const char *e = memchr(w + i, '\n', wl - i);
        size_t ll = e ? (size_t)(e - (w + i)) : wl - i;
        size_t keep = utf8_chars_prefix(w + i, ll, OCISBX_BACKEND_LINE_MAX);
        rc = ocisbx_buf_appendf(&o, "%6" PRId64 "\t", n);
        if (!rc)
            rc = append_line(&o, w + i, keep);
        if (!rc && keep < ll)
            rc = ocisbx_buf_appendf(&o, " [... line cut at %d characters]", OCISBX_BACKEND_LINE_MAX);
        if (!rc)
            rc = ocisbx_buf_appends(&o, "\n");
        n++;
        i += ll + (e ? 1 : 0);
    }
    if (rc) {
        ocisbx_buf_free(&o);
        return rc;
    }
    r->count = n - first;
    r->text = ocisbx_buf_detach(&o);
    return r->text ? 0 : ocisbx_fail_nomem();
}

/* Parses read-window.sh's output: the header, the sample, the window. */
static int parse_window(const char *rel, const char *out, size_t len, int64_t offset, ocisbx_text_result *r)
{
    unsigned long long size = 0, lines = 0, n = 0;
    char sum[65] = {0};
    const char *nl = memchr(out, '\n', len);
    if (!nl || sscanf(out, "OK %llu %64s %llu %llu", &size, sum, &lines, &n) != 4 || strlen(sum) != 64 ||
        n > len - (size_t)(nl + 1 - out))
        return ocisbx_fail(OCISBX_EIO, "read: the workspace script gave no result for /workspace/%s", rel);
    r->size = size;
    r->total_lines = (int64_t)lines;
    r->first = offset;
    memcpy(r->sha, sum, 65);
    const char *sample = nl + 1, *win = sample + n;
    if (memchr(sample, '\0', (size_t)n) ||
        !(size > n ? ocisbx_utf8_valid_sample : ocisbx_utf8_valid)(sample, (size_t)n)) {
        r->binary = true;
        return ocisbx_fail(OCISBX_EBINARY, "read: /workspace/%s is binary (%llu bytes, sha256 %s)", rel, size, sum);
    }
    return format_lines(win, len - (size_t)(win - out), offset, r);
}

int ocisbx_read_window_req(ocisbx_backend *b, const char *rel, int64_t offset, int64_t limit, ocisbx_window *w,
                           ocisbx_run_req *req)
{
    if (offset < 0 || limit < 0)
        return ocisbx_fail(OCISBX_EINVAL, "read_text: negative offset or limit");
    w->offset = offset ? offset : 1;
    limit = limit ? limit : OCISBX_BACKEND_READ_LIMIT;
    snprintf(w->first, sizeof w->first, "%" PRId64, w->offset);
    snprintf(w->last, sizeof w->last, "%" PRId64, w->offset + limit - 1);
    snprintf(w->cut, sizeof w->cut, "%d", OCISBX_BACKEND_LINE_MAX * 4 + 4);
    w->args[0] = b->root;
    w->args[1] = *rel ? rel : ".";
    w->args[2] = w->first;
    w->args[3] = w->last;
    w->args[4] = w->cut;
    if (req)
        ocisbx_backend_script_req(b, ocisbx_script_read_window, w->args, 5, NULL, req);
    return 0;
}

int ocisbx_read_window_result(const ocisbx_window *w, const char *rel, int rc, int ex, const char *res, size_t rl,
                              ocisbx_text_result **out)
{
    *out = NULL;
    if (!rc && (ex == 21 || ex == 3))
        rc = ocisbx_fail(ex == 21 ? OCISBX_EISDIR : OCISBX_ENOTFOUND, "read: /workspace/%s %s", rel,
                         ex == 21 ? "is a directory" : "does not exist or is not a regular file");
    else if (!rc && ex != 0)
        rc = ocisbx_fail(OCISBX_EIO, "read: the workspace script failed (exit status %d)", ex);
    else if (rc)
        ocisbx_error_wrap("read /workspace/%s: ", rel);
    if (rc)
        return rc;
    ocisbx_text_result *r = calloc(1, sizeof *r);
    rc = r ? parse_window(rel, res ? res : "", rl, w->offset, r) : ocisbx_fail_nomem();
    if (rc && !(rc == OCISBX_EBINARY && r)) {
        ocisbx_text_result_free(r);
        return rc;
    }
    *out = r;
    return rc;
}

int ocisbx_backend_read_text(ocisbx_backend *b, const char *path, int64_t offset, int64_t limit,
                             ocisbx_text_result **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "read_text: NULL out");
    *out = NULL;
    int rc = check_open(b);
    if (rc)
        return rc;
    char *rel = NULL, *res = NULL;
    ocisbx_window w;
    rc = ocisbx_read_window_req(b, "", offset, limit, &w, NULL); /* the arguments checked first */
    if (!rc)
        rc = ocisbx_backend_rel_path(path, &rel);
    if (rc)
        return rc;
    (void)ocisbx_read_window_req(b, rel, offset, limit, &w, NULL);
    size_t rl = 0;
    int ex = 0;
    rc = ocisbx_backend_run_sh_capture(b, ocisbx_script_read_window, w.args, 5, &res, &rl, &ex);
    rc = ocisbx_read_window_result(&w, rel, rc, ex, res, rl, out);
    free(rel);
    free(res);
    return rc;
}
