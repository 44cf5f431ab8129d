/*
 * pg_pmi_spawn: a spawn request as the PMI wires carry it, turned into the
 * seam's pg_spawn_req_t.  PMI-1 sends one mcmd block per command
 * (docs/wire-protocol.md, "Spawn blocks": argN from 1, preput_key_i and
 * info_key_i from 0, totspawns/spawnssofar saying which block is last, the
 * preputs in every block (MPICH 4.0) or only the first (newer MPICH)); PMI-2
 * sends one message whose segments start at each subcmd= ("PMI-2 spawn":
 * argvN, ppkeyN, infokeyN from 0).  Keys are looked up by name within a segment,
 * as hydra does, so every client's ordering is accepted; a count that does
 * not match its numbered keys is refused with a clear message.
 *
 * Ownership: the builder copies every string it keeps; the request it
 * returns is valid until pg_pmi_spawn_free.
 */
#ifndef PG_PMI_SPAWN_H
#define PG_PMI_SPAWN_H

#include <stddef.h>

#include "server/pg_handler.h"
#include "wire/pg_wire.h"

typedef struct pg_pmi_spawn pg_pmi_spawn_t;

pg_pmi_spawn_t *pg_pmi_spawn_new(void);
void pg_pmi_spawn_free(pg_pmi_spawn_t *sp);

/* A whole PMI-2 spawn message.  0, or -1 with err set (no spaces: it goes
 * out as errmsg=). */
int pg_pmi_spawn_parse_pmi2(pg_pmi_spawn_t *sp, const pg_msg_t *msg, char *err, size_t errlen);

/* One PMI-1 mcmd=spawn block.  1 when it was the last (spawnssofar =
 * totspawns), 0 when more blocks follow, -1 with err set. */
int pg_pmi_spawn_add_pmi1_block(pg_pmi_spawn_t *sp, const pg_msg_t *msg, char *err, size_t errlen);

/* The request built so far. */
const pg_spawn_req_t *pg_pmi_spawn_req(const pg_pmi_spawn_t *sp);

/* Total processes asked for (the length of the errcodes list). */
int pg_pmi_spawn_nprocs(const pg_pmi_spawn_t *sp);

#endif
