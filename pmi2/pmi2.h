/*
 * pmi2.h: the PMI-2 client API of pmigate's libpmi2.so.0.  Names and
 * signatures follow MPICH's pmi2.h; constants and struct layouts are those of
 * Slurm's <slurm/pmi2.h>, so a program linked with Slurm's libpmi2.so.0 runs
 * with this one through LD_LIBRARY_PATH for every call whose signature is the
 * same (all but PMI2_Job_Spawn and the Nameserv info argument, which take
 * MPICH's PMI2_keyval_t instead of Slurm's MPID_Info: a Slurm-built program
 * calling them needs Slurm's library, which pmigate leaves in place).  Thread-safe: many threads may call at once and share one socket.
 * See libpmi2(3).
 */
#ifndef PMI2_H_INCLUDED
#define PMI2_H_INCLUDED

#ifndef PMI_VERSION
#define PMI_VERSION    2
#define PMI_SUBVERSION 0
#endif

#define PMI2_MAX_KEYLEN 64
#define PMI2_MAX_VALLEN 1024
#define PMI2_MAX_ATTRVALUE 1024
#define PMI2_ID_NULL -1

/* Wire limits, kept for programs that used Slurm's header. */
#define PMII_COMMANDLEN_SIZE 6
#define PMII_MAX_COMMAND_LEN (64 * 1024)

/* Return codes. */
#define PMI2_SUCCESS                0
#define PMI2_FAIL                   -1
#define PMI2_ERR_INIT               1
#define PMI2_ERR_NOMEM              2
#define PMI2_ERR_INVALID_ARG        3
#define PMI2_ERR_INVALID_KEY        4
#define PMI2_ERR_INVALID_KEY_LENGTH 5
#define PMI2_ERR_INVALID_VAL        6
#define PMI2_ERR_INVALID_VAL_LENGTH 7
#define PMI2_ERR_INVALID_LENGTH     8
#define PMI2_ERR_INVALID_NUM_ARGS   9
#define PMI2_ERR_INVALID_ARGS       10
#define PMI2_ERR_INVALID_NUM_PARSED 11
#define PMI2_ERR_INVALID_KEYVALP    12
#define PMI2_ERR_INVALID_SIZE       13
#define PMI2_ERR_OTHER              14

#if defined(__cplusplus)
extern "C" {
#endif

/* A key and value for spawn infos, preputs and name-service infos. */
typedef struct PMI2_keyval_t {
    const char *key;
    const char *val;
} PMI2_keyval_t;

/* How two job leaders talk in PMI2_Job_Connect (same layout as Slurm's;
 * the last member is isMaster in older headers, isMain in newer ones). */
typedef struct PMI2_Connect_comm {
    int (*read)(void *buf, int maxlen, void *ctx);
    int (*write)(const void *buf, int len, void *ctx);
    void *ctx;
    union {
        int isMaster;
        int isMain;
    };
} PMI2_Connect_comm_t;

/* Start-up and shut-down. */
int PMI2_Init(int *spawned, int *size, int *rank, int *appnum);
int PMI2_Finalize(void);
int PMI2_Initialized(void);
int PMI2_Abort(int flag, const char msg[]);
/* Declares before PMI2_Init that several threads will call (sent as
 * threaded=TRUE); the library also notices on its own. */
int PMI2_Set_threaded(int is_threaded);

/* Jobs. */
int PMI2_Job_Spawn(int count, const char *cmds[], int argcs[], const char **argvs[],
                   const int maxprocs[], const int info_keyval_sizes[],
                   const PMI2_keyval_t *info_keyval_vectors[], int preput_keyval_size,
                   const PMI2_keyval_t preput_keyval_vector[], char jobId[], int jobIdSize,
                   int errors[]);
int PMI2_Job_GetId(char jobid[], int jobid_size);
int PMI2_Job_GetRank(int *rank);
int PMI2_Job_Connect(const char jobid[], PMI2_Connect_comm_t *conn);
int PMI2_Job_Disconnect(const char jobid[]);

/* The job's key-value space. */
int PMI2_KVS_Put(const char key[], const char value[]);
int PMI2_KVS_Fence(void);
int PMI2_KVS_Get(const char *jobid, int src_pmi_id, const char key[], char value[], int maxvalue,
                 int *vallen);

/* Node and job attributes. */
int PMI2_Info_GetSize(int *size);
int PMI2_Info_GetNodeAttr(const char name[], char value[], int valuelen, int *found, int waitfor);
int PMI2_Info_GetNodeAttrIntArray(const char name[], int array[], int arraylen, int *outlen,
                                  int *found);
int PMI2_Info_PutNodeAttr(const char name[], const char value[]);
int PMI2_Info_GetJobAttr(const char name[], char value[], int valuelen, int *found);
int PMI2_Info_GetJobAttrIntArray(const char name[], int array[], int arraylen, int *outlen,
                                 int *found);

/* Name service. */
int PMI2_Nameserv_publish(const char service_name[], const PMI2_keyval_t *info_ptr,
                          const char port[]);
int PMI2_Nameserv_lookup(const char service_name[], const PMI2_keyval_t *info_ptr, char port[],
                         int portLen);
int PMI2_Nameserv_unpublish(const char service_name[], const PMI2_keyval_t *info_ptr);

/* Slurm's ring exchange (a collective; only Slurm's server implements it). */
int PMIX_Ring(const char value[], int *rank, int *ranks, char left[], char right[], int maxvalue);

#if defined(__cplusplus)
}
#endif
#endif /* PMI2_H_INCLUDED */
