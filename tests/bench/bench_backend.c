/* bench_backend: the workspace backend (OCI sandbox over the emulator)
 * beside the least the service needs for the same job, in one run:
 *   - exec of `true` (median of 200) vs one bare runAndWait, and the
 *     overhead in round trips (a GET of the sandbox is one);
 *   - a 256 MiB checked write vs the minimal chunked protocol (PUT of
 *     8 MiB parts with their SHA-256, then one join-and-check command)
 *     and vs curl PUTting the same parts;
 *   - a 256 MiB read vs curl GETting the file;
 *   - a 200 MB output: what the command wrote, what the service stored
 *     (went through it) and what the client got back;
 *   - the client's peak memory (VmHWM, reset between phases) of each.
 *   - exec's cost in requests: a fresh backend (new client, connect, exec
 *     `true`, free) and an already connected one, each beside the wall
 *     time of a bare runAndWait (targets: at most 2 and 1 requests, at
 *     most 1.3x the bare run's time);
 * Prints figures; never a test. Arguments name the parts to run (exec,
 * requests, files, output); none: all. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "emu_client.h"
#include "emu_fixture.h"
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

typedef struct src {
    const unsigned char *d;
    size_t len, at;
} src;

static size_t curl_read(char *p, size_t size, size_t n, void *ud)
{
    src *s = ud;
    size_t k = size * n < s->len - s->at ? size * n : s->len - s->at;
    memcpy(p, s->d + s->at, k);
    s->at += k;
    return k;
}

static size_t curl_discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    *(uint64_t *)ud += size * n;
    return size * n;
}

/* One signed request through curl alone (no library transport). */
static long curl_signed(emu_fixture *f, const char *method, const char *path, const void *body, size_t len,
                        uint64_t *got)
{
    char sha[64];
    emu_fixture_req req = {0};
    req.method = method;
    req.path = path;
    req.body = body;
    req.body_len = len;
    if (body) {
        b64_sha256(body, len, sha);
        req.content_type = "application/octet-stream";
    }
    ocisbx_headers *h = NULL;
    if (emu_fixture_sign(f, &req, &h) != 0)
        die("sign");
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < ocisbx_headers_count(h); i++) {
        char line[4096];
        snprintf(line, sizeof line, "%s: %s", ocisbx_headers_name(h, i), ocisbx_headers_value(h, i));
        list = curl_slist_append(list, line);
    }
    ocisbx_headers_free(h);
    if (body) {
        char line[128];
        snprintf(line, sizeof line, "opc-content-sha256: %s", sha);
        list = curl_slist_append(list, line);
        list = curl_slist_append(list, "Expect:");
    }
    char url[2048];
    snprintf(url, sizeof url, "%s/%s%s", emu_fixture_url(f), EMU_FIXTURE_API_VERSION, path);
    CURL *c = curl_easy_init();
    src s = {body, len, 0};
    uint64_t n = 0;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(c, CURLOPT_CAINFO, emu_fixture_ca_path(f));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_discard);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &n);
    if (body) {
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, curl_read);
        curl_easy_setopt(c, CURLOPT_READDATA, &s);
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
    }
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    curl_slist_free_all(list);
    if (got)
        *got = n;
    return code;
}

typedef struct gen {
    const unsigned char *d;
    size_t len, at;
} gen;

static int64_t gen_read(void *buf, size_t cap, void *ud)
{
    gen *g = ud;
    size_t k = cap < g->len - g->at ? cap : g->len - g->at;
    memcpy(buf, g->d + g->at, k);
    g->at += k;
    return (int64_t)k;
}

static int count_sink(const void *data, size_t len, void *ud)
{
    (void)data;
    *(uint64_t *)ud += len;
    return 0;
}

static void bench_files(emu_fixture *f, ocisbx_client *c, ocisbx_backend *b)
{
    const char *sid = ocisbx_backend_sandbox_id(b);
    unsigned char *data = malloc(BIG);
    if (!data)
        die("malloc");
    for (size_t i = 0; i < BIG; i++)
        data[i] = (unsigned char)(i * 2654435761u >> 13);
    double mib = BIG / 1048576.0;

    /* the backend, streamed from a callback (the data buffer is ours) */
    hwm_reset();
    long long base = hwm_kb();
    gen g = {data, BIG, 0};
    double t0 = now_ms();
    if (ocisbx_backend_write_from_callback(b, "/workspace/big.bin", gen_read, &g))
        die("backend write");
    double tb = now_ms() - t0;
    long long mem_b = hwm_kb() - base;

    /* the minimal protocol through the same client */
    hwm_reset();
    base = hwm_kb();
    t0 = now_ms();
    for (size_t off = 0, k = 0; off < BIG; off += PART, k++) {
        char p[128];
        snprintf(p, sizeof p, "/workspace/.min/p%04zu", k);
        if (ocisbx_client_write_file(c, sid, p, data + off, PART, NULL))
            die("minimal: part");
    }
    char sum[65];
    {
        unsigned char md[32];
        unsigned int ml = 0;
        EVP_Digest(data, BIG, md, &ml, EVP_sha256(), NULL);
        for (int i = 0; i < 32; i++)
            snprintf(sum + 2 * i, 3, "%02x", md[i]);
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "cat /workspace/.min/p* > /workspace/min.bin && echo '%s  /workspace/min.bin' | sha256sum -c --quiet "
             "&& rm -r /workspace/.min",
             sum);
    run_wait(c, sid, cmd);
    double tm = now_ms() - t0;
    long long mem_m = hwm_kb() - base;

    /* curl alone, the same parts (no join) */
    t0 = now_ms();
    for (size_t off = 0, k = 0; off < BIG; off += PART, k++) {
        char p[256];
        snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/.curl/p%04zu", sid, k);
        long code = curl_signed(f, "PUT", p, data + off, PART, NULL);
        if (code < 200 || code > 299) {
            fprintf(stderr, "bench_backend: curl PUT: HTTP %ld\n", code);
            exit(1);
        }
    }
    double tc = now_ms() - t0;
    printf("write 256 MiB: backend %.0f MiB/s (%.2f s, client peak +%lld kB beyond its data); minimal protocol "
           "%.0f MiB/s (%.2f s, +%lld kB); curl PUT of the parts %.0f MiB/s (%.2f s); backend/minimal %.0f %% "
           "(target >= 70 %%)\n",
           mib / (tb / 1e3), tb / 1e3, mem_b, mib / (tm / 1e3), tm / 1e3, mem_m, mib / (tc / 1e3), tc / 1e3,
           100.0 * tm / tb);

    /* reads */
    hwm_reset();
    base = hwm_kb();
    uint64_t n = 0;
    t0 = now_ms();
    if (ocisbx_backend_read_to_callback(b, "/workspace/big.bin", count_sink, &n) || n != BIG)
        die("backend read");
    double rb = now_ms() - t0;
    long long mem_r = hwm_kb() - base;
    char p[256];
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/big.bin", sid);
    uint64_t got = 0;
    t0 = now_ms();
    long code = curl_signed(f, "GET", p, NULL, 0, &got);
    double rc = now_ms() - t0;
    if (code != 200 || got != BIG)
        fprintf(stderr, "bench_backend: curl GET: HTTP %ld, %llu bytes\n", code, (unsigned long long)got);
    printf("read 256 MiB: backend (checked) %.0f MiB/s (%.2f s, client peak +%lld kB); curl GET %.0f MiB/s "
           "(%.2f s) (reference)\n",
           mib / (rb / 1e3), rb / 1e3, mem_r, mib / (rc / 1e3), rc / 1e3);
    free(data);
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
    if (wants(argc, argv, "files"))
        bench_files(f, c, b);
    if (wants(argc, argv, "output"))
        bench_output(c, b);
    ocisbx_backend_free(b);
    ocisbx_backend_options_free(o);
    ocisbx_client_free(c);
    emu_fixture_stop(f);
    emu_fixture_free(f);
    return 0;
}
