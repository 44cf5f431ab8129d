/*
 * pg_job_conn: what a job's ranks ask of it through their PMI connections.
 * The job is its connections' owner (pg_conn_owner_ops_t in pg_conn.h):
 * this file answers who a connection is, its open, finalize, abort, log,
 * signal, spawn and close, and watches the ranks that asked to be watched
 * (PMIx_Process_monitor, --heartbeat; pg_monitor.h).  A PMI abort
 * (pg_job_abort) is here too: the connections are its first callers.  The
 * job's records are pg_job_int.h's; its ranks' exits and its end are
 * pg_job.c's, which calls this file and is never called by it.
 *
 * Why the wait in one place: when a connection breaks before finalize
 * while the process still seems alive, the verdict waits
 * PG_JOB_LOST_GRACE_MS for the process to be reaped, so the message can
 * say how it died (the kernel closes a dying process's sockets before its
 * parent can reap it).
 */
#include <event2/event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "gateway/job/pg_job_ctx.h"
#include "gateway/job/pg_job_int.h"
#include "gateway/job/pg_job_tool.h"
#include "pmix_common.h"
#include "gateway/job/pg_port.h"
#include "gateway/tools/pg_trace_rec.h"
#include "pmix_common.h"

enum {
    PG_JOB_LOST_GRACE_MS = 100, /* broken connection -> verdict, see above */
};

/* The same line on pmigate's stdout (PMIx_Log to PMIX_LOG_STDOUT). */
static void job_log_stdout(const pg_job_t *job, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void job_log_stdout(const pg_job_t *job, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    pg_job_ctx_vlog(job->ctx, job->jobno, 1, fmt, ap);
    va_end(ap);
}

/* A rank's connection failed before finalize: the rank failed the job. */
static void rank_fail_lost(pg_job_t *job, pg_rank_t *r, const char *reason)
{
    if (pg_verdict_rank_lost(job->v, r->rank, 0))
        pg_job_log(job, "rank %d %s", r->rank, reason);
    pg_job_engine_lost(job->je, r->rank);
    pg_job_ctx_teardown_told(job->ctx, job, r->rank);
}

static void on_lost_grace(evutil_socket_t fd, short what, void *arg)
{
    pg_rank_t *r = arg;

    (void)fd;
    (void)what;
    if (!r->reaped && !r->job->ctx->tearing_down)
        rank_fail_lost(r->job, r, r->lost_reason ? r->lost_reason : "lost its PMI connection");
}

/* ---------------------------------------------------------------- */
/* PMI connections: the job is their owner (pg_conn_owner_ops_t)      */
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

pg_conn_t *pg_job_conn_new(pg_job_t *job, int fd, int rank)
{
    pg_trace_recorder_t *trace = job->ctx->trace;
    pg_conn_t *conn =
        pg_conn_new(job->base, fd, rank, &job->peer_job, job->handlers, &job->conn_ops, job);

    if (conn != NULL && trace != NULL &&
        pg_trace_recorder_attach_as(trace, conn, job->trace_rank_base,
                                    job->opts->verbose ? trace_verbose : NULL, job) != 0)
        pg_job_log(job, "out of memory: a connection is missing from the trace");
    else if (conn != NULL && trace == NULL && job->opts->verbose)
        pg_conn_set_trace(conn, trace_verbose, job);
    return conn;
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
    if (!pg_port_may_claim(job->port, conn, rank, why))
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

static void conn_opened(void *owner, pg_conn_t *conn)
{
    pg_job_t *job = owner;
    pg_rank_t *r = &job->ranks[pg_conn_rank(conn)];

    /* the rank owns it now: freed with the rank, not again with the port */
    pg_port_forget(job->port, conn);
    r->connected = 1;
    r->pmi_conn = conn;
    pg_job_engine_connected(job->je, r->rank);
}

static void conn_finalized(void *owner, pg_conn_t *conn)
{
    pg_job_t *job = owner;
    pg_rank_t *r = &job->ranks[pg_conn_rank(conn)];

    r->finalized = 1;
    pg_monitor_forget(job->monitor, r->rank); /* nothing more to say: not watched */
    pg_job_engine_finalized(job->je, r->rank);
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
    pg_job_ctx_teardown_told(job->ctx, job, rank);
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
    char *clean;

    switch (channel) {
    case PG_LOG_STDOUT:
        job_log_stdout(job, "rank %d logged: %s", rank, text);
        return 0;
    case PG_LOG_STDERR:
        pg_job_log(job, "rank %d logged: %s", rank, text);
        return 0;
    case PG_LOG_SYSLOG: /* whole; the syslog daemon cuts what is too long for it */
        if ((clean = pg_output_sanitize_dup(text)) == NULL)
            return -1;
        syslog(LOG_USER | (priority & LOG_PRIMASK), "pmigate %s rank %d logged: %s",
               job->kvsname, rank, clean);
        free(clean);
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

/* ---------------------------------------------------------------- */
/* watching ranks (pg_monitor): PMIx_Process_monitor, --heartbeat      */
/* ---------------------------------------------------------------- */

static int conn_monitor(void *owner, pg_conn_t *conn, const pg_monitor_req_t *req)
{
    pg_job_t *job = owner;

    return job->monitor != NULL ? pg_monitor_request(job->monitor, pg_conn_rank(conn), req)
                                : PMIX_ERR_NOT_SUPPORTED;
}

/* A PMI message is life for --heartbeat... */
static void conn_heard(void *owner, pg_conn_t *conn)
{
    pg_job_t *job = owner;

    pg_monitor_traffic(job->monitor, pg_conn_rank(conn));
}

/* ...and so is output. */
static void rank_output_heard(void *arg)
{
    pg_rank_t *r = arg;

    pg_monitor_traffic(r->job->monitor, r->rank);
}

int pg_job_watch_silence(pg_job_t *job, pg_rank_t *r)
{
    int seconds = job->ctx->opts->heartbeat;

    if (seconds <= 0)
        return 0;
    pg_output_set_activity(r->out, rank_output_heard, r);
    pg_output_set_activity(r->err, rank_output_heard, r);
    return pg_monitor_watch_silence(job->monitor, r->rank, (uint32_t)seconds);
}

/* "no heartbeat for 10 s (PMIx_Process_monitor, id MONITOR1)" */
static void describe_stall(const pg_monitor_alert_t *a, char *buf, size_t len)
{
    const pg_monitor_req_t *q = a->req;
    char id[96] = "";

    if (q->id != NULL)
        snprintf(id, sizeof(id), ", id %.64s", q->id);
    if (a->option)
        snprintf(buf, len, "no PMI message or output for %u s (--heartbeat)", a->silent_s);
    else if (q->kind == PG_MONITOR_FILE)
        snprintf(buf, len, "%.512s did not change for %u s (PMIx_Process_monitor%s)", q->path,
                 a->silent_s, id);
    else
        snprintf(buf, len, "no heartbeat for %u s (PMIx_Process_monitor%s)", a->silent_s, id);
}

/* A watch ran out: the job's PMIx processes hear the alert (the rank
 * itself too: it asked to be watched), the log names the rank, and the
 * job is killed -- unless the request left the response to the
 * application (PMIX_MONITOR_APP_CONTROL). */
static void job_monitor_alert(void *owner, const pg_monitor_alert_t *a)
{
    pg_job_t *job = owner;
    char why[768];

    if (job->ctx->tearing_down || job->ranks[a->rank].reaped)
        return;
    describe_stall(a, why, sizeof(why));
    (void)pg_job_engine_alert(job->je, a->rank, a->req->code, a->req->range, a->req->id,
                              a->req->path);
    if (a->req->app_control) {
        pg_job_log(job, "rank %d stalled: %s; the job goes on (PMIX_MONITOR_APP_CONTROL)",
                   a->rank, why);
        return;
    }
    if (pg_verdict_stalled(job->v, a->rank))
        pg_job_log(job, "rank %d stalled: %s; killing the job (exit status %d)", a->rank, why,
                   PG_EXIT_TIMEOUT);
    pg_job_ctx_teardown_told(job->ctx, job, a->rank);
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

/* A PMI_PORT connection of the root job says it is a tool's: the run's
 * tools take it (only the root job has the port). */
static int conn_tool(void *owner, pg_conn_t *conn, const char **why)
{
    pg_job_t *job = owner;

    if (job->port == NULL || job->ctx->tools == NULL) {
        *why = "this pmigate takes no tools";
        return -1;
    }
    return pg_job_tools_take(job->ctx->tools, conn, why);
}

static void conn_closed(void *owner, pg_conn_t *conn, const char *reason)
{
    pg_job_t *job = owner;
    int rank = pg_conn_rank(conn);
    int by_peer = pg_conn_closed_by_peer(conn);
    struct timeval grace = { 0, PG_JOB_LOST_GRACE_MS * 1000 };
    pg_rank_t *r;

    pg_port_forget(job->port, conn);
    if (rank < 0) { /* a PMI_PORT connection that never named its rank */
        if (reason != NULL && job->port != NULL)
            pg_port_complain(job->port, reason);
        pg_conn_free(conn);
        return;
    }
    r = &job->ranks[rank];
    if (conn == r->fd_conn)
        r->fd_conn = NULL;
    if (conn == r->pmi_conn)
        r->pmi_conn = NULL;
    pg_conn_free(conn);
    if (reason == NULL || job->ctx->tearing_down || r->reaped)
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

/* --stop-in-init / PMIX_DEBUG_STOP_IN_INIT: the rank's init waits for a
 * debugger's release (docs/user-guide.md, "Debuggers and tools"). */
static int conn_hold_init(void *owner, pg_conn_t *conn)
{
    pg_job_t *job = owner;
    int rank = pg_conn_rank(conn);

    return job->stop_in_init &&
           (job->stop_rank == PMIX_RANK_WILDCARD || (uint32_t)rank == job->stop_rank);
}

/* A rank, as any PMIx process may, released a job from init. */
static void conn_debugger_release(void *owner, pg_conn_t *conn, const char *nspace)
{
    pg_job_t *job = owner;

    (void)conn;
    pg_job_ctx_release_init(job->ctx, nspace);
}

/* The seam's spawn, from one of this job's ranks: the run's policy. */
static void conn_spawn(void *owner, pg_conn_t *conn, const pg_spawn_req_t *req,
                       pg_spawn_done_fn done, void *cbdata)
{
    pg_job_t *job = owner;

    job->ctx->ops->spawn(job, pg_conn_rank(conn), req, done, cbdata);
}

int pg_job_conns_init(pg_job_t *job)
{
    job->conn_ops = (pg_conn_owner_ops_t){
        .identify = conn_identify, .opened = conn_opened, .finalized = conn_finalized,
        .job_abort = conn_job_abort, .log_write = conn_log_write, .served = conn_served,
        .job_signal = conn_job_signal, .log_to = conn_log_to,
        .closed = conn_closed, .spawn = conn_spawn, .segment_reader = conn_segment_reader,
        .monitor = conn_monitor, .tool = conn_tool, .hold_init = conn_hold_init,
        .debugger_release = conn_debugger_release,
    };
    if (job->ctx->opts->heartbeat > 0)
        job->conn_ops.heard = conn_heard;
    job->monitor = pg_monitor_new(job->base, job_monitor_alert, job);
    return job->monitor != NULL ? 0 : -1;
}
