/* engine_libuv: the engine (<ocisbx/engine.h>) driven from a libuv loop.
 *
 * Creates a few sandboxes, runs one command in each and closes each (stop,
 * then delete), all from one thread, with the engine inside the program's
 * own event loop, the way libcurl's multi interface is put in one
 * (curl_multi_socket_action):
 *   - the engine's socket callback says which file descriptors to wait on:
 *     one uv_poll_t per descriptor (uv_poll_init_socket, uv_poll_start; on
 *     OCISBX_ENGINE_POLL_REMOVE, uv_poll_stop and uv_close);
 *   - its timer callback says when to call it back: one uv_timer_t
 *     (uv_timer_start, one shot; -1: uv_timer_stop);
 *   - the loop tells the engine back: ocisbx_engine_socket_action for a
 *     ready descriptor, ocisbx_engine_timeout when the timer fires.
 * When no operation is pending any more, the handles are closed and
 * uv_run returns. SIGINT / SIGTERM (a uv_signal_t) cancel what runs; the
 * sandboxes created are closed all the same.
 *
 *   engine_libuv [--count N] [--own-loop]
 * --count: how many sandboxes (1..64, default 4). --own-loop: the same work
 * driven by the engine's own loop (ocisbx_engine_run) instead of libuv; the
 * "result" lines are the same either way (examples/examples.cmake's
 * example_engine_libuv_same_results compares them).
 *
 * Sandbox i runs `echo "hello from sandbox i"; exit i%3` (a different exit
 * code per sandbox: each result comes back to its own sandbox). Prints a
 * line per event, then a "result i: ..." line per sandbox in index order
 * and a summary. Exit status 0 when every sandbox was created, its command
 * ran (whatever its exit code) and it was closed.
 *
 * Settings: see example_common.h (OCI_CONFIG_FILE, OCI_SANDBOX_PROFILE,
 * OCI_SANDBOX_ENDPOINT or OCI_SANDBOX_REGION, OCI_SANDBOX_PROJECT_ID). */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "example_common.h"

#define PROG "engine_libuv"
#define MAX_SANDBOXES 64

typedef struct app app;

/* One sandbox's life: created, its command run, closed. */
typedef struct slot {
    app *a;
    int index;
    ocisbx_engine_sandbox *sb;
    char id[128];
    int create_rc, exec_rc, close_rc;
    bool created, execed, closed;
    int exit_code; /* -1: none reported */
    char output[256];
    char error[512];
} slot;

/* A descriptor the engine waits on, with its poll handle. The handle's
 * memory is freed by uv_close's callback (libuv may still use it until
 * then), so a watch is unlinked at once and freed later. */
typedef struct watch {
    uv_poll_t poll; /* first: the handle's address is the watch's */
    int fd;
    app *a;
    struct watch *next;
} watch;

struct app {
    ocisbx_engine *e;
    slot s[MAX_SANDBOXES];
    int n;
    uv_loop_t *loop;
    uv_timer_t timer;
    uv_signal_t sigint, sigterm;
    watch *watches;
    int watching, peak_watching;
    unsigned long fd_events, timer_fires;
    bool finished, canceled;
};

/* ---- the operations' callbacks (the same for both loops) ---- */
static void keep_error(slot *s, const char *what)
{
    const ocisbx_error *err = ocisbx_error_last(); /* the operation's error */
    snprintf(s->error, sizeof s->error, "%s: %s [%s]", what, ocisbx_error_message(err),
             ocisbx_status_name(ocisbx_error_code(err)));
}

static void on_closed(int rc, void *user_data)
{
    slot *s = user_data;
    s->closed = true;
    s->close_rc = rc;
    s->sb = NULL; /* freed by the engine after this callback */
    if (rc)
        keep_error(s, "close");
    printf("closed:   %d %s%s\n", s->index, s->id, rc ? " (failed)" : "");
}

static void close_slot(slot *s)
{
    if (ocisbx_engine_close_sandbox(s->a->e, s->sb, on_closed, s, NULL) != 0) {
        keep_error(s, "close");
        s->closed = true;
        s->close_rc = -1;
    }
}

static void on_executed(int rc, ocisbx_exec_result *res, void *user_data)
{
    slot *s = user_data;
    s->execed = true;
    s->exec_rc = rc;
    if (rc == 0) {
        size_t len = 0;
        const char *out = ocisbx_exec_result_output(res, &len);
        while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r'))
            len--;
        snprintf(s->output, sizeof s->output, "%.*s", (int)len, out);
        if (ocisbx_exec_result_has_exit_code(res, &s->exit_code) != 1)
            s->exit_code = -1;
        printf("ran:      %d exit %d\n", s->index, s->exit_code);
    } else {
        keep_error(s, "exec");
        printf("ran:      %d failed\n", s->index);
    }
    ocisbx_exec_result_free(res);
    close_slot(s); /* whatever happened: the sandbox is this program's */
}

static void on_created(int rc, ocisbx_engine_sandbox *sb, void *user_data)
{
    slot *s = user_data;
    s->created = true;
    s->create_rc = rc;
    if (rc) { /* nothing left behind: the engine deleted what it made */
        keep_error(s, "create");
        printf("created:  %d failed\n", s->index);
        return;
    }
    s->sb = sb;
    snprintf(s->id, sizeof s->id, "%s", ocisbx_engine_sandbox_id(sb));
    printf("created:  %d %s (RUNNING)\n", s->index, s->id);
    if (s->a->canceled) {
        close_slot(s);
        return;
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "echo \"hello from sandbox %d\"; exit %d", s->index, s->index % 3);
    if (ocisbx_engine_exec(s->a->e, sb, cmd, NULL, on_executed, s, NULL) != 0) {
        keep_error(s, "exec");
        s->execed = true;
        s->exec_rc = -1;
        close_slot(s);
    }
}

/* ---- libuv: the engine's callbacks onto handles, and back ---- */
static void watch_closed(uv_handle_t *h)
{
    free(h); /* the watch (its first member) */
}

static void close_watch(app *a, watch *w)
{
    watch **p = &a->watches;
    while (*p && *p != w)
        p = &(*p)->next;
    if (*p)
        *p = w->next;
    a->watching--;
    uv_poll_stop(&w->poll); /* before curl closes the descriptor */
    uv_close((uv_handle_t *)&w->poll, watch_closed);
}

static void after_engine_call(app *a);

static void on_poll(uv_poll_t *h, int status, int events)
{
    watch *w = (watch *)h;
    app *a = w->a;
    int fd = w->fd; /* w may be closed from inside the call */
    int what = 0;
    if (status < 0) /* an error on the descriptor: libcurl finds out which */
        what = OCISBX_ENGINE_POLL_IN | OCISBX_ENGINE_POLL_OUT;
    else
        what = ((events & (UV_READABLE | UV_DISCONNECT)) ? OCISBX_ENGINE_POLL_IN : 0) |
               ((events & UV_WRITABLE) ? OCISBX_ENGINE_POLL_OUT : 0);
    a->fd_events++;
    if (ocisbx_engine_socket_action(a->e, fd, what) != 0)
        example_fail(PROG, "socket action");
    after_engine_call(a);
}

/* The engine's socket callback: wait for `what` on fd, or stop. */
static void on_engine_socket(int fd, int what, void *user_data)
{
    app *a = user_data;
    watch *w = a->watches;
    while (w && w->fd != fd)
        w = w->next;
    if (what & OCISBX_ENGINE_POLL_REMOVE) {
        if (w)
            close_watch(a, w);
        return;
    }
    if (!w) {
        w = calloc(1, sizeof *w);
        if (!w || uv_poll_init_socket(a->loop, &w->poll, fd) != 0) {
            fprintf(stderr, PROG ": cannot watch descriptor %d\n", fd);
            free(w);
            return;
        }
        w->fd = fd;
        w->a = a;
        w->next = a->watches;
        a->watches = w;
        if (++a->watching > a->peak_watching)
            a->peak_watching = a->watching;
    }
    int events = ((what & OCISBX_ENGINE_POLL_IN) ? UV_READABLE : 0) | ((what & OCISBX_ENGINE_POLL_OUT) ? UV_WRITABLE : 0);
    uv_poll_start(&w->poll, events, on_poll); /* replaces the events watched before */
}

static void on_timer_fired(uv_timer_t *t)
{
    app *a = t->data;
    a->timer_fires++;
    if (ocisbx_engine_timeout(a->e) != 0)
        example_fail(PROG, "timeout");
    after_engine_call(a);
}

/* The engine's timer callback: call ocisbx_engine_timeout after ms. A 0
 * ("as soon as possible") becomes 1 ms: libuv runs a timer restarted with
 * 0 from inside a timer callback again in the same pass, without looking
 * at the descriptors in between. */
static void on_engine_timer(int64_t ms, void *user_data)
{
    app *a = user_data;
    if (ms < 0)
        uv_timer_stop(&a->timer);
    else
        uv_timer_start(&a->timer, on_timer_fired, ms > 0 ? (uint64_t)ms : 1, 0);
}

/* Once nothing is pending: every handle closed, so uv_run returns. */
static void after_engine_call(app *a)
{
    if (a->finished || ocisbx_engine_pending(a->e) > 0)
        return;
    a->finished = true;
    ocisbx_engine_set_socket_callback(a->e, NULL, NULL); /* the engine's idle connections go unwatched */
    ocisbx_engine_set_timer_callback(a->e, NULL, NULL);
    while (a->watches)
        close_watch(a, a->watches);
    uv_close((uv_handle_t *)&a->timer, NULL);
    uv_close((uv_handle_t *)&a->sigint, NULL);
    uv_close((uv_handle_t *)&a->sigterm, NULL);
}

static void on_signal(uv_signal_t *h, int signum)
{
    app *a = h->data;
    printf("signal %d: canceling; the sandboxes created are closed\n", signum);
    a->canceled = true;
    ocisbx_engine_cancel_all(a->e); /* creates and execs finish with OCISBX_ECANCELED */
    after_engine_call(a);
}

static int drive_with_libuv(app *a)
{
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0)
        return 1;
    a->loop = &loop;
    uv_timer_init(&loop, &a->timer);
    a->timer.data = a;
    uv_signal_init(&loop, &a->sigint);
    uv_signal_init(&loop, &a->sigterm);
    a->sigint.data = a->sigterm.data = a;
    uv_signal_start(&a->sigint, on_signal, SIGINT);
    uv_signal_start(&a->sigterm, on_signal, SIGTERM);
    /* the callbacks first: the operations started below tell them at once */
    ocisbx_engine_set_socket_callback(a->e, on_engine_socket, a);
    ocisbx_engine_set_timer_callback(a->e, on_engine_timer, a);
    for (int i = 0; i < a->n; i++)
        if (ocisbx_engine_create_sandbox(a->e, on_created, &a->s[i], NULL) != 0) {
            keep_error(&a->s[i], "create");
            a->s[i].created = true;
            a->s[i].create_rc = -1;
        }
    after_engine_call(a); /* nothing started at all: done */
    int rc = uv_run(&loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&loop) != 0)
        fprintf(stderr, PROG ": the loop still has handles\n");
    return rc;
}

/* The same work on the engine's own loop (poll() inside ocisbx_engine_run). */
static int drive_own_loop(app *a)
{
    example_catch_signals();
    for (int i = 0; i < a->n; i++)
        if (ocisbx_engine_create_sandbox(a->e, on_created, &a->s[i], NULL) != 0) {
            keep_error(&a->s[i], "create");
            a->s[i].created = true;
            a->s[i].create_rc = -1;
        }
    while (ocisbx_engine_run(a->e, -1) > 0) /* returns early on a signal */
        if (example_interrupted && !a->canceled) {
            a->canceled = true;
            ocisbx_engine_cancel_all(a->e);
        }
    return 0;
}

static ocisbx_engine *make_engine(const char *project, ocisbx_client *client)
{
    ocisbx_backend_options *bo = NULL;
    ocisbx_engine_options *eo = NULL;
    ocisbx_engine *e = NULL;
    int rc = ocisbx_backend_options_new(&bo);
    if (!rc)
        rc = ocisbx_backend_options_set_client(bo, client);
    if (!rc)
        rc = ocisbx_backend_options_set_display_name(bo, PROG);
    if (!rc)
        rc = example_poll_interval(bo, 500);
    if (!rc)
        rc = ocisbx_engine_options_new(&eo);
    if (!rc)
        rc = ocisbx_engine_options_set_backend_options(eo, bo);
    if (!rc)
        rc = ocisbx_engine_options_set_project_id(eo, project);
    if (!rc)
        rc = ocisbx_engine_new(eo, &e);
    ocisbx_engine_options_free(eo);
    ocisbx_backend_options_free(bo);
    return rc ? NULL : e;
}

static int report(const app *a, bool libuv)
{
    int ok = 0;
    for (int i = 0; i < a->n; i++) {
        const slot *s = &a->s[i];
        if (s->create_rc || s->exec_rc || !s->execed) {
            printf("result %d: failed: %s\n", i, s->error[0] ? s->error : "not run");
            continue;
        }
        printf("result %d: exit %d, output \"%s\"\n", i, s->exit_code, s->output);
        ok += s->closed && s->close_rc == 0;
    }
    printf("summary: %d of %d sandboxes created, ran and closed; %s", ok, a->n,
           libuv ? "driven by libuv" : "driven by the engine's own loop");
    if (libuv)
        printf(" (%d descriptors watched at most, %lu descriptor events, %lu timer fires)", a->peak_watching,
               a->fd_events, a->timer_fires);
    printf("; %llu answers 429\n", (unsigned long long)ocisbx_engine_throttled(a->e));
    return ok == a->n ? 0 : 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    bool own = false;
    int n = 4;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--own-loop"))
            own = true;
        else if (!strcmp(argv[i], "--count") && i + 1 < argc)
            n = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: " PROG " [--count N] [--own-loop]\n");
            return 2;
        }
    }
    if (n < 1 || n > MAX_SANDBOXES) {
        fprintf(stderr, PROG ": --count is 1 to %d\n", MAX_SANDBOXES);
        return 2;
    }
    const char *project = example_setting("project_id");
    if (!project) {
        fprintf(stderr, PROG ": set OCI_SANDBOX_PROJECT_ID (the project to create the sandboxes in)\n");
        return 2;
    }
    ocisbx_global_init();
    ocisbx_client *client = NULL;
    app *a = calloc(1, sizeof *a);
    int rc = 1;
    if (!a || example_client(&client) || !(a->e = make_engine(project, client))) {
        rc = example_fail(PROG, "settings");
        goto out;
    }
    printf("endpoint: %s\n", ocisbx_client_endpoint(client));
    printf("loop:     %s\n", own ? "the engine's own (ocisbx_engine_run)" : "libuv");
    if (!own)
        printf("libuv:    %s\n", uv_version_string());
    a->n = n;
    for (int i = 0; i < n; i++) {
        a->s[i].a = a;
        a->s[i].index = i;
        a->s[i].exit_code = -1;
    }
    if ((own ? drive_own_loop(a) : drive_with_libuv(a)) != 0)
        fprintf(stderr, PROG ": the loop ended with an error\n");
    rc = report(a, !own);
out:
    if (a)
        ocisbx_engine_free(a->e); /* deletes any sandbox it created and did not close */
    free(a);
    ocisbx_client_free(client);
    ocisbx_global_cleanup();
    return rc;
}
