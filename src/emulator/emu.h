/* ocisbx-emulator, the HTTP handlers: the request and response objects the
 * listener (http.c) hands to the dispatcher (so every handler can be driven
 * without a socket, as the fuzz target does), the dispatch table, the
 * handlers of each operation, the JSON views of the state and the one list
 * helper. Handlers call the model (model.h) and never the other way round. */
#ifndef OCISBX_EMU_H
#define OCISBX_EMU_H

#include "emulator/model.h"

/* ---- requests and responses (http.c builds them, dispatch.c consumes) ---- */
typedef struct emu_header {
    char *name; /* lowercase */
    char *value;
} emu_header;

typedef struct emu_request {
    char method[16];
    char *target; /* raw path?query exactly as received */
    char *path;   /* raw path part of target */
    char *query;  /* raw query (after '?'), NULL when none */
    emu_header *headers;
    size_t n_headers;
    char *body;
    size_t body_len;
    bool body_too_large;
} emu_request;

int emu_request_set_target(emu_request *r, const char *method, const char *target);
int emu_request_add_header(emu_request *r, const char *name, const char *value);
/* First value for a lowercase name, or NULL. */
const char *emu_request_header(const emu_request *r, const char *lowercase_name);
void emu_request_clear(emu_request *r);

typedef struct emu_stream {
    struct emu_command *cmd; /* referenced */
    int64_t next_seq;
    int64_t until_seq; /* 0: to the end */
    bool ndjson;
    int cut_after; /* 0: never */
    int sent;
} emu_stream;

/* A file answered by streaming (files.c): the HTTP layer hashes it in a
 * first pass, then sends it; the file must not change in between. */
typedef struct emu_file_body {
    int fd;
    int64_t size;
    uint64_t dev, ino;
    int64_t mtime_ns;
    char sha[45]; /* base64 SHA-256, set by emu_file_hash */
} emu_file_body;

#define EMU_MAX_RESP_HEADERS 12
typedef struct emu_response {
    int status;
    char content_type[64];
    ocisbx_buf body;
    emu_header headers[EMU_MAX_RESP_HEADERS];
    size_t n_headers;
    bool reset;          /* drop the connection without an answer */
    emu_stream *stream;  /* non-NULL: an event stream follows */
    emu_file_body *file; /* non-NULL: the body is this file (status 200, body empty) */
} emu_response;

void emu_response_init(emu_response *r);
int emu_response_header(emu_response *r, const char *name, const char *value);
const char *emu_response_get_header(const emu_response *r, const char *name);
void emu_response_clear(emu_response *r);
/* {code, message} with the status. Always returns 0 (the answer is made). */
int emu_error(emu_response *r, int status, const char *code, const char *fmt, ...) OCISBX_PRINTF(4, 5);
/* Sets a JSON body (the cJSON is consumed). */
int emu_json(emu_response *r, int status, cJSON *json);

/* JSON request bodies; each returns -1 with a 400 in resp on a wrong type. */
struct emu_env;
int emu_body_json(const emu_request *req, emu_response *resp, cJSON **out);
/* A member of obj not named in fields (space-separated): 400 naming it and
 * the model. The service refuses fields its public model does not have. */
int emu_json_only(const cJSON *obj, const char *model, const char *fields, emu_response *resp);
int emu_json_str(const cJSON *obj, const char *name, const char **out, emu_response *resp);
int emu_json_int(const cJSON *obj, const char *name, int64_t *out, bool *present, emu_response *resp);
int emu_json_bool(const cJSON *obj, const char *name, bool *out, emu_response *resp);
int emu_json_env(const cJSON *obj, const char *name, struct emu_env **out, size_t *n, emu_response *resp);
cJSON *emu_env_names_json(const struct emu_env *env, size_t n);
/* limit (1..1000, default 100) and page ("pg-<offset>") */
int emu_page_params(const emu_request *req, emu_response *resp, size_t *offset, size_t *limit);
void emu_page_next(emu_response *resp, size_t offset, size_t limit, size_t total);

/* The answer of a model refusal rc (negative OCISBX_E*), with the thread's
 * error message: EINVAL 400 InvalidParameter, ENOTFOUND 404, ECONFLICT 409
 * IncorrectState, ERATELIMIT 429 TooManyRequests, anything else 500. */
int emu_fail_answer(emu_response *r, int rc);

/* ---- dispatch.c: the whole answer to one request, socket-free ---------- */
void emu_handle(emu_server *s, const emu_request *req, emu_response *resp);

/* A handler: one operation, called with s->mu held (it may wait on s->cv). */
typedef void (*emu_handler_fn)(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
/* The handler of a route (the dispatch table); NULL for EMU_R_NONE. */
emu_handler_fn emu_route_handler(emu_route_id id);

/* auth.c: 0 when authentic, *who set to the principal (users[i]: i; the
 * session token tokens[j]: n_users + j); else fills resp with 401 and
 * returns -1. */
int emu_authenticate(emu_server *s, const emu_request *req, emu_response *resp, size_t *who);

/* ---- the handlers, one per operation ------------------------------------- */
/* h_sandbox.c */
void emu_h_sandbox_create(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_sandbox_list(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_sandbox_get(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_sandbox_update(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_sandbox_delete(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_sandbox_stop(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_sandbox_extend(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_sandbox_suspend(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_sandbox_resume(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
/* The sandbox of rt (not DELETED), or NULL with a 404 answered. */
emu_sandbox *emu_h_sandbox_of(emu_server *s, const emu_route *rt, emu_response *resp);
/* h_command.c */
void emu_h_command_run(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_command_run_wait(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_command_run_stream(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_command_list(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_command_get(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_command_output(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_command_events(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_command_cancel(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
/* files.c */
void emu_h_file_write(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_file_read(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
/* h_snapshot.c */
void emu_h_snapshot_create(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_snapshot_list(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_snapshot_get(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);
void emu_h_snapshot_delete(emu_server *s, const emu_request *req, const emu_route *rt, emu_response *resp);

/* ---- h_command.c: event streams ------------------------------------------ */
/* Answers with a stream of c's events from seq from to until (0: the end). */
void emu_stream_start(emu_response *resp, const emu_request *req, emu_command *c, int64_t from, int64_t until);
/* Formats the next available events of a stream into out; returns 1 when the
 * stream has ended, 0 otherwise (out may be empty: wait and retry), -1 when
 * the fault rule cuts it. */
int emu_stream_next(emu_server *s, emu_stream *st, ocisbx_buf *out);
void emu_stream_free(emu_stream *st); /* with s->mu held */

/* ---- views.c: the JSON of the state, as the service's models ------------ */
cJSON *emu_sandbox_json(const emu_sandbox *b, bool summary);
cJSON *emu_command_json(const emu_command *c, bool summary);
cJSON *emu_event_json(const emu_command *c, const emu_event *e);
cJSON *emu_command_output_json(const emu_command *c, int64_t from_seq);
cJSON *emu_snapshot_json(const emu_snapshot *n);

/* ---- list.c: the one list helper (filter, sort, page) ------------------- */
#define EMU_LIST_MAX_FILTERS 6
typedef struct emu_list_query {
    char *filter[EMU_LIST_MAX_FILTERS]; /* decoded values of the filter names, NULL when absent */
    char *state;                        /* lifecycleState, NULL when absent */
    char *sort_by;                      /* NULL: the default */
    bool sort_given;                    /* sortOrder was given */
    bool desc;                          /* sortOrder DESC */
    size_t offset, limit;
} emu_list_query;
/* Reads the query of a list: the filters named in filters (space-separated,
 * at most EMU_LIST_MAX_FILTERS), lifecycleState among states (space-separated;
 * NULL: no such filter), sortBy among sort_keys (space-separated), sortOrder
 * and the page. -1 with a 400 answered on a bad value. */
int emu_list_query_parse(const emu_request *req, const char *filters, const char *states, const char *sort_keys,
                         emu_list_query *q, emu_response *resp);
void emu_list_query_clear(emu_list_query *q);
typedef struct emu_list_ops {
    bool (*keep)(const void *item, const emu_list_query *q);
    /* ascending order of the list's sortBy */
    int (*cmp)(const void *a, const void *b, const emu_list_query *q);
    cJSON *(*json)(const void *item);
} emu_list_ops;
/* Answers the page: the items kept, sorted (descending when desc), q's
 * page of them as {"items": [...]}, opc-next-page when more follow. */
void emu_list_answer(void *const *items, size_t n, const emu_list_ops *ops, const emu_list_query *q, bool desc,
                     emu_response *resp);

/* ---- files.c, the streamed read, called without s->mu: the first pass
 * hashes the file (gone(ud) is asked every few MiB: true stops it); -1 when
 * the client went, the file changed since it was opened, or a read failed. */
int emu_file_hash(emu_file_body *fb, bool (*gone)(void *ud), void *ud);
/* The second pass: up to max bytes at pos; 0 at the end, -1 when the file
 * changed (checked before the last bytes go out) or a read failed. */
long emu_file_read_at(emu_file_body *fb, uint64_t pos, char *buf, size_t max);
void emu_file_body_free(emu_file_body *fb);

#endif
