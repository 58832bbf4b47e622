/* The resource-principal credential provider, version 2.2: code running
 * inside a sandbox or a function finds its token (RPST) and private key in
 * OCI_RESOURCE_PRINCIPAL_* variables, each a literal value or an absolute
 * file path (the platform rotates the files, so they are re-read on refresh
 * and when the token nears its exp). keyId "ST$<rpst>". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth/credentials_internal.h"
#include "auth/federation.h"
#include "ocisbx/util.h"
#include "util/internal.h"

#define ENV_VERSION "OCI_RESOURCE_PRINCIPAL_VERSION"
#define ENV_RPST "OCI_RESOURCE_PRINCIPAL_RPST"
#define ENV_PEM "OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM"
#define ENV_PASSPHRASE "OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE"
#define ENV_REGION "OCI_RESOURCE_PRINCIPAL_REGION"
#define MARGIN_S 300
#define MAX_FILE_BYTES (1024 * 1024)

typedef struct rp_creds {
    struct ocisbx_credentials base;
    char *rpst; /* secret */
    ocisbx_key *key;
    int64_t refresh_at; /* unix seconds */
    int64_t expires_at;
} rp_creds;

/* A whole file, read into memory that is wiped when freed (it may be a key).
 * A FIFO or a device is refused without waiting for a writer. */
static int read_secret_file(const char *var, const char *path, char **out)
{
    ocisbx_file f;
    int rc = ocisbx_file_read(path, "file", MAX_FILE_BYTES, OCISBX_READ_SECRET | OCISBX_READ_REGULAR | OCISBX_READ_CONFIG, &f);
    if (rc)
        return ocisbx_error_wrap("%s: ", var);
    *out = ocisbx_file_detach(&f, NULL);
    return 0;
}

/* Trailing line breaks and spaces are not part of a token or passphrase. */
static void trim_end(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

/* The value of `var`: read from the file when it is an absolute path,
 * literal otherwise. Absent (or empty) and optional: *out = NULL. */
static int env_value(const char *var, bool required, char **out)
{
    *out = NULL;
    const char *v = getenv(var);
    if (!v || !*v)
        return required ? ocisbx_fail(OCISBX_ECONFIG, "resource principal: %s is not set", var) : 0;
    if (v[0] == '/') {
        int rc = read_secret_file(var, v, out);
        if (rc)
            return ocisbx_error_wrap("resource principal: ");
    } else if (!(*out = ocisbx_strdup(v))) {
        return ocisbx_fail_nomem();
    }
    trim_end(*out);
    if (!**out) {
        ocisbx_free_secret(*out);
        *out = NULL;
        if (required)
            return ocisbx_fail(OCISBX_ECONFIG, "resource principal: %s%s%s is empty", var,
                               v[0] == '/' ? ": the file " : "", v[0] == '/' ? OCISBX_SHOWN(v) : "");
    }
    return 0;
}

static int check_version(void)
{
    const char *v = getenv(ENV_VERSION);
    if (!v || !*v)
        return ocisbx_fail(OCISBX_ECONFIG, "resource principal: %s is not set (this library supports 2.2)",
                           ENV_VERSION);
    if (strcmp(v, "2.2") != 0)
        return ocisbx_fail(OCISBX_EUNSUPPORTED,
                           "resource principal: %s=\"%.40s\" is not supported (this library supports 2.2)",
                           ENV_VERSION, OCISBX_SHOWN(v));
    return 0;
}

/* Reads the token and the key afresh; the state changes only on success. */
static int reload(rp_creds *c)
{
    char *rpst = NULL, *pem = NULL, *pass = NULL;
    ocisbx_key *key = NULL;
    int rc = check_version();
    if (!rc)
        rc = env_value(ENV_RPST, true, &rpst);
    if (!rc)
        rc = env_value(ENV_PEM, true, &pem);
    if (!rc)
        rc = env_value(ENV_PASSPHRASE, false, &pass);
    if (!rc && (rc = ocisbx_key_load_pem(pem, strlen(pem), pass, &key)))
        ocisbx_error_wrap("resource principal: %s: ", ENV_PEM);
    ocisbx_free_secret(pem);
    ocisbx_free_secret(pass);
    if (rc) {
        ocisbx_free_secret(rpst);
        return rc;
    }
    int64_t now = ocisbx_time_now_ms() / 1000;
    ocisbx_free_secret(c->rpst);
    ocisbx_key_free(c->key);
    c->rpst = rpst;
    c->key = key;
    c->refresh_at = ocisbx_token_refresh_at(rpst, now, MARGIN_S, &c->expires_at);
    return 0;
}

static int rp_get(struct ocisbx_credentials *base, char **key_id, ocisbx_key **key)
{
    rp_creds *c = (rp_creds *)base;
    int64_t now = ocisbx_time_now_ms() / 1000;
    if (now >= c->refresh_at) {
        int rc = reload(c);
        /* The current token still works until its exp: a file caught
         * mid-rotation must not fail the call. */
        if (rc && now >= c->expires_at)
            return rc;
        if (rc)
            ocisbx_log(OCISBX_LOG_WARN, "resource principal: re-reading failed, using the current token: %s",
                       ocisbx_error_message(ocisbx_error_last()));
    }
    return ocisbx_credentials_session_out(c->rpst, c->key, key_id, key);
}

static int rp_refresh(struct ocisbx_credentials *base)
{
    return reload((rp_creds *)base);
}

static void rp_destroy(struct ocisbx_credentials *base)
{
    rp_creds *c = (rp_creds *)base;
    ocisbx_free_secret(c->rpst);
    ocisbx_key_free(c->key);
}

static const struct ocisbx_credentials_vt rp_vt = {
    OCISBX_AUTH_RESOURCE_PRINCIPAL,
    rp_get,
    rp_refresh,
    rp_destroy,
};

int ocisbx_credentials_resource_principal(ocisbx_credentials **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "resource principal: out is NULL");
    *out = NULL;
    int rc = check_version();
    if (rc)
        return rc;
    const char *region = getenv(ENV_REGION);
    if (!region || !*region)
        return ocisbx_fail(OCISBX_ECONFIG, "resource principal: %s is not set", ENV_REGION);
    char *full = NULL;
    if ((rc = ocisbx_region_resolve(region, &full)))
        return ocisbx_error_wrap("resource principal: %s: ", ENV_REGION);
    rp_creds *c = calloc(1, sizeof *c);
    if (!c) {
        ocisbx_free(full);
        return ocisbx_fail_nomem();
    }
    if ((rc = ocisbx_credentials_init(&c->base, &rp_vt))) {
        ocisbx_free(full);
        free(c);
        return rc;
    }
    c->base.region = ocisbx_strdup(full);
    ocisbx_free(full);
    rc = c->base.region ? reload(c) : ocisbx_fail_nomem();
    if (rc) {
        ocisbx_error_saved *saved = ocisbx_error_save();
        ocisbx_credentials_free(&c->base);
        ocisbx_error_restore(saved);
        return rc;
    }
    *out = &c->base;
    return 0;
}
