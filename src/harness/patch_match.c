/* The apply_patch matcher (see patch.h): an Update's hunks located in a
 * file's lines (exactly, else ignoring trailing white space, else ignoring
 * the white space around each line) and the new content built. Pure: text
 * in, text out. */
#include "harness/patch.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocisbx/common.h"
#include "util/internal.h"
#include "util/utf8.h"

/* One line of the file: its bytes up to the newline (full), and what is
 * matched (len: without the CR of a CRLF file). */
typedef struct fline {
    const char *s;
    size_t len, full;
    bool nl; /* it ended with a newline (all but maybe the last) */
} fline;

typedef struct flines {
    fline *v;
    size_t n;
    bool crlf; /* most lines end with CRLF: added lines do too */
} flines;

/* A located hunk: the file's lines [start, start + m) are replaced. */
typedef struct rep {
    const patch_hunk *h;
    size_t start, m;
    bool drop_last; /* the hunk's last line (a blank context line) was not matched */
} rep;

static int split_file(const char *d, size_t n, flines *f, patch_error *err)
{
    size_t count = 0, crlf = 0;
    for (size_t i = 0; i < n; i++)
        if (d[i] == '\n') {
            count++;
            crlf += i > 0 && d[i - 1] == '\r';
        }
    bool tail = n && d[n - 1] != '\n'; /* a last line without a newline */
    f->crlf = crlf && crlf * 2 >= count;
    f->n = 0;
    f->v = calloc(count + tail + 1, sizeof *f->v);
    if (!f->v)
        return patch_error_nomem(err);
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (d[i] != '\n' && i + 1 < n)
            continue;
        size_t end = d[i] == '\n' ? i : n;
        fline *l = &f->v[f->n++];
        l->s = d + start;
        l->full = l->len = end - start;
        l->nl = end < n;
        if (f->crlf && l->len && l->s[l->len - 1] == '\r')
            l->len--;
        start = i + 1;
    }
    return 0;
}

static bool ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* a == b under pass 0 (exact), 1 (trailing white space ignored), 2 (white
 * space around ignored). */
static bool line_eq(const char *a, size_t al, const char *b, size_t bl, int pass)
{
    if (pass >= 1) {
        while (al && ws(a[al - 1]))
            al--;
        while (bl && ws(b[bl - 1]))
            bl--;
    }
    if (pass == 2) {
        while (al && ws(*a))
            a++, al--;
        while (bl && ws(*b))
            b++, bl--;
    }
    return al == bl && !memcmp(a, b, al);
}

static bool match_at(const flines *f, size_t at, const patch_line *const *pat, size_t m, int pass)
{
    for (size_t k = 0; k < m; k++)
        if (!line_eq(f->v[at + k].s, f->v[at + k].len, pat[k]->text, pat[k]->len, pass))
            return false;
    return true;
}

/* The first index >= from where the m pattern lines occur (with eof: only
 * at the end of the file), trying each pass over the whole range before
 * the next; -1 when none. */
static int64_t seek(const flines *f, size_t from, const patch_line *const *pat, size_t m, bool eof)
{
    if (m > f->n || from > f->n - m)
        return -1;
    size_t lo = eof ? f->n - m : from, hi = f->n - m;
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = lo; i <= hi; i++)
            if (match_at(f, i, pat, m, pass))
                return (int64_t)i;
    return -1;
}

/* Up to three of the hunk's lines, as the patch has them, for a message. */
static void hunk_head(const patch_hunk *h, char *out, size_t cap)
{
    size_t used = 0, shown = 0;
    out[0] = 0;
    for (size_t k = 0; k < h->n_ctx + h->n && shown < 3; k++, shown++) {
        const patch_line *l = k < h->n_ctx ? &h->ctx[k] : &h->lines[k - h->n_ctx];
        char text[100], esc[200];
        size_t n = l->len < 80 ? l->len : 80;
        memcpy(text, l->text, n);
        text[n] = 0;
        ocisbx_escape_shown(text, esc, sizeof esc);
        int w = snprintf(out + used, cap - used, "\n  %s%s%s", l->kind == '@' ? "@@ " : (char[2]){l->kind, 0}, esc,
                         l->len > 80 ? "..." : "");
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
}

static int no_match(patch_error *err, const char *shown, const patch_hunk *h, const char *what)
{
    char head[600];
    hunk_head(h, head, sizeof head);
    return patch_error_set(err, "no_match", OCISBX_ENOMATCH, h->no,
                "%s: the hunk at line %zu of the patch does not match the file (%s); read the file again and copy "
                "the context and '-' lines exactly. The hunk's first lines:%s",
                shown, h->no, what, head);
}

/* Locates one hunk after *cursor; *r gets where. */
static int locate(const flines *f, const patch_hunk *h, size_t *cursor, const char *shown, rep *r, patch_error *err)
{
    for (size_t c = 0; c < h->n_ctx; c++) {
        const patch_line *p = &h->ctx[c];
        int64_t at = seek(f, *cursor, &p, 1, false);
        if (at < 0) {
            char text[100], esc[200], what[300];
            size_t n = p->len < 80 ? p->len : 80;
            memcpy(text, p->text, n);
            text[n] = 0;
            ocisbx_escape_shown(text, esc, sizeof esc);
            snprintf(what, sizeof what, "its context line '@@ %s' (line %zu) is not in the file after line %zu", esc,
                     p->no, *cursor);
            return no_match(err, shown, h, what);
        }
        *cursor = (size_t)at + 1;
    }
    const patch_line **old = malloc((h->n + 1) * sizeof *old);
    if (!old)
        return patch_error_nomem(err);
    size_t m = 0;
    for (size_t k = 0; k < h->n; k++)
        if (h->lines[k].kind != '+')
            old[m++] = &h->lines[k];
    memset(r, 0, sizeof *r);
    r->h = h;
    int64_t at = m ? seek(f, *cursor, old, m, h->eof) : -1;
    const patch_line *last = &h->lines[h->n - 1];
    if (m && at < 0 && last->kind == ' ' && !last->len) {
        /* a blank line closing the hunk is often a separator, not a line */
        r->drop_last = true;
        m--;
        at = m ? seek(f, *cursor, old, m, h->eof) : -1;
    }
    free(old);
    if (!m) /* only added lines: after the context line, else at the end */
        at = (int64_t)(h->n_ctx && !h->eof ? *cursor : f->n);
    if (at < 0)
        return no_match(err, shown, h,
                        h->eof ? "its lines are not the last lines of the file, as '*** End of File' says"
                               : "its context and '-' lines are not in the file, in this order, after the previous hunk");
    r->start = (size_t)at;
    r->m = m;
    if (m || h->n_ctx) /* an addition at the end leaves the next hunk's search where it was */
        *cursor = r->start + m;
    return 0;
}

static int emit_line(ocisbx_buf *b, const char *s, size_t n, bool crlf)
{
    int rc = ocisbx_buf_append(b, s, n);
    return rc ? rc : ocisbx_buf_appends(b, crlf ? "\r\n" : "\n");
}

/* A line of the file as it was (its CR kept); a last line without a
 * newline gets the file's line end. */
static int emit_orig(ocisbx_buf *b, const flines *f, size_t i)
{
    return emit_line(b, f->v[i].s, f->v[i].full, !f->v[i].nl && f->crlf);
}

/* The new content: the file's lines, each located hunk's in place. */
static int build(const flines *f, const rep *reps, size_t n_reps, ocisbx_buf *out)
{
    size_t pos = 0;
    int rc = 0;
    for (size_t r = 0; !rc && r <= n_reps; r++) {
        size_t upto = r < n_reps ? reps[r].start : f->n;
        for (; !rc && pos < upto; pos++)
            rc = emit_orig(out, f, pos);
        if (r == n_reps || rc)
            break;
        const patch_hunk *h = reps[r].h;
        size_t j = reps[r].start, n = h->n - reps[r].drop_last;
        for (size_t k = 0; !rc && k < n; k++) {
            const patch_line *l = &h->lines[k];
            if (l->kind == '+')
                rc = emit_line(out, l->text, l->len, f->crlf);
            else if (l->kind == ' ')
                rc = emit_orig(out, f, j), j++;
            else
                j++;
        }
        pos = reps[r].start + reps[r].m;
    }
    if (!rc && !out->data)
        rc = ocisbx_buf_append(out, "", 0);
    return rc;
}

/* Located hunks in file order (each is sought after the one before, so
 * only an addition at the end of the file comes out of order; stable:
 * additions at one place keep the patch's order). */
static void order(rep *reps, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        rep x = reps[i];
        size_t j = i;
        for (; j > 0 && reps[j - 1].start > x.start; j--)
            reps[j] = reps[j - 1];
        reps[j] = x;
    }
}

int patch_apply_hunks(const patch_op *op, const char *shown, const char *old, size_t old_len, char **out,
                      size_t *out_len, patch_error *err)
{
    *out = NULL;
    *out_len = 0;
    if (memchr(old, 0, old_len) || !ocisbx_utf8_valid(old, old_len))
        return patch_error_set(err, "binary_file", OCISBX_EBINARY, op->no,
                    "%s is not a text file (a NUL byte or invalid UTF-8): a patch cannot change it; write it whole",
                    shown);
    flines f = {0};
    rep *reps = calloc(op->n_hunks + 1, sizeof *reps);
    int rc = reps ? split_file(old, old_len, &f, err) : patch_error_nomem(err);
    size_t cursor = 0;
    for (size_t k = 0; !rc && k < op->n_hunks; k++)
        rc = locate(&f, &op->hunks[k], &cursor, shown, &reps[k], err);
    if (!rc)
        order(reps, op->n_hunks);
    ocisbx_buf b = OCISBX_BUF_INIT;
    if (!rc && build(&f, reps, op->n_hunks, &b))
        rc = patch_error_nomem(err);
    free(f.v);
    free(reps);
    if (rc) {
        ocisbx_buf_free(&b);
        return rc;
    }
    *out_len = b.len;
    *out = ocisbx_buf_detach(&b);
    return 0;
}
