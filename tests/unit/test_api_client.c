/* The client against a scripted local HTTP server: URLs as sent, request
 * bodies, pagination, waiters, stream resumption, file checksums, errors,
 * the JSON entry point and the environment variables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "ocisbx/api.h"
#include "ocisbx/util.h"
#include "test_http_server.h"

typedef struct fixture {
    ths *srv;
    ocisbx_client *c;
} fixture;

static ocisbx_client *make_client(ths *srv, int retries)
{
    ocisbx_http_options *h = NULL;
    ocisbx_client_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&h), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(h, 1), 0);
    assert_int_equal(ocisbx_http_options_set_retries(h, retries), 0);
    assert_int_equal(ocisbx_http_options_set_backoff_ms(h, 1, 2), 0);
    assert_int_equal(ocisbx_http_options_set_max_jitter_ms(h, 0), 0);
    assert_int_equal(ocisbx_client_options_new(&o), 0);
    char *url = ths_url(srv, "/");
    assert_int_equal(ocisbx_client_options_set_endpoint(o, url), 0);
    free(url);
    assert_int_equal(ocisbx_client_options_set_http_options(o, h), 0);
    assert_int_equal(ocisbx_client_options_set_stream_resume_limit(o, 3), 0);
    ocisbx_client *c = NULL;
    assert_int_equal(ocisbx_client_new(o, &c), 0);
    ocisbx_client_options_free(o);
    ocisbx_http_options_free(h);
    return c;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (ths_start(&f->srv) != 0)
        return -1;
    f->c = make_client(f->srv, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ocisbx_client_free(f->c);
    ths_stop(f->srv);
    free(f);
    return 0;
}

static const char *target(fixture *f, size_t i)
{
    const ths_request *r = ths_get(f->srv, i);
    assert_non_null(r);
    return r->target;
}

static void test_get_and_errors(void **state)
{
    fixture *f = *state;
    ths_push(f->srv, 200, "etag: \"e1\"\nopc-request-id: rid-1\ncontent-type: application/json\n",
             "{\"id\":\"sbx-1\",\"lifecycleState\":\"RUNNING\"}");
    ocisbx_sandbox *s = NULL;
    assert_int_equal(ocisbx_client_get_sandbox(f->c, "sbx-1", &s), 0);
    assert_string_equal(ocisbx_sandbox_lifecycle_state(s), "RUNNING");
    assert_string_equal(ocisbx_sandbox_etag(s), "\"e1\"");
    assert_string_equal(ocisbx_client_last_request_id(f->c), "rid-1");
    ocisbx_sandbox_free(s);
    assert_string_equal(target(f, 0), "/20231130/sandboxes/sbx-1");
    assert_string_equal(ths_get(f->srv, 0)->method, "GET");
    /* the caller's request id, for one call */
    assert_int_equal(ocisbx_client_set_next_request_id(f->c, "bad id!"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_client_set_next_request_id(f->c, "my-trace_1"), 0);
    ths_push(f->srv, 200, NULL, "{\"id\":\"sbx-1\"}");
    ths_push(f->srv, 200, NULL, "{\"id\":\"sbx-1\"}");
    assert_int_equal(ocisbx_client_get_sandbox(f->c, "sbx-1", NULL), 0);
    assert_int_equal(ocisbx_client_get_sandbox(f->c, "sbx-1", NULL), 0);
    assert_string_equal(ths_header(ths_get(f->srv, 1), "opc-request-id"), "my-trace_1");
    assert_string_not_equal(ths_header(ths_get(f->srv, 2), "opc-request-id"), "my-trace_1");
    ths_clear(f->srv);

    /* a 400 comes back at once with the service's code, message and request id */
    ths_push(f->srv, 400, "opc-request-id: rid-400\ncontent-type: application/json\n",
             "{\"code\":\"InvalidParameter\",\"message\":\"bad shape\"}");
    assert_int_equal(ocisbx_client_get_sandbox(f->c, "sbx-1", &s), OCISBX_EINVAL);
    assert_null(s);
    const ocisbx_error *e = ocisbx_error_last();
    assert_int_equal(ocisbx_error_http_status(e), 400);
    assert_string_equal(ocisbx_error_service_code(e), "InvalidParameter");
    assert_string_equal(ocisbx_error_request_id(e), "rid-400");
    assert_non_null(strstr(ocisbx_error_message(e), "rid-400"));
    assert_int_equal(ths_count(f->srv), 1); /* one attempt: 400 is not retried */

    ths_push(f->srv, 404, NULL, "{\"code\":\"NotAuthorizedOrNotFound\",\"message\":\"no\"}");
    assert_int_equal(ocisbx_client_get_sandbox(f->c, "sbx-x", &s), OCISBX_ENOTFOUND);

    /* a wrong type in the answer names the field and the request id */
    ths_push(f->srv, 200, "opc-request-id: rid-bad\n", "{\"id\":\"sbx-1\",\"lifecycleState\":5}");
    assert_int_equal(ocisbx_client_get_sandbox(f->c, "sbx-1", &s), OCISBX_EPARSE);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "Sandbox.lifecycleState"));
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "rid-bad"));
}

static void test_create_body(void **state)
{
    fixture *f = *state;
    ocisbx_create_sandbox_details *d = NULL;
    assert_int_equal(
        ocisbx_create_sandbox_details_from_json("{\"displayName\":\"x\",\"expirationDuration\":\"PT1H\"}", 48, &d),
        0);
    ths_push(f->srv, 200, NULL, "{\"id\":\"sbx-new\",\"lifecycleState\":\"CREATING\"}");
    ocisbx_sandbox *s = NULL;
    assert_int_equal(ocisbx_client_create_sandbox(f->c, "ocid1.project..a b", d, &s), 0);
    assert_string_equal(ocisbx_sandbox_id(s), "sbx-new");
    ocisbx_sandbox_free(s);
    const ths_request *r = ths_get(f->srv, 0);
    assert_string_equal(r->method, "POST");
    assert_string_equal(r->target, "/20231130/sandboxes?projectId=ocid1.project..a%20b");
    assert_string_equal(r->body, "{\"displayName\":\"x\",\"expiresInMinutes\":60}");
    assert_non_null(ths_header(r, "opc-retry-token"));
    assert_non_null(ths_header(r, "opc-request-id"));
    ocisbx_create_sandbox_details_free(d);
    /* no project: refused before sending */
    assert_int_equal(ocisbx_client_create_sandbox(f->c, NULL, NULL, &s), OCISBX_EINVAL);
    assert_int_equal(ths_count(f->srv), 1);
}

static void test_actions(void **state)
{
    fixture *f = *state;
    ths_set_default(f->srv, 202, NULL, NULL);
    assert_int_equal(ocisbx_client_stop_sandbox(f->c, "s1", 1), 0);
    assert_int_equal(ocisbx_client_suspend_sandbox(f->c, "s1"), 0);
    assert_int_equal(ocisbx_client_resume_sandbox(f->c, "s1"), 0);
    assert_int_equal(ocisbx_client_cancel_command(f->c, "s1", "c1"), 0);
    assert_int_equal(ocisbx_client_delete_sandbox(f->c, "s1"), 0);
    assert_int_equal(ocisbx_client_delete_snapshot(f->c, "snap1"), 0);
    assert_string_equal(ths_get(f->srv, 0)->body, "{\"isForce\":true}");
    assert_string_equal(target(f, 0), "/20231130/sandboxes/s1/actions/stop");
    assert_string_equal(ths_get(f->srv, 1)->body, "{}");
    assert_string_equal(target(f, 2), "/20231130/sandboxes/s1/actions/resume");
    assert_string_equal(target(f, 3), "/20231130/sandboxes/s1/commands/c1/actions/cancel");
    assert_string_equal(ths_get(f->srv, 4)->method, "DELETE");
    assert_string_equal(target(f, 5), "/20231130/sandboxSnapshots/snap1");
    ths_set_default(f->srv, 200, NULL, "{\"id\":\"s1\",\"timeExpires\":\"2026-01-01T00:00:00Z\"}");
    assert_int_equal(ocisbx_client_extend_sandbox(f->c, "s1", "forever", NULL), OCISBX_EPARSE);
    assert_int_equal(ocisbx_client_extend_sandbox(f->c, "s1", "PT30M", NULL), 0);
    assert_string_equal(ths_get(f->srv, 6)->body, "{\"additionalDuration\":\"PT30M\"}");
    assert_int_equal(ocisbx_client_update_sandbox(f->c, "s1", "new name", NULL), 0);
    assert_string_equal(ths_get(f->srv, 7)->method, "PUT");
    assert_string_equal(ths_get(f->srv, 7)->body, "{\"displayName\":\"new name\"}");
}

static void test_pagination(void **state)
{
    fixture *f = *state;
    ths_push(f->srv, 200, "opc-next-page: p 2\n", "{\"items\":[{\"id\":\"a\"},{\"id\":\"b\"}]}");
    ths_push(f->srv, 200, "opc-next-page: p3\n", "{\"items\":[]}");
    ths_push(f->srv, 200, NULL, "{\"items\":[{\"id\":\"c\"}]}");
    ocisbx_list_options *o = NULL;
    assert_int_equal(ocisbx_list_options_new(&o), 0);
    assert_int_equal(ocisbx_list_options_set(o, "projectId", "proj"), 0);
    assert_int_equal(ocisbx_list_options_set(o, "lifecycleState", "RUNNING"), 0);
    assert_int_equal(ocisbx_list_options_set_limit(o, 2), 0);
    ocisbx_sandbox_iter *it = NULL;
    assert_int_equal(ocisbx_client_iter_sandboxes(f->c, o, &it), 0);
    ocisbx_list_options_free(o); /* the iterator keeps its own copy */
    char ids[16] = "";
    const ocisbx_sandbox *s;
    int n = 0;
    while (ocisbx_sandbox_iter_next(it, &s) == 0 && s) {
        strcat(ids, ocisbx_sandbox_id(s));
        n++;
    }
    assert_string_equal(ids, "abc");
    assert_int_equal(ocisbx_sandbox_iter_next(it, &s), 0); /* stays at the end */
    assert_null(s);
    ocisbx_sandbox_iter_free(it);
    assert_int_equal(ths_count(f->srv), 3);
    assert_string_equal(target(f, 0), "/20231130/sandboxes?projectId=proj&lifecycleState=RUNNING&limit=2");
    assert_string_equal(target(f, 1), "/20231130/sandboxes?projectId=proj&lifecycleState=RUNNING&limit=2&page=p%202");
    assert_string_equal(target(f, 2), "/20231130/sandboxes?projectId=proj&lifecycleState=RUNNING&limit=2&page=p3");

    /* commands and snapshots; a failing page is reported */
    ths_clear(f->srv);
    ths_push(f->srv, 200, "opc-next-page: x\n", "{\"items\":[{\"id\":\"c1\"}]}");
    ths_set_default(f->srv, 500, NULL, "{\"code\":\"InternalServerError\",\"message\":\"boom\"}");
    ocisbx_command_iter *ci = NULL;
    const ocisbx_command *cmd;
    assert_int_equal(ocisbx_client_iter_commands(f->c, "sbx", NULL, &ci), 0);
    assert_int_equal(ocisbx_command_iter_next(ci, &cmd), 0);
    assert_string_equal(ocisbx_command_id(cmd), "c1");
    assert_int_equal(ocisbx_command_iter_next(ci, &cmd), OCISBX_ESERVICE);
    ocisbx_command_iter_free(ci);
    assert_string_equal(target(f, 0), "/20231130/sandboxes/sbx/commands");
    assert_string_equal(target(f, 1), "/20231130/sandboxes/sbx/commands?page=x");
    ths_set_default(f->srv, 200, NULL, NULL);
    ths_push(f->srv, 200, NULL, "{\"items\":[{\"id\":\"sn\"}]}");
    ocisbx_snapshot_iter *si = NULL;
    const ocisbx_snapshot *sn;
    assert_int_equal(ocisbx_client_iter_snapshots(f->c, NULL, &si), 0);
    assert_int_equal(ocisbx_snapshot_iter_next(si, &sn), 0);
    assert_string_equal(ocisbx_snapshot_id(sn), "sn");
    assert_int_equal(ocisbx_snapshot_iter_next(si, &sn), 0);
    assert_null(sn);
    ocisbx_snapshot_iter_free(si);

    /* a next page that points at itself is an error, not a loop */
    ocisbx_sandbox_iter *it2 = NULL;
    ths_push(f->srv, 200, "opc-next-page: same\n", "{\"items\":[]}");
    ths_push(f->srv, 200, "opc-next-page: same\n", "{\"items\":[]}");
    assert_int_equal(ocisbx_client_iter_sandboxes(f->c, NULL, &it2), 0);
    assert_int_equal(ocisbx_sandbox_iter_next(it2, &s), OCISBX_EPARSE);
    ocisbx_sandbox_iter_free(it2);
}

static void test_wait(void **state)
{
    fixture *f = *state;
    ths_push(f->srv, 200, NULL, "{\"id\":\"s\",\"lifecycleState\":\"CREATING\"}");
    ths_push(f->srv, 200, NULL, "{\"id\":\"s\",\"lifecycleState\":\"CREATING\"}");
    ths_push(f->srv, 200, NULL, "{\"id\":\"s\",\"lifecycleState\":\"RUNNING\"}");
    ocisbx_sandbox *s = NULL;
    assert_int_equal(ocisbx_client_wait_sandbox(f->c, "s", "RUNNING", 60000, 1, &s), 0);
    assert_string_equal(ocisbx_sandbox_lifecycle_state(s), "RUNNING");
    ocisbx_sandbox_free(s);
    assert_int_equal(ths_count(f->srv), 3);
    /* FAILED ends the wait at once */
    ths_push(f->srv, 200, NULL,
             "{\"id\":\"s\",\"lifecycleState\":\"FAILED\",\"lifecycleDetails\":\"image pull failed: quota\"}");
    assert_int_equal(ocisbx_client_wait_sandbox(f->c, "s", "RUNNING", 60000, 1, &s), OCISBX_ECONFLICT);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "FAILED"));
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "image pull failed: quota"));
    assert_int_equal(ths_count(f->srv), 4);
    /* waiting for DELETED ends on 404 */
    ths_push(f->srv, 200, NULL, "{\"id\":\"s\",\"lifecycleState\":\"DELETING\"}");
    ths_push(f->srv, 404, NULL, "{\"code\":\"NotAuthorizedOrNotFound\",\"message\":\"gone\"}");
    assert_int_equal(ocisbx_client_wait_sandbox(f->c, "s", "DELETED", 60000, 1, &s), 0);
    assert_null(s);
    /* a timeout */
    ths_set_default(f->srv, 200, NULL, "{\"id\":\"s\",\"lifecycleState\":\"CREATING\"}");
    assert_int_equal(ocisbx_client_wait_sandbox(f->c, "s", "RUNNING", 30, 5, NULL), OCISBX_ETIMEOUT);
    /* snapshots */
    ths_set_default(f->srv, 200, NULL, "{\"id\":\"sn\",\"lifecycleState\":\"ACTIVE\"}");
    ocisbx_snapshot *sn = NULL;
    assert_int_equal(ocisbx_client_wait_snapshot(f->c, "sn", "ACTIVE", 1000, 1, &sn), 0);
    ocisbx_snapshot_free(sn);
}

typedef struct events_seen {
    char log[1024];
    int finished_code;
    int stop_at;
    int count;
} events_seen;

static int on_event(const ocisbx_command_event *ev, void *ud)
{
    events_seen *s = ud;
    char line[128];
    size_t len;
    const char *d = ocisbx_command_event_data(ev, &len);
    snprintf(line, sizeof line, "%lld:%s:%s;", (long long)ocisbx_command_event_seq(ev), ocisbx_command_event_type(ev),
             d);
    strcat(s->log, line);
    if (ocisbx_command_event_kind(ev) == OCISBX_EVENT_FINISHED)
        ocisbx_command_event_has_exit_code(ev, &s->finished_code);
    s->count++;
    return s->stop_at && s->count >= s->stop_at;
}

#define EV(seq, type, data) \
    "data: {\"commandId\":\"c1\",\"seq\":" #seq ",\"event\":\"" type "\",\"data\":\"" data "\"}\n\n"

static void test_stream_resumes(void **state)
{
    fixture *f = *state;
    /* first connection is cut half way through its body (transport error) */
    ths_step cut = {200, "content-type: text/event-stream\n",
                    EV(1, "STARTED", "") EV(2, "STDOUT", "a") EV(3, "STDERR", "b") EV(4, "STDOUT", "c"), THS_PARTIAL,
                    0};
    ths_push_step(f->srv, &cut);
    /* the second ends cleanly but early (no FINISHED) and repeats seq 2 */
    ths_push(f->srv, 200, "content-type: text/event-stream\n", EV(2, "STDOUT", "a") EV(3, "STDERR", "b"));
    /* the third finishes, as NDJSON */
    ths_push(f->srv, 200, "content-type: application/x-ndjson\n",
             "{\"commandId\":\"c1\",\"seq\":4,\"event\":\"STDOUT\",\"data\":\"c\"}\n"
             "{\"commandId\":\"c1\",\"seq\":5,\"event\":\"FINISHED\",\"exitCode\":3}\n");
    events_seen seen = {0};
    assert_int_equal(ocisbx_client_stream_command_events(f->c, "sbx", "c1", 1, 0, on_event, &seen), 0);
    assert_string_equal(seen.log, "1:STARTED:;2:STDOUT:a;3:STDERR:b;4:STDOUT:c;5:FINISHED:;");
    assert_int_equal(seen.finished_code, 3);
    assert_int_equal(ths_count(f->srv), 3);
    assert_string_equal(target(f, 0), "/20231130/sandboxes/sbx/commands/c1/events?fromSeq=1");
    /* the cut came after seq 1 or 2 at least: resumption starts past what was delivered */
    assert_non_null(strstr(target(f, 1), "/events?fromSeq="));
    assert_string_equal(target(f, 2), "/20231130/sandboxes/sbx/commands/c1/events?fromSeq=4");
    assert_string_equal(ths_header(ths_get(f->srv, 0), "accept"), "text/event-stream");
}

static void test_stream_cancel_and_limits(void **state)
{
    fixture *f = *state;
    ths_push(f->srv, 200, NULL, EV(1, "STARTED", "") EV(2, "STDOUT", "x") EV(3, "FINISHED", ""));
    events_seen seen = {0};
    seen.stop_at = 2;
    assert_int_equal(ocisbx_client_stream_command_events(f->c, "sbx", "c1", 0, 0, on_event, &seen), OCISBX_ECANCELED);
    assert_int_equal(seen.count, 2);
    /* untilSeq ends the stream without FINISHED */
    ths_push(f->srv, 200, NULL, EV(2, "STDOUT", "x") EV(3, "STDOUT", "y"));
    memset(&seen, 0, sizeof seen);
    assert_int_equal(ocisbx_client_stream_command_events(f->c, "sbx", "c1", 2, 3, on_event, &seen), 0);
    assert_string_equal(seen.log, "2:STDOUT:x;3:STDOUT:y;");
    assert_string_equal(target(f, 1), "/20231130/sandboxes/sbx/commands/c1/events?fromSeq=2&untilSeq=3");
    /* a stream that never makes progress gives up */
    ths_set_default(f->srv, 200, NULL, "");
    memset(&seen, 0, sizeof seen);
    assert_int_equal(ocisbx_client_stream_command_events(f->c, "sbx", "c1", 1, 0, on_event, &seen),
                     OCISBX_ETRANSPORT);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "before FINISHED"));
    /* a bad event is a parse error naming the field */
    ths_set_default(f->srv, 200, NULL, "data: {\"seq\":\"one\",\"event\":\"STDOUT\"}\n\n");
    assert_int_equal(ocisbx_client_stream_command_events(f->c, "sbx", "c1", 1, 0, on_event, &seen), OCISBX_EPARSE);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "SandboxCommandEvent.seq"));
}

static void test_run_and_stream(void **state)
{
    fixture *f = *state;
    /* dropped before any event: the same POST again (same retry token) */
    ths_step reset = {0, NULL, NULL, THS_RESET, 0};
    ths_push_step(f->srv, &reset);
    ths_step cut = {200, "content-type: text/event-stream\n",
                    EV(1, "STARTED", "")
                        EV(2, "STDOUT", "hello") "data: {\"commandId\":\"c1\",\"seq\":3,\"event\":\"STDOUT\"",
                    THS_RESPOND, 0};
    ths_push_step(f->srv, &cut);
    ths_push(f->srv, 200, NULL,
             EV(3, "STDOUT", "!") "data: {\"commandId\":\"c1\",\"seq\":4,\"event\":\"FINISHED\",\"exitCode\":0}\n\n");
    ocisbx_run_command_details *d = NULL;
    assert_int_equal(ocisbx_run_command_details_new("echo hello", &d), 0);
    events_seen seen = {0};
    seen.finished_code = -1;
    char *cid = NULL;
    assert_int_equal(ocisbx_client_run_command_and_stream(f->c, "sbx", d, on_event, &seen, &cid), 0);
    assert_string_equal(cid, "c1");
    ocisbx_free(cid);
    assert_string_equal(seen.log, "1:STARTED:;2:STDOUT:hello;3:STDOUT:!;4:FINISHED:;");
    assert_int_equal(seen.finished_code, 0);
    assert_int_equal(ths_count(f->srv), 3);
    const ths_request *r0 = ths_get(f->srv, 0), *r1 = ths_get(f->srv, 1);
    assert_string_equal(r0->target, "/20231130/sandboxes/sbx/commands/actions/runAndStream");
    assert_string_equal(r1->target, r0->target);
    assert_string_equal(ths_header(r0, "opc-retry-token"), ths_header(r1, "opc-retry-token"));
    assert_string_equal(r1->body, "{\"command\":\"echo hello\"}");
    assert_string_equal(target(f, 2), "/20231130/sandboxes/sbx/commands/c1/events?fromSeq=3");
    ocisbx_run_command_details_free(d);
}

typedef struct reader {
    const char *data;
    size_t len, at;
} reader;

static int64_t read_cb(void *buf, size_t cap, void *ud)
{
    reader *r = ud;
    size_t n = r->len - r->at < cap ? r->len - r->at : cap;
    if (n > 2)
        n = 2; /* small pieces */
    memcpy(buf, r->data + r->at, n);
    r->at += n;
    return (int64_t)n;
}

static int rewind_cb(void *ud)
{
    ((reader *)ud)->at = 0;
    return 0;
}

static int stop_cb(const void *data, size_t len, void *ud)
{
    (void)data, (void)len, (void)ud;
    return 1;
}

static void test_files(void **state)
{
    fixture *f = *state;
    const char *content = "hello\n";
    char sha[OCISBX_SHA256_B64_LEN + 1];
    assert_int_equal(ocisbx_sha256_base64(content, 6, sha), 0);
    char hdr[128];
    snprintf(hdr, sizeof hdr, "opc-content-sha256: %s\n", sha);
    char body[256];
    snprintf(body, sizeof body,
             "{\"sandboxId\":\"sbx\",\"filePath\":\"/workspace/a b#?.txt\",\"contentSha256\":\"%s\"}", sha);
    ths_push(f->srv, 200, hdr, body);
    ocisbx_sandbox_file *sf = NULL;
    assert_int_equal(ocisbx_client_write_file(f->c, "sbx", "/workspace/a b#?.txt", content, 6, &sf), 0);
    assert_string_equal(ocisbx_sandbox_file_content_sha256(sf), sha);
    ocisbx_sandbox_file_free(sf);
    const ths_request *r = ths_get(f->srv, 0);
    assert_string_equal(r->method, "PUT");
    assert_string_equal(r->target, "/20231130/sandboxes/sbx/files?filePath=%2Fworkspace%2Fa%20b%23%3F.txt");
    assert_string_equal(ths_header(r, "opc-content-sha256"), sha);
    assert_string_equal(ths_header(r, "content-type"), "application/octet-stream");
    assert_string_equal(r->body, content);

    /* the service reports another digest: integrity error */
    ths_push(f->srv, 200, "opc-content-sha256: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n", "{}");
    assert_int_equal(ocisbx_client_write_file(f->c, "sbx", "/workspace/x", content, 6, NULL), OCISBX_EINTEGRITY);
    /* or none at all */
    ths_push(f->srv, 200, NULL, NULL);
    assert_int_equal(ocisbx_client_write_file(f->c, "sbx", "/workspace/x", content, 6, NULL), OCISBX_EINTEGRITY);
    /* relative paths and oversized bodies never leave the client */
    size_t before = ths_count(f->srv);
    assert_int_equal(ocisbx_client_write_file(f->c, "sbx", "x", content, 6, NULL), OCISBX_EINVAL);
    assert_int_equal(ocisbx_client_write_file_from_callback(f->c, "sbx", "/workspace/x", OCISBX_FILE_PART_MAX + 1,
                                                            (ocisbx_read_fn)1, NULL, NULL, NULL, NULL),
                     OCISBX_ETOOLARGE);
    assert_int_equal(ths_count(f->srv), before);

    /* read: checked against the header */
    ths_push(f->srv, 200, hdr, content);
    unsigned char *data = NULL;
    size_t len = 0;
    assert_int_equal(ocisbx_client_read_file(f->c, "sbx", "/workspace/a", &data, &len), 0);
    assert_int_equal(len, 6);
    assert_memory_equal(data, content, 6);
    ocisbx_free(data);
    ths_push(f->srv, 200, hdr, "hellO\n");
    assert_int_equal(ocisbx_client_read_file(f->c, "sbx", "/workspace/a", &data, &len), OCISBX_EINTEGRITY);
    assert_null(data);
    ths_push(f->srv, 404, NULL, "{\"code\":\"NotAuthorizedOrNotFound\",\"message\":\"no file\"}");
    assert_int_equal(ocisbx_client_read_file(f->c, "sbx", "/workspace/none", &data, &len), OCISBX_ENOTFOUND);

    /* to a path: nothing is left behind on a mismatch */
    char path[] = "/tmp/ocisbx-test-read-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    ths_push(f->srv, 200, hdr, "hellO\n");
    assert_int_equal(ocisbx_client_read_file_to_path(f->c, "sbx", "/workspace/a", path), OCISBX_EINTEGRITY);
    FILE *fp = fopen(path, "rb");
    assert_null(fp);
    ths_push(f->srv, 200, hdr, content);
    assert_int_equal(ocisbx_client_read_file_to_path(f->c, "sbx", "/workspace/a", path), 0);
    fp = fopen(path, "rb");
    assert_non_null(fp);
    char got[16] = {0};
    assert_int_equal(fread(got, 1, sizeof got, fp), 6);
    fclose(fp);
    assert_string_equal(got, content);

    /* write from that file, and from a callback without rewind */
    ths_push(f->srv, 200, hdr, NULL);
    assert_int_equal(ocisbx_client_write_file_from_path(f->c, "sbx", "/workspace/b", path, NULL), 0);
    unlink(path);
    assert_string_equal(ths_get(f->srv, ths_count(f->srv) - 1)->body, content);
    assert_string_equal(ths_header(ths_get(f->srv, ths_count(f->srv) - 1), "opc-content-sha256"), sha);

    /* callbacks: read once into memory, hashed then streamed (rewind), or
     * streamed with the caller's hash */
    reader rd = {content, 6, 0};
    ths_push(f->srv, 200, hdr, NULL);
    assert_int_equal(
        ocisbx_client_write_file_from_callback(f->c, "sbx", "/workspace/c", 6, read_cb, NULL, &rd, NULL, NULL), 0);
    assert_string_equal(ths_get(f->srv, ths_count(f->srv) - 1)->body, content);
    rd.at = 0;
    ths_push(f->srv, 200, hdr, NULL);
    assert_int_equal(ocisbx_client_write_file_from_callback(f->c, "sbx", "/workspace/c", 6, read_cb, rewind_cb, &rd,
                                                            NULL, NULL),
                     0);
    assert_string_equal(ths_get(f->srv, ths_count(f->srv) - 1)->body, content);
    rd.at = 0;
    ths_push(f->srv, 200, hdr, NULL);
    assert_int_equal(
        ocisbx_client_write_file_from_callback(f->c, "sbx", "/workspace/c", 6, read_cb, NULL, &rd, sha, NULL), 0);
    assert_string_equal(ths_get(f->srv, ths_count(f->srv) - 1)->body, content);
    assert_string_equal(ths_header(ths_get(f->srv, ths_count(f->srv) - 1), "opc-content-sha256"), sha);
    /* a reader that gives fewer bytes than announced */
    rd.at = 0;
    before = ths_count(f->srv);
    assert_int_equal(ocisbx_client_write_file_from_callback(f->c, "sbx", "/workspace/c", 9, read_cb, NULL, &rd, NULL,
                                                            NULL),
                     OCISBX_EIO);
    assert_int_equal(ths_count(f->srv), before);

    /* read to a callback that stops: canceled */
    ths_push(f->srv, 200, hdr, content);
    assert_int_equal(ocisbx_client_read_file_to_callback(f->c, "sbx", "/workspace/a", stop_cb, NULL),
                     OCISBX_ECANCELED);
}

static void test_call_json(void **state)
{
    fixture *f = *state;
    ths_push(f->srv, 200, "opc-next-page: n2\n", "{\"items\":[{\"id\":\"a\"}]}");
    char *out = NULL;
    assert_int_equal(ocisbx_client_call_json(f->c, "ListSandboxes", "{\"projectId\":\"p\",\"limit\":5}", NULL, &out),
                     0);
    assert_string_equal(out, "{\"items\":[{\"id\":\"a\"}],\"opcNextPage\":\"n2\"}");
    ocisbx_free(out);
    assert_string_equal(target(f, 0), "/20231130/sandboxes?projectId=p&limit=5");
    ths_push(f->srv, 202, NULL, NULL);
    assert_int_equal(
        ocisbx_client_call_json(f->c, "StopSandbox", "{\"sandboxId\":\"s\"}", "{\"isForce\":false}", &out), 0);
    assert_string_equal(out, "{}");
    ocisbx_free(out);
    assert_int_equal(ocisbx_client_call_json(f->c, "StopSandbox", "{\"sandboxId\":\"s\"}", "{\"isForce\":1}", &out),
                     OCISBX_EPARSE);
    ocisbx_free(out);
    assert_int_equal(ocisbx_client_call_json(f->c, "CreateSandbox", "{\"projectId\":\"p\"}",
                                             "{\"expiresInMinutes\":-2}", &out),
                     OCISBX_EINVAL);
    /* a failure gives the error as JSON too */
    cJSON *e = cJSON_Parse(out);
    ocisbx_free(out);
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(e, "error");
    assert_true(cJSON_IsObject(err));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(err, "code")->valuestring, ocisbx_strerror(OCISBX_EINVAL));
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(err, "status")->valueint, 0);
    assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(err, "message")->valuestring, "expiresInMinutes"));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(err, "requestId")));
    cJSON_Delete(e);
    assert_int_equal(ocisbx_client_call_json(f->c, "Nope", NULL, NULL, &out), OCISBX_EINVAL);
    assert_non_null(strstr(out, "unknown operation 'Nope'"));
    ocisbx_free(out);
    assert_int_equal(ocisbx_client_call_json(f->c, "ReadSandboxFile", NULL, NULL, &out), OCISBX_EUNSUPPORTED);
    ocisbx_free(out);
    assert_int_equal(ths_count(f->srv), 2);
    /* a service error: its code, status and request id */
    ths_push(f->srv, 412, "opc-request-id: rid-412\n", "{\"code\":\"PreconditionFailed\",\"message\":\"stale\"}");
    assert_int_equal(ocisbx_client_call_json(f->c, "UpdateSandbox",
                                             "{\"sandboxId\":\"s\",\"ifMatch\":\"\\\"e1\\\"\"}",
                                             "{\"displayName\":\"n\"}", &out),
                     OCISBX_ECONFLICT);
    assert_string_equal(ths_header(ths_get(f->srv, 2), "if-match"), "\"e1\"");
    e = cJSON_Parse(out);
    ocisbx_free(out);
    err = cJSON_GetObjectItemCaseSensitive(e, "error");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(err, "code")->valuestring, "PreconditionFailed");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(err, "status")->valueint, 412);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(err, "requestId")->valuestring, "rid-412");
    cJSON_Delete(e);
    /* an operation without if-match refuses one, before sending */
    assert_int_equal(ocisbx_client_call_json(f->c, "GetSandbox", "{\"sandboxId\":\"s\",\"ifMatch\":\"x\"}", NULL,
                                             &out),
                     OCISBX_EINVAL);
    ocisbx_free(out);
    assert_int_equal(ths_count(f->srv), 3);
    /* params go through the library's one codec (util/json.h), as the
     * harness's arguments do: one whole object, no NUL that would cut an id
     * short; refused before anything is sent */
    assert_int_equal(ocisbx_client_call_json(f->c, "GetSandbox", "{\"sandboxId\":\"s\"} trailing", NULL, &out),
                     OCISBX_EPARSE);
    assert_non_null(strstr(out, "not a JSON object"));
    ocisbx_free(out);
    assert_int_equal(ocisbx_client_call_json(f->c, "GetSandbox", "{\"sandboxId\":\"s\\u0000x\"}", NULL, &out),
                     OCISBX_EPARSE);
    assert_non_null(strstr(out, "NUL"));
    ocisbx_free(out);
    assert_int_equal(ths_count(f->srv), 3);
}

/* if-match on update, stop, extend and snapshot delete; the snapshot body;
 * run_command's {id} answer. */
static void test_if_match_and_snapshots(void **state)
{
    fixture *f = *state;
    ths_set_default(f->srv, 202, NULL, NULL);
    assert_int_equal(ocisbx_client_stop_sandbox_if_match(f->c, "s1", 0, "\"s1-3\""), 0);
    assert_int_equal(ocisbx_client_delete_snapshot_if_match(f->c, "snap1", "\"snap1-1\""), 0);
    assert_int_equal(ocisbx_client_stop_sandbox(f->c, "s1", 0), 0);
    assert_string_equal(ths_header(ths_get(f->srv, 0), "if-match"), "\"s1-3\"");
    assert_string_equal(ths_header(ths_get(f->srv, 1), "if-match"), "\"snap1-1\"");
    assert_null(ths_header(ths_get(f->srv, 2), "if-match"));
    ths_set_default(f->srv, 200, "etag: \"s1-4\"\n", "{\"id\":\"s1\"}");
    ocisbx_sandbox *s = NULL;
    assert_int_equal(ocisbx_client_update_sandbox_if_match(f->c, "s1", "n", "\"s1-3\"", &s), 0);
    assert_string_equal(ocisbx_sandbox_etag(s), "\"s1-4\"");
    ocisbx_sandbox_free(s);
    assert_int_equal(ocisbx_client_extend_sandbox_if_match(f->c, "s1", "PT5M", "\"s1-4\"", NULL), 0);
    assert_string_equal(ths_header(ths_get(f->srv, 3), "if-match"), "\"s1-3\"");
    assert_string_equal(ths_header(ths_get(f->srv, 4), "if-match"), "\"s1-4\"");
    assert_int_equal(ocisbx_client_stop_sandbox_if_match(f->c, "s1", 0, "bad\r\netag"), OCISBX_EINVAL);
    assert_int_equal(ths_count(f->srv), 5);
    /* CreateSandboxSnapshotDetails: sandboxId and expirationDuration only */
    ths_set_default(f->srv, 200, "etag: \"snap-1\"\n", "{\"id\":\"snap\",\"projectId\":\"p\"}");
    ocisbx_snapshot *sn = NULL;
    assert_int_equal(ocisbx_client_create_snapshot(f->c, "s1", "P7D", &sn), 0);
    assert_string_equal(ths_get(f->srv, 5)->body, "{\"sandboxId\":\"s1\",\"expirationDuration\":\"P7D\"}");
    assert_string_equal(ocisbx_snapshot_etag(sn), "\"snap-1\"");
    ocisbx_snapshot_free(sn);
    /* run_command: the SandboxCommandIdentifier {id} is enough */
    ths_set_default(f->srv, 200, NULL, "{\"id\":\"cmd-7\"}");
    ocisbx_run_command_details *d = NULL;
    assert_int_equal(ocisbx_run_command_details_new("true", &d), 0);
    ocisbx_command *cm = NULL;
    assert_int_equal(ocisbx_client_run_command(f->c, "s1", d, &cm), 0);
    assert_string_equal(ocisbx_command_id(cm), "cmd-7");
    assert_int_equal(ocisbx_command_state(cm), OCISBX_COMMAND_NOT_STARTED);
    ocisbx_command_free(cm);
    /* a fuller answer is still accepted, and kept */
    ths_set_default(f->srv, 200, NULL,
                    "{\"id\":\"cmd-8\",\"command\":\"true\",\"timeStarted\":\"2026-01-01T00:00:02Z\",\"extra\":1}");
    assert_int_equal(ocisbx_client_run_command(f->c, "s1", d, &cm), 0);
    assert_string_equal(ocisbx_command_command(cm), "true");
    assert_int_equal(ocisbx_command_state(cm), OCISBX_COMMAND_RUNNING);
    char *j = NULL;
    assert_int_equal(ocisbx_command_to_json(cm, &j), 0);
    assert_non_null(strstr(j, "\"extra\":1"));
    ocisbx_free(j);
    ocisbx_command_free(cm);
    ocisbx_run_command_details_free(d);
    /* -1 (no expiry) goes through call_json as given */
    ths_set_default(f->srv, 200, NULL, "{\"id\":\"sbx-1\",\"expiresInMinutes\":-1}");
    size_t before = ths_count(f->srv);
    assert_int_equal(
        ocisbx_client_call_json(f->c, "CreateSandbox", "{\"projectId\":\"p\"}", "{\"expiresInMinutes\":-1}", &j), 0);
    ocisbx_free(j);
    assert_string_equal(ths_get(f->srv, before)->body, "{\"expiresInMinutes\":-1}");
}

/* The command waiter follows the derived state. */
static void test_wait_command(void **state)
{
    fixture *f = *state;
    ths_push(f->srv, 200, NULL, "{\"id\":\"c\"}");
    ths_push(f->srv, 200, NULL, "{\"id\":\"c\",\"timeStarted\":\"2026-01-01T00:00:02Z\"}");
    ths_push(f->srv, 200, NULL,
             "{\"id\":\"c\",\"timeStarted\":\"2026-01-01T00:00:02Z\",\"timeFinished\":\"2026-01-01T00:00:03Z\","
             "\"exitCode\":4}");
    ocisbx_command *cm = NULL;
    assert_int_equal(ocisbx_client_wait_command(f->c, "s", "c", OCISBX_COMMAND_FINISHED, 60000, 1, &cm), 0);
    int code = 0;
    assert_int_equal(ocisbx_command_has_exit_code(cm, &code), 1);
    assert_int_equal(code, 4);
    ocisbx_command_free(cm);
    assert_int_equal(ths_count(f->srv), 3);
    assert_string_equal(target(f, 0), "/20231130/sandboxes/s/commands/c");
    /* a canceled command can never reach FINISHED: at once */
    ths_push(f->srv, 200, NULL,
             "{\"id\":\"c\",\"timeStarted\":\"2026-01-01T00:00:02Z\",\"timeFinished\":\"2026-01-01T00:00:03Z\"}");
    assert_int_equal(ocisbx_client_wait_command(f->c, "s", "c", OCISBX_COMMAND_FINISHED, 60000, 1, NULL),
                     OCISBX_ECONFLICT);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "FINISHED_NO_EXIT_CODE"));
    /* RUNNING is reached by a command that has already finished */
    ths_push(f->srv, 200, NULL, "{\"id\":\"c\",\"exitCode\":0}");
    assert_int_equal(ocisbx_client_wait_command(f->c, "s", "c", OCISBX_COMMAND_RUNNING, 60000, 1, NULL), 0);
    /* a timeout; a bad state */
    ths_set_default(f->srv, 200, NULL, "{\"id\":\"c\",\"timeStarted\":\"2026-01-01T00:00:02Z\"}");
    assert_int_equal(ocisbx_client_wait_command(f->c, "s", "c", OCISBX_COMMAND_FINISHED, 30, 5, NULL),
                     OCISBX_ETIMEOUT);
    assert_int_equal(ocisbx_client_wait_command(f->c, "s", "c", 9, 30, 5, NULL), OCISBX_EINVAL);
}

static void test_options_and_env(void **state)
{
    fixture *f = *state;
    char *url = ths_url(f->srv, "/base");
    setenv("OCI_SANDBOX_ENDPOINT", url, 1);
    setenv("OCI_SANDBOX_API_VERSION", "2099", 1);
    ocisbx_http_options *h = NULL;
    ocisbx_client_options *o = NULL;
    assert_int_equal(ocisbx_http_options_new(&h), 0);
    assert_int_equal(ocisbx_http_options_set_allow_plain_http(h, 1), 0);
    assert_int_equal(ocisbx_client_options_new(&o), 0);
    assert_int_equal(ocisbx_client_options_set_http_options(o, h), 0);
    ocisbx_client *c = NULL;
    assert_int_equal(ocisbx_client_new(o, &c), 0);
    assert_string_equal(ocisbx_client_endpoint(c), url);
    assert_string_equal(ocisbx_client_api_version(c), "2099");
    ths_push(f->srv, 200, NULL, "{\"id\":\"s\"}");
    assert_int_equal(ocisbx_client_get_snapshot(c, "s", NULL), 0);
    assert_string_equal(target(f, 0), "/base/2099/sandboxSnapshots/s");
    ocisbx_client_free(c);
    /* options win over the environment */
    assert_int_equal(ocisbx_client_options_set_api_version(o, "20231130"), 0);
    assert_int_equal(ocisbx_client_options_set_api_version(o, "20/23"), OCISBX_ECONFIG);
    assert_int_equal(ocisbx_client_options_set_endpoint(o, "https://x.example"), 0);
    assert_int_equal(ocisbx_client_new(o, &c), 0);
    assert_string_equal(ocisbx_client_endpoint(c), "https://x.example");
    assert_string_equal(ocisbx_client_api_version(c), "20231130");
    ocisbx_client_free(c);
    unsetenv("OCI_SANDBOX_ENDPOINT");
    unsetenv("OCI_SANDBOX_API_VERSION");
    /* a region makes the public endpoint */
    assert_int_equal(ocisbx_client_options_set_endpoint(o, NULL), 0);
    assert_int_equal(ocisbx_client_options_set_region(o, "us-chicago-1"), 0);
    assert_int_equal(ocisbx_client_new(o, &c), 0);
    assert_string_equal(ocisbx_client_endpoint(c), "https://inference.generativeai.us-chicago-1.oci.oraclecloud.com");
    ocisbx_client_free(c);
    /* plain http to a host that is not loopback is refused */
    assert_int_equal(ocisbx_client_options_set_endpoint(o, "http://example.com"), 0);
    assert_int_not_equal(ocisbx_client_new(o, &c), 0);
    assert_null(c);
    ocisbx_client_options_free(o);
    ocisbx_http_options_free(h);
    free(url);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_get_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_actions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pagination, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_resumes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_cancel_and_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_and_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_if_match_and_snapshots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_options_and_env, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
