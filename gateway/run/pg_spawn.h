/*
 * pg_spawn: a rank's spawn request (PMI-1 mcmd=spawn, PMI-2 spawn; the
 * seam's pg_peer_ops_t.spawn) turned into a new job of the gateway.  Kept
 * apart from the jobs (pg_job.c, pg_launch.c) because it is policy, not
 * processes: the per-gateway cap on spawned processes, the info keys users
 * pass through MPI_Info (wdir, path, host, env), the programs checked
 * before anything forks, and the errcodes the parent gets back.
 *
 * What happens when a child cannot start (docs/user-guide.md, "Spawning jobs"):
 * nothing of that spawn keeps running.  A program that is missing or not
 * executable, or a wdir that does not exist, is found before any fork: no
 * child starts, errcodes holds the errno for that command's processes and
 * ECANCELED for the others.  An exec that fails all the same takes the
 * already started children of that spawn back (killed, their exits decide
 * nothing; the children are forked without waiting for one another's
 * exec, so the others may have begun to run).  Either way the parent's call fails with those errcodes and the
 * parent's job goes on, as MPI_Comm_spawn expects (it reports per-process
 * errcodes and returns an error; the parent is not aborted).
 */
#ifndef PG_SPAWN_H
#define PG_SPAWN_H

#include "gateway/util/pg_cli.h"
#include "gateway/job/pg_job.h"
#include "server/pg_handler.h"

/* Processes spawned over the whole run of the gateway without --max-procs:
 * a spawn loop (a fan-out or a chain) stops there instead of fork-bombing
 * the host. */
enum { PG_SPAWN_MAX_PROCS_DEFAULT = 256 };

/* Serves `req` from rank `rank` of `parent` (req is borrowed for the
 * call).  `done` runs once: before this returns when the spawn is refused,
 * else from the loop once every child has exec'd or failed.  A parent
 * over several nodes hands the checked request to its nodes' spawn hook
 * (pg_job_node_t.spawn), which answers. */
void pg_spawn_start(pg_job_t *parent, int rank, const pg_spawn_req_t *req, pg_spawn_done_fn done,
                    void *cbdata);

/* This node's share of a job spawned over several nodes (`pmigate
 * proxy`): `done` runs once, with rc 0 when every process of the share
 * started (none is fine), else -1, errmsg saying why; errcodes[nprocs]
 * (the whole job's, this node's ranks filled; NULL when out of memory) are
 * borrowed for the call. */
typedef void (*pg_spawn_share_fn)(void *arg, int rc, const int *errcodes, int nprocs,
                                  const char *errmsg);
/* Builds the share from `req` (borrowed for the call) as pg_spawn_start
 * builds a job -- programs, working directories and environment checked
 * here -- and starts it as job `jobno` of `parent`'s run, laid out as
 * node says (pg_job_spawn_share). */
void pg_spawn_share(pg_job_t *parent, int rank, int jobno, const pg_job_node_t *node,
                    const pg_spawn_req_t *req, pg_spawn_share_fn done, void *arg);

/* Frees options pg_spawn_start built (and the strings they hold).  NULL is
 * ignored. */
void pg_spawn_opts_free(pg_run_opts_t *opts);

#endif
