/* The principal providers' shared helpers (src/auth/federation.c): JWT time
 * claims on good and malformed tokens, the refresh time, PEM bodies,
 * certificate identity and fingerprint, the default federation URL; and
 * that instance metadata requests never go through a proxy while
 * federation requests do. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "auth/federation.h"
#include "fake_imds.h"
#include "ocisbx/auth.h"
#include "ocisbx/util.h"

#define TENANCY "ocid1.tenancy.oc1..aaaaaaaatesttenancy"

/* ---- helpers ------------------------------------------------------------------ */

/* base64url without padding, written independently of the library. */
static char *b64url(const char *text, size_t len)
{
    char *s = calloc(1, len * 2 + 8);
    assert_non_null(s);
    EVP_EncodeBlock((unsigned char *)s, (const unsigned char *)text, (int)len);
    for (char *p = s; *p; p++) {
        if (*p == '+')
            *p = '-';
        else if (*p == '/')
            *p = '_';
        else if (*p == '=')
            *p = '\0';
    }
    return s;
}

/* "<header>.<payload>.sig" with both parts base64url-encoded. */
static char *make_jwt(const char *payload)
{
    char *h = b64url("{\"alg\":\"RS256\",\"typ\":\"JWT\"}", 27);
    char *p = b64url(payload, strlen(payload));
    size_t n = strlen(h) + strlen(p) + 16;
    char *jwt = malloc(n);
    assert_non_null(jwt);
    snprintf(jwt, n, "%s.%s.c2lnbmF0dXJl", h, p);
    free(h);
    free(p);
    return jwt;
}

static int claim(const char *jwt, const char *name, int64_t *out)
{
    *out = -12345;
    return ocisbx_jwt_claim_time(jwt, name, out);
}

static int payload_claim(const char *payload, const char *name, int64_t *out)
{
    char *jwt = make_jwt(payload);
    int rc = claim(jwt, name, out);
    free(jwt);
    return rc;
}

/* Outputs start as this, to check that failures leave them alone. */
static char untouched[] = "untouched";

static const char *last_message(void)
{
    return ocisbx_error_message(ocisbx_error_last());
}

/* A self-signed certificate (EC P-256, fast) whose subject is CN=test and
 * one OU per entry of ous; PEM in a malloc'd string. */
static char *make_cert(const char *const *ous, size_t n_ous)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = X509_new();
    assert_non_null(key);
    assert_non_null(cert);
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 7);
    X509_gmtime_adj(X509_getm_notBefore(cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME *name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"test", -1, -1, 0);
    for (size_t i = 0; i < n_ous; i++)
        X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_UTF8, (const unsigned char *)ous[i], -1, -1, 0);
    X509_set_issuer_name(cert, name);
    assert_true(X509_sign(cert, key, EVP_sha256()) > 0);
    BIO *bio = BIO_new(BIO_s_mem());
    assert_true(PEM_write_bio_X509(bio, cert));
    char *data = NULL;
    long len = BIO_get_mem_data(bio, &data);
    char *pem = calloc(1, (size_t)len + 1);
    assert_non_null(pem);
    memcpy(pem, data, (size_t)len);
    BIO_free(bio);
    X509_free(cert);
    EVP_PKEY_free(key);
    return pem;
}

/* The SHA-1 fingerprint as OpenSSL's command line prints it (AA:BB:...). */
static void expected_fingerprint(const char *pem, char out[OCISBX_SHA1_FP_LEN + 1])
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    X509 *cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    assert_non_null(cert);
    unsigned char md[20];
    unsigned int n = 0;
    assert_true(X509_digest(cert, EVP_sha1(), md, &n));
    assert_int_equal(n, 20);
    char *p = out;
    for (unsigned i = 0; i < n; i++)
        p += sprintf(p, i ? ":%02X" : "%02X", md[i]);
    X509_free(cert);
    BIO_free(bio);
}

/* ---- ocisbx_jwt_claim_time ---------------------------------------------------- */

static void test_claim_good(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(payload_claim("{\"exp\":1700003600,\"iat\":1700000000}", "exp", &v), 0);
    assert_int_equal(v, 1700003600);
    assert_int_equal(payload_claim("{\"exp\":1700003600,\"iat\":1700000000}", "iat", &v), 0);
    assert_int_equal(v, 1700000000);
    /* payload lengths of every residue mod 3, so the base64url part has
     * no padding of 0, 1 and 2 characters */
    assert_int_equal(payload_claim("{\"exp\":12}", "exp", &v), 0);
    assert_int_equal(v, 12);
    assert_int_equal(payload_claim("{\"exp\":123}", "exp", &v), 0);
    assert_int_equal(v, 123);
    assert_int_equal(payload_claim("{\"exp\":1234}", "exp", &v), 0);
    assert_int_equal(v, 1234);
    /* spaces, nested objects, fractions (truncated), the upper bound */
    assert_int_equal(payload_claim(" { \"sub\" : {\"exp\":\"x\"}, \"exp\" : 99.9 } ", "exp", &v), 0);
    assert_int_equal(v, 99);
    assert_int_equal(payload_claim("{\"exp\":1e15}", "exp", &v), 0);
    assert_int_equal(v, 1000000000000000LL);
    assert_int_equal(payload_claim("{\"exp\":0}", "exp", &v), 0);
    assert_int_equal(v, 0);
    /* the header and signature parts are not looked at: empty is fine */
    char *p = b64url("{\"exp\":5}", 9);
    char jwt[64];
    snprintf(jwt, sizeof jwt, ".%s.", p);
    assert_int_equal(claim(jwt, "exp", &v), 0);
    assert_int_equal(v, 5);
    free(p);
}

static void test_claim_absent(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(payload_claim("{\"iat\":1}", "exp", &v), OCISBX_ENOTFOUND);
    assert_non_null(strstr(last_message(), "\"exp\""));
    assert_int_equal(v, -12345); /* untouched */
    assert_int_equal(payload_claim("{}", "exp", &v), OCISBX_ENOTFOUND);
    /* claim names are case-sensitive */
    assert_int_equal(payload_claim("{\"EXP\":1}", "exp", &v), OCISBX_ENOTFOUND);
}

static void test_claim_wrong_parts(void **state)
{
    (void)state;
    char *p = b64url("{\"exp\":5}", 9);
    char jwt[128];
    int64_t v = 0;
    /* what comes before and after the payload */
    const char *forms[][2] = {{"", ""}, {"h.", ""}, {"h.", ".s.x"}, {"h.", ".s."}, {"..", ""}, {"h..", ""}};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        snprintf(jwt, sizeof jwt, "%s%s%s", forms[i][0], p, forms[i][1]);
        assert_int_equal(claim(jwt, "exp", &v), OCISBX_EPARSE);
        assert_non_null(strstr(last_message(), "not a JWT"));
        assert_int_equal(v, -12345);
    }
    assert_int_equal(claim("", "exp", &v), OCISBX_EPARSE);
    assert_int_equal(claim("..", "exp", &v), OCISBX_EPARSE); /* empty payload is not an object */
    free(p);
}

static void test_claim_bad_base64url(void **state)
{
    (void)state;
    int64_t v = 0;
    /* eyJleHAiOjV9 is {"exp":5}; each form breaks it differently */
    assert_int_equal(claim("h.eyJleHAiOjV9.s", "exp", &v), 0);
    assert_int_equal(v, 5);
    const char *bad[] = {
        "h.eyJleHAiOjV9=.s", /* padding is not base64url */
        "h.eyJleHAiOjV9==.s",
        "h.eyJle+HAiOjV9.s", /* standard alphabet */
        "h.eyJle/HAiOjV9.s",
        "h.eyJleHAi OjV9.s",  /* space */
        "h.eyJleHAi\nOjV9.s", /* line break */
        "h.eyJleHAiO!jV9.s",  /* punctuation */
        "h.eyJleHAiOjV9a.s",  /* length 4k+1 cannot be base64 */
        "h.e.s",
        "h.\xc3\xa9yJleHAiOjV9.s", /* non-ASCII */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = -12345;
        assert_int_equal(ocisbx_jwt_claim_time(bad[i], "exp", &v), OCISBX_EPARSE);
        assert_int_equal(v, -12345);
    }
    assert_int_equal(claim("h.eyJleHAiOjV9=.s", "exp", &v), OCISBX_EPARSE);
    assert_non_null(strstr(last_message(), "base64url"));
}

static void test_claim_not_json_object(void **state)
{
    (void)state;
    int64_t v = 0;
    const char *payloads[] = {"hello",      "[{\"exp\":5}]", "\"exp\"",   "5", "null",
                              "{\"exp\":5", "{\"exp\" 5}",   "{'exp':5}", ""};
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++) {
        assert_int_equal(payload_claim(payloads[i], "exp", &v), OCISBX_EPARSE);
        assert_non_null(strstr(last_message(), "JSON object"));
        assert_int_equal(v, -12345);
    }
    /* binary payload with a NUL inside */
    char raw[] = {'{', '"', 'e', 'x', 'p', '"', ':', 0, '}'};
    char *p = b64url(raw, sizeof raw);
    char jwt[64];
    snprintf(jwt, sizeof jwt, "h.%s.s", p);
    assert_int_equal(claim(jwt, "exp", &v), OCISBX_EPARSE);
    free(p);
}

static void test_claim_wrong_type(void **state)
{
    (void)state;
    int64_t v = 0;
    const char *payloads[] = {"{\"exp\":\"1700000000\"}", "{\"exp\":true}", "{\"exp\":false}",
                              "{\"exp\":null}",           "{\"exp\":{}}",   "{\"exp\":[1700000000]}"};
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++) {
        assert_int_equal(payload_claim(payloads[i], "exp", &v), OCISBX_EPARSE);
        assert_non_null(strstr(last_message(), "\"exp\" is not a time"));
        assert_int_equal(v, -12345);
    }
}

static void test_claim_huge_numbers(void **state)
{
    (void)state;
    int64_t v = 0;
    const char *payloads[] = {
        "{\"exp\":1000000000000001}",     /* just above the bound */
        "{\"exp\":9223372036854775807}",  /* INT64_MAX */
        "{\"exp\":9223372036854775808}",  /* beyond int64 */
        "{\"exp\":18446744073709551616}", /* beyond uint64 */
        "{\"exp\":1e308}",
        "{\"exp\":1e400}", /* overflows a double */
        "{\"exp\":-1}",
        "{\"exp\":-1e400}",
        "{\"exp\":-9223372036854775809}",
    };
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++) {
        assert_int_equal(payload_claim(payloads[i], "exp", &v), OCISBX_EPARSE);
        assert_int_equal(v, -12345);
    }
    /* very long digit strings */
    char big[700];
    memset(big, 0, sizeof big);
    strcpy(big, "{\"exp\":");
    memset(big + 7, '9', 600);
    strcat(big, "}");
    assert_int_equal(payload_claim(big, "exp", &v), OCISBX_EPARSE);
    assert_int_equal(v, -12345);
    assert_int_equal(payload_claim("{\"exp\":1.0e-300}", "exp", &v), 0);
    assert_int_equal(v, 0);
}

static void test_claim_message_has_no_token(void **state)
{
    (void)state;
    int64_t v = 0;
    /* every failure: the message never repeats any part of the token */
    char *p = b64url("{\"exp\":\"SECRETVALUE\",\"sub\":\"SECRETSUB\"}", 38);
    char jwt[256];
    snprintf(jwt, sizeof jwt, "SECRETHEADER.%s.SECRETSIG", p);
    assert_int_equal(claim(jwt, "exp", &v), OCISBX_EPARSE);
    assert_null(strstr(last_message(), "SECRET"));
    assert_null(strstr(last_message(), p));
    assert_int_equal(claim("SECRETHEADER.SECRET!.SECRETSIG", "exp", &v), OCISBX_EPARSE);
    assert_null(strstr(last_message(), "SECRET"));
    assert_int_equal(claim("SECRETONLY", "exp", &v), OCISBX_EPARSE);
    assert_null(strstr(last_message(), "SECRET"));
    free(p);
}

static void test_claim_null_arguments(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(ocisbx_jwt_claim_time(NULL, "exp", &v), OCISBX_EINVAL);
    assert_int_equal(ocisbx_jwt_claim_time("a.e30.c", NULL, &v), OCISBX_EINVAL);
    assert_int_equal(ocisbx_jwt_claim_time("a.e30.c", "exp", NULL), OCISBX_EINVAL);
}

/* ---- ocisbx_token_refresh_at -------------------------------------------------- */

static int64_t refresh_at(const char *payload, int64_t obtained, int margin, int64_t *expires)
{
    char *jwt = payload ? make_jwt(payload) : strdup("not a token");
    *expires = -1;
    int64_t at = ocisbx_token_refresh_at(jwt, obtained, margin, expires);
    free(jwt);
    return at;
}

static void test_refresh_times(void **state)
{
    (void)state;
    int64_t exp = 0;
    /* one hour token: margin before exp */
    assert_int_equal(refresh_at("{\"exp\":1003600,\"iat\":1000000}", 1000000, 300, &exp), 1003300);
    assert_int_equal(exp, 1003600);
    /* a short token: not before half its lifetime */
    assert_int_equal(refresh_at("{\"exp\":1000400,\"iat\":1000000}", 1000000, 300, &exp), 1000200);
    assert_int_equal(exp, 1000400);
    /* margin 0: at exp */
    assert_int_equal(refresh_at("{\"exp\":1003600,\"iat\":1000000}", 1000000, 0, &exp), 1003600);
    /* no iat: the half is counted from when it was obtained */
    assert_int_equal(refresh_at("{\"exp\":1000400}", 1000100, 300, &exp), 1000250);
    /* an iat after exp is ignored the same way */
    assert_int_equal(refresh_at("{\"exp\":1000400,\"iat\":2000000}", 1000100, 300, &exp), 1000250);
    /* no exp, or exp of the wrong type: one hour from obtained */
    assert_int_equal(refresh_at("{\"iat\":1000000}", 1000000, 300, &exp), 1003300);
    assert_int_equal(exp, 1003600);
    assert_int_equal(refresh_at("{\"exp\":\"soon\"}", 1000000, 300, &exp), 1003300);
    assert_int_equal(exp, 1003600);
    /* not a JWT at all: the same, and no error is left behind */
    assert_int_equal(refresh_at(NULL, 1000000, 300, &exp), 1003300);
    assert_int_equal(exp, 1003600);
    assert_int_equal(ocisbx_error_code(ocisbx_error_last()), OCISBX_OK);
    /* already expired: a time in the past, so the caller refreshes now */
    assert_true(refresh_at("{\"exp\":500,\"iat\":100}", 1000000, 300, &exp) < 1000000);
    assert_int_equal(exp, 500);
    /* the largest exp accepted does not overflow */
    assert_int_equal(refresh_at("{\"exp\":1e15,\"iat\":0}", 0, 300, &exp), 1000000000000000LL - 300);
    /* expires may be NULL */
    char *jwt = make_jwt("{\"exp\":1003600,\"iat\":1000000}");
    assert_int_equal(ocisbx_token_refresh_at(jwt, 1000000, 300, NULL), 1003300);
    free(jwt);
}

/* ---- ocisbx_pem_body ------------------------------------------------------------ */

static void check_body(const char *pem, const char *want)
{
    char *body = NULL;
    int rc = ocisbx_pem_body(pem, strlen(pem), &body);
    if (rc)
        print_message("%s\n", last_message());
    assert_int_equal(rc, 0);
    assert_string_equal(body, want);
    ocisbx_free(body);
}

static void check_body_fails(const char *pem, size_t len, const char *in_message)
{
    char *body = untouched;
    assert_int_equal(ocisbx_pem_body(pem, len, &body), OCISBX_EPARSE);
    assert_string_equal(body, "untouched");
    if (in_message)
        assert_non_null(strstr(last_message(), in_message));
}

static void test_pem_body_good(void **state)
{
    (void)state;
    check_body("-----BEGIN X-----\nQUJD\nREVG\n-----END X-----\n", "QUJDREVG");
    /* CRLF, trailing blanks, blank lines, no final line break */
    check_body("-----BEGIN X-----\r\nQUJD \t\r\n\r\nREVG==\r\n-----END X-----", "QUJDREVG==");
    /* text before the block and a second block after it are not part of it */
    check_body("Bag Attributes\nfoo: bar\n-----BEGIN X-----\nQUJD\n-----END X-----\n"
               "-----BEGIN Y-----\nWFla\n-----END Y-----\n",
               "QUJD");

    /* a real certificate: the body decodes to the DER OpenSSL reads */
    char *pem = fake_imds_self_signed_pem("opc-tenant:" TENANCY);
    assert_non_null(pem);
    char *body = NULL;
    assert_int_equal(ocisbx_pem_body(pem, strlen(pem), &body), 0);
    assert_null(strchr(body, '\n'));
    assert_null(strchr(body, '-'));
    unsigned char *der = NULL;
    size_t der_len = 0;
    assert_int_equal(ocisbx_base64_decode(body, strlen(body), &der, &der_len), 0);
    const unsigned char *p = der;
    X509 *from_body = d2i_X509(NULL, &p, (long)der_len);
    assert_non_null(from_body);
    BIO *bio = BIO_new_mem_buf(pem, -1);
    X509 *from_pem = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    assert_int_equal(X509_cmp(from_body, from_pem), 0);
    X509_free(from_body);
    X509_free(from_pem);
    BIO_free(bio);
    ocisbx_free(der);
    ocisbx_free(body);
    free(pem);
}

static void test_pem_body_bad(void **state)
{
    (void)state;
    /* no markers at all: not a PEM block (e.g. an error page answered with 200) */
    const char *plain = "QUJD\nREVG\n";
    check_body_fails(plain, strlen(plain), "BEGIN");
    const char *html = "<html><body>Service Unavailable</body></html>\n";
    check_body_fails(html, strlen(html), "BEGIN");
    /* one marker only */
    const char *no_end = "-----BEGIN X-----\nQUJD\n";
    check_body_fails(no_end, strlen(no_end), "END");
    const char *no_begin = "QUJD\n-----END X-----\n";
    check_body_fails(no_begin, strlen(no_begin), "BEGIN");
    /* `len` is honoured: the END line beyond it does not count */
    const char *full = "-----BEGIN X-----\nQUJD\n-----END X-----\n";
    check_body_fails(full, 22, "END");
    /* empty input, empty body */
    check_body_fails("", 0, "BEGIN");
    const char *empty = "-----BEGIN X-----\n\n-----END X-----\n";
    check_body_fails(empty, strlen(empty), "no body");
    /* RFC 1421 headers (an encrypted key) and other non-base64 lines */
    const char *headers = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nQUJD\n"
                          "-----END RSA PRIVATE KEY-----\n";
    check_body_fails(headers, strlen(headers), "line 2");
    const char *junk = "-----BEGIN X-----\nQU JD\n-----END X-----\n";
    check_body_fails(junk, strlen(junk), "not base64");
    assert_int_equal(ocisbx_pem_body(NULL, 0, (char *[]){NULL}), OCISBX_EINVAL);
}

/* ---- ocisbx_cert_identity --------------------------------------------------------- */

static void test_cert_identity_good(void **state)
{
    (void)state;
    const char *ous[] = {"opc-certtype:instance", "opc-compartment:ocid1.compartment.oc1..c", ("opc-tenant:" TENANCY),
                         "opc-identity:ocid1.other"};
    char *pem = make_cert(ous, 4);
    char want[OCISBX_SHA1_FP_LEN + 1], fp[OCISBX_SHA1_FP_LEN + 1];
    expected_fingerprint(pem, want);
    assert_int_equal(strlen(want), OCISBX_SHA1_FP_LEN);
    char *tenancy = NULL;
    memset(fp, 'x', sizeof fp);
    assert_int_equal(ocisbx_cert_identity(pem, strlen(pem), "test cert", &tenancy, fp), 0);
    assert_string_equal(tenancy, TENANCY);
    assert_string_equal(fp, want);
    free(tenancy);
    free(pem);

    /* opc-tenant wins over opc-identity whatever their order */
    const char *reversed[] = {"opc-identity:ocid1.other", "opc-tenant:" TENANCY};
    pem = make_cert(reversed, 2);
    assert_int_equal(ocisbx_cert_identity(pem, strlen(pem), "test cert", &tenancy, fp), 0);
    assert_string_equal(tenancy, TENANCY);
    free(tenancy);
    free(pem);

    /* opc-identity when there is no opc-tenant */
    const char *identity[] = {"opc-identity:ocid1.tenancy.oc1..identity"};
    pem = make_cert(identity, 1);
    assert_int_equal(ocisbx_cert_identity(pem, strlen(pem), "test cert", &tenancy, fp), 0);
    assert_string_equal(tenancy, "ocid1.tenancy.oc1..identity");
    free(tenancy);
    free(pem);

    /* the fake's leaf certificate: the fingerprint its federation expects */
    fake_imds *f = NULL;
    assert_int_equal(fake_imds_start(TENANCY, "phx", &f), 0);
    pem = fake_imds_leaf_pem(f);
    assert_non_null(pem);
    assert_int_equal(ocisbx_cert_identity(pem, strlen(pem), "leaf", &tenancy, fp), 0);
    assert_string_equal(tenancy, TENANCY);
    assert_string_equal(fp, fake_imds_fingerprint(f));
    free(tenancy);
    free(pem);
    fake_imds_stop(f);
}

static void check_identity_fails(const char *pem, const char *in_message)
{
    char *tenancy = untouched;
    char fp[OCISBX_SHA1_FP_LEN + 1];
    assert_int_equal(ocisbx_cert_identity(pem, strlen(pem), "metadata cert.pem", &tenancy, fp), OCISBX_EPARSE);
    assert_string_equal(tenancy, "untouched");
    assert_non_null(strstr(last_message(), "metadata cert.pem"));
    assert_non_null(strstr(last_message(), in_message));
}

static void test_cert_identity_bad(void **state)
{
    (void)state;
    /* no opc-tenant (nor opc-identity) */
    const char *other[] = {"opc-certtype:instance", "opc-compartment:ocid1.compartment.oc1..c"};
    char *pem = make_cert(other, 2);
    check_identity_fails(pem, "opc-tenant");
    free(pem);
    pem = make_cert(NULL, 0);
    check_identity_fails(pem, "opc-tenant");
    free(pem);
    /* the prefix with no value, or not at the start, does not count */
    const char *empty[] = {"opc-tenant:", "x-opc-tenant:ocid1.tenancy.oc1..x", "OPC-TENANT:ocid1.t"};
    pem = make_cert(empty, 3);
    check_identity_fails(pem, "opc-tenant");
    free(pem);
    /* not a certificate */
    check_identity_fails("", "not a PEM X.509 certificate");
    check_identity_fails("hello", "not a PEM X.509 certificate");
    check_identity_fails("-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n",
                         "not a PEM X.509 certificate");
    EVP_PKEY *key = EVP_EC_gen("P-256");
    BIO *bio = BIO_new(BIO_s_mem());
    assert_true(PEM_write_bio_PUBKEY(bio, key));
    char *data = NULL;
    long len = BIO_get_mem_data(bio, &data);
    char *pub = strndup(data, (size_t)len);
    check_identity_fails(pub, "not a PEM X.509 certificate");
    free(pub);
    BIO_free(bio);
    EVP_PKEY_free(key);
}

/* ---- ocisbx_federation_default_url ------------------------------------------------- */

static void check_url(const char *region, const char *want)
{
    char *url = NULL;
    assert_int_equal(ocisbx_federation_default_url(region, &url), 0);
    assert_string_equal(url, want);
    ocisbx_free(url);
}

static void test_default_url(void **state)
{
    (void)state;
    check_url("phx", "https://auth.us-phoenix-1.oraclecloud.com");
    check_url("PHX", "https://auth.us-phoenix-1.oraclecloud.com");
    check_url("us-ashburn-1", "https://auth.us-ashburn-1.oraclecloud.com");
    check_url("uk-gov-london-1", "https://auth.uk-gov-london-1.oraclegovcloud.uk");
    check_url("nja", "https://auth.ap-chiyoda-1.oraclecloud8.com");
    /* a region of the right form not in the table: the commercial realm */
    check_url("xx-newregion-9", "https://auth.xx-newregion-9.oraclecloud.com");
    char *url = untouched;
    assert_int_equal(ocisbx_federation_default_url("", &url), OCISBX_ECONFIG);
    assert_int_equal(ocisbx_federation_default_url(NULL, &url), OCISBX_ECONFIG);
    assert_int_equal(ocisbx_federation_default_url("not a region", &url), OCISBX_ECONFIG);
    assert_non_null(strstr(last_message(), "not a region"));
    assert_string_equal(url, "untouched");
}

/* ---- proxies: metadata never, federation as the environment says ------------------- */

/* A loopback port nothing listens on: a proxy there refuses every connection. */
static int closed_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &n), 0);
    close(s);
    return ntohs(a.sin_port);
}

static ocisbx_instance_principal_options *options_for(const fake_imds *f)
{
    ocisbx_instance_principal_options *o = NULL;
    assert_int_equal(ocisbx_instance_principal_options_new(&o), 0);
    assert_int_equal(ocisbx_instance_principal_options_set_metadata_url(o, fake_imds_metadata_url(f)), 0);
    assert_int_equal(ocisbx_instance_principal_options_set_federation_url(o, fake_imds_federation_url(f)), 0);
    return o;
}

static void test_metadata_bypasses_proxy(void **state)
{
    (void)state;
    fake_imds *f = NULL;
    assert_int_equal(fake_imds_start(TENANCY, "phx", &f), 0);
    ocisbx_instance_principal_options *o = options_for(f);
    char proxy[64];
    snprintf(proxy, sizeof proxy, "http://127.0.0.1:%d", closed_port());
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    setenv("http_proxy", proxy, 1);
    setenv("all_proxy", proxy, 1);

    /* Metadata (region, cert, key, intermediate) is reached directly; the
     * federation request goes to the dead proxy and never arrives. */
    ocisbx_credentials *c = NULL;
    int rc = ocisbx_credentials_instance_principal(o, &c);
    const char *msg = last_message();
    print_message("with a dead proxy: %s\n", msg);
    assert_int_equal(rc, OCISBX_ETRANSPORT);
    assert_null(c);
    assert_non_null(strstr(msg, "federation POST"));
    assert_null(strstr(msg, "metadata"));
    assert_int_equal(fake_imds_federation_requests(f), 0);
    assert_int_equal(fake_imds_refused(f), 0);

    /* Without the proxy the same set-up works: the failure was the proxy. */
    unsetenv("http_proxy");
    unsetenv("all_proxy");
    rc = ocisbx_credentials_instance_principal(o, &c);
    if (rc)
        print_message("%s\n", last_message());
    assert_int_equal(rc, 0);
    assert_int_equal(fake_imds_federation_requests(f), 1);
    ocisbx_credentials_free(c);
    ocisbx_instance_principal_options_free(o);
    fake_imds_stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claim_good),
        cmocka_unit_test(test_claim_absent),
        cmocka_unit_test(test_claim_wrong_parts),
        cmocka_unit_test(test_claim_bad_base64url),
        cmocka_unit_test(test_claim_not_json_object),
        cmocka_unit_test(test_claim_wrong_type),
        cmocka_unit_test(test_claim_huge_numbers),
        cmocka_unit_test(test_claim_message_has_no_token),
        cmocka_unit_test(test_claim_null_arguments),
        cmocka_unit_test(test_refresh_times),
        cmocka_unit_test(test_pem_body_good),
        cmocka_unit_test(test_pem_body_bad),
        cmocka_unit_test(test_cert_identity_good),
        cmocka_unit_test(test_cert_identity_bad),
        cmocka_unit_test(test_default_url),
        cmocka_unit_test(test_metadata_bypasses_proxy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
