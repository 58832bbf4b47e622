/* What a model is given before it calls anything: the tool list in its
 * format, and the prompt fragment, both generated from the tool rows. */
#include <stdlib.h>
#include <string.h>

#include "harness/harness_int.h"
#include "harness/tools.h"
#include "ocisbx/backend.h"
#include "util/internal.h"

int ocisbx_harness_tools_json(const ocisbx_harness *h, const char *format, char **out)
{
    (void)h;
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "harness tools: NULL");
    *out = NULL;
    int f = harness_format_from_name(format);
    if (f < 0) {
        char shown[64];
        ocisbx_escape_shown(format, shown, sizeof shown);
        return ocisbx_fail(OCISBX_EINVAL, "harness tools: unknown format \"%s\" (ours, openai or anthropic)", shown);
    }
    char *text = NULL;
    int rc = harness_tools_json(f, &text);
    if (rc)
        return rc;
    *out = ocisbx_strdup(text); /* ocisbx_free-able */
    free(text);
    return *out ? 0 : ocisbx_fail_nomem();
}

/* What the workspace is, for the first sentence. */
static const char *workspace_kind(const ocisbx_backend *b)
{
    if (strcmp(ocisbx_backend_kind(b), "local") != 0)
        return "an OCI Generative AI sandbox";
    return ocisbx_backend_is_host_shell(b) ? "a directory on this machine, not isolated"
                                           : "a local directory, isolated";
}

/* exec's default timeout in seconds, from its row. */
static long long exec_timeout_default(void)
{
    const harness_tool *exec = harness_tool_find("exec");
    const harness_param *p = exec ? harness_param_find(exec->params, "timeout") : NULL;
    return p ? (long long)p->def_num : OCISBX_BACKEND_DEFAULT_EXEC_TIMEOUT_MS / 1000;
}

int ocisbx_harness_prompt(const ocisbx_harness *h, char **out)
{
    if (!h || !out)
        return ocisbx_fail(OCISBX_EINVAL, "harness prompt: NULL argument");
    ocisbx_buf b = OCISBX_BUF_INIT;
    size_t n;
    const harness_tool *t = harness_tools(&n);
    ocisbx_buf_appendf(&b,
                       "You work in a workspace: the directory /workspace of %s (%s). Every path you give is "
                       "absolute under /workspace, or relative to it; anything outside it is refused "
                       "(outside_workspace). /tmp is read-only; keep your files in /workspace.\n\n"
                       "Tools:\n",
                       ocisbx_backend_label(h->b), workspace_kind(h->b));
    for (size_t i = 0; i < n; i++)
        ocisbx_buf_appendf(&b, "- %s (%s): %s\n", t[i].name, t[i].label, t[i].description);
    ocisbx_buf_appendf(&b,
                       "\nCommands (exec) run with sh -c, stdout and stderr merged in the order written. Output "
                       "above %zu bytes is cut to its head and tail with a note giving the number of bytes left out. "
                       "A command is stopped at its timeout (%lld seconds unless you give one): it then has no "
                       "exit_code and timed_out is true. For long work give yield_ms (the call comes back after that "
                       "long and the command goes on as a job) or background=true, then use the job tool (action "
                       "wait). To change files, prefer edit (several edits at once with edits) or apply_patch (many "
                       "files at once); each change comes back as a diff.\n"
                       "Some calls need a person's approval or are denied by policy: a denied call returns the "
                       "error denied with the reason; do not retry it unchanged.\n",
                       ocisbx_backend_max_output_bytes(h->b), exec_timeout_default());
    if (!b.data) {
        ocisbx_buf_free(&b);
        return ocisbx_fail_nomem();
    }
    *out = ocisbx_buf_detach(&b);
    return *out ? 0 : ocisbx_fail_nomem();
}
