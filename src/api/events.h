/* Event streams (internal): an incremental parser for text/event-stream and
 * NDJSON that takes bytes split anywhere, and the seq bookkeeping that makes
 * resumption after a dropped connection deliver each event exactly once. */
#ifndef OCISBX_API_EVENTS_H
#define OCISBX_API_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/internal.h"

typedef enum ocisbx_stream_format {
    OCISBX_STREAM_AUTO = 0, /* no usable Content-Type: the first non-blank line decides, '{' is NDJSON */
    OCISBX_STREAM_SSE = 1,  /* text/event-stream */
    OCISBX_STREAM_NDJSON = 2
} ocisbx_stream_format;

/* The most one line or one event may hold; beyond it: OCISBX_EPARSE. */
#define OCISBX_EVENT_MAX_BYTES (16u * 1024u * 1024u)

/* Gets each complete event's JSON text (not NUL-terminated: len bytes).
 * A non-zero return stops the parser; feed returns it. */
typedef int (*ocisbx_event_text_fn)(const char *json, size_t len, void *user_data);

typedef struct ocisbx_event_parser {
    int format;
    int initial_format; /* AUTO decides again on each connection */
    ocisbx_buf line;
    ocisbx_buf data;
    bool have_data;
    bool skip_lf; /* the last line ended with \r: a following \n belongs to it */
    ocisbx_event_text_fn fn;
    void *user_data;
} ocisbx_event_parser;

/* The format from a Content-Type value (NULL or unknown: AUTO). */
int ocisbx_stream_format_from_content_type(const char *content_type);

/* The format of an answer's Content-Type (stream.c): a stream's, AUTO for
 * none or JSON / plain text / octet-stream (the first line decides), else
 * OCISBX_EPARSE naming the type (no event stream: an HTML page of a
 * proxy, say). */
int ocisbx_stream_answer_format(const char *content_type);

void ocisbx_event_parser_init(ocisbx_event_parser *p, int format, ocisbx_event_text_fn fn, void *user_data);
/* The format of the current connection, from its Content-Type: AUTO keeps
 * the first-line sniffing. Call before its first byte; finish() goes back
 * to the format given to init for the next connection. */
void ocisbx_event_parser_set_format(ocisbx_event_parser *p, int format);
/* 0, the callback's non-zero value, or a negative OCISBX_E*. */
int ocisbx_event_parser_feed(ocisbx_event_parser *p, const char *data, size_t len);
/* End of a stream: an NDJSON last line without its newline is delivered
 * when it is complete JSON; any other partial line or event is dropped
 * (a cut connection never delivers half an event). Resets for the next
 * connection (AUTO detects the format again). Returns like feed. */
int ocisbx_event_parser_finish(ocisbx_event_parser *p);
void ocisbx_event_parser_release(ocisbx_event_parser *p);

/* Resumption: which events to deliver and where to resume. */
typedef struct ocisbx_event_tracker {
    int64_t last_seq;  /* the last seq delivered (from_seq - 1 at the start) */
    int64_t until_seq; /* 0: no limit */
    bool finished;     /* FINISHED delivered */
    bool seen;         /* an event has been delivered */
} ocisbx_event_tracker;

void ocisbx_event_tracker_init(ocisbx_event_tracker *t, int64_t from_seq, int64_t until_seq);
/* true: deliver this event (and it is recorded); false: already delivered
 * (a replay after resumption) or past until_seq. */
bool ocisbx_event_tracker_accept(ocisbx_event_tracker *t, int64_t seq, bool is_finished);
/* true when seq would leave a hole after the last delivered event (2 then
 * 5): the events between are missing from this connection, which must be
 * resumed from the last contiguous seq instead. The first event of a
 * stream is never a gap (the service may start wherever it kept events). */
bool ocisbx_event_tracker_is_gap(const ocisbx_event_tracker *t, int64_t seq);
/* true when the stream is complete: FINISHED seen or until_seq reached. */
bool ocisbx_event_tracker_done(const ocisbx_event_tracker *t);
/* The fromSeq of the next connection. */
int64_t ocisbx_event_tracker_resume_from(const ocisbx_event_tracker *t);

#endif
