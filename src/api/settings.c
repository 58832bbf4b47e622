/* The settings table: every setting the library, the CLI, the examples and
 * the bindings share, written once (include/ocisbx/settings.h). The CLI's
 * --help and docs/settings.md come from it; the one lookup of a variable
 * is here (through util's ocisbx_env_first). */
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "api/settings_internal.h"
#include "ocisbx/settings.h"
#include "util/internal.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static const char *const env_profile[] = {"OCI_SANDBOX_PROFILE", "OCI_CLI_PROFILE", NULL};
static const char *const env_auth[] = {"OCI_SANDBOX_AUTH", "OCI_CLI_AUTH", NULL};
static const char *const env_region[] = {"OCI_SANDBOX_REGION", "OCI_CLI_REGION", NULL};
static const char *const env_endpoint[] = {"OCI_SANDBOX_ENDPOINT", NULL};
static const char *const env_api_version[] = {"OCI_SANDBOX_API_VERSION", NULL};
static const char *const env_ca_bundle[] = {"OCI_SANDBOX_CA_BUNDLE", "OCI_CLI_CERT_BUNDLE", NULL};
static const char *const env_project[] = {"OCI_SANDBOX_PROJECT_ID", NULL};
static const char *const env_runtime[] = {"OCI_SANDBOX_RUNTIME", NULL};
static const char *const env_shape[] = {"OCI_SANDBOX_SHAPE", NULL};
static const char *const env_expiration[] = {"OCI_SANDBOX_EXPIRATION", NULL};
static const char *const env_ready[] = {"OCI_SANDBOX_READY_TIMEOUT", NULL};
static const char *const env_stop[] = {"OCI_SANDBOX_STOP_TIMEOUT", NULL};
static const char *const env_poll[] = {"OCI_SANDBOX_POLL_INTERVAL", NULL};

#define C OCISBX_SETTING_CLIENT
#define S OCISBX_SETTING_SANDBOX
static const ocisbx_setting table[] = {
    {"config_file", "--config-file", ocisbx_config_file_vars, NULL, OCISBX_CONFIG_FILE_DEFAULT, "FILE",
     "the OCI config file", C},
    {"profile", "--profile", env_profile, NULL, "DEFAULT", "NAME", "the profile of the config file", C},
    {"auth", "--auth", env_auth, "security_token_file", OCISBX_AUTH_API_KEY, "KIND",
     "api_key|security_token|instance_principal|resource_principal; security_token for a profile with "
     "security_token_file",
     C},
    {"region", "--region", env_region, "region", NULL, "REGION", "the region, by name or short code like ord", C},
    {"endpoint", "--endpoint", env_endpoint, NULL, NULL, "URL", "the service's base URL; by default the region's", C},
    {"api_version", "--api-version", env_api_version, NULL, OCISBX_DEFAULT_API_VERSION, "V",
     "the API version path segment", C},
    {"ca_bundle", "--ca-bundle", env_ca_bundle, NULL, NULL, "FILE",
     "a PEM CA bundle for https; by default the system's", C},
    {"project_id", "--project-id", env_project, NULL, NULL, "OCID", "the project sandboxes are created in", S},
    {"runtime", "--runtime", env_runtime, NULL, OCISBX_DEFAULT_RUNTIME, "NAME", "the runtime of a created sandbox",
     S},
    {"shape", "--shape", env_shape, NULL, OCISBX_DEFAULT_SHAPE, "NAME",
     "SMALL|MEDIUM|LARGE: a created sandbox's shape", S},
    {"expiration", "--expiration", env_expiration, NULL, OCISBX_DEFAULT_EXPIRATION, "DURATION",
     "a created sandbox's lifetime (ISO 8601, at most PT48H)", S},
    {"ready_timeout", "--ready-timeout", env_ready, NULL, STR(OCISBX_DEFAULT_READY_TIMEOUT_S), "SECONDS",
     "how long a create waits for RUNNING", S},
    {"stop_timeout", "--stop-timeout", env_stop, NULL, STR(OCISBX_DEFAULT_STOP_TIMEOUT_S), "SECONDS",
     "how long a close waits for STOPPED before it deletes", S},
    {"poll_interval", "--poll-interval", env_poll, NULL, STR(OCISBX_DEFAULT_POLL_INTERVAL_S), "SECONDS",
     "seconds between state checks while waiting (0.01 to 3600)", S},
};
#undef C
#undef S
#define N_SETTINGS (sizeof table / sizeof table[0])

size_t ocisbx_setting_count(void)
{
    return N_SETTINGS;
}

size_t ocisbx_setting_index(const ocisbx_setting *row)
{
    return (size_t)(row - table);
}

const ocisbx_setting *ocisbx_setting_next(const ocisbx_setting *prev)
{
    if (!prev)
        return table;
    if (prev < table || prev >= table + N_SETTINGS - 1)
        return NULL;
    return prev + 1;
}

const ocisbx_setting *ocisbx_setting_by_name(const char *name)
{
    for (size_t i = 0; name && i < N_SETTINGS; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

const char *ocisbx_setting_variables(const char *name, char *buf, size_t size)
{
    const ocisbx_setting *row = ocisbx_setting_by_name(name);
    size_t n = 0;
    if (size)
        buf[0] = '\0';
    for (const char *const *e = row ? row->env : NULL; e && *e && n < size; e++) {
        int k = snprintf(buf + n, size - n, "%s%s", n ? " or " : "", *e);
        n = k < 0 ? size : n + (size_t)k;
    }
    return buf;
}

const char *ocisbx_setting_env(const ocisbx_setting *row, const char **which)
{
    return ocisbx_env_first(row->env, which);
}

const char *ocisbx_setting_lookup(const char *name, const char *given, ocisbx_setting_source *source,
                                  const char **which)
{
    if (source)
        *source = OCISBX_SETTING_UNSET;
    if (which)
        *which = NULL;
    const ocisbx_setting *row = ocisbx_setting_by_name(name);
    if (!row)
        return NULL;
    const char *v = given && *given ? given : NULL;
    ocisbx_setting_source src = OCISBX_SETTING_OPTION;
    if (!v) {
        v = ocisbx_setting_env(row, which);
        src = OCISBX_SETTING_ENV;
    }
    if (!v) {
        v = row->default_value;
        src = OCISBX_SETTING_DEFAULT;
    }
    if (source)
        *source = v ? src : OCISBX_SETTING_UNSET;
    return v;
}

/* Decimal seconds ("2", "0.1", "1.5") to milliseconds, rounded down;
 * *over is set when digits beyond the millisecond are not all zero. */
static int seconds_ms(const char *v, int64_t *ms, bool *over)
{
    int64_t whole = 0, frac = 0;
    int digits = 0, fdigits = 0;
    const char *p = v;
    *over = false;
    for (; *p >= '0' && *p <= '9'; p++, digits++)
        if ((whole = whole * 10 + (*p - '0')) > OCISBX_POLL_INTERVAL_MAX_MS)
            return -1;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, fdigits++) {
            if (fdigits < 3)
                frac = frac * 10 + (*p - '0');
            else if (*p != '0')
                *over = true;
        }
    if (*p || digits + fdigits == 0)
        return -1;
    for (int i = fdigits; i < 3; i++)
        frac *= 10;
    *ms = whole * 1000 + frac;
    return 0;
}

int ocisbx_setting_poll_interval_ms(const char *given, int64_t *ms, ocisbx_setting_source *source)
{
    ocisbx_setting_source src = OCISBX_SETTING_UNSET;
    const char *which = NULL;
    const char *v = ocisbx_setting_lookup("poll_interval", given, &src, &which);
    if (source)
        *source = src;
    int64_t n = 0;
    bool over = false;
    if (!v || seconds_ms(v, &n, &over) != 0 || n < OCISBX_POLL_INTERVAL_MIN_MS || n > OCISBX_POLL_INTERVAL_MAX_MS ||
        (over && n == OCISBX_POLL_INTERVAL_MAX_MS)) {
        bool env = src == OCISBX_SETTING_ENV;
        return ocisbx_fail(env ? OCISBX_ECONFIG : OCISBX_EINVAL, "%s %s: not a number of seconds from 0.01 to 3600",
                           env && which                   ? which
                           : src == OCISBX_SETTING_OPTION ? "--poll-interval"
                                                          : "poll_interval",
                           v ? OCISBX_SHOWN(v) : "(none)");
    }
    *ms = n;
    return 0;
}

const char *ocisbx_setting_source_name(ocisbx_setting_source source)
{
    switch (source) {
    case OCISBX_SETTING_OPTION: return "option";
    case OCISBX_SETTING_ENV: return "environment";
    case OCISBX_SETTING_FILE: return "config file";
    case OCISBX_SETTING_DEFAULT: return "default";
    case OCISBX_SETTING_UNSET: break;
    }
    return "unset";
}
