/*
 * pg_engine.c: the engine object, its memory accounting, and the life of a
 * request (held, timed out, completed, called back).
 *
 * Why a completion queue: completing one request (a commit satisfying a held
 * get, a fence releasing its joiners) happens in the middle of changing the
 * store.  Callbacks may re-enter the engine, so they run only from
 * pg_engine_flush(), at the end of the public call, when the state is
 * consistent; a flush started inside a callback returns at once and the
 * outer loop picks the new completions up.
 */
#include "engine/pg_engine_int.h"

#include <utlist.h>

void *pg_mem_alloc(pg_engine_t *e, size_t size)
{
    void *p = calloc(1, size);
    if (p != NULL)
        e->mem += size + PG_MALLOC_OVERHEAD;
    return p;
}

void pg_mem_free(pg_engine_t *e, void *p, size_t size)
{
    if (p == NULL)
        return;
    e->mem -= size + PG_MALLOC_OVERHEAD;
    free(p);
}

char *pg_mem_strdup(pg_engine_t *e, const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = pg_mem_alloc(e, n);
    if (c != NULL)
        memcpy(c, s, n);
    return c;
}

void pg_mem_strfree(pg_engine_t *e, char *s)
{
    if (s != NULL)
        pg_mem_free(e, s, strlen(s) + 1);
}

pg_kv_t *pg_kv_new(pg_engine_t *e, pmix_rank_t rank, pmix_scope_t scope, const pg_value_t *v)
{
    if (v->size > UINT32_MAX - 1 || (v->size > 0 && v->data == NULL))
        return NULL;
    pg_kv_t *kv = pg_mem_alloc(e, sizeof(*kv) + v->size + 1);
    if (kv == NULL)
        return NULL;
    kv->rank = rank;
    kv->scope = scope;
    kv->type = v->type;
    kv->size = (uint32_t)v->size;
    if (v->size > 0)
        memcpy(kv->data, v->data, v->size);
    kv->data[v->size] = '\0';
    return kv;
}

void pg_kv_free(pg_engine_t *e, pg_kv_t *kv)
{
    if (kv != NULL)
        pg_mem_free(e, kv, sizeof(*kv) + kv->size + 1);
}

pg_value_t pg_kv_value(const pg_kv_t *kv)
{
    pg_value_t v = { kv->type, kv->size, kv->data };
    return v;
}

pg_value_t pg_value_string(const char *s)
{
    pg_value_t v = { PMIX_STRING, s != NULL ? strlen(s) : 0, s };
    return v;
}

pg_value_t pg_value_bytes(pmix_data_type_t type, const void *data, size_t size)
{
    pg_value_t v = { type, size, data };
    return v;
}

void pg_ns_ref(pg_ns_t *job)
{
    job->refs++;
}

void pg_ns_unref(pg_ns_t *job)
{
    if (job != NULL && --job->refs == 0)
        pg_ns_destroy(job);
}

/* ---- requests ---- */

pg_req_t *pg_req_new(pg_engine_t *e, pg_req_kind_t kind, pg_ns_t *job, pmix_rank_t rank)
{
    pg_req_t *r = pg_mem_alloc(e, sizeof(*r));
    if (r == NULL)
        return NULL;
    r->kind = kind;
    r->job = job;
    r->rank = rank;
    r->deadline = PG_TIME_NEVER;
    if (job != NULL)
        pg_ns_ref(job);
    return r;
}

/* The absolute deadline `timeout` after `now`: PG_TIME_NEVER for no
 * timeout (0) or one that would overflow. */
pg_time_t pg_deadline_of(pg_time_t now, pg_time_t timeout)
{
    return timeout == 0 || now > PG_TIME_NEVER - timeout ? PG_TIME_NEVER : now + timeout;
}

/* Puts r on the held list, until `timeout` (ns, 0 = none) after `now`; it
 * blocks its requester unless the caller said the process continues
 * (nonblocking client calls). */
void pg_req_hold(pg_engine_t *e, pg_req_t *r, pg_time_t now, pg_time_t timeout)
{
    r->held = true;
    r->since = now;
    r->deadline = pg_deadline_of(now, timeout);
    DL_APPEND(e->held, r);
    if (r->blocks && r->job != NULL && r->rank < r->job->size)
        r->job->procs[r->rank].nheld++;
    e->hang_dirty = true;
}

static void req_unlink(pg_engine_t *e, pg_req_t *r)
{
    if (r->held) {
        DL_DELETE(e->held, r);
        r->held = false;
        if (r->blocks && r->job != NULL && r->rank < r->job->size)
            r->job->procs[r->rank].nheld--;
    }
    if (r->kind == PG_REQ_GET && r->slot != NULL)
        DL_DELETE2(r->slot->waiters, r, wprev, wnext);
    else if (r->kind == PG_REQ_NODE_GET && r->nattr != NULL)
        DL_DELETE2(r->nattr->waiters, r, wprev, wnext);
    else if (r->kind == PG_REQ_LOOKUP && r->wprev != NULL)
        DL_DELETE2(e->lookups, r, wprev, wnext);
    r->slot = NULL;
    r->nattr = NULL;
    r->wprev = r->wnext = NULL;
}

/* Records the result (copying the value) and queues the callback.  A
 * lookup the host was still answering ends there too. */
void pg_req_complete(pg_engine_t *e, pg_req_t *r, pmix_status_t status, const pg_kv_t *value)
{
    req_unlink(e, r);
    if (r->kind == PG_REQ_LOOKUP && r->name_id != 0 && e->ops.lookup_cancel != NULL)
        e->ops.lookup_cancel(e->host_ctx, r->name_id);
    r->name_id = 0;
    if (r->dmodex_id != 0) { /* ended before the host answered */
        uint64_t id = r->dmodex_id;

        r->dmodex_id = 0;
        if (e->ops.dmodex_cancel != NULL)
            e->ops.dmodex_cancel(e->host_ctx, id);
    }
    r->status = status;
    if (value != NULL && status == PMIX_SUCCESS) {
        pg_value_t v = pg_kv_value(value);
        r->value = pg_kv_new(e, value->rank, value->scope, &v);
        r->poster = value->rank;
        if (r->value == NULL)
            r->status = PMIX_ERR_NOMEM;
    }
    DL_APPEND(e->done, r);
}

static void req_free(pg_engine_t *e, pg_req_t *r)
{
    pg_kv_free(e, r->value);
    pg_mem_strfree(e, r->key);
    pg_mem_strfree(e, r->publisher_ns);
    if (r->keys != NULL)
        pg_fence_keys_unref(e, r->keys);
    pg_ns_unref(r->job);
    pg_mem_free(e, r, sizeof(*r));
}

static void req_call(pg_req_t *r)
{
    pg_value_t v;
    const pg_value_t *vp = NULL;

    if (r->value != NULL) {
        v = pg_kv_value(r->value);
        vp = &v;
    }
    switch (r->kind) {
    case PG_REQ_GET:
    case PG_REQ_NODE_GET:
        r->cb.get(r->status, vp, vp != NULL ? r->poster : PMIX_RANK_UNDEF, r->cbdata);
        break;
    case PG_REQ_LOOKUP:
        r->cb.lookup(r->status, vp, vp != NULL ? &r->publisher : NULL, r->cbdata);
        break;
    case PG_REQ_FENCE:
        r->cb.fence(r->status, r->keys, r->cbdata);
        break;
    case PG_REQ_NAME:
        r->cb.name(r->status, r->cbdata);
        break;
    }
}

void pg_engine_flush(pg_engine_t *e)
{
    if (e->hang_dirty && !e->flushing) {
        e->hang_dirty = false;
        pg_hang_check(e);
    }
    if (e->flushing)
        return;
    e->flushing = true;
    while (e->done != NULL) {
        pg_req_t *r = e->done;
        DL_DELETE(e->done, r);
        req_call(r);
        req_free(e, r);
        if (e->hang_dirty) {
            e->hang_dirty = false;
            pg_hang_check(e);
        }
    }
    e->flushing = false;
}

/* ---- the engine ---- */

pg_engine_t *pg_engine_new(const pg_host_ops_t *ops, void *host_ctx)
{
    pg_engine_t *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return NULL;
    if (ops != NULL)
        e->ops = *ops;
    e->host_ctx = host_ctx;
    e->next_id = 1;
    e->mem = sizeof(*e) + PG_MALLOC_OVERHEAD;
    return e;
}

void pg_engine_free(pg_engine_t *e)
{
    if (e == NULL)
        return;
    pg_ns_t *job, *tmp;
    HASH_ITER(hh, e->jobs, job, tmp)
        pg_ns_deregister(e, job->nspace);
    /* lookups from no job can still be held */
    while (e->lookups != NULL)
        pg_req_complete(e, e->lookups, PMIX_ERR_JOB_TERMINATED, NULL);
    pg_engine_flush(e);
    pg_names_free_all(e);
    pg_groups_free_all(e);
    free(e);
}

pg_time_t pg_engine_next_deadline(const pg_engine_t *e)
{
    pg_time_t next = pg_fence_next_deadline(e);
    const pg_req_t *r;
    DL_FOREACH(e->held, r)
        if (r->deadline < next)
            next = r->deadline;
    return next;
}

size_t pg_engine_expire(pg_engine_t *e, pg_time_t now)
{
    size_t n = 0;
    pg_req_t *r, *tmp;
    DL_FOREACH_SAFE(e->held, r, tmp) {
        if (r->deadline <= now) {
            pg_req_complete(e, r, PMIX_ERR_TIMEOUT, NULL);
            n++;
        }
    }
    pg_fence_expire(e, now);
    pg_engine_flush(e);
    return n;
}

static size_t hash_table_mem(const UT_hash_table *tbl)
{
    if (tbl == NULL)
        return 0;
    return sizeof(*tbl) + tbl->num_buckets * sizeof(UT_hash_bucket) + 2 * PG_MALLOC_OVERHEAD;
}

size_t pg_engine_memory(const pg_engine_t *e)
{
    size_t mem = e->mem;
    const pg_ns_t *job;
    if (e->jobs != NULL)
        mem += hash_table_mem(e->jobs->hh.tbl);
    if (e->hosts != NULL)
        mem += hash_table_mem(e->hosts->hh.tbl);
    if (e->names != NULL)
        mem += hash_table_mem(e->names->hh.tbl);
    for (job = e->jobs; job != NULL; job = job->hh.next) {
        if (job->slots != NULL)
            mem += hash_table_mem(job->slots->hh.tbl);
        for (uint32_t n = 0; n < job->nnodes; n++)
            if (job->nattrs[n] != NULL)
                mem += hash_table_mem(job->nattrs[n]->hh.tbl);
    }
    return mem + pg_fence_mem(e);
}
