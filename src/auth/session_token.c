/* The session-token credential provider (`oci session authenticate`):
 * keyId "ST$<token>" from security_token_file, signed with key_file.
 * `oci session refresh` rewrites the token file in place, so get() checks the
 * file's mtime and size and re-reads it when they change; the key file is
 * re-read too when it changed (a new `authenticate` replaces both). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth/credentials_internal.h"
#include "util/internal.h"

/* Session tokens are JWTs of a few KiB. */
#define TOKEN_FILE_MAX (64 * 1024)

struct file_stamp {
    struct timespec mtime;
    off_t size;
    ino_t ino;
    bool valid;
};

struct session_creds {
    struct ocisbx_credentials base; /* first: the common part */
    char *where;                    /* "config file F, profile [P]" for messages, escaped */
    char *token_file;
    char *token_file_shown; /* escaped, for messages */
    char *key_file;
    char *pass_phrase; /* secret */
    char *token;       /* secret */
    ocisbx_key *key;
    struct file_stamp token_stamp, key_stamp;
};

static bool stamp_equal(const struct file_stamp *a, const struct stat *st)
{
    return a->valid && a->mtime.tv_sec == st->st_mtim.tv_sec && a->mtime.tv_nsec == st->st_mtim.tv_nsec &&
           a->size == st->st_size && a->ino == st->st_ino;
}

static void stamp_set(struct file_stamp *a, const struct stat *st)
{
    a->mtime = st->st_mtim;
    a->size = st->st_size;
    a->ino = st->st_ino;
    a->valid = true;
}

static int stat_token_file(struct session_creds *s, struct stat *st)
{
    if (stat(s->token_file, st) == 0)
        return 0;
    int e = errno;
    if (e == ENOENT || e == ENOTDIR)
        return ocisbx_fail(OCISBX_ECONFIG, "%s, key 'security_token_file': security token file %s: not found",
                           s->where, s->token_file_shown);
    return ocisbx_fail(OCISBX_ECONFIG, "%s, key 'security_token_file': security token file %s: %s", s->where,
                       s->token_file_shown, strerror(e));
}

/* Reads and trims the token; the buffer is wiped whatever happens. */
static int read_token(struct session_creds *s, char **out, struct stat *st)
{
    ocisbx_file f;
    int rc = ocisbx_file_read(s->token_file, "security token file", TOKEN_FILE_MAX,
                              OCISBX_READ_SECRET | OCISBX_READ_REGULAR | OCISBX_READ_CONFIG, &f);
    if (rc)
        return ocisbx_error_wrap("%s, key 'security_token_file': ", s->where);
    *st = f.st;
    const char *p = f.data;
    size_t n = f.len;
    while (n && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) {
        p++;
        n--;
    }
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r' || p[n - 1] == '\n'))
        n--;
    if (n == 0)
        rc = ocisbx_fail(OCISBX_ECONFIG, "%s, key 'security_token_file': security token file %s is empty", s->where,
                         s->token_file_shown);
    else if (memchr(p, '\0', n) || memchr(p, '\n', n))
        rc = ocisbx_fail(OCISBX_ECONFIG,
                         "%s, key 'security_token_file': security token file %s: not a token (more than "
                         "one line or binary data)",
                         s->where, s->token_file_shown);
    else if (!(*out = ocisbx_strndup(p, n)))
        rc = ocisbx_fail_nomem();
    ocisbx_file_release(&f);
    return rc;
}

static int load_key(struct session_creds *s)
{
    struct stat st;
    bool have_stat = stat(s->key_file, &st) == 0;
    if (have_stat && s->key && stamp_equal(&s->key_stamp, &st))
        return 0;
    ocisbx_key *key = NULL;
    int rc = ocisbx_key_load_file(s->key_file, s->pass_phrase, &key);
    if (rc)
        return ocisbx_error_wrap("%s, key 'key_file': ", s->where);
    ocisbx_key_free(s->key);
    s->key = key;
    if (have_stat)
        stamp_set(&s->key_stamp, &st);
    else
        s->key_stamp.valid = false;
    return 0;
}

/* Re-reads the token (and the key if it changed). On failure the previous
 * token is kept but the error is returned: a broken file must be noticed. */
static int reload(struct session_creds *s)
{
    char *token = NULL;
    struct stat st;
    memset(&st, 0, sizeof st);
    int rc = read_token(s, &token, &st);
    if (rc)
        return rc;
    rc = load_key(s);
    if (rc) {
        ocisbx_free_secret(token);
        return rc;
    }
    ocisbx_free_secret(s->token);
    s->token = token;
    stamp_set(&s->token_stamp, &st);
    return 0;
}

static int session_get(struct ocisbx_credentials *c, char **key_id, ocisbx_key **key)
{
    struct session_creds *s = (struct session_creds *)c;
    struct stat st;
    int rc = stat_token_file(s, &st);
    if (rc)
        return rc;
    if (!s->token || !stamp_equal(&s->token_stamp, &st)) {
        rc = reload(s);
        if (rc)
            return rc;
    }
    return ocisbx_credentials_session_out(s->token, s->key, key_id, key);
}

static int session_refresh(struct ocisbx_credentials *c)
{
    return reload((struct session_creds *)c);
}

static void session_destroy(struct ocisbx_credentials *c)
{
    struct session_creds *s = (struct session_creds *)c;
    free(s->where);
    free(s->token_file);
    free(s->token_file_shown);
    free(s->key_file);
    ocisbx_free_secret(s->pass_phrase);
    ocisbx_free_secret(s->token);
    ocisbx_key_free(s->key);
    s->where = s->token_file = s->token_file_shown = s->key_file = s->pass_phrase = s->token = NULL;
    s->key = NULL;
}

static const struct ocisbx_credentials_vt session_vt = {
    .kind = OCISBX_AUTH_SECURITY_TOKEN,
    .get = session_get,
    .refresh = session_refresh,
    .destroy = session_destroy,
};

int ocisbx_credentials_session_token_from_config(const ocisbx_config *cfg, ocisbx_credentials **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "session token credentials: no output pointer");
    *out = NULL;
    if (!cfg)
        return ocisbx_fail(OCISBX_EINVAL, "session token credentials: no config");
    const char *file = ocisbx_config_file(cfg), *profile = ocisbx_config_profile(cfg);
    const char *token_file = ocisbx_config_get(cfg, "security_token_file");
    const char *key_file = ocisbx_config_get(cfg, "key_file");
    bool no_token = !token_file || !*token_file, no_key = !key_file || !*key_file;
    if (no_token || no_key)
        return ocisbx_fail(OCISBX_ECONFIG, "config file %s, profile [%s]: missing key%s %s%s%s (needed for %s)",
                           OCISBX_SHOWN(file), OCISBX_SHOWN(profile), no_token && no_key ? "s" : "",
                           no_token ? "'security_token_file'" : "", no_token && no_key ? ", " : "",
                           no_key ? "'key_file'" : "", OCISBX_AUTH_SECURITY_TOKEN);
    char *region = NULL;
    const char *region_value = ocisbx_config_get(cfg, "region");
    if (region_value && *region_value && ocisbx_region_resolve(region_value, &region))
        return ocisbx_error_wrap("config file %s, profile [%s], key 'region': ", OCISBX_SHOWN(file),
                                 OCISBX_SHOWN(profile));

    struct session_creds *s = calloc(1, sizeof *s);
    if (!s) {
        free(region);
        return ocisbx_fail_nomem();
    }
    const char *pass = ocisbx_config_get(cfg, "pass_phrase");
    s->where = ocisbx_asprintf("config file %s, profile [%s]", OCISBX_SHOWN(file), OCISBX_SHOWN(profile));
    s->token_file = ocisbx_strdup(token_file);
    s->token_file_shown = ocisbx_strdup(OCISBX_SHOWN(token_file));
    s->key_file = ocisbx_strdup(key_file);
    s->pass_phrase = pass && *pass ? ocisbx_strdup(pass) : NULL;
    if (!s->where || !s->token_file || !s->token_file_shown || !s->key_file || (pass && *pass && !s->pass_phrase)) {
        session_destroy(&s->base);
        free(s);
        free(region);
        return ocisbx_fail_nomem();
    }
    int rc = reload(s);
    if (rc == 0)
        rc = ocisbx_credentials_init(&s->base, &session_vt);
    if (rc) {
        session_destroy(&s->base);
        free(s);
        free(region);
        return rc;
    }
    s->base.region = region;
    *out = &s->base;
    return 0;
}
