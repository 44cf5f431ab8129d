/*
 * pg_proxy_modex: direct modex across nodes for `pmigate proxy`
 * (docs/proxy.md, "Direct modex across nodes").
 *
 * Why: a PMIx get of a key that a rank on another node committed, before
 * any fence brought it, must be answered once the key is committed, as on
 * one node -- not NOT_FOUND at once.  Neither host offers it to a proxy
 * for its ranks' keys, so the getter's proxy asks the owning node over the
 * mesh, and the owner's engine answers when the key is committed:
 *   GET  (getter -> owner): u64 id, the requester's namespace and rank,
 *        the target's namespace and rank (nstr, u32 each), u32 flags
 *        (BLOCKS: the requester waits in it), the key (raw, to the body's
 *        end) -- the namespaces because a job spawned over several nodes
 *        keeps its keys on its ranks' nodes just as the root job does;
 *   GOT  (owner -> getter): u64 id, i32 status, u64 total, u64 offset, and
 *        bytes [offset, offset + n) of the target's committed data
 *        (pg_proc_modex), in frames of at most CHUNK_MAX bytes;
 *   DROP (getter -> owner): u64 id -- the get ended at the getter (its
 *        PMIX_TIMEOUT, a fence brought the key, its job ended).
 * The bodies are in pg_mesh_msg's format.
 * The owner holds the get in its engine on the requester's behalf: held
 * until the target commits the key, bounded by the owner's hang detection
 * (the target gone, or waiting in a fence the requester is a member of
 * and so cannot join while it waits: NOT_FOUND, as on one node), by the
 * getter's timeout (DROP) and by the job's end.  The getter's engine holds
 * its own side (pg_engine.h, "direct modex") and ingests the answer.
 */
#include "gateway/proxy/pg_proxy_int.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/mesh/pg_mesh_msg.h"
#include "gateway/job/pg_job_engine.h"
#include "gateway/run/pg_run.h"
#include "engine/pg_engine.h"
#include "wire/pg_clock.h"

enum {
    CHUNK_MAX = 1 << 20,
    FLAG_BLOCKS = 1,
    RETRY_MS = 10, /* a get that came before this node's engine */
};

/* A get of this node's, sent to the owner. */
struct dmodex_out {
    dmodex_out_t *next;
    uint64_t id;
    int owner;
    unsigned char *data;       /* the answer, as it comes */
    uint64_t total, got;
    bool begun;
};

/* Another node's get, held in this node's engine. */
struct dmodex_in {
    dmodex_in_t *next;
    proxy_t *p;
    int src;
    uint64_t id;
    pg_proc_t requester, target; /* their nspace points at the names below */
    char requester_ns[PMIX_MAX_NSLEN + 1], target_ns[PMIX_MAX_NSLEN + 1];
    bool blocks;
    bool unheld;               /* came before this node's engine: not held yet */
    bool dropped;              /* the getter no longer waits: no answer */
    char key[];
};

/* The node of `rank` of job `nspace` -- the root job or one spawned over
 * the nodes -- or -1 when no such rank is known here. */
static int node_of(proxy_t *p, const char *nspace, uint32_t rank)
{
    if (strcmp(nspace, p->kvsname) == 0)
        return pg_proxy_node_of(p, rank);
    return pg_proxy_spawn_node_of(p, nspace, rank);
}

/* ---- the owner's side ---- */

static void in_unlink(proxy_t *p, dmodex_in_t *d)
{
    for (dmodex_in_t **at = &p->gets_in; *at != NULL; at = &(*at)->next)
        if (*at == d) {
            *at = d->next;
            return;
        }
}

/* The answer: a status, and with success the target's committed data. */
static void answer(proxy_t *p, int dst, uint64_t id, pmix_status_t status, const void *data,
                   size_t size)
{
    size_t off = 0;

    do {
        size_t n = size - off < CHUNK_MAX ? size - off : CHUNK_MAX;
        pg_mesh_wr_t w;

        pg_mesh_wr_init(&w);
        pg_mesh_wr_u64(&w, id);
        pg_mesh_wr_i32(&w, status);
        pg_mesh_wr_u64(&w, size);
        pg_mesh_wr_u64(&w, off);
        pg_mesh_wr_raw(&w, n > 0 ? (const char *)data + off : NULL, n);
        if (pg_mesh_wr_send_direct(&w, p->mesh, (uint32_t)dst, PG_MESH_DATA_GOT) != 0)
            break; /* the getter waits for its timeout or the job's end */
        off += n;
    } while (off < size);
}

/* The engine: the held get ended (the key is committed, or it cannot be). */
static void on_held_got(pmix_status_t status, const pg_value_t *value, pmix_rank_t poster,
                        void *cbdata)
{
    dmodex_in_t *d = cbdata;
    proxy_t *p = d->p;
    pg_job_engine_t *je = p->run != NULL ? pg_run_engine(p->run) : NULL;
    void *blob = NULL;
    size_t size = 0;

    (void)value;
    (void)poster;
    in_unlink(p, d);
    if (!d->dropped && je != NULL) {
        if (status == PMIX_SUCCESS)
            status = pg_proc_modex(pg_job_engine_get(je), &d->target, &blob, &size);
        answer(p, d->src, d->id, status, blob, size);
    }
    free(blob);
    free(d);
}

/* Asks the node's engine for another node's get; NOT_FOUND once the
 * node's run is over.  Returns false while there is no engine yet; else
 * d may be gone already (answered at once), and so may other gets (the
 * engine's hang detection may end them). */
static bool hold(proxy_t *p, dmodex_in_t *d)
{
    pg_job_engine_t *je = p->run != NULL ? pg_run_engine(p->run) : NULL;
    pg_get_req_t q;

    if (je == NULL && !p->ran)
        return false;
    d->unheld = false;
    if (je == NULL) {
        in_unlink(p, d);
        answer(p, d->src, d->id, PMIX_ERR_NOT_FOUND, NULL, 0);
        free(d);
        return true;
    }
    pg_get_req_init(&q, &d->requester, &d->target, d->key);
    q.flags = d->blocks ? 0 : PG_GET_NONBLOCKING;
    (void)pg_get(pg_job_engine_get(je), &q, pg_clock_now(), on_held_got, d);
    pg_job_engine_touch(je);
    return true;
}

static void arm_retry(proxy_t *p)
{
    struct timeval tv = { 0, RETRY_MS * 1000 };

    if (p->gets_retry != NULL)
        evtimer_add(p->gets_retry, &tv);
}

/* Gets that came before this node's engine was there. */
static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    proxy_t *p = arg;
    dmodex_in_t *d;

    (void)fd;
    (void)what;
again: /* a hold may end other gets: the list is walked afresh after each */
    for (d = p->gets_in; d != NULL; d = d->next)
        if (d->unheld) {
            if (!hold(p, d)) {
                arm_retry(p); /* still no engine: none of them can be held */
                return;
            }
            goto again;
        }
}

/* Reads the requester and the target of a GET into d.  false: unreadable. */
static bool read_procs(pg_mesh_rd_t *r, dmodex_in_t *d)
{
    char *requester_ns = pg_mesh_rd_nstr(r);
    uint32_t requester = pg_mesh_rd_u32(r);
    char *target_ns = pg_mesh_rd_nstr(r);
    uint32_t target = pg_mesh_rd_u32(r);
    bool ok = requester_ns != NULL && target_ns != NULL &&
              strlen(requester_ns) < sizeof(d->requester_ns) &&
              strlen(target_ns) < sizeof(d->target_ns);

    if (ok) {
        snprintf(d->requester_ns, sizeof(d->requester_ns), "%s", requester_ns);
        snprintf(d->target_ns, sizeof(d->target_ns), "%s", target_ns);
        d->requester = (pg_proc_t){ d->requester_ns, requester };
        d->target = (pg_proc_t){ d->target_ns, target };
    }
    free(requester_ns);
    free(target_ns);
    return ok;
}

/* Is d a get this node may hold: its target here, its requester on the
 * node that sent it? */
static bool get_is_ours(proxy_t *p, const dmodex_in_t *d)
{
    return node_of(p, d->target.nspace, d->target.rank) == p->nodeid &&
           node_of(p, d->requester.nspace, d->requester.rank) == d->src;
}

static void on_get_frame(void *arg, int src, const void *body, size_t len)
{
    proxy_t *p = arg;
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    dmodex_in_t *d = calloc(1, sizeof(*d) + PMIX_MAX_KEYLEN + 1);
    uint32_t flags;
    size_t keylen;
    const char *key;

    if (d == NULL)
        return; /* the getter waits for its timeout or the job's end */
    d->p = p;
    d->src = src;
    d->id = pg_mesh_rd_u64(&r);
    if (!read_procs(&r, d))
        goto refuse;
    flags = pg_mesh_rd_u32(&r);
    key = pg_mesh_rd_rest(&r, &keylen);
    if (!pg_mesh_rd_done(&r) || src < 0 || src >= p->nnodes || keylen == 0 ||
        keylen > PMIX_MAX_KEYLEN)
        goto refuse;
    d->blocks = (flags & FLAG_BLOCKS) != 0;
    memcpy(d->key, key, keylen);
    if (strlen(d->key) != keylen || !get_is_ours(p, d))
        goto refuse;
    d->next = p->gets_in;
    p->gets_in = d;
    d->unheld = true;
    if (!hold(p, d))
        arm_retry(p);
    return;
refuse:
    free(d);
}

static void on_drop_frame(void *arg, int src, const void *body, size_t len)
{
    proxy_t *p = arg;
    pg_job_engine_t *je = p->run != NULL ? pg_run_engine(p->run) : NULL;
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t id = pg_mesh_rd_u64(&r);

    if (!pg_mesh_rd_done(&r))
        return;
    for (dmodex_in_t *d = p->gets_in; d != NULL; d = d->next) {
        if (d->src != src || d->id != id)
            continue;
        d->dropped = true;
        if (je != NULL && pg_get_cancel(pg_job_engine_get(je), on_held_got, d,
                                        PMIX_ERR_TIMEOUT) == PMIX_SUCCESS) {
            pg_job_engine_touch(je);
            return; /* on_held_got freed it */
        }
        in_unlink(p, d); /* not held yet */
        free(d);
        return;
    }
}

/* ---- the getter's side ---- */

static dmodex_out_t *out_find(proxy_t *p, uint64_t id, bool unlink)
{
    for (dmodex_out_t **at = &p->gets_out; *at != NULL; at = &(*at)->next) {
        dmodex_out_t *o = *at;

        if (o->id != id)
            continue;
        if (unlink)
            *at = o->next;
        return o;
    }
    return NULL;
}

/* The engine's dmodex hook: ask the owning node. */
static void on_dmodex(void *ctx, const pg_host_dmodex_t *d)
{
    proxy_t *p = ctx;
    size_t keylen = strlen(d->key);
    pg_mesh_wr_t w;
    int owner = node_of(p, d->target.nspace, d->target.rank);
    dmodex_out_t *o;

    if (owner < 0 || owner == p->nodeid || keylen > PMIX_MAX_KEYLEN ||
        (o = calloc(1, sizeof(*o))) == NULL)
        return; /* held until its timeout or the job's end */
    o->id = d->id;
    o->owner = owner;
    pg_mesh_wr_init(&w);
    pg_mesh_wr_u64(&w, d->id);
    pg_mesh_wr_nstr(&w, d->requester.nspace);
    pg_mesh_wr_u32(&w, d->requester.rank);
    pg_mesh_wr_nstr(&w, d->target.nspace);
    pg_mesh_wr_u32(&w, d->target.rank);
    pg_mesh_wr_u32(&w, d->blocks ? FLAG_BLOCKS : 0);
    pg_mesh_wr_raw(&w, d->key, keylen);
    if (pg_mesh_wr_send_direct(&w, p->mesh, (uint32_t)owner, PG_MESH_DATA_GET) != 0) {
        free(o); /* the owner is gone: the job is ending */
        return;
    }
    o->next = p->gets_out;
    p->gets_out = o;
}

/* The engine's dmodex_cancel hook: the get ended here first. */
static void on_dmodex_cancel(void *ctx, uint64_t id)
{
    proxy_t *p = ctx;
    dmodex_out_t *o = out_find(p, id, true);
    pg_mesh_wr_t w;

    if (o == NULL)
        return;
    pg_mesh_wr_init(&w);
    pg_mesh_wr_u64(&w, id);
    (void)pg_mesh_wr_send_direct(&w, p->mesh, (uint32_t)o->owner, PG_MESH_DATA_DROP);
    free(o->data);
    free(o);
}

static void on_got_frame(void *arg, int src, const void *body, size_t len)
{
    proxy_t *p = arg;
    pg_job_engine_t *je = p->run != NULL ? pg_run_engine(p->run) : NULL;
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t id = pg_mesh_rd_u64(&r);
    pmix_status_t status = (pmix_status_t)pg_mesh_rd_i32(&r);
    uint64_t total = pg_mesh_rd_u64(&r);
    uint64_t off = pg_mesh_rd_u64(&r);
    size_t n;
    const unsigned char *chunk = pg_mesh_rd_rest(&r, &n);
    dmodex_out_t *o;

    if (!pg_mesh_rd_done(&r) || (o = out_find(p, id, false)) == NULL || o->owner != src)
        return; /* stale: the get ended here meanwhile */
    if ((o->begun && total != o->total) || off > total || n > total - off || total > SIZE_MAX / 2)
        return;
    if (!o->begun) {
        o->begun = true;
        o->total = total;
        o->data = total > 0 ? malloc((size_t)total) : NULL;
        if (total > 0 && o->data == NULL)
            status = PMIX_ERR_NOMEM;
    }
    if (o->data != NULL && n > 0)
        memcpy(o->data + off, chunk, n);
    o->got += n;
    if (o->got < o->total && status != PMIX_ERR_NOMEM)
        return;
    (void)out_find(p, o->id, true);
    if (je != NULL) {
        (void)pg_dmodex_host_done(pg_job_engine_get(je), o->id, status, o->data,
                                  status == PMIX_SUCCESS ? (size_t)o->total : 0);
        pg_job_engine_touch(je);
    }
    free(o->data);
    free(o);
}

const pg_host_ops_t proxy_modex_ops = {
    .dmodex = on_dmodex,
    .dmodex_cancel = on_dmodex_cancel,
};

int pg_proxy_modex_setup(proxy_t *p)
{
    if (p->mesh == NULL)
        return 0;
    p->gets_retry = evtimer_new(p->base, on_retry, p);
    if (p->gets_retry == NULL || pg_mesh_on(p->mesh, PG_MESH_DATA_GET, on_get_frame, p) != 0 ||
        pg_mesh_on(p->mesh, PG_MESH_DATA_GOT, on_got_frame, p) != 0 ||
        pg_mesh_on(p->mesh, PG_MESH_DATA_DROP, on_drop_frame, p) != 0)
        return -1;
    return 0;
}

void pg_proxy_modex_free(proxy_t *p)
{
    while (p->gets_out != NULL) {
        dmodex_out_t *o = p->gets_out;

        p->gets_out = o->next;
        free(o->data);
        free(o);
    }
    while (p->gets_in != NULL) { /* the engine that held them is gone */
        dmodex_in_t *d = p->gets_in;

        p->gets_in = d->next;
        free(d);
    }
    if (p->gets_retry != NULL)
        event_free(p->gets_retry);
    p->gets_retry = NULL;
}
