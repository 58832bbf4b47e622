/* Side-by-side cmocka cases (see par_run.h). */
#include "par_run.h"

#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A case: its group and its index there. */
typedef struct pcase {
    const par_group *g;
    size_t i;
} pcase;

typedef struct slot {
    pid_t pid;
    const pcase *c;
    FILE *out;
    double started;
} slot;

int par_run_jobs(void)
{
    const char *s = getenv("OCISBX_TEST_JOBS");
    char *end = NULL;
    long v = s && *s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || v < 1 || v > PAR_RUN_MAX_JOBS)
        return PAR_RUN_DEFAULT_JOBS;
    return (int)v;
}

/* Whether name matches one of the ':'-separated globs of list. */
static bool matches_one(const char *name, const char *list)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ":");
        char glob[256];
        if (n > 0 && n < sizeof glob) {
            memcpy(glob, p, n);
            glob[n] = '\0';
            if (fnmatch(glob, name, 0) == 0)
                return true;
        }
        p += n;
        if (*p == ':')
            p++;
    }
    return false;
}

bool par_run_selected(const char *name, const char *only, const char *skip)
{
    if (only && *only && !matches_one(name, only))
        return false;
    return !(skip && *skip && matches_one(name, skip));
}

static bool selected(const char *name)
{
    return par_run_selected(name, getenv("OCISBX_TEST_CASE"), getenv("OCISBX_TEST_SKIP"));
}

/* OCISBX_TEST_JOBS=1: the group's selected cases the plain cmocka way. */
static int run_plain(const par_group *g)
{
    struct CMUnitTest *t = calloc(g->n ? g->n : 1, sizeof *t);
    if (!t) {
        printf("[  FAILED  ] %s: out of memory\n", g->name);
        return (int)(g->n ? g->n : 1);
    }
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++)
        if (selected(g->tests[i].name))
            t[k++] = g->tests[i];
    int failed = k ? _cmocka_run_group_tests(g->name, t, k, g->setup, g->teardown) : 0;
    free(t);
    return failed;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* In the child: the one case, its output to out; never returns. */
static void run_child(const pcase *c, FILE *out)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the runner killed (a CTest timeout): its cases go too */
    int fd = fileno(out);
    if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
        _exit(125);
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fails = _cmocka_run_group_tests(c->g->name, &c->g->tests[c->i], 1, c->g->setup, c->g->teardown);
    fflush(stdout);
    exit(fails ? 1 : 0); /* exit, not _exit: a sanitizer's leak check runs in the child */
}

static void copy_out(FILE *out)
{
    char buf[8192];
    size_t n;
    rewind(out);
    while ((n = fread(buf, 1, sizeof buf, out)) > 0)
        fwrite(buf, 1, n, stdout);
    fclose(out);
}

/* Reports an ended child; 1 when its case failed. */
static int reap(slot *s, int status)
{
    double secs = now_s() - s->started;
    copy_out(s->out);
    int failed = 1;
    const char *group = s->c->g->name, *name = s->c->g->tests[s->c->i].name;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        failed = 0;
        printf("[   DONE   ] %s: %s (%.2f s)\n", group, name, secs);
    } else if (WIFEXITED(status)) {
        printf("[  FAILED  ] %s: %s: its process exited with %d (%.2f s)\n", group, name, WEXITSTATUS(status), secs);
    } else if (WIFSIGNALED(status)) {
        printf("[  FAILED  ] %s: %s: its process died of signal %d (%.2f s)\n", group, name, WTERMSIG(status), secs);
    } else {
        printf("[  FAILED  ] %s: %s: its process ended with status %#x\n", group, name, (unsigned)status);
    }
    fflush(stdout);
    s->pid = 0;
    return failed;
}

static int start(slot *s, const pcase *c)
{
    s->c = c;
    s->out = tmpfile();
    const char *name = c->g->tests[c->i].name;
    if (!s->out) {
        printf("[  FAILED  ] %s: no temporary file for its output: %s\n", name, strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    s->started = now_s();
    s->pid = fork();
    if (s->pid == 0)
        run_child(c, s->out);
    if (s->pid < 0) {
        printf("[  FAILED  ] %s: fork: %s\n", name, strerror(errno));
        fclose(s->out);
        s->pid = 0;
        return -1;
    }
    return 0;
}

/* Waits for one of the running children; its slot, or NULL when none runs. */
static slot *wait_one(slot *slots, int nslots, int *status)
{
    for (;;) {
        bool any = false;
        for (int k = 0; k < nslots; k++)
            any = any || slots[k].pid > 0;
        if (!any)
            return NULL;
        pid_t pid = waitpid(-1, status, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            return NULL;
        for (int k = 0; k < nslots; k++)
            if (slots[k].pid == pid)
                return &slots[k];
    }
}

static int run_pool(const pcase *cases, size_t n, int jobs)
{
    slot slots[PAR_RUN_MAX_JOBS];
    memset(slots, 0, sizeof slots);
    int failed = 0;
    size_t next = 0, done = 0;
    while (done < n) {
        for (int k = 0; k < jobs && next < n; k++) {
            if (slots[k].pid > 0)
                continue;
            if (start(&slots[k], &cases[next++]) != 0) {
                failed++;
                done++;
            }
        }
        int status = 0;
        slot *s = wait_one(slots, jobs, &status);
        if (!s) { /* no child left to wait for (cannot happen): the rest did not run */
            failed += (int)(n - done);
            break;
        }
        failed += reap(s, status);
        done++;
    }
    return failed;
}

int par_run_groups(const par_group *groups, size_t ngroups)
{
    int jobs = par_run_jobs();
    int failed = 0;
    if (jobs == 1) {
        for (size_t g = 0; g < ngroups; g++)
            failed += run_plain(&groups[g]);
        return failed;
    }
    size_t n = 0;
    for (size_t g = 0; g < ngroups; g++)
        n += groups[g].n;
    pcase *cases = calloc(n ? n : 1, sizeof *cases);
    if (!cases) {
        printf("[  FAILED  ] out of memory for %zu cases\n", n);
        return (int)(n ? n : 1);
    }
    size_t k = 0;
    for (size_t g = 0; g < ngroups; g++)
        for (size_t i = 0; i < groups[g].n; i++)
            if (selected(groups[g].tests[i].name))
                cases[k++] = (pcase){&groups[g], i};
    n = k;
    double t0 = now_s();
    printf("[==========] %zu test(s) of %zu group(s), %d at once, each in its own process\n", n, ngroups, jobs);
    failed = run_pool(cases, n, jobs);
    printf("[==========] %zu test(s) run in %.2f s, %d failed\n", n, now_s() - t0, failed);
    fflush(stdout);
    free(cases);
    return failed;
}

int par_run_group_tests(const char *group, const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
                        CMFixtureFunction teardown)
{
    const par_group g = {group, tests, n, setup, teardown};
    return par_run_groups(&g, 1);
}
