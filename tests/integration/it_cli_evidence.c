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
#include "ocisbx/harness.h"
#include "ocisbx/util.h"

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

/* The head: the SHA-256 of the last line, printed and checked by --head, so
 * that a changed last record or a removed tail is found. */
static void head_checks(void **state)
{
    (void)state;
    make_file(3);
    /* the last line's hash, computed here */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_true(n > 0 && buf[n - 1] == '\n');
    buf[n - 1] = 0;
    char *last = strrchr(buf, '\n');
    assert_non_null(last);
    last++;
    size_t second_end = (size_t)(last - buf); /* bytes of lines 1 and 2 with their newlines */
    unsigned char md[32];
    char head[65], want_line[300];
    assert_int_equal(ocisbx_sha256(last, strlen(last), md), 0);
    ocisbx_hex(md, 32, head);
    snprintf(want_line, sizeof want_line, "%s: 3 records, chain intact, head %s\n", path, head);
    cli_result r;
    CLI_RUN(&r, "evidence", "verify", path);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, want_line);
    cli_result_free(&r);
    CLI_RUN(&r, "evidence", "verify", "--head", head, path);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, want_line);
    cli_result_free(&r);
    /* the library gives the same head */
    int64_t records = 0, bad = 0;
    char lib_head[OCISBX_EVIDENCE_HEAD_SIZE];
    assert_int_equal(ocisbx_evidence_verify_file_head(path, &records, &bad, lib_head), 0);
    assert_int_equal(records, 3);
    assert_string_equal(lib_head, head);

    /* the last record changed in place: the chain alone still passes, --head does not */
    buf[n - 1] = '\n';
    char *p = strstr(last, "echo other");
    assert_non_null(p);
    p[5] = 'X';
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
    CLI_RUN(&r, "evidence", "verify", path);
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
    CLI_RUN(&r, "evidence", "verify", "--head", head, path);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "line 3 (the last)"));
    assert_non_null(strstr(r.err, head));
    assert_string_equal(r.out, "");
    cli_result_free(&r);

    /* the last record removed */
    assert_int_equal(truncate(path, (off_t)second_end), 0);
    CLI_RUN(&r, "evidence", "verify", path);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "2 records, chain intact, head "));
    cli_result_free(&r);
    CLI_RUN(&r, "evidence", "verify", "--head", head, path);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "line 2 (the last)"));
    cli_result_free(&r);

    /* --head must be a SHA-256 */
    CLI_RUN(&r, "evidence", "verify", "--head", "abc", path);
    assert_int_equal(r.status, 2);
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
        cmocka_unit_test(head_checks),
        cmocka_unit_test(usage_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    rmdir(dir);
    return rc;
}
