/* Fuzz target for the command-line reader of the policy's command rules
 * (src/harness/shell.c): any bytes. No crash, no leak; the commands it
 * finds are at most HARNESS_SHELL_CMDS_MAX, each a string no longer than
 * the line; and a policy whose allow rule matches everything decides every
 * line allow or hold (never something else). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness/shell.h"
#include "ocisbx/common.h"
#include "ocisbx/harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ocisbx_policy *policy(void)
{
    static ocisbx_policy *p;
    static const char yaml[] = "rules:\n  - label: workspace.exec\n    command: \".*\"\n    decision: allow\n"
                               "default: hold\n";
    if (!p && ocisbx_policy_load_yaml(yaml, sizeof yaml - 1, "fuzz", &p))
        abort();
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    shell_line l;
    int rc = harness_shell_parse((const char *)data, size, &l);
    if (rc) {
        if (rc != OCISBX_ENOMEM || l.n || l.cmds)
            abort();
        return 0;
    }
    if (l.n > HARNESS_SHELL_CMDS_MAX)
        abort();
    for (size_t i = 0; i < l.n; i++)
        if (!l.cmds[i] || strlen(l.cmds[i]) > size)
            abort();
    harness_shell_line_free(&l);
    /* as a command (NUL-terminated, as the harness gives it) */
    char *line = malloc(size + 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    line[size] = 0;
    int d = ocisbx_policy_decide(policy(), "exec", "workspace.exec", line, NULL, NULL);
    if (d != OCISBX_GATE_ALLOW && d != OCISBX_GATE_HOLD && d != OCISBX_ENOMEM)
        abort();
    free(line);
    return 0;
}
