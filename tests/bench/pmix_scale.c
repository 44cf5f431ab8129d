/*
 * pmix_scale: the workload of `./dev bench scale` (tests/bench/scale.sh),
 * built against pmigate's libpmix and run under K `pmigate proxy`.
 *
 *   pmix_scale [S [first|even]]
 *
 * Every rank puts one value of S bytes (default 1024, a byte object),
 * commits, and joins a whole-job fence without data: it lines the ranks
 * up, so the timed fences measure the exchange and not the start-up's
 * spread.  Then, each timed by every rank:
 *   - a whole-job fence with PMIX_COLLECT_DATA (N values of S bytes);
 *   - the members of a subset put a second value of S bytes, commit and
 *     fence over that subset with PMIX_COLLECT_DATA.  "first" (default):
 *     ranks [0, (N+1)/2), i.e. the first half of the nodes (the proxies
 *     place ranks in blocks), at least 2 of them from K = 3 up; "even":
 *     the even ranks, every node's share when it holds 2 ranks.
 * After each fence the rank gets one other rank's value -- half the job
 * (or half the subset) away, so on another node -- with PMIX_IMMEDIATE,
 * which answers only from what is on the node already: a value that did
 * not come with the fence fails the run instead of being fetched (and
 * adding a direct modex to the bytes counted).  Not PMIX_OPTIONAL: that
 * reads the node's key segment alone, which a subset fence does not
 * rewrite.
 *
 * Every rank prints one line (the script takes the slowest):
 *   pmix_scale rank=R init_at=T fence_us=F [subset_us=U]
 * init_at is CLOCK_REALTIME in µs when PMIx_Init returned (the script
 * subtracts its own launch moment: the start-up of the job; the box's
 * hosts share the machine's clock); subset_us only on the members.  The
 * lines go out through stdout, not through PMIx: gathering them with
 * another fence would add to the mesh's byte counters the benchmark
 * reports.
 */
#include <pmix.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/bench/pg_bench.h"

static int fail(const pmix_proc_t *me, const char *what, pmix_status_t rc)
{
    fprintf(stderr, "pmix_scale rank %u: %s failed (%s)\n", me->rank, what,
            PMIx_Error_string(rc));
    PMIx_Abort(1, what, NULL, 0);
    return 1;
}

static double realtime_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The bytes of value `which` of rank r: a pattern of both, so a value
 * delivered to the wrong rank or key is told apart. */
static void fill(unsigned char *buf, size_t len, pmix_rank_t r, unsigned which)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(r * 131u + i * 7u + which * 61u);
}

static pmix_status_t put(const char *key, unsigned which, pmix_rank_t r, size_t len)
{
    unsigned char *buf = malloc(len ? len : 1);
    pmix_byte_object_t bo;
    pmix_value_t v;
    pmix_status_t rc;

    if (buf == NULL)
        return PMIX_ERR_NOMEM;
    fill(buf, len, r, which);
    bo.bytes = (char *)buf;
    bo.size = len;
    PMIX_VALUE_LOAD(&v, &bo, PMIX_BYTE_OBJECT);
    free(buf);
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
    return rc;
}

/* Gets rank r's value `which` from the node's own data only (PMIX_IMMEDIATE:
 * no fetch from another node) and checks it. */
static pmix_status_t check(const char *nspace, pmix_rank_t r, const char *key, unsigned which,
                           size_t len)
{
    pmix_proc_t owner;
    pmix_info_t info;
    pmix_value_t *v = NULL;
    unsigned char *want = malloc(len ? len : 1);
    bool yes = true;
    pmix_status_t rc;

    if (want == NULL)
        return PMIX_ERR_NOMEM;
    fill(want, len, r, which);
    PMIX_LOAD_PROCID(&owner, nspace, r);
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, &yes, PMIX_BOOL);
    rc = PMIx_Get(&owner, key, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_SUCCESS &&
        (v == NULL || v->type != PMIX_BYTE_OBJECT || v->data.bo.size != len ||
         memcmp(v->data.bo.bytes, want, len) != 0))
        rc = PMIX_ERR_BAD_PARAM;
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    free(want);
    return rc;
}

/* A fence over procs[0..n) (NULL: the whole job), collecting or not;
 * returns its time in µs through *us. */
static pmix_status_t fence(const pmix_proc_t *procs, size_t n, bool collect, double *us)
{
    pmix_info_t info;
    double t0;
    pmix_status_t rc;

    PMIX_INFO_CONSTRUCT(&info); /* LOAD leaves the flags alone */
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    t0 = pg_bench_now_us();
    rc = PMIx_Fence(procs, n, &info, 1);
    if (us != NULL)
        *us = pg_bench_now_us() - t0;
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

int main(int argc, char **argv)
{
    size_t len = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    bool even = argc > 2 && strcmp(argv[2], "even") == 0;
    pmix_proc_t me, wild, *members;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    pmix_rank_t size, nm = 0, mine = 0;
    double init_at, fence_us, subset_us = 0;
    bool member;

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS)
        return fail(&me, "PMIx_Init", rc);
    init_at = realtime_us();
    if (argc > 2 && !even && strcmp(argv[2], "first") != 0)
        return fail(&me, "the subset (first|even)", PMIX_ERR_BAD_PARAM);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v)) != PMIX_SUCCESS)
        return fail(&me, "get of the job size", rc);
    size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    if ((members = calloc(size, sizeof(*members))) == NULL)
        return fail(&me, "allocation", PMIX_ERR_NOMEM);
    for (pmix_rank_t r = 0; r < size; r++)
        if (even ? r % 2 == 0 : r < (size + 1) / 2) {
            if (r == me.rank)
                mine = nm;
            PMIX_LOAD_PROCID(&members[nm], me.nspace, r); /* a macro: its arguments run twice */
            nm++;
        }
    member = even ? me.rank % 2 == 0 : me.rank < (size + 1) / 2;

    if ((rc = put("scale", 0, me.rank, len)) != PMIX_SUCCESS || (rc = PMIx_Commit()) != PMIX_SUCCESS)
        return fail(&me, "put and commit", rc);
    if ((rc = fence(NULL, 0, false, NULL)) != PMIX_SUCCESS)
        return fail(&me, "the fence that lines the ranks up", rc);
    if ((rc = fence(NULL, 0, true, &fence_us)) != PMIX_SUCCESS)
        return fail(&me, "the whole-job fence", rc);
    if (size > 1 && (rc = check(me.nspace, (me.rank + size / 2) % size, "scale", 0, len)) != PMIX_SUCCESS)
        return fail(&me, "the check of a value the whole-job fence brought", rc);
    if (member) {
        if ((rc = put("scale2", 1, me.rank, len)) != PMIX_SUCCESS || (rc = PMIx_Commit()) != PMIX_SUCCESS)
            return fail(&me, "second put and commit", rc);
        if ((rc = fence(members, nm, true, &subset_us)) != PMIX_SUCCESS)
            return fail(&me, "the subset fence", rc);
        if (nm > 1 && (rc = check(me.nspace, members[(mine + nm / 2) % nm].rank, "scale2", 1, len)) !=
                          PMIX_SUCCESS)
            return fail(&me, "the check of a value the subset fence brought", rc);
    }
    if (member)
        printf("pmix_scale rank=%u init_at=%.0f fence_us=%.1f subset_us=%.1f\n", me.rank, init_at,
               fence_us, subset_us);
    else
        printf("pmix_scale rank=%u init_at=%.0f fence_us=%.1f\n", me.rank, init_at, fence_us);
    fflush(stdout);
    free(members);
    PMIx_Finalize(NULL, 0);
    return 0;
}
