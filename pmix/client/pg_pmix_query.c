/*
 * pg_pmix_query: PMIx_Query_info and PMIx_Query_info_nb in libpmix.
 *
 * Why it exists: tools and libraries ask the system about itself -- which
 * namespaces run, how big a job is, where each process runs and as what
 * (the process table a debugger reads), what spawn or debugger attributes
 * are served.  The gateway answers from its engine
 * (pmix/server/pg_pmix_srv_query.c); this file checks the arguments, sends the queries as they
 * are and hands the results back in the Standard's form: one pmix_info_t
 * per answered key, status PMIX_SUCCESS (all answered),
 * PMIX_ERR_PARTIAL_SUCCESS (some) or PMIX_ERR_NOT_FOUND (none).
 * Nothing is cached here, so PMIX_QUERY_REFRESH_CACHE always holds.
 */
#include "config/config.h"

#include <pmix.h>

#include <stdlib.h>
#include <string.h>

#include "pmix/client/pg_pmix_client_int.h"
#include "pmix/pack/pg_pack.h"
#include "pmix/transport/pg_pmix_msg.h"

static size_t keys_count(char **keys)
{
    size_t n = 0;

    while (keys != NULL && keys[n] != NULL)
        n++;
    return n;
}

/* Every query names at least one key; qualifiers, when counted, exist. */
static pmix_status_t queries_check(const pmix_query_t *queries, size_t n)
{
    if (pg_client_mux() == NULL)
        return PMIX_ERR_INIT;
    if (queries == NULL || n == 0)
        return PMIX_ERR_BAD_PARAM;
    for (size_t i = 0; i < n; i++) {
        if (keys_count(queries[i].keys) == 0 ||
            (queries[i].qualifiers == NULL && queries[i].nqual > 0))
            return PMIX_ERR_BAD_PARAM;
        for (char **k = queries[i].keys; *k != NULL; k++)
            if ((*k)[0] == '\0')
                return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t query_request(const pmix_query_t *queries, size_t n,
                                   pmix_data_buffer_t *req, uint32_t *id)
{
    uint32_t count = (uint32_t)n;
    pmix_status_t rc = queries_check(queries, n);

    if (rc != PMIX_SUCCESS)
        return rc;
    if (n > UINT32_MAX)
        return PMIX_ERR_BAD_PARAM;
    pg_buffer_construct(req);
    rc = pg_mux_begin(pg_client_mux(), req, PG_PMIX_CMD_QUERY, id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, &count, PMIX_UINT32);
    for (size_t i = 0; i < n && rc == PMIX_SUCCESS; i++) {
        rc = pg_pmix_pack_array(req, queries[i].keys, keys_count(queries[i].keys), PMIX_STRING);
        if (rc == PMIX_SUCCESS)
            rc = pg_pmix_pack_array(req, queries[i].qualifiers, queries[i].nqual, PMIX_INFO);
    }
    if (rc != PMIX_SUCCESS)
        pg_buffer_destruct(req);
    return rc;
}

/* The reply: status, then the results (none on failure). */
static pmix_status_t query_results(pmix_status_t status, pmix_data_buffer_t *reply,
                                   pmix_info_t **info, size_t *n)
{
    *info = NULL;
    *n = 0;
    if (status != PMIX_SUCCESS && status != PMIX_ERR_PARTIAL_SUCCESS)
        return status;
    if (reply == NULL ||
        pg_pmix_unpack_array(reply, (void **)info, n, PMIX_INFO) != PMIX_SUCCESS)
        return PMIX_ERR_UNPACK_FAILURE;
    return status;
}

pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries, pmix_info_t **results,
                              size_t *nresults)
{
    pmix_data_buffer_t req, reply;
    pmix_info_t *info;
    size_t n;
    uint32_t id;
    pmix_status_t rc;

    if (results == NULL || nresults == NULL)
        return PMIX_ERR_BAD_PARAM;
    *results = NULL;
    *nresults = 0;
    rc = query_request(queries, nqueries, &req, &id);
    if (rc != PMIX_SUCCESS)
        return rc;
    rc = pg_mux_call(pg_client_mux(), &req, id, &reply);
    rc = query_results(rc, &reply, &info, &n);
    pg_buffer_destruct(&reply);
    if (n > 0) {
        /* the caller frees with PMIX_INFO_FREE: one PMIx_Info_create'd block */
        *results = PMIx_Info_create(n);
        if (*results == NULL) {
            pg_pmix_array_free(info, n, PMIX_INFO);
            return PMIX_ERR_NOMEM;
        }
        for (size_t i = 0; i < n; i++)
            (void)PMIx_Info_xfer(&(*results)[i], &info[i]);
        *nresults = n;
    }
    pg_pmix_array_free(info, n, PMIX_INFO);
    return rc;
}

typedef struct query_cb {
    pmix_info_cbfunc_t fn;
    void *arg;
    pmix_info_t *info;
    size_t n;
} query_cb_t;

/* The release_fn handed to the callback: the results were the library's. */
static void query_release(void *cbdata)
{
    query_cb_t *cb = cbdata;

    pg_pmix_array_free(cb->info, cb->n, PMIX_INFO);
    free(cb);
}

static void query_nb_reply(pmix_status_t status, pmix_data_buffer_t *reply, void *arg)
{
    query_cb_t *cb = arg;

    status = query_results(status, reply, &cb->info, &cb->n);
    cb->fn(status, cb->info, cb->n, cb->arg, query_release, cb);
}

pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    query_cb_t *cb;
    uint32_t id;
    pmix_status_t rc;

    if (cbfunc == NULL)
        return PMIX_ERR_BAD_PARAM; /* the results have nowhere to go */
    rc = query_request(queries, nqueries, &req, &id);
    if (rc != PMIX_SUCCESS)
        return rc;
    if ((cb = calloc(1, sizeof(*cb))) == NULL) {
        pg_buffer_destruct(&req);
        return PMIX_ERR_NOMEM;
    }
    cb->fn = cbfunc;
    cb->arg = cbdata;
    rc = pg_mux_send_nb(pg_client_mux(), &req, id, query_nb_reply, cb);
    if (rc != PMIX_SUCCESS)
        free(cb);
    return rc;
}
