/*
 * pg_conn: a rank's PMI connection: capped input buffer, framing, parsing,
 * protocol detection, rank identification for listener connections, and
 * dispatch to the protocol handler.  See pg_conn.h.
 *
 * Re-entrancy: handlers and the owner may close or free the connection from
 * inside any callback.  `busy` counts the callbacks on the stack; a free
 * requested while busy is carried out when the outermost one returns.
 *
 * Back-pressure: while more than PG_CONN_OUT_PAUSE bytes of replies wait for
 * the peer, no further request is read or dispatched (complete ones stay in
 * the input buffer); conn_pump resumes once the queue is half drained.  A
 * peer that has gone (EPIPE on write) gets its replies dropped, and its
 * remaining input is still read, so an abort sent before exiting counts.
 */
#include "gateway/io/pg_conn.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parser/pg_parse.h"
#include "pmix_common.h"
#include "wire/pg_clock.h"
#include "wire/pg_frame.h"
#include "wire/pg_pmix_frame.h"

/* A connection's input buffer starts at 1 KiB and doubles as messages
 * need (conn_reserve): a rank's requests are a few hundred bytes, and at
 * 4 096 ranks 4 KiB each was 16 MB of the gateway's resident size. */
enum { PG_CONN_INBUF_INITIAL = 1024, PG_CONN_REASON_MAX = 256 };

struct pg_conn {
    pg_peer_t peer;               /* what the handler sees: rank, job, ops */
    struct event_base *base;
    int fd;                       /* owned; -1 once closed */
    const pg_handler_table_t *handlers;
    const pg_proto_handler_t *handler; /* chosen by the first message */
    const pg_conn_owner_ops_t *ops;
    void *owner;
    pg_proto_t proto;
    struct event *rev;
    struct event *wev;
    struct evbuffer *out;
    char *in;                     /* received bytes: [in_start, in_end) unread */
    size_t in_start, in_end, in_cap;
    pg_msg_t msg;                 /* reused for every message */
    pg_frame_skip_t skip;         /* the rest of an over-long message, dropped */
    pg_conn_trace_fn trace;
    void *trace_arg;
    size_t out_traced;            /* bytes at the head of `out` already traced */
    int busy;
    unsigned opened : 1;          /* a handler took the first message */
    unsigned announced : 1;       /* owner's `opened` was called */
    unsigned finalized : 1;
    unsigned close_after_flush : 1;
    unsigned closed : 1;
    unsigned free_pending : 1;
    unsigned quiet_close : 1;     /* closing from pg_conn_free: no owner callback */
    unsigned by_peer : 1;         /* ended by EOF or reset, not by what was sent */
    unsigned write_armed : 1;     /* wev is added (replies wait for the socket) */
    unsigned read_paused : 1;     /* rev is removed: too many replies unread */
    unsigned peer_gone : 1;       /* writes fail with EPIPE: replies are dropped */
    unsigned hold_asked : 1;      /* the owner's hold_init was asked */
    unsigned held : 1;            /* requests wait for pg_conn_release_hold */
};

static void conn_really_free(pg_conn_t *c);

static void conn_enter(pg_conn_t *c)
{
    c->busy++;
}

/* Leaves a callback; returns 1 if the connection was freed. */
static int conn_leave(pg_conn_t *c)
{
    if (--c->busy == 0 && c->free_pending) {
        conn_really_free(c);
        return 1;
    }
    return 0;
}

/* Ends the connection and tells the handler, then the owner. */
static void conn_close(pg_conn_t *c, const char *reason)
{
    if (c->closed)
        return;
    c->closed = 1;
    if (c->rev != NULL)
        event_del(c->rev);
    if (c->wev != NULL)
        event_del(c->wev);
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
    if (c->opened && c->handler != NULL && c->handler->on_close != NULL)
        c->handler->on_close(&c->peer);
    if (!c->quiet_close && c->ops != NULL && c->ops->closed != NULL)
        c->ops->closed(c->owner, c, reason);
}

static void conn_fail(pg_conn_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void conn_fail(pg_conn_t *c, const char *fmt, ...)
{
    char reason[PG_CONN_REASON_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (c->fd >= 0 && evbuffer_get_length(c->out) > 0)
        (void)evbuffer_write(c->out, c->fd); /* a last error reply, best effort */
    conn_close(c, reason);
}

static void conn_trace(pg_conn_t *c, pg_conn_dir_t dir, const char *bytes, size_t len)
{
    if (c->trace != NULL && len > 0)
        c->trace(c->trace_arg, c, dir, bytes, len);
}

/* Traces the output appended since the last trace. */
static void conn_trace_output(pg_conn_t *c)
{
    size_t len = evbuffer_get_length(c->out);
    struct evbuffer_ptr pos;
    char *copy;

    if (c->trace == NULL || len <= c->out_traced)
        return;
    copy = malloc(len - c->out_traced);
    if (copy != NULL && evbuffer_ptr_set(c->out, &pos, c->out_traced, EVBUFFER_PTR_SET) == 0 &&
        evbuffer_copyout_from(c->out, &pos, copy, len - c->out_traced) >= 0)
        conn_trace(c, PG_CONN_OUT, copy, len - c->out_traced);
    free(copy);
    c->out_traced = len;
}

/* The peer cannot take replies any more (it closed or exited): what is
 * queued and what comes later is dropped, while its input is still read to
 * the EOF that follows. */
static void conn_drop_output(pg_conn_t *c)
{
    c->peer_gone = 1;
    c->by_peer = 1;
    (void)evbuffer_drain(c->out, evbuffer_get_length(c->out));
}

/* Writes what the socket takes; closes after a finalize once empty. */
static int conn_write(pg_conn_t *c)
{
    size_t left;

    if (c->closed)
        return -1;
    conn_trace_output(c);
    if (evbuffer_get_length(c->out) > 0 && evbuffer_write(c->out, c->fd) < 0 &&
        errno != EAGAIN && errno != EINTR) {
        if (errno != EPIPE && errno != ECONNRESET) {
            conn_fail(c, "PMI connection write failed: %s", strerror(errno));
            return -1;
        }
        conn_drop_output(c);
    }
    left = evbuffer_get_length(c->out);
    c->out_traced = left;
    /* held-back requests are taken again from the loop (on_writable), never
     * inside the callback of whoever flushed */
    if (c->read_paused && left <= PG_CONN_OUT_PAUSE / 2)
        event_active(c->wev, EV_WRITE, 1);
    if (left > 0) {
        c->write_armed = 1;
        return event_add(c->wev, NULL);
    }
    if (c->write_armed) /* the common case costs no event_del per reply */
        event_del(c->wev);
    c->write_armed = 0;
    if (c->close_after_flush)
        conn_close(c, c->finalized ? NULL : "PMI connection closed by its protocol handler");
    return 0;
}

static void conn_process(pg_conn_t *c);

/* Stops taking requests while the peer leaves its replies unread. */
static int conn_backed_up(pg_conn_t *c)
{
    if (evbuffer_get_length(c->out) <= PG_CONN_OUT_PAUSE)
        return 0;
    if (!c->read_paused) {
        c->read_paused = 1;
        event_del(c->rev);
    }
    return 1;
}

/* Writes, and while that frees enough room, takes the requests held back
 * by conn_backed_up.  Returns conn_write's result. */
static int conn_pump(pg_conn_t *c)
{
    int rc;

    while ((rc = conn_write(c)) == 0 && !c->closed && c->read_paused &&
           evbuffer_get_length(c->out) <= PG_CONN_OUT_PAUSE / 2) {
        c->read_paused = 0;
        if (event_add(c->rev, NULL) != 0) {
            conn_fail(c, "cannot watch its PMI connection any more");
            return -1;
        }
        conn_process(c);
    }
    return rc;
}

/* A batch of requests was handled: the owner re-arms what depends on it
 * (the engine timer at the engine's next deadline). */
static void conn_served(pg_conn_t *c)
{
    if (!c->closed && c->ops != NULL && c->ops->served != NULL)
        c->ops->served(c->owner, c);
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
    pg_conn_t *c = arg;

    (void)fd;
    (void)what;
    conn_enter(c);
    conn_pump(c);
    conn_served(c);
    conn_leave(c);
}

/* The protocol of a connection is the one its first message asks for: the
 * init line is PMI-1 framed for both versions, pmi_version=2 means PMI-2. */
static pg_proto_t detect_proto(const pg_msg_t *msg)
{
    if (msg->cmd == PG_CMD_PMI1_INIT && pg_str_eq(pg_msg_get(msg, "pmi_version"), "2"))
        return PG_PROTO_PMI2;
    return msg->proto;
}

static void conn_announce(pg_conn_t *c)
{
    if (c->announced || !c->opened || c->peer.rank < 0)
        return;
    c->announced = 1;
    if (c->ops != NULL && c->ops->opened != NULL)
        c->ops->opened(c->owner, c);
}

static int conn_open_proto(pg_conn_t *c, pg_proto_t proto)
{
    if (proto <= PG_PROTO_NONE || proto > PG_PROTO_PMIX || c->handlers == NULL ||
        c->handlers->by_proto[proto] == NULL) {
        conn_fail(c, "speaks %s, which this pmigate cannot serve", pg_proto_name(proto));
        return -1;
    }
    if ((proto == PG_PROTO_PMIX) != (c->handlers->by_proto[proto]->on_frame != NULL)) {
        conn_fail(c, "speaks %s, whose handler cannot take its framing", pg_proto_name(proto));
        return -1;
    }
    c->proto = proto;
    c->handler = c->handlers->by_proto[proto];
    c->opened = 1;
    if (c->handler->on_open != NULL && c->handler->on_open(&c->peer) != 0) {
        conn_fail(c, "was refused by the %s handler", c->handler->name);
        return -1;
    }
    conn_announce(c);
    return 0;
}

static int conn_open(pg_conn_t *c, const pg_msg_t *msg)
{
    return conn_open_proto(c, detect_proto(msg));
}

/* Takes `rank` (what = the message that named it) for a listener
 * connection, if the owner agrees. */
static int conn_claim_rank(pg_conn_t *c, long rank, const char *what)
{
    const char *why = "refused";

    if (rank < 0 || rank > 0x7fffffff) {
        conn_fail(c, "sent '%s' on PMI_PORT without a valid rank", what);
        return -1;
    }
    if (c->ops != NULL && c->ops->identify != NULL &&
        c->ops->identify(c->owner, c, (int)rank, &why) != 0) {
        conn_fail(c, "claimed rank %ld on PMI_PORT: %s", rank, why);
        return -1;
    }
    c->peer.rank = (int)rank;
    conn_announce(c);
    return 0;
}

/* A listener connection names its rank in its handshake
 * (docs/wire-protocol.md, "Connections"): PMI-1 "initack pmiid=R", PMI-2 "fullinit pmirank=R" (Slurm's
 * client sends srcid= instead when PMI_ID is set). */
static int conn_identify(pg_conn_t *c, const pg_msg_t *msg)
{
    pg_str_t val = { NULL, 0 };
    long rank;

    if (msg->cmd == PG_CMD_PMI1_INIT)
        return 0; /* the version handshake comes before the rank */
    if (msg->cmd == PG_CMD_PMI1_INITACK)
        val = pg_msg_get(msg, "pmiid");
    else if (msg->cmd == PG_CMD_PMI2_FULLINIT) {
        val = pg_msg_get(msg, "pmirank");
        if (val.ptr == NULL)
            val = pg_msg_get(msg, "srcid");
    } else {
        conn_fail(c, "sent '%s' on PMI_PORT before saying which rank it is",
                  pg_cmd_name(msg->cmd));
        return -1;
    }
    if (pg_str_to_long(val, &rank) != 0)
        rank = -1;
    return conn_claim_rank(c, rank, pg_cmd_name(msg->cmd));
}

static int conn_dispatch(pg_conn_t *c, pg_msg_t *msg, int parse_rc)
{
    int rc;

    if (!c->opened && conn_open(c, msg) != 0)
        return -1;
    if (c->peer.rank < 0 && conn_identify(c, msg) != 0)
        return -1;
    rc = c->handler->on_message(&c->peer, msg, parse_rc);
    if (c->closed)
        return -1;
    if (rc == PG_HANDLER_FAIL) {
        conn_fail(c, "broke the %s protocol ('%.*s')", c->handler->name, (int)msg->name.len,
                  msg->name.ptr ? msg->name.ptr : "");
        return -1;
    }
    if (rc == PG_HANDLER_CLOSE)
        c->close_after_flush = 1;
    return 0;
}

void pg_conn_rehome(pg_conn_t *conn, const pg_peer_job_t *job, int rank,
                    const pg_conn_owner_ops_t *ops, void *owner)
{
    conn->peer.job = job;
    conn->peer.rank = rank;
    conn->ops = ops;
    conn->owner = owner;
}

/* A tool's preamble: only a PMI_PORT connection that has named no rank
 * may be one, and its owner must take it in. */
static int conn_become_tool(pg_conn_t *c)
{
    const char *why = "this pmigate takes no tools here";

    if (c->peer.rank >= 0) {
        conn_fail(c, "sent a tool's PMIx preamble on a rank's connection");
        return -1;
    }
    if (c->ops == NULL || c->ops->tool == NULL || c->ops->tool(c->owner, c, &why) != 0) {
        conn_fail(c, "was refused as a tool: %s", why);
        return -1;
    }
    return 0;
}

/* PMIx (wire/pg_pmix_frame.h): the preamble opens the connection and, on
 * PMI_PORT, names the rank or says it is a tool's.  Returns 0, 1 (need
 * more bytes) or -1 (closed). */
static int conn_pmix_preamble(pg_conn_t *c, const char *head, size_t avail)
{
    pg_pmix_preamble_t pre;
    int rc = pg_pmix_preamble_parse(head, avail, &pre);

    if (rc == PG_PMIX_FRAME_NEED_MORE)
        return 1;
    if (rc != PG_PMIX_FRAME_OK) {
        conn_fail(c, "sent a PMIx preamble pmigate cannot accept: %s", pg_pmix_frame_strerror(rc));
        return -1;
    }
    conn_trace(c, PG_CONN_IN, head, PG_PMIX_PREAMBLE_LEN);
    c->in_start += PG_PMIX_PREAMBLE_LEN;
    if ((pre.flags & PG_PMIX_FLAG_TOOL) != 0 && conn_become_tool(c) != 0)
        return -1;
    if (conn_open_proto(c, PG_PROTO_PMIX) != 0)
        return -1;
    if (c->peer.rank < 0 &&
        conn_claim_rank(c, pre.rank == PG_PMIX_RANK_FROM_FD ? -1 : (long)pre.rank,
                        "PMIx preamble") != 0)
        return -1;
    return 0;
}

/* PMIx: one length-prefixed frame to the handler's on_frame.  Returns 0,
 * 1 (need more bytes) or -1 (closed). */
static int conn_pmix_frame(pg_conn_t *c, const char *head, size_t avail)
{
    size_t len;
    int rc = pg_pmix_frame_next(head, avail, PG_PMIX_FRAME_MAX, &len);

    if (rc == PG_PMIX_FRAME_NEED_MORE)
        return 1;
    if (rc != PG_PMIX_FRAME_OK) {
        conn_fail(c, "sent a message that cannot be framed: %s", pg_pmix_frame_strerror(rc));
        return -1;
    }
    conn_trace(c, PG_CONN_IN, head, PG_PMIX_HEADER_LEN + len);
    /* the payload stays put until the next read, as PMI tokens do */
    c->in_start += PG_PMIX_HEADER_LEN + len;
    rc = c->handler->on_frame(&c->peer, head + PG_PMIX_HEADER_LEN, len);
    if (c->closed)
        return -1;
    if (rc == PG_HANDLER_FAIL) {
        conn_fail(c, "broke the %s protocol (a malformed request)", c->handler->name);
        return -1;
    }
    if (rc == PG_HANDLER_CLOSE)
        c->close_after_flush = 1;
    return 0;
}

/* An over-long PMI message (wire/pg_frame.h): answered by its head, as a
 * message that breaks a limit is, while the rest is dropped as it arrives,
 * so the connection goes on.  The trace gets the head.  Returns 0, 1 (need
 * more bytes for the head) or -1 (closed). */
static int conn_oversized(pg_conn_t *c, char *head, size_t avail, int err)
{
    pg_frame_t frame;
    int rc = pg_frame_oversized(head, avail, err, &frame);

    if (rc == PG_WIRE_ENEED_MORE)
        return 1;
    conn_trace(c, PG_CONN_IN, head, frame.consumed);
    rc = pg_parse_frame(head, &frame, &c->msg);
    c->in_start += frame.consumed;
    pg_frame_skip_start(&c->skip, &frame);
    if (rc == PG_WIRE_ENOMEM) {
        conn_fail(c, "out of memory parsing a PMI message");
        return -1;
    }
    return conn_dispatch(c, &c->msg, err) != 0 ? -1 : 0;
}

/* Is the next request held for a debugger (owner's hold_init)?  Asked once
 * the rank is known, at its first request: a PMIx preamble is not one (a
 * tool says what it is there, and tools are never held). */
static int conn_holds(pg_conn_t *c, const char *head, size_t avail)
{
    if (c->held || c->hold_asked)
        return c->held;
    if (c->peer.rank < 0 || (!c->opened && pg_pmix_is_start(head, avail)))
        return 0;
    c->hold_asked = 1;
    if (c->ops != NULL && c->ops->hold_init != NULL && c->ops->hold_init(c->owner, c))
        c->held = 1;
    return c->held;
}

/* Frames, parses and dispatches every complete message in the buffer. */
static void conn_process(pg_conn_t *c)
{
    while (!c->closed && !c->close_after_flush && c->in_start < c->in_end &&
           !conn_backed_up(c)) {
        char *head = c->in + c->in_start;
        size_t avail = c->in_end - c->in_start;
        pg_frame_t frame;
        int rc;

        if (conn_holds(c, head, avail))
            break;
        if (c->skip.kind != PG_FRAME_NONE) {
            c->in_start += pg_frame_skip(&c->skip, head, avail);
            continue;
        }
        if (c->proto == PG_PROTO_PMIX || (!c->opened && pg_pmix_is_start(head, avail))) {
            rc = c->opened ? conn_pmix_frame(c, head, avail) : conn_pmix_preamble(c, head, avail);
            if (rc < 0)
                return;
            if (rc > 0)
                break;
            continue;
        }
        rc = pg_frame_next(head, avail, &frame);

        if (rc == PG_WIRE_ENEED_MORE)
            break;
        if (pg_frame_is_oversized(rc)) {
            rc = conn_oversized(c, head, avail, rc);
            if (rc < 0)
                return;
            if (rc > 0)
                break;
            continue;
        }
        if (rc != PG_WIRE_OK) {
            conn_fail(c, "sent a message that cannot be framed: %s", pg_wire_strerror(rc));
            return;
        }
        conn_trace(c, PG_CONN_IN, head, frame.consumed);
        rc = pg_parse_frame(head, &frame, &c->msg);
        /* the tokens point into `head`, which stays put until the next read */
        c->in_start += frame.consumed;
        if (rc == PG_WIRE_ENOMEM) {
            conn_fail(c, "out of memory parsing a PMI message");
            return;
        }
        if (conn_dispatch(c, &c->msg, rc) != 0)
            return;
    }
    if (c->in_start == c->in_end)
        c->in_start = c->in_end = 0;
}

/* Makes room for the next read: compacts, then grows up to the cap. */
static int conn_reserve(pg_conn_t *c)
{
    size_t max = c->peer.rank < 0           ? (size_t)PG_CONN_HELLO_MAX
                 : c->proto == PG_PROTO_PMIX ? (size_t)PG_PMIX_HEADER_LEN + PG_PMIX_FRAME_MAX
                                             : (size_t)PG_CONN_INBUF_MAX;
    size_t cap;
    char *grown;

    if (c->in_end < c->in_cap)
        return 0;
    if (c->in_start > 0) {
        memmove(c->in, c->in + c->in_start, c->in_end - c->in_start);
        c->in_end -= c->in_start;
        c->in_start = 0;
        return 0;
    }
    if (c->in_cap >= max) {
        conn_fail(c, "sent a message longer than %zu bytes", max);
        return -1;
    }
    cap = c->in_cap * 2 < max ? c->in_cap * 2 : max;
    grown = realloc(c->in, cap);
    if (grown == NULL) {
        conn_fail(c, "out of memory buffering a PMI message");
        return -1;
    }
    c->in = grown;
    c->in_cap = cap;
    return 0;
}

static void conn_eof(pg_conn_t *c)
{
    c->by_peer = 1;
    if (c->finalized || (!c->opened && c->in_end == c->in_start))
        conn_close(c, NULL);
    else if (c->held)
        conn_close(c, "closed its PMI connection while held in init for a debugger");
    else if (c->in_end > c->in_start || c->skip.kind != PG_FRAME_NONE)
        conn_close(c, "closed its PMI connection in the middle of a message");
    else
        conn_close(c, "closed its PMI connection before finalize");
}

/* Reads up to max_reads times (stopping at EAGAIN), processing as it goes. */
static void conn_read(pg_conn_t *c, int max_reads)
{
    while (!c->closed && !c->read_paused && max_reads-- > 0) {
        ssize_t n;

        if (conn_reserve(c) != 0)
            return;
        n = read(c->fd, c->in + c->in_end, c->in_cap - c->in_end);
        if (n < 0 && errno == EINTR) {
            max_reads++;
            continue;
        }
        if (n < 0 && errno == EAGAIN)
            break;
        if (n < 0 && errno != ECONNRESET) {
            conn_fail(c, "PMI connection read failed: %s", strerror(errno));
            return;
        }
        /* a peer that exits with replies unread resets the socket: an EOF */
        if (n <= 0) {
            conn_eof(c);
            return;
        }
        c->in_end += (size_t)n;
        if (c->ops != NULL && c->ops->heard != NULL && c->peer.rank >= 0)
            c->ops->heard(c->owner, c);
        conn_process(c);
        if (c->read_paused && !c->closed)
            conn_pump(c); /* a gone peer's replies are dropped: read on */
    }
    if (!c->closed)
        conn_pump(c);
    conn_served(c);
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    pg_conn_t *c = arg;

    (void)fd;
    (void)what;
    conn_enter(c);
    conn_read(c, 1);
    conn_leave(c);
}

static const pg_peer_ops_t conn_peer_ops;

pg_conn_t *pg_conn_new(struct event_base *base, int fd, int rank, const pg_peer_job_t *job,
                       const pg_handler_table_t *handlers, const pg_conn_owner_ops_t *ops,
                       void *owner)
{
    pg_conn_t *c = calloc(1, sizeof(*c));

    if (c == NULL) {
        close(fd);
        return NULL;
    }
    c->peer.ops = &conn_peer_ops;
    c->peer.job = job;
    c->peer.rank = rank;
    c->base = base;
    c->fd = fd;
    c->handlers = handlers;
    c->ops = ops;
    c->owner = owner;
    pg_msg_init(&c->msg);
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    c->in_cap = PG_CONN_INBUF_INITIAL;
    c->in = malloc(c->in_cap);
    c->out = evbuffer_new();
    c->rev = event_new(base, fd, EV_READ | EV_PERSIST, on_readable, c);
    c->wev = event_new(base, fd, EV_WRITE, on_writable, c);
    if (c->in == NULL || c->out == NULL || c->rev == NULL || c->wev == NULL ||
        event_add(c->rev, NULL) != 0) {
        c->quiet_close = 1;
        conn_really_free(c);
        return NULL;
    }
    return c;
}

static void conn_really_free(pg_conn_t *c)
{
    c->quiet_close = 1;
    conn_close(c, NULL);
    if (c->rev != NULL)
        event_free(c->rev);
    if (c->wev != NULL)
        event_free(c->wev);
    if (c->out != NULL)
        evbuffer_free(c->out);
    pg_msg_release(&c->msg);
    free(c->in);
    free(c);
}

void pg_conn_free(pg_conn_t *c)
{
    if (c == NULL)
        return;
    if (c->busy > 0) {
        c->quiet_close = 1;
        conn_close(c, NULL);
        c->free_pending = 1;
        return;
    }
    conn_really_free(c);
}

int pg_conn_rank(const pg_conn_t *c)
{
    return c->peer.rank;
}

pg_proto_t pg_conn_proto(const pg_conn_t *c)
{
    return c->proto;
}

pg_peer_t *pg_conn_peer(pg_conn_t *c)
{
    return &c->peer;
}

pg_conn_t *pg_conn_of(pg_peer_t *peer)
{
    return (pg_conn_t *)((char *)peer - offsetof(pg_conn_t, peer));
}

/* Writes what is queued, unless a read batch is on the stack (it writes
 * when it ends).  Fails the connection whose peer leaves too much unread. */
static int conn_flush(pg_conn_t *c)
{
    int rc;

    if (c->closed)
        return -1;
    if (c->peer_gone)
        (void)evbuffer_drain(c->out, evbuffer_get_length(c->out));
    if (evbuffer_get_length(c->out) > PG_CONN_OUTBUF_MAX) {
        conn_fail(c, "left more than %d bytes of PMI replies unread", PG_CONN_OUTBUF_MAX);
        return -1;
    }
    if (c->busy > 0)
        return 0; /* inside a read batch: written when the batch ends */
    conn_enter(c);
    rc = conn_write(c);
    conn_leave(c);
    return rc;
}

/* Writes bytes straight to the socket when no output is queued before them,
 * so the usual reply (one request, one reply) costs one write() and no
 * evbuffer copy.  Returns how many bytes the socket took: 0 when output is
 * queued, or on EAGAIN or an error (the queued copy meets the error again
 * in conn_write, at the point where the connection can safely fail). */
static size_t conn_write_direct(pg_conn_t *c, const void *bytes, size_t len)
{
    ssize_t n;

    if (evbuffer_get_length(c->out) > 0)
        return 0;
    conn_trace(c, PG_CONN_OUT, bytes, len);
    do
        n = write(c->fd, bytes, len);
    while (n < 0 && errno == EINTR);
    return n > 0 ? (size_t)n : 0;
}

int pg_conn_send(pg_conn_t *c, const void *bytes, size_t len)
{
    size_t done, queued;

    if (c->closed)
        return -1;
    if (c->peer_gone)
        return 0; /* nobody to read it; the EOF comes next */
    done = conn_write_direct(c, bytes, len);
    if (done < len) {
        queued = evbuffer_get_length(c->out);
        if (evbuffer_add(c->out, (const char *)bytes + done, len - done) != 0)
            return -1;
        if (queued == 0)
            c->out_traced = len - done; /* traced when written directly */
    }
    return conn_flush(c);
}

void pg_conn_set_finalized(pg_conn_t *c)
{
    if (c->finalized)
        return;
    c->finalized = 1;
    if (c->ops != NULL && c->ops->finalized != NULL && c->peer.rank >= 0)
        c->ops->finalized(c->owner, c);
}

void pg_conn_set_trace(pg_conn_t *c, pg_conn_trace_fn fn, void *arg)
{
    c->trace = fn;
    c->trace_arg = arg;
}

void pg_conn_drain(pg_conn_t *c)
{
    if (c->closed)
        return;
    conn_enter(c);
    conn_pump(c); /* a reaped peer's held-back replies are dropped first */
    conn_read(c, 64);
    conn_leave(c);
}

int pg_conn_closed_by_peer(const pg_conn_t *c)
{
    return c->by_peer;
}

/* ---- the seam (server/pg_handler.h), as a connection serves it ---- */

static int peer_reply_send(pg_peer_t *peer, const void *bytes, size_t len)
{
    return pg_conn_send(pg_conn_of(peer), bytes, len);
}

static void peer_job_abort(pg_peer_t *peer, int code, const char *msg)
{
    pg_conn_t *c = pg_conn_of(peer);

    if (c->ops != NULL && c->ops->job_abort != NULL)
        c->ops->job_abort(c->owner, c, code, msg);
}

static void peer_finalize(pg_peer_t *peer)
{
    pg_conn_set_finalized(pg_conn_of(peer));
}

/* The one clock (the job's timers and the trace read it too). */
static uint64_t peer_clock_now(pg_peer_t *peer)
{
    (void)peer;
    return pg_clock_now();
}

static void peer_log_write(pg_peer_t *peer, const char *line)
{
    pg_conn_t *c = pg_conn_of(peer);

    if (c->ops != NULL && c->ops->log_write != NULL)
        c->ops->log_write(c->owner, c, line);
}

static int peer_log_to(pg_peer_t *peer, pg_log_channel_t channel, int priority, const char *text)
{
    pg_conn_t *c = pg_conn_of(peer);

    if (c->ops != NULL && c->ops->log_to != NULL)
        return c->ops->log_to(c->owner, c, channel, priority, text);
    if (channel != PG_LOG_STDERR)
        return -1;
    pg_peer_log(peer, "rank %d logged: %s", peer->rank, text);
    return 0;
}

static void peer_job_signal(pg_peer_t *peer, const int *ranks, size_t nranks, int signo)
{
    pg_conn_t *c = pg_conn_of(peer);

    if (c->ops != NULL && c->ops->job_signal != NULL)
        c->ops->job_signal(c->owner, c, ranks, nranks, signo);
}

static void peer_spawn(pg_peer_t *peer, const pg_spawn_req_t *req, pg_spawn_done_fn done,
                       void *cbdata)
{
    pg_conn_t *c = pg_conn_of(peer);
    pg_spawn_result_t no = { .rc = PMIX_ERR_NOT_SUPPORTED, .errmsg = "spawn_is_not_supported_here",
                             .nprocs = 0 };

    if (c->ops != NULL && c->ops->spawn != NULL)
        c->ops->spawn(c->owner, c, req, done, cbdata);
    else
        done(&no, cbdata);
}

static void peer_segment_reader(pg_peer_t *peer)
{
    pg_conn_t *c = pg_conn_of(peer);

    if (c->ops != NULL && c->ops->segment_reader != NULL)
        c->ops->segment_reader(c->owner, c);
}

static int peer_monitor(pg_peer_t *peer, const pg_monitor_req_t *req)
{
    pg_conn_t *c = pg_conn_of(peer);

    if (c->ops != NULL && c->ops->monitor != NULL)
        return c->ops->monitor(c->owner, c, req);
    return PMIX_ERR_NOT_SUPPORTED;
}

static void peer_debugger_release(pg_peer_t *peer, const char *nspace)
{
    pg_conn_t *c = pg_conn_of(peer);

    if (c->ops != NULL && c->ops->debugger_release != NULL)
        c->ops->debugger_release(c->owner, c, nspace);
}

void pg_conn_release_hold(pg_conn_t *conn)
{
    if (conn == NULL || !conn->held)
        return;
    conn->held = 0;
    conn_enter(conn);
    conn_process(conn);
    if (!conn->closed)
        conn_pump(conn);
    conn_served(conn);
    conn_leave(conn);
}

int pg_conn_held(const pg_conn_t *conn)
{
    return conn->held;
}

static const pg_peer_ops_t conn_peer_ops = {
    .debugger_release = peer_debugger_release,
    .spawn = peer_spawn,
    .reply_send = peer_reply_send,
    .job_signal = peer_job_signal,
    .job_abort = peer_job_abort,
    .peer_finalize = peer_finalize,
    .clock_now = peer_clock_now,
    .log_write = peer_log_write,
    .log_to = peer_log_to,
    .segment_reader = peer_segment_reader,
    .monitor = peer_monitor,
};
