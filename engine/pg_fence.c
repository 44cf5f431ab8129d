/*
 * pg_fence.c: fences -- matching joins by signature, counting the local
 * participants, one host upcall per fence, fan-out of the completion.
 *
 * A tracker exists per signature (the sorted participant list) and is
 * reused by the next fence of the same set; `seq` counts its instances (not
 * those that failed before the host saw them: the host names a fence by
 * signature and seq on every server) and `id` names the running one, so a
 * late or duplicate host completion (an old id) can never complete the
 * next fence, and a process joining twice before completion is refused
 * instead of being counted for the next one.
 */
#include "engine/pg_engine_int.h"

#include <stdlib.h>
#include <utlist.h>

typedef struct {
    pg_ns_t *job;
    pmix_rank_t rank;
} part_t;

static int part_cmp(const void *a, const void *b)
{
    const part_t *x = a, *y = b;
    int c = strcmp(x->job->nspace, y->job->nspace);
    if (c != 0)
        return c;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Resolves, sorts and de-duplicates the participant list. */
static pmix_status_t parts_build(pg_engine_t *e, pg_ns_t *own, const pg_proc_t *procs, size_t n,
                                 part_t **out, size_t *nout)
{
    part_t *p = calloc(n ? n : 1, sizeof(*p));
    if (p == NULL)
        return PMIX_ERR_NOMEM;
    if (procs == NULL) {
        p[0] = (part_t){ own, PMIX_RANK_WILDCARD };
        n = 1;
    }
    for (size_t i = 0; procs != NULL && i < n; i++) {
        const char *ns = procs[i].nspace;
        p[i].job = ns == NULL || ns[0] == '\0' ? own : pg_ns_find(e, ns);
        p[i].rank = procs[i].rank;
        if (p[i].job == NULL || (p[i].rank != PMIX_RANK_WILDCARD && p[i].rank >= p[i].job->size)) {
            free(p);
            return PMIX_ERR_BAD_PARAM;
        }
    }
    qsort(p, n, sizeof(*p), part_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || part_cmp(&p[k - 1], &p[i]) != 0)
            p[k++] = p[i];
    *out = p;
    *nout = k;
    return PMIX_SUCCESS;
}

/* The signature as hash key: "nspace\0" + 4 rank bytes per entry.  A
 * tagged collective (a group operation) is prefixed with "\0tag\0": no
 * nspace is empty, so it never meets a plain fence of the same set. */
static char *sig_build(const part_t *p, size_t n, const char *tag, size_t *len)
{
    size_t taglen = tag != NULL ? strlen(tag) + 2 : 0;
    size_t total = taglen;
    for (size_t i = 0; i < n; i++)
        total += strlen(p[i].job->nspace) + 1 + 4;
    char *s = malloc(total ? total : 1), *w = s;
    if (s == NULL)
        return NULL;
    if (tag != NULL) {
        w[0] = '\0';
        memcpy(w + 1, tag, taglen - 1);
        w += taglen;
    }
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(p[i].job->nspace) + 1;
        memcpy(w, p[i].job->nspace, l);
        memcpy(w + l, &p[i].rank, 4);
        w += l + 4;
    }
    *len = total;
    return s;
}

static bool member_local(const pg_ns_t *job, pmix_rank_t r)
{
    return job->node_served[job->rank_node[r]];
}

/* The ranks participant entry i covers are [part_first, part_end): its whole
 * job for a wildcard, else the one rank.  Rank r's member index is
 * offset[i] + r - part_first. */
static uint32_t part_first(const pg_fence_t *f, size_t i)
{
    return f->prank[i] == PMIX_RANK_WILDCARD ? 0 : f->prank[i];
}

static uint32_t part_end(const pg_fence_t *f, size_t i)
{
    return f->prank[i] == PMIX_RANK_WILDCARD ? f->pjob[i]->size : f->prank[i] + 1;
}

/* Is some local member that has not joined yet in a state `pred` accepts? */
static bool missing_local_member(const pg_fence_t *f, bool (*pred)(const pg_procst_t *))
{
    for (size_t i = 0; i < f->nparts; i++) {
        const pg_ns_t *job = f->pjob[i];
        uint32_t first = part_first(f, i);
        for (uint32_t r = first; r < part_end(f, i); r++)
            if (member_local(job, r) && !f->joined[f->offset[i] + r - first] &&
                pred(&job->procs[r]))
                return true;
    }
    return false;
}

static void fence_free(pg_engine_t *e, pg_fence_t *f)
{
    for (size_t i = 0; i < f->nparts; i++)
        pg_ns_unref(f->pjob[i]);
    pg_mem_free(e, f->pjob, f->nparts * sizeof(*f->pjob));
    pg_mem_free(e, f->prank, f->nparts * sizeof(*f->prank));
    pg_mem_free(e, f->offset, f->nparts * sizeof(*f->offset));
    pg_mem_free(e, f->joined, f->nmembers ? f->nmembers : 1);
    pg_mem_free(e, f->sig, f->siglen);
    pg_mem_free(e, f, sizeof(*f));
}

static pg_fence_t *fence_new(pg_engine_t *e, const part_t *p, size_t n, char *sig, size_t siglen,
                             bool tagged)
{
    pg_fence_t *f = pg_mem_alloc(e, sizeof(*f));
    if (f == NULL)
        return NULL;
    f->nparts = n;
    f->pjob = pg_mem_alloc(e, n * sizeof(*f->pjob));
    f->prank = pg_mem_alloc(e, n * sizeof(*f->prank));
    f->offset = pg_mem_alloc(e, n * sizeof(*f->offset));
    f->sig = pg_mem_alloc(e, siglen);
    f->siglen = siglen; /* before any failure: fence_free releases sig by it */
    if (f->pjob == NULL || f->prank == NULL || f->offset == NULL || f->sig == NULL) {
        fence_free(e, f);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        f->pjob[i] = p[i].job;
        pg_ns_ref(p[i].job);
        f->prank[i] = p[i].rank;
        f->offset[i] = f->nmembers;
        f->nmembers += part_end(f, i) - part_first(f, i);
        for (uint32_t r = part_first(f, i); r < part_end(f, i); r++)
            f->nlocal += member_local(p[i].job, r);
    }
    memcpy(f->sig, sig, siglen);
    f->tagged = tagged;
    /* only a plain fence closes the job's key epoch */
    f->whole_job = !tagged && n == 1 && p[0].rank == PMIX_RANK_WILDCARD;
    f->deadline = PG_TIME_NEVER;
    f->joined = pg_mem_alloc(e, f->nmembers ? f->nmembers : 1);
    if (f->joined == NULL) {
        fence_free(e, f);
        return NULL;
    }
    HASH_ADD_KEYPTR(hh, e->fences, f->sig, f->siglen, f);
    return f;
}

/* Index of (job, rank) among the fence's members, or SIZE_MAX. */
static size_t member_index(const pg_fence_t *f, const pg_ns_t *job, pmix_rank_t rank)
{
    for (size_t i = 0; i < f->nparts; i++) {
        if (f->pjob[i] != job)
            continue;
        if (f->prank[i] == PMIX_RANK_WILDCARD)
            return f->offset[i] + rank;
        if (f->prank[i] == rank)
            return f->offset[i];
    }
    return SIZE_MAX;
}

/* ---- the keys a whole-job fence reports ---- */

static struct pg_fence_keys *keys_take(pg_engine_t *e, pg_ns_t *job)
{
    struct pg_fence_keys *k = pg_mem_alloc(e, sizeof(*k));
    if (k == NULL)
        return NULL;
    k->job = job;
    pg_ns_ref(job);
    k->ents = job->log;
    k->n = job->nlog;
    /* the log moves into k: its capacity is accounted under k from now on */
    e->mem -= job->caplog * sizeof(*job->log);
    e->mem += job->nlog * sizeof(*job->log);
    for (size_t i = 0; i < k->n; i++) {
        pg_kv_t **cell = pg_slot_cell(k->ents[i].slot, k->ents[i].rank);
        for (pg_kv_t *kv = cell != NULL ? *cell : NULL; kv != NULL; kv = kv->older)
            kv->flags &= (uint8_t)~PG_KV_LOGGED;
    }
    job->log = NULL;
    job->nlog = job->caplog = 0;
    return k;
}

void pg_fence_keys_unref(pg_engine_t *e, struct pg_fence_keys *k)
{
    if (--k->refs > 0)
        return;
    pg_ns_unref(k->job);
    if (k->ents != NULL) {
        e->mem -= k->n * sizeof(*k->ents) + PG_MALLOC_OVERHEAD;
        free(k->ents);
    }
    pg_mem_free(e, k, sizeof(*k));
}

bool pg_fence_keys_next(const pg_fence_keys_t *k, size_t *cursor, pmix_rank_t *rank,
                        const char **key, pg_value_t *value)
{
    while (k != NULL && *cursor < k->n) {
        const pg_logent_t *ent = &k->ents[(*cursor)++];
        pg_kv_t **cell = pg_slot_cell(ent->slot, ent->rank);
        pg_kv_t *kv = cell != NULL ? pg_kv_published(*cell) : NULL;
        if (kv == NULL || kv->scope == PMIX_INTERNAL)
            continue;
        *rank = ent->rank;
        *key = ent->slot->key;
        *value = pg_kv_value(kv);
        return true;
    }
    return false;
}

/* ---- completion ---- */

/* Ends the running instance: every joiner is queued with `status`. */
static void fence_finish(pg_engine_t *e, pg_fence_t *f, pmix_status_t status)
{
    struct pg_fence_keys *keys = NULL;
    if (status == PMIX_SUCCESS && f->whole_job)
        keys = keys_take(e, f->pjob[0]);
    pg_req_t *r, *tmp;
    DL_FOREACH_SAFE2(f->joiners, r, tmp, wnext) {
        DL_DELETE2(f->joiners, r, wprev, wnext);
        r->wprev = r->wnext = NULL;
        pg_procst_t *p = &r->job->procs[r->rank];
        p->nfences--;
        if (status == PMIX_SUCCESS)
            p->fences_done++;
        r->status = status;
        if (keys != NULL) {
            r->keys = keys;
            keys->refs++;
        }
        DL_APPEND(e->done, r);
    }
    if (keys != NULL && keys->refs == 0) {
        keys->refs = 1;
        pg_fence_keys_unref(e, keys);
    }
    /* An instance that failed before the host saw it (a timeout, a doomed
     * or mismatched fence) gives its number back: the host names a fence
     * by signature and number on every server, and the servers whose
     * members never joined this one do not count it, so this server's
     * next instance must take the same number to meet theirs. */
    if (!f->host_pending && status != PMIX_SUCCESS)
        f->seq--;
    f->id = 0;
    f->host_pending = false;
    f->mismatch = false;
    f->njoined = 0;
    f->deadline = PG_TIME_NEVER;
    memset(f->joined, 0, f->nmembers ? f->nmembers : 1);
    e->hang_dirty = true;
}

typedef struct {
    const pg_fence_t *f;
    const pg_ns_t *job;
} collect_ctx_t;

static bool joined_here(const pg_fence_t *f, const pg_ns_t *job, pmix_rank_t rank)
{
    size_t i = member_index(f, job, rank);
    return i != SIZE_MAX && f->joined[i] && member_local(job, rank);
}

/* A joined local member's value published since its data last went to
 * the host: what went with an earlier fence, the other nodes have. */
static bool want_joined(void *ctx, const pg_kv_t *kv)
{
    const collect_ctx_t *c = ctx;
    return joined_here(c->f, c->job, kv->rank) && kv->epoch == c->job->procs[kv->rank].collected;
}

/* The data of the local members just went to the host: what they publish
 * from now on goes with their next fence. */
static void members_collected(const pg_fence_t *f)
{
    for (size_t i = 0; i < f->nparts; i++)
        for (uint32_t r = part_first(f, i); r < part_end(f, i); r++)
            /* once per rank, whichever entries name it */
            if (joined_here(f, f->pjob[i], r) &&
                member_index(f, f->pjob[i], r) == f->offset[i] + (r - part_first(f, i)))
                f->pjob[i]->procs[r].collected++;
}

/* The REMOTE+GLOBAL data every local participant (all jobs) committed
 * since its last whole-job fence: a whole-job fence's blob is that fence's
 * own data, however many came before it.  A fence over a subset does not
 * close the epoch: its data reaches only the subset's nodes, and the next
 * whole-job fence must still carry it to the others. */
static pmix_status_t fence_collect(pg_engine_t *e, const pg_fence_t *f, void **blob, size_t *size)
{
    char *all = NULL;
    size_t len = 0;
    for (size_t i = 0; i < f->nparts; i++) {
        if (i > 0 && f->pjob[i] == f->pjob[i - 1])
            continue;
        collect_ctx_t c = { f, f->pjob[i] };
        void *b = NULL;
        size_t n = 0;
        pmix_status_t rc = pg_modex_build(f->pjob[i], want_joined, &c, &b, &n);
        char *t = rc == PMIX_SUCCESS ? realloc(all, len + n + 1) : NULL;
        if (t == NULL) {
            free(b);
            free(all);
            return rc == PMIX_SUCCESS ? PMIX_ERR_NOMEM : rc;
        }
        all = t;
        if (n > 0)
            memcpy(all + len, b, n);
        len += n;
        free(b);
    }
    if (f->whole_job) /* a subset's data went to its members' nodes only */
        members_collected(f);
    *blob = all;
    *size = len;
    return PMIX_SUCCESS;
}

/* A group collective's local members all joined: without the host's
 * group hook every member is local and it is done; with it the host
 * settles it (and times it: the engine keeps its deadline, so a member
 * that never comes still ends it with PMIX_ERR_TIMEOUT here). */
static void fence_group_local_done(pg_engine_t *e, pg_fence_t *f)
{
    if (e->ops.group == NULL) {
        fence_finish(e, f, PMIX_SUCCESS);
        return;
    }
    pg_host_group_t hg = { f->id, pg_fence_tag(f), f->nmembers, f->nlocal, NULL, 0 };
    f->host_pending = true;
    pg_group_to_host(e, &hg);
}

/* Every local participant joined: one host upcall (or local completion). */
static void fence_local_done(pg_engine_t *e, pg_fence_t *f)
{
    if (f->mismatch) {
        fence_finish(e, f, PMIX_ERR_INVALID_ARG);
        return;
    }
    if (f->tagged) {
        fence_group_local_done(e, f);
        return;
    }
    if (e->ops.fence == NULL) {
        fence_finish(e, f, PMIX_SUCCESS);
        return;
    }
    void *blob = NULL;
    size_t size = 0;
    if (f->collect) {
        pmix_status_t rc = fence_collect(e, f, &blob, &size);
        if (rc != PMIX_SUCCESS) {
            fence_finish(e, f, rc);
            return;
        }
    }
    pg_proc_t *parts = calloc(f->nparts, sizeof(*parts));
    if (parts == NULL) {
        free(blob);
        fence_finish(e, f, PMIX_ERR_NOMEM);
        return;
    }
    for (size_t i = 0; i < f->nparts; i++)
        parts[i] = (pg_proc_t){ f->pjob[i]->nspace, f->prank[i] };
    pg_host_fence_t hf = { f->id, f->seq, parts, f->nparts, f->collect, blob, size };
    f->host_pending = true;
    if (e->ops.fence_cancel == NULL)
        f->deadline = PG_TIME_NEVER; /* the host owns timing from here on */
    e->ops.fence(e->host_ctx, &hf);
    free(parts);
    free(blob);
}

static bool proc_ended(const pg_procst_t *p)
{
    return p->state == PG_PROC_FINALIZED || p->state == PG_PROC_LOST;
}

/* A local member that is gone and has not joined dooms the fence. */
static bool fence_doomed(const pg_fence_t *f)
{
    return missing_local_member(f, proc_ended);
}

/* The local members that are gone without joining (malloc'd, *n of them;
 * NULL when none or out of memory). */
static pg_proc_t *gone_members(const pg_fence_t *f, size_t *n)
{
    pg_proc_t *gone = malloc((f->nlocal ? f->nlocal : 1) * sizeof(*gone));

    *n = 0;
    for (size_t i = 0; gone != NULL && i < f->nparts; i++) {
        const pg_ns_t *job = f->pjob[i];
        uint32_t first = part_first(f, i);

        for (uint32_t r = first; r < part_end(f, i); r++)
            if (member_local(job, r) && !f->joined[f->offset[i] + r - first] &&
                proc_ended(&job->procs[r]) && *n < f->nlocal)
                gone[(*n)++] = (pg_proc_t){ job->nspace, r };
    }
    if (gone != NULL && *n == 0) {
        free(gone);
        gone = NULL;
    }
    return gone;
}

/* A doomed fence fails for its joiners, and the host learns which members
 * are gone (to say so: the joiners only see their error). */
static void fence_fail_doomed(pg_engine_t *e, pg_fence_t *f)
{
    size_t n = 0;
    pg_proc_t *gone = e->ops.fence_doomed != NULL ? gone_members(f, &n) : NULL;

    fence_finish(e, f, PMIX_ERR_LOST_CONNECTION);
    if (gone != NULL)
        e->ops.fence_doomed(e->host_ctx, gone, n);
    free(gone);
}

/* A refused join leaves no tracker behind: one created for it (nobody else
 * knows it yet) is freed, or a process retrying a bad join would grow the
 * engine.  A tracker that existed keeps its sequence number. */
static void fence_forget_new(pg_engine_t *e, pg_fence_t *f, bool created)
{
    if (!created)
        return;
    HASH_DEL(e->fences, f);
    fence_free(e, f);
}

/* A participant may be a group: its name as the nspace, rank WILDCARD (the
 * Standard lets a group's id stand where a namespace does; OpenPMIx's
 * asyncgroup fences "ourgroup").  It stands for the group's members. */
pmix_status_t pg_fence_join(pg_engine_t *e, const pg_proc_t *proc, const pg_proc_t *procs,
                            size_t nprocs, unsigned flags, pg_time_t timeout, pg_time_t now,
                            pg_fence_cb_t cb, void *cbdata)
{
    pg_proc_t *members = NULL;
    size_t nmembers = 0;
    pmix_status_t rc = pg_group_expand(e, procs, nprocs, &members, &nmembers);

    if (rc == PMIX_SUCCESS)
        rc = pg_fence_join_tagged(e, proc, members != NULL ? members : procs,
                                  members != NULL ? nmembers : nprocs, NULL, flags, timeout,
                                  now, cb, cbdata);
    free(members);
    return rc;
}

pmix_status_t pg_fence_join_tagged(pg_engine_t *e, const pg_proc_t *proc, const pg_proc_t *procs,
                                   size_t nprocs, const char *tag, unsigned flags,
                                   pg_time_t timeout, pg_time_t now, pg_fence_cb_t cb,
                                   void *cbdata)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);
    if (job == NULL)
        return rc;
    if (cb == NULL || (procs == NULL && nprocs != 0) || (procs != NULL && nprocs == 0))
        return PMIX_ERR_BAD_PARAM;
    part_t *p = NULL;
    size_t n = 0, siglen = 0;
    rc = parts_build(e, job, procs, nprocs, &p, &n);
    if (rc != PMIX_SUCCESS)
        return rc;
    char *sig = sig_build(p, n, tag, &siglen);
    pg_fence_t *f = NULL;
    bool created = false;
    if (sig != NULL) {
        HASH_FIND(hh, e->fences, sig, siglen, f);
        if (f == NULL)
            created = (f = fence_new(e, p, n, sig, siglen, tag != NULL)) != NULL;
    }
    free(p);
    free(sig);
    if (f == NULL)
        return PMIX_ERR_NOMEM;
    size_t idx = member_index(f, job, proc->rank);
    if (idx == SIZE_MAX)
        return fence_forget_new(e, f, created), PMIX_ERR_BAD_PARAM;
    if (f->host_pending || f->joined[idx])
        return PMIX_ERR_EXISTS;
    pg_req_t *r = pg_req_new(e, PG_REQ_FENCE, job, proc->rank);
    if (r == NULL)
        return fence_forget_new(e, f, created), PMIX_ERR_NOMEM;
    bool collect = (flags & PG_FENCE_COLLECT) != 0;
    if (f->id == 0) {
        f->id = e->next_id++;
        f->seq++;
        f->collect = collect;
        f->started = now;
    } else if (f->collect != collect) {
        f->mismatch = true;
    }
    r->fence = f;
    r->cb.fence = cb;
    r->cbdata = cbdata;
    DL_APPEND2(f->joiners, r, wprev, wnext);
    f->joined[idx] = 1;
    f->njoined++;
    job->procs[proc->rank].nfences++;
    pg_time_t dl = pg_deadline_of(now, timeout);
    if (dl < f->deadline)
        f->deadline = dl;
    e->hang_dirty = true;
    /* A member gone before the first join dooms the fence; one gone later
     * is seen when it goes (pg_fence_proc_gone).  Checked at every join,
     * it was a pass over the members per join: N^2 per fence. */
    if (f->njoined == 1 && fence_doomed(f))
        fence_fail_doomed(e, f);
    else if (f->njoined == f->nlocal)
        fence_local_done(e, f);
    pg_engine_flush(e);
    return PMIX_SUCCESS;
}

pmix_status_t pg_fence_host_done(pg_engine_t *e, uint64_t id, pmix_status_t status,
                                 const void *data, size_t size)
{
    pg_fence_t *f;
    if (e == NULL || id == 0)
        return PMIX_ERR_BAD_PARAM;
    if ((f = pg_fence_host_pending(e, id)) == NULL)
        return PMIX_ERR_NOT_FOUND; /* stale or duplicate completion */
    /* The host settled the instance as timed out on every server (it
     * took it back, as fence_cancel does, only later): its number goes
     * back, so the next fence of the same participants meets the other
     * servers' next one.  A group's outcome is the group code's. */
    if (status == PMIX_ERR_TIMEOUT && !f->tagged)
        f->host_pending = false;
    if (status == PMIX_SUCCESS && f->collect && data != NULL && size > 0)
        status = pg_modex_ingest(e, data, size);
    fence_finish(e, f, status);
    pg_engine_flush(e);
    return PMIX_SUCCESS;
}

/* ---- hooks for the rest of the engine ---- */

const char *pg_fence_tag(const pg_fence_t *f)
{
    return f->tagged ? f->sig + 1 : NULL; /* the signature opens with "\0tag\0" */
}

pg_fence_t *pg_fence_host_pending(pg_engine_t *e, uint64_t id)
{
    pg_fence_t *f;

    for (f = e->fences; f != NULL; f = f->hh.next)
        if (id != 0 && f->id == id && f->host_pending)
            return f;
    return NULL;
}

/* A process finalized or was lost: fail the running fences it dooms. */
void pg_fence_proc_gone(pg_engine_t *e)
{
    pg_fence_t *f;
    for (f = e->fences; f != NULL; f = f->hh.next)
        if (f->id != 0 && !f->host_pending && fence_doomed(f))
            fence_fail_doomed(e, f);
}

void pg_fence_drop_job(pg_engine_t *e, pg_ns_t *job)
{
    pg_fence_t *f, *tmp;
    HASH_ITER(hh, e->fences, f, tmp) {
        bool uses = false;
        for (size_t i = 0; i < f->nparts; i++)
            uses |= f->pjob[i] == job;
        if (!uses)
            continue;
        if (f->id != 0)
            fence_finish(e, f, PMIX_ERR_JOB_TERMINATED);
        HASH_DEL(e->fences, f);
        fence_free(e, f);
    }
}

/* Does the engine time f?  A group collective keeps its PMIX_TIMEOUT while
 * the host settles it, and so does a plain fence when the host can take
 * one back (fence_cancel); else the host's fence is the host's to time
 * (its deadline went with it). */
static bool fence_timed(const pg_fence_t *f)
{
    return f->id != 0 && f->deadline != PG_TIME_NEVER;
}

/* f, at the host, is past its deadline: does the host let it go?  A
 * group's always; a plain fence's when fence_cancel says so -- then it is
 * as if the host never saw it (its number is given back, fence_finish). */
static bool host_lets_go(pg_engine_t *e, pg_fence_t *f)
{
    if (f->tagged) {
        if (e->ops.group_cancel != NULL)
            e->ops.group_cancel(e->host_ctx, f->id);
        return true;
    }
    if (e->ops.fence_cancel == NULL || !e->ops.fence_cancel(e->host_ctx, f->id))
        return false;
    f->host_pending = false;
    return true;
}

void pg_fence_expire(pg_engine_t *e, pg_time_t now)
{
    pg_fence_t *f;
    for (f = e->fences; f != NULL; f = f->hh.next) {
        if (!fence_timed(f) || f->deadline > now)
            continue;
        if (f->host_pending && !host_lets_go(e, f)) {
            f->deadline = PG_TIME_NEVER; /* it runs to the host's end */
            continue;
        }
        fence_finish(e, f, PMIX_ERR_TIMEOUT);
    }
}

pg_time_t pg_fence_next_deadline(const pg_engine_t *e)
{
    pg_time_t next = PG_TIME_NEVER;
    const pg_fence_t *f;
    for (f = e->fences; f != NULL; f = f->hh.next)
        if (fence_timed(f) && f->deadline < next)
            next = f->deadline;
    return next;
}

size_t pg_fence_mem(const pg_engine_t *e)
{
    if (e->fences == NULL)
        return 0;
    return sizeof(UT_hash_table) + e->fences->hh.tbl->num_buckets * sizeof(UT_hash_bucket);
}

/* Hang detection: can fence f still complete?  True when every local member
 * that has not joined yet is able to move (procs[].able). */
static bool proc_unable(const pg_procst_t *p)
{
    return !p->able;
}

/* A member served elsewhere that is blocked here (waiting in a get made
 * for it: another server's direct modex) has not joined, and will not
 * while that get is held. */
static bool remote_member_blocked(const pg_fence_t *f)
{
    for (size_t i = 0; i < f->nparts; i++) {
        const pg_ns_t *job = f->pjob[i];
        for (uint32_t r = part_first(f, i); r < part_end(f, i); r++)
            if (!member_local(job, r) && !job->procs[r].able)
                return true;
    }
    return false;
}

bool pg_fence_can_complete(const pg_fence_t *f)
{
    if (remote_member_blocked(f))
        return false;
    if (f->host_pending)
        return true; /* the host decides */
    return !missing_local_member(f, proc_unable);
}
