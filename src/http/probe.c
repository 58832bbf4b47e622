/* ocisbx doctor's probe of an endpoint (see probe.h): libcurl's view of one
 * unsigned GET, reduced to what the checks ask. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/http_internal.h"
#include "http/probe.h"

static size_t probe_header(char *data, size_t size, size_t n, void *ud)
{
    ocisbx_probe_result *p = ud;
    size_t len = size * n;
    if (len > 5 && strncasecmp(data, "date:", 5) == 0) {
        const char *v = data + 5;
        size_t vl = len - 5;
        while (vl && (*v == ' ' || *v == '\t'))
            v++, vl--;
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
            vl--;
        snprintf(p->date_text, sizeof p->date_text, "%.*s", (int)vl, v);
    }
    return len;
}

static size_t probe_body(char *data, size_t size, size_t n, void *ud)
{
    (void)data, (void)ud;
    return size * n;
}

static bool is_tls_error(CURLcode code)
{
    switch (code) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED: return true;
    default: return false;
    }
}

/* What the finished transfer tells. */
static void probe_read(CURL *c, CURLcode code, const char *errbuf, ocisbx_probe_result *p)
{
    curl_off_t t = 0;
    if (curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &t) == CURLE_OK && t > 0)
        p->connected = true;
    t = 0;
    if (curl_easy_getinfo(c, CURLINFO_APPCONNECT_TIME_T, &t) == CURLE_OK && t > 0)
        p->tls_done = true;
    char *ip = NULL;
    if (curl_easy_getinfo(c, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip)
        snprintf(p->ip, sizeof p->ip, "%s", ip);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &p->status);
    if (p->status > 0)
        p->connected = true;
    p->failed = code != CURLE_OK;
    p->answered = code == CURLE_OK || p->status > 0;
    p->resolve_failed = code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY;
    p->tls_failed = is_tls_error(code);
    snprintf(p->error, sizeof p->error, "%s", errbuf[0] ? errbuf : code != CURLE_OK ? curl_easy_strerror(code) : "");
    if (p->date_text[0]) {
        time_t d = curl_getdate(p->date_text, NULL);
        p->date = d == (time_t)-1 ? -1 : (int64_t)d;
    }
}

int ocisbx_http_probe(const ocisbx_probe_options *o, ocisbx_probe_result *p)
{
    memset(p, 0, sizeof *p);
    p->date = -1;
    if (!o || !o->url)
        return ocisbx_fail(OCISBX_EINVAL, "probe: no URL");
    CURL *c = curl_easy_init();
    if (!c) {
        p->failed = true;
        snprintf(p->error, sizeof p->error, "cannot start libcurl");
        return 0;
    }
    char url[2048], errbuf[CURL_ERROR_SIZE] = "";
    snprintf(url, sizeof url, "%s/", o->url);
    long connect_s = o->connect_timeout_s > 0 ? (long)o->connect_timeout_s : 10;
    long read_s = o->read_timeout_s > 0 ? (long)o->read_timeout_s : 30;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, connect_s);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, connect_s + read_s);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, probe_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, p);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, probe_body);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (o->ca_bundle)
        curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_bundle);
    /* as the transport: loopback never goes through a proxy */
    if (ocisbx_url_host_is_loopback(o->url))
        curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    CURLcode code = curl_easy_perform(c);
    probe_read(c, code, errbuf, p);
    curl_easy_cleanup(c);
    return 0;
}

const char *ocisbx_http_proxy_var(const char *url, const char **value)
{
    *value = NULL;
    if (ocisbx_url_host_is_loopback(url))
        return NULL;
    static const char *const no_proxy[] = {"no_proxy", "NO_PROXY", NULL};
    if (ocisbx_env_first(no_proxy, NULL))
        return NULL;
    static const char *const https_vars[] = {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", NULL};
    static const char *const http_vars[] = {"http_proxy", "all_proxy", "ALL_PROXY", NULL};
    const char *which = NULL;
    *value = ocisbx_env_first(strncmp(url, "https:", 6) == 0 ? https_vars : http_vars, &which);
    return which;
}
