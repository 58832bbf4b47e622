/* ocisbx evidence verify FILE: exit 0 with the record count for a whole
 * chain, 1 naming the first line that breaks it, 2 for a bad command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"
#include "harness/evidence.h"

static char dir[] = "/tmp/ocisbx-it-cli-evidence-XXXXXX";
static char path[128];

static void make_file(int n)
{
    unlink(path);
    evidence_file *ef = NULL;
    assert_int_equal(evidence_file_open(path, &ef), 0);
    for (int i = 0; i < n; i++) {
        evidence_fields e;
        evidence_fields_init(&e);
        e.tool = "exec";
        e.label = "workspace.exec";
        e.decision = i % 2 ? "deny" : "allow";
        e.command = i == 1 ? "echo one" : "echo other";
        assert_int_equal(evidence_file_append(ef, &e, NULL), 0);
    }
    evidence_file_close(ef);
}

static void whole_chain(void **state)
{
    (void)state;
    make_file(3);
    cli_result r;
    CLI_RUN(&r, "evidence", "verify", path);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "3 records"));
    assert_string_equal(r.err, "");
    cli_result_free(&r);
}

static void tampered_line(void **state)
{
    (void)state;
    make_file(3);
    /* line 2 says "echo one": change it in place, same length */
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    char *p = strstr(buf, "echo one");
    assert_non_null(p);
    p[5] = 'X';
    fseek(f, 0, SEEK_SET);
    fwrite(buf, 1, n, f);
    fclose(f);
    cli_result r;
    CLI_RUN(&r, "evidence", "verify", path);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "line 3"));
    assert_non_null(strstr(r.err, "line 2 was changed"));
    assert_string_equal(r.out, "");
    cli_result_free(&r);
}

static void usage_errors(void **state)
{
    (void)state;
    cli_result r;
    CLI_RUN(&r, "evidence", "verify");
    assert_int_equal(r.status, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "evidence", "check", path);
    assert_int_equal(r.status, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "evidence", "verify", "--bogus", path);
    assert_int_equal(r.status, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "evidence", "verify", "/nonexistent/evidence.jsonl");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "/nonexistent/evidence.jsonl"));
    cli_result_free(&r);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/evidence.jsonl", dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_chain),
        cmocka_unit_test(tampered_line),
        cmocka_unit_test(usage_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    rmdir(dir);
    return rc;
}
