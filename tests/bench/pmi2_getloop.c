/*
 * pmi2_getloop: one client's kvs-get latency through a real PMI-2 server,
 * linked with Slurm's libpmi2 — the figure compared with floor_rtt's raw
 * socketpair round trip.  Meant for a 1-rank job: init, put one 220-byte
 * card, fence, then get it back many times, timing each get on its own.
 * (With more ranks every rank runs the loop and rank 0 reports its own.)
 *
 * usage: pmi2_getloop [gets]          (default 20000, after 1000 warm-up)
 * prints (rank 0): getloop gets=G median_us=… p10_us=… p90_us=…
 */
#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CARD_LEN 220
#define WARMUP 1000
#define DEFAULT_GETS 20000
#define MAX_GETS 10000000

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "pmi2_getloop: %s failed (rc=%d)\n", what, rc);
    PMI2_Abort(1, what);
    return 1;
}

/* Times `gets` kvs-gets of key (after the warm-up) into samples[]. */
static int time_gets(const char *jobid, int rank, const char *key, double *samples, int gets)
{
    char got[PMI2_MAX_VALLEN + 1];
    int len, rc;
    for (int i = -WARMUP; i < gets; i++) {
        double t0 = now_us();
        if ((rc = PMI2_KVS_Get(jobid, rank, key, got, sizeof got, &len)) != PMI2_SUCCESS)
            return fail("PMI2_KVS_Get", rc);
        if (i >= 0)
            samples[i] = now_us() - t0;
        if (len != CARD_LEN)
            return fail("card length check", len);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int spawned, size, rank, appnum, rc, gets = DEFAULT_GETS;
    char jobid[256], key[64], card[CARD_LEN + 1];

    if (argc > 2 || (argc == 2 && ((gets = atoi(argv[1])) < 1 || gets > MAX_GETS))) {
        fprintf(stderr, "usage: pmi2_getloop [gets 1..%d]\n", MAX_GETS);
        return 2;
    }
    double *samples = calloc((size_t)gets, sizeof *samples);
    if (samples == NULL)
        return 1;
    if ((rc = PMI2_Init(&spawned, &size, &rank, &appnum)) != PMI2_SUCCESS)
        return fail("PMI2_Init", rc);
    if ((rc = PMI2_Job_GetId(jobid, sizeof jobid)) != PMI2_SUCCESS)
        return fail("PMI2_Job_GetId", rc);
    snprintf(key, sizeof key, "card-%d", rank);
    memset(card, 'c', CARD_LEN);
    card[CARD_LEN] = '\0';
    if ((rc = PMI2_KVS_Put(key, card)) != PMI2_SUCCESS)
        return fail("PMI2_KVS_Put", rc);
    if ((rc = PMI2_KVS_Fence()) != PMI2_SUCCESS)
        return fail("PMI2_KVS_Fence", rc);
    if (time_gets(jobid, rank, key, samples, gets) != 0)
        return 1;
    qsort(samples, (size_t)gets, sizeof *samples, compare_double);
    if (rank == 0)
        printf("getloop gets=%d median_us=%.2f p10_us=%.2f p90_us=%.2f\n", gets,
               gets % 2 ? samples[gets / 2] : (samples[gets / 2 - 1] + samples[gets / 2]) / 2,
               samples[gets / 10], samples[gets - 1 - gets / 10]);
    free(samples);
    if ((rc = PMI2_Finalize()) != PMI2_SUCCESS)
        return fail("PMI2_Finalize", rc);
    return 0;
}
