/* The public, typed face of the models: each public model type is an
 * ocisbx_model underneath, with getters that read its fields by wire name. */
#include <string.h>

#include "api/model_internal.h"
#include "ocisbx/api.h"

#define CM(x) ((const ocisbx_model *)(const void *)(x))
#define MM(x) ((ocisbx_model *)(void *)(x))

static int get_int(const ocisbx_model *m, const char *field, int *out)
{
    int64_t v;
    if (!ocisbx_model_int(m, field, &v) || v < -2147483647 - 1 || v > 2147483647)
        return 0;
    if (out)
        *out = (int)v;
    return 1;
}

static int get_i64(const ocisbx_model *m, const char *field, int64_t *out)
{
    return ocisbx_model_int(m, field, out) ? 1 : 0;
}

#define MODEL_BASICS(prefix, type, def)                                           \
    int prefix##_from_json(const char *json, size_t len, type **out)              \
    {                                                                             \
        if (!out)                                                                 \
            return ocisbx_fail(OCISBX_EINVAL, #prefix "_from_json: out is NULL"); \
        ocisbx_model *m = NULL;                                                   \
        int rc = ocisbx_model_parse(&def, json, len, &m);                         \
        *out = (type *)(void *)m;                                                 \
        return rc;                                                                \
    }                                                                             \
    int prefix##_to_json(const type *x, char **out)                               \
    {                                                                             \
        return ocisbx_model_to_json(CM(x), out);                                  \
    }                                                                             \
    void prefix##_free(type *x)                                                   \
    {                                                                             \
        ocisbx_model_free(MM(x));                                                 \
    }

#define STR(fn, type, field)                   \
    const char *fn(const type *x)              \
    {                                          \
        return ocisbx_model_str(CM(x), field); \
    }

/* ---- Sandbox ---- */
MODEL_BASICS(ocisbx_sandbox, ocisbx_sandbox, ocisbx_md_sandbox)
STR(ocisbx_sandbox_id, ocisbx_sandbox, "id")
STR(ocisbx_sandbox_project_id, ocisbx_sandbox, "projectId")
STR(ocisbx_sandbox_display_name, ocisbx_sandbox, "displayName")
STR(ocisbx_sandbox_runtime, ocisbx_sandbox, "runtime")
STR(ocisbx_sandbox_shape, ocisbx_sandbox, "shape")
STR(ocisbx_sandbox_lifecycle_state, ocisbx_sandbox, "lifecycleState")
STR(ocisbx_sandbox_lifecycle_details, ocisbx_sandbox, "lifecycleDetails")
STR(ocisbx_sandbox_warmpool_name, ocisbx_sandbox, "warmpoolName")
STR(ocisbx_sandbox_published_port_auth_mode, ocisbx_sandbox, "publishedPortAuthMode")
STR(ocisbx_sandbox_time_created, ocisbx_sandbox, "timeCreated")
STR(ocisbx_sandbox_time_updated, ocisbx_sandbox, "timeUpdated")
STR(ocisbx_sandbox_time_expires, ocisbx_sandbox, "timeExpires")
STR(ocisbx_sandbox_time_stopped, ocisbx_sandbox, "timeStopped")
int ocisbx_sandbox_has_expires_in_minutes(const ocisbx_sandbox *s, int64_t *out)
{
    return get_i64(CM(s), "expiresInMinutes", out);
}
size_t ocisbx_sandbox_published_port_count(const ocisbx_sandbox *s)
{
    const cJSON *a = ocisbx_model_get(CM(s), "publishedPorts");
    return cJSON_IsArray(a) ? (size_t)cJSON_GetArraySize(a) : 0;
}
static const cJSON *port_at(const ocisbx_sandbox *s, size_t i)
{
    const cJSON *a = ocisbx_model_get(CM(s), "publishedPorts");
    if (!cJSON_IsArray(a) || i >= (size_t)cJSON_GetArraySize(a))
        return NULL;
    return cJSON_GetArrayItem(a, (int)i);
}
int64_t ocisbx_sandbox_published_port(const ocisbx_sandbox *s, size_t i)
{
    int64_t v = 0;
    if (!ocisbx_json_int64(cJSON_GetObjectItemCaseSensitive(port_at(s, i), "port"), &v))
        return 0;
    return v;
}
const char *ocisbx_sandbox_published_port_url(const ocisbx_sandbox *s, size_t i)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(port_at(s, i), "url");
    return cJSON_IsString(u) ? u->valuestring : NULL;
}
const char *ocisbx_sandbox_etag(const ocisbx_sandbox *s)
{
    return s ? CM(s)->etag : NULL;
}

/* ---- SandboxCommand ---- */
MODEL_BASICS(ocisbx_command, ocisbx_command, ocisbx_md_command)
STR(ocisbx_command_id, ocisbx_command, "id")
STR(ocisbx_command_sandbox_id, ocisbx_command, "sandboxId")
STR(ocisbx_command_command, ocisbx_command, "command")
STR(ocisbx_command_cwd, ocisbx_command, "cwd")
STR(ocisbx_command_time_created, ocisbx_command, "timeCreated")
STR(ocisbx_command_time_updated, ocisbx_command, "timeUpdated")
STR(ocisbx_command_time_started, ocisbx_command, "timeStarted")
STR(ocisbx_command_time_finished, ocisbx_command, "timeFinished")
size_t ocisbx_command_arg_count(const ocisbx_command *c)
{
    const cJSON *a = ocisbx_model_get(CM(c), "args");
    return cJSON_IsArray(a) ? (size_t)cJSON_GetArraySize(a) : 0;
}
const char *ocisbx_command_arg(const ocisbx_command *c, size_t i)
{
    const cJSON *a = ocisbx_model_get(CM(c), "args");
    if (!cJSON_IsArray(a) || i >= (size_t)cJSON_GetArraySize(a))
        return NULL;
    const cJSON *v = cJSON_GetArrayItem(a, (int)i);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}
int ocisbx_command_has_exit_code(const ocisbx_command *c, int *out)
{
    if (get_int(CM(c), "exitCode", out))
        return 1;
    const cJSON *o = ocisbx_model_get(CM(c), "output");
    const cJSON *e = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "exitCode") : NULL;
    int64_t v;
    if (!ocisbx_json_int64(e, &v) || v < -2147483647 - 1 || v > 2147483647)
        return 0;
    if (out)
        *out = (int)v;
    return 1;
}
static const char *output_part(const ocisbx_command *c, const char *part, size_t *len)
{
    const cJSON *o = ocisbx_model_get(CM(c), "output");
    if (cJSON_IsString(o)) {
        if (strcmp(part, "stdout") == 0)
            return ocisbx_model_bytes(CM(c), o, len);
        if (len)
            *len = 0;
        return NULL;
    }
    const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, part) : NULL;
    return ocisbx_model_bytes(CM(c), v, len);
}
const char *ocisbx_command_stdout(const ocisbx_command *c)
{
    return output_part(c, "stdout", NULL);
}
const char *ocisbx_command_stderr(const ocisbx_command *c)
{
    return output_part(c, "stderr", NULL);
}
size_t ocisbx_command_stdout_len(const ocisbx_command *c)
{
    size_t n = 0;
    output_part(c, "stdout", &n);
    return n;
}
size_t ocisbx_command_stderr_len(const ocisbx_command *c)
{
    size_t n = 0;
    output_part(c, "stderr", &n);
    return n;
}

/* ---- SandboxCommandOutput ---- */
MODEL_BASICS(ocisbx_command_output, ocisbx_command_output, ocisbx_md_command_output)
STR(ocisbx_command_output_command_id, ocisbx_command_output, "commandId")
STR(ocisbx_command_output_stdout, ocisbx_command_output, "stdout")
STR(ocisbx_command_output_stderr, ocisbx_command_output, "stderr")
size_t ocisbx_command_output_stdout_len(const ocisbx_command_output *o)
{
    size_t n = 0;
    ocisbx_model_bytes(CM(o), ocisbx_model_get(CM(o), "stdout"), &n);
    return n;
}
size_t ocisbx_command_output_stderr_len(const ocisbx_command_output *o)
{
    size_t n = 0;
    ocisbx_model_bytes(CM(o), ocisbx_model_get(CM(o), "stderr"), &n);
    return n;
}
int ocisbx_command_output_has_exit_code(const ocisbx_command_output *o, int *out)
{
    return get_int(CM(o), "exitCode", out);
}
int ocisbx_command_output_has_last_seq(const ocisbx_command_output *o, int64_t *out)
{
    return get_i64(CM(o), "lastSeq", out);
}

/* ---- SandboxCommandEvent ---- */
MODEL_BASICS(ocisbx_command_event, ocisbx_command_event, ocisbx_md_command_event)
STR(ocisbx_command_event_command_id, ocisbx_command_event, "commandId")
STR(ocisbx_command_event_timestamp, ocisbx_command_event, "timestamp")
STR(ocisbx_command_event_type, ocisbx_command_event, "event")
int64_t ocisbx_command_event_seq(const ocisbx_command_event *e)
{
    int64_t v = 0;
    ocisbx_model_int(CM(e), "seq", &v);
    return v;
}
int ocisbx_command_event_kind(const ocisbx_command_event *e)
{
    const char *t = ocisbx_model_str(CM(e), "event");
    if (!t)
        return OCISBX_EVENT_OTHER;
    if (strcmp(t, "STARTED") == 0)
        return OCISBX_EVENT_STARTED;
    if (strcmp(t, "STDOUT") == 0)
        return OCISBX_EVENT_STDOUT;
    if (strcmp(t, "STDERR") == 0)
        return OCISBX_EVENT_STDERR;
    if (strcmp(t, "FINISHED") == 0)
        return OCISBX_EVENT_FINISHED;
    return OCISBX_EVENT_OTHER;
}
const char *ocisbx_command_event_data(const ocisbx_command_event *e, size_t *len)
{
    size_t n = 0;
    const char *d = ocisbx_model_bytes(CM(e), ocisbx_model_get(CM(e), "data"), &n);
    if (!d)
        d = "", n = 0;
    if (len)
        *len = n; /* NUL bytes included */
    return d;
}
int ocisbx_command_event_has_exit_code(const ocisbx_command_event *e, int *out)
{
    return get_int(CM(e), "exitCode", out);
}

/* ---- SandboxFile ---- */
MODEL_BASICS(ocisbx_sandbox_file, ocisbx_sandbox_file, ocisbx_md_file)
STR(ocisbx_sandbox_file_sandbox_id, ocisbx_sandbox_file, "sandboxId")
STR(ocisbx_sandbox_file_path, ocisbx_sandbox_file, "filePath")
STR(ocisbx_sandbox_file_content_sha256, ocisbx_sandbox_file, "contentSha256")

/* ---- SandboxSnapshot ---- */
MODEL_BASICS(ocisbx_snapshot, ocisbx_snapshot, ocisbx_md_snapshot)
STR(ocisbx_snapshot_id, ocisbx_snapshot, "id")
STR(ocisbx_snapshot_sandbox_id, ocisbx_snapshot, "sandboxId")
STR(ocisbx_snapshot_display_name, ocisbx_snapshot, "displayName")
STR(ocisbx_snapshot_runtime, ocisbx_snapshot, "runtime")
STR(ocisbx_snapshot_lifecycle_state, ocisbx_snapshot, "lifecycleState")
STR(ocisbx_snapshot_project_id, ocisbx_snapshot, "projectId")
STR(ocisbx_snapshot_expiration_duration, ocisbx_snapshot, "expirationDuration")
STR(ocisbx_snapshot_time_updated, ocisbx_snapshot, "timeUpdated")
const char *ocisbx_snapshot_etag(const ocisbx_snapshot *s)
{
    return s ? CM(s)->etag : NULL;
}
STR(ocisbx_snapshot_time_created, ocisbx_snapshot, "timeCreated")
STR(ocisbx_snapshot_time_expires, ocisbx_snapshot, "timeExpires")
int ocisbx_snapshot_has_size_bytes(const ocisbx_snapshot *s, int64_t *out)
{
    return get_i64(CM(s), "sizeBytes", out);
}

/* ---- collections ---- */
#define COLLECTION(prefix, type, item_type)                       \
    size_t prefix##_count(const type *l)                          \
    {                                                             \
        return l ? CM(l)->nitems : 0;                             \
    }                                                             \
    const item_type *prefix##_item(const type *l, size_t i)       \
    {                                                             \
        if (!l || i >= CM(l)->nitems)                             \
            return NULL;                                          \
        return (const item_type *)(const void *)&CM(l)->items[i]; \
    }                                                             \
    const char *prefix##_next_page(const type *l)                 \
    {                                                             \
        return l ? CM(l)->next_page : NULL;                       \
    }                                                             \
    int prefix##_to_json(const type *l, char **out)               \
    {                                                             \
        return ocisbx_model_to_json(CM(l), out);                  \
    }                                                             \
    void prefix##_free(type *l)                                   \
    {                                                             \
        ocisbx_model_free(MM(l));                                 \
    }

COLLECTION(ocisbx_sandbox_collection, ocisbx_sandbox_collection, ocisbx_sandbox)
COLLECTION(ocisbx_command_collection, ocisbx_command_collection, ocisbx_command)
COLLECTION(ocisbx_snapshot_collection, ocisbx_snapshot_collection, ocisbx_snapshot)
