/* The one resolver of the client settings (include/ocisbx/settings.h):
 * explicit > environment > config file > default, the choice of signer, and
 * the client built from the result. The backend, the CLI (doctor too), the
 * examples and the bindings all come here. */
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "api/client_internal.h"
#include "auth/credentials_internal.h"
#include "api/settings_internal.h"
#include "ocisbx/settings.h"
#include "util/internal.h"

typedef struct slot {
    char *given; /* explicit */
    char *def;   /* the program's default */
    char *value; /* resolved */
    char *origin;
    ocisbx_setting_source src;
} slot;

struct ocisbx_settings {
    slot *v;
    ocisbx_config *cfg;
    ocisbx_credentials *creds;
    slot none; /* what the resolver's own names give if the table lost one: nothing */
    bool resolved;
    int rc; /* of the last resolve; its message in msg */
    char *msg;
};

static slot *slot_of(const ocisbx_settings *s, const char *name)
{
    const ocisbx_setting *row = ocisbx_setting_by_name(name);
    return s && row ? &s->v[ocisbx_setting_index(row)] : NULL;
}

/* A row the resolver itself names (always in the table). */
static slot *named(ocisbx_settings *s, const char *name)
{
    slot *sl = slot_of(s, name);
    return sl ? sl : &s->none;
}

int ocisbx_settings_new(ocisbx_settings **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "settings: out is NULL");
    *out = NULL;
    ocisbx_settings *s = calloc(1, sizeof *s);
    if (!s || !(s->v = calloc(ocisbx_setting_count(), sizeof *s->v))) {
        free(s);
        return ocisbx_fail_nomem();
    }
    *out = s;
    return 0;
}

static void clear_resolved(ocisbx_settings *s)
{
    for (size_t i = 0; i < ocisbx_setting_count(); i++) {
        free(s->v[i].value);
        free(s->v[i].origin);
        s->v[i].value = s->v[i].origin = NULL;
        s->v[i].src = OCISBX_SETTING_UNSET;
    }
    ocisbx_config_free(s->cfg);
    ocisbx_credentials_free(s->creds);
    free(s->msg);
    s->cfg = NULL;
    s->creds = NULL;
    s->msg = NULL;
    s->rc = 0;
    s->resolved = false;
}

void ocisbx_settings_free(ocisbx_settings *s)
{
    if (!s)
        return;
    clear_resolved(s);
    for (size_t i = 0; i < ocisbx_setting_count(); i++) {
        free(s->v[i].given);
        free(s->v[i].def);
    }
    free(s->v);
    free(s);
}

static bool auth_known(const char *a)
{
    static const char *const kinds[] = {OCISBX_AUTH_API_KEY, OCISBX_AUTH_SECURITY_TOKEN, OCISBX_AUTH_INSTANCE_PRINCIPAL,
                                        OCISBX_AUTH_RESOURCE_PRINCIPAL, NULL};
    for (const char *const *k = kinds; *k; k++)
        if (strcmp(*k, a) == 0)
            return true;
    return false;
}
#define AUTH_KINDS "api_key, security_token, instance_principal, resource_principal"

static int set_field(ocisbx_settings *s, const char *name, const char *value, bool def)
{
    slot *sl = slot_of(s, name);
    if (!sl)
        return ocisbx_fail(OCISBX_EINVAL, "settings: no setting named %s", name ? OCISBX_SHOWN(name) : "NULL");
    if (value && *value && strcmp(name, "auth") == 0 && !auth_known(value))
        return ocisbx_fail(OCISBX_EINVAL, "%s %s: not one of " AUTH_KINDS, def ? "default auth" : "--auth",
                           OCISBX_SHOWN(value));
    int64_t ms = 0;
    int bad =
        value && *value && strcmp(name, "poll_interval") == 0 ? ocisbx_setting_poll_interval_ms(value, &ms, NULL) : 0;
    if (bad)
        return bad;
    char *n = NULL;
    if (value && *value && !(n = ocisbx_strdup(value)))
        return ocisbx_fail_nomem();
    char **dst = def ? &sl->def : &sl->given;
    free(*dst);
    *dst = n;
    s->resolved = false;
    return 0;
}

int ocisbx_settings_set(ocisbx_settings *s, const char *name, const char *value)
{
    return set_field(s, name, value, false);
}

int ocisbx_settings_set_default(ocisbx_settings *s, const char *name, const char *value)
{
    return set_field(s, name, value, true);
}

static int put(slot *sl, const char *value, ocisbx_setting_source src, const char *origin)
{
    char *v = ocisbx_strdup(value), *o = ocisbx_strdup(origin);
    if (!v || !o) {
        free(v);
        free(o);
        return ocisbx_fail_nomem();
    }
    free(sl->value);
    free(sl->origin);
    sl->value = v;
    sl->origin = o;
    sl->src = src;
    return 0;
}

/* Explicit, then the variables: every row. */
static int resolve_given_env(ocisbx_settings *s)
{
    int rc = 0;
    for (const ocisbx_setting *row = ocisbx_setting_next(NULL); row && !rc; row = ocisbx_setting_next(row)) {
        slot *sl = &s->v[ocisbx_setting_index(row)];
        const char *which = NULL, *e = NULL;
        if (sl->given)
            rc = put(sl, sl->given, OCISBX_SETTING_OPTION, row->option);
        else if ((e = ocisbx_setting_env(row, &which)) != NULL)
            rc = put(sl, e, OCISBX_SETTING_ENV, which);
    }
    if (rc)
        return rc;
    slot *auth = named(s, "auth");
    if (auth->src == OCISBX_SETTING_ENV && !auth_known(auth->value))
        return ocisbx_fail(OCISBX_ECONFIG, "%s=%s: not one of " AUTH_KINDS, auth->origin, OCISBX_SHOWN(auth->value));
    return 0;
}

/* What is still unset: the program's default, else the table's. */
static int resolve_default(ocisbx_settings *s, const ocisbx_setting *row)
{
    if (!row)
        return 0;
    slot *sl = &s->v[ocisbx_setting_index(row)];
    const char *d = sl->def ? sl->def : row->default_value;
    return sl->src == OCISBX_SETTING_UNSET && d ? put(sl, d, OCISBX_SETTING_DEFAULT, "default") : 0;
}

static bool is_principal(const char *auth)
{
    return auth &&
           (strcmp(auth, OCISBX_AUTH_INSTANCE_PRINCIPAL) == 0 || strcmp(auth, OCISBX_AUTH_RESOURCE_PRINCIPAL) == 0);
}

/* The file's values for what is still unset; the signer from the profile. */
static int apply_file(ocisbx_settings *s)
{
    char *where = ocisbx_asprintf("%s [%s]", ocisbx_config_file(s->cfg), ocisbx_config_profile(s->cfg));
    int rc = where ? 0 : ocisbx_fail_nomem();
    for (const ocisbx_setting *row = ocisbx_setting_next(NULL); row && !rc; row = ocisbx_setting_next(row)) {
        slot *sl = &s->v[ocisbx_setting_index(row)];
        if (sl->src != OCISBX_SETTING_UNSET || !row->config_key)
            continue;
        const char *v = ocisbx_config_get(s->cfg, row->config_key);
        if (!v || !*v)
            continue;
        if (strcmp(row->name, "auth") == 0) { /* a session-token profile (oci session authenticate) */
            char *o = ocisbx_asprintf("%s: security_token_file", where);
            rc = o ? put(sl, OCISBX_AUTH_SECURITY_TOKEN, OCISBX_SETTING_FILE, o) : ocisbx_fail_nomem();
            free(o);
        } else {
            rc = put(sl, v, OCISBX_SETTING_FILE, where);
        }
    }
    free(where);
    return rc;
}

/* Loads the config file and profile; a failure names where the profile
 * and the file came from when a variable chose them. */
static int load_file(ocisbx_settings *s)
{
    slot *file = named(s, "config_file"), *profile = named(s, "profile");
    bool about_profile = false;
    int rc = ocisbx_config_load_checked(file->value, profile->value, &s->cfg, &about_profile);
    if (!rc)
        return 0;
    /* a missing profile is the fault of whoever named the profile, not of
     * the variable that named the file */
    if (profile->src == OCISBX_SETTING_ENV)
        ocisbx_error_wrap("%s=%s: ", profile->origin, OCISBX_SHOWN(profile->value));
    else if (profile->src == OCISBX_SETTING_OPTION && about_profile)
        ocisbx_error_wrap("option %s=%s: ", profile->origin, OCISBX_SHOWN(profile->value));
    else if (file->src == OCISBX_SETTING_ENV)
        ocisbx_error_wrap("%s: ", file->origin);
    return rc;
}

/* No endpoint given: the region's, when the region resolves. */
static int derive_endpoint(ocisbx_settings *s)
{
    slot *ep = named(s, "endpoint"), *region = named(s, "region");
    if (ep->src != OCISBX_SETTING_UNSET) {
        size_t n = strlen(ep->value);
        while (n > 0 && ep->value[n - 1] == '/')
            ep->value[--n] = '\0';
        return 0;
    }
    if (region->src == OCISBX_SETTING_UNSET)
        return 0;
    char *url = NULL;
    ocisbx_error_saved *sv = ocisbx_error_save();
    int rc = ocisbx_endpoint_for_region(region->value, &url);
    ocisbx_error_restore(sv); /* a bad region is the client's error to report */
    if (rc)
        return rc == OCISBX_ENOMEM ? rc : 0;
    char *o = ocisbx_asprintf("the region (%s)", region->origin);
    rc = o ? put(ep, url, region->src, o) : ocisbx_fail_nomem();
    free(o);
    ocisbx_free(url);
    return rc;
}

static int resolve_steps(ocisbx_settings *s)
{
    int rc = resolve_given_env(s);
    if (!rc)
        rc = resolve_default(s, ocisbx_setting_by_name("config_file"));
    if (!rc) {
        slot *file = named(s, "config_file");
        char *full = ocisbx_expand_home(file->value);
        if (!full)
            return ocisbx_fail_nomem();
        free(file->value);
        file->value = full;
        rc = resolve_default(s, ocisbx_setting_by_name("profile"));
    }
    int file_rc = 0;
    if (!rc && !is_principal(named(s, "auth")->value)) {
        file_rc = load_file(s);
        if (!file_rc)
            rc = apply_file(s);
    }
    for (const ocisbx_setting *row = ocisbx_setting_next(NULL); row && !rc; row = ocisbx_setting_next(row))
        rc = resolve_default(s, row);
    if (!rc)
        rc = derive_endpoint(s);
    return rc ? rc : file_rc;
}

int ocisbx_settings_resolve(ocisbx_settings *s)
{
    if (!s)
        return ocisbx_fail(OCISBX_EINVAL, "settings: NULL");
    clear_resolved(s);
    int rc = resolve_steps(s);
    s->resolved = true;
    s->rc = rc;
    if (rc && !(s->msg = ocisbx_strdup(ocisbx_error_message(ocisbx_error_last()))))
        return ocisbx_fail_nomem();
    return rc;
}

/* Resolved, or the error of the resolve, again. */
static int ensure(ocisbx_settings *s)
{
    if (!s)
        return ocisbx_fail(OCISBX_EINVAL, "settings: NULL");
    if (!s->resolved)
        return ocisbx_settings_resolve(s);
    return s->rc ? ocisbx_fail(s->rc, "%s", s->msg ? s->msg : "settings: not resolved") : 0;
}

const char *ocisbx_settings_get(const ocisbx_settings *s, const char *name)
{
    const slot *sl = slot_of(s, name);
    return sl ? sl->value : NULL;
}

ocisbx_setting_source ocisbx_settings_source(const ocisbx_settings *s, const char *name)
{
    const slot *sl = slot_of(s, name);
    return sl ? sl->src : OCISBX_SETTING_UNSET;
}

const char *ocisbx_settings_origin(const ocisbx_settings *s, const char *name)
{
    const slot *sl = slot_of(s, name);
    return sl && sl->origin ? sl->origin : "not set";
}

const ocisbx_config *ocisbx_settings_config(const ocisbx_settings *s)
{
    return s ? s->cfg : NULL;
}

int ocisbx_settings_credentials(ocisbx_settings *s, ocisbx_credentials **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "settings credentials: out is NULL");
    *out = NULL;
    int rc = ensure(s);
    if (rc)
        return rc;
    if (!s->creds && (rc = ocisbx_credentials_new(ocisbx_settings_get(s, "auth"), s->cfg, &s->creds)) != 0)
        return rc;
    *out = ocisbx_credentials_ref(s->creds);
    return 0;
}

/* The resolved values over a copy of base. */
static int client_options(ocisbx_settings *s, ocisbx_client_options *o)
{
    ocisbx_credentials *creds = NULL;
    int rc = ocisbx_settings_credentials(s, &creds);
    if (!rc)
        rc = ocisbx_client_options_set_credentials(o, creds);
    ocisbx_credentials_free(creds);
    const char *ep = ocisbx_settings_get(s, "endpoint");
    if (!rc && ep)
        rc = ocisbx_client_options_set_endpoint(o, ep);
    else if (!rc && ocisbx_settings_get(s, "region"))
        rc = ocisbx_client_options_set_region(o, ocisbx_settings_get(s, "region"));
    if (!rc)
        rc = ocisbx_client_options_set_api_version(o, ocisbx_settings_get(s, "api_version"));
    const char *ca = ocisbx_settings_get(s, "ca_bundle");
    if (!rc && ca)
        rc = ocisbx_http_options_set_ca_bundle(&o->http, ca);
    /* plain http to a loopback host only (a local test tenancy) */
    if (!rc && ep && strncmp(ep, "http://", 7) == 0 && ocisbx_url_host_is_loopback(ep))
        rc = ocisbx_http_options_set_allow_plain_http(&o->http, 1);
    return rc;
}

int ocisbx_settings_client_new(ocisbx_settings *s, const ocisbx_client_options *base, ocisbx_client **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "settings client: out is NULL");
    *out = NULL;
    int rc = ensure(s);
    if (rc)
        return rc;
    ocisbx_client_options *o = NULL;
    rc = ocisbx_client_options_clone(base, &o);
    if (!rc)
        rc = client_options(s, o);
    if (!rc)
        rc = ocisbx_client_new(o, out);
    ocisbx_client_options_free(o);
    return rc;
}
