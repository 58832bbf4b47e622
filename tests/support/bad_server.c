#include "bad_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct bad_server {
    int fd, port;
    bad_mode m;
    pthread_t t;
    volatile int stop;
    volatile long long body_bytes;
    volatile int connections;
};

/* 0 when all went, -1 when the peer is gone. */
static int send_all(int c, const void *p, size_t n)
{
    const char *b = p;
    while (n) {
        ssize_t w = send(c, b, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static void endless_500(bad_server *s, int c, const char *chunk, size_t len)
{
    const char *h = "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\n"
                    "transfer-encoding: chunked\r\n\r\n";
    if (send_all(c, h, strlen(h)))
        return;
    char size[16];
    int sl = snprintf(size, sizeof size, "%zx\r\n", len);
    for (int i = 0; i < 100000 && !s->stop; i++) { /* 6.5 GB at most */
        if (send_all(c, size, (size_t)sl) || send_all(c, chunk, len) || send_all(c, "\r\n", 2))
            return;
        s->body_bytes += (long long)len;
    }
}

static void dribble(bad_server *s, int c)
{
    const char *h = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n";
    if (send_all(c, h, strlen(h)))
        return;
    for (int i = 0; i < 1000 && !s->stop; i++) {
        if (send_all(c, " ", 1))
            return;
        s->body_bytes += 1;
        for (int k = 0; k < 10 && !s->stop; k++)
            usleep(100000);
    }
}

static void *serve(void *arg)
{
    bad_server *s = arg;
    for (;;) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0 || s->stop) {
            if (c >= 0)
                close(c);
            return NULL;
        }
        s->connections++;
        char req[8192];
        if (recv(c, req, sizeof req, 0) <= 0) {
            close(c);
            continue;
        }
        static char chunk[65536];
        memset(chunk, ' ', sizeof chunk);
        switch (s->m) {
        case BAD_SILENT:
            while (!s->stop && recv(c, req, sizeof req, 0) > 0) {
            }
            break;
        case BAD_ENDLESS: {
            const char *h = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n[";
            send_all(c, h, strlen(h));
            for (int i = 0; i < 100000 && !s->stop; i++)
                send_all(c, chunk, sizeof chunk); /* 6.5 GB at most */
            break;
        }
        case BAD_BIG_HEADER: {
            const char *h = "HTTP/1.1 200 OK\r\nx-big: ";
            send_all(c, h, strlen(h));
            for (int i = 0; i < 64; i++)
                send_all(c, chunk, sizeof chunk); /* 4 MiB */
            send_all(c, "\r\ncontent-length: 0\r\n\r\n", 23);
            break;
        }
        case BAD_MANY_HEADERS: {
            send_all(c, "HTTP/1.1 200 OK\r\n", 17);
            char line[1100];
            for (int i = 0; i < 400; i++) { /* 400 x ~1 KiB: above 256 KiB in all */
                int n = snprintf(line, sizeof line, "x-h%d: %.*s\r\n", i, 1000, chunk);
                send_all(c, line, (size_t)n);
            }
            send_all(c, "content-length: 0\r\n\r\n", 21);
            break;
        }
        case BAD_CUT_BODY: {
            const char *h = "HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nnew-but-cut";
            send_all(c, h, strlen(h));
            break;
        }
        case BAD_TRICKLE: {
            const char *h = "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\n"
                            "opc-content-sha256: 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\r\n"
                            "content-length: 1073741824\r\n\r\n";
            send_all(c, h, strlen(h));
            for (int i = 0; i < 6000 && !s->stop; i++) { /* 64 KiB every 10 ms, for a minute at most */
                send_all(c, chunk, sizeof chunk);
                usleep(10000);
            }
            break;
        }
        case BAD_ENDLESS_500: endless_500(s, c, chunk, sizeof chunk); break;
        case BAD_DRIBBLE: dribble(s, c); break;
        case BAD_GOOD: {
            const char *h = "HTTP/1.1 200 OK\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnew bytes";
            send_all(c, h, strlen(h));
            break;
        }
        }
        close(c);
    }
}

bad_server *bad_server_start(bad_mode m)
{
    bad_server *s = calloc(1, sizeof *s);
    s->m = m;
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(s->fd, (struct sockaddr *)&a, sizeof a) != 0)
        abort();
    socklen_t l = sizeof a;
    getsockname(s->fd, (struct sockaddr *)&a, &l);
    s->port = ntohs(a.sin_port);
    if (listen(s->fd, 8) != 0)
        abort();
    pthread_create(&s->t, NULL, serve, s);
    return s;
}

void bad_server_stop(bad_server *s)
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

int bad_server_port(const bad_server *s)
{
    return s->port;
}

long long bad_server_body_bytes(const bad_server *s)
{
    return s->body_bytes;
}

int bad_server_connections(const bad_server *s)
{
    return s->connections;
}
