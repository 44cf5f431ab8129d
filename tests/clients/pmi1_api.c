/*
 * pmi1_api: a program written to the PMI-1 API (pmi.h), linked with
 * pmigate's libpmi, run under any PMI-1 server with N >= 2 ranks.  It calls
 * every entry point and checks what a PMI-1 program relies on: init facts,
 * the limits, an own put read back at once, every rank's key after a
 * barrier, a missing key failing, the clique from PMI_process_mapping
 * (checked against MPI_LOCALNRANKS when the launcher sets it), publish /
 * lookup / unpublish, and — when PMI1_API_SPAWN_FAILS=1 says the server
 * cannot spawn — a spawn that fails instead of hanging.  With
 * PMI1_API_SPAWN=1 rank 0 spawns instead (PMI_Spawn_multiple): two
 * commands of this program in child mode (one of 2 processes, one of 1)
 * with a preput key, then a program that does not exist (the call fails,
 * errcodes = ENOENT).  A child ("pmi1_api child") checks PMI_Init's
 * spawned flag, its appnum, and the preput key before any barrier.  Prints
 * "pmi1_api rank R: ok" / "pmi1_api child R: ok" or names the first broken
 * rule and exits 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmi.h"

static int rank = -1;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "pmi1_api rank %d: ", rank);                       \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* MPICH's older id calls (Slurm's, Flux's, OpenPMIx's libpmi have them):
 * both ids are the key-value space's name, as long as a name can be. */
static void check_ids(const char *kvs, int kvsmax)
{
    char id[256];
    int idmax = 0;

    CHECK(PMI_Get_id_length_max(&idmax) == PMI_SUCCESS && idmax == kvsmax, "Get_id_length_max %d",
          idmax);
    CHECK(PMI_Get_id(id, sizeof(id)) == PMI_SUCCESS && strcmp(id, kvs) == 0, "Get_id");
    CHECK(PMI_Get_kvs_domain_id(id, sizeof(id)) == PMI_SUCCESS && strcmp(id, kvs) == 0,
          "Get_kvs_domain_id");
}

static void check_kvs(int size)
{
    char kvs[256], key[64], val[128], want[128];
    int kvsmax, keymax, valmax;

    CHECK(PMI_KVS_Get_name_length_max(&kvsmax) == PMI_SUCCESS && kvsmax > 0, "name max");
    CHECK(PMI_KVS_Get_key_length_max(&keymax) == PMI_SUCCESS && keymax >= 32, "key max %d", keymax);
    CHECK(PMI_KVS_Get_value_length_max(&valmax) == PMI_SUCCESS && valmax >= 128, "val max %d", valmax);
    CHECK(PMI_KVS_Get_my_name(kvs, sizeof(kvs)) == PMI_SUCCESS && kvs[0], "KVS_Get_my_name");
    check_ids(kvs, kvsmax);
    snprintf(key, sizeof(key), "pmi1-key-%d", rank);
    snprintf(val, sizeof(val), "value=of=rank-%d", rank);
    CHECK(PMI_KVS_Put(kvs, key, val) == PMI_SUCCESS, "KVS_Put");
    CHECK(PMI_KVS_Get(kvs, key, want, sizeof(want)) == PMI_SUCCESS && strcmp(want, val) == 0,
          "own key not readable before the barrier");
    CHECK(PMI_KVS_Commit(kvs) == PMI_SUCCESS, "KVS_Commit");
    CHECK(PMI_Barrier() == PMI_SUCCESS, "Barrier");
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof(key), "pmi1-key-%d", r);
        snprintf(want, sizeof(want), "value=of=rank-%d", r);
        CHECK(PMI_KVS_Get(kvs, key, val, sizeof(val)) == PMI_SUCCESS && strcmp(val, want) == 0,
              "get %s after the barrier", key);
    }
    CHECK(PMI_KVS_Get(kvs, "pmi1-no-such-key", val, sizeof(val)) != PMI_SUCCESS,
          "a missing key was found");
}

static void check_clique(int size)
{
    int n = 0, *ranks, mine = 0;
    const char *local = getenv("MPI_LOCALNRANKS");

    CHECK(PMI_Get_clique_size(&n) == PMI_SUCCESS && n >= 1 && n <= size, "clique size %d", n);
    if (local != NULL)
        CHECK(n == atoi(local), "clique size %d, MPI_LOCALNRANKS %s", n, local);
    ranks = malloc((size_t)n * sizeof(int));
    CHECK(ranks != NULL && PMI_Get_clique_ranks(ranks, n) == PMI_SUCCESS, "clique ranks");
    for (int i = 0; i < n; i++)
        mine += ranks[i] == rank;
    CHECK(mine == 1, "own rank not in its clique");
    CHECK(n < 2 || PMI_Get_clique_ranks(ranks, n - 1) != PMI_SUCCESS, "short clique buffer accepted");
    free(ranks);
}

static void check_names(void)
{
    char port[PMI_MAX_PORT_NAME];

    if (rank == 0)
        CHECK(PMI_Publish_name("pmi1-api-svc", "tag#0$port#4711$") == PMI_SUCCESS, "Publish_name");
    CHECK(PMI_Barrier() == PMI_SUCCESS, "barrier after publish");
    CHECK(PMI_Lookup_name("pmi1-api-svc", port) == PMI_SUCCESS && strcmp(port, "tag#0$port#4711$") == 0,
          "Lookup_name");
    CHECK(PMI_Barrier() == PMI_SUCCESS, "barrier after lookup");
    if (rank == 0)
        CHECK(PMI_Unpublish_name("pmi1-api-svc") == PMI_SUCCESS, "Unpublish_name");
    CHECK(PMI_Barrier() == PMI_SUCCESS, "barrier after unpublish");
    CHECK(PMI_Lookup_name("pmi1-api-svc", port) != PMI_SUCCESS, "lookup after unpublish succeeded");
}

static void check_spawn_refused(void)
{
    const char *cmds[] = { "/bin/true" };
    const char **argvs[] = { NULL };
    const int maxprocs[] = { 1 }, ninfo[] = { 0 };
    const PMI_keyval_t *infos[] = { NULL };
    int errors[1];

    CHECK(PMI_Spawn_multiple(1, cmds, argvs, maxprocs, ninfo, infos, 0, NULL, errors) != PMI_SUCCESS,
          "spawn succeeded on a server that cannot spawn");
}

#define PREPUT_KEY "PARENT_ROOT_PORT_NAME"
#define PREPUT_VAL "tag#0$port#99$"

static void check_spawn(const char *self)
{
    const char *cmds[] = { self, self }, *missing[] = { "/nonexistent/pmi1_api_child" };
    const char *args0[] = { "child", "0", NULL }, *args1[] = { "child", "1", NULL };
    const char **argvs[] = { args0, args1 };
    const int maxprocs[] = { 2, 1 }, ninfo[] = { 1, 0 };
    const PMI_keyval_t wdir[] = { { "wdir", "/tmp" } };
    const PMI_keyval_t *infos[] = { wdir, NULL };
    const PMI_keyval_t preput[] = { { PREPUT_KEY, PREPUT_VAL } };
    int errors[3] = { -1, -1, -1 };

    CHECK(PMI_Spawn_multiple(2, cmds, argvs, maxprocs, ninfo, infos, 1, preput, errors) ==
                  PMI_SUCCESS &&
              errors[0] == 0 && errors[1] == 0 && errors[2] == 0,
          "PMI_Spawn_multiple of 2 commands (errcodes %d,%d,%d)", errors[0], errors[1], errors[2]);
    errors[0] = -1;
    CHECK(PMI_Spawn_multiple(1, missing, NULL, maxprocs + 1, NULL, NULL, 0, NULL, errors) !=
                  PMI_SUCCESS &&
              errors[0] == ENOENT,
          "spawning a missing program: errcode %d, expected ENOENT", errors[0]);
}

static int child_main(int spawned, const char *want_appnum)
{
    char kvs[256], val[128];
    int appnum = -2;

    CHECK(spawned == PMI_TRUE, "a spawned child's PMI_Init says spawned = %d", spawned);
    CHECK(PMI_Get_rank(&rank) == PMI_SUCCESS, "Get_rank");
    CHECK(PMI_Get_appnum(&appnum) == PMI_SUCCESS && appnum == atoi(want_appnum),
          "appnum %d, expected %s", appnum, want_appnum);
    CHECK(PMI_KVS_Get_my_name(kvs, sizeof(kvs)) == PMI_SUCCESS, "KVS_Get_my_name");
    CHECK(PMI_KVS_Get(kvs, PREPUT_KEY, val, sizeof(val)) == PMI_SUCCESS &&
              strcmp(val, PREPUT_VAL) == 0,
          "preput key not readable before the first barrier");
    CHECK(PMI_Barrier() == PMI_SUCCESS, "child barrier");
    CHECK(PMI_Finalize() == PMI_SUCCESS, "child PMI_Finalize");
    printf("pmi1_api child %d: ok\n", rank);
    return 0;
}

int main(int argc, char **argv)
{
    int spawned = -1, init = 0, size = 0, usize = 0, appnum = -2;
    const char *spawn_fails = getenv("PMI1_API_SPAWN_FAILS");
    const char *spawn_works = getenv("PMI1_API_SPAWN");

    if (argc > 2 && strcmp(argv[1], "child") == 0) {
        CHECK(PMI_Init(&spawned) == PMI_SUCCESS, "child PMI_Init");
        return child_main(spawned, argv[2]);
    }

    CHECK(PMI_Initialized(&init) == PMI_SUCCESS && !init, "initialized before PMI_Init");
    CHECK(PMI_Init(&spawned) == PMI_SUCCESS && spawned == PMI_FALSE, "PMI_Init");
    CHECK(PMI_Initialized(&init) == PMI_SUCCESS && init, "not initialized after PMI_Init");
    CHECK(PMI_Get_rank(&rank) == PMI_SUCCESS, "Get_rank");
    CHECK(PMI_Get_size(&size) == PMI_SUCCESS && size >= 2 && rank >= 0 && rank < size,
          "size %d rank %d", size, rank);
    CHECK(PMI_Get_universe_size(&usize) == PMI_SUCCESS, "Get_universe_size");
    CHECK(usize < 0 || usize >= size, "universe size %d < size %d", usize, size);
    CHECK(PMI_Get_appnum(&appnum) == PMI_SUCCESS && appnum >= -1, "Get_appnum");
    check_kvs(size);
    check_clique(size);
    check_names();
    if (spawn_fails != NULL && strcmp(spawn_fails, "1") == 0)
        check_spawn_refused();
    if (spawn_works != NULL && strcmp(spawn_works, "1") == 0 && rank == 0)
        check_spawn(argv[0]);
    CHECK(PMI_Barrier() == PMI_SUCCESS, "final barrier");
    CHECK(PMI_Finalize() == PMI_SUCCESS, "PMI_Finalize");
    CHECK(PMI_Initialized(&init) == PMI_SUCCESS && !init, "initialized after PMI_Finalize");
    printf("pmi1_api rank %d: ok\n", rank);
    return 0;
}
