/* Evidence records (src/harness/evidence.c): every field present, the chain
 * over a file (continued by a later open, by several writers), and the
 * verifier naming the first line that breaks it. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "harness/evidence.h"
#include "ocisbx/harness.h"

static const char *const FIELDS[] = {
    "tool",           "label",           "decision",      "reason",        "command",      "path",
    "exit_code",      "timed_out",       "truncated",     "duration_ms",   "output_bytes", "output_sha256",
    "returned_bytes", "returned_sha256", "sha256_before", "sha256_after",  "backend",      "sandbox_id",
    "command_id",     "started_at",      "prev_sha256",   "resolved_path", "paths"};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

typedef struct fx {
    char dir[64], path[96];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/ocisbx-ev-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->path, sizeof f->path, "%s/evidence.jsonl", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    unlink(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

static evidence_fields exec_fields(int i)
{
    static char cmd[64];
    snprintf(cmd, sizeof cmd, "echo %d", i);
    evidence_fields e;
    evidence_fields_init(&e);
    e.tool = "exec";
    e.label = "workspace.exec";
    e.decision = "allow";
    e.command = cmd;
    e.has_exit_code = true;
    e.exit_code = 0;
    e.timed_out = 0;
    e.truncated = 0;
    e.duration_ms = 12;
    e.output_bytes = 2;
    e.backend = "local:/tmp/x";
    e.started_at = "2026-12-01T20:00:00.000Z";
    return e;
}

static void every_field_present_null_when_not_applicable(void **state)
{
    (void)state;
    evidence_fields e;
    evidence_fields_init(&e);
    e.tool = "read";
    e.label = "workspace.read";
    e.decision = "deny";
    e.reason = "no";
    e.path = "/workspace/\xff.txt"; /* any bytes: the line stays valid UTF-8 JSON */
    char *line = NULL;
    assert_int_equal(evidence_line(&e, OCISBX_EVIDENCE_CHAIN_START, &line), 0);
    assert_null(strchr(line, '\n'));
    cJSON *o = cJSON_Parse(line);
    assert_non_null(o);
    assert_int_equal(cJSON_GetArraySize(o), NFIELDS);
    for (size_t i = 0; i < NFIELDS; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, FIELDS[i]);
        if (!v)
            fail_msg("field %s missing in %s", FIELDS[i], line);
    }
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "exit_code")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "timed_out")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "command")));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "path")->valuestring, "/workspace/\xef\xbf\xbd.txt");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "prev_sha256")->valuestring, OCISBX_EVIDENCE_CHAIN_START);
    cJSON_Delete(o);
    free(line);
}

static char *read_all(const char *path)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    return buf;
}

static void chain_continues_across_opens(void **state)
{
    fx *f = *state;
    for (int round = 0; round < 2; round++) {
        evidence_file *ef = NULL;
        assert_int_equal(evidence_file_open(f->path, &ef), 0);
        for (int i = 0; i < 3; i++) {
            evidence_fields e = exec_fields(round * 3 + i);
            char *line = NULL;
            assert_int_equal(evidence_file_append(ef, &e, &line), 0);
            assert_non_null(line);
            free(line);
        }
        evidence_file_close(ef);
    }
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* each prev_sha256 is the hash of the line before it */
    char *text = read_all(f->path);
    char expect[65] = OCISBX_EVIDENCE_CHAIN_START;
    int lines = 0;
    for (char *l = text; *l;) {
        char *nl = strchr(l, '\n');
        assert_non_null(nl);
        cJSON *o = cJSON_ParseWithLength(l, (size_t)(nl - l));
        assert_non_null(o);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "prev_sha256")->valuestring, expect);
        cJSON_Delete(o);
        evidence_line_hash(l, (size_t)(nl - l), expect);
        l = nl + 1;
        lines++;
    }
    assert_int_equal(lines, 6);
    int64_t records = -1, bad = -1;
    assert_int_equal(ocisbx_evidence_verify_file(f->path, &records, &bad), 0);
    assert_int_equal(records, 6);
    assert_int_equal(bad, 0);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void make_chain(const char *path, int n)
{
    unlink(path);
    evidence_file *ef = NULL;
    assert_int_equal(evidence_file_open(path, &ef), 0);
    for (int i = 0; i < n; i++) {
        evidence_fields e = exec_fields(i);
        assert_int_equal(evidence_file_append(ef, &e, NULL), 0);
    }
    evidence_file_close(ef);
}

static void expect_break(const char *path, int64_t line, const char *words)
{
    int64_t records = -1, bad = -1;
    assert_int_equal(ocisbx_evidence_verify_file(path, &records, &bad), OCISBX_EINTEGRITY);
    const char *m = ocisbx_error_message(ocisbx_error_last());
    if (bad != line || !strstr(m, words))
        fail_msg("bad line %lld, message \"%s\"", (long long)bad, m);
    assert_int_equal(records, 0);
}

static void tampering_is_found_at_the_next_line(void **state)
{
    fx *f = *state;
    /* a changed character in line 2: line 3 no longer chains to it */
    make_chain(f->path, 4);
    char *text = strdup(read_all(f->path));
    char *l2 = strchr(text, '\n') + 1;
    char *p = strstr(l2, "echo 1");
    assert_non_null(p);
    p[5] = '9';
    write_file(f->path, text);
    expect_break(f->path, 3, "line 3: prev_sha256");
    expect_break(f->path, 3, "line 2 was changed");
    /* a removed line */
    make_chain(f->path, 4);
    free(text);
    text = strdup(read_all(f->path));
    l2 = strchr(text, '\n') + 1;
    char *l3 = strchr(l2, '\n') + 1;
    memmove(l2, l3, strlen(l3) + 1);
    write_file(f->path, text);
    expect_break(f->path, 2, "line 2: prev_sha256");
    /* the first line removed: line 1 does not start the chain */
    make_chain(f->path, 3);
    free(text);
    text = strdup(read_all(f->path));
    write_file(f->path, strchr(text, '\n') + 1);
    expect_break(f->path, 1, "chain start");
    /* not JSON, and a torn last line */
    make_chain(f->path, 2);
    FILE *fp = fopen(f->path, "ab");
    fputs("garbage\n", fp);
    fclose(fp);
    expect_break(f->path, 3, "line 3 is not a record");
    make_chain(f->path, 2);
    fp = fopen(f->path, "ab");
    fputs("{\"prev_sha256\":", fp);
    fclose(fp);
    expect_break(f->path, 3, "incomplete");
    free(text);
}

/* Appends a record chained to the file's last line, with extra bytes
 * after it (before the newline), or a NUL byte put at nul_at. */
static void append_with(const char *path, const char *extra, size_t extra_len, long nul_at)
{
    char *text = strdup(read_all(path));
    size_t len = strlen(text);
    assert_true(len > 1 && text[len - 1] == '\n');
    text[len - 1] = 0;
    char *last = strrchr(text, '\n');
    last = last ? last + 1 : text;
    char prev[65];
    evidence_line_hash(last, strlen(last), prev);
    free(text);
    evidence_fields e = exec_fields(7);
    char *line = NULL;
    assert_int_equal(evidence_line(&e, prev, &line), 0);
    if (nul_at >= 0)
        line[nul_at] = 0; /* a byte of the line (inside a string) becomes NUL */
    FILE *fp = fopen(path, "ab");
    fwrite(line, 1, strlen(line) + (nul_at >= 0 ? strlen(line + nul_at + 1) + 1 : 0), fp);
    fwrite(extra, 1, extra_len, fp);
    fputc('\n', fp);
    fclose(fp);
    free(line);
}

/* A line with a second JSON value after the record, or a raw NUL byte, is
 * not a record (issue 20, item 19). */
static void trailing_values_and_nul_bytes_are_refused(void **state)
{
    fx *f = *state;
    make_chain(f->path, 2);
    append_with(f->path, "", 0, -1); /* a clean third record: the chain holds */
    int64_t records = 0;
    assert_int_equal(ocisbx_evidence_verify_file(f->path, &records, NULL), 0);
    assert_int_equal(records, 3);
    make_chain(f->path, 2);
    append_with(f->path, " {\"decision\":\"deny\"}", 20, -1);
    expect_break(f->path, 3, "line 3 is not a record");
    make_chain(f->path, 2);
    append_with(f->path, "[]", 2, -1);
    expect_break(f->path, 3, "after the record");
    make_chain(f->path, 2);
    append_with(f->path, "\0", 1, -1); /* a NUL after the object */
    expect_break(f->path, 3, "NUL");
    make_chain(f->path, 2);
    append_with(f->path, "", 0, 10); /* a NUL inside "tool":"exec" */
    expect_break(f->path, 3, "NUL");
    make_chain(f->path, 2);
    append_with(f->path, "  \t", 3, -1); /* white space after it is fine */
    assert_int_equal(ocisbx_evidence_verify_file(f->path, &records, NULL), 0);
}

static void torn_file_is_not_appended_to(void **state)
{
    fx *f = *state;
    make_chain(f->path, 1);
    FILE *fp = fopen(f->path, "ab");
    fputs("{\"partial", fp);
    fclose(fp);
    evidence_file *ef = NULL;
    assert_int_equal(evidence_file_open(f->path, &ef), 0);
    evidence_fields e = exec_fields(1);
    assert_int_equal(evidence_file_append(ef, &e, NULL), OCISBX_EINTEGRITY);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "incomplete"));
    evidence_file_close(ef);
}

static void empty_and_missing_files(void **state)
{
    fx *f = *state;
    write_file(f->path, "");
    int64_t records = -1;
    assert_int_equal(ocisbx_evidence_verify_file(f->path, &records, NULL), 0);
    assert_int_equal(records, 0);
    assert_int_equal(ocisbx_evidence_verify_file("/nonexistent/e.jsonl", &records, NULL), OCISBX_ENOTFOUND);
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/fifo", f->dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(20);
    assert_int_equal(ocisbx_evidence_verify_file(fifo, &records, NULL), OCISBX_EINVAL);
    evidence_file *ef = NULL;
    assert_int_equal(evidence_file_open(fifo, &ef), OCISBX_EINVAL);
    alarm(0);
    unlink(fifo);
}

/* Two writers on one file (as two processes would be): the chain stays whole. */
static void *writer(void *arg)
{
    evidence_file *ef = NULL;
    if (evidence_file_open(arg, &ef))
        return (void *)1;
    for (int i = 0; i < 50; i++) {
        evidence_fields e = exec_fields(i);
        if (evidence_file_append(ef, &e, NULL))
            return (void *)1;
    }
    evidence_file_close(ef);
    return NULL;
}

static void concurrent_writers_keep_the_chain(void **state)
{
    fx *f = *state;
    unlink(f->path);
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, writer, f->path), 0);
    for (int i = 0; i < 3; i++) {
        void *r;
        pthread_join(t[i], &r);
        assert_null(r);
    }
    int64_t records = -1;
    assert_int_equal(ocisbx_evidence_verify_file(f->path, &records, NULL), 0);
    assert_int_equal(records, 150);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_field_present_null_when_not_applicable),
        cmocka_unit_test_setup_teardown(chain_continues_across_opens, setup, teardown),
        cmocka_unit_test_setup_teardown(tampering_is_found_at_the_next_line, setup, teardown),
        cmocka_unit_test_setup_teardown(trailing_values_and_nul_bytes_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(torn_file_is_not_appended_to, setup, teardown),
        cmocka_unit_test_setup_teardown(empty_and_missing_files, setup, teardown),
        cmocka_unit_test_setup_teardown(concurrent_writers_keep_the_chain, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
