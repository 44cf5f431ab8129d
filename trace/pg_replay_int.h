/*
 * pg_replay_int: what the replay loop (pg_replay.c) and its planning
 * (pg_replay_plan.c) share: the actors (one per recorded connection and
 * copy of the recording), the replay's state, and the plan's entry points.
 * Private to trace/; pg_replay.h is the public face.
 *
 * Ownership: a replay_t owns its plan's arrays (pg_replay_plan_free) and
 * borrows its options and its trace.
 */
#ifndef PG_REPLAY_INT_H
#define PG_REPLAY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "trace/pg_replay.h"
#include "trace/pg_replay_gw.h"
#include "trace/pg_replay_msg.h"
#include "trace/pg_trace.h"

typedef struct actor {
    int rank;                /* rank in the replay job */
    int block;               /* which copy of the recording (0 without --ranks) */
    int conn;                /* recorded connection */
    const size_t *steps;     /* its events, in order (borrowed from the plan) */
    size_t nsteps, pos;
    int fd;                  /* -1 until opened, -1 again when finished */
    int via_port;
    int pmix;                /* the connection speaks PMIx: replies are matched by
                              * request id, in any order */
    int opened_pmix;         /* the PMIx preamble went out */
    char *in;                /* received, not yet matched */
    size_t in_len, in_cap;
    int finished;            /* its recording is done and its connection closed */
    int parked;              /* its recording ends while connected (a stopped job):
                              * the connection stays open and must stay silent */
    pg_replay_map_t map;
} actor_t;

/* A recorded rank's exit that the replay makes its stub repeat. */
typedef struct exit_step {
    const pg_trace_record_t *rec;
} exit_step_t;

typedef struct replay {
    const pg_replay_opts_t *o;
    pg_trace_t *t;
    exit_step_t *exits;      /* in recorded order; [next_exit] is the next to do */
    int nexits, next_exit;
    int end_status;          /* the recorded job's exit status, -1: not recorded */
    int expect_end;          /* the replay reproduces how the job ended: the gateway
                              * must end by itself, with end_status */
    size_t **conn_steps;     /* [nconns] event indices per recorded connection */
    size_t *conn_nsteps;
    actor_t *actors;
    int nactors;
    int nrec, nranks, nblocks;
    unsigned char *seen;     /* [nblocks * nevents]: replies that arrived (and requests) */
    size_t *low;             /* [nblocks]: first reply not yet arrived */
    uint64_t t0, deadline, next_wake;
    pg_replay_gw_t *gw;
    size_t sent, matched;
    int had_abort;
    int failed;              /* the recorded job failed (an abort, a non-zero end):
                              * the gateway may close connections early */
    int verdict;             /* exit status so far */
} replay_t;

/* Splits the trace by connection, makes the actors and the exits the
 * replay repeats.  0, or -1 with a message printed. */
int pg_replay_plan(replay_t *rp);
/* Frees what pg_replay_plan made (and closes the actors' sockets). */
void pg_replay_plan_free(replay_t *rp);
/* The child gateway this trace needs (one node's trace of a proxy job gets
 * a gateway serving that node).  0, or -1 with a message printed. */
int pg_replay_plan_gateway(const replay_t *rp, pg_replay_gw_job_t *job);
/* Is e a rank's abort (PMI-1, PMI-2 or PMIx)? */
int pg_replay_is_abort(const pg_trace_event_t *e);
/* Moves block b's first not-yet-arrived reply past those that arrived. */
void pg_replay_advance_low(replay_t *rp, int b);

#endif
