/* The OCI configuration file (~/.oci/config): INI sections, [DEFAULT]
 * inherited by every profile, '#'/';' comment lines, `key = value`.
 * Strict like the SDKs' reader (Python configparser): duplicate sections or
 * keys are errors rather than silently shadowing each other. Values may be
 * secrets (pass_phrase), so no message ever quotes a line of the file; the
 * names it quotes (file, section, key, profile) are escaped, so that a control
 * byte in them cannot reach a terminal. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ocisbx/auth.h"
#include "auth/credentials_internal.h"
#include "util/internal.h"

#define DEFAULT_PROFILE "DEFAULT"
#define MAX_CONFIG_SIZE (1024 * 1024)
/* Bounds for the duplicate checks (quadratic): far above any real file. */
#define MAX_SECTIONS 10000
#define MAX_KEYS_PER_SECTION 10000

struct entry {
    char *key;   /* lowercased */
    char *value; /* wiped on free: any value may be a secret */
};

struct entries {
    struct entry *v;
    size_t n, cap;
};

struct ocisbx_config {
    char *file;
    char *profile;
    struct entries defaults; /* [DEFAULT] */
    struct entries own;      /* the selected profile (empty when it is DEFAULT) */
};

/* A slice of the input text. */
struct span {
    const char *p;
    size_t n;
};

static void entries_free(struct entries *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].key);
        ocisbx_free_secret(e->v[i].value);
    }
    free(e->v);
    e->v = NULL;
    e->n = e->cap = 0;
}

/* Keys are stored lowercase; a lookup matches them in any case. */
static const char *entries_get(const struct entries *e, const char *key)
{
    for (size_t i = 0; i < e->n; i++)
        if (ocisbx_strcasecmp(e->v[i].key, key) == 0)
            return e->v[i].value;
    return NULL;
}

static int entries_add(struct entries *e, struct span key, struct span value)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 8;
        struct entry *v = realloc(e->v, cap * sizeof *v);
        if (!v)
            return ocisbx_fail_nomem();
        e->v = v;
        e->cap = cap;
    }
    char *k = ocisbx_strndup(key.p, key.n);
    char *val = ocisbx_strndup(value.p, value.n);
    if (!k || !val) {
        free(k);
        ocisbx_free_secret(val);
        return ocisbx_fail_nomem();
    }
    for (char *c = k; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    e->v[e->n].key = k;
    e->v[e->n].value = val;
    e->n++;
    return 0;
}

void ocisbx_config_free(ocisbx_config *cfg)
{
    if (!cfg)
        return;
    entries_free(&cfg->defaults);
    entries_free(&cfg->own);
    free(cfg->file);
    free(cfg->profile);
    free(cfg);
}

const char *ocisbx_config_get(const ocisbx_config *cfg, const char *key)
{
    if (!cfg || !key)
        return NULL;
    const char *v = entries_get(&cfg->own, key);
    return v ? v : entries_get(&cfg->defaults, key);
}

const char *ocisbx_config_file(const ocisbx_config *cfg)
{
    return cfg ? cfg->file : NULL;
}
const char *ocisbx_config_profile(const ocisbx_config *cfg)
{
    return cfg ? cfg->profile : NULL;
}

static int expand_entry(struct entries *e, const char *key)
{
    for (size_t i = 0; i < e->n; i++) {
        if (strcmp(e->v[i].key, key) != 0)
            continue;
        char *x = ocisbx_expand_home(e->v[i].value);
        if (!x)
            return ocisbx_fail_nomem();
        ocisbx_free_secret(e->v[i].value);
        e->v[i].value = x;
    }
    return 0;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static struct span trim(struct span s)
{
    while (s.n && is_space(s.p[0])) {
        s.p++;
        s.n--;
    }
    while (s.n && is_space(s.p[s.n - 1]))
        s.n--;
    return s;
}

static bool span_eq(struct span a, struct span b)
{
    return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

static bool span_eq_nocase(struct span a, struct span b)
{
    return a.n == b.n && ocisbx_strncasecmp(a.p, b.p, a.n) == 0;
}

static bool span_is(struct span a, const char *s)
{
    return a.n == strlen(s) && memcmp(a.p, s, a.n) == 0;
}

/* A name from the file for a message: at most 100 bytes, escaped. */
static const char *span_shown(struct span s, char *out, size_t cap)
{
    char raw[101];
    size_t n = s.n < sizeof raw - 1 ? s.n : sizeof raw - 1;
    memcpy(raw, s.p, n);
    raw[n] = '\0';
    return ocisbx_shown(raw, out, cap);
}
#define SPAN_SHOWN(s) span_shown((s), (char[OCISBX_SHOWN_CAP]){0}, OCISBX_SHOWN_CAP)

/* Names and lines of what has been seen: sections in the file, keys in the
 * current section (for the duplicate checks and the list of profiles). */
struct seen {
    struct span name;
    size_t line;
};
struct seen_list {
    struct seen *v;
    size_t n, cap;
};

static int seen_add(struct seen_list *l, struct span name, size_t line)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct seen *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return ocisbx_fail_nomem();
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].name = name;
    l->v[l->n].line = line;
    l->n++;
    return 0;
}

struct parser {
    const char *name; /* the file name, escaped, for messages */
    const char *profile;
    const char *profile_shown;
    ocisbx_config *cfg;
    struct seen_list sections;
    struct seen_list keys;  /* of the current section */
    struct entries *target; /* where the current section's values go, or NULL */
    bool in_section;
    struct span section;
};

static int parse_section(struct parser *ps, struct span line, size_t lineno)
{
    if (line.n < 2 || line.p[line.n - 1] != ']')
        return ocisbx_fail(OCISBX_ECONFIG, "config file %s:%zu: malformed section header (expected [name])", ps->name,
                           lineno);
    struct span name = trim((struct span){line.p + 1, line.n - 2});
    if (name.n == 0)
        return ocisbx_fail(OCISBX_ECONFIG, "config file %s:%zu: empty section name", ps->name, lineno);
    for (size_t i = 0; i < name.n; i++)
        if (name.p[i] == '[' || name.p[i] == ']')
            return ocisbx_fail(OCISBX_ECONFIG, "config file %s:%zu: malformed section header (expected [name])",
                               ps->name, lineno);
    if (ps->sections.n >= MAX_SECTIONS)
        return ocisbx_fail(OCISBX_ECONFIG, "config file %s:%zu: more than %d sections", ps->name, lineno,
                           MAX_SECTIONS);
    for (size_t i = 0; i < ps->sections.n; i++)
        if (span_eq(ps->sections.v[i].name, name))
            return ocisbx_fail(OCISBX_ECONFIG, "config file %s:%zu: duplicate section [%s] (first at line %zu)",
                               ps->name, lineno, SPAN_SHOWN(name), ps->sections.v[i].line);
    int rc = seen_add(&ps->sections, name, lineno);
    if (rc)
        return rc;
    ps->keys.n = 0;
    ps->in_section = true;
    ps->section = name;
    if (span_is(name, DEFAULT_PROFILE))
        ps->target = &ps->cfg->defaults;
    else if (span_is(name, ps->profile))
        ps->target = &ps->cfg->own;
    else
        ps->target = NULL;
    return 0;
}

static int parse_key_value(struct parser *ps, struct span line, size_t lineno)
{
    const char *eq = memchr(line.p, '=', line.n);
    if (!eq)
        return ocisbx_fail(OCISBX_ECONFIG,
                           "config file %s:%zu: malformed line (expected key = value, [section] or a # or ; comment)",
                           ps->name, lineno);
    struct span key = trim((struct span){line.p, (size_t)(eq - line.p)});
    struct span value = trim((struct span){eq + 1, line.n - (size_t)(eq - line.p) - 1});
    if (key.n == 0)
        return ocisbx_fail(OCISBX_ECONFIG, "config file %s:%zu: malformed line (no key before '=')", ps->name,
                           lineno);
    if (!ps->in_section)
        return ocisbx_fail(OCISBX_ECONFIG, "config file %s:%zu: key '%s' before any [section]", ps->name, lineno,
                           SPAN_SHOWN(key));
    if (ps->keys.n >= MAX_KEYS_PER_SECTION)
        return ocisbx_fail(OCISBX_ECONFIG, "config file %s:%zu: more than %d keys in one section", ps->name, lineno,
                           MAX_KEYS_PER_SECTION);
    for (size_t i = 0; i < ps->keys.n; i++)
        if (span_eq_nocase(ps->keys.v[i].name, key))
            return ocisbx_fail(OCISBX_ECONFIG, "config file %s:%zu: duplicate key '%s' in [%s] (first at line %zu)",
                               ps->name, lineno, SPAN_SHOWN(key), SPAN_SHOWN(ps->section), ps->keys.v[i].line);
    int rc = seen_add(&ps->keys, key, lineno);
    if (rc)
        return rc;
    return ps->target ? entries_add(ps->target, key, value) : 0;
}

static int parse_line(struct parser *ps, struct span raw, size_t lineno)
{
    if (memchr(raw.p, '\0', raw.n))
        return ocisbx_fail(OCISBX_ECONFIG, "config file %s:%zu: malformed line (contains a NUL byte)", ps->name,
                           lineno);
    struct span line = trim(raw);
    if (line.n == 0 || line.p[0] == '#' || line.p[0] == ';')
        return 0;
    if (line.p[0] == '[')
        return parse_section(ps, line, lineno);
    return parse_key_value(ps, line, lineno);
}

static int profile_not_found(const struct parser *ps)
{
    ocisbx_buf b = OCISBX_BUF_INIT;
    for (size_t i = 0; i < ps->sections.n; i++) {
        struct span s = ps->sections.v[i].name;
        if (ocisbx_buf_appendf(&b, "%s%s", i ? ", " : "", SPAN_SHOWN(s))) {
            ocisbx_buf_free(&b);
            return ocisbx_fail_nomem();
        }
    }
    int rc;
    if (ps->sections.n)
        rc = ocisbx_fail(OCISBX_ECONFIG, "config file %s: profile [%s] not found (profiles there: %s)", ps->name,
                         ps->profile_shown, b.data);
    else
        rc = ocisbx_fail(OCISBX_ECONFIG, "config file %s: profile [%s] not found (the file has no profiles)",
                         ps->name, ps->profile_shown);
    ocisbx_buf_free(&b);
    return rc;
}

static int config_parse(const char *text, size_t len, const char *name, const char *profile, ocisbx_config **out,
                        bool *profile_missing)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "config: no output pointer");
    *out = NULL;
    if (!text && len)
        return ocisbx_fail(OCISBX_EINVAL, "config: no text");
    if (!name)
        name = "<memory>";
    if (!profile || !*profile)
        profile = DEFAULT_PROFILE;

    ocisbx_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg)
        return ocisbx_fail_nomem();
    cfg->file = ocisbx_strdup(name);
    cfg->profile = ocisbx_strdup(profile);
    if (!cfg->file || !cfg->profile) {
        ocisbx_config_free(cfg);
        return ocisbx_fail_nomem();
    }
    char name_shown[OCISBX_SHOWN_CAP], profile_shown[OCISBX_SHOWN_CAP];
    struct parser ps = {.name = ocisbx_shown(cfg->file, name_shown, sizeof name_shown),
                        .profile = cfg->profile,
                        .profile_shown = ocisbx_shown(cfg->profile, profile_shown, sizeof profile_shown),
                        .cfg = cfg};
    int rc = 0;
    size_t lineno = 0, pos = 0;
    /* a UTF-8 byte order mark, as some Windows editors write */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        pos = 3;
    while (rc == 0 && pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        rc = parse_line(&ps, (struct span){text + pos, end - pos}, ++lineno);
        pos = end + 1;
    }
    if (rc == 0) {
        bool found = false;
        for (size_t i = 0; i < ps.sections.n && !found; i++)
            found = span_is(ps.sections.v[i].name, profile);
        if (!found) {
            rc = profile_not_found(&ps);
            if (profile_missing)
                *profile_missing = true;
        }
    }
    if (rc == 0)
        rc = expand_entry(&cfg->defaults, "key_file");
    if (rc == 0)
        rc = expand_entry(&cfg->defaults, "security_token_file");
    if (rc == 0)
        rc = expand_entry(&cfg->own, "key_file");
    if (rc == 0)
        rc = expand_entry(&cfg->own, "security_token_file");
    free(ps.sections.v);
    free(ps.keys.v);
    if (rc) {
        ocisbx_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

int ocisbx_config_parse(const char *text, size_t len, const char *name, const char *profile, ocisbx_config **out)
{
    return config_parse(text, len, name, profile, out, NULL);
}

int ocisbx_config_load_checked(const char *path, const char *profile, ocisbx_config **out, bool *profile_missing)
{
    if (profile_missing)
        *profile_missing = false;
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "config: no output pointer");
    *out = NULL;
    if (!path || !*path) {
        path = ocisbx_env_first(ocisbx_config_file_vars, NULL);
        if (!path)
            path = OCISBX_CONFIG_FILE_DEFAULT;
    }
    char *full = ocisbx_expand_home(path);
    if (!full)
        return ocisbx_fail_nomem();
    /* the whole file, wiped after (it may hold pass_phrase); a FIFO or a
     * device is refused without waiting for a writer */
    ocisbx_file f;
    int rc = ocisbx_file_read(full, "config file", MAX_CONFIG_SIZE, OCISBX_READ_SECRET | OCISBX_READ_REGULAR | OCISBX_READ_CONFIG, &f);
    if (rc == 0)
        rc = config_parse(f.data, f.len, full, profile, out, profile_missing);
    ocisbx_file_release(&f);
    free(full);
    return rc;
}

int ocisbx_config_load(const char *path, const char *profile, ocisbx_config **out)
{
    return ocisbx_config_load_checked(path, profile, out, NULL);
}
