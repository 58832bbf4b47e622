/* The retry rules (internal): one attempt's outcome, and one pure function
 * that decides from it whether to try again and after how long. The
 * blocking transport (ocisbx_http_send) and the event-driven engine both
 * run their attempts and ask ocisbx_http_decide; docs/http.md's table "The
 * retry decision" is this file's table, row for row. */
#ifndef OCISBX_HTTP_RETRY_H
#define OCISBX_HTTP_RETRY_H

#include <stdbool.h>
#include <stdint.h>

/* The longest wait a retry-after asks for that is honoured (60 s); a call's
 * deadline cuts it shorter (the call fails at once instead of waiting past
 * it). */
#define OCISBX_HTTP_RETRY_AFTER_CAP_MS 60000

/* What ended an attempt on the client's side, when it was not the answer. */
typedef enum ocisbx_http_stop {
    OCISBX_HTTP_STOP_NONE = 0,       /* the transfer ended by itself (an answer, or a curl error) */
    OCISBX_HTTP_STOP_CANCELED,       /* the cancel callback */
    OCISBX_HTTP_STOP_DEADLINE,       /* the call's deadline passed */
    OCISBX_HTTP_STOP_IDLE,           /* no byte for the read / stream idle timeout */
    OCISBX_HTTP_STOP_BODY_SOURCE,    /* the request body's source failed */
    OCISBX_HTTP_STOP_SINK_ERROR,     /* the answer's file sink or buffer failed */
    OCISBX_HTTP_STOP_SINK_CANCELED,  /* the response callback returned non-zero */
    OCISBX_HTTP_STOP_HEADERS_CANCEL, /* the headers callback returned non-zero */
    OCISBX_HTTP_STOP_HEADERS_LARGE   /* the answer's headers were too large */
} ocisbx_http_stop;

/* One attempt, as it ended. */
typedef struct ocisbx_http_outcome {
    int curl_code;          /* CURLcode of the transfer (0: it completed) */
    int status;             /* the answer's HTTP status; 0 when none came */
    int64_t retry_after_ms; /* the answer's retry-after as a wait (capped), -1 when none */
    bool retry_after_capped;
    bool retry_state_code;  /* a 409 whose code is IncorrectState or LockConflict */
    bool error_body_cut;    /* an error body reached its cap: the connection was closed */
    bool body_sent;         /* bytes of the request body were taken from its source */
    uint64_t sink_bytes;    /* answer bytes given to a file or callback sink */
    int stop;               /* ocisbx_http_stop */
    int64_t elapsed_ms;     /* the attempt, from its start to its end */
    /* libcurl's phase times (CURLINFO_*_TIME_T), microseconds from the
     * attempt's start; 0 when the phase did not happen. */
    int64_t t_dns_us, t_connect_us, t_tls_us, t_first_byte_us, t_total_us;
} ocisbx_http_outcome;

/* The retry settings of a transport (its options). */
typedef struct ocisbx_http_retry_policy {
    bool enabled;
    int max_attempts; /* attempts in all, the first included */
    int64_t base_ms, cap_ms, jitter_ms;
} ocisbx_http_retry_policy;

/* A retry budget shared by many calls (the engine's): each retry of a
 * failure (5xx, timeout, connection error) takes one token, each success
 * gives back `refill` of one, up to `max`; an empty budget retries no
 * failure, so a broken service is not hammered by every call at once.
 * Throttling answers (429) take nothing: their pace is the retry-after and
 * the engine's concurrency. The blocking transport has none (NULL). */
typedef struct ocisbx_http_retry_budget {
    double tokens, max, refill;
} ocisbx_http_retry_budget;

/* Everything the decision reads besides the outcome. */
typedef struct ocisbx_http_decide_in {
    int retry_class;      /* OCISBX_HTTP_RETRY_* (the route's retry column) */
    const char *method;   /* uppercase */
    bool body_rewindable; /* the request's body (if any) can be sent again */
    int attempt;          /* attempts made so far, this one included (1..) */
    int max_attempts;     /* of this call (the policy's, raised by a refresh) */
    bool can_refresh;     /* credentials that can refresh, not yet refreshed in this call */
    int64_t deadline_left_ms; /* time left before the call's deadline; -1: no deadline */
    uint32_t random;      /* a random number, for the jitter (the function stays pure) */
    const ocisbx_http_retry_policy *policy;
    const ocisbx_http_retry_budget *budget; /* NULL: unlimited */
} ocisbx_http_decide_in;

typedef enum ocisbx_http_action {
    OCISBX_HTTP_FINISH = 0, /* no further attempt: the outcome is the call's result */
    OCISBX_HTTP_RETRY,      /* wait wait_ms, then attempt again */
    OCISBX_HTTP_REFRESH     /* refresh the credentials, then attempt again at once */
} ocisbx_http_action;

/* Why: the row of the table that decided. */
typedef enum ocisbx_http_why {
    OCISBX_HTTP_WHY_SUCCESS = 0,    /* status < 400 */
    OCISBX_HTTP_WHY_LOCAL_STOP,     /* cancel, deadline reached, body source, sink, headers */
    OCISBX_HTTP_WHY_NOT_RETRYABLE,  /* a status or curl error the rules never retry */
    OCISBX_HTTP_WHY_RETRIES_OFF,    /* retries off or class NEVER */
    OCISBX_HTTP_WHY_ATTEMPTS_USED,  /* max_attempts reached */
    OCISBX_HTTP_WHY_NOT_REPLAYABLE, /* the body cannot be sent again */
    OCISBX_HTTP_WHY_SINK_STARTED,   /* a sink has received answer bytes */
    OCISBX_HTTP_WHY_PAST_DEADLINE,  /* the wait would reach past the deadline */
    OCISBX_HTTP_WHY_BUDGET_EMPTY,   /* the shared retry budget is empty */
    OCISBX_HTTP_WHY_REFRESH,        /* 401 with refreshable credentials */
    OCISBX_HTTP_WHY_THROTTLED,      /* 429 */
    OCISBX_HTTP_WHY_SERVER_ERROR,   /* 500, 502, 503, 504 */
    OCISBX_HTTP_WHY_STATE_CONFLICT, /* 409 IncorrectState / LockConflict */
    OCISBX_HTTP_WHY_TIMEOUT,        /* connect, read or idle timeout */
    OCISBX_HTTP_WHY_CONNECTION      /* could not connect, send/receive error, empty reply, cut body */
} ocisbx_http_why;

typedef struct ocisbx_http_decision {
    int action;      /* ocisbx_http_action */
    int why;         /* ocisbx_http_why */
    int64_t wait_ms; /* RETRY: the wait; otherwise 0 */
    bool from_retry_after; /* the wait is the answer's retry-after */
    bool spends_budget;    /* a RETRY that takes a token of the budget */
} ocisbx_http_decision;

/* The decision. Pure: the same inputs give the same answer. */
ocisbx_http_decision ocisbx_http_decide(const ocisbx_http_outcome *o, const ocisbx_http_decide_in *in);

/* The wait before attempt n+1 without a retry-after: min(base * 2^(n-1), cap)
 * plus random % (jitter + 1). */
int64_t ocisbx_http_backoff_ms(const ocisbx_http_retry_policy *p, int attempt, uint32_t random);

/* A curl error that is a connection failure worth another attempt. */
bool ocisbx_http_curl_retryable(int curl_code);
/* A curl error that is a timeout. */
bool ocisbx_http_curl_timeout(int curl_code);

/* retry-after (delay-seconds or an HTTP date, relative to now_ms, the wall
 * clock in ms) as a wait in ms, capped at OCISBX_HTTP_RETRY_AFTER_CAP_MS;
 * -1 when absent or malformed. */
int64_t ocisbx_http_retry_after_ms(const char *value, int64_t now_ms);

/* The budget's bookkeeping (not part of the decision). */
void ocisbx_http_budget_init(ocisbx_http_retry_budget *b, double max, double refill);
void ocisbx_http_budget_spend(ocisbx_http_retry_budget *b);
void ocisbx_http_budget_success(ocisbx_http_retry_budget *b);

/* A short name of a why, for logs ("throttled", "server error", ...). */
const char *ocisbx_http_why_name(int why);

#endif
