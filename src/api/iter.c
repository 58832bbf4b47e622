/* Pagination: iterators that fetch page after page (opc-next-page). */
#include <stdlib.h>
#include <string.h>

#include "api/client_internal.h"

typedef struct pager {
    ocisbx_client *c;
    ocisbx_op op;
    char *sandbox_id; /* path parameter of list commands */
    ocisbx_list_options *opts;
    ocisbx_model *page;
    size_t next_item;
    bool started;
    bool done;
} pager;

static int pager_new(ocisbx_client *c, ocisbx_op op, const char *sandbox_id, const ocisbx_list_options *o,
                     pager **out)
{
    *out = NULL;
    if (!c)
        return ocisbx_fail(OCISBX_EINVAL, "iterator: client is NULL");
    pager *p = calloc(1, sizeof *p);
    if (!p)
        return ocisbx_fail_nomem();
    p->c = c;
    p->op = op;
    int rc = ocisbx_list_options_copy(o, &p->opts);
    if (!rc && sandbox_id && !(p->sandbox_id = ocisbx_strdup(sandbox_id)))
        rc = ocisbx_fail_nomem();
    if (rc) {
        ocisbx_list_options_free(p->opts);
        free(p);
        return rc;
    }
    *out = p;
    return 0;
}

static void pager_free(pager *p)
{
    if (!p)
        return;
    ocisbx_model_free(p->page);
    ocisbx_list_options_free(p->opts);
    free(p->sandbox_id);
    free(p);
}

static int pager_next(pager *p, const ocisbx_model **item)
{
    if (!p || !item)
        return ocisbx_fail(OCISBX_EINVAL, "iterator: NULL argument");
    *item = NULL;
    for (;;) {
        if (p->page && p->next_item < p->page->nitems) {
            *item = &p->page->items[p->next_item++];
            return 0;
        }
        if (p->done)
            return 0;
        const char *next = p->page ? p->page->next_page : NULL;
        if (p->started && (!next || !next[0])) {
            p->done = true;
            return 0;
        }
        char *page = next ? ocisbx_strdup(next) : NULL;
        if (next && !page)
            return ocisbx_fail_nomem();
        ocisbx_param params[OCISBX_MAX_PARAMS];
        size_t n = 0;
        if (p->sandbox_id)
            params[n++] = (ocisbx_param){"sandboxId", p->sandbox_id};
        n += ocisbx_list_options_params(p->opts, page, params + n, OCISBX_MAX_PARAMS - n);
        ocisbx_model *m = NULL;
        int rc = ocisbx_client_exec(p->c, p->op, params, n, NULL, &m);
        /* a service that hands back the page it was asked for would loop forever */
        if (!rc && page && m->next_page && strcmp(m->next_page, page) == 0) {
            rc = ocisbx_fail(OCISBX_EPARSE, "%s: page '%.100s' names itself as the next page (opc-request-id: %s)",
                             ocisbx_route_get(p->op)->name, page, m->request_id ? m->request_id : "none");
            ocisbx_model_free(m);
        }
        free(page);
        if (rc)
            return rc;
        ocisbx_model_free(p->page);
        p->page = m;
        p->next_item = 0;
        p->started = true;
    }
}

#define ITER(type, item_type, next_fn, free_fn)                                      \
    int next_fn(type *it, const item_type **item)                                    \
    {                                                                                \
        return pager_next((pager *)(void *)it, (const ocisbx_model **)(void *)item); \
    }                                                                                \
    void free_fn(type *it)                                                           \
    {                                                                                \
        pager_free((pager *)(void *)it);                                             \
    }

ITER(ocisbx_sandbox_iter, ocisbx_sandbox, ocisbx_sandbox_iter_next, ocisbx_sandbox_iter_free)
ITER(ocisbx_command_iter, ocisbx_command, ocisbx_command_iter_next, ocisbx_command_iter_free)
ITER(ocisbx_snapshot_iter, ocisbx_snapshot, ocisbx_snapshot_iter_next, ocisbx_snapshot_iter_free)

int ocisbx_client_iter_sandboxes(ocisbx_client *c, const ocisbx_list_options *o, ocisbx_sandbox_iter **out)
{
    return pager_new(c, OCISBX_OP_LIST_SANDBOXES, NULL, o, (pager **)(void *)out);
}

int ocisbx_client_iter_commands(ocisbx_client *c, const char *sandbox_id, const ocisbx_list_options *o,
                                ocisbx_command_iter **out)
{
    if (!sandbox_id || !sandbox_id[0])
        return ocisbx_fail(OCISBX_EINVAL, "iterate commands: sandbox id is required");
    return pager_new(c, OCISBX_OP_LIST_COMMANDS, sandbox_id, o, (pager **)(void *)out);
}

int ocisbx_client_iter_snapshots(ocisbx_client *c, const ocisbx_list_options *o, ocisbx_snapshot_iter **out)
{
    return pager_new(c, OCISBX_OP_LIST_SNAPSHOTS, NULL, o, (pager **)(void *)out);
}
