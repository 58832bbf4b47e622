/* ocisbx-emulator as a process: restart recovery, no process outlives it,
 * its command line and its tenancy file checks. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "emu_fixture.h"
#include "ocisbx/util.h"
#include "par_run.h"

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_restart_and_no_stray_process(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    char id[64], p[512], done_cmd[64], live_cmd[64];
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"displayName\":\"survivor\"", id, sizeof id), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    assert_int_equal(
        emu_fixture_json(f, "POST", p, "{\"command\":\"echo kept > /workspace/kept.txt; echo done\"}", 200, &j), 0);
    snprintf(done_cmd, sizeof done_cmd, "%s", jstr(j, "id"));
    cJSON_Delete(j);
    /* a process tree that would outlive a careless server */
    char marker[64], unique[32];
    ocisbx_random_id(unique, 12);
    snprintf(marker, sizeof marker, "stray-%s", unique);
    char body[512];
    snprintf(body, sizeof body,
             "{\"command\":\"(sleep 3137; echo %s) & (sh -c 'sleep 3138; echo %s') & sleep 3139; echo %s\"}", marker,
             marker, marker);
    snprintf(p, sizeof p, "/sandboxes/%s/commands", id);
    assert_int_equal(emu_fixture_json(f, "POST", p, body, 200, &j), 0);
    snprintf(live_cmd, sizeof live_cmd, "%s", jstr(j, "id"));
    cJSON_Delete(j);
    bool seen = false;
    for (int i = 0; i < 200 && !seen; i++) {
        seen = emu_fixture_process_exists(marker);
        if (!seen)
            sleep_ms(50);
    }
    assert_true(seen); /* the check can see the processes while they live */
    assert_true(emu_fixture_process_exists("sleep 3139"));

    /* SIGTERM: exit 0, every sandbox process gone */
    assert_int_equal(emu_fixture_stop(f), 0);
    assert_false(emu_fixture_process_exists(marker));
    assert_false(emu_fixture_process_exists("sleep 3137"));
    assert_false(emu_fixture_process_exists("sleep 3138"));
    assert_false(emu_fixture_process_exists("sleep 3139"));

    /* restart on the same state: records and files are back */
    assert_int_equal(emu_fixture_restart(f), 0);
    snprintf(p, sizeof p, "/sandboxes/%s", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_string_equal(jstr(j, "displayName"), "survivor");
    assert_string_equal(jstr(j, "lifecycleState"), "RUNNING");
    cJSON_Delete(j);
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/kept.txt", id);
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "kept\n");
    emu_fixture_result_free(&r);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/%s/output", id, done_cmd);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_string_equal(jstr(j, "stdout"), "done\n");
    cJSON_Delete(j);
    /* the command that was running comes back finished without an exit
     * code (timeFinished, no exitCode: no lifecycleState), with a FINISHED event */
    snprintf(p, sizeof p, "/sandboxes/%s/commands/%s", id, live_cmd);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_null(cJSON_GetObjectItem(j, "lifecycleState"));
    assert_non_null(jstr(j, "timeFinished"));
    assert_null(cJSON_GetObjectItem(j, "exitCode"));
    cJSON_Delete(j);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/%s/events", id, live_cmd);
    assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r), 0);
    assert_non_null(strstr(r.body, "FINISHED"));
    emu_fixture_result_free(&r);
    /* it still works */
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"command\":\"cat /workspace/kept.txt\"}", 200, &j), 0);
    assert_string_equal(jstr(cJSON_GetObjectItem(j, "output"), "stdout"), "kept\n");
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

/* Runs the emulator with args; returns its exit status and its stderr. */
static int run_emulator(const char *args, char *err, size_t cap)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1 >/dev/null", OCISBX_EMULATOR_PATH, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(err, 1, cap - 1, p);
    err[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_command_line(void **state)
{
    (void)state;
    char err[4096];
    assert_int_equal(run_emulator("--bogus", err, sizeof err), 2);
    assert_non_null(strstr(err, "--bogus"));
    assert_non_null(strchr(err, '\n'));
    assert_null(strchr(strchr(err, '\n') + 1, '\n')); /* one line */
    assert_int_equal(run_emulator("--config /nonexistent.yaml", err, sizeof err), 2);
    assert_non_null(strstr(err, "--state-dir"));
    assert_int_equal(run_emulator("--config x --state-dir /tmp --listen 0.0.0.0:0", err, sizeof err), 2);
    assert_non_null(strstr(err, "non-loopback"));
    assert_int_equal(run_emulator("--config x --state-dir /tmp --listen 10.1.2.3:80", err, sizeof err), 2);
    assert_int_equal(run_emulator("--config x --state-dir /tmp --tls-cert a", err, sizeof err), 2);
    assert_int_equal(run_emulator("--config x --state-dir /tmp --listen", err, sizeof err), 2);
    /* without bubblewrap it refuses to run commands unisolated */
    char dir[] = "/tmp/ocisbx-emu-nobwrap-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "printf 'region: r\\ntenancy: ocid1.tenancy.oc1..t\\n' > %s/t.yaml && env PATH=/nonexistent %s --config "
             "%s/t.yaml "
             "--state-dir %s/s 2>&1 >/dev/null",
             dir, OCISBX_EMULATOR_PATH, dir, dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(err, 1, sizeof err - 1, p);
    err[n] = 0;
    int st = pclose(p);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    assert_non_null(strstr(err, "bubblewrap"));
    assert_non_null(strstr(err, "--no-isolation"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void expect_yaml_error(const char *yaml, const char *want)
{
    char dir[] = "/tmp/ocisbx-emu-yaml-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], args[1024], err[4096];
    snprintf(path, sizeof path, "%s/tenancy.yaml", dir);
    FILE *fp = fopen(path, "w");
    fputs(yaml, fp);
    fclose(fp);
    snprintf(args, sizeof args, "--config %s --state-dir %s/state --no-isolation", path, dir);
    int st = run_emulator(args, err, sizeof err);
    if (st != 1 || !strstr(err, want))
        fprintf(stderr, "yaml error: status %d, stderr: %s (wanted %s)\n", st, err, want);
    assert_int_equal(st, 1);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, want));
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

static void test_tenancy_file_errors(void **state)
{
    (void)state;
    const char *head = "region: us-chicago-1\ntenancy: ocid1.tenancy.oc1..x\n";
    char y[1024];
    snprintf(y, sizeof y, "%sbogus: 1\n", head);
    expect_yaml_error(y, ":3: bogus: unknown key");
    snprintf(y, sizeof y, "%slimits:\n  max_body_bytes: lots\n", head);
    expect_yaml_error(y, ":4: max_body_bytes:");
    snprintf(y, sizeof y, "%sprojects:\n  - id: ocid1.generativeaiproject.oc1..p1\n    network: maybe\n", head);
    expect_yaml_error(y, ":5: network: expected deny or allow");
    snprintf(y, sizeof y,
             "%susers:\n  - id: ocid1.user.oc1..u\n    fingerprint: \"zz\"\n    public_key_file: k.pem\n", head);
    expect_yaml_error(y, ":5: fingerprint:");
    snprintf(
        y, sizeof y,
        "%susers:\n  - id: ocid1.user.oc1..u\n    fingerprint: \"73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7\"\n"
        "    public_key_file: missing.pem\n",
        head);
    expect_yaml_error(y, ":6: public_key_file: cannot load public key");
    snprintf(y, sizeof y, "%sfaults:\n  rules:\n    - match: {method: GET}\n      respond: 200\n", head);
    expect_yaml_error(y, ":6: respond:");
    snprintf(y, sizeof y, "%sfaults:\n  rules:\n    - match: {method: GET, path: x}\n      respond: 503\n", head);
    expect_yaml_error(y, ":5: path:");
    snprintf(y, sizeof y, "%ssession_tokens:\n  - token: t\n    public_key_file: k.pem\n    expires: tomorrow\n",
             head);
    expect_yaml_error(y, ":6: expires:");
    expect_yaml_error("region: [unclosed\n", "YAML syntax error");
    expect_yaml_error("region: r\n", "tenancy: missing");
    /* ids must be OCIDs of their type */
    expect_yaml_error("region: r\ntenancy: banana\n", ":2: tenancy: expected an OCID of type tenancy");
    expect_yaml_error("region: r\ntenancy: ocid1.user.oc1..x\n", ":2: tenancy: expected an OCID");
    snprintf(y, sizeof y, "%susers:\n  - id: bob\n", head);
    expect_yaml_error(y, ":4: id: expected an OCID of type user");
    snprintf(y, sizeof y, "%sprojects:\n  - id: ocid1.tenancy.oc1..p\n", head);
    expect_yaml_error(y, ":4: id: expected an OCID of type generativeaiproject");
    /* a fingerprint that is not the key's is reported on its own line */
    char keydir[] = "/tmp/ocisbx-emu-fpkey-XXXXXX";
    assert_non_null(mkdtemp(keydir));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 2>/dev/null | "
             "openssl pkey -pubout -out %s/k.pub.pem 2>/dev/null",
             keydir);
    assert_int_equal(system(cmd), 0);
    snprintf(
        y, sizeof y,
        "%susers:\n  - id: ocid1.user.oc1..u\n    fingerprint: \"73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7\"\n"
        "    public_key_file: %s/k.pub.pem\n",
        head, keydir);
    expect_yaml_error(y, ":5: fingerprint: 73:61:a2:21:67:e0:df:be:7e:4b:93:1e:15:98:a5:b7 does not match");
    snprintf(cmd, sizeof cmd, "rm -rf %s", keydir);
    assert_int_equal(system(cmd), 0);
}

static int g_open_modes;

/* Counts state files and directories others could read. */
static int check_mode(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)flag;
    /* workspaces hold what commands made, with their modes; the private state
     * directory above them is what protects them */
    if (strstr(path, "/workspaces/") || strstr(path, "/snapshots/"))
        return 0;
    if ((st->st_mode & 077) != 0 && (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode))) {
        fprintf(stderr, "%s has mode %03o\n", path, (unsigned)(st->st_mode & 0777));
        g_open_modes++;
    }
    (void)ftw;
    return 0;
}

/* One emulator per state directory; the state is private (it holds
 * environment values); a TLS key that is not the certificate's is named. */
static void test_state_dir_and_tls_checks(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.no_isolation = true;
    o.extra_yaml = "limits:\n  create_delay_ms: 0\n";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    char id[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL,
                                             "\"environmentVariables\":[{\"name\":\"K\",\"value\":\"secret-value\"}]",
                                             id, sizeof id),
                     0);
    char args[2048], err[4096];
    snprintf(args, sizeof args, "--config %s/tenancy.yaml --state-dir %s --no-isolation", emu_fixture_dir(f),
             emu_fixture_state_dir(f));
    assert_int_equal(run_emulator(args, err, sizeof err), 1);
    if (!strstr(err, "in use by another ocisbx-emulator"))
        fprintf(stderr, "second emulator said: %s\n", err);
    assert_non_null(strstr(err, "in use by another ocisbx-emulator"));
    assert_null(strchr(strchr(err, '\n') + 1, '\n')); /* one line */
    /* the first one is unharmed, and its state is private */
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxes", NULL, 200, NULL), 0);
    assert_int_equal(emu_fixture_stop(f), 0);
    struct stat st;
    assert_int_equal(stat(emu_fixture_state_dir(f), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    g_open_modes = 0;
    assert_int_equal(nftw(emu_fixture_state_dir(f), check_mode, 16, FTW_PHYS), 0);
    assert_int_equal(g_open_modes, 0);
    /* after a stop the directory is free again */
    assert_int_equal(emu_fixture_restart(f), 0);
    assert_int_equal(emu_fixture_stop(f), 0);

    /* TLS: a key of another pair */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && openssl req -x509 -newkey rsa:2048 -nodes -keyout a.key -out a.pem -subj /CN=x -days 1 "
             ">/dev/null 2>&1 && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out b.key "
             ">/dev/null 2>&1 && echo junk > junk.pem",
             emu_fixture_dir(f));
    assert_int_equal(system(cmd), 0);
    const char *dir = emu_fixture_dir(f);
    snprintf(args, sizeof args, "--config %s/tenancy.yaml --state-dir %s --tls-cert %s/a.pem --tls-key %s/b.key", dir,
             emu_fixture_state_dir(f), dir, dir);
    assert_int_equal(run_emulator(args, err, sizeof err), 1);
    if (!strstr(err, "does not match"))
        fprintf(stderr, "mismatched TLS key: %s\n", err);
    assert_non_null(strstr(err, "b.key"));
    assert_non_null(strstr(err, "does not match the certificate"));
    snprintf(args, sizeof args, "--config %s/tenancy.yaml --state-dir %s --tls-cert %s/junk.pem --tls-key %s/b.key",
             dir, emu_fixture_state_dir(f), dir, dir);
    assert_int_equal(run_emulator(args, err, sizeof err), 1);
    assert_non_null(strstr(err, "junk.pem: not a PEM certificate"));
    emu_fixture_free(f);
}

static void test_api_version(void **state)
{
    (void)state;
    emu_fixture_options o = {0};
    o.api_version = "20990101";
    emu_fixture *f = NULL;
    assert_int_equal(emu_fixture_start(&o, &f), 0);
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxes", NULL, 200, NULL), 0);
    /* the default prefix is not served */
    emu_fixture_result r;
    const char *none[] = {NULL};
    /* curl removes the dot segments: this asks for /20231130/sandboxes */
    assert_int_equal(emu_fixture_send(f, "GET", "/../20231130/sandboxes", NULL, 0, none, &r), 0);
    assert_int_equal(r.status, 404);
    assert_non_null(strstr(r.body, "/20990101/"));
    emu_fixture_result_free(&r);
    assert_int_equal(emu_fixture_stop(f), 0);
    emu_fixture_free(f);
}

int main(void)
{
    ocisbx_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restart_and_no_stray_process), cmocka_unit_test(test_command_line),
        cmocka_unit_test(test_tenancy_file_errors),          cmocka_unit_test(test_api_version),
        cmocka_unit_test(test_state_dir_and_tls_checks),
    };
    int fails = par_run_group_tests_name("emulator process", tests, NULL, NULL);
    ocisbx_global_cleanup();
    return fails ? 1 : 0;
}
