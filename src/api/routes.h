/* The route table (internal): every operation of the sandbox service. */
#ifndef OCISBX_API_ROUTES_H
#define OCISBX_API_ROUTES_H

#include <stdbool.h>
#include <stddef.h>

#include "api/model_internal.h"
#include "util/internal.h"

typedef enum ocisbx_op {
    OCISBX_OP_CREATE_SANDBOX,
    OCISBX_OP_GET_SANDBOX,
    OCISBX_OP_LIST_SANDBOXES,
    OCISBX_OP_UPDATE_SANDBOX,
    OCISBX_OP_DELETE_SANDBOX,
    OCISBX_OP_STOP_SANDBOX,
    OCISBX_OP_EXTEND_SANDBOX,
    OCISBX_OP_SUSPEND_SANDBOX,
    OCISBX_OP_RESUME_SANDBOX,
    OCISBX_OP_RUN_COMMAND,
    OCISBX_OP_RUN_COMMAND_AND_WAIT,
    OCISBX_OP_RUN_COMMAND_AND_STREAM,
    OCISBX_OP_LIST_COMMANDS,
    OCISBX_OP_GET_COMMAND,
    OCISBX_OP_GET_COMMAND_OUTPUT,
    OCISBX_OP_STREAM_COMMAND_EVENTS,
    OCISBX_OP_CANCEL_COMMAND,
    OCISBX_OP_WRITE_FILE,
    OCISBX_OP_READ_FILE,
    OCISBX_OP_CREATE_SNAPSHOT,
    OCISBX_OP_GET_SNAPSHOT,
    OCISBX_OP_DELETE_SNAPSHOT,
    OCISBX_OP_LIST_SNAPSHOTS,
    OCISBX_OP_COUNT
} ocisbx_op;

typedef enum ocisbx_route_kind {
    OCISBX_ROUTE_JSON,     /* JSON answer (or none) */
    OCISBX_ROUTE_STREAM,   /* event stream answer */
    OCISBX_ROUTE_BYTES_IN, /* raw bytes request body */
    OCISBX_ROUTE_BYTES_OUT /* raw bytes answer */
} ocisbx_route_kind;

typedef struct ocisbx_route {
    ocisbx_op op;
    const char *name; /* operation name (docs/wire.md, call_json) */
    const char *method;
    const char *path;                 /* after /<apiVersion>; {name} are path parameters */
    int retry;                        /* OCISBX_HTTP_RETRY_* */
    const char *query;                /* the query parameters it takes, in order, ',' separated */
    const char *required_query;       /* those of them that must be given */
    const ocisbx_model_def *request;  /* request body model, or NULL */
    const ocisbx_model_def *response; /* answer model, or NULL (no body / raw) */
    ocisbx_route_kind kind;
    bool if_match; /* takes an optional if-match header (param "ifMatch") [public] */
} ocisbx_route;

/* The route of op, found by its op field (the table is not indexed by the
 * enum); NULL when no route has it. */
const ocisbx_route *ocisbx_route_get(ocisbx_op op);
const ocisbx_route *ocisbx_route_find(const char *name);
size_t ocisbx_route_count(void);
const ocisbx_route *ocisbx_route_at(size_t i);

/* Percent-encodes everything but the unreserved characters (RFC 3986:
 * A-Z a-z 0-9 - . _ ~), bytes as they are (UTF-8 stays UTF-8 encoded). */
int ocisbx_pct_encode(ocisbx_buf *b, const char *s, size_t len);

/* A name/value list for path and query parameters. */
typedef struct ocisbx_param {
    const char *name;
    const char *value;
} ocisbx_param;

/* Builds <base>/<version><path>?<query> for a route: path parameters from
 * params by name (each must be present and non-empty), query parameters in
 * the route's order for those present in params. A missing path or required
 * query parameter is OCISBX_EINVAL naming it. */
int ocisbx_route_url(const ocisbx_route *r, const char *base, const char *version, const ocisbx_param *params,
                     size_t nparams, char **out);

#endif
