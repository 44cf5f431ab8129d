/*
 * pg_replay_node: the gateway `pmigate replay` starts for a trace that one
 * node of `pmigate proxy` recorded (FILE.<node>).  Such a trace holds only
 * that node's ranks; the rest of the job was on other nodes, reached
 * through the host runtime.  This gateway serves the same node of the same
 * job -- the recorded namespace, node count and rank counts, so every
 * layout a rank asks for is answered as it was -- and stands in for the
 * other nodes with what they contributed to each cross-node fence, as the
 * trace recorded it ("#! xfence" records, docs/trace-format.md).  No host
 * runtime is involved.
 *
 * Run as `pmigate __replay-node TRACE run-options...` (hidden: only the
 * replayer starts it, pg_replay_gw).
 */
#ifndef PG_REPLAY_NODE_H
#define PG_REPLAY_NODE_H

#include "gateway/util/pg_cli.h"
#include "server/pg_handler.h"

struct event_base;

/* Runs the recorded node's part of the job opts describes (-n is the
 * job's total, as for `pmigate proxy`).  Returns pmigate's exit status,
 * PG_EXIT_INTERNAL with a line on stderr when the trace is not a node's
 * or does not match opts. */
int pg_replay_node_run(struct event_base *base, pg_run_opts_t *opts,
                       const pg_handler_table_t *handlers, const char *trace_path);

#endif
