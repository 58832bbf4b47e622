/* ocisbx-emulator over HTTP and HTTPS: sandboxes, lifecycle, commands,
 * events, files, snapshots, retry tokens, pagination. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "emu_fixture.h"
#include "par_run.h"
#include "ocisbx/util.h"

static const char *EXTRA = "limits:\n"
                           "  create_delay_ms: 200\n"
                           "  stop_delay_ms: 50\n"
                           "  output_loss_bytes: 100000\n"
                           "  max_body_bytes: 1048576\n"
                           "  max_lifetime_minutes: 10\n"
                           "  minute_ms: 1000\n";

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* A SandboxCommand carries no lifecycleState [public]: the state the
 * client derives from timeStarted, timeFinished and exitCode. */
static const char *cmd_state(const cJSON *j)
{
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "lifecycleState"));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "timeout"));
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "exitCode")))
        return "FINISHED";
    if (jstr(j, "timeFinished"))
        return "FINISHED_NO_EXIT_CODE";
    return jstr(j, "timeStarted") ? "RUNNING" : "NOT_STARTED";
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int setup_http(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = EXTRA;
    return emu_fixture_setup_state(&o, state);
}

static int setup_https(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = EXTRA;
    o.https = true;
    return emu_fixture_setup_state(&o, state);
}

static int teardown(void **state)
{
    return emu_fixture_teardown_state(state);
}

static int setup_unisolated(void **state)
{
    emu_fixture_options o = {0};
    o.extra_yaml = EXTRA;
    o.no_isolation = true;
    return emu_fixture_setup_state(&o, state);
}

/* A command killed by a signal it did not get from the emulator reports the
 * shell convention 128+N, isolated or not; the emulator's own kills (cancel,
 * stop, timeout) report no exit code. */
static void test_signal_exit_codes(void **state)
{
    emu_fixture *f = *state;
    char id[64], p[256];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    const char *cmds[] = {"{\"command\":\"kill -KILL $$\"}", "{\"command\":\"kill -TERM $$\"}",
                          "{\"command\":\"sh -c 'kill -KILL $$'; echo $?\"}"};
    const int want[] = {137, 143, 0};
    for (int i = 0; i < 3; i++) {
        cJSON *j = NULL;
        assert_int_equal(emu_fixture_json(f, "POST", p, cmds[i], 200, &j), 0);
        if ((int)jnum(j, "exitCode", -1) != want[i])
            fprintf(stderr, "%s (isolated: %d): exitCode %d, want %d\n", cmds[i], emu_fixture_isolated(f),
                    (int)jnum(j, "exitCode", -1), want[i]);
        assert_int_equal((int)jnum(j, "exitCode", -1), want[i]);
        assert_string_equal(cmd_state(j), "FINISHED");
        if (i == 2)
            assert_string_equal(jstr(cJSON_GetObjectItem(j, "output"), "stdout"), "137\n");
        cJSON_Delete(j);
    }
    /* the timeout backstop: no exit code */
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"command\":\"sleep 30\",\"timeout\":\"PT1S\"}", 200, &j), 0);
    assert_string_equal(cmd_state(j), "FINISHED_NO_EXIT_CODE");
    assert_null(cJSON_GetObjectItem(j, "exitCode"));
    cJSON_Delete(j);
}

/* ---- sandboxes ---- */
static void test_sandbox_crud(void **state)
{
    emu_fixture *f = *state;
    cJSON *j = NULL;
    char path[256];
    assert_int_equal(emu_fixture_json(f, "POST", "/sandboxes?projectId=" EMU_FIXTURE_PROJECT,
                                      "{\"displayName\":\"crud\",\"shape\":\"MEDIUM\",\"expiresInMinutes\":5}", 200,
                                      &j),
                     0);
    assert_string_equal(jstr(j, "lifecycleState"), "CREATING");
    assert_string_equal(jstr(j, "displayName"), "crud");
    assert_string_equal(jstr(j, "shape"), "MEDIUM");
    assert_string_equal(jstr(j, "runtime"), "python-3.11");
    assert_string_equal(jstr(j, "projectId"), EMU_FIXTURE_PROJECT);
    const char *id = jstr(j, "id");
    assert_non_null(id);
    assert_int_equal(strlen(id), 20);
    assert_memory_equal(id, "sbx-", 4);
    for (size_t i = 4; i < 20; i++)
        assert_true((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '2' && id[i] <= '7'));
    assert_non_null(jstr(j, "timeCreated"));
    assert_non_null(jstr(j, "timeExpires"));
    char sid[64];
    snprintf(sid, sizeof sid, "%s", id);
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_wait_state(f, sid, "RUNNING"), 0);

    /* get carries an etag; update with a stale If-Match is 412 */
    snprintf(path, sizeof path, "/sandboxes/%s", sid);
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "GET", path, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    char *etag = emu_fixture_result_header(&r, "etag");
    char *rid = emu_fixture_result_header(&r, "opc-request-id");
    assert_non_null(etag);
    assert_non_null(rid);
    free(rid);
    emu_fixture_result_free(&r);
    assert_int_equal(emu_fixture_json(f, "PUT", path, "{\"displayName\":\"renamed\"}", 200, &j), 0);
    assert_string_equal(jstr(j, "displayName"), "renamed");
    cJSON_Delete(j);
    char im[200];
    snprintf(im, sizeof im, "if-match: %s", etag);
    const char *extra[] = {im, NULL};
    emu_fixture_req req = {0};
    req.method = "PUT";
    req.path = path;
    req.body = "{\"displayName\":\"x\"}";
    req.body_len = strlen(req.body);
    req.extra_headers = extra;
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    assert_int_equal(r.status, 412);
    emu_fixture_result_free(&r);
    free(etag);

    /* opc-request-id is echoed */
    const char *rid_hdr[] = {"opc-request-id: my-request-123", NULL};
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.path = path;
    req.extra_headers = rid_hdr;
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    rid = emu_fixture_result_header(&r, "opc-request-id");
    assert_string_equal(rid, "my-request-123");
    free(rid);
    emu_fixture_result_free(&r);

    /* delete: 204, then 404; listed only with lifecycleState=DELETED */
    assert_int_equal(emu_fixture_json(f, "DELETE", path, NULL, 204, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "GET", path, NULL, 404, &j), 0);
    assert_string_equal(jstr(j, "code"), "NotAuthorizedOrNotFound");
    cJSON_Delete(j);
    char lp[256];
    snprintf(lp, sizeof lp, "/sandboxes?sandboxId=%s&lifecycleState=DELETED", sid);
    assert_int_equal(emu_fixture_json(f, "GET", lp, NULL, 200, &j), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
    /* the workspace is gone */
    char ws[512];
    snprintf(ws, sizeof ws, "%s/workspaces/%s", emu_fixture_state_dir(f), sid);
    FILE *fp = fopen(ws, "r");
    assert_null(fp);
}

static void test_create_validation(void **state)
{
    emu_fixture *f = *state;
    cJSON *j = NULL;
    const char *p = "/sandboxes?projectId=" EMU_FIXTURE_PROJECT;
    /* -1 is no expiry [public] (test_no_expiry_if_match_command_lists); 0 and -2 are not */
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"expiresInMinutes\":0}", 400, &j), 0);
    assert_string_equal(jstr(j, "code"), "InvalidParameter");
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"expiresInMinutes\":11}", 400, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"shape\":\"HUGE\"}", 400, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"displayName\":5}", 400, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "POST", p, "not json", 400, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"warmpoolName\":\"pool-b\"}", 400, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "POST", "/sandboxes", "{}", 400, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "POST", "/sandboxes?projectId=ocid1.nope", "{}", 404, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"warmpoolName\":\"pool-a\",\"expiresInMinutes\":3}", 200, &j),
                     0);
    assert_string_equal(jstr(j, "warmpoolName"), "pool-a");
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "GET", "/nosuch", NULL, 404, NULL), 0);
    /* an environment variable needs a value */
    const char *novalue[] = {
        "{\"environmentVariables\":[{\"name\":\"A\",\"value\":\"x\"},{\"name\":\"T\"}]}",
        "{\"environmentVariables\":[{\"name\":\"A\",\"value\":\"x\"},{\"name\":\"T\",\"value\":null}]}"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(emu_fixture_json(f, "POST", p, novalue[i], 400, &j), 0);
        assert_non_null(strstr(jstr(j, "message"), "environmentVariables[1].value"));
        cJSON_Delete(j);
    }
}

static void test_lifecycle(void **state)
{
    emu_fixture *f = *state;
    char id[64], path[256], act[300];
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"expiresInMinutes\":5", id, sizeof id), 0);
    snprintf(path, sizeof path, "/sandboxes/%s", id);
    /* resume while RUNNING: 409 IncorrectState */
    snprintf(act, sizeof act, "%s/actions/resume", path);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{}", 409, &j), 0);
    assert_string_equal(jstr(j, "code"), "IncorrectState");
    cJSON_Delete(j);
    /* suspend: a running command is stopped (SIGSTOP), resume continues it */
    snprintf(act, sizeof act, "%s/commands", path);
    assert_int_equal(emu_fixture_json(f, "POST", act,
                                      "{\"command\":\"for i in 1 2 3 4 5 6 7 8 9 10; do echo $i; sleep 0.1; done\"}",
                                      200, &j),
                     0);
    char cid[64];
    snprintf(cid, sizeof cid, "%s", jstr(j, "id"));
    cJSON_Delete(j);
    snprintf(act, sizeof act, "%s/actions/suspend", path);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{}", 202, NULL), 0);
    assert_int_equal(emu_fixture_wait_state(f, id, "SUSPENDED"), 0);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{}", 409, NULL), 0);
    snprintf(act, sizeof act, "%s/commands", path);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{\"command\":\"true\"}", 409, NULL), 0);
    char cp[400];
    snprintf(cp, sizeof cp, "%s/commands/%s", path, cid);
    assert_int_equal(emu_fixture_json(f, "GET", cp, NULL, 200, &j), 0);
    int before = (int)jnum(j, "seq", 0);
    (void)before;
    cJSON_Delete(j);
    char op[500];
    snprintf(op, sizeof op, "%s/output", cp);
    assert_int_equal(emu_fixture_json(f, "GET", op, NULL, 200, &j), 0);
    double seq1 = jnum(j, "lastSeq", -1);
    cJSON_Delete(j);
    sleep_ms(400);
    assert_int_equal(emu_fixture_json(f, "GET", op, NULL, 200, &j), 0);
    assert_true(jnum(j, "lastSeq", -1) == seq1); /* nothing new while suspended */
    cJSON_Delete(j);
    snprintf(act, sizeof act, "%s/actions/resume", path);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{}", 202, NULL), 0);
    assert_int_equal(emu_fixture_wait_state(f, id, "RUNNING"), 0);
    for (int i = 0; i < 200; i++) {
        assert_int_equal(emu_fixture_json(f, "GET", cp, NULL, 200, &j), 0);
        bool done = !strcmp(cmd_state(j), "FINISHED");
        cJSON_Delete(j);
        if (done)
            break;
        sleep_ms(50);
    }
    assert_int_equal(emu_fixture_json(f, "GET", cp, NULL, 200, &j), 0);
    assert_string_equal(cmd_state(j), "FINISHED");
    assert_int_equal((int)jnum(j, "exitCode", -1), 0);
    cJSON_Delete(j);

    /* extend: within the maximum lifetime, then past it (400) */
    snprintf(act, sizeof act, "%s/actions/extend", path);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{\"additionalDuration\":\"PT2M\"}", 200, &j), 0);
    assert_int_equal((int)jnum(j, "expiresInMinutes", 0), 7);
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{\"additionalDuration\":\"PT4M\"}", 400, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{\"additionalDuration\":\"soon\"}", 400, NULL), 0);

    /* stop (graceful): STOPPING -> STOPPED; a long command is canceled */
    snprintf(act, sizeof act, "%s/commands", path);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{\"command\":\"sleep 100\"}", 200, &j), 0);
    snprintf(cp, sizeof cp, "%s/commands/%s", path, jstr(j, "id"));
    cJSON_Delete(j);
    snprintf(act, sizeof act, "%s/actions/stop", path);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{\"isForce\":false}", 202, NULL), 0);
    assert_int_equal(emu_fixture_wait_state(f, id, "STOPPED"), 0);
    assert_int_equal(emu_fixture_json(f, "GET", cp, NULL, 200, &j), 0);
    assert_string_equal(cmd_state(j), "FINISHED_NO_EXIT_CODE");
    assert_null(cJSON_GetObjectItem(j, "exitCode"));
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "GET", path, NULL, 200, &j), 0);
    assert_non_null(jstr(j, "timeStopped"));
    cJSON_Delete(j);
    /* illegal transitions from STOPPED */
    assert_int_equal(emu_fixture_json(f, "POST", act, "{}", 409, NULL), 0);
    snprintf(act, sizeof act, "%s/actions/extend", path);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{\"additionalDuration\":\"PT1M\"}", 409, NULL), 0);
    snprintf(act, sizeof act, "%s/actions/suspend", path);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{}", 409, NULL), 0);
    snprintf(act, sizeof act, "%s/files?filePath=/workspace/a", path);
    assert_int_equal(emu_fixture_json(f, "GET", act, NULL, 409, NULL), 0);

    /* force stop on another sandbox */
    char id2[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id2, sizeof id2), 0);
    snprintf(act, sizeof act, "/sandboxes/%s/actions/stop", id2);
    assert_int_equal(emu_fixture_json(f, "POST", act, "{\"isForce\":true}", 202, NULL), 0);
    assert_int_equal(emu_fixture_wait_state(f, id2, "STOPPED"), 0);
}

static void test_expiry(void **state)
{
    emu_fixture *f = *state;
    char id[64], path[256];
    /* minute_ms is 1000 here: a 1-"minute" sandbox expires after a second */
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, "\"expiresInMinutes\":1", id, sizeof id), 0);
    snprintf(path, sizeof path, "/sandboxes/%s/commands", id);
    assert_int_equal(emu_fixture_json(f, "POST", path, "{\"command\":\"sleep 60\"}", 200, NULL), 0);
    assert_int_equal(emu_fixture_wait_state(f, id, "404"), 0);
    char lp[256];
    cJSON *j = NULL;
    snprintf(lp, sizeof lp, "/sandboxes?sandboxId=%s&lifecycleState=DELETED", id);
    assert_int_equal(emu_fixture_json(f, "GET", lp, NULL, 200, &j), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
}

/* ---- commands ---- */
static cJSON *wait_command(emu_fixture *f, const char *sid, const char *cid)
{
    char p[256];
    snprintf(p, sizeof p, "/sandboxes/%s/commands/%s", sid, cid);
    for (int i = 0; i < 600; i++) {
        cJSON *j = NULL;
        if (emu_fixture_json(f, "GET", p, NULL, 200, &j) != 0)
            return NULL;
        const char *st = cmd_state(j);
        if (!strncmp(st, "FINISHED", 8))
            return j;
        cJSON_Delete(j);
        sleep_ms(50);
    }
    return NULL;
}

static void test_commands(void **state)
{
    emu_fixture *f = *state;
    char id[64], p[256];
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_new_sandbox(
                         f, NULL, "\"environmentVariables\":[{\"name\":\"SBX_VAR\",\"value\":\"sandbox-secret-1\"}]",
                         id, sizeof id),
                     0);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    /* args are shell-quoted; environment = sandbox's + command's; cwd */
    assert_int_equal(
        emu_fixture_json(f, "POST", p,
                         "{\"command\":\"mkdir -p /workspace/sub && cd /workspace/sub && pwd && printf '%s|' "
                         "\\\"$SBX_VAR\\\" \\\"$CMD_VAR\\\" && printf '<%s>' \","
                         "\"args\":[\"a b\",\"$HOME\",\"it's\"],"
                         "\"environmentVariables\":[{\"name\":\"CMD_VAR\",\"value\":\"command-secret-2\"}]}",
                         200, &j),
        0);
    /* the values never come back (the output printed them, on purpose) */
    cJSON *echo = cJSON_Duplicate(j, 1);
    cJSON_DeleteItemFromObject(echo, "output");
    char *text = cJSON_PrintUnformatted(echo);
    cJSON_Delete(echo);
    assert_non_null(strstr(text, "\"environmentVariables\":[{\"name\":\"CMD_VAR\"}]"));
    assert_null(strstr(text, "sandbox-secret-1"));
    assert_null(strstr(text, "command-secret-2"));
    free(text);
    assert_string_equal(cmd_state(j), "FINISHED");
    assert_int_equal((int)jnum(j, "exitCode", -1), 0);
    {
        cJSON *e = NULL;
        assert_int_equal(emu_fixture_json(f, "POST", p,
                                          "{\"command\":\"true\",\"environmentVariables\":[{\"name\":\"T\"}]}", 400,
                                          &e),
                         0);
        assert_non_null(strstr(jstr(e, "message"), "environmentVariables[0].value"));
        cJSON_Delete(e);
    }
    const cJSON *out = cJSON_GetObjectItem(j, "output");
    assert_string_equal(jstr(out, "stdout"), "/workspace/sub\nsandbox-secret-1|command-secret-2|<a b><$HOME><it's>");
    cJSON_Delete(j);

    /* cwd and stderr, non-zero exit */
    assert_int_equal(emu_fixture_json(f, "POST", p,
                                      "{\"command\":\"pwd; echo oops >&2; exit 3\",\"cwd\":\"/workspace/sub\"}", 200,
                                      &j),
                     0);
    assert_string_equal(cmd_state(j), "FINISHED");
    assert_int_equal((int)jnum(j, "exitCode", -1), 3);
    out = cJSON_GetObjectItem(j, "output");
    assert_string_equal(jstr(out, "stdout"), "/workspace/sub\n");
    assert_string_equal(jstr(out, "stderr"), "oops\n");
    cJSON_Delete(j);

    /* run returns at once; events and output are kept with seq from 1 */
    snprintf(p, sizeof p, "/sandboxes/%s/commands", id);
    assert_int_equal(emu_fixture_json(f, "POST", p,
                                      "{\"command\":\"echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three\"}",
                                      200, &j),
                     0);
    char cid[64];
    snprintf(cid, sizeof cid, "%s", jstr(j, "id"));
    assert_memory_equal(cid, "cmd-", 4);
    /* SandboxCommandIdentifier [public]: the id and nothing else */
    assert_int_equal(cJSON_GetArraySize(j), 1);
    cJSON_Delete(j);
    j = wait_command(f, id, cid);
    assert_non_null(j);
    assert_string_equal(cmd_state(j), "FINISHED");
    assert_non_null(jstr(j, "timeStarted"));
    assert_non_null(jstr(j, "timeUpdated"));
    cJSON_Delete(j);
    char ep[300];
    snprintf(ep, sizeof ep, "/sandboxes/%s/commands/%s/events", id, cid);
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "GET", ep, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    char *ct = emu_fixture_result_header(&r, "content-type");
    assert_string_equal(ct, "text/event-stream");
    free(ct);
    /* SSE: data: <json>\n\n, seq 1.. in order: STARTED, STDOUT, STDERR, STDOUT, FINISHED */
    const char *expect_kind[] = {"STARTED", "STDOUT", "STDERR", "STDOUT", "FINISHED"};
    const char *expect_data[] = {NULL, "one\n", "two\n", "three\n", NULL};
    char *q = r.body;
    for (int i = 0; i < 5; i++) {
        assert_memory_equal(q, "data: ", 6);
        char *e = strstr(q, "\n\n");
        assert_non_null(e);
        *e = 0;
        cJSON *ev = cJSON_Parse(q + 6);
        assert_non_null(ev);
        assert_int_equal((int)jnum(ev, "seq", 0), i + 1);
        assert_string_equal(jstr(ev, "event"), expect_kind[i]);
        assert_string_equal(jstr(ev, "commandId"), cid);
        if (expect_data[i])
            assert_string_equal(jstr(ev, "data"), expect_data[i]);
        if (i == 4)
            assert_int_equal((int)jnum(ev, "exitCode", -1), 0);
        cJSON_Delete(ev);
        q = e + 2;
    }
    assert_int_equal(*q, 0);
    emu_fixture_result_free(&r);

    /* fromSeq/untilSeq, NDJSON on request */
    char ep2[400];
    snprintf(ep2, sizeof ep2, "%s?fromSeq=2&untilSeq=3", ep);
    const char *nd[] = {"accept: application/x-ndjson", NULL};
    emu_fixture_req req = {0};
    req.method = "GET";
    req.path = ep2;
    req.extra_headers = nd;
    assert_int_equal(emu_fixture_do(f, &req, &r), 0);
    ct = emu_fixture_result_header(&r, "content-type");
    assert_string_equal(ct, "application/x-ndjson");
    free(ct);
    char *nl = strchr(r.body, '\n');
    assert_non_null(nl);
    *nl = 0;
    cJSON *ev = cJSON_Parse(r.body);
    assert_int_equal((int)jnum(ev, "seq", 0), 2);
    cJSON_Delete(ev);
    char *second = nl + 1;
    nl = strchr(second, '\n');
    assert_non_null(nl);
    assert_int_equal(nl[1], 0);
    *nl = 0;
    ev = cJSON_Parse(second);
    assert_int_equal((int)jnum(ev, "seq", 0), 3);
    assert_string_equal(jstr(ev, "event"), "STDERR");
    cJSON_Delete(ev);
    emu_fixture_result_free(&r);

    char opath[400];
    snprintf(opath, sizeof opath, "/sandboxes/%s/commands/%s/output?fromSeq=3", id, cid);
    assert_int_equal(emu_fixture_json(f, "GET", opath, NULL, 200, &j), 0);
    assert_string_equal(jstr(j, "stdout"), "three\n");
    assert_string_equal(jstr(j, "stderr"), "two\n");
    assert_int_equal((int)jnum(j, "lastSeq", 0), 5);
    cJSON_Delete(j);
    snprintf(opath, sizeof opath, "%s?fromSeq=3&untilSeq=2", ep);
    assert_int_equal(emu_fixture_json(f, "GET", opath, NULL, 400, NULL), 0);
    snprintf(opath, sizeof opath, "/sandboxes/%s/commands/%s/output?fromSeq=-1", id, cid);
    assert_int_equal(emu_fixture_json(f, "GET", opath, NULL, 400, NULL), 0);
    snprintf(opath, sizeof opath, "/sandboxes/%s/commands/%s/output?fromSeq=0", id, cid);
    assert_int_equal(emu_fixture_json(f, "GET", opath, NULL, 200, &j), 0);
    assert_string_equal(jstr(j, "stderr"), "two\n");
    cJSON_Delete(j);

    /* runAndStream */
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndStream", id);
    assert_int_equal(emu_fixture_request(f, "POST", p, "{\"command\":\"echo streamed\"}", &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"data\":\"streamed\\n\""));
    assert_non_null(strstr(r.body, "\"event\":\"FINISHED\""));
    emu_fixture_result_free(&r);

    /* timeout backstop: TIMED_OUT and no exit code */
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"command\":\"sleep 30\",\"timeout\":\"PT0.5S\"}", 200, &j), 0);
    assert_string_equal(cmd_state(j), "FINISHED_NO_EXIT_CODE");
    assert_null(cJSON_GetObjectItem(j, "exitCode"));
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"command\":\"true\",\"timeout\":\"soon\"}", 400, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"args\":[\"x\"]}", 400, NULL), 0);

    /* cancel */
    snprintf(p, sizeof p, "/sandboxes/%s/commands", id);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"command\":\"sleep 30\"}", 200, &j), 0);
    snprintf(cid, sizeof cid, "%s", jstr(j, "id"));
    cJSON_Delete(j);
    char cancel[300];
    snprintf(cancel, sizeof cancel, "/sandboxes/%s/commands/%s/actions/cancel", id, cid);
    assert_int_equal(emu_fixture_json(f, "POST", cancel, "{}", 202, NULL), 0);
    j = wait_command(f, id, cid);
    assert_string_equal(cmd_state(j), "FINISHED_NO_EXIT_CODE");
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "POST", cancel, "{}", 409, NULL), 0);

    /* list with pagination */
    snprintf(p, sizeof p, "/sandboxes/%s/commands?limit=2", id);
    int total = 0;
    char page_path[512];
    snprintf(page_path, sizeof page_path, "%s", p);
    for (int guard = 0; guard < 20; guard++) {
        assert_int_equal(emu_fixture_request(f, "GET", page_path, NULL, &r), 0);
        assert_int_equal(r.status, 200);
        j = cJSON_Parse(r.body);
        int n = cJSON_GetArraySize(cJSON_GetObjectItem(j, "items"));
        assert_true(n <= 2);
        total += n;
        cJSON_Delete(j);
        char *next = emu_fixture_result_header(&r, "opc-next-page");
        emu_fixture_result_free(&r);
        if (!next)
            break;
        snprintf(page_path, sizeof page_path, "%s&page=%s", p, next);
        free(next);
    }
    assert_int_equal(total, 6);
    snprintf(p, sizeof p, "/sandboxes/%s/commands?limit=0", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 400, NULL), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/commands?page=bogus", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 400, NULL), 0);
}

static void test_output_loss(void **state)
{
    emu_fixture *f = *state;
    char id[64], p[256];
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    /* below output_loss_bytes (100000): all there */
    assert_int_equal(
        emu_fixture_json(f, "POST", p, "{\"command\":\"head -c 90000 /dev/zero | tr '\\\\0' x\"}", 200, &j), 0);
    assert_int_equal(strlen(jstr(cJSON_GetObjectItem(j, "output"), "stdout")), 90000);
    cJSON_Delete(j);
    /* past it in total (stdout + stderr): everything comes back empty */
    assert_int_equal(emu_fixture_json(f, "POST", p,
                                      "{\"command\":\"echo first; head -c 60000 /dev/zero | tr '\\\\0' x; head -c "
                                      "60000 /dev/zero | tr '\\\\0' y >&2\"}",
                                      200, &j),
                     0);
    assert_string_equal(cmd_state(j), "FINISHED");
    assert_int_equal((int)jnum(j, "exitCode", -1), 0);
    assert_string_equal(jstr(cJSON_GetObjectItem(j, "output"), "stdout"), "");
    assert_string_equal(jstr(cJSON_GetObjectItem(j, "output"), "stderr"), "");
    char cid[64];
    snprintf(cid, sizeof cid, "%s", jstr(j, "id"));
    cJSON_Delete(j);
    char ep[300];
    snprintf(ep, sizeof ep, "/sandboxes/%s/commands/%s/events", id, cid);
    emu_fixture_result r;
    assert_int_equal(emu_fixture_request(f, "GET", ep, NULL, &r), 0);
    assert_null(strstr(r.body, "first"));
    assert_null(strstr(r.body, "xxxx"));
    assert_non_null(strstr(r.body, "\"data\":\"\""));
    assert_non_null(strstr(r.body, "FINISHED"));
    emu_fixture_result_free(&r);
}

/* ---- files ---- */
static int put_file(emu_fixture *f, const char *sid, const char *enc_path, const void *data, size_t len,
                    const char *sha_override, emu_fixture_result *r)
{
    char p[1024], sha[64], hdr[128];
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=%s", sid, enc_path);
    ocisbx_sha256_base64(data, len, sha);
    snprintf(hdr, sizeof hdr, "opc-content-sha256: %s", sha_override ? sha_override : sha);
    const char *extra[] = {hdr, NULL};
    emu_fixture_req req = {0};
    req.method = "PUT";
    req.path = p;
    req.body = data;
    req.body_len = len;
    req.content_type = "application/octet-stream";
    req.extra_headers = extra;
    return emu_fixture_do(f, &req, r);
}

static void test_files(void **state)
{
    emu_fixture *f = *state;
    char id[64], p[512];
    emu_fixture_result r;
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    const char data[] = "hello\0binary\xff world";
    /* a path with a space, '+', '%' and unicode, in a new directory */
    assert_int_equal(put_file(f, id, "/workspace/new%20dir/a%2Bb%25%C3%A9.bin", data, sizeof data, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    j = cJSON_Parse(r.body);
    assert_string_equal(jstr(j, "filePath"), "/workspace/new dir/a+b%\xc3\xa9.bin");
    char sha[64];
    ocisbx_sha256_base64(data, sizeof data, sha);
    assert_string_equal(jstr(j, "contentSha256"), sha);
    cJSON_Delete(j);
    char *h = emu_fixture_result_header(&r, "opc-content-sha256");
    assert_string_equal(h, sha);
    free(h);
    emu_fixture_result_free(&r);
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/new%%20dir/a%%2Bb%%25%%C3%%A9.bin", id);
    assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body_len, sizeof data);
    assert_memory_equal(r.body, data, sizeof data);
    h = emu_fixture_result_header(&r, "opc-content-sha256");
    assert_string_equal(h, sha);
    free(h);
    emu_fixture_result_free(&r);
    /* the command sees it */
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"command\":\"wc -c < '/workspace/new dir/a+b%\xc3\xa9.bin'\"}",
                                      200, &j),
                     0);
    assert_string_equal(jstr(cJSON_GetObjectItem(j, "output"), "stdout"), "20\n");
    cJSON_Delete(j);

    /* sha mismatch: 400, nothing written */
    assert_int_equal(
        put_file(f, id, "/workspace/bad.txt", "abc", 3, "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", &r), 0);
    assert_int_equal(r.status, 400);
    emu_fixture_result_free(&r);
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/bad.txt", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 404, NULL), 0);
    /* too large: 413 */
    size_t big = 1048576 + 10;
    char *buf = calloc(1, big);
    assert_int_equal(put_file(f, id, "/workspace/big.bin", buf, big, NULL, &r), 0);
    assert_int_equal(r.status, 413);
    emu_fixture_result_free(&r);
    free(buf);
    /* escapes */
    const char *bad_paths[] = {
        "/workspace/../etc/passwd", "/etc/passwd", "workspace/a", "/workspace", "/workspacex/a",
        "/workspace/a/../../b"};
    for (size_t i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
        assert_int_equal(put_file(f, id, bad_paths[i], "x", 1, NULL, &r), 0);
        assert_int_equal(r.status, 400);
        emu_fixture_result_free(&r);
    }
    /* a symlink made by a command that points out of the workspace */
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    assert_int_equal(
        emu_fixture_json(f, "POST", p,
                         "{\"command\":\"ln -s /etc /workspace/etclink && ln -s /etc/hostname /workspace/hn\"}", 200,
                         NULL),
        0);
    assert_int_equal(put_file(f, id, "/workspace/etclink/evil", "x", 1, NULL, &r), 0);
    assert_int_equal(r.status, 400);
    emu_fixture_result_free(&r);
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/hn", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 400, NULL), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/etclink/hostname", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 400, NULL), 0);
    FILE *fp = fopen("/etc/evil", "r");
    assert_null(fp);
    /* missing file and missing filePath */
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/none", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 404, NULL), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/files", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 400, NULL), 0);
    /* overwrite replaces */
    assert_int_equal(put_file(f, id, "/workspace/o.txt", "first", 5, NULL, &r), 0);
    emu_fixture_result_free(&r);
    assert_int_equal(put_file(f, id, "/workspace/o.txt", "2", 1, NULL, &r), 0);
    emu_fixture_result_free(&r);
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/o.txt", id);
    assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r), 0);
    assert_int_equal(r.body_len, 1);
    emu_fixture_result_free(&r);
}

/* ---- snapshots ---- */
static void test_snapshots(void **state)
{
    emu_fixture *f = *state;
    char id[64], p[512], snap[64];
    emu_fixture_result r;
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    assert_int_equal(put_file(f, id, "/workspace/d/keep.txt", "kept", 4, NULL, &r), 0);
    emu_fixture_result_free(&r);
    char body[256];
    /* CreateSandboxSnapshotDetails has no displayName [public]: refused, named */
    snprintf(body, sizeof body, "{\"sandboxId\":\"%s\",\"displayName\":\"s1\"}", id);
    assert_int_equal(emu_fixture_json(f, "POST", "/sandboxSnapshots", body, 400, &j), 0);
    assert_non_null(strstr(jstr(j, "message"), "CreateSandboxSnapshotDetails has no field 'displayName'"));
    cJSON_Delete(j);
    snprintf(body, sizeof body, "{\"sandboxId\":\"%s\",\"expirationDuration\":\"P7D\"}", id);
    assert_int_equal(emu_fixture_json(f, "POST", "/sandboxSnapshots", body, 200, &j), 0);
    snprintf(snap, sizeof snap, "%s", jstr(j, "id"));
    assert_memory_equal(snap, "snap-", 5);
    assert_string_equal(jstr(j, "lifecycleState"), "ACTIVE");
    assert_int_equal((int)jnum(j, "sizeBytes", 0), 4);
    assert_string_equal(jstr(j, "projectId"), EMU_FIXTURE_PROJECT);
    assert_string_equal(jstr(j, "expirationDuration"), "P7D");
    assert_non_null(jstr(j, "timeUpdated"));
    assert_non_null(jstr(j, "timeExpires"));
    cJSON_Delete(j);
    /* list filters [public names] */
    const char *const filters[][2] = {
        {"projectId=" EMU_FIXTURE_PROJECT, "1"}, {"projectId=ocid1.other", "0"},
        {"snapshotId=snap-none", "0"},           {"lifecycleState=ACTIVE", "1"},
        {"lifecycleState=DELETED", "0"},         {"sortBy=displayName&sortOrder=ASC", "1"},
    };
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        snprintf(p, sizeof p, "/sandboxSnapshots?sandboxId=%s&%s", id, filters[i][0]);
        assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), atoi(filters[i][1]));
        cJSON_Delete(j);
    }
    snprintf(p, sizeof p, "/sandboxSnapshots?snapshotId=%s", snap);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxSnapshots?lifecycleState=GONE", NULL, 400, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxSnapshots?sortBy=size", NULL, 400, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxSnapshots?sortOrder=UP", NULL, 400, NULL), 0);
    snprintf(p, sizeof p, "/sandboxSnapshots?sandboxId=%s", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
    /* a new sandbox from the snapshot starts with the file */
    char fields[256], id2[64];
    snprintf(fields, sizeof fields, "\"source\":{\"sourceType\":\"SNAPSHOT\",\"snapshotId\":\"%s\"}", snap);
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, fields, id2, sizeof id2), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/d/keep.txt", id2);
    assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "kept");
    emu_fixture_result_free(&r);
    snprintf(p, sizeof p, "/sandboxSnapshots/%s", snap);
    /* get sends an etag; delete with a stale if-match is 412, with the current one 204 */
    assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    char *etag = emu_fixture_result_header(&r, "etag");
    emu_fixture_result_free(&r);
    assert_non_null(etag);
    char im[160];
    const char *hdr[] = {im, NULL};
    emu_fixture_req del = {0};
    del.method = "DELETE";
    del.path = p;
    del.extra_headers = hdr;
    snprintf(im, sizeof im, "if-match: \"stale-0\"");
    assert_int_equal(emu_fixture_do(f, &del, &r), 0);
    assert_int_equal(r.status, 412);
    assert_non_null(strstr(r.body, "PreconditionFailed"));
    emu_fixture_result_free(&r);
    snprintf(im, sizeof im, "if-match: %s", etag);
    free(etag);
    assert_int_equal(emu_fixture_do(f, &del, &r), 0);
    assert_int_equal(r.status, 204);
    emu_fixture_result_free(&r);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 404, NULL), 0);
    snprintf(p, sizeof p, "/sandboxSnapshots?sandboxId=%s&lifecycleState=DELETED", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "POST", "/sandboxes?projectId=" EMU_FIXTURE_PROJECT,
                                      "{\"source\":{\"sourceType\":\"SNAPSHOT\",\"snapshotId\":\"snap-none\"}}", 404,
                                      NULL),
                     0);
}

/* ---- the emulator is at least as strict as the service ---- */
/* A request body field the public model does not have is a 400 naming it. */
static void test_strict_bodies(void **state)
{
    emu_fixture *f = *state;
    char id[64];
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    char p[10][256];
    snprintf(p[0], sizeof p[0], "/sandboxes?projectId=%s", EMU_FIXTURE_PROJECT);
    snprintf(p[1], sizeof p[1], "/sandboxes/%s", id);
    snprintf(p[2], sizeof p[2], "/sandboxes/%s/actions/stop", id);
    snprintf(p[3], sizeof p[3], "/sandboxes/%s/actions/extend", id);
    snprintf(p[4], sizeof p[4], "/sandboxes/%s/actions/suspend", id);
    snprintf(p[5], sizeof p[5], "/sandboxes/%s/actions/resume", id);
    snprintf(p[6], sizeof p[6], "/sandboxes/%s/commands", id);
    snprintf(p[7], sizeof p[7], "/sandboxes/%s/commands/actions/runAndWait", id);
    snprintf(p[8], sizeof p[8], "/sandboxSnapshots");
    snprintf(p[9], sizeof p[9], "/sandboxes?projectId=%s", EMU_FIXTURE_PROJECT);
    const struct {
        const char *method, *body, *message;
        int path;
    } cases[] = {
        {"POST", "{\"displayName\":\"x\",\"compartmentId\":\"c\"}",
         "CreateSandboxDetails has no field 'compartmentId'", 0},
        {"POST", "{\"source\":{\"sourceType\":\"SNAPSHOT\",\"snapshotId\":\"s\",\"x\":1}}",
         "SandboxSource has no field 'x'", 9},
        {"POST", "{\"environmentVariables\":[{\"name\":\"A\",\"value\":\"1\",\"secret\":true}]}",
         "EnvironmentVariable has no field 'secret'", 0},
        {"PUT", "{\"displayName\":\"x\",\"shape\":\"LARGE\"}", "UpdateSandboxDetails has no field 'shape'", 1},
        {"POST", "{\"isForce\":true,\"force\":true}", "StopSandboxDetails has no field 'force'", 2},
        {"POST", "{\"additionalDuration\":\"PT1M\",\"expiresInMinutes\":3}",
         "ExtendSandboxDetails has no field 'expiresInMinutes'", 3},
        {"POST", "{\"now\":true}", "SuspendSandboxDetails has no field 'now'", 4},
        {"POST", "{\"now\":true}", "ResumeSandboxDetails has no field 'now'", 5},
        {"POST", "{\"command\":\"true\",\"lifecycleState\":\"RUNNING\"}",
         "RunSandboxCommandDetails has no field 'lifecycleState'", 6},
        {"POST", "{\"command\":\"true\",\"shell\":\"bash\"}", "RunSandboxCommandDetails has no field 'shell'", 7},
        {"POST", "{\"sandboxId\":\"x\",\"sizeBytes\":1}", "CreateSandboxSnapshotDetails has no field 'sizeBytes'", 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *e = NULL;
        assert_int_equal(emu_fixture_json(f, cases[i].method, p[cases[i].path], cases[i].body, 400, &e), 0);
        if (!strstr(jstr(e, "message"), cases[i].message))
            fprintf(stderr, "case %zu: %s\n", i, jstr(e, "message"));
        assert_non_null(strstr(jstr(e, "message"), cases[i].message));
        assert_string_equal(jstr(e, "code"), "InvalidParameter");
        cJSON_Delete(e);
    }
    /* the cancel body too */
    char cp[320];
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "POST", p[6], "{\"command\":\"sleep 30\"}", 200, &j), 0);
    snprintf(cp, sizeof cp, "/sandboxes/%s/commands/%s/actions/cancel", id, jstr(j, "id"));
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "POST", cp, "{\"reason\":\"x\"}", 400, NULL), 0);
    assert_int_equal(emu_fixture_json(f, "POST", cp, "{}", 202, NULL), 0);
}

/* expiresInMinutes -1 disables expiry [public]; if-match on update, stop
 * and extend; command lists: SandboxCommandSummary, filters, sorting. */
static void test_no_expiry_if_match_command_lists(void **state)
{
    emu_fixture *f = *state;
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "POST", "/sandboxes?projectId=" EMU_FIXTURE_PROJECT,
                                      "{\"expiresInMinutes\":-1}", 200, &j),
                     0);
    char id[64], p[256];
    snprintf(id, sizeof id, "%s", jstr(j, "id"));
    assert_int_equal((int)jnum(j, "expiresInMinutes", 0), -1);
    assert_null(jstr(j, "timeExpires"));
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_json(f, "POST", "/sandboxes?projectId=" EMU_FIXTURE_PROJECT,
                                      "{\"expiresInMinutes\":-2}", 400, &j),
                     0);
    assert_non_null(strstr(jstr(j, "message"), "-1 (no expiry)"));
    cJSON_Delete(j);
    assert_int_equal(emu_fixture_wait_state(f, id, "RUNNING"), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/actions/extend", id);
    assert_int_equal(emu_fixture_json(f, "POST", p, "{\"additionalDuration\":\"PT1M\"}", 409, NULL), 0);

    /* etag on get and update; a stale if-match is 412 on update, stop, extend */
    emu_fixture_result r;
    snprintf(p, sizeof p, "/sandboxes/%s", id);
    assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r), 0);
    char *etag = emu_fixture_result_header(&r, "etag");
    emu_fixture_result_free(&r);
    assert_non_null(etag);
    char im[160];
    const char *hdr[] = {im, NULL};
    snprintf(im, sizeof im, "if-match: \"%s-0\"", id);
    const char *acts[][3] = {{"PUT", "", "{\"displayName\":\"n\"}"},
                             {"POST", "/actions/extend", "{\"additionalDuration\":\"PT1M\"}"},
                             {"POST", "/actions/stop", "{}"}};
    char ap[320];
    for (int i = 0; i < 3; i++) {
        snprintf(ap, sizeof ap, "/sandboxes/%s%s", id, acts[i][1]);
        emu_fixture_req q = {0};
        q.method = acts[i][0];
        q.path = ap;
        q.body = acts[i][2];
        q.body_len = strlen(q.body);
        q.extra_headers = hdr;
        assert_int_equal(emu_fixture_do(f, &q, &r), 0);
        assert_int_equal(r.status, 412);
        emu_fixture_result_free(&r);
    }
    snprintf(im, sizeof im, "if-match: %s", etag);
    free(etag);
    emu_fixture_req q = {0};
    q.method = "PUT";
    q.path = p;
    q.body = "{\"displayName\":\"n2\"}";
    q.body_len = strlen(q.body);
    q.extra_headers = hdr;
    assert_int_equal(emu_fixture_do(f, &q, &r), 0);
    assert_int_equal(r.status, 200);
    char *etag2 = emu_fixture_result_header(&r, "etag");
    emu_fixture_result_free(&r);
    assert_non_null(etag2);
    assert_string_not_equal(etag2, im + strlen("if-match: "));
    /* the old etag is stale now: stop refuses it, the new one is taken */
    snprintf(ap, sizeof ap, "/sandboxes/%s/actions/stop", id);
    q.method = "POST";
    q.path = ap;
    q.body = "{}";
    q.body_len = 2;
    assert_int_equal(emu_fixture_do(f, &q, &r), 0);
    assert_int_equal(r.status, 412);
    emu_fixture_result_free(&r);

    /* command lists: summaries (no environmentVariables, no output) */
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    char cids[3][64];
    for (int i = 0; i < 3; i++) {
        char body[200];
        snprintf(body, sizeof body,
                 "{\"command\":\"echo %d\",\"environmentVariables\":[{\"name\":\"V\",\"value\":\"s\"}]}", i);
        assert_int_equal(emu_fixture_json(f, "POST", p, body, 200, &j), 0);
        snprintf(cids[i], sizeof cids[i], "%s", jstr(j, "id"));
        cJSON_Delete(j);
        sleep_ms(3); /* times are in milliseconds: keep each command's distinct, however fast */
    }
    snprintf(p, sizeof p, "/sandboxes/%s/commands", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    const cJSON *items = cJSON_GetObjectItem(j, "items");
    assert_int_equal(cJSON_GetArraySize(items), 3);
    const cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
        assert_null(cJSON_GetObjectItem(it, "environmentVariables"));
        assert_null(cJSON_GetObjectItem(it, "output"));
        assert_string_equal(cmd_state(it), "FINISHED");
    }
    assert_string_equal(jstr(cJSON_GetArrayItem(items, 0), "id"), cids[0]); /* default: oldest first */
    cJSON_Delete(j);
    snprintf(p, sizeof p, "/sandboxes/%s/commands?sortBy=timeFinished&sortOrder=DESC", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_string_equal(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"), 0), "id"), cids[2]);
    cJSON_Delete(j);
    snprintf(p, sizeof p, "/sandboxes/%s/commands?commandId=%s", id, cids[1]);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    assert_string_equal(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"), 0), "id"), cids[1]);
    cJSON_Delete(j);
    snprintf(p, sizeof p, "/sandboxes/%s/commands?sortBy=exitCode", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 400, NULL), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/commands?sortOrder=down", id);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 400, NULL), 0);
    /* a get still has the environment's names (never the values) */
    snprintf(p, sizeof p, "/sandboxes/%s/commands/%s", id, cids[0]);
    assert_int_equal(emu_fixture_json(f, "GET", p, NULL, 200, &j), 0);
    assert_non_null(cJSON_GetObjectItem(j, "environmentVariables"));
    cJSON_Delete(j);
    free(etag2);
}

/* ---- retry tokens ---- */
static void test_retry_token(void **state)
{
    emu_fixture *f = *state;
    char id[64], p[256];
    emu_fixture_result r1, r2;
    assert_int_equal(emu_fixture_new_sandbox(f, NULL, NULL, id, sizeof id), 0);
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndWait", id);
    const char *tok[] = {"opc-retry-token: token-abc-1", NULL};
    emu_fixture_req req = {0};
    req.method = "POST";
    req.path = p;
    req.body = "{\"command\":\"echo x >> /workspace/count; wc -l < /workspace/count\"}";
    req.body_len = strlen(req.body);
    req.extra_headers = tok;
    assert_int_equal(emu_fixture_do(f, &req, &r1), 0);
    assert_int_equal(emu_fixture_do(f, &req, &r2), 0);
    assert_int_equal(r1.status, 200);
    assert_string_equal(r1.body, r2.body); /* same command, same answer */
    emu_fixture_result_free(&r1);
    emu_fixture_result_free(&r2);
    /* it ran once */
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/count", id);
    assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r1), 0);
    assert_string_equal(r1.body, "x\n");
    emu_fixture_result_free(&r1);
    /* a retried runAndStream streams the same command again */
    snprintf(p, sizeof p, "/sandboxes/%s/commands/actions/runAndStream", id);
    const char *tok3[] = {"opc-retry-token: stream-token-1", NULL};
    req.path = p;
    req.body = "{\"command\":\"echo s >> /workspace/scount; echo streamed\"}";
    req.body_len = strlen(req.body);
    req.extra_headers = tok3;
    assert_int_equal(emu_fixture_do(f, &req, &r1), 0);
    assert_int_equal(emu_fixture_do(f, &req, &r2), 0);
    assert_int_equal(r1.status, 200);
    assert_non_null(strstr(r1.body, "streamed"));
    assert_string_equal(r1.body, r2.body);
    emu_fixture_result_free(&r1);
    emu_fixture_result_free(&r2);
    snprintf(p, sizeof p, "/sandboxes/%s/files?filePath=/workspace/scount", id);
    assert_int_equal(emu_fixture_request(f, "GET", p, NULL, &r1), 0);
    assert_string_equal(r1.body, "s\n");
    emu_fixture_result_free(&r1);
    /* a create retried with the same token makes one sandbox */
    const char *tok2[] = {"opc-retry-token: create-token-1", NULL};
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = "/sandboxes?projectId=" EMU_FIXTURE_PROJECT;
    req.body = "{\"displayName\":\"once\"}";
    req.body_len = strlen(req.body);
    req.extra_headers = tok2;
    assert_int_equal(emu_fixture_do(f, &req, &r1), 0);
    assert_int_equal(emu_fixture_do(f, &req, &r2), 0);
    cJSON *a = cJSON_Parse(r1.body), *b = cJSON_Parse(r2.body);
    assert_string_equal(jstr(a, "id"), jstr(b, "id"));
    cJSON_Delete(a);
    cJSON_Delete(b);
    emu_fixture_result_free(&r1);
    emu_fixture_result_free(&r2);
    cJSON *j = NULL;
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxes?displayName=once", NULL, 200, &j), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
}

static void test_list_pagination(void **state)
{
    emu_fixture *f = *state;
    cJSON *j = NULL;
    for (int i = 0; i < 5; i++) {
        char body[64];
        snprintf(body, sizeof body, "{\"displayName\":\"page-%d\"}", i);
        assert_int_equal(
            emu_fixture_json(f, "POST", "/sandboxes?projectId=" EMU_FIXTURE_PROJECT_NET, body, 200, NULL), 0);
    }
    const char *base = "/sandboxes?projectId=" EMU_FIXTURE_PROJECT_NET "&sortBy=displayName&sortOrder=ASC&limit=2";
    char path[512];
    snprintf(path, sizeof path, "%s", base);
    int seen = 0;
    for (int guard = 0; guard < 10; guard++) {
        emu_fixture_result r;
        assert_int_equal(emu_fixture_request(f, "GET", path, NULL, &r), 0);
        assert_int_equal(r.status, 200);
        j = cJSON_Parse(r.body);
        const cJSON *it;
        cJSON_ArrayForEach(it, cJSON_GetObjectItem(j, "items"))
        {
            char want[32];
            snprintf(want, sizeof want, "page-%d", seen++);
            assert_string_equal(jstr(it, "displayName"), want);
        }
        cJSON_Delete(j);
        char *next = emu_fixture_result_header(&r, "opc-next-page");
        emu_fixture_result_free(&r);
        if (!next)
            break;
        snprintf(path, sizeof path, "%s&page=%s", base, next);
        free(next);
    }
    assert_int_equal(seen, 5);
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxes?sortBy=size", NULL, 400, NULL), 0);
    cJSON *e = NULL;
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxes?lifecycleState=NOPE", NULL, 400, &e), 0);
    assert_string_equal(jstr(e, "code"), "InvalidParameter");
    assert_non_null(strstr(jstr(e, "message"), "lifecycleState"));
    cJSON_Delete(e);
    assert_int_equal(emu_fixture_json(f, "GET", "/sandboxes?lifecycleState=STOPPED", NULL, 200, NULL), 0);
}

/* the longest first (they start first) */
#define ALL(setup)                                                                               \
    cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),                            \
        cmocka_unit_test_setup_teardown(test_commands, setup, teardown),                         \
        cmocka_unit_test_setup_teardown(test_expiry, setup, teardown),                           \
        cmocka_unit_test_setup_teardown(test_sandbox_crud, setup, teardown),                     \
        cmocka_unit_test_setup_teardown(test_create_validation, setup, teardown),                \
        cmocka_unit_test_setup_teardown(test_output_loss, setup, teardown),                      \
        cmocka_unit_test_setup_teardown(test_files, setup, teardown),                            \
        cmocka_unit_test_setup_teardown(test_snapshots, setup, teardown),                        \
        cmocka_unit_test_setup_teardown(test_strict_bodies, setup, teardown),                    \
        cmocka_unit_test_setup_teardown(test_no_expiry_if_match_command_lists, setup, teardown), \
        cmocka_unit_test_setup_teardown(test_retry_token, setup, teardown),                      \
        cmocka_unit_test_setup_teardown(test_list_pagination, setup, teardown)

int main(void)
{
    ocisbx_global_init();
    const struct CMUnitTest http_tests[] = {
        cmocka_unit_test_setup_teardown(test_signal_exit_codes, setup_http, teardown),
        cmocka_unit_test_setup_teardown(test_signal_exit_codes, setup_unisolated, teardown), ALL(setup_http)};
    const struct CMUnitTest https_tests[] = {ALL(setup_https)};
    /* every case starts a tenancy of its own: all run side by side, the
     * https ones' longest first */
    const par_group groups[] = {PAR_GROUP("emulator over https", https_tests, NULL, NULL),
                                PAR_GROUP("emulator over http", http_tests, NULL, NULL)};
    int fails = par_run_groups(groups, sizeof groups / sizeof groups[0]);
    ocisbx_global_cleanup();
    return fails ? 1 : 0;
}
