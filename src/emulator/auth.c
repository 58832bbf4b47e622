/* Request authentication per docs/auth.md ("The signing protocol"), with the shared verifier
 * (auth/verify.h). Nothing the request claims is trusted: the key comes from
 * the tenancy file, the signing string is rebuilt from what was received, and
 * the body hash and length are recomputed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/verify.h"
#include "emulator/emu.h"
#include "ocisbx/util.h"

#define MAX_SKEW_S 300

typedef struct lookup_ud {
    const emu_request *req;
} lookup_ud;

static const char *lookup(const char *name, void *ud)
{
    return emu_request_header(((lookup_ud *)ud)->req, name);
}

static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        const char *e = strchr(p, ' ');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && !memcmp(p, word, n))
            return true;
        p += l;
    }
    return false;
}

#define DENY(...) emu_error(resp, 401, "NotAuthenticated", __VA_ARGS__)

/* The key of keyId: a session token's (ST$<token>) or a user's
 * (<tenancy>/<user>/<fingerprint>); NULL with a 401 answered. */
static const struct ocisbx_pubkey *find_key(const emu_config *cfg, const char *key_id, int64_t now, size_t *who,
                                            emu_response *resp)
{
    const struct ocisbx_pubkey *key = NULL;
    if (!strncmp(key_id, "ST$", 3)) {
        for (size_t i = 0; i < cfg->n_tokens; i++) {
            if (!strcmp(cfg->tokens[i].token, key_id + 3)) {
                if (cfg->tokens[i].expires_ms <= now)
                    return DENY("the session token in keyId has expired"), NULL;
                key = cfg->tokens[i].key;
                *who = cfg->n_users + i;
            }
        }
        if (!key)
            DENY("unknown keyId: no such session token");
        return key;
    }
    /* tenancy/user/fingerprint; OCIDs contain no '/' */
    const char *a = strchr(key_id, '/');
    const char *b = a ? strchr(a + 1, '/') : NULL;
    if (!a || !b || strchr(b + 1, '/'))
        return DENY("unknown keyId: expected <tenancy>/<user>/<fingerprint> or ST$<token>"), NULL;
    size_t tl = (size_t)(a - key_id), ul = (size_t)(b - a - 1);
    if (strlen(cfg->tenancy) != tl || memcmp(cfg->tenancy, key_id, tl) != 0)
        return DENY("unknown keyId: the tenancy is not this tenancy"), NULL;
    for (size_t i = 0; i < cfg->n_users; i++) {
        const emu_user *u = &cfg->users[i];
        if (strlen(u->id) == ul && !memcmp(u->id, a + 1, ul) && !strcmp(u->fingerprint, b + 1)) {
            key = u->key;
            *who = i;
        }
    }
    if (!key)
        DENY("unknown keyId: no user with that OCID and key fingerprint");
    return key;
}

/* The headers the method must sign (x-date stands in for date, as the
 * service accepts for clients that cannot set Date): the date header's
 * name, or NULL with a 401 answered. */
static const char *check_signed(const emu_request *req, const ocisbx_authz *az, bool body_method,
                                emu_response *resp)
{
    const char *need_body[] = {"content-length", "content-type", "x-content-sha256"};
    const char *date_name = has_word(az->headers, "date") ? "date" : has_word(az->headers, "x-date") ? "x-date" : NULL;
    if (!date_name)
        return DENY("required header date is not signed (headers=\"%s\")", az->headers), NULL;
    if (!has_word(az->headers, "(request-target)"))
        return DENY("required header (request-target) is not signed (headers=\"%s\")", az->headers), NULL;
    if (!has_word(az->headers, "host"))
        return DENY("required header host is not signed (headers=\"%s\")", az->headers), NULL;
    for (int i = 0; body_method && i < 3; i++)
        if (!has_word(az->headers, need_body[i]))
            return DENY("required header %s is not signed for %s (headers=\"%s\")", need_body[i], req->method,
                        az->headers),
                   NULL;
    return date_name;
}

/* The date within MAX_SKEW_S of now, and (body methods) the body's hash
 * and length as received: 0, or -1 with a 401 answered. */
static int check_date_and_body(const emu_request *req, const char *date_name, bool body_method, int64_t now,
                               emu_response *resp)
{
    const char *date = emu_request_header(req, date_name);
    time_t ds;
    if (!date || ocisbx_time_parse_rfc1123(date, &ds) != 0)
        return DENY("the date header is not an RFC 1123 GMT date: %s", date), -1;
    int64_t skew = (int64_t)ds - now / 1000;
    if (skew > MAX_SKEW_S || skew < -MAX_SKEW_S)
        return DENY("the date header is more than 5 minutes away from the server's clock: %s", date), -1;
    if (!body_method)
        return 0;
    char sha[45];
    emu_sha256_b64(req->body ? req->body : "", req->body_len, sha);
    const char *claimed = emu_request_header(req, "x-content-sha256");
    if (!claimed || strcmp(claimed, sha) != 0)
        return DENY("x-content-sha256 does not match the SHA-256 of the received body"), -1;
    const char *cl = emu_request_header(req, "content-length");
    char lenbuf[32];
    snprintf(lenbuf, sizeof lenbuf, "%zu", req->body_len);
    if (!cl || strcmp(cl, lenbuf) != 0)
        return DENY("content-length does not match the length of the received body (%s bytes)", lenbuf), -1;
    return 0;
}

int emu_authenticate(emu_server *s, const emu_request *req, emu_response *resp, size_t *who)
{
    *who = SIZE_MAX;
    const char *hdr = emu_request_header(req, "authorization");
    if (!hdr)
        return DENY("the request has no Authorization header"), -1;
    ocisbx_authz az;
    memset(&az, 0, sizeof az);
    if (ocisbx_authz_parse(hdr, &az) != 0)
        return DENY("malformed Authorization header: %s", ocisbx_error_message(ocisbx_error_last())), -1;
    int rc = -1;
    int64_t now = emu_now_ms();
    bool body_method = !strcmp(req->method, "POST") || !strcmp(req->method, "PUT") || !strcmp(req->method, "PATCH");
    const struct ocisbx_pubkey *key = find_key(s->cfg, az.key_id, now, who, resp);
    const char *date_name = key ? check_signed(req, &az, body_method, resp) : NULL;
    char *ss = NULL;
    lookup_ud lu = {req};
    if (!date_name)
        goto out;
    if (ocisbx_verify_signing_string(az.headers, req->method, req->target, lookup, &lu, &ss) != 0) {
        DENY("%s", ocisbx_error_message(ocisbx_error_last()));
        goto out;
    }
    int vrc = ocisbx_pubkey_verify(key, ss, strlen(ss), az.signature);
    ocisbx_free(ss);
    if (vrc != 0) {
        DENY("the signature does not verify with the key of keyId (%s)",
             vrc == OCISBX_EPARSE ? "signature is not base64" : "wrong key or altered signed headers");
        goto out;
    }
    rc = check_date_and_body(req, date_name, body_method, now, resp);
out:
    if (rc != 0)
        *who = SIZE_MAX;
    ocisbx_authz_clear(&az);
    return rc;
}
