/* Reference-counted global initialisation (libcurl's global state). */
#include <pthread.h>

#include <curl/curl.h>

#include "util/internal.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count;
static bool implicit_done;

const char *ocisbx_version(void)
{
    return OCISBX_VERSION_STRING;
}

unsigned int ocisbx_features(void)
{
    unsigned int f = OCISBX_FEATURE_LOCAL_BACKEND; /* built on every platform the library builds on */
#ifdef OCISBX_HAVE_YAML
    f |= OCISBX_FEATURE_YAML_POLICY;
#endif
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    if (v && (v->features & CURL_VERSION_HTTP2))
        f |= OCISBX_FEATURE_HTTP2;
    return f;
}

int ocisbx_global_init(void)
{
    int rc = 0;
    pthread_mutex_lock(&init_lock);
    if (init_count == 0 && !implicit_done) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            rc = ocisbx_fail(OCISBX_ETRANSPORT, "libcurl global initialisation failed");
    }
    if (rc == 0)
        init_count++;
    pthread_mutex_unlock(&init_lock);
    return rc;
}

void ocisbx_global_cleanup(void)
{
    pthread_mutex_lock(&init_lock);
    if (init_count > 0 && --init_count == 0 && !implicit_done)
        curl_global_cleanup();
    pthread_mutex_unlock(&init_lock);
}

int ocisbx_global_ensure(void)
{
    int rc = 0;
    pthread_mutex_lock(&init_lock);
    if (init_count == 0 && !implicit_done) {
        /* Nobody called ocisbx_global_init: initialise for the process's life. */
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            rc = ocisbx_fail(OCISBX_ETRANSPORT, "libcurl global initialisation failed");
        else
            implicit_done = true;
    }
    pthread_mutex_unlock(&init_lock);
    return rc;
}
