/*
 * pg_replay_node: a recorded node of a proxy job, served again with the
 * other nodes' recorded fence contributions.  See pg_replay_node.h.
 *
 * The cross-node fences are answered in the order they come: the node's
 * k-th cross-node fence (whole-job or over a subset, counted as they
 * start) gets the records of fence k (its ranks fence in the
 * recorded order, as the replayer keeps that order).  A fence the trace
 * has no record of, or one that failed, fails here too.
 */
#include "gateway/proxy/pg_replay_node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/job/pg_job_engine.h"
#include "gateway/run/pg_run.h"
#include "gateway/util/pg_status.h"
#include "engine/pg_engine.h"
#include "trace/pg_trace.h"

typedef struct replay_node {
    pg_trace_t *t;
    int nnodes, nodeid;
    int *counts;        /* [nnodes] */
    char **hostnames;   /* [nnodes] */
    unsigned fences;    /* cross-node fences answered so far */
    void **blobs;       /* [nnodes], borrowed from the trace for one answer */
    size_t *lens;
} replay_node_t;

/* The other nodes' part of fence k, from the trace: 0, or -1 when the
 * recorded fence failed or was not recorded. */
static int recorded_fence(replay_node_t *rn, unsigned k)
{
    int found = 0;

    memset(rn->blobs, 0, (size_t)rn->nnodes * sizeof(*rn->blobs));
    memset(rn->lens, 0, (size_t)rn->nnodes * sizeof(*rn->lens));
    for (size_t i = 0; i < rn->t->nrecords; i++) {
        const pg_trace_record_t *r = &rn->t->records[i];

        if (r->kind != PG_TRACE_REC_XFENCE || r->fence != k)
            continue;
        if (r->node < 0)
            return -1;
        if (r->node < rn->nnodes && r->node != rn->nodeid) {
            rn->blobs[r->node] = r->blob;
            rn->lens[r->node] = r->len;
        }
        found = 1;
    }
    if (!found)
        fprintf(stderr, "pmigate replay: node %d: the trace has no record of cross-node fence %u\n",
                rn->nodeid, k);
    return found ? 0 : -1;
}

/* The job's cross-node fence hook (pg_job_engine_xfence_fn): whole-job or
 * subset alike, the recorded answer of the fence's turn. */
static void on_xfence(void *ctx, const pg_job_engine_xfence_t *f)
{
    replay_node_t *rn = ctx;
    int ok = recorded_fence(rn, ++rn->fences);

    pg_job_engine_xfence_done(f->je, f->id, ok, rn->blobs, rn->lens);
}

static void replay_node_free(replay_node_t *rn)
{
    for (int n = 0; rn->hostnames != NULL && n < rn->nnodes; n++)
        free(rn->hostnames[n]);
    free(rn->hostnames);
    free(rn->counts);
    free(rn->blobs);
    free(rn->lens);
    pg_trace_free(rn->t);
}

/* The recorded layout: the proxies' blocks of ranks (pg_proxy), the
 * recorded node's name and made-up names of the others (the replay
 * compares no host name). */
static int plan_layout(replay_node_t *rn, const pg_run_opts_t *opts, char *err, size_t errlen)
{
    const pg_trace_header_t *h = &rn->t->header;
    int n = opts->nprocs;

    rn->nnodes = h->nnodes;
    rn->nodeid = h->node;
    if (rn->nnodes < 2 || n != h->size || n < rn->nnodes) {
        snprintf(err, errlen, "the trace is not one node's of a job of %d ranks", n);
        return -1;
    }
    rn->counts = calloc((size_t)rn->nnodes, sizeof(*rn->counts));
    rn->hostnames = calloc((size_t)rn->nnodes, sizeof(*rn->hostnames));
    rn->blobs = calloc((size_t)rn->nnodes, sizeof(*rn->blobs));
    rn->lens = calloc((size_t)rn->nnodes, sizeof(*rn->lens));
    if (rn->counts == NULL || rn->hostnames == NULL || rn->blobs == NULL || rn->lens == NULL)
        goto oom;
    for (int k = 0; k < rn->nnodes; k++) {
        rn->counts[k] = n / rn->nnodes + (k < n % rn->nnodes ? 1 : 0);
        if (k == rn->nodeid)
            rn->hostnames[k] = strdup(h->host[0] ? h->host : "replay-node");
        else if (asprintf(&rn->hostnames[k], "replay-node%d", k) < 0)
            rn->hostnames[k] = NULL;
        if (rn->hostnames[k] == NULL)
            goto oom;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

int pg_replay_node_run(struct event_base *base, pg_run_opts_t *opts,
                       const pg_handler_table_t *handlers, const char *trace_path)
{
    replay_node_t rn = { 0 };
    char err[256];
    pg_run_t *run = NULL;
    int status = PG_EXIT_INTERNAL;

    rn.t = pg_trace_load(trace_path, err, sizeof(err));
    if (rn.t == NULL || plan_layout(&rn, opts, err, sizeof(err)) != 0) {
        fprintf(stderr, "pmigate replay: %s: %s\n", trace_path, err);
        replay_node_free(&rn);
        return PG_EXIT_INTERNAL;
    }
    {
        pg_job_node_t node = {
            .nnodes = rn.nnodes, .nodeid = rn.nodeid, .counts = rn.counts,
            .hostnames = (const char *const *)rn.hostnames, .kvsname = rn.t->header.kvsname,
            .xfence = on_xfence, .xfence_ctx = &rn,
        };

        opts->trace_node = rn.nodeid;
        opts->trace_nnodes = rn.nnodes;
        opts->trace_host = rn.hostnames[rn.nodeid];
        run = pg_run_new(base, opts, handlers);
        if (run != NULL && pg_run_set_node(run, &node) == 0)
            status = pg_run_dispatch(run);
        pg_run_free(run);
    }
    replay_node_free(&rn);
    return status;
}
