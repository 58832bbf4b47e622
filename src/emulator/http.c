/* libmicrohttpd glue: raw request target (before MHD unescapes it, since the
 * signature covers the bytes as sent), headers, body with the size limit, and
 * the answer, including event streams.
 *
 * Thread per connection: an event stream or a runAndWait blocks its own
 * thread only, so long streams never starve other requests (50 concurrent
 * sandboxes streaming are 50 threads, which is cheap). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "emulator/emu.h"
#include "emulator/http.h"

struct emu_http {
    struct MHD_Daemon *d;
    emu_server *s;
    int port;
    char *cert;
    char *key;
    struct sockaddr_in addr;
};

typedef struct conn_ctx {
    emu_http *h;
    struct MHD_Connection *con;
    emu_request req;
    char *raw_uri;
    bool started;
    emu_stream *st;
    emu_file_body *file; /* a file read being sent */
    ocisbx_buf pending;
    size_t pending_off;
    int end; /* 0 open, 1 end, -1 cut */
} conn_ctx;

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *con)
{
    (void)con;
    conn_ctx *c = calloc(1, sizeof *c);
    if (c) {
        c->h = cls;
        c->raw_uri = ocisbx_strdup(uri);
    }
    return c;
}

static enum MHD_Result header_cb(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    emu_request_add_header(cls, key, value);
    return MHD_YES;
}

/* A stream waiting for output would otherwise notice a client that went
 * away only when it next writes: peek at the socket instead. */
static bool peer_gone(conn_ctx *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c->con, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return false;
    char b;
    ssize_t n = recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0;
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    conn_ctx *c = cls;
    emu_server *s = c->h->s;
    for (;;) {
        if (c->pending_off < c->pending.len) {
            size_t n = c->pending.len - c->pending_off;
            if (n > max)
                n = max;
            memcpy(buf, c->pending.data + c->pending_off, n);
            c->pending_off += n;
            return (ssize_t)n;
        }
        ocisbx_buf_clear(&c->pending);
        c->pending_off = 0;
        if (c->end == 1)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (c->end == -1)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (peer_gone(c))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        pthread_mutex_lock(&s->mu);
        /* events are stored before they are sent: none unless stored */
        int rc = emu_store_sync_command(s, c->st->cmd) == 0 ? emu_stream_next(s, c->st, &c->pending) : 0;
        if (rc == 0 && c->pending.len == 0) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&s->cv, &s->mu, &ts);
        }
        if (rc != 0)
            c->end = rc;
        pthread_mutex_unlock(&s->mu);
    }
}

static bool peer_gone_cb(void *ud)
{
    return peer_gone(ud);
}

static ssize_t file_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    conn_ctx *c = cls;
    long n = emu_file_read_at(c->file, pos, buf, max);
    if (n == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    return n < 0 ? MHD_CONTENT_READER_END_WITH_ERROR : (ssize_t)n;
}

/* A file read: hashed in a first pass (here, without the state lock: it
 * holds up this connection only, and stops when the client goes), then
 * sent by MHD through file_reader. */
static struct MHD_Response *file_response(conn_ctx *c, emu_response *resp)
{
    emu_file_body *fb = resp->file;
    if (emu_file_hash(fb, peer_gone_cb, c) != 0) {
        if (peer_gone(c))
            return NULL;
        const char *rid0 = emu_response_get_header(resp, "opc-request-id");
        char *rid = rid0 ? ocisbx_strdup(rid0) : NULL;
        emu_response_clear(resp);
        emu_response_init(resp);
        if (rid)
            emu_response_header(resp, "opc-request-id", rid);
        free(rid);
        emu_error(resp, 409, "IncorrectState", "the file changed or could not be read while it was being read");
        return MHD_create_response_from_buffer(resp->body.len, resp->body.data, MHD_RESPMEM_MUST_COPY);
    }
    emu_response_header(resp, "opc-content-sha256", fb->sha);
    resp->file = NULL;
    c->file = fb;
    return MHD_create_response_from_callback((uint64_t)fb->size, 64 * 1024, file_reader, c, NULL);
}

static enum MHD_Result answer(conn_ctx *c, struct MHD_Connection *con)
{
    emu_response resp;
    emu_response_init(&resp);
    emu_handle(c->h->s, &c->req, &resp);
    if (getenv("OCISBX_EMULATOR_LOG"))
        fprintf(stderr, "ocisbx-emulator: %s %s -> %d%s\n", c->req.method, c->req.path ? c->req.path : "",
                resp.reset ? 0 : resp.status, resp.reset ? " (reset)" : "");
    if (resp.reset) {
        emu_response_clear(&resp);
        return MHD_NO; /* MHD closes the connection without an answer */
    }
    struct MHD_Response *r;
    if (resp.stream) {
        c->st = resp.stream;
        resp.stream = NULL;
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_reader, c, NULL);
    } else if (resp.file) {
        r = file_response(c, &resp);
    } else {
        static char empty[1];
        r = MHD_create_response_from_buffer(resp.body.len, resp.body.data ? resp.body.data : empty,
                                            MHD_RESPMEM_MUST_COPY);
    }
    if (!r) {
        emu_response_clear(&resp);
        return MHD_NO;
    }
    if (resp.content_type[0] && resp.status != 204)
        MHD_add_response_header(r, "content-type", resp.content_type);
    for (size_t i = 0; i < resp.n_headers; i++)
        MHD_add_response_header(r, resp.headers[i].name, resp.headers[i].value);
    enum MHD_Result ret = MHD_queue_response(con, (unsigned int)resp.status, r);
    MHD_destroy_response(r);
    emu_response_clear(&resp);
    return ret;
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *con, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_data_size,
                                 void **req_cls)
{
    (void)url;
    (void)version;
    emu_http *h = cls;
    conn_ctx *c = *req_cls;
    if (!c)
        return MHD_NO;
    if (!c->started) {
        c->started = true;
        c->con = con;
        emu_request_set_target(&c->req, method, c->raw_uri ? c->raw_uri : "/");
        MHD_get_connection_values(con, MHD_HEADER_KIND, header_cb, &c->req);
        const char *cl = emu_request_header(&c->req, "content-length");
        /* The body is still read (and dropped) before the 413: answering
         * early makes clients that are still sending see a broken
         * connection instead of the answer (over TLS in particular). */
        if (cl && strtoll(cl, NULL, 10) > h->s->cfg->limits.max_body_bytes)
            c->req.body_too_large = true;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        if (!c->req.body_too_large) {
            if ((int64_t)(c->req.body_len + n) > h->s->cfg->limits.max_body_bytes) {
                c->req.body_too_large = true;
                free(c->req.body);
                c->req.body = NULL;
                c->req.body_len = 0;
            } else {
                char *nb = realloc(c->req.body, c->req.body_len + n + 1);
                if (!nb)
                    return MHD_NO;
                memcpy(nb + c->req.body_len, upload_data, n);
                c->req.body = nb;
                c->req.body_len += n;
                nb[c->req.body_len] = 0;
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    return answer(c, con);
}

static void completed_cb(void *cls, struct MHD_Connection *con, void **req_cls, enum MHD_RequestTerminationCode toe)
{
    (void)con;
    (void)toe;
    emu_http *h = cls;
    conn_ctx *c = *req_cls;
    if (!c)
        return;
    if (c->st) {
        pthread_mutex_lock(&h->s->mu);
        emu_stream_free(c->st);
        pthread_mutex_unlock(&h->s->mu);
    }
    emu_file_body_free(c->file);
    emu_request_clear(&c->req);
    ocisbx_buf_free(&c->pending);
    free(c->raw_uri);
    free(c);
    *req_cls = NULL;
}

int emu_http_parse_listen(const char *listen, struct sockaddr_in *out)
{
    memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    const char *colon = strrchr(listen, ':');
    if (!colon)
        return ocisbx_fail(OCISBX_EINVAL, "--listen %s: expected HOST:PORT such as 127.0.0.1:0", listen);
    char host[64];
    size_t hl = (size_t)(colon - listen);
    if (hl == 0 || hl >= sizeof host)
        return ocisbx_fail(OCISBX_EINVAL, "--listen %s: bad host", listen);
    memcpy(host, listen, hl);
    host[hl] = 0;
    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535)
        return ocisbx_fail(OCISBX_EINVAL, "--listen %s: bad port", listen);
    if (!strcmp(host, "localhost"))
        snprintf(host, sizeof host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &out->sin_addr) != 1)
        return ocisbx_fail(OCISBX_EINVAL, "--listen %s: the host must be an IPv4 loopback address", listen);
    if (!ocisbx_host_is_loopback(host))
        return ocisbx_fail(OCISBX_EINVAL, "--listen %s: refusing a non-loopback address (only 127.0.0.0/8)", listen);
    out->sin_port = htons((uint16_t)port);
    return 0;
}

int emu_http_start(emu_server *s, const struct sockaddr_in *addr, const char *cert_file, const char *key_file,
                   emu_http **out)
{
    *out = NULL;
    emu_http *h = calloc(1, sizeof *h);
    if (!h)
        return ocisbx_fail_nomem();
    h->s = s;
    h->addr = *addr;
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC;
    if (cert_file) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            free(h);
            return ocisbx_fail(OCISBX_EUNSUPPORTED, "this libmicrohttpd has no TLS support");
        }
        h->cert = emu_read_file(cert_file, NULL);
        h->key = emu_read_file(key_file, NULL);
        if (!h->cert || !h->key) {
            int rc = ocisbx_fail(OCISBX_ECONFIG, "cannot read %s", !h->cert ? cert_file : key_file);
            free(h->cert);
            ocisbx_free_secret(h->key);
            free(h);
            return rc;
        }
        flags |= MHD_USE_TLS;
    }
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_SOCK_ADDR, 0, &h->addr},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)uri_log, h},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed_cb, h},
        {MHD_OPTION_CONNECTION_TIMEOUT, 120, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, 2000, NULL},
        {cert_file ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, h->cert},
        {cert_file ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, h->key},
        {MHD_OPTION_END, 0, NULL},
    };
    h->d = MHD_start_daemon(flags, 0, NULL, NULL, access_cb, h, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!h->d) {
        free(h->cert);
        ocisbx_free_secret(h->key);
        free(h);
        return ocisbx_fail(OCISBX_EIO, "cannot listen on %s:%u (address in use, or bad TLS certificate/key)",
                           inet_ntoa(addr->sin_addr), ntohs(addr->sin_port));
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : ntohs(addr->sin_port);
    *out = h;
    return 0;
}

int emu_http_port(const emu_http *h)
{
    return h->port;
}

void emu_http_quiesce(emu_http *h)
{
    if (h && h->d) {
        MHD_socket fd = MHD_quiesce_daemon(h->d);
        if (fd != MHD_INVALID_SOCKET)
            close(fd);
    }
}

void emu_http_stop(emu_http *h)
{
    if (!h)
        return;
    if (h->d)
        MHD_stop_daemon(h->d);
    free(h->cert);
    ocisbx_free_secret(h->key);
    free(h);
}
