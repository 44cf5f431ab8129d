/*
 * pg_trace_analyze: pairing, spans, fences.  See pg_trace_analyze.h.
 *
 * Pairing rule: on one connection the gateway answers requests in order, so
 * a reply answers the oldest unanswered request.  Two kinds of message break
 * the one-to-one rule and are handled by name: abort gets no reply, and
 * PMI-1's extra lines ("set" after initack, pushed keyval_cache) answer
 * nothing.
 */
#include "gateway/pg_trace_analyze.h"

#include <stdlib.h>
#include <string.h>

pg_trace_phase_t pg_trace_phase_of(pg_cmd_t cmd)
{
    switch (cmd) {
    case PG_CMD_PMI1_INIT:
    case PG_CMD_PMI1_INITACK:
    case PG_CMD_PMI1_GET_MAXES:
    case PG_CMD_PMI1_GET_APPNUM:
    case PG_CMD_PMI1_GET_MY_KVSNAME:
    case PG_CMD_PMI1_GET_UNIVERSE_SIZE:
    case PG_CMD_PMI1_SINGINIT:
    case PG_CMD_PMI2_FULLINIT:
    case PG_CMD_PMI2_JOB_GETID:
    case PG_CMD_PMI2_INFO_GETJOBATTR:
        return PG_TRACE_PHASE_INIT;
    case PG_CMD_PMI1_PUT:
    case PG_CMD_PMI2_KVS_PUT:
    case PG_CMD_PMI2_INFO_PUTNODEATTR:
        return PG_TRACE_PHASE_PUT;
    case PG_CMD_PMI1_BARRIER_IN:
    case PG_CMD_PMI2_KVS_FENCE:
        return PG_TRACE_PHASE_FENCE;
    case PG_CMD_PMI1_GET:
    case PG_CMD_PMI1_GETBYIDX:
    case PG_CMD_PMI2_KVS_GET:
    case PG_CMD_PMI2_INFO_GETNODEATTR:
        return PG_TRACE_PHASE_GET;
    case PG_CMD_PMI1_FINALIZE:
    case PG_CMD_PMI2_FINALIZE:
        return PG_TRACE_PHASE_FINALIZE;
    case PG_CMD_PMI1_ABORT:
    case PG_CMD_PMI2_ABORT:
        return PG_TRACE_PHASE_ABORT;
    default:
        return PG_TRACE_PHASE_OTHER;
    }
}

const char *pg_trace_phase_name(pg_trace_phase_t phase)
{
    static const char *const names[PG_TRACE_NPHASES] = {
        "init", "put", "fence/barrier", "get", "finalize", "abort", "other",
    };

    return phase < PG_TRACE_NPHASES ? names[phase] : "?";
}

/* Replies that answer no request. */
static int is_unsolicited(pg_cmd_t cmd)
{
    return cmd == PG_CMD_PMI1_SET || cmd == PG_CMD_PMI1_KEYVAL_CACHE;
}

static int expects_reply(pg_cmd_t cmd)
{
    return pg_trace_phase_of(cmd) != PG_TRACE_PHASE_ABORT;
}

typedef struct pending {
    long head, tail; /* spans of one connection still waiting, oldest first */
} pending_t;

static void add_span(pg_trace_analysis_t *a, size_t ev, pending_t *q, long *next)
{
    const pg_trace_event_t *e = &a->trace->events[ev];
    pg_trace_span_t *s = &a->spans[a->nspans];

    *s = (pg_trace_span_t){ .rank = e->rank, .conn = e->conn, .phase = pg_trace_phase_of(e->cmd),
                            .cmd = e->cmd, .req = ev, .rep = PG_TRACE_NONE, .start = e->t_ns,
                            .end = a->t_last, .fence = PG_TRACE_NONE };
    next[a->nspans] = PG_TRACE_NONE;
    if (e->cmd == PG_CMD_UNKNOWN)
        a->unknown_requests++;
    else
        a->cmds[e->cmd].requests++;
    if (expects_reply(e->cmd)) {
        if (q->tail != PG_TRACE_NONE)
            next[q->tail] = (long)a->nspans;
        else
            q->head = (long)a->nspans;
        q->tail = (long)a->nspans;
    }
    a->nspans++;
}

static void answer_span(pg_trace_analysis_t *a, size_t ev, pending_t *q, const long *next)
{
    const pg_trace_event_t *e = &a->trace->events[ev];
    pg_trace_span_t *s;

    if (q->head == PG_TRACE_NONE || is_unsolicited(e->cmd))
        return;
    s = &a->spans[q->head];
    s->rep = (long)ev;
    s->end = e->t_ns;
    a->reply_to[ev] = (long)s->req;
    if (s->cmd != PG_CMD_UNKNOWN) {
        pg_trace_cmd_stats_t *c = &a->cmds[s->cmd];

        c->answered++;
        c->total_wait += s->end - s->start;
        if (s->end - s->start > c->max_wait)
            c->max_wait = s->end - s->start;
    }
    q->head = next[q->head];
    if (q->head == PG_TRACE_NONE)
        q->tail = PG_TRACE_NONE;
}

static int pair_all(pg_trace_analysis_t *a)
{
    const pg_trace_t *t = a->trace;
    pending_t *q = malloc(((size_t)t->nconns + 1) * sizeof(*q));
    long *next = malloc((t->nevents + 1) * sizeof(*next));

    if (q == NULL || next == NULL) {
        free(q);
        free(next);
        return -1;
    }
    for (int c = 0; c < t->nconns; c++)
        q[c] = (pending_t){ PG_TRACE_NONE, PG_TRACE_NONE };
    for (size_t i = 0; i < t->nevents; i++) {
        a->reply_to[i] = PG_TRACE_NONE;
        if (t->events[i].dir == PG_TRACE_C2S)
            add_span(a, i, &q[t->events[i].conn], next);
        else
            answer_span(a, i, &q[t->events[i].conn], next);
    }
    free(q);
    free(next);
    return 0;
}

static int count_fences(pg_trace_analysis_t *a, int *per_rank)
{
    int max = 0;

    for (size_t i = 0; i < a->nspans; i++) {
        pg_trace_span_t *s = &a->spans[i];

        if (s->phase != PG_TRACE_PHASE_FENCE || s->rank < 0)
            continue;
        s->fence = per_rank[s->rank]++;
        if (s->fence + 1 > max)
            max = s->fence + 1;
    }
    return max;
}

static void fence_add(pg_trace_fence_t *f, const pg_trace_span_t *s)
{
    if (f->entered == 0 || s->start < f->first_entry) {
        f->first_entry = s->start;
        f->cmd = s->cmd;
    }
    if (f->entered == 0 || s->start >= f->last_entry) {
        f->last_entry = s->start;
        f->last_rank = s->rank;
    }
    f->entered++;
    f->entry[s->rank] = s->start;
    if (s->rep != PG_TRACE_NONE) {
        f->released++;
        if (s->end > f->last_release)
            f->last_release = s->end;
    }
}

static int build_fences(pg_trace_analysis_t *a)
{
    int *per_rank = calloc((size_t)a->nranks + 1, sizeof(*per_rank));

    if (per_rank == NULL)
        return -1;
    a->nfences = count_fences(a, per_rank);
    free(per_rank);
    a->fences = calloc((size_t)a->nfences + 1, sizeof(*a->fences));
    if (a->fences == NULL)
        return -1;
    for (int k = 0; k < a->nfences; k++) {
        a->fences[k].entry = malloc(((size_t)a->nranks + 1) * sizeof(uint64_t));
        if (a->fences[k].entry == NULL)
            return -1;
        for (int r = 0; r < a->nranks; r++)
            a->fences[k].entry[r] = UINT64_MAX;
        a->fences[k].last_rank = PG_TRACE_NONE;
    }
    for (size_t i = 0; i < a->nspans; i++)
        if (a->spans[i].fence != PG_TRACE_NONE)
            fence_add(&a->fences[a->spans[i].fence], &a->spans[i]);
    return 0;
}

pg_trace_analysis_t *pg_trace_analyze(const pg_trace_t *t)
{
    pg_trace_analysis_t *a = calloc(1, sizeof(*a));

    if (a == NULL)
        return NULL;
    a->trace = t;
    a->nranks = t->header.size;
    for (int c = 0; c < t->nconns; c++)
        if (t->conns[c].rank >= a->nranks)
            a->nranks = t->conns[c].rank + 1;
    if (t->nevents > 0) {
        a->t_first = t->events[0].t_ns;
        a->t_last = t->events[t->nevents - 1].t_ns;
    }
    a->spans = calloc(t->nevents + 1, sizeof(*a->spans));
    a->reply_to = calloc(t->nevents + 1, sizeof(*a->reply_to));
    if (a->spans == NULL || a->reply_to == NULL || pair_all(a) != 0 || build_fences(a) != 0) {
        pg_trace_analysis_free(a);
        return NULL;
    }
    return a;
}

void pg_trace_analysis_free(pg_trace_analysis_t *a)
{
    if (a == NULL)
        return;
    for (int k = 0; a->fences != NULL && k < a->nfences; k++)
        free(a->fences[k].entry);
    free(a->fences);
    free(a->spans);
    free(a->reply_to);
    free(a);
}
