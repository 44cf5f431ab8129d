/*
 * pg_launch: how a job's ranks start.  Before the first rank, each
 * segment's environment and the ranks' CPU binding are prepared; then the
 * ranks start in batches from the event loop (16 a turn, so
 * the ranks already running are served in between), each with vfork from
 * a plan the parent made (environment, CPU mask, scheduling policy: the
 * child only makes system calls before exec), its PMI socketpair and
 * output pipes watched by the job.  A rank of the root job that cannot
 * start fails the invocation; a child of a spawned job that cannot start
 * is the spawn's errcode, and the spawned job is taken back.
 *
 * Part of the job's room (pg_job_int.h): it works on the job's records.
 */
#ifndef PG_LAUNCH_H
#define PG_LAUNCH_H

#include "gateway/job/pg_job.h"

/* Is `prog` (searched in PATH unless it has a '/') there and executable?
 * 0 or an errno; checked before anything forks, so a typo costs no
 * processes. */
int pg_launch_program_check(const char *prog);
/* The same for a child that starts in the directory `dirfd` is open on
 * (AT_FDCWD: pmigate's own): a relative name, and a relative PATH entry,
 * are looked up there, as the child's execvpe will after its chdir. */
int pg_launch_program_check_at(int dirfd, const char *prog);

/* Every segment's program is there (pg_launch_program_check); else the
 * launch failure is the verdict, said on stderr, and -1. */
int pg_launch_check_programs(pg_job_t *job);

/* Each segment's environment, the timer of the batches and (root job)
 * the ranks' binding and PMI_process_mapping.  0, or -1 (out of memory, or
 * the topology cannot be read: said). */
int pg_launch_prepare(pg_job_t *job);

/* Starts the job's ranks (this node's): the first batch now, the rest
 * from the loop.  A spawned job's spawner learns how it went through its
 * pg_job_launched_fn once every child has exec'd or failed. */
void pg_launch_start(pg_job_t *job);

/* A spawned job is taken back: its started ranks are killed, their exits
 * decide nothing, no more of them start. */
void pg_launch_take_back(pg_job_t *job);

/* --verbose: the job's layout, one line per rank (pid, appnum, cpuset). */
void pg_launch_log_layout(const pg_job_t *job);

#endif
