/* The PMIx member of the mixed-version job (tests/mixed/mixed.h), linked
 * with pmigate's libpmix.  Its fence collects data, as the PMI barriers do,
 * so all three kinds meet in the same fence. */
#include <pmix.h>

#include "mixed.h"

int main(int argc, char **argv)
{
    char apis[MIX_MAX_RANKS][8], key[64], want[1024];
    pmix_proc_t me, peer, wild;
    pmix_value_t v, *got;
    pmix_info_t collect;
    bool yes = true;
    int size;

    MIX_CHECK(-1, argc == 2, "usage: mix_pmix LAYOUT");
    MIX_CHECK(-1, PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "PMIx_Init");
    int rank = (int)me.rank;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    MIX_CHECK(rank, PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &got) == PMIX_SUCCESS, "job size");
    size = (int)got->data.uint32;
    PMIX_VALUE_RELEASE(got);
    MIX_CHECK(rank, mix_layout(argv[1], apis) == size, "layout does not match size %d", size);
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    for (int round = 1; round <= 2; round++) {
        char val[1024];
        mix_key(key, sizeof key, round, rank);
        mix_value(val, sizeof val, "pmix", round, rank);
        PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
        MIX_CHECK(rank, PMIx_Put(PMIX_GLOBAL, key, &v) == PMIX_SUCCESS, "put %s", key);
        PMIX_VALUE_DESTRUCT(&v);
        MIX_CHECK(rank, PMIx_Commit() == PMIX_SUCCESS, "commit");
        MIX_CHECK(rank, PMIx_Fence(NULL, 0, &collect, 1) == PMIX_SUCCESS, "fence %d", round);
        for (int r = 0; r < size; r++) {
            mix_key(key, sizeof key, round, r);
            mix_value(want, sizeof want, apis[r], round, r);
            PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t)r);
            MIX_CHECK(rank, PMIx_Get(&peer, key, NULL, 0, &got) == PMIX_SUCCESS, "get %s", key);
            MIX_CHECK(rank, got->type == PMIX_STRING && strcmp(got->data.string, want) == 0,
                      "%s is not '%s'", key, want);
            PMIX_VALUE_RELEASE(got);
        }
    }
    MIX_CHECK(rank, PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "finalize");
    printf("mixed rank %d (pmix): ok\n", rank);
    return 0;
}
