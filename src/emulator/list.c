/* The one list helper of the three list operations (sandboxes, commands,
 * snapshots): the query (filters, lifecycleState, sortBy, sortOrder, page)
 * and the answer (select, stable sort, page, opc-next-page). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/emu.h"

/* word is one of the space-separated words of list */
static bool one_of(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, " ");
        if (k == n && !strncmp(p, word, n))
            return true;
        p += k;
        p += *p == ' ';
    }
    return false;
}

/* "a, b or c" (last_sep " or ") or "a, b, c" (last_sep ", ") of a word list */
static void join_words(const char *list, const char *last_sep, char *out, size_t cap)
{
    size_t words = 0, o = 0;
    for (const char *p = list; *p; p += *p == ' ')
        words++, p += strcspn(p, " ");
    out[0] = 0;
    size_t i = 0;
    for (const char *p = list; *p && o < cap; i++) {
        size_t k = strcspn(p, " ");
        const char *sep = i == 0 ? "" : i + 1 == words ? last_sep : ", ";
        int w = snprintf(out + o, cap - o, "%s%.*s", sep, (int)k, p);
        o += w > 0 ? (size_t)w : 0;
        p += k;
        p += *p == ' ';
    }
}

static int bad_word(emu_response *resp, const char *name, const char *intro, const char *list, const char *last)
{
    char words[512];
    join_words(list, last, words, sizeof words);
    return emu_error(resp, 400, "InvalidParameter", "%s must be %s%s", name, intro, words), -1;
}

int emu_list_query_parse(const emu_request *req, const char *filters, const char *states, const char *sort_keys,
                         emu_list_query *q, emu_response *resp)
{
    memset(q, 0, sizeof *q);
    bool bad = false;
    size_t k = 0;
    for (const char *p = filters; *p && k < EMU_LIST_MAX_FILTERS; k++) {
        size_t len = strcspn(p, " ");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        q->filter[k] = emu_query_get(req->query, name, &bad);
        p += len;
        p += *p == ' ';
    }
    if (states)
        q->state = emu_query_get(req->query, "lifecycleState", &bad);
    q->sort_by = emu_query_get(req->query, "sortBy", &bad);
    char *order = emu_query_get(req->query, "sortOrder", &bad);
    int rc = 0;
    if (bad)
        rc = (emu_error(resp, 400, "InvalidParameter", "malformed percent-encoding in the query"), -1);
    else if (q->sort_by && !one_of(sort_keys, q->sort_by))
        rc = bad_word(resp, "sortBy", "", sort_keys, " or ");
    else if (q->state && !one_of(states, q->state))
        rc = bad_word(resp, "lifecycleState", "one of ", states, ", ");
    else if (order && strcmp(order, "ASC") && strcmp(order, "DESC"))
        rc = (emu_error(resp, 400, "InvalidParameter", "sortOrder must be ASC or DESC"), -1);
    q->sort_given = order != NULL;
    q->desc = order && !strcmp(order, "DESC");
    free(order);
    if (!rc && emu_page_params(req, resp, &q->offset, &q->limit))
        rc = -1;
    if (rc)
        emu_list_query_clear(q);
    return rc;
}

void emu_list_query_clear(emu_list_query *q)
{
    for (size_t i = 0; i < EMU_LIST_MAX_FILTERS; i++)
        free(q->filter[i]);
    free(q->state);
    free(q->sort_by);
    memset(q, 0, sizeof *q);
}

/* A stable merge sort (qsort has no context and is not stable). */
static void merge_sort(void **a, void **tmp, size_t n, const emu_list_ops *ops, const emu_list_query *q)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    merge_sort(a, tmp, h, ops, q);
    merge_sort(a + h, tmp, n - h, ops, q);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n)
        tmp[o++] = ops->cmp(a[j], a[i], q) < 0 ? a[j++] : a[i++];
    while (i < h)
        tmp[o++] = a[i++];
    while (j < n)
        tmp[o++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

void emu_list_answer(void *const *items, size_t n, const emu_list_ops *ops, const emu_list_query *q, bool desc,
                     emu_response *resp)
{
    void **sel = calloc(n + 1, sizeof *sel), **tmp = calloc(n + 1, sizeof *tmp);
    if (!sel || !tmp) {
        free(sel);
        free(tmp);
        emu_error(resp, 500, "InternalServerError", "out of memory");
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ops->keep(items[i], q))
            sel[k++] = items[i];
    merge_sort(sel, tmp, k, ops, q);
    for (size_t i = 0; desc && i < k / 2; i++) {
        void *t = sel[i];
        sel[i] = sel[k - 1 - i];
        sel[k - 1 - i] = t;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(o, "items");
    for (size_t i = q->offset; i < k && i - q->offset < q->limit; i++)
        cJSON_AddItemToArray(arr, ops->json(sel[i]));
    emu_page_next(resp, q->offset, q->limit, k);
    emu_json(resp, 200, o);
    free(sel);
    free(tmp);
}
