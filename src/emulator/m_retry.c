/* Retry-token records of the model: the answer of a POST with an
 * opc-retry-token, kept 24 hours so a repeat gets it again (dispatch.c
 * records and replays; store.c keeps them across restarts). */
#include <stdlib.h>
#include <string.h>

#include "emulator/model.h"

#define RETRY_KEEP_MS (24LL * 3600 * 1000)

static _Thread_local emu_retry *tl_retry;

void emu_retry_set_current(emu_retry *r)
{
    tl_retry = r;
}

emu_retry *emu_retry_current(void)
{
    return tl_retry;
}

emu_retry *emu_retry_find(emu_server *s, const char *key)
{
    for (size_t i = 0; i < s->n_retries; i++)
        if (!strcmp(s->retries[i]->key, key))
            return s->retries[i];
    return NULL;
}

emu_retry *emu_retry_add(emu_server *s, char *key)
{
    emu_retry *r = calloc(1, sizeof *r);
    if (!r || EMU_GROW(s->retries, s->n_retries, s->cap_retries, 16) != 0) {
        free(key);
        free(r);
        return NULL;
    }
    r->key = key;
    r->t_ms = emu_now_ms();
    s->retries[s->n_retries++] = r;
    return r;
}

void emu_retry_free(emu_retry *r)
{
    if (!r)
        return;
    free(r->key);
    free(r->content_type);
    free(r->body);
    for (int i = 0; i < 4; i++) {
        free(r->hdr_names[i]);
        free(r->hdr_values[i]);
    }
    free(r);
}

void emu_retry_remove(emu_server *s, emu_retry *r)
{
    for (size_t i = 0; i < s->n_retries; i++) {
        if (s->retries[i] == r) {
            s->retries[i] = s->retries[--s->n_retries];
            emu_retry_free(r);
            return;
        }
    }
}

void emu_retry_tick(emu_server *s, int64_t now)
{
    for (size_t i = 0; i < s->n_retries;) {
        emu_retry *r = s->retries[i];
        if (r->done && now - r->t_ms > RETRY_KEEP_MS) {
            emu_retry_remove(s, r);
            s->dirty = true;
        } else {
            i++;
        }
    }
}
