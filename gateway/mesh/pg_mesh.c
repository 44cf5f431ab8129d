/*
 * pg_mesh: the proxies' channel -- its API, routing over the shape
 * pg_mesh_topo gives, the start-up and the end agreed over the tree, and
 * liveness.  See pg_mesh.h for the rules, docs/proxy.md for the design,
 * and pg_mesh_int.h for how the channel is split into this file,
 * pg_mesh_link.c (one link: frames, handshake) and pg_mesh_net.c
 * (listening, accepting, dialing).  This file is the top of the three: it
 * calls the others and hands them its callbacks (pg_mesh_t's link_up_fn,
 * forward_fn, channel_fn, closed_fn, node_gone_fn); they call nothing here.
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

#include "gateway/util/pg_be.h"
#include "wire/pg_clock.h"

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
/* routing                                                            */
/* ---------------------------------------------------------------- */

static bool node_gone(void *arg, int node)
{
    return ((const pg_mesh_t *)arg)->gone[node];
}

/* A link that carries the mesh's users' frames now: UP, not closing. */
static link_t *usable(const pg_mesh_t *m, int node)
{
    link_t *l = m->peers[node];

    return l != NULL && !l->closing ? l : NULL;
}

/* How long a direct link may take to come up before its node is taken
 * for lost: as long as the start-up may take (PMIGATE_MESH_CONNECT), not
 * the silence timeout -- the node may be busy (a long merge), and the
 * mesh's own links, watched by its neighbours, say soon enough whether it
 * is alive. */
static uint64_t direct_deadline(const pg_mesh_t *m)
{
    return pg_clock_now() + (m->connect_ns > m->timeout_ns ? m->connect_ns : m->timeout_ns);
}

/* The frame to node `node`'s link; while that link is not up (the
 * start-up, a spare link being dialed or closing) it waits for it.
 * `dial`: a link that is not the shape's is dialed for it.  0, or -1
 * (the node is gone, or out of memory). */
static int hop_write(pg_mesh_t *m, int node, unsigned type, uint32_t src, uint32_t dst,
                     const void *body, size_t len, bool dial)
{
    link_t *l = usable(m, node);

    if (l != NULL) {
        pg_mesh_link_write(l, type, src, dst, body, len);
        l->last_used = pg_clock_now();
        return 0;
    }
    if (m->gone[node] ||
        pg_mesh_queue_push_to(&m->waiting[node], type, (int)src, dst, body, len) != 0)
        return -1;
    if (dial && m->peers[node] == NULL && !pg_topo_is_neighbour(m->nnodes, m->nodeid, node))
        return pg_mesh_dial(m, node, direct_deadline(m));
    return 0;
}

/* A frame for every node from `src`, passed down its tree from here. */
static void spread(pg_mesh_t *m, unsigned type, uint32_t src, const void *body, size_t len)
{
    int kids[PG_TOPO_LEVELS_MAX];
    int n = pg_topo_children(m->nnodes, (int)src, m->nodeid, kids);

    /* a child gone takes its subtree's copy with it: what must reach
     * every node whatever was lost goes to the neighbours instead
     * (pg_mesh_send_neighbours) */
    for (int i = 0; i < n; i++)
        (void)hop_write(m, kids[i], type, src, PG_MESH_ALL, body, len, false);
}

/* A frame for `dst` one hop on, around gone nodes -- `dst` too, when
 * this node lost its link: another node may still have one (a link
 * closed for a forged frame, not a node dead).  Each detour is a smaller
 * step, so a frame for a node no one reaches ends somewhere, dropped.
 * 0 or -1. */
static int route(pg_mesh_t *m, unsigned type, uint32_t src, uint32_t dst, const void *body,
                 size_t len)
{
    int hop = pg_topo_next_hop(m->nnodes, m->nodeid, (int)dst, node_gone, m);

    return hop < 0 ? -1 : hop_write(m, hop, type, src, dst, body, len, false);
}

/* forward_fn: a frame from another node, for another or for all. */
static void forward(pg_mesh_t *m, unsigned type, uint32_t src, uint32_t dst,
                    const unsigned char *body, size_t len)
{
    if (dst == PG_MESH_ALL)
        spread(m, type, src, body, len);
    else
        (void)route(m, type, src, dst, body, len);
}

/* ---------------------------------------------------------------- */
/* frames waiting for a link                                          */
/* ---------------------------------------------------------------- */

/* link_up_fn's first part: what waited for `node`'s link goes now. */
static void flush_waiting(pg_mesh_t *m, int node)
{
    link_t *l = usable(m, node);
    pg_mesh_frame_t *f;

    while (l != NULL && (f = pg_mesh_queue_pop(&m->waiting[node])) != NULL) {
        pg_mesh_link_write(l, f->type, (uint32_t)f->src, f->dst, f->body, f->len);
        l->last_used = pg_clock_now();
        free(f);
    }
}

/* node_gone_fn: its dial is over; what waited for its link goes another
 * way when it was only passing through (never to it: gone is gone). */
static void on_node_gone(pg_mesh_t *m, int node)
{
    pg_mesh_queue_t q = m->waiting[node];
    pg_mesh_frame_t *f;

    pg_mesh_dial_end(m, node);
    pg_mesh_queue_init(&m->waiting[node]);
    while ((f = pg_mesh_queue_pop(&q)) != NULL) {
        if (f->dst != (uint32_t)node && f->dst != PG_MESH_ALL && !m->leaving)
            (void)route(m, f->type, (uint32_t)f->src, f->dst, f->body, f->len);
        free(f);
    }
}

/* ---------------------------------------------------------------- */
/* spare links                                                        */
/* ---------------------------------------------------------------- */

/* Why spare links close: direct data (a subset's fence, a direct-modex
 * get) dials the node it is for, and over a long job that could be every
 * node; past EXTRA_MAX the least recently used idle one closes.  Closing
 * takes two frames so nothing is lost: CLOSE says "send nothing more
 * here", CLOSE_ACK answers after everything the peer sent, and the
 * closer drops the link then; frames for the node meanwhile wait, and a
 * new dial takes them once the link is gone (closed_fn). */
static void close_spare_links(pg_mesh_t *m)
{
    while (m->extra_links > EXTRA_MAX) {
        link_t *lru = NULL;
        int closing = 0;

        for (int n = 0; n < m->nnodes; n++) {
            link_t *l = m->peers[n];

            if (l == NULL || pg_topo_is_neighbour(m->nnodes, m->nodeid, n))
                continue;
            if (l->closing) {
                closing++;
                continue;
            }
            if (m->waiting[n].head == NULL &&
                evbuffer_get_length(bufferevent_get_output(l->bev)) == 0 &&
                (lru == NULL || l->last_used < lru->last_used))
                lru = l;
        }
        if (lru == NULL || m->extra_links - closing <= EXTRA_MAX)
            return;
        lru->closing = true;
        pg_mesh_link_say(lru, T_CLOSE, NULL, 0);
    }
}

/* closed_fn: a spare link is gone; frames that wait for its node dial
 * it again. */
static void on_closed(pg_mesh_t *m, int node)
{
    if (m->waiting[node].head != NULL && !m->leaving)
        (void)pg_mesh_dial(m, node, direct_deadline(m));
}

/* ---------------------------------------------------------------- */
/* the start-up and the end, agreed over the tree                    */
/* ---------------------------------------------------------------- */

/* Why over the tree rooted at node 0: a node knows only its own links,
 * and a frame routed through a node whose links are not up yet would
 * wait there; so each node tells its parent once its own links and its
 * children's subtrees are up (UP), and node 0 says READY down the tree:
 * 2 ceil(log2 K) steps, one frame a link.  The end goes the same way:
 * a node leaves only when every node is done (DONE up, ALLDONE down),
 * because a node that leaves early takes the paths through it along. */

static bool own_links_up(const pg_mesh_t *m)
{
    for (int i = 0; i < m->nnbrs; i++)
        if (m->peers[m->nbrs[i]] == NULL)
            return false;
    return true;
}

static void say_children(pg_mesh_t *m, unsigned type)
{
    for (int i = 0; i < m->nchildren; i++)
        if (m->peers[m->children[i]] != NULL)
            pg_mesh_link_say(m->peers[m->children[i]], type, NULL, 0);
}

/* Node 0's word that every node has it: known here, passed down. */
static void vote_all(pg_mesh_t *m, tree_vote_t *v, unsigned down)
{
    v->all = true;
    say_children(m, down);
}

/* This node's word on a vote: to its parent once it has the thing itself
 * (`here`) and every child's subtree has it; node 0 then says to every
 * node, down the tree, that all have it. */
static void vote(pg_mesh_t *m, tree_vote_t *v, bool here, unsigned up, unsigned down)
{
    if (!here || v->sent || v->children_in < m->nchildren)
        return;
    v->sent = true;
    if (m->parent < 0)
        vote_all(m, v, down);
    else if (m->peers[m->parent] != NULL)
        pg_mesh_link_say(m->peers[m->parent], up, NULL, 0);
}

static void maybe_up(pg_mesh_t *m)
{
    vote(m, &m->up, m->started && own_links_up(m), T_UP, T_READY);
}

static void maybe_done(pg_mesh_t *m)
{
    vote(m, &m->done, m->done_here, T_DONE, T_ALLDONE);
}

static bool is_child(const pg_mesh_t *m, int node)
{
    for (int i = 0; i < m->nchildren; i++)
        if (m->children[i] == node)
            return true;
    return false;
}

/* channel_fn: the tree's frames, and a spare link's closing. */
static int on_channel(pg_mesh_t *m, link_t *l, unsigned type)
{
    bool from_parent = l->node == m->parent, from_child = is_child(m, l->node);

    switch (type) {
    case T_UP:
        if (!from_child)
            return -1;
        m->up.children_in++;
        maybe_up(m);
        return 0;
    case T_DONE:
        if (!from_child)
            return -1;
        m->done.children_in++;
        maybe_done(m);
        return 0;
    case T_READY:
    case T_ALLDONE:
        if (!from_parent)
            return -1;
        vote_all(m, type == T_READY ? &m->up : &m->done, type);
        return 0;
    case T_CLOSE: /* the peer closes: everything this node sent is before the ACK */
        if (pg_topo_is_neighbour(m->nnodes, m->nodeid, l->node))
            return -1;
        l->closing = true;
        pg_mesh_link_say(l, T_CLOSE_ACK, NULL, 0);
        return 0;
    case T_CLOSE_ACK:
        return l->closing ? TAKE_CLOSED : -1;
    default:
        return -1;
    }
}

/* link_up_fn */
static void on_link_up(pg_mesh_t *m, int node)
{
    pg_mesh_dial_end(m, node);
    flush_waiting(m, node);
    close_spare_links(m);
    maybe_up(m);
}

/* ---------------------------------------------------------------- */
/* liveness                                                           */
/* ---------------------------------------------------------------- */

static void tick_links(pg_mesh_t *m, uint64_t now)
{
    for (int n = 0; n < m->nnodes; n++) {
        link_t *l = m->peers[n];
        char why[96];

        if (l == NULL)
            continue;
        if (now - l->last_tx >= m->heartbeat_ns && !m->leaving)
            pg_mesh_link_say(l, T_HEARTBEAT, NULL, 0);
        if (now - l->last_rx < m->timeout_ns || now < l->quiet_until ||
            pg_mesh_link_has_input(l)) /* unread: the silence was this loop's */
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
        if (l->state == L_DIALING || l->state == L_HELLO_SENT) /* this node's dial */
            snprintf(m->dial_err, sizeof(m->dial_err), "no answer within %d ms",
                     l->state == L_DIALING ? DIAL_ATTEMPT_MS : PG_MESH_HANDSHAKE_MS);
        pg_mesh_link_drop(l, "did not finish the handshake");
        next = m->pending; /* the list may have changed (a new dial) */
    }
}

/* Neighbours that never linked by the start deadline are gone; a node
 * whose own links are up but that did not hear READY says so (a node
 * elsewhere did not come: its neighbours name it). */
static void tick_start(pg_mesh_t *m, uint64_t now)
{
    char why[240];
    double bound = (double)(m->start_deadline - m->created_at) / 1e9;

    if (!m->started || m->up.all || now < m->start_deadline)
        return;
    for (int i = 0; i < m->nnbrs; i++) {
        int n = m->nbrs[i];

        if (m->joined[n] || m->gone[n])
            continue;
        if (pg_mesh_dialing(m, n) && m->dial_err[0] != '\0')
            snprintf(why, sizeof(why), "it could not be reached within %.0f s (%s)", bound,
                     m->dial_err);
        else
            snprintf(why, sizeof(why), "it did not join within %.0f s", bound);
        pg_mesh_report_gone(m, n, 0, why);
    }
    if (!m->refused) {
        m->refused = true;
        snprintf(m->refused_why, sizeof(m->refused_why),
                 "node 0 did not say within %.0f s that every node had joined: another node "
                 "did not come", bound);
        event_base_loopbreak(m->base);
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
    pg_mesh_dials_tick(m, now);
    close_spare_links(m); /* one that was busy when it came up may be idle now */
    pg_mesh_refusals_tell(m, now, false);
}

/* ---------------------------------------------------------------- */
/* frames from this node to itself                                    */
/* ---------------------------------------------------------------- */

/* Why a loopback: node 0 coordinates and has ranks of its own, and a frame
 * it sends itself ("to node 0") must take the same path as another node's -- the
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
    m->tick = event_new(base, -1, EV_PERSIST, on_tick, m);
    m->loop_ev = evtimer_new(base, on_loopback, m);
    pg_mesh_queue_init(&m->loopback);
    m->link_up_fn = on_link_up;
    m->dial_lost_fn = pg_mesh_dial_lost;
    m->closed_fn = on_closed;
    m->node_gone_fn = on_node_gone;
    m->channel_fn = on_channel;
    m->dialing_fn = pg_mesh_dialing;
    m->stranger_dropped_fn = pg_mesh_refusal_note;
    m->forward_fn = forward;
    m->parent = -1;
    if (m->nnodes < 1 || m->nodeid < 0 || m->nodeid >= m->nnodes) {
        snprintf(err, errlen, "node %d of %d is not a node", m->nodeid, m->nnodes);
        goto fail;
    }
    m->peers = calloc((size_t)m->nnodes, sizeof(*m->peers));
    m->gone = calloc((size_t)m->nnodes, sizeof(*m->gone));
    m->joined = calloc((size_t)m->nnodes, sizeof(*m->joined));
    m->cards = calloc((size_t)m->nnodes, sizeof(*m->cards));
    m->waiting = calloc((size_t)m->nnodes, sizeof(*m->waiting));
    if (m->peers == NULL || m->gone == NULL || m->joined == NULL || m->cards == NULL ||
        m->waiting == NULL || m->tick == NULL || m->loop_ev == NULL ||
        pg_mesh_random(m->token, sizeof(m->token)) != 0) {
        snprintf(err, errlen, "out of resources");
        goto fail;
    }
    for (int n = 0; n < m->nnodes; n++)
        pg_mesh_queue_init(&m->waiting[n]);
    m->nnbrs = pg_topo_neighbours(m->nnodes, m->nodeid, m->nbrs);
    m->parent = pg_topo_parent(m->nnodes, 0, m->nodeid);
    m->nchildren = pg_topo_children(m->nnodes, 0, m->nodeid, m->children);
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
    pg_mesh_dials_free(m); /* first: a dial points at its attempt, a pending link */
    while (m->pending != NULL)
        pg_mesh_link_drop(m->pending, "the mesh is closed");
    for (int n = 0; m->peers != NULL && n < m->nnodes; n++)
        if (m->peers[n] != NULL)
            pg_mesh_link_drop(m->peers[n], "the mesh is closed");
    if (m->listener != NULL)
        evconnlistener_free(m->listener);
    if (m->tick != NULL)
        event_free(m->tick);
    pg_mesh_queue_clear(&m->loopback);
    if (m->loop_ev != NULL)
        event_free(m->loop_ev);
    for (int n = 0; n < m->nnodes && m->waiting != NULL; n++)
        pg_mesh_queue_clear(&m->waiting[n]);
    for (int n = 0; n < m->nnodes && m->cards != NULL; n++)
        free(m->cards[n]);
    free(m->waiting);
    free(m->cards);
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
    for (int n = 0; n < m->nnodes; n++) {
        if (pg_mesh_parse_card(cards[n], tokens + (size_t)n * TOKEN_LEN, NULL, NULL, NULL) != 0) {
            snprintf(err, errlen, "node %d's mesh card does not parse: '%s'", n,
                     cards[n] != NULL ? cards[n] : "(none)");
            goto out;
        }
        /* kept: a node dials another (a neighbour, or for direct data)
         * from its card */
        if (m->cards[n] == NULL && (m->cards[n] = strdup(cards[n])) == NULL) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
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
    /* the lower node of a pair dials: each link is dialed once */
    for (int i = 0; i < m->nnbrs; i++)
        if (m->nbrs[i] > m->nodeid && pg_mesh_dial(m, m->nbrs[i], 0) != 0) {
            snprintf(err, errlen, "cannot dial node %d", m->nbrs[i]);
            return -1;
        }
    maybe_up(m); /* a job of one node is up at once */
    return 0;
}

/* Neighbours this node waits for at start that are gone: the first one. */
static int first_missing(const pg_mesh_t *m)
{
    for (int i = 0; i < m->nnbrs; i++)
        if (m->gone[m->nbrs[i]])
            return m->nbrs[i];
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

int pg_mesh_wait_ready(pg_mesh_t *m, char *err, size_t errlen)
{
    pg_mesh_gone_fn fn = m->gone_fn;
    void *arg = m->gone_arg;
    int missing;

    m->gone_fn = wait_gone;
    m->gone_arg = m;
    while (!m->up.all && !m->refused)
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

static bool user_frame(unsigned type, size_t len)
{
    return type >= PG_MESH_TYPE_USER && type < PG_MESH_TYPE_MAX && len <= PG_MESH_BODY_MAX;
}

int pg_mesh_send(pg_mesh_t *m, uint32_t dst, unsigned type, const void *body, size_t len)
{
    if (!user_frame(type, len))
        return -1;
    if (dst == (uint32_t)m->nodeid)
        return send_self(m, type, body, len);
    if (dst == PG_MESH_ALL) {
        spread(m, type, (uint32_t)m->nodeid, body, len);
        return 0;
    }
    if (dst >= (uint32_t)m->nnodes)
        return -1;
    return route(m, type, (uint32_t)m->nodeid, dst, body, len);
}

int pg_mesh_send_direct(pg_mesh_t *m, uint32_t dst, unsigned type, const void *body, size_t len)
{
    if (!user_frame(type, len) || dst >= (uint32_t)m->nnodes)
        return -1;
    if (dst == (uint32_t)m->nodeid)
        return send_self(m, type, body, len);
    return hop_write(m, (int)dst, type, (uint32_t)m->nodeid, dst, body, len, true);
}

int pg_mesh_send_neighbours(pg_mesh_t *m, unsigned type, const void *body, size_t len)
{
    int sent = 0;

    if (!user_frame(type, len))
        return -1;
    for (int n = 0; n < m->nnodes; n++) {
        link_t *l = usable(m, n);

        if (l != NULL) {
            pg_mesh_link_write(l, type, (uint32_t)m->nodeid, (uint32_t)n, body, len);
            sent++;
        }
    }
    return sent;
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

void pg_mesh_done(pg_mesh_t *m)
{
    m->done_here = true;
    maybe_done(m);
}

bool pg_mesh_all_done(const pg_mesh_t *m)
{
    return m->done.all;
}

int pg_mesh_reachable(const pg_mesh_t *m, int node)
{
    if (node < 0 || node >= m->nnodes || node == m->nodeid || m->gone[node])
        return 0;
    if (m->peers[node] != NULL)
        return 1;
    return m->up.all && pg_topo_next_hop(m->nnodes, m->nodeid, node, node_gone, (void *)m) >= 0;
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
