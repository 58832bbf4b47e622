/* Internal helpers of the principal providers (instance and resource
 * principal): JWT expiry, PEM bodies, the leaf certificate's identity, the
 * default federation endpoint. Exposed here so the tests can check them. */
#ifndef OCISBX_AUTH_FEDERATION_H
#define OCISBX_AUTH_FEDERATION_H

#include <stddef.h>
#include <stdint.h>

/* The claim `name` (a number, e.g. "exp" or "iat") of a JWT's payload, in
 * seconds since the epoch. OCISBX_EPARSE when the token is not three
 * base64url parts with a JSON object in the middle, OCISBX_ENOTFOUND when
 * the claim is absent. Never puts the token in the message. */
int ocisbx_jwt_claim_time(const char *jwt, const char *name, int64_t *out);

/* When to refresh a token: `margin` seconds before exp, but never earlier
 * than half its lifetime (iat, or `obtained` when the token has no iat), so
 * a server that issues short tokens is not asked again on every call. A
 * token without exp counts as valid for one hour from `obtained`.
 * *expires gets exp (or obtained + 3600). */
int64_t ocisbx_token_refresh_at(const char *jwt, int64_t obtained, int margin, int64_t *expires);

/* A PEM block's base64 body: the BEGIN/END lines and every line break
 * removed (the form the federation service wants). Only the first block;
 * OCISBX_EPARSE without a "-----BEGIN " or "-----END " line, or when a body
 * line is not base64 (e.g. RFC 1421 headers of an encrypted key). */
int ocisbx_pem_body(const char *pem, size_t len, char **out);

/* SHA-1 of a certificate's DER, uppercase hex pairs joined by ':'. */
#define OCISBX_SHA1_FP_LEN 59
/* From a PEM certificate: the tenancy OCID of its subject (the value of an
 * RDN beginning "opc-tenant:", else "opc-identity:", as the OCI SDKs read it)
 * and its SHA-1 fingerprint. `what` names the source in messages. */
int ocisbx_cert_identity(const char *pem, size_t len, const char *what, char **tenancy,
                         char fingerprint[OCISBX_SHA1_FP_LEN + 1]);

/* "https://auth.<region>.<realm domain>" for a region name or short code. */
int ocisbx_federation_default_url(const char *region, char **out);

#endif
