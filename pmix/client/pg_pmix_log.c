/*
 * pg_pmix_log: PMIx_Log and PMIx_Log_nb in libpmix.
 *
 * Why it exists: a process reports something to "the system log" through
 * its resource manager.  Under pmigate that is pmigate's own stdout or
 * stderr (PMIX_LOG_STDOUT / PMIX_LOG_STDERR: a whole "pmigate: rank N
 * logged: ..." line, the rank's text escaped like an abort message, never
 * mixed with the ranks' output), the node's syslog (PMIX_LOG_SYSLOG,
 * PMIX_LOG_LOCAL_SYSLOG; priority PMIX_LOG_SYSLOG_PRI), and the trace when
 * the job is traced (the request is a frame like any other).  The
 * gateway decides which channels it serves (pmix/server/pg_pmix_srv_log.c);
 * a request naming only other channels (email, global syslog, job
 * record...) answers PMIX_ERR_NOT_SUPPORTED, one naming some of each
 * PMIX_ERR_PARTIAL_SUCCESS (PMIX_LOG_ONCE: success once one channel took
 * it).  PMIX_LOG_TIMESTAMP /
 * PMIX_LOG_GENERATE_TIMESTAMP put the time in front of the text.
 */
#include "config/config.h"

#include <pmix.h>

#include "pmix/client/pg_pmix_client_int.h"
#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"

static pmix_status_t log_request(const pmix_info_t data[], size_t ndata,
                                 const pmix_info_t directives[], size_t ndirs,
                                 pmix_data_buffer_t *req, uint32_t *id)
{
    pmix_status_t rc;

    if (pg_client_mux() == NULL)
        return PMIX_ERR_INIT;
    if (data == NULL || ndata == 0 || (directives == NULL && ndirs > 0))
        return PMIX_ERR_BAD_PARAM;
    pg_buffer_construct(req);
    rc = pg_mux_begin(pg_client_mux(), req, PG_PMIX_CMD_LOG, id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, data, ndata, PMIX_INFO);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, directives, ndirs, PMIX_INFO);
    if (rc != PMIX_SUCCESS)
        pg_buffer_destruct(req);
    return rc;
}

pmix_status_t PMIx_Log(const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
                       size_t ndirs)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = log_request(data, ndata, directives, ndirs, &req, &id);

    return rc == PMIX_SUCCESS ? pg_client_call_status(&req, id) : rc;
}

pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
                          size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = log_request(data, ndata, directives, ndirs, &req, &id);

    return rc == PMIX_SUCCESS ? pg_client_send_op_nb(&req, id, cbfunc, cbdata) : rc;
}
