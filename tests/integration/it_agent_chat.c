/* examples/agent_chat against a fake model server (tests/support's scripted
 * HTTP server on 127.0.0.1): in each of the three wire shapes the model
 * writes a file, reads a missing one (two calls in one answer), runs a
 * command (held, approved), then answers. Checked: what agent_chat sends
 * (the endpoint, the headers with the key, the tools offered, the prompt,
 * the task) and what comes back to the model (each result under its call's
 * id), the final text on stdout, the file in the workspace, the evidence
 * (verified with `ocisbx evidence verify`), and that the key appears in no
 * output and no record. Then the gate at a terminal and without one, the
 * model's API failing, the budgets, and bad command lines. No network. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "cli_run.h"
#include "ocisbx/ocisbx.h"
#include "test_http_server.h"
#include "par_run.h"

#define AGENT OCISBX_BINARY_DIR "/examples/agent_chat"
#define KEY "sk-test-SECRET-0123456789abcdef"
#define PROJECT "ocid1.generativeaiproject.oc1.test.aaaa"
#define TASK "Write hello.txt and show it"

typedef struct world {
    ths *srv;
    char dir[64], ev[96];
    char *base;
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    snprintf(w->dir, sizeof w->dir, "/tmp/it_agent_chat_XXXXXX");
    if (!w || !mkdtemp(w->dir) || (geteuid() == 0 && chown(w->dir, 65534, 65534) != 0))
        return -1;
    snprintf(w->ev, sizeof w->ev, "/tmp/it_agent_chat_ev_%d.jsonl", (int)getpid());
    unlink(w->ev);
    if (ths_start(&w->srv))
        return -1;
    w->base = ths_url(w->srv, "/v1");
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
    if (system(cmd) != 0)
        return -1;
    unlink(w->ev);
    ths_stop(w->srv);
    free(w->base);
    free(w);
    return 0;
}

/* Runs agent_chat with KEY in OCI_TEST_KEY; extra arguments before TASK. */
static void run_agent(world *w, const char *api, const char *const *extra, cli_run_options *o, cli_result *r)
{
    const char *args[32] = {"--api", api, "--base-url", w->base, "--model", "m-test", "--api-key-env", "OCI_TEST_KEY",
                            "--local-dir", w->dir, "--evidence", w->ev};
    size_t n = 12;
    for (size_t i = 0; extra && extra[i]; i++)
        args[n++] = extra[i];
    args[n++] = TASK;
    args[n] = NULL;
    static const char *const env[] = {"OCI_TEST_KEY=" KEY, NULL};
    cli_run_options none = {0};
    if (!o)
        o = &none;
    o->program = AGENT;
    o->env = env;
    if (o->tty == CLI_TTY_INHERIT)
        o->tty = CLI_TTY_NONE; /* no test asks the terminal it happens to run on */
    assert_int_equal(cli_run_ex(args, o, r), 0);
}

static cJSON *body_of(world *w, size_t i)
{
    const ths_request *q = ths_get(w->srv, i);
    assert_non_null(q);
    assert_string_equal(q->method, "POST");
    cJSON *j = cJSON_Parse(q->body);
    if (!j)
        fail_msg("request %zu is not JSON: %s", i, q->body);
    return j;
}

static const char *str(const cJSON *o, const char *name)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(o, name));
}

/* The item of arr whose field is value. */
static const cJSON *find(const cJSON *arr, const char *field, const char *value)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) if (str(e, field) && !strcmp(str(e, field), value)) return e;
    fail_msg("no item with %s \"%s\"", field, value);
    return NULL;
}

/* The tools offered: one per harness tool, each with its schema where the API wants it. */
static void check_tools(const cJSON *tools, const char *name_path, const char *schema_key)
{
    char *ours = NULL;
    assert_int_equal(ocisbx_harness_tools_json(NULL, "ours", &ours), 0);
    cJSON *want = cJSON_Parse(ours);
    ocisbx_free(ours);
    assert_int_equal(cJSON_GetArraySize(tools), cJSON_GetArraySize(want));
    const cJSON *t;
    cJSON_ArrayForEach(t, want)
    {
        const cJSON *got = NULL, *e;
        cJSON_ArrayForEach(e, tools)
        {
            const cJSON *holder = name_path ? cJSON_GetObjectItem(e, name_path) : e;
            if (str(holder, "name") && !strcmp(str(holder, "name"), str(t, "name")))
                got = holder;
        }
        if (!got)
            fail_msg("tool %s not offered", str(t, "name"));
        const cJSON *schema = cJSON_GetObjectItem(got, schema_key);
        assert_true(cJSON_Compare(schema, cJSON_GetObjectItem(t, "parameters"), 1));
        assert_non_null(str(got, "description"));
    }
    cJSON_Delete(want);
}

/* A tool result as the model got it (a JSON text). */
static cJSON *result_json(const char *text)
{
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    if (!j)
        fail_msg("a result is not JSON: %s", text);
    return j;
}

/* The three results: write's, read's (not_found), exec's (ran, or denied;
 * its command also greps its environment for the key, which finds none). */
static void check_results(const char *write_r, const char *read_r, const char *exec_r, bool exec_ran)
{
    cJSON *a = result_json(write_r), *b = result_json(read_r), *c = result_json(exec_r);
    assert_non_null(str(a, "sha256"));
    assert_string_equal(str(cJSON_GetObjectItem(b, "error"), "code"), "not_found");
    if (exec_ran) {
        assert_int_equal(cJSON_GetObjectItem(c, "exit_code")->valueint, 0);
        assert_string_equal(str(c, "output"), "hello from the model\n");
    } else {
        assert_string_equal(str(cJSON_GetObjectItem(c, "error"), "code"), "denied");
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strdup(buf);
}

/* What every finished run shows: the answer, the file, the evidence, no key. */
static void check_run(world *w, const cli_result *r, int records)
{
    if (r->status != 0)
        fail_msg("agent_chat exited %d: %s", r->status, r->err);
    assert_string_equal(r->out, "All done: hello.txt holds the greeting.\n");
    assert_null(strstr(r->out, KEY));
    assert_null(strstr(r->err, KEY));
    char path[128];
    snprintf(path, sizeof path, "%s/hello.txt", w->dir);
    char *file = slurp(path), *ev = slurp(w->ev);
    assert_string_equal(file, "hello from the model\n");
    assert_non_null(ev);
    assert_null(strstr(ev, KEY));
    free(file);
    free(ev);
    cli_result v;
    const char *const args[] = {"evidence", "verify", w->ev, NULL};
    assert_int_equal(cli_run(args, NULL, NULL, &v), 0);
    char want[64];
    snprintf(want, sizeof want, ": %d records, chain intact", records);
    if (v.status != 0 || !strstr(v.out, want))
        fail_msg("evidence verify: %d %s %s", v.status, v.out, v.err);
    cli_result_free(&v);
}

/* ---- the three shapes -------------------------------------------------------------- */
#define WRITE_ARGS "{\\\"path\\\":\\\"hello.txt\\\",\\\"content\\\":\\\"hello from the model\\\\n\\\"}"
#define READ_ARGS "{\\\"path\\\":\\\"missing.txt\\\"}"
#define EXEC_ARGS "{\\\"command\\\":\\\"cat hello.txt; env | grep sk-test; true\\\"}"
#define FINAL "All done: hello.txt holds the greeting."

static void push_responses(ths *s)
{
    ths_push(s, 200, "Content-Type: application/json\n",
             "{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"output\":["
             "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[]},"
             "{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_w1\",\"name\":\"write\",\"arguments\":\"" WRITE_ARGS
             "\"},{\"type\":\"function_call\",\"id\":\"fc_2\",\"call_id\":\"call_r2\",\"name\":\"read\",\"arguments\":\"" READ_ARGS
             "\"}],\"usage\":{\"input_tokens\":100,\"output_tokens\":20,\"total_tokens\":120}}");
    ths_push(s, 200, NULL,
             "{\"status\":\"completed\",\"output\":[{\"type\":\"function_call\",\"id\":\"fc_3\",\"call_id\":\"call_x3\","
             "\"name\":\"exec\",\"arguments\":\"" EXEC_ARGS "\"}],\"usage\":{\"total_tokens\":150}}");
    ths_push(s, 200, NULL,
             "{\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":"
             "\"output_text\",\"text\":\"" FINAL "\"}]}],\"usage\":{\"total_tokens\":170}}");
}

static const char *output_of(const cJSON *input, const char *call_id)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, input)
    {
        if (str(e, "type") && !strcmp(str(e, "type"), "function_call_output") && !strcmp(str(e, "call_id"), call_id))
            return str(e, "output");
    }
    fail_msg("no function_call_output for %s", call_id);
    return NULL;
}

static void check_responses(world *w, bool exec_ran)
{
    assert_int_equal(ths_count(w->srv), 3);
    for (size_t i = 0; i < 3; i++) {
        const ths_request *q = ths_get(w->srv, i);
        assert_string_equal(q->target, "/v1/responses");
        assert_string_equal(ths_header(q, "Authorization"), "Bearer " KEY);
        assert_string_equal(ths_header(q, "OpenAI-Project"), PROJECT);
        assert_null(ths_header(q, "x-api-key"));
    }
    cJSON *r1 = body_of(w, 0), *r2 = body_of(w, 1), *r3 = body_of(w, 2);
    assert_string_equal(str(r1, "model"), "m-test");
    assert_non_null(strstr(str(r1, "instructions"), "/workspace"));
    const cJSON *in1 = cJSON_GetObjectItem(r1, "input");
    assert_int_equal(cJSON_GetArraySize(in1), 1);
    assert_string_equal(str(cJSON_GetArrayItem(in1, 0), "role"), "user");
    assert_string_equal(str(cJSON_GetArrayItem(in1, 0), "content"), TASK);
    const cJSON *tools = cJSON_GetObjectItem(r1, "tools"), *t;
    cJSON_ArrayForEach(t, tools) assert_string_equal(str(t, "type"), "function");
    check_tools(tools, NULL, "parameters");
    /* the model's items go back as they came, each call answered by its call_id */
    const cJSON *in2 = cJSON_GetObjectItem(r2, "input");
    assert_non_null(find(in2, "id", "rs_1"));
    assert_string_equal(str(find(in2, "id", "fc_1"), "call_id"), "call_w1");
    const char *w1 = output_of(in2, "call_w1"), *r2o = output_of(in2, "call_r2");
    const cJSON *in3 = cJSON_GetObjectItem(r3, "input");
    assert_int_equal(cJSON_GetArraySize(in3), cJSON_GetArraySize(in2) + 2);
    check_results(w1, r2o, output_of(in3, "call_x3"), exec_ran);
    cJSON_Delete(r1);
    cJSON_Delete(r2);
    cJSON_Delete(r3);
}

static void responses_shape(void **state)
{
    world *w = *state;
    push_responses(w->srv);
    const char *const extra[] = {"--project", PROJECT, "--approve-all", NULL};
    cli_result r;
    run_agent(w, "responses", extra, NULL, &r);
    check_run(w, &r, 3);
    assert_non_null(strstr(r.err, "approved by --approve-all"));
    assert_non_null(strstr(r.err, "440 tokens"));
    check_responses(w, true);
    cli_result_free(&r);
}

static void push_chat(ths *s)
{
    ths_push(s, 200, NULL,
             "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
             "\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_w1\",\"type\":\"function\",\"function\":{"
             "\"name\":\"write\",\"arguments\":\"" WRITE_ARGS "\"}},{\"id\":\"call_r2\",\"type\":\"function\",\"function\":{"
             "\"name\":\"read\",\"arguments\":\"" READ_ARGS "\"}}]},\"finish_reason\":\"tool_calls\"}],"
             "\"usage\":{\"prompt_tokens\":90,\"completion_tokens\":10,\"total_tokens\":100}}");
    ths_push(s, 200, NULL,
             "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Now I look.\",\"tool_calls\":"
             "[{\"id\":\"call_x3\",\"type\":\"function\",\"function\":{\"name\":\"exec\",\"arguments\":\"" EXEC_ARGS
             "\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"total_tokens\":\"many\"}}");
    /* hostile counts (a string above, negative and absurd here) add nothing */
    ths_push(s, 200, NULL,
             "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" FINAL
             "\"},\"finish_reason\":\"stop\"}],\"usage\":{\"total_tokens\":-1e300}}");
}

static const char *tool_message(const cJSON *messages, const char *id)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, messages)
    {
        if (!strcmp(str(m, "role"), "tool") && !strcmp(str(m, "tool_call_id"), id))
            return str(m, "content");
    }
    fail_msg("no tool message for %s", id);
    return NULL;
}

static void chat_shape(void **state)
{
    world *w = *state;
    push_chat(w->srv);
    const char *const extra[] = {"--approve-all", NULL};
    cli_result r;
    run_agent(w, "chat", extra, NULL, &r);
    check_run(w, &r, 3);
    assert_non_null(strstr(r.err, "model:  Now I look."));
    assert_non_null(strstr(r.err, "100 tokens"));
    assert_int_equal(ths_count(w->srv), 3);
    const ths_request *q = ths_get(w->srv, 0);
    assert_string_equal(q->target, "/v1/chat/completions");
    assert_string_equal(ths_header(q, "Authorization"), "Bearer " KEY);
    assert_null(ths_header(q, "OpenAI-Project"));
    cJSON *r1 = body_of(w, 0), *r2 = body_of(w, 1), *r3 = body_of(w, 2);
    const cJSON *m1 = cJSON_GetObjectItem(r1, "messages");
    assert_string_equal(str(cJSON_GetArrayItem(m1, 0), "role"), "system");
    assert_non_null(strstr(str(cJSON_GetArrayItem(m1, 0), "content"), "/workspace"));
    assert_string_equal(str(cJSON_GetArrayItem(m1, 1), "content"), TASK);
    check_tools(cJSON_GetObjectItem(r1, "tools"), "function", "parameters");
    const cJSON *m2 = cJSON_GetObjectItem(r2, "messages");
    const cJSON *asst = cJSON_GetArrayItem(m2, 2);
    assert_string_equal(str(asst, "role"), "assistant");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(asst, "tool_calls")), 2);
    const cJSON *m3 = cJSON_GetObjectItem(r3, "messages");
    check_results(tool_message(m2, "call_w1"), tool_message(m2, "call_r2"), tool_message(m3, "call_x3"), true);
    cJSON_Delete(r1);
    cJSON_Delete(r2);
    cJSON_Delete(r3);
    cli_result_free(&r);
}

static void push_anthropic(ths *s)
{
    ths_push(s, 200, NULL,
             "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":"
             "\"I will write it.\"},{\"type\":\"tool_use\",\"id\":\"toolu_w1\",\"name\":\"write\",\"input\":{\"path\":"
             "\"hello.txt\",\"content\":\"hello from the model\\n\"}},{\"type\":\"tool_use\",\"id\":\"toolu_r2\",\"name\":"
             "\"read\",\"input\":{\"path\":\"missing.txt\"}}],\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":"
             "50,\"output_tokens\":5}}");
    ths_push(s, 200, NULL,
             "{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_x3\","
             "\"name\":\"exec\",\"input\":{\"command\":\"cat hello.txt; env | grep sk-test; true\"}}],\"stop_reason\":\"tool_use\"}");
    ths_push(s, 200, NULL,
             "{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"" FINAL
             "\"}],\"stop_reason\":\"end_turn\"}");
}

/* The tool_result block for id in a user message's content. */
static const cJSON *tool_result(const cJSON *msg, const char *id)
{
    assert_string_equal(str(msg, "role"), "user");
    return find(cJSON_GetObjectItem(msg, "content"), "tool_use_id", id);
}

static void anthropic_shape(void **state)
{
    world *w = *state;
    push_anthropic(w->srv);
    const char *const extra[] = {"--approve-all", NULL};
    cli_result r;
    /* the key's default variable for anthropic is ANTHROPIC_API_KEY; given here */
    run_agent(w, "anthropic", extra, NULL, &r);
    check_run(w, &r, 3);
    assert_int_equal(ths_count(w->srv), 3);
    const ths_request *q = ths_get(w->srv, 0);
    assert_string_equal(q->target, "/v1/messages");
    assert_string_equal(ths_header(q, "x-api-key"), KEY);
    assert_string_equal(ths_header(q, "anthropic-version"), "2023-06-01");
    assert_null(ths_header(q, "Authorization"));
    cJSON *r1 = body_of(w, 0), *r2 = body_of(w, 1), *r3 = body_of(w, 2);
    assert_non_null(strstr(str(r1, "system"), "/workspace"));
    assert_true(cJSON_GetObjectItem(r1, "max_tokens")->valueint > 0);
    check_tools(cJSON_GetObjectItem(r1, "tools"), NULL, "input_schema");
    const cJSON *m2 = cJSON_GetObjectItem(r2, "messages");
    assert_int_equal(cJSON_GetArraySize(m2), 3);
    const cJSON *asst = cJSON_GetArrayItem(m2, 1);
    assert_string_equal(str(asst, "role"), "assistant");
    assert_string_equal(str(find(cJSON_GetObjectItem(asst, "content"), "id", "toolu_w1"), "type"), "tool_use");
    const cJSON *res = cJSON_GetArrayItem(m2, 2); /* both results in one user message */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(res, "content")), 2);
    const cJSON *w1 = tool_result(res, "toolu_w1"), *r2b = tool_result(res, "toolu_r2");
    assert_string_equal(str(w1, "type"), "tool_result");
    assert_null(cJSON_GetObjectItem(w1, "is_error"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r2b, "is_error")));
    const cJSON *m3 = cJSON_GetObjectItem(r3, "messages");
    check_results(str(w1, "content"), str(r2b, "content"),
                  str(tool_result(cJSON_GetArrayItem(m3, 4), "toolu_x3"), "content"), true);
    cJSON_Delete(r1);
    cJSON_Delete(r2);
    cJSON_Delete(r3);
    cli_result_free(&r);
}

/* ---- the gate's person ------------------------------------------------------------ */
static void held_call_without_terminal_is_refused(void **state)
{
    world *w = *state;
    push_responses(w->srv);
    const char *const extra[] = {"--project", PROJECT, NULL};
    cli_result r;
    run_agent(w, "responses", extra, NULL, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "no terminal to ask a person"));
    check_responses(w, false); /* the model was told: denied */
    cli_result_free(&r);
}

static void held_call_approved_at_the_terminal(void **state)
{
    world *w = *state;
    push_responses(w->srv);
    const char *const extra[] = {"--project", PROJECT, NULL};
    cli_run_options o = {0};
    o.tty = CLI_TTY_PTY;
    o.tty_prompt = "Approve? [y/N] ";
    o.tty_answer = "y\n";
    cli_result r;
    run_agent(w, "responses", extra, &o, &r);
    check_run(w, &r, 3);
    assert_non_null(strstr(o.tty_out, "The model wants to run exec {\"command\":\"cat hello.txt; env"));
    assert_null(strstr(o.tty_out, KEY));
    assert_non_null(strstr(r.err, "approved at the terminal"));
    check_responses(w, true);
    free(o.tty_out);
    cli_result_free(&r);
}

/* ---- failures, budgets, the command line ------------------------------------------ */
static void api_errors_and_retries(void **state)
{
    world *w = *state;
    /* a 503 is tried again; a 401's message is shown, the key in it redacted */
    ths_push(w->srv, 503, NULL, "{\"error\":{\"message\":\"busy\"}}");
    ths_push(w->srv, 401, NULL, "{\"error\":{\"message\":\"Incorrect API key provided: " KEY "\"}}");
    cli_result r;
    run_agent(w, "chat", NULL, NULL, &r);
    assert_int_equal(r.status, 1);
    assert_int_equal(ths_count(w->srv), 2);
    assert_non_null(strstr(r.err, "HTTP 503; trying again"));
    assert_non_null(strstr(r.err, "HTTP 401: Incorrect API key provided: [REDACTED]"));
    assert_null(strstr(r.err, KEY));
    assert_string_equal(r.out, "");
    cli_result_free(&r);
    /* an answer that is not JSON */
    ths_clear(w->srv);
    ths_push(w->srv, 200, NULL, "<html>");
    run_agent(w, "anthropic", NULL, NULL, &r);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "the answer is not JSON"));
    cli_result_free(&r);
}

static void budgets_stop_the_loop(void **state)
{
    world *w = *state;
    /* a model that never stops calling tools */
    ths_set_default(w->srv, 200, NULL,
                    "{\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"ls\",\"input\":{\"path\":"
                    "\"/workspace\"}}],\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":400,\"output_tokens\":"
                    "100}}");
    const char *const turns[] = {"--max-turns", "2", NULL};
    cli_result r;
    run_agent(w, "anthropic", turns, NULL, &r);
    assert_int_equal(r.status, 3);
    assert_int_equal(ths_count(w->srv), 2);
    assert_non_null(strstr(r.err, "--max-turns"));
    cli_result_free(&r);
    ths_clear(w->srv);
    const char *const tokens[] = {"--max-tokens", "1200", NULL};
    run_agent(w, "anthropic", tokens, NULL, &r);
    assert_int_equal(r.status, 3);
    assert_int_equal(ths_count(w->srv), 3); /* 500, 1000, 1500 tokens */
    assert_non_null(strstr(r.err, "1500 tokens spent"));
    cli_result_free(&r);
}

static void bad_command_lines(void **state)
{
    world *w = *state;
    static const char *const cases[][12] = {
        {"--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--local-dir", "/tmp", "task", NULL},
        {"--api", "gemini", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--local-dir", "/tmp", "task", NULL},
        {"--api", "chat", "--model", "m", "--local-dir", "/tmp", "task", NULL},
        {"--api", "chat", "--base-url", "http://127.0.0.1:1/v1", "--local-dir", "/tmp", "task", NULL},
        {"--api", "chat", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "task", NULL},
        {"--api", "chat", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--local-dir", "/tmp", "--sandbox-id",
         "x", "task", NULL},
        {"--api", "chat", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--local-dir", "/tmp", NULL},
        {"--api", "chat", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--local-dir", "/tmp", "--max-turns",
         "0", "task", NULL},
        {"--api", "chat", "--base-url", "http://example.com/v1", "--model", "m", "--local-dir", "/tmp", "task", NULL},
        {"--api", "chat", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--local-dir", "/tmp", "--bogus", "task",
         NULL},
    };
    static const char *const env[] = {"OCI_TEST_KEY=" KEY, "OPENAI_API_KEY=" KEY, NULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_run_options o = {0};
        o.program = AGENT;
        o.env = env;
        o.tty = CLI_TTY_NONE;
        cli_result r;
        assert_int_equal(cli_run_ex(cases[i], &o, &r), 0);
        if (r.status != 2 || !strstr(r.err, "agent_chat: "))
            fail_msg("case %zu: exit %d: %s", i, r.status, r.err);
        assert_null(strstr(r.err, KEY));
        cli_result_free(&r);
    }
    /* the key's variable unset */
    cli_run_options o = {0};
    o.program = AGENT;
    o.tty = CLI_TTY_NONE;
    const char *const args[] = {"--api", "chat", "--base-url", w->base, "--model", "m", "--api-key-env", "NO_SUCH_KEY_VAR",
                                "--local-dir", w->dir, "task", NULL};
    cli_result r;
    assert_int_equal(cli_run_ex(args, &o, &r), 0);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "NO_SUCH_KEY_VAR"));
    assert_int_equal(ths_count(w->srv), 0);
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(responses_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(chat_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(anthropic_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(held_call_without_terminal_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(held_call_approved_at_the_terminal, setup, teardown),
        cmocka_unit_test_setup_teardown(api_errors_and_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(budgets_stop_the_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_command_lines, setup, teardown),
    };
    return par_run_group_tests_name("it_agent_chat", tests, NULL, NULL);
}
