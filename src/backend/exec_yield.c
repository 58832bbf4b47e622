/* exec with a yield: the command runs as a background job; the call waits
 * for it at most yield_ms (in the workspace, one run), then gives the usual
 * result when it ended, or the job id and the output so far. */
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "backend/exec_int.h"
#include "ocisbx/util.h"
#include "util/internal.h"

/* Still running: its first bytes (max_output), the job named. */
static int so_far(ocisbx_backend *b, const char *id, const exec_plan *pl, ocisbx_exec_result *r)
{
    ocisbx_buf d = OCISBX_BUF_INIT;
    uint64_t total = 0;
    int rc = ocisbx_backend_job_read_(b, id, 0, pl->head + pl->tail, false, &d, &total, NULL);
    if (!rc && ocisbx_buf_append(&d, "", 0))
        rc = ocisbx_fail_nomem();
    if (rc) {
        ocisbx_buf_free(&d);
        return rc;
    }
    r->output_len = d.len;
    r->output = ocisbx_buf_detach(&d);
    r->head_kept = r->output_len;
    r->total_bytes = total;
    r->truncated = total > r->output_len;
    r->dropped = total - r->output_len;
    ocisbx_exec_hex_sha(r->output, r->output_len, r->returned_sha);
    r->job_id = ocisbx_strdup(id);
    return r->job_id ? 0 : ocisbx_fail_nomem();
}

/* Ended: head and tail of its output, cut as exec cuts. */
static int ended(ocisbx_backend *b, const char *id, exec_plan *pl, ocisbx_exec_result *r)
{
    ocisbx_buf h = OCISBX_BUF_INIT, t = OCISBX_BUF_INIT;
    uint64_t total = 0, t2 = 0;
    int rc = ocisbx_backend_job_read_(b, id, 0, pl->head, true, &h, &total, r->total_sha);
    if (!rc && total > h.len) {
        uint64_t from = total - pl->tail > h.len ? total - pl->tail : h.len;
        rc = ocisbx_backend_job_read_(b, id, (int64_t)from, pl->tail, false, &t, &t2, NULL);
    }
    if (!rc) {
        r->total_bytes = total;
        rc = ocisbx_exec_result_from_parts(r, pl, h.data ? h.data : "", h.len, t.data ? t.data : "", t.len);
    }
    ocisbx_buf_free(&h);
    ocisbx_buf_free(&t);
    return rc;
}

int ocisbx_exec_yield(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o, const exec_plan *plan,
                      ocisbx_exec_result *r)
{
    exec_plan pl = *plan;
    char *id = NULL;
    int64_t t0 = ocisbx_time_monotonic_ms();
    r->start_ms = ocisbx_time_now_ms();
    int rc = ocisbx_backend_job_start(b, command, o, &id);
    ocisbx_job_status *st = NULL;
    if (!rc)
        rc = ocisbx_backend_job_wait(b, id, pl.yield_ms, &st);
    if (!rc && ocisbx_job_status_running(st)) {
        rc = so_far(b, id, &pl, r);
    } else if (!rc) {
        int x = 0;
        r->has_exit = ocisbx_job_status_has_exit_code(st, &x) == 1;
        r->exit_code = x;
        r->timed_out = ocisbx_job_status_timed_out(st);
        rc = ended(b, id, &pl, r);
    }
    r->duration_ms = ocisbx_time_monotonic_ms() - t0;
    ocisbx_job_status_free(st);
    ocisbx_free(id);
    return rc;
}
