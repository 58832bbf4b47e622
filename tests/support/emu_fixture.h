/* Test fixture: a running ocisbx-emulator in a throwaway directory.
 *
 *   emu_fixture_options o = {0};
 *   o.extra_yaml = "limits:\n  create_delay_ms: 0\n";   // optional
 *   o.https = true;                                       // optional
 *   emu_fixture *f = NULL;
 *   assert(emu_fixture_start(&o, &f) == 0);              // NULL options: defaults
 *   ... emu_fixture_url(f), emu_fixture_config_path(f), emu_fixture_ca_path(f) ...
 *   assert(emu_fixture_stop(f) == 0);   // SIGTERM, wait: the exit status (0 expected)
 *   emu_fixture_free(f);                // stops it if still running, removes the directory
 *
 * What it makes, under a fresh temporary directory emu_fixture_dir(f):
 *   keys/user.pem, keys/user.pub.pem   a generated 2048-bit RSA user key
 *   keys/session.pem, keys/session.pub.pem and the token file keys/session.token
 *                                      (a session token EMU_FIXTURE_SESSION_TOKEN valid until 2099,
 *                                      and EMU_FIXTURE_EXPIRED_TOKEN, expired in 2001, same key)
 *   tenancy.yaml                       region, tenancy, the user, both tokens, the default project
 *                                      EMU_FIXTURE_PROJECT (network: deny, warmpools: [pool-a]) and
 *                                      EMU_FIXTURE_PROJECT_NET (network: allow), then extra_yaml
 *                                      (so extra_yaml may add limits:, faults:; when it contains
 *                                      "projects:" the default projects are left out)
 *   oci_config                         [DEFAULT] tenancy, user, fingerprint, key_file, region
 *                                      and [SESSION] security_token_file + key_file (session key)
 *   ca.pem, server.pem, server.key     with https: a throwaway CA and a server certificate for
 *                                      127.0.0.1 / localhost
 *   state/                             the emulator's --state-dir
 * The emulator is started on 127.0.0.1:0; its stderr goes to the test's stderr.
 *
 * Requests: emu_fixture_request() signs with the user key (ocisbx_sign_with_key) and sends with
 * libcurl; it never uses the library's http layer. emu_fixture_send() sends exactly the headers
 * given, for tests that tamper with a signature. All functions return 0 on success or -1 with a
 * line on stderr saying why. */
#ifndef OCISBX_EMU_FIXTURE_H
#define OCISBX_EMU_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "ocisbx/auth.h"

#define EMU_FIXTURE_REGION "us-chicago-1"
#define EMU_FIXTURE_TENANCY "ocid1.tenancy.oc1..aaaaaaaaemulatortenancy"
#define EMU_FIXTURE_USER "ocid1.user.oc1..aaaaaaaaemulatoruser"
#define EMU_FIXTURE_PROJECT "ocid1.generativeaiproject.oc1.us-chicago-1.aaaaaaaaemulatorproject"
#define EMU_FIXTURE_PROJECT_NET "ocid1.generativeaiproject.oc1.us-chicago-1.aaaaaaaaemulatornetwork"
#define EMU_FIXTURE_SESSION_TOKEN "emulator-session-token-valid"
#define EMU_FIXTURE_EXPIRED_TOKEN "emulator-session-token-expired"
#define EMU_FIXTURE_API_VERSION "20231130"

typedef struct emu_fixture emu_fixture;

typedef struct emu_fixture_options {
    const char *extra_yaml;  /* appended to tenancy.yaml */
    bool https;              /* TLS with a throwaway CA */
    bool no_isolation;       /* pass --no-isolation (default: isolation when bwrap works, else none) */
    bool force_isolation;    /* never add --no-isolation on its own */
    const char *api_version; /* --api-version */
} emu_fixture_options;

int emu_fixture_start(const emu_fixture_options *opts, emu_fixture **out);
/* Stops (SIGTERM, wait) and returns the exit status (0 is a clean stop),
 * -1 when it died of a signal. The directory stays (restart or inspect it). */
int emu_fixture_stop(emu_fixture *f);
/* Starts it again on the same directory and state (a new port). */
int emu_fixture_restart(emu_fixture *f);
void emu_fixture_free(emu_fixture *f);

const char *emu_fixture_url(const emu_fixture *f);         /* "http://127.0.0.1:PORT" (no version) */
const char *emu_fixture_config_path(const emu_fixture *f); /* the OCI config file */
const char *emu_fixture_ca_path(const emu_fixture *f);     /* NULL without https */
const char *emu_fixture_dir(const emu_fixture *f);
const char *emu_fixture_state_dir(const emu_fixture *f);
const char *emu_fixture_fingerprint(const emu_fixture *f);
const char *emu_fixture_key_path(const emu_fixture *f);
ocisbx_key *emu_fixture_key(const emu_fixture *f);         /* the user key (borrowed) */
ocisbx_key *emu_fixture_session_key(const emu_fixture *f); /* the session tokens' key (borrowed) */
int emu_fixture_pid(const emu_fixture *f);
bool emu_fixture_isolated(const emu_fixture *f);
/* The keyId of the user key: tenancy/user/fingerprint. */
const char *emu_fixture_key_id(const emu_fixture *f);

/* ---- requests ---- */
typedef struct emu_fixture_result {
    long status;   /* HTTP status; 0 when no answer */
    int curl_code; /* CURLcode of the transfer (0 = OK; 52 = empty reply: reset) */
    char *body;    /* NUL-terminated (may hold NULs inside) */
    size_t body_len;
    char *headers; /* the raw response header block */
} emu_fixture_result;

typedef struct emu_fixture_req {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* below /<apiVersion>, percent-encoded, with the query: "/sandboxes?limit=2" */
    const void *body;   /* NULL: empty */
    size_t body_len;
    const char *content_type;         /* default application/json */
    const char *date;                 /* signed date; default now */
    const char *key_id;               /* default emu_fixture_key_id(f) */
    const ocisbx_key *key;            /* default the user key */
    const char *const *extra_headers; /* "name: value" lines sent as well (not signed), NULL-terminated */
} emu_fixture_req;

/* Signs and sends. 0 when an HTTP answer or a transfer error was recorded in
 * *out (check out->status / out->curl_code); -1 on a local failure. */
int emu_fixture_do(emu_fixture *f, const emu_fixture_req *req, emu_fixture_result *out);
/* Shorthand for a JSON request signed with the user key. */
int emu_fixture_request(emu_fixture *f, const char *method, const char *path, const char *json_body,
                        emu_fixture_result *out);
/* Signs only: the headers ocisbx_sign_with_key produced (free with ocisbx_headers_free). */
int emu_fixture_sign(emu_fixture *f, const emu_fixture_req *req, ocisbx_headers **out);
/* Sends exactly these "name: value" lines (plus curl's own none): for tampering tests. */
int emu_fixture_send(emu_fixture *f, const char *method, const char *path, const void *body, size_t body_len,
                     const char *const *header_lines, emu_fixture_result *out);
/* A response header value (case-insensitive name), malloc'd, or NULL. */
char *emu_fixture_result_header(const emu_fixture_result *r, const char *name);
void emu_fixture_result_free(emu_fixture_result *r);

/* ---- conveniences built on emu_fixture_request ---- */
struct cJSON;
/* Sends a signed JSON request; when the status is not `expect`, prints the
 * answer and returns -1. *out (may be NULL) gets the parsed body (or NULL). */
int emu_fixture_json(emu_fixture *f, const char *method, const char *path, const char *json_body, long expect,
                     struct cJSON **out);
/* Creates a sandbox in EMU_FIXTURE_PROJECT (project NULL) with the given JSON
 * fields (e.g. "\"displayName\":\"a\"", or NULL) and waits until RUNNING.
 * id gets the sandbox id. */
int emu_fixture_new_sandbox(emu_fixture *f, const char *project, const char *fields, char *id, size_t cap);
/* Polls GET /sandboxes/{id} until lifecycleState is state (or 404 when state
 * is "404"); -1 after about 60 s. */
int emu_fixture_wait_state(emu_fixture *f, const char *id, const char *state);

/* cmocka group setup/teardown glue: starts a fixture (opts may be NULL) into
 * *state; stops and frees it, -1 unless the stop was clean. */
int emu_fixture_setup_state(const emu_fixture_options *opts, void **state);
int emu_fixture_teardown_state(void **state);

/* true when some process's command line contains marker (scans /proc). */
bool emu_fixture_process_exists(const char *marker);

#endif
