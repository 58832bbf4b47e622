/* The instance-principal credential provider: the instance's certificate
 * from the metadata service, exchanged at the federation endpoint for a
 * session token (keyId "ST$<jwt>") bound to a fresh session key.
 *
 * It talks to libcurl directly: it sits below the http layer, which signs
 * its requests with these very credentials. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "auth/credentials_internal.h"
#include "auth/federation.h"
#include "ocisbx/util.h"
#include "util/internal.h"

#define DEFAULT_METADATA_URL "http://169.254.169.254/opc/v2"
#define DEFAULT_MARGIN_S 300
#define CONNECT_TIMEOUT_MS 10000L
#define TOTAL_TIMEOUT_S 60L
#define MAX_ANSWER_BYTES (1024 * 1024)
#define SESSION_KEY_BITS 2048
#define RETRY_AFTER_FAILURE_S 30

/* ---- options ---------------------------------------------------------------- */

struct ocisbx_instance_principal_options {
    char *metadata_url;
    char *federation_url;
    char *ca_bundle;
    int margin;
};

int ocisbx_instance_principal_options_new(ocisbx_instance_principal_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "instance principal options: out is NULL");
    ocisbx_instance_principal_options *o = calloc(1, sizeof *o);
    if (!o)
        return ocisbx_fail_nomem();
    o->margin = DEFAULT_MARGIN_S;
    *out = o;
    return 0;
}

/* Accepts an http(s) URL and drops trailing slashes (paths are appended). */
static int set_url(char **slot, const char *url, const char *what)
{
    if (!url || (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0))
        return ocisbx_fail(OCISBX_EINVAL, "instance principal %s URL \"%s\": must start with http:// or https://",
                           what, url ? url : "(null)");
    size_t n = strlen(url);
    while (n > 8 && url[n - 1] == '/')
        n--;
    char *copy = ocisbx_strndup(url, n);
    if (!copy)
        return ocisbx_fail_nomem();
    free(*slot);
    *slot = copy;
    return 0;
}

int ocisbx_instance_principal_options_set_metadata_url(ocisbx_instance_principal_options *o, const char *url)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "instance principal options: NULL");
    return set_url(&o->metadata_url, url, "metadata");
}

int ocisbx_instance_principal_options_set_federation_url(ocisbx_instance_principal_options *o, const char *url)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "instance principal options: NULL");
    return set_url(&o->federation_url, url, "federation");
}

int ocisbx_instance_principal_options_set_ca_bundle(ocisbx_instance_principal_options *o, const char *path)
{
    if (!o || !path || !*path)
        return ocisbx_fail(OCISBX_EINVAL, "instance principal options: CA bundle path is empty");
    char *copy = ocisbx_strdup(path);
    if (!copy)
        return ocisbx_fail_nomem();
    free(o->ca_bundle);
    o->ca_bundle = copy;
    return 0;
}

int ocisbx_instance_principal_options_set_refresh_margin(ocisbx_instance_principal_options *o, int seconds)
{
    if (!o || seconds < 0)
        return ocisbx_fail(OCISBX_EINVAL, "instance principal refresh margin %d: must be 0 or more", seconds);
    o->margin = seconds;
    return 0;
}

void ocisbx_instance_principal_options_free(ocisbx_instance_principal_options *o)
{
    if (!o)
        return;
    free(o->metadata_url);
    free(o->federation_url);
    free(o->ca_bundle);
    free(o);
}

/* ---- HTTP (libcurl) ------------------------------------------------------------ */

typedef struct answer {
    long status;
    char *body; /* NUL-terminated; wiped when freed (key.pem, token) */
    size_t len, cap;
    bool too_large;
    char request_id[128];
} answer;

static void answer_free(answer *a)
{
    if (a->body) {
        ocisbx_wipe(a->body, a->cap);
        free(a->body);
    }
    memset(a, 0, sizeof *a);
}

/* Grows by copying and wiping, never realloc: a secret body leaves no
 * stale copy behind in freed memory. */
static size_t on_body(char *data, size_t size, size_t n, void *user_data)
{
    answer *a = user_data;
    size_t len = size * n;
    if (a->len + len > MAX_ANSWER_BYTES) {
        a->too_large = true;
        return 0;
    }
    if (a->len + len + 1 > a->cap) {
        size_t cap = a->cap ? a->cap : 4096;
        while (cap < a->len + len + 1)
            cap *= 2;
        char *p = malloc(cap);
        if (!p)
            return 0;
        if (a->body) {
            memcpy(p, a->body, a->len);
            ocisbx_wipe(a->body, a->cap);
            free(a->body);
        }
        a->body = p;
        a->cap = cap;
    }
    memcpy(a->body + a->len, data, len);
    a->len += len;
    a->body[a->len] = '\0';
    return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *user_data)
{
    answer *a = user_data;
    size_t len = size * n;
    static const char name[] = "opc-request-id:";
    if (len > sizeof name - 1 && ocisbx_strncasecmp(data, name, sizeof name - 1) == 0) {
        size_t i = sizeof name - 1, j = len;
        while (i < j && (data[i] == ' ' || data[i] == '\t'))
            i++;
        while (j > i && (data[j - 1] == '\r' || data[j - 1] == '\n' || data[j - 1] == ' '))
            j--;
        size_t m = j - i < sizeof a->request_id - 1 ? j - i : sizeof a->request_id - 1;
        memcpy(a->request_id, data + i, m);
        a->request_id[m] = '\0';
    }
    return len;
}

typedef struct ip_creds {
    struct ocisbx_credentials base;
    char *metadata_url;
    char *federation_url;
    char *ca_bundle;
    int margin;
    char *token; /* secret */
    ocisbx_key *session_key;
    int64_t refresh_at; /* unix seconds */
    int64_t expires_at;
} ip_creds;

/* "libocisbx/<version> (<os>/<arch>; libcurl/<version>)", as the http layer sends. */
static char ua_text[192];
static pthread_once_t ua_once = PTHREAD_ONCE_INIT;

static void ua_init(void)
{
    struct utsname u;
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    bool named = uname(&u) == 0;
    for (char *p = u.sysname; named && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    snprintf(ua_text, sizeof ua_text, "libocisbx/%s (%s/%s; libcurl/%s)", ocisbx_version(),
             named ? u.sysname : "unknown", named ? u.machine : "unknown", v ? v->version : "unknown");
}

static const char *user_agent(void)
{
    pthread_once(&ua_once, ua_init);
    return ua_text;
}

/* One request; any answer (whatever its status) is a success here.
 * no_proxy: the metadata service is link-local, reachable only from the
 * instance itself, so a proxy from the environment (http_proxy, ...) must
 * never see its requests; federation requests keep the proxy settings. */
static int http_call(const ip_creds *c, const char *method, const char *url, struct curl_slist *headers,
                     const char *body, size_t body_len, bool no_proxy, answer *a)
{
    int rc = ocisbx_global_ensure();
    if (rc)
        return rc;
    CURL *h = curl_easy_init();
    if (!h)
        return ocisbx_fail(OCISBX_ETRANSPORT, "%s %s: cannot create a libcurl handle", method, url);
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(h, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (no_proxy)
        curl_easy_setopt(h, CURLOPT_NOPROXY, "*"); /* "*" matches every host */
    curl_easy_setopt(h, CURLOPT_USERAGENT, user_agent());
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, TOTAL_TIMEOUT_S);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (c->ca_bundle)
        curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_bundle);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, a);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    CURLcode cc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
    curl_easy_cleanup(h);
    if (cc == CURLE_OK)
        return 0;
    if (a->too_large)
        return ocisbx_fail(OCISBX_ETOOLARGE, "%s %s: answer larger than %d bytes", method, url, MAX_ANSWER_BYTES);
    return ocisbx_fail(cc == CURLE_OPERATION_TIMEDOUT ? OCISBX_ETIMEOUT : OCISBX_ETRANSPORT, "%s %s: %s", method, url,
                       errbuf[0] ? errbuf : curl_easy_strerror(cc));
}

/* GET <metadata>/<path> with the header the metadata service requires. */
static int metadata_get(const ip_creds *c, const char *path, answer *a)
{
    char *url = ocisbx_asprintf("%s%s", c->metadata_url, path);
    struct curl_slist *hdrs = curl_slist_append(NULL, "Authorization: Bearer Oracle");
    if (!url || !hdrs) {
        free(url);
        curl_slist_free_all(hdrs);
        return ocisbx_fail_nomem();
    }
    int rc = http_call(c, "GET", url, hdrs, NULL, 0, true, a);
    curl_slist_free_all(hdrs);
    if (rc)
        ocisbx_error_wrap("instance metadata ");
    else if (a->status != 200)
        rc = ocisbx_fail_http(a->status >= 400 ? ocisbx_status_from_http((int)a->status) : OCISBX_ESERVICE,
                              (int)a->status, NULL, a->request_id[0] ? a->request_id : NULL,
                              "instance metadata GET %s: HTTP %ld%s%s", url, a->status,
                              a->request_id[0] ? ", opc-request-id " : "", a->request_id);
    else if (a->len == 0)
        rc = ocisbx_fail(OCISBX_EPARSE, "instance metadata GET %s: empty answer", url);
    if (rc) {
        ocisbx_error_wrap("instance principal: ");
        answer_free(a);
    }
    free(url);
    return rc;
}

/* A federation error answer: {"code", "message"} when the body is JSON. */
static int federation_error(const char *url, const answer *a, const char *sent_id)
{
    const char *rid = a->request_id[0] ? a->request_id : sent_id;
    cJSON *json = a->body ? cJSON_ParseWithLength(a->body, a->len) : NULL;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(json, "code");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(json, "message");
    const char *svc = cJSON_IsString(code) ? code->valuestring : NULL;
    int err = a->status == 401 || a->status == 403 ? OCISBX_EAUTH : ocisbx_status_from_http((int)a->status);
    if (err == OCISBX_OK)
        err = OCISBX_ESERVICE;
    ocisbx_fail_http(err, (int)a->status, svc, rid,
                     "instance principal: federation POST %s: HTTP %ld%s%s%s%s, opc-request-id %s", url, a->status,
                     svc ? " " : "", svc ? svc : "", cJSON_IsString(msg) ? ": " : "",
                     cJSON_IsString(msg) ? msg->valuestring : "", rid);
    cJSON_Delete(json);
    return err;
}

/* The body of the federation request (certificates and public key, no secret). */
static char *federation_body(const answer *cert, const answer *inter, const char *public_pem)
{
    char *c = NULL, *i = NULL, *p = NULL, *out = NULL;
    if (ocisbx_pem_body(cert->body, cert->len, &c)) {
        ocisbx_error_wrap("instance principal: metadata /identity/cert.pem: ");
        goto done;
    }
    if (ocisbx_pem_body(inter->body, inter->len, &i)) {
        ocisbx_error_wrap("instance principal: metadata /identity/intermediate.pem: ");
        goto done;
    }
    if (ocisbx_pem_body(public_pem, strlen(public_pem), &p))
        goto done;
    cJSON *json = cJSON_CreateObject();
    cJSON *arr = cJSON_CreateArray();
    if (!json || !arr || !cJSON_AddStringToObject(json, "certificate", c) ||
        !cJSON_AddStringToObject(json, "publicKey", p) || !cJSON_AddItemToArray(arr, cJSON_CreateString(i)) ||
        !cJSON_AddItemToObject(json, "intermediateCertificates", arr)) {
        if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(json, "intermediateCertificates")))
            cJSON_Delete(arr);
        cJSON_Delete(json);
        ocisbx_fail_nomem();
        goto done;
    }
    out = cJSON_PrintUnformatted(json);
    cJSON_Delete(json);
    if (!out)
        ocisbx_fail_nomem();
done:
    free(c);
    free(i);
    free(p);
    return out;
}

/* Appends every signed header and the fixed ones to a libcurl list. */
static struct curl_slist *request_headers(const ocisbx_headers *signed_hdrs, const char *request_id)
{
    struct curl_slist *list = NULL;
    ocisbx_buf line = OCISBX_BUF_INIT;
    bool ok = true;
    for (size_t k = 0; ok && k < ocisbx_headers_count(signed_hdrs); k++) {
        ocisbx_buf_clear(&line);
        ok = ocisbx_buf_appendf(&line, "%s: %s", ocisbx_headers_name(signed_hdrs, k),
                                ocisbx_headers_value(signed_hdrs, k)) == 0;
        struct curl_slist *next = ok ? curl_slist_append(list, line.data) : NULL;
        ok = next != NULL;
        if (ok)
            list = next;
    }
    /* Expect: 100-continue would cost a round trip for a small body. */
    const char *fixed[] = {"accept: application/json", "expect:"};
    for (size_t k = 0; ok && k < 2; k++) {
        struct curl_slist *next = curl_slist_append(list, fixed[k]);
        ok = next != NULL;
        if (ok)
            list = next;
    }
    if (ok) {
        ocisbx_buf_clear(&line);
        ok = ocisbx_buf_appendf(&line, "opc-request-id: %s", request_id) == 0;
        struct curl_slist *next = ok ? curl_slist_append(list, line.data) : NULL;
        ok = next != NULL;
        if (ok)
            list = next;
    }
    ocisbx_buf_wipe_free(&line); /* held an Authorization value */
    if (!ok) {
        curl_slist_free_all(list);
        return NULL;
    }
    return list;
}

/* POST <federation>/v1/x509 signed by the leaf key; *token gets the JWT. */
static int federate(const ip_creds *c, const answer *cert, const answer *inter, ocisbx_key *leaf, ocisbx_key *session,
                    char **token)
{
    char fp[OCISBX_SHA1_FP_LEN + 1];
    char *tenancy = NULL, *public_pem = NULL, *body = NULL, *key_id = NULL, *url = NULL;
    ocisbx_sign_request *req = NULL;
    ocisbx_headers *signed_hdrs = NULL;
    struct curl_slist *hdrs = NULL;
    answer a = {0};
    char request_id[33];
    int rc = ocisbx_cert_identity(cert->body, cert->len, "instance metadata /identity/cert.pem", &tenancy, fp);
    if (rc)
        goto done;
    if ((rc = ocisbx_key_public_pem(session, &public_pem)))
        goto done;
    if (!(body = federation_body(cert, inter, public_pem))) {
        rc = ocisbx_error_code(ocisbx_error_last()); /* federation_body set it */
        goto done;
    }
    key_id = ocisbx_asprintf("%s/fed-x509/%s", tenancy, fp);
    url = ocisbx_asprintf("%s/v1/x509", c->federation_url);
    if (!key_id || !url) {
        rc = ocisbx_fail_nomem();
        goto done;
    }
    if ((rc = ocisbx_random_id(request_id, 32)))
        goto done;
    if ((rc = ocisbx_sign_request_new("POST", url, &req)) ||
        (rc = ocisbx_sign_request_set_body(req, body, strlen(body))) ||
        (rc = ocisbx_sign_with_key(key_id, leaf, req, &signed_hdrs)))
        goto done;
    if (!(hdrs = request_headers(signed_hdrs, request_id))) {
        rc = ocisbx_fail_nomem();
        goto done;
    }
    if ((rc = http_call(c, "POST", url, hdrs, body, strlen(body), false, &a))) {
        ocisbx_error_wrap("instance principal: federation ");
        goto done;
    }
    if (a.status != 200) {
        rc = federation_error(url, &a, request_id);
        goto done;
    }
    cJSON *json = cJSON_ParseWithLength(a.body ? a.body : "", a.len);
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(json, "token");
    if (!cJSON_IsString(tok) || !tok->valuestring[0]) {
        rc = ocisbx_fail_http(OCISBX_EPARSE, 200, NULL, a.request_id[0] ? a.request_id : request_id,
                              "instance principal: federation POST %s: answer has no \"token\" string, "
                              "opc-request-id %s",
                              url, a.request_id[0] ? a.request_id : request_id);
    } else if (!(*token = ocisbx_strdup(tok->valuestring))) {
        rc = ocisbx_fail_nomem();
    }
    if (cJSON_IsString(tok))
        ocisbx_wipe(tok->valuestring, strlen(tok->valuestring));
    cJSON_Delete(json);
done:
    answer_free(&a);
    curl_slist_free_all(hdrs);
    ocisbx_headers_free(signed_hdrs);
    ocisbx_sign_request_free(req);
    free(tenancy);
    ocisbx_free(public_pem);
    free(body);
    free(key_id);
    free(url);
    return rc;
}

/* The whole flow: fresh certificates, a fresh session key, a new token.
 * The provider's state changes only on success. */
static int refresh_token(ip_creds *c)
{
    answer cert = {0}, key = {0}, inter = {0};
    ocisbx_key *leaf = NULL, *session = NULL;
    char *token = NULL;
    int rc = metadata_get(c, "/identity/cert.pem", &cert);
    if (!rc)
        rc = metadata_get(c, "/identity/key.pem", &key);
    if (!rc)
        rc = metadata_get(c, "/identity/intermediate.pem", &inter);
    if (!rc && (rc = ocisbx_key_load_pem(key.body, key.len, NULL, &leaf)))
        ocisbx_error_wrap("instance principal: metadata /identity/key.pem: ");
    if (!rc)
        rc = ocisbx_key_generate(SESSION_KEY_BITS, &session);
    if (!rc)
        rc = federate(c, &cert, &inter, leaf, session, &token);
    answer_free(&cert);
    answer_free(&key);
    answer_free(&inter);
    ocisbx_key_free(leaf);
    if (rc) {
        ocisbx_key_free(session);
        return rc;
    }
    int64_t now = ocisbx_time_now_ms() / 1000;
    ocisbx_free_secret(c->token);
    ocisbx_key_free(c->session_key);
    c->token = token;
    c->session_key = session;
    c->refresh_at = ocisbx_token_refresh_at(token, now, c->margin, &c->expires_at);
    ocisbx_log(OCISBX_LOG_INFO, "instance principal: new session token from %s, valid for %lld s", c->federation_url,
               (long long)(c->expires_at - now));
    return 0;
}

static int ip_get(struct ocisbx_credentials *base, char **key_id, ocisbx_key **key)
{
    ip_creds *c = (ip_creds *)base;
    int64_t now = ocisbx_time_now_ms() / 1000;
    if (!c->token || now >= c->refresh_at) {
        int rc = refresh_token(c);
        /* A token that has not expired yet still works: keep it rather
         * than fail a call because the refresh did, and try again next time. */
        if (rc && (!c->token || now >= c->expires_at))
            return rc;
        if (rc) {
            ocisbx_log(OCISBX_LOG_WARN,
                       "instance principal: refresh failed, using the current token until it "
                       "expires: %s",
                       ocisbx_error_message(ocisbx_error_last()));
            ocisbx_error_clear();
            /* Not again on every call: each attempt costs five requests
             * and a key generation. */
            c->refresh_at = now + RETRY_AFTER_FAILURE_S < c->expires_at ? now + RETRY_AFTER_FAILURE_S : c->expires_at;
        }
    }
    return ocisbx_credentials_session_out(c->token, c->session_key, key_id, key);
}

static int ip_refresh(struct ocisbx_credentials *base)
{
    return refresh_token((ip_creds *)base);
}

static void ip_destroy(struct ocisbx_credentials *base)
{
    ip_creds *c = (ip_creds *)base;
    ocisbx_free_secret(c->token);
    ocisbx_key_free(c->session_key);
    free(c->metadata_url);
    free(c->federation_url);
    free(c->ca_bundle);
}

static const struct ocisbx_credentials_vt ip_vt = {
    OCISBX_AUTH_INSTANCE_PRINCIPAL,
    ip_get,
    ip_refresh,
    ip_destroy,
};

/* The region from the metadata service; it may be a short code ("phx"). */
static int load_region(ip_creds *c)
{
    answer a = {0};
    int rc = metadata_get(c, "/instance/region", &a);
    if (rc)
        return rc;
    size_t i = 0, j = a.len;
    while (i < j && isspace((unsigned char)a.body[i]))
        i++;
    while (j > i && isspace((unsigned char)a.body[j - 1]))
        j--;
    a.body[j] = '\0';
    char *full = NULL;
    rc = ocisbx_region_resolve(a.body + i, &full);
    if (rc)
        ocisbx_error_wrap("instance principal: metadata %s/instance/region: ", c->metadata_url);
    answer_free(&a);
    if (rc)
        return rc;
    c->base.region = ocisbx_strdup(full);
    ocisbx_free(full);
    return c->base.region ? 0 : ocisbx_fail_nomem();
}

int ocisbx_credentials_instance_principal(const ocisbx_instance_principal_options *opts, ocisbx_credentials **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "instance principal: out is NULL");
    *out = NULL;
    ip_creds *c = calloc(1, sizeof *c);
    if (!c)
        return ocisbx_fail_nomem();
    int rc = ocisbx_credentials_init(&c->base, &ip_vt);
    if (rc) {
        free(c);
        return rc;
    }
    c->margin = opts ? opts->margin : DEFAULT_MARGIN_S;
    c->metadata_url = ocisbx_strdup(opts && opts->metadata_url ? opts->metadata_url : DEFAULT_METADATA_URL);
    if (opts && opts->federation_url)
        c->federation_url = ocisbx_strdup(opts->federation_url);
    if (opts && opts->ca_bundle)
        c->ca_bundle = ocisbx_strdup(opts->ca_bundle);
    if (!c->metadata_url || (opts && opts->federation_url && !c->federation_url) ||
        (opts && opts->ca_bundle && !c->ca_bundle))
        rc = ocisbx_fail_nomem();
    if (!rc)
        rc = load_region(c);
    if (!rc && !c->federation_url)
        rc = ocisbx_federation_default_url(c->base.region, &c->federation_url);
    /* http:// is for the link-local metadata service and for loopback test
     * servers; a federation answer carries a token and needs TLS elsewhere. */
    if (!rc && strncmp(c->federation_url, "http://", 7) == 0 && !ocisbx_url_host_is_loopback(c->federation_url))
        rc = ocisbx_fail(OCISBX_ECONFIG,
                         "instance principal: federation URL %s: plain http is only allowed on loopback",
                         c->federation_url);
    /* Fetch the first token now, so a broken set-up fails here. */
    if (!rc)
        rc = refresh_token(c);
    if (rc) {
        ocisbx_error_saved *saved = ocisbx_error_save();
        ocisbx_credentials_free(&c->base);
        ocisbx_error_restore(saved);
        return rc;
    }
    *out = &c->base;
    return 0;
}
