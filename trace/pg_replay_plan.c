/*
 * pg_replay_plan: how `pmigate replay` turns a trace into a plan before
 * anything runs: the recorded events split by connection, one actor per
 * connection and copy of the recording (--ranks), the replies nothing will
 * wait for marked as arrived, the recorded exits the stand-in ranks repeat,
 * and the child gateway the trace needs (one node's trace of a proxy job
 * gets a gateway serving that node).  See pg_replay_int.h.
 */
#include "trace/pg_replay_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wire/pg_pmix_msg.h"


static int conn_replayable(const pg_trace_conn_t *c)
{
    return c->rank >= 0 && c->nevents > 0;
}

int pg_replay_is_abort(const pg_trace_event_t *e)
{
    if (e->proto == PG_PROTO_PMIX)
        return e->pmix.kind == PG_TRACE_PMIX_REQUEST && e->pmix.cmd == PG_PMIX_CMD_ABORT;
    return e->cmd == PG_CMD_PMI1_ABORT || e->cmd == PG_CMD_PMI2_ABORT;
}

static int split_by_conn(replay_t *rp)
{
    const pg_trace_t *t = rp->t;
    size_t *fill;

    rp->conn_steps = calloc((size_t)t->nconns + 1, sizeof(*rp->conn_steps));
    rp->conn_nsteps = calloc((size_t)t->nconns + 1, sizeof(*rp->conn_nsteps));
    fill = calloc((size_t)t->nconns + 1, sizeof(*fill));
    if (rp->conn_steps == NULL || rp->conn_nsteps == NULL || fill == NULL)
        goto fail;
    for (int c = 0; c < t->nconns; c++) {
        rp->conn_nsteps[c] = t->conns[c].nevents;
        rp->conn_steps[c] = malloc((t->conns[c].nevents + 1) * sizeof(size_t));
        if (rp->conn_steps[c] == NULL)
            goto fail;
    }
    for (size_t i = 0; i < t->nevents; i++) {
        int c = t->events[i].conn;

        rp->conn_steps[c][fill[c]++] = i;
        if (t->events[i].dir == PG_TRACE_C2S && pg_replay_is_abort(&t->events[i]))
            rp->had_abort = 1;
    }
    free(fill);
    return 0;
fail:
    free(fill);
    return -1;
}

/* Marks every event of connection c in block b as arrived: nothing will
 * replay it, so nothing may wait for it. */
static void mark_absent(replay_t *rp, int b, int c)
{
    for (size_t k = 0; k < rp->conn_nsteps[c]; k++)
        rp->seen[(size_t)b * rp->t->nevents + rp->conn_steps[c][k]] = 1;
}

void pg_replay_advance_low(replay_t *rp, int b)
{
    const unsigned char *seen = rp->seen + (size_t)b * rp->t->nevents;

    while (rp->low[b] < rp->t->nevents && seen[rp->low[b]])
        rp->low[b]++;
}

static int make_actors(replay_t *rp)
{
    const pg_trace_t *t = rp->t;

    rp->actors = calloc((size_t)rp->nblocks * (size_t)(t->nconns + 1), sizeof(*rp->actors));
    rp->seen = calloc((size_t)rp->nblocks * t->nevents + 1, 1);
    rp->low = calloc((size_t)rp->nblocks + 1, sizeof(*rp->low));
    if (rp->actors == NULL || rp->seen == NULL || rp->low == NULL)
        return -1;
    for (int b = 0; b < rp->nblocks; b++) {
        for (size_t i = 0; i < t->nevents; i++)
            if (t->events[i].dir == PG_TRACE_C2S)
                rp->seen[(size_t)b * t->nevents + i] = 1; /* requests never hold anyone */
        for (int c = 0; c < t->nconns; c++) {
            int rank = b * rp->nrec + t->conns[c].rank;
            actor_t *a;

            if (!conn_replayable(&t->conns[c]) || t->conns[c].rank >= rp->nrec ||
                rank >= rp->nranks) {
                mark_absent(rp, b, c);
                continue;
            }
            a = &rp->actors[rp->nactors++];
            *a = (actor_t){ .rank = rank, .block = b, .conn = c, .steps = rp->conn_steps[c],
                            .nsteps = rp->conn_nsteps[c], .fd = -1,
                            .via_port = t->conns[c].via_port,
                            .pmix = t->conns[c].proto == PG_PROTO_PMIX };
            a->map = (pg_replay_map_t){ .old_kvs = t->header.kvsname,
                                        .nrec = rp->o->ranks ? rp->nrec : 0,
                                        .block_base = b * rp->nrec };
        }
        pg_replay_advance_low(rp, b);
    }
    return 0;
}

/* The recorded exits the replay repeats: those of the root job's ranks
 * that pmigate's teardown did not cause (the replay gateway tears down by
 * itself), in order; not with --ranks.  With a recorded end, the replay
 * also expects the gateway to end as the job did, when the job ended by
 * what the replay repeats (an abort, or a rank's exit), not from outside
 * (--timeout, a signal to pmigate). */
static int plan_exits(replay_t *rp)
{
    const pg_trace_t *t = rp->t;

    int stopped = 0;

    rp->end_status = -1;
    rp->exits = calloc(t->nrecords + 1, sizeof(*rp->exits));
    if (rp->exits == NULL)
        return -1;
    for (size_t i = 0; i < t->nrecords; i++) {
        const pg_trace_record_t *rec = &t->records[i];

        if (rec->kind == PG_TRACE_REC_END) {
            rp->end_status = rec->status;
            stopped = rec->stopped;
        }
        if (rec->kind == PG_TRACE_REC_EXIT && !rec->teardown && rec->rank < rp->nrec &&
            rp->o->ranks == 0)
            rp->exits[rp->nexits++].rec = rec;
    }
    rp->expect_end = rp->end_status >= 0 && !stopped && rp->o->ranks == 0 &&
                     (rp->had_abort || rp->nexits > 0);
    rp->failed = rp->had_abort || rp->end_status > 0;
    return 0;
}

static void warn_skipped(const replay_t *rp)
{
    int past = 0;

    for (int c = 0; c < rp->t->nconns; c++) {
        const pg_trace_conn_t *k = &rp->t->conns[c];

        if (k->nevents > 0 && k->rank < 0)
            fprintf(stderr, "pmigate replay: connection %d never said its rank: skipped\n", c);
        past += k->nevents > 0 && k->rank >= rp->nrec;
    }
    if (past > 0)
        fprintf(stderr, "pmigate replay: %d connection%s of ranks past the job's %d (spawned "
                        "jobs'): not replayed\n",
                past, past == 1 ? "" : "s", rp->nrec);
}


void pg_replay_plan_free(replay_t *rp)
{
    for (int i = 0; rp->actors != NULL && i < rp->nactors; i++) {
        if (rp->actors[i].fd >= 0)
            close(rp->actors[i].fd);
        free(rp->actors[i].in);
    }
    for (int c = 0; rp->conn_steps != NULL && c < rp->t->nconns; c++)
        free(rp->conn_steps[c]);
    free(rp->conn_steps);
    free(rp->conn_nsteps);
    free(rp->actors);
    free(rp->seen);
    free(rp->low);
    free(rp->exits);
}

/* How many of the job's ranks have a connection in the recording: a
 * header's size far beyond it is no job that ran, and would only start
 * stub processes by the thousand. */
static int ranks_heard(const replay_t *rp)
{
    const pg_trace_t *t = rp->t;
    int n = 0;

    for (int c = 0; c < t->nconns; c++)
        n += t->conns[c].rank >= 0 && t->conns[c].rank < rp->nrec && t->conns[c].nevents > 0;
    return n;
}

int pg_replay_plan(replay_t *rp)
{
    const pg_trace_t *t = rp->t;

    /* the root job's ranks, as the header says: spawned jobs' ranks are
     * numbered after them and not replayed, and a rank number in a file is
     * no reason to start that many stub processes */
    rp->nrec = t->header.size;
    if (rp->nrec <= 0) {
        fprintf(stderr, "pmigate replay: %s has no ranks to replay\n", rp->o->file);
        return -1;
    }
    if (rp->nrec > 4 * ranks_heard(rp) + 64) {
        fprintf(stderr, "pmigate replay: %s says its job had %d ranks, but only %d of them "
                        "spoke: not a recording to replay (a damaged file?)\n",
                rp->o->file, rp->nrec, ranks_heard(rp));
        return -1;
    }
    rp->nranks = rp->o->ranks > 0 ? rp->o->ranks : rp->nrec;
    rp->nblocks = (rp->nranks + rp->nrec - 1) / rp->nrec;
    if (split_by_conn(rp) != 0 || make_actors(rp) != 0 || plan_exits(rp) != 0) {
        fprintf(stderr, "pmigate replay: out of memory\n");
        return -1;
    }
    warn_skipped(rp);
    return 0;
}

/* Does a rank of the trace enter a fence or a barrier? */
static int has_fences(const pg_trace_t *t)
{
    for (size_t i = 0; i < t->nevents; i++) {
        const pg_trace_event_t *e = &t->events[i];

        if (e->dir == PG_TRACE_C2S &&
            (e->cmd == PG_CMD_PMI1_BARRIER_IN || e->cmd == PG_CMD_PMI2_KVS_FENCE ||
             (e->pmix.kind == PG_TRACE_PMIX_REQUEST && e->pmix.cmd == PG_PMIX_CMD_FENCE)))
            return 1;
    }
    return 0;
}

/* The child gateway for this trace.  One node's trace of a proxy job
 * (header node=/nnodes=) gets a gateway serving that node, standing in for
 * the others with their recorded fence contributions; a trace from before
 * those were recorded cannot be replayed alone.  0, or -1 said why. */
int pg_replay_plan_gateway(const replay_t *rp, pg_replay_gw_job_t *job)
{
    const pg_trace_header_t *h = &rp->t->header;
    int xfences = 0;

    *job = (pg_replay_gw_job_t){ .nranks = rp->nranks, .nstubs = rp->nranks,
                                 .apps = rp->o->ranks > 0 ? NULL : h->apps,
                                 .trace_path = rp->o->trace };
    if (h->nnodes <= 1)
        return 0;
    for (size_t i = 0; i < rp->t->nrecords; i++)
        xfences += rp->t->records[i].kind == PG_TRACE_REC_XFENCE;
    if (rp->o->ranks > 0) {
        fprintf(stderr, "pmigate replay: %s is node %d's trace of a %d-node job: --ranks "
                        "cannot copy it\n",
                rp->o->file, h->node, h->nnodes);
        return -1;
    }
    if (xfences == 0 && has_fences(rp->t)) {
        fprintf(stderr, "pmigate replay: %s is node %d's trace of a %d-node job, recorded "
                        "without what the other nodes contributed to its fences (by an older "
                        "pmigate): it cannot be replayed alone\n",
                rp->o->file, h->node, h->nnodes);
        return -1;
    }
    job->node_trace = rp->o->file;
    job->nstubs = h->size / h->nnodes + (h->node < h->size % h->nnodes ? 1 : 0);
    return 0;
}
