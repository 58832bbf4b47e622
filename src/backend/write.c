/* Checked writes: up to one part, one put_file (the service checks its
 * SHA-256); above, parts to .ocisbx/write-<id>/p000000 ... each with its
 * SHA-256, then write-join.sh joins them, checks the whole file's SHA-256
 * and renames the result over the target in one command and one pass.
 *
 * The source is read once: each chunk is hashed into the part's and the
 * whole file's SHA-256 as it arrives, and a part is sent from where it was
 * read (the caller's memory, or one part buffer): no other copy. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend_int.h"
#include "backend/scripts.h"
#include "ocisbx/util.h"
#include "util/internal.h"

/* Hashing goes by chunks of this, while they are in the cache. */
#define HASH_CHUNK (256u * 1024)
/* The removal of the parts after a cancel or a failure, bounded by this. */
#define ABORT_CLEANUP_MS 10000

struct ocisbx_chunked_write {
    ocisbx_backend *b;
    char *rel;
    char id[17];
    ocisbx_sha256_ctx *whole, *part;
    const unsigned char *mem; /* a memory source: parts point into it */
    size_t mem_len, mem_at;
    ocisbx_read_fn read; /* else a reader */
    void *ud;
    int carry; /* a byte read past the last part (-1: none) */
    bool eof;
    int next_index;
    bool parts_put; /* something may be under .ocisbx/write-<id> */
    char hex[65];       /* the whole file's SHA-256, for the join */
    const char *args[4]; /* the join's or the abort's arguments */
};

int ocisbx_chunked_begin(ocisbx_backend *b, const char *rel, const void *mem, size_t mem_len, ocisbx_read_fn read,
                         void *ud, ocisbx_chunked_write **out)
{
    ocisbx_chunked_write *w = calloc(1, sizeof *w);
    if (!w)
        return ocisbx_fail_nomem();
    w->b = b;
    w->rel = ocisbx_strdup(rel);
    w->mem = mem;
    w->mem_len = mem_len;
    w->read = read;
    w->ud = ud;
    w->carry = -1;
    int rc = w->rel ? ocisbx_random_id(w->id, 16) : ocisbx_fail_nomem();
    if (!rc)
        rc = ocisbx_sha256_new(&w->whole);
    if (!rc)
        rc = ocisbx_sha256_new(&w->part);
    if (rc) {
        ocisbx_chunked_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void ocisbx_chunked_free(ocisbx_chunked_write *w)
{
    if (!w)
        return;
    ocisbx_sha256_free(w->whole);
    ocisbx_sha256_free(w->part);
    free(w->rel);
    free(w);
}

static int hash_both(ocisbx_chunked_write *w, const unsigned char *d, size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i += HASH_CHUNK) {
        size_t k = n - i < HASH_CHUNK ? n - i : HASH_CHUNK;
        rc = ocisbx_sha256_update(w->part, d + i, k);
        if (!rc)
            rc = ocisbx_sha256_update(w->whole, d + i, k);
    }
    return rc;
}

/* Reads into buf[*n..cap) until it is full or the source ends, hashing
 * what arrives. */
static int fill(ocisbx_chunked_write *w, unsigned char *buf, size_t cap, size_t *n)
{
    while (*n < cap && !w->eof) {
        int64_t r = w->read(buf + *n, cap - *n, w->ud);
        if (r < 0)
            return ocisbx_fail((int)r, "write: the source failed");
        if (r == 0)
            w->eof = true;
        int rc = hash_both(w, buf + *n, (size_t)r);
        if (rc)
            return rc;
        *n += (size_t)r;
    }
    return 0;
}

/* Whether a reader has more after a full part: one byte is read ahead. */
static int peek(ocisbx_chunked_write *w, bool *more)
{
    unsigned char c = 0;
    while (!w->eof && w->carry < 0) {
        int64_t r = w->read(&c, 1, w->ud);
        if (r < 0)
            return ocisbx_fail((int)r, "write: the source failed");
        if (r == 0)
            w->eof = true;
        else
            w->carry = c;
    }
    *more = w->carry >= 0;
    return 0;
}

int ocisbx_chunked_next(ocisbx_chunked_write *w, unsigned char *buf, ocisbx_part *p, bool *more)
{
    unsigned char h[OCISBX_SHA256_LEN];
    int rc = ocisbx_sha256_reset(w->part);
    memset(p, 0, sizeof *p);
    p->index = w->next_index++;
    if (!rc && w->mem) {
        size_t left = w->mem_len - w->mem_at;
        p->data = w->mem + w->mem_at;
        p->len = left < OCISBX_BACKEND_PART_SIZE ? left : OCISBX_BACKEND_PART_SIZE;
        rc = hash_both(w, p->data, p->len);
        w->mem_at += p->len;
        *more = w->mem_at < w->mem_len;
    } else if (!rc) {
        size_t n = 0;
        if (w->carry >= 0) {
            buf[n++] = (unsigned char)w->carry;
            w->carry = -1;
            rc = hash_both(w, buf, 1);
        }
        if (!rc)
            rc = fill(w, buf, OCISBX_BACKEND_PART_SIZE, &n);
        if (!rc)
            rc = peek(w, more);
        p->data = buf;
        p->len = n;
    }
    if (!rc)
        rc = ocisbx_sha256_final(w->part, h);
    char *b64 = NULL;
    if (!rc)
        rc = ocisbx_base64_encode(h, sizeof h, &b64);
    if (!rc)
        snprintf(p->sha256_b64, sizeof p->sha256_b64, "%s", b64);
    ocisbx_free(b64);
    return rc;
}

void ocisbx_chunked_part_rel(const ocisbx_chunked_write *w, int index, char *buf, size_t cap)
{
    snprintf(buf, cap, ".ocisbx/write-%s/p%06d", w->id, index);
}

void ocisbx_chunked_part_sent(ocisbx_chunked_write *w)
{
    w->parts_put = true;
}

int ocisbx_chunked_put(ocisbx_chunked_write *w, const ocisbx_part *p)
{
    char rel[64];
    ocisbx_chunked_part_rel(w, p->index, rel, sizeof rel);
    w->parts_put = true;
    return w->b->vt->put_file(w->b, rel, p->data, p->len, p->sha256_b64);
}

int ocisbx_chunked_join_req(ocisbx_chunked_write *w, ocisbx_run_req *req)
{
    unsigned char h[OCISBX_SHA256_LEN];
    int rc = ocisbx_sha256_final(w->whole, h);
    if (rc)
        return rc;
    ocisbx_hex(h, sizeof h, w->hex);
    w->args[0] = w->b->root;
    w->args[1] = w->rel;
    w->args[2] = w->id;
    w->args[3] = w->hex;
    ocisbx_backend_script_req(w->b, ocisbx_script_write_join, w->args, 4, NULL, req);
    return 0;
}

int ocisbx_chunked_join_result(ocisbx_chunked_write *w, int rc, int ex)
{
    if (rc)
        return ocisbx_error_wrap("write /workspace/%s: ", w->rel);
    w->parts_put = false; /* the script removed them, whatever it answers */
    if (ex == 21)
        return ocisbx_fail(OCISBX_EISDIR, "write: /workspace/%s is a directory", w->rel);
    if (ex == 10)
        return ocisbx_fail(OCISBX_EINTEGRITY, "write: the joined file's SHA-256 is not the data's (/workspace/%s)",
                           w->rel);
    if (ex != 0)
        return ocisbx_fail(OCISBX_EIO, "write: joining the parts of /workspace/%s failed (exit status %d)", w->rel,
                           ex);
    return 0;
}

int ocisbx_chunked_finish(ocisbx_chunked_write *w)
{
    ocisbx_run_req req;
    ocisbx_run_res res = {0};
    int ex = 0, rc = ocisbx_chunked_join_req(w, &req);
    if (!rc)
        rc = ocisbx_backend_script_result(w->b->vt->run(w->b, &req, &res), &res, &ex);
    free(res.command_id);
    free(res.stderr_text);
    return ocisbx_chunked_join_result(w, rc, ex);
}

bool ocisbx_chunked_abort_req(ocisbx_chunked_write *w, ocisbx_run_req *req)
{
    if (!w->parts_put)
        return false;
    memset(req, 0, sizeof *req);
    w->args[0] = w->b->root;
    w->args[1] = w->id;
    req->script = ocisbx_script_write_abort;
    req->args = w->args;
    req->n_args = 2;
    req->env[0] = &w->b->env;
    req->deadline_ms = ocisbx_time_monotonic_ms() + ABORT_CLEANUP_MS;
    req->backstop_s = ABORT_CLEANUP_MS / 1000;
    req->uncancelable = true;
    return true;
}

void ocisbx_chunked_abort_result(ocisbx_chunked_write *w, int rc, const ocisbx_run_res *res)
{
    if (rc || !res->has_exit || res->exit_code != 0)
        ocisbx_log(OCISBX_LOG_WARN,
                   "write: the parts under /workspace/.ocisbx/write-%s were not removed (%s); the "
                   "next chunked write removes them",
                   w->id, rc ? ocisbx_error_message(ocisbx_error_last()) : "exit status");
    w->parts_put = false;
}

/* The parts go also after a cancel: one bounded run (write-abort.sh) that
 * the backend's cancel callback (and the client's, held) does not stop; if
 * it fails, the next chunked write's sweep of stale parts removes them. */
void ocisbx_chunked_abort(ocisbx_chunked_write *w)
{
    ocisbx_run_req req;
    if (!ocisbx_chunked_abort_req(w, &req))
        return;
    ocisbx_error_saved *sv = ocisbx_error_save();
    ocisbx_run_res res = {0};
    int rc = w->b->vt->run(w->b, &req, &res);
    ocisbx_chunked_abort_result(w, rc, &res);
    free(res.command_id);
    free(res.stderr_text);
    ocisbx_error_restore(sv);
}

/* ---- parts in parallel: the feed of vt->put_parts ----
 * Parts are read in order, each into a free buffer (at most in_flight of
 * them, made as they are first needed; none for a memory source), and
 * given to the backend, which keeps in_flight going at once. */
typedef struct par_feed {
    ocisbx_chunked_write *w;
    unsigned char *bufs[OCISBX_BACKEND_MAX_PARALLEL_PARTS];
    bool busy[OCISBX_BACKEND_MAX_PARALLEL_PARTS];
    int k;
    ocisbx_part first; /* read before the mode was chosen */
    int first_buf;     /* its buffer (-1: memory) */
    bool have_first;
    bool more; /* the source has a part after the last one read */
} par_feed;

static int free_buffer(par_feed *f, int *slot)
{
    for (int i = 0; i < f->k; i++) {
        if (f->busy[i])
            continue;
        if (!f->bufs[i] && !(f->bufs[i] = malloc(OCISBX_BACKEND_PART_SIZE)))
            return ocisbx_fail_nomem();
        *slot = i;
        return 0;
    }
    return ocisbx_fail(OCISBX_EIO, "write: no free part buffer (more parts in flight than asked)");
}

static int par_next(void *ud, ocisbx_file_part *fp, bool *none)
{
    par_feed *f = ud;
    ocisbx_part p;
    int slot = -1, rc = 0;
    if (f->have_first) {
        p = f->first;
        slot = f->first_buf;
        f->have_first = false;
    } else if (!f->more) {
        *none = true;
        return 0;
    } else {
        if (!f->w->mem)
            rc = free_buffer(f, &slot);
        if (!rc)
            rc = ocisbx_chunked_next(f->w, slot >= 0 ? f->bufs[slot] : NULL, &p, &f->more);
        if (rc)
            return rc;
    }
    if (slot >= 0)
        f->busy[slot] = true;
    char rel[64];
    ocisbx_chunked_part_rel(f->w, p.index, rel, sizeof rel);
    snprintf(fp->path, sizeof fp->path, "%s/%s", f->w->b->root, rel);
    fp->data = p.data;
    fp->len = p.len;
    memcpy(fp->sha256_b64, p.sha256_b64, sizeof fp->sha256_b64);
    fp->tag = (void *)(intptr_t)(slot + 1);
    f->w->parts_put = true;
    return 0;
}

static void par_done(void *ud, void *tag, int rc, bool aborted)
{
    (void)rc;
    (void)aborted;
    par_feed *f = ud;
    intptr_t slot = (intptr_t)tag - 1;
    if (slot >= 0 && slot < f->k)
        f->busy[slot] = false;
}

/* first: the part read already (in buf, for a reader); more: whether
 * another follows. buf stays the caller's. */
static int put_parallel(ocisbx_chunked_write *w, const ocisbx_part *first, unsigned char *buf, bool more)
{
    par_feed f;
    memset(&f, 0, sizeof f);
    f.w = w;
    f.k = w->b->parallel_parts;
    f.first = *first;
    f.first_buf = buf ? 0 : -1;
    f.bufs[0] = buf;
    f.have_first = true;
    f.more = more;
    ocisbx_file_part_feed feed = {par_next, par_done, &f};
    int rc = w->b->vt->put_parts(w->b, f.k, &feed);
    for (int i = 1; i < f.k; i++)
        free(f.bufs[i]);
    return rc;
}

/* One part after the other, each read into buf once the one before is in. */
static int put_sequential(ocisbx_chunked_write *w, unsigned char *buf, ocisbx_part *p, bool more)
{
    for (;;) {
        int rc = ocisbx_chunked_put(w, p);
        if (!rc && ocisbx_backend_canceled(w->b))
            rc = ocisbx_fail(OCISBX_ECANCELED, "write: canceled");
        if (rc || !more)
            return rc;
        if ((rc = ocisbx_chunked_next(w, buf, p, &more)) != 0)
            return rc;
    }
}

/* Reads the source a part at a time: one part only: a direct checked put;
 * more: parts (several at once when the backend can), joined, checked,
 * renamed; a failure removes the parts. */
static int write_stream(ocisbx_backend *b, const char *path, const void *mem, size_t mem_len, ocisbx_read_fn read_fn,
                        void *ud)
{
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "backend: NULL");
    if (b->closed)
        return ocisbx_fail(OCISBX_ECONFLICT, "backend: closed");
    char *rel = NULL;
    int rc = ocisbx_backend_rel_path(path, &rel);
    if (rc)
        return rc;
    if (!*rel) {
        free(rel);
        return ocisbx_fail(OCISBX_EISDIR, "write: /workspace is a directory");
    }
    ocisbx_chunked_write *w = NULL;
    unsigned char *buf = mem ? NULL : malloc(OCISBX_BACKEND_PART_SIZE);
    rc = mem || buf ? ocisbx_chunked_begin(b, rel, mem, mem_len, read_fn, ud, &w) : ocisbx_fail_nomem();
    ocisbx_part p;
    bool more = false;
    if (!rc)
        rc = ocisbx_chunked_next(w, buf, &p, &more);
    if (!rc && !more) { /* small: one checked write */
        rc = b->vt->put_file(b, rel, p.data ? p.data : (const unsigned char *)"", p.len, p.sha256_b64);
        if (rc)
            rc = ocisbx_backend_refine_error(b, rel, rc, false);
    } else if (!rc) {
        bool parallel = b->parallel_parts > 1 && b->vt->put_parts;
        rc = parallel ? put_parallel(w, &p, buf, more) : put_sequential(w, buf, &p, more);
        if (!rc)
            rc = ocisbx_chunked_finish(w);
        if (rc)
            ocisbx_chunked_abort(w);
    }
    ocisbx_chunked_free(w);
    free(buf);
    free(rel);
    return rc;
}

int ocisbx_backend_write(ocisbx_backend *b, const char *path, const void *data, size_t len)
{
    if (!data && len)
        return ocisbx_fail(OCISBX_EINVAL, "write: NULL data");
    return write_stream(b, path, data ? data : "", len, NULL, NULL);
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
    int rc = write_stream(b, path, NULL, 0, fd_read, &fd);
    close(fd);
    return rc;
}

int ocisbx_backend_write_from_callback(ocisbx_backend *b, const char *path, ocisbx_read_fn read_fn, void *ud)
{
    if (!read_fn)
        return ocisbx_fail(OCISBX_EINVAL, "write: NULL source");
    return write_stream(b, path, NULL, 0, read_fn, ud);
}
