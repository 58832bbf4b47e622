/** @file
 * libocisbx http layer: one signed transport over libcurl.
 *
 * An ocisbx_http handle holds the options, the credentials (referenced) and
 * one reusable connection (keep-alive, DNS and TLS session cache). Each call
 * builds an ocisbx_http_request, sends it with ocisbx_http_send, and reads
 * the ocisbx_http_response.
 *
 * What every attempt does: signs afresh (new date unless one is fixed) with
 * OCI HTTP Signature v1, sets Host to exactly the signed value, sends
 * opc-request-id (the caller's or a generated one), opc-retry-token for
 * OCISBX_HTTP_RETRY_TOKEN requests (one per request, the same across its
 * attempts) and user-agent "libocisbx/<version> (<os>/<arch>; libcurl/<v>)".
 *
 * Retries (on by default; docs/http.md "The retry decision" is the table,
 * one pure function applies it to each attempt's outcome): up to max_attempts, waiting
 * min(base * 2^(n-1), cap) plus up to max_jitter of random jitter, or the
 * answer's retry-after when it has one (at most 60 s); on 409 with code IncorrectState or
 * LockConflict, 429, 500, 502, 503, 504, timeouts and connection errors.
 * Never for OCISBX_HTTP_RETRY_NEVER, never a body that cannot be replayed
 * (a callback body without a rewind function), never after a response
 * callback has received bytes, never past the call's deadline. A 401 makes
 * credentials that can be refreshed (tokens, principals; not an API key)
 * refresh once, then one re-signed retry.
 *
 * Thread safety: one handle is used by one thread at a time; separate
 * handles on separate threads need no locks (the credentials lock
 * themselves and may be shared). */
#ifndef OCISBX_HTTP_H
#define OCISBX_HTTP_H

#include "common.h"
#include "auth.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most a buffered answer's body may be (JSON answers; a larger one fails
 * with OCISBX_ETOOLARGE naming the limit). Bodies to a file or a callback,
 * and event streams, are streamed and have no such limit. */
#define OCISBX_HTTP_BODY_MAX (8 * 1024 * 1024)
/** The most all header lines of one answer may be together. */
#define OCISBX_HTTP_HEADERS_MAX (256 * 1024)

/* ---- options ------------------------------------------------------------ */
/** Transport options: credentials, timeouts, retries, TLS, callbacks. */
typedef struct ocisbx_http_options ocisbx_http_options;
/** Makes transport options with the defaults. */
OCISBX_API int ocisbx_http_options_new(ocisbx_http_options **out);
/** Frees transport options (the credentials they reference are released). */
OCISBX_API void ocisbx_http_options_free(ocisbx_http_options *o);
/** Referenced (ocisbx_credentials_ref), not copied. NULL: requests are sent
 * unsigned (only useful against a test server). */
OCISBX_API int ocisbx_http_options_set_credentials(ocisbx_http_options *o, ocisbx_credentials *creds);
/** Default 10000 ms. */
OCISBX_API int ocisbx_http_options_set_connect_timeout_ms(ocisbx_http_options *o, int64_t ms);
/** One attempt of a request with a buffer body and a buffered answer, from
 * the start to the last byte; for file/callback bodies or sinks (any size)
 * it is instead the longest gap without bytes. Default 60000 ms. */
OCISBX_API int ocisbx_http_options_set_read_timeout_ms(ocisbx_http_options *o, int64_t ms);
/** Streaming requests: the longest gap without bytes. Default 60000 ms. */
OCISBX_API int ocisbx_http_options_set_stream_idle_timeout_ms(ocisbx_http_options *o, int64_t ms);
/** Total time for one call, all attempts and waits included. 0 (default): none. */
OCISBX_API int ocisbx_http_options_set_deadline_ms(ocisbx_http_options *o, int64_t ms);
/** 0 turns retries off (one attempt; the 401 refresh retry still happens). */
OCISBX_API int ocisbx_http_options_set_retries(ocisbx_http_options *o, int enabled);
/** Attempts in all, 1..100. Default 8. */
OCISBX_API int ocisbx_http_options_set_max_attempts(ocisbx_http_options *o, int attempts);
/** Defaults 1000 ms and 30000 ms. */
OCISBX_API int ocisbx_http_options_set_backoff_ms(ocisbx_http_options *o, int64_t base_ms, int64_t cap_ms);
/** Default 1000 ms; 0 for none. */
OCISBX_API int ocisbx_http_options_set_max_jitter_ms(ocisbx_http_options *o, int64_t ms);
/** A PEM CA bundle for https (a private CA); NULL: the system's. TLS
 * verification itself is always on. A client (ocisbx_client_new) whose
 * options give none takes $OCI_SANDBOX_CA_BUNDLE (else $OCI_CLI_CERT_BUNDLE) when it is set. */
OCISBX_API int ocisbx_http_options_set_ca_bundle(ocisbx_http_options *o, const char *path);
/** Allows http:// URLs, but only ever for a loopback host (127.0.0.0/8, ::1,
 * localhost); http to any other host is refused (OCISBX_EINVAL) even so. */
OCISBX_API int ocisbx_http_options_set_allow_plain_http(ocisbx_http_options *o, int allow);
/** Ignore http_proxy/https_proxy/no_proxy (default: honoured). */
OCISBX_API int ocisbx_http_options_set_ignore_proxy_env(ocisbx_http_options *o, int ignore);
/** Appended to the user-agent after a space ("myharness/1.2"). */
OCISBX_API int ocisbx_http_options_set_user_agent_suffix(ocisbx_http_options *o, const char *suffix);
/** Asked before each attempt, during each retry wait (every 50 ms) and during
 * a transfer (libcurl's progress callback, about once a second, aborting the
 * transfer in flight): non-zero ends the call with OCISBX_ECANCELED. fn NULL:
 * never canceled (the default). */
OCISBX_API int ocisbx_http_options_set_cancel(ocisbx_http_options *o, ocisbx_cancel_fn fn, void *user_data);
/** Called before each retry wait, on the thread of the call: the attempt about
 * to be made (2..max_attempts), max_attempts, the wait in ms, the HTTP status
 * of the failed attempt (0 when it had no answer), a one-line cause for
 * people ("HTTP 503 Service Unavailable", or libcurl's error text; never
 * parse it) and the call's opc-request-id. The strings are valid during the
 * call only. */
typedef void (*ocisbx_http_retry_fn)(int attempt, int max_attempts, int64_t delay_ms, int http_status,
                                     const char *cause, const char *request_id, void *user_data);
/** fn NULL: none (the default). */
OCISBX_API int ocisbx_http_options_set_retry_callback(ocisbx_http_options *o, ocisbx_http_retry_fn fn,
                                                      void *user_data);
/** Called during each transfer (libcurl's progress callback: often while
 * bytes move, at least about once a second), on the thread of the call:
 * the bytes received and sent so far in this attempt and their totals (0
 * when not known yet). The counts start again at 0 for each attempt. For
 * progress displays; it cannot stop the transfer (the cancel callback
 * does). fn NULL: none (the default). */
typedef void (*ocisbx_http_progress_fn)(int64_t down_now, int64_t down_total, int64_t up_now, int64_t up_total,
                                        void *user_data);
/** Sets the progress callback (see above). */
OCISBX_API int ocisbx_http_options_set_progress_callback(ocisbx_http_options *o, ocisbx_http_progress_fn fn,
                                                         void *user_data);
/** Called after each attempt, on the thread of the call: the method, the URL
 * as sent, the attempt's number (1..), the HTTP status of its answer (0 when
 * there was none) and the opc-request-id (the answer's, else the one sent).
 * The strings are valid during the call only. fn NULL: none (the default). */
typedef void (*ocisbx_http_attempt_fn)(const char *method, const char *url, int attempt, int http_status,
                                       const char *request_id, void *user_data);
/** Sets the attempt callback (see above). */
OCISBX_API int ocisbx_http_options_set_attempt_callback(ocisbx_http_options *o, ocisbx_http_attempt_fn fn,
                                                        void *user_data);

/* ---- the transport handle ----------------------------------------------- */
/** A signed transport over libcurl, made from options. */
typedef struct ocisbx_http ocisbx_http;
/** opts is copied (NULL: the defaults, unsigned). */
OCISBX_API int ocisbx_http_new(const ocisbx_http_options *opts, ocisbx_http **out);
/** Frees a transport handle and its connections. */
OCISBX_API void ocisbx_http_free(ocisbx_http *h);

/* ---- requests ----------------------------------------------------------- */
/** When a request may be retried. */
typedef enum ocisbx_http_retry_class {
    OCISBX_HTTP_RETRY_NEVER = 0, /**< never retried (except the 401 refresh) */
    OCISBX_HTTP_RETRY_SAFE = 1,  /**< GET, DELETE, PUT of a replayable body */
    OCISBX_HTTP_RETRY_TOKEN = 2  /**< POSTs that create or act: opc-retry-token */
} ocisbx_http_retry_class;

/** Rewinds a callback body to its start for a retry; 0 on success. */
typedef int (*ocisbx_rewind_fn)(void *user_data);

/** One request: method, URL, headers, body, where the answer goes. */
typedef struct ocisbx_http_request ocisbx_http_request;
/** method: GET, HEAD, DELETE, POST, PUT, PATCH. url: absolute http(s) URL.
 * The URL is normalised once, here: bytes outside printable ASCII and
 * spaces in the path and query are percent-encoded (uppercase hex), an
 * empty trailing '?' is dropped; a malformed escape ("%zz") is refused
 * (OCISBX_EINVAL). The result (ocisbx_http_request_url) is signed and sent
 * byte for byte: dot segments and existing escapes are kept as written.
 * Retry class defaults to SAFE for GET/HEAD/DELETE/PUT, NEVER otherwise. */
OCISBX_API int ocisbx_http_request_new(const char *method, const char *url, ocisbx_http_request **out);
/** Frees a request. */
OCISBX_API void ocisbx_http_request_free(ocisbx_http_request *r);
/** Extra header, sent after the library's own, in the order added. Names
 * the library sets itself (host, date, authorization, content-length,
 * content-type, x-content-sha256, opc-request-id, opc-retry-token,
 * user-agent) are refused: use the setters. */
OCISBX_API int ocisbx_http_request_add_header(ocisbx_http_request *r, const char *name, const char *value);
/** Default application/json (sent only with a body or for POST/PUT/PATCH). */
OCISBX_API int ocisbx_http_request_set_content_type(ocisbx_http_request *r, const char *content_type);
/** Default: generated on first prepare/send and kept in the request. */
OCISBX_API int ocisbx_http_request_set_request_id(ocisbx_http_request *r, const char *id);
/** Sets the retry class (an ocisbx_http_retry_class). */
OCISBX_API int ocisbx_http_request_set_retry_class(ocisbx_http_request *r, int retry_class);
/** Default for RETRY_TOKEN: generated on first prepare/send and kept in the
 * request, so sending the same request object again is the same call. */
OCISBX_API int ocisbx_http_request_set_retry_token(ocisbx_http_request *r, const char *token);
/** Fixes the signed date (RFC 1123) for every attempt; default: now, each. */
OCISBX_API int ocisbx_http_request_set_date(ocisbx_http_request *r, const char *date);
/** Body from memory (copied). */
OCISBX_API int ocisbx_http_request_set_body(ocisbx_http_request *r, const void *data, size_t len);
/** Body from a file, streamed (memory bounded); replayable. The file is
 * hashed in one pass before sending. */
OCISBX_API int ocisbx_http_request_set_body_file(ocisbx_http_request *r, const char *path);
/** Body from a callback, streamed. len: the length, or -1 when unknown.
 * rewind may be NULL: then the request is never retried, and its SHA-256
 * must be given (set_body_sha256) or body signing excluded, because hashing
 * needs a pass over the body before sending. */
OCISBX_API int ocisbx_http_request_set_body_callback(ocisbx_http_request *r, int64_t len, ocisbx_read_fn read,
                                                     ocisbx_rewind_fn rewind, void *user_data);
/** The body's SHA-256 (base64) and length when the caller already knows
 * them: skips the hashing pass. */
OCISBX_API int ocisbx_http_request_set_body_sha256(ocisbx_http_request *r, const char *sha256_b64, uint64_t len);
/** Sign only "date (request-target) host" (streamed-upload variant). */
OCISBX_API int ocisbx_http_request_set_exclude_body_signing(ocisbx_http_request *r, int exclude);
/** Where a 2xx body goes (default: a buffer in the response). A body of an
 * error status (>= 300) always goes to the response buffer (up to 64 KiB)
 * so that the error can be read. A file sink is truncated before each
 * attempt; a callback sink that has received bytes stops retries, and a
 * non-zero return from it cancels the call (OCISBX_ECANCELED). */
OCISBX_API int ocisbx_http_request_set_sink_file(ocisbx_http_request *r, const char *path);
/** A 2xx body goes to a callback as it arrives (see ocisbx_http_request_set_sink_file). */
OCISBX_API int ocisbx_http_request_set_sink_callback(ocisbx_http_request *r, ocisbx_write_fn write, void *user_data);
/** Called once per attempt when the answer's status line and headers are
 * complete, before any body byte reaches the sink (for every final status,
 * errors included; never for an interim 1xx). headers: lowercase names in
 * order, valid during the call only. A non-zero return cancels the call
 * (OCISBX_ECANCELED, no retry). */
typedef int (*ocisbx_http_headers_fn)(int status, const ocisbx_headers *headers, void *user_data);
/** Sets the headers callback (see above). */
OCISBX_API int ocisbx_http_request_set_headers_callback(ocisbx_http_request *r, ocisbx_http_headers_fn fn,
                                                        void *user_data);
/** Streaming answer (event streams, output): the stream idle timeout applies
 * instead of the read timeout. */
OCISBX_API int ocisbx_http_request_set_streaming(ocisbx_http_request *r, int streaming);
/** The method, uppercased. */
OCISBX_API const char *ocisbx_http_request_method(const ocisbx_http_request *r);
/** The URL as signed and sent (normalised, see ocisbx_http_request_new). */
OCISBX_API const char *ocisbx_http_request_url(const ocisbx_http_request *r);
/** Values the request ends up with (generated on first prepare/send), or NULL. */
OCISBX_API const char *ocisbx_http_request_request_id(const ocisbx_http_request *r);
/** The opc-retry-token the request ends up with, or NULL. */
OCISBX_API const char *ocisbx_http_request_retry_token(const ocisbx_http_request *r);

/* ---- responses ---------------------------------------------------------- */
/** The answer of a sent request. */
typedef struct ocisbx_http_response ocisbx_http_response;
/** The HTTP status of the final attempt's answer. */
OCISBX_API int ocisbx_http_response_status(const ocisbx_http_response *resp);
/** The status line's reason phrase ("Not Found"), possibly "". Never NULL. */
OCISBX_API const char *ocisbx_http_response_reason(const ocisbx_http_response *resp);
/** Headers of the final attempt's answer (lowercase names, in order). */
OCISBX_API const ocisbx_headers *ocisbx_http_response_headers(const ocisbx_http_response *resp);
/** First value of a header (case-insensitive), or NULL. */
OCISBX_API const char *ocisbx_http_response_header(const ocisbx_http_response *resp, const char *name);
/** The buffered body (NUL-terminated; "" when empty or sent to a sink). */
OCISBX_API const char *ocisbx_http_response_body(const ocisbx_http_response *resp, size_t *len);
/** The answer's opc-request-id, else the one sent. */
OCISBX_API const char *ocisbx_http_response_request_id(const ocisbx_http_response *resp);
/** Attempts made (1 when no retry happened). */
OCISBX_API int ocisbx_http_response_attempts(const ocisbx_http_response *resp);
/** Frees a response. */
OCISBX_API void ocisbx_http_response_free(ocisbx_http_response *resp);

/* ---- calls -------------------------------------------------------------- */
/** The exact header list the first attempt would send, in send order
 * (lowercase names, authorization included), without sending: --dry-run.
 * Reads a file/callback body once to hash it (and rewinds it). */
OCISBX_API int ocisbx_http_prepare(ocisbx_http *h, ocisbx_http_request *r, ocisbx_headers **out);
/** Sends with retries. Returns 0 for a status < 400. For a status >= 400 it
 * returns the mapped OCISBX_E* code, the error object holds the status, the
 * service code, the opc-request-id and a message
 * "GET <url>: 404 NotAuthorizedOrNotFound: <message> (opc-request-id: <id>)",
 * and *out is still set for the caller to inspect. On a failure without an
 * answer (transport, timeout, bad input) *out is NULL. */
OCISBX_API int ocisbx_http_send(ocisbx_http *h, ocisbx_http_request *r, ocisbx_http_response **out);

#ifdef __cplusplus
}
#endif
#endif
