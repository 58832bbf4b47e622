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

int ocisbx_part_request(ocisbx_client *c, const char *sandbox_id, const ocisbx_file_part *p, ocisbx_mem_reader *body,
                        ocisbx_http_request **out)
{
    *out = NULL;
    if (p->len > OCISBX_FILE_PART_MAX)
        return ocisbx_fail(OCISBX_ETOOLARGE, "write %s: a part of %zu bytes is above the service's %d-byte limit",
                           p->path, p->len, OCISBX_FILE_PART_MAX);
    if (!p->data && p->len)
        return ocisbx_fail(OCISBX_EINVAL, "write %s: NULL data", p->path);
    ocisbx_http_request *r = NULL;
    int rc = ocisbx_file_request(c, OCISBX_OP_WRITE_FILE, sandbox_id, p->path, &r);
    *body = (ocisbx_mem_reader){p->data, p->len, 0};
    if (!rc)
        rc = ocisbx_http_request_set_body_callback(r, (int64_t)p->len, ocisbx_mem_reader_read,
                                                   ocisbx_mem_reader_rewind, body);
    if (!rc)
        rc = ocisbx_http_request_set_body_sha256(r, p->sha256_b64, p->len);
    if (!rc)
        rc = ocisbx_write_request_finish(r, p->sha256_b64);
    if (rc)
        ocisbx_http_request_free(r);
    else
        *out = r;
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
    rc = ocisbx_part_request(pr->c, pr->sandbox_id, &q->p, &q->body, &q->req); /* the part is taken: done is owed */
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
