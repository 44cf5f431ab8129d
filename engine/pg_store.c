/*
 * pg_store.c: the scoped key/value store -- put, commit, get with the
 * Standard's retrieval order, held gets, PMI-2 node attributes, and the
 * modex blob that carries committed data between engines.
 *
 * Visibility in one table (reader R, poster P, value V of P):
 *   V staged (put, no commit): P sees it unless PG_PUT_HIDDEN; nobody else.
 *   V committed: P always; others when V's scope admits them
 *   (LOCAL = same host, REMOTE = other host, GLOBAL = all, INTERNAL = none).
 * A committed value outside the reader's scope is PMIX_ERR_EXISTS_OUTSIDE_SCOPE.
 */
#include "engine/pg_engine_int.h"

#include <utlist.h>

/* ---- slots: one per distinct key of a job ---- */

pg_slot_t *pg_slot_get(pg_ns_t *job, const char *key, bool create)
{
    pg_slot_t *s = NULL;
    HASH_FIND_STR(job->slots, key, s);
    if (s != NULL || !create)
        return s;
    size_t n = strlen(key) + 1;
    s = pg_mem_alloc(job->engine, sizeof(*s) + n);
    if (s == NULL)
        return NULL;
    memcpy(s->key, key, n);
    HASH_ADD_STR(job->slots, key, s);
    return s;
}

static bool slot_dense(const pg_slot_t *s)
{
    return s->cap == UINT32_MAX;
}

/* The cell of `rank` in the slot, or NULL when the rank never posted. */
static pg_kv_t **slot_find(pg_slot_t *s, pmix_rank_t rank)
{
    if (slot_dense(s))
        return s->cells[rank] != NULL ? &s->cells[rank] : NULL;
    for (uint32_t i = 0; i < s->count; i++)
        if (s->cells[i]->rank == rank)
            return &s->cells[i];
    return NULL;
}

/* Small slots are scanned; past PG_SLOT_DENSE_AT posters the cells become a
 * rank-indexed array (8 bytes per rank of the job) so lookups stay O(1). */
static pmix_status_t slot_insert(pg_ns_t *job, pg_slot_t *s, pg_kv_t *kv)
{
    pg_engine_t *e = job->engine;
    if (slot_dense(s)) {
        s->cells[kv->rank] = kv;
        s->count++;
        return PMIX_SUCCESS;
    }
    if (s->count == PG_SLOT_DENSE_AT) {
        pg_kv_t **d = pg_mem_alloc(e, job->size * sizeof(*d));
        if (d == NULL)
            return PMIX_ERR_NOMEM;
        for (uint32_t i = 0; i < s->count; i++)
            d[s->cells[i]->rank] = s->cells[i];
        pg_mem_free(e, s->cells, s->cap * sizeof(*s->cells));
        s->cells = d;
        s->cap = UINT32_MAX;
        return slot_insert(job, s, kv);
    }
    if (s->count == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 1;
        pg_kv_t **c = pg_mem_alloc(e, cap * sizeof(*c));
        if (c == NULL)
            return PMIX_ERR_NOMEM;
        if (s->count)
            memcpy(c, s->cells, s->count * sizeof(*c));
        pg_mem_free(e, s->cells, s->cap * sizeof(*s->cells));
        s->cells = c;
        s->cap = cap;
    }
    s->cells[s->count++] = kv;
    return PMIX_SUCCESS;
}

pg_kv_t **pg_slot_cell(pg_slot_t *s, pmix_rank_t rank)
{
    return slot_find(s, rank);
}

/* Length of s->cells to walk: every rank when dense (entries may then be
 * NULL), else the posters. */
uint32_t pg_slot_ncells(const pg_ns_t *job, const pg_slot_t *s)
{
    return slot_dense(s) ? job->size : s->count;
}

static void kv_chain_free(pg_engine_t *e, pg_kv_t *kv)
{
    while (kv != NULL) {
        pg_kv_t *older = kv->older;
        pg_kv_free(e, kv);
        kv = older;
    }
}

static void slot_free(pg_ns_t *job, pg_slot_t *s)
{
    pg_engine_t *e = job->engine;
    uint32_t n = pg_slot_ncells(job, s);
    for (uint32_t i = 0; i < n; i++)
        kv_chain_free(e, s->cells[i]);
    pg_mem_free(e, s->cells, (slot_dense(s) ? job->size : s->cap) * sizeof(*s->cells));
    pg_mem_free(e, s, sizeof(*s) + strlen(s->key) + 1);
}

void pg_store_free_job(pg_engine_t *e, pg_ns_t *job)
{
    pg_slot_t *s, *tmp;
    HASH_ITER(hh, job->slots, s, tmp) {
        HASH_DEL(job->slots, s);
        slot_free(job, s);
    }
    if (job->nattrs != NULL)
        for (uint32_t n = 0; n < job->nnodes; n++) {
            pg_nattr_t *a, *atmp;
            HASH_ITER(hh, job->nattrs[n], a, atmp) {
                HASH_DEL(job->nattrs[n], a);
                pg_kv_free(e, a->kv);
                pg_mem_free(e, a, sizeof(*a) + strlen(a->key) + 1);
            }
        }
    if (job->procs != NULL)
        for (uint32_t r = 0; r < job->size; r++)
            pg_mem_free(e, job->procs[r].staged, job->procs[r].capstaged * sizeof(pg_slot_t *));
    pg_mem_free(e, job->log, job->caplog * sizeof(*job->log));
    job->log = NULL;
}

/* ---- scope ---- */

/* Does a committed value of `poster` with `scope` reach the processes on
 * `host` (an interned host, so hosts compare by pointer)?  The poster's own
 * reads are scope_sees' business: INTERNAL reaches nobody else. */
bool pg_scope_reaches(const pg_ns_t *pjob, pmix_rank_t poster, uint8_t scope,
                      const pg_host_t *host)
{
    bool same = pjob->nodes[pjob->rank_node[poster]] == host;
    switch (scope) {
    case PMIX_GLOBAL: return true;
    case PMIX_LOCAL: return same;
    case PMIX_REMOTE: return !same;
    default: return false; /* INTERNAL */
    }
}

static bool scope_sees(const pg_ns_t *pjob, pmix_rank_t poster, uint8_t scope,
                       const pg_ns_t *rjob, pmix_rank_t reader)
{
    if (pjob == rjob && poster == reader)
        return true;
    return pg_scope_reaches(pjob, poster, scope, rjob->nodes[rjob->rank_node[reader]]);
}

/* ---- put / commit ---- */

/* A key a process may post or publish: non-empty, at most PMIX_MAX_KEYLEN. */
bool pg_key_valid(const char *key)
{
    return key != NULL && key[0] != '\0' && strnlen(key, PMIX_MAX_KEYLEN + 1) <= PMIX_MAX_KEYLEN;
}

static pmix_status_t staged_add(pg_engine_t *e, pg_procst_t *p, pg_slot_t *s)
{
    if (p->nstaged == p->capstaged) {
        uint32_t cap = p->capstaged ? p->capstaged * 2 : 4;
        pg_slot_t **a = pg_mem_alloc(e, cap * sizeof(*a));
        if (a == NULL)
            return PMIX_ERR_NOMEM;
        if (p->nstaged)
            memcpy(a, p->staged, p->nstaged * sizeof(*a));
        pg_mem_free(e, p->staged, p->capstaged * sizeof(*a));
        p->staged = a;
        p->capstaged = cap;
    }
    p->staged[p->nstaged++] = s;
    return PMIX_SUCCESS;
}

pmix_status_t pg_put(pg_engine_t *e, const pg_proc_t *proc, pmix_scope_t scope, const char *key,
                     const pg_value_t *value, unsigned flags)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);
    if (job == NULL)
        return rc;
    if (!pg_key_valid(key) || PMIX_CHECK_RESERVED_KEY(key) || value == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (scope < PMIX_LOCAL || scope > PMIX_INTERNAL)
        return PMIX_ERR_NOT_SUPPORTED;
    pg_slot_t *s = pg_slot_get(job, key, true);
    if (s == NULL)
        return PMIX_ERR_NOMEM;
    pg_kv_t **cell = slot_find(s, proc->rank);
    pg_kv_t *head = cell != NULL ? *cell : NULL;
    if (head != NULL && head->scope != scope)
        return PMIX_ERR_BAD_PARAM; /* the same key in conflicting scopes */
    pg_kv_t *kv = pg_kv_new(e, proc->rank, scope, value);
    if (kv == NULL)
        return PMIX_ERR_NOMEM;
    kv->flags = PG_KV_STAGED | ((flags & PG_PUT_HIDDEN) ? PG_KV_HIDDEN : 0);
    if (head != NULL && (head->flags & PG_KV_STAGED)) {
        kv->older = head->older; /* a re-put replaces the staged value */
        pg_kv_free(e, head);
        *cell = kv;
        return PMIX_SUCCESS;
    }
    rc = staged_add(e, &job->procs[proc->rank], s);
    if (rc == PMIX_SUCCESS && cell == NULL)
        rc = slot_insert(job, s, kv);
    if (rc != PMIX_SUCCESS) {
        pg_kv_free(e, kv);
        return rc;
    }
    kv->older = head;
    if (cell != NULL)
        *cell = kv;
    return PMIX_SUCCESS;
}

static void log_append(pg_ns_t *job, pg_slot_t *s, pg_kv_t *kv)
{
    if ((kv->flags & PG_KV_LOGGED) || kv->scope == PMIX_INTERNAL)
        return;
    if (job->nlog == job->caplog) {
        size_t cap = job->caplog ? job->caplog * 2 : 64;
        pg_logent_t *l = pg_mem_alloc(job->engine, cap * sizeof(*l));
        if (l == NULL)
            return; /* the log is advisory: a push is lost, a get still works */
        if (job->nlog)
            memcpy(l, job->log, job->nlog * sizeof(*l));
        pg_mem_free(job->engine, job->log, job->caplog * sizeof(*l));
        job->log = l;
        job->caplog = cap;
    }
    job->log[job->nlog++] = (pg_logent_t){ s, kv->rank };
    kv->flags |= PG_KV_LOGGED;
}

static void slot_wake(pg_engine_t *e, pg_slot_t *s)
{
    pg_req_t *r, *tmp;
    DL_FOREACH_SAFE2(s->waiters, r, tmp, wnext)
        pg_get_retry(e, r);
}

/* Makes the staged head of a cell the published value. */
static void cell_publish(pg_engine_t *e, pg_ns_t *job, pg_slot_t *s, pg_kv_t *kv)
{
    uint8_t logged = kv->older != NULL ? (kv->older->flags & PG_KV_LOGGED) : 0;
    kv_chain_free(e, kv->older);
    kv->older = NULL;
    kv->flags = (uint8_t)((kv->flags & ~(PG_KV_STAGED | PG_KV_HIDDEN)) | logged);
    kv->epoch = kv->rank < job->size ? job->procs[kv->rank].collected : 0;
    log_append(job, s, kv);
}

/* Does publishing the staged values of `rank` change an answer a copy made
 * before (the gateway's node segment) gives?  Only a new value of a key it
 * had published, or a key other ranks posted too (the answer to a get
 * without a rank may move).  A key nobody else posted is in no copy, and a
 * reader that finds no entry asks the server: telling the host would send
 * every later get of this rank's older keys to the socket as well
 * (docs/shm-segment.md). */
static bool commit_changes_copies(pg_procst_t *p, pmix_rank_t rank)
{
    for (uint32_t i = 0; i < p->nstaged; i++) {
        pg_slot_t *s = p->staged[i];
        pg_kv_t **cell = slot_find(s, rank);
        if (cell != NULL && ((*cell)->flags & PG_KV_STAGED) &&
            ((*cell)->older != NULL || s->count > 1))
            return true;
    }
    return false;
}

pmix_status_t pg_commit(pg_engine_t *e, const pg_proc_t *proc)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);
    if (job == NULL)
        return rc;
    pg_procst_t *p = &job->procs[proc->rank];
    if (e->ops.commit != NULL && commit_changes_copies(p, proc->rank))
        e->ops.commit(e->host_ctx, proc);
    for (uint32_t i = 0; i < p->nstaged; i++) {
        pg_slot_t *s = p->staged[i];
        pg_kv_t **cell = slot_find(s, proc->rank);
        if (cell == NULL || !((*cell)->flags & PG_KV_STAGED))
            continue;
        cell_publish(e, job, s, *cell);
        slot_wake(e, s);
    }
    p->nstaged = 0;
    pg_engine_flush(e);
    return PMIX_SUCCESS;
}

/* ---- get ---- */

typedef enum { LK_MISSING, LK_FOUND, LK_OUTSIDE } lk_t;

typedef struct {
    pg_ns_t *rjob;
    pmix_rank_t rrank;
    pg_ns_t *tjob;
    pmix_scope_t scope; /* PMIX_DATA_SCOPE restriction */
} lk_ctx_t;

/* What reader sees of one cell: the owner its staged value (unless
 * hidden), everybody else the published one. */
static lk_t cell_look(const lk_ctx_t *c, pg_kv_t *head, pg_kv_t **out)
{
    bool owner = c->rjob == c->tjob && head->rank == c->rrank;
    pg_kv_t *kv = head;
    while (kv != NULL && ((kv->flags & PG_KV_HIDDEN) || (!owner && (kv->flags & PG_KV_STAGED))))
        kv = kv->older;
    if (kv == NULL)
        return LK_MISSING;
    if (!scope_sees(c->tjob, kv->rank, kv->scope, c->rjob, c->rrank) ||
        (c->scope != PMIX_SCOPE_UNDEF && !owner && kv->scope != c->scope &&
         kv->scope != PMIX_GLOBAL))
        return LK_OUTSIDE;
    *out = kv;
    return LK_FOUND;
}

static lk_t look_rank(const lk_ctx_t *c, pg_slot_t *s, pmix_rank_t rank, pg_kv_t **out)
{
    pg_kv_t **cell = slot_find(s, rank);
    return cell != NULL ? cell_look(c, *cell, out) : LK_MISSING;
}

/* RANK_UNDEF: the requester's own value first, then the lowest rank. */
static lk_t look_any(const lk_ctx_t *c, pg_slot_t *s, pg_kv_t **out)
{
    lk_t best = LK_MISSING;
    pg_kv_t *found = NULL;
    if (c->rjob == c->tjob && look_rank(c, s, c->rrank, out) == LK_FOUND)
        return LK_FOUND;
    uint32_t n = pg_slot_ncells(c->tjob, s);
    for (uint32_t i = 0; i < n; i++) {
        pg_kv_t *kv = NULL;
        if (s->cells[i] == NULL)
            continue;
        lk_t l = cell_look(c, s->cells[i], &kv);
        if (l == LK_FOUND && (found == NULL || kv->rank < found->rank)) {
            found = kv;
            if (slot_dense(s))
                break; /* dense cells are in rank order */
        } else if (l == LK_OUTSIDE) {
            best = LK_OUTSIDE;
        }
    }
    if (found != NULL) {
        *out = found;
        return LK_FOUND;
    }
    return best;
}

static lk_t look(const lk_ctx_t *c, pg_slot_t *s, pmix_rank_t target, unsigned flags,
                 pg_kv_t **out)
{
    if (s == NULL)
        return LK_MISSING;
    if (target < c->tjob->size) {
        lk_t l = look_rank(c, s, target, out);
        if (l == LK_FOUND || !(flags & PG_GET_RANK_HINT))
            return l;
        lk_t any = look_any(c, s, out);
        return any == LK_MISSING ? l : any;
    }
    return look_any(c, s, out);
}

static pmix_status_t lk_status(lk_t l)
{
    return l == LK_FOUND ? PMIX_SUCCESS
           : l == LK_OUTSIDE ? PMIX_ERR_EXISTS_OUTSIDE_SCOPE
                             : PMIX_ERR_NOT_FOUND;
}

/* Re-runs a held get after its slot changed. */
void pg_get_retry(pg_engine_t *e, pg_req_t *r)
{
    lk_ctx_t c = { r->job, r->rank, r->tjob, r->scope };
    pg_kv_t *kv = NULL;
    lk_t l = look(&c, r->slot, r->target, r->flags, &kv);
    if (l != LK_MISSING)
        pg_req_complete(e, r, lk_status(l), kv);
}

void pg_get_req_init(pg_get_req_t *q, const pg_proc_t *requester, const pg_proc_t *target,
                     const char *key)
{
    memset(q, 0, sizeof(*q));
    if (requester != NULL)
        q->requester = *requester;
    if (target != NULL)
        q->target = *target;
    q->key = key;
    q->scope = PMIX_SCOPE_UNDEF;
    q->realm = PG_REALM_DEFAULT;
    q->appnum = UINT32_MAX;
    q->nodeid = UINT32_MAX;
}

static pmix_status_t get_done(pg_get_cb_t cb, void *cbdata, pmix_status_t status,
                              const pg_kv_t *kv)
{
    if (kv != NULL) {
        pg_value_t v = pg_kv_value(kv);
        cb(status, &v, kv->rank, cbdata);
    } else {
        cb(status, NULL, PMIX_RANK_UNDEF, cbdata);
    }
    return PMIX_SUCCESS;
}

static pg_req_t *get_req_new(pg_engine_t *e, const pg_get_req_t *q, pg_ns_t *rjob,
                             pg_ns_t *tjob, pg_get_cb_t cb, void *cbdata)
{
    pg_req_t *r = pg_req_new(e, PG_REQ_GET, rjob, q->requester.rank);
    if (r == NULL)
        return NULL;
    r->tjob = tjob;
    r->target = q->target.rank;
    r->flags = q->flags;
    r->scope = q->scope;
    r->blocks = !(q->flags & PG_GET_NONBLOCKING);
    r->cb.get = cb;
    r->cbdata = cbdata;
    return r;
}

/* Step 6 of the retrieval order: the target lives on another server. */
static pmix_status_t get_remote(pg_engine_t *e, const pg_get_req_t *q, pg_ns_t *rjob,
                                pg_ns_t *tjob, pg_time_t now, pg_get_cb_t cb, void *cbdata)
{
    if (e->ops.dmodex == NULL)
        return get_done(cb, cbdata, PMIX_ERR_NOT_FOUND, NULL);
    pg_req_t *r = get_req_new(e, q, rjob, tjob, cb, cbdata);
    pg_slot_t *s = pg_slot_get(tjob, q->key, true);
    if (r == NULL || s == NULL) {
        if (r != NULL) {
            pg_req_complete(e, r, PMIX_ERR_NOMEM, NULL);
            pg_engine_flush(e);
            return PMIX_SUCCESS;
        }
        return get_done(cb, cbdata, PMIX_ERR_NOMEM, NULL);
    }
    r->slot = s;
    r->dmodex_id = e->next_id++;
    DL_APPEND2(s->waiters, r, wprev, wnext);
    pg_req_hold(e, r, now, q->timeout);
    pg_host_dmodex_t d = { r->dmodex_id, { rjob->nspace, q->requester.rank },
                           { tjob->nspace, q->target.rank }, q->key, r->blocks };
    e->ops.dmodex(e->host_ctx, &d);
    pg_engine_flush(e);
    return PMIX_OPERATION_IN_PROGRESS;
}

pmix_status_t pg_get_cancel(pg_engine_t *e, pg_get_cb_t cb, void *cbdata, pmix_status_t status)
{
    pg_req_t *r;
    if (e == NULL)
        return PMIX_ERR_BAD_PARAM;
    DL_FOREACH(e->held, r)
        if (r->kind == PG_REQ_GET && r->cb.get == cb && r->cbdata == cbdata)
            break;
    if (r == NULL)
        return PMIX_ERR_NOT_FOUND;
    pg_req_complete(e, r, status, NULL);
    pg_engine_flush(e);
    return PMIX_SUCCESS;
}

static pmix_status_t get_hold(pg_engine_t *e, const pg_get_req_t *q, pg_ns_t *rjob,
                              pg_ns_t *tjob, pg_time_t now, pg_get_cb_t cb, void *cbdata)
{
    pg_slot_t *s = pg_slot_get(tjob, q->key, true);
    pg_req_t *r = s != NULL ? get_req_new(e, q, rjob, tjob, cb, cbdata) : NULL;
    if (r == NULL)
        return get_done(cb, cbdata, PMIX_ERR_NOMEM, NULL);
    r->slot = s;
    DL_APPEND2(s->waiters, r, wprev, wnext);
    pg_req_hold(e, r, now, q->timeout);
    pg_engine_flush(e); /* hang detection may end it at once; r is gone then */
    return PMIX_OPERATION_IN_PROGRESS;
}

static pmix_status_t node_get(pg_engine_t *e, const pg_get_req_t *q, pg_ns_t *rjob,
                              pg_ns_t *tjob, pg_time_t now, pg_get_cb_t cb, void *cbdata);

pmix_status_t pg_get(pg_engine_t *e, const pg_get_req_t *q, pg_time_t now, pg_get_cb_t cb,
                     void *cbdata)
{
    pmix_status_t rc;
    if (cb == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (e == NULL || q == NULL || !pg_key_valid(q->key))
        return get_done(cb, cbdata, PMIX_ERR_BAD_PARAM, NULL);
    pg_ns_t *rjob = pg_ns_of(e, &q->requester, &rc);
    if (rjob == NULL)
        return get_done(cb, cbdata, rc, NULL);
    const char *tns = q->target.nspace;
    pg_ns_t *tjob = tns == NULL || tns[0] == '\0' ? rjob : pg_ns_find(e, tns);
    if (tjob == NULL)
        return get_done(cb, cbdata, PMIX_ERR_NOT_FOUND, NULL);
    pmix_rank_t t = q->target.rank;
    if (PMIX_CHECK_RESERVED_KEY(q->key))
        return pg_reserved_get(q, rjob, tjob, cb, cbdata);
    if (q->flags & PG_GET_NODE_ATTR)
        return node_get(e, q, rjob, tjob, now, cb, cbdata);
    if (PMIX_RANK_IS_VALID(t) && t >= tjob->size)
        return get_done(cb, cbdata, PMIX_ERR_BAD_PARAM, NULL);

    lk_ctx_t c = { rjob, q->requester.rank, tjob, q->scope };
    pg_kv_t *kv = NULL;
    lk_t l = look(&c, pg_slot_get(tjob, q->key, false), t, q->flags, &kv);
    if (l != LK_MISSING)
        return get_done(cb, cbdata, lk_status(l), kv);
    if ((q->flags & PG_GET_IMMEDIATE) ||
        ((q->flags & PG_GET_NOWAIT_AFTER_FENCE) && rjob->procs[q->requester.rank].fences_done))
        return get_done(cb, cbdata, PMIX_ERR_NOT_FOUND, NULL);
    bool specific = t < tjob->size && !(q->flags & PG_GET_RANK_HINT);
    if (specific && !tjob->node_served[tjob->rank_node[t]])
        return get_remote(e, q, rjob, tjob, now, cb, cbdata);
    return get_hold(e, q, rjob, tjob, now, cb, cbdata);
}

/* The value other processes see in a cell chain: the first committed one. */
pg_kv_t *pg_kv_published(pg_kv_t *head)
{
    while (head != NULL && (head->flags & PG_KV_STAGED))
        head = head->older;
    return head;
}

/* Stores a value received from another engine (fence collection, direct
 * modex) as committed data of an unserved process, and wakes its waiters. */
pmix_status_t pg_store_set_published(pg_ns_t *job, const char *key, pmix_rank_t rank,
                                     pmix_scope_t scope, const pg_value_t *v)
{
    pg_engine_t *e = job->engine;
    if (rank >= job->size || job->node_served[job->rank_node[rank]])
        return PMIX_SUCCESS; /* our own processes' data is authoritative here */
    if (!pg_key_valid(key) || PMIX_CHECK_RESERVED_KEY(key) || scope < PMIX_LOCAL ||
        scope > PMIX_GLOBAL)
        return PMIX_ERR_UNPACK_FAILURE;
    pg_slot_t *s = pg_slot_get(job, key, true);
    pg_kv_t *kv = s != NULL ? pg_kv_new(e, rank, scope, v) : NULL;
    if (kv == NULL)
        return PMIX_ERR_NOMEM;
    pg_kv_t **cell = slot_find(s, rank);
    if (cell == NULL) {
        if (slot_insert(job, s, kv) != PMIX_SUCCESS) {
            pg_kv_free(e, kv);
            return PMIX_ERR_NOMEM;
        }
    } else {
        kv->older = *cell;
        *cell = kv;
    }
    kv->flags = PG_KV_STAGED;
    if (e->ops.commit != NULL) /* for the host's copy, as a commit would be */
        e->ops.commit(e->host_ctx, &(pg_proc_t){ job->nspace, rank });
    cell_publish(e, job, s, kv);
    slot_wake(e, s);
    return PMIX_SUCCESS;
}

/* ---- PMI-2 node attributes ---- */

static pg_nattr_t *nattr_get(pg_ns_t *job, uint32_t node, const char *key, bool create)
{
    pg_nattr_t *a = NULL;
    HASH_FIND_STR(job->nattrs[node], key, a);
    if (a != NULL || !create)
        return a;
    size_t n = strlen(key) + 1;
    a = pg_mem_alloc(job->engine, sizeof(*a) + n);
    if (a == NULL)
        return NULL;
    memcpy(a->key, key, n);
    HASH_ADD_STR(job->nattrs[node], key, a);
    return a;
}

pmix_status_t pg_node_put(pg_engine_t *e, const pg_proc_t *proc, const char *key,
                          const pg_value_t *value)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);
    if (job == NULL)
        return rc;
    if (!pg_key_valid(key) || value == NULL)
        return PMIX_ERR_BAD_PARAM;
    pg_nattr_t *a = nattr_get(job, job->rank_node[proc->rank], key, true);
    pg_kv_t *kv = a != NULL ? pg_kv_new(e, proc->rank, PMIX_LOCAL, value) : NULL;
    if (kv == NULL)
        return PMIX_ERR_NOMEM;
    pg_kv_free(e, a->kv);
    a->kv = kv;
    pg_req_t *r, *tmp;
    DL_FOREACH_SAFE2(a->waiters, r, tmp, wnext)
        pg_req_complete(e, r, PMIX_SUCCESS, kv);
    pg_engine_flush(e);
    return PMIX_SUCCESS;
}

static pmix_status_t node_get(pg_engine_t *e, const pg_get_req_t *q, pg_ns_t *rjob,
                              pg_ns_t *tjob, pg_time_t now, pg_get_cb_t cb, void *cbdata)
{
    uint32_t node = q->nodeid != UINT32_MAX ? q->nodeid
                                            : pg_ns_node_of(tjob, rjob, q->requester.rank);
    if (node >= tjob->nnodes)
        return get_done(cb, cbdata, PMIX_ERR_NOT_FOUND, NULL);
    pg_nattr_t *a = nattr_get(tjob, node, q->key, false);
    if (a != NULL && a->kv != NULL)
        return get_done(cb, cbdata, PMIX_SUCCESS, a->kv);
    if (q->flags & PG_GET_IMMEDIATE)
        return get_done(cb, cbdata, PMIX_ERR_NOT_FOUND, NULL);
    a = nattr_get(tjob, node, q->key, true);
    pg_req_t *r = a != NULL ? pg_req_new(e, PG_REQ_NODE_GET, rjob, q->requester.rank) : NULL;
    if (r == NULL)
        return get_done(cb, cbdata, PMIX_ERR_NOMEM, NULL);
    r->kind = PG_REQ_NODE_GET;
    r->tjob = tjob;
    r->target = PMIX_RANK_UNDEF;
    r->node = node;
    r->nattr = a;
    r->blocks = !(q->flags & PG_GET_NONBLOCKING);
    r->cb.get = cb;
    r->cbdata = cbdata;
    DL_APPEND2(a->waiters, r, wprev, wnext);
    pg_req_hold(e, r, now, q->timeout);
    pg_engine_flush(e); /* hang detection may end it at once; r is gone then */
    return PMIX_OPERATION_IN_PROGRESS;
}
