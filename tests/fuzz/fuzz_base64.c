/* Strict base64: whatever decodes must encode back to the same text. */
#include <stdlib.h>
#include <string.h>

#include "ocisbx/common.h"
#include "ocisbx/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *raw = NULL;
    size_t len = 0;
    if (ocisbx_base64_decode((const char *)data, size, &raw, &len) == 0) {
        char *text = NULL;
        if (ocisbx_base64_encode(raw, len, &text) != 0 || strlen(text) != size || memcmp(text, data, size) != 0)
            abort();
        ocisbx_free(text);
        ocisbx_free(raw);
    }
    return 0;
}
