/* The ocisbx program's frame: global options, the command table, and the
 * helpers every command file uses (credentials, transport, JSON output,
 * one-line errors). Commands: int cmd_x(cli_ctx *ctx, int argc, char **argv)
 * where argv[0] is the command name and the global options are already
 * removed; they return the process exit status. */
#ifndef OCISBX_CLI_H
#define OCISBX_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "ocisbx/ocisbx.h"
#include "ocisbx/http.h"
#include "ocisbx/api.h"
#include "ocisbx/settings.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1  /* a failure (service error, I/O, bad config) */
#define CLI_EXIT_USAGE 2 /* bad command line */
/* A command run in a sandbox finished without reporting an exit status
 * (timed out by the service, canceled, or its exit lost): never 0. */
#define CLI_EXIT_NO_STATUS 125

/* The global options that are not client settings (the settings, --profile,
 * --region and the like, go to ctx->settings: cli_settings.c). */
typedef struct cli_globals {
    /* Transport limits, as the OCI CLI names them (applied to every command). */
    bool no_retry;                  /* --no-retry: one attempt per request */
    bool debug;                     /* --debug: the library's debug log on stderr */
    const char *max_retries;        /* --max-retries N (text as given) */
    const char *connection_timeout; /* --connection-timeout SECONDS */
    const char *read_timeout;       /* --read-timeout SECONDS */
    const char *deadline;           /* --deadline SECONDS: the most one request takes, retries included */
    int max_retries_n;              /* parsed; -1 when not given */
    long long connection_timeout_s; /* parsed; 0 when not given */
    long long read_timeout_s;       /* parsed; 0 when not given */
    long long deadline_s;           /* parsed; 0 when not given */
} cli_globals;

typedef struct cli_ctx {
    cli_globals g;
    /* The client settings: the flags given, resolved on first use with the
     * environment, the config file and the defaults (the library's one
     * resolver). Made and freed by main. */
    ocisbx_settings *settings;
    bool resolved;
    int resolve_rc;
    char resolve_msg[1024]; /* the resolve's error message ("" when none) */
    /* Made on demand by the helpers below and freed by main. */
    ocisbx_credentials *creds;
    char *endpoint; /* resolved endpoint, no trailing '/' */
    /* Set by the commands that move file contents (file read/write, cp)
     * before they make their client: transfers of 64 KiB or more then show
     * a progress line on stderr when it is a terminal. */
    bool transfer_progress;
    /* cp --parallel: parts of an upload in flight at once (0: the
     * library's default), for cli_open_backend. */
    int parallel_parts;
} cli_ctx;

typedef int (*cli_cmd_fn)(cli_ctx *ctx, int argc, char **argv);

/* ---- the command table (cli_table.c) ----
 * Every command, subcommand and option with its help: the one source of the
 * parsers of the global options and of the API groups, of --help, of
 * `ocisbx completion` and of the man page. The other commands parse their
 * options by hand with cli_opt_value/cli_opt_flag; test_cli_table checks
 * that every name they ask for is in their entry, and the other way round. */
#define CLI_OPT_REQUIRED 0x01u /* the subcommand refuses to run without it (marked '*') */
#define CLI_OPT_REPEAT 0x02u   /* may be given more than once */
#define CLI_OPT_FILE 0x04u     /* the value names a local file (completed as one) */
#define CLI_OPT_DIR 0x08u      /* the value names a local directory */
#define CLI_OPT_BOOL 0x10u     /* a flag that also takes =true or =false */
typedef struct cli_option {
    const char *name;   /* without the leading "--"; NULL ends a list */
    const char *arg;    /* the value's placeholder ("ID"); NULL for a flag */
    const char *help;   /* one line */
    const char *values; /* the fixed values, space-separated (checked, completed); NULL: free */
    unsigned flags;     /* CLI_OPT_* */
    const char *alias;  /* this CLI's older name, still accepted; NULL */
} cli_option;
#define CLI_END_OPTIONS                 \
    {                                   \
        NULL, NULL, NULL, NULL, 0, NULL \
    }

#define CLI_VERB_HIDDEN 0x01u /* accepted, not listed (help, completion, man page) */
#define CLI_VERB_FILES 0x02u  /* the words after the options are local files (completed as such) */
/* A subcommand, or the usage of a command that has none. */
typedef struct cli_verb {
    const char *name;     /* as typed; NULL ends a list */
    const char *id;       /* what the command's code compares; NULL: name */
    const char *shown_as; /* "GROUP VERB" that help and usage show (the OCI CLI's name); NULL: its own */
    const char *summary;  /* one line */
    const char *args;     /* what follows the options in the usage ("-- COMMAND [ARG...]"); NULL: none */
    const char *text;     /* more, for help and the man page (lines end with \n); NULL */
    const cli_option *options;
    unsigned flags; /* CLI_VERB_* */
} cli_verb;
#define CLI_END_VERBS                               \
    {                                               \
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0 \
    }

#define CLI_CMD_OCI 0x01u   /* a group of `oci generative-ai-sandbox` (also typed after that word) */
#define CLI_CMD_ALIAS 0x02u /* this CLI's first names for the OCI groups */
typedef struct cli_command {
    const char *name; /* NULL ends the table */
    const char *summary;
    cli_cmd_fn fn;
    const cli_verb *verbs; /* its subcommands; NULL when it has none */
    const cli_verb *self;  /* a command without subcommands: its usage and options */
    unsigned flags;        /* CLI_CMD_* */
} cli_command;
/* Every command, in the order --help lists them. */
extern const cli_command cli_commands[];

/* A global option of the CLI's own (not a client setting): its help and
 * the field of cli_globals it sets (a const char * for an option with a
 * value, a bool for a flag). */
typedef struct cli_global_option {
    cli_option opt;
    size_t offset; /* in cli_globals; SIZE_MAX: handled by main (--help, --version) */
} cli_global_option;
/* Ends with an entry whose opt.name is NULL. */
extern const cli_global_option cli_global_options[];
/* Every global option as help, the man page and completion show it: the
 * client settings of the library's table (env: their variables, "A, B"),
 * then the CLI's own. */
typedef struct cli_global_view {
    cli_option opt;
    char env[160];
    const char *default_value;
} cli_global_view;
const cli_global_view *cli_global_views(size_t *n);

/* The command named name, or NULL. */
const cli_command *cli_find_command(const char *name);
/* The subcommand named name of c (hidden ones too), or NULL. */
const cli_verb *cli_find_verb(const cli_command *c, const char *name);
/* The option named name (or by its alias) in opts, or NULL. */
const cli_option *cli_find_option(const cli_option *opts, const char *name);
/* "what" is one of the space-separated words in list. */
bool cli_word_in(const char *list, const char *what);

/* ---- help, man page and completion (cli_doc.c, cli_complete.c) ---- */
/* --help of a command (v NULL: the command itself, or the list of a
 * group's subcommands) on stdout. */
void cli_help(const cli_command *c, const cli_verb *v);
/* The usage and the command list (ocisbx --help). oci_only: the groups
 * under `ocisbx generative-ai-sandbox`. */
void cli_help_top(FILE *out, bool oci_only);
/* The man page ocisbx(1) in roff, from the table. */
int cli_man_page(FILE *out);
/* The completion script for shell ("bash", "zsh", "fish") on out; -1 for
 * another shell. */
int cli_completion_script(FILE *out, const char *shell);
int cmd_completion(cli_ctx *ctx, int argc, char **argv);
/* Set by test_cli_table only: told every option name a command's parser
 * asks cli_opt_value (value true) or cli_opt_flag (value false) about. */
extern void (*cli_opt_probe)(const char *name, bool value);

/* Entry points (cmd_raw_request.c; the four others in their own files). */
int cmd_raw_request(cli_ctx *ctx, int argc, char **argv);
int cmd_sandbox(cli_ctx *ctx, int argc, char **argv);
int cmd_command(cli_ctx *ctx, int argc, char **argv);
int cmd_file(cli_ctx *ctx, int argc, char **argv);
int cmd_snapshot(cli_ctx *ctx, int argc, char **argv);
/* The workspace backend's commands (cmd_backend.c). */
int cmd_create(cli_ctx *ctx, int argc, char **argv);
int cmd_close(cli_ctx *ctx, int argc, char **argv);
int cmd_exec(cli_ctx *ctx, int argc, char **argv);
int cmd_cp(cli_ctx *ctx, int argc, char **argv);
int cmd_evidence(cli_ctx *ctx, int argc, char **argv);
/* ocisbx fleet exec (cmd_fleet.c). */
int cmd_fleet(cli_ctx *ctx, int argc, char **argv);
int cmd_harness(cli_ctx *ctx, int argc, char **argv);

/* ---- the backend from the command line (cmd_backend.c) ---- */
/* "NAME=VALUE" of --env / --secret-env into the two halves (the name copied
 * into buf of cap bytes, *value pointing into arg); usage error naming cmd
 * and opt ("--env", "--secret-env"), never showing the value. */
int cli_split_env(const char *cmd, const char *opt, const char *arg, char *buf, size_t cap, const char **value);
/* --secret-env's argument (cli_common.c): "NAME=VALUE" as cli_split_env
 * splits it, or "NAME" alone, the value then this process's own variable
 * NAME (*value points into the environment), so that it is not on the
 * command line; unset: a usage error that shows neither name nor value. */
int cli_secret_env(const char *cmd, const char *arg, char *buf, size_t cap, const char **value);
/* The backend a command names: --local-dir (isolate, network) or else
 * --sandbox-id (connected with the ctx's client, never deleted; *client
 * gets that client, freed by the caller after the backend). Error printed. */
int cli_open_backend(cli_ctx *ctx, const char *sandbox_id, const char *local_dir, int isolate, int network,
                     ocisbx_client **client, ocisbx_backend **b);
/* Checks the setup, one line per check (cmd_doctor.c). */
int cmd_doctor(cli_ctx *ctx, int argc, char **argv);

/* ---- errors ---- */
/* Notes whether retries are on and, when stderr is a terminal, prints a
 * progress line for each retry wait (from the transport's retry callback);
 * with --debug sets the library's debug log on stderr (main calls it once). */
void cli_progress_setup(const cli_ctx *ctx);
/* The library's warnings (and errors) on stderr also without --debug, for
 * commands whose warnings matter (harness: a host shell nothing gates). */
void cli_log_warnings(const cli_ctx *ctx);
/* ---- transfer progress (cli_progress.c) ---- */
/* A transfer of total bytes (0: known from the answer) in one direction
 * that may take several requests (parts): one line for all of them. */
void cli_transfer_begin(int64_t total, bool up);
/* The transport's progress callback (installed on a terminal only). */
void cli_transfer_progress(int64_t down_now, int64_t down_total, int64_t up_now, int64_t up_total, void *ud);
/* A retry wait: the attempt's bytes will come again (not counted twice). */
void cli_transfer_retrying(void);
/* Ends the progress line of the last transfer (its final size and a
 * newline) if one was drawn; a no-op otherwise. Commands call it after a
 * transfer, before printing anything else. */
void cli_transfer_done(void);
/* SIGINT/SIGTERM handlers that set a flag (main installs them once). */
void cli_signals_install(void);
/* The cancel callback given to every transport: non-zero once a signal came. */
int cli_cancel_requested(void *user_data);
/* 0 when no signal came; else prints "ocisbx: interrupted (SIGINT)" once and
 * returns 128 + the signal (130, 143). */
int cli_interrupt_status(void);

/* Prints "ocisbx: <message>" (one line) on stderr; returns exit_code. */
int cli_error(int exit_code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prints the library's last error message as above (or the stdout failure
 * when stdout has failed) and returns CLI_EXIT_FAIL; after a signal, the
 * one "interrupted" line and 128 + the signal instead. Reads the error's
 * fields (attempts), never its wording. */
int cli_fail_last(void);
/* stdout could not be written: prints "ocisbx: writing to standard output
 * failed: <reason>" once per process; returns CLI_EXIT_FAIL. */
int cli_stdout_failed(void);
/* The one check of every command's output, made by main before exiting:
 * flushes stdout; on a write or flush failure reports it (once) and turns
 * a success status into CLI_EXIT_FAIL. Returns the exit status. */
int cli_finish_stdout(int status);

/* ---- option parsing for command files ---- */
/* Matches argv[*i] against "--name VALUE" or "--name=VALUE". Returns 1 and
 * sets *value (advancing *i past a separate value), 0 when it is another
 * argument, -1 after printing a usage error when the value is missing. */
int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value);
/* True when argv[i] is exactly "--name". */
bool cli_opt_flag(const char *arg, const char *name);
/* Prints "ocisbx: <cmd>: unknown option <arg>" and returns CLI_EXIT_USAGE. */
int cli_unknown_option(const char *cmd, const char *arg);

/* ---- configuration, credentials, transport (cli_settings.c) ---- */
/* Matches argv[*i] against the client settings' options of the library's
 * table (--profile NAME, --region R, ...) and gives the value to
 * ctx->settings. 1: taken, 0: another argument, -1: a usage error printed. */
int cli_setting_option(cli_ctx *ctx, int argc, char **argv, int *i);
/* The help lines of those options, from the table. */
void cli_settings_help(FILE *out);
/* The help line of one setting's option ("runtime": --runtime NAME, its
 * help, variables and default), for a command's --help. */
void cli_setting_help(FILE *out, const char *name);
/* A resolved setting ("project_id", "region", ...), resolving once (a
 * config file that fails leaves the other sources' values readable). */
const char *cli_setting(cli_ctx *ctx, const char *name);
/* 0 when the settings resolved; else prints the resolver's error (it names
 * the file, the profile and the variable that chose them) and returns
 * CLI_EXIT_FAIL. */
int cli_settings_ok(cli_ctx *ctx);
/* The config file's profile (NULL for a principal); prints and returns
 * CLI_EXIT_FAIL on failure. */
int cli_config(cli_ctx *ctx, const ocisbx_config **out);
/* The credentials of the resolved auth, made once (cached in ctx; not a new
 * reference). Prints the error and returns CLI_EXIT_FAIL on failure. */
int cli_credentials(cli_ctx *ctx, ocisbx_credentials **out);
/* The region: the resolved one (flag, variable, profile), else the
 * provider's; resolved to a full name. NULL on failure (error printed). */
const char *cli_region(cli_ctx *ctx);
/* The service endpoint: the resolved one, else the library's
 * ocisbx_endpoint_for_region(cli_region(ctx)). No trailing '/'. Prints and
 * returns CLI_EXIT_FAIL on failure. */
int cli_endpoint(cli_ctx *ctx, const char **out);
/* A signed transport with the ctx's credentials and --ca-bundle. Plain
 * http is allowed only when url (the endpoint or --url) is http:// to a
 * loopback host. Prints and returns CLI_EXIT_FAIL on failure; free the
 * handle with ocisbx_http_free. */
int cli_http(cli_ctx *ctx, const char *url, ocisbx_http **out);
/* Applies the global transport options (--no-retry, --max-retries,
 * --connection-timeout, --read-timeout, the resolved CA bundle) to o. Returns 0 or the
 * library's error code (its message set). */
int cli_http_apply_globals(const cli_ctx *ctx, ocisbx_http_options *o);

/* ---- output ---- */
/* Pretty-printed JSON as the OCI CLI prints it (2-space indentation,
 * "key": value) and a newline on stdout. */
int cli_print_json(const cJSON *json);
/* Parses text as JSON and pretty-prints it; text that is not JSON is
 * written as it is. */
int cli_print_json_text(const char *text, size_t len);
/* Reads a whole file ("-" for stdin) into memory; error printed. */
int cli_read_file(const char *path, char **data, size_t *len);

/* ---- the api commands' shared helpers (cli_api.c) ---- */
/* The options of sandbox/command/file/snapshot; NULL when not given. */
#define CLI_API_MAX_REPEAT 64
typedef struct cli_api_list {
    const char *v[CLI_API_MAX_REPEAT];
    int n;
} cli_api_list;
typedef struct cli_api_opts {
    const char *sandbox_id, *project_id, *command_id, *snapshot_id, *display_name, *runtime, *shape;
    const char *expires_in_minutes, *additional_duration, *command, *timeout, *cwd, *file_path;
    const char *from_file, *to_file, *from_seq, *limit, *page, *lifecycle_state;
    const char *max_wait_seconds, *wait_interval_seconds, *expiration_duration, *warmpool_name;
    const char *if_match, *sort_by, *sort_order;
    const char *output; /* --output json|table */
    int is_force;       /* -1 not given */
    bool all;
    cli_api_list wait_for_state; /* --wait-for-state, repeatable: the wait ends at any of them */
    cli_api_list env;            /* NAME=VALUE */
    cli_api_list args;           /* --arg and what follows -- */
} cli_api_opts;
/* Parses argv[0..argc) with the options of one subcommand (its table entry;
 * fixed values checked). Prints usage errors. */
int cli_api_parse(const char *cmd, int argc, char **argv, const cli_option *opts, cli_api_opts *o);
int cli_api_require(const char *cmd, const char *name, const char *value);
int cli_api_client(cli_ctx *ctx, ocisbx_client **out);
int cli_api_print(int rc, char *json);
/* An ISO 8601 duration option ("PT30M"): 0, or a usage error naming it. */
int cli_api_duration(const char *cmd, const char *name, const char *value);
int cli_api_int(const char *cmd, const char *name, const char *value, long long min, long long max, long long *out);
int cli_api_wait_ms(const char *cmd, const cli_api_opts *o, int64_t *timeout_ms, int64_t *poll_ms);
int cli_api_unknown_sub(const char *cmd, const char *sub, const char *subs);
/* --help (or -h) before any "--" in argv[1..argc). */
bool cli_api_wants_help(int argc, char **argv);

/* The columns of a resource's table output; cols ends with {NULL, NULL}. */
typedef struct cli_column {
    const char *header, *key;
} cli_column;
/* A list's output: --output table prints the items (the list's "items"
 * array) as aligned columns under a header, a missing field as "-" (and a
 * next page token on stderr); otherwise (json, the default) the list as
 * JSON. */
int cli_api_print_list(const cli_api_opts *o, const cJSON *list, const cli_column *cols);
/* A list's options with what every list takes: --limit, --page, --sort-by,
 * --sort-order. 0, or the library's status (the last error). */
int cli_api_list_options(const cli_api_opts *o, long long limit, ocisbx_list_options **out);
/* Appends one item's JSON (json, from a *_to_json call that returned rc)
 * to items; frees json. Returns rc, or OCISBX_ENOMEM (set) when the item
 * could not be added. */
int cli_api_list_add(cJSON *items, int rc, char *json);
/* One resource's output (get): its JSON text, or with --output table one
 * row under the header. Frees json; rc non-zero: the last error. */
int cli_api_print_one(const cli_api_opts *o, int rc, char *json, const cli_column *cols);

/* The common start of every API command group: finds the subcommand
 * argv[1] of the group argv[0] in the command table, refuses a missing or
 * unknown one (naming the group's subcommands), and parses the options
 * after it into o. cmd gets "group sub" as typed (cap >= 64). Returns the
 * subcommand (compare its id with cli_verb_id), or NULL with *exit_code
 * set. (--help was answered by main.) */
const cli_verb *cli_api_select(int argc, char **argv, cli_api_opts *o, char *cmd, size_t cmd_cap, int *exit_code);
/* What the code compares: v->id, else v->name. */
const char *cli_verb_id(const cli_verb *v);

#endif
