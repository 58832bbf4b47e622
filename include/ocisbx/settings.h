/** @file
 * libocisbx api layer: the client settings, one table and one resolver.
 *
 * - One table lists every setting the library, the CLI, the examples and
 *   the bindings share: its name, the CLI option, the environment variables
 *   (the library's OCI_SANDBOX_* first, then the OCI CLI's where it has
 *   one: the first that is set and not empty wins), the key in the config
 *   file's profile, the default and one line of help. A program walks it
 *   with ocisbx_setting_next (as curl's curl_easy_option_next); the CLI's
 *   --help and docs/settings.md come from it.
 * - One resolver (ocisbx_settings) takes explicit values (a flag, an
 *   option) and a program's own defaults, and resolves each setting in the
 *   OCI CLI's precedence: explicit > environment > config file > default.
 *   It also chooses the signer: a profile with security_token_file is a
 *   session-token profile unless auth says otherwise. It then builds the
 *   credentials and the REST client, and says where each value came from.
 * - Empty values count as unset everywhere (a variable set to "", a flag
 *   given as ""). */
#ifndef OCISBX_SETTINGS_H
#define OCISBX_SETTINGS_H

#include "common.h"
#include "auth.h"
#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The runtime of a created sandbox when none is set. */
#define OCISBX_DEFAULT_RUNTIME "python-3.11"
/** The shape of a created sandbox when none is set. */
#define OCISBX_DEFAULT_SHAPE "SMALL"
/** The lifetime of a created sandbox when none is set (ISO 8601). */
#define OCISBX_DEFAULT_EXPIRATION "PT1H"
/** How long a create waits for RUNNING when no timeout is set (seconds). */
#define OCISBX_DEFAULT_READY_TIMEOUT_S 300
/** How long a close waits for STOPPED when no timeout is set (seconds). */
#define OCISBX_DEFAULT_STOP_TIMEOUT_S 60
/** How often a wait asks for a state when no interval is set (seconds):
 * a create waiting for RUNNING, a close for STOPPED, the API's waits. */
#define OCISBX_DEFAULT_POLL_INTERVAL_S 2
/** The shortest poll_interval accepted (milliseconds: 0.01 s). */
#define OCISBX_POLL_INTERVAL_MIN_MS 10
/** The longest poll_interval accepted (milliseconds: 3600 s). */
#define OCISBX_POLL_INTERVAL_MAX_MS 3600000

/** Where a resolved value came from. */
typedef enum ocisbx_setting_source {
    OCISBX_SETTING_UNSET = 0,   /**< nowhere: the setting has no value */
    OCISBX_SETTING_DEFAULT = 1, /**< the table's default, or the program's (ocisbx_settings_set_default) */
    OCISBX_SETTING_FILE = 2,    /**< the config file's profile */
    OCISBX_SETTING_ENV = 3,     /**< an environment variable */
    OCISBX_SETTING_OPTION = 4   /**< given explicitly (a flag, an option, a keyword argument) */
} ocisbx_setting_source;

/** A setting of the client set-up: auth, config file, region, endpoint... */
#define OCISBX_SETTING_CLIENT 0x1u
/** A setting of a created sandbox or its lifecycle: project, runtime, waits... */
#define OCISBX_SETTING_SANDBOX 0x2u

/** One row of the settings table. Read only; rows are only ever added, and
 * fields only ever added at the end. */
typedef struct ocisbx_setting {
    const char *name;          /**< "config_file": the name the resolver and the bindings use */
    const char *option;        /**< "--config-file": the CLI's option */
    const char *const *env;    /**< the variables, NULL-ended, first set wins (ours before the OCI CLI's) */
    const char *config_key;    /**< the key in the profile that sets it, or NULL */
    const char *default_value; /**< the default, or NULL for none */
    const char *value_name;    /**< the value's placeholder in help text ("FILE") */
    const char *help;          /**< one line of help */
    unsigned flags;            /**< OCISBX_SETTING_CLIENT or OCISBX_SETTING_SANDBOX */
} ocisbx_setting;

/** The row after prev (NULL: the first); NULL after the last. */
OCISBX_API const ocisbx_setting *ocisbx_setting_next(const ocisbx_setting *prev);
/** The row named name ("profile"), or NULL. */
OCISBX_API const ocisbx_setting *ocisbx_setting_by_name(const char *name);
/** Writes the variables of the setting named name into buf, for a message:
 * "OCI_SANDBOX_REGION or OCI_CLI_REGION" ("" for no setting or none; cut to
 * size, always terminated). Returns buf. */
OCISBX_API const char *ocisbx_setting_variables(const char *name, char *buf, size_t size);
/** One setting without a config file: given (when not NULL or empty), else
 * its variables, else its default. *source (may be NULL) says which; *which
 * (may be NULL) gets the variable's name when it came from one. NULL when
 * it has no value (or name is no setting). The rule the backend's create
 * settings (runtime, shape, expiration, ...) are read with. */
OCISBX_API const char *ocisbx_setting_lookup(const char *name, const char *given, ocisbx_setting_source *source,
                                             const char **which);
/** The poll_interval setting in milliseconds: given (decimal seconds such
 * as "0.1", when not NULL or empty: an explicit value, the CLI's
 * --poll-interval), else $OCI_SANDBOX_POLL_INTERVAL, else
 * OCISBX_DEFAULT_POLL_INTERVAL_S. From 0.01 to 3600 seconds; a bad value
 * fails naming its option (OCISBX_EINVAL) or its variable (OCISBX_ECONFIG)
 * and the value. *source (may be NULL) says where it came from. */
OCISBX_API int ocisbx_setting_poll_interval_ms(const char *given, int64_t *ms, ocisbx_setting_source *source);
/** "option", "environment", "config file", "default" or "unset". */
OCISBX_API const char *ocisbx_setting_source_name(ocisbx_setting_source source);

/* ---- the resolver ----------------------------------------------------------- */
/** Explicit values and defaults in; resolved values, credentials and a client out. */
typedef struct ocisbx_settings ocisbx_settings;
/** Makes a resolver with nothing given; free with ocisbx_settings_free. */
OCISBX_API int ocisbx_settings_new(ocisbx_settings **out);
/** Frees the resolver, its config and credentials. NULL is a no-op. */
OCISBX_API void ocisbx_settings_free(ocisbx_settings *s);
/** An explicit value (a flag): it wins over every other source. NULL or ""
 * clears it. OCISBX_EINVAL for a name not in the table, or an auth that is
 * none of the OCISBX_AUTH_* names. Resolve again after a change. */
OCISBX_API int ocisbx_settings_set(ocisbx_settings *s, const char *name, const char *value);
/** The program's own default, used instead of the table's (NULL: the
 * table's again). An example program that follows other defaults than the
 * library's says so here; the environment and the config file still win. */
OCISBX_API int ocisbx_settings_set_default(ocisbx_settings *s, const char *name, const char *value);
/** Resolves every setting: explicit, then the environment, then the config
 * file's profile (loaded unless auth is a principal), then the default.
 * The auth default: security_token when the profile has
 * security_token_file, else api_key. A config file that cannot be read, or
 * a profile it lacks, is the error returned (the message names where the
 * file and the profile came from, e.g. the variable OCI_CLI_PROFILE); the
 * values of the other sources are resolved all the same and can be read.
 * A bad auth from a variable: OCISBX_ECONFIG naming the variable. */
OCISBX_API int ocisbx_settings_resolve(ocisbx_settings *s);
/** The resolved value (owned by s until the next resolve), or NULL. The
 * endpoint, when none was given, is the region's (as
 * ocisbx_endpoint_for_region). Paths (config_file) have ~ expanded. */
OCISBX_API const char *ocisbx_settings_get(const ocisbx_settings *s, const char *name);
/** Where the value of name came from. */
OCISBX_API ocisbx_setting_source ocisbx_settings_source(const ocisbx_settings *s, const char *name);
/** The source in words for a person: the option ("--profile"), the
 * variable ("OCI_CLI_PROFILE"), the file and profile ("/home/me/.oci/config
 * [DEFAULT]"), "the region (OCI_CLI_REGION)" for an endpoint made from the
 * region, "default", or "not set". Owned by s until the next resolve. */
OCISBX_API const char *ocisbx_settings_origin(const ocisbx_settings *s, const char *name);
/** The config file's profile as resolved (borrowed), or NULL when it was
 * not loaded (a principal, or it failed). */
OCISBX_API const ocisbx_config *ocisbx_settings_config(const ocisbx_settings *s);
/** The credentials of the resolved auth (made once, then shared): a new
 * reference, released with ocisbx_credentials_free. Resolves first when
 * ocisbx_settings_resolve was not called. */
OCISBX_API int ocisbx_settings_credentials(ocisbx_settings *s, ocisbx_credentials **out);
/** A REST client: base's options (NULL: the defaults; its transport limits,
 * callbacks, stream settings) with the resolved credentials, endpoint or
 * region, API version and CA bundle; plain http allowed for a loopback
 * http:// endpoint only (a local test tenancy). Resolves first when
 * needed. */
OCISBX_API int ocisbx_settings_client_new(ocisbx_settings *s, const ocisbx_client_options *base, ocisbx_client **out);

#ifdef __cplusplus
}
#endif
#endif
