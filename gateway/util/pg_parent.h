/*
 * pg_parent: notices when the process that started pmigate is gone.
 *
 * Why: under a host runtime the parent of `pmigate proxy` is the host's
 * own daemon on the node (Open MPI's orted or a local mpirun, Slurm's
 * slurmstepd).  When it dies (SIGKILLed, OOM) nothing else may ever tell
 * the proxy -- its ranks and the job would live on -- so the proxy watches
 * it: a pidfd of the parent, readable once it exits (Linux 5.3), else a
 * check of getppid() every PG_PARENT_POLL_MS.  Unlike PR_SET_PDEATHSIG it
 * follows the parent process, not the thread that forked us.
 *
 * Ownership: pg_parent_t owns its pidfd and event; the callback runs once,
 * on the libevent thread.
 */
#ifndef PG_PARENT_H
#define PG_PARENT_H

#include <sys/types.h>

struct event_base;
typedef struct pg_parent pg_parent_t;

enum { PG_PARENT_POLL_MS = 200 };

/* Watches the parent, `parent` (read with getppid() as early as possible:
 * once it is gone, getppid() names whoever adopted us); gone(arg, parent)
 * runs once it is gone -- from the loop at once when it already is.  NULL
 * when out of resources. */
pg_parent_t *pg_parent_watch(struct event_base *base, pid_t parent,
                             void (*gone)(void *arg, pid_t pid), void *arg);
void pg_parent_free(pg_parent_t *w);

#endif
