/* Fuzz target: every model parser (the model table's schemas), the typed
 * getters over what parses, and the request-details parsers. The first
 * byte picks the model; the rest is the JSON text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/model_internal.h"
#include "ocisbx/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void touch(const char *s)
{
    volatile size_t n = s ? strlen(s) : 0;
    (void)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t pick = data[0] % (ocisbx_model_defs_count + 2);
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    if (pick == ocisbx_model_defs_count) {
        ocisbx_create_sandbox_details *d = NULL;
        if (ocisbx_create_sandbox_details_from_json(text, len, &d) == 0) {
            char *j = NULL;
            ocisbx_create_sandbox_details_to_json(d, &j);
            ocisbx_free(j);
        }
        ocisbx_create_sandbox_details_free(d);
        return 0;
    }
    if (pick == ocisbx_model_defs_count + 1) {
        ocisbx_run_command_details *d = NULL;
        if (ocisbx_run_command_details_from_json(text, len, &d) == 0)
            ocisbx_run_command_details_add_arg(d, "x");
        ocisbx_run_command_details_free(d);
        return 0;
    }
    ocisbx_model *m = NULL;
    if (ocisbx_model_parse(ocisbx_model_defs[pick], text, len, &m) != 0)
        return 0;
    char *j = NULL;
    ocisbx_model_to_json(m, &j);
    ocisbx_free(j);
    /* every getter must be safe on whatever validated */
    const ocisbx_sandbox *s = (const ocisbx_sandbox *)(void *)m;
    touch(ocisbx_sandbox_id(s));
    touch(ocisbx_sandbox_lifecycle_state(s));
    for (size_t i = 0; i < ocisbx_sandbox_published_port_count(s) + 1; i++) {
        (void)ocisbx_sandbox_published_port(s, i);
        touch(ocisbx_sandbox_published_port_url(s, i));
    }
    int64_t v;
    int code;
    ocisbx_sandbox_has_expires_in_minutes(s, &v);
    const ocisbx_command *c = (const ocisbx_command *)(void *)m;
    ocisbx_command_has_exit_code(c, &code);
    touch(ocisbx_command_stdout(c));
    touch(ocisbx_command_stderr(c));
    for (size_t i = 0; i < ocisbx_command_arg_count(c) + 1; i++)
        touch(ocisbx_command_arg(c, i));
    const ocisbx_command_event *e = (const ocisbx_command_event *)(void *)m;
    (void)ocisbx_command_event_seq(e);
    (void)ocisbx_command_event_kind(e);
    touch(ocisbx_command_event_data(e, NULL));
    { /* every byte the lengths promise is readable (NULs included) */
        size_t n = 0;
        const char *d = ocisbx_command_event_data(e, &n);
        volatile char sum = 0;
        for (size_t i = 0; i < n; i++)
            sum = (char)(sum ^ d[i]);
        const ocisbx_command_output *oo = (const ocisbx_command_output *)(void *)m;
        const char *so = ocisbx_command_output_stdout(oo);
        for (size_t i = 0; so && i < ocisbx_command_output_stdout_len(oo); i++)
            sum = (char)(sum ^ so[i]);
        const char *cs = ocisbx_command_stdout(c);
        for (size_t i = 0; cs && i < ocisbx_command_stdout_len(c); i++)
            sum = (char)(sum ^ cs[i]);
        (void)sum;
    }
    ocisbx_command_event_has_exit_code(e, &code);
    const ocisbx_command_output *o = (const ocisbx_command_output *)(void *)m;
    ocisbx_command_output_has_last_seq(o, &v);
    ocisbx_snapshot_has_size_bytes((const ocisbx_snapshot *)(void *)m, &v);
    const ocisbx_sandbox_collection *l = (const ocisbx_sandbox_collection *)(void *)m;
    for (size_t i = 0; i < ocisbx_sandbox_collection_count(l); i++)
        touch(ocisbx_sandbox_id(ocisbx_sandbox_collection_item(l, i)));
    ocisbx_model_free(m);
    return 0;
}
