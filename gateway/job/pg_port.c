/*
 * pg_port: admission of PMI_PORT connections.  See pg_port.h.
 *
 * The waiting connections are kept in accept order, so the oldest is both
 * the one dropped when there are too many and the one whose hello deadline
 * comes first (one timer, armed for it).
 *
 * Below the job's connections (pg_job_conn.c calls it) and above only
 * pg_job_ctx.c: it reads the job's records (pg_job_int.h) instead of
 * calling pg_job.c, and makes connections with the maker it was given.
 */
#include "gateway/job/pg_port.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gateway/util/pg_proc.h"
#include "gateway/job/pg_job_ctx.h"
#include "gateway/job/pg_job_int.h"
#include "wire/pg_clock.h"

enum {
    /* PMI_PORT connections that have not said which rank they are, beyond
     * one per rank: past that the oldest is dropped, so strangers neither
     * grow pmigate nor keep the job's own ranks out */
    PG_PORT_STRANGERS = 64,
    /* complaints about such connections shown before the rest are muted */
    PG_PORT_COMPLAINTS_MAX = 8,
    /* A PMI_PORT connection must say which rank it is within this long
     * (PMIGATE_HELLO_TIMEOUT, seconds, overrides it): a silent one is
     * closed instead of holding one of the slots above for the whole job. */
    PG_PORT_HELLO_TIMEOUT_MS = 10000,
};

/* A PMI_PORT connection that has not yet said which rank it is. */
typedef struct port_peer {
    pg_conn_t *conn;   /* owned until identified */
    pid_t pid;         /* the process that connected (SO_PEERCRED), 0 unknown */
    int kin;           /* the rank whose process `pid` is or descends from,
                        * as of accept; -1: none (a stranger) */
    uint64_t deadline; /* pg_clock_now() by which it must have named its rank */
} port_peer_t;

struct pg_port {
    pg_job_t *job;            /* whose ranks the connections may claim */
    pg_port_conn_fn new_conn; /* makes the job's connections */
    port_peer_t *peers;       /* oldest first, owned */
    int npeers;
    uint64_t hello_timeout_ns;
    struct event *ev_hello;   /* closes the oldest silent connections */
    int dropped;              /* a stranger was dropped (told once) */
    int complaints;           /* complaints about strangers shown so far */
};

static void on_hello_timeout(evutil_socket_t fd, short what, void *arg);

/* PG_PORT_HELLO_TIMEOUT_MS, or PMIGATE_HELLO_TIMEOUT seconds (> 0). */
static uint64_t hello_timeout_ns(void)
{
    const char *text = getenv("PMIGATE_HELLO_TIMEOUT");
    char *end;
    double s;

    if (text != NULL && *text != '\0') {
        s = strtod(text, &end);
        if (*end == '\0' && s > 0 && s < 1e6)
            return (uint64_t)(s * 1e9);
        pg_job_ctx_log(NULL, "PMIGATE_HELLO_TIMEOUT=%s is not a number of seconds: using %d s", text,
                   PG_PORT_HELLO_TIMEOUT_MS / 1000);
    }
    return (uint64_t)PG_PORT_HELLO_TIMEOUT_MS * 1000000u;
}

pg_port_t *pg_port_new(struct event_base *base, pg_job_t *job, pg_port_conn_fn new_conn)
{
    pg_port_t *port = calloc(1, sizeof(*port));

    if (port == NULL)
        return NULL;
    port->job = job;
    port->new_conn = new_conn;
    port->hello_timeout_ns = hello_timeout_ns();
    port->ev_hello = evtimer_new(base, on_hello_timeout, port);
    if (port->ev_hello == NULL) {
        free(port);
        return NULL;
    }
    return port;
}

void pg_port_free(pg_port_t *port)
{
    if (port == NULL)
        return;
    while (port->npeers > 0)
        pg_conn_free(port->peers[--port->npeers].conn);
    free(port->peers);
    event_free(port->ev_hello);
    free(port);
}

static port_peer_t *peer_of(pg_port_t *port, const pg_conn_t *conn)
{
    for (int i = 0; i < port->npeers; i++)
        if (port->peers[i].conn == conn)
            return &port->peers[i];
    return NULL;
}

void pg_port_forget(pg_port_t *port, const pg_conn_t *conn)
{
    port_peer_t *peer = port != NULL ? peer_of(port, conn) : NULL;

    if (peer == NULL)
        return;
    memmove(peer, peer + 1, (size_t)(port->peers + port->npeers - peer - 1) * sizeof(*peer));
    port->npeers--;
}

/* A PMI_PORT connection speaks for a rank only if the process that opened
 * it is that rank's process or one of its descendants (pg_proc.h): any
 * other process of the user who claims the rank is an impostor, refused
 * before it reads a key or joins a fence, and the rank itself is untouched. */
int pg_port_may_claim(pg_port_t *port, const pg_conn_t *conn, int rank, const char **why)
{
    static char reason[128];
    port_peer_t *peer = port != NULL ? peer_of(port, conn) : NULL;
    const pid_t *pids;

    if (peer == NULL || peer->kin == rank)
        return 1;
    pids = port->job->pids;
    if (pids[rank] == 0)
        snprintf(reason, sizeof(reason), "that rank has not started yet");
    else
        snprintf(reason, sizeof(reason),
                 "the process that connected (pid %d) is not rank %d's process (pid %d) nor "
                 "one of its descendants",
                 (int)peer->pid, rank, (int)pids[rank]);
    *why = reason;
    return 0;
}

/* One line per complaint about a PMI_PORT connection that is no rank's, up
 * to PG_PORT_COMPLAINTS_MAX: a flood of strangers does not flood stderr. */
void pg_port_complain(pg_port_t *port, const char *what)
{
    if (port->complaints >= PG_PORT_COMPLAINTS_MAX)
        return;
    pg_job_log(port->job, "a PMI_PORT client %s%s", what,
               ++port->complaints == PG_PORT_COMPLAINTS_MAX
                   ? " (further complaints about PMI_PORT clients muted)"
                   : "");
}

/* Makes room for one more unidentified PMI_PORT connection by dropping the
 * oldest when there are more than the ranks could account for. */
static void drop_oldest(pg_port_t *port)
{
    int size = port->job->size;
    pg_conn_t *oldest;

    if (port->npeers < size + PG_PORT_STRANGERS)
        return;
    if (!port->dropped) {
        port->dropped = 1;
        pg_job_log(port->job,
                   "more than %d PMI_PORT connections have not said which rank they are: "
                   "dropping the oldest",
                   size + PG_PORT_STRANGERS);
    }
    oldest = port->peers[0].conn;
    pg_port_forget(port, oldest);
    pg_conn_free(oldest);
}

/* Arms the hello timer for the oldest waiting connection (the earliest
 * deadline: they are kept in accept order). */
static void hello_arm(pg_port_t *port)
{
    uint64_t now = pg_clock_now(), due;
    struct timeval tv;

    if (port->npeers == 0 || evtimer_pending(port->ev_hello, NULL))
        return;
    due = port->peers[0].deadline;
    due = due > now ? due - now : 0;
    tv.tv_sec = (time_t)(due / 1000000000u);
    tv.tv_usec = (suseconds_t)(due % 1000000000u / 1000u) + 1;
    (void)evtimer_add(port->ev_hello, &tv);
}

/* Closes every PMI_PORT connection that has not named its rank in time. */
static void on_hello_timeout(evutil_socket_t fd, short what, void *arg)
{
    pg_port_t *port = arg;
    uint64_t now = pg_clock_now();
    char what_happened[96];

    (void)fd;
    (void)what;
    while (port->npeers > 0 && port->peers[0].deadline <= now) {
        pg_conn_t *silent = port->peers[0].conn;

        snprintf(what_happened, sizeof(what_happened),
                 "did not say which rank it is within %g s: closed",
                 (double)port->hello_timeout_ns / 1e9);
        pg_port_forget(port, silent);
        pg_port_complain(port, what_happened);
        pg_conn_free(silent);
    }
    hello_arm(port);
}

/* pid's kinship is read now, while the process that connected surely
 * exists (its pid cannot have been reused yet). */
void pg_port_accept(pg_port_t *port, int fd, pid_t pid)
{
    pg_job_t *job = port->job;
    port_peer_t *grown;
    pg_conn_t *conn;

    drop_oldest(port);
    grown = realloc(port->peers, (size_t)(port->npeers + 1) * sizeof(*grown));
    if (grown == NULL) {
        close(fd);
        return;
    }
    port->peers = grown;
    conn = port->new_conn(job, fd, -1);
    if (conn == NULL)
        return;
    port->peers[port->npeers++] = (port_peer_t){
        .conn = conn, .pid = pid,
        .kin = pid > 0 ? pg_proc_ancestor_among(pid, job->pids, job->size, job->ctx->pid) : -1,
        .deadline = pg_clock_now() + port->hello_timeout_ns,
    };
    hello_arm(port);
}
