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
    const struct ocisbx_pubkey *key = NULL;
    const emu_config *cfg = s->cfg;
    int64_t now = emu_now_ms();
    if (!strncmp(az.key_id, "ST$", 3)) {
        for (size_t i = 0; i < cfg->n_tokens; i++) {
            if (!strcmp(cfg->tokens[i].token, az.key_id + 3)) {
                if (cfg->tokens[i].expires_ms <= now) {
                    DENY("the session token in keyId has expired");
                    goto out;
                }
                key = cfg->tokens[i].key;
                *who = cfg->n_users + i;
            }
        }
        if (!key) {
            DENY("unknown keyId: no such session token");
            goto out;
        }
    } else {
        /* tenancy/user/fingerprint; OCIDs contain no '/' */
        const char *a = strchr(az.key_id, '/');
        const char *b = a ? strchr(a + 1, '/') : NULL;
        if (!a || !b || strchr(b + 1, '/')) {
            DENY("unknown keyId: expected <tenancy>/<user>/<fingerprint> or ST$<token>");
            goto out;
        }
        size_t tl = (size_t)(a - az.key_id), ul = (size_t)(b - a - 1);
        if (strlen(cfg->tenancy) != tl || memcmp(cfg->tenancy, az.key_id, tl) != 0) {
            DENY("unknown keyId: the tenancy is not this tenancy");
            goto out;
        }
        for (size_t i = 0; i < cfg->n_users; i++) {
            const emu_user *u = &cfg->users[i];
            if (strlen(u->id) == ul && !memcmp(u->id, a + 1, ul) && !strcmp(u->fingerprint, b + 1)) {
                key = u->key;
                *who = i;
            }
        }
        if (!key) {
            DENY("unknown keyId: no user with that OCID and key fingerprint");
            goto out;
        }
    }

    /* The headers the method must sign (x-date stands in for date, as the
     * service accepts for clients that cannot set Date). */
    bool body_method = !strcmp(req->method, "POST") || !strcmp(req->method, "PUT") || !strcmp(req->method, "PATCH");
    const char *need_body[] = {"content-length", "content-type", "x-content-sha256"};
    const char *date_name = has_word(az.headers, "date") ? "date" : has_word(az.headers, "x-date") ? "x-date" : NULL;
    if (!date_name) {
        DENY("required header date is not signed (headers=\"%s\")", az.headers);
        goto out;
    }
    if (!has_word(az.headers, "(request-target)")) {
        DENY("required header (request-target) is not signed (headers=\"%s\")", az.headers);
        goto out;
    }
    if (!has_word(az.headers, "host")) {
        DENY("required header host is not signed (headers=\"%s\")", az.headers);
        goto out;
    }
    if (body_method) {
        for (int i = 0; i < 3; i++) {
            if (!has_word(az.headers, need_body[i])) {
                DENY("required header %s is not signed for %s (headers=\"%s\")", need_body[i], req->method,
                     az.headers);
                goto out;
            }
        }
    }

    char *ss = NULL;
    lookup_ud lu = {req};
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

    const char *date = emu_request_header(req, date_name);
    time_t ds;
    if (!date || ocisbx_time_parse_rfc1123(date, &ds) != 0) {
        DENY("the date header is not an RFC 1123 GMT date: %s", date);
        goto out;
    }
    int64_t skew = (int64_t)ds - now / 1000;
    if (skew > MAX_SKEW_S || skew < -MAX_SKEW_S) {
        DENY("the date header is more than 5 minutes away from the server's clock: %s", date);
        goto out;
    }
    if (body_method) {
        char sha[45];
        emu_sha256_b64(req->body ? req->body : "", req->body_len, sha);
        const char *claimed = emu_request_header(req, "x-content-sha256");
        if (!claimed || strcmp(claimed, sha) != 0) {
            DENY("x-content-sha256 does not match the SHA-256 of the received body");
            goto out;
        }
        const char *cl = emu_request_header(req, "content-length");
        char lenbuf[32];
        snprintf(lenbuf, sizeof lenbuf, "%zu", req->body_len);
        if (!cl || strcmp(cl, lenbuf) != 0) {
            DENY("content-length does not match the length of the received body (%s bytes)", lenbuf);
            goto out;
        }
    }
    rc = 0;
out:
    ocisbx_authz_clear(&az);
    return rc;
}
