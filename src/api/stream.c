/* Event streams over HTTP: one callback per event, and resumption after a
 * dropped connection from the last delivered seq + 1 (events already
 * delivered are skipped), until FINISHED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/client_internal.h"
#include "api/events.h"
#include "sys/sleep.h"

typedef struct stream_ctx {
    ocisbx_client *c;
    ocisbx_event_parser parser;
    ocisbx_event_tracker tracker;
    ocisbx_event_fn fn;
    void *user_data;
    bool user_canceled;
    bool progress; /* a new event arrived on this connection */
    bool answered; /* this connection got a 2xx answer (a cut after it is resumed) */
    int answer_status;
    int err;                   /* a parse failure inside the sink */
    ocisbx_error_saved *saved; /* its message: the transport overwrites the error when the sink stops */
    char *command_id;
    int64_t gap_seq; /* this connection skipped to this seq: resumed from the last contiguous one */
} stream_ctx;

static int on_event_text(const char *json, size_t len, void *ud)
{
    stream_ctx *s = ud;
    ocisbx_model *m = NULL;
    int rc = ocisbx_model_parse(&ocisbx_md_command_event, json, len, &m);
    if (rc) {
        s->err = ocisbx_error_wrap("event stream: ");
        if (!s->saved)
            s->saved = ocisbx_error_save();
        return 1;
    }
    const char *cid = ocisbx_model_str(m, "commandId");
    if (cid && !s->command_id && !(s->command_id = ocisbx_strdup(cid))) {
        ocisbx_model_free(m);
        s->err = ocisbx_fail_nomem();
        return 1;
    }
    int64_t seq = 0;
    ocisbx_model_int(m, "seq", &seq);
    const char *type = ocisbx_model_str(m, "event");
    bool finished = type && strcmp(type, "FINISHED") == 0;
    int stop = 0;
    if (ocisbx_event_tracker_is_gap(&s->tracker, seq)) {
        s->gap_seq = seq;
        ocisbx_model_free(m);
        return 1;
    }
    if (ocisbx_event_tracker_accept(&s->tracker, seq, finished)) {
        s->progress = true;
        if (s->fn((const ocisbx_command_event *)(const void *)m, s->user_data) != 0) {
            s->user_canceled = true;
            stop = 1;
        }
    }
    ocisbx_model_free(m);
    if (ocisbx_event_tracker_done(&s->tracker))
        stop = 1;
    return stop;
}

static int on_bytes(const void *data, size_t len, void *ud)
{
    stream_ctx *s = ud;
    int rc = ocisbx_event_parser_feed(&s->parser, data, len);
    if (rc < 0 && !s->err) {
        s->err = rc;
        if (!s->saved)
            s->saved = ocisbx_error_save();
    }
    return rc != 0;
}

int ocisbx_stream_answer_format(const char *ct)
{
    /* an answer that is no event stream (an HTML page of a proxy, say):
     * fail naming its type rather than parse it */
    if (ct && ocisbx_stream_format_from_content_type(ct) == OCISBX_STREAM_AUTO) {
        const char *p = ct;
        while (*p == ' ' || *p == '\t')
            p++;
        if (ocisbx_strncasecmp(p, "application/json", 16) != 0 && ocisbx_strncasecmp(p, "text/plain", 10) != 0 &&
            ocisbx_strncasecmp(p, "application/octet-stream", 24) != 0)
            return ocisbx_fail(OCISBX_EPARSE,
                               "event stream: unexpected content-type '%.100s' (expected "
                               "text/event-stream or application/x-ndjson)",
                               ct);
    }
    return ocisbx_stream_format_from_content_type(ct);
}

/* The answer's Content-Type picks the parser of this connection; without
 * one (or an unknown one) the first line decides. Error answers never reach
 * the sink, so their type does not matter. */
static int on_headers(int status, const ocisbx_headers *headers, void *ud)
{
    stream_ctx *s = ud;
    if (status >= 200 && status < 300) {
        s->answered = true;
        s->answer_status = status;
        int format = ocisbx_stream_answer_format(ocisbx_headers_get(headers, "content-type"));
        if (format < 0) {
            if (!s->err) {
                s->err = format;
                if (!s->saved)
                    s->saved = ocisbx_error_save();
            }
            return 1;
        }
        ocisbx_event_parser_set_format(&s->parser, format);
    }
    return 0;
}

static int64_t backoff_ms(int n)
{
    if (n <= 0)
        return 0;
    int64_t ms = 100;
    for (int i = 1; i < n && ms < 5000; i++)
        ms *= 2;
    return ms > 5000 ? 5000 : ms;
}

static int prepare(stream_ctx *s, ocisbx_http_request *req)
{
    int rc = ocisbx_http_request_set_streaming(req, 1);
    if (!rc)
        rc = ocisbx_http_request_add_header(req, "accept",
                                            s->c->prefer_ndjson ? "application/x-ndjson" : "text/event-stream");
    if (!rc)
        rc = ocisbx_http_request_set_sink_callback(req, on_bytes, s);
    if (!rc)
        rc = ocisbx_http_request_set_headers_callback(req, on_headers, s);
    return rc;
}

static int events_request(stream_ctx *s, const char *sandbox_id, int64_t until_seq, ocisbx_http_request **out)
{
    char from[24], until[24];
    snprintf(from, sizeof from, "%lld", (long long)ocisbx_event_tracker_resume_from(&s->tracker));
    snprintf(until, sizeof until, "%lld", (long long)until_seq);
    ocisbx_param p[] = {
        {"sandboxId", sandbox_id}, {"commandId", s->command_id}, {"fromSeq", from}, {"untilSeq", until}};
    int rc = ocisbx_client_request(s->c, OCISBX_OP_STREAM_COMMAND_EVENTS, p, until_seq > 0 ? 4 : 3, NULL, out);
    if (!rc) {
        rc = prepare(s, *out);
        if (rc) {
            ocisbx_http_request_free(*out);
            *out = NULL;
        }
    }
    return rc;
}

/* A stream that ends cleanly with nothing new, for a command that has
 * ended: nothing more will come (fromSeq past the last event, or events the
 * service no longer has). */
static bool command_has_ended(stream_ctx *s, const char *sandbox_id)
{
    ocisbx_error_saved *saved = ocisbx_error_save();
    ocisbx_command *cm = NULL;
    bool ended = false;
    if (ocisbx_client_get_command(s->c, sandbox_id, s->command_id, &cm) == 0) {
        int st = ocisbx_command_state(cm); /* derived: the service sends no state */
        ended = st == OCISBX_COMMAND_FINISHED || st == OCISBX_COMMAND_FINISHED_NO_EXIT_CODE;
    }
    ocisbx_command_free(cm);
    ocisbx_error_restore(saved);
    return ended;
}

/* One connection of the stream: the request (first, or the events
 * operation from where the tracker stands), sent with what is left of the
 * deadline, its last partial line parsed. *status: the HTTP status (0:
 * none; 300 or more: the service answered an error). *fatal: the
 * request could not even be made. */
typedef struct {
    int status;
    bool fatal;
} connection_end;

static int one_connection(stream_ctx *s, const char *sandbox_id, int64_t until_seq, ocisbx_http_request *first,
                          int64_t deadline_at, connection_end *end)
{
    memset(end, 0, sizeof *end);
    ocisbx_http_request *req = NULL;
    bool own = true;
    int rc = 0;
    if (first && !s->command_id) {
        /* same request object: the same opc-retry-token, so a resent run
         * that never answered is not run twice */
        req = first;
        own = false;
    } else if ((rc = events_request(s, sandbox_id, until_seq, &req)) != 0) {
        end->fatal = true;
        return rc;
    }
    s->progress = false;
    s->answered = false;
    s->gap_seq = 0;
    int64_t deadline_ms = s->c->http->opt.deadline_ms;
    if (deadline_at) {
        int64_t left = deadline_at - ocisbx_time_monotonic_ms();
        s->c->http->opt.deadline_ms = left > 0 ? left : 1;
    }
    ocisbx_http_response *resp = NULL;
    rc = ocisbx_http_send(s->c->http, req, &resp);
    s->c->http->opt.deadline_ms = deadline_ms;
    const char *rid = resp ? ocisbx_http_response_request_id(resp) : ocisbx_http_request_request_id(req);
    ocisbx_client_note_request_id(s->c, rid);
    end->status = resp ? ocisbx_http_response_status(resp) : 0;
    ocisbx_http_response_free(resp);
    if (own)
        ocisbx_http_request_free(req);
    /* canceled: a last partial line is no parse error to report */
    if (end->status < 300 && rc != OCISBX_ECANCELED && !s->err && !s->user_canceled &&
        !ocisbx_event_tracker_done(&s->tracker)) {
        int frc = ocisbx_event_parser_finish(&s->parser); /* a last NDJSON line without newline */
        if (frc < 0 && !s->err)
            s->err = frc;
    } else {
        ocisbx_event_parser_finish(&s->parser);
    }
    if (s->saved) {
        ocisbx_error_restore(s->saved);
        s->saved = NULL;
    }
    return rc;
}

static const char *command_name(const stream_ctx *s)
{
    return s->command_id ? s->command_id : "(unknown)";
}

/* The error when the stream made no progress more times in a row than the
 * resume limit allows, 0 while it may go on. */
static int stalled(const stream_ctx *s, int rc, int64_t from, int64_t gap, int no_progress)
{
    if (no_progress <= s->c->resume_limit)
        return 0;
    if (gap)
        return ocisbx_fail(OCISBX_EINTEGRITY,
                           "streaming events of %s: events %lld to %lld never came (the stream went on at seq "
                           "%lld %d times in a row)",
                           command_name(s), (long long)from, (long long)gap - 1, (long long)gap, no_progress);
    if (rc)
        return ocisbx_error_wrap("streaming events of %s from seq %lld: cut %d times in a row without a "
                                 "new event; last: ",
                                 command_name(s), (long long)from, no_progress);
    return ocisbx_fail(OCISBX_ETRANSPORT,
                       "streaming events of %s from seq %lld: the stream ended before FINISHED %d times in "
                       "a row without a new event",
                       command_name(s), (long long)from, no_progress);
}

/* Waits before the next connection; the error when the deadline would pass
 * first or the wait is canceled. */
static int resume_wait(stream_ctx *s, const char *what, int rc, int no_progress, int64_t deadline_at,
                       int64_t deadline_ms)
{
    long long from = (long long)ocisbx_event_tracker_resume_from(&s->tracker);
    ocisbx_log(OCISBX_LOG_INFO, "%s: stream of command %s dropped (%s); resuming from seq %lld", what,
               command_name(s), rc ? ocisbx_error_message(ocisbx_error_last()) : "ended early", from);
    if (deadline_at && ocisbx_time_monotonic_ms() + backoff_ms(no_progress) >= deadline_at)
        return ocisbx_fail(OCISBX_ETIMEOUT,
                           "streaming events of %s from seq %lld: deadline of %lld ms passed before FINISHED",
                           command_name(s), from, (long long)deadline_ms);
    if (ocisbx_sys_sleep_ms(backoff_ms(no_progress), s->c->http->opt.cancel, s->c->http->opt.cancel_ud) != 0)
        return ocisbx_fail(OCISBX_ECANCELED, "streaming events of %s from seq %lld: canceled", command_name(s),
                           from);
    return 0;
}

/* first: the request of the first connection (runAndStream), or NULL to
 * start with the events operation. */
static int run(stream_ctx *s, const char *sandbox_id, int64_t until_seq, ocisbx_http_request *first)
{
    const char *what = first ? "RunSandboxCommandAndStream" : "StreamSandboxCommandEvents";
    int no_progress = 0;
    /* the client's deadline bounds the whole stream, resumptions included:
     * each connection gets what is left of it */
    int64_t deadline_ms = s->c->http->opt.deadline_ms;
    int64_t deadline_at = deadline_ms > 0 ? ocisbx_time_monotonic_ms() + deadline_ms : 0;
    for (;;) {
        int64_t from = ocisbx_event_tracker_resume_from(&s->tracker);
        connection_end end;
        int rc = one_connection(s, sandbox_id, until_seq, first, deadline_at, &end);
        if (end.fatal)
            return rc;
        if (s->err) {
            ocisbx_error_annotate(end.status ? end.status : s->answered ? s->answer_status : 0,
                                  s->c->last_request_id);
            return s->err;
        }
        if (s->user_canceled)
            return ocisbx_fail(OCISBX_ECANCELED, "%s: canceled by the event callback", what);
        if (ocisbx_event_tracker_done(&s->tracker)) {
            ocisbx_error_clear();
            return 0;
        }
        int64_t gap = s->gap_seq;
        if (gap)
            rc = 0; /* the stream was stopped here on purpose: resume */
        if (end.status >= 300)
            return rc;
        if (rc && rc != OCISBX_ETRANSPORT && rc != OCISBX_ETIMEOUT)
            return rc;
        /* No answer at all: the transport has already retried (or the
         * deadline passed), so resuming would only multiply its attempts. */
        if (rc && !s->answered) {
            if (first && !s->command_id)
                return ocisbx_error_wrap("%s: ", what);
            return ocisbx_error_wrap("streaming events of %s from seq %lld: ", s->command_id, (long long)from);
        }
        if (rc == 0 && !gap && !s->progress && s->command_id && command_has_ended(s, sandbox_id)) {
            ocisbx_error_clear();
            return 0;
        }
        no_progress = s->progress ? 0 : no_progress + 1;
        int src = stalled(s, rc, from, gap, no_progress);
        if (!src)
            src = resume_wait(s, what, rc, no_progress, deadline_at, deadline_ms);
        if (src)
            return src;
    }
}

static void ctx_init(stream_ctx *s, ocisbx_client *c, ocisbx_event_fn fn, void *ud, int64_t from, int64_t until)
{
    memset(s, 0, sizeof *s);
    s->c = c;
    s->fn = fn;
    s->user_data = ud;
    ocisbx_event_parser_init(&s->parser, OCISBX_STREAM_AUTO, on_event_text, s);
    ocisbx_event_tracker_init(&s->tracker, from, until);
}

int ocisbx_client_stream_command_events(ocisbx_client *c, const char *sandbox_id, const char *command_id,
                                        int64_t from_seq, int64_t until_seq, ocisbx_event_fn fn, void *user_data)
{
    if (!c || !fn)
        return ocisbx_fail(OCISBX_EINVAL, "stream command events: client and callback are required");
    if (!command_id || !command_id[0])
        return ocisbx_fail(OCISBX_EINVAL, "stream command events: command id is required");
    if (until_seq > 0 && from_seq > until_seq)
        return ocisbx_fail(OCISBX_EINVAL, "stream command events: fromSeq %lld is after untilSeq %lld",
                           (long long)from_seq, (long long)until_seq);
    stream_ctx s;
    ctx_init(&s, c, fn, user_data, from_seq, until_seq);
    s.command_id = ocisbx_strdup(command_id);
    int rc = s.command_id ? run(&s, sandbox_id, until_seq, NULL) : ocisbx_fail_nomem();
    ocisbx_event_parser_release(&s.parser);
    free(s.command_id);
    return rc;
}

int ocisbx_client_run_command_and_stream(ocisbx_client *c, const char *sandbox_id,
                                         const ocisbx_run_command_details *d, ocisbx_event_fn fn, void *user_data,
                                         char **command_id)
{
    if (command_id)
        *command_id = NULL;
    if (!c || !fn)
        return ocisbx_fail(OCISBX_EINVAL, "run command and stream: client and callback are required");
    const ocisbx_model *body = (const ocisbx_model *)(const void *)d;
    if (!body || !ocisbx_model_str(body, "command"))
        return ocisbx_fail(OCISBX_EINVAL, "RunSandboxCommandDetails.command: required");
    stream_ctx s;
    ctx_init(&s, c, fn, user_data, -1, 0);
    ocisbx_param p[] = {{"sandboxId", sandbox_id}};
    ocisbx_http_request *first = NULL;
    int rc = ocisbx_client_request(c, OCISBX_OP_RUN_COMMAND_AND_STREAM, p, 1, body, &first);
    if (!rc)
        rc = prepare(&s, first);
    if (!rc)
        rc = run(&s, sandbox_id, 0, first);
    ocisbx_http_request_free(first);
    ocisbx_event_parser_release(&s.parser);
    if (command_id && s.command_id) {
        *command_id = s.command_id;
        s.command_id = NULL;
    }
    free(s.command_id);
    return rc;
}
