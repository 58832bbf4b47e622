/* THE model table: every request and response model of the sandbox service
 * with its JSON field names and types. Field names are [public] (the SDK
 * references); the types of a few fields the references leave open are
 * [decided] and marked. To follow the real service, change this file only.
 * Unknown fields in answers are kept and ignored; known ones must have these
 * types. */
#include <string.h>

#include "api/model_internal.h"

#define S(n)                            \
    {                                   \
        n, OCISBX_F_STRING, false, NULL \
    }
#define SR(n)                          \
    {                                  \
        n, OCISBX_F_STRING, true, NULL \
    }
#define I(n)                         \
    {                                \
        n, OCISBX_F_INT, false, NULL \
    }
#define IR(n)                       \
    {                               \
        n, OCISBX_F_INT, true, NULL \
    }
#define B(n)                          \
    {                                 \
        n, OCISBX_F_BOOL, false, NULL \
    }
#define T(n)                          \
    {                                 \
        n, OCISBX_F_TIME, false, NULL \
    } /* an RFC 3339 time string */
#define SA(n)                                 \
    {                                         \
        n, OCISBX_F_STRING_ARRAY, false, NULL \
    }
#define O(n, d)                       \
    {                                 \
        n, OCISBX_F_OBJECT, false, &d \
    }
#define OA(n, d)                            \
    {                                       \
        n, OCISBX_F_OBJECT_ARRAY, false, &d \
    }
#define ENV(n)                       \
    {                                \
        n, OCISBX_F_ENV, false, NULL \
    }
#define DEF(var, name, fields, items) \
    const ocisbx_model_def var = {name, fields, sizeof fields / sizeof fields[0], items}

static const ocisbx_field_def f_published_port[] = {I("port"), S("url")};
static DEF(md_published_port, "PublishedPort", f_published_port, NULL);

static const ocisbx_field_def f_source[] = {S("sourceType"), S("snapshotId")};
static DEF(md_source, "SandboxSource", f_source, NULL);

#define SANDBOX_FIELDS                                                                                             \
    SR("id"), S("projectId"), S("compartmentId"), S("displayName"), S("runtime"), S("shape"), S("lifecycleState"), \
        S("lifecycleDetails"), OA("publishedPorts", md_published_port), S("publishedPortAuthMode"),                \
        S("warmpoolName"), I("expiresInMinutes"), T("timeCreated"), T("timeUpdated"), T("timeExpires"),            \
        T("timeStopped"), O("source", md_source)

static const ocisbx_field_def f_sandbox[] = {SANDBOX_FIELDS};
DEF(ocisbx_md_sandbox, "Sandbox", f_sandbox, NULL);
static const ocisbx_field_def f_sandbox_summary[] = {SANDBOX_FIELDS};
DEF(ocisbx_md_sandbox_summary, "SandboxSummary", f_sandbox_summary, NULL);
static const ocisbx_field_def f_sandbox_collection[] = {OA("items", ocisbx_md_sandbox_summary)};
DEF(ocisbx_md_sandbox_collection, "SandboxCollection", f_sandbox_collection, &ocisbx_md_sandbox_summary);

static const ocisbx_field_def f_output[] = {S("commandId"), I("exitCode"), S("stdout"), S("stderr"), I("lastSeq")};
DEF(ocisbx_md_command_output, "SandboxCommandOutput", f_output, NULL);

/* SandboxCommand [public: the full attribute list]. It has no lifecycle
 * state: ocisbx_command_state derives one from timeStarted, timeFinished
 * and exitCode. Also the answer of RunSandboxCommand, which is a
 * SandboxCommandIdentifier {id} [public] (only id is required). */
static const ocisbx_field_def f_command[] = {
    SR("id"),
    S("sandboxId"),
    S("command"),
    SA("args"),
    S("cwd"),
    ENV("environmentVariables"),
    I("exitCode"),
    /* [decided] output: the SandboxCommandOutput object, or its stdout as a string */
    {"output", OCISBX_F_OUTPUT, false, &ocisbx_md_command_output},
    T("timeCreated"),
    T("timeStarted"),
    T("timeFinished"),
    T("timeUpdated")};
DEF(ocisbx_md_command, "SandboxCommand", f_command, NULL);
/* SandboxCommandSummary: no environmentVariables, no output */
static const ocisbx_field_def f_command_summary[] = {SR("id"),         S("sandboxId"),   S("command"),
                                                     SA("args"),       S("cwd"),         I("exitCode"),
                                                     T("timeCreated"), T("timeStarted"), T("timeFinished"),
                                                     T("timeUpdated")};
DEF(ocisbx_md_command_summary, "SandboxCommandSummary", f_command_summary, NULL);
static const ocisbx_field_def f_command_collection[] = {OA("items", ocisbx_md_command_summary)};
DEF(ocisbx_md_command_collection, "SandboxCommandCollection", f_command_collection, &ocisbx_md_command_summary);

static const ocisbx_field_def f_event[] = {
    S("commandId"), IR("seq"), T("timestamp"), {"event", OCISBX_F_STRING, true, NULL}, S("data"), I("exitCode")};
DEF(ocisbx_md_command_event, "SandboxCommandEvent", f_event, NULL);

static const ocisbx_field_def f_file[] = {S("sandboxId"), S("filePath"), S("contentSha256")};
DEF(ocisbx_md_file, "SandboxFile", f_file, NULL);

#define SNAPSHOT_FIELDS                                                                                            \
    SR("id"), S("sandboxId"), S("projectId"), S("displayName"), I("sizeBytes"), S("runtime"), S("lifecycleState"), \
        S("expirationDuration"), T("timeExpires"), T("timeCreated"), T("timeUpdated")
static const ocisbx_field_def f_snapshot[] = {SNAPSHOT_FIELDS};
DEF(ocisbx_md_snapshot, "SandboxSnapshot", f_snapshot, NULL);
/* [decided] the summary's fields: the references name the model, not its fields */
static const ocisbx_field_def f_snapshot_summary[] = {SNAPSHOT_FIELDS};
DEF(ocisbx_md_snapshot_summary, "SandboxSnapshotSummary", f_snapshot_summary, NULL);
static const ocisbx_field_def f_snapshot_collection[] = {OA("items", ocisbx_md_snapshot_summary)};
DEF(ocisbx_md_snapshot_collection, "SandboxSnapshotCollection", f_snapshot_collection, &ocisbx_md_snapshot_summary);

/* ---- request details ---- */
static const ocisbx_field_def f_create_sandbox[] = {
    S("displayName"),
    S("runtime"),
    S("shape"),
    I("expiresInMinutes"),
    S("expirationDuration"), /* deprecated: accepted from JSON, converted, never sent */
    {"environmentVariables", OCISBX_F_ENV, false, NULL},
    S("warmpoolName"),
    SA("publishPorts"),
    S("publishedPortAuthMode"),
    S("credentialProfileLabel"),
    O("source", md_source)};
DEF(ocisbx_md_create_sandbox_details, "CreateSandboxDetails", f_create_sandbox, NULL);

static const ocisbx_field_def f_update_sandbox[] = {S("displayName")};
DEF(ocisbx_md_update_sandbox_details, "UpdateSandboxDetails", f_update_sandbox, NULL);

static const ocisbx_field_def f_run_command[] = {SR("command"), SA("args"), S("cwd"), ENV("environmentVariables"),
                                                 S("timeout")};
DEF(ocisbx_md_run_command_details, "RunSandboxCommandDetails", f_run_command, NULL);

static const ocisbx_field_def f_extend[] = {SR("additionalDuration")};
DEF(ocisbx_md_extend_details, "ExtendSandboxDetails", f_extend, NULL);

static const ocisbx_field_def f_stop[] = {B("isForce")};
DEF(ocisbx_md_stop_details, "StopSandboxDetails", f_stop, NULL);

/* resume, suspend and cancel send "{}" */
const ocisbx_model_def ocisbx_md_empty_details = {"EmptyDetails", NULL, 0, NULL};

/* {sandboxId, expirationDuration} and nothing else [public] */
static const ocisbx_field_def f_create_snapshot[] = {SR("sandboxId"), S("expirationDuration")};
DEF(ocisbx_md_create_snapshot_details, "CreateSandboxSnapshotDetails", f_create_snapshot, NULL);

static const ocisbx_field_def f_error[] = {S("code"), S("message")};
DEF(ocisbx_md_error, "ErrorResponse", f_error, NULL);

const ocisbx_model_def *const ocisbx_model_defs[] = {&ocisbx_md_sandbox,
                                                     &ocisbx_md_sandbox_summary,
                                                     &ocisbx_md_sandbox_collection,
                                                     &ocisbx_md_command,
                                                     &ocisbx_md_command_summary,
                                                     &ocisbx_md_command_collection,
                                                     &ocisbx_md_command_output,
                                                     &ocisbx_md_command_event,
                                                     &ocisbx_md_file,
                                                     &ocisbx_md_snapshot,
                                                     &ocisbx_md_snapshot_summary,
                                                     &ocisbx_md_snapshot_collection,
                                                     &ocisbx_md_create_sandbox_details,
                                                     &ocisbx_md_update_sandbox_details,
                                                     &ocisbx_md_run_command_details,
                                                     &ocisbx_md_extend_details,
                                                     &ocisbx_md_stop_details,
                                                     &ocisbx_md_empty_details,
                                                     &ocisbx_md_create_snapshot_details,
                                                     &ocisbx_md_error};
const size_t ocisbx_model_defs_count = sizeof ocisbx_model_defs / sizeof ocisbx_model_defs[0];

const ocisbx_model_def *ocisbx_model_def_find(const char *name)
{
    for (size_t i = 0; name && i < ocisbx_model_defs_count; i++)
        if (strcmp(ocisbx_model_defs[i]->name, name) == 0)
            return ocisbx_model_defs[i];
    return NULL;
}
