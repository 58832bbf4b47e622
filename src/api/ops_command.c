/* Command operations (the event streams are in stream.c). */
#include <stdio.h>

#include "api/client_internal.h"

#define CM(x) ((const ocisbx_model *)(const void *)(x))
#define OUT(out) ((ocisbx_model **)(void *)(out))

static int need_details(const ocisbx_run_command_details *d)
{
    if (!d || !ocisbx_model_str(CM(d), "command"))
        return ocisbx_fail(OCISBX_EINVAL, "RunSandboxCommandDetails.command: required");
    return 0;
}

int ocisbx_client_run_command(ocisbx_client *c, const char *sandbox_id, const ocisbx_run_command_details *d,
                              ocisbx_command **out)
{
    int rc = need_details(d);
    if (rc)
        return rc;
    ocisbx_param p[] = {{"sandboxId", sandbox_id}};
    return ocisbx_client_exec(c, OCISBX_OP_RUN_COMMAND, p, 1, CM(d), OUT(out));
}

int ocisbx_client_run_command_and_wait(ocisbx_client *c, const char *sandbox_id, const ocisbx_run_command_details *d,
                                       ocisbx_command **out)
{
    int rc = need_details(d);
    if (rc)
        return rc;
    ocisbx_param p[] = {{"sandboxId", sandbox_id}};
    return ocisbx_client_exec(c, OCISBX_OP_RUN_COMMAND_AND_WAIT, p, 1, CM(d), OUT(out));
}

int ocisbx_client_get_command(ocisbx_client *c, const char *sandbox_id, const char *command_id, ocisbx_command **out)
{
    ocisbx_param p[] = {{"sandboxId", sandbox_id}, {"commandId", command_id}};
    return ocisbx_client_exec(c, OCISBX_OP_GET_COMMAND, p, 2, NULL, OUT(out));
}

int ocisbx_client_list_commands(ocisbx_client *c, const char *sandbox_id, const ocisbx_list_options *o,
                                ocisbx_command_collection **out)
{
    ocisbx_param p[OCISBX_MAX_PARAMS];
    p[0] = (ocisbx_param){"sandboxId", sandbox_id};
    size_t n = 1 + ocisbx_list_options_params(o, NULL, p + 1, OCISBX_MAX_PARAMS - 1);
    return ocisbx_client_exec(c, OCISBX_OP_LIST_COMMANDS, p, n, NULL, OUT(out));
}

int ocisbx_client_get_command_output(ocisbx_client *c, const char *sandbox_id, const char *command_id,
                                     int64_t from_seq, ocisbx_command_output **out)
{
    char seq[24];
    snprintf(seq, sizeof seq, "%lld", (long long)from_seq);
    ocisbx_param p[] = {{"sandboxId", sandbox_id}, {"commandId", command_id}, {"fromSeq", seq}};
    return ocisbx_client_exec(c, OCISBX_OP_GET_COMMAND_OUTPUT, p, from_seq >= 0 ? 3 : 2, NULL, OUT(out));
}

int ocisbx_client_cancel_command(ocisbx_client *c, const char *sandbox_id, const char *command_id)
{
    ocisbx_param p[] = {{"sandboxId", sandbox_id}, {"commandId", command_id}};
    return ocisbx_client_exec(c, OCISBX_OP_CANCEL_COMMAND, p, 2, NULL, NULL);
}
