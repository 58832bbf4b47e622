/* The host's process table (procfs.h). */
#include "sys/procfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The fields after the name, counted from field 3 (the state) as 0. */
enum { TOK_STATE = 0, TOK_PPID = 1, TOK_PGRP = 2, TOK_SID = 3, TOK_START = 19 };

bool ocisbx_procfs_stat_parse(const char *text, ocisbx_procfs_stat *out)
{
    const char *p = strrchr(text, ')'); /* the name may hold spaces and parentheses */
    if (!p)
        return false;
    p++;
    memset(out, 0, sizeof *out);
    int got = 0;
    for (int tok = 0; tok <= TOK_START; tok++) {
        while (*p == ' ')
            p++;
        if (!*p || *p == '\n')
            return false;
        char *end = NULL;
        if (tok == TOK_STATE) {
            out->state = *p;
            got++;
        } else if (tok == TOK_PPID || tok == TOK_PGRP || tok == TOK_SID) {
            long v = strtol(p, &end, 10);
            got += end != p;
            *(tok == TOK_PPID ? &out->ppid : tok == TOK_PGRP ? &out->pgrp : &out->sid) = v;
        } else if (tok == TOK_START) {
            out->start = strtoull(p, &end, 10);
            got += end != p;
        }
        p += strcspn(p, " ");
    }
    return got == 5;
}

bool ocisbx_procfs_stat_read(long pid, ocisbx_procfs_stat *out)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return ocisbx_procfs_stat_parse(buf, out);
}

bool ocisbx_procfs_pid_ns(long pid, uint64_t *dev, uint64_t *ino)
{
    char path[64];
    struct stat st;
    if (pid > 0)
        snprintf(path, sizeof path, "/proc/%ld/ns/pid", pid);
    else
        snprintf(path, sizeof path, "/proc/self/ns/pid");
    if (stat(path, &st) != 0)
        return false;
    *dev = (uint64_t)st.st_dev;
    *ino = (uint64_t)st.st_ino;
    return true;
}

int ocisbx_procfs_each(ocisbx_procfs_each_fn fn, void *user_data)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        ocisbx_procfs_stat st;
        if (*end || pid <= 0 || !ocisbx_procfs_stat_read(pid, &st))
            continue;
        if (!fn(pid, &st, user_data))
            break;
    }
    closedir(d);
    return 0;
}
