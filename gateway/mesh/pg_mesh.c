/*
 * pg_mesh: the proxies' channel -- its API, the hub's routing and relay,
 * and liveness.  See pg_mesh.h for the rules, docs/proxy.md for the
 * design, and pg_mesh_int.h for how the channel is split into this file,
 * pg_mesh_link.c (one link: frames, handshake) and pg_mesh_net.c
 * (listening, accepting, dialing).  This file is the top of the three: it
 * calls the others and hands them its callbacks (pg_mesh_t's link_up_fn,
 * relay_fn, dial_lost_fn); they call nothing here.
 */
#include "gateway/mesh/pg_mesh_int.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "gateway/util/pg_be.h"
#include "wire/pg_clock.h"

static void hub_check_ready(pg_mesh_t *m);

/* Seconds from an environment variable (> 0), else `dflt` ns. */
static uint64_t env_seconds(const char *name, uint64_t dflt)
{
    const char *text = getenv(name);
    char *end;
    double s;

    if (text == NULL || *text == '\0')
        return dflt;
    s = strtod(text, &end);
    if (*end != '\0' || !(s > 0) || s > 86400)
        return dflt;
    return (uint64_t)(s * 1e9);
}

/* ---------------------------------------------------------------- */
/* the hub's relay                                                  */
/* ---------------------------------------------------------------- */

/* A frame from the hub's point of view: for another node, pass it on. */
static void relay(pg_mesh_t *m, const link_t *from, unsigned type, uint32_t src, uint32_t dst,
                  const unsigned char *body, size_t len)
{
    if (dst != PG_MESH_ALL) {
        if (dst < (uint32_t)m->nnodes && m->peers[dst] != NULL)
            pg_mesh_link_write(m->peers[dst], type, src, dst, body, len);
        return;
    }
    for (int n = 0; n < m->nnodes; n++)
        if (m->peers[n] != NULL && m->peers[n] != from)
            pg_mesh_link_write(m->peers[n], type, src, dst, body, len);
}

/* ---------------------------------------------------------------- */
/* liveness                                                           */
/* ---------------------------------------------------------------- */

/* Bytes waiting unread on the link's socket: a link whose frames are
 * there but not yet read is not silent (this loop was busy). */
static bool link_has_input(const link_t *l)
{
    int n = 0;

    if (evbuffer_get_length(bufferevent_get_input(l->bev)) > 0)
        return true;
    return ioctl(bufferevent_getfd(l->bev), FIONREAD, &n) == 0 && n > 0;
}

static void tick_links(pg_mesh_t *m, uint64_t now)
{
    for (int n = 0; n < m->nnodes; n++) {
        link_t *l = m->peers[n];
        char why[96];

        if (l == NULL)
            continue;
        if (now - l->last_tx >= m->heartbeat_ns && !m->leaving)
            pg_mesh_link_say(l, T_HEARTBEAT, NULL, 0);
        if (now - l->last_rx < m->timeout_ns || now < l->quiet_until || link_has_input(l))
            continue;
        snprintf(why, sizeof(why), "nothing came from it for %.1f s",
                 (double)(now - l->last_rx) / 1e9);
        pg_mesh_link_drop(l, why);
    }
}

static void tick_pending(pg_mesh_t *m, uint64_t now)
{
    link_t *next;

    for (link_t *l = m->pending; l != NULL; l = next) {
        next = l->next;
        if (now < l->deadline)
            continue;
        if (l == m->dialing)
            snprintf(m->dial_err, sizeof(m->dial_err), "no answer within %d ms",
                     l->state == L_DIALING ? DIAL_ATTEMPT_MS : PG_MESH_HANDSHAKE_MS);
        pg_mesh_link_drop(l, "did not finish the handshake");
        next = m->pending; /* the list may have changed (a new dial) */
    }
}

/* Nodes that never linked by the start deadline are gone (the hub: its
 * leaves; a leaf: the hub). */
static void tick_start(pg_mesh_t *m, uint64_t now)
{
    char why[200];
    double bound = (double)(m->start_deadline - m->created_at) / 1e9;

    if (!m->started || now < m->start_deadline)
        return;
    /* a leaf linked to the hub but never told READY: the hub waits for a
     * node this leaf cannot name (the hub names it and ends the job) */
    if (m->nodeid != 0 && m->joined[0] && !m->hub_ready && !m->refused) {
        m->refused = true;
        snprintf(m->refused_why, sizeof(m->refused_why),
                 "node 0 did not say within %.0f s that every node had joined: another node "
                 "did not come", bound);
        event_base_loopbreak(m->base);
    }
    for (int n = 0; n < m->nnodes; n++) {
        bool expected = m->nodeid == 0 ? n != 0 : n == 0;

        if (!expected || m->joined[n] || m->gone[n])
            continue;
        if (m->nodeid != 0 && m->dial_err[0] != '\0')
            snprintf(why, sizeof(why), "it could not be reached within %.0f s (%s)", bound,
                     m->dial_err);
        else
            snprintf(why, sizeof(why), "it did not join within %.0f s", bound);
        if (n == 0 && m->dialing != NULL)
            pg_mesh_link_drop(m->dialing, why);
        pg_mesh_report_gone(m, n, 0, why);
    }
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    pg_mesh_t *m = arg;
    uint64_t now = pg_clock_now();

    (void)fd;
    (void)what;
    /* this loop was held (a long step): what the peers sent meanwhile is
     * unread, so their silence is not theirs */
    if (now - m->last_tick > ms_ns(4 * TICK_MS))
        for (int n = 0; n < m->nnodes; n++)
            if (m->peers[n] != NULL && m->peers[n]->last_rx < now - ms_ns(TICK_MS))
                m->peers[n]->last_rx = now - ms_ns(TICK_MS);
    m->last_tick = now;
    tick_links(m, now);
    tick_pending(m, now);
    tick_start(m, now);
    pg_mesh_refusals_tell(m, now, false);
}

/* ---------------------------------------------------------------- */
/* frames from this node to itself                                    */
/* ---------------------------------------------------------------- */

/* Why a loopback: the hub is a node with ranks of its own, and a frame it
 * sends itself ("to the hub") must take the same path as a leaf's -- the
 * same handler, in the order sent, and never inside the sender's own stack
 * (pg_proxy_dyn.c says what goes wrong otherwise).  So it waits in a queue
 * the loop drains on its next turn. */

/* One at a time: a handler may send itself more, or free nothing here. */
static void on_loopback(evutil_socket_t fd, short what, void *arg)
{
    pg_mesh_t *m = arg;
    pg_mesh_frame_t *f;

    (void)fd;
    (void)what;
    while ((f = pg_mesh_queue_pop(&m->loopback)) != NULL) {
        if (m->handlers[f->type].fn != NULL)
            m->handlers[f->type].fn(m->handlers[f->type].arg, f->src, f->body, f->len);
        free(f);
    }
}

static int send_self(pg_mesh_t *m, unsigned type, const void *body, size_t len)
{
    static const struct timeval now = { 0, 0 };

    if (pg_mesh_queue_push(&m->loopback, type, m->nodeid, body, len) != 0)
        return -1;
    return evtimer_add(m->loop_ev, &now);
}

/* ---------------------------------------------------------------- */
/* the API                                                            */
/* ---------------------------------------------------------------- */

pg_mesh_t *pg_mesh_new(struct event_base *base, const pg_mesh_opts_t *o, char *err,
                       size_t errlen)
{
    pg_mesh_t *m = calloc(1, sizeof(*m));
    struct timeval tick = ns_tv(ms_ns(TICK_MS));
    const char *addr = o->addr != NULL ? o->addr : getenv("PMIGATE_MESH_ADDR");

    if (m == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    m->base = base;
    m->nodeid = o->nodeid;
    m->nnodes = o->nnodes;
    m->heartbeat_ns = o->heartbeat_ns > 0 ? o->heartbeat_ns : ms_ns(500);
    m->timeout_ns = o->timeout_ns > 0 ? o->timeout_ns : env_seconds("PMIGATE_MESH_TIMEOUT",
                                                                      ms_ns(3000));
    m->connect_ns = o->connect_ns > 0 ? o->connect_ns : env_seconds("PMIGATE_MESH_CONNECT",
                                                                      ms_ns(30000));
    m->peers = calloc((size_t)m->nnodes, sizeof(*m->peers));
    m->gone = calloc((size_t)m->nnodes, sizeof(*m->gone));
    m->joined = calloc((size_t)m->nnodes, sizeof(*m->joined));
    m->dial_timer = evtimer_new(base, pg_mesh_on_dial_timer, m);
    m->tick = event_new(base, -1, EV_PERSIST, on_tick, m);
    m->loop_ev = evtimer_new(base, on_loopback, m);
    pg_mesh_queue_init(&m->loopback);
    m->link_up_fn = hub_check_ready;
    m->dial_lost_fn = pg_mesh_dial_next;
    m->stranger_dropped_fn = pg_mesh_refusal_note;
    m->relay_fn = relay;
    if (m->nnodes < 1 || m->nodeid < 0 || m->nodeid >= m->nnodes) {
        snprintf(err, errlen, "node %d of %d is not a node", m->nodeid, m->nnodes);
        goto fail;
    }
    if (m->peers == NULL || m->gone == NULL || m->joined == NULL || m->dial_timer == NULL ||
        m->tick == NULL || m->loop_ev == NULL || pg_mesh_random(m->token, sizeof(m->token)) != 0) {
        snprintf(err, errlen, "out of resources");
        goto fail;
    }
    if (pg_mesh_listen(m, addr != NULL && *addr != '\0' ? addr : NULL, err, errlen) != 0)
        goto fail;
    /* Not accepting until pg_mesh_start: the owner's loop may run before
     * (the host's exchange of the cards), and a handshake needs the
     * secret, which the cards make; the kernel holds early connections. */
    evconnlistener_disable(m->listener);
    m->last_tick = m->created_at = pg_clock_now();
    m->start_deadline = m->created_at + m->connect_ns;
    if (o->start_by > 0 && o->start_by < m->start_deadline)
        m->start_deadline = o->start_by;
    event_add(m->tick, &tick);
    return m;
fail:
    pg_mesh_free(m);
    return NULL;
}

void pg_mesh_free(pg_mesh_t *m)
{
    if (m == NULL)
        return;
    pg_mesh_refusals_tell(m, pg_clock_now(), true); /* what the window counted so far */
    m->leaving = true; /* no dialing again while links go */
    m->gone_fn = NULL; /* nobody to tell: the owner is freeing */
    while (m->pending != NULL)
        pg_mesh_link_drop(m->pending, "the mesh is closed");
    for (int n = 0; m->peers != NULL && n < m->nnodes; n++)
        if (m->peers[n] != NULL)
            pg_mesh_link_drop(m->peers[n], "the mesh is closed");
    if (m->listener != NULL)
        evconnlistener_free(m->listener);
    if (m->dial_timer != NULL)
        event_free(m->dial_timer);
    if (m->tick != NULL)
        event_free(m->tick);
    pg_mesh_queue_clear(&m->loopback);
    if (m->loop_ev != NULL)
        event_free(m->loop_ev);
    free(m->peers);
    free(m->gone);
    free(m->joined);
    free(m);
}

const char *pg_mesh_card(const pg_mesh_t *m)
{
    return m->card;
}

/* The job secret: SHA-256 over a label and every node's random bytes, in
 * node order (docs/proxy.md, "Start-up"). */
static int job_secret(pg_mesh_t *m, const char *const *cards, char *err, size_t errlen)
{
    static const char label[] = "pmigate-mesh-v1";
    unsigned char *tokens = malloc((size_t)m->nnodes * TOKEN_LEN);
    const void *part[2] = { label, tokens };
    size_t len[2] = { sizeof(label), (size_t)m->nnodes * TOKEN_LEN };
    int rc = -1;

    if (tokens == NULL) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int n = 0; n < m->nnodes; n++)
        if (pg_mesh_parse_card(m, cards[n], tokens + (size_t)n * TOKEN_LEN,
                               n == 0 && m->nodeid != 0) != 0) {
            snprintf(err, errlen, "node %d's mesh card does not parse: '%s'", n,
                     cards[n] != NULL ? cards[n] : "(none)");
            goto out;
        }
    if (pg_mesh_sha256(part, len, 2, m->secret) != 0) {
        snprintf(err, errlen, "the job secret could not be hashed (libcrypto failed)");
        goto out;
    }
    rc = 0;
out:
    free(tokens);
    return rc;
}

int pg_mesh_start(pg_mesh_t *m, const char *const *cards, char *err, size_t errlen)
{
    if (job_secret(m, cards, err, errlen) != 0)
        return -1;
    m->started = true;
    if (evconnlistener_enable(m->listener) != 0) {
        snprintf(err, errlen, "cannot accept the other proxies' connections");
        return -1;
    }
    if (m->nodeid != 0)
        pg_mesh_dial_next(m);
    return 0;
}

/* A leaf is ready once the hub has every leaf (READY): before, the hub
 * could not relay a frame to a leaf that is not linked yet, and would
 * drop it -- a fence's data sent by the first leaf up, say. */
static bool mesh_ready(const pg_mesh_t *m)
{
    if (m->nodeid != 0)
        return m->peers[0] != NULL && m->hub_ready;
    for (int n = 1; n < m->nnodes; n++)
        if (m->peers[n] == NULL)
            return false;
    return true;
}

/* Nodes this one waits for at start that are gone: the first one's index. */
static int first_missing(const pg_mesh_t *m)
{
    for (int n = 0; n < m->nnodes; n++)
        if (n != m->nodeid && m->gone[n] && (m->nodeid == 0 || n == 0))
            return n;
    return -1;
}

/* pg_mesh_wait_ready's gone callback: remember why, stop the loop. */
static void wait_gone(void *arg, int node, int orderly, const char *why)
{
    pg_mesh_t *m = arg;

    (void)orderly;
    if (!m->refused) {
        m->refused = true;
        snprintf(m->refused_why, sizeof(m->refused_why), "node %d: %s", node, why);
    }
    event_base_loopbreak(m->base);
}

/* The hub, once every leaf is linked, says READY to each (a leaf's
 * start-up waits for it); called whenever a link comes up. */
static void hub_check_ready(pg_mesh_t *m)
{
    if (m->nodeid != 0 || m->ready_sent || !mesh_ready(m))
        return;
    m->ready_sent = true;
    for (int n = 1; n < m->nnodes; n++)
        pg_mesh_link_say(m->peers[n], T_READY, NULL, 0);
}

int pg_mesh_wait_ready(pg_mesh_t *m, char *err, size_t errlen)
{
    pg_mesh_gone_fn fn = m->gone_fn;
    void *arg = m->gone_arg;
    int missing;

    m->gone_fn = wait_gone;
    m->gone_arg = m;
    while (!mesh_ready(m) && !m->refused)
        event_base_loop(m->base, EVLOOP_ONCE);
    m->gone_fn = fn;
    m->gone_arg = arg;
    missing = first_missing(m);
    if (m->refused || missing >= 0) {
        snprintf(err, errlen, "the proxies' mesh did not come up: %s",
                 m->refused ? m->refused_why : "a node is gone");
        return -1;
    }
    return 0;
}

uint64_t pg_mesh_start_deadline(const pg_mesh_t *m)
{
    return m->start_deadline;
}

int pg_mesh_on(pg_mesh_t *m, unsigned type, pg_mesh_recv_fn fn, void *arg)
{
    if (type < PG_MESH_TYPE_USER || type >= PG_MESH_TYPE_MAX)
        return -1;
    m->handlers[type] = (handler_t){ fn, arg };
    return 0;
}

void pg_mesh_on_gone(pg_mesh_t *m, pg_mesh_gone_fn fn, void *arg)
{
    m->gone_fn = fn;
    m->gone_arg = arg;
}

/* The link a frame for `dst` leaves by: a direct one, else the hub's. */
static link_t *route(const pg_mesh_t *m, uint32_t dst)
{
    if (dst < (uint32_t)m->nnodes && m->peers[dst] != NULL)
        return m->peers[dst];
    if (m->nodeid != 0 && dst < (uint32_t)m->nnodes && m->gone[dst])
        return NULL;
    return m->nodeid != 0 ? m->peers[0] : NULL;
}

int pg_mesh_send(pg_mesh_t *m, uint32_t dst, unsigned type, const void *body, size_t len)
{
    link_t *l;

    if (type < PG_MESH_TYPE_USER || type >= PG_MESH_TYPE_MAX || len > PG_MESH_BODY_MAX)
        return -1;
    if (dst == (uint32_t)m->nodeid)
        return send_self(m, type, body, len);
    if (dst == PG_MESH_ALL && m->nodeid == 0) {
        int sent = 0;

        for (int n = 1; n < m->nnodes; n++)
            if (m->peers[n] != NULL) {
                pg_mesh_link_write(m->peers[n], type, 0, dst, body, len);
                sent++;
            }
        return sent > 0 || m->nnodes == 1 ? 0 : -1;
    }
    if (dst != PG_MESH_ALL && dst >= (uint32_t)m->nnodes)
        return -1;
    l = route(m, dst);
    if (l == NULL)
        return -1;
    pg_mesh_link_write(l, type, (uint32_t)m->nodeid, dst, body, len);
    return 0;
}


void pg_mesh_quiet(pg_mesh_t *m, uint64_t ns)
{
    unsigned char body[4];
    uint64_t ms = ns / 1000000u + 1;

    pg_be32_put(body, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
    for (int n = 0; n < m->nnodes; n++)
        if (m->peers[n] != NULL)
            pg_mesh_link_say_now(m->peers[n], T_QUIET, body, sizeof(body));
}

/* Bytes still queued on the links. */
static size_t queued(const pg_mesh_t *m)
{
    size_t q = 0;

    for (int n = 0; n < m->nnodes; n++)
        if (m->peers[n] != NULL)
            q += evbuffer_get_length(bufferevent_get_output(m->peers[n]->bev));
    return q;
}

static void on_leave_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    event_base_loopbreak(arg);
}

int pg_mesh_leave(pg_mesh_t *m, int ms)
{
    struct event *deadline = evtimer_new(m->base, on_leave_deadline, m->base);
    struct timeval tv = ns_tv(ms_ns((uint64_t)ms));
    bool timed_out = false;
    int rc;

    m->leaving = true;
    for (int n = 0; n < m->nnodes; n++)
        if (m->peers[n] != NULL)
            pg_mesh_link_say(m->peers[n], T_BYE, NULL, 0);
    if (deadline != NULL)
        evtimer_add(deadline, &tv);
    while (queued(m) > 0 && deadline != NULL && !timed_out) {
        event_base_loop(m->base, EVLOOP_ONCE);
        timed_out = !evtimer_pending(deadline, NULL);
    }
    if (deadline != NULL)
        event_free(deadline);
    rc = queued(m) == 0 ? 0 : -1;
    for (int n = 0; n < m->nnodes; n++)
        if (m->peers[n] != NULL)
            pg_mesh_link_drop(m->peers[n], "this node left");
    return rc;
}

int pg_mesh_reachable(const pg_mesh_t *m, int node)
{
    if (node < 0 || node >= m->nnodes || node == m->nodeid || m->gone[node])
        return 0;
    return route(m, (uint32_t)node) != NULL;
}

void pg_mesh_counters(const pg_mesh_t *m, pg_mesh_counters_t *c)
{
    *c = m->count;
}

struct event_base *pg_mesh_base(const pg_mesh_t *m)
{
    return m->base;
}

int pg_mesh_nodeid(const pg_mesh_t *m)
{
    return m->nodeid;
}

int pg_mesh_nnodes(const pg_mesh_t *m)
{
    return m->nnodes;
}
