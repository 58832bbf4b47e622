/* The OCI HTTP Signature v1 signer (see docs/auth.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "ocisbx/auth.h"
#include "ocisbx/util.h"
#include "util/internal.h"

#define EMPTY_SHA256 "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
#define HEADERS_BASE "date (request-target) host"
#define HEADERS_BODY HEADERS_BASE " content-length content-type x-content-sha256"

struct ocisbx_sign_request {
    char *method; /* lowercase, as in (request-target) */
    char *target; /* path[?query] exactly as in the URL */
    char *host;   /* authority as written, or set_host */
    char *date;   /* NULL: now, at signing time */
    char *content_type;
    char sha256[OCISBX_SHA256_B64_LEN + 1];
    uint64_t body_len;
    int body_method; /* POST, PUT, PATCH sign the body headers */
    int exclude_body;
};

static int has_ctl(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            return 1;
    }
    return 0;
}

static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* The URL as error messages show it (as the transport does): user:password@
 * replaced by ***@, then escaped by ocisbx_escape_shown (one line). */
static void shown_url(const char *url, char *out, size_t cap)
{
    const char *sep = strstr(url, "://");
    const char *auth = sep ? sep + 3 : NULL;
    const char *at = NULL;
    if (auth) {
        size_t alen = strcspn(auth, "/?#");
        for (size_t i = 0; i < alen; i++)
            if (auth[i] == '@')
                at = auth + i;
    }
    char raw[512]; /* longer than any cap used here: each byte shows as 1+ bytes */
    if (at)
        snprintf(raw, sizeof raw, "%.*s***%s", (int)(auth - url), url, at);
    else
        snprintf(raw, sizeof raw, "%s", url);
    ocisbx_escape_shown(raw, out, cap);
}

/* Splits an absolute http(s) URL into the signed host and request target. */
static int parse_url(const char *url, char **host, char **target)
{
    char shown[320];
    shown_url(url, shown, sizeof shown);
    const char *sep = strstr(url, "://");
    size_t sl = sep ? (size_t)(sep - url) : 0;
    if (!sep || !((sl == 4 && ocisbx_strncasecmp(url, "http", 4) == 0) ||
                  (sl == 5 && ocisbx_strncasecmp(url, "https", 5) == 0)))
        return ocisbx_fail(OCISBX_EINVAL, "URL \"%s\": not an absolute http or https URL", shown);
    for (const unsigned char *p = (const unsigned char *)url; *p; p++) {
        if (*p <= ' ' || *p == 0x7f)
            return ocisbx_fail(OCISBX_EINVAL, "URL \"%s\": contains a space or control character", shown);
    }
    const char *auth = sep + 3;
    size_t alen = strcspn(auth, "/?#");
    const char *at = NULL;
    for (size_t i = 0; i < alen; i++) {
        if (auth[i] == '@')
            at = auth + i;
    }
    const char *h = at ? at + 1 : auth;
    size_t hlen = alen - (size_t)(h - auth);
    if (hlen == 0 || h[0] == ':')
        return ocisbx_fail(OCISBX_EINVAL, "URL \"%s\": no host", shown);

    const char *path = auth + alen;
    size_t plen = strcspn(path, "?#");
    const char *query = path[plen] == '?' ? path + plen + 1 : NULL;
    size_t qlen = query ? strcspn(query, "#") : 0;

    ocisbx_buf t = OCISBX_BUF_INIT;
    int rc = ocisbx_buf_reserve(&t, plen + qlen + 2);
    if (!rc)
        rc = plen ? ocisbx_buf_append(&t, path, plen) : ocisbx_buf_append(&t, "/", 1);
    if (!rc && qlen) {
        rc = ocisbx_buf_append(&t, "?", 1);
        if (!rc)
            rc = ocisbx_buf_append(&t, query, qlen);
    }
    char *hs = rc ? NULL : ocisbx_strndup(h, hlen);
    if (rc || !hs) {
        ocisbx_buf_free(&t);
        return rc ? rc : ocisbx_fail_nomem();
    }
    *host = hs;
    *target = ocisbx_buf_detach(&t);
    return 0;
}

int ocisbx_sign_request_new(const char *method, const char *url, ocisbx_sign_request **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign_request_new: out is NULL");
    *out = NULL;
    if (!method || !*method)
        return ocisbx_fail(OCISBX_EINVAL, "sign request: no HTTP method");
    for (const char *p = method; *p; p++) {
        if (!is_tchar((unsigned char)*p))
            return ocisbx_fail(OCISBX_EINVAL, "sign request: \"%s\" is not an HTTP method", OCISBX_SHOWN(method));
    }
    if (!url)
        return ocisbx_fail(OCISBX_EINVAL, "sign request: no URL");
    ocisbx_sign_request *r = calloc(1, sizeof *r);
    if (!r)
        return ocisbx_fail_nomem();
    int rc = parse_url(url, &r->host, &r->target);
    if (rc) {
        free(r);
        return rc;
    }
    r->method = ocisbx_strdup(method);
    r->content_type = ocisbx_strdup("application/json");
    if (!r->method || !r->content_type) {
        ocisbx_sign_request_free(r);
        return ocisbx_fail_nomem();
    }
    for (char *p = r->method; *p; p++) {
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p + ('a' - 'A'));
    }
    r->body_method = !strcmp(r->method, "post") || !strcmp(r->method, "put") || !strcmp(r->method, "patch");
    memcpy(r->sha256, EMPTY_SHA256, sizeof r->sha256);
    *out = r;
    return 0;
}

static int replace_str(char **slot, const char *value, const char *what)
{
    if (!value)
        return ocisbx_fail(OCISBX_EINVAL, "sign request: %s is NULL", what);
    if (has_ctl(value))
        return ocisbx_fail(OCISBX_EINVAL, "sign request: %s contains a control character", what);
    char *s = ocisbx_strdup(value);
    if (!s)
        return ocisbx_fail_nomem();
    free(*slot);
    *slot = s;
    return 0;
}

int ocisbx_sign_request_set_date(ocisbx_sign_request *r, const char *date)
{
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign_request_set_date: r is NULL");
    if (!date) {
        /* Back to "now at signing time" (a retry is signed afresh). */
        free(r->date);
        r->date = NULL;
        return 0;
    }
    if (!*date)
        return ocisbx_fail(OCISBX_EINVAL, "sign request: empty date");
    return replace_str(&r->date, date, "date");
}

int ocisbx_sign_request_set_content_type(ocisbx_sign_request *r, const char *content_type)
{
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign_request_set_content_type: r is NULL");
    return replace_str(&r->content_type, content_type, "content type");
}

int ocisbx_sign_request_set_host(ocisbx_sign_request *r, const char *host)
{
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign_request_set_host: r is NULL");
    if (host && (!*host || strchr(host, ' ')))
        return ocisbx_fail(OCISBX_EINVAL, "sign request: host \"%s\" is empty or has a space", OCISBX_SHOWN(host));
    return replace_str(&r->host, host, "host");
}

int ocisbx_sign_request_set_exclude_body(ocisbx_sign_request *r, int exclude)
{
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign_request_set_exclude_body: r is NULL");
    r->exclude_body = exclude != 0;
    return 0;
}

static void b64_digest(const unsigned char md[32], char out[OCISBX_SHA256_B64_LEN + 1])
{
    EVP_EncodeBlock((unsigned char *)out, md, 32);
}

int ocisbx_sign_request_set_body(ocisbx_sign_request *r, const void *data, size_t len)
{
    if (!r || (!data && len))
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign_request_set_body: NULL argument");
    unsigned char md[32];
    if (!EVP_Digest(len ? data : "", len, md, NULL, EVP_sha256(), NULL))
        return ocisbx_fail(OCISBX_EUNSUPPORTED, "SHA-256 failed");
    b64_digest(md, r->sha256);
    r->body_len = len;
    return 0;
}

int ocisbx_sign_request_set_body_stream(ocisbx_sign_request *r, ocisbx_read_fn src, void *user_data)
{
    if (!r || !src)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign_request_set_body_stream: NULL argument");
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char *buf = malloc(65536);
    int rc = 0;
    if (!ctx || !buf) {
        rc = ocisbx_fail_nomem();
        goto done;
    }
    if (!EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
        rc = ocisbx_fail(OCISBX_EUNSUPPORTED, "SHA-256 failed");
        goto done;
    }
    uint64_t total = 0;
    for (;;) {
        int64_t n = src(buf, 65536, user_data);
        if (n < 0) {
            /* Keep the stream's own message if it set one. */
            if (ocisbx_error_code(ocisbx_error_last()) == (int)n)
                rc = ocisbx_error_wrap("reading the request body to sign: ");
            else
                rc = ocisbx_fail((int)n, "reading the request body to sign: the stream failed (%s)",
                                 ocisbx_strerror((int)n));
            goto done;
        }
        if (n == 0)
            break;
        if (n > 65536) {
            rc = ocisbx_fail(OCISBX_EINVAL, "request body stream returned more bytes than asked");
            goto done;
        }
        EVP_DigestUpdate(ctx, buf, (size_t)n);
        total += (uint64_t)n;
    }
    unsigned char md[32];
    if (!EVP_DigestFinal_ex(ctx, md, NULL)) {
        rc = ocisbx_fail(OCISBX_EUNSUPPORTED, "SHA-256 failed");
        goto done;
    }
    b64_digest(md, r->sha256);
    r->body_len = total;
done:
    EVP_MD_CTX_free(ctx);
    free(buf);
    return rc;
}

int ocisbx_sign_request_set_body_sha256(ocisbx_sign_request *r, const char *sha256_b64, uint64_t len)
{
    if (!r || !sha256_b64)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign_request_set_body_sha256: NULL argument");
    size_t n = strlen(sha256_b64);
    int ok = n == OCISBX_SHA256_B64_LEN && sha256_b64[43] == '=' &&
             strspn(sha256_b64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") == 43;
    if (!ok)
        return ocisbx_fail(OCISBX_EINVAL, "sign request: \"%s\" is not a base64 SHA-256 (44 characters)",
                           OCISBX_SHOWN(sha256_b64));
    memcpy(r->sha256, sha256_b64, sizeof r->sha256);
    r->body_len = len;
    return 0;
}

void ocisbx_sign_request_free(ocisbx_sign_request *r)
{
    if (!r)
        return;
    free(r->method);
    free(r->target);
    free(r->host);
    free(r->date);
    free(r->content_type);
    free(r);
}

static int signs_body(const ocisbx_sign_request *r)
{
    return r->body_method && !r->exclude_body;
}

/* The signing string for r with the given date, built with one allocation. */
static int build_string(const ocisbx_sign_request *r, const char *date, const char *clen, ocisbx_buf *b)
{
    size_t need = 6 + strlen(date) + 19 + strlen(r->method) + 1 + strlen(r->target) + 7 + strlen(r->host);
    if (signs_body(r))
        need += 17 + strlen(clen) + 15 + strlen(r->content_type) + 19 + OCISBX_SHA256_B64_LEN;
    int rc = ocisbx_buf_reserve(b, need);
    if (rc)
        return rc;
    ocisbx_buf_appends(b, "date: ");
    ocisbx_buf_appends(b, date);
    ocisbx_buf_appends(b, "\n(request-target): ");
    ocisbx_buf_appends(b, r->method);
    ocisbx_buf_append(b, " ", 1);
    ocisbx_buf_appends(b, r->target);
    ocisbx_buf_appends(b, "\nhost: ");
    ocisbx_buf_appends(b, r->host);
    if (signs_body(r)) {
        ocisbx_buf_appends(b, "\ncontent-length: ");
        ocisbx_buf_appends(b, clen);
        ocisbx_buf_appends(b, "\ncontent-type: ");
        ocisbx_buf_appends(b, r->content_type);
        ocisbx_buf_appends(b, "\nx-content-sha256: ");
        ocisbx_buf_appends(b, r->sha256);
    }
    return 0;
}

static int current_date(const ocisbx_sign_request *r, char now[OCISBX_RFC1123_LEN + 1], const char **date)
{
    if (r->date) {
        *date = r->date;
        return 0;
    }
    int rc = ocisbx_time_format_rfc1123(time(NULL), now);
    *date = now;
    return rc;
}

int ocisbx_sign_request_signing_string(const ocisbx_sign_request *r, char **out)
{
    if (!r || !out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign_request_signing_string: NULL argument");
    *out = NULL;
    char now[OCISBX_RFC1123_LEN + 1];
    const char *date;
    int rc = current_date(r, now, &date);
    if (rc)
        return rc;
    char clen[24];
    snprintf(clen, sizeof clen, "%" PRIu64, r->body_len);
    ocisbx_buf b = OCISBX_BUF_INIT;
    rc = build_string(r, date, clen, &b);
    if (rc) {
        ocisbx_buf_free(&b);
        return rc;
    }
    *out = ocisbx_buf_detach(&b);
    return 0;
}

static int check_key_id(const char *key_id)
{
    if (!key_id || !*key_id)
        return ocisbx_fail(OCISBX_EINVAL, "sign: empty keyId");
    /* keyId may be a token: never put it in the message. */
    if (strchr(key_id, '"') || has_ctl(key_id))
        return ocisbx_fail(OCISBX_EINVAL, "sign: keyId contains a quote or control character");
    return 0;
}

int ocisbx_sign_with_key(const char *key_id, const ocisbx_key *key, const ocisbx_sign_request *r,
                         ocisbx_headers **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign_with_key: out is NULL");
    *out = NULL;
    if (!key || !r)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign_with_key: NULL argument");
    int rc = check_key_id(key_id);
    if (rc)
        return rc;
    char now[OCISBX_RFC1123_LEN + 1];
    const char *date;
    rc = current_date(r, now, &date);
    if (rc)
        return rc;
    char clen[24];
    snprintf(clen, sizeof clen, "%" PRIu64, r->body_len);

    ocisbx_buf ss = OCISBX_BUF_INIT, az = OCISBX_BUF_INIT;
    char *sig = NULL;
    ocisbx_headers *h = NULL;
    rc = build_string(r, date, clen, &ss);
    if (!rc)
        rc = ocisbx_key_sign_base64(key, ss.data, ss.len, &sig);
    if (rc)
        goto done;

    const char *names = signs_body(r) ? HEADERS_BODY : HEADERS_BASE;
    rc = ocisbx_buf_reserve(&az, 64 + strlen(key_id) + strlen(names) + strlen(sig));
    if (rc)
        goto done;
    ocisbx_buf_appends(&az, "Signature version=\"1\",keyId=\"");
    ocisbx_buf_appends(&az, key_id);
    ocisbx_buf_appends(&az, "\",algorithm=\"rsa-sha256\",headers=\"");
    ocisbx_buf_appends(&az, names);
    ocisbx_buf_appends(&az, "\",signature=\"");
    ocisbx_buf_appends(&az, sig);
    ocisbx_buf_append(&az, "\"", 1);

    rc = ocisbx_headers_new(&h);
    if (!rc)
        rc = ocisbx_headers_add(h, "date", date);
    if (!rc)
        rc = ocisbx_headers_add(h, "host", r->host);
    if (!rc && signs_body(r)) {
        rc = ocisbx_headers_add(h, "content-length", clen);
        if (!rc)
            rc = ocisbx_headers_add(h, "content-type", r->content_type);
        if (!rc)
            rc = ocisbx_headers_add(h, "x-content-sha256", r->sha256);
    }
    if (!rc)
        rc = ocisbx_headers_add(h, "authorization", az.data);
    if (!rc) {
        *out = h;
        h = NULL;
    }
done:
    ocisbx_headers_free(h);
    ocisbx_buf_free(&ss);
    ocisbx_buf_wipe_free(&az); /* holds the keyId, maybe a token */
    free(sig);
    return rc;
}

int ocisbx_sign(ocisbx_credentials *creds, const ocisbx_sign_request *r, ocisbx_headers **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign: out is NULL");
    *out = NULL;
    if (!creds || !r)
        return ocisbx_fail(OCISBX_EINVAL, "ocisbx_sign: NULL argument");
    char *key_id = NULL;
    ocisbx_key *key = NULL;
    int rc = ocisbx_credentials_get(creds, &key_id, &key);
    if (rc)
        return rc;
    rc = ocisbx_sign_with_key(key_id, key, r, out);
    ocisbx_free_secret(key_id);
    ocisbx_key_free(key);
    return rc;
}
