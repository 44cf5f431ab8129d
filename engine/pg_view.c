/*
 * pg_view.c: a read-only look at what the engine is waiting for
 * (pg_engine_view): the fences in progress with the members that have not
 * joined, and the held gets, node-attribute gets and lookups.  It exists
 * for `pmigate status`, which answers "which rank is the job waiting for?"
 * while the job runs; nothing here changes the engine's state.
 */
#include "engine/pg_engine_int.h"

#include <stdlib.h>
#include <utlist.h>

/* The ranks entry i of a fence covers: its whole job for a wildcard. */
static void entry_range(const pg_fence_t *f, size_t i, uint32_t *first, uint32_t *end)
{
    *first = f->prank[i] == PMIX_RANK_WILDCARD ? 0 : f->prank[i];
    *end = f->prank[i] == PMIX_RANK_WILDCARD ? f->pjob[i]->size : f->prank[i] + 1;
}

static pmix_status_t view_fence(const pg_fence_t *f, pg_fence_view_t *v, pg_proc_t **parts,
                                pg_proc_t **missing)
{
    size_t nmissing = 0;

    *parts = calloc(f->nparts, sizeof(**parts));
    *missing = calloc(f->nlocal > f->njoined ? f->nlocal - f->njoined : 1, sizeof(**missing));
    if (*parts == NULL || *missing == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < f->nparts; i++) {
        const pg_ns_t *job = f->pjob[i];
        uint32_t first, end;

        (*parts)[i] = (pg_proc_t){ job->nspace, f->prank[i] };
        entry_range(f, i, &first, &end);
        for (uint32_t r = first; r < end; r++)
            if (job->node_served[job->rank_node[r]] && !f->joined[f->offset[i] + r - first] &&
                nmissing < f->nlocal - f->njoined)
                (*missing)[nmissing++] = (pg_proc_t){ job->nspace, r };
    }
    *v = (pg_fence_view_t){
        .seq = f->seq,
        .participants = *parts,
        .nparticipants = f->nparts,
        .whole_job = f->whole_job,
        .group = f->tagged,
        .collect = f->collect,
        .nmembers = f->nmembers,
        .nlocal = f->nlocal,
        .njoined = f->njoined,
        .host_pending = f->host_pending,
        .started = f->started,
        .missing = *missing,
        .nmissing = nmissing,
    };
    return PMIX_SUCCESS;
}

static void view_wait(const pg_req_t *r, pg_wait_view_t *v)
{
    *v = (pg_wait_view_t){
        .requester = { r->job != NULL ? r->job->nspace : "", r->rank },
        .target = { "", PMIX_RANK_UNDEF },
        .key = "",
        .since = r->since,
    };
    switch (r->kind) {
    case PG_REQ_GET:
        v->kind = PG_WAIT_GET;
        v->target = (pg_proc_t){ r->tjob != NULL ? r->tjob->nspace : "", r->target };
        v->key = r->slot != NULL ? r->slot->key : "";
        break;
    case PG_REQ_NODE_GET:
        v->kind = PG_WAIT_NODE_ATTR;
        v->key = r->nattr != NULL ? r->nattr->key : "";
        break;
    default:
        v->kind = PG_WAIT_LOOKUP;
        v->key = r->key != NULL ? r->key : "";
        break;
    }
}

pmix_status_t pg_engine_view(pg_engine_t *e, void (*fence_fn)(void *arg, const pg_fence_view_t *f),
                             void (*wait_fn)(void *arg, const pg_wait_view_t *w), void *arg)
{
    pmix_status_t rc = PMIX_SUCCESS;

    if (e == NULL)
        return PMIX_ERR_BAD_PARAM;
    for (const pg_fence_t *f = e->fences; f != NULL && fence_fn != NULL; f = f->hh.next) {
        pg_proc_t *parts = NULL, *missing = NULL;
        pg_fence_view_t v;

        if (f->id == 0)
            continue; /* idle: the next fence of this set has not begun */
        if (view_fence(f, &v, &parts, &missing) == PMIX_SUCCESS)
            fence_fn(arg, &v);
        else
            rc = PMIX_ERR_NOMEM;
        free(parts);
        free(missing);
    }
    for (const pg_req_t *r = e->held; r != NULL && wait_fn != NULL; r = r->next) {
        pg_wait_view_t v;

        if (r->kind == PG_REQ_FENCE || r->kind == PG_REQ_NAME)
            continue;
        view_wait(r, &v);
        wait_fn(arg, &v);
    }
    return rc;
}
