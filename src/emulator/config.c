/* The tenancy file (YAML, libyaml's document API so every node has a line).
 * Strict: unknown keys, wrong types and bad values are refused with the file,
 * the line and the key named, so a typo never silently changes a test. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "auth/verify.h"
#include "emulator/base.h"
#include "ocisbx/api.h"
#include "ocisbx/util.h"

typedef struct ctx {
    yaml_document_t *doc;
    const char *file;
    emu_config *cfg;
} ctx;

static int bad(const ctx *c, const yaml_node_t *n, const char *key, const char *what)
{
    return ocisbx_fail(OCISBX_ECONFIG, "%s:%lu: %s: %s", c->file, n ? (unsigned long)n->start_mark.line + 1 : 0UL,
                       key, what);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int get_str(const ctx *c, const yaml_node_t *n, const char *key, char **out)
{
    const char *v = scalar(n);
    if (!v || !*v)
        return bad(c, n, key, "expected a non-empty string");
    if (*out)
        return bad(c, n, key, "given twice");
    *out = ocisbx_strdup(v);
    return *out ? 0 : ocisbx_fail_nomem();
}

/* An OCID of the given type: ocid1.<type>.<realm>.[region].<unique>, the
 * parts in lowercase letters, digits, '-' and '_'. */
static int get_ocid(const ctx *c, const yaml_node_t *n, const char *key, const char *type, char **out)
{
    const char *v = scalar(n);
    char msg[160];
    snprintf(msg, sizeof msg, "expected an OCID of type %s, like ocid1.%s.oc1..aaaa", type, type);
    if (!v)
        return bad(c, n, key, msg);
    size_t tl = strlen(type);
    bool ok = !strncmp(v, "ocid1.", 6) && !strncmp(v + 6, type, tl) && v[6 + tl] == '.';
    int dots = 0;
    const char *q = ok ? v + 7 + tl : v;
    for (; ok && *q; q++) {
        if (*q == '.')
            dots++;
        else if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '-' || *q == '_'))
            ok = false;
    }
    /* realm . region . unique: two dots, and a non-empty unique part */
    if (!ok || dots < 2 || q[-1] == '.')
        return bad(c, n, key, msg);
    return get_str(c, n, key, out);
}

/* A rate in requests per second: a number >= 0 (0: no limit), decimals allowed (0.2: one per 5 s). */
static int get_rate(const ctx *c, const yaml_node_t *n, const char *key, double *out)
{
    const char *v = scalar(n);
    char *end = NULL;
    double x = v ? strtod(v, &end) : -1;
    if (!v || !*v || *end || !(x >= 0.0 && x <= EMU_RATE_MAX))
        return bad(c, n, key, "expected a rate per second from 0 (no limit) to 1000000, decimals allowed");
    *out = x;
    return 0;
}

static int get_int(const ctx *c, const yaml_node_t *n, const char *key, int64_t min, int64_t max, int64_t *out)
{
    const char *v = scalar(n);
    if (!v || !*v)
        return bad(c, n, key, "expected an integer");
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end || x < min || x > max) {
        char msg[128];
        snprintf(msg, sizeof msg, "expected an integer from %lld to %lld, got \"%.40s\"", (long long)min,
                 (long long)max, v);
        return bad(c, n, key, msg);
    }
    *out = x;
    return 0;
}

typedef int (*pair_fn)(ctx *c, const char *key, yaml_node_t *value, yaml_node_t *keynode, void *ud);

/* Calls fn for each key of a mapping; refuses duplicate keys. */
static int each_pair(ctx *c, yaml_node_t *map, const char *what, pair_fn fn, void *ud)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return bad(c, map, what, "expected a mapping");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
        const char *ks = scalar(k);
        if (!ks)
            return bad(c, k, what, "keys must be plain strings");
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            const char *ks2 = scalar(yaml_document_get_node(c->doc, q->key));
            if (ks2 && !strcmp(ks, ks2))
                return bad(c, k, ks, "duplicate key");
        }
        if (!v)
            return bad(c, k, ks, "missing value");
        int rc = fn(c, ks, v, k, ud);
        if (rc)
            return rc;
    }
    return 0;
}

static int unknown(ctx *c, const char *key, yaml_node_t *k)
{
    return bad(c, k, key, "unknown key");
}

static int want_seq(ctx *c, yaml_node_t *v, const char *key)
{
    if (v->type != YAML_SEQUENCE_NODE)
        return bad(c, v, key, "expected a list");
    return 0;
}

static int load_key(ctx *c, yaml_node_t *n, const char *key, const char *rel, struct ocisbx_pubkey **out, bool load)
{
    if (!load)
        return 0;
    char *path;
    if (rel[0] == '/') {
        path = ocisbx_strdup(rel);
    } else {
        const char *slash = strrchr(c->file, '/');
        path = slash ? ocisbx_asprintf("%.*s/%s", (int)(slash - c->file), c->file, rel) : ocisbx_strdup(rel);
    }
    if (!path)
        return ocisbx_fail_nomem();
    int rc = ocisbx_pubkey_load_file(path, out);
    if (rc) {
        char msg[600];
        snprintf(msg, sizeof msg, "cannot load public key %s: %s", path, ocisbx_error_message(ocisbx_error_last()));
        free(path);
        return bad(c, n, key, msg);
    }
    free(path);
    return 0;
}

typedef struct item_ud {
    bool load_keys;
    void *item;
    const char *pubkey_rel;
    yaml_node_t *pubkey_node;
    yaml_node_t *fp_node;
} item_ud;

/* public_key_file of a user or a session token: loaded once all is read. */
static int pubkey_file(ctx *c, const char *key, yaml_node_t *v, item_ud *u)
{
    if (!scalar(v) || !*scalar(v))
        return bad(c, v, key, "expected a file name");
    u->pubkey_rel = scalar(v);
    u->pubkey_node = v;
    return 0;
}

static int user_pair(ctx *c, const char *key, yaml_node_t *v, yaml_node_t *k, void *ud)
{
    item_ud *u = ud;
    emu_user *user = u->item;
    if (!strcmp(key, "id"))
        return get_ocid(c, v, key, "user", &user->id);
    if (!strcmp(key, "fingerprint")) {
        u->fp_node = v;
        int rc = get_str(c, v, key, &user->fingerprint);
        if (rc)
            return rc;
        const char *f = user->fingerprint;
        bool ok = strlen(f) == 47;
        for (int i = 0; ok && i < 47; i++)
            ok = (i % 3 == 2) ? f[i] == ':' : ((f[i] >= '0' && f[i] <= '9') || (f[i] >= 'a' && f[i] <= 'f'));
        return ok ? 0 : bad(c, v, key, "expected 16 lowercase hex pairs joined by ':'");
    }
    if (!strcmp(key, "public_key_file"))
        return pubkey_file(c, key, v, u);
    return unknown(c, key, k);
}

static int token_pair(ctx *c, const char *key, yaml_node_t *v, yaml_node_t *k, void *ud)
{
    item_ud *u = ud;
    emu_token *t = u->item;
    if (!strcmp(key, "token"))
        return get_str(c, v, key, &t->token);
    if (!strcmp(key, "expires")) {
        if (!scalar(v) || ocisbx_time_parse_rfc3339(scalar(v), &t->expires_ms) != 0)
            return bad(c, v, key, "expected an RFC 3339 time like 2030-01-01T00:00:00Z");
        return 0;
    }
    if (!strcmp(key, "public_key_file"))
        return pubkey_file(c, key, v, u);
    return unknown(c, key, k);
}

static int project_pair(ctx *c, const char *key, yaml_node_t *v, yaml_node_t *k, void *ud)
{
    item_ud *u = ud;
    emu_project *p = u->item;
    if (!strcmp(key, "id"))
        return get_ocid(c, v, key, "generativeaiproject", &p->id);
    if (!strcmp(key, "network")) {
        const char *s = scalar(v);
        if (s && !strcmp(s, "deny"))
            p->allow_network = false;
        else if (s && !strcmp(s, "allow"))
            p->allow_network = true;
        else
            return bad(c, v, key, "expected deny or allow");
        return 0;
    }
    if (!strcmp(key, "warmpools")) {
        int rc = want_seq(c, v, key);
        if (rc)
            return rc;
        size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
        p->warmpools = calloc(n ? n : 1, sizeof(char *));
        if (!p->warmpools)
            return ocisbx_fail_nomem();
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *it = yaml_document_get_node(c->doc, v->data.sequence.items.start[i]);
            rc = get_str(c, it, key, &p->warmpools[i]);
            if (rc)
                return rc;
            p->n_warmpools++;
        }
        return 0;
    }
    return unknown(c, key, k);
}

static const char *const shape_names[3] = {"SMALL", "MEDIUM", "LARGE"};

const struct emu_shape_limits *emu_shape_limits(const emu_config *c, const char *shape)
{
    for (int i = 0; i < 3 && shape; i++)
        if (!strcmp(shape, shape_names[i]))
            return &c->limits.shapes[i];
    return NULL;
}

static int shape_limit_pair(ctx *c, const char *key, yaml_node_t *v, yaml_node_t *k, void *ud)
{
    struct emu_shape_limits *sl = ud;
    if (!strcmp(key, "memory_mib"))
        return get_int(c, v, key, 0, INT64_C(1) << 30, &sl->memory_mib);
    if (!strcmp(key, "processes"))
        return get_int(c, v, key, 0, 1000000, &sl->processes);
    if (!strcmp(key, "workspace_mib"))
        return get_int(c, v, key, 0, INT64_C(1) << 30, &sl->workspace_mib);
    return unknown(c, key, k);
}

static int shapes_pair(ctx *c, const char *key, yaml_node_t *v, yaml_node_t *k, void *ud)
{
    (void)ud;
    for (int i = 0; i < 3; i++)
        if (!strcmp(key, shape_names[i]))
            return each_pair(c, v, key, shape_limit_pair, &c->cfg->limits.shapes[i]);
    return bad(c, k, key, "expected a shape: SMALL, MEDIUM or LARGE");
}

static int limits_pair(ctx *c, const char *key, yaml_node_t *v, yaml_node_t *k, void *ud)
{
    (void)ud;
    if (!strcmp(key, "shapes"))
        return each_pair(c, v, key, shapes_pair, NULL);
    emu_limits *l = &c->cfg->limits;
    if (!strcmp(key, "max_body_bytes"))
        return get_int(c, v, key, 1, INT64_C(1) << 40, &l->max_body_bytes);
    if (!strcmp(key, "output_loss_bytes"))
        return get_int(c, v, key, 0, INT64_C(1) << 40, &l->output_loss_bytes);
    if (!strcmp(key, "max_lifetime_minutes"))
        return get_int(c, v, key, 1, 1000000, &l->max_lifetime_minutes);
    if (!strcmp(key, "create_delay_ms"))
        return get_int(c, v, key, 0, 3600000, &l->create_delay_ms);
    if (!strcmp(key, "stop_delay_ms"))
        return get_int(c, v, key, 0, 3600000, &l->stop_delay_ms);
    if (!strcmp(key, "minute_ms"))
        return get_int(c, v, key, 10, 60000, &l->minute_ms);
    if (!strcmp(key, "creates_per_second"))
        return get_rate(c, v, key, &l->creates_per_second);
    if (!strcmp(key, "requests_per_second"))
        return get_rate(c, v, key, &l->requests_per_second);
    if (!strcmp(key, "max_sandboxes"))
        return get_int(c, v, key, 0, 1000000, &l->max_sandboxes);
    return unknown(c, key, k);
}

static int match_pair(ctx *c, const char *key, yaml_node_t *v, yaml_node_t *k, void *ud)
{
    emu_fault *f = ud;
    if (!strcmp(key, "method")) {
        int rc = get_str(c, v, key, &f->method);
        if (rc)
            return rc;
        static const char *const ok[] = {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "*"};
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
            if (!ocisbx_strcasecmp(f->method, ok[i]))
                return 0;
        return bad(c, v, key, "expected GET, POST, PUT, DELETE, PATCH, HEAD or *");
    }
    if (!strcmp(key, "path")) {
        int rc = get_str(c, v, key, &f->path);
        if (rc)
            return rc;
        return f->path[0] == '/' ? 0 : bad(c, v, key, "expected a path glob starting with '/'");
    }
    return unknown(c, key, k);
}

static int rule_pair(ctx *c, const char *key, yaml_node_t *v, yaml_node_t *k, void *ud)
{
    emu_fault *f = ud;
    int64_t x;
    int rc;
    if (!strcmp(key, "match"))
        return each_pair(c, v, key, match_pair, f);
    if (!strcmp(key, "respond")) {
        const char *s = scalar(v);
        if (s && !strcmp(s, "reset")) {
            f->reset = true;
            return 0;
        }
        rc = get_int(c, v, key, 400, 599, &x);
        if (rc)
            return bad(c, v, key, "expected an HTTP status from 400 to 599, or reset");
        f->status = (int)x;
        return 0;
    }
    if (!strcmp(key, "retry_after_s")) {
        rc = get_int(c, v, key, 0, 86400, &x);
        f->retry_after_s = (int)x;
        return rc;
    }
    if (!strcmp(key, "delay_ms")) {
        rc = get_int(c, v, key, 1, 600000, &x);
        f->delay_ms = (int)x;
        return rc;
    }
    if (!strcmp(key, "cut_stream_after_events")) {
        rc = get_int(c, v, key, 1, 1000000000, &x);
        f->cut_after_events = (int)x;
        return rc;
    }
    if (!strcmp(key, "times")) {
        rc = get_int(c, v, key, 1, 1000000000, &x);
        f->times = (int)x;
        return rc;
    }
    if (!strcmp(key, "probability")) {
        const char *s = scalar(v);
        char *end = NULL;
        double p = s ? strtod(s, &end) : -1;
        if (!s || !*s || *end || !(p > 0.0 && p <= 1.0))
            return bad(c, v, key, "expected a number in (0, 1]");
        f->probability = p;
        return 0;
    }
    return unknown(c, key, k);
}

static int faults_pair(ctx *c, const char *key, yaml_node_t *v, yaml_node_t *k, void *ud)
{
    (void)ud;
    emu_config *cfg = c->cfg;
    if (!strcmp(key, "seed")) {
        int64_t x;
        int rc = get_int(c, v, key, 0, INT64_MAX, &x);
        cfg->seed = (uint64_t)x;
        return rc;
    }
    if (!strcmp(key, "rules")) {
        int rc = want_seq(c, v, key);
        if (rc)
            return rc;
        size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
        cfg->faults = calloc(n ? n : 1, sizeof(emu_fault));
        if (!cfg->faults)
            return ocisbx_fail_nomem();
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *it = yaml_document_get_node(c->doc, v->data.sequence.items.start[i]);
            emu_fault *f = &cfg->faults[i];
            f->retry_after_s = -1;
            f->times = -1;
            f->probability = 1.0;
            cfg->n_faults++;
            rc = each_pair(c, it, "rules", rule_pair, f);
            if (rc)
                return rc;
            int actions = (f->status || f->reset) + (f->delay_ms > 0) + (f->cut_after_events > 0);
            if (actions != 1)
                return bad(c, it, "rules",
                           "each rule needs exactly one of respond, delay_ms, cut_stream_after_events");
            if (f->retry_after_s >= 0 && !f->status)
                return bad(c, it, "retry_after_s", "only with respond: <status>");
        }
        return 0;
    }
    return unknown(c, key, k);
}

typedef int (*item_fn)(ctx *c, yaml_node_t *it, size_t i, bool load_keys);

static int user_item(ctx *c, yaml_node_t *it, size_t i, bool load_keys)
{
    emu_user *u = &c->cfg->users[i];
    item_ud ud = {load_keys, u, NULL, NULL, NULL};
    int rc = each_pair(c, it, "users", user_pair, &ud);
    if (rc)
        return rc;
    if (!u->id || !u->fingerprint || !ud.pubkey_rel)
        return bad(c, it, "users", "each user needs id, fingerprint and public_key_file");
    rc = load_key(c, ud.pubkey_node, "public_key_file", ud.pubkey_rel, &u->key, load_keys);
    if (rc || !load_keys)
        return rc;
    char fp[48];
    if (ocisbx_pubkey_fingerprint(u->key, fp) == 0 && strcmp(fp, u->fingerprint) != 0) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s does not match the key in public_key_file %s, whose fingerprint is %s",
                 u->fingerprint, ud.pubkey_rel, fp);
        return bad(c, ud.fp_node, "fingerprint", msg);
    }
    return 0;
}

static int token_item(ctx *c, yaml_node_t *it, size_t i, bool load_keys)
{
    emu_token *t = &c->cfg->tokens[i];
    t->expires_ms = -1;
    item_ud ud = {load_keys, t, NULL, NULL, NULL};
    int rc = each_pair(c, it, "session_tokens", token_pair, &ud);
    if (rc)
        return rc;
    if (!t->token || !ud.pubkey_rel || t->expires_ms < 0)
        return bad(c, it, "session_tokens", "each token needs token, public_key_file and expires");
    return load_key(c, ud.pubkey_node, "public_key_file", ud.pubkey_rel, &t->key, load_keys);
}

static int project_item(ctx *c, yaml_node_t *it, size_t i, bool load_keys)
{
    (void)load_keys;
    emu_project *p = &c->cfg->projects[i];
    item_ud ud = {false, p, NULL, NULL, NULL};
    int rc = each_pair(c, it, "projects", project_pair, &ud);
    if (rc)
        return rc;
    return p->id ? 0 : bad(c, it, "projects", "each project needs an id");
}

static int load_list(ctx *c, yaml_node_t *v, const char *key, size_t elem, void **arr, size_t *count, item_fn fn,
                     bool load_keys)
{
    int rc = want_seq(c, v, key);
    if (rc)
        return rc;
    if (*arr)
        return bad(c, v, key, "given twice");
    size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    *arr = calloc(n ? n : 1, elem);
    if (!*arr)
        return ocisbx_fail_nomem();
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *it = yaml_document_get_node(c->doc, v->data.sequence.items.start[i]);
        (*count)++;
        rc = fn(c, it, i, load_keys);
        if (rc)
            return rc;
    }
    return 0;
}

static int top_pair(ctx *c, const char *key, yaml_node_t *v, yaml_node_t *k, void *ud)
{
    bool load_keys = *(bool *)ud;
    emu_config *cfg = c->cfg;
    if (!strcmp(key, "region"))
        return get_str(c, v, key, &cfg->region);
    if (!strcmp(key, "tenancy"))
        return get_ocid(c, v, key, "tenancy", &cfg->tenancy);
    if (!strcmp(key, "users"))
        return load_list(c, v, key, sizeof(emu_user), (void **)&cfg->users, &cfg->n_users, user_item, load_keys);
    if (!strcmp(key, "session_tokens"))
        return load_list(c, v, key, sizeof(emu_token), (void **)&cfg->tokens, &cfg->n_tokens, token_item, load_keys);
    if (!strcmp(key, "projects"))
        return load_list(c, v, key, sizeof(emu_project), (void **)&cfg->projects, &cfg->n_projects, project_item,
                         load_keys);
    if (!strcmp(key, "limits"))
        return each_pair(c, v, key, limits_pair, NULL);
    if (!strcmp(key, "faults")) {
        if (cfg->faults)
            return bad(c, v, key, "given twice");
        return each_pair(c, v, key, faults_pair, NULL);
    }
    return unknown(c, key, k);
}

int emu_config_parse(const char *text, size_t len, const char *path, bool load_keys, emu_config **out)
{
    *out = NULL;
    emu_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg)
        return ocisbx_fail_nomem();
    cfg->path = ocisbx_strdup(path ? path : "tenancy.yaml");
    cfg->limits.max_body_bytes = 8388608;
    cfg->limits.output_loss_bytes = 1048576;
    cfg->limits.max_lifetime_minutes = OCISBX_EXPIRES_IN_MINUTES_MAX; /* the service's 48 h */
    cfg->limits.create_delay_ms = 300;
    cfg->limits.stop_delay_ms = 100;
    cfg->limits.minute_ms = 60000;
    /* Oracle's shapes: SMALL 1 OCPU / 4 GB, MEDIUM 2 / 8 GB, LARGE 4 / 16 GB;
     * processes: 1024 per OCPU (counted per sandbox uid as root, see proc.h);
     * workspace: 10 GiB per OCPU (the emulator's choice, docs/emulator.md) */
    static const int64_t mem[3] = {4096, 8192, 16384}, procs[3] = {1024, 2048, 4096}, wsp[3] = {10240, 20480, 40960};
    for (int i = 0; i < 3; i++) {
        cfg->limits.shapes[i].memory_mib = mem[i];
        cfg->limits.shapes[i].processes = procs[i];
        cfg->limits.shapes[i].workspace_mib = wsp[i];
    }
    cfg->seed = 1;

    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        emu_config_free(cfg);
        return ocisbx_fail_nomem();
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = 0;
    if (!yaml_parser_load(&parser, &doc)) {
        rc = ocisbx_fail(OCISBX_ECONFIG, "%s:%lu: YAML syntax error: %s", cfg->path,
                         (unsigned long)parser.problem_mark.line + 1, parser.problem ? parser.problem : "?");
        yaml_parser_delete(&parser);
        emu_config_free(cfg);
        return rc;
    }
    ctx c = {&doc, cfg->path, cfg};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        rc = ocisbx_fail(OCISBX_ECONFIG, "%s: empty tenancy file", cfg->path);
    } else {
        rc = each_pair(&c, root, "(top level)", top_pair, &load_keys);
    }
    if (!rc && !cfg->tenancy)
        rc = ocisbx_fail(OCISBX_ECONFIG, "%s: tenancy: missing (the tenancy OCID of every API keyId)", cfg->path);
    if (!rc && !cfg->region)
        rc = ocisbx_fail(OCISBX_ECONFIG, "%s: region: missing", cfg->path);
    for (size_t i = 0; !rc && i < cfg->n_projects; i++)
        for (size_t j = 0; !rc && j < i; j++)
            if (!strcmp(cfg->projects[i].id, cfg->projects[j].id))
                rc = ocisbx_fail(OCISBX_ECONFIG, "%s: projects: id %s listed twice", cfg->path, cfg->projects[i].id);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (rc) {
        emu_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

int emu_config_load(const char *path, emu_config **out)
{
    *out = NULL;
    size_t len = 0;
    char *text = emu_read_file(path, &len);
    if (!text)
        return ocisbx_fail(OCISBX_ECONFIG, "tenancy file %s: %s", path, strerror(errno));
    int rc = emu_config_parse(text, len, path, true, out);
    free(text);
    return rc;
}

const emu_project *emu_config_project(const emu_config *c, const char *id)
{
    for (size_t i = 0; id && i < c->n_projects; i++)
        if (!strcmp(c->projects[i].id, id))
            return &c->projects[i];
    return NULL;
}

void emu_config_free(emu_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_users; i++) {
        free(c->users[i].id);
        free(c->users[i].fingerprint);
        ocisbx_pubkey_free(c->users[i].key);
    }
    for (size_t i = 0; i < c->n_tokens; i++) {
        ocisbx_free_secret(c->tokens[i].token);
        ocisbx_pubkey_free(c->tokens[i].key);
    }
    for (size_t i = 0; i < c->n_projects; i++) {
        free(c->projects[i].id);
        for (size_t j = 0; j < c->projects[i].n_warmpools; j++)
            free(c->projects[i].warmpools[j]);
        free(c->projects[i].warmpools);
    }
    for (size_t i = 0; i < c->n_faults; i++) {
        free(c->faults[i].method);
        free(c->faults[i].path);
    }
    free(c->users);
    free(c->tokens);
    free(c->projects);
    free(c->faults);
    free(c->path);
    free(c->region);
    free(c->tenancy);
    free(c);
}
