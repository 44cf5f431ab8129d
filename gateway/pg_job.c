/*
 * pg_job: launch and life cycle of one job.  See pg_job.h for the rules;
 * the exit-status rules themselves are in pg_status.c.
 *
 * Why the odd ordering in a few places:
 *  - when a rank is reaped, its PMI connection is drained first, so an
 *    abort it wrote just before exiting decides the exit code rather than
 *    the exit status of the abort itself;
 *  - when a connection breaks before finalize while the process still seems
 *    alive, the verdict waits PG_JOB_LOST_GRACE_MS for the process to be
 *    reaped, so the message can say how it died (the kernel closes a dying
 *    process's sockets before its parent can reap it).
 */
#include "gateway/pg_job.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gateway/pg_conn.h"
#include "gateway/pg_env.h"
#include "gateway/pg_job_engine.h"
#include "gateway/pg_keeper.h"
#include "gateway/pg_listen.h"
#include "gateway/pg_mapping.h"
#include "gateway/pg_output.h"
#include "gateway/pg_place.h"
#include "gateway/pg_proc.h"
#include "gateway/pg_spawn.h"
#include "gateway/pg_status.h"
#include "gateway/pg_stdin.h"
#include "gateway/pg_tmpdir.h"
#include "gateway/pg_env_pmix.h"
#include "gateway/pg_trace_rec.h"
#include "pmix_common.h"
#include "wire/pg_clock.h"

enum {
    PG_JOB_KILL_GRACE_MS = 300, /* SIGTERM -> SIGKILL */
    /* a rank's failure the job's PMIx processes were just told of (an
     * abort, a rank lost, a spawned job's end) -> SIGTERM: the time their
     * event handlers get to run (docs/user-guide.md, events) */
    PG_JOB_EVENT_GRACE_MS = 1000,
    PG_JOB_LOST_GRACE_MS = 100, /* broken connection -> verdict, see above */
    /* PMI_PORT connections that have not said which rank they are, beyond
     * one per rank: past that the oldest is dropped, so strangers neither
     * grow pmigate nor keep the job's own ranks out */
    PG_JOB_PORT_STRANGERS = 64,
    /* complaints about such connections shown before the rest are muted */
    PG_JOB_STRANGER_LOG_MAX = 8,
    /* A PMI_PORT connection must say which rank it is within this long
     * (PMIGATE_HELLO_TIMEOUT, seconds, overrides it): a silent one is
     * closed instead of holding one of the slots above for the whole job. */
    PG_JOB_HELLO_TIMEOUT_MS = 10000,
    /* Ranks started per turn of the event loop: the ranks already running
     * are served between batches instead of waiting for the last spawn. */
    PG_JOB_LAUNCH_BATCH = 16,
    /* Once the ranks are gone, output still queued is written while the
     * reader takes it; after --timeout or a signal it is given up when the
     * reader has taken nothing for this long (docs/user-guide.md). */
    PG_JOB_FLUSH_STALL_MS = 1000,
    PG_JOB_FLUSH_CHECK_MS = 10,
    /* ranks named one line each when they never spoke PMI; the rest are
     * counted on one more line, so a big job of singletons stays readable */
    PG_JOB_SILENT_LOG_MAX = 4,
};

/* A PMI_PORT connection that has not yet said which rank it is. */
typedef struct port_peer {
    pg_conn_t *conn;   /* owned by the job until identified */
    pid_t pid;         /* the process that connected (SO_PEERCRED), 0 unknown */
    int kin;           /* the rank whose process `pid` is or descends from,
                        * as of accept; -1: none (a stranger) */
    uint64_t deadline; /* pg_clock_now() by which it must have named its rank */
} port_peer_t;

typedef struct pg_rank {
    int rank;
    int appnum;        /* segment index */
    int local_rank;
    pid_t pid;         /* 0 until forked */
    int reaped;
    int connected;     /* a PMI connection of this rank opened */
    int finalized;
    pg_conn_t *fd_conn;  /* the PMI_FD socketpair end */
    pg_conn_t *pmi_conn; /* the connection that opened (fd_conn or a PMI_PORT one) */
    pg_output_t *out;
    pg_output_t *err;
    int exec_err;      /* errno of a failed exec (the child's report), 0 if none */
    struct event *lost_timer;
    char *lost_reason; /* owned */
    struct pg_job *job;
} pg_rank_t;

struct pg_job {
    struct event_base *base;
    const pg_run_opts_t *opts;
    const pg_handler_table_t *handlers;
    pg_conn_owner_ops_t conn_ops;
    pg_peer_job_t peer_job;  /* what the handlers read of the job */
    uint32_t *appnum;        /* [size] each rank's segment, for the engine and peer_job */
    char kvsname[64];
    char hostname[256];
    char mapping[PG_MAPPING_MAX + 1];
    int size;
    pg_rank_t *ranks;
    /* pmigate proxy: this gateway runs ranks [first, first + nlocal) of a
     * job over several nodes (node == NULL: one node, every rank) */
    const pg_job_node_t *node;
    int first, nlocal;
    char **cpusets;          /* [size] "hwloc:<list>", owned */
    pg_env_t **seg_env;      /* [nsegments], owned */
    pg_place_t *place;
    pg_listen_t *listen;
    pg_job_engine_t *je;
    pg_stdin_t *stdin_fwd;
    pg_sink_t *out_sink;     /* pmigate's stdout, non-blocking (pg_output.h) */
    pg_sink_t *err_sink;     /* pmigate's stderr (the same sink under 2>&1) */
    int flushing;            /* every rank is gone; queued output is being written */
    int hurry;               /* --timeout or a signal: the flush gives up when stalled */
    struct event *ev_flush;
    pg_trace_recorder_t *trace; /* --trace, else NULL */
    port_peer_t *port_conns; /* PMI_PORT connections not yet identified, oldest
                              * first, owned; once a rank's, the rank owns it
                              * (pmi_conn) */
    int nport_conns;
    pid_t *pids;             /* [size] each rank's pid (0 until forked), for
                              * pg_proc_ancestor_among */
    uint64_t hello_timeout_ns;
    struct event *ev_hello;  /* closes the oldest silent PMI_PORT connections */
    int port_dropped;        /* a stranger was dropped (told once) */
    int stranger_logs;       /* complaints about strangers shown so far */
    pid_t parent;
    pid_t pgid;
    pg_keeper_t *keeper;     /* cleans up if pmigate is SIGKILLed, or NULL */
    int nlive;               /* forked and not reaped */
    int launching;
    int next_launch;         /* the next rank to start */
    struct event *ev_launch; /* the next batch of ranks */
    int teardown;
    int done;
    pg_verdict_t verdict;
    pg_verdict_t *v;         /* the verdict that decides: the root job's, which
                              * every spawned job shares (one exit status) */
    /* jobs that ranks spawned (gateway/pg_spawn.c): the job `pmigate run`
     * started is the root (root NULL); a spawned job shares its loop, output
     * sinks, process group, engine and verdict */
    pg_job_t *root;
    pg_job_t **subs;         /* root: every spawned job, owned */
    int nsubs;
    int jobno;               /* 0: the root; 1, 2, ...: spawned, in order */
    char parent_kvsname[64]; /* spawned: the job whose rank asked */
    char **wdirs;            /* spawned: [nsegments] working directory or NULL, owned */
    pg_run_opts_t *own_opts; /* spawned: opts is this, owned (pg_spawn_opts_free) */
    int discarded;           /* spawned: a child could not start, the job was
                              * taken back: its exits decide nothing */
    int spawned_live;        /* root: spawned processes not yet reaped */
    int spawned_total;       /* root: spawned processes so far: started, or
                              * accepted and waiting for their batch (so the
                              * cap holds for spawns that overlap) */
    int trace_rank_base;     /* spawned: its rank 0's row in the trace (the
                              * root's size plus the earlier spawned jobs') */
    int parent_rank;         /* spawned: the rank that asked (PMIX_PARENT_ID) */
    /* spawned, while its children start (spawned_launch_batch) */
    int *errcodes;           /* [size] the spawner's, until launched runs */
    pg_job_launched_fn launched; /* NULL once run */
    void *launched_arg;
    int spawns_pending;      /* root: spawned jobs whose launch is not over */
    int notify_end;          /* spawned: its spawner asked for PMIX_EVENT_JOB_END */
    int end_silent_ok;       /* spawned: ...but not when it ends well */
    int failed_rank;         /* spawned: its first rank to fail (exit != 0 or
                              * gone before finalize), -1: none yet */
    int failed_code;         /* that rank's exit code */
    struct event *ev_chld, *ev_int, *ev_term, *ev_hup, *ev_timeout, *ev_kill;
    struct event *ev_event_grace; /* root: SIGTERM after PG_JOB_EVENT_GRACE_MS */
};

/* ---------------------------------------------------------------- */
/* small helpers                                                      */
/* ---------------------------------------------------------------- */

/* One "pmigate: [job N: ]..." line on `sink` (the job's stderr or stdout). */
static void job_log_on(const pg_job_t *job, pg_sink_t *sink, const char *fmt, va_list ap)
{
    char line[1024];
    int n;

    n = job != NULL && job->jobno > 0 ? snprintf(line, sizeof(line), "job %d: ", job->jobno) : 0;
    if (vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap) < 0)
        return;
    /* after the ranks' queued lines, never blocking; text a rank sent (an
     * abort message) is escaped there, so it cannot forge a line */
    pg_sink_log(sink, line);
}

void pg_job_log(const pg_job_t *job, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    job_log_on(job, job != NULL ? job->err_sink : NULL, fmt, ap);
    va_end(ap);
}

/* The same line on pmigate's stdout (PMIx_Log to PMIX_LOG_STDOUT). */
static void job_log_stdout(const pg_job_t *job, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void job_log_stdout(const pg_job_t *job, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    job_log_on(job, job->out_sink, fmt, ap);
    va_end(ap);
}

static struct timeval ms_to_tv(long ms)
{
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

    return tv;
}

/* "exited with status 3" / "killed by signal 9 (Killed)" */
static void describe_wait(int wstatus, char *buf, size_t len)
{
    if (WIFSIGNALED(wstatus))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)));
    else
        snprintf(buf, len, "exited with status %d", pg_status_of_wait(wstatus));
}

static pg_rank_t *rank_of_pid(pg_job_t *job, pid_t pid)
{
    for (int i = 0; i < job->size; i++)
        if (job->ranks[i].pid == pid)
            return &job->ranks[i];
    return NULL;
}

/* ---------------------------------------------------------------- */
/* teardown                                                           */
/* ---------------------------------------------------------------- */

static void signal_job(pg_job_t *job, int signo)
{
    if (job->pgid > 0)
        (void)kill(-job->pgid, signo);
    /* ranks that left the job's group (setsid) still get it */
    for (int i = 0; i < job->size; i++)
        if (job->ranks[i].pid > 0 && !job->ranks[i].reaped)
            (void)kill(job->ranks[i].pid, signo);
    for (int k = 0; k < job->nsubs; k++)
        signal_job(job->subs[k], signo);
}

static void on_kill_grace(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    signal_job(arg, SIGKILL);
}

/* The root job (every job with it) is ending: no new ranks, connections,
 * input or timeout.  0 the first time, -1 when it already was. */
static int job_teardown_begin(pg_job_t *root)
{
    if (root->teardown)
        return -1;
    root->teardown = 1;
    for (int k = 0; k < root->nsubs; k++)
        root->subs[k]->teardown = 1;
    pg_listen_stop(root->listen);
    pg_stdin_stop(root->stdin_fwd);
    if (root->ev_timeout != NULL)
        event_del(root->ev_timeout);
    return 0;
}

/* `signo` to every rank still running, SIGKILL after the grace period. */
static void job_teardown_signal(pg_job_t *root, int signo)
{
    struct timeval grace = ms_to_tv(PG_JOB_KILL_GRACE_MS);

    if (root->nlive + root->spawned_live == 0)
        return;
    if (root->opts->verbose)
        pg_job_log(root, "killing the job (%d rank%s still running)", root->nlive,
                   root->nlive == 1 ? "" : "s");
    signal_job(root, signo);
    evtimer_add(root->ev_kill, &grace);
}

/* Brings every rank down: `signo` now, SIGKILL after the grace period. */
static void job_teardown(pg_job_t *job, int signo)
{
    pg_job_t *root = pg_job_root(job); /* a failure in any job ends them all */

    if (job_teardown_begin(root) == 0)
        job_teardown_signal(root, signo);
}

static void on_event_grace(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    job_teardown_signal(arg, SIGTERM);
}

/* Is a PMIx process of `job` or its spawned jobs, `failed` aside, still
 * there to hear events (connected, not finalized, not reaped)? */
static int job_has_listeners(const pg_job_t *job, const pg_rank_t *failed)
{
    for (int i = 0; i < job->size; i++) {
        const pg_rank_t *r = &job->ranks[i];

        if (r != failed && !r->reaped && !r->finalized && r->pmi_conn != NULL &&
            pg_conn_proto(r->pmi_conn) == PG_PROTO_PMIX)
            return 1;
    }
    for (int k = 0; k < job->nsubs; k++)
        if (job_has_listeners(job->subs[k], failed))
            return 1;
    return 0;
}

/* A failure (of rank `failed`, NULL: none) that the job's PMIx processes
 * were just told of: the events wait on their connections, so the job
 * ends at once (no new ranks, later exits judged as the teardown's) but
 * SIGTERM comes PG_JOB_EVENT_GRACE_MS later, so their handlers run --
 * at once when nobody listens. */
static void job_teardown_told(pg_job_t *job, const pg_rank_t *failed)
{
    pg_job_t *root = pg_job_root(job);
    struct timeval grace = ms_to_tv(PG_JOB_EVENT_GRACE_MS);

    if (!job_has_listeners(root, failed)) {
        job_teardown(job, SIGTERM);
        return;
    }
    if (job_teardown_begin(root) == 0 && evtimer_add(root->ev_event_grace, &grace) != 0)
        job_teardown_signal(root, SIGTERM);
}

void pg_job_abort(pg_job_t *job, int rank, int code, const char *msg)
{
    if (pg_verdict_abort(job->v, rank, code)) {
        if (rank >= 0)
            pg_job_log(job, "rank %d aborted the job (code %d)%s%s", rank, code,
                       msg && *msg ? ": " : "", msg ? msg : "");
        else
            pg_job_log(job, "the job was aborted (code %d)%s%s", code, msg && *msg ? ": " : "",
                       msg ? msg : "");
    }
    /* the handler told the job's PMIx processes (server/pg_peer_abort.h) */
    job_teardown_told(job, rank >= 0 && rank < job->size ? &job->ranks[rank] : NULL);
}

/* ---------------------------------------------------------------- */
/* end of the job                                                     */
/* ---------------------------------------------------------------- */

/* Every rank's output is written (or given up, see on_flush_check). */
static int output_flushed(const pg_job_t *job)
{
    for (int i = 0; i < job->size; i++)
        if ((job->ranks[i].out != NULL && !pg_output_finished(job->ranks[i].out)) ||
            (job->ranks[i].err != NULL && !pg_output_finished(job->ranks[i].err)))
            return 0;
    for (int k = 0; k < job->nsubs; k++)
        if (!output_flushed(job->subs[k]))
            return 0;
    if (job->root != NULL)
        return 1;
    return pg_sink_queued(job->out_sink) == 0 && pg_sink_queued(job->err_sink) == 0;
}

static void flush_end(pg_job_t *job)
{
    job->flushing = 0;
    event_del(job->ev_flush);
    event_base_loopbreak(job->base);
}

/* While the ranks' last output is written: done, or stalled too long after
 * --timeout or a signal? */
static void on_flush_check(evutil_socket_t fd, short what, void *arg)
{
    pg_job_t *job = arg;
    uint64_t now = pg_clock_now(), stall = (uint64_t)PG_JOB_FLUSH_STALL_MS * 1000000u;

    (void)fd;
    (void)what;
    if (output_flushed(job) ||
        (job->hurry && (pg_sink_stalled_ns(job->out_sink, now) >= stall ||
                        pg_sink_stalled_ns(job->err_sink, now) >= stall)))
        flush_end(job);
}

static void outputs_finish(pg_job_t *job)
{
    for (int i = 0; i < job->size; i++) {
        if (job->ranks[i].out != NULL)
            pg_output_finish(job->ranks[i].out);
        if (job->ranks[i].err != NULL)
            pg_output_finish(job->ranks[i].err);
    }
    for (int k = 0; k < job->nsubs; k++)
        outputs_finish(job->subs[k]);
}

/* The ranks are gone: the loop goes on until their output is written, so a
 * reader that resumes late still gets every line. */
static void job_flush_output(pg_job_t *job)
{
    struct timeval every = ms_to_tv(PG_JOB_FLUSH_CHECK_MS);

    pg_listen_stop(job->listen);
    outputs_finish(job);
    job->flushing = 1;
    if (output_flushed(job) || event_add(job->ev_flush, &every) != 0)
        flush_end(job);
}

/* Output given up when the flush was cut short: said, and dropped. */
static void report_undelivered(pg_job_t *job)
{
    size_t lost = 0;

    for (int i = 0; i < job->size; i++) {
        if (job->ranks[i].out != NULL)
            lost += pg_output_undelivered(job->ranks[i].out);
        if (job->ranks[i].err != NULL)
            lost += pg_output_undelivered(job->ranks[i].err);
    }
    if (lost == 0)
        return;
    (void)pg_sink_discard(job->out_sink);
    (void)pg_sink_discard(job->err_sink);
    pg_job_log(job, "%zu bytes of the ranks' output were not delivered: nobody read them", lost);
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
static void judge_silent_ranks(pg_job_t *job)
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

static void job_maybe_done(pg_job_t *job)
{
    if (job->root != NULL) { /* spawned: the root ends once every job is gone */
        job_maybe_done(job->root);
        return;
    }
    if (job->done || job->launching || job->nlive > 0 || job->spawned_live > 0 ||
        job->spawns_pending > 0)
        return;
    job->done = 1;
    judge_silent_ranks(job);
    job_flush_output(job);
}

/* ---------------------------------------------------------------- */
/* failures of one rank                                               */
/* ---------------------------------------------------------------- */

static void rank_fail_lost(pg_job_t *job, pg_rank_t *r, const char *reason)
{
    if (pg_verdict_rank_lost(job->v, r->rank, 0))
        pg_job_log(job, "rank %d %s", r->rank, reason);
    pg_job_engine_lost(job->je, r->rank);
    job_teardown_told(job, r);
}

static void on_lost_grace(evutil_socket_t fd, short what, void *arg)
{
    pg_rank_t *r = arg;

    (void)fd;
    (void)what;
    if (!r->reaped && !r->job->teardown)
        rank_fail_lost(r->job, r, r->lost_reason ? r->lost_reason : "lost its PMI connection");
}

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
    if (job->teardown) {
        pg_verdict_rank_exit(job->v, r->rank, code);
        if (job->opts->verbose)
            pg_job_log(job, "rank %d %s", r->rank, fate);
        return;
    }
    if (code == 0 && !unfinished)
        return;
    if (unfinished)
        pg_verdict_rank_lost(job->v, r->rank, code);
    else
        pg_verdict_rank_exit(job->v, r->rank, code);
    pg_job_log(job, "rank %d %s%s", r->rank, fate, unfinished ? " before PMI finalize" : "");
    if (unfinished)
        pg_job_engine_lost(job->je, r->rank);
    if (unfinished || told)
        job_teardown_told(job, r);
    else
        job_teardown(job, SIGTERM);
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
    job_teardown(job, SIGTERM);
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
static int spawned_note_exit(pg_job_t *job, const pg_rank_t *r, int wstatus)
{
    int code = pg_status_of_wait(wstatus);
    pg_job_engine_end_t end = { job->parent_kvsname, 0, -1, 0 };
    size_t reached;

    if (job->root == NULL || job->discarded)
        return 0;
    if (job->failed_rank < 0 && (code != 0 || (r->connected && !r->finalized))) {
        job->failed_rank = r->rank;
        job->failed_code = code;
    }
    if (job->nlive > 0 || job->launching || !job->notify_end) /* more ranks to come */
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

static void rank_reaped(pg_job_t *job, pg_rank_t *r, int wstatus)
{
    int told;

    r->reaped = 1;
    job->nlive--;
    if (job->root != NULL)
        job->root->spawned_live--;
    if (r->lost_timer != NULL)
        event_del(r->lost_timer);
    rank_report_exec_error(job, r);
    if (r->pmi_conn != NULL)
        pg_conn_drain(r->pmi_conn); /* an abort sent just before exit comes first */
    if (r->out != NULL)
        pg_output_drain(r->out);
    if (r->err != NULL)
        pg_output_drain(r->err);
    if (r->rank == 0 && job->root == NULL)
        pg_stdin_stop(job->stdin_fwd);
    told = spawned_note_exit(job, r, wstatus);
    rank_judge_exit(job, r, wstatus, told);
    rank_close_conns(r);
}

static void on_sigchld(evutil_socket_t fd, short what, void *arg)
{
    pg_job_t *job = arg;
    int wstatus;
    pid_t pid;

    (void)fd;
    (void)what;
    while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
        pg_rank_t *r = rank_of_pid(job, pid);

        for (int k = 0; r == NULL && k < job->nsubs; k++)
            r = rank_of_pid(job->subs[k], pid);
        if (r != NULL && !r->reaped && r->job != job) {
            rank_reaped(r->job, r, wstatus);
            continue;
        }

        if (r != NULL && !r->reaped)
            rank_reaped(job, r, wstatus);
    }
    job_maybe_done(job);
}

/* ---------------------------------------------------------------- */
/* signals and timeout                                                */
/* ---------------------------------------------------------------- */

static void on_signal(evutil_socket_t signo, short what, void *arg)
{
    pg_job_t *job = arg;

    (void)what;
    job->hurry = 1;
    if (job->flushing) { /* the ranks are gone: stop waiting for the reader */
        if (pg_verdict_signal(job->v, (int)signo))
            pg_job_log(job, "got %s while writing the ranks' output", strsignal((int)signo));
        flush_end(job);
        return;
    }
    if (job->teardown) {
        signal_job(job, SIGKILL); /* asked twice: no more grace */
        return;
    }
    if (pg_verdict_signal(job->v, (int)signo))
        pg_job_log(job, "got %s, forwarding it to the job", strsignal((int)signo));
    job_teardown(job, (int)signo);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    pg_job_t *job = arg;

    (void)fd;
    (void)what;
    job->hurry = 1; /* while flushing: the output is given up once stalled */
    if (pg_verdict_timeout(job->v)) {
        if (job->flushing)
            pg_job_log(job, "timed out after %g s writing the ranks' output (exit status %d)",
                       job->opts->timeout, PG_EXIT_TIMEOUT);
        else
            pg_job_log(job, "job timed out after %g s; killing it (exit status %d)",
                       job->opts->timeout, PG_EXIT_TIMEOUT);
    }
    job_teardown(job, SIGTERM);
}

/* ---------------------------------------------------------------- */
/* PMI connections                                                    */
/* ---------------------------------------------------------------- */

/* --verbose: every command and reply with its rank, one line each. */
static void trace_verbose(void *arg, const pg_conn_t *conn, pg_conn_dir_t dir, const char *bytes,
                          size_t len)
{
    const char *what = dir == PG_CONN_IN ? "cmd" : "reply";
    size_t start = 0;

    while (start < len) {
        const char *nl = memchr(bytes + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - bytes) : len;
        char line[1200];
        size_t o = 0;

        for (size_t i = start; i < end && o + 5 < sizeof(line); i++) {
            unsigned char ch = (unsigned char)bytes[i];
            if (ch >= 0x20 && ch < 0x7f)
                line[o++] = (char)ch;
            else
                o += (size_t)snprintf(line + o, sizeof(line) - o, "\\x%02x", ch);
        }
        line[o] = '\0';
        /* through the job's stderr queue: never blocking, never mid-line */
        pg_job_log(arg, "rank %d %s: %s%s", pg_conn_rank(conn), what, line,
                   end - start > o ? "..." : "");
        start = end + 1;
    }
}

static pg_conn_t *job_conn_new(pg_job_t *job, int fd, int rank)
{
    pg_conn_t *conn =
        pg_conn_new(job->base, fd, rank, &job->peer_job, job->handlers, &job->conn_ops, job);

    if (conn != NULL && job->trace != NULL &&
        pg_trace_recorder_attach_as(job->trace, conn, job->trace_rank_base,
                                    job->opts->verbose ? trace_verbose : NULL, job) != 0)
        pg_job_log(job, "out of memory: a connection is missing from the trace");
    else if (conn != NULL && job->trace == NULL && job->opts->verbose)
        pg_conn_set_trace(conn, trace_verbose, job);
    return conn;
}

static port_peer_t *port_peer_of(pg_job_t *job, pg_conn_t *conn)
{
    for (int i = 0; i < job->nport_conns; i++)
        if (job->port_conns[i].conn == conn)
            return &job->port_conns[i];
    return NULL;
}

/* A PMI_PORT connection speaks for a rank only if the process that opened
 * it is that rank's process or one of its descendants (pg_proc.h): any
 * other process of the user who claims the rank is an impostor, refused
 * before it reads a key or joins a fence, and the rank itself is untouched. */
static int port_peer_is_kin(pg_job_t *job, pg_conn_t *conn, int rank, const char **why)
{
    static char reason[128];
    port_peer_t *peer = port_peer_of(job, conn);

    if (peer == NULL || peer->kin == rank)
        return 1;
    if (job->pids[rank] == 0)
        snprintf(reason, sizeof(reason), "that rank has not started yet");
    else
        snprintf(reason, sizeof(reason),
                 "the process that connected (pid %d) is not rank %d's process (pid %d) nor "
                 "one of its descendants",
                 (int)peer->pid, rank, (int)job->pids[rank]);
    *why = reason;
    return 0;
}

static int conn_identify(void *owner, pg_conn_t *conn, int rank, const char **why)
{
    pg_job_t *job = owner;

    if (rank >= job->size) {
        *why = "no such rank in this job";
        return -1;
    }
    if (rank < job->first || rank >= job->first + job->nlocal) {
        *why = "that rank runs on another node";
        return -1;
    }
    if (!port_peer_is_kin(job, conn, rank, why))
        return -1;
    if (job->ranks[rank].reaped || job->ranks[rank].finalized || job->ranks[rank].connected) {
        /* one PMI life per rank: the engine counts a finalized rank as gone */
        *why = job->ranks[rank].reaped      ? "that rank has exited"
               : job->ranks[rank].finalized ? "that rank has finalized"
                                            : "that rank is already connected";
        return -1;
    }
    return 0;
}

static void port_conn_forget(pg_job_t *job, pg_conn_t *conn)
{
    for (int i = 0; i < job->nport_conns; i++) {
        if (job->port_conns[i].conn == conn) {
            memmove(&job->port_conns[i], &job->port_conns[i + 1],
                    (size_t)(job->nport_conns - i - 1) * sizeof(*job->port_conns));
            job->nport_conns--;
            return;
        }
    }
}

static void conn_opened(void *owner, pg_conn_t *conn)
{
    pg_job_t *job = owner;
    pg_rank_t *r = &job->ranks[pg_conn_rank(conn)];

    /* the rank owns it now: freed with the rank, not again with the job */
    port_conn_forget(job, conn);
    r->connected = 1;
    r->pmi_conn = conn;
    pg_job_engine_connected(job->je, r->rank);
}

static void conn_finalized(void *owner, pg_conn_t *conn)
{
    pg_job_t *job = owner;
    pg_rank_t *r = &job->ranks[pg_conn_rank(conn)];

    r->finalized = 1;
    pg_job_engine_finalized(job->je, r->rank);
}

static void conn_job_abort(void *owner, pg_conn_t *conn, int code, const char *msg)
{
    pg_job_abort(owner, pg_conn_rank(conn), code, msg);
}

/* A rank's library reads the node's key segment: the job writes one. */
static void conn_segment_reader(void *owner, pg_conn_t *conn)
{
    pg_job_t *job = owner;

    (void)conn;
    pg_job_engine_segment_reader(job->je);
}

/* PMIx_Log: stdout and stderr get the job log's line (named by rank, the
 * text escaped, whole lines after the ranks' queued output); syslog gets
 * the same words under the job's name, at the rank's priority. */
static int conn_log_to(void *owner, pg_conn_t *conn, pg_log_channel_t channel, int priority,
                       const char *text)
{
    pg_job_t *job = owner;
    int rank = pg_conn_rank(conn);
    char clean[1024];

    switch (channel) {
    case PG_LOG_STDOUT:
        job_log_stdout(job, "rank %d logged: %s", rank, text);
        return 0;
    case PG_LOG_STDERR:
        pg_job_log(job, "rank %d logged: %s", rank, text);
        return 0;
    case PG_LOG_SYSLOG:
        (void)pg_output_sanitize(text, clean, sizeof(clean));
        syslog(LOG_USER | (priority & LOG_PRIMASK), "pmigate %s rank %d logged: %s",
               job->kvsname, rank, clean);
        return 0;
    }
    return -1;
}

/* PMIx_Job_control: the signal goes to the named ranks still running; the
 * job's log says who asked, so an exit "killed by signal" is explained. */
static void conn_job_signal(void *owner, pg_conn_t *conn, const int *ranks, size_t nranks,
                            int signo)
{
    pg_job_t *job = owner;
    size_t n = nranks > 0 ? nranks : (size_t)job->size;

    pg_job_log(job, "rank %d asked (job control) for signal %d (%s) to %s", pg_conn_rank(conn),
               signo, strsignal(signo), nranks > 0 ? "some ranks" : "every rank");
    for (size_t i = 0; i < n; i++) {
        int r = nranks > 0 ? ranks[i] : (int)i;
        if (r >= 0 && r < job->size && job->ranks[r].pid > 0 && !job->ranks[r].reaped)
            (void)kill(job->ranks[r].pid, signo);
    }
}

static void conn_log_write(void *owner, pg_conn_t *conn, const char *line)
{
    (void)conn;
    pg_job_log(owner, "%s", line);
}

/* Requests were served: the engine's next deadline may have moved. */
static void conn_served(void *owner, pg_conn_t *conn)
{
    pg_job_t *job = owner;

    (void)conn;
    pg_job_engine_touch(job->je);
}

/* One line per complaint about a PMI_PORT connection that is no rank's, up
 * to PG_JOB_STRANGER_LOG_MAX: a flood of strangers does not flood stderr. */
static void log_stranger(pg_job_t *job, const char *what)
{
    if (job->stranger_logs >= PG_JOB_STRANGER_LOG_MAX)
        return;
    pg_job_log(job, "a PMI_PORT client %s%s", what,
               ++job->stranger_logs == PG_JOB_STRANGER_LOG_MAX
                   ? " (further complaints about PMI_PORT clients muted)"
                   : "");
}

static void conn_closed(void *owner, pg_conn_t *conn, const char *reason)
{
    pg_job_t *job = owner;
    int rank = pg_conn_rank(conn);
    int by_peer = pg_conn_closed_by_peer(conn);
    struct timeval grace = ms_to_tv(PG_JOB_LOST_GRACE_MS);
    pg_rank_t *r;

    port_conn_forget(job, conn);
    if (rank < 0) {
        if (reason != NULL)
            log_stranger(job, reason);
        pg_conn_free(conn);
        return;
    }
    r = &job->ranks[rank];
    if (conn == r->fd_conn)
        r->fd_conn = NULL;
    if (conn == r->pmi_conn)
        r->pmi_conn = NULL;
    pg_conn_free(conn);
    if (reason == NULL || job->teardown || r->reaped)
        return;
    if (!by_peer) {
        rank_fail_lost(job, r, reason); /* it sent something wrong: its fault now */
        return;
    }
    /* the peer went away: wait a moment for the process, to say how it ended */
    free(r->lost_reason);
    r->lost_reason = strdup(reason);
    if (r->lost_timer == NULL)
        r->lost_timer = evtimer_new(job->base, on_lost_grace, r);
    if (r->lost_timer == NULL || evtimer_add(r->lost_timer, &grace) != 0)
        rank_fail_lost(job, r, reason);
}

/* Makes room for one more unidentified PMI_PORT connection by dropping the
 * oldest when there are more than the ranks could account for. */
static void port_drop_oldest(pg_job_t *job)
{
    pg_conn_t *oldest;

    if (job->nport_conns < job->size + PG_JOB_PORT_STRANGERS)
        return;
    if (!job->port_dropped) {
        job->port_dropped = 1;
        pg_job_log(job, "more than %d PMI_PORT connections have not said which rank they are: "
                        "dropping the oldest",
                   job->size + PG_JOB_PORT_STRANGERS);
    }
    oldest = job->port_conns[0].conn;
    port_conn_forget(job, oldest);
    pg_conn_free(oldest);
}

/* Arms the hello timer for the oldest waiting connection (the earliest
 * deadline: they are kept in accept order). */
static void port_hello_arm(pg_job_t *job)
{
    uint64_t now = pg_clock_now(), due;
    struct timeval tv;

    if (job->nport_conns == 0 || evtimer_pending(job->ev_hello, NULL))
        return;
    due = job->port_conns[0].deadline;
    due = due > now ? due - now : 0;
    tv.tv_sec = (time_t)(due / 1000000000u);
    tv.tv_usec = (suseconds_t)(due % 1000000000u / 1000u) + 1;
    (void)evtimer_add(job->ev_hello, &tv);
}

/* Closes every PMI_PORT connection that has not named its rank in time. */
static void on_hello_timeout(evutil_socket_t fd, short what, void *arg)
{
    pg_job_t *job = arg;
    uint64_t now = pg_clock_now();
    char what_happened[96];

    (void)fd;
    (void)what;
    while (job->nport_conns > 0 && job->port_conns[0].deadline <= now) {
        pg_conn_t *silent = job->port_conns[0].conn;

        snprintf(what_happened, sizeof(what_happened),
                 "did not say which rank it is within %g s: closed",
                 (double)job->hello_timeout_ns / 1e9);
        port_conn_forget(job, silent);
        log_stranger(job, what_happened);
        pg_conn_free(silent);
    }
    port_hello_arm(job);
}

/* pid's kinship is read now, while the process that connected surely
 * exists (its pid cannot have been reused yet). */
static void on_port_accept(void *arg, int fd, pid_t pid)
{
    pg_job_t *job = arg;
    port_peer_t *grown;
    pg_conn_t *conn;

    if (job->teardown) {
        close(fd);
        return;
    }
    port_drop_oldest(job);
    grown = realloc(job->port_conns, (size_t)(job->nport_conns + 1) * sizeof(*grown));
    if (grown == NULL) {
        close(fd);
        return;
    }
    job->port_conns = grown;
    conn = job_conn_new(job, fd, -1);
    if (conn == NULL)
        return;
    job->port_conns[job->nport_conns++] = (port_peer_t){
        .conn = conn, .pid = pid,
        .kin = pid > 0 ? pg_proc_ancestor_among(pid, job->pids, job->size, job->parent) : -1,
        .deadline = pg_clock_now() + job->hello_timeout_ns,
    };
    port_hello_arm(job);
}

static void on_port_refuse(void *arg, const char *why)
{
    pg_job_log(arg, "%s", why);
}

/* ---------------------------------------------------------------- */
/* launch                                                             */
/* ---------------------------------------------------------------- */

/* Is the program there and executable?  Checked before anything is forked,
 * so a typo costs no processes.  Returns 0 or an errno. */
int pg_job_program_check(const char *prog)
{
    const char *path = getenv("PATH");
    char candidate[PATH_MAX];
    int err = ENOENT;

    if (strchr(prog, '/') != NULL)
        return access(prog, X_OK) == 0 ? 0 : errno;
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path != '\0') {
        size_t dirlen = strcspn(path, ":");
        struct stat st;

        if (snprintf(candidate, sizeof(candidate), "%.*s%s%s", (int)dirlen, path,
                     dirlen ? "/" : "", prog) < (int)sizeof(candidate) &&
            stat(candidate, &st) == 0 && !S_ISDIR(st.st_mode)) {
            if (access(candidate, X_OK) == 0)
                return 0;
            err = EACCES;
        }
        path += dirlen;
        if (*path == ':')
            path++;
    }
    return err;
}

typedef struct child_fds {
    int pmi;      /* the child's socketpair end */
    int out_w;    /* stdout pipe, write end */
    int err_w;    /* stderr pipe, write end */
    int stdin_fd; /* -1: /dev/null */
} child_fds_t;

/* Everything a child needs between vfork and exec, prepared by the parent:
 * the child runs in the parent's memory and may only make system calls
 * (no malloc, no stdio, no hwloc) before it execs. */
typedef struct child_plan {
    child_fds_t fds;
    pid_t pgid;         /* the job's process group; 0: the child starts it */
    pid_t parent;       /* pmigate */
    char *const *argv;  /* argv[0] is searched in PATH */
    char *const *envp;
    int bound;          /* apply cpus */
    cpu_set_t cpus;
    int batch;          /* run under SCHED_BATCH (--sched batch) */
    const char *wdir;   /* chdir here first, or NULL */
    /* The child's errno when it cannot exec.  vfork lends the child the
     * parent's memory until exec or _exit, so this is how it reports;
     * volatile: the parent reads what another process wrote. */
    volatile int exec_err;
} child_plan_t;

/* Signals pmigate catches or ignores: back to their defaults in the child,
 * so no pmigate handler runs there and exec does not keep SIG_IGN. */
static const int child_default_signals[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGPIPE };

/* In the child, between vfork and exec: system calls only.  Never returns. */
static void child_exec(child_plan_t *p)
{
    struct sigaction dfl;
    sigset_t none;
    int err, in;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (size_t i = 0; i < sizeof(child_default_signals) / sizeof(child_default_signals[0]); i++)
        (void)sigaction(child_default_signals[i], &dfl, NULL);
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    (void)setpgid(0, p->pgid);
    /* the rank dies with pmigate even if pmigate is SIGKILLed.  The signal
     * comes when the parent *thread* ends: pmigate forks from its one
     * thread, which lives until pmigate exits.  It covers the rank only,
     * not the rank's own children (see "What pmigate guarantees" in the
     * user guide). */
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != p->parent)
        _exit(PG_EXIT_INTERNAL);
    in = p->fds.stdin_fd >= 0 ? p->fds.stdin_fd : open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(p->fds.out_w, 1) < 0 || dup2(p->fds.err_w, 2) < 0 ||
        fcntl(p->fds.pmi, F_SETFD, 0) != 0) {
        err = errno;
        goto fail;
    }
    if (p->wdir != NULL && chdir(p->wdir) != 0) {
        err = errno;
        goto fail;
    }
    if (p->bound)
        (void)sched_setaffinity(0, sizeof(p->cpus), &p->cpus); /* unbound beats not running */
    if (p->batch) {
        struct sched_param normal_priority = { 0 };
        /* always allowed from SCHED_OTHER; the inherited policy beats not running */
        (void)sched_setscheduler(0, SCHED_BATCH, &normal_priority);
    }
    execvpe(p->argv[0], p->argv, p->envp);
    err = errno;
fail:
    p->exec_err = err != 0 ? err : EINVAL;
    _exit(err == ENOENT ? PG_EXIT_NOT_FOUND : PG_EXIT_CANNOT_EXEC);
}

/* Prepares rank r's child: its environment and binding.  The segment's
 * environment is reused for each of its ranks in turn: vfork returns only
 * once the child has exec'd, so the kernel has copied it by then. */
static int rank_plan(pg_job_t *job, const pg_rank_t *r, const child_fds_t *fds, child_plan_t *plan)
{
    pg_env_t *env = job->seg_env[r->appnum];
    pg_rank_env_t re = {
        .pmi_fd = fds->pmi, .rank = r->rank, .size = job->size,
        .local_rank = r->local_rank, .local_size = job->nlocal, .jobid = job->kvsname,
        .port = job->listen ? pg_listen_path(job->listen) : NULL,
        .shm = pg_job_engine_shm_path(job->je),
        .libpmix_dir = pg_env_libpmix_dir(),
        .job_dir = job->listen ? pg_listen_dir(job->listen) : NULL,
    };

    memset(plan, 0, sizeof(*plan));
    plan->fds = *fds;
    plan->pgid = job->pgid;
    plan->parent = job->parent;
    plan->argv = job->opts->segments[r->appnum].argv;
    if (pg_env_set_rank(env, &re) != 0) {
        errno = ENOMEM;
        return -1;
    }
    plan->envp = pg_env_array(env);
    plan->bound = job->place != NULL && pg_place_affinity(job->place, r->local_rank, &plan->cpus) > 0;
    plan->wdir = job->wdirs != NULL ? job->wdirs[r->appnum] : NULL;
    plan->batch = job->opts->sched == PG_SCHED_BATCH;
    return 0;
}

/* vfork, not fork: no page tables are copied (fork's cost grew with the
 * gateway's size, superlinearly in N) and the parent resumes once the child
 * has exec'd.  Signals stay blocked across it so that none of pmigate's
 * handlers runs in the child, which shares pmigate's memory.  (Spawned
 * jobs use it too: fork without the wait, and clone(CLONE_VM) without it,
 * were measured no faster to a spawn's reply -- the children's execs are
 * the cost -- and fork costs page copies, clone a shared errno; see
 * docs/performance.md, "Spawn latency".) */
static pid_t spawn_child(child_plan_t *plan)
{
    sigset_t all, old;
    pid_t pid;
    int saved;

    sigfillset(&all);
    (void)sigprocmask(SIG_SETMASK, &all, &old);
    pid = vfork();
    if (pid == 0)
        child_exec(plan);
    saved = errno;
    (void)sigprocmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return pid;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Creates the rank's pipes and socketpair; parent ends close-on-exec. */
static int rank_make_fds(int sv[2], int out[2], int err[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        return -1;
    return 0;
}

/* Sets up the parent's side of a forked rank. */
static int rank_watch(pg_job_t *job, pg_rank_t *r, int pmi_fd, int out_r, int err_r)
{
    int tag = job->opts->tag_output ? r->rank : -1;

    char label[32];

    r->out = pg_output_new(job->base, out_r, job->out_sink, tag);
    if (r->out == NULL)
        close(out_r);
    r->err = pg_output_new(job->base, err_r, job->err_sink, tag);
    if (r->err == NULL)
        close(err_r);
    if (tag >= 0 && job->jobno > 0) { /* "[job.rank] ": a spawned job's rank */
        snprintf(label, sizeof(label), "%d.%d", job->jobno, r->rank);
        pg_output_set_label(r->out, label);
        pg_output_set_label(r->err, label);
    }
    r->fd_conn = job_conn_new(job, pmi_fd, r->rank);
    if (r->out == NULL || r->err == NULL || r->fd_conn == NULL)
        return -1;
    return 0;
}

static int rank_launch(pg_job_t *job, pg_rank_t *r)
{
    int sv[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
    child_fds_t fds;
    child_plan_t plan;
    pid_t pid;
    int saved;

    if (rank_make_fds(sv, out, err) != 0)
        goto fail;
    fds = (child_fds_t){ sv[1], out[1], err[1], -1 };
    if (r->rank == 0 && job->stdin_fwd != NULL)
        fds.stdin_fd = pg_stdin_child_fd(job->stdin_fwd);
    if (rank_plan(job, r, &fds, &plan) != 0 || (pid = spawn_child(&plan)) < 0)
        goto fail;
    /* both sides set the group: whichever runs first wins the race */
    if (job->pgid == 0) {
        job->pgid = pid;
        pg_keeper_watch_group(job->keeper, pid);
    }
    (void)setpgid(pid, job->pgid);
    r->pid = pid;
    job->pids[r->rank] = pid;
    pg_job_engine_started(job->je, r->rank, pid, job->opts->segments[r->appnum].argv[0]);
    r->exec_err = plan.exec_err; /* vfork returned: the child exec'd or gave up */
    job->nlive++;
    if (job->root != NULL)
        job->root->spawned_live++; /* spawned_total counted them when accepted */
    close_fd(&sv[1]);
    close_fd(&out[1]);
    close_fd(&err[1]);
    if (r->rank == 0 && job->stdin_fwd != NULL)
        pg_stdin_start(job->stdin_fwd);
    if (rank_watch(job, r, sv[0], out[0], err[0]) != 0) {
        pg_job_log(job, "out of resources watching rank %d", r->rank);
        return -1;
    }
    return 0;
fail:
    saved = errno;
    /* a spawned job's launch failure is the spawn's errcode, not the job's end */
    if (job->root != NULL || pg_verdict_launch_failed(job->v, r->rank, saved))
        pg_job_log(job, "cannot start rank %d: %s", r->rank, strerror(saved));
    close_fd(&sv[0]);
    close_fd(&sv[1]);
    close_fd(&out[0]);
    close_fd(&out[1]);
    close_fd(&err[0]);
    close_fd(&err[1]);
    errno = saved;
    return -1;
}

static void log_layout(const pg_job_t *job);

/* Starts the next batch of ranks; the rest wait for the next turn of the
 * loop (a zero timer runs after the pending I/O, an active event would not). */
static void launch_batch(pg_job_t *job)
{
    static const struct timeval next_turn = { 0, 0 };
    int end = job->next_launch + PG_JOB_LAUNCH_BATCH;
    int last = job->first + job->nlocal; /* this node's ranks only */

    for (; job->next_launch < last && job->next_launch < end && !job->teardown;
         job->next_launch++) {
        if (rank_launch(job, &job->ranks[job->next_launch]) != 0) {
            pg_verdict_launch_failed(job->v, job->next_launch, EAGAIN);
            job_teardown(job, SIGTERM);
        }
    }
    if (job->next_launch < last && !job->teardown &&
        evtimer_add(job->ev_launch, &next_turn) == 0)
        return;
    if (job->next_launch < last && !job->teardown) {
        pg_verdict_launch_failed(job->v, job->next_launch, EAGAIN);
        pg_job_log(job, "out of resources starting rank %d", job->next_launch);
        job_teardown(job, SIGTERM);
    }
    job->launching = 0;
    if (job->opts->verbose)
        log_layout(job);
    job_maybe_done(job);
}

static void on_launch_batch(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    launch_batch(arg);
}

/* ---------------------------------------------------------------- */
/* preparation                                                        */
/* ---------------------------------------------------------------- */

static int check_programs(pg_job_t *job)
{
    for (int s = 0; s < job->opts->nsegments; s++) {
        const char *prog = job->opts->segments[s].argv[0];
        int err = pg_job_program_check(prog);

        if (err != 0) {
            pg_verdict_launch_failed(job->v, -1, err);
            pg_job_log(job, "cannot run '%s': %s", prog,
                       err == ENOENT && strchr(prog, '/') == NULL ? "command not found"
                                                                   : strerror(err));
            return -1;
        }
    }
    return 0;
}

static int build_envs(pg_job_t *job)
{
    extern char **environ;
    const pg_run_opts_t *o = job->opts;

    job->seg_env = calloc((unsigned)o->nsegments, sizeof(*job->seg_env));
    if (job->seg_env == NULL)
        return -1;
    for (int s = 0; s < o->nsegments; s++) {
        pg_env_t *env = pg_env_new(job->node != NULL && job->node->base_env != NULL
                                       ? job->node->base_env
                                       : environ);

        job->seg_env[s] = env;
        if (env == NULL)
            return -1;
        for (int i = 0; i < o->ngenv; i++)
            if (pg_env_put(env, o->genv[i]) != 0)
                return -1;
        for (int i = 0; i < o->segments[s].nenv; i++)
            if (pg_env_put(env, o->segments[s].env[i]) != 0)
                return -1;
    }
    return 0;
}

static int build_placement(pg_job_t *job)
{
    int slots = job->size; /* one node: every rank is local, whatever --ppn says */
    int rc;

    job->place = pg_place_new();
    if (job->place == NULL)
        return -1;
    rc = pg_place_assign(job->place, job->opts->bind, job->nlocal);
    if (rc == -ENOMEM)
        return -1;
    if (rc != 0) {
        pg_job_log(job, "cannot read the topology with hwloc: %s", strerror(-rc));
        return -1;
    }
    if (pg_place_oversubscribed(job->place))
        pg_job_log(job, "more ranks than %ss: binding wraps round-robin",
                   job->opts->bind == PG_BIND_SOCKET ? "package" : "core");
    job->cpusets = calloc((size_t)job->size, sizeof(*job->cpusets));
    if (job->cpusets == NULL)
        return -1;
    for (int i = 0; i < job->nlocal; i++) /* other nodes' ranks: NULL */
        if (asprintf(&job->cpusets[job->first + i], "hwloc:%s",
                     pg_place_cpuset_str(job->place, i)) < 0) {
            job->cpusets[job->first + i] = NULL;
            return -1;
        }
    if (job->node != NULL)
        pg_mapping_format(job->node->counts, job->node->nnodes, job->size, job->mapping,
                          sizeof(job->mapping));
    else
        pg_mapping_format(&slots, 1, job->size, job->mapping, sizeof(job->mapping));
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

/* Registers the job with a new engine and completes what the handlers read
 * of the job (peer_job) with it. */
static int attach_engine(pg_job_t *job)
{
    pg_job_engine_layout_t layout = {
        .nspace = job->kvsname, .size = job->size, .hostname = job->hostname,
        .appnum = job->appnum, .cpuset = (const char *const *)job->cpusets,
        .mapping = job->mapping,
    };
    const char *why = "out of memory";
    uint32_t *rank_node = NULL;

    if (job->node != NULL && (rank_node = node_of_ranks(job->node, job->size)) == NULL)
        return -1;
    if (job->node != NULL) {
        layout.nnodes = job->node->nnodes;
        layout.nodeid = job->node->nodeid;
        layout.hostnames = job->node->hostnames;
        layout.rank_node = rank_node;
        layout.xfence = job->node->xfence;
        layout.xfence_ctx = job->node->xfence_ctx;
        layout.name_ops = job->node->name_ops;
        layout.name_ctx = job->node->name_ctx;
    }
    job->je = pg_job_engine_new(job->base, &layout, &why);
    free(rank_node);
    if (job->je == NULL) {
        pg_job_log(job, "cannot register the job: %s", why);
        return -1;
    }
    job->peer_job.engine = pg_job_engine_get(job->je);
    return 0;
}

static int add_signal(pg_job_t *job, struct event **ev, int signo, event_callback_fn fn)
{
    *ev = evsignal_new(job->base, signo, fn, job);
    return *ev != NULL && event_add(*ev, NULL) == 0 ? 0 : -1;
}

static int arm_events(pg_job_t *job)
{
    if (add_signal(job, &job->ev_chld, SIGCHLD, on_sigchld) != 0 ||
        add_signal(job, &job->ev_int, SIGINT, on_signal) != 0 ||
        add_signal(job, &job->ev_term, SIGTERM, on_signal) != 0 ||
        add_signal(job, &job->ev_hup, SIGHUP, on_signal) != 0)
        return -1;
    job->ev_kill = evtimer_new(job->base, on_kill_grace, job);
    job->ev_event_grace = evtimer_new(job->base, on_event_grace, job);
    job->ev_timeout = evtimer_new(job->base, on_timeout, job);
    job->ev_launch = evtimer_new(job->base, on_launch_batch, job);
    job->ev_hello = evtimer_new(job->base, on_hello_timeout, job);
    job->ev_flush = event_new(job->base, -1, EV_PERSIST, on_flush_check, job);
    if (job->ev_kill == NULL || job->ev_timeout == NULL || job->ev_launch == NULL ||
        job->ev_hello == NULL || job->ev_flush == NULL || job->ev_event_grace == NULL)
        return -1;
    if (job->opts->timeout > 0) {
        struct timeval tv = { (time_t)job->opts->timeout,
                              (suseconds_t)((job->opts->timeout - (time_t)job->opts->timeout) *
                                            1e6) };
        if (event_add(job->ev_timeout, &tv) != 0)
            return -1;
    }
    return 0;
}

/* Before anything is started: the keeper (pg_keeper.h), pmigate as the
 * subreaper of the job's process tree, and the directories dead jobs left
 * removed (pg_tmpdir.h). */
static void contain_job(pg_job_t *job)
{
    int swept;

    /* first: the keeper must hold none of the job's descriptors or locks */
    job->keeper = pg_keeper_start();
    if (job->keeper == NULL && job->opts->verbose)
        pg_job_log(job, "cannot start the keeper: if pmigate is SIGKILLed, the ranks' children "
                        "survive it");
    if (pg_proc_become_subreaper() != 0)
        pg_job_log(job, "cannot become the ranks' subreaper (%s): processes that ranks leave "
                        "behind may outlive the job",
                   strerror(errno));
    swept = pg_tmpdir_sweep();
    if (swept > 0 && job->opts->verbose)
        pg_job_log(job, "removed %d director%s left by jobs whose pmigate died", swept,
                   swept == 1 ? "y" : "ies");
}

/* pmigate's stdout and stderr as sinks that never block the loop; under
 * 2>&1 both are one sink, so their lines do not mix either. */
static int open_sinks(pg_job_t *job)
{
    job->out_sink = pg_sink_new(job->base, STDOUT_FILENO);
    job->err_sink = pg_sink_share(job->out_sink, STDERR_FILENO);
    if (job->err_sink == NULL)
        job->err_sink = pg_sink_new(job->base, STDERR_FILENO);
    return job->out_sink != NULL && job->err_sink != NULL ? 0 : -1;
}

static int job_prepare(pg_job_t *job)
{
    int err = 0;

    if (open_sinks(job) != 0)
        goto oom;
    if (check_programs(job) != 0)
        return -1;
    contain_job(job);
    if (build_envs(job) != 0 || build_placement(job) != 0 || arm_events(job) != 0)
        goto oom;
    if (job->opts->trace_path != NULL &&
        (job->trace = pg_trace_recorder_open(job->base, job->opts, job->kvsname, &err)) == NULL) {
        pg_job_log(job, "cannot write the trace %s: %s", job->opts->trace_path, strerror(err));
        goto fail;
    }
    job->listen = pg_listen_new(job->base, on_port_accept, on_port_refuse, job, &err);
    if (job->listen == NULL) {
        pg_job_log(job, "cannot open the PMI_PORT socket: %s", strerror(err));
        goto fail;
    }
    if (attach_engine(job) != 0)
        goto fail;
    job->stdin_fwd = pg_stdin_new(job->base);
    if (job->stdin_fwd == NULL)
        goto oom;
    return 0;
oom:
    pg_job_log(job, "out of memory preparing the job");
fail:
    pg_verdict_launch_failed(job->v, -1, ENOMEM);
    return -1;
}

static void log_layout(const pg_job_t *job)
{
    pg_job_log(job, "job %s: %d rank%s, PMI_process_mapping %s, binding %s, scheduling %s",
               job->kvsname, job->size, job->size == 1 ? "" : "s", job->mapping,
               pg_bind_name(job->opts->bind), pg_sched_name(job->opts->sched));
    if (job->node != NULL)
        pg_job_log(job, "node %d of %d (%s): ranks %d-%d", job->node->nodeid, job->node->nnodes,
                   job->node->hostnames[job->node->nodeid], job->first,
                   job->first + job->nlocal - 1);
    for (int i = job->first; i < job->first + job->nlocal; i++)
        pg_job_log(job, "rank %d: pid %d, appnum %d, cpuset %s", i, (int)job->ranks[i].pid,
                   job->ranks[i].appnum,
                   job->place != NULL ? pg_place_cpuset_str(job->place, i - job->first) : "-");
}

/* Reaps whatever children have ended, for up to `ms`.  1 once pmigate has
 * no child left (so no descendant either), 0 when time ran out. */
static int reap_children_for(long ms)
{
    uint64_t deadline = pg_clock_now() + (uint64_t)ms * 1000000u;
    struct timespec pause = { 0, 2 * 1000 * 1000 };
    pid_t pid;

    for (;;) {
        while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
            ;
        if (pid < 0 && errno == ECHILD)
            return 1;
        if (pg_clock_now() >= deadline)
            return 0;
        (void)nanosleep(&pause, NULL);
    }
}

/* Nothing the ranks started outlives the job: pmigate is their child
 * subreaper, so every process they left behind (a background child, a
 * daemon that called setsid) is its descendant; each gets SIGTERM, then,
 * after the grace, SIGKILL until none is left, and is reaped. */
static void kill_leftovers(pg_job_t *job)
{
    int n = pg_proc_signal_descendants(SIGTERM);

    if (n == 0) {
        (void)reap_children_for(0);
        return;
    }
    if (!job->teardown || job->opts->verbose)
        pg_job_log(job, "killing %d process%s the ranks left running", n, n == 1 ? "" : "es");
    if (reap_children_for(PG_JOB_KILL_GRACE_MS))
        return;
    /* bounded: a fork loop that outruns SIGKILL must not hold pmigate */
    for (int round = 0; round < 1000 && pg_proc_signal_descendants(SIGKILL) > 0; round++)
        if (reap_children_for(10))
            return;
    (void)reap_children_for(0);
}

int pg_job_run(pg_job_t *job)
{
    if (job_prepare(job) == 0) {
        job->launching = 1;
        job->next_launch = job->first;
        launch_batch(job); /* the rest from the loop */
        if (!job->done || job->flushing)
            event_base_dispatch(job->base);
        report_undelivered(job);
    }
    if (job->teardown && job->pgid > 0)
        (void)kill(-job->pgid, SIGKILL); /* the ranks' group at once, then the rest */
    pg_keeper_stop(job->keeper); /* pmigate lived to the end: dismissed */
    job->keeper = NULL;
    kill_leftovers(job);
    return pg_verdict_exit_code(job->v);
}

/* ---------------------------------------------------------------- */
/* spawned jobs                                                       */
/* ---------------------------------------------------------------- */

static int job_alloc_ranks(pg_job_t *job);

static void seg_envs_free(pg_env_t **envs, int n)
{
    for (int s = 0; envs != NULL && s < n; s++)
        pg_env_free(envs[s]);
    free(envs);
}

pg_job_t *pg_job_root(pg_job_t *job)
{
    return job->root != NULL ? job->root : job;
}

const char *pg_job_kvsname(const pg_job_t *job)
{
    return job->kvsname;
}

const char *pg_job_hostname(const pg_job_t *job)
{
    return job->hostname;
}

const pg_run_opts_t *pg_job_opts(const pg_job_t *job)
{
    return job->opts;
}

int pg_job_spawned_total(const pg_job_t *job)
{
    return job->root != NULL ? job->root->spawned_total : job->spawned_total;
}

/* The spawned job's namespace in the root's engine, its preput keys
 * committed (as rank 0's) before any child can read. */
static int spawned_attach_engine(pg_job_t *sub, const pg_kv_t *preput, int npreput,
                                 const char **why)
{
    int slots = sub->size;
    pg_job_engine_layout_t layout = {
        .nspace = sub->kvsname, .size = sub->size, .hostname = sub->hostname,
        .appnum = sub->appnum, .mapping = sub->mapping, .spawned = true,
        .parent_nspace = sub->parent_kvsname, .parent_rank = sub->parent_rank,
    };

    pg_mapping_format(&slots, 1, sub->size, sub->mapping, sizeof(sub->mapping));
    sub->je = pg_job_engine_attach(sub->base, sub->root->je, &layout, why);
    if (sub->je == NULL)
        return -1;
    sub->peer_job.engine = pg_job_engine_get(sub->je);
    return pg_job_engine_preput(sub->je, preput, npreput, why);
}

/* A child could not start: the job is taken back (its started ranks are
 * killed, their exits decide nothing, no more are started) and the parent
 * gets the errcodes. */
static void spawned_discard(pg_job_t *sub)
{
    sub->discarded = 1;
    for (int i = 0; i < sub->size; i++) {
        sub->ranks[i].exec_err = 0;
        if (sub->ranks[i].pid > 0 && !sub->ranks[i].reaped)
            (void)kill(sub->ranks[i].pid, SIGKILL);
    }
}

/* Every child has exec'd or failed: the spawner learns how it went. */
static void spawned_launch_done(pg_job_t *sub)
{
    pg_job_launched_fn launched = sub->launched;
    void *arg = sub->launched_arg;
    int failed = 0;

    sub->launching = 0;
    for (int i = 0; i < sub->size; i++)
        failed += sub->errcodes[i] != 0;
    if (failed > 0 && !sub->discarded)
        spawned_discard(sub);
    else if (failed == 0 && sub->opts->verbose)
        log_layout(sub);
    sub->launched = NULL;
    sub->errcodes = NULL;
    sub->root->spawns_pending--;
    launched(failed, NULL, arg);
    job_maybe_done(sub);
}

/* Starts the next batch of the spawned job's ranks; the rest on the next
 * turn of the loop, so the gateway serves the running ranks in between
 * instead of holding them for the whole spawn.  A child that cannot start
 * stops the launch (its errno in errcodes, ECANCELED for the ranks never
 * started) and takes the job back. */
static void spawned_launch_batch(pg_job_t *sub)
{
    static const struct timeval next_turn = { 0, 0 };
    int end = sub->next_launch + PG_JOB_LAUNCH_BATCH;

    for (; sub->next_launch < sub->size && sub->next_launch < end && !sub->teardown &&
           !sub->discarded;
         sub->next_launch++) {
        pg_rank_t *r = &sub->ranks[sub->next_launch];
        int err;

        errno = 0;
        if (rank_launch(sub, r) != 0) /* not started, or started but not watched */
            err = errno != 0 ? errno : EAGAIN;
        else
            err = r->exec_err; /* vfork returned: it exec'd or gave up */
        r->exec_err = 0;       /* the spawn's errcode, not the gateway's failure */
        sub->errcodes[r->rank] = err;
        if (err != 0)
            spawned_discard(sub);
    }
    if (sub->next_launch < sub->size && !sub->teardown && !sub->discarded &&
        evtimer_add(sub->ev_launch, &next_turn) == 0)
        return;
    for (; sub->next_launch < sub->size; sub->next_launch++) { /* never started */
        sub->errcodes[sub->next_launch] = ECANCELED;
        sub->root->spawned_total--;
    }
    spawned_launch_done(sub);
}

static void on_spawned_batch(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    spawned_launch_batch(arg);
}

/* Nothing of the job started: it stays in the root's list (freed with it)
 * but is taken back, and the spawner hears of it from pg_job_spawn. */
static void spawned_abandon(pg_job_t *sub)
{
    sub->discarded = 1;
    sub->launched = NULL;
    sub->errcodes = NULL;
}

/* Starts the launch: the first batch now, the rest from the loop.  0, or
 * -1 when nothing could start. */
static int spawned_launch(pg_job_t *sub)
{
    sub->ev_launch = evtimer_new(sub->base, on_spawned_batch, sub);
    if (sub->ev_launch == NULL)
        return -1;
    sub->launching = 1;
    sub->root->spawns_pending++;
    sub->root->spawned_total += sub->size;
    spawned_launch_batch(sub);
    return 0;
}

static pg_job_t *spawned_new(pg_job_t *parent, pg_run_opts_t *opts, char **wdirs)
{
    pg_job_t *root = pg_job_root(parent), *sub = calloc(1, sizeof(*sub));
    pg_job_t **grown = realloc(root->subs, (size_t)(root->nsubs + 1) * sizeof(*grown));

    if (grown != NULL)
        root->subs = grown;
    if (sub == NULL || grown == NULL) {
        free(sub);
        return NULL;
    }
    *sub = (pg_job_t){
        .base = root->base, .opts = opts, .own_opts = opts, .wdirs = wdirs,
        .handlers = root->handlers, .conn_ops = root->conn_ops, .root = root,
        .jobno = root->nsubs + 1, .size = opts->nprocs, .nlocal = opts->nprocs,
        .parent = root->parent, .pgid = root->pgid, .v = root->v,
        .out_sink = root->out_sink, .err_sink = root->err_sink, .trace = root->trace,
        .teardown = root->teardown, .failed_rank = -1,
    };
    sub->trace_rank_base = root->size;
    for (int k = 0; k < root->nsubs; k++)
        sub->trace_rank_base += root->subs[k]->size;
    snprintf(sub->kvsname, sizeof(sub->kvsname), "kvs_%d_%d", (int)root->parent, sub->jobno);
    snprintf(sub->hostname, sizeof(sub->hostname), "%s", root->hostname);
    snprintf(sub->parent_kvsname, sizeof(sub->parent_kvsname), "%s", parent->kvsname);
    if (job_alloc_ranks(sub) != 0) {
        free(sub);
        return NULL;
    }
    sub->peer_job.parent_kvsname = sub->parent_kvsname;
    /* MPI_UNIVERSE_SIZE: at least the spawned world itself */
    sub->peer_job.universe_size = sub->size > root->size ? sub->size : root->size;
    root->subs[root->nsubs++] = sub;
    return sub;
}

int pg_job_spawn(pg_job_t *parent, int parent_rank, pg_run_opts_t *opts, char **wdirs,
                 const pg_spawn_req_t *req, int *errcodes, const char **kvsname,
                 const char **why, pg_job_launched_fn launched, void *arg)
{
    pg_job_t *sub;

    *why = "out of memory";
    if (pg_job_root(parent)->teardown) {
        *why = "the job is being torn down";
        goto refuse;
    }
    if (pg_job_root(parent)->node != NULL) {
        *why = "spawn is not supported in a job over several nodes (pmigate proxy)";
        goto refuse;
    }
    sub = spawned_new(parent, opts, wdirs);
    if (sub == NULL)
        goto refuse;
    /* from here on the job owns opts and wdirs */
    *kvsname = sub->kvsname;
    sub->parent_rank = parent_rank;
    sub->errcodes = errcodes;
    sub->launched = launched;
    sub->launched_arg = arg;
    sub->notify_end = req->notify_end;
    sub->end_silent_ok = req->end_silent_ok;
    if (build_envs(sub) != 0 ||
        spawned_attach_engine(sub, req->preput, req->npreput, why) != 0) {
        spawned_abandon(sub);
        return -1;
    }
    if (spawned_launch(sub) != 0) {
        *why = "out of memory starting the spawned job";
        spawned_abandon(sub);
        return -1;
    }
    return 0;
refuse:
    for (int s = 0; wdirs != NULL && s < opts->nsegments; s++)
        free(wdirs[s]);
    free(wdirs);
    pg_spawn_opts_free(opts);
    return -1;
}

/* The seam's spawn, from one of this job's ranks. */
static void conn_spawn(void *owner, pg_conn_t *conn, const pg_spawn_req_t *req,
                       pg_spawn_done_fn done, void *cbdata)
{
    pg_spawn_start(owner, pg_conn_rank(conn), req, done, cbdata);
}

/* ---------------------------------------------------------------- */
/* creation                                                           */
/* ---------------------------------------------------------------- */

/* PG_JOB_HELLO_TIMEOUT_MS, or PMIGATE_HELLO_TIMEOUT seconds (> 0). */
static uint64_t hello_timeout_ns(void)
{
    const char *text = getenv("PMIGATE_HELLO_TIMEOUT");
    char *end;
    double s;

    if (text != NULL && *text != '\0') {
        s = strtod(text, &end);
        if (*end == '\0' && s > 0 && s < 1e6)
            return (uint64_t)(s * 1e9);
        pg_job_log(NULL, "PMIGATE_HELLO_TIMEOUT=%s is not a number of seconds: using %d s", text,
                   PG_JOB_HELLO_TIMEOUT_MS / 1000);
    }
    return (uint64_t)PG_JOB_HELLO_TIMEOUT_MS * 1000000u;
}

pg_job_t *pg_job_new(struct event_base *base, const pg_run_opts_t *opts,
                     const pg_handler_table_t *handlers)
{
    pg_job_t *job = calloc(1, sizeof(*job));

    if (job == NULL || opts->nprocs < 1)
        goto oom;
    job->base = base;
    job->opts = opts;
    job->handlers = handlers;
    job->conn_ops = (pg_conn_owner_ops_t){
        .identify = conn_identify, .opened = conn_opened, .finalized = conn_finalized,
        .job_abort = conn_job_abort, .log_write = conn_log_write, .served = conn_served,
        .job_signal = conn_job_signal, .log_to = conn_log_to,
        .closed = conn_closed, .spawn = conn_spawn, .segment_reader = conn_segment_reader,
    };
    job->size = opts->nprocs;
    job->nlocal = job->size;
    job->parent = getpid();
    job->v = &job->verdict;
    pg_verdict_init(job->v);
    snprintf(job->kvsname, sizeof(job->kvsname), "kvs_%d_0", (int)job->parent);
    if (gethostname(job->hostname, sizeof(job->hostname) - 1) != 0)
        strcpy(job->hostname, "localhost");
    job->hello_timeout_ns = hello_timeout_ns();
    if (job_alloc_ranks(job) != 0)
        goto oom;
    return job;
oom:
    pg_job_log(NULL, "out of memory");
    free(job);
    return NULL;
}

/* The rank records and the layout arrays of job->opts's segments. */
static int job_alloc_ranks(pg_job_t *job)
{
    const pg_run_opts_t *opts = job->opts;
    int rank = 0;

    job->ranks = calloc((size_t)job->size, sizeof(*job->ranks));
    job->appnum = calloc((size_t)job->size, sizeof(*job->appnum));
    job->pids = calloc((size_t)job->size, sizeof(*job->pids));
    if (job->ranks == NULL || job->appnum == NULL || job->pids == NULL) {
        free(job->ranks);
        free(job->appnum);
        free(job->pids);
        return -1;
    }
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
    /* the engine joins in attach_engine() */
    job->peer_job = (pg_peer_job_t){ .kvsname = job->kvsname, .size = job->size,
                                     .universe_size = job->size, .appnum = job->appnum };
    return 0;
}

static void rank_free(pg_rank_t *r)
{
    rank_close_conns(r);
    pg_output_free(r->out);
    pg_output_free(r->err);
    if (r->lost_timer != NULL)
        event_free(r->lost_timer);
    free(r->lost_reason);
}

static void free_event(struct event *ev)
{
    if (ev != NULL)
        event_free(ev);
}

/* A spawned job freed while its launch is still under way (the gateway is
 * ending): the spawner still hears, once, that it failed. */
static void spawned_free_launch(pg_job_t *sub)
{
    pg_job_launched_fn launched = sub->launched;

    sub->launched = NULL;
    if (launched != NULL) {
        sub->root->spawns_pending--;
        launched(-1, "the job ended while its children were starting", sub->launched_arg);
    }
    free_event(sub->ev_launch);
}

void pg_job_free(pg_job_t *job)
{
    if (job == NULL)
        return;
    /* before the engine they are registered with; the last first, so a job
     * whose launch is cancelled still has its spawner (an earlier job) */
    for (int k = job->nsubs - 1; k >= 0; k--)
        pg_job_free(job->subs[k]);
    free(job->subs);
    for (int i = 0; i < job->size; i++)
        rank_free(&job->ranks[i]);
    if (job->root != NULL) { /* the rest is the root's */
        spawned_free_launch(job);
        pg_job_engine_free(job->je);
        seg_envs_free(job->seg_env, job->opts->nsegments);
        for (int s = 0; job->wdirs != NULL && s < job->opts->nsegments; s++)
            free(job->wdirs[s]);
        free(job->wdirs);
        free(job->pids);
        free(job->ranks);
        free(job->appnum);
        pg_spawn_opts_free(job->own_opts);
        free(job);
        return;
    }
    while (job->nport_conns > 0)
        pg_conn_free(job->port_conns[--job->nport_conns].conn);
    free(job->port_conns);
    free(job->pids);
    pg_keeper_stop(job->keeper);
    pg_job_engine_free(job->je); /* after the connections: handlers drop their requests first */
    if (pg_trace_recorder_close(job->trace) != 0)
        pg_job_log(job, "writing the trace %s failed: it is incomplete", job->opts->trace_path);
    pg_listen_free(job->listen);
    pg_stdin_free(job->stdin_fwd);
    seg_envs_free(job->seg_env, job->opts->nsegments);
    for (int i = 0; job->cpusets != NULL && i < job->size; i++)
        free(job->cpusets[i]);
    free(job->cpusets);
    pg_place_free(job->place);
    free_event(job->ev_chld);
    free_event(job->ev_int);
    free_event(job->ev_term);
    free_event(job->ev_hup);
    free_event(job->ev_timeout);
    free_event(job->ev_kill);
    free_event(job->ev_event_grace);
    free_event(job->ev_launch);
    free_event(job->ev_hello);
    free_event(job->ev_flush);
    free(job->ranks);
    free(job->appnum);
    pg_sink_free(job->out_sink); /* after the ranks' forwarders, which borrow them */
    pg_sink_free(job->err_sink);
    free(job);
}

int pg_job_set_node(pg_job_t *job, const pg_job_node_t *node)
{
    int total = 0, first = 0;

    for (int n = 0; n < node->nnodes; n++) {
        if (n < node->nodeid)
            first += node->counts[n];
        total += node->counts[n];
    }
    if (node->nnodes < 1 || node->nodeid < 0 || node->nodeid >= node->nnodes ||
        total != job->size || node->counts[node->nodeid] < 1) {
        pg_job_log(job, "node %d of %d: the nodes' rank counts do not make a job of %d ranks",
                   node->nodeid, node->nnodes, job->size);
        return -1;
    }
    job->node = node;
    job->first = first;
    job->nlocal = node->counts[node->nodeid];
    snprintf(job->kvsname, sizeof(job->kvsname), "%s", node->kvsname);
    snprintf(job->hostname, sizeof(job->hostname), "%s", node->hostnames[node->nodeid]);
    for (int i = 0; i < job->size; i++)
        job->ranks[i].local_rank = i - first; /* meaningful for this node's ranks */
    return 0;
}

int pg_job_ended_by_signal(const pg_job_t *job)
{
    return job->v->cause == PG_CAUSE_SIGNAL;
}
