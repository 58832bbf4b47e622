/* ocisbx doctor: every check passes against the emulator (https, its CA);
 * a wrong fingerprint, a missing key file, a config readable by others, an
 * absent profile, a closed port, an unresolvable host and a skewed server
 * clock (a scripted server's date header) each fail, or warn, on their own
 * line naming the fix; the checks that need a failed one are skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "cli_run.h"
#include "emu_fixture.h"
#include "test_http_server.h"
#include "test_keys.h"
#include "par_run.h"

static emu_fixture *emu;
static char dir[160]; /* a fresh directory under the system's temporary directory */

static const char *const clean_env[] = {"OCI_CONFIG_FILE=",
                                        "OCI_SANDBOX_PROFILE=",
                                        "OCI_SANDBOX_REGION=",
                                        "OCI_SANDBOX_ENDPOINT=",
                                        "OCI_SANDBOX_PROJECT_ID=",
                                        "https_proxy=",
                                        "HTTPS_PROXY=",
                                        "http_proxy=",
                                        "all_proxy=",
                                        "ALL_PROXY=",
                                        NULL};

/* ocisbx --config-file config --endpoint endpoint [--ca-bundle] doctor extra... */
static void doctor(cli_result *r, const char *config, const char *endpoint, const char *extra)
{
    const char *args[16];
    int n = 0;
    args[n++] = "--config-file";
    args[n++] = config;
    args[n++] = "--endpoint";
    args[n++] = endpoint;
    args[n++] = "--connection-timeout";
    args[n++] = "5";
    if (strncmp(endpoint, "https:", 6) == 0) {
        args[n++] = "--ca-bundle";
        args[n++] = emu_fixture_ca_path(emu);
    }
    args[n++] = "doctor";
    if (extra)
        args[n++] = extra;
    args[n] = NULL;
    assert_int_equal(cli_run(args, NULL, clean_env, r), 0);
    fprintf(stderr, "--- doctor (exit %d)\n%s%s", r->status, r->out, r->err);
}

/* The line of check `name` ("ok   key: ..."), copied into buf; NULL when absent. */
static const char *line_of(const char *out, const char *name, char *buf, size_t cap)
{
    char want[64];
    snprintf(want, sizeof want, " %s: ", name);
    for (const char *l = out; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        const char *hit = strstr(l, want);
        if (hit && hit < l + n && hit - l <= 4) {
            snprintf(buf, cap, "%.*s", (int)n, l);
            return buf;
        }
        l = e ? e + 1 : NULL;
    }
    return NULL;
}

static void assert_line(const char *out, const char *status, const char *name, const char *needle)
{
    char buf[4096];
    const char *l = line_of(out, name, buf, sizeof buf);
    assert_non_null(l);
    assert_int_equal(strncmp(l, status, strlen(status)), 0);
    if (needle && !strstr(l, needle)) {
        fprintf(stderr, "line %s lacks '%s'\n", l, needle);
        fail();
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

/* The fixture's config with `key = value` set in every profile (value NULL:
 * unchanged), written to dir/name with mode. */
static void write_config(const char *name, const char *key, const char *value, mode_t mode, char *path, size_t cap)
{
    char *text = slurp(emu_fixture_config_path(emu));
    char out[16384];
    size_t o = 0;
    size_t klen = key ? strlen(key) : 0;
    for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
        if (key && strncmp(l, key, klen) == 0 && (l[klen] == ' ' || l[klen] == '='))
            o += (size_t)snprintf(out + o, sizeof out - o, "%s = %s\n", key, value);
        else
            o += (size_t)snprintf(out + o, sizeof out - o, "%s\n", l);
    }
    free(text);
    snprintf(path, cap, "%s/%s", dir, name);
    assert_int_equal(test_write_text(path, out), 0);
    assert_int_equal(chmod(path, mode), 0);
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/ocisbx-it-cli-doctor-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
    if (!mkdtemp(dir))
        return -1;
    emu_fixture_options o = {0};
    o.https = true;
    if (emu_fixture_start(&o, &emu) != 0)
        return -1;
    return chmod(emu_fixture_config_path(emu), 0600);
}

static int teardown(void **state)
{
    (void)state;
    int rc = emu_fixture_stop(emu);
    emu_fixture_free(emu);
    test_rm_rf(dir);
    return rc == 0 ? 0 : -1;
}

static void test_all_pass(void **state)
{
    (void)state;
    cli_result r;
    doctor(&r, emu_fixture_config_path(emu), emu_fixture_url(emu), NULL);
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "FAIL"));
    assert_null(strstr(r.out, "skip"));
    static const char *const names[] = {"config", "profile", "key", "fingerprint", "clock",
                                        "dns",    "connect", "tls", "request",     NULL};
    const char *prev = r.out;
    for (const char *const *n = names; *n; n++) {
        assert_line(r.out, "ok", *n, NULL);
        char want[64];
        snprintf(want, sizeof want, " %s: ", *n);
        const char *at = strstr(r.out, want);
        assert_true(at >= prev); /* in the documented order */
        prev = at;
    }
    assert_line(r.out, "ok", "fingerprint", emu_fixture_fingerprint(emu));
    assert_line(r.out, "ok", "tls", "certificate");
    cli_result_free(&r);

    /* the same through the environment instead of the options */
    char cfg_env[600], ep_env[300], ca_env[600];
    snprintf(cfg_env, sizeof cfg_env, "OCI_CONFIG_FILE=%s", emu_fixture_config_path(emu));
    snprintf(ep_env, sizeof ep_env, "OCI_SANDBOX_ENDPOINT=%s", emu_fixture_url(emu));
    snprintf(ca_env, sizeof ca_env, "%s", emu_fixture_ca_path(emu));
    const char *const env[] = {cfg_env, ep_env, "OCI_SANDBOX_PROFILE=DEFAULT", NULL};
    const char *const args[] = {"--ca-bundle", ca_env, "doctor", "--project-id", EMU_FIXTURE_PROJECT, NULL};
    assert_int_equal(cli_run(args, NULL, env, &r), 0);
    fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.status, 0);
    assert_line(r.out, "ok", "config", "OCI_CONFIG_FILE");
    assert_line(r.out, "ok", "profile", "OCI_SANDBOX_PROFILE");
    assert_line(r.out, "ok", "request", "in the project");
    cli_result_free(&r);
}

static void test_wrong_fingerprint(void **state)
{
    (void)state;
    char path[512];
    const char *bad = "aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99";
    write_config("fp", "fingerprint", bad, 0600, path, sizeof path);
    cli_result r;
    doctor(&r, path, emu_fixture_url(emu), NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "ok", "key", NULL);
    assert_line(r.out, "FAIL", "fingerprint", bad);
    char want[128];
    snprintf(want, sizeof want, "set fingerprint = %s", emu_fixture_fingerprint(emu));
    assert_line(r.out, "FAIL", "fingerprint", want);
    assert_line(r.out, "FAIL", "fingerprint", path);
    assert_line(r.out, "skip", "request", NULL);
    cli_result_free(&r);
}

static void test_missing_key(void **state)
{
    (void)state;
    char path[512], key[512];
    snprintf(key, sizeof key, "%s/no-such-key.pem", dir);
    write_config("nokey", "key_file", key, 0600, path, sizeof path);
    cli_result r;
    doctor(&r, path, emu_fixture_url(emu), NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "FAIL", "key", "key_file");
    assert_line(r.out, "FAIL", "key", key);
    assert_line(r.out, "skip", "fingerprint", NULL);
    assert_line(r.out, "skip", "request", NULL);
    cli_result_free(&r);
}

static void test_key_not_a_key(void **state)
{
    (void)state;
    char path[512], key[512];
    snprintf(key, sizeof key, "%s/garbage.pem", dir);
    assert_int_equal(test_write_text(key, "not a key\n"), 0);
    assert_int_equal(chmod(key, 0600), 0);
    write_config("garbage", "key_file", key, 0600, path, sizeof path);
    cli_result r;
    doctor(&r, path, emu_fixture_url(emu), NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "FAIL", "key", key);
    cli_result_free(&r);
}

/* A profile of its own: tenancy and user of the emulator, the given
 * fingerprint, key file and pass_phrase (NULL: none). */
static void write_profile(const char *name, const char *fp, const char *key, const char *pass, mode_t mode,
                          char *path, size_t cap)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[DEFAULT]\ntenancy = %s\nuser = %s\nfingerprint = %s\nkey_file = %s\n%s%s%sregion = %s\n",
             EMU_FIXTURE_TENANCY, EMU_FIXTURE_USER, fp, key, pass ? "pass_phrase = " : "", pass ? pass : "",
             pass ? "\n" : "", EMU_FIXTURE_REGION);
    snprintf(path, cap, "%s/%s", dir, name);
    assert_int_equal(test_write_text(path, text), 0);
    assert_int_equal(chmod(path, mode), 0);
}

/* An encrypted key the emulator does not know: the passphrase opens it (or
 * not, or is missing), the fingerprint is its own, and the signed request
 * gets a real 401 from the emulator, reported as a signing/key problem. */
static void test_encrypted_key(void **state)
{
    (void)state;
    EVP_PKEY *pk = EVP_RSA_gen(2048);
    assert_non_null(pk);
    char key[300], fp[48], path[512];
    snprintf(key, sizeof key, "%s/enc.pem", dir);
    assert_int_equal(test_pem_write(pk, TEST_PEM_PKCS8_ENC, "s3cret", key), 0);
    assert_int_equal(chmod(key, 0600), 0);
    assert_int_equal(test_key_fingerprint(pk, fp), 0);
    EVP_PKEY_free(pk);

    cli_result r;
    write_profile("enc-ok", fp, key, "s3cret", 0600, path, sizeof path);
    doctor(&r, path, emu_fixture_url(emu), NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "ok", "key", "pass_phrase opens it");
    assert_line(r.out, "ok", "fingerprint", fp);
    assert_line(r.out, "FAIL", "request", "401");
    assert_line(r.out, "FAIL", "request", "refused the signature");
    cli_result_free(&r);

    write_profile("enc-wrong", fp, key, "wrong", 0600, path, sizeof path);
    doctor(&r, path, emu_fixture_url(emu), NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "FAIL", "key", "pass_phrase");
    assert_line(r.out, "skip", "fingerprint", NULL);
    cli_result_free(&r);

    write_profile("enc-none", fp, key, NULL, 0600, path, sizeof path);
    doctor(&r, path, emu_fixture_url(emu), NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "FAIL", "key", "add pass_phrase");
    cli_result_free(&r);

    /* readable by others while it holds the passphrase: a failure */
    write_profile("enc-open", fp, key, "s3cret", 0644, path, sizeof path);
    doctor(&r, path, emu_fixture_url(emu), NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "FAIL", "config", "pass_phrase");
    assert_line(r.out, "FAIL", "config", "chmod 600");
    cli_result_free(&r);
}

/* Readable by others: a warning naming chmod 600 (exit 0: nothing failed);
 * writable by others, or readable while it holds pass_phrase: a failure. */
static void test_permissions(void **state)
{
    (void)state;
    char path[512];
    write_config("open", NULL, NULL, 0644, path, sizeof path);
    cli_result r;
    doctor(&r, path, emu_fixture_url(emu), NULL);
    assert_int_equal(r.status, 0);
    char want[600];
    snprintf(want, sizeof want, "chmod 600 %s", path);
    assert_line(r.out, "warn", "config", want);
    assert_line(r.out, "warn", "config", "0644");
    assert_line(r.out, "ok", "request", NULL);
    cli_result_free(&r);

    write_config("writable", NULL, NULL, 0666, path, sizeof path);
    doctor(&r, path, emu_fixture_url(emu), NULL);
    assert_int_equal(r.status, 1);
    snprintf(want, sizeof want, "chmod 600 %s", path);
    assert_line(r.out, "FAIL", "config", want);
    cli_result_free(&r);
}

static void test_missing_profile(void **state)
{
    (void)state;
    const char *const args[] = {"--config-file", emu_fixture_config_path(emu),
                                "--endpoint",    emu_fixture_url(emu),
                                "--profile",     "NOPE",
                                "doctor",        NULL};
    cli_result r;
    assert_int_equal(cli_run(args, NULL, clean_env, &r), 0);
    fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "ok", "config", NULL);
    assert_line(r.out, "FAIL", "profile", "[NOPE]");
    assert_line(r.out, "FAIL", "profile", "DEFAULT"); /* the ones there */
    assert_line(r.out, "skip", "key", NULL);
    cli_result_free(&r);

    char missing[512];
    snprintf(missing, sizeof missing, "%s/absent-config", dir);
    doctor(&r, missing, emu_fixture_url(emu), NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "FAIL", "config", missing);
    assert_line(r.out, "skip", "profile", NULL);
    cli_result_free(&r);
}

/* A port nothing listens on: connect fails, DNS does not; and a name that
 * cannot resolve (.invalid, RFC 6761): DNS fails. */
static void test_unreachable(void **state)
{
    (void)state;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    close(s); /* bound then closed: nobody listens there */
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%d", ntohs(a.sin_port));
    cli_result r;
    doctor(&r, emu_fixture_config_path(emu), url, NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "ok", "key", NULL);
    assert_line(r.out, "ok", "dns", NULL);
    assert_line(r.out, "FAIL", "connect", url);
    assert_line(r.out, "skip", "tls", NULL);
    assert_line(r.out, "skip", "clock", NULL);
    assert_line(r.out, "skip", "request", NULL);
    cli_result_free(&r);

    doctor(&r, emu_fixture_config_path(emu), "https://no-such-host.invalid", NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "FAIL", "dns", "no-such-host.invalid");
    assert_line(r.out, "skip", "connect", NULL);
    cli_result_free(&r);

    /* through a proxy (one that is not there): DNS is the proxy's business */
    char proxy[80];
    snprintf(proxy, sizeof proxy, "https_proxy=http://127.0.0.1:%d", ntohs(a.sin_port));
    const char *const penv[] = {proxy, "no_proxy=", "NO_PROXY=", NULL};
    const char *const pargs[] = {
        "--config-file", emu_fixture_config_path(emu), "--endpoint", "https://no-such-host.invalid", "doctor", NULL};
    assert_int_equal(cli_run(pargs, NULL, penv, &r), 0);
    fprintf(stderr, "%s", r.out);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "skip", "dns", "https_proxy");
    assert_line(r.out, "FAIL", "connect", "proxy");
    cli_result_free(&r);

    /* plain http to a host that is not loopback: refused before sending */
    doctor(&r, emu_fixture_config_path(emu), "http://192.0.2.1", NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "FAIL", "tls", "https://");
    cli_result_free(&r);
}

/* A scripted server whose date header is an hour off: the clock fails and
 * the signed request is skipped; a date 2 minutes off passes. */
static void test_clock_skew(void **state)
{
    (void)state;
    ths *srv = NULL;
    assert_int_equal(ths_start(&srv), 0);
    char *url = ths_url(srv, "");
    size_t n = strlen(url);
    while (n && url[n - 1] == '/')
        url[--n] = '\0';
    char headers[128], date[64];
    time_t t = time(NULL) - 3600;
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime(&t));
    snprintf(headers, sizeof headers, "date: %s", date);
    ths_set_default(srv, 200, headers, "{\"items\":[]}");
    cli_result r;
    doctor(&r, emu_fixture_config_path(emu), url, NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "FAIL", "clock", "ahead of");
    assert_line(r.out, "FAIL", "clock", "5 minutes");
    assert_line(r.out, "ok", "connect", NULL);
    assert_line(r.out, "skip", "request", "clock");
    cli_result_free(&r);

    t = time(NULL) + 120;
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime(&t));
    snprintf(headers, sizeof headers, "date: %s", date);
    ths_set_default(srv, 200, headers, "{\"items\":[]}");
    doctor(&r, emu_fixture_config_path(emu), url, NULL);
    assert_int_equal(r.status, 0);
    assert_line(r.out, "ok", "clock", "within");
    assert_line(r.out, "ok", "request", NULL);
    cli_result_free(&r);

    /* a 401 on the signed request: signing or key trouble, said so */
    ths_set_default(srv, 401, NULL, "{\"code\":\"NotAuthenticated\",\"message\":\"bad signature\"}");
    doctor(&r, emu_fixture_config_path(emu), url, NULL);
    assert_int_equal(r.status, 1);
    assert_line(r.out, "FAIL", "request", "401");
    assert_line(r.out, "FAIL", "request", "fingerprint");
    cli_result_free(&r);
    free(url);
    ths_stop(srv);
}

static void test_help(void **state)
{
    (void)state;
    cli_result r;
    CLI_RUN(&r, "doctor", "--help");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: ocisbx"));
    assert_non_null(strstr(r.out, "fingerprint"));
    cli_result_free(&r);
    CLI_RUN(&r, "doctor", "--bogus");
    assert_int_equal(r.status, 2);
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_pass),    cmocka_unit_test(test_wrong_fingerprint),
        cmocka_unit_test(test_missing_key), cmocka_unit_test(test_key_not_a_key),
        cmocka_unit_test(test_permissions), cmocka_unit_test(test_missing_profile),
        cmocka_unit_test(test_unreachable), cmocka_unit_test(test_clock_skew),
        cmocka_unit_test(test_help),        cmocka_unit_test(test_encrypted_key),
    };
    return par_run_group_tests_name("it_cli_doctor", tests, setup, teardown);
}
