/* The engine's tests' world (it_engine*.c): an engine on a client of the
 * test tenancy, the project's live sandboxes, and the small synchronous
 * steps a test needs between the asynchronous ones it looks at (one
 * sandbox created, a command's output, closed), each run on the engine's
 * own loop until its callback came. */
#ifndef OCISBX_TEST_ENGINE_WORLD_H
#define OCISBX_TEST_ENGINE_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu_fixture.h"
#include "ocisbx/ocisbx.h"

/* fail_msg with the thread's error when rc is not 0. */
void engine_check(int rc, const char *what);
/* An engine over a new client (*c, the caller's to free after the engine):
 * poll 200 ms, stop timeout 30 s, at most 32 in flight; rate > 0: creates
 * per second; max_creates > 0: its bound. */
ocisbx_engine *engine_world_new(emu_fixture *f, ocisbx_client **c, double rate, int max_creates);
/* What engine_world_new_on may change: rate and max_creates as above;
 * kill_grace_s > 0 and client_margin_ms >= 0 (-1: the default) set the
 * backend's (an exec's client-side deadline is its timeout + both). */
typedef struct engine_world_opts {
    double rate;
    int max_creates, kill_grace_s;
    int64_t client_margin_ms;
} engine_world_opts;
#define ENGINE_WORLD_OPTS_DEFAULT {0, 0, 0, -1}
/* The same engine over the client c (the caller's, freed after the engine). */
ocisbx_engine *engine_world_new_on(ocisbx_client *c, const engine_world_opts *o);
/* Sandboxes of the fixture's project not DELETED. */
size_t engine_world_live(ocisbx_client *c);
/* Runs the engine until *flag is set (at most 240 s). */
void engine_world_until(ocisbx_engine *e, const bool *flag);
/* One sandbox created (RUNNING). */
ocisbx_engine_sandbox *engine_world_create(ocisbx_engine *e);
/* A command's output (malloc'd) and exit code; the exec must succeed. */
char *engine_world_sh(ocisbx_engine *e, ocisbx_engine_sandbox *sb, const char *command, int *exit_code);
/* The sandbox closed (close must succeed). */
void engine_world_close(ocisbx_engine *e, ocisbx_engine_sandbox *sb);

#endif
