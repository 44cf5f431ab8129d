/*
 * pg_event.c: event subscriptions and their delivery by range, the events
 * the engine raises itself, and the process table PMIx_Query_info reads.
 *
 * Why it lives in the engine: whether a process is in an event's range
 * (same job, same node, listed in a custom range) is a question about the
 * job layout, which only the engine keeps; and the engine is where a
 * process is declared lost, so it is where the "terminated without
 * finalize" event starts.  Like everything here it does no I/O: a
 * subscriber (the gateway's PMIx handler, one per connection) gets a
 * callback and writes the frame itself.
 *
 * Callbacks run inline.  A callback may end subscriptions (the handler's
 * write can fail and close a connection); while a notification walks the
 * list, an ended subscription only loses its callback and is freed when
 * the outermost walk ends.
 */
#include "engine/pg_engine_int.h"

#include <utlist.h>

/* ---- subscriptions ---------------------------------------------------- */

static void sub_free(pg_engine_t *e, pg_sub_t *s)
{
    DL_DELETE(e->subs, s);
    pg_ns_unref(s->job);
    pg_mem_free(e, s, sizeof(*s));
}

/* Ends a subscription: freed now, or by the sweep after the walk that
 * runs (a walk holds pointers into the list). */
static void sub_end(pg_engine_t *e, pg_sub_t *s)
{
    s->cb = NULL;
    if (e->notifying == 0)
        sub_free(e, s);
    else
        e->subs_ended++;
}

/* Frees the subscriptions ended during a walk (only when no walk runs,
 * and only when there are some: every rank's finalize unsubscribes, and
 * a pass over all N subscriptions each time was N^2 at the job's end). */
static void subs_sweep(pg_engine_t *e)
{
    pg_sub_t *s, *tmp;

    if (e->notifying > 0 || e->subs_ended == 0)
        return;
    DL_FOREACH_SAFE(e->subs, s, tmp)
        if (s->cb == NULL)
            sub_free(e, s);
    e->subs_ended = 0;
}

pmix_status_t pg_event_subscribe(pg_engine_t *e, const pg_proc_t *proc, pg_event_cb_t cb,
                                 void *cbdata, uint64_t *id)
{
    pmix_status_t rc;
    pg_ns_t *job;
    pg_sub_t *s;

    if (e == NULL || proc == NULL || cb == NULL || id == NULL)
        return PMIX_ERR_BAD_PARAM;
    job = pg_ns_of(e, proc, &rc); /* WILDCARD is out of range: a subscriber is one process */
    if (job == NULL)
        return rc;
    s = pg_mem_alloc(e, sizeof(*s));
    if (s == NULL)
        return PMIX_ERR_NOMEM;
    s->id = e->next_id++;
    s->job = job;
    pg_ns_ref(job);
    s->rank = proc->rank;
    s->cb = cb;
    s->cbdata = cbdata;
    DL_APPEND(e->subs, s);
    *id = s->id;
    return PMIX_SUCCESS;
}

pmix_status_t pg_event_unsubscribe(pg_engine_t *e, uint64_t id)
{
    pg_sub_t *s;

    if (e == NULL)
        return PMIX_ERR_BAD_PARAM;
    DL_FOREACH(e->subs, s)
        if (s->id == id && s->cb != NULL) {
            sub_end(e, s);
            return PMIX_SUCCESS;
        }
    return PMIX_ERR_NOT_FOUND;
}

/* A job that ends takes its subscriptions along (no callback). */
void pg_event_drop_job(pg_engine_t *e, pg_ns_t *job)
{
    pg_sub_t *s, *tmp;

    DL_FOREACH_SAFE(e->subs, s, tmp)
        if (s->job == job && s->cb != NULL)
            sub_end(e, s);
}

/* ---- ranges ------------------------------------------------------------- */

static const pg_host_t *host_of(const pg_ns_t *job, pmix_rank_t rank)
{
    if (rank >= job->size || job->nodes == NULL)
        return NULL;
    return job->nodes[job->rank_node[rank]];
}

/* A custom target's job: its own, or (none given) the origin's. */
static const char *target_nspace(const pg_event_t *ev, const pg_proc_t *t)
{
    return t->nspace != NULL && t->nspace[0] != '\0' ? t->nspace : ev->origin.nspace;
}

static bool in_custom_range(const pg_event_t *ev, const pg_sub_t *s)
{
    for (size_t i = 0; i < ev->ntargets; i++) {
        const pg_proc_t *t = &ev->targets[i];
        const char *ns = target_nspace(ev, t);

        if (ns != NULL && strcmp(ns, s->job->nspace) == 0 &&
            (t->rank == PMIX_RANK_WILDCARD || t->rank == s->rank))
            return true;
    }
    return false;
}

/* Does subscriber `s` lie in the range of `ev` (whose origin's job is
 * `sjob`, NULL when it is not one of this engine's)? */
static bool in_range(const pg_event_t *ev, const pg_ns_t *sjob, const pg_sub_t *s)
{
    switch (ev->range) {
    case PMIX_RANGE_UNDEF:
    case PMIX_RANGE_NAMESPACE:
        return s->job == sjob;
    case PMIX_RANGE_LOCAL: {
        if (sjob != NULL && ev->origin.rank >= sjob->size)
            return true; /* the host's own event: its node is this engine's */
        const pg_host_t *h = sjob != NULL ? host_of(sjob, ev->origin.rank) : NULL;
        return h != NULL && h == host_of(s->job, s->rank);
    }
    case PMIX_RANGE_SESSION:
    case PMIX_RANGE_GLOBAL:
        return true;
    case PMIX_RANGE_CUSTOM:
        return in_custom_range(ev, s);
    default: /* PROC_LOCAL: the source's own handlers; RM: the host, no process */
        return false;
    }
}

static bool is_origin(const pg_event_t *ev, const pg_ns_t *sjob, const pg_sub_t *s)
{
    return s->job == sjob && s->rank == ev->origin.rank;
}

/* Does job `job` have processes on a node this engine does not serve? */
static bool job_beyond(const pg_ns_t *job)
{
    for (uint32_t n = 0; n < job->nnodes; n++)
        if (job->node_nlocal[n] > 0 && !job->node_served[n])
            return true;
    return false;
}

/* Does a custom range name a process not served here (or a whole job)? */
static bool targets_beyond(pg_engine_t *e, const pg_event_t *ev)
{
    for (size_t i = 0; i < ev->ntargets; i++) {
        const pg_proc_t *t = &ev->targets[i];
        const char *ns = target_nspace(ev, t);
        const pg_ns_t *job = ns != NULL ? pg_ns_find(e, ns) : NULL;

        if (job == NULL || (t->rank == PMIX_RANK_WILDCARD && job_beyond(job)) ||
            (t->rank < job->size && !job->node_served[job->rank_node[t->rank]]))
            return true;
    }
    return false;
}

/* Does the event reach past this server, and is this server the one to
 * carry it there: raised by one of its processes, or by the host (no
 * process)?  An event a server delivers on another's behalf (a rank
 * served elsewhere as origin) is that server's to carry. */
static bool goes_beyond(pg_engine_t *e, const pg_event_t *ev, const pg_ns_t *sjob)
{
    switch (ev->range) {
    case PMIX_RANGE_UNDEF:
    case PMIX_RANGE_NAMESPACE:
        if (sjob != NULL && !job_beyond(sjob))
            return false;
        break;
    case PMIX_RANGE_SESSION:
    case PMIX_RANGE_GLOBAL:
        break;
    case PMIX_RANGE_CUSTOM:
        if (!targets_beyond(e, ev))
            return false;
        break;
    default: /* PROC_LOCAL, LOCAL: this node; RM: no process */
        return false;
    }
    if (sjob == NULL || ev->origin.rank >= sjob->size)
        return true;
    return sjob->node_served[sjob->rank_node[ev->origin.rank]];
}

static pmix_status_t notify(pg_engine_t *e, const pg_event_t *ev, size_t *delivered, bool raised)
{
    const pg_ns_t *sjob;
    size_t n = 0;
    pg_sub_t *s;

    if (delivered != NULL)
        *delivered = 0;
    if (e == NULL || ev == NULL || ev->range > PMIX_RANGE_PROC_LOCAL)
        return PMIX_ERR_BAD_PARAM;
    if (ev->range == PMIX_RANGE_CUSTOM && (ev->targets == NULL || ev->ntargets == 0))
        return PMIX_ERR_BAD_PARAM;
    sjob = ev->origin.nspace != NULL ? pg_ns_find(e, ev->origin.nspace) : NULL;
    e->notifying++;
    /* subscriptions added by a callback are appended and may see the event:
     * harmless, they are in range too */
    DL_FOREACH(e->subs, s)
        if (s->cb != NULL && !is_origin(ev, sjob, s) && in_range(ev, sjob, s)) {
            s->cb(ev, s->cbdata);
            n++;
        }
    e->notifying--;
    subs_sweep(e);
    if (delivered != NULL)
        *delivered = n;
    if (raised && e->ops.event != NULL && goes_beyond(e, ev, sjob))
        e->ops.event(e->host_ctx, ev);
    return PMIX_SUCCESS;
}

pmix_status_t pg_event_notify(pg_engine_t *e, const pg_event_t *ev, size_t *delivered)
{
    return notify(e, ev, delivered, true);
}

pmix_status_t pg_event_deliver(pg_engine_t *e, const pg_event_t *ev, size_t *delivered)
{
    return notify(e, ev, delivered, false);
}

void pg_event_raise_lost(pg_engine_t *e, pg_ns_t *job, pmix_rank_t rank)
{
    pg_event_t ev = { PMIX_ERR_PROC_TERM_WO_SYNC, { job->nspace, rank }, { job->nspace, rank },
                      PMIX_RANGE_NAMESPACE, NULL, 0, NULL, 0, NULL, 0 };

    (void)pg_event_notify(e, &ev, NULL);
}

/* ---- process table ----------------------------------------------------- */

pmix_status_t pg_proc_set_exec(pg_engine_t *e, const pg_proc_t *proc, int32_t pid,
                               const char *executable)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);
    char *copy = NULL;

    if (job == NULL)
        return rc;
    if (job->pids == NULL) {
        job->pids = pg_mem_alloc(e, job->size * sizeof(*job->pids));
        job->exes = pg_mem_alloc(e, job->size * sizeof(*job->exes));
        if (job->pids == NULL || job->exes == NULL) {
            pg_event_free_exec(e, job);
            return PMIX_ERR_NOMEM;
        }
    }
    if (executable != NULL && (copy = pg_mem_strdup(e, executable)) == NULL)
        return PMIX_ERR_NOMEM;
    pg_mem_strfree(e, job->exes[proc->rank]);
    job->exes[proc->rank] = copy;
    job->pids[proc->rank] = pid;
    return PMIX_SUCCESS;
}

pmix_status_t pg_proc_set_exit(pg_engine_t *e, const pg_proc_t *proc, int32_t exit_code)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);

    if (job == NULL)
        return rc;
    if (job->exits == NULL) {
        job->exits = pg_mem_alloc(e, job->size * sizeof(*job->exits));
        if (job->exits == NULL)
            return PMIX_ERR_NOMEM;
        for (uint32_t r = 0; r < job->size; r++)
            job->exits[r] = PG_NOT_EXITED;
    }
    job->exits[proc->rank] = exit_code == PG_NOT_EXITED ? INT32_MIN + 1 : exit_code;
    return PMIX_SUCCESS;
}

void pg_event_free_exec(pg_engine_t *e, pg_ns_t *job)
{
    pg_mem_free(e, job->exits, job->exits != NULL ? job->size * sizeof(*job->exits) : 0);
    job->exits = NULL;
    if (job->exes != NULL)
        for (uint32_t r = 0; r < job->size; r++)
            pg_mem_strfree(e, job->exes[r]);
    pg_mem_free(e, job->exes, job->size * sizeof(*job->exes));
    pg_mem_free(e, job->pids, job->size * sizeof(*job->pids));
    job->exes = NULL;
    job->pids = NULL;
}

/* The engine's life-cycle states in the Standard's terms.  A process
 * another server serves (`pmigate proxy`: another node's rank) is
 * unknown here, not being launched: UNDEF. */
static pmix_proc_state_t state_of(const pg_ns_t *job, pmix_rank_t rank)
{
    if (!job->node_served[job->rank_node[rank]])
        return PMIX_PROC_STATE_UNDEF;
    if (job->exits != NULL && job->exits[rank] != PG_NOT_EXITED)
        return job->exits[rank] == 0 ? PMIX_PROC_STATE_TERMINATED : PMIX_PROC_STATE_TERM_NON_ZERO;
    switch (job->procs[rank].state) {
    case PG_PROC_CONNECTED:
        return PMIX_PROC_STATE_CONNECTED;
    case PG_PROC_FINALIZED:
        return PMIX_PROC_STATE_RUNNING; /* finalized, not yet known to have exited */
    case PG_PROC_LOST:
        return PMIX_PROC_STATE_TERM_WO_SYNC;
    default:
        return job->pids != NULL && job->pids[rank] > 0 ? PMIX_PROC_STATE_RUNNING
                                                         : PMIX_PROC_STATE_LAUNCH_UNDERWAY;
    }
}

pmix_status_t pg_proc_describe(pg_engine_t *e, const pg_proc_t *proc, pg_proc_desc_t *out)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);
    const pg_host_t *h;

    if (job == NULL || out == NULL)
        return job == NULL ? rc : PMIX_ERR_BAD_PARAM;
    h = host_of(job, proc->rank);
    out->hostname = h != NULL ? h->name : NULL;
    out->nodeid = job->rank_node[proc->rank];
    out->executable = job->exes != NULL ? job->exes[proc->rank] : NULL;
    out->pid = job->pids != NULL ? job->pids[proc->rank] : 0;
    out->state = state_of(job, proc->rank);
    out->exit_code = job->exits != NULL && job->exits[proc->rank] != PG_NOT_EXITED
                         ? job->exits[proc->rank]
                         : 0;
    return PMIX_SUCCESS;
}

void pg_ns_foreach(pg_engine_t *e, void (*fn)(void *arg, const char *nspace), void *arg)
{
    pg_ns_t *job, *tmp;

    if (e == NULL || fn == NULL)
        return;
    HASH_ITER(hh, e->jobs, job, tmp)
        if (!job->tool) /* a tool runs no job */
            fn(arg, job->nspace);
}
