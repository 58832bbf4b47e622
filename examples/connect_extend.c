/* connect_extend: attach to a sandbox that already exists, extend it, run a
 * command in it, and leave it running.
 *
 *   connect_extend SANDBOX_ID [DURATION]     (DURATION: ISO 8601, default PT30M)
 *
 * A connected backend never deletes the sandbox: close ends only what this
 * program started. Settings: see example_common.h (no project is needed). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "example_common.h"

#define PROG "connect_extend"

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || argv[1][0] == '-') {
        fprintf(stderr, "usage: " PROG " SANDBOX_ID [DURATION]\n");
        return 2;
    }
    const char *sandbox_id = argv[1], *duration = argc > 2 ? argv[2] : "PT30M";
    int rc = 1;
    ocisbx_client *client = NULL;
    ocisbx_backend_options *opts = NULL;
    ocisbx_backend *b = NULL;
    ocisbx_exec_result *r = NULL;
    char *expires = NULL;

    ocisbx_global_init();
    if (example_client(&client) || example_backend_options(client, &opts)) {
        rc = example_fail(PROG, "settings");
        goto out;
    }
    if (ocisbx_backend_connect(sandbox_id, opts, &b)) {
        rc = example_fail(PROG, "connect");
        goto out;
    }
    printf("connected: %s\n", ocisbx_backend_label(b));
    if (ocisbx_backend_extend(b, duration, &expires)) {
        rc = example_fail(PROG, "extend");
        goto out;
    }
    printf("extended by %s: expires %s\n", duration, expires);
    const char *command = "echo \"hello from $(uname -s) in $(pwd)\"; ls -A /workspace | head -n 5";
    if (ocisbx_backend_exec(b, command, NULL, &r)) {
        rc = example_fail(PROG, "exec");
        goto out;
    }
    int code = -1;
    int finished = ocisbx_exec_result_has_exit_code(r, &code);
    printf("$ %s\n%s", command, ocisbx_exec_result_output(r, NULL));
    printf("exit code: %d\n", finished ? code : -1);
    rc = finished && code == 0 ? 0 : 1;

out:
    if (b && ocisbx_backend_close(b)) /* connected: the sandbox stays */
        rc = example_fail(PROG, "close");
    else if (b)
        printf("closed; %s is still there\n", sandbox_id);
    ocisbx_exec_result_free(r);
    ocisbx_free(expires);
    ocisbx_backend_free(b);
    ocisbx_backend_options_free(opts);
    ocisbx_client_free(client);
    ocisbx_global_cleanup();
    return rc;
}
