/*
 * pg_spawn_wire: a rank's spawn request (pg_spawn_req_t) as the bytes of a
 * proxies' message, and back (`pmigate proxy`: the requesting node sends
 * it to node 0, node 0 to every node that starts a share of it).
 *
 * Why its own codec: the request is the seam's struct of borrowed
 * pointers; read back on another node it must own every string, and a
 * body that does not make a request (short, a count larger than the body,
 * a command of no processes) must be refused, never half read.
 */
#ifndef PG_SPAWN_WIRE_H
#define PG_SPAWN_WIRE_H

#include "gateway/mesh/pg_mesh_msg.h"
#include "server/pg_handler.h"

/* A request read back: req points into the rest, which it owns. */
typedef struct pg_spawn_wire {
    pg_spawn_req_t req;
    pg_spawn_cmd_t *cmds;
    pg_kv_t **kvs;  /* every key/value array: infos, preput, env */
    char **strs;    /* every string */
    size_t nstrs, nkvs;
    int total;      /* its processes, every command's maxprocs */
} pg_spawn_wire_t;

void pg_spawn_wire_pack(pg_mesh_wr_t *b, const pg_spawn_req_t *req);
/* 0 with *w filled (free it with pg_spawn_wire_free), or -1 with nothing
 * kept: r failed, or the request has no command, a command of no
 * processes, or more than PG_SPAWN_WIRE_MAX_PROCS processes in all. */
int pg_spawn_wire_unpack(pg_mesh_rd_t *r, pg_spawn_wire_t *w);
void pg_spawn_wire_free(pg_spawn_wire_t *w);

enum { PG_SPAWN_WIRE_MAX_PROCS = 1 << 20 };

#endif
