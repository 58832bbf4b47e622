/* The settings table and its one resolver: the table's rows; every source
 * in the OCI CLI's precedence (explicit > environment, ours before the OCI
 * CLI's > config file > the program's default > the table's); the signer
 * from security_token_file unless auth says otherwise; the origin of each
 * value; a wrong profile from a variable named with the variable; HOME
 * unset; the client built from the result. */
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ocisbx/settings.h"
#include "test_assert.h"
#include "test_keys.h"

static char dir[256];
static char config[512];

/* Every variable of the table, unset. */
static void clear_env(void)
{
    for (const ocisbx_setting *r = ocisbx_setting_next(NULL); r; r = ocisbx_setting_next(r))
        for (const char *const *e = r->env; *e; e++)
            unsetenv(*e);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_settings.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(config, sizeof config, "%s/config", dir);
    char text[2048];
    snprintf(text, sizeof text,
             "[DEFAULT]\nregion = us-phoenix-1\n"
             "[VECTOR]\nuser=%s\nfingerprint=%s\nkey_file=%s\ntenancy=%s\n"
             "[SESSION]\nfingerprint=%s\nkey_file=%s\ntenancy=%s\nregion = eu-frankfurt-1\n"
             "security_token_file=%s/token\n",
             TEST_VECTOR_USER, TEST_VECTOR_FP, OCISBX_SOURCE_DIR "/tests/data/cavage-test-key.pem",
             TEST_VECTOR_TENANCY, TEST_VECTOR_FP, OCISBX_SOURCE_DIR "/tests/data/cavage-test-key.pem",
             TEST_VECTOR_TENANCY, dir);
    char token[600];
    snprintf(token, sizeof token, "%s/token", dir);
    if (test_write_text(config, text) || test_write_text(token, "a-session-token\n"))
        return -1;
    clear_env();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clear_env();
    test_rm_rf(dir);
    return 0;
}

static void test_table(void **state)
{
    (void)state;
    size_t n = 0;
    const ocisbx_setting *prev = NULL;
    for (const ocisbx_setting *r = ocisbx_setting_next(NULL); r; prev = r, r = ocisbx_setting_next(r)) {
        n++;
        assert_non_null(r->name);
        assert_non_null(r->help);
        assert_non_null(r->value_name);
        assert_non_null(r->option);
        assert_int_equal(strncmp(r->option, "--", 2), 0);
        assert_non_null(r->env);
        assert_non_null(r->env[0]); /* every setting has a variable */
        assert_true(r->flags == OCISBX_SETTING_CLIENT || r->flags == OCISBX_SETTING_SANDBOX);
        assert_ptr_equal(ocisbx_setting_by_name(r->name), r); /* names are unique */
        if (prev)
            assert_ptr_equal(ocisbx_setting_next(prev), r);
    }
    assert_true(n >= 13);
    assert_null(ocisbx_setting_by_name("no_such"));
    assert_null(ocisbx_setting_by_name(NULL));
    /* the OCI CLI's variables, after ours */
    static const char *const want[][3] = {{"profile", "OCI_SANDBOX_PROFILE", "OCI_CLI_PROFILE"},
                                          {"region", "OCI_SANDBOX_REGION", "OCI_CLI_REGION"},
                                          {"auth", "OCI_SANDBOX_AUTH", "OCI_CLI_AUTH"},
                                          {"config_file", "OCI_CONFIG_FILE", "OCI_CLI_CONFIG_FILE"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const ocisbx_setting *r = ocisbx_setting_by_name(want[i][0]);
        assert_non_null(r);
        assert_string_equal(r->env[0], want[i][1]);
        assert_string_equal(r->env[1], want[i][2]);
    }
    assert_string_equal(ocisbx_setting_by_name("region")->config_key, "region");
    assert_string_equal(ocisbx_setting_by_name("profile")->default_value, "DEFAULT");
    assert_string_equal(ocisbx_setting_by_name("api_version")->default_value, OCISBX_DEFAULT_API_VERSION);
    assert_string_equal(ocisbx_setting_by_name("ready_timeout")->default_value, "300");
    assert_string_equal(ocisbx_setting_source_name(OCISBX_SETTING_ENV), "environment");
    assert_string_equal(ocisbx_setting_source_name(OCISBX_SETTING_UNSET), "unset");
}

/* The variables named in messages come from the table. */
static void test_variables_text(void **state)
{
    (void)state;
    char buf[160];
    assert_string_equal(ocisbx_setting_variables("region", buf, sizeof buf), "OCI_SANDBOX_REGION or OCI_CLI_REGION");
    assert_string_equal(ocisbx_setting_variables("endpoint", buf, sizeof buf), "OCI_SANDBOX_ENDPOINT");
    assert_string_equal(ocisbx_setting_variables("no_such_setting", buf, sizeof buf), "");
    char small[8];
    assert_string_equal(ocisbx_setting_variables("profile", small, sizeof small), "OCI_SAN"); /* cut, terminated */
}

static void test_lookup(void **state)
{
    (void)state;
    ocisbx_setting_source src;
    const char *which = NULL;
    assert_string_equal(ocisbx_setting_lookup("shape", NULL, &src, &which), "SMALL");
    assert_int_equal(src, OCISBX_SETTING_DEFAULT);
    assert_null(which);
    setenv("OCI_SANDBOX_SHAPE", "MEDIUM", 1);
    assert_string_equal(ocisbx_setting_lookup("shape", NULL, &src, &which), "MEDIUM");
    assert_int_equal(src, OCISBX_SETTING_ENV);
    assert_string_equal(which, "OCI_SANDBOX_SHAPE");
    assert_string_equal(ocisbx_setting_lookup("shape", "LARGE", &src, &which), "LARGE");
    assert_int_equal(src, OCISBX_SETTING_OPTION);
    assert_string_equal(ocisbx_setting_lookup("shape", "", &src, NULL), "MEDIUM"); /* empty is unset */
    setenv("OCI_SANDBOX_SHAPE", "", 1);
    assert_string_equal(ocisbx_setting_lookup("shape", NULL, &src, NULL), "SMALL");
    /* ours before the OCI CLI's */
    setenv("OCI_CLI_REGION", "us-ashburn-1", 1);
    assert_string_equal(ocisbx_setting_lookup("region", NULL, &src, &which), "us-ashburn-1");
    assert_string_equal(which, "OCI_CLI_REGION");
    setenv("OCI_SANDBOX_REGION", "us-chicago-1", 1);
    assert_string_equal(ocisbx_setting_lookup("region", NULL, &src, &which), "us-chicago-1");
    assert_string_equal(which, "OCI_SANDBOX_REGION");
    /* no default, no value */
    clear_env();
    assert_null(ocisbx_setting_lookup("project_id", NULL, &src, NULL));
    assert_int_equal(src, OCISBX_SETTING_UNSET);
    assert_null(ocisbx_setting_lookup("no_such", "x", &src, NULL));
}

/* poll_interval: decimal seconds from 0.01 to 3600 (option, else its
 * variable, else 2 s); a bad value names the option or the variable and
 * the value; ocisbx_settings_set refuses one too. */
static void test_poll_interval(void **state)
{
    (void)state;
    ocisbx_setting_source src;
    int64_t ms = -1;
    assert_string_equal(ocisbx_setting_by_name("poll_interval")->default_value, "2");
    assert_string_equal(ocisbx_setting_by_name("poll_interval")->option, "--poll-interval");
    assert_int_equal(ocisbx_setting_poll_interval_ms(NULL, &ms, &src), 0);
    assert_int_equal(ms, 2000);
    assert_int_equal(src, OCISBX_SETTING_DEFAULT);
    static const struct {
        const char *v;
        int64_t ms;
    } good[] = {{"0.01", 10},   {"0.1", 100},      {".5", 500},           {"1.", 1000},    {"1.5", 1500}, {"2", 2000},
                {"0.0105", 10}, {"3600", 3600000}, {"3600.000", 3600000}, {"0010", 10000}, {"0.25", 250}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        ms = -1;
        if (ocisbx_setting_poll_interval_ms(good[i].v, &ms, &src) != 0 || ms != good[i].ms)
            fail_msg("%s: %lld ms (%s)", good[i].v, (long long)ms, test_last_msg());
        assert_int_equal(src, OCISBX_SETTING_OPTION);
    }
    static const char *const bad[] = {
        "0",    "0.009", "0.0099", "3600.001", "3600.0001", "3601", "-1",
        "1e2",  "abc",   ".",      "1..2",     " 1",        "1 ",   "99999999999999999999",
        "0x10", "1,5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ms = -1;
        if (ocisbx_setting_poll_interval_ms(bad[i], &ms, NULL) != OCISBX_EINVAL || ms != -1)
            fail_msg("%s accepted (%lld ms)", bad[i], (long long)ms);
        char want[128];
        snprintf(want, sizeof want, "--poll-interval %s: not a number of seconds from 0.01 to 3600", bad[i]);
        assert_string_equal(test_last_msg(), want);
    }
    setenv("OCI_SANDBOX_POLL_INTERVAL", "0.1", 1);
    assert_int_equal(ocisbx_setting_poll_interval_ms(NULL, &ms, &src), 0);
    assert_int_equal(ms, 100);
    assert_int_equal(src, OCISBX_SETTING_ENV);
    assert_int_equal(ocisbx_setting_poll_interval_ms("3", &ms, &src), 0); /* the option wins */
    assert_int_equal(ms, 3000);
    assert_int_equal(ocisbx_setting_poll_interval_ms("", &ms, &src), 0); /* empty is unset */
    assert_int_equal(ms, 100);
    setenv("OCI_SANDBOX_POLL_INTERVAL", "soon", 1);
    assert_int_equal(ocisbx_setting_poll_interval_ms(NULL, &ms, NULL), OCISBX_ECONFIG);
    assert_string_equal(test_last_msg(), "OCI_SANDBOX_POLL_INTERVAL soon: not a number of seconds from 0.01 to 3600");
    setenv("OCI_SANDBOX_POLL_INTERVAL", "", 1);
    assert_int_equal(ocisbx_setting_poll_interval_ms(NULL, &ms, &src), 0);
    assert_int_equal(ms, 2000);
    /* the resolver: an explicit value is checked when set, and resolved with its source */
    ocisbx_settings *s = NULL;
    assert_int_equal(ocisbx_settings_new(&s), 0);
    assert_int_equal(ocisbx_settings_set(s, "poll_interval", "0"), OCISBX_EINVAL);
    assert_non_null(strstr(test_last_msg(), "--poll-interval 0"));
    assert_int_equal(ocisbx_settings_set(s, "poll_interval", "0.5"), 0);
    setenv("OCI_SANDBOX_POLL_INTERVAL", "0.1", 1);
    (void)ocisbx_settings_resolve(s); /* the config file may be missing: the values resolve all the same */
    assert_string_equal(ocisbx_settings_get(s, "poll_interval"), "0.5");
    assert_int_equal(ocisbx_settings_source(s, "poll_interval"), OCISBX_SETTING_OPTION);
    assert_int_equal(ocisbx_settings_set(s, "poll_interval", NULL), 0);
    (void)ocisbx_settings_resolve(s);
    assert_string_equal(ocisbx_settings_get(s, "poll_interval"), "0.1");
    assert_string_equal(ocisbx_settings_origin(s, "poll_interval"), "OCI_SANDBOX_POLL_INTERVAL");
    ocisbx_settings_free(s);
    clear_env();
}

static ocisbx_settings *resolved(int want_rc)
{
    ocisbx_settings *s = NULL;
    assert_int_equal(ocisbx_settings_new(&s), 0);
    assert_int_equal(ocisbx_settings_set(s, "config_file", config), 0);
    int rc = ocisbx_settings_resolve(s);
    if (rc != want_rc)
        fail_msg("resolve: %d (%s)", rc, test_last_msg());
    return s;
}

/* Each source in turn for the region: file < environment (OCI CLI's) <
 * environment (ours) < explicit. */
static void test_precedence(void **state)
{
    (void)state;
    ocisbx_settings *s = resolved(0);
    assert_string_equal(ocisbx_settings_get(s, "profile"), "DEFAULT");
    assert_int_equal(ocisbx_settings_source(s, "profile"), OCISBX_SETTING_DEFAULT);
    assert_string_equal(ocisbx_settings_origin(s, "profile"), "default");
    assert_string_equal(ocisbx_settings_get(s, "region"), "us-phoenix-1");
    assert_int_equal(ocisbx_settings_source(s, "region"), OCISBX_SETTING_FILE);
    char where[700];
    snprintf(where, sizeof where, "%s [DEFAULT]", config);
    assert_string_equal(ocisbx_settings_origin(s, "region"), where);
    assert_string_equal(ocisbx_settings_get(s, "config_file"), config);
    assert_string_equal(ocisbx_settings_origin(s, "config_file"), "--config-file");
    assert_int_equal(ocisbx_settings_source(s, "config_file"), OCISBX_SETTING_OPTION);
    /* the endpoint made from the region, with the region's source */
    assert_string_equal(ocisbx_settings_get(s, "endpoint"),
                        "https://inference.generativeai.us-phoenix-1.oci.oraclecloud.com");
    assert_int_equal(ocisbx_settings_source(s, "endpoint"), OCISBX_SETTING_FILE);
    assert_non_null(strstr(ocisbx_settings_origin(s, "endpoint"), "the region ("));
    assert_null(ocisbx_settings_get(s, "project_id"));
    assert_string_equal(ocisbx_settings_origin(s, "project_id"), "not set");

    setenv("OCI_CLI_REGION", "us-ashburn-1", 1);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_get(s, "region"), "us-ashburn-1");
    assert_string_equal(ocisbx_settings_origin(s, "region"), "OCI_CLI_REGION");
    assert_int_equal(ocisbx_settings_source(s, "region"), OCISBX_SETTING_ENV);
    setenv("OCI_SANDBOX_REGION", "us-chicago-1", 1);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_get(s, "region"), "us-chicago-1");
    assert_string_equal(ocisbx_settings_origin(s, "region"), "OCI_SANDBOX_REGION");
    assert_int_equal(ocisbx_settings_set(s, "region", "eu-frankfurt-1"), 0);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_get(s, "region"), "eu-frankfurt-1");
    assert_string_equal(ocisbx_settings_origin(s, "region"), "--region");
    assert_int_equal(ocisbx_settings_source(s, "region"), OCISBX_SETTING_OPTION);
    /* an explicit endpoint wins over the region's, trailing '/' dropped */
    setenv("OCI_SANDBOX_ENDPOINT", "https://example.test/x/", 1);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_get(s, "endpoint"), "https://example.test/x");
    assert_string_equal(ocisbx_settings_origin(s, "endpoint"), "OCI_SANDBOX_ENDPOINT");
    ocisbx_settings_free(s);
    clear_env();
}

/* The program's default sits between the file and the table's default. */
static void test_program_defaults(void **state)
{
    (void)state;
    ocisbx_settings *s = NULL;
    assert_int_equal(ocisbx_settings_new(&s), 0);
    assert_int_equal(ocisbx_settings_set(s, "config_file", config), 0);
    assert_int_equal(ocisbx_settings_set_default(s, "profile", "VECTOR"), 0);
    assert_int_equal(ocisbx_settings_set_default(s, "expiration", "PT30M"), 0);
    assert_int_equal(ocisbx_settings_set_default(s, "region", "us-chicago-1"), 0);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_get(s, "profile"), "VECTOR");
    assert_int_equal(ocisbx_settings_source(s, "profile"), OCISBX_SETTING_DEFAULT);
    assert_string_equal(ocisbx_settings_get(s, "expiration"), "PT30M");
    /* the file's [DEFAULT] region wins over the program's default */
    assert_string_equal(ocisbx_settings_get(s, "region"), "us-phoenix-1");
    setenv("OCI_SANDBOX_EXPIRATION", "PT2H", 1);
    setenv("OCI_SANDBOX_PROFILE", "SESSION", 1);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_get(s, "expiration"), "PT2H");
    assert_string_equal(ocisbx_settings_get(s, "profile"), "SESSION");
    assert_string_equal(ocisbx_settings_get(s, "region"), "eu-frankfurt-1");
    /* back to the table's */
    assert_int_equal(ocisbx_settings_set_default(s, "expiration", NULL), 0);
    unsetenv("OCI_SANDBOX_EXPIRATION");
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_get(s, "expiration"), OCISBX_DEFAULT_EXPIRATION);
    assert_int_equal(ocisbx_settings_set_default(s, "no_such", "x"), OCISBX_EINVAL);
    ocisbx_settings_free(s);
    clear_env();
}

/* The signer: security_token_file makes a session-token profile unless
 * auth says otherwise (explicitly or from a variable). */
static void test_signer(void **state)
{
    (void)state;
    ocisbx_settings *s = NULL;
    assert_int_equal(ocisbx_settings_new(&s), 0);
    assert_int_equal(ocisbx_settings_set(s, "config_file", config), 0);
    assert_int_equal(ocisbx_settings_set(s, "profile", "SESSION"), 0);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_get(s, "auth"), OCISBX_AUTH_SECURITY_TOKEN);
    assert_int_equal(ocisbx_settings_source(s, "auth"), OCISBX_SETTING_FILE);
    assert_non_null(strstr(ocisbx_settings_origin(s, "auth"), "[SESSION]: security_token_file"));
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_settings_credentials(s, &c), 0);
    assert_string_equal(ocisbx_credentials_kind(c), OCISBX_AUTH_SECURITY_TOKEN);
    ocisbx_credentials_free(c);
    /* OCI_CLI_AUTH says otherwise */
    setenv("OCI_CLI_AUTH", "api_key", 1);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_get(s, "auth"), OCISBX_AUTH_API_KEY);
    assert_string_equal(ocisbx_settings_origin(s, "auth"), "OCI_CLI_AUTH");
    /* ours over the OCI CLI's, explicit over both */
    setenv("OCI_SANDBOX_AUTH", "security_token", 1);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_origin(s, "auth"), "OCI_SANDBOX_AUTH");
    assert_int_equal(ocisbx_settings_set(s, "auth", "api_key"), 0);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_origin(s, "auth"), "--auth");
    /* a bad value: a usage error when given, the variable named when set */
    assert_int_equal(ocisbx_settings_set(s, "auth", "api-key"), OCISBX_EINVAL);
    test_assert_msg_has("--auth api-key: not one of api_key");
    assert_int_equal(ocisbx_settings_set(s, "auth", NULL), 0);
    setenv("OCI_SANDBOX_AUTH", "bogus", 1);
    assert_int_equal(ocisbx_settings_resolve(s), OCISBX_ECONFIG);
    test_assert_msg_has("OCI_SANDBOX_AUTH=bogus: not one of");
    /* a profile without security_token_file: api_key by default */
    clear_env();
    assert_int_equal(ocisbx_settings_set(s, "profile", "VECTOR"), 0);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_get(s, "auth"), OCISBX_AUTH_API_KEY);
    assert_int_equal(ocisbx_settings_source(s, "auth"), OCISBX_SETTING_DEFAULT);
    /* a principal reads no config file (a missing one is no error) */
    assert_int_equal(ocisbx_settings_set(s, "config_file", "/nonexistent/config"), 0);
    assert_int_equal(ocisbx_settings_set(s, "auth", "instance_principal"), 0);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_null(ocisbx_settings_config(s));
    ocisbx_settings_free(s);
}

/* A wrong profile from a variable fails naming the variable and the
 * profile; the other values are still resolved. */
static void test_wrong_profile(void **state)
{
    (void)state;
    setenv("OCI_CLI_PROFILE", "Nope", 1);
    setenv("OCI_SANDBOX_PROJECT_ID", "ocid1.generativeaiproject.oc1..p", 1);
    ocisbx_settings *s = resolved(OCISBX_ECONFIG);
    test_assert_msg_has("OCI_CLI_PROFILE=Nope: ");
    test_assert_msg_has("profile [Nope] not found");
    assert_null(ocisbx_settings_config(s));
    assert_string_equal(ocisbx_settings_get(s, "project_id"), "ocid1.generativeaiproject.oc1..p");
    assert_string_equal(ocisbx_settings_origin(s, "profile"), "OCI_CLI_PROFILE");
    /* the same error from the credentials and the client, later */
    ocisbx_credentials *c = NULL;
    assert_int_equal(ocisbx_settings_credentials(s, &c), OCISBX_ECONFIG);
    test_assert_msg_has("OCI_CLI_PROFILE=Nope: ");
    ocisbx_client *cl = NULL;
    assert_int_equal(ocisbx_settings_client_new(s, NULL, &cl), OCISBX_ECONFIG);
    assert_null(cl);
    ocisbx_settings_free(s);
    /* a config file from a variable that is missing names the variable */
    clear_env();
    char missing[600];
    snprintf(missing, sizeof missing, "%s/nope", dir);
    setenv("OCI_CLI_CONFIG_FILE", missing, 1);
    assert_int_equal(ocisbx_settings_new(&s), 0);
    assert_int_equal(ocisbx_settings_resolve(s), OCISBX_ECONFIG);
    test_assert_msg_has("OCI_CLI_CONFIG_FILE: config file ");
    test_assert_msg_has("nope: not found");
    /* ours (OCI_CONFIG_FILE) wins over the OCI CLI's */
    setenv("OCI_CONFIG_FILE", config, 1);
    assert_int_equal(ocisbx_settings_resolve(s), 0);
    assert_string_equal(ocisbx_settings_origin(s, "config_file"), "OCI_CONFIG_FILE");
    ocisbx_settings_free(s);
    clear_env();
}

/* HOME unset or empty: the config file is under the passwd entry's home. */
static void test_home_unset(void **state)
{
    (void)state;
    const char *home = getenv("HOME");
    char *saved = home ? strdup(home) : NULL;
    struct passwd *pw = getpwuid(getuid());
    assert_non_null(pw);
    char want[600];
    snprintf(want, sizeof want, "%s/.oci/config", pw->pw_dir);
    for (int round = 0; round < 2; round++) {
        if (round == 0)
            unsetenv("HOME");
        else
            setenv("HOME", "", 1);
        ocisbx_settings *s = NULL;
        assert_int_equal(ocisbx_settings_new(&s), 0);
        (void)ocisbx_settings_resolve(s); /* the file may well be missing */
        assert_string_equal(ocisbx_settings_get(s, "config_file"), want);
        assert_int_equal(ocisbx_settings_source(s, "config_file"), OCISBX_SETTING_DEFAULT);
        ocisbx_settings_free(s);
    }
    if (saved)
        setenv("HOME", saved, 1);
    free(saved);
}

/* The client: the resolved endpoint and API version; plain http only to a
 * loopback endpoint. */
static void test_client(void **state)
{
    (void)state;
    ocisbx_settings *s = NULL;
    assert_int_equal(ocisbx_settings_new(&s), 0);
    assert_int_equal(ocisbx_settings_set(s, "config_file", config), 0);
    assert_int_equal(ocisbx_settings_set(s, "profile", "VECTOR"), 0);
    setenv("OCI_SANDBOX_API_VERSION", "20990101", 1);
    ocisbx_client *c = NULL;
    assert_int_equal(ocisbx_settings_client_new(s, NULL, &c), 0); /* resolves on its own */
    assert_string_equal(ocisbx_client_endpoint(c), "https://inference.generativeai.us-phoenix-1.oci.oraclecloud.com");
    assert_string_equal(ocisbx_client_api_version(c), "20990101");
    ocisbx_client_free(c);
    assert_int_equal(ocisbx_settings_set(s, "endpoint", "http://127.0.0.1:9/"), 0);
    assert_int_equal(ocisbx_settings_client_new(s, NULL, &c), 0);
    assert_string_equal(ocisbx_client_endpoint(c), "http://127.0.0.1:9");
    ocisbx_client_free(c);
    assert_int_equal(ocisbx_settings_set(s, "endpoint", "http://example.test"), 0);
    assert_int_not_equal(ocisbx_settings_client_new(s, NULL, &c), 0); /* not loopback: refused */
    test_assert_msg_has("plain http");
    /* base's options stay: its own endpoint when none is resolved */
    assert_int_equal(ocisbx_settings_set(s, "endpoint", NULL), 0);
    assert_int_equal(ocisbx_settings_set(s, "region", "ord"), 0);
    ocisbx_client_options *base = NULL;
    assert_int_equal(ocisbx_client_options_new(&base), 0);
    assert_int_equal(ocisbx_client_options_set_stream_resume_limit(base, 2), 0);
    assert_int_equal(ocisbx_settings_client_new(s, base, &c), 0);
    assert_string_equal(ocisbx_client_endpoint(c), "https://inference.generativeai.us-chicago-1.oci.oraclecloud.com");
    ocisbx_client_free(c);
    ocisbx_client_options_free(base);
    assert_int_equal(ocisbx_settings_set(s, "no_such", "x"), OCISBX_EINVAL);
    ocisbx_settings_free(s);
    clear_env();
}

/* "`x`" with '|' escaped for a Markdown table cell ("-" for NULL). */
static void cell(char *out, size_t cap, const char *v)
{
    size_t o = 0;
    if (!v) {
        snprintf(out, cap, "-");
        return;
    }
    out[o++] = '`';
    for (const char *p = v; *p && o + 3 < cap; p++) {
        if (*p == '|')
            out[o++] = '\\';
        out[o++] = *p;
    }
    out[o++] = '`';
    out[o] = '\0';
}

/* The docs/settings.md row of a setting, as the table gives it. */
static void doc_row(const ocisbx_setting *r, char *out, size_t cap)
{
    char opt[128], vars[256] = "", key[64], def[64], help[512];
    snprintf(opt, sizeof opt, "`%s %s`", r->option, r->value_name);
    size_t o = 0;
    for (const char *const *e = r->env; *e; e++)
        o += (size_t)snprintf(vars + o, sizeof vars - o, "%s`%s`", o ? ", " : "", *e);
    cell(key, sizeof key, r->config_key);
    cell(def, sizeof def, r->default_value);
    size_t h = 0;
    for (const char *p = r->help; *p && h + 2 < sizeof help; p++) {
        if (*p == '|')
            help[h++] = '\\';
        help[h++] = *p;
    }
    help[h] = '\0';
    snprintf(out, cap, "| `%s` | %s | %s | %s | %s | %s |", r->name, opt, vars, key, def, help);
}

/* docs/settings.md holds the table's rows exactly, and no others. */
static void test_docs_table(void **state)
{
    (void)state;
    FILE *f = fopen(OCISBX_SOURCE_DIR "/docs/settings.md", "r");
    assert_non_null(f);
    static char doc[65536];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = '\0';
    fclose(f);
    int missing = 0;
    size_t rows = 0;
    for (const ocisbx_setting *r = ocisbx_setting_next(NULL); r; r = ocisbx_setting_next(r)) {
        char want[1024];
        doc_row(r, want, sizeof want);
        strcat(want, "\n");
        rows++;
        if (!strstr(doc, want)) {
            fprintf(stderr, "docs/settings.md lacks the row:\n%s", want);
            missing++;
        }
    }
    assert_int_equal(missing, 0);
    /* no row of a setting the table does not have */
    size_t doc_rows = 0;
    for (const char *p = strstr(doc, "\n| `"); p; p = strstr(p + 1, "\n| `"))
        doc_rows++;
    assert_int_equal(doc_rows, rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),         cmocka_unit_test(test_variables_text),   cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_precedence),    cmocka_unit_test(test_program_defaults), cmocka_unit_test(test_signer),
        cmocka_unit_test(test_wrong_profile), cmocka_unit_test(test_home_unset),       cmocka_unit_test(test_client),
        cmocka_unit_test(test_docs_table),    cmocka_unit_test(test_poll_interval),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
