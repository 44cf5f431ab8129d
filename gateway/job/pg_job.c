/*
 * pg_job: one job of a run, its ranks, their exits and its end, and the
 * jobs its ranks spawn.  See pg_job.h; the exit-status rules themselves are
 * in pg_status.c, what the ranks' PMI connections ask of the job in
 * pg_job_conn.c, starting the ranks in pg_launch.c: the top of the job
 * room, it calls those and they never call it.  The run is reached through
 * the job's context (pg_job_ctx.h).
 *
 * Why the odd ordering in one place: when a rank is reaped, its PMI
 * connection is drained first, so an abort it wrote just before exiting
 * decides the exit code rather than the exit status of the abort itself.
 */
#include "gateway/job/pg_job.h"

#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "gateway/job/pg_job_ctx.h"
#include "gateway/job/pg_job_int.h"
#include "gateway/job/pg_launch.h"
#include "gateway/job/pg_job_tool.h"
#include "gateway/job/pg_port.h"
#include "gateway/tools/pg_report.h"
#include "gateway/io/pg_stdin.h"
#include "gateway/tools/pg_trace_rec.h"
#include "pmix_common.h"

enum {
    /* ranks named one line each when they never spoke PMI; the rest are
     * counted on one more line, so a big job of singletons stays readable */
    PG_JOB_SILENT_LOG_MAX = 4,
};

/* ---------------------------------------------------------------- */
/* small helpers                                                      */
/* ---------------------------------------------------------------- */

/* "exited with status 3" / "killed by signal 9 (Killed)" */
static void describe_wait(int wstatus, char *buf, size_t len)
{
    if (WIFSIGNALED(wstatus))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)));
    else
        snprintf(buf, len, "exited with status %d", pg_status_of_wait(wstatus));
}

/* The rank still to be reaped whose process is `pid`. */
static pg_rank_t *rank_of_pid(pg_job_t *job, pid_t pid)
{
    for (int i = 0; i < job->size; i++)
        if (job->ranks[i].pid == pid && !job->ranks[i].reaped)
            return &job->ranks[i];
    return NULL;
}

/* ---------------------------------------------------------------- */
/* what the run asks of the job                                       */
/* ---------------------------------------------------------------- */

void pg_job_signal(pg_job_t *job, int signo)
{
    /* ranks that left the run's process group (setsid) still get it */
    for (int i = 0; i < job->size; i++)
        if (job->ranks[i].pid > 0 && !job->ranks[i].reaped)
            (void)kill(job->ranks[i].pid, signo);
}

int pg_job_has_listeners(const pg_job_t *job, int except)
{
    for (int i = 0; i < job->size; i++) {
        const pg_rank_t *r = &job->ranks[i];

        if (r->rank != except && !r->reaped && !r->finalized && r->pmi_conn != NULL &&
            pg_conn_proto(r->pmi_conn) == PG_PROTO_PMIX)
            return 1;
    }
    return 0;
}

int pg_job_nlive(const pg_job_t *job)
{
    return job->nlive;
}

int pg_job_launching(const pg_job_t *job)
{
    return job->launching;
}

int pg_job_launched(const pg_job_t *job)
{
    /* next_launch is first + nlocal only once the last rank was started */
    return !job->launching && !job->discarded && job->nlocal > 0 &&
           job->next_launch == job->first + job->nlocal;
}

int pg_job_discarded(const pg_job_t *job)
{
    return job->discarded;
}

int pg_job_outputs_finished(const pg_job_t *job)
{
    for (int i = 0; i < job->size; i++)
        if ((job->ranks[i].out != NULL && !pg_output_finished(job->ranks[i].out)) ||
            (job->ranks[i].err != NULL && !pg_output_finished(job->ranks[i].err)))
            return 0;
    return 1;
}

void pg_job_outputs_finish(pg_job_t *job)
{
    for (int i = 0; i < job->size; i++) {
        if (job->ranks[i].out != NULL)
            pg_output_finish(job->ranks[i].out);
        if (job->ranks[i].err != NULL)
            pg_output_finish(job->ranks[i].err);
    }
}

size_t pg_job_outputs_undelivered(const pg_job_t *job)
{
    size_t lost = 0;

    for (int i = 0; i < job->size; i++) {
        if (job->ranks[i].out != NULL)
            lost += pg_output_undelivered(job->ranks[i].out);
        if (job->ranks[i].err != NULL)
            lost += pg_output_undelivered(job->ranks[i].err);
    }
    return lost;
}

/* Names the ranks that never spoke PMI while others did: one line each for
 * the first PG_JOB_SILENT_LOG_MAX, one line counting the rest. */
static void log_silent_ranks(pg_job_t *job, const char *level, int nsilent)
{
    int named = 0, end = job->first + job->nlocal; /* this node's ranks */

    for (int i = job->first; i < end && named < PG_JOB_SILENT_LOG_MAX; i++) {
        const pg_rank_t *r = &job->ranks[i];

        if (r->connected)
            continue;
        named++;
        pg_job_log(job,
                   "%s: rank %d (%s) exited without ever speaking PMI while other ranks did: "
                   "if it is an MPI program, it ran alone as rank 0 of 1 (built for another "
                   "launcher, or with a PMI library of its own?)",
                   level, r->rank, job->opts->segments[r->appnum].argv[0]);
    }
    if (nsilent > named)
        pg_job_log(job, "%s: and %d more rank%s exited without ever speaking PMI", level,
                   nsilent - named, nsilent - named == 1 ? "" : "s");
}

/* No silent singletons: at the end of a job that otherwise succeeded, a
 * rank that never spoke PMI while others did, or a job of several ranks in
 * which none did, is what an MPI binary built for another launcher looks
 * like (each rank runs alone, "rank 0 of 1", and exits 0).  Said on stderr;
 * --strict makes it the job's failure (PG_EXIT_SILENT).  A failed job is
 * not judged: its ranks may have been killed before they could speak, and
 * its own message says more.  Under pmigate proxy each node judges its own
 * ranks (a job of one rank per node still has size > 1). */
void pg_job_judge_silent(pg_job_t *job)
{
    const char *level = job->opts->strict ? "error" : "warning";
    int nspoke = 0, nsilent = 0, first_silent = -1;

    if (pg_verdict_failed(job->v))
        return;
    for (int i = job->first; i < job->first + job->nlocal; i++) { /* this node's */
        if (job->ranks[i].connected) {
            nspoke++;
        } else if (nsilent++ == 0) {
            first_silent = i;
        }
    }
    if (nsilent == 0 || job->size == 1)
        return;
    if (nspoke > 0)
        log_silent_ranks(job, level, nsilent);
    else
        pg_job_log(job,
                   "%s: none of the %d rank%s%s spoke PMI: if they are MPI programs, each "
                   "ran alone as rank 0 of 1 (built for another launcher, or with a PMI "
                   "library of its own?)%s",
                   level, job->nlocal, job->nlocal == 1 ? "" : "s",
                   job->node != NULL ? " of this node" : "",
                   job->opts->strict ? "" : "; --strict makes this an error");
    if (job->opts->strict)
        pg_verdict_silent(job->v, nspoke > 0 ? first_silent : -1);
}

static void on_doomed_teardown(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    pg_job_ctx_teardown(arg, SIGTERM);
}

/* A fence can never complete because members are gone (pg_job_engine.h):
 * the ranks that ended without ever speaking PMI are named, once each (a
 * rank lost otherwise was named when it was lost).  Their waiting peers
 * get an error; under --strict the job fails at once (PG_EXIT_SILENT),
 * right after those errors are out. */
static void job_fence_doomed(void *ctx, const int *ranks, size_t n)
{
    pg_job_t *job = ctx;
    int first = -1, named = 0;
    char list[512];
    size_t at = 0;

    list[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        pg_rank_t *r = ranks[i] >= 0 && ranks[i] < job->size ? &job->ranks[ranks[i]] : NULL;

        if (r == NULL || r->connected || r->named_doomed)
            continue;
        r->named_doomed = 1;
        if (first < 0)
            first = r->rank;
        if (named++ < PG_JOB_SILENT_LOG_MAX && at < sizeof(list))
            at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%d (%s)", at ? ", " : "",
                                   r->rank, job->opts->segments[r->appnum].argv[0]);
    }
    if (first < 0)
        return;
    pg_job_log(job,
               "%sa fence can never complete: rank%s %s%s exited without ever speaking PMI; "
               "the ranks waiting in it get an error",
               job->opts->strict ? "error: " : "", named == 1 ? "" : "s", list,
               named > PG_JOB_SILENT_LOG_MAX ? " and more" : "");
    if (job->opts->strict && pg_verdict_silent(job->v, first) &&
        event_base_once(job->base, -1, EV_TIMEOUT, on_doomed_teardown,
                            (void *)job->ctx, NULL) != 0)
        pg_job_ctx_teardown(job->ctx, SIGTERM);
}

/* ---------------------------------------------------------------- */
/* failures of one rank                                               */
/* ---------------------------------------------------------------- */

/* Judges a reaped rank's exit (see pg_status.h for the rules); `told`:
 * the job's PMIx processes were just sent an event about it. */
static void rank_judge_exit(pg_job_t *job, pg_rank_t *r, int wstatus, int told)
{
    int code = pg_status_of_wait(wstatus);
    int unfinished = r->connected && !r->finalized;
    char fate[128];

    describe_wait(wstatus, fate, sizeof(fate));
    if (job->discarded)
        return;
    if (job->ctx->tearing_down) {
        pg_verdict_rank_exit(job->v, r->rank, code);
        if (job->opts->verbose)
            pg_job_log(job, "rank %d %s", r->rank, fate);
        return;
    }
    if (code == 0 && !unfinished) {
        if (!r->connected) /* it will never speak: fences waiting for it fail */
            pg_job_engine_gone(job->je, r->rank);
        return;
    }
    if (unfinished)
        pg_verdict_rank_lost(job->v, r->rank, code);
    else
        pg_verdict_rank_exit(job->v, r->rank, code);
    pg_job_log(job, "rank %d %s%s", r->rank, fate, unfinished ? " before PMI finalize" : "");
    if (unfinished)
        pg_job_engine_lost(job->je, r->rank);
    if (unfinished || told)
        pg_job_ctx_teardown_told(job->ctx, job, r->rank);
    else
        pg_job_ctx_teardown(job->ctx, SIGTERM);
}

/* Reports a rank whose exec failed (the child's errno, left in memory it
 * shared with pmigate during vfork), once, when the rank is reaped. */
static void rank_report_exec_error(pg_job_t *job, pg_rank_t *r)
{
    const pg_segment_t *seg = &job->opts->segments[r->appnum];
    int err = r->exec_err;

    if (err == 0)
        return;
    r->exec_err = 0;
    if (pg_verdict_launch_failed(job->v, r->rank, err))
        pg_job_log(job, "cannot start rank %d (%s): %s", r->rank, seg->argv[0], strerror(err));
    pg_job_ctx_teardown(job->ctx, SIGTERM);
}

static void rank_close_conns(pg_rank_t *r)
{
    pg_conn_t *fd_conn = r->fd_conn, *pmi_conn = r->pmi_conn;

    r->fd_conn = r->pmi_conn = NULL;
    pg_conn_free(fd_conn);
    if (pmi_conn != fd_conn)
        pg_conn_free(pmi_conn);
}

/* A spawned job's end, told to its spawner's job when it asked
 * (PMIX_NOTIFY_COMPLETION): the job's status is its first failure's exit
 * code (PMIX_ERR_JOB_TERM_WO_SYNC for a rank gone before finalize with
 * status 0), else 0.  Raised when its last rank is reaped, before that
 * rank's exit is judged (a failure tears every job down). */
static int spawned_note_exit(pg_job_t *job)
{
    pg_job_engine_end_t end = { .notify_nspace = job->parent_kvsname, .failed_rank = -1 };
    size_t reached;

    if (job->jobno == 0 || job->discarded)
        return 0;
    if (job->nlive > 0 || job->launching) /* more ranks to come */
        return 0;
    if (job->node != NULL) { /* over several nodes: the hub knows when all ended */
        if (job->node->ended != NULL && !job->told_ended)
            job->node->ended(job->node->dyn_ctx, job, job->failed_rank, job->failed_code);
        job->told_ended = 1;
        return 0;
    }
    if (!job->notify_end)
        return 0;
    if (job->failed_rank >= 0) {
        end.status = job->failed_code != 0 ? job->failed_code : PMIX_ERR_JOB_TERM_WO_SYNC;
        end.failed_rank = job->failed_rank;
        end.failed_code = job->failed_code;
    } else if (job->end_silent_ok) {
        return 0;
    }
    job->notify_end = 0; /* once */
    reached = pg_job_engine_job_end(job->je, &end);
    if (reached == 0 && job->opts->verbose)
        pg_job_log(job, "job %s ended (status %d): no process of %s listens", job->kvsname,
                   end.status, job->parent_kvsname);
    return reached > 0;
}

/* The job's first failure (exit != 0, or gone before finalize with 0),
 * for the end it reports. */
static void note_failure(pg_job_t *job, const pg_rank_t *r, int wstatus)
{
    int code = pg_status_of_wait(wstatus);

    if (job->failed_rank < 0 && (code != 0 || (r->connected && !r->finalized))) {
        job->failed_rank = r->rank;
        job->failed_code = code;
    }
}

/* The attached tools hear of every job's end on this node, the root's too
 * (pg_job_tool.h), before its last rank's exit is judged (a failure tears
 * every job down, the tools' connections with them). */
static void tools_note_end(pg_job_t *job)
{
    if (job->discarded || job->nlive > 0 || job->launching)
        return;
    pg_job_tools_job_end(job->ctx->tools, job, job->failed_rank, job->failed_code);
}

static void rank_reaped(pg_job_t *job, pg_rank_t *r, int wstatus)
{
    int told;

    r->reaped = 1;
    job->nlive--;
    pg_monitor_forget(job->monitor, r->rank);
    if (r->lost_timer != NULL)
        event_del(r->lost_timer);
    rank_report_exec_error(job, r);
    if (r->pmi_conn != NULL)
        pg_conn_drain(r->pmi_conn); /* an abort sent just before exit comes first */
    if (r->out != NULL)
        pg_output_drain(r->out);
    if (r->err != NULL)
        pg_output_drain(r->err);
    if (r->rank == 0 && job->jobno == 0)
        pg_stdin_stop(job->ctx->stdin_fwd);
    pg_trace_recorder_exit(job->ctx->trace, job->trace_rank_base + r->rank, wstatus,
                           job->ctx->tearing_down);
    pg_job_engine_exited(job->je, r->rank, pg_status_of_wait(wstatus));
    note_failure(job, r, wstatus);
    tools_note_end(job);
    told = spawned_note_exit(job);
    rank_judge_exit(job, r, wstatus, told);
    rank_close_conns(r);
}

int pg_job_reap(pg_job_t *job, pid_t pid, int wstatus)
{
    pg_rank_t *r = rank_of_pid(job, pid);

    if (r == NULL)
        return 0;
    rank_reaped(job, r, wstatus);
    return 1;
}


/* ---------------------------------------------------------------- */
/* creation                                                           */
/* ---------------------------------------------------------------- */

/* The rank records and the layout arrays of job->opts's segments. */
static int job_alloc_ranks(pg_job_t *job)
{
    const pg_run_opts_t *opts = job->opts;
    int rank = 0;

    job->ranks = calloc((size_t)job->size, sizeof(*job->ranks));
    job->appnum = calloc((size_t)job->size, sizeof(*job->appnum));
    job->pids = calloc((size_t)job->size, sizeof(*job->pids));
    if (job->ranks == NULL || job->appnum == NULL || job->pids == NULL)
        return -1;
    for (int s = 0; s < opts->nsegments; s++) {
        for (int k = 0; k < opts->segments[s].nprocs; k++, rank++) {
            pg_rank_t *r = &job->ranks[rank];

            r->rank = rank;
            r->appnum = s;
            r->local_rank = rank;
            r->job = job;
            job->appnum[rank] = (uint32_t)s;
        }
    }
    /* the engine joins when the job is registered (pg_job_set_engine,
     * spawned_attach_engine) */
    job->peer_job = (pg_peer_job_t){ .kvsname = job->kvsname, .size = job->size,
                                     .universe_size = job->size, .appnum = job->appnum };
    return 0;
}

/* Job `jobno` of the run: kvs_<pmigate's pid>_<jobno>. */
static void job_name(pg_job_t *job, int jobno)
{
    job->jobno = jobno;
    snprintf(job->kvsname, sizeof(job->kvsname), "kvs_%d_%d", (int)job->ctx->pid, jobno);
}

/* A job of ctx's run with opts->nprocs ranks, nothing started; NULL when
 * out of memory. */
static pg_job_t *job_new(const pg_job_ctx_t *ctx, const pg_run_opts_t *opts,
                         const pg_handler_table_t *handlers)
{
    pg_job_t *job = calloc(1, sizeof(*job));

    if (job == NULL)
        return NULL;
    *job = (pg_job_t){
        .ctx = ctx, .base = ctx->base, .opts = opts, .handlers = handlers,
        .size = opts->nprocs, .nlocal = opts->nprocs, .v = ctx->verdict,
        .failed_rank = -1, .stop_in_init = opts->stop_in_init, .stop_rank = PMIX_RANK_WILDCARD,
    };
    if (pg_job_conns_init(job) != 0 || job_alloc_ranks(job) != 0) {
        pg_job_free(job);
        return NULL;
    }
    return job;
}

pg_job_t *pg_job_new(const pg_job_ctx_t *ctx, const pg_run_opts_t *opts,
                     const pg_handler_table_t *handlers)
{
    pg_job_t *job = job_new(ctx, opts, handlers);

    if (job != NULL)
        job_name(job, 0);
    return job;
}

int pg_job_set_node(pg_job_t *job, const pg_job_node_t *node)
{
    int total = 0, first = 0;

    for (int n = 0; n < node->nnodes; n++) {
        if (n < node->nodeid)
            first += node->counts[n];
        total += node->counts[n];
    }
    /* a spawned job's share may be empty: its namespace is known here all the same */
    if (node->nnodes < 1 || node->nodeid < 0 || node->nodeid >= node->nnodes ||
        total != job->size || node->counts[node->nodeid] < (job->jobno > 0 ? 0 : 1)) {
        pg_job_log(job, "node %d of %d: the nodes' rank counts do not make a job of %d ranks",
                   node->nodeid, node->nnodes, job->size);
        return -1;
    }
    job->node = node;
    job->first = first;
    job->nlocal = node->counts[node->nodeid];
    snprintf(job->kvsname, sizeof(job->kvsname), "%s", node->kvsname);
    for (int i = 0; i < job->size; i++)
        job->ranks[i].local_rank = i - first; /* meaningful for this node's ranks */
    return 0;
}

/* rank -> node for a job over several nodes: blocks, node after node. */
static uint32_t *node_of_ranks(const pg_job_node_t *node, int size)
{
    uint32_t *rank_node = calloc((size_t)size, sizeof(*rank_node));
    int rank = 0;

    for (int n = 0; rank_node != NULL && n < node->nnodes; n++)
        for (int k = 0; k < node->counts[n] && rank < size; k++)
            rank_node[rank++] = (uint32_t)n;
    return rank_node;
}

int pg_job_layout(const pg_job_t *job, pg_job_engine_layout_t *l, uint32_t **rank_node)
{
    *l = (pg_job_engine_layout_t){
        .nspace = job->kvsname, .size = job->size, .hostname = job->ctx->hostname,
        .appnum = job->appnum, .cpuset = (const char *const *)job->cpusets,
        .mapping = job->mapping, .doomed = job_fence_doomed, .doomed_ctx = (void *)job,
        .stop_in_init = job->stop_in_init != 0, .stop_rank = job->stop_rank,
    };
    *rank_node = NULL;
    if (job->node == NULL)
        return 0;
    if ((*rank_node = node_of_ranks(job->node, job->size)) == NULL)
        return -1;
    l->nnodes = job->node->nnodes;
    l->nodeid = job->node->nodeid;
    l->hostnames = job->node->hostnames;
    l->rank_node = *rank_node;
    l->xfence = job->node->xfence;
    l->xfence_ctx = job->node->xfence_ctx;
    l->name_ops = job->node->name_ops;
    l->name_ctx = job->node->name_ctx;
    l->data_ops = job->node->data_ops;
    l->data_ctx = job->node->data_ctx;
    return 0;
}

void pg_job_set_engine(pg_job_t *job, pg_job_engine_t *je)
{
    job->je = je;
    job->peer_job.engine = pg_job_engine_get(je);
}

void pg_job_set_port(pg_job_t *job, pg_port_t *port)
{
    job->port = port;
}

const pg_job_ctx_t *pg_job_ctx(const pg_job_t *job)
{
    return job->ctx;
}

const char *pg_job_kvsname(const pg_job_t *job)
{
    return job->kvsname;
}

int pg_job_jobno(const pg_job_t *job)
{
    return job->jobno;
}

const char *pg_job_parent(const pg_job_t *job)
{
    return job->jobno > 0 ? job->parent_kvsname : NULL;
}

const pg_job_node_t *pg_job_node(const pg_job_t *job)
{
    return job->node;
}

pg_job_engine_t *pg_job_engine(const pg_job_t *job)
{
    return job->je;
}

const pg_run_opts_t *pg_job_opts(const pg_job_t *job)
{
    return job->opts;
}

int pg_job_size(const pg_job_t *job)
{
    return job->size;
}

const pid_t *pg_job_pids(const pg_job_t *job)
{
    return job->pids;
}

const char *pg_job_rank_program(const pg_job_t *job, int rank)
{
    if (rank < 0 || rank >= job->size)
        return NULL;
    return job->opts->segments[job->ranks[rank].appnum].argv[0];
}

void pg_job_release_init(pg_job_t *job)
{
    if (!job->stop_in_init)
        return;
    job->stop_in_init = 0;
    pg_job_log(job, "released from init by a debugger");
    for (int i = job->first; i < job->first + job->nlocal; i++) {
        pg_rank_t *r = &job->ranks[i];

        pg_conn_release_hold(r->fd_conn);
        if (r->pmi_conn != r->fd_conn)
            pg_conn_release_hold(r->pmi_conn);
    }
}

int pg_job_held(const pg_job_t *job)
{
    return job->stop_in_init;
}

void pg_job_report(const pg_job_t *job, pg_report_job_t *out)
{
    *out = (pg_report_job_t){
        .jobno = job->jobno,
        .kvsname = job->kvsname,
        .size = job->size,
        .first = job->node != NULL ? job->first : 0,
        .nlocal = job->node != NULL ? job->nlocal : job->size,
        .parent_kvsname = job->jobno > 0 ? job->parent_kvsname : NULL,
        .parent_rank = job->parent_rank,
        .held_in_init = job->stop_in_init,
    };
    for (int i = 0; i < job->size; i++) {
        const pg_rank_t *r = &job->ranks[i];

        out->launched += r->pid != 0;
        /* a rank held in init has not passed it */
        out->initialised += r->connected && !(r->pmi_conn != NULL && pg_conn_held(r->pmi_conn));
        out->finalized += r->finalized;
        out->exited += r->reaped;
    }
}

/* ---------------------------------------------------------------- */
/* spawned jobs                                                       */
/* ---------------------------------------------------------------- */

/* The spawned job's namespace in the run's engine, its preput keys
 * committed (as rank 0's) before any child can read. */
static int spawned_attach_engine(pg_job_t *sub, const pg_kv_t *preput, int npreput,
                                 const char **why)
{
    int slots = sub->size;
    uint32_t *rank_node = NULL;
    pg_job_engine_layout_t layout = {
        .nspace = sub->kvsname, .size = sub->size, .hostname = sub->ctx->hostname,
        .appnum = sub->appnum, .mapping = sub->mapping, .spawned = true,
        .stop_in_init = sub->stop_in_init != 0, .stop_rank = sub->stop_rank,
        .parent_nspace = sub->parent_kvsname, .parent_rank = sub->parent_rank,
    };

    if (sub->node != NULL) { /* over several nodes: mapped, fenced as the root is */
        if ((rank_node = node_of_ranks(sub->node, sub->size)) == NULL)
            return -1;
        layout.nnodes = sub->node->nnodes;
        layout.nodeid = sub->node->nodeid;
        layout.hostnames = sub->node->hostnames;
        layout.rank_node = rank_node;
        layout.xfence = sub->node->xfence;
        layout.xfence_ctx = sub->node->xfence_ctx;
        pg_mapping_format(sub->node->counts, sub->node->nnodes, sub->size, sub->mapping,
                          sizeof(sub->mapping));
    } else {
        pg_mapping_format(&slots, 1, sub->size, sub->mapping, sizeof(sub->mapping));
    }
    sub->je_own = pg_job_engine_attach(sub->base, sub->ctx->engine, &layout, why);
    free(rank_node);
    if (sub->je_own == NULL)
        return -1;
    pg_job_set_engine(sub, sub->je_own);
    return pg_job_engine_preput(sub->je, preput, npreput, why);
}

/* Nothing of the job started: it stays in the run's list (freed with it)
 * but is taken back, and the spawner hears of it from pg_job_spawn. */
static void spawned_abandon(pg_job_t *sub)
{
    sub->discarded = 1;
    sub->launched = NULL;
    sub->errcodes = NULL;
}

/* A new job of `parent`'s run, for its ranks to start; it joins the run
 * (freed with it).  Takes opts and wdirs when it returns a job. */
static pg_job_t *spawned_new(pg_job_t *parent, pg_run_opts_t *opts, char **wdirs)
{
    const pg_job_ctx_t *ctx = parent->ctx;
    int trace_rank_base = ctx->ops->nranks(ctx->run), root_size = ctx->opts->nprocs;
    pg_job_t *sub = job_new(ctx, opts, parent->handlers);
    int jobno = sub != NULL ? ctx->ops->add_job(ctx->run, sub) : -1;

    if (jobno < 0) {
        pg_job_free(sub);
        return NULL;
    }
    job_name(sub, jobno);
    sub->own_opts = opts;
    sub->wdirs = wdirs;
    sub->trace_rank_base = trace_rank_base;
    snprintf(sub->parent_kvsname, sizeof(sub->parent_kvsname), "%s", parent->kvsname);
    sub->peer_job.parent_kvsname = sub->parent_kvsname;
    /* MPI_UNIVERSE_SIZE: at least the spawned world itself */
    sub->peer_job.universe_size = sub->size > root_size ? sub->size : root_size;
    return sub;
}

/* Where a spawned job goes: this node (node NULL: it numbers the job
 * itself), or its share of a job over several nodes. */
typedef struct spawn_at {
    int jobno;
    const pg_job_node_t *node;
} spawn_at_t;

static int spawn_job(pg_job_t *parent, int parent_rank, const spawn_at_t *at,
                     pg_run_opts_t *opts, char **wdirs, const pg_spawn_req_t *req, int *errcodes,
                     const char **kvsname, const char **why, pg_job_launched_fn launched,
                     void *arg)
{
    pg_job_t *sub;

    *why = "out of memory";
    if (parent->ctx->tearing_down) {
        *why = "the job is being torn down";
        goto refuse;
    }
    sub = spawned_new(parent, opts, wdirs);
    if (sub == NULL)
        goto refuse;
    /* from here on the job owns opts and wdirs */
    sub->parent_rank = parent_rank;
    if (kvsname != NULL)
        *kvsname = sub->kvsname;
    sub->errcodes = errcodes;
    sub->launched = launched;
    sub->launched_arg = arg;
    sub->notify_end = req->notify_end;
    sub->end_silent_ok = req->end_silent_ok;
    sub->stop_in_init = req->stop_in_init;
    sub->stop_rank = req->stop_rank;
    if (at->node != NULL) {
        sub->jobno = at->jobno; /* every node's number for it */
        if (pg_job_set_node(sub, at->node) != 0) {
            *why = "the nodes' counts do not make the spawned job";
            spawned_abandon(sub);
            return -1;
        }
    }
    if (pg_launch_prepare(sub) != 0 ||
        spawned_attach_engine(sub, req->preput, req->npreput, why) != 0) {
        spawned_abandon(sub);
        return -1;
    }
    pg_launch_start(sub);
    return 0;
refuse:
    for (int s = 0; wdirs != NULL && s < opts->nsegments; s++)
        free(wdirs[s]);
    free(wdirs);
    pg_job_ctx_spawn_opts_free(parent->ctx, opts);
    return -1;
}

int pg_job_spawn(pg_job_t *parent, int parent_rank, pg_run_opts_t *opts, char **wdirs,
                 const pg_spawn_req_t *req, int *errcodes, const char **kvsname,
                 const char **why, pg_job_launched_fn launched, void *arg)
{
    spawn_at_t here = { 0, NULL };

    if (parent->node != NULL) { /* the job's hub places it: pg_job_spawn_share */
        for (int s = 0; wdirs != NULL && s < opts->nsegments; s++)
            free(wdirs[s]);
        free(wdirs);
        pg_job_ctx_spawn_opts_free(parent->ctx, opts);
        *why = "a job over several nodes spawns through its hub";
        return -1;
    }
    return spawn_job(parent, parent_rank, &here, opts, wdirs, req, errcodes, kvsname, why,
                     launched, arg);
}

int pg_job_spawn_share(pg_job_t *parent, int parent_rank, int jobno, const pg_job_node_t *node,
                       pg_run_opts_t *opts, char **wdirs, const pg_spawn_req_t *req,
                       int *errcodes, const char **why, pg_job_launched_fn launched, void *arg)
{
    spawn_at_t there = { jobno, node };

    return spawn_job(parent, parent_rank, &there, opts, wdirs, req, errcodes, NULL, why, launched,
                     arg);
}

void pg_job_take_back(pg_job_t *job)
{
    if (job->jobno > 0)
        pg_launch_take_back(job);
}

/* ---------------------------------------------------------------- */
/* the end                                                            */
/* ---------------------------------------------------------------- */

static void rank_free(pg_rank_t *r)
{
    rank_close_conns(r);
    pg_output_free(r->out);
    pg_output_free(r->err);
    if (r->lost_timer != NULL)
        event_free(r->lost_timer);
    free(r->lost_reason);
}

/* A spawned job freed while its launch is still under way (the gateway is
 * ending): the spawner still hears, once, that it failed. */
static void launch_cancel(pg_job_t *job)
{
    pg_job_launched_fn launched = job->launched;

    job->launched = NULL;
    if (launched != NULL)
        launched(-1, "the job ended while its children were starting", job->launched_arg);
}

void pg_job_free(pg_job_t *job)
{
    if (job == NULL)
        return;
    for (int i = 0; job->ranks != NULL && i < job->size; i++)
        rank_free(&job->ranks[i]);
    launch_cancel(job);
    if (job->ev_launch != NULL)
        event_free(job->ev_launch);
    pg_monitor_free(job->monitor);
    /* after the connections: handlers drop their requests first */
    pg_job_engine_free(job->je_own);
    for (int s = 0; job->seg_env != NULL && s < job->opts->nsegments; s++)
        pg_env_free(job->seg_env[s]);
    free(job->seg_env);
    for (int s = 0; job->wdirs != NULL && s < job->opts->nsegments; s++)
        free(job->wdirs[s]);
    free(job->wdirs);
    for (int i = 0; job->cpusets != NULL && i < job->size; i++)
        free(job->cpusets[i]);
    free(job->cpusets);
    pg_place_free(job->place);
    free(job->pids);
    free(job->ranks);
    free(job->appnum);
    pg_job_ctx_spawn_opts_free(job->ctx, job->own_opts);
    free(job);
}
