/*
 * pg_replay: the replay loop.  See pg_replay.h.
 *
 * One thread and poll(): the replayer is a client with a few sockets per
 * rank whose only job is to step through the recording, so a loop that
 * advances every actor as far as the causal order allows, then sleeps until
 * a reply or the next paced send, is the simplest thing that is correct.
 */
#include "trace/pg_replay_int.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/pg_replay_gw.h"
#include "trace/pg_replay_msg.h"
#include "trace/pg_replay_pmix.h"
#include "trace/pg_trace.h"
#include "trace/pg_trace_view.h"
#include "wire/pg_clock.h"
#include "wire/pg_frame.h"
#include "wire/pg_io.h"
#include "wire/pg_pmix_frame.h"

enum {
    REPLAY_READ_CHUNK = 64 * 1024,
    REPLAY_QUIET_MS = 300,   /* parked connections must stay silent this long */
    REPLAY_HANG_SHOWN = 8,
    REPLAY_FINISH_GRACE_S = 10,
};

const char pg_replay_usage[] =
    "Usage: pmigate replay [--fast] [--timeout S] [--ranks N] [--trace OUT] [--verbose] FILE\n"
    "\n"
    "Replay a trace written by `pmigate run --trace FILE` against a fresh\n"
    "gateway, without the application: every recorded request is sent again\n"
    "(after the replies that preceded it in the recording have arrived) and\n"
    "every reply is compared with the recorded one (PMIx replies by request\n"
    "id, in any order), except the job's namespace (kvsname, jobid and thrid\n"
    "values; PMIx namespaces) and machine-dependent PMIx keys (host names,\n"
    "node lists, cpusets).\n"
    "  --fast        do not keep the recorded pace\n"
    "  --timeout S   give up after S seconds (default 60): exit status 124\n"
    "  --ranks N     replay the pattern as N ranks (a load generator): rank\n"
    "                numbers and per-rank key suffixes renamed, replies checked\n"
    "                for command, rc and found (PMIx: status) only\n"
    "  --trace OUT   record the replay gateway's traffic to OUT\n"
    "  --verbose     print every message sent and received\n"
    "Exit status: 0 every reply matched; 1 a mismatch (the first is printed);\n"
    "124 the replay hung; 2 bad usage.\n";


/* ---------------------------------------------------------------- */
/* options                                                            */
/* ---------------------------------------------------------------- */

static int parse_positive(const char *s, double max, double *out)
{
    char *end;
    double v;

    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v > 0) || v > max)
        return -1;
    *out = v;
    return 0;
}

int pg_replay_parse_args(int argc, char **argv, pg_replay_opts_t *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->timeout = 60;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        double v;

        if (strcmp(a, "--fast") == 0) {
            o->fast = 1;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            o->verbose = 1;
        } else if (strcmp(a, "--timeout") == 0) {
            if (parse_positive(val, 1e6, &o->timeout) != 0)
                return snprintf(err, errlen, "--timeout expects seconds, got '%s'",
                                val ? val : ""), -1;
            i++;
        } else if (strcmp(a, "--ranks") == 0) {
            if (parse_positive(val, 1 << 16, &v) != 0 || v != (int)v)
                return snprintf(err, errlen, "--ranks expects a number of ranks, got '%s'",
                                val ? val : ""), -1;
            o->ranks = (int)v;
            i++;
        } else if (strcmp(a, "--trace") == 0) {
            if (val == NULL)
                return snprintf(err, errlen, "--trace needs a file name"), -1;
            o->trace = val;
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            return snprintf(err, errlen, "unknown option '%s'", a), -1;
        } else if (o->file == NULL) {
            o->file = a;
        } else {
            return snprintf(err, errlen, "one trace at a time ('%s')", a), -1;
        }
    }
    if (o->file == NULL)
        return snprintf(err, errlen, "missing the trace file"), -1;
    return 0;
}

/* ---------------------------------------------------------------- */
/* reporting                                                          */
/* ---------------------------------------------------------------- */

static const pg_trace_event_t *ev_of(const replay_t *rp, const actor_t *a, size_t k)
{
    return &rp->t->events[a->steps[k]];
}

/* The request step k's reply answers: the last one sent before it, or on a
 * PMIx connection the last one before it with the reply's request id. */
static long request_step_before(const replay_t *rp, const actor_t *a, size_t k)
{
    const pg_trace_event_t *rep = k < a->nsteps ? ev_of(rp, a, k) : NULL;
    int by_id = a->pmix && rep != NULL && rep->dir == PG_TRACE_S2C &&
                rep->pmix.kind == PG_TRACE_PMIX_REPLY;

    while (k-- > 0) {
        const pg_trace_event_t *e = ev_of(rp, a, k);

        if (e->dir == PG_TRACE_C2S && (!by_id || e->pmix.id == rep->pmix.id))
            return (long)k;
    }
    return -1;
}

static const pg_trace_event_t *request_before(const replay_t *rp, const actor_t *a, size_t k)
{
    long r = request_step_before(rp, a, k);

    return r >= 0 ? ev_of(rp, a, (size_t)r) : NULL;
}

/* A message for people: a PMIx one decoded, any other escaped. */
static void print_message(const char *label, const char *bytes, size_t len, int pmix,
                          int from_client)
{
    pg_trace_pmix_msg_t m = { 0 };
    char *text = NULL;

    if (pmix) {
        pg_trace_pmix_decode(bytes, len, from_client, &m);
        if (m.head.kind != PG_TRACE_PMIX_BAD)
            text = pg_trace_pmix_format(&m);
        pg_trace_pmix_msg_release(&m);
    }
    if (text == NULL && (text = malloc(pg_escaped_max(len))) != NULL)
        pg_escape(bytes, len, text);
    if (text != NULL)
        fprintf(stderr, "  %-9s %s\n", label, text);
    free(text);
}

/* The first mismatch: `k` is the step whose reply was expected (a->pos
 * unless a PMIx reply overtook), want that reply or NULL. */
static void report_mismatch(replay_t *rp, const actor_t *a, size_t k, const pg_trace_event_t *want,
                            const char *got, size_t glen, const char *why)
{
    const pg_trace_event_t *req = request_before(rp, a, k);
    char id[16] = "";

    if (a->pmix && req != NULL && req->pmix.kind == PG_TRACE_PMIX_REQUEST)
        snprintf(id, sizeof(id), " #%u", (unsigned)req->pmix.id);
    fprintf(stderr, "pmigate replay: MISMATCH: rank %d, %s %s%s (trace line %u, connection %d)\n",
            a->rank, want != NULL ? "reply to" : "after the reply to",
            req ? pg_trace_event_name(req) : "nothing", id,
            want ? want->line : req ? req->line : 0, rp->t->conns[a->conn].id);
    if (want != NULL)
        print_message("expected:", want->bytes, want->len, a->pmix, 0);
    else
        fprintf(stderr, "  %-9s %s\n", "expected:", "no message here");
    if (got != NULL)
        print_message("got:", got, glen, a->pmix, 0);
    else
        fprintf(stderr, "  %-9s %s\n", "got:", "the gateway closed the connection");
    if (why != NULL && why[0] != '\0')
        fprintf(stderr, "  %-9s %s\n", "first difference:", why);
    rp->verdict = PG_REPLAY_EXIT_MISMATCH;
}

static void report_hang(const replay_t *rp)
{
    int shown = 0, waiting = 0;

    fprintf(stderr, "pmigate replay: HANG: the replay did not finish within %g s\n", rp->o->timeout);
    for (int i = 0; i < rp->nactors; i++) {
        const actor_t *a = &rp->actors[i];
        const pg_trace_event_t *e;

        if (a->finished || a->parked)
            continue;
        waiting++;
        if (shown++ >= REPLAY_HANG_SHOWN)
            continue;
        e = ev_of(rp, a, a->pos);
        if (e->dir == PG_TRACE_S2C) {
            const pg_trace_event_t *req = request_before(rp, a, a->pos);

            fprintf(stderr, "  rank %d still waits for the reply to %s (trace line %u)\n",
                    a->rank, req ? pg_trace_event_name(req) : "?", e->line);
        } else {
            fprintf(stderr, "  rank %d holds %s (trace line %u) until a reply recorded before "
                            "it arrives on another connection\n",
                    a->rank, pg_trace_event_name(e), e->line);
        }
    }
    if (shown > REPLAY_HANG_SHOWN)
        fprintf(stderr, "  ... and %d more connection%s\n", waiting - REPLAY_HANG_SHOWN,
                waiting - REPLAY_HANG_SHOWN == 1 ? "" : "s");
}

/* ---------------------------------------------------------------- */
/* sending                                                            */
/* ---------------------------------------------------------------- */

/* A PMIx connection opens with the preamble.  A recording always has it
 * (the gateway traces it), but a hand-made or cut trace may not: then the
 * replayer says it itself, as libpmix would. */
static int actor_open_pmix(replay_t *rp, actor_t *a, const pg_trace_event_t *first)
{
    unsigned char pre[PG_PMIX_PREAMBLE_LEN];

    a->opened_pmix = 1;
    if (pg_pmix_is_start(first->bytes, first->len))
        return 0;
    pg_pmix_preamble_encode(pre, a->via_port ? (uint32_t)a->rank : PG_PMIX_RANK_FROM_FD);
    if (pg_io_send_all(a->fd, pre, sizeof(pre)) != 0) {
        report_mismatch(rp, a, a->pos, NULL, NULL, 0, "sending the PMIx preamble failed");
        return -1;
    }
    return 0;
}

static int actor_open(replay_t *rp, actor_t *a)
{
    /* a PMI_PORT connection is opened by the rank's stub: the gateway
     * accepts a rank's claim only from that rank's process tree */
    if (a->via_port)
        a->fd = pg_replay_gw_port_fd(rp->gw, a->rank);
    else
        a->fd = pg_replay_gw_take_fd(rp->gw, a->rank);
    if (a->fd < 0) {
        fprintf(stderr, "pmigate replay: rank %d: cannot open its %s connection%s%s\n", a->rank,
                a->via_port ? "PMI_PORT" : "PMI_FD", errno ? ": " : "",
                errno ? strerror(errno) : "");
        rp->verdict = PG_REPLAY_EXIT_MISMATCH;
        return -1;
    }
    return 0;
}

static void verbose_msg(const replay_t *rp, const actor_t *a, const char *dir, const char *b,
                        size_t len)
{
    char *esc;

    if (!rp->o->verbose || (esc = malloc(pg_escaped_max(len))) == NULL)
        return;
    pg_escape(b, len, esc);
    fprintf(stderr, "replay: rank %d %s %s\n", a->rank, dir, esc);
    free(esc);
}

static int actor_send(replay_t *rp, actor_t *a, const pg_trace_event_t *e)
{
    char *msg;
    size_t len;
    int rc;

    if (a->fd < 0 && actor_open(rp, a) != 0)
        return -1;
    if (a->pmix && !a->opened_pmix && actor_open_pmix(rp, a, e) != 0)
        return -1;
    if ((a->pmix ? pg_replay_pmix_rewrite(&a->map, e->bytes, e->len, &msg, &len)
                 : pg_replay_rewrite(&a->map, e->bytes, e->len, &msg, &len)) != 0) {
        fprintf(stderr, "pmigate replay: out of memory\n");
        rp->verdict = PG_REPLAY_EXIT_MISMATCH;
        return -1;
    }
    verbose_msg(rp, a, "->", msg, len);
    rc = pg_io_send_all(a->fd, msg, len);
    free(msg);
    if (rc != 0 && !pg_replay_is_abort(e)) {
        report_mismatch(rp, a, a->pos, NULL, NULL, 0, "sending the request failed: the gateway closed "
                                              "the connection");
        return -1;
    }
    rp->sent++;
    return 0;
}

static void actor_finish(actor_t *a)
{
    a->finished = 1;
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
}

/* Whether the recorded connection ended by the protocol (finalize answered,
 * or an abort sent); otherwise the job was stopped with the rank still
 * connected, and the replay keeps the connection open the same way. */
static int ends_closed(const replay_t *rp, const actor_t *a)
{
    const pg_trace_event_t *last = a->nsteps ? ev_of(rp, a, a->nsteps - 1) : NULL;

    if (last == NULL)
        return 1;
    if (last->proto == PG_PROTO_PMIX)
        return pg_replay_is_abort(last) ||
               (last->pmix.kind == PG_TRACE_PMIX_REPLY && last->pmix.cmd == PG_PMIX_CMD_FINALIZE);
    return last->cmd == PG_CMD_PMI1_FINALIZE_ACK || last->cmd == PG_CMD_PMI2_FINALIZE_RESPONSE ||
           pg_replay_is_abort(last);
}

static int arrived(const replay_t *rp, const actor_t *a, size_t k)
{
    return rp->seen[(size_t)a->block * rp->t->nevents + a->steps[k]];
}

/* Steps over PMIx replies that already arrived out of order. */
static void skip_arrived(const replay_t *rp, actor_t *a)
{
    while (a->pmix && a->pos < a->nsteps && ev_of(rp, a, a->pos)->dir == PG_TRACE_S2C &&
           arrived(rp, a, a->pos))
        a->pos++;
}

/* Sends what the actor may send now.  Returns 1 if it moved. */
static int actor_advance(replay_t *rp, actor_t *a, uint64_t now)
{
    int moved = 0;

    skip_arrived(rp, a);
    while (!a->finished && !a->parked && a->pos < a->nsteps && rp->verdict == 0) {
        size_t ev = a->steps[a->pos];
        const pg_trace_event_t *e = &rp->t->events[ev];
        uint64_t due = rp->t0 + (e->t_ns - rp->t->events[0].t_ns);

        if (e->dir == PG_TRACE_S2C || rp->low[a->block] < ev ||
            (rp->next_exit < rp->nexits && ev >= rp->exits[rp->next_exit].rec->before))
            break;
        if (!rp->o->fast && now < due) {
            if (due < rp->next_wake)
                rp->next_wake = due;
            break;
        }
        if (actor_send(rp, a, e) != 0)
            return 1;
        a->pos++;
        moved = 1;
    }
    if (!a->finished && !a->parked && a->pos == a->nsteps) {
        if (ends_closed(rp, a))
            actor_finish(a);
        else
            a->parked = 1;
        moved = 1;
    }
    return moved;
}

/* Has rank's every connection done the steps recorded before event `before`? */
static int rank_caught_up(const replay_t *rp, int rank, size_t before)
{
    for (int i = 0; i < rp->nactors; i++) {
        const actor_t *a = &rp->actors[i];

        if (a->rank == rank && !a->finished && a->pos < a->nsteps && a->steps[a->pos] < before)
            return 0;
    }
    return 1;
}

/* The next recorded exit, once everything recorded before it happened:
 * the rank's connections that end before it close, and its stub ends with
 * the recorded code or signal.  A connection still used after it (a child
 * of the rank holds it) stays.  Returns 1 if it moved. */
static int exit_advance(replay_t *rp, uint64_t now)
{
    const pg_trace_record_t *rec;
    uint64_t first, due;

    if (rp->next_exit >= rp->nexits || rp->verdict != 0)
        return 0;
    rec = rp->exits[rp->next_exit].rec;
    first = rp->t->nevents > 0 ? rp->t->events[0].t_ns : rec->t_ns;
    due = rp->t0 + (rec->t_ns > first ? rec->t_ns - first : 0);
    if (rp->low[0] < rec->before || !rank_caught_up(rp, rec->rank, rec->before))
        return 0;
    if (!rp->o->fast && now < due) {
        if (due < rp->next_wake)
            rp->next_wake = due;
        return 0;
    }
    for (int i = 0; i < rp->nactors; i++) {
        actor_t *a = &rp->actors[i];

        if (a->rank == rec->rank && !a->finished && a->steps[a->nsteps - 1] < rec->before)
            actor_finish(a);
    }
    if (rp->o->verbose)
        fprintf(stderr, "replay: rank %d %s %d, as recorded (trace line %u)\n", rec->rank,
                rec->signal ? "killed by signal" : "exits with", rec->signal ? rec->signal : rec->code,
                rec->line);
    (void)pg_replay_gw_exit(rp->gw, rec->rank, rec->code, rec->signal);
    rp->next_exit++;
    return 1;
}

/* ---------------------------------------------------------------- */
/* receiving                                                          */
/* ---------------------------------------------------------------- */

/* The step a PMIx reply answers: the first recorded reply not yet arrived
 * with its request id whose request is already out (its step is before
 * pos) — it may be recorded after requests that the causal order still
 * holds back.  Else the next step, to be reported. */
static size_t pmix_reply_step(const replay_t *rp, const actor_t *a, const char *msg, size_t len)
{
    unsigned id;

    if (pg_replay_pmix_reply_id(msg, len, &id) != 0)
        return a->pos;
    for (size_t k = a->pos; k < a->nsteps; k++) {
        const pg_trace_event_t *e = ev_of(rp, a, k);

        if (e->dir == PG_TRACE_S2C && !arrived(rp, a, k) && e->pmix.id == id &&
            request_step_before(rp, a, k) < (long)a->pos)
            return k;
    }
    return a->pos;
}

static int reply_matches(const replay_t *rp, const actor_t *a, size_t k, const char *msg,
                         size_t len, char *why, size_t whylen)
{
    const pg_trace_event_t *want = ev_of(rp, a, k), *req;

    if (!a->pmix)
        return pg_replay_compare(&a->map, want->bytes, want->len, msg, len, rp->o->ranks > 0, why,
                                 whylen) == 0;
    req = request_before(rp, a, k);
    return pg_replay_pmix_compare(&a->map, req ? req->bytes : NULL, req ? req->len : 0,
                                  want->bytes, want->len, msg, len, rp->o->ranks > 0, why,
                                  whylen) == 0;
}

static void actor_got(replay_t *rp, actor_t *a, const char *msg, size_t len)
{
    size_t k = a->pmix ? pmix_reply_step(rp, a, msg, len) : a->pos;
    const pg_trace_event_t *want = k < a->nsteps ? ev_of(rp, a, k) : NULL;
    char why[512];

    verbose_msg(rp, a, "<-", msg, len);
    if (want == NULL && a->parked && rp->t->cut_line > 0)
        return; /* the trace was cut: what came after is not known */
    if (want == NULL || want->dir != PG_TRACE_S2C) {
        report_mismatch(rp, a, k, NULL, msg, len, "the gateway sent a message the recording "
                                                  "does not have here");
        return;
    }
    if (!reply_matches(rp, a, k, msg, len, why, sizeof(why))) {
        report_mismatch(rp, a, k, want, msg, len, why);
        return;
    }
    rp->seen[(size_t)a->block * rp->t->nevents + a->steps[k]] = 1;
    pg_replay_advance_low(rp, a->block);
    if (k == a->pos)
        a->pos++;
    skip_arrived(rp, a);
    rp->matched++;
}

/* Length of the first whole message in the actor's input, 0 when more
 * bytes are needed, -1 (with *err) when the stream cannot be framed. */
static long next_message(const actor_t *a, const char **err)
{
    pg_frame_t frame;
    size_t payload;
    int rc;

    if (a->pmix) {
        rc = pg_pmix_frame_next(a->in, a->in_len, PG_PMIX_FRAME_MAX, &payload);
        if (rc == PG_PMIX_FRAME_NEED_MORE)
            return 0;
        *err = pg_pmix_frame_strerror(rc);
        return rc == PG_PMIX_FRAME_OK ? (long)(PG_PMIX_HEADER_LEN + payload) : -1;
    }
    rc = pg_frame_next(a->in, a->in_len, &frame);
    if (rc == PG_WIRE_ENEED_MORE)
        return 0;
    *err = pg_wire_strerror(rc);
    return rc == PG_WIRE_OK ? (long)frame.consumed : -1;
}

static int grow_in(actor_t *a)
{
    char *grown;

    if (a->in_cap - a->in_len >= REPLAY_READ_CHUNK)
        return 0;
    grown = realloc(a->in, a->in_cap + REPLAY_READ_CHUNK);
    if (grown == NULL)
        return -1;
    a->in = grown;
    a->in_cap += REPLAY_READ_CHUNK;
    return 0;
}

static void actor_read(replay_t *rp, actor_t *a)
{
    const char *err = NULL;
    ssize_t n;
    long m;

    if (grow_in(a) != 0) {
        fprintf(stderr, "pmigate replay: out of memory\n");
        rp->verdict = PG_REPLAY_EXIT_MISMATCH;
        return;
    }
    n = read(a->fd, a->in + a->in_len, a->in_cap - a->in_len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        const pg_trace_event_t *want = a->pos < a->nsteps ? ev_of(rp, a, a->pos) : NULL;

        if (a->parked || (rp->failed && want != NULL)) {
            actor_finish(a); /* the recorded job failed: the gateway is going away */
            return;
        }
        report_mismatch(rp, a, a->pos, want, NULL, 0, NULL);
        actor_finish(a);
        return;
    }
    a->in_len += (size_t)n;
    while (rp->verdict == 0 && a->in_len > 0 && (m = next_message(a, &err)) != 0) {
        if (m < 0) {
            report_mismatch(rp, a, a->pos, NULL, a->in, a->in_len, err);
            return;
        }
        actor_got(rp, a, a->in, (size_t)m);
        memmove(a->in, a->in + m, a->in_len - (size_t)m);
        a->in_len -= (size_t)m;
    }
}

/* ---------------------------------------------------------------- */
/* the loop                                                           */
/* ---------------------------------------------------------------- */

static int advance_all(replay_t *rp)
{
    int moved, left;

    do {
        uint64_t now = pg_clock_now();

        moved = 0;
        left = 0;
        rp->next_wake = UINT64_MAX;
        for (int i = 0; i < rp->nactors && rp->verdict == 0; i++) {
            moved |= actor_advance(rp, &rp->actors[i], now);
            left += !rp->actors[i].finished && !rp->actors[i].parked;
        }
        while (exit_advance(rp, now))
            moved = 1;
    } while (moved && rp->verdict == 0);
    return left + (rp->nexits - rp->next_exit);
}

static int poll_timeout_ms(const replay_t *rp, uint64_t now)
{
    uint64_t until = rp->next_wake < rp->deadline ? rp->next_wake : rp->deadline;

    if (until <= now)
        return 0;
    return (until - now) / 1000000 > INT_MAX ? INT_MAX : (int)((until - now + 999999) / 1000000);
}

static int count_parked(const replay_t *rp)
{
    int n = 0;

    for (int i = 0; i < rp->nactors; i++)
        n += rp->actors[i].parked && !rp->actors[i].finished;
    return n;
}

static void run_loop(replay_t *rp)
{
    int quiet_started = 0;

    struct pollfd *pfd = calloc((size_t)rp->nactors + 1, sizeof(*pfd));
    int *who = calloc((size_t)rp->nactors + 1, sizeof(*who));

    if (pfd == NULL || who == NULL) {
        rp->verdict = PG_REPLAY_EXIT_MISMATCH;
        goto out;
    }
    for (;;) {
        int active = advance_all(rp);
        uint64_t now = pg_clock_now();
        int n = 0;

        if (rp->verdict != 0)
            break;
        if (active == 0 && count_parked(rp) == 0)
            break;
        if (active == 0 && !quiet_started) {
            /* everyone is where the recording stopped: listen a little
             * longer for replies the recording does not have */
            quiet_started = 1;
            if (rp->deadline > now + REPLAY_QUIET_MS * 1000000ull)
                rp->deadline = now + REPLAY_QUIET_MS * 1000000ull;
        }
        if (active == 0 && now >= rp->deadline)
            break;
        if (now >= rp->deadline) {
            report_hang(rp);
            rp->verdict = PG_REPLAY_EXIT_HANG;
            break;
        }
        for (int i = 0; i < rp->nactors; i++) {
            if (rp->actors[i].fd >= 0) {
                pfd[n] = (struct pollfd){ rp->actors[i].fd, POLLIN, 0 };
                who[n++] = i;
            }
        }
        if (poll(pfd, (nfds_t)n, poll_timeout_ms(rp, now)) < 0 && errno != EINTR)
            break;
        for (int k = 0; k < n && rp->verdict == 0; k++)
            if (pfd[k].revents != 0)
                actor_read(rp, &rp->actors[who[k]]);
    }
out:
    free(pfd);
    free(who);
}

static void raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* The gateway of a replay that repeated how the job ended (an abort, the
 * ranks' exits) must end by itself, with the recorded status. */
static void judge_end(replay_t *rp, int st)
{
    if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == rp->end_status) {
        if (rp->end_status != 0)
            fprintf(stderr, "pmigate replay: the gateway exited with status %d, as the "
                            "recorded job did\n",
                    rp->end_status);
        return;
    }
    if (st < 0)
        fprintf(stderr, "pmigate replay: the gateway did not exit after the replay; the "
                        "recorded job exited with status %d\n",
                rp->end_status);
    else if (WIFSIGNALED(st))
        fprintf(stderr, "pmigate replay: the gateway was killed by signal %d\n", WTERMSIG(st));
    else
        fprintf(stderr, "pmigate replay: MISMATCH: the gateway exited with status %d, the "
                        "recorded job with %d\n",
                WEXITSTATUS(st), rp->end_status);
    rp->verdict = st < 0 ? PG_REPLAY_EXIT_HANG : PG_REPLAY_EXIT_MISMATCH;
}

/* Waits for the gateway to end after the replay and judges how it ended. */
static void finish_gateway(replay_t *rp)
{
    uint64_t grace = pg_clock_now() + REPLAY_FINISH_GRACE_S * 1000000000ull;
    int parked = count_parked(rp);
    int kill_first = rp->verdict != 0 || (parked > 0 && !rp->expect_end);
    int st = pg_replay_gw_finish(rp->gw, kill_first, grace);

    if (rp->verdict != 0)
        return;
    if (rp->expect_end) {
        judge_end(rp, st);
        return;
    }
    if (parked > 0) {
        fprintf(stderr, "pmigate replay: the recording stops with %d connection%s still open "
                        "(%s); the gateway stayed silent there too\n",
                parked, parked == 1 ? "" : "s",
                rp->t->cut_line > 0 ? "the trace is cut short" : "the job was stopped");
        return;
    }
    if (st < 0) {
        fprintf(stderr, "pmigate replay: the gateway did not exit after the replay\n");
        rp->verdict = PG_REPLAY_EXIT_HANG;
    } else if (WIFSIGNALED(st)) {
        fprintf(stderr, "pmigate replay: the gateway was killed by signal %d\n", WTERMSIG(st));
        rp->verdict = PG_REPLAY_EXIT_MISMATCH;
    } else if (WEXITSTATUS(st) != 0 && !rp->had_abort) {
        fprintf(stderr, "pmigate replay: the gateway exited with status %d\n", WEXITSTATUS(st));
        rp->verdict = PG_REPLAY_EXIT_MISMATCH;
    }
}

static void print_summary(const replay_t *rp)
{
    char d[32];

    fprintf(stderr, "pmigate replay: %s: %zu replies matched, %zu requests sent, %d rank%s, "
                    "%d connection%s, %s\n",
            rp->o->file, rp->matched, rp->sent, rp->nranks, rp->nranks == 1 ? "" : "s",
            rp->nactors, rp->nactors == 1 ? "" : "s",
            pg_trace_fmt_duration(pg_clock_now() - rp->t0, d, sizeof(d)));
}

int pg_replay_run(const pg_replay_opts_t *o, const char *self_exe)
{
    replay_t rp = { .o = o };
    pg_replay_gw_job_t job;
    char err[256];

    rp.t = pg_trace_load(o->file, err, sizeof(err));
    if (rp.t == NULL) {
        fprintf(stderr, "pmigate replay: %s: %s\n", o->file, err);
        return PG_REPLAY_EXIT_MISMATCH;
    }
    pg_trace_say_cut(rp.t, "pmigate replay", o->file);
    raise_fd_limit();
    rp.deadline = pg_clock_now() + (uint64_t)(o->timeout * 1e9);
    if (pg_replay_plan(&rp) != 0 || pg_replay_plan_gateway(&rp, &job) != 0) {
        rp.verdict = PG_REPLAY_EXIT_MISMATCH;
        goto out;
    }
    rp.gw = pg_replay_gw_start(self_exe, &job, rp.deadline, err, sizeof(err));
    if (rp.gw == NULL) {
        fprintf(stderr, "pmigate replay: %s\n", err);
        rp.verdict = PG_REPLAY_EXIT_MISMATCH;
        goto out;
    }
    for (int i = 0; i < rp.nactors; i++)
        rp.actors[i].map.new_kvs = pg_replay_gw_kvsname(rp.gw);
    rp.t0 = pg_clock_now();
    run_loop(&rp);
    finish_gateway(&rp);
    if (rp.verdict == 0)
        print_summary(&rp);
out:
    pg_replay_gw_free(rp.gw);
    pg_replay_plan_free(&rp);
    pg_trace_free(rp.t);
    return rp.verdict;
}

int pg_replay_main(int argc, char **argv)
{
    pg_replay_opts_t o;
    char err[256], self[PATH_MAX];
    ssize_t n;

    if (argc > 0 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        fputs(pg_replay_usage, stdout);
        return 0;
    }
    if (pg_replay_parse_args(argc, argv, &o, err, sizeof(err)) != 0) {
        fprintf(stderr, "pmigate replay: %s\n%s", err, pg_replay_usage);
        return 2;
    }
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) {
        fprintf(stderr, "pmigate replay: cannot find the pmigate binary: %s\n", strerror(errno));
        return PG_REPLAY_EXIT_MISMATCH;
    }
    self[n] = '\0';
    return pg_replay_run(&o, self);
}
