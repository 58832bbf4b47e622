/* Waiters: poll a sandbox or snapshot until it reaches a lifecycle state. */
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
    if (out) *out = NULL;
    if (!c || !id || !id[0] || !state || !state[0])
        return ocisbx_fail(OCISBX_EINVAL, "wait for %s: the id and the state are required", what);
    if (timeout_ms < 0 || poll_ms < 0) return ocisbx_fail(OCISBX_EINVAL, "wait for %s %s: negative time", what, id);
    if (poll_ms == 0) poll_ms = 2000;
    int64_t deadline = ocisbx_time_monotonic_ms() + timeout_ms;
    bool want_deleted = strcmp(state, "DELETED") == 0;
    char last[64] = "unknown";
    for (;;) {
        ocisbx_model *m = NULL;
        int rc = get(c, id, &m);
        if (rc == OCISBX_ENOTFOUND && want_deleted) return 0;
        if (rc) return rc;
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
