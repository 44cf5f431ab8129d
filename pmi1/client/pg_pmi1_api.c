/*
 * pg_pmi1_api: the PMI_* entry points of libpmi.so.0 (pmi1/pmi.h).  The PMI-1
 * API is process-global by definition, so this file holds the one session of
 * the process in a single state struct and serialises every call with one
 * mutex (an uncontended lock costs nanoseconds next to a socket round trip).
 * Everything about the wire lives in pg_pmi1_cl.c.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/pg_cl_io.h"
#include "client/pg_cl_util.h"
#include "pmi1/client/pg_pmi1_cl.h"
#include "pmi1/pmi.h"

#define PMI1_MAPPING_KEY "PMI_process_mapping"

static struct pmi1_state {
    pthread_mutex_t lock;
    pg_pmi1_cl_t *cl;       /* NULL until PMI_Init succeeds and after PMI_Finalize */
    bool fd_taken;          /* PMI_FD was handed to a session (closed by now or at
                               finalize): never take that number again */
    int rank, size;
    int spawned;
    int *clique;            /* this node's ranks, computed on first use */
    int clique_size;
} pmi1 = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void pmi1_forget(void)
{
    pg_pmi1_cl_free(pmi1.cl);
    pmi1.cl = NULL;
    free(pmi1.clique);
    pmi1.clique = NULL;
    pmi1.clique_size = 0;
}

/* Connects (or goes singleton) and runs the handshakes. */
static int pmi1_start(void)
{
    pg_cl_env_t env;
    int rc;

    if (pg_cl_env_read(&env) != 0)
        return PMI_FAIL;
    if (env.mode == PG_CL_FD && pmi1.fd_taken)
        return PMI_FAIL; /* whatever file has that number now is not the server */
    /* with a shared segment the keys are read from it, not pushed to every process */
    pmi1.cl = pg_pmi1_cl_new(env.mode == PG_CL_SINGLETON ? -1 : env.fd,
                             env.pmigate_ext && env.shm == NULL, env.shm != NULL);
    if (pmi1.cl == NULL)
        return PMI_ERR_NOMEM;
    pmi1.fd_taken = pmi1.fd_taken || env.mode == PG_CL_FD;
    pmi1.size = env.size > 0 ? env.size : 1;
    pmi1.rank = env.rank >= 0 ? env.rank : 0;
    pmi1.spawned = env.spawned ? PMI_TRUE : PMI_FALSE;
    rc = PMI_SUCCESS;
    if (env.mode == PG_CL_PORT && env.id >= 0)
        rc = pg_pmi1_cl_initack(pmi1.cl, env.id, &pmi1.size, &pmi1.rank);
    if (rc == PMI_SUCCESS)
        rc = pg_pmi1_cl_init(pmi1.cl);
    if (rc == PMI_SUCCESS && env.mode != PG_CL_SINGLETON)
        rc = pg_pmi1_cl_use_shm(pmi1.cl, env.shm, pmi1.rank) == 0 ? PMI_SUCCESS : PMI_ERR_NOMEM;
    if (rc != PMI_SUCCESS)
        pmi1_forget();
    return rc;
}

int PMI_Init(int *spawned)
{
    int rc = PMI_SUCCESS;

    if (spawned == NULL)
        return PMI_ERR_INVALID_ARG;
    pthread_mutex_lock(&pmi1.lock);
    if (pmi1.cl == NULL)
        rc = pmi1_start();
    if (rc == PMI_SUCCESS)
        *spawned = pmi1.spawned;
    pthread_mutex_unlock(&pmi1.lock);
    return rc;
}

int PMI_Initialized(int *initialized)
{
    if (initialized == NULL)
        return PMI_ERR_INVALID_ARG;
    pthread_mutex_lock(&pmi1.lock);
    *initialized = pmi1.cl != NULL ? PMI_TRUE : PMI_FALSE;
    pthread_mutex_unlock(&pmi1.lock);
    return PMI_SUCCESS;
}

int PMI_Finalize(void)
{
    int rc = PMI_SUCCESS;

    pthread_mutex_lock(&pmi1.lock);
    if (pmi1.cl != NULL) {
        rc = pg_pmi1_cl_finalize(pmi1.cl);
        pmi1_forget();
    }
    pthread_mutex_unlock(&pmi1.lock);
    return rc;
}

/* The lock is only tried: another thread may hold it for a barrier or a
 * get that never ends in a stuck job, which is when programs abort.  Its
 * session is alive while it waits, and the abort line is written whole
 * between that thread's writes (pg_pmi1_cl_abort). */
int PMI_Abort(int exit_code, const char error_msg[])
{
    bool locked;

    /* The message is printed here, not sent: PMI-1 values cannot carry
     * spaces, and servers ignore it anyway. */
    fprintf(stderr, "PMI_Abort(%d): %s\n", exit_code, error_msg != NULL ? error_msg : "");
    fflush(stderr);
    locked = pthread_mutex_trylock(&pmi1.lock) == 0;
    if (pmi1.cl != NULL)
        (void)pg_pmi1_cl_abort(pmi1.cl, exit_code);
    if (locked)
        pthread_mutex_unlock(&pmi1.lock);
    exit(exit_code);
}

/* ---- facts ---------------------------------------------------------------- */

/* Runs one call with the lock held, or answers PMI_ERR_INIT. */
#define PMI1_LOCKED(expr)                                                       \
    do {                                                                        \
        int rc_ = PMI_ERR_INIT;                                                 \
        pthread_mutex_lock(&pmi1.lock);                                         \
        if (pmi1.cl != NULL)                                                    \
            rc_ = (expr);                                                       \
        pthread_mutex_unlock(&pmi1.lock);                                       \
        return rc_;                                                             \
    } while (0)

static int copy_int(int *out, int v)
{
    *out = v;
    return PMI_SUCCESS;
}

int PMI_Get_size(int *size)
{
    if (size == NULL)
        return PMI_ERR_INVALID_ARG;
    PMI1_LOCKED(copy_int(size, pmi1.size));
}

int PMI_Get_rank(int *rank)
{
    if (rank == NULL)
        return PMI_ERR_INVALID_ARG;
    PMI1_LOCKED(copy_int(rank, pmi1.rank));
}

int PMI_Get_universe_size(int *size)
{
    if (size == NULL)
        return PMI_ERR_INVALID_ARG;
    PMI1_LOCKED(pg_pmi1_cl_universe_size(pmi1.cl, size));
}

int PMI_Get_appnum(int *appnum)
{
    if (appnum == NULL)
        return PMI_ERR_INVALID_ARG;
    PMI1_LOCKED(pg_pmi1_cl_appnum(pmi1.cl, appnum));
}

/* The node's ranks, from PMI_process_mapping (self only when there is none). */
static int pmi1_clique(void)
{
    char mapping[PMI_MAX_PORT_NAME + 1];
    int count;

    if (pmi1.clique != NULL)
        return PMI_SUCCESS;
    if (pg_pmi1_cl_is_singleton(pmi1.cl) ||
        pg_pmi1_cl_get(pmi1.cl, NULL, PMI1_MAPPING_KEY, mapping, sizeof(mapping)) != PMI_SUCCESS)
        mapping[0] = '\0';
    if (pg_cl_mapping_clique(mapping, pmi1.rank, pmi1.size, NULL, 0, &count) != 0 ||
        (pmi1.clique = malloc((size_t)count * sizeof(int))) == NULL)
        return PMI_FAIL;
    pmi1.clique_size = count;
    return pg_cl_mapping_clique(mapping, pmi1.rank, pmi1.size, pmi1.clique, count, &count) == 0
               ? PMI_SUCCESS
               : PMI_FAIL;
}

static int clique_size(int *size)
{
    int rc = pmi1_clique();

    if (rc == PMI_SUCCESS)
        *size = pmi1.clique_size;
    return rc;
}

static int clique_ranks(int ranks[], int length)
{
    int rc = pmi1_clique();

    if (rc != PMI_SUCCESS)
        return rc;
    if (length < pmi1.clique_size)
        return PMI_ERR_INVALID_LENGTH;
    memcpy(ranks, pmi1.clique, (size_t)pmi1.clique_size * sizeof(int));
    return PMI_SUCCESS;
}

int PMI_Get_clique_size(int *size)
{
    if (size == NULL)
        return PMI_ERR_INVALID_ARG;
    PMI1_LOCKED(clique_size(size));
}

int PMI_Get_clique_ranks(int ranks[], int length)
{
    if (ranks == NULL)
        return PMI_ERR_INVALID_ARG;
    PMI1_LOCKED(clique_ranks(ranks, length));
}

int PMI_Barrier(void)
{
    PMI1_LOCKED(pg_pmi1_cl_barrier(pmi1.cl));
}

/* ---- key-value space ------------------------------------------------------ */

static int my_name(char kvsname[], int length)
{
    pg_str_t s = { pg_pmi1_cl_kvsname(pmi1.cl), 0 };

    s.len = (uint32_t)strlen(s.ptr);
    return length > 0 && pg_cl_copy(s, kvsname, (size_t)length) == 0 ? PMI_SUCCESS
                                                                      : PMI_ERR_INVALID_LENGTH;
}

int PMI_KVS_Get_my_name(char kvsname[], int length)
{
    if (kvsname == NULL)
        return PMI_ERR_INVALID_ARG;
    PMI1_LOCKED(my_name(kvsname, length));
}

enum pmi1_max { MAX_KVSNAME, MAX_KEY, MAX_VAL };

static int get_max(enum pmi1_max which, int *length)
{
    int lim[3];

    pg_pmi1_cl_maxes(pmi1.cl, &lim[MAX_KVSNAME], &lim[MAX_KEY], &lim[MAX_VAL]);
    *length = lim[which];
    return PMI_SUCCESS;
}

int PMI_KVS_Get_name_length_max(int *length)
{
    if (length == NULL)
        return PMI_ERR_INVALID_ARG;
    PMI1_LOCKED(get_max(MAX_KVSNAME, length));
}

/* The id of the process group and of the domain whose key-value spaces it
 * can share: MPICH's older PMI-1 calls, which Slurm's, Flux's and OpenPMIx's
 * libpmi still export.  With one key-value space per job both are its
 * name, as all three give them (Slurm's name is "jobid.stepid", the others'
 * the namespace), and the longest id is the longest name, as in Flux's. */
int PMI_Get_id(char id_str[], int length)
{
    return PMI_KVS_Get_my_name(id_str, length);
}

int PMI_Get_kvs_domain_id(char id_str[], int length)
{
    return PMI_KVS_Get_my_name(id_str, length);
}

int PMI_Get_id_length_max(int *length)
{
    return PMI_KVS_Get_name_length_max(length);
}

int PMI_KVS_Get_key_length_max(int *length)
{
    if (length == NULL)
        return PMI_ERR_INVALID_ARG;
    PMI1_LOCKED(get_max(MAX_KEY, length));
}

int PMI_KVS_Get_value_length_max(int *length)
{
    if (length == NULL)
        return PMI_ERR_INVALID_ARG;
    PMI1_LOCKED(get_max(MAX_VAL, length));
}

int PMI_KVS_Put(const char kvsname[], const char key[], const char value[])
{
    PMI1_LOCKED(pg_pmi1_cl_put(pmi1.cl, kvsname, key, value));
}

/* Puts are sent at once (the server stores them on arrival), so a commit
 * has nothing left to do. */
int PMI_KVS_Commit(const char kvsname[])
{
    (void)kvsname;
    PMI1_LOCKED(PMI_SUCCESS);
}

int PMI_KVS_Get(const char kvsname[], const char key[], char value[], int length)
{
    PMI1_LOCKED(pg_pmi1_cl_get(pmi1.cl, kvsname, key, value, length));
}

/* ---- name service --------------------------------------------------------- */

int PMI_Publish_name(const char service_name[], const char port[])
{
    PMI1_LOCKED(pg_pmi1_cl_publish(pmi1.cl, service_name, port));
}

int PMI_Unpublish_name(const char service_name[])
{
    PMI1_LOCKED(pg_pmi1_cl_unpublish(pmi1.cl, service_name));
}

int PMI_Lookup_name(const char service_name[], char port[])
{
    PMI1_LOCKED(pg_pmi1_cl_lookup(pmi1.cl, service_name, port, PMI_MAX_PORT_NAME));
}

/* ---- spawn ---------------------------------------------------------------- */

static int spawn_multiple(int count, const char *cmds[], const char **argvs[], const int maxprocs[],
                          const int info_sizes[], const PMI_keyval_t *infos[], int npreput,
                          const PMI_keyval_t preput[], int errors[])
{
    pg_spawn_cmd_t *sc = calloc((size_t)count, sizeof(*sc));
    pg_kv_t **info = calloc((size_t)count, sizeof(*info));
    pg_kv_t *pre = calloc((size_t)(npreput > 0 ? npreput : 1), sizeof(*pre));
    int rc = PMI_ERR_NOMEM, total = 0;

    if (sc == NULL || info == NULL || pre == NULL)
        goto out;
    for (int i = 0; i < npreput; i++)
        pre[i] = (pg_kv_t){ preput[i].key, preput[i].val };
    for (int i = 0; i < count; i++) {
        int ninfo = info_sizes != NULL && infos != NULL ? info_sizes[i] : 0;

        sc[i].command = cmds[i];
        sc[i].maxprocs = maxprocs[i];
        sc[i].argv = argvs != NULL ? argvs[i] : NULL;
        while (sc[i].argv != NULL && sc[i].argv[sc[i].argc] != NULL)
            sc[i].argc++;
        if (ninfo > 0 && (info[i] = calloc((size_t)ninfo, sizeof(pg_kv_t))) == NULL)
            goto out;
        for (int k = 0; k < ninfo; k++)
            info[i][k] = (pg_kv_t){ infos[i][k].key, infos[i][k].val };
        sc[i].ninfo = ninfo > 0 ? ninfo : 0;
        sc[i].info = info[i];
        total += maxprocs[i];
    }
    /* errors[] holds one code per spawned process, as MPICH's caller sizes it */
    rc = pg_pmi1_cl_spawn(pmi1.cl, count, sc, npreput, pre, errors, errors != NULL ? total : 0);
out:
    for (int i = 0; info != NULL && i < count; i++)
        free(info[i]);
    free(info);
    free(sc);
    free(pre);
    return rc;
}

int PMI_Spawn_multiple(int count, const char *cmds[], const char **argvs[], const int maxprocs[],
                       const int info_keyval_sizesp[], const PMI_keyval_t *info_keyval_vectors[],
                       int preput_keyval_size, const PMI_keyval_t preput_keyval_vector[],
                       int errors[])
{
    if (count <= 0 || cmds == NULL || maxprocs == NULL || preput_keyval_size < 0 ||
        (preput_keyval_size > 0 && preput_keyval_vector == NULL))
        return PMI_ERR_INVALID_ARG;
    PMI1_LOCKED(spawn_multiple(count, cmds, argvs, maxprocs, info_keyval_sizesp, info_keyval_vectors,
                               preput_keyval_size, preput_keyval_vector, errors));
}
