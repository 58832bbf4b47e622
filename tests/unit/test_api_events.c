/* The event-stream parser (SSE and NDJSON, fed whole, byte by byte and in
 * random splits) and the resumption bookkeeping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/events.h"

typedef struct collected {
    char out[8192];
    size_t len;
    int count;
    int stop_after; /* 0: never */
} collected;

static int collect(const char *json, size_t len, void *ud)
{
    collected *c = ud;
    assert_true(c->len + len + 1 < sizeof c->out);
    memcpy(c->out + c->len, json, len);
    c->len += len;
    c->out[c->len++] = '|';
    c->out[c->len] = '\0';
    c->count++;
    return c->stop_after && c->count >= c->stop_after ? 7 : 0;
}

/* Feeds text in pieces cut at the given offsets; returns what was collected. */
static void feed_split(int format, const char *text, const size_t *cuts, size_t ncuts, collected *c, bool finish)
{
    ocisbx_event_parser p;
    ocisbx_event_parser_init(&p, format, collect, c);
    size_t at = 0, len = strlen(text);
    for (size_t i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        assert_int_equal(ocisbx_event_parser_feed(&p, text + at, end - at), 0);
        at = end;
    }
    if (finish)
        assert_int_equal(ocisbx_event_parser_finish(&p), 0);
    ocisbx_event_parser_release(&p);
}

static const char *SSE = ": keep-alive\r\n"
                         "event: message\n"
                         "data: {\"seq\":1,\"event\":\"STARTED\"}\n"
                         "\n"
                         "id: 2\r\n"
                         "data:{\"seq\":2,\"event\":\"STDOUT\",\"data\":\"a\\nb\"}\r\n"
                         "\r\n"
                         "data: {\"seq\":3,\r"
                         "data: \"event\":\"STDERR\"}\r"
                         "\r"
                         "\n\n"
                         "data: {\"seq\":4,\"event\":\"FINISHED\",\"exitCode\":0}\n\n";
static const char *SSE_WANT = "{\"seq\":1,\"event\":\"STARTED\"}|{\"seq\":2,\"event\":\"STDOUT\",\"data\":\"a\\nb\"}|"
                              "{\"seq\":3,\n\"event\":\"STDERR\"}|{\"seq\":4,\"event\":\"FINISHED\",\"exitCode\":0}|";

static const char *ND = "{\"seq\":1,\"event\":\"STARTED\"}\n"
                        "\n"
                        "{\"seq\":2,\"event\":\"STDOUT\",\"data\":\"x\"}\r\n"
                        "  {\"seq\":3,\"event\":\"FINISHED\"}  \n";
static const char *ND_WANT = "{\"seq\":1,\"event\":\"STARTED\"}|{\"seq\":2,\"event\":\"STDOUT\",\"data\":\"x\"}|"
                             "{\"seq\":3,\"event\":\"FINISHED\"}|";

static void test_whole(void **state)
{
    (void)state;
    collected c = {0};
    feed_split(OCISBX_STREAM_SSE, SSE, NULL, 0, &c, true);
    assert_string_equal(c.out, SSE_WANT);
    memset(&c, 0, sizeof c);
    feed_split(OCISBX_STREAM_NDJSON, ND, NULL, 0, &c, true);
    assert_string_equal(c.out, ND_WANT);
    /* AUTO picks the format from the first line */
    memset(&c, 0, sizeof c);
    feed_split(OCISBX_STREAM_AUTO, SSE, NULL, 0, &c, true);
    assert_string_equal(c.out, SSE_WANT);
    memset(&c, 0, sizeof c);
    feed_split(OCISBX_STREAM_AUTO, ND, NULL, 0, &c, true);
    assert_string_equal(c.out, ND_WANT);
}

static void test_byte_by_byte(void **state)
{
    (void)state;
    const char *texts[] = {SSE, ND};
    const char *wants[] = {SSE_WANT, ND_WANT};
    for (int t = 0; t < 2; t++) {
        size_t len = strlen(texts[t]);
        size_t *cuts = malloc(len * sizeof *cuts);
        for (size_t i = 0; i < len; i++)
            cuts[i] = i;
        collected c = {0};
        feed_split(OCISBX_STREAM_AUTO, texts[t], cuts, len, &c, true);
        assert_string_equal(c.out, wants[t]);
        free(cuts);
    }
}

static void test_random_splits(void **state)
{
    (void)state;
    srand(12345);
    const char *texts[] = {SSE, ND};
    const char *wants[] = {SSE_WANT, ND_WANT};
    for (int round = 0; round < 2000; round++) {
        int t = round & 1;
        size_t len = strlen(texts[t]);
        size_t cuts[8];
        size_t n = (size_t)(rand() % 8);
        for (size_t i = 0; i < n; i++)
            cuts[i] = (size_t)rand() % (len + 1);
        /* sort the cut points */
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
                size_t x = cuts[j];
                cuts[j] = cuts[j - 1];
                cuts[j - 1] = x;
            }
        collected c = {0};
        feed_split(round % 3 == 0 ? OCISBX_STREAM_AUTO : (t ? OCISBX_STREAM_NDJSON : OCISBX_STREAM_SSE), texts[t],
                   cuts, n, &c, true);
        assert_string_equal(c.out, wants[t]);
    }
}

static void test_cut_connection_drops_partial(void **state)
{
    (void)state;
    /* SSE: an event without its blank line is never delivered */
    collected c = {0};
    feed_split(OCISBX_STREAM_SSE, "data: {\"seq\":1}\n\ndata: {\"seq\":2}\n", NULL, 0, &c, true);
    assert_string_equal(c.out, "{\"seq\":1}|");
    /* NDJSON: a half line is dropped, a whole last line without newline counts */
    memset(&c, 0, sizeof c);
    feed_split(OCISBX_STREAM_NDJSON, "{\"seq\":1}\n{\"seq\":2,\"ev", NULL, 0, &c, true);
    assert_string_equal(c.out, "{\"seq\":1}|");
    memset(&c, 0, sizeof c);
    feed_split(OCISBX_STREAM_NDJSON, "{\"seq\":1}\n{\"seq\":2}", NULL, 0, &c, true);
    assert_string_equal(c.out, "{\"seq\":1}|{\"seq\":2}|");
    /* after finish, the parser starts clean (no half line carried over) */
    ocisbx_event_parser p;
    memset(&c, 0, sizeof c);
    ocisbx_event_parser_init(&p, OCISBX_STREAM_SSE, collect, &c);
    assert_int_equal(ocisbx_event_parser_feed(&p, "data: {\"half", 12), 0);
    assert_int_equal(ocisbx_event_parser_finish(&p), 0);
    assert_int_equal(ocisbx_event_parser_feed(&p, "data: {\"seq\":5}\n\n", 17), 0);
    assert_string_equal(c.out, "{\"seq\":5}|");
    ocisbx_event_parser_release(&p);
}

static void test_callback_stops(void **state)
{
    (void)state;
    collected c = {0};
    c.stop_after = 2;
    ocisbx_event_parser p;
    ocisbx_event_parser_init(&p, OCISBX_STREAM_SSE, collect, &c);
    assert_int_equal(ocisbx_event_parser_feed(&p, SSE, strlen(SSE)), 7);
    assert_int_equal(c.count, 2);
    ocisbx_event_parser_release(&p);
}

static void test_too_long(void **state)
{
    (void)state;
    collected c = {0};
    ocisbx_event_parser p;
    ocisbx_event_parser_init(&p, OCISBX_STREAM_NDJSON, collect, &c);
    size_t chunk = 1024 * 1024;
    char *junk = malloc(chunk);
    memset(junk, 'a', chunk);
    int rc = 0;
    for (int i = 0; i < 20 && rc == 0; i++)
        rc = ocisbx_event_parser_feed(&p, junk, chunk);
    assert_int_equal(rc, OCISBX_EPARSE);
    free(junk);
    ocisbx_event_parser_release(&p);
}

static void test_content_type(void **state)
{
    (void)state;
    assert_int_equal(ocisbx_stream_format_from_content_type("text/event-stream; charset=utf-8"), OCISBX_STREAM_SSE);
    assert_int_equal(ocisbx_stream_format_from_content_type("Application/X-NDJSON"), OCISBX_STREAM_NDJSON);
    assert_int_equal(ocisbx_stream_format_from_content_type("application/json"), OCISBX_STREAM_AUTO);
    assert_int_equal(ocisbx_stream_format_from_content_type(NULL), OCISBX_STREAM_AUTO);
}

/* The Content-Type's format holds for one connection; finish() goes back
 * to sniffing for the next. */
static void test_set_format_per_connection(void **state)
{
    (void)state;
    collected c;
    memset(&c, 0, sizeof c);
    ocisbx_event_parser p;
    ocisbx_event_parser_init(&p, OCISBX_STREAM_AUTO, collect, &c);
    const char *body = "{\"seq\":1}\ndata: {\"seq\":2}\n\n";
    ocisbx_event_parser_set_format(&p, OCISBX_STREAM_SSE);
    assert_int_equal(ocisbx_event_parser_feed(&p, body, strlen(body)), 0);
    assert_int_equal(ocisbx_event_parser_finish(&p), 0);
    assert_int_equal(c.count, 1); /* the '{' line is an SSE field line, ignored */
    /* next connection, no Content-Type: sniffed as NDJSON, the data: line fails */
    ocisbx_event_parser_set_format(&p, OCISBX_STREAM_AUTO);
    assert_int_equal(ocisbx_event_parser_feed(&p, "{\"seq\":3}\n", 10), 0);
    assert_int_equal(c.count, 2);
    assert_int_equal(ocisbx_event_parser_finish(&p), 0);
    ocisbx_event_parser_release(&p);
}

static void test_tracker(void **state)
{
    (void)state;
    ocisbx_event_tracker t;
    ocisbx_event_tracker_init(&t, 0, 0); /* a fromSeq of 0 is asked for as 0 */
    assert_int_equal(ocisbx_event_tracker_resume_from(&t), 0);
    ocisbx_event_tracker_init(&t, -1, 0); /* none given: from the start */
    assert_int_equal(ocisbx_event_tracker_resume_from(&t), 1);
    assert_true(ocisbx_event_tracker_accept(&t, 1, false));
    assert_true(ocisbx_event_tracker_accept(&t, 2, false));
    assert_int_equal(ocisbx_event_tracker_resume_from(&t), 3);
    /* after a resumption the server repeats 2: skipped, then 3 goes through */
    assert_false(ocisbx_event_tracker_accept(&t, 2, false));
    assert_false(ocisbx_event_tracker_accept(&t, 1, false));
    assert_false(ocisbx_event_tracker_done(&t));
    assert_true(ocisbx_event_tracker_accept(&t, 3, true));
    assert_true(ocisbx_event_tracker_done(&t));

    ocisbx_event_tracker_init(&t, 5, 7);
    assert_int_equal(ocisbx_event_tracker_resume_from(&t), 5);
    assert_false(ocisbx_event_tracker_accept(&t, 4, false));
    assert_true(ocisbx_event_tracker_accept(&t, 5, false));
    assert_false(ocisbx_event_tracker_done(&t));
    assert_true(ocisbx_event_tracker_accept(&t, 7, false)); /* seqs need not be contiguous */
    assert_true(ocisbx_event_tracker_done(&t));
    assert_false(ocisbx_event_tracker_accept(&t, 8, false));
}

/* A stream cut at every byte offset and resumed: the union of what the
 * tracker delivers is each event exactly once. */
typedef struct resume_ctx {
    ocisbx_event_tracker t;
    char seen[64];
    size_t nseen;
} resume_ctx;

static int on_resume_event(const char *json, size_t len, void *ud)
{
    resume_ctx *r = ud;
    (void)len;
    const char *s = strstr(json, "\"seq\":");
    assert_non_null(s);
    long seq = strtol(s + 6, NULL, 10);
    bool fin = strstr(json, "FINISHED") != NULL && (size_t)(strstr(json, "FINISHED") - json) < len;
    if (ocisbx_event_tracker_accept(&r->t, seq, fin))
        r->seen[r->nseen++] = (char)('0' + seq);
    return 0;
}

static void test_resume_every_cut(void **state)
{
    (void)state;
    const char *events[] = {"{\"seq\":1,\"event\":\"STARTED\"}", "{\"seq\":2,\"event\":\"STDOUT\"}",
                            "{\"seq\":3,\"event\":\"STDERR\"}", "{\"seq\":4,\"event\":\"FINISHED\"}"};
    char full[512];
    full[0] = '\0';
    for (int i = 0; i < 4; i++) {
        strcat(full, "data: ");
        strcat(full, events[i]);
        strcat(full, "\n\n");
    }
    size_t len = strlen(full);
    for (size_t cut = 0; cut <= len; cut++) {
        resume_ctx r = {0};
        ocisbx_event_tracker_init(&r.t, 1, 0);
        ocisbx_event_parser p;
        ocisbx_event_parser_init(&p, OCISBX_STREAM_AUTO, on_resume_event, &r);
        /* first connection: cut at `cut` */
        assert_int_equal(ocisbx_event_parser_feed(&p, full, cut), 0);
        ocisbx_event_parser_finish(&p);
        /* the server resends from resume_from (and, to be unkind, one earlier) */
        int64_t from = ocisbx_event_tracker_resume_from(&r.t) - 1;
        for (int i = 0; i < 4 && !ocisbx_event_tracker_done(&r.t); i++) {
            if (i + 1 < from)
                continue;
            char line[128];
            snprintf(line, sizeof line, "data: %s\n\n", events[i]);
            assert_int_equal(ocisbx_event_parser_feed(&p, line, strlen(line)), 0);
        }
        ocisbx_event_parser_release(&p);
        r.seen[r.nseen] = '\0';
        assert_string_equal(r.seen, "1234");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole),
        cmocka_unit_test(test_byte_by_byte),
        cmocka_unit_test(test_random_splits),
        cmocka_unit_test(test_cut_connection_drops_partial),
        cmocka_unit_test(test_callback_stops),
        cmocka_unit_test(test_too_long),
        cmocka_unit_test(test_content_type),
        cmocka_unit_test(test_tracker),
        cmocka_unit_test(test_resume_every_cut),
        cmocka_unit_test(test_set_format_per_connection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
