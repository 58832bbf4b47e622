/* Every sandbox operation through the api layer against ocisbx-emulator
 * over HTTPS (private CA), signed with the API key of the fixture's
 * config file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu_fixture.h"
#include "util/internal.h"
#include "ocisbx/api.h"
#include "ocisbx/util.h"
#include "par_run.h"

typedef struct world {
    emu_fixture *emu;
    ocisbx_client *c;
    char sandbox[128]; /* a RUNNING sandbox shared by the command and file tests */
} world;

static ocisbx_client *client_for(emu_fixture *emu, int ndjson)
{
    ocisbx_config *cfg = NULL;
    ocisbx_credentials *cr = NULL;
    ocisbx_http_options *h = NULL;
    ocisbx_client_options *o = NULL;
    ocisbx_client *c = NULL;
    assert_int_equal(ocisbx_config_load(emu_fixture_config_path(emu), NULL, &cfg), 0);
    assert_int_equal(ocisbx_credentials_api_key_from_config(cfg, &cr), 0);
    assert_int_equal(ocisbx_http_options_new(&h), 0);
    assert_int_equal(ocisbx_http_options_set_ca_bundle(h, emu_fixture_ca_path(emu)), 0);
    assert_int_equal(ocisbx_http_options_set_backoff_ms(h, 50, 200), 0);
    assert_int_equal(ocisbx_client_options_new(&o), 0);
    assert_int_equal(ocisbx_client_options_set_endpoint(o, emu_fixture_url(emu)), 0);
    assert_int_equal(ocisbx_client_options_set_http_options(o, h), 0);
    assert_int_equal(ocisbx_client_options_set_credentials(o, cr), 0);
    assert_int_equal(ocisbx_client_options_set_prefer_ndjson(o, ndjson), 0);
    assert_int_equal(ocisbx_client_new(o, &c), 0);
    ocisbx_client_options_free(o);
    ocisbx_http_options_free(h);
    ocisbx_credentials_free(cr);
    ocisbx_config_free(cfg);
    return c;
}

static void check(int rc, const char *what)
{
    if (rc)
        fail_msg("%s: %s", what, ocisbx_error_message(ocisbx_error_last()));
}

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    emu_fixture_options o = {0};
    o.https = true;
    o.extra_yaml = "limits:\n  create_delay_ms: 50\n  stop_delay_ms: 20\n";
    if (emu_fixture_start(&o, &w->emu) != 0)
        return -1;
    if (strncmp(emu_fixture_url(w->emu), "https://", 8) != 0)
        return -1;
    w->c = client_for(w->emu, 0);
    ocisbx_create_sandbox_details *d = NULL;
    ocisbx_sandbox *s = NULL;
    check(ocisbx_create_sandbox_details_new(&d), "details");
    check(ocisbx_create_sandbox_details_set_display_name(d, "shared"), "name");
    check(ocisbx_create_sandbox_details_add_env(d, "SBX_VAR", "from-sandbox"), "env");
    check(ocisbx_client_create_sandbox(w->c, EMU_FIXTURE_PROJECT, d, &s), "create shared sandbox");
    snprintf(w->sandbox, sizeof w->sandbox, "%s", ocisbx_sandbox_id(s));
    ocisbx_sandbox_free(s);
    ocisbx_create_sandbox_details_free(d);
    check(ocisbx_client_wait_sandbox(w->c, w->sandbox, "RUNNING", 60000, 50, NULL), "wait shared sandbox");
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    ocisbx_client_free(w->c);
    int st = emu_fixture_stop(w->emu);
    emu_fixture_free(w->emu);
    free(w);
    return st == 0 ? 0 : -1;
}

static void test_sandbox_lifecycle(void **state)
{
    world *w = *state;
    ocisbx_create_sandbox_details *d = NULL;
    check(ocisbx_create_sandbox_details_new(&d), "details");
    check(ocisbx_create_sandbox_details_set_display_name(d, "life cycle"), "name");
    check(ocisbx_create_sandbox_details_set_shape(d, "SMALL"), "shape");
    check(ocisbx_create_sandbox_details_set_runtime(d, "python-3.11"), "runtime");
    check(ocisbx_create_sandbox_details_set_expires_in_minutes(d, 60), "minutes");
    ocisbx_sandbox *s = NULL;
    check(ocisbx_client_create_sandbox(w->c, EMU_FIXTURE_PROJECT, d, &s), "create");
    ocisbx_create_sandbox_details_free(d);
    char id[128];
    snprintf(id, sizeof id, "%s", ocisbx_sandbox_id(s));
    assert_int_equal(strncmp(id, "sbx-", 4), 0);
    assert_string_equal(ocisbx_sandbox_lifecycle_state(s), "CREATING");
    assert_string_equal(ocisbx_sandbox_display_name(s), "life cycle");
    ocisbx_sandbox_free(s);
    check(ocisbx_client_wait_sandbox(w->c, id, "RUNNING", 60000, 50, &s), "wait running");
    char expires[64];
    snprintf(expires, sizeof expires, "%s", ocisbx_sandbox_time_expires(s));
    ocisbx_sandbox_free(s);

    check(ocisbx_client_get_sandbox(w->c, id, &s), "get");
    assert_string_equal(ocisbx_sandbox_id(s), id);
    assert_string_equal(ocisbx_sandbox_project_id(s), EMU_FIXTURE_PROJECT);
    assert_string_equal(ocisbx_sandbox_shape(s), "SMALL");
    int64_t minutes = 0;
    assert_int_equal(ocisbx_sandbox_has_expires_in_minutes(s, &minutes), 1);
    assert_int_equal(minutes, 60);
    ocisbx_sandbox_free(s);
    assert_non_null(ocisbx_client_last_request_id(w->c));

    /* list with filters, one page and every page */
    ocisbx_list_options *lo = NULL;
    check(ocisbx_list_options_new(&lo), "list options");
    check(ocisbx_list_options_set(lo, "projectId", EMU_FIXTURE_PROJECT), "projectId");
    check(ocisbx_list_options_set(lo, "displayName", "life cycle"), "displayName");
    ocisbx_sandbox_collection *l = NULL;
    check(ocisbx_client_list_sandboxes(w->c, lo, &l), "list");
    assert_int_equal(ocisbx_sandbox_collection_count(l), 1);
    assert_string_equal(ocisbx_sandbox_id(ocisbx_sandbox_collection_item(l, 0)), id);
    ocisbx_sandbox_collection_free(l);
    check(ocisbx_list_options_set(lo, "displayName", NULL), "clear");
    check(ocisbx_list_options_set_limit(lo, 1), "limit");
    ocisbx_sandbox_iter *it = NULL;
    check(ocisbx_client_iter_sandboxes(w->c, lo, &it), "iter");
    const ocisbx_sandbox *item;
    int n = 0, found = 0;
    while (ocisbx_sandbox_iter_next(it, &item) == 0 && item) {
        n++;
        found += strcmp(ocisbx_sandbox_id(item), id) == 0 || strcmp(ocisbx_sandbox_id(item), w->sandbox) == 0;
    }
    ocisbx_sandbox_iter_free(it);
    ocisbx_list_options_free(lo);
    assert_true(n >= 2); /* two pages of one at least */
    assert_int_equal(found, 2);

    check(ocisbx_client_update_sandbox(w->c, id, "renamed", &s), "update");
    assert_string_equal(ocisbx_sandbox_display_name(s), "renamed");
    ocisbx_sandbox_free(s);

    check(ocisbx_client_extend_sandbox(w->c, id, "PT30M", &s), "extend");
    assert_string_not_equal(ocisbx_sandbox_time_expires(s), expires);
    ocisbx_sandbox_free(s);
    /* beyond 48 h from creation: a 400 at once, request id in the message */
    assert_int_not_equal(ocisbx_client_extend_sandbox(w->c, id, "P3D", NULL), 0);
    assert_int_equal(ocisbx_error_http_status(ocisbx_error_last()), 400);
    assert_non_null(ocisbx_error_request_id(ocisbx_error_last()));
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), ocisbx_error_request_id(ocisbx_error_last())));

    check(ocisbx_client_suspend_sandbox(w->c, id), "suspend");
    check(ocisbx_client_wait_sandbox(w->c, id, "SUSPENDED", 60000, 50, NULL), "wait suspended");
    check(ocisbx_client_resume_sandbox(w->c, id), "resume");
    check(ocisbx_client_wait_sandbox(w->c, id, "RUNNING", 60000, 50, NULL), "wait resumed");
    check(ocisbx_client_stop_sandbox(w->c, id, 0), "stop");
    check(ocisbx_client_wait_sandbox(w->c, id, "STOPPED", 60000, 50, NULL), "wait stopped");
    /* waiting for RUNNING on a stopped sandbox times out (STOPPED is not terminal) */
    assert_int_equal(ocisbx_client_wait_sandbox(w->c, id, "RUNNING", 200, 50, NULL), OCISBX_ETIMEOUT);
    check(ocisbx_client_delete_sandbox(w->c, id), "delete");
    check(ocisbx_client_wait_sandbox(w->c, id, "DELETED", 60000, 50, NULL), "wait deleted");
    assert_int_equal(ocisbx_client_get_sandbox(w->c, id, &s), OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_error_http_status(ocisbx_error_last()), 404);

    /* -1 disables expiry [public]: the client passes it through, the
     * service keeps the sandbox without a timeExpires */
    check(ocisbx_create_sandbox_details_from_json("{}", 2, &d), "details");
    check(ocisbx_create_sandbox_details_set_expires_in_minutes(d, OCISBX_EXPIRES_NEVER), "-1");
    check(ocisbx_client_create_sandbox(w->c, EMU_FIXTURE_PROJECT, d, &s), "create without expiry");
    ocisbx_create_sandbox_details_free(d);
    int64_t mins = 0;
    assert_int_equal(ocisbx_sandbox_has_expires_in_minutes(s, &mins), 1);
    assert_int_equal(mins, -1);
    assert_null(ocisbx_sandbox_time_expires(s));
    /* if-match: the etag of get; a stale one is 412 */
    char nid[128];
    snprintf(nid, sizeof nid, "%s", ocisbx_sandbox_id(s));
    ocisbx_sandbox_free(s);
    check(ocisbx_client_wait_sandbox(w->c, nid, "RUNNING", 60000, 50, &s), "wait running");
    char etag[128];
    assert_non_null(ocisbx_sandbox_etag(s));
    snprintf(etag, sizeof etag, "%s", ocisbx_sandbox_etag(s));
    ocisbx_sandbox_free(s);
    assert_int_equal(ocisbx_client_update_sandbox_if_match(w->c, nid, "x", "\"stale\"", NULL), OCISBX_ECONFLICT);
    assert_int_equal(ocisbx_error_http_status(ocisbx_error_last()), 412);
    check(ocisbx_client_update_sandbox_if_match(w->c, nid, "x", etag, &s), "update if-match");
    assert_string_equal(ocisbx_sandbox_display_name(s), "x");
    ocisbx_sandbox_free(s);
    assert_int_equal(ocisbx_client_stop_sandbox_if_match(w->c, nid, 1, etag), OCISBX_ECONFLICT); /* now stale */
    assert_int_equal(ocisbx_error_http_status(ocisbx_error_last()), 412);
    check(ocisbx_client_delete_sandbox(w->c, nid), "delete the one without expiry");
}

typedef struct collected {
    ocisbx_buf out, err, order;
    int64_t last_seq;
    int exit_code;
    bool finished;
    bool dup;
} collected;

static int collect(const ocisbx_command_event *ev, void *ud)
{
    collected *c = ud;
    if (ocisbx_command_event_seq(ev) <= c->last_seq)
        c->dup = true;
    c->last_seq = ocisbx_command_event_seq(ev);
    size_t len;
    const char *d = ocisbx_command_event_data(ev, &len);
    switch (ocisbx_command_event_kind(ev)) {
    case OCISBX_EVENT_STDOUT:
        ocisbx_buf_append(&c->out, d, len);
        ocisbx_buf_append(&c->order, "o", 1);
        break;
    case OCISBX_EVENT_STDERR:
        ocisbx_buf_append(&c->err, d, len);
        ocisbx_buf_append(&c->order, "e", 1);
        break;
    case OCISBX_EVENT_FINISHED:
        c->finished = true;
        ocisbx_command_event_has_exit_code(ev, &c->exit_code);
        break;
    default: break;
    }
    return 0;
}

static void collected_free(collected *c)
{
    ocisbx_buf_free(&c->out);
    ocisbx_buf_free(&c->err);
    ocisbx_buf_free(&c->order);
}

/* The waiter on the derived state: the emulator sends no lifecycleState. */
static void wait_command(ocisbx_client *c, const char *sbx, const char *cmd, int state)
{
    ocisbx_command *cm = NULL;
    check(ocisbx_client_wait_command(c, sbx, cmd, state, 60000, 50, &cm), "wait command");
    assert_int_equal(ocisbx_command_state(cm), state);
    char *json = NULL;
    check(ocisbx_command_to_json(cm, &json), "to_json");
    assert_null(strstr(json, "lifecycleState"));
    ocisbx_free(json);
    ocisbx_command_free(cm);
}

static void test_commands(void **state)
{
    world *w = *state;
    ocisbx_run_command_details *d = NULL;
    ocisbx_command *cm = NULL;
    check(ocisbx_run_command_details_new("echo \"$0:$SBX_VAR:$CMD_VAR\"; echo err >&2; pwd; exit 3", &d), "details");
    check(ocisbx_run_command_details_add_env(d, "CMD_VAR", "per command"), "env");
    check(ocisbx_run_command_details_set_cwd(d, "/workspace"), "cwd");
    check(ocisbx_run_command_details_set_timeout(d, "PT1M"), "timeout");

    /* run: returns at once, with the SandboxCommandIdentifier {id} only */
    check(ocisbx_client_run_command(w->c, w->sandbox, d, &cm), "run");
    char cid[128];
    snprintf(cid, sizeof cid, "%s", ocisbx_command_id(cm));
    char *idj = NULL;
    check(ocisbx_command_to_json(cm, &idj), "to_json");
    char want_idj[200];
    snprintf(want_idj, sizeof want_idj, "{\"id\":\"%s\"}", cid);
    assert_string_equal(idj, want_idj);
    ocisbx_free(idj);
    assert_int_equal(ocisbx_command_state(cm), OCISBX_COMMAND_NOT_STARTED);
    ocisbx_command_free(cm);
    wait_command(w->c, w->sandbox, cid, OCISBX_COMMAND_FINISHED); /* exit 3 */
    check(ocisbx_client_get_command(w->c, w->sandbox, cid, &cm), "get");
    int code = -1;
    assert_int_equal(ocisbx_command_has_exit_code(cm, &code), 1);
    assert_int_equal(code, 3);
    ocisbx_command_free(cm);

    ocisbx_command_output *out = NULL;
    check(ocisbx_client_get_command_output(w->c, w->sandbox, cid, OCISBX_SEQ_START, &out), "output");
    assert_non_null(strstr(ocisbx_command_output_stdout(out), ":from-sandbox:per command\n/workspace\n"));
    assert_string_equal(ocisbx_command_output_stderr(out), "err\n");
    int64_t last = 0;
    assert_int_equal(ocisbx_command_output_has_last_seq(out, &last), 1);
    assert_true(last >= 3);
    ocisbx_command_output_free(out);

    /* events from the start, and from a later seq */
    collected c = {0};
    check(ocisbx_client_stream_command_events(w->c, w->sandbox, cid, OCISBX_SEQ_START, 0, collect, &c), "events");
    assert_true(c.finished);
    assert_false(c.dup);
    assert_int_equal(c.exit_code, 3);
    assert_non_null(strstr(c.out.data, "per command"));
    assert_string_equal(c.err.data, "err\n");
    collected_free(&c);
    memset(&c, 0, sizeof c);
    check(ocisbx_client_stream_command_events(w->c, w->sandbox, cid, last, 0, collect, &c), "events from last");
    assert_true(c.finished);
    assert_null(c.out.data);
    collected_free(&c);

    /* run and wait: output and exit code in the answer */
    check(ocisbx_client_run_command_and_wait(w->c, w->sandbox, d, &cm), "run and wait");
    assert_int_equal(ocisbx_command_has_exit_code(cm, &code), 1);
    assert_int_equal(code, 3);
    assert_non_null(ocisbx_command_stdout(cm));
    assert_non_null(strstr(ocisbx_command_stdout(cm), "per command"));
    ocisbx_command_free(cm);
    ocisbx_run_command_details_free(d);

    /* run and stream: stdout and stderr in the order written */
    check(ocisbx_run_command_details_new("for i in 1 2 3; do echo out$i; echo err$i >&2; sleep 0.05; done", &d), "d");
    memset(&c, 0, sizeof c);
    char *stream_cid = NULL;
    check(ocisbx_client_run_command_and_stream(w->c, w->sandbox, d, collect, &c, &stream_cid), "run and stream");
    ocisbx_run_command_details_free(d);
    assert_non_null(stream_cid);
    assert_true(c.finished);
    assert_int_equal(c.exit_code, 0);
    assert_string_equal(c.out.data, "out1\nout2\nout3\n");
    assert_string_equal(c.err.data, "err1\nerr2\nerr3\n");
    assert_string_equal(c.order.data, "oeoeoe");
    collected_free(&c);

    /* list: the three commands, on pages of one */
    ocisbx_list_options *lo = NULL;
    check(ocisbx_list_options_new(&lo), "lo");
    check(ocisbx_list_options_set_limit(lo, 1), "limit");
    ocisbx_command_iter *it = NULL;
    check(ocisbx_client_iter_commands(w->c, w->sandbox, lo, &it), "iter");
    const ocisbx_command *item;
    int n = 0, seen = 0;
    int rc;
    while ((rc = ocisbx_command_iter_next(it, &item)) == 0 && item) {
        n++;
        seen += strcmp(ocisbx_command_id(item), cid) == 0 || strcmp(ocisbx_command_id(item), stream_cid) == 0;
    }
    check(rc, "iter next");
    ocisbx_command_iter_free(it);
    ocisbx_command_collection *cl = NULL;
    check(ocisbx_client_list_commands(w->c, w->sandbox, lo, &cl), "list");
    assert_int_equal(ocisbx_command_collection_count(cl), 1);
    assert_non_null(ocisbx_command_collection_next_page(cl));
    ocisbx_command_collection_free(cl);
    ocisbx_list_options_free(lo);
    assert_true(n >= 3);
    assert_int_equal(seen, 2);
    ocisbx_free(stream_cid);

    /* cancel a long command */
    check(ocisbx_run_command_details_new("sleep 30", &d), "d");
    check(ocisbx_client_run_command(w->c, w->sandbox, d, &cm), "run sleep");
    snprintf(cid, sizeof cid, "%s", ocisbx_command_id(cm));
    ocisbx_command_free(cm);
    ocisbx_run_command_details_free(d);
    check(ocisbx_client_cancel_command(w->c, w->sandbox, cid), "cancel");
    /* waiting for an exit code fails at once: a canceled command has none */
    int wrc = ocisbx_client_wait_command(w->c, w->sandbox, cid, OCISBX_COMMAND_FINISHED, 60000, 50, NULL);
    if (wrc != OCISBX_ECONFLICT)
        wait_command(w->c, w->sandbox, cid, OCISBX_COMMAND_FINISHED_NO_EXIT_CODE);
    wait_command(w->c, w->sandbox, cid, OCISBX_COMMAND_FINISHED_NO_EXIT_CODE);

    /* the service's timeout backstop: TIMED_OUT, no exit code */
    check(ocisbx_run_command_details_new("sleep 30", &d), "d");
    check(ocisbx_run_command_details_set_timeout(d, "PT0.3S"), "timeout");
    check(ocisbx_client_run_command_and_wait(w->c, w->sandbox, d, &cm), "run timeout");
    ocisbx_run_command_details_free(d);
    assert_int_equal(ocisbx_command_state(cm), OCISBX_COMMAND_FINISHED_NO_EXIT_CODE);
    assert_string_equal(ocisbx_command_lifecycle_state(cm), "FINISHED_NO_EXIT_CODE");
    assert_int_equal(ocisbx_command_has_exit_code(cm, &code), 0);
    ocisbx_command_free(cm);

    /* an unknown command id */
    assert_int_equal(ocisbx_client_get_command(w->c, w->sandbox, "cmd-nope", &cm), OCISBX_ENOTFOUND);
}

static const char *const odd_paths[] = {
    "/workspace/plain.txt",
    "/workspace/with space.txt",
    "/workspace/per%cent+plus.txt",
    "/workspace/hash#and?q=1&x",
    "/workspace/d\xc3\xa9j\xc3\xa0/\xe2\x9c\x93.txt",
    "/workspace/deep/er/dir/f",
};

typedef struct chunks {
    const char *data;
    size_t len, at;
} chunks;

static int64_t chunk_read(void *buf, size_t cap, void *ud)
{
    chunks *c = ud;
    size_t n = c->len - c->at < cap ? c->len - c->at : cap;
    if (n > 1000)
        n = 1000; /* small reads on purpose */
    memcpy(buf, c->data + c->at, n);
    c->at += n;
    return (int64_t)n;
}

static int chunk_rewind(void *ud)
{
    ((chunks *)ud)->at = 0;
    return 0;
}

static void test_files(void **state)
{
    world *w = *state;
    for (size_t i = 0; i < sizeof odd_paths / sizeof odd_paths[0]; i++) {
        char content[256];
        snprintf(content, sizeof content, "content of %s\n\x01\xff binary too", odd_paths[i]);
        size_t len = strlen(content);
        ocisbx_sandbox_file *f = NULL;
        check(ocisbx_client_write_file(w->c, w->sandbox, odd_paths[i], content, len, &f), odd_paths[i]);
        if (f) {
            char sha[OCISBX_SHA256_B64_LEN + 1];
            ocisbx_sha256_base64(content, len, sha);
            if (ocisbx_sandbox_file_content_sha256(f))
                assert_string_equal(ocisbx_sandbox_file_content_sha256(f), sha);
            ocisbx_sandbox_file_free(f);
        }
        unsigned char *got = NULL;
        size_t got_len = 0;
        check(ocisbx_client_read_file(w->c, w->sandbox, odd_paths[i], &got, &got_len), odd_paths[i]);
        assert_int_equal(got_len, len);
        assert_memory_equal(got, content, len);
        ocisbx_free(got);
    }
    /* the file is visible to commands under the same name */
    ocisbx_run_command_details *d = NULL;
    ocisbx_command *cm = NULL;
    check(ocisbx_run_command_details_new("cat '/workspace/hash#and?q=1&x'", &d), "d");
    check(ocisbx_client_run_command_and_wait(w->c, w->sandbox, d, &cm), "cat");
    assert_non_null(strstr(ocisbx_command_stdout(cm), "content of /workspace/hash#and?q=1&x"));
    ocisbx_command_free(cm);
    ocisbx_run_command_details_free(d);

    /* a larger body through a callback (rewound for the hash) and from a file */
    size_t big = 3 * 1024 * 1024 + 7;
    char *data = malloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = (char)(i * 131 + (i >> 9));
    chunks ck = {data, big, 0};
    check(ocisbx_client_write_file_from_callback(w->c, w->sandbox, "/workspace/big.bin", (int64_t)big, chunk_read,
                                                 chunk_rewind, &ck, NULL, NULL),
          "write big");
    char local[] = "/tmp/ocisbx-it-api-XXXXXX";
    int fd = mkstemp(local);
    assert_true(fd >= 0);
    close(fd);
    check(ocisbx_client_read_file_to_path(w->c, w->sandbox, "/workspace/big.bin", local), "read big to path");
    FILE *fp = fopen(local, "rb");
    char *back = malloc(big + 1);
    assert_int_equal(fread(back, 1, big + 1, fp), big);
    fclose(fp);
    assert_memory_equal(back, data, big);
    check(ocisbx_client_write_file_from_path(w->c, w->sandbox, "/workspace/big2.bin", local, NULL),
          "write from path");
    unsigned char *got = NULL;
    size_t got_len = 0;
    check(ocisbx_client_read_file(w->c, w->sandbox, "/workspace/big2.bin", &got, &got_len), "read big2");
    assert_int_equal(got_len, big);
    assert_memory_equal(got, data, big);
    ocisbx_free(got);
    unlink(local);
    free(back);
    free(data);

    /* empty file, missing file, relative and escaping paths */
    check(ocisbx_client_write_file(w->c, w->sandbox, "/workspace/empty", "", 0, NULL), "empty");
    check(ocisbx_client_read_file(w->c, w->sandbox, "/workspace/empty", &got, &got_len), "read empty");
    assert_int_equal(got_len, 0);
    ocisbx_free(got);
    assert_int_equal(ocisbx_client_read_file(w->c, w->sandbox, "/workspace/missing", &got, &got_len),
                     OCISBX_ENOTFOUND);
    assert_int_equal(ocisbx_client_write_file(w->c, w->sandbox, "relative", "x", 1, NULL), OCISBX_EINVAL);
    assert_int_not_equal(ocisbx_client_write_file(w->c, w->sandbox, "/workspace/../etc/x", "x", 1, NULL), 0);
    assert_int_equal(ocisbx_error_http_status(ocisbx_error_last()), 400);
}

static void test_snapshots(void **state)
{
    world *w = *state;
    check(ocisbx_client_write_file(w->c, w->sandbox, "/workspace/snap-me.txt", "kept", 4, NULL), "write");
    ocisbx_snapshot *s = NULL;
    check(ocisbx_client_create_snapshot(w->c, w->sandbox, "P1D", &s), "create snapshot");
    char sid[128];
    snprintf(sid, sizeof sid, "%s", ocisbx_snapshot_id(s));
    assert_string_equal(ocisbx_snapshot_sandbox_id(s), w->sandbox);
    ocisbx_snapshot_free(s);
    check(ocisbx_client_wait_snapshot(w->c, sid, "ACTIVE", 60000, 50, &s), "wait active");
    assert_string_equal(ocisbx_snapshot_display_name(s), sid); /* none can be given [public] */
    assert_string_equal(ocisbx_snapshot_project_id(s), EMU_FIXTURE_PROJECT);
    assert_string_equal(ocisbx_snapshot_expiration_duration(s), "P1D");
    assert_non_null(ocisbx_snapshot_time_updated(s));
    ocisbx_snapshot_free(s);
    check(ocisbx_client_get_snapshot(w->c, sid, &s), "get snapshot");
    assert_string_equal(ocisbx_snapshot_id(s), sid);
    ocisbx_snapshot_free(s);

    ocisbx_list_options *lo = NULL;
    check(ocisbx_list_options_new(&lo), "lo");
    check(ocisbx_list_options_set(lo, "sandboxId", w->sandbox), "sandboxId");
    ocisbx_snapshot_collection *l = NULL;
    check(ocisbx_client_list_snapshots(w->c, lo, &l), "list");
    assert_int_equal(ocisbx_snapshot_collection_count(l), 1);
    assert_string_equal(ocisbx_snapshot_id(ocisbx_snapshot_collection_item(l, 0)), sid);
    ocisbx_snapshot_collection_free(l);
    ocisbx_snapshot_iter *it = NULL;
    const ocisbx_snapshot *item;
    check(ocisbx_client_iter_snapshots(w->c, lo, &it), "iter");
    check(ocisbx_snapshot_iter_next(it, &item), "next");
    assert_non_null(item);
    check(ocisbx_snapshot_iter_next(it, &item), "next");
    assert_null(item);
    ocisbx_snapshot_iter_free(it);
    ocisbx_list_options_free(lo);

    /* a sandbox made from the snapshot starts with its files */
    ocisbx_create_sandbox_details *d = NULL;
    ocisbx_sandbox *sb = NULL;
    check(ocisbx_create_sandbox_details_new(&d), "d");
    check(ocisbx_create_sandbox_details_set_source_snapshot(d, sid), "source");
    check(ocisbx_client_create_sandbox(w->c, EMU_FIXTURE_PROJECT, d, &sb), "create from snapshot");
    ocisbx_create_sandbox_details_free(d);
    char id2[128];
    snprintf(id2, sizeof id2, "%s", ocisbx_sandbox_id(sb));
    ocisbx_sandbox_free(sb);
    check(ocisbx_client_wait_sandbox(w->c, id2, "RUNNING", 60000, 50, NULL), "wait");
    unsigned char *got = NULL;
    size_t len = 0;
    check(ocisbx_client_read_file(w->c, id2, "/workspace/snap-me.txt", &got, &len), "read from copy");
    assert_int_equal(len, 4);
    assert_memory_equal(got, "kept", 4);
    ocisbx_free(got);
    check(ocisbx_client_delete_sandbox(w->c, id2), "delete copy");

    check(ocisbx_client_delete_snapshot(w->c, sid), "delete snapshot");
    check(ocisbx_client_wait_snapshot(w->c, sid, "DELETED", 60000, 50, NULL), "wait deleted");
}

/* The same events as NDJSON (Accept: application/x-ndjson). */
static void test_ndjson_stream(void **state)
{
    world *w = *state;
    ocisbx_client *nd = client_for(w->emu, 1);
    ocisbx_run_command_details *d = NULL;
    check(ocisbx_run_command_details_new("printf 'a\\nb'; echo c >&2; printf 'd\\n'", &d), "details");
    collected c = {0};
    char *cid = NULL;
    check(ocisbx_client_run_command_and_stream(nd, w->sandbox, d, collect, &c, &cid), "run and stream (ndjson)");
    assert_true(c.finished);
    assert_false(c.dup);
    assert_string_equal(c.out.data, "a\nbd\n");
    assert_string_equal(c.err.data, "c\n");
    collected_free(&c);
    memset(&c, 0, sizeof c);
    check(ocisbx_client_stream_command_events(nd, w->sandbox, cid, OCISBX_SEQ_START, 0, collect, &c),
          "events (ndjson)");
    assert_true(c.finished);
    assert_string_equal(c.out.data, "a\nbd\n");
    collected_free(&c);
    ocisbx_free(cid);
    ocisbx_run_command_details_free(d);
    ocisbx_client_free(nd);
}

static void test_call_json(void **state)
{
    world *w = *state;
    char params[256], *out = NULL;
    snprintf(params, sizeof params, "{\"sandboxId\":\"%s\"}", w->sandbox);
    check(ocisbx_client_call_json(w->c, "GetSandbox", params, NULL, &out), "GetSandbox");
    assert_non_null(strstr(out, w->sandbox));
    assert_non_null(strstr(out, "\"lifecycleState\":\"RUNNING\""));
    ocisbx_free(out);
    check(ocisbx_client_call_json(w->c, "RunSandboxCommandAndWait", params, "{\"command\":\"echo json\"}", &out),
          "RunAndWait");
    assert_non_null(strstr(out, "json\\n"));
    ocisbx_free(out);
    snprintf(params, sizeof params, "{\"projectId\":\"%s\",\"limit\":1}", EMU_FIXTURE_PROJECT);
    check(ocisbx_client_call_json(w->c, "ListSandboxes", params, NULL, &out), "ListSandboxes");
    assert_non_null(strstr(out, "\"items\":["));
    ocisbx_free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sandbox_lifecycle),
        cmocka_unit_test(test_commands),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_snapshots),
        cmocka_unit_test(test_ndjson_stream),
        cmocka_unit_test(test_call_json),
    };
    return par_run_group_tests_name("it_api_ops", tests, setup, teardown);
}
