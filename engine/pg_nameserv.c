/*
 * pg_nameserv.c: publish / lookup / unpublish -- one name space for the
 * whole gateway (PMI-1 publish_name, PMI-2 name-publish, PMIx_Publish).
 *
 * Rules (hydra's, which MPICH's namepub test expects): a duplicate publish
 * is refused (PMIX_ERR_DUPLICATE_KEY), unpublishing an unknown name is
 * PMIX_ERR_NOT_FOUND, a missing name is not found at once unless the lookup
 * asks to wait.  Entries belong to the publisher's job and go away with it.
 *
 * Several servers (`pmigate proxy`) keep one name space at their host: with
 * the name hooks every publish, unpublish and lookup is the host's to
 * answer (pg_name_host_done), and the engine only holds the request --
 * until the answer, the lookup's timeout or the end of the requester's job.
 */
#include "engine/pg_engine_int.h"

#include <utlist.h>

static void name_free(pg_engine_t *e, pg_name_t *n)
{
    HASH_DEL(e->names, n);
    pg_kv_free(e, n->kv);
    pg_mem_free(e, n, sizeof(*n) + strlen(n->key) + 1);
}

static void lookup_complete(pg_engine_t *e, pg_req_t *r, const pg_name_t *n)
{
    if (n != NULL) {
        r->publisher_ns = pg_mem_strdup(e, n->job->nspace);
        r->publisher = (pg_proc_t){ r->publisher_ns, n->rank };
    }
    pg_req_complete(e, r, n != NULL ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND,
                    n != NULL ? n->kv : NULL);
}

/* The name hooks are the host's (`pmigate proxy`): the names live there. */
static bool names_at_host(const pg_engine_t *e)
{
    return e->ops.publish != NULL;
}

/* A request the host answers through pg_name_host_done: held (no
 * deadline unless given, never blocking its requester) so that the end
 * of its job ends it. */
static pg_req_t *host_req_new(pg_engine_t *e, pg_req_kind_t kind, pg_ns_t *job, pmix_rank_t rank,
                              pg_time_t now, pg_time_t timeout)
{
    pg_req_t *r = pg_req_new(e, kind, job, rank);
    if (r == NULL)
        return NULL;
    r->name_id = e->next_id++;
    pg_req_hold(e, r, now, timeout);
    return r;
}

static pmix_status_t name_done(pg_name_cb_t cb, void *cbdata, pmix_status_t status)
{
    cb(status, cbdata);
    return PMIX_SUCCESS;
}

/* Publish and unpublish through the host: the answer comes later (or
 * inline, through pg_name_host_done). */
static pmix_status_t name_at_host(pg_engine_t *e, pg_ns_t *job, const pg_proc_t *publisher,
                                  const char *key, const pg_value_t *value, pg_name_cb_t cb,
                                  void *cbdata)
{
    pg_req_t *r = host_req_new(e, PG_REQ_NAME, job, publisher->rank, 0, 0);
    if (r == NULL)
        return name_done(cb, cbdata, PMIX_ERR_NOMEM);
    r->cb.name = cb;
    r->cbdata = cbdata;
    if (value != NULL)
        e->ops.publish(e->host_ctx, r->name_id, publisher, key, value);
    else
        e->ops.unpublish(e->host_ctx, r->name_id, publisher, key);
    pg_engine_flush(e);
    return PMIX_OPERATION_IN_PROGRESS;
}

pmix_status_t pg_publish(pg_engine_t *e, const pg_proc_t *publisher, const char *key,
                         const pg_value_t *value, pg_name_cb_t cb, void *cbdata)
{
    pmix_status_t rc;
    if (cb == NULL)
        return PMIX_ERR_BAD_PARAM;
    pg_ns_t *job = pg_ns_of(e, publisher, &rc);
    if (job == NULL)
        return name_done(cb, cbdata, rc);
    if (!pg_key_valid(key) || value == NULL)
        return name_done(cb, cbdata, PMIX_ERR_BAD_PARAM);
    if (names_at_host(e))
        return name_at_host(e, job, publisher, key, value, cb, cbdata);
    pg_name_t *n = NULL;
    HASH_FIND_STR(e->names, key, n);
    if (n != NULL)
        return name_done(cb, cbdata, PMIX_ERR_DUPLICATE_KEY);
    size_t kl = strlen(key) + 1;
    n = pg_mem_alloc(e, sizeof(*n) + kl);
    if (n == NULL || (n->kv = pg_kv_new(e, publisher->rank, PMIX_GLOBAL, value)) == NULL) {
        pg_mem_free(e, n, sizeof(*n) + kl);
        return name_done(cb, cbdata, PMIX_ERR_NOMEM);
    }
    memcpy(n->key, key, kl);
    n->job = job;
    n->rank = publisher->rank;
    HASH_ADD_STR(e->names, key, n);
    pg_req_t *r, *tmp;
    DL_FOREACH_SAFE2(e->lookups, r, tmp, wnext)
        if (strcmp(r->key, key) == 0)
            lookup_complete(e, r, n);
    cb(PMIX_SUCCESS, cbdata);
    pg_engine_flush(e);
    return PMIX_SUCCESS;
}

pmix_status_t pg_unpublish(pg_engine_t *e, const pg_proc_t *publisher, const char *key,
                           pg_name_cb_t cb, void *cbdata)
{
    pmix_status_t rc;
    if (cb == NULL)
        return PMIX_ERR_BAD_PARAM;
    pg_ns_t *job = pg_ns_of(e, publisher, &rc);
    if (job == NULL)
        return name_done(cb, cbdata, rc);
    if (key == NULL || key[0] == '\0')
        return name_done(cb, cbdata, PMIX_ERR_NOT_FOUND);
    if (names_at_host(e))
        return name_at_host(e, job, publisher, key, NULL, cb, cbdata);
    pg_name_t *n = NULL;
    HASH_FIND_STR(e->names, key, n);
    if (n == NULL)
        return name_done(cb, cbdata, PMIX_ERR_NOT_FOUND);
    if (n->job != job)
        return name_done(cb, cbdata, PMIX_ERR_NO_PERMISSIONS);
    name_free(e, n);
    return name_done(cb, cbdata, PMIX_SUCCESS);
}

/* A lookup through the host: held until it answers, and with `wait`
 * until the lookup's own timeout. */
static pmix_status_t lookup_at_host(pg_engine_t *e, pg_ns_t *job, const pg_proc_t *requester,
                                    const char *key, bool wait, pg_time_t timeout,
                                    pg_time_t now, pg_lookup_cb_t cb, void *cbdata)
{
    pg_req_t *r = host_req_new(e, PG_REQ_LOOKUP, job, requester->rank, now, wait ? timeout : 0);
    if (r == NULL || (r->key = pg_mem_strdup(e, key)) == NULL) {
        if (r != NULL) {
            r->name_id = 0;
            pg_req_complete(e, r, PMIX_ERR_NOMEM, NULL);
        } else
            cb(PMIX_ERR_NOMEM, NULL, NULL, cbdata);
        pg_engine_flush(e);
        return PMIX_SUCCESS;
    }
    r->cb.lookup = cb;
    r->cbdata = cbdata;
    e->ops.lookup(e->host_ctx, r->name_id, requester, key, wait);
    pg_engine_flush(e);
    return PMIX_OPERATION_IN_PROGRESS;
}

pmix_status_t pg_lookup(pg_engine_t *e, const pg_proc_t *requester, const char *key, bool wait,
                        pg_time_t timeout, pg_time_t now, pg_lookup_cb_t cb, void *cbdata)
{
    pmix_status_t rc;
    if (cb == NULL)
        return PMIX_ERR_BAD_PARAM;
    pg_ns_t *job = pg_ns_of(e, requester, &rc);
    if (job == NULL || key == NULL || key[0] == '\0') {
        cb(job == NULL ? rc : PMIX_ERR_BAD_PARAM, NULL, NULL, cbdata);
        return PMIX_SUCCESS;
    }
    if (names_at_host(e))
        return lookup_at_host(e, job, requester, key, wait, timeout, now, cb, cbdata);
    pg_name_t *n = NULL;
    HASH_FIND_STR(e->names, key, n);
    if (n != NULL || !wait) {
        pg_value_t v;
        pg_proc_t pub;
        if (n != NULL) {
            v = pg_kv_value(n->kv);
            pub = (pg_proc_t){ n->job->nspace, n->rank };
        }
        cb(n != NULL ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, n != NULL ? &v : NULL,
           n != NULL ? &pub : NULL, cbdata);
        return PMIX_SUCCESS;
    }
    pg_req_t *r = pg_req_new(e, PG_REQ_LOOKUP, job, requester->rank);
    if (r == NULL || (r->key = pg_mem_strdup(e, key)) == NULL) {
        if (r != NULL)
            pg_req_complete(e, r, PMIX_ERR_NOMEM, NULL);
        else
            cb(PMIX_ERR_NOMEM, NULL, NULL, cbdata);
        pg_engine_flush(e);
        return PMIX_SUCCESS;
    }
    r->cb.lookup = cb;
    r->cbdata = cbdata;
    DL_APPEND2(e->lookups, r, wprev, wnext);
    pg_req_hold(e, r, now, timeout);
    return PMIX_OPERATION_IN_PROGRESS;
}

pmix_status_t pg_name_host_done(pg_engine_t *e, uint64_t id, pmix_status_t status,
                                const pg_value_t *value, const pg_proc_t *publisher)
{
    pg_req_t *r;
    if (e == NULL || id == 0)
        return PMIX_ERR_BAD_PARAM;
    DL_FOREACH(e->held, r)
        if (r->name_id == id)
            break;
    if (r == NULL)
        return PMIX_ERR_NOT_FOUND; /* stale: timed out or its job ended */
    r->name_id = 0; /* answered: nothing to cancel */
    pg_kv_t *kv = NULL;
    if (r->kind == PG_REQ_LOOKUP && status == PMIX_SUCCESS) {
        if (value == NULL || publisher == NULL || publisher->nspace == NULL)
            status = PMIX_ERR_BAD_PARAM;
        else if ((kv = pg_kv_new(e, publisher->rank, PMIX_GLOBAL, value)) == NULL ||
                 (r->publisher_ns = pg_mem_strdup(e, publisher->nspace)) == NULL)
            status = PMIX_ERR_NOMEM;
        else
            r->publisher = (pg_proc_t){ r->publisher_ns, publisher->rank };
    }
    pg_req_complete(e, r, status, kv);
    pg_kv_free(e, kv);
    pg_engine_flush(e);
    return PMIX_SUCCESS;
}

void pg_names_drop_job(pg_engine_t *e, pg_ns_t *job)
{
    pg_name_t *n, *tmp;
    if (names_at_host(e) && e->ops.names_drop != NULL)
        e->ops.names_drop(e->host_ctx, job->nspace);
    HASH_ITER(hh, e->names, n, tmp)
        if (n->job == job)
            name_free(e, n);
}

void pg_names_free_all(pg_engine_t *e)
{
    pg_name_t *n, *tmp;
    HASH_ITER(hh, e->names, n, tmp)
        name_free(e, n);
}
