/* The gate's policy file (src/harness/policy.c): decisions, and bad files
 * refused with the file, line and key named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ocisbx/harness.h"

static const char *GOOD = "rules:                        # the first rule that matches decides\n"
                          "  - label: workspace.exec\n"
                          "    command: \"^pytest( |$)\"\n"
                          "    decision: allow\n"
                          "  - label: workspace.write\n"
                          "    path: \"/workspace/.git/**\"\n"
                          "    decision: deny\n"
                          "    reason: repository metadata is read-only\n"
                          "  - label: workspace.exec\n"
                          "    decision: hold\n"
                          "    reason: a person checks every other command\n"
                          "default: allow\n";

static ocisbx_policy *load(const char *text)
{
    ocisbx_policy *p = NULL;
    int rc = ocisbx_policy_load_yaml(text, strlen(text), "policy.yaml", &p);
    if (rc)
        fail_msg("load: %s", ocisbx_error_message(ocisbx_error_last()));
    return p;
}

static void first_matching_rule_decides(void **state)
{
    (void)state;
    ocisbx_policy *p = load(GOOD);
    assert_int_equal(ocisbx_policy_rule_count(p), 3);
    const char *why = "x";
    assert_int_equal(ocisbx_policy_decide(p, "exec", "workspace.exec", "pytest -q", NULL, &why), OCISBX_GATE_ALLOW);
    assert_null(why);
    assert_int_equal(ocisbx_policy_decide(p, "exec", "workspace.exec", "pytest", NULL, &why), OCISBX_GATE_ALLOW);
    assert_int_equal(ocisbx_policy_decide(p, "exec", "workspace.exec", "pytesting", NULL, &why), OCISBX_GATE_HOLD);
    assert_string_equal(why, "a person checks every other command");
    assert_int_equal(ocisbx_policy_decide(p, "exec", "workspace.exec", "rm -rf /workspace", NULL, NULL),
                     OCISBX_GATE_HOLD);
    assert_int_equal(ocisbx_policy_decide(p, "write", "workspace.write", NULL, "/workspace/.git/config", &why),
                     OCISBX_GATE_DENY);
    assert_string_equal(why, "repository metadata is read-only");
    assert_int_equal(ocisbx_policy_decide(p, "edit", "workspace.write", NULL, "/workspace/.git/refs/heads/x", NULL),
                     OCISBX_GATE_DENY);
    assert_int_equal(ocisbx_policy_decide(p, "write", "workspace.write", NULL, "/workspace/src/a.c", &why),
                     OCISBX_GATE_ALLOW); /* the default */
    assert_null(why);
    assert_int_equal(ocisbx_policy_decide(p, "read", "workspace.read", NULL, "/workspace/.git/config", NULL),
                     OCISBX_GATE_ALLOW);
    ocisbx_policy_free(p);
}

static void rules_with_command_or_path_need_one(void **state)
{
    (void)state;
    ocisbx_policy *p = load("rules:\n"
                            "  - label: \"*\"\n    path: \"/workspace/secret*\"\n    decision: deny\n"
                            "  - label: \"workspace.*\"\n    tool: job\n    decision: hold\n"
                            "default: deny\n");
    /* a call without a path is not matched by a path rule */
    assert_int_equal(ocisbx_policy_decide(p, "exec", "workspace.exec", "ls", NULL, NULL), OCISBX_GATE_DENY);
    assert_int_equal(ocisbx_policy_decide(p, "job", "workspace.exec", NULL, NULL, NULL), OCISBX_GATE_HOLD);
    assert_int_equal(ocisbx_policy_decide(p, "read", "workspace.read", NULL, "/workspace/secret.txt", NULL),
                     OCISBX_GATE_DENY);
    ocisbx_policy_free(p);
    /* no rules at all, and no default: allow */
    p = load("rules: []\n");
    assert_int_equal(ocisbx_policy_decide(p, "exec", "workspace.exec", "ls", NULL, NULL), OCISBX_GATE_ALLOW);
    ocisbx_policy_free(p);
    p = load("default: hold\n");
    assert_int_equal(ocisbx_policy_decide(p, "exec", "workspace.exec", "ls", NULL, NULL), OCISBX_GATE_HOLD);
    ocisbx_policy_free(p);
}

/* Each bad file: the error names the file, the line and the key. */
static void bad_files_name_file_line_and_key(void **state)
{
    (void)state;
    static const struct {
        const char *yaml, *want;
    } cases[] = {
        {"rules:\n  - label: workspace.exec\n    comand: x\n    decision: allow\n",
         "policy.yaml:3: rules[0].comand: unknown key"},
        {"rules:\n  - label: workspace.exec\n    decision: maybe\n",
         "policy.yaml:3: rules[0].decision: expected allow"},
        {"rules:\n  - label: workspace.exec\n    command: \"(\"\n    decision: allow\n",
         "policy.yaml:3: rules[0].command: bad regular expression"},
        {"rules:\n  - label: workspace.exec\n    command: \"^pytest++++\"\n    decision: deny\n",
         "policy.yaml:3: rules[0].command: regular expression \"^pytest++++\" refused: a repetition repeated"},
        {"rules:\n  - label: workspace.exec\n    command: \"((a{100}){100}){100}\"\n    decision: deny\n",
         "rules[0].command: regular expression \"((a{100}){100}){100}\" refused: too complex"},
        {"rules:\n  - label: workspace.exec\n    command: \"((((((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)\"\n    "
         "decision: "
         "deny\n",
         "refused: too complex"},
        {"rules:\n  - label: workspace.exec\n    command: \"(a*)*\\\\1\"\n    decision: deny\n",
         "refused: back-references are not supported"},
        {"rules:\n  - label: workspace.exec\n    command: \"a{66666666666666666666}\"\n    decision: deny\n",
         "refused: too complex"},
        {"rules:\n  - label: workspace.exec\n    command: \"a{1,66666666666666666666}\"\n    decision: deny\n",
         "refused: too complex"},
        {"rules:\n  - decision: allow\n", "policy.yaml:2: rules[0]: missing key \"label\""},
        {"rules:\n  - label: workspace.read\n", "policy.yaml:2: rules[0]: missing key \"decision\""},
        {"default: sometimes\n", "policy.yaml:1: default: expected allow"},
        {"rule:\n  - label: x\n", "policy.yaml:1: rule: unknown key"},
        {"rules: allow\n", "policy.yaml:1: rules: expected a list"},
        {"rules:\n  - label: a\n    label: b\n    decision: deny\n", "policy.yaml:3: rules[0].label: given twice"},
        {"rules:\n  - [label, x]\n", "policy.yaml:2: rules[0]: expected a mapping"},
        {"rules:\n  - label: a\n    decision: deny\n   bad indent: x\n", "policy.yaml:4: not valid YAML"},
        {"", "policy.yaml: empty"},
        {"- just\n- a list\n", "policy.yaml:1: : expected a mapping"},
        {"default: allow\n---\ndefault: deny\n", "policy.yaml:3: more than one YAML document"},
        {"rules:\n  - label: \"\"\n    decision: deny\n", "policy.yaml:2: rules[0].label: expected a non-empty"},
        /* a mistyped label or tool would leave its rule dead (the gate off) */
        {"rules:\n  - label: workspace.exce\n    decision: hold\n",
         "policy.yaml:2: rules[0].label: \"workspace.exce\" matches no action label (workspace.read, "
         "workspace.write, workspace.exec)"},
        {"rules:\n  - label: workspace.exec\n    decision: deny\n  - label: \"*.exce\"\n    decision: hold\n",
         "policy.yaml:4: rules[1].label: \"*.exce\" matches no action label"},
        {"rules:\n  - label: workspace.exec\n    tool: exce\n    decision: hold\n",
         "policy.yaml:3: rules[0].tool: \"exce\" matches no tool name (read, write, edit, search, glob, ls, exec, "
         "job, apply_patch)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ocisbx_policy *p = (ocisbx_policy *)1;
        int rc = ocisbx_policy_load_yaml(cases[i].yaml, strlen(cases[i].yaml), "policy.yaml", &p);
        const char *m = ocisbx_error_message(ocisbx_error_last());
        if (rc != OCISBX_ECONFIG || !strstr(m, cases[i].want))
            fail_msg("case %zu: rc %d, message \"%s\", want \"%s\"", i, rc, m, cases[i].want);
        assert_null(p);
    }
}

/* Ordinary expressions pass the complexity check and still match. */
static void ordinary_regexes_are_accepted(void **state)
{
    (void)state;
    static const struct {
        const char *re, *hit, *miss;
    } cases[] = {
        {"^(git|make)( |$)", "git status", "gitk"},
        {"^[[:alpha:]]+ -[a-z]{1,3}$", "ls -la", "ls -lahX"},
        {"x{2,}y?z*", "xxz", "xz"},
        {"^[]a]+\\\\.c$", "]a.c", "b.c"},
        {"^(a{10}){10}$",
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaa",
         "aaaa"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char y[512];
        snprintf(y, sizeof y, "rules:\n  - label: workspace.exec\n    command: \"%s\"\n    decision: deny\n",
                 cases[i].re);
        ocisbx_policy *p = NULL;
        if (ocisbx_policy_load_yaml(y, strlen(y), "p.yaml", &p))
            fail_msg("case %zu: %s", i, ocisbx_error_message(ocisbx_error_last()));
        assert_int_equal(ocisbx_policy_decide(p, "exec", "workspace.exec", cases[i].hit, NULL, NULL),
                         OCISBX_GATE_DENY);
        assert_int_equal(ocisbx_policy_decide(p, "exec", "workspace.exec", cases[i].miss, NULL, NULL),
                         OCISBX_GATE_ALLOW);
        ocisbx_policy_free(p);
    }
}

static void control_bytes_in_errors_are_escaped(void **state)
{
    (void)state;
    const char *y = "default: \"\\e[31mred\\xff\"\n";
    ocisbx_policy *p = NULL;
    assert_int_equal(ocisbx_policy_load_yaml(y, strlen(y), "p\x1b.yaml", &p), OCISBX_ECONFIG);
    const char *m = ocisbx_error_message(ocisbx_error_last());
    for (const unsigned char *c = (const unsigned char *)m; *c; c++)
        if (*c < 0x20 || *c >= 0x7f)
            fail_msg("raw byte 0x%02x in \"%s\"", *c, m);
}

static void files_regular_only(void **state)
{
    (void)state;
    char dir[] = "/tmp/ocisbx-policy-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64], fifo[64];
    snprintf(path, sizeof path, "%s/p.yaml", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(GOOD, f);
    fclose(f);
    ocisbx_policy *p = NULL;
    assert_int_equal(ocisbx_policy_load_file(path, &p), 0);
    assert_int_equal(ocisbx_policy_rule_count(p), 3);
    ocisbx_policy_free(p);
    /* a FIFO is refused at once instead of waiting for a writer */
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(20);
    assert_int_equal(ocisbx_policy_load_file(fifo, &p), OCISBX_EINVAL);
    alarm(0);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "not a regular file"));
    assert_int_equal(ocisbx_policy_load_file("/nonexistent/p.yaml", &p), OCISBX_ENOTFOUND);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "/nonexistent/p.yaml"));
    unlink(fifo);
    unlink(path);
    rmdir(dir);
}

/* The ready policies refuse a label (or glob) that matches no tool's label. */
static void ready_policies_check_labels(void **state)
{
    (void)state;
    ocisbx_harness_options *o = NULL;
    assert_int_equal(ocisbx_harness_options_new(&o), 0);
    assert_int_equal(ocisbx_harness_options_require_person(o, "workspace.exce"), OCISBX_EINVAL);
    const char *m = ocisbx_error_message(ocisbx_error_last());
    assert_non_null(strstr(m, "\"workspace.exce\""));
    assert_non_null(strstr(m, "workspace.read, workspace.write, workspace.exec"));
    assert_int_equal(ocisbx_harness_options_deny_label(o, "workspace.wrte", NULL), OCISBX_EINVAL);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "\"workspace.wrte\""));
    assert_int_equal(ocisbx_harness_options_deny_label(o, "exec", "no"), OCISBX_EINVAL);
    assert_int_equal(ocisbx_harness_options_require_person(o, OCISBX_LABEL_EXEC), 0);
    assert_int_equal(ocisbx_harness_options_require_person(o, "workspace.*"), 0);
    assert_int_equal(ocisbx_harness_options_deny_label(o, "*", NULL), 0);
    assert_int_equal(ocisbx_harness_options_deny_label(o, OCISBX_LABEL_WRITE, "read-only"), 0);
    ocisbx_harness_options_free(o);
}

static void decision_names(void **state)
{
    (void)state;
    assert_string_equal(ocisbx_gate_decision_name(OCISBX_GATE_ALLOW), "allow");
    assert_string_equal(ocisbx_gate_decision_name(OCISBX_GATE_DENY), "deny");
    assert_string_equal(ocisbx_gate_decision_name(OCISBX_GATE_HOLD), "hold");
    assert_null(ocisbx_gate_decision_name(7));
}

/* A command rule matches each simple command of the line: an allow holds
 * only when every one has an allow and the line has nothing opaque (issue
 * 20, item 9: the documented example let a whole line run). */
static void allow_covers_every_simple_command(void **state)
{
    (void)state;
    ocisbx_policy *p =
        load("rules:\n"
             "  - label: workspace.exec\n    command: \"^pytest( |$)\"\n    decision: allow\n"
             "  - label: workspace.exec\n    command: \"^git (status|diff)( |$)\"\n    decision: allow\n"
             "  - label: workspace.exec\n    command: \"^rm \"\n    decision: deny\n"
             "    reason: no rm\n"
             "  - label: workspace.exec\n    decision: hold\n    reason: a person checks it\n"
             "default: deny\n");
    static const struct {
        const char *line;
        int want;
    } cases[] = {
        {"pytest -q", OCISBX_GATE_ALLOW},
        {"pytest -q && git status", OCISBX_GATE_ALLOW},
        {"pytest > out.txt 2>&1; git diff | pytest", OCISBX_GATE_ALLOW},
        {"pytest ; echo pwned > /workspace/.git/pwned; cat secrets/key", OCISBX_GATE_HOLD},
        {"pytest $(touch pwned2) -q", OCISBX_GATE_HOLD},
        {"pytest `touch pwned2` -q", OCISBX_GATE_HOLD},
        {"pytest <(cat secrets/key)", OCISBX_GATE_HOLD},
        {"eval pytest", OCISBX_GATE_HOLD},
        {"(pytest)", OCISBX_GATE_HOLD},
        {"pytest > /etc/cron.d/x", OCISBX_GATE_HOLD},
        {"pytest && rm -rf /workspace", OCISBX_GATE_DENY},
        {"pytest $(rm -rf /workspace)", OCISBX_GATE_DENY}, /* the deny sees the whole line */
        {"PATH=/tmp pytest", OCISBX_GATE_HOLD},
        {"'py'test -q", OCISBX_GATE_ALLOW},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *why = NULL;
        int d = ocisbx_policy_decide(p, "exec", "workspace.exec", cases[i].line, NULL, &why);
        if (d != cases[i].want)
            fail_msg("%s: %s, want %s", cases[i].line, ocisbx_gate_decision_name(d),
                     ocisbx_gate_decision_name(cases[i].want));
        if (d == OCISBX_GATE_DENY)
            assert_string_equal(why, "no rm");
        if (d == OCISBX_GATE_HOLD)
            assert_string_equal(why, "a person checks it");
    }
    ocisbx_policy_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_matching_rule_decides),
        cmocka_unit_test(allow_covers_every_simple_command),
        cmocka_unit_test(rules_with_command_or_path_need_one),
        cmocka_unit_test(bad_files_name_file_line_and_key),
        cmocka_unit_test(ordinary_regexes_are_accepted),
        cmocka_unit_test(control_bytes_in_errors_are_escaped),
        cmocka_unit_test(files_regular_only),
        cmocka_unit_test(ready_policies_check_labels),
        cmocka_unit_test(decision_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
