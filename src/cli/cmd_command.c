/* ocisbx command run|run-and-wait|run-and-stream|get|list|output|events|cancel */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ocisbx/api.h"

/* Called after the call that set cmd (never as f(call(&cmd), cmd): the
 * order in which arguments are evaluated is unspecified). */
static int print_command(int rc, ocisbx_command *cmd)
{
    char *json = NULL;
    if (!rc) rc = ocisbx_command_to_json(cmd, &json);
    ocisbx_command_free(cmd);
    return cli_api_print(rc, json);
}

static int build_details(const cli_api_opts *o, ocisbx_run_command_details **out)
{
    int rc = ocisbx_run_command_details_new(o->command, out);
    for (int i = 0; !rc && i < o->nargs; i++) rc = ocisbx_run_command_details_add_arg(*out, o->args[i]);
    if (!rc && o->cwd) rc = ocisbx_run_command_details_set_cwd(*out, o->cwd);
    if (!rc && o->timeout) rc = ocisbx_run_command_details_set_timeout(*out, o->timeout);
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

static int stream_status(int rc, const stream_out *s, const char *what)
{
    if (s->write_failed) return cli_error(CLI_EXIT_FAIL, "%s: writing the output failed", what);
    if (rc) return cli_fail_last();
    if (!s->finished) return CLI_EXIT_OK; /* stopped at --until: nothing to report */
    if (!s->has_code) return cli_error(CLI_EXIT_FAIL, "%s: the command finished without an exit status (timed out "
                                                      "or canceled)", what);
    return s->code & 0xff;
}

#define RUN_OPTS "sandbox-id command env cwd timeout arg"

int cmd_command(cli_ctx *ctx, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : NULL;
    static const cli_api_sub subs[] = {
        {"run", RUN_OPTS},
        {"run-and-wait", RUN_OPTS},
        {"run-and-stream", RUN_OPTS},
        {"get", "sandbox-id command-id"},
        {"list", "sandbox-id limit page all"},
        {"output", "sandbox-id command-id from-seq"},
        {"events", "sandbox-id command-id from-seq"},
        {"cancel", "sandbox-id command-id"},
    };
    char cmd[64];
    cli_api_opts o;
    int exit_code;
    if (cli_api_select("command", sub, subs, sizeof subs / sizeof subs[0], argc, argv, &o, cmd, sizeof cmd,
                       &exit_code) < 0)
        return exit_code;
    if (cli_api_require(cmd, "sandbox-id", o.sandbox_id)) return CLI_EXIT_USAGE;
    bool run = strncmp(sub, "run", 3) == 0;
    if (run && cli_api_require(cmd, "command", o.command)) return CLI_EXIT_USAGE;
    if (!run && strcmp(sub, "list") != 0 && cli_api_require(cmd, "command-id", o.command_id)) return CLI_EXIT_USAGE;
    long long from_seq = -1; /* not given: from the start; a given 0 is sent as 0 */
    if (o.from_seq && cli_api_int(cmd, "from-seq", o.from_seq, 0, 9007199254740991LL, &from_seq))
        return CLI_EXIT_USAGE;
    long long limit = 0;
    if (o.limit && cli_api_int(cmd, "limit", o.limit, 1, 1000, &limit)) return CLI_EXIT_USAGE;

    ocisbx_run_command_details *d = NULL;
    if (run && build_details(&o, &d)) return cli_error(CLI_EXIT_USAGE, "%s", ocisbx_error_message(ocisbx_error_last()));
    ocisbx_client *c = NULL;
    if (cli_api_client(ctx, &c)) {
        ocisbx_run_command_details_free(d);
        return CLI_EXIT_FAIL;
    }
    int st;
    ocisbx_command *cm = NULL;
    if (strcmp(sub, "run") == 0) {
        int rc = ocisbx_client_run_command(c, o.sandbox_id, d, &cm);
        st = print_command(rc, cm);
    } else if (strcmp(sub, "run-and-wait") == 0) {
        int rc = ocisbx_client_run_command_and_wait(c, o.sandbox_id, d, &cm);
        st = print_command(rc, cm);
    } else if (strcmp(sub, "run-and-stream") == 0) {
        stream_out s = {0};
        int rc = ocisbx_client_run_command_and_stream(c, o.sandbox_id, d, on_event, &s, NULL);
        st = stream_status(rc, &s, cmd);
    } else if (strcmp(sub, "events") == 0) {
        stream_out s = {0};
        int rc = ocisbx_client_stream_command_events(c, o.sandbox_id, o.command_id, from_seq, 0, on_event, &s);
        st = stream_status(rc, &s, cmd);
    } else if (strcmp(sub, "get") == 0) {
        int rc = ocisbx_client_get_command(c, o.sandbox_id, o.command_id, &cm);
        st = print_command(rc, cm);
    } else if (strcmp(sub, "output") == 0) {
        ocisbx_command_output *out = NULL;
        char *json = NULL;
        int rc = ocisbx_client_get_command_output(c, o.sandbox_id, o.command_id, from_seq, &out);
        if (!rc) rc = ocisbx_command_output_to_json(out, &json);
        ocisbx_command_output_free(out);
        st = cli_api_print(rc, json);
    } else if (strcmp(sub, "cancel") == 0) {
        st = ocisbx_client_cancel_command(c, o.sandbox_id, o.command_id) ? cli_fail_last() : CLI_EXIT_OK;
    } else { /* list */
        ocisbx_list_options *lo = NULL;
        int rc = ocisbx_list_options_new(&lo);
        if (!rc) rc = ocisbx_list_options_set_limit(lo, (int)limit);
        if (!rc && o.page) rc = ocisbx_list_options_set(lo, "page", o.page);
        cJSON *outj = cJSON_CreateObject();
        cJSON *items = cJSON_AddArrayToObject(outj, "items");
        if (!rc && o.all) {
            ocisbx_command_iter *it = NULL;
            const ocisbx_command *item = NULL;
            rc = ocisbx_client_iter_commands(c, o.sandbox_id, lo, &it);
            while (!rc && (rc = ocisbx_command_iter_next(it, &item)) == 0 && item) {
                char *json = NULL;
                if ((rc = ocisbx_command_to_json(item, &json)) == 0) cJSON_AddItemToArray(items, cJSON_Parse(json));
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
        st = rc ? cli_fail_last() : cli_print_json(outj);
        cJSON_Delete(outj);
    }
    ocisbx_run_command_details_free(d);
    ocisbx_client_free(c);
    return st;
}
