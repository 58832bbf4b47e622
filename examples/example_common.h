/* What the example programs share: a REST client from the library's one
 * settings resolver, the backend options over it, and one way to report a
 * failure.
 *
 * Settings, as for the OCI CLI and the rest of the library (the settings
 * table, include/ocisbx/settings.h and docs/settings.md: an explicit value >
 * the environment > the config file's profile > the default):
 *   OCI_CONFIG_FILE         the OCI config file (default ~/.oci/config)
 *   OCI_SANDBOX_PROFILE     its profile (default DEFAULT); a profile with
 *                           security_token_file signs with the session token
 *   OCI_SANDBOX_ENDPOINT    the service's base URL, or
 *   OCI_SANDBOX_REGION      the region (else the profile's region)
 *   OCI_SANDBOX_PROJECT_ID  the project sandboxes are created in
 * plus the OCI CLI's names (OCI_CLI_PROFILE, OCI_CLI_CONFIG_FILE,
 * OCI_CLI_REGION, OCI_CLI_AUTH; ours win when both are set) and the
 * backend's own (OCI_SANDBOX_RUNTIME, OCI_SANDBOX_SHAPE,
 * OCI_SANDBOX_EXPIRATION, OCI_SANDBOX_READY_TIMEOUT, OCI_SANDBOX_POLL_INTERVAL;
 * docs/backend.md).
 * The resolver allows plain http for a loopback endpoint only (the local
 * test tenancy): against the service everything is https as always. */
#ifndef OCISBX_EXAMPLE_COMMON_H
#define OCISBX_EXAMPLE_COMMON_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocisbx/ocisbx.h>

/* A variable of the example's own (not a client setting: those come from
 * the settings resolver), or NULL when unset or empty. */
static inline const char *example_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* A client setting as the library resolves it without a config file
 * ("project_id": $OCI_SANDBOX_PROJECT_ID), or NULL. */
static inline const char *example_setting(const char *name)
{
    return ocisbx_setting_lookup(name, NULL, NULL, NULL);
}

/* "PROG: WHAT: <the library's message> (HTTP <status>, opc-request-id <id>)"
 * on stderr; returns 1 (the exit status of a failed example). */
static inline int example_fail(const char *prog, const char *what)
{
    const ocisbx_error *e = ocisbx_error_last();
    const char *msg = ocisbx_error_message(e), *id = ocisbx_error_request_id(e);
    fprintf(stderr, "%s: %s: %s [%s", prog, what, msg, ocisbx_status_name(ocisbx_error_code(e)));
    if (ocisbx_error_http_status(e))
        fprintf(stderr, ", HTTP %d", ocisbx_error_http_status(e));
    if (id && !strstr(msg, id)) /* the message names it as a rule */
        fprintf(stderr, ", opc-request-id %s", id);
    fprintf(stderr, "]\n");
    return 1;
}

/* A client from the settings s (resolved as needed): config file, profile,
 * auth, endpoint or region as above. */
static inline int example_client_from(ocisbx_settings *s, ocisbx_client **out)
{
    return ocisbx_settings_client_new(s, NULL, out);
}

/* The same with the library's defaults. */
static inline int example_client(ocisbx_client **out)
{
    ocisbx_settings *s = NULL;
    *out = NULL;
    int rc = ocisbx_settings_new(&s);
    if (!rc)
        rc = example_client_from(s, out);
    ocisbx_settings_free(s);
    return rc;
}

/* Ctrl-C (SIGINT) and SIGTERM set this flag instead of ending the program,
 * so that it can still delete what it created: the backend's cancel
 * callback reads it (a create, a running command or a transfer then fails
 * with OCISBX_ECANCELED) and the examples stop at their next step. */
static volatile sig_atomic_t example_interrupted;

static inline void example_on_signal(int sig)
{
    (void)sig;
    example_interrupted = 1;
}

static inline int example_cancel(void *user_data)
{
    (void)user_data;
    return example_interrupted != 0;
}

static inline void example_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = example_on_signal; /* no SA_RESTART: a blocked read returns */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* The poll_interval setting (OCI_SANDBOX_POLL_INTERVAL) when it was given,
 * else ms, the example's own: a setting's variable wins over a program's
 * default. 0 for a bad variable: the backend's error to report. */
static inline int64_t example_poll_ms(int64_t ms)
{
    ocisbx_setting_source src = OCISBX_SETTING_UNSET;
    int64_t set = 0;
    if (ocisbx_setting_poll_interval_ms(NULL, &set, &src) != 0)
        return 0;
    return src == OCISBX_SETTING_DEFAULT ? ms : set;
}

/* The backend's poll interval: the example's own ms unless the setting was given. */
static inline int example_poll_interval(ocisbx_backend_options *o, int64_t ms)
{
    return example_poll_ms(ms) == ms ? ocisbx_backend_options_set_poll_interval_ms(o, ms) : 0;
}

/* Backend options over client (borrowed; NULL for a local backend), with
 * the cancel callback above (example_catch_signals installs the handlers).
 * Sandboxes are polled every second while they start (unless
 * OCI_SANDBOX_POLL_INTERVAL says otherwise). */
static inline int example_backend_options(ocisbx_client *client, ocisbx_backend_options **out)
{
    int rc = ocisbx_backend_options_new(out);
    if (!rc && client)
        rc = ocisbx_backend_options_set_client(*out, client);
    if (!rc)
        rc = example_poll_interval(*out, 1000);
    if (!rc)
        rc = ocisbx_backend_options_set_cancel(*out, example_cancel, NULL);
    example_catch_signals();
    return rc;
}

#endif
