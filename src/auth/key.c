/* Private RSA keys: loading (PEM PKCS#1/PKCS#8, optionally encrypted),
 * generation, fingerprint, and the RSASSA-PKCS1-v1_5 SHA-256 signature. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "ocisbx/auth.h"
#include "util/internal.h"

/* Key files are small; anything bigger is not a key file. */
#define KEY_FILE_MAX (1024 * 1024)

struct ocisbx_key {
    atomic_int refs;
    EVP_PKEY *pkey; /* immutable once loaded: shared by threads */
    EVP_MD *sha256; /* fetched once, not per signature */
    size_t sig_len; /* RSA modulus size in bytes */
    int bits;
};

static int key_wrap(EVP_PKEY *pkey, ocisbx_key **out)
{
    ocisbx_key *k = calloc(1, sizeof *k);
    if (!k) {
        EVP_PKEY_free(pkey);
        return ocisbx_fail_nomem();
    }
    k->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (!k->sha256) {
        EVP_PKEY_free(pkey);
        free(k);
        ERR_clear_error();
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "OpenSSL has no SHA-256 implementation");
    }
    atomic_init(&k->refs, 1);
    k->pkey = pkey;
    k->bits = EVP_PKEY_get_bits(pkey);
    k->sig_len = (size_t)EVP_PKEY_get_size(pkey);
    *out = k;
    return 0;
}

/* The passphrase callback: never prompts on a terminal (OpenSSL's default
 * when no callback is given). */
static int pass_cb(char *buf, int size, int rwflag, void *u)
{
    (void)rwflag;
    const char *pass = u;
    if (!pass || size <= 0)
        return -1;
    size_t n = strlen(pass);
    if (n > (size_t)size)
        return -1;
    memcpy(buf, pass, n);
    return (int)n;
}

/* memmem, bounded: the PEM given to ocisbx_key_load_pem need not end in NUL. */
static const char *find_bytes(const char *hay, size_t hlen, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; n <= hlen && i <= hlen - n; i++) {
        if (memcmp(hay + i, needle, n) == 0)
            return hay + i;
    }
    return NULL;
}

/* Finds "-----BEGIN <label>-----" in pem; returns the start of the block
 * and copies the label. Prefers a block whose label ends in "PRIVATE KEY". */
static const char *find_block(const char *pem, size_t len, char *label, size_t label_cap)
{
    static const char begin[] = "-----BEGIN ";
    const char *first = NULL;
    char first_label[64] = "";
    const char *p = pem, *end = pem + len;
    while (p < end) {
        const char *b = find_bytes(p, (size_t)(end - p), begin);
        if (!b)
            break;
        const char *l = b + sizeof begin - 1;
        const char *le = l;
        while (le < end && *le != '-' && *le != '\n' && le - l < 63)
            le++;
        char lab[64];
        size_t ln = (size_t)(le - l);
        memcpy(lab, l, ln);
        lab[ln] = '\0';
        if (!first) {
            first = b;
            snprintf(first_label, sizeof first_label, "%s", lab);
        }
        if (ln >= 11 && strcmp(lab + ln - 11, "PRIVATE KEY") == 0) {
            snprintf(label, label_cap, "%s", lab);
            return b;
        }
        p = le;
    }
    snprintf(label, label_cap, "%s", first_label);
    return first;
}

static int load_pem_named(const char *pem, size_t len, const char *passphrase, const char *name, ocisbx_key **out)
{
    char label[64];
    const char *block = find_block(pem, len, label, sizeof label);
    if (!block)
        return ocisbx_fail(OCISBX_ECONFIG, "%s: not a private key (no PEM block)", name);
    size_t ll = strlen(label);
    if (ll < 11 || strcmp(label + ll - 11, "PRIVATE KEY") != 0)
        return ocisbx_fail(OCISBX_ECONFIG, "%s: not a private key (PEM block \"%s\")", name, OCISBX_SHOWN(label));

    size_t blen = len - (size_t)(block - pem);
    int encrypted = strcmp(label, "ENCRYPTED PRIVATE KEY") == 0;
    if (!encrypted) {
        /* Legacy encrypted PKCS#1: a Proc-Type header inside the block. */
        const char *endm = find_bytes(block, blen, "-----END ");
        size_t span = endm ? (size_t)(endm - block) : blen;
        encrypted = find_bytes(block, span, "Proc-Type: 4,ENCRYPTED") != NULL;
    }
    if (encrypted && (!passphrase || !*passphrase))
        return ocisbx_fail(OCISBX_ECONFIG, "%s: the key is encrypted but no passphrase was given (pass_phrase)",
                           name);
    if (blen > INT_MAX)
        return ocisbx_fail(OCISBX_ECONFIG, "%s: too large", name);

    BIO *bio = BIO_new_mem_buf(block, (int)blen);
    if (!bio)
        return ocisbx_fail_nomem();
    /* An unencrypted key never calls the callback: its passphrase is ignored. */
    EVP_PKEY *pkey = PEM_read_bio_PrivateKey(bio, NULL, pass_cb, encrypted ? (void *)(uintptr_t)passphrase : NULL);
    BIO_free(bio);
    ERR_clear_error();
    if (!pkey) {
        if (encrypted)
            return ocisbx_fail(OCISBX_ECONFIG, "%s: wrong passphrase (the key could not be decrypted)", name);
        return ocisbx_fail(OCISBX_ECONFIG, "%s: not a valid private key (PEM \"%s\" could not be decoded)", name,
                           OCISBX_SHOWN(label));
    }
    if (!EVP_PKEY_is_a(pkey, "RSA")) {
        const char *type = EVP_PKEY_get0_type_name(pkey);
        int rc = ocisbx_fail(OCISBX_ECONFIG, "%s: not an RSA key (%s); OCI signs with RSA", name,
                             type ? type : "unknown type");
        EVP_PKEY_free(pkey);
        return rc;
    }
    return key_wrap(pkey, out);
}

int ocisbx_key_load_pem(const char *pem, size_t len, const char *passphrase, ocisbx_key **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_key_load_pem: out is NULL");
    *out = NULL;
    if (!pem)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_key_load_pem: pem is NULL");
    return load_pem_named(pem, len, passphrase, "private key (PEM in memory)", out);
}

int ocisbx_key_load_file(const char *path, const char *passphrase, ocisbx_key **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_key_load_file: out is NULL");
    *out = NULL;
    if (!path || !*path)
        return ocisbx_fail(OCISBX_ECONFIG, "key file: no path given (key_file)");
    /* The PEM text is a secret: wiped after; a FIFO or a device is refused
     * without waiting for a writer. */
    ocisbx_file f;
    int rc = ocisbx_file_read(path, "key file", KEY_FILE_MAX, OCISBX_READ_SECRET | OCISBX_READ_REGULAR | OCISBX_READ_CONFIG, &f);
    if (rc)
        return rc;
    /* As the OCI CLI does: a key others can read is worth a warning, not a failure. */
    if (f.st.st_mode & (S_IRWXG | S_IRWXO))
        ocisbx_log(OCISBX_LOG_WARN,
                   "Permissions on %s are too open (mode %04o, group or others have access): a private key "
                   "should be readable by its owner only (chmod 600)",
                   OCISBX_SHOWN(path), (unsigned)(f.st.st_mode & 07777));
    char *name = ocisbx_asprintf("key file %s", OCISBX_SHOWN(path));
    rc = name ? load_pem_named(f.data, f.len, passphrase, name, out) : ocisbx_fail_nomem();
    free(name);
    ocisbx_file_release(&f);
    return rc;
}

int ocisbx_key_generate(int bits, ocisbx_key **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_key_generate: out is NULL");
    *out = NULL;
    if (bits < 1024 || bits > 16384)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_key_generate: %d bits is outside 1024..16384", bits);
    EVP_PKEY *pkey = EVP_RSA_gen((unsigned int)bits);
    if (!pkey) {
        ERR_clear_error();
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "RSA key generation (%d bits) failed", bits);
    }
    return key_wrap(pkey, out);
}

int ocisbx_key_fingerprint(const ocisbx_key *key, char out[48])
{
    if (!key || !out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_key_fingerprint: NULL argument");
    unsigned char *der = NULL;
    int n = i2d_PUBKEY(key->pkey, &der);
    if (n <= 0) {
        ERR_clear_error();
        return ocisbx_fail(OCISBX_EINVAL, "key fingerprint: cannot encode the public key");
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int ok = EVP_Digest(der, (size_t)n, md, &mdlen, EVP_md5(), NULL);
    OPENSSL_free(der);
    if (!ok || mdlen != 16) {
        ERR_clear_error();
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "key fingerprint: MD5 is not available in OpenSSL");
    }
    ocisbx_hex_colon(md, 16, false, out);
    return 0;
}

int ocisbx_key_public_pem(const ocisbx_key *key, char **out)
{
    if (!key || !out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_key_public_pem: NULL argument");
    *out = NULL;
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio)
        return ocisbx_fail_nomem();
    if (!PEM_write_bio_PUBKEY(bio, key->pkey)) {
        BIO_free(bio);
        ERR_clear_error();
        return ocisbx_fail(OCISBX_EINVAL, "cannot write the public key as PEM");
    }
    char *data = NULL;
    long n = BIO_get_mem_data(bio, &data);
    char *s = n >= 0 ? ocisbx_strndup(data, (size_t)n) : NULL;
    BIO_free(bio);
    if (!s)
        return ocisbx_fail_nomem();
    *out = s;
    return 0;
}

int ocisbx_key_bits(const ocisbx_key *key)
{
    return key ? key->bits : 0;
}

ocisbx_key *ocisbx_key_ref(ocisbx_key *key)
{
    if (key)
        atomic_fetch_add_explicit(&key->refs, 1, memory_order_relaxed);
    return key;
}

void ocisbx_key_free(ocisbx_key *key)
{
    if (!key)
        return;
    if (atomic_fetch_sub_explicit(&key->refs, 1, memory_order_acq_rel) != 1)
        return;
    /* EVP_PKEY_free clears the private key's bignums (BN_clear_free). */
    EVP_PKEY_free(key->pkey);
    EVP_MD_free(key->sha256);
    ocisbx_wipe(key, sizeof *key);
    free(key);
}

/* Standard base64 without line breaks (EVP_EncodeBlock adds none). */
int ocisbx_key_sign_base64(const ocisbx_key *key, const void *data, size_t len, char **out_b64)
{
    if (!out_b64)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_key_sign_base64: out is NULL");
    *out_b64 = NULL;
    if (!key || (!data && len))
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_key_sign_base64: NULL argument");
    unsigned char sig[2048]; /* up to 16384-bit keys */
    size_t siglen = sizeof sig;
    if (key->sig_len > sizeof sig)
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "RSA key of %d bits is too large to sign with", key->bits);

    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx)
        return ocisbx_fail_nomem();
    EVP_PKEY_CTX *pctx = NULL;
    int ok = EVP_DigestSignInit(ctx, &pctx, key->sha256, NULL, key->pkey) == 1 &&
             EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) > 0 &&
             EVP_DigestSign(ctx, sig, &siglen, data, len) == 1;
    EVP_MD_CTX_free(ctx);
    if (!ok) {
        ERR_clear_error();
        return ocisbx_fail(OCISBX_EINVAL, "RSA-SHA256 signing failed");
    }
    char *b64 = malloc(4 * ((siglen + 2) / 3) + 1);
    if (!b64)
        return ocisbx_fail_nomem();
    EVP_EncodeBlock((unsigned char *)b64, sig, (int)siglen);
    *out_b64 = b64;
    return 0;
}
