/* OCI HTTP Signature v1 verification, for the test tenancy. Written apart
 * from the signer on purpose (no shared string building), so that a mistake
 * in one shows up as a failure in the other. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "auth/verify.h"
#include "util/internal.h"

/* ---- the Authorization header ------------------------------------------------ */

void ocisbx_authz_clear(ocisbx_authz *a)
{
    if (!a)
        return;
    free(a->version);
    ocisbx_free_secret(a->key_id);
    free(a->algorithm);
    free(a->headers);
    free(a->signature);
    memset(a, 0, sizeof *a);
}

static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Which slot of *a a parameter name fills, or NULL for an unknown one. */
static char **slot_for(ocisbx_authz *a, const char *name, size_t len)
{
    static const struct {
        const char *name;
        size_t off;
    } known[] = {
        {"version", offsetof(ocisbx_authz, version)},     {"keyId", offsetof(ocisbx_authz, key_id)},
        {"algorithm", offsetof(ocisbx_authz, algorithm)}, {"headers", offsetof(ocisbx_authz, headers)},
        {"signature", offsetof(ocisbx_authz, signature)},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strlen(known[i].name) == len && memcmp(known[i].name, name, len) == 0)
            return (char **)(void *)((char *)a + known[i].off);
    }
    return NULL;
}

/* name may point into *a: the message is set before *a is cleared. */
static int authz_fail(ocisbx_authz *a, int code, const char *msg, const char *name, size_t nlen)
{
    int rc;
    if (name)
        rc = ocisbx_fail(code, "Authorization header: %s \"%.*s\"", msg, (int)(nlen > 40 ? 40 : nlen), name);
    else
        rc = ocisbx_fail(code, "Authorization header: %s", msg);
    ocisbx_authz_clear(a);
    return rc;
}

int ocisbx_authz_parse(const char *value, ocisbx_authz *out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_authz_parse: out is NULL");
    memset(out, 0, sizeof *out);
    if (!value)
        return ocisbx_fail(OCISBX_EPARSE, "Authorization header: missing");
    const char *p = value;
    while (is_ows(*p))
        p++;
    if (ocisbx_strncasecmp(p, "Signature", 9) != 0 || !is_ows(p[9]))
        return authz_fail(out, OCISBX_EPARSE, "not a \"Signature\" scheme", NULL, 0);
    p += 9;
    while (is_ows(*p))
        p++;
    /* Unknown parameters are ignored but still checked for duplicates. */
    char seen_unknown[16][32];
    size_t n_unknown = 0;
    for (;;) {
        const char *name = p;
        while (is_name_char(*p))
            p++;
        size_t nlen = (size_t)(p - name);
        if (nlen == 0)
            return authz_fail(out, OCISBX_EPARSE, *p ? "expected a parameter name" : "no parameters", NULL, 0);
        if (*p != '=')
            return authz_fail(out, OCISBX_EPARSE, "expected '=' after parameter", name, nlen);
        p++;
        if (*p != '"')
            return authz_fail(out, OCISBX_EPARSE, "value is not quoted for parameter", name, nlen);
        p++;
        const char *v = p;
        while (*p && *p != '"')
            p++;
        if (*p != '"')
            return authz_fail(out, OCISBX_EPARSE, "value is not terminated for parameter", name, nlen);
        size_t vlen = (size_t)(p - v);
        p++;
        char **slot = slot_for(out, name, nlen);
        if (slot) {
            if (*slot)
                return authz_fail(out, OCISBX_EPARSE, "duplicate parameter", name, nlen);
            *slot = ocisbx_strndup(v, vlen);
            if (!*slot) {
                ocisbx_authz_clear(out);
                return ocisbx_fail_nomem();
            }
        } else {
            for (size_t i = 0; i < n_unknown; i++) {
                if (strlen(seen_unknown[i]) == nlen && memcmp(seen_unknown[i], name, nlen) == 0)
                    return authz_fail(out, OCISBX_EPARSE, "duplicate parameter", name, nlen);
            }
            if (n_unknown < 16 && nlen < 32) {
                memcpy(seen_unknown[n_unknown], name, nlen);
                seen_unknown[n_unknown++][nlen] = '\0';
            }
        }
        while (is_ows(*p))
            p++;
        if (*p == '\0')
            break;
        if (*p != ',')
            return authz_fail(out, OCISBX_EPARSE, "expected ',' after the value of parameter", name, nlen);
        p++;
        while (is_ows(*p))
            p++;
        if (*p == '\0')
            return authz_fail(out, OCISBX_EPARSE, "trailing ',' after parameter", name, nlen);
    }
    static const char *const required[] = {"keyId", "algorithm", "headers", "signature"};
    for (size_t i = 0; i < 4; i++) {
        char **slot = slot_for(out, required[i], strlen(required[i]));
        if (!*slot)
            return authz_fail(out, OCISBX_EPARSE, "missing parameter", required[i], strlen(required[i]));
        if (!**slot)
            return authz_fail(out, OCISBX_EPARSE, "empty parameter", required[i], strlen(required[i]));
    }
    if (out->version && strcmp(out->version, "1") != 0)
        return authz_fail(out, OCISBX_EUNSUPPORTED, "unsupported signature version", out->version,
                          strlen(out->version));
    if (strcmp(out->algorithm, "rsa-sha256") != 0)
        return authz_fail(out, OCISBX_EUNSUPPORTED, "unsupported algorithm", out->algorithm, strlen(out->algorithm));
    return 0;
}

/* ---- which headers must be signed ------------------------------------------------ */

static int list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        size_t l = strcspn(p, " ");
        if (l == n && ocisbx_strncasecmp(p, name, n) == 0)
            return 1;
        p += l;
    }
    return 0;
}

int ocisbx_authz_require_headers(const char *signed_headers, const char *method, int allow_exclude_body)
{
    if (!signed_headers || !method)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_authz_require_headers: NULL argument");
    if (!list_has(signed_headers, "date") && !list_has(signed_headers, "x-date"))
        return ocisbx_fail(OCISBX_EAUTH, "signature does not sign the date header");
    static const char *const base[] = {"(request-target)", "host"};
    for (size_t i = 0; i < 2; i++) {
        if (!list_has(signed_headers, base[i]))
            return ocisbx_fail(OCISBX_EAUTH, "signature does not sign the %s header", base[i]);
    }
    int body = !ocisbx_strcasecmp(method, "POST") || !ocisbx_strcasecmp(method, "PUT") ||
               !ocisbx_strcasecmp(method, "PATCH");
    if (!body)
        return 0;
    static const char *const bodyh[] = {"content-length", "content-type", "x-content-sha256"};
    int have = 0;
    for (size_t i = 0; i < 3; i++)
        have += list_has(signed_headers, bodyh[i]);
    if (have == 0 && allow_exclude_body)
        return 0;
    for (size_t i = 0; i < 3; i++) {
        if (!list_has(signed_headers, bodyh[i]))
            return ocisbx_fail(OCISBX_EAUTH, "signature of a %s request does not sign the %s header", method,
                               bodyh[i]);
    }
    return 0;
}

/* ---- the signing string, rebuilt from the received request ------------------------- */

int ocisbx_verify_signing_string(const char *signed_headers, const char *method, const char *request_target,
                                 ocisbx_header_lookup_fn lookup, void *user_data, char **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_verify_signing_string: out is NULL");
    *out = NULL;
    if (!signed_headers || !method || !request_target || !lookup)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_verify_signing_string: NULL argument");
    ocisbx_buf b = OCISBX_BUF_INIT;
    char name[128];
    int rc = 0, count = 0;
    for (const char *p = signed_headers; *p && !rc;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        size_t l = strcspn(p, " ");
        if (l >= sizeof name) {
            rc = ocisbx_fail(OCISBX_EPARSE, "signed header name too long: \"%.40s...\"", p);
            break;
        }
        for (size_t i = 0; i < l; i++) {
            char c = p[i];
            name[i] = (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : c;
        }
        name[l] = '\0';
        p += l;
        if (count++)
            rc = ocisbx_buf_append(&b, "\n", 1);
        if (!rc)
            rc = ocisbx_buf_appends(&b, name);
        if (!rc)
            rc = ocisbx_buf_append(&b, ": ", 2);
        if (rc)
            break;
        if (strcmp(name, "(request-target)") == 0) {
            for (const char *m = method; *m && !rc; m++) {
                char c = (*m >= 'A' && *m <= 'Z') ? (char)(*m + ('a' - 'A')) : *m;
                rc = ocisbx_buf_append(&b, &c, 1);
            }
            if (!rc)
                rc = ocisbx_buf_append(&b, " ", 1);
            if (!rc)
                rc = ocisbx_buf_appends(&b, request_target);
        } else {
            const char *v = lookup(name, user_data);
            if (!v)
                rc = ocisbx_fail(OCISBX_EAUTH, "signed header \"%s\" is missing from the request", name);
            else
                rc = ocisbx_buf_appends(&b, v);
        }
    }
    if (!rc && count == 0)
        rc = ocisbx_fail(OCISBX_EPARSE, "the signature's headers list is empty");
    if (rc) {
        ocisbx_buf_free(&b);
        return rc;
    }
    *out = ocisbx_buf_detach(&b);
    return 0;
}

/* ---- public keys ------------------------------------------------------------------ */

struct ocisbx_pubkey {
    EVP_PKEY *pkey;
};

int ocisbx_pubkey_load_pem(const char *pem, size_t len, ocisbx_pubkey **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_pubkey_load_pem: out is NULL");
    *out = NULL;
    if (!pem)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_pubkey_load_pem: pem is NULL");
    EVP_PKEY *pkey = NULL;
    /* Only public-key input: a private key given here is a mistake. */
    OSSL_DECODER_CTX *dctx =
        OSSL_DECODER_CTX_new_for_pkey(&pkey, "PEM", NULL, "RSA", EVP_PKEY_PUBLIC_KEY, NULL, NULL);
    if (!dctx) {
        ERR_clear_error();
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "OpenSSL has no RSA public key decoder");
    }
    const unsigned char *data = (const unsigned char *)pem;
    size_t dlen = len;
    int ok = OSSL_DECODER_from_data(dctx, &data, &dlen);
    OSSL_DECODER_CTX_free(dctx);
    ERR_clear_error();
    if (!ok || !pkey) {
        EVP_PKEY_free(pkey);
        return ocisbx_fail(OCISBX_EPARSE, "public key: not a PEM RSA public key");
    }
    ocisbx_pubkey *pk = malloc(sizeof *pk);
    if (!pk) {
        EVP_PKEY_free(pkey);
        return ocisbx_fail_nomem();
    }
    pk->pkey = pkey;
    *out = pk;
    return 0;
}

int ocisbx_pubkey_load_file(const char *path, ocisbx_pubkey **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_pubkey_load_file: out is NULL");
    *out = NULL;
    if (!path)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_pubkey_load_file: path is NULL");
    /* a FIFO or a device is refused without waiting for a writer */
    ocisbx_file f;
    int rc = ocisbx_file_read(path, "public key file", 1024 * 1024, OCISBX_READ_REGULAR | OCISBX_READ_IO, &f);
    if (rc)
        return rc;
    rc = ocisbx_pubkey_load_pem(f.data, f.len, out);
    if (rc)
        rc = ocisbx_error_wrap("public key file %s: ", OCISBX_SHOWN(path));
    ocisbx_file_release(&f);
    return rc;
}

int ocisbx_pubkey_fingerprint(const ocisbx_pubkey *pk, char out[48])
{
    if (!pk || !out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_pubkey_fingerprint: NULL argument");
    unsigned char *der = NULL;
    int n = i2d_PUBKEY(pk->pkey, &der);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int ok = n > 0 && EVP_Digest(der, (size_t)n, md, &mdlen, EVP_md5(), NULL) && mdlen == 16;
    OPENSSL_free(der);
    if (!ok) {
        ERR_clear_error();
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "public key fingerprint: cannot encode or hash (MD5)");
    }
    ocisbx_hex_colon(md, 16, false, out);
    return 0;
}

/* Strict standard base64 (padded, no whitespace). */
static int b64_decode(const char *s, unsigned char **out, size_t *out_len)
{
    size_t n = strlen(s);
    static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t body = strspn(s, alpha);
    size_t pad = n - body;
    if (n == 0 || n % 4 != 0 || n > INT_MAX || pad > 2 || (pad && strspn(s + body, "=") != pad))
        return ocisbx_fail(OCISBX_EPARSE, "signature: not valid base64");
    unsigned char *buf = malloc(n / 4 * 3 + 1);
    if (!buf)
        return ocisbx_fail_nomem();
    int len = EVP_DecodeBlock(buf, (const unsigned char *)s, (int)n);
    if (len < 0) {
        free(buf);
        return ocisbx_fail(OCISBX_EPARSE, "signature: not valid base64");
    }
    *out = buf;
    *out_len = (size_t)len - pad; /* EVP_DecodeBlock counts the padding */
    return 0;
}

int ocisbx_pubkey_verify(const ocisbx_pubkey *pk, const void *data, size_t len, const char *signature_b64)
{
    if (!pk || (!data && len) || !signature_b64)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_pubkey_verify: NULL argument");
    unsigned char *sig = NULL;
    size_t siglen = 0;
    int rc = b64_decode(signature_b64, &sig, &siglen);
    if (rc)
        return rc;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx) {
        free(sig);
        return ocisbx_fail_nomem();
    }
    EVP_PKEY_CTX *pctx = NULL;
    int ok = EVP_DigestVerifyInit_ex(ctx, &pctx, "SHA256", NULL, NULL, pk->pkey, NULL) == 1 &&
             EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) > 0 &&
             EVP_DigestVerify(ctx, sig, siglen, data ? data : "", len) == 1;
    EVP_MD_CTX_free(ctx);
    free(sig);
    ERR_clear_error();
    if (!ok)
        return ocisbx_fail(OCISBX_EINTEGRITY, "signature does not verify (rsa-sha256) against the key");
    return 0;
}

void ocisbx_pubkey_free(ocisbx_pubkey *pk)
{
    if (!pk)
        return;
    EVP_PKEY_free(pk->pkey);
    free(pk);
}

int ocisbx_verify_signature_pem(const char *public_key_pem, size_t len, const char *signing_string, size_t sslen,
                                const char *signature_b64)
{
    ocisbx_pubkey *pk = NULL;
    int rc = ocisbx_pubkey_load_pem(public_key_pem, len, &pk);
    if (rc)
        return rc;
    rc = ocisbx_pubkey_verify(pk, signing_string, sslen, signature_b64);
    ocisbx_pubkey_free(pk);
    return rc;
}
