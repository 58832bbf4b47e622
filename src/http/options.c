/* Transport options: defaults as the OCI SDKs (10 s connect, 60 s read,
 * 8 attempts, backoff 1 s doubling to 30 s, 1 s jitter). */
#include <stdlib.h>
#include <string.h>

#include "http/http_internal.h"

void ocisbx_http_options_defaults(struct ocisbx_http_options *o)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_ms = 10000;
    o->read_timeout_ms = 60000;
    o->stream_idle_timeout_ms = 60000;
    o->deadline_ms = 0;
    o->retries = true;
    o->max_attempts = 8;
    o->backoff_base_ms = 1000;
    o->backoff_cap_ms = 30000;
    o->max_jitter_ms = 1000;
}

int ocisbx_http_options_copy(struct ocisbx_http_options *dst, const struct ocisbx_http_options *src)
{
    *dst = *src;
    dst->ca_bundle = NULL;
    dst->ua_suffix = NULL;
    dst->creds = NULL;
    if ((src->ca_bundle && !(dst->ca_bundle = ocisbx_strdup(src->ca_bundle))) ||
        (src->ua_suffix && !(dst->ua_suffix = ocisbx_strdup(src->ua_suffix)))) {
        ocisbx_http_options_release(dst);
        return ocisbx_fail_nomem();
    }
    if (src->creds)
        dst->creds = ocisbx_credentials_ref(src->creds);
    return 0;
}

void ocisbx_http_options_release(struct ocisbx_http_options *o)
{
    free(o->ca_bundle);
    free(o->ua_suffix);
    ocisbx_credentials_free(o->creds);
    o->ca_bundle = o->ua_suffix = NULL;
    o->creds = NULL;
}

int ocisbx_http_options_new(ocisbx_http_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "http options: out is NULL");
    *out = malloc(sizeof **out);
    if (!*out)
        return ocisbx_fail_nomem();
    ocisbx_http_options_defaults(*out);
    return 0;
}

void ocisbx_http_options_free(ocisbx_http_options *o)
{
    if (!o)
        return;
    ocisbx_http_options_release(o);
    free(o);
}

int ocisbx_http_options_set_credentials(ocisbx_http_options *o, ocisbx_credentials *creds)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    if (creds)
        ocisbx_credentials_ref(creds);
    ocisbx_credentials_free(o->creds);
    o->creds = creds;
    return 0;
}

static int set_ms(ocisbx_http_options *o, int64_t *field, int64_t ms, int64_t min, const char *what)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    if (ms < min)
        return ocisbx_fail(OCISBX_EINVAL, "http options: %s %lld ms is out of range", what, (long long)ms);
    *field = ms;
    return 0;
}

int ocisbx_http_options_set_connect_timeout_ms(ocisbx_http_options *o, int64_t ms)
{
    return set_ms(o, o ? &o->connect_timeout_ms : NULL, ms, 1, "connect timeout");
}

int ocisbx_http_options_set_read_timeout_ms(ocisbx_http_options *o, int64_t ms)
{
    return set_ms(o, o ? &o->read_timeout_ms : NULL, ms, 1, "read timeout");
}

int ocisbx_http_options_set_stream_idle_timeout_ms(ocisbx_http_options *o, int64_t ms)
{
    return set_ms(o, o ? &o->stream_idle_timeout_ms : NULL, ms, 1, "stream idle timeout");
}

int ocisbx_http_options_set_deadline_ms(ocisbx_http_options *o, int64_t ms)
{
    return set_ms(o, o ? &o->deadline_ms : NULL, ms, 0, "deadline");
}

int ocisbx_http_options_set_retries(ocisbx_http_options *o, int enabled)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    o->retries = enabled != 0;
    return 0;
}

int ocisbx_http_options_set_max_attempts(ocisbx_http_options *o, int attempts)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    if (attempts < 1 || attempts > 100)
        return ocisbx_fail(OCISBX_EINVAL, "http options: max attempts %d is not in 1..100", attempts);
    o->max_attempts = attempts;
    return 0;
}

int ocisbx_http_options_set_backoff_ms(ocisbx_http_options *o, int64_t base_ms, int64_t cap_ms)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    if (base_ms < 0 || cap_ms < base_ms)
        return ocisbx_fail(OCISBX_EINVAL, "http options: backoff base %lld ms / cap %lld ms is invalid",
                           (long long)base_ms, (long long)cap_ms);
    o->backoff_base_ms = base_ms;
    o->backoff_cap_ms = cap_ms;
    return 0;
}

int ocisbx_http_options_set_max_jitter_ms(ocisbx_http_options *o, int64_t ms)
{
    return set_ms(o, o ? &o->max_jitter_ms : NULL, ms, 0, "max jitter");
}

static int set_str(ocisbx_http_options *o, char **field, const char *value)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    char *copy = NULL;
    if (value && !(copy = ocisbx_strdup(value)))
        return ocisbx_fail_nomem();
    free(*field);
    *field = copy;
    return 0;
}

int ocisbx_http_options_set_ca_bundle(ocisbx_http_options *o, const char *path)
{
    return set_str(o, o ? &o->ca_bundle : NULL, path);
}

int ocisbx_http_options_set_allow_plain_http(ocisbx_http_options *o, int allow)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    o->allow_plain_http = allow != 0;
    return 0;
}

int ocisbx_http_options_set_ignore_proxy_env(ocisbx_http_options *o, int ignore)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    o->ignore_proxy_env = ignore != 0;
    return 0;
}

int ocisbx_http_options_set_user_agent_suffix(ocisbx_http_options *o, const char *suffix)
{
    if (suffix && strpbrk(suffix, "\r\n"))
        return ocisbx_fail(OCISBX_EINVAL, "http options: user agent suffix contains a line break");
    return set_str(o, o ? &o->ua_suffix : NULL, suffix);
}

int ocisbx_http_options_set_cancel(ocisbx_http_options *o, ocisbx_cancel_fn fn, void *user_data)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    o->cancel = fn;
    o->cancel_ud = fn ? user_data : NULL;
    return 0;
}

int ocisbx_http_options_set_retry_callback(ocisbx_http_options *o, ocisbx_http_retry_fn fn, void *user_data)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    o->retry_fn = fn;
    o->retry_ud = fn ? user_data : NULL;
    return 0;
}

int ocisbx_http_options_set_progress_callback(ocisbx_http_options *o, ocisbx_http_progress_fn fn, void *user_data)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    o->progress_fn = fn;
    o->progress_ud = fn ? user_data : NULL;
    return 0;
}

int ocisbx_http_options_set_attempt_callback(ocisbx_http_options *o, ocisbx_http_attempt_fn fn, void *user_data)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "http options: NULL");
    o->attempt_fn = fn;
    o->attempt_ud = fn ? user_data : NULL;
    return 0;
}
