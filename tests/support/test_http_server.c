/* See test_http_server.h. */
#include "test_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <microhttpd.h>

typedef struct owned_step {
    int status;
    char *headers;
    char *body;
    ths_action action;
    int delay_ms;
} owned_step;

struct ths {
    struct MHD_Daemon *d;
    int port;
    pthread_mutex_t lock;
    owned_step *script;
    size_t nscript, head, cap;
    owned_step dflt;
    ths_request **reqs;
    size_t nreqs, reqcap;
    pthread_cond_t stop_cv; /* signalled when stopping: a step's delay ends */
    bool stopping;
};

typedef struct conn_state {
    ths_request *req;
    size_t body_cap;
} conn_state;

/* Waits ms, or until the server stops. */
static void wait_delay(ths *s, int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->lock);
    while (!s->stopping && pthread_cond_timedwait(&s->stop_cv, &s->lock, &until) == 0) {
    }
    pthread_mutex_unlock(&s->lock);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void free_request(ths_request *r)
{
    if (!r)
        return;
    free(r->method);
    free(r->target);
    for (size_t i = 0; i < r->nheaders; i++) {
        free(r->names[i]);
        free(r->values[i]);
    }
    free(r->names);
    free(r->values);
    free(r->body);
    free(r);
}

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)c;
    conn_state *cs = calloc(1, sizeof *cs);
    if (!cs)
        return NULL;
    cs->req = calloc(1, sizeof *cs->req);
    if (cs->req)
        cs->req->target = strdup(uri);
    return cs;
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    ths_request *r = cls;
    char **n = realloc(r->names, (r->nheaders + 1) * sizeof *n);
    if (!n)
        return MHD_NO;
    r->names = n;
    char **v = realloc(r->values, (r->nheaders + 1) * sizeof *v);
    if (!v)
        return MHD_NO;
    r->values = v;
    r->names[r->nheaders] = strdup(key);
    r->values[r->nheaders] = strdup(value ? value : "");
    r->nheaders++;
    return MHD_YES;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    conn_state *cs = *con_cls;
    if (cs) {
        free_request(cs->req); /* NULL once handed to the record list */
        free(cs);
    }
    *con_cls = NULL;
}

static void take_step(ths *s, owned_step *out)
{
    pthread_mutex_lock(&s->lock);
    if (s->head < s->nscript) {
        *out = s->script[s->head];
        memset(&s->script[s->head], 0, sizeof s->script[s->head]);
        s->head++;
    } else {
        out->status = s->dflt.status;
        out->headers = dup_or_null(s->dflt.headers);
        out->body = dup_or_null(s->dflt.body);
        out->action = s->dflt.action;
        out->delay_ms = s->dflt.delay_ms;
    }
    pthread_mutex_unlock(&s->lock);
}

typedef struct partial_body {
    char *data;
    size_t len, half;
} partial_body;

static ssize_t partial_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    partial_body *p = cls;
    if (pos >= p->half)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t n = p->half - (size_t)pos;
    if (n > max)
        n = max;
    memcpy(buf, p->data + pos, n);
    return (ssize_t)n;
}

static void partial_free(void *cls)
{
    partial_body *p = cls;
    free(p->data);
    free(p);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
    (void)url;
    (void)version;
    ths *s = cls;
    conn_state *cs = *con_cls;
    if (!cs || !cs->req)
        return MHD_NO;
    ths_request *r = cs->req;
    if (!r->method) { /* first call: headers are known */
        r->method = strdup(method);
        MHD_get_connection_values(c, MHD_HEADER_KIND, add_header, r);
        r->body = calloc(1, 1);
        return MHD_YES;
    }
    if (*upload_size) {
        size_t need = r->body_len + *upload_size + 1;
        if (need > cs->body_cap) {
            size_t nc = need * 2;
            char *nb = realloc(r->body, nc);
            if (!nb)
                return MHD_NO;
            r->body = nb;
            cs->body_cap = nc;
        }
        memcpy(r->body + r->body_len, upload_data, *upload_size);
        r->body_len += *upload_size;
        r->body[r->body_len] = '\0';
        *upload_size = 0;
        return MHD_YES;
    }
    /* The whole request is here: record it, then answer per the script. */
    pthread_mutex_lock(&s->lock);
    if (s->nreqs == s->reqcap) {
        size_t nc = s->reqcap ? s->reqcap * 2 : 16;
        ths_request **nr = realloc(s->reqs, nc * sizeof *nr);
        if (nr) {
            s->reqs = nr;
            s->reqcap = nc;
        }
    }
    if (s->nreqs < s->reqcap) {
        s->reqs[s->nreqs++] = r;
        cs->req = NULL;
    }
    pthread_mutex_unlock(&s->lock);

    owned_step st;
    take_step(s, &st);
    if (st.delay_ms > 0) /* a stop ends the wait (it held ths_stop for the whole delay) */
        wait_delay(s, st.delay_ms);
    enum MHD_Result ret = MHD_NO;
    struct MHD_Response *resp = NULL;
    const char *body = st.body ? st.body : "";
    if (st.action == THS_RESET) {
        ret = MHD_NO; /* MHD closes the connection without an answer */
    } else if (st.action == THS_PARTIAL) {
        partial_body *p = malloc(sizeof *p);
        if (p) {
            p->data = strdup(body);
            p->len = strlen(body);
            p->half = p->len / 2;
            resp = MHD_create_response_from_callback(p->len, 1024, partial_reader, p, partial_free);
        }
    } else {
        resp = MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
    }
    if (resp) {
        char *hdrs = st.headers ? strdup(st.headers) : NULL;
        char *save = NULL;
        for (char *line = hdrs ? strtok_r(hdrs, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
            char *colon = strchr(line, ':');
            if (!colon)
                continue;
            *colon = '\0';
            const char *v = colon + 1;
            while (*v == ' ')
                v++;
            MHD_add_response_header(resp, line, v);
        }
        free(hdrs);
        ret = MHD_queue_response(c, (unsigned)st.status, resp);
        MHD_destroy_response(resp);
    }
    free(st.headers);
    free(st.body);
    return ret;
}

int ths_start(ths **out)
{
    ths *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->stop_cv, &ca);
    pthread_condattr_destroy(&ca);
    s->dflt.status = 200;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = 0;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL, handler,
                            s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_URI_LOG_CALLBACK, uri_log,
                            s, MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_END);
    if (!s->d) {
        pthread_cond_destroy(&s->stop_cv);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : 0;
    *out = s;
    return 0;
}

void ths_clear(ths *s)
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->nreqs; i++)
        free_request(s->reqs[i]);
    s->nreqs = 0;
    for (size_t i = s->head; i < s->nscript; i++) {
        free(s->script[i].headers);
        free(s->script[i].body);
    }
    s->head = s->nscript = 0;
    pthread_mutex_unlock(&s->lock);
}

void ths_stop(ths *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    pthread_cond_broadcast(&s->stop_cv);
    pthread_mutex_unlock(&s->lock);
    MHD_stop_daemon(s->d);
    ths_clear(s);
    free(s->reqs);
    free(s->script);
    free(s->dflt.headers);
    free(s->dflt.body);
    pthread_cond_destroy(&s->stop_cv);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

int ths_port(const ths *s)
{
    return s->port;
}

char *ths_url(const ths *s, const char *path)
{
    size_t n = strlen(path) + 64;
    char *u = malloc(n);
    if (u)
        snprintf(u, n, "http://127.0.0.1:%d%s", s->port, path);
    return u;
}

void ths_push_step(ths *s, const ths_step *step)
{
    pthread_mutex_lock(&s->lock);
    if (s->nscript == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        owned_step *ns = realloc(s->script, nc * sizeof *ns);
        if (!ns) {
            pthread_mutex_unlock(&s->lock);
            return;
        }
        s->script = ns;
        s->cap = nc;
    }
    owned_step *o = &s->script[s->nscript++];
    o->status = step->status ? step->status : 200;
    o->headers = dup_or_null(step->headers);
    o->body = dup_or_null(step->body);
    o->action = step->action;
    o->delay_ms = step->delay_ms;
    pthread_mutex_unlock(&s->lock);
}

void ths_push(ths *s, int status, const char *headers, const char *body)
{
    ths_step st = {status, headers, body, THS_RESPOND, 0};
    ths_push_step(s, &st);
}

void ths_set_default(ths *s, int status, const char *headers, const char *body)
{
    pthread_mutex_lock(&s->lock);
    free(s->dflt.headers);
    free(s->dflt.body);
    s->dflt.status = status;
    s->dflt.headers = dup_or_null(headers);
    s->dflt.body = dup_or_null(body);
    pthread_mutex_unlock(&s->lock);
}

size_t ths_count(ths *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->nreqs;
    pthread_mutex_unlock(&s->lock);
    return n;
}

const ths_request *ths_get(ths *s, size_t i)
{
    pthread_mutex_lock(&s->lock);
    const ths_request *r = i < s->nreqs ? s->reqs[i] : NULL;
    pthread_mutex_unlock(&s->lock);
    return r;
}

const char *ths_header(const ths_request *r, const char *name)
{
    for (size_t i = 0; r && i < r->nheaders; i++)
        if (strcasecmp(r->names[i], name) == 0)
            return r->values[i];
    return NULL;
}

/* ---- the raw one-shot server ---- */
#include <ctype.h>
#include <sys/socket.h>
#include <unistd.h>

struct ths_raw {
    int lfd;
    int port;
    pthread_t th;
    char *response;
    char *got;
    size_t got_len;
    int done;
};

static void *raw_main(void *arg)
{
    ths_raw *s = arg;
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap + 1);
    size_t want = (size_t)-1;
    while (buf && len < want) {
        if (len == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        ssize_t k = recv(fd, buf + len, cap - len, 0);
        if (k <= 0)
            break;
        len += (size_t)k;
        buf[len] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end && want == (size_t)-1) {
            size_t body = 0;
            for (char *p = buf; p < end; p++) {
                if ((p == buf || p[-1] == '\n') && strncasecmp(p, "content-length:", 15) == 0)
                    body = (size_t)strtoull(p + 15, NULL, 10);
            }
            want = (size_t)(end + 4 - buf) + body;
        }
    }
    const char *resp = s->response ? s->response
                                   : "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
    size_t rl = strlen(resp), off = 0;
    while (off < rl) {
        ssize_t k = send(fd, resp + off, rl - off, MSG_NOSIGNAL);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    shutdown(fd, SHUT_WR);
    char drain[256];
    while (recv(fd, drain, sizeof drain, 0) > 0) {
    }
    close(fd);
    s->got = buf;
    s->got_len = len;
    return NULL;
}

int ths_raw_start(const char *response, ths_raw **out)
{
    ths_raw *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(s->lfd, 4) != 0 ||
        getsockname(s->lfd, (struct sockaddr *)&a, &al) != 0) {
        if (s->lfd >= 0)
            close(s->lfd);
        free(s);
        return -1;
    }
    s->port = ntohs(a.sin_port);
    s->response = response ? strdup(response) : NULL;
    if (pthread_create(&s->th, NULL, raw_main, s) != 0) {
        close(s->lfd);
        free(s->response);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int ths_raw_port(const ths_raw *s)
{
    return s->port;
}

const char *ths_raw_wait(ths_raw *s)
{
    if (!s->done) {
        pthread_join(s->th, NULL);
        s->done = 1;
    }
    return s->got;
}

void ths_raw_stop(ths_raw *s)
{
    if (!s)
        return;
    if (!s->done) {
        shutdown(s->lfd, SHUT_RDWR); /* wakes a blocked accept */
        pthread_join(s->th, NULL);
    }
    close(s->lfd);
    free(s->got);
    free(s->response);
    free(s);
}

char *ths_raw_target(const char *raw)
{
    const char *sp = raw ? strchr(raw, ' ') : NULL;
    const char *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
    return sp2 ? strndup(sp + 1, (size_t)(sp2 - sp - 1)) : NULL;
}

size_t ths_raw_header_names(const char *raw, char ***names)
{
    *names = NULL;
    const char *end = raw ? strstr(raw, "\r\n\r\n") : NULL;
    const char *p = raw ? strstr(raw, "\r\n") : NULL;
    size_t n = 0;
    while (p && end && p < end) {
        p += 2;
        const char *colon = strchr(p, ':');
        if (!colon || colon > end)
            break;
        char **nn = realloc(*names, (n + 1) * sizeof *nn);
        if (!nn)
            break;
        *names = nn;
        char *name = strndup(p, (size_t)(colon - p));
        for (char *q = name; q && *q; q++)
            *q = (char)tolower((unsigned char)*q);
        (*names)[n++] = name;
        p = strstr(p, "\r\n");
    }
    return n;
}
