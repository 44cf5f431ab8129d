/*
 * pg_jobend: one end for a job over several nodes.  See pg_jobend.h.
 *
 * Frames (bodies big-endian): FAIL = u64 when_ns, u32 code, u32 flags (1:
 * an abort), text; END = u32 code, u32 origin node (UINT32_MAX: none),
 * text.  Texts are one line, not NUL-terminated on the wire.
 */
#include "gateway/proxy/pg_jobend.h"

#include "gateway/util/pg_be.h"

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
    size_t tlen = strlen(f->text);
    unsigned char *body = malloc(8 + tlen);

    (void)fd;
    (void)what;
    if (body != NULL) {
        pg_be32_put(body, (uint32_t)status_of(f->code));
        pg_be32_put(body + 4, (uint32_t)f->node);
        memcpy(body + 8, f->text, tlen);
        (void)pg_mesh_send(e->mesh, PG_MESH_ALL, PG_MESH_JOBEND_END, body, 8 + tlen);
        free(body);
    }
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
    const unsigned char *b = body;
    pg_jobend_failure_t f;
    uint64_t when;

    if (e->nodeid != 0 || len < 16)
        return;
    when = pg_be64_get(b);
    failure_of(e, &f, src, when, (int)pg_be32_get(b + 8), (pg_be32_get(b + 12) & FLAG_ABORT) != 0,
               (const char *)b + 16, len - 16);
    weigh(e, &f);
}

static void on_end_frame(void *arg, int src, const void *body, size_t len)
{
    pg_jobend_t *e = arg;
    const unsigned char *b = body;
    char text[PG_JOBEND_TEXT_MAX];
    uint32_t origin;

    if (src != 0 || len < 8)
        return;
    origin = pg_be32_get(b + 4);
    snprintf(text, sizeof(text), "%.*s", (int)(len - 8), (const char *)b + 8);
    decide(e, (int)pg_be32_get(b), origin < (uint32_t)e->nnodes ? (int)origin : NO_ORIGIN, text);
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
    uint64_t when = wall_ns();
    size_t tlen = strlen(text);
    unsigned char *body;

    if (e->failed_here)
        return;
    e->failed_here = true;
    e->own_code = status_of(code);
    if (e->nodeid == 0) {
        pg_jobend_failure_t f;

        failure_of(e, &f, 0, when, code, is_abort, text, tlen);
        weigh(e, &f);
        return;
    }
    body = malloc(16 + tlen);
    if (body != NULL) {
        pg_be64_put(body, when);
        pg_be32_put(body + 8, (uint32_t)e->own_code);
        pg_be32_put(body + 12, is_abort ? FLAG_ABORT : 0);
        memcpy(body + 16, text, tlen);
    }
    if (body == NULL || pg_mesh_send(e->mesh, 0, PG_MESH_JOBEND_FAIL, body, 16 + tlen) != 0) {
        char own[PG_JOBEND_TEXT_MAX];

        /* the hub is out of reach: this node's failure is the job's here */
        snprintf(own, sizeof(own), "node %d (%s): %s", e->nodeid, name_of(e, e->nodeid), text);
        decide(e, e->own_code, e->nodeid, own);
    }
    free(body);
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
        while (e->code < 0 && (e->weighing || !leaves_done(e)))
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
