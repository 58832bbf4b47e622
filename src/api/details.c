/* Request details: builders over the model core, with the client-side
 * checks the spec asks for (lifetime range, no expirationDuration sent). */
#include <string.h>

#include "api/client_internal.h"
#include "ocisbx/api.h"
#include "ocisbx/util.h"

#define CM(x) ((const ocisbx_model *)(const void *)(x))
#define MM(x) ((ocisbx_model *)(void *)(x))

static int check_minutes(int64_t minutes)
{
    /* -1 disables automatic expiration [public]: passed through (refusing a
     * lifetime that never ends is the backend's choice, not the client's) */
    if (minutes == OCISBX_EXPIRES_NEVER)
        return 0;
    if (minutes < 1 || minutes > OCISBX_EXPIRES_IN_MINUTES_MAX)
        return ocisbx_fail(OCISBX_EINVAL,
                           "CreateSandboxDetails.expiresInMinutes: %lld is neither -1 (no expiry) nor within 1..%d "
                           "(48 hours)",
                           (long long)minutes, OCISBX_EXPIRES_IN_MINUTES_MAX);
    return 0;
}

/* Checks a create-sandbox body just before it is sent, and turns the
 * deprecated expirationDuration into expiresInMinutes. */

int ocisbx_create_details_normalize(ocisbx_model *m)
{
    const char *dur = ocisbx_model_str(m, "expirationDuration");
    if (dur) {
        int64_t ms;
        int rc = ocisbx_duration_parse(dur, &ms);
        if (rc)
            return ocisbx_error_wrap("CreateSandboxDetails.expirationDuration: ");
        int64_t minutes = (ms + 59999) / 60000;
        if (!ocisbx_model_get(m, "expiresInMinutes")) {
            rc = check_minutes(minutes);
            if (!rc)
                rc = ocisbx_model_put_int(m, "expiresInMinutes", minutes);
            if (rc)
                return rc;
        }
        ocisbx_model_put_str(m, "expirationDuration", NULL);
    }
    int64_t minutes;
    if (ocisbx_model_int(m, "expiresInMinutes", &minutes))
        return check_minutes(minutes);
    return 0;
}

/* ---- CreateSandboxDetails ---- */
int ocisbx_create_sandbox_details_new(ocisbx_create_sandbox_details **out)
{
    ocisbx_model *m = NULL;
    int rc = ocisbx_model_new_empty(&ocisbx_md_create_sandbox_details, &m);
    *out = (ocisbx_create_sandbox_details *)(void *)m;
    return rc;
}

int ocisbx_create_sandbox_details_from_json(const char *json, size_t len, ocisbx_create_sandbox_details **out)
{
    *out = NULL;
    ocisbx_model *m = NULL;
    int rc = ocisbx_model_parse(&ocisbx_md_create_sandbox_details, json, len, &m);
    if (!rc)
        rc = ocisbx_create_details_normalize(m);
    if (rc) {
        ocisbx_model_free(m);
        return rc;
    }
    *out = (ocisbx_create_sandbox_details *)(void *)m;
    return 0;
}

int ocisbx_create_sandbox_details_to_json(const ocisbx_create_sandbox_details *d, char **out)
{
    return ocisbx_model_to_json(CM(d), out);
}
void ocisbx_create_sandbox_details_free(ocisbx_create_sandbox_details *d)
{
    ocisbx_model_free(MM(d));
}

#define CSD_STR(fn, field)                                  \
    int fn(ocisbx_create_sandbox_details *d, const char *v) \
    {                                                       \
        return ocisbx_model_put_str(MM(d), field, v);       \
    }
CSD_STR(ocisbx_create_sandbox_details_set_display_name, "displayName")
CSD_STR(ocisbx_create_sandbox_details_set_runtime, "runtime")
CSD_STR(ocisbx_create_sandbox_details_set_warmpool_name, "warmpoolName")
CSD_STR(ocisbx_create_sandbox_details_set_published_port_auth_mode, "publishedPortAuthMode")
CSD_STR(ocisbx_create_sandbox_details_set_credential_profile_label, "credentialProfileLabel")

int ocisbx_create_sandbox_details_set_shape(ocisbx_create_sandbox_details *d, const char *v)
{
    if (v && strcmp(v, "SMALL") != 0 && strcmp(v, "MEDIUM") != 0 && strcmp(v, "LARGE") != 0)
        return ocisbx_fail(OCISBX_EINVAL, "CreateSandboxDetails.shape: '%s' is not SMALL, MEDIUM or LARGE", v);
    return ocisbx_model_put_str(MM(d), "shape", v);
}

int ocisbx_create_sandbox_details_set_expires_in_minutes(ocisbx_create_sandbox_details *d, int64_t minutes)
{
    int rc = check_minutes(minutes);
    return rc ? rc : ocisbx_model_put_int(MM(d), "expiresInMinutes", minutes);
}

int ocisbx_create_sandbox_details_add_env(ocisbx_create_sandbox_details *d, const char *name, const char *value)
{
    return ocisbx_model_append_env(MM(d), "environmentVariables", name, value);
}

int ocisbx_create_sandbox_details_add_publish_port(ocisbx_create_sandbox_details *d, const char *port)
{
    return ocisbx_model_append_str(MM(d), "publishPorts", port);
}

int ocisbx_create_sandbox_details_set_source_snapshot(ocisbx_create_sandbox_details *d, const char *snapshot_id)
{
    ocisbx_model *m = MM(d);
    cJSON_DeleteItemFromObjectCaseSensitive(m->json, "source");
    if (!snapshot_id)
        return 0;
    cJSON *src = cJSON_AddObjectToObject(m->json, "source");
    if (!src || !cJSON_AddStringToObject(src, "sourceType", "SNAPSHOT") ||
        !cJSON_AddStringToObject(src, "snapshotId", snapshot_id))
        return ocisbx_fail_nomem();
    return 0;
}

/* ---- RunSandboxCommandDetails ---- */
static int check_timeout(const char *iso)
{
    int64_t ms;
    if (ocisbx_duration_parse(iso, &ms))
        return ocisbx_error_wrap("RunSandboxCommandDetails.timeout: ");
    return 0;
}

static int check_cwd(const char *cwd)
{
    if (cwd && cwd[0] != '/')
        return ocisbx_fail(OCISBX_EINVAL, "RunSandboxCommandDetails.cwd: '%s' is not an absolute path", cwd);
    return 0;
}

int ocisbx_run_command_details_new(const char *command, ocisbx_run_command_details **out)
{
    *out = NULL;
    if (!command || !command[0])
        return ocisbx_fail(OCISBX_EINVAL, "RunSandboxCommandDetails.command: required and non-empty");
    ocisbx_model *m = NULL;
    int rc = ocisbx_model_new_empty(&ocisbx_md_run_command_details, &m);
    if (!rc)
        rc = ocisbx_model_put_str(m, "command", command);
    if (rc) {
        ocisbx_model_free(m);
        return rc;
    }
    *out = (ocisbx_run_command_details *)(void *)m;
    return 0;
}

int ocisbx_run_command_details_from_json(const char *json, size_t len, ocisbx_run_command_details **out)
{
    *out = NULL;
    ocisbx_model *m = NULL;
    int rc = ocisbx_model_parse(&ocisbx_md_run_command_details, json, len, &m);
    if (!rc && ocisbx_model_str(m, "timeout"))
        rc = check_timeout(ocisbx_model_str(m, "timeout"));
    if (!rc)
        rc = check_cwd(ocisbx_model_str(m, "cwd"));
    if (rc) {
        ocisbx_model_free(m);
        return rc;
    }
    *out = (ocisbx_run_command_details *)(void *)m;
    return 0;
}

int ocisbx_run_command_details_to_json(const ocisbx_run_command_details *d, char **out)
{
    return ocisbx_model_to_json(CM(d), out);
}
void ocisbx_run_command_details_free(ocisbx_run_command_details *d)
{
    ocisbx_model_free(MM(d));
}

int ocisbx_run_command_details_add_arg(ocisbx_run_command_details *d, const char *arg)
{
    return ocisbx_model_append_str(MM(d), "args", arg);
}

int ocisbx_run_command_details_set_cwd(ocisbx_run_command_details *d, const char *cwd)
{
    int rc = check_cwd(cwd);
    return rc ? rc : ocisbx_model_put_str(MM(d), "cwd", cwd);
}

int ocisbx_run_command_details_add_env(ocisbx_run_command_details *d, const char *name, const char *value)
{
    return ocisbx_model_append_env(MM(d), "environmentVariables", name, value);
}

int ocisbx_run_command_details_set_timeout(ocisbx_run_command_details *d, const char *iso8601)
{
    if (iso8601) {
        int rc = check_timeout(iso8601);
        if (rc)
            return rc;
    }
    return ocisbx_model_put_str(MM(d), "timeout", iso8601);
}
