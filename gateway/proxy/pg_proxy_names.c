/*
 * pg_proxy_names: the name service of a job over several nodes (PMI-1
 * publish_name/lookup_name/unpublish_name, PMI-2 name-publish/-lookup/
 * -unpublish, PMIx_Publish/Lookup/Unpublish), carried by the proxies' mesh
 * (docs/proxy.md, "Names and events across nodes").
 *
 * Why: a name published on one node must be found, refused as a
 * duplicate, or gone, on every node, and a lookup that waits must wake the
 * moment the name appears anywhere.  Not every host has a name service
 * (Slurm 22.05's pmix plugin has none), and one that has cannot wake a
 * waiting lookup without blocking the proxy.  So each name has a home:
 * the node its key hashes to (home_of), which holds it.  Every node's
 * engine hands its publish, unpublish and lookup to the key's home (the
 * engine's name hooks); the home answers at once, and keeps a lookup that
 * waits until the name is published -- then answers it in the same
 * breath.  Why homes and not one node for all: the job's names and their
 * lookups spread over the nodes, so no node carries every node's calls
 * (a job of thousands of nodes).  A node that is a key's home sends
 * itself its calls like any node's (pg_mesh_send to itself: they come
 * back from the loop, never inside the engine's hook).  Names go with
 * their publisher's job (NAME_DROP, to every node, when a job ends on a
 * node); a node's engine times its waiting lookups out itself and says so
 * (NAME_CANCEL, to every node: the hook knows the call, not its key).
 *
 * Frames (bodies in pg_mesh_msg's format):
 *   PUBLISH   node -> home  u64 id, str nspace, u32 rank, str key, u32 type, bytes value
 *   UNPUBLISH node -> home  u64 id, str nspace, u32 rank, str key
 *   LOOKUP    node -> home  u64 id, u8 wait, str key
 *   CANCEL    node -> all   u64 id
 *   DROP      node -> all   str nspace
 *   ANSWER    home -> node  u64 id, u32 status, u8 found
 *                           [, str nspace, u32 rank, u32 type, bytes value]
 *                           (a home answers its own engine directly: the
 *                           answer comes from the loop already)
 * A node that cannot reach a key's home answers its engine
 * PMIX_ERR_UNREACH.
 */
#include <stdlib.h>
#include <string.h>

#include "gateway/job/pg_job_engine.h"
#include "gateway/mesh/pg_mesh_msg.h"
#include "gateway/proxy/pg_proxy_int.h"
#include "engine/pg_engine.h"
#include "wire/pg_hash.h"

enum {
    NAME_PUBLISH = PG_MESH_NAMES_FIRST,
    NAME_UNPUBLISH,
    NAME_LOOKUP,
    NAME_CANCEL,
    NAME_DROP,
    NAME_ANSWER,
};

/* A published name, at its home. */
typedef struct home_name {
    struct home_name *next;
    int node;              /* where its publisher runs */
    char *nspace;          /* the publisher */
    uint32_t rank;
    char *key;
    uint32_t type;         /* the value: a PMIx type and its bytes (+ NUL) */
    size_t len;
    char *data;
} home_name_t;

/* A lookup waiting for its name, at the name's home. */
typedef struct home_wait {
    struct home_wait *next;
    int node;
    uint64_t id;           /* the node's engine's */
    char *key;
} home_wait_t;

struct proxy_names {
    home_name_t *names;
    home_wait_t *waits;
};

/* The node that holds `key`: FNV-1a over the key, spread over the nodes. */
static int home_of(const proxy_t *p, const char *key)
{
    return (int)(pg_fnv1a(PG_FNV1A_START, key, strlen(key)) % (uint32_t)p->nnodes);
}

/* The node's engine, while its job runs (NULL before and after). */
static pg_engine_t *node_engine(const proxy_t *p)
{
    return p->run != NULL ? pg_job_engine_get(pg_run_engine(p->run)) : NULL;
}

static void name_free(home_name_t *n)
{
    free(n->nspace);
    free(n->key);
    free(n->data);
    free(n);
}

static void wait_free(home_wait_t *w)
{
    free(w->key);
    free(w);
}

static home_name_t **name_find(proxy_t *p, const char *key)
{
    home_name_t **at = &p->names->names;

    while (*at != NULL && strcmp((*at)->key, key) != 0)
        at = &(*at)->next;
    return at;
}

/* ---- answers, from a name's home ---- */

/* The answer to call `id` of node `node`: into this node's engine, or to
 * the node.  n: the name a lookup found, NULL otherwise. */
static void answer(proxy_t *p, int node, uint64_t id, pmix_status_t status, const home_name_t *n)
{
    pg_mesh_wr_t w;

    if (node == p->nodeid) {
        pg_value_t v;
        pg_proc_t pub;
        pg_engine_t *e = node_engine(p);

        if (n != NULL) {
            v = pg_value_bytes((pmix_data_type_t)n->type, n->data, n->len);
            pub = (pg_proc_t){ n->nspace, n->rank };
        }
        if (e != NULL)
            (void)pg_name_host_done(e, id, status, n != NULL ? &v : NULL,
                                    n != NULL ? &pub : NULL);
        return;
    }
    pg_mesh_wr_init(&w);
    pg_mesh_wr_u64(&w, id);
    pg_mesh_wr_u32(&w, (uint32_t)status);
    pg_mesh_wr_u8(&w, n != NULL);
    if (n != NULL) {
        pg_mesh_wr_str(&w, n->nspace);
        pg_mesh_wr_u32(&w, n->rank);
        pg_mesh_wr_u32(&w, n->type);
        pg_mesh_wr_bytes(&w, n->data, n->len);
    }
    (void)pg_mesh_wr_send(&w, p->mesh, (uint32_t)node, NAME_ANSWER); /* a lost node asks no more */
}

/* ---- the table, at the names' home ---- */

static void home_publish(proxy_t *p, int node, uint64_t id, const char *nspace, uint32_t rank,
                        const char *key, uint32_t type, const void *data, size_t len)
{
    home_name_t *n;

    if (*name_find(p, key) != NULL) {
        answer(p, node, id, PMIX_ERR_DUPLICATE_KEY, NULL);
        return;
    }
    n = calloc(1, sizeof(*n));
    if (n == NULL || (n->nspace = strdup(nspace)) == NULL || (n->key = strdup(key)) == NULL ||
        (n->data = malloc(len + 1)) == NULL) {
        if (n != NULL)
            name_free(n);
        answer(p, node, id, PMIX_ERR_NOMEM, NULL);
        return;
    }
    n->node = node;
    n->rank = rank;
    n->type = type;
    n->len = len;
    if (len > 0)
        memcpy(n->data, data, len);
    n->data[len] = '\0';
    n->next = p->names->names;
    p->names->names = n;
    answer(p, node, id, PMIX_SUCCESS, NULL);
    /* every lookup waiting for it, at once */
    for (home_wait_t **at = &p->names->waits; *at != NULL;) {
        home_wait_t *w = *at;

        if (strcmp(w->key, key) != 0) {
            at = &w->next;
            continue;
        }
        *at = w->next;
        answer(p, w->node, w->id, PMIX_SUCCESS, n);
        wait_free(w);
    }
}

static void home_unpublish(proxy_t *p, int node, uint64_t id, const char *nspace,
                          const char *key)
{
    home_name_t **at = name_find(p, key), *n = *at;

    if (n == NULL) {
        answer(p, node, id, PMIX_ERR_NOT_FOUND, NULL);
        return;
    }
    if (strcmp(n->nspace, nspace) != 0) {
        answer(p, node, id, PMIX_ERR_NO_PERMISSIONS, NULL);
        return;
    }
    *at = n->next;
    name_free(n);
    answer(p, node, id, PMIX_SUCCESS, NULL);
}

static void home_lookup(proxy_t *p, int node, uint64_t id, const char *key, bool wait)
{
    home_name_t *n = *name_find(p, key);
    home_wait_t *w;

    if (n != NULL || !wait) {
        answer(p, node, id, n != NULL ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, n);
        return;
    }
    w = calloc(1, sizeof(*w));
    if (w == NULL || (w->key = strdup(key)) == NULL) {
        free(w);
        answer(p, node, id, PMIX_ERR_NOMEM, NULL);
        return;
    }
    w->node = node;
    w->id = id;
    w->next = p->names->waits;
    p->names->waits = w;
}

static void home_cancel(proxy_t *p, int node, uint64_t id)
{
    for (home_wait_t **at = &p->names->waits; *at != NULL; at = &(*at)->next)
        if ((*at)->node == node && (*at)->id == id) {
            home_wait_t *w = *at;

            *at = w->next;
            wait_free(w);
            return;
        }
}

/* Job `nspace` ended on node `node`: the names its processes there
 * published go. */
static void home_drop(proxy_t *p, int node, const char *nspace)
{
    for (home_name_t **at = &p->names->names; *at != NULL;) {
        home_name_t *n = *at;

        if (n->node == node && strcmp(n->nspace, nspace) == 0) {
            *at = n->next;
            name_free(n);
        } else
            at = &n->next;
    }
}

/* ---- the engine's name hooks, on every node ---- */

/* A call for `key`'s home from this node, this node itself included:
 * sent, or (the home unreachable) failed at once. */
static void to_home(proxy_t *p, pg_mesh_wr_t *w, unsigned type, uint64_t id, const char *key)
{
    pg_engine_t *e = node_engine(p);

    if (pg_mesh_wr_send(w, p->mesh, (uint32_t)home_of(p, key), type) != 0 && id != 0 &&
        e != NULL)
        (void)pg_name_host_done(e, id, PMIX_ERR_UNREACH, NULL, NULL);
}

/* A word for every home, this node included. */
static void to_every_home(proxy_t *p, pg_mesh_wr_t *w, unsigned type)
{
    if (!w->bad) {
        (void)pg_mesh_send(p->mesh, (uint32_t)p->nodeid, type, w->buf, w->len);
        (void)pg_mesh_send(p->mesh, PG_MESH_ALL, type, w->buf, w->len);
    }
    pg_mesh_wr_free(w);
}

/* The fields a publish and an unpublish start with: the request's id, its
 * publisher and the key. */
static void wr_request(pg_mesh_wr_t *w, uint64_t id, const pg_proc_t *publisher, const char *key)
{
    pg_mesh_wr_init(w);
    pg_mesh_wr_u64(w, id);
    pg_mesh_wr_str(w, publisher->nspace);
    pg_mesh_wr_u32(w, publisher->rank);
    pg_mesh_wr_str(w, key);
}

void pg_proxy_name_publish(void *ctx, uint64_t id, const pg_proc_t *publisher, const char *key,
                        const pg_value_t *value)
{
    proxy_t *p = ctx;
    pg_mesh_wr_t w;

    wr_request(&w, id, publisher, key);
    pg_mesh_wr_u32(&w, value->type);
    pg_mesh_wr_bytes(&w, value->data, value->size);
    to_home(p, &w, NAME_PUBLISH, id, key);
}

void pg_proxy_name_unpublish(void *ctx, uint64_t id, const pg_proc_t *publisher, const char *key)
{
    proxy_t *p = ctx;
    pg_mesh_wr_t w;

    wr_request(&w, id, publisher, key);
    to_home(p, &w, NAME_UNPUBLISH, id, key);
}

void pg_proxy_name_lookup(void *ctx, uint64_t id, const pg_proc_t *requester, const char *key,
                       bool wait)
{
    proxy_t *p = ctx;
    pg_mesh_wr_t w;

    (void)requester;
    pg_mesh_wr_init(&w);
    pg_mesh_wr_u64(&w, id);
    pg_mesh_wr_u8(&w, wait);
    pg_mesh_wr_str(&w, key);
    to_home(p, &w, NAME_LOOKUP, id, key);
}

void pg_proxy_name_cancel(void *ctx, uint64_t id)
{
    proxy_t *p = ctx;
    pg_mesh_wr_t w;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_u64(&w, id);
    to_every_home(p, &w, NAME_CANCEL);
}

void pg_proxy_names_drop(void *ctx, const char *nspace)
{
    proxy_t *p = ctx;
    pg_mesh_wr_t w;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_str(&w, nspace);
    to_every_home(p, &w, NAME_DROP);
}

/* ---- frames ---- */

static void on_publish(void *arg, int src, const void *body, size_t len)
{
    char nspace[PMIX_MAX_NSLEN + 1], key[PMIX_MAX_KEYLEN + 1];
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t id = pg_mesh_rd_u64(&r);
    uint32_t rank, type;
    const void *data;
    size_t size;

    pg_mesh_rd_str(&r, nspace, sizeof(nspace));
    rank = pg_mesh_rd_u32(&r);
    pg_mesh_rd_str(&r, key, sizeof(key));
    type = pg_mesh_rd_u32(&r);
    data = pg_mesh_rd_bytes(&r, &size);
    if (pg_mesh_rd_done(&r))
        home_publish(arg, src, id, nspace, rank, key, type, data, size);
    else if (id != 0)
        answer(arg, src, id, PMIX_ERR_BAD_PARAM, NULL);
}

static void on_unpublish(void *arg, int src, const void *body, size_t len)
{
    char nspace[PMIX_MAX_NSLEN + 1], key[PMIX_MAX_KEYLEN + 1];
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t id = pg_mesh_rd_u64(&r);

    pg_mesh_rd_str(&r, nspace, sizeof(nspace));
    (void)pg_mesh_rd_u32(&r); /* the rank: a job's names are the job's */
    pg_mesh_rd_str(&r, key, sizeof(key));
    if (pg_mesh_rd_done(&r))
        home_unpublish(arg, src, id, nspace, key);
    else if (id != 0)
        answer(arg, src, id, PMIX_ERR_BAD_PARAM, NULL);
}

static void on_lookup(void *arg, int src, const void *body, size_t len)
{
    char key[PMIX_MAX_KEYLEN + 1];
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t id = pg_mesh_rd_u64(&r);
    bool wait = pg_mesh_rd_u8(&r) != 0;

    pg_mesh_rd_str(&r, key, sizeof(key));
    if (pg_mesh_rd_done(&r))
        home_lookup(arg, src, id, key, wait);
    else if (id != 0)
        answer(arg, src, id, PMIX_ERR_BAD_PARAM, NULL);
}

static void on_cancel(void *arg, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t id = pg_mesh_rd_u64(&r);

    if (pg_mesh_rd_done(&r))
        home_cancel(arg, src, id);
}

static void on_drop(void *arg, int src, const void *body, size_t len)
{
    char nspace[PMIX_MAX_NSLEN + 1];
    pg_mesh_rd_t r = pg_mesh_rd(body, len);

    pg_mesh_rd_str(&r, nspace, sizeof(nspace));
    if (pg_mesh_rd_done(&r))
        home_drop(arg, src, nspace);
}

/* A home's answer, into this node's engine. */
static void on_answer(void *arg, int src, const void *body, size_t len)
{
    char nspace[PMIX_MAX_NSLEN + 1];
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t id = pg_mesh_rd_u64(&r);
    pmix_status_t status = (pmix_status_t)pg_mesh_rd_u32(&r);
    bool found = pg_mesh_rd_u8(&r) != 0;
    pg_engine_t *e = node_engine(arg);
    pg_proc_t pub = { nspace, 0 };
    pg_value_t v = { 0 };

    (void)src;
    if (found) {
        pg_mesh_rd_str(&r, nspace, sizeof(nspace));
        pub.rank = pg_mesh_rd_u32(&r);
        v.type = (pmix_data_type_t)pg_mesh_rd_u32(&r);
        v.data = pg_mesh_rd_bytes(&r, &v.size);
    }
    if (!pg_mesh_rd_done(&r)) {
        status = PMIX_ERR_BAD_PARAM;
        found = false;
    }
    if (e != NULL && id != 0)
        (void)pg_name_host_done(e, id, status, found ? &v : NULL, found ? &pub : NULL);
}

int pg_proxy_names_setup(proxy_t *p)
{
    static const struct {
        unsigned type;
        pg_mesh_recv_fn fn;
    } frames[] = { /* every node is some names' home */
        { NAME_PUBLISH, on_publish }, { NAME_UNPUBLISH, on_unpublish },
        { NAME_LOOKUP, on_lookup },   { NAME_CANCEL, on_cancel },
        { NAME_DROP, on_drop },       { NAME_ANSWER, on_answer },
    };

    if (p->mesh == NULL)
        return 0;
    p->names = calloc(1, sizeof(*p->names));
    if (p->names == NULL)
        return -1;
    for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
        (void)pg_mesh_on(p->mesh, frames[i].type, frames[i].fn, p);
    return 0;
}

void pg_proxy_names_free(proxy_t *p)
{
    if (p->names == NULL)
        return;
    while (p->names->names != NULL) {
        home_name_t *n = p->names->names;

        p->names->names = n->next;
        name_free(n);
    }
    while (p->names->waits != NULL) {
        home_wait_t *w = p->names->waits;

        p->names->waits = w->next;
        wait_free(w);
    }
    free(p->names);
    p->names = NULL;
}
