/* base64 (RFC 4648 vectors, every byte value, strict refusals), SHA-256
 * (FIPS 180 known answers, incremental, stream), hex. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ocisbx/util.h"
#include "util/internal.h"

static void assert_error_mentions(int rc, int code, const char *needle)
{
    assert_int_equal(rc, code);
    const ocisbx_error *e = ocisbx_error_last();
    assert_int_equal(ocisbx_error_code(e), code);
    const char *msg = ocisbx_error_message(e);
    if (!strstr(msg, needle))
        fail_msg("error message \"%s\" does not mention \"%s\"", msg, needle);
}

/* ---- base64 ---- */

static const char *const rfc4648[][2] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

static void test_base64_rfc4648_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rfc4648 / sizeof rfc4648[0]; i++) {
        char *enc = NULL;
        assert_int_equal(ocisbx_base64_encode(rfc4648[i][0], strlen(rfc4648[i][0]), &enc), 0);
        assert_string_equal(enc, rfc4648[i][1]);
        ocisbx_free(enc);

        unsigned char *dec = NULL;
        size_t n = 99;
        assert_int_equal(ocisbx_base64_decode(rfc4648[i][1], strlen(rfc4648[i][1]), &dec, &n), 0);
        assert_int_equal(n, strlen(rfc4648[i][0]));
        assert_memory_equal(dec, rfc4648[i][0], n);
        assert_int_equal(dec[n], '\0');
        ocisbx_free(dec);
    }
}

static void test_base64_all_byte_values_round_trip(void **state)
{
    (void)state;
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    /* Every length 0..256 over a prefix, so every padding case meets every byte. */
    for (size_t len = 0; len <= 256; len++) {
        const unsigned char *src = all + (256 - len);
        char *enc = NULL;
        assert_int_equal(ocisbx_base64_encode(src, len, &enc), 0);
        assert_int_equal(strlen(enc), (len + 2) / 3 * 4);
        for (const char *p = enc; *p; p++)
            assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", *p));
        unsigned char *dec = NULL;
        size_t n = 0;
        assert_int_equal(ocisbx_base64_decode(enc, strlen(enc), &dec, &n), 0);
        assert_int_equal(n, len);
        if (len)
            assert_memory_equal(dec, src, len);
        ocisbx_free(dec);
        ocisbx_free(enc);
    }
    /* Each of the 64 characters decodes to its own 6-bit value. */
    char *enc = NULL;
    unsigned char bits[48];
    for (int i = 0; i < 48; i++)
        bits[i] = 0;
    for (int v = 0; v < 64; v++) { /* pack 64 six-bit values 0..63 */
        int bit = v * 6;
        for (int k = 0; k < 6; k++)
            if (v & (1 << (5 - k)))
                bits[(bit + k) / 8] |= (unsigned char)(0x80 >> ((bit + k) % 8));
    }
    assert_int_equal(ocisbx_base64_encode(bits, sizeof bits, &enc), 0);
    assert_string_equal(enc, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
    ocisbx_free(enc);
}

static void test_base64_decode_refuses_bad_input(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *why;
    } bad[] = {
        {"Zg=", "multiple of 4"},   /* missing padding */
        {"Zg", "multiple of 4"},    /* no padding at all */
        {"Zm9vY", "multiple of 4"}, /* truncated */
        {"Zg=a", "padding"},        /* padding before the end */
        {"Z===", "padding"},        /* too much padding */
        {"====", "padding"},
        {"Zg==Zg==", "padding"}, /* padding in the middle */
        {"Zm 9", "0x20"},        /* whitespace */
        {"Zm9v\n", "multiple of 4"},
        {"Zm9\n", "0x0a"},
        {"Zm9-", "'-'"}, /* URL-safe alphabet is not this one */
        {"Zm9_", "'_'"},
        {"Zm9*", "'*'"},
        {"Zh==", "non-zero bits"}, /* non-canonical: bits under the padding */
        {"Zm9=", "non-zero bits"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        static unsigned char sentinel[] = "sentinel";
        unsigned char *dec = sentinel;
        size_t n = 7;
        int rc = ocisbx_base64_decode(bad[i].text, strlen(bad[i].text), &dec, &n);
        assert_error_mentions(rc, OCISBX_EPARSE, bad[i].why);
        assert_error_mentions(rc, OCISBX_EPARSE, "base64");
        assert_null(dec);
        assert_int_equal(n, 0);
    }
    /* A byte above 0x7f and an embedded NUL (text_len counts it). */
    unsigned char *dec = NULL;
    size_t n = 0;
    assert_error_mentions(ocisbx_base64_decode("Zm9\xff", 4, &dec, &n), OCISBX_EPARSE, "0xff");
    assert_error_mentions(ocisbx_base64_decode("Zm\0v", 4, &dec, &n), OCISBX_EPARSE, "0x00");
}

static void test_base64_null_arguments(void **state)
{
    (void)state;
    char *enc = NULL;
    unsigned char *dec = NULL;
    size_t n = 0;
    assert_int_equal(ocisbx_base64_encode(NULL, 3, &enc), OCISBX_EINVAL);
    assert_int_equal(ocisbx_base64_encode("abc", 3, NULL), OCISBX_EINVAL);
    assert_int_equal(ocisbx_base64_decode(NULL, 4, &dec, &n), OCISBX_EINVAL);
    assert_int_equal(ocisbx_base64_decode("Zm9v", 4, NULL, &n), OCISBX_EINVAL);
    assert_int_equal(ocisbx_base64_decode("Zm9v", 4, &dec, NULL), OCISBX_EINVAL);
    /* NULL with length 0 is the empty string. */
    assert_int_equal(ocisbx_base64_encode(NULL, 0, &enc), 0);
    assert_string_equal(enc, "");
    ocisbx_free(enc);
    assert_int_equal(ocisbx_base64_decode(NULL, 0, &dec, &n), 0);
    assert_int_equal(n, 0);
    ocisbx_free(dec);
}

/* ---- SHA-256 ---- */

static const char *const abc448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

static void hex_of_sha(const void *data, size_t len, char hex[65])
{
    unsigned char md[OCISBX_SHA256_LEN];
    assert_int_equal(ocisbx_sha256(data, len, md), 0);
    ocisbx_hex(md, sizeof md, hex);
}

static void test_sha256_known_answers(void **state)
{
    (void)state;
    char hex[65];
    hex_of_sha("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of_sha("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    hex_of_sha(abc448, strlen(abc448), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    char b64[OCISBX_SHA256_B64_LEN + 1];
    assert_int_equal(ocisbx_sha256_base64("", 0, b64), 0);
    assert_string_equal(b64, "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
    assert_int_equal(ocisbx_sha256_base64(NULL, 0, b64), 0);
    assert_string_equal(b64, "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
    assert_int_equal(ocisbx_sha256_base64("abc", 3, b64), 0);
    assert_string_equal(b64, "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
    assert_int_equal(strlen(b64), OCISBX_SHA256_B64_LEN);
}

static void test_sha256_incremental_and_reset(void **state)
{
    (void)state;
    ocisbx_sha256_ctx *c = NULL;
    assert_int_equal(ocisbx_sha256_new(&c), 0);
    /* One million 'a' in uneven pieces (FIPS 180-2 test 3). */
    char chunk[1024]; /* steps below stay under 1010 */
    memset(chunk, 'a', sizeof chunk);
    size_t left = 1000000, step = 1;
    while (left) {
        size_t n = step < left ? step : left;
        assert_int_equal(ocisbx_sha256_update(c, chunk, n), 0);
        left -= n;
        step = step % 997 + 13;
    }
    assert_int_equal(ocisbx_sha256_update(c, NULL, 0), 0);
    unsigned char md[OCISBX_SHA256_LEN];
    char hex[65];
    assert_int_equal(ocisbx_sha256_final(c, md), 0);
    ocisbx_hex(md, sizeof md, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    assert_int_equal(ocisbx_sha256_reset(c), 0);
    assert_int_equal(ocisbx_sha256_update(c, "ab", 2), 0);
    assert_int_equal(ocisbx_sha256_update(c, "c", 1), 0);
    assert_int_equal(ocisbx_sha256_final(c, md), 0);
    ocisbx_hex(md, sizeof md, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

    assert_int_equal(ocisbx_sha256_reset(c), 0);
    assert_int_equal(ocisbx_sha256_final(c, md), 0);
    ocisbx_hex(md, sizeof md, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

    assert_int_equal(ocisbx_sha256_update(c, NULL, 5), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sha256_update(NULL, "a", 1), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sha256_final(NULL, md), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sha256_reset(NULL), OCISBX_EINVAL);
    assert_int_equal(ocisbx_sha256_new(NULL), OCISBX_EINVAL);
    ocisbx_sha256_free(c);
    ocisbx_sha256_free(NULL);
}

struct mem_src {
    const unsigned char *data;
    size_t len, pos, max_chunk;
    int fail_at_call; /* 0: never */
    int fail_code;
    int calls;
    bool set_error;
    int64_t lie; /* non-zero: return this count instead */
};

static int64_t mem_read(void *buf, size_t cap, void *user_data)
{
    struct mem_src *m = user_data;
    m->calls++;
    if (m->lie)
        return m->lie;
    if (m->fail_at_call && m->calls == m->fail_at_call) {
        if (m->set_error) {
            /* A source that reports its own failure (like a file reader). */
            unsigned char *d = NULL;
            size_t n = 0;
            return ocisbx_base64_decode("!!!!", 4, &d, &n);
        }
        return m->fail_code;
    }
    size_t n = m->len - m->pos;
    if (n > cap)
        n = cap;
    if (n > m->max_chunk)
        n = m->max_chunk;
    memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return (int64_t)n;
}

static void test_sha256_stream(void **state)
{
    (void)state;
    size_t len = 300000;
    unsigned char *data = malloc(len);
    assert_non_null(data);
    for (size_t i = 0; i < len; i++)
        data[i] = (unsigned char)(i * 7 + (i >> 8));
    char want[OCISBX_SHA256_B64_LEN + 1], got[OCISBX_SHA256_B64_LEN + 1];
    assert_int_equal(ocisbx_sha256_base64(data, len, want), 0);

    size_t chunks[] = {1, 4093, 65536, 1 << 20};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        struct mem_src m = {.data = data, .len = len, .max_chunk = chunks[i]};
        uint64_t total = 0;
        if (chunks[i] == 1)
            m.len = 5000; /* keep the byte-at-a-time case short */
        char w[OCISBX_SHA256_B64_LEN + 1];
        assert_int_equal(ocisbx_sha256_base64(data, m.len, w), 0);
        assert_int_equal(ocisbx_sha256_stream(mem_read, &m, got, &total), 0);
        assert_string_equal(got, w);
        assert_int_equal(total, m.len);
    }
    struct mem_src full = {.data = data, .len = len, .max_chunk = SIZE_MAX};
    assert_int_equal(ocisbx_sha256_stream(mem_read, &full, got, NULL), 0);
    assert_string_equal(got, want);

    /* Empty stream. */
    struct mem_src empty = {.data = data, .len = 0, .max_chunk = 10};
    uint64_t total = 99;
    assert_int_equal(ocisbx_sha256_stream(mem_read, &empty, got, &total), 0);
    assert_string_equal(got, "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
    assert_int_equal(total, 0);

    /* A failing source: its code comes back, with a message either way (a
     * stale error with the same code is not mistaken for the source's). */
    ocisbx_fail(OCISBX_EIO, "stale");
    struct mem_src bad = {.data = data, .len = len, .max_chunk = 1000, .fail_at_call = 3, .fail_code = OCISBX_EIO};
    assert_error_mentions(ocisbx_sha256_stream(mem_read, &bad, got, &total), OCISBX_EIO, "after 2000 bytes");
    assert_null(strstr(ocisbx_error_message(ocisbx_error_last()), "stale"));
    struct mem_src bad2 = {.data = data, .len = len, .max_chunk = 1000, .fail_at_call = 2, .set_error = true};
    int rc = ocisbx_sha256_stream(mem_read, &bad2, got, &total);
    assert_error_mentions(rc, OCISBX_EPARSE, "after 1000 bytes");
    assert_error_mentions(rc, OCISBX_EPARSE, "base64"); /* the source's own message is kept */

    /* A source claiming more bytes than the buffer holds. */
    struct mem_src liar = {.lie = 1 << 30};
    assert_error_mentions(ocisbx_sha256_stream(mem_read, &liar, got, &total), OCISBX_EINVAL, "returned");

    assert_int_equal(ocisbx_sha256_stream(NULL, NULL, got, &total), OCISBX_EINVAL);
    free(data);
}

static void test_hex(void **state)
{
    (void)state;
    unsigned char d[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
    char out[13];
    ocisbx_hex(d, sizeof d, out);
    assert_string_equal(out, "00017f80abff");
    ocisbx_hex(d, 0, out);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64_rfc4648_vectors),
        cmocka_unit_test(test_base64_all_byte_values_round_trip),
        cmocka_unit_test(test_base64_decode_refuses_bad_input),
        cmocka_unit_test(test_base64_null_arguments),
        cmocka_unit_test(test_sha256_known_answers),
        cmocka_unit_test(test_sha256_incremental_and_reset),
        cmocka_unit_test(test_sha256_stream),
        cmocka_unit_test(test_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
