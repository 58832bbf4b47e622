/* agent_loop: a harness driven by a scripted stand-in for a model.
 *
 *   agent_loop [--approve-all] [--local-dir DIR] [--evidence FILE] [SCRIPT.json]
 *
 * SCRIPT.json is what the model "says": a JSON array of steps
 *   [{"say": "narration (optional)", "tool": "exec", "arguments": {...}}, ...]
 * replayed in order; a step may have only "say". Each call goes through the
 * harness (the schema check, the gate, the workspace) and its result is
 * printed exactly as the model would get it (JSON). Without SCRIPT the
 * built-in script runs (examples/agent_loop_default.json, compiled in): it
 * writes a small Python package with a bug and its unittest tests, runs the
 * tests (one fails), fixes the code with `edit` and runs them again.
 *
 * The gate holds every `workspace.exec` call for a person, asked on the
 * terminal (/dev/tty; `y` approves; no terminal: refused). --approve-all
 * approves every held call (CI, the demo).
 *
 * The workspace: a new sandbox (deleted at the end, also on failure), or with
 * --local-dir DIR that directory under bubblewrap (the local backend).
 * Settings: see example_common.h.
 *
 * Evidence (one JSON line per call, chained by SHA-256) goes to FILE (default
 * ./agent_loop-evidence.jsonl, replaced at each run); its absolute path is
 * printed; `ocisbx evidence verify FILE` checks it.
 *
 * Exit status: 0 only when the script's last exec call finished with exit
 * code 0 (the rerun of the tests passed); 1 otherwise; 2 for a bad command
 * line. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent_loop_default.h" /* agent_loop_default_json[], generated from agent_loop_default.json */
#include "example_common.h"

#define PROG "agent_loop"

typedef struct loop {
    int approve_all;
    int held, approved;
} loop;

/* Asked for each held call: the person at the terminal decides. */
static int approve(const char *tool, const char *label, const char *arguments_json, const char *reason,
                   void *user_data)
{
    loop *l = user_data;
    l->held++;
    if (l->approve_all) {
        printf("gate:   %s (%s) held%s%s; approved by --approve-all\n", tool, label, reason ? ": " : "",
               reason ? reason : "");
        l->approved++;
        return 1;
    }
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
    if (fd < 0) {
        printf("gate:   %s (%s) held; no terminal to ask a person: refused (--approve-all approves)\n", tool, label);
        /* negative: no one was asked (the model is told so, not that a person refused) */
        return ocisbx_error_set(OCISBX_EDENIED, "no terminal was available to ask a person (/dev/tty)");
    }
    FILE *tty = fdopen(fd, "r+");
    if (!tty) {
        close(fd);
        return ocisbx_error_set(OCISBX_EDENIED, "the terminal (/dev/tty) could not be used to ask a person");
    }
    fprintf(tty, "\nThe model wants to run %s %s\nApprove? [y/N] ", tool, arguments_json);
    fflush(tty);
    char line[64] = "";
    int yes = fgets(line, sizeof line, tty) && (line[0] == 'y' || line[0] == 'Y');
    fclose(tty);
    printf("gate:   %s (%s) held; %s at the terminal\n", tool, label, yes ? "approved" : "refused");
    l->approved += yes;
    return yes;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: " PROG " [--approve-all] [--local-dir DIR] [--evidence FILE] [SCRIPT.json]\n");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* the transcript as it happens, also into a pipe */
    loop l = {0};
    const char *local_dir = NULL, *script_path = NULL, *evidence_arg = "agent_loop-evidence.jsonl";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--approve-all")) {
            l.approve_all = 1;
        } else if (!strcmp(argv[i], "--local-dir") && i + 1 < argc) {
            local_dir = argv[++i];
        } else if (!strcmp(argv[i], "--evidence") && i + 1 < argc) {
            evidence_arg = argv[++i];
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' || script_path) {
            usage(stderr);
            fprintf(stderr, PROG ": unexpected argument %s\n", argv[i]);
            return 2;
        } else {
            script_path = argv[i];
        }
    }

    /* The script: parsed before anything is created. */
    char *text = script_path ? read_file(script_path) : NULL;
    if (script_path && !text) {
        perror(PROG ": cannot read the script");
        return 2;
    }
    cJSON *script = cJSON_Parse(text ? text : (const char *)agent_loop_default_json);
    free(text);
    if (!cJSON_IsArray(script)) {
        fprintf(stderr, PROG ": %s: not a JSON array of steps\n", script_path ? script_path : "built-in script");
        cJSON_Delete(script);
        return 2;
    }
    const cJSON *s;
    cJSON_ArrayForEach(s, script)
    {
        const cJSON *tool = cJSON_GetObjectItem(s, "tool"), *args = cJSON_GetObjectItem(s, "arguments");
        if (!cJSON_IsObject(s) || (tool && !cJSON_IsString(tool)) || (args && !cJSON_IsObject(args)) ||
            (!tool && !cJSON_IsString(cJSON_GetObjectItem(s, "say")))) {
            fprintf(stderr, PROG ": %s: each step is {\"say\"?: text, \"tool\": name, \"arguments\": {...}}\n",
                    script_path ? script_path : "built-in script");
            cJSON_Delete(script);
            return 2;
        }
    }

    /* The evidence file's absolute path (printed, for `ocisbx evidence verify`). */
    char cwd[PATH_MAX] = "";
    if (evidence_arg[0] != '/' && !getcwd(cwd, sizeof cwd)) {
        perror(PROG ": getcwd");
        cJSON_Delete(script);
        return 2;
    }
    char *evidence = malloc(strlen(cwd) + strlen(evidence_arg) + 2);
    if (!evidence) {
        cJSON_Delete(script);
        return 1;
    }
    strcpy(evidence, cwd);
    if (cwd[0])
        strcat(evidence, "/");
    strcat(evidence, evidence_arg);
    unlink(evidence); /* each run's file holds that run's chain alone */

    int rc = 1, last_exec_exit = -1, exec_ran = 0, last_ran = 0, failed_calls = 0, evidence_on = 0;
    ocisbx_client *client = NULL;
    ocisbx_backend_options *opts = NULL;
    ocisbx_harness_options *hopts = NULL;
    ocisbx_backend *b = NULL;
    ocisbx_harness *h = NULL;
    ocisbx_global_init();
    if (local_dir) {
        if (example_backend_options(NULL, &opts) || ocisbx_backend_local(local_dir, opts, &b)) {
            rc = example_fail(PROG, "local backend");
            goto out;
        }
    } else {
        const char *project = example_setting("project_id");
        if (!project) {
            fprintf(stderr, PROG ": set OCI_SANDBOX_PROJECT_ID, or use --local-dir DIR\n");
            rc = 2;
            goto out;
        }
        if (example_client(&client) || example_backend_options(client, &opts) ||
            ocisbx_backend_options_set_display_name(opts, PROG)) {
            rc = example_fail(PROG, "settings");
            goto out;
        }
        printf("endpoint: %s\n", ocisbx_client_endpoint(client));
        if (ocisbx_backend_create(project, opts, &b)) {
            rc = example_fail(PROG, "create sandbox");
            goto out;
        }
    }
    printf("workspace: %s\n", ocisbx_backend_label(b));
    if (ocisbx_harness_options_new(&hopts) || ocisbx_harness_options_require_person(hopts, OCISBX_LABEL_EXEC) ||
        ocisbx_harness_options_set_evidence_file(hopts, evidence) || ocisbx_harness_new(b, hopts, &h) ||
        ocisbx_harness_set_approval(h, approve, &l)) {
        rc = example_fail(PROG, "harness");
        goto out;
    }
    evidence_on = 1;
    printf("evidence file: %s\n", evidence);

    int n = 0;
    cJSON_ArrayForEach(s, script)
    {
        if (example_interrupted) {
            fprintf(stderr, PROG ": interrupted: stopping before step %d\n", n + 1);
            break;
        }
        n++;
        const char *say = cJSON_GetStringValue(cJSON_GetObjectItem(s, "say"));
        const char *tool = cJSON_GetStringValue(cJSON_GetObjectItem(s, "tool"));
        if (say)
            printf("\n[%d] model: %s\n", n, say);
        if (!tool)
            continue;
        const cJSON *a = cJSON_GetObjectItem(s, "arguments");
        char *args = a ? cJSON_PrintUnformatted(a) : NULL;
        printf("%s[%d] call:   %s %s\n", say ? "" : "\n", n, tool, args ? args : "{}");
        char *result = NULL;
        int crc = ocisbx_harness_call_json(h, tool, args ? args : "{}", &result);
        printf("[%d] result: %s\n", n, result ? result : "(none)");
        fflush(stdout);
        if (crc)
            failed_calls++;
        if (!strcmp(tool, "exec")) {
            cJSON *r = cJSON_Parse(result ? result : "");
            const cJSON *code = cJSON_GetObjectItem(r, "exit_code");
            /* a refused or failed exec ran nothing: no exit code */
            last_ran = cJSON_IsNumber(code);
            exec_ran += last_ran;
            last_exec_exit = last_ran ? code->valueint : -1;
            cJSON_Delete(r);
        }
        ocisbx_free(result);
        cJSON_free(args);
    }
    char exec_note[64];
    if (last_ran)
        snprintf(exec_note, sizeof exec_note, "the last exec exited %d", last_exec_exit);
    else
        snprintf(exec_note, sizeof exec_note, "%s", exec_ran ? "the last exec did not run" : "no exec ran");
    printf("\n%d steps, %d failed tool calls, %d held (%d approved); %s\n", n, failed_calls, l.held, l.approved,
           exec_note);
    rc = last_ran && last_exec_exit == 0 ? 0 : 1;
    if (rc && last_ran)
        fprintf(stderr, PROG ": the last exec call did not pass (exit code %d)\n", last_exec_exit);
    else if (rc)
        fprintf(stderr, PROG ": the last exec call did not pass (%s)\n", exec_note);

out:
    ocisbx_harness_free(h);
    if (b && ocisbx_backend_close(b)) /* a created sandbox is deleted here, also after a failure */
        rc = example_fail(PROG, "close the workspace");
    else if (b && !local_dir)
        printf("deleted the sandbox\n");
    if (evidence_on)
        printf("evidence file: %s\n", evidence);
    ocisbx_backend_free(b);
    ocisbx_harness_options_free(hopts);
    ocisbx_backend_options_free(opts);
    ocisbx_client_free(client);
    cJSON_Delete(script);
    free(evidence);
    ocisbx_global_cleanup();
    return rc;
}
