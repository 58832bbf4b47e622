/* THE route table: every generative_ai_sandbox operation's method, path
 * template, retry class, query parameters and models. The paths are
 * [decided] (the service's REST reference is not public, see
 * docs/wire.md); to follow the real service, correct them here: nothing
 * else in the library spells a path. The API version and the endpoint are
 * client options. */
#include <string.h>

#include "api/routes.h"
#include "ocisbx/api.h"

#define TOKEN OCISBX_HTTP_RETRY_TOKEN
#define SAFE OCISBX_HTTP_RETRY_SAFE
#define LIST_Q "limit,page"

/* One row per operation, in any order: rows are found by name or by op,
 * never by position (tests/unit/test_api_routes.c checks that every op has
 * exactly one row). */
static const ocisbx_route routes[] = {
    {OCISBX_OP_CREATE_SANDBOX, "CreateSandbox", "POST", "/sandboxes", TOKEN, "projectId", "projectId",
     &ocisbx_md_create_sandbox_details, &ocisbx_md_sandbox, OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_GET_SANDBOX, "GetSandbox", "GET", "/sandboxes/{sandboxId}", SAFE, NULL, NULL, NULL, &ocisbx_md_sandbox,
     OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_LIST_SANDBOXES, "ListSandboxes", "GET", "/sandboxes", SAFE,
     "projectId,compartmentId,sandboxId,displayName,lifecycleState,sortBy,sortOrder," LIST_Q, NULL, NULL,
     &ocisbx_md_sandbox_collection, OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_UPDATE_SANDBOX, "UpdateSandbox", "PUT", "/sandboxes/{sandboxId}", SAFE, NULL, NULL,
     &ocisbx_md_update_sandbox_details, &ocisbx_md_sandbox, OCISBX_ROUTE_JSON, true},
    {OCISBX_OP_DELETE_SANDBOX, "DeleteSandbox", "DELETE", "/sandboxes/{sandboxId}", SAFE, NULL, NULL, NULL, NULL,
     OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_STOP_SANDBOX, "StopSandbox", "POST", "/sandboxes/{sandboxId}/actions/stop", TOKEN, NULL, NULL,
     &ocisbx_md_stop_details, NULL, OCISBX_ROUTE_JSON, true},
    {OCISBX_OP_EXTEND_SANDBOX, "ExtendSandbox", "POST", "/sandboxes/{sandboxId}/actions/extend", TOKEN, NULL, NULL,
     &ocisbx_md_extend_details, &ocisbx_md_sandbox, OCISBX_ROUTE_JSON, true},
    {OCISBX_OP_SUSPEND_SANDBOX, "SuspendSandbox", "POST", "/sandboxes/{sandboxId}/actions/suspend", TOKEN, NULL, NULL,
     &ocisbx_md_empty_details, NULL, OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_RESUME_SANDBOX, "ResumeSandbox", "POST", "/sandboxes/{sandboxId}/actions/resume", TOKEN, NULL, NULL,
     &ocisbx_md_empty_details, NULL, OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_RUN_COMMAND, "RunSandboxCommand", "POST", "/sandboxes/{sandboxId}/commands", TOKEN, NULL, NULL,
     &ocisbx_md_run_command_details, &ocisbx_md_command, OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_RUN_COMMAND_AND_WAIT, "RunSandboxCommandAndWait", "POST",
     "/sandboxes/{sandboxId}/commands/actions/runAndWait", TOKEN, NULL, NULL, &ocisbx_md_run_command_details,
     &ocisbx_md_command, OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_RUN_COMMAND_AND_STREAM, "RunSandboxCommandAndStream", "POST",
     "/sandboxes/{sandboxId}/commands/actions/runAndStream", TOKEN, NULL, NULL, &ocisbx_md_run_command_details,
     &ocisbx_md_command_event, OCISBX_ROUTE_STREAM, false},
    {OCISBX_OP_LIST_COMMANDS, "ListSandboxCommands", "GET", "/sandboxes/{sandboxId}/commands", SAFE,
     "commandId,sortBy,sortOrder," LIST_Q, NULL, NULL, &ocisbx_md_command_collection, OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_GET_COMMAND, "GetSandboxCommand", "GET", "/sandboxes/{sandboxId}/commands/{commandId}", SAFE, NULL,
     NULL, NULL, &ocisbx_md_command, OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_GET_COMMAND_OUTPUT, "GetSandboxCommandOutput", "GET",
     "/sandboxes/{sandboxId}/commands/{commandId}/output", SAFE, "fromSeq", NULL, NULL, &ocisbx_md_command_output,
     OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_STREAM_COMMAND_EVENTS, "StreamSandboxCommandEvents", "GET",
     "/sandboxes/{sandboxId}/commands/{commandId}/events", SAFE, "fromSeq,untilSeq", NULL, NULL,
     &ocisbx_md_command_event, OCISBX_ROUTE_STREAM, false},
    {OCISBX_OP_CANCEL_COMMAND, "CancelSandboxCommand", "POST",
     "/sandboxes/{sandboxId}/commands/{commandId}/actions/cancel", TOKEN, NULL, NULL, &ocisbx_md_empty_details, NULL,
     OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_WRITE_FILE, "WriteSandboxFile", "PUT", "/sandboxes/{sandboxId}/files", TOKEN, "filePath", "filePath",
     NULL, &ocisbx_md_file, OCISBX_ROUTE_BYTES_IN, false},
    {OCISBX_OP_READ_FILE, "ReadSandboxFile", "GET", "/sandboxes/{sandboxId}/files", SAFE, "filePath", "filePath",
     NULL, NULL, OCISBX_ROUTE_BYTES_OUT, false},
    {OCISBX_OP_CREATE_SNAPSHOT, "CreateSandboxSnapshot", "POST", "/sandboxSnapshots", TOKEN, NULL, NULL,
     &ocisbx_md_create_snapshot_details, &ocisbx_md_snapshot, OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_GET_SNAPSHOT, "GetSandboxSnapshot", "GET", "/sandboxSnapshots/{snapshotId}", SAFE, NULL, NULL, NULL,
     &ocisbx_md_snapshot, OCISBX_ROUTE_JSON, false},
    {OCISBX_OP_DELETE_SNAPSHOT, "DeleteSandboxSnapshot", "DELETE", "/sandboxSnapshots/{snapshotId}", SAFE, NULL, NULL,
     NULL, NULL, OCISBX_ROUTE_JSON, true},
    {OCISBX_OP_LIST_SNAPSHOTS, "ListSandboxSnapshots", "GET", "/sandboxSnapshots", SAFE,
     "projectId,displayName,sandboxId,snapshotId,lifecycleState,sortBy,sortOrder," LIST_Q, NULL, NULL,
     &ocisbx_md_snapshot_collection, OCISBX_ROUTE_JSON, false},
};

#define NROUTES (sizeof routes / sizeof routes[0])

const ocisbx_route *ocisbx_route_get(ocisbx_op op)
{
    for (size_t i = 0; i < NROUTES; i++)
        if (routes[i].op == op)
            return &routes[i];
    return NULL;
}

const ocisbx_route *ocisbx_route_find(const char *name)
{
    for (size_t i = 0; name && i < NROUTES; i++)
        if (strcmp(routes[i].name, name) == 0)
            return &routes[i];
    return NULL;
}

size_t ocisbx_route_count(void)
{
    return NROUTES;
}
const ocisbx_route *ocisbx_route_at(size_t i)
{
    return i < NROUTES ? &routes[i] : NULL;
}

OCISBX_API const char *ocisbx_operation_name(size_t i)
{
    return i < NROUTES ? routes[i].name : NULL;
}
