/* The credential provider interface (internal): every provider embeds
 * `struct ocisbx_credentials` as its first member and fills the vtable. */
#ifndef OCISBX_AUTH_CREDENTIALS_INTERNAL_H
#define OCISBX_AUTH_CREDENTIALS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "ocisbx/auth.h"

struct ocisbx_credentials_vt {
    const char *kind; /* OCISBX_AUTH_* */
    /* Current keyId (malloc'd; wiped by the caller with ocisbx_free_secret)
     * and a new reference to the key. Refresh first if near expiry.
     * Called with c->lock held. */
    int (*get)(struct ocisbx_credentials *c, char **key_id, ocisbx_key **key);
    /* Forced refresh (after a 401). Called with c->lock held. NULL: no-op. */
    int (*refresh)(struct ocisbx_credentials *c);
    /* Frees the provider's own state (wiping secrets), not c itself. */
    void (*destroy)(struct ocisbx_credentials *c);
};

struct ocisbx_credentials {
    const struct ocisbx_credentials_vt *vt;
    pthread_mutex_t lock;
    int refs;     /* protected by lock */
    char *region; /* may be NULL; set by the provider */
};

/* True when the provider can obtain new credentials (its vtable has a
 * refresh): only then is a request re-sent after a 401. An API key's
 * refresh changes nothing, so re-sending would only repeat the 401. */
bool ocisbx_credentials_can_refresh(const struct ocisbx_credentials *c);

/* Initialise the common part (refs = 1, lock). */
int ocisbx_credentials_init(struct ocisbx_credentials *c, const struct ocisbx_credentials_vt *vt);

/* What a session-token provider's get returns: keyId "ST$<token>" and a
 * new reference to the key. */
int ocisbx_credentials_session_out(const char *token, ocisbx_key *k, char **key_id, ocisbx_key **key);

/* ocisbx_config_load, and *profile_missing (may be NULL) true when it
 * failed because the file has no such profile (rather than being unreadable
 * or malformed). */
int ocisbx_config_load_checked(const char *path, const char *profile, ocisbx_config **out, bool *profile_missing);

#endif
