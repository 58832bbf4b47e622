/* Fuzz target: the emulator's request path without a socket. The input is
 * "METHOD target\nname: value\n...\n\nbody". It goes through emu_handle
 * (request id, fault rules, authentication with its Authorization parsing and
 * signing string, routing), then, bypassing authentication, straight to the
 * handler of its route (query parsing, JSON bodies, path checks), against a
 * state directory in /tmp with one sandbox "sbx-fuzz". Routes that would
 * start processes or write files are routed and parsed, not executed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/emu.h"

static emu_server *g_s;

static const char YAML[] = "region: r\n"
                           "tenancy: ocid1.tenancy.oc1..t\n"
                           "projects:\n"
                           "  - id: ocid1.generativeaiproject.oc1..p\n"
                           "    network: deny\n"
                           "    warmpools: [w]\n"
                           "limits:\n"
                           "  create_delay_ms: 0\n"
                           "faults:\n"
                           "  seed: 3\n"
                           "  rules:\n"
                           "    - match: {method: GET, path: \"/fault/**\"}\n"
                           "      respond: 503\n"
                           "    - match: {path: \"/sandboxes/*/x\"}\n"
                           "      respond: reset\n"
                           "      probability: 0.5\n";

static char g_dir[64];

static void cleanup(void)
{
    if (g_dir[0])
        emu_rmtree(g_dir);
}

static void init(void)
{
    if (g_s)
        return;
    char dir[] = "/tmp/fuzz-emu-request-XXXXXX";
    if (!mkdtemp(dir))
        abort();
    snprintf(g_dir, sizeof g_dir, "%s", dir);
    atexit(cleanup);
    emu_config *cfg = NULL;
    if (emu_config_parse(YAML, sizeof YAML - 1, "fuzz.yaml", false, &cfg) != 0)
        abort();
    if (emu_server_new(cfg, dir, "20231130", false, &g_s) != 0)
        abort();
    emu_sandbox *b = calloc(1, sizeof *b);
    snprintf(b->id, sizeof b->id, "sbx-fuzz");
    b->project_id = strdup("ocid1.generativeaiproject.oc1..p");
    b->display_name = strdup("fuzz");
    b->runtime = strdup("python-3.11");
    b->shape = strdup("SMALL");
    snprintf(b->state, sizeof b->state, "RUNNING");
    b->t_created = b->t_updated = emu_now_ms();
    b->t_expires = b->t_created + 3600000;
    char *ws = emu_workspace_dir(g_s, b->id);
    emu_mkdirs(ws);
    free(ws);
    g_s->sbx = calloc(16, sizeof *g_s->sbx);
    g_s->cap_sbx = 16;
    g_s->sbx[g_s->n_sbx++] = b;
}

/* Drops every sandbox and snapshot an input created, keeps sbx-fuzz. */
static void reset_state(void)
{
    for (size_t i = 1; i < g_s->n_sbx; i++) {
        char *ws = emu_workspace_dir(g_s, g_s->sbx[i]->id);
        emu_rmtree(ws);
        free(ws);
        emu_sandbox_free(g_s->sbx[i]);
    }
    g_s->n_sbx = 1;
    snprintf(g_s->sbx[0]->state, sizeof g_s->sbx[0]->state, "RUNNING");
    for (size_t i = 0; i < g_s->n_snaps; i++)
        emu_snapshot_free(g_s->snaps[i]);
    g_s->n_snaps = 0;
    for (size_t i = 0; i < g_s->n_retries; i++)
        emu_retry_free(g_s->retries[i]);
    g_s->n_retries = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    emu_request req;
    memset(&req, 0, sizeof req);
    char *p = text, *nl = strchr(p, '\n');
    if (nl)
        *nl = 0;
    char *sp = strchr(p, ' ');
    if (!sp || sp - p >= 15) {
        free(text);
        return 0;
    }
    *sp = 0;
    emu_request_set_target(&req, p, sp + 1);
    p = nl ? nl + 1 : text + size;
    while (p < text + size) {
        nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        if (!*p) {
            p = nl ? nl + 1 : text + size;
            break;
        }
        char *colon = strchr(p, ':');
        if (colon) {
            *colon = 0;
            char *v = colon + 1;
            while (*v == ' ')
                v++;
            emu_request_add_header(&req, p, v);
        }
        p = nl ? nl + 1 : text + size;
    }
    if (p < text + size) {
        req.body_len = (size_t)(text + size - p);
        req.body = malloc(req.body_len + 1);
        memcpy(req.body, p, req.body_len);
        req.body[req.body_len] = 0;
    }

    emu_response resp;
    emu_response_init(&resp);
    emu_handle(g_s, &req, &resp);
    if (resp.stream) {
        pthread_mutex_lock(&g_s->mu);
        emu_stream_free(resp.stream);
        pthread_mutex_unlock(&g_s->mu);
    }
    emu_response_clear(&resp);

    const char *rel = req.path && !strncmp(req.path, "/20231130", 9) ? req.path + 9 : req.path;
    emu_route rt;
    if (rel && emu_route_match(req.method, *rel ? rel : "/", &rt) == 0) {
        bool skip = rt.id == EMU_R_COMMAND_RUN || rt.id == EMU_R_COMMAND_RUN_WAIT ||
                    rt.id == EMU_R_COMMAND_RUN_STREAM || rt.id == EMU_R_FILE_WRITE || rt.id == EMU_R_SNAPSHOT_CREATE;
        emu_response_init(&resp);
        pthread_mutex_lock(&g_s->mu);
        if (!skip) {
            emu_route_handler(rt.id)(g_s, &req, &rt, &resp); /* the dispatch table's handler */
        } else {
            /* the body parsers of the skipped routes */
            cJSON *body = NULL;
            if (emu_body_json(&req, &resp, &body) == 0) {
                const char *s = NULL;
                emu_env *env = NULL;
                size_t n = 0;
                emu_json_str(body, "command", &s, &resp);
                if (emu_json_env(body, "environmentVariables", &env, &n, &resp) == 0)
                    emu_env_free(env, n);
            }
            cJSON_Delete(body);
        }
        if (resp.stream)
            emu_stream_free(resp.stream);
        reset_state();
        pthread_mutex_unlock(&g_s->mu);
        emu_response_clear(&resp);
    }
    bool bad = false;
    free(emu_query_get(req.query, "filePath", &bad));
    free(emu_query_get(req.query, "page", &bad));
    emu_request_clear(&req);
    free(text);
    return 0;
}
