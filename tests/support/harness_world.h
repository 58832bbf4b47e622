/* Test support for the harness's integration tests: one workspace (a local
 * directory or a sandbox of the emulator) with a planted secret in the
 * backend's env, a log sink that counts lines holding it, and helpers to
 * call tools and check results.
 *
 *   const struct CMUnitTest t[] = {...};
 *   cmocka_run_group_tests_name("local", t, harness_world_setup_local, harness_world_teardown);
 *   cmocka_run_group_tests_name("oci", t, harness_world_setup_oci, harness_world_teardown);
 *   ...in a test: harness_world *w = *state; ocisbx_harness *h = harness_world_harness(w, NULL);
 */
#ifndef OCISBX_TEST_HARNESS_WORLD_H
#define OCISBX_TEST_HARNESS_WORLD_H

#include <cjson/cJSON.h>

#include "emu_fixture.h"
#include "ocisbx/api.h"
#include "ocisbx/backend.h"
#include "ocisbx/harness.h"

/* The value of BACKEND_SECRET, a secret variable of the backend. */
#define HARNESS_WORLD_SECRET "planted-secret-5a7e1c"

typedef struct harness_world {
    emu_fixture *emu;
    ocisbx_client *c;
    char dir[64]; /* local workspace, or scratch for evidence files */
    ocisbx_backend *b;
    char evidence[128];
    int records;
    char last_record[8192];
    int log_lines;
    int secret_logged;    /* a log line held the secret */
    const char *watch[2]; /* other values no log line may hold (NULL: none) */
    int watch_logged;
} harness_world;

/* cmocka group setups: *state gets the world. */
int harness_world_setup_local(void **state);
int harness_world_setup_oci(void **state);
int harness_world_teardown(void **state);

/* A harness over the world's backend with o (may be NULL), evidence to
 * w->evidence and to the callback (records, last_record). */
ocisbx_harness *harness_world_harness(harness_world *w, ocisbx_harness_options *o);
/* Calls a tool, checks its return code; the parsed result (cJSON_Delete). */
cJSON *harness_world_call(ocisbx_harness *h, const char *tool, const char *args, int want_rc);
/* The result's error code, or NULL. */
const char *harness_world_err_code(const cJSON *j);
/* Checks that the call fails with this error code and a message. */
void harness_world_expect_error(ocisbx_harness *h, const char *tool, const char *args, const char *code);

#endif
