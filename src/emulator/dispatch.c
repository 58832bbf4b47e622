/* One request, start to end, without a socket: request id, fault rules, body
 * limit, authentication, route, retry token, handler. */
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emulator/emu.h"
#include "emulator/throttle.h"
#include "ocisbx/util.h"
#include "sys/sleep.h"

static bool fault_path_match(const char *pattern, const char *path)
{
    size_t n = strlen(pattern);
    if (n < 3 || strcmp(pattern + n - 3, "/**") != 0)
        return fnmatch(pattern, path, FNM_PATHNAME) == 0;
    /* "prefix/" + "**": the path's leading segments match prefix (itself or below) */
    char *prefix = ocisbx_strndup(pattern, n - 3);
    if (!prefix)
        return false;
    size_t segs = 0;
    for (const char *p = prefix; *p; p++)
        segs += *p == '/';
    const char *q = path;
    size_t seen = 0;
    while (*q && !(q > path && *q == '/' && seen == segs)) {
        seen += *q == '/';
        if (seen > segs)
            break;
        q++;
    }
    char *head = ocisbx_strndup(path, (size_t)(q - path));
    bool ok = head && fnmatch(prefix, head, FNM_PATHNAME) == 0;
    free(head);
    free(prefix);
    return ok;
}

/* The first matching rule with firings left (and drawn by its probability). */
static emu_fault *pick_fault(emu_server *s, const char *method, const char *rel)
{
    for (size_t i = 0; i < s->cfg->n_faults; i++) {
        emu_fault *f = &s->cfg->faults[i];
        if (f->times >= 0 && f->fired >= f->times)
            continue;
        if (f->method && strcmp(f->method, "*") && ocisbx_strcasecmp(f->method, method))
            continue;
        if (f->path && !fault_path_match(f->path, rel))
            continue;
        if (f->probability < 1.0) {
            double r = (double)(emu_rand(&s->rng) >> 11) / 9007199254740992.0;
            if (r >= f->probability)
                continue;
        }
        f->fired++;
        return f;
    }
    return NULL;
}

static const char *status_code_name(int status)
{
    switch (status) {
    case 400: return "InvalidParameter";
    case 401: return "NotAuthenticated";
    case 404: return "NotAuthorizedOrNotFound";
    case 409: return "IncorrectState";
    case 412: return "PreconditionFailed";
    case 413: return "PayloadTooLarge";
    case 429: return "TooManyRequests";
    case 500: return "InternalServerError";
    case 502: return "BadGateway";
    case 503: return "ServiceUnavailable";
    case 504: return "GatewayTimeout";
    default: return "Error";
    }
}

static void retry_store(emu_retry *r, const emu_response *resp)
{
    static const char *const keep[] = {"etag", "opc-content-sha256", "opc-next-page", "retry-after"};
    r->status = resp->status;
    r->content_type = ocisbx_strdup(resp->content_type);
    r->body = ocisbx_strndup(resp->body.data ? resp->body.data : "", resp->body.len);
    r->body_len = resp->body.len;
    int k = 0;
    for (size_t i = 0; i < 4; i++) {
        const char *v = emu_response_get_header(resp, keep[i]);
        if (v) {
            r->hdr_names[k] = ocisbx_strdup(keep[i]);
            r->hdr_values[k] = ocisbx_strdup(v);
            k++;
        }
    }
    if (resp->stream)
        snprintf(r->command_id, sizeof r->command_id, "%s", resp->stream->cmd->id);
    r->done = true;
}

/* A record cut by a crash (m_retry.h): the answer of its route from the
 * command it started, as the command is now; -1 when there is none. */
static int replay_cut(emu_server *s, const emu_request *req, const emu_retry *r, emu_route_id id,
                      emu_response *resp)
{
    emu_command *c = emu_command_find_any(s, r->started_cmd);
    if (!c)
        return -1;
    if (id == EMU_R_COMMAND_RUN) {
        cJSON *o = cJSON_CreateObject(); /* SandboxCommandIdentifier [public] */
        cJSON_AddStringToObject(o, "id", c->id);
        emu_json(resp, 200, o);
    } else if (id == EMU_R_COMMAND_RUN_WAIT) {
        cJSON *o = emu_command_json(c, false);
        cJSON_AddItemToObject(o, "output", emu_command_output_json(c, 1));
        emu_json(resp, 200, o);
    } else if (id == EMU_R_COMMAND_RUN_STREAM) {
        emu_stream_start(resp, req, c, 1, 0); /* replays its stream */
    } else {
        return -1;
    }
    return 0;
}

static int retry_replay(emu_server *s, const emu_request *req, const emu_retry *r, emu_route_id id,
                        emu_response *resp)
{
    if (r->cut)
        return replay_cut(s, req, r, id, resp);
    emu_command *c = r->command_id[0] ? emu_command_find_any(s, r->command_id) : NULL;
    if (c) {
        emu_stream_start(resp, req, c, 1, 0);
        return 0;
    }
    resp->status = r->status;
    snprintf(resp->content_type, sizeof resp->content_type, "%s", r->content_type ? r->content_type : "");
    ocisbx_buf_clear(&resp->body);
    ocisbx_buf_append(&resp->body, r->body ? r->body : "", r->body_len);
    for (int i = 0; i < 4 && r->hdr_names[i]; i++)
        emu_response_header(resp, r->hdr_names[i], r->hdr_values[i]);
    return 0;
}

/* The dispatch table: the handler of every route of routes.c
 * (tests/unit/test_emu_routes.c walks the client's route table through it). */
static const struct {
    emu_route_id id;
    emu_handler_fn fn;
} HANDLERS[] = {
    {EMU_R_SANDBOX_CREATE, emu_h_sandbox_create},
    {EMU_R_SANDBOX_LIST, emu_h_sandbox_list},
    {EMU_R_SANDBOX_GET, emu_h_sandbox_get},
    {EMU_R_SANDBOX_UPDATE, emu_h_sandbox_update},
    {EMU_R_SANDBOX_DELETE, emu_h_sandbox_delete},
    {EMU_R_SANDBOX_STOP, emu_h_sandbox_stop},
    {EMU_R_SANDBOX_EXTEND, emu_h_sandbox_extend},
    {EMU_R_SANDBOX_SUSPEND, emu_h_sandbox_suspend},
    {EMU_R_SANDBOX_RESUME, emu_h_sandbox_resume},
    {EMU_R_COMMAND_RUN, emu_h_command_run},
    {EMU_R_COMMAND_RUN_WAIT, emu_h_command_run_wait},
    {EMU_R_COMMAND_RUN_STREAM, emu_h_command_run_stream},
    {EMU_R_COMMAND_LIST, emu_h_command_list},
    {EMU_R_COMMAND_GET, emu_h_command_get},
    {EMU_R_COMMAND_OUTPUT, emu_h_command_output},
    {EMU_R_COMMAND_EVENTS, emu_h_command_events},
    {EMU_R_COMMAND_CANCEL, emu_h_command_cancel},
    {EMU_R_FILE_WRITE, emu_h_file_write},
    {EMU_R_FILE_READ, emu_h_file_read},
    {EMU_R_SNAPSHOT_CREATE, emu_h_snapshot_create},
    {EMU_R_SNAPSHOT_LIST, emu_h_snapshot_list},
    {EMU_R_SNAPSHOT_GET, emu_h_snapshot_get},
    {EMU_R_SNAPSHOT_DELETE, emu_h_snapshot_delete},
};

emu_handler_fn emu_route_handler(emu_route_id id)
{
    for (size_t i = 0; i < sizeof HANDLERS / sizeof HANDLERS[0]; i++)
        if (HANDLERS[i].id == id)
            return HANDLERS[i].fn;
    return NULL;
}

static void route(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp)
{
    emu_handler_fn fn = emu_route_handler(rt->id);
    if (fn)
        fn(s, req, rt, resp);
    else
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "no such route");
}

/* The service's throttling (limits.requests_per_second and
 * limits.creates_per_second, per user): true when refused, with a 429
 * TooManyRequests and its retry-after answered. */
static bool throttled(emu_server *s, size_t who, bool create, emu_response *resp)
{
    const emu_limits *l = &s->cfg->limits;
    const char *what = "";
    int after = emu_throttle_check(s->throttle, l->requests_per_second, l->creates_per_second, who, create,
                                   ocisbx_time_monotonic_ms(), &what);
    if (!after)
        return false;
    char ra[16];
    snprintf(ra, sizeof ra, "%d", after);
    emu_response_header(resp, "retry-after", ra);
    bool creates = !strcmp(what, "limits.creates_per_second");
    emu_error(resp, 429, "TooManyRequests", "too many %s for this user (%s: %g per second); retry after %d s",
              creates ? "creates" : "requests", what, creates ? l->creates_per_second : l->requests_per_second,
              after);
    return true;
}

/* The cancel question of a fault's delay: the server is stopping. */
static int server_stopping(void *ud)
{
    emu_server *s = ud;
    pthread_mutex_lock(&s->mu);
    bool stopping = s->stopping;
    pthread_mutex_unlock(&s->mu);
    return stopping;
}

/* The request id (the client's when valid, else a new one) on the answer. */
static void request_id(const emu_request *req, emu_response *resp)
{
    const char *rid = emu_request_header(req, "opc-request-id");
    char gen[40];
    if (!rid || !emu_valid_request_id(rid)) {
        emu_new_id("emu-", gen, sizeof gen);
        for (char *p = gen; *p; p++)
            if (*p >= 'a' && *p <= 'z')
                *p = (char)(*p - 32);
        rid = gen;
    }
    emu_response_header(resp, "opc-request-id", rid);
}

/* The fault rule of the request, if any: true when it made the answer (a
 * status, a reset, or a delay cut by the server's stop). *cut gets its
 * cut_stream_after_events. */
static bool apply_fault(emu_server *s, const emu_request *req, const char *rel, emu_response *resp, int *cut)
{
    pthread_mutex_lock(&s->mu);
    emu_fault *f = pick_fault(s, req->method, rel);
    int delay = f ? f->delay_ms : 0, status = f ? f->status : 0;
    int retry_after = f ? f->retry_after_s : -1;
    bool reset = f && f->reset;
    *cut = f ? f->cut_after_events : 0;
    pthread_mutex_unlock(&s->mu);
    if (reset) {
        resp->reset = true;
        return true;
    }
    if (status) {
        if (retry_after >= 0) {
            char ra[16];
            snprintf(ra, sizeof ra, "%d", retry_after);
            emu_response_header(resp, "retry-after", ra);
        }
        emu_error(resp, status, status_code_name(status), "injected fault (tenancy file rule)");
        return true;
    }
    /* the one sleep (src/sys), cut short when the server stops */
    if (delay > 0 && ocisbx_sys_sleep_ms(delay, server_stopping, s) == OCISBX_ECANCELED) {
        emu_error(resp, 503, "ServiceUnavailable", "the emulator is shutting down");
        return true;
    }
    return false;
}

/* Everything before the state is touched: body size, authentication,
 * throttling, route, retry token. false when refused (answered). */
static bool admit(emu_server *s, const emu_request *req, const char *rel, emu_route *rt, emu_response *resp)
{
    if (req->body_too_large) {
        emu_error(resp, 413, "PayloadTooLarge", "the request body is larger than %lld bytes",
                  (long long)s->cfg->limits.max_body_bytes);
        return false;
    }
    size_t who = SIZE_MAX;
    if (emu_authenticate(s, req, resp, &who) != 0)
        return false;
    int mrc = emu_route_match(req->method, rel, rt);
    if (throttled(s, who, mrc == 0 && rt->id == EMU_R_SANDBOX_CREATE, resp))
        return false;
    if (mrc == 405) {
        emu_error(resp, 405, "MethodNotAllowed", "%s is not allowed on %s", req->method, rel);
        return false;
    }
    if (mrc != 0) {
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "no such route: %s %s", req->method, rel);
        return false;
    }
    const char *token = !strcmp(req->method, "POST") ? emu_request_header(req, "opc-retry-token") : NULL;
    if (token && (!emu_valid_request_id(token) || strlen(token) > 64)) {
        emu_error(resp, 400, "InvalidParameter", "opc-retry-token must be 1-64 letters, digits, '_' or '-'");
        return false;
    }
    return true;
}

/* With s->mu held: the route's handler, under the request's retry token
 * when it has one (a repeat of an answered token is answered again). */
static void handle_locked(emu_server *s, const emu_request *req, const char *rel, const emu_route *rt,
                          emu_response *resp)
{
    const char *token = !strcmp(req->method, "POST") ? emu_request_header(req, "opc-retry-token") : NULL;
    emu_retry *r = NULL;
    if (s->stopping) {
        emu_error(resp, 503, "ServiceUnavailable", "the emulator is shutting down");
        return;
    }
    if (token) {
        char *key = ocisbx_asprintf("%s %s %s?%s", token, req->method, rel, req->query ? req->query : "");
        emu_retry *old;
        while (key && (old = emu_retry_find(s, key)) && !old->done && !s->stopping)
            pthread_cond_wait(&s->cv, &s->mu);
        old = key ? emu_retry_find(s, key) : NULL;
        if (old && old->done && retry_replay(s, req, old, rt->id, resp) == 0) {
            free(key);
            return;
        }
        if (old && old->done) /* a cut record without its command: acted on anew */
            emu_retry_remove(s, old);
        r = key ? emu_retry_add(s, key) : NULL;
    }
    emu_retry_set_current(r);
    route(s, req, rt, resp);
    emu_retry_set_current(NULL);
    if (r) {
        /* only a success is remembered: a refused request may be retried */
        if (resp->status < 400)
            retry_store(r, resp);
        else
            emu_retry_remove(s, r);
        s->dirty = true;
        pthread_cond_broadcast(&s->cv);
    }
}

void emu_handle(emu_server *s, const emu_request *req, emu_response *resp)
{
    request_id(req, resp);
    size_t plen = strlen(s->api_version) + 1;
    const char *path = req->path ? req->path : "";
    if (path[0] != '/' || strncmp(path + 1, s->api_version, plen - 1) != 0 ||
        (path[plen] != '/' && path[plen] != 0)) {
        emu_error(resp, 404, "NotAuthorizedOrNotFound", "no such path: the API lives under /%s/", s->api_version);
        return;
    }
    const char *rel = path[plen] ? path + plen : "/";
    int cut = 0;
    emu_route rt;
    if (apply_fault(s, req, rel, resp, &cut) || !admit(s, req, rel, &rt, resp))
        return;
    pthread_mutex_lock(&s->mu);
    handle_locked(s, req, rel, &rt, resp);
    if (resp->stream)
        resp->stream->cut_after = cut;
    /* durable before the answer is sent (a group commit: store.c) */
    emu_store_commit(s);
    pthread_mutex_unlock(&s->mu);
}
