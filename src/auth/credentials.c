/* The common part of every credential provider: reference counting, the
 * lock that serialises token refreshes, and dispatch by name. */
#include <stdlib.h>
#include <string.h>

#include "auth/credentials_internal.h"
#include "util/internal.h"

int ocisbx_credentials_init(struct ocisbx_credentials *c, const struct ocisbx_credentials_vt *vt)
{
    if (!c || !vt || !vt->get || !vt->destroy || !vt->kind)
        return ocisbx_fail(OCISBX_EINVAL, "credentials: incomplete provider");
    if (pthread_mutex_init(&c->lock, NULL) != 0)
        return ocisbx_fail(OCISBX_ENOMEM, "credentials: cannot create a mutex");
    c->vt = vt;
    c->refs = 1;
    c->region = NULL;
    return 0;
}

int ocisbx_credentials_new(const char *auth, const ocisbx_config *cfg, ocisbx_credentials **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "credentials: no output pointer");
    *out = NULL;
    if (!auth || strcmp(auth, OCISBX_AUTH_API_KEY) == 0 || strcmp(auth, OCISBX_AUTH_SECURITY_TOKEN) == 0) {
        const char *name = auth ? auth : OCISBX_AUTH_API_KEY;
        if (!cfg)
            return ocisbx_fail(OCISBX_EINVAL, "credentials %s: a config profile is needed", name);
        return strcmp(name, OCISBX_AUTH_API_KEY) == 0 ? ocisbx_credentials_api_key_from_config(cfg, out)
                                                      : ocisbx_credentials_session_token_from_config(cfg, out);
    }
    if (strcmp(auth, OCISBX_AUTH_INSTANCE_PRINCIPAL) == 0)
        return ocisbx_credentials_instance_principal(NULL, out);
    if (strcmp(auth, OCISBX_AUTH_RESOURCE_PRINCIPAL) == 0)
        return ocisbx_credentials_resource_principal(out);
    return ocisbx_fail(OCISBX_EINVAL, "credentials: unknown auth '%.64s' (expected %s, %s, %s or %s)",
                       OCISBX_SHOWN(auth), OCISBX_AUTH_API_KEY, OCISBX_AUTH_SECURITY_TOKEN,
                       OCISBX_AUTH_INSTANCE_PRINCIPAL, OCISBX_AUTH_RESOURCE_PRINCIPAL);
}

const char *ocisbx_credentials_kind(const ocisbx_credentials *c)
{
    return c && c->vt ? c->vt->kind : NULL;
}

const char *ocisbx_credentials_region(const ocisbx_credentials *c)
{
    return c ? c->region : NULL;
}

int ocisbx_credentials_get(ocisbx_credentials *c, char **key_id, ocisbx_key **key)
{
    if (key_id)
        *key_id = NULL;
    if (key)
        *key = NULL;
    if (!c || !key_id || !key)
        return ocisbx_fail(OCISBX_EINVAL, "credentials get: NULL argument");
    pthread_mutex_lock(&c->lock);
    int rc = c->vt->get(c, key_id, key);
    pthread_mutex_unlock(&c->lock);
    if (rc) {
        /* a provider that failed half-way must not leak what it handed out */
        ocisbx_free_secret(*key_id);
        ocisbx_key_free(*key);
        *key_id = NULL;
        *key = NULL;
    }
    return rc;
}

bool ocisbx_credentials_can_refresh(const struct ocisbx_credentials *c)
{
    return c && c->vt && c->vt->refresh;
}

int ocisbx_credentials_refresh(ocisbx_credentials *c)
{
    if (!c)
        return ocisbx_fail(OCISBX_EINVAL, "credentials refresh: NULL argument");
    if (!c->vt->refresh)
        return 0;
    pthread_mutex_lock(&c->lock);
    int rc = c->vt->refresh(c);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

ocisbx_credentials *ocisbx_credentials_ref(ocisbx_credentials *c)
{
    if (!c)
        return NULL;
    pthread_mutex_lock(&c->lock);
    c->refs++;
    pthread_mutex_unlock(&c->lock);
    return c;
}

void ocisbx_credentials_free(ocisbx_credentials *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    int left = --c->refs;
    pthread_mutex_unlock(&c->lock);
    if (left > 0)
        return;
    /* region first and cleared: a destroy() that frees it too sees NULL */
    free(c->region);
    c->region = NULL;
    c->vt->destroy(c);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

int ocisbx_credentials_session_out(const char *token, ocisbx_key *k, char **key_id, ocisbx_key **key)
{
    char *id = ocisbx_asprintf("ST$%s", token);
    if (!id)
        return ocisbx_fail_nomem();
    *key_id = id;
    *key = ocisbx_key_ref(k);
    return 0;
}
