/*
 * pg_snapshot.c: the walk over a job's committed data as one node sees it
 * (pg_ns_foreach_visible).  It exists so the host can publish a read-only
 * copy of that data per node after a fence (the gateway's shared segment,
 * docs/shm-segment.md) without knowing how the store is laid out.
 *
 * "What a node sees" is the per-node part of the visibility table in
 * pg_store.c: committed values only, GLOBAL always, LOCAL when posted on the
 * node, REMOTE when posted elsewhere, INTERNAL never.
 */
#include "engine/pg_engine_int.h"

/* Visits the published value of every cell of one slot. */
static pmix_status_t slot_walk(const pg_ns_t *job, const pg_slot_t *s, const pg_host_t *host,
                               pg_visible_fn visitor, void *arg)
{
    uint32_t n = pg_slot_ncells(job, s);

    for (uint32_t i = 0; i < n; i++) {
        pg_kv_t *kv = s->cells[i] != NULL ? pg_kv_published(s->cells[i]) : NULL;
        pmix_status_t rc;
        pg_value_t v;

        if (kv == NULL || !pg_scope_reaches(job, kv->rank, kv->scope, host))
            continue;
        v = pg_kv_value(kv);
        rc = visitor(arg, s->key, kv->rank, &v);
        if (rc != PMIX_SUCCESS)
            return rc;
    }
    return PMIX_SUCCESS;
}

pmix_status_t pg_ns_foreach_visible(pg_engine_t *e, const char *nspace, uint32_t nodeid,
                                     pg_visible_fn visitor, void *arg)
{
    pg_ns_t *job = e != NULL && nspace != NULL ? pg_ns_find(e, nspace) : NULL;
    const pg_slot_t *s;

    if (e == NULL || visitor == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (job == NULL || job->dead)
        return PMIX_ERR_NOT_FOUND;
    if (nodeid >= job->nnodes)
        return PMIX_ERR_BAD_PARAM;
    for (s = job->slots; s != NULL; s = s->hh.next) {
        pmix_status_t rc = slot_walk(job, s, job->nodes[nodeid], visitor, arg);

        if (rc != PMIX_SUCCESS)
            return rc;
    }
    return PMIX_SUCCESS;
}
