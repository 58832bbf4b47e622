/* The harness: a model's tool calls, through the gate, onto a backend, each
 * decided call leaving one evidence record (see include/ocisbx/harness.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "backend/backend_int.h"
#include "harness/evidence.h"
#include "harness/tools.h"
#include "ocisbx/harness.h"
#include "util/glob.h"
#include "util/internal.h"
#include "util/json.h"

typedef struct label_rule {
    char *label, *reason;
} label_rule;

typedef struct label_list {
    label_rule *v;
    size_t n;
} label_list;

struct ocisbx_harness_options {
    ocisbx_env_list env;
    label_list require, deny;
    char *policy_path;
    char *evidence_path;
};

struct ocisbx_gate_reply {
    char *reason;
};

struct ocisbx_harness {
    ocisbx_backend *b;
    ocisbx_env_list env;
    label_list require, deny;
    ocisbx_policy *policy;
    evidence_file *ef;
    char prev[OCISBX_SHA256_LEN * 2 + 1]; /* the chain without a file */
    ocisbx_gate_fn gate;
    void *gate_ud;
    ocisbx_approval_fn approve;
    void *approve_ud;
    ocisbx_evidence_fn on_record;
    void *record_ud;
    bool warned; /* the host-shell warning, once */
};

/* ---- options --------------------------------------------------------------------- */
static void labels_free(label_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].label);
        free(l->v[i].reason);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static int labels_add(label_list *l, const char *label, const char *reason)
{
    if (!label || !label[0])
        return ocisbx_fail(OCISBX_EINVAL, "harness: empty action label");
    /* a mistyped label would match nothing and leave its gate off */
    int known = harness_label_glob_known(label);
    if (known < 0)
        return known;
    if (!known) {
        char shown[100], labels[200];
        ocisbx_escape_shown(label, shown, sizeof shown);
        harness_labels_text(labels, sizeof labels);
        return ocisbx_fail(OCISBX_EINVAL, "harness: the action label \"%s\" matches none of the tools' labels (%s)",
                           shown, labels);
    }
    label_rule *v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v)
        return ocisbx_fail_nomem();
    l->v = v;
    v[l->n].label = ocisbx_strdup(label);
    v[l->n].reason = reason ? ocisbx_strdup(reason) : NULL;
    if (!v[l->n].label || (reason && !v[l->n].reason)) {
        free(v[l->n].label);
        free(v[l->n].reason);
        return ocisbx_fail_nomem();
    }
    l->n++;
    return 0;
}

static int labels_copy(label_list *to, const label_list *from)
{
    for (size_t i = 0; i < from->n; i++) {
        int rc = labels_add(to, from->v[i].label, from->v[i].reason);
        if (rc)
            return rc;
    }
    return 0;
}

static const label_rule *labels_match(const label_list *l, const char *label)
{
    for (size_t i = 0; i < l->n; i++)
        if (ocisbx_glob_match(l->v[i].label, label) == 1)
            return &l->v[i];
    return NULL;
}

int ocisbx_harness_options_new(ocisbx_harness_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "harness options: NULL");
    *out = calloc(1, sizeof **out);
    return *out ? 0 : ocisbx_fail_nomem();
}

void ocisbx_harness_options_free(ocisbx_harness_options *o)
{
    if (!o)
        return;
    ocisbx_env_list_free(&o->env);
    labels_free(&o->require);
    labels_free(&o->deny);
    free(o->policy_path);
    free(o->evidence_path);
    free(o);
}

int ocisbx_harness_options_add_env(ocisbx_harness_options *o, const char *name, const char *value, int secret)
{
    if (!o || !name || !value)
        return ocisbx_fail(OCISBX_EINVAL, "harness options: NULL argument");
    return ocisbx_env_list_add(&o->env, name, value, secret != 0);
}

int ocisbx_harness_options_require_person(ocisbx_harness_options *o, const char *label)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "harness options: NULL");
    return labels_add(&o->require, label, NULL);
}

int ocisbx_harness_options_deny_label(ocisbx_harness_options *o, const char *label, const char *reason)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "harness options: NULL");
    return labels_add(&o->deny, label, reason);
}

int ocisbx_harness_options_set_policy_file(ocisbx_harness_options *o, const char *path)
{
    if (!o || !path)
        return ocisbx_fail(OCISBX_EINVAL, "harness options: NULL argument");
    ocisbx_policy *p = NULL;
    int rc = ocisbx_policy_load_file(path, &p); /* its errors now, not at the first call */
    ocisbx_policy_free(p);
    if (rc)
        return rc;
    free(o->policy_path);
    o->policy_path = ocisbx_strdup(path);
    return o->policy_path ? 0 : ocisbx_fail_nomem();
}

int ocisbx_harness_options_set_evidence_file(ocisbx_harness_options *o, const char *path)
{
    if (!o || !path || !path[0])
        return ocisbx_fail(OCISBX_EINVAL, "harness options: no evidence file");
    free(o->evidence_path);
    o->evidence_path = ocisbx_strdup(path);
    return o->evidence_path ? 0 : ocisbx_fail_nomem();
}

/* ---- the harness -------------------------------------------------------------------- */
void ocisbx_harness_free(ocisbx_harness *h)
{
    if (!h)
        return;
    ocisbx_env_list_free(&h->env);
    labels_free(&h->require);
    labels_free(&h->deny);
    ocisbx_policy_free(h->policy);
    evidence_file_close(h->ef);
    free(h);
}

int ocisbx_harness_new(ocisbx_backend *b, const ocisbx_harness_options *o, ocisbx_harness **out)
{
    if (!out || !b)
        return ocisbx_fail(OCISBX_EINVAL, "harness: NULL argument");
    *out = NULL;
    ocisbx_harness *h = calloc(1, sizeof *h);
    if (!h)
        return ocisbx_fail_nomem();
    h->b = b;
    memcpy(h->prev, OCISBX_EVIDENCE_CHAIN_START, sizeof h->prev);
    int rc = 0;
    for (size_t i = 0; o && !rc && i < o->env.n; i++)
        rc = ocisbx_env_list_add(&h->env, o->env.v[i].name, o->env.v[i].value, o->env.v[i].secret);
    if (!rc && o)
        rc = labels_copy(&h->require, &o->require);
    if (!rc && o)
        rc = labels_copy(&h->deny, &o->deny);
    if (!rc && o && o->policy_path)
        rc = ocisbx_policy_load_file(o->policy_path, &h->policy);
    if (!rc && o && o->evidence_path)
        rc = evidence_file_open(o->evidence_path, &h->ef);
    if (rc) {
        ocisbx_harness_free(h);
        return rc;
    }
    *out = h;
    return 0;
}

int ocisbx_gate_reply_set_reason(ocisbx_gate_reply *r, const char *reason)
{
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "gate reply: NULL");
    free(r->reason);
    r->reason = reason ? ocisbx_strdup(reason) : NULL;
    return !reason || r->reason ? 0 : ocisbx_fail_nomem();
}

int ocisbx_harness_set_gate(ocisbx_harness *h, ocisbx_gate_fn fn, void *user_data)
{
    if (!h)
        return ocisbx_fail(OCISBX_EINVAL, "harness: NULL");
    h->gate = fn;
    h->gate_ud = user_data;
    return 0;
}

int ocisbx_harness_set_approval(ocisbx_harness *h, ocisbx_approval_fn fn, void *user_data)
{
    if (!h)
        return ocisbx_fail(OCISBX_EINVAL, "harness: NULL");
    h->approve = fn;
    h->approve_ud = user_data;
    return 0;
}

int ocisbx_harness_set_evidence_callback(ocisbx_harness *h, ocisbx_evidence_fn fn, void *user_data)
{
    if (!h)
        return ocisbx_fail(OCISBX_EINVAL, "harness: NULL");
    h->on_record = fn;
    h->record_ud = user_data;
    return 0;
}

/* true when something decides calls: a gate callback or a ready policy. */
static bool gated(const ocisbx_harness *h)
{
    return h->gate || h->policy || h->require.n || h->deny.n;
}

int ocisbx_harness_tools_json(const ocisbx_harness *h, const char *format, char **out)
{
    (void)h;
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "harness tools: NULL");
    *out = NULL;
    int f = harness_format_from_name(format);
    if (f < 0) {
        char shown[64];
        ocisbx_escape_shown(format, shown, sizeof shown);
        return ocisbx_fail(OCISBX_EINVAL, "harness tools: unknown format \"%s\" (ours, openai or anthropic)", shown);
    }
    char *text = NULL;
    int rc = harness_tools_json(f, &text);
    if (rc)
        return rc;
    *out = ocisbx_strdup(text); /* ocisbx_free-able */
    free(text);
    return *out ? 0 : ocisbx_fail_nomem();
}

int ocisbx_harness_prompt(const ocisbx_harness *h, char **out)
{
    if (!h || !out)
        return ocisbx_fail(OCISBX_EINVAL, "harness prompt: NULL argument");
    ocisbx_buf b = OCISBX_BUF_INIT;
    size_t n;
    const harness_tool *t = harness_tools(&n);
    ocisbx_buf_appendf(&b,
                       "You work in a workspace: the directory /workspace of %s (%s). Every path you give is "
                       "absolute under /workspace, or relative to it; anything outside it is refused "
                       "(outside_workspace). /tmp is read-only; keep your files in /workspace.\n\n"
                       "Tools:\n",
                       ocisbx_backend_label(h->b),
                       !strcmp(ocisbx_backend_kind(h->b), "local")
                           ? (ocisbx_backend_is_host_shell(h->b) ? "a directory on this machine, not isolated"
                                                                 : "a local directory, isolated")
                           : "an OCI Generative AI sandbox");
    for (size_t i = 0; i < n; i++)
        ocisbx_buf_appendf(&b, "- %s (%s): %s\n", t[i].name, t[i].label, t[i].description);
    ocisbx_buf_appendf(&b,
                       "\nCommands (exec) run with sh -c, stdout and stderr merged in the order written. Output "
                       "above %zu bytes is cut to its head and tail with a note giving the number of bytes left out. "
                       "A command is stopped at its timeout (120 seconds unless you give one): it then has no "
                       "exit_code and timed_out is true. Use background=true and the job tool for long work.\n"
                       "Some calls need a person's approval or are denied by policy: a denied call returns the "
                       "error denied with the reason; do not retry it unchanged.\n",
                       h->b->max_output);
    if (!b.data) {
        ocisbx_buf_free(&b);
        return ocisbx_fail_nomem();
    }
    *out = ocisbx_buf_detach(&b);
    return *out ? 0 : ocisbx_fail_nomem();
}

/* ---- secrets ------------------------------------------------------------------------ */
static void redact_with(ocisbx_buf *out, const ocisbx_env_list *l)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (l->v[i].secret)
            ocisbx_buf_redact(out, l->v[i].value);
}

/* A copy of text (len bytes) with every secret value (the harness's, the
 * backend's, the call's) replaced by [REDACTED]. free() it. */
static char *redact(const ocisbx_harness *h, const ocisbx_env_list *call, const char *text, size_t len,
                    size_t *out_len)
{
    ocisbx_buf b = OCISBX_BUF_INIT;
    if (ocisbx_buf_append(&b, text ? text : "", text ? len : 0) || !b.data) {
        ocisbx_buf_free(&b);
        if (!b.data && ocisbx_buf_append(&b, "", 0) == 0 && b.data)
            return ocisbx_buf_detach(&b);
        return NULL;
    }
    redact_with(&b, &h->env);
    redact_with(&b, &h->b->env);
    redact_with(&b, call);
    if (out_len)
        *out_len = b.len;
    return ocisbx_buf_detach(&b);
}

/* ---- one call ---------------------------------------------------------------------- */
typedef struct call {
    ocisbx_harness *h;
    const harness_tool *tool;
    cJSON *args;
    char *path; /* normalised path argument (file tools, search/glob dir, exec cwd) */
    char *cwd;
    ocisbx_env_list call_env; /* exec's env argument (not secret) */
    cJSON *result;
    const char *err_code;
    char err_msg[1024];
    int rc;
    evidence_fields ev;
    char started[OCISBX_RFC3339_LEN + 1];
    char *ev_command, *ev_out_sha, *ev_ret_sha, *ev_before, *ev_after, *ev_cmd_id;
    char ret_sha[OCISBX_SHA256_LEN * 2 + 1];
} call;

static const char *str_arg(const call *c, const char *name)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c->args, name));
}

static int64_t int_arg(const call *c, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->args, name);
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

static bool bool_arg(const call *c, const char *name)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c->args, name));
}

static int tool_error(call *c, const char *code, int rc, const char *fmt, ...) OCISBX_PRINTF(4, 5);
static int tool_error(call *c, const char *code, int rc, const char *fmt, ...)
{
    c->err_code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err_msg, sizeof c->err_msg, fmt, ap);
    va_end(ap);
    c->rc = rc;
    return rc;
}

/* The library's failure as a tool error for the model. */
static int backend_failure(call *c, int rc)
{
    const ocisbx_error *e = ocisbx_error_last();
    const char *m = ocisbx_error_message(e);
    const char *code;
    switch (rc) {
    case OCISBX_ENOTFOUND: code = "not_found"; break;
    case OCISBX_EISDIR: code = "is_directory"; break;
    case OCISBX_EFORBIDDEN: code = "outside_workspace"; break;
    case OCISBX_ENOMATCH: code = "no_match"; break;
    case OCISBX_ENOTUNIQUE: code = "not_unique"; break;
    case OCISBX_ECONFLICT: code = "conflict"; break;
    case OCISBX_EBINARY: code = "binary_file"; break;
    case OCISBX_ETIMEOUT: code = "timeout"; break;
    case OCISBX_EINVAL: code = "invalid_arguments"; break;
    default: code = "backend_error"; break;
    }
    c->err_code = code;
    c->rc = rc;
    if (!strcmp(code, "backend_error")) {
        int st = ocisbx_error_http_status(e);
        const char *rid = ocisbx_error_request_id(e);
        snprintf(c->err_msg, sizeof c->err_msg,
                 "%s (HTTP status %d, opc-request-id %s); the workspace may be "
                 "unavailable: retry later or report it",
                 m, st, rid ? rid : "none");
    } else {
        snprintf(c->err_msg, sizeof c->err_msg, "%s", m);
    }
    return rc;
}

/* Lexically normalised /workspace path: NULL with outside_workspace when it
 * leaves /workspace. */
static int normalise(call *c, const char *in, char **out)
{
    *out = NULL;
    ocisbx_buf b = OCISBX_BUF_INIT;
    ocisbx_buf_appends(&b, "/workspace");
    const char *p = in;
    if (in[0] == '/') {
        if (strncmp(in, "/workspace", 10) != 0 || (in[10] != '/' && in[10] != 0)) {
            ocisbx_buf_free(&b);
            return tool_error(c, "outside_workspace", OCISBX_EFORBIDDEN,
                              "%s is outside the workspace: use a path under /workspace", in);
        }
        p = in + 10;
    }
    while (*p) {
        while (*p == '/')
            p++;
        const char *e = strchr(p, '/');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == 0)
            break;
        if (l == 2 && !memcmp(p, "..", 2)) {
            char *slash = strrchr(b.data, '/');
            if (b.len <= 10) {
                ocisbx_buf_free(&b);
                return tool_error(c, "outside_workspace", OCISBX_EFORBIDDEN,
                                  "%s leaves the workspace: use a path under /workspace", in);
            }
            b.len = (size_t)(slash - b.data);
            b.data[b.len] = 0;
        } else if (!(l == 1 && p[0] == '.')) {
            ocisbx_buf_appends(&b, "/");
            ocisbx_buf_append(&b, p, l);
        }
        p += l;
    }
    if (!b.data)
        return ocisbx_fail_nomem();
    *out = ocisbx_buf_detach(&b);
    return 0;
}

static int decide(call *c, int *decision, char **reason)
{
    ocisbx_harness *h = c->h;
    const char *tool = c->tool->name, *label = c->tool->label;
    const char *command = !strcmp(tool, "exec") ? str_arg(c, "command") : NULL;
    int d = OCISBX_GATE_ALLOW;
    const char *why = NULL;
    *reason = NULL;
    if (h->policy) {
        int p = ocisbx_policy_decide(h->policy, tool, label, command, c->path, &why);
        if (p < 0)
            return p;
        d = p;
    }
    const label_rule *r = labels_match(&h->require, label);
    if (r && d == OCISBX_GATE_ALLOW) {
        d = OCISBX_GATE_HOLD;
        why = "this action needs a person's approval";
    }
    r = labels_match(&h->deny, label);
    if (r) {
        d = OCISBX_GATE_DENY;
        why = r->reason ? r->reason : "this kind of action is not allowed here";
    }
    char *owned = why ? ocisbx_strdup(why) : NULL;
    if (h->gate) {
        char *args = cJSON_PrintUnformatted(c->args);
        ocisbx_gate_reply reply = {NULL};
        int g = h->gate(tool, label, args ? args : "{}", &reply, h->gate_ud);
        free(args);
        if (g < OCISBX_GATE_ALLOW || g > OCISBX_GATE_HOLD)
            g = OCISBX_GATE_DENY; /* an unknown answer: safe side */
        /* the strictest wins: deny > hold > allow */
        int rank_g = g == OCISBX_GATE_DENY ? 2 : g == OCISBX_GATE_HOLD ? 1 : 0;
        int rank_d = d == OCISBX_GATE_DENY ? 2 : d == OCISBX_GATE_HOLD ? 1 : 0;
        if (rank_g > rank_d || (rank_g == rank_d && reply.reason)) {
            d = g;
            if (reply.reason || rank_g > rank_d) {
                free(owned);
                owned = reply.reason;
                reply.reason = NULL;
            }
        }
        free(reply.reason);
    }
    *decision = d;
    *reason = owned;
    return 0;
}

/* ---- the tools ----------------------------------------------------------------------- */
static void set_hex(char **dst, const char *hex)
{
    free(*dst);
    *dst = hex ? ocisbx_strdup(hex) : NULL;
}

/* The whole file's SHA-256 (hex) when it exists and is readable as text or
 * binary; NULL otherwise (a new file). */
static char *file_sha(call *c)
{
    ocisbx_text_result *t = NULL;
    int rc = ocisbx_backend_read_text(c->h->b, c->path, 1, 1, &t);
    char *s = (rc == 0 || rc == OCISBX_EBINARY) && t ? ocisbx_strdup(ocisbx_text_result_sha256(t)) : NULL;
    ocisbx_text_result_free(t);
    return s;
}

static void returned(call *c, const char *data, size_t len)
{
    unsigned char md[OCISBX_SHA256_LEN];
    ocisbx_sha256(data, len, md);
    ocisbx_hex(md, sizeof md, c->ret_sha);
    c->ev.returned_bytes = (int64_t)len;
    c->ev.returned_sha256 = c->ret_sha;
}

static int t_read(call *c)
{
    ocisbx_text_result *t = NULL;
    int rc = ocisbx_backend_read_text(c->h->b, c->path, int_arg(c, "offset"), int_arg(c, "limit"), &t);
    if (rc == OCISBX_EBINARY && t) {
        cJSON_AddBoolToObject(c->result, "binary", 1);
        cJSON_AddNumberToObject(c->result, "bytes", (double)ocisbx_text_result_size(t));
        cJSON_AddStringToObject(c->result, "sha256", ocisbx_text_result_sha256(t));
        ocisbx_text_result_free(t);
        return 0;
    }
    if (rc) {
        ocisbx_text_result_free(t);
        return backend_failure(c, rc);
    }
    size_t len = 0;
    const char *text = ocisbx_text_result_text(t);
    char *shown = redact(c->h, NULL, text, strlen(text), &len);
    int64_t total = ocisbx_text_result_total_lines(t);
    int64_t last = ocisbx_text_result_first_line(t) + ocisbx_text_result_line_count(t) - 1;
    cJSON_AddStringToObject(c->result, "content", shown ? shown : "");
    cJSON_AddNumberToObject(c->result, "total_lines", (double)total);
    cJSON_AddBoolToObject(c->result, "truncated", last < total);
    c->ev.truncated = last < total;
    returned(c, shown ? shown : "", len);
    free(shown);
    ocisbx_text_result_free(t);
    return 0;
}

static int t_write(call *c)
{
    const char *content = str_arg(c, "content");
    size_t len = strlen(content);
    c->ev_before = file_sha(c);
    int rc = ocisbx_backend_write(c->h->b, c->path, content, len);
    if (rc)
        return backend_failure(c, rc);
    unsigned char md[OCISBX_SHA256_LEN];
    char hex[OCISBX_SHA256_LEN * 2 + 1];
    ocisbx_sha256(content, len, md);
    ocisbx_hex(md, sizeof md, hex);
    set_hex(&c->ev_after, hex);
    cJSON_AddStringToObject(c->result, "path", c->path);
    cJSON_AddNumberToObject(c->result, "bytes", (double)len);
    cJSON_AddStringToObject(c->result, "sha256", hex);
    return 0;
}

static int t_edit(call *c)
{
    c->ev_before = file_sha(c);
    size_t count = 0;
    int rc = ocisbx_backend_edit(c->h->b, c->path, str_arg(c, "old_string"), str_arg(c, "new_string"),
                                 bool_arg(c, "replace_all"), str_arg(c, "expected_sha256"), &count);
    if (rc)
        return backend_failure(c, rc);
    c->ev_after = file_sha(c);
    cJSON_AddNumberToObject(c->result, "replacements", (double)count);
    if (c->ev_after)
        cJSON_AddStringToObject(c->result, "sha256", c->ev_after);
    else
        cJSON_AddNullToObject(c->result, "sha256");
    return 0;
}

static int t_search(call *c)
{
    ocisbx_search_options *o = NULL;
    ocisbx_search_result *r = NULL;
    int rc = ocisbx_search_options_new(&o);
    if (!rc)
        rc = ocisbx_search_options_set_path(o, c->path);
    if (!rc)
        rc = ocisbx_search_options_set_literal(o, bool_arg(c, "literal"));
    if (!rc)
        rc = ocisbx_search_options_set_ignore_case(o, bool_arg(c, "ignore_case"));
    if (!rc && str_arg(c, "glob"))
        rc = ocisbx_search_options_set_glob(o, str_arg(c, "glob"));
    if (!rc)
        rc = ocisbx_search_options_set_max_results(o, (size_t)int_arg(c, "max_results"));
    if (!rc)
        rc = ocisbx_backend_search(c->h->b, str_arg(c, "pattern"), o, &r);
    ocisbx_search_options_free(o);
    if (rc)
        return backend_failure(c, rc);
    cJSON *m = cJSON_AddArrayToObject(c->result, "matches");
    for (size_t i = 0; i < ocisbx_search_result_count(r); i++) {
        cJSON *e = cJSON_CreateObject();
        const char *text = ocisbx_search_result_text(r, i);
        char *shown = redact(c->h, NULL, text, strlen(text), NULL);
        cJSON_AddStringToObject(e, "path", ocisbx_search_result_path(r, i));
        cJSON_AddNumberToObject(e, "line", (double)ocisbx_search_result_line(r, i));
        cJSON_AddStringToObject(e, "text", shown ? shown : "");
        free(shown);
        cJSON_AddItemToArray(m, e);
    }
    c->ev.truncated = ocisbx_search_result_truncated(r) != 0;
    cJSON_AddBoolToObject(c->result, "truncated", c->ev.truncated);
    ocisbx_search_result_free(r);
    return 0;
}

static int t_glob(call *c)
{
    ocisbx_entry_list *l = NULL;
    int rc = ocisbx_backend_glob(c->h->b, str_arg(c, "pattern"), c->path, 0, &l);
    if (rc)
        return backend_failure(c, rc);
    cJSON *p = cJSON_AddArrayToObject(c->result, "paths");
    for (size_t i = 0; i < ocisbx_entry_list_count(l); i++)
        cJSON_AddItemToArray(p, cJSON_CreateString(ocisbx_entry_list_name(l, i)));
    c->ev.truncated = ocisbx_entry_list_truncated(l) != 0;
    cJSON_AddBoolToObject(c->result, "truncated", c->ev.truncated);
    ocisbx_entry_list_free(l);
    return 0;
}

static int t_ls(call *c)
{
    ocisbx_entry_list *l = NULL;
    int rc = ocisbx_backend_ls(c->h->b, c->path, &l);
    if (rc)
        return backend_failure(c, rc);
    cJSON *a = cJSON_AddArrayToObject(c->result, "entries");
    for (size_t i = 0; i < ocisbx_entry_list_count(l); i++) {
        cJSON *e = cJSON_CreateObject();
        char t = ocisbx_entry_list_type(l, i);
        cJSON_AddStringToObject(e, "name", ocisbx_entry_list_name(l, i));
        cJSON_AddStringToObject(e, "type", t == 'f' ? "file" : t == 'd' ? "dir" : t == 'l' ? "link" : "other");
        cJSON_AddNumberToObject(e, "size", (double)ocisbx_entry_list_size(l, i));
        cJSON_AddItemToArray(a, e);
    }
    ocisbx_entry_list_free(l);
    return 0;
}

static int exec_options(call *c, ocisbx_exec_options **out)
{
    ocisbx_exec_options *o = NULL;
    int rc = ocisbx_exec_options_new(&o);
    if (!rc)
        rc = ocisbx_exec_options_set_timeout_ms(o, int_arg(c, "timeout") * 1000);
    if (!rc && c->cwd)
        rc = ocisbx_exec_options_set_cwd(o, c->cwd);
    for (size_t i = 0; !rc && i < c->h->env.n; i++)
        rc = ocisbx_exec_options_add_env(o, c->h->env.v[i].name, c->h->env.v[i].value, c->h->env.v[i].secret);
    for (size_t i = 0; !rc && i < c->call_env.n; i++)
        rc = ocisbx_exec_options_add_env(o, c->call_env.v[i].name, c->call_env.v[i].value, 0);
    if (rc) {
        ocisbx_exec_options_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

static int t_exec(call *c)
{
    const char *command = str_arg(c, "command");
    ocisbx_exec_options *o = NULL;
    int rc = exec_options(c, &o);
    if (rc)
        return backend_failure(c, rc);
    if (bool_arg(c, "background")) {
        char *job = NULL;
        rc = ocisbx_backend_job_start(c->h->b, command, o, &job);
        ocisbx_exec_options_free(o);
        if (rc)
            return backend_failure(c, rc);
        cJSON_AddStringToObject(c->result, "job_id", job);
        ocisbx_free(job);
        return 0;
    }
    ocisbx_exec_result *r = NULL;
    rc = ocisbx_backend_exec(c->h->b, command, o, &r);
    ocisbx_exec_options_free(o);
    if (rc)
        return backend_failure(c, rc);
    int code = 0;
    bool has = ocisbx_exec_result_exit_code(r, &code) == 1;
    size_t len = 0, shown_len = 0;
    const char *out = ocisbx_exec_result_output(r, &len);
    char *shown = redact(c->h, &c->call_env, out, len, &shown_len);
    if (has)
        cJSON_AddNumberToObject(c->result, "exit_code", code);
    else
        cJSON_AddNullToObject(c->result, "exit_code");
    cJSON_AddBoolToObject(c->result, "timed_out", ocisbx_exec_result_timed_out(r));
    cJSON_AddBoolToObject(c->result, "truncated", ocisbx_exec_result_truncated(r));
    cJSON_AddStringToObject(c->result, "output", shown ? shown : "");
    cJSON_AddNumberToObject(c->result, "duration_ms", (double)ocisbx_exec_result_duration_ms(r));
    c->ev.has_exit_code = has;
    c->ev.exit_code = code;
    c->ev.timed_out = ocisbx_exec_result_timed_out(r) != 0;
    c->ev.truncated = ocisbx_exec_result_truncated(r) != 0;
    c->ev.output_bytes = (int64_t)ocisbx_exec_result_total_bytes(r);
    set_hex(&c->ev_out_sha, ocisbx_exec_result_total_sha256(r));
    set_hex(&c->ev_cmd_id, ocisbx_exec_result_command_id(r));
    returned(c, shown ? shown : "", shown_len);
    free(shown);
    ocisbx_exec_result_free(r);
    return 0;
}

static int t_job(call *c)
{
    const char *id = str_arg(c, "job_id"), *action = str_arg(c, "action");
    int rc;
    if (!strcmp(action, "kill")) {
        ocisbx_job_status *s = NULL;
        rc = ocisbx_backend_job_status(c->h->b, id, &s);
        bool was_running = !rc && ocisbx_job_status_running(s);
        ocisbx_job_status_free(s);
        if (!rc)
            rc = ocisbx_backend_job_kill(c->h->b, id);
        if (rc)
            return backend_failure(c, rc);
        cJSON_AddBoolToObject(c->result, "killed", was_running);
        return 0;
    }
    if (!strcmp(action, "output")) {
        char *data = NULL;
        size_t len = 0;
        uint64_t total = 0;
        int64_t offset = int_arg(c, "offset");
        rc = ocisbx_backend_job_output(c->h->b, id, offset, 0, &data, &len, &total);
        if (rc)
            return backend_failure(c, rc);
        size_t shown_len = 0;
        char *shown = redact(c->h, NULL, data, len, &shown_len);
        uint64_t next = (uint64_t)offset + len;
        cJSON_AddStringToObject(c->result, "output", shown ? shown : "");
        cJSON_AddBoolToObject(c->result, "truncated", next < total);
        cJSON_AddNumberToObject(c->result, "next_offset", (double)next);
        returned(c, shown ? shown : "", shown_len);
        free(shown);
        ocisbx_free(data);
        return 0;
    }
    ocisbx_job_status *s = NULL;
    rc = ocisbx_backend_job_status(c->h->b, id, &s);
    if (rc)
        return backend_failure(c, rc);
    int code = 0;
    bool has = ocisbx_job_status_exit_code(s, &code) == 1;
    cJSON_AddStringToObject(c->result, "job_id", id);
    cJSON_AddBoolToObject(c->result, "running", ocisbx_job_status_running(s));
    if (has)
        cJSON_AddNumberToObject(c->result, "exit_code", code);
    else
        cJSON_AddNullToObject(c->result, "exit_code");
    cJSON_AddBoolToObject(c->result, "timed_out", ocisbx_job_status_timed_out(s));
    cJSON_AddNumberToObject(c->result, "duration_ms", (double)ocisbx_job_status_duration_ms(s));
    ocisbx_job_status_free(s);
    return 0;
}

static int run_tool(call *c)
{
    static const struct {
        const char *name;
        int (*fn)(call *);
    } table[] = {{"read", t_read}, {"write", t_write}, {"edit", t_edit}, {"search", t_search},
                 {"glob", t_glob}, {"ls", t_ls},       {"exec", t_exec}, {"job", t_job}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, c->tool->name))
            return table[i].fn(c);
    return tool_error(c, "invalid_arguments", OCISBX_EINVAL, "unknown tool %s", c->tool->name);
}

/* ---- the entry point -------------------------------------------------------------------- */
static int record(call *c, const char *decision, const char *reason)
{
    ocisbx_harness *h = c->h;
    evidence_fields *e = &c->ev;
    e->tool = c->tool->name;
    e->label = c->tool->label;
    e->decision = decision;
    char *reason_shown = reason ? redact(h, &c->call_env, reason, strlen(reason), NULL) : NULL;
    e->reason = reason_shown;
    const char *command = !strcmp(c->tool->name, "exec") ? str_arg(c, "command") : NULL;
    if (command)
        c->ev_command = redact(h, &c->call_env, command, strlen(command), NULL);
    e->command = c->ev_command;
    e->path = strcmp(c->tool->name, "exec") && strcmp(c->tool->name, "job") ? c->path : NULL;
    e->output_sha256 = c->ev_out_sha;
    e->sha256_before = c->ev_before;
    e->sha256_after = c->ev_after;
    e->backend = ocisbx_backend_label(h->b);
    e->sandbox_id = ocisbx_backend_sandbox_id(h->b);
    e->command_id = c->ev_cmd_id;
    e->started_at = c->started;
    char *line = NULL;
    int rc;
    if (h->ef) {
        rc = evidence_file_append(h->ef, e, &line);
    } else {
        rc = evidence_line(e, h->prev, &line);
        if (!rc)
            evidence_line_hash(line, strlen(line), h->prev);
    }
    if (!rc && h->on_record)
        h->on_record(line, strlen(line), h->record_ud);
    free(line);
    free(reason_shown);
    return rc;
}

/* The result as the library's string (ocisbx_free), secrets redacted. */
static char *finish(call *c)
{
    char *text = NULL;
    if (c->err_code) {
        char *msg = redact(c->h, &c->call_env, c->err_msg, strlen(c->err_msg), NULL);
        cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "error");
        if (cJSON_AddStringToObject(e, "code", c->err_code) &&
            cJSON_AddStringToObject(e, "message", msg ? msg : c->err_msg))
            ocisbx_json_print(o, &text);
        cJSON_Delete(o);
        free(msg);
    } else {
        ocisbx_json_print(c->result, &text);
    }
    return text;
}

static void call_free(call *c)
{
    cJSON_Delete(c->args);
    cJSON_Delete(c->result);
    free(c->path);
    free(c->cwd);
    ocisbx_env_list_free(&c->call_env);
    free(c->ev_command);
    free(c->ev_out_sha);
    free(c->ev_before);
    free(c->ev_after);
    free(c->ev_cmd_id);
}

/* Arguments checked, paths normalised, exec's env taken: before the gate. */
static int prepare(call *c, const char *args_json)
{
    int rc = harness_args_check(c->tool, args_json, args_json ? strlen(args_json) : 0, &c->args, c->err_msg,
                                sizeof c->err_msg);
    if (rc) {
        c->err_code = "invalid_arguments";
        c->rc = rc;
        return rc;
    }
    const char *name = c->tool->name;
    const char *path = str_arg(c, "path");
    if (!path && (!strcmp(name, "search") || !strcmp(name, "glob")))
        path = "/workspace";
    if (path && (rc = normalise(c, path, &c->path)))
        return rc;
    const char *cwd = str_arg(c, "cwd");
    if (cwd && (rc = normalise(c, cwd, &c->cwd)))
        return rc;
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(c->args, "env"), *v;
    cJSON_ArrayForEach(v, env)
    {
        if ((rc = ocisbx_env_list_add(&c->call_env, v->string, v->valuestring, false)))
            return rc;
    }
    return 0;
}

int ocisbx_harness_call_json(ocisbx_harness *h, const char *tool, const char *arguments_json, char **result_json)
{
    if (!result_json)
        return ocisbx_fail(OCISBX_EINVAL, "harness call: result_json is NULL");
    *result_json = NULL;
    if (!h) {
        *result_json = ocisbx_strdup("{\"error\":{\"code\":\"invalid_arguments\",\"message\":\"no harness\"}}");
        return ocisbx_fail(OCISBX_EINVAL, "harness call: NULL harness");
    }
    call c;
    memset(&c, 0, sizeof c);
    c.h = h;
    evidence_fields_init(&c.ev);
    ocisbx_time_format_rfc3339(ocisbx_time_now_ms(), c.started);
    c.tool = harness_tool_find(tool);
    if (!c.tool) {
        char shown[64];
        ocisbx_escape_shown(tool ? tool : "(none)", shown, sizeof shown);
        tool_error(&c, "invalid_arguments", OCISBX_EINVAL,
                   "unknown tool \"%s\" (the tools are read, write, edit, search, glob, ls, exec, job)", shown);
        *result_json = finish(&c);
        return ocisbx_fail(OCISBX_EINVAL, "harness call: unknown tool \"%s\"", shown);
    }
    if (!gated(h) && ocisbx_backend_is_host_shell(h->b) && !h->warned) {
        h->warned = true;
        ocisbx_log(OCISBX_LOG_WARN,
                   "harness: %s runs commands on this machine (no isolation) and no gate decides "
                   "the calls: the model can do whatever this user can",
                   ocisbx_backend_label(h->b));
    }
    c.result = cJSON_CreateObject();
    if (prepare(&c, arguments_json) == 0) {
        int decision = OCISBX_GATE_DENY;
        char *reason = NULL;
        int rc = decide(&c, &decision, &reason);
        const char *verdict = "deny";
        bool asked = false; /* a held call that a person answered */
        if (rc) {
            backend_failure(&c, rc);
        } else if (decision == OCISBX_GATE_HOLD) {
            /* the person sees the arguments and the reason as the records do: secrets redacted */
            char *args = cJSON_PrintUnformatted(c.args);
            char *shown = args ? redact(h, &c.call_env, args, strlen(args), NULL) : NULL;
            char *why = reason ? redact(h, &c.call_env, reason, strlen(reason), NULL) : NULL;
            int ok = h->approve ? h->approve(c.tool->name, c.tool->label, shown ? shown : "{}", why, h->approve_ud)
                                : 0;
            free(args);
            free(shown);
            free(why);
            if (!h->approve || ok < 0) {
                /* no one could be asked; the callback's error says why */
                const char *m = ok < 0 ? ocisbx_error_message(ocisbx_error_last()) : NULL;
                char text[768];
                snprintf(text, sizeof text, "held for a person's approval, but no one could be asked%s%s",
                         m && m[0] ? ": " : "", m && m[0] ? m : "");
                free(reason);
                reason = ocisbx_strdup(text);
            }
            asked = h->approve && ok >= 0;
            verdict = ok == 1 ? "approved" : "refused";
        } else {
            verdict = decision == OCISBX_GATE_ALLOW ? "allow" : "deny";
        }
        if (!rc) {
            int64_t t0 = ocisbx_time_monotonic_ms();
            if (!strcmp(verdict, "allow") || !strcmp(verdict, "approved")) {
                rc = run_tool(&c);
                c.ev.duration_ms = ocisbx_time_monotonic_ms() - t0;
            } else {
                tool_error(&c, "denied", OCISBX_EDENIED,
                           !strcmp(verdict, "refused")
                               ? (asked ? "the call was refused by a person: %s" : "the call was not run: %s")
                               : "the call was denied by the gate: %s",
                           reason ? reason : "no reason given");
            }
            int rrc = record(&c, verdict, reason);
            if (rrc && !c.err_code)
                backend_failure(&c, rrc); /* no evidence: no success */
        }
        free(reason);
    }
    *result_json = finish(&c);
    int rc = c.err_code ? (c.rc ? c.rc : OCISBX_EINVAL) : 0;
    if (rc) {
        /* the thread's error too, redacted like the result */
        char *msg = redact(h, &c.call_env, c.err_msg, strlen(c.err_msg), NULL);
        ocisbx_fail(rc, "%s: %s: %s", c.tool->name, c.err_code, msg ? msg : "(out of memory)");
        free(msg);
    }
    call_free(&c);
    if (!*result_json)
        return ocisbx_fail_nomem();
    return rc;
}
