/*
 * pg_hang.c: hang detection -- held requests that can no longer be
 * satisfied end with PMIX_ERR_NOT_FOUND instead of waiting for ever.
 *
 * The rule.  A held get or node-attribute wait can only be satisfied by a
 * future post of one of its potential posters: the target rank for a
 * rank-specific get; every rank of the target job for a RANK_UNDEF get; every
 * rank of the job on that node for a node attribute.  A process is *able* to
 * post if it is served here and running (connected or still starting) and
 * not blocked, or if it is not served by this engine (we cannot know), or if
 * it is blocked on something that can still be released: a held request
 * with an able potential poster, or a fence whose missing local members are
 * all able (a fence already handed to the host counts as releasable).
 * Finalized and lost processes are never able.  The able set is computed as
 * a least fixed point; every held request with no able potential poster is
 * then completed -- all at once, so in a deadlock (two ranks each waiting
 * for the other's key) every waiter is released, not an arbitrary one.
 *
 * A process served elsewhere is able, unless it waits in a blocking get
 * made for it here (another server's direct modex): then it is blocked
 * like a local one, and a fence it is a member of (even one handed to the
 * host) cannot complete before that get is released.  This server's own
 * direct-modex requests are the host's business and are never judged
 * here.  Name-service lookups do not block their requester (anyone
 * may publish).
 */
#include "engine/pg_engine_int.h"

#include <utlist.h>

static bool judged(const pg_req_t *r)
{
    return (r->kind == PG_REQ_GET || r->kind == PG_REQ_NODE_GET) && r->dmodex_id == 0;
}

static void able_init(pg_engine_t *e)
{
    for (pg_ns_t *job = e->jobs; job != NULL; job = job->hh.next) {
        for (uint32_t r = 0; r < job->size; r++) {
            pg_procst_t *p = &job->procs[r];
            bool running = p->state == PG_PROC_NEW || p->state == PG_PROC_CONNECTED;
            /* a process served elsewhere is blocked here only by a get
             * made for it (another server's direct modex) */
            p->able = job->node_served[job->rank_node[r]]
                          ? running && p->nheld == 0 && p->nfences == 0
                          : p->nheld == 0;
        }
    }
}

static void able_count(pg_engine_t *e)
{
    for (pg_ns_t *job = e->jobs; job != NULL; job = job->hh.next) {
        job->nable = 0;
        memset(job->node_able, 0, job->nnodes * sizeof(uint32_t));
        for (uint32_t r = 0; r < job->size; r++)
            if (job->procs[r].able) {
                job->nable++;
                job->node_able[job->rank_node[r]]++;
            }
    }
}

/* Does r still have a potential poster that is able? */
static bool satisfiable(const pg_req_t *r)
{
    const pg_ns_t *t = r->tjob;
    if (t == NULL || t->dead)
        return false;
    if (r->kind == PG_REQ_NODE_GET)
        return t->node_able[r->node] > 0;
    if (r->target < t->size && !(r->flags & PG_GET_RANK_HINT))
        return t->procs[r->target].able;
    return t->nable > 0;
}

static bool mark_able(pg_ns_t *job, pmix_rank_t rank)
{
    pg_procst_t *p = &job->procs[rank];
    if (p->able || p->state == PG_PROC_FINALIZED || p->state == PG_PROC_LOST)
        return false;
    p->able = true;
    return true;
}

/* One round of the fixed point; true when some process became able. */
static bool able_round(pg_engine_t *e)
{
    bool changed = false;
    pg_req_t *r;
    able_count(e);
    DL_FOREACH(e->held, r)
        if (r->blocks && r->job != NULL && !r->job->dead && (!judged(r) || satisfiable(r)))
            changed |= mark_able(r->job, r->rank);
    for (pg_fence_t *f = e->fences; f != NULL; f = f->hh.next) {
        if (f->id == 0 || !pg_fence_can_complete(f))
            continue;
        pg_req_t *j;
        for (j = f->joiners; j != NULL; j = j->wnext)
            changed |= mark_able(j->job, j->rank);
    }
    return changed;
}

void pg_hang_check(pg_engine_t *e)
{
    pg_req_t *r, *tmp;
    bool any = false;
    DL_FOREACH(e->held, r)
        any |= judged(r);
    if (!any)
        return;
    able_init(e);
    while (able_round(e))
        ;
    able_count(e);
    DL_FOREACH_SAFE(e->held, r, tmp)
        if (judged(r) && !satisfiable(r))
            pg_req_complete(e, r, PMIX_ERR_NOT_FOUND, NULL);
}
