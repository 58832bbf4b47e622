/* Signalling a command's whole tree (see proc_int.h): isolated, every
 * process of its PID namespace; unisolated, every descendant of the keeper
 * (a child subreaper, so orphans and setsid() daemons stay its
 * descendants). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/proc_int.h"
#include "sys/procfs.h"

typedef struct job_scan {
    const ocisbx_proc_job *j;
    int hits;
    int sig;
} job_scan;

static bool job_member(long pid, const ocisbx_procfs_stat *st, void *ud)
{
    job_scan *s = ud;
    if (ocisbx_procfs_ended(st))
        return true;
    if (s->j->ns_ino) {
        uint64_t dev = 0, ino = 0;
        if (!ocisbx_procfs_pid_ns(pid, &dev, &ino) || ino != s->j->ns_ino || dev != s->j->ns_dev)
            return true;
    } else if (s->j->pgid <= 0 || st->pgrp != s->j->pgid) {
        return true;
    }
    if (kill((pid_t)pid, s->sig) == 0)
        s->hits++;
    return true;
}

int ocisbx_proc_job_signal(const ocisbx_proc_job *j, int sig)
{
    job_scan s = {j, 0, sig};
    (void)ocisbx_procfs_each(job_member, &s);
    return s.hits;
}

typedef struct pnode {
    long pid, ppid;
    bool live; /* not a zombie */
} pnode;

typedef struct pset {
    pnode *v;
    size_t n, cap;
    bool failed;
} pset;

static bool add_node(long pid, const ocisbx_procfs_stat *st, void *ud)
{
    pset *s = ud;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 256;
        pnode *nv = realloc(s->v, nc * sizeof *nv);
        if (!nv)
            return !(s->failed = true);
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = (pnode){pid, st->ppid, !ocisbx_procfs_ended(st)};
    return true;
}

static int by_ppid(const void *a, const void *b)
{
    long x = ((const pnode *)a)->ppid, y = ((const pnode *)b)->ppid;
    return (x > y) - (x < y);
}

/* The first node whose parent is ppid in v (sorted by parent), or n. */
static size_t first_child(const pnode *v, size_t n, long ppid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].ppid < ppid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One pass: the descendants of root, found breadth first over a snapshot of
 * the process table sorted by parent (n log n), get sig if they live. */
static int signal_pass(pid_t root, int sig)
{
    pset s = {0};
    if (ocisbx_procfs_each(add_node, &s) != 0 || s.failed || !s.n) {
        free(s.v);
        return 0;
    }
    qsort(s.v, s.n, sizeof *s.v, by_ppid);
    long *queue = malloc(s.n * sizeof *queue); /* each process once: a pid has one parent */
    int hits = 0;
    size_t head = 0, tail = 0;
    if (queue)
        queue[tail++] = (long)root;
    while (head < tail) {
        long parent = queue[head++];
        for (size_t i = first_child(s.v, s.n, parent); i < s.n && s.v[i].ppid == parent; i++) {
            if (s.v[i].pid == (long)root || tail == s.n)
                continue;
            queue[tail++] = s.v[i].pid;
            if (s.v[i].live && kill((pid_t)s.v[i].pid, sig) == 0)
                hits++;
        }
    }
    free(queue);
    free(s.v);
    return hits;
}

int ocisbx_proc_signal_descendants(pid_t pid, int sig)
{
    int first = signal_pass(pid, sig);
    for (int pass = 1; first > 0 && pass < 3; pass++)
        if (signal_pass(pid, sig) == 0)
            break;
    return first;
}

/* Every process of the sandbox's PID namespace, found by its namespace inode
 * (orphans and setsid() daemons included), gets sig. Repeated a few times
 * so children forked during the scan are caught too. Called with mu held. */
static void signal_namespace(ocisbx_proc *p, int sig)
{
    ocisbx_proc_job j = {(uint64_t)p->ns_dev, (uint64_t)p->ns_ino, 0};
    for (int pass = 0; pass < 3; pass++)
        if (ocisbx_proc_job_signal(&j, sig) == 0)
            break;
}

int ocisbx_proc_job_of(ocisbx_proc *p, ocisbx_proc_job *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->mu);
    bool ok = p->detach && p->detached_pid > 0;
    if (ok && p->isolate) {
        ok = p->ns_ino != 0;
        out->ns_dev = (uint64_t)p->ns_dev;
        out->ns_ino = (uint64_t)p->ns_ino;
    } else if (ok) {
        out->pgid = (int)p->detached_pid; /* it called setsid() */
    }
    pthread_mutex_unlock(&p->mu);
    return ok ? 0 : ocisbx_fail(OCISBX_EIO, "runner: the detached job's identity is not known");
}

void ocisbx_proc_signal_tree_locked(ocisbx_proc *p, int sig)
{
    if (p->pid <= 0)
        return;
    if (!p->isolate) {
        /* the keeper (our child) blocks every signal and ends the rest of
         * the tree itself when the shell ends: only its descendants */
        (void)ocisbx_proc_signal_descendants(p->pid, sig);
        return;
    }
    if (p->ns_fd >= 0)
        signal_namespace(p, sig);
    /* bwrap outside the namespace: only KILL, so it never stops or exits
     * before its child (it reports the command's own status). */
    if (sig == SIGKILL || p->ns_fd < 0)
        kill(p->pid, sig);
}

void ocisbx_proc_wake(ocisbx_proc *p)
{
    if (p->wake_w >= 0) {
        char c = 1;
        ssize_t r = write(p->wake_w, &c, 1);
        (void)r; /* a full pipe is already a pending wake-up */
    }
}

void ocisbx_proc_terminate_locked(ocisbx_proc *p, int grace_ms)
{
    if (p->pid <= 0)
        return;
    if (grace_ms <= 0) {
        p->sent_signal = SIGKILL;
        ocisbx_proc_signal_tree_locked(p, SIGKILL);
        p->kill_at = 0;
        return;
    }
    if (p->sent_signal != SIGKILL)
        p->sent_signal = SIGTERM;
    ocisbx_proc_signal_tree_locked(p, SIGTERM);
    ocisbx_proc_signal_tree_locked(p, SIGCONT); /* a suspended tree must see its TERM */
    int64_t at = ocisbx_proc_now_ms() + grace_ms;
    if (p->kill_at == 0 || at < p->kill_at)
        p->kill_at = at;
    ocisbx_proc_wake(p);
}
