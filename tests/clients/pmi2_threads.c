/*
 * pmi2_threads: a multi-threaded PMI-2 program linked with pmigate's
 * libpmi2, run under any PMI-2 server with N >= 2 ranks on one node.  After
 * every rank has put its keys and fenced, 8 threads each make 1000 mixed
 * requests over the one shared socket — kvs-get of other ranks' keys,
 * info-getjobattr, info-putnodeattr followed by info-getnodeattr (nowait) of
 * the same attribute, job-getid — while a 9th thread sits in
 * PMI2_Info_GetNodeAttr(wait=1) for an attribute rank 0's main thread posts
 * only after the workers are well under way.  Every answer is checked.
 * Prints "pmi2_threads rank R: ok (<ms> ms)" or the first broken rule.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmi2.h"

enum { NWORKERS = 8, NREQUESTS = 1000, NKEYS = 4 };

static int rank = -1, size;
static char jobid[256];
/* what rank 0's main thread waits for before it posts the late attribute:
 * the waiter called, and the workers answered many requests since */
static atomic_int waiter_called, answered;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "pmi2_threads rank %d: ", rank);                   \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static void value_of(char *out, size_t cap, int r, int k)
{
    snprintf(out, cap, "val with space=%d-%d", r, k);
}

static void one_request(int thread, int i)
{
    char key[64], val[PMI2_MAX_VALLEN + 1], want[PMI2_MAX_VALLEN];
    int found = 0, len = 0, r = (rank + i) % size, k = i % NKEYS;

    switch (i % 4) {
    case 0:
        snprintf(key, sizeof(key), "key-%d-%d", r, k);
        value_of(want, sizeof(want), r, k);
        CHECK(PMI2_KVS_Get(jobid, r, key, val, sizeof(val), &len) == PMI2_SUCCESS &&
                  strcmp(val, want) == 0 && len == (int)strlen(want),
              "thread %d: kvs-get %s gave '%s'", thread, key, val);
        break;
    case 1:
        CHECK(PMI2_Info_GetJobAttr("PMI_process_mapping", val, sizeof(val), &found) == PMI2_SUCCESS &&
                  found && strncmp(val, "(vector,", 8) == 0,
              "thread %d: getjobattr", thread);
        break;
    case 2:
        /* a fresh name each time: hydra keeps the first value of a node attribute */
        snprintf(key, sizeof(key), "na-%d-%d-%d", rank, thread, i);
        snprintf(want, sizeof(want), "%d", i);
        CHECK(PMI2_Info_PutNodeAttr(key, want) == PMI2_SUCCESS, "thread %d: putnodeattr", thread);
        CHECK(PMI2_Info_GetNodeAttr(key, val, sizeof(val), &found, 0) == PMI2_SUCCESS && found &&
                  strcmp(val, want) == 0,
              "thread %d: getnodeattr %s gave found=%d '%s'", thread, key, found, val);
        break;
    default:
        CHECK(PMI2_Job_GetId(val, sizeof(val)) == PMI2_SUCCESS && strcmp(val, jobid) == 0,
              "thread %d: job-getid", thread);
    }
}

static void *worker(void *arg)
{
    int thread = (int)(long)arg;

    for (int i = 0; i < NREQUESTS; i++) {
        one_request(thread, i);
        atomic_fetch_add(&answered, 1);
    }
    return NULL;
}

static void *late_waiter(void *arg)
{
    char val[PMI2_MAX_VALLEN + 1];
    int found = 0;

    (void)arg;
    atomic_store(&answered, 0);
    atomic_store(&waiter_called, 1);
    CHECK(PMI2_Info_GetNodeAttr("late-attr", val, sizeof(val), &found, 1) == PMI2_SUCCESS && found &&
              strcmp(val, "posted-late") == 0,
          "waiting getnodeattr: found=%d", found);
    return NULL;
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
    pthread_t workers[NWORKERS], waiter;
    int spawned, appnum;
    char key[64], val[256];
    double t0;

    CHECK(PMI2_Init(&spawned, &size, &rank, &appnum) == PMI2_SUCCESS, "PMI2_Init");
    CHECK(size >= 2, "needs at least 2 ranks");
    CHECK(PMI2_Job_GetId(jobid, sizeof(jobid)) == PMI2_SUCCESS, "job id");
    for (int k = 0; k < NKEYS; k++) {
        snprintf(key, sizeof(key), "key-%d-%d", rank, k);
        value_of(val, sizeof(val), rank, k);
        CHECK(PMI2_KVS_Put(key, val) == PMI2_SUCCESS, "kvs-put");
    }
    CHECK(PMI2_KVS_Fence() == PMI2_SUCCESS, "fence");

    t0 = now_ms();
    CHECK(pthread_create(&waiter, NULL, late_waiter, NULL) == 0, "thread");
    for (long t = 0; t < NWORKERS; t++)
        CHECK(pthread_create(&workers[t], NULL, worker, (void *)t) == 0, "thread");
    /* the waiter has been waiting while the workers got hundreds of answers
     * through the same socket (so its request went out before them) */
    while (!atomic_load(&waiter_called) || atomic_load(&answered) < NWORKERS * 50)
        usleep(1000);
    if (rank == 0)
        CHECK(PMI2_Info_PutNodeAttr("late-attr", "posted-late") == PMI2_SUCCESS, "late put");
    for (int t = 0; t < NWORKERS; t++)
        pthread_join(workers[t], NULL);
    pthread_join(waiter, NULL);

    CHECK(PMI2_KVS_Fence() == PMI2_SUCCESS, "final fence");
    CHECK(PMI2_Finalize() == PMI2_SUCCESS, "PMI2_Finalize");
    printf("pmi2_threads rank %d: ok (%d x %d requests, %.0f ms)\n", rank, NWORKERS, NREQUESTS,
           now_ms() - t0);
    return 0;
}
