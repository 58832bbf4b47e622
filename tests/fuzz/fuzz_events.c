/* Fuzz target: the event-stream parser (SSE, NDJSON, auto-detected) fed in
 * arbitrary splits, with the resumption bookkeeping over what it yields.
 * Byte 0: format; byte 1: split seed; the rest is the stream. Every split
 * must yield exactly what feeding the whole stream at once yields. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/events.h"
#include "api/model_internal.h"
#include "ocisbx/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct sink {
    ocisbx_buf all;
    ocisbx_event_tracker t;
    int n;
} sink;

static int on_text(const char *json, size_t len, void *ud)
{
    sink *s = ud;
    ocisbx_buf_append(&s->all, json, len);
    ocisbx_buf_append(&s->all, "\x1e", 1);
    ocisbx_command_event *e = NULL;
    if (ocisbx_command_event_from_json(json, len, &e) == 0) {
        int kind = ocisbx_command_event_kind(e);
        ocisbx_event_tracker_accept(&s->t, ocisbx_command_event_seq(e), kind == OCISBX_EVENT_FINISHED);
        ocisbx_command_event_free(e);
    }
    return ++s->n > 10000; /* the stop path too */
}

static void run(int format, const char *text, size_t len, unsigned seed, sink *s)
{
    ocisbx_event_parser p;
    ocisbx_event_parser_init(&p, format, on_text, s);
    ocisbx_event_tracker_init(&s->t, 0, 0);
    size_t at = 0;
    int rc = 0;
    while (at < len && rc == 0) {
        size_t step = seed ? 1 + (seed = seed * 1103515245u + 12345u) % 17 : len - at;
        if (step > len - at)
            step = len - at;
        rc = ocisbx_event_parser_feed(&p, text + at, step);
        at += step;
    }
    if (rc == 0)
        ocisbx_event_parser_finish(&p);
    ocisbx_event_parser_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int format = data[0] % 3;
    unsigned seed = data[1] | 1u;
    const char *text = (const char *)data + 2;
    size_t len = size - 2;
    sink whole = {OCISBX_BUF_INIT, {0, 0, false}, 0}, split = {OCISBX_BUF_INIT, {0, 0, false}, 0};
    run(format, text, len, 0, &whole);
    run(format, text, len, seed, &split);
    /* splitting never changes what comes out (up to the stop limit) */
    if (whole.n <= 10000 && split.n <= 10000 &&
        (whole.all.len != split.all.len || (whole.all.len && memcmp(whole.all.data, split.all.data, whole.all.len))))
        abort();
    ocisbx_buf_free(&whole.all);
    ocisbx_buf_free(&split.all);
    return 0;
}
