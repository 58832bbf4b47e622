/* The gate: the ready policies, the policy file and the gate callback
 * decide each call (the strictest wins); a held call asks a person. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/call.h"

/* deny > hold > allow. */
static int rank(int d)
{
    return d == OCISBX_GATE_DENY ? 2 : d == OCISBX_GATE_HOLD ? 1 : 0;
}

/* The policy file's decision on one path: on the given path and on the
 * resolved one, the strictest (a symlink does not walk around a rule, nor
 * does a rule on the link's own name stop applying). */
static int policy_on(harness_call *c, const char *path, const char *resolved, const char **why)
{
    ocisbx_harness *h = c->h;
    const char *tool = c->tool->name, *label = c->tool->label;
    int p = ocisbx_policy_decide(h->policy, tool, label, c->command, path, why);
    if (p >= 0 && resolved && strcmp(resolved, path ? path : "")) {
        const char *why2 = NULL;
        int p2 = ocisbx_policy_decide(h->policy, tool, label, c->command, resolved, &why2);
        if (p2 < 0 || rank(p2) > rank(p)) {
            p = p2;
            *why = why2;
        }
    }
    return p;
}

/* The policy file's decision: on the call's path, and on every further
 * path it names (apply_patch's files), the strictest. */
static int policy_step(harness_call *c, int *d, const char **why)
{
    int p = policy_on(c, c->path, c->resolved, why);
    for (size_t i = 1; p >= 0 && i < c->n_paths; i++) {
        const char *why2 = NULL;
        int p2 = policy_on(c, c->paths[i].path, c->paths[i].resolved, &why2);
        if (p2 < 0 || rank(p2) > rank(p)) {
            p = p2;
            *why = why2;
        }
    }
    if (p < 0)
        return p;
    *d = p;
    c->path_rank = rank(p);
    return 0;
}

/* The gate callback's answer over d (the strictest wins; a reason of its
 * own replaces an equal decision's). */
static void callback_step(harness_call *c, int *d, char **owned)
{
    ocisbx_harness *h = c->h;
    char *args = cJSON_PrintUnformatted(c->args);
    ocisbx_gate_reply reply = {NULL};
    int g = h->gate(c->tool->name, c->tool->label, args ? args : "{}", &reply, h->gate_ud);
    free(args);
    if (g < OCISBX_GATE_ALLOW || g > OCISBX_GATE_HOLD)
        g = OCISBX_GATE_DENY; /* an unknown answer: safe side */
    int rank_g = rank(g), rank_d = rank(*d);
    if (rank_g > rank_d || (rank_g == rank_d && reply.reason)) {
        *d = g;
        if (reply.reason || rank_g > rank_d) {
            free(*owned);
            *owned = reply.reason;
            reply.reason = NULL;
        }
    }
    free(reply.reason);
}

int gate_decide(harness_call *c, int *decision, char **reason)
{
    ocisbx_harness *h = c->h;
    const char *label = c->tool->label;
    int d = OCISBX_GATE_ALLOW;
    const char *why = NULL;
    *reason = NULL;
    if (h->policy) {
        int rc = policy_step(c, &d, &why);
        if (rc)
            return rc;
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
    if (h->gate)
        callback_step(c, &d, &owned);
    *decision = d;
    *reason = owned;
    return 0;
}

bool gate_path_visible(harness_call *c, const char *path)
{
    ocisbx_policy *p = c->h->policy;
    if (!p || !harness_policy_has_path_rules(p))
        return true;
    int d = ocisbx_policy_decide(p, c->tool->name, c->tool->label, NULL, path, NULL);
    bool visible = d >= 0 && rank(d) <= c->path_rank;
    if (!visible)
        c->denied_paths++;
    return visible;
}

bool gate_add_denied_paths(harness_call *c)
{
    return !c->denied_paths || cJSON_AddNumberToObject(c->result, "denied_paths", (double)c->denied_paths);
}

/* A held call: the person is asked (arguments and reason redacted as the
 * records have them). Returns "approved" or "refused"; *reason is replaced
 * when no one could be asked; *asked tells whether someone answered. */
static const char *gate_ask(harness_call *c, char **reason, bool *asked)
{
    ocisbx_harness *h = c->h;
    char *args = cJSON_PrintUnformatted(c->args);
    char *redacted = args ? call_redact(h, args, strlen(args), NULL) : NULL;
    char *shown = redacted ? call_json_controls_escaped(redacted) : NULL;
    char *why_redacted = *reason ? call_redact(h, *reason, strlen(*reason), NULL) : NULL;
    char *why = why_redacted ? call_text_controls_escaped(why_redacted) : NULL;
    int ok = h->approve ? h->approve(c->tool->name, c->tool->label, shown ? shown : "{}", why, h->approve_ud) : 0;
    free(args);
    free(redacted);
    free(shown);
    free(why_redacted);
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
