/*
 * pg_mesh_net: where the mesh's links come from -- the listener and the
 * card that advertises it, accepting connections, reading the hub's card
 * and dialing it address by address.  What a link does once it exists is
 * pg_mesh_link.c's; pg_mesh_int.h says why the mesh is split.
 */
#include "gateway/mesh/pg_mesh_int.h"

#include <arpa/inet.h>
#include <errno.h>
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
    l = pg_mesh_link_new(m, fd, L_ACCEPTED);
    if (l != NULL)
        pg_mesh_pending_add(m, l);
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

/* A card "port token addr[,addr...]": the token's bytes, and (want_addrs)
 * the addresses with the port.  0 or -1. */
int pg_mesh_parse_card(pg_mesh_t *m, const char *card, unsigned char token[TOKEN_LEN],
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

/* ---------------------------------------------------------------- */
/* dialing the hub                                                    */
/* ---------------------------------------------------------------- */

void pg_mesh_dial_next(pg_mesh_t *m)
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
    l = pg_mesh_link_new(m, -1, L_DIALING);
    if (l == NULL) {
        evtimer_add(m->dial_timer, &retry);
        return;
    }
    l->node = 0;
    pg_mesh_pending_add(m, l);
    m->dialing = l;
    if (bufferevent_socket_connect(l->bev, (struct sockaddr *)&m->hub_addr[m->dial_next],
                                   (int)m->hub_addrlen[m->dial_next]) != 0) {
        snprintf(m->dial_err, sizeof(m->dial_err), "connect: %s", strerror(errno));
        m->dial_next++;
        pg_mesh_link_drop(l, "cannot connect");
        return;
    }
    m->dial_next++;
}

void pg_mesh_on_dial_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    pg_mesh_dial_next(arg);
}

