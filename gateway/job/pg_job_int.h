/*
 * pg_job_int.h: the records of a job, shared by the files of the job's
 * room, each calling only the ones below it (top first): pg_job.c (its
 * ranks' exits and end, spawned jobs), pg_launch.c (starting its ranks),
 * pg_job_conn.c (what its ranks' PMI connections ask of it, watching
 * them), pg_port.c (PMI_PORT admission) and pg_job_ctx.c (the run's log
 * lines and ops).  Everyone else uses pg_job.h.
 */
#ifndef PG_JOB_INT_H
#define PG_JOB_INT_H

#include <sys/types.h>

#include "gateway/io/pg_conn.h"
#include "gateway/job/pg_env.h"
#include "gateway/job/pg_job.h"
#include "gateway/job/pg_job_ctx.h"
#include "gateway/util/pg_mapping.h"
#include "gateway/job/pg_monitor.h"
#include "gateway/io/pg_output.h"
#include "gateway/util/pg_place.h"
#include "gateway/util/pg_status.h"

typedef struct pg_rank {
    int rank;
    int appnum;          /* segment index */
    int local_rank;
    pid_t pid;           /* 0 until forked */
    int reaped;
    int connected;       /* a PMI connection of this rank opened */
    int finalized;
    int named_doomed;    /* said to doom a fence (it ended without speaking PMI) */
    pg_conn_t *fd_conn;  /* the PMI_FD socketpair end */
    pg_conn_t *pmi_conn; /* the connection that opened (fd_conn or a PMI_PORT one) */
    pg_output_t *out;
    pg_output_t *err;
    int exec_err;        /* errno of a failed exec (the child's report), 0 if none */
    struct event *lost_timer;
    char *lost_reason;   /* owned */
    struct pg_job *job;
} pg_rank_t;

struct pg_job {
    const pg_job_ctx_t *ctx; /* what it has of its run (borrowed) */
    struct event_base *base; /* the run's loop (ctx->base) */
    const pg_run_opts_t *opts;
    const pg_handler_table_t *handlers;
    pg_conn_owner_ops_t conn_ops;
    pg_peer_job_t peer_job;  /* what the handlers read of the job */
    uint32_t *appnum;        /* [size] each rank's segment, for the engine and peer_job */
    char kvsname[64];
    char mapping[PG_MAPPING_MAX + 1];
    int size;
    pg_rank_t *ranks;
    pid_t *pids;             /* [size] each rank's pid (0 until forked), for
                              * pg_proc_ancestor_among */
    int jobno;               /* 0: the root; 1, 2, ...: spawned, in order */
    /* pmigate proxy: this gateway runs ranks [first, first + nlocal) of a
     * job over several nodes (node == NULL: one node, every rank) */
    const pg_job_node_t *node;
    int first, nlocal;
    char **cpusets;          /* [size] "hwloc:<list>", owned (root job) */
    pg_env_t **seg_env;      /* [nsegments], owned */
    pg_place_t *place;       /* root job, owned */
    pg_job_engine_t *je;     /* the job's namespace in the run's engine */
    pg_job_engine_t *je_own; /* spawned: je, owned; root: NULL (je is the run's) */
    pg_port_t *port;         /* root: PMI_PORT admission (the run's); spawned: NULL */
    pg_verdict_t *v;         /* the run's (ctx->verdict): one exit status for every job */
    pg_monitor_t *monitor;   /* its ranks' watches (PMIx_Process_monitor, --heartbeat) */
    int nlive;               /* forked and not reaped */
    int launching;
    int next_launch;         /* the next rank to start */
    struct event *ev_launch; /* the next batch of ranks */
    /* spawned jobs (the run's spawn op): a new namespace in the run's
     * engine, sharing its loop, output sinks, process group and verdict */
    char parent_kvsname[64]; /* the job whose rank asked */
    int parent_rank;         /* the rank that asked (PMIX_PARENT_ID) */
    char **wdirs;            /* [nsegments] working directory or NULL, owned */
    pg_run_opts_t *own_opts; /* opts is this, owned (ctx's spawn_opts_free) */
    int discarded;           /* a child could not start, the job was taken
                              * back: its exits decide nothing */
    int trace_rank_base;     /* its rank 0's row in the trace (the sizes of
                              * the run's earlier jobs) */
    /* while its children start (pg_launch.c) */
    int *errcodes;           /* [size] the spawner's, until launched runs */
    pg_job_launched_fn launched; /* NULL once run */
    void *launched_arg;
    int notify_end;          /* its spawner asked for PMIX_EVENT_JOB_END */
    int end_silent_ok;       /* ...but not when it ends well */
    int failed_rank;         /* its first rank to fail (exit != 0 or gone
                              * before finalize), -1: none yet */
    int failed_code;         /* that rank's exit code */
    int told_ended;          /* over several nodes: its end here was told */
    /* held in init for a debugger (--stop-in-init, PMIx_Spawn's
     * PMIX_DEBUG_STOP_IN_INIT) until a PMIX_DEBUGGER_RELEASE: rank
     * stop_rank, or every rank (PMIX_RANK_WILDCARD); 0 once released */
    int stop_in_init;
    uint32_t stop_rank;
};

/* pg_job_conn.c: the job becomes its connections' owner (job->conn_ops)
 * and gets its ranks' watcher (job->monitor).  0, or -1 out of memory. */
int pg_job_conns_init(pg_job_t *job);
/* --heartbeat (the run's option): a rank just started is watched, its
 * output and its PMI messages counting as life (pg_job_conn.c).  0 or -1. */
int pg_job_watch_silence(pg_job_t *job, pg_rank_t *r);

#endif
