/*
 * test_engine_xnode.c: the engine's rules for a job served by several
 * engines (one per node, `pmigate proxy`): direct-modex requests the host
 * answers, cancels, or holds for another node's process; the hang rule
 * that keeps a held get from deadlocking with a fence its requester must
 * join; and the data a fence over a subset carries without closing the
 * epoch of the whole-job fences.
 */
#include "tests/engine/engine_fixture.h"
#include "tests/pg_cunit.h"

#define NS "job1"

typedef struct {
    int calls, cancels;
    uint64_t id, cancelled;
    pg_proc_t requester;
    bool blocks;
} dmx_t;

static void dmodex_hook(void *ctx, const pg_host_dmodex_t *dm)
{
    dmx_t *d = ctx;
    d->calls++;
    d->id = dm->id;
    d->requester = dm->requester;
    d->blocks = dm->blocks;
}

static void cancel_hook(void *ctx, uint64_t id)
{
    dmx_t *d = ctx;
    d->cancels++;
    d->cancelled = id;
}

static const pg_host_ops_t dmx_ops = { .dmodex = dmodex_hook, .dmodex_cancel = cancel_hook };

/* Two engines of a job of 4 ranks: a serves 0-1 and asks its host (d) for
 * the others' data; b serves 2-3. */
static void two_nodes(dmx_t *d, pg_engine_t **a, pg_engine_t **b)
{
    bool a_serves[2] = { true, false }, b_serves[2] = { false, true };

    *a = pg_engine_new(&dmx_ops, d);
    *b = pg_engine_new(NULL, NULL);
    CU_ASSERT_EQUAL_FATAL(job_block(*a, NS, 4, 2, a_serves), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(job_block(*b, NS, 4, 2, b_serves), PMIX_SUCCESS);
}

/* The host learns who asks and whether it waits; a get that ends before
 * the host answered (its timeout) is cancelled once; one the host
 * answered is not. */
static void test_dmodex_request_names_requester_and_is_cancelled(void)
{
    dmx_t d = { 0 };
    pg_engine_t *a, *b;
    got_t g;
    two_nodes(&d, &a, &b);
    CU_ASSERT_EQUAL(get_ex(a, NS, 1, 3, "late", 0, 100, 1000, &g), PMIX_OPERATION_IN_PROGRESS);
    CU_ASSERT_EQUAL(d.calls, 1);
    CU_ASSERT_EQUAL(d.requester.rank, 1);
    CU_ASSERT_TRUE(d.blocks);
    uint64_t first = d.id;
    pg_engine_expire(a, 1100);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_TIMEOUT);
    CU_ASSERT_EQUAL(d.cancels, 1);
    CU_ASSERT_EQUAL(d.cancelled, first);
    CU_ASSERT_EQUAL(pg_dmodex_host_done(a, first, PMIX_SUCCESS, NULL, 0), PMIX_ERR_NOT_FOUND);
    /* answered: no cancel */
    get_ex(a, NS, 0, 2, "k", PG_GET_NONBLOCKING, 0, 0, &g);
    CU_ASSERT_FALSE(d.blocks);
    put_str(b, NS, 2, PMIX_GLOBAL, "k", "v2", 0);
    commit(b, NS, 2);
    pg_proc_t t = P(NS, 2);
    void *blob = NULL;
    size_t size = 0;
    CU_ASSERT_EQUAL(pg_proc_modex(b, &t, &blob, &size), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_dmodex_host_done(a, d.id, PMIX_SUCCESS, blob, size), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(g.value, "v2");
    CU_ASSERT_EQUAL(d.cancels, 1);
    free(blob);
    pg_engine_free(a);
    pg_engine_free(b);
}

/* A held remote get that a fence's data satisfies first is cancelled at
 * the host (the owner may stop holding it). */
static void test_dmodex_satisfied_by_fence_data_is_cancelled(void)
{
    dmx_t d = { 0 };
    pg_engine_t *a, *b;
    got_t g;
    two_nodes(&d, &a, &b);
    get_ex(a, NS, 0, 3, "card", 0, 0, 0, &g);
    CU_ASSERT_EQUAL(g.calls, 0);
    put_str(b, NS, 3, PMIX_GLOBAL, "card", "three", 0);
    commit(b, NS, 3);
    pg_proc_t t = P(NS, 3);
    void *blob = NULL;
    size_t size = 0;
    pg_proc_modex(b, &t, &blob, &size);
    CU_ASSERT_EQUAL(pg_modex_host_ingest(a, blob, size), PMIX_SUCCESS);
    pg_engine_expire(a, 0); /* the completions run at the engine's next step */
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_STRING_EQUAL(g.value, "three");
    CU_ASSERT_EQUAL(d.cancels, 1);
    CU_ASSERT_EQUAL(d.cancelled, d.id);
    free(blob);
    pg_engine_free(a);
    pg_engine_free(b);
}

/* The owner's side: a get held for another node's process ends when the
 * key is committed; pg_get_cancel drops one. */
static void test_get_for_remote_requester_and_cancel(void)
{
    bool b_serves[2] = { false, true };
    pg_engine_t *b = pg_engine_new(NULL, NULL);
    got_t g, h;
    job_block(b, NS, 4, 2, b_serves);
    CU_ASSERT_EQUAL(get_ex(b, NS, 0, 3, "k", 0, 0, 0, &g), PMIX_OPERATION_IN_PROGRESS);
    CU_ASSERT_EQUAL(get_ex(b, NS, 1, 2, "never", 0, 0, 0, &h), PMIX_OPERATION_IN_PROGRESS);
    put_str(b, NS, 3, PMIX_GLOBAL, "k", "v", 0);
    CU_ASSERT_EQUAL(g.calls, 0); /* staged is not committed */
    commit(b, NS, 3);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_STRING_EQUAL(g.value, "v");
    CU_ASSERT_EQUAL(pg_get_cancel(b, got_cb, &h, PMIX_ERR_TIMEOUT), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(h.calls, 1);
    CU_ASSERT_EQUAL(h.status, PMIX_ERR_TIMEOUT);
    CU_ASSERT_EQUAL(pg_get_cancel(b, got_cb, &h, PMIX_ERR_TIMEOUT), PMIX_ERR_NOT_FOUND);
    pg_engine_free(b);
}

/* The owner's hang rule: rank 0 (another node) waits in a get of rank 3's
 * key.  Rank 3 in a fence without rank 0 may still commit it: held.  Rank
 * 3 in a whole-job fence without it cannot: the fence needs rank 0, which
 * cannot join while it waits -- NOT_FOUND, as on one node. */
static void test_blocking_remote_get_does_not_deadlock_with_fence(void)
{
    bool b_serves[2] = { false, true };
    pg_engine_t *b = pg_engine_new(NULL, NULL);
    got_t g;
    fenced_t f[4];
    job_block(b, NS, 4, 2, b_serves);
    get_ex(b, NS, 0, 3, "k", 0, 0, 0, &g);
    pg_proc_t p2 = P(NS, 2), p3 = P(NS, 3), pair[2] = { P(NS, 2), P(NS, 3) };
    memset(f, 0, sizeof(f));
    pg_fence_join(b, &p3, pair, 2, 0, 0, 0, fenced_cb, &f[3]);
    CU_ASSERT_EQUAL(g.calls, 0);
    pg_fence_join(b, &p2, pair, 2, 0, 0, 0, fenced_cb, &f[2]);
    CU_ASSERT_EQUAL(f[3].status, PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.calls, 0);
    pg_fence_join(b, &p3, NULL, 0, 0, 0, 0, fenced_cb, &f[3]);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    pg_engine_free(b);
}

/* A get that does not block its requester (PMIx_Get_nb) leaves it free to
 * join the fence: held. */
static void test_nonblocking_remote_get_waits_through_fence(void)
{
    bool b_serves[2] = { false, true };
    pg_engine_t *b = pg_engine_new(NULL, NULL);
    got_t g;
    fenced_t f[4];
    job_block(b, NS, 4, 2, b_serves);
    get_ex(b, NS, 0, 3, "k", PG_GET_NONBLOCKING, 0, 0, &g);
    pg_proc_t p3 = P(NS, 3);
    memset(f, 0, sizeof(f));
    pg_fence_join(b, &p3, NULL, 0, 0, 0, 0, fenced_cb, &f[3]);
    CU_ASSERT_EQUAL(g.calls, 0);
    put_str(b, NS, 3, PMIX_GLOBAL, "k", "late", 0);
    commit(b, NS, 3);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_STRING_EQUAL(g.value, "late");
    pg_engine_free(b);
}

static void hold_fence(void *ctx, const pg_host_fence_t *f)
{
    *(uint64_t *)ctx = f->id;
}

/* The same with the fence handed to the host (every local member
 * joined): it still cannot complete while its remote member waits. */
static void test_blocking_remote_get_vs_fence_at_the_host(void)
{
    bool b_serves[2] = { false, true };
    uint64_t id = 0;
    pg_engine_t *b = pg_engine_new(&(pg_host_ops_t){ .fence = hold_fence }, &id);
    got_t g, ok;
    fenced_t f[4];
    job_block(b, NS, 4, 2, b_serves);
    pg_proc_t p2 = P(NS, 2), p3 = P(NS, 3);
    memset(f, 0, sizeof(f));
    pg_fence_join(b, &p2, NULL, 0, 0, 0, 0, fenced_cb, &f[2]);
    pg_fence_join(b, &p3, NULL, 0, 0, 0, 0, fenced_cb, &f[3]);
    CU_ASSERT_NOT_EQUAL(id, 0);
    get_ex(b, NS, 0, 3, "k", 0, 0, 0, &g);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    /* a committed key is still found */
    put_str(b, NS, 2, PMIX_GLOBAL, "there", "yes", 0);
    commit(b, NS, 2);
    get_ex(b, NS, 0, 2, "there", 0, 0, 0, &ok);
    CU_ASSERT_EQUAL(ok.status, PMIX_SUCCESS);
    pg_engine_free(b);
}

typedef struct {
    int calls;
    size_t size[4];
} blobs_t;

static void size_fence(void *ctx, const pg_host_fence_t *f)
{
    blobs_t *b = ctx;
    if (b->calls < 4)
        b->size[b->calls] = f->size;
    b->calls++;
}

/* A collecting fence over a subset does not close the members' epoch:
 * the next whole-job fence still carries their keys to the other nodes. */
static void test_subset_fence_keeps_keys_for_the_whole_job(void)
{
    bool a_serves[2] = { true, false };
    blobs_t bl = { 0 };
    pg_engine_t *a = pg_engine_new(&(pg_host_ops_t){ .fence = size_fence }, &bl);
    fenced_t f[4];
    job_block(a, NS, 4, 2, a_serves);
    put_str(a, NS, 0, PMIX_GLOBAL, "k", "value", 0);
    commit(a, NS, 0);
    pg_proc_t pair[2] = { P(NS, 0), P(NS, 2) }, p0 = P(NS, 0), p1 = P(NS, 1);
    memset(f, 0, sizeof(f));
    pg_fence_join(a, &p0, pair, 2, PG_FENCE_COLLECT, 0, 0, fenced_cb, &f[0]);
    CU_ASSERT_EQUAL_FATAL(bl.calls, 1);
    CU_ASSERT_TRUE(bl.size[0] > 0);
    pg_fence_join(a, &p0, NULL, 0, PG_FENCE_COLLECT, 0, 0, fenced_cb, &f[0]);
    pg_fence_join(a, &p1, NULL, 0, PG_FENCE_COLLECT, 0, 0, fenced_cb, &f[1]);
    CU_ASSERT_EQUAL_FATAL(bl.calls, 2);
    CU_ASSERT_EQUAL(bl.size[1], bl.size[0]);
    pg_engine_free(a);
}

static const pg_cunit_test_t tests[] = {
    { "dmodex_request_names_requester_and_is_cancelled",
      test_dmodex_request_names_requester_and_is_cancelled },
    { "dmodex_satisfied_by_fence_data_is_cancelled",
      test_dmodex_satisfied_by_fence_data_is_cancelled },
    { "get_for_remote_requester_and_cancel", test_get_for_remote_requester_and_cancel },
    { "blocking_remote_get_does_not_deadlock_with_fence",
      test_blocking_remote_get_does_not_deadlock_with_fence },
    { "nonblocking_remote_get_waits_through_fence",
      test_nonblocking_remote_get_waits_through_fence },
    { "blocking_remote_get_vs_fence_at_the_host",
      test_blocking_remote_get_vs_fence_at_the_host },
    { "subset_fence_keeps_keys_for_the_whole_job", test_subset_fence_keeps_keys_for_the_whole_job },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "engine_xnode", tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
