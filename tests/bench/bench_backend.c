/* bench_backend: the workspace backend (OCI sandbox over the emulator)
 * beside the least the service needs for the same job, in one run:
 *   - exec of `true` (median of 200) vs one bare runAndWait, and the
 *     overhead in round trips (a GET of the sandbox is one);
 *   - `ocisbx cp` up and down of 64 and 256 MiB, its parts one after the
 *     other (--parallel 1) and 4 at once (the default), vs the minimal
 *     sequential chunked protocol (PUT of 8 MiB parts with their SHA-256,
 *     then one join-and-check command; one checked GET down) and vs curl
 *     moving the same parts, one by one and 4 at once, in alternating
 *     rounds (medians);
 *   - a 200 MB output: what the command wrote, what the service stored
 *     (went through it) and what the client got back;
 *   - the client's peak memory (VmHWM, reset between phases) of each.
 *   - exec's cost in requests: a fresh backend (new client, connect, exec
 *     `true`, free) and an already connected one, each beside the wall
 *     time of a bare runAndWait (targets: at most 2 and 1 requests, at
 *     most 1.3x the bare run's time);
 * Prints figures; never a test. Arguments name the parts to run (exec,
 * requests, breakdown, transfers, output); none: all. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cli_run.h"
#include "curl_parts.h"
#include "emu_client.h"
#include "emu_fixture.h"
#include "backend/backend_int.h"
#include "backend/scripts.h"
#include "ocisbx/ocisbx.h"

#define PART (8u * 1024 * 1024)
#define BIG (256u * 1024 * 1024)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long long hwm_kb(void)
{
    char line[256];
    long long v = -1;
    FILE *fp = fopen("/proc/self/status", "r");
    while (fp && fgets(line, sizeof line, fp))
        if (!strncmp(line, "VmHWM:", 6))
            v = strtoll(line + 6, NULL, 10);
    if (fp)
        fclose(fp);
    return v;
}

/* Resets VmHWM to the current RSS (Linux: clear_refs 5). */
static void hwm_reset(void)
{
    FILE *fp = fopen("/proc/self/clear_refs", "w");
    if (fp) {
        fputs("5", fp);
        fclose(fp);
    }
}

static void die(const char *what)
{
    fprintf(stderr, "bench_backend: %s: %s\n", what, ocisbx_error_message(ocisbx_error_last()));
    exit(1);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static ocisbx_client *client_for(emu_fixture *emu)
{
    ocisbx_client *c = NULL;
    if (emu_client_new(emu, 0, &c))
        die("client");
    return c;
}

static void b64_sha256(const void *d, size_t n, char out[64])
{
    unsigned char md[32];
    unsigned int ml = 0;
    EVP_Digest(d, n, md, &ml, EVP_sha256(), NULL);
    EVP_EncodeBlock((unsigned char *)out, md, 32);
}

static void run_wait(ocisbx_client *c, const char *sid, const char *cmd)
{
    ocisbx_run_command_details *d = NULL;
    ocisbx_command *r = NULL;
    if (ocisbx_run_command_details_new(cmd, &d) || ocisbx_client_run_command_and_wait(c, sid, d, &r))
        die(cmd);
    int x = -1;
    if (ocisbx_command_has_exit_code(r, &x) != 1 || x != 0) {
        fprintf(stderr, "bench_backend: %s: exit %d: %s\n", cmd, x, ocisbx_command_stderr(r));
        exit(1);
    }
    ocisbx_command_free(r);
    ocisbx_run_command_details_free(d);
}

static int ev_nop(const ocisbx_command_event *ev, void *ud)
{
    (void)ev;
    (void)ud;
    return 0;
}

/* run + one event stream of cmd: the protocol the backend uses, bare */
static void run_stream(ocisbx_client *c, const char *sid, const char *cmd)
{
    ocisbx_run_command_details *d = NULL;
    char *id = NULL;
    if (ocisbx_run_command_details_new(cmd, &d) || ocisbx_client_run_command_and_stream(c, sid, d, ev_nop, NULL, &id))
        die(cmd);
    ocisbx_free(id);
    ocisbx_run_command_details_free(d);
}

static void bench_exec(ocisbx_client *c, ocisbx_backend *b)
{
    enum { N = 200 };
    static double bare[N], wrapped[N], rtt[N], streamed[N];
    const char *sid = ocisbx_backend_sandbox_id(b);
    for (int i = 0; i < N; i++) {
        double t0 = now_ms();
        ocisbx_sandbox *s = NULL;
        if (ocisbx_client_get_sandbox(c, sid, &s))
            die("get sandbox");
        ocisbx_sandbox_free(s);
        rtt[i] = now_ms() - t0;
        t0 = now_ms();
        run_wait(c, sid, "true");
        bare[i] = now_ms() - t0;
        t0 = now_ms();
        run_stream(c, sid, "true");
        streamed[i] = now_ms() - t0;
        t0 = now_ms();
        ocisbx_exec_result *r = NULL;
        int x = -1;
        if (ocisbx_backend_exec(b, "true", NULL, &r) || ocisbx_exec_result_has_exit_code(r, &x) != 1 || x != 0)
            die("backend exec true");
        ocisbx_exec_result_free(r);
        wrapped[i] = now_ms() - t0;
    }
    double mr = median(rtt, N), mb = median(bare, N), mw = median(wrapped, N), ms = median(streamed, N);
    printf("exec `true`, median of %d: backend %.2f ms, bare runAndWait %.2f ms (reference); one round trip "
           "(GET sandbox) %.2f ms; overhead %.2f ms = %.1f round trips (target <= 2)\n",
           N, mw, mb, mr, mw - mb, (mw - mb) / mr);
    printf("  run + event stream of `true` (the backend's protocol without its wrapper) %.2f ms\n", ms);
}

/* exec's requests and time on a fresh and on a connected backend (the
 * client's attempt callback counts every request). */
static void bench_exec_requests(emu_fixture *f, const char *sid)
{
    enum { N = 50 };
    static double bare[N], conn[N], fresh[N];
    int attempts = 0, fresh_req = 0, conn_req = 0;
    ocisbx_client *c = NULL;
    if (emu_client_new_counting(f, &attempts, &c))
        die("counting client");
    ocisbx_backend_options *o = NULL;
    ocisbx_backend *b = NULL;
    if (ocisbx_backend_options_new(&o) || ocisbx_backend_options_set_client(o, c) ||
        ocisbx_backend_connect(sid, o, &b))
        die("connect");
    for (int i = 0; i < N; i++) {
        double t0 = now_ms();
        run_wait(c, sid, "true");
        bare[i] = now_ms() - t0;
        attempts = 0;
        t0 = now_ms();
        ocisbx_exec_result *r = NULL;
        if (ocisbx_backend_exec(b, "true", NULL, &r))
            die("exec on the connected backend");
        conn[i] = now_ms() - t0;
        conn_req = attempts;
        ocisbx_exec_result_free(r);
    }
    for (int i = 0; i < N; i++) {
        ocisbx_exec_result *r = NULL;
        /* fresh: a client of its own (new connections), connect, exec, free */
        int fa = 0;
        ocisbx_client *fc = NULL;
        ocisbx_backend_options *fo = NULL;
        ocisbx_backend *fb = NULL;
        double t0 = now_ms();
        if (emu_client_new_counting(f, &fa, &fc) || ocisbx_backend_options_new(&fo) ||
            ocisbx_backend_options_set_client(fo, fc) || ocisbx_backend_connect(sid, fo, &fb) ||
            ocisbx_backend_exec(fb, "true", NULL, &r))
            die("exec on a fresh backend");
        ocisbx_exec_result_free(r);
        ocisbx_backend_free(fb);
        fresh[i] = now_ms() - t0;
        fresh_req = fa;
        ocisbx_backend_options_free(fo);
        ocisbx_client_free(fc);
    }
    double mb = median(bare, N), mc = median(conn, N), mf = median(fresh, N);
    printf("exec `true` requests: fresh backend (connect, exec, free) %d requests, %.2f ms; connected backend %d "
           "request(s), %.2f ms = %.2fx a bare runAndWait (%.2f ms, reference) (targets: <= 2, <= 1, <= 1.3x)\n",
           fresh_req, mf, conn_req, mc, mc / mb, mb);
    ocisbx_backend_free(b);
    ocisbx_backend_options_free(o);
    ocisbx_client_free(c);
}

/* ---- transfers: our cp against the minimal protocol ---- */
typedef struct gen_src {
    const unsigned char *d;
    size_t len, at;
} gen_src;

static int64_t gen_src_read(void *buf, size_t cap, void *ud)
{
    gen_src *g = ud;
    size_t k = cap < g->len - g->at ? cap : g->len - g->at;
    memcpy(buf, g->d + g->at, k);
    g->at += k;
    return (int64_t)k;
}

enum { ROUNDS = 5 };

typedef struct xfer {
    double ms[ROUNDS];
    long long kb[ROUNDS]; /* client peak memory */
} xfer;

static double xfer_median_ms(xfer *x)
{
    double v[ROUNDS];
    memcpy(v, x->ms, sizeof v);
    return median(v, ROUNDS);
}

static long long xfer_median_kb(xfer *x)
{
    double v[ROUNDS];
    for (int i = 0; i < ROUNDS; i++)
        v[i] = (double)x->kb[i];
    return (long long)median(v, ROUNDS);
}

/* `ocisbx cp [--parallel N] SRC DST` as a child process (cli_run; cli
 * NULL: this build's ocisbx; parallel NULL: no flag): its time and peak RSS. */
static void run_cp_with(const char *cli, const char *parallel, emu_fixture *f, const char *src_arg,
                        const char *dst_arg, double *ms, long long *kb)
{
    const char *argv[] = {"--config-file", emu_fixture_config_path(f), "--endpoint", emu_fixture_url(f),
                          "--ca-bundle", emu_fixture_ca_path(f), "cp", src_arg, dst_arg, NULL, NULL, NULL};
    if (parallel) {
        argv[7] = "--parallel";
        argv[8] = parallel;
        argv[9] = src_arg;
        argv[10] = dst_arg;
    }
    cli_run_options o = {0};
    o.program = cli;
    o.stdout_to = "/dev/null";
    o.timeout_s = 600;
    cli_result r;
    double t0 = now_ms();
    if (cli_run_ex(argv, &o, &r) != 0 || r.status != 0) {
        fprintf(stderr, "bench_backend: ocisbx cp %s %s failed (status %d): %s\n", src_arg, dst_arg, r.status,
                r.err ? r.err : "");
        exit(1);
    }
    *ms = now_ms() - t0;
    *kb = r.peak_rss_kb;
    cli_result_free(&r);
}

static void run_cp(emu_fixture *f, const char *parallel, const char *src_arg, const char *dst_arg, double *ms,
                   long long *kb)
{
    run_cp_with(NULL, parallel, f, src_arg, dst_arg, ms, kb);
}

static void hex_sha256_file(const char *path, char out[65])
{
    unsigned char md[32], *buf = malloc(1 << 20);
    unsigned int ml = 0;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    FILE *fp = fopen(path, "rb");
    size_t n;
    while (fp && (n = fread(buf, 1, 1 << 20, fp)) > 0)
        EVP_DigestUpdate(c, buf, n);
    if (fp)
        fclose(fp);
    EVP_DigestFinal_ex(c, md, &ml);
    EVP_MD_CTX_free(c);
    free(buf);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* The least a correct chunked write does, through the same client: the
 * file read one 8 MiB part at a time (its SHA-256 computed as it is read),
 * a signed PUT of each with its opc-content-sha256, then one run-and-wait
 * that joins the parts, checks the whole file's SHA-256 and renames. */
static void minimal_up(ocisbx_client *c, const char *sid, const char *local, size_t size, bool openssl, double *ms,
                       long long *kb)
{
    hwm_reset();
    long long base = hwm_kb();
    double t0 = now_ms();
    unsigned char *part = malloc(PART), md[32];
    unsigned int ml = 0;
    EVP_MD_CTX *hc = EVP_MD_CTX_new();
    EVP_DigestInit_ex(hc, EVP_sha256(), NULL);
    FILE *fp = fopen(local, "rb");
    for (size_t off = 0, k = 0; fp && off < size; off += PART, k++) {
        size_t n = fread(part, 1, PART, fp);
        EVP_DigestUpdate(hc, part, n);
        char p[128];
        snprintf(p, sizeof p, "/workspace/.min/p%04zu", k);
        if (ocisbx_client_write_file(c, sid, p, part, n, NULL))
            die("minimal: part");
    }
    if (fp)
        fclose(fp);
    EVP_DigestFinal_ex(hc, md, &ml);
    EVP_MD_CTX_free(hc);
    free(part);
    char sum[65], cmd[512];
    for (int i = 0; i < 32; i++)
        snprintf(sum + 2 * i, 3, "%02x", md[i]);
    if (openssl) /* the checker the backend's join uses when it is there */
        snprintf(cmd, sizeof cmd,
                 "cat /workspace/.min/p* > /workspace/.min/all && [ \"$(openssl dgst -sha256 -r < /workspace/.min/all "
                 "| cut -d' ' -f1)\" = %s ] && mv /workspace/.min/all /workspace/min.bin && rm -r /workspace/.min",
                 sum);
    else
        snprintf(cmd, sizeof cmd,
                 "cat /workspace/.min/p* > /workspace/.min/all && echo '%s  /workspace/.min/all' | sha256sum -c "
                 "--quiet && mv /workspace/.min/all /workspace/min.bin && rm -r /workspace/.min",
                 sum);
    run_wait(c, sid, cmd);
    *ms = now_ms() - t0;
    *kb = hwm_kb() - base;
}

/* The library alone (no program start): the backend's checked write and read. */
static void backend_up(ocisbx_backend *b, const char *local, double *ms, long long *kb)
{
    hwm_reset();
    long long base = hwm_kb();
    double t0 = now_ms();
    if (ocisbx_backend_write_from_path(b, "/workspace/lib.bin", local))
        die("backend write");
    *ms = now_ms() - t0;
    *kb = hwm_kb() - base;
}

static void backend_down(ocisbx_backend *b, const char *local, double *ms, long long *kb)
{
    hwm_reset();
    long long base = hwm_kb();
    double t0 = now_ms();
    if (ocisbx_backend_read_to_path(b, "/workspace/lib.bin", local))
        die("backend read");
    *ms = now_ms() - t0;
    *kb = hwm_kb() - base;
}

static int file_sink(const void *data, size_t len, void *ud)
{
    return fwrite(data, 1, len, ud) != len;
}

/* The least a checked download does: one GET, checked against
 * opc-content-sha256 as it is written to the local file. */
static void minimal_down(ocisbx_client *c, const char *sid, const char *local, size_t size, double *ms, long long *kb)
{
    hwm_reset();
    long long base = hwm_kb();
    double t0 = now_ms();
    FILE *fp = fopen(local, "wb");
    struct stat st;
    if (!fp || ocisbx_client_read_file_to_callback(c, sid, "/workspace/min.bin", file_sink, fp) || fclose(fp) ||
        stat(local, &st) != 0 || (size_t)st.st_size != size)
        die("minimal: read");
    *ms = now_ms() - t0;
    *kb = hwm_kb() - base;
}

/* curl alone: the same parts PUT (no join), k at a time, or one GET. */
static void curl_up(emu_fixture *f, const char *sid, const char *local, size_t size, int k, double *ms,
                    long long *kb)
{
    hwm_reset();
    long long base = hwm_kb();
    double t0 = now_ms();
    if (curl_parts_put(f, sid, local, size, PART, k, "/workspace/.curl") != 0) {
        fprintf(stderr, "bench_backend: curl PUT of the parts failed\n");
        exit(1);
    }
    *ms = now_ms() - t0;
    *kb = hwm_kb() - base;
}

static void curl_down(emu_fixture *f, const char *sid, size_t size, double *ms, long long *kb)
{
    hwm_reset();
    long long base = hwm_kb();
    char p[256];
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/min.bin", sid);
    uint64_t got = 0;
    double t0 = now_ms();
    long code = curl_parts_request(f, "GET", p, NULL, 0, &got);
    *ms = now_ms() - t0;
    *kb = hwm_kb() - base;
    if (code != 200 || got != size)
        fprintf(stderr, "bench_backend: curl GET: HTTP %ld, %llu bytes\n", code, (unsigned long long)got);
}

static void xfer_row(const char *what, xfer *x, double mib, double ref_ms)
{
    double m = xfer_median_ms(x);
    printf("  %-44s %8.0f MiB/s %8.3f s %10lld kB", what, mib / (m / 1e3), m / 1e3, xfer_median_kb(x));
    if (ref_ms > 0)
        printf("   %.2fx the minimal protocol", ref_ms / m);
    printf("\n");
}

/* Alternating rounds of each way of moving the same file; medians. */
static void bench_transfer_size(emu_fixture *f, ocisbx_client *c, ocisbx_backend *b, const char *dir, size_t size)
{
    const char *sid = ocisbx_backend_sandbox_id(b);
    char local[600], back[600], remote[600], want[65], got[65];
    snprintf(local, sizeof local, "%s/up.bin", dir);
    snprintf(back, sizeof back, "%s/down.bin", dir);
    snprintf(remote, sizeof remote, "sbx:%s:/workspace/cp.bin", sid);
    FILE *fp = fopen(local, "wb");
    unsigned char *chunk = malloc(1 << 20);
    for (size_t off = 0; fp && off < size; off += 1 << 20) {
        for (size_t i = 0; i < 1 << 20; i++)
            chunk[i] = (unsigned char)((off + i) * 2654435761u >> 13);
        fwrite(chunk, 1, 1 << 20, fp);
    }
    if (fp)
        fclose(fp);
    free(chunk);
    /* BENCH_CP_BEFORE=<another ocisbx>: its cp too, in the same rounds (before/after figures) */
    const char *before = getenv("BENCH_CP_BEFORE");
    xfer cp_up = {0}, cp_down = {0}, min_up = {0}, min_down = {0}, c_up = {0}, c_down = {0}, b_up = {0},
         b_down = {0}, l_up = {0}, l_down = {0}, o_up = {0}, s_up = {0}, cq_up = {0};
    for (int r = 0; r < ROUNDS; r++) {
        if (before) {
            run_cp_with(before, NULL, f, local, remote, &b_up.ms[r], &b_up.kb[r]);
            run_cp_with(before, NULL, f, remote, back, &b_down.ms[r], &b_down.kb[r]);
        }
        run_cp(f, "1", local, remote, &s_up.ms[r], &s_up.kb[r]);
        run_cp(f, NULL, local, remote, &cp_up.ms[r], &cp_up.kb[r]);
        backend_up(b, local, &l_up.ms[r], &l_up.kb[r]);
        minimal_up(c, sid, local, size, false, &min_up.ms[r], &min_up.kb[r]);
        minimal_up(c, sid, local, size, true, &o_up.ms[r], &o_up.kb[r]);
        curl_up(f, sid, local, size, 1, &c_up.ms[r], &c_up.kb[r]);
        curl_up(f, sid, local, size, OCISBX_BACKEND_DEFAULT_PARALLEL_PARTS, &cq_up.ms[r], &cq_up.kb[r]);
        run_cp(f, NULL, remote, back, &cp_down.ms[r], &cp_down.kb[r]);
        backend_down(b, back, &l_down.ms[r], &l_down.kb[r]);
        minimal_down(c, sid, back, size, &min_down.ms[r], &min_down.kb[r]);
        curl_down(f, sid, size, &c_down.ms[r], &c_down.kb[r]);
    }
    hex_sha256_file(local, want);
    hex_sha256_file(back, got);
    if (strcmp(want, got) != 0) {
        fprintf(stderr, "bench_backend: cp down gave another file\n");
        exit(1);
    }
    double mib = (double)size / 1048576.0, ref = xfer_median_ms(&min_up);
    printf("transfer %zu MiB, median of %d alternating rounds (time, client peak memory: for cp the whole "
           "process's RSS, else the growth of this one's):\n",
           size >> 20, ROUNDS);
    if (before)
        xfer_row("up: ocisbx cp (BENCH_CP_BEFORE)", &b_up, mib, ref);
    xfer_row("up: ocisbx cp --parallel 1 (sequential)", &s_up, mib, ref);
    xfer_row("up: ocisbx cp (parallel, 4 parts: default)", &cp_up, mib, ref);
    xfer_row("up: the backend's write, in process (4)", &l_up, mib, ref);
    xfer_row("up: minimal sequential protocol", &min_up, mib, 0);
    xfer_row("up: minimal, openssl's SHA-256 inside", &o_up, mib, ref);
    xfer_row("up: curl PUT of the same parts", &c_up, mib, ref);
    xfer_row("up: curl PUT of the same parts, 4 at once", &cq_up, mib, ref);
    if (before)
        xfer_row("down: ocisbx cp (BENCH_CP_BEFORE)", &b_down, mib, xfer_median_ms(&min_down));
    xfer_row("down: ocisbx cp (one GET: no range reads)", &cp_down, mib, xfer_median_ms(&min_down));
    xfer_row("down: the backend's read, in process", &l_down, mib, xfer_median_ms(&min_down));
    xfer_row("down: minimal (one checked GET to the file)", &min_down, mib, 0);
    xfer_row("down: curl GET", &c_down, mib, xfer_median_ms(&min_down));
    unlink(local);
    unlink(back);
}

/* Where the time of a 64 MiB chunked write goes, step by step, with the
 * library's own steps (backend_int.h), and the components on their own. */
static double per_ms(double t0, int n)
{
    return (now_ms() - t0) / n;
}

static void bench_breakdown(emu_fixture *f, ocisbx_client *c, ocisbx_backend *b)
{
    enum { REP = 8 };
    unsigned char *part = malloc(PART), *copy = malloc(PART), md[32];
    for (size_t i = 0; i < PART; i++)
        part[i] = (unsigned char)(i * 2654435761u >> 13);
    double t0 = now_ms();
    for (int i = 0; i < REP; i++)
        EVP_Digest(part, PART, md, NULL, EVP_sha256(), NULL);
    double t_sha = per_ms(t0, REP);
    t0 = now_ms();
    for (int i = 0; i < REP; i++)
        memcpy(copy, part, PART);
    double t_copy = per_ms(t0, REP);
    t0 = now_ms();
    for (int i = 0; i < REP * 8; i++) {
        emu_fixture_req req = {0};
        req.method = "PUT";
        req.path = "/sandboxes/x/files?filePath=/workspace/p";
        req.body = part;
        req.body_len = 1;
        req.content_type = "application/octet-stream";
        ocisbx_headers *h = NULL;
        if (emu_fixture_sign(f, &req, &h) != 0)
            die("sign");
        ocisbx_headers_free(h);
    }
    double t_sign = per_ms(t0, REP * 8);
    const char *sid = ocisbx_backend_sandbox_id(b);
    char sha[64];
    b64_sha256(part, PART, sha);
    t0 = now_ms();
    for (int i = 0; i < REP; i++)
        if (ocisbx_client_write_file(c, sid, "/workspace/.bd/buffered", part, PART, NULL))
            die("put");
    double t_put_buffered = per_ms(t0, REP);
    t0 = now_ms();
    for (int i = 0; i < REP; i++)
        if (b->vt->put_file(b, ".bd/streamed", part, PART, sha))
            die("put");
    double t_put = per_ms(t0, REP);
    t0 = now_ms();
    for (int i = 0; i < REP; i++)
        curl_parts_request(f, "PUT", "/sandboxes/x", NULL, 0, NULL); /* warm: a 404 */
    double t_rtt = per_ms(t0, REP);
    t0 = now_ms();
    for (int i = 0; i < REP; i++) {
        char p[256];
        snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/.bd/curl", sid);
        curl_parts_request(f, "PUT", p, part, PART, NULL);
    }
    double t_curl = per_ms(t0, REP);
    /* one run of a script that does nothing but its checks */
    const char *args[] = {b->root, "."};
    int ex = 0;
    t0 = now_ms();
    for (int i = 0; i < REP; i++)
        if (ocisbx_backend_run_sh(b, ocisbx_script_path_stat, args, 2, 64, NULL, NULL, &ex))
            die("run");
    double t_run = per_ms(t0, REP);
    /* a 64 MiB chunked write by its steps */
    double t_next = 0, t_parts = 0, t_join = 0;
    gen_src g = {NULL, 0, 0};
    ocisbx_chunked_write *w = NULL;
    unsigned char *buf = malloc(PART);
    unsigned char *data = malloc(8 * (size_t)PART);
    for (size_t i = 0; i < 8 * (size_t)PART; i++)
        data[i] = (unsigned char)(i * 2654435761u >> 13);
    g.d = data;
    g.len = 8 * (size_t)PART;
    if (ocisbx_chunked_begin(b, "bd.bin", NULL, 0, gen_src_read, &g, &w))
        die("begin");
    bool more = true;
    while (more) {
        ocisbx_part pt;
        t0 = now_ms();
        if (ocisbx_chunked_next(w, buf, &pt, &more))
            die("next");
        t_next += now_ms() - t0;
        t0 = now_ms();
        if (ocisbx_chunked_put(w, &pt))
            die("part");
        t_parts += now_ms() - t0;
    }
    t0 = now_ms();
    if (ocisbx_chunked_finish(w))
        die("join");
    t_join = now_ms() - t0;
    ocisbx_chunked_free(w);
    printf("a 64 MiB write by its steps (8 parts of 8 MiB), ms:\n"
           "  per part: SHA-256 %.1f (the write hashes twice: the part's and the whole file's), a copy %.1f, "
           "signing %.2f, one round trip %.1f;\n"
           "  the request of a part: streamed from where it lies with its SHA-256 %.1f, from a copy with the "
           "SHA-256 computed again (before) %.1f, curl alone (a new connection each) %.1f;\n"
           "  all 8 parts: reading and hashing %.0f, their requests %.0f; the join (one run of write-join.sh: "
           "cat | tee | sha256, mv) %.0f, of which a run that does nothing %.0f\n",
           t_sha, t_copy, t_sign, t_rtt, t_put, t_put_buffered, t_curl, t_next, t_parts, t_join, t_run);
    free(data);
    free(buf);
    free(part);
    free(copy);
}

static void bench_transfers(emu_fixture *f, ocisbx_client *c, ocisbx_backend *b)
{
    char dir[] = "/tmp/bench_backend_XXXXXX";
    if (!mkdtemp(dir))
        die("mkdtemp");
    bench_transfer_size(f, c, b, dir, 64u << 20);
    bench_transfer_size(f, c, b, dir, BIG);
    rmdir(dir);
}

static void bench_output(ocisbx_client *c, ocisbx_backend *b)
{
    hwm_reset();
    long long base = hwm_kb();
    ocisbx_exec_result *r = NULL;
    double t0 = now_ms();
    if (ocisbx_backend_exec(b, "yes | head -c 200000000", NULL, &r))
        die("exec 200 MB");
    double dt = now_ms() - t0;
    long long mem = hwm_kb() - base;
    /* what went through the service: the command's stored output */
    uint64_t through = 0;
    ocisbx_command_output *o = NULL;
    if (ocisbx_client_get_command_output(c, ocisbx_backend_sandbox_id(b), ocisbx_exec_result_command_id(r),
                                         OCISBX_SEQ_START, &o) == 0) {
        through = ocisbx_command_output_stdout_len(o) + ocisbx_command_output_stderr_len(o);
        ocisbx_command_output_free(o);
    }
    printf("200 MB output: %.2f s; written by the command %llu bytes, through the service %llu bytes, returned "
           "%llu bytes; client peak +%lld kB\n",
           dt / 1e3, (unsigned long long)ocisbx_exec_result_total_bytes(r), (unsigned long long)through,
           (unsigned long long)ocisbx_exec_result_returned_bytes(r), mem);
    ocisbx_exec_result_free(r);
}

static int wants(int argc, char **argv, const char *part)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], part))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    emu_fixture_options eo = {0};
    eo.https = true;
    eo.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    emu_fixture *f = NULL;
    if (emu_fixture_start(&eo, &f) != 0)
        die("emulator");
    ocisbx_client *c = client_for(f);
    ocisbx_backend_options *o = NULL;
    ocisbx_backend *b = NULL;
    if (ocisbx_backend_options_new(&o) || ocisbx_backend_options_set_client(o, c) ||
        ocisbx_backend_options_set_poll_interval_ms(o, 20) || ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &b))
        die("create");
    if (wants(argc, argv, "exec"))
        bench_exec(c, b);
    if (wants(argc, argv, "requests"))
        bench_exec_requests(f, ocisbx_backend_sandbox_id(b));
    if (wants(argc, argv, "breakdown"))
        bench_breakdown(f, c, b);
    if (wants(argc, argv, "transfers"))
        bench_transfers(f, c, b);
    if (wants(argc, argv, "output"))
        bench_output(c, b);
    ocisbx_backend_free(b);
    ocisbx_backend_options_free(o);
    ocisbx_client_free(c);
    emu_fixture_stop(f);
    emu_fixture_free(f);
    return 0;
}
