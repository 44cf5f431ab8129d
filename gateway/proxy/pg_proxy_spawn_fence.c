/*
 * pg_proxy_spawn_fence: the whole-job fences of a job spawned over several
 * nodes (`pmigate proxy`, gateway/proxy/pg_proxy_spawn.c).
 *
 * Each node's engine hands this node's part of the fence (its ranks'
 * committed keys, when the fence collects) to node 0, which
 * waits for the part of every node where the job has ranks still running
 * and sends every node all the parts (FENCED).  The nodes with ranks in
 * the fence answer them; the others take the keys in all the same, so a
 * get from another job (after connect) finds them on any node.
 *
 * Why not through the host runtime, as the root job's fences go: the host
 * fences its clients -- the proxies -- in the order each proxy asks, and
 * cannot tell which of pmigate's jobs a fence is for; two jobs fencing at
 * once over the same proxies could be matched across.
 *
 * This file is the lower of spawn's two: pg_proxy_spawn.c calls it (the
 * fence hook it installs, node 0's handlers, a node's end), and it calls
 * nothing there -- the lookups of spawned jobs both need live here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/job/pg_job_engine.h"
#include "gateway/proxy/pg_proxy_spawn_int.h"

/* room a fence's gathered answer keeps for its own fields */
enum { FENCED_OVERHEAD = 64 * 1024 };

/* ---- the spawned jobs, as both files of spawn look them up ---- */

xjob_t *pg_proxy_spawn_xjob_find(proxy_spawn_t *s, int jobno)
{
    for (xjob_t *x = s->xjobs; x != NULL; x = x->next)
        if (x->jobno == jobno)
            return x;
    return NULL;
}

hjob_t *pg_proxy_spawn_hjob_find(proxy_spawn_t *s, int jobno)
{
    for (hjob_t *h = s->hjobs; h != NULL; h = h->next)
        if (h->jobno == jobno)
            return h;
    return NULL;
}

int pg_proxy_spawn_node_of(const proxy_t *p, const char *nspace, uint32_t rank)
{
    const xjob_t *x = NULL;
    uint32_t first = 0;

    for (x = p->spawn != NULL ? p->spawn->xjobs : NULL; x != NULL; x = x->next)
        if (strcmp(x->kvsname, nspace) == 0)
            break;
    for (int n = 0; x != NULL && n < p->nnodes; n++) {
        if (rank - first < (uint32_t)x->counts[n])
            return n;
        first += (uint32_t)x->counts[n];
    }
    return -1;
}

void pg_proxy_spawn_log_node(const proxy_t *p, const char *fmt, const char *text)
{
    if (p->run != NULL)
        pg_run_log(p->run, fmt, text);
    else
        fprintf(stderr, "pmigate: node %d: %s\n", p->nodeid, text);
}

/* ---- fences ---- */

/* Spawned job x's cross-node fence hook (pg_job_engine_xfence_fn; the
 * glue hands it only the job's whole-job fences): this node's part to
 * node 0; the answer (on_fenced) completes it. */
void pg_proxy_spawn_xjob_fence(void *ctx, const pg_job_engine_xfence_t *f)
{
    xjob_t *x = ctx;
    pg_mesh_wr_t b = { 0 };

    x->je = f->je;
    x->fence_id = f->id;
    pg_mesh_wr_u32(&b, (uint32_t)x->jobno);
    pg_mesh_wr_u64(&b, x->fences + 1);
    pg_mesh_wr_bytes(&b, f->part, f->part_size);
    if (pg_proxy_dyn_send(x->p, 0, PG_MESH_SPAWN_FENCE, &b) != 0) {
        x->fence_id = 0;
        pg_job_engine_xfence_done(f->je, f->id, -1, NULL, NULL);
    }
    pg_mesh_wr_free(&b);
}

/* FENCED to every running node: the parts (status 0), or why not. */
static void coord_fenced(proxy_t *p, gather_t *g, int status, const char *why)
{
    pg_mesh_wr_t b = { 0 };
    size_t total = 0;

    for (int n = 0; n < p->nnodes; n++)
        total += g->lens[n];
    if (status == 0 && total > PG_MESH_BODY_MAX - FENCED_OVERHEAD) {
        status = -2;
        why = "the spawned job's fence data is more than the proxies' channel carries in one "
              "fence (16 MiB)";
    }
    pg_mesh_wr_u32(&b, (uint32_t)g->jobno);
    pg_mesh_wr_u64(&b, g->seq);
    pg_mesh_wr_i32(&b, status);
    pg_mesh_wr_nstr(&b, why);
    pg_mesh_wr_u32(&b, (uint32_t)p->nnodes);
    for (int n = 0; n < p->nnodes; n++)
        pg_mesh_wr_bytes(&b, status == 0 ? g->blobs[n] : NULL, status == 0 ? g->lens[n] : 0);
    (void)pg_proxy_dyn_send(p, PG_MESH_ALL, PG_MESH_SPAWN_FENCED, &b);
    pg_mesh_wr_free(&b);
}

static void gather_free(const proxy_t *p, gather_t *g)
{
    for (int n = 0; g->blobs != NULL && n < p->nnodes; n++)
        free(g->blobs[n]);
    free(g->blobs);
    free(g->lens);
    free(g->got);
    free(g);
}

static gather_t *gather_get(proxy_t *p, const hjob_t *h, uint64_t seq)
{
    proxy_spawn_t *s = p->spawn;
    gather_t *g;
    size_t nn = (size_t)p->nnodes;

    for (g = s->gathers; g != NULL; g = g->next)
        if (g->jobno == h->jobno && g->seq == seq)
            return g;
    if ((g = calloc(1, sizeof(*g))) == NULL)
        return NULL;
    g->got = calloc(nn, 1);
    g->blobs = calloc(nn, sizeof(*g->blobs));
    g->lens = calloc(nn, sizeof(*g->lens));
    if (g->got == NULL || g->blobs == NULL || g->lens == NULL) {
        gather_free(p, g);
        return NULL;
    }
    g->jobno = h->jobno;
    g->seq = seq;
    for (int n = 0; n < p->nnodes; n++)
        g->nwait += h->counts[n] > 0 && !h->ended[n];
    g->next = s->gathers;
    s->gathers = g;
    return g;
}

static void gather_drop(proxy_t *p, gather_t *g)
{
    for (gather_t **at = &p->spawn->gathers; *at != NULL; at = &(*at)->next)
        if (*at == g) {
            *at = g->next;
            break;
        }
    gather_free(p, g);
}

static void on_fence(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    int jobno = (int)pg_mesh_rd_u32(&r);
    uint64_t seq = pg_mesh_rd_u64(&r);
    size_t size;
    const void *data = pg_mesh_rd_bytes(&r, &size);
    hjob_t *h = pg_proxy_spawn_hjob_find(p->spawn, jobno);
    gather_t *g;

    if (p->nodeid != 0 || r.bad || h == NULL || h->counts[src] == 0 ||
        (g = gather_get(p, h, seq)) == NULL || g->got[src])
        return;
    g->got[src] = 1;
    g->nwait--;
    if (size > 0 && (g->blobs[src] = malloc(size)) != NULL) {
        memcpy(g->blobs[src], data, size);
        g->lens[src] = size;
    } else if (size > 0) {
        coord_fenced(p, g, -1, "out of memory");
        gather_drop(p, g);
        return;
    }
    if (g->nwait <= 0) {
        coord_fenced(p, g, 0, NULL);
        gather_drop(p, g);
    }
}

static void on_fenced(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    int jobno = (int)pg_mesh_rd_u32(&r);
    uint64_t seq = pg_mesh_rd_u64(&r);
    int status = pg_mesh_rd_i32(&r);
    char *why = pg_mesh_rd_nstr(&r);
    uint32_t nnodes = pg_mesh_rd_count(&r, 4);
    xjob_t *x = pg_proxy_spawn_xjob_find(p->spawn, jobno);
    void **blobs = calloc(nnodes > 0 ? nnodes : 1, sizeof(*blobs));
    size_t *lens = calloc(nnodes > 0 ? nnodes : 1, sizeof(*lens));

    for (uint32_t n = 0; blobs != NULL && lens != NULL && n < nnodes; n++)
        blobs[n] = (void *)pg_mesh_rd_bytes(&r, &lens[n]);
    if (src != 0 || r.bad || x == NULL || nnodes != (uint32_t)p->nnodes || blobs == NULL ||
        lens == NULL || p->run == NULL)
        goto out;
    if (x->fence_id != 0 && seq == x->fences + 1) { /* this node's ranks wait for it */
        uint64_t id = x->fence_id;

        x->fence_id = 0;
        x->fences++;
        pg_job_engine_xfence_done(x->je, id, status == 0 ? 0 : -1, blobs, lens);
        if (status == -2) /* the job cannot go on: like the root's host limit */
            pg_proxy_fail(p, PG_EXIT_INTERNAL, why);
    } else if (status == 0 && x->job != NULL) { /* its keys, readable here too */
        if (pg_job_engine_ingest(pg_job_engine(x->job), blobs, lens) != 0)
            pg_proxy_spawn_log_node(p, "%s", "a spawned job's fence data from another node does not unpack");
    }
out:
    free(blobs);
    free(lens);
    free(why);
}

/* Node n's ranks are all gone: a fence waiting for its members of a
 * spawned job fails (they ended without joining it). */
void pg_proxy_spawn_fence_node_done(proxy_t *p, int n)
{
    for (gather_t *g = p->spawn->gathers, *next; g != NULL; g = next) {
        hjob_t *h = pg_proxy_spawn_hjob_find(p->spawn, g->jobno);

        next = g->next;
        if (h != NULL && h->counts[n] > 0 && !g->got[n]) {
            coord_fenced(p, g, -1, "members of the spawned job's fence ended without joining it");
            gather_drop(p, g);
        }
    }
}

int pg_proxy_spawn_fence_setup(proxy_t *p)
{
    return pg_proxy_dyn_on(p, PG_MESH_SPAWN_FENCE, on_fence) == 0 &&
                   pg_proxy_dyn_on(p, PG_MESH_SPAWN_FENCED, on_fenced) == 0
               ? 0
               : -1;
}

void pg_proxy_spawn_fence_free(proxy_t *p)
{
    while (p->spawn->gathers != NULL)
        gather_drop(p, p->spawn->gathers);
}
