/*
 * pmixbench: the PMIx wire-up workload of `./dev bench clients`, built
 * unchanged against pmigate's <pmix.h>/libpmix and against OpenPMIx's (run
 * under mpirun.openmpi), so the two are compared on the same machine in
 * the same run (tests/bench/pmix_wireup.sh).  Every rank puts one 220-byte
 * card (PMIX_GLOBAL), commits, fences with PMIX_COLLECT_DATA, gets all N
 * cards and checks each; the phase times (µs) of the slowest rank are
 * gathered through PMIx and rank 0 prints them on one line:
 *   pmixbench n=N fence=… getall=… ready_at=… out_at=… got_at=…
 * The *_at are moments (µs of CLOCK_BOOTTIME, the clock of /proc/uptime,
 * so the script compares them with its own start): when the last rank had
 * committed its card, the first rank left the fence, the last had every card
 * (tests/bench/pmix_wireup.sh splits the wall time into launch, fence, gets).
 */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/progs/pmi2_card.h"

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* A moment every process of the node reads alike. */
static double boot_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int fail(const pmix_proc_t *me, const char *what, pmix_status_t rc)
{
    fprintf(stderr, "pmixbench rank %u: %s failed (%d)\n", me->rank, what, rc);
    PMIx_Abort(1, what, NULL, 0);
    return 1;
}

static pmix_status_t fence_collect(void)
{
    pmix_info_t info;
    bool yes = true;
    pmix_status_t rc;

    PMIX_INFO_CONSTRUCT(&info); /* LOAD leaves the flags alone */
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static pmix_status_t put_double(const char *key, double d)
{
    pmix_value_t v;

    PMIX_VALUE_LOAD(&v, &d, PMIX_DOUBLE);
    return PMIx_Put(PMIX_GLOBAL, key, &v);
}

/* The keys of the moments of `at` in main. */
static const char *const stamp_names[] = { "ready_at", "fenced_at", "got_at" };

/* The largest (or with `least`, the smallest) rank's value of key
 * "<what>-<rank>" (rank 0 only). */
static double extreme(const pmix_proc_t *me, uint32_t n, const char *what, bool least)
{
    double worst = 0;
    char key[64];
    pmix_proc_t p;

    for (uint32_t r = 0; r < n; r++) {
        pmix_value_t *v = NULL;

        PMIX_LOAD_PROCID(&p, me->nspace, r);
        snprintf(key, sizeof(key), "%s-%u", what, r);
        if (PMIx_Get(&p, key, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_DOUBLE &&
            (r == 0 || (least ? v->data.dval < worst : v->data.dval > worst)))
            worst = v->data.dval;
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
    }
    return worst;
}

static double slowest(const pmix_proc_t *me, uint32_t n, const char *what)
{
    return extreme(me, n, what, false);
}

int main(void)
{
    pmix_proc_t me, job, p;
    pmix_value_t *v = NULL, val;
    char key[64], card[PG_CARD_LEN + 1];
    double t0, t1, t2, at[3];
    pmix_status_t rc;
    uint32_t n;

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS)
        return 1;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v)) != PMIX_SUCCESS)
        return fail(&me, "get job size", rc);
    n = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    pg_card_make((int)me.rank, card);
    snprintf(key, sizeof(key), "card-%u", me.rank);
    PMIX_VALUE_LOAD(&val, card, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    PMIX_VALUE_DESTRUCT(&val);
    if (rc != PMIX_SUCCESS || (rc = PMIx_Commit()) != PMIX_SUCCESS)
        return fail(&me, "put/commit", rc);
    t0 = now_us();
    at[0] = boot_us();
    if ((rc = fence_collect()) != PMIX_SUCCESS)
        return fail(&me, "fence", rc);
    t1 = now_us();
    at[1] = boot_us();
    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        snprintf(key, sizeof(key), "card-%u", r);
        pg_card_make((int)r, card);
        if ((rc = PMIx_Get(&p, key, NULL, 0, &v)) != PMIX_SUCCESS)
            return fail(&me, "get card", rc);
        if (v->type != PMIX_STRING || strcmp(v->data.string, card) != 0)
            return fail(&me, "card check", PMIX_ERR_BAD_PARAM);
        PMIX_VALUE_RELEASE(v);
    }
    t2 = now_us();
    at[2] = boot_us();
    snprintf(key, sizeof(key), "fence-%u", me.rank);
    rc = put_double(key, t1 - t0);
    snprintf(key, sizeof(key), "getall-%u", me.rank);
    if (rc == PMIX_SUCCESS)
        rc = put_double(key, t2 - t1);
    for (int i = 0; i < 3 && rc == PMIX_SUCCESS; i++) {
        snprintf(key, sizeof(key), "%s-%u", stamp_names[i], me.rank);
        rc = put_double(key, at[i]);
    }
    if (rc != PMIX_SUCCESS || (rc = PMIx_Commit()) != PMIX_SUCCESS ||
        (rc = fence_collect()) != PMIX_SUCCESS)
        return fail(&me, "gather", rc);
    if (me.rank == 0)
        printf("pmixbench n=%u fence=%.0f getall=%.0f ready_at=%.0f out_at=%.0f got_at=%.0f\n",
               n, slowest(&me, n, "fence"), slowest(&me, n, "getall"),
               slowest(&me, n, stamp_names[0]), extreme(&me, n, stamp_names[1], true),
               slowest(&me, n, stamp_names[2]));
    fflush(stdout);
    PMIx_Fence(NULL, 0, NULL, 0);
    PMIx_Finalize(NULL, 0);
    return 0;
}
