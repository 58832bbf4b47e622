/* Many parts of a file written at once (parts.h): each part a checked
 * WriteSandboxFile, as ocisbx_client_write_file_from_callback sends it
 * (the SHA-256 the caller computed as it read the part, the body streamed
 * from where the part lies), run by the http layer's batch runner. */
#include <stdlib.h>
#include <string.h>

#include "api/client_internal.h"
#include "api/parts.h"
#include "http/batch.h"
#include "ocisbx/util.h"

typedef struct part_req {
    ocisbx_file_part p;
    ocisbx_http_request *req;
    ocisbx_mem_reader body; /* the part's bytes, read where they are */
} part_req;

typedef struct parts_run {
    ocisbx_client *c;
    const char *sandbox_id;
    const ocisbx_file_part_feed *feed;
} parts_run;

static void part_req_free(part_req *q)
{
    ocisbx_http_request_free(q->req);
    free(q);
}

/* The request of one part (the part's own error on failure). */
static int part_request(parts_run *pr, part_req *q)
{
    if (q->p.len > OCISBX_FILE_PART_MAX)
        return ocisbx_fail(OCISBX_ETOOLARGE, "write %s: a part of %zu bytes is above the service's %d-byte limit",
                           q->p.path, q->p.len, OCISBX_FILE_PART_MAX);
    if (!q->p.data && q->p.len)
        return ocisbx_fail(OCISBX_EINVAL, "write %s: NULL data", q->p.path);
    int rc = ocisbx_file_request(pr->c, OCISBX_OP_WRITE_FILE, pr->sandbox_id, q->p.path, &q->req);
    q->body = (ocisbx_mem_reader){q->p.data, q->p.len, 0};
    if (!rc)
        rc = ocisbx_http_request_set_body_callback(q->req, (int64_t)q->p.len, ocisbx_mem_reader_read,
                                                   ocisbx_mem_reader_rewind, &q->body);
    if (!rc)
        rc = ocisbx_http_request_set_body_sha256(q->req, q->p.sha256_b64, q->p.len);
    if (!rc)
        rc = ocisbx_write_request_finish(q->req, q->p.sha256_b64);
    return rc;
}

static int batch_next(void *ud, ocisbx_http_request **r, void **tag)
{
    parts_run *pr = ud;
    *r = NULL;
    part_req *q = calloc(1, sizeof *q);
    if (!q)
        return ocisbx_fail_nomem();
    bool none = false;
    int rc = pr->feed->next(pr->feed->ud, &q->p, &none);
    if (rc || none) {
        free(q);
        return rc;
    }
    rc = part_request(pr, q); /* the part is taken: done is owed for it */
    if (rc) {
        pr->feed->done(pr->feed->ud, q->p.tag, rc, false);
        part_req_free(q);
        return rc;
    }
    *r = q->req;
    *tag = q;
    return 0;
}

static int batch_done(void *ud, void *tag, int rc, ocisbx_http_response *resp, bool aborted)
{
    parts_run *pr = ud;
    part_req *q = tag;
    if (!aborted) {
        const char *rid = resp ? ocisbx_http_response_request_id(resp) : ocisbx_http_request_request_id(q->req);
        ocisbx_client_note_request_id(pr->c, rid);
        if (!rc)
            rc = ocisbx_write_answer_check(resp, q->p.path, q->p.sha256_b64, NULL);
    }
    ocisbx_http_response_free(resp);
    pr->feed->done(pr->feed->ud, q->p.tag, rc, aborted);
    part_req_free(q);
    return rc;
}

int ocisbx_client_write_parts(ocisbx_client *c, const char *sandbox_id, int in_flight,
                              const ocisbx_file_part_feed *feed)
{
    if (!c || !sandbox_id || !feed || !feed->next || !feed->done)
        return ocisbx_fail(OCISBX_EINVAL, "write parts: NULL argument");
    parts_run pr = {c, sandbox_id, feed};
    ocisbx_http_batch_feed bf = {batch_next, batch_done, &pr};
    return ocisbx_http_batch_run(c->http, in_flight, &bf);
}
