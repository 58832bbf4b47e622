/* The one loopback rule: the transport's plain-http check, the CLI's opt-in,
 * the instance principal's federation URL and the emulator's --listen. */
#include <arpa/inet.h>
#include <string.h>

#include "util/internal.h"

bool ocisbx_host_is_loopback(const char *host)
{
    if (!host || !*host)
        return false;
    size_t n = strlen(host);
    if (ocisbx_strcasecmp(host, "localhost") == 0 || (n > 10 && ocisbx_strcasecmp(host + n - 10, ".localhost") == 0))
        return true;
    unsigned char addr[16];
    if (inet_pton(AF_INET, host, addr) == 1)
        return addr[0] == 127;
    if (inet_pton(AF_INET6, host, addr) == 1) {
        static const unsigned char one[16] = {[15] = 1};
        return memcmp(addr, one, 16) == 0;
    }
    return false;
}

bool ocisbx_url_host_is_loopback(const char *url)
{
    const char *p = url ? strstr(url, "://") : NULL;
    if (!p)
        return false;
    p += 3;
    size_t n = strcspn(p, "/?#");
    char auth[256];
    if (n == 0 || n >= sizeof auth)
        return false;
    memcpy(auth, p, n);
    auth[n] = '\0';
    char *at = strrchr(auth, '@');
    char *host = at ? at + 1 : auth;
    if (*host == '[') {
        char *rb = strchr(host, ']');
        if (!rb || (rb[1] != '\0' && rb[1] != ':'))
            return false;
        *rb = '\0';
        host++;
    } else {
        char *colon = strchr(host, ':');
        if (colon)
            *colon = '\0';
    }
    return ocisbx_host_is_loopback(host);
}
