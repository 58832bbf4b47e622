/* RFC 3339 (service answers) and RFC 1123 (request dates the emulator
 * checks): whatever parses must format and parse back to the same instant. */
#include <stdlib.h>
#include <string.h>

#include "ocisbx/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    int64_t ms = 0;
    if (ocisbx_time_parse_rfc3339(text, &ms) == 0) {
        char out[OCISBX_RFC3339_LEN + 1];
        int64_t again = 0;
        if (ocisbx_time_format_rfc3339(ms, out) == 0) {
            if (ocisbx_time_parse_rfc3339(out, &again) != 0 || again != ms)
                abort();
        }
    }
    time_t t = 0;
    if (ocisbx_time_parse_rfc1123(text, &t) == 0) {
        char out[OCISBX_RFC1123_LEN + 1];
        time_t again = 0;
        if (ocisbx_time_format_rfc1123(t, out) == 0) {
            if (ocisbx_time_parse_rfc1123(out, &again) != 0 || again != t)
                abort();
        }
    }
    free(text);
    return 0;
}
