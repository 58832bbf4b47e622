/* Fuzz target for the tool-arguments parser: the first byte picks a tool,
 * the rest are its arguments. No crash, no leak; a refusal is EINVAL with a
 * message, an acceptance an object with every required argument. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness/tools.h"
#include "ocisbx/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    size_t n;
    const harness_tool *tools = harness_tools(&n);
    const harness_tool *t = &tools[data[0] % n];
    cJSON *args = NULL;
    char msg[512];
    int rc = harness_args_check(t, (const char *)data + 1, size - 1, &args, msg, sizeof msg);
    if (rc) {
        if (args || (rc != OCISBX_EINVAL && rc != OCISBX_ENOMEM) || (rc == OCISBX_EINVAL && !msg[0]))
            abort();
        return 0;
    }
    if (!cJSON_IsObject(args))
        abort();
    cJSON *schema = harness_tool_schema(t);
    const cJSON *req;
    cJSON_ArrayForEach(req, cJSON_GetObjectItem(schema, "required")) if (!cJSON_GetObjectItemCaseSensitive(
                                                                             args, req->valuestring)) abort();
    cJSON_Delete(schema);
    cJSON_Delete(args);
    return 0;
}
