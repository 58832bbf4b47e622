/* agent_chat: a model does a task in a workspace, each of its tool calls
 * through the gated harness.
 *
 *   agent_chat --api responses|chat|anthropic --base-url URL --model NAME
 *              [--api-key-env VAR] [--project OCID]
 *              (--local-dir DIR | --sandbox-id ID | --project-id P)
 *              [--max-turns N] [--max-tokens N] [--approve-all]
 *              [--evidence FILE] [--policy FILE] TASK
 *
 * The loop: the model gets the task, the harness's prompt and its tools;
 * each tool call it makes goes through ocisbx_harness_call_json (the schema
 * check, the gate, the workspace, an evidence record), and each result goes
 * back under the call's id; until the model answers without tool calls, or
 * --max-turns (default 30) requests or --max-tokens (default 1000000 tokens
 * in all, as the API counts them) are spent. The final text is printed on
 * stdout; the transcript (each call, each result, shortened) on stderr.
 *
 * The three wire shapes:
 *   responses  OpenAI's Responses API: POST <URL>/responses; function tools;
 *              function_call items answered by function_call_output items
 *              with the same call_id. The output items are sent back as
 *              input, so nothing depends on the server keeping state.
 *   chat       Chat Completions: POST <URL>/chat/completions; tool_calls
 *              answered by role "tool" messages with tool_call_id.
 *   anthropic  Anthropic Messages: POST <URL>/messages (x-api-key,
 *              anthropic-version 2023-06-01); tool_use blocks answered by
 *              tool_result blocks with tool_use_id, in one user message.
 * The key is read from the variable --api-key-env names (default
 * OPENAI_API_KEY, ANTHROPIC_API_KEY for anthropic), then removed from this
 * process's environment; it is sent as "Authorization: Bearer" (x-api-key
 * for anthropic) and appears in no output, error or evidence record (the
 * server's answers are printed with it redacted). --project sends
 * "OpenAI-Project: OCID". Plain http is allowed only to a loopback host.
 * OCI Generative AI's OpenAI-compatible endpoint works as it is:
 *   --base-url https://inference.generativeai.<region>.oci.oraclecloud.com/openai/v1
 *   with a Generative AI API key and --project <the project's OCID>.
 *
 * The workspace: --local-dir DIR (the local backend, isolated), an existing
 * sandbox (--sandbox-id), or a new one in project P (--project-id; deleted
 * at the end, also on failure); settings as in example_common.h.
 *
 * The gate: --policy FILE (docs/harness.md), else every workspace.exec call
 * is held. A held call is asked on the terminal (/dev/tty; y approves; no
 * terminal: refused); --approve-all approves every held call.
 *
 * Evidence: one chained JSON line per call, appended to FILE (default
 * ./agent_chat-evidence.jsonl); `ocisbx evidence verify FILE` checks it.
 *
 * Exit status: 0 when the model gave its final answer; 1 on a failure
 * (the model's API, the workspace); 2 for a bad command line; 3 when a
 * budget (--max-turns, --max-tokens) ran out first; 130 when interrupted. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "example_common.h"

#define PROG "agent_chat"
#define ANSWER_MAX (32 * 1024 * 1024) /* the largest answer read from the model's API */
#define ANTHROPIC_VERSION "2023-06-01"
#define ANTHROPIC_MAX_TOKENS 8192 /* per answer (the Messages API requires one) */
#define SHOWN_MAX 400             /* characters of a call or result in the transcript */

typedef enum api { API_RESPONSES, API_CHAT, API_ANTHROPIC } api;

typedef struct opts {
    api api;
    const char *base_url, *model, *key_env, *project, *local_dir, *sandbox_id, *project_id, *evidence, *policy;
    const char *task;
    long max_turns, max_tokens;
    bool approve_all;
} opts;

/* One tool call of an answer. */
typedef struct call {
    char *id, *name, *args;
} call;

typedef struct chat {
    const opts *o;
    char *key; /* wiped at the end */
    char *url;
    char *system;   /* the harness's prompt */
    cJSON *tools;   /* in the API's format */
    cJSON *history; /* Responses: input items; Chat, Anthropic: messages */
    cJSON *pending; /* this turn's results (Anthropic: tool_result blocks) */
    call *calls;
    size_t n_calls;
    char *text; /* the answer's text, if any */
    long tokens;
    int held, approved;
    ocisbx_harness *h;
} chat;

/* ---- printing, with the key redacted -------------------------------------------- */
static const char *g_key; /* redacted from everything printed */

static void put_redacted(FILE *f, const char *s, size_t max)
{
    size_t n = strlen(s), kl = g_key ? strlen(g_key) : 0, shown = 0;
    for (size_t i = 0; i < n && shown < max; shown++) {
        if (kl && !strncmp(s + i, g_key, kl)) {
            fputs("[REDACTED]", f);
            i += kl;
            continue;
        }
        fputc(s[i++], f);
    }
    if (shown >= max && strlen(s) > max)
        fputs("...", f);
}

static void note(const char *label, const char *text, size_t max)
{
    fprintf(stderr, "%s", label);
    put_redacted(stderr, text ? text : "", max);
    fputc('\n', stderr);
}

/* ---- the command line ------------------------------------------------------------- */
static void usage(FILE *f)
{
    fprintf(f, "usage: " PROG " --api responses|chat|anthropic --base-url URL --model NAME [--api-key-env VAR]\n"
               "                  [--project OCID] (--local-dir DIR | --sandbox-id ID | --project-id P)\n"
               "                  [--max-turns N] [--max-tokens N] [--approve-all] [--evidence FILE]\n"
               "                  [--policy FILE] TASK\n");
}

/* "PROG: what" after the usage; the exit status of a bad command line. */
static int bad(const char *what, const char *arg)
{
    usage(stderr);
    fprintf(stderr, PROG ": %s%s%s\n", what, arg ? " " : "", arg ? arg : "");
    return 2;
}

static bool parse_count(const char *s, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1)
        return false;
    *out = v;
    return true;
}

/* The option's value: the next argument. */
static const char *value(int argc, char **argv, int *i)
{
    return *i + 1 < argc ? argv[++*i] : NULL;
}

static int parse_option(int argc, char **argv, int *i, opts *o, const char **api_name)
{
    const char *a = argv[*i];
    static const char *const names[] = {"--api",        "--base-url",   "--model",      "--api-key-env",
                                        "--project",    "--local-dir",  "--sandbox-id", "--project-id",
                                        "--max-turns",  "--max-tokens", "--evidence",   "--policy"};
    const char **slots[] = {api_name,       &o->base_url,   &o->model,      &o->key_env,
                            &o->project,    &o->local_dir,  &o->sandbox_id, &o->project_id,
                            NULL,           NULL,           &o->evidence,   &o->policy};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (strcmp(a, names[k]))
            continue;
        const char *v = value(argc, argv, i);
        if (!v || !v[0])
            return bad("a value is needed after", a);
        if (slots[k])
            *slots[k] = v;
        else if (!parse_count(v, k == 8 ? &o->max_turns : &o->max_tokens))
            return bad("a positive whole number is needed after", a);
        return 0;
    }
    if (!strcmp(a, "--approve-all")) {
        o->approve_all = true;
        return 0;
    }
    return bad("unknown option", a);
}

static int parse_args(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_turns = 30;
    o->max_tokens = 1000000;
    o->evidence = PROG "-evidence.jsonl";
    const char *api_name = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            exit(0);
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            int rc = parse_option(argc, argv, &i, o, &api_name);
            if (rc)
                return rc;
        } else if (o->task) {
            return bad("one TASK only (quote it); unexpected:", argv[i]);
        } else {
            o->task = argv[i];
        }
    }
    if (!api_name)
        return bad("--api is required", NULL);
    if (!strcmp(api_name, "responses"))
        o->api = API_RESPONSES;
    else if (!strcmp(api_name, "chat"))
        o->api = API_CHAT;
    else if (!strcmp(api_name, "anthropic"))
        o->api = API_ANTHROPIC;
    else
        return bad("--api must be responses, chat or anthropic, not", api_name);
    if (!o->base_url || !o->model)
        return bad(!o->base_url ? "--base-url is required" : "--model is required", NULL);
    if (!!o->local_dir + !!o->sandbox_id + !!o->project_id != 1)
        return bad("give one workspace: --local-dir DIR, --sandbox-id ID or --project-id P", NULL);
    if (!o->task || !o->task[0])
        return bad("the TASK is missing", NULL);
    if (!o->key_env)
        o->key_env = o->api == API_ANTHROPIC ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
    return 0;
}

/* https anywhere; plain http only to this machine (the key would travel in clear). */
static bool url_allowed(const char *url)
{
    if (!strncmp(url, "https://", 8))
        return true;
    if (strncmp(url, "http://", 7))
        return false;
    const char *host = url + 7;
    size_t n = strcspn(host, ":/");
    if (host[0] == '[')
        return !strncmp(host, "[::1]", 5);
    return (n == 9 && !strncmp(host, "localhost", 9)) || (n >= 7 && !strncmp(host, "127.", 4));
}

/* ---- HTTP ---------------------------------------------------------------------------- */
typedef struct sink {
    char *data;
    size_t len;
    bool over;
} sink;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    sink *s = ud;
    size_t add = size * n;
    if (s->len + add > ANSWER_MAX) {
        s->over = true;
        return 0;
    }
    char *d = realloc(s->data, s->len + add + 1);
    if (!d)
        return 0;
    memcpy(d + s->len, p, add);
    s->len += add;
    d[s->len] = 0;
    s->data = d;
    return add;
}

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)ud, (void)a, (void)b, (void)c, (void)d;
    return example_interrupted != 0;
}

/* "Name: value" with the value given; the text is wiped by the caller. */
static struct curl_slist *header(struct curl_slist *l, char *buf, size_t cap, const char *name, const char *v)
{
    snprintf(buf, cap, "%s: %s", name, v);
    struct curl_slist *n = curl_slist_append(l, buf);
    memset(buf, 0, cap);
    if (!n)
        curl_slist_free_all(l);
    return n;
}

/* One POST of body; *status the HTTP status (0: no answer), *out the
 * answer. 0, or 1 with a message on stderr. */
static int post_once(const chat *c, const char *body, long *status, sink *out)
{
    size_t cap = strlen(c->key) + 64;
    char *buf = calloc(1, cap);
    struct curl_slist *hs = curl_slist_append(NULL, "Content-Type: application/json");
    if (hs && buf && c->o->api == API_ANTHROPIC) {
        hs = header(hs, buf, cap, "x-api-key", c->key);
        hs = hs ? header(hs, buf, cap, "anthropic-version", ANTHROPIC_VERSION) : NULL;
    } else if (hs && buf) {
        snprintf(buf, cap, "Bearer %s", c->key);
        char *v = strdup(buf);
        memset(buf, 0, cap);
        hs = v ? header(hs, buf, cap, "Authorization", v) : NULL;
        if (v)
            memset(v, 0, strlen(v));
        free(v);
    }
    if (hs && c->o->project)
        hs = header(hs, buf, cap, "OpenAI-Project", c->o->project);
    free(buf);
    CURL *cu = curl_easy_init();
    if (!hs || !cu) {
        curl_slist_free_all(hs);
        curl_easy_cleanup(cu);
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    char err[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(cu, CURLOPT_URL, c->url);
    curl_easy_setopt(cu, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(cu, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(cu, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(cu, CURLOPT_ERRORBUFFER, err);
    curl_easy_setopt(cu, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(cu, CURLOPT_TIMEOUT, 900L); /* a model may think for minutes */
    curl_easy_setopt(cu, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(cu, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(cu, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode cc = curl_easy_perform(cu);
    curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(cu);
    curl_slist_free_all(hs); /* the key's header text goes with it */
    if (cc == CURLE_OK)
        return 0;
    *status = 0;
    if (out->over)
        fprintf(stderr, PROG ": %s: the answer is larger than %d bytes\n", c->url, ANSWER_MAX);
    else if (!example_interrupted)
        note(PROG ": the model's API: ", err[0] ? err : curl_easy_strerror(cc), 500);
    return 1;
}

/* The error an API answered: its message (error.message in all three). */
static void api_error(const chat *c, long status, const char *text)
{
    cJSON *j = cJSON_Parse(text ? text : "");
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "message"));
    fprintf(stderr, PROG ": %s answered HTTP %ld: ", c->url, status);
    put_redacted(stderr, m ? m : (text && text[0] ? text : "(no message)"), 1000);
    fputc('\n', stderr);
    cJSON_Delete(j);
}

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (!example_interrupted && nanosleep(&t, &t) && errno == EINTR)
        ;
}

/* POSTs the request, again (1, 2, 4 s later) after a 429 or 5xx; *answer
 * the parsed answer of a 2xx. 0, or 1 with the message printed. */
static int post(const chat *c, const cJSON *req, cJSON **answer)
{
    *answer = NULL;
    char *body = cJSON_PrintUnformatted(req);
    if (!body)
        return 1;
    int rc = 1;
    for (int attempt = 0; attempt < 4 && !example_interrupted; attempt++) {
        sink s = {0};
        long status = 0;
        if (post_once(c, body, &status, &s)) {
            free(s.data);
            break;
        }
        bool retry = status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
        if (status >= 200 && status < 300) {
            *answer = cJSON_Parse(s.data ? s.data : "");
            if (!*answer)
                fprintf(stderr, PROG ": %s: the answer is not JSON\n", c->url);
            rc = *answer ? 0 : 1;
        } else if (!retry || attempt == 3) {
            api_error(c, status, s.data);
        } else {
            fprintf(stderr, PROG ": %s answered HTTP %ld; trying again\n", c->url, status);
            pause_ms(1000L << attempt);
        }
        free(s.data);
        if (!retry || rc == 0)
            break;
    }
    cJSON_free(body);
    return rc;
}

/* ---- the three wire shapes ----------------------------------------------------------- */
static int add_call(chat *c, const char *id, const char *name, const char *args)
{
    call *v = realloc(c->calls, (c->n_calls + 1) * sizeof *v);
    if (!v)
        return 1;
    c->calls = v;
    v[c->n_calls].id = strdup(id ? id : "");
    v[c->n_calls].name = strdup(name ? name : "");
    v[c->n_calls].args = strdup(args && args[0] ? args : "{}");
    c->n_calls++;
    return 0;
}

static void add_text(chat *c, const char *t)
{
    if (!t || !t[0])
        return;
    size_t old = c->text ? strlen(c->text) : 0;
    char *n = realloc(c->text, old + strlen(t) + 2);
    if (!n)
        return;
    if (old)
        n[old++] = '\n';
    strcpy(n + old, t);
    c->text = n;
}

static cJSON *message(const char *role, const char *content)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", role);
    cJSON_AddStringToObject(m, "content", content);
    return m;
}

/* The request body of this turn. */
static cJSON *request(chat *c)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "model", c->o->model);
    if (c->o->api == API_RESPONSES)
        cJSON_AddStringToObject(r, "instructions", c->system);
    if (c->o->api == API_ANTHROPIC) {
        cJSON_AddNumberToObject(r, "max_tokens", ANTHROPIC_MAX_TOKENS);
        cJSON_AddStringToObject(r, "system", c->system);
    }
    cJSON_AddItemReferenceToObject(r, c->o->api == API_RESPONSES ? "input" : "messages", c->history);
    cJSON_AddItemReferenceToObject(r, "tools", c->tools);
    return r;
}

/* A token count from the answer's usage object: 0 when it is absent, not a
 * number or not positive; at most TOKEN_COUNT_MAX, so that adding counts
 * never overflows. */
#define TOKEN_COUNT_MAX 1000000000000L
static long usage_count(const cJSON *usage, const char *name)
{
    const cJSON *n = cJSON_GetObjectItem(usage, name);
    if (!cJSON_IsNumber(n) || !(n->valuedouble > 0))
        return 0;
    return n->valuedouble >= (double)TOKEN_COUNT_MAX ? TOKEN_COUNT_MAX : (long)n->valuedouble;
}

/* Adds a count to the total, saturating at TOKEN_COUNT_MAX. */
static void add_tokens(chat *c, long n)
{
    c->tokens = c->tokens > TOKEN_COUNT_MAX - n ? TOKEN_COUNT_MAX : c->tokens + n;
}

/* Responses: output items (all sent back as input next turn). */
static int reply_responses(chat *c, cJSON *a)
{
    const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(a, "status"));
    if (status && !strcmp(status, "failed")) {
        cJSON *wrap = cJSON_CreateObject();
        cJSON_AddItemReferenceToObject(wrap, "error", cJSON_GetObjectItem(a, "error"));
        char *text = cJSON_PrintUnformatted(wrap);
        api_error(c, 200, text);
        cJSON_free(text);
        cJSON_Delete(wrap);
        return 1;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItem(a, "output"))
    {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(item, "type"));
        if (type && !strcmp(type, "function_call") &&
            add_call(c, cJSON_GetStringValue(cJSON_GetObjectItem(item, "call_id")),
                     cJSON_GetStringValue(cJSON_GetObjectItem(item, "name")),
                     cJSON_GetStringValue(cJSON_GetObjectItem(item, "arguments"))))
            return 1;
        const cJSON *part;
        if (type && !strcmp(type, "message"))
            cJSON_ArrayForEach(part, cJSON_GetObjectItem(item, "content"))
                add_text(c, cJSON_GetStringValue(cJSON_GetObjectItem(part, "text")));
        cJSON_AddItemToArray(c->history, cJSON_Duplicate(item, 1));
    }
    add_tokens(c, usage_count(cJSON_GetObjectItem(a, "usage"), "total_tokens"));
    return 0;
}

/* Chat Completions: the first choice's message (sent back as it is). */
static int reply_chat(chat *c, cJSON *a)
{
    cJSON *msg = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "choices"), 0), "message");
    if (!cJSON_IsObject(msg)) {
        fprintf(stderr, PROG ": %s: the answer has no choices[0].message\n", c->url);
        return 1;
    }
    add_text(c, cJSON_GetStringValue(cJSON_GetObjectItem(msg, "content")));
    const cJSON *tc;
    cJSON_ArrayForEach(tc, cJSON_GetObjectItem(msg, "tool_calls"))
    {
        const cJSON *fn = cJSON_GetObjectItem(tc, "function");
        if (add_call(c, cJSON_GetStringValue(cJSON_GetObjectItem(tc, "id")),
                     cJSON_GetStringValue(cJSON_GetObjectItem(fn, "name")),
                     cJSON_GetStringValue(cJSON_GetObjectItem(fn, "arguments"))))
            return 1;
    }
    cJSON_AddItemToArray(c->history, cJSON_Duplicate(msg, 1));
    add_tokens(c, usage_count(cJSON_GetObjectItem(a, "usage"), "total_tokens"));
    return 0;
}

/* Anthropic Messages: the content blocks (sent back as the assistant's turn). */
static int reply_anthropic(chat *c, cJSON *a)
{
    cJSON *content = cJSON_GetObjectItem(a, "content");
    if (!cJSON_IsArray(content)) {
        fprintf(stderr, PROG ": %s: the answer has no content\n", c->url);
        return 1;
    }
    const cJSON *b;
    cJSON_ArrayForEach(b, content)
    {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(b, "type"));
        if (type && !strcmp(type, "text"))
            add_text(c, cJSON_GetStringValue(cJSON_GetObjectItem(b, "text")));
        if (type && !strcmp(type, "tool_use")) {
            char *input = cJSON_PrintUnformatted(cJSON_GetObjectItem(b, "input"));
            int rc = add_call(c, cJSON_GetStringValue(cJSON_GetObjectItem(b, "id")),
                              cJSON_GetStringValue(cJSON_GetObjectItem(b, "name")), input);
            cJSON_free(input);
            if (rc)
                return 1;
        }
    }
    cJSON *turn = cJSON_CreateObject();
    cJSON_AddStringToObject(turn, "role", "assistant");
    cJSON_AddItemToObject(turn, "content", cJSON_Duplicate(content, 1));
    cJSON_AddItemToArray(c->history, turn);
    const cJSON *u = cJSON_GetObjectItem(a, "usage");
    add_tokens(c, usage_count(u, "input_tokens"));
    add_tokens(c, usage_count(u, "output_tokens"));
    return 0;
}

/* One call's result, under its id, for the next request. */
static void add_result(chat *c, const call *k, const char *result, bool is_error)
{
    cJSON *r = cJSON_CreateObject();
    if (c->o->api == API_RESPONSES) {
        cJSON_AddStringToObject(r, "type", "function_call_output");
        cJSON_AddStringToObject(r, "call_id", k->id);
        cJSON_AddStringToObject(r, "output", result);
    } else if (c->o->api == API_CHAT) {
        cJSON_AddStringToObject(r, "role", "tool");
        cJSON_AddStringToObject(r, "tool_call_id", k->id);
        cJSON_AddStringToObject(r, "content", result);
    } else {
        cJSON_AddStringToObject(r, "type", "tool_result");
        cJSON_AddStringToObject(r, "tool_use_id", k->id);
        cJSON_AddStringToObject(r, "content", result);
        if (is_error)
            cJSON_AddTrueToObject(r, "is_error");
    }
    cJSON_AddItemToArray(c->pending, r);
}

static void free_calls(chat *c)
{
    for (size_t i = 0; i < c->n_calls; i++) {
        free(c->calls[i].id);
        free(c->calls[i].name);
        free(c->calls[i].args);
    }
    free(c->calls);
    c->calls = NULL;
    c->n_calls = 0;
}

/* The turn's results into the history: one item or message each, or for
 * Anthropic one user message holding them all. */
static void end_turn(chat *c)
{
    if (c->o->api == API_ANTHROPIC) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", "user");
        cJSON_AddItemToObject(m, "content", c->pending);
        cJSON_AddItemToArray(c->history, m);
    } else {
        cJSON *r;
        while ((r = cJSON_DetachItemFromArray(c->pending, 0)))
            cJSON_AddItemToArray(c->history, r);
        cJSON_Delete(c->pending);
    }
    c->pending = cJSON_CreateArray();
    free_calls(c);
}

/* The harness's tools in the API's format: Chat's "openai" and Anthropic's
 * as they are; the Responses API's function tools flat. */
static cJSON *tools_for(api a)
{
    char *text = NULL;
    if (ocisbx_harness_tools_json(NULL, a == API_ANTHROPIC ? "anthropic" : "openai", &text))
        return NULL;
    cJSON *t = cJSON_Parse(text);
    ocisbx_free(text);
    if (a != API_RESPONSES)
        return t;
    cJSON *flat = cJSON_CreateArray(), *e;
    cJSON_ArrayForEach(e, t)
    {
        cJSON *fn = cJSON_GetObjectItem(e, "function"), *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "type", "function");
        cJSON_AddItemToObject(f, "name", cJSON_Duplicate(cJSON_GetObjectItem(fn, "name"), 1));
        cJSON_AddItemToObject(f, "description", cJSON_Duplicate(cJSON_GetObjectItem(fn, "description"), 1));
        cJSON_AddItemToObject(f, "parameters", cJSON_Duplicate(cJSON_GetObjectItem(fn, "parameters"), 1));
        cJSON_AddItemToArray(flat, f);
    }
    cJSON_Delete(t);
    return flat;
}

/* ---- the gate's person ---------------------------------------------------------------- */
static int approve(const char *tool, const char *label, const char *arguments_json, const char *reason,
                   void *user_data)
{
    chat *c = user_data;
    c->held++;
    if (c->o->approve_all) {
        fprintf(stderr, "gate:   %s (%s) held%s%s; approved by --approve-all\n", tool, label, reason ? ": " : "",
                reason ? reason : "");
        c->approved++;
        return 1;
    }
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
    FILE *tty = fd >= 0 ? fdopen(fd, "r+") : NULL;
    if (!tty) {
        if (fd >= 0)
            close(fd);
        fprintf(stderr, "gate:   %s (%s) held; no terminal to ask a person: refused (--approve-all approves)\n",
                tool, label);
        return ocisbx_error_set(OCISBX_EDENIED, "no terminal was available to ask a person (/dev/tty)");
    }
    fprintf(tty, "\nThe model wants to run %s %s\n%s%sApprove? [y/N] ", tool, arguments_json, reason ? reason : "",
            reason ? "\n" : "");
    fflush(tty);
    char line[64] = "";
    int yes = fgets(line, sizeof line, tty) && (line[0] == 'y' || line[0] == 'Y');
    fclose(tty);
    fprintf(stderr, "gate:   %s (%s) held; %s at the terminal\n", tool, label, yes ? "approved" : "refused");
    c->approved += yes;
    return yes;
}

/* ---- the loop -------------------------------------------------------------------------- */
/* Each call of the answer through the harness, its result kept for the model. */
static void run_calls(chat *c, int turn)
{
    for (size_t i = 0; i < c->n_calls; i++) {
        const call *k = &c->calls[i];
        fprintf(stderr, "[%d] call:   %s ", turn, k->name);
        put_redacted(stderr, k->args, SHOWN_MAX);
        fputc('\n', stderr);
        char *result = NULL;
        int rc = ocisbx_harness_call_json(c->h, k->name, k->args, &result);
        note(rc ? "    error:  " : "    result: ", result ? result : "(none)", SHOWN_MAX);
        add_result(c, k, result ? result : "{\"error\":{\"code\":\"backend_error\",\"message\":\"no result\"}}",
                   rc != 0);
        ocisbx_free(result);
    }
}

/* Requests until a final answer (0), a failure (1), a budget (3). */
static int loop(chat *c)
{
    c->url = malloc(strlen(c->o->base_url) + 32);
    if (!c->url)
        return 1;
    strcpy(c->url, c->o->base_url);
    size_t n = strlen(c->url);
    while (n && c->url[n - 1] == '/')
        c->url[--n] = 0;
    strcat(c->url, c->o->api == API_RESPONSES ? "/responses"
                   : c->o->api == API_CHAT    ? "/chat/completions"
                                              : "/messages");
    if (c->o->api == API_CHAT)
        cJSON_AddItemToArray(c->history, message("system", c->system));
    cJSON_AddItemToArray(c->history, message("user", c->o->task));
    for (int turn = 1; turn <= c->o->max_turns; turn++) {
        if (example_interrupted)
            return 130;
        cJSON *req = request(c), *answer = NULL;
        int rc = post(c, req, &answer);
        cJSON_Delete(req);
        free(c->text);
        c->text = NULL;
        if (!rc) {
            rc = c->o->api == API_RESPONSES ? reply_responses(c, answer)
                 : c->o->api == API_CHAT    ? reply_chat(c, answer)
                                            : reply_anthropic(c, answer);
        }
        cJSON_Delete(answer);
        if (rc)
            return example_interrupted ? 130 : 1;
        if (c->text && c->n_calls)
            note("model:  ", c->text, 2000);
        if (!c->n_calls)
            return 0; /* the final answer */
        run_calls(c, turn);
        end_turn(c);
        if (c->tokens >= c->o->max_tokens) {
            fprintf(stderr, PROG ": %ld tokens spent: stopping (--max-tokens %ld)\n", c->tokens, c->o->max_tokens);
            return 3;
        }
    }
    fprintf(stderr, PROG ": the model still calls tools after %ld requests: stopping (--max-turns)\n",
            c->o->max_turns);
    return 3;
}

/* ---- set-up ----------------------------------------------------------------------------- */
typedef struct setup {
    ocisbx_client *client;
    ocisbx_backend_options *bopts;
    ocisbx_backend *b;
    ocisbx_harness_options *hopts;
} setup;

static int open_workspace(const opts *o, setup *s)
{
    if (o->local_dir) {
        if (example_backend_options(NULL, &s->bopts) || ocisbx_backend_local(o->local_dir, s->bopts, &s->b))
            return example_fail(PROG, "local workspace");
        return 0;
    }
    if (example_client(&s->client) || example_backend_options(s->client, &s->bopts))
        return example_fail(PROG, "settings");
    if (o->sandbox_id && ocisbx_backend_connect(o->sandbox_id, s->bopts, &s->b))
        return example_fail(PROG, "connect to the sandbox");
    if (o->project_id && (ocisbx_backend_options_set_display_name(s->bopts, PROG) ||
                          ocisbx_backend_create(o->project_id, s->bopts, &s->b)))
        return example_fail(PROG, "create a sandbox");
    return 0;
}

static int open_harness(const opts *o, setup *s, chat *c)
{
    if (ocisbx_harness_options_new(&s->hopts) || ocisbx_harness_options_set_evidence_file(s->hopts, o->evidence) ||
        (o->policy ? ocisbx_harness_options_set_policy_file(s->hopts, o->policy)
                   : ocisbx_harness_options_require_person(s->hopts, OCISBX_LABEL_EXEC)) ||
        ocisbx_harness_new(s->b, s->hopts, &c->h) || ocisbx_harness_set_approval(c->h, approve, c) ||
        ocisbx_harness_prompt(c->h, &c->system))
        return example_fail(PROG, "harness");
    c->tools = tools_for(o->api);
    c->history = cJSON_CreateArray();
    c->pending = cJSON_CreateArray();
    if (!c->tools || !c->history || !c->pending) {
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    return 0;
}

/* The key from its variable, which is then removed from the environment
 * (so that no command this process starts inherits it). */
static char *take_key(const char *var)
{
    const char *v = getenv(var);
    if (!v || !v[0]) {
        fprintf(stderr, PROG ": the variable %s (the API key) is not set\n", var);
        return NULL;
    }
    char *key = strdup(v);
    size_t n = strlen(v);
    memset(getenv(var), 0, n);
    unsetenv(var);
    if (key && strpbrk(key, "\r\n")) {
        fprintf(stderr, PROG ": the variable %s holds a line break: not a key\n", var);
        memset(key, 0, strlen(key));
        free(key);
        return NULL;
    }
    return key;
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    if (!url_allowed(o.base_url)) {
        fprintf(stderr, PROG ": --base-url must be https:// (plain http only to this machine): %s\n", o.base_url);
        return 2;
    }
    chat c = {.o = &o};
    c.key = take_key(o.key_env);
    if (!c.key)
        return 2;
    g_key = c.key;
    setup s = {0};
    ocisbx_global_init();
    curl_global_init(CURL_GLOBAL_DEFAULT);
    rc = open_workspace(&o, &s);
    if (!rc) {
        fprintf(stderr, "workspace: %s\n", ocisbx_backend_label(s.b));
        rc = open_harness(&o, &s, &c);
    }
    if (!rc) {
        fprintf(stderr, "model: %s at %s (%s)\nevidence: %s\n", o.model, o.base_url,
                o.api == API_RESPONSES ? "responses" : o.api == API_CHAT ? "chat" : "anthropic", o.evidence);
        rc = loop(&c);
        if (rc == 0) {
            put_redacted(stdout, c.text ? c.text : "", (size_t)-1);
            fputc('\n', stdout);
        }
        fprintf(stderr, "%ld tokens, %d held calls (%d approved)\n", c.tokens, c.held, c.approved);
    }
    ocisbx_harness_free(c.h);
    if (s.b && ocisbx_backend_close(s.b)) /* a created sandbox is stopped (waited for) and deleted here, also after a failure */
        rc = example_fail(PROG, "close the workspace");
    ocisbx_backend_free(s.b);
    ocisbx_harness_options_free(s.hopts);
    ocisbx_backend_options_free(s.bopts);
    ocisbx_client_free(s.client);
    free_calls(&c);
    cJSON_Delete(c.pending);
    cJSON_Delete(c.history);
    cJSON_Delete(c.tools);
    ocisbx_free(c.system);
    free(c.text);
    free(c.url);
    memset(c.key, 0, strlen(c.key));
    free(c.key);
    curl_global_cleanup();
    ocisbx_global_cleanup();
    return example_interrupted && rc ? 130 : rc;
}
