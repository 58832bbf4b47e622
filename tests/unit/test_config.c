/* The config file reader: inheritance, comments, ~, OCI_CONFIG_FILE, profile
 * selection, and every named error with bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ocisbx/auth.h"
#include "test_assert.h"
#include "test_keys.h"

static char tmpdir[256];

static char *path_in(const char *name)
{
    static char buf[4][512];
    static int slot;
    slot = (slot + 1) % 4;
    snprintf(buf[slot], sizeof buf[slot], "%s/%s", tmpdir, name);
    return buf[slot];
}

static void write_file(const char *path, const char *text)
{
    assert_int_equal(test_write_text(path, text), 0);
}

static ocisbx_config *parse_ok(const char *text, const char *profile)
{
    ocisbx_config *cfg = NULL;
    int rc = ocisbx_config_parse(text, strlen(text), "test.ini", profile, &cfg);
    if (rc)
        fail_msg("parse failed: %s", test_last_msg());
    assert_non_null(cfg);
    return cfg;
}

static void parse_fails(const char *text, const char *profile, const char *needle)
{
    ocisbx_config *cfg = (ocisbx_config *)(uintptr_t)1;
    assert_int_equal(ocisbx_config_parse(text, strlen(text), "test.ini", profile, &cfg), OCISBX_ECONFIG);
    assert_null(cfg);
    assert_int_equal(ocisbx_error_code(ocisbx_error_last()), OCISBX_ECONFIG);
    test_assert_msg_has("test.ini");
    test_assert_msg_has(needle);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_config.XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    setenv("HOME", tmpdir, 1);
    unsetenv("OCI_CONFIG_FILE");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return test_rm_rf(tmpdir);
}

static const char basic[] = "[DEFAULT]\n"
                            "region = us-ashburn-1\n"
                            "tenancy = ocid1.tenancy.oc1..aaaa\n"
                            "user = ocid1.user.oc1..default\n"
                            "\n"
                            "[ADMIN]\n"
                            "user = ocid1.user.oc1..admin\n"
                            "fingerprint = 00:11\n"
                            "\n"
                            "[OTHER]\n"
                            "region = eu-frankfurt-1\n";

static void test_inheritance(void **state)
{
    (void)state;
    ocisbx_config *cfg = parse_ok(basic, "ADMIN");
    assert_string_equal(ocisbx_config_profile(cfg), "ADMIN");
    assert_string_equal(ocisbx_config_file(cfg), "test.ini");
    assert_string_equal(ocisbx_config_get(cfg, "user"), "ocid1.user.oc1..admin");      /* own */
    assert_string_equal(ocisbx_config_get(cfg, "region"), "us-ashburn-1");             /* inherited */
    assert_string_equal(ocisbx_config_get(cfg, "tenancy"), "ocid1.tenancy.oc1..aaaa"); /* inherited */
    assert_string_equal(ocisbx_config_get(cfg, "fingerprint"), "00:11");
    assert_null(ocisbx_config_get(cfg, "key_file"));
    /* keys are stored lowercase and found in any case */
    assert_string_equal(ocisbx_config_get(cfg, "USER"), "ocid1.user.oc1..admin");
    assert_string_equal(ocisbx_config_get(cfg, "Region"), "us-ashburn-1");
    assert_string_equal(ocisbx_config_get(cfg, "FingerPrint"), "00:11");
    assert_null(ocisbx_config_get(cfg, "KEY_FILE"));
    assert_null(ocisbx_config_get(cfg, NULL));
    ocisbx_config_free(cfg);

    /* another profile's values never leak in */
    cfg = parse_ok(basic, "OTHER");
    assert_string_equal(ocisbx_config_get(cfg, "region"), "eu-frankfurt-1");
    assert_string_equal(ocisbx_config_get(cfg, "user"), "ocid1.user.oc1..default");
    assert_null(ocisbx_config_get(cfg, "fingerprint"));
    ocisbx_config_free(cfg);

    /* profile NULL or "" is DEFAULT */
    cfg = parse_ok(basic, NULL);
    assert_string_equal(ocisbx_config_profile(cfg), "DEFAULT");
    assert_string_equal(ocisbx_config_get(cfg, "user"), "ocid1.user.oc1..default");
    assert_null(ocisbx_config_get(cfg, "fingerprint"));
    ocisbx_config_free(cfg);
    cfg = parse_ok(basic, "");
    assert_string_equal(ocisbx_config_profile(cfg), "DEFAULT");
    ocisbx_config_free(cfg);

    /* a profile without a DEFAULT section */
    cfg = parse_ok("[ONLY]\nuser=u\n", "ONLY");
    assert_string_equal(ocisbx_config_get(cfg, "user"), "u");
    ocisbx_config_free(cfg);

    /* NULL is a no-op / NULL everywhere */
    ocisbx_config_free(NULL);
    assert_null(ocisbx_config_get(NULL, "user"));
    assert_null(ocisbx_config_file(NULL));
    assert_null(ocisbx_config_profile(NULL));
}

static void test_syntax(void **state)
{
    (void)state;
    const char text[] = "# a comment\n"
                        "; another comment\n"
                        "   # an indented comment\n"
                        "[DEFAULT]\r\n"
                        "  user   =   spaced value with inner  spaces   \r\n"
                        "\tTenancy\t=\tT\n"
                        "empty =\n"
                        "eq = a=b=c\n"
                        "hash = value # not a comment\n"
                        "\n"
                        "[ spaced ]\n"
                        "x = 1"; /* no final newline */
    ocisbx_config *cfg = parse_ok(text, NULL);
    assert_string_equal(ocisbx_config_get(cfg, "user"), "spaced value with inner  spaces");
    assert_string_equal(ocisbx_config_get(cfg, "tenancy"), "T"); /* keys are case-insensitive */
    assert_string_equal(ocisbx_config_get(cfg, "empty"), "");
    assert_string_equal(ocisbx_config_get(cfg, "eq"), "a=b=c");
    assert_string_equal(ocisbx_config_get(cfg, "hash"), "value # not a comment");
    assert_null(ocisbx_config_get(cfg, "x"));
    ocisbx_config_free(cfg);

    /* a UTF-8 byte order mark is skipped */
    cfg = parse_ok("\xEF\xBB\xBF[DEFAULT]\nuser = bom\n", NULL);
    assert_string_equal(ocisbx_config_get(cfg, "user"), "bom");
    ocisbx_config_free(cfg);

    cfg = parse_ok(text, "spaced");
    assert_string_equal(ocisbx_config_get(cfg, "x"), "1");
    assert_string_equal(ocisbx_config_get(cfg, "tenancy"), "T");
    ocisbx_config_free(cfg);
}

static void test_tilde(void **state)
{
    (void)state;
    char want[600];
    const char text[] = "[DEFAULT]\n"
                        "key_file = ~/.oci/key.pem\n"
                        "security_token_file = ~/.oci/token\n"
                        "other = ~/not-expanded\n"
                        "[P]\n"
                        "security_token_file = ~\n"
                        "[Q]\n"
                        "key_file = ~someone/key.pem\n"
                        "[R]\n"
                        "key_file = /abs/~/key.pem\n";
    ocisbx_config *cfg = parse_ok(text, NULL);
    snprintf(want, sizeof want, "%s/.oci/key.pem", tmpdir);
    assert_string_equal(ocisbx_config_get(cfg, "key_file"), want);
    snprintf(want, sizeof want, "%s/.oci/token", tmpdir);
    assert_string_equal(ocisbx_config_get(cfg, "security_token_file"), want);
    assert_string_equal(ocisbx_config_get(cfg, "other"), "~/not-expanded");
    ocisbx_config_free(cfg);

    cfg = parse_ok(text, "P");
    assert_string_equal(ocisbx_config_get(cfg, "security_token_file"), tmpdir);
    snprintf(want, sizeof want, "%s/.oci/key.pem", tmpdir); /* inherited and expanded */
    assert_string_equal(ocisbx_config_get(cfg, "key_file"), want);
    ocisbx_config_free(cfg);

    cfg = parse_ok(text, "Q");
    assert_string_equal(ocisbx_config_get(cfg, "key_file"), "~someone/key.pem");
    ocisbx_config_free(cfg);
    cfg = parse_ok(text, "R");
    assert_string_equal(ocisbx_config_get(cfg, "key_file"), "/abs/~/key.pem");
    ocisbx_config_free(cfg);
}

static void test_load_paths(void **state)
{
    (void)state;
    ocisbx_config *cfg = NULL;
    /* the default: ~/.oci/config */
    char dir[600];
    snprintf(dir, sizeof dir, "%s/.oci", tmpdir);
    assert_int_equal(mkdir(dir, 0700), 0);
    write_file(path_in(".oci/config"), "[DEFAULT]\nwhich = home\n[B]\nwhich = home-b\n");
    write_file(path_in("env.ini"), "[DEFAULT]\nwhich = env\n");
    write_file(path_in("arg.ini"), "[DEFAULT]\nwhich = arg\n");

    assert_int_equal(ocisbx_config_load(NULL, NULL, &cfg), 0);
    assert_string_equal(ocisbx_config_get(cfg, "which"), "home");
    assert_string_equal(ocisbx_config_file(cfg), path_in(".oci/config"));
    ocisbx_config_free(cfg);
    assert_int_equal(ocisbx_config_load(NULL, "B", &cfg), 0);
    assert_string_equal(ocisbx_config_get(cfg, "which"), "home-b");
    ocisbx_config_free(cfg);

    /* OCI_CONFIG_FILE wins over the default, an argument over both */
    setenv("OCI_CONFIG_FILE", path_in("env.ini"), 1);
    assert_int_equal(ocisbx_config_load(NULL, NULL, &cfg), 0);
    assert_string_equal(ocisbx_config_get(cfg, "which"), "env");
    ocisbx_config_free(cfg);
    assert_int_equal(ocisbx_config_load(path_in("arg.ini"), NULL, &cfg), 0);
    assert_string_equal(ocisbx_config_get(cfg, "which"), "arg");
    ocisbx_config_free(cfg);
    /* ~ in OCI_CONFIG_FILE and in the argument */
    setenv("OCI_CONFIG_FILE", "~/env.ini", 1);
    assert_int_equal(ocisbx_config_load(NULL, NULL, &cfg), 0);
    assert_string_equal(ocisbx_config_get(cfg, "which"), "env");
    assert_string_equal(ocisbx_config_file(cfg), path_in("env.ini"));
    ocisbx_config_free(cfg);
    assert_int_equal(ocisbx_config_load("~/arg.ini", NULL, &cfg), 0);
    assert_string_equal(ocisbx_config_get(cfg, "which"), "arg");
    ocisbx_config_free(cfg);
    /* an empty OCI_CONFIG_FILE is ignored */
    setenv("OCI_CONFIG_FILE", "", 1);
    assert_int_equal(ocisbx_config_load(NULL, NULL, &cfg), 0);
    assert_string_equal(ocisbx_config_get(cfg, "which"), "home");
    ocisbx_config_free(cfg);
    unsetenv("OCI_CONFIG_FILE");
}

static void test_load_errors(void **state)
{
    (void)state;
    ocisbx_config *cfg = NULL;
    /* not found names the file */
    assert_int_equal(ocisbx_config_load(path_in("nope.ini"), NULL, &cfg), OCISBX_ECONFIG);
    assert_null(cfg);
    test_assert_msg_has(path_in("nope.ini"));
    test_assert_msg_has("not found");
    setenv("OCI_CONFIG_FILE", path_in("missing-env.ini"), 1);
    assert_int_equal(ocisbx_config_load(NULL, NULL, &cfg), OCISBX_ECONFIG);
    test_assert_msg_has(path_in("missing-env.ini"));
    unsetenv("OCI_CONFIG_FILE");

    /* a directory is not a config file */
    assert_int_equal(ocisbx_config_load(tmpdir, NULL, &cfg), OCISBX_ECONFIG);
    test_assert_msg_has(tmpdir);

    /* unreadable (root reads anything: then only check it loads) */
    write_file(path_in("secret.ini"), "[DEFAULT]\nuser = u\n");
    assert_int_equal(chmod(path_in("secret.ini"), 0), 0);
    int rc = ocisbx_config_load(path_in("secret.ini"), NULL, &cfg);
    if (geteuid() != 0) {
        assert_int_equal(rc, OCISBX_ECONFIG);
        test_assert_msg_has(path_in("secret.ini"));
        test_assert_msg_has("cannot open");
    } else {
        assert_int_equal(rc, 0);
        ocisbx_config_free(cfg);
        cfg = NULL;
    }

    /* profile not found, from a file: names file, profile and the profiles there */
    write_file(path_in("profiles.ini"), basic);
    assert_int_equal(ocisbx_config_load(path_in("profiles.ini"), "NOPE", &cfg), OCISBX_ECONFIG);
    test_assert_msg_has(path_in("profiles.ini"));
    test_assert_msg_has("[NOPE] not found");
    test_assert_msg_has("DEFAULT, ADMIN, OTHER");

    assert_int_equal(ocisbx_config_load(NULL, NULL, NULL), OCISBX_EINVAL);
    assert_int_equal(ocisbx_config_parse("", 0, NULL, NULL, NULL), OCISBX_EINVAL);
    assert_int_equal(ocisbx_config_parse(NULL, 3, NULL, NULL, &cfg), OCISBX_EINVAL);
}

static void test_profile_errors(void **state)
{
    (void)state;
    parse_fails(basic, "admin", "profile [admin] not found"); /* names are case-sensitive */
    parse_fails("", NULL, "profile [DEFAULT] not found (the file has no profiles)");
    parse_fails("# only a comment\n", "X", "the file has no profiles");
    parse_fails("[A]\nuser = u\n", NULL, "profile [DEFAULT] not found (profiles there: A)");
    /* the memory name in messages */
    ocisbx_config *cfg = NULL;
    assert_int_equal(ocisbx_config_parse("", 0, NULL, NULL, &cfg), OCISBX_ECONFIG);
    test_assert_msg_has("<memory>");
}

static void test_malformed_lines(void **state)
{
    (void)state;
    parse_fails("[DEFAULT]\nuser = u\njust some words\n", NULL, "test.ini:3: malformed line");
    parse_fails("[DEFAULT]\n= value\n", NULL, "test.ini:2: malformed line (no key before '=')");
    parse_fails("[DEFAULT\nuser = u\n", NULL, "test.ini:1: malformed section header");
    parse_fails("[DEFAULT] trailing\n", NULL, "test.ini:1: malformed section header");
    parse_fails("[a[b]]\n", NULL, "test.ini:1: malformed section header");
    parse_fails("\n\n[ ]\n", NULL, "test.ini:3: empty section name");
    parse_fails("user = u\n[DEFAULT]\n", NULL, "test.ini:1: key 'user' before any [section]");
    /* errors in a profile that is not selected count too */
    parse_fails("[DEFAULT]\nuser = u\n[OTHER]\nbroken\n", NULL, "test.ini:4: malformed line");
    /* a BOM anywhere else is not skipped */
    parse_fails("[DEFAULT]\n\xEF\xBB\xBF[A]\n", NULL, "test.ini:2: malformed line");
    /* bounded duplicate checks */
    {
        size_t n = 10001;
        char *big = malloc(12 + n * 16);
        assert_non_null(big);
        size_t off = (size_t)sprintf(big, "[DEFAULT]\n");
        for (size_t i = 0; i < n; i++)
            off += (size_t)sprintf(big + off, "k%zu = v\n", i);
        ocisbx_config *c = NULL;
        assert_int_equal(ocisbx_config_parse(big, off, "big.ini", NULL, &c), OCISBX_ECONFIG);
        test_assert_msg_has("big.ini:10002: more than 10000 keys in one section");
        free(big);
    }
    /* a NUL byte */
    ocisbx_config *cfg = NULL;
    const char nul[] = "[DEFAULT]\nuser = a\0b\n";
    assert_int_equal(ocisbx_config_parse(nul, sizeof nul - 1, "test.ini", NULL, &cfg), OCISBX_ECONFIG);
    test_assert_msg_has("test.ini:2:");
    test_assert_msg_has("NUL");
}

static void test_duplicates(void **state)
{
    (void)state;
    parse_fails("[DEFAULT]\nuser = a\n[A]\nuser = b\n\n[A]\nuser = c\n", "A",
                "test.ini:6: duplicate section [A] (first at line 3)");
    parse_fails("[DEFAULT]\nuser = a\nregion = r\nuser = b\n", NULL,
                "test.ini:4: duplicate key 'user' in [DEFAULT] (first at line 2)");
    parse_fails("[B]\nUser = a\nuSER = b\n", "B", "test.ini:3: duplicate key 'uSER' in [B] (first at line 2)");
    /* the same key in different sections is fine */
    ocisbx_config *cfg = parse_ok("[DEFAULT]\nuser = a\n[B]\nuser = b\n[C]\nuser = c\n", "C");
    assert_string_equal(ocisbx_config_get(cfg, "user"), "c");
    ocisbx_config_free(cfg);
}

static void test_secrets_never_in_messages(void **state)
{
    (void)state;
    /* a broken pass_phrase line: the message names the line, not its text */
    parse_fails("[DEFAULT]\npass_phrase hunter2-secret\n", NULL, "test.ini:2:");
    test_assert_msg_lacks("hunter2");
    parse_fails("[DEFAULT]\npass_phrase = hunter2-secret\npass_phrase = again\n", NULL, "duplicate key");
    test_assert_msg_lacks("hunter2");
    parse_fails("[DEFAULT]\npass_phrase = hunter2-secret\n", "X", "profile [X] not found");
    test_assert_msg_lacks("hunter2");
    /* and the value is there when asked for */
    ocisbx_config *cfg = parse_ok("[DEFAULT]\npass_phrase = hunter2-secret\n", NULL);
    assert_string_equal(ocisbx_config_get(cfg, "pass_phrase"), "hunter2-secret");
    ocisbx_config_free(cfg);
}

/* A FIFO as config file used to block in open(2) until a writer came: it is
 * refused at once, naming the file. The alarm kills the test instead of
 * hanging it. */
static void test_fifo_refused(void **state)
{
    (void)state;
    const char *fifo = path_in("config.fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    ocisbx_config *cfg = NULL;
    alarm(10);
    assert_int_equal(ocisbx_config_load(fifo, NULL, &cfg), OCISBX_ECONFIG);
    alarm(0);
    assert_null(cfg);
    test_assert_msg_has(fifo);
    test_assert_msg_has("not a regular file");
    /* the same through OCI_CONFIG_FILE */
    setenv("OCI_CONFIG_FILE", fifo, 1);
    alarm(10);
    assert_int_equal(ocisbx_config_load(NULL, NULL, &cfg), OCISBX_ECONFIG);
    alarm(0);
    unsetenv("OCI_CONFIG_FILE");
    test_assert_msg_has("not a regular file");
}

/* Names quoted from the file or given by the caller (section, key, profile,
 * file name) never bring a control byte or invalid UTF-8 into a message. */
static void test_names_escaped(void **state)
{
    (void)state;
    parse_fails("[DEFAULT]\nus\x1b[31mer\xff = a\nus\x1b[31mer\xff = b\n", NULL,
                "duplicate key 'us\\x1b[31mer\\xff' in [DEFAULT]");
    test_assert_msg_clean();
    parse_fails("[A\x1b(0x\x07\xfe]\n[A\x1b(0x\x07\xfe]\n", NULL, "duplicate section [A\\x1b(0x\\x07\\xfe]");
    test_assert_msg_clean();
    parse_fails("k\x1b\xff = v\n", NULL, "key 'k\\x1b\\xff' before any [section]");
    test_assert_msg_clean();
    parse_fails("[S\x9b\x1b]\nk = v\n", "P\x1b[2J\xff",
                "profile [P\\x1b[2J\\xff] not found (profiles there: S\\x9b\\x1b)");
    test_assert_msg_clean();
    /* the file name, and valid UTF-8 kept as it is */
    ocisbx_config *cfg = NULL;
    assert_int_equal(ocisbx_config_parse("", 0, "caf\xc3\xa9\x1b\xff.ini", NULL, &cfg), OCISBX_ECONFIG);
    test_assert_msg_has("caf\xc3\xa9\\x1b\\xff.ini");
    test_assert_msg_clean();
    assert_int_equal(ocisbx_config_load(path_in("no\x1b[2J\xff.ini"), NULL, &cfg), OCISBX_ECONFIG);
    test_assert_msg_has("no\\x1b[2J\\xff.ini: not found");
    test_assert_msg_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inheritance),
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_tilde),
        cmocka_unit_test(test_load_paths),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_profile_errors),
        cmocka_unit_test(test_malformed_lines),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_secrets_never_in_messages),
        cmocka_unit_test(test_fifo_refused),
        cmocka_unit_test(test_names_escaped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
