/* A raw HTTP server on 127.0.0.1 that misbehaves on purpose, one way per
 * server, for every connection: tests of limits, timeouts and interrupted
 * transfers. It answers any request the same way. */
#ifndef OCISBX_TEST_BAD_SERVER_H
#define OCISBX_TEST_BAD_SERVER_H

typedef enum bad_mode {
    BAD_SILENT,       /* reads the request, never answers */
    BAD_ENDLESS,      /* 200 and a JSON body that never ends (6.5 GB at most) */
    BAD_BIG_HEADER,   /* one 4 MiB header line */
    BAD_MANY_HEADERS, /* 400 header lines of 1 KiB */
    BAD_CUT_BODY,     /* content-length 100, 11 bytes, then closes */
    BAD_GOOD,         /* 200 "new bytes" */
    BAD_TRICKLE,      /* 200, content-length 1 GiB, 64 KiB every 10 ms (a slow download) */
    BAD_ENDLESS_500,  /* 500 and a chunked body that never ends (6.5 GB at most) */
    BAD_DRIBBLE       /* 200, content-length 1000, one byte a second */
} bad_mode;

typedef struct bad_server bad_server;
/* Aborts when it cannot listen. */
bad_server *bad_server_start(bad_mode m);
int bad_server_port(const bad_server *s);
/* Body bytes the server could send so far, all connections together (a
 * client that closes the connection stops the count). */
long long bad_server_body_bytes(const bad_server *s);
/* Connections accepted so far. */
int bad_server_connections(const bad_server *s);
void bad_server_stop(bad_server *s);

#endif
