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

/* files.c's pieces of one write, shared with the parts. */
int ocisbx_file_request(ocisbx_client *c, ocisbx_op op, const char *sandbox_id, const char *path,
                        ocisbx_http_request **out);
/* Adds opc-content-sha256 (sha, base64) and the content type. */
int ocisbx_write_request_finish(ocisbx_http_request *req, const char *sha);
/* The answer of a write: the SHA-256 the service confirms must be sha. */
int ocisbx_write_answer_check(ocisbx_http_response *resp, const char *path, const char *sha,
                              ocisbx_sandbox_file **out);

#endif
