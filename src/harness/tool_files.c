/* The file tools: read, write, edit, search, glob, ls (rows in
 * tool_table.c), each a call onto the backend with its result for the model. */
#include <stdlib.h>
#include <string.h>

#include "harness/call.h"
#include "ocisbx/backend.h"
#include "util/diff.h"

/* The whole file's SHA-256 (hex) when it exists and is readable as text or
 * binary; NULL otherwise (a new file). */
static char *file_sha(harness_call *c)
{
    ocisbx_text_result *t = NULL;
    int rc = ocisbx_backend_read_text(c->h->b, call_target(c), 1, 1, &t);
    char *s = (rc == 0 || rc == OCISBX_EBINARY) && t ? ocisbx_strdup(ocisbx_text_result_sha256(t)) : NULL;
    ocisbx_text_result_free(t);
    return s;
}

int harness_tool_read(harness_call *c)
{
    ocisbx_text_result *t = NULL;
    int rc = ocisbx_backend_read_text(c->h->b, call_target(c), call_int(c, "offset"), call_int(c, "limit"), &t);
    if (rc == OCISBX_EBINARY && t) {
        cJSON_AddBoolToObject(c->result, "binary", 1);
        cJSON_AddNumberToObject(c->result, "bytes", (double)ocisbx_text_result_size(t));
        cJSON_AddStringToObject(c->result, "sha256", ocisbx_text_result_sha256(t));
        ocisbx_text_result_free(t);
        return 0;
    }
    if (rc) {
        ocisbx_text_result_free(t);
        return call_backend_failure(c, rc);
    }
    size_t len = 0;
    const char *text = ocisbx_text_result_text(t);
    char *shown = call_redact(c->h, text, strlen(text), &len);
    int64_t total = ocisbx_text_result_total_lines(t);
    int64_t last = ocisbx_text_result_first_line(t) + ocisbx_text_result_line_count(t) - 1;
    cJSON_AddStringToObject(c->result, "content", shown ? shown : "");
    cJSON_AddNumberToObject(c->result, "total_lines", (double)total);
    cJSON_AddBoolToObject(c->result, "truncated", last < total);
    c->ev.truncated = last < total;
    call_returned(c, shown ? shown : "", len);
    free(shown);
    ocisbx_text_result_free(t);
    return 0;
}

/* What the file holds before a write: *old (NULL when it cannot be
 * compared) and the evidence's sha256_before. Returns the read's code. */
static int write_before(harness_call *c, char **old, size_t *old_len)
{
    int rc = call_read_file(c, call_target(c), OCISBX_BACKEND_DEFAULT_MAX_EDIT_BYTES, old, old_len);
    if (rc == 0) {
        unsigned char md[OCISBX_SHA256_LEN];
        char hex[OCISBX_SHA256_LEN * 2 + 1];
        ocisbx_sha256(*old, *old_len, md);
        ocisbx_hex(md, sizeof md, hex);
        call_set_hex(&c->ev_before, hex);
    } else if (rc != OCISBX_ENOTFOUND) {
        c->ev_before = file_sha(c); /* too large to compare, or not readable: no diff */
    }
    return rc;
}

/* The write's diff: against the old content, or from /dev/null for a new file. */
static void write_diff(harness_call *c, int before_rc, const char *old, size_t old_len, const char *content,
                       size_t len)
{
    if (before_rc && before_rc != OCISBX_ENOTFOUND) {
        cJSON_AddStringToObject(c->result, "diff",
                                before_rc == OCISBX_ETOOLARGE
                                    ? "[no diff: the old file is too large to compare]\n"
                                    : "[no diff: the old file could not be read to compare]\n");
        return;
    }
    char *a = before_rc ? ocisbx_strdup("/dev/null") : call_diff_label("a/", c->path);
    char *b = call_diff_label("b/", c->path);
    char *diff = NULL;
    size_t dlen = 0;
    if (a && b &&
        ocisbx_diff_unified(a, b, old ? old : "", old_len, content, len, CALL_DIFF_MAX, &diff, &dlen, NULL) == 0)
        call_add_redacted_len(c->h, c->result, "diff", diff, dlen);
    free(diff);
    free(a);
    free(b);
}

int harness_tool_write(harness_call *c)
{
    const char *content = call_str(c, "content");
    size_t len = strlen(content), old_len = 0;
    char *old = NULL;
    int before_rc = write_before(c, &old, &old_len);
    int rc = ocisbx_backend_write(c->h->b, call_target(c), content, len);
    if (rc) {
        free(old);
        return call_backend_failure(c, rc);
    }
    unsigned char md[OCISBX_SHA256_LEN];
    char hex[OCISBX_SHA256_LEN * 2 + 1];
    ocisbx_sha256(content, len, md);
    ocisbx_hex(md, sizeof md, hex);
    call_set_hex(&c->ev_after, hex);
    call_add_redacted(c->h, c->result, "path", c->path);
    cJSON_AddNumberToObject(c->result, "bytes", (double)len);
    cJSON_AddStringToObject(c->result, "sha256", hex);
    write_diff(c, before_rc, old, old_len, content, len);
    free(old);
    return 0;
}

/* The edits of the call: its edits list, or its one old_string/new_string. */
static int edit_options(harness_call *c, const cJSON *edits, ocisbx_edit_options **out)
{
    const char *old = call_str(c, "old_string"), *neu = call_str(c, "new_string");
    if (edits && (old || neu))
        return call_error(c, "invalid_arguments", OCISBX_EINVAL,
                          "edit: give either old_string and new_string, or edits, not both");
    if (edits && call_bool(c, "replace_all"))
        return call_error(c, "invalid_arguments", OCISBX_EINVAL,
                          "edit: with edits, replace_all goes in each edit ({old_string, new_string, replace_all})");
    if (!edits && (!old || !neu))
        return call_error(c, "invalid_arguments", OCISBX_EINVAL,
                          "edit: missing required argument \"%s\" (or give edits: [{old_string, new_string}])",
                          old ? "new_string" : "old_string");
    ocisbx_edit_options *o = NULL;
    int rc = ocisbx_edit_options_new(&o);
    if (!rc && !edits)
        rc = ocisbx_edit_options_add(o, old, neu, call_bool(c, "replace_all"));
    const cJSON *e;
    cJSON_ArrayForEach(e, edits)
    {
        if (!rc)
            rc = ocisbx_edit_options_add(o, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "old_string")),
                                         cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "new_string")),
                                         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "replace_all")));
    }
    if (!rc)
        rc = ocisbx_edit_options_set_dry_run(o, call_bool(c, "dry_run"));
    if (!rc && call_str(c, "expected_sha256"))
        rc = ocisbx_edit_options_set_expected_sha256(o, call_str(c, "expected_sha256"));
    if (!rc)
        rc = ocisbx_edit_options_set_max_diff_bytes(o, CALL_DIFF_MAX);
    if (rc) {
        ocisbx_edit_options_free(o);
        return call_backend_failure(c, rc);
    }
    *out = o;
    return 0;
}

/* A failed edit: the single form's message says "edit", as it always did. */
static int edit_failure(harness_call *c, int rc, bool single)
{
    call_backend_failure(c, rc);
    static const char pre[] = "edits[0]";
    if (single && !strncmp(c->err_msg, pre, sizeof pre - 1))
        memmove(c->err_msg + 4, c->err_msg + sizeof pre - 1, strlen(c->err_msg + sizeof pre - 1) + 1);
    return rc;
}

int harness_tool_edit(harness_call *c)
{
    const cJSON *edits = cJSON_GetObjectItemCaseSensitive(c->args, "edits");
    ocisbx_edit_options *o = NULL;
    ocisbx_edit_result *r = NULL;
    int rc = edit_options(c, edits, &o);
    if (rc)
        return rc;
    rc = ocisbx_backend_apply_edits(c->h->b, call_target(c), o, &r);
    ocisbx_edit_options_free(o);
    if (rc) {
        ocisbx_edit_result_free(r);
        return edit_failure(c, rc, !edits);
    }
    bool dry = ocisbx_edit_result_dry_run(r) != 0;
    call_set_hex(&c->ev_before, ocisbx_edit_result_sha256_before(r));
    call_set_hex(&c->ev_after, dry ? ocisbx_edit_result_sha256_before(r) : ocisbx_edit_result_sha256_after(r));
    cJSON_AddNumberToObject(c->result, "replacements", (double)ocisbx_edit_result_total_replacements(r));
    if (edits) {
        cJSON *a = cJSON_AddArrayToObject(c->result, "edits");
        for (size_t i = 0; a && i < ocisbx_edit_result_edit_count(r); i++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "replacements", (double)ocisbx_edit_result_replacements(r, i));
            cJSON_AddItemToArray(a, e);
        }
    }
    cJSON_AddStringToObject(c->result, "sha256", ocisbx_edit_result_sha256_after(r));
    cJSON_AddBoolToObject(c->result, "dry_run", dry);
    size_t dlen = 0;
    const char *diff = ocisbx_edit_result_diff(r, &dlen);
    call_add_redacted_len(c->h, c->result, "diff", diff, diff ? dlen : 0);
    ocisbx_edit_result_free(r);
    return 0;
}

static int search_options(harness_call *c, ocisbx_search_options **out)
{
    const char *mode = call_str(c, "output_mode");
    ocisbx_search_mode m = !strcmp(mode, "count")                ? OCISBX_SEARCH_COUNT
                           : !strcmp(mode, "files_with_matches") ? OCISBX_SEARCH_FILES_WITH_MATCHES
                                                                 : OCISBX_SEARCH_CONTENT;
    /* max_results has no default: given, it is head_limit's older name */
    const cJSON *older = cJSON_GetObjectItemCaseSensitive(c->args, "max_results");
    int64_t limit = older ? call_int(c, "max_results") : call_int(c, "head_limit");
    size_t ctx = (size_t)call_int(c, "context");
    ocisbx_search_options *o = NULL;
    int rc = ocisbx_search_options_new(&o);
    if (!rc)
        rc = ocisbx_search_options_set_path(o, call_target(c));
    if (!rc)
        rc = ocisbx_search_options_set_literal(o, call_bool(c, "literal"));
    if (!rc)
        rc = ocisbx_search_options_set_ignore_case(o, call_bool(c, "ignore_case"));
    if (!rc && call_str(c, "glob"))
        rc = ocisbx_search_options_set_glob(o, call_str(c, "glob"));
    if (!rc)
        rc = ocisbx_search_options_set_output_mode(o, m);
    if (!rc)
        rc = ocisbx_search_options_set_context(o, ctx, ctx);
    if (!rc)
        rc = ocisbx_search_options_set_head_limit(o, (size_t)limit);
    if (!rc)
        rc = ocisbx_search_options_set_offset(o, (uint64_t)call_int(c, "offset"));
    if (rc) {
        ocisbx_search_options_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

/* lines j of match i's before (or after) lines, redacted. */
static cJSON *context_lines(harness_call *c, const ocisbx_search_result *r, size_t i, bool after)
{
    cJSON *a = cJSON_CreateArray();
    size_t n = after ? ocisbx_search_result_after_count(r, i) : ocisbx_search_result_before_count(r, i);
    for (size_t j = 0; a && j < n; j++) {
        const char *l = after ? ocisbx_search_result_after(r, i, j) : ocisbx_search_result_before(r, i, j);
        cJSON_AddItemToArray(a, call_redacted_string(c->h, l ? l : ""));
    }
    return a;
}

/* One entry of a search result in its mode's shape. */
static void search_entry(harness_call *c, const ocisbx_search_result *r, size_t i, cJSON *list, bool ctx)
{
    const char *path = ocisbx_search_result_path(r, i);
    ocisbx_search_mode m = ocisbx_search_result_mode(r);
    if (m == OCISBX_SEARCH_FILES_WITH_MATCHES) {
        cJSON_AddItemToArray(list, call_redacted_string(c->h, path));
        return;
    }
    cJSON *e = cJSON_CreateObject();
    call_add_redacted(c->h, e, "path", path);
    if (m == OCISBX_SEARCH_COUNT) {
        cJSON_AddNumberToObject(e, "count", (double)ocisbx_search_result_matches(r, i));
    } else {
        cJSON_AddNumberToObject(e, "line", (double)ocisbx_search_result_line(r, i));
        call_add_redacted(c->h, e, "text", ocisbx_search_result_text(r, i));
        if (ctx) {
            cJSON_AddItemToObject(e, "before", context_lines(c, r, i, false));
            cJSON_AddItemToObject(e, "after", context_lines(c, r, i, true));
        }
    }
    cJSON_AddItemToArray(list, e);
}

int harness_tool_search(harness_call *c)
{
    ocisbx_search_options *o = NULL;
    ocisbx_search_result *r = NULL;
    int rc = search_options(c, &o);
    if (!rc)
        rc = ocisbx_backend_search(c->h->b, call_str(c, "pattern"), o, &r);
    ocisbx_search_options_free(o);
    if (rc)
        return call_backend_failure(c, rc);
    ocisbx_search_mode m = ocisbx_search_result_mode(r);
    const char *key = m == OCISBX_SEARCH_COUNT                ? "counts"
                      : m == OCISBX_SEARCH_FILES_WITH_MATCHES ? "files"
                                                              : "matches";
    cJSON *list = cJSON_AddArrayToObject(c->result, key);
    size_t n = ocisbx_search_result_count(r);
    bool ctx = call_int(c, "context") > 0;
    for (size_t i = 0; list && i < n; i++)
        if (gate_path_visible(c, ocisbx_search_result_path(r, i)))
            search_entry(c, r, i, list, ctx);
    c->ev.truncated = ocisbx_search_result_truncated(r) != 0;
    cJSON_AddBoolToObject(c->result, "truncated", c->ev.truncated);
    if (c->ev.truncated)
        cJSON_AddNumberToObject(c->result, "next_offset", (double)(call_int(c, "offset") + (int64_t)n));
    gate_add_denied_paths(c);
    ocisbx_search_result_free(r);
    return 0;
}

int harness_tool_glob(harness_call *c)
{
    ocisbx_entry_list *l = NULL;
    int rc = ocisbx_backend_glob(c->h->b, call_str(c, "pattern"), call_target(c), 0, &l);
    if (rc)
        return call_backend_failure(c, rc);
    cJSON *p = cJSON_AddArrayToObject(c->result, "paths");
    for (size_t i = 0; i < ocisbx_entry_list_count(l); i++)
        if (gate_path_visible(c, ocisbx_entry_list_name(l, i)))
            cJSON_AddItemToArray(p, call_redacted_string(c->h, ocisbx_entry_list_name(l, i)));
    c->ev.truncated = ocisbx_entry_list_truncated(l) != 0;
    cJSON_AddBoolToObject(c->result, "truncated", c->ev.truncated);
    gate_add_denied_paths(c);
    ocisbx_entry_list_free(l);
    return 0;
}

/* An entry of the listed directory, by its path, under the path rules. */
static bool entry_visible(harness_call *c, const char *name)
{
    ocisbx_buf p = OCISBX_BUF_INIT;
    const char *dir = call_target(c);
    bool ok = ocisbx_buf_appendf(&p, "%s/%s", dir, name) == 0 && p.data;
    bool visible = ok && gate_path_visible(c, p.data);
    if (!ok)
        c->denied_paths++; /* no memory: not shown */
    ocisbx_buf_free(&p);
    return visible;
}

int harness_tool_ls(harness_call *c)
{
    ocisbx_entry_list *l = NULL;
    int64_t offset = call_int(c, "offset");
    int rc = ocisbx_backend_ls_page(c->h->b, call_target(c), (uint64_t)offset, (size_t)call_int(c, "limit"), &l);
    if (rc)
        return call_backend_failure(c, rc);
    cJSON *a = cJSON_AddArrayToObject(c->result, "entries");
    for (size_t i = 0; i < ocisbx_entry_list_count(l); i++) {
        if (!entry_visible(c, ocisbx_entry_list_name(l, i)))
            continue;
        cJSON *e = cJSON_CreateObject();
        char t = ocisbx_entry_list_type(l, i);
        call_add_redacted(c->h, e, "name", ocisbx_entry_list_name(l, i));
        cJSON_AddStringToObject(e, "type", t == 'f' ? "file" : t == 'd' ? "dir" : t == 'l' ? "link" : "other");
        cJSON_AddNumberToObject(e, "size", (double)ocisbx_entry_list_size(l, i));
        cJSON_AddItemToArray(a, e);
    }
    c->ev.truncated = ocisbx_entry_list_truncated(l) != 0;
    cJSON_AddBoolToObject(c->result, "truncated", c->ev.truncated);
    if (c->ev.truncated)
        cJSON_AddNumberToObject(c->result, "next_offset", (double)(offset + (int64_t)ocisbx_entry_list_count(l)));
    gate_add_denied_paths(c);
    ocisbx_entry_list_free(l);
    return 0;
}
