/*
 * pg_handler: the seam between the gateway's connection layer and the
 * protocol handlers (pmi1/, pmi2/, later pmix/).  The gateway frames and
 * parses bytes; a handler turns each complete message into engine calls and
 * writes the replies with the wire encoders.  Handlers never touch file
 * descriptors, sockets or processes: everything they need goes through
 * pg_conn.h (this connection) and pg_job.h (the job it belongs to).
 *
 * Life of a connection as a handler sees it:
 *   on_open    once, when the first message shows which protocol the
 *              connection speaks (PMI-1 "cmd=init pmi_version=1", or
 *              "pmi_version=2" for PMI-2, or the PMIx preamble; a PMI_FD
 *              connection's rank is already known then);
 *   on_message for every complete message, in order, starting with that
 *              first one (the handler answers init itself);
 *   on_close   once, however the connection ends (finalize, EOF, framing
 *              error, job teardown).  Release per-connection state here.
 *
 * A handler whose request completes later (held get, fence) keeps the
 * pg_conn_t pointer only until on_close, then must drop it (the engine's
 * pg_proc_lost() completes held requests before on_close returns anyway).
 */
#ifndef PG_HANDLER_H
#define PG_HANDLER_H

#include <stddef.h>

#include "wire/pg_wire.h"

typedef struct pg_conn pg_conn_t;

/* Return values of on_message. */
enum {
    PG_HANDLER_OK = 0,     /* carry on reading */
    PG_HANDLER_CLOSE = 1,  /* close after the pending output is written (finalize) */
    PG_HANDLER_FAIL = -1,  /* protocol violation the handler cannot answer:
                              the connection is closed and its rank failed */
};

typedef struct pg_proto_handler {
    const char *name; /* "PMI-1", "PMI-2": used in messages */

    /* May set per-connection state with pg_conn_set_handler_data().
     * Returns 0, or -1 to refuse the connection (rank failed). */
    int (*on_open)(pg_conn_t *conn);

    /* One complete message; msg and its tokens point into the receive buffer
     * and are valid only during the call.  parse_rc is 0, or the parser's
     * negative pg_wire_err_t for a framed but malformed message (answer it
     * with an error reply: the connection stays usable; msg->err_reason has
     * the text).  Returns PG_HANDLER_*. */
    int (*on_message)(pg_conn_t *conn, pg_msg_t *msg, int parse_rc);

    /* The connection is going away; free the handler data.  May be NULL. */
    void (*on_close)(pg_conn_t *conn);

    /* Binary protocols (PMIx, wire/pg_pmix_frame.h) get each frame's payload
     * here instead of on_message: `payload` points into the receive buffer
     * and is valid only during the call.  Returns PG_HANDLER_*. */
    int (*on_frame)(pg_conn_t *conn, const char *payload, size_t len);
} pg_proto_handler_t;

/* The handlers a job's connections dispatch to, by protocol.  A NULL entry:
 * connections speaking that protocol are answered with nothing and closed
 * with a clear message naming the rank. */
typedef struct pg_handler_table {
    const pg_proto_handler_t *by_proto[PG_PROTO_PMIX + 1];
} pg_handler_table_t;

#endif
