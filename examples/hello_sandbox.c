/* hello_sandbox: one sandbox's life through the backend and the harness.
 *
 * Creates a sandbox (and waits until it is RUNNING), then through the
 * harness's JSON entry point, as a model would: writes a Python script,
 * runs it (it writes a result file), reads the result; then extends the
 * sandbox and closes it (deletes it), also when a step fails. Each tool
 * result is printed as the model would see it, and each evidence record as
 * the harness writes it (one JSON line per call, chained by SHA-256).
 *
 * Settings: see example_common.h (OCI_CONFIG_FILE, OCI_SANDBOX_PROFILE,
 * OCI_SANDBOX_ENDPOINT or OCI_SANDBOX_REGION, OCI_SANDBOX_PROJECT_ID).
 * Exit status 0 when every step worked and the result is the expected one. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "example_common.h"

#define PROG "hello_sandbox"

static void on_evidence(const char *record, size_t len, void *user_data)
{
    int *count = user_data;
    (*count)++;
    printf("evidence: %.*s\n", (int)len, record);
}

/* One tool call; prints the call and its result. 0 when the tool succeeded;
 * *out (may be NULL) keeps the result for the caller (ocisbx_free). */
static int step(ocisbx_harness *h, const char *tool, const char *args, char **out)
{
    char *result = NULL;
    printf("call:     %s %s\n", tool, args);
    int rc = ocisbx_harness_call_json(h, tool, args, &result);
    printf("result:   %s\n", result ? result : "(none)");
    if (rc)
        fprintf(stderr, PROG ": %s failed: %s\n", tool, result ? result : ocisbx_strerror(rc));
    if (out && !rc)
        *out = result;
    else
        ocisbx_free(result);
    return rc;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* the transcript as it happens, also into a pipe */
    const char *project = example_setting("project_id");
    if (!project) {
        fprintf(stderr, PROG ": set OCI_SANDBOX_PROJECT_ID (the project to create the sandbox in)\n");
        return 2;
    }
    int rc = 1, records = 0;
    ocisbx_client *client = NULL;
    ocisbx_backend_options *opts = NULL;
    ocisbx_backend *b = NULL;
    ocisbx_harness *h = NULL;
    char *read_back = NULL, *expires = NULL;

    ocisbx_global_init();
    if (example_client(&client) || example_backend_options(client, &opts) ||
        ocisbx_backend_options_set_display_name(opts, PROG) || ocisbx_backend_options_set_expiration(opts, "PT30M")) {
        rc = example_fail(PROG, "settings");
        goto out;
    }
    printf("endpoint: %s\n", ocisbx_client_endpoint(client));
    if (ocisbx_backend_create(project, opts, &b)) {
        rc = example_fail(PROG, "create sandbox");
        goto out;
    }
    printf("sandbox:  %s (RUNNING)\n", ocisbx_backend_label(b));
    if (ocisbx_harness_new(b, NULL, &h) || ocisbx_harness_set_evidence_callback(h, on_evidence, &records)) {
        rc = example_fail(PROG, "harness");
        goto out;
    }

    if (step(h, "write",
             "{\"path\": \"/workspace/hello/hello.py\", \"content\": \"import platform\\n"
             "with open('result.txt', 'w') as f:\\n"
             "    f.write('hello from python %s\\\\n' % platform.python_version())\\n"
             "print('wrote result.txt')\\n\"}",
             NULL) ||
        step(h, "exec", "{\"command\": \"python3 hello.py\", \"cwd\": \"/workspace/hello\", \"timeout\": 60}",
             NULL) ||
        step(h, "read", "{\"path\": \"/workspace/hello/result.txt\"}", &read_back))
        goto out;

    if (ocisbx_backend_extend(b, "PT15M", &expires)) {
        rc = example_fail(PROG, "extend");
        goto out;
    }
    printf("extended: expires %s\n", expires);
    rc = strstr(read_back, "hello from python 3.") ? 0 : 1;
    if (rc)
        fprintf(stderr, PROG ": the result file does not hold the expected text\n");

out:
    ocisbx_harness_free(h);
    if (b) { /* deletes the sandbox this program created, whatever happened */
        const char *label = ocisbx_backend_label(b);
        printf("closing:  %s\n", label);
        if (ocisbx_backend_close(b))
            rc = example_fail(PROG, "close (delete the sandbox)");
        else
            printf("deleted:  the sandbox is gone\n");
    }
    printf("%d evidence records\n", records);
    if (!rc && records != 3) {
        fprintf(stderr, PROG ": expected 3 evidence records, got %d\n", records);
        rc = 1;
    }
    ocisbx_free(read_back);
    ocisbx_free(expires);
    ocisbx_backend_free(b);
    ocisbx_backend_options_free(opts);
    ocisbx_client_free(client);
    ocisbx_global_cleanup();
    return rc;
}
