/* A small scripted HTTP server for transport tests: libmicrohttpd on
 * 127.0.0.1, a free port, plain http, a thread per connection.
 *
 * Each request takes the next step of a FIFO script (a status, headers,
 * a body, a delay, or a fault: reset the connection without an answer, or
 * cut the body short); when the script is empty the default answer is
 * used (200, empty body). Every request is recorded: method, request
 * target exactly as sent, headers in order, body. */
#ifndef OCISBX_TEST_HTTP_SERVER_H
#define OCISBX_TEST_HTTP_SERVER_H

#include <stddef.h>

typedef enum ths_action {
    THS_RESPOND = 0, /* answer status/headers/body */
    THS_RESET = 1,   /* close the connection without any answer */
    THS_PARTIAL = 2  /* announce the whole body, send half, then close */
} ths_action;

typedef struct ths_step {
    int status;
    const char *headers; /* "name: value\n..." or NULL */
    const char *body;    /* NULL: empty */
    ths_action action;
    int delay_ms; /* before answering */
} ths_step;

typedef struct ths_request {
    char *method;
    char *target; /* path?query as received */
    size_t nheaders;
    char **names; /* as received */
    char **values;
    char *body; /* NUL-terminated */
    size_t body_len;
} ths_request;

typedef struct ths ths;

/* 0 on success. */
int ths_start(ths **out);
void ths_stop(ths *s);
int ths_port(const ths *s);
/* "http://127.0.0.1:<port><path>" (malloc'd). */
char *ths_url(const ths *s, const char *path);

/* Appends a step to the script. */
void ths_push(ths *s, int status, const char *headers, const char *body);
void ths_push_step(ths *s, const ths_step *step);
/* The answer once the script is empty (copied). */
void ths_set_default(ths *s, int status, const char *headers, const char *body);

/* Requests recorded so far, and one of them (valid until ths_stop/clear). */
size_t ths_count(ths *s);
const ths_request *ths_get(ths *s, size_t i);
/* First value of a header (case-insensitive), or NULL. */
const char *ths_header(const ths_request *r, const char *name);
void ths_clear(ths *s);

/* A one-shot raw-socket server on 127.0.0.1: records the bytes of one
 * request exactly as they arrived (request line, headers in wire order,
 * a content-length body), answers `response` (a whole raw HTTP answer;
 * NULL: an empty 200 with connection: close) and closes. MHD does not
 * keep header order, this does. */
typedef struct ths_raw ths_raw;
int ths_raw_start(const char *response, ths_raw **out);
int ths_raw_port(const ths_raw *s);
/* Waits for the request and returns its raw bytes (NUL-terminated), or
 * NULL when none came. Valid until ths_raw_stop. */
const char *ths_raw_wait(ths_raw *s);
/* The request line's target and the header names in order, from raw
 * bytes: target into a malloc'd string, names as a malloc'd array of
 * malloc'd strings (lowercased). */
char *ths_raw_target(const char *raw);
size_t ths_raw_header_names(const char *raw, char ***names);
void ths_raw_stop(ths_raw *s);

#endif
