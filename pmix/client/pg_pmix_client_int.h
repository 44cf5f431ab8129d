/*
 * pg_pmix_client_int: what libpmix's API files share inside the library.
 *
 * Why it exists: the PMIx API is process-wide, so libpmix has one client
 * state (pg_pmix_client.c: the mux, the identity, the life cycle).  The
 * event, query and log files (pg_pmix_event.c, pg_pmix_query.c,
 * pg_pmix_log.c) reach it through these calls instead of sharing the
 * structure; none of this is exported (libpmix exports only PMIx_*).
 */
#ifndef PG_PMIX_CLIENT_INT_H
#define PG_PMIX_CLIENT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <pmix_common.h>

#include "pmix/client/pg_mux.h"

/* ---- pg_pmix_client.c ---- */

/* The connection while the client is initialized, else NULL. */
pg_mux_t *pg_client_mux(void);
/* This process's identity (zeroes before PMIx_Init). */
void pg_client_self(pmix_proc_t *self);
/* Sends a request whose reply is a status only, and waits for it. */
pmix_status_t pg_client_call_status(pmix_data_buffer_t *req, uint32_t id);
/* Sends it without waiting; fn(status, arg) runs on the progress thread. */
pmix_status_t pg_client_send_op_nb(pmix_data_buffer_t *req, uint32_t id, pmix_op_cbfunc_t fn,
                                   void *arg);

/* Makes the connection to the gateway into *mux (0 or a PMIx status). */
typedef pmix_status_t (*pg_client_connect_fn)(void *arg, pg_mux_t **mux);
/* PMIx_tool_init's start: as PMIx_Init, but connected by `connect` (the
 * tool's socket) and without the node's key segment. */
pmix_status_t pg_client_start_tool(pmix_proc_t *proc, pg_client_connect_fn connect, void *arg);

/* ---- pg_pmix_event.c ---- */

/* PMIx_Init, before the handshake: unasked event frames and a broken
 * connection reach the event handlers from now on. */
void pg_client_events_attach(pg_mux_t *m);
/* PMIx_Finalize, before it tells the gateway: the connection's end is no
 * longer an event. */
void pg_client_events_quiet(void);
/* PMIx_Finalize, after the mux is gone: every handler is dropped (a later
 * PMIx_Init starts with none, as OpenPMIx does). */
void pg_client_events_detach(void);

#endif
