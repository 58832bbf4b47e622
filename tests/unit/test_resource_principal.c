/* The resource-principal (v2.2) provider: values given literally or as
 * absolute file paths, re-read on refresh and near the token's exp, and the
 * errors for each missing or bad variable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "ocisbx/auth.h"
#include "test_assert.h"
#include "test_keys.h"
#include "ocisbx/util.h"

#define V_VERSION "OCI_RESOURCE_PRINCIPAL_VERSION"
#define V_RPST "OCI_RESOURCE_PRINCIPAL_RPST"
#define V_PEM "OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM"
#define V_PASS "OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE"
#define V_REGION "OCI_RESOURCE_PRINCIPAL_REGION"
#define CAVAGE_FP "73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7"

static char dir[256];
static char *cavage_pem;

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void write_file(const char *name, const char *text, char *path_out, size_t cap)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(test_write_text(path, text), 0);
    if (path_out)
        snprintf(path_out, cap, "%s", path);
}

static char *b64url(const char *text)
{
    char *s = calloc(1, strlen(text) * 2 + 8);
    EVP_EncodeBlock((unsigned char *)s, (const unsigned char *)text, (int)strlen(text));
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

/* A JWT whose exp and iat are relative to now; `tag` makes it unique. */
static char *make_rpst(long exp_in, long iat_in, const char *tag)
{
    char payload[256];
    long now = (long)time(NULL);
    snprintf(payload, sizeof payload, "{\"res_type\":\"sandbox\",\"tag\":\"%s\",\"iat\":%ld,\"exp\":%ld}", tag,
             now + iat_in, now + exp_in);
    char *p = b64url(payload);
    char *jwt = malloc(strlen(p) + 64);
    sprintf(jwt, "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.%s.c2lnbmF0dXJl", p);
    free(p);
    return jwt;
}

/* A new RSA private key as PEM, encrypted when pass is not NULL. */
static char *new_key_pem(const char *pass)
{
    EVP_PKEY *k = EVP_RSA_gen(1024);
    assert_non_null(k);
    char *out = test_pem_text(k, pass ? TEST_PEM_PKCS8_ENC : TEST_PEM_PKCS8, pass);
    assert_non_null(out);
    EVP_PKEY_free(k);
    return out;
}

static char *encrypt_pem(const char *pem, const char *pass)
{
    BIO *in = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *k = PEM_read_bio_PrivateKey(in, NULL, NULL, NULL);
    BIO_free(in);
    assert_non_null(k);
    char *out = test_pem_text(k, TEST_PEM_PKCS8_ENC, pass);
    assert_non_null(out);
    EVP_PKEY_free(k);
    return out;
}

static void clear_env(void)
{
    unsetenv(V_VERSION);
    unsetenv(V_RPST);
    unsetenv(V_PEM);
    unsetenv(V_PASS);
    unsetenv(V_REGION);
}

static int setup(void **state)
{
    (void)state;
    clear_env();
    snprintf(dir, sizeof dir, "%s/test_resource_principal.XXXXXX", OCISBX_BINARY_DIR);
    if (!mkdtemp(dir))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clear_env();
    const char *names[] = {"rpst", "key.pem", "pass", "key2.pem", "enc.pem", "rpst.fifo"};
    char path[512];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    return 0;
}

/* Checks get(): keyId ST$<rpst> and a key with fingerprint fp (if given). */
static void assert_creds(ocisbx_credentials *c, const char *rpst, const char *fp)
{
    char *id = NULL;
    ocisbx_key *key = NULL;
    assert_int_equal(ocisbx_credentials_get(c, &id, &key), 0);
    assert_non_null(id);
    assert_memory_equal(id, "ST$", 3);
    assert_string_equal(id + 3, rpst);
    if (fp) {
        char got[48];
        assert_int_equal(ocisbx_key_fingerprint(key, got), 0);
        assert_string_equal(got, fp);
    }
    ocisbx_free(id);
    ocisbx_key_free(key);
}

static void key_fp(const char *pem, char fp[48])
{
    ocisbx_key *k = NULL;
    assert_int_equal(ocisbx_key_load_pem(pem, strlen(pem), NULL, &k), 0);
    assert_int_equal(ocisbx_key_fingerprint(k, fp), 0);
    ocisbx_key_free(k);
}

static void test_literal_values(void **state)
{
    (void)state;
    char *rpst = make_rpst(3600, 0, "literal");
    setenv(V_VERSION, "2.2", 1);
    setenv(V_RPST, rpst, 1);
    setenv(V_PEM, cavage_pem, 1);
    setenv(V_REGION, "phx", 1);
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_resource_principal(&c), 0);
    assert_string_equal(ocisbx_credentials_kind(c), OCISBX_AUTH_RESOURCE_PRINCIPAL);
    assert_string_equal(ocisbx_credentials_region(c), "us-phoenix-1");
    assert_creds(c, rpst, CAVAGE_FP);

    /* By name, as the CLI's --auth resource_principal does. */
    ocisbx_credentials *c2 = NULL;
    assert_int_equal(ocisbx_credentials_new(OCISBX_AUTH_RESOURCE_PRINCIPAL, NULL, &c2), 0);
    assert_creds(c2, rpst, CAVAGE_FP);
    ocisbx_credentials_free(c2);

    /* Literal values are re-read on refresh too. */
    char *rpst2 = make_rpst(3600, 0, "literal-2");
    setenv(V_RPST, rpst2, 1);
    assert_creds(c, rpst, CAVAGE_FP); /* not near exp: unchanged */
    assert_int_equal(ocisbx_credentials_refresh(c), 0);
    assert_creds(c, rpst2, CAVAGE_FP);
    ocisbx_credentials_free(c);
    free(rpst);
    free(rpst2);
}

static void test_file_paths(void **state)
{
    (void)state;
    char *rpst = make_rpst(3600, 0, "file");
    char *text = malloc(strlen(rpst) + 2);
    sprintf(text, "%s\n", rpst); /* a trailing newline is not part of the token */
    char rpst_path[512], pem_path[512], pass_path[512];
    write_file("rpst", text, rpst_path, sizeof rpst_path);
    char *enc = encrypt_pem(cavage_pem, "correct horse");
    write_file("enc.pem", enc, pem_path, sizeof pem_path);
    write_file("pass", "correct horse\n", pass_path, sizeof pass_path);
    setenv(V_VERSION, "2.2", 1);
    setenv(V_RPST, rpst_path, 1);
    setenv(V_PEM, pem_path, 1);
    setenv(V_PASS, pass_path, 1);
    setenv(V_REGION, "us-ashburn-1", 1);
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_resource_principal(&c), 0);
    assert_string_equal(ocisbx_credentials_region(c), "us-ashburn-1");
    assert_creds(c, rpst, CAVAGE_FP);
    ocisbx_credentials_free(c);

    /* Passphrase given literally. */
    setenv(V_PASS, "correct horse", 1);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), 0);
    assert_creds(c, rpst, CAVAGE_FP);
    ocisbx_credentials_free(c);

    /* Wrong or missing passphrase for the encrypted key. */
    setenv(V_PASS, "bad-pass-xyz", 1);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    assert_null(c);
    test_assert_msg_has(V_PEM);
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), "bad-pass-xyz"));
    unsetenv(V_PASS);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has(V_PEM);
    free(enc);
    free(text);
    free(rpst);
}

static void test_reread_on_refresh(void **state)
{
    (void)state;
    char *rpst1 = make_rpst(3600, 0, "one");
    char *rpst2 = make_rpst(3600, 0, "two");
    char rpst_path[512], pem_path[512];
    write_file("rpst", rpst1, rpst_path, sizeof rpst_path);
    write_file("key.pem", cavage_pem, pem_path, sizeof pem_path);
    setenv(V_VERSION, "2.2", 1);
    setenv(V_RPST, rpst_path, 1);
    setenv(V_PEM, pem_path, 1);
    setenv(V_REGION, "phx", 1);
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_resource_principal(&c), 0);
    assert_creds(c, rpst1, CAVAGE_FP);

    /* The platform rotates both files. */
    char *pem2 = new_key_pem(NULL);
    char fp2[48];
    key_fp(pem2, fp2);
    write_file("rpst", rpst2, NULL, 0);
    write_file("key.pem", pem2, NULL, 0);
    assert_creds(c, rpst1, CAVAGE_FP); /* far from exp: still the first */
    assert_int_equal(ocisbx_credentials_refresh(c), 0);
    assert_creds(c, rpst2, fp2);

    /* A refresh that cannot read the files fails, naming the file; the
     * current token stays in use while it is valid. */
    unlink(rpst_path);
    assert_int_equal(ocisbx_credentials_refresh(c), OCISBX_ECONFIG);
    test_assert_msg_has(rpst_path);
    test_assert_msg_has(V_RPST);
    assert_creds(c, rpst2, fp2);

    /* A version changed under a running provider is refused on refresh. */
    write_file("rpst", rpst1, NULL, 0);
    setenv(V_VERSION, "3.0", 1);
    assert_int_equal(ocisbx_credentials_refresh(c), OCISBX_EUNSUPPORTED);
    ocisbx_credentials_free(c);
    free(pem2);
    free(rpst1);
    free(rpst2);
}

static void test_reread_near_exp(void **state)
{
    (void)state;
    /* Issued an hour ago, expires in 100 s: inside the 300 s margin. */
    char *old = make_rpst(100, -3600, "old");
    char *fresh = make_rpst(3600, 0, "fresh");
    char *newer = make_rpst(3600, 0, "newer");
    char rpst_path[512];
    write_file("rpst", old, rpst_path, sizeof rpst_path);
    setenv(V_VERSION, "2.2", 1);
    setenv(V_RPST, rpst_path, 1);
    setenv(V_PEM, cavage_pem, 1);
    setenv(V_REGION, "phx", 1);
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_resource_principal(&c), 0);
    assert_creds(c, old, CAVAGE_FP); /* nothing newer in the file yet */
    write_file("rpst", fresh, NULL, 0);
    assert_creds(c, fresh, CAVAGE_FP); /* re-read without refresh() */
    write_file("rpst", newer, NULL, 0);
    assert_creds(c, fresh, CAVAGE_FP); /* fresh is far from exp: not re-read */
    ocisbx_credentials_free(c);

    /* An expired token whose file is gone: get() fails. */
    char *expired = make_rpst(-10, -3600, "expired");
    write_file("rpst", expired, NULL, 0);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), 0);
    unlink(rpst_path);
    char *id = NULL;
    ocisbx_key *key = NULL;
    assert_int_equal(ocisbx_credentials_get(c, &id, &key), OCISBX_ECONFIG);
    assert_null(id);
    test_assert_msg_has(rpst_path);
    ocisbx_credentials_free(c);
    free(expired);
    free(old);
    free(fresh);
    free(newer);
}

static void test_version_errors(void **state)
{
    (void)state;
    char *rpst = make_rpst(3600, 0, "v");
    setenv(V_RPST, rpst, 1);
    setenv(V_PEM, cavage_pem, 1);
    setenv(V_REGION, "phx", 1);
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    assert_null(c);
    test_assert_msg_has(V_VERSION);
    test_assert_msg_has("not set");

    const char *bad[] = {"1.1", "2.1", "2.2.1", "3.0", " 2.2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv(V_VERSION, bad[i], 1);
        assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_EUNSUPPORTED);
        assert_null(c);
        test_assert_msg_has(V_VERSION);
        test_assert_msg_has(bad[i]);
        test_assert_msg_has("2.2");
    }
    free(rpst);
}

static void test_missing_and_bad_values(void **state)
{
    (void)state;
    char *rpst = make_rpst(3600, 0, "secret-token-value");
    setenv(V_VERSION, "2.2", 1);
    setenv(V_PEM, cavage_pem, 1);
    setenv(V_REGION, "phx", 1);
    ocisbx_credentials *c = NULL;

    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has(V_RPST);
    setenv(V_RPST, "", 1);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has(V_RPST);

    char missing[600];
    snprintf(missing, sizeof missing, "%s/no-such-file", dir);
    setenv(V_RPST, missing, 1);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has(V_RPST);
    test_assert_msg_has(missing);

    char empty_path[512];
    write_file("rpst", "\n", empty_path, sizeof empty_path);
    setenv(V_RPST, empty_path, 1);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has("empty");

    setenv(V_RPST, rpst, 1);
    unsetenv(V_PEM);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has(V_PEM);
    setenv(V_PEM, "-----BEGIN RSA PRIVATE KEY-----\nnot a key\n-----END RSA PRIVATE KEY-----\n", 1);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has(V_PEM);
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), "secret-token-value"));
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), rpst));

    setenv(V_PEM, cavage_pem, 1);
    unsetenv(V_REGION);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has(V_REGION);
    setenv(V_REGION, "not a region!", 1);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has(V_REGION);
    assert_null(c);

    assert_int_equal(ocisbx_credentials_resource_principal(NULL), OCISBX_EINVAL);
    free(rpst);
}

/* A FIFO named by a variable used to block in open(2) until a writer came:
 * it is refused at once. The alarm kills the test instead of hanging it. */
static void test_fifo_refused(void **state)
{
    (void)state;
    char *rpst = make_rpst(3600, 0, "f");
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/rpst.fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    setenv(V_VERSION, "2.2", 1);
    setenv(V_REGION, "phx", 1);
    setenv(V_RPST, fifo, 1);
    setenv(V_PEM, cavage_pem, 1);
    ocisbx_credentials *c = NULL;
    alarm(10);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has(V_RPST);
    test_assert_msg_has(fifo);
    test_assert_msg_has("not a regular file");
    setenv(V_RPST, rpst, 1);
    setenv(V_PEM, fifo, 1);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has(V_PEM);
    test_assert_msg_has("not a regular file");
    alarm(0);
    assert_null(c);
    free(rpst);
}

/* Values quoted in messages never bring a control byte or invalid UTF-8. */
static void test_values_escaped(void **state)
{
    (void)state;
    char *rpst = make_rpst(3600, 0, "e");
    setenv(V_RPST, rpst, 1);
    setenv(V_PEM, cavage_pem, 1);
    setenv(V_REGION, "phx", 1);
    ocisbx_credentials *c = NULL;
    setenv(V_VERSION, "2.\x1b[2J\xff", 1);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_EUNSUPPORTED);
    test_assert_msg_has("\"2.\\x1b[2J\\xff\"");
    test_assert_msg_clean();
    setenv(V_VERSION, "2.2", 1);
    setenv(V_REGION, "us\x1b[2J\xff-1", 1);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has("'us\\x1b[2J\\xff-1'");
    test_assert_msg_clean();
    setenv(V_REGION, "phx", 1);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/no\x1b[2J\xff", dir);
    setenv(V_RPST, missing, 1);
    assert_int_equal(ocisbx_credentials_resource_principal(&c), OCISBX_ECONFIG);
    test_assert_msg_has("no\\x1b[2J\\xff");
    test_assert_msg_clean();
    assert_null(c);
    free(rpst);
}

int main(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/data/cavage-test-key.pem", OCISBX_SOURCE_DIR);
    cavage_pem = read_all(path);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_literal_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reread_on_refresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reread_near_exp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_and_bad_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_values_escaped, setup, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(cavage_pem);
    return rc;
}
