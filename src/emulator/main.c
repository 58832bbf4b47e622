/* ocisbx-emulator: the local test tenancy (see docs/emulator.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <sys/resource.h>
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

typedef struct options {
    const char *listen, *config, *state_dir, *cert, *key, *api_version;
    bool isolate;
} options;

/* The command line into o: -1 to go on, else the exit status (help,
 * version: 0; a usage error: 2). */
static int parse_args(int argc, char **argv, options *o)
{
    *o = (options){"127.0.0.1:0", NULL, NULL, NULL, NULL, "20231130", true};
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
            o->isolate = false;
            continue;
        } else if (!strcmp(a, "--listen")) {
            dst = &o->listen;
        } else if (!strcmp(a, "--config")) {
            dst = &o->config;
        } else if (!strcmp(a, "--state-dir")) {
            dst = &o->state_dir;
        } else if (!strcmp(a, "--tls-cert")) {
            dst = &o->cert;
        } else if (!strcmp(a, "--tls-key")) {
            dst = &o->key;
        } else if (!strcmp(a, "--api-version")) {
            dst = &o->api_version;
        } else {
            return usage_error("unknown", a);
        }
        if (i + 1 >= argc || !argv[i + 1][0])
            return usage_error("missing", a);
        *dst = argv[++i];
    }
    if (!o->config)
        return usage_error("", "--config is required");
    if (!o->state_dir)
        return usage_error("", "--state-dir is required");
    if (!o->cert != !o->key)
        return usage_error("", "--tls-cert and --tls-key go together");
    if (!version_ok(o->api_version))
        return usage_error("", "--api-version must be letters, digits, '.', '-' or '_'");
    return -1;
}

static int fail_last(void)
{
    fprintf(stderr, "ocisbx-emulator: %s\n", ocisbx_error_message(ocisbx_error_last()));
    return 1;
}

/* Each command holds a few descriptors (its pipes) and each connection
 * one: a thousand sandboxes running commands pass the usual soft limit of
 * 1024, so the soft limit goes up to the hard one. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            ocisbx_log(OCISBX_LOG_WARN, "cannot raise the open file limit: %s", strerror(errno));
    }
}

/* Checks, loads, listens, and serves until SIGTERM or SIGINT. */
static int run(const options *o, const struct sockaddr_in *addr)
{
    if (o->isolate) {
        char why[512] = "";
        if (ocisbx_proc_isolation_check(why, sizeof why) != 0) {
            fprintf(stderr,
                    "ocisbx-emulator: bubblewrap is not usable here (%s); refusing to run sandbox commands "
                    "without isolation (give --no-isolation to allow it)\n",
                    why);
            return 1;
        }
    }
    if (ocisbx_global_init() != 0 || (o->cert && emu_tls_check(o->cert, o->key) != 0))
        return fail_last();
    emu_config *cfg = NULL;
    if (emu_config_load(o->config, &cfg) != 0)
        return fail_last();
    if (emu_state_lock(o->state_dir) != 0) {
        emu_config_free(cfg);
        return fail_last();
    }
    raise_fd_limit();
    /* Signals are taken by sigwait in this thread only. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    emu_server *srv = NULL;
    emu_http *http = NULL;
    if (emu_server_new(cfg, o->state_dir, o->api_version, o->isolate, &srv) != 0 ||
        emu_server_start_ticker(srv) != 0 || emu_http_start(srv, addr, o->cert, o->key, &http) != 0) {
        int rc = fail_last();
        if (srv)
            emu_server_shutdown(srv);
        emu_server_free(srv);
        emu_config_free(cfg);
        return rc;
    }
    char host[32];
    snprintf(host, sizeof host, "%s", inet_ntoa(addr->sin_addr));
    printf("listening on %s://%s:%d\n", o->cert ? "https" : "http", host, emu_http_port(http));
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

int main(int argc, char **argv)
{
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    struct sockaddr_in addr;
    if (emu_http_parse_listen(o.listen, &addr) != 0)
        return usage_error("", ocisbx_error_message(ocisbx_error_last()));
    ocisbx_set_log(log_stderr, OCISBX_LOG_WARN, NULL);
    return run(&o, &addr);
}
