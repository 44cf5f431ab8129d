/*
 * pg_job_ctx: what a job has of the run that holds it (gateway/run/pg_run.h).
 * The run fills one context and hands it to each of its jobs (borrowed: it
 * outlives them); a job reads the fields and calls the ops, and never calls
 * up into the run.  The run keeps the fields current (the process group
 * once the first rank forks, the trace recorder and the PMI_PORT socket
 * once they are open, the teardown once it starts).
 *
 * The ops are the run's decisions, installed by it as the proxy installs
 * its hooks (pg_job_node_t): every job of a run ends together (teardown),
 * the run ends once no job has a rank left (maybe_done), and a spawn
 * request is the run's policy (gateway/run/pg_spawn.h) before it is a job.
 */
#ifndef PG_JOB_CTX_H
#define PG_JOB_CTX_H

#include <stdarg.h>
#include <sys/types.h>

#include "gateway/io/pg_output.h"
#include "gateway/io/pg_stdin.h"
#include "gateway/job/pg_job.h"
#include "gateway/job/pg_job_engine.h"
#include "gateway/tools/pg_trace_rec.h"
#include "gateway/util/pg_cli.h"
#include "gateway/util/pg_status.h"
#include "server/pg_handler.h"

struct event_base;

/* Each op gets the context's `run` first. */
typedef struct pg_job_ctx_ops {
    /* Every rank of every job down: `signo` now, SIGKILL after a grace. */
    void (*teardown)(pg_run_t *run, int signo);
    /* A failure (of rank `rank` of `job`) the jobs' PMIx processes were
     * just told of: every job ends at once, the signal after the events'
     * grace (at once when nobody listens). */
    void (*teardown_told)(pg_run_t *run, const pg_job_t *job, int rank);
    /* A rank ended or a launch finished: the run ends when nothing is left. */
    void (*maybe_done)(pg_run_t *run);
    /* A rank was forked as `pid`: the group to put it in (the first rank
     * starts the ranks' process group). */
    pid_t (*adopt)(pg_run_t *run, pid_t pid);
    /* A spawned job joins the run (freed with it): its job number, or -1
     * when out of memory. */
    int (*add_job)(pg_run_t *run, pg_job_t *job);
    /* Ranks of the run's jobs so far (a new job's first row in the trace). */
    int (*nranks)(const pg_run_t *run);
    /* Processes spawned: +n accepted, -n that never started (--max-procs). */
    void (*spawned_add)(pg_run_t *run, int delta);
    /* A debugger released job `nspace` (NULL: every job) from init. */
    void (*release_init)(pg_run_t *run, const char *nspace);
    /* The seam's spawn from rank `rank` of `parent`: the run's policy
     * checks it and starts a job (pg_job_spawn), `done` answers. */
    void (*spawn)(pg_job_t *parent, int rank, const pg_spawn_req_t *req, pg_spawn_done_fn done,
                  void *cbdata);
    /* Frees the options a spawn built (a spawned job owns them); NULL is
     * ignored. */
    void (*spawn_opts_free)(pg_run_opts_t *opts);
} pg_job_ctx_ops_t;

typedef struct pg_job_ctx {
    pg_run_t *run;                /* the ops' first argument, opaque here */
    const pg_job_ctx_ops_t *ops;
    struct event_base *base;      /* the run's loop */
    const pg_run_opts_t *opts;    /* the invocation's (the root job's) */
    const char *hostname;
    pid_t pid;                    /* pmigate: the ranks' parent, the job names' number */
    pid_t pgid;                   /* the ranks' process group, 0 before the first */
    int tearing_down;             /* every job is ending: nothing new starts */
    pg_verdict_t *verdict;        /* one exit status for every job */
    pg_sink_t *out_sink;          /* pmigate's stdout and stderr */
    pg_sink_t *err_sink;
    pg_stdin_t *stdin_fwd;        /* pmigate's stdin to the root job's rank 0, or NULL */
    pg_trace_recorder_t *trace;   /* --trace's recorder, or NULL */
    const char *port_path;        /* the PMI_PORT socket, NULL before it is open */
    const char *job_dir;          /* the job directory, NULL before it exists */
    pg_job_engine_t *engine;      /* the root job's registration (spawned jobs attach) */
    struct pg_job_tools *tools;   /* the tools attached (pg_job_tool.h), NULL: none may */
    int spawned_total;            /* processes spawned so far: started, or accepted and
                                   * waiting for their batch, so the cap (--max-procs)
                                   * holds for spawns that overlap (spawned_add) */
} pg_job_ctx_t;

/* ---- pg_job_ctx.c: the run's log lines, and the ops as calls ---- */

/* "pmigate: " + ("job N: " when jobno > 0) + message + "\n" on pmigate's
 * stderr (stdout when `to_stdout`), after the ranks' queued lines and
 * never blocking (text a rank sent is escaped there, so it cannot forge a
 * line); ctx may be NULL (straight to stderr). */
void pg_job_ctx_vlog(const pg_job_ctx_t *ctx, int jobno, int to_stdout, const char *fmt,
                     va_list ap);
void pg_job_ctx_log(const pg_job_ctx_t *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void pg_job_ctx_teardown(const pg_job_ctx_t *ctx, int signo);
void pg_job_ctx_teardown_told(const pg_job_ctx_t *ctx, const pg_job_t *job, int rank);
void pg_job_ctx_maybe_done(const pg_job_ctx_t *ctx);
void pg_job_ctx_spawned_add(const pg_job_ctx_t *ctx, int delta);
void pg_job_ctx_release_init(const pg_job_ctx_t *ctx, const char *nspace);
void pg_job_ctx_spawn_opts_free(const pg_job_ctx_t *ctx, pg_run_opts_t *opts);

#endif
