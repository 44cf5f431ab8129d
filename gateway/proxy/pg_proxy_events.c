/*
 * pg_proxy_events: events across the nodes of a job (PMIx_Notify_event,
 * and the events pmigate raises itself: a rank's abort, a rank gone
 * without finalize, a job's end, group events, a monitor's alert), carried
 * by the proxies' mesh (docs/proxy.md, "Names and events across nodes").
 *
 * Why: each node's engine delivers an event to the subscribers it serves;
 * one whose range reaches past the node (namespace, session, global, a
 * custom list naming processes elsewhere) must reach the handlers on
 * every node, and neither host carries a proxy's notify to the others
 * (Slurm has no notify; ORTE's goes to the host's own clients, not to the
 * ranks behind a proxy).  So the engine hands such an event to the proxy
 * (the event hook), which sends it to every other node (down the mesh's
 * tree from this node); each delivers it to its subscribers in range
 * (pg_event_deliver).  Ranges PROC_LOCAL and LOCAL stay on their node.
 * Frames of one node reach each other node in the order sent, so an
 * abort's event reaches node 0 before the failure that follows it
 * (pg_jobend), and node 0 decides the job's end only PG_JOBEND_SETTLE_MS
 * later: the event's few hops reach the other nodes well before the end
 * floods back.  Each node's teardown waits for its own listeners as on one
 * node.
 *
 * Frame EVENT (to every node; pg_mesh_msg's format): u32 status, u32 range,
 * str source nspace, u32 source rank, str origin nspace, u32 origin rank,
 * u32 ntargets, then per target str nspace, u32 rank; u8 packed: 1 = bytes
 * info (the notifier's packed info[]), 0 = u32 ndetails, then per detail
 * str key, u32 type, bytes value.
 */
#include <stdlib.h>

#include "gateway/job/pg_job_engine.h"
#include "gateway/mesh/pg_mesh_msg.h"
#include "gateway/proxy/pg_proxy_int.h"
#include "engine/pg_engine.h"

enum {
    EVENT = PG_MESH_NAMES_FIRST + 16,
    TARGETS_MAX = 1 << 16,  /* a custom range's processes in one frame */
    DETAILS_MAX = 64,
};

void pg_proxy_event(void *ctx, const pg_event_t *ev)
{
    proxy_t *p = ctx;
    pg_mesh_wr_t w;

    if (p->mesh == NULL || ev->ntargets > TARGETS_MAX || ev->ndetails > DETAILS_MAX)
        return;
    pg_mesh_wr_init(&w);
    pg_mesh_wr_u32(&w, (uint32_t)ev->status);
    pg_mesh_wr_u32(&w, ev->range);
    pg_mesh_wr_str(&w, ev->source.nspace);
    pg_mesh_wr_u32(&w, ev->source.rank);
    pg_mesh_wr_str(&w, ev->origin.nspace);
    pg_mesh_wr_u32(&w, ev->origin.rank);
    pg_mesh_wr_u32(&w, (uint32_t)ev->ntargets);
    for (size_t i = 0; i < ev->ntargets; i++) {
        pg_mesh_wr_str(&w, ev->targets[i].nspace);
        pg_mesh_wr_u32(&w, ev->targets[i].rank);
    }
    pg_mesh_wr_u8(&w, ev->info != NULL);
    if (ev->info != NULL)
        pg_mesh_wr_bytes(&w, ev->info, ev->info_size);
    else {
        pg_mesh_wr_u32(&w, (uint32_t)ev->ndetails);
        for (size_t i = 0; i < ev->ndetails; i++) {
            pg_mesh_wr_str(&w, ev->details[i].key);
            pg_mesh_wr_u32(&w, ev->details[i].value.type);
            pg_mesh_wr_bytes(&w, ev->details[i].value.data, ev->details[i].value.size);
        }
    }
    (void)pg_mesh_wr_send(&w, p->mesh, PG_MESH_ALL, EVENT); /* a node lost: the job ends anyway */
}

/* Names read from an event frame: nspaces of the source, the origin and
 * each target, keys of the details. */
typedef char nspace_t[PMIX_MAX_NSLEN + 1];
typedef char detail_key_t[PMIX_MAX_KEYLEN + 1];

typedef struct event_in {
    pg_event_t ev;
    nspace_t source, origin;
    pg_proc_t *targets;  /* [ntargets] */
    nspace_t *tspaces;   /* [ntargets] */
    pg_event_detail_t *details;
    detail_key_t *keys;        /* [ndetails] */
} event_in_t;

static void event_in_free(event_in_t *in)
{
    free(in->targets);
    free(in->tspaces);
    free(in->details);
    free(in->keys);
}

/* Reads the frame into `in` (pointing into the body).  0 or -1. */
static int event_read(event_in_t *in, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    size_t n;

    in->ev.status = (pmix_status_t)pg_mesh_rd_u32(&r);
    in->ev.range = (pmix_data_range_t)pg_mesh_rd_u32(&r);
    in->ev.source.nspace = pg_mesh_rd_str(&r, in->source, sizeof(in->source));
    in->ev.source.rank = pg_mesh_rd_u32(&r);
    in->ev.origin.nspace = pg_mesh_rd_str(&r, in->origin, sizeof(in->origin));
    in->ev.origin.rank = pg_mesh_rd_u32(&r);
    n = pg_mesh_rd_u32(&r);
    if (r.bad || n > TARGETS_MAX ||
        (n > 0 && ((in->targets = calloc(n, sizeof(*in->targets))) == NULL ||
                   (in->tspaces = calloc(n, sizeof(*in->tspaces))) == NULL)))
        return -1;
    for (size_t i = 0; i < n; i++) {
        in->targets[i].nspace = pg_mesh_rd_str(&r, in->tspaces[i], sizeof(in->tspaces[i]));
        in->targets[i].rank = pg_mesh_rd_u32(&r);
    }
    in->ev.targets = in->targets;
    in->ev.ntargets = n;
    if (pg_mesh_rd_u8(&r) != 0) {
        in->ev.info = pg_mesh_rd_bytes(&r, &in->ev.info_size);
        return pg_mesh_rd_done(&r) ? 0 : -1;
    }
    n = pg_mesh_rd_u32(&r);
    if (r.bad || n > DETAILS_MAX ||
        (n > 0 && ((in->details = calloc(n, sizeof(*in->details))) == NULL ||
                   (in->keys = calloc(n, sizeof(*in->keys))) == NULL)))
        return -1;
    for (size_t i = 0; i < n; i++) {
        in->details[i].key = pg_mesh_rd_str(&r, in->keys[i], sizeof(in->keys[i]));
        in->details[i].value.type = (pmix_data_type_t)pg_mesh_rd_u32(&r);
        in->details[i].value.data = pg_mesh_rd_bytes(&r, &in->details[i].value.size);
    }
    in->ev.details = in->details;
    in->ev.ndetails = n;
    return pg_mesh_rd_done(&r) ? 0 : -1;
}

/* Another node's event, to this node's subscribers in its range. */
static void on_event_frame(void *arg, int src, const void *body, size_t len)
{
    proxy_t *p = arg;
    pg_engine_t *e = p->run != NULL ? pg_job_engine_get(pg_run_engine(p->run)) : NULL;
    event_in_t *in = calloc(1, sizeof(*in));

    (void)src;
    if (in != NULL && e != NULL && event_read(in, body, len) == 0)
        (void)pg_event_deliver(e, &in->ev, NULL);
    if (in != NULL)
        event_in_free(in);
    free(in);
}

int pg_proxy_events_setup(proxy_t *p)
{
    return p->mesh != NULL ? pg_mesh_on(p->mesh, EVENT, on_event_frame, p) : 0;
}
