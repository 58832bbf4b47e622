/* The JSON views of the state, as the service's models: Sandbox (and its
 * summary), SandboxCommand (and summary), SandboxCommandEvent, the output,
 * SandboxSnapshot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/emu.h"

cJSON *emu_sandbox_json(const emu_sandbox *b, bool summary)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", b->id);
    cJSON_AddStringToObject(o, "projectId", b->project_id);
    cJSON_AddStringToObject(o, "displayName", b->display_name);
    cJSON_AddStringToObject(o, "runtime", b->runtime);
    cJSON_AddStringToObject(o, "shape", b->shape);
    cJSON_AddStringToObject(o, "lifecycleState", b->state);
    if (b->details)
        cJSON_AddStringToObject(o, "lifecycleDetails", b->details);
    if (!summary) {
        cJSON *ports = cJSON_AddArrayToObject(o, "publishedPorts");
        for (size_t i = 0; i < b->n_ports; i++) {
            cJSON *p = cJSON_CreateObject();
            cJSON_AddNumberToObject(p, "port", atoi(b->ports[i]));
            /* published ports are not modelled: the URL is a placeholder */
            char url[160];
            snprintf(url, sizeof url, "https://%s-%s.sandbox.invalid/", b->id, b->ports[i]);
            cJSON_AddStringToObject(p, "url", url);
            cJSON_AddItemToArray(ports, p);
        }
        if (b->port_auth_mode)
            cJSON_AddStringToObject(o, "publishedPortAuthMode", b->port_auth_mode);
        if (b->credential_label)
            cJSON_AddStringToObject(o, "credentialProfileLabel", b->credential_label);
    }
    if (b->warmpool)
        cJSON_AddStringToObject(o, "warmpoolName", b->warmpool);
    cJSON_AddNumberToObject(o, "expiresInMinutes", (double)b->expires_in_minutes);
    emu_json_add_time(o, "timeCreated", b->t_created);
    emu_json_add_time(o, "timeUpdated", b->t_updated);
    emu_json_add_time(o, "timeExpires", b->t_expires);
    emu_json_add_time(o, "timeStopped", b->t_stopped);
    return o;
}

/* SandboxCommand, or SandboxCommandSummary (summary: no
 * environmentVariables, no output). The public attribute list has no
 * lifecycle state and no timeout: neither is sent (c->state is the
 * emulator's own bookkeeping). */
cJSON *emu_command_json(const emu_command *c, bool summary)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", c->id);
    cJSON_AddStringToObject(o, "sandboxId", c->sandbox_id);
    cJSON_AddStringToObject(o, "command", c->command);
    cJSON *args = cJSON_AddArrayToObject(o, "args");
    for (size_t i = 0; i < c->n_args; i++)
        cJSON_AddItemToArray(args, cJSON_CreateString(c->args[i]));
    cJSON_AddStringToObject(o, "cwd", c->cwd);
    /* names only: values are secrets and never echoed */
    if (!summary)
        cJSON_AddItemToObject(o, "environmentVariables", emu_env_names_json(c->env, c->n_env));
    if (c->finished && c->exit_code >= 0)
        cJSON_AddNumberToObject(o, "exitCode", c->exit_code);
    emu_json_add_time(o, "timeCreated", c->t_created);
    emu_json_add_time(o, "timeStarted", c->t_started);
    emu_json_add_time(o, "timeFinished", c->t_finished);
    emu_json_add_time(o, "timeUpdated", c->t_updated);
    return o;
}

static const char *kind_name(int k)
{
    return k == EMU_EV_STARTED  ? "STARTED"
           : k == EMU_EV_STDOUT ? "STDOUT"
           : k == EMU_EV_STDERR ? "STDERR"
                                : "FINISHED";
}

cJSON *emu_event_json(const emu_command *c, const emu_event *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "commandId", c->id);
    cJSON_AddNumberToObject(o, "seq", (double)e->seq);
    char t[32];
    emu_time_rfc3339(e->ts_ms, t);
    cJSON_AddStringToObject(o, "timestamp", t);
    cJSON_AddStringToObject(o, "event", kind_name(e->kind));
    if (e->kind == EMU_EV_STDOUT || e->kind == EMU_EV_STDERR)
        emu_json_add_bytes(o, "data", (e->data && !c->output_lost) ? e->data : "",
                           (e->data && !c->output_lost) ? e->len : 0);
    if (e->kind == EMU_EV_FINISHED && e->exit_code >= 0)
        cJSON_AddNumberToObject(o, "exitCode", e->exit_code);
    return o;
}

cJSON *emu_command_output_json(const emu_command *c, int64_t from_seq)
{
    ocisbx_buf out = OCISBX_BUF_INIT, err = OCISBX_BUF_INIT;
    int64_t last = from_seq - 1;
    for (size_t i = 0; i < c->n_events; i++) {
        const emu_event *e = &c->events[i];
        if (e->seq < from_seq)
            continue;
        last = e->seq;
        if (c->output_lost || !e->data)
            continue;
        if (e->kind == EMU_EV_STDOUT)
            ocisbx_buf_append(&out, e->data, e->len);
        else if (e->kind == EMU_EV_STDERR)
            ocisbx_buf_append(&err, e->data, e->len);
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "commandId", c->id);
    if (c->finished && c->exit_code >= 0)
        cJSON_AddNumberToObject(o, "exitCode", c->exit_code);
    emu_json_add_bytes(o, "stdout", out.data ? out.data : "", out.len);
    emu_json_add_bytes(o, "stderr", err.data ? err.data : "", err.len);
    cJSON_AddNumberToObject(o, "lastSeq", (double)(last < 0 ? 0 : last));
    ocisbx_buf_free(&out);
    ocisbx_buf_free(&err);
    return o;
}

/* SandboxSnapshot; the summary (lists) carries the same fields [decided]. */
cJSON *emu_snapshot_json(const emu_snapshot *n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", n->id);
    cJSON_AddStringToObject(o, "sandboxId", n->sandbox_id);
    if (n->project_id)
        cJSON_AddStringToObject(o, "projectId", n->project_id);
    cJSON_AddStringToObject(o, "displayName", n->display_name);
    cJSON_AddNumberToObject(o, "sizeBytes", (double)n->size_bytes);
    cJSON_AddStringToObject(o, "runtime", n->runtime);
    cJSON_AddStringToObject(o, "lifecycleState", n->state);
    if (n->expiration)
        cJSON_AddStringToObject(o, "expirationDuration", n->expiration);
    emu_json_add_time(o, "timeExpires", n->t_expires);
    emu_json_add_time(o, "timeCreated", n->t_created);
    emu_json_add_time(o, "timeUpdated", n->t_updated > 0 ? n->t_updated : n->t_created);
    return o;
}
