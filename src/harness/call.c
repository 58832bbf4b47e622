/* One call's way through the harness (ocisbx_harness_call_json): the
 * arguments checked against the tool's rows and its paths normalised, the
 * gate's decision (gate.c), the tool run (tool_*.c) when allowed, one
 * evidence record of the decision, and the result for the model with every
 * secret redacted. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/call.h"
#include "ocisbx/backend.h"
#include "util/json.h"

/* The normalised /workspace path of a path argument, or outside_workspace. */
static int normalise(harness_call *c, const char *in, char **out)
{
    char *p = NULL;
    int rc = ocisbx_backend_workspace_path(in, &p);
    if (rc == OCISBX_EFORBIDDEN)
        return call_error(c, "outside_workspace", rc, "%s is outside the workspace: use a path under /workspace", in);
    if (rc)
        return call_backend_failure(c, rc);
    *out = ocisbx_strdup(p);
    ocisbx_free(p);
    return *out ? 0 : call_backend_failure(c, ocisbx_fail_nomem());
}

/* When the policy decides on paths, the path is resolved in the workspace
 * (its symlinks followed) so the gate sees where the call goes. */
static int resolve(harness_call *c)
{
    ocisbx_policy *p = c->h->policy;
    if (!c->path || c->resolved || !p || !harness_policy_has_path_rules(p))
        return 0;
    char *r = NULL;
    int rc = ocisbx_backend_resolve_path(c->h->b, c->path, &r);
    if (rc == OCISBX_EFORBIDDEN)
        return call_error(c, "outside_workspace", rc, "%s leads outside the workspace (through a symlink)", c->path);
    if (rc)
        return call_backend_failure(c, rc);
    c->resolved = ocisbx_strdup(r);
    ocisbx_free(r);
    return c->resolved ? 0 : call_backend_failure(c, ocisbx_fail_nomem());
}

/* Arguments checked, paths normalised, the command and env taken: before the gate. */
static int prepare(harness_call *c, const char *args_json)
{
    int rc = harness_args_check(c->tool, args_json, args_json ? strlen(args_json) : 0, &c->args, c->err_msg,
                                sizeof c->err_msg);
    if (rc) {
        c->err_code = "invalid_arguments";
        c->rc = rc;
        return rc;
    }
    for (const harness_param *p = c->tool->params; p->name; p++) {
        const char *v = call_str(c, p->name);
        if (p->type == HARNESS_PATH && (v || p->implied)) {
            char **to = !strcmp(p->name, "cwd") ? &c->cwd : &c->path;
            if ((rc = normalise(c, v ? v : p->implied, to)))
                return rc;
        } else if (p->type == HARNESS_PATCH && v) {
            if ((rc = call_patch_paths(c, v)))
                return rc;
        } else if (p->type == HARNESS_COMMAND && !c->command) {
            c->command = v;
        } else if (p->type == HARNESS_ENV) {
            const cJSON *e;
            cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(c->args, p->name))
            {
                if ((rc = ocisbx_env_list_add(&c->call_env, e->string, e->valuestring, false)))
                    return call_backend_failure(c, rc);
            }
        }
    }
    return resolve(c);
}

/* The record's fields for this call and verdict (what is known so far). */
static void fill_record(harness_call *c, const char *decision, const char *reason)
{
    ocisbx_harness *h = c->h;
    evidence_fields *e = &c->ev;
    e->tool = c->tool->name;
    e->label = c->tool->label;
    e->decision = decision;
    free(c->ev_reason);
    c->ev_reason = reason ? call_redact(h, reason, strlen(reason), NULL) : NULL;
    e->reason = c->ev_reason;
    if (c->command && !c->ev_command)
        c->ev_command = call_redact(h, c->command, strlen(c->command), NULL);
    e->command = c->ev_command;
    if (c->path && !c->ev_path)
        c->ev_path = call_redact(h, c->path, strlen(c->path), NULL);
    if (c->resolved && !c->ev_resolved)
        c->ev_resolved = call_redact(h, c->resolved, strlen(c->resolved), NULL);
    e->path = c->ev_path;
    e->resolved_path = c->ev_resolved;
    if (c->n_paths && !c->ev_paths && (c->ev_paths = calloc(c->n_paths, sizeof *c->ev_paths)))
        for (size_t i = 0; i < c->n_paths; i++)
            c->ev_paths[i] = call_redact(h, c->paths[i].path, strlen(c->paths[i].path), NULL);
    e->paths = (const char *const *)c->ev_paths;
    e->n_paths = c->ev_paths ? c->n_paths : 0;
    e->output_sha256 = c->ev_out_sha;
    e->sha256_before = c->ev_before;
    e->sha256_after = c->ev_after;
    e->backend = ocisbx_backend_label(h->b);
    e->sandbox_id = ocisbx_backend_sandbox_id(h->b);
    e->command_id = c->ev_cmd_id;
    e->started_at = c->started;
}

/* Room for the result fields a record gets after the call ran. */
#define RECORD_RESULT_ROOM 1024

/* Before the call reaches the workspace: its record can be written (the
 * file sink checked, room for the line reserved). */
static int evidence_ready(harness_call *c)
{
    if (!c->h->ef)
        return 0;
    char *line = NULL;
    int rc = evidence_line(&c->ev, OCISBX_EVIDENCE_CHAIN_START, &line);
    size_t len = line ? strlen(line) : 0;
    free(line);
    return rc ? rc : evidence_file_check(c->h->ef, len + 1 + RECORD_RESULT_ROOM);
}

/* The record, to the file (chained) and the callback. */
static int write_record(harness_call *c)
{
    ocisbx_harness *h = c->h;
    char *line = NULL;
    int rc;
    if (h->ef) {
        rc = evidence_file_append(h->ef, &c->ev, &line);
    } else {
        rc = evidence_line(&c->ev, h->prev, &line);
        if (!rc)
            evidence_line_hash(line, strlen(line), h->prev);
    }
    if (!rc && h->on_record)
        h->on_record(line, strlen(line), h->record_ud);
    free(line);
    return rc;
}

/* The sink failed: the call's own error, saying whether the call ran. */
static void evidence_failure(harness_call *c, int rc, const char *what)
{
    const char *m = ocisbx_error_message(ocisbx_error_last());
    call_error(c, "evidence_error", rc ? rc : OCISBX_EIO, "%s: %s", what, m && m[0] ? m : "unknown error");
}

/* The result as the library's string (ocisbx_free), secrets redacted. */
static char *finish(harness_call *c)
{
    char *text = NULL;
    if (c->err_code) {
        char *msg = call_redact(c->h, c->err_msg, strlen(c->err_msg), NULL);
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

static void call_free(harness_call *c)
{
    cJSON_Delete(c->args);
    cJSON_Delete(c->result);
    free(c->path);
    free(c->resolved);
    free(c->cwd);
    ocisbx_env_list_free(&c->call_env);
    free(c->ev_command);
    free(c->ev_reason);
    free(c->ev_path);
    free(c->ev_resolved);
    free(c->ev_out_sha);
    free(c->ev_before);
    free(c->ev_after);
    free(c->ev_cmd_id);
    call_paths_free(c);
}

/* The gate decides; the record is made ready (nothing runs when it
 * cannot be written); an allowed or approved call runs; one record. */
static void decide_and_run(harness_call *c)
{
    int decision = OCISBX_GATE_DENY;
    char *reason = NULL;
    int rc = gate_decide(c, &decision, &reason);
    if (rc) {
        call_backend_failure(c, rc);
        free(reason);
        return;
    }
    bool asked = false; /* a held call that a person answered */
    const char *verdict = gate_verdict(c, decision, &reason, &asked);
    bool runs = !strcmp(verdict, "allow") || !strcmp(verdict, "approved");
    fill_record(c, verdict, reason);
    if (runs && (rc = evidence_ready(c))) {
        evidence_failure(c, rc, "the call was not run: its evidence record cannot be written");
        free(reason);
        return;
    }
    int64_t t0 = ocisbx_time_monotonic_ms();
    if (runs) {
        c->tool->run(c);
        c->ev.duration_ms = ocisbx_time_monotonic_ms() - t0;
    } else {
        call_error(c, "denied", OCISBX_EDENIED,
                   !strcmp(verdict, "refused")
                       ? (asked ? "the call was refused by a person: %s" : "the call was not run: %s")
                       : "the call was denied by the gate: %s",
                   reason ? reason : "no reason given");
    }
    fill_record(c, verdict, reason); /* with what the tool set */
    if ((rc = write_record(c)))      /* no evidence: no success */
        evidence_failure(c, rc,
                         runs ? "the call ran, but its evidence record could not be written (check the "
                                "workspace before repeating it)"
                              : "the call was not run, and its evidence record cannot be written");
    free(reason);
}

/* The first call on a host shell with nothing deciding the calls warns. */
static void warn_ungated(ocisbx_harness *h)
{
    if (harness_gated(h) || !ocisbx_backend_is_host_shell(h->b) || h->warned)
        return;
    h->warned = true;
    ocisbx_log(OCISBX_LOG_WARN,
               "harness: %s runs commands on this machine (no isolation) and no gate decides "
               "the calls: the model can do whatever this user can",
               ocisbx_backend_label(h->b));
}

/* A call of a tool that does not exist: the error, no record. */
static int unknown_tool(harness_call *c, const char *tool, char **result_json)
{
    char shown[64], names[200];
    ocisbx_escape_shown(tool ? tool : "(none)", shown, sizeof shown);
    harness_tool_names_text(names, sizeof names);
    call_error(c, "invalid_arguments", OCISBX_EINVAL, "unknown tool \"%s\" (the tools are %s)", shown, names);
    *result_json = finish(c);
    return ocisbx_fail(OCISBX_EINVAL, "harness call: unknown tool \"%s\"", shown);
}

static int call_json(ocisbx_harness *h, const char *tool, const char *arguments_json, char **result_json);

/* %XX escapes decoded (a URL's query), a %00 kept as it is. free(). */
static char *pct_decoded(const char *s)
{
    size_t n = strlen(s), o = 0;
    char *d = malloc(n + 1);
    for (size_t i = 0; d && i < n; i++) {
        int hi = i + 2 < n && s[i] == '%' ? ocisbx_hex_digit(s[i + 1]) : -1;
        int lo = hi >= 0 ? ocisbx_hex_digit(s[i + 2]) : -1;
        if (lo >= 0 && (hi || lo)) {
            d[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            d[o++] = s[i];
        }
    }
    if (d)
        d[o] = 0;
    return d;
}

/* Every line logged on this thread during a call, whatever layer logs it,
 * with the secrets redacted: in a URL's percent-encoded query too. */
static void log_filter(char *line, size_t cap, void *user_data)
{
    const ocisbx_harness *h = user_data;
    char *r = call_redact(h, line, strlen(line), NULL);
    if (r && strchr(r, '%')) {
        char *d = pct_decoded(r);
        char *r2 = d ? call_redact(h, d, strlen(d), NULL) : NULL;
        if (!d || !r2 || strcmp(r2, d) != 0) { /* a secret was encoded in it (or no memory: say nothing) */
            free(r);
            r = r2;
            r2 = NULL;
        }
        free(d);
        free(r2);
    }
    snprintf(line, cap, "%s", r ? r : "(a log line left out: no memory to redact it)");
    free(r);
}

int ocisbx_harness_call_json(ocisbx_harness *h, const char *tool, const char *arguments_json, char **result_json)
{
    ocisbx_log_filter_fn prev_filter = NULL;
    void *prev_ud = NULL;
    if (h)
        ocisbx_log_set_thread_filter(log_filter, h, &prev_filter, &prev_ud);
    int rc = call_json(h, tool, arguments_json, result_json);
    if (h)
        ocisbx_log_set_thread_filter(prev_filter, prev_ud, NULL, NULL);
    return rc;
}

static int call_json(ocisbx_harness *h, const char *tool, const char *arguments_json, char **result_json)
{
    if (!result_json)
        return ocisbx_fail(OCISBX_EINVAL, "harness call: result_json is NULL");
    *result_json = NULL;
    if (!h) {
        *result_json = ocisbx_strdup("{\"error\":{\"code\":\"invalid_arguments\",\"message\":\"no harness\"}}");
        return ocisbx_fail(OCISBX_EINVAL, "harness call: NULL harness");
    }
    /* a call that succeeds leaves the thread's error as it found it: the
     * failures of its inner steps (a path with a secret in it) stay inside */
    ocisbx_error_saved *before = ocisbx_error_save();
    harness_call c;
    memset(&c, 0, sizeof c);
    c.h = h;
    evidence_fields_init(&c.ev);
    ocisbx_time_format_rfc3339(ocisbx_time_now_ms(), c.started);
    c.tool = harness_tool_find(tool);
    if (!c.tool) {
        ocisbx_error_restore(before);
        return unknown_tool(&c, tool, result_json);
    }
    warn_ungated(h);
    c.result = cJSON_CreateObject();
    if (prepare(&c, arguments_json) == 0)
        decide_and_run(&c);
    *result_json = finish(&c);
    int rc = c.err_code ? (c.rc ? c.rc : OCISBX_EINVAL) : 0;
    ocisbx_error_restore(before);
    if (rc) {
        /* the thread's error too, redacted like the result */
        char *msg = call_redact(h, c.err_msg, strlen(c.err_msg), NULL);
        ocisbx_fail(rc, "%s: %s: %s", c.tool->name, c.err_code, msg ? msg : "(out of memory)");
        free(msg);
    }
    call_free(&c);
    if (!*result_json)
        return ocisbx_fail_nomem();
    return rc;
}
