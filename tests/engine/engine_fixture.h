/*
 * engine_fixture.h: small helpers the engine unit tests share -- a job of
 * K ranks block-mapped on M simulated nodes, and callback recorders that
 * copy what the engine hands out so the test can assert on it afterwards.
 */
#ifndef ENGINE_FIXTURE_H
#define ENGINE_FIXTURE_H

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pg_engine.h"

typedef struct {
    int calls;
    pmix_status_t status;
    char value[1100];
    pmix_rank_t poster;
} got_t;

static inline void got_cb(pmix_status_t status, const pg_value_t *v, pmix_rank_t poster,
                          void *cbdata)
{
    got_t *g = cbdata;
    g->calls++;
    g->status = status;
    g->poster = poster;
    g->value[0] = '\0';
    if (v != NULL && v->size < sizeof(g->value)) {
        memcpy(g->value, v->data, v->size);
        g->value[v->size] = '\0';
    }
}

typedef struct {
    int calls;
    pmix_status_t status;
    int nkeys;
} fenced_t;

static inline void fenced_cb(pmix_status_t status, const pg_fence_keys_t *keys, void *cbdata)
{
    fenced_t *f = cbdata;
    size_t cur = 0;
    pmix_rank_t r;
    const char *k;
    pg_value_t v;
    f->calls++;
    f->status = status;
    f->nkeys = 0;
    while (pg_fence_keys_next(keys, &cur, &r, &k, &v))
        f->nkeys++;
}

/* Registers `ns`: `size` ranks, `nnodes` nodes, block mapping. */
static inline pmix_status_t job_block(pg_engine_t *e, const char *ns, uint32_t size,
                                      uint32_t nnodes, const bool *served)
{
    char names[16][16];
    const char *hosts[16];
    uint32_t rank_node[4096];
    uint32_t per = (size + nnodes - 1) / nnodes;
    for (uint32_t n = 0; n < nnodes; n++) {
        snprintf(names[n], sizeof(names[n]), "node%u", n);
        hosts[n] = names[n];
    }
    for (uint32_t r = 0; r < size; r++)
        rank_node[r] = r / per;
    pg_ns_layout_t l = { 0 };
    l.size = size;
    l.nnodes = nnodes;
    l.hostnames = hosts;
    l.rank_node = rank_node;
    l.node_served = served;
    return pg_ns_register(e, ns, &l);
}

static inline pg_proc_t P(const char *ns, pmix_rank_t r)
{
    pg_proc_t p = { ns, r };
    return p;
}

/* An immediate or held get with the common defaults. */
static inline pmix_status_t get_ex(pg_engine_t *e, const char *ns, pmix_rank_t who,
                                   pmix_rank_t target, const char *key, unsigned flags,
                                   pg_time_t timeout, pg_time_t now, got_t *g)
{
    pg_proc_t req = P(ns, who), tgt = P(ns, target);
    pg_get_req_t q;
    pg_get_req_init(&q, &req, &tgt, key);
    q.flags = flags;
    q.timeout = timeout;
    memset(g, 0, sizeof(*g));
    return pg_get(e, &q, now, got_cb, g);
}

static inline pmix_status_t put_str(pg_engine_t *e, const char *ns, pmix_rank_t r,
                                    pmix_scope_t scope, const char *key, const char *val,
                                    unsigned flags)
{
    pg_proc_t p = P(ns, r);
    pg_value_t v = pg_value_string(val);
    return pg_put(e, &p, scope, key, &v, flags);
}

static inline pmix_status_t commit(pg_engine_t *e, const char *ns, pmix_rank_t r)
{
    pg_proc_t p = P(ns, r);
    return pg_commit(e, &p);
}

/* Every rank of `ns` (size ranks) joins the whole-job fence. */
static inline void fence_all(pg_engine_t *e, const char *ns, uint32_t size, unsigned flags,
                             fenced_t *f)
{
    for (uint32_t r = 0; r < size; r++) {
        pg_proc_t p = P(ns, r);
        memset(&f[r], 0, sizeof(f[r]));
        CU_ASSERT_EQUAL(pg_fence_join(e, &p, NULL, 0, flags, 0, 0, fenced_cb, &f[r]),
                        PMIX_SUCCESS);
    }
}

#endif
