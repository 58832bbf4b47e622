/* Credential providers: the common part (dispatch, references, locking), the
 * API-key provider with every named configuration error, and the
 * session-token provider re-reading its token file when it changes. Keys are
 * generated here with OpenSSL and written as PKCS#8, PKCS#1 and encrypted
 * PKCS#8 files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "ocisbx/auth.h"
#include "test_assert.h"
#include "test_keys.h"

#define TENANCY "ocid1.tenancy.oc1..aaaaaaaaba3pv6wkcr4jqae5f15p2b2m2yt2j6rx32uzr4h25vqstifsfdsq"
#define USER "ocid1.user.oc1..aaaaaaaat5nvwcna5j6aqzjcaty5eqbb6qt2jvpkanghtgdaqedqw3rynjq"
#define PASS "correct horse battery"

static char tmpdir[256];
static char fp_a[48], fp_b[48]; /* fingerprints computed here, not by the library */

static const char *path_in(const char *name)
{
    static char buf[8][512];
    static int slot;
    slot = (slot + 1) % 8;
    snprintf(buf[slot], sizeof buf[slot], "%s/%s", tmpdir, name);
    return buf[slot];
}

static void write_file(const char *path, const char *text)
{
    assert_int_equal(test_write_text(path, text), 0);
}

/* form: 0 PKCS#8, 1 PKCS#1 "RSA PRIVATE KEY", 2 encrypted PKCS#8, 3 a public key only */
static int write_key(EVP_PKEY *pkey, const char *name, int form)
{
    static const test_pem_form forms[] = {TEST_PEM_PKCS8, TEST_PEM_PKCS1, TEST_PEM_PKCS8_ENC, TEST_PEM_PUBLIC};
    return test_pem_write(pkey, forms[form], PASS, path_in(name));
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_credentials.XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    setenv("HOME", tmpdir, 1);
    EVP_PKEY *a = EVP_RSA_gen(2048);
    EVP_PKEY *b = EVP_RSA_gen(2048);
    int rc = (!a || !b) ? -1 : 0;
    if (!rc)
        rc = test_key_fingerprint(a, fp_a) | test_key_fingerprint(b, fp_b);
    if (!rc)
        rc = write_key(a, "a.pem", 0) | write_key(a, "a_pkcs1.pem", 1) | write_key(a, "a_enc.pem", 2) |
             write_key(a, "a_pub.pem", 3) | write_key(b, "b.pem", 0);
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
    if (!rc)
        rc = test_write_text(path_in("garbage.pem"), "this is not PEM\n");
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    return test_rm_rf(tmpdir);
}

/* A config text with one [P] profile: the given lines after DEFAULT's. */
static ocisbx_config *config_of(const char *profile_lines)
{
    char text[4096];
    snprintf(text, sizeof text, "[DEFAULT]\nregion = phx\n\n[P]\n%s", profile_lines);
    write_file(path_in("config"), text);
    ocisbx_config *cfg = NULL;
    if (ocisbx_config_load(path_in("config"), "P", &cfg) != 0)
        fail_msg("config: %s", test_last_msg());
    return cfg;
}

static char *lines(const char *tenancy, const char *user, const char *fp, const char *key_file, const char *extra)
{
    static char buf[2048];
    buf[0] = '\0';
    size_t n = 0;
    if (tenancy)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "tenancy = %s\n", tenancy);
    if (user)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "user = %s\n", user);
    if (fp)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "fingerprint = %s\n", fp);
    if (key_file)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "key_file = %s\n", key_file);
    if (extra)
        snprintf(buf + n, sizeof buf - n, "%s", extra);
    return buf;
}

static void api_key_ok(const char *profile_lines, const char *want_fp)
{
    ocisbx_config *cfg = config_of(profile_lines);
    ocisbx_credentials *c = NULL;
    int rc = ocisbx_credentials_api_key_from_config(cfg, &c);
    if (rc)
        fail_msg("api key: %s", test_last_msg());
    assert_string_equal(ocisbx_credentials_kind(c), OCISBX_AUTH_API_KEY);
    assert_string_equal(ocisbx_credentials_region(c), "us-phoenix-1");
    char *key_id = NULL;
    ocisbx_key *key = NULL;
    assert_int_equal(ocisbx_credentials_get(c, &key_id, &key), 0);
    char want[512];
    snprintf(want, sizeof want, "%s/%s/%s", TENANCY, USER, want_fp);
    assert_string_equal(key_id, want);
    char fp[48];
    assert_int_equal(ocisbx_key_fingerprint(key, fp), 0);
    assert_string_equal(fp, want_fp);
    assert_int_equal(ocisbx_key_bits(key), 2048);
    assert_int_equal(ocisbx_credentials_refresh(c), 0); /* a no-op */
    ocisbx_free(key_id);
    ocisbx_key_free(key);
    ocisbx_credentials_free(c);
    ocisbx_config_free(cfg);
}

/* A config error: ECONFIG, message names the config file, the profile and
 * the needle. */
static void api_key_fails(const char *profile_lines, const char *needle)
{
    ocisbx_config *cfg = config_of(profile_lines);
    ocisbx_credentials *c = (ocisbx_credentials *)(uintptr_t)1;
    assert_int_equal(ocisbx_credentials_api_key_from_config(cfg, &c), OCISBX_ECONFIG);
    assert_null(c);
    test_assert_msg_has(path_in("config"));
    test_assert_msg_has("profile [P]");
    test_assert_msg_has(needle);
    ocisbx_config_free(cfg);
}

static void test_api_key_forms(void **state)
{
    (void)state;
    api_key_ok(lines(TENANCY, USER, fp_a, path_in("a.pem"), NULL), fp_a);
    api_key_ok(lines(TENANCY, USER, fp_a, path_in("a_pkcs1.pem"), NULL), fp_a);
    api_key_ok(lines(TENANCY, USER, fp_a, path_in("a_enc.pem"), "pass_phrase = " PASS "\n"), fp_a);
    /* a passphrase for an unencrypted key is ignored */
    api_key_ok(lines(TENANCY, USER, fp_a, path_in("a.pem"), "pass_phrase = unused\n"), fp_a);
    /* ~ in key_file */
    api_key_ok(lines(TENANCY, USER, fp_b, "~/b.pem", NULL), fp_b);
    /* OCIDs with a region part */
    ocisbx_config *cfg = config_of(lines("ocid1.tenancy.oc1.phx.aaaa", "ocid1.user.oc2.us-langley-1.bbbb", fp_a,
                                         path_in("a.pem"), "region = US-ASHBURN-1\n"));
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_api_key_from_config(cfg, &c), 0);
    assert_string_equal(ocisbx_credentials_region(c), "us-ashburn-1");
    ocisbx_credentials_free(c);
    ocisbx_config_free(cfg);
    /* the region is optional */
    write_file(path_in("config"), "[P]\ntenancy = " TENANCY "\nuser = " USER "\n");
    char text[1024];
    snprintf(text, sizeof text, "[P]\ntenancy=%s\nuser=%s\nfingerprint=%s\nkey_file=%s\n", TENANCY, USER, fp_a,
             path_in("a.pem"));
    assert_int_equal(ocisbx_config_parse(text, strlen(text), "mem", "P", &cfg), 0);
    assert_int_equal(ocisbx_credentials_api_key_from_config(cfg, &c), 0);
    assert_null(ocisbx_credentials_region(c));
    ocisbx_credentials_free(c);
    ocisbx_config_free(cfg);
}

static void test_api_key_missing_keys(void **state)
{
    (void)state;
    api_key_fails("", "missing keys 'tenancy', 'user', 'fingerprint', 'key_file'");
    api_key_fails(lines(TENANCY, NULL, fp_a, path_in("a.pem"), NULL), "missing key 'user'");
    api_key_fails(lines(TENANCY, USER, NULL, path_in("a.pem"), NULL), "missing key 'fingerprint'");
    api_key_fails(lines(TENANCY, USER, fp_a, NULL, NULL), "missing key 'key_file'");
    api_key_fails(lines(NULL, USER, fp_a, path_in("a.pem"), NULL), "missing key 'tenancy'");
    api_key_fails(lines("", USER, fp_a, path_in("a.pem"), NULL), "missing key 'tenancy'"); /* empty value */
}

static void test_api_key_bad_ocids(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "not-an-ocid",
        USER,                      /* a user OCID as the tenancy */
        "ocid1.tenancy.oc1.aaaa",  /* no region slot */
        "ocid1.tenancy..aaaa",     /* no realm */
        "ocid1.tenancy.oc1..",     /* no unique part */
        "ocid2.tenancy.oc1..aaaa", /* unknown version */
        "ocid1.tenancyx.oc1..aaaa",
        "ocid1.tenancy.oc1..aa aa",
        "ocid1.tenancy.oc1..aaaa/",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        api_key_fails(lines(bad[i], USER, fp_a, path_in("a.pem"), NULL), "key 'tenancy' is not a tenancy OCID");
    api_key_fails(lines(TENANCY, TENANCY, fp_a, path_in("a.pem"), NULL), "key 'user' is not a user OCID");
    api_key_fails(lines(TENANCY, "ocid1.user", fp_a, path_in("a.pem"), NULL), "key 'user' is not a user OCID");
}

static void test_api_key_bad_fingerprints(void **state)
{
    (void)state;
    char upper[48];
    for (size_t i = 0; i < 48; i++)
        upper[i] = (fp_a[i] >= 'a' && fp_a[i] <= 'f') ? (char)(fp_a[i] - 32) : fp_a[i];
    if (strcmp(upper, fp_a) == 0)
        upper[0] = 'G';
    char dashes[48];
    memcpy(dashes, fp_a, 48);
    dashes[2] = '-';
    const char *bad[] = {upper, dashes, "00:11:22", "0011223344556677889900aabbccddeeff00112233445566",
                         "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        api_key_fails(lines(TENANCY, USER, bad[i], path_in("a.pem"), NULL), "key 'fingerprint' is malformed");
    /* value checks come before the key file is read */
    api_key_fails(lines(TENANCY, USER, "aa:bb", path_in("missing.pem"), NULL), "key 'fingerprint' is malformed");
    api_key_fails(lines("ocid1.user.oc1..x", USER, fp_a, path_in("missing.pem"), NULL), "key 'tenancy'");
    /* a well-formed fingerprint of another key: the mismatch names both */
    api_key_fails(lines(TENANCY, USER, fp_b, path_in("a.pem"), NULL), "does not match");
    test_assert_msg_has(fp_a);
    test_assert_msg_has(fp_b);
    test_assert_msg_has(path_in("a.pem"));
}

static void test_api_key_bad_key_files(void **state)
{
    (void)state;
    api_key_fails(lines(TENANCY, USER, fp_a, path_in("missing.pem"), NULL), "key 'key_file'");
    test_assert_msg_has(path_in("missing.pem"));
    test_assert_msg_has("not found");

    api_key_fails(lines(TENANCY, USER, fp_a, path_in("a_enc.pem"), NULL), "key 'key_file'");
    test_assert_msg_has("passphrase");
    test_assert_msg_has(path_in("a_enc.pem"));

    api_key_fails(lines(TENANCY, USER, fp_a, path_in("a_enc.pem"), "pass_phrase = wrong-secret-pass\n"),
                  "wrong passphrase");
    test_assert_msg_lacks("wrong-secret-pass");
    test_assert_msg_has(path_in("a_enc.pem"));

    api_key_fails(lines(TENANCY, USER, fp_a, path_in("a_pub.pem"), NULL), "not a private key");
    api_key_fails(lines(TENANCY, USER, fp_a, path_in("garbage.pem"), NULL), "not a private key");
    api_key_fails(lines(TENANCY, USER, fp_a, tmpdir, NULL), "key 'key_file'");

    api_key_fails(lines(TENANCY, USER, fp_a, path_in("a.pem"), "region = nowhere\n"), "key 'region'");
}

static void test_api_key_from_values(void **state)
{
    (void)state;
    ocisbx_key *key = NULL;
    assert_int_equal(ocisbx_key_load_file(path_in("a.pem"), NULL, &key), 0);
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_api_key(TENANCY, USER, fp_a, key, &c), 0);
    ocisbx_key_free(key); /* the provider holds its own reference */
    char *key_id = NULL;
    ocisbx_key *got = NULL;
    assert_int_equal(ocisbx_credentials_get(c, &key_id, &got), 0);
    assert_non_null(strstr(key_id, fp_a));
    assert_null(ocisbx_credentials_region(c));
    ocisbx_free(key_id);
    ocisbx_key_free(got);
    ocisbx_credentials_free(c);

    assert_int_equal(ocisbx_key_load_file(path_in("a.pem"), NULL, &key), 0);
    c = (ocisbx_credentials *)(uintptr_t)1;
    assert_int_equal(ocisbx_credentials_api_key(TENANCY, USER, fp_b, key, &c), OCISBX_ECONFIG);
    assert_null(c);
    test_assert_msg_has(fp_a);
    test_assert_msg_has(fp_b);
    assert_int_equal(ocisbx_credentials_api_key("ocid1.tenancy.x", USER, fp_a, key, &c), OCISBX_ECONFIG);
    test_assert_msg_has("tenancy");
    assert_int_equal(ocisbx_credentials_api_key(TENANCY, USER, NULL, key, &c), OCISBX_EINVAL);
    assert_int_equal(ocisbx_credentials_api_key(TENANCY, USER, fp_a, NULL, &c), OCISBX_EINVAL);
    assert_int_equal(ocisbx_credentials_api_key(TENANCY, USER, fp_a, key, NULL), OCISBX_EINVAL);
    ocisbx_key_free(key);
}

static void test_dispatch(void **state)
{
    (void)state;
    ocisbx_config *cfg = config_of(lines(TENANCY, USER, fp_a, path_in("a.pem"), NULL));
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_new(NULL, cfg, &c), 0);
    assert_string_equal(ocisbx_credentials_kind(c), OCISBX_AUTH_API_KEY);
    ocisbx_credentials_free(c);
    assert_int_equal(ocisbx_credentials_new(OCISBX_AUTH_API_KEY, cfg, &c), 0);
    assert_string_equal(ocisbx_credentials_kind(c), OCISBX_AUTH_API_KEY);
    ocisbx_credentials_free(c);
    /* this profile has no token file: the session-token provider says so */
    assert_int_equal(ocisbx_credentials_new(OCISBX_AUTH_SECURITY_TOKEN, cfg, &c), OCISBX_ECONFIG);
    test_assert_msg_has("security_token_file");
    assert_int_equal(ocisbx_credentials_new("api-key", cfg, &c), OCISBX_EINVAL);
    test_assert_msg_has("unknown auth 'api-key'");
    assert_int_equal(ocisbx_credentials_new(NULL, NULL, &c), OCISBX_EINVAL);
    assert_int_equal(ocisbx_credentials_new(OCISBX_AUTH_API_KEY, cfg, NULL), OCISBX_EINVAL);
    /* resource principal without its environment: a failure, never a network call */
    unsetenv("OCI_RESOURCE_PRINCIPAL_VERSION");
    c = (ocisbx_credentials *)(uintptr_t)1;
    assert_int_equal(ocisbx_credentials_new(OCISBX_AUTH_RESOURCE_PRINCIPAL, NULL, &c), OCISBX_ECONFIG);
    test_assert_msg_has("resource principal");
    assert_null(c);
    ocisbx_config_free(cfg);

    /* NULL handling of the common part */
    ocisbx_credentials_free(NULL);
    assert_null(ocisbx_credentials_ref(NULL));
    assert_null(ocisbx_credentials_kind(NULL));
    assert_null(ocisbx_credentials_region(NULL));
    assert_int_equal(ocisbx_credentials_refresh(NULL), OCISBX_EINVAL);
    char *key_id = (char *)(uintptr_t)1;
    ocisbx_key *key = (ocisbx_key *)(uintptr_t)1;
    assert_int_equal(ocisbx_credentials_get(NULL, &key_id, &key), OCISBX_EINVAL);
    assert_null(key_id);
    assert_null(key);
}

struct thread_arg {
    ocisbx_credentials *c;
    int failures;
};

static void *get_loop(void *p)
{
    struct thread_arg *t = p;
    for (int i = 0; i < 200; i++) {
        ocisbx_credentials *c = ocisbx_credentials_ref(t->c);
        char *key_id = NULL;
        ocisbx_key *key = NULL;
        if (ocisbx_credentials_get(c, &key_id, &key) != 0 || !key_id || !key)
            t->failures++;
        ocisbx_free(key_id);
        ocisbx_key_free(key);
        ocisbx_credentials_free(c);
    }
    return NULL;
}

static void test_shared_by_threads(void **state)
{
    (void)state;
    ocisbx_config *cfg = config_of(lines(TENANCY, USER, fp_a, path_in("a.pem"), NULL));
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_api_key_from_config(cfg, &c), 0);
    ocisbx_config_free(cfg);
    pthread_t th[4];
    struct thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (struct thread_arg){c, 0};
        assert_int_equal(pthread_create(&th[i], NULL, get_loop, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    /* the references taken by the threads are all gone: one free ends it
     * (ASan reports a leak otherwise) */
    ocisbx_credentials_free(c);
}

/* ---- session token ---- */

static ocisbx_credentials *session_new(void)
{
    ocisbx_config *cfg = config_of("security_token_file = ~/token\nkey_file = ~/a.pem\n");
    ocisbx_credentials *c = NULL;
    int rc = ocisbx_credentials_new(OCISBX_AUTH_SECURITY_TOKEN, cfg, &c);
    ocisbx_config_free(cfg);
    if (rc)
        fail_msg("session token: %s", test_last_msg());
    return c;
}

static void expect_key_id(ocisbx_credentials *c, const char *want, const char *want_fp)
{
    char *key_id = NULL;
    ocisbx_key *key = NULL;
    if (ocisbx_credentials_get(c, &key_id, &key) != 0)
        fail_msg("get: %s", test_last_msg());
    assert_string_equal(key_id, want);
    char fp[48];
    assert_int_equal(ocisbx_key_fingerprint(key, fp), 0);
    assert_string_equal(fp, want_fp);
    ocisbx_free(key_id);
    ocisbx_key_free(key);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    FILE *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static void set_mtime(const char *path, time_t sec)
{
    struct timespec ts[2] = {{sec, 0}, {sec, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void test_session_token(void **state)
{
    (void)state;
    write_file(path_in("token"), "  token-one-aaaa\n");
    set_mtime(path_in("token"), 1000000);
    ocisbx_credentials *c = session_new();
    assert_string_equal(ocisbx_credentials_kind(c), OCISBX_AUTH_SECURITY_TOKEN);
    assert_string_equal(ocisbx_credentials_region(c), "us-phoenix-1");
    expect_key_id(c, "ST$token-one-aaaa", fp_a);
    expect_key_id(c, "ST$token-one-aaaa", fp_a);

    /* rewritten with another size: re-read */
    write_file(path_in("token"), "token-two-longer-x\n");
    set_mtime(path_in("token"), 1000000);
    expect_key_id(c, "ST$token-two-longer-x", fp_a);

    /* same size, only the mtime changes: re-read */
    write_file(path_in("token"), "token-TWO-longer-x\n");
    set_mtime(path_in("token"), 1000100);
    expect_key_id(c, "ST$token-TWO-longer-x", fp_a);

    /* same size and mtime: the cached token is used... */
    write_file(path_in("token"), "token-333-longer-x\n");
    set_mtime(path_in("token"), 1000100);
    expect_key_id(c, "ST$token-TWO-longer-x", fp_a);
    /* ...until a forced refresh (after a 401) */
    assert_int_equal(ocisbx_credentials_refresh(c), 0);
    expect_key_id(c, "ST$token-333-longer-x", fp_a);

    /* replaced by rename (what editors and `oci session refresh` may do) */
    write_file(path_in("token.new"), "token-444-longer-x\n");
    set_mtime(path_in("token.new"), 1000100);
    assert_int_equal(rename(path_in("token.new"), path_in("token")), 0);
    expect_key_id(c, "ST$token-444-longer-x", fp_a);

    /* a new `oci session authenticate`: new key and new token (on a copy of
     * the keys, so a.pem stays as the other tests expect) */
    ocisbx_credentials_free(c);
    copy_file(path_in("b.pem"), path_in("rot.pem"));
    ocisbx_config *cfg = config_of("security_token_file = ~/token\nkey_file = ~/rot.pem\n");
    assert_int_equal(ocisbx_credentials_session_token_from_config(cfg, &c), 0);
    ocisbx_config_free(cfg);
    expect_key_id(c, "ST$token-444-longer-x", fp_b);
    copy_file(path_in("a.pem"), path_in("rot.pem.new"));
    assert_int_equal(rename(path_in("rot.pem.new"), path_in("rot.pem")), 0);
    write_file(path_in("token"), "token-555-after-authenticate\n");
    expect_key_id(c, "ST$token-555-after-authenticate", fp_a);

    /* the token file disappears: a clear error naming it, never the token */
    assert_int_equal(unlink(path_in("token")), 0);
    char *key_id = (char *)(uintptr_t)1;
    ocisbx_key *key = NULL;
    assert_int_equal(ocisbx_credentials_get(c, &key_id, &key), OCISBX_ECONFIG);
    assert_null(key_id);
    assert_null(key);
    test_assert_msg_has(path_in("token"));
    test_assert_msg_has("not found");
    test_assert_msg_lacks("token-555");
    /* an empty one */
    write_file(path_in("token"), " \n\n");
    assert_int_equal(ocisbx_credentials_get(c, &key_id, &key), OCISBX_ECONFIG);
    test_assert_msg_has("is empty");
    test_assert_msg_has("security_token_file");
    /* back again */
    write_file(path_in("token"), "token-666\n");
    expect_key_id(c, "ST$token-666", fp_a);
    ocisbx_credentials_free(c);
}

static void session_fails(const char *profile_lines, const char *needle)
{
    ocisbx_config *cfg = config_of(profile_lines);
    ocisbx_credentials *c = (ocisbx_credentials *)(uintptr_t)1;
    assert_int_equal(ocisbx_credentials_session_token_from_config(cfg, &c), OCISBX_ECONFIG);
    assert_null(c);
    test_assert_msg_has(path_in("config"));
    test_assert_msg_has("profile [P]");
    test_assert_msg_has(needle);
    ocisbx_config_free(cfg);
}

static void test_session_token_errors(void **state)
{
    (void)state;
    write_file(path_in("token"), "secret-token-value\n");
    session_fails("", "missing keys 'security_token_file', 'key_file'");
    session_fails("key_file = ~/a.pem\n", "missing key 'security_token_file'");
    session_fails("security_token_file = ~/token\n", "missing key 'key_file'");
    session_fails("security_token_file = ~/no-token\nkey_file = ~/a.pem\n", "not found");
    test_assert_msg_has(path_in("no-token"));
    write_file(path_in("empty-token"), "");
    session_fails("security_token_file = ~/empty-token\nkey_file = ~/a.pem\n", "is empty");
    write_file(path_in("two-lines"), "abc\ndef\n");
    session_fails("security_token_file = ~/two-lines\nkey_file = ~/a.pem\n", "not a token");
    session_fails("security_token_file = ~/token\nkey_file = ~/missing.pem\n", "key 'key_file'");
    test_assert_msg_lacks("secret-token-value");
    session_fails("security_token_file = ~/token\nkey_file = ~/a_enc.pem\n", "passphrase");
    test_assert_msg_lacks("secret-token-value");
    session_fails("security_token_file = ~/token\nkey_file = ~/a_enc.pem\npass_phrase = nope-secret\n",
                  "wrong passphrase");
    test_assert_msg_lacks("nope-secret");
    session_fails("security_token_file = ~/token\nkey_file = ~/a.pem\nregion = moon\n", "key 'region'");
    /* an encrypted key with its passphrase works */
    ocisbx_config *cfg = config_of("security_token_file = ~/token\nkey_file = ~/a_enc.pem\npass_phrase = " PASS "\n");
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_session_token_from_config(cfg, &c), 0);
    expect_key_id(c, "ST$secret-token-value", fp_a);
    ocisbx_credentials_free(c);
    ocisbx_config_free(cfg);
}

/* A FIFO as security_token_file or key_file used to block in open(2) until a
 * writer came: both are refused at once. The alarm kills the test instead of
 * hanging it. */
static void test_fifos_refused(void **state)
{
    (void)state;
    write_file(path_in("token"), "secret-token-value\n");
    assert_int_equal(mkfifo(path_in("token.fifo"), 0600), 0);
    assert_int_equal(mkfifo(path_in("key.fifo"), 0600), 0);
    alarm(10);
    session_fails("security_token_file = ~/token.fifo\nkey_file = ~/a.pem\n", "not a regular file");
    test_assert_msg_has(path_in("token.fifo"));
    session_fails("security_token_file = ~/token\nkey_file = ~/key.fifo\n", "not a regular file");
    test_assert_msg_has(path_in("key.fifo"));
    api_key_fails(lines(TENANCY, USER, fp_a, "~/key.fifo", NULL), "not a regular file");
    test_assert_msg_has(path_in("key.fifo"));
    alarm(0);
}

/* Values quoted in messages (here tenancy, user, fingerprint, region and the
 * paths) never bring a control byte or invalid UTF-8 to a terminal. */
static void test_values_escaped(void **state)
{
    (void)state;
    api_key_fails(lines("ocid1\x1b[2J\xff", USER, fp_a, "~/a.pem", NULL), "got 'ocid1\\x1b[2J\\xff'");
    test_assert_msg_clean();
    api_key_fails(lines(TENANCY, "u\x1b]0;t\x07\xfe", fp_a, "~/a.pem", NULL), "got 'u\\x1b]0;t\\x07\\xfe'");
    test_assert_msg_clean();
    api_key_fails(lines(TENANCY, USER, "73:61\x1b\xff", "~/a.pem", NULL), "got '73:61\\x1b\\xff'");
    test_assert_msg_clean();
    api_key_fails(lines(TENANCY, USER, fp_a, "~/a.pem", "region = us\x1b[31m\xff-1\n"),
                  "region 'us\\x1b[31m\\xff-1'");
    test_assert_msg_clean();
    api_key_fails(lines(TENANCY, USER, fp_a, "~/no\x1b[2J\xff.pem", NULL), "no\\x1b[2J\\xff.pem: not found");
    test_assert_msg_clean();
    api_key_fails(lines(TENANCY, USER, fp_b, "~/a\xc3\xa9.pem", NULL), "a\xc3\xa9.pem"); /* valid UTF-8 kept */
    test_assert_msg_clean();
    session_fails("security_token_file = ~/t\x1b[2J\xff\nkey_file = ~/a.pem\n", "t\\x1b[2J\\xff: not found");
    test_assert_msg_clean();
    /* a profile name with control bytes, given by the caller */
    write_file(path_in("config2"), "[DEFAULT]\n[P\x1b\xff]\ntenancy = x\n");
    ocisbx_config *cfg = NULL;
    assert_int_equal(ocisbx_config_load(path_in("config2"), "P\x1b\xff", &cfg), 0);
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_api_key_from_config(cfg, &c), OCISBX_ECONFIG);
    test_assert_msg_has("profile [P\\x1b\\xff]: missing keys");
    test_assert_msg_clean();
    ocisbx_config_free(cfg);
    /* an unknown auth name */
    assert_int_equal(ocisbx_credentials_new("pass\x1b[2J\xff", NULL, &c), OCISBX_EINVAL);
    test_assert_msg_has("unknown auth 'pass\\x1b[2J\\xff'");
    test_assert_msg_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_key_forms),
        cmocka_unit_test(test_api_key_missing_keys),
        cmocka_unit_test(test_api_key_bad_ocids),
        cmocka_unit_test(test_api_key_bad_fingerprints),
        cmocka_unit_test(test_api_key_bad_key_files),
        cmocka_unit_test(test_api_key_from_values),
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_shared_by_threads),
        cmocka_unit_test(test_session_token),
        cmocka_unit_test(test_session_token_errors),
        cmocka_unit_test(test_fifos_refused),
        cmocka_unit_test(test_values_escaped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
