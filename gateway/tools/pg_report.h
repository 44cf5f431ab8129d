/*
 * pg_report: the text `pmigate status` shows of a running job -- its
 * ranks' counts, each fence in progress with its age and the ranks it
 * still waits for ("fence 1: waiting for ranks 1, 5-7 (of 512), started
 * 12.3 s ago"), and the gets and name-service lookups that wait.
 *
 * Why apart: the words are what users read when a job hangs, so they are
 * pure functions of plain data (the engine's read-only view, pg_engine.h,
 * and the job's counts), unit tested without a job; the gateway gathers
 * the data (pg_run.c) and serves the text (pg_statusd.h).
 */
#ifndef PG_REPORT_H
#define PG_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/pg_engine.h"

/* "1, 5-7, 12" for ranks[0..n) (ascending): runs of three or more
 * consecutive ranks become a range.  Written into buf; when it does not
 * fit, it ends with ", ..." and the count of ranks left out, "(+N more)".
 * Returns buf. */
const char *pg_report_ranks(char *buf, size_t len, const uint32_t *ranks, size_t n);

/* One job's ranks, as this gateway knows them. */
typedef struct pg_report_job {
    int jobno;                 /* 0: the root job; 1, 2, ...: spawned */
    const char *kvsname;
    int size;                  /* the job's ranks, every node's */
    int first, nlocal;         /* the ranks [first, first + nlocal) run on this node */
    int launched, initialised, finalized, exited;
    const char *parent_kvsname; /* spawned: the job of the rank that asked, else NULL */
    int parent_rank;
    int held_in_init;          /* its ranks wait in init for a debugger's release */
} pg_report_job_t;

/* "job 0 kvs_7_0: 4 ranks: 4 launched, 3 initialised, 0 finalized, 0 exited" */
void pg_report_job(FILE *out, const pg_report_job_t *j);

/* "  fence 1: waiting for ranks 1, 5-7 (of 512), started 12.3 s ago";
 * `now` is the engine's clock (ns). */
void pg_report_fence(FILE *out, const pg_fence_view_t *f, pg_time_t now);

/* "  rank 2 waits for key "k" of rank 3, 4.1 s" (and node attributes,
 * name-service lookups). */
void pg_report_wait(FILE *out, const pg_wait_view_t *w, pg_time_t now);

/* "wire-up: 812/1024 ranks in fence 1, 3.2 s" (the progress line) for
 * the job's whole-job fence f, or "wire-up: 300/1024 ranks initialised,
 * 2.1 s" before it (f NULL; `initialised` and `size` of the job, `since`
 * the launch).  Into buf; returns buf. */
const char *pg_report_progress(char *buf, size_t len, const pg_fence_view_t *f, int initialised,
                               int size, pg_time_t since, pg_time_t now);

#endif
