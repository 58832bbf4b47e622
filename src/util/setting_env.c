/* The environment as the settings read it, and the home directory. */
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/internal.h"

/* The library's variable first, then the OCI CLI's (ours win when both are set). */
const char *const ocisbx_config_file_vars[] = {"OCI_CONFIG_FILE", "OCI_CLI_CONFIG_FILE", NULL};

const char *ocisbx_env_first(const char *const *names, const char **which)
{
    if (which)
        *which = NULL;
    for (const char *const *n = names; n && *n; n++) {
        const char *v = getenv(*n);
        if (v && *v) {
            if (which)
                *which = *n;
            return v;
        }
    }
    return NULL;
}

const char *ocisbx_home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h)
        return h;
    /* HOME unset (a service, su -, env -i): the account's own directory */
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir && pw->pw_dir[0] ? pw->pw_dir : NULL;
}

char *ocisbx_expand_home(const char *path)
{
    if (path[0] == '~' && (path[1] == '\0' || path[1] == '/')) {
        const char *home = ocisbx_home_dir();
        if (home)
            return ocisbx_asprintf("%s%s", home, path + 1);
    }
    return ocisbx_strdup(path);
}
