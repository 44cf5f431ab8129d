/*
 * pg_pmix_unsupported: the <pmix.h> entry points outside pmigate's scope
 * (queries, spawn, connect/disconnect, events).
 *
 * Why it exists: a program written against OpenPMIx may reference them even
 * if it never calls them on pmigate's path; they must link, and answer
 * PMIX_ERR_NOT_SUPPORTED (the Standard's answer for an unsupported
 * operation) without calling any callback.
 */
#include <pmix.h>

pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries, pmix_info_t **results,
                              size_t *nresults)
{
    (void)queries;
    (void)nqueries;
    if (results != NULL)
        *results = NULL;
    if (nresults != NULL)
        *nresults = 0;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    (void)queries;
    (void)nqueries;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                         size_t napps, pmix_nspace_t nspace)
{
    (void)job_info;
    (void)ninfo;
    (void)apps;
    (void)napps;
    (void)nspace;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                            size_t napps, pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    (void)job_info;
    (void)ninfo;
    (void)apps;
    (void)napps;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                           size_t ninfo)
{
    (void)procs;
    (void)nprocs;
    (void)info;
    (void)ninfo;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)cbfunc;
    (void)cbdata;
    return PMIx_Connect(procs, nprocs, info, ninfo);
}

pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo)
{
    return PMIx_Connect(procs, nprocs, info, ninfo);
}

pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata)
{
    (void)cbfunc;
    (void)cbdata;
    return PMIx_Connect(procs, nprocs, info, ninfo);
}
