/* Key and file helpers shared by the unit tests: PEM text of a generated
 * key in each form the library reads, the console fingerprint computed here
 * (not by the library), small files in a temporary directory. All return
 * NULL or -1 on failure and leave asserting to the caller. */
#ifndef OCISBX_TEST_KEYS_H
#define OCISBX_TEST_KEYS_H

#include <openssl/evp.h>

typedef enum test_pem_form {
    TEST_PEM_PKCS1,     /* "RSA PRIVATE KEY" */
    TEST_PEM_PKCS8,     /* "PRIVATE KEY" */
    TEST_PEM_PKCS8_ENC, /* "ENCRYPTED PRIVATE KEY", AES-256-CBC with pass */
    TEST_PEM_PKCS1_ENC, /* "RSA PRIVATE KEY" with DEK-Info, AES-128-CBC with pass */
    TEST_PEM_PUBLIC     /* "PUBLIC KEY" (SubjectPublicKeyInfo) */
} test_pem_form;

/* pkey as PEM text (malloc'd, free()). */
char *test_pem_text(EVP_PKEY *pkey, test_pem_form form, const char *pass);
/* The same, written to path. */
int test_pem_write(EVP_PKEY *pkey, test_pem_form form, const char *pass, const char *path);
/* MD5 of the DER SubjectPublicKeyInfo as "aa:bb:...", as the OCI console shows it. */
int test_key_fingerprint(EVP_PKEY *pkey, char out[48]);
/* Writes text to path (created or truncated). */
int test_write_text(const char *path, const char *text);
/* The published signing vector's user (tests/data/cavage-test-key.pem) as an
 * OCI config file with one profile [VECTOR] (region us-phoenix-1): for CLI
 * tests against a scripted server. */
#define TEST_VECTOR_TENANCY "ocid1.tenancy.oc1..aaaaaaaaba3pv6wkcr4jqae5f15p2b2m2yt2j6rx32uzr4h25vqstifsfdsq"
#define TEST_VECTOR_USER "ocid1.user.oc1..aaaaaaaat5nvwcna5j6aqzjcaty5eqbb6qt2jvpkanghtgdaqedqw3rynjq"
#define TEST_VECTOR_FP "73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7"
int test_write_vector_config(const char *path);
/* Removes dir and everything below it. */
int test_rm_rf(const char *dir);

#endif
