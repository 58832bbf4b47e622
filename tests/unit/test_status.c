/* The status codes come from one list (OCISBX_STATUS_MAP): every code has a
 * distinct name and message, unknown values get fixed texts, the values are
 * the published ones, and docs/errors.md lists exactly the map. The version
 * macros agree with ocisbx_version() and with CMake's project(VERSION). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ocisbx/ocisbx.h"

typedef struct entry {
    const char *name;
    int value;
    const char *message;
} entry;

#define ENTRY(name, value, message) {"OCISBX_" #name, value, message},
static const entry map[] = {OCISBX_STATUS_MAP(ENTRY)};
#undef ENTRY
#define NMAP (sizeof map / sizeof map[0])

static void test_names_and_messages(void **state)
{
    (void)state;
    assert_int_equal(NMAP, 23);
    for (size_t i = 0; i < NMAP; i++) {
        assert_string_equal(ocisbx_status_name(map[i].value), map[i].name);
        assert_string_equal(ocisbx_strerror(map[i].value), map[i].message);
        assert_string_not_equal(map[i].message, "unknown error");
        for (size_t k = 0; k < i; k++) {
            assert_int_not_equal(map[k].value, map[i].value);
            assert_string_not_equal(map[k].name, map[i].name);
            assert_string_not_equal(map[k].message, map[i].message);
        }
    }
    /* values are stable: spot checks of the published ones */
    assert_int_equal(OCISBX_OK, 0);
    assert_int_equal(OCISBX_EINVAL, -1);
    assert_int_equal(OCISBX_ECANCELED, -7);
    assert_int_equal(OCISBX_ETRANSPORT, -13);
    assert_int_equal(OCISBX_EFORBIDDEN, -19);
    assert_string_equal(ocisbx_status_name(OCISBX_ENOTFOUND), "OCISBX_ENOTFOUND");
    assert_string_equal(ocisbx_strerror(OCISBX_ENOTFOUND), "not found");
}

static void test_unknown(void **state)
{
    (void)state;
    const int unknown[] = {1, -23, 42, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_string_equal(ocisbx_strerror(unknown[i]), "unknown error");
        assert_string_equal(ocisbx_status_name(unknown[i]), "OCISBX_UNKNOWN");
    }
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    static char buf[256 * 1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* docs/errors.md has one table row per code, "| `NAME` | value | `message` |",
 * and no row for a code that does not exist. */
static void test_docs_list_the_map(void **state)
{
    (void)state;
    const char *doc = read_all(OCISBX_SOURCE_DIR "/docs/errors.md");
    for (size_t i = 0; i < NMAP; i++) {
        char row[160];
        snprintf(row, sizeof row, "| `%s` | %d | %s |", map[i].name, map[i].value, map[i].message);
        if (!strstr(doc, row))
            fail_msg("docs/errors.md lacks the row \"%s\"", row);
    }
    size_t rows = 0;
    for (const char *p = doc; (p = strstr(p, "\n| `OCISBX_")) != NULL; p++)
        rows++;
    assert_int_equal(rows, NMAP);
}

static void test_version(void **state)
{
    (void)state;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", OCISBX_VERSION_MAJOR, OCISBX_VERSION_MINOR, OCISBX_VERSION_PATCH);
    assert_string_equal(OCISBX_VERSION_STRING, want);
    assert_string_equal(ocisbx_version(), OCISBX_VERSION_STRING);
    assert_int_equal(OCISBX_VERSION_NUM,
                     (OCISBX_VERSION_MAJOR << 16) | (OCISBX_VERSION_MINOR << 8) | OCISBX_VERSION_PATCH);
    assert_true(OCISBX_VERSION_MINOR < 256 && OCISBX_VERSION_PATCH < 256);
    /* the one source: project(... VERSION x.y.z ...) in CMakeLists.txt */
    const char *cm = read_all(OCISBX_SOURCE_DIR "/CMakeLists.txt");
    const char *p = strstr(cm, "project(");
    assert_non_null(p);
    p = strstr(p, " VERSION ");
    assert_non_null(p);
    char got[32];
    assert_int_equal(sscanf(p, " VERSION %31s", got), 1);
    assert_string_equal(got, ocisbx_version());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_messages),
        cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_docs_list_the_map),
        cmocka_unit_test(test_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
