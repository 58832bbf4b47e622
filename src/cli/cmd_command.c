/* ocisbx sandbox-command run|run-and-wait|get|cancel,
 * sandbox-command-collection list, sandbox-command-event run-and-stream|stream,
 * sandbox-command-output get-output (the OCI CLI's names); the legacy group
 * "command" keeps run|run-and-wait|run-and-stream|get|list|output|events|cancel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ocisbx/api.h"
#include "ocisbx/backend.h"
#include "util/internal.h"

/* Called after the call that set cmd (never as f(call(&cmd), cmd): the
 * order in which arguments are evaluated is unspecified). */
static const cli_column command_cols[] = {{"ID", "id"},           {"STATE", "lifecycleState"},
                                          {"EXIT", "exitCode"},   {"CREATED", "timeCreated"},
                                          {"COMMAND", "command"}, {NULL, NULL}};

static bool table_output(const cli_api_opts *o)
{
    return o->output && strcmp(o->output, "table") == 0;
}

/* A command as JSON; for a table with its derived state as lifecycleState
 * (the wire has none: docs/wire.md), which the STATE column shows, and as
 * its command what the user ran (for `ocisbx exec`, the harness or a job:
 * the command line the backend's wrapper carries, not the wrapper). */
static int command_json(const cli_api_opts *o, const ocisbx_command *cm, char **json)
{
    int rc = ocisbx_command_to_json(cm, json);
    if (rc || !table_output(o))
        return rc;
    cJSON *j = cJSON_Parse(*json);
    ocisbx_free(*json);
    *json = NULL;
    char *text = NULL;
    char *user = NULL;
    if (ocisbx_backend_user_command(ocisbx_command_command(cm), &user) == 0 && user && j)
        cJSON_ReplaceItemInObjectCaseSensitive(j, "command", cJSON_CreateString(user));
    ocisbx_free(user);
    if (j && cJSON_AddStringToObject(j, "lifecycleState", ocisbx_command_lifecycle_state(cm)))
        text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!text)
        return ocisbx_fail(OCISBX_ENOMEM, "out of memory");
    *json = ocisbx_strdup(text);
    cJSON_free(text);
    return *json ? 0 : ocisbx_fail(OCISBX_ENOMEM, "out of memory");
}

static int print_command(const cli_api_opts *o, int rc, ocisbx_command *cmd)
{
    char *json = NULL;
    if (!rc)
        rc = command_json(o, cmd, &json);
    ocisbx_command_free(cmd);
    return cli_api_print_one(o, rc, json, command_cols);
}

static int build_details(const cli_api_opts *o, ocisbx_run_command_details **out)
{
    int rc = ocisbx_run_command_details_new(o->command, out);
    for (int i = 0; !rc && i < o->args.n; i++)
        rc = ocisbx_run_command_details_add_arg(*out, o->args.v[i]);
    if (!rc && o->cwd)
        rc = ocisbx_run_command_details_set_cwd(*out, o->cwd);
    if (!rc && o->timeout)
        rc = ocisbx_run_command_details_set_timeout(*out, o->timeout);
    for (int i = 0; !rc && i < o->env.n; i++) {
        const char *eq = strchr(o->env.v[i], '=');
        char *name = strndup(o->env.v[i], (size_t)(eq - o->env.v[i]));
        rc = name ? ocisbx_run_command_details_add_env(*out, name, eq + 1) : OCISBX_ENOMEM;
        free(name);
    }
    if (rc) {
        ocisbx_run_command_details_free(*out);
        *out = NULL;
    }
    return rc;
}

/* run-and-stream and events: chunks to stdout/stderr as they come, exit
 * with the command's exit code. */
typedef struct stream_out {
    bool finished;
    bool has_code;
    int code;
    bool write_failed;
} stream_out;

static int on_event(const ocisbx_command_event *ev, void *ud)
{
    stream_out *s = ud;
    size_t len = 0;
    const char *data = ocisbx_command_event_data(ev, &len);
    int kind = ocisbx_command_event_kind(ev);
    FILE *f = kind == OCISBX_EVENT_STDOUT ? stdout : kind == OCISBX_EVENT_STDERR ? stderr : NULL;
    if (f && len) {
        if (fwrite(data, 1, len, f) != len || fflush(f) != 0) {
            s->write_failed = true;
            return 1;
        }
    }
    if (kind == OCISBX_EVENT_FINISHED) {
        s->finished = true;
        s->has_code = ocisbx_command_event_has_exit_code(ev, &s->code) == 1;
    }
    return 0;
}

/* The command's exit status as this program's; a command that reported none
 * never gives 0 (CLI_EXIT_NO_STATUS). */
static int exit_status_of(bool has_code, int code, const char *what)
{
    if (!has_code)
        return cli_error(CLI_EXIT_NO_STATUS,
                         "%s: the command finished without an exit status (timed out, canceled, or lost)", what);
    return code & 0xff;
}

static int stream_status(int rc, const stream_out *s, const char *what, ocisbx_client *c, const char *sandbox_id,
                         const char *command_id)
{
    if (s->write_failed)
        return cli_error(CLI_EXIT_FAIL, "%s: writing the output failed", what);
    if (rc)
        return cli_fail_last();
    if (s->finished)
        return exit_status_of(s->has_code, s->code, what);
    /* The stream ended without FINISHED because the command had ended before
     * the first seq asked for (--from-seq past the end): its state says how. */
    ocisbx_command *cm = NULL;
    if (!command_id || ocisbx_client_get_command(c, sandbox_id, command_id, &cm) != 0)
        return command_id ? cli_fail_last()
                          : cli_error(CLI_EXIT_FAIL, "%s: the stream ended before the command finished", what);
    int code = 0;
    int state = ocisbx_command_state(cm);
    bool has = ocisbx_command_has_exit_code(cm, &code) == 1;
    ocisbx_command_free(cm);
    if (state != OCISBX_COMMAND_FINISHED && state != OCISBX_COMMAND_FINISHED_NO_EXIT_CODE)
        return cli_error(CLI_EXIT_FAIL, "%s: the stream ended while the command is %s", what,
                         ocisbx_command_state_name(state));
    return exit_status_of(has, code, what);
}

/* get/run with --wait-for-state: poll until one of the derived states (the
 * states the table allows: the client's, docs/wire.md), print it. */
static int wait_and_print(ocisbx_client *c, const char *cmd, const cli_api_opts *o, const char *command_id)
{
    int64_t t, p;
    int states[CLI_API_MAX_REPEAT];
    if (cli_api_wait_ms(cmd, o, &t, &p))
        return CLI_EXIT_USAGE;
    for (int i = 0; i < o->wait_for_state.n; i++)
        if (ocisbx_command_state_from_name(o->wait_for_state.v[i], &states[i]))
            return cli_fail_last();
    ocisbx_command *cm = NULL;
    int rc =
        ocisbx_client_wait_command_any(c, o->sandbox_id, command_id, states, (size_t)o->wait_for_state.n, t, p, &cm);
    return print_command(o, rc, cm);
}

/* sandbox-command-collection list: one page, or every page with --all. */
static int list_commands(ocisbx_client *c, const cli_api_opts *o, long long limit)
{
    ocisbx_list_options *lo = NULL;
    int rc = cli_api_list_options(o, limit, &lo);
    if (!rc && o->command_id)
        rc = ocisbx_list_options_set(lo, "commandId", o->command_id);
    cJSON *outj = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(outj, "items");
    if (!rc && o->all) {
        ocisbx_command_iter *it = NULL;
        const ocisbx_command *item = NULL;
        rc = ocisbx_client_iter_commands(c, o->sandbox_id, lo, &it);
        while (!rc && (rc = ocisbx_command_iter_next(it, &item)) == 0 && item) {
            char *json = NULL;
            rc = command_json(o, item, &json);
            rc = cli_api_list_add(items, rc, json);
        }
        ocisbx_command_iter_free(it);
    } else if (!rc) {
        ocisbx_command_collection *l = NULL;
        rc = ocisbx_client_list_commands(c, o->sandbox_id, lo, &l);
        for (size_t i = 0; !rc && i < ocisbx_command_collection_count(l); i++) {
            char *json = NULL;
            rc = command_json(o, ocisbx_command_collection_item(l, i), &json);
            rc = cli_api_list_add(items, rc, json);
        }
        if (!rc && ocisbx_command_collection_next_page(l))
            cJSON_AddStringToObject(outj, "opcNextPage", ocisbx_command_collection_next_page(l));
        ocisbx_command_collection_free(l);
    }
    ocisbx_list_options_free(lo);
    int st = rc ? cli_fail_last() : cli_api_print_list(o, outj, command_cols);
    cJSON_Delete(outj);
    return st;
}

int cmd_command(cli_ctx *ctx, int argc, char **argv)
{
    char cmd[64];
    cli_api_opts o;
    int exit_code;
    const cli_verb *v = cli_api_select(argc, argv, &o, cmd, sizeof cmd, &exit_code);
    if (!v)
        return exit_code;
    const char *sub = cli_verb_id(v);
    if (o.wait_for_state.n) { /* checked before any request is sent (the states by the table) */
        int64_t t, p;
        if (cli_api_wait_ms(cmd, &o, &t, &p))
            return CLI_EXIT_USAGE;
    }
    bool run = strncmp(sub, "run", 3) == 0; /* the required options: by the table */
    long long from_seq = -1;                /* not given: from the start; a given 0 is sent as 0 */
    if (o.from_seq && cli_api_int(cmd, "from-seq", o.from_seq, 0, 9007199254740991LL, &from_seq))
        return CLI_EXIT_USAGE;
    long long limit = 0;
    if (o.limit && cli_api_int(cmd, "limit", o.limit, 1, 1000, &limit))
        return CLI_EXIT_USAGE;

    ocisbx_run_command_details *d = NULL;
    if (run && build_details(&o, &d))
        return cli_error(CLI_EXIT_USAGE, "%s", ocisbx_error_message(ocisbx_error_last()));
    ocisbx_client *c = NULL;
    if (cli_api_client(ctx, &c)) {
        ocisbx_run_command_details_free(d);
        return CLI_EXIT_FAIL;
    }
    int st;
    ocisbx_command *cm = NULL;
    if (strcmp(sub, "run") == 0) {
        /* the answer is a SandboxCommandIdentifier {id} [public] */
        int rc = ocisbx_client_run_command(c, o.sandbox_id, d, &cm);
        if (!rc && o.wait_for_state.n) {
            char *id = strdup(ocisbx_command_id(cm));
            ocisbx_command_free(cm);
            st = id ? wait_and_print(c, cmd, &o, id) : cli_error(CLI_EXIT_FAIL, "%s: out of memory", cmd);
            free(id);
        } else {
            st = print_command(&o, rc, cm);
        }
    } else if (strcmp(sub, "run-and-wait") == 0) {
        int rc = ocisbx_client_run_command_and_wait(c, o.sandbox_id, d, &cm);
        st = print_command(&o, rc, cm);
    } else if (strcmp(sub, "run-and-stream") == 0) {
        stream_out s = {0};
        char *id = NULL;
        int rc = ocisbx_client_run_command_and_stream(c, o.sandbox_id, d, on_event, &s, &id);
        st = stream_status(rc, &s, cmd, c, o.sandbox_id, id);
        ocisbx_free(id);
    } else if (strcmp(sub, "events") == 0) {
        stream_out s = {0};
        int rc = ocisbx_client_stream_command_events(c, o.sandbox_id, o.command_id, from_seq, 0, on_event, &s);
        st = stream_status(rc, &s, cmd, c, o.sandbox_id, o.command_id);
    } else if (strcmp(sub, "get") == 0 && o.wait_for_state.n) {
        st = wait_and_print(c, cmd, &o, o.command_id);
    } else if (strcmp(sub, "get") == 0) {
        int rc = ocisbx_client_get_command(c, o.sandbox_id, o.command_id, &cm);
        st = print_command(&o, rc, cm);
    } else if (strcmp(sub, "output") == 0) {
        ocisbx_command_output *out = NULL;
        char *json = NULL;
        int rc = ocisbx_client_get_command_output(c, o.sandbox_id, o.command_id, from_seq, &out);
        if (!rc)
            rc = ocisbx_command_output_to_json(out, &json);
        ocisbx_command_output_free(out);
        st = cli_api_print(rc, json);
    } else if (strcmp(sub, "cancel") == 0) {
        st = ocisbx_client_cancel_command(c, o.sandbox_id, o.command_id) ? cli_fail_last() : CLI_EXIT_OK;
    } else { /* list */
        st = list_commands(c, &o, limit);
    }
    ocisbx_run_command_details_free(d);
    ocisbx_client_free(c);
    return st;
}
