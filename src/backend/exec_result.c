/* exec's options and results, and the plan of one exec (the call checked
 * and its budgets computed before anything runs). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "backend/exec_int.h"
#include "backend/scripts.h"
#include "ocisbx/util.h"
#include "util/internal.h"

const char *ocisbx_exec_options_cwd_(const ocisbx_exec_options *o)
{
    return o && o->cwd ? o->cwd : "/workspace";
}

int64_t ocisbx_exec_options_timeout_(const ocisbx_exec_options *o)
{
    return o && o->timeout_ms ? o->timeout_ms : OCISBX_BACKEND_DEFAULT_EXEC_TIMEOUT_MS;
}

const ocisbx_env_list *ocisbx_exec_options_env_(const ocisbx_exec_options *o)
{
    return o ? &o->env : NULL;
}

int64_t ocisbx_exec_options_yield_(const ocisbx_exec_options *o)
{
    return o ? o->yield_ms : 0;
}

size_t ocisbx_exec_options_max_output_(const ocisbx_exec_options *o)
{
    return o ? o->max_output : 0;
}

int ocisbx_exec_options_new(ocisbx_exec_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "exec options: NULL out");
    *out = calloc(1, sizeof **out);
    return *out ? 0 : ocisbx_fail_nomem();
}

void ocisbx_exec_options_free(ocisbx_exec_options *o)
{
    if (!o)
        return;
    free(o->cwd);
    ocisbx_env_list_free(&o->env);
    free(o);
}

int ocisbx_exec_options_set_timeout_ms(ocisbx_exec_options *o, int64_t ms)
{
    if (!o || ms <= 0 || ms > INT64_C(86400000) * 7)
        return ocisbx_fail(OCISBX_EINVAL, "exec timeout must be positive (at most 7 days)");
    o->timeout_ms = ms;
    return 0;
}

int ocisbx_exec_options_set_cwd(ocisbx_exec_options *o, const char *cwd)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "exec options: NULL");
    char *c = cwd ? ocisbx_strdup(cwd) : NULL;
    if (cwd && !c)
        return ocisbx_fail_nomem();
    free(o->cwd);
    o->cwd = c;
    return 0;
}

int ocisbx_exec_options_add_env(ocisbx_exec_options *o, const char *name, const char *value, int secret)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "exec options: NULL");
    return ocisbx_env_list_add(&o->env, name, value, secret != 0);
}

int ocisbx_exec_options_set_max_output_bytes(ocisbx_exec_options *o, size_t n)
{
    if (!o || (n && n < OCISBX_BACKEND_MIN_MAX_OUTPUT))
        return ocisbx_fail(OCISBX_EINVAL, "max_output_bytes must be at least %d (0: the backend's)",
                           OCISBX_BACKEND_MIN_MAX_OUTPUT);
    o->max_output = n;
    return 0;
}

int ocisbx_exec_options_set_on_output(ocisbx_exec_options *o, ocisbx_write_fn fn, void *user_data)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "exec options: NULL");
    o->on_output = fn;
    o->on_output_ud = user_data;
    return 0;
}

int ocisbx_exec_options_set_yield_ms(ocisbx_exec_options *o, int64_t ms)
{
    if (!o || ms < 0 || ms > INT64_C(86400000))
        return ocisbx_fail(OCISBX_EINVAL, "exec yield must be 0..86400000 ms");
    o->yield_ms = ms;
    return 0;
}

void ocisbx_exec_result_free(ocisbx_exec_result *r)
{
    if (!r)
        return;
    free(r->output);
    free(r->command_id);
    free(r->job_id);
    free(r);
}

int ocisbx_exec_result_has_exit_code(const ocisbx_exec_result *r, int *out)
{
    if (!r || !r->has_exit)
        return 0;
    if (out)
        *out = r->exit_code;
    return 1;
}
int ocisbx_exec_result_timed_out(const ocisbx_exec_result *r)
{
    return r && r->timed_out;
}
int ocisbx_exec_result_truncated(const ocisbx_exec_result *r)
{
    return r && r->truncated;
}
const char *ocisbx_exec_result_output(const ocisbx_exec_result *r, size_t *len)
{
    if (len)
        *len = r ? r->output_len : 0;
    return r ? r->output : NULL;
}
uint64_t ocisbx_exec_result_total_bytes(const ocisbx_exec_result *r)
{
    return r ? r->total_bytes : 0;
}
const char *ocisbx_exec_result_total_sha256(const ocisbx_exec_result *r)
{
    return r ? r->total_sha : NULL;
}
uint64_t ocisbx_exec_result_returned_bytes(const ocisbx_exec_result *r)
{
    return r ? r->output_len : 0;
}
const char *ocisbx_exec_result_returned_sha256(const ocisbx_exec_result *r)
{
    return r ? r->returned_sha : NULL;
}
uint64_t ocisbx_exec_result_dropped_bytes(const ocisbx_exec_result *r)
{
    return r ? r->dropped : 0;
}
int64_t ocisbx_exec_result_duration_ms(const ocisbx_exec_result *r)
{
    return r ? r->duration_ms : 0;
}
int64_t ocisbx_exec_result_start_time_ms(const ocisbx_exec_result *r)
{
    return r ? r->start_ms : 0;
}
const char *ocisbx_exec_result_command_id(const ocisbx_exec_result *r)
{
    return r ? r->command_id : NULL;
}
const char *ocisbx_exec_result_job_id(const ocisbx_exec_result *r)
{
    return r ? r->job_id : NULL;
}

void ocisbx_exec_hex_sha(const void *d, size_t n, char out[65])
{
    unsigned char h[OCISBX_SHA256_LEN];
    ocisbx_sha256(d, n, h);
    ocisbx_hex(h, sizeof h, out);
}

int ocisbx_exec_plan(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o, size_t note_reserve,
                     exec_plan *pl, ocisbx_exec_result **r, ocisbx_exec_result **out)
{
    memset(pl, 0, sizeof *pl);
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "exec: NULL out");
    *out = NULL;
    if (!b || !command)
        return ocisbx_fail(OCISBX_EINVAL, "exec: NULL argument");
    if (b->closed)
        return ocisbx_fail(OCISBX_ECONFLICT, "exec: the backend is closed");
    int rc = ocisbx_backend_rel_path(ocisbx_exec_options_cwd_(o), &pl->cwd_rel);
    if (rc)
        return rc;
    pl->secs = (ocisbx_exec_options_timeout_(o) + 999) / 1000;
    size_t max = o && o->max_output ? o->max_output : b->max_output;
    pl->head = (max - note_reserve) / 2;
    pl->tail = max - note_reserve - pl->head;
    pl->env = o ? &o->env : NULL;
    pl->backend_env = &b->env;
    pl->on_output = o ? o->on_output : NULL;
    pl->on_output_ud = o ? o->on_output_ud : NULL;
    pl->yield_ms = o ? o->yield_ms : 0;
    rc = ocisbx_random_id(pl->id, 16);
    if (!rc && !(*r = calloc(1, sizeof **r)))
        rc = ocisbx_fail_nomem();
    if (rc)
        ocisbx_exec_plan_free(pl);
    return rc;
}

void ocisbx_exec_plan_free(exec_plan *pl)
{
    free(pl->cwd_rel);
    pl->cwd_rel = NULL;
}

/* One word as ocisbx_buf_append_shell_quoted writes it (plain bytes, '...'
 * and '\'' runs) up to a space or a newline; *p moves past it. */
static int read_word(const char **p, ocisbx_buf *w)
{
    const char *s = *p;
    int rc = 0;
    while (*s && *s != ' ' && *s != '\n' && !rc) {
        if (*s == '\'') {
            const char *e = strchr(s + 1, '\'');
            if (!e)
                return OCISBX_EPARSE;
            rc = ocisbx_buf_append(w, s + 1, (size_t)(e - s - 1));
            s = e + 1;
        } else if (*s == '\\' && s[1]) {
            rc = ocisbx_buf_append(w, s + 1, 1);
            s += 2;
        } else {
            rc = ocisbx_buf_append(w, s, 1);
            s++;
        }
    }
    *p = s;
    return rc;
}

int ocisbx_backend_user_command(const char *wire, char **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "user command: NULL out");
    *out = NULL;
    if (!wire || strncmp(wire, "set -- ", 7) != 0)
        return 0;
    const char *p = wire + 7;
    ocisbx_buf first = OCISBX_BUF_INIT, w = OCISBX_BUF_INIT;
    int rc = read_word(&p, &first), n = 1;
    while (!rc && *p == ' ') {
        p++;
        ocisbx_buf_clear(&w);
        rc = read_word(&p, &w);
        n++;
    }
    ocisbx_buf_free(&w);
    /* exactly the text of one of the workspace scripts after its arguments:
     * the exec wrapper and the job carry the user's command first; the
     * backend's own steps are shown as "ocisbx <script>" */
    const char *name = NULL;
    for (size_t i = 0; !rc && *p == '\n' && i < ocisbx_n_scripts && !name; i++)
        if (!strcmp(p + 1, ocisbx_scripts[i].text))
            name = ocisbx_scripts[i].name;
    bool user = name && ((n == 10 && !strcmp(name, "exec")) || (n == 6 && !strcmp(name, "job-run")));
    bool ours = name != NULL;
    if (user && !(rc = ocisbx_buf_append(&first, "", 0)))
        *out = first.data ? ocisbx_buf_detach(&first) : ocisbx_strdup("");
    else if (ours)
        *out = ocisbx_asprintf("ocisbx %s", name);
    ocisbx_buf_free(&first);
    if (rc == OCISBX_EPARSE)
        return 0;
    if (rc)
        return ocisbx_fail_nomem();
    return ours && !*out ? ocisbx_fail_nomem() : 0;
}
