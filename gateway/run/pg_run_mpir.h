/*
 * pg_run_mpir: a run's jobs in the MPIR process table (pg_mpir.h holds the
 * interface's symbols; docs/user-guide.md, "Debuggers and tools").  Kept
 * beside the run driver so pg_run.c stays the loop and its end.
 */
#ifndef PG_RUN_MPIR_H
#define PG_RUN_MPIR_H

#include "gateway/job/pg_job.h"
#include "gateway/util/pg_status.h"

/* The jobs (jobs[0] the root, then the spawned ones) whose launch ended
 * join the table in job order, from jobs[*next] on (a job still starting
 * holds the ones after it back; a discarded one is passed over), and the
 * debugger stops in MPIR_Breakpoint to read it.  *next moves past every
 * job looked at, debugged or not: the flag is read as each launch ends, so
 * a debugger that sets it in a running pmigate gets the jobs launched
 * after.  0, or -1 out of memory (the table keeps the ranks before). */
int pg_run_mpir_announce(const pg_job_t *const *jobs, int njobs, int *next, const char *host);

/* A PMI abort ends the run: under a debugger, MPIR_DEBUG_ABORTING with the
 * verdict's reason, before the ranks go. */
void pg_run_mpir_abort(const pg_verdict_t *verdict);

#endif
