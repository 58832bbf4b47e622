/* What an outside probe broke in the transport: a body that never ends
 * (21 GB in 40 s), a 4 MB header ("Out of memory"), --read-timeout 3 that
 * failed after 13 s (the connect timeout added to it), and a response file
 * that was truncated in place before the answer was known. Each against a
 * raw socket server on 127.0.0.1 that behaves badly on purpose. */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "ocisbx/http.h"
#include "ocisbx/util.h"

typedef enum mode { SILENT, ENDLESS, BIG_HEADER, MANY_HEADERS, CUT_BODY, GOOD } mode;

typedef struct bad_server {
    int fd, port;
    mode m;
    pthread_t t;
    volatile int stop;
} bad_server;

static void send_all(int c, const void *p, size_t n)
{
    const char *b = p;
    while (n) {
        ssize_t w = send(c, b, n, MSG_NOSIGNAL);
        if (w <= 0) return;
        b += w;
        n -= (size_t)w;
    }
}

static void *serve(void *arg)
{
    bad_server *s = arg;
    for (;;) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0 || s->stop) {
            if (c >= 0) close(c);
            return NULL;
        }
        char req[8192];
        if (recv(c, req, sizeof req, 0) <= 0) {
            close(c);
            continue;
        }
        static char chunk[65536];
        memset(chunk, ' ', sizeof chunk);
        switch (s->m) {
        case SILENT:
            while (!s->stop && recv(c, req, sizeof req, 0) > 0) {}
            break;
        case ENDLESS: {
            const char *h = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n[";
            send_all(c, h, strlen(h));
            for (int i = 0; i < 100000 && !s->stop; i++) send_all(c, chunk, sizeof chunk); /* 6.5 GB at most */
            break;
        }
        case BIG_HEADER: {
            const char *h = "HTTP/1.1 200 OK\r\nx-big: ";
            send_all(c, h, strlen(h));
            for (int i = 0; i < 64; i++) send_all(c, chunk, sizeof chunk); /* 4 MiB */
            send_all(c, "\r\ncontent-length: 0\r\n\r\n", 23);
            break;
        }
        case MANY_HEADERS: {
            send_all(c, "HTTP/1.1 200 OK\r\n", 17);
            char line[1100];
            for (int i = 0; i < 400; i++) { /* 400 x ~1 KiB: above 256 KiB in all */
                int n = snprintf(line, sizeof line, "x-h%d: %.*s\r\n", i, 1000, chunk);
                send_all(c, line, (size_t)n);
            }
            send_all(c, "content-length: 0\r\n\r\n", 21);
            break;
        }
        case CUT_BODY: {
            const char *h = "HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nnew-but-cut";
            send_all(c, h, strlen(h));
            break;
        }
        case GOOD: {
            const char *h = "HTTP/1.1 200 OK\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnew bytes";
            send_all(c, h, strlen(h));
            break;
        }
        }
        close(c);
    }
}

static bad_server *start(mode m)
{
    bad_server *s = calloc(1, sizeof *s);
    s->m = m;
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t l = sizeof a;
    getsockname(s->fd, (struct sockaddr *)&a, &l);
    s->port = ntohs(a.sin_port);
    assert_int_equal(listen(s->fd, 8), 0);
    pthread_create(&s->t, NULL, serve, s);
    return s;
}

static void stop(bad_server *s)
{
    s->stop = 1;
    shutdown(s->fd, SHUT_RDWR);
    /* wake accept() */
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)s->port);
    connect(c, (struct sockaddr *)&a, sizeof a);
    close(c);
    pthread_join(s->t, NULL);
    close(s->fd);
    free(s);
}

/* An unsigned transport (no credentials) to the bad server. */
static int send_get(bad_server *s, int64_t connect_ms, int64_t read_ms, const char *sink_path,
                    ocisbx_http_response **resp)
{
    ocisbx_http_options *o = NULL;
    ocisbx_http *h = NULL;
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_retries(o, 0), 0);
    assert_int_equal(ocisbx_http_options_set_connect_timeout_ms(o, connect_ms), 0);
    assert_int_equal(ocisbx_http_options_set_read_timeout_ms(o, read_ms), 0);
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", s->port);
    assert_int_equal(ocisbx_http_request_new("GET", url, &r), 0);
    if (sink_path) assert_int_equal(ocisbx_http_request_set_sink_file(r, sink_path), 0);
    *resp = NULL;
    int rc = ocisbx_http_send(h, r, resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
    ocisbx_http_options_free(o);
    return rc;
}

static void endless_body_is_capped(void **state)
{
    (void)state;
    bad_server *s = start(ENDLESS);
    ocisbx_http_response *resp = NULL;
    assert_int_equal(send_get(s, 5000, 30000, NULL, &resp), OCISBX_ETOOLARGE);
    const char *m = ocisbx_error_message(ocisbx_error_last());
    assert_non_null(strstr(m, "8388608 bytes"));
    assert_null(resp);
    stop(s);
}

static void huge_headers_name_the_limit(void **state)
{
    (void)state;
    for (mode m = BIG_HEADER; m <= MANY_HEADERS; m++) {
        bad_server *s = start(m);
        ocisbx_http_response *resp = NULL;
        int rc = send_get(s, 5000, 30000, NULL, &resp);
        const char *msg = ocisbx_error_message(ocisbx_error_last());
        if (rc != OCISBX_ETOOLARGE || !strstr(msg, "headers are too large"))
            fail_msg("mode %d: rc %d: %s", m, rc, msg);
        assert_null(strstr(msg, "memory"));
        ocisbx_http_response_free(resp);
        stop(s);
    }
}

/* The read timeout counts from the connection, not from the start: 1 s of
 * read timeout with a 30 s connect timeout ends in about 1 s, long before
 * the 31 s the two added together gave. The bound is far from both. */
static void read_timeout_excludes_connect_timeout(void **state)
{
    (void)state;
    bad_server *s = start(SILENT);
    ocisbx_http_response *resp = NULL;
    int64_t t0 = ocisbx_time_monotonic_ms();
    assert_int_equal(send_get(s, 30000, 1000, NULL, &resp), OCISBX_ETIMEOUT);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    if (took >= 20000) fail_msg("the read timeout of 1 s took %lld ms", (long long)took);
    stop(s);
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static const char *slurp(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static void response_file_replaced_only_when_complete(void **state)
{
    (void)state;
    char dir[] = "/tmp/ocisbx-it-limits-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/out", dir);
    FILE *f = fopen(path, "wb");
    fputs("good old bytes", f);
    fclose(f);
    bad_server *s = start(CUT_BODY);
    ocisbx_http_response *resp = NULL;
    assert_int_not_equal(send_get(s, 5000, 5000, path, &resp), 0);
    ocisbx_http_response_free(resp);
    stop(s);
    assert_string_equal(slurp(path), "good old bytes");
    assert_int_equal(entries(dir), 1); /* no partial file beside it */
    s = start(GOOD);
    assert_int_equal(send_get(s, 5000, 5000, path, &resp), 0);
    ocisbx_http_response_free(resp);
    assert_string_equal(slurp(path), "new bytes");
    assert_int_equal(entries(dir), 1);
    if (geteuid() == 0) { /* a device stays a device */
        char dev[128];
        snprintf(dev, sizeof dev, "%s/null", dir);
        assert_int_equal(mknod(dev, S_IFCHR | 0666, makedev(1, 3)), 0);
        assert_int_equal(send_get(s, 5000, 5000, dev, &resp), 0);
        ocisbx_http_response_free(resp);
        struct stat st;
        assert_int_equal(lstat(dev, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
        unlink(dev);
    }
    stop(s);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(endless_body_is_capped),
        cmocka_unit_test(huge_headers_name_the_limit),
        cmocka_unit_test(read_timeout_excludes_connect_timeout),
        cmocka_unit_test(response_file_replaced_only_when_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
