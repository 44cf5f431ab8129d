/*
 * pmix_get_bench: PMIx_Get latency through libpmix and the gateway, for
 * `./dev bench clients` (tests/bench/pmix_get.sh).  Every rank puts one
 * 64-byte key, commits and joins a collecting fence; then rank 0 times
 * PMIx_Get (median of N, microseconds) of:
 *   reserved      PMIX_JOB_SIZE of the job (answered from the init data)
 *   fenced        the next rank's key, repeated (answered from the node
 *                 segment of the fence, docs/shm-segment.md: what a
 *                 program doing many gets of fenced keys sees)
 *   fenced-trip   the same with PMIX_GET_REFRESH_CACHE: every get is a round
 *                 trip to the gateway (the cost of a first fetch)
 * Usage: pmix_get_bench [iterations]   (default 20000)
 */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Median latency of n gets; -1 if any get fails. */
static double median_get(const pmix_proc_t *p, const char *key, const pmix_info_t *info,
                         size_t ninfo, int n)
{
    double *t = malloc((size_t)n * sizeof(*t)), med;

    for (int i = 0; i < n; i++) {
        pmix_value_t *v = NULL;
        double t0 = now_us();

        if (PMIx_Get(p, key, info, ninfo, &v) != PMIX_SUCCESS) {
            free(t);
            return -1;
        }
        t[i] = now_us() - t0;
        PMIX_VALUE_RELEASE(v);
    }
    qsort(t, (size_t)n, sizeof(*t), cmp_double);
    med = t[n / 2];
    free(t);
    return med;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    pmix_proc_t me, job, peer;
    pmix_value_t val, *sz = NULL;
    pmix_info_t info = { .flags = 0 }; /* LOAD keeps flags: start from zero */
    bool yes = true;
    char key[64], card[64];
    uint32_t size;

    if (n <= 0 || PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return 1;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &sz) != PMIX_SUCCESS)
        return 1;
    size = sz->data.uint32;
    PMIX_VALUE_RELEASE(sz);
    snprintf(key, sizeof(key), "card-%u", me.rank);
    memset(card, 'c', sizeof(card) - 1);
    card[sizeof(card) - 1] = '\0';
    PMIX_VALUE_LOAD(&val, card, PMIX_STRING);
    PMIx_Put(PMIX_GLOBAL, key, &val);
    PMIX_VALUE_DESTRUCT(&val);
    PMIx_Commit();
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (me.rank == 0) {
        PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + 1) % size);
        snprintf(key, sizeof(key), "card-%u", peer.rank);
        PMIX_INFO_LOAD(&info, PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
        printf("ranks %u  reserved %.2f us  fenced %.2f us  fenced-trip %.2f us  (median of %d)\n",
               size, median_get(&job, PMIX_JOB_SIZE, NULL, 0, n),
               median_get(&peer, key, NULL, 0, n), median_get(&peer, key, &info, 1, n), n);
        PMIX_INFO_DESTRUCT(&info);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
    PMIx_Finalize(NULL, 0);
    return 0;
}
