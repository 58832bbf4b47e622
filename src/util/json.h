/* The library's one JSON codec, on cJSON (library-internal). The API's
 * models and ocisbx_client_call_json, and the harness's tool arguments and
 * results, parse, check and print JSON with these. */
#ifndef OCISBX_UTIL_JSON_H
#define OCISBX_UTIL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Parses len bytes of JSON text keeping \u0000 escapes: cJSON keeps strings
 * NUL-terminated, so each \u0000 inside a string is parsed as a noncharacter
 * found nowhere in the text, whose UTF-8 goes to sentinel ("" when the text
 * had none). whole: nothing but white space may follow the value. NULL on a
 * parse error (*error_at, may be NULL: where in text, or NULL). */
cJSON *ocisbx_json_parse_nul(const char *text, size_t len, bool whole, char sentinel[4], const char **error_at);
/* Replaces each sentinel in printed JSON with \u0000 (*s may move). */
int ocisbx_json_unescape_sentinel(char **s, const char sentinel[4]);

/* cJSON's number as int64 when it is integral and in range. */
bool ocisbx_json_int64(const cJSON *j, int64_t *out);
/* For messages: "a string", "a number", "a boolean", "an array", "an
 * object", "null". */
const char *ocisbx_json_type_name(const cJSON *j);
/* Unformatted JSON text as a library string (ocisbx_free); nomem error. */
int ocisbx_json_print(const cJSON *j, char **out);

#endif
