/*
 * pg_mesh_int: what the mesh's three rooms share (the mesh itself, its
 * links, its addresses), and nothing else includes.
 *
 * Why a header of its own: pg_mesh.c grew past what one file should hold,
 * so the channel is split by what each part knows about --
 *   pg_mesh.c       the API, routing (pg_mesh_topo's shape), frames that
 *                   wait for a link, the start-up and the end agreed over
 *                   the tree, liveness (ticks, heartbeats, silence, the
 *                   start deadline), leaving, closing spare links;
 *   pg_mesh_link.c  one link: framing, the handshake, reading and writing
 *                   frames, dropping a link and reporting its node gone;
 *   pg_mesh_net.c   addresses: listening and the card, accepting, reading
 *                   a node's card and dialing it.
 * The calls go one way: pg_mesh.c calls pg_mesh_net.c and pg_mesh_link.c,
 * pg_mesh_net.c calls pg_mesh_link.c, and what a link must tell the rooms
 * above it (it came up, a dial failed, a frame is for another node, a
 * channel frame of the tree's) it tells through the callbacks pg_mesh_new
 * sets in the struct.
 * The struct below is the one state they share; a room changes only its
 * own fields' meaning (see the comments on each).
 */
#ifndef PG_MESH_INT_H
#define PG_MESH_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <event2/util.h>

#include "gateway/mesh/pg_mesh.h"
#include "gateway/mesh/pg_mesh_queue.h"
#include "gateway/mesh/pg_mesh_auth.h"
#include "gateway/mesh/pg_mesh_topo.h"

struct bufferevent;
struct event;
struct evconnlistener;

enum {
    HDR_LEN = 16,
    TAG_LEN = PG_MESH_TAG_LEN,  /* after the body of every frame on an UP link */
    NONCE_LEN = 16,
    TOKEN_LEN = 32,
    ADDRS_MAX = 8,              /* addresses on a card */
    PENDING_MAX = 64,           /* unauthenticated links held at once */
    REFUSALS_LOG_MS = 10000,    /* refused connections: one line per window */
    PG_MESH_HANDSHAKE_MS = 5000,
    DIAL_ATTEMPT_MS = 2000,     /* one address's connect + handshake */
    DIAL_RETRY_MS = 100,        /* after every address failed */
    TICK_MS = 100,              /* heartbeats, silence, deadlines */
    EXTRA_MAX = 8,              /* links beyond the shape's (direct data) kept at once */
    /* the channel's own frame types */
    T_HELLO = 1,
    T_CHALLENGE = 2,
    T_PROOF = 3,
    T_HEARTBEAT = 4,
    T_BYE = 5,
    T_QUIET = 6,
    T_READY = 7, /* down the tree from node 0: every node is linked */
    T_REFUSED = 8, /* a frame from you failed authentication: this link closes */
    T_UP = 9,         /* up the tree: this node's subtree is linked */
    T_DONE = 10,      /* up the tree: this node's subtree is done */
    T_ALLDONE = 11,   /* down the tree from node 0: every node is done */
    T_CLOSE = 12,     /* a spare link closes (not the node): send nothing more on it */
    T_CLOSE_ACK = 13, /* ...and nothing was: the closer drops it */
};

enum { TAKE_CLOSED = 3 }; /* channel_fn: drop the link, a spare one closed */

typedef enum link_state {
    L_DIALING,    /* connect() in flight */
    L_HELLO_SENT, /* dialer: waiting for CHALLENGE */
    L_ACCEPTED,   /* acceptor: waiting for HELLO */
    L_CHALLENGED, /* acceptor: waiting for PROOF */
    L_UP,
} link_state_t;

typedef struct link {
    pg_mesh_t *m;
    struct bufferevent *bev;
    link_state_t state;
    int node;                       /* the peer, -1 until it said */
    unsigned char my_nonce[NONCE_LEN];
    unsigned char peer_nonce[NONCE_LEN];
    pg_mesh_mac_t *tx, *rx;         /* UP: each direction's key and sequence */
    uint64_t deadline;              /* of the handshake (or the dial attempt) */
    uint64_t last_rx, last_tx;      /* pg_clock_now() */
    uint64_t quiet_until;           /* the peer said it may be silent until */
    uint64_t last_used;             /* a frame of the mesh's users last went out */
    bool bye;                       /* the peer said goodbye */
    bool dup;                       /* dropped for the other link of the same two nodes:
                                       not a refusal worth a log line */
    bool closing;                   /* a spare link closing (CLOSE said or heard) */
    char peer[64];                  /* accepted: "address:port" it came from, for the log */
    struct link *next;              /* in m->pending */
    struct dial *dial;              /* dialed, not UP yet: the dial it is an attempt of */
} link_t;

/* One thing every node must have before node 0 says so to all, agreed
 * over the tree rooted at node 0 (pg_mesh.c). */
typedef struct tree_vote {
    int children_in; /* children whose subtree has it */
    bool sent;       /* this node's subtree has it: said to the parent */
    bool all;        /* every node has it (node 0 said so, down the tree) */
} tree_vote_t;

typedef struct handler {
    pg_mesh_recv_fn fn;
    void *arg;
} handler_t;

struct pg_mesh {
    struct event_base *base;
    int nodeid, nnodes;
    uint64_t heartbeat_ns, timeout_ns, connect_ns;
    struct evconnlistener *listener;
    char card[PG_MESH_CARD_MAX];
    unsigned char token[TOKEN_LEN];
    unsigned char secret[PG_MESH_HASH_LEN];
    bool started;
    uint64_t created_at;            /* pg_mesh_new: the start-up's clock starts */
    uint64_t start_deadline;        /* set by pg_mesh_new, not pg_mesh_start: the host's
                                       exchange before the start counts */
    char **cards;                   /* [nnodes] every node's card (pg_mesh_start) */
    link_t **peers;                 /* [nnodes] the link to each node, or NULL */
    bool *gone;                     /* [nnodes] reported gone (once) */
    bool *joined;                   /* [nnodes] was UP once */
    pg_mesh_queue_t *waiting;       /* [nnodes] frames for a link not up yet (dst kept) */
    link_t *pending;                /* accepted or dialing, not UP yet */
    int npending;
    /* the shape (pg_mesh_topo): this node's neighbours, and its place in
     * the tree rooted at node 0 */
    int nbrs[2 * PG_TOPO_LEVELS_MAX], nnbrs;
    int parent, children[PG_TOPO_LEVELS_MAX], nchildren;
    int extra_links;                /* UP links that are not the shape's */
    /* pg_mesh_net.c: nodes being dialed */
    struct dial *dials;
    char dial_err[160];             /* the last dial's failure, for the log */
    struct event *tick;
    uint64_t last_tick;
    handler_t handlers[PG_MESH_TYPE_MAX];
    pg_mesh_gone_fn gone_fn;
    void *gone_arg;
    bool leaving;
    bool refused;                   /* a link was refused at start (wait_ready fails) */
    /* agreed over the tree (pg_mesh.c): every node linked (UP, READY), done
     * (DONE, ALLDONE) */
    tree_vote_t up, done;
    bool done_here;
    char refused_why[160];
    /* connections refused before their handshake (pg_mesh_net.c): told
     * once, then counted, one line per REFUSALS_LOG_MS */
    unsigned refusals;              /* since refusals_since, not told yet */
    uint64_t refusals_since;
    bool refusals_told;             /* a line went out in this window */
    char refusal_last[200];         /* the last one: why, from where */
    /* What a link tells the rooms above it.  pg_mesh_link.c is the lowest
     * room and calls none of pg_mesh_net.c's or pg_mesh.c's functions (a
     * circle of calls would tie the three into one); pg_mesh_new sets
     * these instead. */
    void (*link_up_fn)(pg_mesh_t *m, int node);   /* a link came UP (pg_mesh.c) */
    void (*dial_lost_fn)(pg_mesh_t *m, int node); /* a dial's attempt dropped (net) */
    void (*closed_fn)(pg_mesh_t *m, int node);    /* a spare link closed (pg_mesh.c) */
    void (*node_gone_fn)(pg_mesh_t *m, int node); /* before the owner hears (pg_mesh.c) */
    /* a channel frame of the tree's or of closing (T_READY, T_UP ..
     * T_CLOSE_ACK): 0, TAKE_CLOSED (the link is to be dropped, closed) or
     * -1 (it broke the protocol) */
    int (*channel_fn)(pg_mesh_t *m, link_t *l, unsigned type);
    bool (*dialing_fn)(const pg_mesh_t *m, int node); /* net: a dial of node's is on */
    /* an accepted link dropped before its handshake finished (net: the log) */
    void (*stranger_dropped_fn)(pg_mesh_t *m, const link_t *l, const char *why);
    /* a frame for another node, or for all: passed on (pg_mesh.c) */
    void (*forward_fn)(pg_mesh_t *m, unsigned type, uint32_t src, uint32_t dst,
                       const unsigned char *body, size_t len);
    pg_mesh_counters_t count;       /* pg_mesh_counters: links count UP ones */
    /* frames from this node to itself, handed over on the loop's next turn */
    pg_mesh_queue_t loopback;
    struct event *loop_ev;
};

static inline uint64_t ms_ns(uint64_t ms)
{
    return ms * 1000000u;
}

static inline struct timeval ns_tv(uint64_t ns)
{
    struct timeval tv = { (time_t)(ns / 1000000000u), (suseconds_t)(ns % 1000000000u / 1000) };

    return tv;
}

/* pg_mesh_link.c: one link */
int pg_mesh_random(unsigned char *buf, size_t len);
link_t *pg_mesh_link_new(pg_mesh_t *m, evutil_socket_t fd, link_state_t state);
void pg_mesh_pending_add(pg_mesh_t *m, link_t *l);
/* Bytes that came on the link and wait unread, in its buffer or its socket:
 * a link with those is not silent (this loop was busy), and a stranger
 * with those has spoken. */
bool pg_mesh_link_has_input(const link_t *l);
/* Queues a frame on the link (header and copied body). */
void pg_mesh_link_write(link_t *l, unsigned type, uint32_t src, uint32_t dst, const void *body,
                        size_t len);
/* A frame of the channel's own, from this node to the link's peer. */
void pg_mesh_link_say(link_t *l, unsigned type, const void *body, size_t len);
/* The same, written at once when nothing is queued before it. */
void pg_mesh_link_say_now(link_t *l, unsigned type, const void *body, size_t len);
/* Frees the link; a node's link reports the node gone. */
void pg_mesh_link_drop(link_t *l, const char *why);
void pg_mesh_report_gone(pg_mesh_t *m, int node, int orderly, const char *why);

/* pg_mesh_net.c: addresses */
int pg_mesh_listen(pg_mesh_t *m, const char *addr, char *err, size_t errlen);
/* A card "port token addr[,addr...]": the token, and (addrs non-NULL) up
 * to ADDRS_MAX addresses with the port.  0 or -1. */
int pg_mesh_parse_card(const char *card, unsigned char token[TOKEN_LEN],
                       struct sockaddr_storage *addrs, socklen_t *lens, int *naddrs);
/* Dials `node` until a link to it is UP, address after address, again
 * and again; `deadline` (pg_clock_now() time, 0: none, the start-up's
 * bound holds) reports it gone when passed.  0, or -1 (out of memory, or
 * its card has no address). */
int pg_mesh_dial(pg_mesh_t *m, int node, uint64_t deadline);
bool pg_mesh_dialing(const pg_mesh_t *m, int node);
/* The dial of `node` is over (its link is UP, or it is gone). */
void pg_mesh_dial_end(pg_mesh_t *m, int node);
/* A dial's attempt dropped (dial_lost_fn): the next address, or later. */
void pg_mesh_dial_lost(pg_mesh_t *m, int node);
/* The loop's tick: dials past their deadline report their node gone. */
void pg_mesh_dials_tick(pg_mesh_t *m, uint64_t now);
void pg_mesh_dials_free(pg_mesh_t *m);
/* A connection refused before its handshake (stranger_dropped_fn): told at
 * once when it is the window's first, counted otherwise. */
void pg_mesh_refusal_note(pg_mesh_t *m, const link_t *l, const char *why);
/* The loop's tick: the window's count told once REFUSALS_LOG_MS passed
 * (force: now, whatever the window -- the mesh is closing). */
void pg_mesh_refusals_tell(pg_mesh_t *m, uint64_t now, bool force);

#endif
