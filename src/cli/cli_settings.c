/* The CLI's client settings: the global options come from the library's
 * settings table and go to its one resolver (ocisbx/settings.h), which reads
 * the environment (ours, then the OCI CLI's), the config file and the
 * defaults. Nothing here reads a variable or builds a path itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/internal.h"

int cli_setting_option(cli_ctx *ctx, int argc, char **argv, int *i)
{
    for (const ocisbx_setting *r = ocisbx_setting_next(NULL); r; r = ocisbx_setting_next(r)) {
        if (!(r->flags & OCISBX_SETTING_CLIENT))
            continue;
        const char *value = NULL;
        int m = cli_opt_value(argc, argv, i, r->option + 2, &value);
        if (m < 0)
            return -1;
        if (m == 0)
            continue;
        if (!*value) {
            cli_error(CLI_EXIT_USAGE, "option %s: empty value", r->option);
            return -1;
        }
        if (ocisbx_settings_set(ctx->settings, r->name, value) != 0) {
            cli_error(CLI_EXIT_USAGE, "%s", ocisbx_error_message(ocisbx_error_last()));
            return -1;
        }
        return 1;
    }
    return 0;
}

/* "--config-file FILE" padded to the help column, or on a line of its own
 * when longer. */
static void option_help(FILE *out, const ocisbx_setting *r)
{
    char head[64];
    snprintf(head, sizeof head, "%s %s", r->option, r->value_name);
    char extra[256] = "";
    size_t o = 0;
    for (const char *const *e = r->env; *e && o < sizeof extra; e++)
        o += (size_t)snprintf(extra + o, sizeof extra - o, "%s$%s", o ? ", " : "env ", *e);
    if (r->default_value && o < sizeof extra)
        snprintf(extra + o, sizeof extra - o, "; default %s", r->default_value);
    if (strlen(head) > 20)
        fprintf(out, "  %s\n  %-20s %s (%s)\n", head, "", r->help, extra);
    else
        fprintf(out, "  %-20s %s (%s)\n", head, r->help, extra);
}

void cli_setting_help(FILE *out, const char *name)
{
    const ocisbx_setting *r = ocisbx_setting_by_name(name);
    if (r)
        option_help(out, r);
}

void cli_settings_help(FILE *out)
{
    for (const ocisbx_setting *r = ocisbx_setting_next(NULL); r; r = ocisbx_setting_next(r))
        if (r->flags & OCISBX_SETTING_CLIENT)
            option_help(out, r);
}

/* Resolved once per run; the outcome kept for cli_settings_ok. */
static void resolve_once(cli_ctx *ctx)
{
    if (ctx->resolved)
        return;
    ctx->resolved = true;
    ctx->resolve_rc = ocisbx_settings_resolve(ctx->settings);
    if (ctx->resolve_rc)
        snprintf(ctx->resolve_msg, sizeof ctx->resolve_msg, "%s", ocisbx_error_message(ocisbx_error_last()));
}

const char *cli_setting(cli_ctx *ctx, const char *name)
{
    resolve_once(ctx);
    return ocisbx_settings_get(ctx->settings, name);
}

int cli_settings_ok(cli_ctx *ctx)
{
    resolve_once(ctx);
    if (ctx->resolve_rc == 0)
        return 0;
    /* the resolver's error (its message names file, profile, variable) */
    return cli_error(CLI_EXIT_FAIL, "%s", ctx->resolve_msg);
}

int cli_config(cli_ctx *ctx, const ocisbx_config **out)
{
    if (cli_settings_ok(ctx) != 0)
        return CLI_EXIT_FAIL;
    *out = ocisbx_settings_config(ctx->settings);
    return 0;
}

int cli_credentials(cli_ctx *ctx, ocisbx_credentials **out)
{
    if (!ctx->creds) {
        if (cli_settings_ok(ctx) != 0)
            return CLI_EXIT_FAIL;
        if (ocisbx_settings_credentials(ctx->settings, &ctx->creds) != 0)
            return cli_fail_last();
    }
    *out = ctx->creds;
    return 0;
}

const char *cli_region(cli_ctx *ctx)
{
    const char *name = cli_setting(ctx, "region");
    if (!name) {
        ocisbx_credentials *c = NULL;
        if (cli_credentials(ctx, &c) != 0)
            return NULL;
        name = ocisbx_credentials_region(c); /* a principal's own */
    }
    if (!name) {
        char vars[160];
        cli_error(CLI_EXIT_FAIL, "no region: give --region, set %s, or add region to the profile",
                  ocisbx_setting_variables("region", vars, sizeof vars));
        return NULL;
    }
    char *full = NULL;
    if (ocisbx_region_resolve(name, &full) != 0) {
        cli_fail_last();
        return NULL;
    }
    /* Kept for the program's life in a static: one region per run. */
    static char region[128];
    snprintf(region, sizeof region, "%s", full);
    ocisbx_free(full);
    return region;
}

int cli_endpoint(cli_ctx *ctx, const char **out)
{
    if (!ctx->endpoint) {
        const char *given = cli_setting(ctx, "endpoint");
        if (given) {
            ctx->endpoint = strdup(given);
        } else {
            const char *region = cli_region(ctx);
            if (!region)
                return CLI_EXIT_FAIL;
            char *ep = NULL;
            if (ocisbx_endpoint_for_region(region, &ep) != 0)
                return cli_fail_last();
            ctx->endpoint = strdup(ep);
            ocisbx_free(ep);
        }
        if (!ctx->endpoint)
            return cli_error(CLI_EXIT_FAIL, "out of memory");
    }
    *out = ctx->endpoint;
    return 0;
}

/* http://<loopback>[:port]/... : the only plain-http URLs the CLI allows
 * (the library's one loopback rule). */
static bool loopback_http(const char *url)
{
    return url && strncmp(url, "http://", 7) == 0 && ocisbx_url_host_is_loopback(url);
}

int cli_http(cli_ctx *ctx, const char *url, ocisbx_http **out)
{
    ocisbx_credentials *creds = NULL;
    if (cli_credentials(ctx, &creds) != 0)
        return CLI_EXIT_FAIL;
    ocisbx_http_options *o = NULL;
    int rc = ocisbx_http_options_new(&o);
    if (rc == 0)
        rc = ocisbx_http_options_set_credentials(o, creds);
    if (rc == 0)
        rc = cli_http_apply_globals(ctx, o);
    /* The transport refuses non-loopback http itself; this only opts in. */
    if (rc == 0 && loopback_http(url))
        rc = ocisbx_http_options_set_allow_plain_http(o, 1);
    /* no user-agent suffix: signing.md fixes the exact form */
    if (rc == 0)
        rc = ocisbx_http_new(o, out);
    ocisbx_http_options_free(o);
    return rc == 0 ? 0 : cli_fail_last();
}
