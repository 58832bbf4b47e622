/* The backend: options, dispatch to the implementation's vtable, and the
 * helpers every generic operation shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "backend/scripts.h"
#include "ocisbx/util.h"
#include "util/internal.h"

/* ---- options ---- */
int ocisbx_backend_options_new(ocisbx_backend_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "backend options: NULL out");
    *out = calloc(1, sizeof **out);
    if (!*out)
        return ocisbx_fail_nomem();
    (*out)->isolate = -1;
    (*out)->network = -1;
    (*out)->client_margin_ms = -1;
    return 0;
}

void ocisbx_backend_options_free(ocisbx_backend_options *o)
{
    if (!o)
        return;
    free(o->runtime);
    free(o->shape);
    free(o->expiration);
    free(o->warmpool);
    free(o->display_name);
    free(o->config_file);
    free(o->profile);
    free(o->region);
    free(o->endpoint);
    free(o->ca_bundle);
    ocisbx_env_list_free(&o->env);
    free(o);
}

static int set_str(ocisbx_backend_options *o, char **field, const char *v, const char *what)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "backend options: NULL options (%s)", what);
    char *c = NULL;
    if (v && !(c = ocisbx_strdup(v)))
        return ocisbx_fail_nomem();
    free(*field);
    *field = c;
    return 0;
}

int ocisbx_backend_options_set_runtime(ocisbx_backend_options *o, const char *v)
{
    return set_str(o, o ? &o->runtime : NULL, v, "runtime");
}
int ocisbx_backend_options_set_shape(ocisbx_backend_options *o, const char *v)
{
    return set_str(o, o ? &o->shape : NULL, v, "shape");
}
int ocisbx_backend_options_set_expiration(ocisbx_backend_options *o, const char *v)
{
    return set_str(o, o ? &o->expiration : NULL, v, "expiration");
}
int ocisbx_backend_options_set_warmpool_name(ocisbx_backend_options *o, const char *v)
{
    return set_str(o, o ? &o->warmpool : NULL, v, "warmpool_name");
}
int ocisbx_backend_options_set_display_name(ocisbx_backend_options *o, const char *v)
{
    return set_str(o, o ? &o->display_name : NULL, v, "display_name");
}
int ocisbx_backend_options_set_config_file(ocisbx_backend_options *o, const char *v)
{
    return set_str(o, o ? &o->config_file : NULL, v, "config_file");
}
int ocisbx_backend_options_set_profile(ocisbx_backend_options *o, const char *v)
{
    return set_str(o, o ? &o->profile : NULL, v, "profile");
}
int ocisbx_backend_options_set_region(ocisbx_backend_options *o, const char *v)
{
    return set_str(o, o ? &o->region : NULL, v, "region");
}
int ocisbx_backend_options_set_endpoint(ocisbx_backend_options *o, const char *v)
{
    return set_str(o, o ? &o->endpoint : NULL, v, "endpoint");
}

int ocisbx_backend_options_set_ca_bundle(ocisbx_backend_options *o, const char *path)
{
    return set_str(o, o ? &o->ca_bundle : NULL, path, "ca_bundle");
}

int ocisbx_backend_options_add_env(ocisbx_backend_options *o, const char *name, const char *value, int secret)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "backend options: NULL options (env)");
    return ocisbx_env_list_add(&o->env, name, value, secret != 0);
}

int ocisbx_backend_options_set_max_output_bytes(ocisbx_backend_options *o, size_t n)
{
    if (!o || n < OCISBX_BACKEND_MIN_MAX_OUTPUT)
        return ocisbx_fail(OCISBX_EINVAL, "max_output_bytes must be at least %d", OCISBX_BACKEND_MIN_MAX_OUTPUT);
    o->max_output = n;
    return 0;
}

int ocisbx_backend_options_set_ready_timeout_ms(ocisbx_backend_options *o, int64_t ms)
{
    if (!o || ms <= 0)
        return ocisbx_fail(OCISBX_EINVAL, "ready_timeout must be positive");
    o->ready_timeout_ms = ms;
    return 0;
}

int ocisbx_backend_options_set_poll_interval_ms(ocisbx_backend_options *o, int64_t ms)
{
    if (!o || ms <= 0)
        return ocisbx_fail(OCISBX_EINVAL, "poll_interval must be positive");
    o->poll_interval_ms = ms;
    return 0;
}

int ocisbx_backend_poll_interval_ms(const ocisbx_backend_options *o, int64_t *ms)
{
    if (o && o->poll_interval_ms > 0) {
        *ms = o->poll_interval_ms;
        return 0;
    }
    return ocisbx_setting_poll_interval_ms(NULL, ms, NULL);
}

int64_t ocisbx_backend_wait_poll_ms(int64_t interval_ms, ocisbx_wait_kind kind)
{
    int64_t cap = kind == OCISBX_WAIT_STOPPED  ? OCISBX_BACKEND_STOP_POLL_MS
                  : kind == OCISBX_WAIT_KILLED ? OCISBX_BACKEND_KILL_POLL_MS
                                               : interval_ms;
    return interval_ms > 0 && interval_ms < cap ? interval_ms : cap;
}

int ocisbx_backend_options_set_client(ocisbx_backend_options *o, ocisbx_client *client)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "backend options: NULL options (client)");
    o->client = client;
    return 0;
}

int ocisbx_backend_options_set_cancel(ocisbx_backend_options *o, ocisbx_backend_cancel_fn fn, void *user_data)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "backend options: NULL options (cancel)");
    o->cancel = fn;
    o->cancel_ud = user_data;
    return 0;
}

int ocisbx_backend_options_set_isolation(ocisbx_backend_options *o, int isolate)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "backend options: NULL options (isolation)");
    o->isolate = isolate != 0;
    return 0;
}

int ocisbx_backend_options_set_network(ocisbx_backend_options *o, int allow)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "backend options: NULL options (network)");
    o->network = allow != 0;
    return 0;
}

int ocisbx_backend_options_set_kill_grace_s(ocisbx_backend_options *o, int seconds)
{
    if (!o || seconds < 1 || seconds > 60)
        return ocisbx_fail(OCISBX_EINVAL, "kill_grace must be 1..60 seconds");
    o->kill_grace_s = seconds;
    return 0;
}

int ocisbx_backend_options_set_client_margin_ms(ocisbx_backend_options *o, int64_t ms)
{
    if (!o || ms < 0 || ms > 3600000)
        return ocisbx_fail(OCISBX_EINVAL, "client_margin must be 0..3600000 ms");
    o->client_margin_ms = ms;
    return 0;
}

int ocisbx_backend_options_set_stop_timeout_ms(ocisbx_backend_options *o, int64_t ms)
{
    if (!o || ms <= 0)
        return ocisbx_fail(OCISBX_EINVAL, "stop_timeout must be positive");
    o->stop_timeout_ms = ms;
    return 0;
}

const char *ocisbx_backend_setting(const char *opt, const char *name)
{
    return ocisbx_setting_lookup(name, opt, NULL, NULL);
}

int ocisbx_backend_options_set_parallel_parts(ocisbx_backend_options *o, int parts)
{
    if (!o || parts < 1 || parts > OCISBX_BACKEND_MAX_PARALLEL_PARTS)
        return ocisbx_fail(OCISBX_EINVAL, "parallel parts: %d is not 1..%d", parts,
                           OCISBX_BACKEND_MAX_PARALLEL_PARTS);
    o->parallel_parts = parts;
    return 0;
}

/* ---- the backend ---- */
int ocisbx_backend_init_common(ocisbx_backend *b, const ocisbx_backend_vt *vt, const ocisbx_backend_options *o)
{
    b->vt = vt;
    b->max_output = (o && o->max_output) ? o->max_output : OCISBX_BACKEND_DEFAULT_MAX_OUTPUT;
    b->kill_grace_s = o && o->kill_grace_s ? o->kill_grace_s : OCISBX_BACKEND_KILL_GRACE_S;
    b->client_margin_ms = o && o->client_margin_ms >= 0 ? o->client_margin_ms : OCISBX_BACKEND_CLIENT_MARGIN_MS;
    b->poll_ms = o ? o->poll_interval_ms : 0;
    b->parallel_parts = o && o->parallel_parts ? o->parallel_parts : OCISBX_BACKEND_DEFAULT_PARALLEL_PARTS;
    if (o) {
        b->cancel = o->cancel;
        b->cancel_ud = o->cancel_ud;
        for (size_t i = 0; i < o->env.n; i++) {
            int rc = ocisbx_env_list_add(&b->env, o->env.v[i].name, o->env.v[i].value, o->env.v[i].secret);
            if (rc)
                return rc;
        }
    }
    return 0;
}

bool ocisbx_backend_canceled(const ocisbx_backend *b)
{
    return b->cancel && b->cancel(b->cancel_ud) != 0;
}

int ocisbx_backend_create(const char *project_id, const ocisbx_backend_options *o, ocisbx_backend **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "backend create: NULL out");
    *out = NULL;
    const char *p = ocisbx_backend_setting(project_id, "project_id");
    char vars[160];
    if (!p)
        return ocisbx_fail(OCISBX_ECONFIG, "backend create: no project id (give one or set %s)",
                           ocisbx_setting_variables("project_id", vars, sizeof vars));
    return ocisbx_backend_oci_open(p, NULL, o, out);
}

int ocisbx_backend_connect(const char *sandbox_id, const ocisbx_backend_options *o, ocisbx_backend **out)
{
    if (!out || !sandbox_id || !*sandbox_id)
        return ocisbx_fail(OCISBX_EINVAL, "backend connect: a sandbox id is needed");
    *out = NULL;
    return ocisbx_backend_oci_open(NULL, sandbox_id, o, out);
}

int ocisbx_backend_local(const char *dir, const ocisbx_backend_options *o, ocisbx_backend **out)
{
    if (!out || !dir || !*dir)
        return ocisbx_fail(OCISBX_EINVAL, "backend local: a directory is needed");
    *out = NULL;
    return ocisbx_backend_local_open(dir, o, out);
}

const char *ocisbx_backend_label(const ocisbx_backend *b)
{
    return b ? b->label : NULL;
}

const char *ocisbx_backend_kind(const ocisbx_backend *b)
{
    return b ? b->vt->kind : NULL;
}

int ocisbx_backend_is_host_shell(const ocisbx_backend *b)
{
    return b && b->host_shell;
}

const char *ocisbx_backend_sandbox_id(const ocisbx_backend *b)
{
    return b ? b->sandbox_id : NULL;
}

ocisbx_client *ocisbx_backend_client(const ocisbx_backend *b)
{
    return b ? b->client : NULL;
}

unsigned ocisbx_backend_close_flags(const ocisbx_backend *b)
{
    return b ? b->close_flags : 0;
}

int ocisbx_backend_detach_jobs(ocisbx_backend *b)
{
    if (!b)
        return ocisbx_fail(OCISBX_EINVAL, "detach jobs: NULL backend");
    b->jobs_detached = true;
    return 0;
}

int ocisbx_backend_extend(ocisbx_backend *b, const char *duration, char **time_expires)
{
    if (!b || !duration)
        return ocisbx_fail(OCISBX_EINVAL, "backend extend: NULL argument");
    if (time_expires)
        *time_expires = NULL;
    if (b->closed)
        return ocisbx_fail(OCISBX_ECONFLICT, "backend extend: the backend is closed");
    if (!b->vt->extend)
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "backend extend: a %s backend has no lifetime", b->vt->kind);
    int64_t ms = 0;
    int rc = ocisbx_duration_parse(duration, &ms);
    if (rc)
        return rc;
    return b->vt->extend(b, duration, time_expires);
}

int ocisbx_backend_close(ocisbx_backend *b)
{
    if (!b)
        return 0;
    if (b->closed)
        return 0;
    int rc = b->vt->close ? b->vt->close(b) : ocisbx_backend_close_common(b);
    if (rc == 0 || (b->close_flags & (OCISBX_CLOSE_DELETED | OCISBX_CLOSE_ALREADY_GONE)))
        b->closed = true;
    return rc;
}

void ocisbx_backend_free(ocisbx_backend *b)
{
    if (!b)
        return;
    if (!b->closed) {
        ocisbx_error_saved *s = ocisbx_error_save();
        (void)ocisbx_backend_close(b);
        ocisbx_error_restore(s);
    }
    if (b->vt->free)
        b->vt->free(b);
    for (size_t i = 0; i < b->n_jobs; i++) {
        free(b->jobs[i].job_id);
        free(b->jobs[i].handle);
    }
    free(b->jobs);
    ocisbx_env_list_free(&b->env);
    free(b->label);
    free(b->root);
    free(b->sandbox_id);
    free(b);
}

/* ---- paths ---- */
int ocisbx_backend_rel_path(const char *path, char **rel)
{
    *rel = NULL;
    if (!path || !*path)
        return ocisbx_fail(OCISBX_EINVAL, "path: empty");
    const char *p = path;
    if (*p == '/') {
        if (strncmp(p, "/workspace", 10) != 0 || (p[10] != '\0' && p[10] != '/'))
            return ocisbx_fail(OCISBX_EFORBIDDEN, "path is outside /workspace");
        p += 10;
    }
    size_t n = strlen(p);
    char *out = malloc(n + 1);
    if (!out)
        return ocisbx_fail_nomem();
    size_t o = 0;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = strchr(p, '/');
        size_t cl = e ? (size_t)(e - p) : strlen(p);
        if (cl == 1 && p[0] == '.') {
            /* skip */
        } else if (cl == 2 && p[0] == '.' && p[1] == '.') {
            if (o == 0) {
                free(out);
                return ocisbx_fail(OCISBX_EFORBIDDEN, "path is outside /workspace (.. above it)");
            }
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
        } else {
            if (o > 0)
                out[o++] = '/';
            memcpy(out + o, p, cl);
            o += cl;
        }
        p += cl;
    }
    out[o] = '\0';
    *rel = out;
    return 0;
}

/* ---- a small script, its stdout collected ---- */
typedef struct collect {
    ocisbx_buf buf;
    size_t cap;
} collect;

static int collect_cb(const char *data, size_t len, void *ud)
{
    collect *c = ud;
    size_t room = c->buf.len < c->cap ? c->cap - c->buf.len : 0;
    if (len > room)
        len = room;
    return len ? ocisbx_buf_append(&c->buf, data, len) : 0;
}

static int collect_cb_all(const void *data, size_t len, void *ud)
{
    return ocisbx_buf_append(ud, data, len) != 0;
}

int ocisbx_run_req_text(const ocisbx_run_req *req, ocisbx_buf *out)
{
    int rc = 0;
    if (req->n_args) {
        rc = ocisbx_buf_appends(out, "set --");
        for (size_t i = 0; i < req->n_args && !rc; i++) {
            rc = ocisbx_buf_appends(out, " ");
            if (!rc)
                rc = ocisbx_buf_append_shell_quoted(out, req->args[i]);
        }
        if (!rc)
            rc = ocisbx_buf_appends(out, "\n");
    }
    return rc ? rc : ocisbx_buf_appends(out, req->script);
}

int ocisbx_backend_run_script(ocisbx_backend *b, const char *script, size_t cap, char **out, size_t *out_len,
                              int *exit_code)
{
    return ocisbx_backend_run_sh(b, script, NULL, 0, cap, out, out_len, exit_code);
}

/* A step of a workspace script failed (lib.sh's fail): the last line of its
 * stderr says which and why. */
static int step_failure(const char *stderr_text)
{
    const char *t = stderr_text ? stderr_text : "";
    size_t n = strlen(t);
    while (n > 0 && t[n - 1] == '\n')
        n--;
    size_t s = n;
    while (s > 0 && t[s - 1] != '\n')
        s--;
    char *line = ocisbx_strndup(t + s, n - s);
    int rc = ocisbx_fail(OCISBX_EIO, "in the workspace: %s",
                         line && *line ? OCISBX_SHOWN(line) : "a step of a workspace script failed");
    free(line);
    return rc;
}

void ocisbx_backend_script_req(ocisbx_backend *b, const char *script, const char *const *args, size_t n_args,
                               const ocisbx_env_list *env, ocisbx_run_req *req)
{
    memset(req, 0, sizeof *req);
    req->script = script;
    req->args = args;
    req->n_args = n_args;
    req->env[0] = &b->env;
    req->env[1] = env;
    req->deadline_ms = ocisbx_time_monotonic_ms() + 600000;
    req->backstop_s = 600;
}

int ocisbx_backend_script_result(int rc, const ocisbx_run_res *res, int *exit_code)
{
    if (rc == 0 && !res->has_exit)
        rc = ocisbx_fail(OCISBX_ESERVICE, "workspace script ended without an exit status");
    if (rc == 0 && res->exit_code == OCISBX_SCRIPT_EXIT_OUTSIDE)
        rc = ocisbx_fail(OCISBX_EFORBIDDEN, "path leads outside /workspace (through a symlink)");
    if (rc == 0 && res->exit_code == OCISBX_SCRIPT_EXIT_STEP)
        rc = step_failure(res->stderr_text);
    if (rc == 0)
        *exit_code = res->exit_code;
    return rc;
}

static int run_sh_env(ocisbx_backend *b, const char *script, const char *const *args, size_t n_args,
                      const ocisbx_env_list *env, size_t cap, char **out, size_t *out_len, int *exit_code)
{
    collect c = {OCISBX_BUF_INIT, cap};
    ocisbx_run_req req;
    ocisbx_run_res res = {0};
    ocisbx_backend_script_req(b, script, args, n_args, env, &req);
    req.on_stdout = collect_cb;
    req.user_data = &c;
    int rc = ocisbx_backend_script_result(b->vt->run(b, &req, &res), &res, exit_code);
    if (rc == 0) {
        if (out_len)
            *out_len = c.buf.len;
        if (out)
            *out = ocisbx_buf_detach(&c.buf);
    }
    ocisbx_buf_free(&c.buf);
    free(res.command_id);
    free(res.stderr_text);
    return rc;
}

int ocisbx_backend_run_sh(ocisbx_backend *b, const char *script, const char *const *args, size_t n_args, size_t cap,
                          char **out, size_t *out_len, int *exit_code)
{
    return run_sh_env(b, script, args, n_args, NULL, cap, out, out_len, exit_code);
}

int ocisbx_capture_init(ocisbx_capture *cp)
{
    memset(cp, 0, sizeof *cp);
    memcpy(cp->name, "q-", 3);
    int rc = ocisbx_random_id(cp->name + 2, 16);
    if (!rc)
        rc = ocisbx_env_list_add(&cp->env, "OCISBX_CAPTURE", cp->name, false);
    snprintf(cp->rel, sizeof cp->rel, ".ocisbx/%s", cp->name);
    return rc;
}

void ocisbx_capture_rm_req(ocisbx_backend *b, ocisbx_capture *cp, ocisbx_run_req *req)
{
    cp->rm_args[0] = b->root;
    cp->rm_args[1] = cp->name;
    ocisbx_backend_script_req(b, ocisbx_script_state_rm, cp->rm_args, 2, NULL, req);
}

void ocisbx_capture_release(ocisbx_capture *cp)
{
    ocisbx_env_list_free(&cp->env);
}

int ocisbx_backend_run_sh_capture(ocisbx_backend *b, const char *script, const char *const *args, size_t n_args,
                                  char **out, size_t *out_len, int *exit_code)
{
    ocisbx_capture cp;
    int rc = ocisbx_capture_init(&cp);
    if (!rc)
        rc = run_sh_env(b, script, args, n_args, &cp.env, 0, NULL, NULL, exit_code);
    ocisbx_buf data = OCISBX_BUF_INIT;
    if (!rc)
        rc = b->vt->get_file(b, cp.rel, collect_cb_all, &data);
    if (rc == OCISBX_ENOTFOUND) /* the script ended before it captured anything */
        rc = 0;
    if (rc != OCISBX_ECANCELED) { /* the capture file goes, whatever happened */
        ocisbx_error_saved *sv = ocisbx_error_save();
        ocisbx_run_req req;
        ocisbx_run_res res = {0};
        ocisbx_capture_rm_req(b, &cp, &req);
        (void)b->vt->run(b, &req, &res);
        free(res.command_id);
        free(res.stderr_text);
        ocisbx_error_restore(sv);
    }
    ocisbx_capture_release(&cp);
    if (rc) {
        ocisbx_buf_free(&data);
        return rc;
    }
    *out_len = data.len;
    *out = ocisbx_buf_detach(&data);
    return *out ? 0 : ocisbx_fail_nomem();
}

/* The script's stdout through a file in the workspace and a checked read:
 * byte exact whatever the service does to output that is not UTF-8. */
int ocisbx_backend_run_capture(ocisbx_backend *b, const char *script, char **out, size_t *out_len, int *exit_code)
{
    char id[17];
    int rc = ocisbx_random_id(id, 16);
    if (rc)
        return rc;
    char *qr = NULL;
    rc = ocisbx_shell_quote(b->root, strlen(b->root), &qr);
    if (rc)
        return rc;
    ocisbx_buf s = OCISBX_BUF_INIT;
    rc = ocisbx_buf_appendf(&s, "mkdir -p %s/.ocisbx || exit 125\n{\n%s\n} > %s/.ocisbx/q-%s\n", qr, script, qr, id);
    ocisbx_buf data = OCISBX_BUF_INIT;
    if (!rc)
        rc = ocisbx_backend_run_script(b, s.data, 0, NULL, NULL, exit_code);
    if (!rc) {
        char rel[40];
        snprintf(rel, sizeof rel, ".ocisbx/q-%s", id);
        rc = b->vt->get_file(b, rel, collect_cb_all, &data);
        ocisbx_buf_clear(&s);
        ocisbx_error_saved *sv = ocisbx_error_save();
        int ex = 0;
        if (ocisbx_buf_appendf(&s, "rm -f %s/.ocisbx/q-%s\n", qr, id) == 0)
            (void)ocisbx_backend_run_script(b, s.data, 0, NULL, NULL, &ex);
        ocisbx_error_restore(sv);
    }
    free(qr);
    ocisbx_buf_free(&s);
    if (rc) {
        ocisbx_buf_free(&data);
        return rc;
    }
    *out_len = data.len;
    *out = ocisbx_buf_detach(&data);
    return *out ? 0 : ocisbx_fail_nomem();
}
