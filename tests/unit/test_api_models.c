/* Every model: parsing, typed getters, unknown fields kept, wrong types
 * refused naming the field, JSON out; request details and their checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/model_internal.h"
#include "ocisbx/api.h"

#define J(s) s, strlen(s)

static void assert_error_has(const char *needle)
{
    const char *m = ocisbx_error_message(ocisbx_error_last());
    if (!strstr(m, needle))
        fail_msg("error '%s' does not name '%s'", m, needle);
}

static const char *SANDBOX =
    "{\"id\":\"sbx-abcdefghijklmnop\",\"projectId\":\"ocid1.generativeaiproject.oc1..a\",\"displayName\":\"d\","
    "\"runtime\":\"python-3.11\",\"shape\":\"SMALL\",\"lifecycleState\":\"RUNNING\",\"lifecycleDetails\":\"ok\","
    "\"publishedPorts\":[{\"port\":8080,\"url\":\"https://p.example\"}],\"publishedPortAuthMode\":\"OCI_IAM\","
    "\"warmpoolName\":\"wp\",\"expiresInMinutes\":60,\"timeCreated\":\"2026-01-01T00:00:00Z\","
    "\"timeUpdated\":\"2026-01-01T00:00:01Z\",\"timeExpires\":\"2026-01-01T01:00:00Z\",\"timeStopped\":null,"
    "\"futureField\":{\"nested\":[1,2,3]}}";

static void test_sandbox(void **state)
{
    (void)state;
    ocisbx_sandbox *s = NULL;
    assert_int_equal(ocisbx_sandbox_from_json(J(SANDBOX), &s), 0);
    assert_string_equal(ocisbx_sandbox_id(s), "sbx-abcdefghijklmnop");
    assert_string_equal(ocisbx_sandbox_project_id(s), "ocid1.generativeaiproject.oc1..a");
    assert_string_equal(ocisbx_sandbox_display_name(s), "d");
    assert_string_equal(ocisbx_sandbox_runtime(s), "python-3.11");
    assert_string_equal(ocisbx_sandbox_shape(s), "SMALL");
    assert_string_equal(ocisbx_sandbox_lifecycle_state(s), "RUNNING");
    assert_string_equal(ocisbx_sandbox_lifecycle_details(s), "ok");
    assert_string_equal(ocisbx_sandbox_published_port_auth_mode(s), "OCI_IAM");
    assert_string_equal(ocisbx_sandbox_warmpool_name(s), "wp");
    int64_t m = 0;
    assert_int_equal(ocisbx_sandbox_has_expires_in_minutes(s, &m), 1);
    assert_int_equal(m, 60);
    assert_string_equal(ocisbx_sandbox_time_created(s), "2026-01-01T00:00:00Z");
    assert_string_equal(ocisbx_sandbox_time_updated(s), "2026-01-01T00:00:01Z");
    assert_string_equal(ocisbx_sandbox_time_expires(s), "2026-01-01T01:00:00Z");
    assert_null(ocisbx_sandbox_time_stopped(s)); /* null reads as absent */
    assert_int_equal(ocisbx_sandbox_published_port_count(s), 1);
    assert_int_equal(ocisbx_sandbox_published_port(s, 0), 8080);
    assert_string_equal(ocisbx_sandbox_published_port_url(s, 0), "https://p.example");
    assert_int_equal(ocisbx_sandbox_published_port(s, 1), 0);
    assert_null(ocisbx_sandbox_published_port_url(s, 1));
    assert_null(ocisbx_sandbox_etag(s));
    char *json = NULL;
    assert_int_equal(ocisbx_sandbox_to_json(s, &json), 0);
    assert_non_null(strstr(json, "\"futureField\":{\"nested\":[1,2,3]}")); /* unknown fields kept */
    assert_non_null(strstr(json, "\"lifecycleState\":\"RUNNING\""));
    ocisbx_free(json);
    ocisbx_sandbox_free(s);
    ocisbx_sandbox_free(NULL);
}

struct bad {
    const ocisbx_model_def *def;
    const char *json;
    const char *field;
};

static void test_wrong_types(void **state)
{
    (void)state;
    static const struct bad cases[] = {
        {&ocisbx_md_sandbox, "{\"id\":1}", "Sandbox.id"},
        {&ocisbx_md_sandbox, "{\"id\":\"s\",\"lifecycleState\":true}", "Sandbox.lifecycleState"},
        {&ocisbx_md_sandbox, "{\"id\":\"s\",\"expiresInMinutes\":\"60\"}", "Sandbox.expiresInMinutes"},
        {&ocisbx_md_sandbox, "{\"id\":\"s\",\"expiresInMinutes\":1.5}", "Sandbox.expiresInMinutes"},
        {&ocisbx_md_sandbox, "{\"id\":\"s\",\"publishedPorts\":{}}", "Sandbox.publishedPorts"},
        {&ocisbx_md_sandbox, "{\"id\":\"s\",\"publishedPorts\":[{\"port\":\"80\"}]}",
         "Sandbox.publishedPorts[0].port"},
        {&ocisbx_md_sandbox, "{\"id\":\"s\",\"publishedPorts\":[3]}", "Sandbox.publishedPorts[0]"},
        {&ocisbx_md_sandbox, "{\"displayName\":\"no id\"}", "Sandbox.id"},
        {&ocisbx_md_sandbox, "[]", "Sandbox"},
        {&ocisbx_md_sandbox_collection, "{\"items\":[{\"id\":\"a\"},{\"id\":5}]}", "SandboxCollection.items[1].id"},
        {&ocisbx_md_command, "{\"id\":\"c\",\"exitCode\":\"0\"}", "SandboxCommand.exitCode"},
        {&ocisbx_md_command, "{\"id\":\"c\",\"args\":[\"a\",1]}", "SandboxCommand.args[1]"},
        {&ocisbx_md_command, "{\"id\":\"c\",\"output\":5}", "SandboxCommand.output"},
        {&ocisbx_md_command, "{\"id\":\"c\",\"output\":{\"stdout\":5}}", "SandboxCommand.output.stdout"},
        {&ocisbx_md_command, "{\"id\":\"c\",\"environmentVariables\":[{\"name\":1}]}",
         "SandboxCommand.environmentVariables[0].name"},
        {&ocisbx_md_command, "{\"id\":\"c\",\"environmentVariables\":\"A=1\"}",
         "SandboxCommand.environmentVariables"},
        {&ocisbx_md_command_output, "{\"lastSeq\":\"9\"}", "SandboxCommandOutput.lastSeq"},
        {&ocisbx_md_command_output, "{\"stderr\":[]}", "SandboxCommandOutput.stderr"},
        {&ocisbx_md_command_event, "{\"seq\":1,\"event\":\"STDOUT\",\"data\":7}", "SandboxCommandEvent.data"},
        {&ocisbx_md_command_event, "{\"event\":\"STDOUT\"}", "SandboxCommandEvent.seq"},
        {&ocisbx_md_command_event, "{\"seq\":1e300,\"event\":\"STDOUT\"}", "SandboxCommandEvent.seq"},
        {&ocisbx_md_file, "{\"contentSha256\":false}", "SandboxFile.contentSha256"},
        {&ocisbx_md_snapshot, "{\"id\":\"x\",\"sizeBytes\":\"big\"}", "SandboxSnapshot.sizeBytes"},
        {&ocisbx_md_snapshot_collection, "{\"items\":\"none\"}", "SandboxSnapshotCollection.items"},
        {&ocisbx_md_create_sandbox_details, "{\"source\":{\"snapshotId\":3}}",
         "CreateSandboxDetails.source.snapshotId"},
        {&ocisbx_md_stop_details, "{\"isForce\":\"yes\"}", "StopSandboxDetails.isForce"},
        {&ocisbx_md_run_command_details, "{\"args\":[]}", "RunSandboxCommandDetails.command"},
        {&ocisbx_md_error, "{\"code\":404}", "ErrorResponse.code"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ocisbx_model *m = (ocisbx_model *)1;
        int rc = ocisbx_model_parse(cases[i].def, J(cases[i].json), &m);
        if (rc != OCISBX_EPARSE)
            fail_msg("case %zu (%s): rc %d", i, cases[i].json, rc);
        assert_null(m);
        assert_error_has(cases[i].field);
    }
}

static void test_malformed_json(void **state)
{
    (void)state;
    ocisbx_sandbox *s = NULL;
    assert_int_equal(ocisbx_sandbox_from_json(J("{\"id\":"), &s), OCISBX_EPARSE);
    assert_error_has("Sandbox: malformed JSON");
    assert_int_equal(ocisbx_sandbox_from_json(J(""), &s), OCISBX_EPARSE);
    assert_int_equal(ocisbx_sandbox_from_json(NULL, 0, &s), OCISBX_EINVAL);
    /* a length shorter than the text: only those bytes count */
    assert_int_equal(ocisbx_sandbox_from_json("{\"id\":\"a\"}garbage", 10, &s), 0);
    assert_string_equal(ocisbx_sandbox_id(s), "a");
    ocisbx_sandbox_free(s);
}

static void test_collection(void **state)
{
    (void)state;
    ocisbx_model *m = NULL;
    const char *t = "{\"items\":[{\"id\":\"a\",\"lifecycleState\":\"RUNNING\"},{\"id\":\"b\"}],\"x\":1}";
    assert_int_equal(ocisbx_model_parse(&ocisbx_md_sandbox_collection, J(t), &m), 0);
    assert_int_equal(ocisbx_model_set_meta(m, NULL, "rid", "page-2"), 0);
    const ocisbx_sandbox_collection *l = (const ocisbx_sandbox_collection *)(void *)m;
    assert_int_equal(ocisbx_sandbox_collection_count(l), 2);
    assert_string_equal(ocisbx_sandbox_id(ocisbx_sandbox_collection_item(l, 0)), "a");
    assert_string_equal(ocisbx_sandbox_lifecycle_state(ocisbx_sandbox_collection_item(l, 0)), "RUNNING");
    assert_string_equal(ocisbx_sandbox_id(ocisbx_sandbox_collection_item(l, 1)), "b");
    assert_null(ocisbx_sandbox_collection_item(l, 2));
    assert_string_equal(ocisbx_sandbox_collection_next_page(l), "page-2");
    char *json = NULL;
    assert_int_equal(ocisbx_sandbox_to_json(ocisbx_sandbox_collection_item(l, 1), &json), 0);
    assert_string_equal(json, "{\"id\":\"b\"}");
    ocisbx_free(json);
    ocisbx_model_free(m);

    assert_int_equal(ocisbx_model_parse(&ocisbx_md_snapshot_collection, J("{}"), &m), 0);
    assert_int_equal(ocisbx_snapshot_collection_count((const ocisbx_snapshot_collection *)(void *)m), 0);
    ocisbx_model_free(m);
    assert_int_equal(ocisbx_model_parse(&ocisbx_md_command_collection, J("{\"items\":[{\"id\":\"c1\"}]}"), &m), 0);
    const ocisbx_command_collection *cl = (const ocisbx_command_collection *)(void *)m;
    assert_string_equal(ocisbx_command_id(ocisbx_command_collection_item(cl, 0)), "c1");
    assert_null(ocisbx_command_collection_next_page(cl));
    ocisbx_model_free(m);
}

static void test_command(void **state)
{
    (void)state;
    ocisbx_command *c = NULL;
    const char *t = "{\"id\":\"cmd-1\",\"sandboxId\":\"sbx\",\"command\":\"echo\",\"args\":[\"a b\",\"c\"],"
                    "\"cwd\":\"/workspace\",\"environmentVariables\":[{\"name\":\"K\"}],"
                    "\"exitCode\":3,\"output\":{\"stdout\":\"out\",\"stderr\":\"err\",\"lastSeq\":4},"
                    "\"timeCreated\":\"2026-01-01T00:00:01Z\",\"timeStarted\":\"2026-01-01T00:00:02Z\","
                    "\"timeFinished\":\"2026-01-01T00:00:03.5+01:00\"}";
    assert_int_equal(ocisbx_command_from_json(J(t), &c), 0);
    assert_string_equal(ocisbx_command_id(c), "cmd-1");
    assert_string_equal(ocisbx_command_sandbox_id(c), "sbx");
    assert_string_equal(ocisbx_command_command(c), "echo");
    assert_string_equal(ocisbx_command_cwd(c), "/workspace");
    assert_int_equal(ocisbx_command_arg_count(c), 2);
    assert_string_equal(ocisbx_command_arg(c, 0), "a b");
    assert_null(ocisbx_command_arg(c, 2));
    assert_int_equal(ocisbx_command_state(c), OCISBX_COMMAND_FINISHED);
    assert_string_equal(ocisbx_command_lifecycle_state(c), "FINISHED");
    int code = -1;
    assert_int_equal(ocisbx_command_has_exit_code(c, &code), 1);
    assert_int_equal(code, 3);
    assert_string_equal(ocisbx_command_stdout(c), "out");
    assert_string_equal(ocisbx_command_stderr(c), "err");
    assert_string_equal(ocisbx_command_time_created(c), "2026-01-01T00:00:01Z");
    assert_string_equal(ocisbx_command_time_started(c), "2026-01-01T00:00:02Z");
    assert_string_equal(ocisbx_command_time_finished(c), "2026-01-01T00:00:03.5+01:00");
    ocisbx_command_free(c);

    /* output as a plain string, env as a map, no exit code (timed out) */
    t = "{\"id\":\"c2\",\"output\":\"text\",\"environmentVariables\":{\"A\":null},\"lifecycleState\":\"TIMED_OUT\"}";
    assert_int_equal(ocisbx_command_from_json(J(t), &c), 0);
    assert_string_equal(ocisbx_command_stdout(c), "text");
    assert_null(ocisbx_command_stderr(c));
    code = 77;
    assert_int_equal(ocisbx_command_has_exit_code(c, &code), 0);
    assert_int_equal(code, 77);
    ocisbx_command_free(c);
}

/* The derived command state (SandboxCommand has no lifecycleState). */
static void test_command_state(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        int want;
    } cases[] = {
        {"{\"id\":\"cmd-1\"}", OCISBX_COMMAND_NOT_STARTED}, /* SandboxCommandIdentifier */
        {"{\"id\":\"c\",\"timeCreated\":\"2026-01-01T00:00:01Z\"}", OCISBX_COMMAND_NOT_STARTED},
        {"{\"id\":\"c\",\"timeStarted\":\"2026-01-01T00:00:02Z\"}", OCISBX_COMMAND_RUNNING},
        {"{\"id\":\"c\",\"timeStarted\":\"2026-01-01T00:00:02Z\",\"timeFinished\":\"2026-01-01T00:00:03Z\","
         "\"exitCode\":0}",
         OCISBX_COMMAND_FINISHED},
        {"{\"id\":\"c\",\"timeStarted\":\"2026-01-01T00:00:02Z\",\"timeFinished\":\"2026-01-01T00:00:03Z\"}",
         OCISBX_COMMAND_FINISHED_NO_EXIT_CODE},                                  /* canceled or timed out */
        {"{\"id\":\"c\",\"output\":{\"exitCode\":2}}", OCISBX_COMMAND_FINISHED}, /* runAndWait's output */
        /* a lifecycleState the service does not send is not read */
        {"{\"id\":\"c\",\"lifecycleState\":\"SUCCEEDED\"}", OCISBX_COMMAND_NOT_STARTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ocisbx_command *c = NULL;
        assert_int_equal(ocisbx_command_from_json(J(cases[i].json), &c), 0);
        assert_int_equal(ocisbx_command_state(c), cases[i].want);
        assert_string_equal(ocisbx_command_lifecycle_state(c), ocisbx_command_state_name(cases[i].want));
        ocisbx_command_free(c);
    }
    assert_int_equal(ocisbx_command_state(NULL), OCISBX_COMMAND_NOT_STARTED);
    const char *names[] = {"NOT_STARTED", "RUNNING", "FINISHED", "FINISHED_NO_EXIT_CODE"};
    for (int i = 0; i < 4; i++) {
        int v = -1;
        assert_string_equal(ocisbx_command_state_name(i), names[i]);
        assert_int_equal(ocisbx_command_state_from_name(names[i], &v), 0);
        assert_int_equal(v, i);
    }
    assert_null(ocisbx_command_state_name(4));
    assert_null(ocisbx_command_state_name(-1));
    assert_int_equal(ocisbx_command_state_from_name("SUCCEEDED", NULL), OCISBX_EINVAL);
    assert_error_has("FINISHED_NO_EXIT_CODE");
}

static void test_output_event_file_snapshot(void **state)
{
    (void)state;
    ocisbx_command_output *o = NULL;
    assert_int_equal(ocisbx_command_output_from_json(
                         J("{\"commandId\":\"c\",\"exitCode\":0,\"stdout\":\"a\",\"stderr\":\"\",\"lastSeq\":12}"),
                         &o),
                     0);
    assert_string_equal(ocisbx_command_output_command_id(o), "c");
    assert_string_equal(ocisbx_command_output_stdout(o), "a");
    assert_string_equal(ocisbx_command_output_stderr(o), "");
    int code = -1;
    int64_t seq = 0;
    assert_int_equal(ocisbx_command_output_has_exit_code(o, &code), 1);
    assert_int_equal(code, 0);
    assert_int_equal(ocisbx_command_output_has_last_seq(o, &seq), 1);
    assert_int_equal(seq, 12);
    ocisbx_command_output_free(o);

    ocisbx_command_event *e = NULL;
    assert_int_equal(ocisbx_command_event_from_json(J("{\"commandId\":\"c\",\"seq\":9007199254740991,\"timestamp\":"
                                                      "\"2026-01-01T00:00:00Z\",\"event\":\"STDERR\","
                                                      "\"data\":\"x\\u00e9\\n\"}"),
                                                    &e),
                     0);
    assert_int_equal(ocisbx_command_event_seq(e), 9007199254740991LL);
    assert_int_equal(ocisbx_command_event_kind(e), OCISBX_EVENT_STDERR);
    assert_string_equal(ocisbx_command_event_type(e), "STDERR");
    assert_string_equal(ocisbx_command_event_timestamp(e), "2026-01-01T00:00:00Z");
    size_t len = 0;
    assert_string_equal(ocisbx_command_event_data(e, &len), "x\xc3\xa9\n");
    assert_int_equal(len, 4);
    assert_int_equal(ocisbx_command_event_has_exit_code(e, &code), 0);
    ocisbx_command_event_free(e);
    assert_int_equal(ocisbx_command_event_from_json(J("{\"seq\":5,\"event\":\"FINISHED\",\"exitCode\":2}"), &e), 0);
    assert_int_equal(ocisbx_command_event_kind(e), OCISBX_EVENT_FINISHED);
    assert_int_equal(ocisbx_command_event_has_exit_code(e, &code), 1);
    assert_int_equal(code, 2);
    assert_string_equal(ocisbx_command_event_data(e, NULL), "");
    ocisbx_command_event_free(e);
    assert_int_equal(ocisbx_command_event_from_json(J("{\"seq\":1,\"event\":\"NEWKIND\"}"), &e), 0);
    assert_int_equal(ocisbx_command_event_kind(e), OCISBX_EVENT_OTHER);
    ocisbx_command_event_free(e);

    ocisbx_sandbox_file *f = NULL;
    assert_int_equal(ocisbx_sandbox_file_from_json(
                         J("{\"sandboxId\":\"s\",\"filePath\":\"/workspace/a\",\"contentSha256\":\"abc=\"}"), &f),
                     0);
    assert_string_equal(ocisbx_sandbox_file_sandbox_id(f), "s");
    assert_string_equal(ocisbx_sandbox_file_path(f), "/workspace/a");
    assert_string_equal(ocisbx_sandbox_file_content_sha256(f), "abc=");
    ocisbx_sandbox_file_free(f);

    ocisbx_snapshot *s = NULL;
    assert_int_equal(ocisbx_snapshot_from_json(
                         J("{\"id\":\"snap\",\"sandboxId\":\"s\",\"displayName\":\"d\","
                           "\"sizeBytes\":1024,\"runtime\":\"r\",\"lifecycleState\":\"ACTIVE\","
                           "\"timeExpires\":\"2026-02-01T00:00:00Z\",\"timeCreated\":\"2026-01-01T00:00:00Z\","
                           "\"projectId\":\"p1\",\"expirationDuration\":\"P7D\","
                           "\"timeUpdated\":\"2026-01-02T00:00:00Z\"}"),
                         &s),
                     0);
    assert_string_equal(ocisbx_snapshot_project_id(s), "p1");
    assert_string_equal(ocisbx_snapshot_expiration_duration(s), "P7D");
    assert_string_equal(ocisbx_snapshot_time_updated(s), "2026-01-02T00:00:00Z");
    int64_t size = 0;
    assert_string_equal(ocisbx_snapshot_id(s), "snap");
    assert_string_equal(ocisbx_snapshot_sandbox_id(s), "s");
    assert_string_equal(ocisbx_snapshot_display_name(s), "d");
    assert_string_equal(ocisbx_snapshot_runtime(s), "r");
    assert_string_equal(ocisbx_snapshot_lifecycle_state(s), "ACTIVE");
    assert_string_equal(ocisbx_snapshot_time_expires(s), "2026-02-01T00:00:00Z");
    assert_string_equal(ocisbx_snapshot_time_created(s), "2026-01-01T00:00:00Z");
    assert_int_equal(ocisbx_snapshot_has_size_bytes(s, &size), 1);
    assert_int_equal(size, 1024);
    ocisbx_snapshot_free(s);
}

static void test_create_details(void **state)
{
    (void)state;
    ocisbx_create_sandbox_details *d = NULL;
    assert_int_equal(ocisbx_create_sandbox_details_new(&d), 0);
    assert_int_equal(ocisbx_create_sandbox_details_set_display_name(d, "n"), 0);
    assert_int_equal(ocisbx_create_sandbox_details_set_runtime(d, "python-3.11"), 0);
    assert_int_equal(ocisbx_create_sandbox_details_set_shape(d, "MEDIUM"), 0);
    assert_int_equal(ocisbx_create_sandbox_details_set_shape(d, "HUGE"), OCISBX_EINVAL);
    /* -1 disables expiry [public]: passed through; the range names both forms */
    assert_int_equal(ocisbx_create_sandbox_details_set_expires_in_minutes(d, -1), 0);
    char *j = NULL;
    assert_int_equal(ocisbx_create_sandbox_details_to_json(d, &j), 0);
    assert_non_null(strstr(j, "\"expiresInMinutes\":-1"));
    ocisbx_free(j);
    assert_int_equal(ocisbx_create_sandbox_details_set_expires_in_minutes(d, -2), OCISBX_EINVAL);
    assert_error_has("-1 (no expiry)");
    assert_int_equal(ocisbx_create_sandbox_details_set_expires_in_minutes(d, 2881), OCISBX_EINVAL);
    assert_error_has("1..2880");
    assert_int_equal(ocisbx_create_sandbox_details_set_expires_in_minutes(d, 0), OCISBX_EINVAL);
    assert_int_equal(ocisbx_create_sandbox_details_set_expires_in_minutes(d, 2880), 0);
    assert_int_equal(ocisbx_create_sandbox_details_add_env(d, "A", "1"), 0);
    assert_int_equal(ocisbx_create_sandbox_details_add_env(d, "B=C", "1"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_create_sandbox_details_set_warmpool_name(d, "wp"), 0);
    assert_int_equal(ocisbx_create_sandbox_details_add_publish_port(d, "8080"), 0);
    assert_int_equal(ocisbx_create_sandbox_details_set_published_port_auth_mode(d, "OCI_IAM"), 0);
    assert_int_equal(ocisbx_create_sandbox_details_set_credential_profile_label(d, "lbl"), 0);
    assert_int_equal(ocisbx_create_sandbox_details_set_source_snapshot(d, "snap-1"), 0);
    char *json = NULL;
    assert_int_equal(ocisbx_create_sandbox_details_to_json(d, &json), 0);
    assert_string_equal(json,
                        "{\"displayName\":\"n\",\"runtime\":\"python-3.11\",\"shape\":\"MEDIUM\","
                        "\"expiresInMinutes\":2880,\"environmentVariables\":[{\"name\":\"A\",\"value\":\"1\"}],"
                        "\"warmpoolName\":\"wp\",\"publishPorts\":[\"8080\"],\"publishedPortAuthMode\":\"OCI_IAM\","
                        "\"credentialProfileLabel\":\"lbl\",\"source\":{\"sourceType\":\"SNAPSHOT\","
                        "\"snapshotId\":\"snap-1\"}}");
    ocisbx_free(json);
    ocisbx_create_sandbox_details_free(d);

    /* from JSON: the deprecated duration becomes whole minutes, never sent */
    assert_int_equal(ocisbx_create_sandbox_details_from_json(J("{\"expirationDuration\":\"PT90M30S\"}"), &d), 0);
    assert_int_equal(ocisbx_create_sandbox_details_to_json(d, &json), 0);
    assert_string_equal(json, "{\"expiresInMinutes\":91}");
    ocisbx_free(json);
    ocisbx_create_sandbox_details_free(d);
    assert_int_equal(ocisbx_create_sandbox_details_from_json(J("{\"expiresInMinutes\":-1}"), &d), 0);
    ocisbx_create_sandbox_details_free(d);
    assert_int_equal(ocisbx_create_sandbox_details_from_json(J("{\"expiresInMinutes\":0}"), &d), OCISBX_EINVAL);
    assert_int_equal(ocisbx_create_sandbox_details_from_json(J("{\"expiresInMinutes\":2881}"), &d), OCISBX_EINVAL);
    assert_int_equal(ocisbx_create_sandbox_details_from_json(J("{\"expirationDuration\":\"P3D\"}"), &d),
                     OCISBX_EINVAL);
    assert_int_equal(ocisbx_create_sandbox_details_from_json(J("{\"expirationDuration\":\"soon\"}"), &d),
                     OCISBX_EPARSE);
    assert_error_has("expirationDuration");
    assert_int_equal(ocisbx_create_sandbox_details_from_json(J("{\"shape\":7}"), &d), OCISBX_EPARSE);
    assert_null(d);
}

static void test_run_details(void **state)
{
    (void)state;
    ocisbx_run_command_details *d = NULL;
    assert_int_equal(ocisbx_run_command_details_new("", &d), OCISBX_EINVAL);
    assert_int_equal(ocisbx_run_command_details_new("ls -l \"$X\"", &d), 0);
    assert_int_equal(ocisbx_run_command_details_add_arg(d, "a"), 0);
    assert_int_equal(ocisbx_run_command_details_set_cwd(d, "rel"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_run_command_details_set_cwd(d, "/workspace"), 0);
    assert_int_equal(ocisbx_run_command_details_add_env(d, "X", "y z"), 0);
    assert_int_equal(ocisbx_run_command_details_set_timeout(d, "2 minutes"), OCISBX_EPARSE);
    assert_int_equal(ocisbx_run_command_details_set_timeout(d, "PT2M"), 0);
    char *json = NULL;
    assert_int_equal(ocisbx_run_command_details_to_json(d, &json), 0);
    assert_string_equal(json, "{\"command\":\"ls -l \\\"$X\\\"\",\"args\":[\"a\"],\"cwd\":\"/workspace\","
                              "\"environmentVariables\":[{\"name\":\"X\",\"value\":\"y z\"}],\"timeout\":\"PT2M\"}");
    ocisbx_free(json);
    ocisbx_run_command_details_free(d);
    assert_int_equal(ocisbx_run_command_details_from_json(J("{\"command\":\"x\",\"timeout\":\"forever\"}"), &d),
                     OCISBX_EPARSE);
    assert_int_equal(ocisbx_run_command_details_from_json(J("{\"command\":\"x\",\"cwd\":\"tmp\"}"), &d),
                     OCISBX_EINVAL);
    assert_int_equal(ocisbx_run_command_details_from_json(J("{\"command\":\"x\",\"extra\":1}"), &d), 0);
    ocisbx_run_command_details_free(d);
}

static void test_every_def_accepts_empty_and_unknown(void **state)
{
    (void)state;
    for (size_t i = 0; i < ocisbx_model_defs_count; i++) {
        const ocisbx_model_def *def = ocisbx_model_defs[i];
        assert_ptr_equal(ocisbx_model_def_find(def->name), def);
        bool required = false;
        for (size_t f = 0; f < def->nfields; f++)
            required |= def->fields[f].required;
        ocisbx_model *m = NULL;
        int rc = ocisbx_model_parse(def, J("{\"someNewField\":[null,{}]}"), &m);
        assert_int_equal(rc, required ? OCISBX_EPARSE : 0);
        ocisbx_model_free(m);
    }
}

/* NUL bytes sent as \u0000 survive: event data, output stdout/stderr, a
 * command's output, collections, and JSON out; escaped backslashes and a
 * sentinel already in the text are handled. */
static void test_nul_bytes(void **state)
{
    (void)state;
    { /* time fields are RFC 3339 or a parse error naming the field */
        ocisbx_command_event *bad = NULL;
        assert_int_equal(ocisbx_command_event_from_json(J("{\"seq\":1,\"timestamp\":\"monday\"}"), &bad),
                         OCISBX_EPARSE);
        assert_error_has("SandboxCommandEvent.timestamp");
        assert_int_equal(ocisbx_command_event_from_json(J("{\"seq\":1,\"timestamp\":5}"), &bad), OCISBX_EPARSE);
        assert_error_has("SandboxCommandEvent.timestamp");
    }
    ocisbx_command_event *ev = NULL;
    assert_int_equal(
        ocisbx_command_event_from_json(J("{\"event\":\"STDOUT\",\"seq\":2,\"data\":\"a\\u0000b\\n\"}"), &ev), 0);
    size_t len = 0;
    const char *d = ocisbx_command_event_data(ev, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(d, "a\0b\n", 4);
    char *json = NULL;
    assert_int_equal(ocisbx_command_event_to_json(ev, &json), 0);
    assert_non_null(strstr(json, "\"a\\u0000b\\n\""));
    ocisbx_free(json);
    ocisbx_command_event_free(ev);

    /* "\\u0000" is a backslash and the text u0000, not a NUL; a raw U+FDD0
     * and its escape in the text push the sentinel to another code point */
    assert_int_equal(ocisbx_command_event_from_json(
                         J("{\"event\":\"STDOUT\",\"seq\":1,\"data\":\"\\\\u0000|\xEF\xB7\x90|\\uFDD1|\\u0000\","
                           "\"x\\u0000\":1}"),
                         &ev),
                     0);
    d = ocisbx_command_event_data(ev, &len);
    assert_int_equal(len, 6 + 1 + 3 + 1 + 3 + 1 + 1);
    assert_memory_equal(d, "\\u0000|\xEF\xB7\x90|\xEF\xB7\x91|\0", len);
    ocisbx_command_event_free(ev);

    ocisbx_command_output *o = NULL;
    assert_int_equal(ocisbx_command_output_from_json(
                         J("{\"commandId\":\"c\",\"stdout\":\"\\u0000\\u0000x\",\"stderr\":\"e\\u0000\"}"), &o),
                     0);
    assert_int_equal(ocisbx_command_output_stdout_len(o), 3);
    assert_memory_equal(ocisbx_command_output_stdout(o), "\0\0x", 3);
    assert_int_equal(ocisbx_command_output_stderr_len(o), 2);
    assert_memory_equal(ocisbx_command_output_stderr(o), "e\0", 2);
    ocisbx_command_output_free(o);

    ocisbx_command *c = NULL;
    assert_int_equal(ocisbx_command_from_json(J("{\"id\":\"c\",\"output\":{\"stdout\":\"1\\u00002\"}}"), &c), 0);
    assert_int_equal(ocisbx_command_stdout_len(c), 3);
    assert_memory_equal(ocisbx_command_stdout(c), "1\0002", 3);
    assert_int_equal(ocisbx_command_stderr_len(c), 0);
    ocisbx_command_free(c);
    assert_int_equal(ocisbx_command_from_json(J("{\"id\":\"c\",\"output\":\"z\\u0000\"}"), &c), 0);
    assert_int_equal(ocisbx_command_stdout_len(c), 2);
    ocisbx_command_free(c);

    ocisbx_command_collection *l = NULL;
    ocisbx_model *m = NULL;
    assert_int_equal(ocisbx_model_parse(&ocisbx_md_command_collection,
                                        J("{\"items\":[{\"id\":\"c\",\"output\":{\"stdout\":\"q\\u0000\"}}]}"), &m),
                     0);
    l = (ocisbx_command_collection *)(void *)m;
    assert_int_equal(ocisbx_command_stdout_len(ocisbx_command_collection_item(l, 0)), 2);
    assert_int_equal(ocisbx_command_to_json(ocisbx_command_collection_item(l, 0), &json), 0);
    assert_non_null(strstr(json, "q\\u0000"));
    ocisbx_free(json);
    ocisbx_command_collection_free(l);
}

/* "sbx-\u0000evil" was silently read as "sbx-": a NUL outside command
 * output is refused, naming the field. */
static void test_nul_outside_output_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"id\":\"sbx-\\u0000evil\",\"lifecycleState\":\"RUNNING\"}",
        "{\"id\":\"sbx-a\",\"displayName\":\"x\\u0000y\"}",
    };
    for (size_t i = 0; i < 2; i++) {
        ocisbx_sandbox *sb = NULL;
        assert_int_equal(ocisbx_sandbox_from_json(bad[i], strlen(bad[i]), &sb), OCISBX_EPARSE);
        assert_null(sb);
        const char *m = ocisbx_error_message(ocisbx_error_last());
        assert_non_null(strstr(m, i == 0 ? "\"id\"" : "\"displayName\""));
        assert_non_null(strstr(m, "NUL"));
    }
    const char *args = "{\"id\":\"c1\",\"args\":[\"a\\u0000b\"]}";
    ocisbx_command *cm = NULL;
    assert_int_equal(ocisbx_command_from_json(args, strlen(args), &cm), OCISBX_EPARSE);
    /* command output keeps its NUL bytes */
    const char *ok = "{\"id\":\"c1\",\"output\":{\"stdout\":\"a\\u0000b\"}}";
    assert_int_equal(ocisbx_command_from_json(ok, strlen(ok), &cm), 0);
    assert_int_equal(ocisbx_command_stdout_len(cm), 3);
    ocisbx_command_free(cm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sandbox),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_malformed_json),
        cmocka_unit_test(test_collection),
        cmocka_unit_test(test_command),
        cmocka_unit_test(test_command_state),
        cmocka_unit_test(test_output_event_file_snapshot),
        cmocka_unit_test(test_create_details),
        cmocka_unit_test(test_run_details),
        cmocka_unit_test(test_every_def_accepts_empty_and_unknown),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_nul_outside_output_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
