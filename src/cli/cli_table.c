/* The command table, part 2: the global options, the commands of the
 * workspace backend, the harness, evidence, doctor, raw-request and
 * completion, and the table of commands itself (the API groups' rows are in
 * cli_table_api.c). A command that parses its own options must list each
 * of them here: test_cli_table asks its parser and fails on a difference. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_table.h"

/* ---- global options ----
 * The client settings (--profile, --region, ...) come from the library's
 * settings table (ocisbx/settings.h; cli_settings.c parses them); these are
 * the CLI's own, which main parses from this table. */
#define G(field) offsetof(cli_globals, field)
const cli_global_option cli_global_options[] = {
    {{"no-retry", NULL, "send each request once (no retries)", NULL, 0, NULL}, G(no_retry)},
    {{"debug", NULL, "the library's debug log on stderr (secrets redacted)", NULL, 0, NULL}, G(debug)},
    {{"max-retries", "N", "retry a failed request at most N times (0-99; default 7)", NULL, 0, NULL}, G(max_retries)},
    {{"connection-timeout", "SECONDS", "time to connect (default 10)", NULL, 0, NULL}, G(connection_timeout)},
    {{"read-timeout", "SECONDS", "time to wait for the answer, or between bytes of a stream (default 60)", NULL, 0,
      NULL},
     G(read_timeout)},
    {{"deadline", "SECONDS",
      "the most one request may take, its retries and waits included, also while bytes still arrive (default none)",
      NULL, 0, NULL},
     G(deadline)},
    {{"version", NULL, "print the version and exit", NULL, 0, NULL}, SIZE_MAX},
    {{"help", NULL, "the usage (after a command: the command's)", NULL, 0, NULL}, SIZE_MAX},
    {CLI_END_OPTIONS, 0},
};

/* The auth kinds (the --auth values completed and shown). */
#define AUTH_KINDS                                                                        \
    OCISBX_AUTH_API_KEY " " OCISBX_AUTH_SECURITY_TOKEN " " OCISBX_AUTH_INSTANCE_PRINCIPAL \
                        " " OCISBX_AUTH_RESOURCE_PRINCIPAL

/* A settings row as a global option: its variables as one text. */
static void view_of_setting(const ocisbx_setting *r, cli_global_view *v)
{
    memset(v, 0, sizeof *v);
    v->opt.name = r->option + 2; /* "--profile" */
    v->opt.arg = r->value_name;
    v->opt.help = r->help;
    v->opt.flags = strcmp(r->value_name, "FILE") == 0 ? CLI_OPT_FILE : 0;
    v->opt.values = strcmp(r->name, "auth") == 0 ? AUTH_KINDS : NULL;
    v->default_value = r->default_value;
    size_t o = 0;
    for (const char *const *e = r->env; e && *e && o < sizeof v->env; e++)
        o += (size_t)snprintf(v->env + o, sizeof v->env - o, "%s%s", o ? ", " : "", *e);
}

const cli_global_view *cli_global_views(size_t *n)
{
    static cli_global_view views[64];
    static size_t count;
    if (!count) {
        for (const ocisbx_setting *r = ocisbx_setting_next(NULL); r && count < 48; r = ocisbx_setting_next(r))
            if (r->flags & OCISBX_SETTING_CLIENT)
                view_of_setting(r, &views[count++]);
        for (const cli_global_option *g = cli_global_options; g->opt.name && count < 64; g++)
            views[count++].opt = g->opt;
    }
    *n = count;
    return views;
}

/* ---- the workspace backend ---- */
#define O_ENV_NAMED(f)                                                                            \
    {                                                                                             \
        "env", "NAME=VALUE", "an environment variable of the command (repeatable)", NULL, f, NULL \
    }
#define O_SECRET_ENV                                                                                             \
    {                                                                                                            \
        "secret-env", "NAME[=VALUE]",                                                                            \
            "the same, the value never shown ([REDACTED]); NAME alone: the value of ocisbx's own variable NAME " \
            "(off the command line, ps)",                                                                        \
            NULL, CLI_OPT_REPEAT, NULL                                                                           \
    }
#define O_LOCAL_DIR                                                                       \
    {                                                                                     \
        "local-dir", "DIR", "a local directory as the workspace", NULL, CLI_OPT_DIR, NULL \
    }
#define O_NO_ISOLATION                                                                                              \
    {                                                                                                               \
        "no-isolation", NULL, "with --local-dir: run commands on this machine, not under bubblewrap", NULL, 0, NULL \
    }
#define O_ANY_SANDBOX_ID                                                                    \
    {                                                                                       \
        "sandbox-id", "ID", "an existing sandbox (connected, never deleted)", NULL, 0, NULL \
    }

#define O_POLL_INTERVAL                                                                                  \
    {                                                                                                    \
        "poll-interval", "SECONDS",                                                                      \
            "seconds between state checks while waiting, 0.01 to 3600 (else OCI_SANDBOX_POLL_INTERVAL, " \
            "then 2)",                                                                                   \
            NULL, 0, NULL                                                                                \
    }

static const cli_option create_opts[] = {
    {"project-id", "OCID", "the project (else OCI_SANDBOX_PROJECT_ID)", NULL, 0, NULL},
    {"runtime", "NAME", "the runtime (else OCI_SANDBOX_RUNTIME, then python-3.11)", NULL, 0, NULL},
    {"shape", "NAME", "the shape (else OCI_SANDBOX_SHAPE, then SMALL)", "SMALL MEDIUM LARGE", 0, NULL},
    {"expiration", "DURATION", "ISO 8601 lifetime, at most PT48H (else OCI_SANDBOX_EXPIRATION, then PT1H)", NULL, 0,
     NULL},
    {"display-name", "NAME", "a display name", NULL, 0, NULL},
    {"warmpool-name", "NAME", "take the sandbox from this warm pool", NULL, 0, NULL},
    O_ENV_NAMED(CLI_OPT_REPEAT),
    {"ready-timeout", "SECONDS", "how long to wait for RUNNING", NULL, 0, NULL},
    O_POLL_INTERVAL,
    CLI_END_OPTIONS,
};
static const cli_option close_opts[] = {
    {"sandbox-id", "ID", "the sandbox", NULL, CLI_OPT_REQUIRED, NULL},
    {"stop-timeout", "SECONDS", "how long to wait for STOPPED before deleting anyway (default 60)", NULL, 0, NULL},
    O_POLL_INTERVAL,
    CLI_END_OPTIONS,
};
static const cli_option exec_opts[] = {
    O_ANY_SANDBOX_ID,
    O_LOCAL_DIR,
    O_NO_ISOLATION,
    {"network", "MODE", "with --local-dir: the command's network (default deny)", "allow deny", 0, NULL},
    {"timeout", "SECONDS", "the command's time limit (then exit 124)", NULL, 0, NULL},
    {"max-output-bytes", "N", "keep at most N bytes of output (its head and tail)", NULL, 0, NULL},
    O_ENV_NAMED(CLI_OPT_REPEAT),
    O_SECRET_ENV,
    {"cwd", "PATH", "the working directory (under /workspace)", NULL, 0, NULL},
    CLI_END_OPTIONS,
};
static const cli_option no_options[] = {CLI_END_OPTIONS};

static const cli_verb create_usage = {
    .name = "create",
    .summary = "create a sandbox and wait until it is RUNNING (deleted again on any failure)",
    .text = "Prints the sandbox's JSON with an added label. The sandbox is deleted again on any failure or\n"
            "interruption.\n",
    .options = create_opts,
};
static const cli_verb close_usage = {
    .name = "close",
    .summary = "stop and delete a sandbox (also fine when it is already gone)",
    .text = "Stops the sandbox (graceful), waits until it is STOPPED, then deletes it; when the stop fails or\n"
            "times out it is deleted anyway (exit 1). A sandbox that is already gone is fine (exit 0, a line\n"
            "on stderr naming it). Ctrl-C ends the wait, never the delete.\n",
    .options = close_opts,
};
static const cli_verb exec_usage = {
    .name = "exec",
    .summary = "run a command in a sandbox or a local directory (timeout, capped output)",
    .args = "-- COMMAND [ARG...]",
    .text = "Give exactly one of --sandbox-id and --local-dir. One word after -- is a shell command line,\n"
            "several are an argv. Prints the command's output; exits with its exit code (124: timed out; 1:\n"
            "the call failed; 2: a bad command line).\n",
    .options = exec_opts,
};
static const cli_option cp_opts[] = {
    {"parallel", "N", "an upload above 8 MiB: parts sent at once (1..16, default 4)", NULL, 0, NULL},
    CLI_END_OPTIONS,
};
static const cli_verb cp_usage = {
    .name = "cp",
    .summary = "copy a file to or from a sandbox (sbx:<sandbox id>:<path>), checked",
    .args = "SRC DST",
    .text = "One side is sbx:<sandbox id>:<absolute path>, the other a local file. Checked: each part's\n"
            "SHA-256 by the service, the whole file's in the sandbox before it replaces the target; a\n"
            "download against the service's SHA-256 before it is renamed into place. Shows progress on a\n"
            "terminal (stderr), nothing when piped.\n",
    .options = cp_opts,
    .flags = CLI_VERB_FILES,
};

/* ---- evidence, harness ---- */
static const cli_option evidence_verify_opts[] = {
    {"head", "SHA256", "exit 1 unless the last line hashes to SHA256 (the head kept elsewhere)", NULL, 0, NULL},
    CLI_END_OPTIONS,
};
static const cli_verb evidence_verbs[] = {
    {"verify", NULL, NULL, "check the hash chain of a harness evidence file", "FILE",
     "Each record's prev_sha256 must be the SHA-256 of the line before it (64 zeros for the first).\n"
     "Exit 0 with the record count and the chain's head (the SHA-256 of the last line) when the chain\n"
     "is whole; 1 naming the first line that breaks it (or why the file cannot be read); 2 for a bad\n"
     "command line. The chain cannot show a change to the last record or lines removed from the end:\n"
     "keep the head elsewhere and give it as --head.\n",
     evidence_verify_opts, CLI_VERB_FILES},
    CLI_END_VERBS,
};

static const cli_option harness_tools_opts[] = {
    {"format", "FORMAT", "the tool list's shape (default ours)", "ours openai anthropic", 0, NULL},
    CLI_END_OPTIONS,
};
static const cli_option harness_prompt_opts[] = {O_ANY_SANDBOX_ID, O_LOCAL_DIR, O_NO_ISOLATION, CLI_END_OPTIONS};
static const cli_option harness_call_opts[] = {
    O_ANY_SANDBOX_ID,
    O_LOCAL_DIR,
    O_NO_ISOLATION,
    {"require-person", "LABEL",
     "hold calls with this action label (a glob: workspace.*) for a person on the terminal (repeatable)", NULL,
     CLI_OPT_REPEAT, NULL},
    {"deny", "LABEL", "deny calls with this action label (repeatable)", NULL, CLI_OPT_REPEAT, NULL},
    {"policy", "FILE", "a policy file (YAML; see docs/harness.md)", NULL, CLI_OPT_FILE, NULL},
    {"evidence", "FILE", "append an evidence record to this JSON Lines file (its chain continued)", NULL,
     CLI_OPT_FILE, NULL},
    {"env", "NAME=VALUE", "added to every exec's environment (repeatable)", NULL, CLI_OPT_REPEAT, NULL},
    O_SECRET_ENV,
    CLI_END_OPTIONS,
};
static const cli_verb harness_verbs[] = {
    {"tools", NULL, NULL, "the tool list as JSON (no backend needed)", NULL,
     "ours: [{name, description, label, parameters}]; openai: [{type: \"function\", function: {name,\n"
     "description, parameters}}]; anthropic: [{name, description, input_schema}].\n",
     harness_tools_opts, 0},
    {"prompt", NULL, NULL, "the system prompt fragment for the workspace", NULL,
     "Give exactly one of --sandbox-id and --local-dir. Prints text for a model's system prompt: the\n"
     "workspace, each tool, the output cap and the timeout rules.\n",
     harness_prompt_opts, 0},
    {"call", NULL, NULL, "one tool call through the gate; prints its result as one line of JSON",
     "[--] TOOL 'ARGS_JSON'",
     "Give exactly one of --sandbox-id and --local-dir. Action labels: workspace.read, workspace.write,\n"
     "workspace.exec. A held call asks on /dev/tty ([y/N]); without a terminal it is refused.\n"
     "Exit 0 when the tool succeeded; 1 for a tool error (the result is {\"error\": {\"code\",\n"
     "\"message\"}}, a denied or refused call included) or when the backend cannot be opened; 2 for a bad\n"
     "command line or a bad policy file (the message names the file, line and key).\n",
     harness_call_opts, 0},
    CLI_END_VERBS,
};

/* ---- doctor, raw-request, completion ---- */
static const cli_option doctor_opts[] = {
    {"project-id", "OCID", "list in this project (else OCI_SANDBOX_PROJECT_ID; else without one)", NULL, 0, NULL},
    CLI_END_OPTIONS,
};
static const cli_verb doctor_usage = {
    .name = "doctor",
    .summary = "check the config, key, fingerprint, clock, network and a signed request",
    .text = "First prints where each setting came from, one line each:\n"
            "  setting NAME = VALUE (flag --OPTION | variable NAME | file FILE [PROFILE] | default)\n"
            "Then checks the setup, one line per check, in this order:\n"
            "  config       the config file exists, is readable, and only its owner can read it\n"
            "  profile      the profile is in the file with the keys the auth method needs\n"
            "  key          key_file is readable, parses, and pass_phrase opens it if encrypted\n"
            "  fingerprint  the profile's fingerprint is the key's (MD5 of its public key)\n"
            "  clock        this machine's clock is within 5 minutes of the endpoint's date header\n"
            "  dns          the endpoint's host name resolves\n"
            "  connect      a TCP connection to the endpoint opens\n"
            "  tls          the TLS handshake succeeds and the certificate verifies (https)\n"
            "  request      a signed request (list sandboxes, limit 1) is accepted\n"
            "Each line starts with ok, warn, FAIL or skip (a check that needs a failed one).\n"
            "Exit 0 when no check failed (warnings allowed), 1 when one did, 2 for a bad command line.\n",
    .options = doctor_opts,
};

static const cli_option raw_request_opts[] = {
    {"url", "URL", "the request's URL", NULL, CLI_OPT_REQUIRED, NULL},
    {"method", "METHOD", "the request's method (default GET)", NULL, 0, NULL},
    {"body-file", "FILE", "the body ('-': standard input)", NULL, CLI_OPT_FILE, NULL},
    {"content-type", "TYPE", "the body's content type (default application/json)", NULL, 0, NULL},
    {"date", "DATE", "the date header to sign ('Thu, 05 Jan 2014 21:31:40 GMT')", NULL, 0, NULL},
    {"dry-run", NULL, "print the signed request (request line, then the headers) instead of sending it", NULL, 0,
     NULL},
    {"include", NULL, "print the answer's status line and headers before the body (also -i)", NULL, 0, NULL},
    CLI_END_OPTIONS,
};
static const cli_verb raw_request_usage = {
    .name = "raw-request",
    .summary = "sign and send any request (or print it with --dry-run)",
    .args = "[--]",
    .text = "The body goes to stdout as it comes, the status to stderr; an answer that is not 2xx exits 1.\n",
    .options = raw_request_opts,
};

/* ---- fleet ---- */
static const cli_option fleet_exec_opts[] = {
    {"project-id", "OCID", "the project (else OCI_SANDBOX_PROJECT_ID)", NULL, 0, NULL},
    {"count", "N", "how many sandboxes (1..100000)", NULL, 0, NULL},
    {"concurrency", "C", "sandboxes alive at once (default 32)", NULL, 0, NULL},
    {"shape", "NAME", "the shape (else OCI_SANDBOX_SHAPE, then SMALL)", "SMALL MEDIUM LARGE", 0, NULL},
    {"timeout", "SECONDS", "the command's time limit in each sandbox", NULL, 0, NULL},
    {"max-output-bytes", "N", "keep at most N bytes of each output (its head and tail)", NULL, 0, NULL},
    {"env", "NAME=VALUE", "added to the command's environment (repeatable)", NULL, CLI_OPT_REPEAT, NULL},
    {"output", "FORMAT", "json (default) or table", "json table", 0, NULL},
    {"sandbox-ids", "FILE", "run in these existing sandboxes (one id a line) and close none", NULL, CLI_OPT_FILE,
     NULL},
    {"interrupt-grace", "SECONDS",
     "after SIGINT / SIGTERM, wait at most this long for the closes (0..20, default 20)", NULL, 0, NULL},
    CLI_END_OPTIONS,
};
static const cli_verb fleet_verbs[] = {
    {"exec", NULL, NULL, "create N sandboxes, run a command once in each, close them all", "-- COMMAND [ARG...]",
     "Runs the command once in each sandbox with OCISBX_FLEET_INDEX set to 0..N-1, from one thread (the\n"
     "engine: docs/engine.md), then closes every sandbox (stop, then delete); with --sandbox-ids the\n"
     "command runs in those sandboxes and none is closed. One word after -- is a shell command line,\n"
     "several are an argv. Prints {\"sandboxes\": [{index, sandbox_id, exit_code, timed_out, truncated,\n"
     "output, duration_ms, error}...], \"summary\": {ok, failed, wall_ms, create_p50_ms, create_p99_ms,\n"
     "exec_p50_ms, exec_p99_ms, throttled}} (rows by index; error null or {code, message, status,\n"
     "request_id}), or with --output table one line a sandbox and the summary; a progress line on a\n"
     "terminal (stderr). Exit 0 only when every command exited 0. SIGINT or SIGTERM: nothing more starts,\n"
     "what runs is canceled, every sandbox the fleet created is closed; exit 130 / 143 within 30 s.\n",
     fleet_exec_opts, 0},
    CLI_END_VERBS,
};

static const cli_verb completion_verbs[] = {
    {"bash", NULL, NULL, "the completion script for bash", NULL, "Load it with: source <(ocisbx completion bash)\n",
     no_options, 0},
    {"zsh", NULL, NULL, "the completion script for zsh", NULL,
     "Put it in a directory of $fpath as _ocisbx, or: source <(ocisbx completion zsh)\n", no_options, 0},
    {"fish", NULL, NULL, "the completion script for fish", NULL,
     "Put it in ~/.config/fish/completions/ocisbx.fish, or: ocisbx completion fish | source\n", no_options, 0},
    CLI_END_VERBS,
};

/* ---- the commands, in the order --help lists them ---- */
const cli_command cli_commands[] = {
    {"raw-request", NULL, cmd_raw_request, NULL, &raw_request_usage, 0},
    {"doctor", NULL, cmd_doctor, NULL, &doctor_usage, 0},
    /* the OCI CLI's groups (oci generative-ai-sandbox ...) */
    {"sandbox", "create|create-from-snapshot|get|update|stop|delete|extend|suspend|resume", cmd_sandbox,
     cli_sandbox_verbs, NULL, CLI_CMD_OCI},
    {"sandbox-collection", "list", cmd_sandbox, cli_sandbox_collection_verbs, NULL, CLI_CMD_OCI},
    {"sandbox-command", "run|run-and-wait|get|cancel", cmd_command, cli_sandbox_command_verbs, NULL, CLI_CMD_OCI},
    {"sandbox-command-collection", "list", cmd_command, cli_sandbox_command_collection_verbs, NULL, CLI_CMD_OCI},
    {"sandbox-command-event", "run-and-stream|stream", cmd_command, cli_sandbox_command_event_verbs, NULL,
     CLI_CMD_OCI},
    {"sandbox-command-output", "get-output", cmd_command, cli_sandbox_command_output_verbs, NULL, CLI_CMD_OCI},
    {"sandbox-file", "read|write", cmd_file, cli_sandbox_file_verbs, NULL, CLI_CMD_OCI},
    {"sandbox-snapshot", "create|get|delete", cmd_snapshot, cli_sandbox_snapshot_verbs, NULL, CLI_CMD_OCI},
    {"sandbox-snapshot-collection", "list", cmd_snapshot, cli_sandbox_snapshot_collection_verbs, NULL, CLI_CMD_OCI},
    /* the workspace backend */
    {"create", NULL, cmd_create, NULL, &create_usage, 0},
    {"close", NULL, cmd_close, NULL, &close_usage, 0},
    {"exec", NULL, cmd_exec, NULL, &exec_usage, 0},
    {"cp", NULL, cmd_cp, NULL, &cp_usage, 0},
    {"fleet", "exec: many sandboxes from one thread, a command in each", cmd_fleet, fleet_verbs, NULL, 0},
    {"evidence", "verify: check the hash chain of a harness evidence file", cmd_evidence, evidence_verbs, NULL, 0},
    {"harness", "tools|prompt|call: a model's gated tools over a sandbox or a local directory", cmd_harness,
     harness_verbs, NULL, 0},
    {"completion", "bash|zsh|fish: the shell completion script", cmd_completion, completion_verbs, NULL, 0},
    /* this CLI's first names, kept as aliases */
    {"command", "alias: run|run-and-wait|run-and-stream|get|list|output|events|cancel", cmd_command,
     cli_command_verbs, NULL, CLI_CMD_ALIAS},
    {"file", "alias of sandbox-file: read|write", cmd_file, cli_file_verbs, NULL, CLI_CMD_ALIAS},
    {"snapshot", "alias: create|get|list|delete", cmd_snapshot, cli_snapshot_verbs, NULL, CLI_CMD_ALIAS},
    {NULL, NULL, NULL, NULL, NULL, 0},
};

const cli_command *cli_find_command(const char *name)
{
    for (const cli_command *c = cli_commands; name && c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

const cli_verb *cli_find_verb(const cli_command *c, const char *name)
{
    for (const cli_verb *v = c && name ? c->verbs : NULL; v && v->name; v++)
        if (strcmp(v->name, name) == 0)
            return v;
    return NULL;
}

const cli_option *cli_find_option(const cli_option *opts, const char *name)
{
    for (const cli_option *o = opts; o && o->name; o++)
        if (strcmp(o->name, name) == 0 || (o->alias && strcmp(o->alias, name) == 0))
            return o;
    return NULL;
}

bool cli_word_in(const char *list, const char *what)
{
    size_t n = strlen(what);
    for (const char *p = list; n && p && (p = strstr(p, what)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

const char *cli_verb_id(const cli_verb *v)
{
    return v->id ? v->id : v->name;
}
