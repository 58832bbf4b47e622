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

/* Called after the call that set cmd (never as f(call(&cmd), cmd): the
 * order in which arguments are evaluated is unspecified). */
/* The table shows what the user ran: for a command of `ocisbx exec`, the
 * harness or a job, the command line the backend's wrapper carries
 * (ocisbx_backend_user_command), not the wrapper. */
static void cli_show_user_commands(cJSON *items)
{
    for (cJSON *it = items ? items->child : NULL; it; it = it->next) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "command");
        char *u = NULL;
        if (cJSON_IsString(c) && ocisbx_backend_user_command(c->valuestring, &u) == 0 && u)
            cJSON_ReplaceItemInObjectCaseSensitive(it, "command", cJSON_CreateString(u));
        ocisbx_free(u);
    }
}

static int print_command(int rc, ocisbx_command *cmd)
{
    char *json = NULL;
    if (!rc)
        rc = ocisbx_command_to_json(cmd, &json);
    ocisbx_command_free(cmd);
    return cli_api_print(rc, json);
}

static int build_details(const cli_api_opts *o, ocisbx_run_command_details **out)
{
    int rc = ocisbx_run_command_details_new(o->command, out);
    for (int i = 0; !rc && i < o->nargs; i++)
        rc = ocisbx_run_command_details_add_arg(*out, o->args[i]);
    if (!rc && o->cwd)
        rc = ocisbx_run_command_details_set_cwd(*out, o->cwd);
    if (!rc && o->timeout)
        rc = ocisbx_run_command_details_set_timeout(*out, o->timeout);
    for (int i = 0; !rc && i < o->nenv; i++) {
        const char *eq = strchr(o->env[i], '=');
        char *name = strndup(o->env[i], (size_t)(eq - o->env[i]));
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
        s->has_code = ocisbx_command_event_exit_code(ev, &s->code) == 1;
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
    bool has = ocisbx_command_exit_code(cm, &code) == 1;
    ocisbx_command_free(cm);
    if (state != OCISBX_COMMAND_FINISHED && state != OCISBX_COMMAND_FINISHED_NO_EXIT_CODE)
        return cli_error(CLI_EXIT_FAIL, "%s: the stream ended while the command is %s", what,
                         ocisbx_command_state_name(state));
    return exit_status_of(has, code, what);
}

#define RUN_OPTS "sandbox-id command env cwd timeout arg"
#define WAIT_OPTS " wait-for-state max-wait-seconds wait-interval-seconds"
/* The states --wait-for-state takes: the client's derived command state
 * (a SandboxCommand has no lifecycle state, docs/wire.md). */
#define COMMAND_STATES "NOT_STARTED RUNNING FINISHED FINISHED_NO_EXIT_CODE"

/* get/run with --wait-for-state: poll until the derived state, print it. */
static int wait_and_print(ocisbx_client *c, const char *cmd, const cli_api_opts *o, const char *command_id)
{
    int64_t t, p;
    int state = 0;
    if (cli_api_wait_ms(cmd, o, &t, &p))
        return CLI_EXIT_USAGE;
    if (ocisbx_command_state_from_name(o->wait_for_state, &state))
        return cli_fail_last();
    ocisbx_command *cm = NULL;
    int rc = ocisbx_client_wait_command(c, o->sandbox_id, command_id, state, t, p, &cm);
    return print_command(rc, cm);
}

int cmd_command(cli_ctx *ctx, int argc, char **argv)
{
    static const cli_api_sub subs[] = {
        {"run", RUN_OPTS WAIT_OPTS, "sandbox-command", "run"},
        {"run-and-wait", RUN_OPTS, "sandbox-command", "run-and-wait"},
        {"run-and-stream", RUN_OPTS, "sandbox-command-event", "run-and-stream"},
        {"get", "sandbox-id command-id" WAIT_OPTS, "sandbox-command", "get"},
        {"list", "sandbox-id command-id sort-by sort-order limit page all output", "sandbox-command-collection",
         "list"},
        {"output", "sandbox-id command-id from-seq", "sandbox-command-output", "get-output"},
        {"events", "sandbox-id command-id from-seq", "sandbox-command-event", "stream"},
        {"cancel", "sandbox-id command-id", "sandbox-command", "cancel"},
    };
    char cmd[64];
    cli_api_opts o;
    int exit_code;
    int k =
        cli_api_select("command", subs, sizeof subs / sizeof subs[0], argc, argv, &o, cmd, sizeof cmd, &exit_code);
    if (k < 0)
        return exit_code;
    const char *sub = subs[k].name;
    if (o.wait_for_state) { /* checked before any request is sent */
        int64_t t, p;
        if (cli_api_check_state(cmd, o.wait_for_state, COMMAND_STATES) || cli_api_wait_ms(cmd, &o, &t, &p))
            return CLI_EXIT_USAGE;
    }
    if (cli_api_require(cmd, "sandbox-id", o.sandbox_id))
        return CLI_EXIT_USAGE;
    bool run = strncmp(sub, "run", 3) == 0;
    if (run && cli_api_require(cmd, "command", o.command))
        return CLI_EXIT_USAGE;
    if (!run && strcmp(sub, "list") != 0 && cli_api_require(cmd, "command-id", o.command_id))
        return CLI_EXIT_USAGE;
    long long from_seq = -1; /* not given: from the start; a given 0 is sent as 0 */
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
        if (!rc && o.wait_for_state) {
            char *id = strdup(ocisbx_command_id(cm));
            ocisbx_command_free(cm);
            st = id ? wait_and_print(c, cmd, &o, id) : cli_error(CLI_EXIT_FAIL, "%s: out of memory", cmd);
            free(id);
        } else {
            st = print_command(rc, cm);
        }
    } else if (strcmp(sub, "run-and-wait") == 0) {
        int rc = ocisbx_client_run_command_and_wait(c, o.sandbox_id, d, &cm);
        st = print_command(rc, cm);
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
    } else if (strcmp(sub, "get") == 0 && o.wait_for_state) {
        st = wait_and_print(c, cmd, &o, o.command_id);
    } else if (strcmp(sub, "get") == 0) {
        int rc = ocisbx_client_get_command(c, o.sandbox_id, o.command_id, &cm);
        st = print_command(rc, cm);
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
        ocisbx_list_options *lo = NULL;
        int rc = ocisbx_list_options_new(&lo);
        if (!rc)
            rc = ocisbx_list_options_set_limit(lo, (int)limit);
        if (!rc && o.page)
            rc = ocisbx_list_options_set(lo, "page", o.page);
        if (!rc && o.command_id)
            rc = ocisbx_list_options_set(lo, "commandId", o.command_id);
        if (!rc && o.sort_by)
            rc = ocisbx_list_options_set(lo, "sortBy", o.sort_by);
        if (!rc && o.sort_order)
            rc = ocisbx_list_options_set(lo, "sortOrder", o.sort_order);
        cJSON *outj = cJSON_CreateObject();
        cJSON *items = cJSON_AddArrayToObject(outj, "items");
        if (!rc && o.all) {
            ocisbx_command_iter *it = NULL;
            const ocisbx_command *item = NULL;
            rc = ocisbx_client_iter_commands(c, o.sandbox_id, lo, &it);
            while (!rc && (rc = ocisbx_command_iter_next(it, &item)) == 0 && item) {
                char *json = NULL;
                if ((rc = ocisbx_command_to_json(item, &json)) == 0)
                    cJSON_AddItemToArray(items, cJSON_Parse(json));
                ocisbx_free(json);
            }
            ocisbx_command_iter_free(it);
        } else if (!rc) {
            ocisbx_command_collection *l = NULL;
            rc = ocisbx_client_list_commands(c, o.sandbox_id, lo, &l);
            for (size_t i = 0; !rc && i < ocisbx_command_collection_count(l); i++) {
                char *json = NULL;
                if ((rc = ocisbx_command_to_json(ocisbx_command_collection_item(l, i), &json)) == 0)
                    cJSON_AddItemToArray(items, cJSON_Parse(json));
                ocisbx_free(json);
            }
            if (!rc && ocisbx_command_collection_next_page(l))
                cJSON_AddStringToObject(outj, "opcNextPage", ocisbx_command_collection_next_page(l));
            ocisbx_command_collection_free(l);
        }
        ocisbx_list_options_free(lo);
        static const cli_column cols[] = {{"ID", "id"},           {"STATE", "lifecycleState"},
                                          {"EXIT", "exitCode"},   {"CREATED", "timeCreated"},
                                          {"COMMAND", "command"}, {NULL, NULL}};
        if (!rc && o.output && strcmp(o.output, "table") == 0)
            cli_show_user_commands(items);
        st = rc ? cli_fail_last() : cli_api_print_list(&o, outj, cols);
        cJSON_Delete(outj);
    }
    ocisbx_run_command_details_free(d);
    ocisbx_client_free(c);
    return st;
}
