/*
 * Unit tests of the proxies' mesh (gateway/mesh/pg_mesh.c) and its frames'
 * authentication (gateway/mesh/pg_mesh_auth.c), on loopback in one process: several meshes on one
 * event loop (or one loop each, to make a node fall silent), as the
 * proxies of a job would be.  What the proxies rely on: a frame reaches
 * its node directly or through the others, and only that node (PG_MESH_ALL:
 * every node but the sender); a node that closes, says goodbye, or goes
 * silent is reported gone, once, saying which; a node that does not know
 * the job's secret, or a stranger, never joins and disturbs nothing; a
 * frame written into a link by anyone but the proxy at its other end (no
 * key, another key, a replay, out of order) is not believed: the link
 * closes, its node reported lost for "a frame failed authentication".  And
 * the job's end on top of it (gateway/proxy/pg_jobend.c): whichever nodes fail,
 * every node ends with one status, the first failure's.  The frames'
 * bodies, in the mesh's one codec (gateway/mesh/pg_mesh_msg.c), and a spawn
 * request on it (gateway/proxy/pg_spawn_wire.c): what is written reads back
 * the same, and a body cut short or lying about a length or a count is
 * refused, never overread, without a crash or a leak (valgrind runs these
 * suites).  A node's frame to itself comes back from the loop, never
 * within the send.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gateway/proxy/pg_jobend.h"
#include "gateway/proxy/pg_spawn_wire.h"
#include "gateway/mesh/pg_mesh_msg.h"
#include "gateway/mesh/pg_mesh.h"
#include "gateway/mesh/pg_mesh_int.h" /* a link's socket, its keys: to forge frames on it */
#include "gateway/mesh/pg_mesh_topo.h"
#include "gateway/util/pg_be.h"
#include "tests/pg_cunit.h"
#include "wire/pg_clock.h"

/* ---- meshes on loopback ---- */

enum { K = 3, BIG_K = 24, T_TEST = PG_MESH_TYPE_USER, MAX_SEEN = 16 };

/* What one node saw. */
typedef struct seen {
    int frames;
    int src[MAX_SEEN];
    char body[MAX_SEEN][32];
    int gone;             /* gone reports */
    int gone_node, gone_orderly;
    char gone_why[200];
} seen_t;

static void on_test_frame(void *arg, int src, const void *body, size_t len)
{
    seen_t *s = arg;

    if (s->frames < MAX_SEEN) {
        s->src[s->frames] = src;
        snprintf(s->body[s->frames], sizeof(s->body[0]), "%.*s", (int)len, (const char *)body);
    }
    s->frames++;
}

static void on_gone(void *arg, int node, int orderly, const char *why)
{
    seen_t *s = arg;

    s->gone++;
    s->gone_node = node;
    s->gone_orderly = orderly;
    snprintf(s->gone_why, sizeof(s->gone_why), "%s", why);
}

static pg_mesh_t *mesh_at(struct event_base *base, int node, int nnodes, uint64_t timeout_ns,
                          uint64_t connect_ns, seen_t *s)
{
    pg_mesh_opts_t o = { .nodeid = node, .nnodes = nnodes, .addr = "127.0.0.1",
                         .heartbeat_ns = 50 * 1000000ull, .timeout_ns = timeout_ns,
                         .connect_ns = connect_ns };
    char err[256];
    pg_mesh_t *m = pg_mesh_new(base, &o, err, sizeof(err));

    if (m == NULL) {
        fprintf(stderr, "pg_mesh_new: %s\n", err);
        return NULL;
    }
    pg_mesh_on(m, T_TEST, on_test_frame, s);
    pg_mesh_on_gone(m, on_gone, s);
    return m;
}

/* Starts every mesh with everyone's cards. */
static int start_all(pg_mesh_t **m, int n)
{
    const char *cards[BIG_K];
    char err[256];

    for (int i = 0; i < n; i++)
        cards[i] = pg_mesh_card(m[i]);
    for (int i = 0; i < n; i++)
        if (pg_mesh_start(m[i], cards, err, sizeof(err)) != 0) {
            fprintf(stderr, "pg_mesh_start: %s\n", err);
            return -1;
        }
    return 0;
}

/* Runs the loop(s) until cond(arg) or ms pass. */
static int run_until(struct event_base **bases, int nbases, int (*cond)(void *), void *arg,
                     int ms)
{
    uint64_t end = pg_clock_now() + (uint64_t)ms * 1000000u;

    while (!cond(arg) && pg_clock_now() < end) {
        for (int b = 0; b < nbases; b++)
            event_base_loop(bases[b], EVLOOP_NONBLOCK);
        usleep(1000);
    }
    return cond(arg);
}

typedef struct meshes {
    pg_mesh_t **m;
    int n;
} meshes_t;

static int all_reachable(void *arg)
{
    meshes_t *ms = arg;

    for (int i = 0; i < ms->n; i++)
        for (int j = 0; j < ms->n; j++)
            if (i != j && !pg_mesh_reachable(ms->m[i], j))
                return 0;
    return 1;
}

typedef struct counts {
    seen_t *s;
    int n, frames;
} counts_t;

static int frames_reached(void *arg)
{
    counts_t *c = arg;
    int total = 0;

    for (int i = 0; i < c->n; i++)
        total += c->s[i].frames;
    return total >= c->frames;
}

static int gone_seen(void *arg)
{
    return ((seen_t *)arg)->gone > 0;
}

static void test_frames_and_relay(void)
{
    struct event_base *base = event_base_new();
    seen_t s[K] = { 0 };
    pg_mesh_t *m[K];
    counts_t c = { s, K, 0 };
    char err[256];

    for (int i = 0; i < K; i++)
        m[i] = mesh_at(base, i, K, 0, 0, &s[i]);
    CU_ASSERT_FATAL(m[0] != NULL && m[1] != NULL && m[2] != NULL);
    CU_ASSERT_FATAL(start_all(m, K) == 0);
    CU_ASSERT_EQUAL(pg_mesh_wait_ready(m[1], err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(pg_mesh_wait_ready(m[0], err, sizeof(err)), 0);
    CU_ASSERT_TRUE(run_until(&base, 1, all_reachable, &(meshes_t){ m, K }, 5000));

    /* node 1 to node 2 (a link of their own), and only to its node */
    CU_ASSERT_EQUAL(pg_mesh_send(m[1], 2, T_TEST, "one-to-two", 10), 0);
    c.frames = 1;
    CU_ASSERT_TRUE(run_until(&base, 1, frames_reached, &c, 5000));
    CU_ASSERT_EQUAL(s[2].frames, 1);
    CU_ASSERT_EQUAL(s[2].src[0], 1);
    CU_ASSERT_STRING_EQUAL(s[2].body[0], "one-to-two");
    CU_ASSERT_EQUAL(s[0].frames, 0);
    CU_ASSERT_EQUAL(s[1].frames, 0);
    /* PG_MESH_ALL from node 2: every other node, not the sender */
    CU_ASSERT_EQUAL(pg_mesh_send(m[2], PG_MESH_ALL, T_TEST, "all", 3), 0);
    c.frames = 3;
    CU_ASSERT_TRUE(run_until(&base, 1, frames_reached, &c, 5000));
    CU_ASSERT_EQUAL(s[0].frames, 1);
    CU_ASSERT_EQUAL(s[1].frames, 1);
    CU_ASSERT_EQUAL(s[2].frames, 1);
    CU_ASSERT_EQUAL(s[0].src[0], 2);
    CU_ASSERT_EQUAL(s[1].src[0], 2);
    /* from node 0: an empty body too */
    CU_ASSERT_EQUAL(pg_mesh_send(m[0], PG_MESH_ALL, T_TEST, NULL, 0), 0);
    c.frames = 5;
    CU_ASSERT_TRUE(run_until(&base, 1, frames_reached, &c, 5000));
    CU_ASSERT_EQUAL(s[1].src[1], 0);
    CU_ASSERT_STRING_EQUAL(s[1].body[1], "");
    /* to itself (node 0 "to node 0"): its own handler, in the order
     * sent, on the loop's next turn -- never within the call */
    CU_ASSERT_EQUAL(pg_mesh_send(m[0], 0, T_TEST, "self-1", 6), 0);
    CU_ASSERT_EQUAL(pg_mesh_send(m[0], 0, T_TEST, "self-2", 6), 0);
    CU_ASSERT_EQUAL(s[0].frames, 1);
    c.frames = 7;
    CU_ASSERT_TRUE(run_until(&base, 1, frames_reached, &c, 5000));
    CU_ASSERT_EQUAL(s[0].frames, 3);
    CU_ASSERT_EQUAL(s[0].src[1], 0);
    CU_ASSERT_STRING_EQUAL(s[0].body[1], "self-1");
    CU_ASSERT_STRING_EQUAL(s[0].body[2], "self-2");
    CU_ASSERT_EQUAL(s[1].frames, 2);
    /* what cannot be sent is refused, not queued */
    CU_ASSERT_EQUAL(pg_mesh_send(m[1], 7, T_TEST, "nobody", 6), -1);
    CU_ASSERT_EQUAL(pg_mesh_send(m[1], 0, 3, "channel's own", 13), -1);
    CU_ASSERT_EQUAL(pg_mesh_on(m[1], 5, on_test_frame, &s[1]), -1);
    CU_ASSERT_EQUAL(s[0].gone + s[1].gone + s[2].gone, 0);

    /* a node that says goodbye is gone in order; one that closes is not */
    CU_ASSERT_EQUAL(pg_mesh_leave(m[1], 2000), 0);
    CU_ASSERT_TRUE(run_until(&base, 1, gone_seen, &s[0], 5000));
    CU_ASSERT_EQUAL(s[0].gone_node, 1);
    CU_ASSERT_EQUAL(s[0].gone_orderly, 1);
    pg_mesh_free(m[2]);
    s[0].gone = 0;
    CU_ASSERT_TRUE(run_until(&base, 1, gone_seen, &s[0], 5000));
    CU_ASSERT_EQUAL(s[0].gone_node, 2);
    CU_ASSERT_EQUAL(s[0].gone_orderly, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(s[0].gone_why, "closed"));
    CU_ASSERT_EQUAL(pg_mesh_send(m[0], 2, T_TEST, "late", 4), -1);
    pg_mesh_free(m[0]);
    pg_mesh_free(m[1]);
    event_base_free(base);
}

/* ---- the shape at scale (gateway/mesh/pg_mesh_topo.c) ---- */

/* For every job size up to 300 nodes, and 1 000, 4 096 and 10 000: no
 * node holds more than 2 ceil(log2 K) links, a frame reaches any node in
 * ceil(log2 K) hops at most over links that exist, and a frame to all
 * reaches every node exactly once, down its origin's tree. */
static void test_topo_bounds(void)
{
    static const int big[] = { 1000, 4096, 10000 };
    static int got[10000], stack[10000];
    int nbrs[2 * PG_TOPO_LEVELS_MAX], kids[PG_TOPO_LEVELS_MAX];

    for (int t = 1; t <= 300 + 3; t++) {
        int k = t <= 300 ? t : big[t - 301], levels = pg_topo_levels(k);
        int every = k <= 64 ? 1 : k / 16; /* past 64: a sample of nodes */
        bool ok = k == 1 || (1 << levels) >= k;

        for (int a = 0; a < k; a += every) {
            int n = pg_topo_neighbours(k, a, nbrs), sp = 0;

            ok = ok && n <= 2 * levels;
            for (int i = 0; i < n; i++)
                ok = ok && pg_topo_is_neighbour(k, nbrs[i], a);
            for (int b = 0; b < k; b += every) {
                int at = a, hops = 0;

                while (at != b && hops <= levels) {
                    int next = pg_topo_next_hop(k, at, b, NULL, NULL);

                    ok = ok && pg_topo_is_neighbour(k, at, next);
                    at = next;
                    hops++;
                }
                ok = ok && at == b && hops <= levels;
            }
            memset(got, 0, sizeof(int) * (size_t)k);
            got[a] = 1;
            stack[sp++] = a;
            while (sp > 0) {
                int at = stack[--sp], nk = pg_topo_children(k, a, at, kids);

                for (int i = 0; i < nk; i++) {
                    ok = ok && pg_topo_is_neighbour(k, at, kids[i]) &&
                         pg_topo_parent(k, a, kids[i]) == at;
                    got[kids[i]]++;
                    stack[sp++] = kids[i];
                }
            }
            for (int i = 0; i < k; i++)
                ok = ok && got[i] == 1;
        }
        if (!ok)
            fprintf(stderr, "the shape of %d nodes breaks a bound\n", k);
        CU_ASSERT_TRUE(ok);
    }
}

static int all_ready(void *arg)
{
    meshes_t *ms = arg;

    for (int i = 0; i < ms->n; i++)
        if (!pg_mesh_reachable(ms->m[i], (i + 1) % ms->n))
            return 0;
    return 1;
}

/* BIG_K nodes on one loop: every node reaches every other through the
 * others, frames between two nodes keep their order whether sent to one
 * or to all, no node holds more links than the shape gives it, and
 * direct data to many nodes keeps at most EXTRA_MAX spare links open
 * (closing the others without losing a frame). */
static void test_many_nodes(void)
{
    struct event_base *base = event_base_new();
    static seen_t s[BIG_K];
    pg_mesh_t *m[BIG_K];
    counts_t c = { s, BIG_K, 0 };
    int levels = pg_topo_levels(BIG_K);
    char err[256], text[32];

    memset(s, 0, sizeof(s));
    for (int i = 0; i < BIG_K; i++) {
        m[i] = mesh_at(base, i, BIG_K, 0, 0, &s[i]);
        CU_ASSERT_FATAL(m[i] != NULL);
    }
    CU_ASSERT_FATAL(start_all(m, BIG_K) == 0);
    CU_ASSERT_EQUAL(pg_mesh_wait_ready(m[BIG_K - 1], err, sizeof(err)), 0);
    CU_ASSERT_TRUE(run_until(&base, 1, all_ready, &(meshes_t){ m, BIG_K }, 5000));
    /* node 5 to node 5 + 11 (three hops), then to all, then again to it */
    CU_ASSERT_EQUAL(pg_mesh_send(m[5], 16, T_TEST, "first", 5), 0);
    CU_ASSERT_EQUAL(pg_mesh_send(m[5], PG_MESH_ALL, T_TEST, "to-all", 6), 0);
    CU_ASSERT_EQUAL(pg_mesh_send(m[5], 16, T_TEST, "last", 4), 0);
    c.frames = 2 + BIG_K - 1;
    CU_ASSERT_TRUE(run_until(&base, 1, frames_reached, &c, 5000));
    run_until(&base, 1, gone_seen, &s[0], 100); /* nothing more comes */
    for (int i = 0; i < BIG_K; i++) {
        pg_mesh_counters_t k;

        CU_ASSERT_EQUAL(s[i].frames, i == 16 ? 3 : i == 5 ? 0 : 1);
        if (i != 5)
            CU_ASSERT_STRING_EQUAL(s[i].body[i == 16 ? 1 : 0], "to-all");
        pg_mesh_counters(m[i], &k);
        CU_ASSERT_TRUE(k.links_max <= 2 * levels);
    }
    CU_ASSERT_STRING_EQUAL(s[16].body[0], "first");
    CU_ASSERT_STRING_EQUAL(s[16].body[2], "last");
    /* direct: node 0 to every node, twice round; its spare links stay
     * within EXTRA_MAX once the loop has turned */
    for (int round = 0; round < 2; round++)
        for (int i = 1; i < BIG_K; i++) {
            snprintf(text, sizeof(text), "direct-%d", round);
            CU_ASSERT_EQUAL(pg_mesh_send_direct(m[0], (uint32_t)i, T_TEST, text, strlen(text)), 0);
            run_until(&base, 1, gone_seen, &s[0], 20);
        }
    c.frames += 2 * (BIG_K - 1);
    CU_ASSERT_TRUE(run_until(&base, 1, frames_reached, &c, 10000));
    run_until(&base, 1, gone_seen, &s[0], 300);
    for (int i = 1; i < BIG_K; i++) {
        int first = i == 16 ? 3 : i == 5 ? 0 : 1; /* after what the first part sent */

        CU_ASSERT_STRING_EQUAL(s[i].body[first], "direct-0");
        CU_ASSERT_STRING_EQUAL(s[i].body[first + 1], "direct-1");
    }
    {
        pg_mesh_counters_t k;
        int nbrs[2 * PG_TOPO_LEVELS_MAX], n = pg_topo_neighbours(BIG_K, 0, nbrs);

        pg_mesh_counters(m[0], &k);
        CU_ASSERT_TRUE(k.links <= n + EXTRA_MAX);
        CU_ASSERT_TRUE(k.links_max <= n + EXTRA_MAX + 1);
    }
    for (int i = 0; i < BIG_K; i++) {
        CU_ASSERT_EQUAL(s[i].gone, 0);
        pg_mesh_free(m[i]);
    }
    event_base_free(base);
}

/* A node whose loop stops (a host gone without a FIN) is lost after the
 * timeout; one that said it would be quiet is waited for that long. */
static void test_silence(void)
{
    struct event_base *bases[2] = { event_base_new(), event_base_new() };
    seen_t s[2] = { 0 };
    pg_mesh_t *m[2];
    const uint64_t timeout = 400 * 1000000ull;
    uint64_t t0;
    char err[256];

    m[0] = mesh_at(bases[0], 0, 2, timeout, 0, &s[0]);
    m[1] = mesh_at(bases[1], 1, 2, timeout, 0, &s[1]);
    CU_ASSERT_FATAL(m[0] != NULL && m[1] != NULL);
    CU_ASSERT_FATAL(start_all(m, 2) == 0);
    (void)err;
    CU_ASSERT_TRUE(run_until(bases, 2, all_reachable, &(meshes_t){ m, 2 }, 5000));
    /* both loops run: heartbeats keep the link for well past the timeout */
    run_until(bases, 2, gone_seen, &s[0], 1200);
    CU_ASSERT_EQUAL(s[0].gone, 0);
    /* node 1 says it will be quiet for 1 s, then its loop stops */
    pg_mesh_quiet(m[1], 1000 * 1000000ull);
    t0 = pg_clock_now();
    CU_ASSERT_TRUE(run_until(bases, 1, gone_seen, &s[0], 5000));
    CU_ASSERT_TRUE(pg_clock_now() - t0 >= 1000 * 1000000ull);
    CU_ASSERT_EQUAL(s[0].gone_node, 1);
    CU_ASSERT_EQUAL(s[0].gone_orderly, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(s[0].gone_why, "nothing came from it"));
    pg_mesh_free(m[0]);
    pg_mesh_free(m[1]);
    event_base_free(bases[0]);
    event_base_free(bases[1]);
}

/* A would-be node that does not know the job's secret (its cards carry
 * other random bytes) never links: as node 0 it dials node 1 (the lower
 * node dials), and the handshake fails -- node 1 is not fooled, counts no
 * node lost, and links with the real node 0 afterwards. */
static void test_impostor(void)
{
    struct event_base *base = event_base_new();
    seen_t s[3] = { 0 };
    pg_mesh_t *hub, *leaf, *fake;
    const char *cards[2], *fake_cards[2];
    char err[256];

    hub = mesh_at(base, 0, 2, 0, 0, &s[0]);
    leaf = mesh_at(base, 1, 2, 0, 0, &s[1]);
    fake = mesh_at(base, 0, 2, 0, 600 * 1000000ull, &s[2]);
    CU_ASSERT_FATAL(hub != NULL && leaf != NULL && fake != NULL);
    cards[0] = pg_mesh_card(hub);
    cards[1] = pg_mesh_card(leaf);
    CU_ASSERT_EQUAL(pg_mesh_start(leaf, cards, err, sizeof(err)), 0);
    /* the impostor dials the real node 1; its secret comes from its own
     * random bytes in place of node 0's */
    fake_cards[0] = pg_mesh_card(fake);
    fake_cards[1] = cards[1];
    CU_ASSERT_EQUAL(pg_mesh_start(fake, fake_cards, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(pg_mesh_wait_ready(fake, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "node 1"));
    CU_ASSERT_FALSE(pg_mesh_reachable(leaf, 0));
    CU_ASSERT_EQUAL(s[1].gone, 0);
    pg_mesh_free(fake);
    CU_ASSERT_EQUAL(pg_mesh_start(hub, cards, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(pg_mesh_wait_ready(leaf, err, sizeof(err)), 0);
    CU_ASSERT_TRUE(run_until(&base, 1, all_reachable, &(meshes_t){ (pg_mesh_t *[]){ hub, leaf }, 2 },
                             5000));
    CU_ASSERT_EQUAL(s[0].gone + s[1].gone, 0);
    pg_mesh_free(leaf);
    pg_mesh_free(hub);
    event_base_free(base);
}

/* The socket of node `from`'s link to node `to`: what a process that
 * inherited it (a rank, say) could write into. */
static int link_fd(pg_mesh_t *from, int to)
{
    return (int)bufferevent_getfd(from->peers[to]->bev);
}

/* A frame in the layout of pg_mesh_link.c, its header and body, and `tail`
 * bytes of zeros where an authenticated frame's tag goes. */
static size_t forge_frame(unsigned char *out, unsigned type, uint32_t src, uint32_t dst,
                          const void *body, size_t len, size_t tail)
{
    memset(out, 0, 16);
    pg_be32_put(out, (uint32_t)len);
    out[4] = (unsigned char)(type >> 8);
    out[5] = (unsigned char)type;
    pg_be32_put(out + 8, src);
    pg_be32_put(out + 12, dst);
    memcpy(out + 16, body, len);
    memset(out + 16 + len, 0, tail);
    return 16 + len + tail;
}

/* ---- frames on an UP link: authenticated ---- */

/* A hub and a leaf, linked. */
typedef struct pair {
    struct event_base *base;
    seen_t s[2];
    pg_mesh_t *m[2];
} pair_t;

static void pair_up(pair_t *x)
{
    memset(x, 0, sizeof(*x));
    x->base = event_base_new();
    x->m[0] = mesh_at(x->base, 0, 2, 0, 0, &x->s[0]);
    x->m[1] = mesh_at(x->base, 1, 2, 0, 0, &x->s[1]);
    CU_ASSERT_FATAL(x->m[0] != NULL && x->m[1] != NULL);
    CU_ASSERT_FATAL(start_all(x->m, 2) == 0);
    CU_ASSERT_FATAL(run_until(&x->base, 1, all_reachable, &(meshes_t){ x->m, 2 }, 5000));
}

static void pair_down(pair_t *x)
{
    pg_mesh_free(x->m[0]);
    pg_mesh_free(x->m[1]);
    event_base_free(x->base);
}

/* A T_TEST frame from the leaf to the hub, tagged as the leaf's proxy
 * tags its next frame (the link's key and sequence: the sequence moves on,
 * as if the leaf had sent it). */
static size_t leaf_frame(pair_t *x, const char *text, unsigned char *out)
{
    size_t len = strlen(text), n = forge_frame(out, T_TEST, 1, 0, text, len, PG_MESH_TAG_LEN);

    CU_ASSERT_EQUAL(pg_mesh_mac_next(x->m[1]->peers[0]->tx, out, 16, out + 16, len, out + 16 + len), 0);
    return n;
}

/* Writes bytes into the leaf's link to the hub as another process would:
 * straight into the socket, between two of the leaf's own frames. */
static void write_into_link(pair_t *x, const unsigned char *b, size_t n)
{
    CU_ASSERT_FATAL(evbuffer_get_length(bufferevent_get_output(x->m[1]->peers[0]->bev)) == 0);
    CU_ASSERT_EQUAL(write(link_fd(x->m[1], 0), b, n), (ssize_t)n);
}

/* The hub dropped the leaf's link for a frame that failed authentication,
 * and no frame reached the handler but `frames`. */
static void check_refused(pair_t *x, int frames)
{
    CU_ASSERT_TRUE(run_until(&x->base, 1, gone_seen, &x->s[0], 5000));
    CU_ASSERT_EQUAL(x->s[0].gone_node, 1);
    CU_ASSERT_EQUAL(x->s[0].gone_orderly, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(x->s[0].gone_why, "a frame failed authentication"));
    CU_ASSERT_FALSE(pg_mesh_reachable(x->m[0], 1));
    CU_ASSERT_EQUAL(x->s[0].frames, frames);
    /* the leaf hears why its hub closed the link */
    CU_ASSERT_TRUE(run_until(&x->base, 1, gone_seen, &x->s[1], 5000));
    CU_ASSERT_PTR_NOT_NULL(strstr(x->s[1].gone_why, "a frame from this node failed authentication"));
}

/* A frame tagged with the link's key in its place goes through, and the
 * leaf's own frames after it too; the same bytes again (a replay) close
 * the link. */
static void test_frame_replayed(void)
{
    unsigned char frame[64];
    size_t n;
    pair_t x;

    pair_up(&x);
    n = leaf_frame(&x, "tagged", frame);
    write_into_link(&x, frame, n);
    CU_ASSERT_EQUAL(pg_mesh_send(x.m[1], 0, T_TEST, "own", 3), 0);
    CU_ASSERT_TRUE(run_until(&x.base, 1, frames_reached, &(counts_t){ x.s, 1, 2 }, 5000));
    CU_ASSERT_STRING_EQUAL(x.s[0].body[0], "tagged");
    CU_ASSERT_STRING_EQUAL(x.s[0].body[1], "own");
    CU_ASSERT_EQUAL(x.s[0].gone, 0);
    write_into_link(&x, frame, n);
    check_refused(&x, 2);
    pair_down(&x);
}

/* A frame whose tag is right for a later place in the stream (its
 * sequence number skipped one) closes the link. */
static void test_frame_out_of_order(void)
{
    unsigned char skipped[64], frame[64];
    size_t n;
    pair_t x;

    pair_up(&x);
    (void)leaf_frame(&x, "skipped", skipped);
    n = leaf_frame(&x, "after it", frame);
    write_into_link(&x, frame, n);
    check_refused(&x, 0);
    pair_down(&x);
}

/* A frame with no tag the writer could know (zeros), or one under another
 * key (another link's, another job's), closes the link. */
static void test_frame_forged(void)
{
    unsigned char frame[64], other_key[PG_MESH_HASH_LEN];
    pg_mesh_mac_t *other;
    size_t n;
    pair_t x;

    pair_up(&x);
    n = forge_frame(frame, T_TEST, 1, 0, "zeros", 5, PG_MESH_TAG_LEN);
    write_into_link(&x, frame, n);
    check_refused(&x, 0);
    pair_down(&x);

    pair_up(&x);
    memset(other_key, 7, sizeof(other_key));
    other = pg_mesh_mac_new(other_key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(other);
    n = forge_frame(frame, T_TEST, 1, 0, "other key", 9, PG_MESH_TAG_LEN);
    CU_ASSERT_EQUAL(pg_mesh_mac_next(other, frame, 16, frame + 16, 9, frame + 16 + 9), 0);
    write_into_link(&x, frame, n);
    check_refused(&x, 0);
    pg_mesh_mac_free(other);
    pair_down(&x);
}

/* The MAC of a direction: the same key at the same place gives the same
 * tag; another key, another place, another header or body another. */
static void test_mac_tags(void)
{
    unsigned char key[PG_MESH_HASH_LEN], hdr[16] = { 1 }, t[5][PG_MESH_TAG_LEN];
    pg_mesh_mac_t *a, *b, *c;

    memset(key, 1, sizeof(key));
    a = pg_mesh_mac_new(key);
    b = pg_mesh_mac_new(key);
    key[31] ^= 1;
    c = pg_mesh_mac_new(key);
    CU_ASSERT_FATAL(a != NULL && b != NULL && c != NULL);
    CU_ASSERT_EQUAL(pg_mesh_mac_next(a, hdr, 16, "body", 4, t[0]), 0);
    CU_ASSERT_EQUAL(pg_mesh_mac_next(b, hdr, 16, "body", 4, t[1]), 0);
    CU_ASSERT_EQUAL(pg_mesh_mac_next(c, hdr, 16, "body", 4, t[2]), 0);
    CU_ASSERT_EQUAL(pg_mesh_mac_next(a, hdr, 16, "body", 4, t[3]), 0); /* a's next place */
    CU_ASSERT_EQUAL(pg_mesh_mac_next(b, hdr, 16, "bodY", 4, t[4]), 0);
    CU_ASSERT_TRUE(pg_mesh_equal_ct(t[0], t[1], PG_MESH_TAG_LEN));
    for (int i = 2; i < 5; i++)
        CU_ASSERT_FALSE(pg_mesh_equal_ct(t[0], t[i], PG_MESH_TAG_LEN));
    pg_mesh_mac_free(a);
    pg_mesh_mac_free(b);
    pg_mesh_mac_free(c);
}

/* The port of a mesh, from its card. */
static int card_port(const pg_mesh_t *m)
{
    return atoi(pg_mesh_card(m));
}

static int tcp_to(int port)
{
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

typedef struct closed_probe {
    int fd;
    int closed;
} closed_probe_t;

static int peer_closed(void *arg)
{
    closed_probe_t *p = arg;
    char b[64];
    ssize_t n = recv(p->fd, b, sizeof(b), MSG_DONTWAIT);

    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
        p->closed = 1;
    return p->closed;
}

/* Strangers on the port: a frame that is not a HELLO, and a HELLO naming a
 * node that does not exist, are closed at once; the hub goes on.  Then the
 * hub closes: its leaf hears it lost the hub. */
static void test_strangers(void)
{
    struct event_base *base = event_base_new();
    seen_t s[2] = { 0 };
    pg_mesh_t *m[2];
    unsigned char frame[16 + 24] = { 0 };
    closed_probe_t p;

    m[0] = mesh_at(base, 0, 2, 0, 0, &s[0]);
    m[1] = mesh_at(base, 1, 2, 0, 0, &s[1]);
    CU_ASSERT_FATAL(m[0] != NULL && m[1] != NULL);
    CU_ASSERT_FATAL(start_all(m, 2) == 0);

    p = (closed_probe_t){ tcp_to(card_port(m[0])), 0 };
    CU_ASSERT_FATAL(p.fd >= 0);
    CU_ASSERT_EQUAL(write(p.fd, "GET / HTTP/1.0\r\n\r\n", 18), 18);
    CU_ASSERT_TRUE(run_until(&base, 1, peer_closed, &p, 5000));
    close(p.fd);

    /* HELLO for node 9 of 2 */
    frame[3] = 24;
    frame[5] = 1;
    memcpy(frame + 16, "PGM1", 4);
    frame[23] = 9;
    p = (closed_probe_t){ tcp_to(card_port(m[0])), 0 };
    CU_ASSERT_FATAL(p.fd >= 0);
    CU_ASSERT_EQUAL(write(p.fd, frame, sizeof(frame)), (ssize_t)sizeof(frame));
    CU_ASSERT_TRUE(run_until(&base, 1, peer_closed, &p, 5000));
    close(p.fd);

    CU_ASSERT_TRUE(run_until(&base, 1, all_reachable, &(meshes_t){ m, 2 }, 5000));
    CU_ASSERT_EQUAL(s[0].gone + s[1].gone, 0);
    /* the hub closing: its leaf hears of it */
    pg_mesh_free(m[0]);
    CU_ASSERT_TRUE(run_until(&base, 1, gone_seen, &s[1], 5000));
    CU_ASSERT_EQUAL(s[1].gone_node, 0);
    CU_ASSERT_EQUAL(s[1].gone_orderly, 0);
    CU_ASSERT_FALSE(pg_mesh_reachable(m[1], 0));
    pg_mesh_free(m[1]);
    event_base_free(base);
}

/* ---- the job's end (pg_jobend) ---- */

static void test_jobend_order(void)
{
    pg_jobend_failure_t exit15 = { .when_ns = 1000000000, .node = 2, .code = 15 };
    pg_jobend_failure_t abort7 = { .when_ns = 1020000000, .node = 1, .code = 7, .is_abort = true };
    pg_jobend_failure_t late = abort7;

    /* an abort 20 ms after another failure is taken for its cause */
    CU_ASSERT_TRUE(pg_jobend_before(&abort7, &exit15));
    CU_ASSERT_FALSE(pg_jobend_before(&exit15, &abort7));
    /* 100 ms after, it is a failure of its own: the earlier one wins */
    late.when_ns = 1100000000;
    CU_ASSERT_TRUE(pg_jobend_before(&exit15, &late));
    CU_ASSERT_FALSE(pg_jobend_before(&late, &exit15));
    /* an abort before the other failure wins anyway; ties to the lower node */
    late.when_ns = 900000000;
    CU_ASSERT_TRUE(pg_jobend_before(&late, &exit15));
    exit15.when_ns = late.when_ns;
    exit15.is_abort = true;
    CU_ASSERT_TRUE(pg_jobend_before(&late, &exit15));
}

typedef struct ended {
    int calls, code, origin;
    char text[PG_JOBEND_TEXT_MAX];
} ended_t;

static void on_ended(void *arg, int code, int origin, const char *text)
{
    ended_t *e = arg;

    e->calls++;
    e->code = code;
    e->origin = origin;
    snprintf(e->text, sizeof(e->text), "%s", text);
}

static const char *const test_names[K] = { "alpha", "beta", "gamma" };

typedef struct ends {
    ended_t *e;
    int n;
} ends_t;

static int all_ended(void *arg)
{
    ends_t *x = arg;

    for (int i = 0; i < x->n; i++)
        if (x->e[i].calls == 0)
            return 0;
    return 1;
}

/* K nodes of a job on one loop: a mesh and a jobend each. */
typedef struct nodes {
    struct event_base *base;
    seen_t s[K];
    ended_t e[K];
    pg_mesh_t *m[K];
    pg_jobend_t *j[K];
} nodes_t;

static void nodes_up(nodes_t *x)
{
    memset(x, 0, sizeof(*x));
    x->base = event_base_new();
    for (int i = 0; i < K; i++)
        x->m[i] = mesh_at(x->base, i, K, 0, 0, &x->s[i]);
    CU_ASSERT_FATAL(x->m[0] != NULL && x->m[1] != NULL && x->m[2] != NULL);
    CU_ASSERT_FATAL(start_all(x->m, K) == 0);
    CU_ASSERT_FATAL(run_until(&x->base, 1, all_reachable, &(meshes_t){ x->m, K }, 5000));
    for (int i = 0; i < K; i++)
        x->j[i] = pg_jobend_new(x->m[i], test_names, on_ended, &x->e[i]);
}

static int mesh_all_done(void *arg)
{
    return pg_mesh_all_done(arg);
}

/* Node i gone: its mesh closed without a goodbye. */
static void node_lose(nodes_t *x, int i)
{
    pg_jobend_free(x->j[i]);
    pg_mesh_free(x->m[i]);
    x->j[i] = NULL;
    x->m[i] = NULL;
}

static void nodes_down(nodes_t *x)
{
    for (int i = 0; i < K; i++)
        node_lose(x, i);
    event_base_free(x->base);
}

/* Two leaves fail 20 ms apart, the later one with an abort: every node
 * ends with the abort's status and names its node. */
static void test_jobend_one_end_for_all(void)
{
    nodes_t x;

    nodes_up(&x);
    pg_jobend_fail(x.j[2], 15, false, "rank 5 exited with status 15");
    usleep(20000);
    pg_jobend_fail(x.j[1], 7, true, "rank 3 aborted the job (code 7)");
    CU_ASSERT_TRUE(run_until(&x.base, 1, all_ended, &(ends_t){ x.e, K }, 5000));
    for (int i = 0; i < K; i++) {
        CU_ASSERT_EQUAL(x.e[i].calls, 1);
        CU_ASSERT_EQUAL(x.e[i].code, 7);
        CU_ASSERT_EQUAL(x.e[i].origin, 1);
        CU_ASSERT_STRING_EQUAL(x.e[i].text, "node 1 (beta): rank 3 aborted the job (code 7)");
        CU_ASSERT_EQUAL(pg_jobend_code(x.j[i]), 7);
    }
    /* a later failure changes nothing */
    pg_jobend_fail(x.j[0], 9, true, "late");
    run_until(&x.base, 1, gone_seen, &x.s[0], 300);
    CU_ASSERT_EQUAL(x.e[0].calls, 1);
    nodes_down(&x);
}

/* A node lost is the job's failure: the others end with status 1, naming
 * it; when node 0 is lost, the others decide alone. */
static void test_jobend_lost_nodes(void)
{
    nodes_t x;

    nodes_up(&x);
    node_lose(&x, 2);
    CU_ASSERT_TRUE(run_until(&x.base, 1, all_ended, &(ends_t){ x.e, 2 }, 5000));
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(x.e[i].code, 1);
        CU_ASSERT_EQUAL(x.e[i].origin, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(x.e[i].text, "node 2 (gamma) was lost: its connection closed"));
    }
    nodes_down(&x);

    nodes_up(&x);
    node_lose(&x, 0);
    CU_ASSERT_TRUE(run_until(&x.base, 1, all_ended, &(ends_t){ x.e + 1, 2 }, 5000));
    CU_ASSERT_EQUAL(x.e[1].code, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(x.e[1].text, "node 0 (alpha) was lost"));
    nodes_down(&x);
}

/* BIG_K nodes: a node lost in the middle, then node 0 -- every other node
 * ends, naming it, though most hold no link with it: its neighbours tell
 * node 0, and the end floods over every link (node 0 lost: the nodes
 * linked with it decide alone, the rest hear their end). */
static void test_jobend_many_nodes(void)
{
    static const int lost[] = { 5, 0 };

    for (size_t t = 0; t < sizeof(lost) / sizeof(lost[0]); t++) {
        struct event_base *base = event_base_new();
        static seen_t s[BIG_K];
        static ended_t e[BIG_K];
        static char name_buf[BIG_K][8];
        const char *names[BIG_K]; /* the jobend reads one per node */
        pg_mesh_t *m[BIG_K];
        pg_jobend_t *j[BIG_K];
        char want[64];
        int ended = 0;

        memset(s, 0, sizeof(s));
        memset(e, 0, sizeof(e));
        for (int i = 0; i < BIG_K; i++) {
            snprintf(name_buf[i], sizeof(name_buf[i]), "h%d", i);
            names[i] = name_buf[i];
            m[i] = mesh_at(base, i, BIG_K, 0, 0, &s[i]);
            CU_ASSERT_FATAL(m[i] != NULL);
        }
        CU_ASSERT_FATAL(start_all(m, BIG_K) == 0);
        CU_ASSERT_FATAL(run_until(&base, 1, all_ready, &(meshes_t){ m, BIG_K }, 5000));
        for (int i = 0; i < BIG_K; i++)
            j[i] = pg_jobend_new(m[i], names, on_ended, &e[i]);
        pg_jobend_free(j[lost[t]]);
        pg_mesh_free(m[lost[t]]);
        j[lost[t]] = NULL;
        m[lost[t]] = NULL;
        e[lost[t]].calls = 1; /* not waited for */
        CU_ASSERT_TRUE(run_until(&base, 1, all_ended, &(ends_t){ e, BIG_K }, 5000));
        snprintf(want, sizeof(want), "node %d (h%d) was lost", lost[t], lost[t]);
        for (int i = 0; i < BIG_K; i++) {
            if (i == lost[t])
                continue;
            ended += e[i].calls == 1 && e[i].code == 1 && strstr(e[i].text, want) != NULL;
            pg_jobend_free(j[i]);
            pg_mesh_free(m[i]);
        }
        CU_ASSERT_EQUAL(ended, BIG_K - 1);
        event_base_free(base);
    }
}

/* A forged frame: a process that is no proxy writes a well-formed FAIL frame
 * ("rank 0 aborted the job (code 42)") into node 1's link to the hub.  The
 * frame is not believed: the link it came on is closed and the job ends
 * with status 1, every node saying a frame failed authentication, none
 * that a rank aborted. */
static void test_jobend_forged_abort(void)
{
    static const char text[] = "rank 0 aborted the job (code 42)";
    unsigned char body[16 + sizeof(text)], frame[16 + sizeof(body) + 32];
    size_t n;
    nodes_t x;

    nodes_up(&x);
    pg_be64_put(body, pg_clock_now());
    pg_be32_put(body + 8, 42);
    pg_be32_put(body + 12, 1); /* an abort */
    memcpy(body + 16, text, sizeof(text) - 1);
    n = forge_frame(frame, PG_MESH_JOBEND_FAIL, 1, 0, body, 16 + sizeof(text) - 1, PG_MESH_TAG_LEN);
    CU_ASSERT_EQUAL(write(link_fd(x.m[1], 0), frame, n), (ssize_t)n);
    CU_ASSERT_TRUE(run_until(&x.base, 1, all_ended, &(ends_t){ x.e, K }, 5000));
    for (int i = 0; i < K; i++) {
        CU_ASSERT_EQUAL(x.e[i].code, 1);
        CU_ASSERT_PTR_NULL(strstr(x.e[i].text, "aborted"));
        CU_ASSERT_PTR_NOT_NULL(strstr(x.e[i].text, "failed authentication"));
    }
    /* node 0 decides, and every node says what node 0 saw: the node whose
     * link carried the frame reached node 0 by another path */
    for (int i = 0; i < K; i++)
        CU_ASSERT_PTR_NOT_NULL(strstr(x.e[i].text, "node 1 (beta) was lost: a frame failed authentication"));
    nodes_down(&x);
}

/* Nodes that end well stay until every node is done (the others' frames
 * pass through them), then leave; nobody fails. */
static void test_jobend_all_well(void)
{
    nodes_t x;

    nodes_up(&x);
    pg_mesh_done(x.m[0]);
    CU_ASSERT_FALSE(run_until(&x.base, 1, mesh_all_done, x.m[1], 300));
    pg_mesh_done(x.m[2]);
    CU_ASSERT_EQUAL(pg_jobend_finish(x.j[1], 0), 0);
    CU_ASSERT_TRUE(pg_mesh_all_done(x.m[1]));
    CU_ASSERT_EQUAL(pg_jobend_finish(x.j[2], 0), 0);
    CU_ASSERT_EQUAL(pg_jobend_finish(x.j[0], 0), 0);
    for (int i = 0; i < K; i++)
        CU_ASSERT_EQUAL(x.e[i].calls, 0);
    nodes_down(&x);
}

/* ---- frame bodies: the one codec (pg_mesh_msg), and a spawn request on it ---- */

static void test_fields_round_trip(void)
{
    pg_mesh_wr_t b = { 0 };
    pg_mesh_rd_t r;
    char *s, *none, *empty;

    pg_mesh_wr_i32(&b, -7);
    pg_mesh_wr_nstr(&b, "node");
    pg_mesh_wr_nstr(&b, NULL);
    pg_mesh_wr_nstr(&b, "");
    pg_mesh_wr_u32(&b, 2);
    CU_ASSERT_FATAL(!b.bad);
    r = pg_mesh_rd(b.buf, b.len);
    CU_ASSERT_EQUAL(pg_mesh_rd_i32(&r), -7);
    s = pg_mesh_rd_nstr(&r);
    none = pg_mesh_rd_nstr(&r);
    empty = pg_mesh_rd_nstr(&r);
    CU_ASSERT(s != NULL && strcmp(s, "node") == 0);
    CU_ASSERT_PTR_NULL(none);
    CU_ASSERT(empty != NULL && empty[0] == '\0');
    CU_ASSERT_EQUAL(pg_mesh_rd_count(&r, 0), 2);
    CU_ASSERT(pg_mesh_rd_done(&r));
    /* past the end: zeros, and the reader says so */
    CU_ASSERT_EQUAL(pg_mesh_rd_i32(&r), 0);
    CU_ASSERT(r.bad);
    free(s);
    free(empty);
    pg_mesh_wr_free(&b);
}

static void test_lying_counts(void)
{
    pg_mesh_wr_t b = { 0 };
    pg_mesh_rd_t r;
    char *s;

    pg_mesh_wr_u32(&b, 1000000); /* a string "of" a million bytes, then 4 */
    pg_mesh_wr_u32(&b, 0);
    r = pg_mesh_rd(b.buf, b.len);
    s = pg_mesh_rd_nstr(&r);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT(r.bad);
    r = pg_mesh_rd(b.buf, b.len); /* a count of 8-byte items larger than the body */
    CU_ASSERT_EQUAL(pg_mesh_rd_count(&r, 8), 0);
    CU_ASSERT(r.bad);
    pg_mesh_wr_free(&b);
    pg_mesh_wr_bytes(&b, "a\0b", 3); /* a NUL inside a string is bad */
    r = pg_mesh_rd(b.buf, b.len);
    CU_ASSERT_PTR_NULL(pg_mesh_rd_nstr(&r));
    CU_ASSERT(r.bad);
    pg_mesh_wr_free(&b);
}

/* Two commands, infos, preput, env, the end flags. */
static const pg_kv_t info0[] = { { "wdir", "/tmp" }, { "host", "n2" } };
static const pg_kv_t preput[] = { { "PARENT_ROOT_PORT_NAME", "tag#0$port#1" } };
static const pg_kv_t env[] = { { "A", "1" }, { "B", "" } };
static const char *const argv0[] = { "-x", "two words" };
static const pg_spawn_cmd_t cmds[] = {
    { "/bin/prog0", 3, 2, argv0, 2, info0 },
    { "/bin/prog1", 2, 0, NULL, 0, NULL },
};
static const pg_spawn_req_t req = { 2, cmds, 1, preput, env, 2, 1, 0, 0, 0 };

static void test_request_round_trip(void)
{
    pg_mesh_wr_t b = { 0 };
    pg_mesh_rd_t r;
    pg_spawn_wire_t w;

    pg_spawn_wire_pack(&b, &req);
    CU_ASSERT_FATAL(!b.bad);
    r = pg_mesh_rd(b.buf, b.len);
    CU_ASSERT_FATAL(pg_spawn_wire_unpack(&r, &w) == 0);
    CU_ASSERT_EQUAL(w.total, 5);
    CU_ASSERT_EQUAL(w.req.ncmds, 2);
    CU_ASSERT_STRING_EQUAL(w.req.cmds[0].command, "/bin/prog0");
    CU_ASSERT_EQUAL(w.req.cmds[0].maxprocs, 3);
    CU_ASSERT_EQUAL(w.req.cmds[0].argc, 2);
    CU_ASSERT_STRING_EQUAL(w.req.cmds[0].argv[1], "two words");
    CU_ASSERT_PTR_NULL(w.req.cmds[0].argv[2]);
    CU_ASSERT_EQUAL(w.req.cmds[0].ninfo, 2);
    CU_ASSERT_STRING_EQUAL(w.req.cmds[0].info[1].val, "n2");
    CU_ASSERT_EQUAL(w.req.cmds[1].argc, 0);
    CU_ASSERT_EQUAL(w.req.npreput, 1);
    CU_ASSERT_STRING_EQUAL(w.req.preput[0].val, "tag#0$port#1");
    CU_ASSERT_EQUAL(w.req.nenv, 2);
    CU_ASSERT_STRING_EQUAL(w.req.env[1].val, "");
    CU_ASSERT(w.req.notify_end == 1 && w.req.end_silent_ok == 0);
    pg_spawn_wire_free(&w);
    pg_mesh_wr_free(&b);
}

/* Every prefix of a good request is refused, whole (nothing kept). */
static void test_request_prefixes(void)
{
    pg_mesh_wr_t b = { 0 };
    pg_spawn_wire_t w;

    pg_spawn_wire_pack(&b, &req);
    CU_ASSERT_FATAL(!b.bad);
    for (size_t len = 0; len < b.len; len++) {
        pg_mesh_rd_t r = pg_mesh_rd(b.buf, len);

        CU_ASSERT(pg_spawn_wire_unpack(&r, &w) == -1);
        CU_ASSERT(w.cmds == NULL && w.strs == NULL && w.kvs == NULL);
    }
    pg_mesh_wr_free(&b);
}

/* A command of no processes, or of a negative number, is no request. */
static void test_request_bad_counts(void)
{
    static const int counts[] = { 0, -1, PG_SPAWN_WIRE_MAX_PROCS + 1 };

    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        pg_spawn_cmd_t bad = { "/bin/true", counts[i], 0, NULL, 0, NULL };
        pg_spawn_req_t one = { 1, &bad, 0, NULL, NULL, 0, 0, 0, 0, 0 };
        pg_mesh_wr_t b = { 0 };
        pg_mesh_rd_t r;
        pg_spawn_wire_t w;

        pg_spawn_wire_pack(&b, &one);
        r = pg_mesh_rd(b.buf, b.len);
        CU_ASSERT(pg_spawn_wire_unpack(&r, &w) == -1);
        pg_mesh_wr_free(&b);
    }
}

static void test_msg_round_trip(void)
{
    pg_mesh_wr_t w;
    pg_mesh_rd_t r;
    char s1[16], s2[4];
    size_t n;
    const void *b;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_u8(&w, 7);
    pg_mesh_wr_u32(&w, 0xdeadbeef);
    pg_mesh_wr_u64(&w, 0x0102030405060708ull);
    pg_mesh_wr_str(&w, "svc");
    pg_mesh_wr_str(&w, NULL);
    pg_mesh_wr_bytes(&w, "a\0b", 3);
    CU_ASSERT_FALSE(w.bad);
    CU_ASSERT_EQUAL(w.len, 1 + 4 + 8 + 7 + 4 + 7);
    CU_ASSERT_EQUAL(w.buf[1], 0xde); /* big-endian */
    r = pg_mesh_rd(w.buf, w.len);
    CU_ASSERT_EQUAL(pg_mesh_rd_u8(&r), 7);
    CU_ASSERT_EQUAL(pg_mesh_rd_u32(&r), 0xdeadbeef);
    CU_ASSERT_EQUAL(pg_mesh_rd_u64(&r), 0x0102030405060708ull);
    CU_ASSERT_STRING_EQUAL(pg_mesh_rd_str(&r, s1, sizeof(s1)), "svc");
    CU_ASSERT_STRING_EQUAL(pg_mesh_rd_str(&r, s1, sizeof(s1)), "");
    CU_ASSERT_FALSE(pg_mesh_rd_done(&r)); /* the bytes are left */
    b = pg_mesh_rd_bytes(&r, &n);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(memcmp(b, "a\0b", 3), 0);
    CU_ASSERT_TRUE(pg_mesh_rd_done(&r));
    /* a string too long for its buffer, or with a NUL inside, is bad */
    r = pg_mesh_rd(w.buf + 13, w.len - 13);
    pg_mesh_rd_str(&r, s2, sizeof(s2)); /* "svc" + NUL fits 4 */
    CU_ASSERT_FALSE(r.bad);
    r = pg_mesh_rd(w.buf + 13, w.len - 13);
    CU_ASSERT_STRING_EQUAL(pg_mesh_rd_str(&r, s2, 3), "");
    CU_ASSERT_TRUE(r.bad);
    r = pg_mesh_rd(w.buf + 24, w.len - 24);
    pg_mesh_rd_str(&r, s1, sizeof(s1));
    CU_ASSERT_TRUE(r.bad);
    pg_mesh_wr_free(&w);
}

static void test_msg_short_bodies(void)
{
    unsigned char body[12] = { 0, 0, 0, 200, 'x', 'y' }; /* a length past the end */
    pg_mesh_rd_t r = pg_mesh_rd(body, 6);
    char s[256];
    size_t n = 99;

    CU_ASSERT_PTR_NULL(pg_mesh_rd_bytes(&r, &n));
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_TRUE(r.bad);
    CU_ASSERT_EQUAL(pg_mesh_rd_u32(&r), 0); /* bad stays bad */
    CU_ASSERT_STRING_EQUAL(pg_mesh_rd_str(&r, s, sizeof(s)), "");
    r = pg_mesh_rd(body, 3);
    CU_ASSERT_EQUAL(pg_mesh_rd_u32(&r), 0);
    CU_ASSERT_FALSE(pg_mesh_rd_done(&r));
    r = pg_mesh_rd(body, 0);
    CU_ASSERT_EQUAL(pg_mesh_rd_u8(&r), 0);
    CU_ASSERT_TRUE(r.bad);
}


/* Raw fields: a fixed-size one and the rest of the body, without lengths
 * of their own (the layout of the fence's, modex's and jobend's frames). */
static void test_msg_raw_and_rest(void)
{
    pg_mesh_wr_t w;
    pg_mesh_rd_t r;
    const unsigned char *name;
    const char *rest;
    size_t n = 99;

    pg_mesh_wr_init(&w);
    pg_mesh_wr_raw(&w, "NAME", 4);
    pg_mesh_wr_u32(&w, 5);
    pg_mesh_wr_raw(&w, "text", 4);
    CU_ASSERT_FATAL(!w.bad);
    CU_ASSERT_EQUAL(w.len, 12);
    CU_ASSERT_EQUAL(memcmp(w.buf, "NAME\0\0\0\5text", 12), 0);
    r = pg_mesh_rd(w.buf, w.len);
    name = pg_mesh_rd_raw(&r, 4);
    CU_ASSERT(name != NULL && memcmp(name, "NAME", 4) == 0);
    CU_ASSERT_EQUAL(pg_mesh_rd_u32(&r), 5);
    rest = pg_mesh_rd_rest(&r, &n);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT(rest != NULL && memcmp(rest, "text", 4) == 0);
    CU_ASSERT_TRUE(pg_mesh_rd_done(&r));
    /* an empty rest is no error */
    r = pg_mesh_rd(w.buf, 8);
    (void)pg_mesh_rd_raw(&r, 4);
    (void)pg_mesh_rd_u32(&r);
    (void)pg_mesh_rd_rest(&r, &n);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_TRUE(pg_mesh_rd_done(&r));
    /* a fixed field past the end is bad, and so is every read after it */
    r = pg_mesh_rd(w.buf, 3);
    CU_ASSERT_PTR_NULL(pg_mesh_rd_raw(&r, 4));
    CU_ASSERT_TRUE(r.bad);
    (void)pg_mesh_rd_rest(&r, &n);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_FALSE(pg_mesh_rd_done(&r));
    pg_mesh_wr_free(&w);
}

int main(void)
{
    static const pg_cunit_test_t auth_tests[] = {
        { "a frame's tag depends on the key, its place, its bytes", test_mac_tags },
        { "a tagged frame goes through, its replay closes the link", test_frame_replayed },
        { "a frame out of order closes the link", test_frame_out_of_order },
        { "a frame without the key closes the link", test_frame_forged },
        { NULL, NULL },
    };
    static const pg_cunit_test_t mesh_tests[] = {
        { "frames reach their node, through the others", test_frames_and_relay },
        { "the shape's bounds, up to 10 000 nodes", test_topo_bounds },
        { "24 nodes: routes, order, links, spare links", test_many_nodes },
        { "a silent node is lost after the timeout, a quiet one later", test_silence },
        { "a node without the secret is refused", test_impostor },
        { "strangers on the port are closed", test_strangers },
        { NULL, NULL },
    };
    static const pg_cunit_test_t jobend_tests[] = {
        { "the first failure: an abort wins over what it caused", test_jobend_order },
        { "one end, one status for every node", test_jobend_one_end_for_all },
        { "a lost node, a lost node 0", test_jobend_lost_nodes },
        { "24 nodes: a lost node ends every node, node 0 lost too", test_jobend_many_nodes },
        { "nodes that end well wait for every node", test_jobend_all_well },
        { "a forged abort on a link ends the job as a lost node, not an abort", test_jobend_forged_abort },
        { NULL, NULL },
    };
    static const pg_cunit_test_t msg_tests[] = {
        { "fields come back as written", test_fields_round_trip },
        { "counts and lengths past the body are refused", test_lying_counts },
        { "what is written reads back", test_msg_round_trip },
        { "short or lying bodies are refused", test_msg_short_bodies },
        { "raw fields and the rest of the body", test_msg_raw_and_rest },
        { "a spawn request comes back as sent", test_request_round_trip },
        { "every prefix of a spawn request is refused whole", test_request_prefixes },
        { "a spawn command of no processes is refused", test_request_bad_counts },
        { NULL, NULL },
    };
    static const pg_cunit_suite_t suites[] = {
        { "mesh", mesh_tests, NULL, NULL },
        { "auth", auth_tests, NULL, NULL },
        { "jobend", jobend_tests, NULL, NULL },
        { "msg", msg_tests, NULL, NULL },
        { NULL, NULL, NULL, NULL },
    };

    return pg_cunit_run("test_mesh", suites);
}
