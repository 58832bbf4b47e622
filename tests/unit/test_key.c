/* Private keys: every PEM form, every load error, fingerprints, references. */
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

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "ocisbx/auth.h"
#include "test_assert.h"
#include "test_keys.h"

#define VECTOR_KEY OCISBX_SOURCE_DIR "/tests/data/cavage-test-key.pem"
#define VECTOR_FP "73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7"

static char tmpdir[256];
static EVP_PKEY *rsa_key; /* generated once for the whole file */

static const char *path_in_tmp(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

/* pkey as PEM text in one of the forms (malloc'd). */
static char *pem_of(EVP_PKEY *pkey, test_pem_form form, const char *pass)
{
    char *s = test_pem_text(pkey, form, pass);
    assert_non_null(s);
    return s;
}

static const char *write_file(const char *name, const char *text)
{
    const char *p = path_in_tmp(name);
    assert_int_equal(test_write_text(p, text), 0);
    return p;
}

static void assert_error_mentions(const char *a, const char *b)
{
    const char *msg = ocisbx_error_message(ocisbx_error_last());
    if (a && !strstr(msg, a))
        fail_msg("error \"%s\" does not mention \"%s\"", msg, a);
    if (b && !strstr(msg, b))
        fail_msg("error \"%s\" does not mention \"%s\"", msg, b);
}

static void assert_loads_file(const char *name, const char *text, const char *pass, const char *want_fp)
{
    const char *p = write_file(name, text);
    ocisbx_key *k = NULL;
    int rc = ocisbx_key_load_file(p, pass, &k);
    if (rc)
        fail_msg("%s: %s", name, ocisbx_error_message(ocisbx_error_last()));
    char fp[48];
    assert_int_equal(ocisbx_key_fingerprint(k, fp), 0);
    assert_string_equal(fp, want_fp);
    assert_int_equal(ocisbx_key_bits(k), EVP_PKEY_get_bits(rsa_key));
    ocisbx_key_free(k);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "%s/test_key.XXXXXX", OCISBX_BINARY_DIR);
    if (!mkdtemp(tmpdir))
        return -1;
    rsa_key = EVP_RSA_gen(2048);
    return rsa_key ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    EVP_PKEY_free(rsa_key);
    return test_rm_rf(tmpdir);
}

/* The fingerprint of our generated key, from a fresh load of PKCS#8. */
static void expected_fp(char fp[48])
{
    char *pem = pem_of(rsa_key, TEST_PEM_PKCS8, NULL);
    ocisbx_key *k = NULL;
    assert_int_equal(ocisbx_key_load_pem(pem, strlen(pem), NULL, &k), 0);
    assert_int_equal(ocisbx_key_fingerprint(k, fp), 0);
    ocisbx_key_free(k);
    free(pem);
}

static void test_vector_key_fingerprint(void **state)
{
    (void)state;
    ocisbx_key *k = NULL;
    assert_int_equal(ocisbx_key_load_file(VECTOR_KEY, NULL, &k), 0);
    char fp[48];
    assert_int_equal(ocisbx_key_fingerprint(k, fp), 0);
    assert_string_equal(fp, VECTOR_FP);
    assert_int_equal(ocisbx_key_bits(k), 1024);
    ocisbx_key_free(k);
}

static void test_all_forms_same_key(void **state)
{
    (void)state;
    char fp[48];
    expected_fp(fp);
    /* The fingerprint format: 16 lowercase hex pairs. */
    assert_int_equal(strlen(fp), 47);
    for (int i = 0; i < 47; i++) {
        if (i % 3 == 2)
            assert_int_equal(fp[i], ':');
        else
            assert_non_null(strchr("0123456789abcdef", fp[i]));
    }
    char *p1 = pem_of(rsa_key, TEST_PEM_PKCS1, NULL);
    char *p8 = pem_of(rsa_key, TEST_PEM_PKCS8, NULL);
    char *p8e = pem_of(rsa_key, TEST_PEM_PKCS8_ENC, "s3cret pass");
    char *p1e = pem_of(rsa_key, TEST_PEM_PKCS1_ENC, "s3cret pass");
    assert_non_null(strstr(p1, "BEGIN RSA PRIVATE KEY"));
    assert_non_null(strstr(p8, "BEGIN PRIVATE KEY"));
    assert_non_null(strstr(p8e, "BEGIN ENCRYPTED PRIVATE KEY"));
    assert_non_null(strstr(p1e, "Proc-Type: 4,ENCRYPTED"));
    assert_loads_file("pkcs1.pem", p1, NULL, fp);
    assert_loads_file("pkcs8.pem", p8, NULL, fp);
    assert_loads_file("pkcs8enc.pem", p8e, "s3cret pass", fp);
    assert_loads_file("pkcs1enc.pem", p1e, "s3cret pass", fp);
    /* A passphrase for an unencrypted key is ignored. */
    assert_loads_file("pkcs1b.pem", p1, "ignored", fp);
    /* From memory, in an exact-size buffer with no NUL after it. */
    size_t n1 = strlen(p1e);
    char *exact = malloc(n1);
    memcpy(exact, p1e, n1);
    ocisbx_key *k = NULL;
    assert_int_equal(ocisbx_key_load_pem(exact, n1, "s3cret pass", &k), 0);
    ocisbx_key_free(k);
    assert_int_equal(ocisbx_key_load_pem(exact, n1, NULL, &k), OCISBX_ECONFIG);
    free(exact);
    assert_loads_file("pkcs8b.pem", p8, "ignored", fp);
    free(p1);
    free(p8);
    free(p8e);
    free(p1e);
}

static void test_errors(void **state)
{
    (void)state;
    ocisbx_key *k = (ocisbx_key *)1;
    /* missing */
    const char *missing = path_in_tmp("nope.pem");
    assert_int_equal(ocisbx_key_load_file(missing, NULL, &k), OCISBX_ECONFIG);
    assert_null(k);
    assert_error_mentions(missing, "not found");
    /* a directory is not a key file (root ignores modes, so no unreadable file here) */
    assert_int_equal(ocisbx_key_load_file(tmpdir, NULL, &k), OCISBX_ECONFIG);
    assert_error_mentions(tmpdir, "not a regular file");
    /* encrypted, no passphrase (both encrypted forms, NULL and "") */
    char *p8e = pem_of(rsa_key, TEST_PEM_PKCS8_ENC, "right");
    char *p1e = pem_of(rsa_key, TEST_PEM_PKCS1_ENC, "right");
    const char *f8 = write_file("e8.pem", p8e);
    assert_int_equal(ocisbx_key_load_file(f8, NULL, &k), OCISBX_ECONFIG);
    assert_error_mentions(f8, "no passphrase");
    assert_int_equal(ocisbx_key_load_file(f8, "", &k), OCISBX_ECONFIG);
    assert_error_mentions(f8, "no passphrase");
    const char *f1 = write_file("e1.pem", p1e);
    assert_int_equal(ocisbx_key_load_file(f1, NULL, &k), OCISBX_ECONFIG);
    assert_error_mentions(f1, "no passphrase");
    /* wrong passphrase */
    f8 = write_file("e8.pem", p8e);
    assert_int_equal(ocisbx_key_load_file(f8, "wrong", &k), OCISBX_ECONFIG);
    assert_error_mentions(f8, "wrong passphrase");
    f1 = write_file("e1.pem", p1e);
    assert_int_equal(ocisbx_key_load_file(f1, "wrong", &k), OCISBX_ECONFIG);
    assert_error_mentions(f1, "wrong passphrase");
    /* The passphrase never appears in a message. */
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), "wrong\""));
    /* not a private key: a public key, a random text, an empty file */
    char *pub = pem_of(rsa_key, TEST_PEM_PUBLIC, NULL);
    const char *fp = write_file("pub.pem", pub);
    assert_int_equal(ocisbx_key_load_file(fp, NULL, &k), OCISBX_ECONFIG);
    assert_error_mentions(fp, "not a private key");
    fp = write_file("text.pem", "hello, world\n");
    assert_int_equal(ocisbx_key_load_file(fp, NULL, &k), OCISBX_ECONFIG);
    assert_error_mentions(fp, "not a private key");
    fp = write_file("empty.pem", "");
    assert_int_equal(ocisbx_key_load_file(fp, NULL, &k), OCISBX_ECONFIG);
    assert_error_mentions(fp, "not a private key");
    /* a PEM private key block whose body is garbage */
    fp = write_file("garbage.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
    assert_int_equal(ocisbx_key_load_file(fp, NULL, &k), OCISBX_ECONFIG);
    assert_error_mentions(fp, "not a valid private key");
    /* not RSA: an EC key in PKCS#8 */
    EVP_PKEY *ec = EVP_EC_gen("P-256");
    assert_non_null(ec);
    char *ecpem = pem_of(ec, TEST_PEM_PKCS8, NULL);
    fp = write_file("ec.pem", ecpem);
    assert_int_equal(ocisbx_key_load_file(fp, NULL, &k), OCISBX_ECONFIG);
    assert_error_mentions(fp, "not an RSA key");
    /* and from memory */
    assert_int_equal(ocisbx_key_load_pem(ecpem, strlen(ecpem), NULL, &k), OCISBX_ECONFIG);
    assert_error_mentions("not an RSA key", NULL);
    assert_null(k);
    EVP_PKEY_free(ec);
    free(ecpem);
    free(pub);
    free(p8e);
    free(p1e);
    /* bad arguments */
    assert_int_equal(ocisbx_key_load_file(NULL, NULL, &k), OCISBX_ECONFIG);
    assert_int_equal(ocisbx_key_load_pem(NULL, 0, NULL, &k), OCISBX_EINVAL);
    assert_int_equal(ocisbx_key_generate(100, &k), OCISBX_EINVAL);
}

static void test_refs_and_public_pem(void **state)
{
    (void)state;
    ocisbx_key *k = NULL;
    assert_int_equal(ocisbx_key_generate(2048, &k), 0);
    assert_int_equal(ocisbx_key_bits(k), 2048);
    assert_ptr_equal(ocisbx_key_ref(k), k);
    ocisbx_key_free(k); /* one reference left: still usable */
    char *pem = NULL;
    assert_int_equal(ocisbx_key_public_pem(k, &pem), 0);
    assert_non_null(strstr(pem, "-----BEGIN PUBLIC KEY-----"));
    /* The public PEM's fingerprint equals the key's. */
    BIO *bio = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *pub = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    BIO_free(bio);
    assert_non_null(pub);
    char want[48], fp[48];
    assert_int_equal(test_key_fingerprint(pub, want), 0);
    assert_int_equal(ocisbx_key_fingerprint(k, fp), 0);
    assert_string_equal(fp, want);
    EVP_PKEY_free(pub);
    ocisbx_free(pem);
    ocisbx_key_free(k);
    ocisbx_key_free(NULL);
    assert_null(ocisbx_key_ref(NULL));
}

static void test_sign_base64_deterministic(void **state)
{
    (void)state;
    ocisbx_key *k = NULL;
    assert_int_equal(ocisbx_key_load_file(VECTOR_KEY, NULL, &k), 0);
    char *a = NULL, *b = NULL;
    assert_int_equal(ocisbx_key_sign_base64(k, "abc", 3, &a), 0);
    assert_int_equal(ocisbx_key_sign_base64(k, "abc", 3, &b), 0);
    assert_string_equal(a, b);
    assert_int_equal(strlen(a), 172); /* 128 bytes -> 172 base64 chars */
    assert_null(strchr(a, '\n'));
    ocisbx_free(b);
    assert_int_equal(ocisbx_key_sign_base64(k, "abd", 3, &b), 0);
    assert_string_not_equal(a, b);
    ocisbx_free(a);
    ocisbx_free(b);
    assert_int_equal(ocisbx_key_sign_base64(k, "", 0, &a), 0);
    ocisbx_free(a);
    assert_int_equal(ocisbx_key_sign_base64(NULL, "x", 1, &a), OCISBX_EINVAL);
    ocisbx_key_free(k);
}

/* A FIFO as key_file used to block in open(2) until a writer came: it is
 * refused at once. The alarm kills the test instead of hanging it. */
static void test_fifo_refused(void **state)
{
    (void)state;
    const char *fifo = path_in_tmp("key.fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    ocisbx_key *k = (ocisbx_key *)1;
    alarm(10);
    assert_int_equal(ocisbx_key_load_file(fifo, NULL, &k), OCISBX_ECONFIG);
    alarm(0);
    assert_null(k);
    assert_error_mentions(fifo, "not a regular file");
    /* and a character device */
    alarm(10);
    assert_int_equal(ocisbx_key_load_file("/dev/zero", NULL, &k), OCISBX_ECONFIG);
    alarm(0);
    assert_error_mentions("/dev/zero", "not a regular file");
}

struct log_seen {
    int warns;
    char line[2048];
};

static void on_log(int level, const char *line, void *user_data)
{
    struct log_seen *seen = user_data;
    if (level != OCISBX_LOG_WARN)
        return;
    seen->warns++;
    snprintf(seen->line, sizeof seen->line, "%s", line);
}

/* As the OCI CLI does: a key file others can read loads, with a warning. */
static void test_open_permissions_warn(void **state)
{
    (void)state;
    char *pem = pem_of(rsa_key, TEST_PEM_PKCS8, NULL);
    const char *p = write_file("open.pem", pem);
    free(pem);
    struct log_seen seen = {0};
    ocisbx_set_log(on_log, OCISBX_LOG_DEBUG, &seen);
    ocisbx_key *k = NULL;
    static const mode_t quiet[] = {0600, 0400, 0700};
    for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++) {
        assert_int_equal(chmod(p, quiet[i]), 0);
        assert_int_equal(ocisbx_key_load_file(p, NULL, &k), 0);
        ocisbx_key_free(k);
        if (seen.warns)
            fail_msg("mode %04o: unexpected warning \"%s\"", (unsigned)quiet[i], seen.line);
    }
    static const mode_t open_modes[] = {0644, 0640, 0604, 0620, 0602, 0610};
    for (size_t i = 0; i < sizeof open_modes / sizeof open_modes[0]; i++) {
        seen.warns = 0;
        assert_int_equal(chmod(p, open_modes[i]), 0);
        assert_int_equal(ocisbx_key_load_file(p, NULL, &k), 0); /* a warning, not a failure */
        assert_non_null(k);
        ocisbx_key_free(k);
        if (seen.warns != 1)
            fail_msg("mode %04o: %d warnings", (unsigned)open_modes[i], seen.warns);
        char want[600];
        snprintf(want, sizeof want, "Permissions on %s are too open", p);
        if (!strstr(seen.line, want))
            fail_msg("warning \"%s\" lacks \"%s\"", seen.line, want);
    }
    ocisbx_set_log(NULL, 0, NULL);
}

/* Control bytes and invalid UTF-8 in a path never reach the message raw;
 * valid UTF-8 is kept. */
static void test_path_escaped_in_messages(void **state)
{
    (void)state;
    const char *p = path_in_tmp("k\x1b[2J\xff\xc3\xa9\xc2\x9b.pem");
    char path[512];
    snprintf(path, sizeof path, "%s", p);
    ocisbx_key *k = NULL;
    assert_int_equal(ocisbx_key_load_file(path, NULL, &k), OCISBX_ECONFIG);
    test_assert_msg_has("not found");
    test_assert_msg_has("k\\x1b[2J\\xff\xc3\xa9\\xc2\\x9b.pem");
    test_assert_msg_clean();
    assert_int_equal(test_write_text(path, "hello\n"), 0);
    assert_int_equal(ocisbx_key_load_file(path, NULL, &k), OCISBX_ECONFIG);
    test_assert_msg_has("not a private key");
    test_assert_msg_clean();
    /* a PEM label with an escape sequence */
    p = write_file("label.pem", "-----BEGIN \x1b]0;owned\x07 KEY-----\nAAAA\n-----END X-----\n");
    assert_int_equal(ocisbx_key_load_file(p, NULL, &k), OCISBX_ECONFIG);
    test_assert_msg_has("not a private key");
    test_assert_msg_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_key_fingerprint),
        cmocka_unit_test(test_all_forms_same_key),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_refs_and_public_pem),
        cmocka_unit_test(test_sign_base64_deterministic),
        cmocka_unit_test(test_fifo_refused),
        cmocka_unit_test(test_open_permissions_warn),
        cmocka_unit_test(test_path_escaped_in_messages),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
