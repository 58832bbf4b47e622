/* ocisbx_backend_user_command on any command text (what the service lists):
 * never crashes; what it recovers is a string of the input's bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ocisbx/backend.h"
#include "ocisbx/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *u = NULL;
    if (ocisbx_backend_user_command(text, &u) == 0 && u && strlen(u) > size)
        abort();
    ocisbx_free(u);
    free(text);
    return 0;
}
