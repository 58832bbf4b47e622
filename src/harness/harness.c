/* The harness's handle: its options, its making and freeing, the
 * callbacks it is given. A call's way through it is in call.c. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness_int.h"
#include "harness/tools.h"
#include "util/glob.h"
#include "util/internal.h"

struct ocisbx_harness_options {
    ocisbx_env_list env;
    label_list require, deny;
    char *policy_path;
    char *evidence_path;
};

/* ---- options --------------------------------------------------------------------- */
static void labels_free(label_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].label);
        free(l->v[i].reason);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static int labels_add(label_list *l, const char *label, const char *reason)
{
    if (!label || !label[0])
        return ocisbx_fail(OCISBX_EINVAL, "harness: empty action label");
    /* a mistyped label would match nothing and leave its gate off */
    int known = harness_label_glob_known(label);
    if (known < 0)
        return known;
    if (!known) {
        char shown[100], labels[200];
        ocisbx_escape_shown(label, shown, sizeof shown);
        harness_labels_text(labels, sizeof labels);
        return ocisbx_fail(OCISBX_EINVAL, "harness: the action label \"%s\" matches none of the tools' labels (%s)",
                           shown, labels);
    }
    label_rule *v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v)
        return ocisbx_fail_nomem();
    l->v = v;
    v[l->n].label = ocisbx_strdup(label);
    v[l->n].reason = reason ? ocisbx_strdup(reason) : NULL;
    if (!v[l->n].label || (reason && !v[l->n].reason)) {
        free(v[l->n].label);
        free(v[l->n].reason);
        return ocisbx_fail_nomem();
    }
    l->n++;
    return 0;
}

static int labels_copy(label_list *to, const label_list *from)
{
    for (size_t i = 0; i < from->n; i++) {
        int rc = labels_add(to, from->v[i].label, from->v[i].reason);
        if (rc)
            return rc;
    }
    return 0;
}

const label_rule *harness_labels_match(const label_list *l, const char *label)
{
    for (size_t i = 0; i < l->n; i++)
        if (ocisbx_glob_match(l->v[i].label, label) == 1)
            return &l->v[i];
    return NULL;
}

int ocisbx_harness_options_new(ocisbx_harness_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "harness options: NULL");
    *out = calloc(1, sizeof **out);
    return *out ? 0 : ocisbx_fail_nomem();
}

void ocisbx_harness_options_free(ocisbx_harness_options *o)
{
    if (!o)
        return;
    ocisbx_env_list_free(&o->env);
    labels_free(&o->require);
    labels_free(&o->deny);
    free(o->policy_path);
    free(o->evidence_path);
    free(o);
}

int ocisbx_harness_options_add_env(ocisbx_harness_options *o, const char *name, const char *value, int secret)
{
    if (!o || !name || !value)
        return ocisbx_fail(OCISBX_EINVAL, "harness options: NULL argument");
    return ocisbx_env_list_add(&o->env, name, value, secret != 0);
}

int ocisbx_harness_options_require_person(ocisbx_harness_options *o, const char *label)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "harness options: NULL");
    return labels_add(&o->require, label, NULL);
}

int ocisbx_harness_options_deny_label(ocisbx_harness_options *o, const char *label, const char *reason)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "harness options: NULL");
    return labels_add(&o->deny, label, reason);
}

int ocisbx_harness_options_set_policy_file(ocisbx_harness_options *o, const char *path)
{
    if (!o || !path)
        return ocisbx_fail(OCISBX_EINVAL, "harness options: NULL argument");
    ocisbx_policy *p = NULL;
    int rc = ocisbx_policy_load_file(path, &p); /* its errors now, not at the first call */
    ocisbx_policy_free(p);
    if (rc)
        return rc;
    free(o->policy_path);
    o->policy_path = ocisbx_strdup(path);
    return o->policy_path ? 0 : ocisbx_fail_nomem();
}

int ocisbx_harness_options_set_evidence_file(ocisbx_harness_options *o, const char *path)
{
    if (!o || !path || !path[0])
        return ocisbx_fail(OCISBX_EINVAL, "harness options: no evidence file");
    free(o->evidence_path);
    o->evidence_path = ocisbx_strdup(path);
    return o->evidence_path ? 0 : ocisbx_fail_nomem();
}

/* ---- the harness -------------------------------------------------------------------- */
void ocisbx_harness_free(ocisbx_harness *h)
{
    if (!h)
        return;
    ocisbx_env_list_free(&h->env);
    labels_free(&h->require);
    labels_free(&h->deny);
    ocisbx_policy_free(h->policy);
    evidence_file_close(h->ef);
    free(h);
}

int ocisbx_harness_new(ocisbx_backend *b, const ocisbx_harness_options *o, ocisbx_harness **out)
{
    if (!out || !b)
        return ocisbx_fail(OCISBX_EINVAL, "harness: NULL argument");
    *out = NULL;
    ocisbx_harness *h = calloc(1, sizeof *h);
    if (!h)
        return ocisbx_fail_nomem();
    h->b = b;
    memcpy(h->prev, OCISBX_EVIDENCE_CHAIN_START, sizeof h->prev);
    int rc = 0;
    for (size_t i = 0; o && !rc && i < o->env.n; i++)
        rc = ocisbx_env_list_add(&h->env, o->env.v[i].name, o->env.v[i].value, o->env.v[i].secret);
    if (!rc && o)
        rc = labels_copy(&h->require, &o->require);
    if (!rc && o)
        rc = labels_copy(&h->deny, &o->deny);
    if (!rc && o && o->policy_path)
        rc = ocisbx_policy_load_file(o->policy_path, &h->policy);
    if (!rc && o && o->evidence_path)
        rc = evidence_file_open(o->evidence_path, &h->ef);
    if (rc) {
        ocisbx_harness_free(h);
        return rc;
    }
    *out = h;
    return 0;
}

int ocisbx_gate_reply_set_reason(ocisbx_gate_reply *r, const char *reason)
{
    if (!r)
        return ocisbx_fail(OCISBX_EINVAL, "gate reply: NULL");
    free(r->reason);
    r->reason = reason ? ocisbx_strdup(reason) : NULL;
    return !reason || r->reason ? 0 : ocisbx_fail_nomem();
}

int ocisbx_harness_set_gate(ocisbx_harness *h, ocisbx_gate_fn fn, void *user_data)
{
    if (!h)
        return ocisbx_fail(OCISBX_EINVAL, "harness: NULL");
    h->gate = fn;
    h->gate_ud = user_data;
    return 0;
}

int ocisbx_harness_set_approval(ocisbx_harness *h, ocisbx_approval_fn fn, void *user_data)
{
    if (!h)
        return ocisbx_fail(OCISBX_EINVAL, "harness: NULL");
    h->approve = fn;
    h->approve_ud = user_data;
    return 0;
}

int ocisbx_harness_set_evidence_callback(ocisbx_harness *h, ocisbx_evidence_fn fn, void *user_data)
{
    if (!h)
        return ocisbx_fail(OCISBX_EINVAL, "harness: NULL");
    h->on_record = fn;
    h->record_ud = user_data;
    return 0;
}

bool harness_gated(const ocisbx_harness *h)
{
    return h->gate || h->policy || h->require.n || h->deny.n;
}
