/* The gate: the ready policies, the policy file and the gate callback
 * decide each call (the strictest wins); a held call asks a person. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/call.h"

int gate_decide(harness_call *c, int *decision, char **reason)
{
    ocisbx_harness *h = c->h;
    const char *tool = c->tool->name, *label = c->tool->label;
    const char *command = c->command;
    int d = OCISBX_GATE_ALLOW;
    const char *why = NULL;
    *reason = NULL;
    if (h->policy) {
        int p = ocisbx_policy_decide(h->policy, tool, label, command, c->path, &why);
        if (p < 0)
            return p;
        d = p;
    }
    const label_rule *r = harness_labels_match(&h->require, label);
    if (r && d == OCISBX_GATE_ALLOW) {
        d = OCISBX_GATE_HOLD;
        why = "this action needs a person's approval";
    }
    r = harness_labels_match(&h->deny, label);
    if (r) {
        d = OCISBX_GATE_DENY;
        why = r->reason ? r->reason : "this kind of action is not allowed here";
    }
    char *owned = why ? ocisbx_strdup(why) : NULL;
    if (h->gate) {
        char *args = cJSON_PrintUnformatted(c->args);
        ocisbx_gate_reply reply = {NULL};
        int g = h->gate(tool, label, args ? args : "{}", &reply, h->gate_ud);
        free(args);
        if (g < OCISBX_GATE_ALLOW || g > OCISBX_GATE_HOLD)
            g = OCISBX_GATE_DENY; /* an unknown answer: safe side */
        /* the strictest wins: deny > hold > allow */
        int rank_g = g == OCISBX_GATE_DENY ? 2 : g == OCISBX_GATE_HOLD ? 1 : 0;
        int rank_d = d == OCISBX_GATE_DENY ? 2 : d == OCISBX_GATE_HOLD ? 1 : 0;
        if (rank_g > rank_d || (rank_g == rank_d && reply.reason)) {
            d = g;
            if (reply.reason || rank_g > rank_d) {
                free(owned);
                owned = reply.reason;
                reply.reason = NULL;
            }
        }
        free(reply.reason);
    }
    *decision = d;
    *reason = owned;
    return 0;
}

/* A held call: the person is asked (arguments and reason redacted as the
 * records have them). Returns "approved" or "refused"; *reason is replaced
 * when no one could be asked; *asked tells whether someone answered. */
static const char *gate_ask(harness_call *c, char **reason, bool *asked)
{
    ocisbx_harness *h = c->h;
    char *args = cJSON_PrintUnformatted(c->args);
    char *shown = args ? call_redact(h, args, strlen(args), NULL) : NULL;
    char *why = *reason ? call_redact(h, *reason, strlen(*reason), NULL) : NULL;
    int ok = h->approve ? h->approve(c->tool->name, c->tool->label, shown ? shown : "{}", why, h->approve_ud) : 0;
    free(args);
    free(shown);
    free(why);
    if (!h->approve || ok < 0) {
        /* no one could be asked; the callback's error says why */
        const char *m = ok < 0 ? ocisbx_error_message(ocisbx_error_last()) : NULL;
        char text[768];
        snprintf(text, sizeof text, "held for a person's approval, but no one could be asked%s%s",
                 m && m[0] ? ": " : "", m && m[0] ? m : "");
        free(*reason);
        *reason = ocisbx_strdup(text);
    }
    *asked = h->approve && ok >= 0;
    return ok == 1 ? "approved" : "refused";
}

const char *gate_verdict(harness_call *c, int decision, char **reason, bool *asked)
{
    *asked = false;
    if (decision == OCISBX_GATE_HOLD)
        return gate_ask(c, reason, asked);
    return decision == OCISBX_GATE_ALLOW ? "allow" : "deny";
}
