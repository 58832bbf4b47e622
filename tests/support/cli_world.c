#include "cli_world.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_keys.h"

static cli_world *scratch(const char *tag)
{
    cli_world *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    snprintf(w->scratch, sizeof w->scratch, "/tmp/%s_XXXXXX", tag);
    if (!mkdtemp(w->scratch)) {
        free(w);
        return NULL;
    }
    return w;
}

int cli_world_local(const char *tag, cli_world **out)
{
    cli_world *w = scratch(tag);
    if (!w)
        return -1;
    *out = w;
    snprintf(w->dir, sizeof w->dir, "/tmp/%s_ws_XXXXXX", tag);
    if (!mkdtemp(w->dir)) {
        w->dir[0] = '\0';
        return -1;
    }
    if (geteuid() == 0 && chown(w->dir, 65534, 65534) != 0)
        return -1;
    return 0;
}

int cli_world_oci(const char *tag, cli_world **out)
{
    cli_world *w = scratch(tag);
    if (!w)
        return -1;
    *out = w;
    emu_fixture_options eo = {0};
    eo.extra_yaml = "limits:\n  create_delay_ms: 20\n  stop_delay_ms: 10\n";
    if (emu_fixture_start(&eo, &w->emu) ||
        emu_fixture_new_sandbox(w->emu, NULL, NULL, w->sandbox, sizeof w->sandbox) != 0)
        return -1;
    return 0;
}

int cli_world_free(cli_world *w)
{
    if (!w)
        return 0;
    int rc = 0;
    if (w->emu) {
        if (emu_fixture_stop(w->emu))
            rc = -1;
        emu_fixture_free(w->emu);
    }
    if (w->dir[0])
        test_rm_rf(w->dir);
    test_rm_rf(w->scratch);
    free(w);
    return rc;
}

char *cli_world_file(const cli_world *w, const char *name)
{
    if (!w->emu) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", w->dir, name);
        FILE *f = fopen(path, "rb");
        if (!f)
            return NULL;
        char *b = calloc(1, 65536);
        size_t n = b ? fread(b, 1, 65535, f) : 0;
        if (b)
            b[n] = 0;
        fclose(f);
        return b;
    }
    char path[512];
    snprintf(path, sizeof path, "/sandboxes/%s/files?filePath=%%2Fworkspace%%2F%s", w->sandbox, name);
    emu_fixture_result res;
    assert_int_equal(emu_fixture_request(w->emu, "GET", path, NULL, &res), 0);
    char *b = NULL;
    if (res.status == 200)
        b = strdup(res.body);
    else if (res.status != 404)
        fail_msg("GET %s: %ld %s", path, res.status, res.body);
    emu_fixture_result_free(&res);
    return b;
}
