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
 *
 * The ABI-version keys are the library's own: answered here, without the
 * gateway, and -- as the Standard allows for them alone -- by the blocking
 * call before PMIx_Init, so a program can learn the ABI level before it
 * decides how to initialize.
 */
#include "config/config.h"

#include <pmix.h>

#include <stdlib.h>
#include <string.h>

#include "pmix/client/pg_pmix_client_int.h"
#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"

/* The keys this library answers itself.  pmigate's <pmix.h> is OpenPMIx
 * 4.2's ABI, which claims no version of the Standard's ABI headers: "0.0",
 * what OpenPMIx 4.2 answers too. */
static const struct {
    const char *key;
    const char *value;
} local_keys[] = {
    { PMIX_QUERY_STABLE_ABI_VERSION, "0.0" },
    { PMIX_QUERY_PROVISIONAL_ABI_VERSION, "0.0" },
};

static const char *local_answer(const char *key)
{
    for (size_t i = 0; i < sizeof(local_keys) / sizeof(local_keys[0]); i++)
        if (strcmp(key, local_keys[i].key) == 0)
            return local_keys[i].value;
    return NULL;
}

static size_t keys_count(char **keys)
{
    size_t n = 0;

    while (keys != NULL && keys[n] != NULL)
        n++;
    return n;
}

/* Every query names at least one key; qualifiers, when counted, exist.
 * *nlocal / *nremote: how many keys this library / the gateway answers. */
static pmix_status_t queries_check(const pmix_query_t *queries, size_t n, size_t *nlocal,
                                   size_t *nremote)
{
    *nlocal = *nremote = 0;
    if (queries == NULL || n == 0 || n > UINT32_MAX)
        return PMIX_ERR_BAD_PARAM;
    for (size_t i = 0; i < n; i++) {
        if (keys_count(queries[i].keys) == 0 ||
            (queries[i].qualifiers == NULL && queries[i].nqual > 0))
            return PMIX_ERR_BAD_PARAM;
        for (char **k = queries[i].keys; *k != NULL; k++) {
            if ((*k)[0] == '\0')
                return PMIX_ERR_BAD_PARAM;
            if (local_answer(*k) != NULL)
                (*nlocal)++;
            else
                (*nremote)++;
        }
    }
    return PMIX_SUCCESS;
}

/* The queries' keys the gateway answers (borrowed strings), per query;
 * queries left without keys are not sent. */
static pmix_status_t query_pack_remote(pmix_data_buffer_t *req, const pmix_query_t *queries,
                                       size_t n)
{
    uint32_t count = 0;
    pmix_status_t rc = PMIX_SUCCESS;

    for (size_t i = 0; i < n; i++)
        for (char **k = queries[i].keys; *k != NULL; k++)
            if (local_answer(*k) == NULL) {
                count++;
                break;
            }
    rc = pg_pmix_pack_one(req, &count, PMIX_UINT32);
    for (size_t i = 0; i < n && rc == PMIX_SUCCESS; i++) {
        size_t nkeys = keys_count(queries[i].keys), nremote = 0;
        char **remote = calloc(nkeys + 1, sizeof(*remote));

        if (remote == NULL)
            return PMIX_ERR_NOMEM;
        for (char **k = queries[i].keys; *k != NULL; k++)
            if (local_answer(*k) == NULL)
                remote[nremote++] = *k;
        if (nremote > 0)
            rc = pg_pmix_pack_array(req, remote, nremote, PMIX_STRING);
        if (nremote > 0 && rc == PMIX_SUCCESS)
            rc = pg_pmix_pack_array(req, queries[i].qualifiers, queries[i].nqual, PMIX_INFO);
        free(remote);
    }
    return rc;
}

static pmix_status_t query_request(const pmix_query_t *queries, size_t n,
                                   pmix_data_buffer_t *req, uint32_t *id)
{
    pmix_status_t rc;

    pg_buffer_construct(req);
    rc = pg_mux_begin(pg_client_mux(), req, PG_PMIX_CMD_QUERY, id);
    if (rc == PMIX_SUCCESS)
        rc = query_pack_remote(req, queries, n);
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

/* The answers to the keys this library answers, in query order
 * (*local: one PMIx_Info_create'd block, NULL when there are none). */
static pmix_status_t local_results(const pmix_query_t *queries, size_t nqueries, size_t nlocal,
                                   pmix_info_t **local)
{
    size_t k = 0;

    *local = NULL;
    if (nlocal == 0)
        return PMIX_SUCCESS;
    if ((*local = PMIx_Info_create(nlocal)) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t q = 0; q < nqueries; q++)
        for (char **key = queries[q].keys; *key != NULL; key++) {
            const char *value = local_answer(*key);

            if (value != NULL && k < nlocal)
                PMIX_INFO_LOAD(&(*local)[k++], *key, value, PMIX_STRING);
        }
    return PMIX_SUCCESS;
}

/* Appends the local answers (taken) to the gateway's results (*info, *n)
 * and gives the status of the whole: local keys are always answered, so a
 * gateway that found none of its keys makes the whole partial. */
static pmix_status_t results_merge(pmix_status_t status, pmix_info_t **info, size_t *n,
                                   pmix_info_t *local, size_t nlocal)
{
    pmix_info_t *all;

    if (nlocal == 0)
        return status;
    if (status != PMIX_SUCCESS && status != PMIX_ERR_PARTIAL_SUCCESS &&
        status != PMIX_ERR_NOT_FOUND) {
        PMIx_Info_free(local, nlocal); /* the request failed: no answers at all */
        return status;
    }
    if ((all = PMIx_Info_create(*n + nlocal)) == NULL) {
        PMIx_Info_free(local, nlocal);
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < *n; i++)
        (void)PMIx_Info_xfer(&all[i], &(*info)[i]);
    for (size_t i = 0; i < nlocal; i++)
        (void)PMIx_Info_xfer(&all[*n + i], &local[i]);
    pg_pmix_array_free(*info, *n, PMIX_INFO);
    PMIx_Info_free(local, nlocal);
    *info = all;
    *n += nlocal;
    return status == PMIX_ERR_NOT_FOUND ? PMIX_ERR_PARTIAL_SUCCESS : status;
}

/* A query's start, both forms: arguments checked, the local answers made,
 * the gateway's part packed into *req (*nremote 0: nothing to send). */
static pmix_status_t query_start(const pmix_query_t *queries, size_t nqueries, bool before_init,
                                 pmix_info_t **local, size_t *nlocal, size_t *nremote,
                                 pmix_data_buffer_t *req, uint32_t *id)
{
    pmix_status_t rc = queries_check(queries, nqueries, nlocal, nremote);

    *local = NULL;
    if (rc == PMIX_SUCCESS && pg_client_mux() == NULL && (*nremote > 0 || !before_init))
        rc = PMIX_ERR_INIT;
    if (rc == PMIX_SUCCESS)
        rc = local_results(queries, nqueries, *nlocal, local);
    if (rc == PMIX_SUCCESS && *nremote > 0 &&
        (rc = query_request(queries, nqueries, req, id)) != PMIX_SUCCESS) {
        PMIx_Info_free(*local, *nlocal);
        *local = NULL;
    }
    return rc;
}

pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries, pmix_info_t **results,
                              size_t *nresults)
{
    pmix_data_buffer_t req, reply;
    pmix_info_t *info = NULL, *local;
    size_t n = 0, nlocal, nremote;
    uint32_t id;
    pmix_status_t rc;

    if (results == NULL || nresults == NULL)
        return PMIX_ERR_BAD_PARAM;
    *results = NULL;
    *nresults = 0;
    /* the Standard: only the blocking form, only the local keys, before init */
    rc = query_start(queries, nqueries, true, &local, &nlocal, &nremote, &req, &id);
    if (rc != PMIX_SUCCESS)
        return rc;
    if (nremote > 0) {
        rc = pg_mux_call(pg_client_mux(), &req, id, &reply);
        rc = query_results(rc, &reply, &info, &n);
        pg_buffer_destruct(&reply);
    }
    rc = results_merge(rc, &info, &n, local, nlocal);
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
    pmix_info_t *local; /* the local keys' answers, added to the gateway's */
    size_t nlocal;
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
    status = results_merge(status, &cb->info, &cb->n, cb->local, cb->nlocal);
    cb->fn(status, cb->info, cb->n, cb->arg, query_release, cb);
}

static void query_nb_local(void *arg)
{
    query_cb_t *cb = arg;
    pmix_status_t status = results_merge(PMIX_SUCCESS, &cb->info, &cb->n, cb->local, cb->nlocal);

    cb->fn(status, cb->info, cb->n, cb->arg, query_release, cb);
}

pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    query_cb_t *cb;
    size_t nlocal, nremote;
    pmix_info_t *local;
    uint32_t id;
    pmix_status_t rc;

    if (cbfunc == NULL)
        return PMIX_ERR_BAD_PARAM; /* the results have nowhere to go */
    rc = query_start(queries, nqueries, false, &local, &nlocal, &nremote, &req, &id);
    if (rc != PMIX_SUCCESS)
        return rc;
    if ((cb = calloc(1, sizeof(*cb))) == NULL) {
        if (nremote > 0)
            pg_buffer_destruct(&req);
        PMIx_Info_free(local, nlocal);
        return PMIX_ERR_NOMEM;
    }
    *cb = (query_cb_t){ cbfunc, cbdata, NULL, 0, local, nlocal };
    /* answered here alone: still on the progress thread, never inline */
    rc = nremote > 0 ? pg_mux_send_nb(pg_client_mux(), &req, id, query_nb_reply, cb)
                     : pg_mux_defer(pg_client_mux(), query_nb_local, cb);
    if (rc != PMIX_SUCCESS) {
        PMIx_Info_free(local, nlocal);
        free(cb);
    }
    return rc;
}
