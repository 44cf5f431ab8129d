/*
 * pg_proxy_spawn: spawn from a rank of a job over several nodes (`pmigate
 * proxy`): PMI-1 mcmd=spawn, PMI-2 spawn and PMIx_Spawn, as on one node
 * (docs/user-guide.md, "Spawning jobs"), the children placed over the
 * job's nodes and started by the proxies already running there -- neither
 * host runtime here offers a spawn a proxy could use.
 *
 * Who does what (docs/proxy.md, "Spawn across nodes"):
 *  - the requesting node checks the request as one node would (programs,
 *    working directories, info keys: pg_spawn.c) and sends it to node 0;
 *  - node 0 counts it against --max-procs for the whole job, places the
 *    children (blocks over the running nodes, as -n spreads the root job,
 *    the least loaded nodes taking the odd ones; host= limits the nodes),
 *    numbers and names the job, and sends START to every running node;
 *  - every node builds its share from the same request (pg_spawn_share) --
 *    the job's namespace, preput keys and layout, and its ranks there --
 *    and reports how its share started;
 *  - once every node reported, node 0 answers the requester (the jobid,
 *    or the errcodes: a share that could not start takes the whole spawn
 *    back, every node kills what it started, as on one node).
 * Afterwards the spawned job lives on its nodes like the root: its
 * whole-job fences go through node 0 (every node's part gathered, then
 * handed to every node, so its keys are readable anywhere: connect, get),
 * its failures end the whole job through pg_jobend, and when every node's
 * share has ended node 0 tells every node, which raises
 * PMIX_EVENT_JOB_END to its own processes of the spawner's job when the
 * spawn asked for it.  Its fences: pg_proxy_spawn_fence.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/job/pg_job_engine.h"
#include "gateway/proxy/pg_proxy_spawn_int.h"
#include "gateway/run/pg_spawn.h"
#include "gateway/proxy/pg_spawn_wire.h"
#include "engine/pg_engine.h"

/* ---------------------------------------------------------------- */
/* small helpers                                                      */
/* ---------------------------------------------------------------- */

static void hjob_free(hjob_t *h)
{
    free(h->counts);
    free(h->errcodes);
    free(h->asked);
    free(h->ended);
    free(h);
}

static void xjob_free(xjob_t *x)
{
    free(x->counts);
    free(x);
}

/* The first of this node's ranks of a job laid out as counts says. */
static int first_rank(const int *counts, int nodeid)
{
    int first = 0;

    for (int n = 0; n < nodeid; n++)
        first += counts[n];
    return first;
}

/* ---------------------------------------------------------------- */
/* the requesting node                                                */
/* ---------------------------------------------------------------- */

static void answer(pending_t *pd, int rc, const char *errmsg, const char *jobid,
                   const int *errcodes)
{
    pg_spawn_result_t res = { .rc = rc, .errmsg = rc != 0 ? errmsg : NULL,
                              .jobid = rc == 0 ? jobid : NULL, .nprocs = pd->nprocs,
                              .errcodes = errcodes };

    pd->done(&res, pd->cbdata);
    free(pd);
}

/* A failed spawn's errcodes when nothing else is known: `err` for each. */
static void answer_failed(pending_t *pd, int rc, const char *errmsg, int err)
{
    int *codes = calloc(pd->nprocs > 0 ? (size_t)pd->nprocs : 1, sizeof(*codes));

    for (int i = 0; codes != NULL && i < pd->nprocs; i++)
        codes[i] = err;
    answer(pd, rc, errmsg, NULL, codes);
    free(codes);
}

void pg_proxy_spawn_request(void *ctx, pg_job_t *parent, int rank, const pg_spawn_req_t *req,
                         const unsigned char *on_nodes, pg_spawn_done_fn done, void *cbdata)
{
    proxy_t *p = ctx;
    proxy_spawn_t *s = p->spawn;
    pending_t *pd = calloc(1, sizeof(*pd));
    pg_mesh_wr_t b = { 0 };

    if (pd == NULL) {
        pg_spawn_result_t res = { .rc = PMIX_ERR_NOMEM, .errmsg = "out of memory" };

        done(&res, cbdata);
        return;
    }
    *pd = (pending_t){ .id = ++s->next_req, .done = done, .cbdata = cbdata };
    for (int i = 0; i < req->ncmds; i++)
        pd->nprocs += req->cmds[i].maxprocs;
    pg_mesh_wr_u32(&b, pd->id);
    pg_mesh_wr_nstr(&b, pg_job_kvsname(parent));
    pg_mesh_wr_i32(&b, rank);
    pg_mesh_wr_bytes(&b, on_nodes, on_nodes != NULL ? (size_t)p->nnodes : 0);
    pg_spawn_wire_pack(&b, req);
    if (pg_proxy_dyn_send(p, 0, PG_MESH_SPAWN_REQ, &b) != 0) {
        answer_failed(pd, PMIX_ERR_UNREACH, "node 0 cannot be reached",
                      ECANCELED);
    } else {
        pd->next = s->pending;
        s->pending = pd;
    }
    pg_mesh_wr_free(&b);
}

static pending_t *pending_take(proxy_spawn_t *s, uint32_t id)
{
    for (pending_t **at = &s->pending; *at != NULL; at = &(*at)->next) {
        pending_t *pd = *at;

        if (pd->id == id) {
            *at = pd->next;
            return pd;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- */
/* node 0: placing, counting, settling                               */
/* ---------------------------------------------------------------- */

/* Node 0's answer to a spawn it refuses before placing it. */
static void coord_refuse(proxy_t *p, uint32_t requester, uint32_t reqid, int rc, int nprocs,
                       int err, const char *errmsg)
{
    pg_mesh_wr_t b = { 0 };

    pg_mesh_wr_u32(&b, 0);
    pg_mesh_wr_u32(&b, requester);
    pg_mesh_wr_u32(&b, reqid);
    pg_mesh_wr_i32(&b, rc);
    pg_mesh_wr_nstr(&b, errmsg);
    pg_mesh_wr_nstr(&b, NULL);
    pg_mesh_wr_u32(&b, (uint32_t)nprocs);
    for (int i = 0; i < nprocs; i++)
        pg_mesh_wr_i32(&b, err);
    (void)pg_proxy_dyn_send(p, requester, PG_MESH_SPAWN_SETTLED, &b);
    pg_mesh_wr_free(&b);
}

/* The children over the running nodes `allowed` (NULL: all) lets: each
 * gets total / k, and the total % k left over go one each to the least
 * loaded (ties: the lower node).  0, or -1 when no node may take them. */
static int place(proxy_spawn_t *s, int total, const unsigned char *allowed, int *counts)
{
    int nnodes = s->p->nnodes, k = 0;
    unsigned char *taken;

    for (int n = 0; n < nnodes; n++)
        k += s->running[n] && (allowed == NULL || allowed[n]);
    if (k == 0 || (taken = calloc((size_t)nnodes, 1)) == NULL)
        return -1;
    for (int n = 0; n < nnodes; n++)
        counts[n] = s->running[n] && (allowed == NULL || allowed[n]) ? total / k : 0;
    for (int extra = total % k; extra > 0; extra--) {
        int best = -1;

        for (int n = 0; n < nnodes; n++)
            if (s->running[n] && (allowed == NULL || allowed[n]) && !taken[n] &&
                (best < 0 || s->load[n] < s->load[best]))
                best = n;
        taken[best] = 1;
        counts[best]++;
    }
    free(taken);
    return 0;
}

static hjob_t *hjob_new(proxy_spawn_t *s, int nprocs)
{
    size_t nn = (size_t)s->p->nnodes;
    hjob_t *h = calloc(1, sizeof(*h));

    if (h == NULL)
        return NULL;
    h->counts = calloc(nn, sizeof(*h->counts));
    h->errcodes = calloc(nprocs > 0 ? (size_t)nprocs : 1, sizeof(*h->errcodes));
    h->asked = calloc(nn, 1);
    h->ended = calloc(nn, 1);
    if (h->counts == NULL || h->errcodes == NULL || h->asked == NULL || h->ended == NULL) {
        hjob_free(h);
        return NULL;
    }
    h->nprocs = nprocs;
    h->failed_rank = -1;
    return h;
}

/* START to every running node: the job, its layout, the request. */
static int coord_start(proxy_t *p, hjob_t *h, const char *parent, int parent_rank,
                     const pg_spawn_req_t *req)
{
    proxy_spawn_t *s = p->spawn;
    pg_mesh_wr_t b = { 0 };
    int rc = 0;

    pg_mesh_wr_u32(&b, (uint32_t)h->jobno);
    pg_mesh_wr_nstr(&b, h->kvsname);
    pg_mesh_wr_u32(&b, h->requester);
    pg_mesh_wr_u32(&b, h->reqid);
    pg_mesh_wr_nstr(&b, parent);
    pg_mesh_wr_i32(&b, parent_rank);
    pg_mesh_wr_u32(&b, (uint32_t)p->nnodes);
    for (int n = 0; n < p->nnodes; n++)
        pg_mesh_wr_u32(&b, (uint32_t)h->counts[n]);
    pg_spawn_wire_pack(&b, req);
    for (int n = 0; n < p->nnodes; n++) {
        if (!s->running[n])
            continue;
        if (pg_proxy_dyn_send(p, (uint32_t)n, PG_MESH_SPAWN_START, &b) == 0) {
            h->asked[n] = 1;
            h->nasked++;
            s->starts_sent[n]++;
        } else if (h->counts[n] > 0) {
            rc = -1;
        }
    }
    pg_mesh_wr_free(&b);
    return rc;
}

static void coord_settle(proxy_t *p, hjob_t *h);

static void on_req(proxy_t *p, int src, const void *body, size_t len)
{
    proxy_spawn_t *s = p->spawn;
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint32_t reqid = pg_mesh_rd_u32(&r);
    char *parent = pg_mesh_rd_nstr(&r), errmsg[ERRMSG_MAX];
    int parent_rank = pg_mesh_rd_i32(&r);
    size_t masklen;
    const unsigned char *mask = pg_mesh_rd_bytes(&r, &masklen);
    pg_spawn_wire_t w;
    hjob_t *h = NULL;

    if (p->nodeid != 0 || r.bad || parent == NULL ||
        (masklen != 0 && masklen != (size_t)p->nnodes) || pg_spawn_wire_unpack(&r, &w) != 0) {
        pg_proxy_spawn_log_node(p, "%s", "a spawn request from another node could not be read: refused");
        coord_refuse(p, (uint32_t)src, reqid, PMIX_ERR_BAD_PARAM, 0, 0, "unreadable request");
        goto out_parent;
    }
    if (w.total > s->cap - s->spawned) {
        snprintf(errmsg, sizeof(errmsg),
                 "spawning %d process%s would exceed --max-procs %d (%d spawned so far)", w.total,
                 w.total == 1 ? "" : "es", s->cap, s->spawned);
        coord_refuse(p, (uint32_t)src, reqid, PMIX_ERR_OUT_OF_RESOURCE, w.total, EAGAIN, errmsg);
        goto out;
    }
    if ((h = hjob_new(s, w.total)) == NULL) {
        coord_refuse(p, (uint32_t)src, reqid, PMIX_ERR_NOMEM, w.total, ECANCELED, "out of memory");
        goto out;
    }
    if (place(s, w.total, masklen != 0 ? mask : NULL, h->counts) != 0) {
        coord_refuse(p, (uint32_t)src, reqid, PMIX_ERR_OUT_OF_RESOURCE, w.total, EHOSTUNREACH,
                   "no node of the job that the spawn may use runs ranks any more");
        hjob_free(h);
        goto out;
    }
    h->jobno = ++s->next_jobno;
    snprintf(h->kvsname, sizeof(h->kvsname), "kvs_%ld_%d", s->pid0, h->jobno);
    h->requester = (uint32_t)src;
    h->reqid = reqid;
    h->notify_end = w.req.notify_end;
    h->silent_ok = w.req.end_silent_ok;
    s->spawned += w.total;
    for (int n = 0; n < p->nnodes; n++)
        s->load[n] += h->counts[n];
    h->next = s->hjobs;
    s->hjobs = h;
    if (coord_start(p, h, parent, parent_rank, &w.req) != 0) {
        h->failed = true;
        snprintf(h->errmsg, sizeof(h->errmsg), "a node of the job cannot be reached");
    }
    if (h->nasked == 0) /* nobody to wait for */
        coord_settle(p, h);
out:
    pg_spawn_wire_free(&w);
out_parent:
    free(parent);
}

static void coord_job_over(proxy_t *p, hjob_t *h);

static bool hjob_all_ended(const proxy_t *p, const hjob_t *h)
{
    for (int n = 0; n < p->nnodes; n++)
        if (h->counts[n] > 0 && !h->ended[n])
            return false;
    return true;
}

/* Every asked node answered: the requester learns the outcome; a failed
 * spawn goes back everywhere (started processes are killed there, their
 * exits decide nothing) and counts only the processes that started. */
static void coord_settle(proxy_t *p, hjob_t *h)
{
    proxy_spawn_t *s = p->spawn;
    pg_mesh_wr_t b = { 0 };
    int rc = h->failed ? (h->exec_failed ? PMIX_ERR_NOT_FOUND : PMIX_ERROR) : PMIX_SUCCESS;

    h->settled = true;
    if (h->failed) {
        s->spawned -= h->nprocs - h->started;
        for (int n = 0; n < p->nnodes; n++) {
            if (!h->ended[n]) /* nothing of it runs, or will */
                s->load[n] -= h->counts[n];
            h->ended[n] = 1;
        }
        for (int i = 0; i < h->nprocs; i++)
            if (h->errcodes[i] == 0)
                h->errcodes[i] = ECANCELED; /* started, then taken back */
        if (h->errmsg[0] == '\0')
            snprintf(h->errmsg, sizeof(h->errmsg), "the spawn failed on a node of the job");
    }
    pg_mesh_wr_u32(&b, (uint32_t)h->jobno);
    pg_mesh_wr_u32(&b, h->requester);
    pg_mesh_wr_u32(&b, h->reqid);
    pg_mesh_wr_i32(&b, rc);
    pg_mesh_wr_nstr(&b, h->failed ? h->errmsg : NULL);
    pg_mesh_wr_nstr(&b, h->kvsname);
    pg_mesh_wr_u32(&b, (uint32_t)h->nprocs);
    for (int i = 0; i < h->nprocs; i++)
        pg_mesh_wr_i32(&b, h->errcodes[i]);
    if (!h->failed) {
        (void)pg_proxy_dyn_send(p, h->requester, PG_MESH_SPAWN_SETTLED, &b);
        if (hjob_all_ended(p, h)) /* it ran and ended before the last node answered */
            coord_job_over(p, h);
    } else { /* every node it started on takes it back; the requester hears */
        for (int n = 0; n < p->nnodes; n++)
            if (n == (int)h->requester || (s->running[n] && h->counts[n] > 0))
                (void)pg_proxy_dyn_send(p, (uint32_t)n, PG_MESH_SPAWN_SETTLED, &b);
    }
    pg_mesh_wr_free(&b);
}

/* Node `src` answered START: its share's errcodes, and how many of its
 * processes it forked. */
static void coord_launched(proxy_t *p, hjob_t *h, int src, int rc, int started, const char *errmsg,
                         uint32_t first, uint32_t n, pg_mesh_rd_t *r)
{
    if (!h->asked[src])
        return;
    h->asked[src] = 0;
    h->nasked--;
    h->started += started;
    for (uint32_t i = 0; i < n && first + i < (uint32_t)h->nprocs; i++) {
        int err = pg_mesh_rd_i32(r);

        if (err != 0 && !r->bad)
            h->errcodes[first + i] = err;
    }
    if (rc != 0) {
        h->failed = true;
        h->exec_failed = true;
        if (h->errmsg[0] == '\0' && errmsg != NULL)
            snprintf(h->errmsg, sizeof(h->errmsg), "%s", errmsg);
    }
    if (h->nasked == 0 && !h->settled)
        coord_settle(p, h);
}

static void on_launched(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    int jobno = (int)pg_mesh_rd_u32(&r);
    int rc = pg_mesh_rd_i32(&r), started = pg_mesh_rd_i32(&r);
    char *errmsg = pg_mesh_rd_nstr(&r);
    uint32_t first = pg_mesh_rd_u32(&r), n = pg_mesh_rd_count(&r, 4);
    hjob_t *h = pg_proxy_spawn_hjob_find(p->spawn, jobno);

    if (h != NULL && !r.bad && p->nodeid == 0)
        coord_launched(p, h, src, rc, started, errmsg, first, n, &r);
    free(errmsg);
}

/* ---------------------------------------------------------------- */
/* every node: its share                                              */
/* ---------------------------------------------------------------- */

/* LAUNCHED for node 0: how this node's share of job `jobno` started. */
static void report_launched(proxy_t *p, int jobno, int rc, int started, const char *errmsg,
                            const int *errcodes, int first, int n)
{
    pg_mesh_wr_t b = { 0 };

    pg_mesh_wr_u32(&b, (uint32_t)jobno);
    pg_mesh_wr_i32(&b, rc);
    pg_mesh_wr_i32(&b, started);
    pg_mesh_wr_nstr(&b, errmsg);
    pg_mesh_wr_u32(&b, (uint32_t)first);
    pg_mesh_wr_u32(&b, errcodes != NULL ? (uint32_t)n : 0);
    for (int i = 0; errcodes != NULL && i < n; i++)
        pg_mesh_wr_i32(&b, errcodes[first + i]);
    (void)pg_proxy_dyn_send(p, 0, PG_MESH_SPAWN_LAUNCHED, &b);
    pg_mesh_wr_free(&b);
}

/* pg_spawn_share's answer. */
static void share_done(void *arg, int rc, const int *errcodes, int nprocs, const char *errmsg)
{
    xjob_t *x = arg;
    proxy_t *p = x->p;
    int first = first_rank(x->counts, p->nodeid), n = x->counts[p->nodeid], started = 0;

    (void)nprocs;
    x->job = p->run != NULL ? pg_run_find_job(p->run, x->kvsname) : NULL;
    for (int i = 0; x->job != NULL && errcodes != NULL && i < n; i++)
        started += errcodes[first + i] != ECANCELED;
    report_launched(p, x->jobno, rc, started, errmsg, errcodes, first, n);
}

static xjob_t *xjob_new(proxy_t *p, int jobno, const char *kvsname, const int *counts)
{
    xjob_t *x = calloc(1, sizeof(*x));

    if (x == NULL || (x->counts = calloc((size_t)p->nnodes, sizeof(*x->counts))) == NULL) {
        free(x);
        return NULL;
    }
    x->p = p;
    x->jobno = jobno;
    snprintf(x->kvsname, sizeof(x->kvsname), "%s", kvsname);
    memcpy(x->counts, counts, (size_t)p->nnodes * sizeof(*counts));
    x->node = (pg_job_node_t){
        .nnodes = p->nnodes, .nodeid = p->nodeid, .counts = x->counts,
        .hostnames = (const char *const *)p->hostnames, .kvsname = x->kvsname,
        .base_env = p->env, .xfence = pg_proxy_spawn_xjob_fence, .xfence_ctx = x,
        .spawn = pg_proxy_spawn_request, .ended = pg_proxy_spawn_ended, .dyn_ctx = p,
    };
    x->next = p->spawn->xjobs;
    p->spawn->xjobs = x;
    return x;
}

/* A START from node 0 was handled: counted; a node idle before it asks
 * node 0 again, when it still is (its share, if any, is running now). */
static void started_or_not(proxy_t *p)
{
    p->spawn->starts_seen++;
    if (p->spawn->idle_told && p->run != NULL)
        pg_run_maybe_done(p->run);
}

static void on_start(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    int jobno = (int)pg_mesh_rd_u32(&r);
    char *kvsname = pg_mesh_rd_nstr(&r);
    uint32_t requester = pg_mesh_rd_u32(&r), reqid = pg_mesh_rd_u32(&r);
    char *parent_name = pg_mesh_rd_nstr(&r);
    int parent_rank = pg_mesh_rd_i32(&r);
    uint32_t nnodes = pg_mesh_rd_count(&r, 4);
    int *counts = calloc(nnodes > 0 ? nnodes : 1, sizeof(*counts));
    pg_job_t *parent = NULL;
    pg_spawn_wire_t w = { 0 };
    xjob_t *x = NULL;

    (void)requester;
    (void)reqid;
    for (uint32_t n = 0; counts != NULL && n < nnodes; n++)
        counts[n] = (int)pg_mesh_rd_u32(&r);
    if (src != 0 || r.bad || kvsname == NULL || parent_name == NULL || counts == NULL ||
        nnodes != (uint32_t)p->nnodes || pg_spawn_wire_unpack(&r, &w) != 0) {
        pg_proxy_spawn_log_node(p, "%s", "a spawn from node 0 could not be read");
        if (jobno > 0)
            report_launched(p, jobno, -1, 0, "a node could not read the spawn", NULL, 0, 0);
        goto out;
    }
    if (p->run == NULL || pg_run_ending(p->run) ||
        (parent = pg_run_find_job(p->run, parent_name)) == NULL) {
        report_launched(p, jobno, counts[p->nodeid] > 0 ? -1 : 0, 0,
                        "a node of the job has no ranks left to start children beside", NULL, 0,
                        0);
        goto out;
    }
    if ((x = xjob_new(p, jobno, kvsname, counts)) == NULL) {
        report_launched(p, jobno, -1, 0, "out of memory", NULL, 0, 0);
        goto out;
    }
    pg_spawn_share(parent, parent_rank, jobno, &x->node, &w.req, share_done, x);
out:
    pg_spawn_wire_free(&w);
    free(counts);
    free(kvsname);
    free(parent_name);
    started_or_not(p);
}

static void on_settled(proxy_t *p, int src, const void *body, size_t len)
{
    proxy_spawn_t *s = p->spawn;
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    int jobno = (int)pg_mesh_rd_u32(&r);
    uint32_t requester = pg_mesh_rd_u32(&r), reqid = pg_mesh_rd_u32(&r);
    int rc = pg_mesh_rd_i32(&r);
    char *errmsg = pg_mesh_rd_nstr(&r), *jobid = pg_mesh_rd_nstr(&r);
    uint32_t nprocs = pg_mesh_rd_count(&r, 4);
    int *codes = calloc(nprocs > 0 ? nprocs : 1, sizeof(*codes));
    xjob_t *x = jobno > 0 ? pg_proxy_spawn_xjob_find(s, jobno) : NULL;
    pending_t *pd;

    for (uint32_t i = 0; codes != NULL && i < nprocs; i++)
        codes[i] = pg_mesh_rd_i32(&r);
    if (src != 0 || r.bad || codes == NULL)
        goto out;
    if (rc != 0 && x != NULL && x->job != NULL && p->run != NULL)
        pg_job_take_back(x->job);
    if (requester == (uint32_t)p->nodeid && (pd = pending_take(s, reqid)) != NULL) {
        if ((uint32_t)pd->nprocs != nprocs) /* never: the request's own count */
            answer_failed(pd, PMIX_ERROR, "node 0's answer does not match the spawn", ECANCELED);
        else
            answer(pd, rc, errmsg != NULL ? errmsg : "the spawn failed", jobid, codes);
    }
out:
    free(codes);
    free(errmsg);
    free(jobid);
}

/* ---------------------------------------------------------------- */
/* the end of a spawned job, and of a node                            */
/* ---------------------------------------------------------------- */

void pg_proxy_spawn_ended(void *ctx, pg_job_t *job, int failed_rank, int failed_code)
{
    proxy_t *p = ctx;
    pg_mesh_wr_t b = { 0 };

    pg_mesh_wr_u32(&b, (uint32_t)pg_job_jobno(job));
    pg_mesh_wr_i32(&b, failed_rank);
    pg_mesh_wr_i32(&b, failed_code);
    (void)pg_proxy_dyn_send(p, 0, PG_MESH_SPAWN_ENDED, &b);
    pg_mesh_wr_free(&b);
}

/* Every node's share of h ended: PMIX_EVENT_JOB_END, when asked for, to
 * every node (each tells its own processes of the spawner's job). */
static void coord_job_over(proxy_t *p, hjob_t *h)
{
    pg_mesh_wr_t b = { 0 };
    int status = h->failed_rank < 0 ? 0
                 : h->failed_code != 0 ? h->failed_code
                                       : PMIX_ERR_JOB_TERM_WO_SYNC;

    h->end_told = true;
    if (!h->notify_end || (status == 0 && h->silent_ok) || h->failed)
        return;
    pg_mesh_wr_u32(&b, (uint32_t)h->jobno);
    pg_mesh_wr_i32(&b, status);
    pg_mesh_wr_i32(&b, h->failed_rank);
    pg_mesh_wr_i32(&b, h->failed_code);
    (void)pg_proxy_dyn_send(p, PG_MESH_ALL, PG_MESH_SPAWN_JOB_END, &b);
    pg_mesh_wr_free(&b);
}

/* Node n's share of h ended (first failure `rank`, `code`, or -1). */
static void coord_share_ended(proxy_t *p, hjob_t *h, int n, int rank, int code)
{
    if (h->ended[n])
        return;
    h->ended[n] = 1;
    p->spawn->load[n] -= h->counts[n];
    if (rank >= 0 && h->failed_rank < 0) {
        h->failed_rank = rank;
        h->failed_code = code;
    }
    if (hjob_all_ended(p, h) && h->settled && !h->end_told)
        coord_job_over(p, h);
}

static void on_ended(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    int jobno = (int)pg_mesh_rd_u32(&r), rank = pg_mesh_rd_i32(&r), code = pg_mesh_rd_i32(&r);
    hjob_t *h = pg_proxy_spawn_hjob_find(p->spawn, jobno);

    if (p->nodeid == 0 && !r.bad && h != NULL && h->counts[src] > 0)
        coord_share_ended(p, h, src, rank, code);
}

static void on_job_end(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    int jobno = (int)pg_mesh_rd_u32(&r);
    pg_job_engine_end_t end = { .status = pg_mesh_rd_i32(&r) };
    xjob_t *x = pg_proxy_spawn_xjob_find(p->spawn, jobno);
    pg_job_t *parent;
    const pg_job_node_t *pn;

    end.failed_rank = pg_mesh_rd_i32(&r);
    end.failed_code = pg_mesh_rd_i32(&r);
    if (src != 0 || r.bad || x == NULL || x->job == NULL || p->run == NULL)
        return;
    end.notify_nspace = pg_job_parent(x->job);
    parent = end.notify_nspace != NULL ? pg_run_find_job(p->run, end.notify_nspace) : NULL;
    if (parent == NULL || (pn = pg_job_node(parent)) == NULL)
        return;
    end.first_rank = first_rank(pn->counts, p->nodeid); /* this node's processes */
    end.nranks = pn->counts[p->nodeid];
    if (end.nranks > 0)
        (void)pg_job_engine_job_end(pg_job_engine(x->job), &end);
}

/* NODE_DONE's kinds: a node's ranks are gone and it handled `starts`
 * STARTs (IDLE, to node 0); node 0 retires it (RETIRE, to the node); a
 * node's run ended unretired, the job torn down (GONE, to node 0). */
enum { NODE_IDLE = 1, NODE_RETIRE = 2, NODE_GONE = 3 };

static int send_node_done(proxy_t *p, uint32_t dst, uint32_t kind, uint32_t starts)
{
    pg_mesh_wr_t b = { 0 };
    int rc;

    pg_mesh_wr_u32(&b, kind);
    pg_mesh_wr_u32(&b, starts);
    rc = pg_proxy_dyn_send(p, dst, PG_MESH_DYN_NODE_DONE, &b);
    pg_mesh_wr_free(&b);
    return rc;
}

/* Node n is retired: nothing more starts there; what waited for it will
 * not come (its share of a spawn, a fence of its children). */
static void coord_node_done(proxy_t *p, int n)
{
    proxy_spawn_t *s = p->spawn;

    if (!s->running[n])
        return;
    s->running[n] = 0;
    for (hjob_t *h = s->hjobs; h != NULL; h = h->next) {
        if (h->asked[n]) {
            pg_mesh_rd_t none = pg_mesh_rd(NULL, 0);

            coord_launched(p, h, n, h->counts[n] > 0 ? -1 : 0, 0,
                         "a node of the job has no ranks left to start children beside", 0, 0,
                         &none);
        }
        if (h->counts[n] > 0 && !h->ended[n])
            coord_share_ended(p, h, n, -1, 0);
    }
    pg_proxy_spawn_fence_node_done(p, n);
}

/* Node n is idle after `starts` STARTs.  Every START sent there handled:
 * it is retired, and told so.  Fewer: a START is on its way, the node
 * hosts what it brings, and asks again once idle. */
static void coord_node_idle(proxy_t *p, int n, uint32_t starts)
{
    proxy_spawn_t *s = p->spawn;

    if (!s->running[n] || starts != s->starts_sent[n])
        return;
    coord_node_done(p, n);
    (void)send_node_done(p, (uint32_t)n, NODE_RETIRE, 0); /* unreachable: it ends anyway */
}

/* Node 0 retired this node: its run may end. */
static void node_retired(proxy_t *p)
{
    p->spawn->retired = true;
    if (p->run != NULL)
        pg_run_maybe_done(p->run);
}

static void on_node_done(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint32_t kind = pg_mesh_rd_u32(&r), starts = pg_mesh_rd_u32(&r);

    if (!pg_mesh_rd_done(&r) || src < 0 || src >= p->nnodes)
        return;
    if (kind == NODE_RETIRE && src == 0)
        node_retired(p);
    else if (kind == NODE_IDLE && p->nodeid == 0)
        coord_node_idle(p, src, starts);
    else if (kind == NODE_GONE && p->nodeid == 0)
        coord_node_done(p, src);
}

bool pg_proxy_spawn_may_end(void *ctx)
{
    proxy_t *p = ctx;
    proxy_spawn_t *s = p->spawn;

    if (s == NULL || s->retired)
        return true;
    if (s->idle_told && s->idle_told_at == s->starts_seen)
        return false; /* asked already: node 0 answers */
    if (send_node_done(p, 0, NODE_IDLE, s->starts_seen) != 0)
        return true; /* node 0 cannot be asked: the job is ending */
    s->idle_told = true;
    s->idle_told_at = s->starts_seen;
    return false;
}

void pg_proxy_spawn_run_ended(proxy_t *p)
{
    proxy_spawn_t *s = p->spawn;

    if (s == NULL || s->run_over)
        return;
    s->run_over = true;
    while (s->pending != NULL) { /* their ranks are gone: they hear it now */
        pending_t *pd = s->pending;

        s->pending = pd->next;
        answer_failed(pd, PMIX_ERROR, "the job ended while its children were starting",
                      ECANCELED);
    }
    if (s->retired)
        return;
    if (p->nodeid == 0) /* torn down: no turn of the loop to wait for */
        coord_node_done(p, 0);
    else
        (void)send_node_done(p, 0, NODE_GONE, s->starts_seen);
}

/* ---------------------------------------------------------------- */
/* set-up                                                             */
/* ---------------------------------------------------------------- */

int pg_proxy_spawn_setup(proxy_t *p, const pg_run_opts_t *opts)
{
    proxy_spawn_t *s = calloc(1, sizeof(*s));
    const char *pid = strchr(p->kvsname, '_');

    if (s == NULL)
        return -1;
    p->spawn = s;
    s->p = p;
    s->cap = opts->max_procs_set ? opts->max_procs : PG_SPAWN_MAX_PROCS_DEFAULT;
    s->pid0 = pid != NULL ? strtol(pid + 1, NULL, 10) : 0;
    s->load = calloc((size_t)p->nnodes, sizeof(*s->load));
    s->running = calloc((size_t)p->nnodes, 1);
    s->starts_sent = calloc((size_t)p->nnodes, sizeof(*s->starts_sent));
    if (s->load == NULL || s->running == NULL || s->starts_sent == NULL)
        return -1;
    for (int n = 0; n < p->nnodes; n++) {
        s->load[n] = p->counts[n];
        s->running[n] = 1;
    }
    if (pg_proxy_dyn_on(p, PG_MESH_SPAWN_REQ, on_req) != 0 ||
        pg_proxy_dyn_on(p, PG_MESH_SPAWN_START, on_start) != 0 ||
        pg_proxy_dyn_on(p, PG_MESH_SPAWN_LAUNCHED, on_launched) != 0 ||
        pg_proxy_dyn_on(p, PG_MESH_SPAWN_SETTLED, on_settled) != 0 ||
        pg_proxy_spawn_fence_setup(p) != 0 ||
        pg_proxy_dyn_on(p, PG_MESH_SPAWN_ENDED, on_ended) != 0 ||
        pg_proxy_dyn_on(p, PG_MESH_SPAWN_JOB_END, on_job_end) != 0 ||
        pg_proxy_dyn_on(p, PG_MESH_DYN_NODE_DONE, on_node_done) != 0)
        return -1;
    return 0;
}

void pg_proxy_spawn_free(proxy_t *p)
{
    proxy_spawn_t *s = p->spawn;

    if (s == NULL)
        return;
    pg_proxy_spawn_run_ended(p); /* nobody may be left waiting */
    while (s->xjobs != NULL) {
        xjob_t *x = s->xjobs;

        s->xjobs = x->next;
        xjob_free(x);
    }
    while (s->hjobs != NULL) {
        hjob_t *h = s->hjobs;

        s->hjobs = h->next;
        hjob_free(h);
    }
    pg_proxy_spawn_fence_free(p);
    free(s->load);
    free(s->running);
    free(s->starts_sent);
    free(s);
    p->spawn = NULL;
}
