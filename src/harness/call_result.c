/* What every step of a call shares (see call.h): its arguments, its error
 * for the model, redaction, evidence fields. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/call.h"
#include "ocisbx/backend.h"
#include "util/utf8.h"

/* ---- arguments ---- */
const char *call_str(const harness_call *c, const char *name)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c->args, name));
}

int64_t call_int(const harness_call *c, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->args, name);
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

bool call_bool(const harness_call *c, const char *name)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c->args, name));
}

const char *call_target(const harness_call *c)
{
    return c->resolved ? c->resolved : c->path;
}

/* ---- errors ---- */
int call_error(harness_call *c, const char *code, int rc, const char *fmt, ...)
{
    c->err_code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err_msg, sizeof c->err_msg, fmt, ap);
    va_end(ap);
    c->rc = rc;
    return rc;
}

const char *call_error_code(int rc)
{
    static const struct {
        int rc;
        const char *code;
    } map[] = {
        {OCISBX_ENOTFOUND, "not_found"}, {OCISBX_EISDIR, "is_directory"},   {OCISBX_EFORBIDDEN, "outside_workspace"},
        {OCISBX_ENOMATCH, "no_match"},   {OCISBX_ENOTUNIQUE, "not_unique"}, {OCISBX_ECONFLICT, "conflict"},
        {OCISBX_EBINARY, "binary_file"}, {OCISBX_ETIMEOUT, "timeout"},      {OCISBX_EINVAL, "invalid_arguments"},
        {OCISBX_ETOOLARGE, "too_large"}, {OCISBX_ECANCELED, "canceled"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].rc == rc)
            return map[i].code;
    return "backend_error";
}

int call_backend_failure(harness_call *c, int rc)
{
    const ocisbx_error *e = ocisbx_error_last();
    const char *m = ocisbx_error_message(e);
    c->err_code = call_error_code(rc);
    c->rc = rc;
    if (rc == OCISBX_ECANCELED) {
        /* the user (or the application's cancel callback) stopped it: not
         * the workspace's failure, and nothing to retry on its own */
        snprintf(c->err_msg, sizeof c->err_msg,
                 "the call was canceled: the user interrupted it before it ended, so what it did may be "
                 "incomplete (%s)",
                 m);
    } else if (!strcmp(c->err_code, "backend_error")) {
        int st = ocisbx_error_http_status(e);
        const char *rid = ocisbx_error_request_id(e);
        snprintf(c->err_msg, sizeof c->err_msg,
                 "%s (HTTP status %d, opc-request-id %s); the workspace may be "
                 "unavailable: retry later or report it",
                 m, st, rid ? rid : "none");
    } else {
        snprintf(c->err_msg, sizeof c->err_msg, "%s", m);
    }
    return rc;
}

/* ---- secrets, and text a JSON string can carry ---- */
/* Appends data (len bytes, any) as valid UTF-8 without NUL: a NUL byte and
 * each byte that does not start a valid sequence become U+FFFD, so that
 * every byte reaches the result (a C string stops at the first NUL). */
static int append_clean(ocisbx_buf *b, const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    size_t run = 0, i = 0; /* data[run..i) is valid and not yet appended */
    int rc = 0;
    while (i < len && !rc) {
        size_t n = p[i] ? ocisbx_utf8_seq_len(p + i, len - i) : 0;
        if (n) {
            i += n;
            continue;
        }
        rc = ocisbx_buf_append(b, data + run, i - run);
        if (!rc)
            rc = ocisbx_buf_appends(b, "\xef\xbf\xbd");
        run = ++i;
    }
    if (!rc)
        rc = ocisbx_buf_append(b, data + run, len - run);
    return rc ? rc : ocisbx_buf_append(b, "", 0);
}

char *call_text_clean(const char *data, size_t len, size_t *out_len)
{
    ocisbx_buf b = OCISBX_BUF_INIT;
    if (append_clean(&b, data ? data : "", data ? len : 0) || !b.data) {
        ocisbx_buf_wipe_free(&b);
        return NULL;
    }
    if (out_len)
        *out_len = b.len;
    return ocisbx_buf_detach(&b);
}

char *call_redact(const ocisbx_harness *h, const char *text, size_t len, size_t *out_len)
{
    if (!text)
        text = "", len = 0;
    ocisbx_buf b = OCISBX_BUF_INIT;
    if (ocisbx_buf_append(&b, text, len) || ocisbx_buf_append(&b, "", 0) || !b.data) {
        ocisbx_buf_wipe_free(&b);
        return NULL;
    }
    for (size_t i = 0; i < h->env.n; i++)
        if (h->env.v[i].secret)
            ocisbx_buf_redact(&b, h->env.v[i].value);
    char *out = NULL;
    size_t olen = 0;
    int rc = b.data ? ocisbx_backend_redact(h->b, b.data, b.len, &out, &olen) : OCISBX_ENOMEM;
    ocisbx_buf_wipe_free(&b);
    if (rc)
        return NULL;
    if (!memchr(out, '\0', olen) && ocisbx_utf8_valid(out, olen)) {
        if (out_len)
            *out_len = olen;
        return out; /* the library's string: malloc'd, free() takes it */
    }
    char *clean = call_text_clean(out, olen, out_len);
    ocisbx_free(out);
    return clean;
}

cJSON *call_redacted_string_len(const ocisbx_harness *h, const char *text, size_t len)
{
    char *shown = call_redact(h, text, text ? len : 0, NULL);
    cJSON *s = shown ? cJSON_CreateString(shown) : NULL;
    free(shown);
    return s;
}

cJSON *call_redacted_string(const ocisbx_harness *h, const char *text)
{
    return call_redacted_string_len(h, text, text ? strlen(text) : 0);
}

bool call_add_redacted_len(const ocisbx_harness *h, cJSON *obj, const char *name, const char *text, size_t len)
{
    cJSON *s = call_redacted_string_len(h, text, len);
    if (s && cJSON_AddItemToObject(obj, name, s))
        return true;
    cJSON_Delete(s);
    return false;
}

bool call_add_redacted(const ocisbx_harness *h, cJSON *obj, const char *name, const char *text)
{
    return call_add_redacted_len(h, obj, name, text, text ? strlen(text) : 0);
}

/* ---- what a terminal shows ---- */
/* The length (2 or 3) of the bidi control at p (NUL-terminated): U+061C,
 * U+200E, U+200F, U+202A..U+202E, U+2066..U+2069, which reorder what a
 * terminal shows (a right-to-left override makes "exe.txt" look like
 * "txt.exe"); 0 for anything else. */
static size_t bidi_len(const unsigned char *p)
{
    if (p[0] == 0xd8 && p[1] == 0x9c)
        return 2;
    if (p[0] != 0xe2 || !p[1] || !p[2])
        return 0;
    bool hit = (p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) ||
               (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
    return hit ? 3 : 0;
}

/* The code point of the 2- or 3-byte sequence at p. */
static unsigned code_point(const unsigned char *p, size_t n)
{
    return n == 2 ? ((p[0] & 0x1fu) << 6) | (p[1] & 0x3fu)
                  : ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
}

static char *finish(ocisbx_buf *b, int rc)
{
    if (!rc)
        rc = ocisbx_buf_append(b, "", 0);
    if (rc || !b->data) {
        ocisbx_buf_free(b);
        return NULL;
    }
    return ocisbx_buf_detach(b);
}

char *call_json_controls_escaped(const char *json)
{
    ocisbx_buf b = OCISBX_BUF_INIT;
    const unsigned char *p = (const unsigned char *)(json ? json : "");
    int rc = 0;
    /* C1 controls and bidi controls are only inside strings: \uXXXX there */
    for (size_t n; *p && !rc; p++) {
        if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            rc = ocisbx_buf_appendf(&b, "\\u%04x", p[1]);
            p++;
        } else if ((n = bidi_len(p)) != 0) {
            rc = ocisbx_buf_appendf(&b, "\\u%04x", code_point(p, n));
            p += n - 1;
        } else if (p[0] == 0x7f) {
            rc = ocisbx_buf_appends(&b, "\\u007f");
        } else {
            rc = ocisbx_buf_append(&b, p, 1);
        }
    }
    return finish(&b, rc);
}

char *call_text_controls_escaped(const char *text)
{
    size_t cap = strlen(text ? text : "") * 4 + 1;
    char *shown = malloc(cap);
    if (!shown)
        return NULL;
    ocisbx_shown(text ? text : "", shown, cap); /* C0, DEL, C1, invalid bytes: \xNN */
    /* bidi controls, which it keeps as printable UTF-8, as \xNN too */
    ocisbx_buf b = OCISBX_BUF_INIT;
    int rc = 0;
    for (const unsigned char *p = (const unsigned char *)shown; *p && !rc;) {
        size_t n = bidi_len(p);
        for (size_t k = 0; k < n && !rc; k++)
            rc = ocisbx_buf_appendf(&b, "\\x%02x", p[k]);
        if (!n)
            rc = ocisbx_buf_append(&b, p, 1);
        p += n ? n : 1;
    }
    free(shown);
    return finish(&b, rc);
}

/* ---- evidence fields ---- */
void call_set_hex(char **dst, const char *hex)
{
    free(*dst);
    *dst = hex ? ocisbx_strdup(hex) : NULL;
}

void call_returned(harness_call *c, const char *data, size_t len)
{
    unsigned char md[OCISBX_SHA256_LEN];
    ocisbx_sha256(data, len, md);
    ocisbx_hex(md, sizeof md, c->ret_sha);
    c->ev.returned_bytes = (int64_t)len;
    c->ev.returned_sha256 = c->ret_sha;
}
