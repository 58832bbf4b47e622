/* The transport: one CURL easy handle per ocisbx_http (connection reuse)
 * plus a share for the DNS and TLS session caches. A call is a loop over
 * one attempt (call.c, attempt.c) and one pure decision (retry.c). */
#include <stdlib.h>
#include <string.h>

#include "http/http_internal.h"
#include "ocisbx/util.h"
#include "sys/sleep.h"

int ocisbx_http_new(const ocisbx_http_options *opts, ocisbx_http **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "http: out is NULL");
    *out = NULL;
    int rc = ocisbx_global_ensure();
    if (rc)
        return rc;
    ocisbx_http *h = calloc(1, sizeof *h);
    if (!h)
        return ocisbx_fail_nomem();
    if (opts) {
        if ((rc = ocisbx_http_options_copy(&h->opt, opts)) != 0) {
            free(h);
            return rc;
        }
    } else {
        ocisbx_http_options_defaults(&h->opt);
    }
    h->curl = curl_easy_init();
    h->share = curl_share_init();
    h->user_agent = ocisbx_http_user_agent(h->opt.ua_suffix);
    if (!h->curl || !h->share || !h->user_agent) {
        ocisbx_http_free(h);
        return ocisbx_fail(OCISBX_ENOMEM, "http: cannot create the libcurl handle");
    }
    /* One easy handle per share: no lock functions are needed. */
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    *out = h;
    return 0;
}

void ocisbx_http_free(ocisbx_http *h)
{
    if (!h)
        return;
    if (h->curl)
        curl_easy_cleanup(h->curl);
    if (h->share)
        curl_share_cleanup(h->share);
    free(h->user_agent);
    ocisbx_http_options_release(&h->opt);
    free(h);
}

int ocisbx_http_prepare(ocisbx_http *h, ocisbx_http_request *r, ocisbx_headers **out)
{
    if (!h || !r || !out)
        return ocisbx_fail(OCISBX_EINVAL, "http prepare: NULL argument");
    *out = NULL;
    ocisbx_url u;
    int rc = ocisbx_url_parse(r->url, &u);
    if (rc)
        return rc;
    if ((rc = ocisbx_url_check_scheme(&u, r->url, h->opt.allow_plain_http)) == 0)
        rc = ocisbx_http_build_headers(h, r, &u, out);
    ocisbx_http_body_end(r);
    ocisbx_url_clear(&u);
    return rc;
}

int ocisbx_http_send(ocisbx_http *h, ocisbx_http_request *r, ocisbx_http_response **out)
{
    if (!h || !r || !out)
        return ocisbx_fail(OCISBX_EINVAL, "http send: NULL argument");
    *out = NULL;
    ocisbx_http_call *c = NULL;
    int rc = ocisbx_http_call_new(h, r, &c);
    if (rc)
        return rc;
    for (;;) {
        if ((rc = ocisbx_http_call_start(c, h->curl)) != 0)
            break;
        ocisbx_http_call_end(c, curl_easy_perform(h->curl));
        ocisbx_http_decision d = ocisbx_http_call_decide(c, NULL);
        if (d.action == OCISBX_HTTP_FINISH || ocisbx_http_call_before_retry(c, &d) != 0)
            break;
        if (ocisbx_sys_sleep_ms(d.wait_ms, c->cancel, c->cancel_ud) != 0) {
            rc = ocisbx_http_call_canceled(c);
            break;
        }
    }
    return ocisbx_http_call_finish(c, rc, out);
}
