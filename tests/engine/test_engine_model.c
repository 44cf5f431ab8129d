/*
 * test_engine_model.c: random sequences of put / commit / barrier / get over
 * K simulated ranks on M simulated nodes, each result checked against a
 * small reference model of the visibility rules written here from the
 * Standard (not from the engine's code).  A failure prints the seed and the
 * step, so `PG_MODEL_SEED=<seed>` replays exactly that sequence.
 */
#include "tests/engine/engine_fixture.h"
#include "tests/pg_cunit.h"

#define NKEYS 3
#define MAXR 6

typedef struct {
    bool has;
    char val[16];
    pmix_scope_t scope;
    bool hidden;
} mval_t;

typedef struct {
    uint32_t k, m;            /* ranks, nodes */
    uint32_t node[MAXR];
    mval_t staged[MAXR][NKEYS], pub[MAXR][NKEYS];
} model_t;

static unsigned rnd(unsigned *s, unsigned n)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) % n;
}

static bool m_sees(const model_t *m, pmix_rank_t poster, pmix_scope_t scope, pmix_rank_t reader)
{
    if (poster == reader)
        return true;
    bool same = m->node[poster] == m->node[reader];
    return scope == PMIX_GLOBAL || (scope == PMIX_LOCAL && same) || (scope == PMIX_REMOTE && !same);
}

/* Expected status and value of reader's immediate get of target's key. */
static pmix_status_t m_get_rank(const model_t *m, pmix_rank_t reader, pmix_rank_t t, int key,
                                const char **val)
{
    const mval_t *s = &m->staged[t][key], *p = &m->pub[t][key];
    if (reader == t && s->has && !s->hidden) {
        *val = s->val;
        return PMIX_SUCCESS;
    }
    if (!p->has)
        return PMIX_ERR_NOT_FOUND;
    if (!m_sees(m, t, p->scope, reader))
        return PMIX_ERR_EXISTS_OUTSIDE_SCOPE;
    *val = p->val;
    return PMIX_SUCCESS;
}

static pmix_status_t m_get(const model_t *m, pmix_rank_t reader, pmix_rank_t t, int key,
                           const char **val)
{
    if (t != PMIX_RANK_UNDEF)
        return m_get_rank(m, reader, t, key, val);
    pmix_status_t best = PMIX_ERR_NOT_FOUND;
    if (m_get_rank(m, reader, reader, key, val) == PMIX_SUCCESS)
        return PMIX_SUCCESS;
    for (pmix_rank_t r = 0; r < m->k; r++) {
        pmix_status_t st = m_get_rank(m, reader, r, key, val);
        if (st == PMIX_SUCCESS)
            return st;
        if (st == PMIX_ERR_EXISTS_OUTSIDE_SCOPE)
            best = st;
    }
    return best;
}

static void m_commit(model_t *m, pmix_rank_t r)
{
    for (int k = 0; k < NKEYS; k++)
        if (m->staged[r][k].has) {
            m->pub[r][k] = m->staged[r][k];
            m->pub[r][k].hidden = false;
            m->staged[r][k].has = false;
        }
}

static pmix_status_t m_put(model_t *m, pmix_rank_t r, int k, pmix_scope_t scope,
                           const char *val, bool hidden)
{
    const mval_t *cur = m->staged[r][k].has ? &m->staged[r][k] : &m->pub[r][k];
    if (cur->has && cur->scope != scope)
        return PMIX_ERR_BAD_PARAM;
    mval_t *s = &m->staged[r][k];
    s->has = true;
    s->scope = scope;
    s->hidden = hidden;
    snprintf(s->val, sizeof(s->val), "%s", val);
    return PMIX_SUCCESS;
}

#define CHECK(cond, what)                                                                     \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "\n  model mismatch: seed %u step %d: %s\n", seed, step, what);   \
            CU_FAIL(what);                                                                    \
            ok = false;                                                                       \
        }                                                                                     \
    } while (0)

/* One random sequence; returns false on the first mismatch. */
static bool run_sequence(unsigned seed)
{
    unsigned s = seed;
    bool ok = true;
    model_t m;
    memset(&m, 0, sizeof(m));
    m.k = 2 + rnd(&s, MAXR - 1);
    m.m = 1 + rnd(&s, 3);
    char names[3][8];
    const char *hosts[3];
    for (uint32_t n = 0; n < m.m; n++) {
        snprintf(names[n], sizeof(names[n]), "n%u", n);
        hosts[n] = names[n];
    }
    for (uint32_t r = 0; r < m.k; r++)
        m.node[r] = rnd(&s, m.m);
    pg_ns_layout_t l = { 0 };
    l.size = m.k;
    l.nnodes = m.m;
    l.hostnames = hosts;
    l.rank_node = m.node;
    pg_engine_t *e = pg_engine_new(NULL, NULL);
    pg_ns_register(e, "ns", &l);
    static const pmix_scope_t scopes[] = { PMIX_LOCAL, PMIX_REMOTE, PMIX_GLOBAL, PMIX_INTERNAL };
    for (int step = 0; step < 80 && ok; step++) {
        pmix_rank_t r = rnd(&s, m.k);
        int key = (int)rnd(&s, NKEYS);
        char kname[8], val[16];
        snprintf(kname, sizeof(kname), "k%d", key);
        switch (rnd(&s, 6)) {
        case 0:
        case 1: {
            pmix_scope_t sc = scopes[rnd(&s, 4)];
            bool hidden = rnd(&s, 4) == 0;
            snprintf(val, sizeof(val), "v%d", step);
            pmix_status_t want = m_put(&m, r, key, sc, val, hidden);
            pmix_status_t got = put_str(e, "ns", r, sc, kname, val, hidden ? PG_PUT_HIDDEN : 0);
            CHECK(got == want, "put status");
            break;
        }
        case 2:
            m_commit(&m, r);
            commit(e, "ns", r);
            break;
        case 3: { /* PMI barrier: everybody commits, then fences */
            fenced_t f[MAXR];
            for (pmix_rank_t q = 0; q < m.k; q++) {
                m_commit(&m, q);
                commit(e, "ns", q);
            }
            fence_all(e, "ns", m.k, PG_FENCE_COLLECT, f);
            for (pmix_rank_t q = 0; q < m.k; q++)
                CHECK(f[q].calls == 1 && f[q].status == PMIX_SUCCESS, "fence completes");
            break;
        }
        default: {
            pmix_rank_t t = rnd(&s, 3) == 0 ? PMIX_RANK_UNDEF : rnd(&s, m.k);
            const char *want_val = NULL;
            pmix_status_t want = m_get(&m, r, t, key, &want_val);
            got_t g;
            get_ex(e, "ns", r, t, kname, PG_GET_IMMEDIATE, 0, 0, &g);
            CHECK(g.calls == 1, "get completes at once");
            CHECK(g.status == want, "get status");
            if (want == PMIX_SUCCESS && g.status == want)
                CHECK(strcmp(g.value, want_val) == 0, "get value");
            break;
        }
        }
    }
    pg_engine_free(e);
    return ok;
}

static void test_random_sequences_match_reference_model(void)
{
    const char *env = getenv("PG_MODEL_SEED");
    unsigned base = env != NULL ? (unsigned)strtoul(env, NULL, 10) : 20261121u;
    int n = env != NULL ? 1 : 3000;
    for (int i = 0; i < n; i++)
        if (!run_sequence(base + (unsigned)i))
            break;
}

static const pg_cunit_test_t tests[] = {
    { "random_sequences_match_reference_model", test_random_sequences_match_reference_model },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "engine_model", tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}
