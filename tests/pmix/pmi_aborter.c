/*
 * pmi_aborter: the PMI-1 or PMI-2 rank of a mixed job that aborts it
 * (tests/pmix/pmix_events.sh, mode "watch" of pmix_events).  After the
 * job's fence (the PMIx ranks have registered their handlers by then) it
 * calls PMI_Abort(7, "rank 3 gives up") -- or, built against libpmi2
 * (PG_ABORTER_PMI2), PMI2_Abort(1, "rank 3 gives up"), whose wire form
 * carries no code (the job ends with 1).  The PMIx ranks must hear of it
 * as PMIX_ERR_PROC_ABORTED from this rank.  Never returns from the abort;
 * if it does, it exits 100 so the test sees it.
 */
#include <stdio.h>
#include <unistd.h>

#ifdef PG_ABORTER_PMI2
#include "pmi2.h"
#else
#include "pmi.h"
#endif

int main(void)
{
#ifdef PG_ABORTER_PMI2
    int spawned, size, rank, appnum;

    if (PMI2_Init(&spawned, &size, &rank, &appnum) != PMI2_SUCCESS ||
        PMI2_KVS_Fence() != PMI2_SUCCESS) {
        fprintf(stderr, "pmi_aborter: PMI-2 init or fence failed\n");
        return 99;
    }
    PMI2_Abort(1, "rank 3 gives up");
#else
    int spawned;

    if (PMI_Init(&spawned) != PMI_SUCCESS || PMI_Barrier() != PMI_SUCCESS) {
        fprintf(stderr, "pmi_aborter: PMI-1 init or barrier failed\n");
        return 99;
    }
    PMI_Abort(7, "rank 3 gives up");
#endif
    sleep(20); /* the gateway ends the job */
    return 100;
}
