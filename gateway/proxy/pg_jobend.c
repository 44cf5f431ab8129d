/*
 * pg_jobend: one end for a job over several nodes.  See pg_jobend.h.
 *
 * Frames (pg_mesh_msg's format): FAIL = u64 when_ns, u32 code, u32 flags
 * (1: an abort), text; END = u32 code, u32 origin node (UINT32_MAX: none),
 * text.  Texts are one line, raw to the body's end (no length, no NUL).
 *
 * Every node, the hub included, sends its failure to the hub (node 0) as
 * FAIL: the hub's own comes back to it from the loop like a leaf's
 * (pg_mesh_send to this node), one path for all.
 */
#include "gateway/proxy/pg_jobend.h"

#include "gateway/mesh/pg_mesh_msg.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { FLAG_ABORT = 1, NO_ORIGIN = -1 };

struct pg_jobend {
    pg_mesh_t *mesh;
    struct event_base *base;
    const char *const *names;
    int nodeid, nnodes;
    pg_jobend_end_fn end_fn;
    void *end_arg;
    bool failed_here;            /* this node's failure was reported */
    bool own_on_way;             /* the hub: its own FAIL is on the loop, not weighed yet */
    int own_code;
    /* the hub: failures weighed until the settling time is over */
    bool weighing;
    pg_jobend_failure_t first;
    struct event *settle;
    bool *done;                  /* [nnodes] leaves done (goodbye) or gone */
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

/* The job's end is known here: once, to the owner. */
static void decide(pg_jobend_t *e, int code, int origin, const char *text)
{
    if (e->code >= 0)
        return;
    e->code = status_of(code);
    if (e->end_fn != NULL)
        e->end_fn(e->end_arg, e->code, origin, text);
}

/* The hub: the settling time is over; the first failure is the job's. */
static void on_settle(evutil_socket_t fd, short what, void *arg)
{
    pg_jobend_t *e = arg;
    const pg_jobend_failure_t *f = &e->first;
    pg_mesh_wr_t w;

    (void)fd;
    (void)what;
    pg_mesh_wr_init(&w);
    pg_mesh_wr_u32(&w, (uint32_t)status_of(f->code));
    pg_mesh_wr_u32(&w, (uint32_t)f->node);
    pg_mesh_wr_raw(&w, f->text, strlen(f->text));
    (void)pg_mesh_wr_send(&w, e->mesh, PG_MESH_ALL, PG_MESH_JOBEND_END);
    decide(e, f->code, f->node, f->text);
}

/* The hub: a failure of node f->node into the weighing. */
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

/* A failure record: "node N (host): text". */
static void failure_of(const pg_jobend_t *e, pg_jobend_failure_t *f, int node, uint64_t when,
                       int code, bool is_abort, const char *text, size_t tlen)
{
    f->when_ns = when;
    f->node = node;
    f->code = status_of(code);
    f->is_abort = is_abort;
    snprintf(f->text, sizeof(f->text), "node %d (%s): %.*s", node, name_of(e, node), (int)tlen,
             text);
}

/* ---- frames ---- */

static void on_fail_frame(void *arg, int src, const void *body, size_t len)
{
    pg_jobend_t *e = arg;
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t when = pg_mesh_rd_u64(&r);
    uint32_t code = pg_mesh_rd_u32(&r);
    uint32_t flags = pg_mesh_rd_u32(&r);
    size_t tlen;
    const char *text = pg_mesh_rd_rest(&r, &tlen);
    pg_jobend_failure_t f;

    if (e->nodeid != 0 || !pg_mesh_rd_done(&r))
        return;
    if (src == e->nodeid)
        e->own_on_way = false;
    failure_of(e, &f, src, when, (int)code, (flags & FLAG_ABORT) != 0, text, tlen);
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

    if (src != 0 || !pg_mesh_rd_done(&r))
        return;
    snprintf(text, sizeof(text), "%.*s", (int)tlen, tlen > 0 ? rest : "");
    decide(e, (int)code, origin < (uint32_t)e->nnodes ? (int)origin : NO_ORIGIN, text);
}

/* The mesh lost a node: on the hub, a leaf gone without a goodbye is the
 * job's failure; on a leaf, the hub gone undecided leaves it to decide
 * alone. */
static void on_gone(void *arg, int node, int orderly, const char *why)
{
    pg_jobend_t *e = arg;
    char text[PG_JOBEND_TEXT_MAX];
    pg_jobend_failure_t f;

    if (e->nodeid == 0) {
        e->done[node] = true;
        if (orderly)
            return;
        failure_of(e, &f, node, wall_ns(), 1, false, "", 0);
        snprintf(f.text, sizeof(f.text), "node %d (%s) was lost: %s", node, name_of(e, node),
                 why);
        weigh(e, &f);
        return;
    }
    if (node != 0 || e->code >= 0)
        return;
    snprintf(text, sizeof(text), "node 0 (%s) %s: %s", name_of(e, 0),
             orderly ? "left before the job's end was known" : "was lost", why);
    decide(e, e->failed_here ? e->own_code : 1, 0, text);
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
    e->done = calloc((size_t)e->nnodes, sizeof(*e->done));
    e->settle = evtimer_new(e->base, on_settle, e);
    if (e->done == NULL || e->settle == NULL) {
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
    free(e->done);
    free(e);
}

void pg_jobend_fail(pg_jobend_t *e, int code, bool is_abort, const char *text)
{
    char own[PG_JOBEND_TEXT_MAX];
    pg_mesh_wr_t w;

    if (e->failed_here)
        return;
    e->failed_here = true;
    e->own_code = status_of(code);
    pg_mesh_wr_init(&w);
    pg_mesh_wr_u64(&w, wall_ns());
    pg_mesh_wr_u32(&w, (uint32_t)e->own_code);
    pg_mesh_wr_u32(&w, is_abort ? FLAG_ABORT : 0);
    pg_mesh_wr_raw(&w, text, strlen(text));
    if (pg_mesh_wr_send(&w, e->mesh, 0, PG_MESH_JOBEND_FAIL) == 0) {
        e->own_on_way = e->nodeid == 0;
        return;
    }
    /* the hub is out of reach: this node's failure is the job's here */
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

/* Has the hub heard the last of every leaf? */
static bool leaves_done(const pg_jobend_t *e)
{
    for (int n = 1; n < e->nnodes; n++)
        if (!e->done[n])
            return false;
    return true;
}

int pg_jobend_finish(pg_jobend_t *e, int status)
{
    struct timeval wait = { PG_JOBEND_WAIT_MS / 1000, (PG_JOBEND_WAIT_MS % 1000) * 1000 };
    struct event *deadline = NULL;

    if (status != 0 && !e->failed_here)
        pg_jobend_fail(e, status, false, "its job failed");
    if (e->nodeid == 0) {
        while (e->code < 0 && (e->own_on_way || e->weighing || !leaves_done(e)))
            event_base_loop(e->base, EVLOOP_ONCE);
    } else if (status != 0 && e->code < 0) {
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
