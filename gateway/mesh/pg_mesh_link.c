/*
 * pg_mesh_link: one link of the proxies' mesh -- its frames, its
 * handshake, its reading -- and what happens when it drops.  The rest of
 * the mesh is in pg_mesh.c (API, routing, liveness) and pg_mesh_net.c
 * (listening, accepting, dialing); pg_mesh_int.h says why it is split.
 *
 * The lowest of the mesh's three files: it calls neither of the others, and
 * tells them what they must know through the callbacks in pg_mesh_t.
 *
 * A link goes through these states: one node dials another (DIALING), sends
 * HELLO (HELLO_SENT) and answers the CHALLENGE with a PROOF; the side that
 * accepted waits for the HELLO (ACCEPTED), sends the CHALLENGE
 * (CHALLENGED) and checks the PROOF.  Then the link is UP and carries
 * frames both ways; until then nothing but the handshake is read, and a
 * link that does not finish it within PG_MESH_HANDSHAKE_MS is closed.
 * Two nodes that dial each other at once (both want a direct link) keep
 * one link: the lower node's dial (the higher one answers it, the lower
 * one refuses the other).
 *
 * On an UP link every frame ends with a tag (docs/proxy.md, "Frame
 * authentication"): a GMAC (AES-GCM's tag) under a key of the link's and the direction's
 * over the frame's sequence number, header and body.  Whoever writes into
 * the link's socket without the key -- a rank that inherited it, say --
 * cannot make a frame the peer believes, nor replay or reorder one.
 */
#include "gateway/mesh/pg_mesh_int.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <unistd.h>

#include "gateway/util/pg_be.h"
#include "wire/pg_clock.h"

static const char hello_magic[4] = { 'P', 'G', 'M', '1' };

int pg_mesh_random(unsigned char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = getrandom(buf, len, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* ---------------------------------------------------------------- */
/* frames                                                             */
/* ---------------------------------------------------------------- */

static void frame_header(unsigned char hdr[HDR_LEN], size_t len, unsigned type, uint32_t src,
                         uint32_t dst)
{
    pg_be32_put(hdr, (uint32_t)len);
    hdr[4] = (unsigned char)(type >> 8);
    hdr[5] = (unsigned char)type;
    hdr[6] = hdr[7] = 0; /* flags: none defined */
    pg_be32_put(hdr + 8, src);
    pg_be32_put(hdr + 12, dst);
}

/* The tag of the link's next frame out; an UP link's frames have one, the
 * handshake's do not (there are no keys yet).  A tag libcrypto could not
 * make is zeros: the peer refuses it and closes the link, which is how a
 * link that cannot carry frames should end. */
static size_t frame_tag(link_t *l, const unsigned char hdr[HDR_LEN], const void *body,
                        size_t len, unsigned char tag[TAG_LEN])
{
    if (l->state != L_UP)
        return 0;
    (void)pg_mesh_mac_next(l->tx, hdr, HDR_LEN, body, len, tag);
    return TAG_LEN;
}

void pg_mesh_link_write(link_t *l, unsigned type, uint32_t src, uint32_t dst, const void *body,
                       size_t len)
{
    struct evbuffer *out = bufferevent_get_output(l->bev);
    unsigned char hdr[HDR_LEN], tag[TAG_LEN];
    size_t taglen;

    frame_header(hdr, len, type, src, dst);
    taglen = frame_tag(l, hdr, body, len, tag);
    evbuffer_add(out, hdr, sizeof(hdr));
    if (len > 0)
        evbuffer_add(out, body, len);
    if (taglen > 0)
        evbuffer_add(out, tag, taglen);
    l->last_tx = pg_clock_now();
    l->m->count.sent_bytes += HDR_LEN + len + taglen;
    l->m->count.sent_frames++;
    if (src != (uint32_t)l->m->nodeid)
        l->m->count.relayed_bytes += HDR_LEN + len + taglen;
}

/* A frame of the channel's own, from this node to the link's peer. */
void pg_mesh_link_say(link_t *l, unsigned type, const void *body, size_t len)
{
    pg_mesh_link_write(l, type, (uint32_t)l->m->nodeid, l->node >= 0 ? (uint32_t)l->node : PG_MESH_ALL,
               body, len);
}

/* ---------------------------------------------------------------- */
/* links                                                              */
/* ---------------------------------------------------------------- */

static void link_on_read(struct bufferevent *bev, void *arg);
static void link_on_event(struct bufferevent *bev, short what, void *arg);

link_t *pg_mesh_link_new(pg_mesh_t *m, evutil_socket_t fd, link_state_t state)
{
    link_t *l = calloc(1, sizeof(*l));

    if (l == NULL)
        return NULL;
    l->m = m;
    l->node = -1;
    l->state = state;
    l->bev = bufferevent_socket_new(m->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (l->bev == NULL || pg_mesh_random(l->my_nonce, sizeof(l->my_nonce)) != 0) {
        if (l->bev != NULL)
            bufferevent_free(l->bev);
        else if (fd >= 0)
            close(fd);
        free(l);
        return NULL;
    }
    l->last_rx = l->last_tx = pg_clock_now();
    l->deadline = l->last_rx + ms_ns(state == L_DIALING ? DIAL_ATTEMPT_MS : PG_MESH_HANDSHAKE_MS);
    bufferevent_setcb(l->bev, link_on_read, NULL, link_on_event, l);
    bufferevent_enable(l->bev, EV_READ | EV_WRITE);
    return l;
}

bool pg_mesh_link_has_input(const link_t *l)
{
    int n = 0;

    if (evbuffer_get_length(bufferevent_get_input(l->bev)) > 0)
        return true;
    return ioctl(bufferevent_getfd(l->bev), FIONREAD, &n) == 0 && n > 0;
}

void pg_mesh_pending_add(pg_mesh_t *m, link_t *l)
{
    l->next = m->pending;
    m->pending = l;
    m->npending++;
}

static void pending_remove(pg_mesh_t *m, link_t *l)
{
    for (link_t **p = &m->pending; *p != NULL; p = &(*p)->next)
        if (*p == l) {
            *p = l->next;
            l->next = NULL;
            m->npending--;
            return;
        }
}

void pg_mesh_report_gone(pg_mesh_t *m, int node, int orderly, const char *why)
{
    if (node < 0 || node >= m->nnodes || node == m->nodeid || m->gone[node])
        return;
    m->gone[node] = true;
    if (m->node_gone_fn != NULL)
        m->node_gone_fn(m, node);
    if (m->gone_fn != NULL && !m->leaving) /* a node that leaves asks nothing more */
        m->gone_fn(m->gone_arg, node, orderly, why);
}

/* Frees the link (closing its socket) and, when it was a node's, reports
 * the node gone -- unless it was a spare link closing, which loses
 * nothing.  A dial's attempt that dropped tells the dial. */
void pg_mesh_link_drop(link_t *l, const char *why)
{
    pg_mesh_t *m = l->m;
    int node = l->state == L_UP ? l->node : -1;
    int dialed = l->dial != NULL && l->state != L_UP ? l->node : -1;
    int orderly = l->bye;
    bool closing = l->closing;

    if (node >= 0 && m->peers[node] == l) {
        m->peers[node] = NULL;
        m->count.links--;
        if (!pg_topo_is_neighbour(m->nnodes, m->nodeid, node))
            m->extra_links--;
    } else
        pending_remove(m, l);
    if (node < 0 && (l->state == L_ACCEPTED || l->state == L_CHALLENGED) && !m->leaving &&
        !l->dup && m->stranger_dropped_fn != NULL)
        m->stranger_dropped_fn(m, l, why);
    bufferevent_free(l->bev);
    pg_mesh_mac_free(l->tx);
    pg_mesh_mac_free(l->rx);
    free(l);
    if (node >= 0 && closing && m->closed_fn != NULL)
        m->closed_fn(m, node);
    else if (node >= 0)
        pg_mesh_report_gone(m, node, orderly, why);
    else if (dialed >= 0 && m->dial_lost_fn != NULL) /* the dial forgets it (leaving too) */
        m->dial_lost_fn(m, dialed);
}

/* HMAC under the job secret over what both ends of a handshake said, for
 * one use: "A" the accepting side's proof, "C" the connecting one's, "key
 * A>C" and "key C>A" the keys of the link's two directions.  The uses'
 * labels differ in their first byte, so no key is a proof the wire carried.
 * 0, or -1 when libcrypto fails. */
static int handshake_mac(const pg_mesh_t *m, const char *use, const unsigned char *nonce_c,
                         const unsigned char *nonce_a, uint32_t node_c, uint32_t node_a,
                         unsigned char out[PG_MESH_HASH_LEN])
{
    unsigned char ids[8];
    const void *part[4] = { use, nonce_c, nonce_a, ids };
    size_t len[4] = { strlen(use), NONCE_LEN, NONCE_LEN, sizeof(ids) };

    pg_be32_put(ids, node_c);
    pg_be32_put(ids + 4, node_a);
    return pg_mesh_hmac(m->secret, sizeof(m->secret), part, len, 4, out);
}

/* The keys of an UP link's two directions, from the handshake's nonces:
 * fresh for every link, so a frame of one link, or of an earlier link of
 * the same nodes, is no frame of this one. */
static int link_keys(link_t *l, bool connected, int node)
{
    const pg_mesh_t *m = l->m;
    const unsigned char *nonce_c = connected ? l->my_nonce : l->peer_nonce;
    const unsigned char *nonce_a = connected ? l->peer_nonce : l->my_nonce;
    uint32_t node_c = (uint32_t)(connected ? m->nodeid : node);
    uint32_t node_a = (uint32_t)(connected ? node : m->nodeid);
    unsigned char c_to_a[PG_MESH_HASH_LEN], a_to_c[PG_MESH_HASH_LEN];

    if (handshake_mac(m, "key C>A", nonce_c, nonce_a, node_c, node_a, c_to_a) != 0 ||
        handshake_mac(m, "key A>C", nonce_c, nonce_a, node_c, node_a, a_to_c) != 0)
        return -1;
    l->tx = pg_mesh_mac_new(connected ? c_to_a : a_to_c);
    l->rx = pg_mesh_mac_new(connected ? a_to_c : c_to_a);
    return l->tx != NULL && l->rx != NULL ? 0 : -1;
}

/* Is `node` a node this one may link with now? */
static bool node_linkable(const pg_mesh_t *m, uint32_t node)
{
    return node < (uint32_t)m->nnodes && (int)node != m->nodeid && m->peers[node] == NULL &&
           !m->gone[node];
}

/* The handshake is over: the link carries frames, tagged.  -1 when its
 * keys could not be made (the link is then dropped). */
static int link_up(link_t *l, bool connected, int node)
{
    pg_mesh_t *m = l->m;

    if (link_keys(l, connected, node) != 0)
        return -1;
    pending_remove(m, l);
    l->dial = NULL;
    l->node = node;
    l->state = L_UP;
    l->last_used = pg_clock_now();
    m->peers[node] = l;
    m->joined[node] = true;
    if (++m->count.links > m->count.links_max)
        m->count.links_max = m->count.links;
    if (!pg_topo_is_neighbour(m->nnodes, m->nodeid, node))
        m->extra_links++;
    if (m->link_up_fn != NULL)
        m->link_up_fn(m, node);
    return 0;
}

/* Acceptor: HELLO (magic, node, nonce) -> CHALLENGE. */
static int on_hello(link_t *l, const unsigned char *b, size_t len)
{
    pg_mesh_t *m = l->m;
    unsigned char body[4 + NONCE_LEN + PG_MESH_HASH_LEN];
    uint32_t node;

    if (len != 4 + 4 + NONCE_LEN || memcmp(b, hello_magic, 4) != 0)
        return -1;
    node = pg_be32_get(b + 4);
    if (!m->started || !node_linkable(m, node))
        return -1;
    /* both dialed: the lower node's dial is the link (pg_mesh_link.c's head) */
    if (m->nodeid < (int)node && m->dialing_fn != NULL && m->dialing_fn(m, (int)node)) {
        l->dup = true;
        return -1;
    }
    l->node = (int)node;
    memcpy(l->peer_nonce, b + 8, NONCE_LEN);
    pg_be32_put(body, (uint32_t)m->nodeid);
    memcpy(body + 4, l->my_nonce, NONCE_LEN);
    if (handshake_mac(m, "A", l->peer_nonce, l->my_nonce, node, (uint32_t)m->nodeid,
                      body + 4 + NONCE_LEN) != 0)
        return -1;
    pg_mesh_link_say(l, T_CHALLENGE, body, sizeof(body));
    l->state = L_CHALLENGED;
    return 0;
}

/* Dialer: CHALLENGE (node, nonce, mac) -> check -> PROOF, link up. */
static int on_challenge(link_t *l, const unsigned char *b, size_t len)
{
    pg_mesh_t *m = l->m;
    unsigned char want[PG_MESH_HASH_LEN], proof[PG_MESH_HASH_LEN];
    uint32_t node;

    if (len != 4 + NONCE_LEN + PG_MESH_HASH_LEN)
        return -1;
    node = pg_be32_get(b);
    if ((int)node != l->node)
        return -1; /* not the node this address was for */
    memcpy(l->peer_nonce, b + 4, NONCE_LEN);
    if (handshake_mac(m, "A", l->my_nonce, l->peer_nonce, (uint32_t)m->nodeid, node, want) != 0 ||
        !pg_mesh_equal_ct(want, b + 4 + NONCE_LEN, PG_MESH_HASH_LEN))
        return -1; /* does not know the job's secret */
    if (m->peers[node] != NULL || m->gone[node])
        return -1;
    if (handshake_mac(m, "C", l->my_nonce, l->peer_nonce, (uint32_t)m->nodeid, node, proof) != 0)
        return -1;
    pg_mesh_link_say(l, T_PROOF, proof, sizeof(proof));
    return link_up(l, true, (int)node);
}

/* Acceptor: PROOF -> check -> link up. */
static int on_proof(link_t *l, const unsigned char *b, size_t len)
{
    pg_mesh_t *m = l->m;
    unsigned char want[PG_MESH_HASH_LEN];

    if (len != PG_MESH_HASH_LEN)
        return -1;
    if (handshake_mac(m, "C", l->peer_nonce, l->my_nonce, (uint32_t)l->node, (uint32_t)m->nodeid,
                      want) != 0 ||
        !pg_mesh_equal_ct(want, b, PG_MESH_HASH_LEN))
        return -1;
    if (!node_linkable(m, (uint32_t)l->node)) {
        l->dup = m->peers[l->node] != NULL; /* this node's own dial won meanwhile */
        return -1;
    }
    return link_up(l, false, l->node);
}
/* What taking a frame can end in, other than 0 (it was taken) and -1 (it
 * broke the protocol: the link is dropped). */
enum { TAKE_BYE = 1, TAKE_REFUSED = 2 }; /* TAKE_CLOSED: pg_mesh_int.h */

/* A frame on an UP link: 0, TAKE_BYE, TAKE_REFUSED, TAKE_CLOSED or -1. */
static int on_frame(link_t *l, unsigned type, uint32_t src, uint32_t dst,
                    const unsigned char *body, size_t len)
{
    pg_mesh_t *m = l->m;

    if (type < PG_MESH_TYPE_USER) {
        if (type == T_BYE) {
            l->bye = true;
            return TAKE_BYE;
        }
        if (type == T_REFUSED)
            return TAKE_REFUSED;
        if (type == T_QUIET && len == 4)
            l->quiet_until = pg_clock_now() + ms_ns(pg_be32_get(body));
        if (type >= T_READY && type != T_REFUSED && type <= T_CLOSE_ACK && len == 0)
            return m->channel_fn(m, l, type);
        return type == T_HEARTBEAT || type == T_QUIET ? 0 : -1;
    }
    if (type >= PG_MESH_TYPE_MAX || src >= (uint32_t)m->nnodes || (int)src == m->nodeid ||
        (dst >= (uint32_t)m->nnodes && dst != PG_MESH_ALL))
        return -1;
    /* a frame for others goes on first: a handler may take its time */
    if (dst != (uint32_t)m->nodeid)
        m->forward_fn(m, type, src, dst, body, len);
    if ((dst == (uint32_t)m->nodeid || dst == PG_MESH_ALL) && m->handlers[type].fn != NULL)
        m->handlers[type].fn(m->handlers[type].arg, (int)src, body, len);
    return 0;
}

/* One whole frame taken off the input: the handshake, or a frame.  0,
 * TAKE_BYE, TAKE_REFUSED or -1 (the link is to be dropped). */
static int link_take(link_t *l, unsigned type, uint32_t src, uint32_t dst,
                     const unsigned char *body, size_t len)
{
    switch (l->state) {
    case L_ACCEPTED:
        return type == T_HELLO ? on_hello(l, body, len) : -1;
    case L_HELLO_SENT:
        return type == T_CHALLENGE ? on_challenge(l, body, len) : -1;
    case L_CHALLENGED:
        return type == T_PROOF ? on_proof(l, body, len) : -1;
    case L_UP:
        return on_frame(l, type, src, dst, body, len);
    default:
        return -1;
    }
}

/* Why a frame is refused before it is read: the words the node's loss is
 * reported with (what the job's end says), and the log's; and what the
 * peer that is told so reports. */
static const char frame_forged[] =
    "a frame failed authentication (forged, replayed or out of order)";
static const char frame_forged_here[] =
    "it closed the link: a frame from this node failed authentication (forged, replayed or "
    "out of order; not written by this proxy)";

/* Does the tag after an UP link's frame hold?  A frame that fails it was
 * not written by the peer's proxy, or not in this place of the stream. */
static bool frame_authentic(link_t *l, const unsigned char *frame, size_t len)
{
    unsigned char want[TAG_LEN];

    if (pg_mesh_mac_next(l->rx, frame, HDR_LEN, frame + HDR_LEN, len, want) != 0)
        return false;
    return pg_mesh_equal_ct(want, frame + HDR_LEN + len, TAG_LEN);
}

/* The link is dropped, not only the frame: the bytes were written into the
 * stream by someone else, so where the peer's next frame starts, and its
 * sequence number, are lost too.  The other direction is intact: the peer
 * is told why (REFUSED, written at once; when frames are queued before it
 * it is lost, and the peer only sees the link close), so both ends of the
 * job say what happened.  Logged here, once per link (it closes), so the
 * log names the link even when no one is told of a lost node. */
static void drop_forged(link_t *l)
{
    fprintf(stderr, "pmigate: mesh: node %d: the link to node %d closed: %s\n", l->m->nodeid,
            l->node, frame_forged);
    pg_mesh_link_say_now(l, T_REFUSED, NULL, 0);
    pg_mesh_link_drop(l, frame_forged);
}

/* The length of the frame at the head of the input once it is all there
 * (header, body and, on an UP link, tag): 0 while it is not, -1 when its
 * header claims more than a frame may carry. */
static ssize_t frame_ready(const link_t *l, struct evbuffer *in, size_t *len)
{
    unsigned char hdr[HDR_LEN];
    size_t taglen = l->state == L_UP ? TAG_LEN : 0;

    if (evbuffer_copyout(in, hdr, sizeof(hdr)) != (ev_ssize_t)sizeof(hdr))
        return 0;
    *len = pg_be32_get(hdr);
    if (*len > PG_MESH_BODY_MAX || (l->state != L_UP && *len > 256))
        return -1;
    if (evbuffer_get_length(in) < HDR_LEN + *len + taglen)
        return 0;
    return (ssize_t)(HDR_LEN + *len + taglen);
}

static void link_on_read(struct bufferevent *bev, void *arg)
{
    link_t *l = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    ssize_t whole;
    size_t len;

    l->last_rx = pg_clock_now();
    while ((whole = frame_ready(l, in, &len)) != 0) {
        unsigned char *frame = whole > 0 ? evbuffer_pullup(in, whole) : NULL;
        int rc;

        if (whole < 0) {
            pg_mesh_link_drop(l, "sent a frame too big");
            return;
        }
        if (frame != NULL && l->state == L_UP && !frame_authentic(l, frame, len)) {
            drop_forged(l);
            return;
        }
        rc = frame == NULL ? -1
                           : link_take(l, (unsigned)frame[4] << 8 | frame[5], pg_be32_get(frame + 8),
                                       pg_be32_get(frame + 12), frame + HDR_LEN, len);
        if (rc != 0) {
            pg_mesh_link_drop(l, rc == TAKE_BYE       ? "it said goodbye"
                                 : rc == TAKE_CLOSED  ? "the spare link closed"
                                 : rc == TAKE_REFUSED ? frame_forged_here
                                 : l->state == L_UP   ? "it broke the mesh protocol"
                                                      : "it failed the handshake");
            return;
        }
        evbuffer_drain(in, (size_t)whole);
    }
}

static void link_on_event(struct bufferevent *bev, short what, void *arg)
{
    link_t *l = arg;
    pg_mesh_t *m = l->m;
    char why[96];

    (void)bev;
    if ((what & BEV_EVENT_CONNECTED) && l->state == L_DIALING) {
        unsigned char body[4 + 4 + NONCE_LEN];
        int one = 1;

        (void)setsockopt(bufferevent_getfd(l->bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        memcpy(body, hello_magic, 4);
        pg_be32_put(body + 4, (uint32_t)m->nodeid);
        memcpy(body + 8, l->my_nonce, NONCE_LEN);
        pg_mesh_link_say(l, T_HELLO, body, sizeof(body));
        l->state = L_HELLO_SENT;
        l->deadline = pg_clock_now() + ms_ns(PG_MESH_HANDSHAKE_MS);
        return;
    }
    if (what & BEV_EVENT_ERROR)
        snprintf(why, sizeof(why), "its connection broke (%s)",
                 evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    else
        snprintf(why, sizeof(why), "its connection closed");
    if (l->state == L_DIALING || l->state == L_HELLO_SENT)
        snprintf(m->dial_err, sizeof(m->dial_err), "%s", why);
    pg_mesh_link_drop(l, l->bye ? "it said goodbye" : why);
}

/* Writes the frame straight to the socket when nothing is queued before
 * it (the loop is about to be held and would not write it); the rest, or
 * all of it, is queued. */
void pg_mesh_link_say_now(link_t *l, unsigned type, const void *body, size_t len)
{
    struct evbuffer *out = bufferevent_get_output(l->bev);
    unsigned char frame[HDR_LEN + 16 + TAG_LEN];
    size_t whole;
    ssize_t n = 0;

    if (len > 16)
        return; /* the channel's own short frames only (QUIET) */
    frame_header(frame, len, type, (uint32_t)l->m->nodeid, (uint32_t)l->node);
    if (len > 0)
        memcpy(frame + HDR_LEN, body, len);
    whole = HDR_LEN + len + frame_tag(l, frame, body, len, frame + HDR_LEN + len);
    if (evbuffer_get_length(out) == 0)
        n = send(bufferevent_getfd(l->bev), frame, whole, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0)
        n = 0;
    if ((size_t)n < whole)
        evbuffer_add(out, frame + n, whole - (size_t)n);
    l->last_tx = pg_clock_now();
    l->m->count.sent_bytes += whole;
    l->m->count.sent_frames++;
}
