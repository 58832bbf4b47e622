/* A local job's handle and its checked signals (local_job.h). */
#include "backend/local_job.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/procfs.h"
#include "util/internal.h"

static void boot_id(char out[40])
{
    snprintf(out, 40, "-");
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 32)
        return;
    buf[n] = '\0';
    size_t k = strspn(buf, "0123456789abcdef-");
    if (k >= 32 && k < 40) {
        memcpy(out, buf, k);
        out[k] = '\0';
    }
}

typedef struct member_scan {
    const ocisbx_local_job *j;
    long *v;
    size_t n, cap;
    unsigned long long oldest;
} member_scan;

static bool add_member(long pid, const ocisbx_procfs_stat *ps, void *ud)
{
    member_scan *m = ud;
    if (ocisbx_procfs_ended(ps))
        return true;
    if (m->j->ns) {
        uint64_t dev = 0, ino = 0;
        if (!ocisbx_procfs_pid_ns(pid, &dev, &ino) || dev != m->j->ns_dev || ino != m->j->ns_ino)
            return true;
    } else if (ps->sid != m->j->sid) {
        return true;
    }
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 16;
        long *nv = realloc(m->v, nc * sizeof *nv);
        if (!nv)
            return false;
        m->v = nv;
        m->cap = nc;
    }
    m->v[m->n++] = pid;
    if (!m->oldest || ps->start < m->oldest)
        m->oldest = ps->start;
    return true;
}

/* The job's processes: pids (malloc'd, *n of them) of the live ones, and
 * the oldest start time among them (the namespace's init). */
static long *members(const ocisbx_local_job *j, size_t *n, unsigned long long *oldest)
{
    member_scan m = {j, NULL, 0, 0, 0};
    (void)ocisbx_procfs_each(add_member, &m);
    *n = m.n;
    *oldest = m.oldest;
    return m.v;
}

int ocisbx_local_job_handle(const ocisbx_proc_job *pj, char **handle)
{
    ocisbx_local_job j;
    memset(&j, 0, sizeof j);
    boot_id(j.boot);
    if (pj->ns_ino) {
        j.ns = true;
        j.ns_dev = pj->ns_dev;
        j.ns_ino = pj->ns_ino;
        size_t n = 0;
        free(members(&j, &n, &j.start));
        *handle = ocisbx_asprintf("ns:%" PRIu64 ":%" PRIu64 ":%llu:%s", j.ns_dev, j.ns_ino, j.start, j.boot);
    } else {
        ocisbx_procfs_stat ps;
        j.sid = pj->pgid;
        if (ocisbx_procfs_stat_read(j.sid, &ps) && ps.sid == j.sid)
            j.start = ps.start;
        *handle = ocisbx_asprintf("pg:%ld:%llu:%s", j.sid, j.start, j.boot);
    }
    return *handle ? 0 : ocisbx_fail_nomem();
}

static int refuse_own(const ocisbx_local_job *j)
{
    if (j->ns) {
        uint64_t dev = 0, ino = 0;
        if ((ocisbx_procfs_pid_ns(0, &dev, &ino) && dev == j->ns_dev && ino == j->ns_ino) ||
            (ocisbx_procfs_pid_ns(1, &dev, &ino) && dev == j->ns_dev && ino == j->ns_ino))
            return ocisbx_fail(OCISBX_EFORBIDDEN, "local job: the handle names this host's own PID namespace");
        return 0;
    }
    if (j->sid <= 1 || j->sid == (long)getpid() || j->sid == (long)getpgrp() || j->sid == (long)getsid(0))
        return ocisbx_fail(OCISBX_EFORBIDDEN, "local job: the handle names process 1 or this process's own group");
    return 0;
}

int ocisbx_local_job_parse(const char *handle, ocisbx_local_job *out)
{
    memset(out, 0, sizeof *out);
    unsigned long long a = 0, b = 0, s = 0;
    long sid = 0;
    int used = 0;
    char boot[40] = {0};
    if (sscanf(handle, "ns:%llu:%llu:%llu:%39[0-9a-f-]%n", &a, &b, &s, boot, &used) == 4 && !handle[used] && b) {
        out->ns = true;
        out->ns_dev = a;
        out->ns_ino = b;
    } else if (sscanf(handle, "pg:%ld:%llu:%39[0-9a-f-]%n", &sid, &s, boot, &used) == 3 && !handle[used]) {
        out->sid = sid;
    } else {
        return ocisbx_fail(OCISBX_EINVAL, "local job: not a local job's handle");
    }
    out->start = s;
    memcpy(out->boot, boot, sizeof boot);
    return refuse_own(out);
}

int ocisbx_local_job_signal(const ocisbx_local_job *j, int sig)
{
    char now[40];
    boot_id(now);
    if (!j->start || (strcmp(now, "-") != 0 && strcmp(j->boot, "-") != 0 && strcmp(now, j->boot) != 0))
        return 0; /* it had ended when it was started, or before the machine restarted */
    if (!j->ns) {
        /* A live process with the leader's number must be the leader. Without
         * one, the session's members are the job's: the kernel does not give
         * a number out again while a session or group still bears it. */
        ocisbx_procfs_stat ps;
        if (ocisbx_procfs_stat_read(j->sid, &ps) && ps.start != j->start)
            return 0;
    }
    size_t n = 0;
    unsigned long long oldest = 0;
    long *v = members(j, &n, &oldest);
    int hits = 0;
    /* a namespace's processes all die with its init, the oldest of them */
    for (size_t i = 0; i < n && (!j->ns || oldest == j->start); i++)
        if (kill((pid_t)v[i], sig) == 0)
            hits++;
    free(v);
    return hits;
}
