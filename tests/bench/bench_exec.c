/* bench_exec: the exec wrapper (src/backend/scripts/exec.sh) on a long
 * output, beside the bare command in the same run:
 *   - exec of `head -c <MB> MB /dev/zero` on a local backend (host shell)
 *     for each max_output_bytes given (default: the default 900000, 20096
 *     and 2096, i.e. chunks of about 450 KB, 10 KB and 1 KB), vs the bare
 *     `head -c ... /dev/zero | sha256sum` (the least that gives the total
 *     and the digest), in alternating rounds (medians): wall time and the
 *     CPU (user + sys) of every process of the run (this process is their
 *     subreaper, so that what the wrapper leaves to init is counted too).
 * Each exec's total and SHA-256 are checked against the bare run's. The
 * workspace is a fresh directory under $TMPDIR (default /tmp).
 * Prints figures; never a test.
 *   bench_exec [-r ROUNDS] [-m MB] [MAX_OUTPUT...]   (defaults 3, 64) */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ocisbx/ocisbx.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_exec: %s: %s\n", what, ocisbx_error_message(ocisbx_error_last()));
    exit(1);
}

/* user + sys of the reaped children so far, seconds (orphans reaped first) */
static double children_cpu(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* the bare command: wall and CPU; sum gets its digest */
static void run_bare(const char *cmd, double *wall, double *cpu, char sum[65])
{
    double c0 = children_cpu(), t0 = now_s();
    FILE *p = popen(cmd, "r");
    if (!p || !fgets(sum, 65, p)) {
        fprintf(stderr, "bench_exec: %s failed\n", cmd);
        exit(1);
    }
    while (fgetc(p) != EOF)
        ;
    if (pclose(p) != 0) {
        fprintf(stderr, "bench_exec: %s failed\n", cmd);
        exit(1);
    }
    *wall = now_s() - t0;
    *cpu = children_cpu() - c0;
}

static void run_exec(ocisbx_backend *b, const char *cmd, size_t max_output, uint64_t bytes, const char *sum,
                     double *wall, double *cpu)
{
    ocisbx_exec_options *o = NULL;
    ocisbx_exec_result *r = NULL;
    if (ocisbx_exec_options_new(&o) || ocisbx_exec_options_set_max_output_bytes(o, max_output) ||
        ocisbx_exec_options_set_timeout_ms(o, 600000))
        die("exec options");
    double c0 = children_cpu(), t0 = now_s();
    int x = -1;
    if (ocisbx_backend_exec(b, cmd, o, &r) || ocisbx_exec_result_has_exit_code(r, &x) != 1 || x != 0)
        die("exec");
    *wall = now_s() - t0;
    *cpu = children_cpu() - c0;
    if (ocisbx_exec_result_total_bytes(r) != bytes || strcmp(ocisbx_exec_result_total_sha256(r), sum)) {
        fprintf(stderr, "bench_exec: max_output %zu: total %llu %s, expected %llu %s\n", max_output,
                (unsigned long long)ocisbx_exec_result_total_bytes(r), ocisbx_exec_result_total_sha256(r),
                (unsigned long long)bytes, sum);
        exit(1);
    }
    ocisbx_exec_result_free(r);
    ocisbx_exec_options_free(o);
}

int main(int argc, char **argv)
{
    int rounds = 3, mb = 64, opt;
    while ((opt = getopt(argc, argv, "r:m:")) != -1) {
        if (opt == 'r')
            rounds = atoi(optarg);
        else if (opt == 'm')
            mb = atoi(optarg);
        else {
            fprintf(stderr, "usage: bench_exec [-r ROUNDS] [-m MB] [MAX_OUTPUT...]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 100 || mb < 1) {
        fprintf(stderr, "bench_exec: bad -r or -m\n");
        return 2;
    }
    size_t defaults[] = {900000, 20096, 2096}, given[32];
    size_t *max = defaults, nmax = 3;
    if (optind < argc) {
        nmax = 0;
        for (int i = optind; i < argc && nmax < 32; i++)
            given[nmax++] = strtoull(argv[i], NULL, 10);
        max = given;
    }
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    char dir[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/bench-exec.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    ocisbx_backend_options *bo = NULL;
    ocisbx_backend *b = NULL;
    if (ocisbx_backend_options_new(&bo) || ocisbx_backend_options_set_isolation(bo, 0) ||
        ocisbx_backend_local(dir, bo, &b))
        die("local backend");
    uint64_t bytes = (uint64_t)mb * 1000000u;
    char cmd[64], bare_cmd[128], sum[65] = "";
    snprintf(cmd, sizeof cmd, "head -c %llu /dev/zero", (unsigned long long)bytes);
    snprintf(bare_cmd, sizeof bare_cmd, "%s | sha256sum", cmd);
    printf("exec of `%s` (%d MB) on a local backend, median of %d rounds, vs the bare `%s` (reference)\n", cmd,
           mb, rounds, bare_cmd);
    double *bw = calloc((size_t)rounds, sizeof *bw), *bc = calloc((size_t)rounds, sizeof *bc);
    double *ew = calloc((size_t)rounds, sizeof *ew), *ec = calloc((size_t)rounds, sizeof *ec);
    if (!bw || !bc || !ew || !ec)
        return 1;
    for (size_t m = 0; m < nmax; m++) {
        for (int i = 0; i < rounds; i++) {
            run_bare(bare_cmd, &bw[i], &bc[i], sum);
            run_exec(b, cmd, max[m], bytes, sum, &ew[i], &ec[i]);
        }
        size_t h = max[m] > 96 ? (max[m] - 96) / 2 : 0;
        double w = median(ew, rounds), c = median(ec, rounds), rw = median(bw, rounds), rc = median(bc, rounds);
        printf("  max_output %7zu (chunks of %6zu B, %7llu chunks): exec %6.2f s wall %6.2f s CPU | bare %5.2f s "
               "wall %5.2f s CPU | wrapper's extra CPU %6.2f s\n",
               max[m], h - 4, (unsigned long long)(h > 4 ? (bytes + h - 5) / (h - 4) : 0), w, c, rw, rc, c - rc);
        fflush(stdout);
    }
    free(bw);
    free(bc);
    free(ew);
    free(ec);
    ocisbx_backend_free(b);
    ocisbx_backend_options_free(bo);
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    if (system(rm) != 0)
        fprintf(stderr, "bench_exec: could not remove %s\n", dir);
    return 0;
}
