/* Internal structures of the http layer (not installed). */
#ifndef OCISBX_HTTP_INTERNAL_H
#define OCISBX_HTTP_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include <curl/curl.h>

#include "ocisbx/http.h"
#include "ocisbx/util.h"
#include "util/internal.h"

/* An error body is read into memory up to this many bytes. */
#define OCISBX_HTTP_ERROR_BODY_MAX (64 * 1024)
/* Chunk size for hashing passes over file/callback bodies. */
#define OCISBX_HTTP_CHUNK (64 * 1024)

struct ocisbx_http_options {
    ocisbx_credentials *creds;
    int64_t connect_timeout_ms;
    int64_t read_timeout_ms;
    int64_t stream_idle_timeout_ms;
    int64_t deadline_ms;
    bool retries;
    int max_attempts;
    int64_t backoff_base_ms;
    int64_t backoff_cap_ms;
    int64_t max_jitter_ms;
    char *ca_bundle;
    bool allow_plain_http;
    bool ignore_proxy_env;
    char *ua_suffix;
    ocisbx_cancel_fn cancel;
    void *cancel_ud;
    ocisbx_http_retry_fn retry_fn;
    void *retry_ud;
    ocisbx_http_attempt_fn attempt_fn;
    void *attempt_ud;
    ocisbx_http_progress_fn progress_fn;
    void *progress_ud;
};

void ocisbx_http_options_defaults(struct ocisbx_http_options *o);
/* Deep copy into dst (dst uninitialised). */
int ocisbx_http_options_copy(struct ocisbx_http_options *dst, const struct ocisbx_http_options *src);
void ocisbx_http_options_release(struct ocisbx_http_options *o);

struct ocisbx_http {
    struct ocisbx_http_options opt;
    CURL *curl;
    CURLSH *share;
    char *user_agent;
    long http_version; /* CURL_HTTP_VERSION_*; 0: 1.1 */
};

typedef enum { BODY_NONE, BODY_BUFFER, BODY_FILE, BODY_CALLBACK } body_kind;
typedef enum { SINK_BUFFER, SINK_FILE, SINK_CALLBACK } sink_kind;

struct ocisbx_http_request {
    char *method; /* uppercase */
    char *url;
    ocisbx_headers *extra;
    char *content_type;
    char *request_id;
    char *retry_token;
    char *date;
    int retry_class;
    bool exclude_body;
    bool streaming;

    body_kind body;
    char *body_data; /* BODY_BUFFER */
    size_t body_len;
    char *body_path; /* BODY_FILE */
    FILE *body_fp;
    ocisbx_read_fn body_read; /* BODY_CALLBACK */
    ocisbx_rewind_fn body_rewind;
    void *body_ud;
    int64_t body_declared_len; /* -1 unknown */
    bool have_sha;             /* body_sha/body_total known */
    char body_sha[OCISBX_SHA256_B64_LEN + 1];
    uint64_t body_total;
    bool body_consumed; /* a non-rewindable callback body has been read */

    ocisbx_http_headers_fn headers_fn;
    void *headers_ud;

    sink_kind sink;
    char *sink_path;
    ocisbx_write_fn sink_write;
    void *sink_ud;
};

struct ocisbx_http_response {
    int status;
    char reason[128]; /* the status line's reason phrase */
    ocisbx_headers *headers;
    ocisbx_buf body;
    char *request_id;
    int attempts;
};

/* ---- url.c ---- */
typedef struct ocisbx_url {
    bool https;
    char *authority; /* host[:port] exactly as written (no userinfo) */
    char *host;      /* without brackets or port */
    int port;        /* explicit port or the scheme's default */
    bool has_userinfo;
    bool has_fragment;
} ocisbx_url;
/* The one place a URL is made ready to be signed and sent: bytes outside
 * printable ASCII and spaces in the path and query are percent-encoded
 * (uppercase hex), an empty trailing '?' is dropped, a malformed escape
 * ("%zz") or such a byte before the path is refused (OCISBX_EINVAL). The
 * result is what both the signer and libcurl (PATH_AS_IS) get. */
int ocisbx_url_normalize(const char *url, char **out);
/* Parses an absolute http(s) URL; errors name the URL. */
int ocisbx_url_parse(const char *url, ocisbx_url *out);
void ocisbx_url_clear(ocisbx_url *u);
/* The plain-http rule: https always, http only when allowed and loopback. */
int ocisbx_url_check_scheme(const ocisbx_url *u, const char *url, bool allow_plain_http);

/* ---- error_body.c ---- */
/* Parses an OCI error body {"code": "...", "message": "..."}. Tolerant:
 * anything that is not such an object yields NULLs (returns 0); fields of
 * the wrong type are ignored. Values are cut at 512 bytes and control
 * characters replaced so they fit a one-line message. */
int ocisbx_http_parse_error_body(const char *body, size_t len, char **code, char **message);

/* ---- body.c ---- */
/* Opens a file body and learns its length; when need_sha, makes sure the
 * body's SHA-256 and length are known (one hashing pass over a file or a
 * rewindable callback, which is then rewound). */
int ocisbx_http_body_prepare(ocisbx_http_request *r, bool need_sha);
/* Opens / rewinds the body for an attempt. */
int ocisbx_http_body_begin(ocisbx_http_request *r);
/* True when the body can be sent again. */
bool ocisbx_http_body_replayable(const ocisbx_http_request *r);
void ocisbx_http_body_end(ocisbx_http_request *r);
/* Length to send, or -1 unknown (chunked). */
int64_t ocisbx_http_body_length(const ocisbx_http_request *r);
/* Reads the next bytes of the body for an attempt: count, 0 at the end, or
 * a negative OCISBX_E*. `offset` tracks progress through a buffer body. */
int64_t ocisbx_http_body_read(ocisbx_http_request *r, size_t *offset, void *buf, size_t cap);

/* ---- retry.h: the decision; call.c / attempt.c: the stepping ---- */
#include "http/retry.h"
#include "util/dest.h"

/* The state of one attempt, the user data of libcurl's callbacks. */
typedef struct ocisbx_http_attempt {
    ocisbx_http_request *r;
    ocisbx_http_response *resp;
    CURL *curl;
    int status;         /* from the last status line */
    char reason[128];   /* its reason phrase */
    size_t body_offset; /* progress through a buffer body */
    int body_rc;        /* error from the body source */
    ocisbx_dest *dest;  /* SINK_FILE: the destination, opened at the first byte */
    int sink_rc;
    size_t header_bytes; /* of this answer, all header blocks */
    bool headers_too_large;
    bool sink_canceled;
    bool headers_done;     /* the headers callback ran for this answer */
    bool headers_canceled; /* ... and asked to stop */
    bool error_body_cut;   /* an error body reached OCISBX_HTTP_ERROR_BODY_MAX */
    bool body_sent;        /* request body bytes were taken from the source */
    uint64_t sink_bytes;   /* delivered to a file/callback sink */
    bool loopback;
    int64_t idle_ms, deadline_at, last_activity, started_at;
    curl_off_t last_progress;
    bool idle_expired;
    bool deadline_expired;
    ocisbx_cancel_fn cancel;
    void *cancel_ud;
    ocisbx_http_progress_fn progress_fn;
    void *progress_ud;
    bool canceled;  /* the cancel callback stopped the transfer */
    bool connected; /* the request could go out (connect and TLS done) */
} ocisbx_http_attempt;

/* Sets every option of one attempt on an easy handle (reset first): URL,
 * TLS, timeouts, callbacks into a, the header list hl (copied into
 * *slist, which the caller frees with ocisbx_http_slist_free after the
 * transfer). */
int ocisbx_http_attempt_setup(ocisbx_http *h, ocisbx_http_attempt *a, CURL *easy, const ocisbx_headers *hl,
                              struct curl_slist **slist, char *errbuf);
void ocisbx_http_slist_free(struct curl_slist *sl);

/* One call (one request, its attempts and waits), stepped by a loop: the
 * blocking ocisbx_http_send, or the engine's event loop over curl multi.
 *
 *   ocisbx_http_call_new
 *   loop: ocisbx_http_call_start (on an easy handle; non-zero: stop)
 *         the transfer (curl_easy_perform, or curl multi until CURLMSG_DONE)
 *         ocisbx_http_call_end (the outcome of the attempt)
 *         d = ocisbx_http_call_decide; FINISH: leave the loop
 *         ocisbx_http_call_before_retry (non-zero: leave the loop)
 *         wait d.wait_ms (asking the cancel callback), then again
 *   ocisbx_http_call_finish (the result, as ocisbx_http_send returns it)
 *
 * The call must not move while an attempt runs (libcurl holds pointers
 * into it). */
typedef struct ocisbx_http_call {
    ocisbx_http *h;
    ocisbx_http_request *r;
    ocisbx_http_response *resp;
    ocisbx_url u;
    int64_t start_ms;
    int64_t deadline_at; /* monotonic ms; 0: none */
    int max_attempts;
    int n; /* attempts started */
    bool refreshed;
    bool answered; /* the last attempt has an answer (a status) */
    ocisbx_cancel_fn cancel;
    void *cancel_ud;
    ocisbx_dest dest;
    ocisbx_http_attempt a;
    struct curl_slist *slist;
    CURL *easy; /* the handle of the attempt in flight */
    char errbuf[CURL_ERROR_SIZE];
    ocisbx_http_outcome last;
} ocisbx_http_call;

/* Checks the URL, makes the response; the deadline starts now. */
int ocisbx_http_call_new(ocisbx_http *h, ocisbx_http_request *r, ocisbx_http_call **out);
/* A deadline (monotonic ms, 0: the transport's) and a cancel callback (fn
 * NULL: the transport's) of this call only. */
void ocisbx_http_call_set_deadline(ocisbx_http_call *c, int64_t deadline_at);
void ocisbx_http_call_set_cancel(ocisbx_http_call *c, ocisbx_cancel_fn fn, void *user_data);
/* Prepares the next attempt on easy: asks the cancel callback, signs the
 * request afresh, sets the options. Non-zero (the error set): no attempt;
 * go to ocisbx_http_call_finish with it. */
int ocisbx_http_call_start(ocisbx_http_call *c, CURL *easy);
/* After the transfer ended with cc: fills c->last, logs the attempt and
 * calls the attempt callback. */
void ocisbx_http_call_end(ocisbx_http_call *c, CURLcode cc);
/* ocisbx_http_decide on c->last (budget NULL: unlimited). */
ocisbx_http_decision ocisbx_http_call_decide(ocisbx_http_call *c, const ocisbx_http_retry_budget *budget);
/* What a retry owes before its wait: for REFRESH the refresh itself, for
 * RETRY the log line, the retry callback and a restarted file sink. 0:
 * wait and attempt again; non-zero: finish instead (the refresh failed). */
int ocisbx_http_call_before_retry(ocisbx_http_call *c, const ocisbx_http_decision *d);
/* The call canceled during a wait (sets the error; returns OCISBX_ECANCELED). */
int ocisbx_http_call_canceled(ocisbx_http_call *c);
/* Ends the call and frees it. rc 0: the result of the last attempt (0, or
 * the error of its answer or transfer); non-zero: that failure (its error
 * already set). Returns what ocisbx_http_send returns, *out as it sets it. */
int ocisbx_http_call_finish(ocisbx_http_call *c, int rc, ocisbx_http_response **out);
/* Frees a call without a result (an engine shutting down). */
void ocisbx_http_call_abandon(ocisbx_http_call *c);

/* ---- debug.c: the DEBUG log of each attempt (credential values never shown) ---- */
void ocisbx_http_debug_request(const ocisbx_http_request *r, const ocisbx_headers *hl, int attempt, int max_attempts);
void ocisbx_http_debug_response(int status, const char *reason, const ocisbx_headers *h);
void ocisbx_http_debug_times(const ocisbx_http_request *r, const ocisbx_http_outcome *o);

/* ---- request.c ---- */
/* Generates request id / retry token when absent. */
int ocisbx_http_request_fill_ids(ocisbx_http_request *r);
bool ocisbx_http_method_has_body(const char *method);
ocisbx_http_response *ocisbx_http_response_alloc(void);

/* ---- headers.c ---- */
/* Builds the full header list of one attempt (signed, in send order). */
int ocisbx_http_build_headers(ocisbx_http *h, ocisbx_http_request *r, const ocisbx_url *u, ocisbx_headers **out);
/* The user-agent string for this build. */
char *ocisbx_http_user_agent(const char *suffix);

#endif
