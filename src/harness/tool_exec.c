/* The command tools: exec and job (rows in tool_table.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/call.h"
#include "ocisbx/backend.h"

static int exec_options(harness_call *c, ocisbx_exec_options **out)
{
    ocisbx_exec_options *o = NULL;
    int rc = ocisbx_exec_options_new(&o);
    if (!rc)
        rc = ocisbx_exec_options_set_timeout_ms(o, call_int(c, "timeout") * 1000);
    if (!rc && c->cwd)
        rc = ocisbx_exec_options_set_cwd(o, c->cwd);
    if (!rc && call_int(c, "yield_ms") > 0 && !call_bool(c, "background"))
        rc = ocisbx_exec_options_set_yield_ms(o, call_int(c, "yield_ms"));
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

/* The slot remembering where the job's output was read to (NULL: none, or
 * the id is too long to keep); with take, a new one for an unknown job. */
static job_read *job_slot(ocisbx_harness *h, const char *id, bool take)
{
    for (size_t i = 0; i < HARNESS_JOB_READS; i++)
        if (!strcmp(h->job_reads[i].id, id))
            return &h->job_reads[i];
    if (!take || strlen(id) >= sizeof h->job_reads[0].id)
        return NULL;
    job_read *r = &h->job_reads[h->job_reads_slot++ % HARNESS_JOB_READS];
    snprintf(r->id, sizeof r->id, "%s", id);
    r->next = 0;
    return r;
}

static void job_read_to(ocisbx_harness *h, const char *id, uint64_t next)
{
    job_read *r = job_slot(h, id, true);
    if (r)
        r->next = next;
}

/* A command still running at yield_ms: it goes on as a job. */
static int exec_yielded(harness_call *c, const ocisbx_exec_result *r, const char *job)
{
    size_t len = 0, shown_len = 0;
    const char *out = ocisbx_exec_result_output(r, &len);
    char *shown = call_redact(c->h, out, len, &shown_len);
    cJSON_AddStringToObject(c->result, "job_id", job);
    cJSON_AddBoolToObject(c->result, "running", 1);
    cJSON_AddStringToObject(c->result, "output", shown ? shown : "");
    cJSON_AddBoolToObject(c->result, "truncated", ocisbx_exec_result_truncated(r));
    cJSON_AddNumberToObject(c->result, "next_offset", (double)len);
    c->ev.truncated = ocisbx_exec_result_truncated(r) != 0;
    call_set_hex(&c->ev_cmd_id, ocisbx_exec_result_command_id(r));
    call_returned(c, shown ? shown : "", shown_len);
    free(shown);
    job_read_to(c->h, job, len);
    return 0;
}

int harness_tool_exec(harness_call *c)
{
    const char *command = call_str(c, "command");
    ocisbx_exec_options *o = NULL;
    int rc = exec_options(c, &o);
    if (rc)
        return call_backend_failure(c, rc);
    if (call_bool(c, "background")) {
        char *job = NULL;
        rc = ocisbx_backend_job_start(c->h->b, command, o, &job);
        ocisbx_exec_options_free(o);
        if (rc)
            return call_backend_failure(c, rc);
        cJSON_AddStringToObject(c->result, "job_id", job);
        ocisbx_free(job);
        return 0;
    }
    ocisbx_exec_result *r = NULL;
    rc = ocisbx_backend_exec(c->h->b, command, o, &r);
    ocisbx_exec_options_free(o);
    if (rc)
        return call_backend_failure(c, rc);
    if (ocisbx_exec_result_job_id(r)) {
        rc = exec_yielded(c, r, ocisbx_exec_result_job_id(r));
        ocisbx_exec_result_free(r);
        return rc;
    }
    int code = 0;
    bool has = ocisbx_exec_result_has_exit_code(r, &code) == 1;
    size_t len = 0, shown_len = 0;
    const char *out = ocisbx_exec_result_output(r, &len);
    char *shown = call_redact(c->h, out, len, &shown_len);
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
    call_set_hex(&c->ev_out_sha, ocisbx_exec_result_total_sha256(r));
    call_set_hex(&c->ev_cmd_id, ocisbx_exec_result_command_id(r));
    call_returned(c, shown ? shown : "", shown_len);
    free(shown);
    ocisbx_exec_result_free(r);
    return 0;
}

/* The job's output from offset into the result: output, truncated, next_offset. */
static int job_output(harness_call *c, const char *id, int64_t offset)
{
    char *data = NULL;
    size_t len = 0;
    uint64_t total = 0;
    int rc = ocisbx_backend_job_output(c->h->b, id, offset, 0, &data, &len, &total);
    if (rc)
        return call_backend_failure(c, rc);
    size_t shown_len = 0;
    char *shown = call_redact(c->h, data, len, &shown_len);
    uint64_t next = (uint64_t)offset + len;
    cJSON_AddStringToObject(c->result, "output", shown ? shown : "");
    cJSON_AddBoolToObject(c->result, "truncated", next < total);
    cJSON_AddNumberToObject(c->result, "next_offset", (double)next);
    call_returned(c, shown ? shown : "", shown_len);
    free(shown);
    ocisbx_free(data);
    job_read_to(c->h, id, next);
    return 0;
}

static void job_state(harness_call *c, const char *id, const ocisbx_job_status *s)
{
    int code = 0;
    bool has = ocisbx_job_status_has_exit_code(s, &code) == 1;
    cJSON_AddStringToObject(c->result, "job_id", id);
    cJSON_AddBoolToObject(c->result, "running", ocisbx_job_status_running(s));
    if (has)
        cJSON_AddNumberToObject(c->result, "exit_code", code);
    else
        cJSON_AddNullToObject(c->result, "exit_code");
    cJSON_AddBoolToObject(c->result, "timed_out", ocisbx_job_status_timed_out(s));
    cJSON_AddBoolToObject(c->result, "killed", ocisbx_job_status_killed(s));
    cJSON_AddNumberToObject(c->result, "duration_ms", (double)ocisbx_job_status_duration_ms(s));
    c->ev.has_exit_code = has;
    c->ev.exit_code = code;
    c->ev.timed_out = ocisbx_job_status_timed_out(s) != 0;
}

int harness_tool_job(harness_call *c)
{
    const char *id = call_str(c, "job_id"), *action = call_str(c, "action");
    int rc;
    if (!strcmp(action, "kill")) {
        int killed = 0; /* the backend's stop: 0 at once for a job that had ended */
        rc = ocisbx_backend_job_stop(c->h->b, id, &killed);
        if (rc)
            return call_backend_failure(c, rc);
        cJSON_AddBoolToObject(c->result, "killed", killed);
        if (!killed)
            cJSON_AddStringToObject(c->result, "reason", "the job had already ended");
        return 0;
    }
    if (!strcmp(action, "output"))
        return job_output(c, id, call_int(c, "offset"));
    bool wait = !strcmp(action, "wait");
    ocisbx_job_status *s = NULL;
    rc = wait ? ocisbx_backend_job_wait(c->h->b, id, call_int(c, "wait_ms"), &s)
              : ocisbx_backend_job_status(c->h->b, id, &s);
    if (rc)
        return call_backend_failure(c, rc);
    job_state(c, id, s);
    ocisbx_job_status_free(s);
    if (!wait)
        return 0;
    /* the output since the last read (of this harness), or from offset */
    const job_read *r = job_slot(c->h, id, false);
    int64_t offset = call_int(c, "offset");
    return job_output(c, id, offset ? offset : r ? (int64_t)r->next : 0);
}
