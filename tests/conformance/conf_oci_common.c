/* Conformance with the official signer: the oci-common npm package (told to
 * sign `date` in the Go/Python header order) signs a matrix of requests and
 * every Authorization value must equal ours byte for byte. Binary bodies,
 * which oci-common hashes as text, are checked against `openssl dgst -sha256
 * -sign` over the signing string as the spec defines it.
 *
 * Needs node and npm (oci-common is installed into the build tree once);
 * without node it prints that it skipped and exits 77 (CTest's skip). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include "key_pool.h"
#include "ocisbx/auth.h"

#define SKIP 77
#define VEC_KEY OCISBX_SOURCE_DIR "/tests/data/cavage-test-key.pem"
#define TENANCY "ocid1.tenancy.oc1..aaaaaaaaba3pv6wkcr4jqae5f15p2b2m2yt2j6rx32uzr4h25vqstifsfdsq"
#define USER "ocid1.user.oc1..aaaaaaaat5nvwcna5j6aqzjcaty5eqbb6qt2jvpkanghtgdaqedqw3rynjq"

static char tmpdir[512];
static int failures;

static void die(const char *what)
{
    fprintf(stderr, "conf_oci_common: FAILED: %s\n", what);
    exit(1);
}

static int have_cmd(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static const char *tmp_path(const char *name)
{
    static char bufs[64][600];
    static int next;
    char *b = bufs[next++ % 64];
    snprintf(b, 600, "%s/%s", tmpdir, name);
    return b;
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len)
        die(path);
    fclose(f);
}

static unsigned char *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die(path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
        die(path);
    b[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Reads a command's whole stdout. */
static char *run_capture(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        die(cmd);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len - 1 == 0)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = 0;
    if (pclose(p) != 0) {
        fprintf(stderr, "conf_oci_common: command failed: %s\n", cmd);
        exit(1);
    }
    return buf;
}

/* ---- keys ---- */
struct key {
    const char *label;
    char file[600];
    ocisbx_key *k;
    char key_id[300];
};

static void make_key(struct key *key, const char *label, int bits, int pkcs1)
{
    key->label = label;
    if (bits == 0) {
        snprintf(key->file, sizeof key->file, "%s", VEC_KEY);
    } else {
        /* the pool's keys: the test is about signing, not generating */
        EVP_PKEY *p = bits == 4096   ? test_key_pool_rsa4096()
                      : bits == 2048 ? test_key_pool_rsa2048()
                                     : EVP_RSA_gen((unsigned)bits);
        if (!p)
            die("RSA key generation");
        snprintf(key->file, sizeof key->file, "%s/%s.pem", tmpdir, label);
        BIO *f = BIO_new_file(key->file, "wb");
        int ok = f && (pkcs1 ? PEM_write_bio_PrivateKey_traditional(f, p, NULL, NULL, 0, NULL, NULL)
                             : PEM_write_bio_PrivateKey(f, p, NULL, NULL, 0, NULL, NULL));
        BIO_free(f);
        EVP_PKEY_free(p);
        if (!ok)
            die("writing a key");
    }
    if (ocisbx_key_load_file(key->file, NULL, &key->k))
        die(ocisbx_error_message(ocisbx_error_last()));
    char fp[48];
    ocisbx_key_fingerprint(key->k, fp);
    snprintf(key->key_id, sizeof key->key_id, "%s/%s/%s", TENANCY, USER, fp);
}

/* ---- bodies ---- */
enum body { B_NONE, B_EMPTY, B_JSON, B_UTF8, B_1K, B_5M, B_BINARY };
static const char *body_file[7];
static const char *body_name[7] = {"none", "empty", "json", "utf8", "1KiB", "5MiB text", "binary"};

static void make_bodies(void)
{
    body_file[B_EMPTY] = tmp_path("empty.body");
    write_bytes(body_file[B_EMPTY], "", 0);
    static const char json[] = "{\"displayName\":\"sbx-1\",\"compartmentId\":\"ocid1.compartment.oc1..aaaa\","
                               "\"freeformTags\":{\"team\":\"agents\"},\"timeoutInSeconds\":3600}";
    body_file[B_JSON] = tmp_path("json.body");
    write_bytes(body_file[B_JSON], json, strlen(json));
    static const char utf8[] =
        "h\xc3\xa9llo w\xc3\xb6rld \xe2\x80\x94 \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e "
        "\xf0\x9f\x8e\x89\nline two\ttab \"quoted\" \\ backslash\r\n";
    body_file[B_UTF8] = tmp_path("utf8.body");
    write_bytes(body_file[B_UTF8], utf8, strlen(utf8));
    char k1[1024];
    for (size_t i = 0; i < sizeof k1; i++)
        k1[i] = (char)('a' + i % 26);
    body_file[B_1K] = tmp_path("1k.body");
    write_bytes(body_file[B_1K], k1, sizeof k1);
    /* 5 MiB of text mixing ASCII and multi-byte UTF-8 (whole characters). */
    size_t big = 5u << 20;
    char *b = malloc(big);
    static const char unit[] =
        "The quick brown fox \xc3\xa9\xc3\xa8 jumps \xe2\x82\xac over 42 lazy dogs \xf0\x9f\x90\x95.\n";
    size_t ul = sizeof unit - 1, n = 0;
    while (n + ul <= big) {
        memcpy(b + n, unit, ul);
        n += ul;
    }
    while (n < big)
        b[n++] = 'x';
    body_file[B_5M] = tmp_path("5m.body");
    write_bytes(body_file[B_5M], b, big);
    free(b);
    /* Binary: random bytes, invalid as UTF-8. */
    unsigned char bin[4096];
    RAND_bytes(bin, sizeof bin);
    bin[0] = 0xff;
    bin[1] = 0xfe;
    bin[2] = 0x00;
    body_file[B_BINARY] = tmp_path("binary.body");
    write_bytes(body_file[B_BINARY], bin, sizeof bin);
}

/* ---- the request matrix ---- */
struct req {
    const char *method, *url, *date, *content_type;
    enum body body;
    int exclude_body;
    int stream; /* give the body to the signer as a stream */
};

static const struct req matrix[] = {
    {"GET",
     "https://iaas.us-ashburn-1.oraclecloud.com/20160918/"
     "instances?compartmentId=ocid1.compartment.oc1..aaaa&limit=10",
     "Thu, 05 Jan 2014 21:31:40 GMT", NULL, B_NONE, 0, 0},
    {"HEAD", "https://objectstorage.us-ashburn-1.oraclecloud.com/n/ns/b/bucket/o/file%20name%2B1.txt",
     "Mon, 30 Nov 2026 04:00:00 GMT", NULL, B_NONE, 0, 0},
    {"DELETE", "https://genai.us-chicago-1.oci.oraclecloud.com:8443/20250101/sandboxes/ocid1.sandbox.oc1..abc",
     "Tue, 29 Feb 2028 23:59:59 GMT", NULL, B_NONE, 0, 0},
    {"GET", "https://genai.example.com/20250101/sandboxes/s1/files?path=%2Fworkspace%2Fsrc%2Fa%20b.c&q=a%2Bb%26c%3Dd",
     "Thu, 05 Jan 2014 21:31:40 GMT", NULL, B_NONE, 0, 0},
    {"GET",
     "https://genai.example.com/20250101/search?name=%C3%A9t%C3%A9&emoji=%F0%9F%8E%89&jp=%E6%97%A5%E6%9C%AC%E8%AA%9E",
     "Thu, 05 Jan 2014 21:31:40 GMT", NULL, B_NONE, 0, 0},
    {"GET", "http://127.0.0.1:8080/20250101/sandboxes?lifecycleState=ACTIVE", "Sat, 01 Jan 2000 00:00:00 GMT", NULL,
     B_NONE, 0, 0},
    {"GET", "https://host.example.com", "Thu, 05 Jan 2014 21:31:40 GMT", NULL, B_NONE, 0, 0},
    {"GET", "http://[::1]:9000/v1/x?y=1", "Thu, 05 Jan 2014 21:31:40 GMT", NULL, B_NONE, 0, 0},
    {"OPTIONS", "https://host.example.com:4443/a/b/c", "Thu, 05 Jan 2014 21:31:40 GMT", NULL, B_NONE, 0, 0},
    {"POST", "https://genai.example.com/20250101/sandboxes", "Thu, 05 Jan 2014 21:31:40 GMT", NULL, B_NONE, 0, 0},
    {"POST", "https://genai.example.com/20250101/sandboxes/s1/actions/extend", "Thu, 05 Jan 2014 21:31:40 GMT", NULL,
     B_EMPTY, 0, 0},
    {"POST", "https://genai.example.com:8443/20250101/sandboxes", "Wed, 15 Jul 2026 12:34:56 GMT", NULL, B_JSON, 0,
     0},
    {"PUT", "https://genai.example.com:8443/20250101/sandboxes/s1/files?path=%2Fworkspace%2Fnotes%20%C3%A9.txt",
     "Wed, 15 Jul 2026 12:34:56 GMT", "text/plain; charset=utf-8", B_UTF8, 0, 1},
    {"PATCH", "https://genai.example.com/20250101/sandboxes/s1?opc=%E2%9C%93", "Wed, 15 Jul 2026 12:34:56 GMT", NULL,
     B_JSON, 0, 0},
    {"POST", "http://localhost:18080/20250101/sandboxes/s1/commands", "Thu, 05 Jan 2014 21:31:40 GMT", NULL, B_1K, 0,
     0},
    {"PUT", "https://objectstorage.example.com/n/ns/b/bk/o/big.txt", "Thu, 05 Jan 2014 21:31:40 GMT", "text/plain",
     B_5M, 0, 1},
    {"PUT", "https://objectstorage.example.com/n/ns/b/bk/o/stream.bin", "Thu, 05 Jan 2014 21:31:40 GMT",
     "application/octet-stream", B_1K, 1, 0},
    {"put", "https://genai.example.com/20250101/lower", "Thu, 05 Jan 2014 21:31:40 GMT", NULL, B_UTF8, 0, 0},
};
#define MATRIX_N (sizeof matrix / sizeof matrix[0])

static const struct req binary_matrix[] = {
    {"POST", "https://genai.example.com/20250101/sandboxes/s1/files?path=%2Fbin%2Fblob",
     "Thu, 05 Jan 2014 21:31:40 GMT", "application/octet-stream", B_BINARY, 0, 0},
    {"PUT", "https://genai.example.com:8443/20250101/sandboxes/s1/files?path=%2Fa.bin",
     "Wed, 15 Jul 2026 12:34:56 GMT", "application/octet-stream", B_BINARY, 0, 1},
};
#define BINARY_N (sizeof binary_matrix / sizeof binary_matrix[0])

static int body_method(const char *m)
{
    char u[16];
    size_t i;
    for (i = 0; m[i] && i < sizeof u - 1; i++)
        u[i] = (char)((m[i] >= 'a' && m[i] <= 'z') ? m[i] - 32 : m[i]);
    u[i] = 0;
    return !strcmp(u, "POST") || !strcmp(u, "PUT") || !strcmp(u, "PATCH");
}

struct stream {
    const unsigned char *p;
    size_t left;
};

static int64_t read_chunks(void *buf, size_t cap, void *ud)
{
    struct stream *s = ud;
    size_t n = s->left < cap ? s->left : cap;
    if (n > 1000)
        n = 1000; /* small, odd reads */
    memcpy(buf, s->p, n);
    s->p += n;
    s->left -= n;
    return (int64_t)n;
}

/* Signs r with our library. */
static ocisbx_headers *sign_ours(const struct key *key, const struct req *r)
{
    ocisbx_sign_request *sr = NULL;
    if (ocisbx_sign_request_new(r->method, r->url, &sr) || ocisbx_sign_request_set_date(sr, r->date))
        die(ocisbx_error_message(ocisbx_error_last()));
    if (r->content_type && ocisbx_sign_request_set_content_type(sr, r->content_type))
        die("set_content_type");
    if (r->exclude_body)
        ocisbx_sign_request_set_exclude_body(sr, 1);
    if (r->body != B_NONE) {
        size_t len;
        unsigned char *data = read_bytes(body_file[r->body], &len);
        int rc;
        if (r->stream) {
            struct stream s = {data, len};
            rc = ocisbx_sign_request_set_body_stream(sr, read_chunks, &s);
        } else {
            rc = ocisbx_sign_request_set_body(sr, data, len);
        }
        free(data);
        if (rc)
            die(ocisbx_error_message(ocisbx_error_last()));
    }
    ocisbx_headers *h = NULL;
    if (ocisbx_sign_with_key(key->key_id, key->k, sr, &h))
        die(ocisbx_error_message(ocisbx_error_last()));
    ocisbx_sign_request_free(sr);
    return h;
}

static void expect_equal(const char *label, const char *what, const char *ours, const char *theirs)
{
    if (ours && theirs && strcmp(ours, theirs) == 0)
        return;
    if (!ours && !theirs)
        return;
    failures++;
    fprintf(stderr, "MISMATCH %s %s:\n  ours:       %s\n  oci-common: %s\n", label, what, ours ? ours : "(none)",
            theirs ? theirs : "(none)");
}

static const char *json_str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int compare_with_oci_common(struct key *keys, size_t nkeys, const char *modules)
{
    cJSON *jobs = cJSON_CreateArray();
    for (size_t k = 0; k < nkeys; k++) {
        for (size_t i = 0; i < MATRIX_N; i++) {
            const struct req *r = &matrix[i];
            cJSON *j = cJSON_CreateObject();
            char fp[48];
            ocisbx_key_fingerprint(keys[k].k, fp);
            cJSON_AddStringToObject(j, "key_file", keys[k].file);
            cJSON_AddStringToObject(j, "tenancy", TENANCY);
            cJSON_AddStringToObject(j, "user", USER);
            cJSON_AddStringToObject(j, "fingerprint", fp);
            cJSON_AddStringToObject(j, "method", r->method);
            cJSON_AddStringToObject(j, "url", r->url);
            cJSON_AddStringToObject(j, "date", r->date);
            if (r->body != B_NONE)
                cJSON_AddStringToObject(j, "body_file", body_file[r->body]);
            else
                cJSON_AddNullToObject(j, "body_file");
            if (r->content_type)
                cJSON_AddStringToObject(j, "content_type", r->content_type);
            else
                cJSON_AddNullToObject(j, "content_type");
            cJSON_AddBoolToObject(j, "exclude_body", r->exclude_body);
            cJSON_AddItemToArray(jobs, j);
        }
    }
    char *text = cJSON_PrintUnformatted(jobs);
    cJSON_Delete(jobs);
    const char *jobs_path = tmp_path("jobs.json");
    write_bytes(jobs_path, text, strlen(text));
    free(text);

    char cmd[2048];
    snprintf(cmd, sizeof cmd, "node '%s/tests/conformance/oci_common_sign.js' '%s' '%s'", OCISBX_SOURCE_DIR, modules,
             jobs_path);
    char *out = run_capture(cmd);
    cJSON *res = cJSON_Parse(out);
    free(out);
    if (!cJSON_IsArray(res) || (size_t)cJSON_GetArraySize(res) != nkeys * MATRIX_N)
        die("oci_common_sign.js gave no array of the expected size");

    int n = 0;
    for (size_t k = 0; k < nkeys; k++) {
        for (size_t i = 0; i < MATRIX_N; i++, n++) {
            const struct req *r = &matrix[i];
            const cJSON *o = cJSON_GetArrayItem(res, n);
            ocisbx_headers *h = sign_ours(&keys[k], r);
            char label[128];
            snprintf(label, sizeof label, "[%s #%zu %s %s body=%s%s]", keys[k].label, i, r->method,
                     r->url + strlen("https://") - (strncmp(r->url, "http:", 5) == 0), body_name[r->body],
                     r->exclude_body ? " exclude-body" : "");
            expect_equal(label, "authorization", ocisbx_headers_get(h, "authorization"),
                         json_str(o, "authorization"));
            expect_equal(label, "host", ocisbx_headers_get(h, "host"), json_str(o, "host"));
            if (body_method(r->method) && !r->exclude_body) {
                expect_equal(label, "content-length", ocisbx_headers_get(h, "content-length"),
                             json_str(o, "content_length"));
                expect_equal(label, "content-type", ocisbx_headers_get(h, "content-type"),
                             json_str(o, "content_type"));
                expect_equal(label, "x-content-sha256", ocisbx_headers_get(h, "x-content-sha256"),
                             json_str(o, "x_content_sha256"));
            } else if (ocisbx_headers_get(h, "x-content-sha256")) {
                failures++;
                fprintf(stderr, "%s: body headers signed where they must not be\n", label);
            }
            ocisbx_headers_free(h);
        }
    }
    cJSON_Delete(res);
    return n;
}

/* The signing string exactly as the spec defines it, built here on its own
 * (not by the library) for the openssl comparison. */
static void spec_signing_string(const struct req *r, const char *host, const char *target, const char *clen,
                                const char *sha, char *out, size_t cap)
{
    char m[16];
    size_t i;
    for (i = 0; r->method[i] && i < sizeof m - 1; i++)
        m[i] = (char)((r->method[i] >= 'A' && r->method[i] <= 'Z') ? r->method[i] + 32 : r->method[i]);
    m[i] = 0;
    snprintf(
        out, cap,
        "date: %s\n(request-target): %s %s\nhost: %s\ncontent-length: %s\ncontent-type: %s\nx-content-sha256: %s",
        r->date, m, target, host, clen, r->content_type, sha);
}

static char *trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

static int compare_binary_with_openssl(struct key *keys, size_t nkeys)
{
    int n = 0;
    for (size_t k = 0; k < nkeys; k++) {
        for (size_t i = 0; i < BINARY_N; i++, n++) {
            const struct req *r = &binary_matrix[i];
            char label[128];
            snprintf(label, sizeof label, "[%s binary #%zu %s]", keys[k].label, i, r->method);
            ocisbx_headers *h = sign_ours(&keys[k], r);
            char cmd[2048];
            snprintf(cmd, sizeof cmd, "openssl dgst -sha256 -binary '%s' | base64 -w0", body_file[r->body]);
            char *sha = trim(run_capture(cmd));
            size_t blen;
            free(read_bytes(body_file[r->body], &blen));
            char clen[32];
            snprintf(clen, sizeof clen, "%zu", blen);
            /* host and target, taken from the URL by hand for these fixed URLs */
            const char *a = strstr(r->url, "://") + 3;
            size_t hl = strcspn(a, "/");
            char host[256];
            snprintf(host, sizeof host, "%.*s", (int)hl, a);
            char ss[4096];
            spec_signing_string(r, host, a + hl, clen, sha, ss, sizeof ss);
            const char *ss_path = tmp_path("ss.txt");
            write_bytes(ss_path, ss, strlen(ss));
            snprintf(cmd, sizeof cmd, "openssl dgst -sha256 -sign '%s' '%s' | base64 -w0", keys[k].file, ss_path);
            char *sig = trim(run_capture(cmd));
            char want[4096];
            snprintf(want, sizeof want,
                     "Signature version=\"1\",keyId=\"%s\",algorithm=\"rsa-sha256\",headers=\"date (request-target) "
                     "host content-length content-type x-content-sha256\",signature=\"%s\"",
                     keys[k].key_id, sig);
            expect_equal(label, "authorization (vs openssl)", ocisbx_headers_get(h, "authorization"), want);
            expect_equal(label, "x-content-sha256 (vs openssl)", ocisbx_headers_get(h, "x-content-sha256"), sha);
            expect_equal(label, "content-length", ocisbx_headers_get(h, "content-length"), clen);
            free(sha);
            free(sig);
            ocisbx_headers_free(h);
        }
    }
    return n;
}

int main(void)
{
    if (!have_cmd("node")) {
        printf("conf_oci_common: skipped: node is not installed (needed to run oci-common)\n");
        return SKIP;
    }
    char modules[600], marker[700];
    snprintf(modules, sizeof modules, "%s/node_modules", OCISBX_BINARY_DIR);
    snprintf(marker, sizeof marker, "%s/oci-common/package.json", modules);
    if (!file_exists(marker)) {
        if (!have_cmd("npm")) {
            printf("conf_oci_common: skipped: npm is not installed and %s has no oci-common\n", modules);
            return SKIP;
        }
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "npm install --no-audit --no-fund --prefix '%s' oci-common >&2", OCISBX_BINARY_DIR);
        printf("conf_oci_common: installing oci-common: %s\n", cmd);
        fflush(stdout);
        if (system(cmd) != 0 || !file_exists(marker))
            die("npm install oci-common failed");
    }
    char ver[800];
    snprintf(ver, sizeof ver, "node -p \"require('%s/oci-common/package.json').version\"", modules);
    char *version = trim(run_capture(ver));
    printf("conf_oci_common: using oci-common %s from %s\n", version, modules);
    free(version);

    snprintf(tmpdir, sizeof tmpdir, "%s/conf_oci_common.XXXXXX", OCISBX_BINARY_DIR);
    if (!mkdtemp(tmpdir))
        die("mkdtemp");
    struct key keys[3];
    make_key(&keys[0], "vector-1024", 0, 0);
    make_key(&keys[1], "rsa-2048-pkcs8", 2048, 0);
    make_key(&keys[2], "rsa-4096-pkcs1", 4096, 1);
    make_bodies();

    int n1 = compare_with_oci_common(keys, 3, modules);
    int n2 = compare_binary_with_openssl(keys, 3);

    for (size_t k = 0; k < 3; k++)
        ocisbx_key_free(keys[k].k);
    char rm[700];
    snprintf(rm, sizeof rm, "rm -rf '%s'", tmpdir);
    if (system(rm) != 0)
        fprintf(stderr, "conf_oci_common: could not remove %s\n", tmpdir);

    printf("conf_oci_common: %d requests compared with oci-common, %d binary-body requests with openssl\n", n1, n2);
    printf("%d passed, %d failed\n", n1 + n2 - failures, failures);
    return failures ? 1 : 0;
}
