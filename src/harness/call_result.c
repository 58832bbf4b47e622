/* What every step of a call shares (see call.h): its arguments, its error
 * for the model, redaction, evidence fields. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/call.h"
#include "ocisbx/backend.h"

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
        {OCISBX_ETOOLARGE, "too_large"},
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
    if (!strcmp(c->err_code, "backend_error")) {
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

/* ---- secrets ---- */
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
    int rc = b.data ? ocisbx_backend_redact(h->b, b.data, b.len, &out, out_len) : OCISBX_ENOMEM;
    ocisbx_buf_wipe_free(&b);
    return rc ? NULL : out; /* the library's string: malloc'd, free() takes it */
}

cJSON *call_redacted_string(const ocisbx_harness *h, const char *text)
{
    char *shown = call_redact(h, text, text ? strlen(text) : 0, NULL);
    cJSON *s = shown ? cJSON_CreateString(shown) : NULL;
    free(shown);
    return s;
}

bool call_add_redacted(const ocisbx_harness *h, cJSON *obj, const char *name, const char *text)
{
    cJSON *s = call_redacted_string(h, text);
    if (s && cJSON_AddItemToObject(obj, name, s))
        return true;
    cJSON_Delete(s);
    return false;
}

/* ---- what a terminal shows ---- */
char *call_json_controls_escaped(const char *json)
{
    ocisbx_buf b = OCISBX_BUF_INIT;
    const unsigned char *p = (const unsigned char *)(json ? json : "");
    int rc = 0;
    for (; *p && !rc; p++) {
        if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) { /* C1: only inside strings */
            rc = ocisbx_buf_appendf(&b, "\\u%04x", p[1]);
            p++;
        } else if (p[0] == 0x7f) {
            rc = ocisbx_buf_appends(&b, "\\u007f");
        } else {
            rc = ocisbx_buf_append(&b, p, 1);
        }
    }
    if (!rc)
        rc = ocisbx_buf_append(&b, "", 0);
    if (rc || !b.data) {
        ocisbx_buf_free(&b);
        return NULL;
    }
    return ocisbx_buf_detach(&b);
}

char *call_text_controls_escaped(const char *text)
{
    size_t cap = strlen(text ? text : "") * 4 + 1;
    char *out = malloc(cap);
    if (out)
        ocisbx_shown(text ? text : "", out, cap);
    return out;
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
