/* ocisbx-emulator memory stays bounded: a file read is streamed (its memory
 * does not grow with the file, it stops when the client goes), and a long
 * output past the output-loss point is coalesced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "emu_fixture.h"
#include "ocisbx/auth.h"
#include "ocisbx/util.h"
#include "par_run.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* a field of /proc/<pid>/status in kB, or of /proc/<pid>/io */
static long long proc_field(int pid, const char *file, const char *name)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, file);
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

typedef struct sink {
    ocisbx_sha256_ctx *h;
    uint64_t bytes;
    char sha_hdr[64];
} sink;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    sink *k = ud;
    ocisbx_sha256_update(k->h, p, size * n);
    k->bytes += size * n;
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    sink *k = ud;
    size_t len = size * n;
    const char *name = "opc-content-sha256:";
    if (len > strlen(name) && !strncasecmp(p, name, strlen(name))) {
        const char *v = p + strlen(name);
        while (*v == ' ')
            v++;
        size_t vl = strcspn(v, "\r\n");
        snprintf(k->sha_hdr, sizeof k->sha_hdr, "%.*s", (int)vl, v);
    }
    return len;
}

/* GET of a file, the body hashed as it arrives (never kept); timeout_ms 0: none */
static long get_file(emu_fixture *f, const char *path, sink *k, long timeout_ms, int *curl_code)
{
    emu_fixture_req req = {0};
    req.method = "GET";
    req.path = path;
    ocisbx_headers *h = NULL;
    assert_int_equal(emu_fixture_sign(f, &req, &h), 0);
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < ocisbx_headers_count(h); i++) {
        char line[4096];
        snprintf(line, sizeof line, "%s: %s", ocisbx_headers_name(h, i), ocisbx_headers_value(h, i));
        list = curl_slist_append(list, line);
    }
    ocisbx_headers_free(h);
    char url[2048];
    snprintf(url, sizeof url, "%s/%s%s", emu_fixture_url(f), EMU_FIXTURE_API_VERSION, path);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, k);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, k);
    if (timeout_ms > 0)
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    *curl_code = (int)curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    curl_slist_free_all(list);
    return status;
}

static emu_fixture *start(const char *yaml)
{
    emu_fixture_options o = {0};
    o.extra_yaml = yaml;
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    return f;
}

static void run_wait(emu_fixture *f, const char *id, const char *command, cJSON **out)
{
    char p[256], body[512];
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    snprintf(body, sizeof body, "{\"command\":\"%s\"}", command);
    assert_int_equal(emu_fixture_json(f, "POST", p, body, 200, out), 0);
}

static void test_read_1g_sparse_file_bounded(void **state)
{
    (void)state;
    emu_fixture *f = start("limits:\n  create_delay_ms: 0\n");
    char id[64], p[512];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    run_wait(f, id, "truncate -s 1G /workspace/sp1g && printf x >> /workspace/sp1g", NULL);
    sink k;
    memset(&k, 0, sizeof k);
    assert_int_equal(ocisbx_sha256_new(&k.h), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/sp1g", id);
    int cc = -1;
    assert_int_equal(get_file(f, p, &k, 0, &cc), 200);
    assert_int_equal(cc, 0);
    assert_true(k.bytes == (1ULL << 30) + 1);
    unsigned char d[32];
    ocisbx_sha256_final(k.h, d);
    ocisbx_sha256_free(k.h);
    char *b64 = NULL;
    assert_int_equal(ocisbx_base64_encode(d, sizeof d, &b64), 0);
    assert_string_equal(k.sha_hdr, b64); /* the header is the hash of what came */
    ocisbx_free(b64);
    long long hwm = proc_field(emu_fixture_pid(f), "status", "VmHWM");
    fprintf(stderr, "emulator VmHWM after a 1 GiB read: %lld kB\n", hwm);
    assert_true(hwm > 0 && hwm < 200 * 1024);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

static void test_read_stops_when_client_goes(void **state)
{
    (void)state;
    /* a 64 GiB file, even sparse, is past SMALL's workspace limit (its
     * RLIMIT_FSIZE): no limit here */
    emu_fixture *f = start("limits:\n  create_delay_ms: 0\n  shapes:\n    SMALL: {workspace_mib: 0}\n");
    char id[64], p[512];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    run_wait(f, id, "truncate -s 64G /workspace/sp64g", NULL);
    int pid = emu_fixture_pid(f);
    long long before = proc_field(pid, "io", "rchar");
    sink k;
    memset(&k, 0, sizeof k);
    assert_int_equal(ocisbx_sha256_new(&k.h), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/sp64g", id);
    int cc = 0;
    (void)get_file(f, p, &k, 300, &cc); /* the client gives up */
    ocisbx_sha256_free(k.h);
    assert_int_not_equal(cc, 0);
    /* the emulator stops reading: rchar settles, far below the file's size */
    long long last = -1, now = proc_field(pid, "io", "rchar");
    for (int i = 0; i < 300 && now != last; i++) {
        sleep_ms(200);
        last = now;
        now = proc_field(pid, "io", "rchar");
    }
    assert_true(now == last);
    fprintf(stderr, "emulator read %lld bytes of a 64 GiB file for a client that left\n", now - before);
    assert_true(now - before < (64LL << 30));
    /* and it still answers */
    snprintf(p, sizeof p, "/sandboxes/%s", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, NULL), 0);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

static int64_t rfc3339_ms(const char *t)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int ms = 0;
    assert_non_null(t);
    assert_true(sscanf(t, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                       &tm.tm_sec, &ms) >= 6);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm) * 1000 + ms;
}

static void test_long_output_coalesced(void **state)
{
    (void)state;
    emu_fixture *f = start("limits:\n  create_delay_ms: 0\n  output_loss_bytes: 1000\n");
    char id[64], p[512];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    cJSON *j = NULL;
    run_wait(f, id, "yes | head -c 200000000; yes 2>&1 >&2 | head -c 50000000", &j);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "%s", jstr(j, "id"));
    int64_t dur = rfc3339_ms(jstr(j, "timeFinished")) - rfc3339_ms(jstr(j, "timeStarted"));
    cJSON_Delete(j);
    emu_fixture_result r;
    snprintf(p, sizeof p, "/sandboxes/%s/commands/%s/events", id, cmd);
    assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    int n = 0;
    for (const char *q = r.body; (q = strstr(q, "data: ")) != NULL; q += 6)
        n++;
    emu_fixture_result_free(&r);
    /* STARTED, FINISHED, the chunks before the loss (1000 bytes), then at
     * most one event per stream per second of the command's own run */
    int bound = 2 + 4 + 2 * (int)(dur / 1000 + 2);
    fprintf(stderr, "250 MB of output in %lld ms: %d events (bound %d)\n", (long long)dur, n, bound);
    assert_true(n >= 3 && n <= bound);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_1g_sparse_file_bounded),
        cmocka_unit_test(test_read_stops_when_client_goes),
        cmocka_unit_test(test_long_output_coalesced),
    };
    const char *only = getenv("IT_ONLY"); /* e.g. IT_ONLY='*1g*' */
    if (only)
        cmocka_set_test_filter(only);
    int rc = par_run_group_tests_name("it_emulator_bounded", tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
