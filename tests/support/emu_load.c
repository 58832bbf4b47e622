/* See emu_load.h. */
#include "emu_load.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "ocisbx/auth.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    emu_load_req *r = ud;
    size_t len = size * n;
    r->got_bytes = r->got_bytes || len > 0;
    if (!r->resp)
        r->resp = calloc(1, EMU_LOAD_BODY_MAX + 1);
    size_t room = r->resp && r->resp_len < EMU_LOAD_BODY_MAX ? EMU_LOAD_BODY_MAX - r->resp_len : 0;
    size_t take = len < room ? len : room;
    if (take) {
        memcpy(r->resp + r->resp_len, p, take);
        r->resp_len += take;
        r->resp[r->resp_len] = 0;
    }
    return len;
}

/* The signed easy handle of r, added to m. */
static int start_one(emu_fixture *f, CURLM *m, emu_load_req *r)
{
    emu_fixture_req q;
    memset(&q, 0, sizeof q);
    q.method = r->method;
    q.path = r->path;
    q.body = r->body;
    q.body_len = r->body ? strlen(r->body) : 0;
    ocisbx_headers *h = NULL;
    if (emu_fixture_sign(f, &q, &h) != 0)
        return -1;
    struct curl_slist *hl = NULL;
    for (size_t i = 0; i < ocisbx_headers_count(h); i++) {
        char line[4096];
        snprintf(line, sizeof line, "%s: %s", ocisbx_headers_name(h, i), ocisbx_headers_value(h, i));
        hl = curl_slist_append(hl, line);
    }
    ocisbx_headers_free(h);
    hl = curl_slist_append(hl, "Expect:");
    hl = curl_slist_append(hl, "Accept:");
    char url[2048];
    snprintf(url, sizeof url, "%s/%s%s", emu_fixture_url(f), EMU_FIXTURE_API_VERSION, r->path);
    CURL *c = curl_easy_init();
    if (!c) {
        curl_slist_free_all(hl);
        return -1;
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_PRIVATE, r);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 60L);
    if (r->body || !strcmp(r->method, "POST") || !strcmp(r->method, "PUT")) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body ? r->body : "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(r->body ? strlen(r->body) : 0));
    }
    r->easy = c;
    r->headers = hl;
    r->t0 = now_s();
    r->done = false;
    if (curl_multi_add_handle(m, c) != CURLM_OK)
        return -1;
    return 0;
}

static void end_one(CURLM *m, emu_load_req *r)
{
    if (!r->easy)
        return;
    curl_multi_remove_handle(m, r->easy);
    curl_easy_cleanup(r->easy);
    curl_slist_free_all(r->headers);
    r->easy = NULL;
    r->headers = NULL;
}

/* Collects the transfers that ended; returns how many. */
static size_t reap(CURLM *m)
{
    size_t ended = 0;
    CURLMsg *msg;
    int left = 0;
    while ((msg = curl_multi_info_read(m, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        emu_load_req *r = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        r->curl_code = (int)msg->data.result;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &r->status);
        r->ms = (now_s() - r->t0) * 1000.0;
        r->done = true;
        end_one(m, r);
        ended++;
    }
    return ended;
}

int emu_load_run(emu_fixture *f, emu_load_req *r, size_t n, int concurrency)
{
    CURLM *m = curl_multi_init();
    if (!m)
        return -1;
    size_t next = 0, running = 0, answered = 0, ended = 0;
    int rc = 0;
    while (ended < n && rc == 0) {
        while (next < n && running < (size_t)concurrency && rc == 0) {
            rc = start_one(f, m, &r[next++]);
            running++;
        }
        int still = 0;
        curl_multi_perform(m, &still);
        size_t e = reap(m);
        ended += e;
        running -= e;
        if (!e)
            curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    for (size_t i = 0; i < n; i++) {
        end_one(m, &r[i]);
        answered += r[i].status > 0;
    }
    curl_multi_cleanup(m);
    return rc ? -1 : (int)answered;
}

int emu_load_hold(emu_fixture *f, emu_load_req *r, size_t n, double timeout_s, void (*open_cb)(void *ud, size_t open),
                  void *ud)
{
    CURLM *m = curl_multi_init();
    if (!m)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = start_one(f, m, &r[i]);
    double t0 = now_s();
    size_t open = 0;
    while (rc == 0) {
        int still = 0;
        curl_multi_perform(m, &still);
        reap(m);
        size_t waiting = 0;
        open = 0;
        for (size_t i = 0; i < n; i++) {
            if (!r[i].got_bytes && !r[i].done)
                waiting++;
            if (r[i].got_bytes && !r[i].done) {
                open++;
                if (r[i].ms == 0)
                    r[i].ms = (now_s() - r[i].t0) * 1000.0;
            }
        }
        if (!waiting || now_s() - t0 > timeout_s)
            break;
        curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    if (rc == 0 && open_cb)
        open_cb(ud, open);
    for (size_t i = 0; i < n; i++)
        end_one(m, &r[i]);
    curl_multi_cleanup(m);
    return rc ? -1 : (int)open;
}

void emu_load_free(emu_load_req *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].resp);
        r[i].resp = NULL;
    }
}

long emu_load_fds(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    long n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

long emu_load_status_kb(int pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *fp = fopen(path, "r");
    long v = -1;
    size_t n = strlen(field);
    while (fp && fgets(line, sizeof line, fp))
        if (!strncmp(line, field, n) && line[n] == ':')
            v = strtol(line + n + 1, NULL, 10);
    if (fp)
        fclose(fp);
    return v;
}

long emu_load_threads(int pid)
{
    return emu_load_status_kb(pid, "Threads");
}

/* The parent pid of pid, from /proc/PID/stat (-1 when gone). */
static int parent_of(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    size_t len = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[len] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold spaces */
    int ppid = -1;
    if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
        return -1;
    return ppid;
}

long emu_load_children_pss_kb(int pid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    long sum = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        int p = atoi(de->d_name);
        if (p <= 0 || p == pid)
            continue;
        int q = p;
        for (int depth = 0; q > 1 && q != pid && depth < 64; depth++)
            q = parent_of(q);
        if (q == pid) {
            char path[64], line[256];
            snprintf(path, sizeof path, "/proc/%d/smaps_rollup", p);
            FILE *fp = fopen(path, "r");
            while (fp && fgets(line, sizeof line, fp))
                if (!strncmp(line, "Pss:", 4))
                    sum += strtol(line + 4, NULL, 10);
            if (fp)
                fclose(fp);
        }
    }
    closedir(d);
    return sum;
}
