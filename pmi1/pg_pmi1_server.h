/*
 * pg_pmi1_server: the PMI-1 protocol handler of the gateway.  It turns each
 * PMI-1 request (MPICH's simple PMI client inside libmpich, hydra's wire
 * dialect: docs/wire-protocol.md, "PMI-1 commands") into engine calls and
 * writes the replies with the wire encoders.
 *
 * Semantics (docs/wire-protocol.md, "Semantics"; the engine calls:
 * docs/engine.md, "What each protocol handler calls"):
 *  - put is put(GLOBAL) + commit at once: the process reads its own key back
 *    at once, the others at the latest after the next barrier;
 *  - get never waits: a RANK_UNDEF lookup answered from what is committed;
 *    missing -> "rc=-1 msg=key_<k>_not_found value=unknown", value= last;
 *    PMI_* keys and universeSize come from the job's attributes;
 *  - barrier_in commits and joins a fence over the whole job (collecting);
 *    barrier_out is sent to everyone once the last rank entered;
 *  - keyval_cache lines (hydra's proxy-internal push of the epoch's new
 *    keys) are sent before barrier_out ONLY to a client that asked for them
 *    with "pmigate_keyval_cache=yes" in its init line: MPICH 4.0's client
 *    expects barrier_out as the very next line and fails on anything else;
 *  - spawn (mcmd blocks) goes to the host through the seam's spawn op and
 *    is answered once every child started or failed, with errcodes;
 *  - unknown commands, create_kvs/destroy_kvs/singinit and malformed or
 *    over-limit messages get an error reply (rc=-1 msg=...) and the
 *    connection stays usable.
 */
#ifndef PG_PMI1_SERVER_H
#define PG_PMI1_SERVER_H

#include "server/pg_handler.h"

/* The opt-in a PMI-1 client adds to its init line to receive keyval_cache
 * lines before each barrier_out: "<key>=yes". */
#define PG_PMI1_KEYVAL_CACHE_ATTR "pmigate_keyval_cache"

/* The most tokens MPICH 4.0 keeps per line (the longest reply line,
 * PG_PMI1_REPLY_LINE_MAX, is in wire/pg_wire.h). */
enum { PG_PMI1_REPLY_TOKENS_MAX = 64 };

/* Stateless table; the per-connection state is the handler data. */
extern const pg_proto_handler_t pg_pmi1_handler;

#endif
