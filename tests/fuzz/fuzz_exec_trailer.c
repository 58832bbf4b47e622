/* The exec client's half (the trailer, the last line of the wrapper's
 * stderr, and head and tail taken by its lengths) on any stdout and stderr:
 * never crashes; a result is consistent (its SHA-256 is its output's, what
 * it says was dropped is within the total). Input: one byte for the output
 * cap, then stdout, a NUL, stderr. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/exec_int.h"
#include "ocisbx/backend.h"
#include "ocisbx/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1 << 20)
        return 0;
    size_t max = 1024 + (size_t)data[0] * 37;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    const char *nul = memchr(p, 0, n);
    size_t ol = nul ? (size_t)(nul - p) : n;
    const char *err = nul ? nul + 1 : "";
    size_t el = nul ? n - ol - 1 : 0;
    ocisbx_exec_result *r = NULL;
    if (ocisbx_exec_parse_(p, ol, err, el, "abcdefghijklmnop", max, &r) != 0)
        return 0;
    size_t len = 0;
    const char *out = ocisbx_exec_result_output(r, &len);
    unsigned char h[32];
    char hex[65];
    ocisbx_sha256(out, len, h);
    ocisbx_hex(h, 32, hex);
    if (strcmp(hex, ocisbx_exec_result_returned_sha256(r)) != 0 || out[len] != '\0' ||
        ocisbx_exec_result_dropped_bytes(r) > ocisbx_exec_result_total_bytes(r) ||
        strlen(ocisbx_exec_result_total_sha256(r)) != 64)
        abort();
    ocisbx_exec_result_free(r);
    return 0;
}
