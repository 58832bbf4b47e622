/* bench_fleet: N sandboxes, each running one command with little output,
 * side by side in one run against the test tenancy:
 *   - engine:  one thread, <ocisbx/engine.h> (its default bounds);
 *   - threads: one thread per sandbox on the blocking API
 *     (ocisbx_backend_create / exec / close, a client each);
 *   - node: where node and npm's oci-common are found (installed into the
 *     build tree's node_modules the first time, as bench_client does), the
 *     same phases in Node, each one Promise.all over the sandboxes
 *     (tests/bench/bench_fleet_node.js: the oci-common signer and fetch).
 * In three phases (all N created, then the command in each, then all
 * closed) so that at the exec phase all N sandboxes are alive: wall time,
 * creates/s and execs/s achieved, the p50/p99 of a create and of an exec,
 * the client's peak RSS (getrusage) and the memory per sandbox, measured
 * as (peak RSS at N - peak RSS at N = 1) / (N - 1). Each measure runs in a
 * child process of its own (its peak RSS is its own).
 *   bench_fleet [N...]    default: 100 300 (1000 by argument)
 * Prints figures; never a test. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu_client.h"
#include "emu_fixture.h"
#include "ocisbx/ocisbx.h"

#define POLL_MS 200 /* both sides poll for RUNNING / STOPPED at most this often */
#define COMMAND "echo hello"

typedef struct figures {
    int n, ok;
    double wall_ms, create_s, exec_s; /* phase durations */
    double c50, c99, x50, x99;
    long peak_kb;
    unsigned long long throttled;
} figures;

static emu_fixture *emu;

static double ms_now(void)
{
    return (double)ocisbx_time_monotonic_ms();
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, int n, int p)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    int k = (p * n + 99) / 100;
    return v[k > 0 ? k - 1 : 0];
}

static ocisbx_backend_options *options(ocisbx_client *c)
{
    ocisbx_backend_options *bo = NULL;
    if (ocisbx_backend_options_new(&bo) || ocisbx_backend_options_set_client(bo, c) ||
        ocisbx_backend_options_set_poll_interval_ms(bo, POLL_MS)) {
        fprintf(stderr, "options: %s\n", ocisbx_error_message(ocisbx_error_last()));
        exit(1);
    }
    return bo;
}

/* ---- the engine ---- */
typedef struct eslot {
    ocisbx_engine_sandbox *sb;
    double t0, create_ms, exec_ms;
    int ok;
} eslot;

static int phase_left;

static void e_created(int rc, ocisbx_engine_sandbox *sb, void *ud)
{
    eslot *s = ud;
    s->create_ms = ms_now() - s->t0;
    s->sb = rc ? NULL : sb;
    if (rc)
        fprintf(stderr, "engine create: %s\n", ocisbx_error_message(ocisbx_error_last()));
    phase_left--;
}

static void e_execed(int rc, ocisbx_exec_result *r, void *ud)
{
    eslot *s = ud;
    int x = -1;
    s->exec_ms = ms_now() - s->t0;
    s->ok = rc == 0 && ocisbx_exec_result_has_exit_code(r, &x) == 1 && x == 0;
    ocisbx_exec_result_free(r);
    phase_left--;
}

static void e_closed(int rc, void *ud)
{
    eslot *s = ud;
    if (rc)
        fprintf(stderr, "engine close: %s\n", ocisbx_error_message(ocisbx_error_last()));
    s->sb = NULL;
    phase_left--;
}

static void run_engine(int n, figures *f)
{
    ocisbx_client *c = NULL;
    if (emu_client_new(emu, 0, &c)) {
        fprintf(stderr, "client: %s\n", ocisbx_error_message(ocisbx_error_last()));
        exit(1);
    }
    ocisbx_backend_options *bo = options(c);
    ocisbx_engine_options *eo = NULL;
    ocisbx_engine *e = NULL;
    if (ocisbx_engine_options_new(&eo) || ocisbx_engine_options_set_backend_options(eo, bo) ||
        ocisbx_engine_options_set_project_id(eo, EMU_FIXTURE_PROJECT) || ocisbx_engine_new(eo, &e)) {
        fprintf(stderr, "engine: %s\n", ocisbx_error_message(ocisbx_error_last()));
        exit(1);
    }
    eslot *s = calloc((size_t)n, sizeof *s);
    double t0 = ms_now();
    phase_left = n;
    for (int i = 0; i < n; i++) {
        s[i].t0 = ms_now();
        ocisbx_engine_create_sandbox(e, e_created, &s[i], NULL);
    }
    ocisbx_engine_run(e, -1);
    double t1 = ms_now();
    for (int i = 0; i < n; i++) {
        s[i].t0 = ms_now();
        if (s[i].sb)
            ocisbx_engine_exec(e, s[i].sb, COMMAND, NULL, e_execed, &s[i], NULL);
    }
    ocisbx_engine_run(e, -1);
    double t2 = ms_now();
    for (int i = 0; i < n; i++)
        if (s[i].sb)
            ocisbx_engine_close_sandbox(e, s[i].sb, e_closed, &s[i], NULL);
    ocisbx_engine_run(e, -1);
    double t3 = ms_now();
    double *cv = calloc((size_t)n, sizeof *cv), *xv = calloc((size_t)n, sizeof *xv);
    for (int i = 0; i < n; i++) {
        cv[i] = s[i].create_ms;
        xv[i] = s[i].exec_ms;
        f->ok += s[i].ok;
    }
    f->wall_ms = t3 - t0;
    f->create_s = (t1 - t0) / 1000;
    f->exec_s = (t2 - t1) / 1000;
    f->c50 = pct(cv, n, 50);
    f->c99 = pct(cv, n, 99);
    f->x50 = pct(xv, n, 50);
    f->x99 = pct(xv, n, 99);
    f->throttled = ocisbx_engine_throttled(e);
    free(cv);
    free(xv);
    free(s);
    ocisbx_engine_free(e);
    ocisbx_engine_options_free(eo);
    ocisbx_backend_options_free(bo);
    ocisbx_client_free(c);
}

/* ---- a thread per sandbox ---- */
typedef struct tslot {
    pthread_barrier_t *bar;
    double *marks; /* the phases' ends, written by thread 0 after each barrier */
    double create_ms, exec_ms;
    int ok, index;
} tslot;

static void *one_sandbox(void *ud)
{
    tslot *s = ud;
    ocisbx_client *c = NULL;
    ocisbx_backend *b = NULL;
    ocisbx_backend_options *bo = NULL;
    int rc = emu_client_new(emu, 0, &c);
    if (!rc)
        bo = options(c);
    pthread_barrier_wait(s->bar); /* everyone starts together */
    double t0 = ms_now();
    if (!rc)
        rc = ocisbx_backend_create(EMU_FIXTURE_PROJECT, bo, &b);
    s->create_ms = ms_now() - t0;
    if (rc)
        fprintf(stderr, "thread create: %s\n", ocisbx_error_message(ocisbx_error_last()));
    if (pthread_barrier_wait(s->bar) == PTHREAD_BARRIER_SERIAL_THREAD)
        s->marks[0] = ms_now();
    t0 = ms_now();
    ocisbx_exec_result *r = NULL;
    int x = -1;
    if (b && ocisbx_backend_exec(b, COMMAND, NULL, &r) == 0)
        s->ok = ocisbx_exec_result_has_exit_code(r, &x) == 1 && x == 0;
    s->exec_ms = ms_now() - t0;
    ocisbx_exec_result_free(r);
    if (pthread_barrier_wait(s->bar) == PTHREAD_BARRIER_SERIAL_THREAD)
        s->marks[1] = ms_now();
    if (b && ocisbx_backend_close(b) != 0)
        fprintf(stderr, "thread close: %s\n", ocisbx_error_message(ocisbx_error_last()));
    ocisbx_backend_free(b);
    ocisbx_backend_options_free(bo);
    ocisbx_client_free(c);
    return NULL;
}

static void run_threads(int n, figures *f)
{
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)n + 1);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    tslot *s = calloc((size_t)n, sizeof *s);
    double marks[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        s[i].bar = &bar;
        s[i].marks = marks;
        s[i].index = i;
        if (pthread_create(&th[i], NULL, one_sandbox, &s[i]) != 0) {
            fprintf(stderr, "pthread_create %d failed\n", i);
            exit(1);
        }
    }
    pthread_barrier_wait(&bar);
    double t0 = ms_now();
    if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD)
        marks[0] = ms_now();
    if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD)
        marks[1] = ms_now();
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    double t3 = ms_now();
    double *cv = calloc((size_t)n, sizeof *cv), *xv = calloc((size_t)n, sizeof *xv);
    for (int i = 0; i < n; i++) {
        cv[i] = s[i].create_ms;
        xv[i] = s[i].exec_ms;
        f->ok += s[i].ok;
    }
    f->wall_ms = t3 - t0;
    f->create_s = (marks[0] - t0) / 1000;
    f->exec_s = (marks[1] - marks[0]) / 1000;
    f->c50 = pct(cv, n, 50);
    f->c99 = pct(cv, n, 99);
    f->x50 = pct(xv, n, 50);
    f->x99 = pct(xv, n, 99);
    free(cv);
    free(xv);
    free(s);
    free(th);
    pthread_barrier_destroy(&bar);
}

/* ---- node and oci-common, Promise.all ---- */
static const char *node_modules(void)
{
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s/node_modules", OCISBX_BINARY_DIR);
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/oci-common/package.json", dir);
    struct stat st;
    if (stat(probe, &st) == 0)
        return dir;
    if (system("node --version > /dev/null 2>&1") != 0)
        return NULL;
    fprintf(stderr, "bench_fleet: installing oci-common into %s (npm)\n", OCISBX_BINARY_DIR);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "npm install --no-audit --no-fund --silent --prefix '%s' oci-common > /dev/null 2>&1",
             OCISBX_BINARY_DIR);
    if (system(cmd) != 0 || stat(probe, &st) != 0)
        return NULL;
    return dir;
}

/* 0 with the figures of the Node run, -1 when node or oci-common is
 * missing or the run failed. */
static int measure_node(int n, figures *f)
{
    const char *mods = node_modules();
    if (!mods)
        return -1;
    const char *ca = emu_fixture_ca_path(emu);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s%s%s node '%s/tests/bench/bench_fleet_node.js' '%s' '%s/%s' '%s' '%s' '%s' '%s' '%s' %d %d '%s'",
             ca ? "NODE_EXTRA_CA_CERTS='" : "", ca ? ca : "", ca ? "'" : "", OCISBX_SOURCE_DIR, mods, emu_fixture_url(emu),
             EMU_FIXTURE_API_VERSION, emu_fixture_key_path(emu), EMU_FIXTURE_TENANCY, EMU_FIXTURE_USER,
             emu_fixture_fingerprint(emu), EMU_FIXTURE_PROJECT, n, POLL_MS, COMMAND);
    fflush(NULL);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char out[1024] = {0};
    size_t got = fread(out, 1, sizeof out - 1, p);
    out[got] = '\0';
    int st = pclose(p);
    memset(f, 0, sizeof *f);
    if (st != 0 ||
        sscanf(out,
               "{\"n\":%d,\"ok\":%d,\"wall_ms\":%lf,\"create_s\":%lf,\"exec_s\":%lf,\"c50\":%lf,\"c99\":%lf,"
               "\"x50\":%lf,\"x99\":%lf,\"peak_kb\":%ld,\"throttled\":%llu}",
               &f->n, &f->ok, &f->wall_ms, &f->create_s, &f->exec_s, &f->c50, &f->c99, &f->x50, &f->x99, &f->peak_kb,
               &f->throttled) != 11) {
        fprintf(stderr, "bench_fleet: the node run of N=%d failed (status %d): %s\n", n, st, out);
        return -1;
    }
    return 0;
}

/* One measure in a child of its own: its figures through a pipe. */
static figures measure(const char *mode, int n)
{
    int p[2];
    figures f;
    memset(&f, 0, sizeof f);
    if (pipe(p) != 0)
        exit(1);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        figures g;
        memset(&g, 0, sizeof g);
        g.n = n;
        if (!strcmp(mode, "engine"))
            run_engine(n, &g);
        else
            run_threads(n, &g);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        g.peak_kb = ru.ru_maxrss;
        ssize_t w = write(p[1], &g, sizeof g);
        _exit(w == (ssize_t)sizeof g ? 0 : 1);
    }
    close(p[1]);
    ssize_t got = read(p[0], &f, sizeof f);
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (got != (ssize_t)sizeof f || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "%s N=%d: the measure failed\n", mode, n);
        exit(1);
    }
    return f;
}

static void row(const char *mode, const figures *f, const figures *base)
{
    double per = f->n > 1 ? (double)(f->peak_kb - base->peak_kb) / (f->n - 1) : 0;
    printf("| %d | %s | %d/%d | %.2f | %.1f | %.1f | %.0f / %.0f | %.0f / %.0f | %.1f | %.0f | %llu |\n", f->n, mode,
           f->ok, f->n, f->wall_ms / 1000, f->create_s > 0 ? f->n / f->create_s : 0,
           f->exec_s > 0 ? f->n / f->exec_s : 0, f->c50, f->c99, f->x50, f->x99, (double)f->peak_kb / 1024, per,
           f->throttled);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int ns[16] = {100, 300}, nn = 2;
    if (argc > 1) {
        nn = 0;
        for (int i = 1; i < argc && nn < 16; i++)
            if (atoi(argv[i]) > 1)
                ns[nn++] = atoi(argv[i]);
    }
    emu_fixture_options o = {0};
    if (emu_fixture_start(&o, &emu) != 0)
        return 1;
    printf("bench_fleet: %s in each sandbox, the tenancy's defaults (create_delay_ms 300), polls at most %d ms\n\n",
           COMMAND, POLL_MS);
    printf("| N | mode | ok | wall s | creates/s | execs/s | create p50 / p99 ms | exec p50 / p99 ms | peak RSS MiB "
           "| KiB per sandbox | 429s |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    figures be = measure("engine", 1), bt = measure("threads", 1), bn;
    bool node = measure_node(1, &bn) == 0;
    for (int i = 0; i < nn; i++) {
        figures fe = measure("engine", ns[i]);
        row("engine (1 thread)", &fe, &be);
        figures ft = measure("threads", ns[i]);
        row("a thread per sandbox", &ft, &bt);
        figures fn;
        if (node && measure_node(ns[i], &fn) == 0)
            row("node, oci-common, Promise.all", &fn, &bn);
        else if (node)
            printf("| %d | node, oci-common, Promise.all | failed (see stderr) | | | | | | | | |\n", ns[i]);
    }
    printf("\nbaseline (N = 1): engine %.1f MiB, threads %.1f MiB", (double)be.peak_kb / 1024,
           (double)bt.peak_kb / 1024);
    if (node)
        printf(", node %.1f MiB", (double)bn.peak_kb / 1024);
    printf(" peak RSS%s\n", node ? "" : "; node: missing (no node, or oci-common could not be installed)");
    int rc = emu_fixture_stop(emu);
    emu_fixture_free(emu);
    return rc == 0 ? 0 : 1;
}
