/*
 * pg_pmix_group: PMIx_Group_* of libpmix.
 *
 * Why it exists: groups let a set of processes agree on a name (and a
 * context id, which MPI uses for communicators) collectively.  The gateway
 * runs the collective in its engine (pmix/engine/pg_group.c): construct and
 * destruct are requests answered when every member has joined, or with an
 * error when one was lost (never a hang).  Invite/join/leave are built on
 * event notification in the Standard (the invited learn of it through an
 * event); pmigate's groups are the collective form only, so those answer
 * PMIX_ERR_NOT_SUPPORTED through their callback.
 *
 * Results of construct: PMIX_GROUP_CONTEXT_ID (size_t) when the caller
 * passed PMIX_GROUP_ASSIGN_CONTEXT_ID; released with PMIX_INFO_FREE.
 */
#include "config/config.h"

#include <pmix.h>

#include <stdlib.h>
#include <string.h>

#include "pmix/client/pg_pmix_api.h"
#include "pmix/pack/pg_pack.h"
#include "pmix/transport/pg_pmix_msg.h"

static bool directive_true(const pmix_info_t info[], size_t n, const char *key)
{
    for (size_t i = 0; info != NULL && i < n; i++)
        if (PMIX_CHECK_KEY(&info[i], key))
            return PMIx_Info_true(&info[i]);
    return false;
}

static bool grp_ok(const char *grp)
{
    return grp != NULL && grp[0] != '\0' && strlen(grp) <= PMIX_MAX_NSLEN;
}

/* grp, procs[], info[] (construct) or grp, info[] (destruct). */
static pmix_status_t group_request(uint8_t cmd, const char *grp, const pmix_proc_t procs[],
                                   size_t nprocs, const pmix_info_t info[], size_t ninfo,
                                   pmix_data_buffer_t *req, uint32_t *id)
{
    pmix_status_t rc;

    if (!pg_pmix_ready())
        return PMIX_ERR_INIT;
    if (!grp_ok(grp) || (cmd == PG_PMIX_CMD_GROUP_CONSTRUCT && (procs == NULL || nprocs == 0)) ||
        (info == NULL && ninfo != 0))
        return PMIX_ERR_BAD_PARAM;
    pg_buffer_construct(req);
    rc = pg_mux_begin(pg_pmix_mux(), req, cmd, id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, &grp, PMIX_STRING);
    if (rc == PMIX_SUCCESS && cmd == PG_PMIX_CMD_GROUP_CONSTRUCT)
        rc = pg_pmix_pack_array(req, procs, nprocs, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, info, info != NULL ? ninfo : 0, PMIX_INFO);
    if (rc != PMIX_SUCCESS)
        pg_buffer_destruct(req);
    return rc;
}

/* The construct results from a successful reply (positioned at the id). */
static pmix_status_t construct_results(pmix_data_buffer_t *reply, bool want_cid,
                                       pmix_info_t **results, size_t *nresults)
{
    size_t cid = 0;
    pmix_status_t rc = pg_pmix_unpack_one(reply, &cid, PMIX_SIZE);

    *results = NULL;
    *nresults = 0;
    if (rc != PMIX_SUCCESS || !want_cid)
        return rc;
    if ((*results = PMIx_Info_create(1)) == NULL)
        return PMIX_ERR_NOMEM;
    PMIX_INFO_LOAD(&(*results)[0], PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE);
    *nresults = 1;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Group_construct(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t directives[], size_t ndirs,
                                   pmix_info_t **results, size_t *nresults)
{
    pmix_data_buffer_t req, reply;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    uint32_t id;
    pmix_status_t rc = group_request(PG_PMIX_CMD_GROUP_CONSTRUCT, grp, procs, nprocs,
                                     directives, ndirs, &req, &id);

    if (rc != PMIX_SUCCESS)
        return rc;
    rc = pg_mux_call(pg_pmix_mux(), &req, id, &reply);
    if (rc == PMIX_SUCCESS)
        rc = construct_results(&reply, directive_true(directives, ndirs,
                                                      PMIX_GROUP_ASSIGN_CONTEXT_ID),
                               &res, &nres);
    pg_buffer_destruct(&reply);
    if (results != NULL && nresults != NULL) {
        *results = res;
        *nresults = nres;
    } else {
        PMIX_INFO_FREE(res, nres);
    }
    return rc;
}

/* Non-blocking construct: the results travel to the callback and are
 * freed by the release function it is given. */
typedef struct group_nb {
    pmix_info_cbfunc_t cb;
    void *cbdata;
    bool want_cid;
    pmix_info_t *results;
    size_t nresults;
} group_nb_t;

static void group_nb_release(void *arg)
{
    group_nb_t *g = arg;

    PMIX_INFO_FREE(g->results, g->nresults);
    free(g);
}

static void group_nb_reply(pmix_status_t status, pmix_data_buffer_t *reply, void *arg)
{
    group_nb_t *g = arg;

    if (status == PMIX_SUCCESS && reply != NULL)
        status = construct_results(reply, g->want_cid, &g->results, &g->nresults);
    if (g->cb == NULL) {
        group_nb_release(g);
        return;
    }
    g->cb(status, g->results, g->nresults, g->cbdata, group_nb_release, g);
}

pmix_status_t PMIx_Group_construct_nb(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    uint32_t id;
    group_nb_t *g;
    pmix_status_t rc = group_request(PG_PMIX_CMD_GROUP_CONSTRUCT, grp, procs, nprocs, info,
                                     ninfo, &req, &id);

    if (rc != PMIX_SUCCESS)
        return rc;
    if ((g = calloc(1, sizeof(*g))) == NULL) {
        pg_buffer_destruct(&req);
        return PMIX_ERR_NOMEM;
    }
    g->cb = cbfunc;
    g->cbdata = cbdata;
    g->want_cid = directive_true(info, ninfo, PMIX_GROUP_ASSIGN_CONTEXT_ID);
    rc = pg_mux_send_nb(pg_pmix_mux(), &req, id, group_nb_reply, g);
    if (rc != PMIX_SUCCESS)
        free(g);
    return rc;
}

pmix_status_t PMIx_Group_destruct(const char grp[], const pmix_info_t info[], size_t ninfo)
{
    pmix_data_buffer_t req, reply;
    uint32_t id;
    pmix_status_t rc = group_request(PG_PMIX_CMD_GROUP_DESTRUCT, grp, NULL, 0, info, ninfo,
                                     &req, &id);

    if (rc != PMIX_SUCCESS)
        return rc;
    rc = pg_mux_call(pg_pmix_mux(), &req, id, &reply);
    pg_buffer_destruct(&reply);
    return rc;
}

pmix_status_t PMIx_Group_destruct_nb(const char grp[], const pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = group_request(PG_PMIX_CMD_GROUP_DESTRUCT, grp, NULL, 0, info, ninfo,
                                     &req, &id);

    return rc == PMIX_SUCCESS ? pg_pmix_send_status_nb(&req, id, cbfunc, NULL, cbdata) : rc;
}

/* ---- the event-driven forms: not offered (see the top of the file) ---- */

static pmix_status_t no_results(pmix_info_t **results, size_t *nresults)
{
    if (results != NULL)
        *results = NULL;
    if (nresults != NULL)
        *nresults = 0;
    return pg_pmix_ready() ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_INIT;
}

pmix_status_t PMIx_Group_invite(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                const pmix_info_t info[], size_t ninfo, pmix_info_t **results,
                                size_t *nresult)
{
    (void)grp, (void)procs, (void)nprocs, (void)info, (void)ninfo;
    return no_results(results, nresult);
}

pmix_status_t PMIx_Group_invite_nb(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t info[], size_t ninfo,
                                   pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    (void)grp, (void)procs, (void)nprocs, (void)info, (void)ninfo;
    return pg_pmix_defer_info(cbfunc, cbdata, PMIX_ERR_NOT_SUPPORTED);
}

pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t *leader, pmix_group_opt_t opt,
                              const pmix_info_t info[], size_t ninfo, pmix_info_t **results,
                              size_t *nresult)
{
    (void)grp, (void)leader, (void)opt, (void)info, (void)ninfo;
    return no_results(results, nresult);
}

pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t *leader,
                                 pmix_group_opt_t opt, const pmix_info_t info[], size_t ninfo,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    (void)grp, (void)leader, (void)opt, (void)info, (void)ninfo;
    return pg_pmix_defer_info(cbfunc, cbdata, PMIX_ERR_NOT_SUPPORTED);
}

pmix_status_t PMIx_Group_leave(const char grp[], const pmix_info_t info[], size_t ninfo)
{
    (void)grp, (void)info, (void)ninfo;
    return no_results(NULL, NULL);
}

pmix_status_t PMIx_Group_leave_nb(const char grp[], const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)grp, (void)info, (void)ninfo;
    return pg_pmix_defer_op(cbfunc, cbdata, PMIX_ERR_NOT_SUPPORTED);
}
