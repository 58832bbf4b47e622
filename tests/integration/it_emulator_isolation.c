/* The emulator's isolation, driven through its HTTP API: a command cannot
 * write /tmp, /etc, /usr or the sandbox root, cannot escape /workspace by a
 * symlink, cannot reach the network in a `network: deny` project (and can in
 * an `allow` one), sees its own PID namespace; the files API refuses paths
 * and symlinks that lead out of /workspace; cancel, stop, delete and the
 * emulator's shutdown leave no process of a command behind.
 * Exit 77 (skipped) only when bubblewrap is missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "emu_fixture.h"
#include "ocisbx/util.h"
#include "par_run.h"

#define GUARD_MS 60000

static const char *EXTRA = "limits:\n"
                           "  create_delay_ms: 50\n"
                           "  stop_delay_ms: 20\n";

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

static int setup(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = EXTRA;
    o.force_isolation = true;
    emu_fixture *f = NULL;
    if (emu_fixture_start(&o, &f) != 0)
        return -1;
    if (!emu_fixture_isolated(f)) {
        fprintf(stderr, "the emulator did not start isolated\n");
        emu_fixture_free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    return emu_fixture_teardown_state(state);
}

/* runAndWait; returns the command's stdout (malloc'd) and its exit code. */
static char *run_wait(emu_fixture *f, const char *sid, const char *command, int *exit_code)
{
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "command", command);
    char *json = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    char p[256];
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", sid);
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "POST", p, json, 200, &j), 0);
    free(json);
    const cJSON *ec = cJSON_GetObjectItemCaseSensitive(j, "exitCode");
    *exit_code = cJSON_IsNumber(ec) ? ec->valueint : -999;
    const char *out = jstr(cJSON_GetObjectItemCaseSensitive(j, "output"), "stdout");
    char *copy = strdup(out ? out : "");
    cJSON_Delete(j);
    return copy;
}

/* run (returns at once); the command id goes to cid. */
static void run_async(emu_fixture *f, const char *sid, const char *command, char *cid, size_t cap)
{
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "command", command);
    char *json = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    char p[256];
    snprintf(p, sizeof p, "/sandboxes/%s/commands", sid);
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "POST", p, json, 200, &j), 0);
    free(json);
    assert_non_null(jstr(j, "id"));
    snprintf(cid, cap, "%s", jstr(j, "id"));
    cJSON_Delete(j);
}

static int put_file(emu_fixture *f, const char *sid, const char *enc_path, const char *data, long *status)
{
    char p[1024], sha[64], hdr[128];
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=%s", sid, enc_path);
    ocisbx_sha256_base64(data, strlen(data), sha);
    snprintf(hdr, sizeof hdr, "opc-content-sha256: %s", sha);
    const char *extra[] = {hdr, NULL};
    emu_fixture_req req = {0};
    req.method = "PUT";
    req.path = p;
    req.body = data;
    req.body_len = strlen(data);
    req.content_type = "application/octet-stream";
    req.extra_headers = extra;
    emu_fixture_result r;
    int rc = emu_fixture_do(f, &req, &r);
    *status = r.status;
    emu_fixture_result_free(&r);
    return rc;
}

static long get_file_status(emu_fixture *f, const char *sid, const char *enc_path)
{
    char p[1024];
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=%s", sid, enc_path);
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r), 0);
    long st = r.status;
    emu_fixture_result_free(&r);
    return st;
}

static bool wait_process(const char *marker, bool present)
{
    for (int i = 0; i < GUARD_MS / 20; i++) {
        if (emu_fixture_process_exists(marker) == present)
            return true;
        sleep_ms(20);
    }
    return false;
}

static int g_marks;

/* A number nothing else runs with: "sleep <mark>" finds our processes. */
static void new_mark(char *buf, size_t len)
{
    snprintf(buf, len, "1000.%d%04d", (int)getpid(), ++g_marks);
}

/* ---- tests ------------------------------------------------------------------- */

static void t_filesystem(void **state)
{
    emu_fixture *f = *state;
    char id[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    char probe[64], cmd[4096];
    snprintf(probe, sizeof probe, "it_emu_iso_%d", (int)getpid());
    snprintf(cmd, sizeof cmd,
             "export P=%s\n"
             "try() { if sh -c \"$2\" 2>/dev/null; then echo \"$1 WRITABLE\"; else echo \"$1 refused\"; fi; }\n"
             "try tmp 'echo x > /tmp/$P'\n"
             "try etc 'echo x > /etc/$P'\n"
             "try usr 'echo x > /usr/$P'\n"
             "try root 'echo x > /$P'\n"
             "try remount 'mount -o remount,rw /etc'\n"
             "ln -s /etc /workspace/etclink; try symlink 'echo x > /workspace/etclink/$P'\n"
             "ln -s .. /workspace/up; try up 'echo x > /workspace/up/$P'\n"
             "try workspace 'echo x > /workspace/$P'\n"
             "echo pid $$\n",
             probe);
    int ec = -1;
    char *out = run_wait(f, id, cmd, &ec);
    assert_int_equal(ec, 0);
    char expect[512];
    snprintf(expect, sizeof expect,
             "tmp refused\netc refused\nusr refused\nroot refused\nremount refused\n"
             "symlink refused\nup refused\nworkspace WRITABLE\npid %s\n",
             "2");
    /* the command is in its own PID namespace: its shell is pid 2 (bwrap is 1) */
    assert_string_equal(out, expect);
    free(out);
    char path[256];
    const char *dirs[] = {"/tmp", "/etc", "/usr", ""};
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dirs[i], probe);
        assert_int_equal(access(path, F_OK), -1);
    }
    /* the workspace write is there, through the files API */
    snprintf(path, sizeof path, "/workspace/%s", probe);
    assert_int_equal(get_file_status(f, id, path), 200);
}

static void t_network(void **state)
{
    emu_fixture *f = *state;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s >= 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s, 16), 0);
    socklen_t l = sizeof a;
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &l), 0);
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "if bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d' 2>/dev/null; then echo connected; else echo unreachable; fi",
             ntohs(a.sin_port));
    /* the emulator's own port is not reachable either */
    const char *url = emu_fixture_url(f);
    const char *colon = strrchr(url, ':');
    assert_non_null(colon);
    char cmd2[512];
    snprintf(cmd2, sizeof cmd2,
             "if bash -c 'exec 3<>/dev/tcp/127.0.0.1/%s' 2>/dev/null; then echo connected; else echo unreachable; fi",
             colon + 1);

    char deny[64], allow[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, deny, sizeof deny), 0);
    assert_int_equal(emu_fixture_new_sandbox(f, EMU_FIXTURE_PROJECT_NET, NULL, allow, sizeof allow), 0);
    int ec;
    char *out = run_wait(f, deny, cmd, &ec);
    assert_string_equal(out, "unreachable\n");
    free(out);
    out = run_wait(f, deny, cmd2, &ec);
    assert_string_equal(out, "unreachable\n");
    free(out);
    /* the same check passes in a project that allows the network */
    out = run_wait(f, allow, cmd, &ec);
    assert_string_equal(out, "connected\n");
    free(out);
    close(s);
}

static void t_files_api_escapes(void **state)
{
    emu_fixture *f = *state;
    char id[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    char probe[64];
    snprintf(probe, sizeof probe, "it_emu_iso_api_%d", (int)getpid());
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "ln -s /etc /workspace/etclink && ln -s .. /workspace/up && ln -s /tmp /workspace/tmplink && "
             "ln -s /etc/%s /workspace/dangling && ln -s /etc/hostname /workspace/hn && "
             "mkdir /workspace/d && ln -s ../../etc /workspace/d/deep",
             probe);
    int ec;
    free(run_wait(f, id, cmd, &ec));
    assert_int_equal(ec, 0);

    char path[512];
    /* each followed by the probe name */
    const char *writes[] = {"/workspace/../etc/",
                            "/workspace/etclink/",
                            "/workspace/up/",
                            "/workspace/tmplink/",
                            "/workspace/d/deep/",
                            "/workspace/etclink/sub/",
                            "/workspace/%2e%2e/etc/",
                            "/etc/",
                            "/tmp/"};
    for (size_t i = 0; i < sizeof writes / sizeof *writes; i++) {
        snprintf(path, sizeof path, "%s%s", writes[i], probe);
        long st = 0;
        assert_int_equal(put_file(f, id, path, "escaped", &st), 0);
        if (st != 400)
            fprintf(stderr, "PUT %s: %ld\n", path, st);
        assert_int_equal(st, 400);
    }
    /* a symlink as the last component (dangling, pointing out): refused, or
     * replaced by the new file, never followed */
    long dst = 0;
    assert_int_equal(put_file(f, id, "/workspace/dangling", "replaced", &dst), 0);
    assert_true(dst == 400 || dst == 200);
    if (dst == 200) {
        int ec2;
        char *o = run_wait(f, id, "test -L /workspace/dangling && echo link || cat /workspace/dangling", &ec2);
        assert_string_equal(o, "replaced");
        free(o);
    }
    const char *reads[] = {"/workspace/hn", "/workspace/etclink/hostname", "/workspace/../etc/hostname",
                           "/etc/hostname"};
    for (size_t i = 0; i < sizeof reads / sizeof *reads; i++) {
        long st = get_file_status(f, id, reads[i]);
        if (st != 400)
            fprintf(stderr, "GET %s answered %ld, want 400\n", reads[i], st);
        assert_int_equal(st, 400);
    }
    /* nothing reached the host */
    const char *dirs[] = {"/etc", "/tmp", "/etc/sub"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dirs[i], probe);
        assert_int_equal(access(path, F_OK), -1);
    }
    snprintf(path, sizeof path, "%s/%s", emu_fixture_state_dir(f), probe);
    assert_int_equal(access(path, F_OK), -1);
    /* an honest path still works */
    long st = 0;
    assert_int_equal(put_file(f, id, "/workspace/d/ok.txt", "fine", &st), 0);
    assert_int_equal(st, 200);
}

/* Reading through a symlink that leads out is refused whatever lies behind
 * it: a 404 for a missing target next to a 400 for an existing one would let
 * a client probe which files exist outside the workspace. */
static void t_files_api_no_existence_probe(void **state)
{
    emu_fixture *f = *state;
    char id[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    int ec;
    free(run_wait(f, id,
                  "ln -s .. /workspace/up && ln -s /etc /workspace/etclink && mkdir /workspace/d && "
                  "ln -s ../../etc /workspace/d/deep",
                  &ec));
    assert_int_equal(ec, 0);
    const char *reads[] = {"/workspace/up/etc/hostname", "/workspace/up/no-such-file", "/workspace/etclink/hostname",
                           "/workspace/etclink/no-such-file", "/workspace/d/deep/hostname"};
    for (size_t i = 0; i < sizeof reads / sizeof *reads; i++) {
        long st = get_file_status(f, id, reads[i]);
        if (st != 400)
            fprintf(stderr,
                    "GET %s answered %ld, want 400: a path through a symlink that leads out of "
                    "/workspace must be refused whether or not its target exists\n",
                    reads[i], st);
        assert_int_equal(st, 400);
    }
}

/* Symlinks whose target stays inside /workspace, absolute or through the
 * root, work as they do for a command in the sandbox; repeated and trailing
 * slashes are normalised and the normalised path is echoed. */
static void t_files_api_inside_links(void **state)
{
    emu_fixture *f = *state;
    char id[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    int ec;
    free(run_wait(f, id,
                  "mkdir /workspace/a && printf hi > /workspace/a/f.txt && "
                  "ln -s /workspace/a /workspace/abs && ln -s /workspace/a/f.txt /workspace/absf && "
                  "ln -s ../workspace/a /workspace/viaroot && ln -s /workspace/../workspace/a /workspace/dd",
                  &ec));
    assert_int_equal(ec, 0);
    const char *reads[] = {"/workspace/abs/f.txt", "/workspace/absf", "/workspace/viaroot/f.txt",
                           "/workspace/dd/f.txt", "/workspace//abs///f.txt"};
    for (size_t i = 0; i < sizeof reads / sizeof *reads; i++) {
        char p[512];
        snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=%s", id, reads[i]);
        emu_fixture_result r;
        assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r), 0);
        if (r.status != 200)
            fprintf(stderr, "GET %s answered %ld: %s\n", reads[i], r.status, r.body);
        assert_int_equal(r.status, 200);
        assert_string_equal(r.body, "hi");
        emu_fixture_result_free(&r);
    }
    long st = 0;
    assert_int_equal(put_file(f, id, "/workspace/abs/g.txt", "via-abs", &st), 0);
    assert_int_equal(st, 200);
    char *o = run_wait(f, id, "cat /workspace/a/g.txt", &ec);
    assert_string_equal(o, "via-abs");
    free(o);
    /* the normalised path is echoed */
    char p[512], sha[64], hdr[128];
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace//a///h.txt/", id);
    ocisbx_sha256_base64("x", 1, sha);
    snprintf(hdr, sizeof hdr, "opc-content-sha256: %s", sha);
    const char *extra[] = {hdr, NULL};
    emu_fixture_req req = {0};
    req.method = "PUT";
    req.path = p;
    req.body = "x";
    req.body_len = 1;
    req.content_type = "application/octet-stream";
    req.extra_headers = extra;
    emu_fixture_result r;
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    assert_int_equal(r.status, 200);
    cJSON *j = cJSON_Parse(r.body);
    assert_non_null(j);
    assert_string_equal(jstr(j, "filePath"), "/workspace/a/h.txt");
    cJSON_Delete(j);
    emu_fixture_result_free(&r);
    /* a link to the root itself, or out by an absolute path: still refused */
    free(run_wait(f, id, "ln -s / /workspace/root && ln -s /workspace/../etc /workspace/wetc", &ec));
    assert_int_equal(ec, 0);
    assert_int_equal(get_file_status(f, id, "/workspace/root/etc/hostname"), 400);
    assert_int_equal(get_file_status(f, id, "/workspace/root/workspace/a/f.txt"), 200);
    assert_int_equal(get_file_status(f, id, "/workspace/wetc/hostname"), 400);
    assert_int_equal(get_file_status(f, id, "/workspace/wetc/no-such"), 400);
}

static void t_process_trees_die(void **state)
{
    emu_fixture *f = *state;
    char id[64], cid[64], mark[64], cmd[256], p[512];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);

    /* cancel */
    new_mark(mark, sizeof mark);
    snprintf(cmd, sizeof cmd, "M=%s; sleep $M & (setsid sleep $M &); sleep $M", mark);
    run_async(f, id, cmd, cid, sizeof cid);
    assert_true(wait_process(mark, true));
    snprintf(p, sizeof p, "/sandboxes/%s/commands/%s/actions/cancel", id, cid);
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "POST", p, "{}", &r), 0);
    assert_true(r.status == 200 || r.status == 202);
    emu_fixture_result_free(&r);
    assert_true(wait_process(mark, false));

    /* stop */
    new_mark(mark, sizeof mark);
    snprintf(cmd, sizeof cmd, "M=%s; trap '' TERM; sleep $M & sleep $M", mark);
    run_async(f, id, cmd, cid, sizeof cid);
    assert_true(wait_process(mark, true));
    snprintf(p, sizeof p, "/sandboxes/%s/actions/stop", id);
    assert_int_equal(emu_fixture_request(f, "POST", p, "{\"isForce\":true}", &r), 0);
    assert_true(r.status == 200 || r.status == 202);
    emu_fixture_result_free(&r);
    assert_true(wait_process(mark, false));
    assert_int_equal(emu_fixture_wait_state(f, id, "STOPPED"), 0);

    /* delete of a running sandbox */
    char id2[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id2, sizeof id2), 0);
    new_mark(mark, sizeof mark);
    snprintf(cmd, sizeof cmd, "M=%s; sleep $M & sleep $M", mark);
    run_async(f, id2, cmd, cid, sizeof cid);
    assert_true(wait_process(mark, true));
    snprintf(p, sizeof p, "/sandboxes/%s", id2);
    assert_int_equal(emu_fixture_request(f, "DELETE", p, NULL, &r), 0);
    assert_true(r.status >= 200 && r.status < 300);
    emu_fixture_result_free(&r);
    assert_true(wait_process(mark, false));
}

/* Runs last: stops the emulator with commands running. */
static void t_shutdown_leaves_nothing(void **state)
{
    emu_fixture *f = *state;
    char id[64], cid[64], mark[64], cmd[256];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    new_mark(mark, sizeof mark);
    snprintf(cmd, sizeof cmd, "M=%s; trap '' TERM; sleep $M & (setsid sleep $M &); sleep $M", mark);
    run_async(f, id, cmd, cid, sizeof cid);
    run_async(f, id, cmd, cid, sizeof cid);
    assert_true(wait_process(mark, true));
    assert_int_equal(emu_fixture_stop(f), 0);
    assert_true(wait_process(mark, false));
    assert_int_equal(emu_fixture_restart(f), 0); /* teardown stops it again */
}

/* Run as root (as the quick start and CI do), a command never has host
 * root's powers: the emulator gives its workspaces to the unprivileged
 * sandbox uid and the runner drops to it. kernel.printk_ratelimit's own value
 * written back is refused (no host setting is ever changed), /etc/shadow is
 * unreadable, no capability, a chmod 4755 file is not setuid-root on the
 * host, /proc/1/cmdline does not show the host workspace path, and what the
 * files API writes (parents included) belongs to the sandbox's own user, who
 * can change it. Skipped unless root. */
static void t_root_safety(void **state)
{
    emu_fixture *f = *state;
    if (geteuid() != 0) {
        skip();
        return;
    }
    char id[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    long st = 0;
    assert_int_equal(put_file(f, id, "/workspace/d1/d2/put.txt", "api", &st), 0);
    assert_int_equal(st, 200);
    int ec = -1;
    char *out = run_wait(
        f, id,
        "v=$(cat /proc/sys/kernel/printk_ratelimit)\n"
        "if (printf '%s\\n' \"$v\" > /proc/sys/kernel/printk_ratelimit) 2>/dev/null;"
        " then echo sysctl WRITABLE; else echo sysctl refused; fi\n"
        "if (cat /etc/shadow > /dev/null) 2>/dev/null; then echo shadow READABLE; else echo shadow refused; fi\n"
        "grep '^CapEff:' /proc/self/status | tr -d ' \\t'\n"
        "printf x > /workspace/suid && chmod 4755 /workspace/suid && echo made\n"
        "printf -- '-more' >> /workspace/d1/d2/put.txt && touch /workspace/d1/d2/new && echo changed\n"
        "tr '\\000' ' ' < /proc/1/cmdline > /workspace/cmdline\n",
        &ec);
    assert_int_equal(ec, 0);
    assert_string_equal(out, "sysctl refused\nshadow refused\nCapEff:0000000000000000\nmade\nchanged\n");
    free(out);

    char ws[512], path[640];
    snprintf(ws, sizeof ws, "%s/workspaces/%s", emu_fixture_state_dir(f), id);
    struct stat sb;
    snprintf(path, sizeof path, "%s/suid", ws);
    assert_int_equal(lstat(path, &sb), 0);
    assert_true((sb.st_mode & S_ISUID) != 0);
    assert_false(sb.st_uid == 0);
    /* the sandbox's own uid (200000 + n), everything in it too */
    assert_int_equal(lstat(ws, &sb), 0);
    uid_t owner = sb.st_uid;
    assert_true(owner >= 200000 && owner < 200000 + 65536);
    const char *owned[] = {"", "/d1", "/d1/d2", "/d1/d2/put.txt", "/d1/d2/new", "/suid"};
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++) {
        snprintf(path, sizeof path, "%s%s", ws, owned[i]);
        assert_int_equal(lstat(path, &sb), 0);
        assert_int_equal(sb.st_uid, owner);
        assert_int_equal(sb.st_gid, owner);
    }
    snprintf(path, sizeof path, "%s/cmdline", ws);
    FILE *cf = fopen(path, "r");
    assert_non_null(cf);
    char cmdline[8192];
    size_t n = fread(cmdline, 1, sizeof cmdline - 1, cf);
    fclose(cf);
    cmdline[n] = '\0';
    assert_non_null(strstr(cmdline, "/workspace"));
    assert_null(strstr(cmdline, emu_fixture_state_dir(f)));
    out = run_wait(f, id, "cat /workspace/d1/d2/put.txt", &ec);
    assert_string_equal(out, "api-more");
    free(out);

    /* a sandbox made from a snapshot (copied by root) is the sandbox user's too */
    char body[256], fields[256], id2[64];
    cJSON *j = NULL;
    snprintf(body, sizeof body, "{\"sandboxId\":\"%s\"}", id);
    assert_int_equal(emu_fixture_json(f, "POST", "/sandboxSnapshots", body, 200, &j), 0);
    snprintf(fields, sizeof fields, "\"source\":{\"sourceType\":\"SNAPSHOT\",\"snapshotId\":\"%s\"}", jstr(j, "id"));
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, fields, id2, sizeof id2), 0);
    out = run_wait(f, id2, "printf -- '-again' >> /workspace/d1/d2/put.txt && cat /workspace/d1/d2/put.txt", &ec);
    assert_int_equal(ec, 0);
    assert_string_equal(out, "api-more-again");
    free(out);
    snprintf(path, sizeof path, "%s/workspaces/%s/suid", emu_fixture_state_dir(f), id2);
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(sb.st_uid >= 200000 && sb.st_uid < 200000 + 65536);
    assert_int_not_equal(sb.st_uid, owner);    /* a uid of its own, not the first sandbox's */
    assert_int_equal(sb.st_mode & S_ISUID, 0); /* a copy never keeps a setuid bit */
}

int main(void)
{
    if (access("/usr/bin/bwrap", X_OK) != 0 && access("/bin/bwrap", X_OK) != 0 &&
        access("/usr/local/bin/bwrap", X_OK) != 0) {
        fprintf(stderr, "it_emulator_isolation: SKIPPED: bubblewrap (bwrap) is not installed\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_filesystem),
        cmocka_unit_test(t_network),
        cmocka_unit_test(t_files_api_escapes),
        cmocka_unit_test(t_files_api_no_existence_probe),
        cmocka_unit_test(t_files_api_inside_links),
        cmocka_unit_test(t_process_trees_die),
        cmocka_unit_test(t_shutdown_leaves_nothing),
        cmocka_unit_test(t_root_safety),
    };
    return par_run_group_tests_name("it_emulator_isolation", tests, setup, teardown);
}
