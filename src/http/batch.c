/* The bounded parallel runner (batch.h): K slots, each an easy handle on one
 * multi handle, each running one call (call.c) at a time: its attempts,
 * the waits the retry decision asks for (the slot stays taken), then the
 * next request of the feed. One thread, one loop: curl_multi_perform, the
 * finished transfers, curl_multi_poll (at most 50 ms, so that the cancel
 * callback is asked during retry waits too). */
#include <stdlib.h>
#include <string.h>

#include "http/batch.h"
#include "http/http_internal.h"
#include "ocisbx/util.h"
#include "sys/sleep.h"

#define BATCH_POLL_MS 50

typedef enum { SLOT_IDLE = 0, SLOT_RUNNING, SLOT_WAITING } slot_state;

struct batch;

typedef struct slot {
    struct batch *bt;
    CURL *easy;
    ocisbx_http_call *call;
    ocisbx_http_request *r;
    void *tag;
    slot_state st;
    int64_t wake_at;
    int64_t down_now, down_total, up_now, up_total; /* this attempt's progress */
} slot;

typedef struct batch {
    ocisbx_http *h;
    CURLM *multi;
    const ocisbx_http_batch_feed *feed;
    slot slots[OCISBX_HTTP_BATCH_MAX];
    int k;
    bool stop;      /* a failure: nothing new starts */
    bool feed_done; /* the feed has nothing more */
    int first_rc;
    ocisbx_error_saved *first_err;
    int64_t down_done, up_done; /* bytes of the requests that ended */
} batch;

/* ---- progress: the batch as one transfer ---- */
static void batch_progress(int64_t down_now, int64_t down_total, int64_t up_now, int64_t up_total, void *ud)
{
    slot *s = ud;
    batch *bt = s->bt;
    s->down_now = down_now;
    s->down_total = down_total;
    s->up_now = up_now;
    s->up_total = up_total;
    int64_t dn = bt->down_done, dt = bt->down_done, un = bt->up_done, ut = bt->up_done;
    for (int i = 0; i < bt->k; i++) {
        const slot *o = &bt->slots[i];
        if (o->st != SLOT_RUNNING)
            continue;
        dn += o->down_now;
        dt += o->down_total;
        un += o->up_now;
        ut += o->up_total;
    }
    bt->h->opt.progress_fn(dn, dt, un, ut, bt->h->opt.progress_ud);
}

/* ---- one slot ---- */
static void note_failure(batch *bt, int rc)
{
    if (bt->stop)
        return;
    bt->stop = true;
    bt->first_rc = rc;
    bt->first_err = ocisbx_error_save();
}

/* The call of s ended (rc as ocisbx_http_call_finish takes it): its
 * result to the feed; the slot is free again. */
static void slot_finish(slot *s, int rc)
{
    batch *bt = s->bt;
    ocisbx_http_response *resp = NULL;
    rc = ocisbx_http_call_finish(s->call, rc, &resp);
    s->call = NULL;
    if (rc == 0) {
        bt->down_done += s->down_now;
        bt->up_done += s->up_now;
    }
    s->down_now = s->down_total = s->up_now = s->up_total = 0;
    s->st = SLOT_IDLE;
    int drc = bt->feed->done(bt->feed->ud, s->tag, rc, resp, false);
    if (drc)
        note_failure(bt, drc);
}

/* Drops the call of s without a result (the batch stopped). */
static void slot_abort(slot *s)
{
    batch *bt = s->bt;
    if (s->st == SLOT_RUNNING)
        curl_multi_remove_handle(bt->multi, s->easy);
    ocisbx_http_call_abandon(s->call);
    s->call = NULL;
    s->st = SLOT_IDLE;
    ocisbx_error_saved *sv = ocisbx_error_save();
    (void)bt->feed->done(bt->feed->ud, s->tag, OCISBX_ECANCELED, NULL, true);
    ocisbx_error_restore(sv);
}

/* The next attempt of s's call, on its easy handle in the multi. */
static void slot_attempt(slot *s)
{
    batch *bt = s->bt;
    int rc = ocisbx_http_call_start(s->call, s->easy);
    if (rc) {
        slot_finish(s, rc);
        return;
    }
    if (bt->h->opt.progress_fn) {
        s->call->a.progress_fn = batch_progress;
        s->call->a.progress_ud = s;
    }
    s->down_now = s->down_total = s->up_now = s->up_total = 0;
    CURLMcode mc = curl_multi_add_handle(bt->multi, s->easy);
    if (mc != CURLM_OK) {
        slot_finish(s, ocisbx_fail(OCISBX_ETRANSPORT, "http batch: %s", curl_multi_strerror(mc)));
        return;
    }
    s->st = SLOT_RUNNING;
}

/* The transfer of s ended with cc: finish, or wait for the next attempt. */
static void slot_ended(slot *s, CURLcode cc)
{
    batch *bt = s->bt;
    curl_multi_remove_handle(bt->multi, s->easy);
    s->st = SLOT_WAITING; /* not counted as in flight by the progress sum */
    ocisbx_http_call_end(s->call, cc);
    ocisbx_http_decision d = ocisbx_http_call_decide(s->call, NULL);
    if (d.action == OCISBX_HTTP_FINISH || ocisbx_http_call_before_retry(s->call, &d) != 0) {
        slot_finish(s, 0);
        return;
    }
    s->down_now = s->up_now = 0;
    s->wake_at = ocisbx_time_monotonic_ms() + d.wait_ms;
}

/* A free slot takes the feed's next request. */
static void slot_feed(slot *s)
{
    batch *bt = s->bt;
    ocisbx_http_request *r = NULL;
    void *tag = NULL;
    int rc = bt->feed->next(bt->feed->ud, &r, &tag);
    if (rc) {
        note_failure(bt, rc);
        return;
    }
    if (!r) {
        bt->feed_done = true;
        return;
    }
    s->r = r;
    s->tag = tag;
    if (!s->easy && !(s->easy = curl_easy_init()))
        rc = ocisbx_fail(OCISBX_ENOMEM, "http batch: cannot create a libcurl handle");
    if (!rc)
        rc = ocisbx_http_call_new(bt->h, r, &s->call);
    if (rc) { /* no call: the request ends here */
        int drc = bt->feed->done(bt->feed->ud, tag, rc, NULL, false);
        note_failure(bt, drc ? drc : rc);
        return;
    }
    slot_attempt(s);
}

/* ---- the loop ---- */
/* A body that went out whole may be being stored: its answer is awaited. */
static bool body_sent_whole(const slot *s)
{
    int64_t len = ocisbx_http_body_length(s->r);
    curl_off_t up = 0;
    if (len <= 0 || curl_easy_getinfo(s->easy, CURLINFO_SIZE_UPLOAD_T, &up) != CURLE_OK)
        return false;
    return (int64_t)up >= len;
}

static void abort_rest(batch *bt)
{
    for (int i = 0; i < bt->k; i++) {
        slot *s = &bt->slots[i];
        if (s->st == SLOT_WAITING || (s->st == SLOT_RUNNING && !body_sent_whole(s)))
            slot_abort(s);
    }
}

/* Starts what can start: new requests in free slots, retries whose wait
 * is over (or ends the waits when the call is canceled); after a failure,
 * aborts the rest. Returns the number of busy slots and the time until
 * the next wake. */
static int step(batch *bt, int64_t *wait_ms)
{
    *wait_ms = BATCH_POLL_MS;
    for (int i = 0; i < bt->k; i++) {
        slot *s = &bt->slots[i];
        if (s->st == SLOT_IDLE && !bt->stop && !bt->feed_done)
            slot_feed(s);
        if (s->st != SLOT_WAITING)
            continue;
        int64_t left = s->wake_at - ocisbx_time_monotonic_ms();
        if (ocisbx_sys_canceled(s->call->cancel, s->call->cancel_ud))
            slot_finish(s, ocisbx_http_call_canceled(s->call));
        else if (left <= 0)
            slot_attempt(s);
        else if (left < *wait_ms)
            *wait_ms = left;
    }
    if (bt->stop)
        abort_rest(bt);
    int busy = 0;
    for (int i = 0; i < bt->k; i++)
        busy += bt->slots[i].st != SLOT_IDLE;
    if (busy < bt->k && !bt->stop && !bt->feed_done)
        *wait_ms = 0; /* a request failed and the caller goes on: the next at once */
    return busy;
}

static void drain_messages(batch *bt)
{
    CURLMsg *m;
    int left = 0;
    while ((m = curl_multi_info_read(bt->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        for (int i = 0; i < bt->k; i++) {
            slot *s = &bt->slots[i];
            if (s->st == SLOT_RUNNING && s->easy == m->easy_handle) {
                slot_ended(s, m->data.result);
                break;
            }
        }
    }
}

static void run_loop(batch *bt)
{
    for (;;) {
        int64_t wait_ms = 0;
        int busy = step(bt, &wait_ms);
        if (!busy && (bt->stop || bt->feed_done))
            return;
        int running = 0;
        CURLMcode mc = curl_multi_perform(bt->multi, &running);
        if (mc == CURLM_OK) {
            drain_messages(bt);
            mc = curl_multi_poll(bt->multi, NULL, 0, (int)(wait_ms > 0 ? wait_ms : 0), NULL);
        }
        if (mc != CURLM_OK) {
            note_failure(bt, ocisbx_fail(OCISBX_ETRANSPORT, "http batch: %s", curl_multi_strerror(mc)));
            for (int i = 0; i < bt->k; i++)
                if (bt->slots[i].st != SLOT_IDLE)
                    slot_abort(&bt->slots[i]);
            return;
        }
    }
}

int ocisbx_http_batch_run(ocisbx_http *h, int max_in_flight, const ocisbx_http_batch_feed *feed)
{
    if (!h || !feed || !feed->next || !feed->done)
        return ocisbx_fail(OCISBX_EINVAL, "http batch: NULL argument");
    if (max_in_flight < 1 || max_in_flight > OCISBX_HTTP_BATCH_MAX)
        return ocisbx_fail(OCISBX_EINVAL, "http batch: %d requests in flight (1 to %d)", max_in_flight,
                           OCISBX_HTTP_BATCH_MAX);
    batch *bt = calloc(1, sizeof *bt);
    if (!bt)
        return ocisbx_fail_nomem();
    bt->h = h;
    bt->feed = feed;
    bt->k = max_in_flight;
    for (int i = 0; i < bt->k; i++)
        bt->slots[i].bt = bt;
    bt->multi = curl_multi_init();
    if (!bt->multi) {
        free(bt);
        return ocisbx_fail(OCISBX_ENOMEM, "http batch: cannot create the libcurl multi handle");
    }
    run_loop(bt);
    for (int i = 0; i < bt->k; i++)
        if (bt->slots[i].easy)
            curl_easy_cleanup(bt->slots[i].easy);
    curl_multi_cleanup(bt->multi);
    int rc = bt->first_rc;
    if (bt->first_err)
        ocisbx_error_restore(bt->first_err);
    free(bt);
    return rc;
}
