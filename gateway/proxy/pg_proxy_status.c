/*
 * pg_proxy_status: `pmigate status` of a job over several nodes shows the
 * whole job, whichever node it is asked on (docs/proxy.md, "The
 * status of the whole job").
 *
 * Why: each node's pmigate knows only its own ranks -- which of them a
 * fence still waits for, which gets and lookups they hold -- and a user
 * looking at a stuck job wants the rank it waits for, wherever it runs.
 * So a node's status endpoint, after its own report, asks every other
 * node for theirs over the mesh and adds them in node order.  A node that
 * does not answer within STATUS_WAIT_MS is named as such: the answer never
 * waits on a lost or stuck node for long, and the endpoint drops a client
 * after PG_STATUSD_IDLE_MS anyway.
 *
 * Frames (pg_mesh_msg's format):
 *   ASK    asker -> every node  u64 id
 *   REPORT node -> asker        u64 id, bytes report (pg_run_report's text)
 */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/mesh/pg_mesh_msg.h"
#include "gateway/proxy/pg_proxy_int.h"

enum {
    STATUS_ASK = PG_MESH_STATUS_FIRST,
    STATUS_REPORT,
    STATUS_WAIT_MS = 2000,
    STATUS_TEXT_MAX = 1 << 20, /* a node's report: a line per waiting rank */
};

/* One status answer waiting for the other nodes' reports. */
typedef struct gather {
    struct gather *next;
    proxy_t *p;
    uint64_t ticket;  /* the endpoint's */
    uint64_t id;      /* the frames' */
    char **texts;     /* [nnodes], NULL until that node answered */
    size_t *lens;
    int missing;
    struct event *timer;
} gather_t;

struct proxy_status {
    gather_t *gathers;
    uint64_t ids;
};

static void gather_free(gather_t *g)
{
    for (int n = 0; g->texts != NULL && n < g->p->nnodes; n++)
        free(g->texts[n]);
    free(g->texts);
    free(g->lens);
    if (g->timer != NULL)
        event_free(g->timer);
    free(g);
}

/* The other nodes' reports (or why one is missing), into the answer. */
static void gather_finish(gather_t *g)
{
    proxy_t *p = g->p;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    for (gather_t **at = &p->status->gathers; *at != NULL; at = &(*at)->next)
        if (*at == g) {
            *at = g->next;
            break;
        }
    for (int n = 0; out != NULL && n < p->nnodes; n++) {
        if (n == p->nodeid)
            continue;
        if (g->texts[n] != NULL)
            fwrite(g->texts[n], 1, g->lens[n], out);
        else
            fprintf(out, "node %d (%s): no answer within %d ms\n", n, p->hostnames[n],
                    STATUS_WAIT_MS);
    }
    if (out != NULL && fclose(out) == 0 && p->run != NULL)
        pg_run_status_more_done(p->run, g->ticket, text, len);
    else if (p->run != NULL)
        pg_run_status_more_done(p->run, g->ticket, "", 0);
    free(text);
    gather_free(g);
}

static void on_gather_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gather_finish(arg);
}

/* The endpoint's hook (pg_run_status_more): ask every other node. */
static void gather_start(void *arg, uint64_t ticket)
{
    proxy_t *p = arg;
    struct timeval tv = { STATUS_WAIT_MS / 1000, (STATUS_WAIT_MS % 1000) * 1000 };
    gather_t *g = calloc(1, sizeof(*g));
    pg_mesh_wr_t w;

    if (g == NULL) {
        pg_run_status_more_done(p->run, ticket, "", 0);
        return;
    }
    *g = (gather_t){ .p = p, .ticket = ticket, .id = ++p->status->ids, .missing = p->nnodes - 1 };
    g->texts = calloc((size_t)p->nnodes, sizeof(*g->texts));
    g->lens = calloc((size_t)p->nnodes, sizeof(*g->lens));
    g->timer = evtimer_new(p->base, on_gather_timeout, g);
    g->next = p->status->gathers;
    p->status->gathers = g;
    if (g->texts == NULL || g->lens == NULL || g->timer == NULL ||
        evtimer_add(g->timer, &tv) != 0) {
        gather_finish(g);
        return;
    }
    pg_mesh_wr_init(&w);
    pg_mesh_wr_u64(&w, g->id);
    if (pg_mesh_wr_send(&w, p->mesh, PG_MESH_ALL, STATUS_ASK) != 0)
        gather_finish(g); /* every other node is named as silent */
}

/* Another node asks: this node's report, back to it. */
static void on_ask(void *arg, int src, const void *body, size_t len)
{
    proxy_t *p = arg;
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t id = pg_mesh_rd_u64(&r);
    char *text = NULL;
    size_t tlen = 0;
    FILE *out;
    pg_mesh_wr_t w;

    if (!pg_mesh_rd_done(&r) || (out = open_memstream(&text, &tlen)) == NULL)
        return;
    if (p->run != NULL)
        pg_run_report(p->run, out);
    else
        fprintf(out, "node %d (%s): its job is not running\n", p->nodeid,
                p->hostnames[p->nodeid]);
    if (fclose(out) == 0) {
        pg_mesh_wr_init(&w);
        pg_mesh_wr_u64(&w, id);
        pg_mesh_wr_bytes(&w, text, tlen < STATUS_TEXT_MAX ? tlen : STATUS_TEXT_MAX);
        (void)pg_mesh_wr_send(&w, p->mesh, (uint32_t)src, STATUS_REPORT);
    }
    free(text);
}

/* A node's report for one of this node's answers. */
static void on_report(void *arg, int src, const void *body, size_t len)
{
    proxy_t *p = arg;
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t id = pg_mesh_rd_u64(&r);
    size_t tlen;
    const void *text = pg_mesh_rd_bytes(&r, &tlen);
    gather_t *g = p->status->gathers;

    while (g != NULL && g->id != id)
        g = g->next;
    if (!pg_mesh_rd_done(&r) || g == NULL || src < 0 || src >= p->nnodes || src == p->nodeid ||
        g->texts[src] != NULL || (g->texts[src] = malloc(tlen > 0 ? tlen : 1)) == NULL)
        return;
    if (tlen > 0)
        memcpy(g->texts[src], text, tlen);
    g->lens[src] = tlen;
    if (--g->missing == 0)
        gather_finish(g);
}

int pg_proxy_status_setup(proxy_t *p)
{
    if (p->mesh == NULL)
        return 0;
    p->status = calloc(1, sizeof(*p->status));
    if (p->status == NULL || pg_mesh_on(p->mesh, STATUS_ASK, on_ask, p) != 0 ||
        pg_mesh_on(p->mesh, STATUS_REPORT, on_report, p) != 0)
        return -1;
    return 0;
}

void pg_proxy_status_attach(proxy_t *p)
{
    if (p->status != NULL && p->run != NULL)
        pg_run_status_more(p->run, gather_start, p);
}

void pg_proxy_status_free(proxy_t *p)
{
    if (p->status == NULL)
        return;
    while (p->status->gathers != NULL) {
        gather_t *g = p->status->gathers;

        p->status->gathers = g->next;
        gather_free(g);
    }
    free(p->status);
    p->status = NULL;
}
