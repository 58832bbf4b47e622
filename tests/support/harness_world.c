/* The harness's integration-test world (see harness_world.h). */
#include "harness_world.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu_client.h"
#include "test_keys.h"

static void on_log(int level, const char *line, void *ud)
{
    (void)level;
    harness_world *w = ud;
    w->log_lines++;
    if (strstr(line, HARNESS_WORLD_SECRET)) {
        w->secret_logged++;
        fprintf(stderr, "harness_world: a log line holds the planted secret: %s\n", line);
    }
    for (size_t i = 0; i < 2; i++)
        if (w->watch[i] && strstr(line, w->watch[i])) {
            w->watch_logged++;
            fprintf(stderr, "harness_world: a log line holds a watched value: %s\n", line);
        }
}

static ocisbx_backend_options *options(void)
{
    ocisbx_backend_options *o = NULL;
    if (ocisbx_backend_options_new(&o) ||
        ocisbx_backend_options_add_env(o, "BACKEND_SECRET", HARNESS_WORLD_SECRET, 1))
        return NULL;
    return o;
}

int harness_world_setup_local(void **state)
{
    harness_world *w = calloc(1, sizeof *w);
    snprintf(w->dir, sizeof w->dir, "/tmp/it_harness_XXXXXX");
    if (!mkdtemp(w->dir))
        return -1;
    if (geteuid() == 0 && chown(w->dir, 65534, 65534) != 0)
        return -1;
    ocisbx_backend_options *o = options();
    int rc = ocisbx_backend_local(w->dir, o, &w->b);
    ocisbx_backend_options_free(o);
    if (rc)
        return -1;
    snprintf(w->evidence, sizeof w->evidence, "/tmp/it_harness_ev_local_%d.jsonl", (int)getpid());
    unlink(w->evidence);
    ocisbx_set_log(on_log, OCISBX_LOG_DEBUG, w);
    *state = w;
    return 0;
}

int harness_world_setup_oci(void **state)
{
    harness_world *w = calloc(1, sizeof *w);
    emu_fixture_options eo = {0};
    eo.extra_yaml = "limits:\n  create_delay_ms: 20\n  stop_delay_ms: 10\n";
    if (emu_fixture_start(&eo, &w->emu) || emu_client_new(w->emu, 0, &w->c))
        return -1;
    ocisbx_backend_options *o = options();
    ocisbx_backend_options_set_client(o, w->c);
    ocisbx_backend_options_set_region(o, EMU_FIXTURE_REGION);
    ocisbx_backend_options_set_poll_interval_ms(o, 50);
    int rc = ocisbx_backend_create(EMU_FIXTURE_PROJECT, o, &w->b);
    ocisbx_backend_options_free(o);
    if (rc)
        return -1;
    snprintf(w->evidence, sizeof w->evidence, "/tmp/it_harness_ev_oci_%d.jsonl", (int)getpid());
    unlink(w->evidence);
    ocisbx_set_log(on_log, OCISBX_LOG_DEBUG, w);
    *state = w;
    return 0;
}

int harness_world_teardown(void **state)
{
    harness_world *w = *state;
    ocisbx_set_log(NULL, 0, NULL);
    int rc = ocisbx_backend_close(w->b) ? -1 : 0;
    ocisbx_backend_free(w->b);
    if (w->c)
        ocisbx_client_free(w->c);
    if (w->emu) {
        if (emu_fixture_stop(w->emu))
            rc = -1;
        emu_fixture_free(w->emu);
    }
    if (w->dir[0])
        test_rm_rf(w->dir);
    unlink(w->evidence);
    free(w);
    return rc;
}

static void on_record(const char *line, size_t len, void *ud)
{
    harness_world *w = ud;
    w->records++;
    snprintf(w->last_record, sizeof w->last_record, "%.*s", (int)len, line);
}

ocisbx_harness *harness_world_harness(harness_world *w, ocisbx_harness_options *o)
{
    ocisbx_harness_options *own = NULL;
    if (!o) {
        assert_int_equal(ocisbx_harness_options_new(&own), 0);
        o = own;
    }
    assert_int_equal(ocisbx_harness_options_set_evidence_file(o, w->evidence), 0);
    ocisbx_harness *h = NULL;
    if (ocisbx_harness_new(w->b, o, &h))
        fail_msg("harness: %s", ocisbx_error_message(ocisbx_error_last()));
    ocisbx_harness_options_free(own);
    ocisbx_harness_set_evidence_callback(h, on_record, w);
    return h;
}

/* Calls a tool; returns the parsed result (cJSON_Delete). */
cJSON *harness_world_call(ocisbx_harness *h, const char *tool, const char *args, int want_rc)
{
    char *out = NULL;
    int rc = ocisbx_harness_call_json(h, tool, args, &out);
    assert_non_null(out);
    if (rc != want_rc)
        fail_msg("%s %s: rc %d, want %d: %s", tool, args, rc, want_rc, out);
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    ocisbx_free(out);
    return j;
}

const char *harness_world_err_code(const cJSON *j)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "code"));
}

void harness_world_expect_error(ocisbx_harness *h, const char *tool, const char *args, const char *code)
{
    char *out = NULL;
    int rc = ocisbx_harness_call_json(h, tool, args, &out);
    assert_int_not_equal(rc, 0);
    cJSON *j = cJSON_Parse(out);
    if (!harness_world_err_code(j) || strcmp(harness_world_err_code(j), code))
        fail_msg("%s %s: want %s, got %s", tool, args, code, out);
    assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "message")));
    cJSON_Delete(j);
    ocisbx_free(out);
}
