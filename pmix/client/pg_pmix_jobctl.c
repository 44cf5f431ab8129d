/*
 * pg_pmix_jobctl: the resource-manager requests of libpmix -- job control,
 * process monitoring, allocations, credentials, fabrics.
 *
 * Why it exists: programs written for a full resource manager call these;
 * pmigate serves what a launcher of one job can do and answers the rest
 * plainly.  Cleanup registrations for the caller itself (PMIX_REGISTER_CLEANUP,
 * _DIR: Open MPI's MPI_Init makes them and waits for the answer) are served
 * here, in the process (pg_pmix_compat).  Other job control goes to the
 * gateway (pmix/server/pg_pmix_srv_jobctl.c): signals to ranks of the job,
 * the declarations of preemptibility and checkpoint methods, checkpoints;
 * so do monitoring requests and heartbeats, which the gateway watches.
 * Allocations, credentials and fabric registration answer
 * PMIX_ERR_NOT_SUPPORTED: at once from the blocking forms, through the
 * callback (on the progress thread, never inline, never a hang) from the
 * non-blocking ones.
 */
#include "config/config.h"

#include <pmix.h>

#include <stdlib.h>

#include "pmix/client/pg_pmix_api.h"
#include "pmix/client/pg_pmix_compat.h"
#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"

static void no_results(pmix_info_t **results, size_t *nresults)
{
    if (results != NULL)
        *results = NULL;
    if (nresults != NULL)
        *nresults = 0;
}

static pmix_status_t not_supported(void)
{
    return pg_pmix_ready() ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_INIT;
}

/* ---- job control ---------------------------------------------------------- */

static pmix_status_t jobctl_request(const pmix_proc_t targets[], size_t ntargets,
                                    const pmix_info_t directives[], size_t ndirs,
                                    pmix_data_buffer_t *req, uint32_t *id)
{
    pmix_status_t rc;

    if (!pg_pmix_ready())
        return PMIX_ERR_INIT;
    if ((targets == NULL && ntargets != 0) || (directives == NULL && ndirs != 0) || ndirs == 0)
        return PMIX_ERR_BAD_PARAM;
    pg_buffer_construct(req);
    rc = pg_mux_begin(pg_pmix_mux(), req, PG_PMIX_CMD_JOB_CONTROL, id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, targets, ntargets, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, directives, ndirs, PMIX_INFO);
    if (rc != PMIX_SUCCESS)
        pg_buffer_destruct(req);
    return rc;
}

pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                               const pmix_info_t directives[], size_t ndirs,
                               pmix_info_t **results, size_t *nresults)
{
    pmix_data_buffer_t req, reply;
    uint32_t id;
    pmix_status_t rc;

    no_results(results, nresults);
    if (!pg_pmix_ready())
        return PMIX_ERR_INIT;
    rc = pg_pmix_cleanup_request(targets, ntargets, directives, ndirs);
    if (rc != PMIX_ERR_NOT_FOUND)
        return rc; /* a cleanup registration, served here */
    rc = jobctl_request(targets, ntargets, directives, ndirs, &req, &id);
    if (rc != PMIX_SUCCESS)
        return rc;
    rc = pg_mux_call(pg_pmix_mux(), &req, id, &reply);
    pg_buffer_destruct(&reply);
    return rc;
}

pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                  const pmix_info_t directives[], size_t ndirs,
                                  pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc;

    if (!pg_pmix_ready())
        return PMIX_ERR_INIT;
    rc = pg_pmix_cleanup_request(targets, ntargets, directives, ndirs);
    if (rc == PMIX_SUCCESS)
        return cbfunc != NULL ? pg_pmix_defer_info(cbfunc, cbdata, PMIX_SUCCESS) : PMIX_SUCCESS;
    if (rc != PMIX_ERR_NOT_FOUND)
        return rc;
    rc = jobctl_request(targets, ntargets, directives, ndirs, &req, &id);
    return rc == PMIX_SUCCESS ? pg_pmix_send_status_nb(&req, id, NULL, cbfunc, cbdata) : rc;
}

/* ---- process monitoring ---------------------------------------------------- */

/* `in` as it travels: a "void" attribute (PMIX_MONITOR_HEARTBEAT,
 * PMIX_SEND_HEARTBEAT: loaded as a NULL pointer, their presence is their
 * meaning) becomes boolean true; a pointer means nothing to the gateway. */
static void info_for_wire(const pmix_info_t *in, pmix_info_t *out)
{
    *out = *in; /* shallow: packed, never freed */
    if (in->value.type == PMIX_POINTER || in->value.type == PMIX_UNDEF) {
        out->value.type = PMIX_BOOL;
        out->value.data.flag = true;
    }
}

/* INFO monitor, STATUS code, directives[] */
static pmix_status_t monitor_request(const pmix_info_t *monitor, pmix_status_t error,
                                     const pmix_info_t directives[], size_t ndirs,
                                     pmix_data_buffer_t *req, uint32_t *id)
{
    pmix_info_t m, *dirs = NULL;
    pmix_status_t rc;

    if (!pg_pmix_ready())
        return PMIX_ERR_INIT;
    if (monitor == NULL || (directives == NULL && ndirs != 0))
        return PMIX_ERR_BAD_PARAM;
    if (ndirs > 0 && (dirs = calloc(ndirs, sizeof(*dirs))) == NULL)
        return PMIX_ERR_NOMEM;
    info_for_wire(monitor, &m);
    for (size_t i = 0; i < ndirs; i++)
        info_for_wire(&directives[i], &dirs[i]);
    pg_buffer_construct(req);
    rc = pg_mux_begin(pg_pmix_mux(), req, PG_PMIX_CMD_MONITOR, id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, &m, PMIX_INFO);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, &error, PMIX_STATUS);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, dirs, ndirs, PMIX_INFO);
    free(dirs);
    if (rc != PMIX_SUCCESS)
        pg_buffer_destruct(req);
    return rc;
}

/* The gateway watches the process (heartbeats, a file) and alerts; see
 * pmix/server/pg_pmix_srv_jobctl.c.  No measured values: results stay
 * empty. */
pmix_status_t PMIx_Process_monitor(const pmix_info_t *monitor, pmix_status_t error,
                                   const pmix_info_t directives[], size_t ndirs,
                                   pmix_info_t **results, size_t *nresults)
{
    pmix_data_buffer_t req, reply;
    uint32_t id;
    pmix_status_t rc;

    no_results(results, nresults);
    rc = monitor_request(monitor, error, directives, ndirs, &req, &id);
    if (rc != PMIX_SUCCESS)
        return rc;
    rc = pg_mux_call(pg_pmix_mux(), &req, id, &reply);
    pg_buffer_destruct(&reply);
    return rc;
}

/* PMIx_Heartbeat() comes here without a callback: the beat is sent, its
 * answer read and dropped. */
pmix_status_t PMIx_Process_monitor_nb(const pmix_info_t *monitor, pmix_status_t error,
                                      const pmix_info_t directives[], size_t ndirs,
                                      pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = monitor_request(monitor, error, directives, ndirs, &req, &id);

    return rc == PMIX_SUCCESS ? pg_pmix_send_status_nb(&req, id, NULL, cbfunc, cbdata) : rc;
}

/* ---- allocations: not offered ------------------------------------------------ */

pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive, pmix_info_t *info,
                                      size_t ninfo, pmix_info_t **results, size_t *nresults)
{
    (void)directive, (void)info, (void)ninfo;
    no_results(results, nresults);
    return not_supported();
}

pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive, pmix_info_t *info,
                                         size_t ninfo, pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    (void)directive, (void)info, (void)ninfo;
    return pg_pmix_defer_info(cbfunc, cbdata, PMIX_ERR_NOT_SUPPORTED);
}

/* ---- credentials: pmigate's socket is the credential (SO_PEERCRED) -------- */

pmix_status_t PMIx_Get_credential(const pmix_info_t info[], size_t ninfo,
                                  pmix_byte_object_t *credential)
{
    (void)info, (void)ninfo;
    if (credential != NULL)
        PMIX_BYTE_OBJECT_CONSTRUCT(credential);
    return not_supported();
}

typedef struct cred_nb {
    pmix_credential_cbfunc_t cred;
    pmix_validation_cbfunc_t valid;
    void *cbdata;
} cred_nb_t;

static void cred_nb_run(pmix_status_t status, void *arg)
{
    cred_nb_t *c = arg;

    if (c->cred != NULL)
        c->cred(status, NULL, NULL, 0, c->cbdata);
    else if (c->valid != NULL)
        c->valid(status, NULL, 0, c->cbdata);
    free(c);
}

static pmix_status_t cred_nb_refuse(pmix_credential_cbfunc_t cred, pmix_validation_cbfunc_t valid,
                                    void *cbdata)
{
    cred_nb_t *c = calloc(1, sizeof(*c));
    pmix_status_t rc;

    if (c == NULL)
        return PMIX_ERR_NOMEM;
    *c = (cred_nb_t){ cred, valid, cbdata };
    rc = pg_pmix_defer_op(cred_nb_run, c, PMIX_ERR_NOT_SUPPORTED);
    if (rc != PMIX_SUCCESS)
        free(c);
    return rc;
}

pmix_status_t PMIx_Get_credential_nb(const pmix_info_t info[], size_t ninfo,
                                     pmix_credential_cbfunc_t cbfunc, void *cbdata)
{
    (void)info, (void)ninfo;
    return cred_nb_refuse(cbfunc, NULL, cbdata);
}

pmix_status_t PMIx_Validate_credential(const pmix_byte_object_t *cred, const pmix_info_t info[],
                                       size_t ninfo, pmix_info_t **results, size_t *nresults)
{
    (void)cred, (void)info, (void)ninfo;
    no_results(results, nresults);
    return not_supported();
}

pmix_status_t PMIx_Validate_credential_nb(const pmix_byte_object_t *cred,
                                          const pmix_info_t info[], size_t ninfo,
                                          pmix_validation_cbfunc_t cbfunc, void *cbdata)
{
    (void)cred, (void)info, (void)ninfo;
    return cred_nb_refuse(NULL, cbfunc, cbdata);
}

/* ---- fabrics: pmigate knows no fabric manager ------------------------------ */

pmix_status_t PMIx_Fabric_register(pmix_fabric_t *fabric, const pmix_info_t directives[],
                                   size_t ndirs)
{
    (void)fabric, (void)directives, (void)ndirs;
    return not_supported();
}

pmix_status_t PMIx_Fabric_register_nb(pmix_fabric_t *fabric, const pmix_info_t directives[],
                                      size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)fabric, (void)directives, (void)ndirs;
    return pg_pmix_defer_op(cbfunc, cbdata, PMIX_ERR_NOT_SUPPORTED);
}

pmix_status_t PMIx_Fabric_update(pmix_fabric_t *fabric)
{
    (void)fabric;
    return not_supported();
}

pmix_status_t PMIx_Fabric_update_nb(pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)fabric;
    return pg_pmix_defer_op(cbfunc, cbdata, PMIX_ERR_NOT_SUPPORTED);
}

pmix_status_t PMIx_Fabric_deregister(pmix_fabric_t *fabric)
{
    (void)fabric;
    return not_supported();
}

pmix_status_t PMIx_Fabric_deregister_nb(pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc,
                                        void *cbdata)
{
    (void)fabric;
    return pg_pmix_defer_op(cbfunc, cbdata, PMIX_ERR_NOT_SUPPORTED);
}
