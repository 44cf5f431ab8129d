/*
 * pg_proxy_dyn: how the dynamic jobs of `pmigate proxy` (spawn across
 * nodes: pg_proxy_spawn.c; groups: pg_proxy_group.c) send their messages.
 *
 * Why a layer over the mesh: those protocols are coordinated by node 0,
 * which is also a node with ranks of its own, and a message from
 * a node to itself must take the same path as one from another node --
 * same handler, same order, never inside the caller's own stack (a rank's
 * spawn on node 0 would otherwise be started, launched and answered
 * within the handler call that asked for it).  So a message for this node
 * goes into a queue the loop drains on its next turn; one for another
 * node goes on the mesh; one for every node does both.  With a single
 * node there is no mesh, only the queue (pg_mesh_queue, the one the
 * mesh's own loopback uses: pg_mesh_send to this node takes the same
 * turn of the loop, for the features that send to a node (themselves included)
 * without this layer -- names, the job's end).
 *
 * Messages from one sender reach each node in the order they were sent:
 * the mesh keeps the order of the frames between two nodes and the queue
 * is first in, first out.
 *
 * A message from another node that comes before this node's run began
 * (node 0's ranks may start, and spawn, before another node's) waits in the
 * same queue, which is drained only once the run exists: its handlers
 * need the node's jobs.
 */
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/mesh/pg_mesh_queue.h"
#include "gateway/proxy/pg_proxy_int.h"

/* The mesh registers one callback argument per type and does not pass
 * the type: each type gets its own small argument. */
typedef struct dyn_reg {
    proxy_t *p;
    unsigned type;
} dyn_reg_t;

struct proxy_dyn {
    proxy_t *p;
    proxy_msg_fn fns[PG_MESH_TYPE_MAX];
    dyn_reg_t regs[PG_MESH_TYPE_MAX];
    pg_mesh_queue_t waiting; /* this node's own messages, and others' before the run */
    struct event *drain;
};

static int queue_here(proxy_dyn_t *d, unsigned type, int src, const void *body, size_t len);

/* The node's run has not begun yet: what comes waits for it. */
static bool before_run(const proxy_t *p)
{
    return p->run == NULL && !p->ran;
}

static void on_mesh_frame(void *arg, int src, const void *body, size_t len)
{
    const dyn_reg_t *reg = arg;
    proxy_dyn_t *d = reg->p->dyn;

    if (d == NULL || d->fns[reg->type] == NULL)
        return;
    if (before_run(reg->p) || d->waiting.head != NULL) /* behind what waits already */
        (void)queue_here(d, reg->type, src, body, len);
    else
        d->fns[reg->type](reg->p, src, body, len);
}

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
    proxy_dyn_t *d = arg;
    pg_mesh_frame_t *m;

    (void)fd;
    (void)what;
    if (before_run(d->p)) /* pg_proxy_dyn_run_started drains it */
        return;
    /* one at a time: a handler may queue more, and may free nothing here */
    while ((m = pg_mesh_queue_pop(&d->waiting)) != NULL) {
        if (d->fns[m->type] != NULL)
            d->fns[m->type](d->p, m->src, m->body, m->len);
        free(m);
    }
}

int pg_proxy_dyn_setup(proxy_t *p)
{
    proxy_dyn_t *d = calloc(1, sizeof(*d));

    if (d == NULL)
        return -1;
    d->p = p;
    pg_mesh_queue_init(&d->waiting);
    d->drain = evtimer_new(p->base, on_drain, d);
    if (d->drain == NULL) {
        free(d);
        return -1;
    }
    p->dyn = d;
    return 0;
}

void pg_proxy_dyn_free(proxy_t *p)
{
    proxy_dyn_t *d = p->dyn;

    if (d == NULL)
        return;
    for (unsigned t = 0; p->mesh != NULL && t < PG_MESH_TYPE_MAX; t++)
        if (d->fns[t] != NULL)
            (void)pg_mesh_on(p->mesh, t, NULL, NULL);
    pg_mesh_queue_clear(&d->waiting);
    event_free(d->drain);
    free(d);
    p->dyn = NULL;
}

int pg_proxy_dyn_on(proxy_t *p, unsigned type, proxy_msg_fn fn)
{
    if (p->dyn == NULL || type < PG_MESH_DYN_FIRST || type >= PG_MESH_STATUS_FIRST)
        return -1;
    p->dyn->fns[type] = fn;
    p->dyn->regs[type] = (dyn_reg_t){ p, type };
    return p->mesh != NULL ? pg_mesh_on(p->mesh, type, on_mesh_frame, &p->dyn->regs[type]) : 0;
}

/* Into this node's queue, drained on the loop's next turn (once the run
 * began). */
static int queue_here(proxy_dyn_t *d, unsigned type, int src, const void *body, size_t len)
{
    static const struct timeval now = { 0, 0 };

    if (pg_mesh_queue_push(&d->waiting, type, src, body, len) != 0)
        return -1;
    return evtimer_add(d->drain, &now);
}

int pg_proxy_dyn_send(proxy_t *p, uint32_t dst, unsigned type, const pg_mesh_wr_t *b)
{
    int rc = 0;

    if (p->dyn == NULL || b->bad)
        return -1;
    if (dst == PG_MESH_ALL || dst == (uint32_t)p->nodeid)
        rc = queue_here(p->dyn, type, p->nodeid, b->buf, b->len);
    if (rc == 0 && dst != (uint32_t)p->nodeid && p->mesh != NULL)
        rc = pg_mesh_send(p->mesh, dst, type, b->buf, b->len);
    else if (dst != (uint32_t)p->nodeid && dst != PG_MESH_ALL && p->mesh == NULL)
        rc = -1; /* one node: nobody else */
    return rc;
}

void pg_proxy_dyn_run_started(proxy_t *p)
{
    static const struct timeval now = { 0, 0 };

    if (p->dyn != NULL && p->dyn->waiting.head != NULL)
        (void)evtimer_add(p->dyn->drain, &now);
}
