/*
 * pg_proxy_group: process groups of a job over several nodes
 * (PMIx_Group_construct / _destruct / _leave / _invite / _join with
 * members on several nodes), carried by the proxies' mesh
 * (docs/proxy.md, "Groups across nodes").
 *
 * Why: neither host runtime has groups, and a group is a collective over
 * its members wherever they run, with one context id every member agrees
 * on.  Each node's engine keeps the groups of its own members and runs
 * the collective among them (pg_group.c); when they have all joined it
 * hands the collective to the host (the engine's group hook) and this
 * file settles it at node 0: node 0 counts the members that
 * arrived from every node under the collective's tag (a group runs one
 * construct, destruct or invite at a time) and, once they are all in,
 * answers every node that had members -- with a fresh context id for a
 * construct or an invite, and every node's blob (what the members shared,
 * PMIX_GROUP_INFO; for an invite, the invitees' answers).  Node 0 settles
 * every construct, a node-local one too, so the ids are the job's: no two
 * groups share one.  A member's leave is applied on its node (which raises
 * PMIX_GROUP_LEFT; the event crosses nodes as every event does) and passed
 * to the other nodes, whose engines drop the member silently.  An
 * invitation goes from the leader's node to every node before the
 * invitees hear PMIX_GROUP_INVITED, so an invitee anywhere can answer.  A
 * node's message to itself takes the loop's next turn (pg_proxy_dyn.c):
 * the engine is never answered inside its own hook.
 *
 * Frames (bodies in pg_mesh_msg's format):
 *   ARRIVE   node -> node 0  str tag, u64 id, u64 nmembers, u64 nlocal,
 *                         bytes blob (the node's members' shares or answers)
 *   SETTLED  node 0 -> node  u64 id, u32 status, u64 cid, bytes blob (every node's)
 *   CANCEL   node -> node 0  u64 id   (the node's engine gave the collective up: PMIX_TIMEOUT)
 *   LEFT     node -> all  str group, str nspace, u32 rank
 *   INVITE   node -> all  str group, str leader nspace, u32 leader rank, u32 n,
 *                         n x (str nspace, u32 rank)   (everyone invited, the leader too)
 * A node that cannot reach node 0 answers its engine PMIX_ERR_UNREACH.
 */
#include <stdlib.h>
#include <string.h>

#include "gateway/job/pg_job_engine.h"
#include "gateway/mesh/pg_mesh_msg.h"
#include "gateway/proxy/pg_proxy_int.h"
#include "engine/pg_engine.h"

enum { TAG_MAX = PMIX_MAX_NSLEN + 3 }; /* "c:" + a group name + NUL */

/* A node's members, arrived at node 0. */
typedef struct arrival {
    int node;
    uint64_t id;           /* the node's engine's */
    uint64_t nlocal;       /* its members */
} arrival_t;

/* A collective waiting for members at node 0. */
typedef struct coord_coll {
    struct coord_coll *next;
    char tag[TAG_MAX];
    uint64_t nmembers, arrived;
    bool mismatch;         /* nodes disagree on the member count */
    arrival_t *nodes;      /* [nnodes] at most: one arrival per node */
    int nnodes;
    unsigned char *shares; /* the nodes' shares so far, concatenated */
    size_t size;
} coord_coll_t;

struct pg_proxy_group {
    coord_coll_t *colls;
    uint64_t last_cid;     /* the job's context ids, handed out here */
};

/* The node's engine, while its job runs (NULL before and after). */
static pg_engine_t *group_engine(const proxy_t *p)
{
    return p->run != NULL ? pg_job_engine_get(pg_run_engine(p->run)) : NULL;
}

static void coll_free(coord_coll_t *c)
{
    free(c->nodes);
    free(c->shares);
    free(c);
}

static coord_coll_t *coll_find(proxy_t *p, const char *tag)
{
    coord_coll_t *c;

    for (c = p->group->colls; c != NULL; c = c->next)
        if (strcmp(c->tag, tag) == 0)
            return c;
    c = calloc(1, sizeof(*c));
    if (c == NULL || (c->nodes = calloc((size_t)p->nnodes, sizeof(*c->nodes))) == NULL) {
        free(c);
        return NULL;
    }
    strcpy(c->tag, tag); /* bounded by the reader */
    c->next = p->group->colls;
    p->group->colls = c;
    return c;
}

static void coll_unlink(proxy_t *p, coord_coll_t *c)
{
    coord_coll_t **at = &p->group->colls;

    while (*at != c)
        at = &(*at)->next;
    *at = c->next;
}

/* The answer to node `node`'s collective `id`. */
static void settle_node(proxy_t *p, int node, uint64_t id, pmix_status_t status, uint64_t cid,
                        const void *shares, size_t size)
{
    pg_mesh_wr_t w;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_u64(&w, id);
    pg_mesh_wr_u32(&w, (uint32_t)status);
    pg_mesh_wr_u64(&w, cid);
    pg_mesh_wr_bytes(&w, shares, size);
    (void)pg_proxy_dyn_send(p, (uint32_t)node, PG_MESH_GROUP_SETTLED, &w); /* a lost node waits no more */
    pg_mesh_wr_free(&w);
}

/* Every member is in: each node that had members hears the outcome. */
static void coll_settle(proxy_t *p, coord_coll_t *c)
{
    bool agreed = !c->mismatch && c->arrived == c->nmembers;
    pmix_status_t status = agreed ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
    bool makes = c->tag[0] == 'c' || c->tag[0] == 'i'; /* a construct, an invite */
    uint64_t cid = status == PMIX_SUCCESS && makes ? ++p->group->last_cid : 0;

    for (int i = 0; i < c->nnodes; i++)
        settle_node(p, c->nodes[i].node, c->nodes[i].id, status, cid, c->shares, c->size);
    coll_unlink(p, c);
    coll_free(c);
}

/* ARRIVE, at node 0. */
static void on_arrive(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    char tag[TAG_MAX];
    uint64_t id, nmembers, nlocal;
    const void *shares;
    size_t size;
    unsigned char *grown;
    coord_coll_t *c;

    pg_mesh_rd_str(&r, tag, sizeof(tag));
    id = pg_mesh_rd_u64(&r);
    nmembers = pg_mesh_rd_u64(&r);
    nlocal = pg_mesh_rd_u64(&r);
    shares = pg_mesh_rd_bytes(&r, &size);
    if (!pg_mesh_rd_done(&r) || p->nodeid != 0 || tag[0] == '\0' || nlocal == 0)
        return;
    if ((c = coll_find(p, tag)) == NULL) {
        settle_node(p, src, id, PMIX_ERR_NOMEM, 0, NULL, 0);
        return;
    }
    for (int i = 0; i < c->nnodes; i++) {
        if (c->nodes[i].node == src) { /* a node arrives once per instance */
            settle_node(p, src, id, PMIX_ERR_BAD_PARAM, 0, NULL, 0);
            return;
        }
    }
    if (size > 0) {
        if ((grown = realloc(c->shares, c->size + size)) == NULL) {
            settle_node(p, src, id, PMIX_ERR_NOMEM, 0, NULL, 0);
            return;
        }
        memcpy(grown + c->size, shares, size);
        c->shares = grown;
        c->size += size;
    }
    if (c->nnodes == 0)
        c->nmembers = nmembers;
    c->mismatch |= c->nmembers != nmembers;
    c->nodes[c->nnodes++] = (arrival_t){ src, id, nlocal };
    c->arrived += nlocal;
    if (c->arrived >= c->nmembers || c->nnodes == p->nnodes)
        coll_settle(p, c);
}

/* CANCEL, at node 0: node `src` withdraws its members from collective
 * `id`.  The shares it brought stay; its members bring the same again,
 * and an engine takes a member's share once. */
static void on_cancel(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t id = pg_mesh_rd_u64(&r);

    if (!pg_mesh_rd_done(&r) || p->nodeid != 0)
        return;
    for (coord_coll_t *c = p->group->colls; c != NULL; c = c->next) {
        for (int i = 0; i < c->nnodes; i++) {
            if (c->nodes[i].node != src || c->nodes[i].id != id)
                continue;
            c->arrived -= c->nodes[i].nlocal;
            c->nodes[i] = c->nodes[--c->nnodes];
            if (c->nnodes == 0) {
                coll_unlink(p, c);
                coll_free(c);
            }
            return;
        }
    }
}

/* SETTLED, on every node that had members. */
static void on_settled(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    uint64_t id = pg_mesh_rd_u64(&r);
    pmix_status_t status = (pmix_status_t)pg_mesh_rd_u32(&r);
    uint64_t cid = pg_mesh_rd_u64(&r);
    size_t size;
    const void *shares = pg_mesh_rd_bytes(&r, &size);
    pg_engine_t *e = group_engine(p);

    if ((src != 0 && src != p->nodeid) || !pg_mesh_rd_done(&r) || e == NULL)
        return;
    /* stale (timed out here): ignored */
    (void)pg_group_host_done(e, id, status, cid, size > 0 ? shares : NULL, size);
    pg_job_engine_touch(pg_run_engine(p->run));
}

/* LEFT, on the other nodes. */
static void on_left(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    char group[PMIX_MAX_NSLEN + 1], nspace[PMIX_MAX_NSLEN + 1];
    pg_engine_t *e = group_engine(p);

    pg_mesh_rd_str(&r, group, sizeof(group));
    pg_mesh_rd_str(&r, nspace, sizeof(nspace));
    pg_proc_t who = { nspace, pg_mesh_rd_u32(&r) };
    if (src == p->nodeid || !pg_mesh_rd_done(&r) || e == NULL)
        return;
    (void)pg_group_member_left(e, &who, group);
    pg_job_engine_touch(pg_run_engine(p->run));
}

/* INVITE, on the other nodes: the invitation their invitees may answer. */
static void on_invite(proxy_t *p, int src, const void *body, size_t len)
{
    pg_mesh_rd_t r = pg_mesh_rd(body, len);
    char group[PMIX_MAX_NSLEN + 1], nspace[PMIX_MAX_NSLEN + 1];
    pg_engine_t *e = group_engine(p);
    uint32_t n;
    pg_proc_t *members = NULL;
    char (*names)[PMIX_MAX_NSLEN + 1] = NULL;

    pg_mesh_rd_str(&r, group, sizeof(group));
    pg_mesh_rd_str(&r, nspace, sizeof(nspace));
    pg_proc_t leader = { nspace, pg_mesh_rd_u32(&r) };
    n = pg_mesh_rd_u32(&r);
    if (r.bad || n == 0 || n > r.left / 8) /* each member: 8 bytes at least */
        return;
    members = calloc(n, sizeof(*members));
    names = calloc(n, sizeof(*names));
    for (uint32_t i = 0; members != NULL && names != NULL && i < n; i++) {
        members[i].nspace = pg_mesh_rd_str(&r, names[i], sizeof(names[i]));
        members[i].rank = pg_mesh_rd_u32(&r);
    }
    if (src != p->nodeid && members != NULL && names != NULL && pg_mesh_rd_done(&r) && e != NULL)
        (void)pg_group_invited(e, group, &leader, members, n);
    free(members);
    free(names);
}

/* The engine's group hook: this node's members of a collective joined. */
void pg_proxy_group(void *ctx, const pg_host_group_t *g)
{
    proxy_t *p = ctx;
    pg_mesh_wr_t w;
    int rc;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_str(&w, g->tag);
    pg_mesh_wr_u64(&w, g->id);
    pg_mesh_wr_u64(&w, g->nmembers);
    pg_mesh_wr_u64(&w, g->nlocal);
    pg_mesh_wr_bytes(&w, g->shares, g->size);
    rc = strlen(g->tag) < TAG_MAX ? pg_proxy_dyn_send(p, 0, PG_MESH_GROUP_ARRIVE, &w) : -1;
    pg_mesh_wr_free(&w);
    if (rc != 0) { /* answered from the loop, never inside the hook */
        pg_mesh_wr_init(&w);
        pg_mesh_wr_u64(&w, g->id);
        pg_mesh_wr_u32(&w, (uint32_t)PMIX_ERR_UNREACH);
        pg_mesh_wr_u64(&w, 0);
        pg_mesh_wr_bytes(&w, NULL, 0);
        (void)pg_proxy_dyn_send(p, (uint32_t)p->nodeid, PG_MESH_GROUP_SETTLED, &w);
        pg_mesh_wr_free(&w);
    }
}

/* The engine's group_cancel hook: this node gave collective `id` up. */
void pg_proxy_group_cancel(void *ctx, uint64_t id)
{
    proxy_t *p = ctx;
    pg_mesh_wr_t w;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_u64(&w, id);
    (void)pg_proxy_dyn_send(p, 0, PG_MESH_GROUP_CANCEL, &w); /* node 0 unreachable: nothing to forget */
    pg_mesh_wr_free(&w);
}

/* The engine's group_left hook: a member served here left. */
void pg_proxy_group_left(void *ctx, const pg_proc_t *proc, const char *name)
{
    proxy_t *p = ctx;
    pg_mesh_wr_t w;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_str(&w, name);
    pg_mesh_wr_str(&w, proc->nspace);
    pg_mesh_wr_u32(&w, proc->rank);
    (void)pg_proxy_dyn_send(p, PG_MESH_ALL, PG_MESH_GROUP_LEFT, &w); /* an unreachable node has ended */
    pg_mesh_wr_free(&w);
}

/* The engine's group_invite hook: a leader served here invites. */
void pg_proxy_group_invite(void *ctx, const char *name, const pg_proc_t *leader,
                        const pg_proc_t *members, size_t nmembers)
{
    proxy_t *p = ctx;
    pg_mesh_wr_t w;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_str(&w, name);
    pg_mesh_wr_str(&w, leader->nspace);
    pg_mesh_wr_u32(&w, leader->rank);
    pg_mesh_wr_u32(&w, (uint32_t)nmembers);
    for (size_t i = 0; i < nmembers; i++) {
        pg_mesh_wr_str(&w, members[i].nspace);
        pg_mesh_wr_u32(&w, members[i].rank);
    }
    /* a node it cannot reach has ended: its invitees never answer, and the
     * invite's PMIX_TIMEOUT or the job's end settles it */
    (void)pg_proxy_dyn_send(p, PG_MESH_ALL, PG_MESH_GROUP_INVITE, &w);
    pg_mesh_wr_free(&w);
}

int pg_proxy_group_setup(proxy_t *p)
{
    p->group = calloc(1, sizeof(*p->group));
    if (p->group == NULL)
        return -1;
    if (pg_proxy_dyn_on(p, PG_MESH_GROUP_ARRIVE, on_arrive) != 0 ||
        pg_proxy_dyn_on(p, PG_MESH_GROUP_SETTLED, on_settled) != 0 ||
        pg_proxy_dyn_on(p, PG_MESH_GROUP_LEFT, on_left) != 0 ||
        pg_proxy_dyn_on(p, PG_MESH_GROUP_INVITE, on_invite) != 0 ||
        pg_proxy_dyn_on(p, PG_MESH_GROUP_CANCEL, on_cancel) != 0)
        return -1;
    return 0;
}

void pg_proxy_group_free(proxy_t *p)
{
    if (p->group == NULL)
        return;
    while (p->group->colls != NULL) {
        coord_coll_t *c = p->group->colls;

        p->group->colls = c->next;
        coll_free(c);
    }
    free(p->group);
    p->group = NULL;
}
