/*
 * pmi2_wireup: the PMI-2 wire-up workload of pmigate's benchmark and tests,
 * linked with Slurm's libpmi2 (or pmigate's own, which is binary-compatible):
 * every rank puts one 220-byte "business card", fences, gets all N cards and
 * checks each one, then finalizes.  Rank 0 prints the phase times (µs, the
 * slowest rank's, gathered through the KVS) on one line:
 *   wireup n=N init=… put=… fence=… getall=… total=… ready_at=… out_at=… got_at=…
 * The *_at are moments (µs of CLOCK_BOOTTIME, the clock of /proc/uptime, so
 * a script can compare them with its own start): when the last rank had put
 * its card, the first rank left the fence, and the last had every card
 * (tests/bench/wireup.sh splits the wall time into launch, fence, gets).
 */
#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/progs/pmi2_card.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A moment every process of the node reads alike. */
static double boot_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int fail(int rank, const char *what, int rc)
{
    fprintf(stderr, "pmi2_wireup rank %d: %s failed (rc=%d)\n", rank, what, rc);
    PMI2_Abort(1, what);
    return 1;
}

int main(void)
{
    int spawned, size, rank = -1, appnum, rc, len;
    char jobid[256], key[64], card[PG_CARD_LEN + 1], got[PMI2_MAX_VALLEN + 1];
    double t0 = now_us();

    if ((rc = PMI2_Init(&spawned, &size, &rank, &appnum)) != PMI2_SUCCESS)
        return fail(rank, "PMI2_Init", rc);
    if ((rc = PMI2_Job_GetId(jobid, sizeof jobid)) != PMI2_SUCCESS)
        return fail(rank, "PMI2_Job_GetId", rc);
    double t1 = now_us();

    snprintf(key, sizeof key, "card-%d", rank);
    pg_card_make(rank, card);
    if ((rc = PMI2_KVS_Put(key, card)) != PMI2_SUCCESS)
        return fail(rank, "PMI2_KVS_Put", rc);
    double t2 = now_us(), ready_at = boot_us();
    if ((rc = PMI2_KVS_Fence()) != PMI2_SUCCESS)
        return fail(rank, "PMI2_KVS_Fence", rc);
    double t3 = now_us(), fenced_at = boot_us();

    for (int r = 0; r < size; r++) {
        char want[PG_CARD_LEN + 1];
        snprintf(key, sizeof key, "card-%d", r);
        if ((rc = PMI2_KVS_Get(jobid, r, key, got, sizeof got, &len)) != PMI2_SUCCESS)
            return fail(rank, "PMI2_KVS_Get", rc);
        pg_card_make(r, want);
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "rank %d: card of rank %d is wrong: %.40s…\n", rank, r, got);
            return fail(rank, "card check", -1);
        }
    }
    double t4 = now_us(), got_at = boot_us();

    /* Report the slowest rank's phases: each rank posts its times, rank 0
     * reads them after a second fence. */
    char times[128];
    snprintf(times, sizeof times, "%.0f %.0f %.0f %.0f %.0f %.0f %.0f", t1 - t0, t2 - t1, t3 - t2,
             t4 - t3, ready_at, fenced_at, got_at);
    snprintf(key, sizeof key, "times-%d", rank);
    if ((rc = PMI2_KVS_Put(key, times)) != PMI2_SUCCESS || (rc = PMI2_KVS_Fence()) != PMI2_SUCCESS)
        return fail(rank, "report", rc);
    if (rank == 0) {
        double worst[7] = { 0 }, first_out = 0;
        for (int r = 0; r < size; r++) {
            double v[7];
            snprintf(key, sizeof key, "times-%d", r);
            if (PMI2_KVS_Get(jobid, r, key, got, sizeof got, &len) != PMI2_SUCCESS ||
                sscanf(got, "%lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                       &v[5], &v[6]) != 7)
                return fail(rank, "report get", -1);
            for (int i = 0; i < 7; i++)
                if (v[i] > worst[i])
                    worst[i] = v[i];
            if (r == 0 || v[5] < first_out)
                first_out = v[5];
        }
        printf("wireup n=%d init=%.0f put=%.0f fence=%.0f getall=%.0f total=%.0f ready_at=%.0f "
               "out_at=%.0f got_at=%.0f\n",
               size, worst[0], worst[1], worst[2], worst[3], now_us() - t0, worst[4], first_out,
               worst[6]);
    }
    if ((rc = PMI2_Finalize()) != PMI2_SUCCESS)
        return fail(rank, "PMI2_Finalize", rc);
    return 0;
}
