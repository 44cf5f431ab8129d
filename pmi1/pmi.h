/*
 * pmi.h: the PMI-1 client API of pmigate's libpmi.so.0, declared with the
 * same names, constants and signatures as MPICH's pmi.h, so a program
 * written for MPICH's PMI-1 interface builds and runs against it unchanged
 * (pkg-config pmi; -lpmi).  The library talks the PMI-1 wire protocol to any
 * PMI-1 server (pmigate, mpiexec.hydra, Slurm's pmi2 plugin) over PMI_FD or
 * PMI_PORT, and runs as a singleton (size 1, rank 0, a local store) when no
 * PMI environment is present.  See libpmi(3).
 */
#ifndef PMI_H_INCLUDED
#define PMI_H_INCLUDED

#define PMI_VERSION    1
#define PMI_SUBVERSION 1

#define PMI_MAX_PORT_NAME 1024

/* Return codes. */
#define PMI_SUCCESS                  0
#define PMI_FAIL                    -1
#define PMI_ERR_INIT                 1
#define PMI_ERR_NOMEM                2
#define PMI_ERR_INVALID_ARG          3
#define PMI_ERR_INVALID_KEY          4
#define PMI_ERR_INVALID_KEY_LENGTH   5
#define PMI_ERR_INVALID_VAL          6
#define PMI_ERR_INVALID_VAL_LENGTH   7
#define PMI_ERR_INVALID_LENGTH       8
#define PMI_ERR_INVALID_NUM_ARGS     9
#define PMI_ERR_INVALID_ARGS        10
#define PMI_ERR_INVALID_NUM_PARSED  11
#define PMI_ERR_INVALID_KEYVALP     12
#define PMI_ERR_INVALID_SIZE        13

typedef int PMI_BOOL;
#define PMI_TRUE  1
#define PMI_FALSE 0

#if defined(__cplusplus)
extern "C" {
#endif

/* Start-up and shut-down. */
int PMI_Init(int *spawned);
int PMI_Initialized(int *initialized);
int PMI_Finalize(void);
int PMI_Abort(int exit_code, const char error_msg[]);

/* Facts about this process and its job. */
int PMI_Get_size(int *size);
int PMI_Get_rank(int *rank);
int PMI_Get_universe_size(int *size);
int PMI_Get_appnum(int *appnum);
int PMI_Get_clique_size(int *size);
int PMI_Get_clique_ranks(int ranks[], int length);

/* Synchronisation: a barrier over the process group; commits every put. */
int PMI_Barrier(void);

/* The key-value space of the process group. */
int PMI_KVS_Get_my_name(char kvsname[], int length);
int PMI_KVS_Get_name_length_max(int *length);
int PMI_KVS_Get_key_length_max(int *length);
int PMI_KVS_Get_value_length_max(int *length);
/* MPICH's older names, exported as Slurm's, Flux's and OpenPMIx's libpmi
 * do: the process group's id and its key-value domain's id are both the
 * key-value space's name; the longest id is the longest name. */
int PMI_Get_id(char id_str[], int length);
int PMI_Get_kvs_domain_id(char id_str[], int length);
int PMI_Get_id_length_max(int *length);
int PMI_KVS_Put(const char kvsname[], const char key[], const char value[]);
int PMI_KVS_Commit(const char kvsname[]);
int PMI_KVS_Get(const char kvsname[], const char key[], char value[], int length);

/* Name service. */
int PMI_Publish_name(const char service_name[], const char port[]);
int PMI_Unpublish_name(const char service_name[]);
int PMI_Lookup_name(const char service_name[], char port[]);

/* Process creation. */
typedef struct PMI_keyval_t {
    const char *key;
    const char *val;
} PMI_keyval_t;

int PMI_Spawn_multiple(int count,
                       const char *cmds[],
                       const char **argvs[],
                       const int maxprocs[],
                       const int info_keyval_sizesp[],
                       const PMI_keyval_t *info_keyval_vectors[],
                       int preput_keyval_size,
                       const PMI_keyval_t preput_keyval_vector[],
                       int errors[]);

#if defined(__cplusplus)
}
#endif
#endif /* PMI_H_INCLUDED */
