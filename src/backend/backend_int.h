/* The backend's internal contract (not installed): the few primitives each
 * implementation provides (local.c, oci.c); everything else is written once
 * in backend.c / exec.c / files.c on top of them. */
#ifndef OCISBX_BACKEND_INT_H
#define OCISBX_BACKEND_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/parts.h"
#include "ocisbx/backend.h"
#include "ocisbx/util.h"
#include "util/env.h"
#include "util/internal.h"

/* One run of a /bin/sh script in the workspace (cwd: the workspace root). */
typedef struct ocisbx_run_req {
    const char *script;
    /* The script's positional parameters ($1 ...): they reach it as data,
     * never as script text (see ocisbx_run_req_text). */
    const char *const *args;
    size_t n_args;
    /* The backend's env, then the call's (a later name wins). */
    const ocisbx_env_list *env[2];
    /* Absolute monotonic ms (ocisbx_time_monotonic_ms) after which the
     * implementation cancels the run and returns OCISBX_ETIMEOUT. */
    int64_t deadline_ms;
    /* The service's own backstop, whole seconds (0: none). */
    int64_t backstop_s;
    /* stdout bytes as they arrive; non-zero return cancels (ECANCELED). */
    int (*on_stdout)(const char *data, size_t len, void *user_data);
    /* stderr bytes as they arrive (NULL: only the first KiB is kept, in
     * ocisbx_run_res.stderr_text); non-zero return cancels. */
    int (*on_stderr)(const char *data, size_t len, void *user_data);
    void *user_data;
    /* A cleanup owed after a cancel: the backend's cancel callback is not
     * asked (the deadline alone bounds the run). */
    bool uncancelable;
} ocisbx_run_req;

typedef struct ocisbx_run_res {
    bool has_exit;
    int exit_code;
    char *command_id;  /* oci; malloc'd */
    char *stderr_text; /* the first KiB of the script's stderr, for messages */
} ocisbx_run_res;

typedef struct ocisbx_backend_vt {
    const char *kind;
    /* 0 with res set, or a negative code (ETIMEOUT at the deadline). */
    int (*run)(ocisbx_backend *b, const ocisbx_run_req *req, ocisbx_run_res *res);
    /* rel: a workspace-relative path; one part (<= OCISBX_BACKEND_PART_SIZE)
     * with its base64 SHA-256; parents created. */
    int (*put_file)(ocisbx_backend *b, const char *rel, const void *data, size_t len, const char *sha256_b64);
    /* Streams the file to write, checked. ENOTFOUND, EISDIR. */
    int (*get_file)(ocisbx_backend *b, const char *rel, ocisbx_write_fn write, void *user_data);
    /* Starts a script that keeps running after the call returns (a
     * background job); *handle (malloc'd) names it for kill_spawned: the
     * command id (oci), the job id (local). req->on_stdout is ignored. */
    int (*spawn)(ocisbx_backend *b, const ocisbx_run_req *req, const char *job_id, char **handle);
    /* Ends a spawned script (its whole tree); 0 when it already ended. */
    int (*kill_spawned)(ocisbx_backend *b, const char *handle);
    int (*extend)(ocisbx_backend *b, const char *duration, char **time_expires);
    int (*close)(ocisbx_backend *b);
    void (*free)(ocisbx_backend *b);
    /* Optional (NULL: parts go one by one through put_file): the feed's
     * parts (absolute sandbox paths), at most in_flight at once; after a
     * failure none of them lands once this returns (api/parts.h). */
    int (*put_parts)(ocisbx_backend *b, int in_flight, const ocisbx_file_part_feed *feed);
    /* A job's handle is written beside its state, where the workspace's own
     * commands can change it: seal_handle gives the text to write (NULL:
     * the handle itself), open_handle checks a text read back and gives
     * the handle only when it is this job's (else OCISBX_EINTEGRITY: the
     * local seal, the OCI command's own text). open_handle is required: a
     * handle read from the workspace is never used as it is. */
    int (*seal_handle)(ocisbx_backend *b, const char *job_id, const char *handle, char **text);
    int (*open_handle)(ocisbx_backend *b, const char *job_id, const char *text, char **handle);
} ocisbx_backend_vt;

struct ocisbx_backend {
    const ocisbx_backend_vt *vt;
    char *label;
    bool host_shell;
    bool closed;
    /* The workspace as the run scripts see it: "/workspace", or the host
     * directory for a local backend without isolation. */
    char *root;
    ocisbx_env_list env;
    size_t max_output;
    ocisbx_backend_cancel_fn cancel;
    void *cancel_ud;
    char *sandbox_id;      /* oci */
    ocisbx_client *client; /* oci (borrowed or the impl's own) */
    void *impl;
    /* This backend's own jobs: job id and spawn handle; close ends them
     * unless detached. */
    struct own_job {
        char *job_id, *handle;
    } * jobs;
    size_t n_jobs;
    bool jobs_detached;
    int kill_grace_s;
    int64_t client_margin_ms;
    int64_t stop_timeout_ms;
    int64_t poll_ms;    /* the poll interval (the option, else the setting; 0 until the OCI backend resolves it) */
    int parallel_parts; /* parts of one write in flight at once (1..) */
    unsigned close_flags;
    /* The exec wrapper's run files (.ocisbx/run-<slot>.*), reused by each
     * exec of this backend and removed by close. */
    char run_slot[17];
    bool run_slot_used;
};

/* The exec options' internals the jobs need (exec.c). */
const char *ocisbx_exec_options_cwd_(const ocisbx_exec_options *o);
int64_t ocisbx_exec_options_timeout_(const ocisbx_exec_options *o);
const ocisbx_env_list *ocisbx_exec_options_env_(const ocisbx_exec_options *o);
/* Whether text is the run text of this job's job-run.sh (its job id the
 * third argument, the workspace root the second), as a service keeps a
 * command's text (jobs.c). */
bool ocisbx_job_command_is(const char *text, const char *root, const char *job_id);
/* Ends every job this backend started, unless detached (jobs.c). */
int ocisbx_backend_end_own_jobs(ocisbx_backend *b);
/* What a connected or local backend's close does: ends its own jobs
 * (unless detached) and removes the exec wrapper's run files (exec.c). */
int ocisbx_backend_close_common(ocisbx_backend *b);
int ocisbx_exec_remove_run_files(ocisbx_backend *b);
/* A window of a job's output (exact bytes, appended to data), the output's
 * size so far and, with want_sum, the hex SHA-256 of all of it (jobs.c). */
int ocisbx_backend_job_read_(ocisbx_backend *b, const char *job_id, int64_t offset, size_t max, bool want_sum,
                             ocisbx_buf *data, uint64_t *total, char sum[65]);
/* The exec options the yield and the jobs read (exec_result.c). */
int64_t ocisbx_exec_options_yield_(const ocisbx_exec_options *o);
size_t ocisbx_exec_options_max_output_(const ocisbx_exec_options *o);

/* The options as set (NULL/0 = unset); backend.c resolves environment and
 * defaults. */
struct ocisbx_backend_options {
    char *runtime, *shape, *expiration, *warmpool, *display_name;
    char *config_file, *profile, *region, *endpoint, *ca_bundle;
    ocisbx_env_list env;
    size_t max_output;
    int64_t ready_timeout_ms, poll_interval_ms;
    ocisbx_client *client;
    ocisbx_backend_cancel_fn cancel;
    void *cancel_ud;
    int isolate; /* -1 unset */
    int network; /* -1 unset */
    int kill_grace_s;        /* 0 unset */
    int64_t client_margin_ms; /* -1 unset */
    int64_t stop_timeout_ms;  /* 0 unset */
    int parallel_parts;       /* 0 unset */
};

/* The waits that poll a state; each one's poll comes from the one
 * interval through ocisbx_backend_wait_poll_ms. */
typedef enum ocisbx_wait_kind {
    OCISBX_WAIT_RUNNING, /* a create until RUNNING: every interval */
    OCISBX_WAIT_STOPPED, /* a close until STOPPED: at most OCISBX_BACKEND_STOP_POLL_MS */
    OCISBX_WAIT_KILLED   /* a canceled command until it has finished: at most OCISBX_BACKEND_KILL_POLL_MS */
} ocisbx_wait_kind;
/* A canceled command is asked for its state at least this often (ms). */
#define OCISBX_BACKEND_KILL_POLL_MS 200
/* The poll interval: the option (ocisbx_backend_options_set_poll_interval_ms),
 * else the poll_interval setting (OCI_SANDBOX_POLL_INTERVAL, else 2 s); a bad
 * variable fails naming it. */
int ocisbx_backend_poll_interval_ms(const ocisbx_backend_options *o, int64_t *ms);
/* The poll of one wait from the interval (the one place that computes it). */
int64_t ocisbx_backend_wait_poll_ms(int64_t interval_ms, ocisbx_wait_kind kind);

/* The text an implementation hands to one /bin/sh: the script with its
 * positional parameters set first ("set -- 'a' 'b'"), each shell-quoted. A
 * script file is written for `sh x.sh ARGS`; this gives it the same $1 ...
 * in one shell, whatever runs the text (bubblewrap, the service). */
int ocisbx_run_req_text(const ocisbx_run_req *req, ocisbx_buf *out);

/* Runs an embedded workspace script (backend/scripts.h) with its arguments;
 * stdout collected as ocisbx_backend_run_script does. */
int ocisbx_backend_run_sh(ocisbx_backend *b, const char *script, const char *const *args, size_t n_args, size_t cap,
                          char **out, size_t *out_len, int *exit_code);

/* The run of an embedded script as ocisbx_backend_run_sh sends it (the
 * backend's env then env, a 600 s deadline and backstop), for a loop that
 * sends it itself (the engine); and its end as run_sh reads it: 0 with
 * *exit_code, EFORBIDDEN for lib.sh's confine, a step's failure, no exit
 * status. */
void ocisbx_backend_script_req(ocisbx_backend *b, const char *script, const char *const *args, size_t n_args,
                               const ocisbx_env_list *env, ocisbx_run_req *req);
int ocisbx_backend_script_result(int rc, const ocisbx_run_res *res, int *exit_code);

/* The same, the script's stdout byte exact: lib.sh's capture sends it to
 * a file under .ocisbx ($OCISBX_CAPTURE), read back with get_file and
 * removed; nothing captured is empty output. No cap but the file's. */
int ocisbx_backend_run_sh_capture(ocisbx_backend *b, const char *script, const char *const *args, size_t n_args,
                                  char **out, size_t *out_len, int *exit_code);

/* After a failed get or put of rel: OCISBX_EISDIR for a directory,
 * OCISBX_ENOTFOUND (missing_too) for nothing there, EFORBIDDEN for a
 * symlink out (path-stat.sh); else rc (files.c). */
int ocisbx_backend_refine_error(ocisbx_backend *b, const char *rel, int rc, bool missing_too);
/* Its pieces, for a loop that sends the path-stat.sh run itself (the
 * engine): whether rc is refined at all; the run (args: its storage); the
 * code from its end (stat_rc, ex: ocisbx_backend_script_result's), the
 * error of rc kept when nothing better is known. */
bool ocisbx_backend_refine_wanted(int rc);
void ocisbx_backend_path_stat_req(ocisbx_backend *b, const char *rel, const char *args[2], ocisbx_run_req *req);
int ocisbx_backend_refine_map(const char *rel, int rc, int stat_rc, int ex, bool missing_too);

/* read_text's pieces (files.c), for a loop that sends the requests itself
 * (the engine): the read-window.sh run (offset and limit checked, 0: the
 * defaults; its stdout captured: ocisbx_capture) and the result from its
 * end (rc, ex: ocisbx_backend_script_result's) and the captured bytes. */
typedef struct ocisbx_window {
    int64_t offset;
    char first[24], last[24], cut[24];
    const char *args[5];
} ocisbx_window;
int ocisbx_read_window_req(ocisbx_backend *b, const char *rel, int64_t offset, int64_t limit, ocisbx_window *w,
                           ocisbx_run_req *req);
int ocisbx_read_window_result(const ocisbx_window *w, const char *rel, int rc, int ex, const char *res, size_t rl,
                              ocisbx_text_result **out);

/* ---- a chunked write (write.c), for the sequential path and a parallel one:
 *   ocisbx_chunked_begin, then ocisbx_chunked_next for each part in order
 *   (read once: its SHA-256 and the whole file's computed as it is read),
 *   ocisbx_chunked_put of each (in any order: a parallel path may have
 *   several in flight), then
 *   ocisbx_chunked_finish (write-join.sh: join, check, rename: one command)
 *   or, after a failure, ocisbx_chunked_abort (removes the parts). */
typedef struct ocisbx_part {
    const unsigned char *data; /* the caller's buf, or into a memory source */
    size_t len;
    char sha256_b64[OCISBX_SHA256_B64_LEN + 1];
    int index; /* 0, 1, ...: its name is .ocisbx/write-<id>/p<index %06d> */
} ocisbx_part;
typedef struct ocisbx_chunked_write ocisbx_chunked_write;
/* rel: the target (workspace-relative). The source: mem (mem_len bytes,
 * parts point into it, nothing copied) or, mem NULL, read(ud). */
int ocisbx_chunked_begin(ocisbx_backend *b, const char *rel, const void *mem, size_t mem_len, ocisbx_read_fn read,
                         void *ud, ocisbx_chunked_write **out);
/* The next part (into buf, OCISBX_BACKEND_PART_SIZE bytes, for a reader;
 * buf unused for memory); *more: whether another part follows. */
int ocisbx_chunked_next(ocisbx_chunked_write *w, unsigned char *buf, ocisbx_part *p, bool *more);
int ocisbx_chunked_put(ocisbx_chunked_write *w, const ocisbx_part *p);
int ocisbx_chunked_finish(ocisbx_chunked_write *w);
void ocisbx_chunked_abort(ocisbx_chunked_write *w);
void ocisbx_chunked_free(ocisbx_chunked_write *w);
/* The same steps for a loop that sends the requests itself (the engine):
 * a part's path (workspace-relative); that a part was sent (the abort is
 * owed from then on); the join's run and its end (rc, ex:
 * ocisbx_backend_script_result's); the abort's run (false: no part was
 * sent, nothing to remove) and its end (a warning when it failed). */
void ocisbx_chunked_part_rel(const ocisbx_chunked_write *w, int index, char *buf, size_t cap);
void ocisbx_chunked_part_sent(ocisbx_chunked_write *w);
int ocisbx_chunked_join_req(ocisbx_chunked_write *w, ocisbx_run_req *req);
int ocisbx_chunked_join_result(ocisbx_chunked_write *w, int rc, int ex);
bool ocisbx_chunked_abort_req(ocisbx_chunked_write *w, ocisbx_run_req *req);
void ocisbx_chunked_abort_result(ocisbx_chunked_write *w, int rc, const ocisbx_run_res *res);

/* Common part of every backend (backend.c). */
int ocisbx_backend_init_common(ocisbx_backend *b, const ocisbx_backend_vt *vt, const ocisbx_backend_options *o);
bool ocisbx_backend_canceled(const ocisbx_backend *b);
/* A setting of the table (ocisbx/settings.h) by name: the option, else its
 * variables, else its default (NULL when it has none). */
const char *ocisbx_backend_setting(const char *opt, const char *name);

/* The OCI implementation's pieces the engine (src/engine) shares (oci.c):
 * the RunSandboxCommandDetails of one run (its text, env, backstop); the
 * CreateSandboxDetails of a create with these options and the wait for
 * RUNNING (*ready_ms), checked before any request; the client the options
 * resolve to (explicit options > environment > config file > defaults). */
int ocisbx_oci_run_details(const ocisbx_run_req *req, ocisbx_run_command_details **out);
int ocisbx_oci_create_details(const ocisbx_backend_options *o, ocisbx_create_sandbox_details **out,
                              int64_t *ready_ms);
int ocisbx_oci_build_client(const ocisbx_backend_options *o, ocisbx_client **out, char **cfg_region);

/* Implementations. */
int ocisbx_backend_local_open(const char *dir, const ocisbx_backend_options *o, ocisbx_backend **out);
int ocisbx_backend_oci_open(const char *project_id, const char *sandbox_id, const ocisbx_backend_options *o,
                            ocisbx_backend **out);

/* A sandbox path to a workspace-relative one ("" for /workspace itself):
 * lexical, "." and ".." resolved; outside /workspace: OCISBX_EFORBIDDEN. */
int ocisbx_backend_rel_path(const char *path, char **rel);
/* lib.sh's confine: a path under $W that resolves, its symlinks followed
 * as the workspace sees them, outside $W makes the script exit
 * OCISBX_SCRIPT_EXIT_OUTSIDE, which the run functions below turn into
 * OCISBX_EFORBIDDEN. */
#define OCISBX_SCRIPT_EXIT_OUTSIDE 93
/* A workspace script's step failed (lib.sh's fail): the run functions turn
 * it into OCISBX_EIO with the script's last stderr line ("sort failed: ..."). */
#define OCISBX_SCRIPT_EXIT_STEP 94
/* A run of a small script whose stdout is collected (at most cap bytes
 * kept); generous fixed deadline. */
int ocisbx_backend_run_script(ocisbx_backend *b, const char *script, size_t cap, char **out, size_t *out_len,
                              int *exit_code);

/* Its pieces, for a loop that sends the requests itself (the engine): the
 * capture's name, env (for the script's run) and file (rel, to get); the
 * run of state-rm.sh that removes the file (owed after the run, unless
 * canceled). */
typedef struct ocisbx_capture {
    char name[24];
    char rel[40];
    ocisbx_env_list env;
    const char *rm_args[2];
} ocisbx_capture;
int ocisbx_capture_init(ocisbx_capture *cp);
void ocisbx_capture_rm_req(ocisbx_backend *b, ocisbx_capture *cp, ocisbx_run_req *req);
void ocisbx_capture_release(ocisbx_capture *cp);

/* The same, its stdout through a file in the workspace and get_file (byte
 * exact); no cap but the file's. */
int ocisbx_backend_run_capture(ocisbx_backend *b, const char *script, char **out, size_t *out_len, int *exit_code);

/* UTF-8: the largest n' <= n with data[0..n') not ending inside a character
 * (in the prefix sense); and the smallest start >= s at a character start. */

#endif
