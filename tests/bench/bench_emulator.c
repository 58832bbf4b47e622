/* bench_emulator: the emulator's peak memory (VmHWM) serving a 1 GiB file
 * read and a 200 MB command output, and creates per second with durable
 * state, each beside a reference measured in the same run (cat of the same
 * file; the idle emulator; the same creates without fsync). Prints figures;
 * never a test. */
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

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    bench_read();
    bench_output();
    int n = 200;
    double d = creates_per_s(true, n), nd = creates_per_s(false, n);
    printf("creates: %.0f/s durable (fsync before each answer); reference without fsync: %.0f/s (%d creates each)\n",
           d, nd, n);
    curl_global_cleanup();
    return 0;
}
