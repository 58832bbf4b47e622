/* What an outside probe broke in the transport: a body that never ends
 * (21 GB in 40 s), a 4 MB header ("Out of memory"), --read-timeout 3 that
 * failed after 13 s (the connect timeout added to it), and a response file
 * that was truncated in place before the answer was known. Each against a
 * raw socket server on 127.0.0.1 that behaves badly on purpose. */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "bad_server.h"
#include "ocisbx/http.h"
#include "ocisbx/util.h"
#include "par_run.h"

/* An unsigned transport (no credentials) to the bad server. */
static int send_get(bad_server *s, int64_t connect_ms, int64_t read_ms, const char *sink_path,
                    ocisbx_http_response **resp)
{
    ocisbx_http_options *o = NULL;
    ocisbx_http *h = NULL;
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_retries(o, 0), 0);
    assert_int_equal(ocisbx_http_options_set_connect_timeout_ms(o, connect_ms), 0);
    assert_int_equal(ocisbx_http_options_set_read_timeout_ms(o, read_ms), 0);
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", bad_server_port(s));
    assert_int_equal(ocisbx_http_request_new("GET", url, &r), 0);
    if (sink_path)
        assert_int_equal(ocisbx_http_request_set_sink_file(r, sink_path), 0);
    *resp = NULL;
    int rc = ocisbx_http_send(h, r, resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
    ocisbx_http_options_free(o);
    return rc;
}

static void endless_body_is_capped(void **state)
{
    (void)state;
    bad_server *s = bad_server_start(BAD_ENDLESS);
    ocisbx_http_response *resp = NULL;
    assert_int_equal(send_get(s, 5000, 30000, NULL, &resp), OCISBX_ETOOLARGE);
    const char *m = ocisbx_error_message(ocisbx_error_last());
    assert_non_null(strstr(m, "8388608 bytes"));
    assert_null(resp);
    bad_server_stop(s);
}

static void huge_headers_name_the_limit(void **state)
{
    (void)state;
    for (bad_mode m = BAD_BIG_HEADER; m <= BAD_MANY_HEADERS; m++) {
        bad_server *s = bad_server_start(m);
        ocisbx_http_response *resp = NULL;
        int rc = send_get(s, 5000, 30000, NULL, &resp);
        const char *msg = ocisbx_error_message(ocisbx_error_last());
        if (rc != OCISBX_ETOOLARGE || !strstr(msg, "headers are too large"))
            fail_msg("mode %d: rc %d: %s", m, rc, msg);
        assert_null(strstr(msg, "memory"));
        ocisbx_http_response_free(resp);
        bad_server_stop(s);
    }
}

/* The read timeout counts from the connection, not from the start: 1 s of
 * read timeout with a 30 s connect timeout ends in about 1 s, long before
 * the 31 s the two added together gave. The bound is far from both. */
static void read_timeout_excludes_connect_timeout(void **state)
{
    (void)state;
    bad_server *s = bad_server_start(BAD_SILENT);
    ocisbx_http_response *resp = NULL;
    int64_t t0 = ocisbx_time_monotonic_ms();
    assert_int_equal(send_get(s, 30000, 1000, NULL, &resp), OCISBX_ETIMEOUT);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    if (took >= 20000)
        fail_msg("the read timeout of 1 s took %lld ms", (long long)took);
    bad_server_stop(s);
}

/* A 500 whose chunked body never ends: the error body is cut at 64 KiB
 * and the connection closed, not drained, so --read-timeout 5
 * --max-retries 1 ends after two short attempts (it ran for minutes when
 * the rest was read and dropped). */
static void endless_error_body_is_cut(void **state)
{
    (void)state;
    bad_server *s = bad_server_start(BAD_ENDLESS_500);
    ocisbx_http_options *o = NULL;
    ocisbx_http *h = NULL;
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_read_timeout_ms(o, 5000), 0);
    assert_int_equal(ocisbx_http_options_set_max_attempts(o, 2), 0);
    assert_int_equal(ocisbx_http_options_set_backoff_ms(o, 10, 10), 0);
    assert_int_equal(ocisbx_http_options_set_max_jitter_ms(o, 0), 0);
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", bad_server_port(s));
    assert_int_equal(ocisbx_http_request_new("GET", url, &r), 0);
    ocisbx_http_response *resp = NULL;
    int64_t t0 = ocisbx_time_monotonic_ms();
    int rc = ocisbx_http_send(h, r, &resp);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    assert_int_equal(rc, OCISBX_ESERVICE);
    assert_non_null(resp);
    assert_int_equal(ocisbx_http_response_status(resp), 500);
    assert_int_equal(ocisbx_http_response_attempts(resp), 2);
    size_t len = 0;
    ocisbx_http_response_body(resp, &len);
    assert_int_equal(len, 64 * 1024);
    assert_int_equal(bad_server_connections(s), 2);
    /* closed at once: what the server got out is what the socket buffers took */
    if (bad_server_body_bytes(s) > 256LL * 1024 * 1024)
        fail_msg("the server sent %lld body bytes: the error body was drained", bad_server_body_bytes(s));
    if (took > 60000)
        fail_msg("two attempts took %lld ms", (long long)took);
    ocisbx_http_response_free(resp);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
    ocisbx_http_options_free(o);
    bad_server_stop(s);
}

/* A body that dribbles one byte a second never trips the read timeout
 * (bytes keep moving); the deadline ends it. */
static void deadline_ends_a_dribbling_body(void **state)
{
    (void)state;
    bad_server *s = bad_server_start(BAD_DRIBBLE);
    ocisbx_http_options *o = NULL;
    ocisbx_http *h = NULL;
    ocisbx_http_request *r = NULL;
    assert_int_equal(ocisbx_http_options_new(&o), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(o, 1), 0);
    assert_int_equal(ocisbx_http_options_set_read_timeout_ms(o, 5000), 0);
    assert_int_equal(ocisbx_http_options_set_deadline_ms(o, 1500), 0); /* past a second's gap */
    assert_int_equal(ocisbx_http_new(o, &h), 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", bad_server_port(s));
    assert_int_equal(ocisbx_http_request_new("GET", url, &r), 0);
    ocisbx_http_response *resp = NULL;
    int64_t t0 = ocisbx_time_monotonic_ms();
    assert_int_equal(ocisbx_http_send(h, r, &resp), OCISBX_ETIMEOUT);
    int64_t took = ocisbx_time_monotonic_ms() - t0;
    assert_null(resp);
    const char *m = ocisbx_error_message(ocisbx_error_last());
    if (!strstr(m, "deadline passed"))
        fail_msg("message: %s", m);
    assert_int_equal(ocisbx_error_attempts(ocisbx_error_last()), 1);
    if (took > 30000)
        fail_msg("a 1.5 s deadline took %lld ms", (long long)took);
    assert_true(bad_server_body_bytes(s) < 100);
    ocisbx_http_request_free(r);
    ocisbx_http_free(h);
    ocisbx_http_options_free(o);
    bad_server_stop(s);
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static const char *slurp(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static void response_file_replaced_only_when_complete(void **state)
{
    (void)state;
    char dir[] = "/tmp/ocisbx-it-limits-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/out", dir);
    FILE *f = fopen(path, "wb");
    fputs("good old bytes", f);
    fclose(f);
    bad_server *s = bad_server_start(BAD_CUT_BODY);
    ocisbx_http_response *resp = NULL;
    assert_int_not_equal(send_get(s, 5000, 5000, path, &resp), 0);
    ocisbx_http_response_free(resp);
    bad_server_stop(s);
    assert_string_equal(slurp(path), "good old bytes");
    assert_int_equal(entries(dir), 1); /* no partial file beside it */
    s = bad_server_start(BAD_GOOD);
    assert_int_equal(send_get(s, 5000, 5000, path, &resp), 0);
    ocisbx_http_response_free(resp);
    assert_string_equal(slurp(path), "new bytes");
    assert_int_equal(entries(dir), 1);
    if (geteuid() == 0) { /* a device stays a device */
        char dev[128];
        snprintf(dev, sizeof dev, "%s/null", dir);
        assert_int_equal(mknod(dev, S_IFCHR | 0666, makedev(1, 3)), 0);
        assert_int_equal(send_get(s, 5000, 5000, dev, &resp), 0);
        ocisbx_http_response_free(resp);
        struct stat st;
        assert_int_equal(lstat(dev, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
        unlink(dev);
    }
    bad_server_stop(s);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(endless_body_is_capped),
        cmocka_unit_test(huge_headers_name_the_limit),
        cmocka_unit_test(read_timeout_excludes_connect_timeout),
        cmocka_unit_test(response_file_replaced_only_when_complete),
        cmocka_unit_test(endless_error_body_is_cut),
        cmocka_unit_test(deadline_ends_a_dribbling_body),
    };
    return par_run_group_tests_name("it_http_limits", tests, NULL, NULL);
}
