/*
 * pg_job_engine: the glue between a launched job and the store engine
 * (engine/pg_engine.h), kept in one place so engine API changes touch
 * one file: it creates the engine, registers the job's layout (size, node,
 * local ranks, appnums, cpusets, PMI_process_mapping), forwards process
 * life-cycle events, and keeps one libevent timer armed at the engine's next
 * deadline.
 *
 * Over several nodes (`pmigate proxy`) the engine's fence hook stops here:
 * a fence among this node's ranks completes at once; any other goes to the
 * one cross-node hook (pg_job_engine_xfence_fn) of the job it belongs to
 * -- a spawned job's whole-job fence to that job's -- with what the hook
 * needs already decided (pg_job_engine_xfence_t: the whole job's or a
 * subset, this node's part), and comes back through
 * pg_job_engine_xfence_done(), which merges the other nodes' parts and,
 * after a whole-job fence, writes the key segment before the ranks hear.
 *
 * Ownership: pg_job_engine_t owns the engine and the timer; layout arrays
 * are borrowed during pg_job_engine_new() only (the engine copies them).
 */
#ifndef PG_JOB_ENGINE_H
#define PG_JOB_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct pg_proc;
struct pg_host_ops;
typedef struct pg_kv pg_kv_t;
typedef struct pg_engine pg_engine_t;
typedef struct pg_job_engine pg_job_engine_t;

/* A fence whose members are on several nodes (`pmigate proxy`), as the
 * glue hands it to the job's one cross-node hook, every question the
 * hook would ask of the engine's fence already answered here: whose fence
 * it is, whether it is the whole job's, and this node's part of it.  Every
 * local member joined.  Borrowed for the call. */
typedef struct pg_job_engine_xfence {
    pg_job_engine_t *je;       /* the job whose fence it is (a spawned job's
                                  own, for its whole-job fences) */
    uint64_t id;               /* pass back to pg_job_engine_xfence_done(je, id, ...) */
    uint64_t seq;              /* the engine's per-signature count (pg_engine.h):
                                  every member node numbers the fence alike */
    const struct pg_proc *participants; /* the engine's sorted signature */
    size_t nparticipants;
    /* every rank of je's job (its namespace, rank WILDCARD) -- decided by
     * the glue alone; false: a subset, maybe with ranks of other jobs */
    bool whole_job;
    bool collect;              /* PMIX_COLLECT_DATA */
    /* this node's contribution: its members' keys new since their last
     * whole-job fence, as a modex blob, when the fence collects; else
     * NULL, 0 */
    const void *part;
    size_t part_size;
} pg_job_engine_xfence_t;

/* The cross-node part of a fence: complete it, later or inline, with
 * pg_job_engine_xfence_done(). */
typedef void (*pg_job_engine_xfence_fn)(void *ctx, const pg_job_engine_xfence_t *x);

/* A fence of the job can never complete: ranks[0..n) of it are gone
 * without joining (engine: fence_doomed).  Its joiners get an error
 * right after the call. */
typedef void (*pg_job_engine_doomed_fn)(void *ctx, const int *ranks, size_t n);

typedef struct pg_job_engine_layout {
    const char *nspace;
    int size;
    const char *hostname;       /* the one node (when nnodes <= 1) */
    /* several nodes (`pmigate proxy`); 0: one node, every rank on it */
    int nnodes;
    int nodeid;                 /* the node this gateway serves */
    const char *const *hostnames; /* [nnodes] */
    const uint32_t *rank_node;  /* [size] */
    pg_job_engine_xfence_fn xfence; /* required with nnodes > 1 */
    void *xfence_ctx;
    /* the name service and events across nodes: the name hooks (publish,
     * unpublish, lookup, lookup_cancel, names_drop: every one) and the
     * event hook are used, called with name_ctx, and the group hooks
     * (group, group_left, group_invite, group_cancel) when group is set,
     * fence_cancel when set (fences over ranks of several nodes then keep
     * their PMIX_TIMEOUT); they answer through
     * pg_job_engine_get()'s engine.  NULL: node-local names, events and
     * groups */
    const struct pg_host_ops *name_ops;
    void *name_ctx;
    /* direct modex across nodes: only the dmodex and dmodex_cancel hooks
     * are used, called with data_ctx; NULL: a get of another node's key
     * before a fence brought it is PMIX_ERR_NOT_FOUND */
    const struct pg_host_ops *data_ops;
    void *data_ctx;
    pg_job_engine_doomed_fn doomed; /* NULL: not told */
    void *doomed_ctx;
    const uint32_t *appnum;     /* [size] */
    const char *const *cpuset;  /* [size] hwloc list strings */
    const char *mapping;        /* PMI_process_mapping */
    bool spawned;               /* a job a rank spawned (PMIX_SPAWNED) */
    /* its ranks are held in init for a debugger (PMIX_DEBUG_STOP_IN_INIT):
     * rank stop_rank, or every rank (PMIX_RANK_WILDCARD) */
    bool stop_in_init;
    uint32_t stop_rank;
    /* spawned: the process that asked (PMIX_PARENT_ID); nspace NULL: none */
    const char *parent_nspace;
    int parent_rank;
} pg_job_engine_layout_t;

/* Returns NULL with *why set to a static message on failure. */
pg_job_engine_t *pg_job_engine_new(struct event_base *base, const pg_job_engine_layout_t *l,
                                   const char **why);
/* A spawned job: one more namespace in `host`'s engine (no key segment:
 * its gets use the socket).  Over several nodes (l->nnodes > 1, `host`'s
 * job too) its whole-job fences go to l->xfence, as the root's go to its
 * own.  Freeing it deregisters the namespace only; free it before `host`. */
pg_job_engine_t *pg_job_engine_attach(struct event_base *base, pg_job_engine_t *host,
                                      const pg_job_engine_layout_t *l, const char **why);
/* Stores a spawned job's preput keys (as its rank 0's, committed), so its
 * ranks read them before their first fence.  0, or -1 with *why. */
int pg_job_engine_preput(pg_job_engine_t *je, const pg_kv_t *preput, int npreput,
                         const char **why);
/* Deregisters the job (every held request completes first) and frees. */
void pg_job_engine_free(pg_job_engine_t *je);

pg_engine_t *pg_job_engine_get(const pg_job_engine_t *je);

/* The job's shared key segment (PMIGATE_SHM for the ranks), or NULL when
 * there is none.  Valid until pg_job_engine_free(). */
const char *pg_job_engine_shm_path(const pg_job_engine_t *je);

/* A process of the job reads the segment (its library said so): from the
 * next whole-job fence on, the segment is written.  Until some process
 * does, none is: a job whose libraries never look at it (MPICH's built-in
 * PMI-1, Slurm's libpmi2) does not pay for it in every fence. */
void pg_job_engine_segment_reader(pg_job_engine_t *je);

/* The rank was started as process `pid` running `executable` (the
 * process table of PMIx_Query_info). */
void pg_job_engine_started(pg_job_engine_t *je, int rank, int pid, const char *executable);
/* The rank's process was reaped with `exit_code` (the process table's
 * state and exit code). */
void pg_job_engine_exited(pg_job_engine_t *je, int rank, int exit_code);
void pg_job_engine_connected(pg_job_engine_t *je, int rank);
void pg_job_engine_finalized(pg_job_engine_t *je, int rank);
void pg_job_engine_lost(pg_job_engine_t *je, int rank);
/* The rank ended without ever connecting: it will post nothing, and the
 * fences it is a member of fail (the layout's `doomed` says which). */
void pg_job_engine_gone(pg_job_engine_t *je, int rank);

/* How a job ended, for PMIX_EVENT_JOB_END. */
typedef struct pg_job_engine_end {
    const char *notify_nspace; /* whose processes hear of it (the spawner's job) */
    int status;                /* the job's exit status: its first failure's code, or 0 */
    int failed_rank;           /* the first rank that failed, -1: none */
    int failed_code;           /* its exit code */
    /* over several nodes: each node tells its own processes of
     * notify_nspace, ranks [first_rank, first_rank + nranks); nranks 0:
     * every process (one node) */
    int first_rank, nranks;
} pg_job_engine_end_t;

/* The job is over (every rank reaped): raises PMIX_EVENT_JOB_END to the
 * subscribed processes of end->notify_nspace, source and affected process
 * the job (rank WILDCARD), with PMIX_JOB_TERM_STATUS, PMIX_NSPACE,
 * PMIX_EVENT_TIMESTAMP and, after a failure, the first failed process
 * (PMIX_PROCID) and its PMIX_EXIT_CODE.  Returns the processes reached. */
size_t pg_job_engine_job_end(pg_job_engine_t *je, const pg_job_engine_end_t *end);

/* A watch of `rank` ran out (pg_monitor): raises event `code` (a PMIx
 * status) in PMIx data range `range` from the rank (source and affected
 * process), with PMIX_MONITOR_ID `id` and PMIX_MONITOR_FILE `path` when
 * given (NULL: not).  Raised by the host for the rank, so the rank itself
 * hears it; PMIX_RANGE_PROC_LOCAL is the rank alone, PMIX_RANGE_LOCAL every
 * job of this node, PMIX_RANGE_RM nobody.  Returns the processes reached
 * on this node. */
size_t pg_job_engine_alert(pg_job_engine_t *je, int rank, int code, int range, const char *id,
                           const char *path);

/* Completes cross-node fence `id`: ok = 0 ingests the other nodes' blobs
 * (blobs[i] for node i; this node's own entry is skipped, NULL entries are
 * empty), writes the node's key segment after a whole-job fence, then
 * answers the local ranks; ok = -1 fails the fence for them;
 * ok = PG_JOB_XFENCE_TIMED_OUT answers them PMIX_ERR_TIMEOUT, the
 * instance settled as timed out on every node (the next fence over the
 * same ranks takes the same number, pg_fence_host_done). */
#define PG_JOB_XFENCE_TIMED_OUT 1
void pg_job_engine_xfence_done(pg_job_engine_t *je, uint64_t id, int ok, void *const *blobs,
                               const size_t *lens);

/* Another node's fence of this job (a spawned job over several nodes,
 * whose ranks here, if any, are already answered): its blobs, as
 * pg_job_engine_xfence_done's, go into the engine, so gets of those keys
 * are answered here too.  0, or -1 for a blob that does not unpack. */
int pg_job_engine_ingest(pg_job_engine_t *je, void *const *blobs, const size_t *lens);

/* Where the last pg_job_engine_xfence_done's time went (ns): merging the
 * other nodes' keys into the engine, writing the key segment.  For the
 * proxy's timing line (PMIGATE_PROXY_TIMES). */
void pg_job_engine_xfence_times(const pg_job_engine_t *je, uint64_t *ingest_ns,
                                uint64_t *segment_ns);

/* Arms the timer at the engine's next deadline (or disarms it). */
void pg_job_engine_touch(pg_job_engine_t *je);

#endif
