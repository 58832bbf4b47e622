/* The command operations: run (plain, waited, streamed), list, get,
 * output, events and cancel; the RunSandboxCommandDetails body; the event
 * streams (SSE or NDJSON) the listener sends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/emu.h"
#include "ocisbx/util.h"

static emu_stream *new_stream(const emu_request *req, emu_command *c, int64_t from, int64_t until)
{
    emu_stream *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->cmd = c;
    c->refs++;
    st->next_seq = from;
    st->until_seq = until;
    const char *accept = emu_request_header(req, "accept");
    st->ndjson = accept && strstr(accept, "application/x-ndjson") != NULL;
    return st;
}

static int parse_seq(const emu_request *req, emu_response *resp, const char *name, int64_t dflt, int64_t *out)
{
    bool bad = false;
    char *v = emu_query_get(req->query, name, &bad);
    *out = dflt;
    if (!v && !bad)
        return 0;
    char *end = NULL;
    long long x = v ? strtoll(v, &end, 10) : -1;
    int rc = 0;
    /* Sequence numbers start at 1; 0 simply means "from the start". */
    if (bad || !v || !*v || *end || x < 0) {
        emu_error(resp, 400, "InvalidParameter", "%s must be a non-negative integer", name);
        rc = -1;
    } else {
        *out = x;
    }
    free(v);
    return rc;
}

void emu_stream_start(emu_response *resp, const emu_request *req, emu_command *c, int64_t from, int64_t until)
{
    resp->stream = new_stream(req, c, from, until);
    resp->status = 200;
    ocisbx_buf_clear(&resp->body);
    snprintf(resp->content_type, sizeof resp->content_type, "%s",
             resp->stream && resp->stream->ndjson ? "application/x-ndjson" : "text/event-stream");
    emu_response_header(resp, "cache-control", "no-cache");
}

/* RunSandboxCommandDetails into a new command record; NULL with a 400
 * answered. */
static emu_command *parse_details(const cJSON *details, emu_response *resp)
{
    const char *command = NULL, *cwd = NULL, *timeout = NULL;
    emu_command *c = emu_command_new();
    if (!c)
        return emu_error(resp, 500, "InternalServerError", "out of memory"), NULL;
    if (emu_json_only(details, "RunSandboxCommandDetails", "command args cwd environmentVariables timeout", resp) ||
        emu_json_str(details, "command", &command, resp) || emu_json_str(details, "cwd", &cwd, resp) ||
        emu_json_str(details, "timeout", &timeout, resp) ||
        emu_json_env(details, "environmentVariables", &c->env, &c->n_env, resp))
        goto fail;
    if (!command || !*command) {
        emu_error(resp, 400, "InvalidParameter", "command is required");
        goto fail;
    }
    if (cwd && cwd[0] != '/') {
        emu_error(resp, 400, "InvalidParameter", "cwd must be an absolute path, not %s", cwd);
        goto fail;
    }
    if (timeout && (ocisbx_duration_parse(timeout, &c->timeout_ms) != 0 || c->timeout_ms <= 0)) {
        emu_error(resp, 400, "InvalidParameter", "timeout must be a positive ISO 8601 duration like PT2M, not %s",
                  timeout);
        goto fail;
    }
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(details, "args");
    if (args && !cJSON_IsNull(args)) {
        if (!cJSON_IsArray(args)) {
            emu_error(resp, 400, "InvalidParameter", "args must be a list of strings");
            goto fail;
        }
        c->args = calloc((size_t)cJSON_GetArraySize(args) + 1, sizeof(char *));
        const cJSON *it;
        cJSON_ArrayForEach(it, args)
        {
            if (!c->args || !cJSON_IsString(it)) {
                emu_error(resp, 400, "InvalidParameter", "args[%zu] must be a string", c->n_args);
                goto fail;
            }
            c->args[c->n_args++] = ocisbx_strdup(it->valuestring);
        }
    }
    c->command = ocisbx_strdup(command);
    c->cwd = ocisbx_strdup(cwd ? cwd : "/workspace");
    c->timeout = timeout ? ocisbx_strdup(timeout) : NULL;
    return c;
fail:
    emu_command_free(c);
    return NULL;
}

/* The common start of the three run operations: the started command, or
 * NULL with the refusal answered. */
static emu_command *run(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_sandbox *b = emu_h_sandbox_of(s, rt, resp);
    cJSON *body = NULL;
    emu_command *c = NULL;
    if (b && !emu_body_json(req, resp, &body)) {
        if (strcmp(b->state, "RUNNING"))
            emu_error(resp, 409, "IncorrectState", "cannot run a command in sandbox %s in state %s", b->id, b->state);
        else if ((c = parse_details(body, resp)) != NULL) {
            int rc = emu_command_launch(s, b, c);
            if (rc != 0) {
                emu_fail_answer(resp, rc);
                c = NULL;
            }
        }
    }
    cJSON_Delete(body);
    return c;
}

void emu_h_command_run(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_command *c = run(s, req, rt, resp);
    if (c) { /* SandboxCommandIdentifier [public]: the id only */
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", c->id);
        emu_json(resp, 200, o);
    }
}

/* SandboxCommand with its output, as runAndWait answers */
static void waited_answer(const emu_command *c, emu_response *resp)
{
    cJSON *o = emu_command_json(c, false);
    cJSON_AddItemToObject(o, "output", emu_command_output_json(c, 1));
    emu_json(resp, 200, o);
}

void emu_h_command_run_wait(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_command *c = run(s, req, rt, resp);
    if (!c)
        return;
    while (!c->finished && !s->stopping)
        pthread_cond_wait(&s->cv, &s->mu);
    waited_answer(c, resp);
}

void emu_h_command_run_stream(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_command *c = run(s, req, rt, resp);
    if (c)
        emu_stream_start(resp, req, c, 1, 0);
}

typedef enum { CMD_ID } command_filter;

static bool command_keep(const void *item, const emu_list_query *q)
{
    const emu_command *c = item;
    return !q->filter[CMD_ID] || !strcmp(c->id, q->filter[CMD_ID]);
}

/* The sort key of a command: a time (0 when not yet set sorts first). */
static int64_t sort_time(const emu_command *c, const char *by)
{
    return !by ? c->t_created : !strcmp(by, "timeStarted") ? c->t_started : !strcmp(by, "timeFinished") ? c->t_finished : c->t_created;
}

static int command_cmp(const void *a, const void *b, const emu_list_query *q)
{
    const emu_command *x = a, *y = b;
    int64_t tx = sort_time(x, q->sort_by), ty = sort_time(y, q->sort_by);
    if (tx != ty)
        return tx < ty ? -1 : 1;
    if (x->t_created != y->t_created)
        return x->t_created < y->t_created ? -1 : 1;
    return strcmp(x->id, y->id);
}

static cJSON *command_summary(const void *item)
{
    return emu_command_json(item, true);
}

/* ListSandboxCommands: commandId, sortBy (timeCreated, timeStarted,
 * timeFinished), sortOrder (ASC, DESC; default ASC [decided]), limit, page.
 * Items are SandboxCommandSummary. */
void emu_h_command_list(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    static const emu_list_ops ops = {command_keep, command_cmp, command_summary};
    emu_sandbox *b = emu_h_sandbox_of(s, rt, resp);
    emu_list_query q;
    if (!b || emu_list_query_parse(req, "commandId", NULL, "timeCreated timeStarted timeFinished", &q, resp))
        return;
    emu_list_answer((void *const *)b->cmds, b->n_cmds, &ops, &q, q.desc, resp);
    emu_list_query_clear(&q);
}

/* The command of rt in its sandbox, or NULL with a 404 answered. */
static emu_command *command_of(emu_server *s, const emu_route *rt, emu_response *resp)
{
    emu_sandbox *b = emu_h_sandbox_of(s, rt, resp);
    emu_command *c = b ? emu_command_find(b, rt->command_id) : NULL;
    if (b && !c)
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "command %s not found in sandbox %s", rt->command_id, b->id);
    return c;
}

void emu_h_command_get(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    (void)req;
    emu_command *c = command_of(s, rt, resp);
    if (c)
        emu_json(resp, 200, emu_command_json(c, false));
}

void emu_h_command_output(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_command *c = command_of(s, rt, resp);
    int64_t from = 1;
    if (c && parse_seq(req, resp, "fromSeq", 1, &from) == 0)
        emu_json(resp, 200, emu_command_output_json(c, from));
}

void emu_h_command_events(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_command *c = command_of(s, rt, resp);
    int64_t from = 1, until = 0;
    if (!c || parse_seq(req, resp, "fromSeq", 1, &from) != 0 || parse_seq(req, resp, "untilSeq", 0, &until) != 0)
        return;
    if (until > 0 && until < from)
        emu_error(resp, 400, "InvalidParameter", "untilSeq %lld is below fromSeq %lld", (long long)until,
                  (long long)from);
    else
        emu_stream_start(resp, req, c, from, until);
}

void emu_h_command_cancel(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_command *c = command_of(s, rt, resp);
    cJSON *body = NULL;
    int rc;
    if (c && !emu_body_json(req, resp, &body) && !emu_json_only(body, "CancelSandboxCommandDetails", "", resp)) {
        if ((rc = emu_command_cancel(s, c)) != 0)
            emu_fail_answer(resp, rc);
        else
            resp->status = 202;
    }
    cJSON_Delete(body);
}

/* ---- event streams ---- */
void emu_stream_free(emu_stream *st)
{
    if (!st)
        return;
    emu_command_unref(st->cmd);
    free(st);
}

int emu_stream_next(emu_server *s, emu_stream *st, ocisbx_buf *out)
{
    emu_command *c = st->cmd;
    while ((size_t)st->next_seq <= c->n_events && out->len < 65536) {
        if (st->until_seq > 0 && st->next_seq > st->until_seq)
            return 1;
        cJSON *j = emu_event_json(c, &c->events[st->next_seq - 1]);
        char *text = cJSON_PrintUnformatted(j);
        cJSON_Delete(j);
        if (st->ndjson)
            ocisbx_buf_appendf(out, "%s\n", text ? text : "{}");
        else
            ocisbx_buf_appendf(out, "data: %s\n\n", text ? text : "{}");
        cJSON_free(text);
        st->next_seq++;
        st->sent++;
        if (st->cut_after > 0 && st->sent >= st->cut_after)
            return -1;
    }
    if (st->until_seq > 0 && st->next_seq > st->until_seq)
        return 1;
    if (c->finished && (size_t)st->next_seq > c->n_events)
        return 1;
    if (s->stopping)
        return 1;
    return 0;
}
