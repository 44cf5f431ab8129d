/*
 * pg_proxy: `pmigate proxy`, one pmigate per node of a job that a PMIx host
 * runtime (Open MPI's mpirun, Slurm's srun --mpi=pmix) started once per
 * node.  The proxy is a PMIx client of the host (pg_hostpmix); it learns
 * its node index and the number of nodes, agrees with the other proxies on
 * the job (rank counts, host names, namespace), runs its node's ranks as
 * `pmigate run` would, and hands the cross-node part of every whole-job
 * fence to the host.  A failure of the node's job aborts the host's job
 * with the same exit status, so every node comes down.
 *
 * Kept apart from pg_job (which serves one node either way) so the
 * single-node launcher needs no PMIx runtime.
 */
#ifndef PG_PROXY_H
#define PG_PROXY_H

#include "gateway/util/pg_cli.h"
#include "server/pg_handler.h"

struct event_base;

/* Runs this node's part of the job described by opts (-n is the job's
 * total; --ppn M: M ranks on every node).  Returns pmigate's exit status;
 * 1 with one line on stderr when there is no PMIx host. */
int pg_proxy_run(struct event_base *base, pg_run_opts_t *opts,
                 const pg_handler_table_t *handlers);

/* The text of `pmigate proxy --help`. */
extern const char pg_proxy_usage[];

#endif
