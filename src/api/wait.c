/* Waiters: poll a sandbox or snapshot until it reaches a lifecycle state,
 * or a command until its derived state (ocisbx_command_state). */
#include <string.h>

#include "api/client_internal.h"
#include "ocisbx/util.h"
#include "sys/sleep.h"

typedef int (*get_fn)(ocisbx_client *c, const char *id, ocisbx_model **out);

static int get_sandbox(ocisbx_client *c, const char *id, ocisbx_model **out)
{
    return ocisbx_client_get_sandbox(c, id, (ocisbx_sandbox **)(void *)out);
}

static int get_snapshot(ocisbx_client *c, const char *id, ocisbx_model **out)
{
    return ocisbx_client_get_snapshot(c, id, (ocisbx_snapshot **)(void *)out);
}

static int wait_state(ocisbx_client *c, const char *what, get_fn get, const char *id, const char *state,
                      int64_t timeout_ms, int64_t poll_ms, ocisbx_model **out)
{
    if (out)
        *out = NULL;
    if (!c || !id || !id[0] || !state || !state[0])
        return ocisbx_fail(OCISBX_EINVAL, "wait for %s: the id and the state are required", what);
    if (timeout_ms < 0 || poll_ms < 0)
        return ocisbx_fail(OCISBX_EINVAL, "wait for %s %s: negative time", what, id);
    if (poll_ms == 0)
        poll_ms = 2000;
    int64_t deadline = ocisbx_time_monotonic_ms() + timeout_ms;
    bool want_deleted = strcmp(state, "DELETED") == 0;
    char last[64] = "unknown";
    for (;;) {
        ocisbx_model *m = NULL;
        int rc = get(c, id, &m);
        if (rc == OCISBX_ENOTFOUND && want_deleted)
            return 0;
        if (rc)
            return rc;
        const char *cur = ocisbx_model_str(m, "lifecycleState");
        snprintf(last, sizeof last, "%s", cur ? cur : "unknown");
        const char *details = ocisbx_model_str(m, "lifecycleDetails");
        if (cur && strcmp(cur, state) == 0) {
            if (out)
                *out = m;
            else
                ocisbx_model_free(m);
            return 0;
        }
        if (strcmp(last, "FAILED") == 0 || strcmp(last, "DELETED") == 0) {
            /* the service's reason (lifecycleDetails) is what the user needs */
            rc = ocisbx_fail(OCISBX_ECONFLICT, "%s %s is %s while waiting for %s%s%.300s%s", what, id, last, state,
                             details && *details ? " (lifecycleDetails: " : "", details ? details : "",
                             details && *details ? ")" : "");
            ocisbx_model_free(m);
            return rc;
        }
        ocisbx_model_free(m);
        int64_t now = ocisbx_time_monotonic_ms();
        if (now >= deadline)
            return ocisbx_fail(OCISBX_ETIMEOUT, "%s %s still %s after %lld ms waiting for %s", what, id, last,
                               (long long)timeout_ms, state);
        /* the client's cancel callback ends the wait between two polls too */
        if (ocisbx_sys_sleep_ms(poll_ms < deadline - now ? poll_ms : deadline - now, c->http->opt.cancel,
                                c->http->opt.cancel_ud) != 0)
            return ocisbx_fail(OCISBX_ECANCELED, "%s %s: canceled while waiting for %s (last state %s)", what, id,
                               state, last);
    }
}

int ocisbx_client_wait_sandbox(ocisbx_client *c, const char *sandbox_id, const char *state, int64_t timeout_ms,
                               int64_t poll_ms, ocisbx_sandbox **out)
{
    return wait_state(c, "sandbox", get_sandbox, sandbox_id, state, timeout_ms, poll_ms,
                      (ocisbx_model **)(void *)out);
}

int ocisbx_client_wait_snapshot(ocisbx_client *c, const char *snapshot_id, const char *state, int64_t timeout_ms,
                                int64_t poll_ms, ocisbx_snapshot **out)
{
    return wait_state(c, "snapshot", get_snapshot, snapshot_id, state, timeout_ms, poll_ms,
                      (ocisbx_model **)(void *)out);
}

/* ---- commands: a state derived from the times and the exit code ---- */
/* A SandboxCommand has no lifecycle state [public]; this derivation is the
 * one every waiter, the CLI and the backend use (docs/wire.md). */
int ocisbx_command_state(const ocisbx_command *cm)
{
    if (!cm)
        return OCISBX_COMMAND_NOT_STARTED;
    int code;
    if (ocisbx_command_exit_code(cm, &code))
        return OCISBX_COMMAND_FINISHED;
    if (ocisbx_command_time_finished(cm))
        return OCISBX_COMMAND_FINISHED_NO_EXIT_CODE;
    if (ocisbx_command_time_started(cm))
        return OCISBX_COMMAND_RUNNING;
    return OCISBX_COMMAND_NOT_STARTED;
}

static const char *const command_state_names[] = {"NOT_STARTED", "RUNNING", "FINISHED", "FINISHED_NO_EXIT_CODE"};
#define N_COMMAND_STATES (sizeof command_state_names / sizeof command_state_names[0])

const char *ocisbx_command_state_name(int state)
{
    return state >= 0 && (size_t)state < N_COMMAND_STATES ? command_state_names[state] : NULL;
}

int ocisbx_command_state_from_name(const char *name, int *out)
{
    for (size_t i = 0; name && i < N_COMMAND_STATES; i++)
        if (strcmp(name, command_state_names[i]) == 0) {
            if (out)
                *out = (int)i;
            return 0;
        }
    return ocisbx_fail(OCISBX_EINVAL,
                       "command state '%.64s': one of NOT_STARTED, RUNNING, FINISHED, FINISHED_NO_EXIT_CODE",
                       name ? name : "");
}

const char *ocisbx_command_lifecycle_state(const ocisbx_command *cm)
{
    return cm ? ocisbx_command_state_name(ocisbx_command_state(cm)) : NULL;
}

/* Whether a command in state cur has reached want (0), can never reach it
 * (-1), or may still (1). States only move forward: NOT_STARTED, RUNNING,
 * then one of the two finished states. */
static int command_reached(int cur, int want)
{
    bool cur_done = cur == OCISBX_COMMAND_FINISHED || cur == OCISBX_COMMAND_FINISHED_NO_EXIT_CODE;
    if (cur == want)
        return 0;
    if (want == OCISBX_COMMAND_RUNNING && cur_done)
        return 0; /* it has started (and ended) */
    if (cur_done)
        return -1; /* the other finished state, or NOT_STARTED */
    if (want == OCISBX_COMMAND_NOT_STARTED)
        return -1; /* already running */
    return 1;
}

int ocisbx_client_wait_command(ocisbx_client *c, const char *sandbox_id, const char *command_id, int state,
                               int64_t timeout_ms, int64_t poll_ms, ocisbx_command **out)
{
    if (out)
        *out = NULL;
    const char *want = ocisbx_command_state_name(state);
    if (!c || !sandbox_id || !sandbox_id[0] || !command_id || !command_id[0])
        return ocisbx_fail(OCISBX_EINVAL, "wait for command: the sandbox id and the command id are required");
    if (!want)
        return ocisbx_fail(OCISBX_EINVAL, "wait for command %s: unknown state %d", command_id, state);
    if (timeout_ms < 0 || poll_ms < 0)
        return ocisbx_fail(OCISBX_EINVAL, "wait for command %s: negative time", command_id);
    if (poll_ms == 0)
        poll_ms = 2000;
    int64_t deadline = ocisbx_time_monotonic_ms() + timeout_ms;
    for (;;) {
        ocisbx_command *cm = NULL;
        int rc = ocisbx_client_get_command(c, sandbox_id, command_id, &cm);
        if (rc)
            return rc;
        int cur = ocisbx_command_state(cm);
        int r = command_reached(cur, state);
        if (r == 0) {
            if (out)
                *out = cm;
            else
                ocisbx_command_free(cm);
            return 0;
        }
        ocisbx_command_free(cm);
        if (r < 0)
            return ocisbx_fail(OCISBX_ECONFLICT, "command %s is %s while waiting for %s", command_id,
                               ocisbx_command_state_name(cur), want);
        int64_t now = ocisbx_time_monotonic_ms();
        if (now >= deadline)
            return ocisbx_fail(OCISBX_ETIMEOUT, "command %s still %s after %lld ms waiting for %s", command_id,
                               ocisbx_command_state_name(cur), (long long)timeout_ms, want);
        if (ocisbx_sys_sleep_ms(poll_ms < deadline - now ? poll_ms : deadline - now, c->http->opt.cancel,
                                c->http->opt.cancel_ud) != 0)
            return ocisbx_fail(OCISBX_ECANCELED, "command %s: canceled while waiting for %s (last state %s)",
                               command_id, want, ocisbx_command_state_name(cur));
    }
}
