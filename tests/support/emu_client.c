#include "emu_client.h"

int emu_client_new(emu_fixture *f, int prefer_ndjson, ocisbx_client **out)
{
    return emu_client_new_limited(f, prefer_ndjson, 0, out);
}

static void count_attempt(const char *method, const char *url, int attempt, int status, const char *rid, void *ud)
{
    (void)method;
    (void)url;
    (void)attempt;
    (void)status;
    (void)rid;
    (*(int *)ud)++;
}

static int client_new(emu_fixture *f, int prefer_ndjson, int64_t max_download, ocisbx_http_attempt_fn fn, void *ud,
                      int max_attempts, ocisbx_client **out);

int emu_client_new_counting(emu_fixture *f, int *attempts, ocisbx_client **out)
{
    return client_new(f, 0, 0, count_attempt, attempts, 0, out);
}

int emu_client_new_observed(emu_fixture *f, ocisbx_http_attempt_fn fn, void *ud, ocisbx_client **out)
{
    return client_new(f, 0, 0, fn, ud, 0, out);
}

int emu_client_new_limited(emu_fixture *f, int prefer_ndjson, int64_t max_download, ocisbx_client **out)
{
    return client_new(f, prefer_ndjson, max_download, NULL, NULL, 0, out);
}

int emu_client_new_attempts(emu_fixture *f, int max_attempts, ocisbx_client **out)
{
    return client_new(f, 0, 0, NULL, NULL, max_attempts, out);
}

static int client_new(emu_fixture *f, int prefer_ndjson, int64_t max_download, ocisbx_http_attempt_fn fn, void *ud,
                      int max_attempts, ocisbx_client **out)
{
    ocisbx_config *cfg = NULL;
    ocisbx_credentials *cr = NULL;
    ocisbx_http_options *h = NULL;
    ocisbx_client_options *o = NULL;
    *out = NULL;
    int rc = ocisbx_config_load(emu_fixture_config_path(f), NULL, &cfg);
    if (!rc)
        rc = ocisbx_credentials_api_key_from_config(cfg, &cr);
    if (!rc)
        rc = ocisbx_http_options_new(&h);
    if (!rc && emu_fixture_ca_path(f))
        rc = ocisbx_http_options_set_ca_bundle(h, emu_fixture_ca_path(f));
    if (!rc && !emu_fixture_ca_path(f))
        rc = ocisbx_http_options_set_allow_plain_http(h, 1);
    if (!rc)
        rc = ocisbx_http_options_set_backoff_ms(h, 50, 200);
    if (!rc && fn)
        rc = ocisbx_http_options_set_attempt_callback(h, fn, ud);
    if (!rc && max_attempts > 0)
        rc = ocisbx_http_options_set_max_attempts(h, max_attempts);
    if (!rc)
        rc = ocisbx_client_options_new(&o);
    if (!rc)
        rc = ocisbx_client_options_set_endpoint(o, emu_fixture_url(f));
    if (!rc)
        rc = ocisbx_client_options_set_http_options(o, h);
    if (!rc)
        rc = ocisbx_client_options_set_credentials(o, cr);
    if (!rc)
        rc = ocisbx_client_options_set_prefer_ndjson(o, prefer_ndjson);
    if (!rc)
        rc = ocisbx_client_options_set_max_download_bytes(o, max_download);
    if (!rc)
        rc = ocisbx_client_new(o, out);
    ocisbx_client_options_free(o);
    ocisbx_http_options_free(h);
    ocisbx_credentials_free(cr);
    ocisbx_config_free(cfg);
    return rc;
}
