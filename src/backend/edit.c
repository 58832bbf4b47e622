/* Edits: several replacements of one file applied in memory in order, all
 * or nothing, then one checked write; the diff of the change comes back.
 * The file's size is asked first (path-stat.sh), so a file above the limit
 * is refused before a byte of it is read. */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "backend/scripts.h"
#include "ocisbx/util.h"
#include "util/diff.h"
#include "util/internal.h"

typedef struct one_edit {
    char *old_text, *new_text;
    bool all;
} one_edit;

struct ocisbx_edit_options {
    one_edit *v;
    size_t n;
    bool dry_run;
    char *expected;
    size_t max_diff;
    uint64_t max_file;
};

struct ocisbx_edit_result {
    size_t n;
    size_t *counts;
    bool *crlf;
    int64_t failed;
    char *diff;
    size_t diff_len;
    uint64_t dropped, size;
    bool dry_run;
    bool single; /* ocisbx_backend_edit: messages say "edit", not "edits[i]" */
    char before[65], after[65];
};

/* ---- options ---- */
int ocisbx_edit_options_new(ocisbx_edit_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "edit options: NULL out");
    *out = calloc(1, sizeof **out);
    if (!*out)
        return ocisbx_fail_nomem();
    (*out)->max_diff = OCISBX_BACKEND_DEFAULT_MAX_DIFF_BYTES;
    (*out)->max_file = OCISBX_BACKEND_DEFAULT_MAX_EDIT_BYTES;
    return 0;
}

void ocisbx_edit_options_free(ocisbx_edit_options *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++) {
        free(o->v[i].old_text);
        free(o->v[i].new_text);
    }
    free(o->v);
    free(o->expected);
    free(o);
}

int ocisbx_edit_options_add(ocisbx_edit_options *o, const char *old_text, const char *new_text, int replace_all)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "edit options: NULL");
    if (!old_text || !*old_text || !new_text)
        return ocisbx_fail(OCISBX_EINVAL, "edits[%zu]: old text (non-empty) and new text needed", o->n);
    one_edit *v = realloc(o->v, (o->n + 1) * sizeof *v);
    if (!v)
        return ocisbx_fail_nomem();
    o->v = v;
    v[o->n].old_text = ocisbx_strdup(old_text);
    v[o->n].new_text = ocisbx_strdup(new_text);
    v[o->n].all = replace_all != 0;
    if (!v[o->n].old_text || !v[o->n].new_text) {
        free(v[o->n].old_text);
        free(v[o->n].new_text);
        return ocisbx_fail_nomem();
    }
    o->n++;
    return 0;
}

int ocisbx_edit_options_set_dry_run(ocisbx_edit_options *o, int dry_run)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "edit options: NULL");
    o->dry_run = dry_run != 0;
    return 0;
}

int ocisbx_edit_options_set_expected_sha256(ocisbx_edit_options *o, const char *hex)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "edit options: NULL");
    char *c = NULL;
    if (hex && !(c = ocisbx_strdup(hex)))
        return ocisbx_fail_nomem();
    free(o->expected);
    o->expected = c;
    return 0;
}

int ocisbx_edit_options_set_max_diff_bytes(ocisbx_edit_options *o, size_t n)
{
    if (!o || n < OCISBX_DIFF_MIN_MAX)
        return ocisbx_fail(OCISBX_EINVAL, "edit options: max_diff_bytes must be at least %d", OCISBX_DIFF_MIN_MAX);
    o->max_diff = n;
    return 0;
}

int ocisbx_edit_options_set_max_file_bytes(ocisbx_edit_options *o, uint64_t n)
{
    if (!o || n == 0)
        return ocisbx_fail(OCISBX_EINVAL, "edit options: max_file_bytes must be positive");
    o->max_file = n;
    return 0;
}

/* ---- results ---- */
void ocisbx_edit_result_free(ocisbx_edit_result *r)
{
    if (!r)
        return;
    free(r->counts);
    free(r->crlf);
    free(r->diff);
    free(r);
}
size_t ocisbx_edit_result_edit_count(const ocisbx_edit_result *r)
{
    return r ? r->n : 0;
}
size_t ocisbx_edit_result_replacements(const ocisbx_edit_result *r, size_t i)
{
    return r && i < r->n ? r->counts[i] : 0;
}
size_t ocisbx_edit_result_total_replacements(const ocisbx_edit_result *r)
{
    size_t t = 0;
    for (size_t i = 0; r && i < r->n; i++)
        t += r->counts[i];
    return t;
}
int ocisbx_edit_result_crlf_matched(const ocisbx_edit_result *r, size_t i)
{
    return r && i < r->n && r->crlf[i];
}
int64_t ocisbx_edit_result_failed_edit(const ocisbx_edit_result *r)
{
    return r ? r->failed : -1;
}
const char *ocisbx_edit_result_diff(const ocisbx_edit_result *r, size_t *len)
{
    if (len)
        *len = r && r->diff ? r->diff_len : 0;
    return r ? (r->diff ? r->diff : "") : NULL;
}
uint64_t ocisbx_edit_result_diff_dropped(const ocisbx_edit_result *r)
{
    return r ? r->dropped : 0;
}
int ocisbx_edit_result_dry_run(const ocisbx_edit_result *r)
{
    return r && r->dry_run;
}
const char *ocisbx_edit_result_sha256_before(const ocisbx_edit_result *r)
{
    return r ? r->before : NULL;
}
const char *ocisbx_edit_result_sha256_after(const ocisbx_edit_result *r)
{
    return r ? r->after : NULL;
}
uint64_t ocisbx_edit_result_size(const ocisbx_edit_result *r)
{
    return r ? r->size : 0;
}

/* ---- matching ---- */
/* old matches at d[pos..] with each LF of old (not after a CR in old) also
 * matching CRLF; *mlen: the bytes of d it covers. */
static bool crlf_match_at(const char *d, size_t dl, size_t pos, const char *o, size_t ol, size_t *mlen)
{
    size_t k = pos;
    for (size_t j = 0; j < ol; j++) {
        if (o[j] == '\n' && (j == 0 || o[j - 1] != '\r') && k + 1 < dl && d[k] == '\r' && d[k + 1] == '\n') {
            k += 2;
            continue;
        }
        if (k >= dl || d[k] != o[j])
            return false;
        k++;
    }
    *mlen = k - pos;
    return true;
}

/* The next occurrence of old in d from `from`: exact, or CRLF-tolerant. */
static const char *find_next(const char *d, size_t dl, size_t from, const char *o, size_t ol, bool crlf, size_t *mlen)
{
    if (!crlf) {
        *mlen = ol;
        return from <= dl ? memmem(d + from, dl - from, o, ol) : NULL;
    }
    size_t seg = strcspn(o, "\n"); /* the text before old's first newline */
    for (size_t i = from; i < dl;) {
        const char *c;
        if (seg) {
            c = memmem(d + i, dl - i, o, seg);
        } else {
            const char *cr = memchr(d + i, '\r', dl - i), *lf = memchr(d + i, '\n', dl - i);
            c = !cr ? lf : !lf ? cr : (cr < lf ? cr : lf);
        }
        if (!c)
            return NULL;
        if (crlf_match_at(d, dl, (size_t)(c - d), o, ol, mlen))
            return c;
        i = (size_t)(c - d) + 1;
    }
    return NULL;
}

static size_t count_matches(const char *d, size_t dl, const char *o, size_t ol, bool crlf, uint64_t *covered)
{
    size_t c = 0, m = 0;
    *covered = 0;
    for (size_t i = 0; i < dl;) {
        const char *f = find_next(d, dl, i, o, ol, crlf, &m);
        if (!f)
            break;
        c++;
        *covered += m;
        i = (size_t)(f - d) + (m ? m : 1);
    }
    return c;
}

/* LF not after a CR becomes CRLF. */
static char *lf_to_crlf(const char *s, size_t *len)
{
    ocisbx_buf o = OCISBX_BUF_INIT;
    int rc = 0;
    for (const char *p = s; *p && !rc; p++)
        rc = (*p == '\n' && (p == s || p[-1] != '\r')) ? ocisbx_buf_append(&o, "\r\n", 2) : ocisbx_buf_append(&o, p, 1);
    if (rc) {
        ocisbx_buf_free(&o);
        return NULL;
    }
    *len = o.len;
    return ocisbx_buf_detach(&o);
}

typedef struct text {
    char *d;
    size_t len;
} text;

/* Applies edit i to cur (into *next): exact matches first, CRLF-tolerant
 * ones only when there is no exact one. */
static int apply_one(const one_edit *e, size_t i, const text *cur, const char *path, uint64_t max_file,
                     ocisbx_edit_result *r, text *next)
{
    const char *pre = r->single ? "edit" : "edits";
    size_t ol = strlen(e->old_text), nl = strlen(e->new_text);
    uint64_t covered = 0;
    bool crlf = false;
    size_t c = count_matches(cur->d, cur->len, e->old_text, ol, false, &covered);
    if (c == 0 && strchr(e->old_text, '\n') && memmem(cur->d, cur->len, "\r\n", 2)) {
        crlf = true;
        c = count_matches(cur->d, cur->len, e->old_text, ol, true, &covered);
    }
    char idx[32] = "";
    if (!r->single)
        snprintf(idx, sizeof idx, "[%zu]", i);
    if (c == 0)
        return ocisbx_fail(OCISBX_ENOMATCH, "%s%s: the old text does not occur in %s%s", pre, idx, path,
                           i > 0 ? " (after the edits before it)" : "");
    if (c > 1 && !e->all)
        return ocisbx_fail(OCISBX_ENOTUNIQUE,
                           "%s%s: the old text occurs %zu times in %s (give more context or replace all)", pre, idx,
                           c, path);
    char *nt = crlf ? lf_to_crlf(e->new_text, &nl) : ocisbx_strdup(e->new_text);
    if (!nt)
        return ocisbx_fail_nomem();
    uint64_t size = cur->len - covered + (uint64_t)c * nl;
    if (size > max_file) {
        free(nt);
        return ocisbx_fail(OCISBX_ETOOLARGE, "%s%s: the result would be %llu bytes, more than the limit of %llu",
                           pre, idx, (unsigned long long)size, (unsigned long long)max_file);
    }
    next->d = malloc(size + 1);
    next->len = 0;
    size_t at = 0, m = 0;
    for (const char *f; next->d && (f = find_next(cur->d, cur->len, at, e->old_text, ol, crlf, &m)) != NULL;) {
        size_t k = (size_t)(f - cur->d);
        memcpy(next->d + next->len, cur->d + at, k - at);
        memcpy(next->d + next->len + (k - at), nt, nl);
        next->len += k - at + nl;
        at = k + m;
    }
    free(nt);
    if (!next->d)
        return ocisbx_fail_nomem();
    memcpy(next->d + next->len, cur->d + at, cur->len - at);
    next->len += cur->len - at;
    next->d[next->len] = '\0';
    r->counts[i] = c;
    r->crlf[i] = crlf;
    return 0;
}

/* ---- reading ---- */
typedef struct bounded {
    text *t;
    size_t cap;
    bool over;
} bounded;

static int bounded_sink(const void *d, size_t n, void *ud)
{
    bounded *s = ud;
    if (n > s->cap - s->t->len) {
        s->over = true; /* grew past the size asked for */
        return 1;
    }
    memcpy(s->t->d + s->t->len, d, n);
    s->t->len += n;
    return 0;
}

/* The file's size first (a directory, a missing file, a FIFO and a file
 * above max are refused before any read), then its bytes. */
static int read_bounded(ocisbx_backend *b, const char *rel, uint64_t max, text *t)
{
    const char *args[] = {b->root, *rel ? rel : "."};
    char *out = NULL;
    int ex = 0;
    int rc = ocisbx_backend_run_sh(b, ocisbx_script_path_stat, args, 2, 64, &out, NULL, &ex);
    unsigned long long size = out ? strtoull(out, NULL, 10) : 0;
    free(out);
    if (rc)
        return rc;
    if (ex == 21 || ex == 3 || ex == 4)
        return ocisbx_fail(ex == 21 ? OCISBX_EISDIR : ex == 3 ? OCISBX_ENOTFOUND : OCISBX_EINVAL,
                           "edit: /workspace/%s %s", rel,
                           ex == 21 ? "is a directory" : ex == 3 ? "does not exist" : "is not a regular file");
    if (ex != 0)
        return ocisbx_fail(OCISBX_EIO, "edit: the size of /workspace/%s is unknown (exit status %d)", rel, ex);
    if (size > max)
        return ocisbx_fail(OCISBX_ETOOLARGE, "edit: /workspace/%s is %llu bytes, more than the limit of %llu", rel,
                           size, (unsigned long long)max);
    t->d = malloc((size_t)size + 1);
    t->len = 0;
    if (!t->d)
        return ocisbx_fail_nomem();
    bounded s = {t, (size_t)size, false};
    rc = b->vt->get_file(b, rel, bounded_sink, &s);
    if (rc && s.over)
        rc = ocisbx_fail(OCISBX_ECONFLICT, "edit: /workspace/%s grew while it was read", rel);
    if (!rc)
        t->d[t->len] = '\0';
    return rc;
}

/* ---- the call ---- */
static void sha_hex(const text *t, char out[65])
{
    unsigned char h[OCISBX_SHA256_LEN];
    ocisbx_sha256(t->d, t->len, h);
    ocisbx_hex(h, sizeof h, out);
}

/* Every edit in order on the bytes of orig; *fin: the last result (orig
 * itself when there is none). */
static int apply_all(const ocisbx_edit_options *o, const char *shown, const text *orig, ocisbx_edit_result *r,
                     text *fin)
{
    text cur = *orig;
    int rc = 0;
    for (size_t i = 0; i < o->n && !rc; i++) {
        text next = {NULL, 0};
        rc = apply_one(&o->v[i], i, &cur, shown, o->max_file, r, &next);
        if (rc) {
            free(next.d);
            r->failed = (int64_t)i;
            break;
        }
        if (cur.d != orig->d)
            free(cur.d);
        cur = next;
    }
    if (rc && cur.d != orig->d)
        free(cur.d);
    *fin = rc ? (text){NULL, 0} : cur;
    return rc;
}

static int edit_file(ocisbx_backend *b, const char *path, const ocisbx_edit_options *o, bool single,
                     ocisbx_edit_result **out)
{
    char *rel = NULL, *la = NULL, *lb = NULL;
    text orig = {NULL, 0}, fin = {NULL, 0};
    ocisbx_edit_result *r = calloc(1, sizeof *r);
    int rc = r ? ocisbx_backend_rel_path(path, &rel) : ocisbx_fail_nomem();
    if (!rc) {
        r->n = o->n;
        r->failed = -1;
        r->single = single;
        r->counts = calloc(o->n, sizeof *r->counts);
        r->crlf = calloc(o->n, sizeof *r->crlf);
        r->dry_run = o->dry_run;
        rc = r->counts && r->crlf ? read_bounded(b, rel, o->max_file, &orig) : ocisbx_fail_nomem();
    }
    if (!rc) {
        sha_hex(&orig, r->before);
        if (o->expected && ocisbx_strcasecmp(o->expected, r->before) != 0)
            rc = ocisbx_fail(OCISBX_ECONFLICT, "edit: the file changed since it was read (sha256 %s)", r->before);
    }
    char shown[OCISBX_SHOWN_CAP + 16];
    snprintf(shown, sizeof shown, "/workspace/%s", rel ? OCISBX_SHOWN(rel) : "");
    if (!rc)
        rc = apply_all(o, shown, &orig, r, &fin);
    if (!rc) {
        sha_hex(&fin, r->after);
        r->size = fin.len;
        la = ocisbx_diff_label("a/", rel);
        lb = ocisbx_diff_label("b/", rel);
        rc = la && lb ? ocisbx_diff_unified(la, lb, orig.d, orig.len, fin.d, fin.len, o->max_diff, &r->diff,
                                            &r->diff_len, &r->dropped)
                      : ocisbx_fail_nomem();
    }
    if (!rc && !o->dry_run && (fin.len != orig.len || memcmp(fin.d, orig.d, fin.len) != 0))
        rc = ocisbx_backend_write(b, path, fin.d, fin.len);
    if (fin.d != orig.d)
        free(fin.d);
    free(orig.d);
    free(rel);
    free(la);
    free(lb);
    if (rc && !(r && r->failed >= 0 && (rc == OCISBX_ENOMATCH || rc == OCISBX_ENOTUNIQUE))) {
        ocisbx_edit_result_free(r);
        r = NULL;
    }
    *out = r;
    return rc;
}

int ocisbx_backend_apply_edits(ocisbx_backend *b, const char *path, const ocisbx_edit_options *o,
                               ocisbx_edit_result **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "edit: NULL out");
    *out = NULL;
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "edit: NULL backend");
    if (b->closed)
        return ocisbx_fail(OCISBX_ECONFLICT, "backend: closed");
    if (!o || o->n == 0)
        return ocisbx_fail(OCISBX_EINVAL, "edit: no edits");
    return edit_file(b, path, o, false, out);
}

int ocisbx_backend_edit(ocisbx_backend *b, const char *path, const char *old_text, const char *new_text,
                        int replace_all, const char *expected_sha256, size_t *count)
{
    if (count)
        *count = 0;
    if (!old_text || !*old_text || !new_text)
        return ocisbx_fail(OCISBX_EINVAL, "edit: old text (non-empty) and new text needed");
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "edit: NULL backend");
    if (b->closed)
        return ocisbx_fail(OCISBX_ECONFLICT, "backend: closed");
    ocisbx_edit_options *o = NULL;
    ocisbx_edit_result *r = NULL;
    int rc = ocisbx_edit_options_new(&o);
    if (!rc)
        rc = ocisbx_edit_options_add(o, old_text, new_text, replace_all);
    if (!rc)
        rc = ocisbx_edit_options_set_expected_sha256(o, expected_sha256);
    if (!rc)
        rc = edit_file(b, path, o, true, &r);
    if (!rc && count)
        *count = ocisbx_edit_result_total_replacements(r);
    ocisbx_edit_result_free(r);
    ocisbx_edit_options_free(o);
    return rc;
}
