/*
 * pg_pmi2_mux: many threads, one PMI-2 socket — the thread multiplexer of
 * libpmi2, built the way MPICH's own PMI-2 client shares its socket.
 *
 *  - Every caller sends its request whole (writes are serialised) and then
 *    waits for its own reply.  Waiting never blocks other threads: the
 *    mutex is not held while anyone sleeps in read().
 *  - One waiter at a time is "the reader": it reads replies off the socket
 *    and hands each to its owner — by the echoed thrid= (hydra echoes it),
 *    else to the oldest waiter expecting that reply's command (servers that
 *    ignore thrid answer in order) — and wakes the owners through one
 *    condition variable.  When the reader's own reply has come, it gives the
 *    role up and another waiter takes it.
 *  - Single-threaded programs take a fast path: while only the thread that
 *    created the mux has ever called, a call is a plain write and read with
 *    no mutex and no thrid (two atomic operations guard the hand-over).  The
 *    first call from another thread switches the mux to threaded mode for
 *    good; that switch waits for the owner's call in flight, if any.
 *
 * A reply is copied out of the socket buffer into the caller's
 * pg_pmi2_reply_t, so it stays valid until pg_pmi2_reply_release().
 * Results are PMI2_* codes.
 */
#ifndef PG_PMI2_MUX_H
#define PG_PMI2_MUX_H

#include <stdbool.h>
#include <stddef.h>

#include "wire/pg_enc.h"
#include "wire/pg_wire.h"

typedef struct pg_pmi2_mux pg_pmi2_mux_t;

/* Writes one request into e.  thrid is NULL on the fast path, else the
 * id to send as thrid= so the server's echo can be routed back. */
typedef int (*pg_pmi2_build_fn)(pg_enc_t *e, const char *thrid, const void *args);

enum { PG_PMI2_REPLY_INLINE = 512 };

/* One reply, owned by the caller.  msg's tokens point into body. */
typedef struct pg_pmi2_reply {
    pg_msg_t msg;
    char *body;                 /* inline_body or a heap copy */
    size_t len;
    char inline_body[PG_PMI2_REPLY_INLINE];
} pg_pmi2_reply_t;

void pg_pmi2_reply_init(pg_pmi2_reply_t *r);
void pg_pmi2_reply_release(pg_pmi2_reply_t *r);

/* A mux over fd (owned: closed by pg_pmi2_mux_free).  The calling thread
 * becomes the owner for the fast path.  NULL when out of memory.  Free
 * shuts the socket down first: calls still waiting in other threads fail
 * with PMI2_FAIL, and it returns once they have left (no call may start
 * after it has begun). */
pg_pmi2_mux_t *pg_pmi2_mux_new(int fd);
void pg_pmi2_mux_free(pg_pmi2_mux_t *m);
/* Shuts the socket down without freeing: calls waiting for replies and
 * every later call fail with PMI2_FAIL, and the mux stays valid until
 * pg_pmi2_mux_free (PMI2_Finalize: let calls that already started end). */
void pg_pmi2_mux_shutdown(pg_pmi2_mux_t *m);

/* Threaded mode from the start (PMI2_Set_threaded, or tests). */
void pg_pmi2_mux_set_threaded(pg_pmi2_mux_t *m);
bool pg_pmi2_mux_threaded(const pg_pmi2_mux_t *m);

/* Sends build(args) and waits for the reply named expect (a PMI-2
 * *-response, or PMI-1 response_to_init for the init line), parsed into
 * *reply (initialised here; release it in every case).  PMI2_SUCCESS, or
 * PMI2_ERR_INVALID_ARG/INVALID_LENGTH when the request cannot be encoded,
 * PMI2_FAIL when the connection is broken. */
int pg_pmi2_mux_call(pg_pmi2_mux_t *m, pg_pmi2_build_fn build, const void *args, pg_cmd_t expect,
                     pg_pmi2_reply_t *reply);

/* Sends a request that has no reply (abort) at once, from any thread: it
 * neither waits for another thread's call nor switches to threaded mode. */
int pg_pmi2_mux_send(pg_pmi2_mux_t *m, pg_pmi2_build_fn build, const void *args);

/* Counters for tests and measurements, and what the threaded calls are
 * doing now (so a test can wait for a state instead of sleeping). */
typedef struct pg_pmi2_mux_stats {
    unsigned long fast_calls;     /* lock-free calls */
    unsigned long threaded_calls; /* calls through the mutex */
    unsigned long routed_by_thrid;
    unsigned long routed_in_order; /* replies without a thrid */
    unsigned long dropped;        /* replies nobody waited for */
    unsigned callers;             /* threaded calls under way now */
    bool reading;                 /* one of them is in read() for all */
} pg_pmi2_mux_stats_t;

void pg_pmi2_mux_stats(pg_pmi2_mux_t *m, pg_pmi2_mux_stats_t *out);

#endif
