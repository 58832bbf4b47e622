/* bench_emulator: the emulator's peak memory (VmHWM) serving a 1 GiB file
 * read and a 200 MB command output, and creates per second with durable
 * state, each beside a reference measured in the same run (cat of the same
 * file; the idle emulator; the same creates without fsync). Prints figures;
 * never a test.
 *
 *   bench_emulator                  the parts above
 *   bench_emulator scale [N] [C]    N sandboxes (default 1000) each running a
 *                                   command, C connections (default 256) open
 *                                   at once: creates/s, command starts/s,
 *                                   descriptors, threads and memory of the
 *                                   emulator and of the sandboxes' processes;
 *                                   the bubblewrap start cost of a command
 *                                   (runAndWait of `true`, isolated beside
 *                                   --no-isolation) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "emu_fixture.h"
#include "emu_load.h"
#include "ocisbx/auth.h"

static long long status_kb(int pid, const char *name)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *fp = fopen(path, "r");
    long long v = -1;
    size_t n = strlen(name);
    while (fp && fgets(line, sizeof line, fp))
        if (!strncmp(line, name, n) && line[n] == ':')
            v = strtoll(line + n + 1, NULL, 10);
    if (fp)
        fclose(fp);
    return v;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    *(uint64_t *)ud += size * n;
    return size * n;
}

static uint64_t get_discard(emu_fixture *f, const char *path)
{
    emu_fixture_req req = {0};
    req.method = "GET";
    req.path = path;
    ocisbx_headers *h = NULL;
    if (emu_fixture_sign(f, &req, &h) != 0)
        return 0;
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < ocisbx_headers_count(h); i++) {
        char line[4096];
        snprintf(line, sizeof line, "%s: %s", ocisbx_headers_name(h, i), ocisbx_headers_value(h, i));
        list = curl_slist_append(list, line);
    }
    ocisbx_headers_free(h);
    char url[2048];
    snprintf(url, sizeof url, "%s/%s%s", emu_fixture_url(f), EMU_FIXTURE_API_VERSION, path);
    uint64_t bytes = 0;
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &bytes);
    curl_easy_perform(c);
    curl_easy_cleanup(c);
    curl_slist_free_all(list);
    return bytes;
}

static emu_fixture *start(void)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    emu_fixture *f = NULL;
    if (emu_fixture_start(&o, &f) != 0) {
        fprintf(stderr, "bench_emulator: cannot start the emulator\n");
        exit(1);
    }
    return f;
}

/* peak RSS of `cat path > /dev/null`, kB */
static long cat_maxrss(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stdout);
        execlp("cat", "cat", path, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    wait4(pid, &st, 0, &ru);
    return ru.ru_maxrss;
}

static void bench_read(void)
{
    emu_fixture *f = start();
    char id[64], p[512], file[1024];
    emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    emu_fixture_json(f, "POST", p, "{\"command\":\"truncate -s 1G /workspace/sp1g\"}", 200, NULL);
    long long idle = status_kb(emu_fixture_pid(f), "VmHWM");
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/sp1g", id);
    double t0 = now_s();
    uint64_t got = get_discard(f, p);
    double dt = now_s() - t0;
    long long hwm = status_kb(emu_fixture_pid(f), "VmHWM");
    snprintf(file, sizeof file, "%s/workspaces/%s/sp1g", emu_fixture_state_dir(f), id);
    long cat = cat_maxrss(file);
    printf("1 GiB sparse file read: %llu bytes in %.1f s; emulator VmHWM %lld kB (idle before: %lld kB); "
           "reference cat of the file: maxrss %ld kB\n",
           (unsigned long long)got, dt, hwm, idle, cat);
    emu_fixture_stop(f);
    emu_fixture_free(f);
}

static void bench_output(void)
{
    emu_fixture *f = start();
    char id[64], p[512];
    emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id);
    long long idle = status_kb(emu_fixture_pid(f), "VmHWM");
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    double t0 = now_s();
    emu_fixture_json(f, "POST", p, "{\"command\":\"yes | head -c 200000000\"}", 200, NULL);
    double dt = now_s() - t0;
    printf("200 MB command output: %.1f s; emulator VmHWM %lld kB, VmRSS after %lld kB "
           "(reference, the idle emulator before: VmHWM %lld kB)\n",
           dt, status_kb(emu_fixture_pid(f), "VmHWM"), status_kb(emu_fixture_pid(f), "VmRSS"), idle);
    emu_fixture_stop(f);
    emu_fixture_free(f);
}

static double creates_per_s(bool fsync_on, int n)
{
    if (fsync_on)
        unsetenv("OCISBX_EMULATOR_NO_FSYNC");
    else
        setenv("OCISBX_EMULATOR_NO_FSYNC", "1", 1);
    emu_fixture *f = start();
    char p[512];
    snprintf(p, sizeof p, "/sandboxes?projectId=%s", EMU_FIXTURE_PROJECT);
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        emu_fixture_json(f, "POST", p, "{\"displayName\":\"bench\"}", 200, NULL);
    double dt = now_s() - t0;
    emu_fixture_stop(f);
    emu_fixture_free(f);
    unsetenv("OCISBX_EMULATOR_NO_FSYNC");
    return n / dt;
}

static void report(const char *when, int pid)
{
    printf("  %-44s emulator: %5ld fds, %5ld threads, VmRSS %7ld kB; its processes' Pss %8ld kB\n", when,
           emu_load_fds(pid), emu_load_threads(pid), emu_load_status_kb(pid, "VmRSS"), emu_load_children_pss_kb(pid));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* p50 and p99 of the latencies of r[from..to) */
static void percentiles(const emu_load_req *r, size_t from, size_t to, double *p50, double *p99)
{
    size_t n = to - from;
    double *v = calloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; v && i < n; i++)
        v[i] = r[from + i].ms;
    if (v)
        qsort(v, n, sizeof *v, cmp_double);
    *p50 = v && n ? v[n / 2] : 0;
    *p99 = v && n ? v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] : 0;
    free(v);
}

/* Runs r[0..n) at concurrency c; prints the rate and latencies (first and
 * last tenth); returns the number answered with want. */
static size_t timed(emu_fixture *f, const char *what, emu_load_req *r, size_t n, int c, long want)
{
    double t0 = now_s();
    emu_load_run(f, r, n, c);
    double dt = now_s() - t0;
    size_t ok = 0;
    for (size_t i = 0; i < n; i++)
        ok += r[i].status == want;
    double a50, a99, b50, b99;
    size_t tenth = n / 10 ? n / 10 : 1;
    percentiles(r, 0, tenth, &a50, &a99);
    percentiles(r, n - tenth, n, &b50, &b99);
    printf("  %-10s %zu of %zu ok in %.1f s: %.0f/s at %d in flight; latency p50/p99 first tenth %.0f/%.0f ms, "
           "last tenth %.0f/%.0f ms\n",
           what, ok, n, dt, n / dt, c, a50, a99, b50, b99);
    return ok;
}

static void id_of(const emu_load_req *r, char *out, size_t cap)
{
    cJSON *j = r->resp ? cJSON_Parse(r->resp) : NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "id");
    snprintf(out, cap, "%s", cJSON_IsString(v) ? v->valuestring : "");
    cJSON_Delete(j);
}

typedef struct hold_ud {
    emu_fixture *f;
    size_t n;
} hold_ud;

static void while_open(void *arg, size_t open)
{
    hold_ud *u = arg;
    char what[96];
    snprintf(what, sizeof what, "%zu of %zu streams open:", open, u->n);
    report(what, emu_fixture_pid(u->f));
    emu_fixture_result r;
    double t0 = now_s();
    int rc = emu_fixture_request(u->f, "GET", "/sandboxes?limit=1", NULL, &r);
    printf("  meanwhile GET /sandboxes?limit=1: %ld in %.0f ms\n", rc == 0 ? r.status : 0L, (now_s() - t0) * 1000);
    emu_fixture_result_free(&r);
}

/* runAndWait of `true`, k times in one sandbox: mean ms */
static double start_cost(bool isolated, int k)
{
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    o.no_isolation = !isolated;
    o.force_isolation = isolated;
    emu_fixture *f = NULL;
    if (emu_fixture_start(&o, &f) != 0)
        return -1;
    char id[64], p[256];
    emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    emu_fixture_json(f, "POST", p, "{\"command\":\"true\"}", 200, NULL); /* warm */
    double t0 = now_s();
    for (int i = 0; i < k; i++)
        emu_fixture_json(f, "POST", p, "{\"command\":\"true\"}", 200, NULL);
    double ms = (now_s() - t0) * 1000 / k;
    emu_fixture_stop(f);
    emu_fixture_free(f);
    return ms;
}

static void bench_scale(size_t n, size_t conns)
{
    int c = conns < 64 ? (int)conns : 64;
    printf("scale: %zu sandboxes each running `sleep 600`, %zu connections held open\n", n, conns);
    emu_fixture *f = start();
    int pid = emu_fixture_pid(f);
    report("idle:", pid);
    emu_load_req *r = calloc(n, sizeof *r);
    char(*ids)[64] = calloc(n, sizeof *ids), (*cmds)[64] = calloc(n, sizeof *cmds);
    if (!r || !ids || !cmds)
        exit(1);
    for (size_t i = 0; i < n; i++) {
        r[i].method = "POST";
        snprintf(r[i].path, sizeof r[i].path, "/sandboxes?projectId=%s", EMU_FIXTURE_PROJECT);
        r[i].body = "{}";
    }
    timed(f, "creates", r, n, c, 200);
    for (size_t i = 0; i < n; i++)
        id_of(&r[i], ids[i], sizeof ids[i]);
    emu_load_free(r, n);
    report("sandboxes created:", pid);
    memset(r, 0, n * sizeof *r);
    for (size_t i = 0; i < n; i++) {
        r[i].method = "POST";
        snprintf(r[i].path, sizeof r[i].path, "/sandboxes/%.63s/commands", ids[i]);
        r[i].body = "{\"command\":\"sleep 600\"}";
    }
    timed(f, "commands", r, n, c, 200);
    for (size_t i = 0; i < n; i++)
        id_of(&r[i], cmds[i], sizeof cmds[i]);
    emu_load_free(r, n);
    memset(r, 0, n * sizeof *r);
    for (size_t i = 0; i < n; i++) { /* each one's first event: STARTED once its process runs */
        r[i].method = "GET";
        snprintf(r[i].path, sizeof r[i].path, "/sandboxes/%.63s/commands/%.63s/events?untilSeq=1", ids[i], cmds[i]);
    }
    emu_load_run(f, r, n, c);
    size_t started = 0;
    for (size_t i = 0; i < n; i++)
        started += r[i].resp && strstr(r[i].resp, "\"STARTED\"") != NULL;
    emu_load_free(r, n);
    printf("  %zu of %zu commands started\n", started, n);
    report("commands running:", pid);
    size_t h = conns < n ? conns : n;
    memset(r, 0, n * sizeof *r);
    for (size_t i = 0; i < h; i++) {
        r[i].method = "GET";
        snprintf(r[i].path, sizeof r[i].path, "/sandboxes/%.63s/commands/%.63s/events", ids[i], cmds[i]);
    }
    hold_ud u = {f, h};
    double t0 = now_s();
    emu_load_hold(f, r, h, 300.0, while_open, &u);
    printf("  %zu streams opened in %.1f s\n", h, now_s() - t0);
    emu_load_free(r, h);
    memset(r, 0, n * sizeof *r);
    for (size_t i = 0; i < n; i++) {
        r[i].method = "DELETE";
        snprintf(r[i].path, sizeof r[i].path, "/sandboxes/%.63s", ids[i]);
    }
    timed(f, "deletes", r, n, c, 204);
    emu_load_free(r, n);
    report("all deleted:", pid);
    printf("  peak: emulator VmHWM %ld kB\n", emu_load_status_kb(pid, "VmHWM"));
    emu_fixture_stop(f);
    emu_fixture_free(f);
    free(r);
    free(ids);
    free(cmds);
    double iso = start_cost(true, 30), plain = start_cost(false, 30);
    printf("  command start: runAndWait of `true` %.1f ms isolated (bubblewrap), %.1f ms with --no-isolation "
           "(reference): bubblewrap costs %.1f ms a command\n",
           iso, plain, iso - plain);
}

int main(int argc, char **argv)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1 && !strcmp(argv[1], "scale")) {
        long n = argc > 2 ? atol(argv[2]) : 1000, conns = argc > 3 ? atol(argv[3]) : 256;
        bench_scale(n > 0 ? (size_t)n : 1000, conns > 0 ? (size_t)conns : 256);
        curl_global_cleanup();
        return 0;
    }
    bench_read();
    bench_output();
    int n = 200;
    double d = creates_per_s(true, n), nd = creates_per_s(false, n);
    printf("creates: %.0f/s durable (fsync before each answer); reference without fsync: %.0f/s (%d creates each)\n",
           d, nd, n);
    curl_global_cleanup();
    return 0;
}
