/* Signing throughput: libocisbx's signer against a bare OpenSSL
 * EVP_DigestSign loop on the same 2048-bit key over the same signing string
 * (the limit), and against oci-common in Node when it is installed in the
 * build tree (<build>/node_modules/oci-common, put there by conf_oci_common).
 *
 * usage: bench_sign [CPU seconds per side and request kind, default 3]
 * Rates are signatures per CPU-second of the signing thread (Node: of the
 * process), with bare and ours in small alternating batches, so that a
 * neighbour's load on the shared machine biases neither side. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "ocisbx/auth.h"

#define GET_URL                                                                                                    \
    "https://genai.us-chicago-1.oci.oraclecloud.com/20250101/sandboxes?compartmentId=ocid1.compartment.oc1..aaaa&" \
    "limit=10"
#define POST_URL "https://genai.us-chicago-1.oci.oraclecloud.com/20250101/sandboxes/ocid1.sandbox.oc1..abc/commands"
#define KEY_ID "ocid1.tenancy.oc1..aaaa/ocid1.user.oc1..bbbb/00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff"

static double seconds = 3.0;
static EVP_PKEY *pkey;
static ocisbx_key *key;
static char body[1024];
static volatile size_t sink; /* keeps the compiler from dropping work */

/* CPU time of this thread, not wall time: the machine is shared, and a
 * neighbour's build would otherwise show up as a slower signer. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define BATCH 8

/* The limit: sign the same signing string with nothing else around it. */
static void batch_bare(EVP_MD_CTX *ctx, const char *ss, size_t len)
{
    unsigned char sig[512];
    for (int i = 0; i < BATCH; i++) {
        size_t siglen = sizeof sig;
        if (EVP_DigestSignInit_ex(ctx, NULL, "SHA256", NULL, NULL, pkey, NULL) != 1 ||
            EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)ss, len) != 1) {
            fprintf(stderr, "bench_sign: EVP_DigestSign failed\n");
            exit(1);
        }
        EVP_MD_CTX_reset(ctx);
        sink += siglen;
    }
}

/* Ours: everything a client does per request: describe it, hash the body,
 * format the date (now), build and sign the string, produce the headers. */
static void batch_ours(const char *method, const char *url, int with_body)
{
    for (int i = 0; i < BATCH; i++) {
        ocisbx_sign_request *r = NULL;
        ocisbx_headers *h = NULL;
        if (ocisbx_sign_request_new(method, url, &r) ||
            (with_body && ocisbx_sign_request_set_body(r, body, sizeof body)) ||
            ocisbx_sign_with_key(KEY_ID, key, r, &h)) {
            fprintf(stderr, "bench_sign: %s\n", ocisbx_error_message(ocisbx_error_last()));
            exit(1);
        }
        sink += ocisbx_headers_count(h);
        ocisbx_headers_free(h);
        ocisbx_sign_request_free(r);
    }
}

/* Both rates from one run in which small batches of each alternate, each
 * side's CPU time summed apart: whatever the machine does meanwhile falls
 * on both sides alike. */
static void rates(const char *method, const char *url, int with_body, const char *ss, double *bare, double *ours)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    size_t len = strlen(ss), n = 0;
    double t_bare = 0, t_ours = 0;
    while (t_bare + t_ours < 2 * seconds) {
        double t0 = now_s();
        batch_bare(ctx, ss, len);
        double t1 = now_s();
        batch_ours(method, url, with_body);
        double t2 = now_s();
        t_bare += t1 - t0;
        t_ours += t2 - t1;
        n += BATCH;
    }
    EVP_MD_CTX_free(ctx);
    *bare = (double)n / t_bare;
    *ours = (double)n / t_ours;
}

static char *signing_string(const char *method, const char *url, int with_body)
{
    ocisbx_sign_request *r = NULL;
    char *ss = NULL;
    if (ocisbx_sign_request_new(method, url, &r) ||
        (with_body && ocisbx_sign_request_set_body(r, body, sizeof body)) ||
        ocisbx_sign_request_signing_string(r, &ss)) {
        fprintf(stderr, "bench_sign: %s\n", ocisbx_error_message(ocisbx_error_last()));
        exit(1);
    }
    ocisbx_sign_request_free(r);
    return ss;
}

/* oci-common's rates, or a reason it is not measured. */
static int node_rates(const char *key_file, double *get, double *post, char *why, size_t cap)
{
    char modules[600], marker[700];
    snprintf(modules, sizeof modules, "%s/node_modules", OCISBX_BINARY_DIR);
    snprintf(marker, sizeof marker, "%s/oci-common/package.json", modules);
    struct stat st;
    if (system("command -v node >/dev/null 2>&1") != 0) {
        snprintf(why, cap, "node is not installed");
        return -1;
    }
    if (stat(marker, &st) != 0) {
        snprintf(why, cap, "oci-common not found in %s (run the conformance test conf_oci_common to install it)",
                 modules);
        return -1;
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "node '%s/tests/bench/bench_sign_node.js' '%s' '%s' %g", OCISBX_SOURCE_DIR, modules,
             key_file, seconds);
    FILE *p = popen(cmd, "r");
    char out[256] = "";
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    int status = p ? pclose(p) : -1;
    if (status != 0 || sscanf(out, "{\"get\":%lf,\"post\":%lf}", get, post) != 2) {
        snprintf(why, cap, "the node benchmark failed (%s)", out);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        seconds = atof(argv[1]);
    if (seconds <= 0)
        seconds = 3.0;
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (char)('a' + i % 26);

    pkey = EVP_RSA_gen(2048);
    char key_file[600];
    snprintf(key_file, sizeof key_file, "%s/bench_sign_key.%ld.pem", OCISBX_BINARY_DIR, (long)getpid());
    BIO *bio = BIO_new_file(key_file, "wb");
    if (!pkey || !bio || !PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL)) {
        fprintf(stderr, "bench_sign: cannot create the key\n");
        return 1;
    }
    BIO_free(bio);
    if (ocisbx_key_load_file(key_file, NULL, &key)) {
        fprintf(stderr, "bench_sign: %s\n", ocisbx_error_message(ocisbx_error_last()));
        return 1;
    }

    char *ss_get = signing_string("GET", GET_URL, 0);
    char *ss_post = signing_string("POST", POST_URL, 1);
    printf("bench_sign: RSA 2048-bit key, about %g CPU-s per side and request kind, batches of %d alternating\n",
           seconds, BATCH);
    double bare_get = 0, ours_get = 0, bare_post = 0, ours_post = 0;
    rates("GET", GET_URL, 0, ss_get, &bare_get, &ours_get);
    rates("POST", POST_URL, 1, ss_post, &bare_post, &ours_post);
    double node_get = 0, node_post = 0;
    char why[800] = "";
    int have_node = node_rates(key_file, &node_get, &node_post, why, sizeof why) == 0;

    printf("\n%-12s | %22s | %16s | %9s | %22s\n", "request", "bare EVP_DigestSign /s", "libocisbx /s", "ours/bare",
           "oci-common (node) /s");
    printf("-------------+------------------------+------------------+-----------+-----------------------\n");
    char ng[32] = "n/a", np[32] = "n/a";
    if (have_node) {
        snprintf(ng, sizeof ng, "%.1f", node_get);
        snprintf(np, sizeof np, "%.1f", node_post);
    }
    printf("%-12s | %22.1f | %16.1f | %8.1f%% | %22s\n", "GET", bare_get, ours_get, 100.0 * ours_get / bare_get, ng);
    printf("%-12s | %22.1f | %16.1f | %8.1f%% | %22s\n", "POST 1 KiB", bare_post, ours_post,
           100.0 * ours_post / bare_post, np);
    if (!have_node)
        printf("\noci-common not measured: %s\n", why);
    else
        printf("\nlibocisbx / oci-common: GET %.1fx, POST 1 KiB %.1fx\n", ours_get / node_get, ours_post / node_post);
    printf("target: libocisbx >= 90%% of bare OpenSSL: GET %s, POST %s\n",
           ours_get >= 0.9 * bare_get ? "met" : "NOT met", ours_post >= 0.9 * bare_post ? "met" : "NOT met");

    ocisbx_free(ss_get);
    ocisbx_free(ss_post);
    ocisbx_key_free(key);
    EVP_PKEY_free(pkey);
    remove(key_file);
    return 0;
}
