/*
 * pg_nameserv.c: publish / lookup / unpublish -- one name space for the
 * whole gateway (PMI-1 publish_name, PMI-2 name-publish, PMIx_Publish).
 *
 * Rules (hydra's, which MPICH's namepub test expects): a duplicate publish
 * is refused (PMIX_ERR_DUPLICATE_KEY), unpublishing an unknown name is
 * PMIX_ERR_NOT_FOUND, a missing name is not found at once unless the lookup
 * asks to wait.  Entries belong to the publisher's job and go away with it.
 */
#include "pmix/engine/pg_engine_int.h"

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

pmix_status_t pg_publish(pg_engine_t *e, const pg_proc_t *publisher, const char *key,
                         const pg_value_t *value)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, publisher, &rc);
    if (job == NULL)
        return rc;
    if (!pg_key_valid(key) || value == NULL)
        return PMIX_ERR_BAD_PARAM;
    pg_name_t *n = NULL;
    HASH_FIND_STR(e->names, key, n);
    if (n != NULL)
        return PMIX_ERR_DUPLICATE_KEY;
    if (e->ops.publish != NULL && (rc = e->ops.publish(e->host_ctx, publisher, key, value)) !=
                                      PMIX_SUCCESS)
        return rc;
    size_t kl = strlen(key) + 1;
    n = pg_mem_alloc(e, sizeof(*n) + kl);
    if (n == NULL || (n->kv = pg_kv_new(e, publisher->rank, PMIX_GLOBAL, value)) == NULL) {
        pg_mem_free(e, n, sizeof(*n) + kl);
        return PMIX_ERR_NOMEM;
    }
    memcpy(n->key, key, kl);
    n->job = job;
    n->rank = publisher->rank;
    HASH_ADD_STR(e->names, key, n);
    pg_req_t *r, *tmp;
    DL_FOREACH_SAFE2(e->lookups, r, tmp, wnext)
        if (strcmp(r->key, key) == 0)
            lookup_complete(e, r, n);
    pg_engine_flush(e);
    return PMIX_SUCCESS;
}

pmix_status_t pg_unpublish(pg_engine_t *e, const pg_proc_t *publisher, const char *key)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, publisher, &rc);
    if (job == NULL)
        return rc;
    pg_name_t *n = NULL;
    if (key != NULL)
        HASH_FIND_STR(e->names, key, n);
    if (n == NULL)
        return e->ops.unpublish != NULL && key != NULL
                   ? e->ops.unpublish(e->host_ctx, publisher, key)
                   : PMIX_ERR_NOT_FOUND;
    if (n->job != job)
        return PMIX_ERR_NO_PERMISSIONS;
    if (e->ops.unpublish != NULL)
        (void)e->ops.unpublish(e->host_ctx, publisher, key);
    name_free(e, n);
    return PMIX_SUCCESS;
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
    pg_name_t *n = NULL;
    HASH_FIND_STR(e->names, key, n);
    if (n == NULL && e->ops.lookup != NULL) {
        pg_value_t hv;
        pg_proc_t hpub;
        if (e->ops.lookup(e->host_ctx, key, &hv, &hpub) == PMIX_SUCCESS) {
            cb(PMIX_SUCCESS, &hv, &hpub, cbdata); /* published on another server */
            return PMIX_SUCCESS;
        }
    }
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

size_t pg_lookup_retry_host(pg_engine_t *e)
{
    pg_req_t *r, *tmp;
    size_t held = 0;
    DL_FOREACH_SAFE2(e->lookups, r, tmp, wnext) {
        pg_value_t hv;
        pg_proc_t hpub;
        if (e->ops.lookup == NULL || e->ops.lookup(e->host_ctx, r->key, &hv, &hpub) != PMIX_SUCCESS) {
            held++;
            continue;
        }
        pg_kv_t *kv = pg_kv_new(e, hpub.rank, PMIX_GLOBAL, &hv);
        r->publisher_ns = pg_mem_strdup(e, hpub.nspace);
        r->publisher = (pg_proc_t){ r->publisher_ns, hpub.rank };
        pg_req_complete(e, r, kv != NULL && r->publisher_ns != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM,
                        kv);
        if (kv != NULL)
            pg_kv_free(e, kv);
    }
    pg_engine_flush(e);
    return held;
}

void pg_names_drop_job(pg_engine_t *e, pg_ns_t *job)
{
    pg_name_t *n, *tmp;
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
