/*
 * pmi1_names: the PMI-1 name service as one job sees it, whatever node
 * each rank runs on (pmigate's libpmi; tests/cluster/proxy_names.sh runs
 * it over separate hosts).  Rank 0 publishes a name; after a barrier
 * every rank finds it with rank 0's port, and the last rank's publish of
 * the same name is refused; the last rank unpublishes it (one job, so it
 * may); after a barrier the name is gone for everyone and a second
 * unpublish is refused.  Prints "pmi1_names rank R: ok" or names the
 * broken rule and exits 1.
 */
#include <pmi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "pmi1_names rank %d: ", rank);                     \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

int main(void)
{
    char port[256];
    int spawned, size, last;

    CHECK(PMI_Init(&spawned) == PMI_SUCCESS, "PMI_Init");
    CHECK(PMI_Get_rank(&rank) == PMI_SUCCESS && PMI_Get_size(&size) == PMI_SUCCESS, "rank/size");
    last = size - 1;
    CHECK(size >= 2, "needs 2 ranks or more");
    if (rank == 0)
        CHECK(PMI_Publish_name("pg-pmi1-svc", "port-of-rank-0") == PMI_SUCCESS, "publish");
    CHECK(PMI_Barrier() == PMI_SUCCESS, "barrier 1");
    CHECK(PMI_Lookup_name("pg-pmi1-svc", port) == PMI_SUCCESS &&
              strcmp(port, "port-of-rank-0") == 0,
          "lookup of rank 0's name: '%s'", port);
    if (rank == last)
        CHECK(PMI_Publish_name("pg-pmi1-svc", "mine") != PMI_SUCCESS,
              "a publish of a name rank 0 holds was not refused");
    CHECK(PMI_Barrier() == PMI_SUCCESS, "barrier 2");
    if (rank == last)
        CHECK(PMI_Unpublish_name("pg-pmi1-svc") == PMI_SUCCESS, "unpublish");
    CHECK(PMI_Barrier() == PMI_SUCCESS, "barrier 3");
    CHECK(PMI_Lookup_name("pg-pmi1-svc", port) != PMI_SUCCESS, "found after unpublish: '%s'",
          port);
    if (rank == 0)
        CHECK(PMI_Unpublish_name("pg-pmi1-svc") != PMI_SUCCESS, "unpublished twice");
    CHECK(PMI_Barrier() == PMI_SUCCESS, "barrier 4");
    CHECK(PMI_Finalize() == PMI_SUCCESS, "finalize");
    printf("pmi1_names rank %d: ok\n", rank);
    return 0;
}
