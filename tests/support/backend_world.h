/* The backend suites' world (it_backend*, over both implementations): a
 * local directory under bubblewrap, or an OCI sandbox created in a fresh
 * emulator, with the helpers those tests share. cmocka group setup and
 * teardown: setup_local, setup_oci, teardown. Names are short: only the
 * backend's tests include this. */
#ifndef OCISBX_TEST_BACKEND_WORLD_H
#define OCISBX_TEST_BACKEND_WORLD_H

#include <stdbool.h>
#include <stddef.h>

#include "emu_fixture.h"
#include "ocisbx/api.h"
#include "ocisbx/backend.h"

typedef struct world {
    const char *kind; /* "local" or "oci" */
    emu_fixture *emu;
    ocisbx_client *c;
    char dir[256]; /* local */
    ocisbx_backend *b;
} world;

/* fail_msg naming what and the thread's error unless rc is 0. */
void check(int rc, const char *what);
/* The shared test client (emu_client.h), NULL on failure. */
ocisbx_client *client_for(emu_fixture *emu);
/* Options with FROM_BACKEND=opt-value in every command's env. */
ocisbx_backend_options *base_options(void);
int setup_local(void **state);
/* The emulator's output loss at 20300 bytes, a sandbox created (it-backend). */
int setup_oci(void **state);
/* Closes (the created sandbox must be gone), stops the emulator, removes the directory. */
int teardown(void **state);
/* exec, checked; the result. */
ocisbx_exec_result *run(ocisbx_backend *b, const char *cmd, ocisbx_exec_options *o);
/* exec of a command that must exit 0: its output (free). */
char *run_out(ocisbx_backend *b, const char *cmd);
void sha_hex(const void *d, size_t n, char out[65]);
/* true once no process's command line has marker (about 10 s at most). */
bool gone(const char *marker);
ocisbx_job_status *job_wait_done(ocisbx_backend *b, const char *id);
void job_wait_output(ocisbx_backend *b, const char *id, const char *want);
/* The group a suite runs: argv[1], else $IT_BACKEND_GROUP, else NULL (all). */
const char *backend_world_group(int argc, char **argv);
/* 1 when group g (NULL: all) includes name. */
int backend_world_wants(const char *g, const char *name);

#endif
