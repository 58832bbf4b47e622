/* The gate's policy file (YAML through libyaml's document API, so every
 * node has a line). Strict: an unknown key, a wrong type, a bad regular
 * expression or decision is refused with the file, line and key named. */
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness_int.h"
#include "harness/shell.h"
#include "harness/tools.h"
#include "ocisbx/harness.h"
#include "util/glob.h"
#include "util/internal.h"

#ifdef OCISBX_HAVE_YAML
#include <yaml.h>
#endif

#define POLICY_FILE_MAX (1024 * 1024)
#define POLICY_RULES_MAX 10000

typedef struct rule {
    char *label, *tool, *path, *reason, *command_src;
    regex_t command;
    bool has_command;
    int decision;
} rule;

struct ocisbx_policy {
    rule *rules;
    size_t n;
    int fallback; /* `default` */
};

const char *ocisbx_gate_decision_name(int decision)
{
    switch (decision) {
    case OCISBX_GATE_ALLOW: return "allow";
    case OCISBX_GATE_DENY: return "deny";
    case OCISBX_GATE_HOLD: return "hold";
    default: return NULL;
    }
}

static int decision_from_name(const char *s)
{
    for (int d = OCISBX_GATE_ALLOW; d <= OCISBX_GATE_HOLD; d++)
        if (!strcmp(s, ocisbx_gate_decision_name(d)))
            return d;
    return -1;
}

void ocisbx_policy_free(ocisbx_policy *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        rule *r = &p->rules[i];
        free(r->label);
        free(r->tool);
        free(r->path);
        free(r->reason);
        free(r->command_src);
        if (r->has_command)
            regfree(&r->command);
    }
    free(p->rules);
    free(p);
}

bool harness_policy_has_path_rules(const ocisbx_policy *p)
{
    for (size_t i = 0; p && i < p->n; i++)
        if (p->rules[i].path)
            return true;
    return false;
}

size_t ocisbx_policy_rule_count(const ocisbx_policy *p)
{
    return p ? p->n : 0;
}

static int glob_hit(const char *pattern, const char *text)
{
    return pattern ? ocisbx_glob_match(pattern, text) : 1;
}

/* deny > hold > allow. */
static int rank(int d)
{
    return d == OCISBX_GATE_DENY ? 2 : d == OCISBX_GATE_HOLD ? 1 : 0;
}

/* What one decision is taken on: a call without a command (line NULL), or
 * one simple command of its line. */
typedef struct subject {
    const char *tool, *label, *path;
    const char *line;   /* the whole command line, or NULL */
    const char *simple; /* the simple command */
    bool opaque;        /* the line has what an allow cannot vouch for */
} subject;

/* A command rule: an allow matches the simple command, never an opaque
 * line; a deny or hold the simple command or the whole line. */
static int command_hit(const rule *r, const subject *s)
{
    if (r->decision == OCISBX_GATE_ALLOW)
        return !s->opaque && regexec(&r->command, s->simple, 0, NULL, 0) == 0;
    return regexec(&r->command, s->simple, 0, NULL, 0) == 0 || regexec(&r->command, s->line, 0, NULL, 0) == 0;
}

/* The first rule that matches decides; none: the default. */
static int first_match(const ocisbx_policy *p, const subject *s, const char **reason)
{
    for (size_t i = 0; i < p->n; i++) {
        const rule *r = &p->rules[i];
        if ((r->has_command && !s->line) || (r->path && !s->path))
            continue;
        int hit = glob_hit(r->label, s->label);
        if (hit == 1)
            hit = glob_hit(r->tool, s->tool);
        if (hit == 1 && r->path)
            hit = ocisbx_glob_match(r->path, s->path);
        if (hit < 0)
            return hit;
        if (hit == 1 && r->has_command)
            hit = command_hit(r, s);
        if (hit == 1) {
            *reason = r->reason;
            return r->decision;
        }
    }
    *reason = NULL;
    return p->fallback;
}

static bool has_command_rules(const ocisbx_policy *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->rules[i].has_command)
            return true;
    return false;
}

/* A command line: each simple command decided on its own, the strictest
 * wins (so an allow holds only when every simple command has one). */
static int decide_line(const ocisbx_policy *p, subject *s, const char **reason)
{
    shell_line l;
    int rc = harness_shell_parse(s->line, strlen(s->line), &l);
    if (rc)
        return rc;
    s->opaque = l.opaque != NULL;
    int worst = -1;
    for (size_t i = 0; i < (l.n ? l.n : 1); i++) {
        const char *why = NULL;
        s->simple = l.n ? l.cmds[i] : "";
        int d = first_match(p, s, &why);
        if (d < 0) {
            worst = d;
            break;
        }
        if (worst < 0 || rank(d) > rank(worst)) {
            worst = d;
            *reason = why;
        }
    }
    harness_shell_line_free(&l);
    return worst;
}

int ocisbx_policy_decide(const ocisbx_policy *p, const char *tool, const char *label, const char *command,
                         const char *path, const char **reason)
{
    const char *why = NULL;
    if (reason)
        *reason = NULL;
    if (!p || !tool || !label)
        return ocisbx_fail(OCISBX_EINVAL, "policy decide: NULL argument");
    subject s = {tool, label, path, command, command, false};
    int d = command && has_command_rules(p) ? decide_line(p, &s, &why) : first_match(p, &s, &why);
    if (reason && d >= 0)
        *reason = why;
    return d;
}

#ifdef OCISBX_HAVE_YAML

typedef struct ctx {
    yaml_document_t *doc;
    char file[300]; /* shown form: control bytes escaped */
} ctx;

static int bad(const ctx *c, const yaml_node_t *n, const char *key, const char *what)
{
    return ocisbx_fail(OCISBX_ECONFIG, "policy file %s:%lu: %s: %s", c->file,
                       n ? (unsigned long)n->start_mark.line + 1 : 1UL, key, what);
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
    if (n->data.scalar.length != strlen(v))
        return bad(c, n, key, "must not contain a NUL byte");
    *out = ocisbx_strdup(v);
    return *out ? 0 : ocisbx_fail_nomem();
}

static int get_decision(const ctx *c, const yaml_node_t *n, const char *key, int *out)
{
    const char *v = scalar(n);
    int d = v ? decision_from_name(v) : -1;
    if (d < 0) {
        char msg[160], shown[64];
        ocisbx_escape_shown(v ? v : "(not a string)", shown, sizeof shown);
        snprintf(msg, sizeof msg, "expected allow, deny or hold, not \"%s\"", shown);
        return bad(c, n, key, msg);
    }
    *out = d;
    return 0;
}

/* Checks the mapping's keys: plain strings, each once, each one of `known`. */
static int check_keys(const ctx *c, yaml_node_t *map, const char *where, const char *const *known)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return bad(c, map, where, "expected a mapping");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        const char *ks = scalar(k);
        if (!ks)
            return bad(c, k, where, "keys must be plain strings");
        bool ok = false;
        for (size_t i = 0; known[i]; i++)
            ok = ok || !strcmp(known[i], ks);
        char key[200], shown[64];
        ocisbx_escape_shown(ks, shown, sizeof shown);
        snprintf(key, sizeof key, "%s%s%s", where, where[0] ? "." : "", shown);
        if (!ok) {
            char msg[200] = "unknown key (expected one of";
            for (size_t i = 0; known[i]; i++) {
                strncat(msg, i ? ", " : " ", sizeof msg - strlen(msg) - 1);
                strncat(msg, known[i], sizeof msg - strlen(msg) - 1);
            }
            strncat(msg, ")", sizeof msg - strlen(msg) - 1);
            return bad(c, k, key, msg);
        }
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            const char *ks2 = scalar(yaml_document_get_node(c->doc, q->key));
            if (ks2 && !strcmp(ks, ks2))
                return bad(c, k, key, "given twice");
        }
    }
    return 0;
}

static yaml_node_t *value_of(const ctx *c, yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
        if (!strcmp(scalar(yaml_document_get_node(c->doc, p->key)), key))
            return yaml_document_get_node(c->doc, p->value);
    return NULL;
}

/* glibc's regcomp copies a repeated subexpression once per repetition
 * (x+ is xx*, x{3} is xxx), so a short pattern such as "a++++...+" or
 * "((a{100}){100}){100}" takes memory exponential in its length. Before
 * regcomp, a pattern is parsed as an ERE and its compiled size estimated
 * the same way; one over REGEX_COST_MAX, with stacked repetition, with a
 * back-reference (exponential to match) or nested too deep is refused. */
#define REGEX_LEN_MAX 4096
#define REGEX_COST_MAX 20000
#define REGEX_DEPTH_MAX 64

typedef struct re_scan {
    const char *s;
    const char *why;
    int depth;
} re_scan;

static size_t cost_mul(size_t a, size_t b)
{
    return (a && b > (REGEX_COST_MAX + 1) / a) ? REGEX_COST_MAX + 1 : a * b;
}

static size_t cost_add(size_t a, size_t b)
{
    return a + b > REGEX_COST_MAX + 1 ? REGEX_COST_MAX + 1 : a + b;
}

/* "{m}", "{m,}" or "{m,n}" at *s: its bounds (n is -1 for none), or 0 when
 * the brace does not start an interval. */
static int re_interval(const char **s, long *m, long *n)
{
    const char *p = *s + 1;
    if (*p < '0' || *p > '9')
        return 0;
    *m = 0;
    for (; *p >= '0' && *p <= '9'; p++) /* every digit read; the value saturates */
        if (*m <= 100000)
            *m = *m * 10 + (*p - '0');
    *n = *m;
    if (*p == ',') {
        p++;
        *n = -1;
        if (*p >= '0' && *p <= '9') {
            *n = 0;
            for (; *p >= '0' && *p <= '9'; p++)
                if (*n <= 100000)
                    *n = *n * 10 + (*p - '0');
        }
    }
    if (*p != '}')
        return 0;
    *s = p + 1;
    return 1;
}

static size_t re_alt(re_scan *r);

static size_t re_atom(re_scan *r)
{
    char ch = *r->s++;
    if (ch == '(') {
        if (++r->depth > REGEX_DEPTH_MAX) {
            r->why = "groups nested too deep";
            return REGEX_COST_MAX + 1;
        }
        size_t c = re_alt(r);
        r->depth--;
        if (*r->s == ')')
            r->s++;
        return cost_add(c, 1);
    }
    if (ch == '[') { /* a bracket expression is one node */
        if (*r->s == '^')
            r->s++;
        if (*r->s == ']')
            r->s++;
        while (*r->s && *r->s != ']') {
            if (*r->s == '[' && (r->s[1] == ':' || r->s[1] == '.' || r->s[1] == '=')) {
                char end = r->s[1];
                const char *close = r->s + 2;
                while (*close && !(close[0] == end && close[1] == ']'))
                    close++;
                r->s = *close ? close + 2 : close;
            } else {
                r->s++;
            }
        }
        if (*r->s)
            r->s++;
        return 1;
    }
    if (ch == '\\' && *r->s) {
        if (*r->s >= '1' && *r->s <= '9') {
            r->why = "back-references are not supported";
            return REGEX_COST_MAX + 1;
        }
        r->s++;
    }
    return 1;
}

static int re_is_quant(const char *s)
{
    long m, n;
    const char *p = s;
    return *s == '*' || *s == '+' || *s == '?' || (*s == '{' && re_interval(&p, &m, &n));
}

static size_t re_piece(re_scan *r)
{
    size_t c = re_atom(r);
    if (!re_is_quant(r->s))
        return c;
    long m = 0, n = 0;
    char q = *r->s;
    if (q == '{') {
        re_interval(&r->s, &m, &n);
        c = cost_add(cost_mul(c, (size_t)(n < 0 ? m + 1 : (n > m ? n : m)) + 1), 1);
    } else {
        r->s++;
        c = q == '+' ? cost_add(cost_mul(c, 2), 1) : cost_add(c, 1);
    }
    if (re_is_quant(r->s)) {
        r->why = "a repetition repeated (such as \"a++\" or \"a*{2}\")";
        return REGEX_COST_MAX + 1;
    }
    return c;
}

static size_t re_alt(re_scan *r)
{
    size_t c = 0;
    while (*r->s && *r->s != ')' && !r->why) {
        if (*r->s == '|')
            r->s++, c = cost_add(c, 1);
        else
            c = cost_add(c, re_piece(r));
    }
    return c;
}

/* NULL when regcomp may be given the pattern, else why not. */
static const char *regex_too_complex(const char *src)
{
    if (strlen(src) > REGEX_LEN_MAX)
        return "longer than 4096 bytes";
    re_scan r = {src, NULL, 0};
    size_t c = 0;
    while (*r.s && !r.why) {
        c = cost_add(c, re_alt(&r));
        if (*r.s == ')')
            r.s++; /* unbalanced: regcomp names it */
    }
    if (r.why)
        return r.why;
    return c > REGEX_COST_MAX ? "too complex (its repetitions expand past 20000 nodes)" : NULL;
}

/* A label (field 0) or tool (field 1) glob that matches no tool would leave
 * its rule dead: a mistyped "workspace.exce" must not turn a gate off. */
static int check_known(const ctx *c, const yaml_node_t *n, const char *key, const char *glob, int field)
{
    int known = field ? harness_tool_glob_known(glob) : harness_label_glob_known(glob);
    if (known < 0)
        return known;
    if (known)
        return 0;
    char msg[400], shown[100], list[200];
    ocisbx_escape_shown(glob, shown, sizeof shown);
    if (field)
        harness_tool_names_text(list, sizeof list);
    else
        harness_labels_text(list, sizeof list);
    snprintf(msg, sizeof msg, "\"%s\" matches no %s (%s)", shown, field ? "tool name" : "action label", list);
    return bad(c, n, key, msg);
}

static int load_rule(const ctx *c, yaml_node_t *n, size_t i, rule *r)
{
    static const char *const keys[] = {"label", "tool", "command", "path", "decision", "reason", NULL};
    char where[48];
    snprintf(where, sizeof where, "rules[%zu]", i);
    int rc = check_keys(c, n, where, keys);
    if (rc)
        return rc;
    char key[80];
    yaml_node_t *v;
#define FIELD(name) (snprintf(key, sizeof key, "%s." name, where), (v = value_of(c, n, name)))
    if (!FIELD("label"))
        return bad(c, n, where, "missing key \"label\" (an action label such as workspace.exec)");
    if ((rc = get_str(c, v, key, &r->label)))
        return rc;
    if ((rc = check_known(c, v, key, r->label, 0)))
        return rc;
    if (!FIELD("decision"))
        return bad(c, n, where, "missing key \"decision\" (allow, deny or hold)");
    if ((rc = get_decision(c, v, key, &r->decision)))
        return rc;
    if (FIELD("tool") && ((rc = get_str(c, v, key, &r->tool)) || (rc = check_known(c, v, key, r->tool, 1))))
        return rc;
    if (FIELD("path") && (rc = get_str(c, v, key, &r->path)))
        return rc;
    if (FIELD("reason") && (rc = get_str(c, v, key, &r->reason)))
        return rc;
    if (FIELD("command")) {
        if ((rc = get_str(c, v, key, &r->command_src)))
            return rc;
        const char *why = regex_too_complex(r->command_src);
        if (why) {
            char msg[300], shown[100];
            ocisbx_escape_shown(r->command_src, shown, sizeof shown);
            snprintf(msg, sizeof msg, "regular expression \"%s\" refused: %s", shown, why);
            return bad(c, v, key, msg);
        }
        int e = regcomp(&r->command, r->command_src, REG_EXTENDED | REG_NOSUB);
        if (e) {
            char err[128], msg[300], shown[100];
            regerror(e, &r->command, err, sizeof err);
            ocisbx_escape_shown(r->command_src, shown, sizeof shown);
            snprintf(msg, sizeof msg, "bad regular expression \"%s\": %s", shown, err);
            return bad(c, v, key, msg);
        }
        r->has_command = true;
    }
#undef FIELD
    return 0;
}

static int load_doc(ctx *c, ocisbx_policy *p)
{
    yaml_node_t *root = yaml_document_get_root_node(c->doc);
    if (!root)
        return ocisbx_fail(OCISBX_ECONFIG, "policy file %s: empty (expected rules: and default:)", c->file);
    static const char *const keys[] = {"rules", "default", NULL};
    int rc = check_keys(c, root, "", keys);
    if (rc)
        return rc;
    yaml_node_t *d = value_of(c, root, "default");
    p->fallback = OCISBX_GATE_ALLOW;
    if (d && (rc = get_decision(c, d, "default", &p->fallback)))
        return rc;
    yaml_node_t *rules = value_of(c, root, "rules");
    if (!rules)
        return 0;
    if (rules->type == YAML_SCALAR_NODE && !scalar(rules)[0])
        return 0; /* "rules:" with nothing */
    if (rules->type != YAML_SEQUENCE_NODE)
        return bad(c, rules, "rules", "expected a list of rules");
    size_t n = (size_t)(rules->data.sequence.items.top - rules->data.sequence.items.start);
    if (n > POLICY_RULES_MAX)
        return bad(c, rules, "rules", "more than 10000 rules");
    p->rules = calloc(n ? n : 1, sizeof *p->rules);
    if (!p->rules)
        return ocisbx_fail_nomem();
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *it = yaml_document_get_node(c->doc, rules->data.sequence.items.start[i]);
        p->n = i + 1; /* so that a failure frees what this rule got */
        if ((rc = load_rule(c, it, i, &p->rules[i])))
            return rc;
    }
    return 0;
}

int ocisbx_policy_load_yaml(const char *yaml, size_t len, const char *name, ocisbx_policy **out)
{
    if (!out || (!yaml && len))
        return ocisbx_fail(OCISBX_EINVAL, "policy: NULL argument");
    *out = NULL;
    ctx c = {0};
    ocisbx_escape_shown(name ? name : "(text)", c.file, sizeof c.file);
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return ocisbx_fail_nomem();
    yaml_parser_set_input_string(&parser, (const unsigned char *)(yaml ? yaml : ""), len);
    if (!yaml_parser_load(&parser, &doc)) {
        int rc = ocisbx_fail(OCISBX_ECONFIG, "policy file %s:%lu: not valid YAML: %s", c.file,
                             (unsigned long)parser.problem_mark.line + 1,
                             parser.problem ? parser.problem : "parse error");
        yaml_parser_delete(&parser);
        return rc;
    }
    c.doc = &doc;
    ocisbx_policy *p = calloc(1, sizeof *p);
    int rc = p ? load_doc(&c, p) : ocisbx_fail_nomem();
    /* a second document is a mistake, not something to ignore */
    if (!rc) {
        yaml_document_t more;
        if (yaml_parser_load(&parser, &more)) {
            if (yaml_document_get_root_node(&more))
                rc = ocisbx_fail(OCISBX_ECONFIG, "policy file %s:%lu: more than one YAML document", c.file,
                                 (unsigned long)yaml_document_get_root_node(&more)->start_mark.line + 1);
            yaml_document_delete(&more);
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (rc) {
        ocisbx_policy_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

#else

int ocisbx_policy_load_yaml(const char *yaml, size_t len, const char *name, ocisbx_policy **out)
{
    (void)yaml;
    (void)len;
    (void)name;
    if (out)
        *out = NULL;
    return ocisbx_fail(OCISBX_EUNSUPPORTED, "policy files need libyaml, which this build of libocisbx lacks");
}

#endif

int ocisbx_policy_load_file(const char *path, ocisbx_policy **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "policy: NULL argument");
    *out = NULL;
    ocisbx_file f;
    int rc = ocisbx_file_read(path, "policy file", POLICY_FILE_MAX, OCISBX_READ_REGULAR, &f);
    if (rc)
        return rc;
    rc = ocisbx_policy_load_yaml(f.data, f.len, path, out);
    ocisbx_file_release(&f);
    return rc;
}
