/*
 * pg_job: one parallel job launched by `pmigate run` and everything the
 * gateway knows about it: its ranks and their processes, PMI connections and
 * output pipes, the verdict on how it ends, and its engine registration.
 *
 * One libevent loop thread owns all of it.  The job reaps children through a
 * libevent SIGCHLD event, forwards SIGINT/SIGTERM/SIGHUP to the ranks, and
 * tears the job down (SIGTERM to the job's process group, SIGKILL after a
 * short grace) on the first failure: a PMI abort, a rank dying or breaking
 * its PMI connection before finalize, a rank exiting non-zero while others
 * run, --timeout, a launch failure.  Whatever the ranks leave running is
 * killed at the end (pmigate is their subreaper, pg_proc.h), and a keeper
 * cleans up if pmigate is SIGKILLed (pg_keeper.h).
 *
 * PMI_PORT connections are the job's until they name a rank, which they may
 * do only from that rank's process tree, within a handshake timeout.
 *
 * Ownership: the job borrows opts and handlers (they must outlive it) and
 * owns everything else it creates.
 */
#ifndef PG_JOB_H
#define PG_JOB_H

#include <stdint.h>

#include "gateway/pg_cli.h"
#include "gateway/pg_job_engine.h"
#include "server/pg_handler.h"

struct event_base;
typedef struct pg_job pg_job_t;

/* Creates the job (nothing is launched yet).  Returns NULL with a message
 * already printed. */
pg_job_t *pg_job_new(struct event_base *base, const pg_run_opts_t *opts,
                     const pg_handler_table_t *handlers);
void pg_job_free(pg_job_t *job);

/* Loads the topology, opens the listener, registers the job with the engine
 * and launches every rank; then runs the loop until every rank has been
 * reaped.  Returns the exit status pmigate should exit with (pg_status.h). */
int pg_job_run(pg_job_t *job);

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
    pg_job_engine_xfence_fn xfence; /* the cross-node part of whole-job fences */
    void *xfence_ctx;
    const struct pg_host_ops *name_ops; /* names across nodes, NULL: node-local */
    void *name_ctx;
} pg_job_node_t;

/* Before pg_job_run: the job spans several nodes and this gateway starts
 * and serves node->nodeid's ranks only.  node and its arrays are borrowed
 * and must outlive the job.  Returns 0, or -1 with a message printed when
 * the counts do not add up to the job's size. */
int pg_job_set_node(pg_job_t *job, const pg_job_node_t *node);

/* After pg_job_run: 1 when the job ended because pmigate itself got a
 * signal (SIGTERM/SIGINT/SIGHUP: its host is tearing it down), else 0. */
int pg_job_ended_by_signal(const pg_job_t *job);

/* A PMI abort from `rank` (or -1): prints "rank R aborted the job (code C): msg",
 * kills every rank, and makes pmigate exit with `code` (mod 256).  msg may be
 * NULL.  Safe to call more than once; the first failure wins.  The handler
 * has told the job's PMIx processes (PMIX_ERR_PROC_ABORTED): while any
 * listens, the SIGTERM comes 1 s later, so their handlers run. */
void pg_job_abort(pg_job_t *job, int rank, int code, const char *msg);

/* ---- jobs that ranks spawn (gateway/pg_spawn.c) ----
 * A spawned job is a new namespace (kvs_<pid>_<n>) in the root job's engine,
 * sharing the root's loop, output, process group and exit status: a failure
 * in any job ends them all, and pmigate ends when every job has. */

/* The job `pmigate run` started (job itself when it is that one). */
pg_job_t *pg_job_root(pg_job_t *job);
const char *pg_job_kvsname(const pg_job_t *job);
const char *pg_job_hostname(const pg_job_t *job);
const pg_run_opts_t *pg_job_opts(const pg_job_t *job);
/* Is `prog` (searched in PATH unless it has a '/') there and executable?
 * 0 or an errno; checked before anything forks. */
int pg_job_program_check(const char *prog);
/* Processes the whole gateway has spawned so far (exited ones included,
 * and those of a spawn accepted but not yet started). */
int pg_job_spawned_total(const pg_job_t *job);

/* How a spawned job's launch ended: `failed` children could not start
 * (errcodes say which; the job was then taken back, the started ones
 * killed), or -1 with `why` when the gateway ended first. */
typedef void (*pg_job_launched_fn)(int failed, const char *why, void *arg);

/* Starts a job of opts->nprocs ranks for rank `parent_rank` of `parent`
 * (its PMIX_PARENT_ID), req's preput keys readable before they start (req
 * is read before this returns, not kept; when req->notify_end, the
 * parent's job gets a PMIX_EVENT_JOB_END once every rank is gone).  Takes
 * opts (pg_spawn_opts_free) and wdirs ([nsegments] malloc'd paths or NULL
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

/* Prints "pmigate: " + message + "\n" on stderr. */
void pg_job_log(const pg_job_t *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
