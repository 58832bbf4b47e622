/* The helpers both principal providers share (federation.h): a JWT's time
 * claims and when to refresh it, PEM bodies, the identity in an instance
 * certificate, the default federation endpoint of a region. */
#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "auth/federation.h"
#include "ocisbx/auth.h"
#include "util/internal.h"

/* base64url (no padding) to bytes; *out is NUL-terminated. */
static int b64url_decode(const char *s, size_t n, unsigned char **out, size_t *out_len)
{
    if (n % 4 == 1 || n > (size_t)INT_MAX - 3) /* EVP_DecodeBlock takes an int */
        return OCISBX_EPARSE;
    size_t padded = (n + 3) / 4 * 4;
    char *std = malloc(padded + 1);
    unsigned char *bin = malloc(padded / 4 * 3 + 1);
    if (!std || !bin) {
        free(std);
        free(bin);
        return OCISBX_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '-')
            ch = '+';
        else if (ch == '_')
            ch = '/';
        else if (!isalnum((unsigned char)ch)) {
            free(std);
            free(bin);
            return OCISBX_EPARSE;
        }
        std[i] = ch;
    }
    for (size_t i = n; i < padded; i++)
        std[i] = '=';
    std[padded] = '\0';
    int got = padded ? EVP_DecodeBlock(bin, (const unsigned char *)std, (int)padded) : 0;
    free(std);
    if (got < 0) {
        free(bin);
        return OCISBX_EPARSE;
    }
    size_t len = (size_t)got - (padded - n); /* EVP_DecodeBlock counts padding as zero bytes */
    bin[len] = '\0';
    *out = bin;
    *out_len = len;
    return 0;
}

int ocisbx_jwt_claim_time(const char *jwt, const char *name, int64_t *out)
{
    if (!jwt || !name || !out)
        return ocisbx_fail(OCISBX_EINVAL, "JWT claim: NULL argument");
    const char *dot1 = strchr(jwt, '.');
    const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
    if (!dot1 || !dot2 || strchr(dot2 + 1, '.'))
        return ocisbx_fail(OCISBX_EPARSE, "token is not a JWT (expected three dot-separated parts)");
    unsigned char *payload = NULL;
    size_t plen = 0;
    int rc = b64url_decode(dot1 + 1, (size_t)(dot2 - dot1 - 1), &payload, &plen);
    if (rc == OCISBX_ENOMEM)
        return ocisbx_fail_nomem();
    if (rc)
        return ocisbx_fail(OCISBX_EPARSE, "token is not a JWT (payload is not base64url)");
    cJSON *json = cJSON_ParseWithLength((const char *)payload, plen);
    ocisbx_wipe(payload, plen);
    free(payload);
    if (!cJSON_IsObject(json)) {
        cJSON_Delete(json);
        return ocisbx_fail(OCISBX_EPARSE, "token is not a JWT (payload is not a JSON object)");
    }
    const cJSON *claim = cJSON_GetObjectItemCaseSensitive(json, name);
    if (!claim) {
        cJSON_Delete(json);
        return ocisbx_fail(OCISBX_ENOTFOUND, "JWT has no \"%s\" claim", name);
    }
    if (!cJSON_IsNumber(claim) || claim->valuedouble < 0 || claim->valuedouble > 1e15) {
        cJSON_Delete(json);
        return ocisbx_fail(OCISBX_EPARSE, "JWT claim \"%s\" is not a time in seconds", name);
    }
    *out = (int64_t)claim->valuedouble;
    cJSON_Delete(json);
    return 0;
}

int64_t ocisbx_token_refresh_at(const char *jwt, int64_t obtained, int margin, int64_t *expires)
{
    int64_t exp = 0, iat = 0;
    if (ocisbx_jwt_claim_time(jwt, "exp", &exp) != 0) {
        ocisbx_error_clear();
        exp = obtained + 3600;
    }
    if (ocisbx_jwt_claim_time(jwt, "iat", &iat) != 0 || iat > exp) {
        ocisbx_error_clear();
        iat = obtained;
    }
    if (expires)
        *expires = exp;
    int64_t at = exp - margin;
    int64_t half = iat + (exp - iat) / 2;
    return at > half ? at : half;
}

static bool is_base64_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '+' || ch == '/' || ch == '=';
}

/* The first block only: what comes before its BEGIN line or after its END
 * line (another certificate, an HTML error page) is not part of it. */
int ocisbx_pem_body(const char *pem, size_t len, char **out)
{
    if (!pem || !out)
        return ocisbx_fail(OCISBX_EINVAL, "PEM block: NULL argument");
    ocisbx_buf b = OCISBX_BUF_INIT;
    bool begun = false, ended = false;
    size_t i = 0, line = 0;
    while (i < len && !ended) {
        line++;
        size_t j = i;
        while (j < len && pem[j] != '\n')
            j++;
        size_t k = j;
        while (k > i && (pem[k - 1] == '\r' || pem[k - 1] == ' ' || pem[k - 1] == '\t'))
            k--;
        if (!begun) {
            begun = k - i >= 11 && strncmp(pem + i, "-----BEGIN ", 11) == 0;
        } else if (k - i >= 9 && strncmp(pem + i, "-----END ", 9) == 0) {
            ended = true;
        } else {
            for (size_t m = i; m < k; m++)
                if (!is_base64_char(pem[m])) {
                    ocisbx_buf_free(&b);
                    return ocisbx_fail(OCISBX_EPARSE, "PEM block: line %zu is not base64", line);
                }
            if (k > i && ocisbx_buf_append(&b, pem + i, k - i)) {
                ocisbx_buf_free(&b);
                return ocisbx_fail_nomem();
            }
        }
        i = j + 1;
    }
    if (!begun || !ended) {
        ocisbx_buf_free(&b);
        return ocisbx_fail(OCISBX_EPARSE, "PEM block: no \"-----%s\" line", begun ? "END" : "BEGIN");
    }
    if (b.len == 0) {
        ocisbx_buf_free(&b);
        return ocisbx_fail(OCISBX_EPARSE, "PEM block has no body");
    }
    *out = ocisbx_buf_detach(&b);
    return 0;
}

/* The value after `prefix` of the first subject RDN that starts with it. */
static char *subject_value(const X509_NAME *name, const char *prefix)
{
    size_t plen = strlen(prefix);
    for (int i = 0; i < X509_NAME_entry_count(name); i++) {
        const X509_NAME_ENTRY *e = X509_NAME_get_entry(name, i);
        const ASN1_STRING *v = X509_NAME_ENTRY_get_data(e);
        unsigned char *utf8 = NULL;
        int n = ASN1_STRING_to_UTF8(&utf8, v);
        if (n < 0)
            continue;
        char *found = NULL;
        if ((size_t)n > plen && memcmp(utf8, prefix, plen) == 0)
            found = ocisbx_strndup((const char *)utf8 + plen, (size_t)n - plen);
        OPENSSL_free(utf8);
        if (found)
            return found;
    }
    return NULL;
}

int ocisbx_cert_identity(const char *pem, size_t len, const char *what, char **tenancy,
                         char fingerprint[OCISBX_SHA1_FP_LEN + 1])
{
    if (len > INT32_MAX)
        return ocisbx_fail(OCISBX_EPARSE, "%s: certificate too large", what);
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    X509 *cert = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    if (!cert)
        return ocisbx_fail(OCISBX_EPARSE, "%s: not a PEM X.509 certificate", what);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!X509_digest(cert, EVP_sha1(), md, &mdlen) || mdlen != 20) {
        X509_free(cert);
        return ocisbx_fail(OCISBX_EPARSE, "%s: cannot compute the SHA-1 fingerprint", what);
    }
    ocisbx_hex_colon(md, mdlen, true, fingerprint);
    const X509_NAME *subject = X509_get_subject_name(cert);
    char *t = subject_value(subject, "opc-tenant:");
    if (!t)
        t = subject_value(subject, "opc-identity:");
    X509_free(cert);
    if (!t)
        return ocisbx_fail(OCISBX_EPARSE, "%s: the certificate subject has no \"opc-tenant:<tenancy ocid>\" value",
                           what);
    *tenancy = t;
    return 0;
}

int ocisbx_federation_default_url(const char *region, char **out)
{
    char *full = NULL;
    int rc = ocisbx_region_resolve(region, &full);
    if (rc)
        return rc;
    char *url = ocisbx_asprintf("https://auth.%s.%s", full, ocisbx_region_domain(full));
    ocisbx_free(full);
    if (!url)
        return ocisbx_fail_nomem();
    *out = url;
    return 0;
}
