/* The client (internal): its structure and the one call path every JSON
 * operation goes through. */
#ifndef OCISBX_API_CLIENT_INTERNAL_H
#define OCISBX_API_CLIENT_INTERNAL_H

#include "api/model_internal.h"
#include "api/routes.h"
#include "http/http_internal.h"
#include "ocisbx/api.h"

struct ocisbx_client_options {
    char *endpoint;
    char *region;
    char *api_version;
    ocisbx_credentials *creds;
    struct ocisbx_http_options http;
    bool prefer_ndjson;
    int resume_limit;
    uint64_t max_download;   /* 0: no limit */
    ocisbx_cancel_fn cancel; /* overrides the http options' when set */
    void *cancel_ud;
};

struct ocisbx_client {
    char *endpoint;
    char *api_version;
    ocisbx_http *http;
    bool prefer_ndjson;
    int resume_limit;
    uint64_t max_download;
    char *last_request_id;
    char *next_request_id;   /* for the next call only */
    ocisbx_cancel_fn cancel; /* the caller's (client or http options) */
    void *cancel_ud;
    int64_t deadline_ms;        /* ocisbx_client_set_deadline (0: none) */
    bool cancel_held;           /* ocisbx_client_hold_cancel */
    ocisbx_cancel_fn op_cancel; /* ocisbx_client_set_operation_cancel */
    void *op_cancel_ud;
};

#define OCISBX_MAX_PARAMS 16

/* A copy of src (NULL: the defaults), free with ocisbx_client_options_free. */
int ocisbx_client_options_clone(const ocisbx_client_options *src, ocisbx_client_options **out);

/* Builds the request of a route: URL from params, retry class, JSON body
 * (body NULL with a request model: "{}"). */
int ocisbx_client_request(ocisbx_client *c, ocisbx_op op, const ocisbx_param *params, size_t nparams,
                          const ocisbx_model *body, ocisbx_http_request **out);
/* Sends a built request and parses the answer into the route's model (out
 * may be NULL to ignore it). */
int ocisbx_client_send(ocisbx_client *c, const ocisbx_route *route, ocisbx_http_request *req, ocisbx_model **out);
/* Both in one. */
int ocisbx_client_exec(ocisbx_client *c, ocisbx_op op, const ocisbx_param *params, size_t nparams,
                       const ocisbx_model *body, ocisbx_model **out);
void ocisbx_client_note_request_id(ocisbx_client *c, const char *id);

/* Query parameters from list options (pointers into o; page overrides o's). */
size_t ocisbx_list_options_params(const ocisbx_list_options *o, const char *page, ocisbx_param *params, size_t cap);
int ocisbx_list_options_copy(const ocisbx_list_options *o, ocisbx_list_options **out);
/* Turns expirationDuration into expiresInMinutes and checks the range. */
int ocisbx_create_details_normalize(ocisbx_model *m);

#endif
