/*
 * pg_group.c: process groups -- PMIx_Group_construct / _destruct and the
 * invite / join / leave forms, as collectives of the engine.
 *
 * Why it exists: a group is a named set of processes that every member
 * agrees on at once; that is a fence over the members (pg_fence.c does the
 * matching, counting, lost-member and timeout rules), tagged with the
 * group's name so it never meets a plain fence of the same processes.
 * This file keeps the registry on top: which groups exist, their members,
 * and the context id each construction hands out (one number per group,
 * the same for every member, so members can name the group cheaply).
 *
 * A group is PENDING from the first construct join until the collective
 * ends: success makes it ACTIVE with a fresh context id, failure forgets it.
 *
 * Invite / join: the leader's PMIx_Group_invite makes the group INVITING
 * over the leader and the invitees and raises PMIX_GROUP_INVITED to the
 * invitees; each answers with PMIx_Group_join (accept or decline), which
 * raises PMIX_GROUP_INVITE_ACCEPTED / _DECLINED to the leader.  Underneath
 * it is one more tagged collective over everyone invited ("i:<name>"): the
 * leader joins it when inviting, every invitee when answering, so the
 * fence rules give the invite its timeout, its failure when an invitee is
 * lost before answering (PMIX_GROUP_INVITE_FAILED to the leader) and its
 * end when the job ends.  When everyone has answered the group becomes
 * ACTIVE over the leader and the accepters -- as if they had constructed
 * it -- and the leader and the accepters are answered; a decliner is
 * answered at once and only counts as having answered.
 *
 * Leave: a member drops out of an ACTIVE group on its own; the others get
 * PMIX_GROUP_LEFT, and later collectives (destruct) span those left.
 *
 * Groups span the processes one engine serves, unless the host has the
 * group hook (`pmigate proxy`, docs/proxy.md "Groups across
 * nodes"): then a construct or destruct may have members served
 * elsewhere, the host settles every such collective once every server's
 * members joined (pg_group_host_done) and hands out the context id, so one
 * id names the group everywhere; a leave is passed on (group_left) and
 * applied by the other servers without a second event; an invitation is
 * passed on (group_invite) and recorded by the servers of invitees
 * (pg_group_invited), and the invite's collective carries every server's
 * answers (as a construct's carries the shares; pg_group_xnode.c).
 * Without the hook a member served elsewhere is refused
 * (PMIX_ERR_NOT_SUPPORTED) rather than left to hang.
 */
#include "engine/pg_group_int.h"

#include <stdlib.h>
#include <utlist.h>

/* Which collective a join waits for. */
typedef enum { JOIN_CONSTRUCT, JOIN_DESTRUCT, JOIN_INVITE } join_kind_t;

/* One join waiting for its collective.  cb NULL: a decliner's place in
 * an invite, answered already. */
typedef struct group_join {
    pg_engine_t *e;
    char *name;
    join_kind_t kind;
    bool leader;            /* JOIN_INVITE: the inviting process */
    pg_group_cb_t cb;
    void *cbdata;
} group_join_t;

static int member_cmp(const void *a, const void *b)
{
    const pg_proc_t *x = a, *y = b;
    int c = strcmp(x->nspace, y->nspace);
    if (c != 0)
        return c;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

pg_group_t *pg_group_find(pg_engine_t *e, const char *name)
{
    pg_group_t *g;
    DL_FOREACH(e->groups, g)
        if (strcmp(g->name, name) == 0)
            return g;
    return NULL;
}

static void members_free(pg_engine_t *e, pg_proc_t *members, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pg_mem_strfree(e, (char *)members[i].nspace);
    pg_mem_free(e, members, n * sizeof(*members));
}

static void shares_free(pg_engine_t *e, pg_group_t *g)
{
    for (size_t i = 0; i < g->nshares; i++) {
        pg_mem_strfree(e, (char *)g->shares[i].proc.nspace);
        pg_mem_free(e, g->shares[i].data, g->shares[i].size);
    }
    pg_mem_free(e, g->shares, g->nshares * sizeof(*g->shares));
    g->shares = NULL;
    g->nshares = 0;
}

static void group_free(pg_engine_t *e, pg_group_t *g)
{
    shares_free(e, g);
    pg_mem_free(e, g->answers, g->answers != NULL ? g->nmembers : 0);
    members_free(e, g->members, g->nmembers);
    pg_mem_strfree(e, g->name);
    pg_mem_free(e, g, sizeof(*g));
}

static void group_remove(pg_engine_t *e, pg_group_t *g)
{
    DL_DELETE(e->groups, g);
    group_free(e, g);
}

/* A sorted copy of the member list, empty nspaces resolved to proc's. */
static pg_group_t *group_new(pg_engine_t *e, const char *name, const pg_proc_t *proc,
                             const pg_proc_t *members, size_t n)
{
    pg_group_t *g = pg_mem_alloc(e, sizeof(*g));
    if (g == NULL)
        return NULL;
    memset(g, 0, sizeof(*g));
    g->name = pg_mem_strdup(e, name);
    g->members = pg_mem_alloc(e, n * sizeof(*g->members));
    if (g->name == NULL || g->members == NULL) {
        pg_mem_strfree(e, g->name);
        pg_mem_free(e, g->members, n * sizeof(*g->members));
        pg_mem_free(e, g, sizeof(*g));
        return NULL;
    }
    memset(g->members, 0, n * sizeof(*g->members));
    g->nmembers = n;
    for (size_t i = 0; i < n; i++) {
        const char *ns = members[i].nspace;
        g->members[i].nspace = pg_mem_strdup(e, ns == NULL || ns[0] == '\0' ? proc->nspace : ns);
        g->members[i].rank = members[i].rank;
        if (g->members[i].nspace == NULL) {
            group_free(e, g);
            return NULL;
        }
    }
    qsort(g->members, n, sizeof(*g->members), member_cmp);
    return g;
}

/* Is proc one of g's members (by rank or by a wildcard entry)? */
bool pg_group_is_member(const pg_group_t *g, const pg_proc_t *proc)
{
    for (size_t i = 0; i < g->nmembers; i++)
        if (strcmp(g->members[i].nspace, proc->nspace) == 0 &&
            (g->members[i].rank == proc->rank || g->members[i].rank == PMIX_RANK_WILDCARD))
            return true;
    return false;
}

static bool same_members(const pg_group_t *a, const pg_group_t *b)
{
    if (a->nmembers != b->nmembers)
        return false;
    for (size_t i = 0; i < a->nmembers; i++)
        if (member_cmp(&a->members[i], &b->members[i]) != 0)
            return false;
    return true;
}

/* Where g's members are served: *here (by this engine), *elsewhere (by
 * another).  PMIX_ERR_BAD_PARAM when the list names a rank that does not
 * exist. */
static pmix_status_t members_where(pg_engine_t *e, const pg_group_t *g, bool *here,
                                   bool *elsewhere)
{
    *here = *elsewhere = false;
    for (size_t i = 0; i < g->nmembers; i++) {
        const pg_ns_t *job = pg_ns_find(e, g->members[i].nspace);
        pmix_rank_t r = g->members[i].rank;
        if (job == NULL || (r != PMIX_RANK_WILDCARD && r >= job->size))
            return PMIX_ERR_BAD_PARAM;
        uint32_t first = r == PMIX_RANK_WILDCARD ? 0 : r;
        uint32_t end = r == PMIX_RANK_WILDCARD ? job->size : r + 1;
        for (uint32_t k = first; k < end; k++) {
            bool served = job->node_served[job->rank_node[k]];
            *here |= served;
            *elsewhere |= !served;
        }
    }
    return PMIX_SUCCESS;
}

/* Does this engine serve one of g's members? */
static bool serves_member(pg_engine_t *e, const pg_group_t *g)
{
    bool here, elsewhere;

    return members_where(e, g, &here, &elsewhere) == PMIX_SUCCESS && here;
}

/* Does this engine serve p? */
bool pg_group_proc_served(pg_engine_t *e, const pg_proc_t *p)
{
    const pg_ns_t *job = pg_ns_find(e, p->nspace);

    return job != NULL && p->rank < job->size && job->node_served[job->rank_node[p->rank]];
}

/* Every rank the member list names exists, and is served by this engine
 * unless `anywhere` (the host settles the group's collectives). */
static pmix_status_t members_known(pg_engine_t *e, const pg_group_t *g, bool anywhere)
{
    bool here, elsewhere;
    pmix_status_t rc = members_where(e, g, &here, &elsewhere);

    return rc == PMIX_SUCCESS && elsewhere && !anywhere ? PMIX_ERR_NOT_SUPPORTED : rc;
}

static void join_free(group_join_t *j)
{
    free(j->name);
    free(j);
}

/* Raises group event `code` from `from` (its source and origin, so never
 * delivered back to it) to `targets`, naming the group (PMIX_GROUP_ID) and,
 * when it has one (cid != 0), its context id (PMIX_GROUP_CONTEXT_ID). */
static void group_notify_cid(pg_engine_t *e, pmix_status_t code, const char *name, uint64_t cid,
                             const pg_proc_t *from, const pg_proc_t *targets, size_t ntargets)
{
    size_t context_id = (size_t)cid;
    pg_event_detail_t details[] = {
        { PMIX_GROUP_ID, pg_value_string(name) },
        { PMIX_GROUP_CONTEXT_ID, pg_value_bytes(PMIX_SIZE, &context_id, sizeof(context_id)) },
    };
    pg_event_t ev = { code,    *from, *from,   PMIX_RANGE_CUSTOM, targets,
                      ntargets, NULL,  0,       details,           cid != 0 ? 2 : 1 };

    if (ntargets > 0)
        (void)pg_event_notify(e, &ev, NULL);
}

static void group_notify(pg_engine_t *e, pmix_status_t code, const char *name,
                         const pg_proc_t *from, const pg_proc_t *targets, size_t ntargets)
{
    group_notify_cid(e, code, name, 0, from, targets, ntargets);
}

static bool proc_gone(pg_engine_t *e, const pg_proc_t *p)
{
    const pg_ns_t *job = pg_ns_find(e, p->nspace);

    return job == NULL || p->rank >= job->size || job->procs[p->rank].state == PG_PROC_LOST ||
           job->procs[p->rank].state == PG_PROC_FINALIZED;
}

/* The invite failed because processes went away: the leader hears, per
 * invitee gone before answering, PMIX_GROUP_INVITE_FAILED from it. */
static void invite_report_lost(pg_engine_t *e, const pg_group_t *g)
{
    pg_proc_t leader = g->members[g->leader];

    for (size_t i = 0; i < g->nmembers; i++)
        if (g->answers[i] == ANSWER_NONE && proc_gone(e, &g->members[i]))
            group_notify(e, PMIX_GROUP_INVITE_FAILED, g->name, &g->members[i], &leader, 1);
}

/* Keeps the members that accepted (the leader among them), in order. */
static pmix_status_t keep_accepted(pg_engine_t *e, pg_group_t *g)
{
    size_t n = 0, k = 0;

    for (size_t i = 0; i < g->nmembers; i++)
        n += g->answers[i] == ANSWER_ACCEPT;
    pg_proc_t *kept = pg_mem_alloc(e, n * sizeof(*kept));
    if (kept == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < g->nmembers; i++) {
        if (g->answers[i] == ANSWER_ACCEPT) {
            kept[k++] = g->members[i];
            g->members[i].nspace = NULL; /* moved */
        }
    }
    g->partial = n < g->nmembers;
    pg_mem_free(e, g->answers, g->nmembers);
    g->answers = NULL;
    members_free(e, g->members, g->nmembers);
    g->members = kept;
    g->nmembers = n;
    return PMIX_SUCCESS;
}

/* The invite collective ended (the first of its joiners settles it): on
 * success the group becomes ACTIVE over the leader and the accepters, as
 * if they had constructed it; otherwise it goes. */
static void invite_settle(pg_engine_t *e, pg_group_t *g, pmix_status_t status)
{
    if (status == PMIX_SUCCESS) {
        pg_proc_t leader = g->members[g->leader];

        if (keep_accepted(e, g) == PMIX_SUCCESS) {
            g->state = GROUP_ACTIVE;
            if (g->cid == 0) /* the host's, when it settled the invite */
                g->cid = ++e->next_cid;
            /* what the Standard has the leader announce, and programs wait
             * for: the group is assembled (the leader is never told back).
             * Across servers the leader's raises it, once. */
            if (e->ops.group == NULL || pg_group_proc_served(e, &leader))
                group_notify_cid(e, PMIX_GROUP_CONSTRUCT_COMPLETE, g->name, g->cid, &leader,
                                 g->members, g->nmembers);
            return;
        }
    }
    if (status == PMIX_ERR_LOST_CONNECTION)
        invite_report_lost(e, g);
    group_remove(e, g);
}

/* An invite joiner's result: the leader learns whether everyone accepted
 * (PMIX_ERR_PARTIAL_SUCCESS: some declined); a lost invitee fails it with
 * PMIX_GROUP_INVITE_FAILED. */
static pmix_status_t invite_done(group_join_t *j, pmix_status_t status, uint64_t *cid)
{
    pg_group_t *g = pg_group_find(j->e, j->name);

    if (g != NULL && g->state == GROUP_INVITING)
        invite_settle(j->e, g, status);
    if (status != PMIX_SUCCESS)
        return status == PMIX_ERR_LOST_CONNECTION ? PMIX_GROUP_INVITE_FAILED : status;
    g = pg_group_find(j->e, j->name);
    if (g == NULL || g->state != GROUP_ACTIVE)
        return PMIX_ERR_NOMEM; /* the settling could not allocate */
    *cid = g->cid;
    return j->leader && g->partial ? PMIX_ERR_PARTIAL_SUCCESS : PMIX_SUCCESS;
}

/* The collective ended for one joiner. Every joiner of one collective is
 * called in the same flush, so the first one settles the registry and the
 * others read what it left. */
static void join_done(pmix_status_t status, const pg_fence_keys_t *keys, void *cbdata)
{
    group_join_t *j = cbdata;
    pg_group_t *g = pg_group_find(j->e, j->name);
    uint64_t cid = 0;

    (void)keys;
    if (j->kind == JOIN_INVITE) {
        status = invite_done(j, status, &cid);
    } else if (j->kind == JOIN_DESTRUCT) {
        if (g != NULL && status == PMIX_SUCCESS)
            group_remove(j->e, g);
        else if (g != NULL)
            g->destructing = false;
    } else if (g != NULL && status == PMIX_SUCCESS) {
        if (g->state == GROUP_PENDING) {
            g->state = GROUP_ACTIVE;
            if (g->cid == 0) /* the host's, when it settled the construct */
                g->cid = ++j->e->next_cid;
        }
        cid = g->cid;
    } else if (g != NULL && g->state == GROUP_PENDING) {
        group_remove(j->e, g);
    }
    /* an invite that kept none of this server's processes (they declined)
     * is the other servers' group */
    if (j->kind == JOIN_INVITE && j->e->ops.group != NULL &&
        (g = pg_group_find(j->e, j->name)) != NULL && g->state == GROUP_ACTIVE &&
        !serves_member(j->e, g))
        group_remove(j->e, g);
    if (j->cb != NULL)
        j->cb(status, cid, j->cbdata);
    join_free(j);
}

static group_join_t *join_new(pg_engine_t *e, const char *name, join_kind_t kind, bool leader,
                              pg_group_cb_t cb, void *cbdata)
{
    group_join_t *j = calloc(1, sizeof(*j));
    if (j == NULL || (j->name = strdup(name)) == NULL) {
        free(j);
        return NULL;
    }
    j->e = e;
    j->kind = kind;
    j->leader = leader;
    j->cb = cb;
    j->cbdata = cbdata;
    return j;
}

/* Joins the tagged collective "<op>:<name>" over g's members. */
static pmix_status_t group_join(pg_engine_t *e, const pg_proc_t *proc, pg_group_t *g,
                                join_kind_t kind, bool leader, pg_time_t timeout, pg_time_t now,
                                pg_group_cb_t cb, void *cbdata)
{
    static const char ops[] = { [JOIN_CONSTRUCT] = 'c', [JOIN_DESTRUCT] = 'd',
                                [JOIN_INVITE] = 'i' };
    size_t taglen = strlen(g->name) + 3;
    char *tag = malloc(taglen);
    group_join_t *j = join_new(e, g->name, kind, leader, cb, cbdata);
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if (tag != NULL && j != NULL) {
        snprintf(tag, taglen, "%c:%s", ops[kind], g->name);
        rc = pg_fence_join_tagged(e, proc, g->members, g->nmembers, tag, 0, timeout, now,
                                  join_done, j);
    }
    free(tag);
    if (rc != PMIX_SUCCESS && j != NULL)
        join_free(j);
    return rc;
}

static bool name_ok(const char *name)
{
    return name != NULL && name[0] != '\0' && strlen(name) <= PG_GROUP_NAME_MAX;
}

/* What every group call checks first: an engine, a caller of a known
 * namespace, a group name that fits. */
static pmix_status_t call_check(pg_engine_t *e, const pg_proc_t *proc, const char *name)
{
    pmix_status_t rc;

    if (e == NULL || proc == NULL || !name_ok(name))
        return PMIX_ERR_BAD_PARAM;
    return pg_ns_of(e, proc, &rc) == NULL ? rc : PMIX_SUCCESS;
}

static size_t share_of(const pg_group_t *g, const pg_proc_t *proc)
{
    for (size_t i = 0; i < g->nshares; i++)
        if (strcmp(g->shares[i].proc.nspace, proc->nspace) == 0 &&
            g->shares[i].proc.rank == proc->rank)
            return i;
    return SIZE_MAX;
}

/* Keeps what proc shares with the other members, before its join can
 * complete the construct (the members' answers carry it).  A second join
 * of the same process keeps the first one's: that join is refused. */
pmix_status_t pg_group_share_add(pg_engine_t *e, pg_group_t *g, const pg_proc_t *proc,
                               const void *data, size_t size, bool *added)
{
    group_share_t *grown;

    *added = false;
    if (data == NULL || size == 0 || share_of(g, proc) != SIZE_MAX)
        return PMIX_SUCCESS;
    grown = pg_mem_alloc(e, (g->nshares + 1) * sizeof(*grown));
    if (grown == NULL)
        return PMIX_ERR_NOMEM;
    if (g->nshares > 0)
        memcpy(grown, g->shares, g->nshares * sizeof(*grown));
    group_share_t *sh = &grown[g->nshares];
    sh->proc.rank = proc->rank;
    sh->proc.nspace = pg_mem_strdup(e, proc->nspace);
    sh->data = pg_mem_alloc(e, size);
    sh->size = size;
    if (sh->proc.nspace == NULL || sh->data == NULL) {
        pg_mem_strfree(e, (char *)sh->proc.nspace);
        pg_mem_free(e, sh->data, size);
        pg_mem_free(e, grown, (g->nshares + 1) * sizeof(*grown));
        return PMIX_ERR_NOMEM;
    }
    memcpy(sh->data, data, size);
    pg_mem_free(e, g->shares, g->nshares * sizeof(*g->shares));
    g->shares = grown;
    g->nshares++;
    *added = true;
    return PMIX_SUCCESS;
}

/* Takes back proc's share (its join was refused). */
static void share_drop(pg_engine_t *e, pg_group_t *g, const pg_proc_t *proc)
{
    size_t at = share_of(g, proc);

    if (at == SIZE_MAX)
        return;
    pg_mem_strfree(e, (char *)g->shares[at].proc.nspace);
    pg_mem_free(e, g->shares[at].data, g->shares[at].size);
    memmove(&g->shares[at], &g->shares[at + 1], (g->nshares - at - 1) * sizeof(*g->shares));
    g->nshares--; /* the array keeps its size until the group goes */
}

pmix_status_t pg_group_construct(pg_engine_t *e, const pg_proc_t *proc, const char *name,
                                 const pg_proc_t *members, size_t nmembers, const void *share,
                                 size_t size, pg_time_t timeout, pg_time_t now, pg_group_cb_t cb,
                                 void *cbdata)
{
    bool shared = false;

    pmix_status_t rc;

    if (cb == NULL || members == NULL || nmembers == 0)
        return PMIX_ERR_BAD_PARAM;
    if ((rc = call_check(e, proc, name)) != PMIX_SUCCESS)
        return rc;
    pg_group_t *want = group_new(e, name, proc, members, nmembers);
    if (want == NULL)
        return PMIX_ERR_NOMEM;
    pg_group_t *g = pg_group_find(e, name);
    bool created = g == NULL;
    if (!pg_group_is_member(want, proc))
        rc = PMIX_ERR_BAD_PARAM; /* a non-member learns nothing about the group */
    else if (g != NULL && g->state != GROUP_PENDING)
        rc = PMIX_ERR_EXISTS; /* constructed, or being built by invitation */
    else if (g != NULL && !same_members(g, want))
        rc = PMIX_ERR_BAD_PARAM;
    else
        rc = members_known(e, want, e->ops.group != NULL);
    if (rc != PMIX_SUCCESS || !created) {
        group_free(e, want);
    } else {
        g = want;
        g->state = GROUP_PENDING;
        DL_APPEND(e->groups, g);
    }
    if (rc == PMIX_SUCCESS)
        rc = pg_group_share_add(e, g, proc, share, size, &shared);
    if (rc == PMIX_SUCCESS)
        rc = group_join(e, proc, g, JOIN_CONSTRUCT, false, timeout, now, cb, cbdata);
    if (rc != PMIX_SUCCESS && shared && (g = pg_group_find(e, name)) != NULL)
        share_drop(e, g, proc);
    /* a refused first join leaves no pending group behind; a completed one
     * has already settled it (inline completion) */
    if (rc != PMIX_SUCCESS && created && (g = pg_group_find(e, name)) != NULL &&
        g->state == GROUP_PENDING)
        group_remove(e, g);
    return rc;
}

pmix_status_t pg_group_destruct(pg_engine_t *e, const pg_proc_t *proc, const char *name,
                                pg_time_t timeout, pg_time_t now, pg_group_cb_t cb,
                                void *cbdata)
{
    pmix_status_t rc;

    if (cb == NULL)
        return PMIX_ERR_BAD_PARAM;
    if ((rc = call_check(e, proc, name)) != PMIX_SUCCESS)
        return rc;
    pg_group_t *g = pg_group_find(e, name);
    if (g == NULL || g->state != GROUP_ACTIVE)
        return PMIX_ERR_NOT_FOUND;
    rc = group_join(e, proc, g, JOIN_DESTRUCT, false, timeout, now, cb, cbdata);
    if (rc == PMIX_SUCCESS && (g = pg_group_find(e, name)) != NULL)
        g->destructing = true;
    return rc;
}

/* ---- invite / join / leave ---------------------------------------------- */

/* g's member list index of exactly proc (no wildcard), or SIZE_MAX. */
size_t pg_group_member_at(const pg_group_t *g, const pg_proc_t *proc)
{
    for (size_t i = 0; i < g->nmembers; i++)
        if (strcmp(g->members[i].nspace, proc->nspace) == 0 && g->members[i].rank == proc->rank)
            return i;
    return SIZE_MAX;
}

/* Everyone invited must be one process named once (no wildcard, not the
 * leader again) that this engine serves. */
static pmix_status_t invited_ok(pg_engine_t *e, const pg_group_t *g)
{
    for (size_t i = 0; i < g->nmembers; i++)
        if (g->members[i].rank == PMIX_RANK_WILDCARD ||
            (i > 0 && member_cmp(&g->members[i - 1], &g->members[i]) == 0))
            return PMIX_ERR_BAD_PARAM;
    return members_known(e, g, e->ops.group != NULL);
}

static bool is_leader(const pg_proc_t *p, const pg_proc_t *leader)
{
    const char *ns = p->nspace == NULL || p->nspace[0] == '\0' ? leader->nspace : p->nspace;

    return p->rank == leader->rank && strcmp(ns, leader->nspace) == 0;
}

/* The INVITING group: the leader and the invitees, answers kept apart.  A
 * leader that lists itself among the invitees (OpenPMIx's examples do) is
 * the leader all the same: it is not invited, and nobody else is then
 * PMIX_ERR_BAD_PARAM. */
static pg_group_t *invite_group_new(pg_engine_t *e, const char *name, const pg_proc_t *leader,
                                    const pg_proc_t *invitees, size_t n, pmix_status_t *rc)
{
    pg_proc_t *all = calloc(n + 1, sizeof(*all));
    pg_group_t *g = NULL;
    size_t k = 1;

    *rc = PMIX_ERR_NOMEM;
    if (all != NULL) {
        all[0] = *leader;
        for (size_t i = 0; i < n; i++)
            if (!is_leader(&invitees[i], leader))
                all[k++] = invitees[i];
        g = k > 1 ? group_new(e, name, leader, all, k) : NULL;
        *rc = k > 1 ? PMIX_ERR_NOMEM : PMIX_ERR_BAD_PARAM;
    }
    free(all);
    if (g == NULL)
        return NULL;
    *rc = invited_ok(e, g);
    if (*rc == PMIX_SUCCESS && (g->answers = pg_mem_alloc(e, g->nmembers)) == NULL)
        *rc = PMIX_ERR_NOMEM;
    if (*rc != PMIX_SUCCESS) {
        group_free(e, g);
        return NULL;
    }
    memset(g->answers, ANSWER_NONE, g->nmembers);
    g->leader = pg_group_member_at(g, leader);
    g->answers[g->leader] = ANSWER_ACCEPT;
    g->state = GROUP_INVITING;
    return g;
}

pmix_status_t pg_group_invite(pg_engine_t *e, const pg_proc_t *leader, const char *name,
                              const pg_proc_t *invitees, size_t ninvitees, pg_time_t timeout,
                              pg_time_t now, pg_group_cb_t cb, void *cbdata)
{
    pmix_status_t rc;

    if (cb == NULL || invitees == NULL || ninvitees == 0)
        return PMIX_ERR_BAD_PARAM;
    if ((rc = call_check(e, leader, name)) != PMIX_SUCCESS)
        return rc;
    if (pg_group_find(e, name) != NULL)
        return PMIX_ERR_EXISTS;
    pg_group_t *g = invite_group_new(e, name, leader, invitees, ninvitees, &rc);
    if (g == NULL)
        return rc;
    DL_APPEND(e->groups, g);
    /* the other servers hold the invitation before their invitees hear it */
    if (e->ops.group != NULL && e->ops.group_invite != NULL)
        e->ops.group_invite(e->host_ctx, name, leader, g->members, g->nmembers);
    rc = group_join(e, leader, g, JOIN_INVITE, true, timeout, now, cb, cbdata);
    g = pg_group_find(e, name);
    if (rc != PMIX_SUCCESS && g != NULL && g->state == GROUP_INVITING)
        group_remove(e, g);
    /* an invitee already gone has failed the invite inline: nobody to invite */
    if (rc == PMIX_SUCCESS && g != NULL && g->state == GROUP_INVITING)
        group_notify(e, PMIX_GROUP_INVITED, name, leader, g->members, g->nmembers);
    return rc;
}

pmix_status_t pg_group_invited(pg_engine_t *e, const char *name, const pg_proc_t *leader,
                               const pg_proc_t *members, size_t nmembers)
{
    pmix_status_t rc;

    if (members == NULL || nmembers == 0)
        return PMIX_ERR_BAD_PARAM;
    if ((rc = call_check(e, leader, name)) != PMIX_SUCCESS)
        return rc;
    if (pg_group_find(e, name) != NULL)
        return PMIX_ERR_EXISTS;
    pg_group_t *g = invite_group_new(e, name, leader, members, nmembers, &rc);
    if (g == NULL)
        return rc;
    if (!serves_member(e, g)) {
        group_free(e, g);
        return PMIX_SUCCESS;
    }
    DL_APPEND(e->groups, g);
    return PMIX_SUCCESS;
}

/* Why proc cannot answer an invitation to g (PMIX_SUCCESS: it can). */
static pmix_status_t join_refusal(const pg_group_t *g, const pg_proc_t *proc,
                                  const pg_proc_t *leader, size_t *at)
{
    if (g == NULL || g->state == GROUP_PENDING ||
        (g->state == GROUP_ACTIVE && !pg_group_is_member(g, proc)))
        return PMIX_ERR_NOT_FOUND; /* no invitation under that name */
    if (g->state != GROUP_INVITING)
        return PMIX_ERR_EXISTS; /* in the group already */
    *at = pg_group_member_at(g, proc);
    if (*at == SIZE_MAX || *at == g->leader)
        return PMIX_ERR_BAD_PARAM; /* not invited (or the leader itself) */
    if (leader != NULL && member_cmp(leader, &g->members[g->leader]) != 0)
        return PMIX_ERR_BAD_PARAM; /* someone else invited it */
    return g->answers[*at] == ANSWER_NONE ? PMIX_SUCCESS : PMIX_ERR_EXISTS;
}

pmix_status_t pg_group_join(pg_engine_t *e, const pg_proc_t *proc, const char *name,
                            const pg_proc_t *leader, bool accept, pg_time_t timeout,
                            pg_time_t now, pg_group_cb_t cb, void *cbdata)
{
    pmix_status_t rc;
    size_t at = SIZE_MAX;

    if (cb == NULL)
        return PMIX_ERR_BAD_PARAM;
    if ((rc = call_check(e, proc, name)) != PMIX_SUCCESS)
        return rc;
    pg_group_t *g = pg_group_find(e, name);
    rc = join_refusal(g, proc, leader, &at);
    if (rc != PMIX_SUCCESS)
        return rc;
    pg_proc_t to = g->members[g->leader];
    g->answers[at] = accept ? ANSWER_ACCEPT : ANSWER_DECLINE;
    /* the leader hears the answer before the invite can complete */
    group_notify(e, accept ? PMIX_GROUP_INVITE_ACCEPTED : PMIX_GROUP_INVITE_DECLINED, name,
                 proc, &to, 1);
    /* a decliner only counts as having answered: it is answered at once */
    rc = group_join(e, proc, g, JOIN_INVITE, false, timeout, now, accept ? cb : NULL, cbdata);
    if (rc != PMIX_SUCCESS && (g = pg_group_find(e, name)) != NULL && g->state == GROUP_INVITING)
        g->answers[at] = ANSWER_NONE;
    if (rc == PMIX_SUCCESS && !accept)
        cb(PMIX_SUCCESS, 0, cbdata);
    return rc;
}

/* Appends (nspace, rank) to list[*k]. */
static bool member_push(pg_engine_t *e, pg_proc_t *list, size_t *k, const char *nspace,
                        pmix_rank_t rank)
{
    if ((list[*k].nspace = pg_mem_strdup(e, nspace)) == NULL)
        return false;
    list[(*k)++].rank = rank;
    return true;
}

/* How many members g has once proc is gone (its job's wildcard entry
 * spelled out rank by rank). */
static size_t members_after_drop(const pg_group_t *g, const pg_proc_t *proc, uint32_t jobsize)
{
    size_t n = 0;

    for (size_t i = 0; i < g->nmembers; i++) {
        bool own = strcmp(g->members[i].nspace, proc->nspace) == 0;
        if (own && g->members[i].rank == PMIX_RANK_WILDCARD)
            n += jobsize - 1;
        else
            n += !(own && g->members[i].rank == proc->rank);
    }
    return n;
}

/* Replaces g's members by the same without proc. */
static pmix_status_t members_drop(pg_engine_t *e, pg_group_t *g, const pg_proc_t *proc)
{
    const pg_ns_t *job = pg_ns_find(e, proc->nspace);
    size_t n = members_after_drop(g, proc, job->size), k = 0;
    pg_proc_t *left = pg_mem_alloc(e, n * sizeof(*left));
    bool ok = left != NULL || n == 0;

    if (left != NULL)
        memset(left, 0, n * sizeof(*left));
    for (size_t i = 0; ok && i < g->nmembers; i++) {
        const pg_proc_t *m = &g->members[i];
        bool own = strcmp(m->nspace, proc->nspace) == 0;
        if (own && m->rank == PMIX_RANK_WILDCARD) {
            for (pmix_rank_t r = 0; ok && r < job->size; r++)
                ok = r == proc->rank || member_push(e, left, &k, m->nspace, r);
        } else if (!own || m->rank != proc->rank) {
            ok = member_push(e, left, &k, m->nspace, m->rank);
        }
    }
    if (!ok) {
        members_free(e, left, n); /* entries never filled are NULL: skipped */
        return PMIX_ERR_NOMEM;
    }
    qsort(left, n, sizeof(*left), member_cmp);
    members_free(e, g->members, g->nmembers);
    g->members = left;
    g->nmembers = n;
    return PMIX_SUCCESS;
}

/* proc leaves g (checked by the caller); `announce`: raise
 * PMIX_GROUP_LEFT and tell the host (proc is served here). */
static pmix_status_t group_drop(pg_engine_t *e, pg_group_t *g, const pg_proc_t *proc,
                                bool announce)
{
    pmix_status_t rc = members_drop(e, g, proc);
    char name[PG_GROUP_NAME_MAX + 1];

    if (rc != PMIX_SUCCESS)
        return rc;
    snprintf(name, sizeof(name), "%s", g->name); /* g may go while events are raised */
    if (announce && e->ops.group != NULL && e->ops.group_left != NULL)
        e->ops.group_left(e->host_ctx, proc, name);
    if (announce && g->nmembers > 0)
        group_notify(e, PMIX_GROUP_LEFT, name, proc, g->members, g->nmembers);
    if ((g = pg_group_find(e, name)) != NULL && (g->nmembers == 0 || !serves_member(e, g)))
        group_remove(e, g); /* none of it here: the other servers keep it */
    return PMIX_SUCCESS;
}

/* What a leave checks first: an ACTIVE group proc is a member of, no
 * destruct running.  *out: the group. */
static pmix_status_t leave_check(pg_engine_t *e, const pg_proc_t *proc, const char *name,
                                 pg_group_t **out)
{
    pmix_status_t rc;

    if ((rc = call_check(e, proc, name)) != PMIX_SUCCESS)
        return rc;
    pg_group_t *g = pg_group_find(e, name);
    if (g == NULL || g->state != GROUP_ACTIVE)
        return PMIX_ERR_NOT_FOUND;
    if (!pg_group_is_member(g, proc))
        return PMIX_ERR_BAD_PARAM;
    if (g->destructing)
        return PMIX_ERR_RESOURCE_BUSY; /* its destruct counts on this member */
    *out = g;
    return PMIX_SUCCESS;
}

pmix_status_t pg_group_leave(pg_engine_t *e, const pg_proc_t *proc, const char *name)
{
    pg_group_t *g = NULL;
    pmix_status_t rc = leave_check(e, proc, name, &g);

    return rc != PMIX_SUCCESS ? rc : group_drop(e, g, proc, true);
}

pmix_status_t pg_group_member_left(pg_engine_t *e, const pg_proc_t *proc, const char *name)
{
    pg_group_t *g = NULL;
    pmix_status_t rc = leave_check(e, proc, name, &g);

    return rc != PMIX_SUCCESS ? rc : group_drop(e, g, proc, false);
}

bool pg_group_shared_next(pg_engine_t *e, const char *name, size_t *cursor, pg_proc_t *proc,
                          const void **data, size_t *size)
{
    pg_group_t *g = name != NULL ? pg_group_find(e, name) : NULL;

    if (g == NULL || g->state != GROUP_ACTIVE || *cursor >= g->nshares)
        return false;
    *proc = g->shares[*cursor].proc;
    *data = g->shares[*cursor].data;
    *size = g->shares[*cursor].size;
    (*cursor)++;
    return true;
}

const char *pg_group_next(pg_engine_t *e, size_t *cursor)
{
    size_t i = 0;
    pg_group_t *g;

    DL_FOREACH(e->groups, g) {
        if (g->state != GROUP_ACTIVE)
            continue;
        if (i++ == *cursor) {
            (*cursor)++;
            return g->name;
        }
    }
    return NULL;
}

const pg_proc_t *pg_group_members(pg_engine_t *e, const char *name, size_t *nmembers)
{
    pg_group_t *g = name != NULL ? pg_group_find(e, name) : NULL;

    if (g == NULL || g->state != GROUP_ACTIVE)
        return NULL;
    *nmembers = g->nmembers;
    return g->members;
}

/* The ACTIVE group a participant entry names by its nspace (never a job's
 * name: a job of that name wins). */
static const pg_group_t *group_named_by(pg_engine_t *e, const pg_proc_t *p)
{
    const pg_group_t *g;

    if (p->nspace == NULL || p->nspace[0] == '\0' || pg_ns_find(e, p->nspace) != NULL)
        return NULL;
    g = pg_group_find(e, p->nspace);
    return g != NULL && g->state == GROUP_ACTIVE ? g : NULL;
}

pmix_status_t pg_group_expand(pg_engine_t *e, const pg_proc_t *procs, size_t n, pg_proc_t **out,
                              size_t *nout)
{
    size_t total = 0, k = 0;
    bool any = false;

    *out = NULL;
    *nout = 0;
    for (size_t i = 0; procs != NULL && i < n; i++) {
        const pg_group_t *g = group_named_by(e, &procs[i]);

        if (g != NULL && procs[i].rank != PMIX_RANK_WILDCARD)
            return PMIX_ERR_BAD_PARAM;
        any |= g != NULL;
        total += g != NULL ? g->nmembers : 1;
    }
    if (!any)
        return PMIX_SUCCESS;
    if ((*out = calloc(total, sizeof(**out))) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const pg_group_t *g = group_named_by(e, &procs[i]);

        if (g == NULL)
            (*out)[k++] = procs[i];
        for (size_t m = 0; g != NULL && m < g->nmembers; m++)
            (*out)[k++] = g->members[m];
    }
    *nout = k;
    return PMIX_SUCCESS;
}

/* A job ends: groups with members in it go (their collectives have
 * already failed with PMIX_ERR_JOB_TERMINATED in pg_fence_drop_job). */
void pg_groups_drop_job(pg_engine_t *e, pg_ns_t *job)
{
    pg_group_t *g, *tmp;
    DL_FOREACH_SAFE(e->groups, g, tmp) {
        bool uses = false;
        for (size_t i = 0; i < g->nmembers; i++)
            uses |= strcmp(g->members[i].nspace, job->nspace) == 0;
        if (uses)
            group_remove(e, g);
    }
}

void pg_groups_free_all(pg_engine_t *e)
{
    pg_group_t *g, *tmp;
    DL_FOREACH_SAFE(e->groups, g, tmp)
        group_remove(e, g);
}
