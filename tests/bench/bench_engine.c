/*
 * bench_engine.c: the engine's store on its own -- put and get rates for
 * 1024 ranks x 16 keys of 256 bytes, the median latency of one get from a
 * warm store, and the bytes the store costs per key (engine accounting and
 * the allocator's own count).  Run by tests/bench/engine.sh.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/pg_engine.h"

#define RANKS 1024
#define KEYS 16
#define VALLEN 256
#define ROUNDS 5

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void sink_cb(pmix_status_t st, const pg_value_t *v, pmix_rank_t poster, void *cbdata)
{
    (void)poster;
    if (st != PMIX_SUCCESS || v == NULL || v->size != VALLEN)
        ++*(int *)cbdata;
}

static pg_engine_t *make_store(void)
{
    static uint32_t rank_node[RANKS];
    const char *hosts[16] = { "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7",
                              "n8", "n9", "n10", "n11", "n12", "n13", "n14", "n15" };
    for (uint32_t r = 0; r < RANKS; r++)
        rank_node[r] = r / (RANKS / 16);
    pg_ns_layout_t l = { 0 };
    l.size = RANKS;
    l.nnodes = 16;
    l.hostnames = hosts;
    l.rank_node = rank_node;
    pg_engine_t *e = pg_engine_new(NULL, NULL);
    if (e == NULL || pg_ns_register(e, "bench", &l) != PMIX_SUCCESS)
        exit(1);
    return e;
}

int main(void)
{
    static char keys[RANKS][KEYS][24];
    char val[VALLEN + 1];
    double put_rate[ROUNDS], get_rate[ROUNDS];
    uint64_t lat[ROUNDS];
    size_t mem_engine = 0, mem_malloc = 0;
    int bad = 0;

    memset(val, 'x', VALLEN);
    val[VALLEN] = '\0';
    pg_value_t v = pg_value_string(val);
    for (int r = 0; r < RANKS; r++)
        for (int k = 0; k < KEYS; k++)
            snprintf(keys[r][k], sizeof(keys[r][k]), "bc-%d-%d", r, k);

    for (int round = 0; round < ROUNDS; round++) {
        size_t m0 = mallinfo2().uordblks;
        pg_engine_t *e = make_store();
        size_t e0 = pg_engine_memory(e);
        uint64_t t0 = now_ns();
        for (int r = 0; r < RANKS; r++) {
            pg_proc_t p = { "bench", (pmix_rank_t)r };
            for (int k = 0; k < KEYS; k++)
                pg_put(e, &p, PMIX_GLOBAL, keys[r][k], &v, 0);
            pg_commit(e, &p);
        }
        uint64_t t1 = now_ns();
        put_rate[round] = RANKS * KEYS / ((double)(t1 - t0) / 1e9);
        mem_engine = pg_engine_memory(e) - e0;
        mem_malloc = mallinfo2().uordblks - m0;

        pg_get_req_t q;
        pg_proc_t me = { "bench", 0 }, tgt = { "bench", 0 };
        pg_get_req_init(&q, &me, &tgt, NULL);
        q.flags = PG_GET_IMMEDIATE;
        t0 = now_ns();
        for (int r = 0; r < RANKS; r++) {
            q.target.rank = (pmix_rank_t)r;
            q.requester.rank = (pmix_rank_t)((r + 7) % RANKS);
            for (int k = 0; k < KEYS; k++) {
                q.key = keys[r][k];
                pg_get(e, &q, 0, sink_cb, &bad);
            }
        }
        t1 = now_ns();
        get_rate[round] = RANKS * KEYS / ((double)(t1 - t0) / 1e9);

        /* single-get latency, warm store: median of many timed gets */
        enum { N = 20001 };
        static uint64_t one[N];
        for (int i = 0; i < N; i++) {
            int r = (i * 37) % RANKS, k = i % KEYS;
            q.target.rank = (pmix_rank_t)r;
            q.key = keys[r][k];
            uint64_t a = now_ns();
            pg_get(e, &q, 0, sink_cb, &bad);
            one[i] = now_ns() - a;
        }
        qsort(one, N, sizeof(one[0]), cmp_u64);
        lat[round] = one[N / 2];
        pg_engine_free(e);
    }
    qsort(lat, ROUNDS, sizeof(lat[0]), cmp_u64);
    double pr = 0, gr = 0;
    for (int i = 0; i < ROUNDS; i++) { /* the median: half the rounds are below it */
        int below_p = 0, below_g = 0;
        for (int j = 0; j < ROUNDS; j++) {
            below_p += put_rate[j] < put_rate[i];
            below_g += get_rate[j] < get_rate[i];
        }
        if (below_p == ROUNDS / 2)
            pr = put_rate[i];
        if (below_g == ROUNDS / 2)
            gr = get_rate[i];
    }
    double payload = RANKS * KEYS * (VALLEN + 8.0);
    printf("engine store: %d ranks x %d keys x %d B (median of %d rounds)\n", RANKS, KEYS, VALLEN,
           ROUNDS);
    printf("  put+commit rate      %.2f M keys/s\n", pr / 1e6);
    printf("  get rate (immediate) %.2f M gets/s\n", gr / 1e6);
    printf("  get latency, warm    %llu ns median (goal <= 200 ns; includes two clock reads)\n",
           (unsigned long long)lat[ROUNDS / 2]);
    printf("  bytes/key            %.1f engine-accounted, %.1f malloc (payload %.0f, budget %.0f)\n",
           (double)mem_engine / (RANKS * KEYS), (double)mem_malloc / (RANKS * KEYS),
           payload / (RANKS * KEYS), (2 * payload + 64.0 * RANKS * KEYS) / (RANKS * KEYS));
    if (bad != 0) {
        fprintf(stderr, "bench_engine: %d gets failed\n", bad);
        return 1;
    }
    return 0;
}
