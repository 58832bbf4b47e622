/* apply_patch's two halves around the files (see patch.h): prepare
 * (resolve, read, match: nothing written) and commit (write, remove, and
 * undo on any failure), both through a patch_io. */
#include "harness/patch.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocisbx/common.h"
#include "util/internal.h"

/* The error code for a failed patch_io call. */
static const char *io_code(int rc)
{
    switch (rc) {
    case OCISBX_ENOTFOUND: return "not_found";
    case OCISBX_EISDIR: return "is_directory";
    case OCISBX_EFORBIDDEN: return "outside_workspace";
    case OCISBX_ETOOLARGE: return "too_large";
    case OCISBX_EBINARY: return "binary_file";
    case OCISBX_ECONFLICT: return "conflict";
    case OCISBX_ECANCELED: return "canceled";
    default: return "backend_error";
    }
}

/* A patch_io failure: what was done (line, verb, path) and the library's message. */
static int io_err(patch_error *e, int rc, size_t line, const char *what, const char *path)
{
    const char *m = ocisbx_error_message(ocisbx_error_last());
    return patch_error_set(e, io_code(rc), rc ? rc : OCISBX_EIO, line, "line %zu: %s %s: %s", line, what, path,
                m && m[0] ? m : ocisbx_strerror(rc));
}

void patch_plan_free(patch_plan *plan)
{
    for (size_t i = 0; plan && i < plan->n; i++) {
        patch_change *c = &plan->v[i];
        free(c->path);
        free(c->moved_to);
        free(c->old_data);
        free(c->new_data);
        free(c->target_old);
    }
    if (plan) {
        free(plan->v);
        plan->v = NULL;
        plan->n = 0;
    }
}

static int resolve(const patch_io *io, const char *path, size_t line, char **abs, patch_error *err)
{
    int rc = io->resolve(io->ud, path, abs);
    if (!rc)
        return 0;
    char shown[300];
    ocisbx_escape_shown(path, shown, sizeof shown);
    if (rc == OCISBX_EFORBIDDEN)
        return patch_error_set(err, "outside_workspace", rc, line,
                    "line %zu: %s is outside the workspace: paths are relative to /workspace or absolute under it",
                    line, shown);
    return io_err(err, rc, line, "the path", shown);
}

typedef struct seen {
    const char *path;
    size_t line;
} seen;

static int cmp_seen(const void *a, const void *b)
{
    const seen *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* Each path (as path or Move target) at most once in a patch. */
static int check_unique(const patch_plan *plan, patch_error *err)
{
    seen *v = malloc((2 * plan->n + 1) * sizeof *v);
    if (!v)
        return patch_error_set(err, "backend_error", ocisbx_fail_nomem(), 0, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < plan->n; i++) {
        v[n++] = (seen){plan->v[i].path, plan->v[i].no};
        if (plan->v[i].moved_to)
            v[n++] = (seen){plan->v[i].moved_to, plan->v[i].no};
    }
    qsort(v, n, sizeof *v, cmp_seen);
    int rc = 0;
    for (size_t i = 0; !rc && i + 1 < n; i++)
        if (!strcmp(v[i].path, v[i + 1].path))
            rc = patch_error_set(err, "conflict", OCISBX_ECONFLICT, v[i + 1].line,
                      "lines %zu and %zu: the patch changes %s twice; give each file one operation (an Update may "
                      "have many hunks)",
                      v[i].line, v[i + 1].line, v[i].path);
    free(v);
    return rc;
}

/* Reads a file the operation needs; ENOTFOUND is *exists false when
 * may_be_missing. The sizes read count against PATCH_TOTAL_MAX. */
static int read_file(const patch_io *io, const char *path, size_t line, const char *what, bool may_be_missing,
                     bool *exists, char **data, size_t *len, size_t *total, patch_error *err)
{
    *data = NULL;
    *len = 0;
    *exists = false;
    int rc = io->read(io->ud, path, PATCH_FILE_MAX, data, len);
    if (rc == OCISBX_ENOTFOUND && may_be_missing)
        return 0;
    if (rc == OCISBX_ENOTFOUND)
        return patch_error_set(err, "not_found", rc, line, "line %zu: %s %s: the file does not exist%s", line, what, path,
                    strcmp(what, "Delete File") ? " ('*** Add File' creates a file)" : "");
    if (rc == OCISBX_EISDIR)
        return patch_error_set(err, "is_directory", rc, line, "line %zu: %s %s: it is a directory, not a file", line, what,
                    path);
    if (rc)
        return io_err(err, rc, line, what, path);
    *exists = true;
    *total += *len;
    if (*len > PATCH_FILE_MAX || *total > PATCH_TOTAL_MAX)
        return patch_error_set(err, "too_large", OCISBX_ETOOLARGE, line,
                    "line %zu: %s %s: the files of one patch may hold at most %u bytes (one file %u): split the patch",
                    line, what, path, PATCH_TOTAL_MAX, PATCH_FILE_MAX);
    return 0;
}

static int prepare_add(const patch_op *op, patch_change *c, size_t *total, patch_error *err)
{
    ocisbx_buf b = OCISBX_BUF_INIT;
    int rc = ocisbx_buf_append(&b, "", 0);
    for (size_t k = 0; !rc && k < op->n_lines; k++) {
        rc = ocisbx_buf_append(&b, op->lines[k].text, op->lines[k].len);
        if (!rc)
            rc = ocisbx_buf_appends(&b, "\n");
    }
    if (rc) {
        ocisbx_buf_free(&b);
        return patch_error_set(err, "backend_error", rc, op->no, "out of memory");
    }
    c->new_len = b.len;
    c->new_data = ocisbx_buf_detach(&b);
    *total += c->new_len;
    if (c->new_len > PATCH_FILE_MAX || *total > PATCH_TOTAL_MAX)
        return patch_error_set(err, "too_large", OCISBX_ETOOLARGE, op->no, "line %zu: Add File %s: more than %u bytes", op->no,
                    c->path, PATCH_FILE_MAX);
    return 0;
}

/* One operation's reads and new content. */
static int prepare_op(const patch_op *op, const patch_io *io, patch_change *c, size_t *total, patch_error *err)
{
    static const char *const what[] = {"Add File", "Update File", "Delete File", "Update File"};
    int rc = read_file(io, c->path, op->no, what[op->action], op->action == PATCH_ADD, &c->existed, &c->old_data,
                       &c->old_len, total, err);
    if (rc)
        return rc;
    if (op->action == PATCH_ADD)
        return prepare_add(op, c, total, err);
    if (op->action == PATCH_DELETE)
        return 0;
    rc = patch_apply_hunks(op, c->path, c->old_data ? c->old_data : "", c->old_len, &c->new_data, &c->new_len, err);
    if (rc)
        return rc;
    *total += c->new_len;
    if (*total > PATCH_TOTAL_MAX)
        return patch_error_set(err, "too_large", OCISBX_ETOOLARGE, op->no, "line %zu: the patch's files exceed %u bytes", op->no,
                    PATCH_TOTAL_MAX);
    if (c->action == PATCH_MOVE)
        return read_file(io, c->moved_to, op->move_no, "Move to", true, &c->target_existed, &c->target_old,
                         &c->target_old_len, total, err);
    return 0;
}

int patch_prepare(const patch *p, const patch_io *io, patch_plan *plan, patch_error *err)
{
    memset(err, 0, sizeof *err);
    plan->v = calloc(p->n_ops + 1, sizeof *plan->v);
    plan->n = 0;
    if (!plan->v)
        return patch_error_set(err, "backend_error", ocisbx_fail_nomem(), 0, "out of memory");
    int rc = 0;
    /* every path first: one outside the workspace refuses the patch before any read */
    for (size_t i = 0; !rc && i < p->n_ops; i++) {
        const patch_op *op = &p->ops[i];
        patch_change *c = &plan->v[plan->n++];
        c->action = op->action;
        c->no = op->no;
        rc = resolve(io, op->path, op->no, &c->path, err);
        if (!rc && op->move_to)
            rc = resolve(io, op->move_to, op->move_no, &c->moved_to, err);
        if (!rc && c->moved_to && !strcmp(c->moved_to, c->path)) {
            free(c->moved_to); /* moved onto itself: an update */
            c->moved_to = NULL;
            c->action = PATCH_UPDATE;
        }
    }
    if (!rc)
        rc = check_unique(plan, err);
    size_t total = 0;
    for (size_t i = 0; !rc && i < p->n_ops; i++)
        rc = prepare_op(&p->ops[i], io, &plan->v[i], &total, err);
    if (rc) {
        patch_plan_free(plan);
        ocisbx_fail(rc, "apply_patch: %s", err->msg);
    }
    return rc;
}

/* ---- commit ----------------------------------------------------------------------- */
typedef struct step {
    size_t change;
    bool removal;
} step;

static const char *target_of(const patch_change *c)
{
    return c->moved_to ? c->moved_to : c->path;
}

/* Undoes the steps done, last first; the paths that could not be restored
 * go into failed. */
static void undo(const patch_plan *plan, const patch_io *io, const step *done, size_t n, ocisbx_buf *failed)
{
    while (n--) {
        const patch_change *c = &plan->v[done[n].change];
        const char *path = done[n].removal ? c->path : target_of(c);
        int rc;
        if (done[n].removal)
            rc = io->write(io->ud, path, c->old_data ? c->old_data : "", c->old_len);
        else if (c->moved_to ? c->target_existed : c->existed)
            rc = c->moved_to ? io->write(io->ud, path, c->target_old ? c->target_old : "", c->target_old_len)
                             : io->write(io->ud, path, c->old_data ? c->old_data : "", c->old_len);
        else
            rc = io->remove(io->ud, path);
        if (rc)
            ocisbx_buf_appendf(failed, "%s%s", failed->len ? ", " : "", path);
    }
}

/* The step's error, and what the undo achieved. */
static int commit_failed(const patch_plan *plan, const patch_io *io, const step *done, size_t n, int rc,
                         const patch_change *c, bool removal, patch_error *err)
{
    const char *m = ocisbx_error_message(ocisbx_error_last());
    char msg[700];
    snprintf(msg, sizeof msg, "%s %s: %s", removal ? "removing" : "writing", removal ? c->path : target_of(c),
             m && m[0] ? m : ocisbx_strerror(rc));
    ocisbx_buf failed = OCISBX_BUF_INIT;
    undo(plan, io, done, n, &failed);
    err->undo_failed = failed.len > 0;
    if (failed.len)
        patch_error_set(err, io_code(rc), rc, c->no,
             "%s; the patch was not applied, but restoring failed for %.*s: those files are left as the patch "
             "made them",
             msg, (int)failed.len, failed.data);
    else
        patch_error_set(err, io_code(rc), rc, c->no, "%s; the patch was not applied: %s", msg,
             n ? "the files already changed were restored" : "no file was changed");
    ocisbx_buf_free(&failed);
    ocisbx_fail(rc, "apply_patch: %s", err->msg);
    return rc;
}

int patch_commit(const patch_plan *plan, const patch_io *io, patch_error *err)
{
    memset(err, 0, sizeof *err);
    step *done = calloc(2 * plan->n + 1, sizeof *done);
    if (!done)
        return patch_error_set(err, "backend_error", ocisbx_fail_nomem(), 0, "out of memory");
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < plan->n; i++) {
        const patch_change *c = &plan->v[i];
        if (!c->new_data)
            continue;
        if (c->action == PATCH_UPDATE && c->new_len == c->old_len &&
            (!c->old_len || !memcmp(c->new_data, c->old_data, c->old_len)))
            continue; /* unchanged: nothing to write */
        if ((rc = io->write(io->ud, target_of(c), c->new_data, c->new_len))) {
            rc = commit_failed(plan, io, done, n, rc, c, false, err);
            break;
        }
        done[n++] = (step){i, false};
    }
    for (size_t i = 0; !rc && i < plan->n; i++) {
        const patch_change *c = &plan->v[i];
        if (c->action != PATCH_DELETE && c->action != PATCH_MOVE)
            continue;
        if ((rc = io->remove(io->ud, c->path))) {
            rc = commit_failed(plan, io, done, n, rc, c, true, err);
            break;
        }
        done[n++] = (step){i, true};
    }
    free(done);
    return rc;
}
