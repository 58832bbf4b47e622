/* Fuzz target for the policy file: load the input as a policy; when it
 * loads, decide a few calls with it. No crash, no leak; a failure is always
 * ECONFIG (or ENOMEM) and leaves no policy; a decision is always one of the
 * three. */
#include <stdint.h>
#include <stdlib.h>

#include "ocisbx/harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ocisbx_policy *p = (ocisbx_policy *)&p;
    int rc = ocisbx_policy_load_yaml((const char *)data, size, "fuzz", &p);
    if (rc) {
        if (p || (rc != OCISBX_ECONFIG && rc != OCISBX_ENOMEM))
            abort();
        return 0;
    }
    static const char *const calls[][4] = {
        {"exec", "workspace.exec", "pytest -q", NULL},
        {"write", "workspace.write", NULL, "/workspace/.git/config"},
        {"read", "workspace.read", NULL, "/workspace/a/b/c.txt"},
        {"job", "workspace.exec", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        const char *why = NULL;
        int d = ocisbx_policy_decide(p, calls[i][0], calls[i][1], calls[i][2], calls[i][3], &why);
        if (d < OCISBX_GATE_ALLOW || d > OCISBX_GATE_HOLD)
            abort();
    }
    ocisbx_policy_free(p);
    return 0;
}
