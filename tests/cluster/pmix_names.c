/*
 * pmix_names: the PMIx name service as one job sees it, whatever node
 * each rank runs on (pmigate's libpmix; tests/cluster/proxy_names.sh runs
 * it over separate hosts).
 *   1. the last rank publishes two names at once (a string, an int); after
 *      a fence every rank finds both, published by the last rank, and rank
 *      0's publish of one of them is refused as a duplicate;
 *   2. rank 0 waits (PMIX_WAIT, 30 s PMIX_TIMEOUT) for a name the last
 *      rank publishes 2.5 s after the fence, carrying its clock at the
 *      publish: rank 0 must wake within WAKE_MS of it (the hosts share one
 *      kernel clock) -- a name found by polling would take up to a second;
 *   3. the last rank unpublishes everything it published (no keys); after
 *      a fence nobody finds the names.
 * argv[1] "time" (./dev bench): rank 0 prints "pmix_names wake_us=N" and,
 * after step 1, the last rank looks the string name up N_TIMED more times
 * (argv[2], default 200), printing "pmix_names lookup_us=T" for each.
 * Prints "pmix_names rank R: ok" or names the broken rule and exits 1.
 */
#define CL_PROG "pmix_names"
#include "tests/cluster/cl_pmix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { WAKE_MS = 300 };

/* Looks `key` up (waiting up to `wait_s` when > 0); the status. */
static pmix_status_t lookup(const char *key, int wait_s, pmix_pdata_t *pd)
{
    pmix_info_t info[2];
    int all = 0;
    pmix_status_t st;

    PMIX_PDATA_CONSTRUCT(pd);
    PMIX_LOAD_KEY(pd->key, key);
    PMIX_INFO_LOAD(&info[0], PMIX_WAIT, &all, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &wait_s, PMIX_INT);
    st = PMIx_Lookup(pd, 1, wait_s > 0 ? info : NULL, wait_s > 0 ? 2 : 0);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return st;
}

int main(int argc, char **argv)
{
    pmix_proc_t me;
    pmix_info_t pub[2];
    pmix_pdata_t pd;
    int size, last, answer = 42;
    bool say_time = argc > 1 && strcmp(argv[1], "time") == 0;

    size = cl_init(&me);
    last = size - 1;
    CHECK(size >= 2, "needs 2 ranks or more");

    /* 1. two names from the last rank, found everywhere */
    if (rank == last) {
        PMIX_INFO_LOAD(&pub[0], "pg-pmix-port", "port of the last rank", PMIX_STRING);
        PMIX_INFO_LOAD(&pub[1], "pg-pmix-answer", &answer, PMIX_INT);
        CHECK(PMIx_Publish(pub, 2) == PMIX_SUCCESS, "publish two names");
        PMIX_INFO_DESTRUCT(&pub[0]);
        PMIX_INFO_DESTRUCT(&pub[1]);
    }
    barrier();
    CHECK(lookup("pg-pmix-port", 0, &pd) == PMIX_SUCCESS && pd.value.type == PMIX_STRING &&
              strcmp(pd.value.data.string, "port of the last rank") == 0 &&
              pd.proc.rank == (pmix_rank_t)last && strcmp(pd.proc.nspace, me.nspace) == 0,
          "lookup of the last rank's string name");
    PMIX_PDATA_DESTRUCT(&pd);
    CHECK(lookup("pg-pmix-answer", 0, &pd) == PMIX_SUCCESS && pd.value.type == PMIX_INT &&
              pd.value.data.integer == 42,
          "lookup of the last rank's int name");
    PMIX_PDATA_DESTRUCT(&pd);
    if (rank == 0) {
        PMIX_INFO_LOAD(&pub[0], "pg-pmix-port", "taken", PMIX_STRING);
        CHECK(PMIx_Publish(pub, 1) == PMIX_ERR_DUPLICATE_KEY,
              "a publish of a name the last rank holds was not refused as a duplicate");
        PMIX_INFO_DESTRUCT(&pub[0]);
    }
    for (int i = 0, n = argc > 2 ? atoi(argv[2]) : 200; say_time && rank == last && i < n; i++) {
        long long t0 = now_us();

        CHECK(lookup("pg-pmix-port", 0, &pd) == PMIX_SUCCESS, "timed lookup %d", i);
        printf("pmix_names lookup_us=%lld\n", now_us() - t0);
        PMIX_PDATA_DESTRUCT(&pd);
    }
    barrier();

    /* 2. a waiting lookup, woken at once by a publish on another node */
    if (rank == last) {
        char when[32];

        usleep(2500 * 1000);
        snprintf(when, sizeof(when), "%lld", now_us());
        PMIX_INFO_LOAD(&pub[0], "pg-pmix-late", when, PMIX_STRING);
        CHECK(PMIx_Publish(pub, 1) == PMIX_SUCCESS, "publish the late name");
        PMIX_INFO_DESTRUCT(&pub[0]);
    } else if (rank == 0) {
        pmix_status_t st = lookup("pg-pmix-late", 30, &pd);
        long long woke = now_us(), published;

        CHECK(st == PMIX_SUCCESS && pd.value.type == PMIX_STRING,
              "the waiting lookup of the late name: %s", PMIx_Error_string(st));
        published = atoll(pd.value.data.string);
        CHECK(woke - published < WAKE_MS * 1000LL,
              "the waiting lookup woke %.3f s after the publish (at most %d ms)",
              (double)(woke - published) / 1e6, WAKE_MS);
        if (say_time)
            printf("pmix_names wake_us=%lld\n", woke - published);
        PMIX_PDATA_DESTRUCT(&pd);
    }
    barrier();

    /* 3. everything the last rank published goes */
    if (rank == last)
        CHECK(PMIx_Unpublish(NULL, NULL, 0) == PMIX_SUCCESS, "unpublish everything");
    barrier();
    CHECK(lookup("pg-pmix-port", 0, &pd) == PMIX_ERR_NOT_FOUND, "found after unpublish");
    PMIX_PDATA_DESTRUCT(&pd);
    CHECK(lookup("pg-pmix-late", 0, &pd) == PMIX_ERR_NOT_FOUND, "late name after unpublish");
    PMIX_PDATA_DESTRUCT(&pd);
    barrier();
    CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "finalize");
    printf("pmix_names rank %d: ok\n", rank);
    return 0;
}
