/* Random identifiers from OpenSSL's CSPRNG. */
#include <string.h>

#include <openssl/rand.h>

#include "ocisbx/util.h"
#include "util/internal.h"

static const char id_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
#define ID_ALPHABET_LEN 62
/* Bytes at or above 248 (= 4 * 62) are dropped so that byte % 62 is uniform. */
#define ID_ACCEPT_BELOW (256 / ID_ALPHABET_LEN * ID_ALPHABET_LEN)

int ocisbx_random_id(char *out, size_t len)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "random id: NULL output");
    if (len == SIZE_MAX)
        return ocisbx_fail(OCISBX_EINVAL, "random id: length too large");
    unsigned char pool[64];
    size_t have = 0, used = 0, o = 0;
    while (o < len) {
        if (used == have) {
            if (RAND_bytes(pool, (int)sizeof pool) != 1) {
                ocisbx_wipe(pool, sizeof pool);
                out[0] = '\0';
                return ocisbx_fail(OCISBX_EUNSUPPORTED, "random id: OpenSSL RAND_bytes failed");
            }
            have = sizeof pool;
            used = 0;
        }
        unsigned char b = pool[used++];
        if (b < ID_ACCEPT_BELOW)
            out[o++] = id_alphabet[b % ID_ALPHABET_LEN];
    }
    out[len] = '\0';
    ocisbx_wipe(pool, sizeof pool);
    return 0;
}
