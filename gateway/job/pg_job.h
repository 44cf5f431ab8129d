/*
 * pg_job: one job -- one namespace -- of an invocation of pmigate
 * (pg_run.h): the job `pmigate run` starts (the root, job 0) or one that
 * its ranks spawned (jobs 1, 2, ...).  A job owns its ranks: their
 * processes, their PMI connections (it is the connections' owner,
 * pg_conn_owner_ops_t in pg_conn.h) and output forwarders, how each rank's
 * exit is judged, and, for a spawned job, the bookkeeping of its launch and
 * of its end (PMIX_EVENT_JOB_END to the spawner's job).
 *
 * What all jobs of the invocation share -- the loop, pmigate's output
 * sinks, the verdict (one exit status), the process group, the engine, the
 * teardown -- is the run's, which a job reaches through the context the run
 * gives it (pg_job_ctx.h), never by a call up; starting the ranks is
 * pg_launch.h's; PMI_PORT connections that have not yet named their rank
 * are pg_port.h's.
 *
 * Ownership: a job borrows its run's context and (root) its opts; it owns
 * the rest it creates, a spawned job its opts and working directories too.
 */
#ifndef PG_JOB_H
#define PG_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gateway/util/pg_cli.h"
#include "gateway/io/pg_conn.h"
#include "gateway/job/pg_job_engine.h"
#include "gateway/util/pg_status.h"
#include "server/pg_handler.h"

typedef struct pg_job pg_job_t;
typedef struct pg_run pg_run_t;
typedef struct pg_port pg_port_t;

/* ---- one node of a job that spans several (`pmigate proxy`) ---- */

typedef struct pg_job_node {
    int nnodes;
    int nodeid;                     /* the node this gateway runs */
    const int *counts;              /* [nnodes] ranks per node; global ranks are
                                       numbered node after node */
    const char *const *hostnames;   /* [nnodes] */
    const char *kvsname;            /* the job's namespace, equal on every node */
    char *const *base_env;          /* the ranks' environment starts from this
                                       (NULL: pmigate's own) */
    pg_job_engine_xfence_fn xfence; /* the cross-node part of fences */
    void *xfence_ctx;
    const struct pg_host_ops *name_ops; /* names across nodes, NULL: node-local */
    void *name_ctx;
    const struct pg_host_ops *data_ops; /* direct modex across nodes, NULL: none */
    void *data_ctx;
    pg_verdict_watch_fn failed;     /* the node's first failure (NULL: none) */
    void *failed_ctx;
    /* dynamic jobs across nodes (gateway/proxy/pg_proxy_spawn.c), called with
     * dyn_ctx: a spawn from one of the job's ranks goes to the job's hub
     * (NULL: refused), on_nodes [nnodes] saying which nodes may run its
     * processes (NULL: any; pg_spawn.c has checked the request, its
     * programs and its info keys here); a spawned job's ranks on this node are all gone
     * (its first failed rank and exit code, -1 and 0: none failed) */
    void (*spawn)(void *ctx, pg_job_t *parent, int rank, const pg_spawn_req_t *req,
                  const unsigned char *on_nodes, pg_spawn_done_fn done, void *cbdata);
    void (*ended)(void *ctx, pg_job_t *job, int failed_rank, int failed_code);
    /* this node's ranks are all gone (its jobs' too): may its run end now?
     * false: not yet -- the host calls pg_run_maybe_done() once it may (the
     * hub may have placed children here that are on their way); not asked
     * while the run is torn down (NULL: always) */
    bool (*may_end)(void *ctx);
    void *dyn_ctx;
} pg_job_node_t;

/* ---- the root job, made and driven by its run (pg_run.c) ---- */

/* The root job of ctx's run: opts->nprocs ranks, nothing started yet.
 * ctx (pg_job_ctx.h), opts and handlers are borrowed.  NULL when out of
 * memory. */
struct pg_job_ctx;
pg_job_t *pg_job_new(const struct pg_job_ctx *ctx, const pg_run_opts_t *opts,
                     const pg_handler_table_t *handlers);
/* Frees the job, its ranks and their connections (a spawned job's launch
 * still under way tells its spawner it failed).  Free a run's jobs last
 * first: a spawned job's spawner is an earlier one. */
void pg_job_free(pg_job_t *job);

/* The root job spans several nodes: this gateway starts and serves
 * node->nodeid's ranks only.  node and its arrays are borrowed.  0, or -1
 * with a message printed when the counts do not add up to the job's size. */
int pg_job_set_node(pg_job_t *job, const pg_job_node_t *node);
/* The root job as the engine registers it (pg_job_engine_new); *rank_node
 * is malloc'd for a job over several nodes (free it after the call), NULL
 * otherwise.  0, or -1 when out of memory. */
int pg_job_layout(const pg_job_t *job, pg_job_engine_layout_t *l, uint32_t **rank_node);
/* The root job's namespace is the run's engine, `je` (borrowed). */
void pg_job_set_engine(pg_job_t *job, pg_job_engine_t *je);
/* The root job's PMI_PORT connections are admitted by `port` (borrowed). */
void pg_job_set_port(pg_job_t *job, pg_port_t *port);

/* ---- what the run asks of each of its jobs ---- */

/* Child `pid` ended: when it is one of the job's ranks, its exit is
 * judged (pg_status.h) and 1 returned; else 0. */
int pg_job_reap(pg_job_t *job, pid_t pid, int wstatus);
/* `signo` to every rank of the job still running. */
void pg_job_signal(pg_job_t *job, int signo);
/* Is a PMIx process of the job, rank `except` aside (-1: none), still
 * there to hear events (connected, not finalized, not reaped)? */
int pg_job_has_listeners(const pg_job_t *job, int except);
/* Ranks forked and not yet reaped. */
int pg_job_nlive(const pg_job_t *job);
/* Is the job's launch still under way? */
int pg_job_launching(const pg_job_t *job);
/* Has its launch ended with every rank (this node's) started?  0 before
 * it began, while it runs, when it stopped short, or for a job taken back. */
int pg_job_launched(const pg_job_t *job);
/* Was the job taken back (a child that could not start: its ranks were
 * killed, their exits decide nothing)? */
int pg_job_discarded(const pg_job_t *job);
/* The ranks are gone: their output forwarders write what they hold. */
void pg_job_outputs_finish(pg_job_t *job);
/* Is every rank's output written (or given up)? */
int pg_job_outputs_finished(const pg_job_t *job);
/* Bytes of the ranks' output that were never written. */
size_t pg_job_outputs_undelivered(const pg_job_t *job);
/* At the end of a job that otherwise succeeded: ranks that never spoke PMI
 * are said on stderr, and are its failure under --strict. */
void pg_job_judge_silent(pg_job_t *job);

/* ---- any job ---- */

/* A debugger released the job (PMIX_DEBUGGER_RELEASE): the ranks held in
 * their init (pg_conn_owner_ops_t.hold_init) take their requests again,
 * and none is held from now on.  Nothing for a job not held. */
void pg_job_release_init(pg_job_t *job);
/* Is the job waiting for a debugger's release? */
int pg_job_held(const pg_job_t *job);

/* The job's ranks on this node as `pmigate status` shows them (strings
 * borrowed from the job). */
struct pg_report_job;
void pg_job_report(const pg_job_t *job, struct pg_report_job *out);

/* What the job has of its run (pg_job_ctx.h): the run's own files read
 * the invocation's options and counts there (gateway/run/pg_spawn.c). */
const struct pg_job_ctx *pg_job_ctx(const pg_job_t *job);
const char *pg_job_kvsname(const pg_job_t *job);
/* 0: the root; 1, 2, ...: spawned, in order. */
int pg_job_jobno(const pg_job_t *job);
/* A spawned job's spawner's job, NULL for the root. */
const char *pg_job_parent(const pg_job_t *job);
/* The nodes the job spans (`pmigate proxy`), NULL: this node only. */
const pg_job_node_t *pg_job_node(const pg_job_t *job);
/* The job's namespace in the engine. */
pg_job_engine_t *pg_job_engine(const pg_job_t *job);
/* The job's options (a spawned job's: those of its spawn). */
const pg_run_opts_t *pg_job_opts(const pg_job_t *job);
int pg_job_size(const pg_job_t *job);
/* [size] each rank's pid, 0 until forked. */
const pid_t *pg_job_pids(const pg_job_t *job);
/* The program rank `rank` runs, as its segment names it (borrowed from the
 * job's options), or NULL for a rank out of range. */
const char *pg_job_rank_program(const pg_job_t *job, int rank);

/* A PMI connection on `fd` owned by the job, for `rank` (-1: a PMI_PORT
 * connection that has not said which rank it is), traced when the run is.
 * NULL when out of resources (fd is closed). */
pg_conn_t *pg_job_conn_new(pg_job_t *job, int fd, int rank);

/* A PMI abort from `rank` (or -1): prints "rank R aborted the job (code C): msg",
 * kills every rank, and makes pmigate exit with `code` (mod 256).  msg may be
 * NULL.  Safe to call more than once; the first failure wins.  The handler
 * has told the job's PMIx processes (PMIX_ERR_PROC_ABORTED): while any
 * listens, the SIGTERM comes 1 s later, so their handlers run. */
void pg_job_abort(pg_job_t *job, int rank, int code, const char *msg);

/* "pmigate: " + ("job N: " for a spawned job) + message + "\n" on
 * pmigate's stderr (pg_job_ctx_vlog). */
void pg_job_log(const pg_job_t *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- jobs that ranks spawn (gateway/run/pg_spawn.c) ----
 * A spawned job is a new namespace (kvs_<pid>_<n>) in the run's engine,
 * sharing the run's loop, output, process group and exit status: a failure
 * in any job ends them all, and pmigate ends when every job has. */

/* How a spawned job's launch ended: `failed` children could not start
 * (errcodes say which; the job was then taken back, the started ones
 * killed), or -1 with `why` when the gateway ended first. */
typedef void (*pg_job_launched_fn)(int failed, const char *why, void *arg);

/* Starts a job of opts->nprocs ranks for rank `parent_rank` of `parent`
 * (its PMIX_PARENT_ID), req's preput keys readable before they start (req
 * is read before this returns, not kept; when req->notify_end, the
 * parent's job gets a PMIX_EVENT_JOB_END once every rank is gone).  Takes
 * opts (the context's spawn_opts_free) and wdirs ([nsegments] malloc'd paths or NULL
 * entries, NULL) whatever happens.  The ranks start in batches, the loop
 * serving the running ranks between them; `launched` runs once every child
 * has exec'd or failed -- from the loop, or before this returns when one
 * batch held them all -- with errcodes[nprocs] (the caller's, kept until
 * then) holding 0 or each child's errno.  Returns 0 with *kvsname the new
 * job's name (valid while the gateway runs), or -1 with *why when nothing
 * was started (`launched` never runs). */
int pg_job_spawn(pg_job_t *parent, int parent_rank, pg_run_opts_t *opts, char **wdirs,
                 const pg_spawn_req_t *req, int *errcodes, const char **kvsname,
                 const char **why, pg_job_launched_fn launched, void *arg);

/* The same for this node's share of a job spawned over several nodes
 * (`pmigate proxy`, gateway/proxy/pg_proxy_spawn.c): the job is number `jobno`
 * of every node, named node->kvsname, its ranks spread as node->counts say
 * (node and its arrays borrowed until the job is freed); this node starts
 * node->counts[node->nodeid] of them (none is fine: the namespace is known
 * here all the same) and errcodes[size] gets theirs. */
int pg_job_spawn_share(pg_job_t *parent, int parent_rank, int jobno, const pg_job_node_t *node,
                       pg_run_opts_t *opts, char **wdirs, const pg_spawn_req_t *req,
                       int *errcodes, const char **why, pg_job_launched_fn launched, void *arg);

/* A spawned job is taken back: its ranks still running are killed and
 * their exits decide nothing (another node's share could not start). */
void pg_job_take_back(pg_job_t *job);

#endif
