/* readdir_gaps.so: a directory read as it may go while entries are added
 * (tests/scripts/gaps_exec.sh loads it into the shell with
 * LD_PRELOAD). A read of a directory that holds exec.sh's chunk files
 * ("*.o.*") waits 10 ms before its first entry; at its end, of the chunk
 * entries that appeared meanwhile it returns every second one in name
 * order (the 2nd, 4th, ...), so a newer chunk comes while an older one
 * begun in the same time does not. Entries that existed when the read
 * began all come, as POSIX says they must. One read at a time (a shell's
 * glob); other directories pass through. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_NAMES 8192

static struct {
    DIR *d;
    int ended;
    size_t nseen, nextra, next;
    char *seen[MAX_NAMES];
    struct dirent64 extra[MAX_NAMES];
} scan;

static void scan_reset(DIR *d)
{
    for (size_t i = 0; i < scan.nseen; i++)
        free(scan.seen[i]);
    scan.d = d;
    scan.ended = 0;
    scan.nseen = scan.nextra = scan.next = 0;
}

static int is_chunk(const char *name)
{
    return strstr(name, ".o.") != NULL;
}

static int seen(const char *name)
{
    for (size_t i = 0; i < scan.nseen; i++)
        if (!strcmp(scan.seen[i], name))
            return 1;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct dirent64 *)a)->d_name, ((const struct dirent64 *)b)->d_name);
}

/* The chunk entries now in the directory that this read did not return,
 * every second one kept. */
static void scan_end(struct dirent64 *(*next)(DIR *))
{
    scan.ended = 1;
    int fd = openat(dirfd(scan.d), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *again = fd >= 0 ? fdopendir(fd) : NULL;
    if (!again) {
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t n = 0;
    struct dirent64 *e;
    while ((e = next(again)) != NULL && n < MAX_NAMES)
        if (is_chunk(e->d_name) && !seen(e->d_name))
            scan.extra[n++] = *e;
    closedir(again);
    qsort(scan.extra, n, sizeof scan.extra[0], by_name);
    for (size_t i = 1; i < n; i += 2)
        scan.extra[scan.nextra++] = scan.extra[i];
}

static struct dirent64 *gapped(DIR *d, struct dirent64 *(*next)(DIR *))
{
    if (scan.d != d)
        scan_reset(d);
    if (!scan.ended) {
        struct dirent64 *e = next(d);
        if (e) {
            if (is_chunk(e->d_name) && scan.nseen < MAX_NAMES) {
                if (scan.nseen == 0)
                    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
                scan.seen[scan.nseen++] = strdup(e->d_name);
            }
            return e;
        }
        if (scan.nseen == 0)
            return NULL;
        scan_end(next);
    }
    return scan.next < scan.nextra ? &scan.extra[scan.next++] : NULL;
}

struct dirent64 *readdir64(DIR *d)
{
    static struct dirent64 *(*real)(DIR *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "readdir64");
    return gapped(d, real);
}

struct dirent *readdir(DIR *d)
{
    static struct dirent64 *(*real)(DIR *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "readdir");
    return (struct dirent *)gapped(d, real);
}

int closedir(DIR *d)
{
    static int (*real)(DIR *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "closedir");
    if (scan.d == d)
        scan_reset(NULL);
    return real(d);
}
