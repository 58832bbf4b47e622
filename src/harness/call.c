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
    return 0;
}

/* The record of the decision, to the file (chained) and the callback. */
static int record(harness_call *c, const char *decision, const char *reason)
{
    ocisbx_harness *h = c->h;
    evidence_fields *e = &c->ev;
    e->tool = c->tool->name;
    e->label = c->tool->label;
    e->decision = decision;
    char *reason_shown = reason ? call_redact(h, reason, strlen(reason), NULL) : NULL;
    e->reason = reason_shown;
    if (c->command)
        c->ev_command = call_redact(h, c->command, strlen(c->command), NULL);
    e->command = c->ev_command;
    e->path = c->path;
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
    free(c->cwd);
    ocisbx_env_list_free(&c->call_env);
    free(c->ev_command);
    free(c->ev_path);
    free(c->ev_out_sha);
    free(c->ev_before);
    free(c->ev_after);
    free(c->ev_cmd_id);
}

/* The gate decides; an allowed or approved call runs; either way one record. */
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
    int64_t t0 = ocisbx_time_monotonic_ms();
    if (!strcmp(verdict, "allow") || !strcmp(verdict, "approved")) {
        c->tool->run(c);
        c->ev.duration_ms = ocisbx_time_monotonic_ms() - t0;
    } else {
        call_error(c, "denied", OCISBX_EDENIED,
                   !strcmp(verdict, "refused")
                       ? (asked ? "the call was refused by a person: %s" : "the call was not run: %s")
                       : "the call was denied by the gate: %s",
                   reason ? reason : "no reason given");
    }
    int rrc = record(c, verdict, reason);
    if (rrc && !c->err_code)
        call_backend_failure(c, rrc); /* no evidence: no success */
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

int ocisbx_harness_call_json(ocisbx_harness *h, const char *tool, const char *arguments_json, char **result_json)
{
    if (!result_json)
        return ocisbx_fail(OCISBX_EINVAL, "harness call: result_json is NULL");
    *result_json = NULL;
    if (!h) {
        *result_json = ocisbx_strdup("{\"error\":{\"code\":\"invalid_arguments\",\"message\":\"no harness\"}}");
        return ocisbx_fail(OCISBX_EINVAL, "harness call: NULL harness");
    }
    harness_call c;
    memset(&c, 0, sizeof c);
    c.h = h;
    evidence_fields_init(&c.ev);
    ocisbx_time_format_rfc3339(ocisbx_time_now_ms(), c.started);
    c.tool = harness_tool_find(tool);
    if (!c.tool)
        return unknown_tool(&c, tool, result_json);
    warn_ungated(h);
    c.result = cJSON_CreateObject();
    if (prepare(&c, arguments_json) == 0)
        decide_and_run(&c);
    *result_json = finish(&c);
    int rc = c.err_code ? (c.rc ? c.rc : OCISBX_EINVAL) : 0;
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
