/* A fake instance metadata service + federation endpoint (see fake_imds.h).
 * Written with OpenSSL and libmicrohttpd only, not with the library's
 * signer or verifier, so that it catches the client's mistakes. */
#include "fake_imds.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "key_pool.h"

#define MAX_BODY (64 * 1024)

struct fake_imds {
    struct MHD_Daemon *daemon;
    struct MHD_Daemon *tls_daemon;
    char *tls_key_pem;
    char *tls_cert_pem;
    char tls_url[64];
    pthread_mutex_t lock;
    char metadata_url[64];
    char federation_url[64];
    char tenancy[256];
    char region[64];
    EVP_PKEY *ca_key;
    X509 *ca;
    char *ca_pem;
    EVP_PKEY *leaf_key;
    char *leaf_pem;
    char *leaf_key_pem;
    char fingerprint[60];
    bool has_exp, has_iat;
    int64_t exp_in, iat_in;
    int federation_status;
    int metadata_status;
    int issued;
    int federation_requests;
    int refused;
    int answers;
    char last_refusal[512];
    char *last_token;
    EVP_PKEY *session_pub;
};

/* ---- small OpenSSL helpers ---------------------------------------------------- */

static char *bio_text(BIO *bio)
{
    char *data = NULL;
    long n = BIO_get_mem_data(bio, &data);
    char *out = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (out) {
        memcpy(out, data, (size_t)n);
        out[n] = '\0';
    }
    return out;
}

static char *cert_pem(X509 *cert)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *out = bio && PEM_write_bio_X509(bio, cert) ? bio_text(bio) : NULL;
    BIO_free(bio);
    return out;
}

/* The instance metadata service serves PKCS#1 ("BEGIN RSA PRIVATE KEY"). */
static char *key_pem(EVP_PKEY *key)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *out = bio && PEM_write_bio_PrivateKey_traditional(bio, key, NULL, NULL, 0, NULL, NULL) ? bio_text(bio)
                                                                                                 : NULL;
    BIO_free(bio);
    return out;
}

/* Standard base64 (padded) to bytes. */
static unsigned char *b64_decode(const char *s, size_t n, size_t *out_len)
{
    if (n == 0 || n % 4 != 0)
        return NULL;
    unsigned char *bin = malloc(n / 4 * 3 + 1);
    if (!bin)
        return NULL;
    int got = EVP_DecodeBlock(bin, (const unsigned char *)s, (int)n);
    if (got < 0) {
        free(bin);
        return NULL;
    }
    size_t pad = (s[n - 1] == '=') + (s[n - 2] == '=');
    *out_len = (size_t)got - pad;
    return bin;
}

static char *b64_encode(const unsigned char *data, size_t n)
{
    char *out = malloc((n + 2) / 3 * 4 + 1);
    if (out)
        EVP_EncodeBlock((unsigned char *)out, data, (int)n);
    return out;
}

static char *b64url(const char *text)
{
    char *s = b64_encode((const unsigned char *)text, strlen(text));
    if (!s)
        return NULL;
    for (char *p = s; *p; p++) {
        if (*p == '+')
            *p = '-';
        else if (*p == '/')
            *p = '_';
        else if (*p == '=') {
            *p = '\0';
            break;
        }
    }
    return s;
}

/* The PEM body as the federation service receives it. */
static char *pem_body(const char *pem)
{
    char *out = calloc(1, strlen(pem) + 1);
    if (!out)
        return NULL;
    const char *p = pem;
    char *o = out;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (strncmp(p, "-----", 5) != 0) {
            memcpy(o, p, n);
            o += n;
        }
        p += n + (e ? 1 : 0);
    }
    *o = '\0';
    return out;
}

static void add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer ? issuer : cert, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ext) {
        X509_add_ext(cert, ext, -1);
        X509_EXTENSION_free(ext);
    }
}

/* san: a subjectAltName for a TLS server certificate, or NULL. */
static X509 *make_cert_ext(EVP_PKEY *key, EVP_PKEY *issuer_key, X509 *issuer, const char *cn, const char *tenancy,
                           long serial, const char *san);

static X509 *make_cert(EVP_PKEY *key, EVP_PKEY *issuer_key, X509 *issuer, const char *cn, const char *tenancy,
                       long serial)
{
    return make_cert_ext(key, issuer_key, issuer, cn, tenancy, serial, NULL);
}

static X509 *make_cert_ext(EVP_PKEY *key, EVP_PKEY *issuer_key, X509 *issuer, const char *cn, const char *tenancy,
                           long serial, const char *san)
{
    X509 *cert = X509_new();
    if (!cert)
        return NULL;
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 86400L);
    X509_set_pubkey(cert, key);
    X509_NAME *name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    if (tenancy) {
        /* The form of a real instance certificate's subject. */
        char ou[300];
        X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_ASC, (const unsigned char *)"opc-certtype:instance", -1, -1,
                                   0);
        snprintf(ou, sizeof ou, "opc-compartment:%s", tenancy);
        X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_ASC, (const unsigned char *)ou, -1, -1, 0);
        snprintf(ou, sizeof ou, "opc-tenant:%s", tenancy);
        X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_ASC, (const unsigned char *)ou, -1, -1, 0);
    }
    X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
    if (!issuer) {
        add_ext(cert, NULL, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(cert, NULL, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
    }
    if (san) {
        add_ext(cert, issuer, NID_subject_alt_name, san);
        add_ext(cert, issuer, NID_ext_key_usage, "serverAuth");
    }
    if (!X509_sign(cert, issuer_key, EVP_sha256())) {
        X509_free(cert);
        return NULL;
    }
    return cert;
}

static int make_leaf(fake_imds *f)
{
    EVP_PKEY *key = test_key_pool_rsa2048();
    X509 *cert = key ? make_cert(key, f->ca_key, f->ca, "ocid1.instance.oc1.phx.fake", f->tenancy, f->issued + 2)
                     : NULL;
    char *pem = cert ? cert_pem(cert) : NULL;
    char *kpem = key ? key_pem(key) : NULL;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!pem || !kpem || !X509_digest(cert, EVP_sha1(), md, &mdlen)) {
        EVP_PKEY_free(key);
        X509_free(cert);
        free(pem);
        free(kpem);
        return -1;
    }
    pthread_mutex_lock(&f->lock);
    for (unsigned i = 0; i < mdlen; i++)
        snprintf(f->fingerprint + i * 3, 4, i + 1 < mdlen ? "%02X:" : "%02X", md[i]);
    EVP_PKEY_free(f->leaf_key);
    free(f->leaf_pem);
    free(f->leaf_key_pem);
    f->leaf_key = key;
    f->leaf_pem = pem;
    f->leaf_key_pem = kpem;
    pthread_mutex_unlock(&f->lock);
    X509_free(cert);
    return 0;
}

/* ---- HTTP -------------------------------------------------------------------- */

typedef struct req {
    char *body;
    size_t len;
    bool too_large;
} req;

static enum MHD_Result reply(fake_imds *f, struct MHD_Connection *c, unsigned status, const char *type,
                             const char *body)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    char rid[32];
    pthread_mutex_lock(&f->lock);
    snprintf(rid, sizeof rid, "fake-%d", ++f->answers);
    pthread_mutex_unlock(&f->lock);
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "opc-request-id", rid);
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result refuse(fake_imds *f, struct MHD_Connection *c, unsigned status, const char *why)
{
    pthread_mutex_lock(&f->lock);
    f->refused++;
    snprintf(f->last_refusal, sizeof f->last_refusal, "%s", why);
    pthread_mutex_unlock(&f->lock);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "code", status == 401 ? "NotAuthenticated" : "InvalidParameter");
    cJSON_AddStringToObject(j, "message", why);
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    enum MHD_Result rc = reply(f, c, status, "application/json", text ? text : "{}");
    free(text);
    return rc;
}

static enum MHD_Result metadata(fake_imds *f, struct MHD_Connection *c, const char *path)
{
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!auth || strcmp(auth, "Bearer Oracle") != 0)
        return refuse(f, c, 401, "metadata: missing header Authorization: Bearer Oracle");
    pthread_mutex_lock(&f->lock);
    int status = f->metadata_status;
    char *text = NULL;
    if (strcmp(path, "/instance/region") == 0)
        text = strdup(f->region);
    else if (strcmp(path, "/identity/cert.pem") == 0)
        text = strdup(f->leaf_pem);
    else if (strcmp(path, "/identity/key.pem") == 0)
        text = strdup(f->leaf_key_pem);
    else if (strcmp(path, "/identity/intermediate.pem") == 0)
        text = strdup(f->ca_pem);
    pthread_mutex_unlock(&f->lock);
    enum MHD_Result rc;
    if (status)
        rc = reply(f, c, (unsigned)status, "text/plain", "metadata service unavailable");
    else if (!text)
        rc = reply(f, c, 404, "text/plain", "not found");
    else
        rc = reply(f, c, 200, "text/plain", text);
    free(text);
    return rc;
}

/* The Authorization parameter `name` (any order), copied into out. */
static bool auth_param(const char *auth, const char *name, char *out, size_t cap)
{
    const char *p = auth;
    size_t n = strlen(name);
    while ((p = strstr(p, name)) != NULL) {
        bool at_start = p == auth || p[-1] == ',' || p[-1] == ' ';
        if (at_start && p[n] == '=' && p[n + 1] == '"') {
            const char *v = p + n + 2, *e = strchr(v, '"');
            if (!e || (size_t)(e - v) >= cap)
                return false;
            memcpy(out, v, (size_t)(e - v));
            out[e - v] = '\0';
            return true;
        }
        p += n;
    }
    return false;
}

static time_t parse_date(const char *s)
{
    static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    char wd[4], mon[4], gmt[4];
    struct tm tm = {0};
    if (sscanf(s, "%3s, %d %3s %d %d:%d:%d %3s", wd, &tm.tm_mday, mon, &tm.tm_year, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec, gmt) != 8 ||
        strcmp(gmt, "GMT") != 0)
        return (time_t)-1;
    tm.tm_mon = -1;
    for (int i = 0; i < 12; i++)
        if (strcmp(mon, months[i]) == 0)
            tm.tm_mon = i;
    if (tm.tm_mon < 0)
        return (time_t)-1;
    tm.tm_year -= 1900;
    return timegm(&tm);
}

/* Checks the signature; NULL when good, else why not (static text or buf). */
static const char *check_signature(fake_imds *f, struct MHD_Connection *c, const char *url, const req *r, char *buf,
                                   size_t cap)
{
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    char version[16], key_id[512], algorithm[32], headers[256], sig[1024];
    if (!auth || strncmp(auth, "Signature ", 10) != 0)
        return "no Authorization: Signature header";
    if (!auth_param(auth, "version", version, sizeof version) || strcmp(version, "1") != 0)
        return "signature version is not \"1\"";
    if (!auth_param(auth, "algorithm", algorithm, sizeof algorithm) || strcmp(algorithm, "rsa-sha256") != 0)
        return "algorithm is not rsa-sha256";
    if (!auth_param(auth, "keyId", key_id, sizeof key_id))
        return "no keyId";
    pthread_mutex_lock(&f->lock);
    snprintf(buf, cap, "%s/fed-x509/%s", f->tenancy, f->fingerprint);
    pthread_mutex_unlock(&f->lock);
    if (strcmp(key_id, buf) != 0) {
        snprintf(buf, cap, "keyId \"%.200s\" is not <tenancy>/fed-x509/<leaf SHA-1 fingerprint>", key_id);
        return buf;
    }
    if (!auth_param(auth, "headers", headers, sizeof headers) ||
        strcmp(headers, "date (request-target) host content-length content-type x-content-sha256") != 0)
        return "signed headers are not the POST set";
    if (!auth_param(auth, "signature", sig, sizeof sig))
        return "no signature";

    const char *date = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "date");
    time_t t = date ? parse_date(date) : (time_t)-1;
    if (t == (time_t)-1 || t < time(NULL) - 300 || t > time(NULL) + 300)
        return "date missing, malformed or more than 5 minutes off";
    unsigned char md[32];
    char *sha = NULL;
    if (EVP_Digest(r->body ? r->body : "", r->len, md, NULL, EVP_sha256(), NULL))
        sha = b64_encode(md, sizeof md);
    const char *got_sha = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "x-content-sha256");
    bool sha_ok = sha && got_sha && strcmp(sha, got_sha) == 0;
    free(sha);
    if (!sha_ok)
        return "x-content-sha256 does not match the body";
    const char *clen = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "content-length");
    char want_len[32];
    snprintf(want_len, sizeof want_len, "%zu", r->len);
    if (!clen || strcmp(clen, want_len) != 0)
        return "content-length does not match the body";

    /* The signing string from the request as received. */
    char signing[2048];
    size_t used = 0;
    char names[256];
    snprintf(names, sizeof names, "%s", headers);
    char *save = NULL;
    for (char *name = strtok_r(names, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
        const char *value;
        char target[256];
        if (strcmp(name, "(request-target)") == 0) {
            snprintf(target, sizeof target, "post %s", url);
            value = target;
        } else {
            value = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
            if (!value)
                return "a signed header is missing from the request";
        }
        int w = snprintf(signing + used, sizeof signing - used, "%s%s: %s", used ? "\n" : "", name, value);
        if (w < 0 || (size_t)w >= sizeof signing - used)
            return "signing string too long";
        used += (size_t)w;
    }
    size_t sig_len = 0;
    unsigned char *sig_bin = b64_decode(sig, strlen(sig), &sig_len);
    if (!sig_bin)
        return "signature is not base64";
    pthread_mutex_lock(&f->lock);
    EVP_PKEY *leaf = f->leaf_key;
    EVP_PKEY_up_ref(leaf);
    pthread_mutex_unlock(&f->lock);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, leaf) == 1 &&
             EVP_DigestVerify(ctx, sig_bin, sig_len, (const unsigned char *)signing, used) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(leaf);
    free(sig_bin);
    return ok ? NULL : "signature does not verify with the leaf certificate's key";
}

/* Checks the body; on success *session gets the session public key. */
static const char *check_body(fake_imds *f, const req *r, EVP_PKEY **session)
{
    cJSON *j = r->body ? cJSON_ParseWithLength(r->body, r->len) : NULL;
    const cJSON *cert = cJSON_GetObjectItemCaseSensitive(j, "certificate");
    const cJSON *pub = cJSON_GetObjectItemCaseSensitive(j, "publicKey");
    const cJSON *inter = cJSON_GetObjectItemCaseSensitive(j, "intermediateCertificates");
    const char *why = NULL;
    pthread_mutex_lock(&f->lock);
    char *want_cert = pem_body(f->leaf_pem);
    char *want_inter = pem_body(f->ca_pem);
    pthread_mutex_unlock(&f->lock);
    if (!cJSON_IsObject(j))
        why = "body is not a JSON object";
    else if (!cJSON_IsString(cert) || !want_cert || strcmp(cert->valuestring, want_cert) != 0)
        why = "certificate is not the leaf certificate's PEM body";
    else if (!cJSON_IsArray(inter) || cJSON_GetArraySize(inter) != 1 ||
             !cJSON_IsString(cJSON_GetArrayItem(inter, 0)) || !want_inter ||
             strcmp(cJSON_GetArrayItem(inter, 0)->valuestring, want_inter) != 0)
        why = "intermediateCertificates is not [the intermediate's PEM body]";
    else if (!cJSON_IsString(pub) || strchr(pub->valuestring, '-') || strchr(pub->valuestring, '\n'))
        why = "publicKey is not a PEM body";
    if (!why) {
        size_t der_len = 0;
        unsigned char *der = b64_decode(pub->valuestring, strlen(pub->valuestring), &der_len);
        const unsigned char *p = der;
        EVP_PKEY *k = der ? d2i_PUBKEY(NULL, &p, (long)der_len) : NULL;
        free(der);
        if (!k || EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA || EVP_PKEY_get_bits(k) != 2048) {
            EVP_PKEY_free(k);
            why = "publicKey is not a 2048-bit RSA SubjectPublicKeyInfo";
        } else {
            *session = k;
        }
    }
    free(want_cert);
    free(want_inter);
    cJSON_Delete(j);
    return why;
}

static char *make_token(fake_imds *f)
{
    pthread_mutex_lock(&f->lock);
    int64_t now = (int64_t)time(NULL);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "sub", "ocid1.instance.oc1.phx.fake");
    cJSON_AddStringToObject(p, "tenant", f->tenancy);
    cJSON_AddNumberToObject(p, "jti", f->issued + 1);
    if (f->has_iat)
        cJSON_AddNumberToObject(p, "iat", (double)(now + f->iat_in));
    if (f->has_exp)
        cJSON_AddNumberToObject(p, "exp", (double)(now + f->exp_in));
    pthread_mutex_unlock(&f->lock);
    char *payload = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    char *h = b64url("{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"fake\"}");
    char *b = payload ? b64url(payload) : NULL;
    free(payload);
    char *jwt = NULL;
    if (h && b && (jwt = malloc(strlen(h) + strlen(b) + 32)))
        sprintf(jwt, "%s.%s.ZmFrZS1zaWduYXR1cmU", h, b);
    free(h);
    free(b);
    return jwt;
}

static enum MHD_Result federation(fake_imds *f, struct MHD_Connection *c, const char *url, const req *r)
{
    char buf[512];
    pthread_mutex_lock(&f->lock);
    f->federation_requests++;
    pthread_mutex_unlock(&f->lock);
    const char *ua = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "User-Agent");
    if (!ua || strncmp(ua, "libocisbx/", 10) != 0)
        return refuse(f, c, 400, "user-agent is not libocisbx/<version> (...)");
    if (r->too_large)
        return refuse(f, c, 400, "body too large");
    const char *why = check_signature(f, c, url, r, buf, sizeof buf);
    if (why)
        return refuse(f, c, 401, why);
    EVP_PKEY *session = NULL;
    if ((why = check_body(f, r, &session)))
        return refuse(f, c, 400, why);
    pthread_mutex_lock(&f->lock);
    int status = f->federation_status;
    pthread_mutex_unlock(&f->lock);
    if (status) {
        EVP_PKEY_free(session);
        char text[128];
        snprintf(text, sizeof text, "{\"code\":\"%s\",\"message\":\"the fake was told to answer %d\"}",
                 status == 401 ? "NotAuthenticated" : "InternalServerError", status);
        return reply(f, c, (unsigned)status, "application/json", text);
    }
    char *jwt = make_token(f);
    char *text = jwt ? malloc(strlen(jwt) + 16) : NULL;
    if (!text) {
        free(jwt);
        EVP_PKEY_free(session);
        return MHD_NO;
    }
    sprintf(text, "{\"token\":\"%s\"}", jwt);
    pthread_mutex_lock(&f->lock);
    f->issued++;
    free(f->last_token);
    f->last_token = jwt;
    EVP_PKEY_free(f->session_pub);
    f->session_pub = session;
    pthread_mutex_unlock(&f->lock);
    enum MHD_Result rc = reply(f, c, 200, "application/json", text);
    free(text);
    return rc;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
    (void)version;
    fake_imds *f = cls;
    req *r = *req_cls;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        *req_cls = r;
        return MHD_YES;
    }
    if (*upload_size) {
        if (r->len + *upload_size > MAX_BODY) {
            r->too_large = true;
        } else {
            char *p = realloc(r->body, r->len + *upload_size + 1);
            if (!p)
                return MHD_NO;
            memcpy(p + r->len, upload, *upload_size);
            r->body = p;
            r->len += *upload_size;
            r->body[r->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, "GET") == 0 && strncmp(url, "/opc/v2/", 8) == 0)
        return metadata(f, c, url + 7);
    if (strcmp(method, "POST") == 0 && strcmp(url, "/v1/x509") == 0)
        return federation(f, c, url, r);
    return reply(f, c, 404, "text/plain", "not found");
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)c;
    (void)code;
    req *r = *req_cls;
    if (r) {
        free(r->body);
        free(r);
        *req_cls = NULL;
    }
}

/* ---- life cycle and controls ---------------------------------------------------- */

static struct MHD_Daemon *start_daemon(fake_imds *f, bool tls, unsigned *port)
{
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = 0;
    struct MHD_Daemon *d;
    if (tls)
        d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS, 0, NULL, NULL, handler, f,
                             MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin, MHD_OPTION_NOTIFY_COMPLETED, completed, f,
                             MHD_OPTION_HTTPS_MEM_KEY, f->tls_key_pem, MHD_OPTION_HTTPS_MEM_CERT, f->tls_cert_pem,
                             MHD_OPTION_END);
    else
        d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, handler, f, MHD_OPTION_SOCK_ADDR,
                             (struct sockaddr *)&sin, MHD_OPTION_NOTIFY_COMPLETED, completed, f, MHD_OPTION_END);
    const union MHD_DaemonInfo *info = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    if (!info || info->port == 0) {
        if (d)
            MHD_stop_daemon(d);
        return NULL;
    }
    *port = info->port;
    return d;
}

int fake_imds_start(const char *tenancy, const char *region, fake_imds **out)
{
    fake_imds *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    pthread_mutex_init(&f->lock, NULL);
    snprintf(f->tenancy, sizeof f->tenancy, "%s", tenancy);
    snprintf(f->region, sizeof f->region, "%s", region);
    f->has_exp = true;
    f->exp_in = 3600;
    f->has_iat = true;
    f->ca_key = test_key_pool_rsa2048();
    f->ca = f->ca_key ? make_cert(f->ca_key, f->ca_key, NULL, "fake-imds-intermediate", NULL, 1) : NULL;
    f->ca_pem = f->ca ? cert_pem(f->ca) : NULL;
    if (!f->ca_pem || make_leaf(f) != 0) {
        fake_imds_stop(f);
        return -1;
    }
    unsigned port = 0;
    f->daemon = start_daemon(f, false, &port);
    if (!f->daemon) {
        fake_imds_stop(f);
        return -1;
    }
    snprintf(f->metadata_url, sizeof f->metadata_url, "http://127.0.0.1:%u/opc/v2", port);
    snprintf(f->federation_url, sizeof f->federation_url, "http://127.0.0.1:%u", port);
    *out = f;
    return 0;
}

int fake_imds_start_tls(fake_imds *f, const char *ca_file)
{
    FILE *out = fopen(ca_file, "wb");
    if (!out)
        return -1;
    fputs(f->ca_pem, out);
    fclose(out);
    if (f->tls_daemon)
        return 0;
    EVP_PKEY *key = test_key_pool_rsa2048();
    X509 *cert = key ? make_cert_ext(key, f->ca_key, f->ca, "127.0.0.1", NULL, 1000, "IP:127.0.0.1,DNS:localhost")
                     : NULL;
    f->tls_cert_pem = cert ? cert_pem(cert) : NULL;
    f->tls_key_pem = key ? key_pem(key) : NULL;
    X509_free(cert);
    EVP_PKEY_free(key);
    unsigned port = 0;
    if (!f->tls_cert_pem || !f->tls_key_pem || !(f->tls_daemon = start_daemon(f, true, &port)))
        return -1;
    snprintf(f->tls_url, sizeof f->tls_url, "https://127.0.0.1:%u", port);
    return 0;
}

const char *fake_imds_federation_tls_url(const fake_imds *f)
{
    return f->tls_url;
}

void fake_imds_stop(fake_imds *f)
{
    if (!f)
        return;
    if (f->daemon)
        MHD_stop_daemon(f->daemon);
    if (f->tls_daemon)
        MHD_stop_daemon(f->tls_daemon);
    free(f->tls_key_pem);
    free(f->tls_cert_pem);
    EVP_PKEY_free(f->ca_key);
    X509_free(f->ca);
    free(f->ca_pem);
    EVP_PKEY_free(f->leaf_key);
    free(f->leaf_pem);
    free(f->leaf_key_pem);
    free(f->last_token);
    EVP_PKEY_free(f->session_pub);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

const char *fake_imds_metadata_url(const fake_imds *f)
{
    return f->metadata_url;
}
const char *fake_imds_federation_url(const fake_imds *f)
{
    return f->federation_url;
}
const char *fake_imds_fingerprint(const fake_imds *f)
{
    return f->fingerprint;
}

void fake_imds_set_token_times(fake_imds *f, bool has_exp, int64_t exp_in, bool has_iat, int64_t iat_in)
{
    pthread_mutex_lock(&f->lock);
    f->has_exp = has_exp;
    f->exp_in = exp_in;
    f->has_iat = has_iat;
    f->iat_in = iat_in;
    pthread_mutex_unlock(&f->lock);
}

void fake_imds_set_federation_status(fake_imds *f, int status)
{
    pthread_mutex_lock(&f->lock);
    f->federation_status = status;
    pthread_mutex_unlock(&f->lock);
}

void fake_imds_set_metadata_status(fake_imds *f, int status)
{
    pthread_mutex_lock(&f->lock);
    f->metadata_status = status;
    pthread_mutex_unlock(&f->lock);
}

int fake_imds_rotate_leaf(fake_imds *f)
{
    return make_leaf(f);
}

char *fake_imds_leaf_pem(fake_imds *f)
{
    pthread_mutex_lock(&f->lock);
    char *out = strdup(f->leaf_pem);
    pthread_mutex_unlock(&f->lock);
    return out;
}

char *fake_imds_self_signed_pem(const char *ou)
{
    EVP_PKEY *key = EVP_RSA_gen(1024);
    X509 *cert = key ? X509_new() : NULL;
    char *out = NULL;
    if (cert) {
        X509_set_version(cert, 2);
        ASN1_INTEGER_set(X509_get_serialNumber(cert), 7);
        X509_gmtime_adj(X509_getm_notBefore(cert), 0);
        X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
        X509_set_pubkey(cert, key);
        X509_NAME *name = X509_get_subject_name(cert);
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"test", -1, -1, 0);
        if (ou)
            X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_ASC, (const unsigned char *)ou, -1, -1, 0);
        X509_set_issuer_name(cert, name);
        if (X509_sign(cert, key, EVP_sha256()))
            out = cert_pem(cert);
    }
    X509_free(cert);
    EVP_PKEY_free(key);
    return out;
}

int fake_imds_tokens_issued(fake_imds *f)
{
    pthread_mutex_lock(&f->lock);
    int n = f->issued;
    pthread_mutex_unlock(&f->lock);
    return n;
}

int fake_imds_federation_requests(fake_imds *f)
{
    pthread_mutex_lock(&f->lock);
    int n = f->federation_requests;
    pthread_mutex_unlock(&f->lock);
    return n;
}

int fake_imds_refused(fake_imds *f)
{
    pthread_mutex_lock(&f->lock);
    int n = f->refused;
    pthread_mutex_unlock(&f->lock);
    return n;
}

void fake_imds_last_refusal(fake_imds *f, char *buf, size_t cap)
{
    pthread_mutex_lock(&f->lock);
    snprintf(buf, cap, "%s", f->last_refusal);
    pthread_mutex_unlock(&f->lock);
}

void fake_imds_last_token(fake_imds *f, char *buf, size_t cap)
{
    pthread_mutex_lock(&f->lock);
    snprintf(buf, cap, "%s", f->last_token ? f->last_token : "");
    pthread_mutex_unlock(&f->lock);
}

int fake_imds_verify_session_signature(fake_imds *f, const void *data, size_t len, const char *sig_b64)
{
    size_t sig_len = 0;
    unsigned char *sig = b64_decode(sig_b64, strlen(sig_b64), &sig_len);
    if (!sig)
        return 0;
    pthread_mutex_lock(&f->lock);
    EVP_PKEY *k = f->session_pub;
    if (k)
        EVP_PKEY_up_ref(k);
    pthread_mutex_unlock(&f->lock);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = k && ctx && EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, k) == 1 &&
             EVP_DigestVerify(ctx, sig, sig_len, data, len) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(k);
    free(sig);
    return ok;
}
