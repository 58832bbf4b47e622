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
/** How often create polls the sandbox when no interval is set (nor $OCI_SANDBOX_POLL_INTERVAL). */
#define OCISBX_BACKEND_DEFAULT_POLL_INTERVAL_MS (OCISBX_DEFAULT_POLL_INTERVAL_S * 1000)
/** A command's timeout when the call gives none. */
#define OCISBX_BACKEND_DEFAULT_EXEC_TIMEOUT_MS 120000
/** Grace between TERM and KILL at a command's deadline. */
#define OCISBX_BACKEND_KILL_GRACE_S 2
/** The client gives up on a command this long after deadline + grace. */
#define OCISBX_BACKEND_CLIENT_MARGIN_MS 5000
/** close of an owned sandbox: how long it waits for STOPPED before it deletes anyway. */
#define OCISBX_BACKEND_DEFAULT_STOP_TIMEOUT_MS (OCISBX_DEFAULT_STOP_TIMEOUT_S * 1000)
/** close of an owned sandbox: how often it asks for the state while it waits for STOPPED. */
#define OCISBX_BACKEND_STOP_POLL_MS 1000
/** Writes above this go in parts. */
#define OCISBX_BACKEND_PART_SIZE OCISBX_FILE_PART_MAX
/** A write in parts to a sandbox: parts in flight at once when none is set. */
#define OCISBX_BACKEND_DEFAULT_PARALLEL_PARTS 4
/** The most parts in flight at once ocisbx_backend_options_set_parallel_parts accepts. */
#define OCISBX_BACKEND_MAX_PARALLEL_PARTS 16
/** read_text: default line limit, longest line kept. */
#define OCISBX_BACKEND_READ_LIMIT 2000
/** read_text: the longest line kept (characters). */
#define OCISBX_BACKEND_LINE_MAX 2000
/** search: the most matches returned when no maximum is set. */
#define OCISBX_BACKEND_DEFAULT_SEARCH_RESULTS 100
/** search: the most entries one page may have (the search cap; head_limit,
 * max_results, ls limit). */
#define OCISBX_SEARCH_MAX_LIMIT 100000

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
/** How often the backend's waits poll (must be positive; else
 * $OCI_SANDBOX_POLL_INTERVAL in decimal seconds, else 2000 ms): a create
 * waiting for RUNNING every interval, a close waiting for STOPPED at most
 * every OCISBX_BACKEND_STOP_POLL_MS, a canceled command at most every
 * 200 ms. The engine's waits too. */
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
/** Grace between TERM and KILL at a command's (and a job's) timeout, whole
 * seconds 1..60 (default OCISBX_BACKEND_KILL_GRACE_S). */
OCISBX_API int ocisbx_backend_options_set_kill_grace_s(ocisbx_backend_options *o, int seconds);
/** How long after timeout + grace the client gives up on a command that has
 * not come back (cancels it, result timed_out), 0..3600000 ms (default
 * OCISBX_BACKEND_CLIENT_MARGIN_MS). */
OCISBX_API int ocisbx_backend_options_set_client_margin_ms(ocisbx_backend_options *o, int64_t ms);
/** close of an owned sandbox: how long it waits for STOPPED after the stop
 * request before it deletes anyway (else $OCI_SANDBOX_STOP_TIMEOUT in whole
 * seconds, else OCISBX_BACKEND_DEFAULT_STOP_TIMEOUT_MS; must be positive). It polls every
 * OCISBX_BACKEND_STOP_POLL_MS, or every poll_interval (the option or the
 * setting) when that is shorter. */
OCISBX_API int ocisbx_backend_options_set_stop_timeout_ms(ocisbx_backend_options *o, int64_t ms);
/** A write above OCISBX_BACKEND_PART_SIZE to a sandbox: how many parts are
 * sent at once, 1..OCISBX_BACKEND_MAX_PARALLEL_PARTS (default
 * OCISBX_BACKEND_DEFAULT_PARALLEL_PARTS; 1: one after the other). Client
 * memory for a write from a file or a callback is at most that many parts
 * (OCISBX_BACKEND_PART_SIZE each); from memory, none. A local backend
 * writes its parts one after the other whatever this says. */
OCISBX_API int ocisbx_backend_options_set_parallel_parts(ocisbx_backend_options *o, int parts);
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
/** Attaches to an existing sandbox; never deletes it (unless adopted). No
 * request is made: a sandbox that does not exist shows at the first
 * operation (OCISBX_ENOTFOUND), and ocisbx_backend_sandbox_json gets it then. */
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
/** The sandbox as created (RUNNING), or as a get answers now for a connected
 * one, as JSON; EUNSUPPORTED locally. */
OCISBX_API int ocisbx_backend_sandbox_json(const ocisbx_backend *b, char **out);
/** Adds lifetime (ISO 8601); *time_expires (may be NULL) gets the new expiry
 * (RFC 3339). EUNSUPPORTED locally. */
OCISBX_API int ocisbx_backend_extend(ocisbx_backend *b, const char *duration, char **time_expires);
/** The REST client the backend uses (borrowed: valid while the backend lives,
 * the caller's own when one was given); NULL for a local directory. */
OCISBX_API ocisbx_client *ocisbx_backend_client(const ocisbx_backend *b);
/** Created (or adopted): stops the sandbox (StopSandbox, isForce false), waits
 * until it is STOPPED (stop timeout), then deletes it; not found or DELETED
 * on the way ends the stop wait, and the delete is sent anyway: only the
 * delete's 404 means gone, which is success. When the stop fails or times out
 * the sandbox is deleted anyway and close returns the stop's error
 * (OCISBX_ETIMEOUT: not STOPPED in time); ocisbx_backend_close_flags says
 * what happened. The cancel callback ends the wait early; the delete is sent
 * anyway (bounded by 60 s). Connected: ends the jobs this backend started
 * (unless detached). Idempotent: once the sandbox is deleted, 0. */
OCISBX_API int ocisbx_backend_close(ocisbx_backend *b);
/** ocisbx_backend_close_flags: the sandbox was DELETED or not found already. */
#define OCISBX_CLOSE_ALREADY_GONE 1u
/** ocisbx_backend_close_flags: the stop request failed; deleted anyway. */
#define OCISBX_CLOSE_STOP_FAILED 2u
/** ocisbx_backend_close_flags: not STOPPED within the stop timeout (or the
 * wait was canceled); deleted anyway. */
#define OCISBX_CLOSE_STOP_TIMED_OUT 4u
/** ocisbx_backend_close_flags: the sandbox was deleted by this close. */
#define OCISBX_CLOSE_DELETED 8u
/** What the last close of an owned sandbox did (OCISBX_CLOSE_* bits); 0 for
 * a connected or local backend and before a close. */
OCISBX_API unsigned ocisbx_backend_close_flags(const ocisbx_backend *b);
/** Gives up a created sandbox: close (and free) no longer delete it (the
 * CLI's create, which leaves the sandbox for later commands). */
OCISBX_API int ocisbx_backend_disown(ocisbx_backend *b);
/** Takes a connected sandbox over: close then stops and deletes it, as for a
 * created one (the CLI's close). EUNSUPPORTED locally. */
OCISBX_API int ocisbx_backend_adopt(ocisbx_backend *b);
/** Leaves this backend's background jobs running: close and free no longer
 * end them (their state stays in /workspace/.ocisbx/jobs/, so any later
 * process can take their status, output and kill). The CLI always uses it.
 * Jobs started after the call are detached too. */
OCISBX_API int ocisbx_backend_detach_jobs(ocisbx_backend *b);
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
/** The path the workspace's operations reach for path: the workspace path
 * rule, then its symlinks followed as the workspace sees them (one small
 * script run in the workspace; components that do not exist are kept).
 * *out is an absolute /workspace path (ocisbx_free). A path that leads
 * outside /workspace, lexically or through a symlink: OCISBX_EFORBIDDEN. */
OCISBX_API int ocisbx_backend_resolve_path(ocisbx_backend *b, const char *path, char **out);

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
 * it is produced (a line within about 100 ms); when the output is cut, the
 * head's last few hundred bytes, the note and the tail at the end. What it
 * gets, in all, is the returned output. A non-zero return cancels the
 * command (OCISBX_ECANCELED). */
OCISBX_API int ocisbx_exec_options_set_on_output(ocisbx_exec_options *o, ocisbx_write_fn fn, void *user_data);
/** Run as a background job and wait at most ms (1..86400000) for it: when it
 * ends in time, the usual result; else the result names the job
 * (ocisbx_exec_result_job_id), which keeps running, with the output so far
 * (its first max_output_bytes; truncated when there is more) and no exit
 * code. No output callback in this mode. 0 (default): exec waits for the end. */
OCISBX_API int ocisbx_exec_options_set_yield_ms(ocisbx_exec_options *o, int64_t ms);

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
/** With a yield (ocisbx_exec_options_set_yield_ms): the id of the job that
 * still runs; NULL when the command ended (and without a yield). */
OCISBX_API const char *ocisbx_exec_result_job_id(const ocisbx_exec_result *r);

/** command: a shell command line run by /bin/sh in the workspace. A command
 * that did not finish in time is not an error: the result says timed_out. */
OCISBX_API int ocisbx_backend_exec(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o,
                                   ocisbx_exec_result **out);
/** The command line a user ran, recovered from the command text the service
 * records for a backend exec or job (the wrapper's first argument): *out
 * (freed with ocisbx_free) is that command line; "ocisbx <script>" for one of
 * the backend's own steps (a job's status, a text read, ...); NULL when
 * wire_command is none of the backend's scripts (a command run as it is).
 * For listings that show what the user ran (the CLI's commands table). */
OCISBX_API int ocisbx_backend_user_command(const char *wire_command, char **out);
/** argv: each word shell-quoted (any byte string but NUL). */
OCISBX_API int ocisbx_backend_exec_argv(ocisbx_backend *b, const char *const *argv, size_t argc,
                                        const ocisbx_exec_options *o, ocisbx_exec_result **out);

/* ---- background jobs ------------------------------------------------------------ */
/** A job runs like exec (the same timeout, env and cwd options; no output
 * callback) but the call returns at once with its id ("job-" and 16
 * letters or digits). Its state lives in `/workspace/.ocisbx/jobs/<id>/`, so
 * another backend connected to the same sandbox can read and kill it.
 * close ends the jobs this backend started (a created sandbox is deleted
 * anyway) unless they were detached (ocisbx_backend_detach_jobs): then they
 * outlive the backend and the process, on both backends. */
OCISBX_API int ocisbx_backend_job_start(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o,
                                        char **job_id);
/** A background job's state, as read by ocisbx_backend_job_status. */
typedef struct ocisbx_job_status ocisbx_job_status;
/** Reads a job's state; free *out with ocisbx_job_status_free. */
OCISBX_API int ocisbx_backend_job_status(ocisbx_backend *b, const char *job_id, ocisbx_job_status **out);
/** Waits until the job ends (exits, times out or is killed) or wait_ms
 * (0..86400000) passes, then reads its state as ocisbx_backend_job_status
 * does (running tells which). The wait happens in the workspace: one run. */
OCISBX_API int ocisbx_backend_job_wait(ocisbx_backend *b, const char *job_id, int64_t wait_ms,
                                       ocisbx_job_status **out);
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
 * output's size so far. The next call's offset is offset + *len (with
 * offset < 0: *total - *len + *len = *total). Exact bytes. *data is freed
 * with ocisbx_free. */
OCISBX_API int ocisbx_backend_job_output(ocisbx_backend *b, const char *job_id, int64_t offset, size_t max,
                                         char **data, size_t *len, uint64_t *total);
/** TERM, KILL after the grace, to the whole tree; returns once it has ended
 * (within grace + a few seconds), its state then ended and killed. 0 also
 * when it had already ended (nothing is done; see
 * ocisbx_backend_job_stop to tell the two apart). A job of another
 * process (or an earlier one) can be killed too. */
OCISBX_API int ocisbx_backend_job_kill(ocisbx_backend *b, const char *job_id);
/** The same; *killed (may be NULL) is 1 when this call ended a running job,
 * 0 when the job had already ended (no wait then). */
OCISBX_API int ocisbx_backend_job_stop(ocisbx_backend *b, const char *job_id, int *killed);

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
 * OCISBX_ECONFLICT; nothing changed then. Exact occurrences are looked for
 * first; only when there is none, a newline in old_text also matches CRLF
 * in the file, and then the newlines of new_text are written as CRLF. A
 * file above OCISBX_BACKEND_DEFAULT_MAX_EDIT_BYTES: OCISBX_ETOOLARGE before
 * it is read. *count (may be NULL) gets the number of replacements. One
 * edit of ocisbx_backend_apply_edits. */
OCISBX_API int ocisbx_backend_edit(ocisbx_backend *b, const char *path, const char *old_text, const char *new_text,
                                   int replace_all, const char *expected_sha256, size_t *count);

/** The most bytes a file may have for edit (64 MiB); larger ones are
 * refused with OCISBX_ETOOLARGE before they are read. */
#define OCISBX_BACKEND_DEFAULT_MAX_EDIT_BYTES (64u * 1024 * 1024)
/** The most bytes of the diff an edit returns (the note included). */
#define OCISBX_BACKEND_DEFAULT_MAX_DIFF_BYTES 65536

/** Several edits of one file, applied in order (each to the result of the
 * ones before), all or nothing. */
typedef struct ocisbx_edit_options ocisbx_edit_options;
/** Makes edit options with no edits and the defaults. */
OCISBX_API int ocisbx_edit_options_new(ocisbx_edit_options **out);
/** Frees edit options. */
OCISBX_API void ocisbx_edit_options_free(ocisbx_edit_options *o);
/** Adds one edit (copied): old_text non-empty; replace_all 0: it must occur
 * exactly once. The edit's index is the number of edits added before it. */
OCISBX_API int ocisbx_edit_options_add(ocisbx_edit_options *o, const char *old_text, const char *new_text,
                                       int replace_all);
/** 1: compute the result and its diff, write nothing (default 0). */
OCISBX_API int ocisbx_edit_options_set_dry_run(ocisbx_edit_options *o, int dry_run);
/** Lowercase or uppercase hex SHA-256 the file must have before the edits
 * (NULL: no check); another: OCISBX_ECONFLICT, nothing changed. */
OCISBX_API int ocisbx_edit_options_set_expected_sha256(ocisbx_edit_options *o, const char *hex);
/** The most bytes of the result's diff (default
 * OCISBX_BACKEND_DEFAULT_MAX_DIFF_BYTES, at least 128). */
OCISBX_API int ocisbx_edit_options_set_max_diff_bytes(ocisbx_edit_options *o, size_t n);
/** The largest file edited (default OCISBX_BACKEND_DEFAULT_MAX_EDIT_BYTES);
 * a larger one is OCISBX_ETOOLARGE, refused before it is read. */
OCISBX_API int ocisbx_edit_options_set_max_file_bytes(ocisbx_edit_options *o, uint64_t n);

/** What ocisbx_backend_apply_edits did, or (with OCISBX_ENOMATCH or
 * OCISBX_ENOTUNIQUE) which edit failed. */
typedef struct ocisbx_edit_result ocisbx_edit_result;
/** Applies the options' edits (at least one) to the file at path, in order,
 * atomically: every edit is checked against the result of the ones before
 * it, then the file is written once (a checked write, temporary name and
 * rename); when any edit fails nothing is written and the error message
 * names the edit ("edits[1]: ..."), its index also in *out
 * (ocisbx_edit_result_failed_edit; *out is set for OCISBX_ENOMATCH and
 * OCISBX_ENOTUNIQUE, NULL otherwise). Each edit matches as
 * ocisbx_backend_edit's does. A dry run writes nothing. Missing file:
 * OCISBX_ENOTFOUND; a directory: OCISBX_EISDIR; too large:
 * OCISBX_ETOOLARGE (the message gives the size and the limit). Free *out with ocisbx_edit_result_free. */
OCISBX_API int ocisbx_backend_apply_edits(ocisbx_backend *b, const char *path, const ocisbx_edit_options *o,
                                          ocisbx_edit_result **out);
/** Frees an edit result. */
OCISBX_API void ocisbx_edit_result_free(ocisbx_edit_result *r);
/** The number of edits (of the options). */
OCISBX_API size_t ocisbx_edit_result_edit_count(const ocisbx_edit_result *r);
/** The replacements edit i made (0 for a failed or unreached edit). */
OCISBX_API size_t ocisbx_edit_result_replacements(const ocisbx_edit_result *r, size_t i);
/** The replacements of all edits. */
OCISBX_API size_t ocisbx_edit_result_total_replacements(const ocisbx_edit_result *r);
/** 1 when edit i matched through the CRLF-tolerant rule (no exact match). */
OCISBX_API int ocisbx_edit_result_crlf_matched(const ocisbx_edit_result *r, size_t i);
/** The index of the edit that failed, -1 when none did. */
OCISBX_API int64_t ocisbx_edit_result_failed_edit(const ocisbx_edit_result *r);
/** The unified diff of the whole change ("--- a/<path>" / "+++ b/<path>",
 * paths relative to /workspace; "" when nothing changed), cut to the
 * options' max_diff_bytes with a last line "[... N bytes of diff dropped
 * ...]" when longer. *len may be NULL. */
OCISBX_API const char *ocisbx_edit_result_diff(const ocisbx_edit_result *r, size_t *len);
/** The bytes of the diff left out (0 when it is whole). */
OCISBX_API uint64_t ocisbx_edit_result_diff_dropped(const ocisbx_edit_result *r);
/** 1 for a dry run (nothing written). */
OCISBX_API int ocisbx_edit_result_dry_run(const ocisbx_edit_result *r);
/** Lowercase hex SHA-256 of the file before the edits. */
OCISBX_API const char *ocisbx_edit_result_sha256_before(const ocisbx_edit_result *r);
/** Lowercase hex SHA-256 of the result (what was written, or would be). */
OCISBX_API const char *ocisbx_edit_result_sha256_after(const ocisbx_edit_result *r);
/** The size of the result in bytes. */
OCISBX_API uint64_t ocisbx_edit_result_size(const ocisbx_edit_result *r);

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
/** The most context lines before or after a match. */
#define OCISBX_SEARCH_MAX_CONTEXT 100
/** The same as ocisbx_search_options_set_head_limit (its older name);
 * default OCISBX_BACKEND_DEFAULT_SEARCH_RESULTS (100). */
OCISBX_API int ocisbx_search_options_set_max_results(ocisbx_search_options *o, size_t max);

/** What a search returns: its entries are matching lines, files or counts. */
typedef enum ocisbx_search_mode {
    /** Matching lines (path, line number, text, context): the default. */
    OCISBX_SEARCH_CONTENT = 0,
    /** The files with at least one matching line (paths). */
    OCISBX_SEARCH_FILES_WITH_MATCHES = 1,
    /** Per file with matches: the number of matching lines. */
    OCISBX_SEARCH_COUNT = 2
} ocisbx_search_mode;
/** The output mode (default OCISBX_SEARCH_CONTENT); another value: OCISBX_EINVAL. */
OCISBX_API int ocisbx_search_options_set_output_mode(ocisbx_search_options *o, ocisbx_search_mode mode);
/** Content mode: the lines before and after each match that come back with
 * it (each 0..OCISBX_SEARCH_MAX_CONTEXT, default 0); other modes ignore it. */
OCISBX_API int ocisbx_search_options_set_context(ocisbx_search_options *o, size_t before, size_t after);
/** The most entries returned (1..OCISBX_SEARCH_MAX_LIMIT, default
 * OCISBX_BACKEND_DEFAULT_SEARCH_RESULTS). */
OCISBX_API int ocisbx_search_options_set_head_limit(ocisbx_search_options *o, size_t limit);
/** Skips that many entries first (default 0): the next page starts at
 * offset + head_limit. */
OCISBX_API int ocisbx_search_options_set_offset(ocisbx_search_options *o, uint64_t offset);

/** One page of entries in path order (and line order within a file);
 * binary files are skipped. */
typedef struct ocisbx_search_result ocisbx_search_result;
/** Searches file contents for pattern (a POSIX ERE, or a fixed string); a
 * pattern grep refuses is OCISBX_EINVAL with grep's message. Free *out with
 * ocisbx_search_result_free. */
OCISBX_API int ocisbx_backend_search(ocisbx_backend *b, const char *pattern, const ocisbx_search_options *o,
                                     ocisbx_search_result **out);
/** Frees a search result. */
OCISBX_API void ocisbx_search_result_free(ocisbx_search_result *r);
/** The output mode the result has. */
OCISBX_API ocisbx_search_mode ocisbx_search_result_mode(const ocisbx_search_result *r);
/** The number of entries returned (matching lines, files or counts). */
OCISBX_API size_t ocisbx_search_result_count(const ocisbx_search_result *r);
/** Entry i's file: absolute (/workspace/...). */
OCISBX_API const char *ocisbx_search_result_path(const ocisbx_search_result *r, size_t i);
/** Content mode: the line number (1-based) of match i; 0 in other modes. */
OCISBX_API int64_t ocisbx_search_result_line(const ocisbx_search_result *r, size_t i);
/** Content mode: the line (cut at 2000 characters); NULL in other modes. */
OCISBX_API const char *ocisbx_search_result_text(const ocisbx_search_result *r, size_t i);
/** Count mode: the number of matching lines in file i; 0 in other modes. */
OCISBX_API uint64_t ocisbx_search_result_matches(const ocisbx_search_result *r, size_t i);
/** Content mode with context: how many lines before match i come back
 * (fewer than asked at the start of a file). */
OCISBX_API size_t ocisbx_search_result_before_count(const ocisbx_search_result *r, size_t i);
/** Line j (0: the earliest) of those before match i (cut at 2000
 * characters); its number is line(i) - before_count(i) + j. */
OCISBX_API const char *ocisbx_search_result_before(const ocisbx_search_result *r, size_t i, size_t j);
/** How many lines after match i come back (fewer at the end of a file). */
OCISBX_API size_t ocisbx_search_result_after_count(const ocisbx_search_result *r, size_t i);
/** Line j of those after match i; its number is line(i) + 1 + j. */
OCISBX_API const char *ocisbx_search_result_after(const ocisbx_search_result *r, size_t i, size_t j);
/** 1 when entries remain past this page (more than offset + head_limit). */
OCISBX_API int ocisbx_search_result_truncated(const ocisbx_search_result *r);

/** Entries: glob gives absolute paths of files (and links), ls the names in
 * one directory with their type ('f' file, 'd' directory, 'l' symlink, 'o'
 * other) and size. */
typedef struct ocisbx_entry_list ocisbx_entry_list;
/** path NULL: /workspace; max 0: 1000. */
OCISBX_API int ocisbx_backend_glob(ocisbx_backend *b, const char *pattern, const char *path, size_t max,
                                   ocisbx_entry_list **out);
/** The most entries one ls page has when no limit is given. */
#define OCISBX_BACKEND_LS_DEFAULT_LIMIT 10000
/** Lists one directory: names, types and sizes, in byte order of the names,
 * at most OCISBX_BACKEND_LS_DEFAULT_LIMIT (truncated when there are more);
 * free *out with ocisbx_entry_list_free. */
OCISBX_API int ocisbx_backend_ls(ocisbx_backend *b, const char *path, ocisbx_entry_list **out);
/** One page of a directory: the entries after the first offset ones, at most
 * limit (0: OCISBX_BACKEND_LS_DEFAULT_LIMIT; at most
 * OCISBX_SEARCH_MAX_LIMIT); truncated when more follow. */
OCISBX_API int ocisbx_backend_ls_page(ocisbx_backend *b, const char *path, uint64_t offset, size_t limit,
                                      ocisbx_entry_list **out);
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
/** 1 when entries remain past this list (more than the maximum, or past
 * the page). */
OCISBX_API int ocisbx_entry_list_truncated(const ocisbx_entry_list *l);

#ifdef __cplusplus
}
#endif
#endif
