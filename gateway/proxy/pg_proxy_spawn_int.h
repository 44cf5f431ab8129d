/*
 * pg_proxy_spawn_int: what the files of spawn across nodes share
 * (pg_proxy_spawn.c: requests, placing, shares, ends;
 * pg_proxy_spawn_fence.c: the spawned jobs' fences).  Not for anyone else.
 */
#ifndef PG_PROXY_SPAWN_INT_H
#define PG_PROXY_SPAWN_INT_H

#include "gateway/proxy/pg_proxy_int.h"

enum { ERRMSG_MAX = 400 };

/* A spawned job as this node knows it. */
typedef struct xjob {
    struct xjob *next;
    proxy_t *p;
    int jobno;
    char kvsname[64];
    int *counts;          /* [nnodes] its ranks per node */
    pg_job_node_t node;   /* its layout; its pg_job borrows it */
    pg_job_t *job;        /* this node's share, once made */
    pg_job_engine_t *je;  /* its namespace, once it fenced */
    uint64_t fence_id;    /* the fence this node waits for, 0: none */
    uint64_t fences;      /* completed: the next one is fences + 1 */
} xjob_t;

/* A spawn one of this node's ranks asked for, until node 0 answers. */
typedef struct pending {
    struct pending *next;
    uint32_t id;
    int nprocs;
    pg_spawn_done_fn done;
    void *cbdata;
} pending_t;

/* A spawn node 0 placed. */
typedef struct hjob {
    struct hjob *next;
    int jobno;
    char kvsname[64];
    uint32_t requester, reqid;
    int nprocs;
    int *counts;          /* [nnodes] */
    int *errcodes;        /* [nprocs] as the nodes reported */
    unsigned char *asked; /* [nnodes] sent START, no answer yet */
    unsigned char *ended; /* [nnodes] its ranks there are all gone */
    int nasked, started;
    bool settled, failed, exec_failed;
    char errmsg[ERRMSG_MAX];
    bool notify_end, silent_ok, end_told;
    int failed_rank, failed_code;
} hjob_t;

/* A spawned job's fence, at node 0, until every member node's part came. */
typedef struct gather {
    struct gather *next;
    int jobno;
    uint64_t seq;
    int nwait;
    unsigned char *got; /* [nnodes] */
    void **blobs;       /* [nnodes] owned copies */
    size_t *lens;
} gather_t;

struct proxy_spawn {
    proxy_t *p;
    bool run_over;         /* this node's ranks are all gone */
    /* this node's end, agreed with node 0 (pg_proxy_spawn_may_end) */
    uint32_t starts_seen;  /* STARTs handled */
    bool idle_told;        /* IDLE sent, with starts_seen == idle_told_at */
    uint32_t idle_told_at;
    bool retired;          /* node 0 places nothing more here: the run may end */
    uint32_t next_req;
    pending_t *pending;
    xjob_t *xjobs;
    /* node 0 */
    int cap;               /* --max-procs */
    int next_jobno, spawned;
    long pid0;             /* node 0's pid: the jobs' names, kvs_<pid0>_<n> */
    int *load;             /* [nnodes] the job's processes there, as placed */
    unsigned char *running; /* [nnodes] not retired: START goes there */
    uint32_t *starts_sent; /* [nnodes] STARTs sent there */
    hjob_t *hjobs;
    gather_t *gathers;
};

/* pg_proxy_spawn_fence.c, the lower file (calls go from pg_proxy_spawn.c
 * to it, never back): the spawned jobs by number; text through the run's
 * log, or stderr once the run is gone; a spawned job's cross-node fence
 * hook (pg_job_engine_xfence_fn, ctx its xjob_t); node 0's handlers
 * registered (0, or -1); node n's ranks are all gone (fences waiting for
 * them fail); every gather freed. */
xjob_t *pg_proxy_spawn_xjob_find(proxy_spawn_t *s, int jobno);
hjob_t *pg_proxy_spawn_hjob_find(proxy_spawn_t *s, int jobno);
void pg_proxy_spawn_log_node(const proxy_t *p, const char *fmt, const char *text);
void pg_proxy_spawn_xjob_fence(void *ctx, const pg_job_engine_xfence_t *f);
int pg_proxy_spawn_fence_setup(proxy_t *p);
void pg_proxy_spawn_fence_node_done(proxy_t *p, int n);
void pg_proxy_spawn_fence_free(proxy_t *p);

#endif
