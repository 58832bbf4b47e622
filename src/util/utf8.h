/* UTF-8 helpers shared by the emulator, the backend (output cut on
 * character boundaries, binary detection) and the harness (records and
 * results are valid UTF-8 JSON). */
#ifndef OCISBX_UTIL_UTF8_H
#define OCISBX_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#include "util/internal.h"

/* The length (1-4) of the valid UTF-8 sequence at p (avail bytes there),
 * or 0 when the bytes are not one (overlong forms, surrogates and code
 * points above U+10FFFF are not), or when it is cut short by avail. */
size_t ocisbx_utf8_seq_len(const unsigned char *p, size_t avail);
/* true when all len bytes are valid UTF-8 (NUL bytes included). */
bool ocisbx_utf8_valid(const char *data, size_t len);
/* As ocisbx_utf8_valid, but a character cut short by the end is fine: for
 * a sample taken from the head of something longer. */
bool ocisbx_utf8_valid_sample(const char *data, size_t len);
/* Appends data to out as valid UTF-8: each byte that does not start a valid
 * sequence becomes U+FFFD. */
int ocisbx_utf8_sanitize(const char *data, size_t len, ocisbx_buf *out);
/* The largest n <= len such that data[0..n) does not end inside a
 * character (for cutting a head). */
size_t ocisbx_utf8_cut_back(const char *data, size_t len);
/* The smallest k >= start such that data[k..len) does not start inside a
 * character (for cutting a tail); len when there is none. */
size_t ocisbx_utf8_cut_forward(const char *data, size_t len, size_t start);

#endif
