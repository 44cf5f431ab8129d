/*
 * pg_pmix_fallback: weak definitions of client calls that Open MPI 4.1's
 * mca_pmix_ext3x.so references and that libpmix's event, log and job-control
 * code defines for real where it is built in.
 *
 * Why it exists: the dynamic loader must resolve every PMIx_* symbol the
 * component names, and Open MPI's start-up registers its default event
 * handler and then waits for the registration callback (and its finalize
 * waits for the deregistration callback).  Where no real implementation is
 * linked, these keep what they can promise: handlers register (and, no
 * event being raised, are never called), job control serves the cleanup
 * registrations Open MPI needs, the rest returns PMIX_ERR_NOT_SUPPORTED (and,
 * as the Standard has it for an error return, calls no callback); what
 * succeeds calls the callback it was given, so an Open MPI rank neither
 * fails to load nor hangs.  A strong definition elsewhere in libpmix
 * replaces each of them at link time.
 */
#include "config/config.h"

#include <pmix.h>

#include <stddef.h>

#include "pmix/client/pg_pmix_compat.h"

/* Declared by the full v4 <pmix.h>; repeated so this file stands alone. */
PMIX_EXPORT pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata,
                                      const pmix_info_t directives[], size_t ndirs,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata);

#define PG_WEAK __attribute__((weak))

/* Without the event code no event is ever raised in this process, so a
 * registered handler is one that is never called: registration succeeds
 * (Open MPI's MPI_Init fails otherwise) with a fresh reference, reported
 * through the callback when the caller gave one, as the result otherwise. */
static size_t last_handler_ref;

PG_WEAK pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                                  pmix_info_t info[], size_t ninfo,
                                                  pmix_notification_fn_t evhdlr,
                                                  pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata)
{
    size_t ref;

    if (!PMIx_Initialized())
        return PMIX_ERR_INIT;
    if (evhdlr == NULL || (codes == NULL && ncodes > 0))
        return PMIX_ERR_BAD_PARAM;
    ref = __atomic_add_fetch(&last_handler_ref, 1, __ATOMIC_RELAXED);
    if (cbfunc == NULL)
        return (pmix_status_t)ref;
    cbfunc(PMIX_SUCCESS, ref, cbdata);
    return PMIX_SUCCESS;
}

PG_WEAK pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref, pmix_op_cbfunc_t cbfunc,
                                                    void *cbdata)
{
    size_t last = __atomic_load_n(&last_handler_ref, __ATOMIC_RELAXED);
    pmix_status_t rc = evhdlr_ref >= 1 && evhdlr_ref <= last ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;

    if (rc != PMIX_SUCCESS || cbfunc == NULL)
        return rc;
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

PG_WEAK pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                        pmix_data_range_t range, const pmix_info_t info[],
                                        size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

PG_WEAK pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata,
                                  const pmix_info_t directives[], size_t ndirs,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

/* Of job control, the cleanup registrations Open MPI's MPI_Init makes and
 * needs (pg_pmix_compat); the rest is not offered here. */
PG_WEAK pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                          const pmix_info_t directives[], size_t ndirs,
                                          pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    pmix_status_t rc = pg_pmix_cleanup_request(targets, ntargets, directives, ndirs);

    if (rc == PMIX_ERR_NOT_FOUND)
        return PMIX_ERR_NOT_SUPPORTED;
    if (rc == PMIX_SUCCESS && cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, NULL, 0, cbdata, NULL, NULL);
    return rc;
}
