/* Waiters: poll a sandbox or snapshot until it reaches a lifecycle state,
 * or a command until its derived state (ocisbx_command_state). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "api/client_internal.h"
#include "ocisbx/settings.h"
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

/* "A", or "A or B or C" for the messages (states were checked non-empty). */
static void states_text(const char *const *states, size_t n, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " or " : "", states[i]);
}

static bool in_states(const char *cur, const char *const *states, size_t n)
{
    for (size_t i = 0; cur && i < n; i++)
        if (strcmp(cur, states[i]) == 0)
            return true;
    return false;
}

static int wait_states(ocisbx_client *c, const char *what, get_fn get, const char *id, const char *const *states,
                       size_t n, int64_t timeout_ms, int64_t poll_ms, ocisbx_model **out)
{
    if (out)
        *out = NULL;
    bool bad = !states || n == 0;
    for (size_t i = 0; !bad && i < n; i++)
        bad = !states[i] || !states[i][0];
    if (!c || !id || !id[0] || bad)
        return ocisbx_fail(OCISBX_EINVAL, "wait for %s: the id and the state are required", what);
    if (timeout_ms < 0 || poll_ms < 0)
        return ocisbx_fail(OCISBX_EINVAL, "wait for %s %s: negative time", what, id);
    int prc = poll_ms == 0 ? ocisbx_setting_poll_interval_ms(NULL, &poll_ms, NULL) : 0; /* 0: the setting */
    if (prc)
        return prc;
    char want[256];
    states_text(states, n, want, sizeof want);
    int64_t deadline = ocisbx_time_monotonic_ms() + timeout_ms;
    bool want_deleted = in_states("DELETED", states, n);
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
        if (in_states(cur, states, n)) {
            if (out)
                *out = m;
            else
                ocisbx_model_free(m);
            return 0;
        }
        if (strcmp(last, "FAILED") == 0 || strcmp(last, "DELETED") == 0) {
            /* the service's reason (lifecycleDetails) is what the user needs */
            rc = ocisbx_fail(OCISBX_ECONFLICT, "%s %s is %s while waiting for %s%s%.300s%s", what, id, last, want,
                             details && *details ? " (lifecycleDetails: " : "", details ? details : "",
                             details && *details ? ")" : "");
            ocisbx_model_free(m);
            return rc;
        }
        ocisbx_model_free(m);
        int64_t now = ocisbx_time_monotonic_ms();
        if (now >= deadline)
            return ocisbx_fail(OCISBX_ETIMEOUT, "%s %s still %s after %lld ms waiting for %s", what, id, last,
                               (long long)timeout_ms, want);
        /* the client's cancel callback ends the wait between two polls too */
        if (ocisbx_sys_sleep_ms(poll_ms < deadline - now ? poll_ms : deadline - now, c->http->opt.cancel,
                                c->http->opt.cancel_ud) != 0)
            return ocisbx_fail(OCISBX_ECANCELED, "%s %s: canceled while waiting for %s (last state %s)", what, id,
                               want, last);
    }
}

int ocisbx_client_wait_sandbox(ocisbx_client *c, const char *sandbox_id, const char *state, int64_t timeout_ms,
                               int64_t poll_ms, ocisbx_sandbox **out)
{
    return ocisbx_client_wait_sandbox_any(c, sandbox_id, &state, 1, timeout_ms, poll_ms, out);
}

int ocisbx_client_wait_sandbox_any(ocisbx_client *c, const char *sandbox_id, const char *const *states,
                                   size_t nstates, int64_t timeout_ms, int64_t poll_ms, ocisbx_sandbox **out)
{
    return wait_states(c, "sandbox", get_sandbox, sandbox_id, states, nstates, timeout_ms, poll_ms,
                       (ocisbx_model **)(void *)out);
}

int ocisbx_client_wait_snapshot(ocisbx_client *c, const char *snapshot_id, const char *state, int64_t timeout_ms,
                                int64_t poll_ms, ocisbx_snapshot **out)
{
    return ocisbx_client_wait_snapshot_any(c, snapshot_id, &state, 1, timeout_ms, poll_ms, out);
}

int ocisbx_client_wait_snapshot_any(ocisbx_client *c, const char *snapshot_id, const char *const *states,
                                    size_t nstates, int64_t timeout_ms, int64_t poll_ms, ocisbx_snapshot **out)
{
    return wait_states(c, "snapshot", get_snapshot, snapshot_id, states, nstates, timeout_ms, poll_ms,
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
    if (ocisbx_command_has_exit_code(cm, &code))
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

/* Of several wanted states: reached (0) if any is, never (-1) if none can
 * be, else maybe still (1). */
static int command_reached_any(int cur, const int *states, size_t n)
{
    int r = -1;
    for (size_t i = 0; i < n; i++) {
        int ri = command_reached(cur, states[i]);
        if (ri == 0)
            return 0;
        if (ri > 0)
            r = 1;
    }
    return r;
}

int ocisbx_client_wait_command(ocisbx_client *c, const char *sandbox_id, const char *command_id, int state,
                               int64_t timeout_ms, int64_t poll_ms, ocisbx_command **out)
{
    return ocisbx_client_wait_command_any(c, sandbox_id, command_id, &state, 1, timeout_ms, poll_ms, out);
}

int ocisbx_client_wait_command_any(ocisbx_client *c, const char *sandbox_id, const char *command_id,
                                   const int *states, size_t nstates, int64_t timeout_ms, int64_t poll_ms,
                                   ocisbx_command **out)
{
    if (out)
        *out = NULL;
    if (!c || !sandbox_id || !sandbox_id[0] || !command_id || !command_id[0])
        return ocisbx_fail(OCISBX_EINVAL, "wait for command: the sandbox id and the command id are required");
    char want[160] = "";
    size_t len = 0;
    for (size_t i = 0; states && i < nstates; i++) {
        const char *name = ocisbx_command_state_name(states[i]);
        if (!name)
            return ocisbx_fail(OCISBX_EINVAL, "wait for command %s: unknown state %d", command_id, states[i]);
        len += (size_t)snprintf(want + len, sizeof want - len, "%s%s", i ? " or " : "", name);
    }
    if (!states || nstates == 0)
        return ocisbx_fail(OCISBX_EINVAL, "wait for command %s: no state to wait for", command_id);
    if (timeout_ms < 0 || poll_ms < 0)
        return ocisbx_fail(OCISBX_EINVAL, "wait for command %s: negative time", command_id);
    int prc = poll_ms == 0 ? ocisbx_setting_poll_interval_ms(NULL, &poll_ms, NULL) : 0; /* 0: the setting */
    if (prc)
        return prc;
    int64_t deadline = ocisbx_time_monotonic_ms() + timeout_ms;
    for (;;) {
        ocisbx_command *cm = NULL;
        int rc = ocisbx_client_get_command(c, sandbox_id, command_id, &cm);
        if (rc)
            return rc;
        int cur = ocisbx_command_state(cm);
        int r = command_reached_any(cur, states, nstates);
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
