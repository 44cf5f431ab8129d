/*
 * pg_pmix_spawn.h: the one thing pg_pmix_spawn.c (PMIx_Spawn, PMIx_Connect,
 * PMIx_Disconnect) needs from the client core: its connection.
 */
#ifndef PG_PMIX_SPAWN_H
#define PG_PMIX_SPAWN_H

#include "pmix/client/pg_mux.h"

/* The client's multiplexer while PMIx is initialised, else NULL. */
pg_mux_t *pg_pmix_spawn_mux(void);

#endif
