/* The verifier the test tenancy uses: Authorization parsing (any order,
 * every bad form), rebuilding the signing string, required headers, public
 * keys, and tamper detection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/encoder.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "auth/verify.h"
#include "ocisbx/auth.h"
#include "test_assert.h"

#define VECTOR_KEY OCISBX_SOURCE_DIR "/tests/data/cavage-test-key.pem"
#define VECTOR_FP "73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7"

static void test_parse_any_order(void **state)
{
    (void)state;
    const char *forms[] = {
        "Signature version=\"1\",keyId=\"t/u/f\",algorithm=\"rsa-sha256\",headers=\"date (request-target) host\","
        "signature=\"c2ln\"",
        "Signature signature=\"c2ln\",headers=\"date (request-target) "
        "host\",algorithm=\"rsa-sha256\",keyId=\"t/u/f\","
        "version=\"1\"",
        "Signature  headers=\"date (request-target) host\", keyId=\"t/u/f\",\talgorithm=\"rsa-sha256\" , "
        "signature=\"c2ln\", version=\"1\"",
        "signature keyId=\"t/u/f\",algorithm=\"rsa-sha256\",headers=\"date (request-target) host\","
        "signature=\"c2ln\",version=\"1\",extra=\"ignored\",created=\"123\"",
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        ocisbx_authz a;
        if (ocisbx_authz_parse(forms[i], &a))
            fail_msg("form %zu: %s", i, ocisbx_error_message(ocisbx_error_last()));
        assert_string_equal(a.version, "1");
        assert_string_equal(a.key_id, "t/u/f");
        assert_string_equal(a.algorithm, "rsa-sha256");
        assert_string_equal(a.headers, "date (request-target) host");
        assert_string_equal(a.signature, "c2ln");
        ocisbx_authz_clear(&a);
        assert_null(a.key_id);
    }
    /* version is optional; keyId may hold "ST$<token>" with any characters but '"' */
    ocisbx_authz a;
    assert_int_equal(ocisbx_authz_parse("Signature keyId=\"ST$eyJ.a,b=c\",algorithm=\"rsa-sha256\","
                                        "headers=\"date\",signature=\"c2ln\"",
                                        &a),
                     0);
    assert_null(a.version);
    assert_string_equal(a.key_id, "ST$eyJ.a,b=c");
    ocisbx_authz_clear(&a);
    ocisbx_authz_clear(NULL);
}

static void test_parse_bad_forms(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        int code;
        const char *mention;
    } bad[] = {
        {"", OCISBX_EPARSE, "Signature"},
        {"Bearer abc", OCISBX_EPARSE, "Signature"},
        {"Signature", OCISBX_EPARSE, "Signature"},
        {"Signaturex keyId=\"a\"", OCISBX_EPARSE, "Signature"},
        {"Signature ", OCISBX_EPARSE, "no parameters"},
        {"Signature keyId=\"k\",keyId=\"k\",algorithm=\"rsa-sha256\",headers=\"date\",signature=\"s\"", OCISBX_EPARSE,
         "duplicate parameter \"keyId\""},
        {"Signature keyId=\"k\",algorithm=\"rsa-sha256\",headers=\"date\",signature=\"s\",x=\"1\",x=\"2\"",
         OCISBX_EPARSE, "duplicate parameter \"x\""},
        {"Signature algorithm=\"rsa-sha256\",headers=\"date\",signature=\"s\"", OCISBX_EPARSE,
         "missing parameter \"keyId\""},
        {"Signature keyId=\"k\",headers=\"date\",signature=\"s\"", OCISBX_EPARSE, "missing parameter \"algorithm\""},
        {"Signature keyId=\"k\",algorithm=\"rsa-sha256\",signature=\"s\"", OCISBX_EPARSE,
         "missing parameter \"headers\""},
        {"Signature keyId=\"k\",algorithm=\"rsa-sha256\",headers=\"date\"", OCISBX_EPARSE,
         "missing parameter \"signature\""},
        {"Signature keyId=k,algorithm=\"rsa-sha256\",headers=\"date\",signature=\"s\"", OCISBX_EPARSE, "not quoted"},
        {"Signature keyId=\"k\",algorithm=\"rsa-sha256\",headers=\"date\",signature=\"s", OCISBX_EPARSE,
         "not terminated"},
        {"Signature keyId=\"k\",algorithm=\"rsa-sha256\",headers=\"date\",signature=\"s\",", OCISBX_EPARSE,
         "trailing ','"},
        {"Signature keyId=\"k\" algorithm=\"rsa-sha256\",headers=\"date\",signature=\"s\"", OCISBX_EPARSE,
         "expected ','"},
        {"Signature keyId\"k\",algorithm=\"rsa-sha256\"", OCISBX_EPARSE, "expected '='"},
        {"Signature ,keyId=\"k\"", OCISBX_EPARSE, "expected a parameter name"},
        {"Signature keyId=\"\",algorithm=\"rsa-sha256\",headers=\"date\",signature=\"s\"", OCISBX_EPARSE,
         "empty parameter \"keyId\""},
        {"Signature keyId=\"k\",algorithm=\"hmac-sha256\",headers=\"date\",signature=\"s\"", OCISBX_EUNSUPPORTED,
         "unsupported algorithm"},
        {"Signature version=\"2\",keyId=\"k\",algorithm=\"rsa-sha256\",headers=\"date\",signature=\"s\"",
         OCISBX_EUNSUPPORTED, "unsupported signature version"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ocisbx_authz a;
        int rc = ocisbx_authz_parse(bad[i].value, &a);
        if (rc != bad[i].code)
            fail_msg("case %zu (%s): got %d, want %d", i, bad[i].value, rc, bad[i].code);
        test_assert_msg_has(bad[i].mention);
        assert_null(a.key_id);
        assert_null(a.signature);
    }
    ocisbx_authz a;
    assert_int_equal(ocisbx_authz_parse(NULL, &a), OCISBX_EPARSE);
    /* A secret keyId never ends up in a message. */
    assert_int_equal(ocisbx_authz_parse("Signature keyId=\"ST$secret-token\",algorithm=\"nope\",headers=\"d\","
                                        "signature=\"s\"",
                                        &a),
                     OCISBX_EUNSUPPORTED);
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), "secret-token"));
}

static void test_require_headers(void **state)
{
    (void)state;
    assert_int_equal(ocisbx_authz_require_headers("date (request-target) host", "GET", 0), 0);
    assert_int_equal(ocisbx_authz_require_headers("x-date (request-target) host", "DELETE", 0), 0);
    assert_int_equal(ocisbx_authz_require_headers("(request-target) host", "GET", 0), OCISBX_EAUTH);
    test_assert_msg_has("date");
    assert_int_equal(ocisbx_authz_require_headers("date host", "GET", 0), OCISBX_EAUTH);
    test_assert_msg_has("(request-target)");
    assert_int_equal(ocisbx_authz_require_headers("date (request-target)", "HEAD", 0), OCISBX_EAUTH);
    test_assert_msg_has("host");
    const char *full = "date (request-target) host content-length content-type x-content-sha256";
    assert_int_equal(ocisbx_authz_require_headers(full, "POST", 0), 0);
    assert_int_equal(ocisbx_authz_require_headers("date (request-target) host", "PUT", 0), OCISBX_EAUTH);
    test_assert_msg_has("content-length");
    assert_int_equal(ocisbx_authz_require_headers("date (request-target) host", "PUT", 1), 0);
    assert_int_equal(ocisbx_authz_require_headers("date (request-target) host content-length content-type", "PATCH",
                                                  1),
                     OCISBX_EAUTH);
    test_assert_msg_has("x-content-sha256");
}

struct req {
    const char *names[8];
    const char *values[8];
};

static const char *lookup(const char *name, void *ud)
{
    struct req *r = ud;
    for (int i = 0; i < 8 && r->names[i]; i++) {
        if (strcmp(r->names[i], name) == 0)
            return r->values[i];
    }
    return NULL;
}

static void test_signing_string(void **state)
{
    (void)state;
    struct req r = {{"date", "host", "content-length", "content-type", "x-content-sha256", NULL},
                    {"Thu, 05 Jan 2014 21:31:40 GMT", "h:8443", "3", "application/json", "abc=", NULL}};
    char *s = NULL;
    assert_int_equal(ocisbx_verify_signing_string("date (request-target) host", "GET", "/a?b=%20", lookup, &r, &s),
                     0);
    assert_string_equal(s, "date: Thu, 05 Jan 2014 21:31:40 GMT\n(request-target): get /a?b=%20\nhost: h:8443");
    free(s);
    /* order follows the list, names are lowercased */
    assert_int_equal(ocisbx_verify_signing_string("Host x-content-sha256  Content-Length (request-target)", "Post",
                                                  "/", lookup, &r, &s),
                     0);
    assert_string_equal(s, "host: h:8443\nx-content-sha256: abc=\ncontent-length: 3\n(request-target): post /");
    free(s);
    /* a signed header the request lacks */
    assert_int_equal(ocisbx_verify_signing_string("date opc-obo-token", "GET", "/", lookup, &r, &s), OCISBX_EAUTH);
    test_assert_msg_has("opc-obo-token");
    assert_null(s);
    assert_int_equal(ocisbx_verify_signing_string("", "GET", "/", lookup, &r, &s), OCISBX_EPARSE);
    assert_int_equal(ocisbx_verify_signing_string("   ", "GET", "/", lookup, &r, &s), OCISBX_EPARSE);
    char longname[300];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    assert_int_equal(ocisbx_verify_signing_string(longname, "GET", "/", lookup, &r, &s), OCISBX_EPARSE);
    assert_int_equal(ocisbx_verify_signing_string("date", "GET", "/", NULL, &r, &s), OCISBX_EINVAL);
}

static char *pem_of_public(EVP_PKEY *p, int pkcs1)
{
    BIO *bio = BIO_new(BIO_s_mem());
    int ok;
    if (pkcs1) {
        /* "BEGIN RSA PUBLIC KEY" through the encoder (no deprecated RSA API). */
        OSSL_ENCODER_CTX *e = OSSL_ENCODER_CTX_new_for_pkey(p, EVP_PKEY_PUBLIC_KEY, "PEM", "type-specific", NULL);
        ok = e && OSSL_ENCODER_to_bio(e, bio);
        OSSL_ENCODER_CTX_free(e);
    } else {
        ok = PEM_write_bio_PUBKEY(bio, p);
    }
    assert_true(ok);
    char *data = NULL;
    long n = BIO_get_mem_data(bio, &data);
    char *s = strndup(data, (size_t)n);
    BIO_free(bio);
    return s;
}

static void test_pubkeys(void **state)
{
    (void)state;
    ocisbx_key *k = NULL;
    assert_int_equal(ocisbx_key_load_file(VECTOR_KEY, NULL, &k), 0);
    char *pem = NULL;
    assert_int_equal(ocisbx_key_public_pem(k, &pem), 0);
    ocisbx_pubkey *pk = NULL;
    assert_int_equal(ocisbx_pubkey_load_pem(pem, strlen(pem), &pk), 0);
    char fp[48];
    assert_int_equal(ocisbx_pubkey_fingerprint(pk, fp), 0);
    assert_string_equal(fp, VECTOR_FP);
    ocisbx_pubkey_free(pk);

    /* PKCS#1 "RSA PUBLIC KEY" and a file */
    BIO *bio = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *p = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    BIO_free(bio);
    char *pkcs1 = pem_of_public(p, 1);
    assert_non_null(strstr(pkcs1, "BEGIN RSA PUBLIC KEY"));
    assert_int_equal(ocisbx_pubkey_load_pem(pkcs1, strlen(pkcs1), &pk), 0);
    assert_int_equal(ocisbx_pubkey_fingerprint(pk, fp), 0);
    assert_string_equal(fp, VECTOR_FP);
    ocisbx_pubkey_free(pk);
    free(pkcs1);
    EVP_PKEY_free(p);

    char path[512];
    snprintf(path, sizeof path, "%s/test_verify_pub.pem", OCISBX_BINARY_DIR);
    remove(path); /* a FIFO left by an interrupted run would block fopen */
    FILE *f = fopen(path, "w");
    fputs(pem, f);
    fclose(f);
    assert_int_equal(ocisbx_pubkey_load_file(path, &pk), 0);
    ocisbx_pubkey_free(pk);
    remove(path);
    assert_int_equal(ocisbx_pubkey_load_file(path, &pk), OCISBX_EIO);
    test_assert_msg_has(path);
    /* a FIFO is refused at once instead of blocking in open(2); the alarm
     * kills the test instead of hanging it */
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(10);
    assert_int_equal(ocisbx_pubkey_load_file(path, &pk), OCISBX_EIO);
    alarm(0);
    test_assert_msg_has("not a regular file");
    remove(path);

    /* not RSA, not a key */
    EVP_PKEY *ec = EVP_EC_gen("P-256");
    char *ecpem = pem_of_public(ec, 0);
    assert_int_equal(ocisbx_pubkey_load_pem(ecpem, strlen(ecpem), &pk), OCISBX_EPARSE);
    assert_null(pk);
    free(ecpem);
    EVP_PKEY_free(ec);
    assert_int_equal(ocisbx_pubkey_load_pem("hello", 5, &pk), OCISBX_EPARSE);
    assert_int_equal(ocisbx_pubkey_load_pem("", 0, &pk), OCISBX_EPARSE);
    ocisbx_pubkey_free(NULL);
    ocisbx_free(pem);
    ocisbx_key_free(k);
}

static void test_tamper_detection(void **state)
{
    (void)state;
    ocisbx_key *k = NULL, *other = NULL;
    assert_int_equal(ocisbx_key_generate(2048, &k), 0);
    assert_int_equal(ocisbx_key_generate(2048, &other), 0);
    char *pem = NULL, *other_pem = NULL;
    assert_int_equal(ocisbx_key_public_pem(k, &pem), 0);
    assert_int_equal(ocisbx_key_public_pem(other, &other_pem), 0);
    const char *ss = "date: Thu, 05 Jan 2014 21:31:40 GMT\n(request-target): get /x\nhost: h";
    char *sig = NULL;
    assert_int_equal(ocisbx_key_sign_base64(k, ss, strlen(ss), &sig), 0);

    assert_int_equal(ocisbx_verify_signature_pem(pem, strlen(pem), ss, strlen(ss), sig), 0);
    /* the wrong key */
    assert_int_equal(ocisbx_verify_signature_pem(other_pem, strlen(other_pem), ss, strlen(ss), sig),
                     OCISBX_EINTEGRITY);
    /* one changed byte in the string */
    char *ss2 = strdup(ss);
    ss2[strlen(ss2) - 1] = 'H';
    assert_int_equal(ocisbx_verify_signature_pem(pem, strlen(pem), ss2, strlen(ss2), sig), OCISBX_EINTEGRITY);
    /* one dropped byte */
    assert_int_equal(ocisbx_verify_signature_pem(pem, strlen(pem), ss, strlen(ss) - 1, sig), OCISBX_EINTEGRITY);
    /* a changed signature character (still valid base64) */
    char *sig2 = strdup(sig);
    sig2[10] = sig2[10] == 'A' ? 'B' : 'A';
    assert_int_equal(ocisbx_verify_signature_pem(pem, strlen(pem), ss, strlen(ss), sig2), OCISBX_EINTEGRITY);
    test_assert_msg_has("does not verify");
    /* a truncated signature */
    sig2[0] = 0;
    strncat(sig2, sig, 8);
    assert_int_equal(ocisbx_verify_signature_pem(pem, strlen(pem), ss, strlen(ss), sig2), OCISBX_EINTEGRITY);
    /* not base64 */
    assert_int_equal(ocisbx_verify_signature_pem(pem, strlen(pem), ss, strlen(ss), "a b c d"), OCISBX_EPARSE);
    assert_int_equal(ocisbx_verify_signature_pem(pem, strlen(pem), ss, strlen(ss), "abc"), OCISBX_EPARSE);
    assert_int_equal(ocisbx_verify_signature_pem(pem, strlen(pem), ss, strlen(ss), ""), OCISBX_EPARSE);
    assert_int_equal(ocisbx_verify_signature_pem(pem, strlen(pem), ss, strlen(ss), "ab=c"), OCISBX_EPARSE);
    /* a bad key */
    assert_int_equal(ocisbx_verify_signature_pem("junk", 4, ss, strlen(ss), sig), OCISBX_EPARSE);
    free(ss2);
    free(sig2);
    ocisbx_free(sig);
    ocisbx_free(pem);
    ocisbx_free(other_pem);
    ocisbx_key_free(k);
    ocisbx_key_free(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_any_order), cmocka_unit_test(test_parse_bad_forms),
        cmocka_unit_test(test_require_headers), cmocka_unit_test(test_signing_string),
        cmocka_unit_test(test_pubkeys),         cmocka_unit_test(test_tamper_detection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
