/* A bounded parallel runner (internal): requests run at most K at a time on
 * one curl multi handle, each call exactly as ocisbx_http_send would run it
 * (signed afresh per attempt, the transport's timeouts, deadline and cancel
 * callback, the one retry decision of retry.h: one attempt = one easy
 * transfer), fed one by one as slots free up, so that the caller holds at
 * most K bodies at once.
 *
 * The first hard failure (a call that fails and the caller's done callback
 * turns into an error, or a failing feed) stops the batch: no further
 * request starts, retry waits are dropped, and every transfer still in
 * flight is aborted, except a request whose body went out whole: that one
 * is let finish (bounded by the read timeout), so that a write the service
 * may be storing is never left to land after the caller cleaned up. */
#ifndef OCISBX_HTTP_BATCH_H
#define OCISBX_HTTP_BATCH_H

#include <stdbool.h>

#include "ocisbx/http.h"

/* The most requests in flight at once. */
#define OCISBX_HTTP_BATCH_MAX 16

typedef struct ocisbx_http_batch_feed {
    /* The next request to start (*r NULL: none left; never asked again).
     * Asked only when a slot is free. The request stays the caller's and
     * must live until done is called for it. Non-zero (its error set):
     * the batch stops as after a failure. */
    int (*next)(void *ud, ocisbx_http_request **r, void **tag);
    /* A request ended: rc and resp as ocisbx_http_send gives them (resp is
     * the callee's, may be NULL). aborted: the batch stopped it (rc
     * OCISBX_ECANCELED, resp NULL; the return is ignored). Returns 0 to go
     * on, or a negative OCISBX_E* (its error set) to stop the batch. */
    int (*done)(void *ud, void *tag, int rc, ocisbx_http_response *resp, bool aborted);
    void *ud;
} ocisbx_http_batch_feed;

/* Runs the feed's requests, at most max_in_flight (1..OCISBX_HTTP_BATCH_MAX)
 * at a time, until the feed has none left and all ended (0), or until the
 * first failure: its code, its error kept (what the aborts set after it is
 * dropped). done is called once for every request next gave. The
 * transport's progress callback sees the batch as one transfer: the bytes
 * of every request in flight added to those of the ones done. */
int ocisbx_http_batch_run(ocisbx_http *h, int max_in_flight, const ocisbx_http_batch_feed *feed);

#endif
