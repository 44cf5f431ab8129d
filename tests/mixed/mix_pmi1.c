/* The PMI-1 member of the mixed-version job (tests/mixed/mixed.h), linked
 * with pmigate's libpmi. */
#include "pmi.h"

#include "mixed.h"

int main(int argc, char **argv)
{
    char apis[MIX_MAX_RANKS][8], kvs[256], key[64], val[1024], want[1024];
    int spawned, size, rank = -1;

    MIX_CHECK(rank, argc == 2, "usage: mix_pmi1 LAYOUT");
    MIX_CHECK(rank, PMI_Init(&spawned) == PMI_SUCCESS, "PMI_Init");
    MIX_CHECK(rank, PMI_Get_size(&size) == PMI_SUCCESS && PMI_Get_rank(&rank) == PMI_SUCCESS,
              "size/rank");
    MIX_CHECK(rank, mix_layout(argv[1], apis) == size, "layout does not match size %d", size);
    MIX_CHECK(rank, PMI_KVS_Get_my_name(kvs, sizeof kvs) == PMI_SUCCESS, "kvs name");
    for (int round = 1; round <= 2; round++) {
        mix_key(key, sizeof key, round, rank);
        mix_value(val, sizeof val, "pmi1", round, rank);
        MIX_CHECK(rank, PMI_KVS_Put(kvs, key, val) == PMI_SUCCESS, "put %s", key);
        MIX_CHECK(rank, PMI_KVS_Commit(kvs) == PMI_SUCCESS, "commit");
        MIX_CHECK(rank, PMI_Barrier() == PMI_SUCCESS, "barrier %d", round);
        for (int r = 0; r < size; r++) {
            mix_key(key, sizeof key, round, r);
            mix_value(want, sizeof want, apis[r], round, r);
            MIX_CHECK(rank, PMI_KVS_Get(kvs, key, val, sizeof val) == PMI_SUCCESS, "get %s", key);
            MIX_CHECK(rank, strcmp(val, want) == 0, "%s is '%s', expected '%s'", key, val, want);
        }
    }
    MIX_CHECK(rank, PMI_Finalize() == PMI_SUCCESS, "finalize");
    printf("mixed rank %d (pmi1): ok\n", rank);
    return 0;
}
