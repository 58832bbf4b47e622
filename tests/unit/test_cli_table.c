/* The CLI's command table against the parsers: every option a command's
 * parser asks for is in its row and every row's option is asked for (so a
 * command or option added later cannot miss --help, the man page and the
 * completion scripts), every option of the API groups has a place to go,
 * the table is consistent, and --help shows each option on its own line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"

/* ---- the parser's view: what it asked cli_opt_value / cli_opt_flag ---- */
#define MAX_ASKED 128
static struct {
    char name[64];
    bool value;
} asked[MAX_ASKED];
static int nasked;

static void probe(const char *name, bool value)
{
    for (int i = 0; i < nasked; i++)
        if (strcmp(asked[i].name, name) == 0 && asked[i].value == value)
            return;
    if (nasked < MAX_ASKED) {
        snprintf(asked[nasked].name, sizeof asked[nasked].name, "%s", name);
        asked[nasked++].value = value;
    }
}

/* Runs fn with stderr and stdout sent to /dev/null (its usage error). */
static int quietly(cli_cmd_fn fn, int argc, char **argv)
{
    fflush(stdout);
    fflush(stderr);
    int out = dup(1), err = dup(2);
    FILE *null = fopen("/dev/null", "w");
    assert_non_null(null);
    dup2(fileno(null), 1);
    dup2(fileno(null), 2);
    cli_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    assert_int_equal(ocisbx_settings_new(&ctx.settings), 0);
    int st = fn(&ctx, argc, argv);
    ocisbx_settings_free(ctx.settings);
    fflush(stdout);
    fflush(stderr);
    dup2(out, 1);
    dup2(err, 2);
    close(out);
    close(err);
    fclose(null);
    return st;
}

static int check_usage(const char *path, const cli_command *c, const cli_verb *v)
{
    char w0[64], w1[64], w2[] = "--zz-not-an-option";
    char *argv[4];
    int argc = 0;
    snprintf(w0, sizeof w0, "%s", c->name);
    snprintf(w1, sizeof w1, "%s", v->name);
    argv[argc++] = w0;
    if (c->verbs)
        argv[argc++] = w1;
    argv[argc++] = w2;
    argv[argc] = NULL;
    nasked = 0;
    cli_opt_probe = probe;
    int st = quietly(c->fn, argc, argv);
    cli_opt_probe = NULL;
    int bad = 0;
    if (st != CLI_EXIT_USAGE) {
        fprintf(stderr, "%s --zz-not-an-option: exit %d, not 2\n", path, st);
        bad++;
    }
    for (int i = 0; i < nasked; i++) {
        if (strcmp(asked[i].name, "help") == 0)
            continue; /* main answers --help from the table */
        const cli_option *o = cli_find_option(v->options, asked[i].name);
        bool flag = o && (!o->arg || (o->flags & CLI_OPT_BOOL));
        if (!o || flag == asked[i].value) {
            fprintf(stderr, "%s: its parser takes --%s%s, which the command table %s\n", path, asked[i].name,
                    asked[i].value ? " VALUE" : "", o ? "describes otherwise" : "does not list");
            bad++;
        }
    }
    for (const cli_option *o = v->options; o && o->name; o++) {
        const char *names[2] = {o->name, o->alias};
        for (int k = 0; k < 2 && names[k]; k++) {
            bool found = false;
            for (int i = 0; i < nasked && !found; i++)
                found = strcmp(asked[i].name, names[k]) == 0;
            if (!found) {
                fprintf(stderr, "%s: the command table lists --%s, which its parser does not take\n", path, names[k]);
                bad++;
            }
        }
    }
    return bad;
}

static void test_parsers_match_the_table(void **state)
{
    (void)state;
    int bad = 0, usages = 0;
    char path[160];
    for (const cli_command *c = cli_commands; c->name; c++) {
        if (!c->verbs) {
            bad += check_usage(c->name, c, c->self);
            usages++;
            continue;
        }
        for (const cli_verb *v = c->verbs; v->name; v++) {
            snprintf(path, sizeof path, "%s %s", c->name, v->name);
            bad += check_usage(path, c, v);
            usages++;
        }
    }
    fprintf(stderr, "%d commands and subcommands checked against their parsers\n", usages);
    assert_true(usages >= 40);
    assert_int_equal(bad, 0);
}

/* The check above finds an option missing from the table. */
static int fake_cmd(cli_ctx *ctx, int argc, char **argv)
{
    (void)ctx;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (cli_opt_value(argc, argv, &i, "listed", &v) == 0 && cli_opt_value(argc, argv, &i, "unlisted", &v) == 0)
            return cli_unknown_option("fake", argv[i]);
    }
    return 0;
}

static void test_the_check_finds_a_missing_option(void **state)
{
    (void)state;
    static const cli_option opts[] = {{"listed", "V", "a listed option", NULL, 0, NULL}, CLI_END_OPTIONS};
    static const cli_verb self = {"fake", NULL, NULL, "a command", NULL, NULL, opts, 0};
    static const cli_command c = {"fake", NULL, fake_cmd, NULL, &self, 0};
    assert_int_equal(check_usage("fake", &c, &self), 1);
    static const cli_option more[] = {{"listed", "V", "listed", NULL, 0, NULL},
                                      {"unlisted", "V", "listed now", NULL, 0, NULL},
                                      {"stale", NULL, "taken by no parser", NULL, 0, NULL},
                                      CLI_END_OPTIONS};
    static const cli_verb self2 = {"fake", NULL, NULL, "a command", NULL, NULL, more, 0};
    assert_int_equal(check_usage("fake", &c, &self2), 1); /* --stale */
}

/* Every option of the API groups, given once with a good value, parses:
 * each has a place in cli_api_opts. */
static void test_api_options_all_parse(void **state)
{
    (void)state;
    for (const cli_command *c = cli_commands; c->name; c++) {
        if (c->fn != cmd_sandbox && c->fn != cmd_command && c->fn != cmd_file && c->fn != cmd_snapshot)
            continue;
        for (const cli_verb *v = c->verbs; v->name; v++) {
            char *argv[80];
            int argc = 0;
            for (const cli_option *o = v->options; o->name && argc < 78; o++) {
                static char words[80][128];
                snprintf(words[argc], sizeof words[argc], "--%s", o->name);
                argv[argc] = words[argc];
                argc++;
                if (!o->arg)
                    continue;
                const char *val = strcmp(o->name, "env") == 0 ? "A=B" : "x";
                if (o->values)
                    snprintf(words[argc], sizeof words[argc], "%.*s", (int)strcspn(o->values, " "), o->values);
                else
                    snprintf(words[argc], sizeof words[argc], "%s", val);
                argv[argc] = words[argc];
                argc++;
            }
            cli_api_opts ao;
            char what[128];
            snprintf(what, sizeof what, "%s %s", c->name, v->name);
            int st = cli_api_parse(what, argc, argv, v->options, &ao);
            if (st)
                fprintf(stderr, "%s: every option once does not parse\n", what);
            assert_int_equal(st, 0);
        }
    }
}

static void test_table_is_consistent(void **state)
{
    (void)state;
    for (const cli_command *c = cli_commands; c->name; c++) {
        assert_non_null(c->fn);
        assert_true((c->verbs == NULL) != (c->self == NULL));
        if (c->self)
            assert_non_null(c->self->summary);
        for (const cli_verb *v = c->verbs; v && v->name; v++) {
            assert_non_null(v->summary);
            /* the group's summary names each of its subcommands */
            if (!(v->flags & CLI_VERB_HIDDEN)) {
                const char *at = strstr(c->summary, v->name);
                size_t n = strlen(v->name);
                while (at && ((at > c->summary && at[-1] != '|' && at[-1] != ' ') ||
                              (at[n] && at[n] != '|' && at[n] != ':')))
                    at = strstr(at + 1, v->name);
                if (!at)
                    fprintf(stderr, "%s: its summary does not name %s\n", c->name, v->name);
                assert_non_null(at);
            }
            if (v->shown_as) { /* an alias shows the subcommand it runs */
                char group[64], verb[64];
                assert_int_equal(sscanf(v->shown_as, "%63s %63s", group, verb), 2);
                const cli_verb *real = cli_find_verb(cli_find_command(group), verb);
                assert_non_null(real);
                assert_ptr_equal(real->options, v->options);
                assert_string_equal(cli_verb_id(real), cli_verb_id(v));
            }
        }
    }
    /* one name is a flag everywhere or takes a value everywhere: the
     * completion scripts skip option values by name */
    for (const cli_command *c = cli_commands; c->name; c++)
        for (const cli_verb *v = c->verbs ? c->verbs : c->self; v && v->name; v = c->verbs ? v + 1 : NULL)
            for (const cli_option *o = v->options; o->name; o++) {
                assert_non_null(o->help);
                for (const cli_global_option *g = cli_global_options; g->opt.name; g++)
                    if (strcmp(g->opt.name, o->name) == 0)
                        assert_true(!g->opt.arg == !o->arg);
            }
}

/* --help of a usage (captured from stdout). */
static char *help_of(const cli_command *c, const cli_verb *v)
{
    fflush(stdout);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int out = dup(1);
    dup2(fileno(tmp), 1);
    cli_help(c, v);
    fflush(stdout);
    dup2(out, 1);
    close(out);
    long len = ftell(tmp);
    char *text = calloc(1, (size_t)len + 1);
    rewind(tmp);
    assert_int_equal(fread(text, 1, (size_t)len, tmp), (size_t)len);
    fclose(tmp);
    return text;
}

static void test_help_shows_every_option(void **state)
{
    (void)state;
    for (const cli_command *c = cli_commands; c->name; c++)
        for (const cli_verb *v = c->verbs ? c->verbs : c->self; v && v->name; v = c->verbs ? v + 1 : NULL) {
            char *text = help_of(c, c->verbs ? v : NULL);
            assert_true(strncmp(text, "usage: ocisbx ", 14) == 0);
            for (const cli_option *o = v->options; o->name; o++) {
                char line[96];
                snprintf(line, sizeof line, "\n  %c --%s%s%s ", (o->flags & CLI_OPT_REQUIRED) ? '*' : ' ', o->name,
                         o->arg ? " " : "", o->arg ? o->arg : "");
                if (!strstr(text, line))
                    fprintf(stderr, "%s %s --help lacks the line of --%s:\n%s", c->name, v->name, o->name, text);
                assert_non_null(strstr(text, line));
                if (o->values) { /* the fixed values, on the option's line */
                    char first[64];
                    snprintf(first, sizeof first, "%.*s", (int)strcspn(o->values, " "), o->values);
                    const char *at = strstr(text, line);
                    const char *eol = strchr(at + 1, '\n');
                    const char *val = strstr(at + 1, first);
                    assert_true(val && (!eol || val < eol));
                }
            }
            free(text);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parsers_match_the_table), cmocka_unit_test(test_the_check_finds_a_missing_option),
        cmocka_unit_test(test_api_options_all_parse),   cmocka_unit_test(test_table_is_consistent),
        cmocka_unit_test(test_help_shows_every_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
