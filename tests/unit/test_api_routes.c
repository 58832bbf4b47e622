/* The route table and URL building: paths, percent-encoding, queries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/routes.h"
#include "ocisbx/api.h"

static char *url_of(ocisbx_op op, const ocisbx_param *p, size_t n)
{
    char *u = NULL;
    assert_int_equal(ocisbx_route_url(ocisbx_route_get(op), "https://h.example/", "20231130", p, n, &u), 0);
    return u;
}

static void test_every_route(void **state)
{
    (void)state;
    assert_int_equal(ocisbx_route_count(), OCISBX_OP_COUNT);
    /* every operation has exactly one route, found by op (not by position) */
    for (int op = 0; op < OCISBX_OP_COUNT; op++) {
        size_t rows = 0;
        for (size_t i = 0; i < ocisbx_route_count(); i++)
            rows += ocisbx_route_at(i)->op == (ocisbx_op)op;
        assert_int_equal(rows, 1);
        assert_non_null(ocisbx_route_get((ocisbx_op)op));
        assert_int_equal((int)ocisbx_route_get((ocisbx_op)op)->op, op);
    }
    assert_null(ocisbx_route_get(OCISBX_OP_COUNT));
    for (size_t i = 0; i < ocisbx_route_count(); i++) {
        const ocisbx_route *r = ocisbx_route_at(i);
        assert_non_null(r->name);
        /* names are unique: find returns this very row */
        assert_ptr_equal(ocisbx_route_find(r->name), r);
        assert_string_equal(ocisbx_operation_name(i), r->name);
        assert_true(r->path[0] == '/');
        bool post = strcmp(r->method, "POST") == 0;
        /* every POST creates or acts: it carries a retry token */
        if (post)
            assert_int_equal(r->retry, OCISBX_HTTP_RETRY_TOKEN);
        if (post)
            assert_non_null(r->request);
        /* if-match [public]: update, stop, extend and snapshot delete, no other */
        bool want_if_match = r->op == OCISBX_OP_UPDATE_SANDBOX || r->op == OCISBX_OP_STOP_SANDBOX ||
                             r->op == OCISBX_OP_EXTEND_SANDBOX || r->op == OCISBX_OP_DELETE_SNAPSHOT;
        assert_int_equal(r->if_match, want_if_match);
    }
    assert_null(ocisbx_operation_name(OCISBX_OP_COUNT));
    assert_null(ocisbx_route_find("NoSuchOperation"));
}

static void test_paths(void **state)
{
    (void)state;
    ocisbx_param p[] = {{"sandboxId", "sbx-abc"}, {"commandId", "cmd-1"}, {"projectId", "ocid1.p"}};
    struct {
        ocisbx_op op;
        const char *want;
    } cases[] = {
        {OCISBX_OP_CREATE_SANDBOX, "https://h.example/20231130/sandboxes?projectId=ocid1.p"},
        {OCISBX_OP_GET_SANDBOX, "https://h.example/20231130/sandboxes/sbx-abc"},
        {OCISBX_OP_STOP_SANDBOX, "https://h.example/20231130/sandboxes/sbx-abc/actions/stop"},
        {OCISBX_OP_EXTEND_SANDBOX, "https://h.example/20231130/sandboxes/sbx-abc/actions/extend"},
        {OCISBX_OP_SUSPEND_SANDBOX, "https://h.example/20231130/sandboxes/sbx-abc/actions/suspend"},
        {OCISBX_OP_RESUME_SANDBOX, "https://h.example/20231130/sandboxes/sbx-abc/actions/resume"},
        {OCISBX_OP_RUN_COMMAND, "https://h.example/20231130/sandboxes/sbx-abc/commands"},
        {OCISBX_OP_RUN_COMMAND_AND_WAIT, "https://h.example/20231130/sandboxes/sbx-abc/commands/actions/runAndWait"},
        {OCISBX_OP_RUN_COMMAND_AND_STREAM,
         "https://h.example/20231130/sandboxes/sbx-abc/commands/actions/runAndStream"},
        {OCISBX_OP_GET_COMMAND, "https://h.example/20231130/sandboxes/sbx-abc/commands/cmd-1"},
        {OCISBX_OP_GET_COMMAND_OUTPUT, "https://h.example/20231130/sandboxes/sbx-abc/commands/cmd-1/output"},
        {OCISBX_OP_CANCEL_COMMAND, "https://h.example/20231130/sandboxes/sbx-abc/commands/cmd-1/actions/cancel"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *u = url_of(cases[i].op, p, 3);
        assert_string_equal(u, cases[i].want);
        ocisbx_free(u);
    }
    ocisbx_param s[] = {{"snapshotId", "snap-1"}, {"sandboxId", "sbx-1"}, {"limit", "5"}, {"page", "p2"}};
    char *u = url_of(OCISBX_OP_GET_SNAPSHOT, s, 1);
    assert_string_equal(u, "https://h.example/20231130/sandboxSnapshots/snap-1");
    ocisbx_free(u);
    u = url_of(OCISBX_OP_LIST_SNAPSHOTS, s, 4);
    assert_string_equal(
        u, "https://h.example/20231130/sandboxSnapshots?sandboxId=sbx-1&snapshotId=snap-1&limit=5&page=p2");
    ocisbx_free(u);
    /* the list filters of snapshots and commands [public names], in the table's order */
    ocisbx_param f[] = {{"sortOrder", "ASC"},   {"sortBy", "timeStarted"}, {"lifecycleState", "ACTIVE"},
                        {"displayName", "d"},   {"projectId", "p"},        {"commandId", "cmd-9"},
                        {"sandboxId", "sbx-1"}, {"snapshotId", "snap-2"}};
    u = url_of(OCISBX_OP_LIST_SNAPSHOTS, f, 8);
    assert_string_equal(u, "https://h.example/20231130/sandboxSnapshots?projectId=p&displayName=d&sandboxId=sbx-1&"
                           "snapshotId=snap-2&lifecycleState=ACTIVE&sortBy=timeStarted&sortOrder=ASC");
    ocisbx_free(u);
    u = url_of(OCISBX_OP_LIST_COMMANDS, f, 8);
    assert_string_equal(u, "https://h.example/20231130/sandboxes/sbx-1/commands?commandId=cmd-9&sortBy=timeStarted&"
                           "sortOrder=ASC");
    ocisbx_free(u);
}

static void test_query_order_and_filter(void **state)
{
    (void)state;
    /* given out of order, with one the route does not take */
    ocisbx_param p[] = {{"page", "tok"},     {"sortOrder", "DESC"},         {"filePath", "/x"},
                        {"projectId", "p1"}, {"lifecycleState", "RUNNING"}, {"limit", "10"}};
    char *u = url_of(OCISBX_OP_LIST_SANDBOXES, p, 6);
    assert_string_equal(u, "https://h.example/20231130/sandboxes?projectId=p1&lifecycleState=RUNNING&sortOrder=DESC"
                           "&limit=10&page=tok");
    ocisbx_free(u);
}

static void test_file_path_encoding(void **state)
{
    (void)state;
    ocisbx_param p[] = {{"sandboxId", "sbx 1/2"}, {"filePath", "/workspace/a b%c+d#e?f&g=h/\xc3\xa9t\xc3\xa9.txt"}};
    char *u = url_of(OCISBX_OP_WRITE_FILE, p, 2);
    assert_string_equal(u, "https://h.example/20231130/sandboxes/sbx%201%2F2/files?filePath="
                           "%2Fworkspace%2Fa%20b%25c%2Bd%23e%3Ff%26g%3Dh%2F%C3%A9t%C3%A9.txt");
    ocisbx_free(u);
}

static void test_pct_encode_unreserved(void **state)
{
    (void)state;
    ocisbx_buf b = OCISBX_BUF_INIT;
    const char all[] = "AZaz09-._~ !*'();:@&=+$,/?#[]";
    assert_int_equal(ocisbx_pct_encode(&b, all, strlen(all)), 0);
    assert_string_equal(b.data, "AZaz09-._~%20%21%2A%27%28%29%3B%3A%40%26%3D%2B%24%2C%2F%3F%23%5B%5D");
    ocisbx_buf_clear(&b);
    const char bytes[] = {'\x00', '\x7f', '\xff'};
    assert_int_equal(ocisbx_pct_encode(&b, bytes, 3), 0);
    assert_string_equal(b.data, "%00%7F%FF");
    ocisbx_buf_free(&b);
}

static void test_missing_params(void **state)
{
    (void)state;
    char *u = NULL;
    ocisbx_param none[] = {{"other", "x"}};
    assert_int_equal(ocisbx_route_url(ocisbx_route_get(OCISBX_OP_GET_SANDBOX), "https://h", "v", none, 1, &u),
                     OCISBX_EINVAL);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "sandboxId"));
    ocisbx_param empty[] = {{"sandboxId", ""}};
    assert_int_equal(ocisbx_route_url(ocisbx_route_get(OCISBX_OP_GET_SANDBOX), "https://h", "v", empty, 1, &u),
                     OCISBX_EINVAL);
    ocisbx_param sb[] = {{"sandboxId", "s"}};
    assert_int_equal(ocisbx_route_url(ocisbx_route_get(OCISBX_OP_READ_FILE), "https://h", "v", sb, 1, &u),
                     OCISBX_EINVAL);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "filePath"));
    assert_int_equal(ocisbx_route_url(ocisbx_route_get(OCISBX_OP_CREATE_SANDBOX), "https://h", "v", sb, 1, &u),
                     OCISBX_EINVAL);
    assert_null(u);
}

static void test_version_and_prefix(void **state)
{
    (void)state;
    char *u = NULL;
    ocisbx_param p[] = {{"sandboxId", "s"}};
    assert_int_equal(ocisbx_route_url(ocisbx_route_get(OCISBX_OP_GET_SANDBOX), "http://127.0.0.1:8080/prefix//",
                                      "2099", p, 1, &u),
                     0);
    assert_string_equal(u, "http://127.0.0.1:8080/prefix/2099/sandboxes/s");
    ocisbx_free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_route),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_query_order_and_filter),
        cmocka_unit_test(test_file_path_encoding),
        cmocka_unit_test(test_pct_encode_unreserved),
        cmocka_unit_test(test_missing_params),
        cmocka_unit_test(test_version_and_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
