/* The OCI error-body parser gets whatever a server or proxy sends. It must
 * never crash, and what it returns must fit a one-line message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_field(const char *s)
{
    if (!s)
        return;
    size_t n = strlen(s);
    if (n > 512)
        abort();
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *code = NULL, *message = NULL;
    if (ocisbx_http_parse_error_body((const char *)data, size, &code, &message) == 0) {
        check_field(code);
        check_field(message);
    }
    free(code);
    free(message);
    return 0;
}
