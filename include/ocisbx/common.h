/** @file
 * libocisbx: version, status codes, errors, global init, logging.
 *
 * Conventions (see docs): every fallible call returns int, 0 on
 * success or a negative OCISBX_E* code; details of the last failure on the
 * calling thread are read with ocisbx_error_last(). Strings the library
 * returns through a char ** out-parameter are freed with ocisbx_free(). */
#ifndef OCISBX_COMMON_H
#define OCISBX_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(OCISBX_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#define OCISBX_API __attribute__((visibility("default")))
#else
#define OCISBX_API
#endif

/* ocisbx/version.h is generated from CMake's project(VERSION). */
#include "ocisbx/version.h"

/** Status codes: the one list. X(name, value, message): the enum
 * (OCISBX_<name> = value), ocisbx_strerror (message) and ocisbx_status_name
 * ("OCISBX_<name>") are all made from it. Values are stable: new codes are
 * only ever added. */
#define OCISBX_STATUS_MAP(X)                                                                                 \
    X(OK, 0, "success")                                                                                      \
    X(EINVAL, -1, "invalid argument") /* a bad argument from the caller; HTTP 400 */                         \
    X(ENOMEM, -2, "out of memory")                                                                           \
    X(ENOTFOUND, -3, "not found")                /* the resource (or file) does not exist: HTTP 404 */       \
    X(ECONFLICT, -4, "conflict")                 /* wrong state or conflicting change: HTTP 409/412 */       \
    X(ERATELIMIT, -5, "rate limited")            /* too many requests: HTTP 429 */                           \
    X(ETIMEOUT, -6, "timed out")                 /* a timeout or deadline passed; HTTP 408, 504 */           \
    X(ECANCELED, -7, "canceled")                 /* canceled by the caller (a callback returned non-zero) */ \
    X(EDENIED, -8, "denied by the gate")         /* denied by the harness gate */                            \
    X(ENOTUNIQUE, -9, "not unique")              /* an edit's old text occurs more than once */              \
    X(EINTEGRITY, -10, "integrity check failed") /* a SHA-256 or signature check failed */                   \
    X(ECONFIG, -11, "bad configuration")         /* config file, key file, environment, options */           \
    X(EAUTH, -12, "authentication failed")       /* authentication refused or impossible: HTTP 401 */        \
    X(ETRANSPORT, -13, "transport error")        /* connection, TLS or protocol failure */                   \
    X(EIO, -14, "I/O error")                     /* local file or stream I/O */                              \
    X(EPARSE, -15, "malformed data")             /* JSON, dates, durations, headers */                       \
    X(ESERVICE, -16, "service error")            /* any other error answer (HTTP 4xx/5xx) */                 \
    X(ETOOLARGE, -17, "too large")               /* a body or value above a limit: HTTP 413 */               \
    X(EUNSUPPORTED, -18, "not supported")        /* version, algorithm, platform */                          \
    X(EFORBIDDEN, -19, "forbidden")              /* not permitted (path outside /workspace, policy): 403 */  \
    X(ENOMATCH, -20, "no match")                 /* an edit's old text does not occur */                     \
    X(EISDIR, -21, "is a directory")             /* a directory where a file is wanted */                    \
    X(EBINARY, -22, "binary file")               /* binary content where text is wanted */

#define OCISBX_STATUS_ENUM_ITEM_(name, value, message) OCISBX_##name = (value),
/** The status codes (OCISBX_OK, OCISBX_EINVAL, ...): see OCISBX_STATUS_MAP. */
typedef enum ocisbx_status { OCISBX_STATUS_MAP(OCISBX_STATUS_ENUM_ITEM_) } ocisbx_status;
#undef OCISBX_STATUS_ENUM_ITEM_

/** OCISBX_VERSION_STRING of the library that is running ("0.1.0"). */
OCISBX_API const char *ocisbx_version(void);

/** ocisbx_features() bit: harness policy files in YAML can be read (the
 * library was built with libyaml, OCISBX_WITH_YAML); without it
 * ocisbx_harness_options_set_policy_file fails with OCISBX_EUNSUPPORTED. */
#define OCISBX_FEATURE_YAML_POLICY (1u << 0)
/** ocisbx_features() bit: the local-directory backend (ocisbx_backend_local). */
#define OCISBX_FEATURE_LOCAL_BACKEND (1u << 1)
/** ocisbx_features() bit: the transport can speak HTTP/2 (the libcurl it
 * runs with was built with it). */
#define OCISBX_FEATURE_HTTP2 (1u << 2)
/** The optional features of the library that is running: a bit set of
 * OCISBX_FEATURE_*. Bits not defined here are 0. */
OCISBX_API unsigned int ocisbx_features(void);
/** A short fixed message for a status code, e.g. "not found"; "unknown
 * error" for a value not in OCISBX_STATUS_MAP. Never NULL. */
OCISBX_API const char *ocisbx_strerror(int code);
/** The code's name, e.g. "OCISBX_ENOTFOUND"; "OCISBX_UNKNOWN" for a value
 * not in OCISBX_STATUS_MAP. Never NULL. */
OCISBX_API const char *ocisbx_status_name(int code);

/** Reference-counted and thread-safe: every init needs one cleanup. Calls that
 * need it (HTTP) initialise on first use too, but a program that creates
 * threads should call it once first. */
OCISBX_API int ocisbx_global_init(void);
/** Undoes one ocisbx_global_init; the last one releases what init set up. */
OCISBX_API void ocisbx_global_cleanup(void);

/** Frees any string or buffer the library returned, wiping it first (it may
 * hold a secret). NULL is a no-op. */
OCISBX_API void ocisbx_free(void *p);

/* ---- errors ------------------------------------------------------------ */
/** The last failure on the calling thread. Read it right after a call returned
 * non-zero: like errno, a successful call does not clear it. Valid until the
 * next library call on this thread. Never NULL: before any failure, or after
 * ocisbx_error_clear(), the code is OCISBX_OK and the message "no error". */
typedef struct ocisbx_error ocisbx_error;
/** The calling thread's last failure (see ocisbx_error above). Never NULL. */
OCISBX_API const ocisbx_error *ocisbx_error_last(void);
/** The error's status code (OCISBX_OK when there was no failure). */
OCISBX_API int ocisbx_error_code(const ocisbx_error *e);
/** A complete one-line message naming what failed (file, key, field, status,
 * request id). Never NULL, never contains a secret. */
OCISBX_API const char *ocisbx_error_message(const ocisbx_error *e);
/** HTTP status of the answer that failed, 0 when the failure was not an answer. */
OCISBX_API int ocisbx_error_http_status(const ocisbx_error *e);
/** The number of attempts the failed HTTP call made (1 when it was not
 * retried), 0 when the failure was no HTTP call's (a bad argument, a config
 * file) or happened before the first attempt. */
OCISBX_API int ocisbx_error_attempts(const ocisbx_error *e);
/** The service's error code ("NotAuthorizedOrNotFound"), or NULL. */
OCISBX_API const char *ocisbx_error_service_code(const ocisbx_error *e);
/** The opc-request-id of the failed request, or NULL. */
OCISBX_API const char *ocisbx_error_request_id(const ocisbx_error *e);
/** Resets the calling thread's error to OCISBX_OK, "no error". */
OCISBX_API void ocisbx_error_clear(void);
/** Sets the calling thread's error to code (negative OCISBX_E*) and message
 * (NULL: the code's text), as a callback does to say why it failed (the
 * harness's approval callback: "no one could be asked"). Returns code. */
OCISBX_API int ocisbx_error_set(int code, const char *message);

/* ---- logging ------------------------------------------------------------ */
/** Log levels: ocisbx_set_log's max_level and each line's level. */
typedef enum ocisbx_log_level {
    OCISBX_LOG_ERROR = 0,
    OCISBX_LOG_WARN = 1,
    OCISBX_LOG_INFO = 2,
    OCISBX_LOG_DEBUG = 3
} ocisbx_log_level;
/** Called for each log line at or below max_level (one line, no newline).
 * Lines never contain a secret: Authorization values, tokens, keys and
 * passphrases are redacted before the callback sees them. Global; may be
 * called from any thread that uses the library. fn NULL turns logging off. */
typedef void (*ocisbx_log_fn)(int level, const char *line, void *user_data);
/** Sets the log callback and the highest level it gets (an ocisbx_log_level); fn NULL: off. */
OCISBX_API void ocisbx_set_log(ocisbx_log_fn fn, int max_level, void *user_data);

/** A pull-style byte source: fill up to cap bytes of buf, return the count
 * (0 at the end), or a negative OCISBX_E* code. */
typedef int64_t (*ocisbx_read_fn)(void *buf, size_t cap, void *user_data);
/** A push-style byte sink: consume len bytes; non-zero return cancels. */
typedef int (*ocisbx_write_fn)(const void *data, size_t len, void *user_data);
/** Asked while a call blocks (between retries, in backoff and polling waits,
 * during a transfer): non-zero cancels the call (OCISBX_ECANCELED). It may
 * be called from the thread of the call only, often (every 50 ms in a
 * wait, about once a second during a transfer): keep it cheap, e.g. read a
 * flag a signal handler sets. */
typedef int (*ocisbx_cancel_fn)(void *user_data);

#ifdef __cplusplus
}
#endif
#endif
