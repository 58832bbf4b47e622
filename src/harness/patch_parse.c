/* The apply_patch parser (see patch.h): the patch text to operations, with
 * the line number and what was expected there for any error. White space
 * around the markers is tolerated; nothing here reads a file. */
#include "harness/patch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocisbx/common.h"
#include "util/internal.h"

#define M_BEGIN "*** Begin Patch"
#define M_END "*** End Patch"
#define M_ADD "*** Add File:"
#define M_DELETE "*** Delete File:"
#define M_UPDATE "*** Update File:"
#define M_MOVE "*** Move to:"
#define M_EOF "*** End of File"

const char *patch_action_name(patch_action a)
{
    switch (a) {
    case PATCH_ADD: return "add";
    case PATCH_UPDATE: return "update";
    case PATCH_DELETE: return "delete";
    case PATCH_MOVE: return "move";
    }
    return "update";
}

/* The patch split into lines (no newline, no trailing CR). */
typedef struct lines {
    patch_line *v;
    size_t n;
} lines;

typedef struct parser {
    lines l;
    size_t i;   /* the next line */
    size_t end; /* one past the last line of the body (the End Patch line) */
    patch *p;
    patch_error *err;
} parser;

static int perr(parser *ps, size_t line, const char *fmt, ...) OCISBX_PRINTF(3, 4);
static int perr(parser *ps, size_t line, const char *fmt, ...)
{
    patch_error *e = ps->err;
    e->code = "invalid_patch";
    e->rc = OCISBX_EINVAL;
    e->line = line;
    int n = snprintf(e->msg, sizeof e->msg, "line %zu: ", line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg + n, sizeof e->msg - (size_t)n, fmt, ap);
    va_end(ap);
    return OCISBX_EINVAL;
}

int patch_error_set(patch_error *e, const char *code, int rc, size_t line, const char *fmt, ...)
{
    e->code = code;
    e->rc = rc;
    e->line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return rc;
}

int patch_error_nomem(patch_error *e)
{
    patch_error_set(e, "backend_error", OCISBX_ENOMEM, 0, "out of memory");
    return ocisbx_fail_nomem();
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The line without the white space around it. */
static patch_line trimmed(const patch_line *l)
{
    patch_line t = *l;
    while (t.len && is_ws(t.text[0])) {
        t.text++;
        t.len--;
    }
    while (t.len && is_ws(t.text[t.len - 1]))
        t.len--;
    return t;
}

static bool tequals(const patch_line *l, const char *s)
{
    patch_line t = trimmed(l);
    return t.len == strlen(s) && !memcmp(t.text, s, t.len);
}

/* When the trimmed line starts with marker, *rest gets what follows it,
 * trimmed. */
static bool tprefix(const patch_line *l, const char *marker, patch_line *rest)
{
    patch_line t = trimmed(l);
    size_t m = strlen(marker);
    if (t.len < m || memcmp(t.text, marker, m))
        return false;
    if (rest) {
        rest->kind = 0;
        rest->text = t.text + m;
        rest->len = t.len - m;
        rest->no = l->no;
        *rest = trimmed(rest);
    }
    return true;
}

static bool is_blank(const patch_line *l)
{
    return trimmed(l).len == 0;
}

/* One of the markers that end a file operation's lines. */
static bool is_op_marker(const patch_line *l)
{
    return tprefix(l, M_ADD, NULL) || tprefix(l, M_DELETE, NULL) || tprefix(l, M_UPDATE, NULL) ||
           tequals(l, M_END) || tprefix(l, M_MOVE, NULL);
}

/* The line as shown in a message: at most 80 characters, escaped. */
static const char *shown(const patch_line *l, char *out, size_t cap)
{
    char tmp[100];
    size_t n = l->len < 80 ? l->len : 80;
    memcpy(tmp, l->text, n);
    tmp[n] = 0;
    ocisbx_escape_shown(tmp, out, cap);
    if (l->len > 80 && strlen(out) + 4 < cap)
        strcat(out, "...");
    return out;
}

static int split_lines(const char *text, size_t len, lines *l, patch_error *err)
{
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    l->v = calloc(n, sizeof *l->v);
    if (!l->v)
        return patch_error_nomem(err);
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && text[i] != '\n')
            continue;
        patch_line *x = &l->v[l->n];
        x->text = text + start;
        x->len = i - start;
        if (x->len && x->text[x->len - 1] == '\r')
            x->len--;
        x->no = ++l->n;
        start = i + 1;
    }
    /* a final newline does not start a line */
    if (l->n > 1 && len && text[len - 1] == '\n')
        l->n--;
    return 0;
}

static int push_line(patch_line **v, size_t *n, const patch_line *l, patch_error *err)
{
    patch_line *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv)
        return patch_error_nomem(err);
    *v = nv;
    nv[(*n)++] = *l;
    return 0;
}

/* "PATH" after a marker: non-empty, copied. */
static int take_path(parser *ps, const patch_line *rest, const char *marker, char **out)
{
    if (!rest->len)
        return perr(ps, rest->no, "expected a path after '%s'", marker);
    for (size_t i = 0; i < rest->len; i++)
        if (!rest->text[i])
            return perr(ps, rest->no, "the path after '%s' holds a NUL byte", marker);
    *out = ocisbx_strndup(rest->text, rest->len);
    return *out ? 0 : patch_error_nomem(ps->err);
}

static patch_op *new_op(parser *ps, patch_action a, size_t no)
{
    patch *p = ps->p;
    patch_op *v = realloc(p->ops, (p->n_ops + 1) * sizeof *v);
    if (!v) {
        patch_error_nomem(ps->err);
        return NULL;
    }
    p->ops = v;
    patch_op *op = &v[p->n_ops++];
    memset(op, 0, sizeof *op);
    op->action = a;
    op->no = no;
    return op;
}

/* "*** Add File: PATH" and its "+" lines. */
static int parse_add(parser *ps, patch_op *op)
{
    while (ps->i < ps->end) {
        patch_line *l = &ps->l.v[ps->i];
        if (l->len && l->text[0] == '+') {
            patch_line c = {'+', l->text + 1, l->len - 1, l->no};
            int rc = push_line(&op->lines, &op->n_lines, &c, ps->err);
            if (rc)
                return rc;
            ps->i++;
            continue;
        }
        if (is_op_marker(l))
            return 0;
        if (is_blank(l)) {
            /* blank lines may separate operations, not lines of the file */
            size_t j = ps->i;
            while (j < ps->end && is_blank(&ps->l.v[j]))
                j++;
            if (j == ps->end || is_op_marker(&ps->l.v[j])) {
                ps->i = j;
                return 0;
            }
        }
        char s[120];
        return perr(ps, l->no,
                    "expected a line starting with '+' (every line of an added file, an empty one too, is "
                    "written '+text') or the next '*** ' marker, got '%s'",
                    shown(l, s, sizeof s));
    }
    return 0;
}

/* After "@@": the context text, without a unified diff's range header
 * ("-12,7 +12,8 @@ rest" gives "rest"). */
static patch_line hunk_context(const patch_line *rest)
{
    patch_line r = *rest;
    const char *s = r.text, *e = r.text + r.len;
    for (int part = 0; part < 2; part++) {
        if (s == e || *s != (part ? '+' : '-'))
            return r;
        s++;
        const char *d = s;
        while (s < e && ((*s >= '0' && *s <= '9') || *s == ','))
            s++;
        if (s == d || s == e || *s != ' ')
            return r;
        while (s < e && *s == ' ')
            s++;
    }
    if (e - s < 2 || s[0] != '@' || s[1] != '@')
        return r;
    patch_line t = {0, s + 2, (size_t)(e - s - 2), r.no};
    return trimmed(&t);
}

/* "@@ ...": at the start of the line, or after white space other than the
 * space that makes a context line (" @@" is the context text "@@"). */
static bool is_hunk_header(const patch_line *l, patch_line *rest)
{
    if (l->len && (l->text[0] == ' ' || l->text[0] == '-' || l->text[0] == '+'))
        return false;
    return tprefix(l, "@@", rest);
}

static patch_hunk *new_hunk(parser *ps, patch_op *op, size_t no)
{
    patch_hunk *v = realloc(op->hunks, (op->n_hunks + 1) * sizeof *v);
    if (!v) {
        patch_error_nomem(ps->err);
        return NULL;
    }
    op->hunks = v;
    patch_hunk *h = &v[op->n_hunks++];
    memset(h, 0, sizeof *h);
    h->no = no;
    return h;
}

/* One line inside an Update's hunks; *cur is the open hunk (NULL: none,
 * or closed by "*** End of File"). */
static int update_line(parser *ps, patch_op *op, patch_hunk **cur, bool *closed)
{
    patch_line *l = &ps->l.v[ps->i];
    patch_line rest;
    char s[120];
    if (tequals(l, M_EOF)) {
        if (!*cur || !(*cur)->n || *closed)
            return perr(ps, l->no, "'%s' must follow the lines of a hunk", M_EOF);
        (*cur)->eof = true;
        *closed = true;
        return 0;
    }
    if (is_hunk_header(l, &rest)) {
        if (!*cur || (*cur)->n || *closed) {
            if (!(*cur = new_hunk(ps, op, l->no)))
                return ps->err->rc;
            *closed = false;
        }
        patch_line ctx = hunk_context(&rest);
        ctx.kind = '@';
        return ctx.len ? push_line(&(*cur)->ctx, &(*cur)->n_ctx, &ctx, ps->err) : 0;
    }
    if (*closed && is_blank(l))
        return 0;
    char k = l->len ? l->text[0] : ' ';
    if (k != ' ' && k != '-' && k != '+')
        return perr(ps, l->no,
                    "expected a hunk line starting with ' ' (context), '-' (removed) or '+' (added), a '@@' line, "
                    "or the next '*** ' marker, got '%s'",
                    shown(l, s, sizeof s));
    if (*closed)
        return perr(ps, l->no, "after '%s' expected a '@@' line or the next '*** ' marker, got '%s'", M_EOF,
                    shown(l, s, sizeof s));
    if (!*cur) {
        if (!l->len)
            return 0; /* a blank line before the first hunk */
        if (op->n_hunks)
            return perr(ps, l->no, "expected '@@' to start a hunk, got '%s'", shown(l, s, sizeof s));
        if (!(*cur = new_hunk(ps, op, l->no))) /* the first hunk may go without "@@" */
            return ps->err->rc;
    }
    patch_line h = {k, l->len ? l->text + 1 : l->text, l->len ? l->len - 1 : 0, l->no};
    return push_line(&(*cur)->lines, &(*cur)->n, &h, ps->err);
}

/* "*** Update File: PATH", an optional "*** Move to: PATH", its hunks. */
static int parse_update(parser *ps, patch_op *op)
{
    patch_line rest;
    if (ps->i < ps->end && tprefix(&ps->l.v[ps->i], M_MOVE, &rest)) {
        int rc = take_path(ps, &rest, M_MOVE, &op->move_to);
        if (rc)
            return rc;
        op->action = PATCH_MOVE;
        op->move_no = rest.no;
        ps->i++;
    }
    patch_hunk *cur = NULL;
    bool closed = false;
    while (ps->i < ps->end) {
        patch_line *l = &ps->l.v[ps->i];
        if (is_op_marker(l)) {
            if (tprefix(l, M_MOVE, NULL))
                return perr(ps, l->no, "'%s' must come right after its '%s' line", M_MOVE, M_UPDATE);
            break;
        }
        int rc = update_line(ps, op, &cur, &closed);
        if (rc)
            return rc;
        ps->i++;
    }
    for (size_t k = 0; k < op->n_hunks; k++)
        if (!op->hunks[k].n)
            return perr(ps, op->hunks[k].no, "the hunk has no lines (expected ' ', '-' or '+' lines after '@@')");
    if (!op->n_hunks && !op->move_to)
        return perr(ps, op->no, "'%s %s' has no hunks (expected '@@' and the lines to change)", M_UPDATE, op->path);
    return 0;
}

/* One operation at ps->i (a marker line). */
static int parse_op(parser *ps)
{
    patch_line *l = &ps->l.v[ps->i];
    patch_line rest;
    const char *marker = NULL;
    patch_action a = PATCH_ADD;
    if (tprefix(l, M_ADD, &rest))
        marker = M_ADD;
    else if (tprefix(l, M_DELETE, &rest))
        marker = M_DELETE, a = PATCH_DELETE;
    else if (tprefix(l, M_UPDATE, &rest))
        marker = M_UPDATE, a = PATCH_UPDATE;
    if (!marker) {
        char s[120];
        if (tprefix(l, M_MOVE, NULL))
            return perr(ps, l->no, "'%s' must come right after its '%s' line", M_MOVE, M_UPDATE);
        return perr(ps, l->no, "expected '%s PATH', '%s PATH', '%s PATH' or '%s', got '%s'", M_ADD, M_DELETE,
                    M_UPDATE, M_END, shown(l, s, sizeof s));
    }
    patch_op *op = new_op(ps, a, l->no);
    if (!op)
        return ps->err->rc;
    int rc = take_path(ps, &rest, marker, &op->path);
    if (rc)
        return rc;
    ps->i++;
    if (a == PATCH_ADD)
        return parse_add(ps, op);
    if (a == PATCH_UPDATE)
        return parse_update(ps, op);
    while (ps->i < ps->end && !is_op_marker(&ps->l.v[ps->i])) {
        patch_line *x = &ps->l.v[ps->i];
        if (!is_blank(x)) {
            char s[120];
            return perr(ps, x->no, "nothing follows '%s PATH'; expected the next '*** ' marker, got '%s'", M_DELETE,
                        shown(x, s, sizeof s));
        }
        ps->i++;
    }
    return 0;
}

/* The first and last non-blank lines, a heredoc around them taken off
 * (<<'EOF' ... EOF, as a shell would have given it). */
static int find_bounds(parser *ps, size_t *first, size_t *last)
{
    size_t b = 0, e = ps->l.n;
    for (int pass = 0; pass < 2; pass++) {
        while (b < e && is_blank(&ps->l.v[b]))
            b++;
        while (e > b && is_blank(&ps->l.v[e - 1]))
            e--;
        if (pass || e - b < 4)
            break;
        patch_line t = trimmed(&ps->l.v[e - 1]);
        if ((tequals(&ps->l.v[b], "<<EOF") || tequals(&ps->l.v[b], "<<'EOF'") || tequals(&ps->l.v[b], "<<\"EOF\"")) &&
            t.len >= 3 && !memcmp(t.text + t.len - 3, "EOF", 3)) {
            b++;
            e--;
        } else {
            break;
        }
    }
    if (b == e)
        return perr(ps, 1, "the patch is empty: expected '%s' as its first line", M_BEGIN);
    *first = b;
    *last = e - 1;
    return 0;
}

static int parse_body(parser *ps)
{
    size_t first = 0, last = 0;
    int rc = find_bounds(ps, &first, &last);
    if (rc)
        return rc;
    char s[120];
    if (!tequals(&ps->l.v[first], M_BEGIN))
        return perr(ps, ps->l.v[first].no, "expected '%s' as the first line, got '%s'", M_BEGIN,
                    shown(&ps->l.v[first], s, sizeof s));
    /* the body ends at the first End Patch line */
    size_t end = first + 1;
    while (end <= last && !tequals(&ps->l.v[end], M_END))
        end++;
    if (end > last) {
        if (first == last)
            return perr(ps, ps->l.v[last].no + 1, "expected '%s' as the last line", M_END);
        return perr(ps, ps->l.v[last].no, "expected '%s' as the last line, got '%s'", M_END,
                    shown(&ps->l.v[last], s, sizeof s));
    }
    if (end != last)
        return perr(ps, ps->l.v[end + 1 < ps->l.n ? end + 1 : end].no,
                    "nothing may follow '%s' (a second patch needs a second call)", M_END);
    ps->i = first + 1;
    ps->end = end;
    while (ps->i < ps->end) {
        if (is_blank(&ps->l.v[ps->i])) {
            ps->i++;
            continue;
        }
        if ((rc = parse_op(ps)))
            return rc;
    }
    if (!ps->p->n_ops)
        return perr(ps, ps->l.v[end].no, "the patch has no file operations (expected '%s', '%s' or '%s' before '%s')",
                    M_ADD, M_DELETE, M_UPDATE, M_END);
    return 0;
}

int patch_parse(const char *text, size_t len, patch **out, patch_error *err)
{
    memset(err, 0, sizeof *err);
    *out = NULL;
    patch *p = calloc(1, sizeof *p);
    if (!p)
        return patch_error_nomem(err);
    p->text = malloc(len + 1);
    if (!p->text) {
        free(p);
        return patch_error_nomem(err);
    }
    if (len)
        memcpy(p->text, text, len);
    p->text[len] = 0;
    parser ps = {.p = p, .err = err};
    int rc = split_lines(p->text, len, &ps.l, err);
    if (!rc)
        rc = parse_body(&ps);
    free(ps.l.v);
    if (rc) {
        patch_free(p);
        if (rc == OCISBX_EINVAL) /* the thread's error too, like every status */
            ocisbx_fail(OCISBX_EINVAL, "apply_patch: %s", err->msg);
        return rc;
    }
    *out = p;
    return 0;
}

void patch_free(patch *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_ops; i++) {
        patch_op *op = &p->ops[i];
        free(op->path);
        free(op->move_to);
        free(op->lines);
        for (size_t k = 0; k < op->n_hunks; k++) {
            free(op->hunks[k].ctx);
            free(op->hunks[k].lines);
        }
        free(op->hunks);
    }
    free(p->ops);
    free(p->text);
    free(p);
}
