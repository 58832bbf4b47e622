/* Fuzz target: the Authorization header parser the test tenancy runs on
 * every request, then the signing-string rebuild and the required-headers
 * check on whatever it accepts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/verify.h"
#include "ocisbx/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *lookup(const char *name, void *ud)
{
    (void)ud;
    /* Some headers present, some absent. */
    return strlen(name) % 3 == 0 ? NULL : "value";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0'; /* a header value ends at the first NUL */
    ocisbx_authz a;
    if (ocisbx_authz_parse(s, &a) == 0) {
        if (!a.key_id || !a.algorithm || !a.headers || !a.signature || strcmp(a.algorithm, "rsa-sha256") != 0)
            abort();
        if (a.version && strcmp(a.version, "1") != 0)
            abort();
        (void)ocisbx_authz_require_headers(a.headers, "POST", 0);
        char *ss = NULL;
        if (ocisbx_verify_signing_string(a.headers, "GET", "/x?y", lookup, NULL, &ss) == 0) {
            if (!ss)
                abort();
            ocisbx_free(ss);
        }
        ocisbx_authz_clear(&a);
    } else if (a.key_id || a.headers || a.signature || a.algorithm || a.version) {
        abort(); /* failure must leave nothing allocated */
    }
    free(s);
    return 0;
}
