/*
 * pg_replay_gw: the fresh gateway `pmigate replay` talks to — a child
 * `pmigate run -n N` whose ranks are pmigate itself in a stub mode
 * (`pmigate __replay-stub CTL`).  Each stub hands its PMI_FD (and what its
 * environment says: rank, jobid, PMI_PORT path) to the replayer over a unix
 * socket with SCM_RIGHTS, closes its own copy, and then only waits, so the
 * replayer speaks on the rank's real PMI connection exactly as the
 * application did, to an unmodified gateway, with no application at all.
 * For a recorded PMI_PORT connection, the replayer asks the stub ("P" on
 * the control socket) to connect to PMIGATE_PMI_PORT and hand the socket
 * over the same way, since the gateway takes a rank's claim only from the
 * rank's own process tree.  A stub exits 0 when the replayer releases it
 * (closes its control socket), or as its recorded rank ended (exit code or
 * signal) when the replayer says so ("X code", "K signal").
 *
 * Ownership: pg_replay_gw_t owns the child, the control sockets and the PMI
 * fds until pg_replay_gw_take_fd() hands one over.
 */
#ifndef PG_REPLAY_GW_H
#define PG_REPLAY_GW_H

#include <stdint.h>
#include <sys/types.h>

typedef struct pg_replay_gw pg_replay_gw_t;

/* What the child gateway runs. */
typedef struct pg_replay_gw_job {
    int nranks;              /* the job's ranks */
    const char *apps;        /* "2,2,2", the recorded MPMD layout; NULL or "": one application */
    const char *trace_path;  /* passed on as --trace (to record the replay itself), or NULL */
    const char *node_trace;  /* a node's trace of a proxy job: the gateway serves that node
                              * (`pmigate __replay-node`, gateway/proxy/pg_replay_node.h); NULL:
                              * `pmigate run`, every rank here */
    int nstubs;              /* the ranks started here (nranks without node_trace) */
} pg_replay_gw_job_t;

/* Starts the child gateway with its stub ranks and waits until every stub
 * has reported (or deadline_ns, monotonic, passes); application numbers
 * and sizes are as recorded.  Returns NULL with a message in err. */
pg_replay_gw_t *pg_replay_gw_start(const char *self_exe, const pg_replay_gw_job_t *job,
                                   uint64_t deadline_ns, char *err, size_t errlen);

/* Hands over rank's PMI_FD (the caller then owns it); -1 if already taken. */
int pg_replay_gw_take_fd(pg_replay_gw_t *gw, int rank);
/* A new PMIGATE_PMI_PORT connection, opened by rank's stub (the gateway
 * lets only a rank's own process tree claim the rank) and handed over; the
 * caller owns it.  -1 when there is no port or the stub cannot. */
int pg_replay_gw_port_fd(pg_replay_gw_t *gw, int rank);
/* Ends rank's stub as the recorded rank ended: exit with `code`, or with
 * `sig` (non-zero) killed by that signal.  The rank's PMI_FD, if the
 * caller never took it, is closed first.  0, or -1 when the stub is gone. */
int pg_replay_gw_exit(pg_replay_gw_t *gw, int rank, int code, int sig);
const char *pg_replay_gw_kvsname(const pg_replay_gw_t *gw); /* from PMI_JOBID */
const char *pg_replay_gw_port(const pg_replay_gw_t *gw);    /* PMIGATE_PMI_PORT, or NULL */

/* Lets every stub exit, then waits for the gateway until deadline_ns; kills
 * it first when `kill_first`.  Returns its wait status, or -1 if it had to
 * be killed at the deadline. */
int pg_replay_gw_finish(pg_replay_gw_t *gw, int kill_first, uint64_t deadline_ns);
void pg_replay_gw_free(pg_replay_gw_t *gw);

/* The stub rank's main: `pmigate __replay-stub CTL`. */
int pg_replay_stub_main(int argc, char **argv);

#endif
