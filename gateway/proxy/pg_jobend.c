/*
 * pg_jobend: one end for a job over several nodes.  See pg_jobend.h.
 *
 * Frames (pg_mesh_msg's format): FAIL = u64 when_ns, u32 code, u32 flags
 * (1: an abort, 2: a node lost), u32 node (whose failure: the sender's,
 * or the lost node), text; END = u32 code, u32 origin node (UINT32_MAX:
 * none), text.  Texts are one line, raw to the body's end (no length, no
 * NUL).
 *
 * Every node, node 0 included, sends its failure to node 0 as
 * FAIL: node 0's own comes back to it from the loop like another node's
 * (pg_mesh_send to this node), one path for all.  A node lost is noticed
 * by the nodes linked with it, which send FAIL for it.
 *
 * The job's END goes to every node by flooding: each node that learns
 * the end (from node 0, or deciding alone) sends it once on every link
 * it holds.  Why not down the mesh's tree: a lost node would take the
 * END of its whole subtree with it, and those nodes know nothing of the
 * loss; the links' graph stays connected with a node gone.
 */
#include "gateway/proxy/pg_jobend.h"

#include "gateway/mesh/pg_mesh_msg.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { FLAG_ABORT = 1, FLAG_LOST = 2, NO_ORIGIN = -1 };

struct pg_jobend {
    pg_mesh_t *mesh;
    struct event_base *base;
    const char *const *names;
    int nodeid, nnodes;
    pg_jobend_end_fn end_fn;
    void *end_arg;
    bool failed_here;            /* this node's failure was reported */
    bool own_on_way;             /* node 0: its own FAIL is on the loop, not weighed yet */
    int own_code;
    /* node 0: failures weighed until the settling time is over */
    bool weighing;
    pg_jobend_failure_t first;
    struct event *settle;
    /* node 0's link lost: its word is waited for this long (another path
     * may still reach it), then this node decides alone */
    struct event *alone;
    char alone_why[PG_JOBEND_TEXT_MAX];
    /* the decision */
    int code;                    /* -1: none yet */
    struct event *wait;          /* finish's deadline */
    bool wait_over;
};

/* ---- small helpers ---- */

static uint64_t wall_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *name_of(const pg_jobend_t *e, int node)
{
    return node >= 0 && node < e->nnodes && e->names != NULL && e->names[node] != NULL
               ? e->names[node]
               : "?";
}

/* A status a failure may ask for: 1..255. */
static int status_of(int code)
{
    return code >= 1 && code <= 255 ? code : 1;
}

bool pg_jobend_before(const pg_jobend_failure_t *a, const pg_jobend_failure_t *b)
{
    const uint64_t grace = (uint64_t)PG_JOBEND_ABORT_MS * 1000000u;

    if (a->is_abort && !b->is_abort && a->when_ns >= b->when_ns && a->when_ns - b->when_ns < grace)
        return true;
    if (b->is_abort && !a->is_abort && b->when_ns >= a->when_ns && b->when_ns - a->when_ns < grace)
        return false;
    if (a->when_ns != b->when_ns)
        return a->when_ns < b->when_ns;
    return a->node < b->node;
}

/* ---- the decision ---- */

/* The job's end is known here: once, to every link (the flood: see the
 * head of this file), then to the owner. */
static void decide(pg_jobend_t *e, int code, int origin, const char *text)
{
    pg_mesh_wr_t w;

    if (e->code >= 0)
        return;
    e->code = status_of(code);
    pg_mesh_wr_init(&w);
    pg_mesh_wr_u32(&w, (uint32_t)e->code);
    pg_mesh_wr_u32(&w, origin >= 0 ? (uint32_t)origin : UINT32_MAX);
    pg_mesh_wr_raw(&w, text, strlen(text));
    if (!w.bad)
        (void)pg_mesh_send_neighbours(e->mesh, PG_MESH_JOBEND_END, w.buf, w.len);
    pg_mesh_wr_free(&w);
    if (e->end_fn != NULL)
        e->end_fn(e->end_arg, e->code, origin, text);
}

/* Node 0: the settling time is over; the first failure is the job's. */
static void on_settle(evutil_socket_t fd, short what, void *arg)
{
    pg_jobend_t *e = arg;
    const pg_jobend_failure_t *f = &e->first;

    (void)fd;
    (void)what;
    decide(e, f->code, f->node, f->text);
}

/* Node 0: a failure of node f->node into the weighing. */
static void weigh(pg_jobend_t *e, const pg_jobend_failure_t *f)
{
    struct timeval settle = { 0, PG_JOBEND_SETTLE_MS * 1000 };

    if (e->code >= 0)
        return;
    if (!e->weighing) {
        e->first = *f;
        e->weighing = true;
        if (e->nnodes == 1 || evtimer_add(e->settle, &settle) != 0)
            on_settle(-1, 0, e);
        return;
    }
    if (pg_jobend_before(f, &e->first))
        e->first = *f;
}

/* A failure record: "node N (host): text" (a lost node's text says all). */
static void failure_of(const pg_jobend_t *e, pg_jobend_failure_t *f, int node, uint64_t when,
                       int code, uint32_t flags, const char *text, size_t tlen)
{
    f->when_ns = when;
    f->node = node;
    f->code = status_of(code);
    f->is_abort = (flags & FLAG_ABORT) != 0;
    if (flags & FLAG_LOST)
        snprintf(f->text, sizeof(f->text), "%.*s", (int)tlen, text);
    else
        snprintf(f->text, sizeof(f->text), "node %d (%s): %.*s", node, name_of(e, node),
                 (int)tlen, text);
}

/* FAIL to node 0.  0, or -1 when node 0 is out of reach. */
static int send_fail(pg_jobend_t *e, uint64_t when, int code, uint32_t flags, int node,
                     const char *text)
{
    pg_mesh_wr_t w;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_u64(&w, when);
    pg_mesh_wr_u32(&w, (uint32_t)status_of(code));
    pg_mesh_wr_u32(&w, flags);
    pg_mesh_wr_u32(&w, (uint32_t)node);
    pg_mesh_wr_raw(&w, text, strlen(text));
    return pg_mesh_wr_send(&w, e->mesh, 0, PG_MESH_JOBEND_FAIL);
}

/* ---- frames ---- */

static void on_fail_frame(void *arg, int src, const void *body, size_t len)
{
    pg_jobend_t *e = arg;
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t when = pg_mesh_rd_u64(&r);
    uint32_t code = pg_mesh_rd_u32(&r);
    uint32_t flags = pg_mesh_rd_u32(&r);
    uint32_t node = pg_mesh_rd_u32(&r);
    size_t tlen;
    const char *text = pg_mesh_rd_rest(&r, &tlen);
    pg_jobend_failure_t f;

    if (e->nodeid != 0 || !pg_mesh_rd_done(&r) || node >= (uint32_t)e->nnodes ||
        ((flags & FLAG_LOST) == 0 && node != (uint32_t)src))
        return;
    if (src == e->nodeid && (flags & FLAG_LOST) == 0)
        e->own_on_way = false;
    failure_of(e, &f, (int)node, when, (int)code, flags, text, tlen);
    weigh(e, &f);
}

static void on_end_frame(void *arg, int src, const void *body, size_t len)
{
    pg_jobend_t *e = arg;
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint32_t code = pg_mesh_rd_u32(&r);
    uint32_t origin = pg_mesh_rd_u32(&r);
    size_t tlen;
    const char *rest = pg_mesh_rd_rest(&r, &tlen);
    char text[PG_JOBEND_TEXT_MAX];

    (void)src; /* flooded: any node passes it on */
    if (!pg_mesh_rd_done(&r))
        return;
    snprintf(text, sizeof(text), "%.*s", (int)tlen, tlen > 0 ? rest : "");
    decide(e, (int)code, origin < (uint32_t)e->nnodes ? (int)origin : NO_ORIGIN, text);
}

static void on_alone(evutil_socket_t fd, short what, void *arg)
{
    pg_jobend_t *e = arg;

    (void)fd;
    (void)what;
    decide(e, e->failed_here ? e->own_code : 1, 0, e->alone_why);
}

/* The mesh lost a node linked with this one, before the job's end was
 * known: the job's failure, weighed by node 0 (this node tells it, by
 * another path when node 0's link is the one lost: a link closed for a
 * forged frame leaves node 0 alive).  When node 0 does not answer
 * within PG_JOBEND_ALONE_MS, or cannot be told, this node decides alone
 * -- the other nodes linked with a dead node 0 do too -- and the END
 * floods.  A goodbye is no failure: a
 * node leaves only once it knows the end (every node done, which may
 * reach it before this node; or decided, and then its END came first on
 * the same link). */
static void on_gone(void *arg, int node, int orderly, const char *why)
{
    pg_jobend_t *e = arg;
    char text[PG_JOBEND_TEXT_MAX];
    pg_jobend_failure_t f;

    if (e->code >= 0 || orderly || pg_mesh_all_done(e->mesh))
        return;
    snprintf(text, sizeof(text), "node %d (%s) was lost: %s", node, name_of(e, node), why);
    if (e->nodeid == 0) {
        failure_of(e, &f, node, wall_ns(), 1, FLAG_LOST, text, strlen(text));
        weigh(e, &f);
        return;
    }
    if (send_fail(e, wall_ns(), 1, FLAG_LOST, node, text) != 0) {
        decide(e, e->failed_here ? e->own_code : 1, node, text);
        return;
    }
    if (node == 0 && !evtimer_pending(e->alone, NULL)) {
        struct timeval wait = { 0, PG_JOBEND_ALONE_MS * 1000 };

        snprintf(e->alone_why, sizeof(e->alone_why), "%s", text);
        if (evtimer_add(e->alone, &wait) != 0)
            on_alone(-1, 0, e);
    }
}

/* ---- the API ---- */

pg_jobend_t *pg_jobend_new(pg_mesh_t *mesh, const char *const *names, pg_jobend_end_fn fn,
                           void *arg)
{
    pg_jobend_t *e = calloc(1, sizeof(*e));

    if (e == NULL)
        return NULL;
    e->mesh = mesh;
    e->base = pg_mesh_base(mesh);
    e->names = names;
    e->nodeid = pg_mesh_nodeid(mesh);
    e->nnodes = pg_mesh_nnodes(mesh);
    e->end_fn = fn;
    e->end_arg = arg;
    e->code = -1;
    e->settle = evtimer_new(e->base, on_settle, e);
    e->alone = evtimer_new(e->base, on_alone, e);
    if (e->settle == NULL || e->alone == NULL) {
        pg_jobend_free(e);
        return NULL;
    }
    pg_mesh_on(mesh, PG_MESH_JOBEND_FAIL, on_fail_frame, e);
    pg_mesh_on(mesh, PG_MESH_JOBEND_END, on_end_frame, e);
    pg_mesh_on_gone(mesh, on_gone, e);
    return e;
}

void pg_jobend_free(pg_jobend_t *e)
{
    if (e == NULL)
        return;
    if (e->mesh != NULL) {
        pg_mesh_on(e->mesh, PG_MESH_JOBEND_FAIL, NULL, NULL);
        pg_mesh_on(e->mesh, PG_MESH_JOBEND_END, NULL, NULL);
        pg_mesh_on_gone(e->mesh, NULL, NULL);
    }
    if (e->settle != NULL)
        event_free(e->settle);
    if (e->alone != NULL)
        event_free(e->alone);
    free(e);
}

void pg_jobend_fail(pg_jobend_t *e, int code, bool is_abort, const char *text)
{
    char own[PG_JOBEND_TEXT_MAX];

    if (e->failed_here)
        return;
    e->failed_here = true;
    e->own_code = status_of(code);
    if (send_fail(e, wall_ns(), e->own_code, is_abort ? FLAG_ABORT : 0, e->nodeid, text) == 0) {
        e->own_on_way = e->nodeid == 0;
        return;
    }
    /* node 0 is out of reach: this node's failure is the job's here */
    snprintf(own, sizeof(own), "node %d (%s): %s", e->nodeid, name_of(e, e->nodeid), text);
    decide(e, e->own_code, e->nodeid, own);
}

int pg_jobend_code(const pg_jobend_t *e)
{
    return e->code;
}

static void on_wait(evutil_socket_t fd, short what, void *arg)
{
    pg_jobend_t *e = arg;

    (void)fd;
    (void)what;
    e->wait_over = true;
}

int pg_jobend_finish(pg_jobend_t *e, int status)
{
    struct timeval wait = { PG_JOBEND_WAIT_MS / 1000, (PG_JOBEND_WAIT_MS % 1000) * 1000 };
    struct event *deadline = NULL;

    if (status != 0 && !e->failed_here)
        pg_jobend_fail(e, status, false, "its job failed");
    if (status == 0 && !e->failed_here)
        pg_mesh_done(e->mesh);
    if (e->nodeid == 0) {
        while (e->code < 0 && (e->own_on_way || e->weighing || !pg_mesh_all_done(e->mesh)))
            event_base_loop(e->base, EVLOOP_ONCE);
    } else if (status == 0 && !e->failed_here) {
        /* the others' frames pass through here: stay until every node is
         * done, or the job's end is known (a node lost is noticed within
         * the mesh's timeout, and its end floods here) */
        while (e->code < 0 && !pg_mesh_all_done(e->mesh))
            event_base_loop(e->base, EVLOOP_ONCE);
    } else if (e->code < 0) {
        deadline = evtimer_new(e->base, on_wait, e);
        if (deadline != NULL && evtimer_add(deadline, &wait) == 0)
            while (e->code < 0 && !e->wait_over)
                event_base_loop(e->base, EVLOOP_ONCE);
        if (deadline != NULL)
            event_free(deadline);
    }
    (void)pg_mesh_leave(e->mesh, 1000);
    return e->code >= 0 ? e->code : status;
}
