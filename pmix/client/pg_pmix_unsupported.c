/*
 * pg_pmix_unsupported: the <pmix.h> entry points outside pmigate's scope
 * (queries, events).  Spawn and connect/disconnect are pg_pmix_spawn.c.
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

pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                          pmix_info_t info[], size_t ninfo,
                                          pmix_notification_fn_t evhdlr,
                                          pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata)
{
    (void)codes;
    (void)ncodes;
    (void)info;
    (void)ninfo;
    (void)evhdlr;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref, pmix_op_cbfunc_t cbfunc,
                                            void *cbdata)
{
    (void)evhdlr_ref;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)status;
    (void)source;
    (void)range;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}
