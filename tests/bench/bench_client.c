/* bench_client: GetSandbox calls per second and client CPU per call against
 * ocisbx-emulator on loopback, side by side in one run:
 *   - libocisbx with connection reuse (one client, many calls),
 *   - libocisbx with a new connection per call (a new client per call),
 *   - the same loop in Node with oci-common's signer and fetch (the peer),
 * over plain http and over https (a throwaway CA), plus the CPU of the RSA
 * signature alone (ocisbx_sign timed separately) and its share of a call.
 * usage: bench_client [seconds per measurement, default 3]
 * Prints figures; asserts nothing about speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu_fixture.h"
#include "ocisbx/api.h"
#include "ocisbx/util.h"

static double seconds = 3.0;

typedef struct figures {
    double calls_per_sec;
    double cpu_us_per_call;
    long calls;
} figures;

static double cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec * 1e6 +
           (double)ru.ru_stime.tv_usec;
}

static int make_client(emu_fixture *emu, ocisbx_credentials *cr, ocisbx_client **out)
{
    ocisbx_http_options *h = NULL;
    ocisbx_client_options *o = NULL;
    int rc = ocisbx_http_options_new(&h);
    if (!rc && emu_fixture_ca_path(emu))
        rc = ocisbx_http_options_set_ca_bundle(h, emu_fixture_ca_path(emu));
    if (!rc)
        rc = ocisbx_http_options_set_allow_plain_http(h, 1);
    if (!rc)
        rc = ocisbx_client_options_new(&o);
    if (!rc)
        rc = ocisbx_client_options_set_endpoint(o, emu_fixture_url(emu));
    if (!rc)
        rc = ocisbx_client_options_set_http_options(o, h);
    if (!rc)
        rc = ocisbx_client_options_set_credentials(o, cr);
    if (!rc)
        rc = ocisbx_client_new(o, out);
    ocisbx_client_options_free(o);
    ocisbx_http_options_free(h);
    return rc;
}

static int get_once(ocisbx_client *c, const char *id)
{
    ocisbx_sandbox *s = NULL;
    int rc = ocisbx_client_get_sandbox(c, id, &s);
    if (rc)
        fprintf(stderr, "bench_client: %s\n", ocisbx_error_message(ocisbx_error_last()));
    ocisbx_sandbox_free(s);
    return rc;
}

static int bench_c(emu_fixture *emu, ocisbx_credentials *cr, const char *id, int reuse, figures *f)
{
    ocisbx_client *c = NULL;
    if (make_client(emu, cr, &c))
        return -1;
    for (int i = 0; i < 20; i++)
        if (get_once(c, id))
            return -1; /* warm up */
    long n = 0;
    double c0 = cpu_us();
    int64_t t0 = ocisbx_time_monotonic_ms(), t = t0;
    while ((double)(t - t0) < seconds * 1000) {
        if (!reuse) {
            ocisbx_client_free(c);
            c = NULL;
            if (make_client(emu, cr, &c))
                return -1;
        }
        if (get_once(c, id))
            return -1;
        n++;
        t = ocisbx_time_monotonic_ms();
    }
    double used = cpu_us() - c0;
    ocisbx_client_free(c);
    f->calls = n;
    f->calls_per_sec = (double)n / ((double)(t - t0) / 1000.0);
    f->cpu_us_per_call = used / (double)n;
    return 0;
}

/* CPU of signing one GetSandbox request, the way each attempt does. */
static double sign_us(ocisbx_credentials *cr, const char *url)
{
    long n = 0;
    double c0 = cpu_us();
    int64_t t0 = ocisbx_time_monotonic_ms();
    while ((double)(ocisbx_time_monotonic_ms() - t0) < seconds * 500) {
        ocisbx_sign_request *r = NULL;
        ocisbx_headers *h = NULL;
        if (ocisbx_sign_request_new("GET", url, &r) || ocisbx_sign(cr, r, &h))
            return -1;
        ocisbx_headers_free(h);
        ocisbx_sign_request_free(r);
        n++;
    }
    return (cpu_us() - c0) / (double)n;
}

static const char *node_modules(void)
{
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s/node_modules", OCISBX_BINARY_DIR);
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/oci-common/package.json", dir);
    struct stat st;
    if (stat(probe, &st) == 0)
        return dir;
    if (system("node --version > /dev/null 2>&1") != 0)
        return NULL;
    fprintf(stderr, "bench_client: installing oci-common into %s (npm)\n", OCISBX_BINARY_DIR);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "npm install --no-audit --no-fund --silent --prefix '%s' oci-common > /dev/null 2>&1",
             OCISBX_BINARY_DIR);
    if (system(cmd) != 0 || stat(probe, &st) != 0)
        return NULL;
    return dir;
}

static int bench_node(emu_fixture *emu, const char *url, figures *f)
{
    const char *mods = node_modules();
    if (!mods)
        return -1;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s%s%s node '%s/tests/bench/bench_client_node.js' '%s' '%s' '%s' '%s' '%s' '%s' %g",
             emu_fixture_ca_path(emu) ? "NODE_EXTRA_CA_CERTS='" : "",
             emu_fixture_ca_path(emu) ? emu_fixture_ca_path(emu) : "", emu_fixture_ca_path(emu) ? "'" : "",
             OCISBX_SOURCE_DIR, mods, url, emu_fixture_key_path(emu), EMU_FIXTURE_TENANCY, EMU_FIXTURE_USER,
             emu_fixture_fingerprint(emu), seconds);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char out[512] = {0};
    size_t got = fread(out, 1, sizeof out - 1, p);
    out[got] = '\0';
    if (pclose(p) != 0)
        return -1;
    if (sscanf(out, "{\"calls_per_sec\":%lf,\"cpu_us_per_call\":%lf,\"calls\":%ld}", &f->calls_per_sec,
               &f->cpu_us_per_call, &f->calls) != 3)
        return -1;
    return 0;
}

static int run(int https)
{
    emu_fixture_options o = {0};
    o.https = https != 0;
    o.no_isolation = true; /* GetSandbox runs no command */
    emu_fixture *emu = NULL;
    if (emu_fixture_start(&o, &emu))
        return 1;
    char id[128];
    if (emu_fixture_new_sandbox(emu, NULL, NULL, id, sizeof id))
        return 1;
    ocisbx_config *cfg = NULL;
    ocisbx_credentials *cr = NULL;
    if (ocisbx_config_load(emu_fixture_config_path(emu), NULL, &cfg) ||
        ocisbx_credentials_api_key_from_config(cfg, &cr)) {
        fprintf(stderr, "bench_client: %s\n", ocisbx_error_message(ocisbx_error_last()));
        return 1;
    }
    char url[512];
    snprintf(url, sizeof url, "%s/%s/sandboxes/%s", emu_fixture_url(emu), EMU_FIXTURE_API_VERSION, id);

    figures reuse = {0}, fresh = {0}, node = {0};
    int bad = bench_c(emu, cr, id, 1, &reuse) || bench_c(emu, cr, id, 0, &fresh);
    double sig = sign_us(cr, url);
    int node_rc = bench_node(emu, url, &node);

    printf("\nGetSandbox against ocisbx-emulator at %s (loopback, %s, 2048-bit RSA key, %g s per row)\n",
           emu_fixture_url(emu), https ? "TLS" : "plain http", seconds);
    printf("  %-40s %12s %22s %16s\n", "client", "calls/s", "client CPU/call (us)", "RSA sign share");
    if (!bad) {
        printf("  %-40s %12.0f %22.1f %15.0f%%\n", "libocisbx, connection reuse", reuse.calls_per_sec,
               reuse.cpu_us_per_call, 100.0 * sig / reuse.cpu_us_per_call);
        printf("  %-40s %12.0f %22.1f %15.0f%%\n", "libocisbx, new connection per call", fresh.calls_per_sec,
               fresh.cpu_us_per_call, 100.0 * sig / fresh.cpu_us_per_call);
    } else {
        printf("  libocisbx: failed (see above)\n");
    }
    if (node_rc == 0)
        printf("  %-40s %12.0f %22.1f %16s\n", "node oci-common signer + fetch (peer)", node.calls_per_sec,
               node.cpu_us_per_call, "-");
    else
        printf("  node peer: missing (no node, or oci-common could not be installed)\n");
    printf("  ocisbx_sign alone: %.1f us CPU per signature\n", sig);
    if (!bad && node_rc == 0)
        printf("  reuse vs peer: %.1fx the calls per second (target >= 3x); reuse vs new connection: %.1fx\n",
               reuse.calls_per_sec / node.calls_per_sec, reuse.calls_per_sec / fresh.calls_per_sec);
    fflush(stdout);
    ocisbx_credentials_free(cr);
    ocisbx_config_free(cfg);
    emu_fixture_stop(emu);
    emu_fixture_free(emu);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        seconds = atof(argv[1]);
    if (seconds <= 0)
        seconds = 3.0;
    ocisbx_global_init();
    int rc = run(0) | run(1);
    ocisbx_global_cleanup();
    return rc;
}
