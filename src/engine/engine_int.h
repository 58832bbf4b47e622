/* The engine's internals (not installed): one curl multi handle, the
 * requests of every sandbox in a round-robin queue, the adaptive bounds,
 * and the operations (create, exec, close) as small state machines whose
 * steps are requests.
 *
 *   engine.c  the engine, its options, the loops (its own, the caller's)
 *   sched.c   requests: the queue, the bounds, one call's attempts on multi
 *   ops.c     the operations (create, close, cancel)
 *   exec.c    the exec (runAndStream: live output; a cancel ends the command)
 *   files.c   the file operations (write, read) and workspace script runs
 *
 * Layering: above the backend (the exec wrapper's client half,
 * backend/exec_int.h, and the OCI backend's shared pieces) and the api
 * layer (routes, requests, models); below the harness and the CLI. */
#ifndef OCISBX_ENGINE_INT_H
#define OCISBX_ENGINE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "api/client_internal.h"
#include "api/parts.h"
#include "backend/backend_int.h"
#include "backend/exec_int.h"
#include "http/http_internal.h"
#include "ocisbx/engine.h"

typedef struct eng_req eng_req;
typedef struct eng_op eng_op;

/* One request of an operation, from its queueing to its result. */
struct eng_req {
    ocisbx_engine *e;
    ocisbx_engine_sandbox *sb; /* whose queue it is in */
    eng_op *op;
    ocisbx_http_request *r;
    ocisbx_http_call *call; /* NULL until its first attempt */
    CURL *easy;             /* in flight: the handle */
    bool is_create;         /* counts against the creates' bound and pace */
    bool in_flight;
    int64_t not_before;  /* monotonic ms: a poll's or a retry's wait */
    int64_t deadline_at; /* monotonic ms, 0: the transport's; moved by the wait in the queue */
    int64_t queued_at;   /* monotonic ms: when it was queued */
    int64_t idle_ms;     /* > 0: the read timeout of this request */
    int64_t sent_at;     /* the attempt's start */
    eng_req *next;       /* the sandbox's queue */
    /* a start that failed, finished after the pump's round */
    int frc;
    ocisbx_http_response *fresp;
    ocisbx_error_saved *ferr;
    eng_req *fnext;
    /* The result: rc and the answer (NULL on a transport failure); the
     * thread's error is the call's. resp is the callee's. */
    void (*done)(eng_req *q, int rc, ocisbx_http_response *resp);
};

struct ocisbx_engine_sandbox {
    ocisbx_engine *e;
    char *id;
    bool owned;
    bool closing;
    bool no_stream; /* runAndStream answered 404/405/501: its execs run and wait (as the backend's own flag) */
    ocisbx_backend *b; /* the exec plan's settings (a connected backend, never used to send) */
    eng_req *qhead, *qtail;
    int in_flight;
    ocisbx_engine_sandbox *prev, *next; /* every sandbox of the engine */
};

typedef enum { ENG_CREATE, ENG_EXEC, ENG_CLOSE, ENG_WRITE, ENG_READ, ENG_TEXT } eng_kind;

/* The step of an operation whose end is due (eng_op_soon); the file
 * operations' steps start at ENG_STEP_FILE. */
#define ENG_STEP_SOON 99
#define ENG_STEP_FILE 50

typedef struct eng_file eng_file;
typedef struct eng_stream eng_stream;

struct eng_op {
    ocisbx_engine *e;
    ocisbx_engine_op id;
    eng_kind kind;
    ocisbx_engine_sandbox *sb;
    int step;
    bool canceled;
    int rc;                  /* a failure kept while cleanup runs */
    ocisbx_error_saved *err; /* its message */
    eng_req *req;            /* the request queued or in flight (one at a time) */
    int64_t until;           /* a wait's end (RUNNING, STOPPED) */
    int polls;
    void *ud;
    ocisbx_engine_create_fn create_fn;
    ocisbx_engine_exec_fn exec_fn;
    ocisbx_engine_close_fn close_fn;
    ocisbx_exec_wire *wire;
    ocisbx_exec_options *xo; /* exec: the caller's options, copied */
    eng_file *file;          /* write, read: their state (files.c) */
    eng_stream *stream;      /* exec: its event stream (exec.c) */
    void (*script_done)(eng_op *op, int rc, ocisbx_run_res *res); /* a script run's end */
    eng_op *prev, *next;     /* every pending operation */
};

struct ocisbx_engine {
    CURLM *multi;
    ocisbx_client *client;
    bool own_client;
    ocisbx_backend_options *bo; /* the sandbox settings, copied; client = ours */
    char *project_id;
    int64_t ready_ms; /* create's wait for RUNNING */

    /* the bounds: adaptive (AIMD), and their tops */
    int max_in_flight, max_creates, max_connections;
    double cwnd, ccwnd;
    int in_flight, creates_in_flight;
    int64_t last_decrease, last_create_decrease; /* monotonic ms */
    /* the creates' pace: fixed (option) and learned from 429s (creates/s, 0: none) */
    double fixed_rate, rate;
    int64_t next_create_at;
    int64_t window_start;
    int created_in_window;
    /* a throttling answer's retry-after holds every request of its kind */
    int64_t hold_until, create_hold_until;
    ocisbx_http_retry_budget budget;

    ocisbx_engine_sandbox *sbx; /* every sandbox */
    ocisbx_engine_sandbox *rr;  /* where the next round of the queue starts */
    eng_op *ops;
    size_t n_ops;
    ocisbx_engine_op next_id;
    eng_req *failed; /* starts that failed, to finish after the round */
    CURL **pool;     /* idle easy handles */
    size_t n_pool, cap_pool;

    /* the loop */
    struct eng_fd {
        int fd, what;
    } * fds;
    size_t n_fds, cap_fds;
    int64_t curl_due;  /* monotonic ms, 0: no curl timer */
    int64_t eng_due;   /* the earliest queued request's start (0: none) */
    int64_t told_due;  /* what the timer callback was told last (-2: nothing yet) */
    int depth;         /* inside the engine's processing */
    ocisbx_engine_socket_fn sock_fn;
    void *sock_ud;
    ocisbx_engine_timer_fn timer_fn;
    void *timer_ud;

    int64_t deadline_at; /* monotonic ms: every request ends by then (0: none) */
    uint64_t throttled, attempts;
    bool freeing;   /* ocisbx_engine_free runs what it canceled: no callbacks */
};

/* ---- sched.c ---- */
/* A request of op's sandbox (op->sb, or sb for a create not yet
 * answered), queued; r is taken (freed with the request). */
int eng_req_queue(ocisbx_engine *e, eng_op *op, ocisbx_http_request *r, int64_t not_before,
                  void (*done)(eng_req *q, int rc, ocisbx_http_response *resp), eng_req **out);
/* A deadline (monotonic ms) on a request, in flight or not: the earlier stays. */
void eng_req_deadline(eng_req *q, int64_t at);
/* Takes the request out of its queue or out of flight, without a result. */
void eng_req_drop(eng_req *q);
/* Starts what the bounds allow, round robin over the sandboxes; the
 * earliest time something queued may start (0: nothing waits). */
int64_t eng_pump(ocisbx_engine *e);
/* The requests in flight past their deadline ended (a timeout); the
 * earliest deadline of those still in flight (0: none). */
int64_t eng_expire(ocisbx_engine *e);
/* The transfers curl has finished: each one's next attempt or its result. */
void eng_reap(ocisbx_engine *e);

/* ---- engine.c ---- */
/* Processing after an event: results, the queue, the timer told. */
void eng_process(ocisbx_engine *e);
/* After a start outside the engine's processing: the queue pumped, the
 * timer told. */
void eng_kick(ocisbx_engine *e);
void eng_sandbox_free(ocisbx_engine_sandbox *sb);
ocisbx_engine_sandbox *eng_sandbox_new(ocisbx_engine *e);
/* The sandbox's backend (the exec plan's settings), made once its id is known. */
int eng_sandbox_backend(ocisbx_engine_sandbox *sb);

/* ---- ops.c ---- */
eng_op *eng_op_new(ocisbx_engine *e, eng_kind kind, void *ud);
void eng_op_abandon(eng_op *op);
/* Keeps a failure (the thread's error) for the operation's end. */
void eng_op_keep(eng_op *op, int rc);
/* The end: the callback with the thread's error the operation's. */
void eng_op_end(eng_op *op, int rc, ocisbx_exec_result *res);
/* An end due now that must come from the loop (a start or cancel outside it). */
void eng_op_soon(eng_op *op);
/* A request of op's sandbox for route (sandboxId, or projectId for a
 * create), queued after delay ms. */
int eng_queue_route(eng_op *op, ocisbx_op route, const ocisbx_model *body, int64_t delay,
                    void (*done)(eng_req *q, int rc, ocisbx_http_response *resp), eng_req **out);
/* One RunSandboxCommandAndWait of req for op's sandbox: its answer comes
 * when the command has ended, so req's deadline bounds the wait, not the
 * read timeout. */
int eng_queue_run_wait(eng_op *op, const ocisbx_run_req *req,
                       void (*done)(eng_req *q, int rc, ocisbx_http_response *resp));
/* Ends the operations whose end is due (a start or cancel outside the
 * loop decided it); 1 when one is due. */
void eng_ops_due(ocisbx_engine *e);
int eng_ops_soon(const ocisbx_engine *e);

/* ---- exec.c ---- */
void eng_stream_free(eng_stream *st);
void eng_exec_cancel(eng_op *op);

/* ---- files.c ---- */
/* A workspace script's run (one runAndWait), its end to done with the
 * run's code and result (has_exit, exit_code, stderr_text; the engine
 * frees them after done). */
int eng_run_script(eng_op *op, const ocisbx_run_req *req, void (*done)(eng_op *op, int rc, ocisbx_run_res *res));
void eng_file_free(eng_file *f);
/* The caller's callback of a write or read that ended (f taken out of its
 * operation first), then f freed. */
void eng_file_end(eng_file *f, eng_kind kind, int rc, void *ud);
void eng_file_cancel(eng_op *op);

#endif
