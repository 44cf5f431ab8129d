/*
 * pg_handler: the seam between the protocol handlers (pmi1/, pmi2/,
 * pmix/server/) and the host that runs them (the gateway's connection layer,
 * gateway/io/pg_conn.c; a test harness; later a per-node proxy or a replay
 * gateway).  It sits below both, so the handlers include nothing of their
 * host and any host can serve them, the way the engine is given its host
 * (pg_engine_new(ops, ctx)) and flux-core's simple PMI server its client
 * (ops.response_send(client, resp)).
 *
 * The host frames and parses bytes; a handler turns each complete message
 * into engine calls and writes the replies with the wire encoders.
 * Handlers never touch file descriptors, sockets or processes.
 *
 * Two directions, one crossing each:
 *  - host -> handler: pg_proto_handler_t, one call per message (on_message,
 *    or on_frame for PMIx);
 *  - handler -> host: the peer's ops table (pg_peer_ops_t), one call per
 *    reply (reply_send).  What a handler reads on every request -- the rank,
 *    the job's name and size, the engine -- is plain data in pg_peer_t and
 *    pg_peer_job_t, not a call.
 *
 * Life of a connection as a handler sees it:
 *   on_open    once, when the first message shows which protocol the
 *              connection speaks (PMI-1 "cmd=init pmi_version=1", or
 *              "pmi_version=2" for PMI-2, or the PMIx preamble; a PMI_FD
 *              connection's rank is already known then);
 *   on_message for every complete message, in order, starting with that
 *              first one (the handler answers init itself);
 *   on_close   once, however the connection ends (finalize, EOF, framing
 *              error, job teardown).  Release the handler data here.
 *
 * A handler whose request completes later (held get, fence) keeps the
 * pg_peer_t pointer only until on_close, then must drop it (the engine's
 * pg_proc_lost() completes held requests before on_close returns anyway).
 */
#ifndef PG_HANDLER_H
#define PG_HANDLER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wire/pg_enc.h"
#include "wire/pg_wire.h"

typedef struct pg_engine pg_engine_t;
typedef struct pg_peer pg_peer_t;

/* ---- handler -> host -------------------------------------------------- */

/* The job every peer of a host belongs to.  The host fills it before the
 * first connection opens and keeps it, unchanged, until the last closes. */
typedef struct pg_peer_job {
    const char *kvsname;    /* PMI-1 kvsname = PMI-2 jobid = PMIx nspace */
    int size;               /* ranks in the job */
    int universe_size;
    const uint32_t *appnum; /* [size] MPMD segment of each rank; NULL = all 0 */
    pg_engine_t *engine;    /* the job's store; NULL: the host keeps none */
    const char *parent_kvsname; /* the job that spawned this one, NULL: none */
    /* A tool's connection (PMIx_tool_init; kvsname is then the tool's own
     * namespace, size 1): the namespace of the job it attached to and the
     * socket it came by (PMIX_SERVER_NSPACE, PMIX_SERVER_URI).  NULL for a
     * rank's. */
    const char *server_nspace;
    const char *server_uri;
} pg_peer_job_t;

/* A spawn request (PMI-1 mcmd blocks, PMI-2 spawn, PMIx_Spawn), borrowed
 * for the call: the commands make one new job, ranks numbered in command
 * order, appnum = command index; the preput keys are in the new job's store
 * before its first process starts. */
typedef struct pg_spawn_req {
    int ncmds;
    const pg_spawn_cmd_t *cmds;  /* [ncmds] */
    int npreput;
    const pg_kv_t *preput;       /* [npreput] */
    const pg_kv_t *env;          /* [nenv] variables set in every child, or NULL */
    int nenv;
    /* PMIx_Spawn's job info asked for PMIX_EVENT_JOB_END when the new job
     * ends (PMIX_NOTIFY_COMPLETION or PMIX_NOTIFY_JOB_EVENTS): the host
     * raises it to the spawner's job; end_silent_ok (PMIX_EVENT_SILENT_TERMINATION):
     * not when every process exited 0.  0 for PMI-1 and PMI-2 spawns. */
    int notify_end;
    int end_silent_ok;
    /* PMIx_Spawn's PMIX_DEBUG_STOP_IN_INIT: the new job's rank stop_rank
     * (PMIX_RANK_WILDCARD: every rank) is held in init until a
     * PMIX_DEBUGGER_RELEASE (debugger_release below).  0 otherwise. */
    int stop_in_init;
    uint32_t stop_rank;
} pg_spawn_req_t;

/* How a spawn ended, borrowed for the completion call. */
typedef struct pg_spawn_result {
    int rc;                 /* 0: the job exists; else a PMIx status (< 0) and
                               nothing runs */
    const char *errmsg;     /* with rc != 0: one word-ish line, no spaces */
    const char *jobid;      /* the new job's kvsname (NULL with rc != 0) */
    int nprocs;             /* processes asked for */
    const int *errcodes;    /* [nprocs] 0, or the errno of a child that could
                               not start (the rest of the job is then torn
                               down, see docs/user-guide.md); NULL: all 0 */
} pg_spawn_result_t;

typedef void (*pg_spawn_done_fn)(const pg_spawn_result_t *res, void *cbdata);

/* The PMIx_Log channels a host may serve (PMIX_LOG_STDOUT, PMIX_LOG_STDERR,
 * PMIX_LOG_SYSLOG / PMIX_LOG_LOCAL_SYSLOG). */
typedef enum pg_log_channel {
    PG_LOG_STDOUT,
    PG_LOG_STDERR,
    PG_LOG_SYSLOG,
} pg_log_channel_t;

/* PMIx_Process_monitor, as a handler hands it to its host (borrowed for
 * the call).  The host watches the peer's process: every `period_s`
 * seconds a heartbeat must have come (PG_MONITOR_HEARTBEAT) or the file
 * must have changed in one of the `file_checks` ways (PG_MONITOR_FILE);
 * after more than `drops` misses in a row it raises event `code` (range
 * `range`, PMIx values) naming the process (and the file), writes the
 * job's log line naming the rank and, unless `app_control`, ends the job. */
typedef enum pg_monitor_kind {
    PG_MONITOR_HEARTBEAT, /* PMIX_MONITOR_HEARTBEAT */
    PG_MONITOR_FILE,      /* PMIX_MONITOR_FILE */
    PG_MONITOR_BEAT,      /* PMIX_SEND_HEARTBEAT (PMIx_Heartbeat) */
    PG_MONITOR_CANCEL,    /* PMIX_MONITOR_CANCEL: `id`, NULL = all of the peer's */
} pg_monitor_kind_t;

enum { PG_MONITOR_SIZE = 1, PG_MONITOR_ACCESS = 2, PG_MONITOR_MODIFY = 4 };

typedef struct pg_monitor_req {
    pg_monitor_kind_t kind;
    const char *id;       /* PMIX_MONITOR_ID, NULL: none */
    int code;             /* the alert's event code */
    int range;            /* the alert's pmix_data_range_t */
    uint32_t period_s;    /* PMIX_MONITOR_HEARTBEAT_TIME / _FILE_CHECK_TIME (> 0) */
    uint32_t drops;       /* PMIX_MONITOR_HEARTBEAT_DROPS / _FILE_DROPS */
    const char *path;     /* PG_MONITOR_FILE */
    unsigned file_checks; /* PG_MONITOR_SIZE | _ACCESS | _MODIFY (at least one) */
    int app_control;      /* PMIX_MONITOR_APP_CONTROL: the job stays */
} pg_monitor_req_t;

/* What a handler asks of its host.  Every hook but job_signal, spawn,
 * log_to, segment_reader and monitor is set (a host that has nothing to do
 * for one still provides it). */
typedef struct pg_peer_ops {
    /* Sends bytes (one or more complete messages) to the peer, now or as
     * soon as it reads.  Returns 0, or -1 when the peer is gone or its
     * output is over the host's cap (the host then fails the peer). */
    int (*reply_send)(pg_peer_t *peer, const void *bytes, size_t len);
    /* The peer asked to end the whole job with exit code `code`; msg may be
     * NULL.  Safe to call more than once; the first failure wins. */
    void (*job_abort)(pg_peer_t *peer, int code, const char *msg);
    /* The peer sent finalize: its EOF or exit is no longer a failure. */
    void (*peer_finalize)(pg_peer_t *peer);
    /* Monotonic nanoseconds: the `now` engine calls take. */
    uint64_t (*clock_now)(pg_peer_t *peer);
    /* One line for the job's log (no trailing newline). */
    void (*log_write)(pg_peer_t *peer, const char *line);
    /* Job control (PMIx_Job_control): send signal `signo` to ranks[] of
     * the peer's job (nranks 0: every rank), those still running.  May be
     * NULL: the host cannot signal its ranks (the request is then answered
     * PMIX_ERR_NOT_SUPPORTED). */
    void (*job_signal)(pg_peer_t *peer, const int *ranks, size_t nranks, int signo);
    /* Starts a new job (split-phase): `done` runs exactly once, when every
     * child has started or failed -- possibly before spawn returns.  If
     * the peer closes first, `done` still runs (the handler then only
     * frees its record).  NULL: this host cannot spawn. */
    void (*spawn)(pg_peer_t *peer, const pg_spawn_req_t *req, pg_spawn_done_fn done,
                  void *cbdata);
    /* PMIx_Log: `text` (the rank's own, raw) to one channel.  The host
     * names the rank, escapes the text as it does an abort message and
     * writes it as one whole line, so it never mixes with the ranks'
     * output; `priority` is syslog's (LOG_*) for PG_LOG_SYSLOG.  Returns
     * 0, or -1 when the host does not serve that channel.  May be NULL:
     * then PG_LOG_STDERR only, through log_write. */
    int (*log_to)(pg_peer_t *peer, pg_log_channel_t channel, int priority, const char *text);
    /* The peer's client library reads the node's shared key segment
     * (docs/shm-segment.md; it said so in its handshake, see
     * wire/pg_shm_format.h PG_SHM_READER_ATTR).  The host writes a segment
     * after a fence only while some peer of the job does.  May be NULL: a
     * host that keeps no segment. */
    void (*segment_reader)(pg_peer_t *peer);
    /* PMIx_Process_monitor (pg_monitor_req_t).  Returns a PMIx status:
     * PMIX_SUCCESS, PMIX_ERR_NOT_FOUND (cancel: no such watch),
     * PMIX_ERR_EXISTS (the id is in use), PMIX_ERR_NOMEM.  May be NULL: the
     * host watches nothing (the request is answered PMIX_ERR_NOT_SUPPORTED). */
    int (*monitor)(pg_peer_t *peer, const pg_monitor_req_t *req);
    /* The peer sent PMIX_DEBUGGER_RELEASE (a debugger's PMIx_Notify_event)
     * naming job `nspace` (NULL: it named none, every job it reaches):
     * the host lets that job's ranks it holds in init go on.  May be NULL:
     * the host holds no rank. */
    void (*debugger_release)(pg_peer_t *peer, const char *nspace);
} pg_peer_ops_t;

/* One connected process as its handler sees it.  The host embeds it in its
 * own connection record and fills every field but handler_data. */
struct pg_peer {
    const pg_peer_ops_t *ops;
    const pg_peer_job_t *job;
    int rank;               /* -1 until the handshake named it (PMI_PORT) */
    void *handler_data;     /* the handler's: set in on_open, freed in on_close */
};

/* The MPMD segment (appnum) of the peer's rank; -1 while it has none. */
static inline int pg_peer_appnum(const pg_peer_t *peer)
{
    if (peer->rank < 0 || peer->rank >= peer->job->size)
        return -1;
    return peer->job->appnum != NULL ? (int)peer->job->appnum[peer->rank] : 0;
}

/* The peer reads the node's shared key segment (see segment_reader). */
static inline void pg_peer_reads_segment(pg_peer_t *peer)
{
    if (peer->ops->segment_reader != NULL)
        peer->ops->segment_reader(peer);
}

/* The host's clock (monotonic nanoseconds): the `now` of engine calls. */
static inline uint64_t pg_peer_now(pg_peer_t *peer)
{
    return peer->ops->clock_now(peer);
}

/* The job's log, printf-style (the line is cut at 1 KiB). */
static inline void pg_peer_log(pg_peer_t *peer, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void pg_peer_log(pg_peer_t *peer, const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    peer->ops->log_write(peer, line);
}

/* ---- host -> handler -------------------------------------------------- */

/* Return values of on_message and on_frame. */
enum {
    PG_HANDLER_OK = 0,     /* carry on reading */
    PG_HANDLER_CLOSE = 1,  /* close after the pending output is written (finalize) */
    PG_HANDLER_FAIL = -1,  /* protocol violation the handler cannot answer:
                              the connection is closed and its rank failed */
};

typedef struct pg_proto_handler {
    const char *name; /* "PMI-1", "PMI-2": used in messages */

    /* May set peer->handler_data.  Returns 0, or -1 to refuse the
     * connection (rank failed). */
    int (*on_open)(pg_peer_t *peer);

    /* One complete message; msg and its tokens point into the receive buffer
     * and are valid only during the call.  parse_rc is 0, or the parser's
     * negative pg_wire_err_t for a framed but malformed message (answer it
     * with an error reply: the connection stays usable; msg->err_reason has
     * the text).  Returns PG_HANDLER_*. */
    int (*on_message)(pg_peer_t *peer, pg_msg_t *msg, int parse_rc);

    /* The connection is going away; free the handler data.  May be NULL. */
    void (*on_close)(pg_peer_t *peer);

    /* Binary protocols (PMIx, wire/pg_pmix_frame.h) get each frame's payload
     * here instead of on_message: `payload` points into the receive buffer
     * and is valid only during the call.  Returns PG_HANDLER_*. */
    int (*on_frame)(pg_peer_t *peer, const char *payload, size_t len);
} pg_proto_handler_t;

/* The handlers a host's connections dispatch to, by protocol.  A NULL entry:
 * connections speaking that protocol are answered with nothing and closed
 * with a clear message naming the rank. */
typedef struct pg_handler_table {
    const pg_proto_handler_t *by_proto[PG_PROTO_PMIX + 1];
} pg_handler_table_t;

#endif
