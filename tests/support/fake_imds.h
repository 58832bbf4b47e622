/* A fake instance metadata service + federation endpoint for tests, on
 * 127.0.0.1 (libmicrohttpd, plain http, a free port).
 *
 * Metadata (only with "Authorization: Bearer Oracle", else 401):
 *   GET /opc/v2/instance/region, /opc/v2/identity/{cert,key,intermediate}.pem
 * It makes its own CA and a leaf certificate whose subject carries
 * OU=opc-tenant:<tenancy>, and serves the CA as the intermediate.
 * Federation: POST /v1/x509 checks the request as the service would, written
 * independently of the library: the OCI signature made with the leaf key
 * (keyId <tenancy>/fed-x509/<SHA-1 fingerprint>, the POST header set,
 * x-content-sha256 and content-length of the body), and the body (the leaf
 * and CA certificates, a 2048-bit RSA session public key); then answers
 * {"token": "<JWT>"} with exp/iat the test controls. */
#ifndef OCISBX_TEST_FAKE_IMDS_H
#define OCISBX_TEST_FAKE_IMDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fake_imds fake_imds;

/* region: what /instance/region answers (e.g. "phx"). 0 on success. */
int fake_imds_start(const char *tenancy, const char *region, fake_imds **out);
void fake_imds_stop(fake_imds *f);

/* Also serves the same routes over HTTPS (a server certificate for
 * 127.0.0.1 from the fake's CA, whose PEM is written to ca_file).
 * fake_imds_federation_tls_url then gives https://127.0.0.1:P. */
int fake_imds_start_tls(fake_imds *f, const char *ca_file);
const char *fake_imds_federation_tls_url(const fake_imds *f);

const char *fake_imds_metadata_url(const fake_imds *f);   /* http://127.0.0.1:P/opc/v2 */
const char *fake_imds_federation_url(const fake_imds *f); /* http://127.0.0.1:P */
/* The leaf certificate's SHA-1 fingerprint (uppercase colon hex). */
const char *fake_imds_fingerprint(const fake_imds *f);

/* The next tokens' exp and iat, in seconds relative to now; has_iat false
 * leaves iat out, has_exp false leaves exp out. Default: exp +3600, iat 0. */
void fake_imds_set_token_times(fake_imds *f, bool has_exp, int64_t exp_in, bool has_iat, int64_t iat_in);
/* 0: normal. Otherwise every federation request is answered with this
 * status and {"code","message"} (after its checks pass). */
void fake_imds_set_federation_status(fake_imds *f, int status);
/* 0: normal. Otherwise every metadata request is answered with this status. */
void fake_imds_set_metadata_status(fake_imds *f, int status);
/* The leaf certificate as served (PEM), copied into a malloc'd string. */
char *fake_imds_leaf_pem(fake_imds *f);
/* A throwaway self-signed certificate (PEM, malloc'd) whose subject is
 * CN=test plus OU=<ou> when ou is not NULL. */
char *fake_imds_self_signed_pem(const char *ou);
/* A new leaf key and certificate (the platform rotates them). */
int fake_imds_rotate_leaf(fake_imds *f);

/* Federation requests received (answered or not). */
int fake_imds_federation_requests(fake_imds *f);
/* Tokens issued so far. */
int fake_imds_tokens_issued(fake_imds *f);
/* Requests refused by a check (bad signature, missing Bearer header, ...). */
int fake_imds_refused(fake_imds *f);
/* Why the last request was refused ("" if none); copied into buf. */
void fake_imds_last_refusal(fake_imds *f, char *buf, size_t cap);
/* The last token issued, copied into buf ("" if none). */
void fake_imds_last_token(fake_imds *f, char *buf, size_t cap);
/* Verifies an RSA-SHA256 signature (base64) over data with the session
 * public key of the last successful federation request. 1 valid, 0 not. */
int fake_imds_verify_session_signature(fake_imds *f, const void *data, size_t len, const char *sig_b64);

#endif
