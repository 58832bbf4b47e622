/* Key and file helpers shared by the unit tests (see test_keys.h). */
#include "test_keys.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

static int write_bio(BIO *bio, EVP_PKEY *pkey, test_pem_form form, const char *pass)
{
    void *u = (void *)(uintptr_t)pass; /* the passphrase when no callback is given */
    switch (form) {
    case TEST_PEM_PKCS1: return PEM_write_bio_PrivateKey_traditional(bio, pkey, NULL, NULL, 0, NULL, NULL);
    case TEST_PEM_PKCS8: return PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL);
    case TEST_PEM_PKCS8_ENC: return PEM_write_bio_PKCS8PrivateKey(bio, pkey, EVP_aes_256_cbc(), NULL, 0, NULL, u);
    case TEST_PEM_PKCS1_ENC:
        return PEM_write_bio_PrivateKey_traditional(bio, pkey, EVP_aes_128_cbc(), NULL, 0, NULL, u);
    case TEST_PEM_PUBLIC: return PEM_write_bio_PUBKEY(bio, pkey);
    }
    return 0;
}

char *test_pem_text(EVP_PKEY *pkey, test_pem_form form, const char *pass)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *s = NULL;
    if (bio && write_bio(bio, pkey, form, pass) == 1) {
        char *data = NULL;
        long n = BIO_get_mem_data(bio, &data);
        s = malloc((size_t)n + 1);
        if (s) {
            memcpy(s, data, (size_t)n);
            s[n] = '\0';
        }
    }
    BIO_free(bio);
    return s;
}

int test_pem_write(EVP_PKEY *pkey, test_pem_form form, const char *pass, const char *path)
{
    BIO *bio = BIO_new_file(path, "w");
    int ok = bio && write_bio(bio, pkey, form, pass) == 1;
    BIO_free(bio);
    return ok ? 0 : -1;
}

int test_key_fingerprint(EVP_PKEY *pkey, char out[48])
{
    unsigned char *der = NULL;
    int n = i2d_PUBKEY(pkey, &der);
    if (n <= 0)
        return -1;
    unsigned char md[16];
    unsigned int mdlen = 0;
    int ok = EVP_Digest(der, (size_t)n, md, &mdlen, EVP_md5(), NULL);
    OPENSSL_free(der);
    if (!ok || mdlen != 16)
        return -1;
    for (int i = 0; i < 16; i++)
        snprintf(out + 3 * i, 4, i < 15 ? "%02x:" : "%02x", md[i]);
    return 0;
}

int test_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

int test_write_vector_config(const char *path)
{
    char text[1024];
    snprintf(text, sizeof text, "[VECTOR]\nuser=%s\nfingerprint=%s\nkey_file=%s\ntenancy=%s\nregion=us-phoenix-1\n",
             TEST_VECTOR_USER, TEST_VECTOR_FP, OCISBX_SOURCE_DIR "/tests/data/cavage-test-key.pem",
             TEST_VECTOR_TENANCY);
    return test_write_text(path, text);
}

int test_rm_rf(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}
