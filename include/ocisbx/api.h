/** @file
 * libocisbx api layer: the REST client for every generative_ai_sandbox
 * operation (see docs/wire.md for the wire contract).
 *
 * - A client (ocisbx_client) is made from options: the endpoint (or a
 *   region), the API version, the credentials and the http transport
 *   options. One client is used by one thread at a time; it reuses its
 *   connection across calls.
 * - Models are opaque and read with typed getters. Strings they return are
 *   owned by the model (valid until it is freed); absent fields read as NULL
 *   (strings) or "not present" (the int getters return 0 and leave *out).
 *   Every model can be had as its JSON text (_to_json, camelCase field
 *   names exactly as the service sends them, unknown fields kept).
 * - Request details are opaque builders with setters, or made from JSON
 *   text (_from_json). Any operation can also be called with JSON in and
 *   JSON out (ocisbx_client_call_json), for FFI users.
 * - Every call returns 0 or a negative OCISBX_E* code; the error object
 *   (ocisbx_error_last) holds the HTTP status, the service's code and
 *   message and the opc-request-id of a failed answer. */
#ifndef OCISBX_API_H
#define OCISBX_API_H

#include "common.h"
#include "auth.h"
#include "http.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The largest request body the service takes [public]; a larger file write
 * is refused before sending (write in parts: the backend layer does). */
#define OCISBX_FILE_PART_MAX (8 * 1024 * 1024)
/** CreateSandboxDetails.expiresInMinutes: 1..2880 (48 h), or -1, which
 * disables automatic expiration [public] (passed through as given). */
#define OCISBX_EXPIRES_IN_MINUTES_MAX 2880
/** expiresInMinutes that disables automatic expiration [public]. */
#define OCISBX_EXPIRES_NEVER (-1)
/** The API version (path segment) used when none is set. */
#define OCISBX_DEFAULT_API_VERSION "20231130"

/** The service endpoint of a region: `"https://inference.generativeai.<region>.oci.<realm domain>"`
 * (the region's short code or name, resolved as ocisbx_region_resolve does;
 * no trailing '/'). The one place that builds it: the client without an
 * endpoint, and the CLI, use it. Free *out with ocisbx_free. */
OCISBX_API int ocisbx_endpoint_for_region(const char *region, char **out);

/* ---- client options ------------------------------------------------------ */
/** Options of a client (ocisbx_client_new). */
typedef struct ocisbx_client_options ocisbx_client_options;
/** Makes empty client options (everything from the environment); free with ocisbx_client_options_free. */
OCISBX_API int ocisbx_client_options_new(ocisbx_client_options **out);
/** Frees client options (the credentials they reference are released). */
OCISBX_API void ocisbx_client_options_free(ocisbx_client_options *o);
/** Base URL ("https://host[:port][/prefix]"). When unset: $OCI_SANDBOX_ENDPOINT,
 * else `https://inference.generativeai.<region>.oci.<realm domain>` with the
 * region from set_region, $OCI_SANDBOX_REGION or $OCI_CLI_REGION, or the
 * credentials (the variables of the settings table, settings.h; a program
 * that wants the config file's region and the rest of the precedence builds
 * its client with ocisbx_settings_client_new). */
OCISBX_API int ocisbx_client_options_set_endpoint(ocisbx_client_options *o, const char *url);
/** Region name or short code ("us-chicago-1", "ord"). */
OCISBX_API int ocisbx_client_options_set_region(ocisbx_client_options *o, const char *region);
/** Path segment after the endpoint. Unset: $OCI_SANDBOX_API_VERSION, else
 * "20231130". */
OCISBX_API int ocisbx_client_options_set_api_version(ocisbx_client_options *o, const char *version);
/** Referenced, not copied; overrides credentials set in the http options. */
OCISBX_API int ocisbx_client_options_set_credentials(ocisbx_client_options *o, ocisbx_credentials *creds);
/** Transport options (timeouts, retries, CA bundle, ...): copied. */
OCISBX_API int ocisbx_client_options_set_http_options(ocisbx_client_options *o, const ocisbx_http_options *h);
/** Ask event streams for application/x-ndjson instead of text/event-stream
 * (both are parsed whatever the answer is). */
OCISBX_API int ocisbx_client_options_set_prefer_ndjson(ocisbx_client_options *o, int prefer);
/** How often an event stream is resumed without receiving a new event before
 * giving up (default 8). */
OCISBX_API int ocisbx_client_options_set_stream_resume_limit(ocisbx_client_options *o, int limit);
/** The most bytes a file read may bring (0, the default: no limit for reads
 * to a path or a callback; a read into memory, ocisbx_client_read_file, is
 * limited to OCISBX_READ_BUFFER_MAX unless this is set). A larger file
 * fails with OCISBX_ETOOLARGE, and nothing of it is kept. */
OCISBX_API int ocisbx_client_options_set_max_download_bytes(ocisbx_client_options *o, int64_t max);
/** The default limit of a file read into memory (ocisbx_client_read_file). */
#define OCISBX_READ_BUFFER_MAX ((int64_t)256 * 1024 * 1024)
/** The client's cancel callback (overrides one in the http options): asked by
 * its transport (before each attempt, during retry waits and transfers), by
 * the waiters between polls and by the streams between resumptions. Non-zero
 * ends the blocking call with OCISBX_ECANCELED. */
OCISBX_API int ocisbx_client_options_set_cancel(ocisbx_client_options *o, ocisbx_cancel_fn fn, void *user_data);

/* ---- the client ------------------------------------------------------------ */
/** A REST client of the service. */
typedef struct ocisbx_client ocisbx_client;
/** opts NULL: everything from the environment; credentials are then needed
 * in the http options or the call fails unsigned. */
OCISBX_API int ocisbx_client_new(const ocisbx_client_options *opts, ocisbx_client **out);
/** Frees a client and closes its connection. */
OCISBX_API void ocisbx_client_free(ocisbx_client *c);
/** The resolved endpoint (no trailing '/') and API version. */
OCISBX_API const char *ocisbx_client_endpoint(const ocisbx_client *c);
/** The resolved API version (the path segment after the endpoint). */
OCISBX_API const char *ocisbx_client_api_version(const ocisbx_client *c);
/** opc-request-id of the last call's answer (or the one sent), or NULL. */
OCISBX_API const char *ocisbx_client_last_request_id(const ocisbx_client *c);
/** The opc-request-id the next call sends (letters, digits, '_' and '-'),
 * instead of a generated one; used once. NULL clears it. */
OCISBX_API int ocisbx_client_set_next_request_id(ocisbx_client *c, const char *id);

/** A deadline for every call of this client, on the monotonic clock of
 * ocisbx_time_monotonic_ms (0: none, the default): a call still blocked
 * then (a request in flight, a retry wait, a stream, a waiter) ends with
 * OCISBX_ECANCELED, as if the cancel callback had said so, and so does
 * every call made after it until the deadline is changed. For bounding
 * one operation: set it before, clear it after. */
OCISBX_API int ocisbx_client_set_deadline(ocisbx_client *c, int64_t monotonic_ms);
/** A second cancel callback, asked along with the client's own (either one
 * stops the call, OCISBX_ECANCELED), until set back to NULL: for a layer
 * that bounds its own operation on a client it was given (the backend
 * passes its cancel callback this way while it runs a command). */
OCISBX_API int ocisbx_client_set_operation_cancel(ocisbx_client *c, ocisbx_cancel_fn fn, void *user_data);
/** While hold is 1, the cancel callbacks (the client's and the operation's)
 * are not asked, only the deadline ends a call; 0 asks them again. For the
 * cleanup a canceled operation still owes: after a Ctrl-C, the backend
 * cancels the remote command this way, bounded by a short deadline. */
OCISBX_API int ocisbx_client_hold_cancel(ocisbx_client *c, int hold);
/** 1 when the client has a deadline and it has passed (to tell a call that
 * ended at its deadline from one the cancel callback stopped), else 0. */
OCISBX_API int ocisbx_client_deadline_passed(const ocisbx_client *c);

/* ---- models: Sandbox and SandboxSummary -------------------------------------- */
/** A Sandbox (or SandboxSummary) model. */
typedef struct ocisbx_sandbox ocisbx_sandbox;
/** Parses a Sandbox from JSON text (len bytes); free *out with ocisbx_sandbox_free. */
OCISBX_API int ocisbx_sandbox_from_json(const char *json, size_t len, ocisbx_sandbox **out);
/** The Sandbox as JSON text; free *out with ocisbx_free. */
OCISBX_API int ocisbx_sandbox_to_json(const ocisbx_sandbox *s, char **out);
/** Frees a Sandbox. */
OCISBX_API void ocisbx_sandbox_free(ocisbx_sandbox *s);
/** The id field, or NULL. */
OCISBX_API const char *ocisbx_sandbox_id(const ocisbx_sandbox *s);
/** The projectId field, or NULL. */
OCISBX_API const char *ocisbx_sandbox_project_id(const ocisbx_sandbox *s);
/** The displayName field, or NULL. */
OCISBX_API const char *ocisbx_sandbox_display_name(const ocisbx_sandbox *s);
/** The runtime field, or NULL. */
OCISBX_API const char *ocisbx_sandbox_runtime(const ocisbx_sandbox *s);
/** The shape field, or NULL. */
OCISBX_API const char *ocisbx_sandbox_shape(const ocisbx_sandbox *s);
/** CREATING, RUNNING, UPDATING, STOPPING, STOPPED, SUSPENDING, SUSPENDED,
 * RESUMING, FAILED, DELETED (or a state this version does not know). */
OCISBX_API const char *ocisbx_sandbox_lifecycle_state(const ocisbx_sandbox *s);
/** The lifecycleDetails field, or NULL. */
OCISBX_API const char *ocisbx_sandbox_lifecycle_details(const ocisbx_sandbox *s);
/** The warmpoolName field, or NULL. */
OCISBX_API const char *ocisbx_sandbox_warmpool_name(const ocisbx_sandbox *s);
/** The publishedPortAuthMode field, or NULL. */
OCISBX_API const char *ocisbx_sandbox_published_port_auth_mode(const ocisbx_sandbox *s);
/** 1 and *out set to expiresInMinutes when present, else 0. */
OCISBX_API int ocisbx_sandbox_has_expires_in_minutes(const ocisbx_sandbox *s, int64_t *out);
/** RFC 3339 text as sent (parse with ocisbx_time_parse_rfc3339). */
OCISBX_API const char *ocisbx_sandbox_time_created(const ocisbx_sandbox *s);
/** timeUpdated (RFC 3339 text as sent), or NULL. */
OCISBX_API const char *ocisbx_sandbox_time_updated(const ocisbx_sandbox *s);
/** timeExpires (RFC 3339 text as sent), or NULL. */
OCISBX_API const char *ocisbx_sandbox_time_expires(const ocisbx_sandbox *s);
/** timeStopped (RFC 3339 text as sent), or NULL. */
OCISBX_API const char *ocisbx_sandbox_time_stopped(const ocisbx_sandbox *s);
/** The number of publishedPorts entries. */
OCISBX_API size_t ocisbx_sandbox_published_port_count(const ocisbx_sandbox *s);
/** The port of publishedPorts entry i; 0 when i is out of range. */
OCISBX_API int64_t ocisbx_sandbox_published_port(const ocisbx_sandbox *s, size_t i);
/** The url of publishedPorts entry i, or NULL (absent, or i out of range). */
OCISBX_API const char *ocisbx_sandbox_published_port_url(const ocisbx_sandbox *s, size_t i);
/** The etag header of get_sandbox, or NULL. */
OCISBX_API const char *ocisbx_sandbox_etag(const ocisbx_sandbox *s);

/* ---- models: SandboxCommand ------------------------------------------------- */
/** A SandboxCommand (or SandboxCommandSummary) model. */
typedef struct ocisbx_command ocisbx_command;
/** Parses a SandboxCommand from JSON text (len bytes); free *out with ocisbx_command_free. */
OCISBX_API int ocisbx_command_from_json(const char *json, size_t len, ocisbx_command **out);
/** The SandboxCommand as JSON text; free *out with ocisbx_free. */
OCISBX_API int ocisbx_command_to_json(const ocisbx_command *c, char **out);
/** Frees a SandboxCommand. */
OCISBX_API void ocisbx_command_free(ocisbx_command *c);
/** The id field, or NULL. */
OCISBX_API const char *ocisbx_command_id(const ocisbx_command *c);
/** The sandboxId field, or NULL. */
OCISBX_API const char *ocisbx_command_sandbox_id(const ocisbx_command *c);
/** The command field, or NULL. */
OCISBX_API const char *ocisbx_command_command(const ocisbx_command *c);
/** The cwd field, or NULL. */
OCISBX_API const char *ocisbx_command_cwd(const ocisbx_command *c);
/** The number of args of the command. */
OCISBX_API size_t ocisbx_command_arg_count(const ocisbx_command *c);
/** Arg i of the command, or NULL when i is out of range. */
OCISBX_API const char *ocisbx_command_arg(const ocisbx_command *c, size_t i);
/** A SandboxCommand has no lifecycle state [public]: the client derives one
 * from timeStarted, timeFinished and exitCode (docs/wire.md):
 * - NOT_STARTED: no timeStarted, no timeFinished, no exit code (also the
 *   bare {id} that run_command answers);
 * - RUNNING: timeStarted, neither timeFinished nor an exit code;
 * - FINISHED: an exit code (timeFinished normally set too);
 * - FINISHED_NO_EXIT_CODE: timeFinished without an exit code: the
 *   command was canceled, timed out, or its end was not observed. */
typedef enum ocisbx_command_state_kind {
    OCISBX_COMMAND_NOT_STARTED = 0,
    OCISBX_COMMAND_RUNNING = 1,
    OCISBX_COMMAND_FINISHED = 2,
    OCISBX_COMMAND_FINISHED_NO_EXIT_CODE = 3
} ocisbx_command_state_kind;
/** The derived state (an ocisbx_command_state_kind); NOT_STARTED for NULL. */
OCISBX_API int ocisbx_command_state(const ocisbx_command *c);
/** "NOT_STARTED", "RUNNING", "FINISHED", "FINISHED_NO_EXIT_CODE"; NULL for
 * another value. */
OCISBX_API const char *ocisbx_command_state_name(int state);
/** The state named name (exactly as state_name spells it): 0 and *out set,
 * else OCISBX_EINVAL listing the names. */
OCISBX_API int ocisbx_command_state_from_name(const char *name, int *out);
/** The derived state's name (ocisbx_command_state_name of
 * ocisbx_command_state): the service sends no lifecycleState. */
OCISBX_API const char *ocisbx_command_lifecycle_state(const ocisbx_command *c);
/** 1 and *out set when the command reported an exit status, else 0. */
OCISBX_API int ocisbx_command_has_exit_code(const ocisbx_command *c, int *out);
/** runAndWait's output: stdout (whether the service sends the output object
 * or a plain string), stderr (NULL when the service sent only a string). */
OCISBX_API const char *ocisbx_command_stdout(const ocisbx_command *c);
/** runAndWait's stderr, NULL when the service sent only a string. */
OCISBX_API const char *ocisbx_command_stderr(const ocisbx_command *c);
/** Their length in bytes: the output may hold NUL bytes (sent as `\u0000`),
 * which the C strings above stop at. 0 when absent. */
OCISBX_API size_t ocisbx_command_stdout_len(const ocisbx_command *c);
/** The byte length of ocisbx_command_stderr, NUL bytes included; 0 when absent. */
OCISBX_API size_t ocisbx_command_stderr_len(const ocisbx_command *c);
/** timeCreated (RFC 3339 text as sent), or NULL. */
OCISBX_API const char *ocisbx_command_time_created(const ocisbx_command *c);
/** timeStarted (RFC 3339 text as sent), or NULL. */
OCISBX_API const char *ocisbx_command_time_started(const ocisbx_command *c);
/** timeFinished (RFC 3339 text as sent), or NULL. */
OCISBX_API const char *ocisbx_command_time_finished(const ocisbx_command *c);
/** timeUpdated (RFC 3339 text as sent), or NULL. */
OCISBX_API const char *ocisbx_command_time_updated(const ocisbx_command *c);

/* ---- models: SandboxCommandOutput ------------------------------------------- */
/** A SandboxCommandOutput model (ocisbx_client_get_command_output). */
typedef struct ocisbx_command_output ocisbx_command_output;
/** Parses a SandboxCommandOutput from JSON text (len bytes); free *out with ocisbx_command_output_free. */
OCISBX_API int ocisbx_command_output_from_json(const char *json, size_t len, ocisbx_command_output **out);
/** The SandboxCommandOutput as JSON text; free *out with ocisbx_free. */
OCISBX_API int ocisbx_command_output_to_json(const ocisbx_command_output *o, char **out);
/** Frees a SandboxCommandOutput. */
OCISBX_API void ocisbx_command_output_free(ocisbx_command_output *o);
/** The commandId field, or NULL. */
OCISBX_API const char *ocisbx_command_output_command_id(const ocisbx_command_output *o);
/** The stdout field, or NULL. */
OCISBX_API const char *ocisbx_command_output_stdout(const ocisbx_command_output *o);
/** The stderr field, or NULL. */
OCISBX_API const char *ocisbx_command_output_stderr(const ocisbx_command_output *o);
/** Byte lengths of stdout / stderr, NUL bytes (`\u0000`) included. */
OCISBX_API size_t ocisbx_command_output_stdout_len(const ocisbx_command_output *o);
/** The byte length of stderr, NUL bytes (`\u0000`) included. */
OCISBX_API size_t ocisbx_command_output_stderr_len(const ocisbx_command_output *o);
/** 1 and *out set to exitCode when present, else 0. */
OCISBX_API int ocisbx_command_output_has_exit_code(const ocisbx_command_output *o, int *out);
/** 1 and *out set to lastSeq when present, else 0. */
OCISBX_API int ocisbx_command_output_has_last_seq(const ocisbx_command_output *o, int64_t *out);

/* ---- models: SandboxCommandEvent -------------------------------------------- */
/** A SandboxCommandEvent model: one event of a command. */
typedef struct ocisbx_command_event ocisbx_command_event;
/** The kind of an event (ocisbx_command_event_kind). */
typedef enum ocisbx_event_kind {
    OCISBX_EVENT_OTHER = 0, /**< a kind this version does not know */
    OCISBX_EVENT_STARTED = 1,
    OCISBX_EVENT_STDOUT = 2,
    OCISBX_EVENT_STDERR = 3,
    OCISBX_EVENT_FINISHED = 4
} ocisbx_event_kind;
/** Parses a SandboxCommandEvent from JSON text (len bytes); free *out with ocisbx_command_event_free. */
OCISBX_API int ocisbx_command_event_from_json(const char *json, size_t len, ocisbx_command_event **out);
/** The SandboxCommandEvent as JSON text; free *out with ocisbx_free. */
OCISBX_API int ocisbx_command_event_to_json(const ocisbx_command_event *e, char **out);
/** Frees a SandboxCommandEvent. */
OCISBX_API void ocisbx_command_event_free(ocisbx_command_event *e);
/** The commandId field, or NULL. */
OCISBX_API const char *ocisbx_command_event_command_id(const ocisbx_command_event *e);
/** The event's seq (its position in the command's events). */
OCISBX_API int64_t ocisbx_command_event_seq(const ocisbx_command_event *e);
/** timestamp (RFC 3339 text as sent), or NULL. */
OCISBX_API const char *ocisbx_command_event_timestamp(const ocisbx_command_event *e);
/** The "event" field as sent, and as an enum. */
OCISBX_API const char *ocisbx_command_event_type(const ocisbx_command_event *e);
/** The "event" field as an ocisbx_event_kind (OCISBX_EVENT_OTHER for a kind this version does not know). */
OCISBX_API int ocisbx_command_event_kind(const ocisbx_command_event *e);
/** The chunk of STDOUT/STDERR ("" otherwise); *len its byte length (may be
 * NULL), NUL bytes sent as `\u0000` included. */
OCISBX_API const char *ocisbx_command_event_data(const ocisbx_command_event *e, size_t *len);
/** 1 and *out set to the event's exitCode when present, else 0. */
OCISBX_API int ocisbx_command_event_has_exit_code(const ocisbx_command_event *e, int *out);

/* ---- models: SandboxFile, SandboxSnapshot -------------------------------------- */
/** A SandboxFile model: the answer of a file write. */
typedef struct ocisbx_sandbox_file ocisbx_sandbox_file;
/** Parses a SandboxFile from JSON text (len bytes); free *out with ocisbx_sandbox_file_free. */
OCISBX_API int ocisbx_sandbox_file_from_json(const char *json, size_t len, ocisbx_sandbox_file **out);
/** The SandboxFile as JSON text; free *out with ocisbx_free. */
OCISBX_API int ocisbx_sandbox_file_to_json(const ocisbx_sandbox_file *f, char **out);
/** Frees a SandboxFile. */
OCISBX_API void ocisbx_sandbox_file_free(ocisbx_sandbox_file *f);
/** The sandboxId field, or NULL. */
OCISBX_API const char *ocisbx_sandbox_file_sandbox_id(const ocisbx_sandbox_file *f);
/** The filePath field, or NULL. */
OCISBX_API const char *ocisbx_sandbox_file_path(const ocisbx_sandbox_file *f);
/** The contentSha256 field, or NULL. */
OCISBX_API const char *ocisbx_sandbox_file_content_sha256(const ocisbx_sandbox_file *f);

/** A SandboxSnapshot (or SandboxSnapshotSummary) model. */
typedef struct ocisbx_snapshot ocisbx_snapshot;
/** Parses a SandboxSnapshot from JSON text (len bytes); free *out with ocisbx_snapshot_free. */
OCISBX_API int ocisbx_snapshot_from_json(const char *json, size_t len, ocisbx_snapshot **out);
/** The SandboxSnapshot as JSON text; free *out with ocisbx_free. */
OCISBX_API int ocisbx_snapshot_to_json(const ocisbx_snapshot *s, char **out);
/** Frees a SandboxSnapshot. */
OCISBX_API void ocisbx_snapshot_free(ocisbx_snapshot *s);
/** The id field, or NULL. */
OCISBX_API const char *ocisbx_snapshot_id(const ocisbx_snapshot *s);
/** The sandboxId field, or NULL. */
OCISBX_API const char *ocisbx_snapshot_sandbox_id(const ocisbx_snapshot *s);
/** The projectId field, or NULL. */
OCISBX_API const char *ocisbx_snapshot_project_id(const ocisbx_snapshot *s);
/** The ISO 8601 lifetime it was created with ("P7D"), or NULL. */
OCISBX_API const char *ocisbx_snapshot_expiration_duration(const ocisbx_snapshot *s);
/** timeUpdated (RFC 3339 text as sent), or NULL. */
OCISBX_API const char *ocisbx_snapshot_time_updated(const ocisbx_snapshot *s);
/** The etag header of get_snapshot / create_snapshot, or NULL. */
OCISBX_API const char *ocisbx_snapshot_etag(const ocisbx_snapshot *s);
/** The displayName field, or NULL. */
OCISBX_API const char *ocisbx_snapshot_display_name(const ocisbx_snapshot *s);
/** The runtime field, or NULL. */
OCISBX_API const char *ocisbx_snapshot_runtime(const ocisbx_snapshot *s);
/** CREATING, ACTIVE, DELETING, DELETED, FAILED. */
OCISBX_API const char *ocisbx_snapshot_lifecycle_state(const ocisbx_snapshot *s);
/** 1 and *out set to the snapshot's sizeBytes when present, else 0. */
OCISBX_API int ocisbx_snapshot_has_size_bytes(const ocisbx_snapshot *s, int64_t *out);
/** timeCreated (RFC 3339 text as sent), or NULL. */
OCISBX_API const char *ocisbx_snapshot_time_created(const ocisbx_snapshot *s);
/** timeExpires (RFC 3339 text as sent), or NULL. */
OCISBX_API const char *ocisbx_snapshot_time_expires(const ocisbx_snapshot *s);

/* ---- collections (one page of a list) ----------------------------------------- */
/** Items are owned by the collection. next_page: the opc-next-page header,
 * NULL on the last page. */
typedef struct ocisbx_sandbox_collection ocisbx_sandbox_collection;
/** The number of items on this page. */
OCISBX_API size_t ocisbx_sandbox_collection_count(const ocisbx_sandbox_collection *l);
/** Item i (owned by the page), or NULL when i is out of range. */
OCISBX_API const ocisbx_sandbox *ocisbx_sandbox_collection_item(const ocisbx_sandbox_collection *l, size_t i);
/** The opc-next-page header: NULL on the last page. */
OCISBX_API const char *ocisbx_sandbox_collection_next_page(const ocisbx_sandbox_collection *l);
/** The page of sandboxes as JSON text; free *out with ocisbx_free. */
OCISBX_API int ocisbx_sandbox_collection_to_json(const ocisbx_sandbox_collection *l, char **out);
/** Frees a page of sandboxes. */
OCISBX_API void ocisbx_sandbox_collection_free(ocisbx_sandbox_collection *l);

/** One page of ListSandboxCommands. */
typedef struct ocisbx_command_collection ocisbx_command_collection;
/** The number of items on this page. */
OCISBX_API size_t ocisbx_command_collection_count(const ocisbx_command_collection *l);
/** Item i (owned by the page), or NULL when i is out of range. */
OCISBX_API const ocisbx_command *ocisbx_command_collection_item(const ocisbx_command_collection *l, size_t i);
/** The opc-next-page header: NULL on the last page. */
OCISBX_API const char *ocisbx_command_collection_next_page(const ocisbx_command_collection *l);
/** The page of commands as JSON text; free *out with ocisbx_free. */
OCISBX_API int ocisbx_command_collection_to_json(const ocisbx_command_collection *l, char **out);
/** Frees a page of commands. */
OCISBX_API void ocisbx_command_collection_free(ocisbx_command_collection *l);

/** One page of ListSandboxSnapshots. */
typedef struct ocisbx_snapshot_collection ocisbx_snapshot_collection;
/** The number of items on this page. */
OCISBX_API size_t ocisbx_snapshot_collection_count(const ocisbx_snapshot_collection *l);
/** Item i (owned by the page), or NULL when i is out of range. */
OCISBX_API const ocisbx_snapshot *ocisbx_snapshot_collection_item(const ocisbx_snapshot_collection *l, size_t i);
/** The opc-next-page header: NULL on the last page. */
OCISBX_API const char *ocisbx_snapshot_collection_next_page(const ocisbx_snapshot_collection *l);
/** The page of snapshots as JSON text; free *out with ocisbx_free. */
OCISBX_API int ocisbx_snapshot_collection_to_json(const ocisbx_snapshot_collection *l, char **out);
/** Frees a page of snapshots. */
OCISBX_API void ocisbx_snapshot_collection_free(ocisbx_snapshot_collection *l);

/* ---- request details ------------------------------------------------------------ */
/** CreateSandboxDetails. expiresInMinutes must be 1..2880, or -1
 * (OCISBX_EXPIRES_NEVER: no automatic expiration [public], passed through;
 * refusing it is a harness's choice); the deprecated expirationDuration is
 * never sent: from JSON it is converted to whole minutes (rounded up). */
typedef struct ocisbx_create_sandbox_details ocisbx_create_sandbox_details;
/** Makes an empty CreateSandboxDetails; free with ocisbx_create_sandbox_details_free. */
OCISBX_API int ocisbx_create_sandbox_details_new(ocisbx_create_sandbox_details **out);
/** Parses a CreateSandboxDetails from JSON text (len bytes); free *out with ocisbx_create_sandbox_details_free. */
OCISBX_API int ocisbx_create_sandbox_details_from_json(const char *json, size_t len,
                                                       ocisbx_create_sandbox_details **out);
/** The CreateSandboxDetails as JSON text; free *out with ocisbx_free. */
OCISBX_API int ocisbx_create_sandbox_details_to_json(const ocisbx_create_sandbox_details *d, char **out);
/** Frees a CreateSandboxDetails. */
OCISBX_API void ocisbx_create_sandbox_details_free(ocisbx_create_sandbox_details *d);
/** Sets displayName. */
OCISBX_API int ocisbx_create_sandbox_details_set_display_name(ocisbx_create_sandbox_details *d, const char *v);
/** Sets runtime ("python-3.11"). */
OCISBX_API int ocisbx_create_sandbox_details_set_runtime(ocisbx_create_sandbox_details *d, const char *v);
/** SMALL, MEDIUM or LARGE. */
OCISBX_API int ocisbx_create_sandbox_details_set_shape(ocisbx_create_sandbox_details *d, const char *v);
/** Sets expiresInMinutes: 1..OCISBX_EXPIRES_IN_MINUTES_MAX, or OCISBX_EXPIRES_NEVER. */
OCISBX_API int ocisbx_create_sandbox_details_set_expires_in_minutes(ocisbx_create_sandbox_details *d,
                                                                    int64_t minutes);
/** Adds one environment variable of the sandbox. */
OCISBX_API int ocisbx_create_sandbox_details_add_env(ocisbx_create_sandbox_details *d, const char *name,
                                                     const char *value);
/** Sets warmpoolName. */
OCISBX_API int ocisbx_create_sandbox_details_set_warmpool_name(ocisbx_create_sandbox_details *d, const char *v);
/** Appends a port to publishPorts. */
OCISBX_API int ocisbx_create_sandbox_details_add_publish_port(ocisbx_create_sandbox_details *d, const char *port);
/** Sets publishedPortAuthMode. */
OCISBX_API int ocisbx_create_sandbox_details_set_published_port_auth_mode(ocisbx_create_sandbox_details *d,
                                                                          const char *v);
/** Sets credentialProfileLabel. */
OCISBX_API int ocisbx_create_sandbox_details_set_credential_profile_label(ocisbx_create_sandbox_details *d,
                                                                          const char *v);
/** source {sourceType: SNAPSHOT, snapshotId}. */
OCISBX_API int ocisbx_create_sandbox_details_set_source_snapshot(ocisbx_create_sandbox_details *d,
                                                                 const char *snapshot_id);

/** RunSandboxCommandDetails: command (required, run by a shell), args, cwd
 * (absolute), environment, timeout (ISO 8601, checked). */
typedef struct ocisbx_run_command_details ocisbx_run_command_details;
/** Makes RunSandboxCommandDetails for a command line (required); free with ocisbx_run_command_details_free. */
OCISBX_API int ocisbx_run_command_details_new(const char *command, ocisbx_run_command_details **out);
/** Parses a RunSandboxCommandDetails from JSON text (len bytes); free *out with ocisbx_run_command_details_free. */
OCISBX_API int ocisbx_run_command_details_from_json(const char *json, size_t len, ocisbx_run_command_details **out);
/** The RunSandboxCommandDetails as JSON text; free *out with ocisbx_free. */
OCISBX_API int ocisbx_run_command_details_to_json(const ocisbx_run_command_details *d, char **out);
/** Frees a RunSandboxCommandDetails. */
OCISBX_API void ocisbx_run_command_details_free(ocisbx_run_command_details *d);
/** Appends one of args. */
OCISBX_API int ocisbx_run_command_details_add_arg(ocisbx_run_command_details *d, const char *arg);
/** Sets cwd (an absolute path in the sandbox). */
OCISBX_API int ocisbx_run_command_details_set_cwd(ocisbx_run_command_details *d, const char *cwd);
/** Adds one environment variable of the command. */
OCISBX_API int ocisbx_run_command_details_add_env(ocisbx_run_command_details *d, const char *name, const char *value);
/** Sets the timeout (ISO 8601, checked: "PT30S"). */
OCISBX_API int ocisbx_run_command_details_set_timeout(ocisbx_run_command_details *d, const char *iso8601);

/** Query parameters of the list operations; each uses those its route
 * allows (docs/wire.md) and ignores the others. */
typedef struct ocisbx_list_options ocisbx_list_options;
/** Makes empty list options (no query parameters); free with ocisbx_list_options_free. */
OCISBX_API int ocisbx_list_options_new(ocisbx_list_options **out);
/** Frees list options. */
OCISBX_API void ocisbx_list_options_free(ocisbx_list_options *o);
/** name: the query parameter's name ("projectId", "lifecycleState",
 * "sortBy", "sortOrder", "displayName", "compartmentId", "sandboxId",
 * "commandId", "snapshotId", "page"); value NULL removes it. */
OCISBX_API int ocisbx_list_options_set(ocisbx_list_options *o, const char *name, const char *value);
/** 0: the service's default. */
OCISBX_API int ocisbx_list_options_set_limit(ocisbx_list_options *o, int limit);

/* ---- sandbox operations ------------------------------------------------------------ */
/** CreateSandbox in project_id; *out gets the new sandbox (normally CREATING: wait with ocisbx_client_wait_sandbox). */
OCISBX_API int ocisbx_client_create_sandbox(ocisbx_client *c, const char *project_id,
                                            const ocisbx_create_sandbox_details *d, ocisbx_sandbox **out);
/** GetSandbox; *out also carries the etag (ocisbx_sandbox_etag). */
OCISBX_API int ocisbx_client_get_sandbox(ocisbx_client *c, const char *sandbox_id, ocisbx_sandbox **out);
/** ListSandboxes: one page (see ocisbx_client_iter_sandboxes for every page). */
OCISBX_API int ocisbx_client_list_sandboxes(ocisbx_client *c, const ocisbx_list_options *o,
                                            ocisbx_sandbox_collection **out);
/** UpdateSandbox: changes the display name. */
OCISBX_API int ocisbx_client_update_sandbox(ocisbx_client *c, const char *sandbox_id, const char *display_name,
                                            ocisbx_sandbox **out);
/** The same with an if-match header (if_match NULL: none): the service
 * answers 412 (OCISBX_ECONFLICT, status 412) when it is not the current etag
 * (ocisbx_sandbox_etag of a get or update answer). */
OCISBX_API int ocisbx_client_update_sandbox_if_match(ocisbx_client *c, const char *sandbox_id,
                                                     const char *display_name, const char *if_match,
                                                     ocisbx_sandbox **out);
/** DeleteSandbox. */
OCISBX_API int ocisbx_client_delete_sandbox(ocisbx_client *c, const char *sandbox_id);
/** StopSandbox; is_force is sent as isForce. */
OCISBX_API int ocisbx_client_stop_sandbox(ocisbx_client *c, const char *sandbox_id, int is_force);
/** StopSandbox with an if-match header (if_match NULL: none; a stale etag: OCISBX_ECONFLICT, status 412). */
OCISBX_API int ocisbx_client_stop_sandbox_if_match(ocisbx_client *c, const char *sandbox_id, int is_force,
                                                   const char *if_match);
/** additional_duration: ISO 8601 ("PT30M"). out may be NULL. */
OCISBX_API int ocisbx_client_extend_sandbox(ocisbx_client *c, const char *sandbox_id, const char *additional_duration,
                                            ocisbx_sandbox **out);
/** ExtendSandbox with an if-match header (if_match NULL: none; a stale etag: OCISBX_ECONFLICT, status 412). */
OCISBX_API int ocisbx_client_extend_sandbox_if_match(ocisbx_client *c, const char *sandbox_id,
                                                     const char *additional_duration, const char *if_match,
                                                     ocisbx_sandbox **out);
/** SuspendSandbox. */
OCISBX_API int ocisbx_client_suspend_sandbox(ocisbx_client *c, const char *sandbox_id);
/** ResumeSandbox. */
OCISBX_API int ocisbx_client_resume_sandbox(ocisbx_client *c, const char *sandbox_id);
/** Polls get_sandbox every poll_ms (0: the poll_interval setting,
 * ocisbx_setting_poll_interval_ms) until lifecycleState is `state`; fails at
 * once (OCISBX_ECONFLICT naming the state) on FAILED or DELETED unless that
 * is the target, and with OCISBX_ETIMEOUT after timeout_ms. Waiting for
 * DELETED also ends on a 404 (then *out is NULL). out may be NULL. The
 * client's cancel callback (ocisbx_client_options_set_cancel) is asked
 * during the waits between polls: OCISBX_ECANCELED. */
OCISBX_API int ocisbx_client_wait_sandbox(ocisbx_client *c, const char *sandbox_id, const char *state,
                                          int64_t timeout_ms, int64_t poll_ms, ocisbx_sandbox **out);
/** As ocisbx_client_wait_sandbox, until the sandbox is in any of the
 * nstates states (nstates >= 1): the first one reached ends the wait (as
 * the OCI CLI's repeated --wait-for-state). FAILED or DELETED fail the wait
 * unless one of the states names it. */
OCISBX_API int ocisbx_client_wait_sandbox_any(ocisbx_client *c, const char *sandbox_id, const char *const *states,
                                              size_t nstates, int64_t timeout_ms, int64_t poll_ms,
                                              ocisbx_sandbox **out);

/* ---- command operations -------------------------------------------------------------- */
/** The service answers a SandboxCommandIdentifier {id} [public]: *out then
 * holds the id only (a fuller answer is kept as sent); get_command or
 * wait_command for the rest. */
OCISBX_API int ocisbx_client_run_command(ocisbx_client *c, const char *sandbox_id,
                                         const ocisbx_run_command_details *d, ocisbx_command **out);
/** RunSandboxCommand and wait (runAndWait): *out gets the finished command with its exit code and output. */
OCISBX_API int ocisbx_client_run_command_and_wait(ocisbx_client *c, const char *sandbox_id,
                                                  const ocisbx_run_command_details *d, ocisbx_command **out);
/** GetSandboxCommand. */
OCISBX_API int ocisbx_client_get_command(ocisbx_client *c, const char *sandbox_id, const char *command_id,
                                         ocisbx_command **out);
/** Uses commandId, sortBy (timeCreated, timeStarted, timeFinished),
 * sortOrder (ASC, DESC), limit and page from o. Items are
 * SandboxCommandSummary: no environment variables, no output. */
OCISBX_API int ocisbx_client_list_commands(ocisbx_client *c, const char *sandbox_id, const ocisbx_list_options *o,
                                           ocisbx_command_collection **out);
/** Polls get_command every poll_ms (0: the poll_interval setting) until its derived state
 * (ocisbx_command_state) is `state`. The states only move forward, so:
 * waiting for RUNNING also ends (0) once the command has finished; waiting
 * for FINISHED fails at once with OCISBX_ECONFLICT when it finished without
 * an exit code (canceled or timed out), and waiting for
 * FINISHED_NO_EXIT_CODE when it finished with one. OCISBX_ETIMEOUT after
 * timeout_ms. out may be NULL. */
OCISBX_API int ocisbx_client_wait_command(ocisbx_client *c, const char *sandbox_id, const char *command_id, int state,
                                          int64_t timeout_ms, int64_t poll_ms, ocisbx_command **out);
/** As ocisbx_client_wait_command, until the command's derived state
 * reaches any of the nstates states (nstates >= 1); OCISBX_ECONFLICT once
 * it can reach none of them. */
OCISBX_API int ocisbx_client_wait_command_any(ocisbx_client *c, const char *sandbox_id, const char *command_id,
                                              const int *states, size_t nstates, int64_t timeout_ms, int64_t poll_ms,
                                              ocisbx_command **out);
/** Start of a command's events/output: no fromSeq given (the service starts
 * at its first event). Any from_seq >= 0 is sent as given, 0 included. */
#define OCISBX_SEQ_START (-1)
/** from_seq < 0: from the start (no fromSeq sent); else sent as given, 0 included. */
OCISBX_API int ocisbx_client_get_command_output(ocisbx_client *c, const char *sandbox_id, const char *command_id,
                                                int64_t from_seq, ocisbx_command_output **out);
/** CancelSandboxCommand. */
OCISBX_API int ocisbx_client_cancel_command(ocisbx_client *c, const char *sandbox_id, const char *command_id);

/** One callback per event, in seq order, each seq exactly once (a dropped
 * connection is resumed from the last seen seq + 1, and repeated events are
 * skipped). The event is valid during the call only. A non-zero return
 * cancels the stream (OCISBX_ECANCELED). */
typedef int (*ocisbx_event_fn)(const ocisbx_command_event *ev, void *user_data);
/** Streams events from from_seq (< 0: the start, fromSeq=1; else sent as
 * given, 0 included) until FINISHED, or until
 * until_seq (0: no limit) has been delivered. */
OCISBX_API int ocisbx_client_stream_command_events(ocisbx_client *c, const char *sandbox_id, const char *command_id,
                                                   int64_t from_seq, int64_t until_seq, ocisbx_event_fn fn,
                                                   void *user_data);
/** Runs a command and streams its events until FINISHED (a dropped stream is
 * resumed through the events operation). *command_id (may be NULL) gets the
 * command's id once known, freed with ocisbx_free. */
OCISBX_API int ocisbx_client_run_command_and_stream(ocisbx_client *c, const char *sandbox_id,
                                                    const ocisbx_run_command_details *d, ocisbx_event_fn fn,
                                                    void *user_data, char **command_id);

/* ---- file operations ---------------------------------------------------------------- */
/** Every write sends the body's base64 SHA-256 in opc-content-sha256 and
 * compares it with the one the service returns (a mismatch or none:
 * OCISBX_EINTEGRITY). Bodies above OCISBX_FILE_PART_MAX are refused
 * (OCISBX_ETOOLARGE). out may be NULL. */
OCISBX_API int ocisbx_client_write_file(ocisbx_client *c, const char *sandbox_id, const char *file_path,
                                        const void *data, size_t len, ocisbx_sandbox_file **out);
/** From a local file, streamed (memory bounded). */
OCISBX_API int ocisbx_client_write_file_from_path(ocisbx_client *c, const char *sandbox_id, const char *file_path,
                                                  const char *local_path, ocisbx_sandbox_file **out);
/** From a callback of len bytes (len >= 0). With rewind the body is read
 * twice (hash, then send) and memory stays small; without it the body is
 * read once into memory (at most OCISBX_FILE_PART_MAX) unless sha256_b64
 * gives its hash, in which case it is streamed and never retried. */
OCISBX_API int ocisbx_client_write_file_from_callback(ocisbx_client *c, const char *sandbox_id, const char *file_path,
                                                      int64_t len, ocisbx_read_fn read, ocisbx_rewind_fn rewind,
                                                      void *user_data, const char *sha256_b64,
                                                      ocisbx_sandbox_file **out);
/** Reads a file; its content is checked against the answer's
 * opc-content-sha256 (mismatch or none: OCISBX_EINTEGRITY). A missing file
 * is OCISBX_ENOTFOUND. *data is freed with ocisbx_free. */
OCISBX_API int ocisbx_client_read_file(ocisbx_client *c, const char *sandbox_id, const char *file_path,
                                       unsigned char **data, size_t *len);
/** To a local file: written to a temporary name beside it and renamed only
 * once the content checks out. */
OCISBX_API int ocisbx_client_read_file_to_path(ocisbx_client *c, const char *sandbox_id, const char *file_path,
                                               const char *local_path);
/** To a callback, as it arrives (memory bounded). The check happens at the
 * end: on OCISBX_EINTEGRITY the bytes already delivered must be discarded. */
OCISBX_API int ocisbx_client_read_file_to_callback(ocisbx_client *c, const char *sandbox_id, const char *file_path,
                                                   ocisbx_write_fn write, void *user_data);

/* ---- snapshot operations -------------------------------------------------------------- */
/** CreateSandboxSnapshotDetails is {sandboxId, expirationDuration} and
 * nothing else [public]. expiration_duration (ISO 8601, "P7D") may be NULL. */
OCISBX_API int ocisbx_client_create_snapshot(ocisbx_client *c, const char *sandbox_id,
                                             const char *expiration_duration, ocisbx_snapshot **out);
/** GetSandboxSnapshot; *out also carries the etag (ocisbx_snapshot_etag). */
OCISBX_API int ocisbx_client_get_snapshot(ocisbx_client *c, const char *snapshot_id, ocisbx_snapshot **out);
/** DeleteSandboxSnapshot. */
OCISBX_API int ocisbx_client_delete_snapshot(ocisbx_client *c, const char *snapshot_id);
/** With an if-match header (NULL: none; a stale etag: OCISBX_ECONFLICT with status 412). */
OCISBX_API int ocisbx_client_delete_snapshot_if_match(ocisbx_client *c, const char *snapshot_id,
                                                      const char *if_match);
/** Uses projectId, displayName, sandboxId, snapshotId, lifecycleState,
 * sortBy (timeCreated, displayName), sortOrder, limit and page from o.
 * Items are SandboxSnapshotSummary. */
OCISBX_API int ocisbx_client_list_snapshots(ocisbx_client *c, const ocisbx_list_options *o,
                                            ocisbx_snapshot_collection **out);
/** As ocisbx_client_wait_sandbox, for a snapshot (FAILED/DELETED terminal). */
OCISBX_API int ocisbx_client_wait_snapshot(ocisbx_client *c, const char *snapshot_id, const char *state,
                                           int64_t timeout_ms, int64_t poll_ms, ocisbx_snapshot **out);
/** As ocisbx_client_wait_sandbox_any, for a snapshot. */
OCISBX_API int ocisbx_client_wait_snapshot_any(ocisbx_client *c, const char *snapshot_id, const char *const *states,
                                               size_t nstates, int64_t timeout_ms, int64_t poll_ms,
                                               ocisbx_snapshot **out);

/* ---- pagination: iterators over every page --------------------------------------------- */
/** next: 0 with *item set (owned by the iterator, valid until the next call),
 * or 0 with *item NULL after the last item; a failed page fetch returns its
 * code. The options are copied; their "page" is the starting page. */
typedef struct ocisbx_sandbox_iter ocisbx_sandbox_iter;
/** An iterator over every sandbox of ListSandboxes, page after page. */
OCISBX_API int ocisbx_client_iter_sandboxes(ocisbx_client *c, const ocisbx_list_options *o,
                                            ocisbx_sandbox_iter **out);
/** The next item (see above). */
OCISBX_API int ocisbx_sandbox_iter_next(ocisbx_sandbox_iter *it, const ocisbx_sandbox **item);
/** Frees an iterator. */
OCISBX_API void ocisbx_sandbox_iter_free(ocisbx_sandbox_iter *it);

/** An iterator over every page of ListSandboxCommands. */
typedef struct ocisbx_command_iter ocisbx_command_iter;
/** An iterator over every command of ListSandboxCommands, page after page. */
OCISBX_API int ocisbx_client_iter_commands(ocisbx_client *c, const char *sandbox_id, const ocisbx_list_options *o,
                                           ocisbx_command_iter **out);
/** The next item (see above). */
OCISBX_API int ocisbx_command_iter_next(ocisbx_command_iter *it, const ocisbx_command **item);
/** Frees an iterator. */
OCISBX_API void ocisbx_command_iter_free(ocisbx_command_iter *it);

/** An iterator over every page of ListSandboxSnapshots. */
typedef struct ocisbx_snapshot_iter ocisbx_snapshot_iter;
/** An iterator over every snapshot of ListSandboxSnapshots, page after page. */
OCISBX_API int ocisbx_client_iter_snapshots(ocisbx_client *c, const ocisbx_list_options *o,
                                            ocisbx_snapshot_iter **out);
/** The next item (see above). */
OCISBX_API int ocisbx_snapshot_iter_next(ocisbx_snapshot_iter *it, const ocisbx_snapshot **item);
/** Frees an iterator. */
OCISBX_API void ocisbx_snapshot_iter_free(ocisbx_snapshot_iter *it);

/* ---- JSON in, JSON out (FFI) ------------------------------------------------------------- */
/** Calls an operation by its name in the route table ("GetSandbox",
 * "CreateSandbox", "ListSandboxes", ... see docs/wire.md).
 * params_json: an object of the path and query parameters by their wire
 * names ({"sandboxId": "...", "limit": 10}), and "ifMatch" (sent as the
 * if-match header) for the operations that take one; body_json: the
 * request model (NULL for none). *response_json gets the answer's model,
 * "{}" for an answer without a body; a list also carries "opcNextPage" when
 * there is a next page. File and event-stream operations are not available
 * here (use their typed functions). Request models are checked like the
 * typed ones. On failure the status is returned AND *response_json (unless
 * response_json is NULL) gets
 * {"error":{"code","status","message","requestId"}}: code is the service's
 * code, else the library's (ocisbx_strerror); status the HTTP status (0 when
 * there was no answer); requestId null when none; free it with ocisbx_free. */
OCISBX_API int ocisbx_client_call_json(ocisbx_client *c, const char *operation, const char *params_json,
                                       const char *body_json, char **response_json);
/** The operation names, for discovery: NULL past the end. */
OCISBX_API const char *ocisbx_operation_name(size_t i);

#ifdef __cplusplus
}
#endif
#endif
