/*
 * pg_pmix_group: PMIx_Group_* of libpmix.
 *
 * Why it exists: groups let a set of processes agree on a name (and a
 * context id, which MPI uses for communicators) collectively.  The gateway
 * runs the collective in its engine (engine/pg_group.c): construct and
 * destruct are requests answered when every member has joined, or with an
 * error when one was lost (never a hang).
 *
 * The invite form: PMIx_Group_invite asks the gateway to invite processes;
 * they learn of it by the PMIX_GROUP_INVITED event (PMIX_GROUP_ID, the
 * leader as source) and answer with PMIx_Group_join, which the leader hears
 * as PMIX_GROUP_INVITE_ACCEPTED / _DECLINED.  The gateway counts the
 * answers, so the invite (and every accepter's join) is one request
 * answered when all invitees answered -- PMIX_SUCCESS, or
 * PMIX_ERR_PARTIAL_SUCCESS to the leader when some declined -- or when the
 * invite failed (PMIX_GROUP_INVITE_FAILED: an invitee was lost; PMIX_ERR_TIMEOUT
 * under PMIX_TIMEOUT).  A decline is answered at once.  PMIx_Group_leave
 * is answered at once; the other members hear PMIX_GROUP_LEFT.
 *
 * Results (released with PMIX_INFO_FREE): construct and invite give
 * PMIX_GROUP_CONTEXT_ID (size_t) when the caller passed
 * PMIX_GROUP_ASSIGN_CONTEXT_ID; invite and an accepted join give
 * PMIX_GROUP_MEMBERSHIP (a data array of pmix_proc_t: the leader and the
 * accepters), and the join the context id too (the leader chose whether
 * one was wanted; pmigate always assigns one).
 *
 * What members share at construct (the infos of PMIX_GROUP_INFO, and
 * PMIX_GROUP_LOCAL_CID) comes back in every member's answer; it is kept
 * here, by context id and member, for PMIx_Get: the poster's proc with
 * the PMIX_GROUP_CONTEXT_ID qualifier (OpenPMIx's way), or for
 * PMIX_GROUP_LOCAL_CID without it (the Standard's), the newest group's.
 */
#include "config/config.h"

#include <pmix.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pmix/client/pg_pmix_api.h"
#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"

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

/* A join's answer, sent after the group's name. */
typedef struct join_args {
    pmix_proc_t leader; /* nspace "", rank UNDEF: whoever invited */
    bool accept;
} join_args_t;

static bool takes_procs(uint8_t cmd)
{
    return cmd == PG_PMIX_CMD_GROUP_CONSTRUCT || cmd == PG_PMIX_CMD_GROUP_INVITE;
}

/* grp, then procs[] (construct, invite) or the join's answer (join),
 * then info[]. */
static pmix_status_t group_request(uint8_t cmd, const char *grp, const pmix_proc_t procs[],
                                   size_t nprocs, const join_args_t *join,
                                   const pmix_info_t info[], size_t ninfo,
                                   pmix_data_buffer_t *req, uint32_t *id)
{
    pmix_status_t rc;

    if (!pg_pmix_ready())
        return PMIX_ERR_INIT;
    if (!grp_ok(grp) || (takes_procs(cmd) && (procs == NULL || nprocs == 0)) ||
        (info == NULL && ninfo != 0))
        return PMIX_ERR_BAD_PARAM;
    pg_buffer_construct(req);
    rc = pg_mux_begin(pg_pmix_mux(), req, cmd, id);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(req, &grp, PMIX_STRING);
    if (rc == PMIX_SUCCESS && takes_procs(cmd))
        rc = pg_pmix_pack_array(req, procs, nprocs, PMIX_PROC);
    if (rc == PMIX_SUCCESS && join != NULL)
        rc = pg_pmix_pack_one(req, &join->leader, PMIX_PROC);
    if (rc == PMIX_SUCCESS && join != NULL)
        rc = pg_pmix_pack_one(req, &join->accept, PMIX_BOOL);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(req, info, info != NULL ? ninfo : 0, PMIX_INFO);
    if (rc != PMIX_SUCCESS)
        pg_buffer_destruct(req);
    return rc;
}

/* Which results a reply that made a group turns into. */
typedef struct results_want {
    bool cid;     /* PMIX_GROUP_CONTEXT_ID */
    bool members; /* the reply names the members: PMIX_GROUP_MEMBERSHIP */
    bool shared;  /* the reply carries what the members shared (construct) */
} results_want_t;

/* ---- what members shared at construct ------------------------------------ */

typedef struct shared_entry {
    struct shared_entry *next;
    size_t cid;
    pmix_proc_t proc;
    pmix_info_t *info;
    size_t ninfo;
} shared_entry_t;

/* Newest first.  Kept until PMIx_Finalize, as OpenPMIx keeps them: a
 * program reads them after the group is gone (group_lcl_cid does). */
static struct {
    pthread_mutex_t lock;
    shared_entry_t *head;
} shared = { PTHREAD_MUTEX_INITIALIZER, NULL };

static void shared_entry_free(shared_entry_t *e)
{
    pg_pmix_array_free(e->info, e->ninfo, PMIX_INFO);
    free(e);
}

/* One member's share: its proc, then its infos packed in a byte object. */
static pmix_status_t shared_take_one(pmix_data_buffer_t *reply, size_t cid,
                                     shared_entry_t **out)
{
    shared_entry_t *e = calloc(1, sizeof(*e));
    pmix_byte_object_t bo = { NULL, 0 };
    pmix_data_buffer_t view;
    pmix_status_t rc;

    if (e == NULL)
        return PMIX_ERR_NOMEM;
    e->cid = cid;
    rc = pg_pmix_unpack_one(reply, &e->proc, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_unpack_one(reply, &bo, PMIX_BYTE_OBJECT);
    if (rc == PMIX_SUCCESS) {
        pg_pmix_msg_view(&view, bo.bytes, bo.size);
        rc = pg_pmix_unpack_array(&view, (void **)&e->info, &e->ninfo, PMIX_INFO);
    }
    free(bo.bytes);
    if (rc != PMIX_SUCCESS) {
        free(e);
        return rc;
    }
    *out = e;
    return PMIX_SUCCESS;
}

/* Reads what the members shared (a count, then one share per member) and
 * keeps it under the group's context id. */
static pmix_status_t shared_take(pmix_data_buffer_t *reply, size_t cid)
{
    uint32_t count = 0;
    shared_entry_t *got = NULL, *e;
    pmix_status_t rc = pg_pmix_unpack_one(reply, &count, PMIX_UINT32);

    for (uint32_t i = 0; i < count && rc == PMIX_SUCCESS; i++)
        if ((rc = shared_take_one(reply, cid, &e)) == PMIX_SUCCESS) {
            e->next = got;
            got = e;
        }
    if (rc != PMIX_SUCCESS) {
        while ((e = got) != NULL) {
            got = e->next;
            shared_entry_free(e);
        }
        return rc;
    }
    pthread_mutex_lock(&shared.lock);
    while ((e = got) != NULL) {
        got = e->next;
        e->next = shared.head;
        shared.head = e;
    }
    pthread_mutex_unlock(&shared.lock);
    return PMIX_SUCCESS;
}

static bool shared_matches(const shared_entry_t *e, const pmix_proc_t *proc, bool by_cid,
                           size_t cid)
{
    return (!by_cid || e->cid == cid) && PMIX_CHECK_NSPACE(e->proc.nspace, proc->nspace) &&
           (proc->rank == PMIX_RANK_UNDEF || e->proc.rank == proc->rank);
}

pmix_status_t pg_pmix_group_shared_get(const pmix_proc_t *proc, const char *key, bool by_cid,
                                       size_t cid, pmix_value_t **val)
{
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;

    *val = NULL;
    pthread_mutex_lock(&shared.lock);
    for (shared_entry_t *e = shared.head; e != NULL && rc == PMIX_ERR_NOT_FOUND; e = e->next) {
        if (!shared_matches(e, proc, by_cid, cid))
            continue;
        for (size_t i = 0; i < e->ninfo; i++)
            if (PMIX_CHECK_KEY(&e->info[i], key)) {
                rc = (*val = PMIx_Value_create(1)) == NULL
                         ? PMIX_ERR_NOMEM
                         : PMIx_Value_xfer(*val, &e->info[i].value);
                break;
            }
    }
    pthread_mutex_unlock(&shared.lock);
    if (rc != PMIX_SUCCESS && *val != NULL) {
        PMIX_VALUE_RELEASE(*val);
        *val = NULL;
    }
    return rc;
}

void pg_pmix_group_shared_clear(void)
{
    shared_entry_t *e;

    pthread_mutex_lock(&shared.lock);
    while ((e = shared.head) != NULL) {
        shared.head = e->next;
        shared_entry_free(e);
    }
    pthread_mutex_unlock(&shared.lock);
}

static bool made_group(pmix_status_t status, const pmix_data_buffer_t *reply)
{
    return (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS) && reply != NULL &&
           reply->unpack_ptr != NULL && reply->unpack_ptr < reply->base_ptr + reply->bytes_used;
}

/* PMIX_GROUP_MEMBERSHIP from the members the reply names. */
static pmix_status_t load_members(pmix_data_buffer_t *reply, pmix_info_t *info)
{
    pmix_proc_t *procs = NULL;
    size_t n = 0;
    pmix_status_t rc = pg_pmix_unpack_array(reply, (void **)&procs, &n, PMIX_PROC);
    pmix_data_array_t *darray = NULL;

    if (rc == PMIX_SUCCESS && (darray = PMIx_Data_array_create(n, PMIX_PROC)) == NULL)
        rc = PMIX_ERR_NOMEM;
    if (rc == PMIX_SUCCESS) {
        if (n > 0)
            memcpy(darray->array, procs, n * sizeof(*procs));
        PMIX_LOAD_KEY(info->key, PMIX_GROUP_MEMBERSHIP);
        info->value.type = PMIX_DATA_ARRAY;
        info->value.data.darray = darray;
    }
    pg_pmix_array_free(procs, n, PMIX_PROC);
    return rc;
}

/* The results of a reply (positioned after the status): nothing unless
 * it made the caller a member, then the context id and the members as
 * wanted. */
static pmix_status_t group_results(pmix_status_t status, pmix_data_buffer_t *reply,
                                   results_want_t want, pmix_info_t **results,
                                   size_t *nresults)
{
    size_t cid = 0, n = 0;
    pmix_status_t rc;

    *results = NULL;
    *nresults = 0;
    if (!made_group(status, reply))
        return status;
    rc = pg_pmix_unpack_one(reply, &cid, PMIX_SIZE);
    if (rc == PMIX_SUCCESS && want.shared)
        rc = shared_take(reply, cid);
    /* context id 0: a decline, which makes the caller no member */
    if (rc != PMIX_SUCCESS || cid == 0 || (!want.cid && !want.members))
        return rc != PMIX_SUCCESS ? rc : status;
    if ((*results = PMIx_Info_create(2)) == NULL)
        return PMIX_ERR_NOMEM;
    if (want.cid)
        PMIX_INFO_LOAD(&(*results)[n++], PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE);
    if (want.members && (rc = load_members(reply, &(*results)[n])) == PMIX_SUCCESS)
        n++;
    *nresults = n;
    return rc != PMIX_SUCCESS ? rc : status;
}

/* Sends a group request and waits; the results go to the caller's
 * pointers (or are freed when it passed none). */
static pmix_status_t group_call(pmix_data_buffer_t *req, uint32_t id, results_want_t want,
                                pmix_info_t **results, size_t *nresults)
{
    pmix_data_buffer_t reply;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc = pg_mux_call(pg_pmix_mux(), req, id, &reply);

    rc = group_results(rc, &reply, want, &res, &nres);
    pg_buffer_destruct(&reply);
    if (results != NULL && nresults != NULL) {
        *results = res;
        *nresults = nres;
    } else {
        PMIX_INFO_FREE(res, nres);
    }
    return rc;
}

/* Non-blocking forms: the results travel to the callback and are freed by
 * the release function it is given. */
typedef struct group_nb {
    pmix_info_cbfunc_t cb;
    void *cbdata;
    results_want_t want;
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

    status = group_results(status, reply, g->want, &g->results, &g->nresults);
    if (g->cb == NULL) {
        group_nb_release(g);
        return;
    }
    g->cb(status, g->results, g->nresults, g->cbdata, group_nb_release, g);
}

static pmix_status_t group_send_nb(pmix_data_buffer_t *req, uint32_t id, results_want_t want,
                                   pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    group_nb_t *g = calloc(1, sizeof(*g));
    pmix_status_t rc;

    if (g == NULL) {
        pg_buffer_destruct(req);
        return PMIX_ERR_NOMEM;
    }
    g->cb = cbfunc;
    g->cbdata = cbdata;
    g->want = want;
    rc = pg_mux_send_nb(pg_pmix_mux(), req, id, group_nb_reply, g);
    if (rc != PMIX_SUCCESS)
        free(g);
    return rc;
}

/* One group call: the request built, then sent and answered (blocking),
 * or sent with its reply going to an info or an op callback. */
static pmix_status_t group_run(uint8_t cmd, const char *grp, const pmix_proc_t procs[],
                               size_t nprocs, const join_args_t *join, const pmix_info_t info[],
                               size_t ninfo, results_want_t want, pmix_info_t **results,
                               size_t *nresults)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = group_request(cmd, grp, procs, nprocs, join, info, ninfo, &req, &id);

    if (rc == PMIX_SUCCESS)
        return group_call(&req, id, want, results, nresults);
    if (results != NULL && nresults != NULL) {
        *results = NULL;
        *nresults = 0;
    }
    return rc;
}

static pmix_status_t group_run_nb(uint8_t cmd, const char *grp, const pmix_proc_t procs[],
                                  size_t nprocs, const join_args_t *join,
                                  const pmix_info_t info[], size_t ninfo, results_want_t want,
                                  pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = group_request(cmd, grp, procs, nprocs, join, info, ninfo, &req, &id);

    return rc == PMIX_SUCCESS ? group_send_nb(&req, id, want, cbfunc, cbdata) : rc;
}

static pmix_status_t group_run_op_nb(uint8_t cmd, const char *grp, const pmix_info_t info[],
                                     size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_data_buffer_t req;
    uint32_t id;
    pmix_status_t rc = group_request(cmd, grp, NULL, 0, NULL, info, ninfo, &req, &id);

    return rc == PMIX_SUCCESS ? pg_pmix_send_status_nb(&req, id, cbfunc, NULL, cbdata) : rc;
}

static const results_want_t want_nothing = { false, false, false };

/* ---- construct / destruct ------------------------------------------------ */

pmix_status_t PMIx_Group_construct(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t directives[], size_t ndirs,
                                   pmix_info_t **results, size_t *nresults)
{
    results_want_t want = { directive_true(directives, ndirs, PMIX_GROUP_ASSIGN_CONTEXT_ID),
                            false, true };

    return group_run(PG_PMIX_CMD_GROUP_CONSTRUCT, grp, procs, nprocs, NULL, directives, ndirs,
                     want, results, nresults);
}

pmix_status_t PMIx_Group_construct_nb(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    results_want_t want = { directive_true(info, ninfo, PMIX_GROUP_ASSIGN_CONTEXT_ID), false,
                            true };

    return group_run_nb(PG_PMIX_CMD_GROUP_CONSTRUCT, grp, procs, nprocs, NULL, info, ninfo,
                        want, cbfunc, cbdata);
}

pmix_status_t PMIx_Group_destruct(const char grp[], const pmix_info_t info[], size_t ninfo)
{
    return group_run(PG_PMIX_CMD_GROUP_DESTRUCT, grp, NULL, 0, NULL, info, ninfo, want_nothing,
                     NULL, NULL);
}

pmix_status_t PMIx_Group_destruct_nb(const char grp[], const pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return group_run_op_nb(PG_PMIX_CMD_GROUP_DESTRUCT, grp, info, ninfo, cbfunc, cbdata);
}

/* ---- invite / join / leave ------------------------------------------------ */

pmix_status_t PMIx_Group_invite(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                const pmix_info_t info[], size_t ninfo, pmix_info_t **results,
                                size_t *nresult)
{
    results_want_t want = { directive_true(info, ninfo, PMIX_GROUP_ASSIGN_CONTEXT_ID), true,
                            false };

    return group_run(PG_PMIX_CMD_GROUP_INVITE, grp, procs, nprocs, NULL, info, ninfo, want,
                     results, nresult);
}

pmix_status_t PMIx_Group_invite_nb(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t info[], size_t ninfo,
                                   pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    results_want_t want = { directive_true(info, ninfo, PMIX_GROUP_ASSIGN_CONTEXT_ID), true,
                            false };

    return group_run_nb(PG_PMIX_CMD_GROUP_INVITE, grp, procs, nprocs, NULL, info, ninfo, want,
                        cbfunc, cbdata);
}

static join_args_t join_args(const pmix_proc_t *leader, pmix_group_opt_t opt)
{
    join_args_t j = { .accept = opt == PMIX_GROUP_ACCEPT };

    if (leader != NULL)
        j.leader = *leader;
    else
        PMIX_LOAD_PROCID(&j.leader, "", PMIX_RANK_UNDEF);
    return j;
}

static bool opt_ok(pmix_group_opt_t opt)
{
    return opt == PMIX_GROUP_ACCEPT || opt == PMIX_GROUP_DECLINE;
}

pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t *leader, pmix_group_opt_t opt,
                              const pmix_info_t info[], size_t ninfo, pmix_info_t **results,
                              size_t *nresult)
{
    results_want_t want = { true, true, false };
    join_args_t j = join_args(leader, opt);

    if (!opt_ok(opt)) {
        if (results != NULL && nresult != NULL) {
            *results = NULL;
            *nresult = 0;
        }
        return PMIX_ERR_BAD_PARAM;
    }
    return group_run(PG_PMIX_CMD_GROUP_JOIN, grp, NULL, 0, &j, info, ninfo, want, results,
                     nresult);
}

pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t *leader,
                                 pmix_group_opt_t opt, const pmix_info_t info[], size_t ninfo,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    results_want_t want = { true, true, false };
    join_args_t j = join_args(leader, opt);

    if (!opt_ok(opt))
        return PMIX_ERR_BAD_PARAM;
    return group_run_nb(PG_PMIX_CMD_GROUP_JOIN, grp, NULL, 0, &j, info, ninfo, want, cbfunc,
                        cbdata);
}

pmix_status_t PMIx_Group_leave(const char grp[], const pmix_info_t info[], size_t ninfo)
{
    return group_run(PG_PMIX_CMD_GROUP_LEAVE, grp, NULL, 0, NULL, info, ninfo, want_nothing,
                     NULL, NULL);
}

pmix_status_t PMIx_Group_leave_nb(const char grp[], const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return group_run_op_nb(PG_PMIX_CMD_GROUP_LEAVE, grp, info, ninfo, cbfunc, cbdata);
}
