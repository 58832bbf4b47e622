/* Evidence records: one JSON line per decided tool call, chained by the
 * SHA-256 of the previous line; the file sink and the verifier. */
#define _GNU_SOURCE /* fallocate */
#include "harness/evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ocisbx/harness.h"
#include "util/internal.h"
#include "util/utf8.h"

#define HEX_LEN (OCISBX_SHA256_LEN * 2)

void evidence_fields_init(evidence_fields *f)
{
    memset(f, 0, sizeof *f);
    f->timed_out = f->truncated = -1;
    f->duration_ms = f->output_bytes = f->returned_bytes = -1;
}

/* A string field as valid UTF-8 (a command or path may hold any bytes), or null. */
static bool add_str(cJSON *o, const char *name, const char *v)
{
    if (!v)
        return cJSON_AddNullToObject(o, name) != NULL;
    size_t len = strlen(v);
    if (ocisbx_utf8_valid(v, len))
        return cJSON_AddStringToObject(o, name, v) != NULL;
    ocisbx_buf b = OCISBX_BUF_INIT;
    bool ok = ocisbx_utf8_sanitize(v, len, &b) == 0 && cJSON_AddStringToObject(o, name, b.data ? b.data : "");
    ocisbx_buf_free(&b);
    return ok;
}

static bool add_int(cJSON *o, const char *name, bool present, int64_t v)
{
    return (present ? cJSON_AddNumberToObject(o, name, (double)v) : cJSON_AddNullToObject(o, name)) != NULL;
}

static bool add_bool(cJSON *o, const char *name, int v)
{
    return (v < 0 ? cJSON_AddNullToObject(o, name) : cJSON_AddBoolToObject(o, name, v)) != NULL;
}

/* The paths an apply_patch names, or null. */
static bool add_paths(cJSON *o, const evidence_fields *f)
{
    if (!f->n_paths)
        return cJSON_AddNullToObject(o, "paths") != NULL;
    cJSON *a = cJSON_AddArrayToObject(o, "paths");
    bool ok = a != NULL;
    for (size_t i = 0; ok && i < f->n_paths; i++)
        ok = add_str(a, "", f->paths[i] ? f->paths[i] : "");
    return ok;
}

int evidence_line(const evidence_fields *f, const char *prev_hex, char **line)
{
    *line = NULL;
    cJSON *o = cJSON_CreateObject();
    bool ok =
        o && add_str(o, "tool", f->tool) && add_str(o, "label", f->label) && add_str(o, "decision", f->decision) &&
        add_str(o, "reason", f->reason) && add_str(o, "command", f->command) && add_str(o, "path", f->path) &&
        add_str(o, "resolved_path", f->resolved_path) && add_paths(o, f) &&
        add_int(o, "exit_code", f->has_exit_code, f->exit_code) && add_bool(o, "timed_out", f->timed_out) &&
        add_bool(o, "truncated", f->truncated) && add_int(o, "duration_ms", f->duration_ms >= 0, f->duration_ms) &&
        add_int(o, "output_bytes", f->output_bytes >= 0, f->output_bytes) &&
        add_str(o, "output_sha256", f->output_sha256) &&
        add_int(o, "returned_bytes", f->returned_bytes >= 0, f->returned_bytes) &&
        add_str(o, "returned_sha256", f->returned_sha256) && add_str(o, "sha256_before", f->sha256_before) &&
        add_str(o, "sha256_after", f->sha256_after) && add_str(o, "backend", f->backend) &&
        add_str(o, "sandbox_id", f->sandbox_id) && add_str(o, "command_id", f->command_id) &&
        add_str(o, "started_at", f->started_at) && add_str(o, "prev_sha256", prev_hex);
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text)
        return ocisbx_fail_nomem();
    *line = text;
    return 0;
}

void evidence_line_hash(const char *line, size_t len, char out[HEX_LEN + 1])
{
    unsigned char md[OCISBX_SHA256_LEN];
    ocisbx_sha256(line, len, md);
    ocisbx_hex(md, sizeof md, out);
}

/* ---- the file sink ------------------------------------------------------------ */
struct evidence_file {
    int fd;
    char *path; /* as given, for messages */
    char *abs;  /* its absolute form at open (NULL: unknown), to find it replaced */
};

int evidence_file_open(const char *path, evidence_file **out)
{
    *out = NULL;
    if (!path || !path[0])
        return ocisbx_fail(OCISBX_EINVAL, "evidence file: no path");
    char shown[300];
    ocisbx_escape_shown(path, shown, sizeof shown);
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0600);
    if (fd < 0)
        return ocisbx_fail(OCISBX_EIO, "evidence file %s: %s", shown, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return ocisbx_fail(OCISBX_EINVAL, "evidence file %s: not a regular file", shown);
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    evidence_file *ef = calloc(1, sizeof *ef);
    if (!ef || !(ef->path = ocisbx_strdup(path))) {
        free(ef);
        close(fd);
        return ocisbx_fail_nomem();
    }
    ef->fd = fd;
    ef->abs = realpath(path, NULL);
    *out = ef;
    return 0;
}

void evidence_file_close(evidence_file *ef)
{
    if (!ef)
        return;
    close(ef->fd);
    free(ef->path);
    free(ef->abs);
    free(ef);
}

/* The hex SHA-256 of the file's last line (its bytes without the final
 * newline); the chain start for an empty file. The file must end with a
 * newline: a torn last line is refused rather than chained onto. Memory:
 * one 64 KiB block, whatever the line's length. */
static int last_line_hash(evidence_file *ef, char out[HEX_LEN + 1])
{
    struct stat st;
    if (fstat(ef->fd, &st) != 0)
        return ocisbx_fail(OCISBX_EIO, "evidence file %s: %s", ef->path, strerror(errno));
    off_t size = st.st_size;
    if (size == 0) {
        memcpy(out, OCISBX_EVIDENCE_CHAIN_START, HEX_LEN + 1);
        return 0;
    }
    char block[65536];
    if (pread(ef->fd, block, 1, size - 1) != 1 || block[0] != '\n')
        return ocisbx_fail(OCISBX_EINTEGRITY,
                           "evidence file %s: the last line is incomplete (no newline at the end); "
                           "check it with `ocisbx evidence verify` before appending",
                           ef->path);
    /* find the newline before the last one */
    off_t end = size - 1, start = 0, pos = end;
    while (pos > 0) {
        size_t n = pos > (off_t)sizeof block ? sizeof block : (size_t)pos;
        if (pread(ef->fd, block, n, pos - (off_t)n) != (ssize_t)n)
            return ocisbx_fail(OCISBX_EIO, "evidence file %s: read failed", ef->path);
        char *nl = NULL;
        for (size_t i = n; i > 0; i--)
            if (block[i - 1] == '\n') {
                nl = block + i - 1;
                break;
            }
        if (nl) {
            start = pos - (off_t)n + (nl - block) + 1;
            break;
        }
        pos -= (off_t)n;
    }
    ocisbx_sha256_ctx *h = NULL;
    int rc = ocisbx_sha256_new(&h);
    for (off_t at = start; !rc && at < end;) {
        size_t n = end - at > (off_t)sizeof block ? sizeof block : (size_t)(end - at);
        if (pread(ef->fd, block, n, at) != (ssize_t)n)
            rc = ocisbx_fail(OCISBX_EIO, "evidence file %s: read failed", ef->path);
        else
            rc = ocisbx_sha256_update(h, block, n);
        at += (off_t)n;
    }
    unsigned char md[OCISBX_SHA256_LEN];
    if (!rc)
        rc = ocisbx_sha256_final(h, md);
    ocisbx_sha256_free(h);
    if (!rc)
        ocisbx_hex(md, sizeof md, out);
    return rc;
}

/* Room for len more bytes after the end, so that the record's append does
 * not fail for want of space once the call ran. A file system that cannot
 * reserve (EOPNOTSUPP) is let be. */
static int reserve_space(evidence_file *ef, size_t len)
{
    struct stat st;
    if (fstat(ef->fd, &st) != 0)
        return ocisbx_fail(OCISBX_EIO, "evidence file %s: %s", ef->path, strerror(errno));
    if (fallocate(ef->fd, FALLOC_FL_KEEP_SIZE, st.st_size, (off_t)len) == 0)
        return 0;
    if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL || errno == EPERM || errno == ENODEV)
        return 0;
    return ocisbx_fail(OCISBX_EIO, "evidence file %s: no room for the record: %s", ef->path, strerror(errno));
}

/* The file the harness opened must still be the file at its path. */
static int still_there(evidence_file *ef)
{
    struct stat fst, pst;
    if (fstat(ef->fd, &fst) != 0)
        return ocisbx_fail(OCISBX_EIO, "evidence file %s: %s", ef->path, strerror(errno));
    bool moved = ef->abs && (stat(ef->abs, &pst) != 0 || pst.st_ino != fst.st_ino || pst.st_dev != fst.st_dev);
    if (fst.st_nlink == 0 || moved)
        return ocisbx_fail(OCISBX_EIO, "evidence file %s: removed or replaced since the harness opened it", ef->path);
    return 0;
}

int evidence_file_check(evidence_file *ef, size_t reserve)
{
    if (flock(ef->fd, LOCK_EX) != 0)
        return ocisbx_fail(OCISBX_EIO, "evidence file %s: cannot lock: %s", ef->path, strerror(errno));
    char prev[HEX_LEN + 1];
    int rc = still_there(ef);
    if (!rc)
        rc = last_line_hash(ef, prev);
    if (!rc && reserve)
        rc = reserve_space(ef, reserve);
    flock(ef->fd, LOCK_UN);
    return rc;
}

int evidence_file_append(evidence_file *ef, const evidence_fields *f, char **line_out)
{
    if (line_out)
        *line_out = NULL;
    if (flock(ef->fd, LOCK_EX) != 0)
        return ocisbx_fail(OCISBX_EIO, "evidence file %s: cannot lock: %s", ef->path, strerror(errno));
    char prev[HEX_LEN + 1];
    char *line = NULL;
    int rc = still_there(ef);
    if (!rc)
        rc = last_line_hash(ef, prev);
    if (!rc)
        rc = evidence_line(f, prev, &line);
    if (!rc) {
        size_t len = strlen(line);
        line[len] = '\n'; /* cJSON's buffer: the NUL becomes the newline for one write */
        ssize_t w = write(ef->fd, line, len + 1);
        line[len] = 0;
        if (w != (ssize_t)(len + 1))
            rc = ocisbx_fail(OCISBX_EIO, "evidence file %s: write failed: %s", ef->path,
                             w < 0 ? strerror(errno) : "short write");
        else if (fsync(ef->fd) != 0)
            rc = ocisbx_fail(OCISBX_EIO, "evidence file %s: fsync failed: %s", ef->path, strerror(errno));
    }
    flock(ef->fd, LOCK_UN);
    if (!rc && line_out)
        *line_out = line;
    else
        free(line);
    return rc;
}

/* ---- verification ---------------------------------------------------------------- */
int ocisbx_evidence_verify_file(const char *path, int64_t *records, int64_t *bad_line)
{
    return ocisbx_evidence_verify_file_head(path, records, bad_line, NULL);
}

/* Reads one line (without its newline) into line: 1 a line ended by a
 * newline, 0 the end of the file, 2 a torn last line, 3 one over the limit;
 * or a negative code. */
static int read_line(FILE *fp, ocisbx_buf *line)
{
    ocisbx_buf_clear(line);
    int c;
    while ((c = getc(fp)) != EOF && c != '\n') {
        if (line->len >= OCISBX_EVIDENCE_LINE_MAX)
            return 3;
        char ch = (char)c;
        if (ocisbx_buf_append(line, &ch, 1))
            return ocisbx_fail_nomem();
    }
    if (ferror(fp))
        return OCISBX_EIO;
    if (c == EOF)
        return line->len ? 2 : 0;
    return 1;
}

/* Line n is one JSON object and nothing else, whose prev_sha256 is expect. */
static int check_record(const char *shown, const ocisbx_buf *line, int64_t n, const char *expect)
{
    const char *text = line->data ? line->data : "", *end = NULL;
    if (memchr(text, 0, line->len))
        return ocisbx_fail(OCISBX_EINTEGRITY, "evidence file %s: line %lld is not a record (a NUL byte in it)", shown,
                           (long long)n);
    cJSON *rec = cJSON_ParseWithLengthOpts(text, line->len, &end, false);
    while (rec && end && end < text + line->len && (*end == ' ' || *end == '\t' || *end == '\r'))
        end++;
    const char *why = !rec ? "not JSON" : end != text + line->len ? "something after the record" : NULL;
    const cJSON *prev = rec ? cJSON_GetObjectItemCaseSensitive(rec, "prev_sha256") : NULL;
    if (!why && (!cJSON_IsObject(rec) || !cJSON_IsString(prev)))
        why = "no prev_sha256 string";
    if (why) {
        cJSON_Delete(rec);
        return ocisbx_fail(OCISBX_EINTEGRITY, "evidence file %s: line %lld is not a record (%s)", shown, (long long)n,
                           why);
    }
    int rc = 0;
    if (strcmp(prev->valuestring, expect) != 0) {
        char got[80];
        ocisbx_escape_shown(prev->valuestring, got, sizeof got);
        if (n == 1)
            rc = ocisbx_fail(OCISBX_EINTEGRITY,
                             "evidence file %s: line 1: prev_sha256 is %s, not the chain start (64 zeros): "
                             "lines were removed before it",
                             shown, got);
        else
            rc = ocisbx_fail(OCISBX_EINTEGRITY,
                             "evidence file %s: line %lld: prev_sha256 is %s, but line %lld hashes to %s: "
                             "line %lld was changed, or lines were removed or inserted between them",
                             shown, (long long)n, got, (long long)(n - 1), expect, (long long)(n - 1));
    }
    cJSON_Delete(rec);
    return rc;
}

/* Walks the chain: *n the lines read, expect the last one's hash. */
static int walk_chain(FILE *fp, const char *shown, int64_t *n, char expect[HEX_LEN + 1])
{
    ocisbx_buf line = OCISBX_BUF_INIT;
    int rc = 0;
    for (;;) {
        int got = read_line(fp, &line);
        if (got == 0)
            break;
        if (got < 0) {
            rc = got == OCISBX_EIO ? ocisbx_fail(OCISBX_EIO, "evidence file %s: read failed", shown) : got;
            break;
        }
        ++*n;
        if (got == 3)
            rc = ocisbx_fail(OCISBX_ETOOLARGE, "evidence file %s: line %lld is longer than %d bytes", shown,
                             (long long)*n, OCISBX_EVIDENCE_LINE_MAX);
        else if (got == 2)
            rc = ocisbx_fail(OCISBX_EINTEGRITY, "evidence file %s: line %lld is incomplete (no newline at the end)",
                             shown, (long long)*n);
        else
            rc = check_record(shown, &line, *n, expect);
        if (rc)
            break;
        evidence_line_hash(line.data ? line.data : "", line.len, expect);
    }
    ocisbx_buf_free(&line);
    return rc;
}

int ocisbx_evidence_verify_file_head(const char *path, int64_t *records, int64_t *bad_line, char *head)
{
    if (head)
        head[0] = 0;
    if (records)
        *records = 0;
    if (bad_line)
        *bad_line = 0;
    if (!path || !path[0])
        return ocisbx_fail(OCISBX_EINVAL, "evidence file: no path");
    const char *shown = OCISBX_SHOWN(path);
    int fd = ocisbx_open_regular(path, NULL);
    if (fd == OCISBX_OPEN_NOT_REGULAR)
        return ocisbx_fail(OCISBX_EINVAL, "evidence file %s: not a regular file", shown);
    if (fd < 0)
        return ocisbx_fail(errno == ENOENT ? OCISBX_ENOTFOUND : OCISBX_EIO, "evidence file %s: %s", shown,
                           strerror(errno));
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        close(fd);
        return ocisbx_fail_nomem();
    }
    char expect[HEX_LEN + 1] = OCISBX_EVIDENCE_CHAIN_START;
    int64_t n = 0;
    int rc = walk_chain(fp, shown, &n, expect);
    fclose(fp);
    if (rc) {
        if (bad_line)
            *bad_line = n;
        return rc;
    }
    if (head) /* the hash of the last line read (the chain start for an empty file) */
        memcpy(head, expect, sizeof expect);
    if (records)
        *records = n;
    return 0;
}
