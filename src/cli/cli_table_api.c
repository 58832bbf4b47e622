/* The command table, part 1: the API groups under the OCI CLI's names
 * (`oci generative-ai-sandbox GROUP VERB`) and this CLI's first names for
 * them (command, file, snapshot), with every option of every subcommand.
 * cli_api_parse parses from these rows; --help, the man page and the
 * completion scripts are made from them. */
#include <stddef.h>

#include "cli.h"
#include "cli_table.h"

/* ---- the options, one spelling each ---- */
#define SANDBOX_STATES "CREATING RUNNING UPDATING STOPPING STOPPED SUSPENDING SUSPENDED RESUMING FAILED DELETED"
#define SNAPSHOT_STATES "CREATING ACTIVE DELETING DELETED FAILED"
/* a command has no lifecycle state on the wire: the one the client derives (docs/wire.md) */
#define COMMAND_STATES "NOT_STARTED RUNNING FINISHED FINISHED_NO_EXIT_CODE"

#define O_SANDBOX_ID(f)                                       \
    {                                                         \
        "sandbox-id", "ID", "the sandbox's id", NULL, f, NULL \
    }
#define O_COMMAND_ID(f)                                       \
    {                                                         \
        "command-id", "ID", "the command's id", NULL, f, NULL \
    }
#define O_SNAPSHOT_ID(f)                                        \
    {                                                           \
        "snapshot-id", "ID", "the snapshot's id", NULL, f, NULL \
    }
#define O_PROJECT_ID                                                                     \
    {                                                                                    \
        "project-id", "OCID", "the project (else OCI_SANDBOX_PROJECT_ID)", NULL, 0, NULL \
    }
#define O_DISPLAY_NAME(f)                                       \
    {                                                           \
        "display-name", "NAME", "a display name", NULL, f, NULL \
    }
#define O_IF_MATCH                                                                                    \
    {                                                                                                 \
        "if-match", "ETAG", "act only if the resource's etag is still ETAG (else 412)", NULL, 0, NULL \
    }
#define O_ENV                                                                                   \
    {                                                                                           \
        "env", "NAME=VALUE", "an environment variable (repeatable)", NULL, CLI_OPT_REPEAT, NULL \
    }
#define O_WAIT(states)                                                                                              \
    {"wait-for-state",                                                                                              \
     "STATE",                                                                                                       \
     "wait until the resource reaches STATE (repeatable: the first of them reached ends the wait)",                 \
     states,                                                                                                        \
     CLI_OPT_REPEAT,                                                                                                \
     NULL},                                                                                                         \
        {"max-wait-seconds", "N", "give up waiting after N seconds (default 1200)", NULL, 0, NULL},                 \
    {                                                                                                               \
        "wait-interval-seconds", "N", "seconds between checks while waiting (default poll_interval: 2; 0: 200 ms)", \
            NULL, 0, NULL                                                                                           \
    }
#define O_OUTPUT                                                                                                \
    {                                                                                                           \
        "output", "FORMAT", "json (the default) or table: aligned columns with a header", "json table", 0, NULL \
    }
#define O_PAGING(sort_fields)                                                                      \
    {"sort-by", "FIELD", "sort the list by FIELD", sort_fields, 0, NULL},                          \
        {"sort-order", "ORDER", "the order of the sort", "ASC DESC", 0, NULL},                     \
        {"limit", "N", "at most N items per page (1-1000)", NULL, 0, NULL},                        \
        {"page", "TOKEN", "the page token of a previous answer (its opcNextPage)", NULL, 0, NULL}, \
        {"all", NULL, "follow every page", NULL, 0, NULL}, O_OUTPUT
#define O_FROM_SEQ                                                                             \
    {                                                                                          \
        "from-seq", "N", "first event sequence number (absent: from the start)", NULL, 0, NULL \
    }

/* ---- sandbox, sandbox-collection ---- */
#define CREATE_OPTS                                                                                                   \
    O_PROJECT_ID, O_DISPLAY_NAME(0), {"runtime", "NAME", "the runtime image, e.g. python-3.11", NULL, 0, NULL},       \
        {"shape", "NAME", "the shape", "SMALL MEDIUM LARGE", 0, NULL},                                                \
        {"expires-in-minutes", "N", "lifetime in minutes, 1-2880 (48 h), or -1: no automatic expiry", NULL, 0, NULL}, \
        {"expiration-duration", "DURATION", "ISO 8601 lifetime, e.g. PT90M (sent as whole minutes)", NULL, 0, NULL},  \
        O_ENV,                                                                                                        \
    {                                                                                                                 \
        "warmpool-name", "NAME", "take the sandbox from this warm pool", NULL, 0, NULL                                \
    }

static const cli_option sandbox_create[] = {
    CREATE_OPTS,
    {"source-snapshot-id", "ID", "start from this snapshot's files", NULL, 0, "snapshot-id"},
    O_WAIT(SANDBOX_STATES),
    O_OUTPUT,
    CLI_END_OPTIONS,
};
static const cli_option sandbox_create_from_snapshot[] = {
    CREATE_OPTS,
    {"source-snapshot-id", "ID", "start from this snapshot's files", NULL, CLI_OPT_REQUIRED, "snapshot-id"},
    O_WAIT(SANDBOX_STATES),
    O_OUTPUT,
    CLI_END_OPTIONS,
};
static const cli_option sandbox_get[] = {O_SANDBOX_ID(CLI_OPT_REQUIRED), O_OUTPUT, CLI_END_OPTIONS};
static const cli_option sandbox_list[] = {
    O_PROJECT_ID,
    O_DISPLAY_NAME(0),
    {"lifecycle-state", "STATE", "only sandboxes in this state", SANDBOX_STATES, 0, NULL},
    O_PAGING("timeCreated displayName"),
    CLI_END_OPTIONS,
};
static const cli_option sandbox_update[] = {
    O_SANDBOX_ID(CLI_OPT_REQUIRED),
    O_DISPLAY_NAME(CLI_OPT_REQUIRED),
    O_IF_MATCH,
    O_WAIT(SANDBOX_STATES),
    O_OUTPUT,
    CLI_END_OPTIONS,
};
static const cli_option sandbox_stop[] = {
    O_SANDBOX_ID(CLI_OPT_REQUIRED),
    {"is-force", NULL, "stop at once, no graceful shutdown (also --is-force=true|false)", NULL, CLI_OPT_BOOL, NULL},
    O_IF_MATCH,
    O_WAIT(SANDBOX_STATES),
    O_OUTPUT,
    CLI_END_OPTIONS,
};
static const cli_option sandbox_wait_only[] = {O_SANDBOX_ID(CLI_OPT_REQUIRED), O_WAIT(SANDBOX_STATES), O_OUTPUT,
                                               CLI_END_OPTIONS};
static const cli_option sandbox_extend[] = {
    O_SANDBOX_ID(CLI_OPT_REQUIRED),
    {"additional-duration", "DURATION", "ISO 8601 time to add, e.g. PT30M", NULL, CLI_OPT_REQUIRED, NULL},
    O_IF_MATCH,
    O_OUTPUT,
    CLI_END_OPTIONS,
};

#define LIST_SANDBOXES "list sandboxes (ListSandboxes)"
#define V_SANDBOX_VERBS                                                                                         \
    {"create",       NULL,                                                                                      \
     NULL,           "create a sandbox (CreateSandbox); printed as CREATING, or once in a state waited for",    \
     NULL,           NULL,                                                                                      \
     sandbox_create, 0},                                                                                        \
        {"create-from-snapshot",       NULL, NULL, "create a sandbox from a snapshot's files", NULL, NULL,      \
         sandbox_create_from_snapshot, 0},                                                                      \
        {"get", NULL, NULL, "print a sandbox (GetSandbox)", NULL, NULL, sandbox_get, 0},                        \
        {"update", NULL, NULL, "rename a sandbox (UpdateSandbox)", NULL, NULL, sandbox_update, 0},              \
        {"stop", NULL, NULL, "stop a sandbox (StopSandbox)", NULL, NULL, sandbox_stop, 0},                      \
        {"delete", NULL, NULL, "delete a sandbox (DeleteSandbox)", NULL, NULL, sandbox_wait_only, 0},           \
        {"extend", NULL, NULL, "lengthen a sandbox's lifetime (ExtendSandbox)", NULL, NULL, sandbox_extend, 0}, \
        {"suspend", NULL, NULL, "suspend a sandbox (SuspendSandbox)", NULL, NULL, sandbox_wait_only, 0},        \
    {                                                                                                           \
        "resume", NULL, NULL, "resume a suspended sandbox (ResumeSandbox)", NULL, NULL, sandbox_wait_only, 0    \
    }

const cli_verb cli_sandbox_verbs[] = {
    V_SANDBOX_VERBS,
    /* this CLI's first name */
    {"list", NULL, "sandbox-collection list", LIST_SANDBOXES, NULL, NULL, sandbox_list, CLI_VERB_HIDDEN},
    CLI_END_VERBS,
};
const cli_verb cli_sandbox_collection_verbs[] = {
    {"list", NULL, NULL, LIST_SANDBOXES, NULL, NULL, sandbox_list, 0},
    CLI_END_VERBS,
};

/* ---- sandbox-command* and the alias group command ---- */
#define RUN_OPTS                                                                                                   \
    O_SANDBOX_ID(CLI_OPT_REQUIRED), {"command", "TEXT", "the shell command to run", NULL, CLI_OPT_REQUIRED, NULL}, \
        O_ENV, {"cwd", "PATH", "working directory (absolute, under /workspace)", NULL, 0, NULL},                   \
        {"timeout", "DURATION", "ISO 8601 limit of the command, e.g. PT5M", NULL, 0, NULL},                        \
    {                                                                                                              \
        "arg", "V", "an argument of the command (repeatable; or after --)", NULL, CLI_OPT_REPEAT, NULL             \
    }

static const cli_option command_run[] = {RUN_OPTS, O_WAIT(COMMAND_STATES), O_OUTPUT, CLI_END_OPTIONS};
static const cli_option command_run_plain[] = {RUN_OPTS, O_OUTPUT, CLI_END_OPTIONS};
static const cli_option command_run_stream[] = {RUN_OPTS, CLI_END_OPTIONS}; /* its output is the command's */
static const cli_option command_get[] = {O_SANDBOX_ID(CLI_OPT_REQUIRED), O_COMMAND_ID(CLI_OPT_REQUIRED),
                                         O_WAIT(COMMAND_STATES), O_OUTPUT, CLI_END_OPTIONS};
static const cli_option command_list[] = {O_SANDBOX_ID(CLI_OPT_REQUIRED), O_COMMAND_ID(0),
                                          O_PAGING("timeCreated timeStarted timeFinished"), CLI_END_OPTIONS};
static const cli_option command_events[] = {O_SANDBOX_ID(CLI_OPT_REQUIRED), O_COMMAND_ID(CLI_OPT_REQUIRED),
                                            O_FROM_SEQ, CLI_END_OPTIONS};
static const cli_option command_cancel[] = {O_SANDBOX_ID(CLI_OPT_REQUIRED), O_COMMAND_ID(CLI_OPT_REQUIRED),
                                            CLI_END_OPTIONS};

#define RUN_ARGS "[-- ARG...]"
#define S_RUN "start a command (RunSandboxCommand); prints its id, or the command once in a state waited for"
#define S_RUN_AND_WAIT "run a command and print it when it has finished, with its output"
#define S_RUN_AND_STREAM "run a command, its output on stdout and stderr as it comes; exits with its exit code"
#define S_GET_COMMAND "print a command (GetSandboxCommand)"
#define S_CANCEL "cancel a running command"
#define S_LIST_COMMANDS "list a sandbox's commands"
#define S_STREAM "a command's output as it comes, from --from-seq; exits with its exit code"
#define S_GET_OUTPUT "print the output a command has written so far"

const cli_verb cli_sandbox_command_verbs[] = {
    {"run", NULL, NULL, S_RUN, RUN_ARGS, NULL, command_run, 0},
    {"run-and-wait", NULL, NULL, S_RUN_AND_WAIT, RUN_ARGS, NULL, command_run_plain, 0},
    {"get", NULL, NULL, S_GET_COMMAND, NULL, NULL, command_get, 0},
    {"cancel", NULL, NULL, S_CANCEL, NULL, NULL, command_cancel, 0},
    CLI_END_VERBS,
};
const cli_verb cli_sandbox_command_collection_verbs[] = {
    {"list", NULL, NULL, S_LIST_COMMANDS, NULL, NULL, command_list, 0},
    CLI_END_VERBS,
};
const cli_verb cli_sandbox_command_event_verbs[] = {
    {"run-and-stream", NULL, NULL, S_RUN_AND_STREAM, RUN_ARGS, NULL, command_run_stream, 0},
    {"stream", "events", NULL, S_STREAM, NULL, NULL, command_events, 0},
    CLI_END_VERBS,
};
const cli_verb cli_sandbox_command_output_verbs[] = {
    {"get-output", "output", NULL, S_GET_OUTPUT, NULL, NULL, command_events, 0},
    CLI_END_VERBS,
};
const cli_verb cli_command_verbs[] = {
    {"run", NULL, "sandbox-command run", S_RUN, RUN_ARGS, NULL, command_run, 0},
    {"run-and-wait", NULL, "sandbox-command run-and-wait", S_RUN_AND_WAIT, RUN_ARGS, NULL, command_run_plain, 0},
    {"run-and-stream", NULL, "sandbox-command-event run-and-stream", S_RUN_AND_STREAM, RUN_ARGS, NULL,
     command_run_stream, 0},
    {"get", NULL, "sandbox-command get", S_GET_COMMAND, NULL, NULL, command_get, 0},
    {"list", NULL, "sandbox-command-collection list", S_LIST_COMMANDS, NULL, NULL, command_list, 0},
    {"output", NULL, "sandbox-command-output get-output", S_GET_OUTPUT, NULL, NULL, command_events, 0},
    {"events", NULL, "sandbox-command-event stream", S_STREAM, NULL, NULL, command_events, 0},
    {"cancel", NULL, "sandbox-command cancel", S_CANCEL, NULL, NULL, command_cancel, 0},
    /* the OCI names work under the alias group too */
    {"get-output", "output", "sandbox-command-output get-output", S_GET_OUTPUT, NULL, NULL, command_events,
     CLI_VERB_HIDDEN},
    {"stream", "events", "sandbox-command-event stream", S_STREAM, NULL, NULL, command_events, CLI_VERB_HIDDEN},
    CLI_END_VERBS,
};

/* ---- sandbox-file and the alias group file ---- */
static const cli_option file_read[] = {
    O_SANDBOX_ID(CLI_OPT_REQUIRED),
    {"sandbox-file-path", "PATH", "the file in the sandbox (absolute, under /workspace)", NULL, CLI_OPT_REQUIRED,
     "file-path"},
    {"local-file", "PATH", "local file to write ('-' or absent: standard output, after the hash check)", NULL,
     CLI_OPT_FILE, "to-file"},
    CLI_END_OPTIONS,
};
static const cli_option file_write[] = {
    O_SANDBOX_ID(CLI_OPT_REQUIRED),
    {"sandbox-file-path", "PATH", "the file in the sandbox (absolute, under /workspace)", NULL, CLI_OPT_REQUIRED,
     "file-path"},
    {"file", "PATH", "local file to send ('-': standard input)", NULL, CLI_OPT_REQUIRED | CLI_OPT_FILE, "from-file"},
    CLI_END_OPTIONS,
};
#define S_READ "read a file of the sandbox, checked against its SHA-256"
#define S_WRITE "write a file into the sandbox, its SHA-256 checked"
const cli_verb cli_sandbox_file_verbs[] = {
    {"read", NULL, NULL, S_READ, NULL, NULL, file_read, 0},
    {"write", NULL, NULL, S_WRITE, NULL, NULL, file_write, 0},
    CLI_END_VERBS,
};
const cli_verb cli_file_verbs[] = {
    {"read", NULL, "sandbox-file read", S_READ, NULL, NULL, file_read, 0},
    {"write", NULL, "sandbox-file write", S_WRITE, NULL, NULL, file_write, 0},
    CLI_END_VERBS,
};

/* ---- sandbox-snapshot* and the alias group snapshot ---- */
/* CreateSandboxSnapshotDetails is {sandboxId, expirationDuration} [public]: no --display-name */
static const cli_option snapshot_create[] = {
    O_SANDBOX_ID(CLI_OPT_REQUIRED),
    {"expiration-duration", "DURATION", "ISO 8601 lifetime of the snapshot, e.g. P7D", NULL, 0, NULL},
    O_WAIT(SNAPSHOT_STATES),
    O_OUTPUT,
    CLI_END_OPTIONS,
};
static const cli_option snapshot_get[] = {O_SNAPSHOT_ID(CLI_OPT_REQUIRED), O_OUTPUT, CLI_END_OPTIONS};
static const cli_option snapshot_delete[] = {O_SNAPSHOT_ID(CLI_OPT_REQUIRED), O_IF_MATCH, O_WAIT(SNAPSHOT_STATES),
                                             O_OUTPUT, CLI_END_OPTIONS};
static const cli_option snapshot_list[] = {
    O_PROJECT_ID,
    O_DISPLAY_NAME(0),
    O_SANDBOX_ID(0),
    O_SNAPSHOT_ID(0),
    {"lifecycle-state", "STATE", "only snapshots in this state", SNAPSHOT_STATES, 0, NULL},
    O_PAGING("timeCreated displayName"),
    CLI_END_OPTIONS,
};
#define S_SNAP_CREATE "snapshot a sandbox's files"
#define S_SNAP_GET "print a snapshot"
#define S_SNAP_DELETE "delete a snapshot"
#define S_SNAP_LIST "list snapshots"
const cli_verb cli_sandbox_snapshot_verbs[] = {
    {"create", NULL, NULL, S_SNAP_CREATE, NULL, NULL, snapshot_create, 0},
    {"get", NULL, NULL, S_SNAP_GET, NULL, NULL, snapshot_get, 0},
    {"delete", NULL, NULL, S_SNAP_DELETE, NULL, NULL, snapshot_delete, 0},
    CLI_END_VERBS,
};
const cli_verb cli_sandbox_snapshot_collection_verbs[] = {
    {"list", NULL, NULL, S_SNAP_LIST, NULL, NULL, snapshot_list, 0},
    CLI_END_VERBS,
};
const cli_verb cli_snapshot_verbs[] = {
    {"create", NULL, "sandbox-snapshot create", S_SNAP_CREATE, NULL, NULL, snapshot_create, 0},
    {"get", NULL, "sandbox-snapshot get", S_SNAP_GET, NULL, NULL, snapshot_get, 0},
    {"list", NULL, "sandbox-snapshot-collection list", S_SNAP_LIST, NULL, NULL, snapshot_list, 0},
    {"delete", NULL, "sandbox-snapshot delete", S_SNAP_DELETE, NULL, NULL, snapshot_delete, 0},
    CLI_END_VERBS,
};
