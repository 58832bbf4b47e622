/* Reading the host's process table (/proc): one home for the parsing of
 * /proc/<pid>/stat, the PID namespace of a process and the walk over every
 * process, used by the process runner (proc_tree.c) and the local backend's
 * job handles (backend/local_job.c). Linux only; no allocation but the walk's. */
#ifndef OCISBX_SYS_PROCFS_H
#define OCISBX_SYS_PROCFS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ocisbx_procfs_stat {
    char state;               /* field 3: R, S, D, Z, X, ... */
    long ppid;                /* field 4 */
    long pgrp;                /* field 5 */
    long sid;                 /* field 6 */
    unsigned long long start; /* field 22: start time, clock ticks after boot */
} ocisbx_procfs_stat;

/* The fields above of /proc/<pid>/stat; false when the process is gone or
 * the line does not parse (the name, field 2, may hold spaces and ')'). */
bool ocisbx_procfs_stat_read(long pid, ocisbx_procfs_stat *out);

/* Parses the text of a /proc/<pid>/stat (NUL-terminated); false when a field
 * is missing. Pure: the reader above and the tests use it. */
bool ocisbx_procfs_stat_parse(const char *text, ocisbx_procfs_stat *out);

/* Device and inode of the PID namespace of process `pid` (0: this process). */
bool ocisbx_procfs_pid_ns(long pid, uint64_t *dev, uint64_t *ino);

/* true for a process that has ended but is not reaped (zombie or dead). */
static inline bool ocisbx_procfs_ended(const ocisbx_procfs_stat *st)
{
    return st->state == 'Z' || st->state == 'X';
}

/* Calls fn for every process of /proc whose stat could be read, in /proc's
 * order, until fn returns false. Returns -1 when /proc cannot be opened,
 * else 0. */
typedef bool (*ocisbx_procfs_each_fn)(long pid, const ocisbx_procfs_stat *st, void *user_data);
int ocisbx_procfs_each(ocisbx_procfs_each_fn fn, void *user_data);

#endif
