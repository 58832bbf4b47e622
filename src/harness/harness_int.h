/* The harness's internals shared by its files (library-internal): the
 * handle, its ready policies. */
#ifndef OCISBX_HARNESS_INT_H
#define OCISBX_HARNESS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/evidence.h"
#include "ocisbx/harness.h"
#include "util/env.h"

/* A ready policy: calls whose label matches the glob are held or denied. */
typedef struct label_rule {
    char *label, *reason;
} label_rule;

typedef struct label_list {
    label_rule *v;
    size_t n;
} label_list;

/* Where the next read of a job's output starts (job wait reads on from
 * the last output or wait of that job). */
#define HARNESS_JOB_READS 32
typedef struct job_read {
    char id[48];
    uint64_t next;
} job_read;

struct ocisbx_harness {
    ocisbx_backend *b;
    ocisbx_env_list env;
    label_list require, deny;
    ocisbx_policy *policy;
    evidence_file *ef;
    char prev[OCISBX_SHA256_LEN * 2 + 1]; /* the chain without a file */
    ocisbx_gate_fn gate;
    void *gate_ud;
    ocisbx_approval_fn approve;
    void *approve_ud;
    ocisbx_evidence_fn on_record;
    void *record_ud;
    bool warned; /* the host-shell warning, once */
    job_read job_reads[HARNESS_JOB_READS];
    unsigned job_reads_slot; /* the slot a job not yet remembered takes (round robin) */
};

struct ocisbx_gate_reply {
    char *reason;
};

/* The first rule whose label glob matches label, or NULL. */
const label_rule *harness_labels_match(const label_list *l, const char *label);

/* true when a rule of the policy has a path glob: the gate then decides
 * on resolved paths and filters the paths a call lists. */
bool harness_policy_has_path_rules(const ocisbx_policy *p);

/* true when something decides calls: a gate callback or a ready policy. */
bool harness_gated(const ocisbx_harness *h);

#endif
