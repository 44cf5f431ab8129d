/*
 * pg_mux: libpmix's connection to the gateway and its request router.
 *
 * Why it exists: PMIx is asynchronous by design (Fence_nb, Get_nb, held
 * gets that answer seconds later) and programs call it from many threads,
 * while there is one socket.  The mux owns that socket and one progress
 * thread: requests carry an id, the thread reads every reply, and routes it
 * by id to whoever waits -- a blocking caller sleeping on a condition
 * variable, or a callback the thread runs itself.  Replies may arrive in
 * any order.  Work that must run "later, on the progress thread" (a Get_nb
 * answered from the cache) is queued with pg_mux_defer, so user callbacks
 * always run on the progress thread and never inside the call that
 * started them.
 *
 * Wire: wire/pg_pmix_frame.h (preamble, frames) and
 * wire/pg_pmix_msg.h (message header).
 *
 * Threads: every function may be called from any thread, except
 * pg_mux_free (once, when no other call is in progress but callers
 * blocked in pg_mux_call, which it fails and waits for).  Blocking calls
 * made from the progress thread (inside a callback) would wait for
 * themselves: they fail with PMIX_ERR_WOULD_BLOCK instead.  In a child
 * forked after the mux was made every request fails at once with
 * PMIX_ERR_UNREACH (it has no progress thread, and its socket is its
 * parent's); pg_mux_free there only drops the child's copies.
 *
 * Ownership: the mux owns its fd.  Request buffers passed to pg_mux_send_nb
 * / pg_mux_call are consumed (destructed) in every case.
 */
#ifndef PG_MUX_H
#define PG_MUX_H

#include <stdbool.h>
#include <stdint.h>

#include <pmix_common.h>

typedef struct pg_mux pg_mux_t;

/* A reply for a non-blocking request, run on the progress thread.
 * `reply` is positioned after the status and valid only during the call;
 * it is NULL when the request failed locally (status
 * PMIX_ERR_LOST_CONNECTION when the connection went away). */
typedef void (*pg_mux_reply_fn)(pmix_status_t status, pmix_data_buffer_t *reply, void *arg);

/* Work queued with pg_mux_defer. */
typedef void (*pg_mux_work_fn)(void *arg);

/* Frames the gateway sends unasked (PG_PMIX_CMD_EVENT, request id 0), run
 * on the progress thread: `code` is the event status, `body` is positioned
 * after it and valid only during the call. */
typedef void (*pg_mux_event_fn)(pmix_status_t code, pmix_data_buffer_t *body, void *arg);

/* The connection broke (EOF, error, malformed frame) -- not a
 * pg_mux_free: run once on the progress thread, after the pending requests
 * failed. */
typedef void (*pg_mux_lost_fn)(void *arg);

/* Takes ownership of `fd` (a connected stream socket), sends the PMIx
 * preamble naming `rank` (PG_PMIX_RANK_FROM_FD on a PMI_FD socketpair) and
 * starts the progress thread.  NULL on failure (fd closed). */
pg_mux_t *pg_mux_new(int fd, uint32_t rank);
/* The same for a tool (PMIx_tool_init): the preamble says PG_PMIX_FLAG_TOOL
 * instead of a rank. */
pg_mux_t *pg_mux_new_tool(int fd);

/* Stops the progress thread, completes every request still pending with
 * PMIX_ERR_LOST_CONNECTION, runs queued work, waits until the callers so
 * woken have left pg_mux_call, closes the socket, frees.  NULL is ignored. */
void pg_mux_free(pg_mux_t *m);

/* Starts a request in the empty buffer `buf`: allocates an id and packs the
 * header.  The caller packs the arguments, then hands buf to
 * pg_mux_send_nb or pg_mux_call with the id. */
pmix_status_t pg_mux_begin(pg_mux_t *m, pmix_data_buffer_t *buf, uint8_t cmd, uint32_t *id);

/* Sends; `fn(arg)` runs once with the reply on the progress thread.  On an
 * error return fn is never called. */
pmix_status_t pg_mux_send_nb(pg_mux_t *m, pmix_data_buffer_t *buf, uint32_t id,
                             pg_mux_reply_fn fn, void *arg);

/* Sends and waits.  Returns the server's status (or a local error); on
 * return `reply` (constructed by the callee) holds the rest of the reply,
 * positioned after the status; the caller destructs it. */
pmix_status_t pg_mux_call(pg_mux_t *m, pmix_data_buffer_t *buf, uint32_t id,
                          pmix_data_buffer_t *reply);

/* Runs fn(arg) on the progress thread soon: after the replies already
 * read, before any reply read later (so callbacks come in the order of the
 * calls that caused them).  PMIX_ERR_NOMEM when it cannot be queued. */
pmix_status_t pg_mux_defer(pg_mux_t *m, pg_mux_work_fn fn, void *arg);

/* Sets the hooks for unasked frames and for a lost connection (NULL:
 * none).  Set them before the first request, so no frame can come first. */
void pg_mux_set_hooks(pg_mux_t *m, pg_mux_event_fn on_event, pg_mux_lost_fn on_lost, void *arg);

/* True when called from the progress thread. */
bool pg_mux_on_progress_thread(const pg_mux_t *m);

/* False once the connection has gone (EOF, error, malformed reply). */
bool pg_mux_connected(pg_mux_t *m);

#endif
