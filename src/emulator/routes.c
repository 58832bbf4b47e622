/* The emulator's route table: ONE place for every [decided] path of
 * docs/wire.md, relative to the /<apiVersion> prefix; plus query decoding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/base.h"

typedef struct route_def {
    const char *method;
    const char *pattern; /* {sandboxId}, {commandId}, {snapshotId}: as the client's table spells them */
    emu_route_id id;
    const char *operation; /* the service's operation name */
} route_def;

static const route_def ROUTES[] = {
    {"POST", "/sandboxes", EMU_R_SANDBOX_CREATE, "CreateSandbox"},
    {"GET", "/sandboxes", EMU_R_SANDBOX_LIST, "ListSandboxes"},
    {"GET", "/sandboxes/{sandboxId}", EMU_R_SANDBOX_GET, "GetSandbox"},
    {"PUT", "/sandboxes/{sandboxId}", EMU_R_SANDBOX_UPDATE, "UpdateSandbox"},
    {"DELETE", "/sandboxes/{sandboxId}", EMU_R_SANDBOX_DELETE, "DeleteSandbox"},
    {"POST", "/sandboxes/{sandboxId}/actions/stop", EMU_R_SANDBOX_STOP, "StopSandbox"},
    {"POST", "/sandboxes/{sandboxId}/actions/extend", EMU_R_SANDBOX_EXTEND, "ExtendSandbox"},
    {"POST", "/sandboxes/{sandboxId}/actions/suspend", EMU_R_SANDBOX_SUSPEND, "SuspendSandbox"},
    {"POST", "/sandboxes/{sandboxId}/actions/resume", EMU_R_SANDBOX_RESUME, "ResumeSandbox"},
    {"POST", "/sandboxes/{sandboxId}/commands", EMU_R_COMMAND_RUN, "RunSandboxCommand"},
    {"GET", "/sandboxes/{sandboxId}/commands", EMU_R_COMMAND_LIST, "ListSandboxCommands"},
    {"POST", "/sandboxes/{sandboxId}/commands/actions/runAndWait", EMU_R_COMMAND_RUN_WAIT, "RunSandboxCommandAndWait"},
    {"POST", "/sandboxes/{sandboxId}/commands/actions/runAndStream", EMU_R_COMMAND_RUN_STREAM, "RunSandboxCommandAndStream"},
    {"GET", "/sandboxes/{sandboxId}/commands/{commandId}", EMU_R_COMMAND_GET, "GetSandboxCommand"},
    {"GET", "/sandboxes/{sandboxId}/commands/{commandId}/output", EMU_R_COMMAND_OUTPUT, "GetSandboxCommandOutput"},
    {"GET", "/sandboxes/{sandboxId}/commands/{commandId}/events", EMU_R_COMMAND_EVENTS, "StreamSandboxCommandEvents"},
    {"POST", "/sandboxes/{sandboxId}/commands/{commandId}/actions/cancel", EMU_R_COMMAND_CANCEL, "CancelSandboxCommand"},
    {"PUT", "/sandboxes/{sandboxId}/files", EMU_R_FILE_WRITE, "WriteSandboxFile"},
    {"GET", "/sandboxes/{sandboxId}/files", EMU_R_FILE_READ, "ReadSandboxFile"},
    {"POST", "/sandboxSnapshots", EMU_R_SNAPSHOT_CREATE, "CreateSandboxSnapshot"},
    {"GET", "/sandboxSnapshots", EMU_R_SNAPSHOT_LIST, "ListSandboxSnapshots"},
    {"GET", "/sandboxSnapshots/{snapshotId}", EMU_R_SNAPSHOT_GET, "GetSandboxSnapshot"},
    {"DELETE", "/sandboxSnapshots/{snapshotId}", EMU_R_SNAPSHOT_DELETE, "DeleteSandboxSnapshot"},
};

char *emu_percent_decode(const char *src, size_t len)
{
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (src[i] == '%') {
            if (i + 2 >= len) {
                free(out);
                return NULL;
            }
            int a = ocisbx_hex_digit(src[i + 1]), b = ocisbx_hex_digit(src[i + 2]);
            if (a < 0 || b < 0 || (a == 0 && b == 0)) {
                free(out);
                return NULL;
            }
            out[o++] = (char)(a * 16 + b);
            i += 2;
        } else if (src[i] == 0) {
            free(out);
            return NULL;
        } else {
            out[o++] = src[i];
        }
    }
    out[o] = 0;
    return out;
}

char *emu_query_get(const char *query, const char *name, bool *bad)
{
    if (!query)
        return NULL;
    size_t nlen = strlen(name);
    const char *p = query;
    while (*p) {
        const char *amp = strchr(p, '&');
        size_t plen = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', plen);
        size_t klen = eq ? (size_t)(eq - p) : plen;
        char *key = emu_percent_decode(p, klen);
        if (key && strlen(key) == nlen && !memcmp(key, name, nlen)) {
            free(key);
            const char *v = eq ? eq + 1 : p + plen;
            size_t vlen = eq ? plen - klen - 1 : 0;
            /* '+' is a space in form encoding; OCI clients percent-encode spaces,
             * so '+' is taken as '+' only when it was encoded; a bare '+' is a space. */
            char *raw = malloc(vlen + 1);
            if (!raw)
                return NULL;
            for (size_t i = 0; i < vlen; i++)
                raw[i] = v[i] == '+' ? ' ' : v[i];
            char *val = emu_percent_decode(raw, vlen);
            free(raw);
            if (!val && bad)
                *bad = true;
            return val;
        }
        free(key);
        if (!amp)
            break;
        p = amp + 1;
    }
    return NULL;
}

/* Matches one segment pattern; copies a parameter segment into its field. */
static bool seg_match(const char *pat, size_t plen, const char *seg, size_t slen, emu_route *out)
{
    if (plen > 2 && pat[0] == '{') {
        char *dst = !strncmp(pat, "{sandboxId}", plen)   ? out->sandbox_id
                    : !strncmp(pat, "{commandId}", plen) ? out->command_id
                                                         : out->snapshot_id;
        if (slen == 0 || slen >= sizeof out->sandbox_id)
            return false;
        char *dec = emu_percent_decode(seg, slen);
        if (!dec)
            return false;
        bool ok = strlen(dec) > 0 && strlen(dec) < sizeof out->sandbox_id && !strchr(dec, '/');
        if (ok)
            strcpy(dst, dec);
        free(dec);
        return ok;
    }
    return plen == slen && !memcmp(pat, seg, slen);
}

static bool path_match(const char *pattern, const char *path, emu_route *out)
{
    const char *p = pattern, *s = path;
    while (*p && *s) {
        if (*p != '/' || *s != '/')
            return false;
        p++;
        s++;
        const char *pe = strchr(p, '/'), *se = strchr(s, '/');
        size_t pl = pe ? (size_t)(pe - p) : strlen(p), sl = se ? (size_t)(se - s) : strlen(s);
        if (!seg_match(p, pl, s, sl, out))
            return false;
        p += pl;
        s += sl;
    }
    return !*p && !*s;
}

int emu_route_match(const char *method, const char *rel_path, emu_route *out)
{
    memset(out, 0, sizeof *out);
    bool path_known = false;
    for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0]; i++) {
        emu_route tmp;
        memset(&tmp, 0, sizeof tmp);
        if (!path_match(ROUTES[i].pattern, rel_path, &tmp))
            continue;
        path_known = true;
        if (strcmp(ROUTES[i].method, method) == 0) {
            *out = tmp;
            out->id = ROUTES[i].id;
            return 0;
        }
    }
    return path_known ? 405 : 404;
}

const char *emu_route_operation(emu_route_id id)
{
    for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0]; i++)
        if (ROUTES[i].id == id)
            return ROUTES[i].operation;
    return NULL;
}

int emu_route_at(size_t i, const char **method, const char **pattern, emu_route_id *id)
{
    if (i >= sizeof ROUTES / sizeof ROUTES[0])
        return -1;
    *method = ROUTES[i].method;
    *pattern = ROUTES[i].pattern;
    *id = ROUTES[i].id;
    return 0;
}
