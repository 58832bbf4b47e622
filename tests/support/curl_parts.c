/* curl_parts.h: signed requests through curl alone. */
#include "curl_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "ocisbx/ocisbx.h"

#define MAX_K 16

typedef struct body_src {
    const unsigned char *d;
    size_t len, at;
} body_src;

static size_t on_read(char *p, size_t size, size_t n, void *ud)
{
    body_src *s = ud;
    size_t k = size * n < s->len - s->at ? size * n : s->len - s->at;
    memcpy(p, s->d + s->at, k);
    s->at += k;
    return k;
}

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    if (ud)
        *(uint64_t *)ud += size * n;
    return size * n;
}

/* A signed easy handle for one request (its header list into *list). */
static CURL *signed_easy(emu_fixture *f, const char *method, const char *path, body_src *s, uint64_t *got,
                         struct curl_slist **list)
{
    emu_fixture_req req = {0};
    req.method = method;
    req.path = path;
    req.body = s ? s->d : NULL;
    req.body_len = s ? s->len : 0;
    if (s)
        req.content_type = "application/octet-stream";
    ocisbx_headers *h = NULL;
    if (emu_fixture_sign(f, &req, &h) != 0)
        return NULL;
    *list = NULL;
    for (size_t i = 0; i < ocisbx_headers_count(h); i++) {
        char line[4096];
        snprintf(line, sizeof line, "%s: %s", ocisbx_headers_name(h, i), ocisbx_headers_value(h, i));
        *list = curl_slist_append(*list, line);
    }
    ocisbx_headers_free(h);
    if (s) {
        unsigned char md[32];
        char sha[64], line[128];
        EVP_Digest(s->d, s->len, md, NULL, EVP_sha256(), NULL);
        EVP_EncodeBlock((unsigned char *)sha, md, 32);
        snprintf(line, sizeof line, "opc-content-sha256: %s", sha);
        *list = curl_slist_append(*list, line);
        *list = curl_slist_append(*list, "Expect:");
    }
    char url[2048];
    snprintf(url, sizeof url, "%s/%s%s", emu_fixture_url(f), EMU_FIXTURE_API_VERSION, path);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, *list);
    curl_easy_setopt(c, CURLOPT_CAINFO, emu_fixture_ca_path(f));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, got);
    if (s) {
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(c, CURLOPT_READDATA, s);
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)s->len);
    }
    return c;
}

long curl_parts_request(emu_fixture *f, const char *method, const char *path, const void *body, size_t len,
                        uint64_t *got)
{
    body_src s = {body, len, 0};
    struct curl_slist *list = NULL;
    uint64_t n = 0;
    CURL *c = signed_easy(f, method, path, body ? &s : NULL, &n, &list);
    long code = 0;
    if (c && curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (c)
        curl_easy_cleanup(c);
    curl_slist_free_all(list);
    if (got)
        *got = n;
    return code;
}

typedef struct put_slot {
    unsigned char *buf;
    body_src s;
    CURL *easy;
    struct curl_slist *list;
} put_slot;

/* Reads the next part into sl and starts its PUT; 1 when none is left. */
static int start_part(emu_fixture *f, CURLM *m, FILE *fp, const char *sid, const char *dir, size_t size,
                      size_t part, size_t *off, size_t *k, put_slot *sl)
{
    if (*off >= size)
        return 1;
    size_t want = size - *off < part ? size - *off : part;
    size_t n = fread(sl->buf, 1, want, fp);
    if (n != want)
        return -1;
    char p[512];
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=%s/p%04zu", sid, dir, (*k)++);
    sl->s = (body_src){sl->buf, n, 0};
    sl->easy = signed_easy(f, "PUT", p, &sl->s, NULL, &sl->list);
    if (!sl->easy || curl_multi_add_handle(m, sl->easy) != CURLM_OK)
        return -1;
    *off += n;
    return 0;
}

/* The slot's transfer ended: 0 when it got a 2xx. */
static int end_part(CURLM *m, put_slot *sl, CURLcode cc)
{
    long code = 0;
    curl_easy_getinfo(sl->easy, CURLINFO_RESPONSE_CODE, &code);
    curl_multi_remove_handle(m, sl->easy);
    curl_easy_cleanup(sl->easy);
    curl_slist_free_all(sl->list);
    sl->easy = NULL;
    sl->list = NULL;
    if (cc == CURLE_OK && code >= 200 && code <= 299)
        return 0;
    fprintf(stderr, "curl_parts: PUT: %s, HTTP %ld\n", curl_easy_strerror(cc), code);
    return -1;
}

int curl_parts_put(emu_fixture *f, const char *sid, const char *local, size_t size, size_t part, int k,
                   const char *dir)
{
    if (k < 1 || k > MAX_K)
        return -1;
    FILE *fp = fopen(local, "rb");
    CURLM *m = curl_multi_init();
    put_slot sl[MAX_K];
    memset(sl, 0, sizeof sl);
    size_t off = 0, idx = 0;
    int rc = fp && m ? 0 : -1, busy = 0;
    for (int i = 0; i < k && !rc; i++) {
        if (!(sl[i].buf = malloc(part)))
            rc = -1;
        int st = rc ? -1 : start_part(f, m, fp, sid, dir, size, part, &off, &idx, &sl[i]);
        rc = st < 0 ? -1 : rc;
        busy += st == 0;
    }
    while (!rc && busy) {
        int running = 0, left = 0;
        if (curl_multi_perform(m, &running) != CURLM_OK)
            rc = -1;
        CURLMsg *msg;
        while (!rc && (msg = curl_multi_info_read(m, &left)) != NULL) {
            for (int i = 0; i < k && msg->msg == CURLMSG_DONE; i++) {
                if (sl[i].easy != msg->easy_handle)
                    continue;
                rc = end_part(m, &sl[i], msg->data.result);
                busy--;
                int st = rc ? 1 : start_part(f, m, fp, sid, dir, size, part, &off, &idx, &sl[i]);
                rc = st < 0 ? -1 : rc;
                busy += st == 0;
                break;
            }
        }
        if (!rc && busy)
            curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    for (int i = 0; i < k; i++) {
        if (sl[i].easy) {
            curl_multi_remove_handle(m, sl[i].easy);
            curl_easy_cleanup(sl[i].easy);
        }
        curl_slist_free_all(sl[i].list);
        free(sl[i].buf);
    }
    if (m)
        curl_multi_cleanup(m);
    if (fp)
        fclose(fp);
    return rc;
}
