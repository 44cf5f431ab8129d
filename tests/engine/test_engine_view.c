/*
 * test_engine_view: pg_engine_view, what `pmigate status` shows of a
 * running job -- each fence in progress with its number, its age and the
 * members that have not joined (only this engine's: a proxy knows its own
 * node's), whether the other nodes' part is running, and the held gets,
 * node-attribute gets and lookups with their age.  Looking must change
 * nothing: the fence completes afterwards as it would have.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "tests/engine/engine_fixture.h"
#include "tests/pg_cunit.h"

#define NS "ns"

typedef struct {
    int nfences;
    pg_fence_view_t f;       /* the last one seen; its arrays are not kept */
    pmix_rank_t missing[16];
    size_t nmissing;
    pg_proc_t parts[4];
    int nwaits;
    pg_wait_view_t w[4];
    char keys[4][64];
    pmix_rank_t target[4];
} viewed_t;

static void on_fence(void *arg, const pg_fence_view_t *f)
{
    viewed_t *v = arg;

    v->nfences++;
    v->f = *f;
    v->nmissing = f->nmissing;
    for (size_t i = 0; i < f->nmissing && i < 16; i++) {
        CU_ASSERT_STRING_EQUAL(f->missing[i].nspace, NS);
        v->missing[i] = f->missing[i].rank;
    }
    for (size_t i = 0; i < f->nparticipants && i < 4; i++)
        v->parts[i] = f->participants[i];
    v->f.missing = NULL;
    v->f.participants = NULL;
}

static void on_wait(void *arg, const pg_wait_view_t *w)
{
    viewed_t *v = arg;

    if (v->nwaits < 4) {
        v->w[v->nwaits] = *w;
        snprintf(v->keys[v->nwaits], sizeof(v->keys[0]), "%s", w->key);
        v->target[v->nwaits] = w->target.rank;
        v->w[v->nwaits].key = NULL;
    }
    v->nwaits++;
}

static viewed_t look(pg_engine_t *e)
{
    viewed_t v;

    memset(&v, 0, sizeof(v));
    CU_ASSERT_EQUAL(pg_engine_view(e, on_fence, on_wait, &v), PMIX_SUCCESS);
    return v;
}

static void join(pg_engine_t *e, pmix_rank_t r, pg_time_t now, fenced_t *f)
{
    pg_proc_t p = P(NS, r);

    memset(f, 0, sizeof(*f));
    CU_ASSERT_EQUAL(pg_fence_join(e, &p, NULL, 0, PG_FENCE_COLLECT, 0, now, fenced_cb, f),
                    PMIX_SUCCESS);
}

static void test_fence_names_the_missing_ranks(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    fenced_t f[6];
    viewed_t v;

    CU_ASSERT_EQUAL_FATAL(job_block(e, NS, 6, 1, NULL), PMIX_SUCCESS);
    v = look(e);
    CU_ASSERT_EQUAL(v.nfences, 0);
    join(e, 2, 1000, &f[2]);
    join(e, 0, 1500, &f[0]);
    join(e, 3, 1700, &f[3]);
    join(e, 4, 1800, &f[4]);
    v = look(e);
    CU_ASSERT_EQUAL_FATAL(v.nfences, 1);
    CU_ASSERT_EQUAL(v.f.seq, 1);
    CU_ASSERT_TRUE(v.f.whole_job);
    CU_ASSERT_FALSE(v.f.group);
    CU_ASSERT_TRUE(v.f.collect);
    CU_ASSERT_EQUAL(v.f.nmembers, 6);
    CU_ASSERT_EQUAL(v.f.nlocal, 6);
    CU_ASSERT_EQUAL(v.f.njoined, 4);
    CU_ASSERT_FALSE(v.f.host_pending);
    CU_ASSERT_EQUAL(v.f.started, 1000);
    CU_ASSERT_EQUAL_FATAL(v.nmissing, 2);
    CU_ASSERT_EQUAL(v.missing[0], 1);
    CU_ASSERT_EQUAL(v.missing[1], 5);
    CU_ASSERT_EQUAL(v.f.nparticipants, 1);
    CU_ASSERT_EQUAL(v.parts[0].rank, PMIX_RANK_WILDCARD);
    /* looking changed nothing: the fence completes when the rest join */
    join(e, 1, 2000, &f[1]);
    join(e, 5, 2100, &f[5]);
    for (int r = 0; r < 6; r++)
        CU_ASSERT_EQUAL(f[r].calls, 1);
    CU_ASSERT_EQUAL(look(e).nfences, 0);
    /* the next fence of the job is number 2, with its own start */
    join(e, 5, 9000, &f[5]);
    v = look(e);
    CU_ASSERT_EQUAL(v.f.seq, 2);
    CU_ASSERT_EQUAL(v.f.started, 9000);
    CU_ASSERT_EQUAL(v.nmissing, 5);
    pg_engine_free(e);
}

static void test_subset_fence(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    pg_proc_t parts[2] = { P(NS, 3), P(NS, 1) }, p1 = P(NS, 1);
    fenced_t f;
    viewed_t v;

    CU_ASSERT_EQUAL_FATAL(job_block(e, NS, 4, 1, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_fence_join(e, &p1, parts, 2, 0, 0, 5, fenced_cb, &f), PMIX_SUCCESS);
    v = look(e);
    CU_ASSERT_EQUAL_FATAL(v.nfences, 1);
    CU_ASSERT_FALSE(v.f.whole_job);
    CU_ASSERT_FALSE(v.f.collect);
    CU_ASSERT_EQUAL(v.f.nmembers, 2);
    CU_ASSERT_EQUAL(v.f.nparticipants, 2);
    CU_ASSERT_EQUAL(v.parts[0].rank, 1); /* sorted */
    CU_ASSERT_EQUAL(v.parts[1].rank, 3);
    CU_ASSERT_EQUAL_FATAL(v.nmissing, 1);
    CU_ASSERT_EQUAL(v.missing[0], 3);
    pg_engine_free(e);
}

static int host_fences;

static void hold_fence(void *ctx, const pg_host_fence_t *f)
{
    (void)ctx;
    (void)f;
    host_fences++; /* never completed: the other nodes are slow */
}

/* A proxy serves node 0 (ranks 0, 1) of a job of 4 ranks on 2 nodes. */
static void test_proxy_sees_its_node_then_the_host(void)
{
    pg_host_ops_t ops = { .fence = hold_fence };
    pg_engine_t *e = pg_engine_new(&ops, NULL);
    bool served[2] = { true, false };
    fenced_t f[2];
    viewed_t v;

    CU_ASSERT_EQUAL_FATAL(job_block(e, NS, 4, 2, served), PMIX_SUCCESS);
    join(e, 0, 100, &f[0]);
    v = look(e);
    CU_ASSERT_EQUAL(v.f.nmembers, 4);
    CU_ASSERT_EQUAL(v.f.nlocal, 2);
    CU_ASSERT_EQUAL_FATAL(v.nmissing, 1);
    CU_ASSERT_EQUAL(v.missing[0], 1);
    CU_ASSERT_FALSE(v.f.host_pending);
    join(e, 1, 200, &f[1]);
    CU_ASSERT_EQUAL(host_fences, 1);
    v = look(e);
    CU_ASSERT_EQUAL_FATAL(v.nfences, 1);
    CU_ASSERT_TRUE(v.f.host_pending);
    CU_ASSERT_EQUAL(v.nmissing, 0);
    CU_ASSERT_EQUAL(v.f.started, 100);
    pg_engine_free(e);
}

static void test_held_requests_with_their_age(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    got_t g, n;
    viewed_t v;
    int get = -1, attr = -1;

    CU_ASSERT_EQUAL_FATAL(job_block(e, NS, 4, 1, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(get_ex(e, NS, 0, 1, "k", 0, 0, 500, &g), PMIX_OPERATION_IN_PROGRESS);
    CU_ASSERT_EQUAL(get_ex(e, NS, 3, PMIX_RANK_UNDEF, "attr", PG_GET_NODE_ATTR, 0, 600, &n),
                    PMIX_OPERATION_IN_PROGRESS);
    v = look(e);
    CU_ASSERT_EQUAL(v.nfences, 0);
    CU_ASSERT_EQUAL_FATAL(v.nwaits, 2);
    for (int i = 0; i < 2; i++) {
        if (v.w[i].kind == PG_WAIT_GET)
            get = i;
        if (v.w[i].kind == PG_WAIT_NODE_ATTR)
            attr = i;
    }
    CU_ASSERT_FATAL(get >= 0 && attr >= 0);
    CU_ASSERT_EQUAL(v.w[get].requester.rank, 0);
    CU_ASSERT_STRING_EQUAL(v.w[get].requester.nspace, NS);
    CU_ASSERT_EQUAL(v.target[get], 1);
    CU_ASSERT_STRING_EQUAL(v.keys[get], "k");
    CU_ASSERT_EQUAL(v.w[get].since, 500);
    CU_ASSERT_EQUAL(v.w[attr].requester.rank, 3);
    CU_ASSERT_STRING_EQUAL(v.keys[attr], "attr");
    CU_ASSERT_EQUAL(v.w[attr].since, 600);
    /* a commit ends the get; the view follows */
    CU_ASSERT_EQUAL(put_str(e, NS, 1, PMIX_GLOBAL, "k", "v", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(commit(e, NS, 1), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.calls, 1);
    v = look(e);
    CU_ASSERT_EQUAL(v.nwaits, 1);
    CU_ASSERT_EQUAL(v.w[0].kind, PG_WAIT_NODE_ATTR);
    pg_engine_free(e);
}

static void lookup_cb(pmix_status_t status, const pg_value_t *v, const pg_proc_t *pub, void *cbd)
{
    (void)status;
    (void)v;
    (void)pub;
    (*(int *)cbd)++;
}

static void test_held_lookup(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    pg_proc_t p2 = P(NS, 2);
    viewed_t v;
    int calls = 0;

    CU_ASSERT_EQUAL_FATAL(job_block(e, NS, 4, 1, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_lookup(e, &p2, "svc", true, 0, 700, lookup_cb, &calls),
                    PMIX_OPERATION_IN_PROGRESS);
    v = look(e);
    CU_ASSERT_EQUAL_FATAL(v.nwaits, 1);
    CU_ASSERT_EQUAL(v.w[0].kind, PG_WAIT_LOOKUP);
    CU_ASSERT_EQUAL(v.w[0].requester.rank, 2);
    CU_ASSERT_STRING_EQUAL(v.keys[0], "svc");
    CU_ASSERT_EQUAL(v.w[0].since, 700);
    CU_ASSERT_EQUAL(calls, 0);
    pg_engine_free(e);
    CU_ASSERT_EQUAL(calls, 1); /* freeing completes it */
}

static const pg_cunit_test_t view_tests[] = {
    { "a fence: number, age, joined, the missing ranks", test_fence_names_the_missing_ranks },
    { "a fence of some ranks", test_subset_fence },
    { "a proxy: its node's missing ranks, then the host's part",
      test_proxy_sees_its_node_then_the_host },
    { "held gets and node-attribute gets, with their age", test_held_requests_with_their_age },
    { "a held lookup", test_held_lookup },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "engine view (pmigate status)", view_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
