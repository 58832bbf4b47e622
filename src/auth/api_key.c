/* The API-key credential provider: keyId "<tenancy>/<user>/<fingerprint>"
 * and a private key that never changes, so get() only hands out copies. */
#include <stdlib.h>
#include <string.h>

#include "auth/credentials_internal.h"
#include "util/internal.h"

struct api_key_creds {
    struct ocisbx_credentials base; /* first: the common part */
    char *key_id;
    ocisbx_key *key;
};

static int api_key_get(struct ocisbx_credentials *c, char **key_id, ocisbx_key **key)
{
    struct api_key_creds *a = (struct api_key_creds *)c;
    char *id = ocisbx_strdup(a->key_id);
    if (!id)
        return ocisbx_fail_nomem();
    *key_id = id;
    *key = ocisbx_key_ref(a->key);
    return 0;
}

static void api_key_destroy(struct ocisbx_credentials *c)
{
    struct api_key_creds *a = (struct api_key_creds *)c;
    free(a->key_id);
    a->key_id = NULL;
    ocisbx_key_free(a->key);
    a->key = NULL;
}

static const struct ocisbx_credentials_vt api_key_vt = {
    .kind = OCISBX_AUTH_API_KEY,
    .get = api_key_get,
    .refresh = NULL,
    .destroy = api_key_destroy,
};

static bool ocid_char(char ch, bool dash_ok)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (dash_ok && (ch == '-' || ch == '_'));
}

/* ocid1.<type>.<realm>.[region][.future].<unique>: at least five dot-separated
 * parts, the region and future parts may be empty ("ocid1.user.oc1..aaa"). */
static bool is_ocid_of_type(const char *s, const char *type)
{
    size_t tl = strlen(type);
    if (strncmp(s, "ocid1.", 6) != 0 || strncmp(s + 6, type, tl) != 0 || s[6 + tl] != '.')
        return false;
    const char *p = s + 6 + tl + 1;
    /* realm: non-empty */
    const char *realm = p;
    while (ocid_char(*p, false))
        p++;
    if (p == realm || *p != '.')
        return false;
    p++;
    /* the remaining parts: region, future use, unique; only the last must be
     * non-empty, and there must be at least two of them */
    size_t parts = 1;
    const char *part = p;
    for (;; p++) {
        if (*p == '.') {
            parts++;
            part = p + 1;
        } else if (*p == '\0') {
            break;
        } else if (!ocid_char(*p, true)) {
            return false;
        }
    }
    return parts >= 2 && *part != '\0';
}

static int check_ocid(const char *value, const char *key, const char *type)
{
    if (is_ocid_of_type(value, type))
        return 0;
    return ocisbx_fail(OCISBX_ECONFIG,
                       "key '%s' is not a %s OCID (expected ocid1.%s.<realm>..<unique>, got '%.100s')", key, type,
                       type, OCISBX_SHOWN(value));
}

/* ^([0-9a-f]{2}:){15}[0-9a-f]{2}$ */
static bool is_fingerprint(const char *s)
{
    if (strlen(s) != 47)
        return false;
    for (size_t i = 0; i < 47; i++) {
        char ch = s[i];
        if (i % 3 == 2) {
            if (ch != ':')
                return false;
        } else if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) {
            return false;
        }
    }
    return true;
}

/* The checks that need no key file. */
static int check_values(const char *tenancy, const char *user, const char *fingerprint)
{
    int rc = check_ocid(tenancy, "tenancy", "tenancy");
    if (rc == 0)
        rc = check_ocid(user, "user", "user");
    if (rc)
        return rc;
    if (!is_fingerprint(fingerprint))
        return ocisbx_fail(OCISBX_ECONFIG,
                           "key 'fingerprint' is malformed (expected 16 lowercase hex pairs joined by ':', "
                           "got '%.100s')",
                           OCISBX_SHOWN(fingerprint));
    return 0;
}

/* Checks the values and builds the provider. key_file (may be NULL) names the
 * key in a fingerprint-mismatch message. Takes a new reference to key. */
static int build(const char *tenancy, const char *user, const char *fingerprint, ocisbx_key *key,
                 const char *key_file, ocisbx_credentials **out)
{
    int rc = check_values(tenancy, user, fingerprint);
    if (rc)
        return rc;
    char actual[48];
    rc = ocisbx_key_fingerprint(key, actual);
    if (rc)
        return rc;
    if (strcmp(actual, fingerprint) != 0) {
        if (key_file)
            return ocisbx_fail(OCISBX_ECONFIG,
                               "key 'fingerprint' %s does not match the key in %s (its fingerprint is %s)",
                               fingerprint, OCISBX_SHOWN(key_file), actual);
        return ocisbx_fail(OCISBX_ECONFIG, "fingerprint %s does not match the key (its fingerprint is %s)",
                           fingerprint, actual);
    }
    struct api_key_creds *a = calloc(1, sizeof *a);
    if (!a)
        return ocisbx_fail_nomem();
    a->key_id = ocisbx_asprintf("%s/%s/%s", tenancy, user, fingerprint);
    if (!a->key_id) {
        free(a);
        return ocisbx_fail_nomem();
    }
    rc = ocisbx_credentials_init(&a->base, &api_key_vt);
    if (rc) {
        free(a->key_id);
        free(a);
        return rc;
    }
    a->key = ocisbx_key_ref(key);
    *out = &a->base;
    return 0;
}

int ocisbx_credentials_api_key(const char *tenancy, const char *user, const char *fingerprint, ocisbx_key *key,
                               ocisbx_credentials **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "API key credentials: no output pointer");
    *out = NULL;
    if (!tenancy || !user || !fingerprint || !key)
        return ocisbx_fail(OCISBX_EINVAL, "API key credentials: tenancy, user, fingerprint and key are required");
    int rc = build(tenancy, user, fingerprint, key, NULL, out);
    return rc ? ocisbx_error_wrap("API key credentials: ") : 0;
}

static int missing_keys(const ocisbx_config *cfg, const char *const *keys, size_t n)
{
    ocisbx_buf b = OCISBX_BUF_INIT;
    size_t missing = 0;
    for (size_t i = 0; i < n; i++) {
        const char *v = ocisbx_config_get(cfg, keys[i]);
        if (v && *v)
            continue;
        if (ocisbx_buf_appendf(&b, "%s'%s'", missing ? ", " : "", keys[i])) {
            ocisbx_buf_free(&b);
            return ocisbx_fail_nomem();
        }
        missing++;
    }
    int rc = 0;
    if (missing)
        rc = ocisbx_fail(OCISBX_ECONFIG, "config file %s, profile [%s]: missing key%s %s (needed for %s)",
                         OCISBX_SHOWN(ocisbx_config_file(cfg)), OCISBX_SHOWN(ocisbx_config_profile(cfg)),
                         missing > 1 ? "s" : "", b.data, OCISBX_AUTH_API_KEY);
    ocisbx_buf_free(&b);
    return rc;
}

int ocisbx_credentials_api_key_from_config(const ocisbx_config *cfg, ocisbx_credentials **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "API key credentials: no output pointer");
    *out = NULL;
    if (!cfg)
        return ocisbx_fail(OCISBX_EINVAL, "API key credentials: no config");
    static const char *const required[] = {"tenancy", "user", "fingerprint", "key_file"};
    int rc = missing_keys(cfg, required, sizeof required / sizeof required[0]);
    if (rc)
        return rc;
    const char *file = ocisbx_config_file(cfg), *profile = ocisbx_config_profile(cfg);
    const char *key_file = ocisbx_config_get(cfg, "key_file");

    /* The region is optional (the caller may give an endpoint), but when
     * present it must make sense. */
    char *region = NULL;
    const char *region_value = ocisbx_config_get(cfg, "region");
    if (region_value && *region_value) {
        rc = ocisbx_region_resolve(region_value, &region);
        if (rc)
            return ocisbx_error_wrap("config file %s, profile [%s], key 'region': ", OCISBX_SHOWN(file),
                                     OCISBX_SHOWN(profile));
    }

    /* Cheap value checks first, so a typo is reported without touching the key. */
    rc = check_values(ocisbx_config_get(cfg, "tenancy"), ocisbx_config_get(cfg, "user"),
                      ocisbx_config_get(cfg, "fingerprint"));
    if (rc) {
        free(region);
        return ocisbx_error_wrap("config file %s, profile [%s]: ", OCISBX_SHOWN(file), OCISBX_SHOWN(profile));
    }

    ocisbx_key *key = NULL;
    const char *pass = ocisbx_config_get(cfg, "pass_phrase");
    rc = ocisbx_key_load_file(key_file, pass && *pass ? pass : NULL, &key);
    if (rc) {
        free(region);
        return ocisbx_error_wrap("config file %s, profile [%s], key 'key_file': ", OCISBX_SHOWN(file),
                                 OCISBX_SHOWN(profile));
    }
    rc = build(ocisbx_config_get(cfg, "tenancy"), ocisbx_config_get(cfg, "user"),
               ocisbx_config_get(cfg, "fingerprint"), key, key_file, out);
    ocisbx_key_free(key);
    if (rc) {
        free(region);
        return ocisbx_error_wrap("config file %s, profile [%s]: ", OCISBX_SHOWN(file), OCISBX_SHOWN(profile));
    }
    (*out)->region = region;
    return 0;
}
