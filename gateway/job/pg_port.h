/*
 * pg_port: admission of PMI_PORT connections.  A process that connects to
 * the job's PMI_PORT socket (gateway/io/pg_listen.c) holds a connection of the
 * root job that is no rank's until its handshake names one; it may name
 * rank R only from R's process or a descendant of it (SO_PEERCRED pid,
 * parent chain read at accept, pg_proc.h), within a hello timeout (10 s,
 * PMIGATE_HELLO_TIMEOUT seconds).  At most size + PG_PORT_STRANGERS such
 * connections wait at once: past that the oldest is dropped, so strangers
 * neither grow pmigate nor keep the job's own ranks out; complaints about
 * them are muted after a few lines.  Once a connection names its rank the
 * rank owns it (pg_job_conn.c).
 */
#ifndef PG_PORT_H
#define PG_PORT_H

#include <sys/types.h>

#include "gateway/io/pg_conn.h"
#include "gateway/job/pg_job.h"

struct event_base;

/* The job's connection on an accepted `fd` that has not named its rank
 * (rank -1): pg_job_conn_new.  The port is below the job's connections
 * (they ask it who may claim a rank), so it is given their maker rather
 * than calling up. */
typedef pg_conn_t *(*pg_port_conn_fn)(pg_job_t *job, int fd, int rank);

/* Admission to `job`'s ranks (borrowed; the root job), their connections
 * made by `new_conn`.  Reads PMIGATE_HELLO_TIMEOUT.  NULL when out of
 * memory. */
pg_port_t *pg_port_new(struct event_base *base, pg_job_t *job, pg_port_conn_fn new_conn);
/* Closes the connections still waiting, and frees. */
void pg_port_free(pg_port_t *port);

/* A connection accepted on the PMI_PORT socket from process `pid` (0:
 * unknown): it waits for its handshake.  Takes fd. */
void pg_port_accept(pg_port_t *port, int fd, pid_t pid);
/* May `conn` speak for `rank`?  1, or 0 with *why (an impostor: refused
 * before it reads a key or joins a fence, the rank itself untouched).
 * Connections that did not come through the port always may. */
int pg_port_may_claim(pg_port_t *port, const pg_conn_t *conn, int rank, const char **why);
/* `conn` named its rank (the rank owns it now) or closed: it no longer
 * waits.  Harmless for a connection that never did. */
void pg_port_forget(pg_port_t *port, const pg_conn_t *conn);
/* One line about a connection that is no rank's ("a PMI_PORT client " +
 * what), until the complaints are muted. */
void pg_port_complain(pg_port_t *port, const char *what);

#endif
