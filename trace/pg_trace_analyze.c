/*
 * pg_trace_analyze: pairing, spans, fences.  See pg_trace_analyze.h.
 *
 * Pairing rule: on one PMI-1 or PMI-2 connection the gateway answers
 * requests in order, so a reply answers the oldest unanswered request.  Two
 * kinds of message break the one-to-one rule and are handled by name: abort
 * gets no reply, and PMI-1's extra lines ("set" after initack, pushed
 * keyval_cache) answer nothing.  A PMIx reply names its request (the request
 * id) and may overtake older ones (a held get, a fence), so it answers the
 * oldest unanswered request of its connection with that id; the preamble is
 * no request.
 */
#include "trace/pg_trace_analyze.h"

#include <stdlib.h>
#include <string.h>

#include "wire/pg_pmix_msg.h"

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

pg_trace_phase_t pg_trace_pmix_phase_of(int pmix_cmd)
{
    switch (pmix_cmd) {
    case PG_PMIX_CMD_INIT:
        return PG_TRACE_PHASE_INIT;
    case PG_PMIX_CMD_COMMIT:
        return PG_TRACE_PHASE_PUT;
    case PG_PMIX_CMD_FENCE:
    case PG_PMIX_CMD_GROUP_CONSTRUCT: /* a group is a fence over its members */
    case PG_PMIX_CMD_GROUP_DESTRUCT:
    case PG_PMIX_CMD_GROUP_INVITE: /* waits for every invitee's answer */
    case PG_PMIX_CMD_GROUP_JOIN:
        return PG_TRACE_PHASE_FENCE;
    case PG_PMIX_CMD_GET:
        return PG_TRACE_PHASE_GET;
    case PG_PMIX_CMD_FINALIZE:
        return PG_TRACE_PHASE_FINALIZE;
    case PG_PMIX_CMD_ABORT:
        return PG_TRACE_PHASE_ABORT;
    default: /* publish, lookup, unpublish: the name service */
        return PG_TRACE_PHASE_OTHER;
    }
}

static int is_pmix(const pg_trace_event_t *e)
{
    return e->proto == PG_PROTO_PMIX;
}

static pg_trace_phase_t event_phase(const pg_trace_event_t *e)
{
    return is_pmix(e) ? pg_trace_pmix_phase_of(e->pmix.cmd) : pg_trace_phase_of(e->cmd);
}

/* The counters of a span's command, or NULL for an undecodable request. */
static pg_trace_cmd_stats_t *cmd_stats(pg_trace_analysis_t *a, const pg_trace_span_t *s)
{
    if (s->pmix_cmd > 0 && s->pmix_cmd < PG_PMIX_CMD_MAX)
        return &a->pmix_cmds[s->pmix_cmd];
    if (s->cmd != PG_CMD_UNKNOWN)
        return &a->cmds[s->cmd];
    return NULL;
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

/* Whether a request waits in its connection's queue for a reply.  A PMIx
 * request always does (pairing is by id, so an abort that is never answered
 * holds nobody up); one whose header does not decode cannot be paired. */
static int expects_reply(const pg_trace_event_t *e)
{
    if (is_pmix(e))
        return e->pmix.kind == PG_TRACE_PMIX_REQUEST;
    return pg_trace_phase_of(e->cmd) != PG_TRACE_PHASE_ABORT;
}

typedef struct pending {
    long head, tail; /* spans of one connection still waiting, oldest first */
} pending_t;

static void add_span(pg_trace_analysis_t *a, size_t ev, pending_t *q, long *next)
{
    const pg_trace_event_t *e = &a->trace->events[ev];
    pg_trace_span_t *s = &a->spans[a->nspans];
    pg_trace_cmd_stats_t *c;

    if (is_pmix(e) && e->pmix.kind == PG_TRACE_PMIX_PREAMBLE)
        return; /* opens the connection; nothing answers it */
    *s = (pg_trace_span_t){ .rank = e->rank, .conn = e->conn, .phase = event_phase(e),
                            .cmd = e->cmd, .pmix_cmd = is_pmix(e) ? e->pmix.cmd : 0, .req = ev,
                            .rep = PG_TRACE_NONE, .start = e->t_ns, .end = a->t_last,
                            .fence = PG_TRACE_NONE };
    next[a->nspans] = PG_TRACE_NONE;
    c = cmd_stats(a, s);
    if (c == NULL)
        a->unknown_requests++;
    else
        c->requests++;
    if (expects_reply(e)) {
        if (q->tail != PG_TRACE_NONE)
            next[q->tail] = (long)a->nspans;
        else
            q->head = (long)a->nspans;
        q->tail = (long)a->nspans;
    }
    a->nspans++;
}

/* Takes the pending span a reply answers out of its connection's queue:
 * the oldest (PMI), or the oldest with the reply's request id (PMIx).
 * Returns its index or PG_TRACE_NONE. */
static long take_pending(const pg_trace_analysis_t *a, const pg_trace_event_t *rep, pending_t *q,
                         long *next)
{
    long prev = PG_TRACE_NONE, k = q->head;

    if (is_pmix(rep)) {
        if (rep->pmix.kind != PG_TRACE_PMIX_REPLY)
            return PG_TRACE_NONE;
        while (k != PG_TRACE_NONE && a->trace->events[a->spans[k].req].pmix.id != rep->pmix.id) {
            prev = k;
            k = next[k];
        }
    } else if (is_unsolicited(rep->cmd)) {
        return PG_TRACE_NONE;
    }
    if (k == PG_TRACE_NONE)
        return PG_TRACE_NONE;
    if (prev == PG_TRACE_NONE)
        q->head = next[k];
    else
        next[prev] = next[k];
    if (q->tail == k)
        q->tail = prev;
    return k;
}

static void answer_span(pg_trace_analysis_t *a, size_t ev, pending_t *q, long *next)
{
    const pg_trace_event_t *e = &a->trace->events[ev];
    long k = take_pending(a, e, q, next);
    pg_trace_cmd_stats_t *c;
    pg_trace_span_t *s;

    if (k == PG_TRACE_NONE)
        return;
    s = &a->spans[k];
    s->rep = (long)ev;
    s->end = e->t_ns;
    a->reply_to[ev] = (long)s->req;
    c = cmd_stats(a, s);
    if (c != NULL) {
        c->answered++;
        c->total_wait += s->end - s->start;
        if (s->end - s->start > c->max_wait)
            c->max_wait = s->end - s->start;
    }
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

/* A PMIx fence counts as one of the job's fences when it is over the whole
 * namespace (no procs, or the namespace's wildcard); PMI-1 barriers and
 * PMI-2 fences always are. */
static int is_job_fence(const pg_trace_analysis_t *a, const pg_trace_span_t *s)
{
    const pg_trace_event_t *e = &a->trace->events[s->req];

    if (!is_pmix(e))
        return 1;
    return pg_trace_pmix_fence_is_whole(e->bytes, e->len, a->trace->header.kvsname);
}

static int count_fences(pg_trace_analysis_t *a, int *per_rank)
{
    int max = 0;

    for (size_t i = 0; i < a->nspans; i++) {
        pg_trace_span_t *s = &a->spans[i];

        if (s->phase != PG_TRACE_PHASE_FENCE || s->rank < 0 || !is_job_fence(a, s))
            continue;
        s->fence = per_rank[s->rank]++;
        if (s->fence + 1 > max)
            max = s->fence + 1;
    }
    return max;
}

static void fence_add(const pg_trace_analysis_t *a, pg_trace_fence_t *f, const pg_trace_span_t *s)
{
    const char *name = pg_trace_event_name(&a->trace->events[s->req]);

    if (f->entered > 0 && strcmp(name, f->name) != 0)
        f->mixed = 1;
    if (f->entered == 0 || s->start < f->first_entry) {
        f->first_entry = s->start;
        f->cmd = s->cmd;
        f->name = name;
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
            fence_add(a, &a->fences[a->spans[i].fence], &a->spans[i]);
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
