/* Signed requests through curl alone (never the library's http layer), the
 * reference the benches compare the library with: one request, or the
 * 8 MiB parts of a file PUT k at a time over one curl multi handle (each
 * with its opc-content-sha256, signed with the fixture's user key). */
#ifndef OCISBX_TEST_CURL_PARTS_H
#define OCISBX_TEST_CURL_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "emu_fixture.h"

/* One signed request (path below /<apiVersion>, with its query); body NULL:
 * none. The answer's body is counted into *got (may be NULL) and dropped.
 * Returns the HTTP status, 0 when none came. */
long curl_parts_request(emu_fixture *f, const char *method, const char *path, const void *body, size_t len,
                        uint64_t *got);

/* PUTs the parts (part bytes each, the last one shorter) of the first size
 * bytes of the local file to <dir>/p0000, p0001, ... in sandbox sid, at
 * most k (1..16) at once; each part is read when a transfer slot is free.
 * 0 when every part got a 2xx, else -1 with a line on stderr. */
int curl_parts_put(emu_fixture *f, const char *sid, const char *local, size_t size, size_t part, int k,
                   const char *dir);

#endif
