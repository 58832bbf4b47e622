/* search, glob, ls: find + grep in the workspace, skipping .ocisbx, every
 * name NUL-terminated so that any byte in a file name passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "ocisbx/util.h"
#include "util/internal.h"

struct ocisbx_search_options {
    char *path, *glob;
    bool literal, icase;
    size_t max;
};

typedef struct hit {
    char *path, *text;
    int64_t line;
} hit;

struct ocisbx_search_result {
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

int ocisbx_search_options_set_path(ocisbx_search_options *o, const char *path)
{
    return o ? set_s(&o->path, path) : ocisbx_fail(OCISBX_EINVAL, "search options: NULL");
}
int ocisbx_search_options_set_glob(ocisbx_search_options *o, const char *glob)
{
    return o ? set_s(&o->glob, glob) : ocisbx_fail(OCISBX_EINVAL, "search options: NULL");
}
int ocisbx_search_options_set_literal(ocisbx_search_options *o, int literal)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "search options: NULL");
    o->literal = literal != 0;
    return 0;
}
int ocisbx_search_options_set_ignore_case(ocisbx_search_options *o, int icase)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "search options: NULL");
    o->icase = icase != 0;
    return 0;
}
int ocisbx_search_options_set_max_results(ocisbx_search_options *o, size_t max)
{
    if (!o || max == 0 || max > OCISBX_BACKEND_SEARCH_MAX_RESULTS)
        return ocisbx_fail(OCISBX_EINVAL, "max_results must be 1..%d", OCISBX_BACKEND_SEARCH_MAX_RESULTS);
    o->max = max;
    return 0;
}

void ocisbx_search_result_free(ocisbx_search_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].path);
        free(r->v[i].text);
    }
    free(r->v);
    free(r);
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

/* "W=<root>\nB=\"$W\"[/<rel>]\n" */
static int vars(ocisbx_backend *b, const char *rel, ocisbx_buf *s)
{
    int rc = ocisbx_buf_appends(s, "W=");
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(s, b->root);
    if (!rc)
        rc = ocisbx_buf_appends(s, "\nB=\"$W\"");
    if (!rc && *rel) {
        rc = ocisbx_buf_appends(s, "/");
        if (!rc)
            rc = ocisbx_buf_append_shell_quoted(s, rel);
    }
    if (!rc)
        rc = ocisbx_buf_appends(s, "\n");
    if (!rc)
        rc = ocisbx_backend_script_confine(s, "B");
    return rc;
}

/* The find test that selects by glob. */
static int name_filter(ocisbx_buf *s, const char *glob)
{
    if (!glob || !*glob)
        return 0;
    if (!strchr(glob, '/')) {
        int rc = ocisbx_buf_appends(s, " -name ");
        return rc ? rc : ocisbx_buf_append_shell_quoted(s, glob);
    }
    /* find -path: '*' crosses '/', so "**" and a "**" + "/" are one '*' */
    ocisbx_buf g = OCISBX_BUF_INIT;
    int rc = 0;
    const char *p = glob;
    if (*p == '/')
        p++;
    while (*p && !rc) {
        if (p[0] == '*' && p[1] == '*') {
            rc = ocisbx_buf_appends(&g, "*");
            p += 2;
            if (*p == '/')
                p++;
        } else {
            rc = ocisbx_buf_append(&g, p, 1);
            p++;
        }
    }
    if (!rc)
        rc = ocisbx_buf_appends(s, " -path \"$B\"/");
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(s, g.data ? g.data : "*");
    ocisbx_buf_free(&g);
    return rc;
}

/* A path the script printed (under the root) as a sandbox path. */
static char *sandbox_path(ocisbx_backend *b, const char *p, size_t n)
{
    size_t rl = strlen(b->root);
    if (n >= rl && memcmp(p, b->root, rl) == 0 && (n == rl || p[rl] == '/'))
        return ocisbx_asprintf("/workspace%.*s", (int)(n - rl), p + rl);
    return ocisbx_strndup(p, n);
}

static int path_error(int ex, const char *what)
{
    if (ex == 3)
        return ocisbx_fail(OCISBX_ENOTFOUND, "%s: the path does not exist", what);
    if (ex == 20)
        return ocisbx_fail(OCISBX_EINVAL, "%s: the path is not a directory", what);
    return ocisbx_fail(OCISBX_EIO, "%s: the workspace script failed (exit status %d)", what, ex);
}

int ocisbx_backend_search(ocisbx_backend *b, const char *pattern, const ocisbx_search_options *o,
                          ocisbx_search_result **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "search: NULL out");
    *out = NULL;
    if (!b || !pattern || !*pattern)
        return ocisbx_fail(OCISBX_EINVAL, "search: a pattern is needed");
    char *rel = NULL;
    int rc = ocisbx_backend_rel_path(o && o->path ? o->path : "/workspace", &rel);
    if (rc)
        return rc;
    size_t max = o && o->max ? o->max : OCISBX_BACKEND_DEFAULT_SEARCH_RESULTS;
    ocisbx_buf s = OCISBX_BUF_INIT;
    char *res = NULL;
    size_t rl = 0;
    int ex = 0;
    rc = vars(b, rel, &s);
    if (!rc)
        rc = ocisbx_buf_appends(&s, "[ -e \"$B\" ] || exit 3\n"
                                    "find \"$B\" -path \"$W/.ocisbx\" -prune -o -type f");
    if (!rc)
        rc = name_filter(&s, o ? o->glob : NULL);
    if (!rc)
        rc = ocisbx_buf_appendf(&s, " -print0 | LC_ALL=C sort -z | xargs -0 -r grep -I -n -H -Z %s%s -e ",
                                o && o->literal ? "-F" : "-E", o && o->icase ? " -i" : "");
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(&s, pattern);
    if (!rc)
        rc = ocisbx_buf_appendf(&s, " -- 2>/dev/null | cut -b 1-%d | head -c %zu\nexit 0\n",
                                OCISBX_BACKEND_LINE_MAX * 4 + 4096, (max + 1) * (OCISBX_BACKEND_LINE_MAX * 4 + 8192));
    if (!rc)
        rc = ocisbx_backend_run_capture(b, s.data, &res, &rl, &ex);
    ocisbx_buf_free(&s);
    free(rel);
    if (rc)
        return rc;
    if (ex != 0) {
        free(res);
        return path_error(ex, "search");
    }
    ocisbx_search_result *r = calloc(1, sizeof *r);
    if (!r) {
        free(res);
        return ocisbx_fail_nomem();
    }
    size_t i = 0;
    while (i < rl && !rc) {
        /* name NUL line ':' text '\n' (a name may hold newlines) */
        const char *line = res + i;
        const char *z = memchr(line, '\0', rl - i);
        if (!z)
            break;
        const char *nl = memchr(z + 1, '\n', rl - (size_t)(z + 1 - res));
        size_t ll = nl ? (size_t)(nl - line) : rl - i;
        i += ll + 1;
        if (r->n == max) {
            r->truncated = true;
            break;
        }
        const char *num = z + 1;
        char *end = NULL;
        long long ln = strtoll(num, &end, 10);
        if (!end || *end != ':')
            continue;
        const char *text = end + 1;
        size_t tl = ll - (size_t)(text - line);
        /* the text cut at LINE_MAX characters, on a character boundary */
        size_t k = 0, c = 0;
        while (k < tl) {
            if (((unsigned char)text[k] & 0xC0) != 0x80) {
                if (c == OCISBX_BACKEND_LINE_MAX)
                    break;
                c++;
            }
            k++;
        }
        hit *v = realloc(r->v, (r->n + 1) * sizeof *v);
        if (!v) {
            rc = ocisbx_fail_nomem();
            break;
        }
        r->v = v;
        v[r->n].path = sandbox_path(b, line, (size_t)(z - line));
        v[r->n].text = ocisbx_strndup(text, k);
        v[r->n].line = ln;
        if (!v[r->n].path || !v[r->n].text) {
            free(v[r->n].path);
            free(v[r->n].text);
            rc = ocisbx_fail_nomem();
            break;
        }
        r->n++;
    }
    free(res);
    if (rc) {
        ocisbx_search_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* Records "<name>/<type>/<size>\0" (the last two fields hold no '/'). */
static int parse_entries(ocisbx_backend *b, const char *res, size_t rl, size_t max, bool absolute,
                         ocisbx_entry_list **out)
{
    ocisbx_entry_list *l = calloc(1, sizeof *l);
    if (!l)
        return ocisbx_fail_nomem();
    size_t i = 0;
    int rc = 0;
    while (i < rl) {
        const char *rec = res + i;
        const char *z = memchr(rec, '\0', rl - i);
        size_t n = z ? (size_t)(z - rec) : rl - i;
        i += n + 1;
        if (n == 0)
            continue;
        if (l->n == max) {
            l->truncated = true;
            break;
        }
        const char *s2 = NULL, *s1 = NULL;
        for (size_t k = n; k > 0; k--)
            if (rec[k - 1] == '/') {
                if (!s2) {
                    s2 = rec + k - 1;
                } else {
                    s1 = rec + k - 1;
                    break;
                }
            }
        if (!s1 || s2 - s1 != 2)
            continue;
        entry *v = realloc(l->v, (l->n + 1) * sizeof *v);
        if (!v) {
            rc = ocisbx_fail_nomem();
            break;
        }
        l->v = v;
        size_t nl = (size_t)(s1 - rec);
        v[l->n].name = absolute ? sandbox_path(b, rec, nl) : ocisbx_strndup(rec, nl);
        char t = s1[1];
        v[l->n].type = (t == 'f' || t == 'd' || t == 'l') ? t : 'o';
        v[l->n].size = strtoull(s2 + 1, NULL, 10);
        if (!v[l->n].name) {
            rc = ocisbx_fail_nomem();
            break;
        }
        l->n++;
    }
    if (rc) {
        ocisbx_entry_list_free(l);
        return rc;
    }
    *out = l;
    return 0;
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
    char *rel = NULL;
    int rc = ocisbx_backend_rel_path(path ? path : "/workspace", &rel);
    if (rc)
        return rc;
    ocisbx_buf s = OCISBX_BUF_INIT;
    char *res = NULL;
    size_t rl = 0;
    int ex = 0;
    rc = vars(b, rel, &s);
    if (!rc)
        rc = ocisbx_buf_appends(&s, "[ -d \"$B\" ] || { [ -e \"$B\" ] && exit 20; exit 3; }\n"
                                    "find \"$B\" -path \"$W/.ocisbx\" -prune -o ! -type d");
    if (!rc)
        rc = name_filter(&s, pattern);
    if (!rc)
        rc = ocisbx_buf_appendf(&s, " -printf '%%p/%%y/%%s\\0' | LC_ALL=C sort -z | head -z -n %zu\nexit 0\n",
                                max + 1);
    if (!rc)
        rc = ocisbx_backend_run_capture(b, s.data, &res, &rl, &ex);
    ocisbx_buf_free(&s);
    free(rel);
    if (!rc && ex != 0)
        rc = path_error(ex, "glob");
    if (!rc)
        rc = parse_entries(b, res, rl, max, true, out);
    free(res);
    return rc;
}

int ocisbx_backend_ls(ocisbx_backend *b, const char *path, ocisbx_entry_list **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ls: NULL out");
    *out = NULL;
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "ls: NULL backend");
    char *rel = NULL;
    int rc = ocisbx_backend_rel_path(path ? path : "/workspace", &rel);
    if (rc)
        return rc;
    ocisbx_buf s = OCISBX_BUF_INIT;
    char *res = NULL;
    size_t rl = 0;
    int ex = 0;
    rc = vars(b, rel, &s);
    if (!rc)
        rc = ocisbx_buf_appends(&s, "[ -d \"$B\" ] || { [ -e \"$B\" ] && exit 20; exit 3; }\n"
                                    "find \"$B\" -mindepth 1 -maxdepth 1 ! -path \"$W/.ocisbx\" "
                                    "-printf '%f/%y/%s\\0' | LC_ALL=C sort -z | head -z -n 10001\nexit 0\n");
    if (!rc)
        rc = ocisbx_backend_run_capture(b, s.data, &res, &rl, &ex);
    ocisbx_buf_free(&s);
    free(rel);
    if (!rc && ex != 0)
        rc = path_error(ex, "ls");
    if (!rc)
        rc = parse_entries(b, res, rl, 10000, false, out);
    free(res);
    return rc;
}
