/* ocisbx doctor: first where each setting came from (one "setting" line per
 * setting: flag, variable, file or default, as the library's resolver found
 * it), then the checks, one step at a time, one line per check ("ok",
 * "warn", "FAIL" or "skip", the check's name, what was found and, for a
 * failure, how to fix it): the config file, the profile, the key, the
 * fingerprint, the clock, DNS, TCP, TLS and one signed request. A check
 * that needs one that failed is shown as skipped. Exit 0 when nothing
 * failed (warnings included), 1 otherwise, 2 for a bad command line. The
 * checks are a table of functions; the endpoint is probed through the http
 * layer (http/probe.h), never with libcurl here. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "http/probe.h"
#include "util/internal.h"

/* OCI refuses a signature whose date is more than 5 minutes off. */
#define DOCTOR_MAX_SKEW_S 300
/* The config file as the library reads it (auth/config.c's limit). */
#define DOCTOR_TEXT_MAX (1024 * 1024)

typedef struct doctor {
    cli_ctx *ctx;
    int fails, warns;
    const char *project;
    const char *auth;
    bool api_key, token, uses_config;
    const char *path, *file_src, *profile, *profile_src;
    const ocisbx_config *cfg; /* the resolver's, NULL when it did not load */
    struct stat st;
    bool config_ok, profile_ok, fp_ok, clock_ok, reach_ok, profile_checked;
    ocisbx_key *key;
    char *endpoint;
    char why[512]; /* why there is no endpoint */
    ocisbx_probe_result p;
    bool https, scheme_ok, answered;
    char host[256];
} doctor;

static void report(doctor *d, const char *status, const char *name, const char *fmt, ...) OCISBX_PRINTF(4, 5);

static void report(doctor *d, const char *status, const char *name, const char *fmt, ...)
{
    char detail[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    for (char *p = detail; *p; p++) /* one line per check */
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (strcmp(status, "FAIL") == 0)
        d->fails++;
    else if (strcmp(status, "warn") == 0)
        d->warns++;
    printf("%-4s %s: %s\n", status, name, detail);
    fflush(stdout);
}

/* ---- where each setting came from ---- */
static void step_settings(doctor *d)
{
    ocisbx_settings *s = d->ctx->settings;
    for (const ocisbx_setting *r = ocisbx_setting_next(NULL); r; r = ocisbx_setting_next(r)) {
        if (!(r->flags & OCISBX_SETTING_CLIENT) && strcmp(r->name, "project_id") != 0 &&
            strcmp(r->name, "poll_interval") != 0)
            continue;
        const char *v = ocisbx_settings_get(s, r->name), *o = ocisbx_settings_origin(s, r->name);
        ocisbx_setting_source src = ocisbx_settings_source(s, r->name);
        if (!v) {
            printf("setting %s not set\n", r->name);
            continue;
        }
        /* an endpoint made from the region: the origin names that setting */
        const char *of = strcmp(o, "region") == 0 ? "the region's, " : "";
        if (*of)
            o = ocisbx_settings_origin(s, "region");
        const char *kind = src == OCISBX_SETTING_OPTION ? "flag "
                           : src == OCISBX_SETTING_ENV  ? "variable "
                           : src == OCISBX_SETTING_FILE ? "file "
                                                        : "";
        printf("setting %s = %s (%s%s%s)\n", r->name, v, of, kind, src == OCISBX_SETTING_DEFAULT ? "default" : o);
    }
    fflush(stdout);
    /* a value that would fail every wait: said here, not at the first create
     * (doctor has no --poll-interval: the variable or the default) */
    int64_t ms = 0;
    if (ocisbx_setting_poll_interval_ms(NULL, &ms, NULL) != 0) {
        report(d, "FAIL", "poll_interval", "%s", ocisbx_error_message(ocisbx_error_last()));
        ocisbx_error_clear();
    }
}

/* ---- the config file ---- */

/* The section names of the file's text, "A, B" (at most cap bytes); and
 * whether [profile] is one of them. */
static bool scan_profiles(const char *text, const char *profile, char *names, size_t cap)
{
    bool found = false;
    size_t o = 0;
    names[0] = '\0';
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        while (len && (*line == ' ' || *line == '\t'))
            line++, len--;
        const char *close = len > 2 && line[0] == '[' ? memchr(line, ']', len) : NULL;
        if (close) {
            size_t n = (size_t)(close - line - 1);
            if (n == strlen(profile) && strncmp(line + 1, profile, n) == 0)
                found = true;
            if (o + n + 3 < cap)
                o += (size_t)snprintf(names + o, cap - o, "%s%.*s", o ? ", " : "", (int)n, line + 1);
        }
        line = end ? end + 1 : NULL;
    }
    return found;
}

/* The file's mode: who may read or change it. */
static void config_mode(doctor *d)
{
    unsigned mode = (unsigned)d->st.st_mode & 0777;
    bool secret = d->cfg && ocisbx_config_get(d->cfg, "pass_phrase");
    const char *path = d->path, *src = d->file_src;
    if (mode & 022)
        report(d, "FAIL", "config",
               "%s (%s): mode %04o: group or others can change it (and point key_file elsewhere): run chmod 600 %s",
               path, src, mode, path);
    else if ((mode & 044) && secret)
        report(d, "FAIL", "config",
               "%s (%s): mode %04o: group or others can read it, and [%s] holds pass_phrase: run chmod 600 %s", path,
               src, mode, d->profile, path);
    else if (mode & 044)
        report(d, "warn", "config", "%s (%s): mode %04o: group or others can read it: run chmod 600 %s", path, src,
               mode, path);
    else
        report(d, "ok", "config", "%s (%s): readable, mode %04o", path, src, mode);
    d->config_ok = !(mode & 022) && !((mode & 044) && secret);
}

static void check_config(doctor *d)
{
    if (!d->uses_config) {
        report(d, "skip", "config", "not used with --auth %s", d->auth);
        return;
    }
    const char *path = d->path, *src = d->file_src;
    if (stat(path, &d->st) != 0) {
        report(d, "FAIL", "config",
               "%s (%s): %s: create it (oci setup config) or name another with --config-file or OCI_CONFIG_FILE",
               path, src, strerror(errno));
        return;
    }
    if (!S_ISREG(d->st.st_mode)) {
        report(d, "FAIL", "config", "%s (%s): not a regular file: give the config file with --config-file", path, src);
        return;
    }
    ocisbx_file f;
    if (ocisbx_file_read(path, "config file", DOCTOR_TEXT_MAX, OCISBX_READ_REGULAR | OCISBX_READ_SECRET, &f) != 0) {
        report(d, "FAIL", "config", "%s (%s): cannot read it: %s: make it readable by you (chmod 600 %s as its owner)",
               path, src, ocisbx_error_message(ocisbx_error_last()), path);
        return;
    }
    char names[512], vars[160];
    bool has_profile = scan_profiles(f.data, d->profile, names, sizeof names);
    ocisbx_file_release(&f);
    if (!d->cfg && has_profile) {
        report(d, "FAIL", "config", "%s: %s: fix the line it names", path, d->ctx->resolve_msg);
        return;
    }
    config_mode(d);
    d->profile_checked = true;
    if (!d->cfg)
        report(d, "FAIL", "profile",
               "[%s] (%s) is not in %s (profiles there: %s): add a [%s] section or choose one with --profile, %s",
               d->profile, d->profile_src, path, names[0] ? names : "none", d->profile,
               ocisbx_setting_variables("profile", vars, sizeof vars));
}

static void check_profile(doctor *d)
{
    if (!d->uses_config) {
        report(d, "skip", "profile", "not used with --auth %s", d->auth);
        return;
    }
    if (!d->profile_checked) {
        report(d, "skip", "profile", "needs the config file");
        return;
    }
    if (!d->cfg)
        return; /* reported with the config */
    static const char *const need_api[] = {"tenancy", "user", "fingerprint", "key_file", NULL};
    static const char *const need_token[] = {"security_token_file", "key_file", NULL};
    char missing[256], vars[160];
    size_t o = 0;
    missing[0] = '\0';
    for (const char *const *k = d->api_key ? need_api : need_token; *k; k++)
        if (!ocisbx_config_get(d->cfg, *k))
            o += (size_t)snprintf(missing + o, sizeof missing - o, "%s%s", o ? ", " : "", *k);
    if (!ocisbx_settings_get(d->ctx->settings, "endpoint") && !ocisbx_settings_get(d->ctx->settings, "region"))
        o += (size_t)snprintf(missing + o, sizeof missing - o, "%sregion", o ? ", " : "");
    if (o)
        report(d, "FAIL", "profile",
               "%s [%s] (%s): missing %s: add them to the profile (region may also be given with --region, %s)",
               d->path, d->profile, d->profile_src, missing, ocisbx_setting_variables("region", vars, sizeof vars));
    else
        report(d, "ok", "profile", "[%s] (%s) in %s: %s set (auth %s)", d->profile, d->profile_src, d->path,
               d->api_key ? "tenancy, user, fingerprint, key_file" : "security_token_file, key_file", d->auth);
    d->profile_ok = o == 0;
}

/* ---- key and fingerprint ---- */
static void check_key(doctor *d)
{
    const char *key_file = d->cfg ? ocisbx_config_get(d->cfg, "key_file") : NULL;
    struct stat st;
    if (!d->uses_config) {
        report(d, "skip", "key", "not used with --auth %s", d->auth);
        return;
    }
    if (!d->cfg || !key_file) {
        report(d, "skip", "key", "needs the profile%s", d->cfg ? " to name key_file" : "");
        return;
    }
    if (stat(key_file, &st) != 0) {
        report(d, "FAIL", "key", "%s [%s] key_file = %s: %s: put the private key there or fix key_file", d->path,
               d->profile, key_file, strerror(errno));
        return;
    }
    const char *pass = ocisbx_config_get(d->cfg, "pass_phrase");
    ocisbx_file f;
    bool encrypted = false;
    if (ocisbx_file_read(key_file, "key file", DOCTOR_TEXT_MAX, OCISBX_READ_REGULAR | OCISBX_READ_SECRET, &f) == 0)
        encrypted = strstr(f.data, "ENCRYPTED") != NULL;
    ocisbx_file_release(&f);
    unsigned mode = (unsigned)st.st_mode & 0777;
    const char *enc = encrypted ? ", encrypted, pass_phrase opens it" : "";
    if (ocisbx_key_load_file(key_file, pass, &d->key) != 0) {
        const char *hint = encrypted && !pass ? "add pass_phrase to the profile"
                           : encrypted        ? "fix pass_phrase in the profile"
                                              : "point key_file at the PEM private key (RSA) you uploaded";
        report(d, "FAIL", "key", "%s [%s] key_file = %s: %s: %s", d->path, d->profile, key_file,
               ocisbx_error_message(ocisbx_error_last()), hint);
    } else if (mode & 077) {
        report(d, "warn", "key",
               "key_file = %s: RSA %d bits%s, but mode %04o lets group or others at it: run chmod 600 %s", key_file,
               ocisbx_key_bits(d->key), enc, mode, key_file);
    } else {
        report(d, "ok", "key", "key_file = %s: RSA %d bits%s", key_file, ocisbx_key_bits(d->key), enc);
    }
}

static void check_fingerprint(doctor *d)
{
    if (!d->api_key) {
        report(d, "skip", "fingerprint", "not used with --auth %s", d->auth);
        return;
    }
    if (!d->key) {
        report(d, "skip", "fingerprint", "needs the key");
        return;
    }
    char real[48];
    const char *fp = ocisbx_config_get(d->cfg, "fingerprint");
    const char *key_file = ocisbx_config_get(d->cfg, "key_file");
    if (ocisbx_key_fingerprint(d->key, real) != 0) {
        report(d, "FAIL", "fingerprint", "cannot compute the key's fingerprint: %s",
               ocisbx_error_message(ocisbx_error_last()));
    } else if (!fp || strcasecmp(fp, real) != 0) {
        report(d, "FAIL", "fingerprint", "%s [%s] fingerprint = %s: the key %s has fingerprint %s; set fingerprint = %s",
               d->path, d->profile, fp ? fp : "(none)", key_file, real, real);
    } else {
        report(d, "ok", "fingerprint", "%s matches key_file %s", real, key_file);
        d->fp_ok = true;
    }
}

/* ---- the endpoint: one unsigned GET, to tell DNS, TCP and TLS apart and
 * to read the server's date ---- */
static void step_probe(doctor *d)
{
    const char *ep = ocisbx_settings_get(d->ctx->settings, "endpoint");
    const char *region = ocisbx_settings_get(d->ctx->settings, "region");
    char *made = NULL;
    if (!ep && !region)
        snprintf(d->why, sizeof d->why, "no endpoint: give --endpoint or --region (or region in the profile)");
    else if (!ep && ocisbx_endpoint_for_region(region, &made) != 0)
        snprintf(d->why, sizeof d->why, "no endpoint for region %s: %s", region,
                 ocisbx_error_message(ocisbx_error_last()));
    if (ep || made)
        d->endpoint = strdup(ep ? ep : made);
    ocisbx_free(made);
    if (!d->endpoint)
        return;
    d->https = strncmp(d->endpoint, "https://", 8) == 0;
    d->scheme_ok = d->https || (strncmp(d->endpoint, "http://", 7) == 0 && ocisbx_url_host_is_loopback(d->endpoint));
    if (!d->scheme_ok)
        return;
    ocisbx_probe_options po = {d->endpoint, ocisbx_settings_get(d->ctx->settings, "ca_bundle"),
                               d->ctx->g.connection_timeout_s, d->ctx->g.read_timeout_s};
    ocisbx_http_probe(&po, &d->p);
    d->answered = d->p.answered;
}

static void check_clock(doctor *d)
{
    if (!d->answered) {
        report(d, "skip", "clock", "needs an answer from the endpoint (see below)");
        return;
    }
    if (d->p.date < 0) {
        report(d, "warn", "clock", "%s sent no usable date header (%s): cannot compare the clocks", d->endpoint,
               d->p.date_text[0] ? d->p.date_text : "none");
        d->clock_ok = true;
        return;
    }
    long long skew = (long long)d->p.date - (long long)time(NULL), off = skew < 0 ? -skew : skew;
    if (off > DOCTOR_MAX_SKEW_S) {
        report(d, "FAIL", "clock",
               "this machine's clock is %lld s %s %s (its date: %s); OCI refuses signatures more than 5 minutes off: "
               "set the clock right (enable NTP: timedatectl set-ntp true)",
               off, skew > 0 ? "behind" : "ahead of", d->endpoint, d->p.date_text);
    } else {
        report(d, "ok", "clock", "within %lld s of %s (date: %s)", off, d->endpoint, d->p.date_text);
        d->clock_ok = true;
    }
}

/* host of an http(s) URL into out ("" when none). */
static void url_host(const char *url, char *out, size_t cap)
{
    out[0] = '\0';
    const char *p = strstr(url, "://");
    if (!p)
        return;
    p += 3;
    const char *at = strpbrk(p, "@/");
    if (at && *at == '@')
        p = at + 1;
    if (*p == '[') {
        const char *e = strchr(p, ']');
        if (e)
            snprintf(out, cap, "%.*s", (int)(e - p - 1), p + 1);
        return;
    }
    size_t n = strcspn(p, ":/?#");
    snprintf(out, cap, "%.*s", (int)n, p);
}

static bool is_address(const char *host)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

/* ---- DNS, TCP, TLS: one line each ---- */
static bool tls_error(const doctor *d)
{
    return d->p.tls_failed || (d->https && d->p.connected && !d->p.tls_done && !d->answered);
}

static void check_dns(doctor *d)
{
    if (d->endpoint)
        url_host(d->endpoint, d->host, sizeof d->host);
    const char *value = NULL, *proxy = d->endpoint ? ocisbx_http_proxy_var(d->endpoint, &value) : NULL;
    if (!d->endpoint)
        report(d, "FAIL", "dns", "%s", d->why);
    else if (!d->scheme_ok)
        report(d, "skip", "dns", "needs an endpoint the library accepts");
    else if (d->p.resolve_failed)
        report(d, "FAIL", "dns",
               "%s: %s: check the host name in %s (--endpoint, --region or the profile's region) and the resolver "
               "configuration",
               d->host, d->p.error, d->endpoint);
    else if (proxy)
        report(d, "skip", "dns", "%s is resolved by the proxy in %s (%s), not here", d->host, proxy, value);
    else if (is_address(d->host))
        report(d, "ok", "dns", "%s is an address (no lookup)", d->host);
    else
        report(d, "ok", "dns", "%s resolves%s%s", d->host, d->p.ip[0] ? " to " : "", d->p.ip);
}

static void check_connect(doctor *d)
{
    if (!d->endpoint) {
        report(d, "skip", "connect", "needs an endpoint");
    } else if (!d->scheme_ok) {
        report(d, "skip", "connect", "needs an endpoint the library accepts");
    } else if (d->p.resolve_failed) {
        report(d, "skip", "connect", "needs the host name to resolve");
    } else if (!d->p.connected && !tls_error(d) && d->p.failed) {
        report(d, "FAIL", "connect",
               "%s: %s: is the service up, the port right, a firewall or proxy (https_proxy) in the way? "
               "(--connection-timeout to wait longer)",
               d->endpoint, d->p.error);
    } else if (!d->https && !d->answered) {
        report(d, "FAIL", "connect", "%s: connected but no HTTP answer: %s: is it the service's port?", d->endpoint,
               d->p.error);
    } else {
        report(d, "ok", "connect", "%s%s%s", d->endpoint, d->p.ip[0] ? " at " : "", d->p.ip);
    }
}

static void check_tls(doctor *d)
{
    bool no_connection = !d->p.connected && !tls_error(d) && d->p.failed;
    bool connect_failed = d->endpoint && d->scheme_ok && !d->p.resolve_failed &&
                          (no_connection || (!d->https && !d->answered));
    if (!d->endpoint) {
        report(d, "skip", "tls", "needs an endpoint");
    } else if (!d->scheme_ok) {
        report(d, "FAIL", "tls",
               "%s: plain http is refused except to a loopback host: use https:// (--endpoint or OCI_SANDBOX_ENDPOINT)",
               d->endpoint);
    } else if (d->p.resolve_failed) {
        report(d, "skip", "tls", "needs the host name to resolve");
    } else if (connect_failed) {
        report(d, "skip", "tls", no_connection ? "needs a connection" : "needs an answer");
    } else if (!d->https) {
        report(d, "ok", "tls", "not used: plain http to a loopback host");
        d->reach_ok = true;
    } else if (tls_error(d)) {
        report(d, "FAIL", "tls",
               "%s: %s: the certificate does not verify or the handshake failed: give the CA with --ca-bundle, or "
               "check the clock and the proxy",
               d->endpoint, d->p.error);
    } else if (!d->answered) {
        report(d, "FAIL", "tls", "%s: no answer after the handshake: %s", d->endpoint, d->p.error);
    } else {
        report(d, "ok", "tls", "handshake and certificate check passed");
        d->reach_ok = true;
    }
}

/* ---- one signed request ---- */
static void request_verdict(doctor *d, int rc, const ocisbx_sandbox_collection *l)
{
    const ocisbx_error *e = ocisbx_error_last();
    int status = rc ? ocisbx_error_http_status(e) : 200;
    if (!rc)
        report(d, "ok", "request", "signed GET %s/%s/sandboxes?limit=1%s accepted (%zu listed)", d->endpoint,
               ocisbx_settings_get(d->ctx->settings, "api_version"), d->project ? " in the project" : "",
               ocisbx_sandbox_collection_count(l));
    else if (status == 401)
        report(d, "FAIL", "request",
               "the service refused the signature (401): %s: the key, fingerprint, user or tenancy in %s [%s] is not "
               "what the service has: upload key_file's public key for the user and set fingerprint, user and "
               "tenancy to match",
               ocisbx_error_message(e), d->path, d->profile);
    else if (status == 400 && !d->project)
        report(d, "ok", "request",
               "the signature was accepted (400 without a project: give --project-id or OCI_SANDBOX_PROJECT_ID to "
               "try a real list)");
    else if (status >= 400)
        report(d, "FAIL", "request",
               "the signature was accepted but the list was refused (%d): %s: check the project id and the IAM "
               "policies",
               status, ocisbx_error_message(e));
    else
        report(d, "FAIL", "request", "%s", ocisbx_error_message(e));
}

static void check_request(doctor *d)
{
    bool creds_ok = d->uses_config ? (d->config_ok && d->profile_ok && d->key && (d->fp_ok || d->token)) : true;
    if (!creds_ok || !d->reach_ok || !d->clock_ok) {
        report(d, "skip", "request", "needs %s",
               !creds_ok     ? "the config, profile, key and fingerprint checks"
               : !d->reach_ok ? "the endpoint"
                              : "the clock");
        return;
    }
    cli_ctx *ctx = d->ctx;
    if (!ctx->endpoint)
        ctx->endpoint = strdup(d->endpoint);
    ocisbx_client *c = NULL;
    ocisbx_list_options *lo = NULL;
    ocisbx_sandbox_collection *l = NULL;
    if (cli_api_client(ctx, &c) != 0) {
        report(d, "FAIL", "request", "cannot make the client: %s", ocisbx_error_message(ocisbx_error_last()));
        return;
    }
    int rc = ocisbx_list_options_new(&lo);
    if (!rc)
        rc = ocisbx_list_options_set_limit(lo, 1);
    if (!rc && d->project)
        rc = ocisbx_list_options_set(lo, "projectId", d->project);
    if (!rc)
        rc = ocisbx_client_list_sandboxes(c, lo, &l);
    request_verdict(d, rc, l);
    ocisbx_sandbox_collection_free(l);
    ocisbx_list_options_free(lo);
    ocisbx_client_free(c);
}

/* The steps in order: the settings, then each check (a step may print
 * nothing: the probe prepares what the network checks read). */
static void (*const steps[])(doctor *) = {
    step_settings, check_config, check_profile, check_key,     check_fingerprint, step_probe,
    check_clock,   check_dns,    check_connect, check_tls,     check_request,
};

/* What the checks start from: the resolver's values. */
static void doctor_init(doctor *d, cli_ctx *ctx)
{
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    (void)cli_setting(ctx, "auth"); /* resolves; a failed file is what the checks report */
    ocisbx_settings *s = ctx->settings;
    d->project = ocisbx_settings_get(s, "project_id");
    d->auth = ocisbx_settings_get(s, "auth") ? ocisbx_settings_get(s, "auth") : OCISBX_AUTH_API_KEY;
    d->api_key = strcmp(d->auth, OCISBX_AUTH_API_KEY) == 0;
    d->token = strcmp(d->auth, OCISBX_AUTH_SECURITY_TOKEN) == 0;
    d->uses_config = d->api_key || d->token;
    d->path = ocisbx_settings_get(s, "config_file");
    d->profile = ocisbx_settings_get(s, "profile");
    d->file_src = ocisbx_settings_origin(s, "config_file");
    d->profile_src = ocisbx_settings_origin(s, "profile");
    d->cfg = ocisbx_settings_config(s);
}

int cmd_doctor(cli_ctx *ctx, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if ((m = cli_opt_value(argc, argv, &i, "project-id", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (ocisbx_settings_set(ctx->settings, "project_id", v) != 0)
                return cli_fail_last();
            ctx->resolved = false; /* resolved again with the flag */
        } else {
            return cli_unknown_option("doctor", argv[i]);
        }
    }
    doctor d;
    doctor_init(&d, ctx);
    if (!d.path || !d.profile)
        return cli_settings_ok(ctx) ? CLI_EXIT_FAIL : cli_error(CLI_EXIT_FAIL, "the settings did not resolve");
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        steps[i](&d);
    ocisbx_key_free(d.key);
    free(d.endpoint);
    return d.fails ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
