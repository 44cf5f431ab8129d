/*
 * pg_mesh_net: where the mesh's links come from -- the listener and the
 * card that advertises it, accepting connections, reading a node's card
 * and dialing it address by address.  What a link does once it exists is
 * pg_mesh_link.c's; pg_mesh_int.h says why the mesh is split.
 */
#include "gateway/mesh/pg_mesh_int.h"

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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wire/pg_clock.h"

/* ---------------------------------------------------------------- */
/* accepting                                                          */
/* ---------------------------------------------------------------- */

/* "address:port" of a peer, an IPv4 peer of the dual-stack listener
 * written as IPv4 (as the cards and the operator's tools write it). */
static void peer_text(const struct sockaddr *sa, char *out, size_t len)
{
    char a[INET6_ADDRSTRLEN] = "?";
    int port = 0;

    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

        inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
        port = ntohs(sin->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

        if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr))
            inet_ntop(AF_INET, &sin6->sin6_addr.s6_addr[12], a, sizeof(a));
        else
            inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
        port = ntohs(sin6->sin6_port);
    }
    snprintf(out, len, "%s:%d", a, port);
}

/* The stranger a newcomer replaces when every pending slot is taken: an
 * accepted link still in its handshake (never this node's own dial), the
 * silent ones first, the oldest (earliest deadline) of them.  NULL when
 * there is none. */
static link_t *stranger_to_drop(const pg_mesh_t *m)
{
    link_t *best = NULL;
    bool best_spoke = true;

    for (link_t *l = m->pending; l != NULL; l = l->next) {
        bool spoke;

        if (l->state != L_ACCEPTED && l->state != L_CHALLENGED)
            continue;
        spoke = l->state == L_CHALLENGED || pg_mesh_link_has_input(l); /* a peer says HELLO at once */
        if (best == NULL || (best_spoke && !spoke) ||
            (spoke == best_spoke && l->deadline < best->deadline)) {
            best = l;
            best_spoke = spoke;
        }
    }
    return best;
}

/* Why drop a stranger for a newcomer rather than refuse the newcomer: the
 * slots are held by whoever came first, so an outsider holding them all
 * while the peers dial would keep every peer out until the start-up fails
 * (as an outsider's flood once did); a peer completes its handshake in a
 * round trip, long before 64 newer connections push it out. */
static void on_accept(struct evconnlistener *lst, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg)
{
    pg_mesh_t *m = arg;
    link_t *l;
    char peer[sizeof(l->peer)];
    int one = 1;

    (void)lst;
    (void)salen;
    if (m->leaving) {
        close(fd);
        return;
    }
    peer_text(sa, peer, sizeof(peer));
    if (m->npending >= PENDING_MAX) {
        link_t *old = stranger_to_drop(m);

        if (old == NULL) {
            link_t tmp = { .m = m };

            snprintf(tmp.peer, sizeof(tmp.peer), "%s", peer);
            pg_mesh_refusal_note(m, &tmp, "too many connections in their handshake");
            close(fd);
            return;
        }
        pg_mesh_link_drop(old, "pushed out by a newer connection (64 in their handshake)");
    }
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    l = pg_mesh_link_new(m, fd, L_ACCEPTED);
    if (l == NULL)
        return;
    snprintf(l->peer, sizeof(l->peer), "%s", peer);
    pg_mesh_pending_add(m, l);
}

/* ---------------------------------------------------------------- */
/* refused connections, in the log                                   */
/* ---------------------------------------------------------------- */

/* Why rate-limited: a flood of bad connections (a scanner, an attack)
 * would otherwise write a line each, hundreds of thousands; the first
 * says at once what happens, then one line per window says how much. */
void pg_mesh_refusal_note(pg_mesh_t *m, const link_t *l, const char *why)
{
    uint64_t now = pg_clock_now();

    snprintf(m->refusal_last, sizeof(m->refusal_last), "%s, from %s", why,
             l->peer[0] != '\0' ? l->peer : "?");
    if (!m->refusals_told) {
        fprintf(stderr,
                "pmigate: node %d: refused a mesh connection: %s (more are counted: one "
                "line every %d s)\n",
                m->nodeid, m->refusal_last, REFUSALS_LOG_MS / 1000);
        m->refusals_told = true;
        m->refusals_since = now;
        return;
    }
    m->refusals++;
}

void pg_mesh_refusals_tell(pg_mesh_t *m, uint64_t now, bool force)
{
    if (!m->refusals_told || (!force && now - m->refusals_since < ms_ns(REFUSALS_LOG_MS)))
        return;
    if (m->refusals > 0)
        fprintf(stderr, "pmigate: node %d: refused %u more mesh connection%s in the last %.0f s "
                        "(the last: %s)\n",
                m->nodeid, m->refusals, m->refusals == 1 ? "" : "s",
                (double)(now - m->refusals_since) / 1e9, m->refusal_last);
    /* a quiet window ends the count: the next refusal is told at once */
    m->refusals_told = m->refusals > 0;
    m->refusals = 0;
    m->refusals_since = now;
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
int pg_mesh_listen(pg_mesh_t *m, const char *addr, char *err, size_t errlen)
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
/* the cards                                                        */
/* ---------------------------------------------------------------- */

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int pg_mesh_parse_card(const char *card, unsigned char token[TOKEN_LEN],
                       struct sockaddr_storage *addrs, socklen_t *lens, int *naddrs)
{
    char hex[2 * TOKEN_LEN + 1], list[PG_MESH_CARD_MAX], *save = NULL, *a;
    int port, n = 0;

    if (card == NULL || strlen(card) >= PG_MESH_CARD_MAX ||
        sscanf(card, "%d %64s %511s", &port, hex, list) != 3 || port < 1 || port > 65535 ||
        strlen(hex) != 2 * TOKEN_LEN)
        return -1;
    for (int i = 0; i < TOKEN_LEN; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

        if (hi < 0 || lo < 0)
            return -1;
        token[i] = (unsigned char)(hi << 4 | lo);
    }
    for (a = strtok_r(list, ",", &save); a != NULL && n < ADDRS_MAX;
         a = strtok_r(NULL, ",", &save)) {
        struct sockaddr_storage ss;
        struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
        socklen_t len;

        memset(&ss, 0, sizeof(ss));
        if (inet_pton(AF_INET, a, &sin->sin_addr) == 1) {
            sin->sin_family = AF_INET;
            sin->sin_port = htons((uint16_t)port);
            len = sizeof(*sin);
        } else if (inet_pton(AF_INET6, a, &sin6->sin6_addr) == 1) {
            sin6->sin6_family = AF_INET6;
            sin6->sin6_port = htons((uint16_t)port);
            len = sizeof(*sin6);
        } else {
            continue;
        }
        if (addrs != NULL) {
            addrs[n] = ss;
            lens[n] = len;
        }
        n++;
    }
    if (naddrs != NULL)
        *naddrs = n;
    return n > 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- */
/* dialing                                                            */
/* ---------------------------------------------------------------- */

/* One node this node dials: its addresses, tried in turn, and the attempt
 * in flight.  Why a list and not a field per node: a node dials its few
 * neighbours at the start and, later, the nodes its direct data goes to;
 * a job of 10 000 nodes needs no 10 000 of these. */
typedef struct dial {
    struct dial *next;
    pg_mesh_t *m;
    int node;
    struct sockaddr_storage addr[ADDRS_MAX];
    socklen_t addrlen[ADDRS_MAX];
    int naddrs, next_addr;
    link_t *attempt;
    struct event *retry;
    uint64_t deadline;   /* 0: the start-up's (pg_mesh.c reports the node) */
} dial_t;

static dial_t *dial_find(const pg_mesh_t *m, int node)
{
    for (dial_t *d = m->dials; d != NULL; d = d->next)
        if (d->node == node)
            return d;
    return NULL;
}

bool pg_mesh_dialing(const pg_mesh_t *m, int node)
{
    return dial_find(m, node) != NULL;
}

/* An accepted link from `node` in its handshake: the other side's dial,
 * which may still win (the two nodes dialed each other). */
static bool accepting_from(const pg_mesh_t *m, int node)
{
    for (const link_t *l = m->pending; l != NULL; l = l->next)
        if ((l->state == L_ACCEPTED || l->state == L_CHALLENGED) && l->node == node)
            return true;
    return false;
}

static void dial_attempt(dial_t *d)
{
    pg_mesh_t *m = d->m;
    struct timeval retry = ns_tv(ms_ns(DIAL_RETRY_MS));
    link_t *l;
    int a;

    if (m->peers[d->node] != NULL || m->gone[d->node] || d->attempt != NULL || m->leaving)
        return;
    /* every address failed, or the other node's own dial is in its
     * handshake here: again, shortly */
    if (d->next_addr >= d->naddrs || accepting_from(m, d->node)) {
        if (d->next_addr >= d->naddrs)
            d->next_addr = 0;
        evtimer_add(d->retry, &retry);
        return;
    }
    l = pg_mesh_link_new(m, -1, L_DIALING);
    if (l == NULL) {
        evtimer_add(d->retry, &retry);
        return;
    }
    l->node = d->node;
    l->dial = d;
    pg_mesh_pending_add(m, l);
    d->attempt = l;
    a = d->next_addr++;
    if (bufferevent_socket_connect(l->bev, (struct sockaddr *)&d->addr[a], (int)d->addrlen[a]) !=
        0) {
        snprintf(m->dial_err, sizeof(m->dial_err), "connect: %s", strerror(errno));
        pg_mesh_link_drop(l, "cannot connect"); /* the dial goes on to the next address */
    }
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dial_attempt(arg);
}

int pg_mesh_dial(pg_mesh_t *m, int node, uint64_t deadline)
{
    unsigned char token[TOKEN_LEN];
    dial_t *d;

    if (m->peers[node] != NULL || m->gone[node] || dial_find(m, node) != NULL)
        return 0;
    d = calloc(1, sizeof(*d));
    if (d == NULL)
        return -1;
    d->m = m;
    d->node = node;
    d->deadline = deadline;
    d->retry = evtimer_new(m->base, on_retry, d);
    if (d->retry == NULL ||
        pg_mesh_parse_card(m->cards[node], token, d->addr, d->addrlen, &d->naddrs) != 0) {
        if (d->retry != NULL)
            event_free(d->retry);
        free(d);
        return -1;
    }
    d->next = m->dials;
    m->dials = d;
    dial_attempt(d);
    return 0;
}

void pg_mesh_dial_end(pg_mesh_t *m, int node)
{
    for (dial_t **at = &m->dials; *at != NULL; at = &(*at)->next) {
        dial_t *d = *at;

        if (d->node != node)
            continue;
        *at = d->next;
        if (d->attempt != NULL) {
            d->attempt->dial = NULL;
            d->attempt = NULL;
        }
        event_free(d->retry);
        free(d);
        return;
    }
}

void pg_mesh_dial_lost(pg_mesh_t *m, int node)
{
    dial_t *d = dial_find(m, node);

    if (d == NULL)
        return;
    d->attempt = NULL;
    if (m->peers[node] != NULL || m->gone[node])
        pg_mesh_dial_end(m, node);
    else
        dial_attempt(d);
}

void pg_mesh_dials_tick(pg_mesh_t *m, uint64_t now)
{
    dial_t *d, *next;

    for (d = m->dials; d != NULL; d = next) {
        link_t *attempt = d->attempt;
        int node = d->node;
        char why[240];

        next = d->next;
        if (d->deadline == 0 || now < d->deadline)
            continue;
        snprintf(why, sizeof(why), "it could not be reached directly within %.1f s (%s)",
                 (double)(m->connect_ns > m->timeout_ns ? m->connect_ns : m->timeout_ns) / 1e9,
                 m->dial_err[0] != '\0' ? m->dial_err : "no answer");
        /* gone first: the attempt's drop must not start another */
        pg_mesh_report_gone(m, node, 0, why);
        pg_mesh_dial_end(m, node);
        if (attempt != NULL)
            pg_mesh_link_drop(attempt, why);
        next = m->dials; /* the report may have ended dials */
    }
}

void pg_mesh_dials_free(pg_mesh_t *m)
{
    while (m->dials != NULL)
        pg_mesh_dial_end(m, m->dials->node);
}
