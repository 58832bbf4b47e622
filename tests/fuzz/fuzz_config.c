/* Fuzz target for the config reader: parse the input as a config file with
 * profile DEFAULT, then with the first profile named in it, and read the
 * usual keys. No crash, no leak, and a failure always sets ECONFIG. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ocisbx/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const keys[] = {"user",   "fingerprint", "key_file",           "tenancy",
                                   "region", "pass_phrase", "security_token_file"};

static void parse_with(const uint8_t *data, size_t size, const char *profile)
{
    ocisbx_config *cfg = NULL;
    int rc = ocisbx_config_parse((const char *)data, size, "fuzz", profile, &cfg);
    if (rc != 0) {
        if (cfg || rc != OCISBX_ECONFIG)
            abort();
        return;
    }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = ocisbx_config_get(cfg, keys[i]);
        if (v)
            (void)strlen(v);
    }
    if (strcmp(ocisbx_config_profile(cfg), profile) != 0)
        abort();
    ocisbx_config_free(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse_with(data, size, "DEFAULT");
    /* the first "[name]" in the input, as the profile */
    const uint8_t *open = memchr(data, '[', size);
    if (!open)
        return 0;
    size_t rest = size - (size_t)(open - data) - 1;
    const uint8_t *close = memchr(open + 1, ']', rest);
    if (!close)
        return 0;
    size_t n = (size_t)(close - open - 1);
    char *profile = malloc(n + 1);
    if (!profile)
        return 0;
    memcpy(profile, open + 1, n);
    profile[n] = '\0';
    /* trim like the reader does; an empty name means DEFAULT */
    char *p = profile;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t len = strlen(p);
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
        p[--len] = '\0';
    if (*p)
        parse_with(data, size, p);
    free(profile);
    return 0;
}
