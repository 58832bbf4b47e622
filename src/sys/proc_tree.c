/* Signalling a command's whole tree (see proc_int.h): isolated, every
 * process of its PID namespace; unisolated, every descendant of the keeper
 * (a child subreaper, so orphans and setsid() daemons stay its
 * descendants). */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/proc_int.h"

/* State (field 3), parent (4) and process group (5) of /proc/<pid>/stat. */
static bool proc_stat(long pid, char *state, long *ppid, long *pgrp)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *e = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    return e && sscanf(e + 1, " %c %ld %ld", state, ppid, pgrp) == 3;
}

int ocisbx_proc_job_signal(const ocisbx_proc_job *j, int sig)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int hits = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        char state = 0;
        long ppid = 0, pgrp = 0;
        if (*end || pid <= 0 || !proc_stat(pid, &state, &ppid, &pgrp) || state == 'Z')
            continue;
        if (j->ns_ino) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%ld/ns/pid", pid);
            struct stat st;
            if (stat(path, &st) != 0 || (uint64_t)st.st_ino != j->ns_ino || (uint64_t)st.st_dev != j->ns_dev)
                continue;
        } else if (j->pgid <= 0 || pgrp != j->pgid) {
            continue;
        }
        if (kill((pid_t)pid, sig) == 0)
            hits++;
    }
    closedir(d);
    return hits;
}

typedef struct pnode {
    long pid, ppid;
    bool live; /* not a zombie */
} pnode;

/* Every process of the host (pid, parent, state); NULL when none. */
static pnode *snapshot(size_t *n_out)
{
    *n_out = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return NULL;
    size_t n = 0, cap = 0;
    pnode *v = NULL;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        char state = 0;
        long ppid = 0, pgrp = 0;
        if (*end || pid <= 0 || !proc_stat(pid, &state, &ppid, &pgrp))
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            pnode *nv = realloc(v, nc * sizeof *nv);
            if (!nv)
                break;
            v = nv;
            cap = nc;
        }
        v[n++] = (pnode){pid, ppid, state != 'Z' && state != 'X'};
    }
    closedir(d);
    *n_out = n;
    return v;
}

/* One pass: marks the descendants of root (parents before children in any
 * order: repeated until nothing changes) and signals the live ones. */
static int signal_pass(pid_t root, int sig)
{
    size_t n = 0;
    pnode *v = snapshot(&n);
    if (!v)
        return 0;
    bool *in = calloc(n ? n : 1, sizeof *in);
    int hits = 0;
    for (bool grew = in != NULL; grew;) {
        grew = false;
        for (size_t i = 0; i < n; i++) {
            if (in[i])
                continue;
            bool child = v[i].ppid == (long)root;
            for (size_t k = 0; !child && k < n; k++)
                child = in[k] && v[k].pid == v[i].ppid;
            if (child)
                in[i] = grew = true;
        }
    }
    for (size_t i = 0; in && i < n; i++)
        if (in[i] && v[i].live && kill((pid_t)v[i].pid, sig) == 0)
            hits++;
    free(in);
    free(v);
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
