/* application_managed: the application-managed session flow of Oracle's
 * Agents API guide, with the Agents API session replaced by a local
 * stand-in.
 *
 *   application_managed [--session-file FILE]
 *
 * In the guide the application creates an Agents API session, creates a
 * sandbox for it, prepares the sandbox, starts the executor (a coding agent)
 * inside it with the executor's API key, collects what it produced and, at
 * the end, stops the executor and deletes both the sandbox and the session.
 * Here:
 *   - the session is a JSON file (default ./application_managed-session.json):
 *     "created" by writing it ({"id", "state", "sandboxId", ...}), "deleted"
 *     by removing it. APPLICATION_MANAGED_FAIL_SESSION_DELETE=1 makes that
 *     deletion fail, as a failing Agents API call would (for tests);
 *   - the executor is a shell script installed into /workspace/bin: it reads
 *     /workspace/brief.txt and writes /workspace/plan.md after a short while,
 *     then keeps running until it is stopped.
 * The executor's key is read from OPENAI_EXECUTOR_API_KEY and passed ONLY as
 * the secret per-command environment variable CODEX_API_KEY of the executor's
 * background job: never in the sandbox's environment, a file, a log line or
 * anything printed.
 *
 * Clean-up always attempts both deletions (sandbox and session), even when
 * one fails; the exit status is non-zero if either (or any step) failed.
 *
 * Defaults: Oracle's for this flow (the example program its Agents API
 * guide follows), not the library's: profile Sandbox, region us-chicago-1,
 * a lifetime of PT30M, 120 s to wait for RUNNING and 60 s for STOPPED. Each
 * is a default of the library's one settings resolver, so each is still
 * overridden as any setting is: by its variable (OCI_SANDBOX_PROFILE,
 * OCI_SANDBOX_REGION, OCI_SANDBOX_EXPIRATION, OCI_SANDBOX_READY_TIMEOUT,
 * OCI_SANDBOX_STOP_TIMEOUT; the OCI CLI's OCI_CLI_PROFILE, OCI_CLI_REGION)
 * and, for the profile's region, by the config file. The program prints
 * what it resolved and where each value came from. Other settings: see
 * example_common.h. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "example_common.h"

#define PROG "application_managed"
#define PLAN_TIMEOUT_MS 60000

/* Oracle's defaults for this flow (see the header); the environment and the
 * config file still win. */
static const struct {
    const char *name, *value;
} oracle_defaults[] = {
    {"profile", "Sandbox"},   {"region", "us-chicago-1"}, {"expiration", "PT30M"},
    {"ready_timeout", "120"}, {"stop_timeout", "60"},
};

/* The stand-in executor: what a coding agent would do with the brief. */
static const char executor_script[] = "#!/bin/sh\n"
                                      "# make-plan: the stand-in executor. Reads brief.txt, writes plan.md.\n"
                                      "set -eu\n"
                                      "cd /workspace\n"
                                      "if [ -z \"${CODEX_API_KEY:-}\" ]; then\n"
                                      "  echo 'make-plan: CODEX_API_KEY is not set' >&2\n"
                                      "  exit 3\n"
                                      "fi\n"
                                      "echo 'make-plan: thinking about the brief'\n"
                                      "sleep 1\n"
                                      "{\n"
                                      "  echo '# Plan'\n"
                                      "  echo\n"
                                      "  echo \"Brief: $(head -n 1 brief.txt)\"\n"
                                      "  echo\n"
                                      "  n=0\n"
                                      "  tail -n +2 brief.txt | while IFS= read -r line; do\n"
                                      "    [ -n \"$line\" ] || continue\n"
                                      "    n=$((n + 1))\n"
                                      "    echo \"$n. $line: write it, test it, review it\"\n"
                                      "  done\n"
                                      "  echo\n"
                                      "  echo \"(an executor key of ${#CODEX_API_KEY} characters was present)\"\n"
                                      "} > plan.md.tmp\n"
                                      "mv plan.md.tmp plan.md\n"
                                      "echo 'make-plan: wrote plan.md; waiting to be stopped'\n"
                                      "exec sleep 3600\n";

static const char brief[] = "Add a --json flag to the report command\n"
                            "parse the flag\n"
                            "print the report as JSON\n"
                            "document the flag\n";

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the session stand-in ---------------------------------------------------------- */
typedef struct session {
    char id[32];
    const char *file;
    int exists;
} session;

static int session_write(session *s, const char *state, const char *sandbox_id)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->file);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"id\": \"%s\", \"kind\": \"application-managed\", \"state\": \"%s\", \"sandboxId\": %s%s%s}\n",
            s->id, state, sandbox_id ? "\"" : "", sandbox_id ? sandbox_id : "null", sandbox_id ? "\"" : "");
    if (fclose(f) != 0 || rename(tmp, s->file) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int session_create(session *s)
{
    unsigned char r[8];
    FILE *u = fopen("/dev/urandom", "rb");
    size_t got = u ? fread(r, 1, sizeof r, u) : 0;
    if (u)
        fclose(u);
    if (got != sizeof r)
        return -1;
    snprintf(s->id, sizeof s->id, "session-%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4], r[5],
             r[6], r[7]);
    if (session_write(s, "ACTIVE", NULL) != 0)
        return -1;
    s->exists = 1;
    return 0;
}

static int session_delete(session *s)
{
    if (example_env("APPLICATION_MANAGED_FAIL_SESSION_DELETE")) {
        fprintf(stderr,
                PROG ": delete session %s: the session stand-in refused the deletion "
                     "(APPLICATION_MANAGED_FAIL_SESSION_DELETE is set); %s is left\n",
                s->id, s->file);
        return -1;
    }
    if (unlink(s->file) != 0 && errno != ENOENT) {
        fprintf(stderr, PROG ": delete session %s: %s: %s\n", s->id, s->file, strerror(errno));
        return -1;
    }
    s->exists = 0;
    return 0;
}

/* ---- the settings ---------------------------------------------------------------------- */
/* The resolver with Oracle's defaults; prints each value and its source. */
static int settings_resolve(ocisbx_settings **out)
{
    int rc = ocisbx_settings_new(out);
    for (size_t i = 0; !rc && i < sizeof oracle_defaults / sizeof oracle_defaults[0]; i++)
        rc = ocisbx_settings_set_default(*out, oracle_defaults[i].name, oracle_defaults[i].value);
    if (!rc)
        rc = ocisbx_settings_resolve(*out);
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof oracle_defaults / sizeof oracle_defaults[0]; i++) {
        const char *n = oracle_defaults[i].name;
        printf("setting %s = %s (%s%s%s)\n", n, ocisbx_settings_get(*out, n),
               ocisbx_setting_source_name(ocisbx_settings_source(*out, n)),
               ocisbx_settings_source(*out, n) == OCISBX_SETTING_DEFAULT ? "" : ": ",
               ocisbx_settings_source(*out, n) == OCISBX_SETTING_DEFAULT ? "" : ocisbx_settings_origin(*out, n));
    }
    return 0;
}

/* The backend's options from the settings: the lifetime, the wait for
 * RUNNING (whole seconds), the label's region. close() stops the sandbox,
 * waits for STOPPED and deletes it: the backend's contract. */
static int settings_apply(ocisbx_settings *s, ocisbx_backend_options *o)
{
    long long ready = strtoll(ocisbx_settings_get(s, "ready_timeout"), NULL, 10);
    if (ready <= 0)
        return ocisbx_error_set(OCISBX_EINVAL, "ready_timeout: not a whole number of seconds above 0");
    int rc = ocisbx_backend_options_set_expiration(o, ocisbx_settings_get(s, "expiration"));
    if (!rc)
        rc = ocisbx_backend_options_set_ready_timeout_ms(o, ready * 1000);
    if (!rc)
        rc = ocisbx_backend_options_set_region(o, ocisbx_settings_get(s, "region"));
    return rc;
}

/* ---- the flow ------------------------------------------------------------------------- */
static int put(ocisbx_backend *b, const char *path, const char *text)
{
    if (ocisbx_backend_write(b, path, text, strlen(text)))
        return example_fail(PROG, path);
    printf("wrote %s (%zu bytes)\n", path, strlen(text));
    return 0;
}

static int run(ocisbx_backend *b, const char *command)
{
    ocisbx_exec_result *r = NULL;
    if (ocisbx_backend_exec(b, command, NULL, &r))
        return example_fail(PROG, command);
    int code = -1;
    int finished = ocisbx_exec_result_has_exit_code(r, &code);
    printf("$ %s\n%s", command, ocisbx_exec_result_output(r, NULL));
    ocisbx_exec_result_free(r);
    if (!finished || code != 0) {
        fprintf(stderr, PROG ": %s: exit code %d\n", command, finished ? code : -1);
        return 1;
    }
    return 0;
}

/* Polls for plan.md (every 500 ms, or every poll_interval when
 * OCI_SANDBOX_POLL_INTERVAL sets one) until it is there, the executor
 * ended, or the deadline. */
static int wait_for_plan(ocisbx_backend *b, const char *job, unsigned char **plan, size_t *len)
{
    int64_t end = now_ms() + PLAN_TIMEOUT_MS, plan_poll_ms = example_poll_ms(500);
    if (plan_poll_ms == 0)
        plan_poll_ms = 500;
    for (;;) {
        int rc = ocisbx_backend_read_bytes(b, "/workspace/plan.md", plan, len);
        if (rc == 0)
            return 0;
        if (rc != OCISBX_ENOTFOUND)
            return example_fail(PROG, "read /workspace/plan.md");
        ocisbx_job_status *st = NULL;
        if (ocisbx_backend_job_status(b, job, &st))
            return example_fail(PROG, "executor status");
        int running = ocisbx_job_status_running(st), code = -1;
        int exited = ocisbx_job_status_has_exit_code(st, &code);
        ocisbx_job_status_free(st);
        if (!running) {
            char *out = NULL;
            size_t n = 0;
            uint64_t total = 0;
            if (ocisbx_backend_job_output(b, job, 0, 4096, &out, &n, &total) == 0)
                fprintf(stderr, PROG ": the executor's output:\n%.*s", (int)n, out);
            ocisbx_free(out);
            fprintf(stderr, PROG ": the executor ended (exit code %d) without writing plan.md\n", exited ? code : -1);
            return 1;
        }
        if (example_interrupted) {
            fprintf(stderr, PROG ": interrupted while waiting for plan.md\n");
            return 1;
        }
        if (now_ms() >= end) {
            fprintf(stderr, PROG ": no /workspace/plan.md after %d s\n", PLAN_TIMEOUT_MS / 1000);
            return 1;
        }
        sleep_ms(plan_poll_ms);
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* the transcript as it happens, also into a pipe */
    session sess = {.file = "application_managed-session.json"};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--session-file") && i + 1 < argc) {
            sess.file = argv[++i];
        } else {
            fprintf(stderr, "usage: " PROG " [--session-file FILE]\n");
            return 2;
        }
    }
    const char *project = example_setting("project_id");
    const char *key = example_env("OPENAI_EXECUTOR_API_KEY");
    if (!project || !key) {
        fprintf(stderr, PROG ": set OCI_SANDBOX_PROJECT_ID and OPENAI_EXECUTOR_API_KEY\n");
        return 2;
    }

    int rc = 1;
    ocisbx_settings *settings = NULL;
    ocisbx_client *client = NULL;
    ocisbx_backend_options *opts = NULL;
    ocisbx_exec_options *job_opts = NULL;
    ocisbx_backend *b = NULL;
    char *job = NULL;
    unsigned char *plan = NULL;
    size_t plan_len = 0;
    ocisbx_global_init();
    example_catch_signals(); /* Ctrl-C: clean up, then exit */

    /* 1. the session (Agents API: create session) */
    if (session_create(&sess) != 0) {
        fprintf(stderr, PROG ": create session: %s: %s\n", sess.file, strerror(errno));
        goto out;
    }
    printf("session: %s (%s)\n", sess.id, sess.file);

    /* 2. a sandbox for it, RUNNING */
    if (settings_resolve(&settings) || example_client_from(settings, &client) ||
        example_backend_options(client, &opts) || settings_apply(settings, opts) ||
        ocisbx_backend_options_set_display_name(opts, sess.id)) {
        rc = example_fail(PROG, "settings");
        goto out;
    }
    if (ocisbx_backend_create(project, opts, &b)) {
        rc = example_fail(PROG, "create sandbox");
        goto out;
    }
    printf("sandbox: %s (RUNNING)\n", ocisbx_backend_sandbox_id(b));
    if (session_write(&sess, "ACTIVE", ocisbx_backend_sandbox_id(b)) != 0) {
        fprintf(stderr, PROG ": update session: %s: %s\n", sess.file, strerror(errno));
        goto out;
    }

    /* 3. install the tool, 4. the brief */
    if (put(b, "/workspace/bin/make-plan", executor_script) || run(b, "chmod 755 bin/make-plan && ls -l bin") ||
        put(b, "/workspace/brief.txt", brief))
        goto out;

    /* 5. the executor, in the background, its key a secret of this command only */
    if (ocisbx_exec_options_new(&job_opts) || ocisbx_exec_options_set_timeout_ms(job_opts, 3600 * 1000) ||
        ocisbx_exec_options_add_env(job_opts, "CODEX_API_KEY", key, 1) ||
        ocisbx_backend_job_start(b, "/workspace/bin/make-plan", job_opts, &job)) {
        rc = example_fail(PROG, "start the executor");
        goto out;
    }
    printf("executor: job %s started (CODEX_API_KEY passed as a secret)\n", job);

    /* 6. wait for its plan, 7. show it */
    if (wait_for_plan(b, job, &plan, &plan_len))
        goto out;
    printf("--- /workspace/plan.md ---\n%.*s--- end of plan ---\n", (int)plan_len, (const char *)plan);
    rc = 0;

out:
    /* 8. stop the executor, delete the sandbox, delete the session: each attempted */
    if (job) {
        if (ocisbx_backend_job_kill(b, job))
            rc = example_fail(PROG, "stop the executor");
        else
            printf("executor: stopped\n");
    }
    if (b) {
        char *id = NULL;
        if (ocisbx_backend_sandbox_id(b)) {
            size_t n = strlen(ocisbx_backend_sandbox_id(b)) + 1;
            id = malloc(n);
            if (id)
                memcpy(id, ocisbx_backend_sandbox_id(b), n);
        }
        if (ocisbx_backend_close(b)) {
            char what[256];
            snprintf(what, sizeof what, "delete sandbox %s", id ? id : "");
            rc = example_fail(PROG, what);
        } else {
            printf("sandbox: %s deleted\n", id ? id : "");
        }
        free(id);
    }
    if (sess.exists) {
        if (session_delete(&sess) != 0)
            rc = 1;
        else
            printf("session: %s deleted\n", sess.id);
    }
    if (rc)
        fprintf(stderr, PROG ": failed\n");
    ocisbx_free(plan);
    ocisbx_free(job);
    ocisbx_exec_options_free(job_opts);
    ocisbx_backend_free(b);
    ocisbx_backend_options_free(opts);
    ocisbx_client_free(client);
    ocisbx_settings_free(settings);
    ocisbx_global_cleanup();
    return rc;
}
