/** @file
 * libocisbx auth layer: the OCI config file, private keys, credential
 * providers, and the OCI HTTP Signature v1 signer. */
#ifndef OCISBX_AUTH_H
#define OCISBX_AUTH_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the configuration file (~/.oci/config) ------------------------------ */
/** An OCI config file, read, with one profile selected. */
typedef struct ocisbx_config ocisbx_config;
/** path NULL: $OCI_CONFIG_FILE, else $OCI_CLI_CONFIG_FILE, else ~/.oci/config
 * (the settings table's config_file; ~ is $HOME, else the passwd entry's
 * home). profile NULL: "DEFAULT".
 * Reads the file, applies [DEFAULT] inheritance and expands ~ in key_file
 * and security_token_file. Errors (OCISBX_ECONFIG) name the file, and the
 * profile or the line: file not found, profile not found, malformed line.
 * Values are checked by the credential provider that uses them. */
OCISBX_API int ocisbx_config_load(const char *path, const char *profile, ocisbx_config **out);
/** Same, from text in memory; `name` is used in messages (like a file name). */
OCISBX_API int ocisbx_config_parse(const char *text, size_t len, const char *name, const char *profile,
                                   ocisbx_config **out);
/** The value of key (matched in any case) in the selected profile, inherited
 * from DEFAULT when absent there, or NULL. */
OCISBX_API const char *ocisbx_config_get(const ocisbx_config *cfg, const char *key);
/** The file the config was read from (the name given to ocisbx_config_parse). */
OCISBX_API const char *ocisbx_config_file(const ocisbx_config *cfg);
/** The selected profile's name. */
OCISBX_API const char *ocisbx_config_profile(const ocisbx_config *cfg);
/** Wipes pass_phrase before freeing. NULL is a no-op. */
OCISBX_API void ocisbx_config_free(ocisbx_config *cfg);

/* ---- regions ---- */
/** Lowercases a region name and maps short codes ("phx", "IAD") to full names
 * ("us-phoenix-1"). Unknown names in the region form (xx-name-N) are accepted
 * as they are; anything else is OCISBX_ECONFIG. */
OCISBX_API int ocisbx_region_resolve(const char *name_or_code, char **full_name);
/** The realm's second-level domain for a full region name: "oraclecloud.com"
 * for oc1. Unknown regions get the oc1 domain. */
OCISBX_API const char *ocisbx_region_domain(const char *full_name);

/* ---- private keys ---- */
/** A private RSA key (reference-counted). */
typedef struct ocisbx_key ocisbx_key;
/** PEM PKCS#1 or PKCS#8, optionally encrypted. A passphrase for an
 * unencrypted key is ignored. Errors (OCISBX_ECONFIG) name the file: missing,
 * unreadable, encrypted but no passphrase, wrong passphrase, not a private
 * key, not RSA. */
OCISBX_API int ocisbx_key_load_file(const char *path, const char *passphrase, ocisbx_key **out);
/** As ocisbx_key_load_file, from PEM text in memory. */
OCISBX_API int ocisbx_key_load_pem(const char *pem, size_t len, const char *passphrase, ocisbx_key **out);
/** A fresh RSA key (session keys of the principal providers). */
OCISBX_API int ocisbx_key_generate(int bits, ocisbx_key **out);
/** MD5 of the DER SubjectPublicKeyInfo, lowercase hex pairs joined by ':' (47
 * characters). out holds 48 bytes. */
OCISBX_API int ocisbx_key_fingerprint(const ocisbx_key *key, char out[48]);
/** The public key as PEM "-----BEGIN PUBLIC KEY-----". */
OCISBX_API int ocisbx_key_public_pem(const ocisbx_key *key, char **out);
/** The key's size in bits (0 for NULL). */
OCISBX_API int ocisbx_key_bits(const ocisbx_key *key);
/** Keys are reference-counted: ref adds one, free drops one and wipes the key
 * when the last goes. */
OCISBX_API ocisbx_key *ocisbx_key_ref(ocisbx_key *key);
/** Drops one reference; the last one wipes and frees the key. NULL is a no-op. */
OCISBX_API void ocisbx_key_free(ocisbx_key *key);

/* ---- credential providers ------------------------------------------------ */
/** One interface for every way of authenticating: it yields the keyId and
 * private key to sign with, refreshing tokens as needed. A provider may be
 * shared by several clients and threads (it locks internally). */
typedef struct ocisbx_credentials ocisbx_credentials;

/** Which provider: names as the OCI CLI's --auth. */
#define OCISBX_AUTH_API_KEY "api_key"
#define OCISBX_AUTH_SECURITY_TOKEN "security_token"         /**< a session token (oci session authenticate) */
#define OCISBX_AUTH_INSTANCE_PRINCIPAL "instance_principal" /**< an OCI compute instance's identity */
#define OCISBX_AUTH_RESOURCE_PRINCIPAL "resource_principal" /**< a resource principal (v2.2, environment) */

/** API key from a profile: needs tenancy, user, fingerprint, key_file (and
 * pass_phrase for an encrypted key); checks the OCID forms, the fingerprint
 * form and that it matches the key (a mismatch names both). */
OCISBX_API int ocisbx_credentials_api_key_from_config(const ocisbx_config *cfg, ocisbx_credentials **out);
/** API key from values. The key is referenced, not copied. */
OCISBX_API int ocisbx_credentials_api_key(const char *tenancy, const char *user, const char *fingerprint,
                                          ocisbx_key *key, ocisbx_credentials **out);
/** Session token (oci session authenticate): the profile's
 * security_token_file and key_file; keyId "ST$<token>". The token file is
 * re-read whenever it changes (mtime or size). */
OCISBX_API int ocisbx_credentials_session_token_from_config(const ocisbx_config *cfg, ocisbx_credentials **out);
/** Resource principal v2.2 from the OCI_RESOURCE_PRINCIPAL_* environment. */
OCISBX_API int ocisbx_credentials_resource_principal(ocisbx_credentials **out);

/** Instance principal. Options are optional: NULL uses the defaults. */
typedef struct ocisbx_instance_principal_options ocisbx_instance_principal_options;
/** Makes instance principal options with the defaults. */
OCISBX_API int ocisbx_instance_principal_options_new(ocisbx_instance_principal_options **out);
/** Default "http://169.254.169.254/opc/v2". */
OCISBX_API int ocisbx_instance_principal_options_set_metadata_url(ocisbx_instance_principal_options *o,
                                                                  const char *url);
/** Default `"https://auth.<region>.<realm domain>"` (region from the metadata). */
OCISBX_API int ocisbx_instance_principal_options_set_federation_url(ocisbx_instance_principal_options *o,
                                                                    const char *url);
/** A CA bundle for the federation endpoint (tests use a private CA). */
OCISBX_API int ocisbx_instance_principal_options_set_ca_bundle(ocisbx_instance_principal_options *o,
                                                               const char *path);
/** Refresh this long before the token's exp (default 300 s). */
OCISBX_API int ocisbx_instance_principal_options_set_refresh_margin(ocisbx_instance_principal_options *o,
                                                                    int seconds);
/** Frees instance principal options. */
OCISBX_API void ocisbx_instance_principal_options_free(ocisbx_instance_principal_options *o);
/** Instance principal credentials (opts NULL: the defaults). */
OCISBX_API int ocisbx_credentials_instance_principal(const ocisbx_instance_principal_options *opts,
                                                     ocisbx_credentials **out);

/** By name (OCISBX_AUTH_*; NULL means api_key). cfg is needed for api_key and
 * security_token and ignored by the principals. */
OCISBX_API int ocisbx_credentials_new(const char *auth, const ocisbx_config *cfg, ocisbx_credentials **out);

/** The provider's name (OCISBX_AUTH_*). */
OCISBX_API const char *ocisbx_credentials_kind(const ocisbx_credentials *c);
/** Region known to the provider (config profile, metadata, environment), or NULL. */
OCISBX_API const char *ocisbx_credentials_region(const ocisbx_credentials *c);
/** Current keyId and a reference to the signing key; refreshes a token that
 * is near expiry first. *key_id is a secret for token providers: free it with
 * ocisbx_free (it is wiped). *key is released with ocisbx_key_free. */
OCISBX_API int ocisbx_credentials_get(ocisbx_credentials *c, char **key_id, ocisbx_key **key);
/** Forces a refresh (call once after a 401). A no-op for API keys. */
OCISBX_API int ocisbx_credentials_refresh(ocisbx_credentials *c);
/** References: ref adds one, free drops one. */
OCISBX_API ocisbx_credentials *ocisbx_credentials_ref(ocisbx_credentials *c);
/** Drops one reference; the last one wipes and frees the provider. */
OCISBX_API void ocisbx_credentials_free(ocisbx_credentials *c);

/* ---- the signer (OCI HTTP Signature v1) ------------------------------------ */
/** A description of one request to sign. The URL must be absolute
 * (http/https), its path and query already percent-encoded: they are signed
 * exactly as given. */
typedef struct ocisbx_sign_request ocisbx_sign_request;
/** Describes a request to sign: its method and absolute URL (signed as given). */
OCISBX_API int ocisbx_sign_request_new(const char *method, const char *url, ocisbx_sign_request **out);
/** Fix the date header (RFC 1123, used verbatim); default, or NULL: the
 * time of each signing. */
OCISBX_API int ocisbx_sign_request_set_date(ocisbx_sign_request *r, const char *date);
/** Default "application/json". Only sent for methods with a body. */
OCISBX_API int ocisbx_sign_request_set_content_type(ocisbx_sign_request *r, const char *content_type);
/** The body, hashed at once (not kept). No body set: an empty body. */
OCISBX_API int ocisbx_sign_request_set_body(ocisbx_sign_request *r, const void *data, size_t len);
/** The body from a stream, read to its end and hashed in one pass. */
OCISBX_API int ocisbx_sign_request_set_body_stream(ocisbx_sign_request *r, ocisbx_read_fn src, void *user_data);
/** The body's SHA-256 (base64) and length, computed by the caller. */
OCISBX_API int ocisbx_sign_request_set_body_sha256(ocisbx_sign_request *r, const char *sha256_b64, uint64_t len);
/** Sign only "date (request-target) host" even with a body (streamed upload
 * variant): no x-content-sha256/content-length/content-type are produced. */
OCISBX_API int ocisbx_sign_request_set_exclude_body(ocisbx_sign_request *r, int exclude);
/** Host header value; default: the URL's authority exactly as written
 * (host[:port], no userinfo). */
OCISBX_API int ocisbx_sign_request_set_host(ocisbx_sign_request *r, const char *host);
/** Frees a request description. */
OCISBX_API void ocisbx_sign_request_free(ocisbx_sign_request *r);

/** The signing string for r (one "name: value" line per signed header joined
 * by \n, no trailing newline), as signed. */
OCISBX_API int ocisbx_sign_request_signing_string(const ocisbx_sign_request *r, char **out);

/** An ordered list of headers (lowercase names). */
typedef struct ocisbx_headers ocisbx_headers;
/** Makes an empty header list. */
OCISBX_API int ocisbx_headers_new(ocisbx_headers **out);
/** Appends (names are lowercased; values copied). */
OCISBX_API int ocisbx_headers_add(ocisbx_headers *h, const char *name, const char *value);
/** The number of headers. */
OCISBX_API size_t ocisbx_headers_count(const ocisbx_headers *h);
/** The name of header i (lowercase), or NULL when i is out of range. */
OCISBX_API const char *ocisbx_headers_name(const ocisbx_headers *h, size_t i);
/** The value of header i, or NULL when i is out of range. */
OCISBX_API const char *ocisbx_headers_value(const ocisbx_headers *h, size_t i);
/** First value for name (case-insensitive), or NULL. */
OCISBX_API const char *ocisbx_headers_get(const ocisbx_headers *h, const char *name);
/** Wipes every value (Authorization is a credential) and frees. */
OCISBX_API void ocisbx_headers_free(ocisbx_headers *h);

/** Signs r with the provider's current key. *out gets, in this order:
 * date, (request-target is not a header), host, then for POST/PUT/PATCH
 * (unless exclude_body) content-length, content-type, x-content-sha256, and
 * last authorization. */
OCISBX_API int ocisbx_sign(ocisbx_credentials *creds, const ocisbx_sign_request *r, ocisbx_headers **out);
/** The same with an explicit keyId and key. */
OCISBX_API int ocisbx_sign_with_key(const char *key_id, const ocisbx_key *key, const ocisbx_sign_request *r,
                                    ocisbx_headers **out);
/** RSASSA-PKCS1-v1_5 SHA-256 of data, base64 without line breaks. */
OCISBX_API int ocisbx_key_sign_base64(const ocisbx_key *key, const void *data, size_t len, char **out_b64);

#ifdef __cplusplus
}
#endif
#endif
