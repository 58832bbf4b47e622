/* One attempt on a libcurl easy handle: its options and the callbacks
 * that fill the response (headers, body to buffer, file or callback), feed
 * the request body, and watch the idle timeout, the deadline and the
 * cancel callback. Used alike by curl_easy_perform and by curl multi. */
#include <stdlib.h>
#include <string.h>

#include "http/http_internal.h"
#include "ocisbx/util.h"
#include "sys/sleep.h"

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    ocisbx_http_attempt *a = ud;
    size_t len = size * n;
    a->header_bytes += len;
    if (a->header_bytes > OCISBX_HTTP_HEADERS_MAX) {
        a->headers_too_large = true;
        return 0;
    }
    while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
        len--;
    if (len == 0) {
        /* The blank line ends a header block: an interim 1xx one, the
         * final answer's (once), or trailers after the body. */
        if (a->status >= 200 && !a->headers_done) {
            a->headers_done = true;
            ocisbx_http_debug_response(a->status, a->reason, a->resp->headers);
            if (a->r->headers_fn && a->r->headers_fn(a->status, a->resp->headers, a->r->headers_ud) != 0) {
                a->headers_canceled = true;
                return 0;
            }
        }
        return size * n;
    }
    if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
        /* A new status line (after 100 Continue, say): start over. */
        ocisbx_headers *fresh = NULL;
        if (ocisbx_headers_new(&fresh) != 0)
            return 0;
        ocisbx_headers_free(a->resp->headers);
        a->resp->headers = fresh;
        const char *sp = memchr(data, ' ', len);
        a->status = 0;
        a->reason[0] = '\0';
        if (sp) {
            a->status = atoi(sp + 1);
            const char *sp2 = memchr(sp + 1, ' ', len - (size_t)(sp + 1 - data));
            if (sp2) {
                size_t rl = len - (size_t)(sp2 + 1 - data);
                if (rl >= sizeof a->reason)
                    rl = sizeof a->reason - 1;
                memcpy(a->reason, sp2 + 1, rl);
                a->reason[rl] = '\0';
            }
        }
        return size * n;
    }
    const char *colon = memchr(data, ':', len);
    if (!colon || colon == data)
        return size * n;
    char *name = ocisbx_strndup(data, (size_t)(colon - data));
    const char *v = colon + 1;
    const char *end = data + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    char *value = ocisbx_strndup(v, (size_t)(end - v));
    int rc = name && value ? ocisbx_headers_add(a->resp->headers, name, value) : OCISBX_ENOMEM;
    free(name);
    free(value);
    return rc == 0 ? size * n : 0;
}

/* An error answer's body: its head is kept for the message; past the cap
 * the transfer stops (the connection is closed, not drained: a body that
 * never ends must not hold the call). */
static size_t keep_error_body(ocisbx_http_attempt *a, const char *data, size_t len)
{
    size_t room = OCISBX_HTTP_ERROR_BODY_MAX - a->resp->body.len;
    size_t take = len < room ? len : room;
    if (take && ocisbx_buf_append(&a->resp->body, data, take) != 0) {
        a->sink_rc = OCISBX_ENOMEM;
        return 0;
    }
    if (take < len) {
        a->error_body_cut = true;
        return 0;
    }
    return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    ocisbx_http_attempt *a = ud;
    size_t len = size * n;
    ocisbx_http_request *r = a->r;
    if (a->status >= 300)
        return keep_error_body(a, data, len);
    if (r->sink == SINK_BUFFER) {
        if (a->resp->body.len + len > OCISBX_HTTP_BODY_MAX) {
            /* a buffered answer that never ends must not take the memory */
            a->sink_rc = ocisbx_fail(OCISBX_ETOOLARGE,
                                     "the answer's body is larger than the %d bytes a buffered answer may have",
                                     OCISBX_HTTP_BODY_MAX);
            return 0;
        }
        if (ocisbx_buf_append(&a->resp->body, data, len) != 0) {
            a->sink_rc = OCISBX_ENOMEM;
            return 0;
        }
        return len;
    }
    if (r->sink == SINK_FILE) {
        if (!a->dest->fp && ocisbx_dest_open(a->dest, r->sink_path, "response file") != 0) {
            a->sink_rc = ocisbx_error_code(ocisbx_error_last());
            return 0;
        }
        if (fwrite(data, 1, len, a->dest->fp) != len) {
            a->sink_rc = ocisbx_fail(OCISBX_EIO, "response file %s: write failed", r->sink_path);
            return 0;
        }
        a->sink_bytes += len;
        return len;
    }
    a->sink_bytes += len;
    if (r->sink_write(data, len, r->sink_ud) != 0) {
        a->sink_canceled = true;
        return 0;
    }
    return len;
}

static size_t on_read(char *buf, size_t size, size_t n, void *ud)
{
    ocisbx_http_attempt *a = ud;
    int64_t got = ocisbx_http_body_read(a->r, &a->body_offset, buf, size * n);
    if (got < 0) {
        a->body_rc = (int)got;
        return CURL_READFUNC_ABORT;
    }
    if (got > 0)
        a->body_sent = true;
    return (size_t)got;
}

/* libcurl rewinds when it resends on a reused connection that had died. */
static int on_seek(void *ud, curl_off_t offset, int origin)
{
    ocisbx_http_attempt *a = ud;
    if (offset != 0 || origin != SEEK_SET || !ocisbx_http_body_replayable(a->r))
        return CURL_SEEKFUNC_CANTSEEK;
    a->body_offset = 0;
    return ocisbx_http_body_begin(a->r) == 0 ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    ocisbx_http_attempt *a = ud;
    if (a->progress_fn)
        a->progress_fn((int64_t)dlnow, (int64_t)dltotal, (int64_t)ulnow, (int64_t)ultotal, a->progress_ud);
    if (ocisbx_sys_canceled(a->cancel, a->cancel_ud)) {
        a->canceled = true;
        return 1;
    }
    int64_t now = ocisbx_time_monotonic_ms();
    if (a->deadline_at && now > a->deadline_at) {
        a->deadline_expired = true;
        return 1;
    }
    if (!a->connected) {
        /* the read timeout counts from the moment the request can go out:
         * connecting has its own timeout */
        curl_off_t t = 0;
        if (curl_easy_getinfo(a->curl, CURLINFO_PRETRANSFER_TIME_T, &t) == CURLE_OK && t > 0) {
            a->connected = true;
            a->last_activity = now;
        }
    } else {
        curl_off_t p = dlnow + ulnow;
        if (p != a->last_progress) {
            a->last_progress = p;
            a->last_activity = now;
        } else if (now - a->last_activity > a->idle_ms) {
            a->idle_expired = true;
            return 1;
        }
    }
    return 0;
}

static void set_basics(ocisbx_http *h, ocisbx_http_attempt *a, CURL *c, char *errbuf)
{
    ocisbx_http_request *r = a->r;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, r->url);
    /* The URL was normalised before signing: curl must not touch it again. */
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(c, CURLOPT_SHARE, h->share);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    /* HTTP/1.1 by default: the Host header goes out exactly as signed. An
     * engine may allow HTTP/2 over TLS, where curl sends the same Host value
     * as :authority, and then waits for a connection it can multiplex. */
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, h->http_version ? h->http_version : (long)CURL_HTTP_VERSION_1_1);
    if (h->http_version == (long)CURL_HTTP_VERSION_2TLS)
        curl_easy_setopt(c, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (h->opt.ca_bundle)
        curl_easy_setopt(c, CURLOPT_CAINFO, h->opt.ca_bundle);
    /* "" disables proxies, the environment's too; loopback never goes through one. */
    if (h->opt.ignore_proxy_env || a->loopback)
        curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)h->opt.connect_timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, a);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
}

static void set_method(ocisbx_http_attempt *a, CURL *c)
{
    ocisbx_http_request *r = a->r;
    bool has_body = ocisbx_http_method_has_body(r->method) || r->body != BODY_NONE;
    if (strcmp(r->method, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (has_body) {
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(c, CURLOPT_READDATA, a);
        curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek);
        curl_easy_setopt(c, CURLOPT_SEEKDATA, a);
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)ocisbx_http_body_length(r));
        if (strcmp(r->method, "PUT") != 0)
            curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
    } else if (strcmp(r->method, "GET") != 0) {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
    }
}

/* The header list as libcurl takes it: exactly what prepare() lists (no
 * Expect: 100-continue, no Accept: * / *). */
static int build_slist(const ocisbx_headers *hl, struct curl_slist **out)
{
    struct curl_slist *sl = NULL;
    bool has_accept = false;
    for (size_t i = 0; i < ocisbx_headers_count(hl); i++) {
        const char *name = ocisbx_headers_name(hl, i);
        if (strcmp(name, "accept") == 0)
            has_accept = true;
        char *line = ocisbx_asprintf("%s: %s", name, ocisbx_headers_value(hl, i));
        struct curl_slist *n2 = line ? curl_slist_append(sl, line) : NULL;
        if (line)
            ocisbx_wipe(line, strlen(line)); /* may hold the Authorization value */
        free(line);
        if (!n2) {
            ocisbx_http_slist_free(sl);
            return ocisbx_fail_nomem();
        }
        sl = n2;
    }
    struct curl_slist *n3 = curl_slist_append(sl, "Expect:");
    if (n3 && !has_accept)
        n3 = curl_slist_append(n3, "Accept:");
    if (!n3) {
        ocisbx_http_slist_free(sl);
        return ocisbx_fail_nomem();
    }
    *out = n3;
    return 0;
}

int ocisbx_http_attempt_setup(ocisbx_http *h, ocisbx_http_attempt *a, CURL *c, const ocisbx_headers *hl,
                              struct curl_slist **slist, char *errbuf)
{
    ocisbx_http_request *r = a->r;
    *slist = NULL;
    int64_t now = ocisbx_time_monotonic_ms();
    /* No limit on the whole attempt: the read timeout is a limit on the gap
     * between bytes once connected (on_progress), the deadline one on the
     * call (which also ends a body that dribbles). */
    if (a->deadline_at && a->deadline_at - now <= 0)
        return ocisbx_fail(OCISBX_ETIMEOUT, "%s %.300s: deadline passed", r->method, r->url);
    int rc = build_slist(hl, slist);
    if (rc)
        return rc;
    set_basics(h, a, c, errbuf);
    if (a->deadline_at)
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(a->deadline_at - now));
    set_method(a, c);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, *slist);
    a->curl = c;
    a->started_at = now;
    a->last_activity = now;
    a->last_progress = 0;
    return 0;
}

void ocisbx_http_slist_free(struct curl_slist *sl)
{
    for (struct curl_slist *p = sl; p; p = p->next)
        ocisbx_wipe(p->data, strlen(p->data));
    curl_slist_free_all(sl);
}
