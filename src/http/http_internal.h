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

/* ---- transport.c ---- */
/* The longest wait a retry-after asks for that is honoured (60 s); a call's
 * deadline cuts it shorter (the call fails at once instead of waiting past
 * it). */
#define OCISBX_HTTP_RETRY_AFTER_CAP_MS 60000
/* retry-after (delay-seconds or an HTTP date, relative to now_ms, the wall
 * clock in ms) as a wait in ms, capped at OCISBX_HTTP_RETRY_AFTER_CAP_MS;
 * -1 when absent or malformed. */
int64_t ocisbx_http_retry_after_ms(const char *value, int64_t now_ms);

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
