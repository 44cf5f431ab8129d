/*
 * pg_pmix_server: the gateway's PMIx protocol handler.
 *
 * Why it exists: a PMIx client (pmigate's libpmix) talks to the same
 * gateway as PMI-1 and PMI-2 ranks, over the same PMI_FD socketpair; the
 * connection layer recognises its preamble (wire/pg_pmix_frame.h) and hands
 * every frame's payload to this handler, which turns it into engine calls
 * (engine/pg_engine.h) one to one and answers with the engine's PMIx
 * status unchanged.  The message layouts are in docs/pmix-transport.md.
 *
 * Requests the engine answers later (held gets, fences, waiting lookups)
 * are records linked to the connection's session; when the connection
 * closes they are detached and the engine's completion only frees them.
 */
#ifndef PG_PMIX_SERVER_H
#define PG_PMIX_SERVER_H

#include "server/pg_handler.h"

/* The entry for PG_PROTO_PMIX in the gateway's handler table. */
extern const pg_proto_handler_t pg_pmix_handler;

#endif
