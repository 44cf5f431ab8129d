/*
 * test_engine_group: pg_group_construct / pg_group_destruct, the engine
 * side of PMIx_Group_*.  A group is what every member agreed on at once:
 * nobody's construct completes before the last member joined, all get the
 * same context id, a member that goes away fails the others (no hang), a
 * group collective never meets a plain fence of the same processes, and
 * a group over processes another engine serves is refused up front.
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
    return pg_group_construct(e, &self, name, members, n, 0, 0, grouped_cb, g);
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

static const pg_cunit_test_t tests[] = {
    { "construct_completes_when_all_joined_with_one_context_id",
      test_construct_completes_when_all_joined_with_one_context_id },
    { "refusals_leave_no_trace", test_refusals_leave_no_trace },
    { "destruct_is_collective_and_frees_the_name",
      test_destruct_is_collective_and_frees_the_name },
    { "member_lost_fails_the_others", test_member_lost_fails_the_others },
    { "group_never_meets_a_plain_fence", test_group_never_meets_a_plain_fence },
    { "member_served_elsewhere_is_refused", test_member_served_elsewhere_is_refused },
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
