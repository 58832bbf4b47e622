/* The snapshots of the model: a copy of a sandbox's workspace under
 * <state-dir>/snapshots/, deleted on request or when it expires. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/model.h"

emu_snapshot *emu_snapshot_find(emu_server *s, const char *id)
{
    for (size_t i = 0; i < s->n_snaps; i++)
        if (!strcmp(s->snaps[i]->id, id) && strcmp(s->snaps[i]->state, "DELETED") != 0)
            return s->snaps[i];
    return NULL;
}

void emu_snapshot_delete(emu_server *s, emu_snapshot *n)
{
    char *dir = ocisbx_asprintf("%s/snapshots/%s", s->state_dir, n->id);
    if (dir)
        emu_rmtree(dir);
    free(dir);
    snprintf(n->state, sizeof n->state, "DELETED");
    n->t_updated = emu_now_ms();
    n->version++;
    emu_server_touch(s);
}

int emu_snapshot_create(emu_server *s, emu_sandbox *b, const char *dur, int64_t ms, emu_snapshot **out)
{
    *out = NULL;
    if (strcmp(b->state, "RUNNING") && strcmp(b->state, "STOPPED"))
        return ocisbx_fail(OCISBX_ECONFLICT, "cannot snapshot sandbox %s in state %s", b->id, b->state);
    emu_snapshot *n = calloc(1, sizeof *n);
    if (!n)
        return ocisbx_fail_nomem();
    emu_new_id("snap-", n->id, sizeof n->id);
    snprintf(n->sandbox_id, sizeof n->sandbox_id, "%s", b->id);
    n->project_id = ocisbx_strdup(b->project_id);
    n->display_name = ocisbx_strdup(n->id);
    n->runtime = ocisbx_strdup(b->runtime);
    n->expiration = dur ? ocisbx_strdup(dur) : NULL;
    n->t_created = n->t_updated = emu_now_ms();
    n->t_expires = ms > 0 ? n->t_created + ms : 0;
    n->version = 1;
    char *src = emu_workspace_dir(s, b->id);
    char *root = ocisbx_asprintf("%s/snapshots", s->state_dir);
    char *dst = ocisbx_asprintf("%s/snapshots/%s", s->state_dir, n->id);
    int rc = (src && root && dst && emu_mkdirs(root) == 0) ? emu_copytree(src, dst, &n->size_bytes) : -1;
    free(src);
    free(root);
    snprintf(n->state, sizeof n->state, rc == 0 ? "ACTIVE" : "FAILED");
    if (rc != 0 && dst)
        emu_rmtree(dst);
    free(dst);
    if (EMU_GROW(s->snaps, s->n_snaps, s->cap_snaps, 8) != 0) {
        emu_snapshot_free(n);
        return ocisbx_fail_nomem();
    }
    s->snaps[s->n_snaps++] = n;
    emu_server_touch(s);
    *out = n;
    return 0;
}

void emu_snapshot_tick(emu_server *s, int64_t now)
{
    for (size_t i = 0; i < s->n_snaps; i++)
        if (s->snaps[i]->t_expires > 0 && now >= s->snaps[i]->t_expires && strcmp(s->snaps[i]->state, "DELETED"))
            emu_snapshot_delete(s, s->snaps[i]);
}

void emu_snapshot_free(emu_snapshot *n)
{
    if (!n)
        return;
    free(n->project_id);
    free(n->display_name);
    free(n->runtime);
    free(n->expiration);
    free(n);
}
