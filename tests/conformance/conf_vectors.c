/* The published OCI signing vectors (docs/auth.md) reproduce byte
 * for byte, and the verifier accepts them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/verify.h"
#include "ocisbx/auth.h"

#define VEC OCISBX_SOURCE_DIR "/tests/data/"
#define KEY_ID                                                                         \
    "ocid1.tenancy.oc1..aaaaaaaaba3pv6wkcr4jqae5f15p2b2m2yt2j6rx32uzr4h25vqstifsfdsq/" \
    "ocid1.user.oc1..aaaaaaaat5nvwcna5j6aqzjcaty5eqbb6qt2jvpkanghtgdaqedqw3rynjq/"     \
    "73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7"
#define DATE "Thu, 05 Jan 2014 21:31:40 GMT"

#define GET_URL                                                                                           \
    "https://iaas.us-phoenix-1.oraclecloud.com/20160918/instances?availabilityDomain=Pjwf%3A%20PHX-AD-1&" \
    "compartmentId=ocid1.compartment.oc1..aaaaaaaam3we6vgnherjq5q2idnccdflvjsnog7mlr6rtdb25gilchfeyjxa&"  \
    "displayName=TeamXInstances&volumeId=ocid1.volume.oc1.phx."                                           \
    "abyhqljrgvttnlx73nmrwfaux7kcvzfs3s66izvxf2h4lgvyndsdsnoiwr5q"
#define GET_SIG                                                                                                 \
    "GBas7grhyrhSKHP6AVIj/h5/Vp8bd/peM79H9Wv8kjoaCivujVXlpbKLjMPeDUhxkFIWtTtLBj3sUzaFj34XE6YZAHc9r2DmE4pMwOAy/" \
    "kiITcZxa1oHPOeRheC0jP2dqbTll8fmTZVwKZOKHYPtrLJIJQHJjNvxFWeHQjMaR7M="
#define POST_URL "https://iaas.us-phoenix-1.oraclecloud.com/20160918/volumeAttachments"
#define POST_SHA "V9Z20UJTvkvpJ50flBzKE32+6m2zJjweHpDMX/U4Uy0="
#define POST_SIG                                                                        \
    "Mje8vIDPlwIHmD/cTDwRxE7HaAvBg16JnVcsuqaNRim23fFPgQfLoOOxae6WqKb1uPjYEl0qIdazWaBy/" \
    "Ml8DRhqlocMwoSXv0fbukP8J5N80LCmzT/FFBvIvTB91XuXI3hYfP9Zt1l7S6ieVadHUfqBedWH0itrtPJBgKmrWso="

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static ocisbx_key *vector_key(void)
{
    ocisbx_key *k = NULL;
    if (ocisbx_key_load_file(VEC "cavage-test-key.pem", NULL, &k))
        fail_msg("%s", ocisbx_error_message(ocisbx_error_last()));
    return k;
}

/* Verifies the Authorization header with the independent verifier, from the
 * headers the signer returned. */
static const char *lookup(const char *name, void *ud)
{
    return ocisbx_headers_get(ud, name);
}

static void verify_with_verifier(const ocisbx_key *k, const ocisbx_headers *h, const char *method, const char *target)
{
    ocisbx_authz a;
    assert_int_equal(ocisbx_authz_parse(ocisbx_headers_get(h, "authorization"), &a), 0);
    assert_string_equal(a.key_id, KEY_ID);
    char *ss = NULL;
    assert_int_equal(ocisbx_verify_signing_string(a.headers, method, target, lookup, (void *)(uintptr_t)h, &ss), 0);
    char *pem = NULL;
    assert_int_equal(ocisbx_key_public_pem(k, &pem), 0);
    assert_int_equal(ocisbx_verify_signature_pem(pem, strlen(pem), ss, strlen(ss), a.signature), 0);
    ocisbx_free(pem);
    ocisbx_free(ss);
    ocisbx_authz_clear(&a);
}

static void test_fingerprint(void **state)
{
    (void)state;
    ocisbx_key *k = vector_key();
    char fp[48];
    assert_int_equal(ocisbx_key_fingerprint(k, fp), 0);
    assert_string_equal(fp, "73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7");
    ocisbx_key_free(k);
}

static void test_get_vector(void **state)
{
    (void)state;
    ocisbx_key *k = vector_key();
    ocisbx_sign_request *r = NULL;
    assert_int_equal(ocisbx_sign_request_new("GET", GET_URL, &r), 0);
    assert_int_equal(ocisbx_sign_request_set_date(r, DATE), 0);
    ocisbx_headers *h = NULL;
    assert_int_equal(ocisbx_sign_with_key(KEY_ID, k, r, &h), 0);
    assert_string_equal(ocisbx_headers_get(h, "authorization"),
                        "Signature version=\"1\",keyId=\"" KEY_ID "\",algorithm=\"rsa-sha256\","
                        "headers=\"date (request-target) host\",signature=\"" GET_SIG "\"");
    assert_int_equal(ocisbx_headers_count(h), 3);
    assert_string_equal(ocisbx_headers_name(h, 0), "date");
    assert_string_equal(ocisbx_headers_value(h, 0), DATE);
    assert_string_equal(ocisbx_headers_name(h, 1), "host");
    assert_string_equal(ocisbx_headers_value(h, 1), "iaas.us-phoenix-1.oraclecloud.com");
    assert_string_equal(ocisbx_headers_name(h, 2), "authorization");
    verify_with_verifier(k, h, "GET", strstr(GET_URL, "/20160918"));
    ocisbx_headers_free(h);
    ocisbx_sign_request_free(r);
    ocisbx_key_free(k);
}

static void test_post_vector(void **state)
{
    (void)state;
    ocisbx_key *k = vector_key();
    size_t len = 0;
    char *body = read_all(VEC "post-body.json", &len);
    assert_int_equal(len, 316);
    ocisbx_sign_request *r = NULL;
    assert_int_equal(ocisbx_sign_request_new("POST", POST_URL, &r), 0);
    assert_int_equal(ocisbx_sign_request_set_date(r, DATE), 0);
    assert_int_equal(ocisbx_sign_request_set_body(r, body, len), 0);
    ocisbx_headers *h = NULL;
    assert_int_equal(ocisbx_sign_with_key(KEY_ID, k, r, &h), 0);
    assert_int_equal(ocisbx_headers_count(h), 6);
    const char *want_names[] = {"date",         "host", "content-length", "content-type", "x-content-sha256",
                                "authorization"};
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(ocisbx_headers_name(h, i), want_names[i]);
    assert_string_equal(ocisbx_headers_get(h, "x-content-sha256"), POST_SHA);
    assert_string_equal(ocisbx_headers_get(h, "content-length"), "316");
    assert_string_equal(ocisbx_headers_get(h, "content-type"), "application/json");
    assert_string_equal(ocisbx_headers_get(h, "authorization"),
                        "Signature version=\"1\",keyId=\"" KEY_ID "\",algorithm=\"rsa-sha256\","
                        "headers=\"date (request-target) host content-length content-type x-content-sha256\","
                        "signature=\"" POST_SIG "\"");
    verify_with_verifier(k, h, "POST", "/20160918/volumeAttachments");
    ocisbx_headers_free(h);
    ocisbx_sign_request_free(r);
    free(body);
    ocisbx_key_free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fingerprint),
        cmocka_unit_test(test_get_vector),
        cmocka_unit_test(test_post_vector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
