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
#include <stdio.h>
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

#define PMIX_HAVE_VISIBILITY 1
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
#define PMIX_PROCESS_SET_DEFINE                 -55
#define PMIX_PROCESS_SET_DELETE                 -56
#define PMIX_READY_FOR_DEBUG                    -58
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
#define PMIX_QUERY_PARTIAL_SUCCESS             -104
#define PMIX_JCTRL_CHECKPOINT                  -106
#define PMIX_JCTRL_CHECKPOINT_COMPLETE         -107
#define PMIX_JCTRL_PREEMPT_ALERT               -108
#define PMIX_MONITOR_HEARTBEAT_ALERT           -109
#define PMIX_MONITOR_FILE_ALERT                -110
#define PMIX_PROC_TERMINATED                   -111
#define PMIX_ERR_INVALID_TERMINATION           -112
#define PMIX_FABRIC_UPDATE_ENDPOINTS           -113
#define PMIX_ERR_EVENT_REGISTRATION            -144
#define PMIX_EVENT_JOB_END                     -145
#define PMIX_ERR_JOB_TERMINATED                PMIX_EVENT_JOB_END
#define PMIX_ERR_UPDATE_ENDPOINTS              -146
#define PMIX_MODEL_DECLARED                    -147
#define PMIX_MODEL_RESOURCES                   -151
#define PMIX_OPENMP_PARALLEL_ENTERED           -152
#define PMIX_OPENMP_PARALLEL_EXITED            -153
#define PMIX_LAUNCHER_READY                    -155
#define PMIX_OPERATION_IN_PROGRESS             -156
#define PMIX_OPERATION_SUCCEEDED               -157
#define PMIX_ERR_INVALID_OPERATION             -158
/* group life cycle (the events a group's members are told about) */
#define PMIX_GROUP_INVITED                     -159
#define PMIX_GROUP_LEFT                        -160
#define PMIX_GROUP_INVITE_ACCEPTED             -161
#define PMIX_GROUP_INVITE_DECLINED             -162
#define PMIX_GROUP_INVITE_FAILED               -163
#define PMIX_GROUP_MEMBERSHIP_UPDATE           -164
#define PMIX_GROUP_CONSTRUCT_ABORT             -165
#define PMIX_GROUP_CONSTRUCT_COMPLETE          -166
#define PMIX_GROUP_LEADER_SELECTED             -167
#define PMIX_GROUP_LEADER_FAILED               -168
#define PMIX_GROUP_CONTEXT_ID_ASSIGNED         -169
#define PMIX_GROUP_MEMBER_FAILED               -170
#define PMIX_ERR_REPEAT_ATTR_REGISTRATION      -171
#define PMIX_ERR_IOF_FAILURE                   -172
#define PMIX_ERR_IOF_COMPLETE                  -173
#define PMIX_LAUNCH_COMPLETE                   -174
#define PMIX_FABRIC_UPDATED                    -175
#define PMIX_FABRIC_UPDATE_PENDING             -176
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
/* Older names OpenPMIx still accepts (same numbers). */
#define PMIX_EXISTS                            PMIX_ERR_EXISTS
#define PMIX_DEBUGGER_RELEASE                  PMIX_ERR_DEBUGGER_RELEASE
#define PMIX_DEBUG_WAITING_FOR_NOTIFY          -58
#define PMIX_ERR_SYS_LIMITS_PIPES              -70
#define PMIX_ERR_SYS_LIMITS_CHILDREN           -71
#define PMIX_ERR_PIPE_SETUP_FAILURE            -72
#define PMIX_ERR_EXE_NOT_ACCESSIBLE            -73
#define PMIX_ERR_JOB_WDIR_NOT_ACCESSIBLE       -74
#define PMIX_ERR_SYS_LIMITS_FILES              -75
#define PMIX_NOTIFY_ALLOC_COMPLETE             -105
#define PMIX_GDS_ACTION_COMPLETE               -148
#define PMIX_PROC_HAS_CONNECTED                -149
#define PMIX_CONNECT_REQUESTED                 -150
#define PMIX_ERR_SYS_BASE                      PMIX_EVENT_SYS_BASE
#define PMIX_ERR_SYS_OTHER                     PMIX_EVENT_SYS_OTHER
/* True for the system-event range of codes. */
#define PMIX_SYSTEM_EVENT(a) ((a) <= PMIX_EVENT_SYS_BASE && PMIX_EVENT_SYS_OTHER <= (a))
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
#define PMIX_BUFFER                 26 /* kept for old code; never packed */
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
#define PMIX_JOB_STATE_PREPPED                1 /* older name */
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

/* Where PMIx_Get_cpuset looks: the whole process or the calling thread. */
typedef uint8_t pmix_bind_envelope_t;
#define PMIX_CPUBIND_PROCESS 0
#define PMIX_CPUBIND_THREAD  1

/* Storage descriptions (bit sets; the values are the Standard's). */
typedef uint64_t pmix_storage_medium_t;
#define PMIX_STORAGE_MEDIUM_UNKNOWN 0x0000000000000001
#define PMIX_STORAGE_MEDIUM_TAPE    0x0000000000000002
#define PMIX_STORAGE_MEDIUM_HDD     0x0000000000000004
#define PMIX_STORAGE_MEDIUM_SSD     0x0000000000000008
#define PMIX_STORAGE_MEDIUM_NVME    0x0000000000000010
#define PMIX_STORAGE_MEDIUM_PMEM    0x0000000000000020
#define PMIX_STORAGE_MEDIUM_RAM     0x0000000000000040

typedef uint64_t pmix_storage_accessibility_t;
#define PMIX_STORAGE_ACCESSIBILITY_NODE    0x0000000000000001
#define PMIX_STORAGE_ACCESSIBILITY_SESSION 0x0000000000000002
#define PMIX_STORAGE_ACCESSIBILITY_JOB     0x0000000000000004
#define PMIX_STORAGE_ACCESSIBILITY_RACK    0x0000000000000008
#define PMIX_STORAGE_ACCESSIBILITY_CLUSTER 0x0000000000000010
#define PMIX_STORAGE_ACCESSIBILITY_REMOTE  0x0000000000000020

typedef uint64_t pmix_storage_persistence_t;
#define PMIX_STORAGE_PERSISTENCE_TEMPORARY 0x0000000000000001
#define PMIX_STORAGE_PERSISTENCE_NODE      0x0000000000000002
#define PMIX_STORAGE_PERSISTENCE_SESSION   0x0000000000000004
#define PMIX_STORAGE_PERSISTENCE_JOB       0x0000000000000008
#define PMIX_STORAGE_PERSISTENCE_SCRATCH   0x0000000000000010
#define PMIX_STORAGE_PERSISTENCE_PROJECT   0x0000000000000020
#define PMIX_STORAGE_PERSISTENCE_ARCHIVE   0x0000000000000040

typedef uint16_t pmix_storage_access_type_t;
#define PMIX_STORAGE_ACCESS_RD   0x0001
#define PMIX_STORAGE_ACCESS_WR   0x0002
#define PMIX_STORAGE_ACCESS_RDWR 0x0003

/* What a fabric query asks for. */
typedef enum {
    PMIX_FABRIC_REQUEST_INFO,
    PMIX_FABRIC_UPDATE_INFO
} pmix_fabric_operation_t;

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

/* The rest of the Standard's reserved keys, by name (OpenPMIx 4.2 spells
 * and numbers them the same way; the Standard gives each key's value type).
 * pmigate answers or honours those its documentation names; the others are
 * here so programs written for other hosts compile. */
#define PMIX_ABORT_NON_ZERO_TERM               "pmix.abnz"
#define PMIX_ACCESS_GRPIDS                     "pmix.agids"
#define PMIX_ACCESS_PERMISSIONS                "pmix.aperms"
#define PMIX_ACCESS_USERIDS                    "pmix.auids"
#define PMIX_ADD_ENVAR                         "pmix.envar.add"
#define PMIX_ADD_HOST                          "pmix.addhost"
#define PMIX_ADD_HOSTFILE                      "pmix.addhostfile"
#define PMIX_AGGREGATE_HELP                    "pmix.agg.help"
#define PMIX_ALLOCATED_NODELIST                "pmix.alist"
#define PMIX_ALLOC_BANDWIDTH                   "pmix.alloc.bw"
#define PMIX_ALLOC_CPU_LIST                    "pmix.alloc.cpulist"
#define PMIX_ALLOC_FABRIC                      "pmix.alloc.net"
#define PMIX_ALLOC_FABRIC_ENDPTS               "pmix.alloc.endpts"
#define PMIX_ALLOC_FABRIC_ENDPTS_NODE          "pmix.alloc.endpts.nd"
#define PMIX_ALLOC_FABRIC_ID                   "pmix.alloc.netid"
#define PMIX_ALLOC_FABRIC_PLANE                "pmix.alloc.netplane"
#define PMIX_ALLOC_FABRIC_QOS                  "pmix.alloc.netqos"
#define PMIX_ALLOC_FABRIC_SEC_KEY              "pmix.alloc.nsec"
#define PMIX_ALLOC_FABRIC_TYPE                 "pmix.alloc.nettype"
#define PMIX_ALLOC_ID                          "pmix.alloc.id"
#define PMIX_ALLOC_MEM_SIZE                    "pmix.alloc.msize"
#define PMIX_ALLOC_NETWORK                     "pmix.alloc.net"
#define PMIX_ALLOC_NETWORK_ENDPTS              "pmix.alloc.endpts"
#define PMIX_ALLOC_NETWORK_ENDPTS_NODE         "pmix.alloc.endpts.nd"
#define PMIX_ALLOC_NETWORK_ID                  "pmix.alloc.netid"
#define PMIX_ALLOC_NETWORK_PLANE               "pmix.alloc.netplane"
#define PMIX_ALLOC_NETWORK_QOS                 "pmix.alloc.netqos"
#define PMIX_ALLOC_NETWORK_SEC_KEY             "pmix.alloc.nsec"
#define PMIX_ALLOC_NETWORK_TYPE                "pmix.alloc.nettype"
#define PMIX_ALLOC_NODE_LIST                   "pmix.alloc.nlist"
#define PMIX_ALLOC_NUM_CPUS                    "pmix.alloc.ncpus"
#define PMIX_ALLOC_NUM_CPU_LIST                "pmix.alloc.ncpulist"
#define PMIX_ALLOC_NUM_NODES                   "pmix.alloc.nnodes"
#define PMIX_ALLOC_QUEUE                       "pmix.alloc.queue"
#define PMIX_ALLOC_REQ_ID                      "pmix.alloc.reqid"
#define PMIX_ALLOC_TIME                        "pmix.alloc.time"
#define PMIX_ALL_CLONES_PARTICIPATE            "pmix.clone.part"
#define PMIX_APPEND_ENVAR                      "pmix.envar.appnd"
#define PMIX_ARCH                              "pmix.arch"
#define PMIX_ATTR_UNDEF                        "pmix.undef"
#define PMIX_BIND_PROGRESS_THREAD              "pmix.bind.pt"
#define PMIX_BIND_REQUIRED                     "pmix.bind.reqd"
#define PMIX_BREAKPOINT                        "pmix.brkpnt"
#define PMIX_CLEANUP_EMPTY                     "pmix.clnup.empty"
#define PMIX_CLEANUP_IGNORE                    "pmix.clnup.ignore"
#define PMIX_CLEANUP_LEAVE_TOPDIR              "pmix.clnup.lvtop"
#define PMIX_CLEANUP_RECURSIVE                 "pmix.clnup.recurse"
#define PMIX_CLIENT_ATTRIBUTES                 "pmix.client.attrs"
#define PMIX_CLIENT_AVG_MEMORY                 "pmix.cl.mem.avg"
#define PMIX_CLIENT_FUNCTIONS                  "pmix.client.fns"
#define PMIX_CMD_LINE                          "pmix.cmd.line"
#define PMIX_COLLECTIVE_ALGO                   "pmix.calgo"
#define PMIX_COLLECTIVE_ALGO_REQD              "pmix.calreqd"
#define PMIX_COLOCATE_NPERNODE                 "pmix.colnum.node"
#define PMIX_COLOCATE_NPERPROC                 "pmix.colnum.proc"
#define PMIX_COLOCATE_PROCS                    "pmix.colproc"
#define PMIX_CONNECT_MAX_RETRIES               "pmix.tool.mretries"
#define PMIX_CONNECT_RETRY_DELAY               "pmix.tool.retry"
#define PMIX_CONNECT_SYSTEM_FIRST              "pmix.cnct.sys.first"
#define PMIX_CONNECT_TO_SYSTEM                 "pmix.cnct.sys"
#define PMIX_COSPAWN_APP                       "pmix.cospawn"
#define PMIX_CPUSET_BITMAP                     "pmix.bitmap"
#define PMIX_CPUS_PER_PROC                     "pmix.cpuperproc"
#define PMIX_CPU_LIST                          "pmix.cpulist"
#define PMIX_CREDENTIAL                        "pmix.cred"
#define PMIX_CRED_TYPE                         "pmix.sec.ctype"
#define PMIX_CRYPTO_KEY                        "pmix.sec.key"
#define PMIX_DAEMON_MEMORY                     "pmix.dmn.mem"
#define PMIX_DEBUGGER_DAEMONS                  "pmix.debugger"
#define PMIX_DEBUG_APP_DIRECTIVES              "pmix.dbg.adirs"
#define PMIX_DEBUG_DAEMONS_PER_NODE            "pmix.dbg.dpnd"
#define PMIX_DEBUG_DAEMONS_PER_PROC            "pmix.dbg.dpproc"
#define PMIX_DEBUG_JOB                         "pmix.dbg.job"
#define PMIX_DEBUG_JOB_DIRECTIVES              "pmix.dbg.jdirs"
#define PMIX_DEBUG_STOP_IN_APP                 "pmix.dbg.notify"
#define PMIX_DEBUG_STOP_ON_EXEC                "pmix.dbg.exec"
#define PMIX_DEBUG_TARGET                      "pmix.dbg.tgt"
#define PMIX_DEVICE_DISTANCES                  "pmix.dev.dist"
#define PMIX_DEVICE_ID                         "pmix.dev.id"
#define PMIX_DEVICE_TYPE                       "pmix.dev.type"
#define PMIX_DISPLAY_ALLOCATION                "pmix.dispalloc"
#define PMIX_DISPLAY_MAP                       "pmix.dispmap"
#define PMIX_DISPLAY_MAP_DETAILED              "pmix.dispmapdet"
#define PMIX_DISPLAY_TOPOLOGY                  "pmix.disptopo"
#define PMIX_DO_NOT_LAUNCH                     "pmix.dnl"
#define PMIX_DSTPATH                           "pmix.dstpath"
#define PMIX_ENUM_VALUE                        "pmix.descr.enum"
#define PMIX_ENVARS_HARVESTED                  "pmix.evar.hvstd"
#define PMIX_EXEC_AGENT                        "pmix.exec.agnt"
#define PMIX_FABRIC_COST_MATRIX                "pmix.fab.cm"
#define PMIX_FABRIC_DEVICE                     "pmix.fabdev"
#define PMIX_FABRIC_DEVICES                    "pmix.fab.devs"
#define PMIX_FABRIC_DEVICE_ADDRESS             "pmix.fabdev.addr"
#define PMIX_FABRIC_DEVICE_BUS_TYPE            "pmix.fabdev.btyp"
#define PMIX_FABRIC_DEVICE_COORDINATES         "pmix.fab.coord"
#define PMIX_FABRIC_DEVICE_DRIVER              "pmix.fabdev.driver"
#define PMIX_FABRIC_DEVICE_FIRMWARE            "pmix.fabdev.fmwr"
#define PMIX_FABRIC_DEVICE_INDEX               "pmix.fabdev.idx"
#define PMIX_FABRIC_DEVICE_MTU                 "pmix.fabdev.mtu"
#define PMIX_FABRIC_DEVICE_NAME                "pmix.fabdev.nm"
#define PMIX_FABRIC_DEVICE_PCI_DEVID           "pmix.fabdev.pcidevid"
#define PMIX_FABRIC_DEVICE_SPEED               "pmix.fabdev.speed"
#define PMIX_FABRIC_DEVICE_STATE               "pmix.fabdev.state"
#define PMIX_FABRIC_DEVICE_TYPE                "pmix.fabdev.type"
#define PMIX_FABRIC_DEVICE_VENDOR              "pmix.fabdev.vndr"
#define PMIX_FABRIC_DEVICE_VENDORID            "pmix.fabdev.vendid"
#define PMIX_FABRIC_DIMS                       "pmix.fab.dims"
#define PMIX_FABRIC_ENDPT                      "pmix.fab.endpt"
#define PMIX_FABRIC_GROUPS                     "pmix.fab.grps"
#define PMIX_FABRIC_IDENTIFIER                 "pmix.fab.id"
#define PMIX_FABRIC_INDEX                      "pmix.fab.idx"
#define PMIX_FABRIC_NUM_DEVICES                "pmix.fab.nverts"
#define PMIX_FABRIC_PLANE                      "pmix.fab.plane"
#define PMIX_FABRIC_SHAPE                      "pmix.fab.shape"
#define PMIX_FABRIC_SHAPE_STRING               "pmix.fab.shapestr"
#define PMIX_FABRIC_SWITCH                     "pmix.fab.switch"
#define PMIX_FABRIC_VENDOR                     "pmix.fab.vndr"
#define PMIX_FIRST_ENVAR                       "pmix.envar.first"
#define PMIX_FORKEXEC_AGENT                    "pmix.fe.agnt"
#define PMIX_FWD_STDDIAG                       "pmix.fwd.stddiag"
#define PMIX_FWD_STDERR                        "pmix.fwd.stderr"
#define PMIX_FWD_STDIN                         "pmix.fwd.stdin"
#define PMIX_FWD_STDOUT                        "pmix.fwd.stdout"
#define PMIX_GET_POINTER_VALUES                "pmix.get.pntrs"
#define PMIX_GET_STATIC_VALUES                 "pmix.get.static"
#define PMIX_GROUP_ADD_MEMBERS                 "pmix.grp.add"
#define PMIX_GROUP_ASSIGN_CONTEXT_ID           "pmix.grp.actxid"
#define PMIX_GROUP_CONTEXT_ID                  "pmix.grp.ctxid"
#define PMIX_GROUP_ENDPT_DATA                  "pmix.grp.endpt"
#define PMIX_GROUP_FT_COLLECTIVE               "pmix.grp.ftcoll"
#define PMIX_GROUP_ID                          "pmix.grp.id"
#define PMIX_GROUP_INFO                        "pmix.grp.info"
#define PMIX_GROUP_LEADER                      "pmix.grp.ldr"
#define PMIX_GROUP_LOCAL_CID                   "pmix.grp.lclid"
#define PMIX_GROUP_LOCAL_ONLY                  "pmix.grp.lcl"
#define PMIX_GROUP_MEMBERSHIP                  "pmix.grp.mbrs"
#define PMIX_GROUP_NAMES                       "pmix.pgrp.nm"
#define PMIX_GROUP_NOTIFY_TERMINATION          "pmix.grp.notterm"
#define PMIX_GROUP_OPTIONAL                    "pmix.grp.opt"
#define PMIX_HOMOGENEOUS_SYSTEM                "pmix.homo"
#define PMIX_HOST                              "pmix.host"
#define PMIX_HOSTFILE                          "pmix.hostfile"
#define PMIX_HOST_ATTRIBUTES                   "pmix.host.attrs"
#define PMIX_HOST_FUNCTIONS                    "pmix.host.fns"
#define PMIX_HWLOC_HOLE_KIND                   "pmix.hwlocholek"
#define PMIX_HWLOC_SHARE_TOPO                  "pmix.hwlocsh"
#define PMIX_HWLOC_SHMEM_ADDR                  "pmix.hwlocaddr"
#define PMIX_HWLOC_SHMEM_FILE                  "pmix.hwlocfile"
#define PMIX_HWLOC_SHMEM_SIZE                  "pmix.hwlocsize"
#define PMIX_HWLOC_XML_V1                      "pmix.hwlocxml1"
#define PMIX_HWLOC_XML_V2                      "pmix.hwlocxml2"
#define PMIX_INDEX_ARGV                        "pmix.indxargv"
#define PMIX_IOF_BUFFERING_SIZE                "pmix.iof.bsize"
#define PMIX_IOF_BUFFERING_TIME                "pmix.iof.btime"
#define PMIX_IOF_CACHE_SIZE                    "pmix.iof.csize"
#define PMIX_IOF_COMPLETE                      "pmix.iof.cmp"
#define PMIX_IOF_COPY                          "pmix.iof.cpy"
#define PMIX_IOF_DROP_NEWEST                   "pmix.iof.new"
#define PMIX_IOF_DROP_OLDEST                   "pmix.iof.old"
#define PMIX_IOF_FILE_ONLY                     "pmix.iof.fonly"
#define PMIX_IOF_FILE_PATTERN                  "pmix.iof.fpt"
#define PMIX_IOF_LOCAL_OUTPUT                  "pmix.iof.local"
#define PMIX_IOF_MERGE_STDERR_STDOUT           "pmix.iof.mrg"
#define PMIX_IOF_OUTPUT_RAW                    "pmix.iof.raw"
#define PMIX_IOF_OUTPUT_TO_DIRECTORY           "pmix.iof.dir"
#define PMIX_IOF_OUTPUT_TO_FILE                "pmix.iof.file"
#define PMIX_IOF_PUSH_STDIN                    "pmix.iof.stdin"
#define PMIX_IOF_RANK_OUTPUT                   "pmix.iof.rank"
#define PMIX_IOF_REDIRECT                      "pmix.iof.redir"
#define PMIX_IOF_STOP                          "pmix.iof.stop"
#define PMIX_IOF_TAG_DETAILED_OUTPUT           "pmix.iof.tagdet"
#define PMIX_IOF_TAG_FULLNAME_OUTPUT           "pmix.iof.tagfull"
#define PMIX_IOF_TAG_OUTPUT                    "pmix.iof.tag"
#define PMIX_IOF_TIMESTAMP_OUTPUT              "pmix.iof.ts"
#define PMIX_IOF_XML_OUTPUT                    "pmix.iof.xml"
#define PMIX_JOB_CONTINUOUS                    "pmix.continuous"
#define PMIX_JOB_CTRL_CANCEL                   "pmix.jctrl.cancel"
#define PMIX_JOB_CTRL_CHECKPOINT               "pmix.jctrl.ckpt"
#define PMIX_JOB_CTRL_CHECKPOINT_EVENT         "pmix.jctrl.ckptev"
#define PMIX_JOB_CTRL_CHECKPOINT_METHOD        "pmix.jctrl.ckmethod"
#define PMIX_JOB_CTRL_CHECKPOINT_SIGNAL        "pmix.jctrl.ckptsig"
#define PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT       "pmix.jctrl.ckptsig"
#define PMIX_JOB_CTRL_ID                       "pmix.jctrl.id"
#define PMIX_JOB_CTRL_KILL                     "pmix.jctrl.kill"
#define PMIX_JOB_CTRL_PAUSE                    "pmix.jctrl.pause"
#define PMIX_JOB_CTRL_PREEMPTIBLE              "pmix.jctrl.preempt"
#define PMIX_JOB_CTRL_PROVISION                "pmix.jctrl.pvn"
#define PMIX_JOB_CTRL_PROVISION_IMAGE          "pmix.jctrl.pvnimg"
#define PMIX_JOB_CTRL_RESTART                  "pmix.jctrl.restart"
#define PMIX_JOB_CTRL_RESUME                   "pmix.jctrl.resume"
#define PMIX_JOB_CTRL_SIGNAL                   "pmix.jctrl.sig"
#define PMIX_JOB_CTRL_TERMINATE                "pmix.jctrl.term"
#define PMIX_JOB_RECOVERABLE                   "pmix.recover"
#define PMIX_JOB_TIMEOUT                       "pmix.job.time"
#define PMIX_KEEPALIVE_PIPE                    "PMIX_KEEPALIVE_PIPE"
#define PMIX_LAUNCHER                          "pmix.tool.launcher"
#define PMIX_LAUNCHER_DAEMON                   "pmix.lnch.dmn"
#define PMIX_LAUNCHER_RENDEZVOUS_FILE          "pmix.tool.lncrnd"
#define PMIX_LAUNCHER_RNDZ_FILE                "PMIX_LAUNCHER_RNDZ_FILE"
#define PMIX_LAUNCHER_RNDZ_URI                 "PMIX_LAUNCHER_RNDZ_URI"
#define PMIX_LAUNCH_DIRECTIVES                 "pmix.lnch.dirs"
#define PMIX_LOCAL_COLLECTIVE_STATUS           "pmix.loc.col.st"
#define PMIX_LOCAL_TOPO                        "pmix.ltopo"
#define PMIX_MAPPER                            "pmix.mapper"
#define PMIX_MAP_BLOB                          "pmix.mblob"
#define PMIX_MAX_RESTARTS                      "pmix.maxrestarts"
#define PMIX_MAX_VALUE                         "pmix.descr.maxval"
#define PMIX_MERGE_STDERR_STDOUT               "pmix.mergeerrout"
#define PMIX_MIN_VALUE                         "pmix.descr.minval"
#define PMIX_MODEL_AFFINITY_POLICY             "pmix.mdl.tap"
#define PMIX_MODEL_CPU_TYPE                    "pmix.mdl.cputype"
#define PMIX_MODEL_NUM_CPUS                    "pmix.mdl.ncpu"
#define PMIX_MODEL_NUM_THREADS                 "pmix.mdl.nthrds"
#define PMIX_MODEL_PHASE_NAME                  "pmix.mdl.phase"
#define PMIX_MODEL_PHASE_TYPE                  "pmix.mdl.ptype"
#define PMIX_MONITOR_APP_CONTROL               "pmix.monitor.appctrl"
#define PMIX_MONITOR_CANCEL                    "pmix.monitor.cancel"
#define PMIX_MONITOR_FILE                      "pmix.monitor.fmon"
#define PMIX_MONITOR_FILE_ACCESS               "pmix.monitor.faccess"
#define PMIX_MONITOR_FILE_CHECK_TIME           "pmix.monitor.ftime"
#define PMIX_MONITOR_FILE_DROPS                "pmix.monitor.fdrop"
#define PMIX_MONITOR_FILE_MODIFY               "pmix.monitor.fmod"
#define PMIX_MONITOR_FILE_SIZE                 "pmix.monitor.fsize"
#define PMIX_MONITOR_HEARTBEAT                 "pmix.monitor.mbeat"
#define PMIX_MONITOR_HEARTBEAT_DROPS           "pmix.monitor.bdrop"
#define PMIX_MONITOR_HEARTBEAT_TIME            "pmix.monitor.btime"
#define PMIX_MONITOR_ID                        "pmix.monitor.id"
#define PMIX_MYSERVER_URI                      "pmix.mysrvr.uri"
#define PMIX_NOHUP                             "pmix.nohup"
#define PMIX_NON_PMI                           "pmix.nonpmi"
#define PMIX_NOTIFY_JOB_EVENTS                 "pmix.note.jev"
#define PMIX_NOTIFY_LAUNCH                     "pmix.note.lnch"
#define PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION  "pmix.noteabproc"
#define PMIX_NOTIFY_PROC_TERMINATION           "pmix.noteproc"
#define PMIX_NO_OVERSUBSCRIBE                  "pmix.noover"
#define PMIX_NO_PROCS_ON_HEAD                  "pmix.nolocal"
#define PMIX_NUM_ALLOCATED_NODES               "pmix.num.anodes"
#define PMIX_NUM_SLOTS                         "pmix.num.slots"
#define PMIX_OUTPUT_NOCOPY                     "pmix.nocopy"
#define PMIX_OUTPUT_TO_DIRECTORY               "pmix.outdir"
#define PMIX_OUTPUT_TO_FILE                    "pmix.outfile"
#define PMIX_PACKAGE_RANK                      "pmix.pkgrank"
#define PMIX_PERSONALITY                       "pmix.pers"
#define PMIX_PNET_SETUP_APP                    "pmix.pnet.setapp"
#define PMIX_PPR                               "pmix.ppr"
#define PMIX_PREFIX                            "pmix.prefix"
#define PMIX_PRELOAD_BIN                       "pmix.preloadbin"
#define PMIX_PRELOAD_FILES                     "pmix.preloadfiles"
#define PMIX_PREPEND_ENVAR                     "pmix.envar.prepnd"
#define PMIX_PRIMARY_SERVER                    "pmix.pri.srvr"
#define PMIX_PROC_BLOB                         "pmix.pblob"
#define PMIX_PROC_STATE_STATUS                 "pmix.proc.state"
#define PMIX_PROC_TERM_STATUS                  "pmix.proc.term.status"
#define PMIX_PROC_URI                          "pmix.puri"
#define PMIX_PSET_NAMES                        "pmix.pset.nms"
#define PMIX_QUALIFIED_VALUE                   "pmix.qual.val"
#define PMIX_RECONNECT_SERVER                  "pmix.cnct.recon"
#define PMIX_REGISTER_CLEANUP                  "pmix.reg.cleanup"
#define PMIX_REGISTER_CLEANUP_DIR              "pmix.reg.cleanupdir"
#define PMIX_REGISTER_NODATA                   "pmix.reg.nodata"
#define PMIX_REPORT_BINDINGS                   "pmix.repbind"
#define PMIX_REPORT_CHILD_SEP                  "pmix.rptchildsep"
#define PMIX_REQUESTOR_IS_TOOL                 "pmix.req.tool"
#define PMIX_RUNTIME_OPTIONS                   "pmix.runopt"
#define PMIX_SEND_HEARTBEAT                    "pmix.monitor.beat"
#define PMIX_SERVER_ATTRIBUTES                 "pmix.srvr.attrs"
#define PMIX_SERVER_ENABLE_MONITORING          "pmix.srv.monitor"
#define PMIX_SERVER_FUNCTIONS                  "pmix.srvr.fns"
#define PMIX_SERVER_GATEWAY                    "pmix.srv.gway"
#define PMIX_SERVER_HOSTNAME                   "pmix.srvr.host"
#define PMIX_SERVER_INFO_ARRAY                 "pmix.srv.arr"
#define PMIX_SERVER_PIDINFO                    "pmix.srvr.pidinfo"
#define PMIX_SERVER_REMOTE_CONNECTIONS         "pmix.srvr.remote"
#define PMIX_SERVER_SCHEDULER                  "pmix.srv.sched"
#define PMIX_SERVER_SESSION_SUPPORT            "pmix.srvr.sess"
#define PMIX_SERVER_SHARE_TOPOLOGY             "pmix.srvr.share"
#define PMIX_SERVER_START_TIME                 "pmix.srv.strtime"
#define PMIX_SERVER_SYSTEM_SUPPORT             "pmix.srvr.sys"
#define PMIX_SERVER_TMPDIR                     "pmix.srvr.tmpdir"
#define PMIX_SERVER_TOOL_SUPPORT               "pmix.srvr.tool"
#define PMIX_SETUP_APP_ALL                     "pmix.setup.all"
#define PMIX_SETUP_APP_ENVARS                  "pmix.setup.env"
#define PMIX_SETUP_APP_NONENVARS               "pmix.setup.nenv"
#define PMIX_SET_ENVAR                         "pmix.envar.set"
#define PMIX_SET_SESSION_CWD                   "pmix.ssncwd"
#define PMIX_SHOW_LAUNCH_PROGRESS              "pmix.showprog"
#define PMIX_SINGLE_LISTENER                   "pmix.sing.listnr"
#define PMIX_SOCKET_MODE                       "pmix.sockmode"
#define PMIX_SORTED_PROC_ARRAY                 "pmix.sorted.parr"
#define PMIX_SPAWN_TIMEOUT                     "pmix.sp.time"
#define PMIX_SPAWN_TOOL                        "pmix.spwn.tool"
#define PMIX_STDIN_TGT                         "pmix.stdin"
#define PMIX_STORAGE_ACCESSIBILITY             "pmix.strg.access"
#define PMIX_STORAGE_ACCESS_TYPE               "pmix.strg.atype"
#define PMIX_STORAGE_BW_CUR                    "pmix.strg.bwcur"
#define PMIX_STORAGE_BW_MAX                    "pmix.strg.bwmax"
#define PMIX_STORAGE_CAPACITY_LIMIT            "pmix.strg.cap"
#define PMIX_STORAGE_CAPACITY_USED             "pmix.strg.capuse"
#define PMIX_STORAGE_ID                        "pmix.strg.id"
#define PMIX_STORAGE_IOPS_CUR                  "pmix.strg.iopscur"
#define PMIX_STORAGE_IOPS_MAX                  "pmix.strg.iopsmax"
#define PMIX_STORAGE_MEDIUM                    "pmix.strg.medium"
#define PMIX_STORAGE_MINIMAL_XFER_SIZE         "pmix.strg.minxfer"
#define PMIX_STORAGE_OBJECTS_USED              "pmix.strg.objuse"
#define PMIX_STORAGE_OBJECT_LIMIT              "pmix.strg.obj"
#define PMIX_STORAGE_PATH                      "pmix.strg.path"
#define PMIX_STORAGE_PERSISTENCE               "pmix.strg.persist"
#define PMIX_STORAGE_SUGGESTED_XFER_SIZE       "pmix.strg.sxfer"
#define PMIX_STORAGE_TYPE                      "pmix.strg.type"
#define PMIX_STORAGE_VERSION                   "pmix.strg.ver"
#define PMIX_SWITCH_PEERS                      "pmix.speers"
#define PMIX_SYSTEM_TMPDIR                     "pmix.sys.tmpdir"
#define PMIX_TAG_OUTPUT                        "pmix.tagout"
#define PMIX_TCP_DISABLE_IPV4                  "pmix.tcp.disipv4"
#define PMIX_TCP_DISABLE_IPV6                  "pmix.tcp.disipv6"
#define PMIX_TCP_IF_EXCLUDE                    "pmix.tcp.ifexclude"
#define PMIX_TCP_IF_INCLUDE                    "pmix.tcp.ifinclude"
#define PMIX_TCP_IPV4_PORT                     "pmix.tcp.ipv4"
#define PMIX_TCP_IPV6_PORT                     "pmix.tcp.ipv6"
#define PMIX_TCP_REPORT_URI                    "pmix.tcp.repuri"
#define PMIX_TCP_URI                           "pmix.tcp.uri"
#define PMIX_TIMEOUT_REPORT_STATE              "pmix.tim.state"
#define PMIX_TIMEOUT_STACKTRACES               "pmix.tim.stack"
#define PMIX_TIMESTAMP_OUTPUT                  "pmix.tsout"
#define PMIX_TIME_REMAINING                    "pmix.time.remaining"
#define PMIX_TOOL_ATTACHMENT_FILE              "pmix.tool.attach"
#define PMIX_TOOL_ATTRIBUTES                   "pmix.tool.attrs"
#define PMIX_TOOL_CONNECT_OPTIONAL             "pmix.tool.conopt"
#define PMIX_TOOL_DO_NOT_CONNECT               "pmix.tool.nocon"
#define PMIX_TOOL_FUNCTIONS                    "pmix.tool.fns"
#define PMIX_TOOL_NSPACE                       "pmix.tool.nspace"
#define PMIX_TOOL_RANK                         "pmix.tool.rank"
#define PMIX_TOPOLOGY                          "pmix.topo"
#define PMIX_TOPOLOGY2                         "pmix.topo2"
#define PMIX_TOPOLOGY_FILE                     "pmix.topo.file"
#define PMIX_TOPOLOGY_SIGNATURE                "pmix.toposig"
#define PMIX_TOPOLOGY_XML                      "pmix.topo.xml"
#define PMIX_UNSET_ENVAR                       "pmix.envar.unset"
#define PMIX_USOCK_DISABLE                     "pmix.usock.disable"
#define PMIX_VERSION_INFO                      "pmix.version"
#define PMIX_WAIT_FOR_CONNECTION               "pmix.wait.conn"
#define PMIX_WDIR_USER_SPECIFIED               "pmix.wdir.user"

/* ---- events, queries and logging: keys -------------------------------- */
/* (one block, kept apart: the event/query/log implementation owns it) */
#define PMIX_EVENT_ACTION_TIMEOUT              "pmix.evtimeout"
#define PMIX_EVENT_AFFECTED_PROC               "pmix.evproc"
#define PMIX_EVENT_AFFECTED_PROCS              "pmix.evaffected"
#define PMIX_EVENT_BASE                        "pmix.evbase"
#define PMIX_EVENT_CUSTOM_RANGE                "pmix.evrange"
#define PMIX_EVENT_DO_NOT_CACHE                "pmix.evnocache"
#define PMIX_EVENT_HDLR_AFTER                  "pmix.evafter"
#define PMIX_EVENT_HDLR_APPEND                 "pmix.evappend"
#define PMIX_EVENT_HDLR_BEFORE                 "pmix.evbefore"
#define PMIX_EVENT_HDLR_FIRST                  "pmix.evfirst"
#define PMIX_EVENT_HDLR_FIRST_IN_CATEGORY      "pmix.evfirstcat"
#define PMIX_EVENT_HDLR_LAST                   "pmix.evlast"
#define PMIX_EVENT_HDLR_LAST_IN_CATEGORY       "pmix.evlastcat"
#define PMIX_EVENT_HDLR_PREPEND                "pmix.evprepend"
#define PMIX_EVENT_NON_DEFAULT                 "pmix.evnondef"
#define PMIX_EVENT_NO_TERMINATION              "pmix.evnoterm"
#define PMIX_EVENT_ONESHOT                     "pmix.evone"
#define PMIX_EVENT_PROXY                       "pmix.evproxy"
#define PMIX_EVENT_RETURN_OBJECT               "pmix.evobject"
#define PMIX_EVENT_SILENT_TERMINATION          "pmix.evsilentterm"
#define PMIX_EVENT_TERMINATE_JOB               "pmix.evterm.job"
#define PMIX_EVENT_TERMINATE_NODE              "pmix.evterm.node"
#define PMIX_EVENT_TERMINATE_PROC              "pmix.evterm.proc"
#define PMIX_EVENT_TERMINATE_SESSION           "pmix.evterm.sess"
#define PMIX_EVENT_TEXT_MESSAGE                "pmix.evtext"
#define PMIX_EVENT_TIMESTAMP                   "pmix.evtstamp"
#define PMIX_EVENT_WANT_TERMINATION            "pmix.evterm"
#define PMIX_LOG_AGG                           "pmix.log.agg"
#define PMIX_LOG_COMPLETION                    "pmix.logcomp"
#define PMIX_LOG_EMAIL                         "pmix.log.email"
#define PMIX_LOG_EMAIL_ADDR                    "pmix.log.emaddr"
#define PMIX_LOG_EMAIL_MSG                     "pmix.log.emmsg"
#define PMIX_LOG_EMAIL_SENDER_ADDR             "pmix.log.emfaddr"
#define PMIX_LOG_EMAIL_SERVER                  "pmix.log.esrvr"
#define PMIX_LOG_EMAIL_SRVR_PORT               "pmix.log.esrvrprt"
#define PMIX_LOG_EMAIL_SUBJECT                 "pmix.log.emsub"
#define PMIX_LOG_GENERATE_TIMESTAMP            "pmix.log.gtstmp"
#define PMIX_LOG_GLOBAL_DATASTORE              "pmix.log.gstore"
#define PMIX_LOG_GLOBAL_SYSLOG                 "pmix.log.gsys"
#define PMIX_LOG_JOB_EVENTS                    "pmix.log.jev"
#define PMIX_LOG_JOB_RECORD                    "pmix.log.jrec"
#define PMIX_LOG_KEY                           "pmix.log.key"
#define PMIX_LOG_LOCAL_SYSLOG                  "pmix.log.lsys"
#define PMIX_LOG_MSG                           "pmix.log.msg"
#define PMIX_LOG_ONCE                          "pmix.log.once"
#define PMIX_LOG_PROC_ABNORMAL_TERMINATION     "pmix.logabproc"
#define PMIX_LOG_PROC_TERMINATION              "pmix.logproc"
#define PMIX_LOG_SOURCE                        "pmix.log.source"
#define PMIX_LOG_STDERR                        "pmix.log.stderr"
#define PMIX_LOG_STDOUT                        "pmix.log.stdout"
#define PMIX_LOG_SYSLOG                        "pmix.log.syslog"
#define PMIX_LOG_SYSLOG_PRI                    "pmix.log.syspri"
#define PMIX_LOG_TAG_OUTPUT                    "pmix.log.tag"
#define PMIX_LOG_TIMESTAMP                     "pmix.log.tstmp"
#define PMIX_LOG_TIMESTAMP_OUTPUT              "pmix.log.tsout"
#define PMIX_LOG_VAL                           "pmix.log.val"
#define PMIX_LOG_XML_OUTPUT                    "pmix.log.xml"
#define PMIX_QUERY_ALLOC_STATUS                "pmix.query.alloc"
#define PMIX_QUERY_ATTRIBUTE_SUPPORT           "pmix.qry.attrs"
#define PMIX_QUERY_AUTHORIZATIONS              "pmix.qry.auths"
#define PMIX_QUERY_AVAIL_SERVERS               "pmix.qry.asrvrs"
#define PMIX_QUERY_DEBUG_SUPPORT               "pmix.qry.debug"
#define PMIX_QUERY_GROUP_MEMBERSHIP            "pmix.qry.pgrpmems"
#define PMIX_QUERY_GROUP_NAMES                 "pmix.qry.pgrp"
#define PMIX_QUERY_JOB_STATUS                  "pmix.qry.jst"
#define PMIX_QUERY_LOCAL_ONLY                  "pmix.qry.local"
#define PMIX_QUERY_LOCAL_PROC_TABLE            "pmix.qry.lptable"
#define PMIX_QUERY_MEMORY_USAGE                "pmix.qry.mem"
#define PMIX_QUERY_NAMESPACE_INFO              "pmix.qry.nsinfo"
#define PMIX_QUERY_NUM_GROUPS                  "pmix.qry.pgrpnum"
#define PMIX_QUERY_NUM_PSETS                   "pmix.qry.psetnum"
#define PMIX_QUERY_PROC_TABLE                  "pmix.qry.ptable"
#define PMIX_QUERY_PROVISIONAL_ABI_VERSION     "pmix.qry.prabiver"
#define PMIX_QUERY_PSET_MEMBERSHIP             "pmix.qry.pmems"
#define PMIX_QUERY_PSET_NAMES                  "pmix.qry.psets"
#define PMIX_QUERY_QUALIFIERS                  "pmix.qry.quals"
#define PMIX_QUERY_QUEUE_LIST                  "pmix.qry.qlst"
#define PMIX_QUERY_QUEUE_STATUS                "pmix.qry.qst"
#define PMIX_QUERY_REFRESH_CACHE               "pmix.qry.rfsh"
#define PMIX_QUERY_REPORT_AVG                  "pmix.qry.avg"
#define PMIX_QUERY_REPORT_MINMAX               "pmix.qry.minmax"
#define PMIX_QUERY_RESULTS                     "pmix.qry.res"
#define PMIX_QUERY_SPAWN_SUPPORT               "pmix.qry.spawn"
#define PMIX_QUERY_STABLE_ABI_VERSION          "pmix.qry.stabiver"
#define PMIX_QUERY_STORAGE_LIST                "pmix.strg.list"
#define PMIX_QUERY_SUPPORTED_KEYS              "pmix.qry.keys"
#define PMIX_QUERY_SUPPORTED_QUALIFIERS        "pmix.qry.quals"

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

/* Statistics records (the Standard's monitoring types).  pmigate never
 * fills them itself; programs may build and pass them. Sizes in MBytes. */
typedef struct pmix_proc_stats {
    char *node;
    pmix_proc_t proc;
    pid_t pid;
    char *cmd;
    char state;
    struct timeval time;
    float percent_cpu;
    int32_t priority;
    uint16_t num_threads;
    float pss;
    float vsize;
    float rss;
    float peak_vsize;
    uint16_t processor;
    struct timeval sample_time;
} pmix_proc_stats_t;

typedef struct pmix_disk_stats {
    char *disk;
    uint64_t num_reads_completed;
    uint64_t num_reads_merged;
    uint64_t num_sectors_read;
    uint64_t milliseconds_reading;
    uint64_t num_writes_completed;
    uint64_t num_writes_merged;
    uint64_t num_sectors_written;
    uint64_t milliseconds_writing;
    uint64_t num_ios_in_progress;
    uint64_t milliseconds_io;
    uint64_t weighted_milliseconds_io;
} pmix_disk_stats_t;

typedef struct pmix_net_stats {
    char *net_interface;
    uint64_t num_bytes_recvd;
    uint64_t num_packets_recvd;
    uint64_t num_recv_errs;
    uint64_t num_bytes_sent;
    uint64_t num_packets_sent;
    uint64_t num_send_errs;
} pmix_net_stats_t;

typedef struct pmix_node_stats {
    char *node;
    float la;
    float la5;
    float la15;
    float total_mem;
    float free_mem;
    float buffers;
    float cached;
    float swap_cached;
    float swap_total;
    float swap_free;
    float mapped;
    struct timeval sample_time;
    pmix_disk_stats_t *diskstats;
    size_t ndiskstats;
    pmix_net_stats_t *netstats;
    size_t nnetstats;
} pmix_node_stats_t;

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

/* A fabric a program registered with PMIx_Fabric_register; `module` is the
 * library's. */
typedef struct pmix_fabric_s {
    char *name;
    size_t index;
    pmix_info_t *info;
    size_t ninfo;
    void *module;
} pmix_fabric_t;

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
typedef void (*pmix_credential_cbfunc_t)(pmix_status_t status, pmix_byte_object_t *credential,
                                         pmix_info_t info[], size_t ninfo, void *cbdata);
typedef void (*pmix_validation_cbfunc_t)(pmix_status_t status, pmix_info_t info[], size_t ninfo,
                                         void *cbdata);
typedef void (*pmix_device_dist_cbfunc_t)(pmix_status_t status, pmix_device_distance_t *dist,
                                          size_t ndist, void *cbdata,
                                          pmix_release_cbfunc_t release_fn, void *release_cbdata);

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
/* arg goes first; the rest move up one */
PMIX_EXPORT pmix_status_t PMIx_Argv_prepend_nosize(char ***argv, const char *arg);
/* appends arg unless an equal string is already there */
PMIX_EXPORT pmix_status_t PMIx_Argv_append_unique_nosize(char ***argv, const char *arg);
/* sets name=value in the NULL-terminated *env (overwrite: replace an
 * existing entry; else leave it and return PMIX_ERR_EXISTS) */
PMIX_EXPORT pmix_status_t PMIx_Setenv(const char *name, const char *value, bool overwrite,
                                      char ***env);

/* Release what a cpuset / topology holds (not the struct itself). */
PMIX_EXPORT void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset);
PMIX_EXPORT void PMIx_Topology_destruct(pmix_topology_t *topo);

/* Info lists: an opaque, growable list of pmix_info_t a program builds
 * before it knows how many it needs; _convert turns it into a data array
 * of PMIX_INFO (deep copies); _release frees the list. */
PMIX_EXPORT void *PMIx_Info_list_start(void);
PMIX_EXPORT pmix_status_t PMIx_Info_list_add(void *ptr, const char *key, const void *value,
                                             pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info);
PMIX_EXPORT pmix_status_t PMIx_Info_list_xfer(void *ptr, const pmix_info_t *info);
PMIX_EXPORT pmix_status_t PMIx_Info_list_convert(void *ptr, pmix_data_array_t *par);
PMIX_EXPORT void PMIx_Info_list_release(void *ptr);

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
/* Static initialisers: `pmix_x_t v = PMIX_X_STATIC_INIT;` gives the   */
/* same empty object as PMIX_X_CONSTRUCT(&v).                          */
/* ------------------------------------------------------------------ */

#define PMIX_PROC_STATIC_INIT        { .nspace = { 0 }, .rank = PMIX_RANK_UNDEF }
#define PMIX_BYTE_OBJECT_STATIC_INIT { .bytes = NULL, .size = 0 }
#define PMIX_DATA_ARRAY_STATIC_INIT  { .type = PMIX_UNDEF, .size = 0, .array = NULL }
#define PMIX_VALUE_STATIC_INIT       { .type = PMIX_UNDEF, .data.ptr = NULL }
#define PMIX_INFO_STATIC_INIT        { .key = { 0 }, .flags = 0, .value = PMIX_VALUE_STATIC_INIT }
#define PMIX_LOOKUP_STATIC_INIT \
    { .proc = PMIX_PROC_STATIC_INIT, .key = { 0 }, .value = PMIX_VALUE_STATIC_INIT }
#define PMIX_APP_STATIC_INIT \
    { .cmd = NULL, .argv = NULL, .env = NULL, .cwd = NULL, .maxprocs = 0, .info = NULL, .ninfo = 0 }
#define PMIX_QUERY_STATIC_INIT       { .keys = NULL, .qualifiers = NULL, .nqual = 0 }
#define PMIX_ENVAR_STATIC_INIT       { .envar = NULL, .value = NULL, .separator = '\0' }
#define PMIX_COORD_STATIC_INIT       { .view = PMIX_COORD_VIEW_UNDEF, .coord = NULL, .dims = 0 }
#define PMIX_CPUSET_STATIC_INIT      { .source = NULL, .bitmap = NULL }
#define PMIX_TOPOLOGY_STATIC_INIT    { .source = NULL, .topology = NULL }
#define PMIX_GEOMETRY_STATIC_INIT \
    { .fabric = 0, .uuid = NULL, .osname = NULL, .coordinates = NULL, .ncoords = 0 }
#define PMIX_DEVICE_DIST_STATIC_INIT \
    { .uuid = NULL, .osname = NULL, .type = PMIX_DEVTYPE_UNKNOWN, .mindist = 0, .maxdist = 0 }
#define PMIX_ENDPOINT_STATIC_INIT \
    { .uuid = NULL, .osname = NULL, .endpt = PMIX_BYTE_OBJECT_STATIC_INIT }
#define PMIX_PROC_INFO_STATIC_INIT                                                   \
    { .proc = PMIX_PROC_STATIC_INIT, .hostname = NULL, .executable_name = NULL, .pid = 0, \
      .exit_code = 0, .state = PMIX_PROC_STATE_UNDEF }
#define PMIX_REGATTR_STATIC_INIT \
    { .name = NULL, .string = { 0 }, .type = PMIX_UNDEF, .description = NULL }
#define PMIX_FABRIC_STATIC_INIT \
    { .name = NULL, .index = 0, .info = NULL, .ninfo = 0, .module = NULL }
/* every field zero: the remaining numbers start at 0 by C's rules */
#define PMIX_PROC_STATS_STATIC_INIT { .node = NULL, .proc = PMIX_PROC_STATIC_INIT }
#define PMIX_DISK_STATS_STATIC_INIT { .disk = NULL }
#define PMIX_NET_STATS_STATIC_INIT  { .net_interface = NULL }
#define PMIX_NODE_STATS_STATIC_INIT { .node = NULL }

/* ------------------------------------------------------------------ */
/* Arrays of the remaining types: CREATE callocs n zeroed elements     */
/* (NULL for 0), FREE destructs n of them and frees, setting m NULL.   */
/* ------------------------------------------------------------------ */

#define PMIX_PG_CALLOC(m, n, type) \
    ((m) = (0 == (n)) ? NULL : (type *)calloc((size_t)(n), sizeof(type)))
#define PMIX_PG_FREE_ARRAY(m, n, destruct)                         \
    do {                                                           \
        if (NULL != (m)) {                                         \
            for (size_t _pg_i = 0; _pg_i < (size_t)(n); _pg_i++) { \
                destruct(&(m)[_pg_i]);                             \
            }                                                      \
            free((m));                                             \
            (m) = NULL;                                            \
        }                                                          \
    } while (0)

/* environment directives */
#define PMIX_ENVAR_CREATE(m, n) PMIX_PG_CALLOC((m), (n), pmix_envar_t)
#define PMIX_ENVAR_FREE(m, n)   PMIX_PG_FREE_ARRAY((m), (n), PMIX_ENVAR_DESTRUCT)

/* coordinates: d of them, each with n zeroed dimensions */
#define PMIX_COORD_CREATE(m, d, n)                                                 \
    do {                                                                           \
        PMIX_PG_CALLOC((m), (d), pmix_coord_t);                                    \
        for (size_t _pg_c = 0; NULL != (m) && _pg_c < (size_t)(d); _pg_c++) {     \
            (m)[_pg_c].dims = (n);                                                 \
            (m)[_pg_c].coord = (0 == (n)) ? NULL : (uint32_t *)calloc((n), sizeof(uint32_t)); \
        }                                                                          \
    } while (0)
#define PMIX_COORD_FREE(m, n) PMIX_PG_FREE_ARRAY((m), (n), PMIX_COORD_DESTRUCT)

/* cpusets and topologies (their contents are released by the library) */
#define PMIX_CPUSET_CONSTRUCT(m)   memset((m), 0, sizeof(pmix_cpuset_t))
#define PMIX_CPUSET_DESTRUCT(m)    PMIx_Cpuset_destruct((m))
#define PMIX_CPUSET_CREATE(m, n)   PMIX_PG_CALLOC((m), (n), pmix_cpuset_t)
#define PMIX_CPUSET_FREE(m, n)     PMIX_PG_FREE_ARRAY((m), (n), PMIx_Cpuset_destruct)
#define PMIX_TOPOLOGY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_topology_t))
#define PMIX_TOPOLOGY_DESTRUCT(m)  PMIx_Topology_destruct((m))
#define PMIX_TOPOLOGY_CREATE(m, n) PMIX_PG_CALLOC((m), (n), pmix_topology_t)
#define PMIX_TOPOLOGY_FREE(m, n)   PMIX_PG_FREE_ARRAY((m), (n), PMIx_Topology_destruct)

/* fabric geometry, device distances, endpoints */
#define PMIX_GEOMETRY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_geometry_t))
#define PMIX_GEOMETRY_DESTRUCT(m)                                 \
    do {                                                          \
        free((m)->uuid);                                          \
        (m)->uuid = NULL;                                         \
        free((m)->osname);                                        \
        (m)->osname = NULL;                                       \
        PMIX_COORD_FREE((m)->coordinates, (m)->ncoords);          \
        (m)->ncoords = 0;                                         \
    } while (0)
#define PMIX_GEOMETRY_CREATE(m, n) PMIX_PG_CALLOC((m), (n), pmix_geometry_t)
#define PMIX_GEOMETRY_FREE(m, n)   PMIX_PG_FREE_ARRAY((m), (n), PMIX_GEOMETRY_DESTRUCT)
/* an unknown distance is UINT16_MAX, as in the Standard */
#define PMIX_DEVICE_DIST_CONSTRUCT(m)                         \
    do {                                                      \
        memset((m), 0, sizeof(pmix_device_distance_t));       \
        (m)->mindist = UINT16_MAX;                            \
        (m)->maxdist = UINT16_MAX;                            \
    } while (0)
#define PMIX_DEVICE_DIST_DESTRUCT(m) \
    do {                             \
        free((m)->uuid);             \
        (m)->uuid = NULL;            \
        free((m)->osname);           \
        (m)->osname = NULL;          \
    } while (0)
#define PMIX_DEVICE_DIST_CREATE(m, n)                                        \
    do {                                                                     \
        PMIX_PG_CALLOC((m), (n), pmix_device_distance_t);                    \
        for (size_t _pg_d = 0; NULL != (m) && _pg_d < (size_t)(n); _pg_d++) \
            PMIX_DEVICE_DIST_CONSTRUCT(&(m)[_pg_d]);                         \
    } while (0)
#define PMIX_DEVICE_DIST_FREE(m, n) PMIX_PG_FREE_ARRAY((m), (n), PMIX_DEVICE_DIST_DESTRUCT)
#define PMIX_ENDPOINT_CONSTRUCT(m)  memset((m), 0, sizeof(pmix_endpoint_t))
#define PMIX_ENDPOINT_DESTRUCT(m)                \
    do {                                         \
        free((m)->uuid);                         \
        (m)->uuid = NULL;                        \
        free((m)->osname);                       \
        (m)->osname = NULL;                      \
        PMIX_BYTE_OBJECT_DESTRUCT(&(m)->endpt);  \
    } while (0)
#define PMIX_ENDPOINT_CREATE(m, n) PMIX_PG_CALLOC((m), (n), pmix_endpoint_t)
#define PMIX_ENDPOINT_FREE(m, n)   PMIX_PG_FREE_ARRAY((m), (n), PMIX_ENDPOINT_DESTRUCT)

/* statistics */
#define PMIX_PROC_STATS_CONSTRUCT(m) memset((m), 0, sizeof(pmix_proc_stats_t))
#define PMIX_PROC_STATS_DESTRUCT(m) \
    do {                            \
        free((m)->node);            \
        (m)->node = NULL;           \
        free((m)->cmd);             \
        (m)->cmd = NULL;            \
    } while (0)
#define PMIX_PROC_STATS_CREATE(m, n) PMIX_PG_CALLOC((m), (n), pmix_proc_stats_t)
#define PMIX_PROC_STATS_FREE(m, n)   PMIX_PG_FREE_ARRAY((m), (n), PMIX_PROC_STATS_DESTRUCT)
#define PMIX_PROC_STATS_RELEASE(m)   PMIX_PROC_STATS_FREE((m), 1)
#define PMIX_DISK_STATS_CONSTRUCT(m) memset((m), 0, sizeof(pmix_disk_stats_t))
#define PMIX_DISK_STATS_DESTRUCT(m) \
    do {                            \
        free((m)->disk);            \
        (m)->disk = NULL;           \
    } while (0)
#define PMIX_DISK_STATS_CREATE(m, n) PMIX_PG_CALLOC((m), (n), pmix_disk_stats_t)
#define PMIX_DISK_STATS_FREE(m, n)   PMIX_PG_FREE_ARRAY((m), (n), PMIX_DISK_STATS_DESTRUCT)
#define PMIX_DISK_STATS_RELEASE(m)   PMIX_DISK_STATS_FREE((m), 1)
#define PMIX_NET_STATS_CONSTRUCT(m)  memset((m), 0, sizeof(pmix_net_stats_t))
#define PMIX_NET_STATS_DESTRUCT(m) \
    do {                           \
        free((m)->net_interface);  \
        (m)->net_interface = NULL; \
    } while (0)
#define PMIX_NET_STATS_CREATE(m, n) PMIX_PG_CALLOC((m), (n), pmix_net_stats_t)
#define PMIX_NET_STATS_FREE(m, n)   PMIX_PG_FREE_ARRAY((m), (n), PMIX_NET_STATS_DESTRUCT)
#define PMIX_NET_STATS_RELEASE(m)   PMIX_NET_STATS_FREE((m), 1)
#define PMIX_NODE_STATS_CONSTRUCT(m) memset((m), 0, sizeof(pmix_node_stats_t))
#define PMIX_NODE_STATS_DESTRUCT(m)                               \
    do {                                                          \
        free((m)->node);                                          \
        (m)->node = NULL;                                         \
        PMIX_DISK_STATS_FREE((m)->diskstats, (m)->ndiskstats);    \
        (m)->ndiskstats = 0;                                      \
        PMIX_NET_STATS_FREE((m)->netstats, (m)->nnetstats);       \
        (m)->nnetstats = 0;                                       \
    } while (0)
#define PMIX_NODE_STATS_CREATE(m, n) PMIX_PG_CALLOC((m), (n), pmix_node_stats_t)
#define PMIX_NODE_STATS_FREE(m, n)   PMIX_PG_FREE_ARRAY((m), (n), PMIX_NODE_STATS_DESTRUCT)
#define PMIX_NODE_STATS_RELEASE(m)   PMIX_NODE_STATS_FREE((m), 1)

/* queries: keys is a NULL-terminated argv, qualifiers an info array */
#define PMIX_QUERY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_query_t))
#define PMIX_QUERY_DESTRUCT(m)                           \
    do {                                                 \
        PMIx_Argv_free((m)->keys);                       \
        (m)->keys = NULL;                                \
        PMIX_INFO_FREE((m)->qualifiers, (m)->nqual);     \
        (m)->nqual = 0;                                  \
    } while (0)
#define PMIX_QUERY_CREATE(m, n) PMIX_PG_CALLOC((m), (n), pmix_query_t)
#define PMIX_QUERY_FREE(m, n)   PMIX_PG_FREE_ARRAY((m), (n), PMIX_QUERY_DESTRUCT)
#define PMIX_QUERY_RELEASE(m)   PMIX_QUERY_FREE((m), 1)
#define PMIX_QUERY_QUALIFIERS_CREATE(m, n)                  \
    do {                                                    \
        (m)->nqual = (n);                                   \
        (m)->qualifiers = PMIx_Info_create((n));            \
    } while (0)

/* registered attributes (PMIx_Register_attributes, queries) */
#define PMIX_REGATTR_CONSTRUCT(a) memset((a), 0, sizeof(pmix_regattr_t))
#define PMIX_REGATTR_DESTRUCT(a)          \
    do {                                  \
        free((a)->name);                  \
        (a)->name = NULL;                 \
        PMIx_Argv_free((a)->description); \
        (a)->description = NULL;          \
    } while (0)
#define PMIX_REGATTR_CREATE(m, n) PMIX_PG_CALLOC((m), (n), pmix_regattr_t)
#define PMIX_REGATTR_FREE(m, n)   PMIX_PG_FREE_ARRAY((m), (n), PMIX_REGATTR_DESTRUCT)
/* a: the attribute, n: its name ("PMIX_..."), k: its key string, t: its
 * type, v: one line of description (or NULL) */
#define PMIX_REGATTR_LOAD(a, n, k, t, v)                                   \
    do {                                                                   \
        (a)->name = (NULL == (n)) ? NULL : strdup((n));                    \
        PMIX_LOAD_KEY((a)->string, (k));                                   \
        (a)->type = (t);                                                   \
        if (NULL != (v)) {                                                 \
            (void)PMIx_Argv_append_nosize(&(a)->description, (v));         \
        }                                                                  \
    } while (0)
#define PMIX_REGATTR_XFER(a, b)                                            \
    do {                                                                   \
        PMIX_REGATTR_CONSTRUCT((a));                                       \
        (a)->name = (NULL == (b)->name) ? NULL : strdup((b)->name);        \
        PMIX_LOAD_KEY((a)->string, (b)->string);                           \
        (a)->type = (b)->type;                                             \
        (a)->description = PMIx_Argv_copy((b)->description);               \
    } while (0)

/* fabrics */
#define PMIX_FABRIC_CONSTRUCT(x) memset((x), 0, sizeof(pmix_fabric_t))

/* "cluster:nspace" names of namespaces in other clusters */
#define PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(t, c, n)                                   \
    do {                                                                              \
        memset((t), 0, PMIX_MAX_NSLEN + 1);                                           \
        if (strlen((c)) + 1 + strlen((n)) <= PMIX_MAX_NSLEN) {                        \
            snprintf((char *)(t), PMIX_MAX_NSLEN + 1, "%s:%s", (const char *)(c),     \
                     (const char *)(n));                                              \
        }                                                                             \
    } while (0)
#define PMIX_MULTICLUSTER_NSPACE_PARSE(t, c, n)                                       \
    do {                                                                              \
        const char *_pg_t = (const char *)(t);                                        \
        const char *_pg_colon = strchr(_pg_t, ':');                                   \
        size_t _pg_cl = (NULL == _pg_colon) ? strlen(_pg_t) : (size_t)(_pg_colon - _pg_t); \
        memcpy((c), _pg_t, _pg_cl);                                                   \
        (c)[_pg_cl] = '\0';                                                           \
        strcpy((n), (NULL == _pg_colon) ? "" : _pg_colon + 1);                        \
    } while (0)

/* info lists (the PMIx_Info_list_* functions as macros) */
#define PMIX_INFO_LIST_START(p)            ((p) = PMIx_Info_list_start())
#define PMIX_INFO_LIST_ADD(r, p, a, v, t)  ((r) = PMIx_Info_list_add((p), (a), (v), (t)))
#define PMIX_INFO_LIST_INSERT(r, p, i)     ((r) = PMIx_Info_list_insert((p), (i)))
#define PMIX_INFO_LIST_XFER(r, p, a)       ((r) = PMIx_Info_list_xfer((p), (a)))
#define PMIX_INFO_LIST_CONVERT(r, p, m)    ((r) = PMIx_Info_list_convert((p), (m)))
#define PMIX_INFO_LIST_RELEASE(p)          PMIx_Info_list_release((p))

/* more argv and environment helpers */
#define PMIX_ARGV_PREPEND(r, a, b)       ((r) = PMIx_Argv_prepend_nosize(&(a), (b)))
/* a is a char *** here, as in OpenPMIx */
#define PMIX_ARGV_APPEND_UNIQUE(r, a, b) ((r) = PMIx_Argv_append_unique_nosize((a), (b)))
#define PMIX_SETENV(r, a, b, c)          ((r) = PMIx_Setenv((a), (b), true, (c)))

/* ------------------------------------------------------------------ */
/* Lower-case helpers: OpenPMIx's header defines these as inline       */
/* functions and programs call them by name (argv handling above all), */
/* so they are inline here too, on top of libpmix's PMIx_* helpers.    */
/* ------------------------------------------------------------------ */

static inline void *pmix_malloc(size_t n) { return malloc(n); }
static inline void *pmix_calloc(size_t n, size_t m) { return calloc(n, m); }
static inline void pmix_free(void *p) { free(p); }

/* copies at most len characters and always terminates dest[len] */
static inline void pmix_strncpy(char *dest, const char *src, size_t len)
{
    size_t i = 0;
    for (; NULL != src && i < len && '\0' != src[i]; i++)
        dest[i] = src[i];
    dest[i] = '\0';
}
/* strnlen is POSIX, not C99: counted here so strict programs compile */
static inline size_t pmix_pg_bounded_len(const char *src, size_t max)
{
    size_t n = 0;
    while (NULL != src && n < max && '\0' != src[n])
        n++;
    return n;
}
static inline size_t pmix_keylen(const char *src)
{
    return pmix_pg_bounded_len(src, PMIX_MAX_KEYLEN);
}
static inline size_t pmix_nslen(const char *src)
{
    return pmix_pg_bounded_len(src, PMIX_MAX_NSLEN);
}

static inline int pmix_argv_count(char **argv) { return PMIx_Argv_count(argv); }
static inline void pmix_argv_free(char **argv) { PMIx_Argv_free(argv); }
static inline char **pmix_argv_split(const char *src, int delimiter)
{
    return PMIx_Argv_split(src, delimiter);
}
/* like pmix_argv_split, but "a,,b" gives an empty middle entry */
static inline char **pmix_argv_split_with_empty(const char *src, int delimiter)
{
    char **argv = NULL;
    const char *p = src;
    while (NULL != p) {
        const char *end = strchr(p, delimiter);
        size_t len = (NULL == end) ? strlen(p) : (size_t)(end - p);
        char *item = (char *)malloc(len + 1);
        if (NULL == item || PMIX_SUCCESS != (memcpy(item, p, len), item[len] = '\0',
                                             PMIx_Argv_append_nosize(&argv, item))) {
            free(item);
            PMIx_Argv_free(argv);
            return NULL;
        }
        free(item);
        p = (NULL == end) ? NULL : end + 1;
    }
    return argv;
}
static inline char *pmix_argv_join(char **argv, int delimiter)
{
    return PMIx_Argv_join(argv, delimiter);
}
static inline char **pmix_argv_copy(char **argv) { return PMIx_Argv_copy(argv); }
static inline pmix_status_t pmix_argv_append_nosize(char ***argv, const char *arg)
{
    return PMIx_Argv_append_nosize(argv, arg);
}
static inline pmix_status_t pmix_argv_prepend_nosize(char ***argv, const char *arg)
{
    return PMIx_Argv_prepend_nosize(argv, arg);
}
static inline pmix_status_t pmix_argv_append_unique_nosize(char ***argv, const char *arg)
{
    return PMIx_Argv_append_unique_nosize(argv, arg);
}
static inline pmix_status_t pmix_setenv(const char *name, const char *value, bool overwrite,
                                        char ***env)
{
    return PMIx_Setenv(name, value, overwrite, env);
}
static inline pmix_boolean_t pmix_check_true(const pmix_value_t *value)
{
    return PMIx_Value_true(value);
}
/* the stats helpers destruct n records; the FREE macros free the array */
static inline void pmix_proc_stats_free(pmix_proc_stats_t *ps, size_t n)
{
    for (size_t i = 0; NULL != ps && i < n; i++)
        PMIX_PROC_STATS_DESTRUCT(&ps[i]);
}
static inline void pmix_disk_stats_free(pmix_disk_stats_t *d, size_t n)
{
    for (size_t i = 0; NULL != d && i < n; i++)
        PMIX_DISK_STATS_DESTRUCT(&d[i]);
}
static inline void pmix_net_stats_free(pmix_net_stats_t *ns, size_t n)
{
    for (size_t i = 0; NULL != ns && i < n; i++)
        PMIX_NET_STATS_DESTRUCT(&ns[i]);
}
static inline void pmix_node_stats_free(pmix_node_stats_t *nd, size_t n)
{
    for (size_t i = 0; NULL != nd && i < n; i++)
        PMIX_NODE_STATS_DESTRUCT(&nd[i]);
}
static inline void pmix_app_free(pmix_app_t *ap, size_t n) { PMIx_App_free(ap, n); }
static inline void pmix_pdata_free(pmix_pdata_t *pd, size_t n) { PMIx_Pdata_free(pd, n); }

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIx_COMMON_H */
