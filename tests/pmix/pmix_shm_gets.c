/*
 * pmix_shm_gets: libpmix's gets after a whole-job fence, answered from the
 * node segment (docs/shm-segment.md), must be what the gateway would have
 * answered.  Run by tests/pmix/pmix_shm_gets.sh under `pmigate run --trace`,
 * which also counts the gets that reached the gateway (by key prefix):
 *   early-  before any fence: the socket (a rank that never fenced)      n
 *   card-   peers' cards after fences 1 and 2 (re-put between them: the
 *           second fence's value), then card-1 committed again without a
 *           fence: the socket for it                                   n-1
 *   num-    a typed (int32) value of each peer                           0
 *   loc-    PMIX_LOCAL values of peers on the same node                  0
 *   rem-    PMIX_REMOTE values: not for this node; the server says so  n(n-1)
 *   rf-     PMIX_GET_REFRESH_CACHE: the server first                     n
 *   shared  a key ranks 1.. post, asked without a rank by rank 0 (the
 *           lowest poster's; the others read their own); after rank 1's
 *           late commit: the socket                                      1
 * Each rank prints "rank R ok" or the first check that failed.
 */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pmix_proc_t me;
static int failed;

#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        if (!(cond) && !failed) {                                                            \
            failed = 1;                                                                      \
            printf("rank %u FAIL line %d: ", me.rank, __LINE__);                             \
            printf(__VA_ARGS__);                                                             \
            printf("\n");                                                                    \
        }                                                                                    \
    } while (0)

static void put_str(pmix_scope_t scope, const char *key, const char *s)
{
    pmix_value_t v;

    PMIX_VALUE_LOAD(&v, s, PMIX_STRING);
    CHECK(PMIx_Put(scope, key, &v) == PMIX_SUCCESS, "put %s", key);
    PMIX_VALUE_DESTRUCT(&v);
}

static void fence(const pmix_proc_t *procs, size_t n, int collect)
{
    pmix_info_t info;
    bool yes = true;

    PMIX_INFO_CONSTRUCT(&info); /* LOAD leaves the flags alone */
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Fence(procs, n, collect ? &info : NULL, collect ? 1 : 0) == PMIX_SUCCESS, "fence");
    PMIX_INFO_DESTRUCT(&info);
}

/* Gets (rank, key) with one optional boolean directive; returns the
 * status, *out the value (caller releases) on success. */
static pmix_status_t get(pmix_rank_t rank, const char *key, const char *flag, pmix_value_t **out)
{
    pmix_proc_t p;
    pmix_info_t info;
    bool yes = true;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    PMIX_INFO_CONSTRUCT(&info); /* LOAD leaves the flags alone */
    if (flag != NULL)
        PMIX_INFO_LOAD(&info, flag, &yes, PMIX_BOOL);
    *out = NULL;
    rc = PMIx_Get(rank == PMIX_RANK_UNDEF ? NULL : &p, key, flag ? &info : NULL, flag ? 1 : 0,
                  out);
    if (flag != NULL)
        PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static void expect_str(pmix_rank_t rank, const char *key, const char *flag, const char *want)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = get(rank, key, flag, &v);

    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_STRING && strcmp(v->data.string, want) == 0,
          "get %s of %u: status %d, want \"%s\", got \"%s\"", key, rank, rc, want,
          rc == PMIX_SUCCESS && v->type == PMIX_STRING ? v->data.string : "(not a string)");
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
}

int main(void)
{
    char key[64], val[64];
    pmix_value_t *v = NULL, *szv = NULL;
    pmix_proc_t job, *all;
    uint32_t n;
    int32_t num;

    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return 1;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &szv) != PMIX_SUCCESS)
        return 1;
    n = szv->data.uint32;
    PMIX_VALUE_RELEASE(szv);

    /* never fenced: the server (it holds the get until the peer commits) */
    snprintf(key, sizeof(key), "early-%u", me.rank);
    put_str(PMIX_GLOBAL, key, "early");
    PMIx_Commit();
    snprintf(key, sizeof(key), "early-%u", (me.rank + 1) % n);
    expect_str((me.rank + 1) % n, key, NULL, "early");

    /* fence 1 */
    snprintf(key, sizeof(key), "card-%u", me.rank);
    snprintf(val, sizeof(val), "card of %u, first", me.rank);
    put_str(PMIX_GLOBAL, key, val);
    snprintf(key, sizeof(key), "loc-%u", me.rank);
    put_str(PMIX_LOCAL, key, "local");
    snprintf(key, sizeof(key), "rem-%u", me.rank);
    put_str(PMIX_REMOTE, key, "remote");
    snprintf(key, sizeof(key), "rf-%u", me.rank);
    put_str(PMIX_GLOBAL, key, "refreshed");
    snprintf(val, sizeof(val), "shared from %u", me.rank);
    if (me.rank > 0)
        put_str(PMIX_GLOBAL, "shared", val);
    snprintf(key, sizeof(key), "num-%u", me.rank);
    num = (int32_t)me.rank * 10 - 7;
    {
        pmix_value_t nv;

        PMIX_VALUE_LOAD(&nv, &num, PMIX_INT32);
        CHECK(PMIx_Put(PMIX_GLOBAL, key, &nv) == PMIX_SUCCESS, "put num");
    }
    PMIx_Commit();
    fence(NULL, 0, 1);

    for (uint32_t p = 0; p < n; p++) {
        if (p == me.rank)
            continue;
        snprintf(key, sizeof(key), "card-%u", p);
        snprintf(val, sizeof(val), "card of %u, first", p);
        expect_str(p, key, NULL, val);
        expect_str(p, key, PMIX_OPTIONAL, val); /* fenced data is local now */
        snprintf(key, sizeof(key), "num-%u", p);
        CHECK(get(p, key, NULL, &v) == PMIX_SUCCESS && v->type == PMIX_INT32 &&
                  v->data.int32 == (int32_t)p * 10 - 7,
              "typed get of %s", key);
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
        snprintf(key, sizeof(key), "loc-%u", p);
        expect_str(p, key, NULL, "local");
        snprintf(key, sizeof(key), "rem-%u", p);
        {
            pmix_status_t rc = get(p, key, NULL, &v);

            CHECK(rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_EXISTS_OUTSIDE_SCOPE,
                  "REMOTE value of a same-node peer: status %d", rc);
            if (v != NULL)
                PMIX_VALUE_RELEASE(v);
        }
    }
    snprintf(val, sizeof(val), "shared from %u", me.rank);
    expect_str(PMIX_RANK_UNDEF, "shared", NULL, me.rank == 0 ? "shared from 1" : val);
    snprintf(key, sizeof(key), "rf-%u", (me.rank + 1) % n);
    expect_str((me.rank + 1) % n, key, PMIX_GET_REFRESH_CACHE, "refreshed");

    /* every rank has read fence 1's data before anyone puts again (a
     * commit after the fence would send readers to the server, rightly) */
    fence(NULL, 0, 0);

    /* re-put between two fences: the later fence's value */
    snprintf(key, sizeof(key), "card-%u", me.rank);
    snprintf(val, sizeof(val), "card of %u, second", me.rank);
    put_str(PMIX_GLOBAL, key, val);
    PMIx_Commit();
    fence(NULL, 0, 1);
    for (uint32_t p = 0; p < n; p++) {
        snprintf(key, sizeof(key), "card-%u", p);
        snprintf(val, sizeof(val), "card of %u, second", p);
        expect_str(p, key, NULL, val);
    }

    fence(NULL, 0, 0); /* all have read the second values */

    /* rank 1 commits again with no whole-job fence after it (the others
     * wait for it in a fence over an explicit list, which publishes no
     * segment): its new values come from the server */
    if (me.rank == 1) {
        put_str(PMIX_GLOBAL, "card-1", "card of 1, third");
        put_str(PMIX_GLOBAL, "shared", "shared from 1, again");
        PMIx_Commit();
    }
    PMIX_PROC_CREATE(all, n);
    for (uint32_t p = 0; p < n; p++)
        PMIX_LOAD_PROCID(&all[p], me.nspace, p);
    fence(all, n, 0);
    PMIX_PROC_FREE(all, n);
    expect_str(1, "card-1", NULL, "card of 1, third");
    snprintf(val, sizeof(val), "shared from %u", me.rank);
    expect_str(PMIX_RANK_UNDEF, "shared", NULL, me.rank < 2 ? "shared from 1, again" : val);
    if (n > 3) { /* a peer that did not commit again: still the segment's */
        uint32_t p = me.rank == 2 ? 3 : 2;

        snprintf(key, sizeof(key), "card-%u", p);
        snprintf(val, sizeof(val), "card of %u, second", p);
        expect_str(p, key, NULL, val);
    }

    fence(NULL, 0, 0);
    if (!failed)
        printf("rank %u ok\n", me.rank);
    PMIx_Finalize(NULL, 0);
    return failed;
}
