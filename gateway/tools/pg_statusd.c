/*
 * pg_statusd: the status endpoint.  See pg_statusd.h.
 *
 * A client goes through two states: reading its request line (nothing is
 * built before the request, so a peer that only connects costs nothing),
 * then being written the report, which is built once, whole, in memory
 * (an open_memstream), and written as the socket takes it.
 */
#include "gateway/tools/pg_statusd.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "gateway/io/pg_listen.h"

typedef struct status_client {
    struct pg_statusd *owner;
    int fd;
    struct event *ev;     /* readable (the request), then writable (the report) */
    struct event *idle;   /* drops a client that sends or takes nothing */
    int refused;          /* a peer of another uid: its answer is a refusal */
    char req[64];
    size_t reqlen;
    char *out;            /* the reply, header line first */
    size_t outlen, sent;
    uint64_t ticket;      /* waiting for pg_statusd_more_done with it; 0: not */
    uint64_t seq;         /* accept order: the oldest silent peer goes first */
    int answered;         /* its request is read: never dropped for room */
} status_client_t;

struct pg_statusd {
    struct event_base *base;
    int fd;
    struct event *ev;
    struct sockaddr_un addr; /* <dir>/status, or through dir_fd when too long */
    int dir_fd;              /* the directory's alias for addr, or -1 */
    int bound;               /* the socket file is ours to unlink */
    pg_statusd_report_fn report;
    void *arg;
    pg_statusd_more_fn more; /* NULL: the report is all */
    void *more_arg;
    uint64_t tickets;        /* handed out so far */
    uint64_t accepted;       /* connections taken so far */
    status_client_t *clients[PG_STATUSD_CLIENTS];
};

static void client_free(status_client_t *c)
{
    for (int i = 0; i < PG_STATUSD_CLIENTS; i++)
        if (c->owner->clients[i] == c)
            c->owner->clients[i] = NULL;
    if (c->ev != NULL)
        event_free(c->ev);
    if (c->idle != NULL)
        event_free(c->idle);
    close(c->fd);
    free(c->out);
    free(c);
}

static void idle_again(status_client_t *c)
{
    struct timeval tv = { PG_STATUSD_IDLE_MS / 1000, (PG_STATUSD_IDLE_MS % 1000) * 1000 };

    (void)evtimer_add(c->idle, &tv);
}

static void on_idle(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    client_free(arg);
}

/* Writes what the socket takes; frees the client when all went out. */
static void on_writable(evutil_socket_t fd, short what, void *arg)
{
    status_client_t *c = arg;
    ssize_t n;

    (void)what;
    while (c->sent < c->outlen) {
        n = send(fd, c->out + c->sent, c->outlen - c->sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            idle_again(c);
            return;
        }
        if (n <= 0)
            break; /* the client went away */
        c->sent += (size_t)n;
    }
    client_free(c);
}

/* The reply to a whole request line, then the client's write phase. */
/* The reply is complete: written as the client takes it. */
static void start_writing(status_client_t *c)
{
    event_free(c->ev);
    c->ev = event_new(c->owner->base, c->fd, EV_WRITE | EV_PERSIST, on_writable, c);
    if (c->ev == NULL || event_add(c->ev, NULL) != 0) {
        client_free(c);
        return;
    }
    idle_again(c);
}

static void answer(status_client_t *c)
{
    pg_statusd_t *s = c->owner;
    FILE *out = open_memstream(&c->out, &c->outlen);
    int more = 0;

    if (out == NULL) {
        client_free(c);
        return;
    }
    if (c->refused) {
        fprintf(out, "refused: this pmigate job belongs to another user\n");
    } else if (strcmp(c->req, PG_STATUSD_REQUEST) == 0) {
        fprintf(out, PG_STATUSD_HEADER " pid=%ld\n", (long)getpid());
        s->report(s->arg, out);
        more = s->more != NULL;
    } else {
        fprintf(out, "refused: unknown request (this pmigate answers \"" PG_STATUSD_REQUEST
                     "\")\n");
    }
    if (fclose(out) != 0) {
        client_free(c);
        return;
    }
    if (!more) {
        start_writing(c);
        return;
    }
    (void)event_del(c->ev); /* nothing more is read; the idle timer still runs */
    c->ticket = ++s->tickets;
    s->more(s->more_arg, c->ticket); /* may answer inline */
}

void pg_statusd_set_more(pg_statusd_t *s, pg_statusd_more_fn more, void *arg)
{
    s->more = more;
    s->more_arg = arg;
}

void pg_statusd_more_done(pg_statusd_t *s, uint64_t ticket, const char *text, size_t len)
{
    status_client_t *c = NULL;
    char *grown;

    for (int i = 0; i < PG_STATUSD_CLIENTS && c == NULL; i++)
        if (s->clients[i] != NULL && ticket != 0 && s->clients[i]->ticket == ticket)
            c = s->clients[i];
    if (c == NULL)
        return; /* dropped meanwhile */
    c->ticket = 0;
    grown = len > 0 ? realloc(c->out, c->outlen + len) : c->out;
    if (grown == NULL) {
        client_free(c);
        return;
    }
    c->out = grown;
    if (len > 0)
        memcpy(c->out + c->outlen, text, len);
    c->outlen += len;
    start_writing(c);
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    status_client_t *c = arg;
    char *nl;
    ssize_t n;

    (void)what;
    n = recv(fd, c->req + c->reqlen, sizeof(c->req) - 1 - c->reqlen, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        client_free(c);
        return;
    }
    c->reqlen += (size_t)n;
    c->req[c->reqlen] = '\0';
    nl = strchr(c->req, '\n');
    if (nl == NULL && c->reqlen < sizeof(c->req) - 1)
        return;
    if (nl != NULL)
        *nl = '\0';
    c->answered = 1;
    answer(c);
}

/* Is the peer of pmigate's own uid?  Another's is answered a refusal,
 * after its request (closing on an unread request would reset the
 * connection before the refusal is read). */
static int peer_is_owner(int fd)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);

    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == geteuid();
}

/* A free slot, or the slot of the oldest client that has not sent its
 * request yet, dropped to make room: a peer that only connects must not
 * keep the owner out (a flood of them filled every slot for
 * PG_STATUSD_IDLE_MS at a time).  -1 when every client is being answered. */
static int slot_for_newcomer(pg_statusd_t *s)
{
    int oldest = -1;

    for (int i = 0; i < PG_STATUSD_CLIENTS; i++) {
        status_client_t *c = s->clients[i];

        if (c == NULL)
            return i;
        if (!c->answered && (oldest < 0 || c->seq < s->clients[oldest]->seq))
            oldest = i;
    }
    if (oldest >= 0)
        client_free(s->clients[oldest]);
    return oldest;
}

static void on_acceptable(evutil_socket_t lfd, short what, void *arg)
{
    pg_statusd_t *s = arg;
    status_client_t *c;
    int fd, slot;

    (void)what;
    fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    slot = slot_for_newcomer(s);
    if (slot < 0 || (c = calloc(1, sizeof(*c))) == NULL) {
        close(fd); /* busy answering: the client says so and may retry */
        return;
    }
    c->owner = s;
    c->fd = fd;
    c->seq = ++s->accepted;
    c->refused = !peer_is_owner(fd);
    c->ev = event_new(s->base, fd, EV_READ | EV_PERSIST, on_readable, c);
    c->idle = evtimer_new(s->base, on_idle, c);
    s->clients[slot] = c;
    if (c->ev == NULL || c->idle == NULL || event_add(c->ev, NULL) != 0) {
        client_free(c);
        return;
    }
    idle_again(c);
    /* `pmigate status` writes its request as soon as it is connected: read
     * it now, so it is answered before the next newcomer could need room */
    on_readable(fd, EV_READ, c);
}

pg_statusd_t *pg_statusd_new(struct event_base *base, const char *dir,
                             pg_statusd_report_fn report, void *arg, int *err)
{
    pg_statusd_t *s = calloc(1, sizeof(*s));

    if (s == NULL) {
        *err = ENOMEM;
        return NULL;
    }
    s->base = base;
    s->fd = s->dir_fd = -1;
    s->report = report;
    s->arg = arg;
    if ((*err = pg_listen_address(dir, PG_STATUSD_SOCKET, &s->addr, &s->dir_fd)) != 0 ||
        (*err = pg_listen_unix(&s->addr, PG_STATUSD_BACKLOG, &s->fd)) != 0)
        goto fail;
    s->bound = 1;
    s->ev = event_new(base, s->fd, EV_READ | EV_PERSIST, on_acceptable, s);
    if (s->ev == NULL || event_add(s->ev, NULL) != 0) {
        *err = ENOMEM;
        goto fail;
    }
    return s;
fail:
    pg_statusd_free(s);
    return NULL;
}

void pg_statusd_free(pg_statusd_t *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < PG_STATUSD_CLIENTS; i++)
        if (s->clients[i] != NULL)
            client_free(s->clients[i]);
    if (s->ev != NULL)
        event_free(s->ev);
    if (s->fd >= 0)
        close(s->fd);
    if (s->bound)
        unlink(s->addr.sun_path);
    if (s->dir_fd >= 0)
        close(s->dir_fd);
    free(s);
}
