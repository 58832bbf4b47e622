/* The api layer against the emulator's fault rules (HTTPS): 429 with
 * retry-after, 503 twice then success, a connection reset, event streams
 * cut mid-way (resumed, nothing lost or doubled), a create and a run whose
 * first answer is lost (retried with the same opc-retry-token: done once),
 * and a non-retryable 400 returned at once with its request id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu_fixture.h"
#include "ocisbx/api.h"
#include "ocisbx/util.h"
#include "util/internal.h"
#include "par_run.h"

#define FAULTS                                                                                     \
    "limits:\n  create_delay_ms: 20\n"                                                             \
    "faults:\n  seed: 1\n  rules:\n"                                                               \
    "    - match: {method: GET, path: \"/sandboxSnapshots\"}\n      respond: 429\n"                \
    "      retry_after_s: 1\n      times: 1\n"                                                     \
    "    - match: {method: GET, path: \"/sandboxes/*/commands\"}\n      respond: 503\n"            \
    "      times: 2\n"                                                                             \
    "    - match: {method: GET, path: \"/sandboxes/*/commands/*/output\"}\n      respond: reset\n" \
    "      times: 1\n"                                                                             \
    "    - match: {method: GET, path: \"/sandboxes/*/commands/*/events\"}\n"                       \
    "      cut_stream_after_events: 3\n      times: 2\n"                                           \
    "    - match: {method: POST, path: \"/sandboxes/*/commands/actions/runAndStream\"}\n"          \
    "      cut_stream_after_events: 2\n      times: 1\n"                                           \
    "    - match: {method: POST, path: \"/sandboxes/*/commands\"}\n      delay_ms: 1500\n"         \
    "      times: 1\n"                                                                             \
    "    - match: {method: POST, path: \"/sandboxes/*/actions/extend\"}\n      respond: 400\n"     \
    "      times: 1\n"
/* test_lost_create_acts_once's tenancy (a world of its own, no sandbox made
 * beforehand): the first create is held too */
#define FAULTS_LOST                                                                    \
    FAULTS "    - match: {method: POST, path: \"/sandboxes\"}\n      delay_ms: 1500\n" \
           "      times: 1\n"

typedef struct world {
    emu_fixture *emu;
    ocisbx_client *c;
    char sandbox[128];
} world;

/* The transport's attempt and retry callbacks tell which statuses each
 * attempt got and which waits were made, in this test's own lines
 * ("<METHOD> <url> -> <status>", "retrying in <ms> after <status>"): no
 * dependence on the library's log wording. */
static char log_lines[64 * 1024];

static void add_line(const char *line)
{
    if (strlen(log_lines) + strlen(line) + 2 > sizeof log_lines)
        return;
    strcat(log_lines, line);
    strcat(log_lines, "\n");
}

static void on_attempt(const char *method, const char *url, int attempt, int http_status, const char *request_id,
                       void *ud)
{
    (void)attempt, (void)request_id, (void)ud;
    char line[1024];
    snprintf(line, sizeof line, "%s %.900s -> %d", method, url, http_status);
    add_line(line);
}

static void on_retry(int attempt, int max_attempts, int64_t delay_ms, int http_status, const char *cause,
                     const char *request_id, void *ud)
{
    (void)attempt, (void)max_attempts, (void)cause, (void)request_id, (void)ud;
    char line[128];
    snprintf(line, sizeof line, "retrying in %lld after %d", (long long)delay_ms, http_status);
    add_line(line);
}

static int count(const char *needle)
{
    int n = 0;
    for (const char *p = log_lines; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void dump_log(void)
{
    fprintf(stderr, "--- attempts ---\n%s---\n", log_lines);
}

static void check(int rc, const char *what)
{
    if (rc)
        fail_msg("%s: %s", what, ocisbx_error_message(ocisbx_error_last()));
}

static ocisbx_client *client_for(emu_fixture *emu, int64_t read_timeout_ms)
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
    assert_int_equal(ocisbx_http_options_set_max_jitter_ms(h, 10), 0);
    assert_int_equal(ocisbx_http_options_set_attempt_callback(h, on_attempt, NULL), 0);
    assert_int_equal(ocisbx_http_options_set_retry_callback(h, on_retry, NULL), 0);
    if (read_timeout_ms) { /* the attempt's time limit is connect + read timeout */
        assert_int_equal(ocisbx_http_options_set_read_timeout_ms(h, read_timeout_ms), 0);
        assert_int_equal(ocisbx_http_options_set_connect_timeout_ms(h, read_timeout_ms), 0);
    }
    assert_int_equal(ocisbx_client_options_new(&o), 0);
    assert_int_equal(ocisbx_client_options_set_endpoint(o, emu_fixture_url(emu)), 0);
    assert_int_equal(ocisbx_client_options_set_http_options(o, h), 0);
    assert_int_equal(ocisbx_client_options_set_credentials(o, cr), 0);
    assert_int_equal(ocisbx_client_new(o, &c), 0);
    ocisbx_client_options_free(o);
    ocisbx_http_options_free(h);
    ocisbx_credentials_free(cr);
    ocisbx_config_free(cfg);
    return c;
}

static int setup_world(void **state, const char *faults, bool sandbox)
{
    world *w = calloc(1, sizeof *w);
    emu_fixture_options o = {0};
    o.https = true;
    o.extra_yaml = faults;
    if (emu_fixture_start(&o, &w->emu) != 0)
        return -1;
    /* the case's sandbox is made without the library */
    if (sandbox && emu_fixture_new_sandbox(w->emu, NULL, NULL, w->sandbox, sizeof w->sandbox) != 0)
        return -1;
    w->c = client_for(w->emu, 0);
    *state = w;
    return 0;
}

static int setup(void **state)
{
    return setup_world(state, FAULTS, true);
}

/* No sandbox beforehand (it would take the held create, 1.5 s): the test's
 * own create is the held one. */
static int setup_lost(void **state)
{
    return setup_world(state, FAULTS_LOST, false);
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

static void test_429_retry_after(void **state)
{
    world *w = *state;
    log_lines[0] = '\0';
    ocisbx_snapshot_collection *l = NULL;
    check(ocisbx_client_list_snapshots(w->c, NULL, &l), "list snapshots after a 429");
    ocisbx_snapshot_collection_free(l);
    assert_int_equal(count("-> 429"), 1);
    assert_int_equal(count("-> 200"), 1);
    /* the wait followed retry-after (1 s), not the 50..200 ms backoff */
    const char *r = strstr(log_lines, "retrying in ");
    assert_non_null(r);
    assert_true(atol(r + 12) >= 1000);
    assert_non_null(strstr(r, " after 429"));
}

static void test_503_twice(void **state)
{
    world *w = *state;
    log_lines[0] = '\0';
    ocisbx_command_collection *l = NULL;
    check(ocisbx_client_list_commands(w->c, w->sandbox, NULL, &l), "list commands after two 503s");
    ocisbx_command_collection_free(l);
    assert_int_equal(count("-> 503"), 2);
    assert_int_equal(count("-> 200"), 1);
}

static void run_wait(world *w, const char *cmdline, char *cid, size_t cap)
{
    ocisbx_run_command_details *d = NULL;
    ocisbx_command *cm = NULL;
    check(ocisbx_run_command_details_new(cmdline, &d), "details");
    check(ocisbx_client_run_command_and_wait(w->c, w->sandbox, d, &cm), "run and wait");
    snprintf(cid, cap, "%s", ocisbx_command_id(cm));
    ocisbx_command_free(cm);
    ocisbx_run_command_details_free(d);
}

static void test_reset(void **state)
{
    world *w = *state;
    char cid[128];
    run_wait(w, "echo after-reset", cid, sizeof cid);
    /* a client with no open connection: libcurl itself silently retries a
     * request whose reused connection died, and the test wants the
     * library's retry to be the one that recovers */
    ocisbx_client *fresh = client_for(w->emu, 0);
    log_lines[0] = '\0';
    ocisbx_command_output *out = NULL;
    check(ocisbx_client_get_command_output(fresh, w->sandbox, cid, OCISBX_SEQ_START, &out), "output after a reset");
    assert_string_equal(ocisbx_command_output_stdout(out), "after-reset\n");
    ocisbx_command_output_free(out);
    ocisbx_client_free(fresh);
    if (count("-> 200") != 1 || count("retrying in") != 1)
        dump_log();
    assert_int_equal(count("retrying in"), 1); /* after the reset attempt */
    assert_int_equal(count(" after 0\n"), 1);  /* which had no answer */
    assert_int_equal(count("-> 200"), 1);
}

typedef struct collected {
    ocisbx_buf out;
    int64_t last;
    bool dup, finished;
    int events;
} collected;

static int collect(const ocisbx_command_event *ev, void *ud)
{
    collected *c = ud;
    int64_t seq = ocisbx_command_event_seq(ev);
    if (seq <= c->last)
        c->dup = true;
    c->last = seq;
    c->events++;
    size_t len;
    const char *d = ocisbx_command_event_data(ev, &len);
    if (ocisbx_command_event_kind(ev) == OCISBX_EVENT_STDOUT)
        ocisbx_buf_append(&c->out, d, len);
    if (ocisbx_command_event_kind(ev) == OCISBX_EVENT_FINISHED)
        c->finished = true;
    return 0;
}

static const char *LINES_CMD = "for i in $(seq 1 12); do echo line$i; sleep 0.01; done";
static const char *LINES_OUT =
    "line1\nline2\nline3\nline4\nline5\nline6\nline7\nline8\nline9\nline10\nline11\nline12\n";

static void test_stream_cut(void **state)
{
    world *w = *state;
    char cid[128];
    run_wait(w, LINES_CMD, cid, sizeof cid);
    log_lines[0] = '\0';
    collected c = {0};
    check(ocisbx_client_stream_command_events(w->c, w->sandbox, cid, OCISBX_SEQ_START, 0, collect, &c),
          "events, cut twice");
    assert_true(c.finished);
    assert_false(c.dup);
    assert_string_equal(c.out.data, LINES_OUT);
    assert_true(count("/events?fromSeq=") >= 3); /* two cuts, two resumptions */
    ocisbx_buf_free(&c.out);

    /* run-and-stream cut after two events: resumed through the events route */
    ocisbx_run_command_details *d = NULL;
    check(ocisbx_run_command_details_new(LINES_CMD, &d), "details");
    memset(&c, 0, sizeof c);
    log_lines[0] = '\0';
    check(ocisbx_client_run_command_and_stream(w->c, w->sandbox, d, collect, &c, NULL), "run and stream, cut");
    ocisbx_run_command_details_free(d);
    assert_true(c.finished);
    assert_false(c.dup);
    assert_string_equal(c.out.data, LINES_OUT);
    assert_int_equal(count("runAndStream"), 1);
    assert_true(count("/events?fromSeq=3") >= 1);
    ocisbx_buf_free(&c.out);
}

/* Sleeps until t0 + ms (monotonic). */
static void sleep_until(int64_t t0, int64_t ms)
{
    int64_t left = t0 + ms - ocisbx_time_monotonic_ms();
    if (left > 0)
        usleep((useconds_t)left * 1000);
}

/* What a held request (1.5 s) may still do is done 3 s after it was sent
 * (before: 2 s after the retry's answer, which came only when the held
 * request ended) */
#define HELD_DONE_MS 3000

static void test_lost_create_acts_once(void **state)
{
    world *w = *state;
    /* a client that gives up on an answer after 500 ms: the emulator holds
     * the first create (and, in the main world, the first run) for 1.5 s */
    ocisbx_client *slow = client_for(w->emu, 500);
    log_lines[0] = '\0';
    ocisbx_create_sandbox_details *d = NULL;
    ocisbx_sandbox *s = NULL;
    check(ocisbx_create_sandbox_details_new(&d), "details");
    check(ocisbx_create_sandbox_details_set_display_name(d, "exactly-once"), "name");
    int64_t sent = ocisbx_time_monotonic_ms();
    check(ocisbx_client_create_sandbox(slow, EMU_FIXTURE_PROJECT, d, &s), "create with a lost answer");
    ocisbx_create_sandbox_details_free(d);
    snprintf(w->sandbox, sizeof w->sandbox, "%s", ocisbx_sandbox_id(s));
    ocisbx_sandbox_free(s);
    if (count("POST ") < 2)
        dump_log();
    assert_true(count("POST ") >= 2); /* it was retried */
    ocisbx_list_options *lo = NULL;
    ocisbx_sandbox_collection *l = NULL;
    check(ocisbx_list_options_new(&lo), "lo");
    check(ocisbx_list_options_set(lo, "displayName", "exactly-once"), "name");
    /* the held first request finishes later: let it */
    sleep_until(sent, HELD_DONE_MS);
    check(ocisbx_client_list_sandboxes(w->c, lo, &l), "list");
    assert_int_equal(ocisbx_sandbox_collection_count(l), 1);
    ocisbx_sandbox_collection_free(l);
    ocisbx_list_options_free(lo);
    ocisbx_client_free(slow);
}

/* The same for a run (the held one of the main world's rules), in the
 * case's sandbox: the command ran once. */
static void test_lost_run_acts_once(void **state)
{
    world *w = *state;
    ocisbx_client *slow = client_for(w->emu, 500);
    assert_int_equal(emu_fixture_wait_state(w->emu, w->sandbox, "RUNNING"), 0);
    log_lines[0] = '\0';
    int64_t sent;
    ocisbx_run_command_details *rd = NULL;
    ocisbx_command *cm = NULL;
    check(ocisbx_run_command_details_new("echo ran >> /workspace/once.txt", &rd), "details");
    sent = ocisbx_time_monotonic_ms();
    check(ocisbx_client_run_command(slow, w->sandbox, rd, &cm), "run with a lost answer");
    char cid[128];
    snprintf(cid, sizeof cid, "%s", ocisbx_command_id(cm));
    ocisbx_command_free(cm);
    ocisbx_run_command_details_free(rd);
    assert_true(count("POST ") >= 2);
    sleep_until(sent, HELD_DONE_MS);
    /* wait for it, then the file holds one line */
    collected c = {0};
    check(ocisbx_client_stream_command_events(w->c, w->sandbox, cid, OCISBX_SEQ_START, 0, collect, &c), "events");
    ocisbx_buf_free(&c.out);
    unsigned char *data = NULL;
    size_t len = 0;
    check(ocisbx_client_read_file(w->c, w->sandbox, "/workspace/once.txt", &data, &len), "read once.txt");
    assert_int_equal(len, 4);
    assert_memory_equal(data, "ran\n", 4);
    ocisbx_free(data);
    ocisbx_client_free(slow);
}

static void test_400_at_once(void **state)
{
    world *w = *state;
    log_lines[0] = '\0';
    int rc = ocisbx_client_extend_sandbox(w->c, w->sandbox, "PT5M", NULL);
    assert_int_equal(rc, OCISBX_EINVAL);
    const ocisbx_error *e = ocisbx_error_last();
    assert_int_equal(ocisbx_error_http_status(e), 400);
    assert_non_null(ocisbx_error_request_id(e));
    assert_non_null(strstr(ocisbx_error_message(e), ocisbx_error_request_id(e)));
    assert_int_equal(count("-> 400"), 1);
    assert_int_equal(count("retrying in"), 0);
    /* the rule fired once: the same call now works */
    check(ocisbx_client_extend_sandbox(w->c, w->sandbox, "PT5M", NULL), "extend");
}

int main(void)
{
    const struct CMUnitTest lost[] = {
        cmocka_unit_test(test_lost_create_acts_once),
    };
    /* a group of its own (its own world also with OCISBX_TEST_JOBS=1: its
     * events would use up test_stream_cut's rule) */
    const struct CMUnitTest lost_run[] = {
        cmocka_unit_test(test_lost_run_acts_once),
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_429_retry_after), cmocka_unit_test(test_503_twice),   cmocka_unit_test(test_reset),
        cmocka_unit_test(test_stream_cut),      cmocka_unit_test(test_400_at_once),
    };
    /* the longest first */
    const par_group groups[] = {
        PAR_GROUP("it_api_faults", lost, setup_lost, teardown),
        PAR_GROUP("it_api_faults", lost_run, setup, teardown),
        PAR_GROUP("it_api_faults", tests, setup, teardown),
    };
    return par_run_groups(groups, sizeof groups / sizeof groups[0]) ? 1 : 0;
}
