/* The file tools: read, write, edit, search, glob, ls (rows in
 * tool_table.c), each a call onto the backend with its result for the model. */
#include <stdlib.h>
#include <string.h>

#include "harness/call.h"
#include "ocisbx/backend.h"

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

int harness_tool_write(harness_call *c)
{
    const char *content = call_str(c, "content");
    size_t len = strlen(content);
    c->ev_before = file_sha(c);
    int rc = ocisbx_backend_write(c->h->b, call_target(c), content, len);
    if (rc)
        return call_backend_failure(c, rc);
    unsigned char md[OCISBX_SHA256_LEN];
    char hex[OCISBX_SHA256_LEN * 2 + 1];
    ocisbx_sha256(content, len, md);
    ocisbx_hex(md, sizeof md, hex);
    call_set_hex(&c->ev_after, hex);
    call_add_redacted(c->h, c->result, "path", c->path);
    cJSON_AddNumberToObject(c->result, "bytes", (double)len);
    cJSON_AddStringToObject(c->result, "sha256", hex);
    return 0;
}

int harness_tool_edit(harness_call *c)
{
    c->ev_before = file_sha(c);
    size_t count = 0;
    int rc = ocisbx_backend_edit(c->h->b, call_target(c), call_str(c, "old_string"), call_str(c, "new_string"),
                                 call_bool(c, "replace_all"), call_str(c, "expected_sha256"), &count);
    if (rc)
        return call_backend_failure(c, rc);
    c->ev_after = file_sha(c);
    cJSON_AddNumberToObject(c->result, "replacements", (double)count);
    if (c->ev_after)
        cJSON_AddStringToObject(c->result, "sha256", c->ev_after);
    else
        cJSON_AddNullToObject(c->result, "sha256");
    return 0;
}

int harness_tool_search(harness_call *c)
{
    ocisbx_search_options *o = NULL;
    ocisbx_search_result *r = NULL;
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
        rc = ocisbx_search_options_set_max_results(o, (size_t)call_int(c, "max_results"));
    if (!rc)
        rc = ocisbx_backend_search(c->h->b, call_str(c, "pattern"), o, &r);
    ocisbx_search_options_free(o);
    if (rc)
        return call_backend_failure(c, rc);
    cJSON *m = cJSON_AddArrayToObject(c->result, "matches");
    for (size_t i = 0; i < ocisbx_search_result_count(r); i++) {
        if (!gate_path_visible(c, ocisbx_search_result_path(r, i)))
            continue;
        cJSON *e = cJSON_CreateObject();
        const char *text = ocisbx_search_result_text(r, i);
        char *shown = call_redact(c->h, text, strlen(text), NULL);
        call_add_redacted(c->h, e, "path", ocisbx_search_result_path(r, i));
        cJSON_AddNumberToObject(e, "line", (double)ocisbx_search_result_line(r, i));
        cJSON_AddStringToObject(e, "text", shown ? shown : "");
        free(shown);
        cJSON_AddItemToArray(m, e);
    }
    c->ev.truncated = ocisbx_search_result_truncated(r) != 0;
    cJSON_AddBoolToObject(c->result, "truncated", c->ev.truncated);
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
    int rc = ocisbx_backend_ls(c->h->b, call_target(c), &l);
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
    gate_add_denied_paths(c);
    ocisbx_entry_list_free(l);
    return 0;
}
