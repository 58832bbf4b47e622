/* File operations: writes carry the body's SHA-256 (opc-content-sha256) and
 * check the one the service returns; reads check the content against it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/client_internal.h"
#include "api/parts.h"
#include "util/dest.h"
#include "ocisbx/util.h"

#define SHA_HEADER "opc-content-sha256"
#define HASH_CHUNK (64 * 1024)

int ocisbx_file_request(ocisbx_client *c, ocisbx_op op, const char *sandbox_id, const char *path,
                        ocisbx_http_request **out)
{
    if (!path || path[0] != '/')
        return ocisbx_fail(OCISBX_EINVAL, "file path '%s': must be absolute (under /workspace)", path ? path : "");
    ocisbx_param p[] = {{"sandboxId", sandbox_id}, {"filePath", path}};
    return ocisbx_client_request(c, op, p, 2, NULL, out);
}

static int send_raw(ocisbx_client *c, ocisbx_http_request *req, ocisbx_http_response **resp)
{
    *resp = NULL;
    int rc = ocisbx_http_send(c->http, req, resp);
    const char *rid = *resp ? ocisbx_http_response_request_id(*resp) : ocisbx_http_request_request_id(req);
    ocisbx_client_note_request_id(c, rid);
    return rc;
}

/* ---- writes ---- */
int ocisbx_write_request_finish(ocisbx_http_request *req, const char *sha)
{
    int rc = ocisbx_http_request_add_header(req, SHA_HEADER, sha);
    if (!rc)
        rc = ocisbx_http_request_set_content_type(req, "application/octet-stream");
    return rc;
}

int ocisbx_write_answer_check(ocisbx_http_response *resp, const char *path, const char *sha,
                              ocisbx_sandbox_file **out)
{
    const char *rid = ocisbx_http_response_request_id(resp);
    size_t len = 0;
    const char *body = ocisbx_http_response_body(resp, &len);
    ocisbx_model *m = NULL;
    int rc = 0;
    if (len) {
        rc = ocisbx_model_parse(&ocisbx_md_file, body, len, &m);
        if (rc)
            ocisbx_error_wrap("WriteSandboxFile %s (opc-request-id: %s): ", path, rid ? rid : "none");
    }
    const char *hdr = ocisbx_http_response_header(resp, SHA_HEADER);
    const char *model_sha = m ? ocisbx_model_str(m, "contentSha256") : NULL;
    if (!rc && !hdr && !model_sha)
        rc = ocisbx_fail(OCISBX_EINTEGRITY,
                         "write %s: the service returned no %s to confirm the content "
                         "(opc-request-id: %s)",
                         path, SHA_HEADER, rid ? rid : "none");
    const char *got = hdr && strcmp(hdr, sha) != 0 ? hdr
                                                   : (model_sha && strcmp(model_sha, sha) != 0 ? model_sha : NULL);
    if (!rc && got)
        rc = ocisbx_fail(OCISBX_EINTEGRITY,
                         "write %s: the service stored SHA-256 %s, the client sent %s "
                         "(opc-request-id: %s)",
                         path, got, sha, rid ? rid : "none");
    if (rc)
        ocisbx_error_annotate(ocisbx_http_response_status(resp), rid);
    if (!rc && m)
        ocisbx_model_set_meta(m, NULL, rid, NULL);
    if (!rc && out)
        *out = (ocisbx_sandbox_file *)(void *)m;
    else
        ocisbx_model_free(m);
    return rc;
}

static int finish_write(ocisbx_client *c, ocisbx_http_request *req, const char *path, const char *sha,
                        ocisbx_sandbox_file **out)
{
    ocisbx_http_response *resp = NULL;
    int rc = ocisbx_write_request_finish(req, sha);
    if (!rc)
        rc = send_raw(c, req, &resp);
    if (!rc)
        rc = ocisbx_write_answer_check(resp, path, sha, out);
    ocisbx_http_response_free(resp);
    return rc;
}

static int too_large(const char *path, uint64_t len)
{
    return ocisbx_fail(OCISBX_ETOOLARGE,
                       "write %s: %llu bytes is above the service's %d-byte body limit "
                       "(write it in parts)",
                       path, (unsigned long long)len, OCISBX_FILE_PART_MAX);
}

int ocisbx_client_write_file(ocisbx_client *c, const char *sandbox_id, const char *file_path, const void *data,
                             size_t len, ocisbx_sandbox_file **out)
{
    if (out)
        *out = NULL;
    if (!data && len)
        return ocisbx_fail(OCISBX_EINVAL, "write %s: NULL data", file_path ? file_path : "");
    if (len > OCISBX_FILE_PART_MAX)
        return too_large(file_path, len);
    char sha[OCISBX_SHA256_B64_LEN + 1];
    ocisbx_http_request *req = NULL;
    int rc = ocisbx_sha256_base64(data ? data : "", len, sha);
    if (!rc)
        rc = ocisbx_file_request(c, OCISBX_OP_WRITE_FILE, sandbox_id, file_path, &req);
    if (!rc)
        rc = ocisbx_http_request_set_body(req, data ? data : "", len);
    if (!rc)
        rc = ocisbx_http_request_set_body_sha256(req, sha, len);
    if (!rc)
        rc = finish_write(c, req, file_path, sha, out);
    ocisbx_http_request_free(req);
    return rc;
}

static int64_t file_read_fn(void *buf, size_t cap, void *ud)
{
    FILE *f = ud;
    size_t n = fread(buf, 1, cap, f);
    if (n == 0 && ferror(f))
        return ocisbx_fail(OCISBX_EIO, "reading the local file: %s", strerror(errno));
    return (int64_t)n;
}

int ocisbx_client_write_file_from_path(ocisbx_client *c, const char *sandbox_id, const char *file_path,
                                       const char *local_path, ocisbx_sandbox_file **out)
{
    if (out)
        *out = NULL;
    if (!local_path)
        return ocisbx_fail(OCISBX_EINVAL, "write %s: no local file", file_path ? file_path : "");
    FILE *f = fopen(local_path, "rb");
    if (!f)
        return ocisbx_fail(OCISBX_EIO, "write %s: cannot open %s: %s", file_path, local_path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return ocisbx_fail(OCISBX_EIO, "write %s: %s is not a regular file", file_path, local_path);
    }
    if ((uint64_t)st.st_size > OCISBX_FILE_PART_MAX) {
        fclose(f);
        return too_large(file_path, (uint64_t)st.st_size);
    }
    char sha[OCISBX_SHA256_B64_LEN + 1];
    uint64_t total = 0;
    int rc = ocisbx_sha256_stream(file_read_fn, f, sha, &total);
    fclose(f);
    if (rc)
        return ocisbx_error_wrap("write %s from %s: ", file_path, local_path);
    if (total > OCISBX_FILE_PART_MAX)
        return too_large(file_path, total);
    ocisbx_http_request *req = NULL;
    rc = ocisbx_file_request(c, OCISBX_OP_WRITE_FILE, sandbox_id, file_path, &req);
    if (!rc)
        rc = ocisbx_http_request_set_body_file(req, local_path);
    if (!rc)
        rc = ocisbx_http_request_set_body_sha256(req, sha, total);
    if (!rc)
        rc = finish_write(c, req, file_path, sha, out);
    ocisbx_http_request_free(req);
    return rc;
}

int ocisbx_client_write_file_from_callback(ocisbx_client *c, const char *sandbox_id, const char *file_path,
                                           int64_t len, ocisbx_read_fn read, ocisbx_rewind_fn rewind, void *user_data,
                                           const char *sha256_b64, ocisbx_sandbox_file **out)
{
    if (out)
        *out = NULL;
    if (!read || len < 0)
        return ocisbx_fail(OCISBX_EINVAL, "write %s: a reader and a length >= 0 are required",
                           file_path ? file_path : "");
    if ((uint64_t)len > OCISBX_FILE_PART_MAX)
        return too_large(file_path, (uint64_t)len);
    int rc;
    if (!sha256_b64 && !rewind) {
        /* one pass only: hold the part in memory (bounded by the part size) */
        ocisbx_buf b = OCISBX_BUF_INIT;
        rc = ocisbx_buf_reserve(&b, (size_t)len);
        while (!rc) {
            if (b.len > (size_t)len)
                break;
            rc = ocisbx_buf_reserve(&b, HASH_CHUNK);
            int64_t n = rc ? 0 : read(b.data + b.len, HASH_CHUNK, user_data);
            if (n < 0)
                rc = (int)n;
            if (n <= 0)
                break;
            b.len += (size_t)n;
        }
        if (!rc && b.len != (size_t)len)
            rc = ocisbx_fail(OCISBX_EIO, "write %s: the reader gave %zu bytes, %lld announced", file_path, b.len,
                             (long long)len);
        if (!rc)
            rc = ocisbx_client_write_file(c, sandbox_id, file_path, b.data ? b.data : "", b.len, out);
        ocisbx_buf_free(&b);
        return rc;
    }
    char sha[OCISBX_SHA256_B64_LEN + 1];
    if (sha256_b64) {
        if (strlen(sha256_b64) != OCISBX_SHA256_B64_LEN)
            return ocisbx_fail(OCISBX_EINVAL, "write %s: '%s' is not a base64 SHA-256", file_path, sha256_b64);
        memcpy(sha, sha256_b64, sizeof sha);
    } else {
        uint64_t total = 0;
        rc = ocisbx_sha256_stream(read, user_data, sha, &total);
        if (!rc && total != (uint64_t)len)
            rc = ocisbx_fail(OCISBX_EIO, "write %s: the reader gave %llu bytes, %lld announced", file_path,
                             (unsigned long long)total, (long long)len);
        if (!rc && rewind(user_data) != 0)
            rc = ocisbx_fail(OCISBX_EIO, "write %s: the reader could not rewind", file_path);
        if (rc)
            return rc;
    }
    ocisbx_http_request *req = NULL;
    rc = ocisbx_file_request(c, OCISBX_OP_WRITE_FILE, sandbox_id, file_path, &req);
    if (!rc)
        rc = ocisbx_http_request_set_body_callback(req, len, read, rewind, user_data);
    if (!rc)
        rc = ocisbx_http_request_set_body_sha256(req, sha, (uint64_t)len);
    if (!rc)
        rc = finish_write(c, req, file_path, sha, out);
    ocisbx_http_request_free(req);
    return rc;
}

/* ---- reads ---- */
int ocisbx_checked_read_sink(const void *data, size_t len, void *ud)
{
    ocisbx_checked_read *r = ud;
    if (r->max && r->total + len > r->max) {
        r->too_large = true;
        return 1;
    }
    if (ocisbx_sha256_update(r->sha, data, len))
        return 1;
    r->total += len;
    if (r->write(data, len, r->user_data) != 0) {
        r->canceled = true;
        return 1;
    }
    return 0;
}

int ocisbx_checked_read_request(ocisbx_client *c, const char *sandbox_id, const char *file_path, uint64_t max,
                                ocisbx_write_fn write, void *user_data, ocisbx_checked_read *r,
                                ocisbx_http_request **out)
{
    memset(r, 0, sizeof *r);
    *out = NULL;
    if (!write)
        return ocisbx_fail(OCISBX_EINVAL, "read %s: no writer", file_path ? file_path : "");
    r->write = write;
    r->user_data = user_data;
    r->max = max;
    ocisbx_http_request *req = NULL;
    int rc = ocisbx_sha256_new(&r->sha);
    if (!rc)
        rc = ocisbx_file_request(c, OCISBX_OP_READ_FILE, sandbox_id, file_path, &req);
    if (!rc)
        rc = ocisbx_http_request_set_streaming(req, 1);
    if (!rc)
        rc = ocisbx_http_request_set_sink_callback(req, ocisbx_checked_read_sink, r);
    if (rc)
        ocisbx_http_request_free(req);
    else
        *out = req;
    return rc;
}

/* The content against the opc-content-sha256 of the answer. */
static int read_check(ocisbx_checked_read *r, const char *file_path, ocisbx_http_response *resp)
{
    const char *rid = ocisbx_http_response_request_id(resp);
    const char *want = ocisbx_http_response_header(resp, SHA_HEADER);
    unsigned char digest[OCISBX_SHA256_LEN];
    char got[OCISBX_SHA256_B64_LEN + 1];
    char *b64 = NULL;
    int rc = ocisbx_sha256_final(r->sha, digest);
    if (!rc)
        rc = ocisbx_base64_encode(digest, sizeof digest, &b64);
    if (!rc) {
        snprintf(got, sizeof got, "%s", b64);
        ocisbx_free(b64);
        if (!want)
            rc = ocisbx_fail(OCISBX_EINTEGRITY,
                             "read %s: the answer has no %s to check the content against "
                             "(opc-request-id: %s)",
                             file_path, SHA_HEADER, rid ? rid : "none");
        else if (strcmp(want, got) != 0)
            rc = ocisbx_fail(OCISBX_EINTEGRITY,
                             "read %s: content SHA-256 %s does not match %s %s (%llu bytes, "
                             "opc-request-id: %s)",
                             file_path, got, SHA_HEADER, want, (unsigned long long)r->total, rid ? rid : "none");
    }
    if (rc)
        ocisbx_error_annotate(ocisbx_http_response_status(resp), rid);
    return rc;
}

int ocisbx_checked_read_end(ocisbx_checked_read *r, const char *file_path, int rc, ocisbx_http_response *resp)
{
    if (r->too_large)
        rc = ocisbx_fail(OCISBX_ETOOLARGE, "read %s: the file is larger than the %llu bytes allowed", file_path,
                         (unsigned long long)r->max);
    else if (r->canceled)
        rc = ocisbx_fail(OCISBX_ECANCELED, "read %s: canceled by the writer", file_path);
    if (!rc)
        rc = read_check(r, file_path, resp);
    return rc;
}

void ocisbx_checked_read_release(ocisbx_checked_read *r)
{
    ocisbx_sha256_free(r->sha);
    r->sha = NULL;
}

uint64_t ocisbx_checked_read_max(const ocisbx_client *c, bool buffered)
{
    if (!buffered)
        return c ? c->max_download : 0;
    return c && c->max_download ? c->max_download : (uint64_t)OCISBX_READ_BUFFER_MAX;
}

/* The reads' one body: max is the most bytes taken (0: no limit). */
static int read_to_callback(ocisbx_client *c, const char *sandbox_id, const char *file_path, uint64_t max,
                            ocisbx_write_fn write, void *user_data)
{
    ocisbx_checked_read r;
    ocisbx_http_request *req = NULL;
    ocisbx_http_response *resp = NULL;
    int rc = ocisbx_checked_read_request(c, sandbox_id, file_path, max, write, user_data, &r, &req);
    if (!rc)
        rc = send_raw(c, req, &resp);
    rc = ocisbx_checked_read_end(&r, file_path, rc, resp);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(req);
    ocisbx_checked_read_release(&r);
    return rc;
}

int ocisbx_client_read_file_to_callback(ocisbx_client *c, const char *sandbox_id, const char *file_path,
                                        ocisbx_write_fn write, void *user_data)
{
    return read_to_callback(c, sandbox_id, file_path, ocisbx_checked_read_max(c, false), write, user_data);
}

static int to_buf(const void *data, size_t len, void *ud)
{
    return ocisbx_buf_append(ud, data, len) != 0;
}

int ocisbx_client_read_file(ocisbx_client *c, const char *sandbox_id, const char *file_path, unsigned char **data,
                            size_t *len)
{
    if (!data)
        return ocisbx_fail(OCISBX_EINVAL, "read %s: data is NULL", file_path ? file_path : "");
    *data = NULL;
    if (len)
        *len = 0;
    ocisbx_buf b = OCISBX_BUF_INIT;
    int rc = read_to_callback(c, sandbox_id, file_path, ocisbx_checked_read_max(c, true), to_buf, &b);
    if (rc) {
        ocisbx_buf_free(&b);
        return rc;
    }
    if (len)
        *len = b.len;
    *data = (unsigned char *)ocisbx_buf_detach(&b);
    return *data ? 0 : ocisbx_fail_nomem();
}

static int to_file(const void *data, size_t len, void *ud)
{
    return fwrite(data, 1, len, ud) != len;
}

int ocisbx_client_read_file_to_path(ocisbx_client *c, const char *sandbox_id, const char *file_path,
                                    const char *local_path)
{
    char what[512];
    snprintf(what, sizeof what, "read %s", file_path ? file_path : "(null)");
    ocisbx_dest d;
    int rc = ocisbx_dest_open(&d, local_path, what);
    if (rc)
        return rc;
    rc = ocisbx_client_read_file_to_callback(c, sandbox_id, file_path, to_file, d.fp);
    if (rc == OCISBX_ECANCELED && ferror(d.fp))
        rc = ocisbx_fail(OCISBX_EIO, "%s: writing %s failed", what, local_path);
    if (rc) {
        ocisbx_dest_abort(&d);
        return rc;
    }
    return ocisbx_dest_commit(&d, what);
}
