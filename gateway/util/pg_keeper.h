/*
 * pg_keeper: what is left of a job when pmigate itself is SIGKILLed.  The
 * ranks die with pmigate (PR_SET_PDEATHSIG), but their own children are
 * re-parented to init, out of pmigate's reach, and pmigate cannot remove
 * its directories.  So `pmigate run` forks a keeper first: a tiny process in
 * its own session that waits on a pipe from pmigate.  pmigate tells it the
 * job's process group when the first rank starts and dismisses it at the
 * end; if the pipe closes without the dismissal, pmigate has died, and the
 * keeper SIGKILLs the job's process group (every descendant that did not
 * leave it with setsid/setpgid) and removes the dead job's directories
 * (pg_tmpdir_sweep).  A process that left the job's group survives a
 * SIGKILL of pmigate: only a cgroup could find it.
 *
 * Ownership: pg_keeper_t owns the pipe's write end and reaps the keeper in
 * pg_keeper_stop.
 */
#ifndef PG_KEEPER_H
#define PG_KEEPER_H

#include <sys/types.h>

typedef struct pg_keeper pg_keeper_t;

/* Forks the keeper; call it before any rank, socket or lock exists (the
 * keeper closes every descriptor but its pipe, and must hold no lock).
 * NULL when it cannot (then pmigate runs without one). */
pg_keeper_t *pg_keeper_start(void);

/* Tells the keeper the job's process group. */
void pg_keeper_watch_group(pg_keeper_t *k, pid_t pgid);

/* The keeper's pid (0 for NULL). */
pid_t pg_keeper_pid(const pg_keeper_t *k);

/* Dismisses the keeper (the job ended with pmigate alive), reaps it and
 * frees k.  NULL is a no-op. */
void pg_keeper_stop(pg_keeper_t *k);

#endif
