/*
 * pmi2_get_threads: PMI-2 get throughput of one process with T threads,
 * linked with pmigate's libpmi2 (`./dev bench clients`).  Every rank puts a
 * 220-byte card and fences; then T threads of this rank each get G cards of
 * the job's ranks in turn, concurrently.  Rank 0 prints
 *   pmi2_get_threads n=N threads=T gets=T*G wall_us=… gets_per_s=…
 *   usage: pmi2_get_threads THREADS GETS_PER_THREAD
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmi2.h"

static int size, rank, gets_per_thread;
static char jobid[256];

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *getter(void *arg)
{
    char key[64], val[PMI2_MAX_VALLEN + 1];
    int len, first = (int)(long)arg;

    for (int i = 0; i < gets_per_thread; i++) {
        int r = (first + i) % size;
        snprintf(key, sizeof key, "card-%d", r);
        if (PMI2_KVS_Get(jobid, r, key, val, sizeof val, &len) != PMI2_SUCCESS ||
            strncmp(val, key, strlen(key)) != 0) {
            fprintf(stderr, "rank %d: get %s failed\n", rank, key);
            exit(1);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int spawned, appnum, nthreads = argc > 1 ? atoi(argv[1]) : 1;
    char key[64], card[221];
    size_t klen;
    pthread_t tids[64];

    gets_per_thread = argc > 2 ? atoi(argv[2]) : 10000;
    if (nthreads < 1 || nthreads > 64 || gets_per_thread < 1) {
        fprintf(stderr, "usage: pmi2_get_threads THREADS(1-64) GETS_PER_THREAD\n");
        return 2;
    }
    if (PMI2_Init(&spawned, &size, &rank, &appnum) != PMI2_SUCCESS ||
        PMI2_Job_GetId(jobid, sizeof jobid) != PMI2_SUCCESS)
        return 1;
    snprintf(key, sizeof key, "card-%d", rank);
    /* the key, then filler up to 220 bytes: the check is the key prefix */
    klen = strlen(key);
    memcpy(card, key, klen);
    memset(card + klen, 'x', sizeof card - 1 - klen);
    card[sizeof card - 1] = '\0';
    if (PMI2_KVS_Put(key, card) != PMI2_SUCCESS || PMI2_KVS_Fence() != PMI2_SUCCESS)
        return 1;
    double t0 = now_us();
    for (int t = 0; t < nthreads; t++)
        pthread_create(&tids[t], NULL, getter, (void *)(long)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(tids[t], NULL);
    double wall = now_us() - t0;
    if (rank == 0)
        printf("pmi2_get_threads n=%d threads=%d gets=%d wall_us=%.0f gets_per_s=%.0f\n", size,
               nthreads, nthreads * gets_per_thread, wall, nthreads * gets_per_thread / wall * 1e6);
    return PMI2_Finalize() == PMI2_SUCCESS ? 0 : 1;
}
