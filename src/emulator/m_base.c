/* The lowest part of the model: environment lists, the workspace
 * directory of a sandbox and its uid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator/model.h"

static bool uid_taken(const emu_server *s, const emu_sandbox *self, unsigned uid)
{
    for (size_t i = 0; i < s->n_sbx; i++)
        if (s->sbx[i] != self && s->sbx[i]->uid == uid && strcmp(s->sbx[i]->state, "DELETED"))
            return true;
    return false;
}

unsigned emu_sandbox_uid(emu_server *s, emu_sandbox *b, bool choose)
{
    if (geteuid() != 0)
        return 0;
    if (b->uid && !uid_taken(s, b, b->uid))
        return b->uid;
    b->uid = 0;
    /* a restart: the owner of its workspace, when it is one of ours */
    char *ws = emu_workspace_dir(s, b->id);
    struct stat st;
    if (ws && lstat(ws, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid >= EMU_SANDBOX_UID_BASE &&
        st.st_uid < EMU_SANDBOX_UID_BASE + EMU_SANDBOX_UID_COUNT && !uid_taken(s, b, (unsigned)st.st_uid))
        b->uid = (unsigned)st.st_uid;
    free(ws);
    for (unsigned n = 0; choose && !b->uid && n < EMU_SANDBOX_UID_COUNT; n++)
        if (!uid_taken(s, b, EMU_SANDBOX_UID_BASE + n))
            b->uid = EMU_SANDBOX_UID_BASE + n;
    return b->uid;
}

char *emu_workspace_dir(const emu_server *s, const char *sandbox_id)
{
    return ocisbx_asprintf("%s/workspaces/%s", s->state_dir, sandbox_id);
}

void emu_env_free(emu_env *env, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(env[i].name);
        ocisbx_free_secret(env[i].value);
    }
    free(env);
}
