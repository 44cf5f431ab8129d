/*
 * pg_jobend: how a job over several nodes ends -- one exit status for all
 * of them, whatever fails where (docs/proxy.md, "The first failure
 * decides, job-wide").
 *
 * Why: each proxy judges only its own node's ranks, and the host runtime
 * reports whichever proxy's status reaches it first; a rank that fails
 * right after another node's MPI_Abort would otherwise make the job exit
 * with its status instead of the abort's.  So each node sends its first
 * failure to node 0 over the mesh, node 0 picks the job's first
 * one (pg_jobend_before) after a short settling time and tells every node
 * the job's end; every proxy then ends its ranks and exits with that one
 * status, and nobody needs the host's abort.  A node whose link breaks or
 * falls silent is a failure of the job (exit status 1, as a rank lost with
 * no status of its own), told to node 0 by the nodes linked with it; a
 * node cut off from node 0 decides alone.
 *
 * Threads and ownership: the libevent thread of the mesh.  The jobend
 * borrows the mesh and the node names; it registers itself for the mesh's
 * gone reports and its two frame types.
 */
#ifndef PG_JOBEND_H
#define PG_JOBEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/mesh/pg_mesh.h"

typedef struct pg_jobend pg_jobend_t;

enum {
    PG_JOBEND_SETTLE_MS = 200,  /* node 0 waits this long for earlier failures */
    PG_JOBEND_ABORT_MS = 50,    /* an abort wins over a failure stamped this much before it */
    PG_JOBEND_WAIT_MS = 2000,   /* a failed node waits this long for node 0's decision */
    PG_JOBEND_ALONE_MS = 1000,  /* a node that lost node 0's link waits this long for its end */
    PG_JOBEND_TEXT_MAX = 320,
};

/* One node's first failure, as node 0 weighs it. */
typedef struct pg_jobend_failure {
    uint64_t when_ns;          /* CLOCK_REALTIME at the failing node */
    int node;
    int code;                  /* the exit status it asks for, 1..255 */
    bool is_abort;             /* a PMI abort: the job's own statement of its fate */
    char text[PG_JOBEND_TEXT_MAX];
} pg_jobend_failure_t;

/* The job's end is known (decided by node 0, or alone when cut off from
 * it): this node ends its ranks; `code` is the status every node exits
 * with, `origin` the node whose failure it was (-1: none in particular),
 * `text` one line on why, naming that node.  Runs once, on the loop
 * thread. */
typedef void (*pg_jobend_end_fn)(void *arg, int code, int origin, const char *text);

/* names: [nnodes] host names for messages ("node 2 (pgn3)"), borrowed. */
pg_jobend_t *pg_jobend_new(pg_mesh_t *mesh, const char *const *names, pg_jobend_end_fn fn,
                           void *arg);
void pg_jobend_free(pg_jobend_t *e);

/* This node's first failure (later ones are ignored): to node 0, or, on
 * node 0, into the weighing.  text: one line, without the node. */
void pg_jobend_fail(pg_jobend_t *e, int code, bool is_abort, const char *text);

/* The node's ranks are all gone and its own verdict is `status`.  Runs the
 * loop until the job's end is known to this node (a node done: until
 * every node is done -- the mesh passes others' frames through it -- or
 * the end is decided; node 0: deciding if one failed; a failed node: up
 * to PG_JOBEND_WAIT_MS for the decision), says goodbye on the mesh, and
 * returns the status to exit with. */
int pg_jobend_finish(pg_jobend_t *e, int status);

/* The decided status, or -1 while undecided. */
int pg_jobend_code(const pg_jobend_t *e);

/* Does failure a come before b?  The earlier wins, except that an abort
 * wins over a non-abort stamped less than PG_JOBEND_ABORT_MS before it
 * (a rank failing its MPI calls after another's MPI_Abort is seen first
 * only because its path was faster); ties go to the lower node. */
bool pg_jobend_before(const pg_jobend_failure_t *a, const pg_jobend_failure_t *b);

#endif
