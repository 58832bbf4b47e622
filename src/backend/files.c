/* Files, written once on the primitives: exact reads, numbered text reads
 * (the window cut in the workspace), checked writes in parts (edits:
 * edit.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend_int.h"
#include "util/utf8.h"
#include "ocisbx/util.h"
#include "util/internal.h"

/* "W=<root>\n" */
static int script_start(ocisbx_backend *b, ocisbx_buf *s)
{
    int rc = ocisbx_buf_appends(s, "W=");
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(s, b->root);
    if (!rc)
        rc = ocisbx_buf_appends(s, "\n");
    return rc;
}

/* "<VAR>=\"$W\"/<rel>\n", then the check that it stays inside $W */
static int script_path(ocisbx_buf *s, const char *var, const char *rel)
{
    int rc = ocisbx_buf_appendf(s, "%s=\"$W\"/", var);
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(s, *rel ? rel : ".");
    if (!rc)
        rc = ocisbx_buf_appends(s, "\n");
    if (!rc)
        rc = ocisbx_backend_script_confine(s, var);
    return rc;
}

static int check_open(ocisbx_backend *b)
{
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "backend: NULL");
    if (b->closed)
        return ocisbx_fail(OCISBX_ECONFLICT, "backend: closed");
    return 0;
}

/* After a failed get: a directory is EISDIR on both backends. */
static int refine_error(ocisbx_backend *b, const char *rel, int rc, bool missing_too)
{
    if (rc == OCISBX_EISDIR || rc == OCISBX_ENOTFOUND || rc == OCISBX_ECANCELED || rc == OCISBX_EFORBIDDEN)
        return rc;
    ocisbx_error_saved *sv = ocisbx_error_save();
    ocisbx_buf s = OCISBX_BUF_INIT;
    int ex = -1;
    int r2 = script_start(b, &s);
    if (!r2)
        r2 = script_path(&s, "F", rel);
    if (!r2)
        r2 = ocisbx_buf_appends(&s, "[ -d \"$F\" ] && exit 21\n[ -e \"$F\" ] || exit 3\nexit 0\n");
    if (!r2)
        r2 = ocisbx_backend_run_script(b, s.data, 0, NULL, NULL, &ex);
    ocisbx_buf_free(&s);
    ocisbx_error_restore(sv);
    if (r2 == OCISBX_EFORBIDDEN)
        return ocisbx_fail(OCISBX_EFORBIDDEN, "/workspace/%s leads outside /workspace (through a symlink)", rel);
    if (!r2 && ex == 21)
        return ocisbx_fail(OCISBX_EISDIR, "read: /workspace/%s is a directory", rel);
    if (!r2 && ex == 3 && missing_too)
        return ocisbx_fail(OCISBX_ENOTFOUND, "read: /workspace/%s does not exist", rel);
    return rc;
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
        rc = refine_error(b, rel, rc, true);
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
            rc = ocisbx_buf_append(&o, w + i, keep);
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

int ocisbx_backend_read_text(ocisbx_backend *b, const char *path, int64_t offset, int64_t limit,
                             ocisbx_text_result **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "read_text: NULL out");
    *out = NULL;
    int rc = check_open(b);
    if (rc)
        return rc;
    if (offset < 0 || limit < 0)
        return ocisbx_fail(OCISBX_EINVAL, "read_text: negative offset or limit");
    if (offset == 0)
        offset = 1;
    if (limit == 0)
        limit = OCISBX_BACKEND_READ_LIMIT;
    char *rel = NULL;
    rc = ocisbx_backend_rel_path(path, &rel);
    if (rc)
        return rc;
    char id[17];
    ocisbx_random_id(id, 16);
    int64_t last = offset + limit - 1;
    ocisbx_buf s = OCISBX_BUF_INIT;
    char *meta = NULL, *srel = NULL, *wrel = NULL;
    ocisbx_buf sample = OCISBX_BUF_INIT, win = OCISBX_BUF_INIT;
    int ex = 0;
    ocisbx_text_result *r = calloc(1, sizeof *r);
    if (!r) {
        rc = ocisbx_fail_nomem();
        goto done;
    }
    rc = script_start(b, &s);
    if (!rc)
        rc = script_path(&s, "F", rel);
    if (!rc)
        rc = ocisbx_buf_appendf(&s,
                                "D=\"$W/.ocisbx/read-%s\"\n"
                                "[ -d \"$F\" ] && exit 21\n"
                                "[ -f \"$F\" ] || exit 3\n"
                                "mkdir -p \"$D\" || exit 125\n"
                                "head -c 8192 \"$F\" > \"$D/s\" || exit 125\n"
                                "LC_ALL=C sed -n '%" PRId64 ",%" PRId64 "p;%" PRId64
                                "q' \"$F\" | LC_ALL=C cut -b 1-%d > \"$D/w\"\n"
                                "S=$(wc -c < \"$F\")\n"
                                "SUM=$(sha256sum < \"$F\")\n"
                                "L=$(LC_ALL=C sed -n '$=' \"$F\")\n"
                                "printf 'OK %%s %%s %%s\\n' $((S + 0)) \"${SUM%%%% *}\" \"${L:-0}\"\n",
                                id, offset, last, last, OCISBX_BACKEND_LINE_MAX * 4 + 4);
    if (!rc)
        rc = ocisbx_backend_run_script(b, s.data, 4096, &meta, NULL, &ex);
    if (rc)
        goto done;
    if (ex == 21 || ex == 3) {
        rc = ocisbx_fail(ex == 21 ? OCISBX_EISDIR : OCISBX_ENOTFOUND, "read: /workspace/%s %s", rel,
                         ex == 21 ? "is a directory" : "does not exist or is not a regular file");
        goto done;
    }
    unsigned long long size = 0, lines = 0;
    char sum[65] = {0};
    if (ex != 0 || sscanf(meta, "OK %llu %64s %llu", &size, sum, &lines) != 3 || strlen(sum) != 64) {
        rc = ocisbx_fail(OCISBX_EIO, "read: the workspace script failed (exit status %d)", ex);
        goto cleanup;
    }
    r->size = size;
    r->total_lines = (int64_t)lines;
    r->first = offset;
    memcpy(r->sha, sum, 65);
    srel = ocisbx_asprintf(".ocisbx/read-%s/s", id);
    wrel = ocisbx_asprintf(".ocisbx/read-%s/w", id);
    if (!srel || !wrel) {
        rc = ocisbx_fail_nomem();
        goto cleanup;
    }
    rc = b->vt->get_file(b, srel, buf_sink, &sample);
    if (rc)
        goto cleanup;
    if (memchr(sample.data ? sample.data : "", '\0', sample.len) ||
        !(size > sample.len ? ocisbx_utf8_valid_sample : ocisbx_utf8_valid)(sample.data ? sample.data : "",
                                                                            sample.len)) {
        r->binary = true;
        rc = ocisbx_fail(OCISBX_EBINARY, "read: /workspace/%s is binary (%llu bytes, sha256 %s)", rel, size, sum);
        goto cleanup;
    }
    rc = b->vt->get_file(b, wrel, buf_sink, &win);
    if (!rc)
        rc = format_lines(win.data ? win.data : "", win.len, offset, r);
cleanup : {
    ocisbx_error_saved *sv = ocisbx_error_save();
    ocisbx_buf c = OCISBX_BUF_INIT;
    int cx = 0;
    if (script_start(b, &c) == 0 && ocisbx_buf_appendf(&c, "rm -rf \"$W/.ocisbx/read-%s\"\n", id) == 0)
        (void)ocisbx_backend_run_script(b, c.data, 0, NULL, NULL, &cx);
    ocisbx_buf_free(&c);
    ocisbx_error_restore(sv);
}
done:
    free(rel);
    free(meta);
    free(srel);
    free(wrel);
    ocisbx_buf_free(&s);
    ocisbx_buf_free(&sample);
    ocisbx_buf_free(&win);
    if (rc && !(rc == OCISBX_EBINARY && r)) {
        ocisbx_text_result_free(r);
        return rc;
    }
    *out = r;
    return rc;
}

/* ---- writes ---- */
typedef struct part_writer {
    ocisbx_backend *b;
    char *rel;
    char id[17];
    ocisbx_sha256_ctx *sha;
    int parts;
} part_writer;

static int put_part(ocisbx_backend *b, const char *rel, const void *d, size_t n)
{
    char b64[OCISBX_SHA256_B64_LEN + 1];
    int rc = ocisbx_sha256_base64(d, n, b64);
    if (!rc)
        rc = b->vt->put_file(b, rel, d, n, b64);
    return rc;
}

static void drop_parts(ocisbx_backend *b, const char *id)
{
    ocisbx_error_saved *sv = ocisbx_error_save();
    ocisbx_buf c = OCISBX_BUF_INIT;
    int cx = 0;
    if (script_start(b, &c) == 0 && ocisbx_buf_appendf(&c, "rm -rf \"$W/.ocisbx/write-%s\"\n", id) == 0)
        (void)ocisbx_backend_run_script(b, c.data, 0, NULL, NULL, &cx);
    ocisbx_buf_free(&c);
    ocisbx_error_restore(sv);
}

/* Reads the source a part at a time: one part only: a direct checked put;
 * more: parts to .ocisbx/write-<id>/, joined, checked, renamed. */
static int write_stream(ocisbx_backend *b, const char *path, ocisbx_read_fn read_fn, void *ud)
{
    int rc = check_open(b);
    if (rc)
        return rc;
    char *rel = NULL;
    rc = ocisbx_backend_rel_path(path, &rel);
    if (rc)
        return rc;
    if (!*rel) {
        free(rel);
        return ocisbx_fail(OCISBX_EISDIR, "write: /workspace is a directory");
    }
    size_t cap = OCISBX_BACKEND_PART_SIZE;
    char *buf = malloc(cap + 1);
    part_writer pw = {b, rel, {0}, NULL, 0};
    ocisbx_random_id(pw.id, 16);
    if (!buf) {
        free(rel);
        return ocisbx_fail_nomem();
    }
    rc = ocisbx_sha256_new(&pw.sha);
    bool more = true;
    while (!rc && more) {
        size_t n = 0;
        while (n < cap + (pw.parts == 0 ? 1 : 0)) {
            /* the first read looks one byte beyond a part to know whether
             * there is more than one */
            size_t want = (pw.parts == 0 ? cap + 1 : cap) - n;
            int64_t r = read_fn(buf + n, want, ud);
            if (r < 0) {
                rc = ocisbx_fail((int)r, "write: the source failed");
                break;
            }
            if (r == 0) {
                more = false;
                break;
            }
            n += (size_t)r;
        }
        if (rc)
            break;
        if (n == 0 && pw.parts > 0)
            break;
        if (pw.parts == 0 && !more && n <= cap) {
            rc = put_part(b, rel, buf, n); /* small: one checked write */
            if (rc)
                rc = refine_error(b, rel, rc, false);
            goto out;
        }
        char extra = 0;
        bool has_extra = false;
        if (pw.parts == 0 && n > cap) {
            extra = buf[cap];
            has_extra = true;
            n = cap;
        }
        char prel[96];
        snprintf(prel, sizeof prel, ".ocisbx/write-%s/p%06d", pw.id, pw.parts);
        rc = ocisbx_sha256_update(pw.sha, buf, n);
        if (!rc)
            rc = put_part(b, prel, buf, n);
        if (rc)
            break;
        pw.parts++;
        if (has_extra) {
            buf[0] = extra;
            /* continue filling after the carried byte */
            size_t m = 1;
            while (m < cap && more) {
                int64_t r = read_fn(buf + m, cap - m, ud);
                if (r < 0) {
                    rc = ocisbx_fail((int)r, "write: the source failed");
                    break;
                }
                if (r == 0) {
                    more = false;
                    break;
                }
                m += (size_t)r;
            }
            if (rc)
                break;
            snprintf(prel, sizeof prel, ".ocisbx/write-%s/p%06d", pw.id, pw.parts);
            rc = ocisbx_sha256_update(pw.sha, buf, m);
            if (!rc)
                rc = put_part(b, prel, buf, m);
            if (rc)
                break;
            pw.parts++;
        }
        if (ocisbx_backend_canceled(b))
            rc = ocisbx_fail(OCISBX_ECANCELED, "write: canceled");
    }
    if (!rc) {
        unsigned char h[OCISBX_SHA256_LEN];
        char hex[65];
        rc = ocisbx_sha256_final(pw.sha, h);
        ocisbx_hex(h, sizeof h, hex);
        const char *slash = strrchr(rel, '/');
        char *parent = slash ? ocisbx_strndup(rel, (size_t)(slash - rel)) : ocisbx_strdup(".");
        ocisbx_buf s = OCISBX_BUF_INIT;
        char *o = NULL;
        int ex = 0;
        if (!rc && !parent)
            rc = ocisbx_fail_nomem();
        if (!rc)
            rc = script_start(b, &s);
        if (!rc)
            rc = script_path(&s, "F", rel);
        if (!rc)
            rc = script_path(&s, "P", parent);
        if (!rc)
            rc = ocisbx_buf_appendf(&s,
                                    "D=\"$W/.ocisbx/write-%s\"\n"
                                    "[ -d \"$F\" ] && exit 21\n"
                                    "cat \"$D\"/p* > \"$D/joined\" || exit 5\n"
                                    "SUM=$(sha256sum < \"$D/joined\")\n"
                                    "[ \"${SUM%%%% *}\" = %s ] || exit 10\n"
                                    "mkdir -p \"$P\" || exit 5\n"
                                    "mv -f \"$D/joined\" \"$F\" || exit 5\n"
                                    "rm -rf \"$D\"\n"
                                    "exit 0\n",
                                    pw.id, hex);
        if (!rc)
            rc = ocisbx_backend_run_script(b, s.data, 1024, &o, NULL, &ex);
        if (!rc && ex == 21)
            rc = ocisbx_fail(OCISBX_EISDIR, "write: /workspace/%s is a directory", rel);
        else if (!rc && ex == 10)
            rc = ocisbx_fail(OCISBX_EINTEGRITY, "write: the joined file's SHA-256 is not the data's");
        else if (!rc && ex != 0)
            rc = ocisbx_fail(OCISBX_EIO, "write: joining the parts failed (exit status %d)", ex);
        free(o);
        free(parent);
        ocisbx_buf_free(&s);
    }
    if (rc && pw.parts > 0)
        drop_parts(b, pw.id);
out:
    ocisbx_sha256_free(pw.sha);
    free(buf);
    free(rel);
    return rc;
}

typedef struct mem_src {
    const char *p;
    size_t left;
} mem_src;

static int64_t mem_read(void *buf, size_t cap, void *ud)
{
    mem_src *m = ud;
    size_t n = m->left < cap ? m->left : cap;
    memcpy(buf, m->p, n);
    m->p += n;
    m->left -= n;
    return (int64_t)n;
}

int ocisbx_backend_write(ocisbx_backend *b, const char *path, const void *data, size_t len)
{
    if (!data && len)
        return ocisbx_fail(OCISBX_EINVAL, "write: NULL data");
    mem_src m = {data ? data : "", len};
    return write_stream(b, path, mem_read, &m);
}

static int64_t fd_read(void *buf, size_t cap, void *ud)
{
    int fd = *(int *)ud;
    for (;;) {
        ssize_t r = read(fd, buf, cap);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return OCISBX_EIO;
        return r;
    }
}

int ocisbx_backend_write_from_path(ocisbx_backend *b, const char *path, const char *local_path)
{
    if (!local_path)
        return ocisbx_fail(OCISBX_EINVAL, "write: NULL local path");
    int fd = open(local_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ocisbx_fail(errno == ENOENT ? OCISBX_ENOTFOUND : OCISBX_EIO, "write: cannot open %s: %s", local_path,
                           strerror(errno));
    int rc = write_stream(b, path, fd_read, &fd);
    close(fd);
    return rc;
}

int ocisbx_backend_write_from_callback(ocisbx_backend *b, const char *path, ocisbx_read_fn read_fn, void *ud)
{
    if (!read_fn)
        return ocisbx_fail(OCISBX_EINVAL, "write: NULL source");
    return write_stream(b, path, read_fn, ud);
}
