/* sandbox_quickstart: the life of one sandbox through the libocisbx C API.
 *
 * Creates a sandbox, waits until it runs, writes a file, runs a command
 * streaming its output as it is written, reads the file back, and deletes the
 * sandbox, also when a step fails: nothing is leaked.
 *
 * Configuration, as for the OCI CLI:
 *   OCI_CONFIG_FILE / OCI_SANDBOX_PROFILE  the config file and profile (~/.oci/config, DEFAULT;
 *                                          the OCI CLI's OCI_CLI_* names work too)
 *   OCI_SANDBOX_PROJECT_ID                 the project to create the sandbox in (required)
 *   OCI_SANDBOX_ENDPOINT or OCI_SANDBOX_REGION   where the service is
 * Against the local test tenancy: scripts/local-tenancy start DIR; source DIR/env.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocisbx/ocisbx.h>

static char *copy(const char *s)
{
    char *p = malloc(strlen(s) + 1);
    return p ? strcpy(p, s) : NULL;
}

static int fail(const char *what)
{
    const ocisbx_error *e = ocisbx_error_last();
    fprintf(stderr, "sandbox_quickstart: %s: %s\n", what, ocisbx_error_message(e));
    return 1;
}

/* Called for every event of the command, in order, exactly once each. */
static int on_event(const ocisbx_command_event *ev, void *user_data)
{
    int *exit_code = user_data;
    size_t len = 0;
    const char *data = ocisbx_command_event_data(ev, &len);
    switch (ocisbx_command_event_kind(ev)) {
    case OCISBX_EVENT_STDOUT:
        fwrite(data, 1, len, stdout);
        fflush(stdout);
        break;
    case OCISBX_EVENT_STDERR: fwrite(data, 1, len, stderr); break;
    case OCISBX_EVENT_FINISHED: ocisbx_command_event_exit_code(ev, exit_code); break;
    default: break;
    }
    return 0; /* non-zero would cancel the stream */
}

int main(void)
{
    /* the library's settings table: $OCI_SANDBOX_PROJECT_ID */
    const char *project = ocisbx_setting_lookup("project_id", NULL, NULL, NULL);
    if (!project) {
        fprintf(stderr, "sandbox_quickstart: set OCI_SANDBOX_PROJECT_ID\n");
        return 2;
    }
    int rc = 1;
    ocisbx_settings *settings = NULL;
    ocisbx_client *client = NULL;
    ocisbx_create_sandbox_details *details = NULL;
    ocisbx_run_command_details *cmd = NULL;
    ocisbx_sandbox *sandbox = NULL;
    char *sandbox_id = NULL;

    ocisbx_global_init();
    /* The one settings resolver: config file, profile (a session-token
     * profile signs with its token), endpoint or region, as the OCI CLI
     * reads them; plain http only to a loopback endpoint (the local tenancy). */
    if (ocisbx_settings_new(&settings) || ocisbx_settings_client_new(settings, NULL, &client)) {
        rc = fail("client");
        goto out;
    }
    printf("endpoint: %s\n", ocisbx_client_endpoint(client));

    if (ocisbx_create_sandbox_details_new(&details) ||
        ocisbx_create_sandbox_details_set_display_name(details, "quickstart") ||
        ocisbx_create_sandbox_details_set_expires_in_minutes(details, 30) ||
        ocisbx_client_create_sandbox(client, project, details, &sandbox)) {
        rc = fail("create sandbox");
        goto out;
    }
    sandbox_id = copy(ocisbx_sandbox_id(sandbox));
    printf("created %s (%s)\n", sandbox_id, ocisbx_sandbox_lifecycle_state(sandbox));
    ocisbx_sandbox_free(sandbox);
    sandbox = NULL;
    if (ocisbx_client_wait_sandbox(client, sandbox_id, "RUNNING", 300000, 1000, &sandbox)) {
        rc = fail("wait for RUNNING");
        goto out;
    }
    printf("running, expires %s\n", ocisbx_sandbox_time_expires(sandbox));

    static const char script[] = "import sys\nprint('hello from', sys.platform)\nprint('oops', file=sys.stderr)\n";
    if (ocisbx_client_write_file(client, sandbox_id, "/workspace/hello.py", script, strlen(script), NULL)) {
        rc = fail("write file");
        goto out;
    }

    int exit_code = -1;
    if (ocisbx_run_command_details_new("python3 hello.py && exit 7", &cmd) ||
        ocisbx_run_command_details_set_cwd(cmd, "/workspace") ||
        ocisbx_run_command_details_set_timeout(cmd, "PT2M") ||
        ocisbx_client_run_command_and_stream(client, sandbox_id, cmd, on_event, &exit_code, NULL)) {
        rc = fail("run command");
        goto out;
    }
    printf("exit code: %d\n", exit_code);

    unsigned char *back = NULL;
    size_t back_len = 0;
    if (ocisbx_client_read_file(client, sandbox_id, "/workspace/hello.py", &back, &back_len)) {
        rc = fail("read file");
        goto out;
    }
    int same = back_len == strlen(script) && memcmp(back, script, back_len) == 0;
    ocisbx_free(back);
    printf("read back %zu bytes, %s\n", back_len, same ? "identical" : "DIFFERENT");
    rc = (same && exit_code == 7) ? 0 : 1;

out:
    if (sandbox_id) { /* always clean up what we created */
        if (ocisbx_client_delete_sandbox(client, sandbox_id) == 0)
            printf("deleted %s\n", sandbox_id);
        else
            rc = fail("delete sandbox");
    }
    free(sandbox_id);
    ocisbx_sandbox_free(sandbox);
    ocisbx_run_command_details_free(cmd);
    ocisbx_create_sandbox_details_free(details);
    ocisbx_client_free(client);
    ocisbx_settings_free(settings);
    ocisbx_global_cleanup();
    return rc;
}
