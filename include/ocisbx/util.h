/** @file
 * libocisbx utilities that are useful to callers too: base64, SHA-256, times,
 * ISO 8601 durations, random ids, shell quoting. Strings returned through
 * char ** are NUL-terminated and freed with ocisbx_free(). */
#ifndef OCISBX_UTIL_H
#define OCISBX_UTIL_H

#include <time.h>
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- base64 (standard alphabet, padded, no line breaks) ---- */
/** Standard base64 of data, padded, no line breaks; free *out with ocisbx_free. */
OCISBX_API int ocisbx_base64_encode(const void *data, size_t len, char **out);
/** Strict: refuses characters outside the alphabet, bad padding and
 * whitespace (OCISBX_EPARSE). *out gets *out_len bytes plus a NUL. */
OCISBX_API int ocisbx_base64_decode(const char *text, size_t text_len, unsigned char **out, size_t *out_len);

/* ---- SHA-256 ---- */
/** Bytes in a SHA-256 digest. */
#define OCISBX_SHA256_LEN 32
#define OCISBX_SHA256_B64_LEN 44 /**< characters, without the NUL */
/** The SHA-256 of data: out gets OCISBX_SHA256_LEN bytes. */
OCISBX_API int ocisbx_sha256(const void *data, size_t len, unsigned char out[OCISBX_SHA256_LEN]);
/** base64 of the SHA-256 of data: out must hold 45 bytes. */
OCISBX_API int ocisbx_sha256_base64(const void *data, size_t len, char out[OCISBX_SHA256_B64_LEN + 1]);
/** Incremental hashing, for streams. */
typedef struct ocisbx_sha256_ctx ocisbx_sha256_ctx;
/** Makes an incremental SHA-256 context. */
OCISBX_API int ocisbx_sha256_new(ocisbx_sha256_ctx **out);
/** Hashes len more bytes. */
OCISBX_API int ocisbx_sha256_update(ocisbx_sha256_ctx *c, const void *data, size_t len);
/** Finishes; the context may be reused after ocisbx_sha256_reset. */
OCISBX_API int ocisbx_sha256_final(ocisbx_sha256_ctx *c, unsigned char out[OCISBX_SHA256_LEN]);
/** Starts the context over (a new, empty hash). */
OCISBX_API int ocisbx_sha256_reset(ocisbx_sha256_ctx *c);
/** Frees a SHA-256 context. */
OCISBX_API void ocisbx_sha256_free(ocisbx_sha256_ctx *c);
/** Reads src to its end, hashing in one pass; *total gets the byte count. */
OCISBX_API int ocisbx_sha256_stream(ocisbx_read_fn src, void *user_data, char out_b64[OCISBX_SHA256_B64_LEN + 1],
                                    uint64_t *total);
/** Lowercase hex, out holds 2*len+1. */
OCISBX_API void ocisbx_hex(const unsigned char *data, size_t len, char *out);

/* ---- times ---- */
/** RFC 1123 in GMT, English names whatever the locale:
 * "Thu, 05 Jan 2014 21:31:40 GMT". out holds at least 30 bytes. */
#define OCISBX_RFC1123_LEN 29
/** Formats t as RFC 1123 (see above). */
OCISBX_API int ocisbx_time_format_rfc1123(time_t t, char out[OCISBX_RFC1123_LEN + 1]);
/** Parses RFC 1123 text (as formatted above) into *out. */
OCISBX_API int ocisbx_time_parse_rfc1123(const char *text, time_t *out);
/** RFC 3339 UTC with milliseconds: "2026-11-30T04:02:21.123Z" (ms may be 0). */
#define OCISBX_RFC3339_LEN 24
/** Formats ms since the epoch as RFC 3339 UTC with milliseconds. */
OCISBX_API int ocisbx_time_format_rfc3339(int64_t unix_ms, char out[OCISBX_RFC3339_LEN + 1]);
/** Accepts any RFC 3339 date-time (fractions, Z or +hh:mm offsets). */
OCISBX_API int ocisbx_time_parse_rfc3339(const char *text, int64_t *unix_ms);
/** Milliseconds since the epoch (wall clock) and from a monotonic clock. */
OCISBX_API int64_t ocisbx_time_now_ms(void);
/** Milliseconds from a monotonic clock (for deadlines and durations). */
OCISBX_API int64_t ocisbx_time_monotonic_ms(void);

/* ---- ISO 8601 durations ---- */
/** Accepts PnW, PnD, PTnHnMnS and P…DT… combinations, with a decimal fraction
 * on the smallest unit ("PT1.5S"), e.g. "PT1H30M", "P2D", "PT90S".
 * Years and months (ambiguous lengths), negative values, empty "P"/"PT",
 * repeated or out-of-order units: OCISBX_EPARSE with a message naming the
 * input and what is wrong. Result in milliseconds. */
OCISBX_API int ocisbx_duration_parse(const char *text, int64_t *out_ms);
/** Canonical form: "PT1H30M", "P2DT3H", "PT0S", "PT1.5S". */
OCISBX_API int ocisbx_duration_format(int64_t ms, char **out);

/* ---- random ids ---- */
/** len characters from [A-Za-z0-9] (OpenSSL RAND_bytes, unbiased), as used
 * for opc-request-id and opc-retry-token. out holds len+1. */
OCISBX_API int ocisbx_random_id(char *out, size_t len);

/* ---- shell quoting ---- */
/** Quotes any byte string (spaces, quotes, newlines, '$', leading '-', empty,
 * non-UTF-8) so that a POSIX shell reads it back as one word, byte for byte.
 * A word that needs no quoting is returned as is. Embedded NUL cannot pass
 * through a shell: EINVAL. */
OCISBX_API int ocisbx_shell_quote(const char *data, size_t len, char **out);

#ifdef __cplusplus
}
#endif
#endif
