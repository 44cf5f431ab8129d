/*
 * pg_mesh: the proxies' own channel (docs/proxy.md, "The mesh").
 *
 * Why it exists: the host runtime starts the proxies and runs their
 * fences, but it does not tell a proxy that another one died (Slurm
 * without -K1), nor which failure of the job came first, nor carry the
 * features a host lacks (names, events, groups, spawn across nodes).
 * The K proxies of a job therefore keep a small TCP channel among
 * themselves, shaped so that no node's share grows with K
 * (pg_mesh_topo.h): node i links with i +- 2^j, at most 2 ceil(log2 K)
 * links, and a frame reaches any node in at most ceil(log2 K) hops, each
 * node passing on what is for others.  Data that should not be relayed
 * (a fence's parts, direct-modex values) goes over a direct link, dialed
 * when first needed (pg_mesh_send_direct); at most EXTRA_MAX of those
 * stay open.  Node 0 has no links the others lack: it only roots the
 * tree over which the start-up and the end are agreed, and the features
 * that need one node to decide (the job's end, names, spawn, groups)
 * send it their frames.  Only the job's proxies may join: the secret is derived from
 * random bytes every node contributed to the start-up allgather through
 * the host, and each link proves it knows the secret (HMAC-SHA256 over
 * fresh nonces) before any frame is taken.
 *
 * Frames: a 16-byte header (u32 body length, u16 type, u16 flags, u32
 * source node, u32 destination node, big-endian) and a body of at most
 * PG_MESH_BODY_MAX bytes.  Types below PG_MESH_TYPE_USER are the
 * channel's own; users register one callback per type.
 *
 * Liveness: a link is lost when its connection closes without a goodbye,
 * or when nothing arrived for the timeout (heartbeats are sent while a
 * link is otherwise idle; a node that knows it will be busy says so first,
 * pg_mesh_quiet).  Lost nodes are reported through one callback: a node
 * hears of its own links' nodes (the others' loss reaches it through the
 * features, the job's end).
 *
 * Threads and ownership: everything runs on the libevent thread of
 * `base`; callbacks run there, with the body borrowed for the call.  They
 * may send and leave, but must not free the mesh.  pg_mesh_t owns its
 * listener, links and timers.
 */
#ifndef PG_MESH_H
#define PG_MESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
typedef struct pg_mesh pg_mesh_t;

enum {
    PG_MESH_BODY_MAX = 16 << 20,  /* largest body a frame carries */
    PG_MESH_CARD_MAX = 512,       /* a node's card text, with its NUL */
    PG_MESH_TYPE_USER = 64,       /* first type free for users */
    PG_MESH_TYPE_MAX = 256,       /* types are below this */
};

/* The users' frame types, in one list so they never collide: a feature
 * that crosses nodes adds its own here (docs/proxy.md), in the
 * block of numbers its family owns, so that the families grow apart. */
enum pg_mesh_type {
    /* the job's end (pg_jobend): 64.. */
    PG_MESH_JOBEND_FAIL = PG_MESH_TYPE_USER, /* a node's first failure, to node 0 */
    PG_MESH_JOBEND_END,                      /* the job's end, flooded over every link */

    /* names and events: 80.. */
    PG_MESH_NAMES_FIRST = 80,

    /* job data (direct modex, subset fences): 112.. */
    PG_MESH_DATA_FIRST = 112,
    PG_MESH_DATA_FENCE = PG_MESH_DATA_FIRST, /* a node's part of a fence (pg_proxy_fence) */
    PG_MESH_DATA_GET,                        /* a direct-modex get, to the owner (pg_proxy_modex) */
    PG_MESH_DATA_GOT,                        /* its answer, from the owner */
    PG_MESH_DATA_DROP,                       /* the getter no longer waits */

    /* dynamic jobs (groups, spawn, connect): 144.. (pg_proxy_spawn.c, pg_proxy_group.c) */
    PG_MESH_DYN_FIRST = 144,
    PG_MESH_SPAWN_REQ = PG_MESH_DYN_FIRST, /* a rank's spawn, to node 0 */
    PG_MESH_SPAWN_START,    /* placed by node 0: every running node builds its share */
    PG_MESH_SPAWN_LAUNCHED, /* a node's share started (or could not), to node 0 */
    PG_MESH_SPAWN_SETTLED,  /* the spawn's outcome (a failed one: every node takes back) */
    PG_MESH_SPAWN_FENCE,    /* a spawned job's fence: a node's part, to node 0 */
    PG_MESH_SPAWN_FENCED,   /* ...every node's part, from node 0 */
    PG_MESH_SPAWN_ENDED,    /* a node's ranks of a spawned job are all gone, to node 0 */
    PG_MESH_SPAWN_JOB_END,  /* a spawned job is over everywhere (PMIX_EVENT_JOB_END) */
    PG_MESH_DYN_NODE_DONE,  /* a node's ranks are all gone: nothing more starts there */
    /* groups (pg_proxy_group.c): 160.. */
    PG_MESH_GROUP_ARRIVE = PG_MESH_DYN_FIRST + 16, /* a node's members of a collective, to node 0 */
    PG_MESH_GROUP_SETTLED,  /* ...its outcome and context id, from node 0 */
    PG_MESH_GROUP_LEFT,     /* a member left a group, to every node */
    PG_MESH_GROUP_INVITE,   /* a leader's invitation, to every node */
    PG_MESH_GROUP_CANCEL,   /* a node gave a collective up (its timeout), to node 0 */

    /* the job's status across nodes (pmigate status): 192.. */
    PG_MESH_STATUS_FIRST = 192,
};

/* Frame destination: every node but the sender. */
#define PG_MESH_ALL UINT32_MAX

typedef struct pg_mesh_opts {
    int nodeid;
    int nnodes;
    uint64_t heartbeat_ns; /* idle link -> heartbeat; 0: 0.5 s */
    uint64_t timeout_ns;   /* silence -> lost; 0: PMIGATE_MESH_TIMEOUT or 3 s */
    uint64_t connect_ns;   /* links up by then from pg_mesh_new (the host's exchange
                              before pg_mesh_start counts), or fail; 0:
                              PMIGATE_MESH_CONNECT or 30 s */
    uint64_t start_by;     /* pg_clock_now() time by which the links are up, when
                              earlier than connect_ns from now (--timeout); 0: none */
    const char *addr;      /* the one address to listen on and advertise;
                              NULL: PMIGATE_MESH_ADDR or every address */
} pg_mesh_opts_t;

/* A frame of a registered type from node `src`. */
typedef void (*pg_mesh_recv_fn)(void *arg, int src, const void *body, size_t len);

/* Node `node` (one this node linked with, or dialed) can no longer be
 * reached: it said goodbye (orderly = 1), or its link broke or fell
 * silent, or it never joined (orderly = 0, `why` says which). */
typedef void (*pg_mesh_gone_fn)(void *arg, int node, int orderly, const char *why);

/* Opens the listener (so the card can be handed out before any peer is
 * known).  NULL with err set on failure. */
pg_mesh_t *pg_mesh_new(struct event_base *base, const pg_mesh_opts_t *opts, char *err,
                       size_t errlen);
/* Closes every link at once (no goodbye) and frees.  NULL is ignored. */
void pg_mesh_free(pg_mesh_t *m);

/* This node's card for the start-up allgather: "port token addr[,addr...]"
 * (the token: 32 random bytes in hex).  Valid until pg_mesh_free. */
const char *pg_mesh_card(const pg_mesh_t *m);

/* Every node's card ([nnodes], this node's included, as the allgather
 * returned them): derives the job secret and starts the links (the lower
 * node of each pair of neighbours dials).  Returns 0, or -1 with err set
 * (a card that does not parse). */
int pg_mesh_start(pg_mesh_t *m, const char *const *cards, char *err, size_t errlen);

/* Runs the loop until every node's links are up (node 0 said READY down
 * the tree), or the connect deadline passes or a neighbour is lost.
 * Returns 0, or -1 with err set. */
int pg_mesh_wait_ready(pg_mesh_t *m, char *err, size_t errlen);

/* When the start-up must be over (pg_clock_now() time): pg_mesh_new's time
 * plus connect_ns, or start_by when earlier.  What the owner does before
 * pg_mesh_start (the host's exchange of the cards) must end by then too. */
uint64_t pg_mesh_start_deadline(const pg_mesh_t *m);

/* The callback for frames of `type` (PG_MESH_TYPE_USER <= type <
 * PG_MESH_TYPE_MAX); fn NULL unregisters.  0 or -1 (bad type). */
int pg_mesh_on(pg_mesh_t *m, unsigned type, pg_mesh_recv_fn fn, void *arg);
void pg_mesh_on_gone(pg_mesh_t *m, pg_mesh_gone_fn fn, void *arg);

/* Queues a frame for node `dst` (or PG_MESH_ALL: every other node),
 * passed on by the nodes on its way.  Frames from one node to another
 * arrive in the order sent, whether sent to it or to all.  A frame for
 * this node itself (node 0 sending "to node 0") goes to its own handler
 * on the loop's next turn, never within this call, in the order sent.
 * The body is copied.  Returns 0, or -1 when `dst` cannot be reached
 * (gone, or no way around the gone) or the frame is too big.  A frame to
 * all that meets a gone node on its way is lost beyond it: what every
 * node must hear whatever was lost goes by pg_mesh_send_neighbours. */
int pg_mesh_send(pg_mesh_t *m, uint32_t dst, unsigned type, const void *body, size_t len);

/* The same over a direct link to `dst`, dialed when there is none (the
 * frame waits for it): bulk data that no other node should carry.  The
 * order holds among a node's direct frames to another, not between them
 * and its pg_mesh_send frames. */
int pg_mesh_send_direct(pg_mesh_t *m, uint32_t dst, unsigned type, const void *body, size_t len);

/* The frame to every node this one holds a link with (a flood: each
 * receiver passes it on once, as its feature decides).  Returns how many
 * links took it, or -1. */
int pg_mesh_send_neighbours(pg_mesh_t *m, unsigned type, const void *body, size_t len);

/* This node is about to be busy (the loop blocked) for up to ns: its
 * peers wait that long more before taking its silence for a loss.  Sent
 * at once when the link's queue is empty. */
void pg_mesh_quiet(pg_mesh_t *m, uint64_t ns);

/* This node's work is done: once every node's is (agreed up the tree,
 * node 0 saying so down), pg_mesh_all_done turns true.  Why wait: the
 * others' frames pass through this node; it leaves only when none will
 * come. */
void pg_mesh_done(pg_mesh_t *m);
bool pg_mesh_all_done(const pg_mesh_t *m);

/* Orderly leave: a goodbye on every link after what is queued; the links
 * close once written.  Runs the loop up to `ms` for that; returns 0 when
 * everything was written. */
int pg_mesh_leave(pg_mesh_t *m, int ms);

/* 1 when node `node` is linked, or reachable through others once the
 * mesh is up, and not gone. */
int pg_mesh_reachable(const pg_mesh_t *m, int node);

/* What this node's mesh did so far, from its own counting: the bytes and
 * frames it wrote to its links (headers and tags included, the frames it
 * relayed for others too), the part of them relayed, and the links it
 * holds (UP) now and held at most at once.  For `pmigate proxy`'s timing
 * lines and the scale benchmark (docs/performance.md). */
typedef struct pg_mesh_counters {
    uint64_t sent_bytes, sent_frames, relayed_bytes;
    int links, links_max;
} pg_mesh_counters_t;

void pg_mesh_counters(const pg_mesh_t *m, pg_mesh_counters_t *c);

struct event_base *pg_mesh_base(const pg_mesh_t *m);
int pg_mesh_nodeid(const pg_mesh_t *m);
int pg_mesh_nnodes(const pg_mesh_t *m);

#endif
