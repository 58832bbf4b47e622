/* Region names: short codes to full names, and the realm's domain.
 * The table follows OCI's published region list (the SDKs' region tables). */
#include <stdlib.h>
#include <string.h>

#include "ocisbx/auth.h"
#include "util/internal.h"

struct region {
    const char *code;
    const char *name;
    const char *realm;
};

static const struct region regions[] = {
    /* oc1: commercial */
    {"yny", "ap-chuncheon-1", "oc1"},
    {"hyd", "ap-hyderabad-1", "oc1"},
    {"mel", "ap-melbourne-1", "oc1"},
    {"bom", "ap-mumbai-1", "oc1"},
    {"kix", "ap-osaka-1", "oc1"},
    {"icn", "ap-seoul-1", "oc1"},
    {"syd", "ap-sydney-1", "oc1"},
    {"nrt", "ap-tokyo-1", "oc1"},
    {"yul", "ca-montreal-1", "oc1"},
    {"yyz", "ca-toronto-1", "oc1"},
    {"ams", "eu-amsterdam-1", "oc1"},
    {"fra", "eu-frankfurt-1", "oc1"},
    {"zrh", "eu-zurich-1", "oc1"},
    {"jed", "me-jeddah-1", "oc1"},
    {"dxb", "me-dubai-1", "oc1"},
    {"gru", "sa-saopaulo-1", "oc1"},
    {"cwl", "uk-cardiff-1", "oc1"},
    {"lhr", "uk-london-1", "oc1"},
    {"iad", "us-ashburn-1", "oc1"},
    {"phx", "us-phoenix-1", "oc1"},
    {"sjc", "us-sanjose-1", "oc1"},
    {"vcp", "sa-vinhedo-1", "oc1"},
    {"scl", "sa-santiago-1", "oc1"},
    {"mtz", "il-jerusalem-1", "oc1"},
    {"mrs", "eu-marseille-1", "oc1"},
    {"sin", "ap-singapore-1", "oc1"},
    {"auh", "me-abudhabi-1", "oc1"},
    {"lin", "eu-milan-1", "oc1"},
    {"arn", "eu-stockholm-1", "oc1"},
    {"jnb", "af-johannesburg-1", "oc1"},
    {"cdg", "eu-paris-1", "oc1"},
    {"qro", "mx-queretaro-1", "oc1"},
    {"mad", "eu-madrid-1", "oc1"},
    {"ord", "us-chicago-1", "oc1"},
    {"mty", "mx-monterrey-1", "oc1"},
    {"aga", "us-saltlake-2", "oc1"},
    {"bog", "sa-bogota-1", "oc1"},
    {"vap", "sa-valparaiso-1", "oc1"},
    {"xsp", "ap-singapore-2", "oc1"},
    {"ruh", "me-riyadh-1", "oc1"},
    /* oc2, oc3: US government */
    {"lfi", "us-langley-1", "oc2"},
    {"luf", "us-luke-1", "oc2"},
    {"ric", "us-gov-ashburn-1", "oc3"},
    {"pia", "us-gov-chicago-1", "oc3"},
    {"tus", "us-gov-phoenix-1", "oc3"},
    /* oc4: UK government */
    {"ltn", "uk-gov-london-1", "oc4"},
    {"brs", "uk-gov-cardiff-1", "oc4"},
    /* oc8: Japan */
    {"nja", "ap-chiyoda-1", "oc8"},
    {"ukb", "ap-ibaraki-1", "oc8"},
};

static const struct {
    const char *realm;
    const char *domain;
} realms[] = {
    {"oc1", "oraclecloud.com"},   {"oc2", "oraclegovcloud.com"}, {"oc3", "oraclegovcloud.com"},
    {"oc4", "oraclegovcloud.uk"}, {"oc8", "oraclecloud8.com"},
};

#define N_REGIONS (sizeof regions / sizeof regions[0])
#define N_REALMS (sizeof realms / sizeof realms[0])

/* The region form: two letters, then one or more lowercase words, then a
 * number: "us-phoenix-1", "us-gov-ashburn-1". */
static bool is_region_form(const char *s)
{
    size_t n = strlen(s);
    if (n < 6 || n > 64)
        return false;
    if (!(s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z' && s[2] == '-'))
        return false;
    size_t last_dash = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '-')
            last_dash = i;
    if (last_dash == 2 || last_dash + 1 >= n)
        return false;
    for (size_t i = last_dash + 1; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    /* middle: words of [a-z0-9] separated by single dashes */
    bool prev_dash = true;
    for (size_t i = 3; i < last_dash; i++) {
        char ch = s[i];
        if (ch == '-') {
            if (prev_dash)
                return false;
            prev_dash = true;
        } else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
            prev_dash = false;
        } else {
            return false;
        }
    }
    return !prev_dash;
}

int ocisbx_region_resolve(const char *name_or_code, char **full_name)
{
    if (!full_name)
        return ocisbx_fail(OCISBX_EINVAL, "region: no output pointer");
    *full_name = NULL;
    if (!name_or_code || !*name_or_code)
        return ocisbx_fail(OCISBX_ECONFIG, "region: empty region name");
    size_t n = strlen(name_or_code);
    if (n > 64)
        return ocisbx_fail(OCISBX_ECONFIG, "region '%.64s...': too long for a region name",
                           OCISBX_SHOWN(name_or_code));
    char lower[65];
    for (size_t i = 0; i <= n; i++) {
        char ch = name_or_code[i];
        lower[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    const char *result = NULL;
    for (size_t i = 0; i < N_REGIONS && !result; i++)
        if (strcmp(lower, regions[i].code) == 0 || strcmp(lower, regions[i].name) == 0)
            result = regions[i].name;
    if (!result && is_region_form(lower))
        result = lower;
    if (!result)
        return ocisbx_fail(OCISBX_ECONFIG,
                           "region '%s': neither a region name (like us-phoenix-1) nor a known "
                           "short code (like phx)",
                           OCISBX_SHOWN(name_or_code));
    *full_name = ocisbx_strdup(result);
    return *full_name ? 0 : ocisbx_fail_nomem();
}

const char *ocisbx_region_domain(const char *full_name)
{
    const char *realm = "oc1";
    if (full_name)
        for (size_t i = 0; i < N_REGIONS; i++)
            if (ocisbx_strcasecmp(full_name, regions[i].name) == 0) {
                realm = regions[i].realm;
                break;
            }
    for (size_t i = 0; i < N_REALMS; i++)
        if (strcmp(realm, realms[i].realm) == 0)
            return realms[i].domain;
    return realms[0].domain;
}
