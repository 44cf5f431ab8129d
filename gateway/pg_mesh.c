/*
 * pg_mesh: the proxies' channel.  See pg_mesh.h for the rules and
 * docs/architecture.md for the design.
 *
 * A link goes through these states: a leaf dials the hub (DIALING), sends
 * HELLO (HELLO_SENT) and answers the CHALLENGE with a PROOF; the side that
 * accepted waits for the HELLO (ACCEPTED), sends the CHALLENGE
 * (CHALLENGED) and checks the PROOF.  Then the link is UP and carries
 * frames both ways; until then nothing but the handshake is read, and a
 * link that does not finish it within PG_MESH_HANDSHAKE_MS is closed.
 */
#include "gateway/pg_mesh.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gateway/pg_be.h"
#include "gateway/pg_sha256.h"
#include "wire/pg_clock.h"

enum {
    HDR_LEN = 16,
    NONCE_LEN = 16,
    TOKEN_LEN = 32,
    ADDRS_MAX = 8,              /* addresses on a card */
    PENDING_MAX = 64,           /* unauthenticated links held at once */
    PG_MESH_HANDSHAKE_MS = 5000,
    DIAL_ATTEMPT_MS = 2000,     /* one address's connect + handshake */
    DIAL_RETRY_MS = 100,        /* after every address failed */
    TICK_MS = 100,              /* heartbeats, silence, deadlines */
    /* the channel's own frame types */
    T_HELLO = 1,
    T_CHALLENGE = 2,
    T_PROOF = 3,
    T_HEARTBEAT = 4,
    T_BYE = 5,
    T_QUIET = 6,
};

static const char hello_magic[4] = { 'P', 'G', 'M', '1' };

typedef enum link_state {
    L_DIALING,    /* connect() in flight */
    L_HELLO_SENT, /* dialer: waiting for CHALLENGE */
    L_ACCEPTED,   /* acceptor: waiting for HELLO */
    L_CHALLENGED, /* acceptor: waiting for PROOF */
    L_UP,
} link_state_t;

typedef struct link {
    pg_mesh_t *m;
    struct bufferevent *bev;
    link_state_t state;
    int node;                       /* the peer, -1 until it said */
    unsigned char my_nonce[NONCE_LEN];
    unsigned char peer_nonce[NONCE_LEN];
    uint64_t deadline;              /* of the handshake (or the dial attempt) */
    uint64_t last_rx, last_tx;      /* pg_clock_now() */
    uint64_t quiet_until;           /* the peer said it may be silent until */
    bool bye;                       /* the peer said goodbye */
    struct link *next;              /* in m->pending */
} link_t;

typedef struct handler {
    pg_mesh_recv_fn fn;
    void *arg;
} handler_t;

struct pg_mesh {
    struct event_base *base;
    int nodeid, nnodes;
    uint64_t heartbeat_ns, timeout_ns, connect_ns;
    struct evconnlistener *listener;
    char card[PG_MESH_CARD_MAX];
    unsigned char token[TOKEN_LEN];
    unsigned char secret[PG_SHA256_LEN];
    bool started;
    uint64_t start_deadline;
    link_t **peers;                 /* [nnodes] the link to each node, or NULL */
    bool *gone;                     /* [nnodes] reported gone (once) */
    bool *joined;                   /* [nnodes] was UP once */
    link_t *pending;                /* accepted or dialing, not UP yet */
    int npending;
    /* a leaf dialing the hub */
    struct sockaddr_storage hub_addr[ADDRS_MAX];
    socklen_t hub_addrlen[ADDRS_MAX];
    int nhub_addrs, dial_next;
    link_t *dialing;
    struct event *dial_timer;
    char dial_err[160];
    struct event *tick;
    uint64_t last_tick;
    handler_t handlers[PG_MESH_TYPE_MAX];
    pg_mesh_gone_fn gone_fn;
    void *gone_arg;
    bool leaving;
    bool refused;                   /* a link was refused at start (wait_ready fails) */
    char refused_why[160];
};

/* ---------------------------------------------------------------- */
/* small helpers                                                      */
/* ---------------------------------------------------------------- */

static uint64_t ms_ns(uint64_t ms)
{
    return ms * 1000000u;
}

static struct timeval ns_tv(uint64_t ns)
{
    struct timeval tv = { (time_t)(ns / 1000000000u), (suseconds_t)(ns % 1000000000u / 1000) };

    return tv;
}

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

static int random_bytes(unsigned char *buf, size_t len)
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

static void link_write(link_t *l, unsigned type, uint32_t src, uint32_t dst, const void *body,
                       size_t len)
{
    struct evbuffer *out = bufferevent_get_output(l->bev);
    unsigned char hdr[HDR_LEN];

    frame_header(hdr, len, type, src, dst);
    evbuffer_add(out, hdr, sizeof(hdr));
    if (len > 0)
        evbuffer_add(out, body, len);
    l->last_tx = pg_clock_now();
}

/* A frame of the channel's own, from this node to the link's peer. */
static void link_say(link_t *l, unsigned type, const void *body, size_t len)
{
    link_write(l, type, (uint32_t)l->m->nodeid, l->node >= 0 ? (uint32_t)l->node : PG_MESH_ALL,
               body, len);
}

/* ---------------------------------------------------------------- */
/* links                                                              */
/* ---------------------------------------------------------------- */

static void link_on_read(struct bufferevent *bev, void *arg);
static void link_on_event(struct bufferevent *bev, short what, void *arg);
static void dial_next(pg_mesh_t *m);

static link_t *link_new(pg_mesh_t *m, evutil_socket_t fd, link_state_t state)
{
    link_t *l = calloc(1, sizeof(*l));

    if (l == NULL)
        return NULL;
    l->m = m;
    l->node = -1;
    l->state = state;
    l->bev = bufferevent_socket_new(m->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (l->bev == NULL || random_bytes(l->my_nonce, sizeof(l->my_nonce)) != 0) {
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

static void pending_add(pg_mesh_t *m, link_t *l)
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

static void report_gone(pg_mesh_t *m, int node, int orderly, const char *why)
{
    if (node < 0 || node >= m->nnodes || node == m->nodeid || m->gone[node])
        return;
    m->gone[node] = true;
    if (m->gone_fn != NULL && !m->leaving) /* a node that leaves asks nothing more */
        m->gone_fn(m->gone_arg, node, orderly, why);
}

/* Frees the link (closing its socket) and, when it was a node's, reports
 * the node gone -- a leaf that loses the hub has lost the relay too. */
static void link_drop(link_t *l, const char *why)
{
    pg_mesh_t *m = l->m;
    int node = l->state == L_UP ? l->node : -1;
    int orderly = l->bye;
    bool was_dialing = m->dialing == l;

    if (node >= 0 && m->peers[node] == l)
        m->peers[node] = NULL;
    else
        pending_remove(m, l);
    if (was_dialing)
        m->dialing = NULL;
    bufferevent_free(l->bev);
    free(l);
    if (node >= 0)
        report_gone(m, node, orderly, why);
    else if (was_dialing && !m->leaving)
        dial_next(m);
}

/* HMAC over what both ends of a handshake said, for one role: 'A' the
 * accepting side, 'C' the connecting one. */
static void handshake_mac(const pg_mesh_t *m, char role, const unsigned char *nonce_c,
                          const unsigned char *nonce_a, uint32_t node_c, uint32_t node_a,
                          unsigned char out[PG_SHA256_LEN])
{
    unsigned char ids[8];
    const void *part[4] = { &role, nonce_c, nonce_a, ids };
    size_t len[4] = { 1, NONCE_LEN, NONCE_LEN, sizeof(ids) };

    pg_be32_put(ids, node_c);
    pg_be32_put(ids + 4, node_a);
    pg_hmac_sha256(m->secret, sizeof(m->secret), part, len, 4, out);
}

/* Is `node` a node this one may link with now? */
static bool node_linkable(const pg_mesh_t *m, uint32_t node)
{
    return node < (uint32_t)m->nnodes && (int)node != m->nodeid && m->peers[node] == NULL &&
           !m->gone[node];
}

static void link_up(link_t *l, int node)
{
    pg_mesh_t *m = l->m;

    pending_remove(m, l);
    if (m->dialing == l)
        m->dialing = NULL;
    l->node = node;
    l->state = L_UP;
    m->peers[node] = l;
    m->joined[node] = true;
}

/* Acceptor: HELLO (magic, node, nonce) -> CHALLENGE. */
static int on_hello(link_t *l, const unsigned char *b, size_t len)
{
    pg_mesh_t *m = l->m;
    unsigned char body[4 + NONCE_LEN + PG_SHA256_LEN];
    uint32_t node;

    if (len != 4 + 4 + NONCE_LEN || memcmp(b, hello_magic, 4) != 0)
        return -1;
    node = pg_be32_get(b + 4);
    if (!m->started || !node_linkable(m, node))
        return -1;
    l->node = (int)node;
    memcpy(l->peer_nonce, b + 8, NONCE_LEN);
    pg_be32_put(body, (uint32_t)m->nodeid);
    memcpy(body + 4, l->my_nonce, NONCE_LEN);
    handshake_mac(m, 'A', l->peer_nonce, l->my_nonce, node, (uint32_t)m->nodeid,
                  body + 4 + NONCE_LEN);
    link_say(l, T_CHALLENGE, body, sizeof(body));
    l->state = L_CHALLENGED;
    return 0;
}

/* Dialer: CHALLENGE (node, nonce, mac) -> check -> PROOF, link up. */
static int on_challenge(link_t *l, const unsigned char *b, size_t len)
{
    pg_mesh_t *m = l->m;
    unsigned char want[PG_SHA256_LEN], proof[PG_SHA256_LEN];
    uint32_t node;

    if (len != 4 + NONCE_LEN + PG_SHA256_LEN)
        return -1;
    node = pg_be32_get(b);
    if ((int)node != l->node)
        return -1; /* not the node this address was for */
    memcpy(l->peer_nonce, b + 4, NONCE_LEN);
    handshake_mac(m, 'A', l->my_nonce, l->peer_nonce, (uint32_t)m->nodeid, node, want);
    if (!pg_mem_equal_ct(want, b + 4 + NONCE_LEN, PG_SHA256_LEN))
        return -1; /* does not know the job's secret */
    if (m->peers[node] != NULL || m->gone[node])
        return -1;
    handshake_mac(m, 'C', l->my_nonce, l->peer_nonce, (uint32_t)m->nodeid, node, proof);
    link_say(l, T_PROOF, proof, sizeof(proof));
    link_up(l, (int)node);
    return 0;
}

/* Acceptor: PROOF -> check -> link up. */
static int on_proof(link_t *l, const unsigned char *b, size_t len)
{
    pg_mesh_t *m = l->m;
    unsigned char want[PG_SHA256_LEN];

    if (len != PG_SHA256_LEN)
        return -1;
    handshake_mac(m, 'C', l->peer_nonce, l->my_nonce, (uint32_t)l->node, (uint32_t)m->nodeid,
                  want);
    if (!pg_mem_equal_ct(want, b, PG_SHA256_LEN) || !node_linkable(m, (uint32_t)l->node))
        return -1;
    link_up(l, l->node);
    return 0;
}

/* A frame from the hub's point of view: for another node, pass it on. */
static void relay(pg_mesh_t *m, link_t *from, unsigned type, uint32_t src, uint32_t dst,
                  const unsigned char *body, size_t len)
{
    if (dst != PG_MESH_ALL) {
        if (dst < (uint32_t)m->nnodes && m->peers[dst] != NULL)
            link_write(m->peers[dst], type, src, dst, body, len);
        return;
    }
    for (int n = 0; n < m->nnodes; n++)
        if (m->peers[n] != NULL && m->peers[n] != from)
            link_write(m->peers[n], type, src, dst, body, len);
}

/* A frame on an UP link.  0, 1 when the peer said goodbye, -1 when it
 * broke the protocol. */
static int on_frame(link_t *l, unsigned type, uint32_t src, uint32_t dst,
                    const unsigned char *body, size_t len)
{
    pg_mesh_t *m = l->m;

    if (type < PG_MESH_TYPE_USER) {
        if (type == T_BYE) {
            l->bye = true;
            return 1;
        }
        if (type == T_QUIET && len == 4)
            l->quiet_until = pg_clock_now() + ms_ns(pg_be32_get(body));
        return type == T_HEARTBEAT || type == T_QUIET ? 0 : -1;
    }
    if (type >= PG_MESH_TYPE_MAX || src >= (uint32_t)m->nnodes || (int)src == m->nodeid)
        return -1;
    /* a leaf speaks only for itself; the hub relays for everyone */
    if (l->node != 0 && (int)src != l->node)
        return -1;
    if (m->nodeid == 0 && dst != 0)
        relay(m, l, type, src, dst, body, len);
    if ((dst == (uint32_t)m->nodeid || dst == PG_MESH_ALL) && m->handlers[type].fn != NULL)
        m->handlers[type].fn(m->handlers[type].arg, (int)src, body, len);
    return 0;
}

/* One whole frame taken off the input: the handshake, or a frame.  0, 1
 * (goodbye) or -1 (the link is to be dropped). */
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

static void link_on_read(struct bufferevent *bev, void *arg)
{
    link_t *l = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    l->last_rx = pg_clock_now();
    while (evbuffer_get_length(in) >= HDR_LEN) {
        unsigned char hdr[HDR_LEN];
        unsigned char *body;
        size_t len;
        unsigned type;
        int rc;

        evbuffer_copyout(in, hdr, sizeof(hdr));
        len = pg_be32_get(hdr);
        type = (unsigned)hdr[4] << 8 | hdr[5];
        if (len > PG_MESH_BODY_MAX || (l->state != L_UP && len > 256)) {
            link_drop(l, "sent a frame too big");
            return;
        }
        if (evbuffer_get_length(in) < HDR_LEN + len)
            return;
        body = evbuffer_pullup(in, (ev_ssize_t)(HDR_LEN + len));
        rc = body == NULL ? -1 : link_take(l, type, pg_be32_get(hdr + 8), pg_be32_get(hdr + 12),
                                           body + HDR_LEN, len);
        if (rc != 0) {
            link_drop(l, rc > 0                 ? "it said goodbye"
                         : l->state == L_UP    ? "it broke the mesh protocol"
                                               : "it failed the handshake");
            return;
        }
        evbuffer_drain(in, HDR_LEN + len);
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
        link_say(l, T_HELLO, body, sizeof(body));
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
    link_drop(l, l->bye ? "it said goodbye" : why);
}

/* ---------------------------------------------------------------- */
/* accepting                                                          */
/* ---------------------------------------------------------------- */

static void on_accept(struct evconnlistener *lst, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg)
{
    pg_mesh_t *m = arg;
    link_t *l;
    int one = 1;

    (void)lst;
    (void)sa;
    (void)salen;
    if (m->npending >= PENDING_MAX || m->leaving) {
        close(fd);
        return;
    }
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    l = link_new(m, fd, L_ACCEPTED);
    if (l != NULL)
        pending_add(m, l);
}

/* The addresses of this host worth advertising: non-loopback IPv4 first,
 * then global IPv6, then loopback (where a peer on the same host may
 * reach it), at most ADDRS_MAX, comma-separated into out. */
static void local_addresses(int family, char *out, size_t len)
{
    struct ifaddrs *ifs = NULL;
    int n = 0;

    out[0] = '\0';
    if (getifaddrs(&ifs) != 0)
        ifs = NULL;
    for (int pass = 0; pass < 3; pass++) {
        for (struct ifaddrs *i = ifs; i != NULL && n < ADDRS_MAX - 1; i = i->ifa_next) {
            char text[INET6_ADDRSTRLEN];
            int fam = i->ifa_addr != NULL ? i->ifa_addr->sa_family : -1;
            bool loop = (i->ifa_flags & IFF_LOOPBACK) != 0;
            const void *a;

            if (!(i->ifa_flags & IFF_UP) || (pass == 2) != loop)
                continue;
            if (fam == AF_INET && pass != 1)
                a = &((struct sockaddr_in *)i->ifa_addr)->sin_addr;
            else if (fam == AF_INET6 && family == AF_INET6 && pass != 0 &&
                     !IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr))
                a = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
            else
                continue;
            if (inet_ntop(fam, a, text, sizeof(text)) == NULL ||
                strlen(out) + strlen(text) + 2 > len)
                continue;
            if (n++ > 0)
                strcat(out, ",");
            strcat(out, text);
        }
    }
    if (ifs != NULL)
        freeifaddrs(ifs);
    if (n == 0)
        snprintf(out, len, "127.0.0.1");
}

/* A listening socket on ss (IPv6: dual stack, IPv4 peers arrive mapped).
 * The descriptor, or -1 with errno set. */
static int listen_on(const struct sockaddr_storage *ss, socklen_t sl)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int zero = 0, one = 1, err;

    if (fd < 0)
        return -1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ss->ss_family == AF_INET6)
        (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    if (bind(fd, (const struct sockaddr *)ss, sl) == 0 && listen(fd, 64) == 0)
        return fd;
    err = errno;
    close(fd);
    errno = err;
    return -1;
}

/* Listens on `addr` (or every address: IPv6 and IPv4 where the host has
 * both) on an ephemeral port; fills the card. */
static int mesh_listen(pg_mesh_t *m, const char *addr, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
    socklen_t sl = sizeof(*sin6);
    char addrs[PG_MESH_CARD_MAX - 100], hex[2 * TOKEN_LEN + 1];
    int fd, port;

    memset(&ss, 0, sizeof(ss));
    if (addr != NULL) {
        int len = (int)sizeof(ss);

        if (evutil_parse_sockaddr_port(addr, (struct sockaddr *)&ss, &len) != 0) {
            snprintf(err, errlen, "PMIGATE_MESH_ADDR '%s' is not an IP address", addr);
            return -1;
        }
        sl = (socklen_t)len;
        fd = listen_on(&ss, sl);
    } else {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_addr = in6addr_any;
        fd = listen_on(&ss, sl);
        if (fd < 0) { /* no IPv6 on this host */
            memset(&ss, 0, sizeof(ss));
            sin->sin_family = AF_INET;
            sin->sin_addr.s_addr = htonl(INADDR_ANY);
            fd = listen_on(&ss, sizeof(*sin));
        }
    }
    if (fd < 0 || (m->listener = evconnlistener_new(m->base, on_accept, m,
                                                    LEV_OPT_CLOSE_ON_FREE, -1, fd)) == NULL) {
        snprintf(err, errlen, "cannot listen for the other proxies: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    sl = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
        snprintf(err, errlen, "cannot read the mesh's port: %s", strerror(errno));
        return -1;
    }
    port = ntohs(ss.ss_family == AF_INET6 ? sin6->sin6_port : sin->sin_port);
    if (addr != NULL)
        evutil_inet_ntop(ss.ss_family, ss.ss_family == AF_INET6 ? (void *)&sin6->sin6_addr
                                                                : (void *)&sin->sin_addr,
                         addrs, sizeof(addrs));
    else
        local_addresses(ss.ss_family, addrs, sizeof(addrs));
    for (int i = 0; i < TOKEN_LEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", m->token[i]);
    snprintf(m->card, sizeof(m->card), "%d %s %s", port, hex, addrs);
    return 0;
}

/* ---------------------------------------------------------------- */
/* dialing the hub                                                    */
/* ---------------------------------------------------------------- */

static void dial_next(pg_mesh_t *m)
{
    struct timeval retry = ns_tv(ms_ns(DIAL_RETRY_MS));
    link_t *l;

    if (m->peers[0] != NULL || m->gone[0] || m->dialing != NULL || m->leaving)
        return;
    if (m->dial_next >= m->nhub_addrs) { /* every address failed: again, shortly */
        m->dial_next = 0;
        evtimer_add(m->dial_timer, &retry);
        return;
    }
    l = link_new(m, -1, L_DIALING);
    if (l == NULL) {
        evtimer_add(m->dial_timer, &retry);
        return;
    }
    l->node = 0;
    pending_add(m, l);
    m->dialing = l;
    if (bufferevent_socket_connect(l->bev, (struct sockaddr *)&m->hub_addr[m->dial_next],
                                   (int)m->hub_addrlen[m->dial_next]) != 0) {
        snprintf(m->dial_err, sizeof(m->dial_err), "connect: %s", strerror(errno));
        m->dial_next++;
        link_drop(l, "cannot connect");
        return;
    }
    m->dial_next++;
}

static void on_dial_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dial_next(arg);
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
            link_say(l, T_HEARTBEAT, NULL, 0);
        if (now - l->last_rx < m->timeout_ns || now < l->quiet_until || link_has_input(l))
            continue;
        snprintf(why, sizeof(why), "nothing came from it for %.1f s",
                 (double)(now - l->last_rx) / 1e9);
        link_drop(l, why);
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
        link_drop(l, "did not finish the handshake");
        next = m->pending; /* the list may have changed (a new dial) */
    }
}

/* Nodes that never linked by the start deadline are gone (the hub: its
 * leaves; a leaf: the hub). */
static void tick_start(pg_mesh_t *m, uint64_t now)
{
    char why[200];

    if (!m->started || now < m->start_deadline)
        return;
    for (int n = 0; n < m->nnodes; n++) {
        bool expected = m->nodeid == 0 ? n != 0 : n == 0;

        if (!expected || m->joined[n] || m->gone[n])
            continue;
        if (m->nodeid != 0 && m->dial_err[0] != '\0')
            snprintf(why, sizeof(why), "it could not be reached within %.0f s (%s)",
                     (double)m->connect_ns / 1e9, m->dial_err);
        else
            snprintf(why, sizeof(why), "it did not join within %.0f s",
                     (double)m->connect_ns / 1e9);
        if (n == 0 && m->dialing != NULL)
            link_drop(m->dialing, why);
        report_gone(m, n, 0, why);
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
    m->dial_timer = evtimer_new(base, on_dial_timer, m);
    m->tick = event_new(base, -1, EV_PERSIST, on_tick, m);
    if (m->nnodes < 1 || m->nodeid < 0 || m->nodeid >= m->nnodes) {
        snprintf(err, errlen, "node %d of %d is not a node", m->nodeid, m->nnodes);
        goto fail;
    }
    if (m->peers == NULL || m->gone == NULL || m->joined == NULL || m->dial_timer == NULL ||
        m->tick == NULL || random_bytes(m->token, sizeof(m->token)) != 0) {
        snprintf(err, errlen, "out of resources");
        goto fail;
    }
    if (mesh_listen(m, addr != NULL && *addr != '\0' ? addr : NULL, err, errlen) != 0)
        goto fail;
    m->last_tick = pg_clock_now();
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
    m->leaving = true; /* no dialing again while links go */
    m->gone_fn = NULL; /* nobody to tell: the owner is freeing */
    while (m->pending != NULL)
        link_drop(m->pending, "the mesh is closed");
    for (int n = 0; m->peers != NULL && n < m->nnodes; n++)
        if (m->peers[n] != NULL)
            link_drop(m->peers[n], "the mesh is closed");
    if (m->listener != NULL)
        evconnlistener_free(m->listener);
    if (m->dial_timer != NULL)
        event_free(m->dial_timer);
    if (m->tick != NULL)
        event_free(m->tick);
    free(m->peers);
    free(m->gone);
    free(m->joined);
    free(m);
}

const char *pg_mesh_card(const pg_mesh_t *m)
{
    return m->card;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A card "port token addr[,addr...]": the token's bytes, and (want_addrs)
 * the addresses with the port.  0 or -1. */
static int parse_card(pg_mesh_t *m, const char *card, unsigned char token[TOKEN_LEN],
                      bool want_addrs)
{
    char hex[2 * TOKEN_LEN + 1], addrs[PG_MESH_CARD_MAX], *save = NULL, *a;
    int port;

    if (card == NULL || strlen(card) >= PG_MESH_CARD_MAX ||
        sscanf(card, "%d %64s %511s", &port, hex, addrs) != 3 || port < 1 || port > 65535 ||
        strlen(hex) != 2 * TOKEN_LEN)
        return -1;
    for (int i = 0; i < TOKEN_LEN; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

        if (hi < 0 || lo < 0)
            return -1;
        token[i] = (unsigned char)(hi << 4 | lo);
    }
    if (!want_addrs)
        return 0;
    m->nhub_addrs = 0;
    for (a = strtok_r(addrs, ",", &save); a != NULL && m->nhub_addrs < ADDRS_MAX;
         a = strtok_r(NULL, ",", &save)) {
        struct sockaddr_storage *ss = &m->hub_addr[m->nhub_addrs];
        struct sockaddr_in *sin = (struct sockaddr_in *)ss;
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

        memset(ss, 0, sizeof(*ss));
        if (inet_pton(AF_INET, a, &sin->sin_addr) == 1) {
            sin->sin_family = AF_INET;
            sin->sin_port = htons((uint16_t)port);
            m->hub_addrlen[m->nhub_addrs++] = sizeof(*sin);
        } else if (inet_pton(AF_INET6, a, &sin6->sin6_addr) == 1) {
            sin6->sin6_family = AF_INET6;
            sin6->sin6_port = htons((uint16_t)port);
            m->hub_addrlen[m->nhub_addrs++] = sizeof(*sin6);
        }
    }
    return m->nhub_addrs > 0 ? 0 : -1;
}

int pg_mesh_start(pg_mesh_t *m, const char *const *cards, char *err, size_t errlen)
{
    static const char label[] = "pmigate-mesh-v1";
    pg_sha256_t s;

    pg_sha256_init(&s);
    pg_sha256_update(&s, label, sizeof(label));
    for (int n = 0; n < m->nnodes; n++) {
        unsigned char token[TOKEN_LEN];

        if (parse_card(m, cards[n], token, n == 0 && m->nodeid != 0) != 0) {
            snprintf(err, errlen, "node %d's mesh card does not parse: '%s'", n,
                     cards[n] != NULL ? cards[n] : "(none)");
            return -1;
        }
        pg_sha256_update(&s, token, sizeof(token));
    }
    pg_sha256_final(&s, m->secret);
    m->started = true;
    m->start_deadline = pg_clock_now() + m->connect_ns;
    if (m->nodeid != 0)
        dial_next(m);
    return 0;
}

static bool mesh_ready(const pg_mesh_t *m)
{
    if (m->nodeid != 0)
        return m->peers[0] != NULL;
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

    if (type < PG_MESH_TYPE_USER || type >= PG_MESH_TYPE_MAX || len > PG_MESH_BODY_MAX ||
        dst == (uint32_t)m->nodeid)
        return -1;
    if (dst == PG_MESH_ALL && m->nodeid == 0) {
        int sent = 0;

        for (int n = 1; n < m->nnodes; n++)
            if (m->peers[n] != NULL) {
                link_write(m->peers[n], type, 0, dst, body, len);
                sent++;
            }
        return sent > 0 || m->nnodes == 1 ? 0 : -1;
    }
    if (dst != PG_MESH_ALL && dst >= (uint32_t)m->nnodes)
        return -1;
    l = route(m, dst);
    if (l == NULL)
        return -1;
    link_write(l, type, (uint32_t)m->nodeid, dst, body, len);
    return 0;
}

/* Writes the frame straight to the socket when nothing is queued before
 * it (the loop is about to be held and would not write it); the rest, or
 * all of it, is queued. */
static void link_say_now(link_t *l, unsigned type, const void *body, size_t len)
{
    struct evbuffer *out = bufferevent_get_output(l->bev);
    unsigned char frame[HDR_LEN + 16];
    ssize_t n = 0;

    frame_header(frame, len, type, (uint32_t)l->m->nodeid, (uint32_t)l->node);
    memcpy(frame + HDR_LEN, body, len);
    if (evbuffer_get_length(out) == 0)
        n = send(bufferevent_getfd(l->bev), frame, HDR_LEN + len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0)
        n = 0;
    if ((size_t)n < HDR_LEN + len)
        evbuffer_add(out, frame + n, HDR_LEN + len - (size_t)n);
    l->last_tx = pg_clock_now();
}

void pg_mesh_quiet(pg_mesh_t *m, uint64_t ns)
{
    unsigned char body[4];
    uint64_t ms = ns / 1000000u + 1;

    pg_be32_put(body, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
    for (int n = 0; n < m->nnodes; n++)
        if (m->peers[n] != NULL)
            link_say_now(m->peers[n], T_QUIET, body, sizeof(body));
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
            link_say(m->peers[n], T_BYE, NULL, 0);
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
            link_drop(m->peers[n], "this node left");
    return rc;
}

int pg_mesh_reachable(const pg_mesh_t *m, int node)
{
    if (node < 0 || node >= m->nnodes || node == m->nodeid || m->gone[node])
        return 0;
    return route(m, (uint32_t)node) != NULL;
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
