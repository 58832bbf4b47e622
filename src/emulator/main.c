/* ocisbx-emulator: the local test tenancy (see docs/emulator.md). */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/emu.h"
#include "emulator/http.h"
#include "sys/proc.h"

static const char USAGE[] =
    "usage: ocisbx-emulator --config TENANCY.yaml --state-dir DIR [--listen 127.0.0.1:0]\n"
    "                       [--tls-cert FILE --tls-key FILE] [--api-version 20231130] [--no-isolation]\n"
    "\n"
    "The local test tenancy: the sandbox service's signed REST API on this machine (docs/emulator.md).\n"
    "\n"
    "Options:\n"
    "  --config FILE       the tenancy file (YAML: region, tenancy, users, projects, limits, faults); required\n"
    "  --state-dir DIR     where sandboxes, commands, workspaces and snapshots are kept (one emulator\n"
    "                      per directory); required\n"
    "  --listen HOST:PORT  the loopback address to listen on (default 127.0.0.1:0: a free port, printed\n"
    "                      as \"listening on http://127.0.0.1:PORT\")\n"
    "  --tls-cert FILE     PEM certificate (chain): speak HTTPS only; needs --tls-key\n"
    "  --tls-key FILE      PEM private key of --tls-cert\n"
    "  --api-version V     the path segment in front of every route (default 20231130)\n"
    "  --no-isolation      run sandbox commands with /bin/sh on the host, without bubblewrap\n"
    "  --version           print \"ocisbx-emulator VERSION\" and exit\n"
    "  -h, --help          print this help and exit\n"
    "\n"
    "Environment: OCISBX_EMULATOR_LOG=1 logs one line per request on stderr.\n"
    "SIGTERM or SIGINT stops it: every sandbox process is killed and the state written.\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "ocisbx-emulator: ");
    if (!strcmp(fmt, "missing"))
        fprintf(stderr, "%s needs a value (see --help)\n", arg);
    else if (!strcmp(fmt, "unknown"))
        fprintf(stderr, "unknown option %s (see --help)\n", arg);
    else
        fprintf(stderr, "%s (see --help)\n", arg);
    return 2;
}

static void log_stderr(int level, const char *line, void *ud)
{
    (void)ud;
    fprintf(stderr, "ocisbx-emulator: %s: %s\n", level == OCISBX_LOG_ERROR ? "error" : "warning", line);
}

static bool version_ok(const char *v)
{
    if (!*v || strlen(v) > 30)
        return false;
    for (const char *p = v; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '.' ||
              *p == '-' || *p == '_'))
            return false;
    return true;
}

int main(int argc, char **argv)
{
    const char *listen = "127.0.0.1:0", *config = NULL, *state_dir = NULL, *cert = NULL, *key = NULL;
    const char *api_version = "20231130";
    bool isolate = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(USAGE, stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("ocisbx-emulator %s\n", ocisbx_version());
            return 0;
        } else if (!strcmp(a, "--no-isolation")) {
            isolate = false;
            continue;
        } else if (!strcmp(a, "--listen")) {
            dst = &listen;
        } else if (!strcmp(a, "--config")) {
            dst = &config;
        } else if (!strcmp(a, "--state-dir")) {
            dst = &state_dir;
        } else if (!strcmp(a, "--tls-cert")) {
            dst = &cert;
        } else if (!strcmp(a, "--tls-key")) {
            dst = &key;
        } else if (!strcmp(a, "--api-version")) {
            dst = &api_version;
        } else {
            return usage_error("unknown", a);
        }
        if (i + 1 >= argc || !argv[i + 1][0])
            return usage_error("missing", a);
        *dst = argv[++i];
    }
    if (!config)
        return usage_error("", "--config is required");
    if (!state_dir)
        return usage_error("", "--state-dir is required");
    if (!cert != !key)
        return usage_error("", "--tls-cert and --tls-key go together");
    if (!version_ok(api_version))
        return usage_error("", "--api-version must be letters, digits, '.', '-' or '_'");
    struct sockaddr_in addr;
    if (emu_http_parse_listen(listen, &addr) != 0)
        return usage_error("", ocisbx_error_message(ocisbx_error_last()));

    ocisbx_set_log(log_stderr, OCISBX_LOG_WARN, NULL);
    if (isolate) {
        char why[512] = "";
        if (ocisbx_proc_isolation_check(why, sizeof why) != 0) {
            fprintf(stderr,
                    "ocisbx-emulator: bubblewrap is not usable here (%s); refusing to run sandbox commands "
                    "without isolation (give --no-isolation to allow it)\n",
                    why);
            return 1;
        }
    }
    if (ocisbx_global_init() != 0) {
        fprintf(stderr, "ocisbx-emulator: %s\n", ocisbx_error_message(ocisbx_error_last()));
        return 1;
    }
    if (cert && emu_tls_check(cert, key) != 0) {
        fprintf(stderr, "ocisbx-emulator: %s\n", ocisbx_error_message(ocisbx_error_last()));
        return 1;
    }
    emu_config *cfg = NULL;
    if (emu_config_load(config, &cfg) != 0) {
        fprintf(stderr, "ocisbx-emulator: %s\n", ocisbx_error_message(ocisbx_error_last()));
        return 1;
    }

    if (emu_state_lock(state_dir) != 0) {
        fprintf(stderr, "ocisbx-emulator: %s\n", ocisbx_error_message(ocisbx_error_last()));
        emu_config_free(cfg);
        return 1;
    }

    /* Signals are taken by sigwait in this thread only. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    emu_server *srv = NULL;
    emu_http *http = NULL;
    if (emu_server_new(cfg, state_dir, api_version, isolate, &srv) != 0 || emu_server_start_ticker(srv) != 0 ||
        emu_http_start(srv, &addr, cert, key, &http) != 0) {
        fprintf(stderr, "ocisbx-emulator: %s\n", ocisbx_error_message(ocisbx_error_last()));
        if (srv)
            emu_server_shutdown(srv);
        emu_server_free(srv);
        emu_config_free(cfg);
        return 1;
    }
    char host[32];
    snprintf(host, sizeof host, "%s", inet_ntoa(addr.sin_addr));
    printf("listening on %s://%s:%d\n", cert ? "https" : "http", host, emu_http_port(http));
    fflush(stdout);

    int sig = 0;
    sigwait(&set, &sig);
    emu_http_quiesce(http);
    emu_server_shutdown(srv);
    emu_http_stop(http);
    emu_server_free(srv);
    emu_config_free(cfg);
    ocisbx_global_cleanup();
    return 0;
}
