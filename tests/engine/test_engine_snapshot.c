/*
 * test_engine_snapshot: pg_ns_foreach_visible, the walk the gateway turns
 * into a node's shared segment after each fence.  A value that appears here
 * is answered by client libraries without asking the server, so the walk
 * must show exactly what every process of the node could get: committed
 * values only, each (key, rank) once with its latest committed value, and
 * scopes applied per node.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "tests/engine/engine_fixture.h"
#include "tests/pg_cunit.h"

#define MAX_SEEN 64

typedef struct {
    int n;
    struct {
        char key[64];
        pmix_rank_t rank;
        char value[64];
    } at[MAX_SEEN];
    int stop_after; /* 0 = never */
} seen_t;

static pmix_status_t record(void *arg, const char *key, pmix_rank_t rank, const pg_value_t *v)
{
    seen_t *s = arg;

    if (s->n == MAX_SEEN)
        return PMIX_ERR_OUT_OF_RESOURCE;
    snprintf(s->at[s->n].key, sizeof(s->at[s->n].key), "%s", key);
    s->at[s->n].rank = rank;
    snprintf(s->at[s->n].value, sizeof(s->at[s->n].value), "%.*s", (int)v->size,
             (const char *)v->data);
    s->n++;
    return s->stop_after != 0 && s->n == s->stop_after ? PMIX_ERR_TIMEOUT : PMIX_SUCCESS;
}

/* The value seen for (key, rank), or NULL; fails if it was seen twice. */
static const char *seen_value(const seen_t *s, const char *key, pmix_rank_t rank)
{
    const char *found = NULL;

    for (int i = 0; i < s->n; i++)
        if (strcmp(s->at[i].key, key) == 0 && s->at[i].rank == rank) {
            CU_ASSERT_PTR_NULL(found);
            found = s->at[i].value;
        }
    return found;
}

static seen_t walk(pg_engine_t *e, const char *ns, uint32_t node)
{
    seen_t s;

    memset(&s, 0, sizeof(s));
    CU_ASSERT_EQUAL(pg_ns_foreach_visible(e, ns, node, record, &s), PMIX_SUCCESS);
    return s;
}

static void test_only_committed_values_are_visible(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    seen_t s;

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 2, 1, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 0, PMIX_GLOBAL, "a", "staged", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 1, PMIX_GLOBAL, "b", "hidden", PG_PUT_HIDDEN), PMIX_SUCCESS);
    s = walk(e, "ns", 0);
    CU_ASSERT_EQUAL(s.n, 0);
    CU_ASSERT_EQUAL(commit(e, "ns", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(commit(e, "ns", 1), PMIX_SUCCESS);
    s = walk(e, "ns", 0);
    CU_ASSERT_EQUAL(s.n, 2);
    CU_ASSERT_STRING_EQUAL(seen_value(&s, "a", 0), "staged");
    CU_ASSERT_STRING_EQUAL(seen_value(&s, "b", 1), "hidden");
    pg_engine_free(e);
}

static void test_a_new_put_shows_the_old_value_until_commit(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    seen_t s;

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 1, 1, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 0, PMIX_GLOBAL, "k", "v1", PG_PUT_HIDDEN), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(commit(e, "ns", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 0, PMIX_GLOBAL, "k", "v2", PG_PUT_HIDDEN), PMIX_SUCCESS);
    s = walk(e, "ns", 0);
    CU_ASSERT_EQUAL(s.n, 1);
    CU_ASSERT_STRING_EQUAL(seen_value(&s, "k", 0), "v1");
    CU_ASSERT_EQUAL(commit(e, "ns", 0), PMIX_SUCCESS);
    s = walk(e, "ns", 0);
    CU_ASSERT_EQUAL(s.n, 1);
    CU_ASSERT_STRING_EQUAL(seen_value(&s, "k", 0), "v2");
    pg_engine_free(e);
}

/* Ranks 0,1 on node 0 and 2,3 on node 1. */
static void test_scopes_apply_per_node_and_internal_never_shows(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    seen_t n0, n1;

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 4, 2, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 0, PMIX_LOCAL, "loc", "l0", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 2, PMIX_LOCAL, "loc", "l2", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 1, PMIX_REMOTE, "rem", "r1", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 3, PMIX_REMOTE, "rem", "r3", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 3, PMIX_GLOBAL, "glob", "g3", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 0, PMIX_INTERNAL, "int", "i0", 0), PMIX_SUCCESS);
    for (pmix_rank_t r = 0; r < 4; r++)
        CU_ASSERT_EQUAL(commit(e, "ns", r), PMIX_SUCCESS);
    n0 = walk(e, "ns", 0);
    n1 = walk(e, "ns", 1);
    CU_ASSERT_EQUAL(n0.n, 3);
    CU_ASSERT_STRING_EQUAL(seen_value(&n0, "loc", 0), "l0");
    CU_ASSERT_STRING_EQUAL(seen_value(&n0, "rem", 3), "r3");
    CU_ASSERT_STRING_EQUAL(seen_value(&n0, "glob", 3), "g3");
    CU_ASSERT_EQUAL(n1.n, 3);
    CU_ASSERT_STRING_EQUAL(seen_value(&n1, "loc", 2), "l2");
    CU_ASSERT_STRING_EQUAL(seen_value(&n1, "rem", 1), "r1");
    CU_ASSERT_STRING_EQUAL(seen_value(&n1, "glob", 3), "g3");
    CU_ASSERT_PTR_NULL(seen_value(&n0, "int", 0));
    CU_ASSERT_PTR_NULL(seen_value(&n1, "int", 0));
    pg_engine_free(e);
}

/* More posters than PG_SLOT_DENSE_AT switch the slot to its rank-indexed
 * form: the walk must see every rank once in both forms. */
static void test_every_poster_of_a_popular_key_appears_once(void)
{
    enum { N = 20 };
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    char val[16];
    seen_t s;

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", N, 1, NULL), PMIX_SUCCESS);
    for (pmix_rank_t r = N; r-- > 0;) {
        snprintf(val, sizeof(val), "v%u", r);
        CU_ASSERT_EQUAL(put_str(e, "ns", r, PMIX_GLOBAL, "card", val, PG_PUT_HIDDEN), PMIX_SUCCESS);
        CU_ASSERT_EQUAL(commit(e, "ns", r), PMIX_SUCCESS);
    }
    s = walk(e, "ns", 0);
    CU_ASSERT_EQUAL(s.n, N);
    for (pmix_rank_t r = 0; r < N; r++) {
        const char *v = seen_value(&s, "card", r);

        snprintf(val, sizeof(val), "v%u", r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        CU_ASSERT_STRING_EQUAL(v, val);
    }
    pg_engine_free(e);
}

static void test_visitor_status_stops_the_walk(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    seen_t s;

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 3, 1, NULL), PMIX_SUCCESS);
    for (pmix_rank_t r = 0; r < 3; r++) {
        CU_ASSERT_EQUAL(put_str(e, "ns", r, PMIX_GLOBAL, "k", "v", 0), PMIX_SUCCESS);
        CU_ASSERT_EQUAL(commit(e, "ns", r), PMIX_SUCCESS);
    }
    memset(&s, 0, sizeof(s));
    s.stop_after = 2;
    CU_ASSERT_EQUAL(pg_ns_foreach_visible(e, "ns", 0, record, &s), PMIX_ERR_TIMEOUT);
    CU_ASSERT_EQUAL(s.n, 2);
    pg_engine_free(e);
}

static void test_bad_arguments_are_errors(void)
{
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    seen_t s;

    memset(&s, 0, sizeof(s));
    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 2, 2, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_ns_foreach_visible(e, "other", 0, record, &s), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(pg_ns_foreach_visible(e, NULL, 0, record, &s), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(pg_ns_foreach_visible(e, "ns", 2, record, &s), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_ns_foreach_visible(e, "ns", 0, NULL, &s), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_ns_foreach_visible(NULL, "ns", 0, record, &s), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(s.n, 0);
    pg_engine_free(e);
}

/* The host's commit hook: which ranks' copies went behind, in order. */
typedef struct {
    int n;
    pmix_rank_t ranks[16];
} behind_t;

static void on_commit(void *ctx, const pg_proc_t *proc)
{
    behind_t *b = ctx;

    if (b->n < 16)
        b->ranks[b->n++] = proc->rank;
}

/* A copy of the committed data only goes behind when a commit changes an
 * answer it could give: a new key of the poster's own is in no copy. */
static void test_the_commit_hook_runs_only_when_an_answer_changes(void)
{
    behind_t b = { 0 };
    pg_engine_t *e = pg_engine_new(&(pg_host_ops_t){ .commit = on_commit }, &b);

    CU_ASSERT_EQUAL_FATAL(job_block(e, "ns", 3, 1, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 0, PMIX_GLOBAL, "card-0", "a", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(e, "ns", 0, PMIX_GLOBAL, "card-0", "b", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(commit(e, "ns", 0), PMIX_SUCCESS); /* first value, re-put while staged */
    CU_ASSERT_EQUAL(commit(e, "ns", 1), PMIX_SUCCESS); /* nothing staged */
    CU_ASSERT_EQUAL(b.n, 0);
    CU_ASSERT_EQUAL(put_str(e, "ns", 0, PMIX_GLOBAL, "card-0", "c", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(commit(e, "ns", 0), PMIX_SUCCESS); /* a published value changes */
    CU_ASSERT_EQUAL(put_str(e, "ns", 2, PMIX_GLOBAL, "card-0", "d", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(commit(e, "ns", 2), PMIX_SUCCESS); /* rank 0 posted it too */
    CU_ASSERT_EQUAL(put_str(e, "ns", 1, PMIX_GLOBAL, "time-1", "e", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(commit(e, "ns", 1), PMIX_SUCCESS); /* only rank 1's, new */
    CU_ASSERT_EQUAL_FATAL(b.n, 2);
    CU_ASSERT_EQUAL(b.ranks[0], 0);
    CU_ASSERT_EQUAL(b.ranks[1], 2);
    pg_engine_free(e);
}

static const pg_cunit_test_t tests[] = {
    { "only_committed_values_are_visible", test_only_committed_values_are_visible },
    { "a_new_put_shows_the_old_value_until_commit",
      test_a_new_put_shows_the_old_value_until_commit },
    { "scopes_apply_per_node_and_internal_never_shows",
      test_scopes_apply_per_node_and_internal_never_shows },
    { "every_poster_of_a_popular_key_appears_once",
      test_every_poster_of_a_popular_key_appears_once },
    { "visitor_status_stops_the_walk", test_visitor_status_stops_the_walk },
    { "bad_arguments_are_errors", test_bad_arguments_are_errors },
    { "the_commit_hook_runs_only_when_an_answer_changes",
      test_the_commit_hook_runs_only_when_an_answer_changes },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "engine_snapshot", tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
