/*
 * pg_job_engine: job <-> engine glue.  See pg_job_engine.h.
 *
 * After every whole-job fence, and before any rank sees its fence reply,
 * the glue publishes the node's shared key segment (pg_shm.h) from the
 * engine's committed data, so pmigate's client libraries answer the gets
 * that follow without a round trip (docs/shm-segment.md) -- once one of
 * them said it reads it: for other libraries it would only delay the fence.
 */
#include "gateway/job/pg_job_engine.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/job/pg_job.h"
#include "gateway/io/pg_shm.h"
#include "engine/pg_engine.h"
#include "wire/pg_enc.h"
#include "wire/pg_clock.h"

struct pg_job_engine {
    pg_engine_t *engine; /* owned */
    struct event *timer; /* armed at the engine's next deadline */
    /* the deadline the timer is armed for; PG_TIME_NEVER: not armed;
     * 0: unknown (re-arm at the next touch) */
    uint64_t armed_at;
    char *nspace;        /* owned copy */
    pg_shm_t *shm;       /* owned; NULL: no segment (gets use the socket) */
    bool shm_read;       /* some process of the job reads it: write it */
    uint64_t fences;     /* whole-job fences completed = segment generation */
    /* several nodes (`pmigate proxy`): nnodes 0 or 1 means one node */
    int nnodes;
    int nodeid;
    uint32_t *rank_node; /* [size] owned, NULL with one node */
    uint32_t size;
    pg_job_engine_xfence_fn xfence;
    void *xfence_ctx;
    const pg_host_ops_t *name_ops; /* borrowed; NULL: node-local names and events */
    void *name_ctx;
    const pg_host_ops_t *data_ops; /* borrowed; NULL: no direct modex */
    void *data_ctx;
    pg_job_engine_doomed_fn doomed;
    void *doomed_ctx;
    /* the last cross-node fence's merge of the peers' keys and segment write */
    uint64_t xfence_ingest_ns, xfence_segment_ns;
    uint64_t whole_xfence;   /* the id of the running cross-node whole-job fence */
    bool borrowed;       /* a spawned job's: the engine is another job's */
    /* the root's list of the spawned jobs attached to its engine (a
     * spawned job over several nodes has its own cross-node fence) */
    struct pg_job_engine *host, *next_sub;
    struct pg_job_engine *subs;
};

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    pg_job_engine_t *je = arg;

    (void)fd;
    (void)what;
    je->armed_at = 0; /* the timer has fired: whatever comes next is new */
    pg_engine_expire(je->engine, pg_clock_now());
    pg_job_engine_touch(je);
}

/* One committed value the node may read, into the next generation. */
static pmix_status_t shm_visit(void *arg, const char *key, pmix_rank_t rank, const pg_value_t *v)
{
    return pg_shm_add(arg, key, rank, v) == 0 ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

/* The engine's commit hook: the segment of the last fence is now behind
 * for this rank; libpmix readers ask the server for its values until the
 * next fence (docs/shm-segment.md). */
static void on_commit(void *ctx, const pg_proc_t *proc)
{
    pg_job_engine_t *je = ctx;

    if (je->shm != NULL && strcmp(proc->nspace, je->nspace) == 0)
        pg_shm_committed(je->shm, proc->rank, je->fences);
}

/* The engine's word that a fence cannot complete, as this job's ranks. */
static void on_fence_doomed(void *ctx, const pg_proc_t *gone, size_t ngone)
{
    pg_job_engine_t *je = ctx;
    int *ranks = malloc((ngone ? ngone : 1) * sizeof(*ranks));
    size_t n = 0;

    for (size_t i = 0; ranks != NULL && i < ngone; i++)
        if (strcmp(gone[i].nspace, je->nspace) == 0)
            ranks[n++] = (int)gone[i].rank;
    if (n > 0 && je->doomed != NULL)
        je->doomed(je->doomed_ctx, ranks, n);
    free(ranks);
}

/* Writes generation je->fences, when some process reads it.  A failure
 * leaves the previous generation, which readers then find stale: they use
 * the socket, so it is only slower. */
static void shm_publish(pg_job_engine_t *je)
{
    uint32_t node = (uint32_t)(je->nnodes > 1 ? je->nodeid : 0);
    pmix_status_t st;
    int rc;

    if (je->shm == NULL || !je->shm_read)
        return;
    st = pg_ns_foreach_visible(je->engine, je->nspace, node, shm_visit, je->shm);
    rc = st == PMIX_SUCCESS ? pg_shm_publish(je->shm, je->fences) : -ENOMEM;
    if (st != PMIX_SUCCESS)
        pg_shm_abort(je->shm);
    if (rc != 0)
        fprintf(stderr, "pmigate: cannot publish the key segment of fence %llu: %s\n",
                (unsigned long long)je->fences, strerror(-rc));
}

/* Is fence `f` the whole job's -- every rank of je's job?  The one place
 * this is decided: the segment's generation counts these fences, and the
 * cross-node hook is told (pg_job_engine_xfence_t.whole_job). */
static bool fence_is_whole_job(const pg_job_engine_t *je, const pg_host_fence_t *f)
{
    return f->nparticipants == 1 && f->participants[0].rank == PMIX_RANK_WILDCARD &&
           strcmp(f->participants[0].nspace, je->nspace) == 0;
}

/* Are all of a fence's participants ranks of this node? */
static bool fence_is_node_local(const pg_job_engine_t *je, const pg_host_fence_t *f)
{
    for (size_t i = 0; i < f->nparticipants; i++) {
        pmix_rank_t r = f->participants[i].rank;

        if (strcmp(f->participants[i].nspace, je->nspace) != 0 || r >= je->size ||
            je->rank_node[r] != (uint32_t)je->nodeid)
            return false;
    }
    return true;
}

/* The attached spawned job whose whole-job fence `f` is, when that job
 * spans several nodes (its fence crosses them its own way), else NULL. */
static pg_job_engine_t *spawned_whole_job(const pg_job_engine_t *je, const pg_host_fence_t *f)
{
    for (pg_job_engine_t *sub = je->subs; sub != NULL; sub = sub->next_sub)
        if (sub->xfence != NULL && fence_is_whole_job(sub, f))
            return sub;
    return NULL;
}

/* Fence `f` of job `owner` to owner's cross-node hook, decided: a
 * whole-job fence's completion writes the segment (owner->whole_xfence). */
static void xfence_hand_over(pg_job_engine_t *owner, const pg_host_fence_t *f)
{
    pg_job_engine_xfence_t x = {
        .je = owner,
        .id = f->id,
        .seq = f->seq,
        .participants = f->participants,
        .nparticipants = f->nparticipants,
        .whole_job = fence_is_whole_job(owner, f),
        .collect = f->collect,
        .part = f->collect ? f->data : NULL,
        .part_size = f->collect ? f->size : 0,
    };

    if (x.whole_job)
        owner->whole_xfence = f->id;
    owner->xfence(owner->xfence_ctx, &x);
}

/* Several nodes: a fence among this node's ranks only completes here; a
 * spawned job's whole-job fence goes to that job's hook; any other (the
 * whole job, or a subset with ranks on other nodes) to this job's. */
static void on_fence_nodes(pg_job_engine_t *je, const pg_host_fence_t *f)
{
    pg_job_engine_t *sub = spawned_whole_job(je, f);

    if (fence_is_node_local(je, f)) {
        pg_fence_host_done(je->engine, f->id, PMIX_SUCCESS, NULL, 0);
        return;
    }
    xfence_hand_over(sub != NULL ? sub : je, f);
}

/* The other nodes' blobs into the engine (this node's own is skipped). */
static pmix_status_t ingest_nodes(pg_job_engine_t *je, void *const *blobs, const size_t *lens)
{
    pmix_status_t st = PMIX_SUCCESS;

    for (int n = 0; st == PMIX_SUCCESS && blobs != NULL && n < je->nnodes; n++)
        if (n != je->nodeid && blobs[n] != NULL)
            st = pg_modex_host_ingest(je->engine, blobs[n], lens[n]);
    return st;
}

int pg_job_engine_ingest(pg_job_engine_t *je, void *const *blobs, const size_t *lens)
{
    int rc = ingest_nodes(je, blobs, lens) == PMIX_SUCCESS ? 0 : -1;

    pg_job_engine_touch(je);
    return rc;
}

void pg_job_engine_xfence_done(pg_job_engine_t *je, uint64_t id, int ok, void *const *blobs,
                               const size_t *lens)
{
    pmix_status_t st = ok == 0                         ? PMIX_SUCCESS
                       : ok == PG_JOB_XFENCE_TIMED_OUT ? PMIX_ERR_TIMEOUT
                                                       : PMIX_ERR_LOST_CONNECTION;
    uint64_t t0 = pg_clock_now(), t1;

    if (st == PMIX_SUCCESS)
        st = ingest_nodes(je, blobs, lens);
    t1 = pg_clock_now();
    if (st == PMIX_SUCCESS && id == je->whole_xfence) { /* the segment holds its keys */
        je->fences++;
        shm_publish(je);
    }
    je->xfence_ingest_ns = t1 - t0;
    je->xfence_segment_ns = pg_clock_now() - t1;
    pg_fence_host_done(je->engine, id, st, NULL, 0);
    pg_job_engine_touch(je);
}

/* The engine's fence hook: every local participant has joined (and so
 * committed).  One node: nothing to exchange, so the fence completes here,
 * after the segment of a whole-job fence is in place. */
static void on_fence(void *ctx, const pg_host_fence_t *f)
{
    pg_job_engine_t *je = ctx;

    if (je->nnodes > 1) {
        on_fence_nodes(je, f);
        return;
    }
    if (fence_is_whole_job(je, f)) {
        je->fences++;
        shm_publish(je);
    }
    pg_fence_host_done(je->engine, f->id, PMIX_SUCCESS, NULL, 0);
}

/* Direct modex: passed on to the multi-node host. */
static void on_dmodex(void *ctx, const pg_host_dmodex_t *d)
{
    pg_job_engine_t *je = ctx;

    je->data_ops->dmodex(je->data_ctx, d);
}

static void on_dmodex_cancel(void *ctx, uint64_t id)
{
    pg_job_engine_t *je = ctx;

    je->data_ops->dmodex_cancel(je->data_ctx, id);
}

/* The name service and event hooks: passed on to the multi-node host. */
static void on_publish(void *ctx, uint64_t id, const pg_proc_t *publisher, const char *key,
                       const pg_value_t *value)
{
    pg_job_engine_t *je = ctx;

    je->name_ops->publish(je->name_ctx, id, publisher, key, value);
}

static void on_unpublish(void *ctx, uint64_t id, const pg_proc_t *publisher, const char *key)
{
    pg_job_engine_t *je = ctx;

    je->name_ops->unpublish(je->name_ctx, id, publisher, key);
}

static void on_lookup(void *ctx, uint64_t id, const pg_proc_t *requester, const char *key,
                      bool wait)
{
    pg_job_engine_t *je = ctx;

    je->name_ops->lookup(je->name_ctx, id, requester, key, wait);
}

static void on_lookup_cancel(void *ctx, uint64_t id)
{
    pg_job_engine_t *je = ctx;

    je->name_ops->lookup_cancel(je->name_ctx, id);
}

static void on_names_drop(void *ctx, const char *nspace)
{
    pg_job_engine_t *je = ctx;

    je->name_ops->names_drop(je->name_ctx, nspace);
}

static void on_event(void *ctx, const pg_event_t *ev)
{
    pg_job_engine_t *je = ctx;

    je->name_ops->event(je->name_ctx, ev);
}

static void on_group(void *ctx, const pg_host_group_t *g)
{
    pg_job_engine_t *je = ctx;

    je->name_ops->group(je->name_ctx, g);
}

static void on_group_left(void *ctx, const pg_proc_t *proc, const char *name)
{
    pg_job_engine_t *je = ctx;

    je->name_ops->group_left(je->name_ctx, proc, name);
}

static void on_group_invite(void *ctx, const char *name, const pg_proc_t *leader,
                            const pg_proc_t *members, size_t nmembers)
{
    pg_job_engine_t *je = ctx;

    je->name_ops->group_invite(je->name_ctx, name, leader, members, nmembers);
}

static void on_group_cancel(void *ctx, uint64_t id)
{
    pg_job_engine_t *je = ctx;

    je->name_ops->group_cancel(je->name_ctx, id);
}

/* A fence timed out while other nodes' parts were awaited: the proxy
 * takes it back if it can. */
static bool on_fence_cancel(void *ctx, uint64_t id)
{
    pg_job_engine_t *je = ctx;

    return je->name_ops->fence_cancel(je->name_ctx, id);
}

/* The segment is an optimisation: without it the job runs as before. */
static void shm_start(pg_job_engine_t *je, const pg_job_engine_layout_t *l)
{
    int err = 0;

    je->shm = pg_shm_new(l->nspace, (uint32_t)l->size, &err);
    if (je->shm == NULL)
        fprintf(stderr, "pmigate: no shared key segment (%s): gets use the socket\n",
                strerror(err));
}

static int register_layout(pg_job_engine_t *je, const pg_job_engine_layout_t *l)
{
    int multi = l->nnodes > 1;
    uint32_t *rank_node = calloc((size_t)l->size, sizeof(*rank_node));
    bool *served = calloc(multi ? (size_t)l->nnodes : 1, sizeof(*served));
    const char *hosts[1] = { l->hostname };
    pg_ns_layout_t layout = {
        .size = (uint32_t)l->size,
        .nnodes = multi ? (uint32_t)l->nnodes : 1,
        .hostnames = multi ? l->hostnames : hosts,
        .rank_node = rank_node, /* one node: every rank on node 0 */
        .appnum = l->appnum,
        .cpuset = l->cpuset,
        .node_served = multi ? served : NULL, /* the other nodes' gateways serve theirs */
        .spawned = l->spawned,
        .stop_in_init = l->stop_in_init,
        .stop_rank = l->stop_rank,
        .parent_nspace = l->parent_nspace,
        .parent_rank = (pmix_rank_t)l->parent_rank,
    };
    pmix_status_t st = PMIX_ERR_NOMEM;

    if (rank_node == NULL || served == NULL)
        goto out;
    if (multi) {
        memcpy(rank_node, l->rank_node, (size_t)l->size * sizeof(*rank_node));
        served[l->nodeid] = true;
    }
    st = pg_ns_register(je->engine, l->nspace, &layout);
    if (st == PMIX_SUCCESS && multi) {
        je->rank_node = rank_node; /* kept: fences ask whose ranks they hold */
        rank_node = NULL;
    }
out:
    free(rank_node);
    free(served);
    return st == PMIX_SUCCESS ? 0 : -1;
}

pg_job_engine_t *pg_job_engine_new(struct event_base *base, const pg_job_engine_layout_t *l,
                                   const char **why)
{
    pg_job_engine_t *je = calloc(1, sizeof(*je));
    bool nodes; /* names and events across nodes */

    *why = "out of memory";
    if (je == NULL)
        return NULL;
    je->nspace = strdup(l->nspace);
    if (je->nspace == NULL)
        goto fail;
    je->size = (uint32_t)l->size;
    je->nnodes = l->nnodes;
    je->nodeid = l->nodeid;
    je->xfence = l->xfence;
    je->xfence_ctx = l->xfence_ctx;
    if (je->nnodes > 1 && (je->xfence == NULL || je->nodeid < 0 || je->nodeid >= je->nnodes)) {
        *why = "a job on several nodes needs the cross-node fence";
        goto fail;
    }
    je->name_ops = l->name_ops;
    je->name_ctx = l->name_ctx;
    nodes = je->name_ops != NULL;
    je->data_ops = l->data_ops;
    je->data_ctx = l->data_ctx;
    je->doomed = l->doomed;
    je->doomed_ctx = l->doomed_ctx;
    je->engine = pg_engine_new(&(pg_host_ops_t){
                                   .fence = on_fence,
                                   .fence_cancel = nodes && je->name_ops->fence_cancel
                                                       ? on_fence_cancel
                                                       : NULL,
                                   .commit = on_commit,
                                   .fence_doomed = on_fence_doomed,
                                   .publish = nodes ? on_publish : NULL,
                                   .unpublish = nodes ? on_unpublish : NULL,
                                   .lookup = nodes ? on_lookup : NULL,
                                   .lookup_cancel = nodes ? on_lookup_cancel : NULL,
                                   .names_drop = nodes ? on_names_drop : NULL,
                                   .event = nodes ? on_event : NULL,
                                   .dmodex = je->data_ops != NULL ? on_dmodex : NULL,
                                   .dmodex_cancel = je->data_ops != NULL ? on_dmodex_cancel
                                                                         : NULL,
                                   .group = nodes && je->name_ops->group ? on_group : NULL,
                                   .group_left = nodes && je->name_ops->group ? on_group_left : NULL,
                                   .group_invite = nodes && je->name_ops->group ? on_group_invite
                                                                               : NULL,
                                   .group_cancel = nodes && je->name_ops->group ? on_group_cancel
                                                                               : NULL,
                               },
                               je);
    je->timer = evtimer_new(base, on_deadline, je);
    if (je->engine == NULL || je->timer == NULL)
        goto fail;
    if (register_layout(je, l) != 0) {
        *why = "the engine refused the job layout";
        goto fail;
    }
    shm_start(je, l);
    return je;
fail:
    pg_job_engine_free(je);
    return NULL;
}

pg_job_engine_t *pg_job_engine_attach(struct event_base *base, pg_job_engine_t *host,
                                      const pg_job_engine_layout_t *l, const char **why)
{
    pg_job_engine_t *je = calloc(1, sizeof(*je));

    *why = "out of memory";
    if (je == NULL)
        return NULL;
    je->borrowed = true;
    je->engine = host->engine;
    je->size = (uint32_t)l->size;
    je->nspace = strdup(l->nspace);
    je->timer = evtimer_new(base, on_deadline, je);
    if (je->nspace == NULL || je->timer == NULL)
        goto fail;
    if (l->nnodes > 1) { /* its whole-job fences cross nodes through l->xfence */
        if (l->xfence == NULL || host->nnodes < 2) {
            *why = "a spawned job on several nodes needs the cross-node fence";
            goto fail;
        }
        je->nnodes = l->nnodes;
        je->nodeid = l->nodeid;
        je->xfence = l->xfence;
        je->xfence_ctx = l->xfence_ctx;
    }
    if (register_layout(je, l) != 0) {
        *why = "the engine refused the spawned job's layout";
        free(je->nspace);
        je->nspace = NULL; /* not registered: nothing to deregister */
        goto fail;
    }
    je->host = host;
    je->next_sub = host->subs;
    host->subs = je;
    return je;
fail:
    pg_job_engine_free(je);
    return NULL;
}

int pg_job_engine_preput(pg_job_engine_t *je, const pg_kv_t *preput, int npreput,
                         const char **why)
{
    pg_proc_t owner = { je->nspace, 0 };

    for (int i = 0; i < npreput; i++) {
        pg_value_t v = pg_value_string(preput[i].val);

        if (pg_put(je->engine, &owner, PMIX_GLOBAL, preput[i].key, &v, 0) != PMIX_SUCCESS) {
            *why = "a preput key was refused (empty, too long or reserved)";
            return -1;
        }
    }
    if (npreput > 0 && pg_commit(je->engine, &owner) != PMIX_SUCCESS) {
        *why = "the preput keys could not be stored";
        return -1;
    }
    return 0;
}

void pg_job_engine_free(pg_job_engine_t *je)
{
    if (je == NULL)
        return;
    if (je->host != NULL) { /* off the root's list */
        pg_job_engine_t **at = &je->host->subs;

        while (*at != NULL && *at != je)
            at = &(*at)->next_sub;
        if (*at == je)
            *at = je->next_sub;
    }
    for (pg_job_engine_t *sub = je->subs; sub != NULL; sub = sub->next_sub)
        sub->host = NULL; /* freed after their host: nothing to unlink from */
    if (je->borrowed) {
        if (je->nspace != NULL)
            pg_ns_deregister(je->engine, je->nspace);
        je->engine = NULL;
    }
    if (je->engine != NULL) {
        pg_ns_deregister(je->engine, je->nspace);
        pg_engine_free(je->engine);
    }
    pg_shm_free(je->shm);
    free(je->rank_node);
    if (je->timer != NULL)
        event_free(je->timer);
    free(je->nspace);
    free(je);
}

void pg_job_engine_segment_reader(pg_job_engine_t *je)
{
    if (je != NULL)
        je->shm_read = true;
}

void pg_job_engine_xfence_times(const pg_job_engine_t *je, uint64_t *ingest_ns,
                                uint64_t *segment_ns)
{
    *ingest_ns = je->xfence_ingest_ns;
    *segment_ns = je->xfence_segment_ns;
}

pg_engine_t *pg_job_engine_get(const pg_job_engine_t *je)
{
    return je ? je->engine : NULL;
}

const char *pg_job_engine_shm_path(const pg_job_engine_t *je)
{
    return je != NULL ? pg_shm_path(je->shm) : NULL;
}

static void notify(pg_job_engine_t *je, int rank,
                   pmix_status_t (*fn)(pg_engine_t *, const pg_proc_t *))
{
    pg_proc_t proc = { je->nspace, (pmix_rank_t)rank };

    if (je->engine != NULL && rank >= 0)
        (void)fn(je->engine, &proc);
    pg_job_engine_touch(je);
}

void pg_job_engine_started(pg_job_engine_t *je, int rank, int pid, const char *executable)
{
    if (je == NULL)
        return;
    pg_proc_t proc = { je->nspace, (pmix_rank_t)rank };

    if (je->engine != NULL && rank >= 0)
        (void)pg_proc_set_exec(je->engine, &proc, pid, executable);
}

void pg_job_engine_exited(pg_job_engine_t *je, int rank, int exit_code)
{
    if (je == NULL)
        return;
    pg_proc_t proc = { je->nspace, (pmix_rank_t)rank };

    if (je->engine != NULL && rank >= 0)
        (void)pg_proc_set_exit(je->engine, &proc, exit_code);
}

void pg_job_engine_connected(pg_job_engine_t *je, int rank)
{
    notify(je, rank, pg_proc_connect);
}

void pg_job_engine_finalized(pg_job_engine_t *je, int rank)
{
    notify(je, rank, pg_proc_finalize);
}

void pg_job_engine_lost(pg_job_engine_t *je, int rank)
{
    notify(je, rank, pg_proc_lost);
}

void pg_job_engine_gone(pg_job_engine_t *je, int rank)
{
    notify(je, rank, pg_proc_finalize);
}

size_t pg_job_engine_job_end(pg_job_engine_t *je, const pg_job_engine_end_t *end)
{
    pmix_status_t status = end->status;
    int exit_code = end->failed_code;
    time_t when = time(NULL);
    pg_proc_t job = { je->nspace, PMIX_RANK_WILDCARD };
    pg_proc_t target = { end->notify_nspace, PMIX_RANK_WILDCARD };
    pg_event_detail_t details[5] = {
        { PMIX_JOB_TERM_STATUS, pg_value_bytes(PMIX_STATUS, &status, sizeof(status)) },
        { PMIX_NSPACE, pg_value_string(je->nspace) },
        { PMIX_EVENT_TIMESTAMP, pg_value_bytes(PMIX_TIME, &when, sizeof(when)) },
        { PMIX_EXIT_CODE, pg_value_bytes(PMIX_INT, &exit_code, sizeof(exit_code)) },
    };
    pg_event_t ev = { PMIX_EVENT_JOB_END, job, job, PMIX_RANGE_CUSTOM, &target, 1, NULL, 0,
                      details, 3 };
    pmix_proc_t failed; /* the engine keeps a PMIX_PROC as its native bytes */
    pg_proc_t *ranks = NULL;
    size_t reached = 0;

    if (je->engine == NULL || end->notify_nspace == NULL)
        return 0;
    if (end->nranks > 0) { /* this node's processes of the job, by rank */
        if ((ranks = calloc((size_t)end->nranks, sizeof(*ranks))) == NULL)
            return 0;
        for (int i = 0; i < end->nranks; i++)
            ranks[i] = (pg_proc_t){ end->notify_nspace, (pmix_rank_t)(end->first_rank + i) };
        ev.targets = ranks;
        ev.ntargets = (size_t)end->nranks;
    }
    if (end->failed_rank >= 0) { /* the first failed process, its code */
        PMIX_LOAD_PROCID(&failed, je->nspace, (pmix_rank_t)end->failed_rank);
        details[4] = (pg_event_detail_t){ PMIX_PROCID,
                                          pg_value_bytes(PMIX_PROC, &failed, sizeof(failed)) };
        ev.ndetails = 5;
    }
    (void)pg_event_notify(je->engine, &ev, &reached);
    free(ranks);
    return reached;
}

size_t pg_job_engine_alert(pg_job_engine_t *je, int rank, int code, int range, const char *id,
                           const char *path)
{
    pg_proc_t source = { je->nspace, (pmix_rank_t)rank };
    pg_event_detail_t details[2];
    pg_event_t ev = { code, source, { je->nspace, PMIX_RANK_UNDEF }, (pmix_data_range_t)range,
                      NULL, 0, NULL, 0, details, 0 };
    size_t reached = 0;

    if (je->engine == NULL || range == PMIX_RANGE_RM)
        return 0;
    if (range == PMIX_RANGE_PROC_LOCAL || range == PMIX_RANGE_CUSTOM) {
        ev.range = PMIX_RANGE_CUSTOM; /* no list came with it: the rank's own */
        ev.targets = &source;
        ev.ntargets = 1;
    }
    if (id != NULL)
        details[ev.ndetails++] = (pg_event_detail_t){ PMIX_MONITOR_ID, pg_value_string(id) };
    if (path != NULL)
        details[ev.ndetails++] = (pg_event_detail_t){ PMIX_MONITOR_FILE, pg_value_string(path) };
    (void)pg_event_notify(je->engine, &ev, &reached);
    return reached;
}

void pg_job_engine_touch(pg_job_engine_t *je)
{
    pg_time_t deadline, now;
    struct timeval tv;

    if (je == NULL || je->engine == NULL || je->timer == NULL)
        return;
    deadline = pg_engine_next_deadline(je->engine);
    /* called after every read: re-arm only when the deadline moved */
    if (deadline == je->armed_at)
        return;
    je->armed_at = deadline;
    if (deadline == PG_TIME_NEVER) {
        event_del(je->timer);
        return;
    }
    now = pg_clock_now();
    deadline = deadline > now ? deadline - now : 0;
    tv.tv_sec = (time_t)(deadline / 1000000000u);
    tv.tv_usec = (suseconds_t)((deadline % 1000000000u) / 1000u);
    evtimer_add(je->timer, &tv);
}
