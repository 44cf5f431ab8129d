/*
 * test_engine_group: pg_group_construct / pg_group_destruct and the
 * invite / join / leave forms, the engine side of PMIx_Group_*.  A group is
 * what every member agreed on at once: nobody's construct completes before
 * the last member joined, all get the same context id, a member that goes
 * away fails the others (no hang), a group collective never meets a plain
 * fence of the same processes, and a group over processes another engine
 * serves is refused up front -- unless the host has the group hook: then
 * each engine hands its members' part to the host, which settles it with
 * one context id and every engine's shares, and a leave is passed on.  An invite reaches the invitees as an event,
 * their answers reach the leader as events, and it completes once all
 * answered with a group of the leader and the accepters; a lost invitee or
 * a timeout fails it; a member that leaves is out of later collectives and
 * the others hear of it.
 */
#include <CUnit/CUnit.h>
#include <string.h>

#include "tests/engine/engine_fixture.h"
#include "tests/pg_cunit.h"

typedef struct {
    int calls;
    pmix_status_t status;
    uint64_t cid;
} grouped_t;

static void grouped_cb(pmix_status_t status, uint64_t cid, void *cbdata)
{
    grouped_t *g = cbdata;

    g->calls++;
    g->status = status;
    g->cid = cid;
}

static pmix_status_t construct(pg_engine_t *e, pmix_rank_t who, const char *name,
                               const pmix_rank_t *ranks, size_t n, grouped_t *g)
{
    pg_proc_t members[8];
    pg_proc_t self = P("ns", who);

    for (size_t i = 0; i < n; i++)
        members[i] = P("ns", ranks[i]);
    memset(g, 0, sizeof(*g));
    return pg_group_construct(e, &self, name, members, n, NULL, 0, 0, 0, grouped_cb, g);
}

static pmix_status_t destruct(pg_engine_t *e, pmix_rank_t who, const char *name, grouped_t *g)
{
    pg_proc_t self = P("ns", who);

    memset(g, 0, sizeof(*g));
    return pg_group_destruct(e, &self, name, 0, 0, grouped_cb, g);
}

static const pmix_rank_t pair[2] = { 1, 2 };

static void test_construct_completes_when_all_joined_with_one_context_id(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    grouped_t a, b, c, d;
    size_t n = 0;

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 4, 1, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 2, &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(a.calls, 0); /* waits for rank 2 */
    CU_ASSERT_PTR_NULL(pg_group_members(e, "g", &n));
    CU_ASSERT_EQUAL(construct(e, 2, "g", pair, 2, &b), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(a.calls, 1);
    CU_ASSERT_EQUAL(b.calls, 1);
    CU_ASSERT_EQUAL(a.status, PMIX_SUCCESS);
    CU_ASSERT_EQUAL(b.status, PMIX_SUCCESS);
    CU_ASSERT_NOT_EQUAL(a.cid, 0);
    CU_ASSERT_EQUAL(a.cid, b.cid);
    const pg_proc_t *m = pg_group_members(e, "g", &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(m[0].rank, 1);
    CU_ASSERT_EQUAL(m[1].rank, 2);
    /* a second group gets another id */
    CU_ASSERT_EQUAL(construct(e, 1, "h", pair, 2, &c), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 2, "h", pair, 2, &d), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(c.status, PMIX_SUCCESS);
    CU_ASSERT_NOT_EQUAL(c.cid, a.cid);
    pg_engine_free(e);
}

/* What each member gives at construct (PMIX_GROUP_INFO) is there for all
 * of them once the group exists, as given, in join order; a refused second
 * join changes nothing.  The names of the groups that exist are listed. */
static void test_construct_shares_what_members_give(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    pg_proc_t one = P("ns", 1), two = P("ns", 2), members[2] = { P("ns", 1), P("ns", 2) };
    grouped_t a, b, c;
    size_t cursor = 0, size;
    const void *data;
    pg_proc_t who;

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 4, 1, NULL), PMIX_SUCCESS);
    memset(&a, 0, sizeof(a));
    CU_ASSERT_EQUAL(pg_group_construct(e, &two, "g", members, 2, "from2", 6, 0, 0, grouped_cb,
                                       &a), PMIX_SUCCESS);
    CU_ASSERT_FALSE(pg_group_shared_next(e, "g", &cursor, &who, &data, &size)); /* not yet */
    CU_ASSERT_EQUAL(pg_group_construct(e, &two, "g", members, 2, "again", 6, 0, 0, grouped_cb,
                                       &c), PMIX_ERR_EXISTS);
    CU_ASSERT_PTR_NULL(pg_group_next(e, &cursor));
    CU_ASSERT_EQUAL(pg_group_construct(e, &one, "g", members, 2, "from1", 6, 0, 0, grouped_cb,
                                       &b), PMIX_SUCCESS);
    CU_ASSERT(a.status == PMIX_SUCCESS && b.status == PMIX_SUCCESS);
    CU_ASSERT_TRUE_FATAL(pg_group_shared_next(e, "g", &cursor, &who, &data, &size));
    CU_ASSERT(who.rank == 2 && size == 6 && strcmp(data, "from2") == 0);
    CU_ASSERT_TRUE_FATAL(pg_group_shared_next(e, "g", &cursor, &who, &data, &size));
    CU_ASSERT(who.rank == 1 && size == 6 && strcmp(data, "from1") == 0);
    CU_ASSERT_FALSE(pg_group_shared_next(e, "g", &cursor, &who, &data, &size));
    /* a member that gives nothing is not listed */
    CU_ASSERT_EQUAL(construct(e, 1, "h", pair, 2, &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_group_construct(e, &two, "h", members, 2, "x", 2, 0, 0, grouped_cb, &b),
                    PMIX_SUCCESS);
    cursor = 0;
    CU_ASSERT_TRUE(pg_group_shared_next(e, "h", &cursor, &who, &data, &size) && who.rank == 2);
    CU_ASSERT_FALSE(pg_group_shared_next(e, "h", &cursor, &who, &data, &size));
    cursor = 0;
    CU_ASSERT_STRING_EQUAL(pg_group_next(e, &cursor), "g");
    CU_ASSERT_STRING_EQUAL(pg_group_next(e, &cursor), "h");
    CU_ASSERT_PTR_NULL(pg_group_next(e, &cursor));
    pg_engine_free(e);
}

static void test_refusals_leave_no_trace(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    grouped_t a, b;
    const pmix_rank_t other[2] = { 1, 3 };
    size_t n;

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 4, 1, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 0, "g", pair, 2, &a), PMIX_ERR_BAD_PARAM); /* not a member */
    CU_ASSERT_EQUAL(construct(e, 1, "", pair, 2, &a), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 0, &a), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(destruct(e, 1, "g", &a), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 2, &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 2, &b), PMIX_ERR_EXISTS); /* joined twice */
    CU_ASSERT_EQUAL(construct(e, 2, "g", other, 2, &b), PMIX_ERR_BAD_PARAM); /* other set */
    CU_ASSERT_EQUAL(a.calls, 0);
    CU_ASSERT_EQUAL(construct(e, 2, "g", pair, 2, &b), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(b.status, PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 2, &a), PMIX_ERR_EXISTS); /* it exists */
    CU_ASSERT_PTR_NOT_NULL(pg_group_members(e, "g", &n));
    pg_engine_free(e);
}

static void test_destruct_is_collective_and_frees_the_name(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    grouped_t a, b;
    size_t n;

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 4, 1, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 2, &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 2, "g", pair, 2, &b), PMIX_SUCCESS);
    uint64_t first = a.cid;
    CU_ASSERT_EQUAL(destruct(e, 0, "g", &a), PMIX_ERR_BAD_PARAM); /* not a member */
    CU_ASSERT_EQUAL(destruct(e, 1, "g", &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(a.calls, 0);
    CU_ASSERT_PTR_NOT_NULL(pg_group_members(e, "g", &n));
    CU_ASSERT_EQUAL(destruct(e, 2, "g", &b), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(a.status, PMIX_SUCCESS);
    CU_ASSERT_EQUAL(b.calls, 1);
    CU_ASSERT_PTR_NULL(pg_group_members(e, "g", &n));
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 2, &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 2, "g", pair, 2, &b), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(a.status, PMIX_SUCCESS);
    CU_ASSERT_NOT_EQUAL(a.cid, first);
    pg_engine_free(e);
}

static void test_member_lost_fails_the_others(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    grouped_t a, b;
    pg_proc_t two = P("ns", 2);
    size_t n;

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 4, 1, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 2, &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_lost(e, &two), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(a.calls, 1);
    CU_ASSERT_EQUAL(a.status, PMIX_ERR_LOST_CONNECTION);
    CU_ASSERT_PTR_NULL(pg_group_members(e, "g", &n));
    /* the failed construction left nothing: the name is free again */
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 2, &b), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(b.calls, 1); /* rank 2 is gone: fails at once */
    CU_ASSERT_EQUAL(b.status, PMIX_ERR_LOST_CONNECTION);
    pg_engine_free(e);
}

static void test_group_never_meets_a_plain_fence(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    grouped_t a;
    fenced_t f;
    pg_proc_t two = P("ns", 2);
    pg_proc_t parts[2] = { P("ns", 1), P("ns", 2) };

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 4, 1, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 2, &a), PMIX_SUCCESS);
    memset(&f, 0, sizeof(f));
    CU_ASSERT_EQUAL(pg_fence_join(e, &two, parts, 2, 0, 0, 0, fenced_cb, &f), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(a.calls, 0); /* rank 2's fence is not its group join */
    CU_ASSERT_EQUAL(f.calls, 0);
    pg_engine_free(e); /* both end with JOB_TERMINATED */
    CU_ASSERT_EQUAL(a.status, PMIX_ERR_JOB_TERMINATED);
    CU_ASSERT_EQUAL(f.status, PMIX_ERR_JOB_TERMINATED);
}

/* A group's name stands for its members in a fence ({name, WILDCARD}, as
 * OpenPMIx's asyncgroup fences its group): the same fence as one over the
 * members listed. */
static void test_fence_over_a_group_name_spans_its_members(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    grouped_t a, b;
    fenced_t f1, f2;
    pg_proc_t one = P("ns", 1), two = P("ns", 2);
    pg_proc_t grp = P("g", PMIX_RANK_WILDCARD), grp_rank = P("g", 0);
    pg_proc_t listed[2] = { P("ns", 1), P("ns", 2) };

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 4, 1, NULL), PMIX_SUCCESS);
    memset(&f1, 0, sizeof(f1));
    /* no such group yet: an unknown nspace */
    CU_ASSERT_EQUAL(pg_fence_join(e, &one, &grp, 1, 0, 0, 0, fenced_cb, &f1), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 2, &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 2, "g", pair, 2, &b), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_fence_join(e, &one, &grp_rank, 1, 0, 0, 0, fenced_cb, &f1),
                    PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_fence_join(e, &one, &grp, 1, 0, 0, 0, fenced_cb, &f1), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(f1.calls, 0); /* waits for rank 2 */
    memset(&f2, 0, sizeof(f2));
    CU_ASSERT_EQUAL(pg_fence_join(e, &two, listed, 2, 0, 0, 0, fenced_cb, &f2), PMIX_SUCCESS);
    CU_ASSERT(f1.calls == 1 && f1.status == PMIX_SUCCESS);
    CU_ASSERT(f2.calls == 1 && f2.status == PMIX_SUCCESS);
    pg_engine_free(e);
}

static void test_member_served_elsewhere_is_refused(void)
{
    static const bool served[2] = { true, false };
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    grouped_t a;
    const pmix_rank_t across[2] = { 0, 3 }; /* node 0 and node 1 */

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 4, 2, served), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 0, "g", across, 2, &a), PMIX_ERR_NOT_SUPPORTED);
    CU_ASSERT_EQUAL(a.calls, 0);
    pg_engine_free(e);
}

/* ---- across engines (the host's group hook) -------------------------------- */

/* What one engine's host saw: the collectives handed to it (the last one
 * kept, its shares copied) and the leaves passed on. */
typedef struct {
    int groups;
    pg_host_group_t last;
    char tag[32];
    char shares[256];
    int lefts;
    pmix_rank_t left;
    int invites;
    size_t ninvited;
    int cancels;
    uint64_t cancelled;
} xhost_t;

static void xhost_group(void *ctx, const pg_host_group_t *g)
{
    xhost_t *h = ctx;

    h->groups++;
    h->last = *g;
    snprintf(h->tag, sizeof(h->tag), "%s", g->tag);
    CU_ASSERT_FATAL(g->size <= sizeof(h->shares));
    if (g->size > 0)
        memcpy(h->shares, g->shares, g->size);
}

static void xhost_left(void *ctx, const pg_proc_t *proc, const char *name)
{
    xhost_t *h = ctx;

    (void)name;
    h->lefts++;
    h->left = proc->rank;
}

static void xhost_invite(void *ctx, const char *name, const pg_proc_t *leader,
                         const pg_proc_t *members, size_t nmembers)
{
    xhost_t *h = ctx;

    (void)name;
    (void)leader;
    (void)members;
    h->invites++;
    h->ninvited = nmembers;
}

static void xhost_cancel(void *ctx, uint64_t id)
{
    xhost_t *h = ctx;

    h->cancels++;
    h->cancelled = id;
}

static const pg_host_ops_t xhost_ops = { .group = xhost_group, .group_left = xhost_left,
                                         .group_invite = xhost_invite,
                                         .group_cancel = xhost_cancel };

/* Two engines of one job: node 0 serves ranks 0-1, node 1 ranks 2-3. */
static void xengines(pg_engine_t **e, xhost_t *h)
{
    static const bool served[2][2] = { { true, false }, { false, true } };

    for (int n = 0; n < 2; n++) {
        memset(&h[n], 0, sizeof(h[n]));
        e[n] = pg_engine_new(&xhost_ops, &h[n]);
        CU_ASSERT_EQUAL_FATAL(job_block(e[n], "ns", 4, 2, served[n]), PMIX_SUCCESS);
    }
}

/* The host settles both engines' last collective with `cid` and both
 * engines' blobs, as the hub does (node 1 first: the order is the host's). */
static void xhost_settle(pg_engine_t **e, xhost_t *h, uint64_t cid)
{
    char all[512];
    size_t size = h[0].last.size + h[1].last.size;

    memcpy(all, h[0].shares, h[0].last.size);
    memcpy(all + h[0].last.size, h[1].shares, h[1].last.size);
    CU_ASSERT_EQUAL(pg_group_host_done(e[1], h[1].last.id, PMIX_SUCCESS, cid, all, size),
                    PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_group_host_done(e[0], h[0].last.id, PMIX_SUCCESS, cid, all, size),
                    PMIX_SUCCESS);
}

static void test_group_across_engines_settled_by_the_host(void)
{
    pg_engine_t *e[2];
    xhost_t h[2];
    grouped_t a, b, c, d;
    pg_proc_t members[3] = { P("ns", 0), P("ns", 1), P("ns", 2) };
    pg_proc_t r0 = P("ns", 0), r1 = P("ns", 1), r2 = P("ns", 2), who;
    size_t n = 0, cursor = 0, size;
    const void *data;

    xengines(e, h);
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    memset(&c, 0, sizeof(c));
    CU_ASSERT_EQUAL(pg_group_construct(e[0], &r0, "g", members, 3, "s0", 3, 0, 0, grouped_cb, &a),
                    PMIX_SUCCESS);
    CU_ASSERT_EQUAL(h[0].groups, 0); /* rank 1, also served here, has not joined */
    CU_ASSERT_EQUAL(pg_group_construct(e[0], &r1, "g", members, 3, NULL, 0, 0, 0, grouped_cb, &b),
                    PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_group_construct(e[1], &r2, "g", members, 3, "s2", 3, 0, 0, grouped_cb, &c),
                    PMIX_SUCCESS);
    /* each engine hands its part to the host once; nobody is answered yet */
    CU_ASSERT(h[0].groups == 1 && h[1].groups == 1);
    CU_ASSERT_STRING_EQUAL(h[0].tag, "c:g");
    CU_ASSERT(h[0].last.nmembers == 3 && h[0].last.nlocal == 2 && h[1].last.nlocal == 1);
    CU_ASSERT(a.calls == 0 && b.calls == 0 && c.calls == 0);
    /* the host settles both with its id and every engine's shares */
    xhost_settle(e, h, 77);
    CU_ASSERT_EQUAL(pg_group_host_done(e[1], h[1].last.id, PMIX_SUCCESS, 77, NULL, 0),
                    PMIX_ERR_NOT_FOUND); /* settled already */
    CU_ASSERT(a.calls == 1 && a.status == PMIX_SUCCESS && a.cid == 77);
    CU_ASSERT(b.calls == 1 && b.cid == 77 && c.calls == 1 && c.cid == 77);
    /* node 1 reads rank 0's share too */
    int found = 0;
    while (pg_group_shared_next(e[1], "g", &cursor, &who, &data, &size))
        found += (who.rank == 0 && strcmp(data, "s0") == 0) + (who.rank == 2 && strcmp(data, "s2") == 0);
    CU_ASSERT_EQUAL(found, 2);
    /* rank 1 leaves on node 0: the host hears, node 1 follows silently */
    CU_ASSERT_EQUAL(pg_group_leave(e[0], &r1, "g"), PMIX_SUCCESS);
    CU_ASSERT(h[0].lefts == 1 && h[0].left == 1);
    CU_ASSERT_EQUAL(pg_group_member_left(e[1], &r1, "g"), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(h[1].lefts, 0);
    CU_ASSERT(pg_group_members(e[1], "g", &n) != NULL && n == 2);
    /* the destruct spans ranks 0 and 2, through the host again */
    memset(&d, 0, sizeof(d));
    CU_ASSERT_EQUAL(destruct(e[0], 0, "g", &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(destruct(e[1], 2, "g", &d), PMIX_SUCCESS);
    CU_ASSERT(h[0].groups == 2 && h[1].groups == 2 && h[1].last.nmembers == 2);
    CU_ASSERT_STRING_EQUAL(h[1].tag, "d:g");
    CU_ASSERT_EQUAL(pg_group_host_done(e[0], h[0].last.id, PMIX_SUCCESS, 0, NULL, 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_group_host_done(e[1], h[1].last.id, PMIX_SUCCESS, 0, NULL, 0), PMIX_SUCCESS);
    CU_ASSERT(a.calls == 1 && a.status == PMIX_SUCCESS && d.calls == 1 && d.status == PMIX_SUCCESS);
    CU_ASSERT_PTR_NULL(pg_group_members(e[0], "g", &n));
    CU_ASSERT_PTR_NULL(pg_group_members(e[1], "g", &n));
    /* node 1's only member leaves: node 1 forgets the group (it takes no
     * part in the destruct), and its name is free there again */
    const pmix_rank_t across[2] = { 0, 2 };
    CU_ASSERT_EQUAL(construct(e[0], 0, "k", across, 2, &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e[1], 2, "k", across, 2, &c), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_group_host_done(e[0], h[0].last.id, PMIX_SUCCESS, 78, NULL, 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_group_host_done(e[1], h[1].last.id, PMIX_SUCCESS, 78, NULL, 0), PMIX_SUCCESS);
    CU_ASSERT(a.cid == 78 && c.cid == 78);
    CU_ASSERT_EQUAL(pg_group_leave(e[1], &r2, "k"), PMIX_SUCCESS);
    CU_ASSERT_PTR_NULL(pg_group_members(e[1], "k", &n));
    CU_ASSERT_EQUAL(pg_group_member_left(e[0], &r2, "k"), PMIX_SUCCESS);
    CU_ASSERT(pg_group_members(e[0], "k", &n) != NULL && n == 1);
    CU_ASSERT_EQUAL(construct(e[1], 2, "k", across, 2, &c), PMIX_SUCCESS);
    pg_engine_free(e[0]);
    pg_engine_free(e[1]);
}

static void test_invite_across_engines_settled_by_the_host(void)
{
    pg_engine_t *e[2];
    xhost_t h[2];
    grouped_t lead, one, two;
    pg_proc_t r0 = P("ns", 0), r1 = P("ns", 1), r2 = P("ns", 2);
    pg_proc_t invitees[2] = { P("ns", 1), P("ns", 2) };
    size_t n = 0;

    xengines(e, h);
    memset(&lead, 0, sizeof(lead));
    CU_ASSERT_EQUAL(pg_group_invite(e[0], &r0, "inv", invitees, 2, 0, 0, grouped_cb, &lead),
                    PMIX_SUCCESS);
    CU_ASSERT(h[0].invites == 1 && h[0].ninvited == 3); /* the leader and both invitees */
    /* node 1 holds the invitation its invitee answers */
    CU_ASSERT_EQUAL(pg_group_invited(e[1], "inv", &r0, invitees, 2), PMIX_SUCCESS);
    memset(&one, 0, sizeof(one));
    memset(&two, 0, sizeof(two));
    CU_ASSERT_EQUAL(pg_group_join(e[0], &r1, "inv", &r0, false, 0, 0, grouped_cb, &one),
                    PMIX_SUCCESS);
    CU_ASSERT(one.calls == 1 && one.status == PMIX_SUCCESS); /* a decline: at once */
    CU_ASSERT_EQUAL(pg_group_join(e[1], &r2, "inv", &r0, true, 0, 0, grouped_cb, &two),
                    PMIX_SUCCESS);
    CU_ASSERT(h[0].groups == 1 && h[1].groups == 1 && h[0].tag[0] == 'i');
    CU_ASSERT(lead.calls == 0 && two.calls == 0);
    /* the answers travel with the collective: each engine learns the other's */
    xhost_settle(e, h, 90);
    CU_ASSERT(lead.calls == 1 && lead.status == PMIX_ERR_PARTIAL_SUCCESS && lead.cid == 90);
    CU_ASSERT(two.calls == 1 && two.status == PMIX_SUCCESS && two.cid == 90);
    for (int k = 0; k < 2; k++) {
        const pg_proc_t *m = pg_group_members(e[k], "inv", &n);
        CU_ASSERT(m != NULL && n == 2 && m[0].rank == 0 && m[1].rank == 2);
    }
    /* an engine serving no invitee keeps no invitation */
    CU_ASSERT_EQUAL(pg_group_invited(e[1], "other", &r0, invitees, 1), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_group_invited(e[1], "other", &r0, invitees, 1), PMIX_SUCCESS); /* not EXISTS */
    pg_engine_free(e[0]);
    pg_engine_free(e[1]);
}

static void test_group_across_engines_failed_by_the_host(void)
{
    pg_engine_t *e[2];
    xhost_t h[2];
    grouped_t a;
    const pmix_rank_t across[2] = { 0, 3 };

    xengines(e, h);
    CU_ASSERT_EQUAL(construct(e[0], 0, "g", across, 2, &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(h[0].groups, 1);
    /* a malformed share blob fails the construct, leaving no group */
    CU_ASSERT_EQUAL(pg_group_host_done(e[0], h[0].last.id, PMIX_SUCCESS, 5, "\0\0\0\x40", 4),
                    PMIX_SUCCESS);
    CU_ASSERT(a.calls == 1 && a.status == PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_group_next(e[0], &(size_t){ 0 }), NULL);
    /* the host's failure reaches the joiner; the name is free again */
    CU_ASSERT_EQUAL(construct(e[0], 0, "g", across, 2, &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_group_host_done(e[0], h[0].last.id, PMIX_ERR_UNREACH, 0, NULL, 0),
                    PMIX_SUCCESS);
    CU_ASSERT(a.calls == 1 && a.status == PMIX_ERR_UNREACH);
    /* PMIX_TIMEOUT still bounds it while the host settles it */
    pg_proc_t r0 = P("ns", 0), members[2] = { P("ns", 0), P("ns", 3) };
    memset(&a, 0, sizeof(a));
    CU_ASSERT_EQUAL(pg_group_construct(e[0], &r0, "g", members, 2, NULL, 0, 1000, 0, grouped_cb,
                                       &a), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_engine_next_deadline(e[0]), 1000);
    pg_engine_expire(e[0], 1000);
    CU_ASSERT(a.calls == 1 && a.status == PMIX_ERR_TIMEOUT);
    CU_ASSERT(h[0].cancels == 1 && h[0].cancelled == h[0].last.id); /* the host forgets it */
    CU_ASSERT_EQUAL(pg_group_host_done(e[0], h[0].last.id, PMIX_SUCCESS, 9, NULL, 0),
                    PMIX_ERR_NOT_FOUND); /* too late */
    CU_ASSERT_EQUAL(pg_group_next(e[0], &(size_t){ 0 }), NULL);
    pg_engine_free(e[0]);
    pg_engine_free(e[1]);
}

/* ---- invite / join / leave ------------------------------------------------ */

/* What one process heard: the last event, and how many; and the source
 * of the last PMIX_GROUP_INVITE_FAILED (other events may follow it). */
typedef struct {
    int calls;
    pmix_status_t status;
    pmix_rank_t source;
    char group[64];
    int nfailed;
    pmix_rank_t failed;
    size_t cid; /* PMIX_GROUP_CONTEXT_ID, when the event names one */
} heard_t;

static void heard_cb(const pg_event_t *ev, void *cbdata)
{
    heard_t *h = cbdata;

    h->calls++;
    h->status = ev->status;
    h->source = ev->source.rank;
    h->group[0] = '\0';
    for (size_t i = 0; i < ev->ndetails; i++)
        if (strcmp(ev->details[i].key, PMIX_GROUP_ID) == 0 &&
            ev->details[i].value.size < sizeof(h->group))
            memcpy(h->group, ev->details[i].value.data, ev->details[i].value.size + 1);
        else if (strcmp(ev->details[i].key, PMIX_GROUP_CONTEXT_ID) == 0 &&
                 ev->details[i].value.size == sizeof(h->cid))
            memcpy(&h->cid, ev->details[i].value.data, sizeof(h->cid));
    if (ev->status == PMIX_GROUP_INVITE_FAILED && strcmp(h->group, "g") == 0) {
        h->nfailed++;
        h->failed = ev->source.rank;
    }
}

/* A 4-rank job whose every rank records the events it hears. */
static pg_engine_t *listening_job(heard_t heard[4])
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    uint64_t id;

    memset(heard, 0, 4 * sizeof(*heard));
    CU_ASSERT_FATAL(job_block(e, "ns", 4, 1, NULL) == PMIX_SUCCESS);
    for (pmix_rank_t r = 0; r < 4; r++) {
        pg_proc_t p = P("ns", r);
        CU_ASSERT(pg_event_subscribe(e, &p, heard_cb, &heard[r], &id) == PMIX_SUCCESS);
    }
    return e;
}

static pmix_status_t invite(pg_engine_t *e, pmix_rank_t who, const char *name,
                            const pmix_rank_t *ranks, size_t n, pg_time_t timeout,
                            grouped_t *g)
{
    pg_proc_t invitees[8];
    pg_proc_t self = P("ns", who);

    for (size_t i = 0; i < n; i++)
        invitees[i] = P("ns", ranks[i]);
    memset(g, 0, sizeof(*g));
    return pg_group_invite(e, &self, name, invitees, n, timeout, 0, grouped_cb, g);
}

static pmix_status_t join(pg_engine_t *e, pmix_rank_t who, const char *name, pmix_rank_t leader,
                          bool accept, grouped_t *g)
{
    pg_proc_t self = P("ns", who), lead = P("ns", leader);

    memset(g, 0, sizeof(*g));
    return pg_group_join(e, &self, name, &lead, accept, 0, 0, grouped_cb, g);
}

static pmix_status_t leave(pg_engine_t *e, pmix_rank_t who, const char *name)
{
    pg_proc_t self = P("ns", who);

    return pg_group_leave(e, &self, name);
}

static void test_invite_makes_group_of_leader_and_accepters(void)
{
    heard_t h[4];
    pg_engine_t *e = listening_job(h);
    grouped_t lead, one, two, d0, d1;
    size_t n = 0;

    CU_ASSERT_EQUAL(invite(e, 0, "g", pair, 2, 0, &lead), PMIX_SUCCESS);
    /* the invitees hear of it from the leader, nobody else does */
    CU_ASSERT(h[1].calls == 1 && h[1].status == PMIX_GROUP_INVITED && h[1].source == 0);
    CU_ASSERT_STRING_EQUAL(h[1].group, "g");
    CU_ASSERT(h[2].calls == 1 && h[2].status == PMIX_GROUP_INVITED);
    CU_ASSERT(h[0].calls == 0 && h[3].calls == 0);
    CU_ASSERT_PTR_NULL(pg_group_members(e, "g", &n)); /* not a group yet */
    CU_ASSERT_EQUAL(join(e, 1, "g", 0, true, &one), PMIX_SUCCESS);
    CU_ASSERT(h[0].calls == 1 && h[0].status == PMIX_GROUP_INVITE_ACCEPTED && h[0].source == 1);
    CU_ASSERT_STRING_EQUAL(h[0].group, "g");
    CU_ASSERT(lead.calls == 0 && one.calls == 0); /* rank 2 has not answered */
    CU_ASSERT_EQUAL(join(e, 2, "g", 0, false, &two), PMIX_SUCCESS);
    CU_ASSERT(h[0].calls == 2 && h[0].status == PMIX_GROUP_INVITE_DECLINED && h[0].source == 2);
    CU_ASSERT(two.calls == 1 && two.status == PMIX_SUCCESS && two.cid == 0);
    /* everyone answered: the leader learns some declined; both members get one id */
    CU_ASSERT(lead.calls == 1 && lead.status == PMIX_ERR_PARTIAL_SUCCESS);
    CU_ASSERT(one.calls == 1 && one.status == PMIX_SUCCESS);
    CU_ASSERT(lead.cid != 0 && lead.cid == one.cid);
    const pg_proc_t *m = pg_group_members(e, "g", &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT(m[0].rank == 0 && m[1].rank == 1);
    /* it is a group like a constructed one: the decliner is not in it */
    CU_ASSERT_EQUAL(destruct(e, 2, "g", &d0), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(destruct(e, 0, "g", &d0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(destruct(e, 1, "g", &d1), PMIX_SUCCESS);
    CU_ASSERT(d0.status == PMIX_SUCCESS && d1.status == PMIX_SUCCESS && d0.calls == 1);
    CU_ASSERT_PTR_NULL(pg_group_members(e, "g", &n));
    /* all accept: plain success */
    CU_ASSERT_EQUAL(invite(e, 3, "h", pair, 2, 0, &lead), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(join(e, 1, "h", 3, true, &one), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(join(e, 2, "h", 3, true, &two), PMIX_SUCCESS);
    CU_ASSERT(lead.status == PMIX_SUCCESS && two.status == PMIX_SUCCESS && lead.cid == two.cid);
    CU_ASSERT(pg_group_members(e, "h", &n) != NULL && n == 3);
    pg_engine_free(e);
}

/* OpenPMIx's asyncgroup: the leader lists itself among the invitees (it
 * is the leader all the same, and not invited), and the accepters wait for
 * PMIX_GROUP_CONSTRUCT_COMPLETE, which names the group and its context id;
 * the leader learns from its invite's answer, not from the event. */
static void test_invite_listing_the_leader_completes_with_an_event(void)
{
    heard_t h[4];
    pg_engine_t *e = listening_job(h);
    const pmix_rank_t with_leader[3] = { 0, 2, 3 };
    grouped_t lead, two, three;
    size_t n = 0;

    CU_ASSERT_EQUAL(invite(e, 0, "g", with_leader, 3, 0, &lead), PMIX_SUCCESS);
    CU_ASSERT(h[2].calls == 1 && h[2].status == PMIX_GROUP_INVITED && h[2].source == 0);
    CU_ASSERT(h[3].calls == 1 && h[3].status == PMIX_GROUP_INVITED);
    CU_ASSERT(h[0].calls == 0 && h[1].calls == 0); /* the leader is not invited */
    CU_ASSERT_EQUAL(join(e, 2, "g", 0, true, &two), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(join(e, 3, "g", 0, true, &three), PMIX_SUCCESS);
    CU_ASSERT(lead.calls == 1 && lead.status == PMIX_SUCCESS && lead.cid != 0);
    CU_ASSERT(h[2].calls == 2 && h[2].status == PMIX_GROUP_CONSTRUCT_COMPLETE);
    CU_ASSERT(h[2].source == 0 && h[2].cid == lead.cid);
    CU_ASSERT_STRING_EQUAL(h[2].group, "g");
    CU_ASSERT(h[3].calls == 2 && h[3].status == PMIX_GROUP_CONSTRUCT_COMPLETE);
    /* the leader heard the two acceptances only; rank 1 nothing */
    CU_ASSERT(h[0].calls == 2 && h[0].status == PMIX_GROUP_INVITE_ACCEPTED);
    CU_ASSERT_EQUAL(h[1].calls, 0);
    CU_ASSERT(pg_group_members(e, "g", &n) != NULL && n == 3);
    pg_engine_free(e);
}

static void test_bad_invites_and_joins_are_refused(void)
{
    heard_t h[4];
    pg_engine_t *e = listening_job(h);
    grouped_t lead, g;
    const pmix_rank_t only_self[1] = { 0 }, twice[2] = { 1, 1 };
    const pmix_rank_t wild[1] = { PMIX_RANK_WILDCARD };

    CU_ASSERT_EQUAL(join(e, 1, "g", 0, true, &g), PMIX_ERR_NOT_FOUND); /* no invitation */
    CU_ASSERT_EQUAL(invite(e, 0, "g", only_self, 1, 0, &lead), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(invite(e, 0, "g", twice, 2, 0, &lead), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(invite(e, 0, "g", wild, 1, 0, &lead), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(invite(e, 0, "", pair, 2, 0, &lead), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(invite(e, 0, "g", pair, 0, 0, &lead), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(h[1].calls, 0); /* refused invites reach nobody */
    CU_ASSERT_EQUAL(invite(e, 0, "g", pair, 2, 0, &lead), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(invite(e, 3, "g", pair, 2, 0, &g), PMIX_ERR_EXISTS);
    CU_ASSERT_EQUAL(construct(e, 1, "g", pair, 2, &g), PMIX_ERR_EXISTS);
    CU_ASSERT_EQUAL(join(e, 3, "g", 0, true, &g), PMIX_ERR_BAD_PARAM); /* not invited */
    CU_ASSERT_EQUAL(join(e, 0, "g", 0, true, &g), PMIX_ERR_BAD_PARAM); /* the leader */
    CU_ASSERT_EQUAL(join(e, 1, "g", 3, true, &g), PMIX_ERR_BAD_PARAM); /* not its leader */
    CU_ASSERT_EQUAL(destruct(e, 0, "g", &g), PMIX_ERR_NOT_FOUND);     /* not made yet */
    CU_ASSERT_EQUAL(leave(e, 0, "g"), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(join(e, 1, "g", 0, true, &g), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(join(e, 1, "g", 0, false, &g), PMIX_ERR_EXISTS); /* answered already */
    CU_ASSERT_EQUAL(h[0].calls, 1); /* the refused answers reached nobody */
    CU_ASSERT_EQUAL(lead.calls, 0);
    pg_engine_free(e); /* the pending invite ends with the job */
    CU_ASSERT(lead.calls == 1 && lead.status == PMIX_ERR_JOB_TERMINATED);
}

static void test_invitee_lost_fails_the_invite(void)
{
    heard_t h[4];
    pg_engine_t *e = listening_job(h);
    grouped_t lead, one, again;
    pg_proc_t two = P("ns", 2);
    size_t n;

    CU_ASSERT_EQUAL(invite(e, 0, "g", pair, 2, 0, &lead), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(join(e, 1, "g", 0, true, &one), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_lost(e, &two), PMIX_SUCCESS);
    CU_ASSERT(lead.calls == 1 && lead.status == PMIX_GROUP_INVITE_FAILED);
    CU_ASSERT(one.calls == 1 && one.status == PMIX_GROUP_INVITE_FAILED);
    /* the leader heard which invitee failed it, and only the leader did */
    CU_ASSERT(h[0].nfailed == 1 && h[0].failed == 2);
    CU_ASSERT(h[1].nfailed == 0 && h[3].nfailed == 0);
    CU_ASSERT_PTR_NULL(pg_group_members(e, "g", &n));
    /* the name is free; an invite of a gone process fails at once */
    CU_ASSERT_EQUAL(invite(e, 0, "g", pair, 2, 0, &again), PMIX_SUCCESS);
    CU_ASSERT(again.calls == 1 && again.status == PMIX_GROUP_INVITE_FAILED);
    pg_engine_free(e);
}

/* A leader that goes away is not replaced: the invite still ends once
 * every invitee answered (no hang), and the group's destruct then fails. */
static void test_leader_lost_does_not_hang_the_accepters(void)
{
    heard_t h[4];
    pg_engine_t *e = listening_job(h);
    grouped_t lead, one, two, d;
    pg_proc_t zero = P("ns", 0);

    CU_ASSERT_EQUAL(invite(e, 0, "g", pair, 2, 0, &lead), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(join(e, 1, "g", 0, true, &one), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_lost(e, &zero), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(one.calls, 0);
    CU_ASSERT_EQUAL(join(e, 2, "g", 0, false, &two), PMIX_SUCCESS);
    CU_ASSERT(one.calls == 1 && one.status == PMIX_SUCCESS);
    CU_ASSERT_EQUAL(destruct(e, 1, "g", &d), PMIX_SUCCESS);
    CU_ASSERT(d.calls == 1 && d.status == PMIX_ERR_LOST_CONNECTION);
    pg_engine_free(e);
}

static void test_invite_times_out(void)
{
    heard_t h[4];
    pg_engine_t *e = listening_job(h);
    grouped_t lead, one;
    size_t n;

    CU_ASSERT_EQUAL(invite(e, 0, "g", pair, 2, 1000, &lead), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_engine_next_deadline(e), 1000);
    CU_ASSERT_EQUAL(join(e, 1, "g", 0, true, &one), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_engine_expire(e, 999), 0);
    CU_ASSERT_EQUAL(lead.calls, 0);
    pg_engine_expire(e, 1000);
    CU_ASSERT(lead.calls == 1 && lead.status == PMIX_ERR_TIMEOUT);
    CU_ASSERT(one.calls == 1 && one.status == PMIX_ERR_TIMEOUT);
    CU_ASSERT_PTR_NULL(pg_group_members(e, "g", &n));
    CU_ASSERT_EQUAL(join(e, 2, "g", 0, true, &one), PMIX_ERR_NOT_FOUND); /* too late */
    pg_engine_free(e);
}

static void test_leave_tells_the_others_and_shrinks_the_group(void)
{
    heard_t h[4];
    pg_engine_t *e = listening_job(h);
    grouped_t g[4];
    const pmix_rank_t wild[1] = { PMIX_RANK_WILDCARD };
    size_t n;

    for (pmix_rank_t r = 0; r < 4; r++)
        CU_ASSERT_EQUAL(construct(e, r, "all", wild, 1, &g[r]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g[3].status, PMIX_SUCCESS);
    CU_ASSERT_EQUAL(leave(e, 2, "nosuch"), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(leave(e, 2, "all"), PMIX_SUCCESS);
    for (pmix_rank_t r = 0; r < 4; r++) {
        bool told = h[r].calls == 1 && h[r].status == PMIX_GROUP_LEFT && h[r].source == 2 &&
                    strcmp(h[r].group, "all") == 0;
        CU_ASSERT(r == 2 ? h[r].calls == 0 : told);
    }
    const pg_proc_t *m = pg_group_members(e, "all", &n);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT(m[0].rank == 0 && m[1].rank == 1 && m[2].rank == 3);
    CU_ASSERT_EQUAL(leave(e, 2, "all"), PMIX_ERR_BAD_PARAM); /* not a member any more */
    /* destruct spans those left */
    CU_ASSERT_EQUAL(destruct(e, 2, "all", &g[2]), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(destruct(e, 0, "all", &g[0]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(leave(e, 1, "all"), PMIX_ERR_RESOURCE_BUSY); /* a destruct runs */
    CU_ASSERT_EQUAL(destruct(e, 1, "all", &g[1]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(destruct(e, 3, "all", &g[3]), PMIX_SUCCESS);
    CU_ASSERT(g[0].calls == 1 && g[0].status == PMIX_SUCCESS);
    CU_ASSERT_PTR_NULL(pg_group_members(e, "all", &n));
    /* the last member's leave ends the group */
    CU_ASSERT_EQUAL(construct(e, 1, "one", pair, 2, &g[1]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(construct(e, 2, "one", pair, 2, &g[2]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(leave(e, 1, "one"), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(leave(e, 2, "one"), PMIX_SUCCESS);
    CU_ASSERT_PTR_NULL(pg_group_members(e, "one", &n));
    pg_engine_free(e);
}

static const pg_cunit_test_t tests[] = {
    { "construct_completes_when_all_joined_with_one_context_id",
      test_construct_completes_when_all_joined_with_one_context_id },
    { "refusals_leave_no_trace", test_refusals_leave_no_trace },
    { "construct_shares_what_members_give", test_construct_shares_what_members_give },
    { "destruct_is_collective_and_frees_the_name",
      test_destruct_is_collective_and_frees_the_name },
    { "member_lost_fails_the_others", test_member_lost_fails_the_others },
    { "group_never_meets_a_plain_fence", test_group_never_meets_a_plain_fence },
    { "member_served_elsewhere_is_refused", test_member_served_elsewhere_is_refused },
    { "group_across_engines_settled_by_the_host", test_group_across_engines_settled_by_the_host },
    { "group_across_engines_failed_by_the_host", test_group_across_engines_failed_by_the_host },
    { "invite_across_engines_settled_by_the_host",
      test_invite_across_engines_settled_by_the_host },
    { "fence_over_a_group_name_spans_its_members",
      test_fence_over_a_group_name_spans_its_members },
    { "invite_makes_group_of_leader_and_accepters",
      test_invite_makes_group_of_leader_and_accepters },
    { "bad_invites_and_joins_are_refused", test_bad_invites_and_joins_are_refused },
    { "invite_listing_the_leader_completes_with_an_event",
      test_invite_listing_the_leader_completes_with_an_event },
    { "invitee_lost_fails_the_invite", test_invitee_lost_fails_the_invite },
    { "leader_lost_does_not_hang_the_accepters",
      test_leader_lost_does_not_hang_the_accepters },
    { "invite_times_out", test_invite_times_out },
    { "leave_tells_the_others_and_shrinks_the_group",
      test_leave_tells_the_others_and_shrinks_the_group },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "engine_group", tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
