/* The thread's last error. One fixed-size record per thread: setting an error
 * never allocates, so out-of-memory can be reported too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/internal.h"

#define MSG_CAP 1024

struct ocisbx_error {
    int code;
    int http_status;
    int attempts;
    char message[MSG_CAP];
    char service_code[128];
    char request_id[128];
    bool has_service_code;
    bool has_request_id;
};

struct ocisbx_error_saved {
    struct ocisbx_error e;
};

static _Thread_local struct ocisbx_error last_error;

const ocisbx_error *ocisbx_error_last(void)
{
    if (last_error.code == OCISBX_OK && last_error.message[0] == '\0')
        memcpy(last_error.message, "no error", sizeof "no error");
    return &last_error;
}

int ocisbx_error_code(const ocisbx_error *e)
{
    return e ? e->code : OCISBX_EINVAL;
}
const char *ocisbx_error_message(const ocisbx_error *e)
{
    return e ? e->message : "no error object";
}
int ocisbx_error_http_status(const ocisbx_error *e)
{
    return e ? e->http_status : 0;
}
int ocisbx_error_attempts(const ocisbx_error *e)
{
    return e ? e->attempts : 0;
}
const char *ocisbx_error_service_code(const ocisbx_error *e)
{
    return e && e->has_service_code ? e->service_code : NULL;
}
const char *ocisbx_error_request_id(const ocisbx_error *e)
{
    return e && e->has_request_id ? e->request_id : NULL;
}

void ocisbx_error_clear(void)
{
    memset(&last_error, 0, sizeof last_error);
    memcpy(last_error.message, "no error", sizeof "no error");
}

/* The message (redacted), and the debug line every error gets. */
OCISBX_PRINTF(1, 0) static int set_message(const char *fmt, va_list ap)
{
    vsnprintf(last_error.message, MSG_CAP, fmt, ap);
    ocisbx_log_redact(last_error.message);
    ocisbx_log(OCISBX_LOG_DEBUG, "error %s: %s", ocisbx_strerror(last_error.code), last_error.message);
    return last_error.code;
}

static void set_field(char *dst, size_t cap, bool *has, const char *value)
{
    snprintf(dst, cap, "%s", value);
    *has = true;
}

int ocisbx_fail(int code, const char *fmt, ...)
{
    ocisbx_error_clear();
    last_error.code = code;
    va_list ap;
    va_start(ap, fmt);
    set_message(fmt, ap);
    va_end(ap);
    return code;
}

int ocisbx_error_set(int code, const char *message)
{
    return ocisbx_fail(code, "%s", message ? message : ocisbx_strerror(code));
}

int ocisbx_fail_http(int code, int http_status, const char *svc_code, const char *request_id, const char *fmt, ...)
{
    ocisbx_error_clear();
    last_error.code = code;
    last_error.http_status = http_status;
    if (svc_code)
        set_field(last_error.service_code, sizeof last_error.service_code, &last_error.has_service_code, svc_code);
    if (request_id)
        set_field(last_error.request_id, sizeof last_error.request_id, &last_error.has_request_id, request_id);
    va_list ap;
    va_start(ap, fmt);
    set_message(fmt, ap);
    va_end(ap);
    return code;
}

int ocisbx_error_wrap(const char *fmt, ...)
{
    char prefix[MSG_CAP];
    char old[MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_error.message, MSG_CAP);
    size_t pn = strlen(prefix);
    memcpy(last_error.message, prefix, pn);
    size_t room = MSG_CAP - 1 - pn;
    size_t on = strnlen(old, room);
    memcpy(last_error.message + pn, old, on);
    last_error.message[pn + on] = '\0';
    ocisbx_log_redact(last_error.message);
    /* Never turn a failure into success when the callee forgot to set the error. */
    if (last_error.code == OCISBX_OK)
        last_error.code = OCISBX_EINVAL;
    return last_error.code;
}

int ocisbx_error_append(const char *fmt, ...)
{
    size_t used = strnlen(last_error.message, MSG_CAP - 1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error.message + used, MSG_CAP - used, fmt, ap);
    va_end(ap);
    ocisbx_log_redact(last_error.message);
    if (last_error.code == OCISBX_OK)
        last_error.code = OCISBX_EINVAL;
    return last_error.code;
}

void ocisbx_error_set_attempts(int attempts)
{
    if (last_error.code != OCISBX_OK && attempts > 0)
        last_error.attempts = attempts;
}

void ocisbx_error_annotate(int http_status, const char *request_id)
{
    if (last_error.code == OCISBX_OK)
        return;
    if (http_status > 0 && last_error.http_status == 0)
        last_error.http_status = http_status;
    if (request_id && *request_id && !last_error.has_request_id)
        set_field(last_error.request_id, sizeof last_error.request_id, &last_error.has_request_id, request_id);
}

int ocisbx_fail_nomem(void)
{
    ocisbx_error_clear();
    last_error.code = OCISBX_ENOMEM;
    memcpy(last_error.message, "out of memory", sizeof "out of memory");
    return OCISBX_ENOMEM;
}

ocisbx_error_saved *ocisbx_error_save(void)
{
    ocisbx_error_saved *s = malloc(sizeof *s);
    if (s)
        s->e = last_error;
    return s;
}

void ocisbx_error_restore(ocisbx_error_saved *s)
{
    if (!s)
        return;
    last_error = s->e;
    free(s);
}

int ocisbx_status_from_http(int status)
{
    switch (status) {
    case 400: return OCISBX_EINVAL;
    case 401: return OCISBX_EAUTH;
    case 403: return OCISBX_EFORBIDDEN;
    case 404: return OCISBX_ENOTFOUND;
    case 409:
    case 412: return OCISBX_ECONFLICT;
    case 413: return OCISBX_ETOOLARGE;
    case 429: return OCISBX_ERATELIMIT;
    case 408:
    case 504: return OCISBX_ETIMEOUT;
    default: return status >= 400 ? OCISBX_ESERVICE : OCISBX_OK;
    }
}

const char *ocisbx_strerror(int code)
{
#define MESSAGE_CASE(name, value, message) \
    case OCISBX_##name: return message;
    switch (code) {
        OCISBX_STATUS_MAP(MESSAGE_CASE)
    default: return "unknown error";
    }
#undef MESSAGE_CASE
}

const char *ocisbx_status_name(int code)
{
#define NAME_CASE(name, value, message) \
    case OCISBX_##name: return "OCISBX_" #name;
    switch (code) {
        OCISBX_STATUS_MAP(NAME_CASE)
    default: return "OCISBX_UNKNOWN";
    }
#undef NAME_CASE
}
