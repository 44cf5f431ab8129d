/*
 * pg_pmix_spawn: PMIx_Spawn / PMIx_Spawn_nb and PMIx_Connect /
 * PMIx_Disconnect (and their _nb forms) of libpmix, over the gateway's
 * spawn, connect and disconnect commands (wire/pg_pmix_msg.h).
 * Kept apart from pg_pmix_client.c, which it reaches only for the
 * connection (pg_pmix_spawn_mux).
 *
 * The gateway starts the new job in itself (a namespace of the same store,
 * docs/user-guide.md "Spawning jobs"); the reply names the namespace.  Info
 * the gateway understands: PMIX_WDIR (and the app's cwd), PMIX_PREFIX
 * (prefix/bin is searched for the command), PMIX_HOST (this host only),
 * PMIX_SET_ENVAR and the app's env ("K=V"); the rest is ignored.  Connect
 * checks that every namespace is a job of the gateway: all of them share
 * one store, so gets on a connected namespace read its keys.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "pmix/client/pg_pmix_spawn.h"
#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"

static pmix_status_t pack_app(pmix_data_buffer_t *req, const pmix_app_t *app)
{
    size_t nargv = 0, nenv = 0;
    char *cmd = app->cmd != NULL ? app->cmd : (char *)"";
    char *cwd = app->cwd != NULL ? app->cwd : (char *)"";
    int32_t maxprocs = app->maxprocs;
    pmix_status_t rc;

    while (app->argv != NULL && app->argv[nargv] != NULL)
        nargv++;
    while (app->env != NULL && app->env[nenv] != NULL)
        nenv++;
    if ((rc = pg_pmix_pack_one(req, &cmd, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_pack_array(req, app->argv, nargv, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_pack_array(req, app->env, nenv, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_pack_one(req, &cwd, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_pack_one(req, &maxprocs, PMIX_INT32)) != PMIX_SUCCESS)
        return rc;
    return pg_pmix_pack_array(req, app->info, app->info != NULL ? app->ninfo : 0, PMIX_INFO);
}

/* The request of a spawn in req (constructed here), its id in *id. */
static pmix_status_t spawn_request(pg_mux_t *mux, pmix_data_buffer_t *req, uint32_t *id,
                                   const pmix_info_t job_info[], size_t ninfo,
                                   const pmix_app_t apps[], size_t napps)
{
    uint32_t n = (uint32_t)napps;
    pmix_status_t rc;

    pg_buffer_construct(req);
    if (apps == NULL || napps == 0 || napps > 4096) {
        rc = PMIX_ERR_BAD_PARAM;
        goto fail;
    }
    rc = pg_mux_begin(mux, req, PG_PMIX_CMD_SPAWN, id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, job_info, job_info != NULL ? ninfo : 0, PMIX_INFO);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, &n, PMIX_UINT32);
    for (size_t a = 0; rc == PMIX_SUCCESS && a < napps; a++) {
        if (apps[a].cmd == NULL || apps[a].maxprocs < 1)
            rc = PMIX_ERR_BAD_PARAM;
        else
            rc = pack_app(req, &apps[a]);
    }
    if (rc == PMIX_SUCCESS)
        return PMIX_SUCCESS;
fail:
    pg_buffer_destruct(req);
    return rc;
}

/* The namespace a spawn reply names, into nspace (may be NULL). */
static pmix_status_t spawn_answer(pmix_status_t status, pmix_data_buffer_t *reply,
                                  pmix_nspace_t nspace)
{
    char *ns = NULL;

    if (status != PMIX_SUCCESS)
        return status;
    if (pg_pmix_unpack_one(reply, &ns, PMIX_STRING) != PMIX_SUCCESS || ns == NULL)
        return PMIX_ERR_UNPACK_FAILURE;
    if (nspace != NULL)
        PMIX_LOAD_NSPACE(nspace, ns);
    free(ns);
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                         size_t napps, pmix_nspace_t nspace)
{
    pg_mux_t *mux = pg_pmix_spawn_mux();
    pmix_data_buffer_t req, reply;
    pmix_status_t rc;
    uint32_t id;

    if (mux == NULL)
        return PMIX_ERR_INIT;
    if (nspace != NULL)
        nspace[0] = '\0';
    rc = spawn_request(mux, &req, &id, job_info, ninfo, apps, napps);
    if (rc != PMIX_SUCCESS)
        return rc;
    rc = spawn_answer(pg_mux_call(mux, &req, id, &reply), &reply, nspace);
    pg_buffer_destruct(&reply);
    return rc;
}

typedef struct spawn_cb {
    pmix_spawn_cbfunc_t fn;
    void *arg;
} spawn_cb_t;

static void spawn_reply(pmix_status_t status, pmix_data_buffer_t *reply, void *arg)
{
    spawn_cb_t *cb = arg;
    pmix_nspace_t ns;

    status = spawn_answer(status, reply, ns);
    if (cb->fn != NULL)
        cb->fn(status, status == PMIX_SUCCESS ? ns : NULL, cb->arg);
    free(cb);
}

pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                            size_t napps, pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    pg_mux_t *mux = pg_pmix_spawn_mux();
    pmix_data_buffer_t req;
    spawn_cb_t *cb;
    pmix_status_t rc;
    uint32_t id;

    if (mux == NULL)
        return PMIX_ERR_INIT;
    rc = spawn_request(mux, &req, &id, job_info, ninfo, apps, napps);
    if (rc != PMIX_SUCCESS)
        return rc;
    if ((cb = malloc(sizeof(*cb))) == NULL) {
        pg_buffer_destruct(&req);
        return PMIX_ERR_NOMEM;
    }
    *cb = (spawn_cb_t){ cbfunc, cbdata };
    rc = pg_mux_send_nb(mux, &req, id, spawn_reply, cb);
    if (rc != PMIX_SUCCESS)
        free(cb);
    return rc;
}

typedef struct op_cb {
    pmix_op_cbfunc_t fn;
    void *arg;
} op_cb_t;

static void op_reply(pmix_status_t status, pmix_data_buffer_t *reply, void *arg)
{
    op_cb_t *cb = arg;

    (void)reply;
    if (cb->fn != NULL)
        cb->fn(status, cb->arg);
    free(cb);
}

/* connect / disconnect: procs[], info[] -> status. */
static pmix_status_t connect_request(uint8_t cmd, const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata, bool nb)
{
    pg_mux_t *mux = pg_pmix_spawn_mux();
    pmix_data_buffer_t req, reply;
    op_cb_t *cb;
    pmix_status_t rc;
    uint32_t id;

    if (mux == NULL)
        return PMIX_ERR_INIT;
    if (procs == NULL || nprocs == 0)
        return PMIX_ERR_BAD_PARAM;
    pg_buffer_construct(&req);
    rc = pg_mux_begin(mux, &req, cmd, &id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(&req, procs, nprocs, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(&req, info, info != NULL ? ninfo : 0, PMIX_INFO);
    if (rc != PMIX_SUCCESS) {
        pg_buffer_destruct(&req);
        return rc;
    }
    if (!nb) {
        rc = pg_mux_call(mux, &req, id, &reply);
        pg_buffer_destruct(&reply);
        return rc;
    }
    if ((cb = malloc(sizeof(*cb))) == NULL) {
        pg_buffer_destruct(&req);
        return PMIX_ERR_NOMEM;
    }
    *cb = (op_cb_t){ cbfunc, cbdata };
    rc = pg_mux_send_nb(mux, &req, id, op_reply, cb);
    if (rc != PMIX_SUCCESS)
        free(cb);
    return rc;
}

pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                           size_t ninfo)
{
    return connect_request(PG_PMIX_CMD_CONNECT, procs, nprocs, info, ninfo, NULL, NULL, false);
}

pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return connect_request(PG_PMIX_CMD_CONNECT, procs, nprocs, info, ninfo, cbfunc, cbdata, true);
}

pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo)
{
    return connect_request(PG_PMIX_CMD_DISCONNECT, procs, nprocs, info, ninfo, NULL, NULL, false);
}

pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata)
{
    return connect_request(PG_PMIX_CMD_DISCONNECT, procs, nprocs, info, ninfo, cbfunc, cbdata,
                           true);
}
