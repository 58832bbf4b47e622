/* The exec's internals shared by exec.c (the wrapper and its parse),
 * exec_result.c (options, results, the plan) and exec_yield.c (an exec
 * run as a job). Not installed. */
#ifndef OCISBX_BACKEND_EXEC_INT_H
#define OCISBX_BACKEND_EXEC_INT_H

#include "backend/backend_int.h"

/* A secret cut at a capped output's edge is redacted from this many of its
 * characters on (a shorter piece is not a piece of it worth hiding). */
#define OCISBX_REDACT_EDGE_MIN 8

struct ocisbx_exec_options {
    int64_t timeout_ms;
    char *cwd;
    ocisbx_env_list env;
    size_t max_output;
    ocisbx_write_fn on_output;
    void *on_output_ud;
    int64_t yield_ms;
};

struct ocisbx_exec_result {
    bool has_exit;
    int exit_code;
    bool timed_out, truncated;
    char *output;
    size_t output_len;
    uint64_t total_bytes, dropped;
    char total_sha[65], returned_sha[65];
    int64_t duration_ms, start_ms;
    char *command_id;
    char *job_id;     /* a yield that did not see the end */
    size_t head_kept; /* bytes of output that are the head */
};

/* One exec, checked and computed before anything runs. */
typedef struct exec_plan {
    char *cwd_rel; /* "" for /workspace */
    int64_t secs;  /* the timeout, whole seconds (rounded up) */
    size_t head, tail; /* the head and tail budgets */
    char id[17];   /* the run's id, in its trailer */
    const ocisbx_env_list *env, *backend_env;
    ocisbx_write_fn on_output;
    void *on_output_ud;
    int64_t yield_ms;
    uint64_t trailer_hl, trailer_tl;
} exec_plan;

/* Checks the call (*out NULL first), fills pl and allocates the result *r. */
int ocisbx_exec_plan(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o, size_t note_reserve,
                     exec_plan *pl, ocisbx_exec_result **r, ocisbx_exec_result **out);
void ocisbx_exec_plan_free(exec_plan *pl);
/* Lowercase hex SHA-256. */
void ocisbx_exec_hex_sha(const void *d, size_t n, char out[65]);
/* The exec as a job, waited for pl->yield_ms (exec_yield.c). */
int ocisbx_exec_yield(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o, const exec_plan *pl,
                      ocisbx_exec_result *r);
/* The result from a head and a tail of an output whose size and SHA-256 are
 * known (exec.c; the yield uses it for a job that ended). */
int ocisbx_exec_result_from_parts(ocisbx_exec_result *r, exec_plan *pl, const char *head, size_t hl,
                                  const char *tail, size_t tl);

/* One exec's client half, shared by the blocking exec (the backend's run
 * primitive) and the event-driven engine (src/engine: one runAndWait
 * request):
 *   ocisbx_exec_wire_begin (the call checked, the plan made; *out NULL)
 *   the run of ocisbx_exec_wire_req (its on_stdout / on_stderr take the
 *     bytes, or ocisbx_exec_wire_stdout / _stderr after an answer that
 *     carries them whole)
 *   ocisbx_exec_wire_end (the run's code: 0, OCISBX_ETIMEOUT at the
 *     client's deadline, another failure; the result; frees the wire)
 * An exec with a yield (ocisbx_exec_wire_yield_ms > 0) is no wrapper run:
 * the blocking exec runs it as a job. */
typedef struct ocisbx_exec_wire ocisbx_exec_wire;
int ocisbx_exec_wire_begin(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o,
                           ocisbx_exec_wire **w, ocisbx_exec_result **out);
const ocisbx_run_req *ocisbx_exec_wire_req(const ocisbx_exec_wire *w);
int64_t ocisbx_exec_wire_yield_ms(const ocisbx_exec_wire *w);
int ocisbx_exec_wire_stdout(ocisbx_exec_wire *w, const char *data, size_t len);
int ocisbx_exec_wire_stderr(ocisbx_exec_wire *w, const char *data, size_t len);
/* res: has_exit, exit_code and stderr_text of the run (for messages);
 * its command_id is taken. */
int ocisbx_exec_wire_end(ocisbx_exec_wire *w, int rc, ocisbx_run_res *res, ocisbx_exec_result **out);
void ocisbx_exec_wire_free(ocisbx_exec_wire *w);

/* The client's half alone, for tests and the fuzz target: the result of a
 * run that sent out (stdout) and err (stderr) for the run id, with
 * max_output's budgets; OCISBX_EPARSE / OCISBX_ENOTFOUND as exec gives. */
int ocisbx_exec_parse_(const char *out, size_t out_len, const char *err, size_t err_len, const char *id,
                       size_t max_output, ocisbx_exec_result **res);

#endif
