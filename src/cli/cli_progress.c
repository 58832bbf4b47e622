/* Transfer progress: one line on a terminal (stderr), redrawn in place:
 * bytes of the total, percent, rate and time left. A whole transfer that
 * goes in several requests (cp of a file above 8 MiB goes up in parts) is
 * one line: cli_transfer_begin says how much is coming, and each request's
 * bytes add to what the ones before it moved. Nothing is drawn when stderr
 * is not a terminal (the callback is only installed then). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "util/internal.h"

#define TRANSFER_MIN_BYTES (64 * 1024)
#define REDRAW_MS 200

static struct {
    bool drawn;
    bool up;
    bool whole;       /* cli_transfer_begin: several requests, one line */
    bool retry;       /* the next restart is a retry of the same bytes */
    bool boundary;    /* whole: a request (a part) just ended: drawn at once */
    int64_t base;     /* whole: bytes of the requests done */
    int64_t req_now;  /* whole: bytes of the current request */
    int64_t req_total;
    int64_t now, total, last_now, last_ms, start_ms;
} xfer;

static void human(int64_t n, char *buf, size_t cap)
{
    if (n < 1024)
        snprintf(buf, cap, "%lld B", (long long)n);
    else if (n < 1024 * 1024)
        snprintf(buf, cap, "%.1f KiB", (double)n / 1024.0);
    else if (n < 1024LL * 1024 * 1024)
        snprintf(buf, cap, "%.1f MiB", (double)n / (1024.0 * 1024.0));
    else
        snprintf(buf, cap, "%.2f GiB", (double)n / (1024.0 * 1024.0 * 1024.0));
}

/* ", 4.1 MiB/s, 3 s left" (the rate since the start; no time left at the end
 * or without a total). */
static void rate_text(bool final, char *out, size_t cap)
{
    out[0] = '\0';
    int64_t ms = ocisbx_time_monotonic_ms() - xfer.start_ms;
    if (ms <= 0 || xfer.now <= 0)
        return;
    double rate = (double)xfer.now * 1000.0 / (double)ms;
    char r[32];
    human((int64_t)rate, r, sizeof r);
    if (final || xfer.total <= 0 || xfer.now >= xfer.total || rate < 1.0) {
        snprintf(out, cap, ", %s/s", r);
        return;
    }
    long long left = (long long)((double)(xfer.total - xfer.now) / rate + 0.999);
    if (left > 99 * 3600)
        left = 99 * 3600;
    if (left >= 3600)
        snprintf(out, cap, ", %s/s, %lld h %02lld min left", r, left / 3600, left / 60 % 60);
    else if (left >= 60)
        snprintf(out, cap, ", %s/s, %lld min %02lld s left", r, left / 60, left % 60);
    else
        snprintf(out, cap, ", %s/s, %lld s left", r, left);
}

static void transfer_draw(bool final)
{
    char a[32], b[32], rate[96], line[240];
    const char *verb = final ? (xfer.up ? "uploaded" : "downloaded") : (xfer.up ? "uploading" : "downloading");
    human(xfer.now, a, sizeof a);
    rate_text(final, rate, sizeof rate);
    if (xfer.total > 0) {
        human(xfer.total, b, sizeof b);
        snprintf(line, sizeof line, "ocisbx: %s %s of %s (%d%%)%s", verb, a, b, (int)(xfer.now * 100 / xfer.total),
                 rate);
    } else {
        snprintf(line, sizeof line, "ocisbx: %s %s%s", verb, a, rate);
    }
    /* padded to overwrite a longer line before it; no escape sequences */
    fprintf(stderr, "\r%-72s%s", line, final ? "\n" : "");
    fflush(stderr);
}

void cli_transfer_begin(int64_t total, bool up)
{
    memset(&xfer, 0, sizeof xfer);
    xfer.whole = true;
    xfer.up = up;
    xfer.total = total > 0 ? total : 0;
    xfer.start_ms = ocisbx_time_monotonic_ms();
}

void cli_transfer_retrying(void)
{
    xfer.retry = true;
}

void cli_transfer_done(void)
{
    if (xfer.drawn)
        transfer_draw(true);
    memset(&xfer, 0, sizeof xfer);
}

/* Whole transfer: the bytes of this request added to those before it; a
 * request that starts again from fewer bytes is the next one (or, after a
 * retry wait, the same one again). Requests the other way are not counted. */
static bool whole_update(bool up, int64_t now, int64_t total)
{
    if (up != xfer.up)
        return false;
    if (now < xfer.req_now) {
        if (!xfer.retry) {
            xfer.base += xfer.req_total > xfer.req_now ? xfer.req_total : xfer.req_now;
            xfer.boundary = true;
        }
        xfer.retry = false;
    }
    xfer.req_now = now;
    xfer.req_total = total;
    int64_t shown = xfer.base + now;
    if (xfer.total > 0 && shown > xfer.total)
        shown = xfer.total;
    if (xfer.total <= 0 && total > 0)
        xfer.total = xfer.base + total; /* a download's size, from its answer */
    xfer.now = shown;
    return true;
}

/* One request, one line (sandbox-file read/write). */
static bool single_update(bool up, int64_t now, int64_t total)
{
    if (now < xfer.now || up != xfer.up) { /* another attempt or request */
        if (xfer.drawn && now < xfer.now)
            cli_transfer_done();
        else if (xfer.drawn)
            return false; /* an upload's answer: keep the upload's line */
    }
    if (!xfer.start_ms || now < xfer.now)
        xfer.start_ms = ocisbx_time_monotonic_ms();
    xfer.up = up;
    xfer.now = now;
    xfer.total = total;
    return true;
}

void cli_transfer_progress(int64_t down_now, int64_t down_total, int64_t up_now, int64_t up_total, void *ud)
{
    (void)ud;
    bool up = xfer.whole ? xfer.up : up_now > 0 || up_total > 0;
    int64_t now = up ? up_now : down_now, total = up ? up_total : down_total;
    if (!(xfer.whole ? whole_update(up, now, total) : single_update(up, now, total)))
        return;
    if (xfer.now < TRANSFER_MIN_BYTES && xfer.total < TRANSFER_MIN_BYTES)
        return;
    int64_t ms = ocisbx_time_monotonic_ms();
    if (xfer.drawn && xfer.now != xfer.total && ms - xfer.last_ms < REDRAW_MS && !xfer.boundary)
        return;
    xfer.boundary = false;
    if (xfer.drawn && xfer.now == xfer.last_now)
        return;
    xfer.last_ms = ms;
    xfer.last_now = xfer.now;
    xfer.drawn = true;
    transfer_draw(false);
}
