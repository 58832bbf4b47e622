/* The instance-principal provider end to end against fake_imds on loopback:
 * metadata, federation (whose signature the fake verifies), the session
 * token and key, refresh near exp and after a 401, and the errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth/federation.h"
#include "fake_imds.h"
#include "ocisbx/auth.h"
#include "test_assert.h"
#include "ocisbx/util.h"
#include "par_run.h"

#define TENANCY "ocid1.tenancy.oc1..aaaaaaaafaketenancy"

static fake_imds *start_fake(void)
{
    fake_imds *f = NULL;
    assert_int_equal(fake_imds_start(TENANCY, "phx", &f), 0);
    return f;
}

static ocisbx_instance_principal_options *options_for(const fake_imds *f, int margin)
{
    ocisbx_instance_principal_options *o = NULL;
    assert_int_equal(ocisbx_instance_principal_options_new(&o), 0);
    assert_int_equal(ocisbx_instance_principal_options_set_metadata_url(o, fake_imds_metadata_url(f)), 0);
    assert_int_equal(ocisbx_instance_principal_options_set_federation_url(o, fake_imds_federation_url(f)), 0);
    if (margin >= 0)
        assert_int_equal(ocisbx_instance_principal_options_set_refresh_margin(o, margin), 0);
    return o;
}

static void print_refusal(fake_imds *f)
{
    char why[512];
    fake_imds_last_refusal(f, why, sizeof why);
    if (why[0])
        print_message("fake refused a request: %s\n", why);
    print_message("library error: %s\n", ocisbx_error_message(ocisbx_error_last()));
}

static ocisbx_credentials *make_creds(fake_imds *f, int margin)
{
    ocisbx_instance_principal_options *o = options_for(f, margin);
    ocisbx_credentials *c = NULL;
    int rc = ocisbx_credentials_instance_principal(o, &c);
    ocisbx_instance_principal_options_free(o);
    if (rc)
        print_refusal(f);
    assert_int_equal(rc, 0);
    assert_non_null(c);
    return c;
}

/* Gets the keyId and checks it is ST$<the fake's last token>; returns it. */
static char *get_checked(ocisbx_credentials *c, fake_imds *f, ocisbx_key **key_out)
{
    char *key_id = NULL;
    ocisbx_key *key = NULL;
    int rc = ocisbx_credentials_get(c, &key_id, &key);
    if (rc)
        print_refusal(f);
    assert_int_equal(rc, 0);
    char token[4096], want[4100];
    fake_imds_last_token(f, token, sizeof token);
    snprintf(want, sizeof want, "ST$%s", token);
    assert_string_equal(key_id, want);
    if (key_out)
        *key_out = key;
    else
        ocisbx_key_free(key);
    return key_id;
}

/* A signature made with the credentials' key verifies against the session
 * public key the fake received in the federation request. */
static void assert_key_is_session_key(fake_imds *f, const ocisbx_key *key)
{
    static const char msg[] = "GET /20231130/sandboxes signed by the instance";
    char *sig = NULL;
    assert_int_equal(ocisbx_key_sign_base64(key, msg, strlen(msg), &sig), 0);
    assert_int_equal(fake_imds_verify_session_signature(f, msg, strlen(msg), sig), 1);
    /* and the check can fail */
    assert_int_equal(fake_imds_verify_session_signature(f, msg, strlen(msg) - 1, sig), 0);
    ocisbx_free(sig);
    assert_int_equal(ocisbx_key_bits(key), 2048);
}

static void test_whole_flow(void **state)
{
    (void)state;
    fake_imds *f = start_fake();
    ocisbx_credentials *c = make_creds(f, -1);
    assert_string_equal(ocisbx_credentials_kind(c), OCISBX_AUTH_INSTANCE_PRINCIPAL);
    assert_string_equal(ocisbx_credentials_region(c), "us-phoenix-1");
    assert_int_equal(fake_imds_tokens_issued(f), 1);
    assert_int_equal(fake_imds_refused(f), 0); /* Bearer header, signature, body all accepted */

    ocisbx_key *key = NULL;
    char *id1 = get_checked(c, f, &key);
    assert_key_is_session_key(f, key);
    ocisbx_key_free(key);

    /* A request signed with the provider carries the ST$ keyId. */
    ocisbx_sign_request *r = NULL;
    ocisbx_headers *h = NULL;
    assert_int_equal(ocisbx_sign_request_new("GET", "https://example.invalid/20231130/sandboxes", &r), 0);
    assert_int_equal(ocisbx_sign(c, r, &h), 0);
    const char *auth = ocisbx_headers_get(h, "authorization");
    assert_non_null(auth);
    char want[4200];
    snprintf(want, sizeof want, "keyId=\"%s\"", id1);
    assert_non_null(strstr(auth, want));
    ocisbx_headers_free(h);
    ocisbx_sign_request_free(r);

    /* Far from exp: no new federation call. */
    char *id2 = get_checked(c, f, NULL);
    assert_string_equal(id1, id2);
    assert_int_equal(fake_imds_tokens_issued(f), 1);
    ocisbx_free(id1);
    ocisbx_free(id2);
    ocisbx_credentials_free(c);
    fake_imds_stop(f);
}

static void fingerprint_of(ocisbx_credentials *c, char fp[48])
{
    char *id = NULL;
    ocisbx_key *key = NULL;
    assert_int_equal(ocisbx_credentials_get(c, &id, &key), 0);
    assert_int_equal(ocisbx_key_fingerprint(key, fp), 0);
    ocisbx_free(id);
    ocisbx_key_free(key);
}

static void test_refresh_near_exp(void **state)
{
    (void)state;
    fake_imds *f = start_fake();
    /* A token issued an hour ago that expires in 100 s: inside the margin. */
    fake_imds_set_token_times(f, true, 100, true, -3600);
    ocisbx_credentials *c = make_creds(f, 300);
    assert_int_equal(fake_imds_tokens_issued(f), 1);
    char token1[4096];
    fake_imds_last_token(f, token1, sizeof token1);

    ocisbx_key *key = NULL;
    char *id = get_checked(c, f, &key); /* refreshed before answering */
    assert_int_equal(fake_imds_tokens_issued(f), 2);
    assert_null(strstr(id, token1));
    assert_key_is_session_key(f, key);
    ocisbx_key_free(key);
    ocisbx_free(id);

    /* Fresh tokens from now on: no further refresh. */
    fake_imds_set_token_times(f, true, 3600, true, 0);
    ocisbx_free(get_checked(c, f, NULL));
    assert_int_equal(fake_imds_tokens_issued(f), 3);
    char fp1[48], fp2[48];
    fingerprint_of(c, fp1);
    fingerprint_of(c, fp2);
    assert_string_equal(fp1, fp2);
    assert_int_equal(fake_imds_tokens_issued(f), 3);
    assert_int_equal(fake_imds_refused(f), 0);
    ocisbx_credentials_free(c);
    fake_imds_stop(f);
}

static void test_short_tokens_not_fetched_every_call(void **state)
{
    (void)state;
    fake_imds *f = start_fake();
    /* Lives 1000 s, margin 900 s: refreshed after half its life (500 s),
     * not on every call. */
    fake_imds_set_token_times(f, true, 1000, true, 0);
    ocisbx_credentials *c = make_creds(f, 900);
    ocisbx_free(get_checked(c, f, NULL));
    ocisbx_free(get_checked(c, f, NULL));
    assert_int_equal(fake_imds_tokens_issued(f), 1);
    ocisbx_credentials_free(c);

    /* No exp at all: valid for an hour. */
    fake_imds_set_token_times(f, false, 0, false, 0);
    c = make_creds(f, -1);
    ocisbx_free(get_checked(c, f, NULL));
    assert_int_equal(fake_imds_tokens_issued(f), 2);
    ocisbx_credentials_free(c);
    fake_imds_stop(f);
}

static void test_refresh_after_401(void **state)
{
    (void)state;
    fake_imds *f = start_fake();
    ocisbx_credentials *c = make_creds(f, -1);
    char fp1[48], fp2[48];
    fingerprint_of(c, fp1);
    char *id1 = get_checked(c, f, NULL);

    /* The service answered 401: the caller forces a refresh once. */
    assert_int_equal(ocisbx_credentials_refresh(c), 0);
    assert_int_equal(fake_imds_tokens_issued(f), 2);
    ocisbx_key *key = NULL;
    char *id2 = get_checked(c, f, &key);
    assert_string_not_equal(id1, id2);
    assert_key_is_session_key(f, key); /* a fresh session key, known to the fake */
    ocisbx_key_free(key);
    fingerprint_of(c, fp2);
    assert_string_not_equal(fp1, fp2);

    /* The platform rotated the instance certificate: the next refresh
     * fetches it again and signs with the new leaf key. */
    assert_int_equal(fake_imds_rotate_leaf(f), 0);
    assert_int_equal(ocisbx_credentials_refresh(c), 0);
    assert_int_equal(fake_imds_tokens_issued(f), 3);
    assert_int_equal(fake_imds_refused(f), 0);
    ocisbx_free(id1);
    ocisbx_free(id2);
    ocisbx_credentials_free(c);
    fake_imds_stop(f);
}

static void test_metadata_down(void **state)
{
    (void)state;
    fake_imds *f = start_fake();
    ocisbx_instance_principal_options *o = options_for(f, -1);
    char url[128];
    snprintf(url, sizeof url, "%s/instance/region", fake_imds_metadata_url(f));

    /* Answers 500. */
    fake_imds_set_metadata_status(f, 500);
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_instance_principal(o, &c), OCISBX_ESERVICE);
    assert_null(c);
    test_assert_msg_has(url);
    test_assert_msg_has("HTTP 500");
    test_assert_msg_has("opc-request-id fake-");
    assert_int_equal(ocisbx_error_http_status(ocisbx_error_last()), 500);

    /* A redirect is not followed, and not taken for an answer. */
    fake_imds_set_metadata_status(f, 302);
    assert_int_equal(ocisbx_credentials_instance_principal(o, &c), OCISBX_ESERVICE);
    test_assert_msg_has("HTTP 302");
    /* 404: the metadata path does not exist (not an instance). */
    fake_imds_set_metadata_status(f, 404);
    assert_int_equal(ocisbx_credentials_instance_principal(o, &c), OCISBX_ENOTFOUND);
    test_assert_msg_has(url);

    /* Not listening at all. */
    fake_imds_stop(f);
    assert_int_equal(ocisbx_credentials_instance_principal(o, &c), OCISBX_ETRANSPORT);
    assert_null(c);
    test_assert_msg_has(url);
    test_assert_msg_has("instance principal: instance metadata GET");
    ocisbx_instance_principal_options_free(o);
}

static void test_federation_refuses(void **state)
{
    (void)state;
    fake_imds *f = start_fake();
    char url[128];
    snprintf(url, sizeof url, "%s/v1/x509", fake_imds_federation_url(f));

    fake_imds_set_federation_status(f, 401);
    ocisbx_instance_principal_options *o = options_for(f, -1);
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_instance_principal(o, &c), OCISBX_EAUTH);
    assert_null(c);
    const ocisbx_error *e = ocisbx_error_last();
    assert_int_equal(ocisbx_error_http_status(e), 401);
    assert_string_equal(ocisbx_error_service_code(e), "NotAuthenticated");
    assert_non_null(ocisbx_error_request_id(e));
    assert_memory_equal(ocisbx_error_request_id(e), "fake-", 5);
    test_assert_msg_has(url);
    test_assert_msg_has("HTTP 401");
    test_assert_msg_has("opc-request-id fake-");
    assert_null(strstr(ocisbx_error_message(e), "PRIVATE KEY"));

    /* Working credentials whose forced refresh is refused: the error is
     * returned, and the current token stays in use. */
    fake_imds_set_federation_status(f, 0);
    assert_int_equal(ocisbx_credentials_instance_principal(o, &c), 0);
    char *id1 = get_checked(c, f, NULL);
    fake_imds_set_federation_status(f, 401);
    assert_int_equal(ocisbx_credentials_refresh(c), OCISBX_EAUTH);
    test_assert_msg_has("HTTP 401");
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), id1 + 3));
    char *id2 = get_checked(c, f, NULL);
    assert_string_equal(id1, id2);
    ocisbx_free(id1);
    ocisbx_free(id2);
    ocisbx_credentials_free(c);

    /* Near exp and the federation fails (500): the token is still valid, so
     * get() keeps using it rather than fail. */
    fake_imds_set_federation_status(f, 0);
    fake_imds_set_token_times(f, true, 100, true, -3600);
    assert_int_equal(ocisbx_credentials_instance_principal(o, &c), 0);
    fake_imds_set_federation_status(f, 500);
    int issued = fake_imds_tokens_issued(f);
    int asked = fake_imds_federation_requests(f);
    char *id3 = get_checked(c, f, NULL);
    assert_int_equal(fake_imds_tokens_issued(f), issued);
    assert_int_equal(fake_imds_federation_requests(f), asked + 1);
    assert_int_equal(ocisbx_error_code(ocisbx_error_last()), OCISBX_OK); /* a success leaves no error */
    /* and it waits before asking again, rather than on every call */
    ocisbx_free(get_checked(c, f, NULL));
    assert_int_equal(fake_imds_federation_requests(f), asked + 1);
    ocisbx_free(id3);
    ocisbx_credentials_free(c);
    /* An expired token with a failing federation is an error. */
    fake_imds_set_federation_status(f, 0);
    fake_imds_set_token_times(f, true, -10, true, -3600);
    assert_int_equal(ocisbx_credentials_instance_principal(o, &c), 0);
    fake_imds_set_federation_status(f, 503);
    char *id = NULL;
    ocisbx_key *key = NULL;
    assert_int_equal(ocisbx_credentials_get(c, &id, &key), OCISBX_ESERVICE);
    assert_null(id);
    assert_null(key);
    test_assert_msg_has("HTTP 503");
    ocisbx_credentials_free(c);

    ocisbx_instance_principal_options_free(o);
    fake_imds_stop(f);
}

static void test_options(void **state)
{
    (void)state;
    ocisbx_instance_principal_options *o = NULL;
    assert_int_equal(ocisbx_instance_principal_options_new(&o), 0);
    assert_int_equal(ocisbx_instance_principal_options_set_metadata_url(o, "ftp://x"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_instance_principal_options_set_federation_url(o, NULL), OCISBX_EINVAL);
    assert_int_equal(ocisbx_instance_principal_options_set_refresh_margin(o, -1), OCISBX_EINVAL);
    assert_int_equal(ocisbx_instance_principal_options_set_ca_bundle(o, ""), OCISBX_EINVAL);
    assert_int_equal(ocisbx_instance_principal_options_set_ca_bundle(o, "/etc/ssl/certs/ca-certificates.crt"), 0);
    ocisbx_instance_principal_options_free(o);
    ocisbx_instance_principal_options_free(NULL);

    /* Plain http to a federation endpoint off loopback is refused before
     * anything is sent there. */
    fake_imds *f = start_fake();
    o = options_for(f, -1);
    assert_int_equal(ocisbx_instance_principal_options_set_federation_url(o, "http://auth.example.com/"), 0);
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_credentials_instance_principal(o, &c), OCISBX_ECONFIG);
    test_assert_msg_has("http://auth.example.com");
    assert_int_equal(fake_imds_tokens_issued(f), 0);
    const char *not_loopback[] = {"http://localhost.example.com", "http://127.example.com:80",
                                  "http://127.0.0.1.nip.io", "http://[::1].example.com"};
    for (size_t i = 0; i < sizeof not_loopback / sizeof *not_loopback; i++) {
        assert_int_equal(ocisbx_instance_principal_options_set_federation_url(o, not_loopback[i]), 0);
        assert_int_equal(ocisbx_credentials_instance_principal(o, &c), OCISBX_ECONFIG);
    }
    ocisbx_instance_principal_options_free(o);

    /* Trailing slashes on the base URLs are fine. */
    o = NULL;
    assert_int_equal(ocisbx_instance_principal_options_new(&o), 0);
    char url[128];
    snprintf(url, sizeof url, "%s/", fake_imds_metadata_url(f));
    assert_int_equal(ocisbx_instance_principal_options_set_metadata_url(o, url), 0);
    snprintf(url, sizeof url, "%s//", fake_imds_federation_url(f));
    assert_int_equal(ocisbx_instance_principal_options_set_federation_url(o, url), 0);
    assert_int_equal(ocisbx_credentials_instance_principal(o, &c), 0);
    ocisbx_credentials_free(c);
    ocisbx_instance_principal_options_free(o);
    fake_imds_stop(f);
}

static void test_federation_over_tls(void **state)
{
    (void)state;
    fake_imds *f = start_fake();
    char ca[512];
    snprintf(ca, sizeof ca, "%s/it_instance_principal_ca.pem", OCISBX_BINARY_DIR);
    assert_int_equal(fake_imds_start_tls(f, ca), 0);
    char url[128];
    snprintf(url, sizeof url, "%s/v1/x509", fake_imds_federation_tls_url(f));

    /* With the private CA: verified, and the flow works. */
    ocisbx_instance_principal_options *o = options_for(f, -1);
    assert_int_equal(ocisbx_instance_principal_options_set_federation_url(o, fake_imds_federation_tls_url(f)), 0);
    assert_int_equal(ocisbx_instance_principal_options_set_ca_bundle(o, ca), 0);
    ocisbx_credentials *c = NULL;
    int rc = ocisbx_credentials_instance_principal(o, &c);
    if (rc)
        print_refusal(f);
    assert_int_equal(rc, 0);
    ocisbx_free(get_checked(c, f, NULL));
    ocisbx_credentials_free(c);
    ocisbx_instance_principal_options_free(o);

    /* Without it: the server's certificate is not trusted, nothing is sent. */
    int asked = fake_imds_federation_requests(f);
    o = options_for(f, -1);
    assert_int_equal(ocisbx_instance_principal_options_set_federation_url(o, fake_imds_federation_tls_url(f)), 0);
    assert_int_equal(ocisbx_credentials_instance_principal(o, &c), OCISBX_ETRANSPORT);
    assert_null(c);
    test_assert_msg_has(url);
    assert_int_equal(fake_imds_federation_requests(f), asked);
    ocisbx_instance_principal_options_free(o);
    unlink(ca);
    fake_imds_stop(f);
}

static char *jwt_with(const char *payload_b64url)
{
    char *s = malloc(strlen(payload_b64url) + 64);
    sprintf(s, "eyJhbGciOiJSUzI1NiJ9.%s.c2ln", payload_b64url);
    return s;
}

static void test_helpers(void **state)
{
    (void)state;
    char *url = NULL;
    assert_int_equal(ocisbx_federation_default_url("phx", &url), 0);
    assert_string_equal(url, "https://auth.us-phoenix-1.oraclecloud.com");
    ocisbx_free(url);
    assert_int_equal(ocisbx_federation_default_url("US-ASHBURN-1", &url), 0);
    assert_string_equal(url, "https://auth.us-ashburn-1.oraclecloud.com");
    ocisbx_free(url);

    int64_t t = 0;
    /* {"exp":1700000000,"iat":1699996400} */
    char *jwt = jwt_with("eyJleHAiOjE3MDAwMDAwMDAsImlhdCI6MTY5OTk5NjQwMH0");
    assert_int_equal(ocisbx_jwt_claim_time(jwt, "exp", &t), 0);
    assert_int_equal(t, 1700000000);
    assert_int_equal(ocisbx_jwt_claim_time(jwt, "iat", &t), 0);
    assert_int_equal(t, 1699996400);
    assert_int_equal(ocisbx_jwt_claim_time(jwt, "nbf", &t), OCISBX_ENOTFOUND);
    int64_t expires = 0;
    /* margin 300 before exp, later than half the life */
    assert_int_equal(ocisbx_token_refresh_at(jwt, 1699996400, 300, &expires), 1700000000 - 300);
    assert_int_equal(expires, 1700000000);
    /* margin larger than the life: half the life */
    assert_int_equal(ocisbx_token_refresh_at(jwt, 0, 3000, NULL), 1699996400 + 1800);
    free(jwt);
    /* {"exp":"soon"} */
    jwt = jwt_with("eyJleHAiOiJzb29uIn0");
    assert_int_equal(ocisbx_jwt_claim_time(jwt, "exp", &t), OCISBX_EPARSE);
    /* no usable exp: an hour after it was obtained */
    assert_int_equal(ocisbx_token_refresh_at(jwt, 1000, 300, &expires), 1000 + 3600 - 300);
    assert_int_equal(expires, 4600);
    free(jwt);
    assert_int_equal(ocisbx_jwt_claim_time("not-a-jwt", "exp", &t), OCISBX_EPARSE);
    assert_int_equal(ocisbx_jwt_claim_time("a.b.c.d", "exp", &t), OCISBX_EPARSE);
    assert_int_equal(ocisbx_jwt_claim_time("a.!!!.c", "exp", &t), OCISBX_EPARSE);
    assert_int_equal(ocisbx_jwt_claim_time("a.W10.c", "exp", &t), OCISBX_EPARSE); /* [] */
    assert_int_equal(ocisbx_jwt_claim_time("a..c", "exp", &t), OCISBX_EPARSE);

    char *body = NULL;
    const char pem[] = "-----BEGIN CERTIFICATE-----\r\nQUJD\r\nREVG\n-----END CERTIFICATE-----\n";
    assert_int_equal(ocisbx_pem_body(pem, strlen(pem), &body), 0);
    assert_string_equal(body, "QUJDREVG");
    free(body);
    assert_int_equal(ocisbx_pem_body("-----BEGIN X-----\n-----END X-----\n", 34, &body), OCISBX_EPARSE);

    char *tenancy = NULL;
    char fp[OCISBX_SHA1_FP_LEN + 1];
    assert_int_equal(ocisbx_cert_identity("junk", 4, "test cert", &tenancy, fp), OCISBX_EPARSE);
    test_assert_msg_has("test cert");
}

static void check_identity(const char *pem, int want_rc, const char *want_tenancy)
{
    char *tenancy = NULL;
    char fp[OCISBX_SHA1_FP_LEN + 1];
    assert_non_null(pem);
    assert_int_equal(ocisbx_cert_identity(pem, strlen(pem), "the test's certificate", &tenancy, fp), want_rc);
    if (want_tenancy) {
        assert_string_equal(tenancy, want_tenancy);
        assert_int_equal((int)strlen(fp), OCISBX_SHA1_FP_LEN);
    }
    free(tenancy);
}

static void test_certificate_identity(void **state)
{
    (void)state;
    fake_imds *f = start_fake();
    char *pem = fake_imds_leaf_pem(f);
    char *tenancy = NULL;
    char fp[OCISBX_SHA1_FP_LEN + 1];
    assert_int_equal(ocisbx_cert_identity(pem, strlen(pem), "leaf", &tenancy, fp), 0);
    assert_string_equal(tenancy, TENANCY);
    assert_string_equal(fp, fake_imds_fingerprint(f)); /* computed by the fake on its own */
    free(tenancy);
    free(pem);
    fake_imds_stop(f);

    pem = fake_imds_self_signed_pem("opc-identity:ocid1.tenancy.oc1..identity");
    check_identity(pem, 0, "ocid1.tenancy.oc1..identity");
    free(pem);
    pem = fake_imds_self_signed_pem("opc-certtype:instance");
    check_identity(pem, OCISBX_EPARSE, NULL);
    test_assert_msg_has("opc-tenant:");
    test_assert_msg_has("the test's certificate");
    free(pem);
    pem = fake_imds_self_signed_pem(NULL);
    check_identity(pem, OCISBX_EPARSE, NULL);
    free(pem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_flow),
        cmocka_unit_test(test_refresh_near_exp),
        cmocka_unit_test(test_short_tokens_not_fetched_every_call),
        cmocka_unit_test(test_refresh_after_401),
        cmocka_unit_test(test_metadata_down),
        cmocka_unit_test(test_federation_refuses),
        cmocka_unit_test(test_federation_over_tls),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_helpers),
        cmocka_unit_test(test_certificate_identity),
    };
    return par_run_group_tests_name("it_instance_principal", tests, NULL, NULL);
}
