/* The transport: one CURL easy handle per ocisbx_http (connection reuse)
 * plus a share for the DNS and TLS session caches; each attempt is signed
 * afresh and retried per signing.md "Requests beyond the signature". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "auth/credentials_internal.h"
#include "http/http_internal.h"
#include "ocisbx/util.h"
#include "sys/sleep.h"
#include "util/dest.h"

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

/* ---- one attempt ---- */
typedef struct attempt {
    ocisbx_http_request *r;
    ocisbx_http_response *resp;
    int status;         /* from the last status line */
    char reason[128];   /* its reason phrase */
    size_t body_offset; /* progress through a buffer body */
    int body_rc;        /* error from the body source */
    ocisbx_dest *dest;  /* SINK_FILE: the destination, opened at the first byte */
    int sink_rc;
    size_t header_bytes; /* of this answer, all header blocks */
    bool headers_too_large;
    bool sink_canceled;
    bool headers_done;     /* the headers callback ran for this answer */
    bool headers_canceled; /* ... and asked to stop */
    uint64_t sink_bytes;   /* delivered to a file/callback sink */
    bool streaming;
    bool loopback;
    int64_t idle_ms, deadline_at, last_activity;
    curl_off_t last_progress;
    bool idle_expired;
    bool deadline_expired;
    ocisbx_cancel_fn cancel;
    void *cancel_ud;
    ocisbx_http_progress_fn progress_fn;
    void *progress_ud;
    bool canceled; /* the cancel callback stopped the transfer */
    CURL *curl;
    bool connected; /* the request could go out (connect and TLS done) */
} attempt;

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    attempt *a = ud;
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

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    attempt *a = ud;
    size_t len = size * n;
    ocisbx_http_request *r = a->r;
    if (a->status >= 300 || r->sink == SINK_BUFFER) {
        size_t room = len;
        if (a->status >= 300 && a->resp->body.len + room > OCISBX_HTTP_ERROR_BODY_MAX)
            room = OCISBX_HTTP_ERROR_BODY_MAX - a->resp->body.len; /* keep the head, drop the rest */
        if (a->status < 300 && a->resp->body.len + room > OCISBX_HTTP_BODY_MAX) {
            /* a buffered answer that never ends must not take the memory */
            a->sink_rc = ocisbx_fail(OCISBX_ETOOLARGE,
                                     "the answer's body is larger than the %d bytes a buffered answer may have",
                                     OCISBX_HTTP_BODY_MAX);
            return 0;
        }
        if (room && ocisbx_buf_append(&a->resp->body, data, room) != 0) {
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
    attempt *a = ud;
    int64_t got = ocisbx_http_body_read(a->r, &a->body_offset, buf, size * n);
    if (got < 0) {
        a->body_rc = (int)got;
        return CURL_READFUNC_ABORT;
    }
    return (size_t)got;
}

/* libcurl rewinds when it resends on a reused connection that had died. */
static int on_seek(void *ud, curl_off_t offset, int origin)
{
    attempt *a = ud;
    if (offset != 0 || origin != SEEK_SET || !ocisbx_http_body_replayable(a->r))
        return CURL_SEEKFUNC_CANTSEEK;
    a->body_offset = 0;
    return ocisbx_http_body_begin(a->r) == 0 ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    attempt *a = ud;
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

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int setup_attempt(ocisbx_http *h, attempt *a, const ocisbx_headers *hl, struct curl_slist **slist,
                         char *errbuf)
{
    ocisbx_http_request *r = a->r;
    CURL *c = h->curl;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, r->url);
    /* The URL was normalised before signing: curl must not touch it again. */
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(c, CURLOPT_SHARE, h->share);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    /* HTTP/1.1: the Host header goes out exactly as signed (no :authority). */
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
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
    int64_t now = ocisbx_time_monotonic_ms();
    /* No limit on the whole attempt: the read timeout is a limit on the gap
     * between bytes once connected (on_progress), the deadline one on the call. */
    int64_t total = 0;
    if (a->deadline_at) {
        int64_t left = a->deadline_at - now;
        if (left <= 0)
            return ocisbx_fail(OCISBX_ETIMEOUT, "%s %.300s: deadline passed", r->method, r->url);
        total = total ? min64(total, left) : left;
    }
    if (total)
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)total);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, a);
    a->last_activity = now;
    a->last_progress = 0;
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, a);

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
            curl_slist_free_all(sl);
            return ocisbx_fail_nomem();
        }
        sl = n2;
    }
    /* Only what prepare() lists goes out: no Expect: 100-continue, no Accept: * / *. */
    struct curl_slist *n3 = curl_slist_append(sl, "Expect:");
    if (n3 && !has_accept)
        n3 = curl_slist_append(n3, "Accept:");
    if (!n3) {
        curl_slist_free_all(sl);
        return ocisbx_fail_nomem();
    }
    sl = n3;
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, sl);
    *slist = sl;
    return 0;
}

static void free_slist_wiped(struct curl_slist *sl)
{
    for (struct curl_slist *p = sl; p; p = p->next)
        ocisbx_wipe(p->data, strlen(p->data));
    curl_slist_free_all(sl);
}

static bool curl_retryable(CURLcode cc)
{
    switch (cc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    default: return false;
    }
}

static bool status_retryable(int status, const ocisbx_http_response *resp)
{
    if (status == 429 || status == 500 || status == 502 || status == 503 || status == 504)
        return true;
    if (status == 409) {
        char *code = NULL, *msg = NULL;
        ocisbx_http_parse_error_body(resp->body.data, resp->body.len, &code, &msg);
        bool yes = code && (strcmp(code, "IncorrectState") == 0 || strcmp(code, "LockConflict") == 0);
        free(code);
        free(msg);
        return yes;
    }
    return false;
}

int64_t ocisbx_http_retry_after_ms(const char *value, int64_t now_ms)
{
    if (!value || !*value)
        return -1;
    int64_t ms = -1;
    char *end = NULL;
    errno = 0;
    double secs = strtod(value, &end);
    time_t t;
    if (end != value && *end == '\0' && errno == 0 && secs >= 0) {
        /* compared in seconds first: a huge value must not overflow */
        ms = secs >= OCISBX_HTTP_RETRY_AFTER_CAP_MS / 1000.0 ? OCISBX_HTTP_RETRY_AFTER_CAP_MS
                                                             : (int64_t)(secs * 1000.0);
    } else if (ocisbx_time_parse_rfc1123(value, &t) == 0) {
        int64_t d = (int64_t)t * 1000 - now_ms;
        ms = d > 0 ? d : 0;
    } else {
        return -1;
    }
    return ms < OCISBX_HTTP_RETRY_AFTER_CAP_MS ? ms : OCISBX_HTTP_RETRY_AFTER_CAP_MS;
}

static int64_t backoff_ms(const ocisbx_http *h, int attempt_no)
{
    int64_t d = h->opt.backoff_base_ms;
    for (int i = 1; i < attempt_no && d < h->opt.backoff_cap_ms; i++)
        d *= 2;
    if (d > h->opt.backoff_cap_ms)
        d = h->opt.backoff_cap_ms;
    if (h->opt.max_jitter_ms > 0) {
        uint32_t rnd = 0;
        if (RAND_bytes((unsigned char *)&rnd, sizeof rnd) == 1)
            d += (int64_t)(rnd % (uint32_t)(h->opt.max_jitter_ms + 1));
    }
    return d;
}

static int fail_answer(ocisbx_http_request *r, ocisbx_http_response *resp, const char *reason)
{
    char *code = NULL, *msg = NULL;
    ocisbx_http_parse_error_body(resp->body.data, resp->body.len, &code, &msg);
    int rc = ocisbx_status_from_http(resp->status);
    ocisbx_buf m = OCISBX_BUF_INIT;
    ocisbx_buf_appendf(&m, "%s %.300s: %d", r->method, r->url, resp->status);
    if (code)
        ocisbx_buf_appendf(&m, " %s", code);
    if (msg && *msg)
        ocisbx_buf_appendf(&m, "%s %s", code ? ":" : "", msg);
    if (!code && !(msg && *msg) && reason && *reason)
        ocisbx_buf_appendf(&m, " %s", reason);
    if (resp->attempts > 1)
        ocisbx_buf_appendf(&m, " (after %d attempts, opc-request-id: %s)", resp->attempts,
                           resp->request_id ? resp->request_id : "none");
    else
        ocisbx_buf_appendf(&m, " (opc-request-id: %s)", resp->request_id ? resp->request_id : "none");
    ocisbx_fail_http(rc, resp->status, code, resp->request_id, "%s", m.data ? m.data : "HTTP error");
    ocisbx_error_set_attempts(resp->attempts);
    ocisbx_buf_free(&m);
    free(code);
    free(msg);
    return rc;
}

static int fail_canceled(ocisbx_http_request *r, int attempts)
{
    ocisbx_fail(OCISBX_ECANCELED, "%s %.300s: canceled after %d attempt%s (opc-request-id: %s)", r->method, r->url,
                attempts, attempts == 1 ? "" : "s", r->request_id);
    ocisbx_error_set_attempts(attempts);
    return OCISBX_ECANCELED;
}

static int fail_transport(ocisbx_http_request *r, attempt *a, CURLcode cc, const char *errbuf, int attempts)
{
    if (a->body_rc)
        return ocisbx_error_wrap("%s %.300s: request body: ", r->method, r->url);
    if (a->sink_rc)
        return ocisbx_error_wrap("%s %.300s: ", r->method, r->url);
    if (a->canceled)
        return fail_canceled(r, attempts);
    if (a->sink_canceled || a->headers_canceled)
        return ocisbx_fail(OCISBX_ECANCELED, "%s %.300s: canceled by the %s callback (opc-request-id: %s)", r->method,
                           r->url, a->headers_canceled ? "headers" : "response", r->request_id);
    if (a->headers_too_large || (cc == CURLE_OUT_OF_MEMORY && !a->headers_done)) {
        /* libcurl refuses one header line above its own limit (100 KiB) with
         * "out of memory"; more than ours in all is refused by on_header */
        ocisbx_fail(OCISBX_ETOOLARGE,
                    "%s %.300s: the answer's headers are too large (more than %d bytes in all, or a line above "
                    "libcurl's 100 KiB limit) (opc-request-id: %s)",
                    r->method, r->url, OCISBX_HTTP_HEADERS_MAX, r->request_id);
        ocisbx_error_set_attempts(attempts);
        return OCISBX_ETOOLARGE;
    }
    int code = OCISBX_ETRANSPORT;
    char idle_msg[96];
    const char *what = errbuf && *errbuf ? errbuf : curl_easy_strerror(cc);
    if (a->idle_expired) {
        code = OCISBX_ETIMEOUT;
        snprintf(idle_msg, sizeof idle_msg, "idle timeout: no data for %lld ms", (long long)a->idle_ms);
        what = idle_msg;
    } else if (a->deadline_expired) {
        code = OCISBX_ETIMEOUT;
        what = "deadline passed";
    } else if (cc == CURLE_OPERATION_TIMEDOUT) {
        code = OCISBX_ETIMEOUT;
    }
    ocisbx_fail(code, "%s %.300s: %s after %d attempt%s (opc-request-id: %s)", r->method, r->url, what, attempts,
                attempts == 1 ? "" : "s", r->request_id);
    ocisbx_error_set_attempts(attempts);
    return code;
}

static int check_url(ocisbx_http *h, ocisbx_http_request *r, ocisbx_url *u)
{
    int rc = ocisbx_url_parse(r->url, u);
    if (rc == 0 && (rc = ocisbx_url_check_scheme(u, r->url, h->opt.allow_plain_http)) != 0)
        ocisbx_url_clear(u);
    return rc;
}

int ocisbx_http_prepare(ocisbx_http *h, ocisbx_http_request *r, ocisbx_headers **out)
{
    if (!h || !r || !out)
        return ocisbx_fail(OCISBX_EINVAL, "http prepare: NULL argument");
    *out = NULL;
    ocisbx_url u;
    int rc = check_url(h, r, &u);
    if (rc)
        return rc;
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
    ocisbx_url u;
    int rc = check_url(h, r, &u);
    if (rc)
        return rc;
    ocisbx_http_response *resp = ocisbx_http_response_alloc();
    if (!resp) {
        ocisbx_url_clear(&u);
        return ocisbx_fail_nomem();
    }
    int64_t start = ocisbx_time_monotonic_ms();
    int64_t deadline_at = h->opt.deadline_ms > 0 ? start + h->opt.deadline_ms : 0;
    int max_attempts = h->opt.retries && r->retry_class != OCISBX_HTTP_RETRY_NEVER ? h->opt.max_attempts : 1;
    bool refreshed = false;
    ocisbx_dest dest = {0};
    int n = 0;
    for (;;) {
        if (ocisbx_sys_canceled(h->opt.cancel, h->opt.cancel_ud)) {
            rc = fail_canceled(r, n);
            resp->status = 0;
            break;
        }
        n++;
        attempt a;
        memset(&a, 0, sizeof a);
        a.r = r;
        a.resp = resp;
        a.cancel = h->opt.cancel;
        a.cancel_ud = h->opt.cancel_ud;
        a.progress_fn = h->opt.progress_fn;
        a.progress_ud = h->opt.progress_ud;
        a.dest = &dest;
        a.curl = h->curl;
        /* Streams, and file/callback bodies or sinks (any size), get a limit
         * on the gap between bytes instead of one on the whole attempt. */
        bool unbounded = r->body == BODY_FILE || r->body == BODY_CALLBACK || r->sink != SINK_BUFFER;
        a.streaming = r->streaming || unbounded;
        a.loopback = ocisbx_host_is_loopback(u.host);
        a.idle_ms = r->streaming ? h->opt.stream_idle_timeout_ms : h->opt.read_timeout_ms;
        a.deadline_at = deadline_at;
        ocisbx_buf_clear(&resp->body);
        resp->status = 0;
        resp->reason[0] = '\0';
        ocisbx_headers *fresh = NULL;
        if ((rc = ocisbx_headers_new(&fresh)) != 0)
            break;
        ocisbx_headers_free(resp->headers); /* nothing of an earlier attempt's answer stays */
        resp->headers = fresh;
        ocisbx_headers *hl = NULL;
        struct curl_slist *sl = NULL;
        char errbuf[CURL_ERROR_SIZE] = "";
        rc = ocisbx_http_build_headers(h, r, &u, &hl);
        if (rc == 0)
            rc = ocisbx_http_body_begin(r);
        if (rc == 0)
            rc = setup_attempt(h, &a, hl, &sl, errbuf);
        ocisbx_headers_free(hl);
        if (rc) {
            free_slist_wiped(sl);
            break;
        }
        CURLcode cc = curl_easy_perform(h->curl);
        free_slist_wiped(sl);
        curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, NULL);
        long status = 0, new_conns = 0, request_bytes = 0;
        curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(h->curl, CURLINFO_NUM_CONNECTS, &new_conns);
        curl_easy_getinfo(h->curl, CURLINFO_REQUEST_SIZE, &request_bytes);
        /* NUM_CONNECTS counts connections made; a request that went out
         * without one went on a kept-alive connection; neither: a failed
         * connect (or resolve), which reused nothing. */
        const char *conn = new_conns > 0       ? "new connection"
                           : request_bytes > 0 ? "reused connection"
                                               : "no connection";
        resp->status = cc == CURLE_OK ? (int)status : 0;
        memcpy(resp->reason, a.reason, sizeof resp->reason);
        resp->attempts = n;
        if (cc == CURLE_OK && a.sink_rc) {
            rc = a.sink_rc;
            resp->status = 0;
            break;
        }
        free(resp->request_id);
        const char *rid = ocisbx_headers_get(resp->headers, "opc-request-id");
        resp->request_id = ocisbx_strdup(rid ? rid : r->request_id);
        ocisbx_log(OCISBX_LOG_DEBUG, "http: %s %.300s -> %d%s%s (opc-request-id: %s, attempt %d/%d, %s)", r->method,
                   r->url, resp->status, cc ? " " : "", cc ? curl_easy_strerror(cc) : "",
                   resp->request_id ? resp->request_id : "-", n, max_attempts, conn);
        if (h->opt.attempt_fn)
            h->opt.attempt_fn(r->method, r->url, n, resp->status, resp->request_id ? resp->request_id : r->request_id,
                              h->opt.attempt_ud);

        bool can_retry = n < max_attempts && ocisbx_http_body_replayable(r) &&
                         !(r->sink == SINK_CALLBACK && a.sink_bytes > 0);
        int64_t wait = -1;
        if (cc != CURLE_OK) {
            bool timed_out = a.idle_expired || cc == CURLE_OPERATION_TIMEDOUT;
            if (!a.deadline_expired && !a.canceled && !a.sink_canceled && !a.headers_canceled && !a.sink_rc &&
                !a.body_rc && (curl_retryable(cc) || timed_out) && can_retry)
                wait = backoff_ms(h, n);
            if (wait < 0) {
                rc = fail_transport(r, &a, cc, errbuf, n);
                break;
            }
        } else if (resp->status == 401 && h->opt.creds && ocisbx_credentials_can_refresh(h->opt.creds) &&
                   !refreshed && ocisbx_http_body_replayable(r)) {
            /* An expired token: refresh once and re-sign (not a retry of the
             * policy). A provider without a refresh (API key) would only get
             * the same 401 again: its answer is returned at once. */
            refreshed = true;
            if (ocisbx_credentials_refresh(h->opt.creds) == 0) {
                if (n >= max_attempts)
                    max_attempts = n + 1;
                wait = 0;
            }
        } else if (resp->status >= 400 && can_retry && status_retryable(resp->status, resp)) {
            const char *rav = ocisbx_headers_get(resp->headers, "retry-after");
            int64_t ra = ocisbx_http_retry_after_ms(rav, ocisbx_time_now_ms());
            if (ra == OCISBX_HTTP_RETRY_AFTER_CAP_MS)
                ocisbx_log(OCISBX_LOG_DEBUG,
                           "http: %s %.300s: retry-after %.40s capped at %d ms (opc-request-id: %s)", r->method,
                           r->url, rav, OCISBX_HTTP_RETRY_AFTER_CAP_MS, r->request_id);
            wait = ra >= 0 ? ra : backoff_ms(h, n);
        }
        if (wait < 0) {
            rc = resp->status >= 400 ? fail_answer(r, resp, a.reason) : 0;
            if (rc == 0 && r->sink == SINK_FILE && !dest.fp) /* an empty answer still makes the file */
                rc = ocisbx_dest_open(&dest, r->sink_path, "response file");
            if (rc == 0 && r->sink == SINK_FILE)
                rc = ocisbx_dest_commit(&dest, "response file");
            break;
        }
        if (deadline_at && ocisbx_time_monotonic_ms() + wait >= deadline_at) {
            rc = cc != CURLE_OK ? fail_transport(r, &a, cc, errbuf, n) : fail_answer(r, resp, a.reason);
            break;
        }
        /* INFO: a program may show it (the CLI does on a terminal) so a long
         * series of retries is not silent */
        char cause[CURL_ERROR_SIZE + 32];
        if (cc != CURLE_OK)
            snprintf(cause, sizeof cause, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
        else
            snprintf(cause, sizeof cause, "HTTP %d%s%s", resp->status, a.reason[0] ? " " : "", a.reason);
        ocisbx_log(OCISBX_LOG_INFO, "http: %s %.300s: %s; retrying in %lld ms (attempt %d of %d, opc-request-id: %s)",
                   r->method, r->url, cause, (long long)wait, n + 1, max_attempts, r->request_id);
        if (h->opt.retry_fn)
            h->opt.retry_fn(n + 1, max_attempts, wait, cc == CURLE_OK ? resp->status : 0, cause, r->request_id,
                            h->opt.retry_ud);
        ocisbx_dest_abort(&dest); /* the next attempt starts the file again */
        if (ocisbx_sys_sleep_ms(wait, h->opt.cancel, h->opt.cancel_ud) != 0) {
            rc = fail_canceled(r, n);
            resp->status = 0;
            break;
        }
    }
    ocisbx_dest_abort(&dest); /* nothing partial stays (a no-op after a commit) */
    ocisbx_http_body_end(r);
    ocisbx_url_clear(&u);
    /* a failure that is no error answer still names the call: its request id,
     * and the status when an answer came (a broken or refused body) */
    if (rc != 0 && resp->status < 400)
        ocisbx_error_annotate(resp->status >= 200 ? resp->status : 0,
                              resp->request_id ? resp->request_id : r->request_id);
    if (rc != 0 && resp->status < 400) {
        ocisbx_http_response_free(resp);
        return rc;
    }
    *out = resp;
    return rc;
}
