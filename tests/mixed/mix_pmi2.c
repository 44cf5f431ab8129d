/* The PMI-2 member of the mixed-version job (tests/mixed/mixed.h), linked
 * with pmigate's libpmi2. */
#include "pmi2.h"

#include "mixed.h"

int main(int argc, char **argv)
{
    char apis[MIX_MAX_RANKS][8], jobid[256], key[64], val[PMI2_MAX_VALLEN + 1], want[1024];
    int spawned, size, rank = -1, appnum, len;

    MIX_CHECK(rank, argc == 2, "usage: mix_pmi2 LAYOUT");
    MIX_CHECK(rank, PMI2_Init(&spawned, &size, &rank, &appnum) == PMI2_SUCCESS, "PMI2_Init");
    MIX_CHECK(rank, mix_layout(argv[1], apis) == size, "layout does not match size %d", size);
    MIX_CHECK(rank, PMI2_Job_GetId(jobid, sizeof jobid) == PMI2_SUCCESS, "job id");
    for (int round = 1; round <= 2; round++) {
        mix_key(key, sizeof key, round, rank);
        mix_value(val, sizeof val, "pmi2", round, rank);
        MIX_CHECK(rank, PMI2_KVS_Put(key, val) == PMI2_SUCCESS, "put %s", key);
        MIX_CHECK(rank, PMI2_KVS_Fence() == PMI2_SUCCESS, "fence %d", round);
        for (int r = 0; r < size; r++) {
            mix_key(key, sizeof key, round, r);
            mix_value(want, sizeof want, apis[r], round, r);
            MIX_CHECK(rank, PMI2_KVS_Get(jobid, r, key, val, sizeof val, &len) == PMI2_SUCCESS,
                      "get %s", key);
            MIX_CHECK(rank, strcmp(val, want) == 0, "%s is '%s', expected '%s'", key, val, want);
        }
    }
    MIX_CHECK(rank, PMI2_Finalize() == PMI2_SUCCESS, "finalize");
    printf("mixed rank %d (pmi2): ok\n", rank);
    return 0;
}
