/* A background job's handle lives in the workspace (.ocisbx/jobs/<id>/handle),
 * where the sandboxed commands can rewrite it: no content of it may direct a
 * kill at anything but that job's own processes. Forged pg: and ns: handles,
 * another job's handle copied over, another workspace's: each refused with
 * nothing killed (a sentinel host process still alive, the other job still
 * running); the normal kill from another backend or process still works.
 * Through the backend API (a second backend plays the later process) and
 * through the CLI (separate processes, as an outside probe did), on a local
 * directory (isolated and host shell) and an OCI sandbox (the emulator). */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "backend/local_job.h"
#include "backend_world.h"
#include "cli_run.h"
#include "emu_fixture.h"
#include "ocisbx/backend.h"
#include "ocisbx/util.h"
#include "test_keys.h"
#include "util/internal.h"
#include "par_run.h"

typedef struct fworld {
    world w;           /* w.b: the backend that starts the jobs */
    bool host;         /* local without isolation */
    char sandbox[128]; /* oci: the sandbox's id, for the CLI */
} fworld;

/* ---- sentinels: host processes that must survive ---- */
typedef struct sentinel {
    pid_t pid;    /* our child */
    pid_t target; /* the process a forged handle names (pgid, or one in the other namespace) */
    unsigned long long ns_dev, ns_ino;
} sentinel;

/* A sentinel dies with the test (a failed assertion leaves none behind) and
 * holds none of its output pipes. */
static void quiet_child(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) {
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(nul, 2);
    }
}

static void sentinel_pg(sentinel *s)
{
    memset(s, 0, sizeof *s);
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        quiet_child();
        setsid();
        execlp("sleep", "sleep", "1001.5", (char *)NULL);
        _exit(127);
    }
    s->target = s->pid; /* its own session and group */
    for (int i = 0; i < 400 && getpgid(s->pid) != s->pid; i++)
        usleep(10000);
    assert_int_equal(getpgid(s->pid), s->pid);
}

/* A process in a PID namespace of its own (unshare -pf): false when this
 * machine cannot make one. */
static bool sentinel_ns(sentinel *s)
{
    memset(s, 0, sizeof *s);
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        quiet_child();
        execlp("unshare", "unshare", geteuid() == 0 ? "-pf" : "-rpf", "--kill-child", "sleep", "1002.5",
               (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 1000; i++) { /* the grandchild, once it is in its namespace */
        char path[64], buf[64] = {0};
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)s->pid, (int)s->pid);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(buf, sizeof buf, f))
                s->target = (pid_t)atoi(buf);
            fclose(f);
        }
        struct stat mine, theirs;
        snprintf(path, sizeof path, "/proc/%d/ns/pid", (int)s->target);
        if (s->target > 0 && stat("/proc/self/ns/pid", &mine) == 0 && stat(path, &theirs) == 0 &&
            theirs.st_ino != mine.st_ino) {
            s->ns_dev = (unsigned long long)theirs.st_dev;
            s->ns_ino = (unsigned long long)theirs.st_ino;
            return true;
        }
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
            s->pid = 0;
            return false;
        }
        usleep(10000);
    }
    return false;
}

static bool sentinel_alive(const sentinel *s)
{
    return s->pid > 0 && waitpid(s->pid, NULL, WNOHANG) == 0;
}

static void sentinel_end(sentinel *s)
{
    if (s->pid > 0) {
        kill(s->target > 0 ? s->target : s->pid, SIGKILL);
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
    }
    s->pid = 0;
}

/* ---- the world ---- */
static int open_local(fworld *f, bool host)
{
    f->w.kind = "local";
    f->host = host;
    snprintf(f->w.dir, sizeof f->w.dir, "/tmp/it_jobs_forged_XXXXXX");
    if (!mkdtemp(f->w.dir))
        return -1;
    if (geteuid() == 0 && !host && chown(f->w.dir, 65534, 65534) != 0)
        return -1;
    ocisbx_backend_options *o = base_options();
    if (host)
        ocisbx_backend_options_set_isolation(o, 0);
    int rc = ocisbx_backend_local(f->w.dir, o, &f->w.b);
    ocisbx_backend_options_free(o);
    if (rc)
        fprintf(stderr, "local backend: %s\n", ocisbx_error_message(ocisbx_error_last()));
    return rc ? -1 : 0;
}

static int setup_isolated(void **state)
{
    fworld *f = calloc(1, sizeof *f);
    *state = f;
    return open_local(f, false);
}

static int setup_host(void **state)
{
    fworld *f = calloc(1, sizeof *f);
    *state = f;
    return open_local(f, true);
}

static int setup_oci_f(void **state)
{
    fworld *f = calloc(1, sizeof *f);
    void *ws = NULL;
    if (setup_oci(&ws) != 0)
        return -1;
    f->w = *(world *)ws;
    free(ws);
    snprintf(f->sandbox, sizeof f->sandbox, "%s", ocisbx_backend_sandbox_id(f->w.b));
    *state = f;
    return 0;
}

static int teardown_f(void **state)
{
    fworld *f = *state;
    world *w = malloc(sizeof *w);
    *w = f->w;
    free(f);
    void *ws = w;
    return teardown(&ws);
}

/* A second backend on the same workspace: what a later process opens. */
static ocisbx_backend *other(const fworld *f)
{
    ocisbx_backend_options *o = base_options();
    ocisbx_backend *b = NULL;
    if (f->w.emu) {
        ocisbx_backend_options_set_client(o, f->w.c);
        check(ocisbx_backend_connect(ocisbx_backend_sandbox_id(f->w.b), o, &b), "connect");
    } else {
        if (f->host)
            ocisbx_backend_options_set_isolation(o, 0);
        check(ocisbx_backend_local(f->w.dir, o, &b), "open again");
    }
    ocisbx_backend_detach_jobs(b);
    ocisbx_backend_options_free(o);
    return b;
}

static char *start(const fworld *f, const char *cmd)
{
    char *id = NULL;
    check(ocisbx_backend_job_start(f->w.b, cmd, NULL, &id), cmd);
    return id;
}

static bool running(ocisbx_backend *b, const char *id)
{
    ocisbx_job_status *st = NULL;
    check(ocisbx_backend_job_status(b, id, &st), "status");
    bool r = ocisbx_job_status_running(st);
    ocisbx_job_status_free(st);
    return r;
}

/* Written from inside the workspace, as the sandboxed code would. */
static void forge(const fworld *f, const char *id, const char *text)
{
    char *q = NULL;
    check(ocisbx_shell_quote(text, strlen(text), &q), "quote");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "printf '%%s' %s > .ocisbx/jobs/%s/handle", q, id);
    free(q);
    free(run_out(f->w.b, cmd));
}

static char *handle_of(const fworld *f, const char *id)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "cat .ocisbx/jobs/%s/handle", id);
    return run_out(f->w.b, cmd);
}

/* A kill from another backend that must be refused, the job left running. */
static void kill_refused(const fworld *f, const char *id, const char *what)
{
    ocisbx_backend *b2 = other(f);
    int killed = 1;
    int rc = ocisbx_backend_job_stop(b2, id, &killed);
    if (rc != OCISBX_EINTEGRITY)
        fail_msg("%s: kill gave %d (%s), not a refusal", what, rc, ocisbx_error_message(ocisbx_error_last()));
    assert_int_equal(killed, 0);
    assert_true(running(b2, id));
    ocisbx_backend_free(b2);
}

/* The normal kill from another backend: killed within 5 s, status killed. */
static void kill_works(const fworld *f, const char *id)
{
    ocisbx_backend *b2 = other(f);
    int killed = 0;
    int64_t t0 = ocisbx_time_monotonic_ms();
    check(ocisbx_backend_job_stop(b2, id, &killed), "kill from another backend");
    int64_t ms = ocisbx_time_monotonic_ms() - t0;
    assert_int_equal(killed, 1);
    if (ms > 5000)
        fail_msg("the kill took %lld ms", (long long)ms);
    ocisbx_job_status *st = NULL;
    check(ocisbx_backend_job_status(b2, id, &st), "status");
    assert_false(ocisbx_job_status_running(st));
    assert_true(ocisbx_job_status_killed(st));
    ocisbx_job_status_free(st);
    ocisbx_backend_free(b2);
}

/* ---- through the backend API ---- */
static void t_forged_pg(void **state)
{
    fworld *f = *state;
    sentinel s;
    sentinel_pg(&s);
    char *id = start(f, "sleep 1000.61");
    char text[200];
    snprintf(text, sizeof text, "pg:%d", (int)s.target);
    forge(f, id, text); /* the probe's handle */
    kill_refused(f, id, "pg: handle");
    snprintf(text, sizeof text, "v1 pg:%d:0:- %064d", (int)s.target, 0);
    forge(f, id, text); /* the sealed form with a made-up seal */
    kill_refused(f, id, "pg: handle with a made-up seal");
    assert_true(sentinel_alive(&s));
    sentinel_end(&s);
    check(ocisbx_backend_job_kill(f->w.b, id), "the owner's kill");
    assert_true(gone("1000.61"));
    ocisbx_free(id);
}

static void t_forged_ns(void **state)
{
    fworld *f = *state;
    char *id = start(f, "sleep 1000.62");
    sentinel s;
    bool have = sentinel_ns(&s);
    if (!have)
        fprintf(stderr, "(no PID namespace here: the other namespace's sentinel is left out)\n");
    struct stat self;
    assert_int_equal(stat("/proc/self/ns/pid", &self), 0);
    char text[300];
    /* this host's own namespace: a kill of every process */
    snprintf(text, sizeof text, "ns:%llu:%llu", (unsigned long long)self.st_dev, (unsigned long long)self.st_ino);
    forge(f, id, text);
    kill_refused(f, id, "ns: handle of the host's namespace");
    if (have) {
        snprintf(text, sizeof text, "ns:%llu:%llu", s.ns_dev, s.ns_ino);
        forge(f, id, text);
        kill_refused(f, id, "ns: handle");
        snprintf(text, sizeof text, "v1 ns:%llu:%llu:0:- %064d", s.ns_dev, s.ns_ino, 0);
        forge(f, id, text);
        kill_refused(f, id, "ns: handle with a made-up seal");
        assert_true(sentinel_alive(&s));
        sentinel_end(&s);
    }
    check(ocisbx_backend_job_kill(f->w.b, id), "the owner's kill");
    assert_true(gone("1000.62"));
    ocisbx_free(id);
}

static void t_copied_from_another_job(void **state)
{
    fworld *f = *state;
    char *a = start(f, "sleep 1000.63"), *b = start(f, "sleep 1000.64");
    char cmd[200];
    snprintf(cmd, sizeof cmd, "cp .ocisbx/jobs/%s/handle .ocisbx/jobs/%s/handle", b, a);
    free(run_out(f->w.b, cmd));
    kill_refused(f, a, "another job's handle");
    assert_true(running(f->w.b, b));
    assert_true(emu_fixture_process_exists("1000.64"));
    kill_works(f, b); /* B's own handle is intact */
    assert_true(gone("1000.64"));
    check(ocisbx_backend_job_kill(f->w.b, a), "the owner's kill");
    assert_true(gone("1000.63"));
    ocisbx_free(a);
    ocisbx_free(b);
}

static void t_from_another_workspace(void **state)
{
    fworld *f = *state;
    fworld g;
    memset(&g, 0, sizeof g);
    if (f->w.emu) {
        g.w = f->w;
        ocisbx_backend_options *o = base_options();
        ocisbx_backend_options_set_client(o, f->w.c);
        ocisbx_backend_options_set_poll_interval_ms(o, 50);
        check(ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &g.w.b), "a second sandbox");
        ocisbx_backend_options_free(o);
    } else {
        assert_int_equal(open_local(&g, f->host), 0);
    }
    char *theirs = start(&g, "sleep 1000.65");
    char *mine = start(f, "sleep 1000.66");
    char *h = handle_of(&g, theirs), *own = handle_of(f, mine);
    forge(f, mine, h);
    free(h);
    kill_refused(f, mine, "another workspace's handle");
    forge(f, mine, own); /* its own back */
    free(own);
    assert_true(running(g.w.b, theirs));
    assert_true(emu_fixture_process_exists("1000.65"));
    check(ocisbx_backend_close(g.w.b), "close the other workspace");
    ocisbx_backend_free(g.w.b);
    assert_true(gone("1000.65"));
    if (!f->w.emu)
        test_rm_rf(g.w.dir);
    kill_works(f, mine);
    assert_true(gone("1000.66"));
    ocisbx_free(theirs);
    ocisbx_free(mine);
}

/* The guard under the seal: a sealed handle still never reaches a process
 * that reused the job's numbers, process 1, this process's own group or
 * the host's own namespace. */
static void t_local_guards(void **state)
{
    (void)state;
    sentinel s;
    sentinel_pg(&s);
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)s.pid);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    assert_non_null(fgets(buf, sizeof buf, fp));
    fclose(fp);
    char *p = strrchr(buf, ')') + 2;
    for (int i = 0; i < 19; i++)
        p = strchr(p, ' ') + 1;
    unsigned long long start_time = strtoull(p, NULL, 10);
    ocisbx_local_job j;
    char h[200];
    snprintf(h, sizeof h, "pg:%d:%llu:-", (int)s.pid, start_time + 1); /* another process's start */
    check(ocisbx_local_job_parse(h, &j), "parse");
    assert_int_equal(ocisbx_local_job_signal(&j, SIGKILL), 0);
    assert_true(sentinel_alive(&s));
    snprintf(h, sizeof h, "pg:%d:%llu:-", (int)s.pid, start_time); /* the sentinel itself: found */
    check(ocisbx_local_job_parse(h, &j), "parse");
    assert_int_equal(ocisbx_local_job_signal(&j, 0), 1);
    snprintf(h, sizeof h, "pg:1:1:-");
    assert_int_equal(ocisbx_local_job_parse(h, &j), OCISBX_EFORBIDDEN);
    snprintf(h, sizeof h, "pg:%d:1:-", (int)getpgrp());
    assert_int_equal(ocisbx_local_job_parse(h, &j), OCISBX_EFORBIDDEN);
    struct stat self;
    assert_int_equal(stat("/proc/self/ns/pid", &self), 0);
    snprintf(h, sizeof h, "ns:%llu:%llu:1:-", (unsigned long long)self.st_dev, (unsigned long long)self.st_ino);
    assert_int_equal(ocisbx_local_job_parse(h, &j), OCISBX_EFORBIDDEN);
    assert_int_equal(ocisbx_local_job_parse("pg:12345", &j), OCISBX_EINVAL); /* the old, unchecked form */
    /* a seal verifies only for its workspace and job */
    char *text = NULL, *back = NULL;
    check(ocisbx_job_seal("/tmp/ws-a", "job-AAAAAAAAAAAAAAAA", "pg:4242:7:-", &text), "seal");
    check(ocisbx_job_unseal("/tmp/ws-a", "job-AAAAAAAAAAAAAAAA", text, &back), "unseal");
    assert_string_equal(back, "pg:4242:7:-");
    free(back);
    assert_int_equal(ocisbx_job_unseal("/tmp/ws-b", "job-AAAAAAAAAAAAAAAA", text, &back), OCISBX_EINTEGRITY);
    assert_int_equal(ocisbx_job_unseal("/tmp/ws-a", "job-BBBBBBBBBBBBBBBB", text, &back), OCISBX_EINTEGRITY);
    text[3] = text[3] == '9' ? '8' : '9'; /* pg:4242 -> another number, seal kept */
    assert_int_equal(ocisbx_job_unseal("/tmp/ws-a", "job-AAAAAAAAAAAAAAAA", text, &back), OCISBX_EINTEGRITY);
    free(text);
    sentinel_end(&s);
}

/* ---- through the CLI: each call its own process ---- */
static cJSON *cli_call(const fworld *f, const char *tool, const char *args, int want_status)
{
    const char *argv[16];
    int n = 0;
    if (f->w.emu) {
        argv[n++] = "--config-file";
        argv[n++] = emu_fixture_config_path(f->w.emu);
        argv[n++] = "--endpoint";
        argv[n++] = emu_fixture_url(f->w.emu);
        argv[n++] = "--ca-bundle";
        argv[n++] = emu_fixture_ca_path(f->w.emu);
    }
    argv[n++] = "harness";
    argv[n++] = "call";
    argv[n++] = f->w.emu ? "--sandbox-id" : "--local-dir";
    argv[n++] = f->w.emu ? f->sandbox : f->w.dir;
    if (f->host)
        argv[n++] = "--no-isolation";
    argv[n++] = tool;
    argv[n++] = args;
    argv[n] = NULL;
    cli_result r;
    if (cli_run(argv, NULL, NULL, &r) != 0)
        fail_msg("could not run the CLI");
    if (r.status != want_status)
        fail_msg("%s %s: exit %d (wanted %d)\nstdout: %s\nstderr: %s", tool, args, r.status, want_status, r.out,
                 r.err);
    cJSON *j = cJSON_Parse(r.out);
    if (!cJSON_IsObject(j))
        fail_msg("%s %s: not a JSON object: %s", tool, args, r.out);
    cli_result_free(&r);
    return j;
}

static char *cli_job(const fworld *f, const char *cmd)
{
    char args[256];
    snprintf(args, sizeof args, "{\"command\":\"%s\",\"background\":true}", cmd);
    cJSON *j = cli_call(f, "exec", args, 0);
    char *id = strdup(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "job_id")));
    cJSON_Delete(j);
    return id;
}

static void cli_exec(const fworld *f, const char *cmd)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "command", cmd);
    char *args = cJSON_PrintUnformatted(e);
    cJSON_Delete(e);
    cJSON *j = cli_call(f, "exec", args, 0);
    free(args);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "exit_code")), 0);
    cJSON_Delete(j);
}

static bool cli_flag(const fworld *f, const char *id, const char *action, const char *flag, int want_status)
{
    char args[128];
    snprintf(args, sizeof args, "{\"job_id\":\"%s\",\"action\":\"%s\"}", id, action);
    cJSON *j = cli_call(f, "job", args, want_status);
    bool v = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, flag));
    cJSON_Delete(j);
    return v;
}

static void t_cli(void **state)
{
    fworld *f = *state;
    sentinel pg, ns;
    sentinel_pg(&pg);
    bool have_ns = sentinel_ns(&ns);
    char *a = cli_job(f, "sleep 1000.67"), *b = cli_job(f, "sleep 1000.68");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "cp .ocisbx/jobs/%s/handle .ocisbx/jobs/%s/saved", a, a);
    cli_exec(f, cmd);
    const char *forged[3] = {0};
    char t_pg[64], t_ns[96], t_cp[200];
    snprintf(t_pg, sizeof t_pg, "printf pg:%d > .ocisbx/jobs/%s/handle", (int)pg.target, a);
    snprintf(t_ns, sizeof t_ns, "printf ns:%llu:%llu > .ocisbx/jobs/%s/handle", ns.ns_dev, ns.ns_ino, a);
    snprintf(t_cp, sizeof t_cp, "cp .ocisbx/jobs/%s/handle .ocisbx/jobs/%s/handle", b, a);
    forged[0] = t_pg;
    forged[1] = have_ns ? t_ns : NULL;
    forged[2] = t_cp;
    for (int i = 0; i < 3; i++) {
        if (!forged[i])
            continue;
        cli_exec(f, forged[i]);
        assert_false(cli_flag(f, a, "kill", "killed", 1));
        assert_true(cli_flag(f, a, "status", "running", 0));
        assert_true(cli_flag(f, b, "status", "running", 0));
    }
    assert_true(sentinel_alive(&pg));
    sentinel_end(&pg);
    if (have_ns) {
        assert_true(sentinel_alive(&ns));
        sentinel_end(&ns);
    }
    /* the job's own handle back: the kill from a later process works */
    snprintf(cmd, sizeof cmd, "mv .ocisbx/jobs/%s/saved .ocisbx/jobs/%s/handle", a, a);
    cli_exec(f, cmd);
    int64_t t0 = ocisbx_time_monotonic_ms();
    assert_true(cli_flag(f, a, "kill", "killed", 0));
    int64_t ms = ocisbx_time_monotonic_ms() - t0;
    if (ms > 5000)
        fail_msg("the kill took %lld ms", (long long)ms);
    assert_false(cli_flag(f, a, "status", "running", 0));
    assert_true(cli_flag(f, a, "status", "killed", 0));
    assert_true(gone("1000.67"));
    assert_true(cli_flag(f, b, "kill", "killed", 0));
    assert_true(gone("1000.68"));
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest local_tests[] = {
        cmocka_unit_test(t_local_guards),
        cmocka_unit_test(t_forged_pg),
        cmocka_unit_test(t_forged_ns),
        cmocka_unit_test(t_copied_from_another_job),
        cmocka_unit_test(t_from_another_workspace),
        cmocka_unit_test(t_cli),
    };
    const struct CMUnitTest host_tests[] = {
        cmocka_unit_test(t_forged_pg),
        cmocka_unit_test(t_forged_ns),
        cmocka_unit_test(t_copied_from_another_job),
        cmocka_unit_test(t_from_another_workspace),
        cmocka_unit_test(t_cli),
    };
    const struct CMUnitTest oci_tests[] = {
        cmocka_unit_test(t_forged_pg),
        cmocka_unit_test(t_forged_ns),
        cmocka_unit_test(t_copied_from_another_job),
        cmocka_unit_test(t_from_another_workspace),
        cmocka_unit_test(t_cli),
    };
    const char *g = backend_world_group(argc, argv);
    par_group groups[3]; /* every case in a world of its own (par_run.h) */
    size_t n = 0;
    if (backend_world_wants(g, "local"))
        groups[n++] = (par_group)PAR_GROUP("forged job handles: local", local_tests, setup_isolated, teardown_f);
    if (backend_world_wants(g, "host"))
        groups[n++] = (par_group)PAR_GROUP("forged job handles: host shell", host_tests, setup_host, teardown_f);
    if (backend_world_wants(g, "oci"))
        groups[n++] = (par_group)PAR_GROUP("forged job handles: oci", oci_tests, setup_oci_f, teardown_f);
    return par_run_groups(groups, n) ? 1 : 0;
}
