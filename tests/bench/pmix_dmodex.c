/*
 * pmix_dmodex: the direct-modex get of `./dev bench nodes`
 * (tests/bench/nodes_dmodex.sh), built against pmigate's libpmix.  Every
 * rank puts one key of 64 bytes and commits; every rank fences without
 * data collection (so no key travels with the fence); rank 0 then gets
 * that key of each rank of the job's second half, one by one, and times
 * each get, then a second key of each of them.  Under `pmigate proxy` on
 * 2 nodes the second half is the other node: each first get is a direct
 * modex across nodes (rank 0's proxy asks the owner's, whose answer
 * brings all that rank's committed keys), each second get finds its key
 * already on rank 0's node (a get its own gateway answers).  Under
 * `pmigate run` both are the same gets on one node.  Rank 0 starts 200 ms
 * after the fence, once the other ranks it woke are waiting again (in the
 * last fence), so a get is timed, not 2 cores' queue of runnable ranks.
 * Rank 0 prints one line per get:
 *   pmix_dmodex first|again us=...
 * A final fence keeps the owners until rank 0 is done.
 */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/bench/pg_bench.h"

static int fail(const pmix_proc_t *me, const char *what, pmix_status_t rc)
{
    fprintf(stderr, "pmix_dmodex rank %u: %s failed (%s)\n", me->rank, what,
            PMIx_Error_string(rc));
    return 1;
}

static pmix_status_t put(const char *key, pmix_rank_t rank)
{
    char val[64];
    pmix_value_t v;
    pmix_status_t rc;

    snprintf(val, sizeof(val), "%063u", rank);
    PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
    return rc;
}

/* One timed get of `key` of rank r, its value checked; prints its time. */
static pmix_status_t timed_get(const char *nspace, pmix_rank_t r, const char *key,
                               const char *label)
{
    char want[64];
    pmix_proc_t owner;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    double t0, us;

    PMIX_LOAD_PROCID(&owner, nspace, r);
    snprintf(want, sizeof(want), "%063u", r);
    t0 = pg_bench_now_us();
    rc = PMIx_Get(&owner, key, NULL, 0, &v);
    us = pg_bench_now_us() - t0;
    if (rc == PMIX_SUCCESS &&
        (v == NULL || v->type != PMIX_STRING || strcmp(v->data.string, want) != 0))
        rc = PMIX_ERR_BAD_PARAM;
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    if (rc == PMIX_SUCCESS)
        printf("pmix_dmodex %s us=%.1f\n", label, us);
    return rc;
}

int main(void)
{
    pmix_proc_t me, wild;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    pmix_rank_t size;

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS)
        return fail(&me, "PMIx_Init", rc);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v)) != PMIX_SUCCESS)
        return fail(&me, "get of the job size", rc);
    size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    if ((rc = put("dm", me.rank)) != PMIX_SUCCESS || (rc = put("dm2", me.rank)) != PMIX_SUCCESS ||
        (rc = PMIx_Commit()) != PMIX_SUCCESS)
        return fail(&me, "put and commit", rc);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
        return fail(&me, "fence", rc);
    if (me.rank == 0)
        usleep(200 * 1000);
    for (pmix_rank_t r = size / 2; me.rank == 0 && r < size; r++)
        if ((rc = timed_get(me.nspace, r, "dm", "first")) != PMIX_SUCCESS)
            return fail(&me, "get of another rank's key", rc);
    for (pmix_rank_t r = size / 2; me.rank == 0 && r < size; r++)
        if ((rc = timed_get(me.nspace, r, "dm2", "again")) != PMIX_SUCCESS)
            return fail(&me, "second get of another rank's key", rc);
    fflush(stdout);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
        return fail(&me, "last fence", rc);
    PMIx_Finalize(NULL, 0);
    return 0;
}
