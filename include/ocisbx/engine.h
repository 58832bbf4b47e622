/** @file
 * libocisbx engine: many sandboxes from one thread, event-driven, over
 * libcurl's multi interface (see docs/engine.md).
 *
 * Operations (create, exec, close) start without blocking and finish
 * through a completion callback, with the result types and the error
 * contract of the blocking calls (ocisbx_backend_create, ocisbx_backend_exec,
 * ocisbx_backend_close): rc is 0 or a negative OCISBX_E*, and while the
 * callback runs the thread's error object (ocisbx_error_last) is that
 * operation's error.
 *
 * Two ways to drive it:
 * - its own loop: ocisbx_engine_run (until idle, or for N ms);
 * - the caller's loop (poll, epoll, libuv, asyncio), as libcurl's
 *   curl_multi_socket_action: the engine tells which file descriptors it
 *   waits on (ocisbx_engine_set_socket_callback) and the timeout
 *   (ocisbx_engine_set_timer_callback); the loop tells it back
 *   (ocisbx_engine_socket_action, ocisbx_engine_timeout).
 *
 * Thread rules: one engine per thread. Every function of an engine is
 * called on the thread that drives it, and every callback runs on that
 * thread, from inside ocisbx_engine_run, ocisbx_engine_socket_action or
 * ocisbx_engine_timeout (and the start functions may call the socket and
 * timer callbacks). A callback may start and cancel operations; it must
 * not free the engine nor drive it (no run / socket_action / timeout).
 *
 * One connection pool per engine (a bound on open connections, reuse,
 * HTTP/2 multiplexing where the server offers it over TLS), one retry
 * budget, fairness across sandboxes (round robin: one sandbox with many
 * requests does not starve the others), and adaptive concurrency: a 429
 * or 503 answer is retried after its retry-after and halves the number of
 * requests in flight (additive increase, multiplicative decrease); creates
 * have their own bound and pace. */
#ifndef OCISBX_ENGINE_H
#define OCISBX_ENGINE_H

#include "common.h"
#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most connections an engine opens when no bound is set. */
#define OCISBX_ENGINE_DEFAULT_MAX_CONNECTIONS 128
/** The most requests in flight when no bound is set (the adaptive bound's top). */
#define OCISBX_ENGINE_DEFAULT_MAX_IN_FLIGHT 128
/** The most creates in flight when no bound is set. */
#define OCISBX_ENGINE_DEFAULT_MAX_CREATES 16

/** An engine. */
typedef struct ocisbx_engine ocisbx_engine;
/** Its options. */
typedef struct ocisbx_engine_options ocisbx_engine_options;
/** A sandbox of an engine: created by it (owned: close stops and deletes
 * it) or attached by id (close forgets it). Valid until its close
 * completes or the engine is freed. */
typedef struct ocisbx_engine_sandbox ocisbx_engine_sandbox;

/** Makes engine options with every default. */
OCISBX_API int ocisbx_engine_options_new(ocisbx_engine_options **out);
/** Frees engine options. */
OCISBX_API void ocisbx_engine_options_free(ocisbx_engine_options *o);
/** The sandbox settings (runtime, shape, expiration, env, output cap, the
 * client's config, profile, region, endpoint, CA bundle, timeouts) as the
 * blocking backend takes them; copied. NULL: every setting from the
 * environment or its default. A client set there is used, not copied (it
 * must outlive the engine and is driven by it only). */
OCISBX_API int ocisbx_engine_options_set_backend_options(ocisbx_engine_options *o,
                                                         const ocisbx_backend_options *bo);
/** The project sandboxes are created in ($OCI_SANDBOX_PROJECT_ID when unset). */
OCISBX_API int ocisbx_engine_options_set_project_id(ocisbx_engine_options *o, const char *project_id);
/** The most connections open at once (1..4096; default
 * OCISBX_ENGINE_DEFAULT_MAX_CONNECTIONS). */
OCISBX_API int ocisbx_engine_options_set_max_connections(ocisbx_engine_options *o, int n);
/** The most requests in flight (1..4096; default OCISBX_ENGINE_DEFAULT_MAX_IN_FLIGHT). */
OCISBX_API int ocisbx_engine_options_set_max_in_flight(ocisbx_engine_options *o, int n);
/** The most creates in flight (1..4096; default OCISBX_ENGINE_DEFAULT_MAX_CREATES). */
OCISBX_API int ocisbx_engine_options_set_max_creates(ocisbx_engine_options *o, int n);
/** A fixed pace of creates (per second, > 0; 0: none, the default), for a
 * tenancy whose limit is known; the adaptive pace never goes above it. */
OCISBX_API int ocisbx_engine_options_set_creates_per_second(ocisbx_engine_options *o, double rate);

/** Makes an engine (opts NULL: every default). Makes the client; sends
 * nothing. */
OCISBX_API int ocisbx_engine_new(const ocisbx_engine_options *opts, ocisbx_engine **out);
/** Frees the engine, leaving no sandbox behind. Operations still pending
 * are canceled (as ocisbx_engine_cancel_all) and run to their end first,
 * without their callbacks, for at most 30 s: a create whose request is in
 * flight waits for its answer and deletes the sandbox, a running command
 * is ended in the sandbox, a write's parts are removed, closes go on.
 * Then sandboxes it created and did not close are deleted (one DELETE
 * each, bounded by 30 s in all). The socket and timer callbacks are not
 * called from here. Must not be called from a callback (nothing is run
 * then: pending operations are abandoned). */
OCISBX_API void ocisbx_engine_free(ocisbx_engine *e);

/* ---- operations ------------------------------------------------------------- */
/** An operation's id (for ocisbx_engine_cancel); never 0. */
typedef uint64_t ocisbx_engine_op;

/** create finished: rc 0 with sb (the sandbox, RUNNING), else sb NULL and
 * no sandbox left behind. */
typedef void (*ocisbx_engine_create_fn)(int rc, ocisbx_engine_sandbox *sb, void *user_data);
/** exec finished: rc 0 with res (yours: free with ocisbx_exec_result_free),
 * else res NULL. */
typedef void (*ocisbx_engine_exec_fn)(int rc, ocisbx_exec_result *res, void *user_data);
/** close finished: the sandbox handle is freed right after. */
typedef void (*ocisbx_engine_close_fn)(int rc, void *user_data);

/** Creates a sandbox and waits for RUNNING (polling with timers), as
 * ocisbx_backend_create does: on any failure after the create was sent,
 * the sandbox is deleted. fn is called exactly once (unless the engine is
 * freed first). *op (may be NULL) gets the operation's id. A failure to
 * start (bad options) returns non-zero and fn is never called. */
OCISBX_API int ocisbx_engine_create_sandbox(ocisbx_engine *e, ocisbx_engine_create_fn fn, void *user_data,
                                            ocisbx_engine_op *op);
/** A sandbox that exists already, by id: exec runs in it, close forgets it
 * (nothing is stopped or deleted). No request. */
OCISBX_API int ocisbx_engine_attach_sandbox(ocisbx_engine *e, const char *sandbox_id, ocisbx_engine_sandbox **out);
/** The sandbox's id (NULL while its create has not been answered). */
OCISBX_API const char *ocisbx_engine_sandbox_id(const ocisbx_engine_sandbox *sb);
/** 1 when the engine created the sandbox (close deletes it), else 0. */
OCISBX_API int ocisbx_engine_sandbox_is_owned(const ocisbx_engine_sandbox *sb);

/** Runs a command in the sandbox as ocisbx_backend_exec does (the same
 * wrapper: the timeout inside, the capped head and tail, the client-side
 * deadline), over one RunSandboxCommandAndStream. The options are copied
 * (NULL: the defaults); a yield is refused (OCISBX_EUNSUPPORTED). The live
 * output callback gets the output as the command writes it (on the
 * engine's thread); its non-zero return ends the command (ECANCELED). A
 * service without runAndStream: one run-and-wait, the output with the
 * answer. */
OCISBX_API int ocisbx_engine_exec(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *command,
                                  const ocisbx_exec_options *o, ocisbx_engine_exec_fn fn, void *user_data,
                                  ocisbx_engine_op *op);
/** write finished: rc 0 when the file is at the path whole and checked. */
typedef void (*ocisbx_engine_write_fn)(int rc, void *user_data);
/** read finished: rc 0 with the file's bytes checked against the
 * service's SHA-256. Without a sink: data (yours: free with ocisbx_free;
 * a 0-byte file gives a non-NULL empty buffer) and len; with a sink: data
 * NULL and len the bytes the sink got. On a failure data is NULL (and
 * what a sink got must be discarded). */
typedef void (*ocisbx_engine_read_fn)(int rc, unsigned char *data, size_t len, void *user_data);

/** Writes a file in the sandbox as ocisbx_backend_write does, checked and
 * chunked: up to OCISBX_BACKEND_PART_SIZE one checked WriteSandboxFile
 * (the service checks its SHA-256); above, the parts go one after the
 * other to .ocisbx/write-<id>/ in the workspace, each checked, then one
 * workspace script joins them, checks the whole file's SHA-256 and
 * renames it over the path. A failed or canceled write leaves no partial
 * file at the path and no parts behind (their removal runs before the
 * callback). The same errors as ocisbx_backend_write (OCISBX_EISDIR,
 * OCISBX_EFORBIDDEN, OCISBX_EINTEGRITY, ...).
 *
 * data is borrowed, not copied: it must stay valid and unchanged until fn
 * is called (or the engine is freed); each request's body is read from
 * it. A cancel of a write whose join has started gets the join's result. */
OCISBX_API int ocisbx_engine_write_file(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *path,
                                        const void *data, size_t len, ocisbx_engine_write_fn fn, void *user_data,
                                        ocisbx_engine_op *op);
/** Reads a file of the sandbox as ocisbx_backend_read_bytes (sink NULL:
 * into memory, at most the client's download limit or
 * OCISBX_READ_BUFFER_MAX) or ocisbx_backend_read_to_callback (sink: the
 * bytes as they arrive, nothing held; a non-zero return from it cancels):
 * checked against the service's SHA-256, OCISBX_ENOTFOUND for nothing
 * there, OCISBX_EISDIR for a directory, OCISBX_EFORBIDDEN for a symlink
 * out of /workspace. */
OCISBX_API int ocisbx_engine_read_file(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *path,
                                       ocisbx_write_fn sink, void *sink_user_data, ocisbx_engine_read_fn fn,
                                       void *user_data, ocisbx_engine_op *op);
/** read_text finished: rc 0 with r (yours: free with
 * ocisbx_text_result_free); OCISBX_EBINARY with r too (its size and
 * SHA-256, no text); else r NULL. */
typedef void (*ocisbx_engine_text_fn)(int rc, ocisbx_text_result *r, void *user_data);
/** Numbered lines of a text file as ocisbx_backend_read_text reads them
 * (offset: the first line, 1-based, 0: 1; limit 0: the default): the
 * window is cut in the sandbox by the same workspace script, its output
 * read back byte exact and removed. The same errors (OCISBX_ENOTFOUND,
 * OCISBX_EISDIR, OCISBX_EBINARY, OCISBX_EFORBIDDEN, OCISBX_EINVAL). */
OCISBX_API int ocisbx_engine_read_text(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *path,
                                       int64_t offset, int64_t limit, ocisbx_engine_text_fn fn, void *user_data,
                                       ocisbx_engine_op *op);
/** Closes the sandbox as ocisbx_backend_close does: an owned one is
 * stopped, polled until STOPPED (at most the stop timeout) and deleted (a
 * 404 on the way ends the wait, the delete goes anyway; its own 404: gone
 * already, success); an attached one is forgotten.
 * Operations of the sandbox still pending are canceled first, and the
 * close starts once they have ended (a canceled write's parts removed).
 * A close cannot be canceled. */
OCISBX_API int ocisbx_engine_close_sandbox(ocisbx_engine *e, ocisbx_engine_sandbox *sb, ocisbx_engine_close_fn fn,
                                           void *user_data, ocisbx_engine_op *op);
/** Cancels an operation: it finishes with OCISBX_ECANCELED through its
 * callback (a create deletes its sandbox first; a running command is
 * canceled in the sandbox and its end awaited first; a write removes its
 * parts first). 0, or OCISBX_ENOTFOUND
 * when no such operation is pending (finished already), or OCISBX_EINVAL
 * for a close. */
OCISBX_API int ocisbx_engine_cancel(ocisbx_engine *e, ocisbx_engine_op op);
/** Cancels every pending create and exec (closes go on). */
OCISBX_API void ocisbx_engine_cancel_all(ocisbx_engine *e);
/** Operations not yet finished. */
OCISBX_API size_t ocisbx_engine_pending(const ocisbx_engine *e);
/** A time limit on every request of the engine from now on: the requests
 * in flight, queued and to come end by timeout_ms from now (a request past
 * it fails with OCISBX_ETIMEOUT, so every operation ends: a create not
 * answered by then ends with its sandbox unknown, a close not done with
 * its sandbox left, named in its error). ocisbx_engine_free's own run and
 * deletes keep to it too. An earlier limit stays; timeout_ms >= 0. For a
 * caller that must end by a given time whatever the server does (an
 * interrupted program). */
OCISBX_API int ocisbx_engine_set_deadline(ocisbx_engine *e, int64_t timeout_ms);

/* ---- its own loop ----------------------------------------------------------- */
/** Runs the loop: timeout_ms < 0 until no operation is pending, else at
 * most timeout_ms (0: what is ready now). Returns the number of operations
 * still pending (0: idle), or a negative OCISBX_E* when the loop itself
 * fails (poll). */
OCISBX_API int ocisbx_engine_run(ocisbx_engine *e, int64_t timeout_ms);

/* ---- the caller's loop ------------------------------------------------------ */
/** Events of a file descriptor (bits). */
#define OCISBX_ENGINE_POLL_IN 1
#define OCISBX_ENGINE_POLL_OUT 2
/** The socket callback's `what` when the engine no longer waits on fd. */
#define OCISBX_ENGINE_POLL_REMOVE 4

/** Wait for `what` (POLL_IN and/or POLL_OUT) on fd, or stop waiting on it
 * (POLL_REMOVE). A later call for the same fd replaces the earlier one. */
typedef void (*ocisbx_engine_socket_fn)(int fd, int what, void *user_data);
/** Call ocisbx_engine_timeout after timeout_ms (0: as soon as possible),
 * replacing the timer set before; -1: no timer. */
typedef void (*ocisbx_engine_timer_fn)(int64_t timeout_ms, void *user_data);

/** Sets the socket callback (NULL: none). It is called at once for every fd
 * the engine waits on already. */
OCISBX_API int ocisbx_engine_set_socket_callback(ocisbx_engine *e, ocisbx_engine_socket_fn fn, void *user_data);
/** Sets the timer callback (NULL: none). It is called at once with the
 * current timeout. */
OCISBX_API int ocisbx_engine_set_timer_callback(ocisbx_engine *e, ocisbx_engine_timer_fn fn, void *user_data);
/** fd is ready for events (POLL_IN / POLL_OUT bits, 0: unknown). Runs what
 * became due; completion callbacks are called from here. */
OCISBX_API int ocisbx_engine_socket_action(ocisbx_engine *e, int fd, int events);
/** The timer set through the timer callback has passed. */
OCISBX_API int ocisbx_engine_timeout(ocisbx_engine *e);
/** The timeout the engine waits for now: ms (0: something is due), -1: none. */
OCISBX_API int64_t ocisbx_engine_timeout_ms(ocisbx_engine *e);

/* ---- counters --------------------------------------------------------------- */
/** Answers 429 (throttled) the engine has had, every request counted. */
OCISBX_API uint64_t ocisbx_engine_throttled(const ocisbx_engine *e);
/** HTTP attempts the engine has made. */
OCISBX_API uint64_t ocisbx_engine_attempts(const ocisbx_engine *e);
/** The adaptive bound on requests in flight now. */
OCISBX_API int ocisbx_engine_in_flight_bound(const ocisbx_engine *e);

#ifdef __cplusplus
}
#endif

#endif
