/* The world of a CLI test that runs on both backends: a local directory,
 * or a sandbox of a fresh test tenancy; scratch space for evidence and
 * policy files. */
#ifndef OCISBX_TEST_CLI_WORLD_H
#define OCISBX_TEST_CLI_WORLD_H

#include "emu_fixture.h"

typedef struct cli_world {
    emu_fixture *emu;  /* NULL: the local directory */
    char sandbox[128]; /* the emulator's sandbox */
    char dir[64];      /* the local workspace */
    char scratch[64];  /* evidence, policy files */
} cli_world;

/* A local workspace /tmp/<tag>_ws_XXXXXX (given to nobody when run as root)
 * and scratch /tmp/<tag>_XXXXXX; 0 or -1. */
int cli_world_local(const char *tag, cli_world **out);
/* A fresh tenancy with one sandbox (short create and stop delays) and
 * scratch /tmp/<tag>_XXXXXX; 0 or -1. */
int cli_world_oci(const char *tag, cli_world **out);
/* Stops the tenancy, removes the directories, frees w; -1 when the tenancy
 * did not stop cleanly. */
int cli_world_free(cli_world *w);
/* A workspace file's bytes (free()), or NULL when it does not exist. */
char *cli_world_file(const cli_world *w, const char *name);

#endif
