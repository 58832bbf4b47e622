/* Request bodies: a buffer, a file or a callback, streamed to libcurl in
 * chunks so memory stays bounded; hashed in one pass before sending. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "http/http_internal.h"
#include "ocisbx/util.h"

static int open_file(ocisbx_http_request *r)
{
    if (r->body_fp)
        return 0;
    r->body_fp = fopen(r->body_path, "rb");
    if (!r->body_fp)
        return ocisbx_fail(OCISBX_EIO, "body file %s: %s", r->body_path, strerror(errno));
    struct stat st;
    if (fstat(fileno(r->body_fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(r->body_fp);
        r->body_fp = NULL;
        return ocisbx_fail(OCISBX_EIO, "body file %s: not a regular file", r->body_path);
    }
    r->body_declared_len = (int64_t)st.st_size;
    return 0;
}

int64_t ocisbx_http_body_read(ocisbx_http_request *r, size_t *offset, void *buf, size_t cap)
{
    switch (r->body) {
    case BODY_NONE: return 0;
    case BODY_BUFFER: {
        size_t n = r->body_len - *offset;
        if (n > cap)
            n = cap;
        memcpy(buf, r->body_data + *offset, n);
        *offset += n;
        return (int64_t)n;
    }
    case BODY_FILE: {
        size_t n = fread(buf, 1, cap, r->body_fp);
        if (n == 0 && ferror(r->body_fp))
            return ocisbx_fail(OCISBX_EIO, "body file %s: read error", r->body_path);
        *offset += n;
        return (int64_t)n;
    }
    case BODY_CALLBACK: {
        r->body_consumed = true;
        int64_t n = r->body_read(buf, cap, r->body_ud);
        if (n > (int64_t)cap)
            return ocisbx_fail(OCISBX_EINVAL, "body callback returned more bytes than asked");
        if (n > 0)
            *offset += (size_t)n;
        return n;
    }
    }
    return 0;
}

static int rewind_body(ocisbx_http_request *r)
{
    if (r->body == BODY_FILE) {
        if (fseek(r->body_fp, 0, SEEK_SET) != 0)
            return ocisbx_fail(OCISBX_EIO, "body file %s: cannot rewind", r->body_path);
        clearerr(r->body_fp);
    } else if (r->body == BODY_CALLBACK && r->body_consumed) {
        if (!r->body_rewind)
            return ocisbx_fail(OCISBX_EINVAL, "request body callback has no rewind function: cannot send it again");
        int rc = r->body_rewind(r->body_ud);
        if (rc != 0)
            return ocisbx_fail(rc < 0 ? rc : OCISBX_EIO, "request body callback: rewind failed");
        r->body_consumed = false;
    }
    return 0;
}

int ocisbx_http_body_prepare(ocisbx_http_request *r, bool need_sha)
{
    int rc;
    if (r->body == BODY_FILE && (rc = open_file(r)) != 0)
        return rc;
    if (!need_sha || r->have_sha)
        return 0;
    switch (r->body) {
    case BODY_NONE:
    case BODY_BUFFER:
        if ((rc = ocisbx_sha256_base64(r->body_data ? r->body_data : "", r->body_len, r->body_sha)) != 0)
            return rc;
        r->body_total = r->body_len;
        r->have_sha = true;
        return 0;
    case BODY_CALLBACK:
        if (!r->body_rewind)
            return ocisbx_fail(OCISBX_EINVAL,
                               "request body callback without a rewind function: give its SHA-256 or exclude "
                               "the body from signing");
        if ((rc = rewind_body(r)) != 0)
            return rc;
        break;
    case BODY_FILE:
        if ((rc = rewind_body(r)) != 0)
            return rc;
        break;
    }
    ocisbx_sha256_ctx *ctx = NULL;
    if ((rc = ocisbx_sha256_new(&ctx)) != 0)
        return rc;
    unsigned char *chunk = malloc(OCISBX_HTTP_CHUNK);
    if (!chunk) {
        ocisbx_sha256_free(ctx);
        return ocisbx_fail_nomem();
    }
    size_t total = 0;
    for (;;) {
        int64_t n = ocisbx_http_body_read(r, &total, chunk, OCISBX_HTTP_CHUNK);
        if (n < 0) {
            rc = (int)n;
            break;
        }
        if (n == 0)
            break;
        if ((rc = ocisbx_sha256_update(ctx, chunk, (size_t)n)) != 0)
            break;
    }
    unsigned char md[OCISBX_SHA256_LEN];
    if (rc == 0)
        rc = ocisbx_sha256_final(ctx, md);
    ocisbx_sha256_free(ctx);
    free(chunk);
    if (rc == 0) {
        char *b64 = NULL;
        if ((rc = ocisbx_base64_encode(md, sizeof md, &b64)) == 0) {
            snprintf(r->body_sha, sizeof r->body_sha, "%s", b64);
            ocisbx_free(b64);
            r->body_total = total;
            r->have_sha = true;
        }
    }
    if (rc == 0)
        rc = rewind_body(r);
    return rc;
}

int ocisbx_http_body_begin(ocisbx_http_request *r)
{
    return rewind_body(r);
}

bool ocisbx_http_body_replayable(const ocisbx_http_request *r)
{
    return r->body != BODY_CALLBACK || r->body_rewind != NULL;
}

void ocisbx_http_body_end(ocisbx_http_request *r)
{
    if (r->body_fp) {
        fclose(r->body_fp);
        r->body_fp = NULL;
    }
}

int64_t ocisbx_http_body_length(const ocisbx_http_request *r)
{
    switch (r->body) {
    case BODY_NONE: return 0;
    case BODY_BUFFER: return (int64_t)r->body_len;
    case BODY_FILE:
    case BODY_CALLBACK: return r->have_sha ? (int64_t)r->body_total : r->body_declared_len;
    }
    return -1;
}
