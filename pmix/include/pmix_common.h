/*
 * pmix_common.h: the PMIx Standard's constants, types and structures, as
 * pmigate provides them.
 *
 * Why this file exists: programs written against OpenPMIx's <pmix.h> must
 * compile unchanged against pmigate's install, and a PMIx peer must agree
 * with us on every number that crosses a process boundary.  So every
 * constant here carries the value the Standard (and OpenPMIx 4.2, the
 * de-facto ABI) gives it, and every structure has the Standard's field
 * names, order and types.  The text and the helper macros are pmigate's own.
 *
 * Memory: every *_CREATE macro allocates with calloc/malloc and every
 * *_FREE / *_RELEASE frees with free(); strings inside PMIx structures are
 * owned by the structure and released by its DESTRUCT.
 */
#ifndef PMIx_COMMON_H
#define PMIx_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#include <pmix_version.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

#ifndef PMIX_EXPORT
#define PMIX_EXPORT __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------ */
/* Identifiers and limits                                              */
/* ------------------------------------------------------------------ */

#define PMIX_MAX_NSLEN  255
#define PMIX_MAX_KEYLEN 511

typedef char pmix_nspace_t[PMIX_MAX_NSLEN + 1];
typedef char pmix_key_t[PMIX_MAX_KEYLEN + 1];

typedef uint32_t pmix_rank_t;

/* Special ranks sit at the top of the uint32 range so that every real rank
 * stays below PMIX_RANK_VALID. */
#define PMIX_RANK_UNDEF       UINT32_MAX        /* poster unknown: key is unique in the nspace */
#define PMIX_RANK_WILDCARD    (UINT32_MAX - 1)  /* the job as a whole */
#define PMIX_RANK_LOCAL_NODE  (UINT32_MAX - 2)  /* every rank on this node */
#define PMIX_RANK_INVALID     (UINT32_MAX - 3)
#define PMIX_RANK_LOCAL_PEERS (UINT32_MAX - 4)  /* this nspace's ranks on this node */
#define PMIX_RANK_VALID       (UINT32_MAX - 50)
#define PMIX_RANK_IS_VALID(r) ((r) < PMIX_RANK_VALID)

#define PMIX_APP_WILDCARD UINT32_MAX

/* ------------------------------------------------------------------ */
/* Status codes (negative = error; values are ABI)                     */
/* ------------------------------------------------------------------ */

typedef int pmix_status_t;

#define PMIX_SUCCESS                              0
#define PMIX_ERROR                               -1
#define PMIX_ERR_SILENT                          -2
#define PMIX_ERR_DEBUGGER_RELEASE                -3
#define PMIX_ERR_PROC_RESTART                    -4
#define PMIX_ERR_PROC_CHECKPOINT                 -5
#define PMIX_ERR_PROC_MIGRATE                    -6
#define PMIX_ERR_PROC_ABORTED                    -7
#define PMIX_ERR_PROC_REQUESTED_ABORT            -8
#define PMIX_ERR_PROC_ABORTING                   -9
#define PMIX_ERR_SERVER_FAILED_REQUEST          -10
#define PMIX_ERR_EXISTS                         -11
#define PMIX_ERR_INVALID_CRED                   -12
#define PMIX_ERR_HANDSHAKE_FAILED               -13
#define PMIX_ERR_READY_FOR_HANDSHAKE            -14
#define PMIX_ERR_WOULD_BLOCK                    -15
#define PMIX_ERR_UNKNOWN_DATA_TYPE              -16
#define PMIX_ERR_PROC_ENTRY_NOT_FOUND           -17
#define PMIX_ERR_TYPE_MISMATCH                  -18
#define PMIX_ERR_UNPACK_INADEQUATE_SPACE        -19
#define PMIX_ERR_UNPACK_FAILURE                 -20
#define PMIX_ERR_PACK_FAILURE                   -21
#define PMIX_ERR_PACK_MISMATCH                  -22
#define PMIX_ERR_NO_PERMISSIONS                 -23
#define PMIX_ERR_TIMEOUT                        -24
#define PMIX_ERR_UNREACH                        -25
#define PMIX_ERR_IN_ERRNO                       -26
#define PMIX_ERR_BAD_PARAM                      -27
#define PMIX_ERR_RESOURCE_BUSY                  -28
#define PMIX_ERR_OUT_OF_RESOURCE                -29
#define PMIX_ERR_DATA_VALUE_NOT_FOUND           -30
#define PMIX_ERR_INIT                           -31
#define PMIX_ERR_NOMEM                          -32
#define PMIX_ERR_INVALID_ARG                    -33
#define PMIX_ERR_INVALID_KEY                    -34
#define PMIX_ERR_INVALID_KEY_LENGTH             -35
#define PMIX_ERR_INVALID_VAL                    -36
#define PMIX_ERR_INVALID_VAL_LENGTH             -37
#define PMIX_ERR_INVALID_LENGTH                 -38
#define PMIX_ERR_INVALID_NUM_ARGS               -39
#define PMIX_ERR_INVALID_ARGS                   -40
#define PMIX_ERR_INVALID_NUM_PARSED             -41
#define PMIX_ERR_INVALID_KEYVALP                -42
#define PMIX_ERR_INVALID_SIZE                   -43
#define PMIX_ERR_INVALID_NAMESPACE              -44
#define PMIX_ERR_SERVER_NOT_AVAIL               -45
#define PMIX_ERR_NOT_FOUND                      -46
#define PMIX_ERR_NOT_SUPPORTED                  -47
#define PMIX_ERR_NOT_IMPLEMENTED                -48
#define PMIX_ERR_COMM_FAILURE                   -49
#define PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER -50
#define PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES -51
#define PMIX_ERR_PARTIAL_SUCCESS                -52
#define PMIX_ERR_DUPLICATE_KEY                  -53
#define PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED      -59
#define PMIX_ERR_EMPTY                          -60
#define PMIX_ERR_LOST_CONNECTION                -61
#define PMIX_ERR_EXISTS_OUTSIDE_SCOPE           -62
#define PMIX_ERR_FATAL                          -63
#define PMIX_ERR_NOT_AVAILABLE                  -64
#define PMIX_ERR_VALUE_OUT_OF_BOUNDS            -65
#define PMIX_ERR_FILE_OPEN_FAILURE              -67
#define PMIX_ERR_FILE_READ_FAILURE              -68
#define PMIX_ERR_FILE_WRITE_FAILURE             -69
#define PMIX_ERR_LOST_CONNECTION_TO_SERVER     -101
#define PMIX_ERR_LOST_PEER_CONNECTION          -102
#define PMIX_ERR_LOST_CONNECTION_TO_CLIENT     -103
#define PMIX_PROC_TERMINATED                   -111
#define PMIX_ERR_INVALID_TERMINATION           -112
#define PMIX_ERR_EVENT_REGISTRATION            -144
#define PMIX_EVENT_JOB_END                     -145
#define PMIX_ERR_JOB_TERMINATED                PMIX_EVENT_JOB_END
#define PMIX_ERR_UPDATE_ENDPOINTS              -146
#define PMIX_MODEL_DECLARED                    -147
#define PMIX_MODEL_RESOURCES                   -151
#define PMIX_OPERATION_IN_PROGRESS             -156
#define PMIX_OPERATION_SUCCEEDED               -157
#define PMIX_ERR_INVALID_OPERATION             -158
#define PMIX_ERR_REPEAT_ATTR_REGISTRATION      -171
#define PMIX_ERR_IOF_FAILURE                   -172
#define PMIX_ERR_IOF_COMPLETE                  -173
#define PMIX_ERR_JOB_APP_NOT_EXECUTABLE        -177
#define PMIX_ERR_JOB_NO_EXE_SPECIFIED          -178
#define PMIX_ERR_JOB_FAILED_TO_MAP             -179
#define PMIX_ERR_JOB_CANCELED                  -180
#define PMIX_ERR_JOB_FAILED_TO_LAUNCH          -181
#define PMIX_ERR_JOB_ABORTED                   -182
#define PMIX_ERR_JOB_KILLED_BY_CMD             -183
#define PMIX_ERR_JOB_ABORTED_BY_SIG            -184
#define PMIX_ERR_JOB_TERM_WO_SYNC              -185
#define PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED     -186
#define PMIX_ERR_JOB_NON_ZERO_TERM             -187
#define PMIX_ERR_JOB_ALLOC_FAILED              -188
#define PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT      -189
#define PMIX_ERR_JOB_EXE_NOT_FOUND             -190
#define PMIX_EVENT_JOB_START                   -191
#define PMIX_EVENT_SESSION_START               -192
#define PMIX_EVENT_SESSION_END                 -193
#define PMIX_ERR_PROC_TERM_WO_SYNC             -200
#define PMIX_EVENT_PROC_TERMINATED             -201
#define PMIX_EVENT_SYS_BASE                    -230
#define PMIX_EVENT_NODE_DOWN                   -231
#define PMIX_EVENT_NODE_OFFLINE                -232
#define PMIX_ERR_NODE_DOWN                     PMIX_EVENT_NODE_DOWN
#define PMIX_ERR_NODE_OFFLINE                  PMIX_EVENT_NODE_OFFLINE
#define PMIX_ERR_JOB_WDIR_NOT_FOUND            -233
#define PMIX_ERR_JOB_INSUFFICIENT_RESOURCES    -234
#define PMIX_ERR_JOB_SYS_OP_FAILED             -235
#define PMIX_EVENT_SYS_OTHER                   -330
#define PMIX_EVENT_NO_ACTION_TAKEN             -331
#define PMIX_EVENT_PARTIAL_ACTION_TAKEN        -332
#define PMIX_EVENT_ACTION_DEFERRED             -333
#define PMIX_EVENT_ACTION_COMPLETE             -334
#define PMIX_ERR_PROC_KILLED_BY_CMD            -400
#define PMIX_ERR_PROC_FAILED_TO_START          -401
#define PMIX_ERR_PROC_ABORTED_BY_SIG           -402
#define PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED    -403
#define PMIX_ERR_EXIT_NONZERO_TERM             -404
/* Codes a host or library defines for itself start below this base. */
#define PMIX_EXTERNAL_ERR_BASE                -3000

/* ------------------------------------------------------------------ */
/* Data type codes (the tag written in front of every packed value)    */
/* ------------------------------------------------------------------ */

typedef uint16_t pmix_data_type_t;

#define PMIX_UNDEF                   0
#define PMIX_BOOL                    1
#define PMIX_BYTE                    2
#define PMIX_STRING                  3
#define PMIX_SIZE                    4
#define PMIX_PID                     5
#define PMIX_INT                     6
#define PMIX_INT8                    7
#define PMIX_INT16                   8
#define PMIX_INT32                   9
#define PMIX_INT64                  10
#define PMIX_UINT                   11
#define PMIX_UINT8                  12
#define PMIX_UINT16                 13
#define PMIX_UINT32                 14
#define PMIX_UINT64                 15
#define PMIX_FLOAT                  16
#define PMIX_DOUBLE                 17
#define PMIX_TIMEVAL                18
#define PMIX_TIME                   19
#define PMIX_STATUS                 20
#define PMIX_VALUE                  21
#define PMIX_PROC                   22
#define PMIX_APP                    23
#define PMIX_INFO                   24
#define PMIX_PDATA                  25
/* 26 was PMIX_BUFFER (removed) */
#define PMIX_BYTE_OBJECT            27
#define PMIX_KVAL                   28
/* 29 was PMIX_MODEX (removed) */
#define PMIX_PERSIST                30
#define PMIX_POINTER                31
#define PMIX_SCOPE                  32
#define PMIX_DATA_RANGE             33
#define PMIX_COMMAND                34
#define PMIX_INFO_DIRECTIVES        35
#define PMIX_DATA_TYPE              36
#define PMIX_PROC_STATE             37
#define PMIX_PROC_INFO              38
#define PMIX_DATA_ARRAY             39
#define PMIX_PROC_RANK              40
#define PMIX_QUERY                  41
#define PMIX_COMPRESSED_STRING      42
#define PMIX_ALLOC_DIRECTIVE        43
/* 44 was PMIX_INFO_ARRAY (removed) */
#define PMIX_IOF_CHANNEL            45
#define PMIX_ENVAR                  46
#define PMIX_COORD                  47
#define PMIX_REGATTR                48
#define PMIX_REGEX                  49
#define PMIX_JOB_STATE              50
#define PMIX_LINK_STATE             51
#define PMIX_PROC_CPUSET            52
#define PMIX_GEOMETRY               53
#define PMIX_DEVICE_DIST            54
#define PMIX_ENDPOINT               55
#define PMIX_TOPO                   56
#define PMIX_DEVTYPE                57
#define PMIX_LOCTYPE                58
#define PMIX_COMPRESSED_BYTE_OBJECT 59
#define PMIX_PROC_NSPACE            60
#define PMIX_PROC_STATS             61
#define PMIX_DISK_STATS             62
#define PMIX_NET_STATS              63
#define PMIX_NODE_STATS             64
#define PMIX_DATA_BUFFER            65
#define PMIX_STOR_MEDIUM            66
#define PMIX_STOR_ACCESS            67
#define PMIX_STOR_PERSIST           68
#define PMIX_STOR_ACCESS_TYPE       69
/* Codes at or above this boundary are free for implementations. */
#define PMIX_DATA_TYPE_MAX         500

/* ------------------------------------------------------------------ */
/* Small enumerations                                                  */
/* ------------------------------------------------------------------ */

/* Who may see a value posted with PMIx_Put. */
typedef uint8_t pmix_scope_t;
#define PMIX_SCOPE_UNDEF 0
#define PMIX_LOCAL       1 /* processes on the poster's node only */
#define PMIX_REMOTE      2 /* processes on other nodes only */
#define PMIX_GLOBAL      3 /* everyone */
#define PMIX_INTERNAL    4 /* the poster only */

/* Who may look up a published value. */
typedef uint8_t pmix_data_range_t;
#define PMIX_RANGE_UNDEF      0
#define PMIX_RANGE_RM         1
#define PMIX_RANGE_LOCAL      2
#define PMIX_RANGE_NAMESPACE  3
#define PMIX_RANGE_SESSION    4
#define PMIX_RANGE_GLOBAL     5
#define PMIX_RANGE_CUSTOM     6
#define PMIX_RANGE_PROC_LOCAL 7
#define PMIX_RANGE_INVALID    UINT8_MAX

/* How long a published value lives. */
typedef uint8_t pmix_persistence_t;
#define PMIX_PERSIST_INDEF      0
#define PMIX_PERSIST_FIRST_READ 1
#define PMIX_PERSIST_PROC       2
#define PMIX_PERSIST_APP        3
#define PMIX_PERSIST_SESSION    4
#define PMIX_PERSIST_INVALID    UINT8_MAX

/* Flag bits of pmix_info_t.flags. */
typedef uint32_t pmix_info_directives_t;
#define PMIX_INFO_REQD           0x00000001U
#define PMIX_INFO_ARRAY_END      0x00000002U
#define PMIX_INFO_REQD_PROCESSED 0x00000004U
#define PMIX_INFO_QUALIFIER      0x00000008U
#define PMIX_INFO_PERSISTENT     0x00000010U
#define PMIX_INFO_DIR_RESERVED   0xffff0000U

typedef uint8_t pmix_alloc_directive_t;
#define PMIX_ALLOC_NEW      1
#define PMIX_ALLOC_EXTEND   2
#define PMIX_ALLOC_RELEASE  3
#define PMIX_ALLOC_REAQUIRE 4
#define PMIX_ALLOC_EXTERNAL 128

typedef uint16_t pmix_iof_channel_t;
#define PMIX_FWD_NO_CHANNELS     0x0000
#define PMIX_FWD_STDIN_CHANNEL   0x0001
#define PMIX_FWD_STDOUT_CHANNEL  0x0002
#define PMIX_FWD_STDERR_CHANNEL  0x0004
#define PMIX_FWD_STDDIAG_CHANNEL 0x0008
#define PMIX_FWD_ALL_CHANNELS    0x00ff

typedef uint8_t pmix_proc_state_t;
#define PMIX_PROC_STATE_UNDEF                 0
#define PMIX_PROC_STATE_PREPPED               1
#define PMIX_PROC_STATE_LAUNCH_UNDERWAY       2
#define PMIX_PROC_STATE_RESTART               3
#define PMIX_PROC_STATE_TERMINATE             4
#define PMIX_PROC_STATE_RUNNING               5
#define PMIX_PROC_STATE_CONNECTED             6
#define PMIX_PROC_STATE_UNTERMINATED         15
#define PMIX_PROC_STATE_TERMINATED           20
#define PMIX_PROC_STATE_ERROR                50
#define PMIX_PROC_STATE_KILLED_BY_CMD        51
#define PMIX_PROC_STATE_ABORTED              52
#define PMIX_PROC_STATE_FAILED_TO_START      53
#define PMIX_PROC_STATE_ABORTED_BY_SIG       54
#define PMIX_PROC_STATE_TERM_WO_SYNC         55
#define PMIX_PROC_STATE_COMM_FAILED          56
#define PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED 57
#define PMIX_PROC_STATE_CALLED_ABORT         58
#define PMIX_PROC_STATE_HEARTBEAT_FAILED     59
#define PMIX_PROC_STATE_MIGRATING            60
#define PMIX_PROC_STATE_CANNOT_RESTART       61
#define PMIX_PROC_STATE_TERM_NON_ZERO        62
#define PMIX_PROC_STATE_FAILED_TO_LAUNCH     63

typedef uint8_t pmix_job_state_t;
#define PMIX_JOB_STATE_UNDEF                  0
#define PMIX_JOB_STATE_AWAITING_ALLOC         1
#define PMIX_JOB_STATE_LAUNCH_UNDERWAY        2
#define PMIX_JOB_STATE_RUNNING                3
#define PMIX_JOB_STATE_SUSPENDED              4
#define PMIX_JOB_STATE_CONNECTED              5
#define PMIX_JOB_STATE_UNTERMINATED          15
#define PMIX_JOB_STATE_TERMINATED            20
#define PMIX_JOB_STATE_TERMINATED_WITH_ERROR 50

typedef uint8_t pmix_link_state_t;
#define PMIX_LINK_STATE_UNKNOWN 0
#define PMIX_LINK_DOWN          1
#define PMIX_LINK_UP            2

typedef uint64_t pmix_device_type_t;
#define PMIX_DEVTYPE_UNKNOWN     0x00
#define PMIX_DEVTYPE_BLOCK       0x01
#define PMIX_DEVTYPE_GPU         0x02
#define PMIX_DEVTYPE_NETWORK     0x04
#define PMIX_DEVTYPE_OPENFABRICS 0x08
#define PMIX_DEVTYPE_DMA         0x10
#define PMIX_DEVTYPE_COPROC      0x20

typedef uint16_t pmix_locality_t;
#define PMIX_LOCALITY_UNKNOWN        0x0000
#define PMIX_LOCALITY_SHARE_HWTHREAD 0x0001
#define PMIX_LOCALITY_SHARE_CORE     0x0002
#define PMIX_LOCALITY_SHARE_L1CACHE  0x0004
#define PMIX_LOCALITY_SHARE_L2CACHE  0x0008
#define PMIX_LOCALITY_SHARE_L3CACHE  0x0010
#define PMIX_LOCALITY_SHARE_PACKAGE  0x0020
#define PMIX_LOCALITY_SHARE_NUMA     0x0040
#define PMIX_LOCALITY_SHARE_NODE     0x4000
#define PMIX_LOCALITY_NONLOCAL       0x8000

typedef uint8_t pmix_coord_view_t;
#define PMIX_COORD_VIEW_UNDEF    0x00
#define PMIX_COORD_LOGICAL_VIEW  0x01
#define PMIX_COORD_PHYSICAL_VIEW 0x02

/* The wire command byte of a client/server request (opaque to users). */
typedef uint8_t pmix_cmd_t;

typedef enum {
    PMIX_EQUAL,
    PMIX_VALUE1_GREATER,
    PMIX_VALUE2_GREATER,
    PMIX_VALUE_TYPE_DIFFERENT,
    PMIX_VALUE_INCOMPATIBLE_OBJECTS,
    PMIX_VALUE_COMPARISON_NOT_AVAIL
} pmix_value_cmp_t;

typedef enum {
    PMIX_BOOL_TRUE,
    PMIX_BOOL_FALSE,
    PMIX_NON_BOOL
} pmix_boolean_t;

typedef enum {
    PMIX_GROUP_DECLINE,
    PMIX_GROUP_ACCEPT
} pmix_group_opt_t;

typedef enum {
    PMIX_GROUP_CONSTRUCT,
    PMIX_GROUP_DESTRUCT
} pmix_group_operation_t;

/* ------------------------------------------------------------------ */
/* Reserved attribute keys (everything starting with "pmix")           */
/* The comment gives the value type a host stores under the key.       */
/* ------------------------------------------------------------------ */

/* realm selectors and registration arrays */
#define PMIX_SESSION_INFO        "pmix.ssn.info"   /* bool */
#define PMIX_JOB_INFO            "pmix.job.info"   /* bool */
#define PMIX_APP_INFO            "pmix.app.info"   /* bool */
#define PMIX_NODE_INFO           "pmix.node.info"  /* bool */
#define PMIX_JOB_INFO_ARRAY      "pmix.job.arr"    /* data array of info */
#define PMIX_APP_INFO_ARRAY      "pmix.app.arr"    /* data array of info */
#define PMIX_NODE_INFO_ARRAY     "pmix.node.arr"   /* data array of info */
#define PMIX_PROC_INFO_ARRAY     "pmix.pdata"      /* data array of info, rank first */
#define PMIX_PROC_DATA           "pmix.pdata"      /* older name of the same key */
#define PMIX_SESSION_INFO_ARRAY  "pmix.ssn.arr"

/* session realm */
#define PMIX_SESSION_ID          "pmix.session.id" /* uint32 */
#define PMIX_CLUSTER_ID          "pmix.clid"       /* string */
#define PMIX_UNIV_SIZE           "pmix.univ.size"  /* uint32 */
#define PMIX_TMPDIR              "pmix.tmpdir"     /* string */
#define PMIX_TDIR_RMCLEAN        "pmix.tdir.rmclean" /* bool */
#define PMIX_HOSTNAME_KEEP_FQDN  "pmix.fqdn"       /* bool */
#define PMIX_RM_NAME             "pmix.rm.name"    /* string */
#define PMIX_RM_VERSION          "pmix.rm.version" /* string */

/* job realm */
#define PMIX_NSPACE              "pmix.nspace"     /* string */
#define PMIX_JOBID               "pmix.jobid"      /* string */
#define PMIX_JOB_SIZE            "pmix.job.size"   /* uint32 */
#define PMIX_MAX_PROCS           "pmix.max.size"   /* uint32 */
#define PMIX_JOB_NUM_APPS        "pmix.job.napps"  /* uint32 */
#define PMIX_NPROC_OFFSET        "pmix.offset"     /* pmix_rank_t */
#define PMIX_NUM_NODES           "pmix.num.nodes"  /* uint32 */
#define PMIX_NODE_LIST           "pmix.nlist"      /* string, comma list */
#define PMIX_NODE_MAP            "pmix.nmap"       /* string */
#define PMIX_NODE_MAP_RAW        "pmix.nmap.raw"   /* string */
#define PMIX_PROC_MAP            "pmix.pmap"       /* string */
#define PMIX_PROC_MAP_RAW        "pmix.pmap.raw"   /* string */
#define PMIX_ANL_MAP             "pmix.anlmap"     /* string, PMI_process_mapping */
#define PMIX_MAPBY               "pmix.mapby"      /* string */
#define PMIX_RANKBY              "pmix.rankby"     /* string */
#define PMIX_BINDTO              "pmix.bindto"     /* string */
#define PMIX_NSDIR               "pmix.nsdir"      /* string */
#define PMIX_JOB_TERM_STATUS     "pmix.job.term.status" /* pmix_status_t */

/* application realm */
#define PMIX_APPNUM              "pmix.appnum"     /* uint32 */
#define PMIX_APP_SIZE            "pmix.app.size"   /* uint32 */
#define PMIX_APPLDR              "pmix.aldr"       /* pmix_rank_t */
#define PMIX_APP_ARGV            "pmix.app.argv"   /* string */
#define PMIX_WDIR                "pmix.wdir"       /* string */
#define PMIX_PSET_NAME           "pmix.pset.nm"    /* string */
#define PMIX_PSET_MEMBERS        "pmix.pset.mems"  /* data array of proc */
#define PMIX_APP_MAP_TYPE        "pmix.apmap.type" /* string */
#define PMIX_APP_MAP_REGEX       "pmix.apmap.regex" /* string */

/* node realm */
#define PMIX_HOSTNAME            "pmix.hname"      /* string */
#define PMIX_HOSTNAME_ALIASES    "pmix.alias"      /* string */
#define PMIX_NODEID              "pmix.nodeid"     /* uint32 */
#define PMIX_NODE_SIZE           "pmix.node.size"  /* uint32 */
#define PMIX_LOCAL_SIZE          "pmix.local.size" /* uint32 */
#define PMIX_LOCAL_PEERS         "pmix.lpeers"     /* string, comma list of ranks */
#define PMIX_LOCAL_PROCS         "pmix.lprocs"     /* data array of proc */
#define PMIX_LOCAL_CPUSETS       "pmix.lcpus"      /* string */
#define PMIX_LOCALLDR            "pmix.lldr"       /* pmix_rank_t */
#define PMIX_AVAIL_PHYS_MEMORY   "pmix.pmem"       /* uint64 */
#define PMIX_NODE_OVERSUBSCRIBED "pmix.ndosub"     /* bool */
#define PMIX_FABRIC_COORDINATES  "pmix.fab.coord"  /* data array */

/* process realm */
#define PMIX_RANK                "pmix.rank"       /* pmix_rank_t */
#define PMIX_GLOBAL_RANK         "pmix.grank"      /* pmix_rank_t */
#define PMIX_APP_RANK            "pmix.apprank"    /* pmix_rank_t */
#define PMIX_LOCAL_RANK          "pmix.lrank"      /* uint16 */
#define PMIX_NODE_RANK           "pmix.nrank"      /* uint16 */
#define PMIX_PROCID              "pmix.procid"     /* pmix_proc_t */
#define PMIX_PARENT_ID           "pmix.parent"     /* pmix_proc_t */
#define PMIX_SPAWNED             "pmix.spawned"    /* bool */
#define PMIX_CPUSET              "pmix.cpuset"     /* string */
#define PMIX_LOCALITY_STRING     "pmix.locstr"     /* string */
#define PMIX_LOCALITY            "pmix.loc"        /* uint16 (deprecated) */
#define PMIX_PROCDIR             "pmix.pdir"       /* string */
#define PMIX_PROC_PID            "pmix.ppid"       /* pid */
#define PMIX_EXIT_CODE           "pmix.exit.code"  /* int */
#define PMIX_REINCARNATION       "pmix.reinc"      /* uint32 */
#define PMIX_USERID              "pmix.euid"       /* uint32 */
#define PMIX_GRPID               "pmix.egid"       /* uint32 */

/* operation directives */
#define PMIX_COLLECT_DATA        "pmix.collect"    /* bool */
#define PMIX_COLLECT_GENERATED_JOB_INFO "pmix.collect.gen" /* bool */
#define PMIX_TIMEOUT             "pmix.timeout"    /* int, seconds, 0 = forever */
#define PMIX_IMMEDIATE           "pmix.immediate"  /* bool */
#define PMIX_OPTIONAL            "pmix.optional"   /* bool */
#define PMIX_GET_REFRESH_CACHE   "pmix.get.refresh" /* bool */
#define PMIX_DATA_SCOPE          "pmix.scope"      /* pmix_scope_t */
#define PMIX_REQUIRED_KEY        "pmix.req.key"    /* string */
#define PMIX_EMBED_BARRIER       "pmix.embed.barrier" /* bool */
#define PMIX_WAIT                "pmix.wait"       /* int */
#define PMIX_RANGE               "pmix.range"      /* pmix_data_range_t */
#define PMIX_PERSISTENCE         "pmix.persist"    /* pmix_persistence_t */

/* initialisation / identification */
#define PMIX_PROGRAMMING_MODEL      "pmix.pgm.model" /* string */
#define PMIX_MODEL_LIBRARY_NAME     "pmix.mdl.name"  /* string */
#define PMIX_MODEL_LIBRARY_VERSION  "pmix.mld.vrs"   /* string */
#define PMIX_THREADING_MODEL        "pmix.threads"   /* string */
#define PMIX_SERVER_URI             "pmix.srvr.uri"  /* string */
#define PMIX_SERVER_NSPACE          "pmix.srv.nspace" /* string */
#define PMIX_SERVER_RANK            "pmix.srv.rank"  /* pmix_rank_t */
#define PMIX_SINGLETON              "pmix.singleton" /* string */
#define PMIX_EXTERNAL_PROGRESS      "pmix.evext"     /* bool */
#define PMIX_EVENT_HDLR_NAME        "pmix.evname"    /* string */
#define PMIX_REQUESTOR_IS_CLIENT    "pmix.req.client" /* bool */
#define PMIX_QUERY_NAMESPACES       "pmix.qry.ns"    /* string */
#define PMIX_DEBUG_STOP_IN_INIT     "pmix.dbg.init"
#define PMIX_NOTIFY_COMPLETION      "pmix.notecomp"  /* bool */
#define PMIX_GDS_MODULE             "pmix.gds.mod"   /* string */
#define PMIX_BFROPS_MODULE          "pmix.bfrops.mod" /* string */

/* The Standard's reserved-key test: a 4-character "pmix" prefix. */
#define PMIX_CHECK_RESERVED_KEY(a) (0 == strncmp((a), "pmix", 4))

/* ------------------------------------------------------------------ */
/* Structures (field order and types are the Standard's)               */
/* ------------------------------------------------------------------ */

typedef struct pmix_proc {
    pmix_nspace_t nspace;
    pmix_rank_t rank;
} pmix_proc_t;

typedef struct pmix_byte_object {
    char *bytes;
    size_t size;
} pmix_byte_object_t;

typedef struct pmix_data_array {
    pmix_data_type_t type;
    size_t size;
    void *array;
} pmix_data_array_t;

/* A growable byte buffer with separate pack and unpack cursors; both
 * cursors point into [base_ptr, base_ptr + bytes_used]. */
typedef struct pmix_data_buffer {
    char *base_ptr;
    char *pack_ptr;
    char *unpack_ptr;
    size_t bytes_allocated;
    size_t bytes_used;
} pmix_data_buffer_t;

typedef struct pmix_proc_info {
    pmix_proc_t proc;
    char *hostname;
    char *executable_name;
    pid_t pid;
    int exit_code;
    pmix_proc_state_t state;
} pmix_proc_info_t;

typedef struct {
    char *envar;
    char *value;
    char separator;
} pmix_envar_t;

typedef struct pmix_coord {
    pmix_coord_view_t view;
    uint32_t *coord;
    size_t dims;
} pmix_coord_t;

typedef struct {
    char *source;
    void *bitmap;
} pmix_cpuset_t;

typedef struct {
    char *source;
    void *topology;
} pmix_topology_t;

typedef struct pmix_geometry {
    size_t fabric;
    char *uuid;
    char *osname;
    pmix_coord_t *coordinates;
    size_t ncoords;
} pmix_geometry_t;

typedef struct pmix_device_distance {
    char *uuid;
    char *osname;
    pmix_device_type_t type;
    uint16_t mindist;
    uint16_t maxdist;
} pmix_device_distance_t;

typedef struct pmix_endpoint {
    char *uuid;
    char *osname;
    pmix_byte_object_t endpt;
} pmix_endpoint_t;

/* Statistics records: pmigate never fills them; only pointers travel. */
typedef struct pmix_proc_stats pmix_proc_stats_t;
typedef struct pmix_disk_stats pmix_disk_stats_t;
typedef struct pmix_net_stats pmix_net_stats_t;
typedef struct pmix_node_stats pmix_node_stats_t;

/* A typed value.  Which union member is live is given by `type`; pointer
 * members are owned by the value and released by PMIX_VALUE_DESTRUCT. */
typedef struct pmix_value {
    pmix_data_type_t type;
    union {
        bool flag;
        uint8_t byte;
        char *string;
        size_t size;
        pid_t pid;
        int integer;
        int8_t int8;
        int16_t int16;
        int32_t int32;
        int64_t int64;
        unsigned int uint;
        uint8_t uint8;
        uint16_t uint16;
        uint32_t uint32;
        uint64_t uint64;
        float fval;
        double dval;
        struct timeval tv;
        time_t time;
        pmix_status_t status;
        pmix_rank_t rank;
        pmix_nspace_t *nspace;
        pmix_proc_t *proc;
        pmix_byte_object_t bo;
        pmix_persistence_t persist;
        pmix_scope_t scope;
        pmix_data_range_t range;
        pmix_proc_state_t state;
        pmix_proc_info_t *pinfo;
        pmix_data_array_t *darray;
        void *ptr;
        pmix_alloc_directive_t adir;
        pmix_envar_t envar;
        pmix_coord_t *coord;
        pmix_link_state_t linkstate;
        pmix_job_state_t jstate;
        pmix_topology_t *topo;
        pmix_cpuset_t *cpuset;
        pmix_locality_t locality;
        pmix_geometry_t *geometry;
        pmix_device_type_t devtype;
        pmix_device_distance_t *devdist;
        pmix_endpoint_t *endpoint;
        pmix_data_buffer_t *dbuf;
        pmix_proc_stats_t *pstats;
        pmix_disk_stats_t *dkstats;
        pmix_net_stats_t *netstats;
        pmix_node_stats_t *ndstats;
    } data;
} pmix_value_t;

typedef struct pmix_info {
    pmix_key_t key;
    pmix_info_directives_t flags;
    pmix_value_t value;
} pmix_info_t;

/* One result of a lookup: who published it, under which key, what. */
typedef struct pmix_pdata {
    pmix_proc_t proc;
    pmix_key_t key;
    pmix_value_t value;
} pmix_pdata_t;

typedef struct pmix_app {
    char *cmd;
    char **argv;
    char **env;
    char *cwd;
    int maxprocs;
    pmix_info_t *info;
    size_t ninfo;
} pmix_app_t;

typedef struct pmix_query {
    char **keys;
    pmix_info_t *qualifiers;
    size_t nqual;
} pmix_query_t;

typedef struct pmix_regattr_t {
    char *name;
    pmix_key_t string;
    pmix_data_type_t type;
    char **description;
} pmix_regattr_t;

/* ------------------------------------------------------------------ */
/* Callback types                                                      */
/* ------------------------------------------------------------------ */

typedef void (*pmix_release_cbfunc_t)(void *cbdata);
typedef void (*pmix_op_cbfunc_t)(pmix_status_t status, void *cbdata);
typedef void (*pmix_value_cbfunc_t)(pmix_status_t status, pmix_value_t *kv, void *cbdata);
typedef void (*pmix_lookup_cbfunc_t)(pmix_status_t status, pmix_pdata_t data[], size_t ndata,
                                     void *cbdata);
typedef void (*pmix_info_cbfunc_t)(pmix_status_t status, pmix_info_t *info, size_t ninfo,
                                   void *cbdata, pmix_release_cbfunc_t release_fn,
                                   void *release_cbdata);
typedef void (*pmix_modex_cbfunc_t)(pmix_status_t status, const char *data, size_t ndata,
                                    void *cbdata, pmix_release_cbfunc_t release_fn,
                                    void *release_cbdata);
typedef void (*pmix_spawn_cbfunc_t)(pmix_status_t status, pmix_nspace_t nspace, void *cbdata);
typedef void (*pmix_event_notification_cbfunc_fn_t)(pmix_status_t status, pmix_info_t *results,
                                                    size_t nresults, pmix_op_cbfunc_t cbfunc,
                                                    void *thiscbdata, void *notification_cbdata);
typedef void (*pmix_notification_fn_t)(size_t evhdlr_registration_id, pmix_status_t status,
                                       const pmix_proc_t *source, pmix_info_t info[],
                                       size_t ninfo, pmix_info_t *results, size_t nresults,
                                       pmix_event_notification_cbfunc_fn_t cbfunc,
                                       void *cbdata);
typedef void (*pmix_hdlr_reg_cbfunc_t)(pmix_status_t status, size_t refid, void *cbdata);
typedef void (*pmix_evhdlr_reg_cbfunc_t)(pmix_status_t status, size_t refid, void *cbdata);

/* ------------------------------------------------------------------ */
/* Helper functions behind the macros below (implemented in libpmix,   */
/* also usable directly; these are the Standard's function forms).     */
/* ------------------------------------------------------------------ */

/* Values.  _load deep-copies `data` (for PMIX_STRING pass the char*, for
 * other types a pointer to the value); _unload returns a malloc'd copy of
 * the payload the caller frees; _destruct frees what the value owns and
 * leaves it PMIX_UNDEF; _xfer deep-copies src into dest. */
PMIX_EXPORT pmix_status_t PMIx_Value_load(pmix_value_t *val, const void *data,
                                          pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Value_unload(pmix_value_t *val, void **data, size_t *sz);
PMIX_EXPORT void PMIx_Value_destruct(pmix_value_t *val);
PMIX_EXPORT pmix_status_t PMIx_Value_xfer(pmix_value_t *dest, const pmix_value_t *src);
PMIX_EXPORT pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1, pmix_value_t *v2);
/* Truth of a boolean-ish value: BOOL by flag, UNDEF (presence) is true,
 * strings "true/yes/t/y/1.." and "false/no/f/n/0"; anything else NON_BOOL. */
PMIX_EXPORT pmix_boolean_t PMIx_Value_true(const pmix_value_t *value);
PMIX_EXPORT pmix_value_t *PMIx_Value_create(size_t n);
PMIX_EXPORT void PMIx_Value_free(pmix_value_t *v, size_t n);

PMIX_EXPORT pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key, const void *data,
                                         pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Info_xfer(pmix_info_t *dest, const pmix_info_t *src);
PMIX_EXPORT void PMIx_Info_destruct(pmix_info_t *info);
/* calloc's n infos and marks the last with PMIX_INFO_ARRAY_END; NULL for 0 */
PMIX_EXPORT pmix_info_t *PMIx_Info_create(size_t n);
PMIX_EXPORT void PMIx_Info_free(pmix_info_t *info, size_t n);
PMIX_EXPORT bool PMIx_Info_true(const pmix_info_t *info);

PMIX_EXPORT pmix_pdata_t *PMIx_Pdata_create(size_t n);
PMIX_EXPORT void PMIx_Pdata_free(pmix_pdata_t *pd, size_t n);
PMIX_EXPORT void PMIx_App_destruct(pmix_app_t *app);
PMIX_EXPORT pmix_app_t *PMIx_App_create(size_t n);
PMIX_EXPORT void PMIx_App_free(pmix_app_t *app, size_t n);
PMIX_EXPORT void PMIx_Proc_info_destruct(pmix_proc_info_t *p);
PMIX_EXPORT void PMIx_Proc_info_free(pmix_proc_info_t *p, size_t n);

/* Data arrays: _construct allocates `num` zeroed elements of `type`. */
PMIX_EXPORT void PMIx_Data_array_init(pmix_data_array_t *p, pmix_data_type_t type);
PMIX_EXPORT void PMIx_Data_array_construct(pmix_data_array_t *p, size_t num,
                                           pmix_data_type_t type);
PMIX_EXPORT void PMIx_Data_array_destruct(pmix_data_array_t *d);
PMIX_EXPORT pmix_data_array_t *PMIx_Data_array_create(size_t n, pmix_data_type_t type);
PMIX_EXPORT void PMIx_Data_array_free(pmix_data_array_t *p);

/* Buffers.  _load takes ownership of bo->bytes (bo is emptied); _unload
 * hands the unread payload to bo (the caller frees bo->bytes) and empties
 * the buffer. */
PMIX_EXPORT pmix_data_buffer_t *PMIx_Data_buffer_create(void);
PMIX_EXPORT void PMIx_Data_buffer_release(pmix_data_buffer_t *b);
PMIX_EXPORT void PMIx_Data_buffer_construct(pmix_data_buffer_t *b);
PMIX_EXPORT void PMIx_Data_buffer_destruct(pmix_data_buffer_t *b);
PMIX_EXPORT pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload);
PMIX_EXPORT pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer,
                                           pmix_byte_object_t *payload);
/* argv helpers (NULL-terminated string arrays, malloc'd) */
PMIX_EXPORT pmix_status_t PMIx_Argv_append_nosize(char ***argv, const char *arg);
PMIX_EXPORT int PMIx_Argv_count(char **argv);
PMIX_EXPORT void PMIx_Argv_free(char **argv);
PMIX_EXPORT char **PMIx_Argv_split(const char *src, int delimiter);
PMIX_EXPORT char *PMIx_Argv_join(char **argv, int delimiter);
PMIX_EXPORT char **PMIx_Argv_copy(char **argv);

/* ------------------------------------------------------------------ */
/* Macros                                                              */
/* ------------------------------------------------------------------ */

/* keys and namespaces: bounded copies that always NUL-terminate */
#define PMIX_LOAD_KEY(a, b)                                                        \
    do {                                                                           \
        const char *_lk_src = (const char *)(b);                                   \
        memset((a), 0, PMIX_MAX_KEYLEN + 1);                                       \
        for (size_t _lk_i = 0; NULL != _lk_src && _lk_i < PMIX_MAX_KEYLEN &&     \
                               '\0' != _lk_src[_lk_i]; _lk_i++) {                 \
            ((char *)(a))[_lk_i] = _lk_src[_lk_i];                                 \
        }                                                                          \
    } while (0)
#define PMIX_CHECK_KEY(a, b) \
    (0 == strncmp((const char *)(a)->key, (const char *)(b), PMIX_MAX_KEYLEN))
#define PMIX_LOAD_NSPACE(a, b)                                                     \
    do {                                                                           \
        const char *_ln_src = (const char *)(b);                                   \
        memset((a), 0, PMIX_MAX_NSLEN + 1);                                        \
        for (size_t _ln_i = 0; NULL != _ln_src && _ln_i < PMIX_MAX_NSLEN &&      \
                               '\0' != _ln_src[_ln_i]; _ln_i++) {                 \
            ((char *)(a))[_ln_i] = _ln_src[_ln_i];                                 \
        }                                                                          \
    } while (0)
/* an empty namespace matches any namespace, as in the Standard */
#define PMIX_CHECK_NSPACE(a, b)                                                    \
    (PMIX_NSPACE_INVALID((a)) || PMIX_NSPACE_INVALID((b)) ||                       \
     0 == strncmp((const char *)(a), (const char *)(b), PMIX_MAX_NSLEN))
#define PMIX_NSPACE_INVALID(a) (NULL == (a) || 0 == ((const char *)(a))[0])

/* processes */
#define PMIX_LOAD_PROCID(a, b, c)                    \
    do {                                             \
        PMIX_LOAD_NSPACE((a)->nspace, (b));          \
        (a)->rank = (c);                             \
    } while (0)
#define PMIX_XFER_PROCID(a, b) memcpy((a), (b), sizeof(pmix_proc_t))
#define PMIX_PROCID_XFER(a, b) PMIX_XFER_PROCID((a), (b))
#define PMIX_CHECK_RANK(a, b) \
    ((a) == (b) || PMIX_RANK_WILDCARD == (a) || PMIX_RANK_WILDCARD == (b))
#define PMIX_CHECK_PROCID(a, b) \
    (PMIX_CHECK_NSPACE((a)->nspace, (b)->nspace) && PMIX_CHECK_RANK((a)->rank, (b)->rank))
#define PMIX_PROCID_INVALID(a) (PMIX_NSPACE_INVALID((a)->nspace) || PMIX_RANK_INVALID == (a)->rank)
#define PMIX_PROC_CONSTRUCT(m) memset((m), 0, sizeof(pmix_proc_t))
#define PMIX_PROC_DESTRUCT(m)  ((void)(m))
#define PMIX_PROC_LOAD(m, n, r)              \
    do {                                     \
        PMIX_PROC_CONSTRUCT((m));            \
        PMIX_LOAD_NSPACE((m)->nspace, (n));  \
        (m)->rank = (r);                     \
    } while (0)
#define PMIX_PROC_CREATE(m, n) \
    ((m) = (0 == (n)) ? NULL : (pmix_proc_t *)calloc((n), sizeof(pmix_proc_t)))
#define PMIX_PROC_FREE(m, n) \
    do {                     \
        (void)(n);           \
        free((m));           \
        (m) = NULL;          \
    } while (0)
#define PMIX_PROC_RELEASE(m) PMIX_PROC_FREE((m), 1)

#define PMIX_PROC_INFO_CONSTRUCT(m) memset((m), 0, sizeof(pmix_proc_info_t))
#define PMIX_PROC_INFO_DESTRUCT(m)  PMIx_Proc_info_destruct((m))
#define PMIX_PROC_INFO_CREATE(m, n) \
    ((m) = (0 == (n)) ? NULL : (pmix_proc_info_t *)calloc((n), sizeof(pmix_proc_info_t)))
#define PMIX_PROC_INFO_FREE(m, n) \
    do {                          \
        PMIx_Proc_info_free((m), (n)); \
        (m) = NULL;               \
    } while (0)
#define PMIX_PROC_INFO_RELEASE(m) PMIX_PROC_INFO_FREE((m), 1)

/* byte objects */
#define PMIX_BYTE_OBJECT_CONSTRUCT(m) \
    do {                              \
        (m)->bytes = NULL;            \
        (m)->size = 0;                \
    } while (0)
#define PMIX_BYTE_OBJECT_DESTRUCT(m) \
    do {                             \
        free((m)->bytes);            \
        (m)->bytes = NULL;           \
        (m)->size = 0;               \
    } while (0)
#define PMIX_BYTE_OBJECT_CREATE(m, n) \
    ((m) = (0 == (n)) ? NULL : (pmix_byte_object_t *)calloc((n), sizeof(pmix_byte_object_t)))
#define PMIX_BYTE_OBJECT_FREE(m, n)                    \
    do {                                               \
        size_t _bo_i;                                  \
        if (NULL != (m)) {                             \
            for (_bo_i = 0; _bo_i < (size_t)(n); _bo_i++) { \
                PMIX_BYTE_OBJECT_DESTRUCT(&(m)[_bo_i]); \
            }                                          \
            free((m));                                 \
            (m) = NULL;                                \
        }                                              \
    } while (0)
/* takes ownership of d (which must be malloc'd); d and s are cleared */
#define PMIX_BYTE_OBJECT_LOAD(b, d, s) \
    do {                               \
        (b)->bytes = (char *)(d);      \
        (d) = NULL;                    \
        (b)->size = (s);               \
        (s) = 0;                       \
    } while (0)

/* environment variable directives */
#define PMIX_ENVAR_CONSTRUCT(m) memset((m), 0, sizeof(pmix_envar_t))
#define PMIX_ENVAR_DESTRUCT(m) \
    do {                       \
        free((m)->envar);      \
        free((m)->value);      \
        (m)->envar = NULL;     \
        (m)->value = NULL;     \
    } while (0)
#define PMIX_ENVAR_LOAD(m, e, v, s)                       \
    do {                                                  \
        (m)->envar = (NULL == (e)) ? NULL : strdup((e));  \
        (m)->value = (NULL == (v)) ? NULL : strdup((v));  \
        (m)->separator = (s);                             \
    } while (0)

/* coordinates */
#define PMIX_COORD_CONSTRUCT(m) memset((m), 0, sizeof(pmix_coord_t))
#define PMIX_COORD_DESTRUCT(m) \
    do {                       \
        free((m)->coord);      \
        (m)->coord = NULL;     \
        (m)->dims = 0;         \
    } while (0)

/* values */
#define PMIX_VALUE_CONSTRUCT(m)                \
    do {                                       \
        memset((m), 0, sizeof(pmix_value_t));  \
        (m)->type = PMIX_UNDEF;                \
    } while (0)
#define PMIX_VALUE_DESTRUCT(m) PMIx_Value_destruct((m))
#define PMIX_VALUE_CREATE(m, n) ((m) = PMIx_Value_create((n)))
#define PMIX_VALUE_FREE(m, n)         \
    do {                              \
        PMIx_Value_free((m), (n));    \
        (m) = NULL;                   \
    } while (0)
#define PMIX_VALUE_RELEASE(m) PMIX_VALUE_FREE((m), 1)
#define PMIX_VALUE_LOAD(v, d, t) PMIx_Value_load((v), (d), (t))
#define PMIX_VALUE_UNLOAD(r, k, d, s) ((r) = PMIx_Value_unload((k), (d), (s)))
#define PMIX_VALUE_XFER_DIRECT(r, v, s) ((r) = PMIx_Value_xfer((v), (s)))
/* allocates *v when it is NULL, then deep-copies s into it */
#define PMIX_VALUE_XFER(r, v, s)                                     \
    do {                                                             \
        if (NULL == (v)) {                                           \
            (v) = PMIx_Value_create(1);                              \
        }                                                            \
        (r) = (NULL == (v)) ? PMIX_ERR_NOMEM : PMIx_Value_xfer((v), (s)); \
    } while (0)
/* copies a numeric value of any integer/size/pid type into *n of type t */
#define PMIX_VALUE_GET_NUMBER(s, m, n, t)                                   \
    do {                                                                    \
        (s) = PMIX_SUCCESS;                                                 \
        switch ((m)->type) {                                                \
        case PMIX_SIZE:   (n) = (t)(m)->data.size; break;                   \
        case PMIX_INT:    (n) = (t)(m)->data.integer; break;                \
        case PMIX_INT8:   (n) = (t)(m)->data.int8; break;                   \
        case PMIX_INT16:  (n) = (t)(m)->data.int16; break;                  \
        case PMIX_INT32:  (n) = (t)(m)->data.int32; break;                  \
        case PMIX_INT64:  (n) = (t)(m)->data.int64; break;                  \
        case PMIX_UINT:   (n) = (t)(m)->data.uint; break;                   \
        case PMIX_UINT8:  (n) = (t)(m)->data.uint8; break;                  \
        case PMIX_UINT16: (n) = (t)(m)->data.uint16; break;                 \
        case PMIX_UINT32: (n) = (t)(m)->data.uint32; break;                 \
        case PMIX_UINT64: (n) = (t)(m)->data.uint64; break;                 \
        case PMIX_PROC_RANK: (n) = (t)(m)->data.rank; break;                \
        case PMIX_PID:    (n) = (t)(m)->data.pid; break;                    \
        case PMIX_FLOAT:  (n) = (t)(m)->data.fval; break;                   \
        case PMIX_DOUBLE: (n) = (t)(m)->data.dval; break;                   \
        default:          (s) = PMIX_ERR_BAD_PARAM; break;                  \
        }                                                                   \
    } while (0)

/* info */
#define PMIX_INFO_CONSTRUCT(m)                \
    do {                                      \
        memset((m), 0, sizeof(pmix_info_t));  \
        (m)->value.type = PMIX_UNDEF;         \
    } while (0)
#define PMIX_INFO_DESTRUCT(m) PMIx_Info_destruct((m))
#define PMIX_INFO_CREATE(m, n) ((m) = PMIx_Info_create((n)))
#define PMIX_INFO_FREE(m, n)         \
    do {                             \
        PMIx_Info_free((m), (n));    \
        (m) = NULL;                  \
    } while (0)
#define PMIX_INFO_LOAD(i, k, d, t) ((void)PMIx_Info_load((i), (k), (d), (t)))
#define PMIX_INFO_XFER(d, s) ((void)PMIx_Info_xfer((d), (s)))
#define PMIX_INFO_TRUE(m) PMIx_Info_true((m))
#define PMIX_CHECK_TRUE(a) (PMIX_BOOL_TRUE == PMIx_Value_true((a)))
#define PMIX_CHECK_BOOL(a) (PMIX_NON_BOOL != PMIx_Value_true((a)))
#define PMIX_INFO_REQUIRED(m)      ((m)->flags |= PMIX_INFO_REQD)
#define PMIX_INFO_OPTIONAL(m)      ((m)->flags &= ~PMIX_INFO_REQD)
#define PMIX_INFO_IS_REQUIRED(m)   (0 != ((m)->flags & PMIX_INFO_REQD))
#define PMIX_INFO_IS_OPTIONAL(m)   (0 == ((m)->flags & PMIX_INFO_REQD))
#define PMIX_INFO_PROCESSED(m)     ((m)->flags |= PMIX_INFO_REQD_PROCESSED)
#define PMIX_INFO_WAS_PROCESSED(m) (0 != ((m)->flags & PMIX_INFO_REQD_PROCESSED))
#define PMIX_INFO_SET_END(m)       ((m)->flags |= PMIX_INFO_ARRAY_END)
#define PMIX_INFO_IS_END(m)        (0 != ((m)->flags & PMIX_INFO_ARRAY_END))
#define PMIX_INFO_SET_QUALIFIER(m) ((m)->flags |= PMIX_INFO_QUALIFIER)
#define PMIX_INFO_IS_QUALIFIER(m)  (0 != ((m)->flags & PMIX_INFO_QUALIFIER))
#define PMIX_INFO_SET_PERSISTENT(m) ((m)->flags |= PMIX_INFO_PERSISTENT)
#define PMIX_INFO_IS_PERSISTENT(m) (0 != ((m)->flags & PMIX_INFO_PERSISTENT))

/* lookup results */
#define PMIX_PDATA_CONSTRUCT(m)                \
    do {                                       \
        memset((m), 0, sizeof(pmix_pdata_t));  \
        (m)->value.type = PMIX_UNDEF;          \
    } while (0)
#define PMIX_PDATA_DESTRUCT(m) PMIx_Value_destruct(&(m)->value)
#define PMIX_PDATA_CREATE(m, n) ((m) = PMIx_Pdata_create((n)))
#define PMIX_PDATA_FREE(m, n)        \
    do {                             \
        PMIx_Pdata_free((m), (n));   \
        (m) = NULL;                  \
    } while (0)
#define PMIX_PDATA_RELEASE(m) PMIX_PDATA_FREE((m), 1)
#define PMIX_PDATA_LOAD(m, p, k, v, t)                        \
    do {                                                      \
        if (NULL != (m)) {                                    \
            PMIX_PDATA_CONSTRUCT((m));                        \
            PMIX_LOAD_NSPACE((m)->proc.nspace, (p)->nspace);  \
            (m)->proc.rank = (p)->rank;                       \
            PMIX_LOAD_KEY((m)->key, (k));                     \
            (void)PMIx_Value_load(&(m)->value, (v), (t));     \
        }                                                     \
    } while (0)
#define PMIX_PDATA_XFER(d, s)                                      \
    do {                                                           \
        if (NULL != (d)) {                                         \
            PMIX_PDATA_CONSTRUCT((d));                             \
            memcpy(&(d)->proc, &(s)->proc, sizeof(pmix_proc_t));   \
            PMIX_LOAD_KEY((d)->key, (s)->key);                     \
            (void)PMIx_Value_xfer(&(d)->value, &(s)->value);       \
        }                                                          \
    } while (0)

/* applications */
#define PMIX_APP_CONSTRUCT(m) memset((m), 0, sizeof(pmix_app_t))
#define PMIX_APP_DESTRUCT(m) PMIx_App_destruct((m))
#define PMIX_APP_CREATE(m, n) ((m) = PMIx_App_create((n)))
#define PMIX_APP_FREE(m, n)        \
    do {                           \
        PMIx_App_free((m), (n));   \
        (m) = NULL;                \
    } while (0)
#define PMIX_APP_RELEASE(m) PMIX_APP_FREE((m), 1)
#define PMIX_APP_INFO_CREATE(m, n)           \
    do {                                     \
        (m)->info = PMIx_Info_create((n));   \
        (m)->ninfo = (n);                    \
    } while (0)

/* data arrays */
#define PMIX_DATA_ARRAY_INIT(m, t) PMIx_Data_array_init((m), (t))
#define PMIX_DATA_ARRAY_CONSTRUCT(m, n, t) PMIx_Data_array_construct((m), (n), (t))
#define PMIX_DATA_ARRAY_DESTRUCT(m) PMIx_Data_array_destruct((m))
#define PMIX_DATA_ARRAY_CREATE(m, n, t) ((m) = PMIx_Data_array_create((n), (t)))
#define PMIX_DATA_ARRAY_FREE(m)       \
    do {                              \
        PMIx_Data_array_free((m));    \
        (m) = NULL;                   \
    } while (0)
#define PMIX_DATA_ARRAY_RELEASE(m) PMIX_DATA_ARRAY_FREE((m))

/* data buffers */
#define PMIX_DATA_BUFFER_STATIC_INIT \
    { .base_ptr = NULL, .pack_ptr = NULL, .unpack_ptr = NULL, .bytes_allocated = 0, .bytes_used = 0 }
#define PMIX_DATA_BUFFER_CREATE(m) ((m) = PMIx_Data_buffer_create())
#define PMIX_DATA_BUFFER_RELEASE(m)       \
    do {                                  \
        PMIx_Data_buffer_release((m));    \
        (m) = NULL;                       \
    } while (0)
#define PMIX_DATA_BUFFER_CONSTRUCT(m) PMIx_Data_buffer_construct((m))
#define PMIX_DATA_BUFFER_DESTRUCT(m) PMIx_Data_buffer_destruct((m))
/* The buffer takes ownership of d (malloc'd, s bytes) and frees it when
 * destructed; the caller must not free it. */
#define PMIX_DATA_BUFFER_LOAD(b, d, s)     \
    do {                                   \
        pmix_byte_object_t _db_bo;         \
        _db_bo.bytes = (char *)(d);        \
        _db_bo.size = (s);                 \
        (void)PMIx_Data_load((b), &_db_bo); \
    } while (0)
/* d receives the malloc'd payload (caller frees), s its size */
#define PMIX_DATA_BUFFER_UNLOAD(b, d, s)             \
    do {                                             \
        pmix_byte_object_t _db_bo;                   \
        if (PMIX_SUCCESS == PMIx_Data_unload((b), &_db_bo)) { \
            (d) = _db_bo.bytes;                      \
            (s) = _db_bo.size;                       \
        } else {                                     \
            (d) = NULL;                              \
            (s) = 0;                                 \
        }                                            \
    } while (0)

/* argv */
#define PMIX_ARGV_APPEND(r, a, b) ((r) = PMIx_Argv_append_nosize(&(a), (b)))
#define PMIX_ARGV_COUNT(r, a) ((r) = PMIx_Argv_count((a)))
#define PMIX_ARGV_FREE(a) \
    do {                  \
        PMIx_Argv_free((a)); \
        (a) = NULL;       \
    } while (0)
#define PMIX_ARGV_SPLIT(a, b, c) ((a) = PMIx_Argv_split((b), (c)))
#define PMIX_ARGV_JOIN(a, b, c) ((a) = PMIx_Argv_join((b), (c)))
#define PMIX_ARGV_COPY(a, b) ((a) = PMIx_Argv_copy((b)))

/* ------------------------------------------------------------------ */
/* Events, queries and logging (OpenPMIx 4.2 values and strings).      */
/* ------------------------------------------------------------------ */

/* event handler registration and notification */
#define PMIX_EVENT_HDLR_FIRST               "pmix.evfirst"          /* bool */
#define PMIX_EVENT_HDLR_LAST                "pmix.evlast"           /* bool */
#define PMIX_EVENT_HDLR_FIRST_IN_CATEGORY   "pmix.evfirstcat"       /* bool */
#define PMIX_EVENT_HDLR_LAST_IN_CATEGORY    "pmix.evlastcat"        /* bool */
#define PMIX_EVENT_HDLR_BEFORE              "pmix.evbefore"         /* char* */
#define PMIX_EVENT_HDLR_AFTER               "pmix.evafter"          /* char* */
#define PMIX_EVENT_HDLR_PREPEND             "pmix.evprepend"        /* bool */
#define PMIX_EVENT_HDLR_APPEND              "pmix.evappend"         /* bool */
#define PMIX_EVENT_CUSTOM_RANGE             "pmix.evrange"          /* pmix_data_array_t* of pmix_proc_t */
#define PMIX_EVENT_AFFECTED_PROC            "pmix.evproc"           /* pmix_proc_t* */
#define PMIX_EVENT_AFFECTED_PROCS           "pmix.evaffected"       /* pmix_data_array_t* of pmix_proc_t */
#define PMIX_EVENT_NON_DEFAULT              "pmix.evnondef"         /* bool */
#define PMIX_EVENT_RETURN_OBJECT            "pmix.evobject"         /* void* */
#define PMIX_EVENT_DO_NOT_CACHE             "pmix.evnocache"        /* bool */
#define PMIX_EVENT_SILENT_TERMINATION       "pmix.evsilentterm"     /* bool */
#define PMIX_EVENT_PROXY                    "pmix.evproxy"          /* pmix_proc_t* */
#define PMIX_EVENT_TEXT_MESSAGE             "pmix.evtext"           /* char* */
#define PMIX_EVENT_TIMESTAMP                "pmix.evtstamp"         /* time_t */
#define PMIX_EVENT_ONESHOT                  "pmix.evone"            /* bool */
#define PMIX_PROC_TERM_STATUS               "pmix.proc.term.status" /* pmix_status_t */
#define PMIX_PROC_STATE_STATUS              "pmix.proc.state"       /* pmix_proc_state_t */

/* queries */
#define PMIX_QUERY_PARTIAL_SUCCESS          -104
#define PMIX_QUERY_SUPPORTED_KEYS           "pmix.qry.keys"         /* char* */
#define PMIX_QUERY_NAMESPACE_INFO           "pmix.qry.nsinfo"       /* pmix_data_array_t* */
#define PMIX_QUERY_JOB_STATUS               "pmix.qry.jst"          /* pmix_status_t */
#define PMIX_QUERY_QUEUE_LIST               "pmix.qry.qlst"         /* char* */
#define PMIX_QUERY_QUEUE_STATUS             "pmix.qry.qst"          /* pmix_data_array_t* */
#define PMIX_QUERY_PROC_TABLE               "pmix.qry.ptable"       /* pmix_data_array_t* of pmix_proc_info_t */
#define PMIX_QUERY_LOCAL_PROC_TABLE         "pmix.qry.lptable"      /* pmix_data_array_t* of pmix_proc_info_t */
#define PMIX_QUERY_AUTHORIZATIONS           "pmix.qry.auths"        /* pmix_data_array_t* */
#define PMIX_QUERY_SPAWN_SUPPORT            "pmix.qry.spawn"        /* char* */
#define PMIX_QUERY_DEBUG_SUPPORT            "pmix.qry.debug"        /* char* */
#define PMIX_QUERY_MEMORY_USAGE             "pmix.qry.mem"          /* pmix_data_array_t* */
#define PMIX_QUERY_ALLOC_STATUS             "pmix.query.alloc"      /* char* */
#define PMIX_QUERY_NUM_PSETS                "pmix.qry.psetnum"      /* size_t */
#define PMIX_QUERY_PSET_NAMES               "pmix.qry.psets"        /* char* */
#define PMIX_QUERY_PSET_MEMBERSHIP          "pmix.qry.pmems"        /* pmix_data_array_t* */
#define PMIX_QUERY_NUM_GROUPS               "pmix.qry.pgrpnum"      /* size_t */
#define PMIX_QUERY_GROUP_NAMES              "pmix.qry.pgrp"         /* pmix_data_array_t* */
#define PMIX_QUERY_GROUP_MEMBERSHIP         "pmix.qry.pgrpmems"     /* pmix_data_array_t* */
#define PMIX_QUERY_ATTRIBUTE_SUPPORT        "pmix.qry.attrs"        /* pmix_data_array_t* */
#define PMIX_QUERY_AVAIL_SERVERS            "pmix.qry.asrvrs"       /* pmix_data_array_t* */
#define PMIX_QUERY_QUALIFIERS               "pmix.qry.quals"        /* pmix_data_array_t* */
#define PMIX_QUERY_RESULTS                  "pmix.qry.res"          /* pmix_data_array_t* */
#define PMIX_QUERY_REFRESH_CACHE            "pmix.qry.rfsh"         /* bool */
#define PMIX_QUERY_LOCAL_ONLY               "pmix.qry.local"        /* bool */
#define PMIX_QUERY_REPORT_AVG               "pmix.qry.avg"          /* bool */
#define PMIX_QUERY_REPORT_MINMAX            "pmix.qry.minmax"       /* bool */
#define PMIX_QUERY_SUPPORTED_QUALIFIERS     "pmix.qry.quals"        /* bool */
#define PMIX_CLIENT_ATTRIBUTES              "pmix.client.attrs"     /* char* */
#define PMIX_SERVER_ATTRIBUTES              "pmix.srvr.attrs"       /* char* */
#define PMIX_HOST_ATTRIBUTES                "pmix.host.attrs"       /* char* */
#define PMIX_CLIENT_FUNCTIONS               "pmix.client.fns"       /* char* */
#define PMIX_TOOL_ATTRIBUTES                "pmix.tool.attrs"       /* char* */

#define PMIX_QUERY_STATIC_INIT { .keys = NULL, .qualifiers = NULL, .nqual = 0 }
#define PMIX_QUERY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_query_t))
#define PMIX_QUERY_DESTRUCT(m)                                     \
    do {                                                           \
        if (NULL != (m)->keys) {                                   \
            PMIx_Argv_free((m)->keys);                             \
            (m)->keys = NULL;                                      \
        }                                                          \
        if (NULL != (m)->qualifiers) {                             \
            PMIX_INFO_FREE((m)->qualifiers, (m)->nqual);           \
            (m)->qualifiers = NULL;                                \
            (m)->nqual = 0;                                        \
        }                                                          \
    } while (0)
#define PMIX_QUERY_CREATE(m, n) \
    ((m) = (0 == (n)) ? NULL : (pmix_query_t *)calloc((n), sizeof(pmix_query_t)))
#define PMIX_QUERY_QUALIFIERS_CREATE(m, n)             \
    do {                                               \
        (m)->nqual = (n);                              \
        PMIX_INFO_CREATE((m)->qualifiers, (m)->nqual); \
    } while (0)
#define PMIX_QUERY_RELEASE(m)     \
    do {                          \
        PMIX_QUERY_DESTRUCT((m)); \
        free((m));                \
        (m) = NULL;               \
    } while (0)
#define PMIX_QUERY_FREE(m, n)                         \
    do {                                              \
        if (NULL != (m)) {                            \
            for (size_t _qs = 0; _qs < (n); _qs++)    \
                PMIX_QUERY_DESTRUCT(&((m)[_qs]));     \
            free((m));                                \
            (m) = NULL;                               \
        }                                             \
    } while (0)

/* logging channels and directives */
#define PMIX_LOG_SOURCE                     "pmix.log.source"       /* pmix_proc_t* */
#define PMIX_LOG_STDERR                     "pmix.log.stderr"       /* char* */
#define PMIX_LOG_STDOUT                     "pmix.log.stdout"       /* char* */
#define PMIX_LOG_SYSLOG                     "pmix.log.syslog"       /* char* */
#define PMIX_LOG_LOCAL_SYSLOG               "pmix.log.lsys"         /* char* */
#define PMIX_LOG_GLOBAL_SYSLOG              "pmix.log.gsys"         /* char* */
#define PMIX_LOG_SYSLOG_PRI                 "pmix.log.syspri"       /* int */
#define PMIX_LOG_TIMESTAMP                  "pmix.log.tstmp"        /* time_t */
#define PMIX_LOG_GENERATE_TIMESTAMP         "pmix.log.gtstmp"       /* bool */
#define PMIX_LOG_TAG_OUTPUT                 "pmix.log.tag"          /* bool */
#define PMIX_LOG_TIMESTAMP_OUTPUT           "pmix.log.tsout"        /* bool */
#define PMIX_LOG_XML_OUTPUT                 "pmix.log.xml"          /* bool */
#define PMIX_LOG_ONCE                       "pmix.log.once"         /* bool */
#define PMIX_LOG_MSG                        "pmix.log.msg"          /* pmix_byte_object_t */
#define PMIX_LOG_KEY                        "pmix.log.key"          /* char* */
#define PMIX_LOG_VAL                        "pmix.log.val"          /* char* */
#define PMIX_LOG_AGG                        "pmix.log.agg"          /* bool */
#define PMIX_LOG_EMAIL                      "pmix.log.email"        /* pmix_data_array_t* */
#define PMIX_LOG_GLOBAL_DATASTORE           "pmix.log.gstore"       /* bool */
#define PMIX_LOG_JOB_RECORD                 "pmix.log.jrec"         /* bool */

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIx_COMMON_H */
