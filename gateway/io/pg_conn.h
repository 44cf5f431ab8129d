/*
 * pg_conn: one PMI connection of a rank (its PMI_FD socketpair end, or a
 * socket accepted on the PMIGATE_PMI_PORT listener).  It reads into a capped
 * buffer, asks the wire framer for complete messages, parses them, tells
 * PMI-1 from PMI-2 by the first message, and hands each message to the
 * protocol handler (server/pg_handler.h), whose host it is: the handler
 * sees the connection as a pg_peer_t and answers through its ops.  A reply
 * goes straight to the socket when nothing is queued before it, else
 * through an evbuffer.  What concerns the whole job (an abort, the log, the
 * engine timer) goes to the connection's owner through
 * pg_conn_owner_ops_t: the connection knows nothing of the job.
 *
 * Everything runs on the gateway's single libevent thread.
 *
 * Ownership: the owner (the job) creates connections and frees them with
 * pg_conn_free(), which is safe to call from inside any callback the
 * connection made (the free is then deferred until the callback returns).
 * A pg_conn_t owns its fd.  The handler data (pg_peer_t.handler_data) is
 * owned by the handler and released in its on_close.
 */
#ifndef PG_CONN_H
#define PG_CONN_H

#include <stddef.h>

#include "server/pg_handler.h"

struct event_base;
typedef struct pg_conn pg_conn_t;

/* Largest input a connection buffers: the largest message the framer
 * accepts (a PMI-1 spawn block) plus one read's worth. */
enum { PG_CONN_INBUF_MAX = PG_PMI1_MCMD_MAX + 4096 };
/* Input a connection that has not yet said which rank it is (a PMI_PORT
 * peer before initack/fullinit) may buffer: its handshake is one PMI-2
 * body at most, so strangers cannot each hold a spawn block's worth. */
enum { PG_CONN_HELLO_MAX = PG_PMI2_BODY_MAX + 4096 };
/* Queued output above which a connection stops taking its peer's requests
 * until the peer reads its replies: a client that sends without reading
 * stalls itself instead of growing the gateway (nothing is lost; reading
 * resumes once the queue is half drained). */
enum { PG_CONN_OUT_PAUSE = 64 * 1024 };
/* Output a peer may leave unread before it is treated as stuck (what the
 * pause cannot hold back: replies completed later, fence pushes). */
enum { PG_CONN_OUTBUF_MAX = 16 * 1024 * 1024 };

typedef enum pg_conn_dir { PG_CONN_IN, PG_CONN_OUT } pg_conn_dir_t;

/* Sees every message in both directions (raw bytes, one message or one
 * batch of replies per call): --verbose and the trace recorder use it. */
typedef void (*pg_conn_trace_fn)(void *arg, const pg_conn_t *conn, pg_conn_dir_t dir,
                                 const char *bytes, size_t len);

/* What a connection tells its owner. */
typedef struct pg_conn_owner_ops {
    /* A listener connection names its rank (initack pmiid=, fullinit
     * pmirank=).  Return 0 to accept; -1 refuses (the connection closes,
     * with `why` in the message). */
    int (*identify)(void *owner, pg_conn_t *conn, int rank, const char **why);
    /* The first message arrived; the protocol is known (rank is known too). */
    void (*opened)(void *owner, pg_conn_t *conn);
    /* The handler marked the rank finalized (pg_conn_set_finalized). */
    void (*finalized)(void *owner, pg_conn_t *conn);
    /* The rank asked to end the whole job (a PMI abort): exit code `code`,
     * msg may be NULL. */
    void (*job_abort)(void *owner, pg_conn_t *conn, int code, const char *msg);
    /* A line the handler wrote for the job's log. */
    void (*log_write)(void *owner, pg_conn_t *conn, const char *line);
    /* The rank asked for signal `signo` to go to ranks[] (nranks 0: every
     * rank) of its job (PMIx_Job_control).  NULL: not offered. */
    void (*job_signal)(void *owner, pg_conn_t *conn, const int *ranks, size_t nranks, int signo);
    /* A batch of requests was handled (or replies were written): engine
     * calls may have moved the engine's next deadline. */
    void (*served)(void *owner, pg_conn_t *conn);
    /* The connection ended.  reason is NULL after a clean finalize (or for
     * a connection closed before it said anything), else a sentence naming
     * what went wrong ("closed its PMI connection before finalize").  The
     * owner may call pg_conn_free() here. */
    void (*closed)(void *owner, pg_conn_t *conn, const char *reason);
    /* The rank asks for a new job (pg_peer_ops_t.spawn).  NULL: the owner
     * cannot spawn, the request is refused as not supported. */
    void (*spawn)(void *owner, pg_conn_t *conn, const pg_spawn_req_t *req,
                  pg_spawn_done_fn done, void *cbdata);
    /* PMIx_Log to one channel (pg_peer_ops_t.log_to).  NULL: stderr only,
     * through log_write. */
    int (*log_to)(void *owner, pg_conn_t *conn, pg_log_channel_t channel, int priority,
                  const char *text);
    /* The peer reads the node's key segment (pg_peer_ops_t.segment_reader).
     * NULL: the owner keeps no segment. */
    void (*segment_reader)(void *owner, pg_conn_t *conn);
    /* PMIx_Process_monitor (pg_peer_ops_t.monitor): a PMIx status.  NULL:
     * the owner watches nothing (PMIX_ERR_NOT_SUPPORTED). */
    int (*monitor)(void *owner, pg_conn_t *conn, const pg_monitor_req_t *req);
    /* Bytes came from the peer (a sign of life, for --heartbeat); called
     * per read, before they are handled.  NULL: not wanted. */
    void (*heard)(void *owner, pg_conn_t *conn);
    /* A listener connection says it is a tool's (PMIx_tool_init's preamble,
     * wire/pg_pmix_frame.h PG_PMIX_FLAG_TOOL), not a rank's.  The owner
     * gives it a home of its own (pg_conn_rehome) and returns 0, or returns
     * -1 with `why` (the connection closes).  NULL: tools are refused. */
    int (*tool)(void *owner, pg_conn_t *conn, const char **why);
    /* The rank's first request (its init: PMI-1/PMI-2 init, PMIx_Init,
     * after the PMIx preamble) is about to be taken: return 1 to hold it,
     * unanswered, until pg_conn_release_hold (a debugger's
     * PMIX_DEBUG_STOP_IN_INIT).  Asked once, when the rank is known; a
     * PMI_PORT connection's first request after it named its rank.  NULL:
     * never held. */
    int (*hold_init)(void *owner, pg_conn_t *conn);
    /* The peer released job `nspace` (NULL: every job) from init
     * (pg_peer_ops_t.debugger_release).  NULL: nothing is held here. */
    void (*debugger_release)(void *owner, pg_conn_t *conn, const char *nspace);
} pg_conn_owner_ops_t;

/* Takes ownership of fd (made non-blocking).  rank < 0: a listener
 * connection whose rank is learned from its handshake.  job (what the
 * handlers read of the job), handlers and ops are borrowed and must outlive
 * the connection; job may be NULL for handlers that read nothing of it
 * (unit tests).  Returns NULL when out of memory (fd is then closed). */
pg_conn_t *pg_conn_new(struct event_base *base, int fd, int rank, const pg_peer_job_t *job,
                       const pg_handler_table_t *handlers, const pg_conn_owner_ops_t *ops,
                       void *owner);
/* Closes the connection (handler on_close runs if the handler was opened;
 * the owner's `closed` does not) and frees it. */
void pg_conn_free(pg_conn_t *conn);

/* ---- what the handlers reach through the seam ---- */

int pg_conn_rank(const pg_conn_t *conn);          /* -1 until identified */
pg_proto_t pg_conn_proto(const pg_conn_t *conn);

/* The handle the handler sees, and back: a pg_peer_t of a connection is
 * always the one inside its pg_conn_t. */
pg_peer_t *pg_conn_peer(pg_conn_t *conn);
pg_conn_t *pg_conn_of(pg_peer_t *peer);

/* The peer's reply_send: writes bytes now (directly when nothing is queued
 * before them) and queues what the socket does not take.  Returns 0, or -1
 * if the connection is closed or its output is over the cap (the connection
 * is then failed). */
int pg_conn_send(pg_conn_t *conn, const void *bytes, size_t len);

/* The peer's peer_finalize: its EOF or exit is no longer a failure. */
void pg_conn_set_finalized(pg_conn_t *conn);

/* ---- for the owner ---- */

/* The connection now belongs to another owner (`ops`, `owner`), speaks for
 * process `rank` of `job` (borrowed, outliving the connection): a tool's
 * connection leaving the job that accepted it (see the `tool` op). */
void pg_conn_rehome(pg_conn_t *conn, const pg_peer_job_t *job, int rank,
                    const pg_conn_owner_ops_t *ops, void *owner);

/* A connection held by hold_init takes its requests again, the held init
 * first.  Nothing for a connection not held. */
void pg_conn_release_hold(pg_conn_t *conn);
/* Is the connection held in init (hold_init)? */
int pg_conn_held(const pg_conn_t *conn);

void pg_conn_set_trace(pg_conn_t *conn, pg_conn_trace_fn fn, void *arg);
/* Reads whatever the socket holds now and dispatches it; used when the
 * rank's process has been reaped, so an abort it sent just before exiting
 * is seen before its exit status is judged. */
void pg_conn_drain(pg_conn_t *conn);
/* 1 if the connection ended because the peer went away (EOF, reset) rather
 * than because of what it sent: the owner may wait for the process to be
 * reaped before judging it. */
int pg_conn_closed_by_peer(const pg_conn_t *conn);

#endif
