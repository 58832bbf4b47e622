/* One unsigned GET of an endpoint, to tell DNS, TCP and TLS apart and to
 * read the server's date (ocisbx doctor's probes). Internal to the library
 * and its programs; kept apart from the transport (transport.c). */
#ifndef OCISBX_HTTP_PROBE_H
#define OCISBX_HTTP_PROBE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ocisbx_probe_options {
    const char *url;           /* the endpoint; "/" is appended */
    const char *ca_bundle;     /* NULL: the system's */
    int64_t connect_timeout_s; /* 0: 10 */
    int64_t read_timeout_s;    /* 0: 30 */
} ocisbx_probe_options;

typedef struct ocisbx_probe_result {
    bool answered;       /* an HTTP answer came (any status) */
    bool resolve_failed; /* the host name (or the proxy's) did not resolve */
    bool tls_failed;     /* the handshake or the certificate check failed */
    bool connected;      /* a TCP connection opened */
    bool tls_done;       /* a TLS handshake completed */
    bool failed;         /* the request did not complete */
    long status;         /* the HTTP status, 0 without an answer */
    int64_t date;        /* the date header as Unix seconds, -1 when none or unreadable */
    char date_text[128]; /* the date header as sent ("" when none) */
    char ip[64];         /* the address connected to ("" when none) */
    char error[256];     /* what went wrong, from libcurl ("" when nothing) */
} ocisbx_probe_result;

/* Runs the probe; the outcome is in *out (the return value is 0, or
 * OCISBX_EINVAL for a missing url). */
int ocisbx_http_probe(const ocisbx_probe_options *o, ocisbx_probe_result *out);

/* The proxy variable libcurl will use for url (its name; the value in
 * *value), or NULL for a direct connection: loopback never goes through a
 * proxy; when no_proxy is set the answer is NULL too (the connection's own
 * result still tells). */
const char *ocisbx_http_proxy_var(const char *url, const char **value);

#endif
