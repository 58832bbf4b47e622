/* search, glob, ls: the workspace scripts search.sh, search-context.sh,
 * glob.sh and ls.sh do the walking and the paging; here the options, the
 * arguments and the parsing of their NUL-separated output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "backend/scripts.h"
#include "ocisbx/util.h"
#include "util/internal.h"

/* The longest field the scripts keep: a line of LINE_MAX characters of up
 * to 4 bytes, plus a path. */
#define FIELD_MAX (OCISBX_BACKEND_LINE_MAX * 4 + 4096)

struct ocisbx_search_options {
    char *path, *glob;
    bool literal, icase;
    size_t max, before, after;
    uint64_t offset;
    ocisbx_search_mode mode;
};

typedef struct hit {
    char *path, *text;
    int64_t line;
    uint64_t count;
    char **ctx; /* nb lines before, then na after */
    size_t nb, na;
} hit;

struct ocisbx_search_result {
    ocisbx_search_mode mode;
    hit *v;
    size_t n;
    bool truncated;
};

typedef struct entry {
    char *name;
    char type;
    uint64_t size;
} entry;

struct ocisbx_entry_list {
    entry *v;
    size_t n;
    bool truncated;
};

/* ---- options ---- */
int ocisbx_search_options_new(ocisbx_search_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "search options: NULL out");
    *out = calloc(1, sizeof **out);
    return *out ? 0 : ocisbx_fail_nomem();
}

void ocisbx_search_options_free(ocisbx_search_options *o)
{
    if (!o)
        return;
    free(o->path);
    free(o->glob);
    free(o);
}

static int set_s(char **f, const char *v)
{
    char *c = v ? ocisbx_strdup(v) : NULL;
    if (v && !c)
        return ocisbx_fail_nomem();
    free(*f);
    *f = c;
    return 0;
}

#define NULL_OPTIONS ocisbx_fail(OCISBX_EINVAL, "search options: NULL")

int ocisbx_search_options_set_path(ocisbx_search_options *o, const char *path)
{
    return o ? set_s(&o->path, path) : NULL_OPTIONS;
}
int ocisbx_search_options_set_glob(ocisbx_search_options *o, const char *glob)
{
    return o ? set_s(&o->glob, glob) : NULL_OPTIONS;
}
int ocisbx_search_options_set_literal(ocisbx_search_options *o, int literal)
{
    if (!o)
        return NULL_OPTIONS;
    o->literal = literal != 0;
    return 0;
}
int ocisbx_search_options_set_ignore_case(ocisbx_search_options *o, int icase)
{
    if (!o)
        return NULL_OPTIONS;
    o->icase = icase != 0;
    return 0;
}
int ocisbx_search_options_set_head_limit(ocisbx_search_options *o, size_t limit)
{
    if (!o || limit == 0 || limit > OCISBX_SEARCH_MAX_LIMIT)
        return ocisbx_fail(OCISBX_EINVAL, "search: head_limit must be 1..%d", OCISBX_SEARCH_MAX_LIMIT);
    o->max = limit;
    return 0;
}
int ocisbx_search_options_set_max_results(ocisbx_search_options *o, size_t max)
{
    if (!o || max == 0 || max > OCISBX_SEARCH_MAX_LIMIT)
        return ocisbx_fail(OCISBX_EINVAL, "max_results must be 1..%d", OCISBX_SEARCH_MAX_LIMIT);
    return ocisbx_search_options_set_head_limit(o, max);
}
int ocisbx_search_options_set_offset(ocisbx_search_options *o, uint64_t offset)
{
    if (!o)
        return NULL_OPTIONS;
    o->offset = offset;
    return 0;
}
int ocisbx_search_options_set_output_mode(ocisbx_search_options *o, ocisbx_search_mode mode)
{
    if (!o)
        return NULL_OPTIONS;
    if (mode != OCISBX_SEARCH_CONTENT && mode != OCISBX_SEARCH_FILES_WITH_MATCHES && mode != OCISBX_SEARCH_COUNT)
        return ocisbx_fail(OCISBX_EINVAL, "search: unknown output mode %d", (int)mode);
    o->mode = mode;
    return 0;
}
int ocisbx_search_options_set_context(ocisbx_search_options *o, size_t before, size_t after)
{
    if (!o)
        return NULL_OPTIONS;
    if (before > OCISBX_SEARCH_MAX_CONTEXT || after > OCISBX_SEARCH_MAX_CONTEXT)
        return ocisbx_fail(OCISBX_EINVAL, "search: context must be 0..%d lines", OCISBX_SEARCH_MAX_CONTEXT);
    o->before = before;
    o->after = after;
    return 0;
}

/* ---- results ---- */
static void hit_free(hit *h)
{
    free(h->path);
    free(h->text);
    for (size_t j = 0; j < h->nb + h->na; j++)
        free(h->ctx[j]);
    free(h->ctx);
}

void ocisbx_search_result_free(ocisbx_search_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        hit_free(&r->v[i]);
    free(r->v);
    free(r);
}
ocisbx_search_mode ocisbx_search_result_mode(const ocisbx_search_result *r)
{
    return r ? r->mode : OCISBX_SEARCH_CONTENT;
}
size_t ocisbx_search_result_count(const ocisbx_search_result *r)
{
    return r ? r->n : 0;
}
const char *ocisbx_search_result_path(const ocisbx_search_result *r, size_t i)
{
    return r && i < r->n ? r->v[i].path : NULL;
}
int64_t ocisbx_search_result_line(const ocisbx_search_result *r, size_t i)
{
    return r && i < r->n ? r->v[i].line : 0;
}
const char *ocisbx_search_result_text(const ocisbx_search_result *r, size_t i)
{
    return r && i < r->n ? r->v[i].text : NULL;
}
uint64_t ocisbx_search_result_matches(const ocisbx_search_result *r, size_t i)
{
    return r && i < r->n ? r->v[i].count : 0;
}
size_t ocisbx_search_result_before_count(const ocisbx_search_result *r, size_t i)
{
    return r && i < r->n ? r->v[i].nb : 0;
}
const char *ocisbx_search_result_before(const ocisbx_search_result *r, size_t i, size_t j)
{
    return r && i < r->n && j < r->v[i].nb ? r->v[i].ctx[j] : NULL;
}
size_t ocisbx_search_result_after_count(const ocisbx_search_result *r, size_t i)
{
    return r && i < r->n ? r->v[i].na : 0;
}
const char *ocisbx_search_result_after(const ocisbx_search_result *r, size_t i, size_t j)
{
    return r && i < r->n && j < r->v[i].na ? r->v[i].ctx[r->v[i].nb + j] : NULL;
}
int ocisbx_search_result_truncated(const ocisbx_search_result *r)
{
    return r && r->truncated;
}

void ocisbx_entry_list_free(ocisbx_entry_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].name);
    free(l->v);
    free(l);
}
size_t ocisbx_entry_list_count(const ocisbx_entry_list *l)
{
    return l ? l->n : 0;
}
const char *ocisbx_entry_list_name(const ocisbx_entry_list *l, size_t i)
{
    return l && i < l->n ? l->v[i].name : NULL;
}
char ocisbx_entry_list_type(const ocisbx_entry_list *l, size_t i)
{
    return l && i < l->n ? l->v[i].type : 0;
}
uint64_t ocisbx_entry_list_size(const ocisbx_entry_list *l, size_t i)
{
    return l && i < l->n ? l->v[i].size : 0;
}
int ocisbx_entry_list_truncated(const ocisbx_entry_list *l)
{
    return l && l->truncated;
}

/* ---- arguments ---- */
/* Where find starts, from the workspace root: "." or "./<rel>". */
static int start_of(const char *path, char **start)
{
    char *rel = NULL;
    int rc = ocisbx_backend_rel_path(path ? path : "/workspace", &rel);
    if (rc)
        return rc;
    *start = *rel ? ocisbx_asprintf("./%s", rel) : ocisbx_strdup(".");
    free(rel);
    return *start ? 0 : ocisbx_fail_nomem();
}

/* The find test and pattern that select by glob: no '/': -name; with '/':
 * -path "<start>/<glob>" (the start's own *?[\ escaped) where "**" (and
 * "**" + "/") becomes '*', which crosses '/' in find -path. */
static int name_test(const char *start, const char *glob, const char **test, char **pat)
{
    *test = "";
    *pat = NULL;
    if (!glob || !*glob)
        return (*pat = ocisbx_strdup("")) ? 0 : ocisbx_fail_nomem();
    if (!strchr(glob, '/')) {
        *test = "-name";
        return (*pat = ocisbx_strdup(glob)) ? 0 : ocisbx_fail_nomem();
    }
    ocisbx_buf g = OCISBX_BUF_INIT;
    int rc = 0;
    for (const char *p = start; *p && !rc; p++)
        rc = strchr("*?[\\", *p) ? ocisbx_buf_appendf(&g, "\\%c", *p) : ocisbx_buf_append(&g, p, 1);
    if (!rc)
        rc = ocisbx_buf_appends(&g, "/");
    const char *p = glob + (*glob == '/');
    while (*p && !rc) {
        if (p[0] == '*' && p[1] == '*') {
            rc = ocisbx_buf_appends(&g, "*");
            p += 2 + (p[2] == '/');
        } else {
            rc = ocisbx_buf_append(&g, p++, 1);
        }
    }
    if (rc) {
        ocisbx_buf_free(&g);
        return rc;
    }
    *test = "-path";
    *pat = ocisbx_buf_detach(&g);
    return *pat ? 0 : ocisbx_fail_nomem();
}

/* A path a script printed ("./x") as a sandbox path ("/workspace/x"). */
static char *sandbox_path(const char *p, size_t n)
{
    if (n >= 1 && p[0] == '.' && (n == 1 || p[1] == '/'))
        return ocisbx_asprintf("/workspace%.*s", (int)(n - 1), p + 1);
    return ocisbx_strndup(p, n);
}

static int path_error(int ex, const char *what, const char *out)
{
    if (ex == 3)
        return ocisbx_fail(OCISBX_ENOTFOUND, "%s: the path does not exist", what);
    if (ex == 20)
        return ocisbx_fail(OCISBX_EINVAL, "%s: the path is not a directory", what);
    if (ex == 22) {
        size_t n = strcspn(out ? out : "", "\n");
        char *m = ocisbx_strndup(out ? out : "", n);
        int rc = ocisbx_fail(OCISBX_EINVAL, "%s: the pattern is refused: %s", what, m ? OCISBX_SHOWN(m) : "");
        free(m);
        return rc;
    }
    return ocisbx_fail(OCISBX_EIO, "%s: the workspace script failed (exit status %d)", what, ex);
}

/* The next NUL-terminated field of out[*i..len). */
static bool next_field(const char *out, size_t len, size_t *i, const char **f, size_t *fl)
{
    if (*i >= len)
        return false;
    const char *z = memchr(out + *i, '\0', len - *i);
    *f = out + *i;
    *fl = z ? (size_t)(z - *f) : len - *i;
    *i += *fl + 1;
    return true;
}

/* The bytes of the first LINE_MAX characters of text. */
static size_t cut_chars(const char *text, size_t tl)
{
    size_t k = 0, c = 0;
    for (; k < tl; k++) {
        if (((unsigned char)text[k] & 0xC0) != 0x80) {
            if (c == OCISBX_BACKEND_LINE_MAX)
                break;
            c++;
        }
    }
    return k;
}

/* ---- search: the page of entries ---- */
static int add_hit(ocisbx_search_result *r, const char *p, size_t pl, size_t *cap, hit **out)
{
    if (r->n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        hit *v = realloc(r->v, c * sizeof *v);
        if (!v)
            return ocisbx_fail_nomem();
        r->v = v;
        *cap = c;
    }
    hit *h = &r->v[r->n];
    memset(h, 0, sizeof *h);
    h->path = sandbox_path(p, pl);
    if (!h->path)
        return ocisbx_fail_nomem();
    r->n++;
    *out = h;
    return 0;
}

/* content: path, "n:text"; files: path; count: path, n */
static int parse_page(const char *out, size_t len, size_t max, ocisbx_search_result *r)
{
    size_t i = 0, cap = 0, pl = 0, fl = 0;
    const char *p = NULL, *f = "";
    int rc = 0;
    while (!rc && next_field(out, len, &i, &p, &pl)) {
        bool second = r->mode != OCISBX_SEARCH_FILES_WITH_MATCHES;
        if (second && !next_field(out, len, &i, &f, &fl))
            break;
        if (r->n == max) {
            r->truncated = true;
            break;
        }
        hit *h = NULL;
        rc = add_hit(r, p, pl, &cap, &h);
        if (rc || !second)
            continue;
        char *end = NULL;
        unsigned long long v = strtoull(f, &end, 10);
        if (r->mode == OCISBX_SEARCH_COUNT) {
            h->count = v;
        } else {
            size_t skip = end && *end == ':' ? (size_t)(end + 1 - f) : fl;
            h->line = (int64_t)v;
            h->text = ocisbx_strndup(f + skip, cut_chars(f + skip, fl - skip));
            rc = h->text ? 0 : ocisbx_fail_nomem();
        }
    }
    return rc;
}

/* ---- search: context lines ---- */
typedef struct ctx_line {
    int64_t n;
    char *text;
} ctx_line;

/* The sed program printing, with their numbers, the lines around the
 * matches [first, last) of one file (ascending lines), overlaps merged. */
static int sed_program(const ocisbx_search_result *r, size_t first, size_t last, size_t before, size_t after,
                       ocisbx_buf *prog)
{
    int64_t s = 0, e = -1; /* the range being built; none while e < s */
    int rc = 0;
    for (size_t i = first; i <= last && !rc; i++) {
        int64_t a = i < last ? r->v[i].line - (int64_t)before : 0, z = i < last ? r->v[i].line + (int64_t)after : 0;
        if (a < 1)
            a = 1;
        if (i < last && e >= s && a <= e + 1) {
            e = z > e ? z : e;
            continue;
        }
        if (e >= s)
            rc = ocisbx_buf_appendf(prog, "%s%lld,%lld{=;p}", prog->len ? ";" : "", (long long)s, (long long)e);
        s = a;
        e = z;
    }
    return rc;
}

/* Parses one file's "<n>\n<text>\n" lines up to the "\0" line. */
static int parse_ctx_file(const char *out, size_t len, size_t *i, ctx_line **v, size_t *n)
{
    size_t cap = 0;
    while (*i < len) {
        const char *l = out + *i, *nl = memchr(l, '\n', len - *i);
        size_t ll = nl ? (size_t)(nl - l) : len - *i;
        *i += ll + 1;
        if (ll == 0)
            continue; /* the newline written after a last line */
        if (l[0] == '\0')
            return 0;
        const char *t = out + *i, *tn = *i < len ? memchr(t, '\n', len - *i) : NULL;
        size_t tl = tn ? (size_t)(tn - t) : (*i < len ? len - *i : 0);
        *i += tl + 1;
        bool last = tl > 0 && t[tl - 1] == '\0'; /* no final newline: the "\0" line joined it */
        if (*n == cap) {
            cap = cap ? cap * 2 : 32;
            ctx_line *nv = realloc(*v, cap * sizeof *nv);
            if (!nv)
                return ocisbx_fail_nomem();
            *v = nv;
        }
        size_t keep = last ? tl - 1 : tl;
        (*v)[*n].n = strtoll(l, NULL, 10);
        (*v)[*n].text = ocisbx_strndup(t, cut_chars(t, keep));
        if (!(*v)[(*n)++].text)
            return ocisbx_fail_nomem();
        if (last)
            return 0;
    }
    return 0;
}

static const char *ctx_find(const ctx_line *v, size_t n, int64_t line)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid].n < line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].n == line ? v[lo].text : NULL;
}

/* The context of each match of [first, last) from the file's lines. */
static int attach_ctx(ocisbx_search_result *r, size_t first, size_t last, const ctx_line *v, size_t n,
                      const ocisbx_search_options *o)
{
    for (size_t i = first; i < last; i++) {
        hit *h = &r->v[i];
        h->ctx = calloc(o->before + o->after + 1, sizeof *h->ctx);
        if (!h->ctx)
            return ocisbx_fail_nomem();
        size_t nb = 0;
        while (nb < o->before && h->line - (int64_t)nb - 1 >= 1 && ctx_find(v, n, h->line - (int64_t)nb - 1))
            nb++;
        for (size_t j = 0; j < nb; j++)
            h->ctx[h->nb++] = ocisbx_strdup(ctx_find(v, n, h->line - (int64_t)(nb - j)));
        for (size_t j = 1; j <= o->after; j++) {
            const char *t = ctx_find(v, n, h->line + (int64_t)j);
            if (!t)
                break;
            h->ctx[h->nb + h->na++] = ocisbx_strdup(t);
        }
        for (size_t j = 0; j < h->nb + h->na; j++)
            if (!h->ctx[j])
                return ocisbx_fail_nomem();
    }
    return 0;
}

/* The file groups of the page: [g[k], g[k + 1]) share a path. */
static size_t *file_groups(const ocisbx_search_result *r, size_t *ng)
{
    size_t *g = malloc((r->n + 1) * sizeof *g), n = 0;
    if (!g)
        return NULL;
    for (size_t i = 0; i < r->n; i++)
        if (i == 0 || strcmp(r->v[i].path, r->v[i - 1].path) != 0)
            g[n++] = i;
    g[n] = r->n;
    *ng = n;
    return g;
}

/* One more script: the lines around the page's matches, per file. */
static int add_context(ocisbx_backend *b, ocisbx_search_result *r, const ocisbx_search_options *o)
{
    size_t ng = 0, *g = file_groups(r, &ng);
    const char **args = calloc(2 + 2 * ng, sizeof *args);
    char **strs = calloc(2 * ng + 1, sizeof *strs); /* per file: "./<path>", its sed program */
    char cut[24], *out = NULL;
    size_t len = 0, i = 0;
    int ex = 0, rc = g && args && strs ? 0 : ocisbx_fail_nomem();
    snprintf(cut, sizeof cut, "%d", FIELD_MAX);
    for (size_t k = 0; k < ng && !rc; k++) {
        ocisbx_buf prog = OCISBX_BUF_INIT;
        rc = sed_program(r, g[k], g[k + 1], o->before, o->after, &prog);
        strs[2 * k] = ocisbx_asprintf(".%s", r->v[g[k]].path + strlen("/workspace"));
        strs[2 * k + 1] = rc ? NULL : ocisbx_buf_detach(&prog);
        ocisbx_buf_free(&prog);
        if (!rc && (!strs[2 * k] || !strs[2 * k + 1]))
            rc = ocisbx_fail_nomem();
        args[2 + 2 * k] = strs[2 * k];
        args[3 + 2 * k] = strs[2 * k + 1];
    }
    if (!rc) {
        args[0] = b->root;
        args[1] = cut;
        rc = ocisbx_backend_run_sh_capture(b, ocisbx_script_search_context, args, 2 + 2 * ng, &out, &len, &ex);
    }
    if (!rc && ex != 0)
        rc = path_error(ex, "search context", NULL);
    for (size_t k = 0; k < ng && !rc; k++) {
        ctx_line *v = NULL;
        size_t n = 0;
        rc = parse_ctx_file(out, len, &i, &v, &n);
        if (!rc)
            rc = attach_ctx(r, g[k], g[k + 1], v, n, o);
        for (size_t j = 0; j < n; j++)
            free(v[j].text);
        free(v);
    }
    for (size_t k = 0; strs && k < 2 * ng; k++)
        free(strs[k]);
    free(strs);
    free(args);
    free(g);
    free(out);
    return rc;
}

/* ---- search ---- */
static int search_run(ocisbx_backend *b, const char *pattern, const ocisbx_search_options *o, size_t max,
                      char **out, size_t *len, int *ex)
{
    static const char *const modes[] = {"content", "files", "count"};
    char *start = NULL, *pat = NULL;
    const char *test = "";
    int rc = start_of(o && o->path ? o->path : NULL, &start);
    if (!rc)
        rc = name_test(start, o ? o->glob : NULL, &test, &pat);
    char off[24], lim[24], cut[24];
    snprintf(off, sizeof off, "%llu", (unsigned long long)(o ? o->offset : 0));
    snprintf(lim, sizeof lim, "%zu", max + 1);
    snprintf(cut, sizeof cut, "%d", FIELD_MAX);
    const char *args[] = {b->root,
                          start,
                          test,
                          pat,
                          o && o->literal ? "-F" : "-E",
                          o && o->icase ? "1" : "0",
                          modes[o ? o->mode : 0],
                          off,
                          lim,
                          cut,
                          pattern};
    if (!rc)
        rc = ocisbx_backend_run_sh_capture(b, ocisbx_script_search, args, 11, out, len, ex);
    free(start);
    free(pat);
    return rc;
}

int ocisbx_backend_search(ocisbx_backend *b, const char *pattern, const ocisbx_search_options *o,
                          ocisbx_search_result **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "search: NULL out");
    *out = NULL;
    if (!b || !pattern || !*pattern)
        return ocisbx_fail(OCISBX_EINVAL, "search: a pattern is needed");
    size_t max = o && o->max ? o->max : OCISBX_BACKEND_DEFAULT_SEARCH_RESULTS;
    char *res = NULL;
    size_t rl = 0;
    int ex = 0;
    int rc = search_run(b, pattern, o, max, &res, &rl, &ex);
    if (rc) {
        ocisbx_error_wrap("search: ");
        return rc;
    }
    ocisbx_search_result *r = ex == 0 ? calloc(1, sizeof *r) : NULL;
    if (ex != 0)
        rc = path_error(ex, "search", res);
    else if (!r)
        rc = ocisbx_fail_nomem();
    if (!rc) {
        r->mode = o ? o->mode : OCISBX_SEARCH_CONTENT;
        rc = parse_page(res, rl, max, r);
    }
    free(res);
    if (!rc && r->mode == OCISBX_SEARCH_CONTENT && o && (o->before || o->after) && r->n)
        rc = add_context(b, r, o);
    if (rc) {
        ocisbx_search_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* ---- glob, ls ---- */
/* Records "<name>/<type>/<size>\0" (the last two fields hold no '/'). */
static int parse_entries(const char *res, size_t rl, size_t max, bool absolute, ocisbx_entry_list **out)
{
    ocisbx_entry_list *l = calloc(1, sizeof *l);
    if (!l)
        return ocisbx_fail_nomem();
    size_t i = 0, n = 0, cap = 0;
    const char *rec;
    int rc = 0;
    while (!rc && next_field(res, rl, &i, &rec, &n)) {
        if (n == 0)
            continue;
        if (l->n == max) {
            l->truncated = true;
            break;
        }
        const char *s2 = NULL, *s1 = NULL;
        for (size_t k = n; k > 0 && !s1; k--)
            if (rec[k - 1] == '/')
                *(s2 ? &s1 : &s2) = rec + k - 1;
        if (!s1 || s2 - s1 != 2)
            continue;
        if (l->n == cap) {
            cap = cap ? cap * 2 : 64;
            entry *v = realloc(l->v, cap * sizeof *v);
            if (!v) {
                rc = ocisbx_fail_nomem();
                break;
            }
            l->v = v;
        }
        entry *e = &l->v[l->n];
        size_t nl = (size_t)(s1 - rec);
        e->name = absolute ? sandbox_path(rec, nl) : ocisbx_strndup(rec, nl);
        char t = s1[1];
        e->type = (t == 'f' || t == 'd' || t == 'l') ? t : 'o';
        e->size = strtoull(s2 + 1, NULL, 10);
        if (!e->name)
            rc = ocisbx_fail_nomem();
        else
            l->n++;
    }
    if (rc) {
        ocisbx_entry_list_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

/* Runs glob.sh or ls.sh (args after the root and the start) and parses. */
static int list_run(ocisbx_backend *b, const char *what, const char *script, const char *path, const char *a3,
                    const char *a4, const char *a5, size_t max, ocisbx_entry_list **out)
{
    char *start = NULL, *res = NULL;
    size_t rl = 0;
    int ex = 0;
    int rc = start_of(path, &start);
    const char *args[] = {b->root, start, a3, a4, a5};
    if (!rc)
        rc = ocisbx_backend_run_sh_capture(b, script, args, a5 ? 5 : 4, &res, &rl, &ex);
    if (rc)
        ocisbx_error_wrap("%s: ", what);
    else if (ex != 0)
        rc = path_error(ex, what, res);
    if (!rc)
        rc = parse_entries(res, rl, max, script == ocisbx_script_glob, out);
    free(start);
    free(res);
    return rc;
}

int ocisbx_backend_glob(ocisbx_backend *b, const char *pattern, const char *path, size_t max, ocisbx_entry_list **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "glob: NULL out");
    *out = NULL;
    if (!b || !pattern || !*pattern)
        return ocisbx_fail(OCISBX_EINVAL, "glob: a pattern is needed");
    if (max == 0)
        max = 1000;
    char *start = NULL, *pat = NULL, lim[24];
    const char *test = "";
    int rc = start_of(path, &start);
    if (!rc)
        rc = name_test(start, pattern, &test, &pat);
    snprintf(lim, sizeof lim, "%zu", max + 1);
    if (!rc)
        rc = list_run(b, "glob", ocisbx_script_glob, path, test, pat, lim, max, out);
    free(start);
    free(pat);
    return rc;
}

int ocisbx_backend_ls_page(ocisbx_backend *b, const char *path, uint64_t offset, size_t limit,
                           ocisbx_entry_list **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ls: NULL out");
    *out = NULL;
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "ls: NULL backend");
    if (limit > OCISBX_SEARCH_MAX_LIMIT)
        return ocisbx_fail(OCISBX_EINVAL, "ls: limit must be 0..%d", OCISBX_SEARCH_MAX_LIMIT);
    if (limit == 0)
        limit = OCISBX_BACKEND_LS_DEFAULT_LIMIT;
    char off[24], lim[24];
    snprintf(off, sizeof off, "%llu", (unsigned long long)offset);
    snprintf(lim, sizeof lim, "%zu", limit + 1);
    return list_run(b, "ls", ocisbx_script_ls, path, off, lim, NULL, limit, out);
}

int ocisbx_backend_ls(ocisbx_backend *b, const char *path, ocisbx_entry_list **out)
{
    return ocisbx_backend_ls_page(b, path, 0, 0, out);
}
