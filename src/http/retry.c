/* The retry decision: pure, table-driven (docs/http.md "The retry
 * decision"). Nothing here touches libcurl handles, clocks or randomness:
 * the caller passes the outcome, the time left and a random number. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "http/retry.h"
#include "ocisbx/http.h"
#include "ocisbx/util.h"
#include "util/internal.h"

/* What an answer's status means for a retry. */
static const struct {
    int status;
    int why;
} status_rows[] = {
    {429, OCISBX_HTTP_WHY_THROTTLED},    {500, OCISBX_HTTP_WHY_SERVER_ERROR}, {502, OCISBX_HTTP_WHY_SERVER_ERROR},
    {503, OCISBX_HTTP_WHY_SERVER_ERROR}, {504, OCISBX_HTTP_WHY_SERVER_ERROR},
};

/* Transfer errors worth another attempt: the connection failed or broke. */
static const CURLcode connection_rows[] = {
    CURLE_COULDNT_CONNECT, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING,
    CURLE_PARTIAL_FILE,    CURLE_HTTP2,      CURLE_HTTP2_STREAM,
};

bool ocisbx_http_curl_retryable(int curl_code)
{
    for (size_t i = 0; i < sizeof connection_rows / sizeof connection_rows[0]; i++)
        if ((int)connection_rows[i] == curl_code)
            return true;
    return false;
}

bool ocisbx_http_curl_timeout(int curl_code)
{
    return curl_code == CURLE_OPERATION_TIMEDOUT;
}

static const char *const why_names[] = {
    "success",      "stopped by the client",  "not retryable",      "retries off",    "attempts used",
    "body not replayable", "answer bytes delivered", "past the deadline", "retry budget empty", "credentials refresh",
    "throttled",    "server error",           "state conflict",     "timeout",        "connection failure",
};

const char *ocisbx_http_why_name(int why)
{
    if (why < 0 || (size_t)why >= sizeof why_names / sizeof why_names[0])
        return "?";
    return why_names[why];
}

int64_t ocisbx_http_backoff_ms(const ocisbx_http_retry_policy *p, int attempt, uint32_t random)
{
    int64_t d = p->base_ms;
    for (int i = 1; i < attempt && d < p->cap_ms; i++)
        d *= 2;
    if (d > p->cap_ms)
        d = p->cap_ms;
    if (p->jitter_ms > 0)
        d += (int64_t)(random % (uint32_t)(p->jitter_ms + 1));
    return d;
}

static bool body_replayable(const ocisbx_http_decide_in *in)
{
    /* a method that carries no body has nothing to replay */
    bool has_body = strcmp(in->method, "POST") == 0 || strcmp(in->method, "PUT") == 0 ||
                    strcmp(in->method, "PATCH") == 0;
    return !has_body || in->body_rewindable;
}

/* The row for the outcome: why it might be retried, or why not. */
static int classify(const ocisbx_http_outcome *o)
{
    if (o->stop == OCISBX_HTTP_STOP_IDLE)
        return OCISBX_HTTP_WHY_TIMEOUT;
    if (o->stop != OCISBX_HTTP_STOP_NONE)
        return OCISBX_HTTP_WHY_LOCAL_STOP;
    bool answered = o->curl_code == CURLE_OK || (o->error_body_cut && o->status >= 300);
    if (!answered) {
        if (ocisbx_http_curl_timeout(o->curl_code))
            return OCISBX_HTTP_WHY_TIMEOUT;
        return ocisbx_http_curl_retryable(o->curl_code) ? OCISBX_HTTP_WHY_CONNECTION : OCISBX_HTTP_WHY_NOT_RETRYABLE;
    }
    if (o->status < 400)
        return OCISBX_HTTP_WHY_SUCCESS;
    if (o->status == 401)
        return OCISBX_HTTP_WHY_REFRESH;
    for (size_t i = 0; i < sizeof status_rows / sizeof status_rows[0]; i++)
        if (status_rows[i].status == o->status)
            return status_rows[i].why;
    if (o->status == 409 && o->retry_state_code)
        return OCISBX_HTTP_WHY_STATE_CONFLICT;
    return OCISBX_HTTP_WHY_NOT_RETRYABLE;
}

static ocisbx_http_decision finish(int why)
{
    ocisbx_http_decision d = {OCISBX_HTTP_FINISH, why, 0, false, false};
    return d;
}

static bool past_deadline(const ocisbx_http_decide_in *in, int64_t wait)
{
    return in->deadline_left_ms >= 0 && wait >= in->deadline_left_ms;
}

ocisbx_http_decision ocisbx_http_decide(const ocisbx_http_outcome *o, const ocisbx_http_decide_in *in)
{
    int why = classify(o);
    switch (why) {
    case OCISBX_HTTP_WHY_SUCCESS:
    case OCISBX_HTTP_WHY_LOCAL_STOP:
    case OCISBX_HTTP_WHY_NOT_RETRYABLE: return finish(why);
    case OCISBX_HTTP_WHY_REFRESH:
        /* once per call, whatever the class and the attempts: not a retry
         * of the policy but a fresh signature */
        if (!in->can_refresh || !body_replayable(in))
            return finish(OCISBX_HTTP_WHY_NOT_RETRYABLE);
        if (past_deadline(in, 0))
            return finish(OCISBX_HTTP_WHY_PAST_DEADLINE);
        return (ocisbx_http_decision){OCISBX_HTTP_REFRESH, why, 0, false, false};
    default: break;
    }
    if (!in->policy->enabled || in->retry_class == OCISBX_HTTP_RETRY_NEVER)
        return finish(OCISBX_HTTP_WHY_RETRIES_OFF);
    if (in->attempt >= in->max_attempts)
        return finish(OCISBX_HTTP_WHY_ATTEMPTS_USED);
    if (!body_replayable(in))
        return finish(OCISBX_HTTP_WHY_NOT_REPLAYABLE);
    if (o->sink_bytes > 0)
        return finish(OCISBX_HTTP_WHY_SINK_STARTED);
    bool spends = why != OCISBX_HTTP_WHY_THROTTLED && in->budget;
    if (spends && in->budget->tokens < 1.0)
        return finish(OCISBX_HTTP_WHY_BUDGET_EMPTY);
    bool answered = o->status >= 400;
    bool ra = answered && o->retry_after_ms >= 0;
    int64_t wait = ra ? o->retry_after_ms : ocisbx_http_backoff_ms(in->policy, in->attempt, in->random);
    if (past_deadline(in, wait))
        return finish(OCISBX_HTTP_WHY_PAST_DEADLINE);
    return (ocisbx_http_decision){OCISBX_HTTP_RETRY, why, wait, ra, spends};
}

int64_t ocisbx_http_retry_after_ms(const char *value, int64_t now_ms)
{
    if (!value || !*value)
        return -1;
    int64_t ms = -1;
    char *end = NULL;
    errno = 0;
    double secs = strtod(value, &end);
    time_t t;
    if (end != value && *end == '\0' && errno == 0 && secs >= 0) {
        /* compared in seconds first: a huge value must not overflow */
        ms = secs >= OCISBX_HTTP_RETRY_AFTER_CAP_MS / 1000.0 ? OCISBX_HTTP_RETRY_AFTER_CAP_MS
                                                             : (int64_t)(secs * 1000.0);
    } else if (ocisbx_time_parse_rfc1123(value, &t) == 0) {
        int64_t d = (int64_t)t * 1000 - now_ms;
        ms = d > 0 ? d : 0;
    } else {
        return -1;
    }
    return ms < OCISBX_HTTP_RETRY_AFTER_CAP_MS ? ms : OCISBX_HTTP_RETRY_AFTER_CAP_MS;
}

void ocisbx_http_budget_init(ocisbx_http_retry_budget *b, double max, double refill)
{
    b->tokens = max;
    b->max = max;
    b->refill = refill;
}

void ocisbx_http_budget_spend(ocisbx_http_retry_budget *b)
{
    if (b && b->tokens >= 1.0)
        b->tokens -= 1.0;
}

void ocisbx_http_budget_success(ocisbx_http_retry_budget *b)
{
    if (!b)
        return;
    b->tokens += b->refill;
    if (b->tokens > b->max)
        b->tokens = b->max;
}
