/** @file
 * libocisbx backend layer: one workspace contract, two implementations
 * (see docs/backend.md).
 *
 * - An OCI sandbox (ocisbx_backend_create / ocisbx_backend_connect) over the
 *   REST client, or a local directory (ocisbx_backend_local) whose commands
 *   run under bubblewrap. Both show the workspace as /workspace and behave
 *   the same: every operation is written once, as POSIX shell run in the
 *   workspace, on top of a few primitives each implementation provides.
 * - A backend is used by one thread at a time.
 * - Paths are sandbox paths: absolute under /workspace, or relative to it.
 *   Anything else is refused with OCISBX_EFORBIDDEN before any request.
 * - Every call returns 0 or a negative OCISBX_E* code with the thread's
 *   error object set (ocisbx_error_last). */
#ifndef OCISBX_BACKEND_H
#define OCISBX_BACKEND_H

#include "common.h"
#include "api.h"
#include "settings.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The runtime of a created sandbox when none is set (the settings table's). */
#define OCISBX_BACKEND_DEFAULT_RUNTIME OCISBX_DEFAULT_RUNTIME
/** The shape of a created sandbox when none is set. */
#define OCISBX_BACKEND_DEFAULT_SHAPE OCISBX_DEFAULT_SHAPE
/** The lifetime of a created sandbox when none is set (ISO 8601). */
#define OCISBX_BACKEND_DEFAULT_EXPIRATION OCISBX_DEFAULT_EXPIRATION
/** The most output one command returns when no cap is set (bytes). */
#define OCISBX_BACKEND_DEFAULT_MAX_OUTPUT 900000
/** The smallest output cap a backend or a command accepts (bytes). */
#define OCISBX_BACKEND_MIN_MAX_OUTPUT 1024
/** How long create waits for RUNNING when no timeout is set (nor $OCI_SANDBOX_READY_TIMEOUT). */
#define OCISBX_BACKEND_DEFAULT_READY_TIMEOUT_MS (OCISBX_DEFAULT_READY_TIMEOUT_S * 1000)
/** How often create polls the sandbox when no interval is set. */
#define OCISBX_BACKEND_DEFAULT_POLL_INTERVAL_MS 2000
/** A command's timeout when the call gives none. */
#define OCISBX_BACKEND_DEFAULT_EXEC_TIMEOUT_MS 120000
/** Grace between TERM and KILL at a command's deadline. */
#define OCISBX_BACKEND_KILL_GRACE_S 2
/** The client gives up on a command this long after deadline + grace. */
#define OCISBX_BACKEND_CLIENT_MARGIN_MS 5000
/** Writes above this go in parts. */
#define OCISBX_BACKEND_PART_SIZE OCISBX_FILE_PART_MAX
/** read_text: default line limit, longest line kept. */
#define OCISBX_BACKEND_READ_LIMIT 2000
/** read_text: the longest line kept (characters). */
#define OCISBX_BACKEND_LINE_MAX 2000
/** search: the most matches returned when no maximum is set. */
#define OCISBX_BACKEND_DEFAULT_SEARCH_RESULTS 100
/** search: the most max_results may be (the search cap). */
#define OCISBX_BACKEND_SEARCH_MAX_RESULTS 100000

/** Non-zero return: cancel (the operation fails with OCISBX_ECANCELED); the
 * library's one cancel callback type (common.h). */
typedef ocisbx_cancel_fn ocisbx_backend_cancel_fn;

/* ---- options --------------------------------------------------------------- */
/** Each setting: the explicit option, else the environment variable named,
 * else the default. Strings are copied. */
typedef struct ocisbx_backend_options ocisbx_backend_options;
/** Makes empty backend options (every setting from the environment or its default). */
OCISBX_API int ocisbx_backend_options_new(ocisbx_backend_options **out);
/** Frees backend options. */
OCISBX_API void ocisbx_backend_options_free(ocisbx_backend_options *o);
/** $OCI_SANDBOX_RUNTIME, "python-3.11". */
OCISBX_API int ocisbx_backend_options_set_runtime(ocisbx_backend_options *o, const char *runtime);
/** $OCI_SANDBOX_SHAPE, "SMALL". */
OCISBX_API int ocisbx_backend_options_set_shape(ocisbx_backend_options *o, const char *shape);
/** ISO 8601; $OCI_SANDBOX_EXPIRATION, "PT1H". Sent as whole minutes rounded
 * up; above 48 h (or not a duration) refused by create before any request. */
OCISBX_API int ocisbx_backend_options_set_expiration(ocisbx_backend_options *o, const char *iso8601);
/** Create the sandbox from this warm pool (default: none). */
OCISBX_API int ocisbx_backend_options_set_warmpool_name(ocisbx_backend_options *o, const char *name);
/** Default "ocisbx-<random>". */
OCISBX_API int ocisbx_backend_options_set_display_name(ocisbx_backend_options *o, const char *name);
/** Added to every command's environment (a later add of the same name
 * wins). secret: the value is never logged nor shown (evidence redacts it). */
OCISBX_API int ocisbx_backend_options_add_env(ocisbx_backend_options *o, const char *name, const char *value,
                                              int secret);
/** The most output one command returns (head + note + tail), default 900000,
 * at least OCISBX_BACKEND_MIN_MAX_OUTPUT (1024). */
OCISBX_API int ocisbx_backend_options_set_max_output_bytes(ocisbx_backend_options *o, size_t n);
/** How long create waits for RUNNING (else $OCI_SANDBOX_READY_TIMEOUT in
 * seconds, else 300000 ms; must be positive). */
OCISBX_API int ocisbx_backend_options_set_ready_timeout_ms(ocisbx_backend_options *o, int64_t ms);
/** How often create polls the sandbox while it waits (default 2000 ms; must be positive). */
OCISBX_API int ocisbx_backend_options_set_poll_interval_ms(ocisbx_backend_options *o, int64_t ms);
/** A REST client of the caller's own: borrowed, must outlive the backend.
 * Without one, a client is built by the settings resolver
 * (ocisbx_settings_client_new) from the options below, the environment
 * ($OCI_CONFIG_FILE, $OCI_SANDBOX_PROFILE / $OCI_CLI_PROFILE,
 * $OCI_SANDBOX_AUTH / $OCI_CLI_AUTH, $OCI_SANDBOX_REGION / $OCI_CLI_REGION,
 * $OCI_SANDBOX_ENDPOINT, $OCI_SANDBOX_CA_BUNDLE, ...), the config file's
 * profile and the defaults (ocisbx/settings.h). */
OCISBX_API int ocisbx_backend_options_set_client(ocisbx_backend_options *o, ocisbx_client *client);
/** The OCI config file of a built client (else $OCI_CONFIG_FILE, $OCI_CLI_CONFIG_FILE, else ~/.oci/config). */
OCISBX_API int ocisbx_backend_options_set_config_file(ocisbx_backend_options *o, const char *path);
/** The config profile of a built client (else $OCI_SANDBOX_PROFILE, $OCI_CLI_PROFILE, else DEFAULT). */
OCISBX_API int ocisbx_backend_options_set_profile(ocisbx_backend_options *o, const char *profile);
/** Region of the label (and of a built client): else $OCI_SANDBOX_REGION or
 * $OCI_CLI_REGION, else the endpoint's host, else the config file's region. */
OCISBX_API int ocisbx_backend_options_set_region(ocisbx_backend_options *o, const char *region);
/** The service's URL (else $OCI_SANDBOX_ENDPOINT, else the region's). A
 * built client allows plain http only to a loopback host (a test tenancy
 * on 127.0.0.1), as the CLI does. */
OCISBX_API int ocisbx_backend_options_set_endpoint(ocisbx_backend_options *o, const char *url);
/** A PEM CA bundle the built client trusts for https (a test tenancy's own
 * CA); default: the system's. */
OCISBX_API int ocisbx_backend_options_set_ca_bundle(ocisbx_backend_options *o, const char *path);
/** Polled between steps of create, while a command runs, between parts. */
OCISBX_API int ocisbx_backend_options_set_cancel(ocisbx_backend_options *o, ocisbx_backend_cancel_fn fn,
                                                 void *user_data);
/** Local backend: isolate 0 runs commands on the host (a "host shell"),
 * default 1; allow_network default 0 (no network). */
OCISBX_API int ocisbx_backend_options_set_isolation(ocisbx_backend_options *o, int isolate);
/** Local backend: 1 lets isolated commands use the network (default 0). */
OCISBX_API int ocisbx_backend_options_set_network(ocisbx_backend_options *o, int allow);

/* ---- the backend --------------------------------------------------------------- */
/** A workspace: an OCI sandbox or a local directory. */
typedef struct ocisbx_backend ocisbx_backend;
/** project_id NULL: $OCI_SANDBOX_PROJECT_ID. Creates a sandbox and waits until
 * it is RUNNING; the backend owns it (close deletes it). Any failure before
 * it returns (a failed request, FAILED or DELETED while waiting, the ready
 * timeout: OCISBX_ETIMEOUT, the cancel callback: OCISBX_ECANCELED) deletes
 * the sandbox first. */
OCISBX_API int ocisbx_backend_create(const char *project_id, const ocisbx_backend_options *o, ocisbx_backend **out);
/** Attaches to an existing sandbox (checked with a get); never deletes it. */
OCISBX_API int ocisbx_backend_connect(const char *sandbox_id, const ocisbx_backend_options *o, ocisbx_backend **out);
/** dir (must exist) is the workspace. As root, a root-owned directory is
 * refused (OCISBX_EUNSUPPORTED) unless isolation is off. */
OCISBX_API int ocisbx_backend_local(const char *dir, const ocisbx_backend_options *o, ocisbx_backend **out);
/** `"oci-sandbox:<region>/<sandbox id>"` or `"local:<absolute path>"`. */
OCISBX_API const char *ocisbx_backend_label(const ocisbx_backend *b);
/** "oci-sandbox" or "local". */
OCISBX_API const char *ocisbx_backend_kind(const ocisbx_backend *b);
/** 1 for a local directory without isolation. */
OCISBX_API int ocisbx_backend_is_host_shell(const ocisbx_backend *b);
/** The sandbox id, NULL for a local directory. */
OCISBX_API const char *ocisbx_backend_sandbox_id(const ocisbx_backend *b);
/** The sandbox as created (RUNNING) or connected, as JSON; EUNSUPPORTED locally. */
OCISBX_API int ocisbx_backend_sandbox_json(const ocisbx_backend *b, char **out);
/** Adds lifetime (ISO 8601); *time_expires (may be NULL) gets the new expiry
 * (RFC 3339). EUNSUPPORTED locally. */
OCISBX_API int ocisbx_backend_extend(ocisbx_backend *b, const char *duration, char **time_expires);
/** Created: deletes the sandbox (already gone is fine). Idempotent. */
OCISBX_API int ocisbx_backend_close(ocisbx_backend *b);
/** Gives up a created sandbox: close (and free) no longer delete it (the
 * CLI's create, which leaves the sandbox for later commands). */
OCISBX_API int ocisbx_backend_disown(ocisbx_backend *b);
/** Closes (errors ignored) and frees. NULL: no-op. */
OCISBX_API void ocisbx_backend_free(ocisbx_backend *b);

/* ---- what the layers above need (the harness) ------------------------------------ */
/** The most output one command of this backend returns, in bytes (its
 * max_output_bytes option, or OCISBX_BACKEND_DEFAULT_MAX_OUTPUT). */
OCISBX_API size_t ocisbx_backend_max_output_bytes(const ocisbx_backend *b);
/** A copy of text (len bytes, any bytes) in which every occurrence of a
 * secret value of the backend's env (ocisbx_backend_options_add_env with
 * secret set) is replaced by "[REDACTED]". *out is NUL-terminated and freed
 * with ocisbx_free; *out_len (may be NULL) gets its length. */
OCISBX_API int ocisbx_backend_redact(const ocisbx_backend *b, const char *text, size_t len, char **out,
                                     size_t *out_len);
/** The workspace's path rule, the one every operation applies: path
 * (absolute under /workspace, or relative to it) as a normalised absolute
 * path ("/workspace/a/b"; "." and ".." resolved lexically, repeated slashes
 * dropped; "/workspace" itself for the root). A path outside /workspace, or
 * one whose ".." climbs above it: OCISBX_EFORBIDDEN; empty: OCISBX_EINVAL.
 * Symlinks are not looked at (see ocisbx_backend_resolve_path). *out is
 * freed with ocisbx_free. */
OCISBX_API int ocisbx_backend_workspace_path(const char *path, char **out);

/* ---- exec ------------------------------------------------------------------------ */
/** Options of one exec (and of a job). */
typedef struct ocisbx_exec_options ocisbx_exec_options;
/** Makes exec options with the defaults. */
OCISBX_API int ocisbx_exec_options_new(ocisbx_exec_options **out);
/** Frees exec options. */
OCISBX_API void ocisbx_exec_options_free(ocisbx_exec_options *o);
/** Default OCISBX_BACKEND_DEFAULT_EXEC_TIMEOUT_MS; rounded up to seconds. */
OCISBX_API int ocisbx_exec_options_set_timeout_ms(ocisbx_exec_options *o, int64_t ms);
/** A sandbox path (default /workspace). */
OCISBX_API int ocisbx_exec_options_set_cwd(ocisbx_exec_options *o, const char *cwd);
/** Adds one variable to the command's environment (secret: never logged nor shown). */
OCISBX_API int ocisbx_exec_options_add_env(ocisbx_exec_options *o, const char *name, const char *value, int secret);
/** 0: the backend's. */
OCISBX_API int ocisbx_exec_options_set_max_output_bytes(ocisbx_exec_options *o, size_t n);
/** Live output (merged stdout and stderr, in the order written): the head as
 * it is produced (the last few hundred bytes of a short output only at the
 * end); a non-zero return cancels the command (OCISBX_ECANCELED). */
OCISBX_API int ocisbx_exec_options_set_on_output(ocisbx_exec_options *o, ocisbx_write_fn fn, void *user_data);

/** What a finished (or timed-out) exec gives back. */
typedef struct ocisbx_exec_result ocisbx_exec_result;
/** Frees an exec result. */
OCISBX_API void ocisbx_exec_result_free(ocisbx_exec_result *r);
/** 1 and *out set when the command finished with an exit status; 0 when it
 * did not finish (timed out, killed). */
OCISBX_API int ocisbx_exec_result_has_exit_code(const ocisbx_exec_result *r, int *out);
/** 1 when the command was stopped at its timeout. */
OCISBX_API int ocisbx_exec_result_timed_out(const ocisbx_exec_result *r);
/** 1 when output was left out (more than the output cap). */
OCISBX_API int ocisbx_exec_result_truncated(const ocisbx_exec_result *r);
/** What comes back: head, note, tail (NUL-terminated; *len may be NULL). */
OCISBX_API const char *ocisbx_exec_result_output(const ocisbx_exec_result *r, size_t *len);
/** The whole output's size and lowercase hex SHA-256 (computed in the
 * workspace); the returned bytes' size and SHA-256. */
OCISBX_API uint64_t ocisbx_exec_result_total_bytes(const ocisbx_exec_result *r);
/** Lowercase hex SHA-256 of the whole output. */
OCISBX_API const char *ocisbx_exec_result_total_sha256(const ocisbx_exec_result *r);
/** Size of the returned output (head + note + tail). */
OCISBX_API uint64_t ocisbx_exec_result_returned_bytes(const ocisbx_exec_result *r);
/** Lowercase hex SHA-256 of the returned output. */
OCISBX_API const char *ocisbx_exec_result_returned_sha256(const ocisbx_exec_result *r);
/** Bytes of the output left out (the number the note gives). */
OCISBX_API uint64_t ocisbx_exec_result_dropped_bytes(const ocisbx_exec_result *r);
/** How long the call took, in milliseconds. */
OCISBX_API int64_t ocisbx_exec_result_duration_ms(const ocisbx_exec_result *r);
/** When the call started: ms since the epoch (wall clock). */
OCISBX_API int64_t ocisbx_exec_result_start_time_ms(const ocisbx_exec_result *r);
/** The service's command id (OCI), NULL locally. */
OCISBX_API const char *ocisbx_exec_result_command_id(const ocisbx_exec_result *r);

/** command: a shell command line run by /bin/sh in the workspace. A command
 * that did not finish in time is not an error: the result says timed_out. */
OCISBX_API int ocisbx_backend_exec(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o,
                                   ocisbx_exec_result **out);
/** argv: each word shell-quoted (any byte string but NUL). */
OCISBX_API int ocisbx_backend_exec_argv(ocisbx_backend *b, const char *const *argv, size_t argc,
                                        const ocisbx_exec_options *o, ocisbx_exec_result **out);

/* ---- background jobs ------------------------------------------------------------ */
/** A job runs like exec (the same timeout, env and cwd options; no output
 * callback) but the call returns at once with its id ("job-" and 16
 * letters or digits). Its state lives in `/workspace/.ocisbx/jobs/<id>/`, so
 * another backend connected to the same sandbox can read and kill it.
 * close ends the jobs this backend started (a created sandbox is deleted
 * anyway). A local job lives as long as the process that started it. */
OCISBX_API int ocisbx_backend_job_start(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o,
                                        char **job_id);
/** A background job's state, as read by ocisbx_backend_job_status. */
typedef struct ocisbx_job_status ocisbx_job_status;
/** Reads a job's state; free *out with ocisbx_job_status_free. */
OCISBX_API int ocisbx_backend_job_status(ocisbx_backend *b, const char *job_id, ocisbx_job_status **out);
/** Frees a job status. */
OCISBX_API void ocisbx_job_status_free(ocisbx_job_status *s);
/** 1 while the job runs. */
OCISBX_API int ocisbx_job_status_running(const ocisbx_job_status *s);
/** 1 and *out set when it finished with an exit status. */
OCISBX_API int ocisbx_job_status_has_exit_code(const ocisbx_job_status *s, int *out);
/** 1 when the job was stopped at its timeout. */
OCISBX_API int ocisbx_job_status_timed_out(const ocisbx_job_status *s);
/** 1 when the job was killed (ocisbx_backend_job_kill). */
OCISBX_API int ocisbx_job_status_killed(const ocisbx_job_status *s);
/** Since it started, until it finished (or now). */
OCISBX_API int64_t ocisbx_job_status_duration_ms(const ocisbx_job_status *s);
/** The size of the job's merged output so far. */
OCISBX_API uint64_t ocisbx_job_status_output_bytes(const ocisbx_job_status *s);
/** Up to max bytes (0: the backend's max_output_bytes) of its merged output
 * from byte offset (offset < 0: the last max bytes); *total gets the
 * output's size so far. *data is freed with ocisbx_free. */
OCISBX_API int ocisbx_backend_job_output(ocisbx_backend *b, const char *job_id, int64_t offset, size_t max,
                                         char **data, size_t *len, uint64_t *total);
/** TERM, KILL after the grace, to the whole tree; 0 when it already ended. */
OCISBX_API int ocisbx_backend_job_kill(ocisbx_backend *b, const char *job_id);

/* ---- files ------------------------------------------------------------------------- */
/** Exact bytes. Missing: OCISBX_ENOTFOUND; a directory: OCISBX_EISDIR.
 * *data is freed with ocisbx_free. */
OCISBX_API int ocisbx_backend_read_bytes(ocisbx_backend *b, const char *path, unsigned char **data, size_t *len);
/** To a sink as it arrives, checked at the end (on OCISBX_EINTEGRITY the
 * bytes delivered must be discarded). */
OCISBX_API int ocisbx_backend_read_to_callback(ocisbx_backend *b, const char *path, ocisbx_write_fn write,
                                               void *user_data);
/** To a local file (a temporary name beside it, renamed when complete). */
OCISBX_API int ocisbx_backend_read_to_path(ocisbx_backend *b, const char *path, const char *local_path);

/** Text as numbered lines ("%6d\t<line>\n", cat -n); offset: the first line
 * (1-based, 0 = 1), limit: lines (0 = 2000). Lines over 2000 characters are
 * cut with a note. Only the window leaves the workspace. Binary content
 * (a NUL byte or invalid UTF-8 in the first 8 KiB) fails with OCISBX_EBINARY
 * and *out still set (size, SHA-256). */
typedef struct ocisbx_text_result ocisbx_text_result;
/** Reads a window of a text file as numbered lines (see above); free *out with ocisbx_text_result_free. */
OCISBX_API int ocisbx_backend_read_text(ocisbx_backend *b, const char *path, int64_t offset, int64_t limit,
                                        ocisbx_text_result **out);
/** Frees a text result. */
OCISBX_API void ocisbx_text_result_free(ocisbx_text_result *r);
/** The numbered lines ("%6d\t<line>\n" each). */
OCISBX_API const char *ocisbx_text_result_text(const ocisbx_text_result *r);
/** The number of lines in the whole file. */
OCISBX_API int64_t ocisbx_text_result_total_lines(const ocisbx_text_result *r);
/** The number (1-based) of the first line returned. */
OCISBX_API int64_t ocisbx_text_result_first_line(const ocisbx_text_result *r);
/** The number of lines returned. */
OCISBX_API int64_t ocisbx_text_result_line_count(const ocisbx_text_result *r);
/** The whole file's size in bytes. */
OCISBX_API uint64_t ocisbx_text_result_size(const ocisbx_text_result *r);
/** Lowercase hex SHA-256 of the whole file. */
OCISBX_API const char *ocisbx_text_result_sha256(const ocisbx_text_result *r);
/** 1 when the content is binary (the read failed with OCISBX_EBINARY). */
OCISBX_API int ocisbx_text_result_is_binary(const ocisbx_text_result *r);

/** Parents created. Up to OCISBX_BACKEND_PART_SIZE: one checked write.
 * Above: parts to temporary names, joined and checked (sha256sum) in the
 * workspace, then renamed over the target; a failure leaves the old file. */
OCISBX_API int ocisbx_backend_write(ocisbx_backend *b, const char *path, const void *data, size_t len);
/** Streamed: memory bounded by one part. */
OCISBX_API int ocisbx_backend_write_from_path(ocisbx_backend *b, const char *path, const char *local_path);
/** Streamed from a callback until it returns 0 (memory bounded by one part). */
OCISBX_API int ocisbx_backend_write_from_callback(ocisbx_backend *b, const char *path, ocisbx_read_fn read,
                                                  void *user_data);

/** Replaces old_text (non-empty) by new_text: exactly one occurrence unless
 * replace_all. None: OCISBX_ENOMATCH; several without replace_all:
 * OCISBX_ENOTUNIQUE; expected_sha256 (hex, may be NULL) not the file's:
 * OCISBX_ECONFLICT; nothing changed then. A file with CRLF line ends
 * matches LF in old_text and keeps CRLF. *count (may be NULL) gets the
 * number of replacements. */
OCISBX_API int ocisbx_backend_edit(ocisbx_backend *b, const char *path, const char *old_text, const char *new_text,
                                   int replace_all, const char *expected_sha256, size_t *count);

/* ---- search, glob, ls --------------------------------------------------------------- */
/** All skip /workspace/.ocisbx; file names may hold any byte. */
typedef struct ocisbx_search_options ocisbx_search_options;
/** Makes search options with the defaults. */
OCISBX_API int ocisbx_search_options_new(ocisbx_search_options **out);
/** Frees search options. */
OCISBX_API void ocisbx_search_options_free(ocisbx_search_options *o);
/** A directory or file to search (default /workspace). */
OCISBX_API int ocisbx_search_options_set_path(ocisbx_search_options *o, const char *path);
/** The pattern is a fixed string instead of a POSIX ERE (grep -F / -E). */
OCISBX_API int ocisbx_search_options_set_literal(ocisbx_search_options *o, int literal);
/** Match without regard to case (grep -i). */
OCISBX_API int ocisbx_search_options_set_ignore_case(ocisbx_search_options *o, int ignore_case);
/** Only files whose name matches (no '/': the name at any depth; with '/':
 * the path below the searched directory, '**' crossing directories). */
OCISBX_API int ocisbx_search_options_set_glob(ocisbx_search_options *o, const char *glob);
/** 1..OCISBX_BACKEND_SEARCH_MAX_RESULTS; default OCISBX_BACKEND_DEFAULT_SEARCH_RESULTS (100). */
OCISBX_API int ocisbx_search_options_set_max_results(ocisbx_search_options *o, size_t max);

/** Matching lines (binary files skipped), in path order. */
typedef struct ocisbx_search_result ocisbx_search_result;
/** Searches file contents for pattern (a POSIX ERE, or a fixed string); free *out with ocisbx_search_result_free. */
OCISBX_API int ocisbx_backend_search(ocisbx_backend *b, const char *pattern, const ocisbx_search_options *o,
                                     ocisbx_search_result **out);
/** Frees a search result. */
OCISBX_API void ocisbx_search_result_free(ocisbx_search_result *r);
/** The number of matching lines returned. */
OCISBX_API size_t ocisbx_search_result_count(const ocisbx_search_result *r);
/** Absolute (/workspace/...). */
OCISBX_API const char *ocisbx_search_result_path(const ocisbx_search_result *r, size_t i);
/** The line number (1-based) of match i. */
OCISBX_API int64_t ocisbx_search_result_line(const ocisbx_search_result *r, size_t i);
/** The line (cut at 2000 characters). */
OCISBX_API const char *ocisbx_search_result_text(const ocisbx_search_result *r, size_t i);
/** 1 when there were more matches than max_results. */
OCISBX_API int ocisbx_search_result_truncated(const ocisbx_search_result *r);

/** Entries: glob gives absolute paths of files (and links), ls the names in
 * one directory with their type ('f' file, 'd' directory, 'l' symlink, 'o'
 * other) and size. */
typedef struct ocisbx_entry_list ocisbx_entry_list;
/** path NULL: /workspace; max 0: 1000. */
OCISBX_API int ocisbx_backend_glob(ocisbx_backend *b, const char *pattern, const char *path, size_t max,
                                   ocisbx_entry_list **out);
/** Lists one directory: names, types and sizes; free *out with ocisbx_entry_list_free. */
OCISBX_API int ocisbx_backend_ls(ocisbx_backend *b, const char *path, ocisbx_entry_list **out);
/** Frees an entry list. */
OCISBX_API void ocisbx_entry_list_free(ocisbx_entry_list *l);
/** The number of entries. */
OCISBX_API size_t ocisbx_entry_list_count(const ocisbx_entry_list *l);
/** Entry i: an absolute path (glob) or a name (ls). */
OCISBX_API const char *ocisbx_entry_list_name(const ocisbx_entry_list *l, size_t i);
/** The type of entry i: 'f' file, 'd' directory, 'l' symlink, 'o' other. */
OCISBX_API char ocisbx_entry_list_type(const ocisbx_entry_list *l, size_t i);
/** The size of entry i in bytes. */
OCISBX_API uint64_t ocisbx_entry_list_size(const ocisbx_entry_list *l, size_t i);
/** 1 when there were more entries than the maximum. */
OCISBX_API int ocisbx_entry_list_truncated(const ocisbx_entry_list *l);

#ifdef __cplusplus
}
#endif
#endif
