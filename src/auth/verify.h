/* OCI HTTP Signature v1 verification (internal; shared with the emulator).
 *
 * Deliberately independent of the signer's string-building code (sign.c,
 * headers.c): the test tenancy uses this to catch the client's mistakes. */
#ifndef OCISBX_AUTH_VERIFY_H
#define OCISBX_AUTH_VERIFY_H

#include <stddef.h>

#include "ocisbx/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The parameters of an Authorization: Signature header (each malloc'd). */
typedef struct ocisbx_authz {
    char *version; /* NULL when absent (then "1" is implied) */
    char *key_id;
    char *algorithm; /* always "rsa-sha256" after a successful parse */
    char *headers;   /* space-separated lowercase names, as sent */
    char *signature; /* base64, as sent */
} ocisbx_authz;

/* Parses `Signature k="v",k="v",...`. Parameters in any order, optional
 * whitespace after commas, unknown parameters ignored. Duplicate, missing
 * (keyId, algorithm, headers, signature), unquoted or unterminated values:
 * OCISBX_EPARSE naming the problem. version, when present, must be "1"
 * and algorithm must be rsa-sha256 (else OCISBX_EUNSUPPORTED). Messages
 * never contain keyId or signature values. On failure *out is
 * left cleared (all NULL). */
int ocisbx_authz_parse(const char *value, ocisbx_authz *out);
/* Frees the fields (wiping keyId, which may hold a token) and zeroes *a. */
void ocisbx_authz_clear(ocisbx_authz *a);

/* Checks that the headers parameter signs what OCI requires for method:
 * "date" (or "x-date"), "(request-target)" and "host"; for POST, PUT and
 * PATCH also "content-length", "content-type" and "x-content-sha256" unless
 * allow_exclude_body is set (the streamed-upload variant). A missing one:
 * OCISBX_EAUTH naming it. */
int ocisbx_authz_require_headers(const char *signed_headers, const char *method, int allow_exclude_body);

/* Returns the value of a request header (name given in lowercase), or NULL
 * when the request does not have it. */
typedef const char *(*ocisbx_header_lookup_fn)(const char *lowercase_name, void *user_data);

/* Builds the signing string the client must have signed, from the header
 * names in signed_headers (the authz headers parameter: space separated,
 * lowercase). "(request-target)" is lowercase(method) + " " + request_target
 * (path?query exactly as received). A listed header that is absent:
 * OCISBX_EAUTH naming it. *out is freed with ocisbx_free. */
int ocisbx_verify_signing_string(const char *signed_headers, const char *method, const char *request_target,
                                 ocisbx_header_lookup_fn lookup, void *user_data, char **out);

/* A parsed RSA public key, kept so a server verifies without re-parsing PEM
 * on every request. Immutable after load: safe to share between threads. */
typedef struct ocisbx_pubkey ocisbx_pubkey;
/* PEM "BEGIN PUBLIC KEY" (SubjectPublicKeyInfo) or "BEGIN RSA PUBLIC KEY"
 * (PKCS#1). Not RSA, or not a public key: OCISBX_EPARSE. */
int ocisbx_pubkey_load_pem(const char *pem, size_t len, ocisbx_pubkey **out);
/* Missing or unreadable file: OCISBX_EIO naming it; bad contents: as above. */
int ocisbx_pubkey_load_file(const char *path, ocisbx_pubkey **out);
/* MD5 of the DER SubjectPublicKeyInfo, lowercase colon hex (47 chars + NUL). */
int ocisbx_pubkey_fingerprint(const ocisbx_pubkey *pk, char out[48]);
/* RSASSA-PKCS1-v1_5 SHA-256 check of signature_b64 over data.
 * Bad base64: OCISBX_EPARSE; does not verify: OCISBX_EINTEGRITY. */
int ocisbx_pubkey_verify(const ocisbx_pubkey *pk, const void *data, size_t len, const char *signature_b64);
void ocisbx_pubkey_free(ocisbx_pubkey *pk);

/* One-shot: load public_key_pem and verify (OCISBX_EINTEGRITY when the
 * signature does not verify). */
int ocisbx_verify_signature_pem(const char *public_key_pem, size_t len, const char *signing_string, size_t sslen,
                                const char *signature_b64);

#ifdef __cplusplus
}
#endif
#endif
