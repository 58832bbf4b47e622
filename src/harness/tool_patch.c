/* apply_patch (row in tool_table.c): the patch engine (patch.h) over the
 * backend. The patch is parsed and its paths taken before the gate
 * (call_patch_paths, from call.c), so the gate's path rules decide on every
 * file it names, Move targets included; the tool then prepares every hunk
 * of every file (nothing written) and commits through the backend's
 * checked, atomic writes, undoing what was done when a step fails. */
#include <stdlib.h>
#include <string.h>

#include "harness/call.h"
#include "ocisbx/backend.h"
#include "util/diff.h"

/* The most files one patch names (paths and Move targets). */
#define PATCH_PATHS_MAX 1000
#define WS "/workspace"

void call_paths_free(harness_call *c)
{
    for (size_t i = 0; i < c->n_paths; i++) {
        free(c->paths[i].path);
        free(c->paths[i].resolved);
        if (c->ev_paths)
            free(c->ev_paths[i]);
    }
    free(c->paths);
    free(c->ev_paths);
    patch_free(c->patch);
    c->paths = NULL;
    c->ev_paths = NULL;
    c->patch = NULL;
    c->n_paths = 0;
}

static const call_path *find_path(const harness_call *c, const char *given)
{
    for (size_t i = 0; i < c->n_paths; i++)
        if (!strcmp(c->paths[i].given, given))
            return &c->paths[i];
    return NULL;
}

/* The normalised path, resolved when the policy decides on paths. */
static int normalise_one(harness_call *c, const char *given, size_t line, call_path *out)
{
    char shown[300];
    ocisbx_escape_shown(given, shown, sizeof shown);
    char *p = NULL;
    int rc = ocisbx_backend_workspace_path(given, &p);
    if (rc == OCISBX_EFORBIDDEN)
        return call_error(c, "outside_workspace", rc,
                          "line %zu: %s is outside the workspace: paths are relative to /workspace or absolute under "
                          "it; nothing was changed",
                          line, shown);
    if (rc)
        return call_backend_failure(c, rc);
    out->path = ocisbx_strdup(p);
    ocisbx_free(p);
    if (!out->path)
        return call_backend_failure(c, ocisbx_fail_nomem());
    ocisbx_policy *pol = c->h->policy;
    if (!pol || !harness_policy_has_path_rules(pol))
        return 0;
    char *r = NULL;
    rc = ocisbx_backend_resolve_path(c->h->b, out->path, &r);
    if (rc == OCISBX_EFORBIDDEN)
        return call_error(c, "outside_workspace", rc,
                          "line %zu: %s leads outside the workspace (through a symlink); nothing was changed", line,
                          shown);
    if (rc)
        return call_backend_failure(c, rc);
    out->resolved = ocisbx_strdup(r);
    ocisbx_free(r);
    return out->resolved ? 0 : call_backend_failure(c, ocisbx_fail_nomem());
}

static int add_path(harness_call *c, const char *given, size_t line)
{
    if (find_path(c, given))
        return 0; /* the engine reports the conflict */
    if (c->n_paths >= PATCH_PATHS_MAX)
        return call_error(c, "too_large", OCISBX_ETOOLARGE,
                          "line %zu: a patch may name at most %d files: split it into several patches", line,
                          PATCH_PATHS_MAX);
    call_path *v = realloc(c->paths, (c->n_paths + 1) * sizeof *v);
    if (!v)
        return call_backend_failure(c, ocisbx_fail_nomem());
    c->paths = v;
    call_path *e = &v[c->n_paths++];
    memset(e, 0, sizeof *e);
    e->given = given;
    return normalise_one(c, given, line, e);
}

int call_patch_paths(harness_call *c, const char *text)
{
    patch_error err;
    memset(&err, 0, sizeof err);
    int rc = patch_parse(text, strlen(text), &c->patch, &err);
    if (rc)
        return call_error(c, err.code ? err.code : "invalid_patch", rc, "%s", err.msg);
    for (size_t i = 0; !rc && i < c->patch->n_ops; i++) {
        const patch_op *op = &c->patch->ops[i];
        rc = add_path(c, op->path, op->no);
        if (!rc && op->move_to)
            rc = add_path(c, op->move_to, op->move_no);
    }
    if (rc || !c->n_paths)
        return rc;
    c->path = ocisbx_strdup(c->paths[0].path);
    c->resolved = c->paths[0].resolved ? ocisbx_strdup(c->paths[0].resolved) : NULL;
    if (!c->path || (c->paths[0].resolved && !c->resolved))
        return call_backend_failure(c, ocisbx_fail_nomem());
    return 0;
}

/* ---- reading, diff labels ------------------------------------------------------- */
typedef struct sink {
    ocisbx_buf b;
    size_t max;
    bool over;
} sink;

static int sink_write(const void *data, size_t len, void *ud)
{
    sink *s = ud;
    if (len > s->max - s->b.len) {
        s->over = true;
        return 1;
    }
    return ocisbx_buf_append(&s->b, data, len) != 0;
}

int call_read_file(harness_call *c, const char *path, size_t max, char **data, size_t *len)
{
    sink s = {OCISBX_BUF_INIT, max, false};
    *data = NULL;
    *len = 0;
    int rc = ocisbx_buf_append(&s.b, "", 0);
    if (!rc)
        rc = ocisbx_backend_read_to_callback(c->h->b, path, sink_write, &s);
    if (s.over) {
        char shown[300];
        ocisbx_escape_shown(path, shown, sizeof shown);
        rc = ocisbx_fail(OCISBX_ETOOLARGE, "%s is more than %zu bytes", shown, max);
    }
    if (rc) {
        ocisbx_buf_free(&s.b);
        return rc;
    }
    *len = s.b.len;
    *data = ocisbx_buf_detach(&s.b);
    return *data ? 0 : ocisbx_fail_nomem();
}

char *call_diff_label(const char *prefix, const char *path)
{
    const char *rel = path;
    if (!strncmp(path, WS "/", sizeof WS))
        rel = path + sizeof WS;
    else if (!strcmp(path, WS))
        rel = "";
    return ocisbx_diff_label(prefix, rel);
}

/* ---- the engine's io -------------------------------------------------------------- */
static int io_resolve(void *ud, const char *path, char **abs)
{
    harness_call *c = ud;
    const call_path *p = find_path(c, path);
    if (!p)
        return ocisbx_fail(OCISBX_EINVAL, "apply_patch: %s was not taken before the gate", path);
    *abs = ocisbx_strdup(p->resolved ? p->resolved : p->path);
    return *abs ? 0 : ocisbx_fail_nomem();
}

static int io_read(void *ud, const char *path, size_t max, char **data, size_t *len)
{
    return call_read_file(ud, path, max, data, len);
}

static int io_write(void *ud, const char *path, const char *data, size_t len)
{
    harness_call *c = ud;
    return ocisbx_backend_write(c->h->b, path, data, len);
}

/* Removes one file (not a directory) in the workspace: its directory's
 * symlinks resolved there and checked to stay under the workspace; a
 * symlink itself is removed, not what it points to. The backend has no
 * remove of its own: one small script run. */
static const char RM_SCRIPT[] = "w=$(pwd -P) || exit 95\n"
                                "d=$(cd -P -- \"$(dirname -- \"$1\")\" 2>/dev/null && pwd -P) || exit 92\n"
                                "case $d/ in \"$w\"/*) ;; *) exit 93 ;; esac\n"
                                "f=$d/$(basename -- \"$1\")\n"
                                "[ -e \"$f\" ] || [ -L \"$f\" ] || exit 92\n"
                                "if [ -d \"$f\" ] && [ ! -L \"$f\" ]; then exit 94; fi\n"
                                "rm -f -- \"$f\" || exit 95\n";

static int io_remove(void *ud, const char *path)
{
    harness_call *c = ud;
    char shown[300];
    ocisbx_escape_shown(path, shown, sizeof shown);
    if (strncmp(path, WS "/", sizeof WS) || !path[sizeof WS])
        return ocisbx_fail(OCISBX_EFORBIDDEN, "remove %s: not a file under /workspace", shown);
    ocisbx_buf rel = OCISBX_BUF_INIT;
    ocisbx_exec_options *o = NULL;
    ocisbx_exec_result *r = NULL;
    int rc = ocisbx_buf_appendf(&rel, "./%s", path + sizeof WS);
    if (!rc)
        rc = ocisbx_exec_options_new(&o);
    if (!rc)
        rc = ocisbx_exec_options_set_timeout_ms(o, 60000);
    const char *argv[] = {"sh", "-c", RM_SCRIPT, "sh", rel.data};
    if (!rc)
        rc = ocisbx_backend_exec_argv(c->h->b, argv, 5, o, &r);
    int code = -1;
    if (!rc && ocisbx_exec_result_has_exit_code(r, &code) != 1)
        code = -1;
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
    ocisbx_buf_free(&rel);
    if (rc || code == 0)
        return rc;
    switch (code) {
    case 92: return ocisbx_fail(OCISBX_ENOTFOUND, "remove %s: the file does not exist", shown);
    case 93: return ocisbx_fail(OCISBX_EFORBIDDEN, "remove %s: it leads outside the workspace", shown);
    case 94: return ocisbx_fail(OCISBX_EISDIR, "remove %s: it is a directory", shown);
    default: return ocisbx_fail(OCISBX_EIO, "remove %s: failed in the workspace (exit status %d)", shown, code);
    }
}

/* ---- the result ------------------------------------------------------------------- */
/* The normalised path (as the model named it) of a patch path. */
static const char *shown_path(const harness_call *c, const char *given)
{
    const call_path *p = find_path(c, given);
    return p ? p->path : given;
}

/* One file's part of the diff: a/ old (or /dev/null), b/ new (or /dev/null). */
static int diff_change(ocisbx_diff *d, const patch_change *ch, const char *from, const char *to)
{
    bool added = !ch->existed, deleted = !ch->new_data;
    char *a = added ? ocisbx_strdup("/dev/null") : call_diff_label("a/", from);
    char *b = deleted ? ocisbx_strdup("/dev/null") : call_diff_label("b/", to ? to : from);
    int rc = a && b ? ocisbx_diff_file(d, a, b, ch->old_data ? ch->old_data : "", ch->old_len,
                                       ch->new_data ? ch->new_data : "", ch->new_len)
                    : ocisbx_fail_nomem();
    free(a);
    free(b);
    return rc;
}

static int patch_result(harness_call *c, const patch_plan *plan)
{
    cJSON *files = cJSON_AddArrayToObject(c->result, "files");
    ocisbx_diff d;
    ocisbx_diff_init(&d, CALL_DIFF_MAX);
    int rc = files ? 0 : ocisbx_fail_nomem();
    for (size_t i = 0; !rc && i < plan->n; i++) {
        const patch_change *ch = &plan->v[i];
        const patch_op *op = &c->patch->ops[i];
        const char *from = shown_path(c, op->path);
        const char *to = ch->moved_to && op->move_to ? shown_path(c, op->move_to) : NULL;
        cJSON *f = cJSON_CreateObject();
        if (!f || !cJSON_AddItemToArray(files, f)) {
            cJSON_Delete(f);
            rc = ocisbx_fail_nomem();
            break;
        }
        call_add_redacted(c->h, f, "path", from);
        cJSON_AddStringToObject(f, "action", patch_action_name(ch->action));
        if (to)
            call_add_redacted(c->h, f, "moved_to", to);
        else
            cJSON_AddNullToObject(f, "moved_to");
        rc = diff_change(&d, ch, from, to);
    }
    char *text = NULL;
    size_t len = 0;
    if (!rc)
        rc = ocisbx_diff_finish(&d, &text, &len, NULL);
    ocisbx_diff_free(&d);
    if (!rc)
        call_add_redacted_len(c->h, c->result, "diff", text, len);
    free(text);
    return rc;
}

int harness_tool_apply_patch(harness_call *c)
{
    if (!c->patch)
        return call_error(c, "invalid_patch", OCISBX_EINVAL, "no patch");
    patch_io io = {io_resolve, io_read, io_write, io_remove, c};
    patch_plan plan = {NULL, 0};
    patch_error err;
    int rc = patch_prepare(c->patch, &io, &plan, &err);
    if (!rc)
        rc = patch_commit(&plan, &io, &err);
    if (rc) {
        patch_plan_free(&plan);
        return call_error(c, err.code ? err.code : "backend_error", rc, "%s", err.msg);
    }
    rc = patch_result(c, &plan);
    patch_plan_free(&plan);
    if (rc) /* the patch is applied: only its description is missing */
        return call_backend_failure(c, rc);
    return 0;
}
