/*
 * pg_trace_analyze: what a trace means, computed once for every viewer
 * (show, stats, timeline) and the tests: which reply answers which request,
 * how long each request waited (a "span"; PMIx replies are paired by
 * request id, since they come in completion order), which phase of wire-up it
 * belongs to, and the fences and barriers of the job (the k-th fence of
 * every rank is the job's k-th fence) with who entered them last.
 *
 * Pure computation over a loaded pg_trace_t: no I/O.
 * Ownership: the analysis owns its arrays and borrows the trace, which must
 * outlive it.
 */
#ifndef PG_TRACE_ANALYZE_H
#define PG_TRACE_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "wire/pg_pmix_msg.h"
#include "trace/pg_trace.h"

/* Phases of a rank's life as the timeline colours them. */
typedef enum pg_trace_phase {
    PG_TRACE_PHASE_INIT = 0, /* init, fullinit, maxes, appnum, kvsname, job attributes;
                              * PMIx init */
    PG_TRACE_PHASE_PUT,      /* put, kvs-put, info-putnodeattr; PMIx commit */
    PG_TRACE_PHASE_FENCE,    /* barrier_in, kvs-fence, PMIx fence: waiting for the others */
    PG_TRACE_PHASE_GET,      /* get, kvs-get, info-getnodeattr, getbyidx; PMIx get */
    PG_TRACE_PHASE_FINALIZE, /* finalize (all three) */
    PG_TRACE_PHASE_ABORT,    /* abort (all three) */
    PG_TRACE_PHASE_OTHER,    /* name service (PMIx publish, lookup, unpublish), spawn,
                              * anything else */
    PG_TRACE_NPHASES
} pg_trace_phase_t;

enum { PG_TRACE_NONE = -1 };

/* One request and the time until its reply. */
typedef struct pg_trace_span {
    int rank;
    int conn;
    pg_trace_phase_t phase;
    pg_cmd_t cmd;        /* PG_CMD_UNKNOWN for PMIx */
    int pmix_cmd;        /* PMIx: pg_pmix_cmd_t; 0 for PMI-1/PMI-2 */
    size_t req;          /* event index of the request */
    long rep;            /* event index of the reply, or PG_TRACE_NONE */
    uint64_t start, end; /* an unanswered request ends at the end of the trace */
    int fence;           /* index into fences, or PG_TRACE_NONE */
} pg_trace_span_t;

/* The job's k-th fence or barrier (whole-job ones only: a PMIx fence over
 * some of the ranks is a fence wait but not one of the job's fences). */
typedef struct pg_trace_fence {
    pg_cmd_t cmd;           /* of the first rank that entered (PG_CMD_UNKNOWN: PMIx) */
    const char *name;       /* its command name (borrowed from the trace) */
    int mixed;              /* 1 when ranks entered it with different commands
                             * (a job of PMI-1, PMI-2 and PMIx ranks) */
    int entered;            /* ranks that entered */
    int released;           /* ranks that got their reply */
    uint64_t first_entry, last_entry, last_release; /* last_release: 0 if none */
    int last_rank;          /* the rank that entered last (held everyone else) */
    uint64_t *entry;        /* [nranks] entry time, UINT64_MAX if it never entered */
} pg_trace_fence_t;

/* Requests of one command. */
typedef struct pg_trace_cmd_stats {
    size_t requests;
    size_t answered;
    uint64_t total_wait, max_wait; /* over answered requests */
} pg_trace_cmd_stats_t;

typedef struct pg_trace_analysis {
    const pg_trace_t *trace;  /* borrowed */
    int nranks;               /* the header's size, or more if ranks beyond it spoke */
    pg_trace_span_t *spans;   /* in request order */
    size_t nspans;
    pg_trace_fence_t *fences;
    int nfences;
    long *reply_to;           /* [nevents]: request event a reply answers, or PG_TRACE_NONE */
    pg_trace_cmd_stats_t cmds[PG_CMD_COUNT];
    pg_trace_cmd_stats_t pmix_cmds[PG_PMIX_CMD_MAX]; /* by pg_pmix_cmd_t */
    size_t unknown_requests;  /* requests that could not be decoded */
    uint64_t t_first, t_last; /* first and last event */
} pg_trace_analysis_t;

/* Returns NULL when out of memory. */
pg_trace_analysis_t *pg_trace_analyze(const pg_trace_t *trace);
void pg_trace_analysis_free(pg_trace_analysis_t *a);

pg_trace_phase_t pg_trace_phase_of(pg_cmd_t cmd);
pg_trace_phase_t pg_trace_pmix_phase_of(int pmix_cmd);
const char *pg_trace_phase_name(pg_trace_phase_t phase); /* "init", "put", ... */

#endif
