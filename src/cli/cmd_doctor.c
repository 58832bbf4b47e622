/* ocisbx doctor: checks the setup one step at a time, one line per check
 * ("ok", "warn", "FAIL" or "skip", the check's name, what was found and,
 * for a failure, how to fix it): the config file, the profile, the key, the
 * fingerprint, the clock, DNS, TCP, TLS and one signed request. A check that
 * needs one that failed is shown as skipped. Exit 0 when nothing failed
 * (warnings included), 1 otherwise, 2 for a bad command line. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cli.h"
#include "util/internal.h"

/* OCI refuses a signature whose date is more than 5 minutes off. */
#define DOCTOR_MAX_SKEW_S 300

typedef struct doctor {
    int fails, warns;
} doctor;

static void report(doctor *d, const char *status, const char *name, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

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

static void usage(void)
{
    printf("usage: ocisbx [global options] doctor [--project-id OCID]\n"
           "\n"
           "Checks the setup, one line per check, in this order:\n"
           "  config       the config file exists, is readable, and only its owner can read it\n"
           "  profile      the profile is in the file with the keys the auth method needs\n"
           "  key          key_file is readable, parses, and pass_phrase opens it if encrypted\n"
           "  fingerprint  the profile's fingerprint is the key's (MD5 of its public key)\n"
           "  clock        this machine's clock is within 5 minutes of the endpoint's date header\n"
           "  dns          the endpoint's host name resolves\n"
           "  connect      a TCP connection to the endpoint opens\n"
           "  tls          the TLS handshake succeeds and the certificate verifies (https)\n"
           "  request      a signed request (list sandboxes, limit 1) is accepted\n"
           "Each line starts with ok, warn, FAIL or skip (a check that needs a failed one).\n"
           "Exit 0 when no check failed (warnings allowed), 1 when one did, 2 for a bad command line.\n"
           "\n"
           "options:\n"
           "  --project-id OCID   list in this project (else OCI_SANDBOX_PROJECT_ID; else without one)\n");
}

/* ---- the config file ---- */

/* "~/x" with $HOME; malloc'd. */
static char *expand_home(const char *path)
{
    const char *home = getenv("HOME");
    if (path[0] == '~' && (path[1] == '/' || path[1] == '\0') && home && *home) {
        size_t n = strlen(home) + strlen(path);
        char *p = malloc(n);
        if (p)
            snprintf(p, n, "%s%s", home, path + 1);
        return p;
    }
    return strdup(path);
}

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
        if (len > 2 && line[0] == '[') {
            const char *close = memchr(line, ']', len);
            if (close) {
                size_t n = (size_t)(close - line - 1);
                if (n == strlen(profile) && strncmp(line + 1, profile, n) == 0)
                    found = true;
                if (o + n + 3 < cap)
                    o += (size_t)snprintf(names + o, cap - o, "%s%.*s", o ? ", " : "", (int)n, line + 1);
            }
        }
        line = end ? end + 1 : NULL;
    }
    return found;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *nb = cap < (16u << 20) ? realloc(buf, cap * 2 + 1) : NULL;
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* ---- the endpoint: one unsigned GET, to tell DNS, TCP and TLS apart and
 * to read the server's date ---- */
typedef struct probe {
    CURLcode code;
    long status;
    bool connected, tls_done;
    char date[128];
    char ip[64];
    char error[CURL_ERROR_SIZE];
} probe;

static size_t probe_header(char *data, size_t size, size_t n, void *ud)
{
    probe *p = ud;
    size_t len = size * n;
    if (len > 5 && strncasecmp(data, "date:", 5) == 0) {
        const char *v = data + 5;
        size_t vl = len - 5;
        while (vl && (*v == ' ' || *v == '\t'))
            v++, vl--;
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
            vl--;
        snprintf(p->date, sizeof p->date, "%.*s", (int)vl, v);
    }
    return len;
}

static size_t probe_body(char *data, size_t size, size_t n, void *ud)
{
    (void)data, (void)ud;
    return size * n;
}

static void run_probe(const cli_ctx *ctx, const char *endpoint, probe *p)
{
    memset(p, 0, sizeof p[0]);
    CURL *c = curl_easy_init();
    if (!c) {
        p->code = CURLE_FAILED_INIT;
        snprintf(p->error, sizeof p->error, "cannot start libcurl");
        return;
    }
    char url[2048];
    snprintf(url, sizeof url, "%s/", endpoint);
    long connect_s = ctx->g.connection_timeout_s > 0 ? (long)ctx->g.connection_timeout_s : 10;
    long read_s = ctx->g.read_timeout_s > 0 ? (long)ctx->g.read_timeout_s : 30;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, connect_s);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, connect_s + read_s);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, probe_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, p);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, probe_body);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, p->error);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (ctx->g.ca_bundle)
        curl_easy_setopt(c, CURLOPT_CAINFO, ctx->g.ca_bundle);
    /* as the library: loopback never goes through a proxy */
    if (ocisbx_url_host_is_loopback(endpoint))
        curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    p->code = curl_easy_perform(c);
    curl_off_t t = 0;
    if (curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &t) == CURLE_OK && t > 0)
        p->connected = true;
    t = 0;
    if (curl_easy_getinfo(c, CURLINFO_APPCONNECT_TIME_T, &t) == CURLE_OK && t > 0)
        p->tls_done = true;
    char *ip = NULL;
    if (curl_easy_getinfo(c, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip)
        snprintf(p->ip, sizeof p->ip, "%s", ip);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &p->status);
    if (p->status > 0)
        p->connected = true;
    if (!p->error[0] && p->code != CURLE_OK)
        snprintf(p->error, sizeof p->error, "%s", curl_easy_strerror(p->code));
    curl_easy_cleanup(c);
}

static bool is_tls_error(CURLcode code)
{
    switch (code) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED: return true;
    default: return false;
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

/* The clock check's verdict from the server's date header and the local
 * time: 0 ok, 1 more than DOCTOR_MAX_SKEW_S off, -1 no usable date.
 * *skew_s: the server's time minus ours. */
static int clock_verdict(const char *date, time_t now, long long *skew_s)
{
    if (!date || !*date)
        return -1;
    time_t t = curl_getdate(date, NULL);
    if (t == (time_t)-1)
        return -1;
    *skew_s = (long long)t - (long long)now;
    return *skew_s > DOCTOR_MAX_SKEW_S || *skew_s < -DOCTOR_MAX_SKEW_S ? 1 : 0;
}

/* The proxy variable libcurl will use for endpoint (NULL: a direct
 * connection). no_proxy is not matched here: when it is set the answer is
 * NULL (the connection's own result still tells). */
static const char *proxy_var(const char *endpoint)
{
    if (ocisbx_url_host_is_loopback(endpoint))
        return NULL;
    const char *np = getenv("no_proxy");
    if (!np || !*np)
        np = getenv("NO_PROXY");
    if (np && *np)
        return NULL;
    static const char *const https_vars[] = {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", NULL};
    static const char *const http_vars[] = {"http_proxy", "all_proxy", "ALL_PROXY", NULL};
    for (const char *const *v = strncmp(endpoint, "https:", 6) == 0 ? https_vars : http_vars; *v; v++) {
        const char *x = getenv(*v);
        if (x && *x)
            return *v;
    }
    return NULL;
}

/* ---- the command ---- */

/* Where a global value came from: main has already merged the environment
 * into it, so a value equal to the variable's is named by the variable. */
static const char *source_of(const char *given, const char *env_name, const char *option)
{
    const char *e = getenv(env_name);
    if (given && e && strcmp(e, given) == 0)
        return env_name;
    return given ? option : "default";
}

int cmd_doctor(cli_ctx *ctx, int argc, char **argv)
{
    const char *project = ctx->g.project_id;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
            return CLI_EXIT_OK;
        } else if ((m = cli_opt_value(argc, argv, &i, "project-id", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            project = v;
        } else {
            return cli_unknown_option("doctor", argv[i]);
        }
    }
    doctor d = {0, 0};
    const char *auth = ctx->g.auth ? ctx->g.auth : OCISBX_AUTH_API_KEY;
    bool api_key = strcmp(auth, OCISBX_AUTH_API_KEY) == 0;
    bool token = strcmp(auth, OCISBX_AUTH_SECURITY_TOKEN) == 0;
    bool uses_config = api_key || token;
    const char *profile = ctx->g.profile ? ctx->g.profile : "DEFAULT";
    const char *profile_src = source_of(ctx->g.profile, "OCI_SANDBOX_PROFILE", "--profile");

    /* config and profile */
    const char *given = ctx->g.config_file;
    const char *env_file = getenv("OCI_CONFIG_FILE");
    const char *as_given = given ? given : env_file && *env_file ? env_file : "~/.oci/config";
    const char *file_src = given ? "--config-file" : env_file && *env_file ? "OCI_CONFIG_FILE" : "default";
    char *path = expand_home(as_given);
    ocisbx_config *cfg = NULL;
    bool config_ok = false, profile_ok = false;
    if (!path) {
        free(path);
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    }
    struct stat st;
    if (!uses_config) {
        report(&d, "skip", "config", "not used with --auth %s", auth);
        report(&d, "skip", "profile", "not used with --auth %s", auth);
    } else if (stat(path, &st) != 0) {
        report(&d, "FAIL", "config",
               "%s (%s): %s: create it (oci setup config) or name another with --config-file or "
               "OCI_CONFIG_FILE",
               path, file_src, strerror(errno));
        report(&d, "skip", "profile", "needs the config file");
    } else if (!S_ISREG(st.st_mode)) {
        report(&d, "FAIL", "config", "%s (%s): not a regular file: give the config file with --config-file", path,
               file_src);
        report(&d, "skip", "profile", "needs the config file");
    } else {
        char *text = read_text(path);
        if (!text) {
            report(&d, "FAIL", "config",
                   "%s (%s): cannot read it: %s: make it readable by you (chmod 600 %s as its "
                   "owner)",
                   path, file_src, strerror(errno), path);
            report(&d, "skip", "profile", "needs the config file");
        } else {
            char names[512];
            bool has_profile = scan_profiles(text, profile, names, sizeof names);
            free(text);
            int rc = ocisbx_config_load(path, profile, &cfg);
            unsigned mode = (unsigned)st.st_mode & 0777;
            if (rc != 0 && has_profile) {
                report(&d, "FAIL", "config", "%s: %s: fix the line it names", path,
                       ocisbx_error_message(ocisbx_error_last()));
                report(&d, "skip", "profile", "needs a config file that parses");
            } else {
                bool secret = cfg && ocisbx_config_get(cfg, "pass_phrase");
                if (mode & 022)
                    report(&d, "FAIL", "config",
                           "%s (%s): mode %04o: group or others can change it (and point key_file elsewhere): run "
                           "chmod 600 %s",
                           path, file_src, mode, path);
                else if ((mode & 044) && secret)
                    report(&d, "FAIL", "config",
                           "%s (%s): mode %04o: group or others can read it, and [%s] holds pass_phrase: run chmod "
                           "600 %s",
                           path, file_src, mode, profile, path);
                else if (mode & 044)
                    report(&d, "warn", "config", "%s (%s): mode %04o: group or others can read it: run chmod 600 %s",
                           path, file_src, mode, path);
                else
                    report(&d, "ok", "config", "%s (%s): readable, mode %04o", path, file_src, mode);
                config_ok = !(mode & 022) && !((mode & 044) && secret);
                if (rc != 0) {
                    report(&d, "FAIL", "profile",
                           "[%s] (%s) is not in %s (profiles there: %s): add a [%s] section or choose one with "
                           "--profile or OCI_SANDBOX_PROFILE",
                           profile, profile_src, path, names[0] ? names : "none", profile);
                } else {
                    static const char *const need_api[] = {"tenancy", "user", "fingerprint", "key_file", NULL};
                    static const char *const need_token[] = {"security_token_file", "key_file", NULL};
                    char missing[256];
                    size_t o = 0;
                    missing[0] = '\0';
                    for (const char *const *k = api_key ? need_api : need_token; *k; k++)
                        if (!ocisbx_config_get(cfg, *k))
                            o += (size_t)snprintf(missing + o, sizeof missing - o, "%s%s", o ? ", " : "", *k);
                    bool region = ctx->g.region || ctx->g.endpoint || ocisbx_config_get(cfg, "region");
                    if (!region)
                        o += (size_t)snprintf(missing + o, sizeof missing - o, "%sregion", o ? ", " : "");
                    if (o)
                        report(&d, "FAIL", "profile",
                               "%s [%s] (%s): missing %s: add them to the profile (region may also be given with "
                               "--region or OCI_SANDBOX_REGION)",
                               path, profile, profile_src, missing);
                    else
                        report(&d, "ok", "profile", "[%s] (%s) in %s: %s set", profile, profile_src, path,
                               api_key ? "tenancy, user, fingerprint, key_file" : "security_token_file, key_file");
                    profile_ok = o == 0;
                }
            }
        }
    }

    /* key and fingerprint */
    ocisbx_key *key = NULL;
    const char *key_file = cfg ? ocisbx_config_get(cfg, "key_file") : NULL;
    if (!uses_config) {
        report(&d, "skip", "key", "not used with --auth %s", auth);
    } else if (!cfg || !key_file) {
        report(&d, "skip", "key", "needs the profile%s", cfg ? " to name key_file" : "");
    } else if (stat(key_file, &st) != 0) {
        report(&d, "FAIL", "key", "%s [%s] key_file = %s: %s: put the private key there or fix key_file", path,
               profile, key_file, strerror(errno));
    } else {
        const char *pass = ocisbx_config_get(cfg, "pass_phrase");
        char *pem = read_text(key_file);
        bool encrypted = pem && strstr(pem, "ENCRYPTED");
        if (pem) {
            ocisbx_wipe(pem, strlen(pem));
            free(pem);
        }
        unsigned mode = (unsigned)st.st_mode & 0777;
        if (ocisbx_key_load_file(key_file, pass, &key) != 0) {
            const char *hint = encrypted && !pass ? "add pass_phrase to the profile"
                               : encrypted        ? "fix pass_phrase in the profile"
                                                  : "point key_file at the PEM private key (RSA) you uploaded";
            report(&d, "FAIL", "key", "%s [%s] key_file = %s: %s: %s", path, profile, key_file,
                   ocisbx_error_message(ocisbx_error_last()), hint);
        } else if (mode & 077) {
            report(&d, "warn", "key",
                   "key_file = %s: RSA %d bits%s, but mode %04o lets group or others at it: run "
                   "chmod 600 %s",
                   key_file, ocisbx_key_bits(key), encrypted ? ", encrypted, pass_phrase opens it" : "", mode,
                   key_file);
        } else {
            report(&d, "ok", "key", "key_file = %s: RSA %d bits%s", key_file, ocisbx_key_bits(key),
                   encrypted ? ", encrypted, pass_phrase opens it" : "");
        }
    }
    bool fp_ok = false;
    if (!api_key) {
        report(&d, "skip", "fingerprint", "not used with --auth %s", auth);
    } else if (!key) {
        report(&d, "skip", "fingerprint", "needs the key");
    } else {
        char real[48];
        const char *fp = ocisbx_config_get(cfg, "fingerprint");
        if (ocisbx_key_fingerprint(key, real) != 0) {
            report(&d, "FAIL", "fingerprint", "cannot compute the key's fingerprint: %s",
                   ocisbx_error_message(ocisbx_error_last()));
        } else if (!fp || strcasecmp(fp, real) != 0) {
            report(&d, "FAIL", "fingerprint",
                   "%s [%s] fingerprint = %s: the key %s has fingerprint %s; set "
                   "fingerprint = %s",
                   path, profile, fp ? fp : "(none)", key_file, real, real);
        } else {
            report(&d, "ok", "fingerprint", "%s matches key_file %s", real, key_file);
            fp_ok = true;
        }
    }
    bool creds_ok = uses_config ? (config_ok && profile_ok && key && (fp_ok || token)) : true;
    if (cfg && !ctx->config)
        ctx->config = cfg; /* main frees it; cli_credentials reuses it */
    else
        ocisbx_config_free(cfg);
    ocisbx_key_free(key);

    /* the endpoint */
    char *endpoint = NULL;
    char why[512] = "";
    if (ctx->g.endpoint) {
        endpoint = strdup(ctx->g.endpoint);
    } else {
        const char *region = ctx->g.region ? ctx->g.region
                             : ctx->config ? ocisbx_config_get(ctx->config, "region")
                                           : NULL;
        char *full = NULL, *ep = NULL;
        if (!region)
            snprintf(why, sizeof why, "no endpoint: give --endpoint or --region (or region in the profile)");
        else if (ocisbx_region_resolve(region, &full) != 0 || ocisbx_endpoint_for_region(full, &ep) != 0)
            snprintf(why, sizeof why, "no endpoint for region %s: %s", region,
                     ocisbx_error_message(ocisbx_error_last()));
        else
            endpoint = strdup(ep);
        ocisbx_free(full);
        ocisbx_free(ep);
    }
    if (endpoint) {
        size_t n = strlen(endpoint);
        while (n && endpoint[n - 1] == '/')
            endpoint[--n] = '\0';
    }
    probe p;
    memset(&p, 0, sizeof p);
    bool https = endpoint && strncmp(endpoint, "https://", 8) == 0;
    bool plain_ok = endpoint && strncmp(endpoint, "http://", 7) == 0 && ocisbx_url_host_is_loopback(endpoint);
    bool scheme_ok = https || plain_ok;
    if (endpoint && scheme_ok)
        run_probe(ctx, endpoint, &p);
    bool answered = endpoint && scheme_ok && (p.code == CURLE_OK || p.status > 0);

    /* the clock (from the probe's answer) */
    bool clock_ok = false;
    if (!answered) {
        report(&d, "skip", "clock", "needs an answer from the endpoint (see below)");
    } else {
        long long skew = 0;
        int v = clock_verdict(p.date, time(NULL), &skew);
        if (v < 0) {
            report(&d, "warn", "clock", "%s sent no usable date header (%s): cannot compare the clocks", endpoint,
                   p.date[0] ? p.date : "none");
            clock_ok = true;
        } else if (v > 0) {
            report(&d, "FAIL", "clock",
                   "this machine's clock is %lld s %s %s (its date: %s); OCI refuses signatures more than 5 "
                   "minutes off: set the clock right (enable NTP: timedatectl set-ntp true)",
                   skew < 0 ? -skew : skew, skew > 0 ? "behind" : "ahead of", endpoint, p.date);
        } else {
            report(&d, "ok", "clock", "within %lld s of %s (date: %s)", skew < 0 ? -skew : skew, endpoint, p.date);
            clock_ok = true;
        }
    }

    /* DNS, TCP, TLS */
    char host[256] = "";
    if (endpoint)
        url_host(endpoint, host, sizeof host);
    bool reach_ok = false;
    if (!endpoint) {
        report(&d, "FAIL", "dns", "%s", why);
        report(&d, "skip", "connect", "needs an endpoint");
        report(&d, "skip", "tls", "needs an endpoint");
    } else if (!scheme_ok) {
        report(&d, "skip", "dns", "needs an endpoint the library accepts");
        report(&d, "skip", "connect", "needs an endpoint the library accepts");
        report(&d, "FAIL", "tls",
               "%s: plain http is refused except to a loopback host: use https:// (--endpoint or "
               "OCI_SANDBOX_ENDPOINT)",
               endpoint);
    } else if (p.code == CURLE_COULDNT_RESOLVE_HOST || p.code == CURLE_COULDNT_RESOLVE_PROXY) {
        report(&d, "FAIL", "dns",
               "%s: %s: check the host name in %s (--endpoint, --region or the profile's region) "
               "and the resolver configuration",
               host, p.error, endpoint);
        report(&d, "skip", "connect", "needs the host name to resolve");
        report(&d, "skip", "tls", "needs the host name to resolve");
    } else {
        const char *proxy = proxy_var(endpoint);
        if (proxy)
            report(&d, "skip", "dns", "%s is resolved by the proxy in %s (%s), not here", host, proxy, getenv(proxy));
        else if (is_address(host))
            report(&d, "ok", "dns", "%s is an address (no lookup)", host);
        else
            report(&d, "ok", "dns", "%s resolves%s%s", host, p.ip[0] ? " to " : "", p.ip);
        bool tls_err = is_tls_error(p.code) || (https && p.connected && !p.tls_done && !answered);
        if (!p.connected && !tls_err && p.code != CURLE_OK) {
            report(&d, "FAIL", "connect",
                   "%s: %s: is the service up, the port right, a firewall or proxy (https_proxy) in the way? "
                   "(--connection-timeout to wait longer)",
                   endpoint, p.error);
            report(&d, "skip", "tls", "needs a connection");
        } else if (!https && !answered) {
            report(&d, "FAIL", "connect", "%s: connected but no HTTP answer: %s: is it the service's port?", endpoint,
                   p.error);
            report(&d, "skip", "tls", "needs an answer");
        } else {
            report(&d, "ok", "connect", "%s%s%s", endpoint, p.ip[0] ? " at " : "", p.ip);
            if (!https) {
                report(&d, "ok", "tls", "not used: plain http to a loopback host");
                reach_ok = true;
            } else if (tls_err) {
                report(&d, "FAIL", "tls",
                       "%s: %s: the certificate does not verify or the handshake failed: give the CA with "
                       "--ca-bundle, or check the clock and the proxy",
                       endpoint, p.error);
            } else if (!answered) {
                report(&d, "FAIL", "tls", "%s: no answer after the handshake: %s", endpoint, p.error);
            } else {
                report(&d, "ok", "tls", "handshake and certificate check passed");
                reach_ok = true;
            }
        }
    }

    /* one signed request */
    if (!creds_ok || !reach_ok || !clock_ok) {
        report(&d, "skip", "request", "needs %s",
               !creds_ok   ? "the config, profile, key and fingerprint checks"
               : !reach_ok ? "the endpoint"
                           : "the clock");
    } else {
        if (!ctx->endpoint)
            ctx->endpoint = strdup(endpoint);
        ocisbx_client *c = NULL;
        ocisbx_list_options *lo = NULL;
        ocisbx_sandbox_collection *l = NULL;
        int rc = cli_api_client(ctx, &c) != 0 ? -1 : 0;
        if (rc == 0) {
            rc = ocisbx_list_options_new(&lo);
            if (!rc)
                rc = ocisbx_list_options_set_limit(lo, 1);
            if (!rc && project)
                rc = ocisbx_list_options_set(lo, "projectId", project);
            if (!rc)
                rc = ocisbx_client_list_sandboxes(c, lo, &l);
            const ocisbx_error *e = ocisbx_error_last();
            int status = rc ? ocisbx_error_http_status(e) : 200;
            if (!rc)
                report(&d, "ok", "request", "signed GET %s/%s/sandboxes?limit=1%s accepted (%zu listed)", endpoint,
                       ctx->g.api_version, project ? " in the project" : "", ocisbx_sandbox_collection_count(l));
            else if (status == 401)
                report(
                    &d, "FAIL", "request",
                    "the service refused the signature (401): %s: the key, fingerprint, user or tenancy in %s [%s] "
                    "is not what the service has: upload key_file's public key for the user and set fingerprint, "
                    "user and tenancy to match",
                    ocisbx_error_message(e), path, profile);
            else if (status == 400 && !project)
                report(&d, "ok", "request",
                       "the signature was accepted (400 without a project: give --project-id "
                       "or OCI_SANDBOX_PROJECT_ID to try a real list)");
            else if (status >= 400)
                report(&d, "FAIL", "request",
                       "the signature was accepted but the list was refused (%d): %s: check the project id and the "
                       "IAM policies",
                       status, ocisbx_error_message(e));
            else
                report(&d, "FAIL", "request", "%s", ocisbx_error_message(e));
        } else {
            report(&d, "FAIL", "request", "cannot make the client: %s", ocisbx_error_message(ocisbx_error_last()));
        }
        ocisbx_sandbox_collection_free(l);
        ocisbx_list_options_free(lo);
        ocisbx_client_free(c);
    }
    free(endpoint);
    free(path);
    return d.fails ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
