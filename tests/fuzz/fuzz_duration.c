/* ISO 8601 duration parser: never crashes, and whatever it accepts formats to
 * a canonical text that parses back to the same value (and formats the same). */
#include <stdint.h>
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
    int64_t ms = -1;
    if (ocisbx_duration_parse(text, &ms) == 0) {
        if (ms < 0)
            abort();
        char *canon = NULL;
        if (ocisbx_duration_format(ms, &canon) != 0)
            abort();
        int64_t again = -1;
        if (ocisbx_duration_parse(canon, &again) != 0 || again != ms)
            abort();
        char *canon2 = NULL;
        if (ocisbx_duration_format(again, &canon2) != 0 || strcmp(canon, canon2) != 0)
            abort();
        ocisbx_free(canon2);
        ocisbx_free(canon);
    }
    free(text);
    return 0;
}
