/*
 * pg_run: one invocation of pmigate -- `pmigate run`, or one node's part
 * of `pmigate proxy` -- and what it holds for every job it runs: the event
 * loop's signal and timer events, pmigate's stdout and stderr sinks, the
 * keeper and the ranks' process group, the PMI_PORT listener, the trace
 * recorder, the verdict that decides the exit status, the engine the root
 * job registered, and the count of spawned processes (--max-procs).  The
 * jobs are pg_job's: the root job it starts, and the jobs that ranks spawn.
 *
 * One libevent loop thread owns all of it.  The run reaps children through
 * a libevent SIGCHLD event, forwards SIGINT/SIGTERM/SIGHUP to the ranks,
 * and tears every job down (SIGTERM to the process group, SIGKILL after a
 * short grace) on the first failure: a PMI abort, a rank dying or breaking
 * its PMI connection before finalize, a rank exiting non-zero while others
 * run, --timeout, a launch failure.  Whatever the ranks leave running is
 * killed at the end (pmigate is their subreaper, pg_proc.h), and a keeper
 * cleans up if pmigate is SIGKILLed (pg_keeper.h).
 *
 * Its jobs never call it: the run gives each one a context (pg_job_ctx.h)
 * holding what they need of it and the ops it installs (teardown,
 * maybe-done, spawn and its options, a rank's process group, a spawned
 * job joining), so the job room stays below the run room.
 *
 * Ownership: the run borrows opts and handlers (they must outlive it) and
 * owns everything else it creates, its jobs included.
 */
#ifndef PG_RUN_H
#define PG_RUN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "gateway/util/pg_cli.h"
#include "gateway/job/pg_job.h"
#include "gateway/job/pg_job_engine.h"
#include "gateway/io/pg_output.h"
#include "gateway/util/pg_status.h"
#include "gateway/io/pg_stdin.h"
#include "gateway/tools/pg_trace_rec.h"
#include "server/pg_handler.h"

struct event_base;

/* ---- for pmigate's commands (pg_main.c, pg_proxy.c) ---- */

/* The invocation and its root job (nothing is launched yet).  Returns NULL
 * with a message already printed. */
pg_run_t *pg_run_new(struct event_base *base, const pg_run_opts_t *opts,
                     const pg_handler_table_t *handlers);
void pg_run_free(pg_run_t *run);

/* Before pg_run_dispatch: the root job spans several nodes and this
 * gateway starts and serves node->nodeid's ranks only (pg_job_set_node). */
int pg_run_set_node(pg_run_t *run, const pg_job_node_t *node);

/* The report `pmigate status` gets from this pmigate (after its header
 * line; docs/gateway.md, "The status endpoint"). */
void pg_run_report(pg_run_t *run, FILE *out);
/* `pmigate proxy`: every status answer also waits for `more` (the other
 * nodes' reports; pg_statusd_set_more), which answers with
 * pg_run_status_more_done. */
void pg_run_status_more(pg_run_t *run, void (*more)(void *arg, uint64_t ticket), void *arg);
void pg_run_status_more_done(pg_run_t *run, uint64_t ticket, const char *text, size_t len);

/* Loads the topology, opens the listener, registers the root job with the
 * engine and launches its ranks; then runs the loop until every rank of
 * every job has been reaped.  Returns the exit status pmigate should exit
 * with (pg_status.h). */
int pg_run_dispatch(pg_run_t *run);

/* After pg_run_dispatch: 1 when the run ended because pmigate itself got a
 * signal (SIGTERM/SIGINT/SIGHUP: its host is tearing it down), else 0. */
int pg_run_ended_by_signal(const pg_run_t *run);

/* ---- for pmigate's commands and the run's files (pg_spawn.c, gateway/proxy) ---- */

/* The job the run started (job 0). */
pg_job_t *pg_run_root(const pg_run_t *run);
/* The invocation's options (the root job's). */
const pg_run_opts_t *pg_run_opts(const pg_run_t *run);
const char *pg_run_hostname(const pg_run_t *run);
/* --trace's recorder, or NULL. */
pg_trace_recorder_t *pg_run_trace(const pg_run_t *run);
/* The engine the root job registered (spawned jobs attach to it). */
pg_job_engine_t *pg_run_engine(const pg_run_t *run);
/* The run's job named `kvsname`, or NULL. */
pg_job_t *pg_run_find_job(const pg_run_t *run, const char *kvsname);
/* Is the run over or ending (every rank gone, or a teardown): nothing
 * more may start? */
int pg_run_ending(const pg_run_t *run);

/* ---- the ops its jobs get (pg_job_ctx_ops_t, installed by pg_run_new) ---- */

/* A rank was forked as `pid`: the first one starts the ranks' process
 * group (the keeper watches it).  Returns the group to put it in. */
pid_t pg_run_adopt(pg_run_t *run, pid_t pid);
/* The jobs ranks spawned: a new one joins the run (it is freed with the
 * run); returns its job number (1, 2, ...) or -1 when out of memory. */
int pg_run_add_job(pg_run_t *run, pg_job_t *job);
/* Ranks of the run's jobs so far (a new job's first row in the trace). */
int pg_run_nranks(const pg_run_t *run);
/* Processes spawned so far (exited ones included, and those of a spawn
 * accepted but not yet started; the context's spawned_total), for
 * --max-procs; `delta` counts a spawn accepted (+n) or children that
 * never started (-n). */
void pg_run_spawned_add(pg_run_t *run, int delta);
/* A debugger's PMIX_DEBUGGER_RELEASE for job `nspace` (NULL: every job of
 * the run): its ranks held in init go on (pg_job_release_init). */
void pg_run_release_init(pg_run_t *run, const char *nspace);
/* Brings every rank of every job down: `signo` now, SIGKILL after a grace. */
void pg_run_teardown(pg_run_t *run, int signo);
/* A failure (of rank `rank` of `job`; job NULL: none) that the jobs' PMIx
 * processes were just told of: the events wait on their connections, so
 * every job ends at once (no new ranks, later exits judged as the
 * teardown's) but SIGTERM comes PG_RUN_EVENT_GRACE_MS later, so their
 * handlers run -- at once when nobody listens. */
void pg_run_teardown_told(pg_run_t *run, const pg_job_t *job, int rank);
/* A rank ended or a launch finished: when no job has a rank left or a
 * launch under way, the output is written and the loop ends. */
void pg_run_maybe_done(pg_run_t *run);

/* "pmigate: " + message + "\n" on pmigate's stderr, after the ranks'
 * queued lines and never blocking (text a rank sent is escaped there, so
 * it cannot forge a line); run may be NULL (straight to stderr).
 * pg_run_vlog: with "job N: " first when jobno > 0, on stdout when
 * `to_stdout` (pg_job_ctx_vlog). */
void pg_run_log(const pg_run_t *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pg_run_vlog(const pg_run_t *run, int jobno, int to_stdout, const char *fmt, va_list ap);

#endif
