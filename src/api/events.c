/* The event-stream parser and the resumption bookkeeping. */
#include <string.h>

#include <cjson/cJSON.h>

#include "api/events.h"

int ocisbx_stream_format_from_content_type(const char *ct)
{
    if (!ct)
        return OCISBX_STREAM_AUTO;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    if (ocisbx_strncasecmp(ct, "text/event-stream", 17) == 0)
        return OCISBX_STREAM_SSE;
    if (ocisbx_strncasecmp(ct, "application/x-ndjson", 20) == 0 ||
        ocisbx_strncasecmp(ct, "application/jsonl", 17) == 0 || ocisbx_strncasecmp(ct, "application/ndjson", 18) == 0)
        return OCISBX_STREAM_NDJSON;
    return OCISBX_STREAM_AUTO;
}

void ocisbx_event_parser_init(ocisbx_event_parser *p, int format, ocisbx_event_text_fn fn, void *user_data)
{
    memset(p, 0, sizeof *p);
    p->format = format;
    p->initial_format = format;
    p->fn = fn;
    p->user_data = user_data;
}

void ocisbx_event_parser_set_format(ocisbx_event_parser *p, int format)
{
    if (format == OCISBX_STREAM_SSE || format == OCISBX_STREAM_NDJSON)
        p->format = format;
    else
        p->format = p->initial_format;
}

void ocisbx_event_parser_release(ocisbx_event_parser *p)
{
    ocisbx_buf_free(&p->line);
    ocisbx_buf_free(&p->data);
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return false;
    return true;
}

static int dispatch(ocisbx_event_parser *p, const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n == 0)
        return 0; /* an event without data is nothing to deliver */
    return p->fn(s, n, p->user_data);
}

static int sse_line(ocisbx_event_parser *p, const char *s, size_t n)
{
    if (n == 0) { /* blank line: the event is complete */
        if (!p->have_data)
            return 0;
        p->have_data = false;
        int rc = dispatch(p, p->data.data ? p->data.data : "", p->data.len);
        ocisbx_buf_clear(&p->data);
        return rc;
    }
    if (s[0] == ':')
        return 0; /* comment / keep-alive */
    const char *colon = memchr(s, ':', n);
    size_t name_len = colon ? (size_t)(colon - s) : n;
    if (name_len != 4 || memcmp(s, "data", 4) != 0)
        return 0; /* event:, id:, retry: carry nothing we use */
    const char *v = colon ? colon + 1 : s + n;
    size_t vlen = (size_t)(s + n - v);
    if (vlen && *v == ' ')
        v++, vlen--;
    if (p->have_data && ocisbx_buf_append(&p->data, "\n", 1))
        return OCISBX_ENOMEM;
    if (p->data.len + vlen > OCISBX_EVENT_MAX_BYTES)
        return ocisbx_fail(OCISBX_EPARSE, "event stream: an event is larger than %u bytes", OCISBX_EVENT_MAX_BYTES);
    if (ocisbx_buf_append(&p->data, v, vlen))
        return OCISBX_ENOMEM;
    p->have_data = true;
    return 0;
}

static int end_line(ocisbx_event_parser *p)
{
    const char *s = p->line.data ? p->line.data : "";
    size_t n = p->line.len;
    if (p->format == OCISBX_STREAM_AUTO) {
        if (blank(s, n)) {
            ocisbx_buf_clear(&p->line);
            return 0;
        }
        size_t i = 0;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        p->format = s[i] == '{' ? OCISBX_STREAM_NDJSON : OCISBX_STREAM_SSE;
    }
    int rc = p->format == OCISBX_STREAM_NDJSON ? dispatch(p, s, n) : sse_line(p, s, n);
    ocisbx_buf_clear(&p->line);
    return rc;
}

int ocisbx_event_parser_feed(ocisbx_event_parser *p, const char *data, size_t len)
{
    size_t i = 0;
    while (i < len) {
        if (p->skip_lf) {
            p->skip_lf = false;
            if (data[i] == '\n') {
                i++;
                continue;
            }
        }
        /* copy the run up to the next line end in one go */
        size_t j = i;
        while (j < len && data[j] != '\n' && data[j] != '\r')
            j++;
        if (j > i) {
            if (p->line.len + (j - i) > OCISBX_EVENT_MAX_BYTES)
                return ocisbx_fail(OCISBX_EPARSE, "event stream: a line is longer than %u bytes",
                                   OCISBX_EVENT_MAX_BYTES);
            if (ocisbx_buf_append(&p->line, data + i, j - i))
                return OCISBX_ENOMEM;
        }
        if (j == len)
            break;
        if (data[j] == '\r')
            p->skip_lf = true;
        int rc = end_line(p);
        if (rc)
            return rc;
        i = j + 1;
    }
    return 0;
}

int ocisbx_event_parser_finish(ocisbx_event_parser *p)
{
    int rc = 0;
    if (p->line.len && p->format != OCISBX_STREAM_SSE) {
        /* an NDJSON line cut before its newline counts only when whole */
        cJSON *j = cJSON_ParseWithLength(p->line.data, p->line.len);
        if (j && cJSON_IsObject(j)) {
            if (p->format == OCISBX_STREAM_AUTO && !blank(p->line.data, p->line.len))
                p->format = OCISBX_STREAM_NDJSON;
            rc = dispatch(p, p->line.data, p->line.len);
        }
        cJSON_Delete(j);
    }
    ocisbx_buf_clear(&p->line);
    ocisbx_buf_clear(&p->data);
    p->have_data = false;
    p->skip_lf = false;
    p->format = p->initial_format;
    return rc;
}

void ocisbx_event_tracker_init(ocisbx_event_tracker *t, int64_t from_seq, int64_t until_seq)
{
    t->last_seq = from_seq >= 0 ? from_seq - 1 : 0; /* < 0: from the start (1) */
    t->until_seq = until_seq > 0 ? until_seq : 0;
    t->finished = false;
    t->seen = false;
}

bool ocisbx_event_tracker_is_gap(const ocisbx_event_tracker *t, int64_t seq)
{
    return t->seen && seq > t->last_seq + 1;
}

bool ocisbx_event_tracker_accept(ocisbx_event_tracker *t, int64_t seq, bool is_finished)
{
    if (seq <= t->last_seq)
        return false;
    if (t->until_seq && seq > t->until_seq)
        return false;
    t->last_seq = seq;
    t->seen = true;
    if (is_finished)
        t->finished = true;
    return true;
}

bool ocisbx_event_tracker_done(const ocisbx_event_tracker *t)
{
    return t->finished || (t->until_seq && t->last_seq >= t->until_seq);
}

int64_t ocisbx_event_tracker_resume_from(const ocisbx_event_tracker *t)
{
    return t->last_seq + 1;
}
