/*
 * pmi_stall: a PMI-1 or PMI-2 rank that stops showing life -- the case
 * `pmigate run --heartbeat` exists for (tests/pmix/pmix_conform.sh).  It
 * initializes, joins the job's fence, then (rank 1) says nothing and
 * writes nothing while it "computes"; any other rank finalizes and exits.
 * Built against pmigate's libpmi, or with PG_STALL_PMI2 its libpmi2.  The
 * gateway must name rank 1 and kill the job; if it does not, rank 1 exits
 * 100 after a minute so the test sees it.
 */
#include <stdio.h>
#include <unistd.h>

#ifdef PG_STALL_PMI2
#include "pmi2.h"
#else
#include "pmi.h"
#endif

int main(void)
{
    int rank;

    /* life from the start: on a loaded machine the wire-up itself may take
     * a while, and only rank 1's later silence is the test's */
    printf("pmi_stall: starting\n");
    fflush(stdout);
#ifdef PG_STALL_PMI2
    int spawned, size, appnum;

    if (PMI2_Init(&spawned, &size, &rank, &appnum) != PMI2_SUCCESS ||
        PMI2_KVS_Fence() != PMI2_SUCCESS) {
        fprintf(stderr, "pmi_stall: PMI-2 init or fence failed\n");
        return 99;
    }
#else
    int spawned;

    if (PMI_Init(&spawned) != PMI_SUCCESS || PMI_Get_rank(&rank) != PMI_SUCCESS ||
        PMI_Barrier() != PMI_SUCCESS) {
        fprintf(stderr, "pmi_stall: PMI-1 init or barrier failed\n");
        return 99;
    }
#endif
    if (rank == 1) {
        sleep(60); /* no PMI, no output: the gateway ends the job */
        return 100;
    }
#ifdef PG_STALL_PMI2
    PMI2_Finalize();
#else
    PMI_Finalize();
#endif
    return 0;
}
