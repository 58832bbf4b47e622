/* JWT claims as the providers read them from tokens a server (or the
 * platform's files) hands over: whatever the bytes, the parser fails
 * cleanly or returns a time in range, and the refresh time stays sane.
 * Each input is tried as a whole token, and as the payload of one (so the
 * fuzzer reaches the JSON parsing behind the base64url). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/federation.h"
#include "ocisbx/common.h"
#include "ocisbx/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OBTAINED 1700000000
#define MARGIN 300

static void check_claim(const char *jwt, const char *name)
{
    int64_t v = -1;
    int rc = ocisbx_jwt_claim_time(jwt, name, &v);
    if (rc == 0 && (v < 0 || v > 1000000000000000LL))
        abort();
    if (rc != 0 && (v != -1 || (rc != OCISBX_EPARSE && rc != OCISBX_ENOTFOUND && rc != OCISBX_ENOMEM)))
        abort();
    if (rc != 0 && ocisbx_error_code(ocisbx_error_last()) != rc)
        abort();
}

static void check_token(const char *jwt)
{
    check_claim(jwt, "exp");
    check_claim(jwt, "iat");
    int64_t expires = -1;
    int64_t at = ocisbx_token_refresh_at(jwt, OBTAINED, MARGIN, &expires);
    /* Never after the later of exp and the time it was obtained (an already
     * expired token is refreshed at once), and no error is left set. */
    if (expires < 0 || at > (expires > OBTAINED ? expires : OBTAINED))
        abort();
    if (ocisbx_error_code(ocisbx_error_last()) != OCISBX_OK)
        abort();
}

/* "e30.<payload as base64url>.c2ln" ("e30" is "{}"). */
static char *wrap_payload(const uint8_t *data, size_t size)
{
    char *b64 = NULL;
    if (ocisbx_base64_encode(data, size, &b64) != 0)
        return NULL;
    size_t n = strlen(b64);
    char *jwt = malloc(n + 10);
    if (!jwt) {
        ocisbx_free(b64);
        return NULL;
    }
    size_t k = 0;
    memcpy(jwt, "e30.", 4);
    for (size_t i = 0; i < n && b64[i] != '='; i++)
        jwt[4 + k++] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
    memcpy(jwt + 4 + k, ".c2ln", 6);
    ocisbx_free(b64);
    return jwt;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Tokens are C strings: the parser sees up to the first NUL. */
    char *jwt = malloc(size + 1);
    if (!jwt)
        return 0;
    memcpy(jwt, data, size);
    jwt[size] = '\0';
    check_token(jwt);
    free(jwt);
    if ((jwt = wrap_payload(data, size)) != NULL) {
        check_token(jwt);
        free(jwt);
    }
    return 0;
}
