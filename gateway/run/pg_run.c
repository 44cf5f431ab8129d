/*
 * pg_run: one invocation of pmigate and what its jobs share.  See pg_run.h;
 * the exit-status rules themselves are in pg_status.c.
 *
 * The end of a run: once no job has a rank left or a launch under way, the
 * loop goes on while the ranks' last output is written (a reader that
 * resumes late still gets every line); then whatever the ranks left running
 * is killed and reaped, and the verdict is the exit status.
 */
#include "gateway/run/pg_run.h"

#include <errno.h>
#include <event2/event.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gateway/util/pg_keeper.h"
#include "gateway/job/pg_job_tool.h"
#include "gateway/job/pg_job_ctx.h"
#include "gateway/job/pg_launch.h"
#include "gateway/io/pg_listen.h"
#include "gateway/job/pg_port.h"
#include "gateway/run/pg_mpir.h"
#include "gateway/run/pg_run_mpir.h"
#include "gateway/run/pg_spawn.h"
#include "gateway/util/pg_proc.h"
#include "gateway/tools/pg_report.h"
#include "gateway/tools/pg_statusd.h"
#include "gateway/util/pg_tmpdir.h"
#include "wire/pg_clock.h"

enum {
    PG_RUN_KILL_GRACE_MS = 300, /* SIGTERM -> SIGKILL */
    /* a rank's failure the jobs' PMIx processes were just told of (an
     * abort, a rank lost, a spawned job's end) -> SIGTERM: the time their
     * event handlers get to run (docs/user-guide.md, events) */
    PG_RUN_EVENT_GRACE_MS = 1000,
    /* Once the ranks are gone, output still queued is written while the
     * reader takes it; after --timeout or a signal it is given up when the
     * reader has taken nothing for this long (docs/user-guide.md). */
    PG_RUN_FLUSH_STALL_MS = 1000,
    PG_RUN_FLUSH_CHECK_MS = 10,
    /* the wire-up progress line on a terminal: shown once a wire-up step
     * has taken this long, refreshed this often */
    PG_RUN_PROGRESS_AFTER_MS = 1000,
    PG_RUN_PROGRESS_EVERY_MS = 250,
};

struct pg_run {
    struct event_base *base;
    const pg_run_opts_t *opts;
    const pg_handler_table_t *handlers;
    char hostname[256];
    /* what its jobs have of it: pmigate's pid, the ranks' process group,
     * the sinks, stdin, the trace, the engine, the teardown flag live
     * there, kept current, and the ops below */
    pg_job_ctx_t ctx;
    pg_keeper_t *keeper;      /* cleans up if pmigate is SIGKILLed, or NULL */
    pg_job_t *root;           /* the job `pmigate run` started, owned */
    pg_job_t **subs;          /* the jobs ranks spawned, in order, owned */
    int nsubs;
    pg_listen_t *listen;      /* the PMI_PORT socket and the job directory */
    pg_statusd_t *statusd;    /* `pmigate status`'s endpoint in that directory */
    void (*status_more)(void *arg, uint64_t ticket); /* its answers add the other nodes' */
    void *status_more_arg;
    uint64_t started_at;      /* pg_clock_now() of pg_run_new, for status */
    uint64_t launched_at;     /* ... when the root job's first batch started */
    int nodeid, nnodes;       /* pmigate proxy: this node of nnodes (else 0, 0) */
    int mpir_next;            /* under a debugger: the next job for MPIR_proctable
                               * (0: the root, k + 1: subs[k]) */
    bool (*may_end)(void *ctx); /* pg_job_node_t.may_end, with its ctx */
    void *may_end_ctx;
    int end_held;             /* idle, the run's end waits for may_end's host */
    pg_port_t *port;          /* PMI_PORT connections until they name a rank */
    pg_verdict_t verdict;     /* one exit status for every job */
    int done;
    int flushing;             /* every rank is gone; queued output is being written */
    int hurry;                /* --timeout or a signal: the flush gives up when stalled */
    struct event *ev_chld, *ev_int, *ev_term, *ev_hup, *ev_timeout, *ev_kill;
    struct event *ev_event_grace; /* SIGTERM after PG_RUN_EVENT_GRACE_MS */
    struct event *ev_flush;
    struct event *ev_progress; /* the progress line, when stderr is a terminal */
};

/* ---------------------------------------------------------------- */
/* small helpers                                                      */
/* ---------------------------------------------------------------- */

void pg_run_vlog(const pg_run_t *run, int jobno, int to_stdout, const char *fmt, va_list ap)
{
    pg_job_ctx_vlog(run != NULL ? &run->ctx : NULL, jobno, to_stdout, fmt, ap);
}

void pg_run_log(const pg_run_t *run, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    pg_run_vlog(run, 0, 0, fmt, ap);
    va_end(ap);
}

static struct timeval ms_to_tv(long ms)
{
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

    return tv;
}

/* The jobs whose launch ended join the debugger's table (pg_run_mpir.h).
 * `pmigate proxy` has no table: its ranks are one node's share, and the
 * job's starter is the host runtime (docs/user-guide.md, "Debuggers and
 * tools"). */
static void mpir_announce(pg_run_t *run)
{
    const pg_job_t *jobs[1 + run->nsubs];

    if (run->nnodes > 0 || run->ctx.tearing_down)
        return;
    jobs[0] = run->root;
    for (int k = 0; k < run->nsubs; k++)
        jobs[1 + k] = run->subs[k];
    if (pg_run_mpir_announce(jobs, 1 + run->nsubs, &run->mpir_next, run->hostname) != 0)
        pg_run_log(run, "out of memory: the debugger's process table lacks ranks");
}

/* ---------------------------------------------------------------- */
/* teardown                                                           */
/* ---------------------------------------------------------------- */

static void signal_all(pg_run_t *run, int signo)
{
    if (run->ctx.pgid > 0)
        (void)kill(-run->ctx.pgid, signo);
    pg_job_signal(run->root, signo);
    for (int k = 0; k < run->nsubs; k++)
        pg_job_signal(run->subs[k], signo);
}

/* Ranks forked and not yet reaped, in every job. */
static int nlive_all(const pg_run_t *run)
{
    int n = pg_job_nlive(run->root);

    for (int k = 0; k < run->nsubs; k++)
        n += pg_job_nlive(run->subs[k]);
    return n;
}

static void on_kill_grace(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    signal_all(arg, SIGKILL);
}

/* Every job is ending: no new ranks, connections, input or timeout.  0 the
 * first time, -1 when it already was. */
static int teardown_begin(pg_run_t *run)
{
    if (run->ctx.tearing_down)
        return -1;
    run->ctx.tearing_down = 1;
    pg_listen_stop(run->listen);
    pg_stdin_stop(run->ctx.stdin_fwd);
    if (run->ev_timeout != NULL)
        event_del(run->ev_timeout);
    return 0;
}

/* `signo` to every rank still running, SIGKILL after the grace period. */
static void teardown_signal(pg_run_t *run, int signo)
{
    struct timeval grace = ms_to_tv(PG_RUN_KILL_GRACE_MS);
    int nroot = pg_job_nlive(run->root);

    if (nlive_all(run) == 0)
        return;
    if (run->opts->verbose)
        pg_run_log(run, "killing the job (%d rank%s still running)", nroot, nroot == 1 ? "" : "s");
    signal_all(run, signo);
    evtimer_add(run->ev_kill, &grace);
}

/* A run idle until its host lets it end: torn down, it ends now (the
 * host may never answer: the job is ending). */
static void end_if_held(pg_run_t *run)
{
    if (run->end_held) {
        run->end_held = 0;
        pg_run_maybe_done(run);
    }
}

void pg_run_teardown(pg_run_t *run, int signo)
{
    if (teardown_begin(run) == 0)
        teardown_signal(run, signo);
    end_if_held(run);
}

static void on_event_grace(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    teardown_signal(arg, SIGTERM);
}

/* Is a PMIx process of any job, rank `rank` of `job` aside, still there to
 * hear events? */
static int has_listeners(const pg_run_t *run, const pg_job_t *job, int rank)
{
    if (pg_job_has_listeners(run->root, run->root == job ? rank : -1))
        return 1;
    for (int k = 0; k < run->nsubs; k++)
        if (pg_job_has_listeners(run->subs[k], run->subs[k] == job ? rank : -1))
            return 1;
    return 0;
}

void pg_run_teardown_told(pg_run_t *run, const pg_job_t *job, int rank)
{
    struct timeval grace = ms_to_tv(PG_RUN_EVENT_GRACE_MS);

    if (run->nnodes == 0)
        pg_run_mpir_abort(&run->verdict);
    if (!has_listeners(run, job, rank)) {
        pg_run_teardown(run, SIGTERM);
        return;
    }
    if (teardown_begin(run) == 0 && evtimer_add(run->ev_event_grace, &grace) != 0)
        teardown_signal(run, SIGTERM);
    end_if_held(run);
}

/* ---------------------------------------------------------------- */
/* end of the run                                                     */
/* ---------------------------------------------------------------- */

/* Every rank's output is written (or given up, see on_flush_check). */
static int output_flushed(const pg_run_t *run)
{
    if (!pg_job_outputs_finished(run->root))
        return 0;
    for (int k = 0; k < run->nsubs; k++)
        if (!pg_job_outputs_finished(run->subs[k]))
            return 0;
    return pg_sink_queued(run->ctx.out_sink) == 0 && pg_sink_queued(run->ctx.err_sink) == 0;
}

static void flush_end(pg_run_t *run)
{
    run->flushing = 0;
    event_del(run->ev_flush);
    event_base_loopbreak(run->base);
}

/* While the ranks' last output is written: done, or stalled too long after
 * --timeout or a signal? */
static void on_flush_check(evutil_socket_t fd, short what, void *arg)
{
    pg_run_t *run = arg;
    uint64_t now = pg_clock_now(), stall = (uint64_t)PG_RUN_FLUSH_STALL_MS * 1000000u;

    (void)fd;
    (void)what;
    if (output_flushed(run) ||
        (run->hurry && (pg_sink_stalled_ns(run->ctx.out_sink, now) >= stall ||
                        pg_sink_stalled_ns(run->ctx.err_sink, now) >= stall)))
        flush_end(run);
}

/* The ranks are gone: the loop goes on until their output is written, so a
 * reader that resumes late still gets every line. */
static void flush_output(pg_run_t *run)
{
    struct timeval every = ms_to_tv(PG_RUN_FLUSH_CHECK_MS);

    pg_listen_stop(run->listen);
    pg_job_outputs_finish(run->root);
    for (int k = 0; k < run->nsubs; k++)
        pg_job_outputs_finish(run->subs[k]);
    run->flushing = 1;
    if (output_flushed(run) || event_add(run->ev_flush, &every) != 0)
        flush_end(run);
}

/* Output given up when the flush was cut short: said, and dropped. */
static void report_undelivered(pg_run_t *run)
{
    size_t lost = pg_job_outputs_undelivered(run->root);

    if (lost == 0)
        return;
    (void)pg_sink_discard(run->ctx.out_sink);
    (void)pg_sink_discard(run->ctx.err_sink);
    pg_run_log(run, "%zu bytes of the ranks' output were not delivered: nobody read them", lost);
}

void pg_run_maybe_done(pg_run_t *run)
{
    mpir_announce(run);
    if (run->done || pg_job_launching(run->root) || nlive_all(run) > 0)
        return;
    for (int k = 0; k < run->nsubs; k++)
        if (pg_job_launching(run->subs[k]))
            return;
    run->end_held = 0;
    if (!run->ctx.tearing_down && run->may_end != NULL && !run->may_end(run->may_end_ctx)) {
        run->end_held = 1; /* children may still come: the host calls again */
        return;
    }
    run->done = 1;
    pg_job_judge_silent(run->root);
    flush_output(run);
}

/* ---------------------------------------------------------------- */
/* signals and timeout                                                */
/* ---------------------------------------------------------------- */

static void on_sigchld(evutil_socket_t fd, short what, void *arg)
{
    pg_run_t *run = arg;
    int wstatus;
    pid_t pid;

    (void)fd;
    (void)what;
    while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
        if (pg_job_reap(run->root, pid, wstatus))
            continue;
        for (int k = 0; k < run->nsubs; k++)
            if (pg_job_reap(run->subs[k], pid, wstatus))
                break;
    }
    pg_run_maybe_done(run);
}

static void on_signal(evutil_socket_t signo, short what, void *arg)
{
    pg_run_t *run = arg;

    (void)what;
    run->hurry = 1;
    if (run->flushing) { /* the ranks are gone: stop waiting for the reader */
        if (pg_verdict_signal(&run->verdict, (int)signo))
            pg_run_log(run, "got %s while writing the ranks' output", strsignal((int)signo));
        flush_end(run);
        return;
    }
    if (run->ctx.tearing_down) {
        signal_all(run, SIGKILL); /* asked twice: no more grace */
        return;
    }
    if (pg_verdict_signal(&run->verdict, (int)signo))
        pg_run_log(run, "got %s, forwarding it to the job", strsignal((int)signo));
    pg_run_teardown(run, (int)signo);
}

/* Seconds of --timeout already gone when the run starts: `pmigate proxy`
 * counts from its own start, the host's exchange and the mesh included. */
static double timeout_spent(const pg_run_opts_t *opts)
{
    uint64_t now = pg_clock_now();

    if (opts->timeout_from == 0 || now <= opts->timeout_from)
        return 0;
    return (double)(now - opts->timeout_from) / 1e9;
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    pg_run_t *run = arg;

    (void)fd;
    (void)what;
    run->hurry = 1; /* while flushing: the output is given up once stalled */
    if (pg_verdict_timeout(&run->verdict)) {
        if (run->flushing)
            pg_run_log(run, "timed out after %g s writing the ranks' output (exit status %d)",
                       run->opts->timeout, PG_EXIT_TIMEOUT);
        else
            pg_run_log(run, "job timed out after %g s; killing it (exit status %d)",
                       run->opts->timeout, PG_EXIT_TIMEOUT);
    }
    pg_run_teardown(run, SIGTERM);
}

/* ---------------------------------------------------------------- */
/* the PMI_PORT socket                                                */
/* ---------------------------------------------------------------- */

static void on_port_accept(void *arg, int fd, pid_t pid)
{
    pg_run_t *run = arg;

    if (run->ctx.tearing_down) {
        close(fd);
        return;
    }
    pg_port_accept(run->port, fd, pid);
}

static void on_port_refuse(void *arg, const char *why)
{
    pg_run_log(arg, "%s", why);
}

/* ---------------------------------------------------------------- */
/* what a running job shows: `pmigate status`, the progress line     */
/* ---------------------------------------------------------------- */

/* The engine's fences and waits of one namespace, for pg_report. */
typedef struct view_arg {
    FILE *out;
    const char *ns;
    uint64_t now;
} view_arg_t;

static void report_fence(void *arg, const pg_fence_view_t *f)
{
    const view_arg_t *v = arg;

    if (f->nparticipants > 0 && strcmp(f->participants[0].nspace, v->ns) == 0)
        pg_report_fence(v->out, f, v->now);
}

static void report_wait(void *arg, const pg_wait_view_t *w)
{
    const view_arg_t *v = arg;

    if (strcmp(w->requester.nspace, v->ns) == 0)
        pg_report_wait(v->out, w, v->now);
}

static void report_job(const pg_run_t *run, const pg_job_t *job, FILE *out, uint64_t now)
{
    view_arg_t v = { out, pg_job_kvsname(job), now };
    pg_report_job_t j;

    pg_job_report(job, &j);
    pg_report_job(out, &j);
    if (run->ctx.engine != NULL)
        (void)pg_engine_view(pg_job_engine_get(run->ctx.engine), report_fence, report_wait, &v);
}

/* The report of pg_statusd.h: who, what, since when, then each job. */
static void run_report(void *arg, FILE *out)
{
    const pg_run_t *run = arg;
    uint64_t now = pg_clock_now();

    fprintf(out, "pmigate %ld on %s", (long)run->ctx.pid, run->hostname);
    if (run->nnodes > 1)
        fprintf(out, ", node %d of %d", run->nodeid, run->nnodes);
    fprintf(out, ": %s", run->nnodes > 1 ? "proxy" : "run");
    for (int i = 0; i < run->opts->nsegments; i++)
        fprintf(out, "%s -n %d %s", i > 0 ? " :" : "", run->opts->segments[i].nprocs,
                run->opts->segments[i].argv[0]);
    fprintf(out, ", up %.1f s%s\n", (double)(now - run->started_at) / 1e9,
            run->ctx.tearing_down ? ", ending" : "");
    report_job(run, run->root, out, now);
    for (int k = 0; k < run->nsubs; k++)
        report_job(run, run->subs[k], out, now);
    if (run->nnodes > 1 && run->status_more == NULL)
        fprintf(out, "(this node's ranks only: pmigate status on the other nodes shows theirs)\n");
}

void pg_run_report(pg_run_t *run, FILE *out)
{
    run_report(run, out);
}

void pg_run_status_more(pg_run_t *run, void (*more)(void *arg, uint64_t ticket), void *arg)
{
    run->status_more = more;
    run->status_more_arg = arg;
    if (run->statusd != NULL)
        pg_statusd_set_more(run->statusd, more, arg);
}

void pg_run_status_more_done(pg_run_t *run, uint64_t ticket, const char *text, size_t len)
{
    if (run->statusd != NULL)
        pg_statusd_more_done(run->statusd, ticket, text, len);
}

/* The root job's whole-job fence, if one is running. */
typedef struct progress_arg {
    const char *ns;
    int found;
    pg_fence_view_t f; /* its counts; the arrays are not kept */
} progress_arg_t;

static void progress_fence(void *arg, const pg_fence_view_t *f)
{
    progress_arg_t *p = arg;

    if (f->whole_job && strcmp(f->participants[0].nspace, p->ns) == 0) {
        p->f = *f;
        p->f.participants = p->f.missing = NULL;
        p->found = 1;
    }
}

/* The progress line: a whole-job fence of the root job, or its ranks'
 * initialisation, that has taken PG_RUN_PROGRESS_AFTER_MS so far. */
static void on_progress(evutil_socket_t fd, short what, void *arg)
{
    pg_run_t *run = arg;
    uint64_t now = pg_clock_now(), after = (uint64_t)PG_RUN_PROGRESS_AFTER_MS * 1000000u;
    progress_arg_t p = { .ns = pg_job_kvsname(run->root) };
    const char *text = NULL;
    char line[160];
    pg_report_job_t j;

    (void)fd;
    (void)what;
    if (!run->ctx.tearing_down && !run->done && run->ctx.engine != NULL && run->launched_at != 0) {
        pg_job_report(run->root, &j);
        (void)pg_engine_view(pg_job_engine_get(run->ctx.engine), progress_fence, NULL, &p);
        if (p.found && now - p.f.started >= after)
            text = pg_report_progress(line, sizeof(line), &p.f, 0, 0, 0, now);
        else if (!p.found && j.initialised > 0 && j.initialised < j.nlocal && j.finalized == 0 &&
                 now - run->launched_at >= after)
            text = pg_report_progress(line, sizeof(line), NULL, j.initialised, j.nlocal,
                                      run->launched_at, now);
    }
    pg_sink_status(run->ctx.err_sink, text);
}

/* `pmigate status`'s endpoint, and the progress line on a terminal.
 * Neither is needed to run the job: a failure is said, and the job goes
 * on without. */
static void open_views(pg_run_t *run)
{
    struct timeval every = ms_to_tv(PG_RUN_PROGRESS_EVERY_MS);
    int err = 0;

    run->statusd = pg_statusd_new(run->base, pg_listen_dir(run->listen), run_report, run, &err);
    if (run->statusd == NULL)
        pg_run_log(run, "cannot open the status endpoint (pmigate status will not see this "
                        "job): %s",
                   strerror(err));
    else if (run->status_more != NULL)
        pg_statusd_set_more(run->statusd, run->status_more, run->status_more_arg);
    if (!isatty(STDERR_FILENO))
        return;
    run->ev_progress = event_new(run->base, -1, EV_PERSIST, on_progress, run);
    if (run->ev_progress != NULL)
        (void)event_add(run->ev_progress, &every);
}

/* ---------------------------------------------------------------- */
/* preparation                                                        */
/* ---------------------------------------------------------------- */

/* Registers the root job with a new engine. */
static int attach_engine(pg_run_t *run)
{
    pg_job_engine_layout_t layout;
    const char *why = "out of memory";
    uint32_t *rank_node;

    if (pg_job_layout(run->root, &layout, &rank_node) != 0)
        return -1;
    run->ctx.engine = pg_job_engine_new(run->base, &layout, &why);
    free(rank_node);
    if (run->ctx.engine == NULL) {
        pg_run_log(run, "cannot register the job: %s", why);
        return -1;
    }
    pg_job_set_engine(run->root, run->ctx.engine);
    return 0;
}

static int add_signal(pg_run_t *run, struct event **ev, int signo, event_callback_fn fn)
{
    *ev = evsignal_new(run->base, signo, fn, run);
    return *ev != NULL && event_add(*ev, NULL) == 0 ? 0 : -1;
}

static int arm_events(pg_run_t *run)
{
    if (add_signal(run, &run->ev_chld, SIGCHLD, on_sigchld) != 0 ||
        add_signal(run, &run->ev_int, SIGINT, on_signal) != 0 ||
        add_signal(run, &run->ev_term, SIGTERM, on_signal) != 0 ||
        add_signal(run, &run->ev_hup, SIGHUP, on_signal) != 0)
        return -1;
    run->ev_kill = evtimer_new(run->base, on_kill_grace, run);
    run->ev_event_grace = evtimer_new(run->base, on_event_grace, run);
    run->ev_timeout = evtimer_new(run->base, on_timeout, run);
    run->ev_flush = event_new(run->base, -1, EV_PERSIST, on_flush_check, run);
    if (run->ev_kill == NULL || run->ev_timeout == NULL || run->ev_flush == NULL ||
        run->ev_event_grace == NULL)
        return -1;
    if (run->opts->timeout > 0) {
        double left = run->opts->timeout - timeout_spent(run->opts);
        struct timeval tv = { 0, 0 };

        if (left > 0) {
            tv.tv_sec = (time_t)left;
            tv.tv_usec = (suseconds_t)((left - (double)(time_t)left) * 1e6);
        }
        if (event_add(run->ev_timeout, &tv) != 0)
            return -1;
    }
    return 0;
}

/* Before anything is started: the keeper (pg_keeper.h), pmigate as the
 * subreaper of the job's process tree, and the directories dead jobs left
 * removed (pg_tmpdir.h). */
static void contain(pg_run_t *run)
{
    int swept;

    /* first: the keeper must hold none of the job's descriptors or locks */
    run->keeper = pg_keeper_start();
    if (run->keeper == NULL && run->opts->verbose)
        pg_run_log(run, "cannot start the keeper: if pmigate is SIGKILLed, the ranks' children "
                        "survive it");
    if (pg_proc_become_subreaper() != 0)
        pg_run_log(run, "cannot become the ranks' subreaper (%s): processes that ranks leave "
                        "behind may outlive the job",
                   strerror(errno));
    swept = pg_tmpdir_sweep();
    if (swept > 0 && run->opts->verbose)
        pg_run_log(run, "removed %d director%s left by jobs whose pmigate died", swept,
                   swept == 1 ? "y" : "ies");
}

/* pmigate's stdout and stderr as sinks that never block the loop; under
 * 2>&1 both are one sink, so their lines do not mix either. */
static int open_sinks(pg_run_t *run)
{
    run->ctx.out_sink = pg_sink_new(run->base, STDOUT_FILENO);
    run->ctx.err_sink = pg_sink_share(run->ctx.out_sink, STDERR_FILENO);
    if (run->ctx.err_sink == NULL)
        run->ctx.err_sink = pg_sink_new(run->base, STDERR_FILENO);
    return run->ctx.out_sink != NULL && run->ctx.err_sink != NULL ? 0 : -1;
}

static int run_prepare(pg_run_t *run)
{
    int err = 0;

    if (open_sinks(run) != 0)
        goto oom;
    if (pg_launch_check_programs(run->root) != 0)
        return -1;
    contain(run);
    if (pg_launch_prepare(run->root) != 0 || arm_events(run) != 0)
        goto oom;
    if (run->opts->trace_path != NULL &&
        (run->ctx.trace = pg_trace_recorder_open(run->base, run->opts, pg_job_kvsname(run->root),
                                                 &err)) == NULL) {
        pg_run_log(run, "cannot write the trace %s: %s", run->opts->trace_path, strerror(err));
        goto fail;
    }
    run->listen = pg_listen_new(run->base, on_port_accept, on_port_refuse, run, &err);
    if (run->listen == NULL) {
        pg_run_log(run, "cannot open the PMI_PORT socket: %s", strerror(err));
        goto fail;
    }
    run->ctx.port_path = pg_listen_path(run->listen);
    run->ctx.job_dir = pg_listen_dir(run->listen);
    if (attach_engine(run) != 0)
        goto fail;
    open_views(run);
    run->ctx.stdin_fwd = pg_stdin_new(run->base);
    if (run->ctx.stdin_fwd == NULL)
        goto oom;
    return 0;
oom:
    pg_run_log(run, "out of memory preparing the job");
fail:
    pg_verdict_launch_failed(&run->verdict, -1, ENOMEM);
    return -1;
}

/* ---------------------------------------------------------------- */
/* the run                                                            */
/* ---------------------------------------------------------------- */

/* Reaps whatever children have ended, for up to `ms`.  1 once pmigate has
 * no child left (so no descendant either) but `spare`, 0 when time ran
 * out. */
static int reap_children_for(long ms, pid_t spare)
{
    uint64_t deadline = pg_clock_now() + (uint64_t)ms * 1000000u;
    struct timespec pause = { 0, 2 * 1000 * 1000 };
    pid_t pid;

    for (;;) {
        while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
            ;
        if ((pid < 0 && errno == ECHILD) ||
            (spare > 0 && pg_proc_signal_descendants(0, spare) == 0))
            return 1;
        if (pg_clock_now() >= deadline)
            return 0;
        (void)nanosleep(&pause, NULL);
    }
}

/* Nothing the ranks started outlives the run: pmigate is their child
 * subreaper, so every process they left behind (a background child, a
 * daemon that called setsid) is its descendant; each gets SIGTERM, then,
 * after the grace, SIGKILL until none is left, and is reaped.  The keeper
 * is spared: it stays until the run's directories are gone
 * (pg_run_free). */
static void kill_leftovers(pg_run_t *run)
{
    pid_t keeper = pg_keeper_pid(run->keeper);
    int n = pg_proc_signal_descendants(SIGTERM, keeper);

    if (n == 0) {
        (void)reap_children_for(0, keeper);
        return;
    }
    if (!run->ctx.tearing_down || run->opts->verbose)
        pg_run_log(run, "killing %d process%s the ranks left running", n, n == 1 ? "" : "es");
    if (reap_children_for(PG_RUN_KILL_GRACE_MS, keeper))
        return;
    /* bounded: a fork loop that outruns SIGKILL must not hold pmigate */
    for (int round = 0; round < 1000 && pg_proc_signal_descendants(SIGKILL, keeper) > 0; round++)
        if (reap_children_for(10, keeper))
            return;
    (void)reap_children_for(0, keeper);
}

int pg_run_dispatch(pg_run_t *run)
{
    if (run_prepare(run) == 0) {
        run->launched_at = pg_clock_now();
        pg_launch_start(run->root); /* the first batch; the rest from the loop */
        if (!run->done || run->flushing)
            event_base_dispatch(run->base);
        report_undelivered(run);
    }
    if (run->ctx.tearing_down && run->ctx.pgid > 0)
        (void)kill(-run->ctx.pgid, SIGKILL); /* the ranks' group at once, then the rest */
    kill_leftovers(run);
    pg_trace_recorder_end(run->ctx.trace, pg_verdict_exit_code(&run->verdict),
                          run->verdict.cause == PG_CAUSE_TIMEOUT ||
                              run->verdict.cause == PG_CAUSE_SIGNAL ||
                              run->verdict.cause == PG_CAUSE_LAUNCH);
    return pg_verdict_exit_code(&run->verdict);
}

/* What its jobs ask of the run (pg_job_ctx.h). */
static const pg_job_ctx_ops_t run_job_ops = {
    .teardown = pg_run_teardown,
    .teardown_told = pg_run_teardown_told,
    .maybe_done = pg_run_maybe_done,
    .adopt = pg_run_adopt,
    .add_job = pg_run_add_job,
    .nranks = pg_run_nranks,
    .spawned_add = pg_run_spawned_add,
    .release_init = pg_run_release_init,
    .spawn = pg_spawn_start,
    .spawn_opts_free = pg_spawn_opts_free,
};

pg_run_t *pg_run_new(struct event_base *base, const pg_run_opts_t *opts,
                     const pg_handler_table_t *handlers)
{
    pg_run_t *run = calloc(1, sizeof(*run));

    if (run == NULL || opts->nprocs < 1)
        goto oom;
    run->base = base;
    run->opts = opts;
    run->handlers = handlers;
    run->ctx = (pg_job_ctx_t){
        .run = run, .ops = &run_job_ops, .base = base, .opts = opts,
        .hostname = run->hostname, .pid = getpid(), .verdict = &run->verdict,
    };
    run->started_at = pg_clock_now();
    pg_verdict_init(&run->verdict);
    if (gethostname(run->hostname, sizeof(run->hostname) - 1) != 0)
        strcpy(run->hostname, "localhost");
    run->root = pg_job_new(&run->ctx, opts, handlers);
    if (run->root == NULL)
        goto oom;
    run->port = pg_port_new(base, run->root, pg_job_conn_new);
    if (run->port == NULL)
        goto oom;
    pg_job_set_port(run->root, run->port);
    /* tools (PMIx_tool_init) come by the PMI_PORT socket: the run takes them */
    run->ctx.tools = pg_job_tools_new(run->root);
    if (run->ctx.tools == NULL)
        goto oom;
    return run;
oom:
    pg_run_log(NULL, "out of memory");
    pg_run_free(run);
    return NULL;
}

int pg_run_set_node(pg_run_t *run, const pg_job_node_t *node)
{
    if (pg_job_set_node(run->root, node) != 0)
        return -1;
    pg_verdict_watch(&run->verdict, node->failed, node->failed_ctx);
    snprintf(run->hostname, sizeof(run->hostname), "%s", node->hostnames[node->nodeid]);
    run->nodeid = node->nodeid;
    run->nnodes = node->nnodes;
    run->may_end = node->may_end;
    run->may_end_ctx = node->dyn_ctx;
    return 0;
}

int pg_run_ended_by_signal(const pg_run_t *run)
{
    return run->verdict.cause == PG_CAUSE_SIGNAL;
}

static void free_event(struct event *ev)
{
    if (ev != NULL)
        event_free(ev);
}

void pg_run_free(pg_run_t *run)
{
    if (run == NULL)
        return;
    /* the connections before the engine they are registered with; the
     * last job first, so a job whose launch is cancelled still has its
     * spawner (an earlier job); the connections that never named a rank
     * before the root job whose peer data they read */
    for (int k = run->nsubs - 1; k >= 0; k--)
        pg_job_free(run->subs[k]);
    free(run->subs);
    pg_job_tools_free(run->ctx.tools); /* before the engine their namespaces are in */
    pg_port_free(run->port);
    pg_job_free(run->root);
    pg_job_engine_free(run->ctx.engine);
    if (pg_trace_recorder_close(run->ctx.trace) != 0)
        pg_run_log(run, "writing the trace %s failed: it is incomplete", run->opts->trace_path);
    pg_statusd_free(run->statusd); /* before the directory it is in */
    pg_listen_free(run->listen);
    /* pmigate lived to the end and the run's directories are gone: dismissed */
    pg_keeper_stop(run->keeper);
    pg_stdin_free(run->ctx.stdin_fwd);
    free_event(run->ev_chld);
    free_event(run->ev_int);
    free_event(run->ev_term);
    free_event(run->ev_hup);
    free_event(run->ev_timeout);
    free_event(run->ev_kill);
    free_event(run->ev_event_grace);
    free_event(run->ev_flush);
    free_event(run->ev_progress);
    pg_sink_free(run->ctx.out_sink); /* after the ranks' forwarders, which borrow them */
    pg_sink_free(run->ctx.err_sink);
    if (run->nnodes == 0)
        pg_mpir_clear(); /* the run's: a proxy never filled it */
    free(run);
}

/* ---------------------------------------------------------------- */
/* for the jobs                                                       */
/* ---------------------------------------------------------------- */

pg_job_t *pg_run_root(const pg_run_t *run)
{
    return run->root;
}

const pg_run_opts_t *pg_run_opts(const pg_run_t *run)
{
    return run->opts;
}

const char *pg_run_hostname(const pg_run_t *run)
{
    return run->hostname;
}

pg_trace_recorder_t *pg_run_trace(const pg_run_t *run)
{
    return run->ctx.trace;
}

pg_job_engine_t *pg_run_engine(const pg_run_t *run)
{
    return run->ctx.engine;
}

pid_t pg_run_adopt(pg_run_t *run, pid_t pid)
{
    if (run->ctx.pgid == 0) {
        run->ctx.pgid = pid;
        pg_keeper_watch_group(run->keeper, pid);
    }
    return run->ctx.pgid;
}

int pg_run_add_job(pg_run_t *run, pg_job_t *job)
{
    pg_job_t **grown = realloc(run->subs, (size_t)(run->nsubs + 1) * sizeof(*grown));

    if (grown == NULL)
        return -1;
    run->subs = grown;
    run->subs[run->nsubs++] = job;
    return run->nsubs;
}

pg_job_t *pg_run_find_job(const pg_run_t *run, const char *kvsname)
{
    if (strcmp(pg_job_kvsname(run->root), kvsname) == 0)
        return run->root;
    for (int k = 0; k < run->nsubs; k++)
        if (strcmp(pg_job_kvsname(run->subs[k]), kvsname) == 0)
            return run->subs[k];
    return NULL;
}

int pg_run_ending(const pg_run_t *run)
{
    return run->done || run->ctx.tearing_down;
}

int pg_run_nranks(const pg_run_t *run)
{
    int n = pg_job_size(run->root);

    for (int k = 0; k < run->nsubs; k++)
        n += pg_job_size(run->subs[k]);
    return n;
}

void pg_run_spawned_add(pg_run_t *run, int delta)
{
    run->ctx.spawned_total += delta;
}

static void release_if_named(pg_job_t *job, const char *nspace)
{
    if (nspace == NULL || strcmp(pg_job_kvsname(job), nspace) == 0)
        pg_job_release_init(job);
}

void pg_run_release_init(pg_run_t *run, const char *nspace)
{
    release_if_named(run->root, nspace);
    for (int k = 0; k < run->nsubs; k++)
        release_if_named(run->subs[k], nspace);
}
