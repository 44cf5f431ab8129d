/*
 * pg_pmix_srv_group: the process groups of the PMIx handler -- the
 * collective construct and destruct, and groups by invitation (invite,
 * join, leave); the engine keeps the groups and raises their events.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/pg_engine.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server_int.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"

/* ---- groups ------------------------------------------------------------ */

/* A construct, an invite, or a join waiting for the invite to complete:
 * answered with what the group's engine record holds when it was made
 * (context id, members, what the members shared). */
typedef struct group_req {
    pg_pmix_req_t *r;
    pg_engine_t *e;
    char *grp;
} group_req_t;

static group_req_t *group_req_new(pg_pmix_in_t *in, pg_engine_t *e, const char *grp)
{
    group_req_t *ir = calloc(1, sizeof(*ir));

    if (ir == NULL || (ir->grp = strdup(grp)) == NULL || (ir->r = pg_pmix_req_new(in)) == NULL) {
        if (ir != NULL)
            free(ir->grp);
        free(ir);
        return NULL;
    }
    ir->e = e;
    return ir;
}

static void group_req_free(group_req_t *ir)
{
    if (ir == NULL)
        return;
    pg_pmix_req_free(ir->r);
    free(ir->grp);
    free(ir);
}


/* A destruct's answer: its status. */
static void destruct_reply(pmix_status_t status, uint64_t cid, void *cbdata)
{
    pg_pmix_req_t *r = cbdata;

    (void)cid;
    if (r->s != NULL)
        (void)pg_pmix_reply_status(r->s->peer, r->cmd, r->id, status);
    pg_pmix_req_free(r);
}

/* The directives a group collective honours: PMIX_TIMEOUT. */
static pg_time_t group_timeout(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++)
        if (pg_pmix_info_is(&info[i], PMIX_TIMEOUT))
            return pg_pmix_info_timeout(&info[i]);
    return 0;
}

/* The arguments of the group commands: grp, procs[] (construct and invite
 * only), info[]. */
typedef struct group_args {
    char *grp;
    pmix_proc_t *procs;
    size_t nprocs;
    pmix_info_t *info;
    size_t ninfo;
} group_args_t;

/* 0, or -1 for a malformed request (what was unpacked is freed by
 * group_args_free all the same). */
static int group_args_unpack(pg_pmix_in_t *in, bool with_procs, group_args_t *a)
{
    *a = (group_args_t){ 0 };
    if (pg_pmix_unpack_one(in->args, &a->grp, PMIX_STRING) != PMIX_SUCCESS ||
        (with_procs && pg_pmix_unpack_array(in->args, (void **)&a->procs, &a->nprocs,
                                            PMIX_PROC) != PMIX_SUCCESS) ||
        pg_pmix_unpack_array(in->args, (void **)&a->info, &a->ninfo, PMIX_INFO) != PMIX_SUCCESS)
        return -1;
    return 0;
}

static void group_args_free(group_args_t *a)
{
    free(a->grp);
    pg_pmix_array_free(a->procs, a->nprocs, PMIX_PROC);
    pg_pmix_array_free(a->info, a->ninfo, PMIX_INFO);
}

/* The most a member may share at construct (packed): every member's share
 * travels in every member's answer. */
#define PG_GROUP_SHARE_MAX (64 * 1024)

/* What a member shares with the others at construct, packed as one
 * pmix_info_t array: the infos of its PMIX_GROUP_INFO (OpenPMIx's form) and
 * a PMIX_GROUP_LOCAL_CID given as a directive (the Standard's).  Empty when
 * it shares nothing. */
static pmix_status_t group_share_pack(const pmix_info_t *info, size_t n, pmix_data_buffer_t *out)
{
    size_t count = 0, k = 0;
    pmix_info_t *all;
    pmix_status_t rc;

    for (size_t i = 0; i < n; i++) {
        const pmix_data_array_t *da = info[i].value.data.darray;

        if (pg_pmix_info_is(&info[i], PMIX_GROUP_INFO)) {
            if (info[i].value.type != PMIX_DATA_ARRAY || da == NULL || da->type != PMIX_INFO)
                return PMIX_ERR_BAD_PARAM;
            count += da->size;
        } else if (pg_pmix_info_is(&info[i], PMIX_GROUP_LOCAL_CID)) {
            count++;
        }
    }
    if (count == 0)
        return PMIX_SUCCESS;
    if ((all = calloc(count, sizeof(*all))) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) { /* shallow copies: packed, never freed */
        const pmix_data_array_t *da = info[i].value.data.darray;

        if (pg_pmix_info_is(&info[i], PMIX_GROUP_INFO))
            for (size_t j = 0; j < da->size; j++)
                all[k++] = ((const pmix_info_t *)da->array)[j];
        else if (pg_pmix_info_is(&info[i], PMIX_GROUP_LOCAL_CID))
            all[k++] = info[i];
    }
    rc = pg_pmix_pack_array(out, all, k, PMIX_INFO);
    free(all);
    if (rc == PMIX_SUCCESS && out->bytes_used > PG_GROUP_SHARE_MAX)
        rc = PMIX_ERR_BAD_PARAM;
    return rc;
}

/* What the members shared: a count, then per member its proc and its
 * packed infos (a byte object the client unpacks). */
static pmix_status_t pack_shared(pmix_data_buffer_t *buf, pg_engine_t *e, const char *grp)
{
    size_t cursor = 0, size;
    uint32_t count = 0;
    const void *data;
    pg_proc_t who;
    pmix_status_t rc;

    while (pg_group_shared_next(e, grp, &cursor, &who, &data, &size))
        count++;
    rc = pg_pmix_pack_one(buf, &count, PMIX_UINT32);
    cursor = 0;
    while (rc == PMIX_SUCCESS && pg_group_shared_next(e, grp, &cursor, &who, &data, &size)) {
        pmix_proc_t proc;
        pmix_byte_object_t bo = { (char *)data, size };

        PMIX_LOAD_PROCID(&proc, who.nspace, who.rank);
        rc = pg_pmix_pack_one(buf, &proc, PMIX_PROC);
        if (rc == PMIX_SUCCESS)
            rc = pg_pmix_pack_one(buf, &bo, PMIX_BYTE_OBJECT);
    }
    return rc;
}

/* The answer of a construct, an invite or a join (below). */
static void group_answer(pmix_status_t status, uint64_t cid, void *cbdata);

/* grp, procs[], info[] -> status, context id, shared[] */
int pg_pmix_serve_group_construct(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    group_args_t a;
    pg_proc_t *members = NULL;
    group_req_t *gr = NULL;
    pmix_data_buffer_t share;
    pmix_status_t rc;
    int ret = PG_HANDLER_OK;

    pg_buffer_construct(&share);
    if (group_args_unpack(in, true, &a) != 0) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : group_share_pack(a.info, a.ninfo, &share);
    if (rc == PMIX_SUCCESS) {
        rc = PMIX_ERR_NOMEM;
        if ((members = pg_pmix_procs_to_engine(a.procs, a.nprocs, self.nspace)) != NULL &&
            (gr = group_req_new(in, e, a.grp)) != NULL) {
            rc = pg_group_construct(e, &self, a.grp, members, a.nprocs, share.base_ptr,
                                    share.bytes_used, group_timeout(a.info, a.ninfo),
                                    pg_peer_now(in->peer), group_answer, gr);
            if (rc == PMIX_SUCCESS)
                gr = NULL; /* group_answer owns it now */
        }
    }
    if (rc != PMIX_SUCCESS)
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, rc);
out:
    group_req_free(gr);
    free(members);
    pg_buffer_destruct(&share);
    group_args_free(&a);
    return ret;
}

/* grp, info[] -> status */
int pg_pmix_serve_group_destruct(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    group_args_t a;
    pg_pmix_req_t *r = NULL;
    pmix_status_t rc;
    int ret = PG_HANDLER_OK;

    if (group_args_unpack(in, false, &a) != 0) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOMEM;
    if (e != NULL && (r = pg_pmix_req_new(in)) != NULL) {
        rc = pg_group_destruct(e, &self, a.grp, group_timeout(a.info, a.ninfo),
                               pg_peer_now(in->peer), destruct_reply, r);
        if (rc == PMIX_SUCCESS)
            r = NULL;
    }
    if (rc != PMIX_SUCCESS)
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, rc);
out:
    pg_pmix_req_free(r);
    group_args_free(&a);
    return ret;
}

/* ---- groups by invitation ----------------------------------------------- */

/* The members of group `grp` as pmix_proc_t[] (PMIX_GROUP_MEMBERSHIP). */
static pmix_status_t pack_members(pmix_data_buffer_t *buf, pg_engine_t *e, const char *grp)
{
    size_t n = 0;
    const pg_proc_t *m = pg_group_members(e, grp, &n);
    pmix_proc_t *procs = calloc(m != NULL && n > 0 ? n : 1, sizeof(*procs));
    pmix_status_t rc;

    if (procs == NULL)
        return PMIX_ERR_NOMEM;
    if (m == NULL)
        n = 0;
    for (size_t i = 0; i < n; i++)
        PMIX_LOAD_PROCID(&procs[i], m[i].nspace, m[i].rank);
    rc = pg_pmix_pack_array(buf, procs, n, PMIX_PROC);
    free(procs);
    return rc;
}

/* When the group was made (SUCCESS, or PARTIAL_SUCCESS when some invitee
 * declined): its context id, then what the members shared (construct) or
 * who they are (invite, join; a decline: context id 0 and no members, it is
 * not one).  An answer too big for one frame still answers: with an error. */
static void group_answer(pmix_status_t status, uint64_t cid, void *cbdata)
{
    group_req_t *gr = cbdata;
    pg_pmix_req_t *r = gr->r;
    pmix_data_buffer_t buf;
    size_t context_id = (size_t)cid;
    bool made = status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS;
    pmix_status_t rc;

    if (r->s != NULL) {
        pg_buffer_construct(&buf);
        rc = pg_pmix_msg_begin_reply(&buf, r->cmd, r->id, status);
        if (rc == PMIX_SUCCESS && made)
            rc = pg_pmix_pack_one(&buf, &context_id, PMIX_SIZE);
        if (rc == PMIX_SUCCESS && made)
            rc = r->cmd == PG_PMIX_CMD_GROUP_CONSTRUCT ? pack_shared(&buf, gr->e, gr->grp)
                 : cid != 0 ? pack_members(&buf, gr->e, gr->grp)
                            : pg_pmix_pack_array(&buf, NULL, 0, PMIX_PROC);
        if (rc != PMIX_SUCCESS || pg_pmix_reply_send(r->s->peer, &buf) != 0)
            (void)pg_pmix_reply_status(r->s->peer, r->cmd, r->id, PMIX_ERR_OUT_OF_RESOURCE);
        if (rc != PMIX_SUCCESS)
            pg_buffer_destruct(&buf);
    }
    group_req_free(gr);
}

/* grp, invitees[], info[] -> status, context id, members[] */
int pg_pmix_serve_group_invite(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    group_args_t a;
    pg_proc_t *invitees = NULL;
    group_req_t *ir = NULL;
    pmix_status_t rc;
    int ret = PG_HANDLER_OK;

    if (group_args_unpack(in, true, &a) != 0) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOMEM;
    if (e != NULL && (invitees = pg_pmix_procs_to_engine(a.procs, a.nprocs, self.nspace)) != NULL &&
        (ir = group_req_new(in, e, a.grp)) != NULL) {
        rc = pg_group_invite(e, &self, a.grp, invitees, a.nprocs, group_timeout(a.info, a.ninfo),
                             pg_peer_now(in->peer), group_answer, ir);
        if (rc == PMIX_SUCCESS)
            ir = NULL; /* group_answer owns it now */
    }
    if (rc != PMIX_SUCCESS)
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, rc);
out:
    group_req_free(ir);
    free(invitees);
    group_args_free(&a);
    return ret;
}

/* grp, leader, accept, info[] -> status (, context id, members[]) */
int pg_pmix_serve_group_join(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    char *grp = NULL;
    pmix_proc_t leader;
    bool accept = false;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    group_req_t *ir = NULL;
    pmix_status_t rc;

    if (pg_pmix_unpack_one(in->args, &grp, PMIX_STRING) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(in->args, &leader, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(in->args, &accept, PMIX_BOOL) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        free(grp);
        return PG_HANDLER_FAIL;
    }
    /* no nspace and no rank: whoever invited; no nspace: this job's */
    bool any = leader.nspace[0] == '\0' && leader.rank == PMIX_RANK_UNDEF;
    pg_proc_t lead = { leader.nspace[0] != '\0' ? leader.nspace : self.nspace, leader.rank };
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOMEM;
    if (e != NULL && (ir = group_req_new(in, e, grp)) != NULL) {
        rc = pg_group_join(e, &self, grp, any ? NULL : &lead, accept,
                           group_timeout(info, ninfo), pg_peer_now(in->peer), group_answer, ir);
        if (rc == PMIX_SUCCESS)
            ir = NULL;
    }
    if (rc != PMIX_SUCCESS)
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, rc);
    group_req_free(ir);
    free(grp);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return PG_HANDLER_OK;
}

/* grp, info[] -> status: answered at once (the others hear PMIX_GROUP_LEFT) */
int pg_pmix_serve_group_leave(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    group_args_t a;
    int ret = PG_HANDLER_FAIL;

    if (group_args_unpack(in, false, &a) == 0) {
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id,
                                   e == NULL ? PMIX_ERR_NOT_SUPPORTED
                                             : pg_group_leave(e, &self, a.grp));
        ret = PG_HANDLER_OK;
    }
    group_args_free(&a);
    return ret;
}
