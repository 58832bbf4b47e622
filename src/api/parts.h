/* Writes of many file parts at once (internal, for the backend's chunked
 * write): each part one checked WriteSandboxFile (opc-content-sha256 sent,
 * the service's answer compared with it), at most K in flight over the
 * http layer's batch runner (http/batch.h), fed one by one so that the
 * caller holds at most K parts. */
#ifndef OCISBX_API_PARTS_H
#define OCISBX_API_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "api/routes.h"
#include "ocisbx/api.h"
#include "ocisbx/http.h"
#include "ocisbx/util.h"
#include "util/internal.h"

/* One part: where it goes and its bytes, which stay where they are (sent
 * from there, no copy) until done is called for it. */
typedef struct ocisbx_file_part {
    char path[256]; /* absolute, in the sandbox */
    const void *data;
    size_t len;
    char sha256_b64[OCISBX_SHA256_B64_LEN + 1];
    void *tag; /* the caller's, given back to done */
} ocisbx_file_part;

typedef struct ocisbx_file_part_feed {
    /* Fills *p with the next part, or sets *none. Non-zero (error set):
     * the writes stop. */
    int (*next)(void *ud, ocisbx_file_part *p, bool *none);
    /* The part's write ended (rc 0: stored and confirmed; aborted: stopped
     * by a failure of another); its bytes may be reused. */
    void (*done)(void *ud, void *tag, int rc, bool aborted);
    void *ud;
} ocisbx_file_part_feed;

/* Writes the feed's parts, at most in_flight (1..16) at once. 0 when all
 * are stored and confirmed; else the first failure, with its error (the
 * part's path and opc-request-id). After a failure no part starts, and
 * those in flight are aborted unless their body went out whole (those are
 * awaited: none of them lands after this returns). */
int ocisbx_client_write_parts(ocisbx_client *c, const char *sandbox_id, int in_flight,
                              const ocisbx_file_part_feed *feed);

/* The checked WriteSandboxFile of one part (its body read from where it
 * lies through *body, which must stay until the request is freed), as the
 * parts above send it; shared with the engine. */
int ocisbx_part_request(ocisbx_client *c, const char *sandbox_id, const ocisbx_file_part *p, ocisbx_mem_reader *body,
                        ocisbx_http_request **out);

/* files.c's pieces of one write, shared with the parts. */
int ocisbx_file_request(ocisbx_client *c, ocisbx_op op, const char *sandbox_id, const char *path,
                        ocisbx_http_request **out);
/* Adds opc-content-sha256 (sha, base64) and the content type. */
int ocisbx_write_request_finish(ocisbx_http_request *req, const char *sha);
/* The answer of a write: the SHA-256 the service confirms must be sha. */
int ocisbx_write_answer_check(ocisbx_http_response *resp, const char *path, const char *sha,
                              ocisbx_sandbox_file **out);

/* files.c's pieces of one checked read, shared with the engine: the
 * GetSandboxFile request (streamed to the sink below, which hashes,
 * counts against max (0: no limit) and hands the bytes to write), the end
 * (the sink's own stops, then the content against the answer's
 * opc-content-sha256: OCISBX_EINTEGRITY), and the most bytes a read takes
 * (buffered: into memory). */
typedef struct ocisbx_checked_read {
    ocisbx_sha256_ctx *sha;
    ocisbx_write_fn write;
    void *user_data;
    bool canceled, too_large;
    uint64_t total, max;
} ocisbx_checked_read;
int ocisbx_checked_read_request(ocisbx_client *c, const char *sandbox_id, const char *file_path, uint64_t max,
                                ocisbx_write_fn write, void *user_data, ocisbx_checked_read *r,
                                ocisbx_http_request **out);
int ocisbx_checked_read_sink(const void *data, size_t len, void *ud);
int ocisbx_checked_read_end(ocisbx_checked_read *r, const char *file_path, int rc, ocisbx_http_response *resp);
void ocisbx_checked_read_release(ocisbx_checked_read *r);
uint64_t ocisbx_checked_read_max(const ocisbx_client *c, bool buffered);

#endif
