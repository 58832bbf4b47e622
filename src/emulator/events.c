/* Output events and their coalescing. Past the output-loss point every
 * event's data is void, so storing one event per pipe read only costs
 * memory and journal space (`timeout 8 yes` made 115,649 of them): from then
 * on a chunk extends the last event of its stream when that event is at most
 * EMU_COALESCE_MS old, so a command makes at most two output events (one per
 * stream) per interval, whatever it writes. Sequence numbers stay dense
 * (seq = index + 1) and an event once sent never changes. */
#include <string.h>

#include "emulator/model.h"

emu_event *emu_command_add_output_event(emu_command *c, int kind)
{
    if (c->output_lost) {
        int64_t now = emu_now_ms();
        /* the last two events: the other stream may sit in between */
        for (size_t k = 1; k <= 2 && k <= c->n_events; k++) {
            const emu_event *e = &c->events[c->n_events - k];
            if (e->kind != EMU_EV_STDOUT && e->kind != EMU_EV_STDERR)
                break;
            if (e->kind == kind && now - e->ts_ms < EMU_COALESCE_MS)
                return NULL;
        }
    }
    return emu_command_add_event(c, kind);
}

emu_event *emu_command_add_event(emu_command *c, int kind)
{
    if (EMU_GROW(c->events, c->n_events, c->cap_events, 16) != 0)
        return NULL;
    emu_event *e = &c->events[c->n_events++];
    memset(e, 0, sizeof *e);
    e->seq = (int64_t)c->n_events;
    e->ts_ms = emu_now_ms();
    e->kind = kind;
    e->exit_code = -1;
    return e;
}
