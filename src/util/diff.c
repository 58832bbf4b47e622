/* Unified diffs, bounded (util/diff.h): the common head and tail of whole
 * lines are set aside, the lines between are compared with Myers' greedy
 * O(ND) algorithm (bounded in lines and distance), and hunks are written
 * from the resulting runs through cursors that only move forward. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/diff.h"

#define NOTE_ROOM 64 /* "[... <20 digits> bytes of diff dropped ...]\n" fits */
#define NO_NEWLINE "\\ No newline at end of file\n"

void ocisbx_diff_init(ocisbx_diff *d, size_t max)
{
    memset(d, 0, sizeof *d);
    d->max = max < OCISBX_DIFF_MIN_MAX ? OCISBX_DIFF_MIN_MAX : max;
}

void ocisbx_diff_free(ocisbx_diff *d)
{
    ocisbx_buf_free(&d->out);
    d->total = 0;
    d->safe_len = 0;
}

uint64_t ocisbx_diff_dropped(const ocisbx_diff *d)
{
    return d->total - d->out.len;
}

/* One diff line: prefix (0: none), the bytes, a newline unless they end
 * with one, and the no-newline marker when the content line had none. */
static int emit(ocisbx_diff *d, char prefix, const char *s, size_t n, bool mark_no_newline)
{
    bool has_nl = n > 0 && s[n - 1] == '\n';
    size_t unit = (prefix ? 1 : 0) + n + (has_nl ? 0 : 1) + (mark_no_newline ? strlen(NO_NEWLINE) : 0);
    bool all_kept = d->total == d->out.len;
    d->total += unit;
    if (!all_kept || d->out.len + unit > d->max)
        return 0; /* kept: a prefix of whole lines */
    int rc = prefix ? ocisbx_buf_append(&d->out, &prefix, 1) : 0;
    if (!rc)
        rc = ocisbx_buf_append(&d->out, s, n);
    if (!rc && !has_nl)
        rc = ocisbx_buf_append(&d->out, "\n", 1);
    if (!rc && mark_no_newline)
        rc = ocisbx_buf_appends(&d->out, NO_NEWLINE);
    if (!rc && d->out.len + NOTE_ROOM <= d->max)
        d->safe_len = d->out.len;
    return rc;
}

/* ---- runs: what the comparison found ---- */
typedef struct run {
    char t;        /* '=', '-', '+' */
    size_t n;      /* lines */
    size_t ai, bi; /* the first line's index on each side (region-relative) */
} run;

typedef struct runs {
    run *v;
    size_t n, cap;
} runs;

static int runs_add(runs *r, char t, size_t n)
{
    if (n == 0)
        return 0;
    if (r->n && r->v[r->n - 1].t == t) {
        r->v[r->n - 1].n += n;
        return 0;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        run *v = realloc(r->v, cap * sizeof *v);
        if (!v)
            return ocisbx_fail_nomem();
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (run){t, n, 0, 0};
    return 0;
}

/* Each run's first line on each side. */
static void runs_index(runs *r)
{
    size_t ai = 0, bi = 0;
    for (size_t i = 0; i < r->n; i++) {
        r->v[i].ai = ai;
        r->v[i].bi = bi;
        if (r->v[i].t != '+')
            ai += r->v[i].n;
        if (r->v[i].t != '-')
            bi += r->v[i].n;
    }
}

/* ---- lines of one side of the changed region ---- */
typedef struct lines {
    const char *s;
    size_t *off; /* n + 1 offsets into s: line i is [off[i], off[i+1]) */
    uint32_t *h;
    size_t n;
} lines;

static size_t count_lines(const char *s, size_t len)
{
    size_t n = 0;
    for (const char *p = s, *e = s + len; p < e; n++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        p = nl ? nl + 1 : e;
    }
    return n;
}

/* 1: more than OCISBX_DIFF_MAX_LINES lines (nothing allocated). */
static int lines_split(const char *s, size_t len, lines *l)
{
    memset(l, 0, sizeof *l);
    l->s = s;
    l->n = count_lines(s, len);
    if (l->n > OCISBX_DIFF_MAX_LINES)
        return 1;
    l->off = malloc((l->n + 1) * sizeof *l->off);
    l->h = malloc((l->n + 1) * sizeof *l->h);
    if (!l->off || !l->h)
        return ocisbx_fail_nomem();
    size_t i = 0;
    for (const char *p = s, *e = s + len; p < e; i++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *end = nl ? nl + 1 : e;
        uint32_t h = 2166136261u; /* FNV-1a */
        for (const char *q = p; q < end; q++)
            h = (h ^ (unsigned char)*q) * 16777619u;
        l->off[i] = (size_t)(p - s);
        l->h[i] = h;
        p = end;
    }
    l->off[l->n] = len;
    return 0;
}

static void lines_free(lines *l)
{
    free(l->off);
    free(l->h);
}

static bool line_eq(const lines *a, size_t i, const lines *b, size_t j)
{
    size_t al = a->off[i + 1] - a->off[i], bl = b->off[j + 1] - b->off[j];
    return a->h[i] == b->h[j] && al == bl && memcmp(a->s + a->off[i], b->s + b->off[j], al) == 0;
}

/* ---- Myers ---- */
/* The furthest-reaching x per diagonal k (V[k + off]) before each step d,
 * kept for the walk back: step d keeps 2d + 1 values. */
typedef struct trace {
    int32_t *v;
    size_t n, cap;
} trace;

/* Forward pass; *dist gets D. 1: beyond OCISBX_DIFF_MAX_D. */
static int myers_forward(const lines *a, const lines *b, trace *t, int32_t *V, int32_t off, int32_t *dist)
{
    int32_t N = (int32_t)a->n, M = (int32_t)b->n;
    V[1 + off] = 0;
    for (int32_t d = 0; d <= N + M; d++) {
        if (d > OCISBX_DIFF_MAX_D)
            return 1;
        size_t need = t->n + 2 * (size_t)d + 1;
        if (need > t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 1024;
            while (cap < need)
                cap *= 2;
            int32_t *nv = realloc(t->v, cap * sizeof *nv);
            if (!nv)
                return ocisbx_fail_nomem();
            t->v = nv;
            t->cap = cap;
        }
        memcpy(t->v + t->n, V + off - d, (2 * (size_t)d + 1) * sizeof *V);
        t->n = need;
        for (int32_t k = -d; k <= d; k += 2) {
            int32_t x = (k == -d || (k != d && V[k - 1 + off] < V[k + 1 + off])) ? V[k + 1 + off]
                                                                                : V[k - 1 + off] + 1;
            int32_t y = x - k;
            while (x < N && y < M && line_eq(a, (size_t)x, b, (size_t)y)) {
                x++;
                y++;
            }
            V[k + off] = x;
            if (x >= N && y >= M) {
                *dist = d;
                return 0;
            }
        }
    }
    return 1;
}

/* Walks the trace back from (N, M): runs in reverse order into rev. */
static int myers_back(const lines *a, const lines *b, const trace *t, int32_t dist, runs *rev)
{
    int32_t x = (int32_t)a->n, y = (int32_t)b->n;
    size_t base = t->n;
    int rc = 0;
    for (int32_t d = dist; d > 0 && !rc; d--) {
        base -= 2 * (size_t)d + 1;
        const int32_t *V = t->v + base + d; /* V[k] for k in -d..d */
        int32_t k = x - y;
        bool down = k == -d || (k != d && V[k - 1] < V[k + 1]);
        int32_t pk = down ? k + 1 : k - 1;
        int32_t px = V[pk], py = px - pk;
        int32_t mx = down ? px : px + 1; /* after the one edit */
        rc = runs_add(rev, '=', (size_t)(x - mx));
        if (!rc)
            rc = runs_add(rev, down ? '+' : '-', 1);
        x = px;
        y = py;
    }
    return rc ? rc : runs_add(rev, '=', (size_t)x);
}

/* Appends the reversed runs in order, each change block as its removals
 * then its additions (GNU diff's order). */
static int runs_append_reversed(runs *out, const runs *rev)
{
    size_t del = 0, ins = 0;
    int rc = 0;
    for (size_t i = rev->n; i > 0 && !rc; i--) {
        const run *u = &rev->v[i - 1];
        if (u->t == '-')
            del += u->n;
        else if (u->t == '+')
            ins += u->n;
        if (u->t == '=' || i == 1) {
            rc = runs_add(out, '-', del);
            if (!rc)
                rc = runs_add(out, '+', ins);
            del = ins = 0;
            if (!rc && u->t == '=')
                rc = runs_add(out, '=', u->n);
        }
    }
    return rc;
}

/* The runs of the changed region: minimal, or removed-then-added when the
 * comparison would cost more than the bounds. */
static int compare(const char *a, size_t alen, const char *b, size_t blen, runs *out)
{
    lines la, lb;
    trace t = {0};
    runs rev = {0};
    int32_t dist = 0, off = OCISBX_DIFF_MAX_D + 2;
    int32_t *V = NULL;
    memset(&lb, 0, sizeof lb);
    int rc = lines_split(a, alen, &la);
    if (rc == 0)
        rc = lines_split(b, blen, &lb);
    if (rc == 0) {
        V = calloc(2 * (size_t)off + 1, sizeof *V);
        rc = V ? myers_forward(&la, &lb, &t, V, off, &dist) : ocisbx_fail_nomem();
    }
    if (rc == 0)
        rc = myers_back(&la, &lb, &t, dist, &rev);
    if (rc == 0)
        rc = runs_append_reversed(out, &rev);
    if (rc == 1) { /* too large or too different */
        rc = runs_add(out, '-', count_lines(a, alen));
        if (!rc)
            rc = runs_add(out, '+', count_lines(b, blen));
    }
    lines_free(&la);
    lines_free(&lb);
    free(V);
    free(t.v);
    free(rev.v);
    return rc;
}

/* ---- hunks ---- */
typedef struct cursor {
    const char *s;
    size_t len, pos, line; /* pos: the start of line `line` (region-relative) */
} cursor;

/* The next line: [*p, *p + *n) with its newline if it has one. */
static void cursor_next(cursor *c, const char **p, size_t *n)
{
    const char *nl = memchr(c->s + c->pos, '\n', c->len - c->pos);
    size_t end = nl ? (size_t)(nl - c->s) + 1 : c->len;
    *p = c->s + c->pos;
    *n = end - c->pos;
    c->pos = end;
    c->line++;
}

static void cursor_skip_to(cursor *c, size_t line)
{
    const char *p;
    size_t n;
    while (c->line < line)
        cursor_next(c, &p, &n);
}

/* Writes n lines of one cursor with prefix (the other moved along for ' ').
 * ends_file: the cursor's region ends its file (the no-newline marker). */
static int emit_lines(ocisbx_diff *d, char prefix, cursor *c, cursor *other, size_t n, bool ends_file)
{
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *p, *q;
        size_t len, ql;
        cursor_next(c, &p, &len);
        if (other)
            cursor_next(other, &q, &ql);
        bool last = ends_file && c->pos == c->len;
        rc = emit(d, prefix, p, len, last && (len == 0 || p[len - 1] != '\n'));
    }
    return rc;
}

typedef struct region {
    cursor a, b;
    size_t base;   /* lines before the region (the same on both sides) */
    size_t na, nb; /* lines in the region */
    bool ends_file; /* the region reaches the end of both files */
} region;

static int hunk_header(ocisbx_diff *d, size_t base, size_t ha, size_t sa, size_t hb, size_t sb)
{
    char h[128], pa[48], pb[48];
    size_t la = sa ? base + ha + 1 : base + ha, lb = sb ? base + hb + 1 : base + hb;
    if (sa == 1)
        snprintf(pa, sizeof pa, "%zu", la);
    else
        snprintf(pa, sizeof pa, "%zu,%zu", la, sa);
    if (sb == 1)
        snprintf(pb, sizeof pb, "%zu", lb);
    else
        snprintf(pb, sizeof pb, "%zu,%zu", lb, sb);
    int n = snprintf(h, sizeof h, "@@ -%s +%s @@\n", pa, pb);
    return emit(d, 0, h, (size_t)n, false);
}

/* One hunk: the changes from run i (a change) up to the first equal run
 * longer than twice the context (or the end); *next: the run after it. */
static int write_hunk(ocisbx_diff *d, const runs *r, size_t i, region *g, size_t *next)
{
    const size_t C = OCISBX_DIFF_CONTEXT;
    size_t pre = (i > 0 && r->v[i - 1].t == '=') ? (r->v[i - 1].n < C ? r->v[i - 1].n : C) : 0;
    size_t j = i;
    while (j < r->n && (r->v[j].t != '=' || (j + 1 < r->n && r->v[j].n <= 2 * C)))
        j++;
    size_t post = j < r->n ? (r->v[j].n < C ? r->v[j].n : C) : 0;
    size_t ha = r->v[i].ai - pre, hb = r->v[i].bi - pre;
    size_t ea = (j < r->n ? r->v[j].ai : g->na) + post, eb = (j < r->n ? r->v[j].bi : g->nb) + post;
    int rc = hunk_header(d, g->base, ha, ea - ha, hb, eb - hb);
    cursor_skip_to(&g->a, ha);
    cursor_skip_to(&g->b, hb);
    if (!rc)
        rc = emit_lines(d, ' ', &g->a, &g->b, pre, g->ends_file);
    for (size_t k = i; k < j && !rc; k++) {
        const run *u = &r->v[k];
        if (u->t == '=')
            rc = emit_lines(d, ' ', &g->a, &g->b, u->n, g->ends_file);
        else
            rc = emit_lines(d, u->t, u->t == '-' ? &g->a : &g->b, NULL, u->n, g->ends_file);
    }
    if (!rc)
        rc = emit_lines(d, ' ', &g->a, &g->b, post, g->ends_file);
    *next = j;
    return rc;
}

/* The byte where the common head of whole lines ends (same in a and b). */
static size_t common_head(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t m = alen < blen ? alen : blen, p = 0;
    while (p < m && a[p] == b[p])
        p++;
    while (p > 0 && a[p - 1] != '\n')
        p--;
    return p;
}

/* The length of the common tail of whole lines after p. */
static size_t common_tail(const char *a, size_t alen, const char *b, size_t blen, size_t p)
{
    size_t m = (alen < blen ? alen : blen) - p, s = 0;
    while (s < m && a[alen - 1 - s] == b[blen - 1 - s])
        s++;
    while (s > 0 && !((alen - s == p || a[alen - s - 1] == '\n') && (blen - s == p || b[blen - s - 1] == '\n')))
        s--;
    return s;
}

int ocisbx_diff_file(ocisbx_diff *d, const char *old_label, const char *new_label, const char *a, size_t alen,
                     const char *b, size_t blen)
{
    a = a ? a : "";
    b = b ? b : "";
    if (alen == blen && memcmp(a, b, alen) == 0)
        return 0;
    char *h = NULL;
    int rc = 0;
    if (memchr(a, '\0', alen) || memchr(b, '\0', blen)) {
        h = ocisbx_asprintf("Binary files %s and %s differ\n", old_label, new_label);
        rc = h ? emit(d, 0, h, strlen(h), false) : ocisbx_fail_nomem();
        free(h);
        return rc;
    }
    size_t p = common_head(a, alen, b, blen), s = common_tail(a, alen, b, blen, p);
    /* up to CONTEXT lines of the head and of the tail join the region */
    size_t q = p, c = 0, r = alen - s, after = 0;
    for (; c < OCISBX_DIFF_CONTEXT && q > 0; c++)
        for (q--; q > 0 && a[q - 1] != '\n'; q--)
            ;
    for (; after < OCISBX_DIFF_CONTEXT && r < alen; after++) {
        const char *nl = memchr(a + r, '\n', alen - r);
        r = nl ? (size_t)(nl - a) + 1 : alen;
    }
    runs rs = {0};
    rc = runs_add(&rs, '=', c);
    if (!rc)
        rc = compare(a + p, alen - s - p, b + p, blen - s - p, &rs);
    if (!rc)
        rc = runs_add(&rs, '=', after);
    h = rc ? NULL : ocisbx_asprintf("--- %s\n+++ %s\n", old_label, new_label);
    if (!rc)
        rc = h ? emit(d, 0, h, strlen(h), false) : ocisbx_fail_nomem();
    free(h);
    size_t tail = r - (alen - s);
    region g = {{a + q, r - q, 0, 0}, {b + q, blen - s + tail - q, 0, 0}, count_lines(a, q), 0, 0, r == alen};
    runs_index(&rs);
    if (rs.n) {
        const run *l = &rs.v[rs.n - 1];
        g.na = l->ai + (l->t != '+' ? l->n : 0);
        g.nb = l->bi + (l->t != '-' ? l->n : 0);
    }
    for (size_t i = 0; i < rs.n && !rc;) {
        if (rs.v[i].t == '=')
            i++;
        else
            rc = write_hunk(d, &rs, i, &g, &i);
    }
    free(rs.v);
    return rc;
}

int ocisbx_diff_finish(ocisbx_diff *d, char **out, size_t *len, uint64_t *dropped)
{
    uint64_t drop = 0;
    int rc = 0;
    if (d->total > d->out.len) {
        d->out.len = d->safe_len;
        if (d->out.data)
            d->out.data[d->out.len] = '\0';
        drop = d->total - d->safe_len;
        rc = ocisbx_buf_appendf(&d->out, "[... %llu bytes of diff dropped ...]\n", (unsigned long long)drop);
    }
    if (dropped)
        *dropped = drop;
    if (rc) {
        ocisbx_diff_free(d);
        return rc;
    }
    if (len)
        *len = d->out.len;
    *out = ocisbx_buf_detach(&d->out);
    d->total = 0;
    d->safe_len = 0;
    return *out ? 0 : ocisbx_fail_nomem();
}

int ocisbx_diff_unified(const char *old_label, const char *new_label, const char *a, size_t alen, const char *b,
                        size_t blen, size_t max, char **out, size_t *len, uint64_t *dropped)
{
    ocisbx_diff d;
    ocisbx_diff_init(&d, max);
    int rc = ocisbx_diff_file(&d, old_label, new_label, a, alen, b, blen);
    if (rc) {
        ocisbx_diff_free(&d);
        return rc;
    }
    return ocisbx_diff_finish(&d, out, len, dropped);
}

char *ocisbx_diff_label(const char *prefix, const char *path)
{
    bool plain = true;
    for (const unsigned char *p = (const unsigned char *)path; *p && plain; p++)
        plain = *p >= 0x20 && *p != 0x7f && *p != '"' && *p != '\\';
    if (plain)
        return ocisbx_asprintf("%s%s", prefix, path);
    ocisbx_buf o = OCISBX_BUF_INIT;
    int rc = ocisbx_buf_appendf(&o, "\"%s", prefix);
    for (const unsigned char *p = (const unsigned char *)path; *p && !rc; p++) {
        const char *esc = *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\n' ? "\\n" : *p == '\t' ? "\\t" : NULL;
        if (esc)
            rc = ocisbx_buf_appends(&o, esc);
        else if (*p < 0x20 || *p == 0x7f)
            rc = ocisbx_buf_appendf(&o, "\\%03o", *p);
        else
            rc = ocisbx_buf_append(&o, p, 1);
    }
    if (!rc)
        rc = ocisbx_buf_appends(&o, "\"");
    if (rc) {
        ocisbx_buf_free(&o);
        return NULL;
    }
    return ocisbx_buf_detach(&o);
}
