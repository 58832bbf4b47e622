/* The backend suites' world (backend_world.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend_world.h"
#include "emu_client.h"
#include "ocisbx/util.h"
#include "util/internal.h"

void check(int rc, const char *what)
{
    if (rc)
        fail_msg("%s: %s (%d)", what, ocisbx_error_message(ocisbx_error_last()), rc);
}

/* The shared test client (tests/support/emu_client.h), NULL on failure. */
ocisbx_client *client_for(emu_fixture *emu)
{
    ocisbx_client *c = NULL;
    return emu_client_new(emu, 0, &c) == 0 ? c : NULL;
}

ocisbx_backend_options *base_options(void)
{
    ocisbx_backend_options *o = NULL;
    if (ocisbx_backend_options_new(&o) || ocisbx_backend_options_add_env(o, "FROM_BACKEND", "opt-value", 0))
        return NULL;
    return o;
}

/* The world's backend: base_options() and a kill grace of 1 s (no case of
 * the worlds is about the default; a command that ignores TERM at its
 * timeout costs a second less). */
static ocisbx_backend_options *world_options(void)
{
    ocisbx_backend_options *o = base_options();
    if (o && ocisbx_backend_options_set_kill_grace_s(o, 1)) {
        ocisbx_backend_options_free(o);
        return NULL;
    }
    return o;
}

/* ---- the factories ---- */
int setup_local(void **state)
{
    world *w = calloc(1, sizeof *w);
    w->kind = "local";
    snprintf(w->dir, sizeof w->dir, "/tmp/it_backend_XXXXXX");
    if (!mkdtemp(w->dir))
        return -1;
    if (geteuid() == 0 && chown(w->dir, 65534, 65534) != 0)
        return -1;
    ocisbx_backend_options *o = world_options();
    int rc = ocisbx_backend_local(w->dir, o, &w->b);
    ocisbx_backend_options_free(o);
    if (rc) {
        fprintf(stderr, "local backend: %s\n", ocisbx_error_message(ocisbx_error_last()));
        return -1;
    }
    *state = w;
    return 0;
}

int setup_oci(void **state)
{
    world *w = calloc(1, sizeof *w);
    w->kind = "oci";
    emu_fixture_options eo = {0};
    eo.https = true;
    /* The service loses a command's whole output above output_loss_bytes:
     * the capped tests (20000) pass only when at most 20000 bytes plus the
     * wrapper's markers go through it. */
    eo.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n  output_loss_bytes: 20300\n";
    if (emu_fixture_start(&eo, &w->emu) != 0)
        return -1;
    w->c = client_for(w->emu);
    if (!w->c)
        return -1;
    ocisbx_backend_options *o = world_options();
    ocisbx_backend_options_set_client(o, w->c);
    ocisbx_backend_options_set_region(o, EMU_FIXTURE_REGION);
    ocisbx_backend_options_set_poll_interval_ms(o, 50);
    ocisbx_backend_options_set_display_name(o, "it-backend");
    int rc = ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &w->b);
    ocisbx_backend_options_free(o);
    if (rc) {
        fprintf(stderr, "oci backend: %s\n", ocisbx_error_message(ocisbx_error_last()));
        return -1;
    }
    *state = w;
    return 0;
}

int teardown(void **state)
{
    world *w = *state;
    int rc = 0;
    if (ocisbx_backend_close(w->b) != 0)
        rc = -1;
    if (w->emu && w->c && ocisbx_backend_sandbox_id(w->b)) {
        ocisbx_sandbox *s = NULL;
        if (ocisbx_client_get_sandbox(w->c, ocisbx_backend_sandbox_id(w->b), &s) != OCISBX_ENOTFOUND) {
            fprintf(stderr, "close did not delete the created sandbox\n");
            rc = -1;
        }
        ocisbx_sandbox_free(s);
    }
    ocisbx_backend_free(w->b);
    if (w->c)
        ocisbx_client_free(w->c);
    if (w->emu) {
        if (emu_fixture_stop(w->emu) != 0)
            rc = -1;
        emu_fixture_free(w->emu);
    }
    if (w->dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
        if (system(cmd) != 0)
            rc = -1;
    }
    free(w);
    return rc;
}

/* ---- helpers ---- */
ocisbx_exec_result *run(ocisbx_backend *b, const char *cmd, ocisbx_exec_options *o)
{
    ocisbx_exec_result *r = NULL;
    check(ocisbx_backend_exec(b, cmd, o, &r), cmd);
    return r;
}

char *run_out(ocisbx_backend *b, const char *cmd)
{
    ocisbx_exec_result *r = run(b, cmd, NULL);
    int x = -1;
    assert_int_equal(ocisbx_exec_result_has_exit_code(r, &x), 1);
    if (x != 0)
        fail_msg("%s: exit %d: %s", cmd, x, ocisbx_exec_result_output(r, NULL));
    char *s = ocisbx_strdup(ocisbx_exec_result_output(r, NULL));
    ocisbx_exec_result_free(r);
    return s;
}

void sha_hex(const void *d, size_t n, char out[65])
{
    unsigned char h[32];
    ocisbx_sha256(d, n, h);
    ocisbx_hex(h, 32, out);
}


bool gone(const char *marker)
{
    for (int i = 0; i < 200; i++) {
        if (!emu_fixture_process_exists(marker))
            return true;
        usleep(50000);
    }
    return false;
}

ocisbx_job_status *job_wait_done(ocisbx_backend *b, const char *id)
{
    for (int i = 0; i < 600; i++) {
        ocisbx_job_status *st = NULL;
        check(ocisbx_backend_job_status(b, id, &st), "status");
        if (!ocisbx_job_status_running(st))
            return st;
        ocisbx_job_status_free(st);
        usleep(50000);
    }
    fail_msg("job %s did not finish", id);
    return NULL;
}

void job_wait_output(ocisbx_backend *b, const char *id, const char *want)
{
    for (int i = 0; i < 600; i++) {
        char *d = NULL;
        size_t n = 0;
        uint64_t total = 0;
        check(ocisbx_backend_job_output(b, id, 0, 0, &d, &n, &total), "output");
        bool ok = n == strlen(want) && memcmp(d, want, n) == 0 && total == n;
        ocisbx_free(d);
        if (ok)
            return;
        usleep(50000);
    }
    fail_msg("job %s never printed %s", id, want);
}

const char *backend_world_group(int argc, char **argv)
{
    if (argc > 1)
        return argv[1];
    const char *e = getenv("IT_BACKEND_GROUP");
    return e && *e ? e : NULL;
}

int backend_world_wants(const char *g, const char *name)
{
    return !g || strcmp(g, name) == 0;
}
