/* The OCI error body {"code": "...", "message": "..."}: untrusted input, so
 * anything else (HTML from a proxy, truncated JSON) just yields nothing. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "http/http_internal.h"

#define FIELD_MAX 512

/* A copy fit for a one-line message: control characters become spaces. */
static char *clean_copy(const char *s)
{
    size_t n = strlen(s);
    if (n > FIELD_MAX)
        n = FIELD_MAX;
    char *c = ocisbx_strndup(s, n);
    if (!c)
        return NULL;
    for (char *p = c; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    return c;
}

int ocisbx_http_parse_error_body(const char *body, size_t len, char **code, char **message)
{
    *code = NULL;
    *message = NULL;
    if (!body || len == 0)
        return 0;
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (!root)
        return 0;
    int rc = 0;
    if (cJSON_IsObject(root)) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "code");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "message");
        if (cJSON_IsString(c) && c->valuestring && c->valuestring[0] && !(*code = clean_copy(c->valuestring)))
            rc = ocisbx_fail_nomem();
        if (rc == 0 && cJSON_IsString(m) && m->valuestring && !(*message = clean_copy(m->valuestring)))
            rc = ocisbx_fail_nomem();
    }
    cJSON_Delete(root);
    if (rc) {
        free(*code);
        free(*message);
        *code = *message = NULL;
    }
    return rc;
}
