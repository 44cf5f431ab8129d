/*
 * test_engine.c: one test per rule of the engine (engine/pg_engine.h):
 * scope table, retrieval order, reserved keys, fences, hang detection, name
 * service, the PMI-1/PMI-2 visibility rules and job teardown.
 */
#include "tests/engine/engine_fixture.h"
#include "tests/pg_cunit.h"

#define NS "job1"

static pg_engine_t *eng;

static void setup4(void) /* 4 ranks: 0,1 on node0; 2,3 on node1 */
{
    eng = pg_engine_new(NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(eng);
    CU_ASSERT_EQUAL_FATAL(job_block(eng, NS, 4, 2, NULL), PMIX_SUCCESS);
}

static void teardown(void)
{
    pg_engine_free(eng);
    eng = NULL;
}

static pmix_status_t iget(pmix_rank_t who, pmix_rank_t target, const char *key, got_t *g)
{
    return get_ex(eng, NS, who, target, key, PG_GET_IMMEDIATE, 0, 0, g);
}

/* ---- scopes ---- */

static void test_scope_table_local_remote_global_internal(void)
{
    got_t g;
    setup4();
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, PMIX_LOCAL, "l", "L", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, PMIX_REMOTE, "r", "R", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, PMIX_GLOBAL, "g", "G", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, PMIX_INTERNAL, "i", "I", 0), PMIX_SUCCESS);
    commit(eng, NS, 0);
    struct { pmix_rank_t reader; const char *key; pmix_status_t want; } t[] = {
        { 1, "l", PMIX_SUCCESS }, { 1, "r", PMIX_ERR_EXISTS_OUTSIDE_SCOPE },
        { 1, "g", PMIX_SUCCESS }, { 1, "i", PMIX_ERR_EXISTS_OUTSIDE_SCOPE },
        { 2, "l", PMIX_ERR_EXISTS_OUTSIDE_SCOPE }, { 2, "r", PMIX_SUCCESS },
        { 2, "g", PMIX_SUCCESS }, { 2, "i", PMIX_ERR_EXISTS_OUTSIDE_SCOPE },
        { 0, "l", PMIX_SUCCESS }, { 0, "r", PMIX_SUCCESS },
        { 0, "g", PMIX_SUCCESS }, { 0, "i", PMIX_SUCCESS },
        { 3, "foobar", PMIX_ERR_NOT_FOUND },
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        iget(t[i].reader, 0, t[i].key, &g);
        CU_ASSERT_EQUAL(g.calls, 1);
        CU_ASSERT_EQUAL(g.status, t[i].want);
    }
    teardown();
}

static void test_unsupported_scope_rejected(void)
{
    setup4();
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, 9, "k", "v", 0), PMIX_ERR_NOT_SUPPORTED);
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, PMIX_SCOPE_UNDEF, "k", "v", 0), PMIX_ERR_NOT_SUPPORTED);
    teardown();
}

static void test_own_values_visible_before_commit(void)
{
    got_t g;
    setup4();
    put_str(eng, NS, 1, PMIX_GLOBAL, "k", "mine", 0);
    iget(1, 1, "k", &g);
    CU_ASSERT_EQUAL(g.status, PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(g.value, "mine");
    iget(0, 1, "k", &g); /* others: not before commit */
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    commit(eng, NS, 1);
    iget(0, 1, "k", &g);
    CU_ASSERT_EQUAL(g.status, PMIX_SUCCESS);
    teardown();
}

static void test_reserved_key_put_is_bad_param(void)
{
    setup4();
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, PMIX_GLOBAL, "pmix.job.size", "9", 0), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, PMIX_GLOBAL, "pmixfoo", "9", 0), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, PMIX_GLOBAL, "", "9", 0), PMIX_ERR_BAD_PARAM);
    teardown();
}

static void test_same_key_conflicting_scopes_rejected(void)
{
    setup4();
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, PMIX_LOCAL, "k", "a", 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, PMIX_REMOTE, "k", "b", 0), PMIX_ERR_BAD_PARAM);
    commit(eng, NS, 0);
    CU_ASSERT_EQUAL(put_str(eng, NS, 0, PMIX_REMOTE, "k", "b", 0), PMIX_ERR_BAD_PARAM);
    /* another rank may use another scope for the same key */
    CU_ASSERT_EQUAL(put_str(eng, NS, 2, PMIX_REMOTE, "k", "b", 0), PMIX_SUCCESS);
    teardown();
}

static void test_later_put_overwrites_and_keys_accumulate_across_fences(void)
{
    got_t g;
    fenced_t f[4];
    setup4();
    put_str(eng, NS, 0, PMIX_GLOBAL, "a", "first", 0);
    put_str(eng, NS, 0, PMIX_GLOBAL, "a", "second", 0);
    commit(eng, NS, 0);
    fence_all(eng, NS, 4, PG_FENCE_COLLECT, f);
    iget(3, 0, "a", &g);
    CU_ASSERT_STRING_EQUAL(g.value, "second");
    put_str(eng, NS, 0, PMIX_GLOBAL, "b", "bee", 0);
    put_str(eng, NS, 0, PMIX_GLOBAL, "a", "third", 0);
    commit(eng, NS, 0);
    fence_all(eng, NS, 4, PG_FENCE_COLLECT, f);
    iget(3, 0, "a", &g);
    CU_ASSERT_STRING_EQUAL(g.value, "third");
    iget(3, PMIX_RANK_UNDEF, "b", &g);
    CU_ASSERT_STRING_EQUAL(g.value, "bee");
    teardown();
}

/* ---- retrieval order ---- */

static void test_retrieval_exists_outside_scope_is_immediate(void)
{
    got_t g;
    setup4();
    put_str(eng, NS, 0, PMIX_LOCAL, "k", "v", 0);
    commit(eng, NS, 0);
    /* no IMMEDIATE: still answered at once, it can never appear in scope */
    CU_ASSERT_EQUAL(get_ex(eng, NS, 3, 0, "k", 0, 0, 0, &g), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_EXISTS_OUTSIDE_SCOPE);
    teardown();
}

static void test_retrieval_immediate_missing_is_not_found(void)
{
    got_t g;
    setup4();
    CU_ASSERT_EQUAL(iget(1, 0, "nope", &g), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(iget(1, PMIX_RANK_UNDEF, "nope", &g), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    teardown();
}

static void test_retrieval_rank_undef_holds_until_posted(void)
{
    got_t g;
    setup4();
    CU_ASSERT_EQUAL(get_ex(eng, NS, 1, PMIX_RANK_UNDEF, "bc", 0, 0, 0, &g),
                    PMIX_OPERATION_IN_PROGRESS);
    CU_ASSERT_EQUAL(g.calls, 0);
    put_str(eng, NS, 3, PMIX_GLOBAL, "bc", "card3", 0);
    CU_ASSERT_EQUAL(g.calls, 0); /* staged only */
    commit(eng, NS, 3);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_EQUAL(g.status, PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(g.value, "card3");
    CU_ASSERT_EQUAL(g.poster, 3);
    teardown();
}

static void test_retrieval_local_target_holds_until_commit(void)
{
    got_t g;
    setup4();
    CU_ASSERT_EQUAL(get_ex(eng, NS, 0, 2, "ep", 0, 0, 0, &g), PMIX_OPERATION_IN_PROGRESS);
    put_str(eng, NS, 1, PMIX_GLOBAL, "ep", "not-from-2", 0); /* another rank: no */
    commit(eng, NS, 1);
    CU_ASSERT_EQUAL(g.calls, 0);
    put_str(eng, NS, 2, PMIX_GLOBAL, "ep", "two", 0);
    commit(eng, NS, 2);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_STRING_EQUAL(g.value, "two");
    teardown();
}

static void test_retrieval_timeout_via_expire(void)
{
    got_t g;
    setup4();
    CU_ASSERT_EQUAL(pg_engine_next_deadline(eng), PG_TIME_NEVER);
    get_ex(eng, NS, 0, 1, "late", 0, 100, 1000, &g);
    CU_ASSERT_EQUAL(pg_engine_next_deadline(eng), 1100);
    CU_ASSERT_EQUAL(pg_engine_expire(eng, 1099), 0);
    CU_ASSERT_EQUAL(g.calls, 0);
    CU_ASSERT_EQUAL(pg_engine_expire(eng, 1100), 1);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_TIMEOUT);
    CU_ASSERT_EQUAL(pg_engine_next_deadline(eng), PG_TIME_NEVER);
    teardown();
}

static void test_retrieval_remote_target_without_dmodex_not_found(void)
{
    got_t g;
    bool served[2] = { true, false };
    eng = pg_engine_new(NULL, NULL);
    job_block(eng, NS, 4, 2, served);
    CU_ASSERT_EQUAL(get_ex(eng, NS, 0, 3, "k", 0, 0, 0, &g), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    teardown();
}

typedef struct {
    uint64_t id;
    int calls;
    char key[64];
} dmx_t;

static void dmodex_hook(void *ctx, const pg_host_dmodex_t *dm)
{
    dmx_t *d = ctx;
    d->id = dm->id;
    d->calls++;
    snprintf(d->key, sizeof(d->key), "%s", dm->key);
    CU_ASSERT_EQUAL(dm->target.rank, 3);
}

static void test_retrieval_remote_target_direct_modex(void)
{
    got_t g;
    dmx_t d = { 0 };
    pg_host_ops_t ops = { .dmodex = dmodex_hook };
    bool a_serves[2] = { true, false }, b_serves[2] = { false, true };
    pg_engine_t *a = pg_engine_new(&ops, &d), *b = pg_engine_new(NULL, NULL);
    job_block(a, NS, 4, 2, a_serves);
    job_block(b, NS, 4, 2, b_serves);
    put_str(b, NS, 3, PMIX_GLOBAL, "addr", "tcp://3", 0);
    put_str(b, NS, 3, PMIX_LOCAL, "shm", "seg", 0);
    commit(b, NS, 3);
    CU_ASSERT_EQUAL(get_ex(a, NS, 0, 3, "addr", 0, 0, 0, &g), PMIX_OPERATION_IN_PROGRESS);
    CU_ASSERT_EQUAL(d.calls, 1);
    CU_ASSERT_STRING_EQUAL(d.key, "addr");
    void *blob = NULL;
    size_t size = 0;
    pg_proc_t t = P(NS, 3);
    CU_ASSERT_EQUAL(pg_proc_modex(b, &t, &blob, &size), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_dmodex_host_done(a, d.id, PMIX_SUCCESS, blob, size), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_STRING_EQUAL(g.value, "tcp://3");
    /* LOCAL data never leaves its node; a second completion is stale */
    get_ex(a, NS, 0, 3, "shm", PG_GET_IMMEDIATE, 0, 0, &g);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(pg_dmodex_host_done(a, d.id, PMIX_SUCCESS, blob, size), PMIX_ERR_NOT_FOUND);
    /* a truncated blob is an error, not an overread */
    get_ex(a, NS, 1, 3, "other", 0, 0, 0, &g);
    CU_ASSERT_EQUAL(pg_dmodex_host_done(a, d.id, PMIX_SUCCESS, blob, size - 1), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_UNPACK_FAILURE);
    free(blob);
    pg_engine_free(a);
    pg_engine_free(b);
}

/* ---- reserved keys and job attributes ---- */

static void test_reserved_keys_derived_and_never_block(void)
{
    got_t g;
    setup4();
    get_ex(eng, NS, 0, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, 0, 0, 0, &g);
    CU_ASSERT_EQUAL(g.status, PMIX_SUCCESS);
    uint32_t u32;
    memcpy(&u32, g.value, 4);
    CU_ASSERT_EQUAL(u32, 4);
    get_ex(eng, NS, 0, 3, PMIX_LOCAL_RANK, 0, 0, 0, &g);
    uint16_t u16;
    memcpy(&u16, g.value, 2);
    CU_ASSERT_EQUAL(u16, 1);
    get_ex(eng, NS, 2, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, 0, 0, 0, &g);
    CU_ASSERT_STRING_EQUAL(g.value, "2,3");
    get_ex(eng, NS, 2, 1, PMIX_HOSTNAME, 0, 0, 0, &g);
    CU_ASSERT_STRING_EQUAL(g.value, "node0");
    get_ex(eng, NS, 0, PMIX_RANK_WILDCARD, PMIX_ANL_MAP, 0, 0, 0, &g);
    CU_ASSERT_STRING_EQUAL(g.value, "(vector,(0,2,2))");
    /* a missing reserved key is answered at once, without IMMEDIATE */
    CU_ASSERT_EQUAL(get_ex(eng, NS, 0, 0, PMIX_PARENT_ID, 0, 0, 0, &g), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(get_ex(eng, NS, 0, PMIX_RANK_WILDCARD, PMIX_MAPBY, 0, 0, 0, &g), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    teardown();
}

typedef struct {
    int calls;
    pmix_status_t status;
    pmix_data_type_t type;
    size_t size;
    pmix_proc_t proc;
} got_proc_t;

static void got_proc_cb(pmix_status_t status, const pg_value_t *v, pmix_rank_t poster,
                        void *cbdata)
{
    got_proc_t *g = cbdata;

    (void)poster;
    g->calls++;
    g->status = status;
    if (v != NULL) {
        g->type = v->type;
        g->size = v->size;
        if (v->size == sizeof(pmix_proc_t))
            memcpy(&g->proc, v->data, sizeof(pmix_proc_t));
    }
}

/* A spawned job's PMIX_PARENT_ID is the spawner {nspace, rank}: a
 * PMIX_PROC (native bytes) seen from the job and from each process. */
static void test_reserved_parent_id_of_spawned_job(void)
{
    const char *hosts[1] = { "node0" };
    uint32_t rank_node[2] = { 0, 0 };
    pg_ns_layout_t l = { .size = 2, .nnodes = 1, .hostnames = hosts, .rank_node = rank_node,
                         .spawned = true, .parent_nspace = NS, .parent_rank = 3 };
    char too_long[PMIX_MAX_NSLEN + 8];
    pmix_rank_t targets[2] = { PMIX_RANK_WILDCARD, 1 };

    setup4();
    CU_ASSERT_EQUAL_FATAL(pg_ns_register(eng, "child", &l), PMIX_SUCCESS);
    for (int i = 0; i < 2; i++) {
        pg_proc_t req = P("child", 1), tgt = P("child", targets[i]);
        pg_get_req_t q;
        got_proc_t g = { 0 };

        pg_get_req_init(&q, &req, &tgt, PMIX_PARENT_ID);
        CU_ASSERT_EQUAL(pg_get(eng, &q, 0, got_proc_cb, &g), PMIX_SUCCESS);
        CU_ASSERT_EQUAL(g.calls, 1);
        CU_ASSERT_EQUAL(g.status, PMIX_SUCCESS);
        CU_ASSERT_EQUAL(g.type, PMIX_PROC);
        CU_ASSERT_EQUAL(g.size, sizeof(pmix_proc_t));
        CU_ASSERT_STRING_EQUAL(g.proc.nspace, NS);
        CU_ASSERT_EQUAL(g.proc.rank, 3);
    }
    memset(too_long, 'n', sizeof(too_long) - 1);
    too_long[sizeof(too_long) - 1] = '\0';
    l.parent_nspace = too_long;
    CU_ASSERT_EQUAL(pg_ns_register(eng, "child2", &l), PMIX_ERR_BAD_PARAM);
    teardown();
}

static void test_pmi_job_attributes(void)
{
    pg_value_t v;
    setup4();
    CU_ASSERT_EQUAL(pg_ns_attr(eng, NS, "PMI_process_mapping", &v), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(v.data, "(vector,(0,2,2))");
    CU_ASSERT_EQUAL(pg_ns_attr(eng, NS, "universeSize", &v), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(v.data, "4");
    CU_ASSERT_EQUAL(pg_ns_attr(eng, NS, "PMI_dead_processes", &v), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(v.data, "");
    pg_proc_t p = P(NS, 2);
    pg_proc_lost(eng, &p);
    pg_ns_attr(eng, NS, "PMI_dead_processes", &v);
    CU_ASSERT_STRING_EQUAL(v.data, "2");
    CU_ASSERT_EQUAL(pg_ns_attr(eng, NS, "nonsense", &v), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(pg_ns_attr(eng, NS, "PMI_mine", &v), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(pg_ns_attr(eng, "no-such-job", "universeSize", &v), PMIX_ERR_NOT_FOUND);
    /* the names pg_ns_attr answers, and only those */
    CU_ASSERT_TRUE(pg_ns_attr_known("PMI_process_mapping"));
    CU_ASSERT_TRUE(pg_ns_attr_known("universeSize"));
    CU_ASSERT_TRUE(pg_ns_attr_known("PMI_dead_processes"));
    CU_ASSERT_FALSE(pg_ns_attr_known("PMI_mine"));
    CU_ASSERT_FALSE(pg_ns_attr_known("universeSizes"));
    CU_ASSERT_FALSE(pg_ns_attr_known(""));
    CU_ASSERT_FALSE(pg_ns_attr_known(NULL));
    teardown();
}

static void check_map(const uint32_t *nodes, uint32_t n, const char *want)
{
    char *m = pg_anl_map(nodes, n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (strcmp(m, want) != 0)
        fprintf(stderr, "\n  map %s, want %s\n", m, want);
    CU_ASSERT_STRING_EQUAL(m, want);
    free(m);
}

static void test_anl_process_mapping_from_layout(void)
{
    static const uint32_t one[] = { 0, 0 }, blk[] = { 0, 0, 1, 1 }, wrap[] = { 0, 0, 1, 1, 0, 0 },
                          uneven[] = { 0, 0, 1, 1, 1 }, cyc[] = { 0, 1, 0, 1 },
                          three[] = { 0, 0, 0, 1, 2, 2, 2 };
    check_map(one, 2, "(vector,(0,1,2))");
    check_map(blk, 4, "(vector,(0,2,2))");
    check_map(wrap, 6, "(vector,(0,2,2))");
    check_map(uneven, 5, "(vector,(0,1,2),(1,1,3))");
    check_map(cyc, 4, "(vector,(0,2,1))");
    check_map(three, 7, "(vector,(0,1,3),(1,1,1),(2,1,3))");
    uint32_t big[3000];
    unsigned seed = 7;
    for (uint32_t r = 0; r < 3000; r++)
        big[r] = (seed = seed * 1103515245u + 12345u) >> 16 & 15; /* irregular */
    check_map(big, 3000, ""); /* over 1024 bytes: empty, as Flux's RFC says */
}

/* ---- fences ---- */

typedef struct {
    int calls;
    uint64_t id[8], seq[8];
    size_t nparts[8];
    bool collect[8];
    bool complete_inline;
    void *blob[8]; /* copies, owned */
    size_t size[8];
    int cancels;        /* fence_cancel calls */
    bool cancel_answer; /* what fence_cancel says */
} hostf_t;

static void fence_hook(void *ctx, const pg_host_fence_t *f)
{
    hostf_t *h = ctx;
    if (h->calls < 8) {
        h->id[h->calls] = f->id;
        h->seq[h->calls] = f->seq;
        h->nparts[h->calls] = f->nparticipants;
        h->collect[h->calls] = f->collect;
        h->size[h->calls] = f->size;
        h->blob[h->calls] = f->size > 0 ? malloc(f->size) : NULL;
        if (h->blob[h->calls] != NULL)
            memcpy(h->blob[h->calls], f->data, f->size);
    }
    h->calls++;
}

static void hostf_free(hostf_t *h)
{
    for (int i = 0; i < 8; i++)
        free(h->blob[i]);
}

static void test_fence_signatures_run_concurrently(void)
{
    fenced_t all[4], sub[2];
    setup4();
    pg_proc_t pair[2] = { P(NS, 1), P(NS, 0) }; /* order does not matter */
    pg_proc_t p0 = P(NS, 0), p1 = P(NS, 1), p2 = P(NS, 2), p3 = P(NS, 3);
    memset(all, 0, sizeof(all));
    memset(sub, 0, sizeof(sub));
    CU_ASSERT_EQUAL(pg_fence_join(eng, &p2, NULL, 0, 0, 0, 0, fenced_cb, &all[2]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_fence_join(eng, &p0, pair, 2, 0, 0, 0, fenced_cb, &sub[0]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_fence_join(eng, &p1, pair, 2, 0, 0, 0, fenced_cb, &sub[1]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(sub[0].calls + sub[1].calls, 2);
    CU_ASSERT_EQUAL(all[2].calls, 0);
    pg_fence_join(eng, &p3, NULL, 0, 0, 0, 0, fenced_cb, &all[3]);
    pg_fence_join(eng, &p0, NULL, 0, 0, 0, 0, fenced_cb, &all[0]);
    CU_ASSERT_EQUAL(all[2].calls, 0);
    pg_fence_join(eng, &p1, NULL, 0, 0, 0, 0, fenced_cb, &all[1]);
    for (int r = 0; r < 4; r++)
        CU_ASSERT_EQUAL(all[r].calls, 1);
    /* a non-participant cannot join */
    CU_ASSERT_EQUAL(pg_fence_join(eng, &p3, pair, 2, 0, 0, 0, fenced_cb, &sub[0]),
                    PMIX_ERR_BAD_PARAM);
    teardown();
}

static void test_fence_wildcard_differs_from_explicit_list(void)
{
    fenced_t a, b;
    eng = pg_engine_new(NULL, NULL);
    job_block(eng, NS, 2, 1, NULL);
    pg_proc_t p0 = P(NS, 0), p1 = P(NS, 1);
    pg_proc_t both[2] = { p0, p1 };
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    pg_fence_join(eng, &p0, NULL, 0, 0, 0, 0, fenced_cb, &a);
    pg_fence_join(eng, &p1, both, 2, 0, 0, 0, fenced_cb, &b);
    CU_ASSERT_EQUAL(a.calls + b.calls, 0); /* two different fences, each waiting */
    teardown();
}

static void test_fence_collect_data_mismatch_fails_everyone(void)
{
    fenced_t f[2];
    eng = pg_engine_new(NULL, NULL);
    job_block(eng, NS, 2, 1, NULL);
    pg_proc_t p0 = P(NS, 0), p1 = P(NS, 1);
    memset(f, 0, sizeof(f));
    pg_fence_join(eng, &p0, NULL, 0, PG_FENCE_COLLECT, 0, 0, fenced_cb, &f[0]);
    pg_fence_join(eng, &p1, NULL, 0, 0, 0, 0, fenced_cb, &f[1]);
    CU_ASSERT_EQUAL(f[0].status, PMIX_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(f[1].status, PMIX_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(f[0].calls + f[1].calls, 2);
    /* the next fence is clean */
    fence_all(eng, NS, 2, PG_FENCE_COLLECT, f);
    CU_ASSERT_EQUAL(f[0].status, PMIX_SUCCESS);
    teardown();
}

static void test_fence_one_host_upcall_and_sequence_numbers(void)
{
    hostf_t h = { 0 };
    pg_host_ops_t ops = { .fence = fence_hook };
    fenced_t f[4];
    eng = pg_engine_new(&ops, &h);
    job_block(eng, NS, 4, 2, NULL);
    pg_proc_t p0 = P(NS, 0);
    fence_all(eng, NS, 4, PG_FENCE_COLLECT, f);
    CU_ASSERT_EQUAL(h.calls, 1);
    CU_ASSERT_EQUAL(h.seq[0], 1);
    CU_ASSERT_TRUE(h.collect[0]);
    CU_ASSERT_EQUAL(f[0].calls, 0);
    /* a duplicate contribution while the host works is refused */
    CU_ASSERT_EQUAL(pg_fence_join(eng, &p0, NULL, 0, 0, 0, 0, fenced_cb, &f[0]), PMIX_ERR_EXISTS);
    CU_ASSERT_EQUAL(pg_fence_host_done(eng, h.id[0], PMIX_SUCCESS, NULL, 0), PMIX_SUCCESS);
    for (int r = 0; r < 4; r++)
        CU_ASSERT_EQUAL(f[r].calls, 1);
    fence_all(eng, NS, 4, PG_FENCE_COLLECT, f);
    CU_ASSERT_EQUAL(h.calls, 2);
    CU_ASSERT_EQUAL(h.seq[1], 2);
    /* a late completion of fence 1 must not complete fence 2 */
    CU_ASSERT_EQUAL(pg_fence_host_done(eng, h.id[0], PMIX_SUCCESS, NULL, 0), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(f[0].calls, 0);
    pg_fence_host_done(eng, h.id[1], PMIX_SUCCESS, NULL, 0);
    CU_ASSERT_EQUAL(f[0].calls, 1);
    teardown();
}

/* The host names a fence by signature and sequence number on every
 * server: an instance that fails here before the host sees it (a timeout
 * of a member's PMIX_TIMEOUT while another local member is still away) was
 * never seen by the other servers, so the next one takes its number, or
 * the two sides would wait for each other's fence forever. */
static void test_fence_failed_before_host_gives_its_number_back(void)
{
    hostf_t h = { 0 };
    pg_host_ops_t ops = { .fence = fence_hook };
    fenced_t f[4];
    bool served[2] = { true, false }; /* ranks 2 and 3 are another server's */
    eng = pg_engine_new(&ops, &h);
    job_block(eng, NS, 4, 2, served);
    pg_proc_t p0 = P(NS, 0), p1 = P(NS, 1);
    memset(f, 0, sizeof(f));
    pg_fence_join(eng, &p0, NULL, 0, 0, 50, 10, fenced_cb, &f[0]);
    pg_engine_expire(eng, 60);
    CU_ASSERT_EQUAL(f[0].status, PMIX_ERR_TIMEOUT);
    CU_ASSERT_EQUAL(h.calls, 0);
    pg_fence_join(eng, &p0, NULL, 0, 0, 0, 0, fenced_cb, &f[0]);
    pg_fence_join(eng, &p1, NULL, 0, 0, 0, 0, fenced_cb, &f[1]);
    CU_ASSERT_EQUAL(h.calls, 1);
    CU_ASSERT_EQUAL(h.seq[0], 1);
    /* one the host saw keeps its number, whatever its end */
    CU_ASSERT_EQUAL(pg_fence_host_done(eng, h.id[0], PMIX_ERR_LOST_CONNECTION, NULL, 0),
                    PMIX_SUCCESS);
    CU_ASSERT_EQUAL(f[1].status, PMIX_ERR_LOST_CONNECTION);
    pg_fence_join(eng, &p0, NULL, 0, 0, 0, 0, fenced_cb, &f[0]);
    pg_fence_join(eng, &p1, NULL, 0, 0, 0, 0, fenced_cb, &f[1]);
    CU_ASSERT_EQUAL(h.calls, 2);
    CU_ASSERT_EQUAL(h.seq[1], 2);
    teardown();
}

/* A fence at the host keeps its PMIX_TIMEOUT when the host can take it
 * back: at the deadline the host is asked; when it lets go the members get
 * PMIX_ERR_TIMEOUT and the next fence takes the same number; when it
 * cannot, the fence runs to the host's end and the host is not asked
 * again. */
static bool fence_cancel_hook(void *ctx, uint64_t id)
{
    hostf_t *h = ctx;
    (void)id;
    h->cancels++;
    return h->cancel_answer;
}

/* A job of 4 ranks, 0 and 1 served here, 2 and 3 by another server (so a
 * fence goes to the host): ranks 0 (PMIX_TIMEOUT 50) and 1 join at time 10,
 * the host answering a cancel with `cancel_answer`. */
static void fence_two_at_host(hostf_t *h, bool cancel_answer, fenced_t f[2])
{
    static const pg_host_ops_t ops = { .fence = fence_hook, .fence_cancel = fence_cancel_hook };
    bool served[2] = { true, false };
    pg_proc_t p0 = P(NS, 0), p1 = P(NS, 1);

    eng = pg_engine_new(&ops, h);
    job_block(eng, NS, 4, 2, served);
    memset(f, 0, 2 * sizeof(*f));
    h->cancel_answer = cancel_answer;
    pg_fence_join(eng, &p0, NULL, 0, 0, 50, 10, fenced_cb, &f[0]);
    pg_fence_join(eng, &p1, NULL, 0, 0, 0, 10, fenced_cb, &f[1]);
}

static void test_fence_at_host_timed_when_host_lets_go(void)
{
    hostf_t h = { 0 };
    fenced_t f[2];
    pg_proc_t p0 = P(NS, 0), p1 = P(NS, 1);

    fence_two_at_host(&h, true, f);
    CU_ASSERT_EQUAL(h.calls, 1); /* at the host */
    CU_ASSERT_EQUAL(pg_engine_next_deadline(eng), 60);
    pg_engine_expire(eng, 60);
    CU_ASSERT_EQUAL(h.cancels, 1);
    CU_ASSERT_EQUAL(f[0].status, PMIX_ERR_TIMEOUT);
    CU_ASSERT_EQUAL(f[1].status, PMIX_ERR_TIMEOUT);
    /* a late answer for it completes nothing */
    CU_ASSERT_EQUAL(pg_fence_host_done(eng, h.id[0], PMIX_SUCCESS, NULL, 0), PMIX_ERR_NOT_FOUND);
    pg_fence_join(eng, &p0, NULL, 0, 0, 50, 100, fenced_cb, &f[0]);
    pg_fence_join(eng, &p1, NULL, 0, 0, 0, 100, fenced_cb, &f[1]);
    CU_ASSERT_EQUAL(h.calls, 2);
    CU_ASSERT_EQUAL(h.seq[1], h.seq[0]); /* the same fence, for the other servers */
    h.cancel_answer = false;
    pg_engine_expire(eng, 150);
    CU_ASSERT_EQUAL(h.cancels, 2);
    CU_ASSERT_EQUAL(f[0].calls, 1); /* still waiting for the host */
    CU_ASSERT_EQUAL(pg_engine_next_deadline(eng), PG_TIME_NEVER);
    pg_engine_expire(eng, 1000);
    CU_ASSERT_EQUAL(h.cancels, 2);
    CU_ASSERT_EQUAL(pg_fence_host_done(eng, h.id[1], PMIX_SUCCESS, NULL, 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(f[0].status, PMIX_SUCCESS);
    CU_ASSERT_EQUAL(f[1].status, PMIX_SUCCESS);
    teardown();
}

/* A host that cannot take a fence back at once may settle it as timed
 * out later (the proxy's decider answers): the members get
 * PMIX_ERR_TIMEOUT and the number goes back, as after a cancel, or this
 * server's next fence would not meet the other servers'. */
static void test_fence_timed_out_by_host_gives_number_back(void)
{
    hostf_t h = { 0 };
    fenced_t f[2];
    pg_proc_t p0 = P(NS, 0), p1 = P(NS, 1);

    fence_two_at_host(&h, false, f);
    pg_engine_expire(eng, 60);
    CU_ASSERT_EQUAL(h.cancels, 1);
    CU_ASSERT_EQUAL(f[0].calls, 0); /* the host decides */
    CU_ASSERT_EQUAL(pg_fence_host_done(eng, h.id[0], PMIX_ERR_TIMEOUT, NULL, 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(f[0].status, PMIX_ERR_TIMEOUT);
    CU_ASSERT_EQUAL(f[1].status, PMIX_ERR_TIMEOUT);
    pg_fence_join(eng, &p0, NULL, 0, 0, 0, 100, fenced_cb, &f[0]);
    pg_fence_join(eng, &p1, NULL, 0, 0, 0, 100, fenced_cb, &f[1]);
    CU_ASSERT_EQUAL(h.calls, 2);
    CU_ASSERT_EQUAL(h.seq[1], h.seq[0]); /* the same fence, for the other servers */
    CU_ASSERT_EQUAL(pg_fence_host_done(eng, h.id[1], PMIX_SUCCESS, NULL, 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(f[0].status, PMIX_SUCCESS);
    teardown();
}

static void test_fence_duplicate_join_before_completion_refused(void)
{
    fenced_t f[2];
    setup4();
    pg_proc_t p0 = P(NS, 0);
    memset(f, 0, sizeof(f));
    CU_ASSERT_EQUAL(pg_fence_join(eng, &p0, NULL, 0, 0, 0, 0, fenced_cb, &f[0]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_fence_join(eng, &p0, NULL, 0, 0, 0, 0, fenced_cb, &f[1]), PMIX_ERR_EXISTS);
    teardown(); /* engine free completes the held join */
    CU_ASSERT_EQUAL(f[0].calls, 1);
    CU_ASSERT_EQUAL(f[0].status, PMIX_ERR_JOB_TERMINATED);
    CU_ASSERT_EQUAL(f[1].calls, 0);
}

/* A process that is not in the participant list cannot join, and the
 * refused join leaves nothing behind: a job that retries it in a loop must
 * not grow the engine. */
/* Each namespace resolves to its own job however many jobs the engine holds
 * (the lookup changes method above a few jobs), and a deregistered one no
 * longer resolves while the others still do. */
static void test_many_jobs_each_found_by_name(void)
{
    enum { NJOBS = 10 };
    char ns[NJOBS][16];
    got_t g;
    uint32_t u32;

    eng = pg_engine_new(NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(eng);
    for (int j = 0; j < NJOBS; j++) {
        snprintf(ns[j], sizeof(ns[j]), "job-%d", j);
        CU_ASSERT_EQUAL_FATAL(job_block(eng, ns[j], (uint32_t)j + 1, 1, NULL), PMIX_SUCCESS);
        for (int k = 0; k <= j; k++) { /* every job so far, below and above the threshold */
            get_ex(eng, ns[k], 0, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, 0, 0, 0, &g);
            CU_ASSERT_EQUAL(g.status, PMIX_SUCCESS);
            memcpy(&u32, g.value, 4);
            CU_ASSERT_EQUAL(u32, (uint32_t)k + 1);
        }
    }
    get_ex(eng, "job-10", 0, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, 0, 0, 0, &g);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    for (int j = 0; j < NJOBS; j += 2) /* down to 5 jobs, then 4 left after the next */
        CU_ASSERT_EQUAL(pg_ns_deregister(eng, ns[j]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_ns_deregister(eng, ns[1]), PMIX_SUCCESS);
    for (int j = 0; j < NJOBS; j++) {
        bool gone = j % 2 == 0 || j == 1;
        get_ex(eng, ns[j], 0, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, 0, 0, 0, &g);
        CU_ASSERT_EQUAL(g.calls, 1);
        if (gone) {
            CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
            continue;
        }
        CU_ASSERT_EQUAL(g.status, PMIX_SUCCESS);
        memcpy(&u32, g.value, 4);
        CU_ASSERT_EQUAL(u32, (uint32_t)j + 1);
    }
    teardown();
}

static void test_fence_join_by_non_participant_refused_without_residue(void)
{
    fenced_t f[2];
    setup4();
    pg_proc_t p0 = P(NS, 0), p1 = P(NS, 1), p3 = P(NS, 3);
    pg_proc_t pair[2] = { P(NS, 0), P(NS, 1) };
    memset(f, 0, sizeof(f));
    size_t before = pg_engine_memory(eng);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(pg_fence_join(eng, &p3, pair, 2, 0, 0, 0, fenced_cb, &f[0]),
                        PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_engine_memory(eng), before);
    CU_ASSERT_EQUAL(f[0].calls, 0);
    /* the same participant list still fences normally afterwards */
    CU_ASSERT_EQUAL(pg_fence_join(eng, &p0, pair, 2, 0, 0, 0, fenced_cb, &f[0]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_fence_join(eng, &p1, pair, 2, 0, 0, 0, fenced_cb, &f[1]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(f[0].calls, 1);
    CU_ASSERT_EQUAL(f[1].calls, 1);
    CU_ASSERT_EQUAL(f[1].status, PMIX_SUCCESS);
    teardown();
}

static void test_fence_reports_keys_new_in_epoch(void)
{
    fenced_t f[4];
    setup4();
    put_str(eng, NS, 0, PMIX_GLOBAL, "a", "1", 0);
    put_str(eng, NS, 0, PMIX_GLOBAL, "a", "2", 0);
    put_str(eng, NS, 1, PMIX_GLOBAL, "b", "1", 0);
    put_str(eng, NS, 1, PMIX_INTERNAL, "secret", "1", 0);
    commit(eng, NS, 0);
    commit(eng, NS, 1);
    fence_all(eng, NS, 4, PG_FENCE_COLLECT, f);
    CU_ASSERT_EQUAL(f[3].nkeys, 2);
    fence_all(eng, NS, 4, PG_FENCE_COLLECT, f);
    CU_ASSERT_EQUAL(f[3].nkeys, 0);
    put_str(eng, NS, 0, PMIX_GLOBAL, "a", "3", 0);
    commit(eng, NS, 0);
    fence_all(eng, NS, 4, PG_FENCE_COLLECT, f);
    CU_ASSERT_EQUAL(f[3].nkeys, 1);
    teardown();
}

/* One job of 4 ranks over 2 nodes, an engine each: a serves ranks 0-1
 * and calls h's fence hook; b serves ranks 2-3. */
static void two_nodes(hostf_t *h, pg_engine_t **a, pg_engine_t **b)
{
    static pg_host_ops_t ops = { .fence = fence_hook };
    bool a_serves[2] = { true, false }, b_serves[2] = { false, true };

    *a = pg_engine_new(&ops, h);
    *b = pg_engine_new(NULL, NULL);
    job_block(*a, NS, 4, 2, a_serves);
    job_block(*b, NS, 4, 2, b_serves);
}

static void test_fence_collect_ingests_remote_data(void)
{
    hostf_t h = { 0 };
    pg_engine_t *a, *b;
    fenced_t f[2];
    got_t g;
    two_nodes(&h, &a, &b);
    put_str(b, NS, 2, PMIX_GLOBAL, "k2", "from-b", 0);
    commit(b, NS, 2);
    pg_proc_t t = P(NS, 2);
    void *blob;
    size_t size;
    pg_proc_modex(b, &t, &blob, &size);
    fence_all(a, NS, 2, PG_FENCE_COLLECT, f); /* ranks 0, 1 are a's local ones */
    CU_ASSERT_EQUAL(h.calls, 1);
    pg_fence_host_done(a, h.id[0], PMIX_SUCCESS, blob, size);
    CU_ASSERT_EQUAL(f[0].status, PMIX_SUCCESS);
    get_ex(a, NS, 0, 2, "k2", PG_GET_IMMEDIATE, 0, 0, &g);
    CU_ASSERT_STRING_EQUAL(g.value, "from-b");
    free(blob);
    hostf_free(&h);
    pg_engine_free(a);
    pg_engine_free(b);
}

/* Each fence's blob to the host holds what was committed since the last
 * one, not everything so far: a long job's fences stay the size of their
 * own data.  The other engine still ends up with every key, and a value
 * re-put later goes again. */
static void test_fence_blob_is_this_fences_data(void)
{
    hostf_t h = { 0 };
    pg_engine_t *a, *b;
    fenced_t f[2];
    got_t g;
    two_nodes(&h, &a, &b);
    put_str(a, NS, 0, PMIX_GLOBAL, "k1", "one", 0);
    put_str(a, NS, 1, PMIX_GLOBAL, "k1", "one-b", 0);
    commit(a, NS, 0);
    commit(a, NS, 1);
    fence_all(a, NS, 2, PG_FENCE_COLLECT, f);
    pg_fence_host_done(a, h.id[0], PMIX_SUCCESS, NULL, 0);
    put_str(a, NS, 0, PMIX_GLOBAL, "k2", "two", 0);
    commit(a, NS, 0);
    fence_all(a, NS, 2, PG_FENCE_COLLECT, f);
    pg_fence_host_done(a, h.id[1], PMIX_SUCCESS, NULL, 0);
    fence_all(a, NS, 2, PG_FENCE_COLLECT, f); /* nothing new */
    pg_fence_host_done(a, h.id[2], PMIX_SUCCESS, NULL, 0);
    put_str(a, NS, 0, PMIX_GLOBAL, "k1", "again", 0);
    commit(a, NS, 0);
    fence_all(a, NS, 2, PG_FENCE_COLLECT, f);
    pg_fence_host_done(a, h.id[3], PMIX_SUCCESS, NULL, 0);
    CU_ASSERT_EQUAL_FATAL(h.calls, 4);
    CU_ASSERT_TRUE(h.size[1] > 0 && h.size[1] < h.size[0]); /* one key, not three */
    CU_ASSERT_EQUAL(h.size[2], 0);
    CU_ASSERT_TRUE(h.size[3] > 0 && h.size[3] < h.size[0]);
    for (int i = 0; i < 4; i++)
        if (h.size[i] > 0)
            CU_ASSERT_EQUAL(pg_modex_host_ingest(b, h.blob[i], h.size[i]), PMIX_SUCCESS);
    get_ex(b, NS, 2, 1, "k1", PG_GET_IMMEDIATE, 0, 0, &g);
    CU_ASSERT_STRING_EQUAL(g.value, "one-b");
    get_ex(b, NS, 2, 0, "k2", PG_GET_IMMEDIATE, 0, 0, &g);
    CU_ASSERT_STRING_EQUAL(g.value, "two");
    get_ex(b, NS, 2, 0, "k1", PG_GET_IMMEDIATE, 0, 0, &g);
    CU_ASSERT_STRING_EQUAL(g.value, "again");
    hostf_free(&h);
    pg_engine_free(a);
    pg_engine_free(b);
}

static void test_fence_timeout_and_lost_participant(void)
{
    fenced_t f[4];
    setup4();
    pg_proc_t p0 = P(NS, 0), p1 = P(NS, 1);
    memset(f, 0, sizeof(f));
    pg_fence_join(eng, &p0, NULL, 0, 0, 50, 10, fenced_cb, &f[0]);
    CU_ASSERT_EQUAL(pg_engine_next_deadline(eng), 60);
    pg_engine_expire(eng, 60);
    CU_ASSERT_EQUAL(f[0].status, PMIX_ERR_TIMEOUT);
    pg_fence_join(eng, &p0, NULL, 0, 0, 0, 0, fenced_cb, &f[1]);
    pg_proc_lost(eng, &p1);
    CU_ASSERT_EQUAL(f[1].calls, 1);
    CU_ASSERT_EQUAL(f[1].status, PMIX_ERR_LOST_CONNECTION);
    teardown();
}

typedef struct {
    int calls;
    size_t ngone;
    pmix_rank_t gone[4];
} doomed_t;

static void doomed_hook(void *ctx, const pg_proc_t *gone, size_t ngone)
{
    doomed_t *d = ctx;

    d->calls++;
    d->ngone = ngone;
    for (size_t i = 0; i < ngone && i < 4; i++)
        d->gone[i] = gone[i].rank;
}

/* A member that ended without ever connecting (finalize of a NEW process)
 * dooms the fences it belongs to, whether it ends before the others join
 * or while they wait; the host hears which members are gone. */
static void test_fence_doomed_by_members_gone_without_speaking(void)
{
    pg_host_ops_t ops = { .fence_doomed = doomed_hook };
    doomed_t d = { 0 };
    fenced_t f[3];
    pg_proc_t p0 = P(NS, 0), p1 = P(NS, 1), p2 = P(NS, 2), p3 = P(NS, 3);

    memset(f, 0, sizeof(f));
    eng = pg_engine_new(&ops, &d);
    job_block(eng, NS, 4, 1, NULL);
    pg_proc_connect(eng, &p0);
    pg_proc_connect(eng, &p1);
    /* rank 0 waits; rank 3 ends without a word: the fence fails at once */
    pg_fence_join(eng, &p0, NULL, 0, 0, 0, 0, fenced_cb, &f[0]);
    CU_ASSERT_EQUAL(f[0].calls, 0);
    CU_ASSERT_EQUAL(pg_proc_finalize(eng, &p3), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(f[0].calls, 1);
    CU_ASSERT_EQUAL(f[0].status, PMIX_ERR_LOST_CONNECTION);
    CU_ASSERT_EQUAL(d.calls, 1);
    CU_ASSERT_EQUAL(d.ngone, 1);
    CU_ASSERT_EQUAL(d.gone[0], 3);
    /* rank 2 gone too, then rank 1 joins the next fence: refused at once,
     * both named */
    pg_proc_finalize(eng, &p2);
    pg_fence_join(eng, &p1, NULL, 0, 0, 0, 0, fenced_cb, &f[1]);
    CU_ASSERT_EQUAL(f[1].status, PMIX_ERR_LOST_CONNECTION);
    CU_ASSERT_EQUAL(d.calls, 2);
    CU_ASSERT_EQUAL(d.ngone, 2);
    /* a fence of the live ranks alone still completes */
    pg_proc_t live[2] = { p0, p1 };
    pg_fence_join(eng, &p0, live, 2, 0, 0, 0, fenced_cb, &f[2]);
    pg_fence_join(eng, &p1, live, 2, 0, 0, 0, fenced_cb, &f[2]);
    CU_ASSERT_EQUAL(f[2].calls, 2);
    CU_ASSERT_EQUAL(f[2].status, PMIX_SUCCESS);
    CU_ASSERT_EQUAL(d.calls, 2);
    teardown();
}

/* ---- hang detection ---- */

static pmix_status_t nodeattr_wait(pmix_rank_t who, const char *key, got_t *g)
{
    return get_ex(eng, NS, who, PMIX_RANK_UNDEF, key, PG_GET_NODE_ATTR, 0, 0, g);
}

static void test_hang_both_waiting_for_unposted_node_attr(void)
{
    got_t g0, g1;
    eng = pg_engine_new(NULL, NULL);
    job_block(eng, NS, 2, 1, NULL);
    nodeattr_wait(0, "shmkey", &g0);
    CU_ASSERT_EQUAL(g0.calls, 0); /* rank 1 may still post it */
    nodeattr_wait(1, "shmkey", &g1);
    CU_ASSERT_EQUAL(g0.calls, 1);
    CU_ASSERT_EQUAL(g1.calls, 1);
    CU_ASSERT_EQUAL(g0.status, PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(g1.status, PMIX_ERR_NOT_FOUND);
    teardown();
}

static void test_hang_waiter_keeps_waiting_while_peer_computes(void)
{
    got_t g0, g1;
    eng = pg_engine_new(NULL, NULL);
    job_block(eng, NS, 2, 1, NULL);
    pg_proc_t p1 = P(NS, 1);
    pg_proc_connect(eng, &p1);
    nodeattr_wait(0, "shmkey", &g0);
    CU_ASSERT_EQUAL(g0.calls, 0);
    pg_value_t v = pg_value_string("seg7");
    pg_node_put(eng, &p1, "shmkey", &v);
    CU_ASSERT_EQUAL(g0.calls, 1);
    CU_ASSERT_STRING_EQUAL(g0.value, "seg7");
    /* again, now the peer finalizes without posting */
    nodeattr_wait(0, "other", &g1);
    CU_ASSERT_EQUAL(g1.calls, 0);
    pg_proc_finalize(eng, &p1);
    CU_ASSERT_EQUAL(g1.calls, 1);
    CU_ASSERT_EQUAL(g1.status, PMIX_ERR_NOT_FOUND);
    teardown();
}

static void test_hang_get_waiting_on_rank_stuck_in_fence(void)
{
    got_t g;
    fenced_t f;
    eng = pg_engine_new(NULL, NULL);
    job_block(eng, NS, 2, 1, NULL);
    pg_proc_t p1 = P(NS, 1);
    memset(&f, 0, sizeof(f));
    pg_fence_join(eng, &p1, NULL, 0, 0, 0, 0, fenced_cb, &f);
    /* rank 0 waits for rank 1's key, rank 1 waits in a fence for rank 0 */
    get_ex(eng, NS, 0, 1, "never", 0, 0, 0, &g);
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(f.calls, 0); /* the fence can still complete */
    teardown();
}

static void test_hang_nonblocking_get_does_not_block_its_caller(void)
{
    got_t g0, g1;
    eng = pg_engine_new(NULL, NULL);
    job_block(eng, NS, 2, 1, NULL);
    get_ex(eng, NS, 0, PMIX_RANK_UNDEF, "k", PG_GET_NODE_ATTR | PG_GET_NONBLOCKING, 0, 0, &g0);
    nodeattr_wait(1, "k", &g1);
    CU_ASSERT_EQUAL(g0.calls + g1.calls, 0); /* rank 0 still runs and may post */
    teardown();
    CU_ASSERT_EQUAL(g0.status, PMIX_ERR_JOB_TERMINATED);
}

static void test_hang_node_attrs_are_per_node(void)
{
    got_t g;
    setup4();
    pg_proc_t p0 = P(NS, 0);
    pg_value_t v = pg_value_string("n0");
    pg_node_put(eng, &p0, "attr", &v);
    get_ex(eng, NS, 1, PMIX_RANK_UNDEF, "attr", PG_GET_NODE_ATTR | PG_GET_IMMEDIATE, 0, 0, &g);
    CU_ASSERT_STRING_EQUAL(g.value, "n0");
    get_ex(eng, NS, 2, PMIX_RANK_UNDEF, "attr", PG_GET_NODE_ATTR | PG_GET_IMMEDIATE, 0, 0, &g);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    teardown();
}

/* ---- PMI mappings ---- */

static void test_pmi1_put_visible_to_self_at_once_to_others_after_barrier(void)
{
    got_t g;
    fenced_t f[4];
    setup4();
    /* PMI-1 put = pg_put(GLOBAL); barrier = commit + fence(all, collect) */
    put_str(eng, NS, 0, PMIX_GLOBAL, "bc-0", "card", 0);
    iget(0, PMIX_RANK_UNDEF, "bc-0", &g);
    CU_ASSERT_EQUAL(g.status, PMIX_SUCCESS);
    iget(1, PMIX_RANK_UNDEF, "bc-0", &g);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    for (pmix_rank_t r = 0; r < 4; r++)
        commit(eng, NS, r);
    fence_all(eng, NS, 4, PG_FENCE_COLLECT, f);
    iget(3, PMIX_RANK_UNDEF, "bc-0", &g);
    CU_ASSERT_STRING_EQUAL(g.value, "card");
    teardown();
}

static void test_pmi2_put_invisible_until_fence_then_missing_is_not_found(void)
{
    got_t g;
    fenced_t f[4];
    unsigned kvs_get = PG_GET_RANK_HINT | PG_GET_NOWAIT_AFTER_FENCE;
    setup4();
    put_str(eng, NS, 1, PMIX_GLOBAL, "k", "v1", PG_PUT_HIDDEN);
    get_ex(eng, NS, 1, 1, "k", kvs_get | PG_GET_IMMEDIATE, 0, 0, &g);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND); /* not even the owner */
    for (pmix_rank_t r = 0; r < 4; r++)
        commit(eng, NS, r);
    fence_all(eng, NS, 4, PG_FENCE_COLLECT, f);
    get_ex(eng, NS, 2, 1, "k", kvs_get, 0, 0, &g);
    CU_ASSERT_STRING_EQUAL(g.value, "v1");
    /* srcid is a hint: a wrong srcid still finds the key */
    get_ex(eng, NS, 2, 3, "k", kvs_get, 0, 0, &g);
    CU_ASSERT_STRING_EQUAL(g.value, "v1");
    /* after a completed fence a missing key is not found at once */
    CU_ASSERT_EQUAL(get_ex(eng, NS, 2, 1, "-NONEXIST-KEY", kvs_get, 0, 0, &g), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    /* a re-put stays hidden: readers keep the fenced value */
    put_str(eng, NS, 1, PMIX_GLOBAL, "k", "v2", PG_PUT_HIDDEN);
    get_ex(eng, NS, 1, 1, "k", kvs_get, 0, 0, &g);
    CU_ASSERT_STRING_EQUAL(g.value, "v1");
    teardown();
}

static void test_pmi2_get_before_first_fence_waits_not_crashes(void)
{
    got_t g;
    fenced_t f[2];
    eng = pg_engine_new(NULL, NULL);
    job_block(eng, NS, 2, 1, NULL);
    unsigned kvs_get = PG_GET_RANK_HINT | PG_GET_NOWAIT_AFTER_FENCE;
    CU_ASSERT_EQUAL(get_ex(eng, NS, 0, 1, "k", kvs_get, 0, 0, &g), PMIX_OPERATION_IN_PROGRESS);
    put_str(eng, NS, 1, PMIX_GLOBAL, "k", "late", PG_PUT_HIDDEN);
    commit(eng, NS, 1); /* rank 1's kvs-fence commits ... */
    CU_ASSERT_EQUAL(g.calls, 1);
    CU_ASSERT_STRING_EQUAL(g.value, "late");
    fence_all(eng, NS, 2, PG_FENCE_COLLECT, f);
    teardown();
}

static void test_mixed_pmi1_pmi2_job_shares_one_key_space(void)
{
    got_t g;
    fenced_t f[4];
    setup4();
    put_str(eng, NS, 0, PMIX_GLOBAL, "from-pmi1", "a", 0);
    put_str(eng, NS, 2, PMIX_GLOBAL, "from-pmi2", "b", PG_PUT_HIDDEN);
    iget(0, PMIX_RANK_UNDEF, "from-pmi1", &g); /* PMI-1 self-read */
    CU_ASSERT_EQUAL(g.status, PMIX_SUCCESS);
    iget(2, 2, "from-pmi2", &g); /* PMI-2: hidden */
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_NOT_FOUND);
    for (pmix_rank_t r = 0; r < 4; r++)
        commit(eng, NS, r);
    fence_all(eng, NS, 4, PG_FENCE_COLLECT, f);
    iget(2, PMIX_RANK_UNDEF, "from-pmi1", &g);
    CU_ASSERT_STRING_EQUAL(g.value, "a");
    iget(0, PMIX_RANK_UNDEF, "from-pmi2", &g);
    CU_ASSERT_STRING_EQUAL(g.value, "b");
    teardown();
}

/* ---- name service ---- */

typedef struct {
    int calls;
    pmix_status_t status;
    char value[64];
    pmix_rank_t rank;
} looked_t;

static void looked_cb(pmix_status_t status, const pg_value_t *v, const pg_proc_t *pub, void *cbd)
{
    looked_t *l = cbd;
    l->calls++;
    l->status = status;
    snprintf(l->value, sizeof(l->value), "%s", v != NULL ? (const char *)v->data : "");
    l->rank = pub != NULL ? pub->rank : PMIX_RANK_UNDEF;
}

/* A publish or unpublish answered inline (one engine, no host): its status. */
static void named_cb(pmix_status_t status, void *cbdata)
{
    pmix_status_t *st = cbdata;
    *st = status;
}

static pmix_status_t publish_now(pg_engine_t *e, const pg_proc_t *p, const char *key,
                                 const pg_value_t *v)
{
    pmix_status_t st = -9999;
    CU_ASSERT_EQUAL(pg_publish(e, p, key, v, named_cb, &st), PMIX_SUCCESS);
    return st;
}

static pmix_status_t unpublish_now(pg_engine_t *e, const pg_proc_t *p, const char *key)
{
    pmix_status_t st = -9999;
    CU_ASSERT_EQUAL(pg_unpublish(e, p, key, named_cb, &st), PMIX_SUCCESS);
    return st;
}

static void test_name_service_publish_lookup_unpublish(void)
{
    looked_t l = { 0 }, w = { 0 };
    setup4();
    pg_proc_t p0 = P(NS, 0), p1 = P(NS, 1);
    pg_value_t port = pg_value_string("tcp://x:1"), other = pg_value_string("y");
    CU_ASSERT_EQUAL(publish_now(eng, &p0, "svc", &port), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(publish_now(eng, &p1, "svc", &other), PMIX_ERR_DUPLICATE_KEY);
    CU_ASSERT_EQUAL(publish_now(eng, &p1, "", &other), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_publish(eng, &p1, "svc", &other, NULL, NULL), PMIX_ERR_BAD_PARAM);
    pg_lookup(eng, &p1, "svc", false, 0, 0, looked_cb, &l);
    CU_ASSERT_EQUAL(l.status, PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(l.value, "tcp://x:1");
    CU_ASSERT_EQUAL(l.rank, 0);
    CU_ASSERT_EQUAL(unpublish_now(eng, &p0, "nope"), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(unpublish_now(eng, &p0, "svc"), PMIX_SUCCESS);
    pg_lookup(eng, &p1, "svc", false, 0, 0, looked_cb, &l);
    CU_ASSERT_EQUAL(l.status, PMIX_ERR_NOT_FOUND);
    /* a waiting lookup completes on publish, another times out */
    CU_ASSERT_EQUAL(pg_lookup(eng, &p1, "later", true, 0, 0, looked_cb, &w),
                    PMIX_OPERATION_IN_PROGRESS);
    publish_now(eng, &p0, "later", &other);
    CU_ASSERT_EQUAL(w.calls, 1);
    CU_ASSERT_STRING_EQUAL(w.value, "y");
    memset(&w, 0, sizeof(w));
    pg_lookup(eng, &p1, "never", true, 10, 0, looked_cb, &w);
    pg_engine_expire(eng, 10);
    CU_ASSERT_EQUAL(w.status, PMIX_ERR_TIMEOUT);
    teardown();
}

static void test_name_service_entries_end_with_job(void)
{
    looked_t l = { 0 };
    setup4();
    job_block(eng, "job2", 1, 1, NULL);
    pg_proc_t p0 = P(NS, 0), q0 = P("job2", 0);
    pg_value_t port = pg_value_string("p");
    publish_now(eng, &p0, "svc", &port);
    CU_ASSERT_EQUAL(unpublish_now(eng, &q0, "svc"), PMIX_ERR_NO_PERMISSIONS);
    pg_ns_deregister(eng, NS);
    pg_lookup(eng, &q0, "svc", false, 0, 0, looked_cb, &l);
    CU_ASSERT_EQUAL(l.status, PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(publish_now(eng, &q0, "svc", &port), PMIX_SUCCESS);
    teardown();
}

/* A host that keeps the names (pmigate proxy's hub, seen from one node):
 * it records every hook call and answers when the test says. */
typedef struct {
    uint64_t id[8];
    char kind[8], key[8][32];
    bool wait[8];
    int n;
    uint64_t cancelled[8];
    int ncancelled;
    char dropped[32];
} namehost_t;

static void nh_record(namehost_t *h, char kind, uint64_t id, const char *key, bool wait)
{
    if (h->n >= 8)
        return;
    h->id[h->n] = id;
    h->kind[h->n] = kind;
    h->wait[h->n] = wait;
    snprintf(h->key[h->n++], sizeof(h->key[0]), "%s", key);
}

static void nh_publish(void *ctx, uint64_t id, const pg_proc_t *pub, const char *key,
                       const pg_value_t *v)
{
    (void)pub;
    (void)v;
    nh_record(ctx, 'p', id, key, false);
}

static void nh_unpublish(void *ctx, uint64_t id, const pg_proc_t *pub, const char *key)
{
    (void)pub;
    nh_record(ctx, 'u', id, key, false);
}

static void nh_lookup(void *ctx, uint64_t id, const pg_proc_t *req, const char *key, bool wait)
{
    (void)req;
    nh_record(ctx, 'l', id, key, wait);
}

static void nh_cancel(void *ctx, uint64_t id)
{
    namehost_t *h = ctx;
    if (h->ncancelled < 8)
        h->cancelled[h->ncancelled++] = id;
}

static void nh_drop(void *ctx, const char *nspace)
{
    namehost_t *h = ctx;
    snprintf(h->dropped, sizeof(h->dropped), "%s", nspace);
}

static const pg_host_ops_t namehost_ops = { .publish = nh_publish, .unpublish = nh_unpublish,
                                            .lookup = nh_lookup, .lookup_cancel = nh_cancel,
                                            .names_drop = nh_drop };

/* pmigate proxy: every name call goes to the host and waits for its
 * answer; a waiting lookup wakes at the host's word, not by polling. */
static void test_name_service_answered_by_the_host(void)
{
    namehost_t h = { 0 };
    bool serves[2] = { false, true };
    pg_engine_t *b = pg_engine_new(&namehost_ops, &h);
    pmix_status_t pst = -9999, ust = -9999;
    looked_t l = { 0 }, w = { 0 };
    job_block(b, NS, 4, 2, serves);
    pg_proc_t p2 = P(NS, 2), p3 = P(NS, 3), pub = P(NS, 0);
    pg_value_t port = pg_value_string("tcp://b:2"), found = pg_value_string("tcp://a:1");
    CU_ASSERT_EQUAL(pg_publish(b, &p3, "svc", &port, named_cb, &pst),
                    PMIX_OPERATION_IN_PROGRESS);
    CU_ASSERT_EQUAL(h.n, 1);
    CU_ASSERT_EQUAL(h.kind[0], 'p');
    CU_ASSERT_EQUAL(pst, -9999); /* until the host says */
    CU_ASSERT_EQUAL(pg_name_host_done(b, h.id[0], PMIX_ERR_DUPLICATE_KEY, NULL, NULL),
                    PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pst, PMIX_ERR_DUPLICATE_KEY);
    /* a lookup without wait: the host's answer, value and publisher */
    CU_ASSERT_EQUAL(pg_lookup(b, &p3, "svc", false, 0, 0, looked_cb, &l),
                    PMIX_OPERATION_IN_PROGRESS);
    CU_ASSERT_EQUAL(h.kind[1], 'l');
    CU_ASSERT_FALSE(h.wait[1]);
    pg_name_host_done(b, h.id[1], PMIX_SUCCESS, &found, &pub);
    CU_ASSERT_EQUAL(l.calls, 1);
    CU_ASSERT_EQUAL(l.status, PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(l.value, "tcp://a:1");
    CU_ASSERT_EQUAL(l.rank, 0);
    /* a waiting lookup: held until the host's answer wakes it */
    CU_ASSERT_EQUAL(pg_lookup(b, &p2, "late", true, 0, 0, looked_cb, &w),
                    PMIX_OPERATION_IN_PROGRESS);
    CU_ASSERT_TRUE(h.wait[2]);
    CU_ASSERT_EQUAL(w.calls, 0);
    pg_name_host_done(b, h.id[2], PMIX_SUCCESS, &found, &pub);
    CU_ASSERT_EQUAL(w.calls, 1);
    CU_ASSERT_STRING_EQUAL(w.value, "tcp://a:1");
    CU_ASSERT_EQUAL(h.ncancelled, 0); /* answered: nothing to cancel */
    /* an answer for nobody */
    CU_ASSERT_EQUAL(pg_name_host_done(b, h.id[2], PMIX_SUCCESS, &found, &pub),
                    PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(pg_unpublish(b, &p3, "svc", named_cb, &ust), PMIX_OPERATION_IN_PROGRESS);
    CU_ASSERT_EQUAL(h.kind[3], 'u');
    pg_name_host_done(b, h.id[3], PMIX_ERR_NO_PERMISSIONS, NULL, NULL);
    CU_ASSERT_EQUAL(ust, PMIX_ERR_NO_PERMISSIONS);
    pg_engine_free(b);
}

/* A waiting lookup's own timeout, and its job's end, tell the host it may
 * forget the lookup; the job's end drops the job's names there. */
static void test_name_service_host_forgets_what_ended(void)
{
    namehost_t h = { 0 };
    bool serves[2] = { false, true };
    pg_engine_t *b = pg_engine_new(&namehost_ops, &h);
    pmix_status_t pst = -9999;
    looked_t t = { 0 }, j = { 0 };
    job_block(b, NS, 4, 2, serves);
    pg_proc_t p2 = P(NS, 2), p3 = P(NS, 3);
    pg_value_t port = pg_value_string("tcp://b:2");
    pg_lookup(b, &p2, "never", true, 10, 0, looked_cb, &t);
    pg_lookup(b, &p3, "nor", true, 0, 0, looked_cb, &j);
    pg_publish(b, &p3, "mine", &port, named_cb, &pst);
    pg_engine_expire(b, 10);
    CU_ASSERT_EQUAL(t.status, PMIX_ERR_TIMEOUT);
    CU_ASSERT_EQUAL(h.ncancelled, 1);
    CU_ASSERT_EQUAL(h.cancelled[0], h.id[0]);
    CU_ASSERT_EQUAL(pg_ns_deregister(b, NS), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(j.status, PMIX_ERR_JOB_TERMINATED);
    CU_ASSERT_EQUAL(pst, PMIX_ERR_JOB_TERMINATED);
    CU_ASSERT_EQUAL(h.ncancelled, 2);
    CU_ASSERT_EQUAL(h.cancelled[1], h.id[1]);
    CU_ASSERT_STRING_EQUAL(h.dropped, NS);
    /* the host's late answers find nobody */
    CU_ASSERT_EQUAL(pg_name_host_done(b, h.id[2], PMIX_SUCCESS, NULL, NULL), PMIX_ERR_NOT_FOUND);
    pg_engine_free(b);
}

/* ---- teardown ---- */

static void test_job_deregister_completes_every_held_request(void)
{
    got_t g, na;
    fenced_t f;
    looked_t l = { 0 };
    setup4();
    pg_proc_t p0 = P(NS, 0), p3 = P(NS, 3);
    pg_proc_connect(eng, &p3);
    memset(&f, 0, sizeof(f));
    get_ex(eng, NS, 1, 3, "x", 0, 0, 0, &g);
    get_ex(eng, NS, 2, PMIX_RANK_UNDEF, "y", PG_GET_NODE_ATTR, 0, 0, &na);
    pg_fence_join(eng, &p0, NULL, 0, 0, 0, 0, fenced_cb, &f);
    pg_lookup(eng, &p0, "z", true, 0, 0, looked_cb, &l);
    CU_ASSERT_EQUAL(g.calls + na.calls + f.calls + l.calls, 0);
    CU_ASSERT_EQUAL(pg_ns_deregister(eng, NS), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_JOB_TERMINATED);
    CU_ASSERT_EQUAL(na.status, PMIX_ERR_JOB_TERMINATED);
    CU_ASSERT_EQUAL(f.status, PMIX_ERR_JOB_TERMINATED);
    CU_ASSERT_EQUAL(l.status, PMIX_ERR_JOB_TERMINATED);
    CU_ASSERT_EQUAL(g.calls + na.calls + f.calls + l.calls, 4);
    CU_ASSERT_EQUAL(pg_engine_next_deadline(eng), PG_TIME_NEVER);
    CU_ASSERT_EQUAL(pg_ns_deregister(eng, NS), PMIX_ERR_NOT_FOUND);
    teardown();
}

static void test_lost_process_ends_its_own_requests(void)
{
    got_t g;
    setup4();
    pg_proc_t p1 = P(NS, 1);
    get_ex(eng, NS, 1, 2, "x", 0, 0, 0, &g);
    CU_ASSERT_EQUAL(g.calls, 0);
    pg_proc_lost(eng, &p1);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_LOST_CONNECTION);
    teardown();
}

static void test_bad_input_is_an_error_not_a_crash(void)
{
    got_t g;
    pg_ns_layout_t bad = { 0 };
    setup4();
    CU_ASSERT_EQUAL(pg_ns_register(eng, "x", &bad), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(job_block(eng, NS, 4, 2, NULL), PMIX_ERR_EXISTS);
    CU_ASSERT_EQUAL(put_str(eng, "nojob", 0, PMIX_GLOBAL, "k", "v", 0), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(put_str(eng, NS, 99, PMIX_GLOBAL, "k", "v", 0), PMIX_ERR_BAD_PARAM);
    get_ex(eng, NS, 0, 99, "k", 0, 0, 0, &g);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_BAD_PARAM);
    get_ex(eng, NS, 0, 0, NULL, 0, 0, 0, &g);
    CU_ASSERT_EQUAL(g.status, PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_fence_host_done(eng, 12345, PMIX_SUCCESS, NULL, 0), PMIX_ERR_NOT_FOUND);
    teardown();
}

/* ---- memory ---- */

static void test_memory_budget_1024_ranks_16_keys_256_bytes(void)
{
    char val[257], key[32];
    eng = pg_engine_new(NULL, NULL);
    CU_ASSERT_EQUAL_FATAL(job_block(eng, NS, 1024, 16, NULL), PMIX_SUCCESS);
    size_t before = pg_engine_memory(eng), payload = 0, nkeys = 0;
    memset(val, 'v', 256);
    val[256] = '\0';
    for (pmix_rank_t r = 0; r < 1024; r++) {
        for (int k = 0; k < 16; k++) {
            snprintf(key, sizeof(key), "key-%u-%d", r, k);
            CU_ASSERT_EQUAL_FATAL(put_str(eng, NS, r, PMIX_GLOBAL, key, val, 0), PMIX_SUCCESS);
            payload += strlen(key) + 256;
            nkeys++;
        }
        commit(eng, NS, r);
    }
    size_t used = pg_engine_memory(eng) - before;
    printf("\n  store: %zu keys, %zu payload bytes, %zu bytes used, %.1f bytes/key\n", nkeys,
           payload, used, (double)used / (double)nkeys);
    CU_ASSERT(used <= 2 * payload + 64 * nkeys);
    teardown();
}

static const pg_cunit_test_t tests[] = {
    { "scope_table_local_remote_global_internal", test_scope_table_local_remote_global_internal },
    { "unsupported_scope_rejected", test_unsupported_scope_rejected },
    { "own_values_visible_before_commit", test_own_values_visible_before_commit },
    { "reserved_key_put_is_bad_param", test_reserved_key_put_is_bad_param },
    { "same_key_conflicting_scopes_rejected", test_same_key_conflicting_scopes_rejected },
    { "later_put_overwrites_and_keys_accumulate_across_fences",
      test_later_put_overwrites_and_keys_accumulate_across_fences },
    { "retrieval_exists_outside_scope_is_immediate",
      test_retrieval_exists_outside_scope_is_immediate },
    { "retrieval_immediate_missing_is_not_found", test_retrieval_immediate_missing_is_not_found },
    { "retrieval_rank_undef_holds_until_posted", test_retrieval_rank_undef_holds_until_posted },
    { "retrieval_local_target_holds_until_commit", test_retrieval_local_target_holds_until_commit },
    { "retrieval_timeout_via_expire", test_retrieval_timeout_via_expire },
    { "retrieval_remote_target_without_dmodex_not_found",
      test_retrieval_remote_target_without_dmodex_not_found },
    { "retrieval_remote_target_direct_modex", test_retrieval_remote_target_direct_modex },
    { "reserved_keys_derived_and_never_block", test_reserved_keys_derived_and_never_block },
    { "reserved_parent_id_of_spawned_job", test_reserved_parent_id_of_spawned_job },
    { "pmi_job_attributes", test_pmi_job_attributes },
    { "anl_process_mapping_from_layout", test_anl_process_mapping_from_layout },
    { "fence_signatures_run_concurrently", test_fence_signatures_run_concurrently },
    { "fence_wildcard_differs_from_explicit_list", test_fence_wildcard_differs_from_explicit_list },
    { "fence_collect_data_mismatch_fails_everyone",
      test_fence_collect_data_mismatch_fails_everyone },
    { "fence_one_host_upcall_and_sequence_numbers",
      test_fence_one_host_upcall_and_sequence_numbers },
    { "fence_failed_before_host_gives_its_number_back",
      test_fence_failed_before_host_gives_its_number_back },
    { "fence_at_host_timed_when_host_lets_go", test_fence_at_host_timed_when_host_lets_go },
    { "fence_timed_out_by_host_gives_number_back",
      test_fence_timed_out_by_host_gives_number_back },
    { "fence_duplicate_join_before_completion_refused",
      test_fence_duplicate_join_before_completion_refused },
    { "many_jobs_each_found_by_name", test_many_jobs_each_found_by_name },
    { "fence_join_by_non_participant_refused_without_residue",
      test_fence_join_by_non_participant_refused_without_residue },
    { "fence_reports_keys_new_in_epoch", test_fence_reports_keys_new_in_epoch },
    { "fence_collect_ingests_remote_data", test_fence_collect_ingests_remote_data },
    { "fence_blob_is_this_fences_data", test_fence_blob_is_this_fences_data },
    { "fence_timeout_and_lost_participant", test_fence_timeout_and_lost_participant },
    { "fence_doomed_by_members_gone_without_speaking",
      test_fence_doomed_by_members_gone_without_speaking },
    { "hang_both_waiting_for_unposted_node_attr", test_hang_both_waiting_for_unposted_node_attr },
    { "hang_waiter_keeps_waiting_while_peer_computes",
      test_hang_waiter_keeps_waiting_while_peer_computes },
    { "hang_get_waiting_on_rank_stuck_in_fence", test_hang_get_waiting_on_rank_stuck_in_fence },
    { "hang_nonblocking_get_does_not_block_its_caller",
      test_hang_nonblocking_get_does_not_block_its_caller },
    { "hang_node_attrs_are_per_node", test_hang_node_attrs_are_per_node },
    { "pmi1_put_visible_to_self_at_once_to_others_after_barrier",
      test_pmi1_put_visible_to_self_at_once_to_others_after_barrier },
    { "pmi2_put_invisible_until_fence_then_missing_is_not_found",
      test_pmi2_put_invisible_until_fence_then_missing_is_not_found },
    { "pmi2_get_before_first_fence_waits_not_crashes",
      test_pmi2_get_before_first_fence_waits_not_crashes },
    { "mixed_pmi1_pmi2_job_shares_one_key_space", test_mixed_pmi1_pmi2_job_shares_one_key_space },
    { "name_service_publish_lookup_unpublish", test_name_service_publish_lookup_unpublish },
    { "name_service_answered_by_the_host", test_name_service_answered_by_the_host },
    { "name_service_host_forgets_what_ended", test_name_service_host_forgets_what_ended },
    { "name_service_entries_end_with_job", test_name_service_entries_end_with_job },
    { "job_deregister_completes_every_held_request",
      test_job_deregister_completes_every_held_request },
    { "lost_process_ends_its_own_requests", test_lost_process_ends_its_own_requests },
    { "bad_input_is_an_error_not_a_crash", test_bad_input_is_an_error_not_a_crash },
    { "memory_budget_1024_ranks_16_keys_256_bytes",
      test_memory_budget_1024_ranks_16_keys_256_bytes },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "engine", tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
